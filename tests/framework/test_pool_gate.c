/*
 * The pool's cycle gate (framework/pool_gate.h), fed made-up cycle times:
 * unknown ways run first; the faster way wins, inline unless sharing
 * saves 1/32; probes of the losing way come further apart while they
 * lose, and one that wins switches at once; a change of the machine is
 * followed; one outlier does not flip the choice.
 */
#include <check.h>

#include "framework/pool_gate.h"

/* Windows of cycles whose time depends on the way only: how many of
 * `windows` windows ran inline. */
static unsigned run_windows(ks_pool_gate_t *g, unsigned windows,
                            uint64_t share_ns, uint64_t inline_ns)
{
    unsigned w, c, n_inline = 0;
    for (w = 0; w < windows; w++) {
        ks_pool_way_t way = ks_pool_gate_way(g);
        n_inline += way == KS_POOL_WAY_INLINE;
        for (c = 0; c < KS_POOL_GATE_WINDOW; c++) {
            /* the way holds for the whole window */
            ck_assert_int_eq(ks_pool_gate_way(g), way);
            ks_pool_gate_note(g, way == KS_POOL_WAY_SHARE ? share_ns
                                                          : inline_ns);
        }
    }
    return n_inline;
}

START_TEST(unknown_ways_first)
{
    ks_pool_gate_t g;
    ks_pool_gate_init(&g);
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_SHARE);
    /* turns, sharing first; the first windows (warming up) are slow and
     * forgotten */
    run_windows(&g, 1, 5000, 5000);
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_INLINE);
    run_windows(&g, 1, 5000, 5000);
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_SHARE);
    run_windows(&g, 1, 100, 100);
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_INLINE);
    run_windows(&g, 1, 100, 100);
    ck_assert(g.mean_ns[KS_POOL_WAY_SHARE] == 100 &&
              g.mean_ns[KS_POOL_WAY_INLINE] == 100);
    /* equal: inline (a worker that saves nothing costs CPU) */
    ck_assert_int_eq(ks_pool_gate_way(&g), KS_POOL_WAY_INLINE);
    ck_assert_uint_eq(g.noted, 4 * KS_POOL_GATE_WINDOW);
    ck_assert_uint_eq(g.noted_inline, 2 * KS_POOL_GATE_WINDOW);
}
END_TEST

/* Sharing 20% faster: it runs, and the probes of inline back off to one
 * window in KS_POOL_GATE_PROBE_MAX: over 1,000 windows after the first
 * four, 4 + 8 + 16 + 32 + 64 * n apart, at most 20 ran inline. */
START_TEST(faster_sharing_runs)
{
    ks_pool_gate_t g;
    unsigned n;
    ks_pool_gate_init(&g);
    run_windows(&g, 4, 800, 1000);
    n = run_windows(&g, 1000, 800, 1000);
    ck_assert_msg(n >= 5 && n <= 20, "%u of 1000 windows inline", n);
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
    ck_assert_msg(n >= 980 && n <= 995, "%u of 1000 windows inline", n);
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
    ck_assert_msg(n >= 190, "2%% faster: %u of 200 windows inline", n);
    ks_pool_gate_init(&g);
    n = run_windows(&g, 200, 960, 1000);
    ck_assert_msg(n <= 12, "4%% faster: %u of 200 windows inline", n);
}
END_TEST

/* The machine changes (the other CPU gets busy): sharing, which won,
 * turns slower; the gate stays with it only until it is measured so,
 * within its own next windows; and when sharing pays again, the probes
 * see it within two of them. */
START_TEST(follows_a_change)
{
    ks_pool_gate_t g;
    unsigned n;
    ks_pool_gate_init(&g);
    run_windows(&g, 300, 800, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    /* sharing now twice as slow: at most a few windows to notice */
    n = run_windows(&g, 4, 2000, 1000);
    ck_assert_msg(g.best == KS_POOL_WAY_INLINE,
                  "still sharing after 4 slow windows (%u inline)", n);
    run_windows(&g, 300, 2000, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_INLINE);
    /* and back: a probe's window moves its way's mean by 3/4, so the
     * second probe (each at most PROBE_MAX windows away) wins */
    n = run_windows(&g, 2 * KS_POOL_GATE_PROBE_MAX + 2, 800, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
}
END_TEST

/* One cycle of a hundred times the mean (a thread off its CPU) in the
 * winning way's window counts as four times the mean: the window's mean
 * goes up by under a fifth, and the choice holds. */
START_TEST(outlier_does_not_flip)
{
    ks_pool_gate_t g;
    unsigned c;
    ks_pool_gate_init(&g);
    run_windows(&g, 40, 700, 1000);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    while (ks_pool_gate_way(&g) != KS_POOL_WAY_SHARE)
        run_windows(&g, 1, 700, 1000);
    ks_pool_gate_note(&g, 70000);
    for (c = 1; c < KS_POOL_GATE_WINDOW; c++)
        ks_pool_gate_note(&g, 700);
    ck_assert_int_eq(g.best, KS_POOL_WAY_SHARE);
    ck_assert_msg(g.mean_ns[KS_POOL_WAY_SHARE] < 800, "share mean %.0f",
                  g.mean_ns[KS_POOL_WAY_SHARE]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool-gate");
    TCase *tc = tcase_create("pool-gate");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, unknown_ways_first);
    tcase_add_test(tc, faster_sharing_runs);
    tcase_add_test(tc, slower_sharing_stops);
    tcase_add_test(tc, marginal_sharing_runs_inline);
    tcase_add_test(tc, follows_a_change);
    tcase_add_test(tc, outlier_does_not_flip);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
