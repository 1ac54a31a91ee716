/*
 * SchedulingGates (PreEnqueue): a pod that still has scheduling gates stays
 * out of the active queue, UnschedulableAndUnresolvable with the reason
 * "waiting for scheduling gates: [g1 g2]" (the text newer upstream prints).
 * It is re-checked when the pod is updated.
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

typedef struct gates {
    const ks_host_api_t *api;
} gates_t;

static int gates_create(const ks_host_api_t *api, ks_handle_t *h,
                        const ks_args_t *args, void **self, char *err,
                        size_t errlen)
{
    static const char *const keys[] = {NULL};
    gates_t *g;
    (void)h;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    g = calloc(1, sizeof *g);
    if (g == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    g->api = api;
    *self = g;
    return 0;
}

static void gates_destroy(void *self)
{
    free(self);
}

static ks_code_t gates_pre_enqueue(void *self, const ks_pod_t *pod,
                                   ks_status_t *st)
{
    static const char prefix[] = "waiting for scheduling gates: [";
    gates_t *g = self;
    size_t len = sizeof prefix + 1, off;
    uint32_t i;
    char *msg;
    if (pod->n_scheduling_gates == 0)
        return KS_SUCCESS;
    for (i = 0; i < pod->n_scheduling_gates; i++)
        len += strlen(pod->scheduling_gates[i]) + 1;
    msg = malloc(len);
    if (msg == NULL) {
        g->api->status_reason(st, "waiting for scheduling gates");
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    memcpy(msg, prefix, sizeof prefix - 1);
    off = sizeof prefix - 1;
    for (i = 0; i < pod->n_scheduling_gates; i++) {
        size_t n = strlen(pod->scheduling_gates[i]);
        if (i > 0)
            msg[off++] = ' ';
        memcpy(msg + off, pod->scheduling_gates[i], n);
        off += n;
    }
    msg[off++] = ']';
    msg[off] = '\0';
    g->api->status_reason(st, msg);
    free(msg);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static uint32_t gates_events(void *self, ks_cluster_event_t *out,
                             uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_POD;
        out[0].action = KS_ACT_UPDATE;
    }
    return 1;
}

static uint32_t gates_events_v2(void *self, ks_cluster_event_hint_t *out,
                                uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].event.resource = KS_RES_POD;
        out[0].event.action = KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
        /* upstream isSchedulableAfterUpdatePodSchedulingGatesEliminated:
         * the pod's own gates are gone */
        out[0].hint = ks_hint_own_pod_update;
    }
    return 1;
}

KS_PLUGIN_DEFINE("SchedulingGates", "1.24.1-ks1",
    .create = gates_create,
    .destroy = gates_destroy,
    .pre_enqueue = gates_pre_enqueue,
    .events_to_register = gates_events,
    .events_to_register_v2 = gates_events_v2);
