/* DefaultBinder: binds through the host; failures become Error. */
#include "plugin_test.h"

START_TEST(binds_through_host)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("DefaultBinder");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *pod = mock_pod_new("team-a", "web", 100, 0);
    ks_status_t *st = mock_status_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();

    ck_assert_int_eq(p->bind(self, cs, pod, mock_intern("n7"), st), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_binds, 1);
    ck_assert_ptr_eq(mh->bound_pod, pod);
    ck_assert_str_eq(mh->bound_node, "n7");
    ck_assert_uint_eq(mock_status_reason_count(st), 0);

    mh->bind_rc = -1003;
    ck_assert_int_eq(p->bind(self, cs, pod, mock_intern("n8"), st), KS_ERROR);
    ck_assert_uint_eq(mh->n_binds, 2);
    ck_assert_uint_eq(mock_status_reason_count(st), 1);
    ck_assert_str_eq(mock_status_reason_at(st, 0),
                     "binding pod team-a/web to node n8 failed (code -1003)");
    p->destroy(self);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(rejects_args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("DefaultBinder");
    pt_assert_contains(pt_create_error(mh, p, "timeout: 3\n"),
                       "unknown field \"timeout\"");
    pt_assert_contains(pt_create_error(mh, p, "[1, 2]\n"),
                       "args must be a mapping");
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("DefaultBinder");
    TCase *tc = tcase_create("bind");
    tcase_add_test(tc, binds_through_host);
    tcase_add_test(tc, rejects_args);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
