/* NodeUnschedulable: cordoned nodes reject pods that do not tolerate it. */
#include "plugin_test.h"

START_TEST(cordoned_node)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeUnschedulable");
    void *self = pt_create(mh, p, NULL);
    ks_node_t *n = mock_node_new("n1", 4000, 8 * GI, 110);
    ks_node_info_t *ni = mock_nodeinfo_new(n);
    ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
    ks_pod_t *tol = mock_pod_new("default", "tol", 100, 0);
    ks_pod_t *tol_all = mock_pod_new("default", "tol-all", 100, 0);
    ks_pod_t *wrong = mock_pod_new("default", "wrong", 100, 0);
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[2];

    mock_pod_add_toleration(tol, "node.kubernetes.io/unschedulable",
                            KS_TOLERATION_EXISTS, "", KS_EFFECT_NO_SCHEDULE);
    mock_pod_add_toleration(tol_all, "", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_ALL);
    mock_pod_add_toleration(wrong, "node.kubernetes.io/unschedulable",
                            KS_TOLERATION_EXISTS, "", KS_EFFECT_NO_EXECUTE);

    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, pod, ni, st), KS_SUCCESS);
    n->unschedulable = 1;
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, pod, ni, st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(st), "node(s) were unschedulable");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, tol, ni, st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, tol_all, ni, st),
                     KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, wrong, ni, st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);

    ck_assert_uint_eq(p->events_to_register(self, ev, 2), 1);
    ck_assert_uint_eq(ev[0].resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[0].action, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* The bulk Filter over many nodes (cordoned ones and a missing Node
 * among them) gives the per-node verdicts, for a pod that tolerates the
 * unschedulable taint (only the missing Node fails) and one that does
 * not. */
START_TEST(bulk_filter_matches_per_node)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeUnschedulable");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[10];
    ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
    ks_pod_t *tol = mock_pod_new("default", "tol", 100, 0);
    uint32_t i;
    mock_pod_add_toleration(tol, "node.kubernetes.io/unschedulable",
                            KS_TOLERATION_EXISTS, "", KS_EFFECT_NO_SCHEDULE);
    for (i = 0; i < 10; i++) {
        char name[16];
        ks_node_t *n;
        snprintf(name, sizeof name, "n%u", i);
        if (i == 7) {
            nis[i] = mock_nodeinfo_new(NULL);
            continue;
        }
        n = mock_node_new(name, 4000, 8 * GI, 110);
        n->unschedulable = i % 3 == 1;
        nis[i] = mock_nodeinfo_new(n);
    }
    /* cordoned: 1 and 4 (7 has no Node), and the missing Node */
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, pod, nis, 10), 3);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, tol, nis, 10), 1);
    /* the nodes with a Node in the snapshot: checked on its entries with
     * the host's columns too (ABI 1.7) */
    nis[7] = nis[9];
    mock_host_set_nodes(mh, nis, 9);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, pod, nis, 9), 2);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, tol, nis, 9), 0);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeUnschedulable");
    TCase *tc = tcase_create("filter");
    tcase_add_test(tc, cordoned_node);
    tcase_add_test(tc, bulk_filter_matches_per_node);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
