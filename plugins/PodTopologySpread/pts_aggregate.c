/*
 * Incrementally maintained matching-pod counts per topology pair. See
 * pts_aggregate.h.
 */
#include "pts_aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "pts.h"

static void pts_agg_clear(pts_agg_t *a)
{
    free(a->cons);
    free(a->reqs);
    free(a->values);
    free(a->entries);
    free(a->contribs);
    ks_tpmap_free(&a->counts);
    ks_tpmap_free(&a->nodes);
    memset(a, 0, sizeof *a);
}

void pts_aggs_free(pts_aggs_t *aggs)
{
    uint32_t i;
    for (i = 0; i < aggs->n_slots; i++) {
        pts_agg_clear(aggs->slots[i]);
        free(aggs->slots[i]);
    }
    free(aggs->slots);
    aggs->slots = NULL;
    aggs->n_slots = 0;
    aggs->clock = 0;
}

/* A new, empty slot when the budget allows one (NULL otherwise or on
 * ENOMEM: the caller replaces the least recently used one). */
static pts_agg_t *pts_agg_new_slot(const pts_plugin_t *pl, pts_aggs_t *aggs,
                                   uint32_t n_cons)
{
    uint32_t n_nodes = pl->api->snapshot_num_nodes(pl->h);
    size_t per = (size_t)n_nodes * (sizeof(pts_agg_entry_t) +
                                    n_cons * sizeof(pts_agg_contrib_t));
    pts_agg_t **arr, *a;
    if (aggs->n_slots >= PTS_AGG_MIN_SLOTS &&
        (aggs->n_slots >= PTS_AGG_MAX_SLOTS ||
         per * (aggs->n_slots + 1) > PTS_AGG_BUDGET))
        return NULL;
    arr = realloc(aggs->slots, (aggs->n_slots + 1) * sizeof *arr);
    if (arr == NULL)
        return NULL;
    aggs->slots = arr;
    if ((a = calloc(1, sizeof *a)) == NULL)
        return NULL;
    aggs->slots[aggs->n_slots++] = a;
    return a;
}

/* Node inclusion must not depend on the pod (see the header). */
static int pts_agg_possible(const pts_constraints_t *c, const ks_pod_t *pod)
{
    const ks_node_affinity_t *na = pod->affinity.node_affinity;
    int has_affinity = pod->node_selector.n > 0 ||
                       (na != NULL && na->required != NULL);
    uint32_t i;
    for (i = 0; i < c->n; i++) {
        if (c->items[i].selector == NULL)
            return 0; /* counts nothing: nothing worth caching */
        if (c->items[i].affinity_policy == KS_POLICY_HONOR && has_affinity)
            return 0;
        if (c->items[i].taints_policy == KS_POLICY_HONOR &&
            pod->n_tolerations > 0)
            return 0;
    }
    return 1;
}

static int pts_sel_equal(const ks_label_selector_t *a,
                         const ks_label_selector_t *b)
{
    uint32_t i, j;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        const ks_requirement_t *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->n_values != y->n_values)
            return 0;
        for (j = 0; j < x->n_values; j++)
            if (x->values[j] != y->values[j])
                return 0;
    }
    return 1;
}

static int pts_agg_skip(const pts_plugin_t *pl, pts_agg_mode_t mode,
                        const char *key)
{
    return mode != PTS_AGG_PREFILTER && key == pl->hostname_key;
}

static int pts_agg_matches(const pts_plugin_t *pl, const pts_agg_t *a,
                           const pts_constraints_t *c, const char *ns,
                           pts_agg_mode_t mode)
{
    uint32_t i;
    if (!a->used || a->mode != mode || a->ns != ns || a->n_cons != c->n)
        return 0;
    for (i = 0; i < c->n; i++) {
        const pts_constraint_t *x = &c->items[i];
        const pts_agg_cons_t *y = &a->cons[i];
        if (y->key != x->topology_key ||
            y->affinity_honor != (x->affinity_policy == KS_POLICY_HONOR) ||
            y->taints_honor != (x->taints_policy == KS_POLICY_HONOR) ||
            y->skip != pts_agg_skip(pl, mode, x->topology_key) ||
            !pts_sel_equal(&y->sel, x->selector))
            return 0;
    }
    return 1;
}

