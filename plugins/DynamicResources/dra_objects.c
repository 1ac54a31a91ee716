/*
 * ResourceSlices, DeviceClasses and ResourceClaims (resource.k8s.io/v1)
 * read from the stores into the allocator's C structures, each object
 * parsed once per resourceVersion and kept by uid; CEL selectors compiled
 * once per expression text. Loop thread only, except dra_node_slices and
 * the reads of parsed structures (Filter, Score).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_host.h"

/* --- field helpers ------------------------------------------------------------ */

const char *dra_str(const dra_t *d, const ks_object_t *o, const char *path)
{
    const char *s = NULL;
    if (d->api->object_string(o, path, &s) != KS_FIELD_OK || s == NULL)
        return "";
    return s;
}

const char *dra_uid(const dra_t *d, const ks_object_t *o, char *buf,
                    size_t len)
{
    const char *uid = d->api->object_uid(o);
    if (uid != NULL && uid[0] != '\0')
        return uid;
    snprintf(buf, len, "%s/%s", d->api->object_namespace(o),
             d->api->object_name(o));
    return buf;
}

static const char *istr(const dra_t *d, const ks_object_t *o,
                        const char *path)
{
    return d->api->intern(d->h, dra_str(d, o, path));
}

static uint32_t olen(const dra_t *d, const ks_object_t *o, const char *path)
{
    uint32_t n = 0;
    if (d->api->object_len(o, path, &n) != KS_FIELD_OK)
        return 0;
    return n;
}

static int64_t oint(const dra_t *d, const ks_object_t *o, const char *path,
                    int64_t def)
{
    int64_t v = def;
    if (d->api->object_int(o, path, &v) != KS_FIELD_OK)
        return def;
    return v;
}

