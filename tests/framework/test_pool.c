/*
 * The worker pool (framework/pool.h): every index of every job run once,
 * by chunks of the size asked, across many jobs back to back of every
 * size (the path a late worker could get wrong: a chunk of the next job
 * run with the last job's function); jobs too small to share run inline on
 * the caller; idle workers end up asleep, not spinning; after a worker
 * stalled the caller, jobs run inline for eight times the wait; a call
 * site whose items
 * are too cheap to hand over runs inline and one whose items are costly
 * is shared; jobs far apart leave the workers no spin; the cycle gate
 * runs inline the cycles that sharing makes slower as a whole, and keeps
 * sharing where it pays.
 */
#include <check.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework/pool.h"

typedef struct job {
    atomic_uchar *hits; /* per index */
    uint32_t n, chunk;
    uint32_t split; /* an affine job's second range starts here (else n) */
    unsigned tag;         /* which job: a late chunk shows as a wrong tag */
    atomic_uint *owner;   /* per index: the tag of the job that ran it */
    atomic_uint bad_chunk;
    atomic_uint in_job_off;
} job_t;

static void run_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    job_t *j = ud;
    uint32_t i;
    (void)worker;
    /* a chunk of the size asked (the last one of a range shorter), or the
     * whole job at once when it runs inline; none across an affine
     * job's split */
    if (e <= b || e > j->n ||
        (!(b == 0 && e == j->n) &&
         (e - b > j->chunk ||
          (e - b < j->chunk && e != j->n && e != j->split) ||
          (b < j->split && e > j->split))))
        atomic_fetch_add(&j->bad_chunk, 1);
    if (!ks_pool_in_job())
        atomic_fetch_add(&j->in_job_off, 1);
    for (i = b; i < e; i++) {
        atomic_fetch_add(&j->hits[i], 1);
        atomic_store(&j->owner[i], j->tag);
    }
}

static void check_job_as(ks_pool_t *p, uint32_t n, uint32_t chunk,
                         unsigned tag, int affine)
{
    job_t j;
    uint32_t i;
    memset(&j, 0, sizeof j);
    j.n = n;
    j.chunk = chunk ? chunk : 1;
    j.split = affine ? n / ks_pool_size(p) : n;
    j.tag = tag;
    j.hits = calloc(n + 1, sizeof *j.hits);
    j.owner = calloc(n + 1, sizeof *j.owner);
    ck_assert_ptr_nonnull(j.hits);
    ck_assert_ptr_nonnull(j.owner);
    if (affine)
        ks_pool_run_affine(p, n, chunk, run_chunk, &j);
    else
        ks_pool_run(p, n, chunk, run_chunk, &j);
    /* one assertion per job: Check reports every passing one */
    for (i = 0; i < n && j.hits[i] == 1 && j.owner[i] == tag; i++)
        ;
    ck_assert_msg(i == n, "job %u (n %u chunk %u): index %u run %u times, "
                          "last by job %u",
                  tag, n, chunk, i, i < n ? (unsigned)j.hits[i] : 0,
                  i < n ? (unsigned)j.owner[i] : 0);
    ck_assert_msg(atomic_load(&j.bad_chunk) == 0 &&
                      atomic_load(&j.in_job_off) == 0 && !ks_pool_in_job(),
                  "job %u: %u chunks of a wrong size, %u outside a job", tag,
                  atomic_load(&j.bad_chunk), atomic_load(&j.in_job_off));
    free(j.hits);
    free(j.owner);
}

static void check_job(ks_pool_t *p, uint32_t n, uint32_t chunk, unsigned tag)
{
    check_job_as(p, n, chunk, tag, 0);
}

/* A pool with one worker besides the caller, or NULL on a machine with
 * one CPU (ks_pool_new makes no more threads than CPUs). */
static ks_pool_t *pool_of_two(void)
{
    ks_pool_t *p = ks_pool_new(2);
    ck_assert_ptr_nonnull(p);
    if (ks_pool_size(p) < 2) {
        ks_pool_free(p);
        return NULL;
    }
    return p;
}

/* 3,000 jobs back to back of every size and chunk; affine: every other
 * three of them affine (an affine job's second range must not leak into
 * the next job, nor the next job's claims into it). */
static void jobs_back_to_back(int affine)
{
    ks_pool_t *p = ks_pool_new(4);
    unsigned tag = 1, k;
    static const uint32_t sizes[] = {0, 1, 2, 7, 31, 32, 33, 100, 313,
                                     1000, 5000, 4097};
    ck_assert_ptr_nonnull(p);
    for (k = 0; k < 3000; k++) {
        uint32_t n = sizes[k % (sizeof sizes / sizeof *sizes)];
        uint32_t chunk = (k % 5) == 0 ? 0 : (uint32_t)(k % 97) + 1;
        check_job_as(p, n, chunk, tag++, affine && (k / 3) % 2 == 0);
    }
    check_job_as(NULL, 50, 8, tag++, affine);
    ks_pool_free(p);
}

