/*
 * PodTopologySpread PreScore, Score and NormalizeScore (upstream v1.24.1
 * podtopologyspread/scoring.go).
 *
 * For each ScheduleAnyway constraint, a node scores
 *     count(node's domain) * log(domains + 2) + (maxSkew - 1)
 * summed over the constraints and rounded; hostname domains are counted on
 * the node itself. Nodes lacking a topology key are ignored (score 0) unless
 * only the system default constraints apply. NormalizeScore maps a raw
 * score s to 100 * (max + min - s) / max with integer division (100 for
 * every node when max is 0).
 */
#include "pts.h"
#include "pts_round.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PTS_PRESCORE_KEY "PreScore" PTS_NAME
#define PTS_BULK_CONS 16
#define PTS_SEEN_CONS 4
#define PTS_SEEN_VALUES 8 /* a power of two (pts_score_nodes' memo) */

typedef struct pts_prescore_state {
    pts_constraints_t cons;
    ks_tpmap_t ignored;  /* node names (value NULL) not scored */
    ks_tpmap_t pairs;    /* (key, value) -> matching pods, non-hostname keys */
    double *weights;     /* per constraint: log(domains + 2) */
    /* The plugin's node table when this PreScore refreshed it for the
     * cycle's snapshot (an aggregate counted, at most PTS_SEEN_CONS
     * constraints), and each constraint's column there: the bulk Score
     * reads a node's values from it (pts_tab_col_pos) instead of the node's
     * labels. NULL otherwise, and in clones. */
    const pts_nodetab_t *tab;
    int tab_col[PTS_SEEN_CONS];
    /* The aggregate PreScore refreshed, and its last_use then: while it
     * is unchanged (no pts_agg_get since), a hostname constraint's count
     * on a node is pts_agg_own at the node's table position. NULL
     * otherwise, and in clones. */
    const pts_agg_t *agg;
    uint64_t agg_use;
} pts_prescore_state_t;

static void pts_prescore_state_free(void *data)
{
    pts_prescore_state_t *s = data;
    if (s == NULL)
        return;
    pts_constraints_free(&s->cons);
    ks_tpmap_free(&s->ignored);
    ks_tpmap_free(&s->pairs);
    free(s->weights);
    free(s);
}

static void *pts_prescore_state_clone(const void *data)
{
    const pts_prescore_state_t *s = data;
    pts_prescore_state_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (pts_constraints_copy(&c->cons, &s->cons) != 0 ||
        ks_tpmap_clone(&c->ignored, &s->ignored) != 0 ||
        ks_tpmap_clone(&c->pairs, &s->pairs) != 0)
        goto fail;
    if (s->weights != NULL) {
        c->weights = malloc(s->cons.n * sizeof *c->weights);
        if (c->weights == NULL)
            goto fail;
        memcpy(c->weights, s->weights, s->cons.n * sizeof *c->weights);
    }
    return c;
fail:
    pts_prescore_state_free(c);
    return NULL;
}

/* Upstream initPreScoreState: ignored nodes, the candidate pairs and the
 * per-constraint normalising weights. `a`: the constraints' aggregate, or
 * NULL. */
