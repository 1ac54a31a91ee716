/* Answers that expire (see ttl_cache.h). */
#include "ttl_cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"

typedef struct entry {
    int64_t expires;
    size_t len;
    char *key; /* after the value, in the same block */
    char val[];
} entry_t;

struct ks_ttl_cache {
    ks_strmap_t map; /* entry->key -> entry */
    size_t max;
};

ks_ttl_cache_t *ks_ttl_cache_new(size_t max_entries)
{
    ks_ttl_cache_t *c = calloc(1, sizeof *c);
    if (c)
        c->max = max_entries ? max_entries : 1;
    return c;
}

void ks_ttl_cache_free(ks_ttl_cache_t *c)
{
    size_t i;
    if (c == NULL)
        return;
    for (i = 0; i < c->map.cap; i++)
        if (c->map.slots[i].key)
            free(c->map.slots[i].val);
    ks_strmap_destroy(&c->map);
    free(c);
}

static void drop(ks_ttl_cache_t *c, entry_t *e)
{
    ks_strmap_del(&c->map, e->key);
    free(e);
}

const void *ks_ttl_cache_get(ks_ttl_cache_t *c, const char *key,
                             int64_t now_ms, size_t *len)
{
    entry_t *e = ks_strmap_get(&c->map, key);
    if (e == NULL)
        return NULL;
    if (e->expires <= now_ms) {
        drop(c, e);
        return NULL;
    }
    if (len)
        *len = e->len;
    return e->val;
}

/* Make room for one more: the expired entries, else the soonest to
 * expire. (Deleting shifts slots back, so each pass restarts.) */
static void make_room(ks_ttl_cache_t *c, int64_t now_ms)
{
    size_t i;
    entry_t *soonest = NULL;
    int again = 1;
    while (again && c->map.count >= c->max) {
        again = 0;
        for (i = 0; i < c->map.cap; i++) {
            entry_t *e = c->map.slots[i].val;
            if (c->map.slots[i].key == NULL || e->expires > now_ms)
                continue;
            drop(c, e);
            again = 1;
            break;
        }
    }
    if (c->map.count < c->max)
        return;
    for (i = 0; i < c->map.cap; i++) {
        entry_t *e = c->map.slots[i].val;
        if (c->map.slots[i].key &&
            (soonest == NULL || e->expires < soonest->expires))
            soonest = e;
    }
    if (soonest)
        drop(c, soonest);
}

int ks_ttl_cache_put(ks_ttl_cache_t *c, const char *key, const void *val,
                     size_t len, int64_t expires_ms, int64_t now_ms)
{
    size_t kl = strlen(key) + 1;
    entry_t *e = malloc(sizeof *e + len + 1 + kl), *old;
    if (e == NULL)
        return -1;
    e->expires = expires_ms;
    e->len = len;
    if (len)
        memcpy(e->val, val, len);
    e->val[len] = '\0';
    e->key = e->val + len + 1;
    memcpy(e->key, key, kl);
    if ((old = ks_strmap_get(&c->map, key)) != NULL)
        drop(c, old);
    else if (c->map.count >= c->max)
        make_room(c, now_ms);
    if (ks_strmap_put(&c->map, e->key, e) != 0) {
        free(e);
        return -1;
    }
    return 0;
}

size_t ks_ttl_cache_count(const ks_ttl_cache_t *c)
{
    return c->map.count;
}
