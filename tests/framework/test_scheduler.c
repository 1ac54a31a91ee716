/*
 * The scheduler with the probe plugins: queue order and backoff on an
 * injected clock, Reserve failure, Permit wait/allow/reject/timeout (the
 * timeout on a real libuv loop), Bind chains, PostFilter and nominated pods.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "base/intern.h"
#include "framework/generation.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define PROFILE                                                                \
    PROFILE_HEAD                                                               \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled:\n"                                                        \
    "      - name: '*'\n"

#define QSORT_DEFAULT                                                          \
    "    queueSort:\n"                                                         \
    "      enabled:\n"                                                         \
    "      - name: PrioritySort\n"

#define NODES3                                                                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"                 \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"           \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"                 \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"           \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"                 \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

/* A pending pod with a priority. */
#define POD(name, prio)                                                        \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                   \
    ", namespace: default}\n"                                                  \
    "spec:\n  priority: " #prio "\n  containers: [{name: c, image: x}]\n"

typedef struct st {
    tl_world_t w;
    ks_generation_t *gen;
    ks_scheduler_t *s;
    char *trace;
    int64_t now;
    char *yaml; /* the profile used, trace path substituted */
    /* observed */
    char cycles[1024];
    char bound[1024];
    char last_failure[2048];
    int n_failed;
    int64_t fail_times[16];
    int detach_on_failure;
    int time_plugins;     /* observe plugin_duration */
    int bind_samples;     /* plugin_duration calls at Bind (loop thread) */
} st_t;

static st_t S;

static void on_cycle(void *ud, const ks_cycle_result_t *r)
{
    (void)ud;
    snprintf(S.cycles + strlen(S.cycles), sizeof S.cycles - strlen(S.cycles),
             "%s%s", S.cycles[0] ? " " : "", r->pod->name);
}

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    snprintf(S.bound + strlen(S.bound), sizeof S.bound - strlen(S.bound),
             "%s->%s;", pod->name, node);
}

static void on_failed(void *ud, const ks_pod_t *pod, const char *msg)
{
    (void)ud;
    (void)pod;
    snprintf(S.last_failure, sizeof S.last_failure, "%s", msg);
    if (S.n_failed < 16)
        S.fail_times[S.n_failed] = ks_scheduler_now(S.s);
    S.n_failed++;
    if (S.detach_on_failure)
        ks_scheduler_detach_loop(S.s);
}

static void on_plugin_duration(void *ud, const char *plugin, int ext_point,
                               ks_code_t code, double seconds)
{
    (void)ud;
    (void)plugin;
    (void)seconds;
    if (ext_point == KS_EP_BIND && code == KS_SUCCESS)
        S.bind_samples++; /* Bind runs on the loop thread only */
}

static int64_t fake_clock(void *ud)
{
    return *(int64_t *)ud;
}

static void setup(void)
{
    memset(&S, 0, sizeof S);
    S.trace = tl_trace_new();
}

static void teardown(void)
{
    ks_scheduler_free(S.s);
    ks_generation_unref(S.gen);
    tl_world_free(&S.w);
    unlink(S.trace);
    free(S.trace);
    free(S.yaml);
}

/* A generation from PROFILE + plugins + pluginConfig, a cluster of the
 * three nodes plus `pods`, and a scheduler. With `clock`, the scheduler
 * reads S.now. Pending pods are not added yet (see add_pods). */
static void sched_build(const char *plugins, const char *config,
                        const char *pods, int clock)
{
    size_t n = strlen(PROFILE) + strlen(plugins) + strlen(config) + 32;
    char *yaml = malloc(n), *full;
    char *cluster = malloc(strlen(NODES3) + strlen(pods) + 1);
    ks_sched_opts_t so;

    snprintf(yaml, n, "%s%s  pluginConfig:\n%s", PROFILE, plugins, config);
    full = tl_subst(yaml, "T", S.trace);
    S.gen = tl_generation(full);

    strcpy(cluster, NODES3);
    strcat(cluster, pods);
    tl_world_init(&S.w, cluster);

    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.cycle = on_cycle;
    so.obs.bound = on_bound;
    so.obs.failed = on_failed;
    if (S.time_plugins)
        so.obs.plugin_duration = on_plugin_duration;
    S.s = ks_scheduler_new(S.gen, S.w.cache, &so);
    ck_assert_ptr_nonnull(S.s);
    if (clock) {
        S.now = 1000;
        ks_scheduler_set_clock(S.s, fake_clock, &S.now);
    }
    free(cluster);
    S.yaml = full;
    free(yaml);
}

