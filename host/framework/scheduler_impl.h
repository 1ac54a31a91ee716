/*
 * Private: the scheduler's state and the calls one stage makes into
 * another, shared by the files that implement scheduler.h (nothing else
 * includes this header). One stage per file, named as upstream names it:
 *
 *   scheduler.c        construction and teardown, generation swap, the
 *                      operations plugins reach through the host API,
 *                      counts and the clock
 *   sched_queue_ops.c  pods in and out of the queue: add, remove, cluster
 *                      events that move pods, recording a failed attempt,
 *                      deleting a preemption victim
 *   schedule_one.c     the scheduling cycle (upstream scheduleOne): pop,
 *                      schedulePod and PostFilter, assume, Reserve, Permit;
 *                      ks_scheduler_try; the FitError message
 *   schedule_pod.c     upstream schedulePod step by step: PreFilter, the
 *                      nominated node, Filter over the nodes in parallel,
 *                      PreScore and Score; the per-cycle scratch arrays
 *   select_host.c      how many feasible nodes to look for
 *                      (numFeasibleNodesToFind) and the choice among the
 *                      best-scored nodes (selectHost, ties)
 *   waiting_pods.c     pods held at Permit: the waiting and ready lists,
 *                      allow, reject, timeouts
 *   binding_cycle.c    PreBind, Bind (and the cluster writer's answer,
 *                      ks_scheduler_bind_done), PostBind; undoing an
 *                      assumed pod
 *   nominator.c        pods nominated to nodes by preemption
 *   sched_driver.c     one step, the batch driver (virtual clock) and the
 *                      libuv driver (idle handle and timer)
 *   sched_timing.c     extension point timing, plugin-timing samples,
 *                      Permit wait times
 *
 * Scheduler extenders (extenders: in the configuration, extender/): the
 * cycle SUSPENDS while they answer. schedule_pod.c runs Filter, then asks
 * the interested extenders' filterVerb one after the other (each answer
 * narrows the nodes), and after Score asks every interested prioritizeVerb
 * at once; each time it starts the HTTP calls on the loop, stores where it
 * stopped in s->susp and returns "suspended". schedule_one.c then keeps the
 * cycle (pod, generation, cycle state, records) in s->susp too and returns
 * to the driver. No other scheduling cycle starts while one is suspended
 * (upstream's cycles are serial as well, and the scratch arrays and the
 * snapshot belong to it), but binding cycles, Permit timeouts, the API and
 * everything else on the loop go on. When the last answer arrives the
 * driver is kicked; the next step resumes the cycle where it stopped
 * (ks_sched_resume_one). The batch driver runs the extenders' own uv loop
 * (real time) while calls are pending, the simulated clock standing
 * still. The pod of a suspended cycle is marked assumed in its queue
 * record so that ks_scheduler_remove_pod leaves it to binding_cycle.c's
 * drop, which marks it deleted; it is dropped on resumption. A bindVerb
 * extender binds in the binding cycle the way the cluster writer does
 * (BIND_PENDING, answered through ks_scheduler_bind_done).
 *
 * Out of memory, the policy of all of host/framework/: every allocation is
 * checked, and nothing here aborts (ks_node_info_add_pod, which Filter with
 * nominated pods calls, still does: cluster/'s rule). A function that
 * allocates either does all of its work or leaves everything as it was: it
 * allocates what it needs before it changes shared state (the queue
 * reserves heap room for a pod when the pod is added, so moving pods never
 * allocates; a scheduling cycle allocates its cycle state, result and
 * waiting-pod record before it runs a plugin), keeps the old block until
 * realloc hands back a new one (never `x = realloc(x, ...)`; growing arrays
 * use ks_fw_grow, grow.h), frees what it allocated on the way out, and
 * reports the failure to its caller: KS_ENOMEM or a NULL object from
 * functions that return one, an Error status "out of memory" from the
 * run_* functions, and for a pod's scheduling attempt an Error (counted in
 * errors, the pod requeued with backoff, as any Error). Where no caller
 * can be told (recording a failure message, a host API call that returns
 * nothing), the state stays as it was and the failure is logged or turned
 * into an Error at the next point that can report one.
 *
 * Threads: the loop thread only, except the Filter workers in
 * schedule_pod.c (each writes its own entries of the scratch arrays) and
 * the plugin timing callback (see sched_timing.c).
 */
