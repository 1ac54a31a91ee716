/*
 * NodePorts (PreFilter, Filter): a pod fits a node only when none of its host
 * ports is already taken there. A port is the triple (host IP, protocol,
 * port); host IP "" means 0.0.0.0, which conflicts with the same protocol and
 * port on any IP (upstream HostPortInfo.CheckConflict, v1.24.1).
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define STATE_KEY "PreFilterNodePorts"
#define REASON_PORTS "node(s) didn't have free ports for the requested pod ports"

typedef struct node_ports {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const char *any_ip; /* interned "0.0.0.0" */
} node_ports_t;

/* The pod's wanted host ports; points into the pod, which outlives the
 * cycle. Immutable once written, so clones share it. */
typedef struct ports_state {
    const ks_container_port_t *ports;
    uint32_t n;
} ports_state_t;

static int node_ports_create(const ks_host_api_t *api, ks_handle_t *h,
                             const ks_args_t *args, void **self, char *err,
                             size_t errlen)
{
    static const char *const keys[] = {NULL};
    node_ports_t *np;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    np = calloc(1, sizeof *np);
    if (np == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    np->api = api;
    np->h = h;
    np->any_ip = api->intern(h, "0.0.0.0");
    *self = np;
    return 0;
}

static void node_ports_destroy(void *self)
{
    free(self);
}

static ks_code_t node_ports_pre_filter(void *self, ks_cycle_state_t *cs,
                                       const ks_pod_t *pod,
                                       ks_prefilter_result_t *result,
                                       ks_status_t *st)
{
    node_ports_t *np = self;
    ports_state_t *s = malloc(sizeof *s);
    (void)result;
    if (s == NULL) {
        np->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->ports = pod->host_ports;
    s->n = pod->n_host_ports;
    /* Filter gets it as its state (no cycle-state lookup per node). */
    if (ks_plugin_state_put(np->api, np->h, cs, KS_STATE_FILTER, s, st) !=
        KS_SUCCESS)
        return KS_ERROR;
    /* No host port: Filter cannot fail, so the host may skip it (upstream
     * 1.26+). The state stays written for callers that filter anyway. */
    return pod->n_host_ports == 0 ? KS_SKIP : KS_SUCCESS;
}

static int ip_is_any(const node_ports_t *np, const char *ip)
{
    return ip[0] == '\0' || ip == np->any_ip || strcmp(ip, "0.0.0.0") == 0;
}

static int same_ip(const char *a, const char *b)
{
    return a == b || strcmp(a, b) == 0;
}

/* Does the wanted port `w` conflict with a port in use on the node? */
static int port_conflicts(const node_ports_t *np, const ks_container_port_t *w,
                          const ks_node_info_t *ni)
{
    int want_any;
    uint32_t i;
    if (w->host_port <= 0)
        return 0;
    want_any = ip_is_any(np, w->host_ip);
    for (i = 0; i < ni->n_used_ports; i++) {
        const ks_container_port_t *u = ni->used_ports[i];
        if (u->host_port != w->host_port || u->protocol != w->protocol)
            continue;
        /* Wanting 0.0.0.0 takes the port on every IP; wanting one IP
         * conflicts with that IP and with 0.0.0.0. */
        if (want_any || ip_is_any(np, u->host_ip) ||
            same_ip(u->host_ip, w->host_ip))
            return 1;
    }
    return 0;
}

static ks_code_t node_ports_filter_with_state(void *self, ks_cycle_state_t *cs,
                                              void *state, const ks_pod_t *pod,
                                              const ks_node_info_t *ni,
                                              ks_status_t *st)
{
    node_ports_t *np = self;
    const ports_state_t *s = state;
    uint32_t i;
    (void)cs;
    (void)pod;
    if (s == NULL) {
        np->api->status_reason(
            st, "error reading \"" STATE_KEY "\" from cycleState: not found");
        return KS_ERROR;
    }
    for (i = 0; i < s->n; i++)
        if (port_conflicts(np, &s->ports[i], ni)) {
            np->api->status_reason(st, REASON_PORTS);
            return KS_UNSCHEDULABLE;
        }
    return KS_SUCCESS;
}

/* Filter for callers without the state slots (the SDK's 1.0 entry
 * point): the same, with the state looked up. */
static ks_code_t node_ports_filter(void *self, ks_cycle_state_t *cs,
                                   const ks_pod_t *pod, const ks_node_info_t *ni,
                                   ks_status_t *st)
{
    node_ports_t *np = self;
    return node_ports_filter_with_state(
        self, cs, np->api->plugin_state_get(np->h, cs, KS_STATE_FILTER),
        pod, ni, st);
}

static uint32_t node_ports_events(void *self, ks_cluster_event_t *out,
                                  uint32_t cap)
{
    static const ks_cluster_event_t ev[] = {
        {KS_RES_POD, KS_ACT_DELETE},
        {KS_RES_NODE, KS_ACT_ADD},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

/* QueueingHint (upstream isSchedulableAfterPodDeleted): an assigned pod
 * deleted that held a host port this pod wants (same port and protocol,
 * overlapping IPs). */
static ks_queueing_hint_t node_ports_after_delete(void *self,
                                                  const ks_pod_t *pod,
                                                  const void *old_obj,
                                                  const void *new_obj)
{
    const node_ports_t *np = self;
    const ks_pod_t *del = old_obj;
    uint32_t i, j;
    (void)new_obj;
    if (del == NULL || del->node_name[0] == '\0')
        return KS_QUEUE_SKIP;
    for (i = 0; i < pod->n_host_ports; i++) {
        const ks_container_port_t *w = &pod->host_ports[i];
        for (j = 0; j < del->n_host_ports; j++) {
            const ks_container_port_t *u = &del->host_ports[j];
            if (u->host_port != w->host_port || u->protocol != w->protocol)
                continue;
            if (ip_is_any(np, w->host_ip) || ip_is_any(np, u->host_ip) ||
                same_ip(u->host_ip, w->host_ip))
                return KS_QUEUE;
        }
    }
    return KS_QUEUE_SKIP;
}

static uint32_t node_ports_events_v2(void *self, ks_cluster_event_hint_t *out,
                                     uint32_t cap)
{
    /* Node add and update without a hint, as upstream: the pod is
     * retried after backoff. */
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_DELETE}, node_ports_after_delete},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's host ports signer): every host port
 * in order, with its protocol and address. */
static ks_code_t np_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    uint32_t i;
    (void)self;
    ks_sign_i64(sg, pod->n_host_ports);
    for (i = 0; i < pod->n_host_ports; i++) {
        ks_sign_i64(sg, pod->host_ports[i].host_port);
        ks_sign_i64(sg, pod->host_ports[i].protocol);
        ks_sign_ptr(sg, pod->host_ports[i].host_ip);
    }
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
KS_FILTER_NODES_FROM(node_ports_filter_nodes, node_ports_filter_with_state)

KS_PLUGIN_DEFINE("NodePorts", "1.24.1-ks1",
    .create = node_ports_create,
    .destroy = node_ports_destroy,
    .pre_filter = node_ports_pre_filter,
    .filter = node_ports_filter,
    .filter_with_state = node_ports_filter_with_state,
    .events_to_register = node_ports_events,
    .events_to_register_v2 = node_ports_events_v2,
                 .sign = np_sign,
    .filter_nodes = node_ports_filter_nodes);
