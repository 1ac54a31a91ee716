/*
 * Reading PVCs, PVs, StorageClasses and CSIStorageCapacities through the
 * host's object views: field helpers, resource quantities, and the three
 * selector forms VolumeBinding evaluates (a claim's or a capacity's
 * metav1.LabelSelector, a PV's required node affinity, a class's
 * allowedTopologies), with upstream's semantics. Pure functions over
 * views: thread-safe, nothing kept past the call.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb.h"

#define PATH_MAX_LEN 512

/* vb_pathf's own formatting of %s, %u and %% (field paths, on every
 * read): 0, or -1 at any other conversion (vsnprintf then does it all).
 * Truncates as vsnprintf does. */
static int pathf_fast(char *buf, size_t len, const char *fmt, va_list ap)
{
    size_t o = 0;
    const char *f;
    for (f = fmt; *f; f++) {
        char num[16];
        const char *s;
        size_t n;
        if (*f != '%') {
            if (o + 1 < len)
                buf[o] = *f;
            o++;
            continue;
        }
        switch (*++f) {
        case 's':
            s = va_arg(ap, const char *);
            if (s == NULL)
                s = "(null)";
            break;
        case 'u': {
            unsigned u = va_arg(ap, unsigned);
            char *p = num + sizeof num;
            *--p = '\0';
            do
                *--p = (char)('0' + u % 10);
            while ((u /= 10) != 0);
            s = p;
            break;
        }
        case '%':
            s = "%";
            break;
        default:
            return -1;
        }
        n = strlen(s);
        if (o + 1 < len)
            memcpy(buf + o, s, o + n + 1 <= len ? n : len - 1 - o);
        o += n;
    }
    if (len > 0)
        buf[o < len ? o : len - 1] = '\0';
    return 0;
}

void vb_pathf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = pathf_fast(buf, len, fmt, ap);
    va_end(ap);
    if (rc != 0) {
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
}

const char *vb_quote(char *buf, size_t len, const char *s)
{
    size_t o = 0;
    if (len < 3) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[o++] = '"';
    for (; *s && o + 6 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

const char *vb_str(const vb_t *v, const ks_object_t *o, const char *path)
{
    const char *s = NULL;
    if (v->api->object_string(o, path, &s) != KS_FIELD_OK || s == NULL)
        return "";
    return s;
}

int vb_has(const vb_t *v, const ks_object_t *o, const char *path)
{
    ks_field_type_t t = v->api->object_type(o, path);
    return t != KS_FIELD_ABSENT && t != KS_FIELD_INVALID;
}

const char *vb_annotation(const vb_t *v, const ks_object_t *o,
                          const char *key)
{
    char path[PATH_MAX_LEN];
    const char *s = NULL;
    vb_pathf(path, sizeof path, "metadata.annotations[\"%s\"]", key);
    if (v->api->object_string(o, path, &s) != KS_FIELD_OK)
        return NULL;
    return s;
}

int64_t vb_rv_text(const char *s)
{
    int64_t n = 0;
    if (s == NULL || ks_parse_int64(s, &n) != 0)
        return 0;
    return n;
}

int64_t vb_rv(const vb_t *v, const ks_object_t *o)
{
    return vb_rv_text(vb_str(v, o, "metadata.resourceVersion"));
}

const char *vb_claim_class(const vb_t *v, const ks_object_t *pvc)
{
    const char *s = vb_annotation(v, pvc, ANN_BETA_STORAGE_CLASS);
    if (s != NULL)
        return s;
    return vb_str(v, pvc, "spec.storageClassName");
}

const char *vb_volume_class(const vb_t *v, const ks_object_t *pv)
{
    const char *s = vb_annotation(v, pv, ANN_BETA_STORAGE_CLASS);
    if (s != NULL)
        return s;
    return vb_str(v, pv, "spec.storageClassName");
}

/* --- quantities ------------------------------------------------------------ */

int vb_parse_quantity(const char *s, int64_t *out)
{
    static const struct {
        const char *suffix;
        long double mult;
    } suffixes[] = {
        {"Ki", 1024.0L}, {"Mi", 1048576.0L}, {"Gi", 1073741824.0L},
        {"Ti", 1099511627776.0L}, {"Pi", 1125899906842624.0L},
        {"Ei", 1152921504606846976.0L}, {"n", 1e-9L}, {"u", 1e-6L},
        {"m", 1e-3L}, {"k", 1e3L}, {"M", 1e6L}, {"G", 1e9L}, {"T", 1e12L},
        {"P", 1e15L}, {"E", 1e18L}, {"", 1.0L},
    };
    const char *p = s;
    long double val = 0, scale = 1, mult = 1;
    int neg = 0, digits = 0;
    size_t i;
    if (s == NULL)
        return -1;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        val = val * 10 + (*p - '0');
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            scale /= 10;
            val += (*p - '0') * scale;
        }
    }
    if (digits == 0)
        return -1;
    if ((*p == 'e' || *p == 'E') && p[1] != '\0' &&
        (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))) {
        int64_t e = 0;
        if (ks_parse_int64(p + 1, &e) != 0 || e > 30 || e < -30)
            return -1;
        mult = powl(10.0L, (long double)e);
    } else {
        for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
            if (strcmp(p, suffixes[i].suffix) == 0)
                break;
        if (i == sizeof suffixes / sizeof suffixes[0])
            return -1;
        mult = suffixes[i].mult;
    }
    val = ceill(val * mult);
    if (val > 9.2e18L)
        val = 9.2e18L;
    *out = neg ? -(int64_t)val : (int64_t)val;
    return 0;
}

