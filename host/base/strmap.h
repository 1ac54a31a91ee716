/*
 * Private: an open-addressing hash map from strings to pointers (linear
 * probing, backward-shift deletion). Keys are compared by content and are
 * not copied: a key must stay valid while it is in the map (interned strings
 * do). Not thread-safe; concurrent readers are fine while nobody writes.
 */
#ifndef KS_BASE_STRMAP_H
#define KS_BASE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_strmap_slot {
    const char *key; /* NULL: empty */
    void *val;
    uint64_t hash;
} ks_strmap_slot_t;

typedef struct ks_strmap {
    ks_strmap_slot_t *slots;
    size_t cap; /* 0 or a power of two */
    size_t count;
} ks_strmap_t;

/* A zeroed ks_strmap_t is a valid empty map. */
void ks_strmap_destroy(ks_strmap_t *m);
void ks_strmap_clear(ks_strmap_t *m);
void *ks_strmap_get(const ks_strmap_t *m, const char *key);
/* Insert or replace; 0, or -1 on ENOMEM. */
int ks_strmap_put(ks_strmap_t *m, const char *key, void *val);
/* Remove; returns the old value or NULL. */
void *ks_strmap_del(ks_strmap_t *m, const char *key);
/* Make room for n entries without rehashing later; 0 or -1. */
int ks_strmap_reserve(ks_strmap_t *m, size_t n);

/* Iterate: for (i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
