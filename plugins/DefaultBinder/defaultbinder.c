/*
 * DefaultBinder (Bind): asks the host to bind the pod to the chosen node; a
 * failure is an Error status naming the pod, the node and the host's code.
 */
#include <stdlib.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

typedef struct binder {
    const ks_host_api_t *api;
    ks_handle_t *h;
} binder_t;

static int binder_create(const ks_host_api_t *api, ks_handle_t *h,
                         const ks_args_t *args, void **self, char *err,
                         size_t errlen)
{
    static const char *const keys[] = {NULL};
    binder_t *b;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    b = calloc(1, sizeof *b);
    if (b == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->api = api;
    b->h = h;
    *self = b;
    return 0;
}

static void binder_destroy(void *self)
{
    free(self);
}

static ks_code_t binder_bind(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const char *node_name,
                             ks_status_t *st)
{
    binder_t *b = self;
    int rc;
    (void)cs;
    rc = b->api->bind(b->h, pod, node_name);
    if (rc == 0)
        return KS_SUCCESS;
    b->api->status_reasonf(st, "binding pod %s/%s to node %s failed (code %d)",
                           pod->ns, pod->name, node_name, rc);
    return KS_ERROR;
}

KS_PLUGIN_DEFINE("DefaultBinder", "1.24.1-ks1",
    .create = binder_create,
    .destroy = binder_destroy,
    .bind = binder_bind);