#ifndef KS_SCHEDULER_IMPL_H
#define KS_SCHEDULER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/strmap.h"
#include "batch.h"
#include "cycle_state.h"
#include "extender/ext_trace.h"
#include "extender/extender.h"
#include "queue.h"
#include "scheduler.h"

/* One extender call of a suspended cycle or of a binding. */
typedef struct ks_sched_ext_call {
    ks_ext_call_t call;
    struct ks_scheduler *s;
    struct ks_waiting_pod *wp; /* bind calls */
    size_t ext;   /* index in the generation's cfg->extenders */
    int done;     /* answered */
    char *error;  /* malloc'd, or NULL */
    char *body;   /* malloc'd answer */
    size_t len;
} ks_sched_ext_call_t;

/* A waiting pod's Permit state. */
enum { WP_OPEN = 0, WP_ALLOWED, WP_REJECTED };

/* A binding handed to the cluster writer (cluster mode): none yet, waiting
 * for ks_scheduler_bind_done, or answered while the Bind plugin was still
 * running. */
/* BIND_PREBIND_WAIT: a PreBind plugin returned KS_PENDING (plugin.h
 * pre_bind_resume); the record waits in the bindings in flight, found by
 * uid like a binding the writer started. */
enum { BIND_NONE = 0, BIND_PENDING, BIND_OK, BIND_FAILED, BIND_PREBIND_WAIT };

/* An assumed pod from Reserve to the end of its binding cycle: waiting at
 * Permit, ready to bind, or binding. Owns its cycle state and a reference
 * on the generation its cycle started with. */
struct ks_waiting_pod {
    ks_scheduler_t *s;
    ks_qpod_t *qp;
    ks_generation_t *gen;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const char *node;
    uint64_t pending; /* Permit plugins still to allow (bit = list index) */
    int64_t deadline; /* -1: not waiting */
    double wait_t0;   /* when the Permit wait began (wall clock) */
    uint64_t timeout_ms;
    const char *timeout_plugin;
    int state;
    int deleted; /* the pod was deleted while waiting: drop, not requeue */
    int sampled; /* its scheduling cycle timed plugins: so does binding */
    int bind_state; /* BIND_*: the writer's answer to the Bind plugin */
    ks_sched_ext_call_t *ext_bind; /* a bindVerb extender's call, or NULL */
    /* PreBind: the plugin to run next (or waiting, BIND_PREBIND_WAIT);
     * resumed: pre_bind_resume answered, with resume_code and message. */
    size_t prebind_at;
    int resumed;
    ks_code_t resume_code;
    char message[1024];
    int registered; /* in the waiting list */
    struct ks_waiting_pod *wnext, *wprev; /* waiting list */
    struct ks_waiting_pod *rnext;         /* ready list */
    struct ks_waiting_pod *bnext, *bprev; /* bindings in flight */
};

/* What one scheduling attempt found (schedulePod and PostFilter). */
typedef struct cycle_out cycle_out_t;

/* Where a suspended scheduling cycle stopped (see the top of this file). */
enum { EXT_STAGE_FILTER = 1, EXT_STAGE_PRIORITIZE, EXT_STAGE_PREEMPT };

/* The extenders' preemptVerb for the cycle's PostFilter (ext_preempt.c):
 * the candidates a PostFilter plugin handed over, narrowed by each
 * extender's answer in turn, and the plugin to call again. */
enum { XP_NONE = 0, XP_ASKING, XP_DONE, XP_FAILED };

typedef struct ks_sched_xpreempt {
    int state;
    const ks_pod_t *pod;
    ks_preempt_candidate_t *c; /* victims arrays malloc'd per candidate */
    uint32_t n;
    char *error;     /* XP_FAILED: why (malloc'd) */
    size_t post_at;  /* the PostFilter plugin that asked */
    ks_status_t post_st; /* PostFilter's status so far */
} ks_sched_xpreempt_t;

typedef struct ks_sched_suspended {
    /* scheduleOne's cycle (schedule_one.c) */
    ks_qpod_t *qp;
    ks_generation_t *gen;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    struct ks_waiting_pod *wp;
    cycle_out_t *o;
    int64_t now;
    double start;
    int sampled;
    int deleted; /* removed meanwhile: drop it on resumption */
    /* schedulePod (schedule_pod.c) */
    int stage;
    size_t next; /* filter: the extender being asked */
    uint32_t n_feasible;
    /* filter of the nominated node alone: PreFilter's result, for every
     * node should the extenders reject it */
    struct ks_prefilter_result pre;
    int has_pre;
    ks_sched_ext_call_t *calls; /* one per extender */
    size_t n_calls;
    unsigned outstanding; /* calls not answered yet */
} ks_sched_suspended_t;

