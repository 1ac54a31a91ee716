/*
 * InterPodAffinity PreScore, Score and NormalizeScore (upstream v1.24.1
 * interpodaffinity/scoring.go semantics).
 *
 * PreScore sums, per topology pair, the weights of
 *   + the incoming pod's preferred affinity terms matched by existing pods,
 *   - the incoming pod's preferred anti-affinity terms matched by them,
 *   + hardPodAffinityWeight for existing pods' required affinity terms
 *     matched by the incoming pod,
 *   +/- existing pods' preferred (anti-)affinity terms matched by it,
 * each at the existing pod's node's value of the term's topology key. A
 * node's raw score is the sum over the topology keys seen of the sum at the
 * node's value; NormalizeScore maps [min(0, ...), max(0, ...)] to [0, 100]
 * in floating point and truncates.
 */
#include "ipa.h"

#include <stdlib.h>

#define IPA_PRESCORE_KEY "PreScore" IPA_NAME

typedef struct ipa_prescore_state {
    ks_tpmap_t sums;     /* (key, value) -> summed weight */
    const char **keys;   /* distinct topology keys present in `sums` */
    uint32_t n_keys;
    uint32_t cap_keys;
} ipa_prescore_state_t;

static void ipa_prescore_state_free(void *data)
{
    ipa_prescore_state_t *s = data;
    if (s == NULL)
        return;
    ks_tpmap_free(&s->sums);
    free(s->keys);
    free(s);
}

static void *ipa_prescore_state_clone(const void *data)
{
    const ipa_prescore_state_t *s = data;
    ipa_prescore_state_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (ks_tpmap_clone(&c->sums, &s->sums) != 0)
        goto fail;
    if (s->n_keys > 0) {
        c->keys = malloc(s->n_keys * sizeof *c->keys);
        if (c->keys == NULL)
            goto fail;
        for (uint32_t i = 0; i < s->n_keys; i++)
            c->keys[i] = s->keys[i];
    }
    c->n_keys = c->cap_keys = s->n_keys;
    return c;
fail:
    ipa_prescore_state_free(c);
    return NULL;
}

/* Add `weight` at (key, node's value); remembers the key. */
static int ipa_score_add(ipa_prescore_state_t *s, const ks_node_t *node,
                         const char *key, int64_t weight)
{
    const char *value = ks_labels_get_interned(&node->labels, key);
    uint32_t i;
    if (value == NULL)
        return 0;
    if (ks_tpmap_add(&s->sums, key, value, weight, NULL) < 0)
        return -1;
    for (i = 0; i < s->n_keys; i++)
        if (s->keys[i] == key)
            return 0;
    if (s->n_keys == s->cap_keys) {
        uint32_t cap = s->cap_keys ? s->cap_keys * 2 : 4;
        const char **keys = realloc(s->keys, cap * sizeof *keys);
        if (keys == NULL)
            return -1;
        s->keys = keys;
        s->cap_keys = cap;
    }
    s->keys[s->n_keys++] = key;
    return 0;
}

/* Weighted terms of `owner` matched by `target`, each adding sign*weight. */
static int ipa_score_terms(const ipa_plugin_t *pl, ipa_prescore_state_t *s,
                           const ks_pod_affinity_t *a, const char *owner_ns,
                           const ks_pod_t *target,
                           const ks_labels_t *target_ns_labels,
                           const ks_node_t *node, int32_t sign)
{
    uint32_t i;
    if (a == NULL)
        return 0;
    for (i = 0; i < a->n_preferred; i++) {
        const ks_weighted_pod_affinity_term_t *w = &a->preferred[i];
        if (ipa_term_matches(pl, &w->term, owner_ns, target, target_ns_labels) &&
            ipa_score_add(s, node, w->term.topology_key,
                          (int64_t)(w->weight * sign)) != 0)
            return -1;
    }
    return 0;
}

