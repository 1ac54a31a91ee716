/* Reading fields of cluster objects from libyaml trees; see objects_yaml.h. */
#include "objects_yaml.h"

#include "base/yaml_scalar.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"
#include "quantity.h"

void ky_init(ks_yctx_t *c, const char *file, yaml_document_t *doc,
             ks_intern_t *in, ks_arena_t *arena, ks_error_t *err)
{
    ks_yread_init(&c->r, file ? file : "<input>", doc, err);
    c->in = in;
    c->arena = arena;
    c->counted = 0;
    c->refs = NULL;
    c->n_refs = c->cap_refs = 0;
}

int ky_refs_keep(ks_yctx_t *c, const char ***out, uint32_t *n)
{
    const char **a = NULL;
    *out = NULL;
    *n = 0;
    if (c->n_refs > 0) {
        a = ks_arena_alloc(c->arena, c->n_refs * sizeof *a);
        if (a == NULL) {
            ky_refs_drop(c);
            return ks_error_set(c->r.err, KS_ENOMEM, "%s: out of memory",
                                c->r.file);
        }
        memcpy(a, c->refs, c->n_refs * sizeof *a);
    }
    *out = a;
    *n = (uint32_t)c->n_refs;
    free(c->refs);
    c->refs = NULL;
    c->n_refs = c->cap_refs = 0;
    return 0;
}

void ky_refs_release(ks_intern_t *in, const char *const *refs, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        ks_intern_unref(in, refs[i]);
}

void ky_refs_drop(ks_yctx_t *c)
{
    ky_refs_release(c->in, c->refs, (uint32_t)c->n_refs);
    free(c->refs);
    c->refs = NULL;
    c->n_refs = c->cap_refs = 0;
}

void ky_set_what(ks_yctx_t *c, const char *kind, const char *ns,
                 const char *name)
{
    if (ns != NULL && ns[0] != '\0')
        snprintf(c->r.what, sizeof(c->r.what), "%s %s/%s", kind, ns, name);
    else if (name != NULL && name[0] != '\0')
        snprintf(c->r.what, sizeof(c->r.what), "%s %s", kind, name);
    else
        snprintf(c->r.what, sizeof(c->r.what), "%s", kind);
}

int ky_fail(ks_yctx_t *c, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_yread_vfail(&c->r, n, KS_ESCHEMA, fmt, ap);
    va_end(ap);
    return rc;
}

void *ky_alloc(ks_yctx_t *c, size_t n)
{
    void *p = ks_arena_alloc(c->arena, n);
    if (p == NULL)
        ks_error_set(c->r.err, KS_ENOMEM, "%s: out of memory", c->r.file);
    return p;
}

const char *ky_intern(ks_yctx_t *c, const char *s, size_t n)
{
    const char *r;
    if (c->counted && n > 0) {
        if (c->n_refs == c->cap_refs) {
            size_t cap = c->cap_refs ? c->cap_refs * 2 : 16;
            const char **a = realloc(c->refs, cap * sizeof *a);
            if (a == NULL) {
                ks_error_set(c->r.err, KS_ENOMEM, "%s: out of memory",
                             c->r.file);
                return NULL;
            }
            c->refs = a;
            c->cap_refs = cap;
        }
        r = ks_intern_ref(c->in, s, n);
        if (r != NULL)
            c->refs[c->n_refs++] = r;
    } else {
        r = ks_intern_strn(c->in, s, n);
    }
    if (r == NULL)
        ks_error_set(c->r.err, KS_ENOMEM, "%s: out of memory", c->r.file);
    return r;
}

size_t ky_push(ks_yctx_t *c, const char *field)
{
    return ks_yread_push(&c->r, field);
}

size_t ky_push_index(ks_yctx_t *c, size_t i)
{
    return ks_yread_push_index(&c->r, i);
}

void ky_pop(ks_yctx_t *c, size_t len)
{
    ks_yread_pop(&c->r, len);
}

yaml_node_t *ky_node(const ks_yctx_t *c, int id)
{
    return ks_yaml_node(c->r.doc, id);
}

int ky_is_null(const yaml_node_t *n)
{
    return ks_yaml_is_null(n);
}

int ky_is_map(const yaml_node_t *n)
{
    return ks_yaml_is_map(n);
}

int ky_is_seq(const yaml_node_t *n)
{
    return ks_yaml_is_seq(n);
}

