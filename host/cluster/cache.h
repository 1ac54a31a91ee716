/*
 * The scheduler cache and its snapshot (upstream internal/cache).
 *
 * The cache owns nodes and pods added to it and keeps one NodeInfo per node
 * (requested and non-zero requested resources, pods, pods with affinity and
 * with required anti-affinity, used host ports, generation). Image counts
 * (how many nodes carry each image name) are kept current.
 *
 * A snapshot is what a scheduling cycle reads: NodeInfos in node-name order.
 * ks_cache_update_snapshot() refreshes only the NodeInfos whose generation
 * moved since the last update (as upstream UpdateSnapshot), so a cycle never
 * sees a half-applied change and the cache can change while a cycle's
 * snapshot is in use by nothing.
 *
 * Thread-safety: a cache and a snapshot belong to the loop thread; the
 * snapshot may be read by worker threads during Filter/Score while the loop
 * thread does not update it.
 *
 * Lifetimes: the cache and the manifest reader must share one intern table
 * (uids, names and image names are looked up by content but stored as the
 * interned pointers). Objects the cache lets go of (removed pods and nodes,
 * a node replaced by an update, replaced services and namespaces) are freed
 * by the next ks_cache_update_snapshot() (of any snapshot) or by
 * ks_cache_free(), never earlier, so with one snapshot per cache a snapshot
 * taken before the removal stays readable until it is refreshed. A
 * ks_node_info_t from ks_cache_node_info() is valid until the next change
 * to the cache. On error, ownership of an object passed to an
 * add/update/assume function stays with the caller. Every change to a
 * NodeInfo (pod added/removed, node set/updated/removed) takes a new
 * generation from one process-wide counter.
 */
#ifndef KS_CACHE_H
#define KS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ksched/types.h"
#include "base/error.h"
#include "base/intern.h"
#include "objects.h"

typedef struct ks_cache ks_cache_t;
typedef struct ks_snapshot ks_snapshot_t;

ks_cache_t *ks_cache_new(ks_intern_t *in);
/* Frees the cache and every node and pod it owns. */
void ks_cache_free(ks_cache_t *c);

/* Nodes. add takes ownership; update replaces the node object (the old one
 * is freed), keeping its pods; remove frees the node (pods on it stay in the
 * cache until removed, as upstream). -KS_EEXIST / -KS_ENOTFOUND style codes:
 * KS_EEXIST, KS_ENOTFOUND. */
int ks_cache_add_node(ks_cache_t *c, ks_node_t *node, ks_error_t *err);
int ks_cache_update_node(ks_cache_t *c, ks_node_t *node, ks_error_t *err);
int ks_cache_remove_node(ks_cache_t *c, const char *name, ks_error_t *err);
/* The cache's NodeInfo for `name`, also a placeholder (node == NULL); NULL
 * when there is none. */
const ks_node_info_t *ks_cache_node_info(const ks_cache_t *c, const char *name);
/* Number of real nodes (placeholders not counted). */
size_t ks_cache_num_nodes(const ks_cache_t *c);

/* Pods with pod->node_name set. add takes ownership and adds the pod to its
 * node's NodeInfo (a node not yet known gets a placeholder NodeInfo, as
 * upstream). remove frees it. Lookup by uid. */
int ks_cache_add_pod(ks_cache_t *c, ks_pod_t *pod, ks_error_t *err);
int ks_cache_remove_pod(ks_cache_t *c, const char *uid, ks_error_t *err);
ks_pod_t *ks_cache_get_pod(const ks_cache_t *c, const char *uid);
/* Number of pods in the cache (added and assumed). */
size_t ks_cache_num_pods(const ks_cache_t *c);
/* Call fn for every pod (unspecified order); fn must not change the cache. */
void ks_cache_foreach_pod(const ks_cache_t *c,
                          void (*fn)(ks_pod_t *pod, int assumed, void *ud),
                          void *ud);

/* Assume: the scheduler decided `pod` goes to `node_name` (interned). The
 * cache takes ownership of `pod`, sets pod->node_name and adds it to the
 * node (KS_EEXIST when the uid is already cached). forget undoes it and
 * hands the pod back (node_name reset to ""); NULL when the pod is not
 * assumed. finish_binding marks an assumed pod as bound (it then stays like
 * an added pod): 0, KS_ENOTFOUND, or KS_EINVAL when it is not assumed.
 * ks_cache_add_pod() of an assumed uid confirms it: the added object
 * replaces the assumed one (freed later, see above). */
int ks_cache_assume_pod(ks_cache_t *c, ks_pod_t *pod, const char *node_name,
                        ks_error_t *err);
ks_pod_t *ks_cache_forget_pod(ks_cache_t *c, const char *uid);
int ks_cache_finish_binding(ks_cache_t *c, const char *uid);
int ks_cache_is_assumed(const ks_cache_t *c, const char *uid);

/* Number of nodes whose NodeInfo lists an image with this name. */
uint32_t ks_cache_image_num_nodes(const ks_cache_t *c, const char *image);

/* Services and namespaces (for DefaultSelector and namespaceSelector).
 * add takes ownership. */
