/*
 * A status's reasons live as long as the status: a plugin whose reasons are
 * all distinct (fixture DistinctReasons: the pod, the node and a call
 * count in each) must not grow the host's memory cycle after cycle, as it
 * did while every reason was interned for the life of the process.
 *
 * KS_REASON_CYCLES scheduling attempts (ks_scheduler_try: Filter on three
 * nodes, the FitError built from the node statuses) default 1,000,000;
 * the resident set size is printed after a warm-up of 10,000 attempts and
 * at the end, and may grow by at most 16 MiB (the intern table grew by
 * hundreds of megabytes over a million attempts). Under a sanitizer or
 * valgrind, whose own bookkeeping of freed memory (ASan's quarantine)
 * grows the resident set, the default is 20,000 attempts and the growth
 * is printed, not checked.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_TOOL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_TOOL 1
#endif
#endif
#ifndef UNDER_TOOL
#ifdef RUNNING_ON_VALGRIND
#define UNDER_TOOL RUNNING_ON_VALGRIND
#else
#define UNDER_TOOL 0
#endif
#endif

#define WARMUP 10000
#define MAX_GROWTH_KIB (16 * 1024)

#define NODES                                                                  \
    TL_NODE_DOC("n1") TL_NODE_DOC("n2") TL_NODE_DOC("n3")                      \
    "---\napiVersion: v1\nkind: Pod\n"                                         \
    "metadata: {name: p1, namespace: default}\n"                               \
    "spec:\n  containers: [{name: c, image: x}]\n"

#define PROFILE                                                                \
    PROFILE_SORT_ONLY                                                          \
    "    filter:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: DistinctReasons\n" BIND_DEFAULT

/* Resident set size in KiB (/proc/self/statm), 0 when unknown. */
static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

typedef struct seen {
    unsigned long results;
    char last[256];
} seen_t;

static void on_try(void *ud, const ks_cycle_result_t *r)
{
    seen_t *s = ud;
    s->results++;
    snprintf(s->last, sizeof s->last, "%s", r->message ? r->message : "");
}

START_TEST(test_distinct_reasons_do_not_accumulate)
{
    const char *env = getenv("KS_REASON_CYCLES");
    int tool = UNDER_TOOL;
    unsigned long cycles = env ? strtoul(env, NULL, 10)
                               : tool ? 20000 : 1000000,
                  i;
    tl_world_t w;
    ks_generation_t *gen = tl_generation(PROFILE);
    ks_scheduler_t *s;
    ks_sched_opts_t so;
    ks_error_t err = {0};
    seen_t seen = {0, ""};
    const ks_pod_t *pod;
    long before = 0, after;

    tl_world_init(&w, NODES);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    s = ks_scheduler_new(gen, w.cache, &so);
    ck_assert_ptr_nonnull(s);
    pod = tl_world_pod(&w, "p1");
    for (i = 0; i < cycles; i++) {
        if (i == WARMUP || (i == 0 && cycles <= WARMUP))
            before = rss_kib();
        ck_assert_int_eq(ks_scheduler_try(s, pod, on_try, &seen, &err), 0);
    }
    after = rss_kib();
    printf("reason-memory: %lu attempts with distinct reasons; RSS %ld KiB "
           "after %d, %ld KiB at the end (%+ld KiB)\n",
           cycles, before, cycles > WARMUP ? WARMUP : 0, after,
           after - before);
    printf("reason-memory: last message: %s\n", seen.last);
    fflush(stdout);
    ck_assert_uint_eq(seen.results, cycles);
    ck_assert_msg(strstr(seen.last, "0/3 nodes are available: ") == seen.last,
                  "%s", seen.last);
    ck_assert_msg(tool || after - before <= MAX_GROWTH_KIB,
                  "RSS grew by %ld KiB over %lu attempts", after - before,
                  cycles);
    ks_scheduler_free(s);
    ks_generation_unref(gen);
    tl_world_free(&w);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("reason-memory");
    TCase *tc = tcase_create("distinct");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_distinct_reasons_do_not_accumulate);
    suite_add_tcase(su, tc);
    return tl_run_suite(su);
}
