/*
 * A set of device IDs (driver, pool, device: interned strings compared by
 * address), open addressing. Owned by its user; not thread-safe for
 * writes, any number of readers.
 */
#include <stdlib.h>

#include "dra.h"

static uint32_t id_hash(dra_devid_t id)
{
    uint64_t h = (uint64_t)(uintptr_t)id.driver * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)id.pool * 0xc2b2ae3d27d4eb4full;
    h ^= (uint64_t)(uintptr_t)id.device * 0x165667b19e3779f9ull;
    h ^= h >> 29;
    return (uint32_t)h;
}

static int same(dra_devid_t a, dra_devid_t b)
{
    return a.device == b.device && a.pool == b.pool && a.driver == b.driver;
}

static int grow(dra_devset_t *s)
{
    uint32_t nc = s->cap ? s->cap * 2 : 64, i;
    dra_devid_t *ns = calloc(nc, sizeof *ns);
    if (ns == NULL)
        return -1;
    for (i = 0; i < s->cap; i++)
        if (s->slots[i].device != NULL) {
            uint32_t j = id_hash(s->slots[i]) & (nc - 1);
            while (ns[j].device != NULL)
                j = (j + 1) & (nc - 1);
            ns[j] = s->slots[i];
        }
    free(s->slots);
    s->slots = ns;
    s->cap = nc;
    return 0;
}

int dra_devset_add(dra_devset_t *s, dra_devid_t id)
{
    uint32_t j;
    if ((s->n + 1) * 2 > s->cap && grow(s) != 0)
        return -1;
    j = id_hash(id) & (s->cap - 1);
    while (s->slots[j].device != NULL) {
        if (same(s->slots[j], id))
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = id;
    s->n++;
    return 0;
}

int dra_devset_has(const dra_devset_t *s, dra_devid_t id)
{
    uint32_t j;
    if (s->n == 0)
        return 0;
    j = id_hash(id) & (s->cap - 1);
    while (s->slots[j].device != NULL) {
        if (same(s->slots[j], id))
            return 1;
        j = (j + 1) & (s->cap - 1);
    }
    return 0;
}

void dra_devset_clear(dra_devset_t *s)
{
    uint32_t i;
    for (i = 0; i < s->cap; i++)
        s->slots[i].device = NULL;
    s->n = 0;
}

void dra_devset_free(dra_devset_t *s)
{
    free(s->slots);
    s->slots = NULL;
    s->cap = s->n = 0;
}
