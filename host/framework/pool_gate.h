/*
 * The pool's cycle gate: whether sharing jobs with the workers pays for a
 * whole scheduling cycle, not only for the job that was shared.
 *
 * The pool decides per job (pool.c) from the job's own time. What a
 * worker wrote is read back afterwards by the serial code of the cycle
 * (normalizing, selecting the host, collecting the feasible nodes), from
 * the other core's cache, and a worker spins after each job; neither is
 * in the job's own time. On a cycle whose data do not fit one core's
 * cache twice over (130,000 nodes), sharing that paid per job made the
 * cycle slower. The gate measures what counts: the time of whole cycles
 * run each way.
 *
 * Cycles come in windows of KS_POOL_GATE_WINDOW. A window runs one way:
 * jobs may be shared (the pool's per-job choice), or every job runs
 * inline and the workers sleep. Each way keeps the mean cycle time of its
 * recent windows. First the ways take turns for KS_POOL_GATE_LEARN
 * windows each (sharing first; a way's first window, which warmed the
 * caches up, is then forgotten); then the faster way runs, inline unless sharing saves at least 1/32 of the
 * cycle (a worker that saves nothing costs CPU). Every probe_every-th
 * window runs the other way, so the losing way's mean follows the
 * machine and the workload; a probe that loses again doubles the
 * interval (up to KS_POOL_GATE_PROBE_MAX windows), one that wins resets
 * it. A cycle longer than four times its way's mean counts as four times
 * the mean (a thread off its CPU, a preemption): one such cycle cannot
 * flip the choice.
 *
 * Only cycles that gave the pool a job it could share are noted (a
 * cycle of small jobs runs the same either way). Pure arithmetic on the
 * caller's numbers, no clock and no threads: pool.c feeds it, the tests
 * feed it made-up times. The caller of ks_pool_run only.
 */
#ifndef KS_POOL_GATE_H
#define KS_POOL_GATE_H

#include <stdint.h>

#define KS_POOL_GATE_WINDOW 16
/* Windows each way runs first, in turns, sharing first; the last of them
 * sets the way's mean (the first ones warm the caches up). */
#define KS_POOL_GATE_LEARN 2
#define KS_POOL_GATE_PROBE_MIN 4
#define KS_POOL_GATE_PROBE_MAX 64

typedef enum ks_pool_way {
    KS_POOL_WAY_SHARE = 0,  /* jobs may be shared (the per-job choice) */
    KS_POOL_WAY_INLINE = 1, /* every job inline, workers asleep */
} ks_pool_way_t;

typedef struct ks_pool_gate {
    double mean_ns[2]; /* per way: mean cycle time of its windows */
    uint32_t way_windows[2]; /* per way: windows it ran */
    uint64_t sum_ns;   /* the current window so far */
    uint32_t cycles;   /* noted in the current window */
    uint32_t windows;  /* ended since the start */
    uint32_t probe_every;
    uint32_t since_probe; /* windows since the last probe */
    uint8_t way;       /* the current window's way */
    uint8_t best;      /* the way that wins now */
    uint8_t probe;     /* the current window is a probe */
    /* counts, for diagnostics: cycles noted, and those run inline */
    uint64_t noted, noted_inline;
} ks_pool_gate_t;

/* A gate that knows nothing yet: its first window shares. */
void ks_pool_gate_init(ks_pool_gate_t *g);
/* The way the current window runs. */
static inline ks_pool_way_t ks_pool_gate_way(const ks_pool_gate_t *g)
{
    return (ks_pool_way_t)g->way;
}
/* A cycle of the current window's way took ns: into its window; at the
 * window's end, into the way's mean, and the next window's way chosen. */
void ks_pool_gate_note(ks_pool_gate_t *g, uint64_t ns);

#endif