/* Everything existing pod `e` on `node` contributes. */
static int ipa_score_existing_pod(const ipa_plugin_t *pl,
                                  ipa_prescore_state_t *s, const ks_pod_t *pod,
                                  const ks_labels_t *pod_ns_labels,
                                  const ks_pod_t *e, const ks_node_t *node)
{
    const ks_pod_affinity_t *pa = pod->affinity.pod_affinity;
    const ks_pod_affinity_t *paa = pod->affinity.pod_anti_affinity;
    const ks_pod_affinity_term_t *req;
    uint32_t n, i;

    if (node->labels.n == 0)
        return 0;
    /* the incoming pod's preferred terms, matched by e */
    if (ipa_score_terms(pl, s, pa, pod->ns, e, NULL, node, 1) != 0 ||
        ipa_score_terms(pl, s, paa, pod->ns, e, NULL, node, -1) != 0)
        return -1;
    /* e's required affinity terms, matched by the incoming pod */
    if (pl->hard_weight > 0) {
        req = ipa_required_affinity(e, &n);
        for (i = 0; i < n; i++)
            if (ipa_term_matches(pl, &req[i], e->ns, pod, pod_ns_labels) &&
                ipa_score_add(s, node, req[i].topology_key, pl->hard_weight) !=
                    0)
                return -1;
    }
    /* e's preferred terms, matched by the incoming pod */
    if (ipa_score_terms(pl, s, e->affinity.pod_affinity, e->ns, pod,
                        pod_ns_labels, node, 1) != 0 ||
        ipa_score_terms(pl, s, e->affinity.pod_anti_affinity, e->ns, pod,
                        pod_ns_labels, node, -1) != 0)
        return -1;
    return 0;
}

ks_code_t ipa_pre_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_node_info_t *const *nodes, uint32_t n,
                        ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    const ks_host_api_t *api = pl->api;
    const ks_pod_affinity_t *pa = pod->affinity.pod_affinity;
    const ks_pod_affinity_t *paa = pod->affinity.pod_anti_affinity;
    ipa_prescore_state_t *s;
    ks_labels_t ns_labels;
    uint32_t n_nodes, i, j;
    const ks_node_info_t *const *all;
    int has_preferred, nothing;

    (void)nodes;
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    has_preferred = (pa != NULL && pa->n_preferred > 0) ||
                    (paa != NULL && paa->n_preferred > 0);
    /* With nothing to score the state stays empty: every node gets 0. */
    if (n == 0 || (pl->ignore_existing_preferred && !has_preferred))
        goto write;

    ns_labels = api->namespace_labels(pl->h, pod->ns);
    /* Without preferred terms of its own, only nodes running pods with
     * affinity can contribute (upstream's HavePodsWithAffinity list). */
    all = has_preferred ? api->snapshot_nodes(pl->h, &n_nodes)
                        : api->snapshot_nodes_with_affinity(pl->h, &n_nodes);
    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = all[i];
        const ks_pod_t *const *pods;
        uint32_t n_pods;
        if (ni == NULL || ni->node == NULL)
            continue;
        /* Without preferred terms of its own, only pods with affinity can
         * contribute. */
        if (has_preferred) {
            pods = ni->pods;
            n_pods = ni->n_pods;
        } else {
            pods = ni->pods_with_affinity;
            n_pods = ni->n_pods_with_affinity;
        }
        for (j = 0; j < n_pods; j++)
            if (ipa_score_existing_pod(pl, s, pod, &ns_labels, pods[j],
                                       ni->node) != 0) {
                ipa_prescore_state_free(s);
                api->status_reason(st, "out of memory");
                return KS_ERROR;
            }
    }
write:
    nothing = s->n_keys == 0;
    /* Score gets it as its state (no cycle-state lookup per node). */
    if (api->plugin_state_set(pl->h, cs, KS_STATE_SCORE, s,
                              ipa_prescore_state_clone,
                              ipa_prescore_state_free) != 0) {
        ipa_prescore_state_free(s);
        api->status_reason(st, "writing \"" IPA_PRESCORE_KEY
                               "\" to cycle state failed");
        return KS_ERROR;
    }
    /* No topology scores: every node keeps 0 after NormalizeScore, the
     * host may skip Score (upstream 1.27+). The state stays written for
     * hosts that score anyway. */
    return nothing ? KS_SKIP : KS_SUCCESS;
}

