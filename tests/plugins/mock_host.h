/*
 * The plugin tests' host fixture: plugins run against the real host. A
 * fixture (mock_host_t) is a real framework (framework/framework.h) with
 * its env, a real scheduler cache and snapshot (cluster/cache.h), and the
 * host API table's own functions (framework/host_api.c); every plugin
 * instance made through it gets a real `struct ks_handle {fw, inst}`. What
 * the fixture adds is the scheduler around the framework: the env's
 * operations (bind, delete, nominate, events, waiting and nominated pods)
 * record what plugins asked, so tests can assert on it. Builders for pods,
 * nodes and NodeInfo, a loader for built plugin .so files and a
 * YAML-to-ks_args_t reader for argument tests come with it.
 *
 * Typical use (Check test):
 *
 *     mock_host_t *mh = mock_host_new();
 *     const ks_plugin_t *p = mock_plugin_load("NodeName");
 *     void *self = NULL;
 *     char err[256];
 *     ck_assert_int_eq(mock_plugin_create(mh, p, NULL, &self, err, sizeof err), 0);
 *     ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
 *     ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 << 30, 110));
 *     ks_status_t *st = mock_status_new();
 *     ck_assert_int_eq(mock_prefilter_filter(mh, p, self, pod, ni, st), KS_SUCCESS);
 *     p->destroy(self);
 *     mock_status_free(st);
 *     mock_host_free(mh);
 *     mock_free_all();
 *
 * The snapshot: mock_host_set_nodes names the NodeInfos the test built;
 * the fixture puts a copy of each node (read back by the host's manifest
 * reader) into its cache and assumes every pod of those NodeInfos on its
 * node (the cache keeps the test's pod objects, so plugins see the very
 * pods the test made), then updates the snapshot. A pod added to or
 * removed from one of those NodeInfos (mock_nodeinfo_add_pod / _remove_pod)
 * and a node changed through mock_node_* are synced at once; a field
 * changed by hand is seen at the next sync (mock_host_sync, set_nodes, the
 * runners). The snapshot's NodeInfos are the host's own, not the test's.
 *
 * Ownership: every object made by a mock_*_new builder (pods, nodes, NodeInfo,
 * selectors, args trees) is allocated from one process-wide arena and lives
 * until mock_free_all(); nothing needs freeing one by one. Free fixtures
 * (mock_host_free) before mock_free_all. Fixtures, statuses, cycle states,
 * prefilter results and status maps have their own _free. Strings are
 * interned in the host's global table (mock_intern), so pointers compare
 * equal exactly when texts do, as types.h promises.
 *
 * Threads: the test's main thread (the host API's loop-thread rules
 * apply; Filter and Score calls may come from other threads).
 */
#ifndef KS_TEST_MOCK_HOST_H
#define KS_TEST_MOCK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <ksched/plugin.h>

#include "framework/framework.h"

/* --- statuses ------------------------------------------------------------ */

/* The host's status, read through these functions as the host API does
 * (the status is opaque to plugins and their tests). Its code is not set by
 * plugins (they return it); the mock_* runners below store the returned
 * code in it (mock_status_set_code). */

/* The host's status_new / status_free / ks_status_reset. */
ks_status_t *mock_status_new(void);
void mock_status_free(ks_status_t *st);
/* Drop the reasons and set code back to KS_SUCCESS. */
void mock_status_reset(ks_status_t *st);
/* The code stored by a runner (KS_SUCCESS after new / reset). */
ks_code_t mock_status_code(const ks_status_t *st);
void mock_status_set_code(ks_status_t *st, ks_code_t code);
/* How many reasons, and reason i (NULL past the end). */
uint32_t mock_status_reason_count(const ks_status_t *st);
const char *mock_status_reason_at(const ks_status_t *st, uint32_t i);
/* 1 when one of the reasons equals `reason`. */
int mock_status_has(const ks_status_t *st, const char *reason);
/* The reasons joined with "; " into a static per-thread buffer (for
 * assertion messages); "" when none. */
const char *mock_status_text(const ks_status_t *st);

/* --- cycle state, prefilter result, filter verdicts ---------------------- */

