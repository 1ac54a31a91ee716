/*
 * Worker threads for parallel-for loops (pool.h). Out of memory in
 * ks_pool_new: NULL, every thread started so far stopped and joined; a
 * thread the system refuses to start leaves a smaller pool.
 *
 * How a job runs, and why so:
 * - The caller publishes the job and takes part in it at once. Chunks are
 *   claimed from one 64-bit word holding the job's epoch and the next
 *   index, by compare-and-swap: a claim succeeds only while its job is
 *   the current one, so a worker that wakes late can never run a chunk of
 *   the next job with the previous job's function.
 * - The caller waits for the chunks to be *done* (a count of finished
 *   items), not for the workers to check in. A worker still waking up
 *   when the caller has claimed every chunk costs the caller nothing: it
 *   finds no chunk and goes back to waiting. (Waiting for every worker to
 *   acknowledge each job made a sleeping worker's wake-up latency part of
 *   every scheduling cycle, which made two threads slower than one.)
 * - The job's description lives in one of two slots, chosen by the
 *   epoch's parity, written before the epoch is published; a claim that
 *   succeeds proves the job is still running (its items are not all
 *   done), so the slot cannot have been reused for the job after next.
 * - Between jobs a worker spins for a bounded time (SPIN_NS), because
 *   scheduling cycles come back to back tens of microseconds apart, then
 *   sleeps on a condition variable: an idle pool takes no CPU. The caller
 *   pays for a wake-up only when some worker sleeps.
 * - Jobs too small to share (a single chunk) run inline.
 * - A job the site's inline mean puts under SHARE_MIN_NS runs inline.
 * - Whether sharing a job pays is measured, per call site (the job's
 *   function): the caller times every job it may share, shared or
 *   inline, and keeps the mean time per item of three ways: inline,
 *   shared while a worker was awake (spinning: it joins at once) and
 *   shared while every worker slept (the caller pays a wake-up, the
 *   worker joins late). SITES sites; later ones are always shared. A
 *   site's job is shared when that way (the one that matches the
 *   workers' state now) takes at most 1/SHARE_GAIN of the inline time per
 *   item, and runs inline otherwise, except every PROBE_EVERY-th job,
 *   which runs the other way so that the estimate of the losing way
 *   follows the machine; each probe that loses again doubles that
 *   interval, up to PROBE_MAX jobs, and one that wins resets it. Jobs
 *   whose items are too cheap to hand over, and jobs the workers cannot
 *   help with because they are asleep or off their CPU, so run inline
 *   and wake nobody.
 * - How long a worker spins between jobs follows the gaps the caller
 *   sees between shared jobs: twice the longest recent gap shorter than
 *   SPIN_NS (a maximum that loses 1/16 at each shared job) plus
 *   SPIN_MIN_NS, at most SPIN_NS. A cycle whose
 *   shared jobs are separated by long serial work (a PreFilter over
 *   every pod) gets workers that sleep at once instead of spinning
 *   through it.
 * - A worker the system took off its CPU while it held a chunk (more
 *   runnable threads than CPUs: a loaded machine) makes the caller wait
 *   for that chunk for as long as the worker is off. When the caller
 *   waits more than twice its own share of a job (and STALL_NS), jobs run
 *   inline on the caller for STALL_STRETCH times that wait (at most
 *   STALL_STRETCH_MAX_NS), then sharing is tried again. However often the
 *   stalls come, they then take at most 1/(STALL_STRETCH + 1) of the
 *   time: on a loaded machine (waits of a time slice, milliseconds) a
 *   second thread costs about what one does instead of stalling every
 *   cycle, and on a machine whose CPUs are taken away now and then for
 *   tens of microseconds (a virtual machine's) sharing resumes a few
 *   cycles later. (A stretch counted in jobs and doubled at every stall
 *   within 4,096 shared jobs of the last ran three quarters of the jobs
 *   inline after six such waits of 40 us in a second.)
 *   Inline or shared, a job's chunks and results are the same.
 * - Above the per-job choice, within a scheduling cycle
 *   (ks_pool_cycle_begin/_end), the cycle gate (pool_gate.h) times whole
 *   cycles with sharing allowed and with every job inline, and runs the
 *   cycle's jobs inline when that is faster: what a worker wrote is read
 *   back by the cycle's serial code, a cost no job's own time shows.
 *   Cycles run partly in a stall's inline stretch are not timed.
 * - A cycle in a sharing window nudges sleeping workers as it starts
 *   (they spin again until its first job): a job that found them asleep
 *   would run inline, and so would every one after it. Only when the
 *   last cycle with jobs had one an awake worker would take (its site's
 *   estimates share it then, or are not known yet: site_could_share),
 *   and at every NUDGE_EVERY-th start anyway so that those estimates
 *   stay current: a cycle of jobs too cheap to hand over woke the worker
 *   for nothing, a futex call on the caller and a spin on the worker.
 * - ks_pool_cut lets a job's fn leave the chunks nobody claimed yet
 *   unclaimed; they count as done.
 * - An affine job (ks_pool_run_affine) has two ranges, each claimed
 *   through a word of its own: the caller's, [0, n / threads), and the
 *   workers', the rest. Each thread claims from its own range first, then
 *   from the other. So a thread meets the same items from one job to the
 *   next, and the rows it wrote (Score rows, totals, normalized lists)
 *   are still in its cache for the next job that reads or writes them.
 *   With every thread claiming from one counter, half the rows changed
 *   cores at every job: a shared Score copy cost the caller 1.5x to 2.5x
 *   its inline time per node. The second word is written before the
 *   first, so a worker that sees the job sees both; a claim on it checks
 *   the epoch as one on the first does.
 */
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/mono_clock.h"
#include "pool_gate.h"

