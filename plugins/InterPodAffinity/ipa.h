/*
 * InterPodAffinity plugin: internal declarations shared by its files.
 * Everything here has hidden visibility; the .so exports only its
 * descriptor.
 *
 * Files: ipa_plugin.c (descriptor, args, events), ipa_terms.c (matching a
 * pod against a PodAffinityTerm), ipa_filter.c (PreFilter, AddPod/RemovePod,
 * Filter), ipa_score.c (PreScore, Score, NormalizeScore).
 */
#ifndef KS_PLUGIN_IPA_H
#define KS_PLUGIN_IPA_H

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include "tpmap.h"

#define IPA_NAME "InterPodAffinity"
#define IPA_VERSION "1.24.1-ks1"

#define IPA_DEFAULT_HARD_WEIGHT 1
#define IPA_MAX_HARD_WEIGHT 100

/* Filter reasons (upstream v1.24.1 constants). */
#define IPA_REASON_AFFINITY "node(s) didn't match pod affinity rules"
#define IPA_REASON_ANTI_AFFINITY "node(s) didn't match pod anti-affinity rules"
#define IPA_REASON_EXISTING_ANTI \
    "node(s) didn't satisfy existing pods anti-affinity rules"

/* One plugin instance (per profile), made by create, freed by destroy. */
typedef struct ipa_plugin {
    const ks_host_api_t *api;
    ks_handle_t *h;
    int32_t hard_weight;           /* hardPodAffinityWeight, 0..100 */
    int ignore_existing_preferred; /* ignorePreferredTermsOfExistingPods */
    /* The pairs PreFilter's last three maps held (existing anti-affinity,
     * affinity, anti-affinity): the next one's maps start that big
     * instead of growing a power of two at a time. PreFilter runs on the
     * loop thread only. */
    uint32_t prefilter_pairs[3];
} ipa_plugin_t;

/* --- ipa_terms.c --------------------------------------------------------- */

/* The required terms of a pod's podAffinity / podAntiAffinity (n 0 when
 * absent). Inline: PreFilter and PreScore ask them of every pod placed. */
static inline const ks_pod_affinity_term_t *
ipa_required_affinity(const ks_pod_t *pod, uint32_t *n)
{
    const ks_pod_affinity_t *a = pod->affinity.pod_affinity;
    *n = a ? a->n_required : 0;
    return a ? a->required : NULL;
}

static inline const ks_pod_affinity_term_t *
ipa_required_anti_affinity(const ks_pod_t *pod, uint32_t *n)
{
    const ks_pod_affinity_t *a = pod->affinity.pod_anti_affinity;
    *n = a ? a->n_required : 0;
    return a ? a->required : NULL;
}

/*
 * Does `target` match term `t` of a pod living in namespace `owner_ns`?
 * The label selector must select target's labels and target's namespace
 * must be one of the term's namespaces (the owner's own namespace when the
 * term lists none and has no namespaceSelector) or be selected by the
 * term's namespaceSelector. `target_ns_labels` are the labels of target's
 * namespace, or NULL to ask the host only when they are needed.
 * Thread-safe (the host's namespace_labels is read-only).
 */
int ipa_term_matches(const ipa_plugin_t *pl, const ks_pod_affinity_term_t *t,
                     const char *owner_ns, const ks_pod_t *target,
                     const ks_labels_t *target_ns_labels);

/* Upstream podMatchesAllAffinityTerms: n > 0 and every term matches. */
int ipa_matches_all_terms(const ipa_plugin_t *pl,
                          const ks_pod_affinity_term_t *terms, uint32_t n,
                          const char *owner_ns, const ks_pod_t *target,
                          const ks_labels_t *target_ns_labels);

/* Add `delta` to the count of (key, node's value of key) when the node has
 * the label. 0, or -1 on ENOMEM. */
int ipa_count_update(ks_tpmap_t *m, const ks_node_t *node, const char *key,
                     int64_t delta);

/* --- ipa_filter.c -------------------------------------------------------- */

ks_code_t ipa_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st);
ks_code_t ipa_pre_filter_add_pod(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_pod_t *to_add,
                                 const ks_node_info_t *ni, ks_status_t *st);
ks_code_t ipa_pre_filter_remove_pod(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_pod_t *to_remove,
                                    const ks_node_info_t *ni, ks_status_t *st);
ks_code_t ipa_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st);
/* Filter with the state PreFilter set (plugin_state_set, KS_STATE_FILTER). */
ks_code_t ipa_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st);

ks_code_t ipa_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch);
/* --- ipa_score.c --------------------------------------------------------- */

ks_code_t ipa_pre_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_node_info_t *const *nodes, uint32_t n,
                        ks_status_t *st);
ks_code_t ipa_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, int64_t *score, ks_status_t *st);
/* Score with the state PreScore set (plugin_state_set, KS_STATE_SCORE). */
ks_code_t ipa_score_with_state(void *self, ks_cycle_state_t *cs, void *state,
                              const ks_pod_t *pod, const ks_node_info_t *ni,
                              int64_t *score, ks_status_t *st);
ks_code_t ipa_score_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          int64_t *scores, ks_status_t *scratch);
ks_code_t ipa_normalize_score(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, ks_node_score_t *scores,
                              uint32_t n, ks_status_t *st);

#endif /* KS_PLUGIN_IPA_H */
