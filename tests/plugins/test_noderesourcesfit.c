/* NodeResourcesFit: the conformance "fit-*" scenarios, reasons and scores
 * (NodeResourcesFit has weight 1 there, so plugin scores are final). */
#include "plugin_test.h"

/* A node with allocatable cpu (millis), memory and pods, and one running
 * pod per {cpu, mem} pair in `pods` (ends at {0, 0}). */
static ks_node_info_t *node_with(const char *name, int64_t cpu, int64_t mem,
                                 int64_t max_pods, const int64_t (*pods)[2])
{
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new(name, cpu, mem, max_pods));
    int i;
    for (i = 0; pods && (pods[i][0] || pods[i][1]); i++) {
        char pn[64];
        ks_pod_t *p;
        snprintf(pn, sizeof pn, "%s-run-%d", name, i);
        p = mock_pod_new("default", pn, pods[i][0], pods[i][1]);
        mock_pod_set_node(p, name);
        mock_nodeinfo_add_pod(ni, p);
    }
    return ni;
}

/* fit-basic: a1..a5 after the running pods. */
static ks_node_info_t *basic[5];

static void build_basic(void)
{
    static const int64_t a1[][2] = {{1000, 2 * GI}, {0, 0}};
    static const int64_t a3[][2] = {{6000, 24 * GI}, {0, 0}};
    static const int64_t a5[][2] = {{500, 3 * GI}, {0, 0}};
    basic[0] = node_with("a1", 4000, 16 * GI, 110, a1);
    basic[1] = node_with("a2", 2000, 8 * GI, 110, NULL);
    basic[2] = node_with("a3", 7800, 31 * GI, 110, a3);
    basic[3] = node_with("a4", 1000, 2 * GI, 110, NULL);
    basic[4] = node_with("a5", 16000, 4 * GI, 110, a5);
}

