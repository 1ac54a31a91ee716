/*
 * Profile checks of ks_framework_build: missing functions, duplicates,
 * QueueSort and Bind counts, create failures, missing plugins, multiPoint
 * expansion order and Score weights.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fw_testlib.h"

#define PROFILE PROFILE_HEAD

/* The default lists (ksched's default plugins, all through multiPoint). */
#define DEFAULT_FILTER                                                         \
    "NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, "  \
    "NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, "  \
    "VolumeZone, PodTopologySpread, InterPodAffinity, DynamicResources"
#define DEFAULT_SCORE                                                          \
    "TaintToleration(3), NodeAffinity(2), NodeResourcesFit(1), "               \
    "VolumeBinding(1), PodTopologySpread(2), InterPodAffinity(2), "            \
    "DynamicResources(1), NodeResourcesBalancedAllocation(1), "                \
    "ImageLocality(1)"

static ks_registry_t *reg;

static void setup(void)
{
    reg = tl_registry();
}

static void teardown(void)
{
    ks_registry_free(reg);
    reg = NULL;
}

/* Build the first profile of `yaml`; returns the code. */
static int build(const char *yaml, ks_framework_t **fw, ks_error_t *err)
{
    ks_config_t *cfg = tl_config(yaml);
    int rc;
    memset(err, 0, sizeof *err);
    *fw = NULL;
    rc = ks_framework_build(&cfg->profiles[0], "inline.yaml", reg, 1, fw, err);
    ks_config_free(cfg);
    if (rc != 0)
        ck_assert_ptr_null(*fw);
    return rc;
}

/* "A, B, C" — Score entries as "A(weight)". */
static const char *list_str(const ks_framework_t *fw, ks_ext_point_t ep)
{
    static char buf[2048];
    size_t i, off = 0;
    buf[0] = '\0';
    for (i = 0; i < fw->n_points[ep]; i++) {
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                i ? ", " : "", fw->points[ep][i].inst->name);
        if (ep == KS_EP_SCORE)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "(%d)",
                                    fw->points[ep][i].weight);
    }
    return buf;
}

static int count_lines(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#define ASSERT_HAS(msg, sub)                                                   \
    ck_assert_msg(strstr((msg), (sub)) != NULL, "\"%s\" not in: %s", (sub),     \
                  (msg))

/* --- checks before any plugin code runs --------------------------------------- */

START_TEST(test_enabled_without_function)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    score:\n"
                                   "      enabled:\n"
                                   "      - name: NoScore\n",
                           &fw, &err),
                     KS_EMISSINGFN);
    ck_assert_int_eq(err.code, KS_EMISSINGFN);
    /* Position of the "- name: NoScore" entry, profile, plugin, file. */
    ck_assert_str_eq(err.msg,
                     "inline.yaml:8:9: profile \"default-scheduler\": plugin "
                     "\"NoScore\" (noscore.so) is enabled at Score but does "
                     "not implement score");
}
END_TEST

