/* Unit tests of the conformance readers and the comparer (no plugins). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance/compare.h"
#include "conformance/conf_result.h"
#include "conformance/expected.h"
#include "conformance/scenario.h"

/* --- helpers ------------------------------------------------------------- */

static char tmpdir[] = "/tmp/ks-conf-test-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Run the comparer and return what it printed (malloc'd). */
static char *compare_text(const ks_conf_results_t *e, const ks_conf_results_t *g,
                          size_t *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    *n = ks_conf_compare(e, g, f);
    fclose(f);
    return buf;
}

static const char expected_text[] =
    "name: demo\n"
    "results:\n"
    "- pod: default/p1\n"
    "  feasible: [a2, a1]\n"
    "  rejected: {a3: [\"Insufficient memory\", \"Insufficient cpu\"]}\n"
    "  scores: {a1: 637, a2: 602}\n"
    "  plugin_scores:\n"
    "    NodeResourcesFit: {a1: 56, a2: 9}\n"
    "  selected: a1\n"
    "- pod: default/p2\n"
    "  feasible: []\n"
    "  rejected: {a1: [\"Insufficient cpu\"]}\n"
    "  unschedulable: \"0/1 nodes are available: 1 Insufficient cpu.\"\n"
    "  nominated: a1\n"
    "  victims: [default/v2, default/v1]\n";

/* The result ksched would produce for expected_text, built by hand. */
static void build_got(ks_conf_results_t *g)
{
    ks_conf_result_t *r;
    memset(g, 0, sizeof *g);
    g->name = strdup("demo");
    r = ks_conf_results_append(g);
    r->pod = strdup("default/p1");
    ks_conf_strv_push(&r->feasible, &r->n_feasible, "a1");
    ks_conf_strv_push(&r->feasible, &r->n_feasible, "a2");
    r->rejected = calloc(1, sizeof *r->rejected);
    r->n_rejected = 1;
    r->rejected[0].node = strdup("a3");
    /* the other order: reasons are a multiset */
    ks_conf_strv_push(&r->rejected[0].reasons, &r->rejected[0].n_reasons,
                      "Insufficient cpu");
    ks_conf_strv_push(&r->rejected[0].reasons, &r->rejected[0].n_reasons,
                      "Insufficient memory");
    r->scores = calloc(2, sizeof *r->scores);
    r->n_scores = 2;
    r->scores[0].node = strdup("a2");
    r->scores[0].score = 602;
    r->scores[1].node = strdup("a1");
    r->scores[1].score = 637;
    r->plugin_scores = calloc(2, sizeof *r->plugin_scores);
    r->n_plugin_scores = 2;
    r->plugin_scores[0].plugin = strdup("NodeResourcesFit");
    r->plugin_scores[0].scores = calloc(2, sizeof(ks_conf_score_t));
    r->plugin_scores[0].n_scores = 2;
    r->plugin_scores[0].scores[0].node = strdup("a1");
    r->plugin_scores[0].scores[0].score = 56;
    r->plugin_scores[0].scores[1].node = strdup("a2");
    r->plugin_scores[0].scores[1].score = 9;
    /* a volume plugin the expected files leave out */
    r->plugin_scores[1].plugin = strdup("VolumeBinding");
    r->plugin_scores[1].scores = calloc(1, sizeof(ks_conf_score_t));
    r->plugin_scores[1].n_scores = 1;
    r->plugin_scores[1].scores[0].node = strdup("a1");
    r->selected = strdup("a1");
    ks_conf_result_normalise(r);

    r = ks_conf_results_append(g);
    r->pod = strdup("default/p2");
    r->rejected = calloc(1, sizeof *r->rejected);
    r->n_rejected = 1;
    r->rejected[0].node = strdup("a1");
    ks_conf_strv_push(&r->rejected[0].reasons, &r->rejected[0].n_reasons,
                      "Insufficient cpu");
    r->unschedulable = strdup("0/1 nodes are available: 1 Insufficient cpu.");
    r->nominated = strdup("a1");
    /* deletion order differs from the expected list: compared sorted */
    ks_conf_strv_push(&r->victims, &r->n_victims, "default/v1");
    ks_conf_strv_push(&r->victims, &r->n_victims, "default/v2");
    ks_conf_result_normalise(r);
}

/* --- expected-file reader ------------------------------------------------- */