START_TEST(fit_basic_filter_and_least_allocated)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    ks_status_t *st = mock_status_new();
    ks_pod_t *p1 = mock_pod_new("default", "p1", 1500, 2 * GI);
    ks_pod_t *p2 = mock_pod_new("default", "p2", 2000, 6 * GI);
    ks_pod_t *p3 = mock_pod_new("default", "p3", 3000, 12 * GI);
    ks_pod_t *p5 = mock_pod_new("default", "p5", 0, 0);
    static const int64_t want_p1[] = {56, 50, 9};
    static const int64_t want_p5[] = {54, 11, 21, 90, 58};

    build_basic();
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, p1, basic[0], st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, p1, basic[3], st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Insufficient cpu");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, p1, basic[4], st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Insufficient memory");
    pt_expect_scores(mh, p, self, p1, basic, 3, want_p1);

    /* p1 went to a1, p2 to a2. */
    mock_pod_set_node(p1, "a1");
    mock_nodeinfo_add_pod(basic[0], p1);
    mock_pod_set_node(p2, "a2");
    mock_nodeinfo_add_pod(basic[1], p2);
    /* Both reasons, in upstream's order. */
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, p3, basic[1], st),
                     KS_UNSCHEDULABLE);
    ck_assert_uint_eq(mock_status_reason_count(st), 2);
    ck_assert_str_eq(mock_status_reason_at(st, 0), "Insufficient cpu");
    ck_assert_str_eq(mock_status_reason_at(st, 1), "Insufficient memory");
    /* A pod without requests scores with the non-zero defaults. */
    pt_expect_scores(mh, p, self, p5, basic, 5, want_p5);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(fit_most_allocated)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p,
        "scoringStrategy:\n"
        "  type: MostAllocated\n"
        "  resources:\n"
        "  - {name: cpu, weight: 1}\n"
        "  - {name: memory, weight: 1}\n");
    static const int64_t m2_pods[][2] = {{2000, 2 * GI}, {0, 0}};
    ks_node_info_t *nis[4];
    ks_pod_t *b1 = mock_pod_new("default", "b1", 700, GI);
    static const int64_t want[] = {14, 52, 7, 30};
    nis[0] = node_with("m1", 4000, 8 * GI, 110, NULL);
    nis[1] = node_with("m2", 4000, 8 * GI, 110, m2_pods);
    nis[2] = node_with("m3", 8000, 16 * GI, 110, NULL);
    nis[3] = node_with("m4", 2000, 4 * GI, 110, NULL);
    pt_expect_scores(mh, p, self, b1, nis, 4, want);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(fit_requested_to_capacity_ratio)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p,
        "scoringStrategy:\n"
        "  type: RequestedToCapacityRatio\n"
        "  resources:\n"
        "  - {name: cpu, weight: 3}\n"
        "  - {name: memory, weight: 1}\n"
        "  requestedToCapacityRatio:\n"
        "    shape:\n"
        "    - {utilization: 0, score: 0}\n"
        "    - {utilization: 100, score: 10}\n");
    static const int64_t r1_pods[][2] = {{2000, 4 * GI}, {0, 0}};
    static const int64_t r3_pods[][2] = {{4000, 40 * GI}, {0, 0}};
    ks_node_info_t *nis[4];
    ks_pod_t *j1 = mock_pod_new("default", "j1", 1000, 2 * GI);
    /* r1: cpu 75 -> 75, memory 37.5% -> 37: (3*75 + 37) / 4 = 65.5 -> 66. */
    static const int64_t want[] = {66, 12, 40, 25};
    nis[0] = node_with("r1", 4000, 16 * GI, 110, r1_pods);
    nis[1] = node_with("r2", 8000, 16 * GI, 110, NULL);
    nis[2] = node_with("r3", 16000, 64 * GI, 110, r3_pods);
    nis[3] = node_with("r4", 4000, 8 * GI, 110, NULL);
    pt_expect_scores(mh, p, self, j1, nis, 4, want);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(rtcr_broken_line_and_zero_scores)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    /* Decreasing shape: 0% -> 10 (100), 50% -> 5 (50), 100% -> 0. */
    void *self = pt_create(mh, p,
        "scoringStrategy:\n"
        "  type: RequestedToCapacityRatio\n"
        "  requestedToCapacityRatio:\n"
        "    shape:\n"
        "    - {utilization: 0, score: 10}\n"
        "    - {utilization: 50, score: 5}\n"
        "    - {utilization: 100, score: 0}\n");
    ks_node_info_t *nis[2];
    ks_pod_t *a = mock_pod_new("default", "a", 1000, 3 * GI);
    ks_pod_t *full = mock_pod_new("default", "full", 4000, GI);
    int64_t want_a[2], want_full[2];
    nis[0] = node_with("n1", 4000, 4 * GI, 110, NULL);
    nis[1] = node_with("n2", 2000, 4 * GI, 110, NULL);
    /* n1: cpu 25% -> 75, memory 75% -> 25: (75 + 25) / 2 = 50.
     * n2: cpu 50% -> 50, memory 75% -> 25: 37.5 rounds to 38. */
    want_a[0] = 50;
    want_a[1] = 38;
    pt_expect_scores(mh, p, self, a, nis, 2, want_a);
    /* n1: cpu 100% -> 0 is left out of the mean: memory 25% -> 75.
     * n2: cpu over capacity -> shape(100) = 0, left out: 75. */
    want_full[0] = 75;
    want_full[1] = 75;
    pt_expect_scores(mh, p, self, full, nis, 2, want_full);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(extended_resources_and_ignores)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *plain = pt_create(mh, p, NULL);
    void *ign = pt_create(mh, p, "ignoredResources: [nvidia.com/gpu]\n");
    void *grp = pt_create(mh, p, "ignoredResourceGroups: [nvidia.com]\n");
    void *gpu_score = pt_create(mh, p,
        "scoringStrategy:\n"
        "  type: LeastAllocated\n"
        "  resources:\n"
        "  - {name: nvidia.com/gpu, weight: 2}\n"
        "  - {name: cpu}\n");
    ks_node_t *gpu_a = mock_node_new("gpu-a", 16000, 64 * GI, 110);
    ks_node_info_t *cpu_a = node_with("cpu-a", 16000, 64 * GI, 110, NULL);
    ks_node_info_t *ga;
    ks_pod_t *infer = mock_pod_new("default", "infer-1", 2000, 8 * GI);
    ks_status_t *st = mock_status_new();
    int64_t want[1];

    mock_resources_set(&gpu_a->allocatable, "nvidia.com/gpu", 4);
    ga = mock_nodeinfo_new(gpu_a);
    mock_pod_set_request(infer, 0, 0, "nvidia.com/gpu", 1);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, plain, infer, cpu_a, st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Insufficient nvidia.com/gpu");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, plain, infer, ga, st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, ign, infer, cpu_a, st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, grp, infer, cpu_a, st), KS_SUCCESS);
    /* fit-extended-gpu: infer-1 on gpu-a scores 87 with cpu+memory. */
    want[0] = 87;
    pt_expect_scores(mh, p, plain, infer, &ga, 1, want);
    /* gpu (3/4 free -> 75) weight 2, cpu (14/16 -> 87) weight 1:
     * (150 + 87) / 3 = 79. */
    want[0] = 79;
    pt_expect_scores(mh, p, gpu_score, infer, &ga, 1, want);
    /* Without a gpu request the resource is skipped: cpu only. */
    mock_pod_set_request(infer, 0, 0, "nvidia.com/gpu", 0);
    want[0] = 87;
    pt_expect_scores(mh, p, gpu_score, infer, &ga, 1, want);
    p->destroy(plain);
    p->destroy(ign);
    p->destroy(grp);
    p->destroy(gpu_score);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(init_containers_and_overhead)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    static const int64_t sys[][2] = {{1000, GI}, {0, 0}};
    ks_node_info_t *nis[2];
    ks_pod_t *both = mock_pod_new("default", "both", 250, 256 * MI);
    ks_status_t *st = mock_status_new();
    /* fit-init-overhead: request max(250m, 1) + 250m overhead. Scoring
     * counts the CPU overhead in whole cores (v1.24.1): 1000m + 1m on w1:
     * cpu 999/2000 -> 49, memory 3.25Gi of 4Gi -> 18: (49 + 18) / 2 = 33. */
    static const int64_t want[] = {33, 31};

    nis[0] = node_with("w1", 2000, 4 * GI, 110, NULL);
    nis[1] = node_with("w2", 3000, 6 * GI, 110, sys);
    mock_pod_add_container(both, 1, "registry.k8s.io/pause:3.7", 1000, 3 * GI);
    both->overhead.milli_cpu = 250;
    both->overhead.memory = 256 * MI;
    mock_pod_update(both);
    ck_assert_int_eq(both->requests.milli_cpu, 1250);
    pt_expect_scores(mh, p, self, both, nis, 2, want);
    /* Filter counts the overhead in millicores: 1250m + 1000m > 2000m. */
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, both, nis[1], st),
                     KS_SUCCESS);
    both->overhead.milli_cpu = 1100;
    mock_pod_update(both);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, both, nis[1], st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Insufficient cpu");
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(too_many_pods)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    static const int64_t two[][2] = {{0, 1}, {0, 1}, {0, 0}};
    ks_node_info_t *full = node_with("small-1", 1000, GI, 2, two);
    ks_node_info_t *room = node_with("small-2", 1000, GI, 3, two);
    ks_pod_t *be = mock_pod_new("default", "q", 0, 0);
    ks_pod_t *big = mock_pod_new("default", "big", 2000, 0);
    ks_status_t *st = mock_status_new();

    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, be, full, st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Too many pods");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, be, room, st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, big, full, st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), "Too many pods; Insufficient cpu");
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(score_without_prescore_and_filter_without_prefilter)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    ks_pod_t *p1 = mock_pod_new("default", "p1", 1500, 2 * GI);
    ks_cluster_event_t ev[2];
    int64_t score = -1;
    build_basic();
    ck_assert_int_eq(p->score(self, cs, p1, basic[0], &score, st), KS_SUCCESS);
    ck_assert_int_eq(score, 56);
    ck_assert_int_eq(p->filter(self, cs, p1, basic[0], st), KS_ERROR);
    pt_assert_contains(mock_status_text(st), "PreFilterNodeResourcesFit");
    ck_assert_uint_eq(p->events_to_register(self, ev, 2), 2);
    ck_assert_uint_eq(ev[0].resource, KS_RES_POD);
    ck_assert_uint_eq(ev[0].action, KS_ACT_DELETE);
    ck_assert_uint_eq(ev[1].resource, KS_RES_NODE);
    ck_assert(ev[1].action & KS_ACT_ADD);
    ck_assert(ev[1].action & KS_ACT_UPDATE_NODE_ALLOCATABLE);
    p->destroy(self);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(bad_args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    ck_assert_str_eq(pt_create_error(mh, p, "ignoredResource: [a]\n"),
                     "line 1, column 18: unknown field \"ignoredResource\" "
                     "(valid: ignoredResources, ignoredResourceGroups, "
                     "scoringStrategy)");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "scoringStrategy:\n  type: Fancy\n"),
                     "line 2, column 9: scoringStrategy.type: Unsupported "
                     "value: \"Fancy\": supported values: \"LeastAllocated\", "
                     "\"MostAllocated\", \"RequestedToCapacityRatio\"");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "scoringStrategy:\n  type: MostAllocated\n"
                         "  resources:\n  - {name: cpu, weight: 101}\n"),
                     "line 4, column 25: scoringStrategy.resources[0].weight: "
                     "Invalid value: 101: resource weight of cpu not in valid "
                     "range (0, 100]");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n  type: MostAllocated\n"
                           "  resources:\n  - {name: cpu, weight: x}\n"),
                       "weight must be an integer");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n  type: LeastAllocated\n"
                           "  resources:\n  - {name: cpu, wieght: 2}\n"),
                       "unknown field \"wieght\"");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "ignoredResourceGroups: [example.com/x]\n"),
                     "line 1, column 25: ignoredResourceGroups[0]: Invalid "
                     "value: \"example.com/x\": resource group name can't "
                     "contain '/'");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n"
                           "  type: RequestedToCapacityRatio\n"),
                       "shape: Required value: at least one point must be "
                       "specified");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n"
                           "  type: RequestedToCapacityRatio\n"
                           "  requestedToCapacityRatio:\n    shape:\n"
                           "    - {utilization: 50, score: 1}\n"
                           "    - {utilization: 50, score: 2}\n"),
                       "shape[1].utilization: Invalid value: 50: values must "
                       "be sorted in increasing order");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n"
                           "  type: RequestedToCapacityRatio\n"
                           "  requestedToCapacityRatio:\n    shape:\n"
                           "    - {utilization: 0, score: 11}\n"),
                       "shape[0].score: Invalid value: 11: not in valid range "
                       "[0, 10]");
    pt_assert_contains(pt_create_error(mh, p,
                           "scoringStrategy:\n"
                           "  type: RequestedToCapacityRatio\n"
                           "  requestedToCapacityRatio:\n    shape:\n"
                           "    - {utilization: 101, score: 1}\n"),
                       "shape[0].utilization: Invalid value: 101: not in valid "
                       "range [0, 100]");
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* The bulk Filter and Score over many nodes give the per-node results
 * (mock_score_nodes compares them): nodes that are full, short of cpu,
 * memory or ephemeral storage, without allocatable cpu or memory (0 or
 * below: the per-node path) and over-committed ones, for a pod that
 * requests nothing and one that does, with the default weights (the
 * LeastAllocated loop's shift) and with unequal ones (its division). */
START_TEST(bulk_matches_per_node)
{
    static const int64_t run[][2] = {{3000, 6 * GI}, {0, 0}};
    static const int64_t over[][2] = {{5000, 10 * GI}, {0, 0}};
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    void *weighted = pt_create(
        mh, p,
        "scoringStrategy:\n"
        "  type: LeastAllocated\n"
        "  resources:\n"
        "  - {name: cpu, weight: 3}\n"
        "  - {name: memory, weight: 1}\n");
    ks_node_info_t *nis[14];
    ks_pod_t *none = mock_pod_new("default", "none", 0, 0);
    ks_pod_t *pod = mock_pod_new("default", "pod", 1500, 3 * GI);
    ks_pod_t *eph = mock_pod_new("default", "eph", 100, GI);
    ks_status_t *st = mock_status_new();
    int64_t out[14];
    uint32_t i;
    nis[0] = node_with("a", 4000, 8 * GI, 110, NULL);
    nis[1] = node_with("full", 4000, 8 * GI, 1, run);
    nis[2] = node_with("cpu", 2000, 16 * GI, 110, run);
    nis[3] = node_with("mem", 16000, 7 * GI, 110, run);
    nis[4] = node_with("over", 4000, 8 * GI, 110, over);
    nis[5] = node_with("nocpu", 0, 8 * GI, 110, NULL);
    nis[6] = node_with("nomem", 4000, 0, 110, NULL);
    nis[7] = node_with("neg", -1000, 8 * GI, 110, NULL);
    nis[8] = node_with("b", 32000, 64 * GI, 110, run);
    nis[9] = node_with("c", 6000, 12 * GI, 110, run);
    nis[10] = node_with("d", 4100, 9 * GI, 110, run);
    /* at the edges: the pod's cpu and memory exactly what is free, the
     * last pod slot, ephemeral storage partly used */
    nis[11] = node_with("exact", 4500, 9 * GI, 110, run);
    nis[12] = node_with("lastslot", 4000, 8 * GI, 2, run);
    nis[13] = node_with("ephused", 8000, 16 * GI, 110, NULL);
    ((ks_node_t *)nis[9]->node)->allocatable.ephemeral_storage = GI;
    ((ks_node_t *)nis[13]->node)->allocatable.ephemeral_storage = 3 * GI;
    {
        ks_pod_t *e = mock_pod_new("default", "ephused-run", 100, GI);
        ((ks_resources_t *)&e->requests)->ephemeral_storage = 3 * GI / 2;
        mock_pod_set_node(e, "ephused");
        mock_nodeinfo_add_pod(nis[13], e);
    }
    ((ks_resources_t *)&eph->requests)->ephemeral_storage = 2 * GI;
    /* in the snapshot: the bulk calls are checked on its entries with the
     * host's columns too (ABI 1.7) */
    mock_host_set_nodes(mh, nis, 14);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, none, nis, 14), 1);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, pod, nis, 14), 9);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, eph, nis, 14), 14);
    for (i = 0; i < 3; i++) {
        const ks_pod_t *q = i == 0 ? none : i == 1 ? pod : eph;
        ck_assert_int_eq(mock_score_nodes(mh, p, self, q, nis, 14, out, st),
                         KS_SUCCESS);
        ck_assert_int_eq(mock_score_nodes(mh, p, weighted, q, nis, 14, out,
                                          st),
                         KS_SUCCESS);
    }
    /* a by hand: cpu (4000-1500)*100/4000 = 62, memory (8-3)*100/8 = 62;
     * weighted (62*3 + 62) / 4 = 62 */
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, nis, 1, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[0], 62);
    p->destroy(self);
    p->destroy(weighted);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* r with 100 r = 1 (mod c), 0 when there is none (c even or a multiple
 * of 5): a node with r of c requested leaves (c - r) * 100 / c a
 * remainder of c - 1, the quotient nearest the next whole number.
 * Extended Euclid, keeping t * 100 = r (mod c). */
