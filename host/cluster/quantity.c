/*
 * Kubernetes resource.Quantity parsing with exact decimal arithmetic.
 *
 * The scanner accepts what upstream's parser accepts: an optional sign,
 * digits with an optional '.', then a suffix made of the letters
 * "eEinumkKMGTP", an optional sign and digits, which must then be one of the
 * SI suffixes or e/E followed by an integer exponent. The value is
 * D * 10^e10 * 2^e2 for the significant digits D; it is computed with a small
 * base-10^9 big number and rounded up (away from zero) to the requested
 * scale, as Value() and MilliValue() do. Binary-suffixed values above
 * 2^63-1 are capped there, as upstream does when parsing.
 */
#include "quantity.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BIG_LIMBS 40            /* 360 decimal digits */
#define BIG_BASE 1000000000u
#define MAX_SIG_DIGITS 64       /* significant digits accepted */

typedef struct big {
    uint32_t limb[BIG_LIMBS]; /* little endian, base 1e9 */
    int n;
} big_t;

static void big_mul_small(big_t *b, uint32_t m)
{
    uint64_t carry = 0;
    int i;
    for (i = 0; i < b->n; i++) {
        uint64_t v = (uint64_t)b->limb[i] * m + carry;
        b->limb[i] = (uint32_t)(v % BIG_BASE);
        carry = v / BIG_BASE;
    }
    while (carry != 0 && b->n < BIG_LIMBS) {
        b->limb[b->n++] = (uint32_t)(carry % BIG_BASE);
        carry /= BIG_BASE;
    }
}

static uint32_t big_div_small(big_t *b, uint32_t d)
{
    uint64_t rem = 0;
    int i;
    for (i = b->n - 1; i >= 0; i--) {
        uint64_t v = rem * BIG_BASE + b->limb[i];
        b->limb[i] = (uint32_t)(v / d);
        rem = v % d;
    }
    while (b->n > 0 && b->limb[b->n - 1] == 0)
        b->n--;
    return (uint32_t)rem;
}

static void big_add_one(big_t *b)
{
    int i;
    for (i = 0; i < b->n; i++) {
        if (++b->limb[i] < BIG_BASE)
            return;
        b->limb[i] = 0;
    }
    if (b->n < BIG_LIMBS)
        b->limb[b->n++] = 1;
}

