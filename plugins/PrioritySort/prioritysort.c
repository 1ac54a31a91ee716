/*
 * PrioritySort (QueueSort): pods with a higher priority first; between equal
 * priorities, the one queued earlier first. As upstream v1.24.1.
 */
#include <stdlib.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

typedef struct prio_sort {
    const ks_host_api_t *api;
} prio_sort_t;

static int prio_sort_create(const ks_host_api_t *api, ks_handle_t *h,
                            const ks_args_t *args, void **self, char *err,
                            size_t errlen)
{
    static const char *const keys[] = {NULL};
    prio_sort_t *ps;
    (void)h;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    ps = calloc(1, sizeof *ps);
    if (ps == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ps->api = api;
    *self = ps;
    return 0;
}

static void prio_sort_destroy(void *self)
{
    free(self);
}

static int prio_sort_less(void *self, const ks_queued_pod_t *a,
                          const ks_queued_pod_t *b)
{
    int32_t pa = a->pod->priority, pb = b->pod->priority;
    (void)self;
    return pa > pb || (pa == pb && a->timestamp_ms < b->timestamp_ms);
}

KS_PLUGIN_DEFINE("PrioritySort", "1.24.1-ks1",
    .create = prio_sort_create,
    .destroy = prio_sort_destroy,
    .less = prio_sort_less);