static int has(const dra_t *d, const ks_object_t *o, const char *path)
{
    return d->api->object_type(o, path) != KS_FIELD_ABSENT;
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* --- structural equality ------------------------------------------------------ */

typedef struct eq_walk {
    const dra_t *d;
    const ks_object_t *a, *b;
    const char *path;
    int equal;
} eq_walk_t;

static int eq_key(const char *key, const char *value, void *ud)
{
    eq_walk_t *w = ud;
    char p[1024];
    (void)value;
    if (strchr(key, '"') != NULL) { /* not addressable: call it changed */
        w->equal = 0;
        return 1;
    }
    snprintf(p, sizeof p, "%s[\"%s\"]", w->path, key);
    if (!dra_field_equal(w->d, w->a, w->b, p)) {
        w->equal = 0;
        return 1;
    }
    return 0;
}

int dra_field_equal(const dra_t *d, const ks_object_t *a, const ks_object_t *b,
                    const char *path)
{
    ks_field_type_t ta = d->api->object_type(a, path);
    ks_field_type_t tb = d->api->object_type(b, path);
    uint32_t na = 0, nb = 0, i;
    if (ta != tb)
        return 0;
    switch (ta) {
    case KS_FIELD_ABSENT:
        return 1;
    case KS_FIELD_STRING: {
        const char *x = NULL, *y = NULL;
        d->api->object_string(a, path, &x);
        d->api->object_string(b, path, &y);
        return x != NULL && y != NULL && strcmp(x, y) == 0;
    }
    case KS_FIELD_INT: {
        int64_t x = 0, y = 1;
        d->api->object_int(a, path, &x);
        d->api->object_int(b, path, &y);
        return x == y;
    }
    case KS_FIELD_BOOL: {
        int x = 0, y = 1;
        d->api->object_bool(a, path, &x);
        d->api->object_bool(b, path, &y);
        return x == y;
    }
    case KS_FIELD_ARRAY:
        d->api->object_len(a, path, &na);
        d->api->object_len(b, path, &nb);
        if (na != nb)
            return 0;
        for (i = 0; i < na; i++) {
            char p[1024];
            snprintf(p, sizeof p, "%s[%u]", path, i);
            if (!dra_field_equal(d, a, b, p))
                return 0;
        }
        return 1;
    case KS_FIELD_MAP: {
        eq_walk_t w = {d, a, b, path, 1};
        d->api->object_len(a, path, &na);
        d->api->object_len(b, path, &nb);
        if (na != nb)
            return 0;
        if (d->api->object_map_iterate(a, path, eq_key, &w) != KS_FIELD_OK)
            return 0;
        return w.equal;
    }
    default: /* reals and the rest: not compared, call them changed */
        return 0;
    }
}

/* --- CEL programs ----------------------------------------------------------- */

static int compile_selector(dra_t *d, const char *expr, dra_selector_t *out)
{
    uint32_t b = hash_str(expr) % DRA_BUCKETS;
    dra_prog_t *p;
    char err[512];
    for (p = d->progs[b]; p != NULL; p = p->next)
        if (strcmp(p->expr, expr) == 0)
            break;
    if (p == NULL) {
        if ((p = calloc(1, sizeof *p)) == NULL ||
            (p->expr = strdup(expr)) == NULL) {
            free(p);
            return -1;
        }
        err[0] = '\0';
        p->prog = ks_cel_compile(expr, err, sizeof err);
        if (p->prog == NULL && (p->err = strdup(err)) == NULL) {
            free(p->expr);
            free(p);
            return -1;
        }
        p->next = d->progs[b];
        d->progs[b] = p;
    }
    out->expr = p->expr;
    out->prog = p->prog;
    out->err = p->err;
    return 0;
}

static int read_selectors(dra_t *d, const ks_object_t *o, const char *path,
                          dra_selector_t **out, uint32_t *n)
{
    uint32_t len, i;
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    len = olen(d, o, p);
    *out = NULL;
    *n = 0;
    if (len == 0)
        return 0;
    if ((*out = calloc(len, sizeof **out)) == NULL)
        return -1;
    for (i = 0; i < len; i++) {
        char q[560];
        snprintf(q, sizeof q, "%s[%u].cel.expression", path, i);
        if (!has(d, o, q)) {
            /* an unknown selector type: refused when used */
            (*out)[i].expr = "";
            (*out)[i].err = "CEL expression empty (unsupported selector "
                            "type?)";
            continue;
        }
        if (compile_selector(d, dra_str(d, o, q), &(*out)[i]) != 0)
            return -1;
    }
    *n = len;
    return 0;
}

/* --- node selectors ------------------------------------------------------------ */

static int read_nsreqs(dra_t *d, const ks_object_t *o, const char *path,
                       int field, dra_nsterm_t *t)
{
    uint32_t n = olen(d, o, path), i, k, base = t->n_reqs;
    dra_nsreq_t *nr;
    char p[600];
    if (n == 0)
        return 0;
    nr = realloc(t->reqs, (base + n) * sizeof *nr);
    if (nr == NULL)
        return -1;
    t->reqs = nr;
    for (i = 0; i < n; i++) {
        dra_nsreq_t *r = &t->reqs[base + i];
        const char *op;
        memset(r, 0, sizeof *r);
        t->n_reqs++;
        r->field = field;
        snprintf(p, sizeof p, "%s[%u].key", path, i);
        if ((r->key = strdup(dra_str(d, o, p))) == NULL)
            return -1;
        snprintf(p, sizeof p, "%s[%u].operator", path, i);
        op = dra_str(d, o, p);
        r->op = strcmp(op, "In") == 0             ? DRA_OP_IN
                : strcmp(op, "NotIn") == 0        ? DRA_OP_NOT_IN
                : strcmp(op, "Exists") == 0       ? DRA_OP_EXISTS
                : strcmp(op, "DoesNotExist") == 0 ? DRA_OP_DOES_NOT_EXIST
                : strcmp(op, "Gt") == 0           ? DRA_OP_GT
                                                  : DRA_OP_LT;
        snprintf(p, sizeof p, "%s[%u].values", path, i);
        r->n_values = olen(d, o, p);
        if (r->n_values > 0 &&
            (r->values = calloc(r->n_values, sizeof *r->values)) == NULL) {
            r->n_values = 0;
            return -1;
        }
        for (k = 0; k < r->n_values; k++) {
            snprintf(p, sizeof p, "%s[%u].values[%u]", path, i, k);
            if ((r->values[k] = strdup(dra_str(d, o, p))) == NULL)
                return -1;
        }
    }
    return 0;
}

static int read_nodesel(dra_t *d, const ks_object_t *o, const char *path,
                        dra_nodesel_t *s)
{
    char p[600];
    uint32_t n, i;
    snprintf(p, sizeof p, "%s.nodeSelectorTerms", path);
    n = olen(d, o, p);
    memset(s, 0, sizeof *s);
    if (n == 0)
        return 0;
    if ((s->terms = calloc(n, sizeof *s->terms)) == NULL)
        return -1;
    s->n_terms = n;
    for (i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s.nodeSelectorTerms[%u].matchExpressions",
                 path, i);
        if (read_nsreqs(d, o, p, 0, &s->terms[i]) != 0)
            return -1;
        snprintf(p, sizeof p, "%s.nodeSelectorTerms[%u].matchFields", path,
                 i);
        if (read_nsreqs(d, o, p, 1, &s->terms[i]) != 0)
            return -1;
    }
    return 0;
}

