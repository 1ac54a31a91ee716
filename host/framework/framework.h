/*
 * A framework: one profile's plugins, instantiated and ordered per extension
 * point, and the functions that run each extension point with upstream's
 * semantics.
 *
 * Building (ks_framework_build) checks, before any plugin code runs, that
 * every enabled plugin exists and implements each point it is enabled at,
 * expands multiPoint exactly as upstream's expandMultiPointPlugins, checks
 * duplicates, QueueSort (exactly one), Bind (at least one), at most
 * KS_FW_MAX_MASKED_PLUGINS Filter, Score and Permit plugins, and the score
 * weights, then calls each plugin's create with its pluginConfig args.
 * Every problem is reported, each naming the plugin, its file and the
 * profile.
 *
 * Ownership: a framework holds a reference on each loaded plugin it uses and
 * owns the plugin instances; ks_framework_free destroys them. Frameworks are
 * grouped in a generation (ks_generation_t) that is reference counted: every
 * scheduling cycle, waiting pod and binding cycle holds the generation it
 * started with.
 *
 * Threads: build/free and every run_* except run_filter/run_score on the
 * loop thread; run_filter and the score phase may run on workers.
 *
 * Per-plugin timing: when the env has a plugin_duration callback and its
 * sample_plugins flag is set, every plugin call at PreFilter (and its
 * AddPod/RemovePod extensions), Filter, PostFilter, PreScore, Score,
 * NormalizeScore, Reserve, Unreserve, Permit, PreBind, Bind and PostBind is
 * timed on the monotonic clock and reported. PreEnqueue and QueueSort run
 * outside scheduling cycles and are not timed. With the flag off, a plugin
 * call costs one extra well-predicted branch.
 */
#ifndef KS_FRAMEWORK_H
#define KS_FRAMEWORK_H

#include <stddef.h>
#include <stdint.h>

#include "base/rand.h"
#include "ksched/plugin.h"
#include "config/config.h"
#include "config/ext_points.h"
#include "cluster/cache.h"
#include "base/error.h"
#include "registry.h"
#include "status.h"

typedef struct ks_framework ks_framework_t;
typedef struct ks_fw_env ks_fw_env_t;

/* Operations the scheduler provides to plugins through the host API. */
typedef struct ks_fw_ops {
    int (*bind)(ks_fw_env_t *env, const ks_pod_t *pod, const char *node);
    int (*delete_pod)(ks_fw_env_t *env, const ks_pod_t *pod);
    int (*set_nominated_node)(ks_fw_env_t *env, const ks_pod_t *pod,
                              const char *node);
    void (*event)(ks_fw_env_t *env, const ks_pod_t *pod, const char *type,
                  const char *reason, const char *message);
    ks_waiting_pod_t *(*waiting_pod_get)(ks_fw_env_t *env, const char *uid);
    void (*waiting_pods_iterate)(ks_fw_env_t *env, ks_waiting_pod_fn fn,
                                 void *ud);
    const ks_pod_t *(*waiting_pod_pod)(ks_waiting_pod_t *wp);
    void (*waiting_pod_allow)(ks_waiting_pod_t *wp, const char *plugin);
    void (*waiting_pod_reject)(ks_waiting_pod_t *wp, const char *plugin,
                               const char *msg);
    /* The Permit plugins wp still waits for (plugin.h
     * waiting_pod_pending_plugins); may be NULL: none. */
    uint32_t (*waiting_pod_pending_plugins)(ks_waiting_pod_t *wp,
                                            const char **out, uint32_t cap);
    /* Is `plugin` one of the Permit plugins of wp's profile? The host
     * API's name-based allow/reject refuse other names. May be NULL:
     * every name is accepted. */
    int (*waiting_pod_permit_has)(ks_waiting_pod_t *wp, const char *plugin);
    /* Pods nominated to `node` (any priority); `node` is interned. Writes
     * at most `cap` pods to `out` and returns how many there are. */
    uint32_t (*nominated_pods)(ks_fw_env_t *env, const char *node,
                               const ks_pod_t **out, uint32_t cap);
    /* The scheduler extenders' preemptVerb (plugin.h extenders_preempt and
     * extenders_preempt_result); may be NULL: no extenders. */
    ks_code_t (*extenders_preempt)(ks_fw_env_t *env, const ks_pod_t *pod,
                                   const ks_preempt_candidate_t *cands,
                                   uint32_t n, ks_status_t *st);
    ks_code_t (*extenders_preempt_result)(ks_fw_env_t *env,
                                          const ks_pod_t *pod,
                                          const ks_preempt_candidate_t **out,
                                          uint32_t *n, ks_status_t *st);
    /* SDK ABI 1.4 (plugin_async.h). Where plugins' API requests go (NULL:
     * KS_API_NONE). api_send (KS_API_CLUSTER): start the request; done(ud,
     * r) runs later, once, unless api_abort(handle) comes first; NULL with
     * a message in err when it cannot start. api_record (KS_API_RECORD):
     * keep a copy of the request; 0, or -1 when out of memory. */
    ks_api_mode_t (*api_mode)(ks_fw_env_t *env);
    void *(*api_send)(ks_fw_env_t *env, const ks_api_request_t *req,
                      ks_api_done_fn done, void *ud, char *err,
                      size_t errlen);
    void (*api_abort)(ks_fw_env_t *env, void *handle);
    int (*api_record)(ks_fw_env_t *env, const char *plugin,
                      const ks_api_request_t *req);
    /* plugin.h pre_bind_resume for instance `inst`; may be NULL: -1. */
    int (*pre_bind_resume)(ks_fw_env_t *env, const void *inst,
                           const char *uid, ks_code_t code,
                           const char *reason);
} ks_fw_ops_t;

