/*
 * (int64_t)round(x) without the libm call: upstream's int64(math.Round(x)),
 * halves away from zero. Exactly the same for |x| < 2^63 (beyond, both
 * conversions are undefined): (int64_t)x truncates; below 2^52 the
 * truncated value is exact and x minus it is exact (Sterbenz), from 2^52
 * on x is an integer and the difference is 0. Header only; pure.
 */
#ifndef KS_PLUGIN_PTS_ROUND_H
#define KS_PLUGIN_PTS_ROUND_H

#include <stdint.h>

static inline int64_t pts_round_i64(double x)
{
    int64_t r = (int64_t)x;      /* toward zero */
    double frac = x - (double)r; /* exact, see above */
    if (frac >= 0.5)
        r++;
    else if (frac <= -0.5)
        r--;
    return r;
}

#endif /* KS_PLUGIN_PTS_ROUND_H */