/* The host's cycle state (framework/cycle_state.c). */
ks_cycle_state_t *mock_cycle_state_new(void);
/* Frees every value with its free_fn. */
void mock_cycle_state_free(ks_cycle_state_t *cs);
/* Number of keys stored. */
uint32_t mock_cycle_state_count(const ks_cycle_state_t *cs);

/* The host's PreFilter result (framework.h struct ks_prefilter_result),
 * empty and unrestricted (all = 1) as the runtime hands it to a plugin. */
ks_prefilter_result_t *mock_prefilter_result_new(void);
void mock_prefilter_result_free(ks_prefilter_result_t *r);
/* 1 once the plugin restricted the node set (add_node or set_none). */
int mock_prefilter_result_is_set(const ks_prefilter_result_t *r);
int mock_prefilter_result_has(const ks_prefilter_result_t *r,
                              const char *node_name);

/* The host's node-status map (framework.h struct ks_node_status_map):
 * per-node Filter codes for PostFilter, indexed like the snapshot of the
 * newest live fixture; absent nodes read as KS_SUCCESS. Codes set for a
 * node the snapshot does not have yet apply once it does. */
ks_node_status_map_t *mock_node_status_map_new(void);
void mock_node_status_map_set(ks_node_status_map_t *m, const char *node_name,
                              ks_code_t code);
void mock_node_status_map_free(ks_node_status_map_t *m);

/* --- the host ------------------------------------------------------------ */

#define MOCK_MAX_ITEMS 64

/* A waiting pod at Permit, as the fixture's scheduler operations keep it;
 * allow/reject calls are recorded. */
struct ks_waiting_pod {
    const ks_pod_t *pod;
    int allowed;  /* number of waiting_pod_allow calls */
    int rejected; /* number of waiting_pod_reject calls */
    char last_plugin[128];
    char reject_message[256];
};

typedef struct mock_host mock_host_t;
struct mock_host {
    /* A copy of the host's API table (ks_host_api()), handed to create():
     * a test may clear a member to stand in for an older host, or wrap
     * one to count calls. */
    ks_host_api_t api;
    /* A handle of the fixture's framework for calling `api` directly. */
    ks_handle_t *handle;
    /* The real parts: framework (its env is `env`), cache and snapshot. */
    ks_framework_t *fw;
    ks_fw_env_t env;
    ks_cache_t *cache;
    ks_snapshot_t *snap;

    /* Inputs ---------------------------------------------------------- */
    /* The test's NodeInfos the snapshot mirrors (mock_host_set_nodes). */
    const ks_node_info_t **nodes;
    uint32_t n_nodes;
    /* image_num_nodes: a name in this table returns its count (a stand-in
     * for nodes the test did not build); any other name is the
     * snapshot's own count. */
    struct { const char *name; uint32_t count; } image_counts[MOCK_MAX_ITEMS];
    uint32_t n_image_counts;
    /* nominated_pods: (node, pod) pairs. */
    struct { const char *node; const ks_pod_t *pod; } nominated[MOCK_MAX_ITEMS];
    uint32_t n_nominated;
    /* Waiting pods (waiting_pod_get looks them up by uid). */
    struct ks_waiting_pod waiting[MOCK_MAX_ITEMS];
    uint32_t n_waiting;
    int bind_rc;    /* what the bind operation returns (default 0) */
    int delete_rc;  /* what the delete operation returns (default 0) */
    int64_t now_ms; /* the env's clock */

    /* Recordings ------------------------------------------------------- */
    uint32_t n_binds;
    const ks_pod_t *bound_pod;
    const char *bound_node; /* interned */
    const ks_pod_t *deleted[MOCK_MAX_ITEMS];
    uint32_t n_deleted;
    uint32_t n_nominations;
    const ks_pod_t *nominated_pod;
    const char *nominated_node; /* interned; "" when cleared */
    uint32_t n_events;
    char last_event_type[64];
    char last_event_reason[128];
    char last_event_message[512];

    /* Private bookkeeping of the sync. */
    struct mock_sync *sync;
    mock_host_t *next_live;

