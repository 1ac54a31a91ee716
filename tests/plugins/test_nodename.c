/* NodeName: spec.nodeName pins a pod to one node. */
#include "plugin_test.h"

START_TEST(requested_node_only)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeName");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI, 110));
    ks_node_info_t *n2 = mock_nodeinfo_new(mock_node_new("n2", 4000, 8 * GI, 110));
    ks_pod_t *free_pod = mock_pod_new("default", "free", 100, 0);
    ks_pod_t *pinned = mock_pod_new("default", "pinned", 100, 0);
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[1];

    mock_pod_set_node(pinned, "n2");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, free_pod, n1, st),
                     KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, pinned, n2, st),
                     KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, pinned, n1, st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_uint_eq(mock_status_reason_count(st), 1);
    ck_assert_str_eq(mock_status_reason_at(st, 0),
                     "node(s) didn't match the requested node name");
    ck_assert_uint_eq(p->events_to_register(self, ev, 1), 1);
    ck_assert_uint_eq(ev[0].resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[0].action, KS_ACT_ADD);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* The bulk Filter over many nodes, a missing Node among them, gives the
 * per-node verdicts: for a pod without spec.nodeName (its fast path,
 * only the missing Node is an error) and for one naming a node. */
START_TEST(bulk_filter_matches_per_node)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeName");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[11];
    ks_pod_t *any = mock_pod_new("default", "any", 100, 0);
    ks_pod_t *named = mock_pod_new("default", "named", 100, 0);
    uint32_t i;
    for (i = 0; i < 11; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%u", i);
        nis[i] = i == 3 || i == 6 ? mock_nodeinfo_new(NULL)
                                  : mock_nodeinfo_new(mock_node_new(
                                        name, 4000, 8 * GI, 110));
    }
    mock_pod_set_node(named, "n5");
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, any, nis, 11), 0);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, named, nis, 11), 8);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeName");
    TCase *tc = tcase_create("filter");
    tcase_add_test(tc, requested_node_only);
    tcase_add_test(tc, bulk_filter_matches_per_node);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