/* Hand every pending pod of the manifest to the scheduler, in order; with
 * the fake clock each one is added 1 ms after the previous one. */
static void add_pods(void)
{
    size_t i;
    for (i = 0; i < S.w.m.n_pods; i++) {
        ks_pod_t *pod = S.w.m.pods[i];
        if (pod == NULL)
            continue;
        S.w.m.pods[i] = NULL;
        ck_assert_int_eq(ks_scheduler_add_pod(S.s, pod), 0);
        S.now++;
    }
}

static char *trace_text(void)
{
    return tl_read_file(S.trace);
}

static ks_framework_t *profile_fw(void)
{
    ks_framework_t *fw = ks_generation_profile(S.gen, "default-scheduler");
    ck_assert_ptr_nonnull(fw);
    return fw;
}

#define ASSERT_LINE(text, line)                                                \
    ck_assert_msg(tl_line_index((text), (line)) >= 0, "no line \"%s\" in:\n%s", \
                  (line), (text))

/* --- queue ------------------------------------------------------------------------ */

static int never_less(void *ud, const ks_queued_pod_t *a,
                      const ks_queued_pod_t *b)
{
    (void)ud;
    (void)a;
    (void)b;
    return 0;
}

/* Backoff after n attempts: 1 s doubling, capped at 10 s. */
static const struct {
    int attempts;
    int64_t ms;
} backoff_cases[] = {
    {1, 1000}, {2, 2000}, {3, 4000}, {4, 8000},
    {5, 10000}, {6, 10000}, {1000, 10000},
};

START_TEST(test_backoff_durations)
{
    ks_queue_t *q = ks_queue_new(never_less, NULL, 1000, 10000);
    ck_assert_int_eq(ks_queue_backoff_ms(q, backoff_cases[_i].attempts),
                     backoff_cases[_i].ms);
    ks_queue_free(q);
}
END_TEST

START_TEST(test_backoff_on_the_clock)
{
    static const int64_t expect[] = {1000, 2000, 4000, 8000, 16000, 26000,
                                     36000};
    size_t i;
    sched_build(QSORT_DEFAULT "    filter:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      filter: Error\n"),
                POD("p1", 0), 1);
    S.now = 1000;
    ks_scheduler_add_pod(S.s, tl_world_take_pod(&S.w, "p1"));
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_int_eq(S.n_failed, 1);
    ck_assert_msg(strstr(S.last_failure, "\"Probe1\"") != NULL &&
                      strstr(S.last_failure, ": node(s) rejected by Probe1"),
                  "%s", S.last_failure);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, KS_Q_BACKOFF), 1);
    /* Each retry comes exactly when the backoff (1 s doubling, 10 s cap)
     * measured from the last failure expires, and not 1 ms earlier. */
    for (i = 1; i < sizeof expect / sizeof expect[0]; i++) {
        S.now = expect[i] - 1;
        ck_assert_int_eq(ks_scheduler_step(S.s), 0);
        ck_assert_int_eq(S.n_failed, (int)i);
        S.now = expect[i];
        ck_assert_int_eq(ks_scheduler_step(S.s), 1);
        ck_assert_int_eq(S.n_failed, (int)i + 1);
        ck_assert_int_eq(S.fail_times[i], expect[i]);
    }
    ck_assert_uint_eq(ks_scheduler_stats(S.s).errors, 7);
}
END_TEST

START_TEST(test_queue_order_priority_sort)
{
    sched_build(QSORT_DEFAULT BIND_DEFAULT, PROBE_CFG("Probe1", ""),
                POD("a", 10) POD("b", 100) POD("c", 50) POD("d", 100), 1);
    add_pods();
    ks_scheduler_run_batch(S.s);
    /* Higher priority first; equal priority by queue time. */
    ck_assert_str_eq(S.cycles, "b d c a");
    ck_assert_uint_eq(ks_scheduler_stats(S.s).bound, 4);
}
END_TEST

START_TEST(test_queue_order_other_sort)
{
    sched_build("    queueSort:\n"
                "      enabled:\n"
                "      - name: FifoSort\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", ""),
                POD("a", 10) POD("b", 100) POD("c", 50) POD("d", 100), 1);
    add_pods();
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.cycles, "a b c d");
}
END_TEST

/* --- Reserve ------------------------------------------------------------------------ */

