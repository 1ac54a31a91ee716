/*
 * ksched plugin SDK, ABI v1.7 (backward compatible with v1.0 to v1.6: a
 * plugin built against older headers loads and behaves the same).
 * Members added after 1.0 say "(since ABI 1.x)"; check them
 * with KS_API_HAS / KS_PLUGIN_HAS (below) before use, never with a
 * hand-written offsetof.
 *
 * A plugin is a shared object that exports exactly one symbol, the
 * descriptor, written with KS_PLUGIN_DEFINE. The host dlopen()s the file,
 * checks the descriptor (magic, ABI major/minor, struct size, name, and a
 * function for every extension point the profile enables the plugin at),
 * then calls `create` once per profile that uses the plugin.
 *
 * Build an out-of-tree plugin with:
 *     cc -shared -fPIC $(pkg-config --cflags ksched-plugin) x.c -o x.so
 *
 * Lifetimes: the host owns every object it hands to a plugin. The `self`
 * pointer returned by `create` belongs to the plugin and is released by its
 * `destroy`. A plugin must not keep pointers to pods, nodes or statuses past
 * the call that received them unless the function's comment allows it.
 *
 * Threads: every callback runs on the host's loop thread, except Filter,
 * Score and PreFilter's AddPod/RemovePod, which may run on several worker
 * threads at once for different nodes (as upstream's contract says: Filter
 * and Score must be thread-safe). The cycle state may be read concurrently
 * from those callbacks but written only from the others.
 *
 * The host enforces the host API's thread rules: a function marked "loop
 * thread only" below, called from Filter, Score or AddPod/RemovePod while
 * they run for a scheduling cycle (on a worker, or on the loop thread's own
 * share of the nodes, whatever the parallelism), is never performed. A
 * debug (unoptimised) or sanitizer build of the host aborts with
 * "ksched: fatal: ks_api->NAME called from a Filter/Score worker thread;
 * it may be called only on the loop thread (see plugin.h)"; other builds
 * refuse the call with the value given as "refused:" next to it and log
 * the first refusal of each function (then the 1,000th, 10,000th, ...).
 * Functions marked "thread-safe" may be called from any callback.
 */
#ifndef KSCHED_PLUGIN_H
#define KSCHED_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin ABI version: defined here only (sdk/meson.build reads these
 * two lines for ksched-plugin.pc's abi_major and abi_minor). */
#define KS_ABI_MAJOR 1
#define KS_ABI_MINOR 8
#define KS_PLUGIN_MAGIC 0x4b53504cu /* "KSPL" */

/* The one symbol a plugin exports. */
#define KS_PLUGIN_SYMBOL "ks_plugin_descriptor"

#if defined(__GNUC__) || defined(__clang__)
#define KS_EXPORT __attribute__((visibility("default")))
#else
#define KS_EXPORT
#endif

#ifdef __cplusplus
#define KS_EXTERN_C extern "C"
#else
#define KS_EXTERN_C
#endif

/* --- statuses ------------------------------------------------------------ */

/* Status codes, with upstream's meanings. */
typedef enum ks_code {
    KS_SUCCESS = 0,
    KS_ERROR = 1,
    KS_UNSCHEDULABLE = 2,
    KS_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
    KS_WAIT = 4,
    KS_SKIP = 5,
    KS_PENDING = 6
} ks_code_t;

/*
 * A status under construction, owned by the host. A callback returns its
 * code and, only when it fails, attaches reasons with
 * ks_host_api_t.status_reason. Nothing is allocated on the success path.
 */
typedef struct ks_status ks_status_t;

/* --- opaque host objects ------------------------------------------------- */

typedef struct ks_handle ks_handle_t;           /* one per plugin instance */
typedef struct ks_cycle_state ks_cycle_state_t; /* per scheduling cycle */
typedef struct ks_waiting_pod ks_waiting_pod_t; /* a pod held at Permit */
typedef struct ks_prefilter_result ks_prefilter_result_t;
typedef struct ks_node_status_map ks_node_status_map_t; /* Filter verdicts */

/* --- plugin arguments ---------------------------------------------------- */

typedef enum ks_args_kind {
    KS_ARGS_SCALAR = 0,
    KS_ARGS_MAP,
    KS_ARGS_SEQ
} ks_args_kind_t;

/*
 * A YAML node of `pluginConfig[].args`, as parsed by the host. For a map,
 * `children[i]` is the value of key `keys[i]`. Owned by the host, valid until
 * `create` returns (copy what you keep). `args` is NULL when the profile has
 * no pluginConfig entry for the plugin.
 */
typedef struct ks_args ks_args_t;
struct ks_args {
    ks_args_kind_t kind;
    const char *scalar; /* KS_ARGS_SCALAR: the text; NULL otherwise */
    const char *const *keys; /* KS_ARGS_MAP */
    const ks_args_t *const *children; /* KS_ARGS_MAP and KS_ARGS_SEQ */
    uint32_t n;
    uint32_t line, column; /* 1-based position in the profile file */
};

/* --- scoring ------------------------------------------------------------- */

#define KS_MIN_NODE_SCORE 0
#define KS_MAX_NODE_SCORE 100

typedef struct ks_node_score {
    const char *node_name; /* interned */
    int64_t score;
} ks_node_score_t;

/* --- queue --------------------------------------------------------------- */

typedef struct ks_queued_pod {
    const ks_pod_t *pod;
    int64_t timestamp_ms;         /* when the pod was last added to the queue */
    int64_t initial_attempt_ms;   /* first time it was popped, 0 if never */
    uint32_t attempts;
} ks_queued_pod_t;

/* --- cluster events (EnqueueExtensions) ---------------------------------- */

typedef enum ks_resource_kind {
    KS_RES_POD = 1 << 0,
    KS_RES_NODE = 1 << 1,
    KS_RES_SERVICE = 1 << 2,
    KS_RES_NAMESPACE = 1 << 3,
    /* (since ABI 1.3) An object of a cluster resource that a plugin
     * declares (ks_resource_ref_t) was added, updated (KS_ACT_UPDATE) or
     * deleted, in any declared resource: a hint tells them apart by the
     * objects, `const ks_object_t *` views whose "kind" and "apiVersion"
     * are always set (object_string(o, "kind", &k)). */
    KS_RES_OBJECT = 1 << 4,
    KS_RES_ALL = 0xff
} ks_resource_kind_t;

