/* NodeResourcesBalancedAllocation: the conformance "fit-basic" and
 * "balanced-allocation" scenarios (weight 1 there). */
#include "plugin_test.h"

static ks_node_info_t *node_with(const char *name, int64_t cpu, int64_t mem,
                                 int64_t run_cpu, int64_t run_mem)
{
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new(name, cpu, mem, 110));
    if (run_cpu || run_mem) {
        char pn[64];
        ks_pod_t *p;
        snprintf(pn, sizeof pn, "%s-run", name);
        p = mock_pod_new("default", pn, run_cpu, run_mem);
        mock_pod_set_node(p, name);
        mock_nodeinfo_add_pod(ni, p);
    }
    return ni;
}

START_TEST(fit_basic)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesBalancedAllocation");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[3];
    ks_pod_t *p1 = mock_pod_new("default", "p1", 1500, 2 * GI);
    ks_pod_t *none = mock_pod_new("default", "none", 0, 0);
    /* a1: cpu 2.5/4 = .625, memory 4/16 = .25: std .1875 -> 81. */
    static const int64_t want[] = {81, 75, 93};
    /* A pod without requests adds nothing (actual requests, not the
     * non-zero defaults): a1 keeps .25 / .125 -> 93; a3 .769 / .774 -> 99. */
    static const int64_t want_none[] = {93, 100, 99};
    nis[0] = node_with("a1", 4000, 16 * GI, 1000, 2 * GI);
    nis[1] = node_with("a2", 2000, 8 * GI, 0, 0);
    nis[2] = node_with("a3", 7800, 31 * GI, 6000, 24 * GI);
    pt_expect_scores(mh, p, self, p1, nis, 3, want);
    pt_expect_scores(mh, p, self, none, nis, 3, want_none);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(balanced_allocation_scenario)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesBalancedAllocation");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[4];
    ks_pod_t *mem = mock_pod_new("default", "memhungry", 500, 12 * GI);
    ks_pod_t *cpu = mock_pod_new("default", "cpuhungry", 4000, GI);
    static const int64_t want_mem[] = {84, 84, 84};
    /* mem-heavy: cpu 5/8, memory 25/32: |.625 - .78125| / 2 -> 92. */
    static const int64_t want_cpu[] = {92, 76, 92};
    nis[0] = node_with("cpu-heavy", 8000, 32 * GI, 6000, 4 * GI);
    nis[1] = node_with("empty", 8000, 32 * GI, 0, 0);
    nis[2] = node_with("even", 8000, 32 * GI, 4000, 16 * GI);
    nis[3] = node_with("mem-heavy", 8000, 32 * GI, 1000, 24 * GI);
    /* in the snapshot: the bulk Score is checked on its entries with the
     * host's columns too (ABI 1.7) */
    mock_host_set_nodes(mh, nis, 4);
    pt_expect_scores(mh, p, self, mem, nis, 3, want_mem);
    /* memhungry went to "empty". */
    mock_pod_set_node(mem, "empty");
    mock_nodeinfo_add_pod(nis[1], mem);
    pt_expect_scores(mh, p, self, cpu, nis + 1, 3, want_cpu);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(three_resources_and_capping)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesBalancedAllocation");
    void *self = pt_create(mh, p,
        "resources:\n"
        "- {name: cpu, weight: 1}\n"
        "- {name: memory}\n"
        "- {name: example.com/foo, weight: 1}\n");
    ks_node_t *n = mock_node_new("n", 4000, 4 * GI, 110);
    ks_node_info_t *ni;
    ks_pod_t *pod = mock_pod_new("default", "p", 2000, 6 * GI);
    int64_t want[1];
    mock_resources_set(&n->allocatable, "example.com/foo", 10);
    ni = mock_nodeinfo_new(n);
    /* Without a foo request only cpu and memory count: .5 and 1.5 capped
     * to 1: std .25 -> 75. */
    want[0] = 75;
    pt_expect_scores(mh, p, self, pod, &ni, 1, want);
    /* foo 1/10: fractions .5, 1, .1, mean .5333, population std
     * sqrt((.0011 + .2178 + .1878) / 3) = .3682 -> 63. */
    mock_pod_set_request(pod, 0, 0, "example.com/foo", 1);
    want[0] = 63;
    pt_expect_scores(mh, p, self, pod, &ni, 1, want);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(overhead_in_whole_cores)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesBalancedAllocation");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[2];
    ks_pod_t *both = mock_pod_new("default", "both", 250, 256 * MI);
    /* fit-init-overhead "both": cpu 1000m + 250m overhead counted as 1m
     * (v1.24.1): w1 .5005 vs memory .8125 -> 84; w2 (1 cpu, 1Gi used)
     * .667 vs .708 -> 97. */
    static const int64_t want[] = {84, 97};
    nis[0] = node_with("w1", 2000, 4 * GI, 0, 0);
    nis[1] = node_with("w2", 3000, 6 * GI, 1000, GI);
    mock_pod_add_container(both, 1, "registry.k8s.io/pause:3.7", 1000, 3 * GI);
    both->overhead.milli_cpu = 250;
    both->overhead.memory = 256 * MI;
    mock_pod_update(both);
    pt_expect_scores(mh, p, self, both, nis, 2, want);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(bad_args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesBalancedAllocation");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "resources:\n- {name: cpu, weight: 2}\n"),
                     "line 2, column 23: resources[0].weight: Invalid value: "
                     "2: must be 1");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "resources:\n- {name: cpu}\n- {name: cpu}\n"),
                     "line 3, column 10: resources[1].name: Duplicate value: "
                     "\"cpu\"");
    pt_assert_contains(pt_create_error(mh, p, "resources:\n- {weight: 1}\n"),
                       "resources[0].name: Required value");
    pt_assert_contains(pt_create_error(mh, p, "resource: []\n"),
                       "unknown field \"resource\" (valid: resources)");
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeResourcesBalancedAllocation");
    TCase *tc = tcase_create("balanced");
    tcase_add_test(tc, fit_basic);
    tcase_add_test(tc, balanced_allocation_scenario);
    tcase_add_test(tc, three_resources_and_capping);
    tcase_add_test(tc, overhead_in_whole_cores);
    tcase_add_test(tc, bad_args);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