/* --- slices ----------------------------------------------------------------------- */

typedef struct keys {
    char **k;
    uint32_t n, cap;
} keys_t;

static int collect_key(const char *key, const char *value, void *ud)
{
    keys_t *ks = ud;
    (void)value;
    if (ks->n == ks->cap) {
        uint32_t nc = ks->cap ? ks->cap * 2 : 8;
        char **nk = realloc(ks->k, nc * sizeof *nk);
        if (nk == NULL)
            return 1;
        ks->k = nk;
        ks->cap = nc;
    }
    if ((ks->k[ks->n] = strdup(key)) == NULL)
        return 1;
    ks->n++;
    return 0;
}

static void keys_free(keys_t *ks)
{
    uint32_t i;
    for (i = 0; i < ks->n; i++)
        free(ks->k[i]);
    free(ks->k);
}

/* "domain/id" or "id" (the driver's domain). */
static void split_name(const dra_t *d, const char *name, const char *driver,
                       const char **domain, const char **id)
{
    const char *slash = strchr(name, '/');
    if (slash == NULL) {
        *domain = driver;
        *id = d->api->intern(d->h, name);
    } else {
        char buf[512];
        size_t n = (size_t)(slash - name);
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, name, n);
        buf[n] = '\0';
        *domain = d->api->intern(d->h, buf);
        *id = d->api->intern(d->h, slash + 1);
    }
}

static int read_device(dra_t *d, const ks_object_t *o, uint32_t i,
                       const char *driver, dra_device_t *dev)
{
    char p[1400];
    keys_t ks = {0};
    uint32_t k;
    int bv = 0;
    ks_cel_attr_t *attrs = NULL;
    ks_cel_capacity_t *caps = NULL;
    snprintf(p, sizeof p, "spec.devices[%u].name", i);
    dev->name = istr(d, o, p);
    dev->cel.driver = driver;
    snprintf(p, sizeof p, "spec.devices[%u].allowMultipleAllocations", i);
    if (d->api->object_bool(o, p, &bv) == KS_FIELD_OK)
        dev->cel.allow_multiple_allocations = bv;
    snprintf(p, sizeof p, "spec.devices[%u].attributes", i);
    if (has(d, o, p) &&
        d->api->object_map_iterate(o, p, collect_key, &ks) != KS_FIELD_OK) {
        keys_free(&ks);
        return -1;
    }
    if (ks.n > 0 && (attrs = calloc(ks.n, sizeof *attrs)) == NULL) {
        keys_free(&ks);
        return -1;
    }
    dev->cel.attrs = attrs;
    for (k = 0; k < ks.n; k++) {
        ks_cel_attr_t *a = &attrs[dev->cel.n_attrs];
        const char *base;
        char q[1300];
        split_name(d, ks.k[k], driver, &a->domain, &a->id);
        snprintf(q, sizeof q, "spec.devices[%u].attributes[\"%s\"]", i,
                 ks.k[k]);
        base = q;
        snprintf(p, sizeof p, "%s.int", base);
        if (d->api->object_int(o, p, &a->i) == KS_FIELD_OK) {
            a->type = KS_CEL_ATTR_INT;
        } else {
            snprintf(p, sizeof p, "%s.bool", base);
            if (d->api->object_bool(o, p, &a->b) == KS_FIELD_OK) {
                a->type = KS_CEL_ATTR_BOOL;
            } else {
                snprintf(p, sizeof p, "%s.string", base);
                if (has(d, o, p)) {
                    a->type = KS_CEL_ATTR_STRING;
                    a->s = istr(d, o, p);
                } else {
                    snprintf(p, sizeof p, "%s.version", base);
                    if (!has(d, o, p))
                        continue; /* an unknown value type */
                    a->type = KS_CEL_ATTR_VERSION;
                    a->s = istr(d, o, p);
                }
            }
        }
        dev->cel.n_attrs++;
    }
    keys_free(&ks);
    memset(&ks, 0, sizeof ks);
    snprintf(p, sizeof p, "spec.devices[%u].capacity", i);
    if (has(d, o, p) &&
        d->api->object_map_iterate(o, p, collect_key, &ks) != KS_FIELD_OK) {
        keys_free(&ks);
        return -1;
    }
    if (ks.n > 0 && (caps = calloc(ks.n, sizeof *caps)) == NULL) {
        keys_free(&ks);
        return -1;
    }
    dev->cel.caps = caps;
    for (k = 0; k < ks.n; k++) {
        ks_cel_capacity_t *c = &caps[dev->cel.n_caps++];
        split_name(d, ks.k[k], driver, &c->domain, &c->id);
        snprintf(p, sizeof p, "spec.devices[%u].capacity[\"%s\"].value", i,
                 ks.k[k]);
        c->value = istr(d, o, p);
    }
    keys_free(&ks);
    return 0;
}

