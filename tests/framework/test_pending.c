/*
 * The Pending status as upstream v1.36 handles it, through the scheduler
 * with the probe plugins on an injected clock: Pending from Filter or
 * Permit is a rejection (the pod goes to the unschedulable pool with the
 * plugin among its Pending plugins, the FitError worded as upstream's),
 * and a cluster event its Pending plugin queues for moves it to activeQ at
 * once, skipping the backoff an Unschedulable rejection still serves;
 * Pending from PreFilter stays an Error (upstream RunPreFilterPlugins).
 * Also the waiting pod's pending plugins (host API, since ABI 1.1).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/intern.h"
#include "framework/generation.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define CLUSTER                                                                \
    TL_NODE_DOC("n1") TL_NODE_DOC("n2") TL_NODE_DOC("n3")                      \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: "        \
    "default}\nspec: {containers: [{name: c, image: x}]}\n"

static tl_world_t W;
static ks_generation_t *G;
static ks_scheduler_t *S;
static char *trace_path;
static int64_t now_ms;
static char last_failure[2048];
static char bound[256];

static void on_failed(void *ud, const ks_pod_t *pod, const char *msg)
{
    (void)ud;
    (void)pod;
    snprintf(last_failure, sizeof last_failure, "%s", msg);
}

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    tl_appendf(bound, sizeof bound, "%s->%s;", pod->name, node);
}

/* PROFILE_SORT_ONLY + `plugins` with `config` as pluginConfig over
 * CLUSTER; p1 is queued. */
static void start(const char *plugins, const char *config)
{
    char *full;
    ks_sched_opts_t so;
    trace_path = tl_trace_new();
    full = tl_sort_only_yaml(plugins, config, trace_path);
    G = tl_generation(full);
    free(full);
    tl_world_init(&W, CLUSTER);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.failed = on_failed;
    so.obs.bound = on_bound;
    last_failure[0] = bound[0] = '\0';
    S = ks_scheduler_new(G, W.cache, &so);
    ck_assert_ptr_nonnull(S);
    now_ms = 1000;
    ks_scheduler_set_clock(S, tl_clock, &now_ms);
    ck_assert_int_eq(ks_scheduler_add_pod(S, tl_world_take_pod(&W, "p1")), 0);
}

static void teardown(void)
{
    ks_scheduler_free(S);
    ks_generation_unref(G);
    tl_world_free(&W);
    if (trace_path) {
        unlink(trace_path);
        free(trace_path);
    }
    S = NULL;
    G = NULL;
    trace_path = NULL;
}

static void node_added(void)
{
    ks_cluster_event_t ev = {KS_RES_NODE, KS_ACT_ADD};
    ks_scheduler_on_event(S, ev);
}

#define FILTER_BY(code)                                                        \
    start("    filter:\n      enabled:\n      - name: Probe1\n" BIND_DEFAULT, \
          PROBE_CFG("Probe1", "      filter: " code "\n"                       \
                              "      filterReason: waiting for the driver\n"))

/* Filter returns Pending on every node: a FitError counted per node as
 * upstream's, the pod in the unschedulable pool (an Error would be in the
 * backoff queue). Probe1 registers no events, so any event is one its
 * (absent) hint queues for: as a Pending plugin it moves the pod to
 * activeQ at once, although the pod's 1 s backoff has not passed. */
START_TEST(test_filter_pending_is_rejection)
{
    FILTER_BY("Pending");
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_str_eq(last_failure,
                     "0/3 nodes are available: 3 waiting for the driver.");
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 0);
    node_added();
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 0);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_ACTIVE), 1);
}
END_TEST

/* The same with Unschedulable: the same event moves the pod to the backoff
 * queue, its backoff not served yet (upstream queueAfterBackoff). */
START_TEST(test_filter_unschedulable_serves_backoff)
{
    FILTER_BY("Unschedulable");
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_str_eq(last_failure,
                     "0/3 nodes are available: 3 waiting for the driver.");
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    node_added();
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_ACTIVE), 0);
}
END_TEST