/* 0 and *out when b fits in [0, INT64_MAX], -1 otherwise. */
static int big_to_i64(const big_t *b, int64_t *out)
{
    uint64_t v = 0;
    int i;
    if (b->n > 3)
        return -1;
    for (i = b->n - 1; i >= 0; i--) {
        if (v > (uint64_t)INT64_MAX / BIG_BASE)
            return -1;
        v = v * BIG_BASE + b->limb[i];
        if (v > (uint64_t)INT64_MAX)
            return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* b = floor(digits * 2^e2 * 10^e10); returns 1 when that dropped a
 * non-zero fraction. The caller bounds the magnitudes. */
static int big_build(big_t *b, const char *digits, size_t nd, long e2,
                     long e10)
{
    size_t i;
    int inexact = 0;
    memset(b, 0, sizeof(*b));
    for (i = 0; i < nd; i++) {
        big_mul_small(b, 10);
        if (b->n == 0)
            b->n = 1;
        b->limb[0] += (uint32_t)(digits[i] - '0');
    }
    for (i = 0; i < (size_t)e2; i++)
        big_mul_small(b, 2);
    if (e10 >= 0) {
        for (i = 0; i < (size_t)e10; i++)
            big_mul_small(b, 10);
    } else {
        for (i = 0; i < (size_t)-e10; i++)
            if (big_div_small(b, 10) != 0)
                inexact = 1;
    }
    return inexact;
}

/* Append one digit of the mantissa; leading zeros are dropped and other
 * zeros held in *trail until a non-zero digit follows. */
static int push_digit(char c, char *digits, size_t *nd, size_t *trail)
{
    if (c == '0') {
        if (*nd > 0)
            (*trail)++;
        return 0;
    }
    if (*nd + *trail + 1 > MAX_SIG_DIGITS)
        return -1;
    for (; *trail > 0; (*trail)--)
        digits[(*nd)++] = '0';
    digits[(*nd)++] = c;
    return 0;
}

static int fail(char *err, size_t errlen, const char *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, const char *s, const char *fmt, ...)
{
    va_list ap;
    int off;
    if (err == NULL || errlen == 0)
        return -1;
    off = snprintf(err, errlen, "invalid quantity \"%s\": ", s);
    if (off < 0 || (size_t)off >= errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Decimal and binary suffix tables. Returns 0 and sets base/exp, or -1. */
static int suffix_lookup(const char *suf, size_t n, int *base, long *exp)
{
    static const struct { const char *s; int base; int exp; } tab[] = {
        {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
        {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
        {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };
    size_t i;
    for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (strlen(tab[i].s) == n && memcmp(tab[i].s, suf, n) == 0) {
            *base = tab[i].base;
            *exp = tab[i].exp;
            return 0;
        }
    }
    if (n > 1 && (suf[0] == 'e' || suf[0] == 'E')) {
        /* a decimal exponent: optional sign then at least one digit */
        size_t i2 = 1;
        long v = 0;
        int neg = 0;
        if (suf[i2] == '+' || suf[i2] == '-')
            neg = suf[i2++] == '-';
        if (i2 >= n)
            return -1;
        for (; i2 < n; i2++) {
            if (!is_digit(suf[i2]))
                return -1;
            if (v > 100000000L)
                return -2; /* exponent out of range */
            v = v * 10 + (suf[i2] - '0');
        }
        *base = 10;
        *exp = neg ? -v : v;
        return 0;
    }
    return -1;
}

int ks_quantity_parse(const char *s, int milli, int64_t *out, char *err,
                      size_t errlen)
{
    size_t pos = 0, end, num_start, num_end, den_start = 0, den_end = 0;
    size_t suf_start, i;
    int negative = 0, base = 10, rc;
    long exp = 0, e10 = 0, e2 = 0;
    char digits[MAX_SIG_DIGITS];
    size_t nd = 0, trail = 0;
    big_t b;
    int inexact = 0;
    int64_t v;

    if (s == NULL || s[0] == '\0')
        return fail(err, errlen, s ? s : "", "empty value");
    end = strlen(s);
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        pos = 1;
    }
    num_start = pos;
    while (pos < end && is_digit(s[pos]))
        pos++;
    num_end = pos;
    if (pos < end && s[pos] == '.') {
        pos++;
        den_start = pos;
        while (pos < end && is_digit(s[pos]))
            pos++;
        den_end = pos;
    }
    suf_start = pos;
    while (pos < end && strchr("eEinumkKMGTP", s[pos]) != NULL)
        pos++;
    if (pos < end && (s[pos] == '+' || s[pos] == '-'))
        pos++;
    while (pos < end && is_digit(s[pos]))
        pos++;
    if (pos < end)
        return fail(err, errlen, s, "unexpected character '%c' at offset %zu",
                    s[pos], pos);
    rc = suffix_lookup(s + suf_start, end - suf_start, &base, &exp);
    if (rc == -2)
        return fail(err, errlen, s, "exponent out of range");
    if (rc != 0)
        return fail(err, errlen, s, "unknown suffix \"%s\"", s + suf_start);

    /* Significant digits of num||den, with the decimal exponent. Zeros
     * are held back until a non-zero digit follows, so trailing zeros never
     * count against MAX_SIG_DIGITS. */
    for (i = num_start; i < num_end; i++)
        if (push_digit(s[i], digits, &nd, &trail) != 0)
            return fail(err, errlen, s, "too many digits");
    for (i = den_start; i < den_end; i++) {
        e10--;
        if (push_digit(s[i], digits, &nd, &trail) != 0)
            return fail(err, errlen, s, "too many digits");
    }
    if (nd == 0) {
        *out = 0;
        return 0;
    }
    e10 += (long)trail;
    if (base == 10)
        e10 += exp;
    else
        e2 = exp;

    /* Binary values are capped at 2^63-1 before any scaling. */
    if (base == 2) {
        inexact = big_build(&b, digits, nd, e2, e10);
        if (big_to_i64(&b, &v) != 0 || (v == INT64_MAX && inexact)) {
            if (milli)
                return fail(err, errlen, s, "value out of range");
            *out = negative ? -INT64_MAX : INT64_MAX;
            return 0;
        }
    }

    if (milli)
        e10 += 3;
    /* Magnitude checks before the big arithmetic: the value is at least
     * 10^(nd-1+e10) and at most 10^(nd+e10) * 2^60. */
    if ((long)nd - 1 + e10 > 19)
        return fail(err, errlen, s, "value out of range");
    if ((long)nd + e10 + 19 < 0) {
        /* below 1e-1 in magnitude: rounds up to one unit */
        *out = negative ? -1 : 1;
        return 0;
    }
    inexact = big_build(&b, digits, nd, e2, e10);
    if (inexact)
        big_add_one(&b);
    if (big_to_i64(&b, &v) != 0)
        return fail(err, errlen, s, "value out of range");
    *out = negative ? -v : v;
    return 0;
}