typedef enum ks_action {
    KS_ACT_ADD = 1 << 0,
    KS_ACT_DELETE = 1 << 1,
    KS_ACT_UPDATE_NODE_ALLOCATABLE = 1 << 2,
    KS_ACT_UPDATE_NODE_LABEL = 1 << 3,
    KS_ACT_UPDATE_NODE_TAINT = 1 << 4,
    KS_ACT_UPDATE_NODE_CONDITION = 1 << 5,
    /* Any update. Since ABI 1.1 every update event the host sends carries
     * this bit next to the specific ones below, so registering it means
     * "any update" (a 1.0 plugin that meant "any other update" is asked
     * more often, never less). */
    KS_ACT_UPDATE = 1 << 6,
    /* (since ABI 1.1) upstream v1.36's other update kinds. ksched's node
     * model has no annotations or conditions: no event carries those two
     * bits yet. */
    KS_ACT_UPDATE_NODE_ANNOTATION = 1 << 7,
    KS_ACT_UPDATE_POD_LABEL = 1 << 8,
    KS_ACT_UPDATE_POD_TOLERATION = 1 << 9,
    KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10,
    KS_ACT_UPDATE_POD_SCALE_DOWN = 1 << 11, /* requests went down */
    /* Every action: add, delete and any update (every update event has
     * KS_ACT_UPDATE). {KS_RES_ALL, KS_ACT_ALL} sent by the host is the
     * wildcard event: it moves every unschedulable pod, hints unasked. */
    KS_ACT_ALL = 0xff
} ks_action_t;

typedef struct ks_cluster_event {
    uint32_t resource; /* ks_resource_kind_t bits */
    uint32_t action;   /* ks_action_t bits */
} ks_cluster_event_t;

/* (since ABI 1.1) QueueingHints (upstream QueueingHintFn, GA in v1.34). */
typedef enum ks_queueing_hint {
    KS_QUEUE_SKIP = 0, /* the event cannot make the pod schedulable */
    KS_QUEUE = 1       /* it may: retry the pod */
} ks_queueing_hint_t;

/*
 * (since ABI 1.1) Asked when an event the plugin registered arrives for a
 * pod this plugin rejected (Unschedulable or Pending) in its last attempt.
 * `old_obj` and `new_obj` are the object before and after the change:
 * for a KS_RES_POD event a `const ks_pod_t *`, for a KS_RES_NODE event a
 * `const ks_node_t *`, for a KS_RES_OBJECT event (since ABI 1.3) a
 * `const ks_object_t *`; old_obj is NULL for an add, new_obj NULL for a
 * delete. Both are valid during the call only. Any value other than
 * KS_QUEUE_SKIP counts as KS_QUEUE (upstream: an error means Queue). The
 * host calls a hint only with objects: an event it has none for (a
 * caller without them, or another resource) queues the pod unasked.
 * Loop thread; must not block.
 */
typedef ks_queueing_hint_t (*ks_queueing_hint_fn)(void *self,
                                                  const ks_pod_t *pod,
                                                  const void *old_obj,
                                                  const void *new_obj);

/* (since ABI 1.1) One registered event and its hint (NULL: always
 * queue, as a 1.0 registration). */
typedef struct ks_cluster_event_hint {
    ks_cluster_event_t event;
    ks_queueing_hint_fn hint;
} ks_cluster_event_hint_t;

/* --- cluster objects (since ABI 1.3) -------------------------------------- */

/*
 * A cluster resource a plugin reads (upstream: a lister of the Handle's
 * SharedInformerFactory), named in the descriptor's `resources`. The host
 * keeps one store per group/version/resource, whichever plugins and
 * profiles declare it, filled from the source in use: in `ksched schedule`
 * the snapshot files' objects whose kind (and apiVersion's group) match;
 * in cluster mode a list/watch of the resource. Custom resources are
 * declared the same way.
 *
 *   group:    "" for the core group, "storage.k8s.io", "example.com"
 *   version:  "v1"
 *   resource: the plural, lower-case name: "persistentvolumeclaims"
 *   kind:     the objects' kind: "PersistentVolumeClaim"
 *
 * All four are required (the host refuses the plugin otherwise); the
 * strings are read when the plugin is loaded.
 */
typedef struct ks_resource_ref {
    const char *group;
    const char *version;
    const char *resource;
    const char *kind;
} ks_resource_ref_t;

/* One resource's objects (opaque, owned by the host; lives as long as the
 * host process). */
typedef struct ks_store ks_store_t;

/*
 * A read-only view of one stored object: the object as the API server
 * serves it (or as the snapshot file wrote it), read by field path with
 * the typed accessors of the host API table (object_string, object_int,
 * ...).
 *
 * Lifetime: a view stays valid until the plugin callback in which it was
 * obtained returns; keep what you need beyond that by copying it (intern
 * strings with ks_host_api_t.intern), as PreFilter does for its Filter.
 * Objects are immutable once stored: an update replaces the whole object
 * and frees the old one, which never happens while a plugin callback
 * runs, so two reads of one view always agree. (Not "for the cycle": a
 * cycle can wait for scheduler extenders between PreFilter and Score, and
 * the stores follow the cluster meanwhile.)
 *
 * Threads: stores change only on the host's loop thread, between plugin
 * callbacks, never while Filter or Score run (the loop thread runs its
 * share of the nodes and waits for the workers), so reading stores and
 * views from any callback, including Filter and Score on several threads
 * at once, is safe.
 */
typedef struct ks_object ks_object_t;

/*
 * Field paths: dotted names from the object's root, with [N] for the N-th
 * item of an array (0-based) and ["key"] for a map key that holds dots or
 * brackets (label keys, annotation keys):
 *     "spec.storageClassName"   "spec.accessModes[0]"
 *     "metadata.labels[\"topology.kubernetes.io/zone\"]"
 * "" is the object itself.
 */

/* What an accessor found. */
typedef enum ks_field_rc {
    KS_FIELD_OK = 0,
    KS_FIELD_MISSING = 1,    /* absent, or JSON null (as upstream's
                                decoders treat null) */
    KS_FIELD_WRONG_TYPE = 2, /* present, but not the asked type (an
                                intermediate segment that is not a map
                                or array counts as missing) */
    KS_FIELD_BAD_PATH = 3    /* the path is malformed */
} ks_field_rc_t;

/* The type of a field (object_type). */
typedef enum ks_field_type {
    KS_FIELD_ABSENT = 0, /* absent or null */
    KS_FIELD_STRING,
    KS_FIELD_INT,
    KS_FIELD_REAL,
    KS_FIELD_BOOL,
    KS_FIELD_ARRAY,
    KS_FIELD_MAP,
    KS_FIELD_INVALID /* the path is malformed */
} ks_field_type_t;

/* object_list's callback: return 0 to go on, anything else to stop. */
typedef int (*ks_object_fn)(const ks_object_t *obj, void *ud);
/* object_map_iterate's callback, for each key of a map in the object's
 * order: `value` is the entry's text when it is a string, NULL otherwise.
 * Both valid during the call. Return 0 to go on, anything else to stop. */
typedef int (*ks_field_kv_fn)(const char *key, const char *value, void *ud);

/* --- the cluster's API: requests, timers, a PreBind that waits
 *     (since ABI 1.4) ------------------------------------------------------ */

