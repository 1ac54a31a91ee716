/*
 * Opportunistic batching (framework/batch.h) through the scheduler with
 * the default plugins: identical pods in a row reuse the previous cycle's
 * per-node results; a node added or an unrelated pod bound elsewhere
 * between them drops the reuse for the next pod; and every decision is
 * the one the unbatched path makes (--batching off), with verify mode
 * comparing each result batching would reuse and finding no difference.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "framework/batch.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define NODE(name, cpu, mem)                                                   \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name               \
    ", labels: {kubernetes.io/hostname: " name "}}\n"                         \
    "status: {allocatable: {cpu: '" cpu "', memory: " mem ", pods: '110'}}\n"

#define POD(name)                                                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                  \
    ", namespace: default}\n"                                                  \
    "spec: {containers: [{name: c, image: busybox, resources: {requests: "    \
    "{cpu: 500m, memory: 512Mi}}}]}\n"

#define CLUSTER                                                                \
    NODE("n1", "4", "8Gi") NODE("n2", "8", "16Gi") NODE("n3", "6", "8Gi")      \
    NODE("n4", "8", "8Gi")                                                     \
    POD("a1") POD("a2") POD("a3") POD("a4") POD("a5") POD("a6")                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: "     \
    "default, labels: {app: other}}\n"                                         \
    "spec: {containers: [{name: c, image: nginx, resources: {requests: "      \
    "{cpu: '2', memory: 2Gi}}}]}\n"

#define NEW_NODE NODE("n5", "16", "32Gi")

typedef struct run {
    char bound[512];
    /* per cycle: a digest of each feasible node's name, its score row
     * entries (not skipped) and total, as observers see them */
    char rows[512];
    /* reuse counted during each pod's cycle */
    unsigned long long reused[6];
    unsigned long long mismatches;
} run_t;

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    run_t *r = ud;
    size_t l = strlen(r->bound);
    snprintf(r->bound + l, sizeof r->bound - l, "%s->%s;", pod->name, node);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n--)
        h = (h ^ *c++) * 0x100000001b3ull;
    return h;
}

static void on_cycle(void *ud, const ks_cycle_result_t *cr)
{
    run_t *r = ud;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t l = strlen(r->rows), np, p;
    uint32_t k;
    if (!cr->scored)
        return;
    np = cr->fw->n_points[KS_EP_SCORE];
    for (k = 0; k < cr->n_feasible; k++) {
        const char *name = cr->feasible[k]->node->name;
        h = fnv(h, name, strlen(name));
        for (p = 0; p < np; p++)
            if (!cr->score_skipped[p]) {
                int64_t v = ks_cycle_result_score(cr, p, k);
                h = fnv(h, &v, sizeof v);
            }
        h = fnv(h, &cr->totals[k], sizeof cr->totals[0]);
    }
    snprintf(r->rows + l, sizeof r->rows - l, "%016llx;",
             (unsigned long long)h);
}

/* A scheduler over w's cache, deterministic, batching `mode`, recording
 * bindings and score rows into r (zeroed). */
static ks_scheduler_t *sched_new(ks_generation_t *g, tl_world_t *w, int mode,
                                 run_t *r)
{
    ks_sched_opts_t so;
    ks_scheduler_t *s;
    memset(r, 0, sizeof *r);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.batching = mode;
    so.obs.bound = on_bound;
    so.obs.cycle = on_cycle;
    so.obs.ud = r;
    s = ks_scheduler_new(g, w->cache, &so);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Schedule w's pod `name` to the end; *reused: the results its cycle
 * reused. */
static void sched_pod(ks_scheduler_t *s, tl_world_t *w, const char *name,
                      unsigned long long *reused)
{
    unsigned long long before = ks_scheduler_stats(s).batch_reused;
    ck_assert_int_eq(ks_scheduler_add_pod(s, tl_world_take_pod(w, name)), 0);
    while (ks_scheduler_step(s))
        ;
    *reused = ks_scheduler_stats(s).batch_reused - before;
}

/* Schedule a1..a6 one at a time; n5 is added after a2, `other` bound to
 * the node a3 did not go to (n1 unless a3 went there, then n2) after a3. */
static void run_mode(int mode, run_t *r)
{
    static const char *const names[] = {"a1", "a2", "a3", "a4", "a5", "a6"};
    tl_world_t w;
    ks_generation_t *g = tl_generation(NULL);
    ks_scheduler_t *s;
    ks_manifest_t m2;
    ks_error_t err = {0};
    size_t i;

    tl_world_init(&w, CLUSTER);
    memset(&m2, 0, sizeof m2);
    ck_assert_int_eq(ks_manifest_load_string(&m2, "n5.yaml", NEW_NODE,
                                             strlen(NEW_NODE),
                                             ks_intern_global(), NULL, &err),
                     0);
    s = sched_new(g, &w, mode, r);
    for (i = 0; i < 6; i++) {
        if (i == 2) { /* a node added */
            ks_cluster_event_t ev = {KS_RES_NODE, KS_ACT_ADD};
            ck_assert_int_eq(ks_cache_add_node(w.cache, m2.nodes[0], &err), 0);
            m2.nodes[0] = NULL;
            ks_scheduler_on_event(s, ev);
        }
        if (i == 3) { /* an unrelated pod bound elsewhere */
            ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_ADD};
            ks_pod_t *o = tl_world_take_pod(&w, "other");
            o->node_name = ks_intern_str(
                ks_intern_global(), strstr(r->bound, "a3->n1;") ? "n2" : "n1");
            ck_assert_int_eq(ks_cache_add_pod(w.cache, o, &err), 0);
            ks_scheduler_on_event(s, ev);
        }
        sched_pod(s, &w, names[i], &r->reused[i]);
    }
    r->mismatches = ks_scheduler_stats(s).batch_mismatches;
    ks_scheduler_free(s);
    ks_generation_unref(g);
    ks_manifest_free(&m2);
    tl_world_free(&w);
}