typedef struct nominee {
    const ks_pod_t *pod;
    const char *node;
} nominee_t;

struct ks_scheduler {
    ks_generation_t *gen;
    ks_cache_t *cache;
    ks_snapshot_t *snap;
    ks_queue_t *q;
    ks_sched_opts_t opts;
    ks_fw_env_t env;
    uint64_t cycle;
    uint32_t next_start;
    ks_sched_stats_t stats;
    /* clock */
    int64_t vclock;
    int64_t (*clock_fn)(void *ud);
    void *clock_ud;
    /* waiting and ready pods */
    struct ks_waiting_pod *waiting;
    struct ks_waiting_pod *ready_head, *ready_tail;
    size_t n_waiting;
    /* bindings handed to the writer and not answered yet; the pod whose
     * Bind plugins are running now */
    struct ks_waiting_pod *binding;
    size_t n_binding;
    /* the same by the pod's uid, for the cluster's answers (thousands
     * may be in flight); binding_by_uid_off: a put ran out of memory, so
     * the list is searched instead until it empties */
    ks_strmap_t binding_by_uid;
    int binding_by_uid_off;
    struct ks_waiting_pod *in_bind;
    /* nominated pods, sorted by the node name's address */
    nominee_t *noms;
    size_t n_noms, cap_noms;
    /* per-cycle scratch, sized to the snapshot */
    struct ks_node_status_map smap;
    /* the indices whose smap.set the cycle set (ks_sched_status_mark),
     * so that the next cycle clears only those; set_all: every one */
    uint32_t *set_list;
    uint32_t n_set;
    int set_all;
    uint32_t cap_nodes;
    uint32_t *cand;          /* candidate node indices */
    uint32_t cand_identity;  /* n: cand[0..n) holds 0..n-1 already (every
                              * node a candidate last time); 0: unknown */
    uint8_t *feasible_flag;  /* by position: 0 not evaluated, 1 passed,
                              * 2 rejected (status in smap), 3 rejected
                              * by the bulk Filter, status not asked yet
                              * (lazy_rej says where to start) */
    uint8_t *lazy_rej;       /* by snapshot index, for flag 3 */
    /* A shared Filter job's chunks, each its tally (schedule_pod.c's
     * staged collection); cap_tally entries */
    struct ks_filter_tally *tally;
    uint32_t cap_tally;
    int filter_lazy;         /* this cycle may leave rejections at 3 */
    const ks_node_info_t **feasible;
    const char **feasible_names; /* their names, when names_ok */
    int names_ok;
    /* their snapshot indices, when idx_ok (the Score plugins' positions
     * for bulk_columns; batching's bt.fidx is this array) */
    uint32_t *feasible_idx;
    int idx_ok;
    int64_t *scores, *totals;
    /* a batched Score's reused scores, for ks_cycle_result_score */
    ks_score_kept_view_t kept_view;
    uint32_t *tie_at; /* select_host.c: where the highest totals are */
    uint8_t *skipped;
    size_t cap_scores;
    /* libuv driver */
    uv_loop_t *loop;
    uv_idle_t idle;
    uv_timer_t timer;
    int attached, idle_on;
    int batch; /* driven by ks_scheduler_run_batch */
    /* extenders: the suspended cycle, the HTTP client (on the attached
     * loop, or on ext_loop, the scheduler's own, when none is attached),
     * bindVerb calls in flight */
    ks_sched_suspended_t *susp;
    ks_hc_t *ext_hc;
    uv_loop_t *ext_loop;
    size_t n_ext_binding;
    int ext_off; /* ks_scheduler_try on an attached scheduler */
    size_t ext_n_cycle; /* extenders of the cycle being scored */
    /* the extenders' answers in the cycle of the --explain pod (the
     * result points to it; freed by ks_sched_ext_teardown) */
    ks_ext_trace_t ext_trace;
    ks_sched_xpreempt_t xp;
    /* opportunistic batching (batch.h) */
    ks_batch_t bt;
};