/* The longest an idle worker spins for the next job before it sleeps. */
#define SPIN_NS 50000
/* The spin when no recent gap between shared jobs was shorter than
 * SPIN_NS. */
#define SPIN_MIN_NS 2000
/* Call sites whose cost is measured; every PROBE_EVERY-th job of a site
 * (at first) runs the way that is not the best one. */
#define SITES 32
#define PROBE_EVERY 32
/* Probes that keep losing come further apart, up to one in PROBE_MAX. */
#define PROBE_MAX 1024
/* A site's first inline jobs: their lowest time is its inline mean. */
#define INLINE_FIRST 3
/* A site's jobs are shared only when sharing takes at most 1/SHARE_GAIN
 * of the inline time per item: what the workers wrote is read back by the
 * serial code after the job, from the other core's cache, and a worker
 * spins after a shared job; neither is in the job's own time. At break
 * even, sharing made a second thread slower than one. */
#define SHARE_GAIN 1.25f
/* A job the site's inline mean says takes less than this runs inline,
 * probes included: handing it over saves at most half of it, and what a
 * worker wrote is read back from the other core's cache by the serial
 * code that follows, a cost the job's own time does not show. */
#define SHARE_MIN_NS 25000
/* A cycle start wakes sleeping workers only when the last cycle had a
 * job they could take, and at every NUDGE_EVERY-th cycle start anyway. */
#define NUDGE_EVERY 64
/* A wait for the other threads' chunks longer than this and than twice
 * the caller's own share is a stall; then jobs run inline for
 * STALL_STRETCH times the wait, at most STALL_STRETCH_MAX_NS. */
#define STALL_NS 20000
#define STALL_STRETCH 8
#define STALL_STRETCH_MAX_NS 2000000000ull
/* Epoch and next index in one word: the index is the low 32 bits. */
#define WORD(epoch, next) (((uint64_t)(epoch) << 32) | (uint32_t)(next))
#define WORD_EPOCH(w) ((uint32_t)((w) >> 32))
#define WORD_NEXT(w) ((uint32_t)(w))

_Thread_local int ks_pool_job_depth;
_Thread_local unsigned ks_pool_worker_id;

/* One call site's measured cost: mean nanoseconds per item (an
 * exponential average, 1/4 weight for the newest), 0 while unknown;
 * shared_ns[1] while a worker was awake, [0] while all slept. */
typedef struct site {
    ks_pool_fn fn;
    uint32_t jobs;
    float inline_ns, shared_ns[2];
    /* Probes: one every probe_every jobs; probe: the running job is one
     * (1 + the workers' state it was chosen for), probe_share the way it
     * lost to. */
    uint32_t probe_every;
    uint8_t probe, probe_share;
    uint8_t last_share; /* the way chosen last; a change resets probes */
    /* inline jobs timed so far, up to INLINE_FIRST: until then the
     * inline mean is the lowest of them (a site's first job runs on cold
     * caches and pages: 100 times its later cost was seen), and jobs the
     * gate runs inline are timed */
    uint8_t inline_seen;
} site_t;

/* A job: fn(ud, ...) over [0, n) in chunks. Items [0, split) are
 * claimed through p->word, [split, n) through p->word2 (an affine job,
 * ks_pool_run_affine; split is n otherwise). */