const char *ky_scalar(const yaml_node_t *n)
{
    return ks_yaml_text(n);
}

yaml_node_t *ky_get(const ks_yctx_t *c, const yaml_node_t *map,
                    const char *key)
{
    yaml_node_t *found = ks_yaml_get(c->r.doc, map, key);
    return ks_yaml_is_null(found) ? NULL : found;
}

uint32_t ky_seq_len(const yaml_node_t *n)
{
    return (uint32_t)ks_yaml_seq_len(n);
}

yaml_node_t *ky_seq_at(const ks_yctx_t *c, const yaml_node_t *n, uint32_t i)
{
    return ks_yaml_seq_at(c->r.doc, n, i);
}

static const char *type_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a sequence";
    case YAML_SCALAR_NODE: return "a scalar";
    default: return "nothing";
    }
}

int ky_expect_map(ks_yctx_t *c, const yaml_node_t *n)
{
    if (n == NULL || ky_is_map(n))
        return 0;
    return ky_fail(c, n, "expected a mapping, found %s", type_name(n));
}

int ky_expect_seq(ks_yctx_t *c, const yaml_node_t *n)
{
    if (n == NULL || ky_is_seq(n))
        return 0;
    return ky_fail(c, n, "expected a sequence, found %s", type_name(n));
}

int ky_seq_of_maps(ks_yctx_t *c, const yaml_node_t *n, size_t size,
                   ky_item_fn item, void *ud, void **out, uint32_t *cnt)
{
    unsigned char *arr;
    uint32_t i, len;
    int rc;
    *out = NULL;
    *cnt = 0;
    if (n == NULL)
        return 0;
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    if ((len = ky_seq_len(n)) == 0)
        return 0;
    if ((arr = ky_alloc(c, len * size)) == NULL)
        return KS_ENOMEM;
    for (i = 0; i < len; i++) {
        const yaml_node_t *it = ky_seq_at(c, n, i);
        size_t old = ky_push_index(c, i);
        if (it == NULL || !ky_is_map(it))
            return it ? ky_expect_map(c, it)
                      : ky_fail(c, it, "expected a mapping");
        if ((rc = item(c, it, arr + (size_t)i * size, ud)) != 0)
            return rc;
        ky_pop(c, old);
    }
    *out = arr;
    *cnt = len;
    return 0;
}

int ky_str(ks_yctx_t *c, const yaml_node_t *n, const char **out)
{
    char msg[256];
    const char *s = NULL, *r;
    size_t len = 0;
    int rc = ks_yaml_want_str(n, &s, &len, msg, sizeof msg);
    if (rc == KS_YS_WRONG)
        return ky_fail(c, n, "%s", msg);
    if (rc == KS_YS_UNSET) {
        *out = ks_intern_empty(c->in);
        return 0;
    }
    if ((r = ky_intern(c, s, len)) == NULL)
        return KS_ENOMEM;
    *out = r;
    return 0;
}

int ky_int64(ks_yctx_t *c, const yaml_node_t *n, int64_t *out)
{
    char msg[256];
    int64_t v;
    int rc = ks_yaml_want_int64(n, &v, msg, sizeof msg);
    if (rc == KS_YS_WRONG)
        return ky_fail(c, n, "%s", msg);
    if (rc == KS_YS_OK)
        *out = v;
    return 0;
}