/* Permit returns Pending: the assumed pod is unreserved and forgotten, and
 * the rejection reads as upstream v1.36's FitError over the one selected
 * node; the pod is unschedulable (not backing off) and an event moves it
 * to activeQ at once. */
START_TEST(test_permit_pending_is_rejection)
{
    start("    permit:\n      enabled:\n      - name: Probe1\n" BIND_DEFAULT,
          PROBE_CFG("Probe1", "      permit: Pending\n"
                              "      permitReason: quota not granted yet\n"));
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_str_eq(bound, "");
    ck_assert_str_eq(last_failure,
                     "0/1 nodes are available: 1 quota not granted yet.");
    ck_assert_uint_eq(ks_cache_num_pods(W.cache), 0);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    ck_assert_uint_eq(ks_scheduler_stats(S).errors, 0);
    node_added();
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_ACTIVE), 1);
}
END_TEST

/* PreFilter's Pending is an Error upstream (RunPreFilterPlugins accepts
 * only Unschedulable* as rejections): wrapped, to the backoff queue. */
START_TEST(test_prefilter_pending_is_error)
{
    start("    preFilter:\n      enabled:\n      - name: Probe1\n" BIND_DEFAULT,
          PROBE_CFG("Probe1", "      preFilter: Pending\n"));
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_str_eq(last_failure, "running PreFilter plugin \"Probe1\": "
                                   "PreFilter of Probe1 failed");
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 0);
}
END_TEST

/* A pod waiting at Permit for Probe1 and Probe2 reports both as pending
 * plugins, then only Probe2 once Probe1 allowed it, and none once bound. */
START_TEST(test_waiting_pod_pending_plugins)
{
    const ks_host_api_t *api = ks_host_api();
    ks_framework_t *fw;
    ks_handle_t *h;
    ks_waiting_pod_t *wp;
    const char *names[4] = {NULL, NULL, NULL, NULL};
    start("    permit:\n      enabled:\n      - name: Probe1\n"
          "      - name: Probe2\n" BIND_DEFAULT,
          PROBE_CFG("Probe1", "      permit: Wait\n")
              PROBE_CFG("Probe2", "      permit: Wait\n"));
    ck_assert(KS_API_HAS(api, waiting_pod_pending_plugins));
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    fw = ks_generation_profile(G, "default-scheduler");
    h = (ks_handle_t *)&fw->points[KS_EP_PERMIT][0].inst->handle;
    wp = api->waiting_pod_get(h, "default/p1");
    ck_assert_ptr_nonnull(wp);
    ck_assert_uint_eq(api->waiting_pod_pending_plugins(wp, names, 4), 2);
    ck_assert_str_eq(names[0], "Probe1");
    ck_assert_str_eq(names[1], "Probe2");
    /* cap 0: the count alone, nothing written */
    names[0] = NULL;
    ck_assert_uint_eq(api->waiting_pod_pending_plugins(wp, names, 0), 2);
    ck_assert_ptr_null(names[0]);
    api->waiting_pod_allow_as(h, wp);
    wp = api->waiting_pod_get(h, "default/p1");
    ck_assert_ptr_nonnull(wp);
    ck_assert_uint_eq(api->waiting_pod_pending_plugins(wp, names, 4), 1);
    ck_assert_str_eq(names[0], "Probe2");
    api->waiting_pod_allow(wp, "Probe2");
    /* Allowed: no pending plugin left, the record still valid here. */
    ck_assert_uint_eq(api->waiting_pod_pending_plugins(wp, names, 4), 0);
    ks_scheduler_run_batch(S);
    ck_assert_str_eq(bound, "p1->n1;");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pending");
    TCase *tc = tcase_create("pending");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_filter_pending_is_rejection);
    tcase_add_test(tc, test_filter_unschedulable_serves_backoff);
    tcase_add_test(tc, test_permit_pending_is_rejection);
    tcase_add_test(tc, test_prefilter_pending_is_error);
    tcase_add_test(tc, test_waiting_pod_pending_plugins);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
