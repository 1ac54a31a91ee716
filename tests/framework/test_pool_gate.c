/*
 * The pool's cycle gate (framework/pool_gate.h), fed made-up cycle times:
 * the warm-up window forgotten and the learning probes; the faster way
 * wins, inline unless sharing saves 1/32; probes come further apart while
 * they lose; a change of the machine is followed; cycles that get dearer
 * through the run (a filling cluster) do not fool it; one outlier does
 * not flip the choice.
 */
#include <check.h>

#include "framework/pool_gate.h"

/* Cycle times per way, optionally growing by the fraction `drift` of
 * themselves per window. */
typedef struct load {
    double share_ns, inline_ns, drift;
    unsigned at; /* windows run */
} load_t;

/* The tests' times are in units of 100 ns: 16 cycles of 1,000 units
 * make 1.6 ms, a window (KS_POOL_GATE_WINDOW cycles, at least
 * KS_POOL_GATE_WINDOW_NS). */
#define UNIT 100

/* Windows of cycles whose time depends on the way (and the drift): how
 * many of `windows` windows ran inline. */
static unsigned run_load(ks_pool_gate_t *g, load_t *l, unsigned windows)
{
    unsigned w, c, n_inline = 0;
    for (w = 0; w < windows; w++, l->at++) {
        ks_pool_way_t way = ks_pool_gate_way(g);
        uint32_t w0 = g->windows;
        double t = (way == KS_POOL_WAY_SHARE ? l->share_ns : l->inline_ns) *
                   (1 + l->drift * l->at) * UNIT;
        n_inline += way == KS_POOL_WAY_INLINE;
        for (c = 0; c < KS_POOL_GATE_WINDOW; c++) {
            /* the way holds for the whole window */
            ck_assert_int_eq(ks_pool_gate_way(g), way);
            ks_pool_gate_note(g, (uint64_t)t, 1);
        }
        ck_assert_uint_eq(g->windows, w0 + 1); /* one window ended */
    }
    return n_inline;
}

static unsigned run_windows(ks_pool_gate_t *g, unsigned windows,
                            double share_ns, double inline_ns)
{
    load_t l = {share_ns, inline_ns, 0, 0};
    return run_load(g, &l, windows);
}

/* The order at the start: a warm-up window (sharing, its slow cycles
 * forgotten), then inline windows with a probe of sharing between each
 * two, KS_POOL_GATE_LEARN of them; then the winner. */
START_TEST(learning_first)
{
    static const ks_pool_way_t order[] = {
        KS_POOL_WAY_SHARE, KS_POOL_WAY_INLINE, KS_POOL_WAY_SHARE,
        KS_POOL_WAY_INLINE, KS_POOL_WAY_SHARE, KS_POOL_WAY_INLINE};
    ks_pool_gate_t g;
    unsigned i;
    ks_pool_gate_init(&g);
    for (i = 0; i < sizeof order / sizeof order[0]; i++) {
        ck_assert_msg(ks_pool_gate_way(&g) == order[i], "window %u: way %d",
                      i + 1, ks_pool_gate_way(&g));
        run_windows(&g, 1, i == 0 ? 50000 : 1000, 1000);
    }
    ck_assert_uint_eq(g.samples, KS_POOL_GATE_LEARN);
    ck_assert(g.ratio == 1.0); /* the warm-up left no trace */
    /* equal: inline (a worker that saves nothing costs CPU) */
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_INLINE);
    ck_assert_uint_eq(g.noted, 6 * KS_POOL_GATE_WINDOW);
    ck_assert_uint_eq(g.noted_inline, 3 * KS_POOL_GATE_WINDOW);
}
END_TEST

/* Sharing 20% faster: it runs, and the probes of inline back off to one
 * in about KS_POOL_GATE_PROBE_MAX windows: over 1,000 windows, at most
 * 45 ran inline. */
