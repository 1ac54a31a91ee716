/*
 * DynamicResources' host-facing internals: the plugin instance, the parsed
 * object caches, the assume cache and the cycle state (see dra.h for the
 * files and the thread rules).
 */
#ifndef KS_DYNAMICRESOURCES_DRA_HOST_H
#define KS_DYNAMICRESOURCES_DRA_HOST_H

#include <stdatomic.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include "dra.h"

#define DRA_BUCKETS 1024

/* A parsed object, cached by uid and resourceVersion. Reference counted
 * (loop thread only): the cache holds one reference, a cycle state that
 * uses the object another. */
typedef struct dra_entry {
    char *uid, *rv;
    uint32_t epoch; /* the last refresh that saw the object */
    int refs;
    int kind; /* DRA_E_SLICE, DRA_E_CLASS, DRA_E_CLAIM */
    union {
        dra_slice_t slice;
        dra_class_t cls;
        dra_claim_t claim;
    } u;
    struct dra_entry *next;
} dra_entry_t;

enum { DRA_E_SLICE, DRA_E_CLASS, DRA_E_CLAIM };

typedef struct dra_cache {
    dra_entry_t *b[DRA_BUCKETS];
    uint32_t n;
} dra_cache_t;

/* A CEL expression compiled once (program or error), kept for the
 * instance's life. */
typedef struct dra_prog {
    char *expr;
    ks_cel_program_t *prog;
    char *err;
    struct dra_prog *next;
} dra_prog_t;

/* Slices by the node they name (nodeName), and the others. */
typedef struct dra_node_slices {
    const char *node; /* interned */
    const dra_slice_t **v;
    uint32_t n, cap;
    struct dra_node_slices *next;
} dra_node_slices_t;

typedef struct dra_assume dra_assume_t;
typedef struct dra_wait dra_wait_t;

typedef struct dra {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_store_t *slices, *classes, *claims, *templates;
    int64_t filter_timeout_ms; /* 0: none */
    uint32_t epoch;
    dra_cache_t slice_cache, class_cache, claim_cache;
    dra_prog_t *progs[DRA_BUCKETS];
    /* rebuilt when the slices change */
    int slices_dirty;
    dra_node_slices_t *by_node[DRA_BUCKETS];
    const dra_slice_t **generic; /* allNodes, nodeSelector */
    uint32_t n_generic, cap_generic;
    /* devices of allocated claims (stores) and of the assume cache,
     * rebuilt by each PreFilter that allocates */
    dra_devset_t allocated;
    /* the store versions the caches last saw (store_version), and what
     * `allocated` was gathered from */
    int have_versions;
    uint64_t ver_slices, ver_classes, ver_claims;
    int allocated_valid;
    uint64_t allocated_claims_ver, allocated_assume_ver;
    dra_assume_t *assume;
    dra_wait_t *waits;
    /* counters (Filter runs on several threads) */
    atomic_uint_fast64_t node_evals, alloc_steps;
} dra_t;

/* --- dra_objects.c --------------------------------------------------------- */

/* Bring the caches up to date with the stores (PreFilter; loop thread):
 * every slice, class and claim parsed once per resourceVersion. */
int dra_refresh(dra_t *d);
/* The cached claim / class of a stored object, NULL when absent (after a
 * refresh). The entry is the cache's; dra_entry_ref to keep it. */
dra_entry_t *dra_claim_entry(dra_t *d, const ks_object_t *o);
dra_entry_t *dra_class_entry(dra_t *d, const char *name);
void dra_entry_ref(dra_entry_t *e);
void dra_entry_unref(dra_entry_t *e);
/* The slices that may reach the node (nodeName equal, allNodes, or a
 * matching nodeSelector) into *out (malloc'd). Thread-safe after a
 * refresh. */
int dra_node_slices(const dra_t *d, const ks_node_t *node,
                    const dra_slice_t ***out, uint32_t *n);
void dra_objects_free(dra_t *d);
/* The object's uid, or "ns/name" (in buf) for a snapshot object that has
 * none. */
const char *dra_uid(const dra_t *d, const ks_object_t *o, char *buf,
                    size_t len);