/* What the framework needs from its surroundings; owned by the scheduler
 * (or a test). */
struct ks_fw_env {
    ks_snapshot_t *snapshot; /* the snapshot of the current cycle */
    ks_cache_t *cache;
    const ks_fw_ops_t *ops; /* may be NULL: those host calls then fail */
    /* The loop plugins' timers and API answers run on (ABI 1.4); NULL
     * when the owner has none (a test host): timer_start refuses. */
    struct uv_loop_s *loop;
    int deterministic;
    uint64_t rng;
    int64_t (*now_ms)(ks_fw_env_t *env);
    void *ud;
    int verbose; /* log level threshold, KS_LOG_* */
    uint32_t n_nominated; /* pods nominated anywhere (kept by the owner) */
    /* Optional: one plugin call's execution time, reported by the run_*
     * functions for every plugin call while sample_plugins is set (the
     * owner sets it per scheduling cycle). ext_point is a ks_ext_point_t or
     * a KS_FW_EP_* value (ks_fw_metric_point_name gives its label), code
     * the status code the plugin returned (Success for Unreserve and
     * PostBind, which return none), plugin the instance's name (valid
     * during the call only). Threads: Filter, the PreFilter extensions run
     * from Filter, and Score are reported from the worker threads, several
     * at once, so the callback must be thread-safe. */
    void (*plugin_duration)(ks_fw_env_t *env, const char *plugin,
                            int ext_point, ks_code_t code, double seconds);
    int sample_plugins; /* record plugin_duration in this cycle */
    /* Bulk Filter and Score (plugin.h filter_nodes, score_nodes):
     * KS_BULK_ON (0, the default), KS_BULK_OFF (node by node, as ABI 1.1)
     * or KS_BULK_VERIFY (bulk, and every result compared with the
     * node-by-node one; differences counted below). Set by the owner. */
    int bulk;
    /* Run the Score of plugins whose PreScore returned Skip, as if it had
     * returned Success (upstream v1.24.1 had no PreScore Skip; the
     * conformance runner reports every plugin's scores). Set by the
     * owner. */
    int score_skipped;
    /* KS_BULK_VERIFY: node results compared, and differences; updated
     * atomically from the workers. */
    uint64_t bulk_compared, bulk_mismatches;
};

enum { KS_BULK_ON = 0, KS_BULK_OFF = 1, KS_BULK_VERIFY = 2 };
/* "on", "off" or "verify" to KS_BULK_*, -1 for anything else. */
int ks_bulk_parse(const char *s);

/* The env's random numbers (host selection ties, plugin-timing samples,
 * the host API's rand_below): one step of xorshift64* over e->rng, seeded
 * by the owner (0 stands for a fixed odd seed); returns the 64-bit output,
 * whose high half callers use. Racy updates from worker threads only cost
 * randomness, never safety. */
static inline uint64_t ks_fw_env_rand(ks_fw_env_t *e)
{
    return ks_rand_next(&e->rng);
}

/* The monotonic clock in seconds (timing of plugins and extension points).
 * Any thread. */
double ks_fw_mono_seconds(void);