    /* The cluster's API, timers and PreBind resumes (SDK ABI 1.4; see
     * "the cluster's API" below). */
    ks_api_mode_t api_mode; /* what api_mode answers (default KS_API_NONE) */
    struct mock_api_call *calls; /* every request, in order (n_calls) */
    uint32_t n_calls, cap_calls;
    struct mock_timer *timers; /* started timers, live or not (n_timers) */
    uint32_t n_timers, cap_timers;
    struct mock_resume *resumes; /* every pre_bind_resume call */
    uint32_t n_resumes, cap_resumes;
    const char *waiting_prebind[MOCK_MAX_ITEMS]; /* uids (interned) */
    uint32_t n_waiting_prebind;
    int in_pre_bind; /* set by mock_pre_bind while pre_bind runs */
};

mock_host_t *mock_host_new(void);
void mock_host_free(mock_host_t *mh);
/* The framework's workers: a pool of `threads` (the caller included) for
 * the host API's parallelize, as a profile's parallelism makes one; 1:
 * none (the default). With KSCHED_POOL_CHAOS set (pool.h) before the
 * call, every parallelize shares its chunks or runs inline at random and
 * some chunks start late. */
void mock_host_set_parallelism(mock_host_t *mh, int threads);
/* The snapshot mirrors these `n` NodeInfos (the array is copied, the
 * NodeInfos are not: keep them alive). */
void mock_host_set_nodes(mock_host_t *mh, ks_node_info_t *const *nodes,
                         uint32_t n);
/* Bring the cache and snapshot up to date with the NodeInfos (after
 * changing a node's or pod's fields by hand). */
void mock_host_sync(mock_host_t *mh);
void mock_host_set_image_count(mock_host_t *mh, const char *image,
                               uint32_t count);
/* A Namespace with these labels in the cache (replaces one of that name). */
void mock_host_set_namespace(mock_host_t *mh, const char *ns,
                             ks_labels_t labels);
/* A Service "owner" in `ns` whose selector is `sel` (only In requirements
 * with one value, as a Service's map selector), replacing the previous
 * one; NULL removes it. The cache's owner_selectors answer from it. */
void mock_host_set_owner_service(mock_host_t *mh, const char *ns,
                                 const ks_label_selector_t *sel);
void mock_host_add_nominated(mock_host_t *mh, const char *node,
                             const ks_pod_t *pod);
struct ks_waiting_pod *mock_host_add_waiting(mock_host_t *mh,
                                             const ks_pod_t *pod);
/* Put a plugin instance (one made by mock_plugin_create, or a test's own
 * descriptor with its self) in the framework's Filter list, and in its
 * PreFilter list when it has pre_filter: the host's run_filters and
 * run_prefilter_add_pod / _remove_pod run it. */
void mock_host_add_filter(mock_host_t *mh, const ks_plugin_t *p, void *self);

/* --- interning and the arena --------------------------------------------- */

/* The interned copy of `s` (NULL stays NULL). Thread-safe. */
const char *mock_intern(const char *s);
/* Zeroed memory from the arena; aborts on ENOMEM. */
void *mock_alloc(size_t size);
/* Release everything allocated by the builders. */
void mock_free_all(void);

/* --- plugin loading ------------------------------------------------------ */

/* dlopen() `path` (RTLD_NOW | RTLD_LOCAL) and return its descriptor, or NULL
 * with the reason printed to stderr. The library stays loaded. */
const ks_plugin_t *mock_plugin_open(const char *path);
/* Load plugin `name` from $KS_TEST_PLUGIN_DIR/<name>/<lowercase name>.so. */
const ks_plugin_t *mock_plugin_load(const char *name);
/* The path mock_plugin_load would open (static per-thread buffer). */
const char *mock_plugin_path(const char *name);
/* Parse `args_yaml` (NULL: no args, as the host passes for a plugin
 * without pluginConfig) with mock_args_parse and call create with mh->api
 * and the handle of a new instance of the fixture's framework (which
 * lives until mock_host_free; the test destroys `self`).
 * Returns create's result; a YAML syntax error returns -1 with the message in
 * err. */
int mock_plugin_create(mock_host_t *mh, const ks_plugin_t *p,
                       const char *args_yaml, void **self, char *err,
                       size_t errlen);
/* The same with mock_args_parse_raw. */
int mock_plugin_create_raw(mock_host_t *mh, const ks_plugin_t *p,
                           const char *args_yaml, void **self, char *err,
                           size_t errlen);