static int pts_prescore_init(const pts_plugin_t *pl, pts_prescore_state_t *s,
                             const ks_node_info_t *const *nodes, uint32_t n,
                             int require_all, const pts_agg_t *a)
{
    uint32_t *sizes, i, j, n_ignored = 0;
    /* Without ignored nodes (require_all 0), the walk only collects each
     * constraint's values: it may stop once every constraint but
     * hostname's has met as many values as the whole snapshot has
     * (pts_agg_value_count). `open`: the constraints still short of
     * theirs. */
    uint32_t limit[PTS_SEEN_CONS], open = 0;
    int may_stop = !require_all && a != NULL && s->cons.n <= PTS_SEEN_CONS;
    /* Per constraint (the first PTS_SEEN_CONS), the values already added
     * to the pairs: most nodes share a few zones, and an interned value
     * compares by address, cheaper than the map. */
    const char *seen[PTS_SEEN_CONS][PTS_SEEN_VALUES];
    uint32_t n_seen[PTS_SEEN_CONS];

    memset(n_seen, 0, sizeof n_seen);
    memset(limit, 0, sizeof limit);
    for (j = 0; may_stop && j < s->cons.n; j++) {
        if (s->cons.items[j].topology_key == pl->hostname_key)
            continue; /* no values collected */
        limit[j] = pts_agg_value_count(a, j);
        if (limit[j] == 0)
            may_stop = 0; /* not known */
        open++;
    }
    if (open == 0)
        may_stop = 0; /* nothing to collect: the loop is short */
    sizes = calloc(s->cons.n, sizeof *sizes);
    s->weights = calloc(s->cons.n, sizeof *s->weights);
    if (sizes == NULL || s->weights == NULL) {
        free(sizes);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const ks_node_t *node = nodes[i]->node;
        if (node == NULL)
            continue;
        if (require_all && !pts_node_has_all_keys(node, &s->cons)) {
            if (ks_tpmap_add(&s->ignored, node->name, NULL, 1, NULL) < 0)
                goto oom;
            n_ignored++;
            continue;
        }
        for (j = 0; j < s->cons.n; j++) {
            const char *key = s->cons.items[j].topology_key;
            const char *value;
            int r;
            if (key == pl->hostname_key)
                continue; /* counted per node in Score */
            value = ks_labels_get_interned(&node->labels, key);
            if (value == NULL)
                value = pl->empty; /* upstream reads a missing label as "" */
            if (j < PTS_SEEN_CONS) {
                uint32_t v;
                for (v = 0; v < n_seen[j] && seen[j][v] != value; v++)
                    ;
                if (v < n_seen[j])
                    continue; /* added before */
            }
            r = ks_tpmap_add(&s->pairs, key, value, 0, NULL);
            if (r < 0)
                goto oom;
            if (r == 1) {
                sizes[j]++;
                /* may_stop only when j < PTS_SEEN_CONS */
                if (may_stop && sizes[j] == limit[j])
                    open--;
            }
            if (j < PTS_SEEN_CONS && n_seen[j] < PTS_SEEN_VALUES)
                seen[j][n_seen[j]++] = value;
        }
        if (may_stop && open == 0)
            break; /* every value met: the rest adds nothing */
    }
    for (j = 0; j < s->cons.n; j++) {
        uint32_t size = sizes[j];
        if (s->cons.items[j].topology_key == pl->hostname_key)
            size = n - n_ignored;
        s->weights[j] = log((double)size + 2);
    }
    free(sizes);
    return 0;
oom:
    free(sizes);
    return -1;
}

/* Count matching pods of every eligible node into the candidate pairs. */
static void pts_prescore_count(const pts_plugin_t *pl, pts_prescore_state_t *s,
                               const ks_pod_t *pod, int require_all)
{
    const ks_host_api_t *api = pl->api;
    uint32_t n_nodes, i, j;
    const ks_node_info_t *const *nodes = api->snapshot_nodes(pl->h, &n_nodes);

    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_node_t *node = ni ? ni->node : NULL;
        pts_inclusion_t memo = {-1, -1};
        if (node == NULL ||
            (require_all && !pts_node_has_all_keys(node, &s->cons)))
            continue;
        for (j = 0; j < s->cons.n; j++) {
            const pts_constraint_t *c = &s->cons.items[j];
            const char *value;
            ks_tpmap_slot_t *slot;
            if (!pts_node_included(&memo, c, pod, node))
                continue;
            value = ks_labels_get_interned(&node->labels, c->topology_key);
            slot = ks_tpmap_find(&s->pairs, c->topology_key,
                                 value ? value : pl->empty);
            if (slot == NULL)
                continue; /* no candidate node in this domain */
            slot->count += pts_count_matching(ni, c->selector, pod->ns);
        }
    }
}