/* The state PreScore set, or NULL with the reason in st. */
static const ipa_prescore_state_t *ipa_prescore_state_check(
    const ipa_plugin_t *pl, const void *state, ks_status_t *st)
{
    if (state == NULL)
        pl->api->status_reason(st, "reading \"" IPA_PRESCORE_KEY
                                   "\" from cycle state: not found");
    return state;
}

static const ipa_prescore_state_t *ipa_prescore_state_get(
    const ipa_plugin_t *pl, ks_cycle_state_t *cs, ks_status_t *st)
{
    return ipa_prescore_state_check(
        pl, pl->api->plugin_state_get(pl->h, cs, KS_STATE_SCORE), st);
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
ks_code_t ipa_score(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, int64_t *score, ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    return ipa_score_with_state(
        self, cs, pl->api->plugin_state_get(pl->h, cs, KS_STATE_SCORE), pod,
        ni, score, st);
}

ks_code_t ipa_score_with_state(void *self, ks_cycle_state_t *cs, void *state,
                              const ks_pod_t *pod, const ks_node_info_t *ni,
                              int64_t *score, ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    const ipa_prescore_state_t *s;
    int64_t sum = 0;
    uint32_t i;

    (void)pod;
    (void)cs;
    *score = 0;
    s = ipa_prescore_state_check(pl, state, st);
    if (s == NULL)
        return KS_ERROR;
    if (ni == NULL || ni->node == NULL) {
        pl->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    for (i = 0; i < s->n_keys; i++) {
        const char *value = ks_labels_get_interned(&ni->node->labels, s->keys[i]);
        if (value != NULL)
            sum += ks_tpmap_get(&s->sums, s->keys[i], value);
    }
    *score = sum;
    return KS_SUCCESS;
}

/* Bulk Score (ABI 1.2 score_nodes): ipa_score_with_state over the run,
 * the state checked once. A node without its node object: the host
 * scores the run node by node (for the per-node error). Thread-safe, as
 * Score. */
ks_code_t ipa_score_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          int64_t *scores, ks_status_t *scratch)
{
    const ipa_prescore_state_t *s = state;
    uint32_t i, k;

    (void)self;
    (void)cs;
    (void)pod;
    (void)scratch;
    if (s == NULL)
        return KS_ERROR; /* node by node: the state's reason */
    for (i = 0; i < n; i++) {
        const ks_node_t *node = nodes[i] ? nodes[i]->node : NULL;
        int64_t sum = 0;
        if (node == NULL)
            return KS_ERROR;
        for (k = 0; k < s->n_keys; k++) {
            const char *value =
                ks_labels_get_interned(&node->labels, s->keys[k]);
            if (value != NULL)
                sum += ks_tpmap_get(&s->sums, s->keys[k], value);
        }
        scores[i] = sum;
    }
    return KS_SUCCESS;
}

ks_code_t ipa_normalize_score(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, ks_node_score_t *scores,
                              uint32_t n, ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    const ipa_prescore_state_t *s;
    int64_t max = INT64_MIN, min = INT64_MAX, diff;
    uint32_t i;

    (void)pod;
    s = ipa_prescore_state_get(pl, cs, st);
    if (s == NULL)
        return KS_ERROR;
    if (s->n_keys == 0)
        return KS_SUCCESS;
    /* min and max over the feasible nodes only (v1.24.1): equal scores all
     * normalise to 0 */
    for (i = 0; i < n; i++) {
        if (scores[i].score > max)
            max = scores[i].score;
        if (scores[i].score < min)
            min = scores[i].score;
    }
    diff = max - min;
    for (i = 0; i < n; i++) {
        double f = 0;
        if (diff > 0)
            f = (double)KS_MAX_NODE_SCORE *
                ((double)(scores[i].score - min) / (double)diff);
        scores[i].score = (int64_t)f;
    }
    return KS_SUCCESS;
}