START_TEST(test_reserve_failure_in_scheduler)
{
    char *t;
    sched_build(QSORT_DEFAULT "    reserve:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "      - name: Probe2\n"
                              "      - name: Probe3\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "") PROBE_CFG("Probe2", "")
                    PROBE_CFG("Probe3", "      reserve: Error\n"),
                POD("p1", 0), 1);
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_str_eq(S.bound, "");
    ck_assert_str_eq(S.last_failure, "running Reserve plugin \"Probe3\": "
                                     "Reserve of Probe3 failed");
    t = trace_text();
    /* Every Reserve plugin is unreserved, the failing one too, in reverse
     * order (deterministic ties: n1). */
    ck_assert_str_eq(t, "Probe1 Create\nProbe2 Create\nProbe3 Create\n"
                        "Probe1 Reserve p1 n1\nProbe2 Reserve p1 n1\n"
                        "Probe3 Reserve p1 n1\n"
                        "Probe3 Unreserve p1 n1\nProbe2 Unreserve p1 n1\n"
                        "Probe1 Unreserve p1 n1\n");
    free(t);
    /* The assumed pod was forgotten: the node is empty again. */
    ck_assert_uint_eq(ks_cache_num_pods(S.w.cache), 0);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, 0), 1);
}
END_TEST

/* --- Permit ------------------------------------------------------------------------- */

START_TEST(test_permit_group_allows_waiting)
{
    char *t;
    sched_build(QSORT_DEFAULT "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permitGroup: 2\n"
                                    "      permitTimeoutMs: 60000\n"),
                POD("g1", 5) POD("g2", 5), 1);
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1); /* g1 waits */
    ck_assert_str_eq(S.bound, "");
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 1);
    /* g1 is assumed while it waits: it holds its node. */
    ck_assert_int_eq(ks_cache_is_assumed(S.w.cache,
                                         ks_intern_str(ks_intern_global(),
                                                       "default/g1")),
                     1);
    ks_scheduler_run_batch(S.s); /* g2 arrives and lets g1 go */
    ck_assert_str_eq(S.bound, "g1->n1;g2->n1;");
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 0);
    ck_assert_uint_eq(ks_scheduler_stats(S.s).waiting, 1);
    t = trace_text();
    ASSERT_LINE(t, "Probe1 Permit g1 n1");
    ASSERT_LINE(t, "Probe1 Permit g2 n1");
    ck_assert_int_lt(tl_line_index(t, "Probe1 Permit g2 n1"),
                     tl_line_index(t, "Probe1 Allow g1"));
    free(t);
}
END_TEST

START_TEST(test_permit_needs_every_waiting_plugin)
{
    ks_framework_t *fw;
    ks_waiting_pod_t *wp;
    const ks_host_api_t *api = ks_host_api();
    ks_handle_t *h;
    sched_build(QSORT_DEFAULT "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "      - name: Probe2\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permit: Wait\n")
                    PROBE_CFG("Probe2", "      permit: Wait\n"),
                POD("p1", 0), 1);
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    fw = profile_fw();
    h = (ks_handle_t *)&fw->points[KS_EP_PERMIT][0].inst->handle;
    ck_assert_ptr_null(api->waiting_pod_get(h, "default/nope"));
    wp = api->waiting_pod_get(h, "default/p1");
    ck_assert_ptr_nonnull(wp);
    ck_assert_str_eq(api->waiting_pod_pod(wp)->name, "p1");
    api->waiting_pod_allow(wp, "Probe1");
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, ""); /* Probe2 still waits */
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 1);
    wp = api->waiting_pod_get(h, "default/p1");
    ck_assert_ptr_nonnull(wp);
    api->waiting_pod_allow(wp, "Probe2");
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, "p1->n1;");
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 0);
}
END_TEST

START_TEST(test_permit_reject_while_waiting)
{
    ks_framework_t *fw;
    ks_waiting_pod_t *wp;
    const ks_host_api_t *api = ks_host_api();
    char *t;
    sched_build(QSORT_DEFAULT "    reserve:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permit: Wait\n"),
                POD("p1", 0), 1);
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    fw = profile_fw();
    wp = api->waiting_pod_get(
        (ks_handle_t *)&fw->points[KS_EP_PERMIT][0].inst->handle, "default/p1");
    ck_assert_ptr_nonnull(wp);
    api->waiting_pod_reject(wp, "Probe1", "rejected by the test");
    ck_assert_int_eq(ks_scheduler_step(S.s), 1); /* the binding cycle */
    ck_assert_str_eq(S.bound, "");
    ck_assert_str_eq(S.last_failure, "rejected by the test");
    ck_assert_uint_eq(ks_cache_num_pods(S.w.cache), 0);
    t = trace_text();
    ASSERT_LINE(t, "Probe1 Unreserve p1 n1");
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 PreBind"), 0);
    free(t);
}
END_TEST