/* The same from the instance's aggregate (see pts_aggregate.h). */
static void pts_prescore_from_aggregate(const pts_agg_t *a,
                                        pts_prescore_state_t *s)
{
    uint32_t i;
    for (i = 0; i < s->pairs.cap; i++) {
        ks_tpmap_slot_t *slot = &s->pairs.slots[i];
        if (slot->key != NULL)
            slot->count = ks_tpmap_get(&a->counts, slot->key, slot->value);
    }
}

ks_code_t pts_pre_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_node_info_t *const *nodes, uint32_t n,
                        ks_status_t *st)
{
    pts_plugin_t *pl = self;
    const ks_host_api_t *api = pl->api;
    pts_prescore_state_t *s;
    int require_all, nothing;

    s = calloc(1, sizeof *s);
    if (s == NULL)
        goto oom;
    ks_tpmap_init(&s->ignored);
    ks_tpmap_init(&s->pairs);
    if (n > 0 && api->snapshot_num_nodes(pl->h) > 0) {
        /* Nodes must carry every key unless only the system defaults
         * apply, so that nodes without a zone still spread by hostname. */
        require_all = pod->n_spread_constraints > 0 || !pl->system_defaulted;
        if (pts_constraints_build(pl, pod, KS_SCHEDULE_ANYWAY, &s->cons) != 0)
            goto oom;
        if (s->cons.n > 0) {
            const pts_agg_t *a = pts_agg_get(
                pl, &s->cons, pod,
                require_all ? PTS_AGG_PRESCORE_ALL : PTS_AGG_PRESCORE_ANY);
            if (pts_prescore_init(pl, s, nodes, n, require_all, a) != 0)
                goto oom;
            if (a != NULL) {
                pts_prescore_from_aggregate(a, s);
                s->tab = pts_agg_table(pl, &s->cons, s->tab_col,
                                       PTS_SEEN_CONS);
                s->agg = a;
                s->agg_use = a->last_use;
            } else
                pts_prescore_count(pl, s, pod, require_all);
        }
    }
    nothing = s->cons.n == 0;
    /* Score gets it as its state (no cycle-state lookup per node). */
    if (api->plugin_state_set(pl->h, cs, KS_STATE_SCORE, s,
                              pts_prescore_state_clone,
                              pts_prescore_state_free) != 0) {
        pts_prescore_state_free(s);
        api->status_reason(st, "writing \"" PTS_PRESCORE_KEY
                               "\" to cycle state failed");
        return KS_ERROR;
    }
    /* No soft constraint (or no node): the host may skip Score (upstream
     * 1.27+; scored anyway, every node would get the same 100). The state
     * stays written for hosts that score anyway. */
    return nothing ? KS_SKIP : KS_SUCCESS;
oom:
    pts_prescore_state_free(s);
    api->status_reason(st, "out of memory");
    return KS_ERROR;
}

/* The state PreScore set, or NULL with the reason in st. */
static const pts_prescore_state_t *pts_prescore_state_check(
    const pts_plugin_t *pl, const void *state, ks_status_t *st)
{
    if (state == NULL)
        pl->api->status_reason(st, "reading \"" PTS_PRESCORE_KEY
                                   "\" from cycle state: not found");
    return state;
}

static const pts_prescore_state_t *pts_prescore_state_get(
    const pts_plugin_t *pl, ks_cycle_state_t *cs, ks_status_t *st)
{
    return pts_prescore_state_check(
        pl, pl->api->plugin_state_get(pl->h, cs, KS_STATE_SCORE), st);
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
ks_code_t pts_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, int64_t *score, ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    return pts_score_with_state(
        self, cs, pl->api->plugin_state_get(pl->h, cs, KS_STATE_SCORE), pod,
        ni, score, st);
}

