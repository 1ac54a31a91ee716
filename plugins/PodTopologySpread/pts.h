/*
 * PodTopologySpread plugin: internal declarations shared by its files.
 * Everything here has hidden visibility; the .so exports only its
 * descriptor.
 *
 * Files: pts_plugin.c (descriptor, args, events), pts_constraints.c (which
 * constraints apply to a pod, node inclusion, counting matching pods),
 * pts_filter.c (PreFilter, AddPod/RemovePod, Filter), pts_score.c
 * (PreScore, Score, NormalizeScore), pts_aggregate.c (matching-pod counts
 * kept across cycles), pts_nodetab.c (the node facts they share).
 */
#ifndef KS_PLUGIN_PTS_H
#define KS_PLUGIN_PTS_H

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include "pts_aggregate.h"
#include "tpmap.h"

#define PTS_NAME "PodTopologySpread"
#define PTS_VERSION "1.24.1-ks1"

#define PTS_LABEL_HOSTNAME "kubernetes.io/hostname"
#define PTS_LABEL_ZONE "topology.kubernetes.io/zone"

/* Filter reasons (upstream v1.24.1 constants). */
#define PTS_REASON_CONSTRAINTS "node(s) didn't match pod topology spread constraints"
#define PTS_REASON_MISSING_LABEL PTS_REASON_CONSTRAINTS " (missing required label)"

/* One constraint as the plugin uses it: the selector is resolved (the
 * pod's own, or the merged owner selector for default constraints) and the
 * inclusion policies are resolved to HONOR or IGNORE. */
typedef struct pts_constraint {
    int32_t max_skew;
    const char *topology_key; /* interned */
    const ks_label_selector_t *selector;
    int32_t min_domains;      /* >= 1 */
    ks_inclusion_policy_t affinity_policy; /* default HONOR */
    ks_inclusion_policy_t taints_policy;   /* default IGNORE */
    int self_match; /* the incoming pod's labels match the selector */
} pts_constraint_t;

/* The constraints that apply to one pod for one action. Owns its arrays;
 * the requirement values and the pod's selectors are borrowed from the host
 * (valid for the cycle). */
typedef struct pts_constraints {
    pts_constraint_t *items;
    uint32_t n;
    ks_label_selector_t merged;     /* owner selectors, for defaults */
    ks_requirement_t *merged_reqs;
} pts_constraints_t;

/* A default constraint from the args (no selector). */
typedef struct pts_default {
    int32_t max_skew;
    const char *topology_key; /* interned */
    ks_unsatisfiable_action_t action;
    int32_t min_domains; /* 0: unset */
    ks_inclusion_policy_t affinity_policy;
    ks_inclusion_policy_t taints_policy;
} pts_default_t;

/* One plugin instance (per profile), made by create, freed by destroy. */
typedef struct pts_plugin {
    const ks_host_api_t *api;
    ks_handle_t *h;
    pts_default_t *defaults;
    uint32_t n_defaults;
    int system_defaulted; /* defaultingType: System */
    const char *hostname_key; /* interned PTS_LABEL_HOSTNAME */
    const char *empty;        /* interned "" */
    pts_aggs_t aggs; /* loop thread only (PreFilter, PreScore) */
} pts_plugin_t;

/* --- pts_constraints.c --------------------------------------------------- */

/*
 * The constraints of `pod` whose whenUnsatisfiable is `action`: the pod's
 * own when it has any; otherwise the plugin's defaults for `action` with
 * the merged selector of the Services (and other owners) selecting the pod,
 * or none when no such selector exists. Loop thread. 0, or -1 on ENOMEM.
 */
int pts_constraints_build(const pts_plugin_t *pl, const ks_pod_t *pod,
                          ks_unsatisfiable_action_t action,
                          pts_constraints_t *out);
/* Deep copy (owned arrays copied, borrowed pointers shared). */
int pts_constraints_copy(pts_constraints_t *dst, const pts_constraints_t *src);
void pts_constraints_free(pts_constraints_t *c);

/* The node has a label for every constraint's topology key. */
int pts_node_has_all_keys(const ks_node_t *node, const pts_constraints_t *c);

/* Per-node inclusion (node affinity / taints policies); computes the two
 * predicates once per node and answers per constraint. */
typedef struct pts_inclusion {
    int affinity; /* -1 unknown, 0/1 */
    int taints;   /* -1 unknown, 0/1 */
} pts_inclusion_t;
int pts_node_included(pts_inclusion_t *memo, const pts_constraint_t *c,
                      const ks_pod_t *pod, const ks_node_t *node);

/* Upstream countPodsMatchSelector: pods on the node in namespace `ns`, not
 * terminating, whose labels match `sel`. Allocation-free, thread-safe.
 * Inline: Score and the aggregates call it once per node. */
static inline int64_t pts_count_matching(const ks_node_info_t *ni,
                                         const ks_label_selector_t *sel,
                                         const char *ns)
{
    int64_t n = 0;
    uint32_t i;
    for (i = 0; i < ni->n_pods; i++) {
        const ks_pod_t *p = ni->pods[i];
        /* cheapest test first; the result does not depend on the order */
        if (p->ns != ns || !ks_selector_matches_interned(sel, &p->labels))
            continue;
        if (!p->deleting) /* terminating pods do not count */
            n++;
    }
    return n;
}

/* --- pts_filter.c -------------------------------------------------------- */

ks_code_t pts_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st);
ks_code_t pts_pre_filter_add_pod(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_pod_t *to_add,
                                 const ks_node_info_t *ni, ks_status_t *st);
ks_code_t pts_pre_filter_remove_pod(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_pod_t *to_remove,
                                    const ks_node_info_t *ni, ks_status_t *st);
ks_code_t pts_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st);
/* Filter with the state PreFilter set (plugin_state_set, KS_STATE_FILTER). */
/* Bulk Filter (plugin.h filter_nodes, since ABI 1.2). */
ks_code_t pts_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch);
ks_code_t pts_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st);

/* --- pts_score.c --------------------------------------------------------- */

ks_code_t pts_pre_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_node_info_t *const *nodes, uint32_t n,
                        ks_status_t *st);
ks_code_t pts_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, int64_t *score, ks_status_t *st);
/* Score with the state PreScore set (plugin_state_set, KS_STATE_SCORE). */
ks_code_t pts_score_with_state(void *self, ks_cycle_state_t *cs, void *state,
                              const ks_pod_t *pod, const ks_node_info_t *ni,
                              int64_t *score, ks_status_t *st);
ks_code_t pts_score_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          int64_t *scores, ks_status_t *scratch);
ks_code_t pts_normalize_score(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, ks_node_score_t *scores,
                              uint32_t n, ks_status_t *st);

#endif /* KS_PLUGIN_PTS_H */
