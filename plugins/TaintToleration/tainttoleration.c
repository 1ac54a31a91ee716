/*
 * TaintToleration (Filter, PreScore, Score, NormalizeScore), as upstream
 * v1.24.1:
 *  - Filter: the first NoSchedule/NoExecute taint of the node that the pod
 *    does not tolerate rejects it, UnschedulableAndUnresolvable, with
 *    "node(s) had untolerated taint {key: value}".
 *  - Score: the number of PreferNoSchedule taints the pod does not tolerate
 *    (only tolerations with an empty or PreferNoSchedule effect count),
 *    normalised in reverse so the node with the fewest scores 100.
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define PRESCORE_KEY "PreScoreTaintToleration"

typedef struct taint_tol {
    const ks_host_api_t *api;
    ks_handle_t *h;
} taint_tol_t;

/* The pod's tolerations that can match PreferNoSchedule taints. */
typedef struct prescore_state {
    uint32_t n;
    ks_toleration_t tols[]; /* n entries */
} prescore_state_t;

static int taint_tol_create(const ks_host_api_t *api, ks_handle_t *h,
                            const ks_args_t *args, void **self, char *err,
                            size_t errlen)
{
    static const char *const keys[] = {NULL};
    taint_tol_t *t;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    t = calloc(1, sizeof *t);
    if (t == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->api = api;
    t->h = h;
    *self = t;
    return 0;
}

static void taint_tol_destroy(void *self)
{
    free(self);
}

static ks_code_t taint_tol_filter(void *self, ks_cycle_state_t *cs,
                                  const ks_pod_t *pod,
                                  const ks_node_info_t *ni, ks_status_t *st)
{
    taint_tol_t *t = self;
    uint32_t i;
    (void)cs;
    if (ni->node == NULL) {
        t->api->status_reason(st, "invalid nodeInfo");
        return KS_ERROR;
    }
    for (i = 0; i < ni->node->n_taints; i++) {
        const ks_taint_t *taint = &ni->node->taints[i];
        if (taint->effect != KS_EFFECT_NO_SCHEDULE &&
            taint->effect != KS_EFFECT_NO_EXECUTE)
            continue;
        if (ks_tolerations_tolerate(pod->tolerations, pod->n_tolerations,
                                    taint))
            continue;
        t->api->status_reasonf(st, "node(s) had untolerated taint {%s: %s}",
                               taint->key, taint->value);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static ks_code_t taint_tol_pre_score(void *self, ks_cycle_state_t *cs,
                                     const ks_pod_t *pod,
                                     const ks_node_info_t *const *nodes,
                                     uint32_t n, ks_status_t *st)
{
    taint_tol_t *t = self;
    prescore_state_t *s;
    uint32_t i;
    (void)nodes;
    if (n == 0)
        return KS_SUCCESS;
    s = malloc(sizeof *s + pod->n_tolerations * sizeof s->tols[0]);
    if (s == NULL) {
        t->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->n = 0;
    for (i = 0; i < pod->n_tolerations; i++) {
        ks_taint_effect_t e = pod->tolerations[i].effect;
        if (e == KS_EFFECT_ALL || e == KS_EFFECT_PREFER_NO_SCHEDULE)
            s->tols[s->n++] = pod->tolerations[i];
    }
    /* Score gets it as its state (no cycle-state lookup per node). */
    return ks_plugin_state_put(t->api, t->h, cs, KS_STATE_SCORE, s, st);
}

static ks_code_t taint_tol_score_with_state(void *self, ks_cycle_state_t *cs,
                                            void *state, const ks_pod_t *pod,
                                            const ks_node_info_t *ni,
                                            int64_t *score, ks_status_t *st)
{
    taint_tol_t *t = self;
    const prescore_state_t *s = state;
    int64_t count = 0;
    uint32_t i;
    (void)cs;
    (void)pod;
    if (s == NULL) {
        t->api->status_reason(
            st, "error reading \"" PRESCORE_KEY "\" from cycleState: not found");
        return KS_ERROR;
    }
    for (i = 0; i < ni->node->n_taints; i++) {
        const ks_taint_t *taint = &ni->node->taints[i];
        if (taint->effect == KS_EFFECT_PREFER_NO_SCHEDULE &&
            !ks_tolerations_tolerate(s->tols, s->n, taint))
            count++;
    }
    *score = count;
    return KS_SUCCESS;
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
static ks_code_t taint_tol_score(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_node_info_t *ni,
                                 int64_t *score, ks_status_t *st)
{
    taint_tol_t *t = self;
    return taint_tol_score_with_state(
        self, cs, t->api->plugin_state_get(t->h, cs, KS_STATE_SCORE),
        pod, ni, score, st);
}

/* Is every score 0 (no node has a PreferNoSchedule taint the pod does
 * not tolerate: the common case)? One OR over the scores, four at a
 * time. */
static int taint_tol_all_zero(const ks_node_score_t *scores, uint32_t n)
{
    const ks_node_score_t *p = scores, *end = scores + n;
    uint64_t acc = 0;
    for (; end - p >= 4; p += 4)
        acc |= (uint64_t)p[0].score | (uint64_t)p[1].score |
               (uint64_t)p[2].score | (uint64_t)p[3].score;
    for (; p < end; p++)
        acc |= (uint64_t)p->score;
    return acc == 0;
}

static void taint_tol_fill_max(ks_node_score_t *scores, uint32_t n)
{
    ks_node_score_t *p = scores, *end = scores + n;
    for (; end - p >= 4; p += 4) {
        p[0].score = KS_MAX_NODE_SCORE;
        p[1].score = KS_MAX_NODE_SCORE;
        p[2].score = KS_MAX_NODE_SCORE;
        p[3].score = KS_MAX_NODE_SCORE;
    }
    for (; p < end; p++)
        p->score = KS_MAX_NODE_SCORE;
}

/* Upstream helper.DefaultNormalizeScore: scale to [0, max] by the highest
 * score (integer division); `reverse` flips it. All zero: 0, or max when
 * reversed. */
static ks_code_t taint_tol_normalize(void *self, ks_cycle_state_t *cs,
                                     const ks_pod_t *pod,
                                     ks_node_score_t *scores, uint32_t n,
                                     ks_status_t *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    if (taint_tol_all_zero(scores, n)) {
        /* what the general normalization gives when every score is 0:
         * every node gets the maximum (reversed) */
        taint_tol_fill_max(scores, n);
        return KS_SUCCESS;
    }
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 1, scores, n);
    return KS_SUCCESS;
}

static uint32_t taint_tol_events(void *self, ks_cluster_event_t *out,
                                 uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_NODE;
        out[0].action = KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE |
                        KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT |
                        KS_ACT_UPDATE_NODE_CONDITION | KS_ACT_UPDATE;
    }
    return 1;
}

/* Has the node a NoSchedule/NoExecute taint the pod does not tolerate
 * (what Filter rejects)? */
static int has_untolerated(const ks_pod_t *pod, const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < node->n_taints; i++) {
        const ks_taint_t *taint = &node->taints[i];
        if ((taint->effect == KS_EFFECT_NO_SCHEDULE ||
             taint->effect == KS_EFFECT_NO_EXECUTE) &&
            !ks_tolerations_tolerate(pod->tolerations, pod->n_tolerations,
                                     taint))
            return 1;
    }
    return 0;
}

/* QueueingHint (upstream isSchedulableAfterNodeChange): Queue when the
 * node (added, or updated) no longer has a taint the pod does not
 * tolerate, while it had one before (an added node had none before). */
static ks_queueing_hint_t taint_tol_after_node(void *self,
                                               const ks_pod_t *pod,
                                               const void *old_obj,
                                               const void *new_obj)
{
    const ks_node_t *old = old_obj, *n = new_obj;
    int was = old == NULL || has_untolerated(pod, old);
    (void)self;
    if (n == NULL)
        return KS_QUEUE_SKIP;
    return was && !has_untolerated(pod, n) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static uint32_t taint_tol_events_v2(void *self, ks_cluster_event_hint_t *out,
                                    uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT},
         taint_tol_after_node},
        /* upstream isSchedulableAfterPodTolerationChange: the pod's own
         * tolerations changed */
        {{KS_RES_POD, KS_ACT_UPDATE_POD_TOLERATION}, ks_hint_own_pod_update},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's tolerations signer). */
static ks_code_t tt_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    (void)self;
    ks_sign_tolerations(sg, pod);
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
/* Nodes without taints pass without a call (every nodes[i] is a
 * NodeInfo: its taint count is read before pass[i], which only tainted
 * nodes need). */
static ks_code_t taint_tol_filter_nodes(void *self, ks_cycle_state_t *cs,
                                        void *state, const ks_pod_t *pod,
                                        const ks_node_info_t *const *nodes,
                                        uint32_t n, uint8_t *pass,
                                        ks_status_t *scratch)
{
    const taint_tol_t *t = self;
    const uint32_t *pos;
    const ks_node_columns_t *col = ks_bulk_columns(t->api, t->h, nodes, &pos);
    uint32_t i;
    (void)state;
    if (col != NULL) {
        /* the flags column: only a tainted (or missing) node is read */
        const uint8_t *fl = col->flags;
#pragma GCC unroll 4
        for (i = 0; i < n; i++)
            if ((fl[pos[i]] & (KS_COL_TAINTED | KS_COL_NO_NODE)) &&
                pass[i])
                pass[i] = ks_bulk_verdict(
                    taint_tol_filter(self, cs, pod, nodes[i], scratch));
        return KS_SUCCESS;
    }
#pragma GCC unroll 4
    for (i = 0; i < n; i++) {
        const ks_node_t *node = nodes[i]->node;
        if ((node != NULL && node->n_taints == 0) || !pass[i])
            continue;
        pass[i] = ks_bulk_verdict(taint_tol_filter(self, cs, pod, nodes[i],
                                                   scratch));
    }
    return KS_SUCCESS;
}
KS_SCORE_NODES_FROM(taint_tol_score_nodes_general, taint_tol_score_with_state)

/* A node without taints scores 0 without the per-node call: most nodes
 * of most clusters. A first loop writes 0 for every node and notes
 * whether any has taints; only then does a second score those. */
static ks_code_t taint_tol_score_nodes(void *self, ks_cycle_state_t *cs,
                                       void *state, const ks_pod_t *pod,
                                       const ks_node_info_t *const *nodes,
                                       uint32_t n, int64_t *scores,
                                       ks_status_t *scratch)
{
    const taint_tol_t *t = self;
    const uint32_t *pos;
    const ks_node_columns_t *col;
    uint32_t i, any = 0;
    if (state == NULL) /* its error, from the per-node function */
        return taint_tol_score_nodes_general(self, cs, state, pod, nodes, n,
                                             scores, scratch);
    col = ks_bulk_columns(t->api, t->h, nodes, &pos);
    if (col != NULL) {
        /* the flags column: only a tainted node is scored by the call
         * (a missing node goes the general way, as before columns) */
        const uint8_t *fl = col->flags;
#pragma GCC unroll 4
        for (i = 0; i < n; i++) {
            any |= fl[pos[i]];
            scores[i] = 0;
        }
        if (any & KS_COL_NO_NODE)
            return taint_tol_score_nodes_general(self, cs, state, pod, nodes,
                                                 n, scores, scratch);
        any &= KS_COL_TAINTED;
    } else {
#pragma GCC unroll 4
        for (i = 0; i < n; i++) {
            any |= nodes[i]->node->n_taints;
            scores[i] = 0;
        }
    }
    if (any == 0)
        return KS_SUCCESS;
    for (i = 0; i < n; i++) {
        ks_code_t c;
        if (col != NULL ? !(col->flags[pos[i]] & KS_COL_TAINTED)
                        : nodes[i]->node->n_taints == 0)
            continue;
        c = taint_tol_score_with_state(self, cs, state, pod, nodes[i],
                                       &scores[i], scratch);
        if (c != KS_SUCCESS)
            return c; /* not reached: only a missing state fails */
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("TaintToleration", "1.24.1-ks1",
    .create = taint_tol_create,
    .destroy = taint_tol_destroy,
    .filter = taint_tol_filter,
    .pre_score = taint_tol_pre_score,
    .score = taint_tol_score,
    .score_with_state = taint_tol_score_with_state,
    .normalize_score = taint_tol_normalize,
    .events_to_register = taint_tol_events,
    .events_to_register_v2 = taint_tol_events_v2,
                 .sign = tt_sign,
    .filter_nodes = taint_tol_filter_nodes,
    .score_nodes = taint_tol_score_nodes);
