/*
 * PodTopologySpread PreFilter, PreFilter AddPod/RemovePod and Filter
 * (upstream v1.24.1 podtopologyspread/filtering.go, with minDomains and
 * the node inclusion policies of later releases; their defaults, Honor for
 * node affinity and Ignore for taints, give v1.24.1's behaviour).
 *
 * PreFilter counts matching pods per topology pair over the eligible nodes
 * (they carry every constraint's key and pass the inclusion policies) and
 * keeps, per topology key, the two smallest counts ("critical paths") and
 * the number of domains. Filter checks, per DoNotSchedule constraint,
 *     count(node's domain) + self-match - global minimum <= maxSkew
 * where the global minimum is 0 while there are fewer domains than
 * minDomains.
 */
#include "pts.h"

#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PTS_PREFILTER_KEY "PreFilter" PTS_NAME
#define PTS_NO_MATCH INT32_MAX
#define PTS_BULK_CONS 4 /* constraints the bulk Filter's loops take */

typedef struct pts_path {
    const char *value; /* interned */
    int64_t num;
} pts_path_t;

/* Per topology key: the two smallest match counts and the domain count. */
typedef struct pts_key_state {
    const char *key;
    pts_path_t paths[2]; /* paths[0].num is the minimum */
    int64_t domains;
} pts_key_state_t;

/* The bulk Filter's verdict per domain value of one constraint, made by
 * PreFilter when the constraint's key has at most PTS_VT_MAX domains:
 * open addressing by the value's address (interned), a value without a
 * slot has no matching pod (count 0) and gets absent_ok. compare 0: no
 * eligible domain, only the label is needed. */
#define PTS_VT_MAX 8
#define PTS_VT_SLOTS 16 /* a power of two, twice PTS_VT_MAX */

/* The values whose verdict is not absent_ok, when there are at most
 * PTS_VT_EXC of them (the usual zone spread: one or two zones full): the
 * bulk Filter compares a node's value with those instead of probing the
 * table. Unused entries hold a pointer no value has (the table's own). */
#define PTS_VT_EXC 2

typedef struct pts_vtab {
    const char *value[PTS_VT_SLOTS]; /* NULL: empty */
    uint8_t ok[PTS_VT_SLOTS];
    uint8_t absent_ok;
    uint8_t compare;
    uint8_t few; /* exc holds every exception */
    const char *exc[PTS_VT_EXC];
} pts_vtab_t;

typedef struct pts_prefilter_state {
    pts_constraints_t cons;
    ks_tpmap_t pairs;     /* (key, value) -> matching pods */
    pts_key_state_t *keys; /* one per distinct topology key */
    uint32_t n_keys;
    /* cons.n tables (pts_vtab_build), or NULL: the bulk Filter remembers
     * verdicts per run of nodes instead. Read-only once PreFilter
     * returns; dropped when AddPod/RemovePod change the counts, never
     * cloned. */
    pts_vtab_t *vt;
    /* The plugin's node table when this PreFilter refreshed it for the
     * cycle's snapshot (an aggregate counted, at most PTS_BULK_CONS
     * constraints), and each constraint's column there: the bulk Filter
     * reads a node's values from it (pts_tab_col_pos) instead of the
     * node's labels. NULL otherwise, and in clones. */
    const pts_nodetab_t *tab;
    int tab_col[PTS_BULK_CONS];
    /* Owners of this state. A state without constraints (PreFilter said
     * Skip) is never written again, so its clones share it: preemption
     * clones the cycle state for every node it tries. Atomic: Filter
     * workers clone too. */
    atomic_int refs;
} pts_prefilter_state_t;

static void pts_prefilter_state_free(void *data)
{
    pts_prefilter_state_t *s = data;
    if (s == NULL)
        return;
    if (atomic_fetch_sub(&s->refs, 1) > 1)
        return; /* a clone still holds it */
    pts_constraints_free(&s->cons);
    ks_tpmap_free(&s->pairs);
    free(s->keys);
    free(s->vt);
    free(s);
}