typedef struct job_slot {
    _Atomic(ks_pool_fn) fn;
    _Atomic(void *) ud;
    atomic_uint n, chunk, split;
} job_slot_t;

struct ks_pool {
    pthread_t *threads;
    unsigned n_threads; /* extra threads */
    int chaos;          /* KSCHED_POOL_CHAOS (pool.h); set once */
    uint64_t chaos_rng; /* its choices of share or inline (caller) */
    /* written by the caller, read by the workers: own cache lines */
    _Alignas(64) _Atomic uint64_t word; /* epoch << 32 | next index */
    /* slots[epoch & 1]: read once per job by each thread, on a line of
     * their own (word changes at every claim) */
    _Alignas(64) job_slot_t slots[2];
    /* An affine job's second range, from split on: epoch << 32 | next
     * index, written before word (a worker that sees the job in word sees
     * it here too) */
    _Alignas(64) _Atomic uint64_t word2;
    _Alignas(64) atomic_uint done;   /* items finished in this job */
    _Alignas(64) atomic_uint sleepers;
    atomic_int stop;
    uint64_t inline_until; /* after a stall, jobs run inline until then
                            * (ks_mono_ns; 0: no stretch); caller only */
    site_t sites[SITES];  /* caller only */
    /* The cycle gate (pool_gate.h) and the cycle it times (caller). */
    ks_pool_gate_t gate;
    uint64_t cycle_t0;
    uint8_t cycle_open; /* between ks_pool_cycle_begin and _end */
    uint8_t cycle_job;  /* the cycle gave a job the pool could share */
    uint8_t cycle_skip; /* a stall's inline stretch ran part of it */
    /* A job of the cycle that an awake worker could take: one whose
     * site's estimates share it when the workers are awake, or are not
     * known yet (site_could_share); the gate is told too (pool_gate.h).
     * nudge: the last cycle with jobs had one, so the next cycle's start
     * wakes sleeping workers; nudge_skips: cycles since a
     * nudge was skipped for want of one (every NUDGE_EVERY-th nudges all
     * the same, so that the estimates with awake workers stay current). */
    uint8_t cycle_could;
    uint8_t nudge;
    uint32_t nudge_skips;
    ks_pool_counts_t counts; /* caller only */
    uint64_t last_end;    /* when the last shared job ended (caller) */
    uint64_t short_gap;   /* decaying longest gap < SPIN_NS (caller) */
    _Alignas(64) atomic_uint spin_ns; /* written by the caller */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    unsigned nudges; /* under mu: wake-ups without a job */
    atomic_uint_fast64_t wakeups; /* a worker left its sleep */
};

/* xorshift64*: the chaos mode's random numbers (state never 0). */
static uint32_t chaos_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

/* The chaos mode's sleep before a claimed chunk: one time in three, up to
 * 300 us. Each thread its own numbers, seeded from the clock. */
