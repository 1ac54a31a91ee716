/*
 * The bulk Filter's lead (framework.h ks_fw_bulk_plan_t): a Filter plugin
 * that rejects most of the nodes it sees runs first, out of the list's
 * order, and nothing a user sees changes. 96 nodes: a quarter big (8
 * CPUs), the rest small (1 CPU); half the big ones and a third of the
 * small ones unschedulable. Pods asking for 2 CPUs fit only the big
 * schedulable nodes, so NodeResourcesFit rejects most of the nodes it
 * sees and NodeUnschedulable, ahead of it in the list, fewer: Fit becomes
 * the lead. After it, the nodes left of a run are packed, and
 * NodeUnschedulable's rejections among them go back to their places (a
 * pod bound to an unschedulable node would show it). Then a pod that
 * fits nowhere: its FailedScheduling message must still blame
 * NodeUnschedulable for every unschedulable node (the first plugin in the
 * list that rejects them), as it does with the bulk Filter off, although
 * Fit rejected the small ones first.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/batch.h"
#include "framework/framework.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define N_NODES 96
#define N_PODS 6

typedef struct run {
    char bound[1024];
    char failed[2048];
    int lead; /* the Filter framework's bulk_lead after the run */
} run_t;

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    run_t *r = ud;
    size_t l = strlen(r->bound);
    snprintf(r->bound + l, sizeof r->bound - l, "%s->%s;", pod->name, node);
}

static void on_failed(void *ud, const ks_pod_t *pod, const char *message)
{
    run_t *r = ud;
    size_t l = strlen(r->failed);
    snprintf(r->failed + l, sizeof r->failed - l, "%s: %s\n", pod->name,
             message);
}

static void on_ep(void *ud, const ks_framework_t *fw, int ext_point,
                  ks_code_t code, double seconds)
{
    run_t *r = ud;
    (void)code;
    (void)seconds;
    if (ext_point == KS_EP_FILTER)
        r->lead = fw->bulk_lead;
}

static char *cluster(void)
{
    size_t cap = 64 * 1024, len = 0;
    char *y = malloc(cap);
    unsigned i;
    ck_assert_ptr_nonnull(y);
    for (i = 0; i < N_NODES; i++)
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%02u, "
            "labels: {kubernetes.io/hostname: n%02u}}\nspec: "
            "{unschedulable: %s}\nstatus: {allocatable: {cpu: '%u', "
            "memory: 16Gi, pods: '110'}}\n",
            i, i, i % 4 == 1 || i % 8 == 0 ? "true" : "false",
            i % 4 == 0 ? 8 : 1);
    for (i = 1; i <= N_PODS + 1; i++)
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%u, "
            "namespace: default}\nspec: {containers: [{name: c, image: "
            "busybox, resources: {requests: {cpu: '%u', memory: "
            "512Mi}}}]}\n",
            i, i <= N_PODS ? 2 : 64);
    ck_assert_uint_lt(len, cap);
    return y;
}

/* p1..p6, then p7 (64 CPUs: fits nowhere), with the bulk Filter `bulk`,
 * batching off (batching's cycles keep the list's order). */
static void run(int bulk, run_t *r)
{
    char *yaml = cluster(), name[8];
    tl_world_t w;
    ks_generation_t *g = tl_generation(NULL);
    ks_sched_opts_t so;
    ks_scheduler_t *s;
    unsigned i;

    memset(r, 0, sizeof *r);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.batching = KS_BATCHING_OFF;
    so.bulk = bulk;
    so.obs.bound = on_bound;
    so.obs.failed = on_failed;
    so.obs.ep_duration = on_ep;
    so.obs.ud = r;
    tl_world_init(&w, yaml);
    s = ks_scheduler_new(g, w.cache, &so);
    ck_assert_ptr_nonnull(s);
    for (i = 1; i <= N_PODS + 1; i++) {
        snprintf(name, sizeof name, "p%u", i);
        ck_assert_int_eq(ks_scheduler_add_pod(s, tl_world_take_pod(&w, name)),
                         0);
        while (ks_scheduler_step(s))
            ;
    }
    if (bulk == KS_BULK_VERIFY)
        ck_assert_uint_eq(ks_scheduler_stats(s).bulk_mismatches, 0);
    ks_scheduler_free(s);
    ks_generation_unref(g);
    tl_world_free(&w);
    free(yaml);
}

START_TEST(test_lead_keeps_decisions_and_statuses)
{
    run_t off, on, verify;
    const char *p;
    int k;
    run(KS_BULK_OFF, &off);
    run(KS_BULK_ON, &on);
    run(KS_BULK_VERIFY, &verify);
    for (k = 0, p = off.bound; (p = strstr(p, "->")) != NULL; p += 2)
        k++;
    ck_assert_int_eq(k, N_PODS);
    /* the lead is taken: NodeResourcesFit, not the list's first plugin */
    ck_assert_int_eq(off.lead, 0);
    ck_assert_int_gt(on.lead, 1);
    ck_assert_int_eq(verify.lead, on.lead);
    /* and the same bindings, the same message */
    ck_assert_str_eq(on.bound, off.bound);
    ck_assert_str_eq(verify.bound, off.bound);
    ck_assert_ptr_nonnull(strstr(off.failed, "p7: 0/96 nodes are available"));
    ck_assert_ptr_nonnull(
        strstr(off.failed, "36 node(s) were unschedulable"));
    ck_assert_ptr_nonnull(strstr(off.failed, "60 Insufficient cpu"));
    /* every pod on a big schedulable node (n04, n12, ...) */
    for (p = off.bound; (p = strstr(p, "->n")) != NULL; p += 3)
        ck_assert_int_eq(atoi(p + 3) % 8, 4);
    ck_assert_str_eq(on.failed, off.failed);
    ck_assert_str_eq(verify.failed, off.failed);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("bulk-lead");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lead_keeps_decisions_and_statuses);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