int vb_quantity(const vb_t *v, const ks_object_t *o, const char *path,
                int64_t *out)
{
    const char *s = NULL;
    int64_t n;
    switch (v->api->object_type(o, path)) {
    case KS_FIELD_STRING:
        if (v->api->object_string(o, path, &s) != KS_FIELD_OK ||
            vb_parse_quantity(s, out) != 0)
            return 0;
        return 1;
    case KS_FIELD_INT:
        if (v->api->object_int(o, path, &n) != KS_FIELD_OK)
            return 0;
        *out = n;
        return 1;
    default:
        return 0;
    }
}

/* --- requirements ---------------------------------------------------------- */

/* Is `value` one of the strings of the array at `path`? */
static int in_values(const vb_t *v, const ks_object_t *o, const char *path,
                     uint32_t n, const char *value)
{
    char p[PATH_MAX_LEN];
    uint32_t i;
    for (i = 0; i < n; i++) {
        vb_pathf(p, sizeof p, "%s[%u]", path, i);
        if (strcmp(vb_str(v, o, p), value) == 0)
            return 1;
    }
    return 0;
}

/* One requirement {key, operator, values} at `rpath` against `value`
 * (NULL: the label is absent). `node` allows Gt and Lt (a node selector
 * requirement). 1 match, 0 no match, -1 invalid. */
static int req_eval(const vb_t *v, const ks_object_t *o, const char *rpath,
                    const char *value, int node)
{
    char p[PATH_MAX_LEN];
    const char *op;
    uint32_t n = 0;
    vb_pathf(p, sizeof p, "%s.operator", rpath);
    op = vb_str(v, o, p);
    vb_pathf(p, sizeof p, "%s.values", rpath);
    (void)v->api->object_len(o, p, &n);
    if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
        int in;
        if (n == 0)
            return -1;
        in = value != NULL && in_values(v, o, p, n, value);
        return op[0] == 'I' ? in : !in;
    }
    if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
        if (n != 0)
            return -1;
        return (value != NULL) == (op[0] == 'E');
    }
    if (node && (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0)) {
        int64_t lhs, rhs;
        char vp[PATH_MAX_LEN];
        if (n != 1)
            return -1;
        vb_pathf(vp, sizeof vp, "%s[0]", p);
        if (ks_parse_int64(vb_str(v, o, vp), &rhs) != 0)
            return -1;
        if (value == NULL || ks_parse_int64(value, &lhs) != 0)
            return 0;
        return op[0] == 'G' ? lhs > rhs : lhs < rhs;
    }
    return -1;
}

typedef struct ml_ud {
    const ks_labels_t *labels;
    int ok;
} ml_ud_t;

