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
 * Cycles come in windows of KS_POOL_GATE_WINDOW cycles and at least
 * KS_POOL_GATE_WINDOW_NS (short cycles: more of them, up to
 * KS_POOL_GATE_WINDOW_MAX), each run one way: jobs
 * may be shared (the pool's per-job choice), or every job runs inline and
 * the workers sleep. A window's figure is the mean of its cycles without
 * its two longest (a thread off its CPU, an interrupt, a preemption's
 * cycle would otherwise move a window of short cycles by a fifth).
 * Windows run the way that wins now (the base way);
 * every probe_every-th one runs the other way (a probe). A probe is
 * compared with the base windows just before and just after it: the
 * ratio of its mean cycle time to theirs is one sample of how the two
 * ways compare, free of the workload's drift (cycles that get dearer as
 * the cluster fills would favour whichever way was measured earlier if
 * each way kept its own mean). The samples' running mean (the newest
 * weighs half) decides: sharing wins when it takes at most 31/32 of the
 * inline time (a worker that saves nothing costs CPU). A probe that
 * loses again doubles the interval (up to KS_POOL_GATE_PROBE_MAX
 * windows); one that changes the winner resets it.
 *
 * At the start: a window of KS_POOL_GATE_WINDOW cycles, however short,
 * that warms the caches up and is forgotten, then
 * KS_POOL_GATE_LEARN probes of sharing between inline windows, one
 * window apart.
 *
 * Only cycles that gave the pool a job it could share are noted (a cycle
 * of small jobs runs the same either way). A probe of sharing waits for
 * a window in which some cycle had a job that the per-job estimates
 * would hand to an awake worker (or one they know nothing of): in a
 * window without one, sharing would hand nothing over, and all the probe
 * would measure is the cost of waking the workers for nothing (on a
 * short run of cheap cycles, 3% to 5% of it at parallelism 2). It waits
 * KS_POOL_GATE_PROBE_MAX windows at most, so that a change the per-job
 * estimates do not show is still found. Pure arithmetic on the
 * caller's numbers, no clock and no threads: pool.c feeds it, the tests
 * feed it made-up times. The caller of ks_pool_run only.
 */
#ifndef KS_POOL_GATE_H
#define KS_POOL_GATE_H

#include <stdint.h>

#define KS_POOL_GATE_WINDOW 16
#define KS_POOL_GATE_WINDOW_NS 1000000
#define KS_POOL_GATE_WINDOW_MAX 1024
#define KS_POOL_GATE_LEARN 2
#define KS_POOL_GATE_PROBE_MIN 4
#define KS_POOL_GATE_PROBE_MAX 32

typedef enum ks_pool_way {
    KS_POOL_WAY_SHARE = 0,  /* jobs may be shared (the per-job choice) */
    KS_POOL_WAY_INLINE = 1, /* every job inline, workers asleep */
} ks_pool_way_t;

/* Where the gate is between windows (ks_pool_gate_t.phase). */
typedef enum ks_pool_gate_phase {
    KS_POOL_GATE_BASE,  /* a window of the base way */
    KS_POOL_GATE_PROBE, /* a probe: the other way */
    KS_POOL_GATE_AFTER, /* the base window after a probe */
} ks_pool_gate_phase_t;

typedef struct ks_pool_gate {
    /* share / inline mean cycle time, from the probes' samples; 0 while
     * there is none */
    double ratio;
    uint32_t samples;
    double before_ns;   /* a probe's: the base window before it */
    double probe_ns;    /* the probe's own mean, until the window after */
    uint64_t sum_ns;    /* the current window so far */
    uint64_t top_ns[2]; /* its two longest cycles, the longest first */
    uint32_t cycles;    /* noted in the current window */
    uint32_t could;     /* of them, cycles with a job to hand over */
    uint32_t windows;   /* ended since the start */
    uint32_t probe_every;
    uint32_t since_probe; /* base windows since the last probe's after */
    uint8_t way;        /* the current window's way */
    uint8_t best;       /* the base way */
    uint8_t phase;      /* a ks_pool_gate_phase_t */
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
 * window's end, the next window's way chosen. could: the cycle had a job
 * the per-job estimates would share with an awake worker. */
void ks_pool_gate_note(ks_pool_gate_t *g, uint64_t ns, int could);

#endif