START_TEST(test_multipoint_uses_only_implemented_points)
{
    ks_framework_t *fw;
    ks_error_t err;
    /* Through multiPoint a plugin is enabled only where it implements. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: NoScore\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_FILTER), DEFAULT_FILTER ", NoScore");
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE), DEFAULT_SCORE);
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_FILTER),
                     "NodeAffinity, NodePorts, NodeResourcesFit, "
                     "VolumeRestrictions, NodeVolumeLimits, VolumeBinding, "
                     "VolumeZone, PodTopologySpread, InterPodAffinity, "
                     "DynamicResources");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_duplicate_at_one_point)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    filter:\n"
                                   "      enabled:\n"
                                   "      - name: Probe1\n"
                                   "      - name: Probe1\n",
                           &fw, &err),
                     KS_EDUPPOINT);
    ASSERT_HAS(err.msg, "inline.yaml:9:9: profile \"default-scheduler\": "
                        "plugin \"Probe1\" is enabled twice at Filter");
    ck_assert_int_eq(count_lines(err.msg), 1);

    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: Probe2\n"
                                   "      - name: Probe2\n",
                           &fw, &err),
                     KS_EDUPPOINT);
    ASSERT_HAS(err.msg, "plugin \"Probe2\" is enabled twice at multiPoint");
}
END_TEST

START_TEST(test_queue_sort_count)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    queueSort:\n"
                                   "      disabled:\n"
                                   "      - name: PrioritySort\n",
                           &fw, &err),
                     KS_EQUEUESORT);
    ASSERT_HAS(err.msg, "inline.yaml:4: profile \"default-scheduler\" has 0 "
                        "QueueSort plugins; exactly one is required");

    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    queueSort:\n"
                                   "      enabled:\n"
                                   "      - name: FifoSort\n",
                           &fw, &err),
                     KS_EQUEUESORT);
    ASSERT_HAS(err.msg, "has 2 QueueSort plugins (PrioritySort, FifoSort); "
                        "exactly one is required");

    /* Replacing the default is fine. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    queueSort:\n"
                                   "      enabled:\n"
                                   "      - name: FifoSort\n"
                                   "      disabled:\n"
                                   "      - name: '*'\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_QUEUE_SORT), "FifoSort");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_no_bind)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    bind:\n"
                                   "      disabled:\n"
                                   "      - name: DefaultBinder\n",
                           &fw, &err),
                     KS_ENOBIND);
    ASSERT_HAS(err.msg, "profile \"default-scheduler\" has no Bind plugin");

    /* Both count problems at once are both reported. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    bind:\n"
                                   "      disabled:\n"
                                   "      - name: DefaultBinder\n"
                                   "    queueSort:\n"
                                   "      disabled:\n"
                                   "      - name: PrioritySort\n",
                           &fw, &err),
                     KS_EQUEUESORT);
    ASSERT_HAS(err.msg, "has 0 QueueSort plugins");
    ASSERT_HAS(err.msg, "has no Bind plugin");
    ck_assert_int_eq(count_lines(err.msg), 2);

    /* Another binder instead of the default one. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    bind:\n"
                                   "      enabled:\n"
                                   "      - name: Probe3\n"
                                   "      disabled:\n"
                                   "      - name: DefaultBinder\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_BIND), "Probe3");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_create_failure)
{
    ks_framework_t *fw;
    ks_error_t err;
    const char *base = PROFILE "  plugins:\n"
                               "    filter:\n"
                               "      enabled:\n"
                               "      - name: FailCreate\n";
    char yaml[2048];

    ck_assert_int_eq(build(base, &fw, &err), KS_ECREATE);
    ck_assert_str_eq(err.msg,
                     "inline.yaml: profile \"default-scheduler\": plugin "
                     "\"FailCreate\" (failcreate.so) refused its "
                     "configuration: bad args: field \"mode\" is required");

    snprintf(yaml, sizeof yaml,
             "%s  pluginConfig:\n"
             "  - name: FailCreate\n"
             "    args:\n"
             "      mode: bad\n",
             base);
    ck_assert_int_eq(build(yaml, &fw, &err), KS_ECREATE);
    /* The plugin's own message, with the position it found in its args. */
    ASSERT_HAS(err.msg, "plugin \"FailCreate\" (failcreate.so) refused its "
                        "configuration: bad args: line 12, column 13: mode "
                        "must be \"good\", got \"bad\"");

    snprintf(yaml, sizeof yaml,
             "%s  pluginConfig:\n"
             "  - name: FailCreate\n"
             "    args:\n"
             "      mode: good\n",
             base);
    ck_assert_int_eq(build(yaml, &fw, &err), 0);
    ck_assert_str_eq(list_str(fw, KS_EP_FILTER), DEFAULT_FILTER ", FailCreate");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_probe_bad_args)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    filter:\n"
                                   "      enabled:\n"
                                   "      - name: Probe1\n"
                                   "  pluginConfig:\n"
                                   "  - name: Probe1\n"
                                   "    args:\n"
                                   "      filterr: Error\n",
                           &fw, &err),
                     KS_ECREATE);
    ASSERT_HAS(err.msg, "plugin \"Probe1\" (probe1.so) refused its "
                        "configuration: line 12, column 16: unknown field "
                        "\"filterr\" (valid: traceFile,");
}
END_TEST

