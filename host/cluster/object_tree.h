/*
 * Private: a compact, immutable copy of a JSON document, the form in
 * which the stores of declared cluster objects keep them (object_store.h).
 * A jansson tree costs about ten times its text (a hash table per object,
 * one allocation per value and key); this is one allocation: 16 bytes per
 * value plus the keys' and strings' bytes (NUL-terminated), about twice
 * the compact JSON text.
 *
 * Layout: node 0 is the root; the members of a map or array are
 * consecutive nodes (first .. first + n), so a lookup is a scan of one
 * small run. Strings with an embedded NUL end at it.
 *
 * Immutable once built: any number of threads may read one tree.
 */
#ifndef KS_CLUSTER_OBJECT_TREE_H
#define KS_CLUSTER_OBJECT_TREE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ks_onode_type {
    KS_ON_NULL = 0,
    KS_ON_STRING,
    KS_ON_INT,
    KS_ON_REAL,
    KS_ON_TRUE,
    KS_ON_FALSE,
    KS_ON_ARRAY,
    KS_ON_MAP
} ks_onode_type_t;

typedef struct ks_onode {
    uint32_t type; /* ks_onode_type_t */
    uint32_t key;  /* a map member's key (string offset); 0 otherwise */
    union {
        int64_t i;  /* KS_ON_INT */
        double r;   /* KS_ON_REAL */
        uint32_t s; /* KS_ON_STRING: string offset */
        struct {
            uint32_t first, n;
        } kids; /* KS_ON_ARRAY, KS_ON_MAP */
    } v;
} ks_onode_t;

typedef struct ks_otree ks_otree_t;

/* The tree of `j` (any JSON value), NULL when out of memory or when it
 * nests deeper than max_depth or holds more than 2^31 bytes. */
ks_otree_t *ks_otree_from_json(const json_t *j, int max_depth);
void ks_otree_free(ks_otree_t *t);
/* Bytes the tree takes (its one allocation). */
size_t ks_otree_bytes(const ks_otree_t *t);

const ks_onode_t *ks_otree_root(const ks_otree_t *t);
/* A map's member `key`, NULL when absent or `map` is not a map. The last
 * of repeated keys wins, as jansson kept them. */
const ks_onode_t *ks_onode_get(const ks_otree_t *t, const ks_onode_t *map,
                               const char *key);
/* An array's (or map's) i-th member, NULL when out of range or not a
 * container. */
const ks_onode_t *ks_onode_at(const ks_otree_t *t, const ks_onode_t *c,
                              size_t i);
/* The text of a string node; "" for other nodes. */
const char *ks_onode_str(const ks_otree_t *t, const ks_onode_t *n);
/* The key of a map member ("" for a node that is none). */
const char *ks_onode_key(const ks_otree_t *t, const ks_onode_t *n);

/* The document again as a jansson value (a new reference; a map's
 * repeated keys keep the last), NULL when out of memory. */
json_t *ks_otree_to_json(const ks_otree_t *t);

#endif /* KS_CLUSTER_OBJECT_TREE_H */
