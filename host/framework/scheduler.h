/*
 * The scheduler: queue, scheduling cycles (upstream scheduleOne /
 * schedulePod), Permit waits and binding cycles, driven step by step.
 *
 * Two drivers use it:
 *  - batch (ks_scheduler_run_batch): a virtual clock jumps to the next
 *    deadline (backoff expiry, Permit timeout) when nothing else can run;
 *    the run ends when no pod is active, backing off, or waiting at Permit,
 *    or when 15 simulated minutes pass without a binding (pods that keep
 *    timing out at Permit would otherwise requeue each other for ever).
 *    The unschedulable pool's 5-minute flush is off in batch runs.
 *  - a libuv loop (ks_scheduler_attach_loop): an idle handle runs cycles
 *    while there is work and one timer is armed for the next deadline, on
 *    the loop's real clock.
 *
 * Ownership: the scheduler owns its queue, snapshot, waiting pods and the
 * reference on the current generation; the cache is the caller's.
 * Pending pods handed to ks_scheduler_add_pod are owned by the scheduler
 * (queue, then cache once assumed). Loop thread only.
 *
 * Out of memory is reported, never fatal: KS_ENOMEM (or NULL from
 * ks_scheduler_new) with nothing changed, and a scheduling attempt that
 * runs out of memory fails with an Error and is retried after backoff
 * (scheduler_impl.h has the policy and the files behind this API).
 */
#ifndef KS_SCHEDULER_H
#define KS_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "cluster/cache.h"
#include "base/error.h"
#include "framework.h"
#include "generation.h"

typedef struct ks_scheduler ks_scheduler_t;

/* Where a batched cycle left the weighed scores of the Score plugins
 * without NormalizeScore: kept per node (by snapshot index), not copied
 * into the rows of ks_cycle_result_t.scores. */
#define KS_SCORE_IN_ROW 0xff
typedef struct ks_score_kept_view {
    const int64_t *wt;    /* np scores per snapshot index */
    const uint32_t *fidx; /* feasible position -> snapshot index */
    size_t np;
    uint8_t at[64];       /* plugin p's place in wt, or KS_SCORE_IN_ROW */
} ks_score_kept_view_t;

/* Everything one scheduling cycle found; valid during the observer call. */
typedef struct ks_cycle_result {
    const ks_pod_t *pod;
    ks_framework_t *fw;
    uint32_t n_nodes; /* nodes in the snapshot */
    /* Filter */
    const ks_node_info_t *const *feasible;
    uint32_t n_feasible;
    const struct ks_node_status_map *statuses; /* failures by node index */
    /* Score (scored != 0): Score plugin p's weighed score of feasible
     * node k is ks_cycle_result_score(r, p, k). Rows of scores are
     * complete only when kept is NULL: a batched cycle leaves the reused
     * scores of plugins without NormalizeScore where they were kept. */
    int scored;
    const int64_t *scores;
    const ks_score_kept_view_t *kept;
    const uint8_t *score_skipped;
    const int64_t *totals;
    /* Scheduler extenders' answers per node, for the pod whose cycles
     * evaluate every node (opts.full_eval_*; extender/ext_trace.h); NULL
     * for other pods or without extenders */
    const struct ks_ext_trace *ext_trace;
    /* Outcome */
    const char *selected;   /* NULL when unschedulable or on error */
    const char *message;    /* FitError or error message, NULL on success */
    const char *nominated;  /* PostFilter's nominated node, or NULL */
    int error;              /* 1: an Error status (not a FitError) */
    double seconds;         /* wall time of the attempt so far */
} ks_cycle_result_t;

/* Score plugin p's weighed (normalized where it has NormalizeScore) score
 * of feasible node k (k < n_feasible) in a cycle that scored (r->scored),
 * for a plugin not skipped (score_skipped). Any thread that holds r. */
int64_t ks_cycle_result_score(const ks_cycle_result_t *r, size_t p,
                              uint32_t k);