static void slice_free(dra_slice_t *s)
{
    uint32_t i;
    for (i = 0; i < s->n_devices; i++) {
        free((void *)s->devices[i].cel.attrs);
        free((void *)s->devices[i].cel.caps);
    }
    free(s->devices);
    dra_nodesel_free(&s->selector);
}

static int parse_slice(dra_t *d, const ks_object_t *o, dra_slice_t *s)
{
    uint32_t i;
    int all = 0;
    s->name = d->api->intern(d->h, d->api->object_name(o));
    s->driver = istr(d, o, "spec.driver");
    s->pool = istr(d, o, "spec.pool.name");
    s->generation = oint(d, o, "spec.pool.generation", 0);
    s->slice_count = oint(d, o, "spec.pool.resourceSliceCount", 0);
    d->api->object_bool(o, "spec.allNodes", &all);
    if (dra_str(d, o, "spec.nodeName")[0] != '\0') {
        s->sel = DRA_SLICE_NODE_NAME;
        s->node_name = istr(d, o, "spec.nodeName");
    } else if (all) {
        s->sel = DRA_SLICE_ALL_NODES;
    } else if (has(d, o, "spec.nodeSelector")) {
        s->sel = DRA_SLICE_SELECTOR;
        if (read_nodesel(d, o, "spec.nodeSelector", &s->selector) != 0)
            return -1;
    } else {
        s->sel = DRA_SLICE_UNKNOWN;
    }
    s->n_devices = olen(d, o, "spec.devices");
    if (s->n_devices > 0 &&
        (s->devices = calloc(s->n_devices, sizeof *s->devices)) == NULL) {
        s->n_devices = 0;
        return -1;
    }
    for (i = 0; i < s->n_devices; i++)
        if (read_device(d, o, i, s->driver, &s->devices[i]) != 0)
            return -1;
    return 0;
}

/* --- classes ----------------------------------------------------------------------- */

static int parse_class(dra_t *d, const ks_object_t *o, dra_class_t *c)
{
    c->name = d->api->intern(d->h, d->api->object_name(o));
    return read_selectors(d, o, "spec.selectors", &c->selectors,
                          &c->n_selectors);
}

static void class_free(dra_class_t *c)
{
    free(c->selectors);
}

/* --- claims ------------------------------------------------------------------------- */