static void *pts_prefilter_state_clone(const void *data)
{
    const pts_prefilter_state_t *s = data;
    pts_prefilter_state_t *c;
    if (s->cons.n == 0) { /* nothing to write to: shared */
        pts_prefilter_state_t *shared = (pts_prefilter_state_t *)s;
        atomic_fetch_add(&shared->refs, 1);
        return shared;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    atomic_init(&c->refs, 1);
    if (pts_constraints_copy(&c->cons, &s->cons) != 0 ||
        ks_tpmap_clone(&c->pairs, &s->pairs) != 0)
        goto fail;
    if (s->n_keys > 0) {
        c->keys = malloc(s->n_keys * sizeof *c->keys);
        if (c->keys == NULL)
            goto fail;
        memcpy(c->keys, s->keys, s->n_keys * sizeof *c->keys);
    }
    c->n_keys = s->n_keys;
    return c;
fail:
    pts_prefilter_state_free(c);
    return NULL;
}

static pts_key_state_t *pts_key_state(const pts_prefilter_state_t *s,
                                      const char *key)
{
    uint32_t i;
    for (i = 0; i < s->n_keys; i++)
        if (s->keys[i].key == key)
            return &s->keys[i];
    return NULL;
}

/* Upstream criticalPaths.update. */
static void pts_paths_update(pts_path_t *p, const char *value, int64_t num)
{
    int i = -1;
    if (value == p[0].value)
        i = 0;
    else if (value == p[1].value)
        i = 1;
    if (i >= 0) {
        p[i].num = num;
        if (p[0].num > p[1].num) {
            pts_path_t t = p[0];
            p[0] = p[1];
            p[1] = t;
        }
    } else if (num < p[0].num) {
        p[1] = p[0];
        p[0].value = value;
        p[0].num = num;
    } else if (num < p[1].num) {
        p[1].value = value;
        p[1].num = num;
    }
}

/* Matching pods per pair over the eligible nodes, counted directly. */
static int pts_prefilter_count(const pts_plugin_t *pl, pts_prefilter_state_t *s,
                               const ks_pod_t *pod)
{
    const ks_host_api_t *api = pl->api;
    uint32_t n_nodes, i, j;
    const ks_node_info_t *const *nodes = api->snapshot_nodes(pl->h, &n_nodes);

    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_node_t *node = ni ? ni->node : NULL;
        pts_inclusion_t memo = {-1, -1};
        if (node == NULL || !pts_node_has_all_keys(node, &s->cons))
            continue;
        for (j = 0; j < s->cons.n; j++) {
            const pts_constraint_t *c = &s->cons.items[j];
            const char *value;
            if (!pts_node_included(&memo, c, pod, node))
                continue;
            value = ks_labels_get_interned(&node->labels, c->topology_key);
            if (ks_tpmap_add(&s->pairs, c->topology_key, value,
                             pts_count_matching(ni, c->selector, pod->ns),
                             NULL) < 0)
                return -1;
        }
    }
    return 0;
}

/* The same from the instance's aggregate (see pts_aggregate.h). */
static int pts_prefilter_from_aggregate(const pts_agg_t *a,
                                        pts_prefilter_state_t *s)
{
    uint32_t i;
    if (ks_tpmap_reserve(&s->pairs, a->nodes.nonzero) != 0)
        return -1;
    for (i = 0; i < a->nodes.cap; i++) {
        const ks_tpmap_slot_t *slot = &a->nodes.slots[i];
        if (slot->key == NULL || slot->count <= 0)
            continue;
        if (ks_tpmap_add(&s->pairs, slot->key, slot->value,
                         ks_tpmap_get(&a->counts, slot->key, slot->value),
                         NULL) < 0)
            return -1;
    }
    return 0;
}

