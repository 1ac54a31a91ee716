/* String-keyed hash map; see strmap.h. */
#include "base/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

void ks_strmap_destroy(ks_strmap_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

void ks_strmap_clear(ks_strmap_t *m)
{
    if (m->slots != NULL)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->count = 0;
}

static ks_strmap_slot_t *find(const ks_strmap_t *m, const char *key,
                              uint64_t h)
{
    size_t j;
    if (m->cap == 0)
        return NULL;
    j = h & (m->cap - 1);
    while (m->slots[j].key != NULL) {
        const ks_strmap_slot_t *s = &m->slots[j];
        if (s->hash == h && (s->key == key || strcmp(s->key, key) == 0))
            return &m->slots[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

void *ks_strmap_get(const ks_strmap_t *m, const char *key)
{
    ks_strmap_slot_t *s;
    if (m->count == 0)
        return NULL;
    s = find(m, key, ks_hash_str(key));
    return s ? s->val : NULL;
}

static int rehash(ks_strmap_t *m, size_t ncap)
{
    ks_strmap_slot_t *ns = calloc(ncap, sizeof(*ns));
    size_t i;
    if (ns == NULL)
        return -1;
    for (i = 0; i < m->cap; i++) {
        size_t j;
        if (m->slots[i].key == NULL)
            continue;
        j = m->slots[i].hash & (ncap - 1);
        while (ns[j].key != NULL)
            j = (j + 1) & (ncap - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int ks_strmap_reserve(ks_strmap_t *m, size_t n)
{
    size_t ncap = m->cap ? m->cap : 16;
    while (n * 10 > ncap * 7)
        ncap *= 2;
    if (ncap == m->cap)
        return 0;
    return rehash(m, ncap);
}

int ks_strmap_put(ks_strmap_t *m, const char *key, void *val)
{
    uint64_t h = ks_hash_str(key);
    ks_strmap_slot_t *s = find(m, key, h);
    size_t j;
    if (s != NULL) {
        s->val = val;
        return 0;
    }
    if (ks_strmap_reserve(m, m->count + 1) != 0)
        return -1;
    j = h & (m->cap - 1);
    while (m->slots[j].key != NULL)
        j = (j + 1) & (m->cap - 1);
    m->slots[j].key = key;
    m->slots[j].val = val;
    m->slots[j].hash = h;
    m->count++;
    return 0;
}

void *ks_strmap_del(ks_strmap_t *m, const char *key)
{
    ks_strmap_slot_t *s;
    void *old;
    size_t i, j, mask;
    if (m->count == 0)
        return NULL;
    s = find(m, key, ks_hash_str(key));
    if (s == NULL)
        return NULL;
    old = s->val;
    mask = m->cap - 1;
    i = (size_t)(s - m->slots);
    /* backward-shift: pull later members of the probe run into the hole */
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (m->slots[j].key == NULL)
            break;
        home = m->slots[j].hash & mask;
        /* move j to i when its home is not in the cyclic range (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].key = NULL;
    m->slots[i].val = NULL;
    m->slots[i].hash = 0;
    m->count--;
    return old;
}
