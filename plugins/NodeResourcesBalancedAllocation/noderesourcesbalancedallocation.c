/*
 * NodeResourcesBalancedAllocation (PreScore, Score), as upstream v1.24.1:
 * favours nodes whose resource fractions (requested / allocatable, with the
 * pod, each capped at 1) are close to each other. Score = (1 - std) * 100,
 * truncated, where std is the population standard deviation of the
 * fractions (|f1 - f2| / 2 for two resources). Uses the actual requests, not
 * the non-zero defaults. Args: resources (default cpu and memory; every
 * weight must be 1).
 */
#include <math.h>
#include <stdlib.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include "resource_allocation.h"

#define PRESCORE_KEY "PreScoreNodeResourcesBalancedAllocation"

typedef struct balanced {
    const ks_host_api_t *api;
    ks_handle_t *h;
    ra_spec_t spec;
} balanced_t;

typedef struct balanced_prescore {
    int64_t pod_req[RA_MAX_RESOURCES];
} balanced_prescore_t;

static int balanced_create(const ks_host_api_t *api, ks_handle_t *h,
                           const ks_args_t *args, void **self, char *err,
                           size_t errlen)
{
    static const char *const keys[] = {"resources", NULL};
    balanced_t *b;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    b = calloc(1, sizeof *b);
    if (b == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->api = api;
    b->h = h;
    if (ra_parse_resources(api, h, ks_args_get(args, "resources"), "resources",
                           1, &b->spec, err, errlen) != 0) {
        free(b);
        return -1;
    }
    *self = b;
    return 0;
}

static void balanced_destroy(void *self)
{
    free(self);
}

static void balanced_pod_requests(const balanced_t *b, const ks_pod_t *pod,
                                  int64_t *pod_req)
{
    uint32_t i;
    for (i = 0; i < b->spec.n; i++)
        pod_req[i] = ra_pod_request(pod, &b->spec.res[i], 1);
}

static ks_code_t balanced_pre_score(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_node_info_t *const *nodes,
                                    uint32_t n, ks_status_t *st)
{
    balanced_t *b = self;
    balanced_prescore_t *s = malloc(sizeof *s);
    (void)nodes;
    (void)n;
    if (s == NULL) {
        b->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    balanced_pod_requests(b, pod, s->pod_req);
    /* Score gets it as its state (no cycle-state lookup per node). */
    return ks_plugin_state_put(b->api, b->h, cs, KS_STATE_SCORE, s, st);
}

static int64_t balanced_node_score(const balanced_t *b, const int64_t *pod_req,
                                   const ks_node_info_t *ni)
{
    double fractions[RA_MAX_RESOURCES], total = 0, std = 0;
    uint32_t i, n = 0;
    for (i = 0; i < b->spec.n; i++) {
        int64_t alloc, req;
        double fr;
        ra_alloc_request(ni, &b->spec.res[i], pod_req[i], 1, &alloc, &req);
        if (alloc == 0)
            continue;
        fr = (double)req / (double)alloc;
        if (fr > 1)
            fr = 1;
        total += fr;
        fractions[n++] = fr;
    }
    if (n == 2) {
        std = fabs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
        double mean = total / (double)n, sum = 0;
        for (i = 0; i < n; i++)
            sum += (fractions[i] - mean) * (fractions[i] - mean);
        std = sqrt(sum / (double)n);
    }
    return (int64_t)((1 - std) * (double)KS_MAX_NODE_SCORE);
}

static ks_code_t balanced_score_with_state(void *self, ks_cycle_state_t *cs,
                                           void *state, const ks_pod_t *pod,
                                           const ks_node_info_t *ni,
                                           int64_t *score, ks_status_t *st)
{
    balanced_t *b = self;
    const balanced_prescore_t *s = state;
    int64_t local[RA_MAX_RESOURCES];
    (void)cs;
    if (ni->node == NULL) {
        b->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    /* Upstream v1.24 has no PreScore here: score without it too. */
    if (s == NULL)
        balanced_pod_requests(b, pod, local);
    *score = balanced_node_score(b, s ? s->pod_req : local, ni);
    return KS_SUCCESS;
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
static ks_code_t balanced_score(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                int64_t *score, ks_status_t *st)
{
    balanced_t *b = self;
    return balanced_score_with_state(
        self, cs, b->api->plugin_state_get(b->h, cs, KS_STATE_SCORE),
        pod, ni, score, st);
}

/* Opportunistic batching (upstream's resources signer). */
static ks_code_t ba_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    (void)self;
    ks_sign_pod_resources(sg, pod);
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
KS_SCORE_NODES_FROM(balanced_score_nodes_general, balanced_score_with_state)

/* The score of two fractions, cpu (rc of ac) and memory (rm of am), each
 * capped at 1: their half difference, as balanced_node_score computes it
 * for two resources (ac and am not 0). */
static inline int64_t two_fractions(int64_t rc, int64_t ac, int64_t rm,
                                    int64_t am)
{
    double fc = (double)rc / (double)ac, fm = (double)rm / (double)am;
    if (fc > 1)
        fc = 1;
    if (fm > 1)
        fm = 1;
    return (int64_t)((1 - fabs((fc - fm) / 2)) * (double)KS_MAX_NODE_SCORE);
}

/* The common case, cpu and memory only: two_fractions, from the host's
 * columns (since ABI 1.7) or the NodeInfos. */
static ks_code_t balanced_score_nodes(void *self, ks_cycle_state_t *cs,
                                      void *state, const ks_pod_t *pod,
                                      const ks_node_info_t *const *nodes,
                                      uint32_t n, int64_t *scores,
                                      ks_status_t *scratch)
{
    const balanced_t *b = self;
    const balanced_prescore_t *s = state;
    const ks_node_columns_t *col;
    const uint32_t *pos;
    uint32_t i;
    if (s == NULL || b->spec.n != 2 || b->spec.res[0].kind != RA_CPU ||
        b->spec.res[1].kind != RA_MEMORY)
        return balanced_score_nodes_general(self, cs, state, pod, nodes, n,
                                            scores, scratch);
    col = ks_bulk_columns(b->api, b->h, nodes, &pos);
    if (col != NULL) {
        /* the host's columns (since ABI 1.7): no NodeInfo or Node read */
        const int64_t *acol = col->alloc_milli_cpu, *amol = col->alloc_memory,
                      *rcol = col->req_milli_cpu, *rmol = col->req_memory;
        const uint8_t *fl = col->flags;
        for (i = 0; i < n; i++) {
            uint32_t p = pos[i];
            int64_t ac = acol[p], am = amol[p];
            if ((fl[p] & KS_COL_NO_NODE) || ac == 0 || am == 0) {
                /* as below: the general way */
                ks_code_t c = balanced_score_with_state(
                    self, cs, state, pod, nodes[i], &scores[i], scratch);
                if (c != KS_SUCCESS)
                    return c;
                continue;
            }
            scores[i] = two_fractions(rcol[p] + s->pod_req[0], ac,
                                      rmol[p] + s->pod_req[1], am);
        }
        return KS_SUCCESS;
    }
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_resources_t *al, *used;
        if (i + 8 < n) /* the line read 8 nodes on */
            __builtin_prefetch(&nodes[i + 8]->requested.memory);
        if (ni->node == NULL ||
            ni->node->allocatable.milli_cpu == 0 ||
            ni->node->allocatable.memory == 0) {
            /* an error, or fewer than two fractions: the general way */
            ks_code_t c = balanced_score_with_state(
                self, cs, state, pod, ni, &scores[i], scratch);
            if (c != KS_SUCCESS)
                return c;
            continue;
        }
        al = &ni->node->allocatable;
        used = &ni->requested;
        scores[i] = two_fractions(used->milli_cpu + s->pod_req[0],
                                  al->milli_cpu, used->memory + s->pod_req[1],
                                  al->memory);
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("NodeResourcesBalancedAllocation", "1.24.1-ks1",
    .create = balanced_create,
    .destroy = balanced_destroy,
    .pre_score = balanced_pre_score,
    .score = balanced_score,
    .score_with_state = balanced_score_with_state,
                 .sign = ba_sign,
    .score_nodes = balanced_score_nodes);