START_TEST(test_permit_reject_in_cycle)
{
    char *t;
    sched_build(QSORT_DEFAULT "    reserve:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permit: Unschedulable\n"
                                    "      permitReason: not now\n"),
                POD("p1", 0), 1);
    add_pods();
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, "");
    ck_assert_int_eq(S.n_failed, 1);
    ck_assert_str_eq(S.last_failure, "not now");
    t = trace_text();
    ASSERT_LINE(t, "Probe1 Unreserve p1 n1");
    free(t);
    ck_assert_uint_eq(ks_scheduler_stats(S.s).unschedulable, 1);
}
END_TEST

START_TEST(test_permit_timeout_batch_clock)
{
    sched_build(QSORT_DEFAULT "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permitGroup: 2\n"
                                    "      permitTimeoutMs: 50\n"),
                POD("p1", 0), 1);
    add_pods();
    S.now = 1000;
    ks_scheduler_run_batch(S.s); /* waits; the clock is ours to move */
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 1);
    S.now = 1049;
    ck_assert_int_eq(ks_scheduler_step(S.s), 0);
    ck_assert_int_eq(S.n_failed, 0);
    S.now = 1050;
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_int_eq(S.n_failed, 1);
    ck_assert_msg(strncmp(S.last_failure,
                          "rejected due to timeout after waiting ", 38) == 0,
                  "%s", S.last_failure);
    ck_assert_msg(strstr(S.last_failure, " at plugin Probe1") != NULL, "%s",
                  S.last_failure);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 0);
    ck_assert_uint_eq(ks_cache_num_pods(S.w.cache), 0);
}
END_TEST

/* The Permit timeout on a real libuv loop, timed by the injected clock:
 * the loop's timer wakes the scheduler, which rejects the pod only once
 * the clock has reached the wait's start plus permitTimeoutMs. */
START_TEST(test_permit_timeout_real_loop)
{
    uv_loop_t loop;
    int i;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    sched_build(QSORT_DEFAULT "    reserve:\n"
                              "      enabled:\n"
                              "      - name: Probe2\n"
                              "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permit: Wait\n"
                                    "      permitTimeoutMs: 50\n")
                    PROBE_CFG("Probe2", ""),
                POD("p1", 0), 1);
    S.detach_on_failure = 1;
    ck_assert_int_eq(ks_scheduler_attach_loop(S.s, &loop), 0);
    add_pods();
    S.now = 1000;
    /* The cycle runs from the loop's idle handle: p1 waits at Permit. */
    for (i = 0; i < 100 && ks_scheduler_pending(S.s, -1) == 0; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 1);
    ck_assert_int_eq(S.n_failed, 0);
    /* 1 ms short of the timeout: the timer fires (after 50 ms of the
     * loop's time), the scheduler runs and the pod keeps waiting. */
    S.now = 1049;
    ck_assert_int_ne(uv_run(&loop, UV_RUN_ONCE), 0);
    for (i = 0; i < 10; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    ck_assert_int_eq(S.n_failed, 0);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 1);
    ck_assert_str_eq(S.bound, "");
    /* At the timeout: runs until the rejection detaches the scheduler. */
    S.now = 1050;
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(S.n_failed, 1);
    ck_assert_int_eq(S.fail_times[0], 1050);
    ck_assert_msg(strncmp(S.last_failure,
                          "rejected due to timeout after waiting ", 38) == 0,
                  "%s", S.last_failure);
    ck_assert_msg(strstr(S.last_failure, " at plugin Probe1") != NULL, "%s",
                  S.last_failure);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 0);
    ck_assert_str_eq(S.bound, "");
    {
        char *t = trace_text();
        ASSERT_LINE(t, "Probe2 Unreserve p1 n1");
        free(t);
    }
    ks_scheduler_free(S.s);
    S.s = NULL;
    /* Every handle the scheduler opened is closed. */
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* Plugin timing is sampled in 10% of the cycles from the env's random
 * numbers. With a fixed seed (not the time(NULL) one the scheduler starts
 * with) the sampled cycles are exactly those the generator picks: one draw
 * per scheduling cycle, deterministic ties drawing nothing. */
