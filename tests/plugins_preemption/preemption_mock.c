/* The DefaultPreemption tests' parts on top of the host fixture. */
#include "preemption_mock.h"

#include <string.h>

pm_state_t pm;

static const ks_host_api_t *pm_api; /* the fixture's table */

static ks_code_t pm_filter(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           ks_status_t *st)
{
    const ks_resources_t *alloc = &ni->node->allocatable;
    ks_code_t code = KS_SUCCESS;
    (void)self, (void)cs;
    if (pm.n_filter_calls < PM_MAX_CALLS)
        pm.filtered[pm.n_filter_calls] = ni->node->name;
    pm.n_filter_calls++;
    if ((int64_t)ni->n_pods + 1 > alloc->allowed_pods) {
        pm_api->status_reason(st, "Too many pods");
        code = KS_UNSCHEDULABLE;
    }
    if (ni->requested.milli_cpu + pod->requests.milli_cpu > alloc->milli_cpu) {
        pm_api->status_reason(st, "Insufficient cpu");
        code = KS_UNSCHEDULABLE;
    }
    if (ni->requested.memory + pod->requests.memory > alloc->memory) {
        pm_api->status_reason(st, "Insufficient memory");
        code = KS_UNSCHEDULABLE;
    }
    return code;
}

static ks_code_t pm_pre_filter(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod, ks_prefilter_result_t *r,
                               ks_status_t *st)
{
    (void)self, (void)cs, (void)pod, (void)r, (void)st;
    return KS_SUCCESS;
}

static ks_code_t pm_add(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_pod_t *to_add, const ks_node_info_t *ni,
                        ks_status_t *st)
{
    (void)self, (void)pod, (void)to_add, (void)ni, (void)st;
    pm.n_add_calls++;
    pm.last_ext_state = cs;
    return KS_SUCCESS;
}

static ks_code_t pm_remove(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_pod_t *to_remove,
                           const ks_node_info_t *ni, ks_status_t *st)
{
    (void)self, (void)pod, (void)to_remove, (void)ni;
    pm.n_remove_calls++;
    pm.last_ext_state = cs;
    if (pm.fail_remove) {
        pm_api->status_reason(st, "injected remove failure");
        if (pm.fail_remove > 1)
            pm_api->status_reason(st, "second injected reason");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static const ks_plugin_t pm_fit = {
    .magic = KS_PLUGIN_MAGIC,
    .abi_major = KS_ABI_MAJOR,
    .abi_minor = KS_ABI_MINOR,
    .size = sizeof(ks_plugin_t),
    .name = "PreemptionFit",
    .version = "test",
    .pre_filter = pm_pre_filter,
    .pre_filter_add_pod = pm_add,
    .pre_filter_remove_pod = pm_remove,
    .filter = pm_filter,
};

static uint32_t pm_rand_below(ks_handle_t *h, uint32_t n)
{
    (void)h;
    pm.n_rand_calls++;
    pm.last_rand_n = n;
    return pm.offset % n;
}

static uint32_t pm_status_reason_count(const ks_status_t *st)
{
    pm.n_reason_count_calls++;
    return ks_host_api()->status_reason_count(st);
}

void pm_install(mock_host_t *mh)
{
    memset(&pm, 0, sizeof pm);
    pm_api = &mh->api;
    mh->api.rand_below = pm_rand_below;
    mh->api.status_reason_count = pm_status_reason_count;
    mock_host_add_filter(mh, &pm_fit, NULL);
}

/* ABI 1.0's status_message: the first reason, "" when none. */
static const char *pm_status_message_1_0(const ks_status_t *st)
{
    return mock_status_reason_count(st) ? mock_status_reason_at(st, 0) : "";
}

void pm_act_as_abi_1_0(mock_host_t *mh)
{
    mh->api.status_reason_count = NULL;
    mh->api.status_reason_at = NULL;
    mh->api.status_message = pm_status_message_1_0;
}

int pm_was_filtered(const char *node)
{
    uint32_t i;
    for (i = 0; i < pm.n_filter_calls && i < PM_MAX_CALLS; i++)
        if (strcmp(pm.filtered[i], node) == 0)
            return 1;
    return 0;
}

uint32_t pm_distinct_filtered(void)
{
    uint32_t i, j, n = 0;
    for (i = 0; i < pm.n_filter_calls && i < PM_MAX_CALLS; i++) {
        int seen = 0;
        for (j = 0; j < i; j++)
            if (pm.filtered[j] == pm.filtered[i])
                seen = 1;
        n += !seen;
    }
    return n;
}