ks_code_t pts_score_with_state(void *self, ks_cycle_state_t *cs, void *state,
                              const ks_pod_t *pod, const ks_node_info_t *ni,
                              int64_t *score, ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    const pts_prescore_state_t *s;
    const ks_node_t *node = ni ? ni->node : NULL;
    double sum = 0;
    uint32_t i;

    (void)cs;
    *score = 0;
    s = pts_prescore_state_check(pl, state, st);
    if (s == NULL)
        return KS_ERROR;
    if (node == NULL) {
        pl->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    if (s->cons.n == 0 || ks_tpmap_find(&s->ignored, node->name, NULL) != NULL)
        return KS_SUCCESS;
    for (i = 0; i < s->cons.n; i++) {
        const pts_constraint_t *c = &s->cons.items[i];
        const char *value = ks_labels_get_interned(&node->labels, c->topology_key);
        int64_t cnt;
        if (value == NULL)
            continue;
        if (c->topology_key == pl->hostname_key)
            cnt = pts_count_matching(ni, c->selector, pod->ns);
        else
            cnt = ks_tpmap_get(&s->pairs, c->topology_key, value);
        sum += (double)cnt * s->weights[i] + (double)(c->max_skew - 1);
    }
    *score = pts_round_i64(sum);
    return KS_SUCCESS;
}

/* The count of pair (key, value), key not hostname, through a run's
 * memo of PTS_SEEN_VALUES slots indexed by the value's address
 * (interned): a zone's count is asked of the pair map once per run, not
 * once per node. */
static inline uint32_t pts_memo_slot(const char *value)
{
    uint64_t h = (uint64_t)(uintptr_t)value * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 61) & (PTS_SEEN_VALUES - 1);
}

static inline int64_t pts_memo_count(const pts_prescore_state_t *s,
                                     const char *key, const char *value,
                                     const char **memo_value,
                                     int64_t *memo_count)
{
    uint32_t slot = pts_memo_slot(value);
    if (memo_value[slot] != value) {
        memo_value[slot] = value;
        memo_count[slot] = ks_tpmap_get(&s->pairs, key, value);
    }
    return memo_count[slot];
}

/* The zone constraint's term of a node whose zone value is zv (not
 * NULL): its count times the weight, plus maxSkew - 1 (zb). */
static inline double pts_zone_term(const pts_prescore_state_t *s,
                                   const char *zkey, const char *zv,
                                   const char **memo_value,
                                   int64_t *memo_count, double zw, double zb)
{
    return (double)pts_memo_count(s, zkey, zv, memo_value, memo_count) * zw +
           zb;
}

/* pts_score_nodes for the shape of the system defaults and of most
 * pods' own constraints: one or two constraints, at most one of them on
 * hostname, no ignored node. Both keys are found in one walk of the
 * node's labels, and the constraints' fields stay in registers; with
 * two terms, the double sum is pts_score_with_state's whatever their
 * order (addition is commutative). h: the hostname constraint's index or
 * -1; z: the other one's or -1. -1 when a node has no Node (the host then
 * scores the run node by node, for the per-node error), else 0. */