START_TEST(test_no_create_before_checks_pass)
{
    ks_framework_t *fw;
    ks_error_t err;
    char *trace = tl_trace_new();
    char *yaml = tl_subst(PROFILE "  plugins:\n"
                                  "    filter:\n"
                                  "      enabled:\n"
                                  "      - name: Probe1\n"
                                  "      - name: FailCreate\n"
                                  "    score:\n"
                                  "      enabled:\n"
                                  "      - name: NoScore\n"
                                  "  pluginConfig:\n"
                                  "  - name: Probe1\n"
                                  "    args:\n"
                                  "      traceFile: @T@\n",
                          "T", trace);
    char *text;
    /* NoScore's missing function is found; FailCreate's create (which would
     * fail) and Probe1's (which would write the trace) never run. */
    ck_assert_int_eq(build(yaml, &fw, &err), KS_EMISSINGFN);
    ck_assert_int_eq(count_lines(err.msg), 1);
    ck_assert_ptr_null(strstr(err.msg, "FailCreate"));
    text = tl_read_file(trace);
    ck_assert_str_eq(text, "");
    free(text);
    free(yaml);
    unlink(trace);
    free(trace);
}
END_TEST

START_TEST(test_missing_plugin)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    permit:\n"
                                   "      enabled:\n"
                                   "      - name: NotThere\n",
                           &fw, &err),
                     KS_ENOTFOUND);
    ASSERT_HAS(err.msg, "inline.yaml:8:9: profile \"default-scheduler\": "
                        "plugin \"NotThere\" (enabled at Permit) was not found "
                        "in the plugin path ");
    ASSERT_HAS(err.msg, "/fixtures/plugins:");

    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: AlsoMissing\n",
                           &fw, &err),
                     KS_ENOTFOUND);
    ASSERT_HAS(err.msg, "plugin \"AlsoMissing\" (enabled at MultiPoint) was "
                        "not found");
}
END_TEST

START_TEST(test_every_problem_reported)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    filter:\n"
                                   "      enabled:\n"
                                   "      - name: Probe1\n"
                                   "      - name: Probe1\n"
                                   "    score:\n"
                                   "      enabled:\n"
                                   "      - name: NoScore\n"
                                   "    permit:\n"
                                   "      enabled:\n"
                                   "      - name: NotThere\n",
                           &fw, &err),
                     KS_EDUPPOINT); /* the first one found sets the code */
    ck_assert_int_eq(count_lines(err.msg), 3);
    ASSERT_HAS(err.msg, "inline.yaml:9:9: profile \"default-scheduler\": "
                        "plugin \"Probe1\" is enabled twice at Filter");
    ASSERT_HAS(err.msg, "inline.yaml:12:9: profile \"default-scheduler\": "
                        "plugin \"NoScore\" (noscore.so) is enabled at Score "
                        "but does not implement score");
    ASSERT_HAS(err.msg, "inline.yaml:15:9: profile \"default-scheduler\": "
                        "plugin \"NotThere\" (enabled at Permit) was not "
                        "found");
}
END_TEST

/* --- multiPoint expansion and weights ---------------------------------------------- */