typedef struct ks_sched_observer {
    void (*cycle)(void *ud, const ks_cycle_result_t *r);
    void (*bound)(void *ud, const ks_pod_t *pod, const char *node);
    /* Every failed attempt, with the FailedScheduling message and the
     * plugins that rejected the pod. */
    void (*failed)(void *ud, const ks_pod_t *pod, const char *message);
    void (*deleted)(void *ud, const ks_pod_t *pod); /* preemption victims */
    /* Optional timing hooks (metrics): one call per extension point run
     * (Filter and Score: the whole phase over all nodes), and the time a
     * pod spent waiting at Permit once its wait is resolved. */
    void (*ep_duration)(void *ud, const ks_framework_t *fw, int ext_point,
                        ks_code_t code, double seconds);
    void (*permit_wait)(void *ud, const ks_pod_t *pod, int allowed,
                        double seconds);
    /* Optional: one plugin call's execution time (upstream's
     * plugin_execution_duration_seconds), reported for every plugin call in
     * a sampled scheduling cycle and in that pod's binding cycle: 10% of
     * cycles, as upstream, or every cycle with sample_all_plugins.
     * ext_point is a ks_ext_point_t or KS_FW_EP_* value
     * (ks_fw_metric_point_name gives the label); plugin is valid during the
     * call only. Called from the Filter and Score worker threads as well
     * as the loop thread, several at once: must be thread-safe. */
    void (*plugin_duration)(void *ud, const char *plugin, int ext_point,
                            ks_code_t code, double seconds);
    /* Optional: every finished scheduler extender call (extender.h's
     * ks_ext_report_fn: urlPrefix, verb, result, seconds). Loop thread. */
    void (*extender_call)(void *ud, const char *url_prefix, const char *verb,
                          const char *result, double seconds);
    /* Optional: one QueueingHint call (upstream's
     * queueing_hint_execution_duration_seconds): the plugin, the event's
     * label (cluster_event.h), the hint ("Queue", "QueueSkip", or "Error"
     * for a value that is neither). Loop thread. */
    void (*queueing_hint)(void *ud, const char *plugin, const char *event,
                          const char *hint, double seconds);
    /* Optional: one event of one kind handled by the queue (upstream's
     * event_handling_duration_seconds). Loop thread. */
    void (*event_handled)(void *ud, const char *event, double seconds);
    /* Optional: a pod entered a queue (upstream's
     * queue_incoming_pods_total); queue.h's ks_queue_incoming_fn has the
     * labels. A move by a cluster event reports event NULL, and
     * event_handled follows with the event's label. Loop thread. */
    void (*queue_incoming)(void *ud, const char *queue, const char *event);
    void *ud;
} ks_sched_observer_t;

/* Writes to the cluster, for cluster mode (all optional; NULL members keep
 * the cache-only behaviour of snapshots and the embedded API, which sets
 * only the api_* members below). Loop thread.
 *  - bind: a Bind plugin asked the host to bind `pod` to `node`. Return 0
 *    and answer later with ks_scheduler_bind_done(), from the loop (an
 *    answer from inside the call is accepted too); non-zero fails the Bind
 *    plugin at once. The binding cycle waits for the answer; the pod stays
 *    assumed meanwhile.
 *  - delete_pod: a preemption victim (already gone from the cache).
 *  - failed: an attempt failed (FitError text or error message; error:
 *    an Error status rather than Unschedulable); pod->nominated_node_name
 *    is the node preemption nominated, "" when none.
 *  - nominate: a plugin (preemption) changed a pod's nominated node ("":
 *    cleared).
 *  - event: an event a plugin recorded through the host API. */
typedef struct ks_sched_writer {
    int (*bind)(void *ud, const ks_pod_t *pod, const char *node);
    void (*delete_pod)(void *ud, const ks_pod_t *pod);
    void (*failed)(void *ud, const ks_pod_t *pod, const char *message,
                   int error);
    void (*nominate)(void *ud, const ks_pod_t *pod, const char *node);
    void (*event)(void *ud, const ks_pod_t *pod, const char *type,
                  const char *reason, const char *message);
    /* Plugins' API requests (SDK ABI 1.4, framework/plugin_async.h):
     * api_mode says where they go (KS_API_NONE, the default: refused);
     * KS_API_CLUSTER sends them with api_send (done(dud, r) later, once,
     * unless api_abort(handle)): the cluster source's client, or the
     * embedded API answering in-process (server/local_requests.h, which
     * sets only these api_* members); KS_API_RECORD keeps them with
     * api_record. */
    ks_api_mode_t api_mode;
    void *(*api_send)(void *ud, const ks_api_request_t *req,
                      ks_api_done_fn done, void *dud, char *err,
                      size_t errlen);
    void (*api_abort)(void *ud, void *handle);
    int (*api_record)(void *ud, const char *plugin,
                      const ks_api_request_t *req);
    void *ud;
} ks_sched_writer_t;

