/* The CEL evaluator: walks a checked tree for one device. Values are
 * dynamically typed; an operator dispatches on the operands' kinds through
 * the overload table and answers "no such overload" when none fits. `&&`
 * and `||` absorb errors as CEL does, `?:` evaluates only the taken branch,
 * and the runtime cost is counted roughly as cel-go counts it (one unit
 * per identifier, selection, index and call; string functions by length;
 * list and map literals 10 and 30) against the caller's limit. */
#include "cel_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cel.bind values in scope, innermost first */
typedef struct frame {
    const ks_cel_node_t *bind;
    ks_cel_value_t val;
    const struct frame *outer;
} frame_t;

typedef struct ev {
    ks_cel_arena_t a;
    const frame_t *frames;
    const ks_cel_device_t *dev;
    uint64_t cost, limit;
    int over_limit;
} ev_t;

typedef ks_cel_value_t val_t;

static val_t verr(ev_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static val_t verr(ev_t *e, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    val_t v = { .kind = KV_ERROR };
    size_t n = strlen(buf);
    char *p = ks_cel_arena_strndup(&e->a, buf, n);
    v.u.s.p = p ? p : "out of memory";
    v.u.s.n = p ? n : strlen("out of memory");
    return v;
}

static val_t vbool(int b) { val_t v = { .kind = KV_BOOL }; v.u.b = !!b; return v; }
static val_t vint(int64_t i) { val_t v = { .kind = KV_INT }; v.u.i = i; return v; }
static val_t vuint(uint64_t u) { val_t v = { .kind = KV_UINT }; v.u.u = u; return v; }
static val_t vdouble(double d) { val_t v = { .kind = KV_DOUBLE }; v.u.d = d; return v; }
static val_t vstr(const char *p, size_t n) { val_t v = { .kind = KV_STRING }; v.u.s.p = p; v.u.s.n = n; return v; }

static int charge(ev_t *e, uint64_t c)
{
    e->cost += c;
    if (e->cost > e->limit) {
        e->over_limit = 1;
        return -1;
    }
    return 0;
}

static uint64_t ceil_frac(size_t n, double f)
{
    return (uint64_t)ceil((double)n * f);
}

char ks_cel_value_letter(const ks_cel_value_t *v)
{
    switch (v->kind) {
    case KV_INT: return 'i';
    case KV_UINT: return 'u';
    case KV_DOUBLE: return 'd';
    case KV_STRING: return 's';
    case KV_BYTES: return 'b';
    case KV_BOOL: return 'B';
    case KV_LIST: return 'l';
    case KV_MAP: case KV_ATTRS: case KV_ATTR_DOMAIN: case KV_CAPS: case KV_CAP_DOMAIN: return 'm';
    case KV_QUANTITY: return 'q';
    case KV_SEMVER: return 'v';
    case KV_NULL: return 'n';
    default: return '?';
    }
}

static int streq(const char *a, const char *p, size_t n)
{
    return a && strlen(a) == n && !memcmp(a, p, n);
}

/* ---- the device's maps ---- */

static val_t attr_value(ev_t *e, const ks_cel_attr_t *at)
{
    switch (at->type) {
    case KS_CEL_ATTR_INT: return vint(at->i);
    case KS_CEL_ATTR_BOOL: return vbool(at->b);
    case KS_CEL_ATTR_STRING: return vstr(at->s ? at->s : "", at->s ? strlen(at->s) : 0);
    case KS_CEL_ATTR_VERSION: {
        ks_cel_semver_t *sv = ks_cel_arena_alloc(&e->a, sizeof *sv);
        char err[200];
        const char *s = at->s ? at->s : "";
        if (!sv)
            return verr(e, "out of memory");
        if (ks_cel_semver_parse(s, strlen(s), 0, &e->a, sv, err, sizeof err) < 0)
            return verr(e, "attribute %s/%s: parse semantic version: %s", at->domain, at->id, err);
        val_t v = { .kind = KV_SEMVER };
        v.u.sv = sv;
        return v;
    }
    }
    return verr(e, "attribute %s/%s: unsupported attribute value", at->domain, at->id);
}

static val_t cap_value(ev_t *e, const ks_cel_capacity_t *c)
{
    ks_cel_quantity_t *q = ks_cel_arena_alloc(&e->a, sizeof *q);
    char err[200];
    const char *s = c->value ? c->value : "";
    if (!q)
        return verr(e, "out of memory");
    if (ks_cel_quantity_parse(s, strlen(s), q, err, sizeof err) < 0)
        return verr(e, "capacity %s/%s: %s", c->domain, c->id, err);
    val_t v = { .kind = KV_QUANTITY };
    v.u.q = q;
    return v;
}

/* Looks key up in a device view; 1 found (*out), 0 missing. */
static int view_find(ev_t *e, const val_t *m, const val_t *key, val_t *out)
{
    const ks_cel_device_t *d = e->dev;
    if (key->kind != KV_STRING)
        return 0;
    const char *k = key->u.s.p;
    size_t kn = key->u.s.n;
    switch (m->kind) {
    case KV_ATTRS: case KV_CAPS:
        /* upstream's outer maps answer every domain, unknown ones with {} */
        *out = (val_t){ .kind = m->kind == KV_ATTRS ? KV_ATTR_DOMAIN : KV_CAP_DOMAIN };
        out->u.s.p = k;
        out->u.s.n = kn;
        return 1;
    case KV_ATTR_DOMAIN:
        for (size_t i = 0; i < d->n_attrs; i++)
            if (streq(d->attrs[i].domain, m->u.s.p, m->u.s.n) && streq(d->attrs[i].id, k, kn)) {
                *out = attr_value(e, &d->attrs[i]);
                return 1;
            }
        return 0;
    case KV_CAP_DOMAIN:
        for (size_t i = 0; i < d->n_caps; i++)
            if (streq(d->caps[i].domain, m->u.s.p, m->u.s.n) && streq(d->caps[i].id, k, kn)) {
                *out = cap_value(e, &d->caps[i]);
                return 1;
            }
        return 0;
    default:
        return 0;
    }
}

/* Whether the view really holds key (`in`, unlike lookups, does not see
 * the outer maps' default). */
static int view_contains(ev_t *e, const val_t *m, const val_t *key)
{
    const ks_cel_device_t *d = e->dev;
    if (key->kind != KV_STRING)
        return 0;
    switch (m->kind) {
    case KV_ATTRS:
        for (size_t i = 0; i < d->n_attrs; i++)
            if (streq(d->attrs[i].domain, key->u.s.p, key->u.s.n))
                return 1;
        return 0;
    case KV_CAPS:
        for (size_t i = 0; i < d->n_caps; i++)
            if (streq(d->caps[i].domain, key->u.s.p, key->u.s.n))
                return 1;
        return 0;
    default: {
        val_t tmp;
        return view_find(e, m, key, &tmp);
    }
    }
}

/* Turns a device view into an ordinary map value. */
static val_t materialize(ev_t *e, const val_t *m)
{
    const ks_cel_device_t *d = e->dev;
    if (m->kind == KV_MAP)
        return *m;
    size_t cap = (m->kind == KV_ATTRS || m->kind == KV_ATTR_DOMAIN) ? d->n_attrs : d->n_caps;
    val_t *items = ks_cel_arena_alloc(&e->a, (2 * cap + 1) * sizeof *items);
    if (!items)
        return verr(e, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < cap; i++) {
        const char *dom = m->kind == KV_ATTRS || m->kind == KV_ATTR_DOMAIN ? d->attrs[i].domain : d->caps[i].domain;
        const char *id = m->kind == KV_ATTRS || m->kind == KV_ATTR_DOMAIN ? d->attrs[i].id : d->caps[i].id;
        if (!dom || !id)
            continue;
        if (m->kind == KV_ATTRS || m->kind == KV_CAPS) {
            int seen = 0;
            for (size_t j = 0; j < n && !seen; j++)
                seen = streq(dom, items[2 * j].u.s.p, items[2 * j].u.s.n);
            if (seen)
                continue;
            items[2 * n] = vstr(dom, strlen(dom));
            items[2 * n + 1] = (val_t){ .kind = m->kind == KV_ATTRS ? KV_ATTR_DOMAIN : KV_CAP_DOMAIN };
            items[2 * n + 1].u.s.p = dom;
            items[2 * n + 1].u.s.n = strlen(dom);
            n++;
        } else {
            if (!streq(dom, m->u.s.p, m->u.s.n))
                continue;
            items[2 * n] = vstr(id, strlen(id));
            items[2 * n + 1] = m->kind == KV_ATTR_DOMAIN ? attr_value(e, &d->attrs[i]) : cap_value(e, &d->caps[i]);
            if (items[2 * n + 1].kind == KV_ERROR)
                return items[2 * n + 1];
            n++;
        }
    }
    val_t v = { .kind = KV_MAP };
    v.u.l.items = items;
    v.u.l.n = n;
    return v;
}

static int is_view(const val_t *v)
{
    return v->kind == KV_ATTRS || v->kind == KV_ATTR_DOMAIN || v->kind == KV_CAPS || v->kind == KV_CAP_DOMAIN;
}

/* ---- equality and lookup ---- */

static int num_cmp_id(int64_t i, double d)
{
    if (d != d) return 2;
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    double t = trunc(d);
    int64_t di = (int64_t)t;
    if (i < di) return -1;
    if (i > di) return 1;
    return t < d ? -1 : t > d ? 1 : 0;
}

static int num_cmp_ud(uint64_t u, double d)
{
    if (d != d) return 2;
    if (d < 0) return 1;
    if (d >= 18446744073709551616.0) return -1;
    double t = trunc(d);
    uint64_t du = (uint64_t)t;
    if (u < du) return -1;
    if (u > du) return 1;
    return t < d ? -1 : t > d ? 1 : 0;
}

/* Compares two numbers of any kinds: -1, 0, 1, or 2 (unordered: NaN). */
static int num_cmp(const val_t *a, const val_t *b)
{
    if (a->kind == KV_INT && b->kind == KV_INT) return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
    if (a->kind == KV_UINT && b->kind == KV_UINT) return a->u.u < b->u.u ? -1 : a->u.u > b->u.u;
    if (a->kind == KV_DOUBLE && b->kind == KV_DOUBLE) {
        if (a->u.d != a->u.d || b->u.d != b->u.d) return 2;
        return a->u.d < b->u.d ? -1 : a->u.d > b->u.d;
    }
    if (a->kind == KV_INT && b->kind == KV_UINT)
        return a->u.i < 0 ? -1 : (uint64_t)a->u.i < b->u.u ? -1 : (uint64_t)a->u.i > b->u.u;
    if (a->kind == KV_UINT && b->kind == KV_INT) {
        int r = num_cmp(b, a);
        return r == 2 ? 2 : -r;
    }
    if (a->kind == KV_INT) return num_cmp_id(a->u.i, b->u.d);
    if (a->kind == KV_UINT) return num_cmp_ud(a->u.u, b->u.d);
    int r = b->kind == KV_INT ? num_cmp_id(b->u.i, a->u.d) : num_cmp_ud(b->u.u, a->u.d);
    return r == 2 ? 2 : -r;
}

static int is_num(const val_t *v)
{
    return v->kind == KV_INT || v->kind == KV_UINT || v->kind == KV_DOUBLE;
}

static int map_find(ev_t *e, const val_t *m, const val_t *key, val_t *out);

static int vequal(ev_t *e, const val_t *a0, const val_t *b0)
{
    val_t a = *a0, b = *b0;
    if (is_view(&a)) a = materialize(e, &a);
    if (is_view(&b)) b = materialize(e, &b);
    if (is_num(&a) && is_num(&b))
        return num_cmp(&a, &b) == 0;
    if (a.kind != b.kind)
        return 0;
    switch (a.kind) {
    case KV_NULL: case KV_DEVICE: return 1; /* there is one device */
    case KV_BOOL: return a.u.b == b.u.b;
    case KV_STRING: case KV_BYTES:
        return a.u.s.n == b.u.s.n && !memcmp(a.u.s.p, b.u.s.p, a.u.s.n);
    case KV_QUANTITY: return ks_cel_quantity_cmp(a.u.q, b.u.q) == 0;
    case KV_SEMVER: return ks_cel_semver_cmp(a.u.sv, b.u.sv) == 0;
    case KV_LIST:
        if (a.u.l.n != b.u.l.n) return 0;
        for (size_t i = 0; i < a.u.l.n; i++)
            if (!vequal(e, &a.u.l.items[i], &b.u.l.items[i]))
                return 0;
        return 1;
    case KV_MAP:
        if (a.u.l.n != b.u.l.n) return 0;
        for (size_t i = 0; i < a.u.l.n; i++) {
            val_t bv;
            if (!map_find(e, &b, &a.u.l.items[2 * i], &bv) || !vequal(e, &a.u.l.items[2 * i + 1], &bv))
                return 0;
        }
        return 1;
    default:
        return 0;
    }
}

/* Map lookup with CEL's numeric key equivalence; 1 found. */
static int map_find(ev_t *e, const val_t *m, const val_t *key, val_t *out)
{
    if (is_view(m))
        return view_find(e, m, key, out);
    for (size_t i = 0; i < m->u.l.n; i++) {
        const val_t *k = &m->u.l.items[2 * i];
        int eq = (is_num(k) && is_num(key)) ? num_cmp(k, key) == 0
                 : (k->kind == key->kind && vequal(e, k, key));
        if (eq) {
            *out = m->u.l.items[2 * i + 1];
            return 1;
        }
    }
    return 0;
}

static val_t missing_key(ev_t *e, const val_t *key)
{
    switch (key->kind) {
    case KV_STRING: return verr(e, "no such key: %.*s", (int)key->u.s.n, key->u.s.p);
    case KV_INT: return verr(e, "no such key: %lld", (long long)key->u.i);
    case KV_UINT: return verr(e, "no such key: %llu", (unsigned long long)key->u.u);
    case KV_BOOL: return verr(e, "no such key: %s", key->u.b ? "true" : "false");
    case KV_DOUBLE: return verr(e, "no such key: %g", key->u.d);
    default: return verr(e, "no such key");
    }
}

static val_t index_value(ev_t *e, const val_t *t, const val_t *k)
{
    if (t->kind == KV_LIST) {
        int64_t i;
        if (k->kind == KV_INT) i = k->u.i;
        else if (k->kind == KV_UINT && k->u.u <= INT64_MAX) i = (int64_t)k->u.u;
        else if (k->kind == KV_DOUBLE && k->u.d == trunc(k->u.d) && fabs(k->u.d) < 9e18) i = (int64_t)k->u.d;
        else return verr(e, "no such overload");
        if (i < 0 || (uint64_t)i >= t->u.l.n)
            return verr(e, "index '%lld' out of range in list size '%zu'", (long long)i, t->u.l.n);
        return t->u.l.items[i];
    }
    if (t->kind == KV_MAP || is_view(t)) {
        if (k->kind != KV_STRING && k->kind != KV_INT && k->kind != KV_UINT && k->kind != KV_BOOL &&
            k->kind != KV_DOUBLE)
            return verr(e, "unsupported key type");
        val_t out;
        if (map_find(e, t, k, &out))
            return out;
        return missing_key(e, k);
    }
    return verr(e, "no such overload");
}

/* ---- strings ---- */

static size_t utf8_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

static int mem_contains(const char *h, size_t hn, const char *nd, size_t nn)
{
    if (nn == 0) return 1;
    for (size_t i = 0; i + nn <= hn; i++)
        if (!memcmp(h + i, nd, nn))
            return 1;
    return 0;
}

static int lex_cmp(const val_t *a, const val_t *b)
{
    size_t n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;
    int r = memcmp(a->u.s.p, b->u.s.p, n);
    if (r) return r < 0 ? -1 : 1;
    return a->u.s.n < b->u.s.n ? -1 : a->u.s.n > b->u.s.n;
}

static size_t value_size(const val_t *v)
{
    if (v->kind == KV_BYTES) return v->u.s.n;
    if (v->kind == KV_STRING) return utf8_len(v->u.s.p, v->u.s.n);
    if (v->kind == KV_LIST || v->kind == KV_MAP) return v->u.l.n;
    return 1;
}

static val_t quantity_val(ev_t *e, const ks_cel_quantity_t *q)
{
    ks_cel_quantity_t *c = ks_cel_arena_alloc(&e->a, sizeof *c);
    if (!c) return verr(e, "out of memory");
    *c = *q;
    val_t v = { .kind = KV_QUANTITY };
    v.u.q = c;
    return v;
}

/* Formats d as Go's %g does (cel-go's string(double)): the shortest digits
 * that read back as d, in exponent form when the decimal exponent is below
 * -4 or at least 6. */
static void format_double(double d, char *buf, size_t n)
{
    if (d != d) { snprintf(buf, n, "NaN"); return; }
    if (isinf(d)) { snprintf(buf, n, d > 0 ? "+Inf" : "-Inf"); return; }
    if (d == 0) { snprintf(buf, n, signbit(d) ? "-0" : "0"); return; }
    char e[64];
    int digits = 1;
    for (; digits <= 17; digits++) {
        snprintf(e, sizeof e, "%.*e", digits - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    /* e is [-]D.DDDDe[+-]XX: the decimal exponent and the digit count */
    const char *ep = strchr(e, 'e');
    int exp = ep ? atoi(ep + 1) : 0;
    if (exp < -4 || exp >= 6) {
        /* Go writes the exponent with at least two digits, like C */
        snprintf(buf, n, "%s", e);
        return;
    }
    int decimals = digits - 1 - exp;
    snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, d);
}

/* Applies a resolved function to argument values (receiver first); out
 * of line so that its buffers stay off the recursive evaluator's frames. */
__attribute__((noinline))
static val_t apply(ev_t *e, const ks_cel_node_t *n, val_t *av, size_t argc)
{
    for (size_t i = 0; i < argc; i++)
        if (av[i].kind == KV_ERROR) {
            if (charge(e, 1) < 0) /* cel-go charges a call with an error argument too */
                return verr(e, "cost");
            return av[i];
        }
    ks_cel_fn_t fn = n->fn;
    /* size of device views */
    for (size_t i = 0; i < argc; i++)
        if (is_view(&av[i]) && fn != FN_IN) {
            av[i] = materialize(e, &av[i]);
            if (av[i].kind == KV_ERROR)
                return av[i];
        }
    if (fn == FN_EQ || fn == FN_NE) {
        /* cel-go: the smaller operand's size times 0.1, rounded up */
        size_t s0 = value_size(&av[0]), s1 = value_size(&av[1]);
        if (charge(e, ceil_frac(s0 < s1 ? s0 : s1, 0.1)) < 0)
            return verr(e, "cost");
        /* Kubernetes' Quantity and Semver answer an equality with another
         * type on their right with "no such overload" (cel-go asks the left
         * operand; null is compared before that) */
        if ((av[0].kind == KV_QUANTITY || av[0].kind == KV_SEMVER) && av[1].kind != av[0].kind &&
            av[1].kind != KV_NULL)
            return verr(e, "no such overload");
        int eq = vequal(e, &av[0], &av[1]);
        return vbool(fn == FN_EQ ? eq : !eq);
    }
    if (fn == FN_IN) {
        val_t *c = &av[1];
        if (c->kind == KV_LIST) {
            if (charge(e, c->u.l.n) < 0)
                return verr(e, "cost");
            for (size_t i = 0; i < c->u.l.n; i++)
                if (vequal(e, &av[0], &c->u.l.items[i]))
                    return vbool(1);
            return vbool(0);
        }
        if (charge(e, 1) < 0)
            return verr(e, "cost");
        if (is_view(c))
            return vbool(view_contains(e, c, &av[0]));
        if (c->kind == KV_MAP) {
            val_t out;
            return vbool(map_find(e, c, &av[0], &out));
        }
        return verr(e, "no such overload");
    }

    /* dispatch on the values' kinds */
    const ks_cel_overload_t *o = NULL;
    for (const ks_cel_overload_t *c = ks_cel_overloads + n->ov_first; c->name && c->fn == fn; c++) {
        if (c->member != (n->target != NULL) || strlen(c->params) != argc)
            continue;
        int ok = 1;
        for (size_t i = 0; i < argc && ok; i++)
            ok = c->params[i] == '*' || c->params[i] == ks_cel_value_letter(&av[i]);
        if (ok) {
            o = c;
            break;
        }
    }
    if (!o)
        return verr(e, "no such overload");

    uint64_t cost = 1;
    switch (fn) {
    /* cel-go's runtime costs (interpreter/runtimecost.go) and Kubernetes'
     * library estimator; sizes of strings are in code points */
    case FN_STARTS_WITH: case FN_ENDS_WITH:
    case FN_LOWER_ASCII: case FN_UPPER_ASCII:
    case FN_QUANTITY: case FN_IS_QUANTITY: case FN_SEMVER: case FN_IS_SEMVER:
        cost = ceil_frac(value_size(&av[0]), 0.1);
        break;
    case FN_CONTAINS: cost = ceil_frac(value_size(&av[0]), 0.1) * ceil_frac(value_size(&av[1]), 0.1); break;
    case FN_MATCHES: cost = ceil_frac(value_size(&av[0]) + 1, 0.1) * ceil_frac(value_size(&av[1]), 0.25); break;
    case FN_ADD:
        if (o->params[0] == 's' || o->params[0] == 'b')
            cost = ceil_frac(value_size(&av[0]) + value_size(&av[1]), 0.1);
        break;
    case FN_LT: case FN_LE: case FN_GT: case FN_GE:
        if (o->params[0] == 's' || o->params[0] == 'b') {
            size_t s0 = value_size(&av[0]), s1 = value_size(&av[1]);
            cost = ceil_frac(s0 < s1 ? s0 : s1, 0.1);
        }
        break;
    default: break;
    }
    if (charge(e, cost) < 0)
        return verr(e, "cost");

    val_t *a = &av[0], *b = argc > 1 ? &av[1] : NULL;
    switch (fn) {
    case FN_ADD: case FN_SUB: case FN_MUL: case FN_DIV: case FN_MOD:
        if (a->kind == KV_INT) {
            int64_t r = 0, x = a->u.i, y = b->u.i;
            int ovf = 0;
            switch (fn) {
            case FN_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
            case FN_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
            case FN_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
            case FN_DIV:
                if (y == 0) return verr(e, "division by zero");
                if (x == INT64_MIN && y == -1) ovf = 1; else r = x / y;
                break;
            default:
                if (y == 0) return verr(e, "modulus by zero");
                if (x == INT64_MIN && y == -1) ovf = 1; else r = x % y;
                break;
            }
            if (ovf) return verr(e, "integer overflow");
            return vint(r);
        }
        if (a->kind == KV_UINT) {
            uint64_t r = 0, x = a->u.u, y = b->u.u;
            int ovf = 0;
            switch (fn) {
            case FN_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
            case FN_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
            case FN_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
            case FN_DIV: if (y == 0) return verr(e, "division by zero"); r = x / y; break;
            default: if (y == 0) return verr(e, "modulus by zero"); r = x % y; break;
            }
            if (ovf) return verr(e, "unsigned integer overflow");
            return vuint(r);
        }
        if (a->kind == KV_DOUBLE) {
            double x = a->u.d, y = b->u.d;
            return vdouble(fn == FN_ADD ? x + y : fn == FN_SUB ? x - y : fn == FN_MUL ? x * y : x / y);
        }
        if (a->kind == KV_STRING || a->kind == KV_BYTES) {
            char *p = ks_cel_arena_alloc(&e->a, a->u.s.n + b->u.s.n + 1);
            if (!p) return verr(e, "out of memory");
            memcpy(p, a->u.s.p, a->u.s.n);
            memcpy(p + a->u.s.n, b->u.s.p, b->u.s.n);
            val_t v = { .kind = a->kind };
            v.u.s.p = p;
            v.u.s.n = a->u.s.n + b->u.s.n;
            return v;
        }
        {
            size_t na = a->u.l.n, nb = b->u.l.n;
            val_t *items = ks_cel_arena_alloc(&e->a, (na + nb + 1) * sizeof *items);
            if (!items) return verr(e, "out of memory");
            if (na) memcpy(items, a->u.l.items, na * sizeof *items);
            if (nb) memcpy(items + na, b->u.l.items, nb * sizeof *items);
            val_t v = { .kind = KV_LIST };
            v.u.l.items = items;
            v.u.l.n = na + nb;
            return v;
        }
    case FN_NEG:
        if (a->kind == KV_INT) {
            if (a->u.i == INT64_MIN) return verr(e, "integer overflow");
            return vint(-a->u.i);
        }
        return vdouble(-a->u.d);
    case FN_NOT:
        return vbool(!a->u.b);
    case FN_LT: case FN_LE: case FN_GT: case FN_GE: {
        int c;
        if (a->kind == KV_STRING || a->kind == KV_BYTES) c = lex_cmp(a, b);
        else if (a->kind == KV_BOOL) c = a->u.b < b->u.b ? -1 : a->u.b > b->u.b;
        else c = num_cmp(a, b);
        if (c == 2) return vbool(0);
        return vbool(fn == FN_LT ? c < 0 : fn == FN_LE ? c <= 0 : fn == FN_GT ? c > 0 : c >= 0);
    }
    case FN_SIZE:
        if (a->kind == KV_STRING) return vint((int64_t)utf8_len(a->u.s.p, a->u.s.n));
        return vint((int64_t)value_size(a));
    case FN_STARTS_WITH:
        return vbool(b->u.s.n <= a->u.s.n && !memcmp(a->u.s.p, b->u.s.p, b->u.s.n));
    case FN_ENDS_WITH:
        return vbool(b->u.s.n <= a->u.s.n && !memcmp(a->u.s.p + a->u.s.n - b->u.s.n, b->u.s.p, b->u.s.n));
    case FN_CONTAINS:
        return vbool(mem_contains(a->u.s.p, a->u.s.n, b->u.s.p, b->u.s.n));
    case FN_MATCHES: {
        const ks_cel_regex_t *re = n->re;
        if (!re) {
            char err[256];
            re = ks_cel_regex_compile(&e->a, b->u.s.p, b->u.s.n, err, sizeof err);
            if (!re) return verr(e, "invalid matches argument: %s", err);
        }
        return vbool(ks_cel_regex_search(re, a->u.s.p, a->u.s.n));
    }
    case FN_LOWER_ASCII: case FN_UPPER_ASCII: {
        char *p = ks_cel_arena_strndup(&e->a, a->u.s.p, a->u.s.n);
        if (!p) return verr(e, "out of memory");
        for (size_t i = 0; i < a->u.s.n; i++) {
            if (fn == FN_LOWER_ASCII && p[i] >= 'A' && p[i] <= 'Z') p[i] = (char)(p[i] + 32);
            if (fn == FN_UPPER_ASCII && p[i] >= 'a' && p[i] <= 'z') p[i] = (char)(p[i] - 32);
        }
        return vstr(p, a->u.s.n);
    }
    case FN_DYN:
        return *a;
    case FN_INT: case FN_UINT: case FN_DOUBLE: {
        val_t x = *a;
        if (x.kind == KV_STRING) {
            char buf[128], *end;
            if (x.u.s.n == 0 || x.u.s.n >= sizeof buf) return verr(e, "type conversion error");
            memcpy(buf, x.u.s.p, x.u.s.n);
            buf[x.u.s.n] = 0;
            if (fn == FN_DOUBLE) {
                double d = strtod(buf, &end);
                if (*end) return verr(e, "type conversion error");
                return vdouble(d);
            }
            if (fn == FN_INT) {
                long long v = strtoll(buf, &end, 10);
                if (*end || (v == LLONG_MAX || v == LLONG_MIN)) {
                    if (*end) return verr(e, "type conversion error");
                    /* strtoll saturates: accept only exact boundary texts */
                    if (strcmp(buf, "9223372036854775807") && strcmp(buf, "-9223372036854775808"))
                        return verr(e, "type conversion error");
                }
                return vint(v);
            }
            if (buf[0] == '-' || buf[0] == '+') return verr(e, "type conversion error");
            unsigned long long v = strtoull(buf, &end, 10);
            if (*end || (v == ULLONG_MAX && strcmp(buf, "18446744073709551615")))
                return verr(e, "type conversion error");
            return vuint(v);
        }
        if (fn == FN_DOUBLE)
            return vdouble(x.kind == KV_INT ? (double)x.u.i : x.kind == KV_UINT ? (double)x.u.u : x.u.d);
        if (fn == FN_INT) {
            if (x.kind == KV_INT) return x;
            if (x.kind == KV_UINT) {
                if (x.u.u > INT64_MAX) return verr(e, "integer overflow");
                return vint((int64_t)x.u.u);
            }
            if (!(x.u.d > -9223372036854775808.0 && x.u.d < 9223372036854775807.0))
                return verr(e, "integer overflow");
            return vint((int64_t)x.u.d);
        }
        if (x.kind == KV_UINT) return x;
        if (x.kind == KV_INT) {
            if (x.u.i < 0) return verr(e, "unsigned integer overflow");
            return vuint((uint64_t)x.u.i);
        }
        if (!(x.u.d > -1.0 && x.u.d < 18446744073709551616.0))
            return verr(e, "unsigned integer overflow");
        return vuint((uint64_t)x.u.d);
    }
    case FN_STRING: {
        char buf[64];
        switch (a->kind) {
        case KV_STRING: return *a;
        case KV_BYTES: return vstr(a->u.s.p, a->u.s.n);
        case KV_BOOL: return vstr(a->u.b ? "true" : "false", a->u.b ? 4 : 5);
        case KV_INT: snprintf(buf, sizeof buf, "%lld", (long long)a->u.i); break;
        case KV_UINT: snprintf(buf, sizeof buf, "%llu", (unsigned long long)a->u.u); break;
        default: format_double(a->u.d, buf, sizeof buf); break;
        }
        char *p = ks_cel_arena_strndup(&e->a, buf, strlen(buf));
        if (!p) return verr(e, "out of memory");
        return vstr(p, strlen(buf));
    }
    case FN_BOOL:
        if (a->kind == KV_BOOL) return *a;
        {
            static const char *const t[] = { "1", "t", "true", "TRUE", "True" };
            static const char *const f[] = { "0", "f", "false", "FALSE", "False" };
            for (size_t i = 0; i < 5; i++) {
                if (streq(t[i], a->u.s.p, a->u.s.n)) return vbool(1);
                if (streq(f[i], a->u.s.p, a->u.s.n)) return vbool(0);
            }
            return verr(e, "type conversion error");
        }
    case FN_QUANTITY: case FN_IS_QUANTITY: {
        ks_cel_quantity_t q;
        char err[200];
        int rc = ks_cel_quantity_parse(a->u.s.p, a->u.s.n, &q, err, sizeof err);
        if (fn == FN_IS_QUANTITY) return vbool(rc == 0);
        if (rc < 0) return verr(e, "%s", err);
        return quantity_val(e, &q);
    }
    case FN_SEMVER: case FN_IS_SEMVER: {
        ks_cel_semver_t *sv = ks_cel_arena_alloc(&e->a, sizeof *sv);
        char err[200];
        if (!sv) return verr(e, "out of memory");
        int rc = ks_cel_semver_parse(a->u.s.p, a->u.s.n, b ? b->u.b : 0, &e->a, sv, err, sizeof err);
        if (fn == FN_IS_SEMVER) return vbool(rc == 0);
        if (rc < 0) return verr(e, "%s", err);
        val_t v = { .kind = KV_SEMVER };
        v.u.sv = sv;
        return v;
    }
    case FN_COMPARE_TO: case FN_IS_GREATER_THAN: case FN_IS_LESS_THAN: {
        int c = a->kind == KV_QUANTITY ? ks_cel_quantity_cmp(a->u.q, b->u.q) : ks_cel_semver_cmp(a->u.sv, b->u.sv);
        if (fn == FN_COMPARE_TO) return vint(c);
        return vbool(fn == FN_IS_GREATER_THAN ? c > 0 : c < 0);
    }
    case FN_SIGN: return vint(ks_cel_quantity_sign(a->u.q));
    case FN_IS_INTEGER: {
        int64_t x;
        return vbool(ks_cel_quantity_to_int(a->u.q, &x) == 0);
    }
    case FN_AS_INTEGER: {
        int64_t x;
        if (ks_cel_quantity_to_int(a->u.q, &x) < 0)
            return verr(e, "cannot convert value to integer");
        return vint(x);
    }
    case FN_AS_APPROXIMATE_FLOAT: return vdouble(ks_cel_quantity_to_double(a->u.q));
    case FN_Q_ADD: case FN_Q_SUB: {
        ks_cel_quantity_t other, r;
        const ks_cel_quantity_t *bq = b->u.q;
        if (b->kind == KV_INT) {
            ks_cel_quantity_from_int(b->u.i, &other);
            bq = &other;
        }
        if (ks_cel_quantity_add(a->u.q, bq, fn == FN_Q_SUB, &r) < 0)
            return verr(e, "quantity out of range");
        return quantity_val(e, &r);
    }
    case FN_MAJOR: return vint((int64_t)a->u.sv->major);
    case FN_MINOR: return vint((int64_t)a->u.sv->minor);
    case FN_PATCH: return vint((int64_t)a->u.sv->patch);
    default:
        return verr(e, "no such overload");
    }
}

static val_t eval(ev_t *e, const ks_cel_node_t *n);

static val_t eval_select(ev_t *e, const ks_cel_node_t *n, val_t t, int presence)
{
    if (t.kind == KV_ERROR)
        return t;
    val_t key = vstr(n->name, strlen(n->name));
    if (t.kind == KV_DEVICE) {
        const ks_cel_device_t *d = e->dev;
        if (presence)
            return vbool(1);
        if (!strcmp(n->name, "driver")) return vstr(d->driver ? d->driver : "", d->driver ? strlen(d->driver) : 0);
        if (!strcmp(n->name, "attributes")) return (val_t){ .kind = KV_ATTRS };
        if (!strcmp(n->name, "capacity")) return (val_t){ .kind = KV_CAPS };
        if (!strcmp(n->name, "allowMultipleAllocations")) return vbool(d->allow_multiple_allocations);
        return verr(e, "no such field: %s", n->name);
    }
    if (t.kind == KV_MAP || is_view(&t)) {
        val_t out;
        int found = map_find(e, &t, &key, &out);
        if (presence)
            return vbool(found);
        return found ? out : missing_key(e, &key);
    }
    return verr(e, "no such overload");
}

ks_cel_value_t ks_cel_fold(const ks_cel_node_t *n, ks_cel_arena_t *a)
{
    static const ks_cel_device_t none;
    ev_t e = { .a = *a, .dev = &none, .limit = UINT64_MAX };
    val_t v = eval(&e, n);
    *a = e.a; /* the values live as long as the program */
    return v;
}

/* The comprehension macros as cel-go expands them: all is a fold with &&
 * that stops at the first false (an error only counts when nothing is
 * false), exists the same with || and true, exists_one, map and filter
 * fail on the first error. Each iteration costs what cel-go's expansion
 * costs: about 3 for the loop condition and accumulator, 12 for each
 * element map or filter appends. */
__attribute__((noinline))
static val_t eval_comprehension(ev_t *e, const ks_cel_node_t *n)
{
    val_t range = eval(e, n->target);
    if (range.kind == KV_ERROR || e->over_limit)
        return range;
    if (is_view(&range)) {
        range = materialize(e, &range);
        if (range.kind == KV_ERROR)
            return range;
    }
    if (range.kind != KV_LIST && range.kind != KV_MAP)
        return verr(e, "no such overload");
    size_t count = range.u.l.n, stride = range.kind == KV_MAP ? 2 : 1;
    frame_t f = { n, { .kind = KV_NULL }, e->frames };
    val_t result = vbool(n->macro == MC_ALL), first_err = { .kind = KV_NULL };
    val_t *out = NULL;
    size_t nout = 0, matches = 0;
    if (n->macro == MC_MAP || n->macro == MC_FILTER) {
        out = ks_cel_arena_alloc(&e->a, (count + 1) * sizeof *out);
        if (!out)
            return verr(e, "out of memory");
    }
    e->frames = &f;
    for (size_t i = 0; i < count; i++) {
        f.val = range.u.l.items[i * stride];
        if (charge(e, 3) < 0)
            break;
        val_t v = eval(e, n->args[0]);
        if (e->over_limit)
            break;
        int is_bool = v.kind == KV_BOOL;
        if (n->macro == MC_ALL || n->macro == MC_EXISTS) {
            int decisive = n->macro == MC_EXISTS; /* the value that ends the loop */
            if (is_bool && v.u.b == decisive) {
                result = vbool(decisive);
                first_err.kind = KV_NULL;
                break;
            }
            if (!is_bool && first_err.kind == KV_NULL)
                first_err = v.kind == KV_ERROR ? v : verr(e, "no such overload");
            continue;
        }
        if (n->macro == MC_MAP && n->nargs == 1) {
            if (v.kind == KV_ERROR) { result = v; goto done; }
            if (charge(e, 12) < 0) break;
            out[nout++] = v;
            continue;
        }
        if (!is_bool) {
            result = v.kind == KV_ERROR ? v : verr(e, "no such overload");
            goto done;
        }
        if (n->macro == MC_EXISTS_ONE) {
            matches += v.u.b;
            continue;
        }
        if (!v.u.b)
            continue;
        if (charge(e, 12) < 0)
            break;
        if (n->macro == MC_FILTER) {
            out[nout++] = f.val;
        } else { /* map(x, p, f) */
            val_t t = eval(e, n->args[1]);
            if (t.kind == KV_ERROR || e->over_limit) { result = t; goto done; }
            out[nout++] = t;
        }
    }
    if (e->over_limit) {
        result = verr(e, "cost");
        goto done;
    }
    if ((n->macro == MC_ALL || n->macro == MC_EXISTS) && first_err.kind != KV_NULL)
        result = first_err;
    else if (n->macro == MC_EXISTS_ONE)
        result = vbool(matches == 1);
    else if (out) {
        result = (val_t){ .kind = KV_LIST };
        result.u.l.items = out;
        result.u.l.n = nout;
    }
done:
    e->frames = f.outer;
    return result;
}

static val_t eval(ev_t *e, const ks_cel_node_t *n)
{
    if (e->over_limit)
        return verr(e, "cost");
    switch (n->kind) {
    case ND_CONST:
        return n->cval;
    case ND_IDENT:
        if (charge(e, 1) < 0) return verr(e, "cost");
        if (n->bind) {
            for (const frame_t *f = e->frames; f; f = f->outer)
                if (f->bind == n->bind)
                    return f->val;
            return verr(e, "internal error: unbound variable %s", n->name);
        }
        return (val_t){ .kind = KV_DEVICE };
    case ND_BIND: {
        /* the value is computed once; an error stays a value until used */
        frame_t f = { n, eval(e, n->args[0]), e->frames };
        if (e->over_limit) return verr(e, "cost");
        e->frames = &f;
        val_t r = eval(e, n->args[1]);
        e->frames = f.outer;
        return r;
    }
    case ND_COMPREHENSION:
        return eval_comprehension(e, n);
    case ND_SELECT: {
        val_t t = eval(e, n->target);
        if (charge(e, 1) < 0) return verr(e, "cost");
        return eval_select(e, n, t, 0);
    }
    case ND_HAS: {
        /* Kubernetes sets PresenceTestHasCost(false): has() itself is free */
        val_t t = eval(e, n->target->target);
        return eval_select(e, n->target, t, 1);
    }
    case ND_INDEX: {
        val_t t = eval(e, n->target);
        val_t k = eval(e, n->args[0]);
        if (charge(e, 1) < 0) return verr(e, "cost");
        if (t.kind == KV_ERROR) return t;
        if (k.kind == KV_ERROR) return k;
        return index_value(e, &t, &k);
    }
    case ND_CALL: {
        val_t av[4];
        size_t argc = 0;
        if (n->folded) {
            if (charge(e, ceil_frac(value_size(&n->args[0]->cval), 0.1)) < 0)
                return verr(e, "cost");
            return n->cval;
        }
        if (n->set_membership) {
            /* cel-go turns `x in [constants]` into a set lookup: no cost,
             * and an empty list is false without looking at x */
            const val_t *l = &n->args[1]->cval;
            if (l->u.l.n == 0)
                return vbool(0);
            val_t x = eval(e, n->args[0]);
            if (x.kind == KV_ERROR || e->over_limit)
                return x;
            for (size_t i = 0; i < l->u.l.n; i++)
                if (vequal(e, &x, &l->u.l.items[i]))
                    return vbool(1);
            return vbool(0);
        }
        if (n->target)
            av[argc++] = eval(e, n->target);
        for (size_t i = 0; i < n->nargs && argc < 4; i++)
            av[argc++] = eval(e, n->args[i]);
        if (e->over_limit) return verr(e, "cost");
        return apply(e, n, av, argc);
    }
    case ND_LIST:
    case ND_MAP: {
        int is_map = n->kind == ND_MAP;
        val_t *items = ks_cel_arena_alloc(&e->a, (n->nargs + 1) * sizeof *items);
        if (!items) return verr(e, "out of memory");
        for (size_t i = 0; i < n->nargs; i++) {
            items[i] = eval(e, n->args[i]);
            if (items[i].kind == KV_ERROR) return items[i];
            if (is_view(&items[i])) {
                items[i] = materialize(e, &items[i]);
                if (items[i].kind == KV_ERROR) return items[i];
            }
        }
        if (charge(e, is_map ? 30 : 10) < 0) return verr(e, "cost");
        val_t v = { .kind = is_map ? KV_MAP : KV_LIST };
        v.u.l.items = items;
        v.u.l.n = is_map ? n->nargs / 2 : n->nargs;
        if (is_map) {
            for (size_t i = 0; i < v.u.l.n; i++)
                for (size_t j = 0; j < i; j++) {
                    const val_t *a = &items[2 * i], *b = &items[2 * j];
                    if ((is_num(a) && is_num(b)) ? num_cmp(a, b) == 0 : (a->kind == b->kind && vequal(e, a, b)))
                        return verr(e, "Failed with repeated key");
                }
        }
        return v;
    }
    case ND_AND:
    case ND_OR: {
        int absorb = n->kind == ND_OR; /* the value that decides */
        val_t l = eval(e, n->args[0]);
        if (e->over_limit) return l;
        if (l.kind == KV_BOOL && l.u.b == absorb) return l;
        val_t r = eval(e, n->args[1]);
        if (e->over_limit) return r;
        if (r.kind == KV_BOOL && r.u.b == absorb) return r;
        if (l.kind == KV_BOOL && r.kind == KV_BOOL) return vbool(!absorb);
        if (l.kind == KV_ERROR) return l;
        if (r.kind == KV_ERROR) return r;
        return verr(e, "no such overload");
    }
    case ND_COND: {
        val_t c = eval(e, n->args[0]);
        if (c.kind == KV_ERROR) return c;
        if (c.kind != KV_BOOL) return verr(e, "no such overload");
        return eval(e, n->args[c.u.b ? 1 : 2]);
    }
    }
    return verr(e, "internal error");
}

/* ---- the public interface ---- */

struct ks_cel_program {
    ks_cel_arena_t arena;
    ks_cel_node_t *root;
};

ks_cel_program_t *ks_cel_compile(const char *expr, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (!expr) {
        ks_cel_errf(err, errlen, 0, "no expression");
        return NULL;
    }
    size_t len = strlen(expr);
    if (len > 100000) { /* cel-go's default expression size limit */
        ks_cel_errf(err, errlen, 0, "expression code point size exceeds limit: size: %zu, limit 100000", len);
        return NULL;
    }
    ks_cel_program_t *p = calloc(1, sizeof *p);
    if (!p) {
        ks_cel_errf(err, errlen, 0, "out of memory");
        return NULL;
    }
    const char *src = ks_cel_arena_strndup(&p->arena, expr, strlen(expr));
    if (src)
        p->root = ks_cel_parse(src, &p->arena, err, errlen);
    if (!p->root || ks_cel_check(p->root, &p->arena, err, errlen) < 0 || p->arena.failed) {
        if (p->arena.failed)
            ks_cel_errf(err, errlen, 0, "out of memory");
        ks_cel_free(p);
        return NULL;
    }
    return p;
}

void ks_cel_free(ks_cel_program_t *p)
{
    if (!p)
        return;
    ks_cel_arena_free(&p->arena);
    free(p);
}

ks_cel_result_t ks_cel_eval(const ks_cel_program_t *p, const ks_cel_device_t *dev,
                            uint64_t cost_limit, char *err, size_t errlen)
{
    static const ks_cel_device_t empty;
    ev_t e = { .dev = dev ? dev : &empty, .limit = cost_limit ? cost_limit : KS_CEL_DEFAULT_COST_LIMIT };
    ks_cel_result_t rc;
    if (err && errlen)
        err[0] = 0;
    if (!p) {
        ks_cel_errf(err, errlen, 0, "no program");
        return KS_CEL_ERROR;
    }
    val_t v = eval(&e, p->root);
    if (e.over_limit) {
        ks_cel_errf(err, errlen, 0, "operation cancelled: actual cost limit exceeded");
        rc = KS_CEL_ERROR;
    } else if (v.kind == KV_ERROR) {
        ks_cel_errf(err, errlen, 0, "%.*s", (int)v.u.s.n, v.u.s.p);
        rc = KS_CEL_ERROR;
    } else if (v.kind != KV_BOOL) {
        const char *tn = v.kind == KV_INT ? "int" : v.kind == KV_STRING ? "string" : v.kind == KV_DOUBLE ? "double"
                         : v.kind == KV_UINT ? "uint" : v.kind == KV_NULL ? "null_type" : v.kind == KV_LIST ? "list"
                         : v.kind == KV_SEMVER ? "kubernetes.Semver" : v.kind == KV_QUANTITY ? "kubernetes.Quantity"
                         : v.kind == KV_BYTES ? "bytes" : "map";
        ks_cel_errf(err, errlen, 0, "CEL result of type %s could not be converted to bool: "
                    "unsupported type conversion from '%s' to bool", tn, tn);
        rc = KS_CEL_ERROR;
    } else {
        rc = v.u.b ? KS_CEL_TRUE : KS_CEL_FALSE;
    }
    ks_cel_arena_free(&e.a);
    return rc;
}