static int parse_exact(dra_t *d, const ks_object_t *o, const char *path,
                       dra_exact_t *e)
{
    char p[600];
    const char *mode;
    int admin = 0;
    snprintf(p, sizeof p, "%s.deviceClassName", path);
    e->class_name = istr(d, o, p);
    snprintf(p, sizeof p, "%s.allocationMode", path);
    mode = dra_str(d, o, p);
    e->mode = mode[0] == '\0' || strcmp(mode, "ExactCount") == 0
                  ? DRA_MODE_EXACT
              : strcmp(mode, "All") == 0 ? DRA_MODE_ALL
                                         : DRA_MODE_UNKNOWN;
    snprintf(p, sizeof p, "%s.count", path);
    e->count = oint(d, o, p, 1);
    snprintf(p, sizeof p, "%s.adminAccess", path);
    d->api->object_bool(o, p, &admin);
    e->admin_access = admin;
    snprintf(p, sizeof p, "%s.selectors", path);
    return read_selectors(d, o, p, &e->selectors, &e->n_selectors);
}

static void claim_free(dra_claim_t *c)
{
    uint32_t i, k;
    for (i = 0; i < c->n_requests; i++) {
        free(c->requests[i].exactly.selectors);
        for (k = 0; k < c->requests[i].n_subs; k++)
            free(c->requests[i].subs[k].selectors);
        free(c->requests[i].subs);
    }
    free(c->requests);
    for (i = 0; i < c->n_constraints; i++)
        free(c->constraints[i].requests);
    free(c->constraints);
    free(c->results);
    dra_nodesel_free(&c->nodesel);
    free(c->reserved);
    free(c->finalizers);
}

static int parse_claim(dra_t *d, const ks_object_t *o, dra_claim_t *c)
{
    char p[700];
    uint32_t i, k, n;
    c->ns = d->api->intern(d->h, d->api->object_namespace(o));
    c->name = d->api->intern(d->h, d->api->object_name(o));
    {
        char ub[512];
        c->uid = d->api->intern(d->h, dra_uid(d, o, ub, sizeof ub));
    }
    c->rv = istr(d, o, "metadata.resourceVersion");
    c->deleting = has(d, o, "metadata.deletionTimestamp");
    n = olen(d, o, "metadata.ownerReferences");
    for (i = 0; i < n; i++) {
        int ctl = 0;
        snprintf(p, sizeof p, "metadata.ownerReferences[%u].controller", i);
        if (d->api->object_bool(o, p, &ctl) == KS_FIELD_OK && ctl) {
            snprintf(p, sizeof p, "metadata.ownerReferences[%u].uid", i);
            c->controller_uid = istr(d, o, p);
            break;
        }
    }
    c->n_requests = olen(d, o, "spec.devices.requests");
    if (c->n_requests > 0 &&
        (c->requests = calloc(c->n_requests, sizeof *c->requests)) == NULL) {
        c->n_requests = 0;
        return -1;
    }
    for (i = 0; i < c->n_requests; i++) {
        dra_request_t *r = &c->requests[i];
        snprintf(p, sizeof p, "spec.devices.requests[%u].name", i);
        r->name = istr(d, o, p);
        snprintf(p, sizeof p, "spec.devices.requests[%u].exactly", i);
        if (has(d, o, p)) {
            r->has_exactly = 1;
            r->exactly.name = r->name;
            if (parse_exact(d, o, p, &r->exactly) != 0)
                return -1;
            continue;
        }
        snprintf(p, sizeof p, "spec.devices.requests[%u].firstAvailable", i);
        n = olen(d, o, p);
        if (n > 0 && (r->subs = calloc(n, sizeof *r->subs)) == NULL)
            return -1;
        r->n_subs = n;
        for (k = 0; k < n; k++) {
            char q[640];
            snprintf(q, sizeof q,
                     "spec.devices.requests[%u].firstAvailable[%u]", i, k);
            snprintf(p, sizeof p, "%s.name", q);
            r->subs[k].name = istr(d, o, p);
            if (parse_exact(d, o, q, &r->subs[k]) != 0)
                return -1;
        }
    }
    c->n_constraints = olen(d, o, "spec.devices.constraints");
    if (c->n_constraints > 0 &&
        (c->constraints = calloc(c->n_constraints,
                                 sizeof *c->constraints)) == NULL) {
        c->n_constraints = 0;
        return -1;
    }
    for (i = 0; i < c->n_constraints; i++) {
        dra_constraint_t *t = &c->constraints[i];
        snprintf(p, sizeof p, "spec.devices.constraints[%u].matchAttribute",
                 i);
        if (!has(d, o, p)) {
            t->unknown = 1;
            continue;
        }
        split_name(d, dra_str(d, o, p), "", &t->attr_domain, &t->attr_id);
        t->attr_domain = d->api->intern(d->h, t->attr_domain);
        snprintf(p, sizeof p, "spec.devices.constraints[%u].requests", i);
        n = olen(d, o, p);
        if (n > 0 && (t->requests = calloc(n, sizeof *t->requests)) == NULL)
            return -1;
        t->n_requests = n;
        for (k = 0; k < n; k++) {
            snprintf(p, sizeof p, "spec.devices.constraints[%u].requests[%u]",
                     i, k);
            t->requests[k] = istr(d, o, p);
        }
    }
    c->allocated = has(d, o, "status.allocation");
    n = olen(d, o, "status.allocation.devices.results");
    if (n > 0 && (c->results = calloc(n, sizeof *c->results)) == NULL)
        return -1;
    c->n_results = n;
    for (i = 0; i < n; i++) {
        dra_result_t *r = &c->results[i];
        snprintf(p, sizeof p, "status.allocation.devices.results[%u].request",
                 i);
        r->request = istr(d, o, p);
        snprintf(p, sizeof p, "status.allocation.devices.results[%u].driver",
                 i);
        r->id.driver = istr(d, o, p);
        snprintf(p, sizeof p, "status.allocation.devices.results[%u].pool",
                 i);
        r->id.pool = istr(d, o, p);
        snprintf(p, sizeof p, "status.allocation.devices.results[%u].device",
                 i);
        r->id.device = istr(d, o, p);
    }
    if (has(d, o, "status.allocation.nodeSelector")) {
        c->has_nodesel = 1;
        if (read_nodesel(d, o, "status.allocation.nodeSelector",
                         &c->nodesel) != 0)
            return -1;
    }
    n = olen(d, o, "status.reservedFor");
    if (n > 0 && (c->reserved = calloc(n, sizeof *c->reserved)) == NULL)
        return -1;
    c->n_reserved = n;
    for (i = 0; i < n; i++) {
        snprintf(p, sizeof p, "status.reservedFor[%u].resource", i);
        c->reserved[i].resource = istr(d, o, p);
        snprintf(p, sizeof p, "status.reservedFor[%u].name", i);
        c->reserved[i].name = istr(d, o, p);
        snprintf(p, sizeof p, "status.reservedFor[%u].uid", i);
        c->reserved[i].uid = istr(d, o, p);
    }
    n = olen(d, o, "metadata.finalizers");
    if (n > 0 && (c->finalizers = calloc(n, sizeof *c->finalizers)) == NULL)
        return -1;
    c->n_finalizers = n;
    for (i = 0; i < n; i++) {
        snprintf(p, sizeof p, "metadata.finalizers[%u]", i);
        c->finalizers[i] = istr(d, o, p);
    }
    return 0;
}

