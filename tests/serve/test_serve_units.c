/* Unit tests for the pieces of `ksched serve`: metrics text, per-plugin
 * samples from several threads, router, query flags, buffers, and the
 * checks on input: Kubernetes' name rules, the JSON nesting scan and the
 * UTF-8 escaping of messages. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "base/buf.h"
#include "cluster/objects_json.h"
#include "cluster/validate.h"
#include "server/metrics.h"
#include "server/plugin_samples.h"
#include "server/router.h"

START_TEST(metrics_render_exact)
{
    static const char *const ab[] = {"a", "b", NULL};
    static const char *const r_[] = {"r", NULL};
    const double bounds[3] = {0.1, 0.2, 0.4};
    ks_metrics_t *r = ks_metrics_new();
    ks_metric_t *c, *h, *g;
    size_t len;
    char *text;
    const char *want =
        "# HELP t_total A \\\\ help\\nline\n"
        "# TYPE t_total counter\n"
        "t_total{a=\"x\",b=\"y\\\"z\"} 3.5\n"
        "# HELP t_seconds H.\n"
        "# TYPE t_seconds histogram\n"
        "t_seconds_bucket{r=\"ok\",le=\"0.1\"} 1\n"
        "t_seconds_bucket{r=\"ok\",le=\"0.2\"} 2\n"
        "t_seconds_bucket{r=\"ok\",le=\"0.4\"} 3\n"
        "t_seconds_bucket{r=\"ok\",le=\"+Inf\"} 4\n"
        "t_seconds_sum{r=\"ok\"} 4.4375\n"
        "t_seconds_count{r=\"ok\"} 4\n"
        "# HELP t_g G.\n"
        "# TYPE t_g gauge\n"
        "t_g 7\n";
    ck_assert_ptr_nonnull(r);
    c = ks_metrics_add(r, KS_METRIC_COUNTER, "t_total", "A \\ help\nline", ab,
                       NULL, 0);
    h = ks_metrics_add(r, KS_METRIC_HISTOGRAM, "t_seconds", "H.", r_, bounds,
                       3);
    g = ks_metrics_add(r, KS_METRIC_GAUGE, "t_g", "G.", NULL, NULL, 0);
    ks_metric_add(c, 2, "x", "y\"z");
    ks_metric_add(c, 1.5, "x", "y\"z");
    ks_metric_add(c, -1, "x", "y\"z"); /* counters never go down */
    /* 0.0625 <= 0.1; 0.125 <= 0.2; 0.25 <= 0.4; 4 only in +Inf. */
    ks_metric_observe(h, 0.0625, "ok");
    ks_metric_observe(h, 0.125, "ok");
    ks_metric_observe(h, 0.25, "ok");
    ks_metric_observe(h, 4, "ok");
    ks_metric_set(g, 3);
    ks_metric_set(g, 7);
    text = ks_metrics_render(r, &len);
    ck_assert_str_eq(text, want);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert(ks_metric_value(c, "x", "y\"z") == 3.5);
    ck_assert(ks_metric_value(h, "ok") == 4);
    ck_assert(ks_metric_value(c, "nope", "none") == 0);
    free(text);
    ks_metrics_free(r);
}
END_TEST