/* plugin_duration's extension points that are no runtime list of their
 * own (they follow ks_ext_point_t's values): KS_FW_EP_NORMALIZE_SCORE,
 * _UNRESERVE, _PREFILTER_ADD_POD, _PREFILTER_REMOVE_POD, from
 * config/ext_points.h. */
enum {
    KS_FW_EP_FIRST_ = KS_EP_COUNT - 1,
#define KS_FW_EP_ENUM(e, metric) KS_FW_EP_##e,
    KS_FW_EXTRA_POINT_MAP(KS_FW_EP_ENUM)
#undef KS_FW_EP_ENUM
    KS_FW_EP_END
};

/* upstream's extension_point metric label for a plugin_duration point:
 * "PreFilter", "Filter", ..., "ScoreExtensionNormalize", "Unreserve",
 * "PreFilterExtensionAddPod", "PreFilterExtensionRemovePod"; "Unknown"
 * otherwise. A static string; any thread. */
const char *ks_fw_metric_point_name(int ext_point);

typedef struct ks_handle {
    ks_framework_t *fw;
    struct ks_plugin_inst *inst;
} ks_handle_impl_t;

typedef struct ks_plugin_inst {
    ks_loaded_plugin_t *lp; /* reference held */
    const ks_plugin_t *d;   /* &lp->desc */
    void *self;
    struct ks_handle handle;
    const char *name;
    int created;
    /* The call board (call_board.h): this instance's registration, and
     * the deadline of each of its calls in ms (0: none). */
    uint32_t call_id;
    uint32_t deadline_ms;
    /* Record the per-node calls too (Filter, Score, AddPod/RemovePod,
     * QueueSort's less): for plugins not shipped with ksched, and for any
     * plugin given a deadline. ksched's own plugins are recorded at their
     * once-per-cycle calls only: a few stores per call are a measurable
     * share of their cheapest calls (README, Fault isolation). */
    int record_hot;
    /* EnqueueExtensions, asked once after create: every_event when the
     * plugin has no events_to_register or lists more than fit. */
    int every_event;
    uint32_t n_events;
    ks_cluster_event_t events[32];
    /* The QueueingHint of each of events[] (NULL: always queue). */
    ks_queueing_hint_fn hints[32];
} ks_plugin_inst_t;

/* One entry of a runtime list. */
typedef struct ks_point_entry {
    ks_plugin_inst_t *inst;
    int32_t weight; /* Score only; >= 1 */
    /* PreFilter only: the plugin's position among the Filter entries (its
     * bit in the cycle's Filter skip mask), -1 when it has no Filter */
    int32_t filter_at;
} ks_point_entry_t;

struct ks_framework {
    char *profile_name;
    int32_t percentage_of_nodes_to_score; /* -1: use the global value */
    ks_plugin_inst_t **insts;
    size_t n_insts;
    ks_point_entry_t *points[KS_EP_MULTI_POINT];
    size_t n_points[KS_EP_MULTI_POINT];
    ks_fw_env_t *env;
    int parallelism;
    struct ks_pool *pool; /* worker threads, NULL when parallelism == 1 */
    /* The bulk Filter's record of each Filter plugin, by position: nodes
     * seen and rejected, decayed per cycle (ks_fw_bulk_learn), and the
     * position + 1 of the plugin it runs first (0: the list's order).
     * Loop thread. */
    double bulk_seen[64], bulk_rejected[64];
    int bulk_lead;
};

/* Most plugins at Filter, Score and Permit: a scheduling cycle keeps one
 * bit per plugin of those lists (the Skip sets of PreFilter and PreScore,
 * Permit's waiting plugins). Building refuses a profile with more. */
#define KS_FW_MAX_MASKED_PLUGINS 64

/* Is `ep` implemented by descriptor `d` (Reserve needs both functions)? */
int ks_plugin_implements(const ks_plugin_t *d, ks_ext_point_t ep);
/* The SDK function name(s) a point needs, for messages ("score",
 * "reserve and unreserve"). */
const char *ks_ext_point_fn(ks_ext_point_t ep);

/* Fill each PreFilter entry's filter_at (its position among the Filter
 * entries), so AddPod and RemovePod test one bit of the Filter skip mask
 * instead of searching. ks_framework_build calls it; a framework put
 * together by hand (tests) calls it after adding its points. */
void ks_framework_link_points(ks_framework_t *fw);

