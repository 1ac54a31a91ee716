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
    uint32_t n = (uint32_t)(sizeof events / sizeof events[0]), i;
    (void)self;
    for (i = 0; i < n && i < cap; i++)
        out[i] = events[i];
    return n;
}

KS_PLUGIN_DEFINE(IPA_NAME, IPA_VERSION,
                 .create = ipa_create,
                 .destroy = ipa_destroy,
                 .pre_filter = ipa_pre_filter,
                 .pre_filter_add_pod = ipa_pre_filter_add_pod,
                 .pre_filter_remove_pod = ipa_pre_filter_remove_pod,
                 .filter = ipa_filter,
                 .filter_with_state = ipa_filter_with_state,
                 .pre_score = ipa_pre_score,
                 .score = ipa_score,
                 .score_with_state = ipa_score_with_state,
                 .normalize_score = ipa_normalize_score,
                 .events_to_register = ipa_events_to_register);
