/* SchedulingGates: gated pods stay out of the active queue. */
#include "plugin_test.h"

START_TEST(gates_block_enqueue)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("SchedulingGates");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *pod = mock_pod_new("default", "p", 0, 0);
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[4];

    ck_assert_int_eq(p->pre_enqueue(self, pod, st), KS_SUCCESS);
    ck_assert_uint_eq(mock_status_reason_count(st), 0);
    mock_pod_add_gate(pod, "example.com/quota");
    ck_assert_int_eq(p->pre_enqueue(self, pod, st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(st),
                     "waiting for scheduling gates: [example.com/quota]");
    mock_status_reset(st);
    mock_pod_add_gate(pod, "b");
    ck_assert_int_eq(p->pre_enqueue(self, pod, st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(st),
                     "waiting for scheduling gates: [example.com/quota b]");

    ck_assert_uint_eq(p->events_to_register(self, ev, 4), 1);
    ck_assert_uint_eq(ev[0].resource, KS_RES_POD);
    ck_assert_uint_eq(ev[0].action, KS_ACT_UPDATE);
    /* A zero-capacity query only counts. */
    ck_assert_uint_eq(p->events_to_register(self, NULL, 0), 1);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("SchedulingGates");
    TCase *tc = tcase_create("pre_enqueue");
    tcase_add_test(tc, gates_block_enqueue);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