typedef struct ks_sched_opts {
    int deterministic;       /* ties: smallest node name; offsets 0 */
    int run_all_filters;     /* no early exit between Filter plugins */
    int score_single_node;   /* score even when one node is feasible */
    int percentage_override; /* > 0: use instead of the config's */
    /* One pod (namespace and name) whose cycles evaluate and score every
     * node, as if percentage_override were 100 and score_single_node set,
     * without changing how other pods are scheduled (--explain). */
    const char *full_eval_ns, *full_eval_name;
    int sample_all_plugins;  /* plugin_duration in every cycle, not 10% */
    /* Opportunistic batching (batch.h): KS_BATCHING_ON (0, the default),
     * _OFF or _VERIFY. */
    int batching;
    /* Bulk Filter and Score (framework.h): KS_BULK_ON (0, the default),
     * _OFF or _VERIFY (differences in ks_sched_stats_t). */
    int bulk;
    /* Score plugins that returned Skip at PreScore anyway (framework.h
     * score_skipped): the conformance runner's v1.24.1 scores. */
    int score_skipped;
    /* A node without a status (dropped by an extender without a reason,
     * left out by PreFilter's node names) reads as Success, v1.24.1's nil
     * status, instead of v1.36's UnschedulableAndUnresolvable: the
     * conformance runner's v1.24.1 preemption. */
    int absent_success;
    /* A PreFilter rejection's FitError counts its reasons for every node
     * ("0/3 nodes are available: 3 REASON."), as v1.24.1 did, instead of
     * v1.36's message once ("0/3 nodes are available: REASON."): the
     * conformance runner's v1.24.1 texts. */
    int prefilter_counted;
    /* A FitError ends the attempt: PostFilter is not run, so nothing is
     * nominated or preempted (ks_scheduler_try for replay and shadow
     * mode, which must not change the cluster they compare on). */
    int no_post_filter;
    /* The generation is another scheduler's (shadow mode, an explain
     * cycle beside serve's own): its plugins stay bound to that
     * scheduler's environment (snapshot, clock, writer), and are lent to
     * this one only for the length of each ks_scheduler_try, neither when
     * this one is made nor when it takes a new generation. */
    int borrows_generation;
    ks_sched_observer_t obs;
    ks_sched_writer_t writer;
} ks_sched_opts_t;

ks_scheduler_t *ks_scheduler_new(ks_generation_t *gen, ks_cache_t *cache,
                                 const ks_sched_opts_t *opts);
/* Releases the generation reference; pods still queued are freed. */
void ks_scheduler_free(ks_scheduler_t *s);

/* Swap in a new generation between cycles (takes the caller's reference).
 * In-flight pods keep the generation they started with. */
void ks_scheduler_set_generation(ks_scheduler_t *s, ks_generation_t *gen);
ks_generation_t *ks_scheduler_generation(const ks_scheduler_t *s);

/* A pending pod (node_name empty): queued if a profile matches its
 * schedulerName, else returned back to the caller (returns 1, caller keeps
 * ownership; KS_ENOMEM likewise when it could not be queued). 0 when
 * queued. */
int ks_scheduler_add_pod(ks_scheduler_t *s, ks_pod_t *pod);
/* Take a pending pod out: a queued pod is dropped; one waiting at Permit
 * (or allowed and about to bind) is unreserved, forgotten by the cache and
 * dropped; one whose binding is in flight (cluster mode) is dropped when
 * the cluster answers. The pod is freed. 0, or KS_ENOTFOUND when no
 * pending pod has this uid. Loop thread, between steps. */
int ks_scheduler_remove_pod(ks_scheduler_t *s, const char *uid);

/* The cluster's answer to a binding the writer started: ok, or the
 * failure's message. On success the binding cycle ends (PostBind); on
 * failure the pod is unreserved, forgotten and requeued with backoff (as
 * upstream handles a binding error), or dropped when it was removed
 * meanwhile. 0, or KS_ENOTFOUND when no binding of this uid is in flight.
 * Loop thread, not from inside a plugin call of another pod. */
int ks_scheduler_bind_done(ks_scheduler_t *s, const char *uid, int ok,
                           const char *message);

/* Cluster changes that the cache already applied: re-check gated and
 * unschedulable pods. Without the objects, no QueueingHint is asked: the
 * pods whose rejecting plugins registered for the event move (Queue). */