START_TEST(test_default_lists)
{
    ks_framework_t *fw;
    ks_error_t err;
    ck_assert_int_eq(build(PROFILE, &fw, &err), 0);
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_ENQUEUE),
                     "SchedulingGates, DynamicResources");
    ck_assert_str_eq(list_str(fw, KS_EP_QUEUE_SORT), "PrioritySort");
    ck_assert_str_eq(list_str(fw, KS_EP_FILTER), DEFAULT_FILTER);
    ck_assert_str_eq(list_str(fw, KS_EP_POST_FILTER),
                     "DynamicResources, DefaultPreemption");
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE), DEFAULT_SCORE);
    ck_assert_str_eq(list_str(fw, KS_EP_BIND), "DefaultBinder");
    ck_assert_str_eq(list_str(fw, KS_EP_RESERVE),
                     "VolumeBinding, DynamicResources");
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_BIND),
                     "VolumeBinding, DynamicResources");
    ck_assert_str_eq(list_str(fw, KS_EP_PERMIT), "");
    ck_assert_str_eq(fw->profile_name, "default-scheduler");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_expansion_order)
{
    ks_framework_t *fw;
    ks_error_t err;
    /* Specific entries that name a multiPoint plugin override it and come
     * first (in their own order), then the multiPoint plugins, then the
     * other specific entries. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    filter:\n"
                                   "      enabled:\n"
                                   "      - name: Probe1\n"
                                   "      - name: NodePorts\n"
                                   "      - name: Probe2\n"
                                   "      - name: NodeName\n"
                                   "      disabled:\n"
                                   "      - name: NodeUnschedulable\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_FILTER),
                     "NodePorts, NodeName, TaintToleration, NodeAffinity, "
                     "NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, "
                     "VolumeBinding, VolumeZone, PodTopologySpread, "
                     "InterPodAffinity, DynamicResources, "
                     "Probe1, Probe2");
    /* Disabling at Filter leaves the plugin's other points alone. */
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_FILTER),
                     "NodeAffinity, NodePorts, NodeResourcesFit, "
                     "VolumeRestrictions, NodeVolumeLimits, VolumeBinding, "
                     "VolumeZone, PodTopologySpread, InterPodAffinity, "
                     "DynamicResources");
    ks_framework_free(fw);

    /* A plugin added through multiPoint lands at every point it
     * implements, after the defaults. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: Probe1\n"
                                   "        weight: 4\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_FILTER), DEFAULT_FILTER ", Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE), DEFAULT_SCORE ", Probe1(4)");
    ck_assert_str_eq(list_str(fw, KS_EP_POST_FILTER),
                     "DynamicResources, DefaultPreemption, Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_RESERVE),
                     "VolumeBinding, DynamicResources, Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_PERMIT), "Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_BIND),
                     "VolumeBinding, DynamicResources, Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_BIND), "DefaultBinder, Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_POST_BIND), "Probe1");
    ck_assert_str_eq(list_str(fw, KS_EP_QUEUE_SORT), "PrioritySort");
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_ENQUEUE),
                     "SchedulingGates, DynamicResources");
    /* One instance per plugin, shared by all its points. */
    ck_assert_ptr_eq(fw->points[KS_EP_FILTER][13].inst,
                     fw->points[KS_EP_BIND][1].inst);
    ks_framework_free(fw);

    /* '*' at one point turns off the multiPoint expansion there only. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    score:\n"
                                   "      disabled:\n"
                                   "      - name: '*'\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE), "");
    ck_assert_str_eq(list_str(fw, KS_EP_PRE_SCORE),
                     "TaintToleration, NodeAffinity, NodeResourcesFit, "
                     "VolumeBinding, PodTopologySpread, InterPodAffinity, "
                     "DynamicResources, NodeResourcesBalancedAllocation, "
                     "ImageLocality");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_score_weights)
{
    ks_framework_t *fw;
    ks_error_t err;
    /* Re-enabled at Score with weight 5: overrides, so it moves first. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    score:\n"
                                   "      enabled:\n"
                                   "      - name: ImageLocality\n"
                                   "        weight: 5\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE),
                     "ImageLocality(5), TaintToleration(3), NodeAffinity(2), "
                     "NodeResourcesFit(1), VolumeBinding(1), PodTopologySpread(2), "
                     "InterPodAffinity(2), DynamicResources(1), "
                     "NodeResourcesBalancedAllocation(1)");
    ks_framework_free(fw);

    /* Re-enabled at multiPoint: the entry replaces the default in place. */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: TaintToleration\n"
                                   "        weight: 5\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE),
                     "TaintToleration(5), NodeAffinity(2), "
                     "NodeResourcesFit(1), VolumeBinding(1), PodTopologySpread(2), "
                     "InterPodAffinity(2), DynamicResources(1), "
                     "NodeResourcesBalancedAllocation(1), ImageLocality(1)");
    ks_framework_free(fw);

    /* A Score entry without a weight wins over the multiPoint weight and
     * counts as 1 (upstream getScoreWeights reads Score first). */
    ck_assert_int_eq(build(PROFILE "  plugins:\n"
                                   "    score:\n"
                                   "      enabled:\n"
                                   "      - name: TaintToleration\n",
                           &fw, &err),
                     0);
    ck_assert_str_eq(list_str(fw, KS_EP_SCORE),
                     "TaintToleration(1), NodeAffinity(2), "
                     "NodeResourcesFit(1), VolumeBinding(1), PodTopologySpread(2), "
                     "InterPodAffinity(2), DynamicResources(1), "
                     "NodeResourcesBalancedAllocation(1), ImageLocality(1)");
    ks_framework_free(fw);
}
END_TEST