/* Build a framework for `prof` (cfg_path names the file in messages) with
 * `parallelism` workers for Filter and Score. 0 and *out set, or a KS_E*
 * code with every problem appended to err and *out NULL. */
int ks_framework_build(const ks_profile_config_t *prof, const char *cfg_path,
                       const ks_registry_t *reg, int parallelism,
                       ks_framework_t **out, ks_error_t *err);
/* Destroys the plugin instances and frees fw; NULL is a no-op. */
void ks_framework_free(ks_framework_t *fw);
void ks_framework_set_env(ks_framework_t *fw, ks_fw_env_t *env);

/* --- runtime --------------------------------------------------------------- */

/* The node-status map of one cycle: one status per snapshot node index. */
struct ks_node_status_map {
    ks_status_t *st; /* indexed like the snapshot */
    uint8_t *set;    /* 1 when st[i] holds a failure */
    uint32_t n;
    const ks_snapshot_t *snap;
    /* The code a node without a status reads as (host API
     * node_status_code): UnschedulableAndUnresolvable, upstream v1.36's
     * absentNodesStatus; Success under v1.24.1's rules (nil status). */
    ks_code_t absent;
};

struct ks_prefilter_result {
    int all;                  /* 1: no restriction */
    const char **names;       /* interned node names */
    uint32_t n;
    size_t cap;
    int oom; /* a name could not be added: PreFilter reports an Error */
};

ks_code_t ks_fw_run_pre_enqueue(ks_framework_t *fw, const ks_pod_t *pod,
                                ks_status_t *st);
int ks_fw_less(ks_framework_t *fw, const ks_queued_pod_t *a,
               const ks_queued_pod_t *b);
/* Runs PreFilter plugins; records Skip in the cycle state; result is the
 * intersection of every plugin's node set (res->all when none restricts). */
ks_code_t ks_fw_run_pre_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               struct ks_prefilter_result *res,
                               ks_status_t *st);
void ks_prefilter_result_free(struct ks_prefilter_result *r);
/* Filter plugins on one node. run_all: keep going after a failure (every
 * failing plugin's reasons are merged into st); otherwise stop at the first. */
ks_code_t ks_fw_run_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           int run_all, ks_status_t *st);
/* The most nodes ks_fw_run_filter_bulk takes in one call. */
#define KS_FW_BULK_MAX 64
/* In a rejector[] entry: the plugin did not say the node is merely
 * rejected (an Error, or filter_nodes's 2 or failure): ask it now. */
#define KS_FW_BULK_UNSURE 0x80

/* One Filter plugin of a cycle's bulk plan: its instance, its PreFilter
 * state (looked up once per cycle instead of once per run of nodes) and
 * its position in the Filter list. */
typedef struct ks_fw_bulk_step {
    ks_plugin_inst_t *in;
    void *state;
    uint8_t at;
} ks_fw_bulk_step_t;

/* The Filter plugins a cycle's bulk Filter runs (those PreFilter did not
 * skip) in the order it runs them: the Filter list's, or with a `lead`
 * moved first, the bulk plugin that lately rejected the largest share of
 * the nodes it saw (the others then see only the nodes it passed). A
 * node the lead rejected gets the first plugin's position as rejector, so
 * its status, when asked, comes from the whole list in order: verdicts
 * and statuses are the list order's. Built on the loop thread by
 * ks_fw_bulk_plan_init, then read-only: the workers share it. */
typedef struct ks_fw_bulk_plan {
    uint32_t n;
    uint8_t lead;     /* 1: step[0] was moved ahead of other plugins */
    uint8_t first_at; /* the first plugin's position in the Filter list */
    ks_fw_bulk_step_t step[KS_FW_MAX_MASKED_PLUGINS];
} ks_fw_bulk_plan_t;

/* What one thread saw of a cycle's bulk Filter, by position in the Filter
 * list: the nodes each plugin was asked about and those it rejected.
 * Added to by ks_fw_run_filter_bulk, folded by ks_fw_bulk_learn. */
typedef struct ks_fw_bulk_counts {
    uint32_t seen[KS_FW_MAX_MASKED_PLUGINS];
    uint32_t rejected[KS_FW_MAX_MASKED_PLUGINS];
} ks_fw_bulk_counts_t;

/* Fill *plan for the cycle whose state is cs. may_lead: the caller takes
 * rejections whose rejector is an earlier plugin than the one that
 * rejected (it asks their statuses only when needed, or only compares
 * verdicts); without it the plan keeps the Filter list's order. Loop
 * thread, after PreFilter. */