/*
 * A request to the cluster's API on the plugin's behalf (upstream: the
 * Handle's ClientSet). The host sends it with its own connection,
 * credentials and clientConnection qps/burst, so RBAC sees the scheduler's
 * user. What happens to it depends on where the host's pods come from
 * (ks_host_api_t.api_mode):
 *
 *   KS_API_CLUSTER  a cluster's API: a real API server (`ksched serve
 *                   --kubeconfig`), sent with the scheduler's client; or
 *                   the embedded API (`ksched serve` without a
 *                   kubeconfig), answered in-process on the loop's next
 *                   turn with the codes and bodies its HTTP API gives,
 *                   applied to the declared resources' stores (pods,
 *                   bindings, nodes and undeclared resources: 404 with a
 *                   Status body).
 *   KS_API_RECORD   `ksched schedule` on snapshot files: nothing is sent;
 *                   the request is recorded (printed under `requests:` by
 *                   `-o yaml|json`) and answered 200 with the request's own
 *                   body (or "{}" when it had none), as if applied.
 *   KS_API_NONE     no cluster to write to (a host without a writer, unit
 *                   tests): api_request refuses (-1).
 *
 *   method:        "GET", "POST", "PUT", "PATCH" or "DELETE"
 *   path:          from the server's root, query included:
 *                  "/api/v1/namespaces/default/persistentvolumeclaims/data-0"
 *                  "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/"
 *                  "podgroups/pg/status"
 *   body:          JSON text (copied before api_request returns), or NULL.
 *                  A DELETE with preconditions carries DeleteOptions:
 *                  {"preconditions":{"uid":"...","resourceVersion":"..."}}
 *   content_type:  NULL for "application/json"; a PATCH names its kind:
 *                  "application/merge-patch+json",
 *                  "application/strategic-merge-patch+json" or
 *                  "application/json-patch+json".
 */
typedef enum ks_api_mode {
    KS_API_NONE = 0,
    KS_API_CLUSTER = 1,
    KS_API_RECORD = 2
} ks_api_mode_t;

typedef struct ks_api_request {
    const char *method;
    const char *path;
    const char *body;
    const char *content_type;
} ks_api_request_t;

/* The answer, valid during the callback only. status: the HTTP status
 * (2xx success), or 0 when no answer came (connection, TLS, credentials:
 * message says why). body: the response's text, NUL-terminated ("" when
 * none). message: "" on success, else one line naming the request and the
 * API server's reason, e.g. "PATCH /api/v1/namespaces/default/
 * persistentvolumeclaims/x: persistentvolumeclaims \"x\" not found". */
typedef struct ks_api_response {
    int status;
    const char *body;
    size_t body_len;
    const char *message;
} ks_api_response_t;

typedef struct ks_api_call ks_api_call_t; /* a request in flight */
typedef void (*ks_api_done_fn)(void *ud, const ks_api_response_t *r);

typedef struct ks_timer ks_timer_t; /* a one-shot timer */
typedef void (*ks_timer_fn)(void *ud);

/* --- logging, events ----------------------------------------------------- */

typedef enum ks_log_level {
    KS_LOG_ERROR = 0,
    KS_LOG_WARN,
    KS_LOG_INFO,
    KS_LOG_DEBUG
} ks_log_level_t;

/* (since ABI 1.1) A preemption candidate handed to extenders: the node
 * and the pods to evict there, most important first (upstream
 * extenderv1.Victims). n_pdb_violations is upstream's NumPDBViolations:
 * how many of the victims would violate a PodDisruptionBudget, as the
 * plugin counted them (the in-tree DefaultPreemption applies upstream
 * v1.36's rules to the policy/v1 budgets it declares); from
 * extenders_preempt_result, the count the last extender answered. */
typedef struct ks_preempt_candidate {
    const char *node; /* interned */
    const ks_pod_t *const *victims;
    uint32_t n_victims;
    int64_t n_pdb_violations;
} ks_preempt_candidate_t;

typedef void (*ks_state_free_fn)(void *data);
typedef void *(*ks_state_clone_fn)(const void *data);
typedef void (*ks_waiting_pod_fn)(ks_waiting_pod_t *wp, void *ud);

/* (since ABI 1.1) The two per-plugin state slots of a cycle state: the one
 * handed to filter_with_state (and read by the PreFilter extensions), set
 * at PreFilter, and the one handed to score_with_state, set at PreScore. */
typedef enum ks_state_slot {
    KS_STATE_FILTER = 0,
    KS_STATE_SCORE = 1
} ks_state_slot_t;

/*
 * The host API table, handed to `create`. Valid until `destroy` returns.
 * New functions are only ever appended; check one added after v1.0 (marked
 * "since ABI 1.x") with KS_API_HAS(api, member) before calling it.
 */