START_TEST(every_index_once)
{
    jobs_back_to_back(0);
}
END_TEST

START_TEST(every_index_once_affine)
{
    jobs_back_to_back(1);
}
END_TEST

/* Who ran which chunk first, in an affine job of slow items. */
typedef struct first_job {
    uint32_t first[2]; /* UINT32_MAX: none yet */
    atomic_uint ran;
} first_job_t;

static void first_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    first_job_t *j = ud;
    struct timespec nap = {0, 5000000}; /* 5 ms an item */
    uint32_t i;
    if (worker < 2 && j->first[worker] == UINT32_MAX)
        j->first[worker] = b;
    for (i = b; i < e; i++) {
        nanosleep(&nap, NULL);
        atomic_fetch_add(&j->ran, 1);
    }
}

/* In an affine job the caller starts at item 0 and a worker at the
 * split (n / threads); in a plain one both start at the next chunk in
 * order, so the worker starts right after the caller's first chunk. */
START_TEST(affine_ranges_start_apart)
{
    ks_pool_t *p = pool_of_two();
    unsigned k, worker_ran = 0;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    for (k = 0; k < 6; k++) {
        first_job_t j;
        memset(&j, 0, sizeof j);
        j.first[0] = j.first[1] = UINT32_MAX;
        ks_pool_run_affine(p, 8, 1, first_chunk, &j);
        ck_assert_uint_eq(atomic_load(&j.ran), 8);
        ck_assert_msg(j.first[0] == 0, "affine job %u: the caller began at "
                                       "item %u", k, j.first[0]);
        if (j.first[1] != UINT32_MAX) {
            worker_ran++;
            ck_assert_msg(j.first[1] == 4,
                          "affine job %u: the worker began at item %u, not "
                          "at the split (4)",
                          k, j.first[1]);
        }
    }
    /* 40 ms jobs of 5 ms items: shared (the site's first jobs are, and
     * sharing halves them) */
    ck_assert_msg(worker_ran >= 3, "the worker ran in %u of 6 affine jobs",
                  worker_ran);
    ks_pool_free(p);
}
END_TEST

/* Who cuts: a chunk of an affine job calls ks_pool_cut; neither range is
 * claimed further, and ks_pool_run_affine returns once the chunks
 * running are done. */
typedef struct cut_job {
    ks_pool_t *p;
    atomic_uint ran;
    atomic_uint whole; /* run inline: one call over every item */
} cut_job_t;

static void cut_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    cut_job_t *j = ud;
    struct timespec nap = {0, 2000000};
    (void)worker;
    if (b == 0 && e == 40)
        atomic_store(&j->whole, 1);
    if (b == 0)
        ks_pool_cut(j->p);
    nanosleep(&nap, NULL);
    atomic_fetch_add(&j->ran, e - b);
}

START_TEST(affine_cut_stops_both_ranges)
{
    ks_pool_t *p = pool_of_two();
    unsigned k;
    if (p == NULL)
        return;
    for (k = 0; k < 10; k++) {
        cut_job_t j;
        unsigned ran;
        memset(&j, 0, sizeof j);
        j.p = p;
        ks_pool_run_affine(p, 40, 1, cut_chunk, &j);
        ran = atomic_load(&j.ran);
        /* shared: the caller's item 0 and the worker's chunks claimed
         * before the cut (one, or two if the caller was slow to cut);
         * inline: one call over all 40, which a cut does not stop */
        if (atomic_load(&j.whole))
            ck_assert_uint_eq(ran, 40);
        else
            ck_assert_msg(ran <= 3, "affine job %u: %u items ran after a "
                                    "cut in the first", k, ran);
        check_job_as(p, 100, 3, 1000 + k, 1); /* the pool still works */
    }
    ks_pool_free(p);
}
END_TEST

START_TEST(no_pool_and_small_jobs_inline)
{
    /* NULL pool and a job of one chunk run on the caller as worker 0 */
    check_job(NULL, 50, 8, 1);
    {
        ks_pool_t *p = ks_pool_new(2);
        ks_pool_counts_t c;
        check_job(p, 10, 10, 2);
        check_job(p, 10, 64, 3);
        /* jobs of one chunk are not counted; no pool counts nothing */
        c = ks_pool_counts(p);
        ck_assert_uint_eq(c.shared + c.inline_jobs, 0);
        c = ks_pool_counts(NULL);
        ck_assert_uint_eq(c.shared + c.inline_jobs + c.shared_items +
                              c.inline_items,
                          0);
        ks_pool_free(p);
    }
}
END_TEST