/* --- entries ---------------------------------------------------------------------------- */

static void entry_destroy(dra_entry_t *e)
{
    switch (e->kind) {
    case DRA_E_SLICE:
        slice_free(&e->u.slice);
        break;
    case DRA_E_CLASS:
        class_free(&e->u.cls);
        break;
    default:
        claim_free(&e->u.claim);
    }
    free(e->uid);
    free(e->rv);
    free(e);
}

void dra_entry_ref(dra_entry_t *e)
{
    e->refs++;
}

void dra_entry_unref(dra_entry_t *e)
{
    if (e != NULL && --e->refs == 0)
        entry_destroy(e);
}

/* The cached entry of o (parsed now when new or changed), or NULL when out
 * of memory. *changed is set when it was parsed. */
static dra_entry_t *cache_get(dra_t *d, dra_cache_t *c, int kind,
                              const ks_object_t *o, int *changed)
{
    char key[512];
    const char *uid = dra_uid(d, o, key, sizeof key);
    const char *rv = dra_str(d, o, "metadata.resourceVersion");
    uint32_t b;
    dra_entry_t **pp, *e;
    int rc;
    b = hash_str(uid) % DRA_BUCKETS;
    for (pp = &c->b[b]; (e = *pp) != NULL; pp = &e->next)
        if (strcmp(e->uid, uid) == 0)
            break;
    if (e != NULL && strcmp(e->rv, rv) == 0) {
        e->epoch = d->epoch;
        return e;
    }
    if (e != NULL) { /* changed: replace */
        *pp = e->next;
        c->n--;
        dra_entry_unref(e);
    }
    if ((e = calloc(1, sizeof *e)) == NULL)
        return NULL;
    e->kind = kind;
    e->refs = 1;
    e->epoch = d->epoch;
    if ((e->uid = strdup(uid)) == NULL || (e->rv = strdup(rv)) == NULL) {
        entry_destroy(e);
        return NULL;
    }
    rc = kind == DRA_E_SLICE   ? parse_slice(d, o, &e->u.slice)
         : kind == DRA_E_CLASS ? parse_class(d, o, &e->u.cls)
                               : parse_claim(d, o, &e->u.claim);
    if (rc != 0) {
        entry_destroy(e);
        return NULL;
    }
    e->next = c->b[b];
    c->b[b] = e;
    c->n++;
    *changed = 1;
    if (kind == DRA_E_CLAIM && e->u.claim.allocated)
        dra_assume_caught_up(d->assume, e->u.claim.uid);
    return e;
}