typedef struct ks_host_api {
    uint32_t abi_major;
    uint32_t abi_minor;
    size_t size; /* sizeof(ks_host_api_t) in the host */

    /* Attach a reason to a failing status. The text is copied. Thread-safe
     * for distinct statuses. */
    void (*status_reason)(ks_status_t *st, const char *reason);
    void (*status_reasonf)(ks_status_t *st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

    /* Log a line prefixed with the plugin's name. Thread-safe. */
    void (*log)(ks_handle_t *h, ks_log_level_t level, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

    /* Return the interned copy of `s` (see types.h); lives as long as the
     * host. Thread-safe. */
    const char *(*intern)(ks_handle_t *h, const char *s);

    /* Cycle state. `key` (a NUL-terminated string of any length) is
     * copied; keys are compared by their whole text, so two keys match
     * exactly when strcmp says they are equal (a buffer reused for another
     * key finds that key's entry). write() takes ownership of `data`: it is
     * released with `free_fn` (may be NULL) when overwritten, deleted or when
     * the state is freed, and copied with `clone_fn` (NULL: shared pointer,
     * never freed by the clone) when the host clones the state (preemption).
     * write() returns 0 when stored; -1 when the host is out of memory or
     * the call was refused: the state is unchanged and `data` stays the
     * caller's.
     * read() returns NULL when absent. read() is thread-safe; write() and
     * delete() must not race with anything on the same state, and are
     * loop thread only (refused: write returns -1 and leaves `data` the
     * caller's, delete does nothing). For state only the plugin's own
     * Filter or Score reads, plugin_state_set (since ABI 1.1) skips the
     * lookup in the hot path. */
    int (*cycle_state_write)(ks_cycle_state_t *cs, const char *key, void *data,
                             ks_state_clone_fn clone_fn,
                             ks_state_free_fn free_fn);
    void *(*cycle_state_read)(const ks_cycle_state_t *cs, const char *key);
    void (*cycle_state_delete)(ks_cycle_state_t *cs, const char *key);

    /* PreFilter: restrict the nodes Filter will see. Calling it once with any
     * name makes the result a set (an empty set is allowed by leaving it with
     * no names after ks_prefilter_result_set_none). */
    void (*prefilter_result_add_node)(ks_prefilter_result_t *r,
                                      const char *node_name);
    void (*prefilter_result_set_none)(ks_prefilter_result_t *r);

    /* Snapshot of the current cycle. Loop thread or inside Filter/Score.
     * snapshot_num_nodes: the number of nodes (0 outside a cycle);
     * snapshot_node_at: NULL when i >= that; snapshot_get: NULL when no
     * node has that name; image_num_nodes: how many nodes have the image
     * (upstream's ImageStateSummary.NumNodes), 0 when none. */
    uint32_t (*snapshot_num_nodes)(ks_handle_t *h);
    const ks_node_info_t *(*snapshot_node_at)(ks_handle_t *h, uint32_t i);
    const ks_node_info_t *(*snapshot_get)(ks_handle_t *h, const char *name);
    uint32_t (*image_num_nodes)(ks_handle_t *h, const char *image_name);
    /* Labels of a namespace (empty when it is not in the cluster). */
    ks_labels_t (*namespace_labels)(ks_handle_t *h, const char *ns);
    /* Selectors of the Services (and ReplicaSets/StatefulSets) in the pod's
     * namespace whose selector matches the pod; upstream's DefaultSelector.
     * Writes at most `cap` pointers, returns how many exist. */
    uint32_t (*owner_selectors)(ks_handle_t *h, const ks_pod_t *pod,
                                const ks_label_selector_t **out, uint32_t cap);

    /* Filter verdicts handed to PostFilter: the code Filter gave the node,
     * KS_SUCCESS when it passed or is not in the map. */
    ks_code_t (*node_status_code)(const ks_node_status_map_t *m,
                                  const char *node_name);

    /* Waiting pods (Permit). Loop thread only (refused: get and pod
     * return NULL, the others do nothing). A returned ks_waiting_pod_t
     * is valid until the loop thread returns to the host.
     * allow() and reject() act as the plugin `plugin_name`; since ABI 1.1
     * they do nothing (and log why) unless that name is one of the Permit
     * plugins of the waiting pod's profile, so a misspelt name cannot go
     * unnoticed nor speak for another plugin. Use waiting_pod_allow_as and
     * waiting_pod_reject_as (since ABI 1.1), which act as the caller's own
     * handle, when the host has them. */
    ks_waiting_pod_t *(*waiting_pod_get)(ks_handle_t *h, const char *uid);
    const ks_pod_t *(*waiting_pod_pod)(ks_waiting_pod_t *wp);
    void (*waiting_pod_allow)(ks_waiting_pod_t *wp, const char *plugin_name);
    void (*waiting_pod_reject)(ks_waiting_pod_t *wp, const char *plugin_name,
                               const char *message);
    void (*waiting_pods_iterate)(ks_handle_t *h, ks_waiting_pod_fn fn,
                                 void *ud);

    /* Binding and cluster mutation. Loop thread only (refused: -1; event
     * does nothing).
     * bind(): 0 when the pod was bound (or handed to the cluster writer,
     * which reports the outcome as any binding); -1 when `pod` is not the
     * pod of the binding cycle running now, is already being bound, the
     * writer refused it, or (with no writer) `node_name` is not a node.
     * delete_pod(): 0 when the pod is gone, or is marked so that its cycle
     * drops it, or (waiting at Permit) was rejected; -1 when no pod of that
     * uid is known or the cache could not remove it.
     * set_nominated_node(): 0 when recorded (node_name NULL or "" clears
     * the nomination); -1 when out of memory (nothing changed). */
    int (*bind)(ks_handle_t *h, const ks_pod_t *pod, const char *node_name);
    int (*delete_pod)(ks_handle_t *h, const ks_pod_t *pod);
    int (*set_nominated_node)(ks_handle_t *h, const ks_pod_t *pod,
                              const char *node_name);
    void (*event)(ks_handle_t *h, const ks_pod_t *pod, const char *type,
                  const char *reason, const char *message);

    /* Framework access for PostFilter plugins (preemption). Loop thread
     * only, up to status_new (refused: the clones return NULL, free,
     * add_pod and remove_pod do nothing, the run_* calls return KS_ERROR
     * with the rule as the reason in `st`).
     * nodeinfo_clone() returns a private copy the caller frees with
     * nodeinfo_free(); add/remove change only that copy. */
    ks_node_info_t *(*nodeinfo_clone)(ks_handle_t *h, const ks_node_info_t *ni);
    void (*nodeinfo_free)(ks_handle_t *h, ks_node_info_t *ni);
    void (*nodeinfo_add_pod)(ks_handle_t *h, ks_node_info_t *ni,
                             const ks_pod_t *pod);
    void (*nodeinfo_remove_pod)(ks_handle_t *h, ks_node_info_t *ni,
                                const ks_pod_t *pod);
    ks_cycle_state_t *(*cycle_state_clone)(ks_handle_t *h,
                                           const ks_cycle_state_t *cs);
    void (*cycle_state_free)(ks_handle_t *h, ks_cycle_state_t *cs);
    /* Runs the profile's Filter plugins (with nominated pods, as upstream's
     * RunFilterPluginsWithNominatedPods); reasons go to `st`. */
    ks_code_t (*run_filters)(ks_handle_t *h, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_node_info_t *ni,
                             ks_status_t *st);
    ks_code_t (*run_prefilter_add_pod)(ks_handle_t *h, ks_cycle_state_t *cs,
                                       const ks_pod_t *pod,
                                       const ks_pod_t *to_add,
                                       const ks_node_info_t *ni,
                                       ks_status_t *st);
    ks_code_t (*run_prefilter_remove_pod)(ks_handle_t *h, ks_cycle_state_t *cs,
                                          const ks_pod_t *pod,
                                          const ks_pod_t *to_remove,
                                          const ks_node_info_t *ni,
                                          ks_status_t *st);
    /* A scratch status for run_* calls; free with status_free.
     * Thread-safe (status_new, status_free, status_message). */
    ks_status_t *(*status_new)(ks_handle_t *h);
    void (*status_free)(ks_status_t *st);
    /* Every reason of a status joined with ", " (upstream's
     * Status.Message()), "" when none. Valid as long as the host (the
     * joined text is interned). Before ABI 1.1 the host returned the first
     * reason only. */
    const char *(*status_message)(const ks_status_t *st);
    /* Pods nominated to a node (by earlier preemptions): writes at most
     * `cap` to `out` and returns how many there are (0 when none). Loop
     * thread only (refused: 0). */
    uint32_t (*nominated_pods)(ks_handle_t *h, const char *node_name,
                               const ks_pod_t **out, uint32_t cap);
    /* Monotonic time in milliseconds (the host's clock, injectable in
     * tests). */
    int64_t (*now_ms)(ks_handle_t *h);
    /* A pseudo-random integer in [0, n) (n > 0). Returns 0 when the host
     * runs deterministically (tests, conformance). Thread-safe (on the
     * Filter/Score workers each thread draws from its own generator). */
    uint32_t (*rand_below)(ks_handle_t *h, uint32_t n);
    /* Every reason of a status: count, and the i-th (NULL when out of
     * range). Valid while the status is. */
    uint32_t (*status_reason_count)(const ks_status_t *st);
    const char *(*status_reason_at)(const ks_status_t *st, uint32_t i);
    /* (since ABI 1.1) The snapshot as arrays, for plugins that walk nodes
     * in PreFilter or PreScore: every node (the order of snapshot_node_at), the nodes that
     * run a pod with pod (anti-)affinity, and those that run a pod with
     * required anti-affinity (upstream's HavePodsWith...List). Valid for
     * the current cycle; *n receives the length. */
    const ks_node_info_t *const *(*snapshot_nodes)(ks_handle_t *h,
                                                   uint32_t *n);
    const ks_node_info_t *const *(*snapshot_nodes_with_affinity)(
        ks_handle_t *h, uint32_t *n);
    const ks_node_info_t *const *(*snapshot_nodes_with_required_anti_affinity)(
        ks_handle_t *h, uint32_t *n);

    /* (since ABI 1.1) Scheduler extenders with a preemptVerb, for a
     * PostFilter plugin that found preemption candidates (upstream
     * Evaluator.callExtenders). The calls are asynchronous, so this takes
     * two PostFilter calls. Loop thread only.
     * extenders_preempt: hand the candidates over (copied). KS_SKIP: no
     * such extender is interested in the pod, go on with them. KS_PENDING:
     * the host asks the extenders; return KS_PENDING from PostFilter, and
     * the host calls PostFilter again for the same pod, cycle state and
     * snapshot once they answered. KS_ERROR: out of memory (st says so).
     * extenders_preempt_result: in that second call, KS_SUCCESS with the
     * candidates the extenders kept in *out, *n of them (maybe none;
     * host-owned, valid until PostFilter returns); KS_ERROR with the
     * reason in st when an extender that is not ignorable failed; KS_SKIP
     * when nothing was asked (a first call). Refused (see Threads above):
     * KS_ERROR with the rule as the reason in `st`. */
    ks_code_t (*extenders_preempt)(ks_handle_t *h, const ks_pod_t *pod,
                                   const ks_preempt_candidate_t *cands,
                                   uint32_t n, ks_status_t *st);
    ks_code_t (*extenders_preempt_result)(ks_handle_t *h, const ks_pod_t *pod,
                                          const ks_preempt_candidate_t **out,
                                          uint32_t *n, ks_status_t *st);

    /* (since ABI 1.1) Waiting pods, acting as the caller (`h`, its own
     * handle) rather than as a name. allow_as: the plugin's Permit wait
     * ends (nothing happens when the plugin is not one the pod waits
     * for); once every waiting plugin allowed, the pod binds. reject_as:
     * the pod's wait ends rejected by this plugin with `message`
     * (copied), whatever the plugin's extension points (preemption
     * rejects its victims so). Loop thread only (refused: nothing done). */
    void (*waiting_pod_allow_as)(ks_handle_t *h, ks_waiting_pod_t *wp);
    void (*waiting_pod_reject_as)(ks_handle_t *h, ks_waiting_pod_t *wp,
                                  const char *message);

    /* (since ABI 1.1) The plugin's private state of this cycle, without a
     * key lookup: set at PreFilter (slot KS_STATE_FILTER) or PreScore
     * (KS_STATE_SCORE), the host passes it to filter_with_state or
     * score_with_state as `state`. Ownership, clone_fn and free_fn are
     * those of cycle_state_write; setting a slot again releases the data
     * it held. plugin_state_set returns 0 when stored, -1 when out of
     * memory, when `slot` is not a ks_state_slot_t, or refused (loop
     * thread only): the state unchanged and `data` the caller's.
     * plugin_state_get returns what the plugin (h) set in `cs`, NULL when
     * nothing; thread-safe (the PreFilter extensions read their state
     * with it, from the copy of a cloned state too). */
    int (*plugin_state_set)(ks_handle_t *h, ks_cycle_state_t *cs,
                            ks_state_slot_t slot, void *data,
                            ks_state_clone_fn clone_fn,
                            ks_state_free_fn free_fn);
    void *(*plugin_state_get)(ks_handle_t *h, const ks_cycle_state_t *cs,
                              ks_state_slot_t slot);

    /* (since ABI 1.1) The Permit plugins a waiting pod still waits for
     * (upstream WaitingPod.GetPendingPlugins): those that returned
     * KS_WAIT and have not allowed it yet, in the profile's Permit order.
     * Writes at most `cap` names to `out` (the host's, valid while `wp`
     * is) and returns how many there are: 0 when none is left (the pod
     * was allowed or rejected), or when refused (loop thread only). */
    uint32_t (*waiting_pod_pending_plugins)(ks_waiting_pod_t *wp,
                                            const char **out, uint32_t cap);

    /* (since ABI 1.2) What changed in the snapshot, for plugins that keep
     * per-node aggregates across cycles (as PodTopologySpread's counts):
     * returns the snapshot's version, which grows whenever the host
     * refreshes, adds or drops a NodeInfo. When `since` is that version,
     * nothing changed: *n = 0 and *idx is not NULL. When `since` is an
     * earlier version after which every change only refreshed NodeInfos
     * in place (the version before the last change, or an older one the
     * host still remembers), *idx lists their positions in
     * snapshot_nodes (*n of them, valid for the cycle; a position may
     * repeat). Otherwise *idx is NULL: walk every node. Loop thread only
     * (refused: returns 0 with *idx NULL). */
    uint64_t (*snapshot_changes)(ks_handle_t *h, uint64_t since,
                                 const uint32_t **idx, uint32_t *n);

    /* (since ABI 1.3) Cluster objects (see ks_resource_ref_t, ks_object_t
     * above for lifetimes and threads). All thread-safe.
     *
     * store_get: the store of a resource the plugin declared in its
     * descriptor's `resources` (group "" for core), NULL when it did not
     * declare it. Stable for the plugin's life: look it up once in
     * create. store_count: how many objects it holds now.
     *
     * object_get: the object `name` in namespace `ns` (NULL or "" for a
     * cluster-scoped resource), NULL when the store has none.
     *
     * object_list: calls fn for each object in namespace `ns` (NULL: every
     * namespace, and every object of a cluster-scoped resource) whose
     * metadata.labels match `sel` (NULL: every object; ks_label_selector_t
     * as in types.h, values compared by content), in no particular order,
     * until fn returns non-zero. Returns how many objects fn was called
     * for. The store does not change during the walk. */
    const ks_store_t *(*store_get)(ks_handle_t *h, const char *group,
                                   const char *version,
                                   const char *resource);
    uint32_t (*store_count)(const ks_store_t *s);
    const ks_object_t *(*object_get)(const ks_store_t *s, const char *ns,
                                     const char *name);
    uint32_t (*object_list)(const ks_store_t *s, const char *ns,
                            const ks_label_selector_t *sel, ks_object_fn fn,
                            void *ud);

    /* (since ABI 1.3) An object's metadata: name, namespace ("" for a
     * cluster-scoped object) and uid ("" when none), valid as the view;
     * labels (metadata.labels, interned as types.h says: compare keys and
     * values by address with interned strings). */
    const char *(*object_name)(const ks_object_t *o);
    const char *(*object_namespace)(const ks_object_t *o);
    const char *(*object_uid)(const ks_object_t *o);
    ks_labels_t (*object_labels)(const ks_object_t *o);

    /* (since ABI 1.3) Typed reads by field path (see "Field paths"). Each
     * returns KS_FIELD_OK and writes *out, or another ks_field_rc_t and
     * leaves *out alone. object_string: *out valid as the view;
     * object_int: a JSON integer (a real is KS_FIELD_WRONG_TYPE);
     * object_bool: *out 0 or 1; object_len: the number of items of an
     * array or entries of a map. */
    ks_field_rc_t (*object_string)(const ks_object_t *o, const char *path,
                                   const char **out);
    ks_field_rc_t (*object_int)(const ks_object_t *o, const char *path,
                                int64_t *out);
    ks_field_rc_t (*object_bool)(const ks_object_t *o, const char *path,
                                 int *out);
    ks_field_rc_t (*object_len)(const ks_object_t *o, const char *path,
                                uint32_t *out);
    /* The field's type: KS_FIELD_ABSENT when absent or null (an
     * "exists" test is != KS_FIELD_ABSENT), KS_FIELD_INVALID for a
     * malformed path. */
    ks_field_type_t (*object_type)(const ks_object_t *o, const char *path);
    /* Calls fn for each entry of the map at `path` ("metadata.labels",
     * "spec.parameters", ...) until it returns non-zero; KS_FIELD_OK,
     * or why not (KS_FIELD_WRONG_TYPE when it is not a map). */
    ks_field_rc_t (*object_map_iterate)(const ks_object_t *o,
                                        const char *path, ks_field_kv_fn fn,
                                        void *ud);

    /* (since ABI 1.4) The cluster's API (see ks_api_request_t above).
     * Loop thread only (refused: -1, NULL, KS_API_NONE).
     *
     * api_mode: where requests go (stable once scheduling has started;
     * in `create` it reads KS_API_NONE, as the host connects its writer
     * after building the profiles: ask when you write).
     *
     * api_request: starts the request and returns 0; `done` then runs
     * exactly once, on the loop thread, never from inside api_request (in
     * KS_API_RECORD mode too: on the loop's next turn). Returns -1 and
     * never calls `done` when the request cannot start: KS_API_NONE, a
     * method not in the list, a path not starting with "/", out of memory.
     * *call (call may be NULL) identifies it until `done` runs.
     *
     * api_cancel: `done` will not run (the request may still reach the
     * server). Only for a call whose `done` has not run yet.
     *
     * The host cancels every request and timer of a plugin instance before
     * it destroys that instance (hot swap, shutdown): their callbacks never
     * run into a destroyed `self`. */
    ks_api_mode_t (*api_mode)(ks_handle_t *h);
    int (*api_request)(ks_handle_t *h, const ks_api_request_t *req,
                       ks_api_done_fn done, void *ud, ks_api_call_t **call);
    void (*api_cancel)(ks_handle_t *h, ks_api_call_t *call);

    /* (since ABI 1.4) One-shot timers on the host's loop, e.g. to poll the
     * stores while a PreBind waits (upstream's wait.Poll). timer_start:
     * `fn(ud)` runs once on the loop thread after `ms` milliseconds; NULL
     * when it cannot start (no loop: a test host; out of memory).
     * timer_stop: `fn` will not run; only before it has run. The handle is
     * the host's and is gone once fn has run or the timer is stopped.
     * Loop thread only (refused: NULL / nothing). */
    ks_timer_t *(*timer_start)(ks_handle_t *h, uint64_t ms, ks_timer_fn fn,
                               void *ud);
    void (*timer_stop)(ks_handle_t *h, ks_timer_t *t);

    /* (since ABI 1.4) A PreBind that waits for the cluster. PreBind may
     * return KS_PENDING (only when the host has this member): the binding
     * cycle of that pod stops there, holding its reservation, while every
     * other pod goes on being scheduled and bound. The plugin ends the wait
     * by calling pre_bind_resume with the pod's uid and KS_SUCCESS (the
     * next PreBind plugin, then Bind, run) or a failure code with a reason
     * (the pod is unreserved and requeued with that reason, as upstream
     * for a PreBind error), from any later loop-thread callback (an API
     * answer, a timer, another plugin call) -- not from inside the
     * pre_bind call that returned KS_PENDING. Returns 0, or -1 when no
     * PreBind of this plugin waits for that pod (it was deleted meanwhile:
     * the host then ran Unreserve and dropped it; a second resume).
     * `reason` is copied; NULL is "". Loop thread only (refused: -1).
     * A host without this member reads KS_PENDING from PreBind as an
     * error. */
    int (*pre_bind_resume)(ks_handle_t *h, const char *pod_uid,
                           ks_code_t code, const char *reason);

    /* (since ABI 1.5) A number that changes whenever the store's objects
     * change (an add, an update, a delete, a re-list), so that a plugin
     * that derives state from a whole store can tell in one call that
     * nothing changed since it last looked. Thread-safe. */
    uint64_t (*store_version)(const ks_store_t *s);

    /* (since ABI 1.7) Inside filter_nodes or score_nodes: the columns of
     * the cycle's snapshot (ks_node_columns_t in types.h), with *pos set
     * to the snapshot position of each of nodes[0..n), so that nodes[i]'s
     * figures are column[pos[i]]. `nodes` must be the very array the host
     * passed to the call running on this thread; for any other array, or
     * outside such a call, or when the host has no columns this cycle
     * (out of memory), it returns NULL with *pos NULL: read the NodeInfos
     * then. Both are valid until the call returns. Thread-safe (each
     * worker asks about its own call). */
    const ks_node_columns_t *(*bulk_columns)(
        ks_handle_t *h, const ks_node_info_t *const *nodes,
        const uint32_t **pos);

    /* (since ABI 1.8) upstream's Handle.Parallelizer().Until, for a
     * PreFilter or PreScore that walks every node: calls
     * fn(ud, begin, end, worker) over [0, n) and returns once all of
     * [0, n) has been run, each index exactly once. The profile's workers
     * (its `parallelism`) may take a share, the calling thread takes part:
     * chunks of `chunk` indices (0: the host picks), or, when the host
     * finds that sharing this call site's work does not pay (it times it,
     * as it does its own Filter and Score), one call fn(ud, 0, n, 0) on
     * the calling thread. `worker` is in [0, parallelize_workers(h)):
     * give each worker its own partial results and merge them after the
     * call, as upstream's PreFilter merges its per-node counts. fn may run
     * on several threads at once: it may read what its caller could read
     * and write only its worker's data; the host API's loop-thread-only
     * functions are refused inside it (as inside Filter). Call it from a
     * call made on the loop thread (PreFilter, PreScore, PostFilter...);
     * called from inside a Filter, a Score or another fn, it runs the
     * whole range there in one call, with the `worker` of the thread
     * running it (so per-worker data stays the worker's own). */
    void (*parallelize)(ks_handle_t *h, uint32_t n, uint32_t chunk,
                        void (*fn)(void *ud, uint32_t begin, uint32_t end,
                                   unsigned worker),
                        void *ud);
    /* (since ABI 1.8) How many distinct `worker` values parallelize may
     * pass, the calling thread included: 1 when the profile's parallelism
     * is 1. Thread-safe. */
    unsigned (*parallelize_workers)(ks_handle_t *h);
} ks_host_api_t;

/* --- pod signatures (since ABI 1.1) -------------------------------------- */

/* Where a plugin's `sign` writes: bytes appended to the pod's signature.
 * Interned strings (names, label keys and values, images) are compared by
 * address, so ks_sign_ptr signs them. Host-owned; loop thread. */
typedef struct ks_signer {
    void (*put)(struct ks_signer *sg, const void *data, size_t n);
} ks_signer_t;

static inline void ks_sign_bytes(ks_signer_t *sg, const void *data, size_t n)
{
    sg->put(sg, data, n);
}
static inline void ks_sign_i64(ks_signer_t *sg, int64_t v)
{
    sg->put(sg, &v, sizeof v);
}
static inline void ks_sign_ptr(ks_signer_t *sg, const void *p)
{
    sg->put(sg, &p, sizeof p);
}
/* A resource list, field by field (no padding or unused slots). */
static inline void ks_sign_resources(ks_signer_t *sg, const ks_resources_t *r)
{
    uint32_t i;
    ks_sign_i64(sg, r->milli_cpu);
    ks_sign_i64(sg, r->memory);
    ks_sign_i64(sg, r->ephemeral_storage);
    ks_sign_i64(sg, r->allowed_pods);
    ks_sign_i64(sg, r->n_scalar);
    for (i = 0; i < r->n_scalar && i < KS_MAX_SCALAR_RESOURCES; i++) {
        ks_sign_ptr(sg, r->scalar[i].name);
        ks_sign_i64(sg, r->scalar[i].value);
    }
}
/* Tolerations in order (key, operator, value, effect). */
static inline void ks_sign_tolerations(ks_signer_t *sg, const ks_pod_t *pod)
{
    uint32_t i;
    ks_sign_i64(sg, pod->n_tolerations);
    for (i = 0; i < pod->n_tolerations; i++) {
        ks_sign_ptr(sg, pod->tolerations[i].key);
        ks_sign_i64(sg, pod->tolerations[i].op);
        ks_sign_ptr(sg, pod->tolerations[i].value);
        ks_sign_i64(sg, pod->tolerations[i].effect);
    }
}

/* --- the descriptor ------------------------------------------------------ */

/*
 * Every function pointer may be NULL; NULL means "not implemented". The host
 * refuses a profile that enables a plugin at an extension point whose
 * function is NULL. `self` is what `create` returned.
 */
typedef struct ks_plugin {
    uint32_t magic;     /* KS_PLUGIN_MAGIC */
    uint16_t abi_major; /* KS_ABI_MAJOR */
    uint16_t abi_minor; /* KS_PLUGIN_MIN_ABI_MINOR (default KS_ABI_MINOR) */
    uint32_t size;      /* sizeof(ks_plugin_t) when built */
    const char *name;   /* unique plugin name, e.g. "NodeResourcesFit" */
    const char *version;

    /* Create an instance with the profile's args (NULL when none). Return 0
     * and set *self, or non-zero with a message in err (NUL-terminated,
     * at most errlen bytes). Loop thread. */
    int (*create)(const ks_host_api_t *api, ks_handle_t *h,
                  const ks_args_t *args, void **self, char *err,
                  size_t errlen);
    void (*destroy)(void *self);

    /* PreEnqueue: SUCCESS lets the pod into activeQ. */
    ks_code_t (*pre_enqueue)(void *self, const ks_pod_t *pod, ks_status_t *st);

    /* QueueSort: non-zero when a sorts before b, 0 otherwise. */
    int (*less)(void *self, const ks_queued_pod_t *a, const ks_queued_pod_t *b);

    ks_code_t (*pre_filter)(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, ks_prefilter_result_t *result,
                            ks_status_t *st);
    /* PreFilterExtensions; may run on worker threads. */
    ks_code_t (*pre_filter_add_pod)(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_pod_t *to_add,
                                    const ks_node_info_t *ni, ks_status_t *st);
    ks_code_t (*pre_filter_remove_pod)(void *self, ks_cycle_state_t *cs,
                                       const ks_pod_t *pod,
                                       const ks_pod_t *to_remove,
                                       const ks_node_info_t *ni,
                                       ks_status_t *st);

    /* Filter: thread-safe. A plugin with filter_with_state (since ABI 1.1)
     * may leave it NULL. */
    ks_code_t (*filter)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_node_info_t *ni, ks_status_t *st);

    /* PostFilter: on SUCCESS, write the nominated node name (interned) to
     * *nominated_node (may stay NULL). */
    ks_code_t (*post_filter)(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod,
                             const ks_node_status_map_t *statuses,
                             const char **nominated_node, ks_status_t *st);

    ks_code_t (*pre_score)(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           ks_status_t *st);
    /* Score: thread-safe. Write a score in [0, 100] to *score. A plugin
     * with score_with_state (since ABI 1.1) may leave it NULL. */
    ks_code_t (*score)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                       const ks_node_info_t *ni, int64_t *score,
                       ks_status_t *st);
    ks_code_t (*normalize_score)(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, ks_node_score_t *scores,
                                 uint32_t n, ks_status_t *st);

    ks_code_t (*reserve)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const char *node_name, ks_status_t *st);
    void (*unreserve)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const char *node_name);

    /* Permit: KS_WAIT with *timeout_ms set holds the pod until a plugin
     * allows or rejects it through the waiting-pods API. */
    ks_code_t (*permit)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const char *node_name, uint64_t *timeout_ms,
                        ks_status_t *st);

    /* PreBind: KS_PENDING (since ABI 1.4, with the host's
     * pre_bind_resume) waits for the cluster without holding up other
     * pods; see ks_host_api_t.pre_bind_resume. */
    ks_code_t (*pre_bind)(void *self, ks_cycle_state_t *cs,
                          const ks_pod_t *pod, const char *node_name,
                          ks_status_t *st);
    /* Bind: KS_SKIP passes the pod to the next Bind plugin. */
    ks_code_t (*bind)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const char *node_name, ks_status_t *st);
    void (*post_bind)(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const char *node_name);

    /* EnqueueExtensions: write up to `cap` events that may make a pod this
     * plugin rejected schedulable; return how many there are. NULL: every
     * event. */
    uint32_t (*events_to_register)(void *self, ks_cluster_event_t *out,
                                   uint32_t cap);

    /* (since ABI 1.1) EnqueueExtensions with QueueingHints: as
     * events_to_register, each event with an optional hint. When set, the
     * host asks this instead of events_to_register (fill both to serve
     * 1.0 hosts too). Called once after create, on the loop thread. */
    uint32_t (*events_to_register_v2)(void *self,
                                      ks_cluster_event_hint_t *out,
                                      uint32_t cap);

    /* (since ABI 1.1) Filter and Score with the plugin's private state:
     * `state` is what the plugin set with plugin_state_set in this cycle
     * (KS_STATE_FILTER for Filter, KS_STATE_SCORE for Score), NULL when
     * nothing. When set, the host calls these instead of filter and score
     * (and accepts a plugin enabled at Filter or Score with only these);
     * fill filter/score too to serve 1.0 hosts. Thread-safe, as filter
     * and score. */
    ks_code_t (*filter_with_state)(void *self, ks_cycle_state_t *cs,
                                   void *state, const ks_pod_t *pod,
                                   const ks_node_info_t *ni, ks_status_t *st);
    ks_code_t (*score_with_state)(void *self, ks_cycle_state_t *cs,
                                  void *state, const ks_pod_t *pod,
                                  const ks_node_info_t *ni, int64_t *score,
                                  ks_status_t *st);

    /* (since ABI 1.1) Opportunistic batching (upstream SignPlugin,
     * v1.35): put into `sg` every field of `pod` that this plugin's
     * PreFilter, Filter, PreScore and Score read (ks_sign_* below), and
     * return KS_SUCCESS; two pods with equal signatures must then get the
     * same Filter verdict and the same Score on any node. Return
     * KS_UNSCHEDULABLE when the pod cannot be signed: when the plugin's
     * verdict or score for a node depends on more than the pod and that
     * node's NodeInfo (other nodes' pods, as topology spreading and
     * inter-pod affinity do). A plugin at those points without `sign`
     * turns batching off for the pods of its profile. Loop thread. */
    ks_code_t (*sign)(void *self, const ks_pod_t *pod,
                      struct ks_signer *sg);

    /* (since ABI 1.2) Filter over many nodes in one call, for speed: the
     * same verdicts as filter_with_state (or filter) on each of nodes[0..n)
     * with the same `state`, without the per-call cost. A node whose
     * pass[i] is already 0 was rejected by an earlier plugin: skip it.
     * Clear pass[i] for every other node whose Filter would reject it
     * (KS_UNSCHEDULABLE, _AND_UNRESOLVABLE or KS_PENDING), set it to 2
     * where it would return anything else (an Error), and leave the rest
     * alone; return KS_SUCCESS. Reasons are not wanted here:
     * the host calls the per-node Filter for a node set to 2 at once, and
     * for a cleared node when its status is needed (a FitError, --explain),
     * to get its code and reasons, so both must agree (`--bulk verify`
     * checks that they do). `scratch` is a status the
     * plugin may write reasons into (the host discards them), so a loop
     * over the per-node function needs no second version of it
     * (KS_FILTER_NODES_FROM in helpers.h writes that loop). Any other
     * return: the host runs the per-node Filter on every node instead.
     * Requires filter_with_state or filter. Thread-safe, as filter; the
     * host calls it on runs of nodes (up to 64 at a time today) from
     * several workers at once. The order of the calls is not the Filter
     * list's: the host may run the plugin that has lately rejected the
     * largest share of the nodes it saw before the others, on nodes a
     * plugin ahead of it in the list would reject (the statuses it
     * reports stay the list order's). So a verdict must depend only on
     * the pod, the node and the cycle state, never on which plugins ran
     * before. */
    ks_code_t (*filter_nodes)(void *self, ks_cycle_state_t *cs, void *state,
                              const ks_pod_t *pod,
                              const ks_node_info_t *const *nodes, uint32_t n,
                              uint8_t *pass, ks_status_t *scratch);
    /* (since ABI 1.2) Score over many nodes in one call: scores[i] as
     * score_with_state (or score) would give for nodes[i]. Return
     * KS_SUCCESS; any other return: the host scores those nodes one by one
     * instead, to report the failing node's status. Requires
     * score_with_state or score; KS_SCORE_NODES_FROM in helpers.h writes
     * it from the per-node function. Thread-safe, as score. */
    ks_code_t (*score_nodes)(void *self, ks_cycle_state_t *cs, void *state,
                             const ks_pod_t *pod,
                             const ks_node_info_t *const *nodes, uint32_t n,
                             int64_t *scores, ks_status_t *scratch);

    /* (since ABI 1.3) The cluster resources the plugin reads
     * (n_resources entries; see ks_resource_ref_t): the host keeps a store
     * for each and hands it out through ks_host_api_t.store_get. The host
     * refuses a plugin whose entries lack a field, and reads the array
     * when it loads the plugin (it may be static data of the .so). */
    const ks_resource_ref_t *resources;
    uint32_t n_resources;
} ks_plugin_t;

