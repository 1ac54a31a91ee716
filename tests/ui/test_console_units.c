/* Unit tests for the console's pure parts: the bounded table of attempts
 * (attempts.h), the rates ring and its latency window (rates.h), query
 * parameters and the events' text (console.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "server/attempts.h"
#include "server/console.h"
#include "server/rates.h"

START_TEST(attempts_ring_per_pod)
{
    ks_attempts_t *a = ks_attempts_new();
    const ks_attempt_t *out[KS_ATTEMPTS_PER_POD];
    uint64_t total;
    size_t n;
    int i;
    ck_assert_ptr_nonnull(a);
    for (i = 0; i < KS_ATTEMPTS_PER_POD + 2; i++) {
        char msg[32];
        snprintf(msg, sizeof msg, "try %d", i);
        ks_attempts_note_ep(a, KS_EP_FILTER, 0.25);
        ks_attempts_note_ep(a, KS_EP_FILTER, 0.25);
        ks_attempts_note_ep(a, KS_EP_BIND, 9); /* not kept */
        ck_assert_ptr_nonnull(ks_attempts_record(
            a, "default/p", 100 + i, 0.001, KS_ATTEMPT_UNSCHEDULABLE, 1,
            NULL, NULL, "default-scheduler", 3, 0, msg));
    }
    n = ks_attempts_get(a, "default/p", out, &total);
    ck_assert_uint_eq(total, KS_ATTEMPTS_PER_POD + 2);
    ck_assert_uint_eq(n, KS_ATTEMPTS_PER_POD);
    /* oldest first: the first two went round */
    ck_assert_str_eq(out[0]->message, "try 2");
    ck_assert_str_eq(out[n - 1]->message, "try 5");
    ck_assert_double_eq_tol(out[0]->ep_seconds[1], 0.5, 1e-6);
    ck_assert(out[0]->ep_seconds[0] < 0); /* PreFilter not run */
    ck_assert_ptr_eq(ks_attempts_last(a, "default/p"), out[n - 1]);
    ck_assert_uint_eq(ks_attempts_get(a, "default/none", out, &total), 0);
    ck_assert_uint_eq(total, 0);
    ks_attempts_free(a);
}
END_TEST

START_TEST(attempts_table_bounded_fifo)
{
    ks_attempts_t *a = ks_attempts_new();
    const ks_attempt_t *out[KS_ATTEMPTS_PER_POD];
    uint64_t total;
    char key[64];
    int i;
    for (i = 0; i < KS_ATTEMPTS_PODS + 10; i++) {
        snprintf(key, sizeof key, "ns/pod-%d", i);
        ck_assert_ptr_nonnull(ks_attempts_record(a, key, i, 0.001,
                                                 KS_ATTEMPT_BOUND, 1, NULL,
                                                 NULL, NULL, 1, 1, NULL));
    }
    /* the first ten pods made way for the last ten */
    ck_assert_uint_eq(a->index.count, KS_ATTEMPTS_PODS);
    ck_assert_uint_eq(ks_attempts_get(a, "ns/pod-9", out, &total), 0);
    ck_assert_uint_eq(ks_attempts_get(a, "ns/pod-10", out, &total), 1);
    snprintf(key, sizeof key, "ns/pod-%d", KS_ATTEMPTS_PODS + 9);
    ck_assert_uint_eq(ks_attempts_get(a, key, out, &total), 1);
    ks_attempts_free(a);
}
END_TEST

START_TEST(attempts_message_cut_on_utf8)
{
    ks_attempts_t *a = ks_attempts_new();
    char msg[KS_ATTEMPT_MSG * 2];
    ks_attempt_t *t;
    size_t i;
    /* "é" (2 bytes) over and over: the cut may not split one */
    for (i = 0; i + 2 < sizeof msg; i += 2)
        memcpy(msg + i, "\xc3\xa9", 2);
    msg[i] = '\0';
    t = ks_attempts_record(a, "a/b", 1, 0.1, KS_ATTEMPT_ERROR, 1, NULL, NULL,
                           NULL, 0, 0, msg);
    ck_assert_uint_lt(strlen(t->message), KS_ATTEMPT_MSG);
    ck_assert_str_eq(t->message + strlen(t->message) - 3, "...");
    ck_assert_uint_eq((strlen(t->message) - 3) % 2, 0);
    ks_attempts_free(a);
}
END_TEST

START_TEST(attempts_quantiles)
{
    uint64_t lat[KS_ATTEMPT_LAT_BUCKETS] = {0};
    ck_assert_double_eq(ks_attempts_quantile(lat, 0.5), 0);
    lat[3] = 90; /* [8, 16) us */
    lat[10] = 10; /* [1024, 2048) us */
    ck_assert_double_eq_tol(ks_attempts_quantile(lat, 0.5), 16e-6, 1e-12);
    ck_assert_double_eq_tol(ks_attempts_quantile(lat, 0.9), 16e-6, 1e-12);
    ck_assert_double_eq_tol(ks_attempts_quantile(lat, 0.99), 2048e-6,
                            1e-12);
}
END_TEST

