/*
 * The console's rates (/debug/rates): once a second, one sample of the
 * counters the scheduler already keeps (ks_scheduler_stats, the queue's
 * lengths) and of the attempt latency histogram (attempts.h), into a ring
 * of the last KS_RATES_SAMPLES seconds. Nothing is computed per cycle;
 * the timer does not keep the loop alive.
 *
 * Loop thread only.
 */
#ifndef KS_SERVER_RATES_H
#define KS_SERVER_RATES_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "attempts.h"

#define KS_RATES_SAMPLES 600
/* Latency percentiles cover the last KS_RATES_WINDOW seconds. */
#define KS_RATES_WINDOW 10

typedef struct ks_rate_sample {
    double unix_time;
    uint64_t attempts, scheduled, bound, unschedulable, errors;
    uint32_t active, backoff, unsched, inflight;
    float p50, p90, p99; /* seconds; 0 when no attempt in the window */
} ks_rate_sample_t;

/* What a sample reads (filled by the caller's callback). */
typedef void (*ks_rates_read_fn)(void *ud, ks_rate_sample_t *s);

typedef struct ks_rates {
    uv_timer_t timer;
    int started;
    ks_rates_read_fn read;
    void *ud;
    const ks_attempts_t *attempts;
    ks_rate_sample_t ring[KS_RATES_SAMPLES];
    size_t n, head; /* samples held, oldest at head */
    uint64_t lat_hist[KS_RATES_WINDOW + 1][KS_ATTEMPT_LAT_BUCKETS];
    size_t lat_n; /* readings taken */
} ks_rates_t;

/* Start sampling every second on `loop` (r zeroed by the caller, owned by
 * it; must stay put until ks_rates_close's handle is closed). 0 or
 * KS_EIO. */
int ks_rates_start(ks_rates_t *r, uv_loop_t *loop,
                   const ks_attempts_t *attempts, ks_rates_read_fn read,
                   void *ud);
/* Take one sample now (the timer's work; tests). */
void ks_rates_sample(ks_rates_t *r, double unix_time);
/* Close the timer (the loop then runs its close). */
void ks_rates_close(ks_rates_t *r);
/* The i-th sample, oldest first (i < r->n). */
const ks_rate_sample_t *ks_rates_at(const ks_rates_t *r, size_t i);

#endif