START_TEST(idle_workers_sleep)
{
    ks_pool_t *p = ks_pool_new(2);
    unsigned extra = ks_pool_size(p) - 1, i;
    struct timespec ms = {0, 1000000};
    ck_assert_ptr_nonnull(p);
    if (extra == 0) {
        ks_pool_free(p); /* one CPU: no worker thread to check */
        return;
    }
    check_job(p, 1000, 10, 1);
    /* after the spin (50 us) every worker waits on the condition
     * variable; allow 5 s for a loaded machine */
    for (i = 0; i < 5000 && ks_pool_sleeping(p) < extra; i++)
        nanosleep(&ms, NULL);
    ck_assert_uint_eq(ks_pool_sleeping(p), extra);
    /* and a sleeping pool still runs the next job completely */
    check_job(p, 1000, 10, 2);
    ks_pool_free(p);
}
END_TEST

/* A worker that holds a chunk and is off its CPU (here: asleep 200 ms in
 * it, long against the caller's wait for it to take that chunk even on a
 * loaded machine) stalls the caller; the next jobs then run inline on the
 * caller. */
typedef struct stall_job {
    atomic_int worker_started;
    atomic_uint calls, whole_on_caller;
    uint32_t n;
    long worker_ms; /* the worker's sleep in its chunk; 0: 200 ms */
} stall_job_t;

static void stall_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    stall_job_t *j = ud;
    struct timespec ms = {0, 1000000},
                    slow = {0, (j->worker_ms ? j->worker_ms : 200) * 1000000L};
    unsigned i;
    atomic_fetch_add(&j->calls, 1);
    if (b == 0 && e == j->n && worker == 0)
        atomic_fetch_add(&j->whole_on_caller, 1);
    if (worker != 0) {
        atomic_store(&j->worker_started, 1);
        nanosleep(&slow, NULL);
        return;
    }
    /* the caller leaves chunks for the worker until it took one (5 s) */
    for (i = 0; i < 5000 && !atomic_load(&j->worker_started); i++)
        nanosleep(&ms, NULL);
}

START_TEST(stalled_worker_then_inline)
{
    ks_pool_t *p = ks_pool_new(2);
    stall_job_t j;
    ck_assert_ptr_nonnull(p);
    if (ks_pool_size(p) < 2) {
        ks_pool_free(p); /* one CPU: no worker thread to stall */
        return;
    }
    memset(&j, 0, sizeof j);
    j.n = 64;
    ks_pool_run(p, j.n, 1, stall_chunk, &j);
    ck_assert_int_eq(atomic_load(&j.worker_started), 1);
    /* the next job: one call over every index, on the caller */
    memset(&j, 0, sizeof j);
    j.n = 64;
    atomic_store(&j.worker_started, 1); /* nothing to wait for */
    ks_pool_run(p, j.n, 1, stall_chunk, &j);
    ck_assert_uint_eq(atomic_load(&j.calls), 1);
    ck_assert_uint_eq(atomic_load(&j.whole_on_caller), 1);
    /* a cycle in that stretch is counted as a stall's, not timed by the
     * gate; one ended uncounted is neither */
    {
        ks_pool_counts_t c0 = ks_pool_counts(p), c1;
        int k;
        for (k = 0; k < 2; k++) {
            memset(&j, 0, sizeof j);
            j.n = 64;
            atomic_store(&j.worker_started, 1);
            ks_pool_cycle_begin(p);
            ks_pool_run(p, j.n, 1, stall_chunk, &j);
            ks_pool_cycle_end(p, k == 0);
            ck_assert_uint_eq(atomic_load(&j.whole_on_caller), 1);
        }
        c1 = ks_pool_counts(p);
        ck_assert_uint_eq(c1.stall_cycles, c0.stall_cycles + 1);
        ck_assert_uint_eq(c1.gate_cycles, c0.gate_cycles);
    }
    /* and every job still runs every index once meanwhile */
    check_job(p, 1000, 10, 3);
    ks_pool_free(p);
}
END_TEST

/* Count the calls that got a whole job on the caller (an inline job). */
typedef struct whole_job {
    uint32_t n;
    atomic_uint whole;
} whole_job_t;

static void whole_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    whole_job_t *j = ud;
    if (b == 0 && e == j->n && worker == 0)
        atomic_fetch_add(&j->whole, 1);
}

/* The same job as another call site: the pool shares a site's first job
 * (it has not measured it yet), and after a stall it would measure the
 * stalled site inline. */
static void stall_chunk_b(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    stall_chunk(ud, b, e, worker);
}

static void stall_once(ks_pool_t *p, ks_pool_fn fn, long worker_ms)
{
    stall_job_t j;
    memset(&j, 0, sizeof j);
    j.n = 64;
    j.worker_ms = worker_ms;
    ks_pool_run(p, j.n, 1, fn, &j);
    ck_assert_int_eq(atomic_load(&j.worker_started), 1);
}

