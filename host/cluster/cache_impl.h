/*
 * Private: the cache's internals, shared by cache.c and snapshot.c.
 */
#ifndef KS_CLUSTER_CACHE_IMPL_H
#define KS_CLUSTER_CACHE_IMPL_H

#include "cache.h"
#include "node_info.h"
#include "base/strmap.h"

/* One NodeInfo of the cache: a real node, or a placeholder (node == NULL)
 * for pods that name a node the cache does not know. */
typedef struct ks_cache_node {
    ks_ni_t ni; /* first; indexed */
    ks_node_t *node; /* owned; NULL for a placeholder */
    const char *name; /* interned */
    /* Recency list: most recently changed first, so generations decrease
     * along it (upstream's nodeInfoList / headNode). */
    struct ks_cache_node *prev, *next;
} ks_cache_node_t;

/* A freed-later object (see ks_cache_t.graveyard). */
typedef struct ks_dead {
    void *obj;
    void (*free_fn)(void *obj);
} ks_dead_t;

struct ks_cache {
    ks_intern_t *in;
    ks_strmap_t nodes; /* name -> ks_cache_node_t* (also placeholders) */
    size_t n_real_nodes;
    ks_cache_node_t *head;
    ks_strmap_t pods;   /* uid -> ks_pod_rec_t* */
    ks_strmap_t images; /* image name -> (uintptr_t) number of nodes */
    uint64_t images_gen; /* bumped whenever image counts change */
    ks_strmap_t services;   /* namespace -> ks_svc_list_t* */
    ks_strmap_t namespaces; /* name -> ks_namespace_t* */
    /* Objects removed from the cache that an existing snapshot may still
     * point to: freed by the next ks_cache_update_snapshot() or at free. */
    ks_dead_t *graveyard;
    size_t n_dead, cap_dead;
};

/* Free everything in the graveyard. */
void ks_cache_bury(ks_cache_t *c);

#endif