START_TEST(metrics_clear_and_bounds)
{
    static const char *const p[] = {"plugin", NULL};
    double b[4];
    ks_metrics_t *r = ks_metrics_new();
    ks_metric_t *g = ks_metrics_add(r, KS_METRIC_GAUGE, "g", "g.", p, NULL, 0);
    ks_metric_t *h;
    char *text;
    size_t len;
    ks_metrics_exponential_buckets(0.001, 2, 4, b);
    ck_assert(b[0] == 0.001 && b[3] == 0.008);
    ks_metrics_exponential_buckets(0.00001, 1.5, 4, b);
    h = ks_metrics_add(r, KS_METRIC_HISTOGRAM, "h", "h.", NULL, b, 2);
    ks_metric_set(g, 1, "A");
    ks_metric_set(g, 2, "B");
    ks_metric_clear(g);
    ks_metric_set(g, 5, "C");
    ks_metric_observe(h, 0.000011);
    text = ks_metrics_render(r, &len);
    /* Cleared series are gone; each bound prints in the shortest form that
     * reads back as the same double: 1e-05 * 1.5 is not exactly 1.5e-05
     * (kube-scheduler's scrape shows the same text for this bucket). */
    ck_assert_ptr_null(strstr(text, "plugin=\"A\""));
    ck_assert_ptr_nonnull(strstr(text, "g{plugin=\"C\"} 5\n"));
    ck_assert_ptr_nonnull(strstr(text, "h_bucket{le=\"1e-05\"} 0\n"));
    ck_assert_ptr_nonnull(strstr(text, "h_bucket{le=\"1.5000000000000002e-05\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "h_bucket{le=\"+Inf\"} 1\n"));
    free(text);
    ks_metrics_free(r);
}
END_TEST

/* Four threads record at once, 1000 rounds each: 0.05 s as plugin "A" at
 * "Filter"/"Success" and 0.3 s as "B" at "Score"/"Error"; the loop thread
 * then flushes. */
#define SAMPLE_THREADS 4
#define SAMPLE_ROUNDS 1000

static void *sample_thread(void *ud)
{
    ks_plugin_samples_t *ps = ud;
    char name[8];
    int i;
    for (i = 0; i < SAMPLE_ROUNDS; i++) {
        /* A scratch copy: the collector must keep its own. */
        snprintf(name, sizeof name, "A");
        ks_plugin_samples_record(ps, name, "Filter", "Success", 0.05);
        snprintf(name, sizeof name, "B");
        ks_plugin_samples_record(ps, name, "Score", "Error", 0.3);
        memset(name, 'x', sizeof name - 1);
    }
    return NULL;
}

START_TEST(plugin_samples_threads)
{
    static const char *const l[] = {"plugin", "extension_point", "status",
                                    NULL};
    const double bounds[3] = {0.1, 0.2, 0.4};
    ks_metrics_t *r = ks_metrics_new();
    ks_metric_t *h = ks_metrics_add(r, KS_METRIC_HISTOGRAM, "p_seconds", "P.",
                                    l, bounds, 3);
    ks_plugin_samples_t *ps = ks_plugin_samples_new(h);
    pthread_t th[SAMPLE_THREADS];
    size_t len;
    char *text;
    int i;
    ck_assert_ptr_nonnull(ps);
    for (i = 0; i < SAMPLE_THREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, sample_thread, ps), 0);
    for (i = 0; i < SAMPLE_THREADS; i++)
        pthread_join(th[i], NULL);
    ks_plugin_samples_record(ps, "A", "Filter", "Success", 1.5); /* +Inf */
    /* Nothing reaches the registry before a flush. */
    ck_assert(ks_metric_value(h, "A", "Filter", "Success") == 0);
    ks_plugin_samples_flush(ps);
    ck_assert(ks_metric_value(h, "A", "Filter", "Success") == 4001);
    ck_assert(ks_metric_value(h, "B", "Score", "Error") == 4000);
    /* A second flush adds nothing; later samples add to the same series. */
    ks_plugin_samples_flush(ps);
    ks_plugin_samples_record(ps, "B", "Score", "Error", 0.15);
    ks_plugin_samples_flush(ps);
    text = ks_metrics_render(r, &len);
    /* A: 4000 x 0.05 (<= 0.1) and one 1.5 (+Inf only), sum 201.5.
     * B: 4000 x 0.3 (<= 0.4) and one 0.15 (<= 0.2), sum 1200.15. */
    ck_assert_ptr_nonnull(strstr(
        text, "p_seconds_bucket{plugin=\"A\",extension_point=\"Filter\","
              "status=\"Success\",le=\"0.4\"} 4000\n"
              "p_seconds_bucket{plugin=\"A\",extension_point=\"Filter\","
              "status=\"Success\",le=\"+Inf\"} 4001\n"));
    ck_assert_ptr_nonnull(strstr(
        text, "p_seconds_bucket{plugin=\"B\",extension_point=\"Score\","
              "status=\"Error\",le=\"0.1\"} 0\n"
              "p_seconds_bucket{plugin=\"B\",extension_point=\"Score\","
              "status=\"Error\",le=\"0.2\"} 1\n"
              "p_seconds_bucket{plugin=\"B\",extension_point=\"Score\","
              "status=\"Error\",le=\"0.4\"} 4001\n"));
    ck_assert_ptr_nonnull(strstr(
        text, "p_seconds_count{plugin=\"B\",extension_point=\"Score\","
              "status=\"Error\"} 4001\n"));
    {
        /* Sums of 0.05s are not exact in binary: within 1e-9. */
        const char *key = "p_seconds_sum{plugin=\"A\",extension_point="
                          "\"Filter\",status=\"Success\"} ";
        const char *at = strstr(text, key);
        double sum;
        ck_assert_ptr_nonnull(at);
        sum = strtod(at + strlen(key), NULL);
        ck_assert_msg(sum > 201.5 - 1e-9 && sum < 201.5 + 1e-9, "sum %.17g",
                      sum);
    }
    free(text);
    ks_plugin_samples_free(ps);
    ks_metrics_free(r);
}
END_TEST