static int pts_score_two(const pts_plugin_t *pl,
                          const pts_prescore_state_t *s, const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          int64_t *scores, int h, int z)
{
    const char *hkey = h >= 0 ? pl->hostname_key : NULL;
    const char *zkey = z >= 0 ? s->cons.items[z].topology_key : NULL;
    const ks_label_selector_t *hsel = h >= 0 ? s->cons.items[h].selector
                                             : NULL;
    const double hw = h >= 0 ? s->weights[h] : 0,
                 zw = z >= 0 ? s->weights[z] : 0;
    const double hb = h >= 0 ? (double)(s->cons.items[h].max_skew - 1) : 0,
                 zb = z >= 0 ? (double)(s->cons.items[z].max_skew - 1) : 0;
    /* the node table's columns (n 0: none; both have the table's n) */
    const pts_tab_col_t htc = pts_tab_col(s->tab, h >= 0 ? s->tab_col[h] : -1),
                        ztc = pts_tab_col(s->tab, z >= 0 ? s->tab_col[z] : -1);
    const pts_tab_col_t *any = htc.n > 0 ? &htc : &ztc;
    const char *memo_value[PTS_SEEN_VALUES];
    int64_t memo_count[PTS_SEEN_VALUES];
    /* A node that holds no matching pod (hostname count 0, most nodes)
     * scores what every such node of its zone scores: the rounded score
     * per zone value, in a memo of its own. th0 is such a node's
     * hostname term, as the loop computes it. */
    const char *empty_value[PTS_SEEN_VALUES];
    int64_t empty_score[PTS_SEEN_VALUES];
    const double th0 = h >= 0 ? (double)0 * hw + hb : 0;
    /* The snapshot's columns and this run's positions (ABI 1.7), when the
     * table is there to read the values from: a node whose table entry
     * is this very NodeInfo is then scored without reading its NodeInfo
     * unless it holds pods (the hostname count). */
    const uint32_t *pos = NULL;
    const ks_node_columns_t *col =
        any->n > 0 ? ks_bulk_columns(pl->api, pl->h, nodes, &pos) : NULL;
    /* and then the hostname counts by position, from the aggregate */
    const pts_agg_t *own =
        col != NULL && h >= 0 && s->agg != NULL &&
                s->agg->last_use == s->agg_use
            ? s->agg
            : NULL;
    uint32_t i, l, p, np;

    for (l = 0; l < PTS_SEEN_VALUES; l++)
        memo_value[l] = empty_value[l] = NULL;
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const char *hv = NULL, *zv = NULL;
        double sum, th = 0, tz = 0;
        int64_t hc = -1; /* the hostname count, when known without ni */
        if (col != NULL && (p = pos[i]) < any->n && any->ni[p] == ni) {
            if (col->flags[p] & KS_COL_NO_NODE)
                return -1;
            hv = htc.n > 0 ? htc.values[p] : NULL;
            zv = ztc.n > 0 ? ztc.values[p] : NULL;
            np = col->n_pods[p];
            if (np == 0)
                hc = 0;
            else if (own != NULL)
                hc = pts_agg_own(own, p, (uint32_t)h);
            if (hc == 0 && zv != NULL && (hv != NULL || h < 0)) {
                /* th is th0: the score is the zone's (see above) */
                l = pts_memo_slot(zv);
                if (empty_value[l] != zv) {
                    empty_value[l] = zv;
                    tz = pts_zone_term(s, zkey, zv, memo_value, memo_count,
                                       zw, zb);
                    sum = th0 + tz;
                    empty_score[l] = pts_round_i64(sum);
                }
                scores[i] = empty_score[l];
                continue;
            }
        } else if (ni == NULL || ni->node == NULL) {
            return -1;
        } else if ((p = pts_tab_col_pos(any, ni)) != UINT32_MAX) {
            /* the table's values: no label walk */
            hv = htc.n > 0 ? htc.values[p] : NULL;
            zv = ztc.n > 0 ? ztc.values[p] : NULL;
            np = ni->n_pods;
        } else {
            const ks_labels_t *ls = &ni->node->labels;
            np = ni->n_pods;
            for (l = 0; l < ls->n; l++) {
                const char *k = ls->items[l].key;
                if (k == hkey)
                    hv = ls->items[l].value;
                else if (k == zkey)
                    zv = ls->items[l].value;
            }
        }
        if (hv != NULL)
            th = (double)(hc >= 0   ? hc
                          : np > 0 ? pts_count_matching(ni, hsel, pod->ns)
                                   : 0) *
                     hw +
                 hb;
        if (zv != NULL)
            tz = pts_zone_term(s, zkey, zv, memo_value, memo_count, zw, zb);
        /* two terms (an absent one 0): a double sum of two is the same
         * in either order */
        sum = th + tz;
        scores[i] = pts_round_i64(sum);
    }
    return 0;
}

/* Bulk Score (ABI 1.2 score_nodes): pts_score_with_state over the run,
 * the state checked and each constraint's key, weight and pair map read
 * once, the ignored set consulted only when it holds a node. A node
 * without its NodeInfo's node: the host scores the run node by node (for
 * the per-node error). Thread-safe, as Score. */
