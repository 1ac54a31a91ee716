#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct ks_pool {
    pthread_t *threads;
    unsigned n_threads; /* extra threads */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    uint64_t epoch;
    int stop;
    /* the current job */
    ks_pool_fn fn;
    void *ud;
    uint32_t n, chunk;
    atomic_uint next;
    unsigned active;
};

typedef struct worker_arg {
    ks_pool_t *p;
    unsigned id;
} worker_arg_t;

static void do_chunks(ks_pool_t *p, unsigned id)
{
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
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    ks_pool_t *p = wa->p;
    unsigned id = wa->id;
    uint64_t seen = 0;
    free(wa);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->epoch == seen)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop)
            break;
        seen = p->epoch;
        pthread_mutex_unlock(&p->mu);
        do_chunks(p, id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
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
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    for (i = 0; i + 1 < (unsigned)threads; i++) {
        worker_arg_t *wa = malloc(sizeof *wa);
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
    p->stop = 1;
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
        if (n)
            fn(ud, 0, n, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ud = ud;
    p->n = n;
    p->chunk = chunk;
    atomic_store(&p->next, 0);
    p->active = p->n_threads;
    p->epoch++;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    do_chunks(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