void ks_fw_bulk_plan_init(ks_framework_t *fw, ks_cycle_state_t *cs,
                          int may_lead, ks_fw_bulk_plan_t *plan);
/* Fold a cycle's counts into fw's record of how selective each Filter
 * plugin is, and choose the lead of later plans: the bulk plugin with
 * the largest share of rejections, when that share is at least
 * KS_FW_LEAD_SHARE. Loop thread, after the cycle's Filter. */
#define KS_FW_LEAD_SHARE 0.125
void ks_fw_bulk_learn(ks_framework_t *fw, const ks_fw_bulk_counts_t *c);
/* Filter plugins over nodes[0..n) (n <= KS_FW_BULK_MAX), plugin by plugin
 * in plan's order, through their filter_nodes where they have it
 * (plugin.h): pass[i] = 1 when every Filter plugin passed nodes[i], 0
 * when one did not (or might not: an unexpected return), and then
 * rejector[i] is the position in the Filter list to run
 * ks_fw_run_filter_from from for its status (every plugin before it
 * passed the node). pass and rejector have room for KS_FW_BULK_MAX
 * entries whatever n is. counts: NULL, or where to add what each plugin
 * saw. Only for cycles without nominated pods and without timing
 * samples. Worker threads. */
void ks_fw_run_filter_bulk(ks_framework_t *fw, const ks_fw_bulk_plan_t *plan,
                           ks_cycle_state_t *cs, const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes,
                           const uint32_t *pos, uint32_t n, uint8_t *pass,
                           uint8_t *rejector, ks_fw_bulk_counts_t *counts);

/* The bulk call (filter_nodes, score_nodes) running on this thread, for
 * the host API's bulk_columns (plugin.h, since ABI 1.7): the node array
 * passed to the plugin, the snapshot positions of its nodes and the
 * snapshot's columns; all NULL outside such a call, or when the caller
 * has no positions. Set by ks_fw_bulk_ctx_enter just before the call and
 * cleared by ks_fw_bulk_ctx_leave after it, on the calling thread. */
typedef struct ks_fw_bulk_ctx {
    const ks_node_info_t *const *nodes;
    const uint32_t *pos;
    const ks_node_columns_t *cols;
} ks_fw_bulk_ctx_t;
extern _Thread_local ks_fw_bulk_ctx_t ks_fw_bulk_ctx;
/* pos NULL (no positions), or no columns in env's snapshot: nothing set. */
void ks_fw_bulk_ctx_enter(const ks_fw_env_t *env,
                          const ks_node_info_t *const *nodes,
                          const uint32_t *pos);
static inline void ks_fw_bulk_ctx_leave(void)
{
    ks_fw_bulk_ctx.nodes = NULL;
    ks_fw_bulk_ctx.pos = NULL;
    ks_fw_bulk_ctx.cols = NULL;
}
/* ks_fw_run_filter from the Filter plugin at position `first` on (the
 * ones before it passed the node): for a node the bulk Filter rejected,
 * with first = its rejector[] entry, the same status as ks_fw_run_filter
 * without run_all. */
ks_code_t ks_fw_run_filter_from(ks_framework_t *fw, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                int run_all, size_t first, ks_status_t *st);
/* KS_BULK_VERIFY bookkeeping: one node result compared, and whether the
 * bulk and node-by-node results differ (counted); returns `differs`.
 * Any thread. */
int ks_fw_bulk_verified(ks_fw_env_t *env, int differs);
/* May this cycle filter in bulk? (env->bulk not OFF, no timing sample,
 * no nominated pod anywhere.) */
int ks_fw_filter_bulk_ok(const ks_framework_t *fw);
/* upstream RunFilterPluginsWithNominatedPods. */
ks_code_t ks_fw_run_filter_with_nominated(ks_framework_t *fw,
                                          ks_cycle_state_t *cs,
                                          const ks_pod_t *pod,
                                          const ks_node_info_t *ni,
                                          int run_all, ks_status_t *st);
ks_code_t ks_fw_run_prefilter_add_pod(ks_framework_t *fw, ks_cycle_state_t *cs,
                                      const ks_pod_t *pod,
                                      const ks_pod_t *to_add,
                                      const ks_node_info_t *ni,
                                      ks_status_t *st);