static void read_counts(void *ud, ks_rate_sample_t *s)
{
    int *calls = ud;
    s->scheduled = (uint64_t)++*calls;
    s->active = 7;
}

START_TEST(rates_ring_and_window)
{
    ks_attempts_t *a = ks_attempts_new();
    ks_rates_t *r = calloc(1, sizeof *r);
    int calls = 0, i;
    r->read = read_counts;
    r->ud = &calls;
    r->attempts = a;
    /* one slow attempt, then KS_RATES_WINDOW seconds of fast ones: the
     * slow one leaves the window */
    ks_attempts_record(a, "a/slow", 0, 1.0, KS_ATTEMPT_BOUND, 1, NULL, NULL,
                       NULL, 0, 0, NULL);
    ks_rates_sample(r, 1);
    ck_assert_float_gt(ks_rates_at(r, 0)->p99, 0.9f);
    for (i = 0; i < KS_RATES_WINDOW; i++) {
        ks_attempts_record(a, "a/fast", 0, 10e-6, KS_ATTEMPT_BOUND, 1, NULL,
                           NULL, NULL, 0, 0, NULL);
        ks_rates_sample(r, 2 + i);
    }
    ck_assert_float_lt(ks_rates_at(r, r->n - 1)->p99, 1e-3f);
    for (i = 0; i < KS_RATES_SAMPLES; i++)
        ks_rates_sample(r, 100 + i);
    ck_assert_uint_eq(r->n, KS_RATES_SAMPLES);
    /* oldest first after wrapping */
    ck_assert_double_eq(ks_rates_at(r, 0)->unix_time, 100);
    ck_assert_double_eq(ks_rates_at(r, r->n - 1)->unix_time,
                        100 + KS_RATES_SAMPLES - 1);
    ck_assert_uint_eq(ks_rates_at(r, r->n - 1)->active, 7);
    ck_assert_uint_eq(ks_rates_at(r, r->n - 1)->scheduled, (uint64_t)calls);
    free(r);
    ks_attempts_free(a);
}
END_TEST

START_TEST(query_params)
{
    char v[16];
    ck_assert_int_eq(ks_console_query("limit=5&fields=labels%2Cpods", "fields",
                                      v, sizeof v),
                     1);
    ck_assert_str_eq(v, "labels,pods");
    ck_assert_int_eq(ks_console_query("a=1&limit=5", "limit", v, sizeof v), 1);
    ck_assert_str_eq(v, "5");
    ck_assert_int_eq(ks_console_query("limits=5", "limit", v, sizeof v), 0);
    ck_assert_int_eq(ks_console_query("filter=a+b", "filter", v, sizeof v), 1);
    ck_assert_str_eq(v, "a b");
    ck_assert_int_eq(ks_console_query("flag", "flag", v, sizeof v), 1);
    ck_assert_str_eq(v, "");
    ck_assert_int_eq(ks_console_query("x=0123456789abcdefXYZ", "x", v,
                                      sizeof v),
                     0); /* too long */
    ck_assert_int_eq(ks_console_query("", "x", v, sizeof v), 0);
}
END_TEST

START_TEST(event_text)
{
    char b[128];
    ks_console_event_text(KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT,
                          b, sizeof b);
    ck_assert_str_eq(b, "Node/Add|UpdateNodeTaint");
    ks_console_event_text(KS_RES_ALL, KS_ACT_ALL, b, sizeof b);
    ck_assert_str_eq(b, "*/*");
    ks_console_event_text(KS_RES_POD | KS_RES_OBJECT, KS_ACT_DELETE, b,
                          sizeof b);
    ck_assert_str_eq(b, "Pod|Object/Delete");
    ks_console_event_text(KS_RES_NODE, KS_ACT_ALL, b, 8); /* cut, ended */
    ck_assert_uint_lt(strlen(b), 8);
}
END_TEST

START_TEST(json_strings)
{
    json_t *j = ks_console_json_str("ok \xc3\xa9");
    ck_assert_str_eq(json_string_value(j), "ok \xc3\xa9");
    json_decref(j);
    j = ks_console_json_str("bad \xff byte");
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(j), "bad \\xff byte");
    json_decref(j);
    j = ks_console_json_str(NULL);
    ck_assert(json_is_null(j));
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("console");
    TCase *tc = tcase_create("attempts");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, attempts_ring_per_pod);
    tcase_add_test(tc, attempts_table_bounded_fifo);
    tcase_add_test(tc, attempts_message_cut_on_utf8);
    tcase_add_test(tc, attempts_quantiles);
    suite_add_tcase(s, tc);
    tc = tcase_create("rates");
    tcase_add_test(tc, rates_ring_and_window);
    suite_add_tcase(s, tc);
    tc = tcase_create("text");
    tcase_add_test(tc, query_params);
    tcase_add_test(tc, event_text);
    tcase_add_test(tc, json_strings);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
