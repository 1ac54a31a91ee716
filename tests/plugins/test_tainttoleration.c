/* TaintToleration: the conformance "taints-noschedule" and "taints-prefer"
 * scenarios. */
#include "plugin_test.h"

static ks_node_info_t *t_nodes[5];

static void build_noschedule_nodes(void)
{
    ks_node_t *t1 = mock_node_new("t1", 4000, 8 * GI, 110);
    ks_node_t *t2 = mock_node_new("t2", 4000, 8 * GI, 110);
    ks_node_t *t3 = mock_node_new("t3", 4000, 8 * GI, 110);
    ks_node_t *t4 = mock_node_new("t4", 4000, 8 * GI, 110);
    ks_node_t *t5 = mock_node_new("t5", 4000, 8 * GI, 110);
    mock_node_add_taint(t1, "dedicated", "gpu", KS_EFFECT_NO_SCHEDULE);
    mock_node_add_taint(t2, "maintenance", "", KS_EFFECT_NO_EXECUTE);
    mock_node_add_taint(t3, "team", "a", KS_EFFECT_NO_SCHEDULE);
    mock_node_add_taint(t3, "spot", "true", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(t4, "team", "b", KS_EFFECT_NO_SCHEDULE);
    t_nodes[0] = mock_nodeinfo_new(t1);
    t_nodes[1] = mock_nodeinfo_new(t2);
    t_nodes[2] = mock_nodeinfo_new(t3);
    t_nodes[3] = mock_nodeinfo_new(t4);
    t_nodes[4] = mock_nodeinfo_new(t5);
}

/* Filter the pod on t1..t5; `want` holds the expected reason per node
 * ("" = fits). */
static void expect_filter(mock_host_t *mh, const ks_plugin_t *p, void *self,
                          const ks_pod_t *pod, const char *const want[5])
{
    ks_status_t *st = mock_status_new();
    int i;
    for (i = 0; i < 5; i++) {
        ks_code_t c = mock_prefilter_filter(mh, p, self, pod, t_nodes[i], st);
        if (want[i][0] == '\0') {
            ck_assert_msg(c == KS_SUCCESS, "%s on t%d: %s", pod->name, i + 1,
                          mock_status_text(st));
        } else {
            ck_assert_msg(c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "%s on t%d: code %d", pod->name, i + 1, (int)c);
            ck_assert_str_eq(mock_status_text(st), want[i]);
        }
    }
    mock_status_free(st);
}

#define R_GPU "node(s) had untolerated taint {dedicated: gpu}"
#define R_MAINT "node(s) had untolerated taint {maintenance: }"
#define R_TEAM_A "node(s) had untolerated taint {team: a}"
#define R_TEAM_B "node(s) had untolerated taint {team: b}"

START_TEST(conformance_noschedule)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("TaintToleration");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *plain = mock_pod_new("default", "plain", 500, GI);
    ks_pod_t *gpu = mock_pod_new("default", "gpu-tol", 500, GI);
    ks_pod_t *team_any = mock_pod_new("default", "team-any", 500, GI);
    ks_pod_t *maint = mock_pod_new("default", "maint", 500, GI);
    ks_pod_t *team_c = mock_pod_new("default", "team-c", 500, GI);
    static const char *const w_plain[5] = {R_GPU, R_MAINT, R_TEAM_A, R_TEAM_B, ""};
    static const char *const w_gpu[5] = {"", R_MAINT, R_TEAM_A, R_TEAM_B, ""};
    static const char *const w_team_any[5] = {R_GPU, R_MAINT, "", "", ""};
    static const char *const w_maint[5] = {R_GPU, "", R_TEAM_A, R_TEAM_B, ""};

    build_noschedule_nodes();
    mock_pod_add_toleration(gpu, "dedicated", KS_TOLERATION_EQUAL, "gpu",
                            KS_EFFECT_NO_SCHEDULE);
    mock_pod_add_toleration(team_any, "team", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_ALL);
    mock_pod_add_toleration(maint, "maintenance", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_NO_EXECUTE);
    mock_pod_add_toleration(team_c, "team", KS_TOLERATION_EQUAL, "c",
                            KS_EFFECT_ALL);
    expect_filter(mh, p, self, plain, w_plain);
    expect_filter(mh, p, self, gpu, w_gpu);
    expect_filter(mh, p, self, team_any, w_team_any);
    expect_filter(mh, p, self, maint, w_maint);
    expect_filter(mh, p, self, team_c, w_plain);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(conformance_prefer_scores)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("TaintToleration");
    void *self = pt_create(mh, p, NULL);
    ks_node_t *s0 = mock_node_new("s0", 4000, 8 * GI, 110);
    ks_node_t *s1 = mock_node_new("s1", 4000, 8 * GI, 110);
    ks_node_t *s2 = mock_node_new("s2", 4000, 8 * GI, 110);
    ks_node_t *s3 = mock_node_new("s3", 4000, 8 * GI, 110);
    ks_node_info_t *nis[4];
    ks_pod_t *a = mock_pod_new("default", "a", 500, GI);
    ks_pod_t *tol_spot = mock_pod_new("default", "tol-spot", 500, GI);
    ks_pod_t *tol_all = mock_pod_new("default", "tol-all", 500, GI);
    ks_pod_t *tol_noexec = mock_pod_new("default", "tol-noexec", 500, GI);
    ks_status_t *st = mock_status_new();
    int64_t out[4];

    mock_node_add_taint(s1, "spot", "true", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(s2, "spot", "true", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(s2, "old-gen", "", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(s3, "old-gen", "", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(s3, "noisy", "yes", KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_node_add_taint(s3, "spot", "true", KS_EFFECT_PREFER_NO_SCHEDULE);
    nis[0] = mock_nodeinfo_new(s0);
    nis[1] = mock_nodeinfo_new(s1);
    nis[2] = mock_nodeinfo_new(s2);
    nis[3] = mock_nodeinfo_new(s3);
    mock_pod_add_toleration(tol_spot, "spot", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_PREFER_NO_SCHEDULE);
    mock_pod_add_toleration(tol_all, "", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_ALL);
    /* A NoExecute toleration does not count for PreferNoSchedule. */
    mock_pod_add_toleration(tol_noexec, "spot", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_NO_EXECUTE);

    /* Expected are the conformance totals divided by the weight 3. */
    ck_assert_int_eq(mock_score_nodes(mh, p, self, a, nis, 4, out, st), KS_SUCCESS);
    ck_assert_int_eq(out[0], 100);
    ck_assert_int_eq(out[1], 67);
    ck_assert_int_eq(out[2], 34);
    ck_assert_int_eq(out[3], 0);
    ck_assert_int_eq(mock_score_nodes(mh, p, self, tol_spot, nis, 4, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[0], 100);
    ck_assert_int_eq(out[1], 100);
    ck_assert_int_eq(out[2], 50);
    ck_assert_int_eq(out[3], 0);
    /* Nothing intolerable anywhere: every node gets 100. */
    ck_assert_int_eq(mock_score_nodes(mh, p, self, tol_all, nis, 4, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[0], 100);
    ck_assert_int_eq(out[3], 100);
    ck_assert_int_eq(mock_score_nodes(mh, p, self, tol_noexec, nis, 4, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[1], 67);
    /* PreferNoSchedule taints never filter. */
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, a, nis[3], st),
                     KS_SUCCESS);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(score_needs_prescore)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("TaintToleration");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n", 1000, GI, 10));
    ks_pod_t *pod = mock_pod_new("default", "p", 0, 0);
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[1];
    int64_t score = -1;

    ck_assert_int_eq(p->score(self, cs, pod, ni, &score, st), KS_ERROR);
    ck_assert_str_eq(mock_status_text(st),
                     "error reading \"PreScoreTaintToleration\" from "
                     "cycleState: not found");
    ck_assert_uint_eq(p->events_to_register(self, ev, 1), 1);
    ck_assert_uint_eq(ev[0].resource, KS_RES_NODE);
    ck_assert(ev[0].action & KS_ACT_ADD);
    ck_assert(ev[0].action & KS_ACT_UPDATE_NODE_TAINT);
    pt_assert_contains(pt_create_error(mh, p, "weight: 3\n"),
                       "unknown field \"weight\"");
    p->destroy(self);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* The bulk Filter and Score over many nodes (untainted ones, which the
 * fast paths handle, tainted ones and a missing Node) give the per-node
 * results; NormalizeScore's all-zero fast path gives what the general
 * normalization gives, for every length around its 4-at-a-time loops. */
START_TEST(bulk_matches_per_node)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("TaintToleration");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *nis[9];
    ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
    ks_pod_t *tol = mock_pod_new("default", "tol", 100, 0);
    ks_status_t *st = mock_status_new();
    ks_node_score_t sc[9], ref[9];
    int64_t out[9];
    uint32_t i, n;
    mock_pod_add_toleration(tol, "dedicated", KS_TOLERATION_EXISTS, "",
                            KS_EFFECT_ALL);
    for (i = 0; i < 9; i++) {
        char name[16];
        ks_node_t *node;
        snprintf(name, sizeof name, "n%u", i);
        node = mock_node_new(name, 4000, 8 * GI, 110);
        if (i == 2 || i == 6)
            mock_node_add_taint(node, "dedicated", "x", KS_EFFECT_NO_SCHEDULE);
        if (i == 5)
            mock_node_add_taint(node, "spot", "", KS_EFFECT_PREFER_NO_SCHEDULE);
        if (i == 8)
            mock_node_add_taint(node, "gone", "", KS_EFFECT_NO_EXECUTE);
        nis[i] = mock_nodeinfo_new(i == 4 ? NULL : node);
    }
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, pod, nis, 9), 3);
    ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, tol, nis, 9), 1);
    /* the nodes with a Node in the snapshot: the bulk calls are checked
     * on its entries with the host's columns too (ABI 1.7) */
    {
        ks_node_info_t *real[8];
        for (i = n = 0; i < 9; i++)
            if (i != 4)
                real[n++] = nis[i];
        mock_host_set_nodes(mh, real, n);
        ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, pod, real, n),
                          3);
        ck_assert_uint_eq(pt_check_filter_nodes(mh, p, self, tol, real, n),
                          1);
    }
    /* Score (bulk compared with per-node by mock_score_nodes), over the
     * nodes with a Node: untainted only, then with the PreferNoSchedule
     * one. */
    nis[4] = nis[0];
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, nis, 5, out, st),
                     KS_SUCCESS);
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(out[i], 100);
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, nis, 9, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[5], 0);
    ck_assert_int_eq(out[7], 100);
    for (n = 0; n <= 9; n++) {
        int nonzero;
        for (nonzero = 0; nonzero < 2; nonzero++) {
            for (i = 0; i < n; i++) {
                sc[i].node_name = "x";
                sc[i].score = nonzero && i == n - 1 ? 3 : 0;
                ref[i] = sc[i];
            }
            ks_default_normalize_score(KS_MAX_NODE_SCORE, 1, ref, n);
            ck_assert_int_eq(p->normalize_score(self, NULL, pod, sc, n, st),
                             KS_SUCCESS);
            for (i = 0; i < n; i++)
                ck_assert_int_eq(sc[i].score, ref[i].score);
        }
    }
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("TaintToleration");
    TCase *tc = tcase_create("taints");
    tcase_add_test(tc, conformance_noschedule);
    tcase_add_test(tc, conformance_prefer_scores);
    tcase_add_test(tc, score_needs_prescore);
    tcase_add_test(tc, bulk_matches_per_node);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
