/*
 * InterPodAffinity: the descriptor, instance lifetime, arguments and
 * EnqueueExtensions (upstream v1.24.1 interpodaffinity/plugin.go).
 *
 * Args (InterPodAffinityArgs):
 *   hardPodAffinityWeight: 0..100, default 1
 *   ignorePreferredTermsOfExistingPods: bool, default false (a newer
 *     upstream field: when true and the incoming pod has no preferred
 *     terms, scoring is left empty)
 */
#include "ipa.h"

#include <stdlib.h>
#include <string.h>

static const char *const ipa_arg_keys[] = {
    "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL};

static int ipa_parse_bool(const ks_args_t *a, const char *what, int *out,
                          char *err, size_t errlen)
{
    if (a != NULL && a->kind == KS_ARGS_SCALAR && a->scalar != NULL) {
        if (strcmp(a->scalar, "true") == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(a->scalar, "false") == 0) {
            *out = 0;
            return 0;
        }
    }
    snprintf(err, errlen, "line %u, column %u: %s must be true or false",
             a ? a->line : 0, a ? a->column : 0, what);
    return -1;
}

static int ipa_parse_args(ipa_plugin_t *pl, const ks_args_t *args, char *err,
                          size_t errlen)
{
    const ks_args_t *a;
    int64_t w;

    if (ks_args_check_keys(args, ipa_arg_keys, err, errlen) != 0)
        return -1;
    a = ks_args_get(args, "hardPodAffinityWeight");
    if (a != NULL) {
        if (ks_args_int64(a, "hardPodAffinityWeight", &w, err, errlen) != 0)
            return -1;
        if (w < 0 || w > IPA_MAX_HARD_WEIGHT) {
            snprintf(err, errlen,
                     "line %u, column %u: hardPodAffinityWeight: Invalid "
                     "value: %lld: not in valid range [0, %d]",
                     a->line, a->column, (long long)w, IPA_MAX_HARD_WEIGHT);
            return -1;
        }
        pl->hard_weight = (int32_t)w;
    }
    a = ks_args_get(args, "ignorePreferredTermsOfExistingPods");
    if (a != NULL &&
        ipa_parse_bool(a, "ignorePreferredTermsOfExistingPods",
                       &pl->ignore_existing_preferred, err, errlen) != 0)
        return -1;
    return 0;
}

static int ipa_create(const ks_host_api_t *api, ks_handle_t *h,
                      const ks_args_t *args, void **self, char *err,
                      size_t errlen)
{
    ipa_plugin_t *pl = calloc(1, sizeof *pl);
    if (pl == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pl->api = api;
    pl->h = h;
    pl->hard_weight = IPA_DEFAULT_HARD_WEIGHT;
    if (ipa_parse_args(pl, args, err, errlen) != 0) {
        free(pl);
        return -1;
    }
    *self = pl;
    return 0;
}

static void ipa_destroy(void *self)
{
    free(self);
}

static uint32_t ipa_events_to_register(void *self, ks_cluster_event_t *out,
                                       uint32_t cap)
{
    static const ks_cluster_event_t events[] = {
        /* a pod added, deleted or relabelled can satisfy (anti-)affinity */
        {KS_RES_POD, KS_ACT_ALL},
        {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
    };
    uint32_t n = (uint32_t)(sizeof events / sizeof events[0]);
    (void)self;
    return ks_events_copy(out, cap, events, n);
}

/* upstream podMatchesAllAffinityTerms as the hints use it: the incoming
 * pod's namespaceSelector is matched against no namespace labels (upstream
 * passes none there), so only an empty selector selects every namespace. */
static int ipa_hint_matches_all(const ipa_plugin_t *pl,
                                const ks_pod_affinity_term_t *terms,
                                uint32_t n, const ks_pod_t *owner,
                                const ks_pod_t *target)
{
    static const ks_labels_t no_labels = {NULL, 0};
    return ipa_matches_all_terms(pl, terms, n, owner->ns, target, &no_labels);
}

/* QueueingHint (upstream v1.36 isSchedulableAfterPodChange): only assigned
 * pods count. An added pod helps when it matches every required affinity
 * term of `pod`; an updated one when it now matches them and did not, or
 * no longer matches every required anti-affinity term and did; a deleted
 * one when it matched every anti-affinity term. */
static ks_queueing_hint_t ipa_after_pod_change(void *self, const ks_pod_t *pod,
                                               const void *old_obj,
                                               const void *new_obj)
{
    const ipa_plugin_t *pl = self;
    const ks_pod_t *old = old_obj, *mod = new_obj;
    const ks_pod_affinity_term_t *aff, *anti;
    uint32_t n_aff, n_anti;
    if ((mod != NULL && mod->node_name[0] == '\0') ||
        (old != NULL && old->node_name[0] == '\0'))
        return KS_QUEUE_SKIP;
    aff = ipa_required_affinity(pod, &n_aff);
    anti = ipa_required_anti_affinity(pod, &n_anti);
    if (old != NULL && mod != NULL) {
        if (!ipa_hint_matches_all(pl, aff, n_aff, pod, old) &&
            ipa_hint_matches_all(pl, aff, n_aff, pod, mod))
            return KS_QUEUE;
        if (ipa_hint_matches_all(pl, anti, n_anti, pod, old) &&
            !ipa_hint_matches_all(pl, anti, n_anti, pod, mod))
            return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (mod != NULL)
        return ipa_hint_matches_all(pl, aff, n_aff, pod, mod) ? KS_QUEUE
                                                              : KS_QUEUE_SKIP;
    if (old == NULL)
        return KS_QUEUE;
    return ipa_hint_matches_all(pl, anti, n_anti, pod, old) ? KS_QUEUE
                                                            : KS_QUEUE_SKIP;
}

/* QueueingHint (upstream v1.36 isSchedulableAfterNodeChange): the added or
 * updated node has the topology key of one of the pod's required
 * (anti-)affinity terms. */
static ks_queueing_hint_t ipa_after_node_change(void *self, const ks_pod_t *pod,
                                                const void *old_obj,
                                                const void *new_obj)
{
    const ks_node_t *n = new_obj;
    const ks_pod_affinity_term_t *t;
    uint32_t n_t, i, pass;
    (void)self;
    (void)old_obj;
    if (n == NULL)
        return KS_QUEUE;
    for (pass = 0; pass < 2; pass++) {
        t = pass == 0 ? ipa_required_affinity(pod, &n_t)
                      : ipa_required_anti_affinity(pod, &n_t);
        for (i = 0; i < n_t; i++)
            if (ks_labels_get_interned(&n->labels, t[i].topology_key) != NULL)
                return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* Upstream v1.36's registration: assigned pods added, relabelled or
 * deleted; nodes added, relabelled or retainted (upstream keeps the taint
 * update for nodes that became ready after being added). */
static uint32_t ipa_events_v2(void *self, ks_cluster_event_hint_t *out,
                              uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD,
          KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE},
         ipa_after_pod_change},
        {{KS_RES_NODE,
          KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT},
         ipa_after_node_change},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching: inter-pod affinity is not local to a pod and a
 * node (a pod in a topology domain counts for every node of the domain),
 * so a pod with (anti-)affinity terms of its own cannot be signed, nor
 * any pod while pods with (anti-)affinity terms run in the cluster (their
 * terms against the incoming pod). Otherwise the plugin passes every node
 * and scores nothing; the labels and namespace it would match are put
 * (upstream's Labels signer). */
static ks_code_t ipa_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const ipa_plugin_t *pl = self;
    const ks_pod_affinity_t *a = pod->affinity.pod_affinity;
    const ks_pod_affinity_t *x = pod->affinity.pod_anti_affinity;
    uint32_t n = 0, i;
    if ((a && (a->n_required || a->n_preferred)) ||
        (x && (x->n_required || x->n_preferred)))
        return KS_UNSCHEDULABLE;
    if (!KS_API_HAS(pl->api, snapshot_nodes_with_affinity))
        return KS_UNSCHEDULABLE;
    (void)pl->api->snapshot_nodes_with_affinity(pl->h, &n);
    if (n > 0)
        return KS_UNSCHEDULABLE;
    ks_sign_ptr(sg, pod->ns);
    ks_sign_i64(sg, pod->labels.n);
    for (i = 0; i < pod->labels.n; i++) {
        ks_sign_ptr(sg, pod->labels.items[i].key);
        ks_sign_ptr(sg, pod->labels.items[i].value);
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(IPA_NAME, IPA_VERSION,
                 .create = ipa_create,
                 .destroy = ipa_destroy,
                 .pre_filter = ipa_pre_filter,
                 .pre_filter_add_pod = ipa_pre_filter_add_pod,
                 .pre_filter_remove_pod = ipa_pre_filter_remove_pod,
                 .filter = ipa_filter,
                 .filter_with_state = ipa_filter_with_state,
                 .filter_nodes = ipa_filter_nodes,
                 .pre_score = ipa_pre_score,
                 .score = ipa_score,
                 .score_with_state = ipa_score_with_state,
                 .score_nodes = ipa_score_nodes,
                 .normalize_score = ipa_normalize_score,
                 .events_to_register = ipa_events_to_register,
                 .events_to_register_v2 = ipa_events_v2,
                 .sign = ipa_sign);
