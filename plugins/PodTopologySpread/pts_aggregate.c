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
    free(a->held.keys);
    free(a->held.counts);
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
    pts_tab_free(&aggs->tab);
}

/* Bytes an aggregate holds beyond its signature. */
static size_t pts_agg_bytes(const pts_agg_t *a)
{
    return (size_t)a->held.cap * (sizeof *a->held.keys +
                                  sizeof *a->held.counts) +
           ((size_t)a->counts.cap + a->nodes.cap) * sizeof(ks_tpmap_slot_t);
}

/* A new, empty slot when the budget allows one (NULL otherwise or on
 * ENOMEM: the caller replaces the least recently used one). */
static pts_agg_t *pts_agg_new_slot(pts_aggs_t *aggs)
{
    size_t held = pts_tab_bytes(&aggs->tab);
    pts_agg_t **arr, *a;
    uint32_t i;
    for (i = 0; i < aggs->n_slots; i++)
        held += pts_agg_bytes(aggs->slots[i]);
    if (aggs->n_slots >= PTS_AGG_MIN_SLOTS &&
        (aggs->n_slots >= PTS_AGG_MAX_SLOTS || held > PTS_AGG_BUDGET))
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
static int pts_agg_init(pts_plugin_t *pl, pts_agg_t *a,
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
        if ((y->tab_key = pts_tab_key(&pl->aggs.tab, y->key)) < 0) {
            pts_agg_clear(a);
            return -1; /* too many keys: counted directly */
        }
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

/* --- the sparse map of held counts ---------------------------------------- */

static uint32_t sp_hash(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x7feb352dU;
    k ^= k >> 15;
    k *= 0x846ca68bU;
    k ^= k >> 16;
    return k;
}

static int32_t sp_get(const pts_agg_sparse_t *m, uint32_t key)
{
    uint32_t i;
    if (m->cap == 0)
        return 0;
    for (i = sp_hash(key) & (m->cap - 1); m->keys[i] != 0;
         i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key)
            return m->counts[i];
    return 0;
}

static int sp_grow(pts_agg_sparse_t *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 64, i;
    uint32_t *k = calloc(cap, sizeof *k);
    int32_t *c = malloc(cap * sizeof *c);
    if (k == NULL || c == NULL) {
        free(k);
        free(c);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        uint32_t j;
        if (m->keys[i] == 0)
            continue;
        for (j = sp_hash(m->keys[i]) & (cap - 1); k[j] != 0;
             j = (j + 1) & (cap - 1))
            ;
        k[j] = m->keys[i];
        c[j] = m->counts[i];
    }
    free(m->keys);
    free(m->counts);
    m->keys = k;
    m->counts = c;
    m->cap = cap;
    return 0;
}

/* Set the count of `key` (0 removes it). 0, or -1 on ENOMEM. */
static int sp_set(pts_agg_sparse_t *m, uint32_t key, int32_t count)
{
    uint32_t i, mask;
    if (count != 0 && (m->used + 1) * 2 > m->cap && sp_grow(m) != 0)
        return -1;
    if (m->cap == 0)
        return 0; /* nothing held, nothing to remove */
    mask = m->cap - 1;
    for (i = sp_hash(key) & mask; m->keys[i] != 0 && m->keys[i] != key;
         i = (i + 1) & mask)
        ;
    if (m->keys[i] == 0) {
        if (count != 0) {
            m->keys[i] = key;
            m->counts[i] = count;
            m->used++;
        }
        return 0;
    }
    if (count != 0) {
        m->counts[i] = count;
        return 0;
    }
    /* removal: shift back the entries of the probe run after it */
    m->used--;
    for (;;) {
        uint32_t j = i, h;
        m->keys[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (m->keys[j] == 0)
                return 0;
            h = sp_hash(m->keys[j]) & mask;
            /* j's entry may move to i when its home is not in (i, j] */
            if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
                break;
        }
        m->keys[i] = m->keys[j];
        m->counts[i] = m->counts[j];
        i = j;
    }
}

static void sp_clear(pts_agg_sparse_t *m)
{
    if (m->cap > 0)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->used = 0;
}

/* --- counting ---------------------------------------------------------------- */

/* Whether position i can count for `a` at all: a node, with a label for
 * every constraint's key unless missing keys read as "". */
static int pts_agg_node_counts(const pts_agg_t *a, const pts_nodetab_t *t,
                               uint32_t i)
{
    uint32_t k;
    if (!t->nodes[i].present)
        return 0;
    if (a->mode != PTS_AGG_PRESCORE_ANY)
        for (k = 0; k < a->n_cons; k++)
            if (pts_tab_value(t, i, a->cons[k].tab_key) == NULL)
                return 0;
    return 1;
}

/* The value a counting position i (pts_agg_node_counts) counts under for
 * constraint j, or NULL when the constraint does not count it (a taint
 * the policy honours, or hostname in a PreScore mode). */
static const char *pts_agg_value(const pts_plugin_t *pl, const pts_agg_t *a,
                                 const pts_nodetab_t *t, uint32_t i,
                                 uint32_t j)
{
    const pts_agg_cons_t *c = &a->cons[j];
    const char *v;
    if (c->skip || (c->taints_honor && !t->nodes[i].untainted))
        return NULL;
    v = pts_tab_value(t, i, c->tab_key);
    return v ? v : pl->empty;
}

/* A skipped (hostname, PreScore) constraint's count at position i for
 * Score: the matching pods of whatever NodeInfo is there, whatever the
 * node's labels, taints or inclusion (Score counts a node's own pods so).
 * Kept in `held` only, never in the pair maps. */
static int32_t pts_agg_own_count(const pts_agg_t *a, const pts_nodetab_t *t,
                                 uint32_t i, uint32_t j)
{
    if (t->ni[i] == NULL || !t->nodes[i].has_pods)
        return 0;
    return (int32_t)pts_count_matching(t->ni[i], &a->cons[j].sel, a->ns);
}

/* Re-count position i (its facts unchanged since the aggregate's stamp):
 * the counts move by the difference. 0, or -1 on ENOMEM. */
static int pts_agg_recount(const pts_plugin_t *pl, pts_agg_t *a,
                           const pts_nodetab_t *t, uint32_t i)
{
    uint32_t j;
    int counts = pts_agg_node_counts(a, t, i);
    for (j = 0; j < a->n_cons; j++) {
        const char *v;
        uint32_t key = i * a->n_cons + j + 1;
        int32_t old, now;
        if (a->cons[j].skip) {
            now = pts_agg_own_count(a, t, i, j);
            if (now != sp_get(&a->held, key) &&
                sp_set(&a->held, key, now) != 0)
                return -1;
            continue;
        }
        if (!counts || (v = pts_agg_value(pl, a, t, i, j)) == NULL)
            continue;
        old = sp_get(&a->held, key);
        now = (int32_t)pts_count_matching(t->ni[i], &a->cons[j].sel,
                                          a->ns);
        if (now == old)
            continue;
        if (sp_set(&a->held, key, now) != 0 ||
            ks_tpmap_add(&a->counts, a->cons[j].key, v, now - old, NULL) < 0)
            return -1;
    }
    return 0;
}

/* The nodes per value of one constraint while pts_agg_build walks them:
 * most constraints have a few values (zones) shared by many nodes, so
 * the first PTS_TALLY_VALUES values are counted here, compared by
 * address (interned), and added to the map once at the end; more values
 * (hostname) go to the map node by node. */
#define PTS_TALLY_VALUES 8

typedef struct pts_tally {
    const char *value[PTS_TALLY_VALUES];
    int64_t nodes[PTS_TALLY_VALUES];
    uint32_t n;
} pts_tally_t;

/* One node of value v for constraint key `key`. 0, or -1 on ENOMEM. */
static inline int pts_tally_add(pts_tally_t *t, ks_tpmap_t *m,
                                const char *key, const char *v)
{
    uint32_t k;
    for (k = 0; k < t->n; k++)
        if (t->value[k] == v) {
            t->nodes[k]++;
            return 0;
        }
    if (t->n < PTS_TALLY_VALUES) {
        t->value[t->n] = v;
        t->nodes[t->n++] = 1;
        return 0;
    }
    return ks_tpmap_add(m, key, v, 1, NULL) < 0 ? -1 : 0;
}

/* Count every node from scratch for constraint j, a constraint at a time
 * (its fields stay in registers over the nodes). 0, or -1 on ENOMEM. */
static int pts_agg_build_one(const pts_plugin_t *pl, pts_agg_t *a,
                             const pts_nodetab_t *t, uint32_t j)
{
    const pts_agg_cons_t *c = &a->cons[j];
    pts_tally_t tally;
    uint32_t i, k;
    if (c->skip) {
        /* no pairs (pts_agg_value: NULL for every node); each node's own
         * count for Score */
        for (i = 0; i < t->n; i++) {
            int32_t now = pts_agg_own_count(a, t, i, j);
            if (now != 0 && sp_set(&a->held, i * a->n_cons + j + 1, now) != 0)
                return -1;
        }
        return 0;
    }
    tally.n = 0;
    for (i = 0; i < t->n; i++) {
        const char *v;
        int32_t now;
        /* pts_agg_value, with c->skip tested once above: calling it here
         * re-reads the constraint per node (6% more instructions for a
         * build at 130,000 nodes) */
        if (!pts_agg_node_counts(a, t, i) ||
            (c->taints_honor && !t->nodes[i].untainted))
            continue;
        v = pts_tab_value(t, i, c->tab_key);
        if (v == NULL)
            v = pl->empty;
        if (pts_tally_add(&tally, &a->nodes, c->key, v) != 0)
            return -1;
        if (!t->nodes[i].has_pods)
            continue; /* most nodes of a new cluster: nothing to count */
        now = (int32_t)pts_count_matching(t->ni[i], &c->sel, a->ns);
        if (now != 0 &&
            (sp_set(&a->held, i * a->n_cons + j + 1, now) != 0 ||
             ks_tpmap_add(&a->counts, c->key, v, now, NULL) < 0))
            return -1;
    }
    for (k = 0; k < tally.n; k++)
        if (ks_tpmap_add(&a->nodes, c->key, tally.value[k], tally.nodes[k],
                         NULL) < 0)
            return -1;
    return 0;
}

/* Count every node from scratch. 0, or -1 on ENOMEM. */
static int pts_agg_build(const pts_plugin_t *pl, pts_agg_t *a,
                         const pts_nodetab_t *t)
{
    uint32_t j;
    ks_tpmap_free(&a->counts);
    ks_tpmap_free(&a->nodes);
    sp_clear(&a->held);
    if ((uint64_t)t->n * a->n_cons >= UINT32_MAX)
        return -1; /* positions do not fit the map's keys */
    for (j = 0; j < a->n_cons; j++)
        if (pts_agg_build_one(pl, a, t, j) != 0)
            return -1;
    return 0;
}

/* Bring `a` up to date with the node table: the positions logged since
 * its stamp, or everything when the log does not reach back or a node's
 * facts changed since. 0, or -1 on ENOMEM. */
static int pts_agg_refresh(const pts_plugin_t *pl, pts_agg_t *a,
                           const pts_nodetab_t *t)
{
    const pts_tab_change_t *chg;
    uint32_t n_chg, i;
    if (a->stamp != 0 && a->stamp == t->stamp)
        return 0;
    if (a->stamp == 0 || pts_tab_changes_since(t, a->stamp, &chg, &n_chg) != 0)
        goto rebuild;
    for (i = 0; i < n_chg; i++)
        if (chg[i].pos >= t->n || t->nodes[chg[i].pos].facts > a->stamp)
            goto rebuild;
    /* a position changed twice is re-counted twice: the second finds no
     * difference */
    for (i = 0; i < n_chg; i++)
        if (pts_agg_recount(pl, a, t, chg[i].pos) != 0)
            return -1;
    a->stamp = t->stamp;
    return 0;
rebuild:
    if (pts_agg_build(pl, a, t) != 0)
        return -1;
    a->stamp = t->stamp;
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
    if (pts_tab_refresh(pl, &aggs->tab) != 0)
        return NULL;
    for (i = 0; i < aggs->n_slots && a == NULL; i++)
        if (pts_agg_matches(pl, aggs->slots[i], c, pod->ns, mode))
            a = aggs->slots[i];
    found = a != NULL;
    if (a == NULL && (a = pts_agg_new_slot(aggs)) == NULL) {
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
    if (pts_agg_refresh(pl, a, &aggs->tab) != 0) {
        pts_agg_clear(a); /* half-applied: start over next time */
        return NULL;
    }
    a->last_use = ++aggs->clock;
    return a;
}

const pts_nodetab_t *pts_agg_table(pts_plugin_t *pl,
                                   const pts_constraints_t *c, int *cols,
                                   uint32_t max)
{
    uint32_t j;
    if (c->n > max)
        return NULL;
    for (j = 0; j < c->n; j++)
        if ((cols[j] = pts_tab_key(&pl->aggs.tab,
                                   c->items[j].topology_key)) < 0)
            return NULL;
    return &pl->aggs.tab;
}

int32_t pts_agg_own(const pts_agg_t *a, uint32_t pos, uint32_t j)
{
    return sp_get(&a->held, pos * a->n_cons + j + 1);
}

uint32_t pts_agg_value_count(const pts_agg_t *a, uint32_t j)
{
    uint32_t i, n = 0;
    if (j >= a->n_cons || a->cons[j].skip || a->cons[j].taints_honor)
        return 0;
    for (i = 0; i < a->nodes.cap; i++)
        if (a->nodes.slots[i].key == a->cons[j].key &&
            a->nodes.slots[i].count > 0)
            n++;
    return n;
}

int pts_agg_has_pair(const pts_agg_t *a, const char *key, const char *value)
{
    return ks_tpmap_get(&a->nodes, key, value) > 0;
}
