/* PrioritySort: queue order by priority, then queue timestamp. */
#include "plugin_test.h"

static ks_queued_pod_t qp(ks_pod_t *pod, int32_t prio, int64_t ts)
{
    ks_queued_pod_t q;
    memset(&q, 0, sizeof q);
    pod->priority = prio;
    q.pod = pod;
    q.timestamp_ms = ts;
    return q;
}

START_TEST(orders_by_priority_then_time)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("PrioritySort");
    void *self = pt_create(mh, p, NULL);
    ks_queued_pod_t hi = qp(mock_pod_new("default", "hi", 0, 0), 1000, 500);
    ks_queued_pod_t lo = qp(mock_pod_new("default", "lo", 0, 0), 10, 100);
    ks_queued_pod_t lo_later = qp(mock_pod_new("default", "lo2", 0, 0), 10, 200);
    ks_queued_pod_t neg = qp(mock_pod_new("default", "neg", 0, 0), -5, 0);

    ck_assert(p->less != NULL);
    /* Higher priority wins even when queued later. */
    ck_assert_int_ne(p->less(self, &hi, &lo), 0);
    ck_assert_int_eq(p->less(self, &lo, &hi), 0);
    /* Equal priority: earlier timestamp first. */
    ck_assert_int_ne(p->less(self, &lo, &lo_later), 0);
    ck_assert_int_eq(p->less(self, &lo_later, &lo), 0);
    /* Strict: never less than itself. */
    ck_assert_int_eq(p->less(self, &lo, &lo), 0);
    ck_assert_int_ne(p->less(self, &lo, &neg), 0);
    ck_assert(p->events_to_register == NULL);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(rejects_args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("PrioritySort");
    const char *e = pt_create_error(mh, p, "foo: 1\n");
    ck_assert_str_eq(e, "line 1, column 6: unknown field \"foo\" (valid:)");
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("PrioritySort");
    TCase *tc = tcase_create("less");
    tcase_add_test(tc, orders_by_priority_then_time);
    tcase_add_test(tc, rejects_args);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
