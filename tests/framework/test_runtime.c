/*
 * The framework runtime (ks_fw_run_*) with the probe plugins on a
 * three-node cluster: status rules, reasons, PreFilter results and Skip,
 * scores, Reserve/Unreserve order, Permit, Bind chains, PostFilter, the
 * nominated-pods filter passes and per-plugin timing.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ksched/helpers.h>

#include "base/intern.h"
#include "framework/cycle_state.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

typedef struct rt {
    tl_world_t w;
    ks_registry_t *reg;
    ks_config_t *cfg;
    ks_framework_t *fw;
    char *trace;
    ks_cycle_state_t *cs;
    const ks_node_info_t *nodes[3];
    /* what the test ops saw */
    char bound[256];
    const ks_pod_t *nominated[80];
    uint32_t n_nominated;
    ks_pod_t nominees[80]; /* copies of "nom" under other names */
    const char *nominated_node;
} rt_t;

static rt_t R;

static int t_bind(ks_fw_env_t *env, const ks_pod_t *pod, const char *node)
{
    (void)env;
    tl_appendf(R.bound, sizeof R.bound, "%s->%s;", pod->name, node);
    return 0;
}

static uint32_t t_nominated(ks_fw_env_t *env, const char *node,
                            const ks_pod_t **out, uint32_t cap)
{
    uint32_t i;
    (void)env;
    if (R.nominated_node == NULL || strcmp(node, R.nominated_node) != 0)
        return 0;
    for (i = 0; i < R.n_nominated && i < cap; i++)
        out[i] = R.nominated[i];
    return R.n_nominated;
}

static const ks_fw_ops_t test_ops = {
    .bind = t_bind,
    .nominated_pods = t_nominated,
};

static void setup(void)
{
    char *yaml = NULL;
    const char *parts[] = {
        tl_node_yaml("n1"), tl_node_yaml("n2"), tl_node_yaml("n3"),
        tl_pod_yaml("p1", 10, ""), tl_pod_yaml("low", 10, ""),
        tl_pod_yaml("high", 200, ""), tl_pod_yaml("same", 100, ""),
        tl_pod_yaml("nom", 100, "n1")};
    size_t i, len = 1;
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
        len += strlen(parts[i]);
    yaml = calloc(1, len);
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        strcat(yaml, parts[i]);
        free((char *)parts[i]);
    }
    memset(&R, 0, sizeof R);
    tl_world_init(&R.w, yaml);
    free(yaml);
    R.w.env.ops = &test_ops;
    R.reg = tl_registry();
    R.trace = tl_trace_new();
    R.cs = ks_cycle_state_new();
    R.nodes[0] = tl_world_node(&R.w, "n1");
    R.nodes[1] = tl_world_node(&R.w, "n2");
    R.nodes[2] = tl_world_node(&R.w, "n3");
}

static void teardown(void)
{
    ks_cycle_state_free(R.cs);
    ks_framework_free(R.fw);
    ks_config_free(R.cfg);
    ks_registry_free(R.reg);
    tl_world_free(&R.w);
    unlink(R.trace);
    free(R.trace);
}

/* Build the framework from PROFILE_SORT_ONLY + plugins + pluginConfig
 * entries, with `parallelism` threads for Filter and Score. */
static void rt_build_par(const char *plugins, const char *config,
                         int parallelism)
{
    char *full = tl_sort_only_yaml(plugins, config, R.trace);
    R.cfg = tl_config(full);
    if (parallelism == 1) {
        R.fw = tl_framework(R.cfg, R.reg, &R.w.env);
    } else {
        ks_error_t err = {0};
        ck_assert_msg(ks_framework_build(&R.cfg->profiles[0], "inline.yaml",
                                         R.reg, parallelism, &R.fw,
                                         &err) == 0,
                      "framework: %s", err.msg);
        ks_framework_set_env(R.fw, &R.w.env);
    }
    free(full);
}

static void rt_build(const char *plugins, const char *config)
{
    rt_build_par(plugins, config, 1);
}

/* rt_build with the Score plugins `enabled` (the list's YAML entries). */
static void rt_build_score(const char *enabled, const char *config)
{
    char *plugins = malloc(strlen(enabled) + strlen(BIND_DEFAULT) + 64);
    ck_assert_ptr_nonnull(plugins);
    sprintf(plugins, "    score:\n      enabled:\n%s%s", enabled,
            BIND_DEFAULT);
    rt_build(plugins, config);
    free(plugins);
}

static char *trace_text(void)
{
    return tl_read_file(R.trace);
}

static const char *msg_of(const ks_status_t *st)
{
    static char buf[4096];
    return ks_status_message(st, buf, sizeof buf);
}

#define ASSERT_LINE(text, line)                                                \
    ck_assert_msg(tl_line_index((text), (line)) >= 0, "no line \"%s\" in:\n%s", \
                  (line), (text))
#define ASSERT_NO_LINE(text, line)                                             \
    ck_assert_msg(tl_line_index((text), (line)) < 0,                           \
                  "unexpected line \"%s\" in:\n%s", (line), (text))

/* --- Filter ---------------------------------------------------------------------- */

static void build_two_filters(const char *code2)
{
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             PROBE_CFG("Probe1", "      filter: Unschedulable\n"
                                 "      filterReason: node(s) had reason one\n"
                                 "      filterNodes: [n1, n2]\n")
                 PROBE_CFG("Probe2", "      filter: %s\n"
                                     "      filterReason: node(s) had reason two\n"
                                     "      filterNodes: [n2, n3]\n"),
             code2);
    rt_build("    filter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             cfg);
}

START_TEST(test_filter_reasons_merged)
{
    ks_status_t st[3];
    struct ks_node_status_map m;
    uint8_t set[3] = {1, 1, 1};
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char buf[1024];
    char *t;
    int i;

    build_two_filters("Unschedulable");
    /* run_all: every failing plugin's reasons on the node. */
    for (i = 0; i < 3; i++)
        ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[i], 1,
                                          &st[i]),
                         KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st[0]), "node(s) had reason one");
    ck_assert_str_eq(msg_of(&st[1]),
                     "node(s) had reason one, node(s) had reason two");
    ck_assert_str_eq(msg_of(&st[2]), "node(s) had reason two");
    ck_assert_str_eq(st[0].plugin, "Probe1");
    ck_assert_str_eq(st[1].plugin, "Probe1"); /* the first failing plugin */
    ck_assert_str_eq(st[2].plugin, "Probe2");

    /* The FitError counts each reason once per node. */
    m.st = st;
    m.set = set;
    m.n = 3;
    m.snap = R.w.snap;
    m.absent = KS_UNSCHEDULABLE_AND_UNRESOLVABLE; /* v1.36 */
    ks_fit_error_format(&m, 3, NULL, 0, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "0/3 nodes are available: 2 node(s) had reason "
                          "one, 2 node(s) had reason two.");
    ks_fit_error_format(&m, 3, NULL, 0, "preemption: not helpful", buf,
                        sizeof buf);
    ck_assert_str_eq(buf, "0/3 nodes are available: 2 node(s) had reason "
                          "one, 2 node(s) had reason two. preemption: not "
                          "helpful");

    /* Without run_all the first failure ends the node: Probe2 never runs
     * on n2. */
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[1], 0, &st[1]),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st[1]), "node(s) had reason one");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe2 Filter p1 n2"), 1);
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 Filter p1 n2"), 2);
    free(t);
}
END_TEST

