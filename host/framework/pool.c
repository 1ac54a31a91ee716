/*
 * Worker threads for parallel-for loops (pool.h). Out of memory in
 * ks_pool_new: NULL, every thread started so far stopped and joined; a
 * thread the system refuses to start leaves a smaller pool.
 */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Scheduling cycles come back to back, tens of microseconds apart: a
 * worker (and the caller waiting for the workers) spins this many times
 * before sleeping on the condition variable, so a cycle's parallel phase
 * does not pay a futex wake-up each time. Kept short: a spinning worker
 * takes a core the API server (cluster mode) may need. */
#define SPIN_LIMIT 1000

_Thread_local int ks_pool_job_depth;

struct ks_pool {
    pthread_t *threads;
    unsigned n_threads; /* extra threads */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    atomic_ullong epoch;
    atomic_int stop;
    /* the current job */
    ks_pool_fn fn;
    void *ud;
    uint32_t n, chunk;
    atomic_uint next;
    atomic_uint active;
};

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

static void do_chunks(ks_pool_t *p, unsigned id)
{
    ks_pool_job_depth++;
    for (;;) {
        uint32_t b = atomic_fetch_add(&p->next, p->chunk);
        uint32_t e;
        if (b >= p->n)
            break;
        e = b + p->chunk;
        if (e > p->n)
            e = p->n;
        p->fn(p->ud, b, e, id);
    }
    ks_pool_job_depth--;
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    ks_pool_t *p = wa->p;
    unsigned id = wa->id;
    uint64_t seen = 0;
    free(wa);
    for (;;) {
        int spins = 0;
        while (atomic_load(&p->epoch) == seen && !atomic_load(&p->stop) &&
               spins++ < SPIN_LIMIT)
            cpu_relax();
        if (atomic_load(&p->epoch) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->epoch) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->work_cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop))
            break;
        seen = atomic_load(&p->epoch);
        do_chunks(p, id);
        if (atomic_fetch_sub(&p->active, 1) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

ks_pool_t *ks_pool_new(int threads)
{
    ks_pool_t *p = calloc(1, sizeof *p);
    unsigned i;
    if (p == NULL)
        return NULL;
    if (threads < 1)
        threads = 1;
    /* More threads than online CPUs would only take turns (and spin for
     * each other): upstream's goroutines share GOMAXPROCS threads. */
    {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (ncpu >= 1 && threads > ncpu)
            threads = (int)ncpu;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
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

unsigned ks_pool_size(const ks_pool_t *p)
{
    return p ? p->n_threads + 1 : 1;
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
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p);
}

void ks_pool_run(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                 void *ud)
{
    if (chunk == 0)
        chunk = 1;
    if (p == NULL || p->n_threads == 0 || n <= chunk) {
        if (n) {
            ks_pool_job_depth++;
            fn(ud, 0, n, 0);
            ks_pool_job_depth--;
        }
        return;
    }
    p->fn = fn;
    p->ud = ud;
    p->n = n;
    p->chunk = chunk;
    atomic_store(&p->next, 0);
    atomic_store(&p->active, p->n_threads);
    /* Publish the job: spinning workers see the epoch move, sleeping ones
     * are woken (a broadcast with no sleeper costs no system call). */
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->epoch, 1);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    do_chunks(p, 0);
    {
        int spins = 0;
        while (atomic_load(&p->active) > 0 && spins++ < SPIN_LIMIT)
            cpu_relax();
    }
    if (atomic_load(&p->active) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->active) > 0)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
