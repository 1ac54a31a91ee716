/*
 * Scheduler requeue rules and reload safety, kept apart from
 * test_scheduler.c because each once failed:
 *
 *  1. After a failure past Reserve (Permit rejection or timeout), the pod
 *     goes to the unschedulable pool, as upstream v1.24.1: forgetting the
 *     assumed pod moves only the *other* pods. Moving the pod itself to
 *     backoff made a batch run with an always-rejecting Permit plugin loop
 *     forever.
 *  2. The rejecting plugins recorded for an unschedulable pod stay valid
 *     after a reload unloads the plugin images (they used to point into
 *     the unmapped image).
 */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/intern.h"
#include "framework/generation.h"
#include "framework/plugin_loader.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define PROFILE_PERMIT(args)                                                   \
    PROFILE_SORT_ONLY                                                          \
    "    filter:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: Probe2\n"                                                   \
    "    permit:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: Probe1\n"                                                   \
    "    bind:\n"                                                              \
    "      enabled:\n"                                                         \
    "      - name: DefaultBinder\n"                                            \
    "  pluginConfig:\n"                                                        \
    "  - name: Probe1\n"                                                       \
    "    args:\n" args                                                         \
    "  - name: Probe2\n"                                                       \
    "    args:\n"                                                              \
    "      maxPods: 1\n"

#define CLUSTER                                                                \
    TL_NODE_DOC("n1")                                                          \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\n" \
    "spec: {containers: [{name: c, image: x}]}\n"                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: default}\n" \
    "spec: {containers: [{name: c, image: x}]}\n"

static tl_world_t W;
static ks_generation_t *G;
static ks_scheduler_t *S;
static int64_t now_ms;
static int n_failed;

static void on_failed(void *ud, const ks_pod_t *pod, const char *msg)
{
    (void)ud;
    (void)pod;
    (void)msg;
    if (++n_failed > 20)
        ck_abort_msg("the pod keeps failing: %d attempts (last: %s)",
                     n_failed, msg);
}

static void start(const char *yaml, int clock)
{
    ks_sched_opts_t so;
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.failed = on_failed;
    G = tl_generation(yaml);
    tl_world_init(&W, CLUSTER);
    S = ks_scheduler_new(G, W.cache, &so);
    if (clock) {
        now_ms = 1000;
        ks_scheduler_set_clock(S, tl_clock, &now_ms);
    }
    ck_assert_int_eq(ks_scheduler_add_pod(S, tl_world_take_pod(&W, "p1")), 0);
}

static void teardown(void)
{
    ks_scheduler_free(S);
    ks_generation_unref(G);
    tl_world_free(&W);
    S = NULL;
    G = NULL;
    n_failed = 0;
}

START_TEST(test_permit_reject_goes_to_pool)
{
    start(PROFILE_PERMIT("      permit: Unschedulable\n"), 1);
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_int_eq(n_failed, 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 0);
}
END_TEST

START_TEST(test_permit_timeout_moves_others_only)
{
    /* p1 waits at Permit on n1, the only node, and holds it: p2 fails
     * Probe2's Filter (at most one pod per node) and goes to the pool. */
    start(PROFILE_PERMIT("      permit: Wait\n"
                         "      permitTimeoutMs: 50\n"),
          1);
    ck_assert_int_eq(ks_scheduler_step(S), 1); /* p1 waits until 1050 */
    now_ms = 1001;
    ck_assert_int_eq(ks_scheduler_add_pod(S, tl_world_take_pod(&W, "p2")), 0);
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_int_eq(n_failed, 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    /* p1 times out: it goes to the pool, and its forgetting moves p2 (to
     * backoff: it failed 49 ms ago). */
    now_ms = 1050;
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_int_eq(n_failed, 2);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 1);
    /* p2's backoff (1 s from its failure) ends: it gets the node. */
    now_ms = 2001;
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, -1), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_BACKOFF), 0);
}
END_TEST

START_TEST(test_batch_ends_when_permit_rejects)
{
    start(PROFILE_PERMIT("      permit: Unschedulable\n"), 0);
    ks_scheduler_run_batch(S); /* on_failed aborts after 20 attempts */
    ck_assert_int_eq(n_failed, 1);
}
END_TEST

START_TEST(test_rejecting_plugin_survives_reload)
{
    /* p1 is rejected by the Filter of Probe2 on every node. */
    const char *yaml =
        PROFILE_HEAD
        "  plugins:\n"
        "    filter:\n"
        "      enabled:\n"
        "      - name: Probe2\n"
        "  pluginConfig:\n"
        "  - name: Probe2\n"
        "    args:\n"
        "      filter: Unschedulable\n";
    ks_generation_t *g2;
    ks_cluster_event_t ev = {KS_RES_NODE, KS_ACT_ADD};
    int live;
    start(yaml, 1);
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_int_eq(n_failed, 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    /* Reload: a new generation loads new copies; the old one is freed and
     * its plugin images unmapped. */
    live = ks_plugin_live_count();
    g2 = tl_generation(yaml);
    ks_scheduler_set_generation(S, g2);
    ks_generation_unref(G);
    G = NULL;
    ck_assert_int_eq(ks_plugin_live_count(), live);
    /* A node event checks the pod's rejecting plugins. */
    ks_scheduler_on_event(S, ev);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scheduler-regressions");
    TCase *tc = tcase_create("requeue");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_permit_reject_goes_to_pool);
    tcase_add_test(tc, test_permit_timeout_moves_others_only);
    tcase_add_test(tc, test_batch_ends_when_permit_rejects);
    tcase_add_test(tc, test_rejecting_plugin_survives_reload);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