void ks_scheduler_on_event(ks_scheduler_t *s, ks_cluster_event_t ev);
/* A cluster change with its objects (upstream's event handlers with
 * QueueingHints): old_obj and new_obj are `const ks_pod_t *` for a
 * KS_RES_POD event and `const ks_node_t *` for a KS_RES_NODE one, old_obj
 * NULL for an add, new_obj NULL for a delete; read during the call only.
 * An update's action carries its properties' bits
 * (ks_cluster_event_pod_update / _node_update in cluster_event.h); each
 * bit is handled as one event, as upstream. A pool pod moves when one of
 * its rejecting plugins registered the event and its hint says Queue (a
 * plugin without a hint: always); a Pending plugin's Queue moves it to
 * activeQ at once, an Unschedulable one's to backoff or activeQ; the
 * wildcard {KS_RES_ALL, KS_ACT_ALL} moves every pool pod. The hints only
 * read the objects, so a caller may call this just before the cache
 * applies the change (while the old object still exists). */
void ks_scheduler_on_cluster_event(ks_scheduler_t *s, ks_cluster_event_t ev,
                                   const void *old_obj, const void *new_obj);

/* Run one scheduling cycle for the head of activeQ (after flushing expired
 * backoffs) and any ready binding cycles. Returns 1 if it did work. */
int ks_scheduler_step(ks_scheduler_t *s);
/* Batch driver (virtual clock). */
void ks_scheduler_run_batch(ks_scheduler_t *s);
/* libuv driver (real clock): 0, or KS_EIO when libuv refuses a handle;
 * detach stops the handles (closes them). */
int ks_scheduler_attach_loop(ks_scheduler_t *s, uv_loop_t *loop);
void ks_scheduler_detach_loop(ks_scheduler_t *s);
/* Wake the loop driver after adding pods or events. */
void ks_scheduler_kick(ks_scheduler_t *s);

/* Run one scheduling attempt for `pod` right now (upstream schedulePod and,
 * on a FitError, PostFilter), without assuming, reserving or binding, and
 * hand the result to cb. The pod is not queued; it stays the caller's.
 * PostFilter side effects (victims deleted from the cache, nomination)
 * do happen. Used by the conformance runner. */
int ks_scheduler_try(ks_scheduler_t *s, const ks_pod_t *pod,
                     void (*cb)(void *ud, const ks_cycle_result_t *r),
                     void *ud, ks_error_t *err);

/* Bulk Filter and Score from the next cycle on: KS_BULK_* (framework.h).
 * Loop thread, between cycles. */
void ks_scheduler_set_bulk(ks_scheduler_t *s, int mode);

/* The pod (namespace and name) whose cycles evaluate and score every node
 * from the next cycle on, as opts.full_eval_*; name NULL: none. The
 * strings are not copied: they must stay valid while set. Replay and
 * shadow mode set it to each pod they compare. Loop thread, between
 * cycles. */
void ks_scheduler_set_full_eval(ks_scheduler_t *s, const char *ns,
                                const char *name);

/* Counts for reporting. */
typedef struct ks_sched_stats {
    uint64_t attempts, scheduled, unschedulable, errors, bound, waiting,
        preemptions;
    /* opportunistic batching: nodes whose kept Filter or Score results a
     * cycle reused (compared, in verify mode), and differences verify
     * found (batch.h) */
    uint64_t batch_reused, batch_mismatches;
    /* bulk Filter/Score verify (KS_BULK_VERIFY): node results compared
     * with the node-by-node ones, and differences */
    uint64_t bulk_compared, bulk_mismatches;
    /* The Filter/Score workers (pool.h ks_pool_counts), summed over the
     * current generation's profiles: jobs of more than one chunk shared
     * with the workers or kept inline on the loop thread, and their
     * items. All zero at parallelism 1. */
    uint64_t pool_shared, pool_inline, pool_shared_items, pool_inline_items;
    /* The cycles the workers' gate timed, those it ran every job of
     * inline (pool_gate.h), and what a cycle shared takes of one inline
     * as the first profile with workers measured it. */
    uint64_t pool_gate_cycles, pool_gate_inline, pool_stall_cycles;
    double pool_gate_ratio;
} ks_sched_stats_t;
/* Defined while ks_sched_stats_t has the pool counts above: ksched-bench
 * also builds against trees from before them (tests/bench/compare.sh);
 * KS_SCHED_STATS_POOL_GATE likewise for the gate's. */
#define KS_SCHED_STATS_POOL_COUNTS 1
#define KS_SCHED_STATS_POOL_GATE 1
ks_sched_stats_t ks_scheduler_stats(const ks_scheduler_t *s);
/* Pods in queue `where` (a KS_Q_* of queue.h); with -1, the pods waiting at
 * Permit plus the bindings in flight. */