START_TEST(expected_reads_and_normalises)
{
    ks_conf_results_t e;
    ks_error_t err = {0};
    const char *p = write_file("demo.expected.yaml", expected_text);
    ck_assert_int_eq(ks_expected_load(p, &e, &err), 0);
    ck_assert_str_eq(e.name, "demo");
    ck_assert_uint_eq(e.n, 2);
    ck_assert_str_eq(e.items[0].pod, "default/p1");
    ck_assert_uint_eq(e.items[0].line, 3);
    ck_assert_uint_eq(e.items[0].n_feasible, 2);
    ck_assert_str_eq(e.items[0].feasible[0], "a1"); /* sorted */
    ck_assert_str_eq(e.items[0].rejected[0].reasons[0], "Insufficient cpu");
    ck_assert_int_eq(e.items[0].scores[0].score, 637);
    ck_assert_str_eq(e.items[0].plugin_scores[0].plugin, "NodeResourcesFit");
    ck_assert_int_eq(e.items[0].plugin_scores[0].scores[1].score, 9);
    ck_assert_ptr_null(e.items[0].unschedulable);
    ck_assert_str_eq(e.items[1].nominated, "a1");
    ck_assert_str_eq(e.items[1].victims[0], "default/v1");
    ks_conf_results_free(&e);
}
END_TEST

START_TEST(expected_rejects_unknown_field_with_position)
{
    ks_conf_results_t e;
    ks_error_t err = {0};
    const char *p = write_file("typo.expected.yaml",
                               "name: t\n"
                               "results:\n"
                               "- pod: default/p1\n"
                               "  feasable: [a1]\n");
    ck_assert_int_ne(ks_expected_load(p, &e, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "typo.expected.yaml:4:3: "));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown field \"feasable\""));
    ck_assert_uint_eq(e.n, 0);
}
END_TEST

START_TEST(expected_rejects_non_integer_score)
{
    ks_conf_results_t e;
    ks_error_t err = {0};
    const char *p = write_file("bad.expected.yaml",
                               "name: t\n"
                               "results:\n"
                               "- pod: default/p1\n"
                               "  scores: {a1: 6x}\n");
    ck_assert_int_ne(ks_expected_load(p, &e, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "bad.expected.yaml:4:16: scores: "
                                          "expected an integer, found a string "
                                          "(\"6x\")"));
}
END_TEST

/* --- comparer --------------------------------------------------------------- */

