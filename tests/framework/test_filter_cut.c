/*
 * The parallel Filter's cut at the number of feasible nodes to find
 * (percentageOfNodesToScore), deterministic: the nodes found are the ones
 * one thread finds, however the threads were scheduled.
 *
 * 1,000 nodes, parallelism 2, percentageOfNodesToScore 10: 100 feasible
 * nodes wanted, a Filter job of chunks of 63 positions, each filtered in
 * runs of 32. Probe1's Filter sleeps on the first node of the evaluation
 * order (the OS taking that thread off its CPU), while the other thread
 * filters the chunks after it and finds the 100 nodes. The first thread
 * then comes back to the rest of its chunk. Probe1 scores the nodes at
 * positions 32 to 62 highest: they are among the first 100 feasible, so
 * one of them is the serial answer. A thread that left the rest of its
 * chunk out (as ksched did before 2026-12) let nodes past position 100
 * stand in for them, and the pod went to a node scoring 0.
 *
 * Needs two CPUs (the host caps parallelism at the CPU count): the suite
 * exits 77 (skipped) with a message on one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cache.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define N_NODES 1000
#define HI_FIRST 32 /* the second run of the first chunk */
#define HI_LAST 62  /* the chunk's last position */

static char bound_to[64];
static int n_bound;

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    (void)pod;
    snprintf(bound_to, sizeof bound_to, "%s", node);
    n_bound++;
}

static char *cluster_yaml(void)
{
    size_t cap = (size_t)N_NODES * 160 + 512, len = 0;
    char *y = malloc(cap);
    int i;
    ck_assert_ptr_nonnull(y);
    y[0] = '\0';
    for (i = 0; i < N_NODES; i++)
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%04d}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n",
            i);
    snprintf(y + len, cap - len,
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, "
             "namespace: default}\nspec: {containers: [{name: c, image: "
             "x}]}\n");
    return y;
}

/* The configuration: Probe1 sleeps `delay_ms` on names[0] and scores
 * names[HI_FIRST..HI_LAST] 100, every other node 0. */
static char *config_yaml(const char *const *names, int delay_ms)
{
    char *y = malloc(8192);
    int i;
    ck_assert_ptr_nonnull(y);
    snprintf(y, 8192,
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "percentageOfNodesToScore: 10\n"
             TL_PROFILES_SORT_ONLY
             "    filter:\n"
             "      enabled: [{name: Probe1}]\n"
             "    score:\n"
             "      enabled: [{name: Probe1}]\n" BIND_DEFAULT
             "  pluginConfig:\n"
             "  - name: Probe1\n"
             "    args:\n"
             "      filterDelayMs: %d\n"
             "      filterDelayNodes: [%s]\n"
             "      scoreNodes:\n",
             delay_ms, names[0]);
    for (i = HI_FIRST; i <= HI_LAST; i++)
        tl_appendf(y, 8192, "        %s: 100\n", names[i]);
    return y;
}

/* Schedule p1 with `parallelism` threads: the position of the node it was
 * bound to in the evaluation order (its name in bound_to), and the number
 * of jobs shared with the pool's thread in *shared. */
static int schedule(int parallelism, int delay_ms, uint64_t *shared)
{
    tl_world_t w;
    ks_generation_t *g;
    ks_scheduler_t *s;
    ks_sched_opts_t so;
    const char *const *names;
    char *cluster = cluster_yaml(), *cfg;
    int i;
    tl_world_init(&w, cluster);
    free(cluster);
    names = ks_snapshot_node_names(w.snap);
    cfg = config_yaml(names, delay_ms);
    g = tl_generation_par(cfg, parallelism);
    free(cfg);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.bound = on_bound;
    s = ks_scheduler_new(g, w.cache, &so);
    ck_assert_ptr_nonnull(s);
    n_bound = 0;
    bound_to[0] = '\0';
    ck_assert_int_eq(ks_scheduler_add_pod(s, tl_world_take_pod(&w, "p1")), 0);
    ks_scheduler_run_batch(s);
    ck_assert_int_eq(n_bound, 1);
    *shared = ks_scheduler_stats(s).pool_shared;
    for (i = 0; i < N_NODES && strcmp(names[i], bound_to) != 0; i++)
        ;
    ks_scheduler_free(s);
    ks_generation_unref(g);
    tl_world_free(&w);
    return i;
}

START_TEST(test_cut_keeps_the_serial_nodes)
{
    char serial[64];
    uint64_t shared;
    int at = schedule(1, 0, &shared);
    /* The serial answer: one of the nodes scored 100. */
    snprintf(serial, sizeof serial, "%s", bound_to);
    ck_assert_msg(at >= HI_FIRST && at <= HI_LAST,
                  "serially p1 went to %s, not a node scored 100", serial);
    /* Two threads, the first one held up for 200 ms on its first node:
     * the same node, and the Filter job was shared. */
    schedule(2, 200, &shared);
    ck_assert_msg(shared > 0, "no job was shared with the pool's thread");
    ck_assert_msg(strcmp(bound_to, serial) == 0,
                  "with 2 threads p1 went to %s, serially to %s: the "
                  "parallel Filter's cut left positions %d to %d out",
                  bound_to, serial, HI_FIRST, HI_LAST);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        printf("SKIP: one CPU: the host runs Filter on one thread\n");
        return 77;
    }
    s = suite_create("filter-cut");
    tc = tcase_create("deterministic");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cut_keeps_the_serial_nodes);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