/* A ks_args_t tree from a YAML text (one document), as the host hands it
 * to a plugin: a mapping is read by the host's configuration reader as a
 * pluginConfig entry's args (so apiVersion and kind at its root are
 * dropped, repeated keys refused), with positions (1-based) relative to
 * `yaml`. Any other root, which the host would refuse before the plugin
 * sees it, is kept as written. Lives until mock_free_all. NULL for an
 * empty document, a syntax error or args the host refuses (printed). */
const ks_args_t *mock_args_parse(const char *yaml);
/* The tree exactly as written, not read by the host: for a plugin's own
 * checks of args that the host's reader would change or refuse first. */
const ks_args_t *mock_args_parse_raw(const char *yaml);

/* --- cluster objects (SDK ABI 1.3) --------------------------------------- */

/* The host's own stores (cluster/object_store.h): mock_plugin_create
 * registers the resources a plugin declares, as the loader does, and the
 * host API's store_get/object_* read them. Stores are process-wide.
 * mock_object_put: store an object given as JSON in the store of
 * `api_version`'s group and `kind` (replacing one of the same namespace
 * and name); aborts when there is no such store or the JSON is bad.
 * mock_object_delete: 0, or -1 when absent. mock_objects_clear: empty
 * every store (the stores stay: plugin instances hold them). */
void mock_object_put(const char *api_version, const char *kind,
                     const char *json);
int mock_object_delete(const char *api_version, const char *kind,
                       const char *ns, const char *name);
void mock_objects_clear(void);

/* --- the cluster's API, timers, a PreBind that waits (SDK ABI 1.4) ------ */

/* The fixture's api_mode, api_request, api_cancel, timer_start,
 * timer_stop and pre_bind_resume (mh->api), for plugins that write to the
 * cluster. Nothing is sent: api_request records the request (refusing, as
 * the host does, in KS_API_NONE mode, for an unknown method or a path not
 * starting with "/") and the test answers it with mock_api_answer, or
 * with mock_api_run_record for KS_API_RECORD's "200 with the request's
 * own body". Timers run on a fake clock, mh->now_ms (the host's now_ms
 * too), moved by mock_clock_advance. pre_bind_resume records its
 * arguments; it answers 0 only for a pod whose PreBind returned
 * KS_PENDING through mock_pre_bind and was not resumed yet, and a call
 * made from inside that pre_bind is recorded with `inside_pre_bind` set
 * (the host forbids it). All main thread. */

typedef struct mock_api_call {
    char method[8];
    char *path, *body, *content_type; /* copies; body/content_type NULL
                                         when the request had none */
    ks_api_done_fn done;
    void *ud;
    int state; /* MOCK_CALL_PENDING, _ANSWERED or _CANCELLED */
} mock_api_call_t;

enum { MOCK_CALL_PENDING = 0, MOCK_CALL_ANSWERED, MOCK_CALL_CANCELLED };

typedef struct mock_timer {
    int64_t due_ms; /* on mh->now_ms */
    ks_timer_fn fn;
    void *ud;
    int live; /* 0 once fired or stopped */
} mock_timer_t;

typedef struct mock_resume {
    const char *pod_uid; /* interned */
    ks_code_t code;
    char reason[1024];
    int rc;              /* what pre_bind_resume returned */
    int inside_pre_bind; /* called from inside pre_bind */
} mock_resume_t;

/* Answer request `i` (index into mh->calls): `done` runs with that status,
 * body (NULL: "") and message (NULL: "" for a 2xx status, else
 * "METHOD PATH: failed"). -1 when it is not pending (answered, cancelled,
 * out of range). */
int mock_api_answer(mock_host_t *mh, uint32_t i, int status, const char *body,
                    const char *message);
/* Answer every pending request 200 with its own body ("{}" when none), as
 * the host does in KS_API_RECORD mode, until none is pending (answers may
 * start more requests); returns how many were answered. */
uint32_t mock_api_run_record(mock_host_t *mh);
/* How many requests are pending. */
uint32_t mock_api_pending(const mock_host_t *mh);
/* Move the clock forward by `ms`, running each live timer that falls due
 * on the way in order of its due time (timers those start run too when
 * they fall due before the end); returns how many ran. */
uint32_t mock_clock_advance(mock_host_t *mh, int64_t ms);
/* How many timers are live. */
uint32_t mock_timers_live(const mock_host_t *mh);
/* Run `p`'s pre_bind as the host's binding cycle does (st reset first;
 * the code stored in the status: mock_status_code); when it returns
 * KS_PENDING the pod waits for pre_bind_resume. */
