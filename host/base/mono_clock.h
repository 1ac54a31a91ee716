/*
 * The monotonic clock, in the units the host uses.
 * Threads: any.
 */
#ifndef KS_BASE_MONO_CLOCK_H
#define KS_BASE_MONO_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline int64_t ks_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Nanoseconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline uint64_t ks_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seconds, with the clock's resolution. */
static inline double ks_mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
