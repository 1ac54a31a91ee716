/*
 * A small pseudo-random generator (xorshift64*) for jitter, sampling and
 * tie-breaks: not for anything secret. The state is the caller's; a zero
 * state is replaced by a fixed non-zero one. Thread-safety: one state per
 * thread (or per owner on one thread).
 */
#ifndef KS_BASE_RAND_H
#define KS_BASE_RAND_H

#include <stdint.h>

static inline uint64_t ks_rand_next(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

#endif