ks_code_t mock_pre_bind(mock_host_t *mh, const ks_plugin_t *p, void *self,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const char *node_name, ks_status_t *st);
/* 1 while the pod's PreBind waits (returned KS_PENDING, not resumed). */
int mock_pre_bind_waiting(const mock_host_t *mh, const ks_pod_t *pod);

/* --- runners (fresh cycle state per call; code kept in the status) ------ */

/* PreFilter (if the plugin has one; a failure is returned as is), then
 * Filter on `ni` unless PreFilter answered KS_SKIP (then KS_SUCCESS, as the
 * host does). st is reset first. */
ks_code_t mock_prefilter_filter(mock_host_t *mh, const ks_plugin_t *p,
                                void *self, const ks_pod_t *pod,
                                const ks_node_info_t *ni, ks_status_t *st);
/* PreScore (if any) over `nodes`, Score on each, then NormalizeScore (if
 * any); final scores go to out[i]. The snapshot is not changed: set it with
 * mock_host_set_nodes when the plugin reads it. */
/* The state slot `slot` that the plugin instance `self` (made with
 * mock_plugin_create) set in `cs`, or NULL: what the host hands to
 * filter_with_state / score_with_state. */
void *mock_plugin_state(ks_cycle_state_t *cs, const void *self,
                        ks_state_slot_t slot);
/* Set by mock_score_nodes: 1 when the plugin's PreScore returned Skip
 * (its Score ran anyway, as under the host's score_skipped). */
extern int mock_last_prescore_skipped;

ks_code_t mock_score_nodes(mock_host_t *mh, const ks_plugin_t *p, void *self,
                           const ks_pod_t *pod,
                           ks_node_info_t *const *nodes, uint32_t n,
                           int64_t *out, ks_status_t *st);
/* The snapshot's entry of each of nodes[0..n) by node name, in their
 * order, into out[]: the NodeInfos the host hands Filter and Score (their
 * snapshot_pos set; the test's own have 0). 1 when every node has one,
 * 0 when some node has no Node or is not in the snapshot. */
int mock_snapshot_entries(mock_host_t *mh, const ks_node_info_t *const *nodes,
                          uint32_t n, const ks_node_info_t **out);
/* As the host around a bulk call on snapshot entries (nodes from
 * mock_snapshot_entries, at most KS_FW_BULK_MAX): the plugin's
 * bulk_columns (ABI 1.7) answers with the snapshot's columns and the
 * entries' positions until mock_bulk_columns_leave. On the calling
 * thread. */
void mock_bulk_columns_enter(mock_host_t *mh,
                             const ks_node_info_t *const *nodes, uint32_t n);
void mock_bulk_columns_leave(void);

/* --- pods ---------------------------------------------------------------- */

/* Builders return mutable objects: fields may be set directly (priority,
 * node_name via mock_intern, ...); after changing containers or overhead by
 * hand, call mock_pod_update() to recompute the derived fields (requests,
 * non-zero requests, host_ports). A request of 0 means "not set", so the
 * non-zero defaults (100m CPU, 200Mi memory) apply to it. */

/* A pod with one container "app" (image registry.k8s.io/pause:3.7)
 * requesting cpu_milli and mem bytes; uid "ns/name". */
ks_pod_t *mock_pod_new(const char *ns, const char *name, int64_t cpu_milli,
                       int64_t mem);
/* Add a container (init: an init container); returns its index. */
uint32_t mock_pod_add_container(ks_pod_t *pod, int init, const char *image,
                                int64_t cpu_milli, int64_t mem);
/* Set container `ci`'s request of `resource` ("cpu" in millis, "memory",
 * "ephemeral-storage", or an extended name). */
void mock_pod_set_request(ks_pod_t *pod, int init, uint32_t ci,
                          const char *resource, int64_t value);
void mock_pod_add_port(ks_pod_t *pod, uint32_t ci, int32_t container_port,
                       int32_t host_port, ks_protocol_t proto,
                       const char *host_ip);
void mock_pod_add_label(ks_pod_t *pod, const char *key, const char *value);
void mock_pod_add_annotation(ks_pod_t *pod, const char *key,
                             const char *value);