/* One job of whole_chunk's site on a pool: 1 when it ran inline. */
static unsigned whole_once(ks_pool_t *p)
{
    whole_job_t w;
    memset(&w, 0, sizeof w);
    w.n = 64;
    ks_pool_run(p, w.n, 1, whole_chunk, &w);
    return atomic_load(&w.whole);
}

/* The inline stretch after a stall lasts STALL_STRETCH (8) times the
 * wait: after a wait of 30 ms, jobs run inline at once and for a while,
 * and 600 ms later sharing is tried again (whole_chunk's site has not
 * been measured: its first job is shared). After a wait of 200 ms, the
 * jobs 600 ms later still run inline. */
START_TEST(stall_stretch_follows_the_wait)
{
    struct timespec later = {0, 600000000};
    ks_pool_t *p = pool_of_two();
    unsigned i, whole = 0;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    stall_once(p, stall_chunk, 30);
    for (i = 0; i < 64; i++)
        whole += whole_once(p);
    ck_assert_uint_eq(whole, 64);
    nanosleep(&later, NULL);
    ck_assert_uint_eq(whole_once(p), 0); /* shared again */
    check_job(p, 1000, 10, 3);
    ks_pool_free(p);

    p = pool_of_two();
    ck_assert_ptr_nonnull(p);
    stall_once(p, stall_chunk_b, 200);
    nanosleep(&later, NULL);
    ck_assert_uint_eq(whole_once(p), 1); /* 1.6 s: still inline */
    check_job(p, 1000, 10, 3);
    ks_pool_free(p);
}
END_TEST

/* Per job: whether the caller got the whole job in one call (inline) and
 * whether any chunk ran on another thread. */
typedef struct who_job {
    uint32_t n;
    atomic_uint whole, on_worker;
    long sleep_ns; /* per item; 0: nothing to do */
    long worker_ns; /* more per chunk on a worker (a cache-cold worker) */
} who_job_t;

static void who_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    who_job_t *j = ud;
    if (b == 0 && e == j->n && worker == 0)
        atomic_fetch_add(&j->whole, 1);
    if (worker != 0)
        atomic_store(&j->on_worker, 1);
    if (j->sleep_ns || (worker != 0 && j->worker_ns)) {
        struct timespec ts = {0, j->sleep_ns * (long)(e - b) +
                                     (worker != 0 ? j->worker_ns : 0)};
        nanosleep(&ts, NULL);
    }
}

/* n jobs of the site who_chunk: how many ran inline, how many had a
 * chunk on a worker. */
static void run_who_chunks(ks_pool_t *p, unsigned jobs, uint32_t n,
                           uint32_t chunk, long sleep_ns, long worker_ns,
                           unsigned *inline_jobs, unsigned *worker_jobs)
{
    unsigned i;
    *inline_jobs = *worker_jobs = 0;
    for (i = 0; i < jobs; i++) {
        who_job_t j;
        memset(&j, 0, sizeof j);
        j.n = n;
        j.sleep_ns = sleep_ns;
        j.worker_ns = worker_ns;
        ks_pool_run(p, n, chunk, who_chunk, &j);
        *inline_jobs += atomic_load(&j.whole);
        *worker_jobs += atomic_load(&j.on_worker);
    }
}

static void run_who(ks_pool_t *p, unsigned jobs, uint32_t n, long sleep_ns,
                    unsigned *inline_jobs, unsigned *worker_jobs)
{
    run_who_chunks(p, jobs, n, 1, sleep_ns, 0, inline_jobs, worker_jobs);
}

/* Items that cost nothing: once the site is measured, a job of them
 * takes far less than SHARE_MIN_NS (25 us) inline, so every one runs
 * inline, not even one probe in 32 is handed over, and the workers are
 * not woken for them. */
START_TEST(cheap_jobs_run_inline)
{
    ks_pool_t *p = pool_of_two();
    unsigned in, on_worker;
    ks_pool_counts_t c0, c1;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    run_who(p, 200, 64, 0, &in, &on_worker); /* measured both ways */
    c0 = ks_pool_counts(p);
    run_who(p, 640, 64, 0, &in, &on_worker);
    ck_assert_msg(on_worker == 0 && in == 640,
                  "cheap jobs: %u of 640 inline, %u handed to a worker", in,
                  on_worker);
    /* the counts say so too: 640 more jobs inline, of 64 items each */
    c1 = ks_pool_counts(p);
    ck_assert_uint_eq(c1.inline_jobs - c0.inline_jobs, 640);
    ck_assert_uint_eq(c1.inline_items - c0.inline_items, 640 * 64);
    ck_assert_uint_eq(c1.shared, c0.shared);
    ck_assert_uint_eq(c1.shared_items, c0.shared_items);
    check_job(p, 1000, 10, 1);
    ks_pool_free(p);
}
END_TEST

