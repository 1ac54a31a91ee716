/*
 * A plugin written against the ABI 1.0 SDK, built twice: against the 1.0
 * headers kept in abi_1_0/ and against the current ones. The abi-1.0-plugin
 * test runs both through `ksched schedule` and requires the same decisions.
 *
 * PreFilter stores the pod's "abi/avoid" label value in the cycle state;
 * Filter rejects nodes labelled abi/blocked=true and nodes whose "abi/pool"
 * label equals that value; Score gives 100 to nodes labelled abi/preferred.
 * Only 1.0 members of the host API table are used.
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/plugin.h>

/* The build says which headers it meant to use; make sure it got them. */
#if defined(EXPECT_ABI_MINOR) && KS_ABI_MINOR != EXPECT_ABI_MINOR
#error "abi_probe.c was not built against the expected SDK headers"
#endif

#ifndef PROBE_NAME
#define PROBE_NAME "AbiProbe"
#endif

#define STATE_KEY PROBE_NAME "/avoid"

typedef struct probe {
    const ks_host_api_t *api;
    ks_handle_t *h;
} probe_t;

static const char *label(const ks_labels_t *l, const char *key)
{
    uint32_t i;
    for (i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

static int probe_create(const ks_host_api_t *api, ks_handle_t *h,
                        const ks_args_t *args, void **self, char *err,
                        size_t errlen)
{
    probe_t *p = calloc(1, sizeof(*p));
    (void)args;
    if (p == NULL) {
        strncpy(err, "out of memory", errlen - 1);
        err[errlen - 1] = '\0';
        return -1;
    }
    p->api = api;
    p->h = h;
    *self = p;
    return 0;
}

static void probe_destroy(void *self)
{
    free(self);
}

static ks_code_t probe_pre_filter(void *self, ks_cycle_state_t *cs,
                                  const ks_pod_t *pod,
                                  ks_prefilter_result_t *result,
                                  ks_status_t *st)
{
    probe_t *p = self;
    const char *avoid = label(&pod->labels, "abi/avoid");
    (void)result;
    if (avoid == NULL)
        return KS_SUCCESS;
    /* Interned strings live as long as the host: shared, never freed. */
    if (p->api->cycle_state_write(cs, STATE_KEY, (void *)avoid, NULL, NULL) !=
        0) {
        p->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static ks_code_t probe_filter(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, const ks_node_info_t *ni,
                              ks_status_t *st)
{
    probe_t *p = self;
    const char *blocked = label(&ni->node->labels, "abi/blocked");
    const char *avoid = p->api->cycle_state_read(cs, STATE_KEY);
    const char *pool = label(&ni->node->labels, "abi/pool");
    (void)pod;
    if (blocked != NULL && strcmp(blocked, "true") == 0) {
        p->api->status_reason(st, "node(s) blocked for the ABI probe");
        return KS_UNSCHEDULABLE;
    }
    if (avoid != NULL && pool != NULL && strcmp(avoid, pool) == 0) {
        p->api->status_reasonf(st, "node(s) in pool %s, which the pod avoids",
                               pool);
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

static ks_code_t probe_score(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_node_info_t *ni,
                             int64_t *score, ks_status_t *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    *score = label(&ni->node->labels, "abi/preferred") != NULL ? 100 : 0;
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(PROBE_NAME, "1.0.0", .create = probe_create,
                 .destroy = probe_destroy, .pre_filter = probe_pre_filter,
                 .filter = probe_filter, .score = probe_score);