void mock_pod_add_node_selector(ks_pod_t *pod, const char *key,
                                const char *value);
void mock_pod_add_toleration(ks_pod_t *pod, const char *key,
                             ks_toleration_op_t op, const char *value,
                             ks_taint_effect_t effect);
void mock_pod_add_gate(ks_pod_t *pod, const char *gate);
/* (ABI 1.3) A volume of `source` using claim `claim` (NULL: ""). */
void mock_pod_add_volume(ks_pod_t *pod, const char *name,
                         ks_volume_source_t source, const char *claim);
/* (ABI 1.4) A volume (KS_VOLUME_OTHER) with the inline in-tree source
 * `src` (its strings interned, its monitors copied): pod->volume_inline
 * is made on the first one, parallel to the volumes (KS_INLINE_NONE for
 * the others); a pod without one keeps it NULL. */
void mock_pod_add_inline_volume(ks_pod_t *pod, const char *name,
                                const ks_volume_inline_t *src);
void mock_pod_add_spread(ks_pod_t *pod,
                         const ks_topology_spread_constraint_t *c);
void mock_pod_set_node_affinity(ks_pod_t *pod, const ks_node_affinity_t *na);
/* Add a pod (anti-)affinity term; weight 0 adds a required term, otherwise
 * a preferred one. `namespaces_csv` is a comma-separated list ("" = none). */
void mock_pod_add_affinity_term(ks_pod_t *pod, int anti, int32_t weight,
                                const ks_label_selector_t *sel,
                                const char *topology_key,
                                const char *namespaces_csv,
                                const ks_label_selector_t *ns_sel);
void mock_pod_set_node(ks_pod_t *pod, const char *node_name);
void mock_pod_update(ks_pod_t *pod);

/* --- selectors ----------------------------------------------------------- */

/* A requirement; `values_csv` is split on commas ("" = no values). */
ks_requirement_t mock_req(const char *key, ks_selector_op_t op,
                          const char *values_csv);
/* Copies `reqs` into the arena. */
ks_label_selector_t *mock_selector_new(const ks_requirement_t *reqs,
                                       uint32_t n);
ks_node_selector_term_t mock_term(const ks_requirement_t *exprs, uint32_t ne,
                                  const ks_requirement_t *fields, uint32_t nf);
ks_node_selector_t *mock_node_selector_new(const ks_node_selector_term_t *terms,
                                           uint32_t n);
ks_node_affinity_t *mock_node_affinity_new(
    const ks_node_selector_t *required,
    const ks_preferred_scheduling_term_t *preferred, uint32_t n_preferred);
/* A label set from "k1=v1,k2=v2" ("" = empty). */
ks_labels_t mock_labels(const char *csv);

/* --- resources, nodes, NodeInfo ------------------------------------------ */

/* Set `resource` ("cpu" millis, "memory", "ephemeral-storage", "pods" or an
 * extended name) in r. */
void mock_resources_set(ks_resources_t *r, const char *resource, int64_t v);

/* A node with allocatable cpu_milli, mem bytes and `pods` pods. */
ks_node_t *mock_node_new(const char *name, int64_t cpu_milli, int64_t mem,
                         int64_t pods);
void mock_node_add_label(ks_node_t *node, const char *key, const char *value);
void mock_node_add_taint(ks_node_t *node, const char *key, const char *value,
                         ks_taint_effect_t effect);
void mock_node_add_image(ks_node_t *node, const char *name,
                         int64_t size_bytes);

/* An empty NodeInfo for `node`. */
ks_node_info_t *mock_nodeinfo_new(const ks_node_t *node);
/* Account a pod as upstream NodeInfo.AddPod / RemovePod do (pods, affinity
 * lists, requested, non-zero requested, used ports, generation). The
 * NodeInfo keeps the pod pointer. The api.nodeinfo_* functions use these. */
void mock_nodeinfo_add_pod(ks_node_info_t *ni, const ks_pod_t *pod);
void mock_nodeinfo_remove_pod(ks_node_info_t *ni, const ks_pod_t *pod);
/* A copy that shares pods and node but owns its arrays. */
ks_node_info_t *mock_nodeinfo_clone(const ks_node_info_t *ni);

#endif /* KS_TEST_MOCK_HOST_H */