/* Two items of 40 ms each (asleep, so that a loaded machine matters
 * little: one wake-up per thread and job, short against the items): two
 * threads take half the time, so the site's jobs are shared and the
 * worker runs a chunk. */
START_TEST(costly_jobs_are_shared)
{
    ks_pool_t *p = pool_of_two();
    unsigned in, on_worker;
    ks_pool_counts_t c0, c1;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    run_who(p, 4, 2, 40000000, &in, &on_worker);
    c0 = ks_pool_counts(p);
    run_who(p, 30, 2, 40000000, &in, &on_worker);
    ck_assert_msg(in <= 3 && on_worker >= 22,
                  "costly jobs: %u of 30 inline, %u with a worker's chunk",
                  in, on_worker);
    /* every one of the 30 counted, shared or inline, as it ran */
    c1 = ks_pool_counts(p);
    ck_assert_uint_eq(c1.inline_jobs - c0.inline_jobs, in);
    ck_assert_uint_eq(c1.shared - c0.shared, 30 - in);
    ck_assert_uint_eq(c1.shared_items - c0.shared_items, 2 * (30 - in));
    ks_pool_free(p);
}
END_TEST

/* Twenty items of 2 ms in chunks of nineteen: shared, the caller runs
 * nineteen while the worker runs one, 5% faster than inline at best, far
 * less than the SHARE_GAIN (25%) sharing must save, so that the sleeps'
 * overshoot on a loaded machine cannot make up the difference (with ten
 * items in chunks of nine, 11% at best, it did under a loaded sanitizer
 * run). So once both ways are measured the site's jobs run inline,
 * except a probe now and then. */
START_TEST(marginal_gain_runs_inline)
{
    ks_pool_t *p = pool_of_two();
    unsigned in, on_worker;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    run_who_chunks(p, 6, 20, 19, 2000000, 0, &in, &on_worker);
    run_who_chunks(p, 30, 20, 19, 2000000, 0, &in, &on_worker);
    ck_assert_msg(in >= 28,
                  "marginal jobs: %u of 30 inline, %u with a worker's chunk",
                  in, on_worker);
    ks_pool_free(p);
}
END_TEST

/* Ten items of 100 us in chunks of nine, and a worker that needs 2 ms
 * more for its chunk: sharing takes twice as long as inline and keeps
 * losing, so each probe (a shared job) that loses again doubles the
 * interval to the next: over 640 jobs at most 6 are shared (4 here),
 * where probes every 32nd job shared 12. */
START_TEST(losing_probes_back_off)
{
    ks_pool_t *p = pool_of_two();
    unsigned in, on_worker;
    ks_pool_counts_t c0, c1;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    run_who_chunks(p, 40, 10, 9, 100000, 2000000, &in, &on_worker);
    c0 = ks_pool_counts(p);
    run_who_chunks(p, 640, 10, 9, 100000, 2000000, &in, &on_worker);
    c1 = ks_pool_counts(p);
    ck_assert_msg(c1.shared - c0.shared <= 6,
                  "losing probes: %llu of 640 jobs shared",
                  (unsigned long long)(c1.shared - c0.shared));
    ck_assert_uint_eq(c1.shared - c0.shared + c1.inline_jobs -
                          c0.inline_jobs,
                      640);
    ks_pool_free(p);
}
END_TEST

/* Shared jobs 2 ms apart (serial work between them longer than any
 * spin): the workers stop spinning between them at once. */
START_TEST(far_apart_jobs_no_spin)
{
    ks_pool_t *p = pool_of_two();
    struct timespec gap = {0, 2000000};
    unsigned i, in, on_worker;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    ck_assert_uint_eq(ks_pool_spin_ns(p), 50000); /* nothing seen yet */
    for (i = 0; i < 10; i++) {
        run_who(p, 1, 8, 100000, &in, &on_worker);
        nanosleep(&gap, NULL);
    }
    ck_assert_uint_le(ks_pool_spin_ns(p), 2000);
    ks_pool_free(p);
}
END_TEST

/* Cycles of one job of `items` items of item_ns, each followed by
 * read_back_ns of serial work when a worker ran a chunk of it, until the
 * gate timed `cycles` of them (on a loaded machine or under valgrind a
 * stall's inline stretch runs cycles the gate does not time; at most 16
 * times as many in all): how many cycles had a worker's chunk. */
static unsigned run_gated_cycles(ks_pool_t *p, unsigned cycles,
                                 uint32_t items, long item_ns,
                                 long read_back_ns)
{
    struct timespec read_back = {0, read_back_ns};
    unsigned i, in, on_worker, shared = 0;
    uint64_t timed0 = ks_pool_counts(p).gate_cycles;
    for (i = 0; i < 16 * cycles &&
                ks_pool_counts(p).gate_cycles - timed0 < cycles;
         i++) {
        ks_pool_cycle_begin(p);
        run_who(p, 1, items, item_ns, &in, &on_worker);
        if (on_worker && read_back_ns > 0)
            nanosleep(&read_back, NULL);
        shared += on_worker;
        ks_pool_cycle_end(p, 1);
    }
    return shared;
}