static void chaos_delay(unsigned id)
{
    static _Thread_local uint64_t rng;
    uint32_t r;
    if (rng == 0)
        rng = (ks_mono_ns() ^ ((uint64_t)(id + 1) * 0x9E3779B97F4A7C15ull)) |
              1;
    r = chaos_next(&rng);
    if (r % 3 == 0) {
        struct timespec d = {0, (long)(r >> 8) % 300000L};
        nanosleep(&d, NULL);
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
    ks_pool_t *p;
    unsigned id;
} worker_arg_t;

/* One job's description as a thread reads it once, from its slot. */
typedef struct job_view {
    ks_pool_fn fn;
    void *ud;
    uint32_t n, chunk, split;
} job_view_t;

/* Claim and run the chunks of job `epoch` that word holds (items up to
 * `end`, the range's), until none is left (or a newer job replaced it):
 * the number of items run. */
static uint32_t do_range(ks_pool_t *p, _Atomic uint64_t *word, uint32_t epoch,
                         const job_view_t *v, uint32_t end, unsigned id)
{
    uint32_t ran = 0;
    for (;;) {
        uint64_t w = atomic_load_explicit(word, memory_order_acquire);
        uint32_t b = WORD_NEXT(w), e;
        if (WORD_EPOCH(w) != epoch || b >= end)
            break;
        e = end - b > v->chunk ? b + v->chunk : end;
        if (!atomic_compare_exchange_weak_explicit(word, &w, WORD(epoch, e),
                                                   memory_order_acq_rel,
                                                   memory_order_relaxed))
            continue;
        /* The claim holds the job open: its slot is this job's. */
        if (__builtin_expect(p->chaos, 0))
            chaos_delay(id);
        v->fn(v->ud, b, e, id);
        ran += e - b;
    }
    return ran;
}

/* Claim and run chunks of job `epoch` until none is left: the caller (id
 * 0) from the first range on, the workers from the second (an affine
 * job's; there is none otherwise), each then from the other. The items a
 * thread ran go into done once, when it has no chunk left to claim: done
 * reaches n only when every chunk has run all the same, and the threads
 * do not pass its cache line to and fro at every chunk. */
static void do_chunks(ks_pool_t *p, uint32_t epoch, unsigned id)
{
    const job_slot_t *s = &p->slots[epoch & 1];
    job_view_t v;
    uint32_t ran;
    v.fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    v.ud = atomic_load_explicit(&s->ud, memory_order_relaxed);
    v.n = atomic_load_explicit(&s->n, memory_order_relaxed);
    v.chunk = atomic_load_explicit(&s->chunk, memory_order_relaxed);
    v.split = atomic_load_explicit(&s->split, memory_order_relaxed);
    /* A worker that read the slot of a job already over (it woke late)
     * finds the epoch moved on at its first claim and runs nothing. */
    ks_pool_job_depth++;
    if (v.split >= v.n) {
        ran = do_range(p, &p->word, epoch, &v, v.n, id);
    } else if (id == 0) {
        ran = do_range(p, &p->word, epoch, &v, v.split, id);
        ran += do_range(p, &p->word2, epoch, &v, v.n, id);
    } else {
        ran = do_range(p, &p->word2, epoch, &v, v.n, id);
        ran += do_range(p, &p->word, epoch, &v, v.split, id);
    }
    ks_pool_job_depth--;
    if (ran > 0)
        atomic_fetch_add_explicit(&p->done, ran, memory_order_release);
}

/* A job newer than `seen` to take part in, or stop: its epoch, or 0 when
 * the pool stops (epochs start at 1). Spins, then sleeps; a nudge
 * (ks_pool_cycle_begin) sends a sleeping worker back to spinning. */
static uint32_t wait_for_job(ks_pool_t *p, uint32_t seen)
{
    for (;;) {
        uint64_t t0 = 0;
        unsigned spins = 0, nudges;
        uint64_t spin = atomic_load_explicit(&p->spin_ns,
                                             memory_order_relaxed);
        for (;;) {
            uint32_t e = WORD_EPOCH(atomic_load_explicit(
                &p->word, memory_order_acquire));
            if (atomic_load_explicit(&p->stop, memory_order_relaxed))
                return 0;
            if (e != seen)
                return e;
            if ((++spins & 63) == 0) {
                uint64_t t = ks_mono_ns();
                if (t0 == 0)
                    t0 = t;
                else if (t - t0 > spin)
                    break;
            }
            cpu_relax();
        }
        pthread_mutex_lock(&p->mu);
        atomic_fetch_add(&p->sleepers, 1);
        nudges = p->nudges;
        for (;;) {
            uint32_t e = WORD_EPOCH(atomic_load(&p->word));
            int stop = atomic_load(&p->stop);
            if (!stop && e == seen && p->nudges == nudges) {
                pthread_cond_wait(&p->work_cv, &p->mu);
                continue;
            }
            atomic_fetch_sub(&p->sleepers, 1);
            atomic_fetch_add_explicit(&p->wakeups, 1, memory_order_relaxed);
            pthread_mutex_unlock(&p->mu);
            if (stop)
                return 0;
            if (e != seen)
                return e;
            break; /* nudged: spin again */
        }
    }
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    ks_pool_t *p = wa->p;
    unsigned id = wa->id;
    uint32_t seen = 0, e;
    free(wa);
    ks_pool_worker_id = id;
    while ((e = wait_for_job(p, seen)) != 0) {
        seen = e;
        do_chunks(p, e, id);
    }
    return NULL;
}

ks_pool_t *ks_pool_new(int threads)
{
    ks_pool_t *p = aligned_alloc(64, (sizeof(ks_pool_t) + 63) / 64 * 64);
    unsigned i;
    if (p == NULL)
        return NULL;
    *p = (ks_pool_t){0};
    if (threads < 1)
        threads = 1;
    /* More threads than online CPUs would only take turns (and spin for
     * each other): upstream's goroutines share GOMAXPROCS threads. */
    {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (ncpu >= 1 && threads > ncpu)
            threads = (int)ncpu;
    }
    {
        const char *c = getenv("KSCHED_POOL_CHAOS");
        p->chaos = c != NULL && c[0] != '\0' && strcmp(c, "0") != 0;
        p->chaos_rng = ks_mono_ns() | 1;
    }
    atomic_init(&p->spin_ns, SPIN_NS);
    p->nudge = 1; /* nothing measured yet */
    ks_pool_gate_init(&p->gate);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    if (p->threads == NULL) {
        ks_pool_free(p);
        return NULL;
    }
    for (i = 0; i + 1 < (unsigned)threads; i++) {
        worker_arg_t *wa = malloc(sizeof *wa);
        if (wa == NULL) {
            ks_pool_free(p); /* stops and joins the threads started */
            return NULL;
        }
        wa->p = p;
        wa->id = i + 1;
        if (pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        p->n_threads++;
    }
    return p;
}

ks_pool_counts_t ks_pool_counts(const ks_pool_t *p)
{
    ks_pool_counts_t c = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (p == NULL)
        return c;
    c = p->counts;
    c.wakeups = atomic_load_explicit(&p->wakeups, memory_order_relaxed);
    c.gate_cycles = p->gate.noted;
    c.gate_inline_cycles = p->gate.noted_inline;
    c.gate_ratio = p->gate.ratio;
    return c;
}

unsigned ks_pool_size(const ks_pool_t *p)
{
    return p ? p->n_threads + 1 : 1;
}

unsigned ks_pool_sleeping(ks_pool_t *p)
{
    return p ? atomic_load(&p->sleepers) : 0;
}

unsigned ks_pool_spin_ns(ks_pool_t *p)
{
    return p ? atomic_load(&p->spin_ns) : 0;
}

void ks_pool_free(ks_pool_t *p)
{
    unsigned i;
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    free(p->threads);
    free(p);
}

/* The site of jobs running fn: its entry, or NULL when every entry is
 * taken by other functions. Caller only. */
static site_t *site_of(ks_pool_t *p, ks_pool_fn fn)
{
    unsigned h = (unsigned)(((uintptr_t)fn >> 4) * 2654435761u) % SITES, i;
    for (i = 0; i < SITES; i++) {
        site_t *s = &p->sites[(h + i) % SITES];
        if (s->fn == fn)
            return s;
        if (s->fn == NULL) {
            s->fn = fn;
            s->probe_every = PROBE_EVERY;
            return s;
        }
    }
    return NULL;
}

/* Does sharing site s's jobs, with the workers awake or not, take at
 * most 1/SHARE_GAIN of the inline time per item? */
static int share_pays(const site_t *s, int awake)
{
    return s->shared_ns[awake] * SHARE_GAIN < s->inline_ns;
}

/* Whether to share the next job of site s (NULL: share), of n items,
 * while a worker is awake or not: never one the inline mean puts under
 * SHARE_MIN_NS; otherwise unknown ways first, shared before inline; then
 * shared when it saves SHARE_GAIN (per item), the other way every
 * probe_every-th job (a probe, judged in site_note). */
static int site_share(site_t *s, int awake, uint32_t n)
{
    int share;
    if (s == NULL)
        return 1;
    s->jobs++;
    if (s->inline_ns != 0 && s->inline_ns * (float)n < SHARE_MIN_NS)
        return 0; /* too small to hand over */
    if (s->shared_ns[awake] == 0)
        return 1;
    if (s->inline_ns == 0)
        return 0;
    share = share_pays(s, awake);
    if (share != s->last_share) {
        /* the other way wins now: the losing one's estimate is checked
         * again soon (it may be an outlier of the one that lost) */
        s->last_share = (uint8_t)share;
        s->probe_every = PROBE_EVERY;
    }
    if (s->jobs % s->probe_every != 0)
        return share;
    s->probe = (uint8_t)(1 + awake);
    s->probe_share = (uint8_t)share;
    return !share;
}

/* Would site s share a job of n items with a worker awake (site_share's
 * choice outside probes)? NULL, or a site never timed inline: yes. A
 * site never timed shared: yes once its first INLINE_FIRST inline jobs
 * were timed (one cold first job is no reason to probe sharing), and
 * they put it above SHARE_MIN_NS. A site timed shared only while the
 * workers slept (its jobs come in cycles that follow ones without a job
 * to share, so no nudge woke the workers for them) is judged by that
 * estimate: when sharing with a sleeping worker pays, it pays with an
 * awake one, and when it does not, an unknown estimate is no reason to
 * wake the workers or to probe sharing (pool_gate.h) at every such job. */
static int site_could_share(const site_t *s, uint32_t n)
{
    if (s == NULL)
        return 1;
    if (s->inline_ns != 0 && s->inline_ns * (float)n < SHARE_MIN_NS)
        return 0;
    if (s->inline_ns == 0)
        return 1;
    if (s->shared_ns[0] == 0 && s->shared_ns[1] == 0)
        return s->inline_seen >= INLINE_FIRST; /* met inline: its first
                                                * jobs are timed first */
    return share_pays(s, s->shared_ns[1] != 0);
}

/* A job of n items took ns, inline (way 2) or shared with a worker awake
 * (1) or not (0): into site s's averages. One outlier (a thread off its
 * CPU for milliseconds) counts at most twice the current mean: it moves
 * the mean by a quarter at most, less than SHARE_GAIN, so that a single
 * one does not flip the site's choice; a lasting change moves it within a
 * few jobs. */
static void site_note(site_t *s, int way, uint32_t n, uint64_t ns)
{
    float *m, v;
    if (s == NULL || n == 0)
        return;
    m = way == 2 ? &s->inline_ns : &s->shared_ns[way];
    v = (float)ns / (float)n;
    if (v <= 0)
        v = 1e-3f;
    if (*m == 0) {
        *m = v;
        if (way == 2)
            s->inline_seen = 1;
        return;
    }
    if (way == 2 && s->inline_seen < INLINE_FIRST) {
        s->inline_seen++;
        if (v < *m)
            *m = v; /* the first jobs: the lowest */
    } else {
        if (v > 2 * *m)
            v = 2 * *m;
        *m += (v - *m) / 4;
    }
    if (s->probe) {
        /* a probe that lost again doubles the interval to the next one
         * (up to PROBE_MAX): a losing probe of sharing wakes a worker
         * for nothing; one that wins starts over at PROBE_EVERY */
        if (share_pays(s, s->probe - 1) != s->probe_share)
            s->probe_every = PROBE_EVERY;
        else if (s->probe_every < PROBE_MAX)
            s->probe_every *= 2;
        s->probe = 0;
    }
}

/* The gap since the last shared job ended, seen as a shared job starts at
 * t0: the workers' next spin covers twice the longest recent short gap. */
static void note_gap(ks_pool_t *p, uint64_t t0)
{
    uint64_t gap = p->last_end && t0 > p->last_end ? t0 - p->last_end : 0,
             spin;
    p->short_gap -= p->short_gap / 16;
    if (p->last_end != 0 && gap < SPIN_NS && gap > p->short_gap)
        p->short_gap = gap;
    spin = 2 * p->short_gap + SPIN_MIN_NS;
    atomic_store_explicit(&p->spin_ns, spin < SPIN_NS ? (unsigned)spin
                                                      : SPIN_NS,
                          memory_order_relaxed);
}

/* After a shared job: a wait for the other threads' chunks (t1 to t2)
 * longer than STALL_NS and twice the caller's own share (t0 to t1) makes
 * the jobs of the next STALL_STRETCH waits as long run inline (pool.c's
 * header). */
static void note_stall(ks_pool_t *p, uint64_t t0, uint64_t t1, uint64_t t2)
{
    uint64_t wait = t2 - t1, stretch;
    if (wait <= STALL_NS || wait <= 2 * (t1 - t0))
        return;
    stretch = STALL_STRETCH * wait;
    if (stretch > STALL_STRETCH_MAX_NS)
        stretch = STALL_STRETCH_MAX_NS;
    p->inline_until = t2 + stretch;
}

/* Publish a job and take part in it; returns when every item is done.
 * *t1 is when the caller found no chunk left to claim. */
static void run_shared(ks_pool_t *p, uint32_t n, uint32_t chunk,
                       uint32_t split, ks_pool_fn fn, void *ud, uint64_t *t1)
{
    uint32_t epoch;
    job_slot_t *s;
    unsigned spins = 0;
    /* The previous job is finished (this function waited for it): no
     * claim on it can succeed any more, so its slot and the other one are
     * free to write. Epoch 0 means "none"; after 2^32 jobs it wraps past
     * it. */
    epoch = WORD_EPOCH(atomic_load_explicit(&p->word, memory_order_relaxed)) +
            1;
    if (epoch == 0)
        epoch = 1;
    s = &p->slots[epoch & 1];
    atomic_store_explicit(&s->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&s->ud, ud, memory_order_relaxed);
    atomic_store_explicit(&s->n, n, memory_order_relaxed);
    atomic_store_explicit(&s->chunk, chunk, memory_order_relaxed);
    atomic_store_explicit(&s->split, split, memory_order_relaxed);
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    if (split < n)
        atomic_store_explicit(&p->word2, WORD(epoch, split),
                              memory_order_relaxed);
    /* seq_cst, with the load of sleepers after it: a worker that goes to
     * sleep adds itself to sleepers before it reads the word again
     * (wait_for_job), so either it sees this job or this sees it. */
    atomic_store(&p->word, WORD(epoch, 0));
    /* Spinning workers see the word move; sleeping ones need a wake-up. */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->work_cv);
        pthread_mutex_unlock(&p->mu);
    }
    do_chunks(p, epoch, 0);
    *t1 = ks_mono_ns();
    /* Every chunk is claimed; wait for the ones other threads run, which
     * are running now (claimed by an awake worker), so a spin suffices. */
    while (atomic_load_explicit(&p->done, memory_order_acquire) < n) {
        if (++spins > 4000)
            sched_yield();
        else
            cpu_relax();
    }
}

