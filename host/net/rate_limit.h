/*
 * A token bucket (client-side rate limit, like client-go's QPS/Burst).
 *
 * Pure: no clock of its own. Every call takes the current time in
 * nanoseconds from any monotonic source (the HTTP client passes
 * uv_now() * 1e6), so tests drive it with synthetic times.
 *
 * Accounting is in integer nanoseconds: one token is worth
 * period_ns = ceil(1e9 / qps) ns of credit; credit grows with elapsed time
 * up to burst * period_ns. The bucket starts full. Time that goes
 * backwards adds no credit (and is not held against the caller).
 *
 * A zeroed ks_rate_t, or one initialised with qps <= 0, is unlimited.
 * Ownership: a plain value, nothing to free. Not thread-safe (the caller's
 * loop thread).
 */
#ifndef KS_NET_RATE_LIMIT_H
#define KS_NET_RATE_LIMIT_H

#include <stdint.h>

typedef struct ks_rate {
    uint64_t period_ns; /* credit one token costs; 0: unlimited */
    uint64_t cap_ns;    /* burst * period_ns (saturated) */
    uint64_t credit_ns; /* credit available at last_ns */
    uint64_t last_ns;   /* time of the last refill */
} ks_rate_t;

/* Set up a bucket of `burst` tokens refilled at `qps` tokens per second,
 * full at `now_ns`. qps <= 0 (or NaN): unlimited. burst < 1 is taken as 1.
 * A qps so small that a token would take longer than ~292 years is
 * clamped to that. */
void ks_rate_init(ks_rate_t *b, double qps, int burst, uint64_t now_ns);

/* Take one token at `now_ns`. Returns 0 when a token was taken, otherwise
 * the nanoseconds (>= 1) until one will be available; nothing is taken
 * then, so the caller asks again at now_ns + the returned wait. */
uint64_t ks_rate_take(ks_rate_t *b, uint64_t now_ns);

/* Tokens available at `now_ns` (whole tokens; does not take any).
 * UINT64_MAX when unlimited. */
uint64_t ks_rate_available(const ks_rate_t *b, uint64_t now_ns);

#endif
