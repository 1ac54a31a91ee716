/*
 * The plugin's assume cache (upstream: the DRA manager's in-flight
 * allocations and assumed claims): the allocation Reserve chose for a
 * claim, pending until PreBind has written it, then kept until the claims
 * store shows the claim allocated (or the claim is gone), so that the
 * devices stay taken for the next pods meanwhile. Loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "dra_host.h"

#define ASSUME_BUCKETS 4096

/* Entries in an array (swap-removed), found through a chained index of
 * array positions by uid. */
struct dra_assume {
    dra_assumed_t *v;
    uint32_t n, cap;
    int32_t *head;  /* per bucket: first position, -1 none */
    int32_t *chain; /* per position: next position, -1 none */
    uint64_t version; /* bumped when an entry comes or goes */
};

uint64_t dra_assume_version(const dra_assume_t *a)
{
    return a->version;
}

static uint32_t bucket(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % ASSUME_BUCKETS;
}

dra_assume_t *dra_assume_new(void)
{
    dra_assume_t *a = calloc(1, sizeof *a);
    uint32_t i;
    if (a == NULL || (a->head = malloc(ASSUME_BUCKETS *
                                       sizeof *a->head)) == NULL) {
        free(a);
        return NULL;
    }
    for (i = 0; i < ASSUME_BUCKETS; i++)
        a->head[i] = -1;
    return a;
}

static void index_add(dra_assume_t *a, uint32_t at)
{
    uint32_t b = bucket(a->v[at].uid);
    a->chain[at] = a->head[b];
    a->head[b] = (int32_t)at;
}

static void index_remove(dra_assume_t *a, uint32_t at)
{
    int32_t *pp = &a->head[bucket(a->v[at].uid)];
    while (*pp != -1 && *pp != (int32_t)at)
        pp = &a->chain[*pp];
    if (*pp == (int32_t)at)
        *pp = a->chain[at];
}

static void assumed_clear(dra_assumed_t *e)
{
    uint32_t i;
    for (i = 0; i < e->n_res; i++) {
        free(e->res_names[i]);
        free(e->res_uids[i]);
    }
    free(e->res_names);
    free(e->res_uids);
    for (i = 0; i < e->n_results; i++)
        free((char *)e->results[i].request);
    free(e->results);
    free(e->ns);
    free(e->name);
    free(e->uid);
}

void dra_assume_free(dra_assume_t *a)
{
    uint32_t i;
    if (a == NULL)
        return;
    for (i = 0; i < a->n; i++)
        assumed_clear(&a->v[i]);
    free(a->v);
    free(a->head);
    free(a->chain);
    free(a);
}

static dra_assumed_t *find(const dra_assume_t *a, const char *uid)
{
    int32_t at;
    if (a->n == 0)
        return NULL;
    for (at = a->head[bucket(uid)]; at != -1; at = a->chain[at])
        if (strcmp(a->v[at].uid, uid) == 0)
            return &a->v[at];
    return NULL;
}

/* Remove position at (swap with the last). */
static void remove_at(dra_assume_t *a, uint32_t at)
{
    uint32_t last = a->n - 1;
    a->version++;
    index_remove(a, at);
    assumed_clear(&a->v[at]);
    if (at != last) {
        index_remove(a, last);
        a->v[at] = a->v[last];
        a->n--;
        index_add(a, at);
    } else {
        a->n--;
    }
}

const dra_assumed_t *dra_assume_get(const dra_assume_t *a, const char *uid)
{
    return find(a, uid);
}

int dra_assume_put(dra_assume_t *a, const dra_claim_t *c, const char *node,
                   const dra_claim_alloc_t *al)
{
    dra_assumed_t e;
    uint32_t i;
    dra_assume_drop(a, c->uid);
    memset(&e, 0, sizeof e);
    e.node = node;
    e.node_local = al->node_local;
    e.pending = 1;
    if ((e.ns = strdup(c->ns)) == NULL || (e.name = strdup(c->name)) == NULL ||
        (e.uid = strdup(c->uid)) == NULL ||
        (e.results = calloc(al->n_results ? al->n_results : 1,
                            sizeof *e.results)) == NULL)
        goto oom;
    for (i = 0; i < al->n_results; i++) {
        e.results[i].id = al->results[i].id;
        if ((e.results[i].request = strdup(al->results[i].request)) == NULL)
            goto oom;
        e.n_results = i + 1;
    }
    if (a->n == a->cap) {
        uint32_t nc = a->cap ? a->cap * 2 : 16;
        dra_assumed_t *nv = realloc(a->v, nc * sizeof *nv);
        int32_t *nch;
        if (nv == NULL)
            goto oom;
        a->v = nv;
        if ((nch = realloc(a->chain, nc * sizeof *nch)) == NULL)
            goto oom;
        a->chain = nch;
        a->cap = nc;
    }
    a->v[a->n] = e;
    index_add(a, a->n);
    a->n++;
    a->version++;
    return 0;
oom:
    assumed_clear(&e);
    return -1;
}

void dra_assume_done(dra_assume_t *a, const char *uid)
{
    dra_assumed_t *e = find(a, uid);
    if (e != NULL)
        e->pending = 0;
}

void dra_assume_reserved(dra_assume_t *a, const char *uid, const char *pod,
                         const char *pod_uid)
{
    dra_assumed_t *e = find(a, uid);
    char **nn, **nu;
    if (e == NULL)
        return;
    nn = realloc(e->res_names, (e->n_res + 1) * sizeof *nn);
    if (nn == NULL)
        return;
    e->res_names = nn;
    nu = realloc(e->res_uids, (e->n_res + 1) * sizeof *nu);
    if (nu == NULL)
        return;
    e->res_uids = nu;
    if ((nn[e->n_res] = strdup(pod)) == NULL)
        return;
    if ((nu[e->n_res] = strdup(pod_uid)) == NULL) {
        free(nn[e->n_res]);
        return;
    }
    e->n_res++;
}

int dra_assume_unreserved(dra_assume_t *a, const char *uid,
                          const char *pod_uid)
{
    dra_assumed_t *e = find(a, uid);
    uint32_t i;
    if (e == NULL)
        return 0;
    for (i = 0; i < e->n_res; i++)
        if (strcmp(e->res_uids[i], pod_uid) == 0) {
            free(e->res_names[i]);
            free(e->res_uids[i]);
            e->res_names[i] = e->res_names[e->n_res - 1];
            e->res_uids[i] = e->res_uids[e->n_res - 1];
            e->n_res--;
            return 1;
        }
    return 0;
}

void dra_assume_drop(dra_assume_t *a, const char *uid)
{
    dra_assumed_t *e = find(a, uid);
    if (e != NULL)
        remove_at(a, (uint32_t)(e - a->v));
}

void dra_assume_caught_up(dra_assume_t *a, const char *uid)
{
    dra_assumed_t *e = find(a, uid);
    if (e != NULL && !e->pending)
        remove_at(a, (uint32_t)(e - a->v));
}

int dra_assume_devices(const dra_assume_t *a, dra_devset_t *s)
{
    uint32_t i, j;
    for (i = 0; i < a->n; i++)
        for (j = 0; j < a->v[i].n_results; j++)
            if (dra_devset_add(s, a->v[i].results[j].id) != 0)
                return -1;
    return 0;
}