/* The whole job as one call on the caller (worker 0); counted as an
 * inline job of n items unless uncounted (one chunk, no pool). */
static void run_inline(ks_pool_t *p, uint32_t n, ks_pool_fn fn, void *ud,
                       int counted)
{
    if (counted) {
        p->counts.inline_jobs++;
        p->counts.inline_items += n;
    }
    if (n == 0)
        return;
    ks_pool_job_depth++;
    fn(ud, 0, n, 0);
    ks_pool_job_depth--;
}

/* ks_pool_run and ks_pool_run_affine: an affine job's caller range is
 * [0, n / threads), the workers' the rest. */
static void pool_run(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                     void *ud, int affine)
{
    uint64_t t0, t1, t2;
    site_t *site;
    int awake;
    uint32_t split;
    if (chunk == 0)
        chunk = 1;
    if (p == NULL || p->n_threads == 0 || n <= chunk) {
        run_inline(p, n, fn, ud, 0);
        return;
    }
    split = affine ? n / (p->n_threads + 1) : n;
    if (p->chaos) { /* pool.h: shared or inline at random */
        if (chaos_next(&p->chaos_rng) & 1)
            run_inline(p, n, fn, ud, 0);
        else
            run_shared(p, n, chunk, split, fn, ud, &t1);
        return;
    }
    if (p->inline_until != 0) { /* after a stall */
        if (ks_mono_ns() < p->inline_until) {
            p->cycle_skip = 1;
            run_inline(p, n, fn, ud, 1);
            return;
        }
        p->inline_until = 0;
    }
    site = site_of(p, fn);
    if (p->cycle_open) {
        int gate_inline =
            ks_pool_gate_way(&p->gate) == KS_POOL_WAY_INLINE;
        p->cycle_job = 1;
        if (gate_inline) {
            /* the gate's choice; a site whose inline cost is not known
             * yet is timed (its first INLINE_FIRST jobs), or it would
             * count as one to share (and draw the gate's probes) until a
             * window of sharing timed it */
            if (site != NULL && site->inline_seen < INLINE_FIRST) {
                t0 = ks_mono_ns();
                run_inline(p, n, fn, ud, 1);
                site_note(site, 2, n, ks_mono_ns() - t0);
            } else {
                run_inline(p, n, fn, ud, 1);
            }
        }
        /* judged after an inline run, which may have timed the site */
        if (!p->cycle_could && site_could_share(site, n))
            p->cycle_could = 1;
        if (gate_inline)
            return;
    }
    awake = atomic_load_explicit(&p->sleepers, memory_order_relaxed) <
            p->n_threads;
    t0 = ks_mono_ns();
    if (!site_share(site, awake, n)) {
        run_inline(p, n, fn, ud, 1);
        site_note(site, 2, n, ks_mono_ns() - t0);
        return;
    }
    p->counts.shared++;
    p->counts.shared_items += n;
    note_gap(p, t0);
    run_shared(p, n, chunk, split, fn, ud, &t1);
    t2 = ks_mono_ns();
    p->last_end = t2;
    site_note(site, awake, n, t2 - t0);
    note_stall(p, t0, t1, t2);
}

