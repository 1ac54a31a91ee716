/*
 * The stores of cluster objects that plugins read (plugin.h, ABI 1.3:
 * ks_resource_ref_t, ks_store_t, ks_object_t): one store per
 * group/version/resource in the process, whichever plugins and profiles
 * declare it, registered when a plugin that declares it is loaded and kept
 * until the process ends (a store no plugin uses any more stays, empty or
 * not, and costs what it holds).
 *
 * An object is the JSON it was read as (the API server's JSON, or a
 * snapshot file's YAML converted as sigs.k8s.io/yaml does), kept as a
 * compact tree (object_tree.h), with its metadata (name, namespace, uid;
 * labels interned) taken out once when stored. Objects are immutable: ks_store_put replaces an object whole,
 * and the replaced one is freed at once.
 *
 * Threads: registration (ks_store_register) takes a lock and may run on
 * any thread; the store list is append-only and read without a lock. A
 * store's objects change (put, delete, clear) on the loop thread only,
 * never while a plugin callback runs (Filter and Score run while the loop
 * thread waits for them), so reads (get, list, count, the views) are safe
 * from any thread during a plugin callback.
 */
#ifndef KS_CLUSTER_OBJECT_STORE_H
#define KS_CLUSTER_OBJECT_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "cluster/object_tree.h"
#include "ksched/plugin.h"

/* A stored object (ks_object_t in the SDK). */
struct ks_object {
    ks_otree_t *tree; /* owned; never changed once stored */
    const char *ns;   /* metadata.namespace in the tree, or "" */
    const char *name;
    const char *uid;    /* metadata.uid in the tree, or "" */
    ks_labels_t labels; /* metadata.labels, interned (global table) */
    char *key;          /* "ns/name", in the object's block: the map key */
};

/* Is `ref` complete (every field a non-empty string)? 0, or KS_EINVAL
 * with the problem in err ("resources[i]: ..." is the caller's prefix). */
int ks_resource_ref_check(const ks_resource_ref_t *ref, ks_error_t *err);

/* The store of ref's group/version/resource, made (empty) when none exists
 * yet. KS_ECONFLICT when a store of that resource exists with another
 * kind; KS_ENOMEM. Any thread. */
int ks_store_register(const ks_resource_ref_t *ref, ks_store_t **out,
                      ks_error_t *err);
/* The store of that resource, NULL when none was registered. Any thread. */
ks_store_t *ks_store_find(const char *group, const char *version,
                          const char *resource);
/* The store whose objects have this apiVersion ("v1", "storage.k8s.io/v1":
 * matched by group only, whatever the version) and kind, NULL when none. */
ks_store_t *ks_store_find_kind(const char *api_version, const char *kind);
/* Every store, in registration order: ks_store_next(NULL) is the first. */
ks_store_t *ks_store_next(const ks_store_t *s);
/* A plugin that declares the store's resource was created for a profile
 * (the plugin is enabled, not merely loaded from a plugin directory): the
 * store is filled from the cluster from now on. A store no enabled plugin
 * declares gets no informer, so a loaded but unused plugin never needs
 * RBAC for what it would read. Any thread. */
void ks_store_set_wanted(ks_store_t *s);
int ks_store_wanted(const ks_store_t *s);
/* What the store holds (its strings are the store's own copies). */
const ks_resource_ref_t *ks_store_ref(const ks_store_t *s);

/* Store `obj` (a JSON object; the reference is taken over whatever the
 * outcome), replacing the object of the same namespace and name. `what`
 * names it in messages ("FILE: items[3]"). KS_ESCHEMA when it is not an
 * object or has no metadata.name; KS_ENOMEM. Loop thread. */
int ks_store_put(ks_store_t *s, json_t *obj, const char *what,
                 ks_error_t *err);
/* ks_store_put that hands the replaced object back instead of freeing
 * it (*old, NULL when there was none): the caller frees it with
 * ks_object_free once done (cluster events show it to QueueingHints).
 * The stored object always has "kind" and "apiVersion" (set from the
 * store's resource when the object has none, as in a list's items). */
int ks_store_replace(ks_store_t *s, json_t *obj, const char *what,
                     ks_object_t **old, ks_error_t *err);
/* Remove the object and hand it over (NULL when absent); free it with
 * ks_object_free. Loop thread. */
ks_object_t *ks_store_take(ks_store_t *s, const char *ns, const char *name);
void ks_object_free(ks_object_t *o);

/* The same from JSON text. KS_EPARSE when it does not parse. */
int ks_store_put_text(ks_store_t *s, const char *json, size_t len,
                      const char *what, ks_error_t *err);
/* Remove the object; 0, or KS_ENOTFOUND. Loop thread. */
int ks_store_delete(ks_store_t *s, const char *ns, const char *name);
/* Remove every object (a re-list starts so). Loop thread. */
void ks_store_clear(ks_store_t *s);
/* Synced: the source filled the store at least once (cluster mode: the
 * first list finished). Loop thread sets; any thread reads. */
void ks_store_set_synced(ks_store_t *s, int synced);
int ks_store_synced(const ks_store_t *s);

uint32_t ks_store_count(const ks_store_t *s);
/* Changes with every add, update, delete and clear (SDK store_version).
 * Thread-safe. */
uint64_t ks_store_version(const ks_store_t *s);
/* NULL ns is "". */
const ks_object_t *ks_store_get(const ks_store_t *s, const char *ns,
                                const char *name);
/* plugin.h object_list. */
uint32_t ks_store_list(const ks_store_t *s, const char *ns,
                       const ks_label_selector_t *sel, ks_object_fn fn,
                       void *ud);

/* ks_manifest_t's wants/take (cluster/objects.h) over these stores: a
 * snapshot file's object whose apiVersion's group and kind match a store
 * (ks_store_find_kind) is stored there. `ud` is unused. Loop thread. */
int ks_store_manifest_wants(void *ud, const char *api_version,
                            const char *kind);
int ks_store_manifest_take(void *ud, const char *api_version,
                           const char *kind, const char *json, size_t len,
                           const char *where, ks_error_t *err);

/* Tests: empty and forget every store (no plugin may hold one). */
void ks_stores_reset(void);

#endif /* KS_CLUSTER_OBJECT_STORE_H */
