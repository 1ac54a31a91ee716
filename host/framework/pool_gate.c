/*
 * The pool's cycle gate (pool_gate.h): sharing or inline, by the time of
 * whole cycles, a probe against the base windows around it.
 */
#include "pool_gate.h"

#include <string.h>

/* Sharing must save this fraction of the inline cycle to be chosen. */
#define SHARE_SAVES (1.0 / 32)
/* A new sample weighs this much in the running mean of the ratio. */
#define WEIGHT 0.5

void ks_pool_gate_init(ks_pool_gate_t *g)
{
    memset(g, 0, sizeof *g);
    g->probe_every = 1; /* learning: a probe after every base window */
    g->way = KS_POOL_WAY_SHARE; /* the warm-up window */
    g->best = KS_POOL_WAY_INLINE;
    g->phase = KS_POOL_GATE_BASE;
}

/* A probe's window (probe_ns) between base windows of before_ns and
 * after_ns: one sample of share / inline, then the base way. */
static void take_sample(ks_pool_gate_t *g, double after_ns)
{
    double base = (g->before_ns + after_ns) / 2, r;
    uint8_t best;
    if (base <= 0 || g->probe_ns <= 0)
        return;
    r = g->probe_ns / base; /* probe / base */
    if (g->best == KS_POOL_WAY_SHARE)
        r = 1 / r; /* the probe ran inline */
    g->ratio = g->samples == 0 ? r : g->ratio + (r - g->ratio) * WEIGHT;
    g->samples++;
    if (g->samples < KS_POOL_GATE_LEARN)
        return;
    best = g->ratio < 1 - SHARE_SAVES ? KS_POOL_WAY_SHARE
                                      : KS_POOL_WAY_INLINE;
    if (g->samples == KS_POOL_GATE_LEARN || best != g->best) {
        /* learnt, or the other way wins now: its rival is checked again
         * soon (a sample may be an outlier's) */
        g->probe_every = KS_POOL_GATE_PROBE_MIN;
    } else if (g->probe_every < KS_POOL_GATE_PROBE_MAX) {
        g->probe_every *= 2; /* a probe that lost again */
    }
    if (best != g->best)
        g->since_probe = 0; /* a base window of the new way first */
    g->best = best;
}

/* The window just ended with mean v: the next window's way. */
static void end_window(ks_pool_gate_t *g, double v)
{
    g->windows++;
    if (g->windows == 1) {
        /* the warm-up window: forgotten */
        g->way = g->best;
        return;
    }
    switch (g->phase) {
    case KS_POOL_GATE_PROBE:
        g->probe_ns = v;
        g->phase = KS_POOL_GATE_AFTER;
        g->way = g->best;
        return;
    case KS_POOL_GATE_AFTER:
        g->since_probe = 1;
        take_sample(g, v);
        break;
    default:
        g->since_probe++;
        break;
    }
    if (g->since_probe >= g->probe_every &&
        (g->best == KS_POOL_WAY_SHARE || g->could > 0 ||
         g->since_probe >= KS_POOL_GATE_PROBE_MAX)) {
        /* a probe of sharing only after a window with a job to share (or
         * after the longest interval): pool_gate.h */
        g->phase = KS_POOL_GATE_PROBE;
        g->before_ns = v;
        g->way = (uint8_t)!g->best;
    } else {
        g->phase = KS_POOL_GATE_BASE;
        g->way = g->best;
    }
}

void ks_pool_gate_note(ks_pool_gate_t *g, uint64_t ns, int could)
{
    g->noted++;
    g->could += could != 0;
    if (g->way == KS_POOL_WAY_INLINE)
        g->noted_inline++;
    g->sum_ns += ns;
    if (ns > g->top_ns[1]) {
        if (ns > g->top_ns[0]) {
            g->top_ns[1] = g->top_ns[0];
            g->top_ns[0] = ns;
        } else {
            g->top_ns[1] = ns;
        }
    }
    /* the warm-up window (windows == 0) is KS_POOL_GATE_WINDOW cycles
     * whatever their length: its figure is forgotten, and on a short run
     * of short cycles a millisecond of them shared was most of what a
     * second worker cost */
    if (++g->cycles < KS_POOL_GATE_WINDOW ||
        (g->windows > 0 && g->sum_ns < KS_POOL_GATE_WINDOW_NS &&
         g->cycles < KS_POOL_GATE_WINDOW_MAX))
        return;
    /* the mean without the two longest cycles */
    end_window(g, (double)(g->sum_ns - g->top_ns[0] - g->top_ns[1]) /
                      (g->cycles - 2));
    g->sum_ns = 0;
    g->top_ns[0] = g->top_ns[1] = 0;
    g->cycles = 0;
    g->could = 0;
}