/* Make `a` the (empty) aggregate of `c`. */
static int pts_agg_init(const pts_plugin_t *pl, pts_agg_t *a,
                        const pts_constraints_t *c, const char *ns,
                        pts_agg_mode_t mode)
{
    uint32_t i, j, n_reqs = 0, n_values = 0, r = 0, v = 0;

    pts_agg_clear(a);
    for (i = 0; i < c->n; i++) {
        n_reqs += c->items[i].selector->n;
        for (j = 0; j < c->items[i].selector->n; j++)
            n_values += c->items[i].selector->reqs[j].n_values;
    }
    a->cons = calloc(c->n, sizeof *a->cons);
    a->reqs = calloc(n_reqs ? n_reqs : 1, sizeof *a->reqs);
    a->values = calloc(n_values ? n_values : 1, sizeof *a->values);
    if (a->cons == NULL || a->reqs == NULL || a->values == NULL) {
        pts_agg_clear(a);
        return -1;
    }
    for (i = 0; i < c->n; i++) {
        const pts_constraint_t *x = &c->items[i];
        pts_agg_cons_t *y = &a->cons[i];
        y->key = x->topology_key;
        y->affinity_honor = x->affinity_policy == KS_POLICY_HONOR;
        y->taints_honor = x->taints_policy == KS_POLICY_HONOR;
        y->skip = pts_agg_skip(pl, mode, x->topology_key);
        y->sel.reqs = &a->reqs[r];
        y->sel.n = x->selector->n;
        for (j = 0; j < x->selector->n; j++) {
            ks_requirement_t *q = &a->reqs[r++];
            *q = x->selector->reqs[j];
            if (q->n_values > 0)
                memcpy(&a->values[v], q->values,
                       q->n_values * sizeof *a->values);
            q->values = &a->values[v];
            v += q->n_values;
        }
    }
    a->n_cons = c->n;
    a->ns = ns;
    a->mode = mode;
    a->used = 1;
    return 0;
}

static int pts_agg_grow(pts_agg_t *a, uint32_t n)
{
    pts_agg_entry_t *e;
    pts_agg_contrib_t *k;
    if (n <= a->cap)
        return 0;
    e = realloc(a->entries, n * sizeof *e);
    if (e == NULL)
        return -1;
    a->entries = e;
    k = realloc(a->contribs, (size_t)n * a->n_cons * sizeof *k);
    if (k == NULL)
        return -1;
    a->contribs = k;
    memset(e + a->cap, 0, (n - a->cap) * sizeof *e);
    memset(k + (size_t)a->cap * a->n_cons, 0,
           (size_t)(n - a->cap) * a->n_cons * sizeof *k);
    a->cap = n;
    return 0;
}

static int pts_agg_apply(pts_agg_t *a, const pts_agg_contrib_t *k,
                         int64_t sign)
{
    uint32_t j;
    for (j = 0; j < a->n_cons; j++) {
        if (k[j].value == NULL)
            continue;
        if (ks_tpmap_add(&a->counts, a->cons[j].key, k[j].value,
                         sign * k[j].count, NULL) < 0 ||
            ks_tpmap_add(&a->nodes, a->cons[j].key, k[j].value, sign, NULL) < 0)
            return -1;
    }
    return 0;
}

/* No NoSchedule/NoExecute taint at all (the pod tolerates none). */
static int pts_node_untainted(const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < node->n_taints; i++)
        if (node->taints[i].effect == KS_EFFECT_NO_SCHEDULE ||
            node->taints[i].effect == KS_EFFECT_NO_EXECUTE)
            return 0;
    return 1;
}

/* What node `ni` contributes, per constraint. */
static void pts_agg_contrib(const pts_plugin_t *pl, const pts_agg_t *a,
                            const ks_node_info_t *ni, pts_agg_contrib_t *k)
{
    const ks_node_t *node = ni->node;
    int require_all = a->mode != PTS_AGG_PRESCORE_ANY;
    int untainted = -1;
    uint32_t j;

    memset(k, 0, a->n_cons * sizeof *k);
    if (node == NULL)
        return;
    if (require_all)
        for (j = 0; j < a->n_cons; j++)
            if (ks_labels_get_interned(&node->labels, a->cons[j].key) == NULL)
                return;
    for (j = 0; j < a->n_cons; j++) {
        const pts_agg_cons_t *c = &a->cons[j];
        const char *value;
        if (c->skip)
            continue;
        if (c->taints_honor) {
            if (untainted < 0)
                untainted = pts_node_untainted(node);
            if (!untainted)
                continue;
        }
        value = ks_labels_get_interned(&node->labels, c->key);
        k[j].value = value ? value : pl->empty;
        k[j].count = pts_count_matching(ni, &c->sel, a->ns);
    }
}

/* Constraint sets up to this size refresh a node by the difference of
 * its contributions (pts_agg_refresh_one). */
#define PTS_AGG_DELTA_CONS 16