int ky_int32(ks_yctx_t *c, const yaml_node_t *n, int32_t *out)
{
    int64_t v;
    int rc;
    if (ky_is_null(n))
        return 0;
    v = 0;
    rc = ky_int64(c, n, &v);
    if (rc != 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return ky_fail(c, n, "integer %lld out of range", (long long)v);
    *out = (int32_t)v;
    return 0;
}

int ky_bool(ks_yctx_t *c, const yaml_node_t *n, int *out)
{
    char msg[256];
    if (ks_yaml_want_bool(n, out, msg, sizeof msg) == KS_YS_WRONG)
        return ky_fail(c, n, "%s", msg);
    return 0;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int take_num(const char **p, int digits, int *out)
{
    int v = 0, i;
    for (i = 0; i < digits; i++) {
        char ch = (*p)[i];
        if (ch < '0' || ch > '9')
            return -1;
        v = v * 10 + (ch - '0');
    }
    *p += digits;
    *out = v;
    return 0;
}

int ks_rfc3339_parse(const char *s, int64_t *unix_ms)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = s;
    int y, mo, d, h, mi, sec, ms = 0, off = 0;
    int64_t t;
    if (take_num(&p, 4, &y) || *p++ != '-' || take_num(&p, 2, &mo) ||
        *p++ != '-' || take_num(&p, 2, &d))
        return -1;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return -1;
    p++;
    if (take_num(&p, 2, &h) || *p++ != ':' || take_num(&p, 2, &mi) ||
        *p++ != ':' || take_num(&p, 2, &sec))
        return -1;
    if (*p == '.') {
        int scale = 100, n = 0;
        p++;
        while (*p >= '0' && *p <= '9') {
            ms += (*p - '0') * scale;
            scale /= 10;
            p++;
            n++;
        }
        if (n == 0)
            return -1;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, sign = *p == '-' ? -1 : 1;
        p++;
        if (take_num(&p, 2, &oh) || *p++ != ':' || take_num(&p, 2, &om))
            return -1;
        if (oh > 23 || om > 59)
            return -1;
        off = sign * (oh * 60 + om);
    } else {
        return -1;
    }
    if (*p != '\0')
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
        mi > 59 || sec > 60)
        return -1;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return -1;
    t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
        mi * 60 + sec - (int64_t)off * 60;
    *unix_ms = t * 1000 + ms;
    return 0;
}

int ky_time(ks_yctx_t *c, const yaml_node_t *n, int64_t *unix_ms)
{
    const char *s;
    if (ky_is_null(n))
        return 0;
    s = ky_scalar(n);
    if (s == NULL)
        return ky_fail(c, n, "expected an RFC 3339 time, found %s",
                       type_name(n));
    if (ks_rfc3339_parse(s, unix_ms) != 0)
        return ky_fail(c, n, "invalid RFC 3339 time \"%s\"", s);
    return 0;
}

int ky_labels(ks_yctx_t *c, const yaml_node_t *n, ks_labels_t *out)
{
    yaml_node_pair_t *p;
    ks_label_t *items;
    uint32_t cnt = 0, cap;
    int rc;
    out->items = NULL;
    out->n = 0;
    if (ky_is_null(n))
        return 0;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    cap = (uint32_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (cap == 0)
        return 0;
    items = ky_alloc(c, cap * sizeof(*items));
    if (items == NULL)
        return KS_ENOMEM;
    for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = ky_node(c, p->key), *vn = ky_node(c, p->value);
        const char *k = NULL, *v = NULL;
        uint32_t i;
        if (kn == NULL || kn->type != YAML_SCALAR_NODE)
            return ky_fail(c, kn, "expected a string key");
        /* a key is its text, whatever it reads as (yaml_scalar.h) */
        if ((k = ky_intern(c, ky_scalar(kn), kn->data.scalar.length)) ==
            NULL)
            return KS_ENOMEM;
        {
            size_t old = ky_push(c, k);
            rc = ky_str(c, vn, &v);
            ky_pop(c, old);
            if (rc != 0)
                return rc;
        }
        for (i = 0; i < cnt; i++)
            if (items[i].key == k)
                break;
        items[i].key = k;
        items[i].value = v;
        if (i == cnt)
            cnt++;
    }
    out->items = items;
    out->n = cnt;
    return 0;
}

int ky_strings(ks_yctx_t *c, const yaml_node_t *n,
               const char *const **out, uint32_t *n_out)
{
    const char **v;
    uint32_t i, cnt;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (ky_is_null(n))
        return 0;
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    cnt = ky_seq_len(n);
    if (cnt == 0)
        return 0;
    v = ky_alloc(c, cnt * sizeof(*v));
    if (v == NULL)
        return KS_ENOMEM;
    for (i = 0; i < cnt; i++) {
        size_t old = ky_push_index(c, i);
        rc = ky_str(c, ky_seq_at(c, n, i), &v[i]);
        ky_pop(c, old);
        if (rc != 0)
            return rc;
    }
    *out = v;
    *n_out = cnt;
    return 0;
}