START_TEST(test_plugin_sampling_fixed_seed)
{
    enum { N = 1000 };
    const uint64_t seeds[] = {1, 0x5eed, 0x9e3779b97f4a7c15ull};
    size_t k;
    for (k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        size_t cap = (size_t)N * 128, len = 0;
        char *pods = malloc(cap);
        ks_fw_env_t model;
        int i, expect = 0;
        ck_assert_ptr_nonnull(pods);
        pods[0] = '\0';
        for (i = 0; i < N && len < cap; i++)
            len += (size_t)snprintf(
                pods + len, cap - len,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: s%d, "
                "namespace: default}\nspec:\n  containers: [{name: c, "
                "image: x}]\n",
                i);
        if (S.s != NULL) { /* the previous seed's world */
            teardown();
            setup();
        }
        S.time_plugins = 1;
        sched_build(QSORT_DEFAULT "    filter:\n"
                                  "      enabled:\n"
                                  "      - name: Probe1\n" BIND_DEFAULT,
                    PROBE_CFG("Probe1", ""), pods, 1);
        free(pods);
        ks_scheduler_set_seed(S.s, seeds[k]);
        memset(&model, 0, sizeof model);
        model.rng = seeds[k];
        for (i = 0; i < N; i++)
            expect += (uint32_t)(ks_fw_env_rand(&model) >> 32) % 100 < 10;
        add_pods();
        ks_scheduler_run_batch(S.s);
        ck_assert_uint_eq(ks_scheduler_stats(S.s).bound, N);
        ck_assert_uint_eq(ks_scheduler_stats(S.s).attempts, N);
        ck_assert_int_eq(S.bind_samples, expect);
        /* About 10%: binomial(1000, 0.1) has sd 9.5. */
        ck_assert_int_ge(expect, 50);
        ck_assert_int_le(expect, 150);
    }
}
END_TEST

START_TEST(test_permit_allow_real_loop)
{
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    sched_build(QSORT_DEFAULT "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permitGroup: 2\n"
                                    "      permitTimeoutMs: 5000\n"),
                POD("g1", 0) POD("g2", 0), 0);
    ck_assert_int_eq(ks_scheduler_attach_loop(S.s, &loop), 0);
    add_pods();
    /* Nothing is left to do once both are bound: the idle handle stops and
     * no timer is armed, so the loop returns. */
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_str_eq(S.bound, "g1->n1;g2->n1;");
    ks_scheduler_detach_loop(S.s);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_waiting_pod_keeps_its_generation)
{
    ks_framework_t *old_fw;
    ks_generation_t *g2;
    ks_waiting_pod_t *wp;
    const ks_host_api_t *api = ks_host_api();
    int live_one, n_plugins;
    char *t;
    sched_build(QSORT_DEFAULT "    permit:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      permit: Wait\n"),
                POD("p1", 0) POD("p2", 0), 1);
    n_plugins = (int)S.gen->reg->n;
    live_one = ks_plugin_live_count();
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1); /* p1 waits under gen 1 */
    old_fw = profile_fw();

    /* Reload: the new generation loads its own copies... */
    g2 = tl_generation(S.yaml);
    ck_assert_int_eq(ks_plugin_live_count(), live_one + n_plugins);
    ks_scheduler_set_generation(S.s, g2);
    ks_generation_unref(S.gen); /* the test's reference on gen 1 */
    S.gen = ks_generation_ref(g2);
    /* ...and gen 1 stays loaded while p1 waits in it. */
    ck_assert_int_eq(ks_plugin_live_count(), live_one + n_plugins);
    ck_assert_ptr_ne(profile_fw(), old_fw);

    /* p2 is scheduled by gen 2 and waits there too. */
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, -1), 2);

    /* Allowing p1 finishes its binding cycle with gen 1's plugins; the
     * last holder gone, gen 1 is freed and its copies unloaded. */
    wp = api->waiting_pod_get(
        (ks_handle_t *)&old_fw->points[KS_EP_PERMIT][0].inst->handle,
        "default/p1");
    ck_assert_ptr_nonnull(wp);
    api->waiting_pod_allow(wp, "Probe1");
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_str_eq(S.bound, "p1->n1;");
    ck_assert_int_eq(ks_plugin_live_count(), live_one);

    wp = api->waiting_pod_get(
        (ks_handle_t *)&profile_fw()->points[KS_EP_PERMIT][0].inst->handle,
        "default/p2");
    ck_assert_ptr_nonnull(wp);
    api->waiting_pod_allow(wp, "Probe1");
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, "p1->n1;p2->n1;");
    t = trace_text();
    ck_assert_int_eq(tl_count_prefix(t, "Probe1 Create"), 2);
    free(t);
}
END_TEST

/* A scheduler that borrows the generation (shadow mode, an explain cycle)
 * leaves its plugins bound to the scheduler that owns it, when it is made,
 * when it takes a new generation (a reload) and after each of its tries;
 * the owner schedules on. */
