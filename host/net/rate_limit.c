#include "net/rate_limit.h"

#include <math.h>
#include <string.h>

void ks_rate_init(ks_rate_t *b, double qps, int burst, uint64_t now_ns)
{
    double p;
    memset(b, 0, sizeof *b);
    if (!(qps > 0))
        return; /* unlimited (also NaN) */
    if (burst < 1)
        burst = 1;
    p = ceil(1e9 / qps);
    if (!(p < 9.2e18))
        p = 9.2e18;
    if (p < 1)
        p = 1;
    b->period_ns = (uint64_t)p;
    if (b->period_ns > UINT64_MAX / (uint64_t)burst)
        b->cap_ns = UINT64_MAX;
    else
        b->cap_ns = b->period_ns * (uint64_t)burst;
    b->credit_ns = b->cap_ns;
    b->last_ns = now_ns;
}

/* Credit at now_ns, without changing the bucket. */
static uint64_t rate_credit(const ks_rate_t *b, uint64_t now_ns)
{
    uint64_t elapsed, credit;
    if (now_ns <= b->last_ns)
        return b->credit_ns;
    elapsed = now_ns - b->last_ns;
    if (elapsed >= b->cap_ns - b->credit_ns)
        return b->cap_ns;
    credit = b->credit_ns + elapsed;
    return credit;
}

uint64_t ks_rate_take(ks_rate_t *b, uint64_t now_ns)
{
    if (b->period_ns == 0)
        return 0;
    b->credit_ns = rate_credit(b, now_ns);
    if (now_ns > b->last_ns)
        b->last_ns = now_ns;
    if (b->credit_ns >= b->period_ns) {
        b->credit_ns -= b->period_ns;
        return 0;
    }
    return b->period_ns - b->credit_ns;
}

uint64_t ks_rate_available(const ks_rate_t *b, uint64_t now_ns)
{
    if (b->period_ns == 0)
        return UINT64_MAX;
    return rate_credit(b, now_ns) / b->period_ns;
}
