/*
 * ksched plugin SDK — read-only views of cluster objects.
 *
 * Everything in this header is owned by the host. A plugin receives const
 * pointers and must never write through them or free them. Unless a function
 * says otherwise, a view stays valid for the duration of the call that handed
 * it to the plugin (for Filter/Score: the current scheduling cycle).
 *
 * Interning: every `const char *` reachable from a view (names, label keys and
 * values, taint and toleration fields, selector values, topology keys, image
 * names) is interned by the host: two equal strings have the same address.
 * Comparing pointers is therefore a valid equality test between strings that
 * both come from views. Strings a plugin builds itself (from its args, say)
 * must be passed through ks_host_api_t.intern before being compared by
 * address.
 *
 * Lifetime of interned strings: most (label keys and values, names of
 * nodes, namespaces, resources, images) live as long as the host. A pod's
 * own name, uid and annotation keys and values live as long as that pod
 * (the host gives them back when the pod leaves the cluster, so that a
 * long-running scheduler's memory stays flat under churn). A plugin that
 * keeps one of those beyond the call (a gang's members, say) keeps the
 * pointer returned by ks_host_api_t.intern, which makes the string
 * permanent; it is the same address as the pod's while the pod lives.
 *
 * Thread-safety: views are immutable while a plugin can see them, so any
 * number of threads may read them at once.
 */
#ifndef KSCHED_TYPES_H
#define KSCHED_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- strings, labels ----------------------------------------------------- */

typedef struct ks_label {
    const char *key;   /* interned */
    const char *value; /* interned */
} ks_label_t;

/* A label set. Keys are unique; order is unspecified. */
typedef struct ks_labels {
    const ks_label_t *items;
    uint32_t n;
} ks_labels_t;

/* --- resources ----------------------------------------------------------- */

/* Maximum number of distinct extended ("scalar") resources per object. */
#define KS_MAX_SCALAR_RESOURCES 16

typedef struct ks_scalar_resource {
    const char *name; /* interned, e.g. "nvidia.com/gpu", "hugepages-2Mi" */
    int64_t value;    /* in the resource's base unit (hugepages in bytes) */
} ks_scalar_resource_t;

/* A resource list in fixed arrays, as upstream's framework.Resource. */
typedef struct ks_resources {
    int64_t milli_cpu;
    int64_t memory;            /* bytes */
    int64_t ephemeral_storage; /* bytes */
    int64_t allowed_pods;      /* "pods" */
    uint32_t n_scalar;
    ks_scalar_resource_t scalar[KS_MAX_SCALAR_RESOURCES];
} ks_resources_t;

/* --- selectors ----------------------------------------------------------- */

typedef enum ks_selector_op {
    KS_OP_IN = 0,
    KS_OP_NOT_IN,
    KS_OP_EXISTS,
    KS_OP_DOES_NOT_EXIST,
    KS_OP_GT,
    KS_OP_LT
} ks_selector_op_t;

typedef struct ks_requirement {
    const char *key; /* interned */
    ks_selector_op_t op;
    const char *const *values; /* interned */
    uint32_t n_values;
} ks_requirement_t;

/*
 * A metav1.LabelSelector, matchLabels already turned into In requirements.
 * A NULL pointer to a selector means "no selector" (selects nothing where
 * upstream says so); a selector with n == 0 selects everything.
 */
typedef struct ks_label_selector {
    const ks_requirement_t *reqs;
    uint32_t n;
} ks_label_selector_t;

/* One v1.NodeSelectorTerm: expressions over labels, fields over metadata.name. */
typedef struct ks_node_selector_term {
    const ks_requirement_t *match_expressions;
    uint32_t n_match_expressions;
    const ks_requirement_t *match_fields; /* key is "metadata.name" */
    uint32_t n_match_fields;
} ks_node_selector_term_t;

/* A v1.NodeSelector: the terms are ORed. */
typedef struct ks_node_selector {
    const ks_node_selector_term_t *terms;
    uint32_t n_terms;
} ks_node_selector_t;

typedef struct ks_preferred_scheduling_term {
    int32_t weight;
    ks_node_selector_term_t preference;
} ks_preferred_scheduling_term_t;