/*
 * Is `member` of the host API table there, and set? True only when the
 * host's table (api->size bytes) reaches past the member, so a member added
 * after the ABI the host was built with is never read. Use it for every
 * member marked "(since ABI 1.x)"; members of 1.0 are always there.
 */
#define KS_API_HAS(api, member)                                               \
    ((api)->size >= offsetof(ks_host_api_t, member) + sizeof((api)->member) && \
     (api)->member != NULL)

/*
 * The same for a plugin's descriptor, as the host reads it: a descriptor
 * built against older headers is shorter (desc->size), and members past its
 * end do not exist. Every member of 1.0 is in every accepted descriptor
 * (KS_PLUGIN_V1_SIZE); members added later are checked with this.
 */
#define KS_PLUGIN_HAS(desc, member)                                           \
    ((desc)->size >= offsetof(ks_plugin_t, member) + sizeof((desc)->member) && \
     (desc)->member != NULL)

/* Bytes of ks_plugin_t the v1.0 host reads; a smaller descriptor is refused. */
#define KS_PLUGIN_V1_SIZE                                                     \
    ((uint32_t)(offsetof(ks_plugin_t, events_to_register) +                   \
                sizeof(void *)))

/*
 * The lowest ABI minor the plugin needs from a host. By default it is the
 * headers' own (KS_ABI_MINOR): a plugin built against 1.3 headers loads on
 * 1.3 hosts and newer. A plugin that works without everything newer than
 * minor N -- it checks each newer host API function with KS_API_HAS, and
 * every descriptor slot it fills beyond N has an older counterpart it also
 * fills (filter_nodes beside filter, say) -- may say so:
 *
 *     #define KS_PLUGIN_MIN_ABI_MINOR 1
 *     #include <ksched/plugin.h>
 *
 * Its descriptor then carries minor N, and a 1.N host loads it: a host
 * reads only the descriptor members it knows (desc->size tells it where
 * the plugin's end), so the newer slots are simply not used there, as a
 * Redis module built with newer headers runs on an older server.
 */
