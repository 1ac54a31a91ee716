/* Unit tests for the kube-scheduler-compatible metrics: number formatting
 * as client_golang writes it, the process collector, and the scheduler
 * series fed by hooks (metrics_sched.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/buf.h"
#include "server/metrics.h"
#include "server/metrics_sched.h"
#include "server/process_metrics.h"

START_TEST(format_like_go)
{
    /* What Go's strconv.FormatFloat(v, 'g', -1, 64) writes. */
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {7, "7"},
        {-3, "-3"},
        {2.5, "2.5"},
        {4.4375, "4.4375"},
        {20000, "20000"},
        {123456, "123456"},
        {1234567, "1.234567e+06"},
        {1e6, "1e+06"},
        {47693824, "4.7693824e+07"},
        {1795722265.33, "1.79572226533e+09"},
        {0.0001, "0.0001"},
        {0.00012, "0.00012"},
        {1e-05, "1e-05"},
        {1.5000000000000002e-05, "1.5000000000000002e-05"},
        {0.1, "0.1"},
        {18446744073709551615.0, "1.8446744073709552e+19"},
    };
    char buf[64];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ks_metrics_format_double(buf, sizeof buf, cases[i].v);
        ck_assert_msg(strcmp(buf, cases[i].want) == 0, "%.17g: got %s, want %s",
                      cases[i].v, buf, cases[i].want);
    }
    ks_metrics_format_double(buf, sizeof buf, 1.0 / 0.0);
    ck_assert_str_eq(buf, "+Inf");
}
END_TEST

/* The value of the unlabelled sample `name` in an exposition; -1 when
 * absent. */