/* Drop the entries the last refresh did not see; 1 when any went. */
static int cache_sweep(dra_t *d, dra_cache_t *c, int all)
{
    uint32_t b;
    int any = 0;
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_entry_t **pp = &c->b[b], *e;
        while ((e = *pp) != NULL) {
            if (all || e->epoch != d->epoch) {
                *pp = e->next;
                c->n--;
                if (!all && e->kind == DRA_E_CLAIM)
                    dra_assume_caught_up(d->assume, e->u.claim.uid);
                dra_entry_unref(e);
                any = 1;
            } else {
                pp = &e->next;
            }
        }
    }
    return any;
}

typedef struct walk {
    dra_t *d;
    dra_cache_t *c;
    int kind;
    int changed;
    int oom;
} walk_t;

static int walk_one(const ks_object_t *o, void *ud)
{
    walk_t *w = ud;
    if (cache_get(w->d, w->c, w->kind, o, &w->changed) == NULL) {
        w->oom = 1;
        return 1;
    }
    return 0;
}

/* --- the node index ------------------------------------------------------------------- */

static void index_free(dra_t *d)
{
    uint32_t b;
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_node_slices_t *n = d->by_node[b], *next;
        for (; n != NULL; n = next) {
            next = n->next;
            free(n->v);
            free(n);
        }
        d->by_node[b] = NULL;
    }
    d->n_generic = 0;
}

static int push(const dra_slice_t ***v, uint32_t *n, uint32_t *cap,
                const dra_slice_t *s)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        const dra_slice_t **nv = realloc(*v, nc * sizeof *nv);
        if (nv == NULL)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = s;
    return 0;
}

static int slice_cmp(const void *a, const void *b)
{
    const dra_slice_t *x = *(const dra_slice_t *const *)a;
    const dra_slice_t *y = *(const dra_slice_t *const *)b;
    return strcmp(x->name, y->name);
}

static int index_build(dra_t *d)
{
    uint32_t b, i;
    index_free(d);
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_entry_t *e;
        for (e = d->slice_cache.b[b]; e != NULL; e = e->next) {
            const dra_slice_t *s = &e->u.slice;
            if (s->sel == DRA_SLICE_NODE_NAME) {
                uint32_t h = (uint32_t)(((uintptr_t)s->node_name >> 4) %
                                        DRA_BUCKETS);
                dra_node_slices_t *n;
                for (n = d->by_node[h]; n != NULL; n = n->next)
                    if (n->node == s->node_name)
                        break;
                if (n == NULL) {
                    if ((n = calloc(1, sizeof *n)) == NULL)
                        return -1;
                    n->node = s->node_name;
                    n->next = d->by_node[h];
                    d->by_node[h] = n;
                }
                if (push(&n->v, &n->n, &n->cap, s) != 0)
                    return -1;
            } else if (s->sel != DRA_SLICE_UNKNOWN) {
                if (push(&d->generic, &d->n_generic, &d->cap_generic, s) !=
                    0)
                    return -1;
            }
        }
    }
    /* slices by name: the lister's order is not defined upstream either */
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_node_slices_t *n;
        for (n = d->by_node[b]; n != NULL; n = n->next)
            if (n->n > 1)
                qsort(n->v, n->n, sizeof *n->v, slice_cmp);
    }
    if (d->n_generic > 1)
        qsort(d->generic, d->n_generic, sizeof *d->generic, slice_cmp);
    (void)i;
    return 0;
}