/* ks_pool_clock_jobs: the calling thread's switch and counts. */
static _Thread_local int clock_on;
static _Thread_local uint64_t clocked_ns, clocked_jobs;

void ks_pool_clock_jobs(int on)
{
    clock_on = on != 0;
    if (clock_on)
        clocked_ns = clocked_jobs = 0;
}

uint64_t ks_pool_clocked_ns(void)
{
    return clocked_ns;
}

uint64_t ks_pool_clocked_jobs(void)
{
    return clocked_jobs;
}

/* pool_run, timed into the thread's counts when the job is one a second
 * thread could split (ks_pool_clock_jobs) */
static void run_job(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                    void *ud, int affine)
{
    uint64_t t0;
    if (!clock_on || ks_pool_job_depth != 0 || n <= (chunk ? chunk : 1)) {
        pool_run(p, n, chunk, fn, ud, affine);
        return;
    }
    t0 = ks_mono_ns();
    pool_run(p, n, chunk, fn, ud, affine);
    clocked_ns += ks_mono_ns() - t0;
    clocked_jobs++;
}

void ks_pool_run(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                 void *ud)
{
    run_job(p, n, chunk, fn, ud, 0);
}

void ks_pool_run_affine(ks_pool_t *p, uint32_t n, uint32_t chunk,
                        ks_pool_fn fn, void *ud)
{
    run_job(p, n, chunk, fn, ud, 1);
}