static int match_label_fn(const char *key, const char *value, void *ud)
{
    ml_ud_t *m = ud;
    const char *have = ks_labels_get(m->labels, key);
    if (value == NULL || have == NULL || strcmp(have, value) != 0) {
        m->ok = 0;
        return 1;
    }
    return 0;
}

int vb_label_selector_matches(const vb_t *v, const ks_object_t *o,
                              const char *path, const ks_labels_t *labels)
{
    char p[PATH_MAX_LEN], rp[PATH_MAX_LEN];
    ml_ud_t m = {labels, 1};
    uint32_t n = 0, i;
    int bad = 0;
    if (!vb_has(v, o, path))
        return 0;
    vb_pathf(p, sizeof p, "%s.matchLabels", path);
    if (vb_has(v, o, p) &&
        v->api->object_map_iterate(o, p, match_label_fn, &m) != KS_FIELD_OK)
        return -1;
    vb_pathf(p, sizeof p, "%s.matchExpressions", path);
    (void)v->api->object_len(o, p, &n);
    for (i = 0; i < n; i++) {
        int r;
        vb_pathf(rp, sizeof rp, "%s[%u].key", p, i);
        {
            const char *key = vb_str(v, o, rp);
            vb_pathf(rp, sizeof rp, "%s[%u]", p, i);
            r = req_eval(v, o, rp, ks_labels_get(labels, key), 0);
        }
        if (r < 0)
            bad = 1;
        else if (r == 0)
            m.ok = 0;
    }
    if (bad)
        return -1;
    return m.ok;
}

/* One NodeSelectorTerm at `tpath`: 1 match, 0 not, -1 invalid (skipped
 * by the caller, as upstream's lazy-error selector does). */
static int term_matches(const vb_t *v, const ks_object_t *o,
                        const char *tpath, const ks_labels_t *labels)
{
    char p[PATH_MAX_LEN], rp[PATH_MAX_LEN];
    uint32_t ne = 0, nf = 0, i;
    int ok = 1;
    vb_pathf(p, sizeof p, "%s.matchExpressions", tpath);
    (void)v->api->object_len(o, p, &ne);
    vb_pathf(rp, sizeof rp, "%s.matchFields", tpath);
    (void)v->api->object_len(o, rp, &nf);
    if (ne == 0 && nf == 0)
        return 0;
    for (i = 0; i < ne; i++) {
        char kp[PATH_MAX_LEN], ep[PATH_MAX_LEN];
        int r;
        vb_pathf(ep, sizeof ep, "%s[%u]", p, i);
        vb_pathf(kp, sizeof kp, "%s.key", ep);
        r = req_eval(v, o, ep, ks_labels_get(labels, vb_str(v, o, kp)), 1);
        if (r < 0)
            return -1;
        if (r == 0)
            ok = 0;
    }
    for (i = 0; i < nf; i++) {
        char ep[PATH_MAX_LEN], xp[PATH_MAX_LEN];
        const char *op;
        uint32_t nv = 0;
        int r;
        vb_pathf(ep, sizeof ep, "%s[%u]", rp, i);
        vb_pathf(xp, sizeof xp, "%s.operator", ep);
        op = vb_str(v, o, xp);
        vb_pathf(xp, sizeof xp, "%s.values", ep);
        (void)v->api->object_len(o, xp, &nv);
        if ((strcmp(op, "In") != 0 && strcmp(op, "NotIn") != 0) || nv != 1)
            return -1;
        /* CheckNodeAffinity's node has labels only: its name is "". */
        r = req_eval(v, o, ep, "", 1);
        if (r < 0)
            return -1;
        if (r == 0)
            ok = 0;
    }
    return ok;
}

int vb_node_affinity_matches(const vb_t *v, const ks_object_t *pv,
                             const ks_labels_t *labels)
{
    const char *base = "spec.nodeAffinity.required.nodeSelectorTerms";
    char tp[PATH_MAX_LEN];
    uint32_t n = 0, i;
    if (!vb_has(v, pv, "spec.nodeAffinity") ||
        !vb_has(v, pv, "spec.nodeAffinity.required"))
        return 1;
    (void)v->api->object_len(pv, base, &n);
    for (i = 0; i < n; i++) {
        vb_pathf(tp, sizeof tp, "%s[%u]", base, i);
        if (term_matches(v, pv, tp, labels) == 1)
            return 1;
    }
    return 0;
}