static int pts_prefilter_paths(const pts_plugin_t *pl, pts_prefilter_state_t *s)
{
    uint32_t i;

    s->keys = calloc(s->cons.n, sizeof *s->keys);
    if (s->keys == NULL)
        return -1;
    for (i = 0; i < s->cons.n; i++) {
        const char *key = s->cons.items[i].topology_key;
        pts_key_state_t *k;
        if (pts_key_state(s, key) != NULL)
            continue;
        k = &s->keys[s->n_keys++];
        k->key = key;
        k->paths[0].value = k->paths[1].value = pl->empty;
        k->paths[0].num = k->paths[1].num = PTS_NO_MATCH;
    }
    for (i = 0; i < s->pairs.cap; i++) {
        const ks_tpmap_slot_t *slot = &s->pairs.slots[i];
        pts_key_state_t *k;
        if (slot->key == NULL)
            continue;
        k = pts_key_state(s, slot->key);
        k->domains++;
        pts_paths_update(k->paths, slot->value, slot->count);
    }
    return 0;
}

static int64_t pts_skew_min(const pts_constraint_t *c,
                            const pts_key_state_t *k);
static int pts_skew_fits(const pts_prefilter_state_t *s,
                         const pts_constraint_t *c, int64_t min,
                         const char *value);

static inline uint32_t pts_vt_slot(const char *value)
{
    uint64_t h = (uint64_t)(uintptr_t)value * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 60) & (PTS_VT_SLOTS - 1);
}

/* The verdict of domain `value` (not NULL) in table t. */
static inline int pts_vt_ok(const pts_vtab_t *t, const char *value)
{
    uint32_t i = pts_vt_slot(value);
    for (;;) {
        if (t->value[i] == value)
            return t->ok[i];
        if (t->value[i] == NULL)
            return t->absent_ok;
        i = (i + 1) & (PTS_VT_SLOTS - 1);
    }
}

/* t's exceptions (PTS_VT_EXC): t->few when they fit. */
static void pts_vtab_exceptions(pts_vtab_t *t)
{
    uint32_t i, n = 0;
    t->few = 1;
    for (i = 0; i < PTS_VT_EXC; i++)
        t->exc[i] = (const char *)(const void *)t;
    for (i = 0; i < PTS_VT_SLOTS; i++) {
        if (t->value[i] == NULL || t->ok[i] == t->absent_ok)
            continue;
        if (n == PTS_VT_EXC) {
            t->few = 0;
            return;
        }
        t->exc[n++] = t->value[i];
    }
}

/* One table per constraint (s->vt), each verdict as pts_skew_fits gives
 * it, when every constraint's key has at most PTS_VT_MAX domains with a
 * count; otherwise (or without memory) none. */
static void pts_vtab_build(pts_prefilter_state_t *s)
{
    pts_vtab_t *vt;
    uint32_t j, i;
    if (s->cons.n > PTS_BULK_CONS)
        return;
    /* a key with many domains (hostname): no tables, before any walk
     * over the pair map */
    for (j = 0; j < s->n_keys; j++)
        if (s->keys[j].domains > PTS_VT_MAX)
            return;
    vt = malloc(s->cons.n * sizeof *vt);
    if (vt == NULL)
        return;
    for (j = 0; j < s->cons.n; j++) {
        const pts_constraint_t *c = &s->cons.items[j];
        const pts_key_state_t *k = pts_key_state(s, c->topology_key);
        pts_vtab_t *t = &vt[j];
        uint32_t used = 0;
        int64_t min;
        for (i = 0; i < PTS_VT_SLOTS; i++)
            t->value[i] = NULL;
        t->compare = k != NULL && k->domains != 0;
        t->absent_ok = 1;
        t->few = 0;
        if (!t->compare)
            continue;
        min = pts_skew_min(c, k);
        /* pts_skew_fits with a count of 0 */
        t->absent_ok = (c->self_match ? 1 : 0) - min <= c->max_skew;
        for (i = 0; i < s->pairs.cap; i++) {
            const ks_tpmap_slot_t *slot = &s->pairs.slots[i];
            uint32_t at;
            if (slot->key != c->topology_key)
                continue;
            if (slot->value == NULL || ++used > PTS_VT_MAX) {
                free(vt);
                return;
            }
            at = pts_vt_slot(slot->value);
            while (t->value[at] != NULL)
                at = (at + 1) & (PTS_VT_SLOTS - 1);
            t->value[at] = slot->value;
            t->ok[at] = (uint8_t)pts_skew_fits(s, c, min, slot->value);
        }
        pts_vtab_exceptions(t);
    }
    s->vt = vt;
}