static int borrowed_tried;
static void on_borrowed_try(void *ud, const ks_cycle_result_t *r)
{
    (void)ud;
    borrowed_tried += r->selected != NULL;
}

START_TEST(test_borrowed_generation_keeps_the_owner_bound)
{
    ks_sched_opts_t so;
    ks_scheduler_t *b;
    ks_fw_env_t *owner_env;
    ks_error_t err;
    sched_build(QSORT_DEFAULT BIND_DEFAULT, "", POD("p1", 0) POD("p2", 0), 0);
    owner_env = profile_fw()->env;
    ck_assert_ptr_nonnull(owner_env);
    memset(&so, 0, sizeof so);
    so.no_post_filter = 1;
    so.borrows_generation = 1;
    b = ks_scheduler_new(S.gen, S.w.cache, &so);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_eq(profile_fw()->env, owner_env);
    ks_scheduler_set_generation(b, ks_generation_ref(S.gen));
    ck_assert_ptr_eq(profile_fw()->env, owner_env);
    ks_error_init(&err);
    borrowed_tried = 0;
    ck_assert_int_eq(
        ks_scheduler_try(b, S.w.m.pods[0], on_borrowed_try, NULL, &err), 0);
    ck_assert_int_eq(borrowed_tried, 1);
    ck_assert_ptr_eq(profile_fw()->env, owner_env);
    add_pods();
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, "p1->n1;p2->n1;");
    ks_scheduler_free(b);
    ck_assert_ptr_eq(profile_fw()->env, owner_env);
}
END_TEST

/* --- Bind ------------------------------------------------------------------------- */

START_TEST(test_bind_skip_chain_in_scheduler)
{
    char *t;
    sched_build(QSORT_DEFAULT "    bind:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "      - name: Probe2\n"
                              "    postBind:\n"
                              "      enabled:\n"
                              "      - name: Probe3\n",
                PROBE_CFG("Probe1", "      bind: Skip\n")
                    PROBE_CFG("Probe2", "") PROBE_CFG("Probe3", ""),
                POD("p1", 0), 1);
    add_pods();
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.bound, "p1->n1;");
    t = trace_text();
    ck_assert_str_eq(t, "Probe1 Create\nProbe2 Create\nProbe3 Create\n"
                        "Probe1 Bind p1 n1\nProbe2 Bind p1 n1\n"
                        "Probe3 PostBind p1 n1\n");
    free(t);
    ck_assert_int_eq(ks_cache_is_assumed(S.w.cache,
                                         ks_intern_str(ks_intern_global(),
                                                       "default/p1")),
                     0);
    ck_assert_ptr_nonnull(ks_cache_get_pod(
        S.w.cache, ks_intern_str(ks_intern_global(), "default/p1")));
}
END_TEST

START_TEST(test_bind_nobody_binds)
{
    char *t;
    sched_build(QSORT_DEFAULT "    reserve:\n"
                              "      enabled:\n"
                              "      - name: Probe2\n"
                              "    bind:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n",
                PROBE_CFG("Probe1", "      bind: Skip\n") PROBE_CFG("Probe2", ""),
                POD("p1", 0), 1);
    add_pods();
    ck_assert_int_eq(ks_scheduler_step(S.s), 1);
    ck_assert_str_eq(S.bound, "");
    ck_assert_str_eq(S.last_failure, "bind status: Skip, no Bind plugin bound the pod");
    t = trace_text();
    ASSERT_LINE(t, "Probe2 Unreserve p1 n1");
    free(t);
    ck_assert_uint_eq(ks_cache_num_pods(S.w.cache), 0);
}
END_TEST

/* --- PostFilter, nominated pods ----------------------------------------------------- */

typedef struct try_out {
    char message[2048];
    const char *nominated;
    uint32_t n_feasible;
} try_out_t;

static void on_try(void *ud, const ks_cycle_result_t *r)
{
    try_out_t *o = ud;
    snprintf(o->message, sizeof o->message, "%s", r->message ? r->message : "");
    o->nominated = r->nominated;
    o->n_feasible = r->n_feasible;
}

