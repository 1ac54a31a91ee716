/*
 * RejectLabelled: a test fixture built like Coscheduling, outside the tree.
 * Its Permit rejects (Unschedulable) every pod labelled
 * test.ksched.io/reject-at-permit=true, so that the host runs Unreserve for
 * that pod while other members of its group wait at Permit. It registers no
 * cluster events: a pod it rejected is never retried.
 */
#include <ksched/plugin.h>
#include <ksched/helpers.h>

#include <stdio.h>

#define REJECT_LABEL "test.ksched.io/reject-at-permit"

typedef struct fixture {
    const ks_host_api_t *api;
    const char *label;
    const char *yes;
} fixture_t;

static fixture_t the_fixture;

static int rl_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const none[] = {NULL};
    if (ks_args_check_keys(args, none, err, errlen) != 0)
        return -1;
    the_fixture.api = api;
    the_fixture.label = api->intern(h, REJECT_LABEL);
    the_fixture.yes = api->intern(h, "true");
    *self = &the_fixture;
    return 0;
}

static ks_code_t rl_permit(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const char *node,
                           uint64_t *timeout_ms, ks_status_t *st)
{
    fixture_t *f = self;
    (void)cs;
    (void)timeout_ms;
    if (ks_labels_get(&pod->labels, f->label) != f->yes)
        return KS_SUCCESS;
    f->api->status_reasonf(st, "rejected at Permit on node %s by the test",
                           node);
    return KS_UNSCHEDULABLE;
}

static uint32_t rl_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    (void)self;
    (void)out;
    (void)cap;
    return 0;
}

KS_PLUGIN_DEFINE("RejectLabelled", "0.1.0",
    .create = rl_create,
    .permit = rl_permit,
    .events_to_register = rl_events);