int vb_topology_matches(const vb_t *v, const ks_object_t *sc,
                        const ks_labels_t *labels)
{
    char tp[PATH_MAX_LEN], ep[PATH_MAX_LEN], xp[PATH_MAX_LEN];
    uint32_t n = 0, i, j;
    (void)v->api->object_len(sc, "allowedTopologies", &n);
    if (n == 0)
        return 1; /* no terms: every node */
    for (i = 0; i < n; i++) {
        uint32_t ne = 0;
        int ok = 1;
        vb_pathf(tp, sizeof tp, "allowedTopologies[%u].matchLabelExpressions",
                 i);
        (void)v->api->object_len(sc, tp, &ne);
        if (ne == 0)
            continue; /* an empty term selects nothing */
        for (j = 0; j < ne && ok; j++) {
            uint32_t nv = 0;
            const char *have;
            vb_pathf(ep, sizeof ep, "%s[%u]", tp, j);
            vb_pathf(xp, sizeof xp, "%s.values", ep);
            (void)v->api->object_len(sc, xp, &nv);
            if (nv == 0) {
                ok = 0; /* not a valid selector: the term is skipped */
                break;
            }
            vb_pathf(ep + strlen(ep), sizeof ep - strlen(ep), ".key");
            have = ks_labels_get(labels, vb_str(v, sc, ep));
            ok = have != NULL && in_values(v, sc, xp, nv, have);
        }
        if (ok)
            return 1;
    }
    return 0;
}

typedef struct eq_ud {
    const vb_t *v;
    const ks_object_t *a, *b;
    const char *path;
    int equal;
} eq_ud_t;

static int eq_key_fn(const char *key, const char *value, void *ud)
{
    eq_ud_t *e = ud;
    char p[PATH_MAX_LEN];
    (void)value;
    vb_pathf(p, sizeof p, "%s[\"%s\"]", e->path, key);
    if (!vb_field_equal(e->v, e->a, e->b, p)) {
        e->equal = 0;
        return 1;
    }
    return 0;
}

int vb_field_equal(const vb_t *v, const ks_object_t *a, const ks_object_t *b,
                   const char *path)
{
    ks_field_type_t ta = v->api->object_type(a, path),
                    tb = v->api->object_type(b, path);
    uint32_t na = 0, nb = 0, i;
    if (ta != tb)
        return 0;
    switch (ta) {
    case KS_FIELD_ABSENT:
    case KS_FIELD_INVALID:
        return 1;
    case KS_FIELD_STRING:
        return strcmp(vb_str(v, a, path), vb_str(v, b, path)) == 0;
    case KS_FIELD_INT: {
        int64_t x = 0, y = 0;
        (void)v->api->object_int(a, path, &x);
        (void)v->api->object_int(b, path, &y);
        return x == y;
    }
    case KS_FIELD_BOOL: {
        int x = 0, y = 0;
        (void)v->api->object_bool(a, path, &x);
        (void)v->api->object_bool(b, path, &y);
        return x == y;
    }
    case KS_FIELD_REAL:
        return 0; /* not in the fields compared here */
    case KS_FIELD_ARRAY: {
        char p[PATH_MAX_LEN];
        (void)v->api->object_len(a, path, &na);
        (void)v->api->object_len(b, path, &nb);
        if (na != nb)
            return 0;
        for (i = 0; i < na; i++) {
            vb_pathf(p, sizeof p, "%s[%u]", path, i);
            if (!vb_field_equal(v, a, b, p))
                return 0;
        }
        return 1;
    }
    case KS_FIELD_MAP: {
        eq_ud_t e = {v, a, b, path, 1};
        (void)v->api->object_len(a, path, &na);
        (void)v->api->object_len(b, path, &nb);
        if (na != nb)
            return 0;
        (void)v->api->object_map_iterate(a, path, eq_key_fn, &e);
        return e.equal;
    }
    }
    return 0;
}
