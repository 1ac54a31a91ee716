/*
 * VolumeBinding's internals, shared by its files (not an SDK header).
 *
 *   volumebinding.c  the descriptor, args, PreFilter, Filter, Score,
 *                    Reserve/Unreserve, QueueingHints
 *   objects.c        reading PVCs, PVs, classes: field helpers, quantities,
 *                    label selectors, node affinity, allowed topologies
 *   matching.c       upstream's FindPodVolumes: bound claims' PVs, static
 *                    matching (FindMatchingVolume), dynamic provisioning
 *   assume_cache.c   the PVs and PVCs Reserve assumed, until the stores
 *                    catch up or Unreserve restores them
 *   pv_index.c       PVs by class and hostname (and by claimRef), so
 *                    that static matching walks a node's candidates only
 *   prebind.c        PreBind: the API writes, then polling until the PV
 *                    controller bound every claim (KS_PENDING)
 *
 * Threads: Filter and Score run on several threads at once; they read the
 * stores, the assume cache (under its lock) and the cycle state, and write
 * only the state's per-node map, under the state's mutex. Everything else
 * runs on the loop thread.
 */
#ifndef KS_VOLUMEBINDING_VB_H
#define KS_VOLUMEBINDING_VB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define VB_NAME "VolumeBinding"

/* Annotations and names of component-helpers/storage/volume. */
#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define ANN_BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_MIGRATED_PLUGINS "storage.alpha.kubernetes.io/migrated-plugins"
#define NOT_SUPPORTED_PROVISIONER "kubernetes.io/no-provisioner"
#define LABEL_HOSTNAME "kubernetes.io/hostname"

/* Filter's reasons (upstream ConflictReasons), in the order it appends
 * them. */
#define ERR_NODE_CONFLICT "node(s) had volume node affinity conflict"
#define ERR_BIND_CONFLICT \
    "node(s) didn't find available persistent volumes to bind"
#define ERR_NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define ERR_PV_NOT_EXIST \
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define ERR_UNBOUND_IMMEDIATE \
    "pod has unbound immediate PersistentVolumeClaims"

#define VB_MAX_SHAPE 16
#define VB_BUCKETS 256

typedef struct vb_assume_cache vb_assume_cache_t;
typedef struct vb_wait vb_wait_t;
typedef struct vb_pv_index vb_pv_index_t;

typedef struct vb_shape_point {
    int64_t utilization, score; /* score already scaled to 0..100 */
} vb_shape_point_t;

/* One plugin instance. Owned by the plugin; freed by destroy. */
typedef struct vb {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_store_t *pvcs, *pvs, *classes, *csinodes, *csidrivers,
        *capacities;
    int64_t bind_timeout_ms; /* bindTimeoutSeconds */
    int scoring;             /* StorageCapacityScoring on: Score runs */
    vb_shape_point_t shape[VB_MAX_SHAPE];
    uint32_t n_shape;
    vb_assume_cache_t *cache; /* assume_cache.c */
    vb_wait_t *waits;         /* PreBinds waiting for the cluster */
    vb_pv_index_t *pv_index;  /* pv_index.c; NULL: walk every PV */
} vb_t;

/* A claim of the pod as PreFilter read it (strings owned by the state). */
typedef struct vb_claim {
    char *ns, *name;
    char *uid;         /* metadata.uid, "" when none */
    char *rv;          /* metadata.resourceVersion, "" when none */
    char *volume_name; /* spec.volumeName, "" when unbound */
    char *class_name;  /* GetPersistentVolumeClaimClass */
    int64_t request;   /* spec.resources.requests.storage, bytes */
    int has_request;
} vb_claim_t;

/* A static binding found by Filter: claim (index into the state's delay
 * claims) to PV. Strings owned by the decision. */
typedef struct vb_static {
    uint32_t claim;
    char *pv;       /* PV name */
    char *pv_rv;    /* its resourceVersion when matched */
    char *pv_class; /* its class */
    int64_t capacity;
    int64_t request;
    /* set by Reserve (GetBindVolumeToClaim) */
    int set_bound_by_controller;
} vb_static_t;

/* A claim to provision on the node. */
typedef struct vb_provision {
    uint32_t claim;
    int has_capacity;  /* a CSIStorageCapacity was found */
    int64_t capacity;  /* its capacity (Score) */
} vb_provision_t;

/* One node's decision (upstream PodVolumes), made by Filter. */
typedef struct vb_pod_volumes {
    const char *node; /* interned */
    vb_static_t *statics;
    uint32_t n_statics;
    vb_provision_t *provs;
    uint32_t n_provs;
    struct vb_pod_volumes *next; /* hash chain */
} vb_pod_volumes_t;