START_TEST(test_filter_code_precedence)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    build_two_filters("UnschedulableAndUnresolvable");
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[1], 1, &st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_int_eq(st.code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_uint_eq(st.n_reasons, 2);
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[0], 1, &st),
                     KS_UNSCHEDULABLE);
}
END_TEST

START_TEST(test_fit_error_sorted_as_strings)
{
    ks_status_t st[12], pre;
    uint8_t set[12];
    struct ks_node_status_map m;
    char buf[1024];
    int i;
    for (i = 0; i < 12; i++) {
        ks_status_reset(&st[i]);
        st[i].code = KS_UNSCHEDULABLE;
        ks_status_add_reason(&st[i], i < 10 ? "zeta" : "alpha");
        set[i] = 1;
    }
    set[11] = 0; /* a node that passed */
    m.st = st;
    m.set = set;
    m.n = 12;
    m.snap = NULL;
    m.absent = KS_UNSCHEDULABLE_AND_UNRESOLVABLE; /* v1.36 */
    /* Whole lines are compared: "1 alpha" < "10 zeta" (' ' < '0'). */
    ks_fit_error_format(&m, 12, NULL, 0, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "0/12 nodes are available: 1 alpha, 10 zeta.");
    set[11] = 1;
    for (i = 0; i < 12; i++) {
        ks_status_reset(&st[i]);
        ks_status_add_reason(&st[i], i < 2 ? "alpha" : "zeta");
    }
    /* "10 zeta" < "2 alpha" as strings although 10 > 2. */
    ks_fit_error_format(&m, 12, NULL, 0, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "0/12 nodes are available: 10 zeta, 2 alpha.");
    /* A PreFilter failure counts for every node. */
    ks_status_reset(&pre);
    pre.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks_status_add_reason(&pre, "node(s) didn't match pod topology");
    ks_fit_error_format(&m, 12, &pre, 1, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "0/12 nodes are available: 12 node(s) didn't match "
                          "pod topology.");
    /* v1.36: the PreFilter's message once (Diagnosis.PreFilterMsg), its
     * reasons joined, then PostFilter's. */
    ks_status_add_reason(&pre, "and another");
    ks_fit_error_format(&m, 12, &pre, 0, "preemption: x", buf, sizeof buf);
    ck_assert_str_eq(buf, "0/12 nodes are available: node(s) didn't match "
                          "pod topology, and another. preemption: x");
}
END_TEST

/* The SDK's writer behind both the host's FitError and DefaultPreemption's
 * summary: snprintf-like sizing and truncation, upstream's text without
 * reasons, and Go durations. */
START_TEST(test_fit_error_write_and_go_duration)
{
    ks_reason_count_t h[3] = {{"zeta", 10}, {"alpha", 2}, {"beta", 2}};
    char buf[64], small[12], dur[32];
    const char *full = "0/12 nodes are available: 10 zeta, 2 alpha, 2 beta. "
                       "post";
    size_t n = ks_fit_error_write(NULL, 0, 12, h, 3, "post");
    ck_assert_uint_eq(n, strlen(full));
    ck_assert_uint_eq(ks_fit_error_write(buf, sizeof buf, 12, h, 3, "post"),
                      strlen(full));
    ck_assert_str_eq(buf, full);
    ks_fit_error_write(small, sizeof small, 12, h, 3, NULL);
    ck_assert_str_eq(small, "0/12 nodes ");
    ks_fit_error_write(buf, sizeof buf, 3, h, 0, NULL);
    ck_assert_str_eq(buf, "0/3 nodes are available: .");
    ks_go_duration(0, dur, sizeof dur);
    ck_assert_str_eq(dur, "0s");
    ks_go_duration(50, dur, sizeof dur);
    ck_assert_str_eq(dur, "50ms");
    ks_go_duration(1500, dur, sizeof dur);
    ck_assert_str_eq(dur, "1.5s");
    ks_go_duration(15 * 60 * 1000, dur, sizeof dur);
    ck_assert_str_eq(dur, "15m0s");
    ks_go_duration(3600 * 1000 + 1, dur, sizeof dur);
    ck_assert_str_eq(dur, "1h0m0.001s");
}
END_TEST

/* The scheduler and the host API find a node's statuses by its snapshot
 * index (ks_snapshot_index), which must follow nodes leaving and joining. */
static void assert_index(tl_world_t *w, const char *name, uint32_t want)
{
    uint32_t i = ks_snapshot_index(w->snap, name);
    ck_assert_uint_eq(i, want);
    if (want != UINT32_MAX)
        ck_assert_str_eq(ks_snapshot_node_at(w->snap, i)->node->name, name);
}

START_TEST(test_snapshot_index_follows_changes)
{
    tl_world_t w;
    ks_manifest_t m;
    ks_error_t err = {0};
    char *n1 = tl_node_yaml("n1"), *n2 = tl_node_yaml("n2");
    char *n3 = tl_node_yaml("n3"), *n0 = tl_node_yaml("n0");
    char *all = malloc(strlen(n1) + strlen(n2) + strlen(n3) + 1);
    ck_assert_ptr_nonnull(all);
    strcat(strcat(strcpy(all, n1), n2), n3);
    tl_world_init(&w, all);
    assert_index(&w, "n1", 0);
    assert_index(&w, "n2", 1);
    assert_index(&w, "n3", 2);
    assert_index(&w, "nx", UINT32_MAX);
    ck_assert_int_eq(ks_cache_remove_node(w.cache, "n2", &err), 0);
    tl_world_sync(&w);
    assert_index(&w, "n1", 0);
    assert_index(&w, "n2", UINT32_MAX);
    assert_index(&w, "n3", 1);
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(ks_manifest_load_string(&m, "n0.yaml", n0, strlen(n0),
                                             ks_intern_global(), NULL, &err),
                     0);
    ck_assert_int_eq(ks_cache_add_node(w.cache, m.nodes[0], &err), 0);
    m.nodes[0] = NULL;
    ks_manifest_free(&m);
    tl_world_sync(&w);
    assert_index(&w, "n0", 0);
    assert_index(&w, "n1", 1);
    assert_index(&w, "n3", 2);
    tl_world_free(&w);
    free(all);
    free(n0);
    free(n1);
    free(n2);
    free(n3);
}
END_TEST

