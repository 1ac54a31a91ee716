/*
 * NodeName (Filter): a pod that names a node in spec.nodeName fits only that
 * node. As upstream v1.24.1; the QueueingHint (a node added with the pod's
 * nodeName) as upstream v1.36.
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define REASON_NODE_NAME "node(s) didn't match the requested node name"

typedef struct node_name {
    const ks_host_api_t *api;
    ks_handle_t *h;
} node_name_t;

static int node_name_create(const ks_host_api_t *api, ks_handle_t *h,
                            const ks_args_t *args, void **self, char *err,
                            size_t errlen)
{
    static const char *const keys[] = {NULL};
    node_name_t *nn;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    nn = calloc(1, sizeof *nn);
    if (nn == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nn->api = api;
    nn->h = h;
    *self = nn;
    return 0;
}

static void node_name_destroy(void *self)
{
    free(self);
}

/* Does `pod` fit a node named `name` (upstream Fits)? */
static int node_name_fits(const ks_pod_t *pod, const char *name)
{
    return pod->node_name[0] == '\0' || pod->node_name == name ||
           strcmp(pod->node_name, name) == 0;
}

static ks_code_t node_name_filter(void *self, ks_cycle_state_t *cs,
                                  const ks_pod_t *pod,
                                  const ks_node_info_t *ni, ks_status_t *st)
{
    node_name_t *nn = self;
    (void)cs;
    if (ni->node == NULL) {
        nn->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    if (!node_name_fits(pod, ni->node->name)) {
        nn->api->status_reason(st, REASON_NODE_NAME);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static uint32_t node_name_events(void *self, ks_cluster_event_t *out,
                                 uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_NODE;
        out[0].action = KS_ACT_ADD;
    }
    return 1;
}

/* QueueingHint (upstream isSchedulableAfterNodeAdd): only the node the pod
 * names can help it. */
static ks_queueing_hint_t node_name_after_node_add(void *self,
                                                   const ks_pod_t *pod,
                                                   const void *old_obj,
                                                   const void *new_obj)
{
    const ks_node_t *n = new_obj;
    (void)self;
    (void)old_obj;
    if (n == NULL)
        return KS_QUEUE;
    return node_name_fits(pod, n->name) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static uint32_t node_name_events_v2(void *self, ks_cluster_event_hint_t *out,
                                    uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].event.resource = KS_RES_NODE;
        out[0].event.action = KS_ACT_ADD;
        out[0].hint = node_name_after_node_add;
    }
    return 1;
}

/* Opportunistic batching (upstream's NodeName signer). */
static ks_code_t nn_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    (void)self;
    ks_sign_ptr(sg, pod->node_name);
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
KS_FILTER_NODES_FROM_FILTER(node_name_filter_nodes_general, node_name_filter)

/* A pod without spec.nodeName fits every node: only the missing-node
 * error is left to look for. With the snapshot's columns (ABI 1.7) that
 * is the flags column's KS_COL_NO_NODE; else every nodes[i] is a NodeInfo,
 * so its Node is read before pass[i], which only that rare case needs. */
static ks_code_t node_name_filter_nodes(void *self, ks_cycle_state_t *cs,
                                        void *state, const ks_pod_t *pod,
                                        const ks_node_info_t *const *nodes,
                                        uint32_t n, uint8_t *pass,
                                        ks_status_t *scratch)
{
    const node_name_t *nn = self;
    const ks_node_columns_t *col;
    const uint32_t *pos;
    uint32_t i;
    if (pod->node_name[0] != '\0')
        return node_name_filter_nodes_general(self, cs, state, pod, nodes, n,
                                              pass, scratch);
    col = ks_bulk_columns(nn->api, nn->h, nodes, &pos);
    if (col != NULL) {
        const uint8_t *fl = col->flags;
#pragma GCC unroll 4
        for (i = 0; i < n; i++)
            if ((fl[pos[i]] & KS_COL_NO_NODE) && pass[i])
                pass[i] = 2; /* an Error: the host asks node_name_filter */
        return KS_SUCCESS;
    }
#pragma GCC unroll 4
    for (i = 0; i < n; i++)
        if (nodes[i]->node == NULL && pass[i])
            pass[i] = 2; /* an Error: the host asks node_name_filter */
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("NodeName", "1.24.1-ks1",
    .create = node_name_create,
    .destroy = node_name_destroy,
    .filter = node_name_filter,
    .events_to_register = node_name_events,
    .events_to_register_v2 = node_name_events_v2,
                 .sign = nn_sign,
    .filter_nodes = node_name_filter_nodes);