void ks_pool_cycle_begin(ks_pool_t *p)
{
    if (p == NULL || p->n_threads == 0)
        return;
    p->cycle_open = 1;
    p->cycle_job = 0;
    p->cycle_skip = 0;
    p->cycle_could = 0;
    p->cycle_t0 = ks_mono_ns();
    if (ks_pool_gate_way(&p->gate) == KS_POOL_WAY_SHARE &&
        atomic_load(&p->sleepers) > 0 &&
        (p->nudge || ++p->nudge_skips % NUDGE_EVERY == 0)) {
        /* Wake the workers now, while the cycle does its serial first
         * part, with a spin that lasts until its first job: asleep, the
         * site's first job would find sharing too dear (a wake-up) and
         * run inline, and so would every job after it, a window that
         * shares nothing. */
        atomic_store_explicit(&p->spin_ns, SPIN_NS, memory_order_relaxed);
        pthread_mutex_lock(&p->mu);
        p->nudges++;
        pthread_cond_broadcast(&p->work_cv);
        pthread_mutex_unlock(&p->mu);
    }
}

void ks_pool_cycle_end(ks_pool_t *p, int counts)
{
    if (p == NULL || !p->cycle_open)
        return;
    p->cycle_open = 0;
    if (p->cycle_job)
        p->nudge = p->cycle_could;
    if (!counts)
        return;
    if (p->cycle_skip)
        p->counts.stall_cycles++; /* a stall's stretch: not timed */
    else if (p->cycle_job)
        ks_pool_gate_note(&p->gate, ks_mono_ns() - p->cycle_t0,
                          p->cycle_could);
}

