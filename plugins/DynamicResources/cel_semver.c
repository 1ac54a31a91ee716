/* Semantic versions for CEL's semver() library and VERSION attributes, by
 * the rules of the blang/semver parser Kubernetes uses: MAJOR.MINOR.PATCH
 * without a zero before other digits, an optional -prerelease of dot-separated
 * identifiers (numeric ones without a zero before other digits) and an ignored +build.
 * Precedence: numbers, then a release above its prereleases, then the
 * prerelease identifiers (numeric below alphanumeric). */
#include "cel_internal.h"

#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, const char *s, size_t n)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, (int)(n > 80 ? 80 : n), s);
    return -1;
}

static int is_alnum_hy(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static int parse_num(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return n > 0;
}

/* Upstream's semver(s, true): drops a "v" prefix and zeros before digits, and fills
 * a missing minor or patch with 0. */
static const char *normalize(const char *s, size_t *n, ks_cel_arena_t *a, char *err, size_t errlen)
{
    if (*n && s[0] == 'v') {
        s++;
        (*n)--;
    }
    char *out = ks_cel_arena_alloc(a, *n + 8);
    if (!out) {
        fail(err, errlen, "out of memory%.*s", "", 0);
        return NULL;
    }
    size_t o = 0, parts = 0, i = 0;
    while (parts < 3) {
        size_t start = i;
        size_t end = start;
        if (parts < 2)
            while (end < *n && s[end] != '.')
                end++;
        else
            end = *n;
        const char *p = s + start;
        size_t pn = end - start;
        if (pn > 1) {
            size_t z = 0;
            while (z < pn && p[z] == '0')
                z++;
            if (z == pn || !(p[z] >= '0' && p[z] <= '9'))
                z = z ? z - 1 : 0;
            p += z;
            pn -= z;
        }
        if (parts)
            out[o++] = '.';
        memcpy(out + o, p, pn);
        o += pn;
        parts++;
        if (end >= *n) {
            if (parts < 3 && (memchr(p, '+', pn) || memchr(p, '-', pn))) {
                fail(err, errlen, "short version cannot contain PreRelease/Build meta data%.*s", "", 0);
                return NULL;
            }
            while (parts < 3) {
                memcpy(out + o, ".0", 2);
                o += 2;
                parts++;
            }
            break;
        }
        i = end + 1;
    }
    *n = o;
    return out;
}

int ks_cel_semver_parse(const char *s, size_t n, int norm, ks_cel_arena_t *a,
                        ks_cel_semver_t *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (norm) {
        s = normalize(s, &n, a, err, errlen);
        if (!s)
            return -1;
    }
    if (n == 0)
        return fail(err, errlen, "Version string empty%.*s", "", 0);
    /* split off +build, then -prerelease (the first '-' after PATCH) */
    size_t core_end = n;
    const char *plus = memchr(s, '+', n);
    size_t build_at = plus ? (size_t)(plus - s) : n;
    const char *dash = memchr(s, '-', build_at);
    core_end = dash ? (size_t)(dash - s) : build_at;
    uint64_t nums[3];
    size_t i = 0;
    for (int k = 0; k < 3; k++) {
        size_t start = i;
        while (i < core_end && s[i] != '.')
            i++;
        if ((k < 2 && i >= core_end) || (k == 2 && i != core_end))
            return fail(err, errlen, "No Major.Minor.Patch elements found in '%.*s'", s, n);
        if (i - start > 1 && s[start] == '0' && all_digits(s + start, i - start))
            return fail(err, errlen, "Numbers must not begin with 0 in '%.*s'", s, n);
        if (parse_num(s + start, i - start, &nums[k]) < 0)
            return fail(err, errlen, "Invalid character(s) found in version '%.*s'", s, n);
        i++;
    }
    v->major = nums[0];
    v->minor = nums[1];
    v->patch = nums[2];
    if (dash) {
        const char *p = dash + 1;
        size_t pn = build_at - (core_end + 1);
        size_t st = 0;
        for (size_t k = 0; k <= pn; k++) {
            if (k == pn || p[k] == '.') {
                if (k == st)
                    return fail(err, errlen, "Prerelease is empty in '%.*s'", s, n);
                if (all_digits(p + st, k - st) && k - st > 1 && p[st] == '0')
                    return fail(err, errlen, "Numeric PreRelease version must not begin with 0 in '%.*s'", s, n);
                st = k + 1;
            } else if (!is_alnum_hy(p[k])) {
                return fail(err, errlen, "Invalid character(s) found in prerelease '%.*s'", s, n);
            }
        }
        char *copy = ks_cel_arena_strndup(a, p, pn);
        if (!copy)
            return fail(err, errlen, "out of memory%.*s", "", 0);
        v->pre = copy;
        v->pre_len = pn;
    }
    if (plus) {
        const char *p = plus + 1;
        size_t pn = n - build_at - 1, st = 0;
        for (size_t k = 0; k <= pn; k++) {
            if (k == pn || p[k] == '.') {
                if (k == st)
                    return fail(err, errlen, "Build meta data is empty in '%.*s'", s, n);
                st = k + 1;
            } else if (!is_alnum_hy(p[k])) {
                return fail(err, errlen, "Invalid character(s) found in build meta data '%.*s'", s, n);
            }
        }
    }
    return 0;
}

static int cmp_u(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

int ks_cel_semver_cmp(const ks_cel_semver_t *a, const ks_cel_semver_t *b)
{
    int c = cmp_u(a->major, b->major);
    if (!c) c = cmp_u(a->minor, b->minor);
    if (!c) c = cmp_u(a->patch, b->patch);
    if (c)
        return c;
    if (!a->pre_len || !b->pre_len)
        return a->pre_len ? -1 : b->pre_len ? 1 : 0;
    size_t i = 0, j = 0;
    for (;;) {
        if (i >= a->pre_len || j >= b->pre_len)
            return i >= a->pre_len && j >= b->pre_len ? 0 : i >= a->pre_len ? -1 : 1;
        size_t ie = i, je = j;
        while (ie < a->pre_len && a->pre[ie] != '.') ie++;
        while (je < b->pre_len && b->pre[je] != '.') je++;
        int an = all_digits(a->pre + i, ie - i), bn = all_digits(b->pre + j, je - j);
        if (an && bn) {
            uint64_t x = 0, y = 0;
            for (size_t k = i; k < ie; k++) x = x * 10 + (uint64_t)(a->pre[k] - '0');
            for (size_t k = j; k < je; k++) y = y * 10 + (uint64_t)(b->pre[k] - '0');
            if (x != y) return cmp_u(x, y);
        } else if (an != bn) {
            return an ? -1 : 1;
        } else {
            size_t la = ie - i, lb = je - j, m = la < lb ? la : lb;
            int r = memcmp(a->pre + i, b->pre + j, m);
            if (r) return r < 0 ? -1 : 1;
            if (la != lb) return la < lb ? -1 : 1;
        }
        i = ie + (ie < a->pre_len);
        j = je + (je < b->pre_len);
        if (ie >= a->pre_len) i = a->pre_len;
        if (je >= b->pre_len) j = b->pre_len;
        if (ie >= a->pre_len && je >= b->pre_len) return 0;
        if (ie >= a->pre_len) return -1;
        if (je >= b->pre_len) return 1;
    }
}
