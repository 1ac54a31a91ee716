/*
 * Private to the cluster source: its state, shared by source.c (the
 * informer handlers: reads) and source_writer.c (bindings, status
 * patches, preemption deletions and events: writes).
 *
 * Threads: loop thread only, as the source.
 */
#ifndef KS_KUBE_SOURCE_IMPL_H
#define KS_KUBE_SOURCE_IMPL_H

#include <stdint.h>

#include "base/strmap.h"
#include "cluster/pod_state.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/source.h"
#include "kube/store_informers.h"

enum { INF_NODES = 0, INF_NAMESPACES, INF_SERVICES, INF_RCS, INF_RSS,
       INF_SSS, INF_PODS, INF_COUNT };

/* The writes the source makes, for its failure counts. */
enum { W_BIND = 0, W_STATUS, W_DELETE, W_EVENT, W_COUNT };

/* What the source knows of one pod (by uid). */
typedef struct pod_ent {
    int state;           /* enum ks_pod_state, -1 while created */
    ks_pod_t *held;      /* KS_POD_PENDING before every informer synced */
    uint64_t hash;       /* of the fields scheduling reads */
    char *cond_message;  /* last PodScheduled=False message written */
    const char *nominated; /* last nominatedNodeName written (interned) */
    char *ns, *name;
    int shadow_unsched; /* shadow mode: its Unschedulable was compared */
    char uid[];
} pod_ent_t;

typedef struct inf_slot {
    ks_kube_source_t *src;
    int which;
    ks_informer_t *inf;
    long last_status;
    char last_error[512];
} inf_slot_t;

struct ks_kube_source {
    uv_loop_t *loop;
    ks_kube_client_t *client, *event_client;
    ks_cache_t *cache;
    ks_scheduler_t *sched;
    ks_event_recorder_t *events;
    inf_slot_t infs[INF_COUNT];
    /* The resources plugins declare (SDK ABI 1.3): ready only once they
     * listed too. */
    ks_store_informers_t *stores;
    ks_strmap_t pods; /* uid -> pod_ent_t */
    int synced, inactive;
    int (*may_write)(void *ud);
    void *may_write_ud;
    /* shadow mode (ks_kube_source_set_shadow): what another scheduler
     * decided; NULL otherwise */
    int (*shadow_bound)(void *ud, ks_pod_t *pod);
    void *shadow_ud;
    ks_kube_source_stats_t stats;
    uint64_t write_fail[W_COUNT]; /* by write kind */
};

/* The source's entry for the pod with `uid`, or NULL (owned by the
 * source; valid until the pod's deletion is seen). */
static inline pod_ent_t *ks_kube_source_ent(ks_kube_source_t *src,
                                            const char *uid)
{
    return ks_strmap_get(&src->pods, uid);
}

#endif