size_t ks_scheduler_pending(const ks_scheduler_t *s, int where);
/* Visit pods that are still pending (not bound) with their last message. */
void ks_scheduler_foreach_pending(ks_scheduler_t *s,
                                  void (*fn)(void *ud, const ks_pod_t *pod,
                                             const char *message, int gated),
                                  void *ud);
/* A queued pod's scheduling attempts so far (upstream's
 * QueuedPodInfo.Attempts), the scheduler clock's time (ms, as
 * ks_scheduler_now) of its first attempt, and whether the unschedulable
 * timeout ever flushed it from the pool; 0, or KS_ENOTFOUND when no
 * queued or in-flight pod has this uid. Loop thread. */
int ks_scheduler_pod_attempts(const ks_scheduler_t *s, const char *uid,
                              uint32_t *attempts, int64_t *first_attempt_ms,
                              int *flushed);
/* Visit the pods in the unschedulable pool (gated ones included) once per
 * plugin that rejected them (upstream's unschedulable_pods gauge), with the
 * pod's schedulerName (its profile). Loop thread. */
void ks_scheduler_foreach_unsched_plugin(ks_scheduler_t *s,
                                         void (*fn)(void *ud,
                                                    const char *plugin,
                                                    const char *profile),
                                         void *ud);
/* Seed the scheduler's random numbers (score ties, the 10% of cycles
 * whose plugins are timed, the host API's rand_below) for reproducible
 * runs; 0 stands for a fixed odd seed. By default the seed comes from the
 * time of ks_scheduler_new. Loop thread. */
void ks_scheduler_set_seed(ks_scheduler_t *s, uint64_t seed);
/* Set the clock used by the next steps (tests). */
void ks_scheduler_set_clock(ks_scheduler_t *s, int64_t (*now_ms)(void *ud),
                            void *ud);
int64_t ks_scheduler_now(const ks_scheduler_t *s);

/* The FitError text into buf (len bytes): "0/N nodes are available: C
 * reason, ... ." then post_msg (PostFilter's message; may be NULL) (the
 * SDK's ks_fit_error_write over the map's failures; at most 256 distinct
 * reasons are counted). When prefilter is not NULL (a PreFilter
 * rejection): its reasons joined once, "0/N nodes are available: MSG."
 * (v1.36's PreFilterMsg), or, with prefilter_counted, counted for every
 * node as v1.24.1 did. Durations in messages come from the SDK's
 * ks_go_duration (<ksched/helpers.h>). */
void ks_fit_error_format(const struct ks_node_status_map *m, uint32_t n_nodes,
                         const ks_status_t *prefilter, int prefilter_counted,
                         const char *post_msg, char *buf, size_t len);
/* upstream numFeasibleNodesToFind. */
uint32_t ks_num_feasible_nodes_to_find(uint32_t n_all, int32_t percentage);

/* One record of the queue as the console shows it (sched_debug.c): the
 * pod, its queue (a KS_Q_* of queue.h; KS_Q_INFLIGHT for a pod being
 * scheduled, waiting at Permit or binding), whether PreEnqueue gates it,
 * its last failure (NULL: none yet), the plugins that rejected it last
 * (bit i of pending_mask: plugins[i] answered Pending), its attempts and
 * the scheduler clock's times (ms) of its backoff expiry and of its entry
 * into the unschedulable pool. Valid during the visit only. */
typedef struct ks_queued_info {
    const ks_pod_t *pod;
    int where;
    int gated;
    const char *message;
    const char *const *plugins;
    unsigned n_plugins;
    uint32_t pending_mask;
    uint32_t attempts;
    int64_t backoff_expiry_ms, unsched_since_ms;
} ks_queued_info_t;
/* Visit every pod the queue holds (any queue, in flight too). Reads only;
 * fn must not change the scheduler. Loop thread, between cycles. */
void ks_scheduler_foreach_queued(ks_scheduler_t *s,
                                 void (*fn)(void *ud,
                                            const ks_queued_info_t *qi),
                                 void *ud);
/* The queued pod with this uid and its record, or NULL (KS_ENOTFOUND).
 * The pod stays the scheduler's: valid until the loop runs again. Loop
 * thread. */
const ks_pod_t *ks_scheduler_queued_pod(const ks_scheduler_t *s,
                                        const char *uid,
                                        ks_queued_info_t *qi);

#endif