ks_code_t pts_score_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          int64_t *scores, ks_status_t *scratch)
{
    const pts_plugin_t *pl = self;
    const pts_prescore_state_t *s = state;
    const char *keys[PTS_BULK_CONS];
    double base[PTS_BULK_CONS];
    /* per constraint (the first PTS_SEEN_CONS), the counts of the values
     * this run met (interned: by address), so that a zone's count is
     * asked of the pair map once per run, not once per node */
    const char *memo_value[PTS_SEEN_CONS][PTS_SEEN_VALUES];
    int64_t memo_count[PTS_SEEN_CONS][PTS_SEEN_VALUES];
    uint32_t i, c, n_cons;

    (void)cs;
    (void)scratch;
    if (s == NULL || s->cons.n > PTS_BULK_CONS)
        return KS_ERROR; /* node by node: the state's reason */
    n_cons = s->cons.n;
    if (n_cons >= 1 && n_cons <= 2 && s->ignored.used == 0) {
        /* the common shapes (see pts_score_two) */
        int h = -1, z = -1;
        for (c = 0; c < n_cons; c++) {
            if (s->cons.items[c].topology_key == pl->hostname_key)
                h = h < 0 ? (int)c : INT32_MAX;
            else
                z = z < 0 ? (int)c : INT32_MAX;
        }
        if (h != INT32_MAX && z != INT32_MAX)
            return pts_score_two(pl, s, pod, nodes, n, scores, h, z) == 0
                       ? KS_SUCCESS
                       : KS_ERROR;
    }
    for (c = 0; c < n_cons; c++) {
        keys[c] = s->cons.items[c].topology_key;
        base[c] = (double)(s->cons.items[c].max_skew - 1);
    }
    for (c = 0; c < n_cons && c < PTS_SEEN_CONS; c++)
        for (i = 0; i < PTS_SEEN_VALUES; i++)
            memo_value[c][i] = NULL;
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_node_t *node = ni ? ni->node : NULL;
        double sum = 0;
        if (node == NULL)
            return KS_ERROR;
        scores[i] = 0;
        if (n_cons == 0 ||
            (s->ignored.used > 0 &&
             ks_tpmap_find(&s->ignored, node->name, NULL) != NULL))
            continue;
        for (c = 0; c < n_cons; c++) {
            const char *value = ks_labels_get_interned(&node->labels, keys[c]);
            int64_t cnt;
            if (value == NULL)
                continue;
            if (keys[c] == pl->hostname_key) {
                cnt = pts_count_matching(ni, s->cons.items[c].selector,
                                         pod->ns);
            } else if (c < PTS_SEEN_CONS) {
                cnt = pts_memo_count(s, keys[c], value, memo_value[c],
                                     memo_count[c]);
            } else {
                cnt = ks_tpmap_get(&s->pairs, keys[c], value);
            }
            sum += (double)cnt * s->weights[c] + base[c];
        }
        scores[i] = pts_round_i64(sum);
    }
    return KS_SUCCESS;
}

ks_code_t pts_normalize_score(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, ks_node_score_t *scores,
                              uint32_t n, ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    const pts_prescore_state_t *s;
    int64_t min = INT64_MAX, max = 0;
    uint32_t i;
    int any_ignored;

    (void)pod;
    s = pts_prescore_state_get(pl, cs, st);
    if (s == NULL)
        return KS_ERROR;
    /* read once: the per-node test is then a register's, and the
     * compiler splits each loop on it (no ignored node: the common case) */
    any_ignored = s->ignored.used > 0;
    for (i = 0; i < n; i++) {
        int64_t v = scores[i].score;
        if (any_ignored &&
            ks_tpmap_find(&s->ignored, scores[i].node_name, NULL) != NULL)
            continue;
        min = v < min ? v : min;
        max = v > max ? v : max;
    }
    for (i = 0; i < n; i++) {
        if (any_ignored &&
            ks_tpmap_find(&s->ignored, scores[i].node_name, NULL) != NULL)
            scores[i].score = 0;
        else if (max == 0)
            scores[i].score = KS_MAX_NODE_SCORE;
        else
            scores[i].score =
                ks_div_score(KS_MAX_NODE_SCORE * (max + min - scores[i].score),
                             max);
    }
    return KS_SUCCESS;
}
