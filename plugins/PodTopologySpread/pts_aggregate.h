/*
 * Per-instance aggregates of matching-pod counts per topology pair, kept
 * current incrementally across scheduling cycles.
 *
 * PreFilter and PreScore need, for the incoming pod's constraints, the
 * number of matching pods in every topology domain over the eligible nodes.
 * Pods of one workload share their constraints, so an aggregate remembers a
 * constraint set by content (topology keys, selectors, inclusion policies,
 * namespace, mode) together with each snapshot node's contribution, tagged
 * with the NodeInfo's address and generation. Refreshing it for the next
 * pod walks the snapshot and recomputes only the nodes whose NodeInfo or
 * generation changed (the host bumps the generation on every change to a
 * node or its pods, as upstream's NodeInfo does; generation 0 is never
 * trusted).
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

#include "tpmap.h"

/* How many aggregates are kept: at least PTS_AGG_MIN_SLOTS, more while
 * their per-node arrays fit PTS_AGG_BUDGET bytes in all, at most
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
    int skip;           /* hostname in PreScore modes: not aggregated */
    ks_label_selector_t sel; /* reqs point into the aggregate's copies */
} pts_agg_cons_t;

typedef struct pts_agg_entry {
    const ks_node_info_t *ni; /* NULL: nothing recorded */
    uint64_t generation;
} pts_agg_entry_t;

typedef struct pts_agg_contrib {
    const char *value; /* NULL: this constraint does not count the node */
    int64_t count;
} pts_agg_contrib_t;

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
    /* per snapshot index */
    pts_agg_entry_t *entries;
    pts_agg_contrib_t *contribs; /* [index * n_cons + constraint] */
    uint32_t cap, n_entries;
    /* the snapshot version (host API snapshot_changes) it was refreshed
     * at; have_version 0: walk the snapshot whole next time */
    uint64_t version;
    int have_version;
    /* pair -> matching pods; pair -> contributing (node, constraint)s */
    ks_tpmap_t counts;
    ks_tpmap_t nodes;
} pts_agg_t;

typedef struct pts_aggs {
    pts_agg_t **slots; /* each allocated alone: its address stays */
    uint32_t n_slots;
    uint64_t clock;
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
/* A pair exists when some eligible node contributes to it. */
int pts_agg_has_pair(const pts_agg_t *a, const char *key, const char *value);
/* Release every aggregate. */
void pts_aggs_free(pts_aggs_t *aggs);

#endif /* KS_PLUGIN_PTS_AGGREGATE_H */