int ks_cache_add_service(ks_cache_t *c, ks_service_t *svc);
int ks_cache_add_namespace(ks_cache_t *c, ks_namespace_t *ns);
/* Selectors of services in pod->ns whose non-empty selector matches the
 * pod's labels (compared by address: the strings of both interned in one
 * table); writes up to cap and returns how many match (more than cap:
 * call again with room for them all, as the host API says). A service
 * or namespace added with the name of an existing one replaces it. */
/* Remove (freed later, as other objects): 0 or KS_ENOTFOUND. A removed
 * namespace's labels read as empty. */
int ks_cache_remove_service(ks_cache_t *c, const char *ns, const char *name);
int ks_cache_remove_namespace(ks_cache_t *c, const char *name);
uint32_t ks_cache_owner_selectors(const ks_cache_t *c, const ks_pod_t *pod,
                                  const ks_label_selector_t **out,
                                  uint32_t cap);
ks_labels_t ks_cache_namespace_labels(const ks_cache_t *c, const char *ns);

/* Snapshot. */
ks_snapshot_t *ks_snapshot_new(void);
void ks_snapshot_free(ks_snapshot_t *s);
/* Bring `s` up to date with `c` (incremental by generation). */
int ks_cache_update_snapshot(ks_cache_t *c, ks_snapshot_t *s, ks_error_t *err);
uint32_t ks_snapshot_num_nodes(const ks_snapshot_t *s);
/* How many NodeInfo changes the snapshot has taken in (each refreshed or
 * dropped entry counts one): equal values mean nothing changed between
 * two updates. */
uint64_t ks_snapshot_changes(const ks_snapshot_t *s);
/* NodeInfos in node-name order; only nodes that exist (no placeholders). */
const ks_node_info_t *ks_snapshot_node_at(const ks_snapshot_t *s, uint32_t i);
const ks_node_info_t *ks_snapshot_get(const ks_snapshot_t *s, const char *name);
/* The position of node `name` in name order (what ks_snapshot_node_at
 * takes), or UINT32_MAX when the snapshot has no such node. */
uint32_t ks_snapshot_index(const ks_snapshot_t *s, const char *name);
uint32_t ks_snapshot_image_num_nodes(const ks_snapshot_t *s, const char *image);
/* Every NodeInfo as one array (name order); nodes with pods that have pod
 * (anti-)affinity; nodes with pods that have required anti-affinity. Valid
 * until the next update of the snapshot. */
/* What changed (plugin.h snapshot_changes): the version, and when `since`
 * is an earlier version of this snapshot after which every change only
 * refreshed NodeInfos in place (the last one, or an older one its change
 * log still covers: up to 65,536 positions), their positions in *idx (*n
 * of them, a position may repeat); *idx NULL: anything may have changed;
 * since == version: *n = 0, *idx not NULL. */
uint64_t ks_snapshot_changed_since(const ks_snapshot_t *s, uint64_t since,
                                   const uint32_t **idx, uint32_t *n);
const ks_node_info_t *const *ks_snapshot_nodes(const ks_snapshot_t *s,
                                               uint32_t *n);
/* Every node's name (interned), in the order of ks_snapshot_nodes, or
 * NULL when that list is not built (its last update ran out of memory).
 * Valid until the next update. */
const char *const *ks_snapshot_node_names(const ks_snapshot_t *s);
/* The snapshot's figures by position (types.h ks_node_columns_t, entry i
 * for ks_snapshot_nodes()[i]), or NULL when the lists are not built (as
 * ks_snapshot_node_names). ks_snapshot_positions: 0, 1, ..., n - 1, so
 * that a run of the node array from `at` has its positions at
 * positions + at. Both valid until the next update. */
const ks_node_columns_t *ks_snapshot_columns(const ks_snapshot_t *s);
const uint32_t *ks_snapshot_positions(const ks_snapshot_t *s);
const ks_node_info_t *const *ks_snapshot_nodes_with_affinity(
    const ks_snapshot_t *s, uint32_t *n);
const ks_node_info_t *const *ks_snapshot_nodes_with_required_anti_affinity(
    const ks_snapshot_t *s, uint32_t *n);

/* A private, mutable NodeInfo copy (for preemption simulations): its
 * arrays are its own, so add/remove never touch the original; the pods and
 * node it points to are not copied. add/remove work only on clones, and
 * take a new generation. A clone is used by one thread at a time; cloning
 * and freeing are thread-safe. add aborts on ENOMEM. */
ks_node_info_t *ks_node_info_clone(const ks_node_info_t *ni);
/* Make the clone `dst` a copy of `src` again, reusing dst's arrays (no
 * allocation once they are large enough). 0, or -1 on ENOMEM (dst then
 * keeps its last contents). */
int ks_node_info_refill(ks_node_info_t *dst, const ks_node_info_t *src);
void ks_node_info_free(ks_node_info_t *ni);
void ks_node_info_add_pod(ks_node_info_t *ni, const ks_pod_t *pod);
/* Removes by uid; returns -1 when the pod is not on the node. */
int ks_node_info_remove_pod(ks_node_info_t *ni, const ks_pod_t *pod);

#endif