START_TEST(test_post_filter_in_cycle)
{
    try_out_t o;
    ks_error_t err = {0};
    ks_pod_t *pod;
    char *t;
    sched_build(QSORT_DEFAULT "    filter:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n"
                              "      - name: Probe2\n"
                              "    postFilter:\n"
                              "      enabled:\n"
                              "      - name: Probe3\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      filter: Unschedulable\n"
                                    "      filterReason: node(s) had reason a\n"
                                    "      filterNodes: [n1]\n")
                    PROBE_CFG("Probe2",
                              "      filter: UnschedulableAndUnresolvable\n"
                              "      filterReason: node(s) had reason b\n"
                              "      filterNodes: [n2, n3]\n")
                        PROBE_CFG("Probe3", "      postFilterNominate: n1\n"),
                POD("p1", 0), 1);
    pod = tl_world_pod(&S.w, "p1");
    ck_assert_int_eq(ks_scheduler_try(S.s, pod, on_try, &o, &err), 0);
    ck_assert_str_eq(o.message,
                     "0/3 nodes are available: 1 node(s) had reason a, 2 "
                     "node(s) had reason b.");
    ck_assert_uint_eq(o.n_feasible, 0);
    ck_assert_ptr_eq(o.nominated, ks_intern_str(ks_intern_global(), "n1"));
    ck_assert_str_eq(pod->nominated_node_name, "n1");
    t = trace_text();
    ASSERT_LINE(t, "Probe3 PostFilter p1 n1=Unschedulable "
                   "n2=UnschedulableAndUnresolvable "
                   "n3=UnschedulableAndUnresolvable");
    free(t);
    /* The nomination is visible to later cycles through the host API. */
    {
        const ks_pod_t *noms[4];
        ks_framework_t *fw = profile_fw();
        ks_handle_t *h = (ks_handle_t *)&fw->insts[0]->handle;
        ck_assert_uint_eq(ks_host_api()->nominated_pods(h, "n1", noms, 4), 1);
        ck_assert_ptr_eq(noms[0], pod);
        ck_assert_uint_eq(ks_host_api()->nominated_pods(h, "n2", noms, 4), 0);
    }
}
END_TEST

/* The statuses of one cycle do not leak into the next. p2, of a second
 * profile whose PreFilter keeps n1 alone, is rejected there: n2 and n3
 * have no status in its cycle, PostFilter reads them as absent and the
 * FitError counts n1 only. p2 runs first alone, then after p1, whose
 * Filter rejects every node (statuses set one by one), then after p3,
 * of a third profile whose PreFilter fails (every status set at once). */
#define SECOND_PROFILE                                                         \
    "- schedulerName: second\n"                                                \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled:\n"                                                        \
    "      - name: '*'\n" QSORT_DEFAULT "    preFilter:\n"                     \
    "      enabled:\n"                                                         \
    "      - name: Probe1\n"                                                   \
    "    filter:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: Probe2\n"                                                   \
    "    postFilter:\n"                                                        \
    "      enabled:\n"                                                         \
    "      - name: Probe3\n" BIND_DEFAULT "  pluginConfig:\n"                  \
    PROBE_CFG("Probe1", "      preFilterNodes: [n1]\n")                        \
    PROBE_CFG("Probe2", "      filter: Unschedulable\n"                         \
                        "      filterReason: node(s) had reason b\n")          \
    PROBE_CFG("Probe3", "")

#define THIRD_PROFILE                                                          \
    "- schedulerName: third\n"                                                 \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled:\n"                                                        \
    "      - name: '*'\n" QSORT_DEFAULT "    preFilter:\n"                     \
    "      enabled:\n"                                                         \
    "      - name: Probe1\n" BIND_DEFAULT "  pluginConfig:\n"                  \
    PROBE_CFG("Probe1", "      preFilter: Unschedulable\n")

#define POD_OF(name, profile)                                                  \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                   \
    ", namespace: default}\n"                                                  \
    "spec:\n  schedulerName: " profile "\n  priority: 0\n"                    \
    "  containers: [{name: c, image: x}]\n"

START_TEST(test_statuses_cleared_between_cycles)
{
    static const char *const before[] = {NULL, "p1", "p3"};
    try_out_t o;
    ks_error_t err = {0};
    char *t;
    int round;
    sched_build(QSORT_DEFAULT "    filter:\n"
                              "      enabled:\n"
                              "      - name: Probe1\n" BIND_DEFAULT,
                PROBE_CFG("Probe1", "      filter: Unschedulable\n"
                                    "      filterReason: node(s) had reason a\n")
                    SECOND_PROFILE THIRD_PROFILE,
                POD("p1", 0) POD_OF("p2", "second") POD_OF("p3", "third"), 1);
    for (round = 0; round < 3; round++) {
        if (before[round] != NULL) {
            ck_assert_int_eq(ks_scheduler_try(S.s,
                                              tl_world_pod(&S.w, before[round]),
                                              on_try, &o, &err),
                             0);
            ck_assert_msg(strstr(o.message, "0/3 nodes are available: ") ==
                              o.message,
                          "%s: %s", before[round], o.message);
        }
        ck_assert_int_eq(ks_scheduler_try(S.s, tl_world_pod(&S.w, "p2"),
                                          on_try, &o, &err),
                         0);
        ck_assert_str_eq(o.message, "0/3 nodes are available: 1 node(s) had "
                                    "reason b. Probe3 found no node to free");
        t = trace_text();
        ck_assert_int_eq(tl_count_prefix(t, "Probe3 PostFilter p2 "), round + 1);
        ck_assert_msg(tl_line_index(t, "Probe3 PostFilter p2 n1=Unschedulable "
                                       "n2=UnschedulableAndUnresolvable "
                                       "n3=UnschedulableAndUnresolvable") >= 0 &&
                          strstr(t, "p2 n1=Unschedulable n2=Unschedulable ") ==
                              NULL,
                      "round %d:\n%s", round, t);
        free(t);
    }
}
END_TEST