typedef struct ks_node_affinity {
    const ks_node_selector_t *required; /* NULL when absent */
    const ks_preferred_scheduling_term_t *preferred;
    uint32_t n_preferred;
} ks_node_affinity_t;

/*
 * The label keys of one pod (anti-)affinity term or topology spread
 * constraint (since ABI 1.1): `matchLabelKeys` and, for affinity terms,
 * `mismatchLabelKeys`, as written. The host has already merged them into
 * the term's selector as the API server does when a pod is created (an
 * `In` requirement with the pod's value for each match key, a `NotIn` for
 * each mismatch key, keys the pod has no label for skipped), so a plugin
 * needs them only to show them.
 */
typedef struct ks_label_keys {
    const char *const *match_label_keys; /* interned */
    uint32_t n_match_label_keys;
    const char *const *mismatch_label_keys; /* interned; none for spread */
    uint32_t n_mismatch_label_keys;
} ks_label_keys_t;

typedef struct ks_pod_affinity_term {
    const ks_label_selector_t *label_selector; /* NULL: selects nothing */
    const char *const *namespaces;             /* interned */
    uint32_t n_namespaces;
    const ks_label_selector_t *namespace_selector; /* NULL when absent */
    const char *topology_key;                      /* interned */
} ks_pod_affinity_term_t;

typedef struct ks_weighted_pod_affinity_term {
    int32_t weight;
    ks_pod_affinity_term_t term;
} ks_weighted_pod_affinity_term_t;

/* Used for both podAffinity and podAntiAffinity. */
typedef struct ks_pod_affinity {
    const ks_pod_affinity_term_t *required;
    uint32_t n_required;
    const ks_weighted_pod_affinity_term_t *preferred;
    uint32_t n_preferred;
    /* Since ABI 1.1: the label keys of each term, parallel to `required`
     * (n_required entries) and `preferred` (n_preferred entries). */
    const ks_label_keys_t *required_keys;
    const ks_label_keys_t *preferred_keys;
} ks_pod_affinity_t;

typedef struct ks_affinity {
    const ks_node_affinity_t *node_affinity;    /* NULL when absent */
    const ks_pod_affinity_t *pod_affinity;      /* NULL when absent */
    const ks_pod_affinity_t *pod_anti_affinity; /* NULL when absent */
} ks_affinity_t;

/* --- taints and tolerations ---------------------------------------------- */

typedef enum ks_taint_effect {
    KS_EFFECT_ALL = 0, /* only in tolerations: empty effect matches all */
    KS_EFFECT_NO_SCHEDULE,
    KS_EFFECT_PREFER_NO_SCHEDULE,
    KS_EFFECT_NO_EXECUTE
} ks_taint_effect_t;

typedef struct ks_taint {
    const char *key;   /* interned */
    const char *value; /* interned, "" when absent */
    ks_taint_effect_t effect;
} ks_taint_t;

typedef enum ks_toleration_op {
    KS_TOLERATION_EQUAL = 0, /* default when operator is empty */
    KS_TOLERATION_EXISTS
} ks_toleration_op_t;

typedef struct ks_toleration {
    const char *key;   /* interned, "" matches every key with Exists */
    ks_toleration_op_t op;
    const char *value; /* interned, "" when absent */
    ks_taint_effect_t effect; /* KS_EFFECT_ALL when empty */
} ks_toleration_t;

/* --- topology spread ----------------------------------------------------- */

typedef enum ks_unsatisfiable_action {
    KS_DO_NOT_SCHEDULE = 0,
    KS_SCHEDULE_ANYWAY
} ks_unsatisfiable_action_t;

typedef enum ks_inclusion_policy {
    KS_POLICY_UNSET = 0, /* plugin default applies */
    KS_POLICY_HONOR,
    KS_POLICY_IGNORE
} ks_inclusion_policy_t;

typedef struct ks_topology_spread_constraint {
    int32_t max_skew;
    const char *topology_key; /* interned */
    ks_unsatisfiable_action_t when_unsatisfiable;
    const ks_label_selector_t *label_selector; /* NULL: matches nothing */
    int32_t min_domains;                       /* 0 when unset */
    ks_inclusion_policy_t node_affinity_policy;
    ks_inclusion_policy_t node_taints_policy;
} ks_topology_spread_constraint_t;