START_TEST(test_filter_invalid_code)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    filter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: BadCode\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", ""));
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[0], 1, &st),
                     KS_ERROR);
    ck_assert_str_eq(msg_of(&st),
                     "Filter plugin \"BadCode\" returned an invalid status "
                     "code 42");
    ck_assert_str_eq(st.plugin, "BadCode");
}
END_TEST

START_TEST(test_filter_error_named)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    filter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      filter: Error\n"
                                 "      filterReason: disk on fire\n")
                 PROBE_CFG("Probe2", ""));
    /* An Error ends the node even with run_all. */
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[0], 1, &st),
                     KS_ERROR);
    /* The error names the plugin and keeps its message. */
    ck_assert_msg(strstr(msg_of(&st), "\"Probe1\"") != NULL &&
                      strstr(msg_of(&st), ": disk on fire") != NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, "Probe1");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe2 Filter"), 0);
    free(t);
}
END_TEST

/* --- PreFilter ----------------------------------------------------------------------- */

START_TEST(test_prefilter_skip_skips_filter)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    const ks_pod_t *other = tl_world_pod(&R.w, "high");
    char *t;
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "    filter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preFilter: Skip\n"
                                 "      filter: Unschedulable\n")
                 PROBE_CFG("Probe2", ""));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_SUCCESS);
    ck_assert_int_eq(res.all, 1);
    /* Probe1 would reject every node, but its Filter is skipped. */
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[0], 1, &st),
                     KS_SUCCESS);
    /* Its PreFilter extensions are skipped too. */
    ck_assert_int_eq(ks_fw_run_prefilter_add_pod(R.fw, R.cs, pod, other,
                                                 R.nodes[0], &st),
                     KS_SUCCESS);
    t = trace_text();
    ck_assert_str_eq(t, "Probe1 Create\nProbe2 Create\n"
                        "Probe1 PreFilter p1\nProbe2 PreFilter p1\n"
                        "Probe2 Filter p1 n1\n"
                        "Probe2 AddPod p1 high n1\n");
    free(t);
    ks_prefilter_result_free(&res);
}
END_TEST

START_TEST(test_prefilter_result_intersection)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preFilterNodes: [n1, n2]\n")
                 PROBE_CFG("Probe2", "      preFilterNodes: [n3, n2]\n")
                     PROBE_CFG("Probe3", ""));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_SUCCESS);
    ck_assert_int_eq(res.all, 0);
    ck_assert_uint_eq(res.n, 1);
    ck_assert_str_eq(res.names[0], "n2");
    ck_assert_ptr_eq(res.names[0], R.nodes[1]->node->name); /* interned */
    ks_prefilter_result_free(&res);
}
END_TEST

START_TEST(test_prefilter_result_empty)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preFilterNodes: [n1]\n")
                 PROBE_CFG("Probe2", "      preFilterNodes: [n3]\n")
                     PROBE_CFG("Probe3", ""));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(msg_of(&st), "node(s) didn't satisfy plugin(s) [Probe1 "
                                  "Probe2] simultaneously");
    /* The run stops there. */
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe3 PreFilter"), 0);
    free(t);
    ks_prefilter_result_free(&res);
}
END_TEST

START_TEST(test_prefilter_result_none_single)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "")
                 PROBE_CFG("Probe2", "      preFilterNone: true\n"));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(msg_of(&st), "node(s) didn't satisfy plugin Probe2");
    ck_assert_str_eq(st.plugin, "Probe2");
    ks_prefilter_result_free(&res);
}
END_TEST

START_TEST(test_prefilter_failures)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preFilter: Unschedulable\n")
                 PROBE_CFG("Probe2", ""));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st), "PreFilter of Probe1 failed");
    ck_assert_str_eq(st.plugin, "Probe1");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe2 PreFilter"), 0);
    free(t);
    ks_prefilter_result_free(&res);
}
END_TEST

START_TEST(test_prefilter_error)
{
    struct ks_prefilter_result res = {0};
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preFilter: Error\n"));
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, &st),
                     KS_ERROR);
    ck_assert_str_eq(msg_of(&st),
                     "running PreFilter plugin \"Probe1\": PreFilter of "
                     "Probe1 failed");
    ks_prefilter_result_free(&res);
}
END_TEST

/* --- Score ------------------------------------------------------------------------- */

START_TEST(test_score_out_of_range)
{
    int64_t scores[3], totals[3];
    uint8_t skipped[1];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    score:\n"
             "      enabled:\n"
             "      - name: BadScore\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", ""));
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_ERROR);
    ck_assert_msg(strstr(msg_of(&st),
                         "plugin \"BadScore\" returns an invalid score 150") !=
                      NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, "BadScore");
}
END_TEST

/* A weighted row out of range is reported with the score the plugin gave
 * (not the weighed one), at its first bad node, negative scores too; the
 * rows before it were weighed already. */
START_TEST(test_score_out_of_range_weighted)
{
    int64_t scores[6], totals[3];
    uint8_t skipped[2];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    score:\n"
             "      enabled:\n"
             "      - name: Probe2\n"
             "      - name: Probe1\n"
             "        weight: 3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      scoreNodes: {n1: 10, n2: -1, n3: 101}\n")
                 PROBE_CFG("Probe2", "      score: 7\n"));
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_ERROR);
    ck_assert_msg(strstr(msg_of(&st), "plugin \"Probe1\" returns an invalid "
                                      "score -1 for node \"n2\"") != NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, "Probe1");
}
END_TEST

/* Consecutive rows of weight 1 without NormalizeScore are summed in one
 * pass (group_w1), two or three at a time: the totals are the sums, the
 * rows the plugins' own; a row out of range in a group is still reported
 * with its plugin and first bad node. PlainScoreN scores node nK with
 * 10 N + K; Probe1 (it normalizes) ends a group. */
/* order: the Score plugins (PlainScore3 before or after Probe1) */
static const char *const group_cases[] = {
    "      - name: PlainScore1\n"
    "      - name: PlainScore2\n"
    "      - name: PlainScore3\n"
    "      - name: Probe1\n"
    "        weight: 2\n",
    "      - name: PlainScore1\n"
    "      - name: PlainScore2\n"
    "      - name: Probe1\n"
    "        weight: 2\n"
    "      - name: PlainScore3\n",
};

START_TEST(test_score_group_weight_one)
{
    int64_t scores[12], totals[3];
    uint8_t skipped[4];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    int k, three = _i == 0 ? 2 : 3; /* PlainScore3's row */
    rt_build_score(group_cases[_i], PROBE_CFG("Probe1", "      score: 5\n"));
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    for (k = 0; k < 3; k++) {
        ck_assert_int_eq(scores[k], 11 + k);
        ck_assert_int_eq(scores[3 + k], 21 + k);
        ck_assert_int_eq(scores[3 * three + k], 31 + k);
        ck_assert_int_eq(scores[3 * (5 - three) + k], 10);
        /* 10 + 20 + 30 + 3 (k + 1), and 2 * 5 */
        ck_assert_int_eq(totals[k], 60 + 3 * (k + 1) + 10);
    }
}
END_TEST