START_TEST(compare_equal_results)
{
    ks_conf_results_t e, g;
    ks_error_t err = {0};
    size_t n;
    char *text;
    ck_assert_int_eq(
        ks_expected_load(write_file("demo.expected.yaml", expected_text), &e,
                         &err),
        0);
    build_got(&g);
    text = compare_text(&e, &g, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(text, "");
    free(text);
    ks_conf_results_free(&e);
    ks_conf_results_free(&g);
}
END_TEST

START_TEST(compare_reports_each_mismatch)
{
    ks_conf_results_t e, g;
    ks_error_t err = {0};
    ks_conf_result_t *r;
    size_t n;
    char *text;
    ck_assert_int_eq(
        ks_expected_load(write_file("demo.expected.yaml", expected_text), &e,
                         &err),
        0);
    build_got(&g);
    r = &g.items[0];
    r->plugin_scores[0].scores[0].score = 55; /* NodeResourcesFit a1 */
    free(r->plugin_scores[1].plugin);          /* not a volume plugin now */
    r->plugin_scores[1].plugin = strdup("Extra");
    ks_conf_result_normalise(r);
    free(r->rejected[0].reasons[1]);
    r->rejected[0].reasons[1] = strdup("Too many pods");
    ks_conf_result_normalise(r);
    r = &g.items[1];
    free(r->nominated);
    r->nominated = NULL;
    text = compare_text(&e, &g, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(
        text,
        "  default/p1: rejected.a3: expected [\"Insufficient cpu\", "
        "\"Insufficient memory\"], got [\"Insufficient cpu\", \"Too many "
        "pods\"]\n"
        "  default/p1: plugin_scores.NodeResourcesFit.a1: expected 56, got "
        "55\n"
        "  default/p1: plugin_scores.Extra: expected (none: not in the "
        "expected file), got {a1: 0}\n"
        "  default/p2: nominated: expected a1, got (none)\n");
    free(text);
    ks_conf_results_free(&e);
    ks_conf_results_free(&g);
}
END_TEST

START_TEST(compare_missing_node_and_pod)
{
    ks_conf_results_t e, g;
    ks_error_t err = {0};
    size_t n;
    char *text;
    ck_assert_int_eq(
        ks_expected_load(write_file("demo.expected.yaml", expected_text), &e,
                         &err),
        0);
    build_got(&g);
    /* drop the second pod's result and a2's total */
    ks_conf_result_clear(&g.items[1]);
    g.n = 1;
    free(g.items[0].scores[1].node);
    g.items[0].n_scores = 1;
    text = compare_text(&e, &g, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(text,
                     "  default/p1: scores.a2: expected 602, got (none)\n"
                     "  results[1]: pod: expected default/p2, got (no such "
                     "pod in the scenario)\n");
    free(text);
    ks_conf_results_free(&e);
    ks_conf_results_free(&g);
}
END_TEST

/* --- scenario reader ------------------------------------------------------- */

START_TEST(scenario_reads_objects_and_defaults_start_time)
{
    ks_scenario_t *sc;
    ks_error_t err = {0};
    const char *p = write_file(
        "sc.yaml",
        "name: sc\n"
        "nodes:\n"
        "- metadata: {name: n1}\n"
        "  status: {capacity: {cpu: '2', memory: 1Gi, pods: '10'}}\n"
        "pods:\n"
        "- metadata: {name: run}\n"
        "  spec: {nodeName: n1, containers: [{name: c}]}\n"
        "  status: {startTime: '2022-05-01T00:00:00Z'}\n"
        "schedule:\n"
        "- metadata: {name: new, namespace: team}\n"
        "  spec: {containers: [{name: c}]}\n");
    ck_assert_msg(ks_scenario_load(p, &sc, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(sc->name, "sc");
    ck_assert_ptr_null(sc->config);
    ck_assert_uint_eq(sc->n_nodes, 1);
    ck_assert_int_eq(sc->nodes[0]->allocatable.milli_cpu, 2000);
    ck_assert_uint_eq(sc->n_pods, 1);
    /* 2022-05-01T00:00:00Z */
    ck_assert_int_eq(sc->pods[0]->start_unix_ms, INT64_C(1651363200000));
    ck_assert_uint_eq(sc->n_schedule, 1);
    ck_assert_str_eq(sc->schedule[0]->uid, "team/new");
    /* 2022-06-01T00:00:00Z */
    ck_assert_int_eq(sc->schedule[0]->start_unix_ms, INT64_C(1654041600000));
    ks_scenario_free(sc);
}
END_TEST

START_TEST(scenario_rejects_running_pod_without_node)
{
    ks_scenario_t *sc;
    ks_error_t err = {0};
    const char *p = write_file("sc2.yaml",
                               "name: sc2\n"
                               "pods:\n"
                               "- metadata: {name: run}\n"
                               "  spec: {containers: [{name: c}]}\n");
    ck_assert_int_ne(ks_scenario_load(p, &sc, &err), 0);
    ck_assert_ptr_null(sc);
    ck_assert_ptr_nonnull(strstr(err.msg, "sc2.yaml:3:3: pods[0] "
                                          "(default/run): a running pod "
                                          "needs spec.nodeName"));
}
END_TEST

START_TEST(scenario_rejects_unknown_top_level_key)
{
    ks_scenario_t *sc;
    ks_error_t err = {0};
    const char *p = write_file("sc3.yaml", "name: sc3\nnode: []\n");
    ck_assert_int_ne(ks_scenario_load(p, &sc, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "sc3.yaml:2:1: scenario: unknown "
                                          "field \"node\""));
}
END_TEST

START_TEST(scenario_paths)
{
    char *e = ks_scenario_expected_path("dir/x.yaml");
    char *b = ks_scenario_base_name("dir/sub/x.yaml");
    ck_assert_str_eq(e, "dir/x.expected.yaml");
    ck_assert_str_eq(b, "x");
    free(e);
    free(b);
}
END_TEST

static Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *t = tcase_create("expected");
    tcase_add_test(t, expected_reads_and_normalises);
    tcase_add_test(t, expected_rejects_unknown_field_with_position);
    tcase_add_test(t, expected_rejects_non_integer_score);
    suite_add_tcase(s, t);
    t = tcase_create("compare");
    tcase_add_test(t, compare_equal_results);
    tcase_add_test(t, compare_reports_each_mismatch);
    tcase_add_test(t, compare_missing_node_and_pod);
    suite_add_tcase(s, t);
    t = tcase_create("scenario");
    tcase_add_test(t, scenario_reads_objects_and_defaults_start_time);
    tcase_add_test(t, scenario_rejects_running_pod_without_node);
    tcase_add_test(t, scenario_rejects_unknown_top_level_key);
    tcase_add_test(t, scenario_paths);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;
    char cmd[600];
    if (mkdtemp(tmpdir) == NULL)
        return 99;
    sr = srunner_create(conformance_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