static int64_t inverse_of_100(int64_t c)
{
    int64_t r0 = c, r1 = 100 % c, t0 = 0, t1 = 1;
    while (r1 != 0) {
        int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1;
        r1 = r;
        t0 = t1;
        t1 = t;
    }
    if (r0 != 1)
        return 0;
    return t0 < 0 ? t0 + c : t0;
}

/* The LeastAllocated loop divides in double precision where that is exact
 * (capacities below 2^46) and as integers elsewhere: the same scores as
 * the per-node integer formula (mock_score_nodes compares them) for
 * capacities up to 2^52 and requests that leave the largest remainder,
 * none, or more than the capacity. */
START_TEST(bulk_least_allocated_exact_division)
{
    static const int64_t caps[] = {
        3, 7, 101, 997, 4001, 65537, 1000003, 2147483647,
        (INT64_C(1) << 40) + 13, (INT64_C(1) << 46) - 3,
        (INT64_C(1) << 46) - 1, INT64_C(1) << 46, (INT64_C(1) << 46) + 1,
        (INT64_C(1) << 52) + 3};
    enum { NC = sizeof caps / sizeof caps[0], PER = 6 };
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeResourcesFit");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[NC * PER];
    ks_pod_t *pod = mock_pod_new("default", "pod", 1, 1);
    ks_status_t *st = mock_status_new();
    int64_t out[NC * PER], inv;
    uint32_t i, k, n = 0;
    for (i = 0; i < NC; i++) {
        const int64_t c = caps[i];
        /* what the running pod requests; the pod itself adds 1 */
        int64_t used[PER];
        inv = inverse_of_100(c);
        used[0] = inv > 1 ? inv - 1 : 1;
        used[1] = c / 3;
        used[2] = c / 2;
        used[3] = c - 1; /* with the pod: all of it */
        used[4] = c;     /* over */
        used[5] = c > 7 ? c - c / 7 : 1;
        for (k = 0; k < PER; k++) {
            /* cpu and memory alike: the mean of two equal scores is
             * either, where one of them off by one could hide */
            int64_t one[2][2] = {{used[k], used[k]}, {0, 0}};
            char name[32];
            snprintf(name, sizeof name, "n%u-%u", i, k);
            nis[n++] = node_with(name, c, c, 110,
                                 (const int64_t(*)[2])one);
        }
    }
    mock_host_set_nodes(mh, nis, n); /* the columns' way too */
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, nis, n, out, st),
                     KS_SUCCESS);
    /* by hand, for the largest remainder below 2^46: cpu and memory both
     * at r = inverse_of_100(c) score (c - r) * 100 / c, 26 */
    inv = inverse_of_100(caps[10]);
    ck_assert_int_eq(inv * 100 % caps[10], 1);
    ck_assert_int_eq(out[10 * PER + 0], (caps[10] - inv) * 100 / caps[10]);
    ck_assert_int_eq(out[10 * PER + 0], 26);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeResourcesFit");
    TCase *tc = tcase_create("fit");
    tcase_add_test(tc, fit_basic_filter_and_least_allocated);
    tcase_add_test(tc, bulk_least_allocated_exact_division);
    tcase_add_test(tc, fit_most_allocated);
    tcase_add_test(tc, fit_requested_to_capacity_ratio);
    tcase_add_test(tc, rtcr_broken_line_and_zero_scores);
    tcase_add_test(tc, extended_resources_and_ignores);
    tcase_add_test(tc, init_containers_and_overhead);
    tcase_add_test(tc, too_many_pods);
    tcase_add_test(tc, score_without_prescore_and_filter_without_prefilter);
    tcase_add_test(tc, bad_args);
    tcase_add_test(tc, bulk_matches_per_node);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