START_TEST(test_score_group_weight_one_out_of_range)
{
    int64_t scores[9], totals[3];
    uint8_t skipped[3];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    score:\n"
             "      enabled:\n"
             "      - name: PlainScore1\n"
             "      - name: PlainScore2\n"
             "      - name: BadScore\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", ""));
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_ERROR);
    ck_assert_msg(strstr(msg_of(&st), "plugin \"BadScore\" returns an invalid "
                                      "score 150 for node \"n1\"") != NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, "BadScore");
}
END_TEST

/* The errors of Score come in the order of the plugins, each normalized
 * and weighed in turn: a normalized row out of range (Probe1: 150
 * reversed is -50) is reported before a later plugin's raw score out of
 * range, and before a later NormalizeScore that fails; a NormalizeScore
 * that fails before them, or a raw score out of range, is reported
 * instead. */
static const struct {
    const char *plugins, *config, *plugin, *message;
} score_order_cases[] = {
    {"      - name: Probe1\n"
     "      - name: BadScore\n",
     PROBE_CFG("Probe1", "      score: 150\n"
                         "      normalize: reverse\n"),
     "Probe1", "plugin \"Probe1\" returns an invalid score -50 for node "
               "\"n1\""},
    {"      - name: Probe1\n"
     "      - name: Probe2\n",
     PROBE_CFG("Probe1", "      score: 150\n"
                         "      normalize: reverse\n")
         PROBE_CFG("Probe2", "      normalize: reverse\n"
                             "      normalizeScore: Error\n"),
     "Probe1", "plugin \"Probe1\" returns an invalid score -50 for node "
               "\"n1\""},
    {"      - name: Probe2\n"
     "      - name: Probe1\n",
     PROBE_CFG("Probe1", "      score: 150\n"
                         "      normalize: reverse\n")
         PROBE_CFG("Probe2", "      normalize: reverse\n"
                             "      normalizeScore: Error\n"),
     "Probe2", "running Normalize on Score plugins: plugin \"Probe2\""},
    {"      - name: BadScore\n"
     "      - name: Probe1\n",
     PROBE_CFG("Probe1", "      score: 150\n"
                         "      normalize: reverse\n"),
     "BadScore", "plugin \"BadScore\" returns an invalid score 150 for "
                 "node \"n1\""},
};

START_TEST(test_score_errors_in_plugin_order)
{
    int64_t scores[6], totals[3];
    uint8_t skipped[2];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build_score(score_order_cases[_i].plugins, score_order_cases[_i].config);
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_ERROR);
    ck_assert_msg(strstr(msg_of(&st), score_order_cases[_i].message) != NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, score_order_cases[_i].plugin);
}
END_TEST

/* On four workers over 200 nodes (blocks of 64, chunks of them): rows
 * weighed, normalized lists (with the names given) weighed after
 * NormalizeScore, every total the node's. */
START_TEST(test_score_weighed_on_workers)
{
    enum { N = 200 };
    const ks_node_info_t *nodes[N];
    const char *names[N];
    int64_t scores[2 * N], totals[N];
    uint8_t skipped[2];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    static const int64_t norm[3] = {25, 50, 100}; /* 10, 20, 40 by max100 */
    int k;
    rt_build_par("    score:\n"
                 "      enabled:\n"
                 "      - name: Probe1\n"
                 "        weight: 2\n"
                 "      - name: Probe2\n"
                 "        weight: 3\n" BIND_DEFAULT,
                 PROBE_CFG("Probe1", "      scoreNodes: {n1: 1, n2: 2, n3: 4}\n")
                     PROBE_CFG("Probe2",
                               "      scoreNodes: {n1: 10, n2: 20, n3: 40}\n"
                               "      normalize: max100\n"),
                 4);
    for (k = 0; k < N; k++) {
        nodes[k] = R.nodes[k % 3];
        names[k] = nodes[k]->node->name;
    }
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, nodes, NULL, names, N, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    for (k = 0; k < N; k++) {
        int64_t raw1 = k % 3 == 2 ? 4 : k % 3 + 1;
        ck_assert_int_eq(scores[k], 2 * raw1);
        ck_assert_int_eq(scores[N + k], 3 * norm[k % 3]);
        ck_assert_int_eq(totals[k], 2 * raw1 + 3 * norm[k % 3]);
    }
}
END_TEST

/* The same, a weighed row whose first score out of range is in a later
 * block than others: PlainScore4 gives 95 on n1 (190 weighed, which
 * would look out of range) and 101 on a node "n7" from node 150 on. The
 * Error names that node and the plugin's own score there, however the
 * rows were split among the workers. */
START_TEST(test_score_out_of_range_on_workers)
{
    enum { N = 200 };
    const ks_node_info_t *nodes[N];
    ks_node_t n7 = {.name = "n7"};
    ks_node_info_t ni7 = {.node = &n7};
    int64_t scores[2 * N], totals[N];
    uint8_t skipped[2];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    int k;
    rt_build_par("    score:\n"
                 "      enabled:\n"
                 "      - name: Probe2\n"
                 "      - name: PlainScore4\n"
                 "        weight: 2\n" BIND_DEFAULT,
                 PROBE_CFG("Probe2", "      score: 7\n"), 4);
    for (k = 0; k < N; k++)
        nodes[k] = k < 150 ? R.nodes[0] : &ni7;
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, nodes, NULL, NULL, N, scores,
                                     skipped, totals, &st),
                     KS_ERROR);
    ck_assert_msg(strstr(msg_of(&st), "plugin \"PlainScore4\" returns an "
                                      "invalid score 101 for node \"n7\"") !=
                      NULL,
                  "%s", msg_of(&st));
    ck_assert_str_eq(st.plugin, "PlainScore4");
}
END_TEST

/* Every Score plugin skipped at PreScore: the totals are zero, whatever
 * the array held. */
START_TEST(test_score_all_skipped_totals_zero)
{
    int64_t scores[3], totals[3] = {5, 5, 5};
    uint8_t skipped[1];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    int i;
    rt_build("    preScore:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: Probe1\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      preScore: Skip\n"
                                 "      score: 50\n"));
    ck_assert_int_eq(ks_fw_run_pre_score(R.fw, R.cs, pod, R.nodes, 3, &st),
                     KS_SUCCESS);
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    ck_assert_int_eq(skipped[0], 1);
    for (i = 0; i < 3; i++)
        ck_assert_int_eq(totals[i], 0);
}
END_TEST