/* The cycle state (KS_STATE_FILTER slot): written by PreFilter; the
 * per-node map by Filter under `mu`; all_bound by Reserve. Shared, never
 * cloned (upstream's Clone returns the same pointer). */
typedef struct vb_state {
    pthread_mutex_t mu;
    int skip;      /* the pod has no claims */
    int all_bound; /* Reserve found nothing to bind */
    int has_static_bindings;
    vb_claim_t *bound;
    uint32_t n_bound;
    vb_claim_t *delay; /* unbound, WaitForFirstConsumer */
    uint32_t n_delay;
    vb_pod_volumes_t *by_node[VB_BUCKETS];
} vb_state_t;

/* --- objects.c ------------------------------------------------------------ */

/* A field path (or any text) into buf, truncated to len. */
void vb_pathf(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Go's %q of `s` into buf (always terminated). */
const char *vb_quote(char *buf, size_t len, const char *s);
/* A string field, or "" when absent or not a string. */
const char *vb_str(const vb_t *v, const ks_object_t *o, const char *path);
/* Does the field exist (not absent or null)? */
int vb_has(const vb_t *v, const ks_object_t *o, const char *path);
/* An annotation's value, or NULL when absent. */
const char *vb_annotation(const vb_t *v, const ks_object_t *o,
                          const char *key);
/* metadata.resourceVersion as a number (0 when absent or not numeric). */
int64_t vb_rv(const vb_t *v, const ks_object_t *o);
int64_t vb_rv_text(const char *s);
/* GetPersistentVolumeClaimClass / GetPersistentVolumeClass. */
const char *vb_claim_class(const vb_t *v, const ks_object_t *pvc);
const char *vb_volume_class(const vb_t *v, const ks_object_t *pv);
/* A resource.Quantity's Value() (rounded up), 0 on success. */
int vb_parse_quantity(const char *s, int64_t *out);
/* A quantity field: 1 found (*out set), 0 absent or unparsable. */
int vb_quantity(const vb_t *v, const ks_object_t *o, const char *path,
                int64_t *out);
/* metav1.LabelSelector at `path` against `labels`: 1 match, 0 no match,
 * -1 invalid. An absent selector at path matches nothing (0); callers
 * check presence first where upstream does. */
int vb_label_selector_matches(const vb_t *v, const ks_object_t *o,
                              const char *path, const ks_labels_t *labels);
/* volume.CheckNodeAffinity: 1 when the PV's required node affinity (if
 * any) matches a node with these labels (and no name, as upstream). */
int vb_node_affinity_matches(const vb_t *v, const ks_object_t *pv,
                             const ks_labels_t *labels);
/* MatchTopologySelectorTerms of a class's allowedTopologies. */
int vb_topology_matches(const vb_t *v, const ks_object_t *sc,
                        const ks_labels_t *labels);
/* Do two objects hold equal JSON at `path` (absent equals absent)? */
int vb_field_equal(const vb_t *v, const ks_object_t *a, const ks_object_t *b,
                   const char *path);

/* --- assume_cache.c ------------------------------------------------------- */

vb_assume_cache_t *vb_cache_new(void);
void vb_cache_free(vb_assume_cache_t *c);

/* A PV's claimRef as reads see it (assumed or stored); strings valid
 * during the callback. present = 0 when it has none. */
typedef struct vb_claim_ref {
    int present;
    const char *ns, *name, *uid;
} vb_claim_ref_t;
void vb_pv_claim_ref(const vb_t *v, const ks_object_t *pv,
                     vb_claim_ref_t *out);
/* Does the PV (assumed or stored) carry the bound-by-controller
 * annotation? */
int vb_pv_bound_by_controller(const vb_t *v, const ks_object_t *pv);
/* The claim's selected-node annotation as reads see it, NULL when absent;
 * copied into buf. */
const char *vb_pvc_selected_node(const vb_t *v, const ks_object_t *pvc,
                                 char *buf, size_t len);
/* Assume (Reserve; loop thread): 0, or -1 with the reason in err. */
int vb_assume_pv(vb_t *v, const ks_object_t *pv, int64_t matched_rv,
                 const char *claim_ns, const char *claim_name,
                 const char *claim_uid, int bound_by_controller, char *err,
                 size_t errlen);
int vb_assume_pvc(vb_t *v, const ks_object_t *pvc, int64_t read_rv,
                  const char *node, char *err, size_t errlen);
/* Restore (Unreserve, failed writes): drop what was assumed. */
void vb_restore_pv(vb_t *v, const char *name);
void vb_restore_pvc(vb_t *v, const char *ns, const char *name);
/* Drop entries the stores have overtaken (loop thread). */
void vb_cache_prune(vb_t *v);
/* Calls fn with the name of each PV assumed with a claimRef named
 * `claim_name` (any namespace, whether or not the store has overtaken
 * it), under the cache's read lock: fn must not call the cache. Returns
 * the first non-zero value of fn, else 0. Thread-safe. */
int vb_cache_pvs_claimed(const vb_t *v, const char *claim_name,
                         int (*fn)(const char *pv_name, void *ud), void *ud);

/* --- pv_index.c ----------------------------------------------------------- */

/* A new, empty index (built on first use), NULL when out of memory; freed
 * with vb_pv_index_free (destroy). */
vb_pv_index_t *vb_pv_index_new(void);
void vb_pv_index_free(vb_pv_index_t *x);
/* The index for reading, rebuilt first when the PV store's version
 * changed; NULL when there is none (no index, a host without
 * store_version, out of memory): walk the store. Release it with
 * vb_pv_index_release before the callback returns. Thread-safe. */
const vb_pv_index_t *vb_pv_index_acquire(const vb_t *v);
void vb_pv_index_release(const vb_pv_index_t *x);

/* Candidates: a store position (VB_CAND_POS bits) and what the lists it
 * came from prove: VB_CAND_CLASS its class is the claim's, VB_CAND_AFFINITY
 * its node affinity matches the node (CheckNodeAffinity is 1). In store
 * order; small lists live inline. */
#define VB_CAND_POS 0x3fffffffu
#define VB_CAND_CLASS 0x40000000u
#define VB_CAND_AFFINITY 0x80000000u
typedef struct vb_pv_cands {
    uint32_t *pos;
    uint32_t n, cap;
    uint32_t inline_pos[16];
} vb_pv_cands_t;
void vb_pv_cands_init(vb_pv_cands_t *c);
void vb_pv_cands_free(vb_pv_cands_t *c);
/* Add the position of PV `pv_name` (nothing when the index has none):
 * 0, or -1 when out of memory. */
int vb_pv_index_add_name(const vb_pv_index_t *x, const char *pv_name,
                         vb_pv_cands_t *c);
/* Add the PVs of class `cls` that may match a node whose
 * kubernetes.io/hostname label is `host` (NULL: none), and those whose
 * stored claimRef is named `claim_name`; then sort what `c` holds into
 * store order without repeats. 0, or -1 when out of memory. */
int vb_pv_index_candidates(const vb_pv_index_t *x, const char *cls,
                           const char *host, const char *claim_name,
                           vb_pv_cands_t *c);
/* The PV of a candidate (valid while the index is held). */
const ks_object_t *vb_pv_index_object(const vb_pv_index_t *x, uint32_t cand);

/* --- matching.c ----------------------------------------------------------- */

/* Upstream's FindPodVolumes for one node: KS_SUCCESS with *out (NULL when
 * the pod had nothing to decide), UNSCHEDULABLE_AND_UNRESOLVABLE with the
 * reasons in st, or KS_ERROR with the message in st. Thread-safe. */
ks_code_t vb_find_pod_volumes(vb_t *v, const vb_state_t *s,
                              const ks_pod_t *pod, const ks_node_t *node,
                              vb_pod_volumes_t **out, ks_status_t *st);
void vb_pod_volumes_free(vb_pod_volumes_t *pv);
/* The claims of the pod, fully bound? (arePodVolumesBound) */
int vb_pod_volumes_bound(vb_t *v, const ks_pod_t *pod);
/* isPVCFullyBound of a stored claim. */
int vb_claim_fully_bound(const vb_t *v, const ks_object_t *pvc);

/* --- prebind.c ------------------------------------------------------------ */

ks_code_t vb_pre_bind(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const char *node_name, ks_status_t *st);
/* Stop a waiting PreBind of the pod (Unreserve): its timer and request. */
void vb_wait_cancel(vb_t *v, const char *pod_uid);
/* Free every wait without calling the host (destroy). */
void vb_waits_free(vb_t *v);

/* --- volumebinding.c ------------------------------------------------------ */

vb_state_t *vb_state_get(const vb_t *v, const ks_cycle_state_t *cs);
vb_pod_volumes_t *vb_state_node(vb_state_t *s, const char *node);
/* Restore what Reserve assumed for the node's decision. */
void vb_revert(vb_t *v, const vb_state_t *s, const vb_pod_volumes_t *pv);

#endif /* KS_VOLUMEBINDING_VB_H */