/* Do two objects hold the same JSON at path (absent equals absent; a
 * real number counts as a change)? Thread-safe. */
int dra_field_equal(const dra_t *d, const ks_object_t *a,
                    const ks_object_t *b, const char *path);
/* A field helper: the string at path or "" */
const char *dra_str(const dra_t *d, const ks_object_t *o, const char *path);

/* --- dra_assume.c ---------------------------------------------------------- */

/* One claim's allocation made by Reserve, until the stores show it. */
typedef struct dra_assumed {
    char *ns, *name, *uid;
    const char *node;   /* interned */
    dra_result_t *results; /* request names owned */
    uint32_t n_results;
    int node_local;
    int pending; /* Reserve done, PreBind not finished */
    /* pods PreBind reserved the claim for since (until the store shows
     * them): name and uid, owned */
    char **res_names, **res_uids;
    uint32_t n_res;
} dra_assumed_t;

dra_assume_t *dra_assume_new(void);
void dra_assume_free(dra_assume_t *a);
const dra_assumed_t *dra_assume_get(const dra_assume_t *a, const char *uid);
int dra_assume_put(dra_assume_t *a, const dra_claim_t *c, const char *node,
                   const dra_claim_alloc_t *alloc);
void dra_assume_done(dra_assume_t *a, const char *uid); /* written */
/* Changes whenever the set of assumed devices may have changed. */
uint64_t dra_assume_version(const dra_assume_t *a);
/* PreBind reserved the claim uid for a pod: remembered in its entry (if
 * any) until the store shows it. */
void dra_assume_reserved(dra_assume_t *a, const char *uid, const char *pod,
                         const char *pod_uid);
void dra_assume_drop(dra_assume_t *a, const char *uid);
/* Forget that the claim uid was reserved for pod_uid: 1 when it was. */
int dra_assume_unreserved(dra_assume_t *a, const char *uid,
                          const char *pod_uid);
/* The store shows the claim allocated, or it is gone: drop its written
 * (not pending) entry. */
void dra_assume_caught_up(dra_assume_t *a, const char *uid);
/* Add every assumed device to s. */
int dra_assume_devices(const dra_assume_t *a, dra_devset_t *s);

/* --- the cycle state ---------------------------------------------------------- */

/* One node's allocation (Filter), for Score and Reserve. */
typedef struct dra_node_alloc {
    const char *node; /* interned */
    dra_alloc_out_t out;
    struct dra_node_alloc *next;
} dra_node_alloc_t;

#define DRA_STATE_BUCKETS 256

typedef struct dra_state {
    pthread_mutex_t mu;
    int skip; /* no claims */
    dra_entry_t **claims; /* the pod's claims, referenced */
    uint32_t n_claims;
    /* per claim: allocated in the stores (or the assume cache) and, then,
     * the node it is available on */
    int *allocated;
    const char **assumed_node; /* node of an assumed allocation, or NULL */
    const dra_claim_t **to_alloc; /* the claims the allocator gets */
    uint32_t n_to_alloc;
    dra_entry_t **classes; /* resolved by PreFilter, referenced */
    uint32_t n_classes;
    int *unavailable; /* per claim: Filter found its node selector false */
    dra_node_alloc_t *by_node[DRA_STATE_BUCKETS];
    /* Reserve: the node's allocation, kept for PreBind */
    const char *reserved_node;
} dra_state_t;

/* --- dra_prebind.c ------------------------------------------------------------- */

ks_code_t dra_pre_bind(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                       const char *node_name, ks_status_t *st);
void dra_wait_cancel(dra_t *d, const char *pod_uid);
void dra_waits_free(dra_t *d);
dra_state_t *dra_state_get(const dra_t *d, const ks_cycle_state_t *cs);
dra_node_alloc_t *dra_state_node(dra_state_t *s, const char *node);
/* The allocation JSON (status.allocation) for a claim allocated on node. */
void dra_allocation_json(dra_buf_t *b, const dra_result_t *res, uint32_t n,
                         int node_local, const char *node);

#endif /* KS_DYNAMICRESOURCES_DRA_HOST_H */