START_TEST(test_normalize_and_weights)
{
    int64_t scores[9], totals[3];
    uint8_t skipped[3];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    int i;
    rt_build("    preScore:\n"
             "      enabled:\n"
             "      - name: Probe3\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "        weight: 2\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n"
             "        weight: 7\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      scoreNodes: {n1: 10, n2: 20, n3: 40}\n"
                                 "      normalize: max100\n")
                 PROBE_CFG("Probe2", "      score: 7\n"
                                     "      normalize: reverse\n")
                     PROBE_CFG("Probe3", "      preScore: Skip\n"
                                         "      score: 50\n"));
    ck_assert_int_eq(ks_fw_run_pre_score(R.fw, R.cs, pod, R.nodes, 3, &st),
                     KS_SUCCESS);
    for (i = 0; i < 9; i++)
        scores[i] = -7; /* a row left unwritten keeps it */
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    /* Probe1: 10,20,40 -> max100 25,50,100 -> weight 2 -> 50,100,200. */
    ck_assert_int_eq(scores[0], 50);
    ck_assert_int_eq(scores[1], 100);
    ck_assert_int_eq(scores[2], 200);
    /* Probe2: 7 -> reverse 93, weight 1. */
    ck_assert_int_eq(scores[3], 93);
    ck_assert_int_eq(scores[4], 93);
    ck_assert_int_eq(scores[5], 93);
    /* Probe3 skipped at PreScore: no Score call, its row not written and
     * nothing added to the totals. */
    ck_assert_uint_eq(skipped[0], 0);
    ck_assert_uint_eq(skipped[1], 0);
    ck_assert_uint_eq(skipped[2], 1);
    ck_assert_int_eq(scores[6] + scores[7] + scores[8], -21);
    ck_assert_int_eq(totals[0], 143);
    ck_assert_int_eq(totals[1], 193);
    ck_assert_int_eq(totals[2], 293);
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe3 Score"), 0);
    ck_assert_int_eq(tl_count_prefix(t, "Probe3 NormalizeScore"), 0);
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 Score p1"), 3);
    ASSERT_LINE(t, "Probe3 PreScore p1 3");
    ASSERT_LINE(t, "Probe1 NormalizeScore p1 3");
    free(t);
}
END_TEST

/* Score over more nodes than a block (64): every row and total is the
 * node's, across the block edges, and the plugins take turns a block of
 * nodes at a time (Probe2 scores a block before Probe1 scores its 65th
 * node), so a block's nodes are still cached for the next plugin; the
 * blocks go from the last to the first (the last block's nodes are scored
 * first), where Filter left the nodes it saw last. */
START_TEST(test_score_blocks_many_nodes)
{
    enum { N = 200 };
    static const int64_t raw[3] = {10, 20, 40};
    const ks_node_info_t *nodes[N];
    int64_t scores[2 * N], totals[N];
    uint8_t skipped[2];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t, *line;
    int k, probe1 = 0, probe2_at = -1, probe1_65th_at = -1, at = 0;
    rt_build("    score:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "        weight: 2\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      scoreNodes: {n1: 10, n2: 20, n3: 40}\n")
                 PROBE_CFG("Probe2", "      score: 7\n"));
    for (k = 0; k < N; k++)
        nodes[k] = R.nodes[k % 3];
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, nodes, NULL, NULL, N, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    for (k = 0; k < N; k++) {
        ck_assert_int_eq(scores[k], 2 * raw[k % 3]);
        ck_assert_int_eq(scores[N + k], 7);
        ck_assert_int_eq(totals[k], 2 * raw[k % 3] + 7);
    }
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 Score p1"), N);
    ck_assert_int_eq(tl_count_prefix(t, "Probe2 Score p1"), N);
    for (line = t; *line != '\0'; at++) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, "Probe1 Score p1", 15) == 0 && ++probe1 == 65)
            probe1_65th_at = at;
        if (probe2_at < 0 && strncmp(line, "Probe2 Score p1", 15) == 0)
            probe2_at = at;
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    ck_assert_int_ge(probe2_at, 0);
    ck_assert_int_lt(probe2_at, probe1_65th_at);
    /* 200 = 3 * 64 + 8: the first Score is of node 136 (n2, as 136 % 3 is
     * 1), not of node 0 (n1) */
    line = strstr(t, "Probe1 Score p1 ");
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(strncmp(line, "Probe1 Score p1 n2", 18) == 0, "%.40s", line);
    free(t);
}
END_TEST

/* --- Reserve, Permit, Bind ------------------------------------------------------------ */

START_TEST(test_reserve_failure_unreserve_reverse)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    reserve:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "") PROBE_CFG("Probe2", "      reserve: Error\n")
                 PROBE_CFG("Probe3", ""));
    ck_assert_int_eq(ks_fw_run_reserve(R.fw, R.cs, pod, "n2", &st), KS_ERROR);
    ck_assert_str_eq(msg_of(&st), "running Reserve plugin \"Probe2\": Reserve "
                                  "of Probe2 failed");
    ck_assert_str_eq(st.plugin, "Probe2");
    ks_fw_run_unreserve(R.fw, R.cs, pod, "n2");
    t = trace_text();
    ck_assert_str_eq(t, "Probe1 Create\nProbe2 Create\nProbe3 Create\n"
                        "Probe1 Reserve p1 n2\nProbe2 Reserve p1 n2\n"
                        "Probe3 Unreserve p1 n2\nProbe2 Unreserve p1 n2\n"
                        "Probe1 Unreserve p1 n2\n");
    free(t);
}
END_TEST

START_TEST(test_permit_wait_min_timeout)
{
    ks_status_t st;
    uint64_t timeout = 0, mask = 0;
    const char *tplugin = NULL;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    permit:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      permit: Wait\n"
                                 "      permitTimeoutMs: 5000\n")
                 PROBE_CFG("Probe2", "      permit: Success\n")
                     PROBE_CFG("Probe3", "      permit: Wait\n"
                                         "      permitTimeoutMs: 300\n"));
    ck_assert_int_eq(ks_fw_run_permit(R.fw, R.cs, pod, "n1", &timeout, &mask,
                                      &tplugin, &st),
                     KS_WAIT);
    ck_assert_uint_eq(timeout, 300);
    ck_assert_str_eq(tplugin, "Probe3");
    ck_assert_uint_eq(mask, 0x5); /* Probe1 (bit 0) and Probe3 (bit 2) */
}
END_TEST

START_TEST(test_permit_timeout_capped)
{
    ks_status_t st;
    uint64_t timeout = 0, mask = 0;
    const char *tplugin = NULL;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    permit:\n"
             "      enabled:\n"
             "      - name: Probe1\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      permit: Wait\n"
                                 "      permitTimeoutMs: 3600000\n"));
    ck_assert_int_eq(ks_fw_run_permit(R.fw, R.cs, pod, "n1", &timeout, &mask,
                                      &tplugin, &st),
                     KS_WAIT);
    ck_assert_uint_eq(timeout, 15 * 60 * 1000);
}
END_TEST

START_TEST(test_permit_reject_stops)
{
    ks_status_t st;
    uint64_t timeout = 0, mask = 0;
    const char *tplugin = NULL;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    permit:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "      permit: Wait\n")
                 PROBE_CFG("Probe2", "      permit: Unschedulable\n"
                                     "      permitReason: gang incomplete\n")
                     PROBE_CFG("Probe3", ""));
    ck_assert_int_eq(ks_fw_run_permit(R.fw, R.cs, pod, "n1", &timeout, &mask,
                                      &tplugin, &st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st), "gang incomplete");
    ck_assert_str_eq(st.plugin, "Probe2");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe3 Permit"), 0);
    free(t);
}
END_TEST

