/*
 * NodeUnschedulable (Filter): a node marked unschedulable rejects every pod
 * that does not tolerate the taint node.kubernetes.io/unschedulable:NoSchedule.
 * As upstream v1.24.1.
 */
#include <stdlib.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define REASON_UNSCHEDULABLE "node(s) were unschedulable"
#define REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"

typedef struct unsched {
    const ks_host_api_t *api;
    ks_handle_t *h;
    ks_taint_t taint; /* the taint a pod must tolerate, interned */
} unsched_t;

static int unsched_create(const ks_host_api_t *api, ks_handle_t *h,
                          const ks_args_t *args, void **self, char *err,
                          size_t errlen)
{
    static const char *const keys[] = {NULL};
    unsched_t *u;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    u = calloc(1, sizeof *u);
    if (u == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    u->api = api;
    u->h = h;
    u->taint.key = api->intern(h, "node.kubernetes.io/unschedulable");
    u->taint.value = api->intern(h, "");
    u->taint.effect = KS_EFFECT_NO_SCHEDULE;
    *self = u;
    return 0;
}

static void unsched_destroy(void *self)
{
    free(self);
}

static ks_code_t unsched_filter(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                ks_status_t *st)
{
    unsched_t *u = self;
    (void)cs;
    if (ni->node == NULL) {
        u->api->status_reason(st, REASON_UNKNOWN_CONDITION);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (ni->node->unschedulable &&
        !ks_tolerations_tolerate(pod->tolerations, pod->n_tolerations,
                                 &u->taint)) {
        u->api->status_reason(st, REASON_UNSCHEDULABLE);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static uint32_t unsched_events(void *self, ks_cluster_event_t *out,
                               uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_NODE;
        out[0].action = KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT;
    }
    return 1;
}

/* QueueingHint (upstream isSchedulableAfterNodeChange): a node added
 * schedulable, or one that became schedulable. */
static ks_queueing_hint_t unsched_after_node(void *self, const ks_pod_t *pod,
                                             const void *old_obj,
                                             const void *new_obj)
{
    const ks_node_t *old = old_obj, *n = new_obj;
    int was = old != NULL && !old->unschedulable;
    (void)self;
    (void)pod;
    if (n == NULL)
        return KS_QUEUE_SKIP;
    return !was && !n->unschedulable ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* QueueingHint (upstream isSchedulableAfterPodTolerationChange): the pod
 * itself now tolerates the unschedulable taint. */
static ks_queueing_hint_t unsched_after_pod(void *self, const ks_pod_t *pod,
                                            const void *old_obj,
                                            const void *new_obj)
{
    const unsched_t *u = self;
    const ks_pod_t *n = new_obj;
    (void)old_obj;
    if (n == NULL || n->uid != pod->uid)
        return KS_QUEUE_SKIP;
    return ks_tolerations_tolerate(n->tolerations, n->n_tolerations,
                                   &u->taint)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

static uint32_t unsched_events_v2(void *self, ks_cluster_event_hint_t *out,
                                  uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT},
         unsched_after_node},
        {{KS_RES_POD, KS_ACT_UPDATE_POD_TOLERATION}, unsched_after_pod},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's tolerations signer). */
static ks_code_t nu_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    (void)self;
    ks_sign_tolerations(sg, pod);
    return KS_SUCCESS;
}

/* Bulk Filter (since ABI 1.2). Whether the pod tolerates the
 * unschedulable taint is asked once; then the loop reads one flag per
 * node, from the host's flags column when it has one (since ABI 1.7),
 * else from the Node (every nodes[i] is a NodeInfo, so it is read
 * whatever pass[i] says), and clears pass[i] where the node is rejected:
 * clearing a node an earlier plugin rejected leaves it as it was. */
static ks_code_t unsched_filter_nodes(void *self, ks_cycle_state_t *cs,
                                      void *state, const ks_pod_t *pod,
                                      const ks_node_info_t *const *nodes,
                                      uint32_t n, uint8_t *pass,
                                      ks_status_t *scratch)
{
    const unsched_t *u = self;
    const uint32_t *pos;
    const ks_node_columns_t *col = ks_bulk_columns(u->api, u->h, nodes, &pos);
    const int tolerated = ks_tolerations_tolerate(
        pod->tolerations, pod->n_tolerations, &u->taint);
    uint32_t i;
    (void)cs;
    (void)state;
    (void)scratch;
    if (col != NULL) {
        /* the flags column (types.h): no NodeInfo read */
        const uint8_t *fl = col->flags;
        const uint8_t out =
            tolerated ? KS_COL_NO_NODE
                      : KS_COL_NO_NODE | KS_COL_UNSCHEDULABLE;
#pragma GCC unroll 4
        for (i = 0; i < n; i++)
            if (fl[pos[i]] & out)
                pass[i] = 0;
        return KS_SUCCESS;
    }
    if (tolerated) {
        /* only a missing node is rejected ("unknown conditions") */
#pragma GCC unroll 4
        for (i = 0; i < n; i++)
            if (nodes[i]->node == NULL)
                pass[i] = 0;
        return KS_SUCCESS;
    }
#pragma GCC unroll 4
    for (i = 0; i < n; i++) {
        const ks_node_t *node = nodes[i]->node;
        if (node == NULL || node->unschedulable)
            pass[i] = 0;
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("NodeUnschedulable", "1.24.1-ks1",
    .create = unsched_create,
    .destroy = unsched_destroy,
    .filter = unsched_filter,
    .events_to_register = unsched_events,
    .events_to_register_v2 = unsched_events_v2,
                 .sign = nu_sign,
    .filter_nodes = unsched_filter_nodes);