ks_code_t ks_fw_run_prefilter_remove_pod(ks_framework_t *fw,
                                         ks_cycle_state_t *cs,
                                         const ks_pod_t *pod,
                                         const ks_pod_t *to_remove,
                                         const ks_node_info_t *ni,
                                         ks_status_t *st);
/* PostFilter plugins until one returns Success or a non-Unschedulable
 * status. *nominated receives the node (interned) or NULL. The message of
 * the last Unschedulable status goes to st. */
ks_code_t ks_fw_run_post_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                const struct ks_node_status_map *m,
                                const char **nominated, ks_status_t *st);
/* PostFilter from the plugin at *at (0 first; st reset by the caller
 * before the first call). KS_PENDING: the plugin at *at (set) asked the
 * scheduler extenders (host API extenders_preempt); call again with the
 * same *at and st once they answered. */
ks_code_t ks_fw_run_post_filter_at(ks_framework_t *fw, size_t *at,
                                   ks_cycle_state_t *cs, const ks_pod_t *pod,
                                   const struct ks_node_status_map *m,
                                   const char **nominated, ks_status_t *st);
ks_code_t ks_fw_run_pre_score(ks_framework_t *fw, ks_cycle_state_t *cs,
                              const ks_pod_t *pod,
                              const ks_node_info_t *const *nodes, uint32_t n,
                              ks_status_t *st);
/* Score + NormalizeScore + weight for every Score plugin not skipped.
 * scores is a [n_score_plugins][n] matrix (row i: plugin i of the Score
 * list, weighted); rows of skipped plugins are not written (read
 * skipped[i] before a row). totals[n] receives the sums. names[n], when
 * not NULL, are the nodes' names (NormalizeScore's node_name) from an
 * array the caller has at hand, sparing a read of each node; pos[n], when
 * not NULL, their snapshot positions (for the plugins' bulk_columns). */
ks_code_t ks_fw_run_score(ks_framework_t *fw, ks_cycle_state_t *cs,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes,
                          const uint32_t *pos,
                          const char *const *names, uint32_t n,
                          int64_t *scores, uint8_t *skipped, int64_t *totals,
                          ks_status_t *st);
ks_code_t ks_fw_run_reserve(ks_framework_t *fw, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const char *node,
                            ks_status_t *st);
void ks_fw_run_unreserve(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node);
/* Permit: on KS_WAIT, *timeout_ms is the smallest timeout asked for (capped
 * at 15 minutes), *timeout_plugin the plugin that asked for it, and
 * *wait_plugins lists the plugins that asked to wait (bit i: plugin i of the
 * Permit list). */
ks_code_t ks_fw_run_permit(ks_framework_t *fw, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const char *node,
                           uint64_t *timeout_ms, uint64_t *wait_plugins,
                           const char **timeout_plugin, ks_status_t *st);
/* PreBind from plugin *at on (0: the first). KS_PENDING (ABI 1.4): plugin
 * *at waits for the cluster, and the cycle goes on with
 * ks_fw_pre_bind_resumed once it calls pre_bind_resume, then with this
 * function from *at + 1. Any other return: *at is past the last plugin
 * run. */
ks_code_t ks_fw_run_pre_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const char *node,
                             size_t *at, ks_status_t *st);
/* The outcome plugin `at` gave through pre_bind_resume, as a status
 * ks_fw_run_pre_bind would have returned for it: running PreBind plugin
 * "X": reason. */
ks_code_t ks_fw_pre_bind_resumed(ks_framework_t *fw, size_t at, ks_code_t code,
                                 const char *reason, ks_status_t *st);
/* The instance (ks_plugin_inst_t) of PreBind plugin `at`, NULL past the
 * list: who may resume a pod waiting there. */
const void *ks_fw_pre_bind_inst(const ks_framework_t *fw, size_t at);
ks_code_t ks_fw_run_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node,
                         ks_status_t *st);
void ks_fw_run_post_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node);
/* Does the plugin named `plugin` (one that rejected a pod) care about `ev`?
 * (EnqueueExtensions; a plugin without events_to_register, or not in this
 * framework, cares about all.) */
int ks_fw_event_matters(ks_framework_t *fw, const char *plugin,
                        ks_cluster_event_t ev);

/* The host API table (one per process). */
const ks_host_api_t *ks_host_api(void);
/* The scheduler's ops for the waiting-pod calls that carry no handle. */
void ks_host_api_set_ops(const ks_fw_ops_t *ops);

#endif
