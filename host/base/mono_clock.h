/*
 * The host's clocks, in the units it uses: the monotonic clock for
 * intervals and deadlines, the wall clock (CLOCK_REALTIME, Unix time) for
 * timestamps written out (events, leases, fault records, expiries).
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

/* Unix time in nanoseconds, microseconds, milliseconds and seconds. */
static inline uint64_t ks_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int64_t ks_wall_us(void)
{
    return (int64_t)(ks_wall_ns() / 1000u);
}

static inline int64_t ks_wall_ms(void)
{
    return (int64_t)(ks_wall_ns() / 1000000u);
}

static inline double ks_wall_seconds(void)
{
    return (double)ks_wall_ns() * 1e-9;
}

#endif
