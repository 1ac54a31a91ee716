/*
 * The per-instance table of node facts the aggregates share. See
 * pts_nodetab.h.
 */
#include "pts_nodetab.h"

#include <stdlib.h>
#include <string.h>

#include "pts.h"

/* Changes kept at most; a full log keeps its newer half. */
#define PTS_TAB_LOG_MAX (1u << 18)

void pts_tab_free(pts_nodetab_t *t)
{
    uint32_t k;
    free(t->nodes);
    free(t->ni);
    for (k = 0; k < PTS_TAB_MAX_KEYS; k++)
        free(t->values[k]);
    free(t->log);
    memset(t, 0, sizeof *t);
}

size_t pts_tab_bytes(const pts_nodetab_t *t)
{
    return (size_t)t->cap * (sizeof *t->nodes + sizeof *t->ni +
                             t->n_keys * sizeof **t->values) +
           (size_t)t->cap_log * sizeof *t->log;
}

/* Array `a` of `old` elements of `size` bytes grown to `cap` (> 0), the
 * new ones zero; NULL on ENOMEM (`a` unchanged then). */
static void *grow_zeroed(void *a, size_t size, uint32_t old, uint32_t cap)
{
    char *p = realloc(a, (size_t)cap * size);
    if (p != NULL)
        memset(p + (size_t)old * size, 0, (size_t)(cap - old) * size);
    return p;
}

/* Room for n positions in every array. 0, or -1 on ENOMEM. */
static int tab_grow(pts_nodetab_t *t, uint32_t n)
{
    uint32_t cap, k;
    void *p;
    if (n <= t->cap)
        return 0;
    cap = n + n / 8 + 16;
    if ((p = grow_zeroed(t->nodes, sizeof *t->nodes, t->cap, cap)) == NULL)
        return -1;
    t->nodes = p;
    if ((p = grow_zeroed(t->ni, sizeof *t->ni, t->cap, cap)) == NULL)
        return -1;
    t->ni = p;
    for (k = 0; k < t->n_keys; k++) {
        p = grow_zeroed(t->values[k], sizeof **t->values, t->cap, cap);
        if (p == NULL)
            return -1;
        t->values[k] = p;
    }
    t->cap = cap;
    return 0;
}

/* Keep the newer half of a full log. */
static void log_trim(pts_nodetab_t *t)
{
    uint32_t cut = t->n_log / 2;
    /* never split one stamp's changes: the floor is a whole stamp */
    while (cut < t->n_log && cut > 0 &&
           t->log[cut].stamp == t->log[cut - 1].stamp)
        cut++;
    if (cut == 0 || cut >= t->n_log) {
        t->log_floor = t->stamp;
        t->n_log = 0;
        return;
    }
    t->log_floor = t->log[cut - 1].stamp;
    memmove(t->log, t->log + cut, (t->n_log - cut) * sizeof *t->log);
    t->n_log -= cut;
}

/* Log position `pos` as changed at `stamp`; on ENOMEM the log restarts
 * (older aggregates rebuild). */
static void log_add(pts_nodetab_t *t, uint32_t stamp, uint32_t pos)
{
    if (t->n_log == PTS_TAB_LOG_MAX)
        log_trim(t);
    if (t->n_log == t->cap_log) {
        uint32_t cap = t->cap_log ? t->cap_log * 2 : 256;
        pts_tab_change_t *l;
        if (cap > PTS_TAB_LOG_MAX)
            cap = PTS_TAB_LOG_MAX;
        l = realloc(t->log, cap * sizeof *l);
        if (l == NULL) {
            t->n_log = 0;
            t->log_floor = stamp;
            return;
        }
        t->log = l;
        t->cap_log = cap;
    }
    t->log[t->n_log].stamp = stamp;
    t->log[t->n_log++].pos = pos;
}

static int node_untainted(const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < node->n_taints; i++)
        if (node->taints[i].effect == KS_EFFECT_NO_SCHEDULE ||
            node->taints[i].effect == KS_EFFECT_NO_EXECUTE)
            return 0;
    return 1;
}

/* Re-read position i from `ni` at `stamp`: the facts' stamp moves when
 * any fact differs from what was recorded. */
