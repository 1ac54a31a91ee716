/*
 * cpu-ceiling: what a second thread gains on this machine, now, on work
 * that needs no coordination at all. A benchmark: it prints figures.
 *
 * A parallelism-2 figure of ksched-bench can only be read against what
 * the machine gives two threads. On a dedicated 2-core machine a job
 * split into two independent halves runs in half the time; on shared or
 * virtual CPUs it may not, and the ratio moves from minute to minute. This
 * program measures that ratio the way compare-par.sh measures ksched: in
 * alternated pairs, each pair running one unit of work twice on one thread
 * and then once on each of two threads (the order swapped every other
 * pair), the ratio being one thread's wall time over two threads'. 2.00x
 * is the most a second thread can give; a scheduler with a serial part
 * gets less.
 *
 * Three kernels, each a unit of about --ms milliseconds on one thread
 * (calibrated at the start):
 *   chain   one dependent chain of integer operations (latency bound);
 *   ilp     eight independent chains (bound by the core's execution
 *           ports: threads that share a physical core slow each other
 *           here first);
 *   memory  a random walk over a 64 MiB array per thread (bound by the
 *           caches and memory, as a scheduler's walk over NodeInfos).
 *
 * Usage: cpu-ceiling [--pairs N] [--ms M] [--kernel chain|ilp|memory]...
 * Prints one line per kernel: the median, lowest and highest ratio of the
 * pairs, then every pair's ratio. Exit status: 0; 1 when a thread or the
 * memory could not be had; 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { KERNEL_CHAIN, KERNEL_ILP, KERNEL_MEMORY, KERNELS };
static const char *const kernel_names[KERNELS] = {"chain", "ilp", "memory"};

#define WALK_WORDS ((size_t)16 << 20) /* 64 MiB of uint32_t per thread */
#define PAIRS_MAX 1000

typedef struct unit {
    int kernel;
    uint64_t iters;
    uint32_t *walk; /* KERNEL_MEMORY: this thread's permutation cycle */
    uint64_t result;
} unit_t;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

static void *unit_run(void *arg)
{
    unit_t *u = arg;
    uint64_t i, x[8];
    unsigned k;
    switch (u->kernel) {
    case KERNEL_CHAIN:
        x[0] = 0x9E3779B97F4A7C15u + u->iters;
        for (i = 0; i < u->iters; i++)
            x[0] = xorshift(x[0]);
        u->result = x[0];
        break;
    case KERNEL_ILP:
        for (k = 0; k < 8; k++)
            x[k] = 0x9E3779B97F4A7C15u * (k + 1);
        for (i = 0; i < u->iters; i++)
            for (k = 0; k < 8; k++)
                x[k] = xorshift(x[k]);
        u->result = x[0] ^ x[3] ^ x[7];
        break;
    default: {
        uint32_t p = 0;
        for (i = 0; i < u->iters; i++)
            p = u->walk[p];
        u->result = p;
    }
    }
    return NULL;
}

/* A single cycle through all WALK_WORDS slots (Sattolo's shuffle), so the
 * walk never settles into a short loop that fits a cache. */
static uint32_t *walk_new(uint64_t seed)
{
    uint32_t *w = malloc(WALK_WORDS * sizeof *w);
    size_t i;
    if (w == NULL)
        return NULL;
    for (i = 0; i < WALK_WORDS; i++)
        w[i] = (uint32_t)i;
    for (i = WALK_WORDS - 1; i > 0; i--) {
        size_t j;
        uint32_t t;
        seed = xorshift(seed);
        j = (size_t)(seed % i);
        t = w[i];
        w[i] = w[j];
        w[j] = t;
    }
    return w;
}

/* One thread: u twice, one after the other. */
static double time_one(unit_t *u)
{
    double t0 = mono_s();
    unit_run(&u[0]);
    unit_run(&u[1]);
    return mono_s() - t0;
}

/* Two threads: u[0] on a new thread, u[1] on this one. -1: no thread. */
static double time_two(unit_t *u)
{
    pthread_t t;
    double t0 = mono_s();
    if (pthread_create(&t, NULL, unit_run, &u[0]) != 0)
        return -1;
    unit_run(&u[1]);
    pthread_join(t, NULL);
    return mono_s() - t0;
}