START_TEST(test_bind_skip_chain)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    bind:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n",
             PROBE_CFG("Probe1", "      bind: Skip\n") PROBE_CFG("Probe2", "")
                 PROBE_CFG("Probe3", ""));
    ck_assert_int_eq(ks_fw_run_bind(R.fw, R.cs, pod, "n3", &st), KS_SUCCESS);
    ck_assert_str_eq(st.plugin, "Probe2");
    ck_assert_str_eq(R.bound, "p1->n3;");
    t = trace_text();
    ASSERT_LINE(t, "Probe1 Bind p1 n3");
    ASSERT_LINE(t, "Probe2 Bind p1 n3");
    ck_assert_int_eq(tl_count_prefix(t, "Probe3 Bind"), 0);
    free(t);
}
END_TEST

START_TEST(test_bind_all_skip)
{
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    rt_build("    bind:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n",
             PROBE_CFG("Probe1", "      bind: Skip\n")
                 PROBE_CFG("Probe2", "      bind: Skip\n"));
    ck_assert_int_eq(ks_fw_run_bind(R.fw, R.cs, pod, "n3", &st), KS_SKIP);
    ck_assert_str_eq(R.bound, "");
}
END_TEST

/* --- PostFilter ----------------------------------------------------------------------- */

START_TEST(test_post_filter_sees_statuses)
{
    ks_status_t sts[3], st;
    uint8_t set[3] = {1, 1, 0};
    struct ks_node_status_map m;
    const char *nominated = (const char *)1;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    char *t;
    rt_build("    postFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n"
             "      - name: Probe3\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "")
                 PROBE_CFG("Probe2", "      postFilterNominate: n3\n")
                     PROBE_CFG("Probe3", ""));
    ks_status_reset(&sts[0]);
    sts[0].code = KS_UNSCHEDULABLE;
    ks_status_reset(&sts[1]);
    sts[1].code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks_status_reset(&sts[2]);
    sts[2].code = KS_ERROR; /* not set: reads as the map's absent code */
    m.st = sts;
    m.set = set;
    m.n = 3;
    m.snap = R.w.snap;
    m.absent = KS_UNSCHEDULABLE_AND_UNRESOLVABLE; /* v1.36 */
    ck_assert_int_eq(ks_fw_run_post_filter(R.fw, R.cs, pod, &m, &nominated,
                                           &st),
                     KS_SUCCESS);
    ck_assert_ptr_eq(nominated, ks_intern_str(ks_intern_global(), "n3"));
    t = trace_text();
    ck_assert_str_eq(t, "Probe1 Create\nProbe2 Create\nProbe3 Create\n"
                        "Probe1 PostFilter p1 n1=Unschedulable "
                        "n2=UnschedulableAndUnresolvable "
                        "n3=UnschedulableAndUnresolvable\n"
                        "Probe2 PostFilter p1 n1=Unschedulable "
                        "n2=UnschedulableAndUnresolvable "
                        "n3=UnschedulableAndUnresolvable\n");
    free(t);
}
END_TEST

START_TEST(test_post_filter_all_fail)
{
    ks_status_t sts[3], st;
    uint8_t set[3] = {1, 1, 1};
    struct ks_node_status_map m;
    const char *nominated = (const char *)1;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    int i;
    rt_build("    postFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "      - name: Probe2\n" BIND_DEFAULT,
             PROBE_CFG("Probe1", "")
                 PROBE_CFG("Probe2",
                           "      postFilter: UnschedulableAndUnresolvable\n"));
    for (i = 0; i < 3; i++) {
        ks_status_reset(&sts[i]);
        sts[i].code = KS_UNSCHEDULABLE;
    }
    m.st = sts;
    m.set = set;
    m.n = 3;
    m.snap = R.w.snap;
    m.absent = KS_UNSCHEDULABLE_AND_UNRESOLVABLE; /* v1.36 */
    ck_assert_int_eq(ks_fw_run_post_filter(R.fw, R.cs, pod, &m, &nominated,
                                           &st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_ptr_null(nominated);
    ck_assert_str_eq(st.plugin, "Probe2");
    ck_assert_str_eq(msg_of(&st), "Probe1 found no node to free, Probe2 found "
                                  "no node to free");
}
END_TEST

/* --- nominated pods --------------------------------------------------------------------- */

static void build_nominated(const char *args)
{
    char cfg[512];
    snprintf(cfg, sizeof cfg, PROBE_CFG("Probe1", "%s"), args);
    rt_build("    preFilter:\n"
             "      enabled:\n"
             "      - name: Probe1\n"
             "    filter:\n"
             "      enabled:\n"
             "      - name: Probe1\n" BIND_DEFAULT,
             cfg);
    R.nominated[0] = tl_world_pod(&R.w, "nom"); /* priority 100, to n1 */
    R.n_nominated = 1;
    R.w.env.n_nominated = 1; /* the env's owner counts nominations */
    R.nominated_node = "n1";
}

static ks_code_t filter_nom(const char *pod_name, int node, ks_status_t *st)
{
    struct ks_prefilter_result res = {0};
    const ks_pod_t *pod = tl_world_pod(&R.w, pod_name);
    ks_cycle_state_clear(R.cs);
    ck_assert_int_eq(ks_fw_run_pre_filter(R.fw, R.cs, pod, &res, st),
                     KS_SUCCESS);
    ks_prefilter_result_free(&res);
    return ks_fw_run_filter_with_nominated(R.fw, R.cs, pod, R.nodes[node], 1,
                                           st);
}

START_TEST(test_nominated_higher_priority_blocks)
{
    ks_status_t st;
    char *t;
    build_nominated("      maxPods: 1\n");
    /* n1 is empty, but "nom" (priority 100) is nominated there: a pod of
     * lower or equal priority must leave room for it. */
    ck_assert_int_eq(filter_nom("low", 0, &st), KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st), "node(s) had too many pods for Probe1");
    ck_assert_int_eq(filter_nom("same", 0, &st), KS_UNSCHEDULABLE);
    /* A higher-priority pod ignores it; other nodes are not affected. */
    ck_assert_int_eq(filter_nom("high", 0, &st), KS_SUCCESS);
    ck_assert_int_eq(filter_nom("low", 1, &st), KS_SUCCESS);
    /* The nominated pod itself is not in its own way. */
    ck_assert_int_eq(filter_nom("nom", 0, &st), KS_SUCCESS);
    t = trace_text();
    /* The simulation told the plugin through AddPod. */
    ASSERT_LINE(t, "Probe1 AddPod low nom n1");
    ASSERT_LINE(t, "Probe1 AddPod same nom n1");
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 AddPod high"), 0);
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 AddPod nom"), 0);
    free(t);
}
END_TEST

START_TEST(test_nominated_second_pass)
{
    ks_status_t st;
    char *t;
    /* minPods 1: passes with the nominated pod added (pass 1), fails
     * without it (pass 2). Both passes must pass. */
    build_nominated("      minPods: 1\n");
    ck_assert_int_eq(filter_nom("low", 0, &st), KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st), "node(s) had too few pods for Probe1");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 Filter low n1"), 2);
    free(t);
}
END_TEST