int dra_node_slices(const dra_t *d, const ks_node_t *node,
                    const dra_slice_t ***out, uint32_t *n)
{
    const char *name = node->name;
    uint32_t h = (uint32_t)(((uintptr_t)name >> 4) % DRA_BUCKETS), i,
             cap = 0;
    const dra_node_slices_t *ns;
    const dra_slice_t **v = NULL;
    *out = NULL;
    *n = 0;
    /* node names and the slices' nodeName are interned in the host's one
     * table (types.h): the address is the name */
    for (ns = d->by_node[h]; ns != NULL; ns = ns->next)
        if (ns->node == name)
            break;
    if (ns != NULL)
        for (i = 0; i < ns->n; i++)
            if (push(&v, n, &cap, ns->v[i]) != 0)
                goto oom;
    for (i = 0; i < d->n_generic; i++) {
        const dra_slice_t *s = d->generic[i];
        if (s->sel == DRA_SLICE_ALL_NODES ||
            dra_nodesel_matches(&s->selector, name, &node->labels))
            if (push(&v, n, &cap, s) != 0)
                goto oom;
    }
    *out = v;
    return 0;
oom:
    free(v);
    *n = 0;
    return -1;
}

/* --- refresh -------------------------------------------------------------------------- */

/* Walk one store into its cache unless its version says nothing changed
 * since the last walk; 1 when entries came, changed or went, -1 out of
 * memory. */
static int refresh_one(dra_t *d, const ks_store_t *st, dra_cache_t *c,
                       int kind, uint64_t *ver)
{
    uint64_t v = d->api->store_version(st);
    walk_t w;
    if (d->have_versions && v == *ver)
        return 0;
    memset(&w, 0, sizeof w);
    w.d = d;
    w.c = c;
    w.kind = kind;
    d->api->object_list(st, NULL, NULL, walk_one, &w);
    if (w.oom)
        return -1;
    if (cache_sweep(d, c, 0))
        w.changed = 1;
    *ver = v;
    return w.changed;
}

int dra_refresh(dra_t *d)
{
    int rc;
    d->epoch++;
    rc = refresh_one(d, d->slices, &d->slice_cache, DRA_E_SLICE,
                     &d->ver_slices);
    if (rc < 0)
        return -1;
    if (rc > 0 || d->slices_dirty) {
        d->slices_dirty = 1;
        if (index_build(d) != 0)
            return -1;
        d->slices_dirty = 0;
    }
    if (refresh_one(d, d->classes, &d->class_cache, DRA_E_CLASS,
                    &d->ver_classes) < 0 ||
        refresh_one(d, d->claims, &d->claim_cache, DRA_E_CLAIM,
                    &d->ver_claims) < 0)
        return -1;
    d->have_versions = 1;
    return 0;
}

dra_entry_t *dra_claim_entry(dra_t *d, const ks_object_t *o)
{
    int changed = 0;
    return cache_get(d, &d->claim_cache, DRA_E_CLAIM, o, &changed);
}

dra_entry_t *dra_class_entry(dra_t *d, const char *name)
{
    const ks_object_t *o = d->api->object_get(d->classes, NULL, name);
    dra_entry_t *e;
    int changed = 0;
    if (o == NULL)
        return NULL;
    e = cache_get(d, &d->class_cache, DRA_E_CLASS, o, &changed);
    return e;
}

void dra_objects_free(dra_t *d)
{
    uint32_t b;
    cache_sweep(d, &d->slice_cache, 1);
    cache_sweep(d, &d->class_cache, 1);
    cache_sweep(d, &d->claim_cache, 1);
    index_free(d);
    free(d->generic);
    d->generic = NULL;
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_prog_t *p = d->progs[b], *next;
        for (; p != NULL; p = next) {
            next = p->next;
            ks_cel_free(p->prog);
            free(p->expr);
            free(p->err);
            free(p);
        }
        d->progs[b] = NULL;
    }
}