START_TEST(test_instances_are_per_framework)
{
    ks_framework_t *a, *b;
    ks_error_t err;
    char *trace = tl_trace_new();
    char *yaml = tl_subst(PROFILE "  plugins:\n"
                                  "    filter:\n"
                                  "      enabled:\n"
                                  "      - name: Probe1\n"
                                  "  pluginConfig:\n"
                                  "  - name: Probe1\n"
                                  "    args:\n"
                                  "      traceFile: @T@\n",
                          "T", trace);
    char *text;
    ck_assert_int_eq(build(yaml, &a, &err), 0);
    ck_assert_int_eq(build(yaml, &b, &err), 0);
    ck_assert_ptr_ne(a->points[KS_EP_FILTER][8].inst->self,
                     b->points[KS_EP_FILTER][8].inst->self);
    /* Both share the one loaded image. */
    ck_assert_ptr_eq(a->points[KS_EP_FILTER][8].inst->lp,
                     b->points[KS_EP_FILTER][8].inst->lp);
    ck_assert_int_eq(ks_registry_get(reg, "Probe1")->refs, 3);
    ks_framework_free(a);
    ks_framework_free(b);
    ck_assert_int_eq(ks_registry_get(reg, "Probe1")->refs, 1);
    text = tl_read_file(trace);
    ck_assert_str_eq(text, "Probe1 Create\nProbe1 Create\n");
    free(text);
    free(yaml);
    unlink(trace);
    free(trace);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("checks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_enabled_without_function);
    tcase_add_test(tc, test_multipoint_uses_only_implemented_points);
    tcase_add_test(tc, test_duplicate_at_one_point);
    tcase_add_test(tc, test_queue_sort_count);
    tcase_add_test(tc, test_no_bind);
    tcase_add_test(tc, test_create_failure);
    tcase_add_test(tc, test_probe_bad_args);
    tcase_add_test(tc, test_no_create_before_checks_pass);
    tcase_add_test(tc, test_missing_plugin);
    tcase_add_test(tc, test_every_problem_reported);
    suite_add_tcase(s, tc);
    tc = tcase_create("expansion");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_default_lists);
    tcase_add_test(tc, test_expansion_order);
    tcase_add_test(tc, test_score_weights);
    tcase_add_test(tc, test_instances_are_per_framework);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profile_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
