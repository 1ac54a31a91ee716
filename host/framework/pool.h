/*
 * A fixed pool of worker threads running parallel-for loops (upstream's
 * parallelize.Until). The calling thread takes part in the work, so a pool of
 * N runs N-1 extra threads.
 *
 * ks_pool_run() splits [0, n) into chunks and calls fn(ud, begin, end, worker)
 * for each, returning when every chunk is done. `worker` is in [0, N) and
 * lets callers keep per-worker scratch space. One ks_pool_run at a time per
 * pool (loop thread only).
 *
 * Whether a job is shared at all is the pool's choice, per call site
 * (the job's function): it times the site's jobs both ways and shares
 * them only when that saves a fifth of the time per item (pool.c), so a
 * job whose items are too cheap to hand over runs inline and wakes no
 * worker. Within a scheduling cycle (ks_pool_cycle_begin), a gate above
 * that choice times whole cycles with and without sharing and runs every
 * job inline when sharing does not make the cycle faster. Either way fn
 * sees [0, n) once: one call over all of it, or chunks of `chunk` items.
 * A chunk of ks_pool_run starts at a multiple of `chunk` (the last may be
 * shorter); ks_pool_run_affine's chunks start at multiples of `chunk` from
 * 0 or from the split.
 *
 * While a thread runs a job's chunks (a worker, the calling thread's own
 * share, or the whole job inline when there is no pool), ks_pool_in_job()
 * is non-zero on it: the host API refuses its loop-thread-only functions
 * there (thread_rules.h), whichever thread happens to run the chunk.
 */
#ifndef KS_POOL_H
#define KS_POOL_H

#include <stdint.h>

typedef struct ks_pool ks_pool_t;
typedef void (*ks_pool_fn)(void *ud, uint32_t begin, uint32_t end,
                           unsigned worker);

/* A pool of `threads` threads, the caller included, but at most one per
 * online CPU. NULL when out of memory.
 *
 * KSCHED_POOL_CHAOS set (and not "0") in the environment when the pool is
 * made: a test mode in which results must not change. Every job of more
 * than one chunk is shared or run inline at random, whatever the timing
 * says, and a third of the chunks a thread claims start after a random
 * sleep of up to 300 us (a thread the OS took off its CPU). The counts
 * below then count nothing. Seeded from the clock: every run differs. */
ks_pool_t *ks_pool_new(int threads);
void ks_pool_free(ks_pool_t *p);
unsigned ks_pool_size(const ks_pool_t *p);
/* How many of the extra threads sleep (waiting for a job without
 * spinning): after SPIN_NS without a job, every one of them. For tests and
 * diagnostics; any thread. */
unsigned ks_pool_sleeping(ks_pool_t *p);
/* How long an idle worker now spins for the next job before it sleeps,
 * in nanoseconds: twice the recent gaps between shared jobs, at most
 * 50 us. For tests and diagnostics; any thread. */
unsigned ks_pool_spin_ns(ks_pool_t *p);
/* The jobs of more than one chunk the pool was given since it started:
 * those it shared with the workers, those it ran inline (the call site's
 * choice, the cycle gate's, or a stretch after a stall), and the items of
 * each kind. Jobs of one chunk always run inline and are not counted.
 * Then the cycles the gate timed (pool_gate.h), those of them it ran
 * inline, and what a cycle shared takes of one inline, as it measured
 * (0 while unknown), and the cycles the gate did not time because they
 * ran partly in a stall's inline stretch. Then how many times a worker
 * left its sleep (for a job, or woken by a cycle's start). Zeros for
 * NULL. The loop thread (the caller of ks_pool_run) only. */
typedef struct ks_pool_counts {
    uint64_t shared, inline_jobs;
    uint64_t shared_items, inline_items;
    uint64_t gate_cycles, gate_inline_cycles;
    double gate_ratio;
    uint64_t stall_cycles;
    uint64_t wakeups;
} ks_pool_counts_t;
ks_pool_counts_t ks_pool_counts(const ks_pool_t *p);
/* A scheduling cycle starts, and ends: between the two, whether the
 * pool's jobs may be shared at all is the cycle gate's choice
 * (pool_gate.h), which times whole cycles each way; `counts` 0 ends a
 * cycle that is not to be timed (it was suspended, say). Outside a cycle
 * every job is the pool's per-job choice. p may be NULL. The loop thread
 * only, one cycle at a time. */
void ks_pool_cycle_begin(ks_pool_t *p);
void ks_pool_cycle_end(ks_pool_t *p, int counts);
/* From inside a job's fn (any thread): no chunk of the running job is
 * claimed after this; chunks already claimed run to their end, the rest
 * are never called, and ks_pool_run returns once the claimed ones are
 * done (upstream cancels parallelize.Until's context so). For a job whose
 * remaining chunks would find nothing to do (Filter has found the nodes
 * it wants): claiming them costs a cross-core round trip each. No effect
 * on a job run inline (its fn decides alone) or with p NULL. */
void ks_pool_cut(ks_pool_t *p);
/* p may be NULL: runs inline. */
void ks_pool_run(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                 void *ud);
/* ks_pool_run for a job whose chunks may run in any order: shared, the
 * calling thread claims chunks of [0, n / threads) first and the workers
 * those of the rest, each taking the other's next chunks once its own
 * are claimed. A thread then meets the same items from one job to the
 * next (the Score rows of the same nodes, say), and what it wrote in one
 * job is still in its cache for the next. (ks_pool_run's chunks are
 * claimed in order by all threads: a job that cuts at a count, as
 * Filter does, needs that.) */
void ks_pool_run_affine(ks_pool_t *p, uint32_t n, uint32_t chunk,
                        ks_pool_fn fn, void *ud);

/* Clocking the jobs a second thread could split, to bound what more
 * threads can gain (Amdahl's law; ksched-bench --splittable): while on,
 * the calling thread's ks_pool_run and ks_pool_run_affine calls of more
 * than one chunk that are not nested in another job are timed, whatever
 * runs them (inline, shared, or no pool at all: p NULL, parallelism 1).
 * ks_pool_clock_jobs(1) starts the count from zero, (0) stops it;
 * ks_pool_clocked_ns() is the time so far, ks_pool_clocked_jobs() the
 * jobs. Off, a job costs one thread-local load more. The counts are the
 * calling thread's own. */
#define KS_POOL_CLOCK_JOBS 1
void ks_pool_clock_jobs(int on);
uint64_t ks_pool_clocked_ns(void);
uint64_t ks_pool_clocked_jobs(void);

/* Set on a thread while it runs chunks of a job; read it through
 * ks_pool_in_job(). Thread-local: costs one load, no synchronisation. */
extern _Thread_local int ks_pool_job_depth;

/* The `worker` index of the calling thread in its pool: a pool's extra
 * threads are 1 to N-1, every other thread 0. */
extern _Thread_local unsigned ks_pool_worker_id;

/* Non-zero when the calling thread is running a ks_pool_run job's chunk. */
static inline int ks_pool_in_job(void)
{
    return ks_pool_job_depth != 0;
}

#endif
