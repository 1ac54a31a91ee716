/*
 * The scheduler's out-of-memory policy (scheduler_impl.h), by fault
 * injection: this test is linked with --wrap for malloc, calloc, realloc
 * and strdup, so that the host code in it (the static host library) can be
 * made to fail its n-th allocation. Plugins, loaded with dlopen, allocate
 * through the real functions.
 *
 * For every n up to the number of allocations a run makes, one run fails
 * allocation n while it creates a scheduler, adds the pending pods and
 * runs the batch driver; then allocations succeed again, and the same
 * scheduler (or a new one, when creating it failed) gets the pods it
 * refused and runs again. Every pod must end bound exactly once, with
 * nothing left queued, waiting or binding: a failure was reported and
 * undone, never half-applied. Leaks show under the sanitizer builds.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/generation.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

/* --- allocation failures --------------------------------------------------- */

static int injecting; /* count (and maybe fail) allocations */
static long n_allocs; /* allocations counted so far */
static long fail_at;  /* the allocation to fail (1-based); 0: none */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);

static int fail_now(void)
{
    return injecting && ++n_allocs == fail_at;
}

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s);
char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

/* --- one run ------------------------------------------------------------------ */

#define N_PODS 5

/* The default profile but InterPodAffinity and PodTopologySpread, which
 * keep their PreFilter/PreScore state when the host cannot store it (the
 * other in-tree plugins free it). */
#define PROFILE                                                                \
    PROFILE_HEAD                                                               \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled:\n"                                                        \
    "      - name: InterPodAffinity\n"                                         \
    "      - name: PodTopologySpread\n"

#define NODE(name)                                                             \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"         \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

#define CLUSTER                                                                \
    NODE("n1") NODE("n2") NODE("n3")                                           \
    "---\napiVersion: v1\nkind: Pod\n"                                         \
    "metadata: {name: old, namespace: default, labels: {app: a}}\n"            \
    "spec: {nodeName: n1, containers: [{name: c, image: x, resources: "       \
    "{requests: {cpu: '1'}}}]}\n"                                              \
    POD("p1") POD("p2") POD("p3") POD("p4") POD("p5")

#define POD(name)                                                              \
    "---\napiVersion: v1\nkind: Pod\n"                                         \
    "metadata: {name: " name ", namespace: default, labels: {app: a}}\n"       \
    "spec: {containers: [{name: c, image: x, resources: "                     \
    "{requests: {cpu: 500m}}}]}\n"

static ks_generation_t *G;
static int n_bound[N_PODS];

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    (void)node;
    n_bound[pod->name[1] - '1']++;
}

static ks_scheduler_t *sched_new(ks_cache_t *cache)
{
    ks_sched_opts_t so;
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.bound = on_bound;
    return ks_scheduler_new(G, cache, &so);
}

/* One run failing allocation `n` (0: none); returns how many allocations
 * the failing part made. */
static long run(long n)
{
    static const char *const names[N_PODS] = {"p1", "p2", "p3", "p4", "p5"};
    ks_pod_t *refused[N_PODS];
    size_t n_refused = 0, i;
    ks_scheduler_t *s;
    ks_sched_stats_t st;
    tl_world_t w;
    long made;

    tl_world_init(&w, CLUSTER);
    memset(n_bound, 0, sizeof n_bound);

    n_allocs = 0;
    fail_at = n;
    injecting = 1;
    s = sched_new(w.cache);
    for (i = 0; i < N_PODS; i++) {
        ks_pod_t *pod = tl_world_take_pod(&w, names[i]);
        if (s == NULL || ks_scheduler_add_pod(s, pod) != 0)
            refused[n_refused++] = pod;
    }
    if (s != NULL)
        ks_scheduler_run_batch(s);
    injecting = 0;
    made = n_allocs;

    if (s == NULL)
        s = sched_new(w.cache);
    ck_assert_ptr_nonnull(s);
    for (i = 0; i < n_refused; i++)
        ck_assert_int_eq(ks_scheduler_add_pod(s, refused[i]), 0);
    ks_scheduler_run_batch(s);

    st = ks_scheduler_stats(s);
    for (i = 0; i < N_PODS; i++)
        ck_assert_msg(n_bound[i] == 1, "failing allocation %ld: p%zu bound %d "
                      "times", n, i + 1, n_bound[i]);
    ck_assert_uint_eq(ks_scheduler_pending(s, KS_Q_NONE), 0);
    ck_assert_uint_eq(ks_scheduler_pending(s, -1), 0);
    ck_assert_uint_eq(ks_cache_num_pods(w.cache), N_PODS + 1);
    ck_assert_uint_le(st.bound, N_PODS);
    ks_scheduler_free(s);
    tl_world_free(&w);
    return made;
}

START_TEST(test_every_allocation_failure_is_undone)
{
    long total, n;
    G = tl_generation(PROFILE);
    total = run(0);
    ck_assert_int_gt(total, 10);
    for (n = 1; n <= total; n++)
        run(n);
    ks_generation_unref(G);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("sched_oom");
    TCase *tc = tcase_create("oom");
    SRunner *sr;
    int nf;
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_allocation_failure_is_undone);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