/* Cycles of one job of two 2 ms items each, shared in 2 ms or inline in
 * 4: the job's own time says share. But after a shared job the cycle's
 * serial part takes 6 ms more (what the worker wrote, read back from the
 * other core's cache, made slow): 8 ms a cycle shared against 4 inline.
 * The cycle gate sees whole cycles and runs them inline: of 20 windows
 * of 16 cycles, only its warm-up window, its two learning probes and two
 * probes after share. */
START_TEST(gate_sees_read_back)
{
    ks_pool_t *p = pool_of_two();
    unsigned in, on_worker, shared;
    ks_pool_counts_t c;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    shared = run_gated_cycles(p, 20 * 16, 2, 2000000, 6000000);
    c = ks_pool_counts(p);
    /* (stalls' stretches may leave fewer timed: 12 windows at least) */
    ck_assert_uint_ge(c.gate_cycles, 12 * 16);
    ck_assert_msg(c.gate_inline_cycles + 5 * 16 >= c.gate_cycles &&
                      shared <= 5 * 16,
                  "read-back: %llu of %llu cycles inline, %u with a "
                  "worker's chunk",
                  (unsigned long long)c.gate_inline_cycles,
                  (unsigned long long)c.gate_cycles, shared);
    /* a cycle not to be timed is not */
    ks_pool_cycle_begin(p);
    run_who(p, 1, 2, 2000000, &in, &on_worker);
    ks_pool_cycle_end(p, 0);
    ck_assert_uint_eq(ks_pool_counts(p).gate_cycles, c.gate_cycles);
    ks_pool_free(p);
}
END_TEST

/* Cycles without the read-back, of four 10 ms items: sharing makes the
 * whole cycle faster (20 ms against 40), so the gate lets the jobs be
 * shared (items long enough that a worker slow to get a CPU, under
 * valgrind say, is not a stall that turns sharing off, and four of them,
 * so that such a worker has 30 ms to claim one before the caller has
 * claimed them all: with two of 10 ms, valgrind's late wake-ups left the
 * worker without a chunk in most cycles now and then): of 20 windows
 * only its three learning windows of inline and two probes run inline,
 * and the worker runs a chunk of most jobs. */
START_TEST(gate_keeps_sharing_that_pays)
{
    ks_pool_t *p = pool_of_two();
    unsigned shared;
    ks_pool_counts_t c;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    shared = run_gated_cycles(p, 20 * 16, 4, 10000000, 0);
    c = ks_pool_counts(p);
    ck_assert_uint_ge(c.gate_cycles, 12 * 16);
    /* the share windows' jobs mostly had a worker's chunk (the per-job
     * choice may keep one inline while the worker is off its CPU) */
    ck_assert_msg(c.gate_inline_cycles <= 5 * 16 &&
                      2 * shared >= c.gate_cycles - c.gate_inline_cycles,
                  "paying: %llu of %llu cycles inline, %u with a worker's "
                  "chunk",
                  (unsigned long long)c.gate_inline_cycles,
                  (unsigned long long)c.gate_cycles, shared);
    ks_pool_free(p);
}
END_TEST

/* A cycle that starts while the workers sleep, in a window that shares,
 * wakes them (so that its jobs find them awake) without a job for them;
 * they go back to sleep after their spin. */
START_TEST(cycle_wakes_sleeping_workers)
{
    ks_pool_t *p = pool_of_two();
    struct timespec nap = {0, 1000000};
    unsigned i;
    uint64_t wakeups;
    int woke = 0;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    for (i = 0; i < 2000 && ks_pool_sleeping(p) == 0; i++)
        nanosleep(&nap, NULL);
    ck_assert_uint_eq(ks_pool_sleeping(p), 1);
    wakeups = ks_pool_counts(p).wakeups;
    ks_pool_cycle_begin(p); /* a fresh gate's first window shares */
    /* the worker leaves its sleep (a loaded machine may take a while to
     * give it a CPU) */
    for (i = 0; i < 5000 && !woke; i++) {
        woke = ks_pool_counts(p).wakeups > wakeups;
        if (!woke)
            nanosleep(&nap, NULL);
    }
    ks_pool_cycle_end(p, 0);
    ck_assert_msg(woke, "the cycle left the worker asleep");
    for (i = 0; i < 2000 && ks_pool_sleeping(p) == 0; i++)
        nanosleep(&nap, NULL);
    ck_assert_uint_eq(ks_pool_sleeping(p), 1);
    ks_pool_free(p);
}
END_TEST