struct cycle_out {
    ks_cycle_result_t r;
    char message[4096];
    int fit_error;            /* 1: FitError (run PostFilter) */
    int prefilter_failed;
    ks_status_t pre_status;   /* PreFilter failure */
    const char *plugins[KS_QPOD_MAX_PLUGINS]; /* rejecting plugins */
    unsigned n_plugins;
    uint32_t pending_mask; /* bit i: plugins[i] returned Pending */
};

/* The cycle's status of node idx (< smap.n) holds a failure: smap.set
 * and the list ks_sched_status_clear clears. Loop thread. */
static inline void ks_sched_status_mark(ks_scheduler_t *s, uint32_t idx)
{
    if (!s->smap.set[idx]) {
        s->smap.set[idx] = 1;
        s->set_list[s->n_set++] = idx; /* each index once: < cap_nodes */
    }
}

/* --- sched_timing.c --------------------------------------------------------- */

/* Start timing an extension point when someone listens (0 otherwise). */
#define KS_SCHED_EP_T0(s)                                                      \
    ((s)->opts.obs.ep_duration ? ks_fw_mono_seconds() : 0.0)
void ks_sched_ep_done(const ks_scheduler_t *s, const ks_framework_t *fw,
                      ks_ext_point_t ep, ks_code_t code, double t0);
/* Hook the env's plugin timing to the observer, when it has one. */
void ks_sched_timing_init(ks_scheduler_t *s);
/* Does the cycle starting now time its plugins? Sets env.sample_plugins. */
void ks_sched_sample_cycle(ks_scheduler_t *s);
/* A Permit wait is over (allowed or not): report how long it took. */
void ks_sched_report_permit_wait(const ks_scheduler_t *s,
                                 const ks_waiting_pod_t *wp);

/* --- nominator.c ------------------------------------------------------------ */

/* Nominate `pod` to `node` (NULL or "": clear its nomination), setting
 * pod->nominated_node_name. 0, or KS_ENOMEM with nothing changed; clearing
 * never fails. */
int ks_sched_nominate(ks_scheduler_t *s, const ks_pod_t *pod,
                      const char *node);
uint32_t ks_sched_ops_nominated_pods(ks_fw_env_t *e, const char *node,
                                     const ks_pod_t **out, uint32_t cap);
int ks_sched_ops_set_nominated(ks_fw_env_t *e, const ks_pod_t *pod,
                               const char *node);

/* --- sched_queue_ops.c -------------------------------------------------------- */

/* A cluster event, moving every pool pod it may help except `skip`. */
void ks_sched_on_event_except(ks_scheduler_t *s, ks_cluster_event_t ev,
                              const ks_qpod_t *skip);
/* Record a failed attempt on the pod's record (message, rejecting plugins)
 * and tell the observer and the writer. error: an Error status, not
 * Unschedulable. */
void ks_sched_record_failure(ks_scheduler_t *s, ks_qpod_t *qp,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error);
/* record_failure, then back to the queue: backoff on an Error, else the
 * unschedulable pool (or backoff after a move request, as the queue
 * decides). */
void ks_sched_requeue_failed(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error);
/* requeue_failed for a rejection (upstream IsRejected): plugins[i] is
 * recorded as a Pending plugin when bit i of pending_mask is set (upstream
 * PendingPlugins), an unschedulable one otherwise. */
void ks_sched_requeue_rejected(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                               const char *msg, const char *const *plugins,
                               unsigned n_plugins, uint32_t pending_mask);
int ks_sched_ops_delete_pod(ks_fw_env_t *e, const ks_pod_t *pod);

/* --- schedule_one.c / schedule_pod.c / select_host.c ------------------------- */

/* Pop the head of activeQ and run its scheduling cycle. */
void ks_sched_schedule_one(ks_scheduler_t *s);
/* upstream schedulePod: fills o with the feasible nodes, their scores and
 * the selected node, or why there is none (o->fit_error, o->r.error).
 * Returns 0, or 1 when it suspended for extenders (s->susp says where;
 * call ks_sched_schedule_pod_resume once s->susp->outstanding is 0). */
int ks_sched_schedule_pod(ks_scheduler_t *s, ks_framework_t *fw,
                          ks_cycle_state_t *cs, const ks_pod_t *pod,
                          cycle_out_t *o);
int ks_sched_schedule_pod_resume(ks_scheduler_t *s, ks_framework_t *fw,
                                 ks_cycle_state_t *cs, const ks_pod_t *pod,
                                 cycle_out_t *o);