START_TEST(test_batched_equals_unbatched)
{
    run_t off, on, verify;
    run_mode(KS_BATCHING_OFF, &off);
    run_mode(KS_BATCHING_ON, &on);
    run_mode(KS_BATCHING_VERIFY, &verify);
    /* every pod bound, the same node in every mode */
    {
        const char *p = off.bound;
        int n = 0;
        while ((p = strstr(p, "->")) != NULL)
            n++, p += 2;
        ck_assert_int_eq(n, 6);
    }
    ck_assert_str_eq(on.bound, off.bound);
    ck_assert_str_eq(verify.bound, off.bound);
    /* the rows and totals observers read: the same, reused or not */
    ck_assert_uint_eq(strlen(off.rows), 6 * 17);
    ck_assert_str_eq(on.rows, off.rows);
    ck_assert_str_eq(verify.rows, off.rows);
    ck_assert_uint_eq(verify.mismatches, 0);
    ck_assert_uint_eq(on.mismatches, 0);
    /* off: nothing reused */
    ck_assert_uint_eq(off.reused[1] + off.reused[4] + off.reused[5], 0);
}
END_TEST

START_TEST(test_reuse_and_invalidation)
{
    run_t on, verify;
    int k;
    run_mode(KS_BATCHING_ON, &on);
    run_mode(KS_BATCHING_VERIFY, &verify);
    for (k = 0; k < 2; k++) {
        const run_t *r = k ? &verify : &on;
        /* a1: nothing kept yet */
        ck_assert_uint_eq(r->reused[0], 0);
        /* a2 follows an identical pod: reuses (the nodes a1 did not go
         * to: 3 Filter verdicts and 3 nodes' scores) */
        ck_assert_uint_eq(r->reused[1], 6);
        /* a3 after a node was added: nothing reused */
        ck_assert_uint_eq(r->reused[2], 0);
        /* a4 after an unrelated pod was bound elsewhere: nothing */
        ck_assert_uint_eq(r->reused[3], 0);
        /* a5, a6: identical pods again, with 5 nodes */
        ck_assert_uint_eq(r->reused[4], 8);
        ck_assert_uint_eq(r->reused[5], 8);
    }
}
END_TEST

/* Runs of whole kept Successes (the Filter's fast path): 80 nodes, so
 * that runs of 32 positions hold no node that changed; pods p1..p3 on
 * every node, then q1..q3 whose required node affinity names 48 of them
 * by metadata.name, a term each (PreFilter's node set: candidates that are not every
 * node). Every mode binds alike, verify finds nothing, and each pod after
 * the first of its kind reuses every node but the one the previous pod
 * went to, for its Filter verdict and its scores. */
#define BIG_NODES 80
#define BIG_NAMED 48

static char *big_cluster(void)
{
    size_t cap = 64 * 1024, len = 0;
    char *y = malloc(cap);
    unsigned i, k;
    ck_assert_ptr_nonnull(y);
    for (i = 0; i < BIG_NODES; i++)
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: m%02u, "
            "labels: {kubernetes.io/hostname: m%02u}}\nstatus: "
            "{allocatable: {cpu: '%u', memory: 16Gi, pods: '110'}}\n",
            i, i, 4 + i % 5);
    for (k = 1; k <= 3; k++)
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%u, "
            "namespace: default}\nspec: {containers: [{name: c, image: "
            "busybox, resources: {requests: {cpu: 500m, memory: "
            "512Mi}}}]}\n",
            k);
    for (k = 1; k <= 3; k++) {
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q%u, "
            "namespace: default}\nspec:\n  containers: [{name: c, image: "
            "busybox, resources: {requests: {cpu: 250m, memory: "
            "256Mi}}}]\n  affinity: {nodeAffinity: "
            "{requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [",
            k);
        /* one value per term: a node field selector takes exactly one */
        for (i = 0; i < BIG_NAMED; i++)
            len += (size_t)snprintf(
                y + len, cap - len,
                "%s{matchFields: [{key: metadata.name, operator: In, "
                "values: [m%02u]}]}",
                i ? ", " : "", i * 5 / 3);
        len += (size_t)snprintf(y + len, cap - len, "]}}}\n");
    }
    ck_assert_uint_lt(len, cap);
    return y;
}

