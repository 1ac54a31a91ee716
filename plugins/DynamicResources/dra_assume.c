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

struct dra_assume {
    dra_assumed_t *v;
    uint32_t n, cap;
};

dra_assume_t *dra_assume_new(void)
{
    return calloc(1, sizeof(dra_assume_t));
}

static void assumed_clear(dra_assumed_t *e)
{
    uint32_t i;
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
    free(a);
}

static dra_assumed_t *find(const dra_assume_t *a, const char *uid)
{
    uint32_t i;
    for (i = 0; i < a->n; i++)
        if (strcmp(a->v[i].uid, uid) == 0)
            return &a->v[i];
    return NULL;
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
        if (nv == NULL)
            goto oom;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = e;
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

void dra_assume_drop(dra_assume_t *a, const char *uid)
{
    dra_assumed_t *e = find(a, uid);
    if (e == NULL)
        return;
    assumed_clear(e);
    *e = a->v[--a->n];
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

void dra_assume_prune(dra_t *d)
{
    dra_assume_t *a = d->assume;
    uint32_t i = 0;
    while (i < a->n) {
        dra_assumed_t *e = &a->v[i];
        const ks_object_t *o;
        char ub[512];
        int gone;
        if (e->pending) {
            i++;
            continue;
        }
        o = d->api->object_get(d->claims, e->ns, e->name);
        gone = o == NULL ||
               strcmp(dra_uid(d, o, ub, sizeof ub), e->uid) != 0 ||
               d->api->object_type(o, "status.allocation") != KS_FIELD_ABSENT;
        if (gone) {
            assumed_clear(e);
            *e = a->v[--a->n];
        } else {
            i++;
        }
    }
}