static void read_node(pts_nodetab_t *t, uint32_t i, const ks_node_info_t *ni,
                      uint32_t stamp)
{
    pts_tab_node_t *e = &t->nodes[i];
    const ks_node_t *node = ni ? ni->node : NULL;
    int differs = t->ni[i] != ni; /* another node here, or none */
    uint8_t present = node != NULL;
    uint8_t untainted = node != NULL && node_untainted(node);
    uint32_t k;
    if (present != e->present || untainted != e->untainted)
        differs = 1;
    for (k = 0; k < t->n_keys; k++) {
        const char *val =
            node ? ks_labels_get_interned(&node->labels, t->keys[k]) : NULL;
        if (val != t->values[k][i]) {
            t->values[k][i] = val;
            differs = 1;
        }
    }
    t->ni[i] = ni;
    e->generation = ni ? ni->generation : 0;
    e->present = present;
    e->untainted = untainted;
    e->has_pods = ni != NULL && ni->n_pods > 0;
    e->changed = stamp;
    if (differs)
        e->facts = stamp;
    if (t->stamp != 0) /* the first fill is before every aggregate */
        log_add(t, stamp, i);
}

static int unchanged(const pts_nodetab_t *t, uint32_t i,
                     const ks_node_info_t *ni)
{
    return t->ni[i] == ni && ni != NULL && ni->generation != 0 &&
           t->nodes[i].generation == ni->generation;
}

int pts_tab_refresh(const pts_plugin_t *pl, pts_nodetab_t *t)
{
    const ks_host_api_t *api = pl->api;
    uint32_t n, i, n_chg = 0, stamp = t->stamp + 1, old_n = t->n;
    const ks_node_info_t *const *nodes = api->snapshot_nodes(pl->h, &n);
    const uint32_t *chg = NULL;
    uint64_t version = 0;
    int have = KS_API_HAS(api, snapshot_changes), any = 0;

    if (have)
        version = api->snapshot_changes(pl->h, t->host_version, &chg, &n_chg);
    if (have && t->have_host_version && chg != NULL && n == t->n) {
        for (i = 0; i < n_chg; i++)
            if (chg[i] < n && !unchanged(t, chg[i], nodes[chg[i]])) {
                read_node(t, chg[i], nodes[chg[i]], stamp);
                any = 1;
            }
    } else {
        if (tab_grow(t, n) != 0) {
            /* refilled next time; every aggregate rebuilds then (the
             * stamp keeps counting up: older stamps stay older) */
            t->n = 0;
            t->n_log = 0;
            t->log_floor = t->stamp + 1;
            t->have_host_version = 0;
            return -1;
        }
        for (i = 0; i < n; i++)
            if (t->stamp == 0 || i >= old_n ||
                !unchanged(t, i, nodes[i])) {
                read_node(t, i, nodes[i], stamp);
                any = 1;
            }
        /* positions that left the snapshot */
        for (i = n; i < old_n; i++) {
            read_node(t, i, NULL, stamp);
            any = 1;
        }
        t->n = n;
    }
    t->base = nodes;
    if (t->stamp == 0)
        t->log_floor = stamp;
    if (any || t->stamp == 0)
        t->stamp = stamp;
    t->host_version = version;
    t->have_host_version = have && version != 0;
    return 0;
}

int pts_tab_key(pts_nodetab_t *t, const char *key)
{
    uint32_t k, i;
    for (k = 0; k < t->n_keys; k++)
        if (t->keys[k] == key)
            return (int)k;
    if (t->n_keys == PTS_TAB_MAX_KEYS)
        return -1;
    /* A new column: the aggregates that will read it are new too (they
     * build from scratch), so filling it moves no stamp. */
    k = t->n_keys;
    if (t->cap > 0 &&
        (t->values[k] = grow_zeroed(NULL, sizeof **t->values, 0, t->cap)) ==
            NULL)
        return -1;
    t->n_keys++;
    t->keys[k] = key;
    for (i = 0; i < t->n; i++) {
        const ks_node_info_t *ni = t->ni[i];
        t->values[k][i] =
            ni && ni->node ? ks_labels_get_interned(&ni->node->labels, key)
                           : NULL;
    }
    return (int)k;
}

int pts_tab_changes_since(const pts_nodetab_t *t, uint32_t since,
                          const pts_tab_change_t **out, uint32_t *n)
{
    uint32_t lo = 0, hi = t->n_log;
    *out = NULL;
    *n = 0;
    if (since < t->log_floor)
        return -1;
    while (lo < hi) { /* the first change after `since` */
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->log[mid].stamp <= since)
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = t->log + lo;
    *n = t->n_log - lo;
    return 0;
}