START_TEST(test_nominated_more_than_64)
{
    ks_status_t st;
    const ks_pod_t *nom;
    char *t;
    uint32_t i;
    /* maxPods 70 on an empty n1 with 70 pods nominated there: every one
     * counts (the host once looked at the first 64 only). */
    build_nominated("      maxPods: 70\n");
    nom = R.nominated[0];
    for (i = 0; i < 70; i++) {
        char name[16];
        snprintf(name, sizeof name, "nom%u", i);
        R.nominees[i] = *nom;
        R.nominees[i].name = ks_intern_str(ks_intern_global(), name);
        R.nominees[i].uid = R.nominees[i].name;
        R.nominated[i] = &R.nominees[i];
    }
    R.n_nominated = 70;
    R.w.env.n_nominated = 70;
    ck_assert_int_eq(filter_nom("low", 0, &st), KS_UNSCHEDULABLE);
    ck_assert_str_eq(msg_of(&st), "node(s) had too many pods for Probe1");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 AddPod low nom"), 70);
    ASSERT_LINE(t, "Probe1 AddPod low nom69 n1");
    free(t);
    /* One fewer leaves room. */
    R.n_nominated = 69;
    ck_assert_int_eq(filter_nom("low", 0, &st), KS_SUCCESS);
}
END_TEST

/* --- per-plugin timing ------------------------------------------------------------------ */

/* What the plugin_duration callback saw (it may run on worker threads). */
typedef struct sample {
    char plugin[32];
    const char *point, *status;
    double seconds;
} sample_t;

static pthread_mutex_t samples_mu = PTHREAD_MUTEX_INITIALIZER;
static sample_t samples[64];
static unsigned n_samples;

static void t_plugin_duration(ks_fw_env_t *env, const char *plugin, int ep,
                              ks_code_t code, double seconds)
{
    (void)env;
    pthread_mutex_lock(&samples_mu);
    if (n_samples < 64) {
        sample_t *x = &samples[n_samples];
        snprintf(x->plugin, sizeof x->plugin, "%s", plugin);
        x->point = ks_fw_metric_point_name(ep);
        x->status = ks_code_name(code);
        x->seconds = seconds;
    }
    n_samples++;
    pthread_mutex_unlock(&samples_mu);
}

/* Samples matching plugin, point and status; each has a sane duration. */
static unsigned count_samples(const char *plugin, const char *point,
                              const char *status)
{
    unsigned i, n = 0;
    for (i = 0; i < n_samples && i < 64; i++) {
        if (strcmp(samples[i].plugin, plugin) != 0 ||
            strcmp(samples[i].point, point) != 0 ||
            strcmp(samples[i].status, status) != 0)
            continue;
        ck_assert_msg(samples[i].seconds >= 0 && samples[i].seconds < 5,
                      "%s %s took %g s", plugin, point, samples[i].seconds);
        n++;
    }
    return n;
}

/* Probe1 filters (Unschedulable on n1) and reserves; Probe2 scores and
 * normalizes; Filter and Score run on `par` threads. */
static void timing_run(int par, int sample)
{
    int64_t scores[3], totals[3];
    uint8_t skipped[1];
    ks_status_t st;
    const ks_pod_t *pod = tl_world_pod(&R.w, "p1");
    int i;
    rt_build_par("    filter:\n"
                 "      enabled:\n"
                 "      - name: Probe1\n"
                 "    score:\n"
                 "      enabled:\n"
                 "      - name: Probe2\n"
                 "    reserve:\n"
                 "      enabled:\n"
                 "      - name: Probe1\n" BIND_DEFAULT,
                 PROBE_CFG("Probe1", "      filter: Unschedulable\n"
                                     "      filterNodes: [n1]\n")
                     PROBE_CFG("Probe2",
                               "      scoreNodes: {n1: 10, n2: 20, n3: 40}\n"
                               "      normalize: max100\n"),
                 par);
    n_samples = 0;
    R.w.env.plugin_duration = t_plugin_duration;
    R.w.env.sample_plugins = sample;
    ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[0], 1, &st),
                     KS_UNSCHEDULABLE);
    for (i = 1; i < 3; i++)
        ck_assert_int_eq(ks_fw_run_filter(R.fw, R.cs, pod, R.nodes[i], 1,
                                          &st),
                         KS_SUCCESS);
    ck_assert_int_eq(ks_fw_run_score(R.fw, R.cs, pod, R.nodes, NULL, NULL, 3, scores,
                                     skipped, totals, &st),
                     KS_SUCCESS);
    ck_assert_int_eq(totals[2], 100); /* 40 normalized to 100 */
    ck_assert_int_eq(ks_fw_run_reserve(R.fw, R.cs, pod, "n2", &st),
                     KS_SUCCESS);
    ks_fw_run_unreserve(R.fw, R.cs, pod, "n2");
}

START_TEST(test_timing_sampled)
{
    timing_run(1, 1);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Unschedulable"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Success"), 2);
    ck_assert_uint_eq(count_samples("Probe2", "Score", "Success"), 3);
    ck_assert_uint_eq(
        count_samples("Probe2", "ScoreExtensionNormalize", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Reserve", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Unreserve", "Success"), 1);
    /* Nothing else: 3 + 3 + 1 + 1 + 1. */
    ck_assert_uint_eq(n_samples, 9);
}
END_TEST

START_TEST(test_timing_sampled_workers)
{
    /* Score on a 4-thread pool: every node's call is reported once. */
    timing_run(4, 1);
    ck_assert_uint_eq(count_samples("Probe2", "Score", "Success"), 3);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Unschedulable"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Success"), 2);
    ck_assert_uint_eq(n_samples, 9);
}
END_TEST

START_TEST(test_timing_not_sampled)
{
    timing_run(1, 0);
    ck_assert_uint_eq(n_samples, 0);
}
END_TEST

/* Through the scheduler: the observer's plugin_duration is wired to the
 * env and, with sample_all_plugins, the pod's scheduling and binding cycles
 * report every plugin call. Probe1 runs at Filter, Reserve, Permit (with
 * `permit`), PreBind and PostBind; DefaultBinder binds. */
static void t_obs_plugin(void *ud, const char *plugin, int ep, ks_code_t code,
                         double seconds)
{
    (void)ud;
    t_plugin_duration(NULL, plugin, ep, code, seconds);
}