START_TEST(router_match)
{
    char caps[KS_ROUTE_MAX_CAPS][KS_ROUTE_CAP_MAX];
    ck_assert_int_eq(ks_route_match("/api/v1/nodes/{}", "/api/v1/nodes/n1",
                                    caps, 2),
                     1);
    ck_assert_str_eq(caps[0], "n1");
    ck_assert_int_eq(
        ks_route_match("/api/v1/namespaces/{}/pods/{}",
                       "/api/v1/namespaces/team-a/pods/web-0", caps, 2),
        2);
    ck_assert_str_eq(caps[0], "team-a");
    ck_assert_str_eq(caps[1], "web-0");
    ck_assert_int_eq(ks_route_match("/api/v1/nodes", "/api/v1/nodes/", caps,
                                    2),
                     0);
    ck_assert_int_eq(ks_route_match("/api/v1/nodes/{}", "/api/v1/nodes/",
                                    caps, 2),
                     -1);
    ck_assert_int_eq(ks_route_match("/api/v1/nodes", "/api/v1/nodesx", caps,
                                    2),
                     -1);
    ck_assert_int_eq(ks_route_match("/api/v1/nodes/{}", "/api/v1/nodes/a/b",
                                    caps, 2),
                     -1);
    ck_assert_int_eq(ks_route_match("/healthz", "/", caps, 2), -1);
    ck_assert_int_eq(ks_route_match("/healthz", "healthz", caps, 2), -1);
    ck_assert_int_eq(ks_route_method_allowed("GET PUT DELETE", "PUT"), 1);
    ck_assert_int_eq(ks_route_method_allowed("GET PUT DELETE", "DELETE"), 1);
    ck_assert_int_eq(ks_route_method_allowed("GET", "GE"), 0);
    ck_assert_int_eq(ks_route_method_allowed("GET POST", "PATCH"), 0);
}
END_TEST

START_TEST(query_flags)
{
    ck_assert_int_eq(ks_api_query_flag("watch=true", "watch"), 1);
    ck_assert_int_eq(ks_api_query_flag("a=b&watch=1", "watch"), 1);
    ck_assert_int_eq(ks_api_query_flag("watch=false", "watch"), 0);
    ck_assert_int_eq(ks_api_query_flag("xwatch=true", "watch"), 0);
    ck_assert_int_eq(ks_api_query_flag("watch", "watch"), 0);
    ck_assert_int_eq(ks_api_query_flag("", "watch"), 0);
    ck_assert_int_eq(
        ks_api_query_flag("watch=true&sendInitialEvents=true",
                          "sendInitialEvents"),
        1);
}
END_TEST

START_TEST(buf_grows)
{
    ks_buf_t b = {0};
    char *s;
    size_t len, i;
    for (i = 0; i < 100; i++)
        ks_buf_printf(&b, "%03zu:%s;", i,
                      "a fairly long piece of text to force growth");
    ck_assert_uint_eq(b.len, 100 * (4 + 43 + 1));
    ck_assert(strncmp(b.data + 48 * 99, "099:", 4) == 0);
    s = ks_buf_steal(&b, &len);
    ck_assert_uint_eq(len, 4800);
    ck_assert_ptr_null(b.data);
    free(s);
    s = ks_buf_steal(&b, &len);
    ck_assert_str_eq(s, "");
    ck_assert_uint_eq(len, 0);
    free(s);
}
END_TEST