/* Resume the suspended cycle when its extenders answered: 1 if it ran. */
int ks_sched_resume_one(ks_scheduler_t *s);
/* The extenders' HTTP client (created on first use), or NULL with err. */
ks_hc_t *ks_sched_ext_client(ks_scheduler_t *s, ks_error_t *err);
/* Free a suspended cycle's calls (cancelling those still running). */
void ks_sched_ext_calls_free(ks_scheduler_t *s);
/* Extender calls in flight (a suspended cycle's, bindings'). */
int ks_sched_ext_pending(const ks_scheduler_t *s);
/* The loop is being detached: close a client that lives on it (its calls
 * are dropped; the loop runs the close). */
void ks_sched_ext_detach(ks_scheduler_t *s);
/* Teardown (from ks_sched_binding_teardown): the suspended cycle, the
 * client and the scheduler's own loop. */
void ks_sched_ext_teardown(ks_scheduler_t *s);
void ks_sched_scratch_free(ks_scheduler_t *s);
/* Clear smap.set where the previous cycle set it (ks_sched_status_mark). */
void ks_sched_status_clear(ks_scheduler_t *s);
/* The extenders of the cycle's generation (0 when they are off). */
size_t ks_sched_extenders(const ks_scheduler_t *s,
                          const ks_extender_config_t **out);
/* Make s->susp ready for a stage with one call slot per extender (the
 * previous stage's calls freed). 0, or -1 when out of memory. */
int ks_sched_ext_suspend(ks_scheduler_t *s, size_t n_ext, int stage,
                         uint32_t n_feasible);
/* Start extender k's call of `verb` with `body` in s->susp->calls[k]. 0
 * (s->susp->outstanding counts it), or -1 with the error in the call. */
int ks_sched_ext_start_body(ks_scheduler_t *s, const ks_extender_config_t *e,
                            size_t k, const char *verb, const char *body);
/* The same with the cycle's ExtenderArgs for `pod` and s->feasible. */
int ks_sched_ext_start(ks_scheduler_t *s, const ks_extender_config_t *e,
                       size_t k, const char *verb, const ks_pod_t *pod);
/* Free the suspended cycle's calls and its PreFilter result. */
void ks_sched_ext_release(ks_scheduler_t *s);
/* Apply an extender's filter answer to s->feasible and the statuses: 0,
 * or -1 with o saying why (an ignorable extender's failure is 0). */
int ks_sched_ext_filter_apply(ks_scheduler_t *s,
                              const ks_extender_config_t *e,
                              ks_sched_ext_call_t *c, cycle_out_t *o);
/* upstream findNodesThatPassExtenders from s->susp->next on: 1 when a
 * call was started (suspended), 0 when every extender was asked, -1 on an
 * Error. */
int ks_sched_ext_filter_next(ks_scheduler_t *s, const ks_pod_t *pod,
                             cycle_out_t *o);
/* Add the prioritize answers to the totals (errors ignored, upstream). */
void ks_sched_ext_prioritize_apply(ks_scheduler_t *s, const ks_pod_t *pod);
/* schedule_pod.c's error outcome (o says an Error, with st's message). */
int ks_sched_cycle_error(cycle_out_t *o, const ks_status_t *st);

/* --- ext_preempt.c ------------------------------------------------------------ */

/* The host API's extenders_preempt / extenders_preempt_result. */
ks_code_t ks_sched_ops_ext_preempt(ks_fw_env_t *e, const ks_pod_t *pod,
                                   const ks_preempt_candidate_t *cands,
                                   uint32_t n, ks_status_t *st);
ks_code_t ks_sched_ops_ext_preempt_result(ks_fw_env_t *e, const ks_pod_t *pod,
                                          const ks_preempt_candidate_t **out,
                                          uint32_t *n, ks_status_t *st);
/* The suspended preempt stage's answer arrived: apply it and ask the next
 * extender. 1 when a call is in flight again, 0 when every extender was
 * asked (PostFilter goes on). */
int ks_sched_xp_resume(ks_scheduler_t *s);
/* Forget the preempt stage (its candidates and answer). */
void ks_sched_xp_clear(ks_scheduler_t *s);
/* How many feasible nodes to look for among n_cand candidates. */
uint32_t ks_sched_nodes_to_find(const ks_scheduler_t *s,
                                const ks_framework_t *fw, int full_eval,
                                uint32_t n_cand);