/* --- containers and pods ------------------------------------------------- */

typedef enum ks_protocol {
    KS_PROTO_TCP = 0,
    KS_PROTO_UDP,
    KS_PROTO_SCTP
} ks_protocol_t;

typedef struct ks_container_port {
    int32_t container_port;
    int32_t host_port; /* 0 when absent */
    ks_protocol_t protocol;
    const char *host_ip; /* interned, "" when absent */
} ks_container_port_t;

typedef struct ks_container {
    const char *name;  /* interned */
    const char *image; /* interned, as written in the manifest */
    ks_resources_t requests;
    ks_resources_t limits;
    const ks_container_port_t *ports;
    uint32_t n_ports;
} ks_container_t;

/* --- volumes (since ABI 1.3) -------------------------------------------- */

/* What a pod volume is, as far as the scheduler's volume plugins care. */
typedef enum ks_volume_source {
    KS_VOLUME_OTHER = 0,     /* any other source (emptyDir, configMap, ...) */
    KS_VOLUME_PVC,           /* persistentVolumeClaim */
    KS_VOLUME_EPHEMERAL      /* ephemeral (a generic ephemeral volume) */
} ks_volume_source_t;

/* One entry of a pod's spec.volumes. */
typedef struct ks_volume {
    const char *name; /* interned (lives as long as the pod) */
    ks_volume_source_t source;
    /* The claim the volume uses: persistentVolumeClaim.claimName as
     * written ("" when absent: upstream's plugins report a claim with no
     * name), or for an ephemeral volume the claim the API server makes for
     * it, "<pod name>-<volume name>"; "" for other sources. Interned
     * (lives as long as the pod). */
    const char *claim_name;
    int read_only; /* persistentVolumeClaim.readOnly */
} ks_volume_t;

/* --- inline in-tree volume sources (since ABI 1.4) ---------------------- */

/* The in-tree source written inline in a pod volume, for the kinds
 * upstream's VolumeRestrictions (disk conflicts) and NodeVolumeLimits
 * (counted as their CSI driver) read. */
typedef enum ks_inline_kind {
    KS_INLINE_NONE = 0,   /* none of the kinds below */
    KS_INLINE_GCE_PD,     /* gcePersistentDisk */
    KS_INLINE_AWS_EBS,    /* awsElasticBlockStore */
    KS_INLINE_ISCSI,      /* iscsi */
    KS_INLINE_RBD,        /* rbd */
    KS_INLINE_AZURE_DISK, /* azureDisk */
    KS_INLINE_CINDER,     /* cinder */
    KS_INLINE_PORTWORX    /* portworxVolume */
} ks_inline_kind_t;

/* One volume's inline in-tree source (ks_pod_t.volume_inline[i] describes
 * volumes[i]). Strings are interned and live as long as the pod; a field
 * a kind does not use is NULL (monitors: NULL, n_monitors 0), a field the
 * manifest leaves out is "".
 *
 *   kind        id            disk_uri          pool        monitors
 *   GCE_PD      pdName        -                 -           -
 *   AWS_EBS     volumeID      -                 -           -
 *   ISCSI       iqn           -                 -           -
 *   RBD         image         -                 pool, "rbd" monitors
 *                                               when absent
 *   AZURE_DISK  diskName      diskURI           -           -
 *   CINDER      volumeID      -                 -           -
 *   PORTWORX    volumeID      -                 -           -
 *
 * read_only is the source's readOnly (0 for kind NONE). */
typedef struct ks_volume_inline {
    ks_inline_kind_t kind;
    int read_only;
    const char *id;
    const char *disk_uri;
    const char *pool;
    const char *const *monitors;
    uint32_t n_monitors;
} ks_volume_inline_t;

/* (since ABI 1.5) One entry of a pod's spec.resourceClaims (Dynamic
 * Resource Allocation). Every string is interned and lives as long as the
 * pod; "" when the field is absent. */
typedef struct ks_pod_claim {
    const char *name;          /* the entry's name */
    const char *claim_name;    /* resourceClaimName */
    const char *template_name; /* resourceClaimTemplateName */
    /* status.resourceClaimStatuses: has_status is non-zero when the status
     * has an entry of this name; status_claim_name is that entry's
     * resourceClaimName (the claim made from the template; "" when the
     * entry says no claim was needed). */
    int has_status;
    const char *status_claim_name;
} ks_pod_claim_t;