/* Bring entry i up to date with NodeInfo ni (NULL: none). 0, or -1. */
static int pts_agg_refresh_one(const pts_plugin_t *pl, pts_agg_t *a,
                               uint32_t i, const ks_node_info_t *ni)
{
    pts_agg_entry_t *e = &a->entries[i];
    pts_agg_contrib_t *k = &a->contribs[(size_t)i * a->n_cons];
    if (ni != NULL && e->ni == ni && ni->generation != 0 &&
        e->generation == ni->generation)
        return 0;
    if (e->ni != NULL && ni != NULL && a->n_cons <= PTS_AGG_DELTA_CONS) {
        /* The node's new contribution against its old one: a pair that
         * stays only moves its count by the difference (a pod of another
         * workload came or went: nothing), a pair that changed leaves and
         * the new one comes. */
        pts_agg_contrib_t old[PTS_AGG_DELTA_CONS];
        uint32_t j;
        memcpy(old, k, a->n_cons * sizeof *k);
        pts_agg_contrib(pl, a, ni, k);
        for (j = 0; j < a->n_cons; j++) {
            const char *key = a->cons[j].key;
            if (old[j].value == k[j].value) {
                int64_t d = k[j].count - old[j].count;
                if (k[j].value != NULL && d != 0 &&
                    ks_tpmap_add(&a->counts, key, k[j].value, d, NULL) < 0)
                    return -1;
                continue;
            }
            if (old[j].value != NULL &&
                (ks_tpmap_add(&a->counts, key, old[j].value, -old[j].count,
                              NULL) < 0 ||
                 ks_tpmap_add(&a->nodes, key, old[j].value, -1, NULL) < 0))
                return -1;
            if (k[j].value != NULL &&
                (ks_tpmap_add(&a->counts, key, k[j].value, k[j].count,
                              NULL) < 0 ||
                 ks_tpmap_add(&a->nodes, key, k[j].value, 1, NULL) < 0))
                return -1;
        }
        e->ni = ni;
        e->generation = ni->generation;
        return 0;
    }
    if (e->ni != NULL && pts_agg_apply(a, k, -1) != 0)
        return -1;
    if (ni == NULL) {
        memset(k, 0, a->n_cons * sizeof *k);
        e->ni = NULL;
        return 0;
    }
    pts_agg_contrib(pl, a, ni, k);
    if (pts_agg_apply(a, k, 1) != 0)
        return -1;
    e->ni = ni;
    e->generation = ni->generation;
    return 0;
}

/* Bring `a` up to date with the snapshot: only the NodeInfos the host
 * says it refreshed since the last time (snapshot_changes, ABI 1.2), else
 * a walk over every node checking its generation. */
static int pts_agg_refresh(const pts_plugin_t *pl, pts_agg_t *a)
{
    const ks_host_api_t *api = pl->api;
    uint32_t n, i, n_chg = 0;
    const ks_node_info_t *const *nodes = api->snapshot_nodes(pl->h, &n);
    const uint32_t *chg = NULL;
    uint64_t version = 0;
    int have = KS_API_HAS(api, snapshot_changes);

    if (have)
        version = api->snapshot_changes(pl->h, a->version, &chg, &n_chg);
    if (have && a->have_version && chg != NULL && n == a->n_entries) {
        for (i = 0; i < n_chg; i++)
            if (chg[i] < n &&
                pts_agg_refresh_one(pl, a, chg[i], nodes[chg[i]]) != 0)
                return -1;
        a->version = version;
        return 0;
    }
    a->have_version = 0;
    if (pts_agg_grow(a, n) != 0)
        return -1;
    for (i = 0; i < n; i++)
        if (pts_agg_refresh_one(pl, a, i, nodes[i]) != 0)
            return -1;
    /* nodes that left the snapshot */
    for (i = n; i < a->n_entries; i++) {
        pts_agg_entry_t *e = &a->entries[i];
        pts_agg_contrib_t *k = &a->contribs[(size_t)i * a->n_cons];
        if (e->ni != NULL && pts_agg_apply(a, k, -1) != 0)
            return -1;
        memset(k, 0, a->n_cons * sizeof *k);
        e->ni = NULL;
    }
    a->n_entries = n;
    a->version = version;
    a->have_version = have && version != 0;
    return 0;
}

pts_agg_t *pts_agg_get(pts_plugin_t *pl, const pts_constraints_t *c,
                       const ks_pod_t *pod, pts_agg_mode_t mode)
{
    pts_aggs_t *aggs = &pl->aggs;
    pts_agg_t *a = NULL;
    uint32_t i;
    int found;

    if (c->n == 0 || !pts_agg_possible(c, pod))
        return NULL;
    for (i = 0; i < aggs->n_slots && a == NULL; i++)
        if (pts_agg_matches(pl, aggs->slots[i], c, pod->ns, mode))
            a = aggs->slots[i];
    found = a != NULL;
    if (a == NULL && (a = pts_agg_new_slot(pl, aggs, c->n)) == NULL) {
        if (aggs->n_slots == 0)
            return NULL; /* out of memory */
        a = aggs->slots[0];
        for (i = 1; i < aggs->n_slots; i++)
            if (!aggs->slots[i]->used ||
                (a->used && aggs->slots[i]->last_use < a->last_use))
                a = aggs->slots[i];
    }
    if (!found && pts_agg_init(pl, a, c, pod->ns, mode) != 0)
        return NULL;
    if (pts_agg_refresh(pl, a) != 0) {
        pts_agg_clear(a); /* half-applied: start over next time */
        return NULL;
    }
    a->last_use = ++aggs->clock;
    return a;
}

int pts_agg_has_pair(const pts_agg_t *a, const char *key, const char *value)
{
    return ks_tpmap_get(&a->nodes, key, value) > 0;
}
