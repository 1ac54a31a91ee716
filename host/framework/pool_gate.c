/*
 * The pool's cycle gate (pool_gate.h): sharing or inline, by the time of
 * whole cycles.
 */
#include "pool_gate.h"

#include <string.h>

/* Sharing must save this fraction of the inline cycle to be chosen. */
#define SHARE_SAVES (1.0 / 32)
/* A window's mean moves its way's mean by this much; a probe's, which
 * comes rarely, by more. */
#define WEIGHT 0.25
#define PROBE_WEIGHT 0.75
/* A cycle counts as at most this many times its way's mean. */
#define CLAMP 4

void ks_pool_gate_init(ks_pool_gate_t *g)
{
    memset(g, 0, sizeof *g);
    g->probe_every = KS_POOL_GATE_PROBE_MIN;
    g->way = KS_POOL_WAY_SHARE;
    g->best = KS_POOL_WAY_SHARE;
}

static uint8_t best_way(const ks_pool_gate_t *g)
{
    return g->mean_ns[KS_POOL_WAY_SHARE] * (1 + SHARE_SAVES) <
                   g->mean_ns[KS_POOL_WAY_INLINE]
               ? KS_POOL_WAY_SHARE
               : KS_POOL_WAY_INLINE;
}

/* The window just ended with mean v: into its way's mean, then the way
 * of the next window. */
static void end_window(ks_pool_gate_t *g, double v)
{
    double *m = &g->mean_ns[g->way];
    uint8_t best;
    /* a way's first window holds the cycles that warmed the caches up:
     * its second replaces it */
    if (g->way_windows[g->way] < KS_POOL_GATE_LEARN)
        *m = v;
    else
        *m += (v - *m) * (g->probe ? PROBE_WEIGHT : WEIGHT);
    g->way_windows[g->way]++;
    g->windows++;
    if (g->way_windows[KS_POOL_WAY_INLINE] < KS_POOL_GATE_LEARN) {
        /* still learning: the ways take turns, sharing first */
        g->way = g->way_windows[KS_POOL_WAY_SHARE] >
                         g->way_windows[KS_POOL_WAY_INLINE]
                     ? KS_POOL_WAY_INLINE
                     : KS_POOL_WAY_SHARE;
        g->probe = 0;
        return;
    }
    best = best_way(g);
    if (best != g->best) {
        /* the other way wins now (a probe won, or the winner's windows
         * got slower): the loser is checked again soon, its mean may be
         * an outlier's */
        g->probe_every = KS_POOL_GATE_PROBE_MIN;
    } else if (g->probe && g->probe_every < KS_POOL_GATE_PROBE_MAX) {
        g->probe_every *= 2; /* a probe that lost again */
    }
    g->best = best;
    g->probe = ++g->since_probe >= g->probe_every;
    if (g->probe)
        g->since_probe = 0;
    g->way = g->probe ? (uint8_t)!best : best;
}

void ks_pool_gate_note(ks_pool_gate_t *g, uint64_t ns)
{
    double m = g->mean_ns[g->way];
    if (m > 0 && (double)ns > CLAMP * m)
        ns = (uint64_t)(CLAMP * m);
    g->noted++;
    if (g->way == KS_POOL_WAY_INLINE)
        g->noted_inline++;
    g->sum_ns += ns;
    if (++g->cycles < KS_POOL_GATE_WINDOW)
        return;
    end_window(g, (double)g->sum_ns / g->cycles);
    g->sum_ns = 0;
    g->cycles = 0;
}