/* Wait (up to 2 s) until the pool's worker sleeps: 1 when it does. */
static int worker_asleep(ks_pool_t *p)
{
    struct timespec nap = {0, 1000000};
    unsigned i;
    for (i = 0; i < 2000 && ks_pool_sleeping(p) == 0; i++)
        nanosleep(&nap, NULL);
    return ks_pool_sleeping(p) == 1;
}

/* A cycle whose jobs no awake worker would take (items too cheap to hand
 * over, as measured) leaves the next cycle's start without a nudge: ten
 * such cycles, each started with the worker asleep, wake it at most once
 * (every 64th start nudges anyway). Each woke it before. */
/* A job whose chunks sleep: 2 ms in all, whichever thread runs them;
 * one nested job of 4 chunks inside the first chunk when nest is set. */
typedef struct slow_job {
    uint32_t n;
    int nest;
    ks_pool_t *p;
} slow_job_t;

static void slow_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    slow_job_t *j = ud;
    struct timespec d = {0, (long)(e - b) * (2000000L / (long)j->n)};
    (void)worker;
    if (j->nest && b == 0) {
        slow_job_t inner = {4, 0, NULL};
        ks_pool_run(NULL, 4, 1, slow_chunk, &inner);
    }
    nanosleep(&d, NULL);
}

START_TEST(clocked_jobs_are_the_splittable_ones)
{
    ks_pool_t *p = ks_pool_new(2);
    slow_job_t j = {8, 0, NULL};
    uint64_t ns;
    ck_assert_ptr_nonnull(p);
    /* off: nothing counted */
    ks_pool_clock_jobs(0);
    ks_pool_run(NULL, 8, 1, slow_chunk, &j);
    ck_assert_uint_eq(ks_pool_clocked_jobs(), 0);
    ks_pool_clock_jobs(1);
    /* no pool (parallelism 1), a pool, and an affine job: each counted
     * with its time; a job of one chunk is not (nothing to split) */
    ks_pool_run(NULL, 8, 1, slow_chunk, &j);
    ks_pool_run(p, 8, 1, slow_chunk, &j);
    ks_pool_run_affine(p, 8, 2, slow_chunk, &j);
    ks_pool_run(p, 8, 8, slow_chunk, &j);
    ks_pool_run(NULL, 8, 0, slow_chunk, &j); /* chunk 0 is 1: split */
    ck_assert_uint_eq(ks_pool_clocked_jobs(), 4);
    ns = ks_pool_clocked_ns();
    /* four jobs of 2 ms (at least 1 ms each when shared by two) */
    ck_assert_msg(ns >= 4000000, "clocked %llu ns", (unsigned long long)ns);
    /* a job nested in a job's chunk is part of the outer job's time */
    j.nest = 1;
    ks_pool_run(NULL, 8, 1, slow_chunk, &j);
    ck_assert_uint_eq(ks_pool_clocked_jobs(), 5);
    ck_assert_uint_ge(ks_pool_clocked_ns(), ns + 2000000);
    /* off keeps the counts; on again starts from zero */
    ks_pool_clock_jobs(0);
    ks_pool_run(NULL, 8, 1, slow_chunk, &j);
    ck_assert_uint_eq(ks_pool_clocked_jobs(), 5);
    ks_pool_clock_jobs(1);
    ck_assert_uint_eq(ks_pool_clocked_jobs(), 0);
    ck_assert_uint_eq(ks_pool_clocked_ns(), 0);
    ks_pool_clock_jobs(0);
    ks_pool_free(p);
}
END_TEST

START_TEST(cheap_cycles_leave_workers_asleep)
{
    ks_pool_t *p = pool_of_two();
    unsigned i, in, on_worker;
    uint64_t wakeups;
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    /* the gate's first window shares; cycles ended uncounted keep it
     * there. The site's first jobs measure it: then it runs inline. */
    for (i = 0; i < 4; i++) {
        ks_pool_cycle_begin(p);
        run_who(p, 1, 64, 0, &in, &on_worker);
        ks_pool_cycle_end(p, 0);
    }
    ck_assert_int_eq(worker_asleep(p), 1);
    wakeups = ks_pool_counts(p).wakeups;
    for (i = 0; i < 10; i++) {
        struct timespec wake = {0, 5000000};
        ks_pool_cycle_begin(p);
        run_who(p, 1, 64, 0, &in, &on_worker);
        ck_assert_uint_eq(in, 1);
        ks_pool_cycle_end(p, 0);
        /* time for a nudged worker to leave its sleep, and go back */
        nanosleep(&wake, NULL);
        ck_assert_int_eq(worker_asleep(p), 1);
    }
    ck_assert_uint_le(ks_pool_counts(p).wakeups, wakeups + 1);
    ks_pool_free(p);
}
END_TEST

/* Two call sites of jobs that do next to nothing (distinct bodies, so
 * that no linker folds them into one function). */