static void timing_schedule(const char *permit)
{
    char cfg[512], *full;
    ks_generation_t *g;
    ks_sched_opts_t so;
    ks_scheduler_t *sch;
    const char *plugins = "    filter:\n"
                          "      enabled:\n"
                          "      - name: Probe1\n"
                          "    reserve:\n"
                          "      enabled:\n"
                          "      - name: Probe1\n"
                          "    permit:\n"
                          "      enabled:\n"
                          "      - name: Probe1\n"
                          "    preBind:\n"
                          "      enabled:\n"
                          "      - name: Probe1\n"
                          "    postBind:\n"
                          "      enabled:\n"
                          "      - name: Probe1\n" BIND_DEFAULT;
    snprintf(cfg, sizeof cfg, PROBE_CFG("Probe1", "      permit: %s\n"),
             permit);
    full = tl_sort_only_yaml(plugins, cfg, R.trace);
    g = tl_generation(full);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.sample_all_plugins = 1;
    so.obs.plugin_duration = t_obs_plugin;
    sch = ks_scheduler_new(g, R.w.cache, &so);
    ck_assert_ptr_nonnull(sch);
    n_samples = 0;
    ck_assert_int_eq(ks_scheduler_add_pod(sch, tl_world_take_pod(&R.w, "p1")),
                     0);
    ks_scheduler_run_batch(sch);
    ck_assert_uint_eq(ks_scheduler_stats(sch).attempts, 1);
    ks_scheduler_free(sch);
    ks_generation_unref(g);
    free(full);
}

START_TEST(test_timing_scheduler_bound)
{
    timing_schedule("Success");
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Success"), 3);
    ck_assert_uint_eq(count_samples("Probe1", "Reserve", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Permit", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "PreBind", "Success"), 1);
    ck_assert_uint_eq(count_samples("DefaultBinder", "Bind", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "PostBind", "Success"), 1);
    ck_assert_uint_eq(n_samples, 8);
}
END_TEST

START_TEST(test_timing_scheduler_rejected)
{
    /* Rejected at Permit: Unreserve runs (and is timed), nothing binds. */
    timing_schedule("Unschedulable");
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Success"), 3);
    ck_assert_uint_eq(count_samples("Probe1", "Reserve", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Permit", "Unschedulable"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Unreserve", "Success"), 1);
    ck_assert_uint_eq(n_samples, 6);
}
END_TEST

START_TEST(test_timing_point_names)
{
    ck_assert_str_eq(ks_fw_metric_point_name(KS_EP_PRE_FILTER), "PreFilter");
    ck_assert_str_eq(ks_fw_metric_point_name(KS_EP_POST_BIND), "PostBind");
    ck_assert_str_eq(ks_fw_metric_point_name(KS_FW_EP_PREFILTER_ADD_POD),
                     "PreFilterExtensionAddPod");
    ck_assert_str_eq(ks_fw_metric_point_name(KS_FW_EP_PREFILTER_REMOVE_POD),
                     "PreFilterExtensionRemovePod");
    ck_assert_str_eq(ks_fw_metric_point_name(KS_EP_QUEUE_SORT), "Unknown");
}
END_TEST

START_TEST(test_timing_prefilter_extensions)
{
    ks_status_t st;
    /* minPods 1 with "nom" nominated to n1: PreFilter, AddPod, Filter with
     * the nominated pod (passes), Filter without it (fails). */
    build_nominated("      minPods: 1\n");
    n_samples = 0;
    R.w.env.plugin_duration = t_plugin_duration;
    R.w.env.sample_plugins = 1;
    ck_assert_int_eq(filter_nom("low", 0, &st), KS_UNSCHEDULABLE);
    ck_assert_uint_eq(count_samples("Probe1", "PreFilter", "Success"), 1);
    ck_assert_uint_eq(
        count_samples("Probe1", "PreFilterExtensionAddPod", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Success"), 1);
    ck_assert_uint_eq(count_samples("Probe1", "Filter", "Unschedulable"), 1);
    ck_assert_uint_eq(n_samples, 4);
}
END_TEST


static Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("filter");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_filter_reasons_merged);
    tcase_add_test(tc, test_filter_code_precedence);
    tcase_add_test(tc, test_fit_error_sorted_as_strings);
    tcase_add_test(tc, test_fit_error_write_and_go_duration);
    tcase_add_test(tc, test_snapshot_index_follows_changes);
    tcase_add_test(tc, test_filter_invalid_code);
    tcase_add_test(tc, test_filter_error_named);
    suite_add_tcase(s, tc);
    tc = tcase_create("prefilter");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_prefilter_skip_skips_filter);
    tcase_add_test(tc, test_prefilter_result_intersection);
    tcase_add_test(tc, test_prefilter_result_empty);
    tcase_add_test(tc, test_prefilter_result_none_single);
    tcase_add_test(tc, test_prefilter_failures);
    tcase_add_test(tc, test_prefilter_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("score");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_score_out_of_range);
    tcase_add_test(tc, test_score_out_of_range_weighted);
    tcase_add_loop_test(tc, test_score_group_weight_one, 0, 2);
    tcase_add_test(tc, test_score_group_weight_one_out_of_range);
    tcase_add_loop_test(tc, test_score_errors_in_plugin_order, 0,
                        (int)(sizeof score_order_cases /
                              sizeof score_order_cases[0]));
    tcase_add_test(tc, test_score_weighed_on_workers);
    tcase_add_test(tc, test_score_out_of_range_on_workers);
    tcase_add_test(tc, test_score_all_skipped_totals_zero);
    tcase_add_test(tc, test_normalize_and_weights);
    tcase_add_test(tc, test_score_blocks_many_nodes);
    suite_add_tcase(s, tc);
    tc = tcase_create("reserve-permit-bind");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_reserve_failure_unreserve_reverse);
    tcase_add_test(tc, test_permit_wait_min_timeout);
    tcase_add_test(tc, test_permit_timeout_capped);
    tcase_add_test(tc, test_permit_reject_stops);
    tcase_add_test(tc, test_bind_skip_chain);
    tcase_add_test(tc, test_bind_all_skip);
    suite_add_tcase(s, tc);
    tc = tcase_create("postfilter-nominated");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_post_filter_sees_statuses);
    tcase_add_test(tc, test_post_filter_all_fail);
    tcase_add_test(tc, test_nominated_higher_priority_blocks);
    tcase_add_test(tc, test_nominated_second_pass);
    tcase_add_test(tc, test_nominated_more_than_64);
    suite_add_tcase(s, tc);
    tc = tcase_create("plugin-timing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_timing_sampled);
    tcase_add_test(tc, test_timing_sampled_workers);
    tcase_add_test(tc, test_timing_not_sampled);
    tcase_add_test(tc, test_timing_prefilter_extensions);
    tcase_add_test(tc, test_timing_scheduler_bound);
    tcase_add_test(tc, test_timing_scheduler_rejected);
    tcase_add_test(tc, test_timing_point_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tl_run_suite(runtime_suite());
}