static void run_big(int mode, run_t *r)
{
    static const char *const names[] = {"p1", "p2", "p3", "q1", "q2", "q3"};
    char *yaml = big_cluster();
    tl_world_t w;
    ks_generation_t *g = tl_generation(NULL);
    ks_scheduler_t *s;
    size_t i;

    tl_world_init(&w, yaml);
    s = sched_new(g, &w, mode, r);
    for (i = 0; i < 6; i++)
        sched_pod(s, &w, names[i], &r->reused[i]);
    r->mismatches = ks_scheduler_stats(s).batch_mismatches;
    ks_scheduler_free(s);
    ks_generation_unref(g);
    tl_world_free(&w);
    free(yaml);
}

START_TEST(test_whole_runs_reused)
{
    run_t off, on, verify;
    int k;
    const char *p;
    run_big(KS_BATCHING_OFF, &off);
    run_big(KS_BATCHING_ON, &on);
    run_big(KS_BATCHING_VERIFY, &verify);
    for (k = 0, p = off.bound; (p = strstr(p, "->")) != NULL; p += 2)
        k++;
    ck_assert_int_eq(k, 6);
    ck_assert_str_eq(on.bound, off.bound);
    ck_assert_str_eq(verify.bound, off.bound);
    ck_assert_uint_eq(strlen(off.rows), 6 * 17);
    ck_assert_str_eq(on.rows, off.rows);
    ck_assert_str_eq(verify.rows, off.rows);
    ck_assert_uint_eq(on.mismatches, 0);
    ck_assert_uint_eq(verify.mismatches, 0);
    for (k = 0; k < 2; k++) {
        const run_t *r = k ? &verify : &on;
        ck_assert_uint_eq(r->reused[0], 0);
        /* every node but p1's: Filter verdicts and scores */
        ck_assert_uint_eq(r->reused[1], 2 * (BIG_NODES - 1));
        ck_assert_uint_eq(r->reused[2], 2 * (BIG_NODES - 1));
        /* q1 differs from p3: nothing kept for it */
        ck_assert_uint_eq(r->reused[3], 0);
        /* q2, q3: the named nodes but q's previous one */
        ck_assert_uint_eq(r->reused[4], 2 * (BIG_NAMED - 1));
        ck_assert_uint_eq(r->reused[5], 2 * (BIG_NAMED - 1));
    }
    ck_assert_uint_eq(off.reused[1] + off.reused[2] + off.reused[5], 0);
}
END_TEST

/* A score out of range is never kept: with the default plugins and
 * BadScore (150 on every node, signing every pod alike) each of three
 * identical pods fails with the message, in every mode; a kept 150
 * reused unchecked would let the second one bind. */
static void on_failed(void *ud, const ks_pod_t *pod, const char *message)
{
    run_t *r = ud;
    size_t l = strlen(r->bound);
    snprintf(r->bound + l, sizeof r->bound - l, "%s:%s;", pod->name,
             strstr(message, "plugin \"BadScore\" returns an invalid score "
                             "150") != NULL
                 ? "invalid"
                 : message);
}

START_TEST(test_bad_score_not_kept)
{
    static const int modes[] = {KS_BATCHING_OFF, KS_BATCHING_ON,
                                KS_BATCHING_VERIFY};
    static const char *const names[] = {"a1", "a2", "a3"};
    size_t m, i;
    for (m = 0; m < 3; m++) {
        tl_world_t w;
        ks_generation_t *g = tl_generation(
            PROFILE_HEAD "  plugins:\n"
                         "    score:\n"
                         "      enabled:\n"
                         "      - name: BadScore\n");
        ks_sched_opts_t so;
        ks_scheduler_t *s;
        run_t r;
        memset(&r, 0, sizeof r);
        memset(&so, 0, sizeof so);
        so.deterministic = 1;
        so.batching = modes[m];
        so.obs.bound = on_bound;
        so.obs.failed = on_failed;
        so.obs.ud = &r;
        tl_world_init(&w, CLUSTER);
        s = ks_scheduler_new(g, w.cache, &so);
        ck_assert_ptr_nonnull(s);
        for (i = 0; i < 3; i++) {
            ck_assert_int_eq(
                ks_scheduler_add_pod(s, tl_world_take_pod(&w, names[i])), 0);
            while (ks_scheduler_step(s))
                ;
        }
        ck_assert_str_eq(r.bound, "a1:invalid;a2:invalid;a3:invalid;");
        ks_scheduler_free(s);
        ks_generation_unref(g);
        tl_world_free(&w);
    }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("batching");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_batched_equals_unbatched);
    tcase_add_test(tc, test_reuse_and_invalidation);
    tcase_add_test(tc, test_whole_runs_reused);
    tcase_add_test(tc, test_bad_score_not_kept);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