ks_code_t pts_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st)
{
    pts_plugin_t *pl = self;
    const ks_host_api_t *api = pl->api;
    pts_prefilter_state_t *s;

    (void)result;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        goto oom;
    atomic_init(&s->refs, 1);
    ks_tpmap_init(&s->pairs);
    if (pts_constraints_build(pl, pod, KS_DO_NOT_SCHEDULE, &s->cons) != 0)
        goto oom;
    if (s->cons.n > 0) {
        const pts_agg_t *a = pts_agg_get(pl, &s->cons, pod, PTS_AGG_PREFILTER);
        if ((a != NULL ? pts_prefilter_from_aggregate(a, s)
                       : pts_prefilter_count(pl, s, pod)) != 0 ||
            pts_prefilter_paths(pl, s) != 0)
            goto oom;
        if (a != NULL)
            s->tab = pts_agg_table(pl, &s->cons, s->tab_col, PTS_BULK_CONS);
        pts_vtab_build(s); /* without it (ENOMEM too): per-run verdicts */
    }
    /* Filter gets it as its state (no cycle-state lookup per node). */
    if (api->plugin_state_set(pl->h, cs, KS_STATE_FILTER, s,
                              pts_prefilter_state_clone,
                              pts_prefilter_state_free) != 0) {
        pts_prefilter_state_free(s);
        api->status_reason(st, "writing \"" PTS_PREFILTER_KEY
                               "\" to cycle state failed");
        return KS_ERROR;
    }
    /* No DoNotSchedule constraint: Filter cannot fail, the host may skip it
     * (upstream 1.26+). The state stays written for callers that filter. */
    return s->cons.n == 0 ? KS_SKIP : KS_SUCCESS;
oom:
    pts_prefilter_state_free(s);
    api->status_reason(st, "out of memory");
    return KS_ERROR;
}

/* The state PreFilter set, or NULL with the reason in st. */
static pts_prefilter_state_t *pts_prefilter_state_check(const pts_plugin_t *pl,
                                                        void *state,
                                                        ks_status_t *st)
{
    if (state == NULL)
        pl->api->status_reason(st, "reading \"" PTS_PREFILTER_KEY
                                   "\" from cycle state: not found");
    return state;
}

static pts_prefilter_state_t *pts_prefilter_state_get(const pts_plugin_t *pl,
                                                      ks_cycle_state_t *cs,
                                                      ks_status_t *st)
{
    return pts_prefilter_state_check(
        pl, pl->api->plugin_state_get(pl->h, cs, KS_STATE_FILTER), st);
}

/* Filter for callers without the state slots (the SDK's 1.0 entry
 * point): the same, with the state looked up. */
ks_code_t pts_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    return pts_filter_with_state(
        self, cs, pl->api->plugin_state_get(pl->h, cs, KS_STATE_FILTER), pod,
        ni, st);
}