static atomic_uint nop_a_items, nop_b_items;

static void nop_chunk_a(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    (void)ud;
    (void)worker;
    atomic_fetch_add(&nop_a_items, e - b);
}

static void nop_chunk_b(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    (void)ud;
    (void)worker;
    atomic_fetch_sub(&nop_b_items, e - b);
}

/* Timed cycles (ks_pool_cycle_end counted) of one job of site fn, 2
 * items, until the gate timed `cycles` more (at most 64 times as many
 * in all, for a stall's untimed stretch): how many of them ran the way
 * of sharing. */
static uint64_t nop_cycles(ks_pool_t *p, ks_pool_fn fn, unsigned cycles)
{
    ks_pool_counts_t c0 = ks_pool_counts(p), c1 = c0;
    unsigned i;
    for (i = 0; i < 64 * cycles && c1.gate_cycles - c0.gate_cycles < cycles;
         i++) {
        ks_pool_cycle_begin(p);
        ks_pool_run(p, 2, 1, fn, NULL);
        ks_pool_cycle_end(p, 1);
        c1 = ks_pool_counts(p);
    }
    ck_assert_uint_eq(c1.gate_cycles - c0.gate_cycles, cycles);
    return (c1.gate_cycles - c1.gate_inline_cycles) -
           (c0.gate_cycles - c0.gate_inline_cycles);
}

/* A call site first met while the gate runs cycles inline is timed
 * there: its jobs, far too cheap to hand over, then give the gate no
 * reason to probe sharing. (Untimed, its unknown inline cost counted as
 * a job to share, and the gate's next learning window shared.) */
START_TEST(site_met_inline_is_timed)
{
    ks_pool_t *p = pool_of_two();
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    /* the warm-up window: 16 cycles, sharing, of site a */
    ck_assert_uint_eq(nop_cycles(p, nop_chunk_a, 16), 16);
    /* site b from the first inline window on: 3,000 cycles (windows of a
     * millisecond at least, up to 1,024 cycles: 3 windows or more),
     * none of them shared */
    ck_assert_uint_eq(nop_cycles(p, nop_chunk_b, 3000), 0);
    ck_assert_uint_ge(atomic_load(&nop_a_items), 32);
    ks_pool_free(p);
}
END_TEST

/* A site whose first job is slow (5 ms: cold caches and pages, as a
 * site's first job on a real cycle can be 100 times its later cost),
 * then does next to nothing. */
static atomic_uint slow_first_calls;

static void slow_first_chunk(void *ud, uint32_t b, uint32_t e,
                             unsigned worker)
{
    (void)ud;
    (void)b;
    (void)e;
    (void)worker;
    if (atomic_fetch_add(&slow_first_calls, 1) == 0) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* The inline cost of a site is the lowest of its first jobs' (three),
 * not their mean: a site met while the gate runs cycles inline whose
 * first job was slow is known as cheap once the next ones ran, and the
 * gate does not probe sharing for it. (With the first job averaged in,
 * it stays a job worth sharing and the next window shares.) */
START_TEST(first_slow_job_not_the_estimate)
{
    ks_pool_t *p = pool_of_two();
    if (p == NULL)
        return; /* one CPU: no worker to share with */
    ck_assert_uint_eq(nop_cycles(p, nop_chunk_a, 16), 16); /* warm-up */
    ck_assert_uint_eq(nop_cycles(p, slow_first_chunk, 3000), 0);
    ck_assert_uint_ge(atomic_load(&slow_first_calls), 3000);
    ks_pool_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    SRunner *sr;
    int failed;
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_index_once);
    tcase_add_test(tc, every_index_once_affine);
    tcase_add_test(tc, affine_ranges_start_apart);
    tcase_add_test(tc, affine_cut_stops_both_ranges);
    tcase_add_test(tc, no_pool_and_small_jobs_inline);
    tcase_add_test(tc, idle_workers_sleep);
    tcase_add_test(tc, stalled_worker_then_inline);
    tcase_add_test(tc, stall_stretch_follows_the_wait);
    tcase_add_test(tc, cheap_jobs_run_inline);
    tcase_add_test(tc, costly_jobs_are_shared);
    tcase_add_test(tc, marginal_gain_runs_inline);
    tcase_add_test(tc, losing_probes_back_off);
    tcase_add_test(tc, far_apart_jobs_no_spin);
    tcase_add_test(tc, gate_sees_read_back);
    tcase_add_test(tc, gate_keeps_sharing_that_pays);
    tcase_add_test(tc, cycle_wakes_sleeping_workers);
    tcase_add_test(tc, cheap_cycles_leave_workers_asleep);
    tcase_add_test(tc, clocked_jobs_are_the_splittable_ones);
    tcase_add_test(tc, site_met_inline_is_timed);
    tcase_add_test(tc, first_slow_job_not_the_estimate);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
