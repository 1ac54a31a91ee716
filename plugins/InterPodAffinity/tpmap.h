/*
 * ks_tpmap: a hash map from a topology pair (key, value) to a count.
 *
 * Both strings are interned (types.h), so a pair is identified by its two
 * addresses and never compared by content. Open addressing with linear
 * probing; entries are never removed, a count that drops to zero stays in
 * the table (`nonzero` tracks how many counts are not zero, which is what
 * upstream's "delete when it reaches zero" maps report as their length).
 *
 * Shared by the InterPodAffinity and PodTopologySpread plugins; compiled
 * into each .so with hidden visibility.
 *
 * Ownership: the map owns its slot array; ks_tpmap_free releases it. The
 * strings are borrowed (the host keeps interned strings alive).
 * Threads: lookups (find, get) may run on several threads at once; any
 * insertion or update needs exclusive access.
 */
#ifndef KS_PLUGIN_TPMAP_H
#define KS_PLUGIN_TPMAP_H

#include <stdint.h>

typedef struct ks_tpmap_slot {
    const char *key;   /* NULL: empty slot */
    const char *value; /* may be NULL when the map is used as a set of keys */
    int64_t count;
} ks_tpmap_slot_t;

typedef struct ks_tpmap {
    ks_tpmap_slot_t *slots;
    uint32_t cap;     /* 0 or a power of two */
    uint32_t used;    /* slots holding a pair */
    uint32_t nonzero; /* pairs whose count is not zero */
} ks_tpmap_t;

/* An empty map (no allocation). */
void ks_tpmap_init(ks_tpmap_t *m);
/* Release the slots; the map is empty afterwards. */
void ks_tpmap_free(ks_tpmap_t *m);
/* Make room for `n` pairs without rehashing; 0 or -1 on ENOMEM. */
int ks_tpmap_reserve(ks_tpmap_t *m, uint32_t n);
/* Copy `src` into `dst` (which must not hold slots); 0 or -1 on ENOMEM. */
int ks_tpmap_clone(ks_tpmap_t *dst, const ks_tpmap_t *src);

/* The slot of (key, value), or NULL when the pair was never inserted. */
ks_tpmap_slot_t *ks_tpmap_find(const ks_tpmap_t *m, const char *key,
                               const char *value);
/* The count of (key, value); 0 when absent. */
int64_t ks_tpmap_get(const ks_tpmap_t *m, const char *key, const char *value);
/* Add `delta` to the count of (key, value), inserting the pair with count 0
 * first when absent. Writes the new count to *out (may be NULL). Returns 1
 * when the pair was inserted, 0 when it existed, -1 on ENOMEM. */
int ks_tpmap_add(ks_tpmap_t *m, const char *key, const char *value,
                 int64_t delta, int64_t *out);
/* Add every non-zero count of `src` to `dst` (per-worker partial counts
 * into the whole). 0, or -1 on ENOMEM (dst then holds part of them). */
int ks_tpmap_merge(ks_tpmap_t *dst, const ks_tpmap_t *src);

#endif /* KS_PLUGIN_TPMAP_H */