typedef struct ks_pod {
    const char *ns;   /* interned, "default" when absent */
    const char *name; /* interned */
    const char *uid;  /* interned; "ns/name" when the manifest has none */
    ks_labels_t labels;
    ks_labels_t annotations;
    const char *scheduler_name; /* interned, "default-scheduler" when absent */
    const char *node_name;      /* interned, "" when unassigned */
    const char *nominated_node_name; /* interned, "" when none */
    ks_labels_t node_selector;
    ks_affinity_t affinity;
    const ks_toleration_t *tolerations;
    uint32_t n_tolerations;
    const ks_topology_spread_constraint_t *spread_constraints;
    uint32_t n_spread_constraints;
    const ks_container_t *containers;
    uint32_t n_containers;
    const ks_container_t *init_containers;
    uint32_t n_init_containers;
    ks_resources_t overhead;
    int32_t priority;
    const char *priority_class_name; /* interned, "" when absent */
    const char *const *scheduling_gates; /* interned gate names */
    uint32_t n_scheduling_gates;
    int64_t creation_unix_ms; /* metadata.creationTimestamp, 0 if absent */
    int64_t start_unix_ms;    /* status.startTime, 0 if absent */
    int deleting;             /* metadata.deletionTimestamp is set */

    /* Derived by the host when the pod is read. */
    /* Upstream's PodRequests (v1.29+ sidecar formula): the sum of the
     * containers and sidecars, at least each init container plus the
     * sidecars started before it; pod-level requests replace cpu, memory
     * and hugepages when set; plus overhead. */
    ks_resources_t requests;
    int64_t non_zero_milli_cpu; /* with the 100m default per container */
    int64_t non_zero_memory;    /* with the 200Mi default per container */
    const ks_container_port_t *host_ports; /* every container port with host_port > 0 */
    uint32_t n_host_ports;
    int preempt_never; /* spec.preemptionPolicy is Never */

    /* --- since ABI 1.1 (a 1.0 plugin never reads past preempt_never) --- */

    /* The matchLabelKeys of each spread constraint, parallel to
     * `spread_constraints` (n_spread_constraints entries), already merged
     * into each constraint's selector (see ks_label_keys_t). */
    const ks_label_keys_t *spread_keys;
    /* 1 for an init container with `restartPolicy: Always` (a sidecar),
     * parallel to `init_containers` (n_init_containers entries). */
    const uint8_t *init_restart_always;
    /* Pod-level resources (`spec.resources`), requests after the API
     * server's defaulting from the pod-level limits and the containers.
     * has_pod_requests is non-zero when the requests name cpu, memory or
     * a hugepages size (upstream's IsPodLevelRequestsSet); `requests`
     * above then uses them for those resources. */
    ks_resources_t pod_requests;
    ks_resources_t pod_limits;
    int has_pod_requests;

    /* --- since ABI 1.3 (a 1.2 plugin never reads past has_pod_requests).
     * A plugin built with KS_PLUGIN_MIN_ABI_MINOR below 3 may run on an
     * older host, whose pods end at has_pod_requests: read these only
     * when api->abi_minor >= 3. --- */

    /* spec.volumes, in order (n_volumes entries; NULL when none). */
    const struct ks_volume *volumes;
    uint32_t n_volumes;

    /* --- since ABI 1.4 (a 1.3 plugin never reads past n_volumes). A
     * plugin built with KS_PLUGIN_MIN_ABI_MINOR below 4 may run on an
     * older host, whose pods end at n_volumes: read this only when
     * api->abi_minor >= 4, or through ks_pod_volume_inline() (helpers.h),
     * which does that check. --- */

    /* The inline in-tree sources of spec.volumes, parallel to `volumes`
     * (n_volumes entries, volume_inline[i] describing volumes[i]; kind
     * KS_INLINE_NONE for the others), or NULL when no volume of the pod
     * has one of those sources. */
    const struct ks_volume_inline *volume_inline;

    /* --- since ABI 1.5 (a 1.4 plugin never reads past volume_inline). A
     * plugin built with KS_PLUGIN_MIN_ABI_MINOR below 5 may run on an
     * older host, whose pods end at volume_inline: read these only when
     * api->abi_minor >= 5, or through ks_pod_resource_claims()
     * (helpers.h), which does that check. --- */

    /* spec.resourceClaims, in order (n_resource_claims entries; NULL when
     * none), each with the claim name status.resourceClaimStatuses gives
     * for it. */
    const struct ks_pod_claim *resource_claims;
    uint32_t n_resource_claims;
} ks_pod_t;

