/*
 * Per-instance aggregates of matching-pod counts per topology pair, kept
 * current incrementally across scheduling cycles.
 *
 * PreFilter and PreScore need, for the incoming pod's constraints, the
 * number of matching pods in every topology domain over the eligible nodes.
 * Pods of one workload share their constraints, so an aggregate remembers a
 * constraint set by content (topology keys, selectors, inclusion policies,
 * namespace, mode) with its counts.
 *
 * What each node is (its topology values, taints, presence) lives once per
 * plugin instance in the node table (pts_nodetab.h); an aggregate keeps
 * only the nodes that hold matching pods, in a sparse map from (position,
 * constraint) to count, so its memory grows with the workload's pods, not
 * with the cluster: a cluster of 130,000 nodes keeps hundreds of
 * aggregates. Refreshing one for the next pod re-counts only the positions
 * the table logged since the aggregate's stamp; a position whose facts
 * changed since (a label moved, nodes were added or dropped) or a log that
 * no longer reaches back makes it rebuild over every node.
 *
 * Only pods for which node inclusion does not depend on the pod itself are
 * aggregated: no nodeSelector or required node affinity when a constraint
 * honours node affinity, no tolerations when one honours taints. Others
 * are counted directly.
 *
 * Ownership: the aggregates belong to one plugin instance and own all
 * their memory (including copies of the selectors). Threads: loop thread
 * only (PreFilter, PreScore).
 */
#ifndef KS_PLUGIN_PTS_AGGREGATE_H
#define KS_PLUGIN_PTS_AGGREGATE_H

#include <ksched/types.h>

#include "pts_nodetab.h"
#include "tpmap.h"

/* How many aggregates are kept: at least PTS_AGG_MIN_SLOTS, more while
 * the ones kept hold less than PTS_AGG_BUDGET bytes in all, at most
 * PTS_AGG_MAX_SLOTS; the least recently used one is replaced beyond that.
 * (Pods of many ReplicaSets interleaved, each with its own system-default
 * spreading selector, rebuilt an aggregate over every node each cycle
 * with four.) */
#define PTS_AGG_MIN_SLOTS 4
#define PTS_AGG_MAX_SLOTS 256
#define PTS_AGG_BUDGET (64u << 20)

typedef enum pts_agg_mode {
    PTS_AGG_PREFILTER = 1, /* every key required, hostname pairs counted */
    PTS_AGG_PRESCORE_ALL,  /* every key required, hostname skipped */
    PTS_AGG_PRESCORE_ANY   /* missing keys read as "", hostname skipped */
} pts_agg_mode_t;

typedef struct pts_agg_cons {
    const char *key;
    int affinity_honor; /* node affinity policy Honor (pod has none) */
    int taints_honor;   /* taints policy Honor (pod tolerates none) */
    int skip;           /* hostname in PreScore modes: no pairs, only
                         * each node's own count (pts_agg_own) */
    ks_label_selector_t sel; /* reqs point into the aggregate's copies */
    int tab_key;        /* the key's column in the node table */
} pts_agg_cons_t;

/* (position * n_cons + constraint) + 1 -> matching pods, for the pairs
 * where that is not zero; open addressing, linear probing. */
typedef struct pts_agg_sparse {
    uint32_t *keys; /* 0: empty */
    int32_t *counts;
    uint32_t cap, used; /* cap: 0 or a power of two */
} pts_agg_sparse_t;

typedef struct pts_agg {
    int used;
    uint64_t last_use;
    /* the signature */
    pts_agg_mode_t mode;
    const char *ns;
    pts_agg_cons_t *cons;
    uint32_t n_cons;
    ks_requirement_t *reqs;
    const char **values;
    /* the nodes with matching pods, and the node table's stamp the
     * aggregate was refreshed at (0: build it from scratch) */
    pts_agg_sparse_t held;
    uint32_t stamp;
    /* pair -> matching pods; pair -> contributing (node, constraint)s */
    ks_tpmap_t counts;
    ks_tpmap_t nodes;
} pts_agg_t;

typedef struct pts_aggs {
    pts_agg_t **slots; /* each allocated alone: its address stays */
    uint32_t n_slots;
    uint64_t clock;
    pts_nodetab_t tab; /* what each node is, for every aggregate */
} pts_aggs_t;

struct pts_plugin;
struct pts_constraints;

/*
 * The aggregate for `pod`'s constraints `c` in `mode`, refreshed against
 * the current snapshot. NULL when the pod cannot be aggregated (see above)
 * or on ENOMEM; the caller then counts directly.
 */
pts_agg_t *pts_agg_get(struct pts_plugin *pl, const struct pts_constraints *c,
                       const ks_pod_t *pod, pts_agg_mode_t mode);
/* The plugin's node table for Filter or Score to read a node's values
 * from (pts_tab_col_pos), after a pts_agg_get of this cycle returned an
 * aggregate (the table was refreshed against the cycle's snapshot): each
 * constraint's column goes to cols[] (a column is added for a key the
 * aggregates do not track, hostname in a PreScore mode). NULL when the
 * constraints are more than `max` or a key finds no column. */
const pts_nodetab_t *pts_agg_table(struct pts_plugin *pl,
                                   const struct pts_constraints *c, int *cols,
                                   uint32_t max);
/* For constraint j that a PreScore mode skips (hostname): the matching
 * pods on the node at table position pos, counted as Score counts them
 * (the node's own pods, whatever its labels, taints or inclusion), kept
 * current with the aggregate. Valid until the next pts_agg_get; any
 * thread while nothing calls that (Score). */
int32_t pts_agg_own(const pts_agg_t *a, uint32_t pos, uint32_t j);
/* A pair exists when some eligible node contributes to it. */
int pts_agg_has_pair(const pts_agg_t *a, const char *key, const char *value);
/* How many values constraint j's key has on the nodes of the snapshot
 * (what a walk of any list of them can meet at most); 0 when the aggregate
 * does not know: hostname in a PreScore mode is not aggregated, and a
 * taints policy Honor leaves the tainted nodes out. */
uint32_t pts_agg_value_count(const pts_agg_t *a, uint32_t j);
/* Release every aggregate. */
void pts_aggs_free(pts_aggs_t *aggs);

#endif /* KS_PLUGIN_PTS_AGGREGATE_H */
