/*
 * ks_tpmap: topology pair -> count, keyed by the addresses of two interned
 * strings. See tpmap.h.
 */
#include "tpmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tpmap_hash(const char *key, const char *value)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)value * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

void ks_tpmap_init(ks_tpmap_t *m)
{
    memset(m, 0, sizeof *m);
}

void ks_tpmap_free(ks_tpmap_t *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Insert into a table known to have room and not to hold the pair. */
static ks_tpmap_slot_t *tpmap_place(ks_tpmap_slot_t *slots, uint32_t cap,
                                    const char *key, const char *value)
{
    uint32_t mask = cap - 1;
    uint32_t i = (uint32_t)tpmap_hash(key, value) & mask;
    while (slots[i].key != NULL)
        i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].value = value;
    slots[i].count = 0;
    return &slots[i];
}

static int tpmap_grow(ks_tpmap_t *m, uint32_t want)
{
    uint32_t cap = m->cap ? m->cap : 8;
    uint32_t i;
    ks_tpmap_slot_t *slots;

    /* keep the load factor at most 1/2 */
    while (cap / 2 < want) {
        if (cap > UINT32_MAX / 4)
            return -1;
        cap *= 2;
    }
    if (cap == m->cap)
        return 0;
    slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (i = 0; i < m->cap; i++) {
        ks_tpmap_slot_t *s = &m->slots[i];
        if (s->key != NULL)
            tpmap_place(slots, cap, s->key, s->value)->count = s->count;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int ks_tpmap_reserve(ks_tpmap_t *m, uint32_t n)
{
    return tpmap_grow(m, n);
}

int ks_tpmap_clone(ks_tpmap_t *dst, const ks_tpmap_t *src)
{
    ks_tpmap_init(dst);
    if (src->cap == 0)
        return 0;
    dst->slots = malloc((size_t)src->cap * sizeof *dst->slots);
    if (dst->slots == NULL)
        return -1;
    memcpy(dst->slots, src->slots, (size_t)src->cap * sizeof *dst->slots);
    dst->cap = src->cap;
    dst->used = src->used;
    dst->nonzero = src->nonzero;
    return 0;
}

ks_tpmap_slot_t *ks_tpmap_find(const ks_tpmap_t *m, const char *key,
                               const char *value)
{
    uint32_t mask, i;
    if (m->cap == 0)
        return NULL;
    mask = m->cap - 1;
    i = (uint32_t)tpmap_hash(key, value) & mask;
    for (;;) {
        ks_tpmap_slot_t *s = &m->slots[i];
        if (s->key == NULL)
            return NULL;
        if (s->key == key && s->value == value)
            return s;
        i = (i + 1) & mask;
    }
}

int64_t ks_tpmap_get(const ks_tpmap_t *m, const char *key, const char *value)
{
    const ks_tpmap_slot_t *s = ks_tpmap_find(m, key, value);
    return s ? s->count : 0;
}

int ks_tpmap_add(ks_tpmap_t *m, const char *key, const char *value,
                 int64_t delta, int64_t *out)
{
    ks_tpmap_slot_t *s = ks_tpmap_find(m, key, value);
    int inserted = 0;
    int64_t before;

    if (s == NULL) {
        if (tpmap_grow(m, m->used + 1) != 0)
            return -1;
        s = tpmap_place(m->slots, m->cap, key, value);
        m->used++;
        inserted = 1;
    }
    before = s->count;
    s->count += delta;
    if (before == 0 && s->count != 0)
        m->nonzero++;
    else if (before != 0 && s->count == 0)
        m->nonzero--;
    if (out != NULL)
        *out = s->count;
    return inserted;
}

int ks_tpmap_merge(ks_tpmap_t *dst, const ks_tpmap_t *src)
{
    uint32_t i;
    for (i = 0; i < src->cap; i++) {
        const ks_tpmap_slot_t *e = &src->slots[i];
        if (e->key != NULL && e->count != 0 &&
            ks_tpmap_add(dst, e->key, e->value, e->count, NULL) < 0)
            return -1;
    }
    return 0;
}
