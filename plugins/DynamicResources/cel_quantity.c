/* Kubernetes resource.Quantity values for CEL's quantity() library, exact:
 * a number with an optional decimal fraction and sign, then a binary suffix
 * (Ki..Ei), a decimal suffix (n, u, m, k, M, G, T, P, E) or a decimal
 * exponent (e3, E-2), held as an integer count of nano units in a fixed
 * width; below 1n a value is rounded away from zero, as the API server
 * does when it parses a quantity. */
#include "cel_internal.h"

#include <stdio.h>
#include <string.h>

#define N KS_CEL_QLIMBS

static const char format_msg[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

static int mag_is_zero(const uint32_t *m)
{
    for (int i = 0; i < N; i++)
        if (m[i])
            return 0;
    return 1;
}

/* m = m * f + add; -1 on overflow */
static int mag_muladd(uint32_t *m, uint32_t f, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < N; i++) {
        uint64_t x = (uint64_t)m[i] * f + carry;
        m[i] = (uint32_t)x;
        carry = x >> 32;
    }
    return carry ? -1 : 0;
}

/* m = m / d, returns the remainder */
static uint32_t mag_div(uint32_t *m, uint32_t d)
{
    uint64_t r = 0;
    for (int i = N - 1; i >= 0; i--) {
        uint64_t x = (r << 32) | m[i];
        m[i] = (uint32_t)(x / d);
        r = x % d;
    }
    return (uint32_t)r;
}

