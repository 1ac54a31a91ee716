/* Extra mock host functions for the DefaultPreemption tests. */
#include "preemption_mock.h"

#include <string.h>

pm_state_t pm;

static ks_code_t pm_run_filters(ks_handle_t *h, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                ks_status_t *st)
{
    const ks_resources_t *alloc = &ni->node->allocatable;
    ks_code_t code = KS_SUCCESS;
    (void)cs;
    if (pm.n_filter_calls < PM_MAX_CALLS)
        pm.filtered[pm.n_filter_calls] = ni->node->name;
    pm.n_filter_calls++;
    if ((int64_t)ni->n_pods + 1 > alloc->allowed_pods) {
        h->api.status_reason(st, "Too many pods");
        code = KS_UNSCHEDULABLE;
    }
    if (ni->requested.milli_cpu + pod->requests.milli_cpu > alloc->milli_cpu) {
        h->api.status_reason(st, "Insufficient cpu");
        code = KS_UNSCHEDULABLE;
    }
    if (ni->requested.memory + pod->requests.memory > alloc->memory) {
        h->api.status_reason(st, "Insufficient memory");
        code = KS_UNSCHEDULABLE;
    }
    st->code = code;
    return code;
}

static ks_code_t pm_run_add(ks_handle_t *h, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const ks_pod_t *to_add,
                            const ks_node_info_t *ni, ks_status_t *st)
{
    (void)h, (void)pod, (void)to_add, (void)ni, (void)st;
    pm.n_add_calls++;
    pm.last_ext_state = cs;
    return KS_SUCCESS;
}

static ks_code_t pm_run_remove(ks_handle_t *h, ks_cycle_state_t *cs,
                               const ks_pod_t *pod, const ks_pod_t *to_remove,
                               const ks_node_info_t *ni, ks_status_t *st)
{
    (void)pod, (void)to_remove, (void)ni;
    pm.n_remove_calls++;
    pm.last_ext_state = cs;
    if (pm.fail_remove) {
        h->api.status_reason(st, "injected remove failure");
        if (pm.fail_remove > 1)
            h->api.status_reason(st, "second injected reason");
        return st->code = KS_ERROR;
    }
    return KS_SUCCESS;
}

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
    return st->n_reasons;
}

static const char *pm_status_reason_at(const ks_status_t *st, uint32_t i)
{
    return i < st->n_reasons ? st->reasons[i] : NULL;
}

void pm_install(mock_host_t *mh)
{
    memset(&pm, 0, sizeof pm);
    mh->api.run_filters = pm_run_filters;
    mh->api.run_prefilter_add_pod = pm_run_add;
    mh->api.run_prefilter_remove_pod = pm_run_remove;
    mh->api.rand_below = pm_rand_below;
    mh->api.status_reason_count = pm_status_reason_count;
    mh->api.status_reason_at = pm_status_reason_at;
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