/* Iterations of kernel k that take about ms milliseconds on one thread. */
static uint64_t calibrate(unit_t *u, double ms)
{
    uint64_t iters = 1u << 16;
    for (;;) {
        double t0, dt;
        u->iters = iters;
        t0 = mono_s();
        unit_run(u);
        dt = mono_s() - t0;
        if (dt * 1000 >= ms / 4 || iters > ((uint64_t)1 << 40))
            return (uint64_t)((double)iters * ms / (dt * 1000)) + 1;
        iters *= 4;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run_kernel(int k, int pairs, double ms, uint32_t **walks)
{
    unit_t u[2];
    double r[PAIRS_MAX], sorted[PAIRS_MAX];
    int i;
    memset(u, 0, sizeof u);
    u[0].kernel = u[1].kernel = k;
    u[0].walk = walks[0];
    u[1].walk = walks[1];
    u[0].iters = u[1].iters = calibrate(&u[0], ms);
    for (i = 0; i < pairs; i++) {
        double one, two;
        if (i % 2 == 0) {
            one = time_one(u);
            two = time_two(u);
        } else {
            two = time_two(u);
            one = time_one(u);
        }
        if (two <= 0) {
            fprintf(stderr, "cpu-ceiling: cannot start a thread\n");
            return 1;
        }
        r[i] = one / two;
    }
    memcpy(sorted, r, (size_t)pairs * sizeof *r);
    qsort(sorted, (size_t)pairs, sizeof *sorted, cmp_double);
    printf("%-6s median %.2fx  lowest %.2fx  highest %.2fx  pairs:", kernel_names[k],
           pairs % 2 ? sorted[pairs / 2]
                     : (sorted[pairs / 2 - 1] + sorted[pairs / 2]) / 2,
           sorted[0], sorted[pairs - 1]);
    for (i = 0; i < pairs; i++)
        printf(" %.2f", r[i]);
    printf("\n");
    fflush(stdout);
    return 0;
}

static void usage(FILE *f)
{
    fputs("Usage: cpu-ceiling [--pairs N] [--ms M] [--kernel NAME]...\n"
          "\n"
          "What a second thread gains on this machine on work that needs no\n"
          "coordination: alternated pairs of one thread running two units\n"
          "and two threads running one each; prints one thread's time over\n"
          "two threads' per kernel (2.00x at most on two free cores).\n"
          "\n"
          "  --pairs N      pairs per kernel (1..1000; default 9)\n"
          "  --ms M         one unit's time on one thread, in milliseconds\n"
          "                 (1..10000; default 100)\n"
          "  --kernel NAME  chain, ilp or memory; repeatable (default: all)\n"
          "  -h, --help     this text\n",
          f);
}

static int parse_int(const char *opt, const char *v, long lo, long hi,
                     long *out)
{
    char *end;
    long n;
    errno = 0;
    n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || errno || n < lo ||
        n > hi) {
        fprintf(stderr,
                "cpu-ceiling: %s needs a whole number from %ld to %ld "
                "(got %s)\n",
                opt, lo, hi, v ? v : "nothing");
        return -1;
    }
    *out = n;
    return 0;
}

int main(int argc, char **argv)
{
    long pairs = 9, ms = 100;
    int want[KERNELS] = {0}, any = 0, i, k, rc = 0;
    uint32_t *walks[2] = {NULL, NULL};
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--pairs")) {
            if (parse_int(a, v, 1, PAIRS_MAX, &pairs))
                return 2;
            i++;
        } else if (!strcmp(a, "--ms")) {
            if (parse_int(a, v, 1, 10000, &ms))
                return 2;
            i++;
        } else if (!strcmp(a, "--kernel")) {
            for (k = 0; k < KERNELS; k++)
                if (v && !strcmp(v, kernel_names[k]))
                    break;
            if (k == KERNELS) {
                fprintf(stderr,
                        "cpu-ceiling: --kernel is chain, ilp or memory "
                        "(got %s)\n",
                        v ? v : "nothing");
                return 2;
            }
            want[k] = any = 1;
            i++;
        } else {
            fprintf(stderr, "cpu-ceiling: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!any)
        for (k = 0; k < KERNELS; k++)
            want[k] = 1;
    if (want[KERNEL_MEMORY]) {
        walks[0] = walk_new(1);
        walks[1] = walk_new(2);
        if (walks[0] == NULL || walks[1] == NULL) {
            fprintf(stderr, "cpu-ceiling: out of memory for the walk "
                            "(2 x 64 MiB)\n");
            rc = 1;
        }
    }
    for (k = 0; k < KERNELS && rc == 0; k++)
        if (want[k])
            rc = run_kernel(k, (int)pairs, (double)ms, walks);
    free(walks[0]);
    free(walks[1]);
    return rc;
}