static int mag_cmp(const uint32_t *a, const uint32_t *b)
{
    for (int i = N - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int mag_add(const uint32_t *a, const uint32_t *b, uint32_t *r)
{
    uint64_t c = 0;
    for (int i = 0; i < N; i++) {
        uint64_t x = (uint64_t)a[i] + b[i] + c;
        r[i] = (uint32_t)x;
        c = x >> 32;
    }
    return c ? -1 : 0;
}

/* r = a - b with a >= b */
static void mag_sub(const uint32_t *a, const uint32_t *b, uint32_t *r)
{
    int64_t br = 0;
    for (int i = 0; i < N; i++) {
        int64_t x = (int64_t)a[i] - b[i] - br;
        br = x < 0;
        r[i] = (uint32_t)(x + (br ? ((int64_t)1 << 32) : 0));
    }
}

static int fail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return -1;
}

int ks_cel_quantity_parse(const char *s, size_t n, ks_cel_quantity_t *q,
                          char *err, size_t errlen)
{
    memset(q, 0, sizeof *q);
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    size_t digits = 0, frac = 0;
    int seen_dot = 0, any = 0;
    for (; i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++) {
        if (s[i] == '.') {
            if (seen_dot)
                return fail(err, errlen, format_msg);
            seen_dot = 1;
            continue;
        }
        any = 1;
        if (digits == 0 && s[i] == '0') {
            if (seen_dot)
                frac++;
            continue;
        }
        if (++digits > 60)
            return fail(err, errlen, "quantity has too many digits");
        if (seen_dot)
            frac++;
        mag_muladd(q->mag, 10, (uint32_t)(s[i] - '0'));
    }
    if (!any)
        return fail(err, errlen, format_msg);
    /* suffix */
    const char *suf = s + i;
    size_t sn = n - i;
    long exp10 = 0;
    int exp2 = 0;
    static const struct { const char *s; long e10; int e2; } tab[] = {
        { "", 0, 0 }, { "n", -9, 0 }, { "u", -6, 0 }, { "m", -3, 0 }, { "k", 3, 0 },
        { "M", 6, 0 }, { "G", 9, 0 }, { "T", 12, 0 }, { "P", 15, 0 }, { "E", 18, 0 },
        { "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 },
        { "Ei", 0, 60 },
    };
    int found = 0;
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (strlen(tab[k].s) == sn && !memcmp(tab[k].s, suf, sn)) {
            exp10 = tab[k].e10;
            exp2 = tab[k].e2;
            found = 1;
            break;
        }
    if (!found) {
        if (sn >= 2 && (suf[0] == 'e' || suf[0] == 'E')) {
            size_t k = 1;
            int eneg = 0;
            if (suf[k] == '+' || suf[k] == '-')
                eneg = suf[k++] == '-';
            if (k >= sn)
                return fail(err, errlen, "unable to parse quantity's suffix");
            long v = 0;
            for (; k < sn; k++) {
                if (suf[k] < '0' || suf[k] > '9')
                    return fail(err, errlen, "unable to parse quantity's suffix");
                if (v < 100000)
                    v = v * 10 + (suf[k] - '0');
            }
            exp10 = eneg ? -v : v;
        } else {
            for (size_t k = 0; k < sn; k++)
                if (!strchr("eEinumkKMGTP+-0123456789", suf[k]))
                    return fail(err, errlen, format_msg);
            return fail(err, errlen, "unable to parse quantity's suffix");
        }
    }
    if (mag_is_zero(q->mag))
        return 0;
    exp10 += 9 - (long)frac;
    for (int k = exp2; k > 0; k -= 30)
        if (mag_muladd(q->mag, 1u << (k < 30 ? k : 30), 0) < 0)
            return fail(err, errlen, "quantity too large");
    if (exp10 >= 0) {
        static const uint32_t pow10[10] = { 1, 10, 100, 1000, 10000, 100000, 1000000,
                                            10000000, 100000000, 1000000000 };
        if (exp10 > 130)
            return fail(err, errlen, "quantity too large");
        for (long k = exp10; k > 0; k -= 9)
            if (mag_muladd(q->mag, pow10[k < 9 ? k : 9], 0) < 0)
                return fail(err, errlen, "quantity too large");
    } else {
        int rem = 0;
        for (long k = 0; k < -exp10 && !mag_is_zero(q->mag); k++)
            rem |= mag_div(q->mag, 10) != 0;
        if (rem)
            mag_muladd(q->mag, 1, 1); /* round away from zero to 1n */
    }
    q->neg = neg && !mag_is_zero(q->mag);
    return 0;
}

int ks_cel_quantity_sign(const ks_cel_quantity_t *q)
{
    return mag_is_zero(q->mag) ? 0 : q->neg ? -1 : 1;
}

int ks_cel_quantity_cmp(const ks_cel_quantity_t *a, const ks_cel_quantity_t *b)
{
    int sa = ks_cel_quantity_sign(a), sb = ks_cel_quantity_sign(b);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    int c = mag_cmp(a->mag, b->mag);
    return sa < 0 ? -c : c;
}

int ks_cel_quantity_to_int(const ks_cel_quantity_t *q, int64_t *out)
{
    uint32_t m[N];
    memcpy(m, q->mag, sizeof m);
    if (mag_div(m, 1000000000u) != 0)
        return -1;
    for (int i = 2; i < N; i++)
        if (m[i])
            return -1;
    uint64_t v = ((uint64_t)m[1] << 32) | m[0];
    if (q->neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)v;
    }
    return 0;
}

void ks_cel_quantity_from_int(int64_t v, ks_cel_quantity_t *q)
{
    memset(q, 0, sizeof *q);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    q->mag[0] = (uint32_t)u;
    q->mag[1] = (uint32_t)(u >> 32);
    mag_muladd(q->mag, 1000000000u, 0);
    q->neg = v < 0;
}

int ks_cel_quantity_add(const ks_cel_quantity_t *a, const ks_cel_quantity_t *b,
                        int sub, ks_cel_quantity_t *r)
{
    int bneg = ks_cel_quantity_sign(b) < 0;
    if (sub && !mag_is_zero(b->mag))
        bneg = !bneg;
    int aneg = ks_cel_quantity_sign(a) < 0;
    memset(r, 0, sizeof *r);
    if (aneg == bneg) {
        if (mag_add(a->mag, b->mag, r->mag) < 0)
            return -1;
        r->neg = aneg;
    } else if (mag_cmp(a->mag, b->mag) >= 0) {
        mag_sub(a->mag, b->mag, r->mag);
        r->neg = aneg;
    } else {
        mag_sub(b->mag, a->mag, r->mag);
        r->neg = bneg;
    }
    if (mag_is_zero(r->mag))
        r->neg = 0;
    return 0;
}

double ks_cel_quantity_to_double(const ks_cel_quantity_t *q)
{
    double d = 0;
    for (int i = N - 1; i >= 0; i--)
        d = d * 4294967296.0 + q->mag[i];
    d /= 1e9;
    return q->neg ? -d : d;
}