START_TEST(names_validated)
{
    char msg[2048], q[64];
    char name[300];
    ks_labels_t ls;
    ks_label_t items[2];
    /* DNS-1123 subdomains: pod and node names. */
    ck_assert_int_eq(ks_validate_dns1123_subdomain("web-0", msg, sizeof msg),
                     0);
    ck_assert_int_eq(
        ks_validate_dns1123_subdomain("a.b-c.d0", msg, sizeof msg), 0);
    ck_assert_int_eq(ks_validate_dns1123_subdomain("0", msg, sizeof msg), 0);
    {
        static const char *const bad[] = {"",    "a/b", "a?b", "a#b", "a b",
                                          "Web", "-a",  "a-",  "a..b", ".a",
                                          "a.",  "a_b", "caf\xc3\xa9"};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            ck_assert_msg(ks_validate_dns1123_subdomain(bad[i], msg,
                                                        sizeof msg) == -1,
                          "%s accepted", bad[i]);
            ck_assert_ptr_nonnull(strstr(
                msg, "a lowercase RFC 1123 subdomain must consist of lower "
                     "case alphanumeric characters, '-' or '.', and must "
                     "start and end with an alphanumeric character (e.g. "
                     "'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                     "[a-z0-9])?)*')"));
        }
    }
    memset(name, 'a', 253);
    name[253] = '\0';
    ck_assert_int_eq(ks_validate_dns1123_subdomain(name, msg, sizeof msg), 0);
    name[253] = 'a';
    name[254] = '\0';
    ck_assert_int_eq(ks_validate_dns1123_subdomain(name, msg, sizeof msg),
                     -1);
    ck_assert_str_eq(msg, "must be no more than 253 characters");
    /* DNS-1123 labels: namespaces. */
    ck_assert_int_eq(ks_validate_dns1123_label("kube-system", msg, sizeof msg),
                     0);
    ck_assert_int_eq(ks_validate_dns1123_label("a.b", msg, sizeof msg), -1);
    ck_assert_str_eq(msg,
                     "a lowercase RFC 1123 label must consist of lower case "
                     "alphanumeric characters or '-', and must start and end "
                     "with an alphanumeric character (e.g. 'my-name', or "
                     "'123-abc', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    memset(name, 'n', 64);
    name[64] = '\0';
    ck_assert_int_eq(ks_validate_dns1123_label(name, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "must be no more than 63 characters");
    name[63] = '\0';
    ck_assert_int_eq(ks_validate_dns1123_label(name, NULL, 0), 0);
    /* Qualified names: label keys. */
    ck_assert_int_eq(ks_validate_qualified_name("app", msg, sizeof msg), 0);
    ck_assert_int_eq(ks_validate_qualified_name("My_Name.x", msg, sizeof msg),
                     0);
    ck_assert_int_eq(ks_validate_qualified_name("kubernetes.io/hostname", msg,
                                                sizeof msg),
                     0);
    ck_assert_int_eq(ks_validate_qualified_name("a b", msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "name part must consist of alphanumeric "
                          "characters, '-', '_' or '.', and must start and "
                          "end with an alphanumeric character (e.g. "
                          "'MyName', or 'my.name', or '123-abc', regex used "
                          "for validation is "
                          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    ck_assert_int_eq(ks_validate_qualified_name("/a", msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "prefix part must be non-empty");
    ck_assert_int_eq(ks_validate_qualified_name("a/", msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "name part must be non-empty; "));
    ck_assert_int_eq(ks_validate_qualified_name("Ex.com/a", msg, sizeof msg),
                     -1);
    ck_assert_ptr_nonnull(
        strstr(msg, "prefix part a lowercase RFC 1123 subdomain"));
    ck_assert_int_eq(ks_validate_qualified_name("a/b/c", msg, sizeof msg),
                     -1);
    ck_assert_ptr_nonnull(strstr(msg, "a qualified name must consist of "));
    ck_assert_ptr_nonnull(strstr(msg, " with an optional DNS subdomain prefix "
                                      "and '/' (e.g. 'example.com/MyName')"));
    memset(name, 'k', 64);
    name[64] = '\0';
    ck_assert_int_eq(ks_validate_qualified_name(name, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "name part must be no more than 63 characters");
    /* Label values. */
    ck_assert_int_eq(ks_validate_label_value("", msg, sizeof msg), 0);
    ck_assert_int_eq(ks_validate_label_value("V_a-1.b", msg, sizeof msg), 0);
    ck_assert_int_eq(ks_validate_label_value("_v", msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "a valid label must be an empty string "
                                      "or consist of alphanumeric"));
    name[63] = '\0';
    ck_assert_int_eq(ks_validate_label_value(name, msg, sizeof msg), 0);
    /* A label set, as the API server reports it. */
    items[0].key = "app";
    items[0].value = "web";
    items[1].key = "tier";
    items[1].value = "a \"b\"";
    ls.items = items;
    ls.n = 2;
    ck_assert_int_eq(ks_validate_field_labels(&ls, "metadata.labels", msg,
                                              sizeof msg),
                     -1);
    ck_assert_ptr_nonnull(strstr(
        msg, "metadata.labels: Invalid value: \"a \\\"b\\\"\": a valid label "));
    ls.n = 1;
    ck_assert_int_eq(ks_validate_field_labels(&ls, "metadata.labels", msg,
                                              sizeof msg),
                     0);
    /* Quoting, truncated to fit. */
    ck_assert_str_eq(ks_validate_quote("a\"\\\n\x01", q, sizeof q),
                     "\"a\\\"\\\\\\n\\x01\"");
    memset(name, 'z', 100);
    name[100] = '\0';
    ks_validate_quote(name, q, 16);
    ck_assert_str_eq(q, "\"zzzzzzzzzz...\"");
}
END_TEST

START_TEST(json_depth_scan)
{
    const char *s;
    size_t at = 0;
    ck_assert_int_eq(ks_api_json_depth("{}", 2, NULL), 1);
    ck_assert_int_eq(ks_api_json_depth("{\"a\":[1,{\"b\":[]}]}", 19, &at), 4);
    ck_assert_uint_eq(at, 13);
    /* Brackets in strings, escaped quotes included, are text. */
    s = "{\"a\":\"[[[\\\"[[\",\"b\":[]}";
    ck_assert_int_eq(ks_api_json_depth(s, strlen(s), NULL), 2);
    ck_assert_int_eq(ks_api_json_depth("", 0, NULL), 0);
    {
        char deep[2 * 2000 + 1];
        memset(deep, '[', 2000);
        memset(deep + 2000, ']', 2000);
        deep[4000] = '\0';
        /* The scan stops once past the limit. */
        ck_assert_int_eq(ks_api_json_depth(deep, 4000, &at),
                         KS_JSON_MAX_DEPTH + 1);
        ck_assert_uint_eq(at, KS_JSON_MAX_DEPTH);
        ck_assert_int_eq(ks_api_json_depth(deep + 2000 - 64, 128, NULL), 64);
    }
}
END_TEST

START_TEST(utf8_escape)
{
    char out[64];
    ks_api_utf8_escape("/caf\xc3\xa9", out, sizeof out);
    ck_assert_str_eq(out, "/caf\xc3\xa9");
    ks_api_utf8_escape("/a\xff\xfe", out, sizeof out);
    ck_assert_str_eq(out, "/a\\xff\\xfe");
    /* Truncated sequences, overlong forms and surrogates are not UTF-8. */
    ks_api_utf8_escape("\xc3(", out, sizeof out);
    ck_assert_str_eq(out, "\\xc3(");
    ks_api_utf8_escape("\xc0\xaf", out, sizeof out);
    ck_assert_str_eq(out, "\\xc0\\xaf");
    ks_api_utf8_escape("\xed\xa0\x80", out, sizeof out);
    ck_assert_str_eq(out, "\\xed\\xa0\\x80");
    ks_api_utf8_escape("\xf0\x9f\x98\x80!", out, sizeof out);
    ck_assert_str_eq(out, "\xf0\x9f\x98\x80!");
    /* Never past the buffer, never half an escape. */
    ks_api_utf8_escape("ab\xff", out, 5);
    ck_assert_str_eq(out, "ab");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve");
    TCase *t = tcase_create("metrics");
    SRunner *sr;
    int failed;
    tcase_add_test(t, metrics_render_exact);
    tcase_add_test(t, metrics_clear_and_bounds);
    tcase_add_test(t, plugin_samples_threads);
    suite_add_tcase(s, t);
    t = tcase_create("router");
    tcase_add_test(t, router_match);
    tcase_add_test(t, query_flags);
    suite_add_tcase(s, t);
    t = tcase_create("buf");
    tcase_add_test(t, buf_grows);
    suite_add_tcase(s, t);
    t = tcase_create("input");
    tcase_add_test(t, names_validated);
    tcase_add_test(t, json_depth_scan);
    tcase_add_test(t, utf8_escape);
    suite_add_tcase(s, t);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
