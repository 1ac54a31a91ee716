/*
 * The node facts every PodTopologySpread aggregate needs, kept once per
 * plugin instance instead of once per aggregate: per snapshot position, the
 * NodeInfo seen there (address and generation), the value of each tracked
 * topology key, whether the node has a NoSchedule/NoExecute taint and
 * whether it has pods at all (an aggregate's build reads the table, not the
 * NodeInfo, of the many nodes without), and two
 * stamps saying when the node last changed at all (any pod or label) and
 * when its facts last changed (labels of tracked keys, taints, another node
 * at that position).
 *
 * The table has its own clock (`stamp`), advanced by a refresh that finds
 * a change, and a log of (stamp, position) for every change, so an
 * aggregate refreshed at stamp S re-counts only the positions logged after
 * S. An aggregate that finds a position whose facts changed after S (a
 * node's zone label moved, nodes were added or dropped) rebuilds instead:
 * the facts it counted under are gone.
 *
 * A refresh walks only the positions the host's snapshot_changes names
 * (ABI 1.2) when it can, else every position comparing NodeInfo address
 * and generation (generation 0 is never trusted).
 *
 * Ownership: owned by the plugin instance (pts_aggs_t); the key and value
 * strings are interned and borrowed. Threads: loop thread only (PreFilter,
 * PreScore), as the aggregates.
 */
#ifndef KS_PLUGIN_PTS_NODETAB_H
#define KS_PLUGIN_PTS_NODETAB_H

#include <ksched/types.h>

/* Topology keys tracked at most (an aggregate needing more is not kept). */
#define PTS_TAB_MAX_KEYS 8

typedef struct pts_tab_node {
    uint64_t generation;
    uint32_t changed;   /* stamp of the last change of any kind */
    uint32_t facts;     /* stamp of the last change of its facts */
    uint8_t present;    /* a NodeInfo with a Node */
    uint8_t untainted;  /* no NoSchedule/NoExecute taint */
    uint8_t has_pods;   /* the NodeInfo lists a pod (not a fact: any pod
                         * moves the generation, so it is re-read) */
} pts_tab_node_t;

typedef struct pts_tab_change {
    uint32_t stamp, pos;
} pts_tab_change_t;

typedef struct pts_nodetab {
    pts_tab_node_t *nodes;
    /* [position]: the NodeInfo seen there (NULL: nothing), in an array of
     * its own so that Filter and Score check a NodeInfo's snapshot_pos
     * against it in few cache lines (pts_tab_col_pos) */
    const ks_node_info_t **ni;
    /* the host's snapshot_nodes array at the last refresh (borrowed, valid
     * for that cycle): a run of Filter's nodes that lies inside it gives
     * the positions of its nodes without reading them (pts_tab_col_run) */
    const ks_node_info_t *const *base;
    /* [key][position]: the value (NULL: no label), a column per tracked
     * key (NULL until tracked) */
    const char **values[PTS_TAB_MAX_KEYS];
    uint32_t n, cap;
    const char *keys[PTS_TAB_MAX_KEYS];
    uint32_t n_keys;
    uint32_t stamp; /* starts at 1 once filled; 0: never refreshed */
    /* the host's snapshot version it matches (host API snapshot_changes) */
    uint64_t host_version;
    int have_host_version;
    /* changes after log_floor, in stamp order */
    pts_tab_change_t *log;
    uint32_t n_log, cap_log;
    uint32_t log_floor;
} pts_nodetab_t;

struct pts_plugin;

/* Index of `key` among the tracked keys, adding it (and filling its
 * column) when new; -1 when PTS_TAB_MAX_KEYS are tracked already or on
 * ENOMEM. Call after pts_tab_refresh. */
int pts_tab_key(pts_nodetab_t *t, const char *key);
/* Bring the table up to date with the snapshot. 0, or -1 on ENOMEM (the
 * table is then emptied and refilled next time). */
int pts_tab_refresh(const struct pts_plugin *pl, pts_nodetab_t *t);
/* The value of tracked key `k` at position i (NULL: the node lacks it). */
static inline const char *pts_tab_value(const pts_nodetab_t *t, uint32_t i,
                                        int k)
{
    return t->values[k][i];
}
/* One column of the table held in locals by a loop over nodes: the loops
 * store verdict bytes or scores, which the compiler must assume may alias
 * the table's fields, so a loop reading those through the table would
 * re-read them for every node. n is 0 (nothing known) for a NULL table. */
typedef struct pts_tab_col {
    uint32_t n;
    const ks_node_info_t *const *ni;
    const char *const *values;
    const ks_node_info_t *const *base;
} pts_tab_col_t;

static inline pts_tab_col_t pts_tab_col(const pts_nodetab_t *t, int k)
{
    pts_tab_col_t c = {0, NULL, NULL, NULL};
    if (t != NULL && k >= 0 && (uint32_t)k < t->n_keys) {
        c.n = t->n;
        c.ni = t->ni;
        c.values = t->values[k];
        c.base = t->base;
    }
    return c;
}

/* When nodes[0..n) is a stretch of the snapshot_nodes array the table was
 * last refreshed from (the host hands Filter such stretches), the
 * position of nodes[0]; UINT32_MAX otherwise. The d-th node's position is
 * then that + d, which the caller still checks (c->ni there is this very
 * NodeInfo) before trusting c->values: unlike pts_tab_col_pos it reads no
 * NodeInfo, only the two arrays of pointers, in order. Compared as
 * integers: the arrays may be different objects. */
static inline uint32_t pts_tab_col_run(const pts_tab_col_t *c,
                                       const ks_node_info_t *const *nodes,
                                       uint32_t n)
{
    uintptr_t b = (uintptr_t)c->base, p = (uintptr_t)nodes, pos;
    if (c->base == NULL || p < b || (p - b) % sizeof *nodes != 0)
        return UINT32_MAX;
    pos = (p - b) / sizeof *nodes;
    return pos <= c->n && c->n - pos >= n ? (uint32_t)pos : UINT32_MAX;
}

/* The position of `ni` in the column's table when the table knows it (an
 * entry of the snapshot it was refreshed against, found at its
 * snapshot_pos): its value is c->values there. UINT32_MAX for any other
 * NodeInfo (a clone, a NodeInfo of a host older than ABI 1.6, whose
 * snapshot_pos is padding), and for every NodeInfo when n is 0: the
 * caller reads the node's labels. Thread-safe while nothing refreshes the
 * table (the host runs Filter and Score between PreFilter and the next
 * cycle, on the cycle's snapshot). */
static inline uint32_t pts_tab_col_pos(const pts_tab_col_t *c,
                                       const ks_node_info_t *ni)
{
    uint32_t p = ni->snapshot_pos - 1;
    return p < c->n && c->ni[p] == ni ? p : UINT32_MAX;
}

/* The logged changes after `since`: *out and *n, or -1 when the log no
 * longer reaches back that far (the caller walks everything). */
int pts_tab_changes_since(const pts_nodetab_t *t, uint32_t since,
                          const pts_tab_change_t **out, uint32_t *n);
/* Bytes held (for the aggregates' budget). */
size_t pts_tab_bytes(const pts_nodetab_t *t);
void pts_tab_free(pts_nodetab_t *t);

#endif /* KS_PLUGIN_PTS_NODETAB_H */