static double sample(const char *text, const char *name)
{
    char pat[128];
    const char *p;
    snprintf(pat, sizeof pat, "\n%s ", name);
    p = strstr(text, pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

START_TEST(process_collector)
{
    static const char *const names[] = {
        "process_cpu_seconds_total", "process_max_fds", "process_open_fds",
        "process_resident_memory_bytes", "process_start_time_seconds",
        "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
        "process_network_receive_bytes_total",
        "process_network_transmit_bytes_total"};
    ks_buf_t b = {0};
    struct timeval now;
    char help[128];
    size_t i;
    double start;
    ck_assert_int_eq(ks_process_metrics_render(&b), 0);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(help, sizeof help, "# HELP %s ", names[i]);
        ck_assert_msg(strstr(b.data, help) != NULL, "%s: no HELP", names[i]);
        ck_assert_msg(sample(b.data, names[i]) >= 0, "%s: no sample",
                      names[i]);
    }
    ck_assert(strstr(b.data, "# TYPE process_cpu_seconds_total counter\n"));
    ck_assert(strstr(b.data, "# TYPE process_open_fds gauge\n"));
    ck_assert(strstr(b.data, "# TYPE process_network_receive_bytes_total "
                             "counter\n"));
    /* This process: started within the last hour, some memory, and at
     * least stdin, stdout and stderr open. */
    gettimeofday(&now, NULL);
    start = sample(b.data, "process_start_time_seconds");
    ck_assert(start > (double)now.tv_sec - 3600 &&
              start <= (double)now.tv_sec + 1);
    ck_assert(sample(b.data, "process_resident_memory_bytes") > 4096);
    ck_assert(sample(b.data, "process_virtual_memory_bytes") >=
              sample(b.data, "process_resident_memory_bytes"));
    ck_assert(sample(b.data, "process_open_fds") >= 3);
    ck_assert(sample(b.data, "process_max_fds") >=
              sample(b.data, "process_open_fds"));
    ck_assert(strstr(b.data, "# TYPE ksched_build_info gauge\n"
                             "ksched_build_info{version=\"") != NULL);
    ks_buf_free(&b);
}
END_TEST

START_TEST(sched_series_from_hooks)
{
    ks_metrics_t *r = ks_metrics_new();
    ks_sched_metrics_t *sm;
    size_t len;
    char *text;
    ck_assert_ptr_nonnull(r);
    sm = ks_sched_metrics_new(r);
    ck_assert_ptr_nonnull(sm);
    /* Moves by a cluster event are counted under the event's label once
     * it is handled; the others at once. */
    ks_sched_metrics_incoming(sm, "active", "PodAdd");
    ks_sched_metrics_incoming(sm, "backoff", NULL);
    ks_sched_metrics_incoming(sm, "active", NULL);
    ks_sched_metrics_incoming(sm, "active", NULL);
    ks_sched_metrics_event_done(sm, "NodeAdd");
    ks_sched_metrics_event_done(sm, "NodeUpdate"); /* moved nothing */
    /* Victims: one preemption of two, one PostFilter without victims. */
    ks_sched_metrics_victim(sm);
    ks_sched_metrics_victim(sm);
    ks_sched_metrics_postfilter_done(sm);
    ks_sched_metrics_postfilter_done(sm);
    ks_sched_metrics_scheduled(sm, 2, 0.5, 0);
    ks_sched_metrics_scheduled(sm, 3, 400, 1);
    ks_sched_metrics_algorithm(sm, 0.003);
    text = ks_metrics_render(r, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert(strstr(text, "scheduler_queue_incoming_pods_total{queue=\""
                           "active\",event=\"PodAdd\"} 1\n"));
    ck_assert(strstr(text, "scheduler_queue_incoming_pods_total{queue=\""
                           "backoff\",event=\"NodeAdd\"} 1\n"));
    ck_assert(strstr(text, "scheduler_queue_incoming_pods_total{queue=\""
                           "active\",event=\"NodeAdd\"} 2\n"));
    ck_assert(strstr(text, "event=\"NodeUpdate\"") == NULL);
    ck_assert(strstr(text, "scheduler_queue_incoming_entities_total{queue="
                           "\"active\",event=\"NodeAdd\",type=\"pod\"} 2\n"));
    ck_assert(strstr(text, "scheduler_preemption_victims_bucket{le=\"1\"} 0\n"
                           "scheduler_preemption_victims_bucket{le=\"2\"} 1\n"));
    ck_assert(strstr(text, "scheduler_preemption_victims_count 1\n"));
    ck_assert(strstr(text, "scheduler_preemption_victims_sum 2\n"));
    ck_assert(strstr(text, "scheduler_pod_scheduling_sli_duration_seconds_"
                           "count{attempts=\"2\"} 1\n"));
    ck_assert(strstr(text, "scheduler_pod_scheduling_duration_seconds_"
                           "count{attempts=\"2\"} 1\n"));
    ck_assert(strstr(text, "scheduler_pod_scheduling_attempts_bucket{le=\"1\"}"
                           " 0\nscheduler_pod_scheduling_attempts_bucket{le="
                           "\"2\"} 1\nscheduler_pod_scheduling_attempts_bucket"
                           "{le=\"4\"} 2\n"));
    ck_assert(strstr(text, "scheduler_pod_scheduled_after_flush_total 1\n"));
    ck_assert(strstr(text, "scheduler_scheduling_algorithm_duration_seconds_"
                           "bucket{le=\"0.004\"} 1\n"));
    /* v1.36's SLI buckets: 10 ms * 2^k, 20 of them. */
    ck_assert(strstr(text, "le=\"0.01\"}"));
    ck_assert(strstr(text, "scheduler_pod_scheduling_sli_duration_seconds_"
                           "bucket{attempts=\"2\",le=\"5242.88\"} 1\n"));
    free(text);
    ks_sched_metrics_free(sm);
    ks_metrics_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *t = tcase_create("metrics");
    SRunner *sr;
    int failed;
    tcase_add_test(t, format_like_go);
    tcase_add_test(t, process_collector);
    tcase_add_test(t, sched_series_from_hooks);
    suite_add_tcase(s, t);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