/* --- nodes --------------------------------------------------------------- */

typedef struct ks_node_image {
    const char *name; /* interned; one entry per name of each image */
    int64_t size_bytes;
} ks_node_image_t;

typedef struct ks_node {
    const char *name; /* interned */
    ks_labels_t labels;
    const ks_taint_t *taints;
    uint32_t n_taints;
    int unschedulable;
    ks_resources_t allocatable;
    const ks_node_image_t *images;
    uint32_t n_images;
} ks_node_t;

/*
 * Aggregated per-node state, as upstream's framework.NodeInfo. The host keeps
 * it current as pods are assumed, bound and deleted; during one scheduling
 * cycle the plugin sees a snapshot that does not change.
 */
typedef struct ks_node_info {
    const ks_node_t *node;
    const ks_pod_t *const *pods;
    uint32_t n_pods;
    /* (since ABI 1.6, in what was padding before) 1 + this NodeInfo's
     * position in snapshot_nodes when it is an entry of the snapshot of
     * the current cycle; 0 for any other NodeInfo (a clone, one a test
     * built). A hint for plugins that keep facts per snapshot position
     * (see snapshot_changes): it lets Filter and Score read those facts
     * without following `node`. Check that the table's entry at that
     * position is this very NodeInfo before trusting it; with that check
     * no version test is needed (an older host leaves padding here, which
     * can only name a position whose entry is some other NodeInfo, or
     * this one's true position). */
    uint32_t snapshot_pos;
    const ks_pod_t *const *pods_with_affinity; /* any pod (anti-)affinity */
    uint32_t n_pods_with_affinity;
    const ks_pod_t *const *pods_with_required_anti_affinity;
    uint32_t n_pods_with_required_anti_affinity;
    ks_resources_t requested;     /* sum of the pods' requests */
    ks_resources_t non_zero_requested; /* cpu/memory with non-zero defaults */
    const ks_container_port_t *const *used_ports; /* host ports in use */
    uint32_t n_used_ports;
    uint64_t generation;
} ks_node_info_t;

/*
 * (since ABI 1.7) The figures of the current cycle's snapshot as columns,
 * one entry per snapshot position (the order of snapshot_nodes), for bulk
 * Filter and Score loops that compare a few numbers per node: reading them
 * here touches a few bytes per node in arrays read in order, where the
 * NodeInfo and Node of each node are lines of their own. Entry i holds
 * what snapshot_nodes()[i] holds:
 *   flags            KS_COL_* below
 *   n_pods           n_pods
 *   alloc_*          node->allocatable (0 when node is NULL)
 *   req_*            requested
 *   nz_*             non_zero_requested
 * Extended (scalar) resources are not in columns: read the NodeInfo for
 * those. Get them with ks_host_api_t.bulk_columns inside filter_nodes or
 * score_nodes; they do not change during the cycle.
 */
#define KS_COL_NO_NODE 0x01u       /* node is NULL */
#define KS_COL_UNSCHEDULABLE 0x02u /* node->unschedulable */
#define KS_COL_TAINTED 0x04u       /* node->n_taints > 0 */

typedef struct ks_node_columns {
    uint32_t n; /* entries in each column: the snapshot's node count */
    const uint8_t *flags;
    const uint32_t *n_pods;
    const int64_t *alloc_milli_cpu;
    const int64_t *alloc_memory;
    const int64_t *alloc_ephemeral;
    const int64_t *alloc_pods;
    const int64_t *req_milli_cpu;
    const int64_t *req_memory;
    const int64_t *req_ephemeral;
    const int64_t *nz_milli_cpu;
    const int64_t *nz_memory;
} ks_node_columns_t;

#ifdef __cplusplus
}
#endif

#endif /* KSCHED_TYPES_H */