static int parse_op(ks_yctx_t *c, const yaml_node_t *n, int node_ops,
                    ks_selector_op_t *op)
{
    const char *s = ky_scalar(n);
    if (s == NULL)
        return ky_fail(c, n, "expected a string, found %s", type_name(n));
    if (strcmp(s, "In") == 0)
        *op = KS_OP_IN;
    else if (strcmp(s, "NotIn") == 0)
        *op = KS_OP_NOT_IN;
    else if (strcmp(s, "Exists") == 0)
        *op = KS_OP_EXISTS;
    else if (strcmp(s, "DoesNotExist") == 0)
        *op = KS_OP_DOES_NOT_EXIST;
    else if (node_ops && strcmp(s, "Gt") == 0)
        *op = KS_OP_GT;
    else if (node_ops && strcmp(s, "Lt") == 0)
        *op = KS_OP_LT;
    else
        return ky_fail(c, n, "unknown operator \"%s\" (valid: In, NotIn, "
                             "Exists, DoesNotExist%s)",
                       s, node_ops ? ", Gt, Lt" : "");
    return 0;
}

/* One {key, operator, values} into r; the path is already pushed. */
static int parse_requirement(ks_yctx_t *c, const yaml_node_t *n, int node_ops,
                             ks_requirement_t *r)
{
    const yaml_node_t *opn;
    int rc;
    size_t old;
    if (n == NULL || !ky_is_map(n))
        return n ? ky_expect_map(c, n) : ky_fail(c, n, "expected a mapping");
    if ((rc = ky_f_str(c, n, "key", &r->key)) != 0)
        return rc;
    opn = ky_get(c, n, "operator");
    if (opn == NULL)
        return ky_fail(c, n, "operator is required");
    old = ky_push(c, "operator");
    rc = parse_op(c, opn, node_ops, &r->op);
    ky_pop(c, old);
    if (rc != 0)
        return rc;
    return ky_f_strings(c, n, "values", &r->values, &r->n_values);
}

int ky_requirements(ks_yctx_t *c, const yaml_node_t *n, int node_ops,
                    const ks_requirement_t **out, uint32_t *n_out)
{
    ks_requirement_t *reqs;
    uint32_t i, cnt;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (ky_is_null(n))
        return 0;
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    cnt = ky_seq_len(n);
    if (cnt == 0)
        return 0;
    reqs = ky_alloc(c, cnt * sizeof(*reqs));
    if (reqs == NULL)
        return KS_ENOMEM;
    for (i = 0; i < cnt; i++) {
        size_t old = ky_push_index(c, i);
        rc = parse_requirement(c, ky_seq_at(c, n, i), node_ops, &reqs[i]);
        ky_pop(c, old);
        if (rc != 0)
            return rc;
    }
    *out = reqs;
    *n_out = cnt;
    return 0;
}