static ks_code_t pts_update_with_pod(void *self, ks_cycle_state_t *cs,
                                     const ks_pod_t *pod,
                                     const ks_pod_t *changed,
                                     const ks_node_info_t *ni, int64_t delta,
                                     ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    pts_prefilter_state_t *s = pts_prefilter_state_get(pl, cs, st);
    const ks_node_t *node = ni ? ni->node : NULL;
    pts_inclusion_t memo = {-1, -1};
    uint32_t i;

    if (s == NULL)
        return KS_ERROR;
    if (node == NULL || changed->ns != pod->ns ||
        !pts_node_has_all_keys(node, &s->cons))
        return KS_SUCCESS;
    /* the counts change: the verdict tables no longer hold */
    free(s->vt);
    s->vt = NULL;
    for (i = 0; i < s->cons.n; i++) {
        const pts_constraint_t *c = &s->cons.items[i];
        const char *value;
        int64_t num;
        if (!ks_selector_matches_interned(c->selector, &changed->labels) ||
            !pts_node_included(&memo, c, pod, node))
            continue;
        value = ks_labels_get_interned(&node->labels, c->topology_key);
        if (ks_tpmap_add(&s->pairs, c->topology_key, value, delta, &num) < 0) {
            pl->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
        pts_paths_update(pts_key_state(s, c->topology_key)->paths, value, num);
    }
    return KS_SUCCESS;
}

ks_code_t pts_pre_filter_add_pod(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_pod_t *to_add,
                                 const ks_node_info_t *ni, ks_status_t *st)
{
    return pts_update_with_pod(self, cs, pod, to_add, ni, 1, st);
}

ks_code_t pts_pre_filter_remove_pod(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_pod_t *to_remove,
                                    const ks_node_info_t *ni, ks_status_t *st)
{
    return pts_update_with_pod(self, cs, pod, to_remove, ni, -1, st);
}

/* The count constraint c's skew is measured against: its key's smallest
 * domain count, or 0 while fewer domains than minDomains exist. k: the
 * key's state, with at least one domain. */
static int64_t pts_skew_min(const pts_constraint_t *c,
                            const pts_key_state_t *k)
{
    return k->domains < c->min_domains ? 0 : k->paths[0].num;
}

/* Does the pod in domain `value` keep c's skew within maxSkew? */
static int pts_skew_fits(const pts_prefilter_state_t *s,
                         const pts_constraint_t *c, int64_t min,
                         const char *value)
{
    int64_t skew = ks_tpmap_get(&s->pairs, c->topology_key, value) +
                   (c->self_match ? 1 : 0) - min;
    return skew <= c->max_skew;
}

ks_code_t pts_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st)
{
    const pts_plugin_t *pl = self;
    const pts_prefilter_state_t *s;
    const ks_node_t *node = ni ? ni->node : NULL;
    uint32_t i;

    (void)cs;
    (void)pod;
    if (node == NULL) {
        pl->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    s = pts_prefilter_state_check(pl, state, st);
    if (s == NULL)
        return KS_ERROR;
    for (i = 0; i < s->cons.n; i++) {
        const pts_constraint_t *c = &s->cons.items[i];
        const char *value = ks_labels_get_interned(&node->labels, c->topology_key);
        const pts_key_state_t *k;
        if (value == NULL) {
            pl->api->status_reason(st, PTS_REASON_MISSING_LABEL);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        k = pts_key_state(s, c->topology_key);
        if (k == NULL || k->domains == 0)
            continue; /* no eligible domain at all: nothing to compare to */
        if (!pts_skew_fits(s, c, pts_skew_min(c, k), value)) {
            pl->api->status_reason(st, PTS_REASON_CONSTRAINTS);
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}

/* Bulk Filter (since ABI 1.2): the same verdicts as pts_filter_with_state.
 * A node's verdict depends only on its value for each constraint's
 * topology key, so each run remembers the verdict of the values it met
 * (interned: compared by address) in a small table indexed by the value's
 * address; a zone-spread run of 32 nodes asks the pair counts a few times
 * instead of 32. Nodes of one cluster list their labels in the same order
 * as a rule, so the key is first looked for where the previous node had
 * it. */
#define PTS_BULK_MEMO 8 /* a power of two */

typedef struct pts_bulk_con {
    const pts_constraint_t *con;
    const pts_vtab_t *vt; /* PreFilter's verdicts, or NULL: the memo */
    int compare; /* 0: no eligible domain, nothing to compare to */
    int64_t min;
    uint32_t hint; /* where the previous node had the key */
    const char *memo_value[PTS_BULK_MEMO]; /* NULL: empty */
    uint8_t memo_ok[PTS_BULK_MEMO];
    pts_tab_col_t tc; /* the key's column in s->tab (n 0: none) */
} pts_bulk_con_t;

/* The node's value for `key` (NULL: no such label), looked for at *hint
 * first (where the previous node had it). */
static inline const char *pts_value_at_hint(const ks_labels_t *ls,
                                            const char *key, uint32_t *hint)
{
    uint32_t l;
    if (*hint < ls->n && ls->items[*hint].key == key)
        return ls->items[*hint].value;
    for (l = 0; l < ls->n; l++)
        if (ls->items[l].key == key) {
            *hint = l;
            return ls->items[l].value;
        }
    return NULL;
}

/* The value of a constraint's key on `ni` (whose node is `node`, not
 * NULL): from the node table's column when it knows the NodeInfo, else
 * from the node's labels. */
static inline const char *pts_bulk_value(const pts_tab_col_t *tc,
                                         const ks_node_info_t *ni,
                                         const ks_node_t *node,
                                         const char *key, uint32_t *hint)
{
    uint32_t p = pts_tab_col_pos(tc, ni);
    if (p != UINT32_MAX)
        return tc->values[p];
    return pts_value_at_hint(&node->labels, key, hint);
}

/* Does a node whose value is `value` (not NULL) keep b's skew? */
static inline int pts_bulk_fits(const pts_prefilter_state_t *s,
                                pts_bulk_con_t *b, const char *value)
{
    uint64_t h = (uint64_t)(uintptr_t)value * UINT64_C(0x9E3779B97F4A7C15);
    uint32_t slot;
    if (b->vt != NULL)
        return pts_vt_ok(b->vt, value);
    slot = (uint32_t)(h >> 61) & (PTS_BULK_MEMO - 1);
    if (b->memo_value[slot] != value) {
        b->memo_value[slot] = value;
        b->memo_ok[slot] = (uint8_t)pts_skew_fits(s, b->con, b->min, value);
    }
    return b->memo_ok[slot];
}

/* The verdicts of a run for constraints c[0..n_cons). */
static void pts_bulk_run(const pts_prefilter_state_t *s, pts_bulk_con_t *c,
                         uint32_t n_cons, const ks_node_info_t *const *nodes,
                         uint32_t n, uint8_t *pass)
{
    uint32_t i, j;
    for (i = 0; i < n; i++) {
        const ks_node_t *node;
        if (!pass[i])
            continue;
        node = nodes[i]->node;
        if (node == NULL) {
            pass[i] = 2; /* an Error: the host asks pts_filter_with_state */
            continue;
        }
        for (j = 0; j < n_cons; j++) {
            const char *value =
                pts_bulk_value(&c[j].tc, nodes[i], node,
                               c[j].con->topology_key, &c[j].hint);
            if (value == NULL ||
                (c[j].compare && !pts_bulk_fits(s, &c[j], value))) {
                pass[i] = 0;
                break;
            }
        }
    }
}

/* How a single constraint's verdicts are found (pts_bulk_run_one_). */
enum {
    PTS_BY_LABEL, /* no eligible domain: only the label counts */
    PTS_BY_MEMO,  /* the counts, remembered per value within the run */
    PTS_BY_TABLE, /* PreFilter's table */
    PTS_BY_FEW    /* absent_ok unless the value is one of its exceptions */
};

/* The same for a single constraint (the common case), its key, hint and
 * table's exceptions in locals so that they stay in registers.
 * always_inline: the callers below get a loop for each HOW (here a
 * constant). */
static inline __attribute__((always_inline)) void
pts_bulk_run_one_(const pts_prefilter_state_t *s, pts_bulk_con_t *b,
                  const int how, const ks_node_info_t *const *nodes,
                  uint32_t n, uint8_t *pass)
{
    const char *key = b->con->topology_key;
    const pts_tab_col_t tc = b->tc;
    const pts_vtab_t *vt = b->vt;
    const char *e0 = how == PTS_BY_FEW ? vt->exc[0] : NULL;
    const char *e1 = how == PTS_BY_FEW ? vt->exc[1] : NULL;
    const int absent_ok = how == PTS_BY_FEW ? vt->absent_ok : 1;
    /* a stretch of the snapshot: the values by position, no NodeInfo
     * read (the nodes the lead plugin rejects are touched by no other) */
    const uint32_t p0 = pts_tab_col_run(&tc, nodes, n);
    uint32_t i, hint = 0;
    _Static_assert(PTS_VT_EXC == 2, "the two compares below");
    for (i = 0; i < n; i++) {
        const ks_node_t *node;
        const char *value;
        int ok;
        if (!pass[i])
            continue;
        /* a value in the table is a node's label: the node is there */
        if (p0 == UINT32_MAX || tc.ni[p0 + i] != nodes[i] ||
            (value = tc.values[p0 + i]) == NULL) {
            node = nodes[i]->node;
            if (node == NULL) {
                pass[i] = 2; /* an Error: the host asks
                              * pts_filter_with_state */
                continue;
            }
            value = pts_bulk_value(&tc, nodes[i], node, key, &hint);
            if (value == NULL) {
                pass[i] = 0;
                continue;
            }
        }
        ok = how == PTS_BY_FEW     ? absent_ok ^ ((value == e0) | (value == e1))
             : how == PTS_BY_TABLE ? pts_vt_ok(vt, value)
             : how == PTS_BY_MEMO  ? pts_bulk_fits(s, b, value)
                                   : 1;
        if (!ok)
            pass[i] = 0;
    }
}

static void pts_bulk_run_one(const pts_prefilter_state_t *s,
                             pts_bulk_con_t *b,
                             const ks_node_info_t *const *nodes, uint32_t n,
                             uint8_t *pass)
{
    if (!b->compare)
        pts_bulk_run_one_(s, b, PTS_BY_LABEL, nodes, n, pass);
    else if (b->vt == NULL)
        pts_bulk_run_one_(s, b, PTS_BY_MEMO, nodes, n, pass);
    else if (b->vt->few) /* the common case */
        pts_bulk_run_one_(s, b, PTS_BY_FEW, nodes, n, pass);
    else
        pts_bulk_run_one_(s, b, PTS_BY_TABLE, nodes, n, pass);
}

ks_code_t pts_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch)
{
    const pts_prefilter_state_t *s = state;
    pts_bulk_con_t c[PTS_BULK_CONS];
    uint32_t i, j, n_cons;

    if (s == NULL || s->cons.n > PTS_BULK_CONS) {
        /* the general way: a node at a time */
        for (i = 0; i < n; i++)
            if (pass[i])
                pass[i] = ks_bulk_verdict(pts_filter_with_state(
                    self, cs, state, pod, nodes[i], scratch));
        return KS_SUCCESS;
    }
    n_cons = s->cons.n;
    for (j = 0; j < n_cons; j++) {
        const pts_constraint_t *con = &s->cons.items[j];
        const pts_key_state_t *k;
        c[j].con = con;
        c[j].hint = 0;
        c[j].tc = pts_tab_col(s->tab, s->tab_col[j]); /* NULL tab: none */
        if (s->vt != NULL) { /* PreFilter's verdicts: no memo to clear */
            c[j].vt = &s->vt[j];
            c[j].compare = s->vt[j].compare;
            continue;
        }
        c[j].vt = NULL;
        k = pts_key_state(s, con->topology_key);
        c[j].compare = k != NULL && k->domains != 0;
        c[j].min = c[j].compare ? pts_skew_min(con, k) : 0;
        memset(c[j].memo_value, 0, sizeof c[j].memo_value);
    }
    if (n_cons == 1)
        pts_bulk_run_one(s, c, nodes, n, pass);
    else
        pts_bulk_run(s, c, n_cons, nodes, n, pass);
    return KS_SUCCESS;
}