/* Cut one range of the running job (epoch): word's unclaimed chunks, up
 * to end, count as done. A word that holds another epoch is left alone:
 * an affine range of an earlier job. */
static void cut_range(ks_pool_t *p, _Atomic uint64_t *word, uint32_t epoch,
                      uint32_t end)
{
    uint64_t w = atomic_load_explicit(word, memory_order_acquire);
    for (;;) {
        uint32_t next = WORD_NEXT(w);
        /* every chunk claimed already */
        if (WORD_EPOCH(w) != epoch || next >= end)
            return;
        if (atomic_compare_exchange_weak_explicit(word, &w,
                                                  WORD(epoch, end),
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            /* the items no one will claim count as done */
            atomic_fetch_add_explicit(&p->done, end - next,
                                      memory_order_release);
            return;
        }
    }
}

void ks_pool_cut(ks_pool_t *p)
{
    uint32_t epoch, n, split;
    const job_slot_t *s;
    if (p == NULL)
        return;
    /* From a chunk of the running job (pool.h), which holds it open: the
     * word's epoch and slot are that job's. Run inline, the word is a
     * finished job's: its ranges are all claimed. */
    epoch = WORD_EPOCH(atomic_load_explicit(&p->word, memory_order_acquire));
    s = &p->slots[epoch & 1];
    n = atomic_load_explicit(&s->n, memory_order_relaxed);
    split = atomic_load_explicit(&s->split, memory_order_relaxed);
    cut_range(p, &p->word, epoch, split);
    if (split < n)
        cut_range(p, &p->word2, epoch, n);
}