int ky_label_selector(ks_yctx_t *c, const yaml_node_t *n,
                      const ks_label_selector_t **out)
{
    ks_label_selector_t *sel;
    ks_labels_t ml;
    const ks_requirement_t *ex;
    ks_requirement_t *reqs;
    uint32_t n_ex, i;
    int rc;
    size_t old;
    *out = NULL;
    if (ky_is_null(n))
        return 0;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    if ((rc = ky_f_labels(c, n, "matchLabels", &ml)) != 0)
        return rc;
    old = ky_push(c, "matchExpressions");
    rc = ky_requirements(c, ky_get(c, n, "matchExpressions"), 0, &ex, &n_ex);
    ky_pop(c, old);
    if (rc != 0)
        return rc;
    sel = ky_alloc(c, sizeof(*sel));
    if (sel == NULL)
        return KS_ENOMEM;
    if (ml.n + n_ex > 0) {
        reqs = ky_alloc(c, (ml.n + n_ex) * sizeof(*reqs));
        if (reqs == NULL)
            return KS_ENOMEM;
        for (i = 0; i < ml.n; i++) {
            reqs[i].key = ml.items[i].key;
            reqs[i].op = KS_OP_IN;
            reqs[i].values = &ml.items[i].value;
            reqs[i].n_values = 1;
        }
        for (i = 0; i < n_ex; i++)
            reqs[ml.n + i] = ex[i];
        sel->reqs = reqs;
        sel->n = ml.n + n_ex;
    }
    *out = sel;
    return 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ky_resources(ks_yctx_t *c, const yaml_node_t *n, ks_resources_t *out,
                 unsigned *present)
{
    yaml_node_pair_t *p;
    int rc;
    if (present != NULL)
        *present = 0;
    if (ky_is_null(n))
        return 0;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = ky_node(c, p->key), *vn = ky_node(c, p->value);
        const char *name = ky_scalar(kn), *qs;
        char qerr[256];
        int64_t v = 0;
        int milli = 0;
        unsigned bit = 0;
        size_t old;
        if (name == NULL)
            return ky_fail(c, kn, "expected a resource name");
        if (strcmp(name, "cpu") == 0) {
            milli = 1;
            bit = KY_RES_CPU;
        } else if (strcmp(name, "memory") == 0) {
            bit = KY_RES_MEMORY;
        } else if (strcmp(name, "ephemeral-storage") == 0) {
            bit = KY_RES_EPHEMERAL;
        } else if (strcmp(name, "pods") == 0) {
            bit = KY_RES_PODS;
        } else if (strchr(name, '/') == NULL &&
                   !starts_with(name, "hugepages-") &&
                   !starts_with(name, "attachable-volumes-")) {
            continue; /* not a resource the scheduler accounts */
        }
        old = ky_push(c, name);
        qs = ky_scalar(vn);
        if (qs == NULL || ky_is_null(vn)) {
            rc = ky_fail(c, vn, "expected a quantity, found %s",
                         vn && qs == NULL ? type_name(vn) : "null");
            ky_pop(c, old);
            return rc;
        }
        if (ks_quantity_parse(qs, milli, &v, qerr, sizeof(qerr)) != 0) {
            rc = ky_fail(c, vn, "%s", qerr);
            ky_pop(c, old);
            return rc;
        }
        ky_pop(c, old);
        switch (bit) {
        case KY_RES_CPU: out->milli_cpu = v; break;
        case KY_RES_MEMORY: out->memory = v; break;
        case KY_RES_EPHEMERAL: out->ephemeral_storage = v; break;
        case KY_RES_PODS: out->allowed_pods = v; break;
        default: {
            const char *in = ky_intern(c, name, strlen(name));
            if (in == NULL)
                return KS_ENOMEM;
            if (ks_resources_set_scalar(out, in, v) != 0)
                return ky_fail(c, kn, "more than %d extended resources",
                               KS_MAX_SCALAR_RESOURCES);
        }
        }
        if (present != NULL)
            *present |= bit;
    }
    return 0;
}

/* --- field forms ---------------------------------------------------------- */

#define KY_FIELD(call)                                                     \
    do {                                                                       \
        const yaml_node_t *v_ = ky_get(c, map, key);                           \
        size_t old_;                                                           \
        int rc_;                                                               \
        if (v_ == NULL)                                                        \
            return 0;                                                          \
        old_ = ky_push(c, key);                                                \
        rc_ = call;                                                            \
        ky_pop(c, old_);                                                       \
        return rc_;                                                            \
    } while (0)

int ky_f_str(ks_yctx_t *c, const yaml_node_t *map, const char *key,
             const char **out)
{
    const yaml_node_t *v = ky_get(c, map, key);
    size_t old;
    int rc;
    if (v == NULL) {
        *out = ks_intern_empty(c->in);
        return 0;
    }
    old = ky_push(c, key);
    rc = ky_str(c, v, out);
    ky_pop(c, old);
    return rc;
}

int ky_f_int32(ks_yctx_t *c, const yaml_node_t *map, const char *key,
               int32_t *out)
{
    KY_FIELD(ky_int32(c, v_, out));
}

int ky_f_bool(ks_yctx_t *c, const yaml_node_t *map, const char *key, int *out)
{
    KY_FIELD(ky_bool(c, v_, out));
}

int ky_f_time(ks_yctx_t *c, const yaml_node_t *map, const char *key,
              int64_t *unix_ms)
{
    KY_FIELD(ky_time(c, v_, unix_ms));
}

int ky_f_labels(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                ks_labels_t *out)
{
    out->items = NULL;
    out->n = 0;
    KY_FIELD(ky_labels(c, v_, out));
}

int ky_f_strings(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                 const char *const **out, uint32_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    KY_FIELD(ky_strings(c, v_, out, n_out));
}

int ky_f_label_selector(ks_yctx_t *c, const yaml_node_t *map,
                        const char *key, const ks_label_selector_t **out)
{
    *out = NULL;
    KY_FIELD(ky_label_selector(c, v_, out));
}

int ky_f_resources(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                   ks_resources_t *out, unsigned *present)
{
    if (present != NULL)
        *present = 0;
    KY_FIELD(ky_resources(c, v_, out, present));
}