/* Index in s->feasible of the node to bind to: the highest total in
 * s->totals; ties at random, or the smallest name when deterministic.
 * pool (may be NULL) shares the scan of a long list; the choice and the
 * random draw are the same either way. */
struct ks_pool;
uint32_t ks_sched_select_host(ks_scheduler_t *s, struct ks_pool *pool,
                              uint32_t n_feasible);

/* --- waiting_pods.c ------------------------------------------------------------ */

/* Frees the record, its cycle state and its generation reference (a
 * zeroed record too). */
void ks_sched_wp_free(ks_waiting_pod_t *wp);
/* Permit said Wait: hold the pod until its plugins allow it or the
 * timeout passes. */
void ks_sched_wp_wait(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                      uint64_t wait_mask, uint64_t timeout_ms,
                      const char *timeout_plugin, int64_t now);
/* Queue for its binding cycle (allowed, rejected or deleted). */
void ks_sched_ready_push(ks_scheduler_t *s, ks_waiting_pod_t *wp);
ks_waiting_pod_t *ks_sched_ready_pop(ks_scheduler_t *s);
void ks_sched_wp_reject(ks_waiting_pod_t *wp, const char *plugin,
                        const char *msg);
/* The pod waiting at Permit with this uid, or NULL. */
ks_waiting_pod_t *ks_sched_waiting_get(ks_scheduler_t *s, const char *uid);
/* The pod of qp is being removed: when it waits at Permit or is ready to
 * bind, mark it so that its binding cycle drops it (1), else 0. */
int ks_sched_waiting_drop(ks_scheduler_t *s, const ks_qpod_t *qp);
/* Reject the pods whose Permit timeout passed. */
void ks_sched_fire_timeouts(ks_scheduler_t *s, int64_t now);
/* The earliest Permit deadline, or -1. */
int64_t ks_sched_waiting_deadline(const ks_scheduler_t *s);
/* Teardown: Unreserve and free waiting pods, free ready ones. */
void ks_sched_waiting_teardown(ks_scheduler_t *s);
ks_waiting_pod_t *ks_sched_ops_wp_get(ks_fw_env_t *e, const char *uid);
void ks_sched_ops_wp_iterate(ks_fw_env_t *e, ks_waiting_pod_fn fn, void *ud);
const ks_pod_t *ks_sched_ops_wp_pod(ks_waiting_pod_t *wp);
void ks_sched_ops_wp_allow(ks_waiting_pod_t *wp, const char *plugin);
uint32_t ks_sched_ops_wp_pending_plugins(ks_waiting_pod_t *wp,
                                         const char **out, uint32_t cap);
int ks_sched_ops_wp_permit_has(ks_waiting_pod_t *wp, const char *plugin);

/* --- binding_cycle.c ------------------------------------------------------------ */

/* Run the binding cycles of the ready pods; 1 if there were any. */
int ks_sched_run_ready(ks_scheduler_t *s);
/* A failure past Reserve: Unreserve, forget the assumed pod, requeue it,
 * and free the record. error: 1 an Error status, 0 a rejection by
 * wp->timeout_plugin, KS_SCHED_FAIL_PENDING that plugin's Pending. */
#define KS_SCHED_FAIL_PENDING 2
void ks_sched_fail_assumed(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                           const char *msg, int error);
/* The pod of qp is being removed while its binding is in flight: drop it
 * when the cluster answers (1), or 0 when it is not binding. */
/* The loop of a batch run (no loop attached): extender calls and plugins'
 * timers and API answers run on it, in real time. Made on first use; NULL
 * when it cannot be. Freed by ks_sched_ext_teardown. */
uv_loop_t *ks_sched_batch_loop(ks_scheduler_t *s);
int ks_sched_binding_drop(ks_scheduler_t *s, const ks_qpod_t *qp);
/* plugin.h pre_bind_resume: the pod `uid` waiting at PreBind plugin
 * instance `inst` goes on with `code` and `reason` (copied) from the ready
 * list. 0, or -1 when no such pod waits there. Loop thread. */
int ks_sched_pre_bind_resume(ks_scheduler_t *s, const void *inst,
                             const char *uid, ks_code_t code,
                             const char *reason);
/* Teardown: free the records of bindings still in flight. */
void ks_sched_binding_teardown(ks_scheduler_t *s);
int ks_sched_ops_bind(ks_fw_env_t *e, const ks_pod_t *pod, const char *node);

#endif