#define GATED_NOMINATED                                                        \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: hi, namespace: default}\n" \
    "spec:\n  priority: 100\n  schedulingGates: [{name: later}]\n"            \
    "  containers: [{name: c, image: x}]\n"                                    \
    "status: {nominatedNodeName: n1}\n"

static const char *nominated_plugins =
    QSORT_DEFAULT "    preEnqueue:\n"
                  "      enabled:\n"
                  "      - name: SchedulingGates\n"
                  "    filter:\n"
                  "      enabled:\n"
                  "      - name: Probe1\n"
                  "    score:\n"
                  "      enabled:\n"
                  "      - name: Probe2\n" BIND_DEFAULT;

static const char *nominated_config =
    PROBE_CFG("Probe1", "      maxPods: 1\n")
        PROBE_CFG("Probe2", "      scoreNodes: {n1: 100, n2: 50, n3: 0}\n");

/* "hi" is gated (never scheduled here) but nominated to n1 with priority
 * 100; "lo" would score best on n1. Below the nominee's priority it must
 * leave n1 to it; above, n1 it is. */
static const struct {
    const char *pods;
    const char *bound;
} nominated_cases[] = {
    {GATED_NOMINATED POD("lo", 1), "lo->n2;"},
    {GATED_NOMINATED POD("lo", 1000), "lo->n1;"},
};

START_TEST(test_nominated_pod_priority)
{
    sched_build(nominated_plugins, nominated_config, nominated_cases[_i].pods,
                1);
    add_pods();
    ks_scheduler_run_batch(S.s);
    ck_assert_str_eq(S.cycles, "lo");
    ck_assert_str_eq(S.bound, nominated_cases[_i].bound);
    ck_assert_uint_eq(ks_scheduler_pending(S.s, KS_Q_UNSCHED), 1);
}
END_TEST

static Suite *scheduler_suite(void)
{
    Suite *s = suite_create("scheduler");
    TCase *tc = tcase_create("queue");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_backoff_durations, 0,
                        sizeof backoff_cases / sizeof backoff_cases[0]);
    tcase_add_test(tc, test_backoff_on_the_clock);
    tcase_add_test(tc, test_queue_order_priority_sort);
    tcase_add_test(tc, test_queue_order_other_sort);
    suite_add_tcase(s, tc);
    tc = tcase_create("reserve-permit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_reserve_failure_in_scheduler);
    tcase_add_test(tc, test_permit_group_allows_waiting);
    tcase_add_test(tc, test_permit_needs_every_waiting_plugin);
    tcase_add_test(tc, test_permit_reject_while_waiting);
    tcase_add_test(tc, test_permit_reject_in_cycle);
    tcase_add_test(tc, test_permit_timeout_batch_clock);
    tcase_add_test(tc, test_permit_timeout_real_loop);
    tcase_add_test(tc, test_permit_allow_real_loop);
    tcase_add_test(tc, test_waiting_pod_keeps_its_generation);
    suite_add_tcase(s, tc);
    tc = tcase_create("bind");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bind_skip_chain_in_scheduler);
    tcase_add_test(tc, test_bind_nobody_binds);
    tcase_add_test(tc, test_borrowed_generation_keeps_the_owner_bound);
    suite_add_tcase(s, tc);
    tc = tcase_create("postfilter-nominated");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_post_filter_in_cycle);
    tcase_add_test(tc, test_statuses_cleared_between_cycles);
    tcase_add_loop_test(tc, test_nominated_pod_priority, 0,
                        sizeof nominated_cases / sizeof nominated_cases[0]);
    suite_add_tcase(s, tc);
    tc = tcase_create("plugin-timing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_plugin_sampling_fixed_seed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scheduler_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