START_TEST(faster_sharing_runs)
{
    ks_pool_gate_t g;
    unsigned n;
    ks_pool_gate_init(&g);
    run_windows(&g, 6, 800, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    n = run_windows(&g, 1000, 800, 1000);
    ck_assert_msg(n >= 20 && n <= 45, "%u of 1000 windows inline", n);
    ck_assert_uint_eq(g.probe_every, KS_POOL_GATE_PROBE_MAX);
}
END_TEST

/* Sharing slower (the read-back costs more than the job saves): inline
 * runs, sharing only as probes. */
START_TEST(slower_sharing_stops)
{
    ks_pool_gate_t g;
    unsigned n;
    ks_pool_gate_init(&g);
    n = run_windows(&g, 1000, 1300, 1000);
    ck_assert_msg(n >= 955 && n <= 985, "%u of 1000 windows inline", n);
}
END_TEST

/* Sharing 2% faster, under the 1/32 it must save: inline. At 4% it
 * shares. */
START_TEST(marginal_sharing_runs_inline)
{
    ks_pool_gate_t g;
    unsigned n;
    ks_pool_gate_init(&g);
    n = run_windows(&g, 200, 980, 1000);
    ck_assert_msg(n >= 185, "2%% faster: %u of 200 windows inline", n);
    ks_pool_gate_init(&g);
    n = run_windows(&g, 200, 960, 1000);
    ck_assert_msg(n <= 20, "4%% faster: %u of 200 windows inline", n);
}
END_TEST

/* The machine changes (the other CPU gets busy): sharing, which won,
 * turns twice as slow; the next probes see it (two samples at most, each
 * at most PROBE_MAX + 2 windows away); and when sharing pays again, so
 * do they, within four samples (the running mean halves the way back
 * from 2x each time). */
START_TEST(follows_a_change)
{
    ks_pool_gate_t g;
    ks_pool_gate_init(&g);
    run_windows(&g, 300, 800, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    run_windows(&g, 2 * (KS_POOL_GATE_PROBE_MAX + 2), 2000, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_INLINE);
    run_windows(&g, 300, 2000, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_INLINE);
    run_windows(&g, 4 * (KS_POOL_GATE_PROBE_MAX + 2), 800, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
}
END_TEST

/* Cycles that get dearer through the run (each window 1% dearer than
 * the one before, the cluster filling up) while sharing stays 10% slower:
 * a probe is compared with the windows around it, so the drift cannot
 * make the way measured longer ago look cheaper. Inline runs. */
START_TEST(drift_does_not_fool)
{
    ks_pool_gate_t g;
    load_t l = {1100, 1000, 0.01, 0};
    unsigned n;
    ks_pool_gate_init(&g);
    n = run_load(&g, &l, 400);
    ck_assert_msg(n >= 370, "drift: %u of 400 windows inline", n);
    ck_assert_int_eq(g.best, KS_POOL_WAY_INLINE);
    /* and sharing 10% faster under the same drift: sharing runs */
    ks_pool_gate_init(&g);
    l = (load_t){900, 1000, 0.01, 0};
    n = run_load(&g, &l, 400);
    ck_assert_msg(n <= 30, "drift: %u of 400 windows inline", n);
}
END_TEST

/* One cycle of a hundred times the others (a thread off its CPU) in a
 * probe's window is left out of the window's figure: the sample is the
 * same as without it, and the choice holds. */
START_TEST(outlier_does_not_flip)
{
    ks_pool_gate_t g;
    unsigned c;
    double ratio;
    ks_pool_gate_init(&g);
    run_windows(&g, 40, 700, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    while (g.phase != KS_POOL_GATE_PROBE) /* up to the next probe */
        run_windows(&g, 1, 700, 1000);
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_INLINE);
    ratio = g.ratio;
    ks_pool_gate_note(&g, 100000 * UNIT, 1);
    for (c = 1; c < KS_POOL_GATE_WINDOW; c++)
        ks_pool_gate_note(&g, 1000 * UNIT, 1);
    run_windows(&g, 1, 700, 1000); /* the window after */
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    ck_assert_msg(g.ratio == ratio, "ratio %f, was %f", g.ratio, ratio);
}
END_TEST

/* Cycles of 10 us: a window holds 1 ms of them (100), not 16, so that a
 * window of short cycles is not a matter of a few interrupts; cycles of
 * 10 ns end one at KS_POOL_GATE_WINDOW_MAX. The warm-up window, whose
 * figure is forgotten, is 16 cycles of any length. */
START_TEST(short_cycles_longer_windows)
{
    ks_pool_gate_t g;
    unsigned c;
    ks_pool_gate_init(&g);
    /* the warm-up: KS_POOL_GATE_WINDOW cycles, however short */
    for (c = 0; c < KS_POOL_GATE_WINDOW - 1; c++)
        ks_pool_gate_note(&g, 10000, 1);
    ck_assert_uint_eq(g.windows, 0);
    ks_pool_gate_note(&g, 10000, 1);
    ck_assert_uint_eq(g.windows, 1);
    for (c = 0; c < 99; c++)
        ks_pool_gate_note(&g, 10000, 1);
    ck_assert_uint_eq(g.windows, 1);
    ks_pool_gate_note(&g, 10000, 1);
    ck_assert_uint_eq(g.windows, 2);
    for (c = 0; c < KS_POOL_GATE_WINDOW_MAX - 1; c++)
        ks_pool_gate_note(&g, 10, 1);
    ck_assert_uint_eq(g.windows, 2);
    ks_pool_gate_note(&g, 10, 1);
    ck_assert_uint_eq(g.windows, 3);
}
END_TEST

/* Windows of cycles that, by their way, took share_ns or inline_ns
 * units, each noted with `could`: the ways the windows ran, one letter
 * each (S, I) into out. */
static void run_could(ks_pool_gate_t *g, unsigned windows, int could,
                      char *out)
{
    unsigned w, c;
    for (w = 0; w < windows; w++) {
        ks_pool_way_t way = ks_pool_gate_way(g);
        out[w] = way == KS_POOL_WAY_SHARE ? 'S' : 'I';
        for (c = 0; c < KS_POOL_GATE_WINDOW; c++)
            ks_pool_gate_note(g, 1000 * UNIT, could);
    }
    out[windows] = '\0';
}

/* A probe of sharing waits for a window with a job an awake worker would
 * take: after the warm-up, windows without one run inline, learning
 * included, until KS_POOL_GATE_PROBE_MAX windows have passed; the first
 * window with one is followed by a probe. */
START_TEST(probe_waits_for_a_job_to_share)
{
    ks_pool_gate_t g;
    char ways[KS_POOL_GATE_PROBE_MAX + 8];
    unsigned i;
    ks_pool_gate_init(&g);
    run_could(&g, 1, 1, ways); /* the warm-up */
    ck_assert_str_eq(ways, "S");
    run_could(&g, KS_POOL_GATE_PROBE_MAX - 1, 0, ways);
    for (i = 0; ways[i]; i++)
        ck_assert_msg(ways[i] == 'I', "window %u shared: %s", i + 2, ways);
    ck_assert_uint_eq(g.samples, 0);
    /* the longest interval reached: a probe all the same */
    run_could(&g, 2, 0, ways);
    ck_assert_str_eq(ways, "IS");
    run_could(&g, 1, 0, ways); /* the window after the probe */
    ck_assert_str_eq(ways, "I");
    ck_assert_uint_eq(g.samples, 1);
    /* a window with a job to share: the next learning probe follows it */
    run_could(&g, 1, 0, ways);
    ck_assert_str_eq(ways, "I");
    run_could(&g, 1, 1, ways);
    ck_assert_str_eq(ways, "I");
    run_could(&g, 1, 1, ways);
    ck_assert_str_eq(ways, "S");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool-gate");
    TCase *tc = tcase_create("pool-gate");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, learning_first);
    tcase_add_test(tc, faster_sharing_runs);
    tcase_add_test(tc, slower_sharing_stops);
    tcase_add_test(tc, marginal_sharing_runs_inline);
    tcase_add_test(tc, follows_a_change);
    tcase_add_test(tc, drift_does_not_fool);
    tcase_add_test(tc, outlier_does_not_flip);
    tcase_add_test(tc, short_cycles_longer_windows);
    tcase_add_test(tc, probe_waits_for_a_job_to_share);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
