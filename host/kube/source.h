/*
 * The cluster source: a real API server as the scheduler's source of
 * cluster state and the target of its writes (cluster mode).
 *
 * Reads (informers, list then watch): Nodes; Pods that are not terminal
 * (assigned pods feed the cache, whoever bound them; unassigned pods whose
 * schedulerName a profile serves feed the queue; others are left alone);
 * Namespaces (namespaceSelector); Services, ReplicationControllers,
 * ReplicaSets and StatefulSets (the selectors of PodTopologySpread's
 * system defaults). Every change becomes the cluster event that
 * EnqueueExtensions know (node updates classified as allocatable, label,
 * taint or other changes, as upstream). Pods are handed to the scheduler
 * only once every informer has synced.
 *
 * Writes, as kube-scheduler makes them: a binding through the
 * pods/binding subresource; on a failed attempt a status patch with the
 * PodScheduled=False condition (reason Unschedulable or SchedulerError,
 * the FitError text as message) and status.nominatedNodeName; preemption
 * victims get the DisruptionTarget condition and are deleted with a UID
 * precondition; events (Scheduled, FailedScheduling, Preempted) through
 * events.k8s.io/v1 with series aggregation.
 *
 * A pod is assumed at Reserve, confirmed when the watch shows it bound,
 * forgotten (Unreserve run, requeued with backoff) when its binding fails;
 * a pod deleted while queued, waiting at Permit or binding leaves the
 * scheduler. An update that only touches a pod's status (for example our
 * own condition patch) does not requeue it.
 *
 * Threads: loop thread only. Ownership: the source references the
 * clients, the cache and (after attach) the scheduler; they must outlive
 * it.
 */
#ifndef KS_KUBE_SOURCE_H
#define KS_KUBE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "cluster/cache.h"
#include "framework/scheduler.h"
#include "kube/client.h"

typedef struct ks_kube_source ks_kube_source_t;

typedef struct ks_kube_source_opts {
    ks_kube_client_t *client;       /* reads and writes */
    ks_kube_client_t *event_client; /* events (may equal client) */
    ks_cache_t *cache;
    const char *hostname; /* reportingInstance suffix */
} ks_kube_source_opts_t;

ks_kube_source_t *ks_kube_source_new(uv_loop_t *loop,
                                     const ks_kube_source_opts_t *o,
                                     ks_error_t *err);
/* The writer to put into the scheduler's options (ks_sched_opts_t). */
ks_sched_writer_t ks_kube_source_writer(ks_kube_source_t *src);
/* Give the source its scheduler and start the informers. */
int ks_kube_source_start(ks_kube_source_t *src, ks_scheduler_t *sched,
                         ks_error_t *err);
/* Stop informers and writes (no callback runs afterwards) and free. Call
 * before freeing the scheduler and the clients. */
void ks_kube_source_close(ks_kube_source_t *src);

/* Scheduling needs the source to be active (the default) as well as
 * synced: a leader-election standby keeps its informers warm with the
 * source inactive, and activates it when it becomes leader. Pods are
 * handed to the scheduler when both hold. */
void ks_kube_source_set_active(ks_kube_source_t *src, int active);
/* Writes (bindings, status patches, deletions, events) are made only
 * while may_write(ud) answers non-zero (leader election: only while this
 * replica holds the lease); a refused binding fails the Bind plugin. */
void ks_kube_source_set_write_gate(ks_kube_source_t *src,
                                   int (*may_write)(void *ud), void *ud);

/* Shadow mode (shadow/shadow.h): no pod is handed to the scheduler, so
 * ksched decides nothing of its own and writes nothing (the write gate
 * refuses everything besides), and decided(ud, pod) is called when the
 * watch shows what another scheduler decided for a pod seen unassigned:
 * bound (pod->node_name set; before the cache takes it), or the first
 * PodScheduled=False condition with reason Unschedulable (node_name "").
 * pod is read during the call, and may be changed if restored. Call
 * before ks_kube_source_start. */
void ks_kube_source_set_shadow(ks_kube_source_t *src,
                               int (*decided)(void *ud, ks_pod_t *pod),
                               void *ud);

/* Every informer has listed once (scheduling has started). */
int ks_kube_source_synced(const ks_kube_source_t *src);
/* For /readyz: "informers not synced: pods, nodes" (or ""), and the last
 * failure of any informer ("" when none). */
void ks_kube_source_describe(const ks_kube_source_t *src, char *buf,
                             size_t len);
/* Prometheus text for the source's own metrics (informer state and
 * counts, writes by kind and result). */
void ks_kube_source_metrics(const ks_kube_source_t *src, ks_buf_t *out);

typedef struct ks_kube_source_stats {
    uint64_t bindings, binding_failures, status_patches, deletes,
        pods_pending, pods_assigned;
} ks_kube_source_stats_t;
ks_kube_source_stats_t ks_kube_source_stats(const ks_kube_source_t *src);

#endif
