/* Per-plugin execution time samples: per-thread shards, merged on scrape. */
#include "plugin_samples.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 32
#define MIN_SLOTS 64 /* a power of two */

typedef struct entry {
    uint64_t hash;
    const char *ext_point, *status; /* static strings */
    char *plugin;
    unsigned long long count;
    double sum;
    unsigned long long buckets[]; /* n_bounds, not cumulative */
} entry_t;

typedef struct shard {
    pthread_mutex_t mu;
    entry_t **slots; /* open addressing, linear probing */
    size_t cap, n;
    char pad[64]; /* keep neighbouring shards' locks off this cache line */
} shard_t;

struct ks_plugin_samples {
    ks_metric_t *hist;
    const double *bounds;
    size_t n_bounds;
    shard_t shards[SHARDS];
};

/* Which shard this thread uses, 1-based (0: none yet). Shared by every
 * collector: a thread keeps its number for life. */
static atomic_uint next_thread;
static _Thread_local unsigned thread_no;

ks_plugin_samples_t *ks_plugin_samples_new(ks_metric_t *hist)
{
    ks_plugin_samples_t *ps = calloc(1, sizeof *ps);
    size_t i;
    if (ps == NULL)
        return NULL;
    ps->hist = hist;
    ps->bounds = ks_metric_bounds(hist, &ps->n_bounds);
    for (i = 0; i < SHARDS; i++)
        pthread_mutex_init(&ps->shards[i].mu, NULL);
    return ps;
}

static void shard_clear(shard_t *sh)
{
    size_t i;
    for (i = 0; i < sh->cap; i++)
        if (sh->slots[i]) {
            free(sh->slots[i]->plugin);
            free(sh->slots[i]);
            sh->slots[i] = NULL;
        }
    sh->n = 0;
}

void ks_plugin_samples_free(ks_plugin_samples_t *ps)
{
    size_t i;
    if (ps == NULL)
        return;
    for (i = 0; i < SHARDS; i++) {
        shard_clear(&ps->shards[i]);
        free(ps->shards[i].slots);
        pthread_mutex_destroy(&ps->shards[i].mu);
    }
    free(ps);
}

/* FNV-1a over the plugin name, then the two label addresses. */
static uint64_t key_hash(const char *plugin, const char *ep, const char *st)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *plugin; plugin++) {
        h ^= (unsigned char)*plugin;
        h *= 0x100000001b3ull;
    }
    h ^= (uint64_t)(uintptr_t)ep * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)st * 0xc2b2ae3d27d4eb4full;
    return h ^ (h >> 29);
}

/* Double the table (or create it). 0, or -1 on ENOMEM. */
static int shard_grow(shard_t *sh)
{
    size_t cap = sh->cap ? sh->cap * 2 : MIN_SLOTS, i;
    entry_t **slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (i = 0; i < sh->cap; i++) {
        entry_t *e = sh->slots[i];
        size_t k;
        if (e == NULL)
            continue;
        for (k = e->hash & (cap - 1); slots[k]; k = (k + 1) & (cap - 1))
            ;
        slots[k] = e;
    }
    free(sh->slots);
    sh->slots = slots;
    sh->cap = cap;
    return 0;
}

/* The entry for a label tuple, created when missing; NULL on ENOMEM. */
static entry_t *shard_entry(const ks_plugin_samples_t *ps, shard_t *sh,
                            const char *plugin, const char *ep,
                            const char *st)
{
    uint64_t h = key_hash(plugin, ep, st);
    entry_t *e;
    size_t k;
    if (sh->cap == 0 && shard_grow(sh) != 0)
        return NULL;
    for (k = h & (sh->cap - 1); (e = sh->slots[k]) != NULL;
         k = (k + 1) & (sh->cap - 1))
        if (e->hash == h && e->ext_point == ep && e->status == st &&
            strcmp(e->plugin, plugin) == 0)
            return e;
    /* Missing: keep the table at most 3/4 full. */
    if ((sh->n + 1) * 4 > sh->cap * 3) {
        if (shard_grow(sh) != 0)
            return NULL;
        for (k = h & (sh->cap - 1); sh->slots[k]; k = (k + 1) & (sh->cap - 1))
            ;
    }
    e = calloc(1, sizeof *e + ps->n_bounds * sizeof e->buckets[0]);
    if (e == NULL || (e->plugin = strdup(plugin)) == NULL) {
        free(e);
        return NULL;
    }
    e->hash = h;
    e->ext_point = ep;
    e->status = st;
    sh->slots[k] = e;
    sh->n++;
    return e;
}

void ks_plugin_samples_record(ks_plugin_samples_t *ps, const char *plugin,
                              const char *ext_point, const char *status,
                              double seconds)
{
    shard_t *sh;
    entry_t *e;
    size_t i;
    if (thread_no == 0)
        thread_no = atomic_fetch_add(&next_thread, 1) + 1;
    sh = &ps->shards[(thread_no - 1) % SHARDS];
    pthread_mutex_lock(&sh->mu);
    e = shard_entry(ps, sh, plugin, ext_point, status);
    if (e) {
        e->count++;
        e->sum += seconds;
        for (i = 0; i < ps->n_bounds; i++)
            if (seconds <= ps->bounds[i]) {
                e->buckets[i]++;
                break;
            }
    }
    pthread_mutex_unlock(&sh->mu);
}

void ks_plugin_samples_flush(ks_plugin_samples_t *ps)
{
    size_t s, i;
    for (s = 0; s < SHARDS; s++) {
        shard_t *sh = &ps->shards[s];
        pthread_mutex_lock(&sh->mu);
        for (i = 0; i < sh->cap; i++) {
            entry_t *e = sh->slots[i];
            if (e)
                ks_metric_observe_many(ps->hist, e->buckets, e->count, e->sum,
                                       e->plugin, e->ext_point, e->status);
        }
        /* Emptied, not zeroed: names of retired plugins do not pile up. */
        shard_clear(sh);
        pthread_mutex_unlock(&sh->mu);
    }
}