#ifndef KS_PLUGIN_MIN_ABI_MINOR
#define KS_PLUGIN_MIN_ABI_MINOR KS_ABI_MINOR
#endif
#if KS_PLUGIN_MIN_ABI_MINOR > KS_ABI_MINOR || KS_PLUGIN_MIN_ABI_MINOR < 0
#error "KS_PLUGIN_MIN_ABI_MINOR must be between 0 and KS_ABI_MINOR"
#endif

/*
 * Define the plugin's descriptor. Use once per .so, at file scope:
 *
 *     KS_PLUGIN_DEFINE("MyPlugin", "0.1.0",
 *         .create = my_create, .destroy = my_destroy, .filter = my_filter);
 */
#define KS_PLUGIN_DEFINE(NAME, VERSION, ...)                                  \
    KS_EXTERN_C KS_EXPORT const ks_plugin_t ks_plugin_descriptor = {          \
        .magic = KS_PLUGIN_MAGIC,                                             \
        .abi_major = KS_ABI_MAJOR,                                            \
        .abi_minor = KS_PLUGIN_MIN_ABI_MINOR,                                 \
        .size = (uint32_t)sizeof(ks_plugin_t),                                \
        .name = (NAME),                                                       \
        .version = (VERSION),                                                 \
        __VA_ARGS__}

#ifdef __cplusplus
}
#endif

#endif /* KSCHED_PLUGIN_H */
