/*
 * Upstream's structured allocator (k8s.io/dynamic-resource-allocation,
 * structured, the "stable" variant that v1.36 runs without alpha gates),
 * reimplemented: for one node, the pools that reach it (newest generation
 * only, a pool with fewer slices than resourceSliceCount or with a
 * duplicate device name is not used), then an exhaustive search that
 * picks one device after the other for each claim, request (or one of its
 * firstAvailable subrequests, in order) and device index, backtracking
 * when a device is in use, does not match the class's and the request's
 * selectors or breaks a matchAttribute constraint. The first full
 * solution wins.
 *
 * Order: pools by driver then pool name (upstream ranges over a Go map,
 * whose order is random: where two pools could serve a request, upstream
 * picks either, ksched always the same one), then slices in the order
 * given, then devices in slice order (as upstream).
 *
 * Not modelled (refused with upstream's message or never used): admin
 * access, partitionable devices (counters), device taints, binding
 * conditions, consumable capacity, per-device node selection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra.h"

int64_t dra_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* --- scratch memory ---------------------------------------------------------- */

/* One Allocate's memory: a buffer on the stack, then heap blocks freed
 * together at the end (a node evaluation made a dozen malloc calls). */
typedef struct scratch {
    unsigned char buf[6144];
    size_t used;
    void **extra;
    size_t n_extra, cap_extra;
    int oom;
} scratch_t;

static void *sc_alloc(scratch_t *s, size_t n)
{
    void *p;
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (s->used + n <= sizeof s->buf) {
        p = s->buf + s->used;
        s->used += n;
        memset(p, 0, n);
        return p;
    }
    if (s->n_extra == s->cap_extra) {
        size_t nc = s->cap_extra ? s->cap_extra * 2 : 8;
        void **ne = realloc(s->extra, nc * sizeof *ne);
        if (ne == NULL) {
            s->oom = 1;
            return NULL;
        }
        s->extra = ne;
        s->cap_extra = nc;
    }
    if ((p = calloc(1, n)) == NULL) {
        s->oom = 1;
        return NULL;
    }
    s->extra[s->n_extra++] = p;
    return p;
}

static void sc_free(scratch_t *s)
{
    size_t i;
    for (i = 0; i < s->n_extra; i++)
        free(s->extra[i]);
    free(s->extra);
}

/* --- pools ------------------------------------------------------------------ */

typedef struct pool {
    const char *driver, *name;
    int64_t generation, slice_count;
    const dra_slice_t **slices;
    uint32_t n;
    int incomplete, invalid;
} pool_t;

static int pool_cmp(const void *a, const void *b)
{
    const pool_t *x = a, *y = b;
    int c = strcmp(x->driver, y->driver);
    return c != 0 ? c : strcmp(x->name, y->name);
}

/* GatherPools over the slices that reach the node: per pool only the
 * slices of its newest generation (addSlice); incomplete when fewer than
 * resourceSliceCount, invalid with a device name twice (poolIsInvalid). */
static int gather_pools(scratch_t *sc, const dra_alloc_in_t *in,
                        pool_t **out, uint32_t *n_out)
{
    uint32_t n = in->n_slices, np = 0, i, j, k, a, b, off = 0;
    uint32_t *pidx = sc_alloc(sc, (n ? n : 1) * sizeof *pidx);
    pool_t *pools = sc_alloc(sc, (n ? n : 1) * sizeof *pools);
    const dra_slice_t **all = sc_alloc(sc, (n ? n : 1) * sizeof *all);
    *out = NULL;
    *n_out = 0;
    if (pidx == NULL || pools == NULL || all == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        const dra_slice_t *s = in->slices[i];
        pidx[i] = UINT32_MAX;
        if (s->sel == DRA_SLICE_UNKNOWN)
            continue;
        for (j = 0; j < np; j++)
            if (str_eq(pools[j].driver, s->driver) &&
                str_eq(pools[j].name, s->pool))
                break;
        if (j == np) {
            pools[np].driver = s->driver;
            pools[np].name = s->pool;
            pools[np].generation = s->generation;
            pools[np].slice_count = s->slice_count;
            np++;
        } else if (s->generation > pools[j].generation) {
            pools[j].generation = s->generation; /* newer replaces */
            pools[j].slice_count = s->slice_count;
        }
        pidx[i] = j;
    }
    for (i = 0; i < n; i++)
        if (pidx[i] != UINT32_MAX &&
            in->slices[i]->generation == pools[pidx[i]].generation)
            pools[pidx[i]].n++;
    for (j = 0; j < np; j++) {
        pools[j].slices = all + off;
        off += pools[j].n;
        pools[j].n = 0;
    }
    for (i = 0; i < n; i++)
        if (pidx[i] != UINT32_MAX &&
            in->slices[i]->generation == pools[pidx[i]].generation) {
            pool_t *p = &pools[pidx[i]];
            p->slices[p->n++] = in->slices[i];
        }
    for (i = 0; i < np; i++) {
        pool_t *p = &pools[i];
        p->incomplete = (int64_t)p->n != p->slice_count;
        for (j = 0; j < p->n && !p->invalid; j++)
            for (k = 0; k < p->slices[j]->n_devices && !p->invalid; k++)
                for (a = j; a < p->n && !p->invalid; a++)
                    for (b = (a == j ? k + 1 : 0);
                         b < p->slices[a]->n_devices; b++)
                        if (str_eq(p->slices[j]->devices[k].name,
                                   p->slices[a]->devices[b].name)) {
                            p->invalid = 1;
                            break;
                        }
    }
    if (np > 1)
        qsort(pools, np, sizeof *pools, pool_cmp);
    *out = pools;
    *n_out = np;
    return 0;
}

/* --- the search's state ---------------------------------------------------- */

typedef struct cand {
    const dra_slice_t *slice;
    const dra_device_t *dev;
    dra_devid_t id;
    uint32_t pool;
} cand_t;

/* One request (no subrequests) or one subrequest. */
typedef struct rdata {
    const dra_exact_t *req;
    const char *parent;    /* the request's name for a subrequest */
    char *full_name;       /* "req/sub" (owned), or NULL */
    const dra_class_t *class;
    int num_devices;
    uint32_t *all;         /* allocationMode All: candidate indices */
    uint32_t n_all;
    int8_t *match;         /* per candidate: -1 unknown, 0, 1 */
} rdata_t;

typedef struct creq {
    uint32_t first; /* index of its first rdata */
    uint32_t n;     /* 1, or the number of subrequests */
    int has_subs;
    int selected;   /* the subrequest picked */
} creq_t;

typedef struct cstate {
    const dra_constraint_t *c;
    const ks_cel_attr_t *value;
    uint32_t num;
} cstate_t;

typedef struct picked {
    dra_devid_t id;
    uint32_t claim;
    const dra_device_t *dev;
    const dra_slice_t *slice;
    uint32_t rd;
} picked_t;

typedef struct alloc {
    scratch_t sc;
    const dra_alloc_in_t *in;
    pool_t *pools;
    uint32_t n_pools;
    cand_t *cands;
    uint32_t n_cands;
    rdata_t *rd;
    uint32_t n_rd;
    creq_t **creqs; /* per claim, per request */
    cstate_t **cons; /* per claim, per constraint */
    picked_t *picked; /* the devices of the attempt, in order */
    uint32_t n_picked, cap_picked;
    uint32_t *claim_devs; /* per claim: devices picked so far */
    uint64_t steps;
    char *err;
    size_t errlen;
} alloc_t;

enum { R_DONE = 1, R_NO = 0, R_ERR = -1, R_TIMEOUT = -2, R_NOMEM = -3,
       R_MAXSIZE = -4, R_NODE_FAILED = -5 };

#define CLAIM_NAME(a, ci) \
    (a)->in->claims[ci]->ns, (a)->in->claims[ci]->name

static const char *rd_name(const rdata_t *r)
{
    return r->full_name ? r->full_name : r->req->name;
}

/* --- selectors --------------------------------------------------------------- */

static int selectors_match(alloc_t *a, uint32_t ci, const dra_class_t *cls,
                           const dra_selector_t *sel, uint32_t n,
                           const cand_t *c)
{
    uint32_t i;
    char e[256];
    for (i = 0; i < n; i++) {
        ks_cel_result_t r;
        if (sel[i].prog == NULL) {
            if (cls != NULL)
                snprintf(a->err, a->errlen,
                         "class %s: selector #%u: CEL compile error: %s",
                         cls->name, i, sel[i].err ? sel[i].err : "");
            else
                snprintf(a->err, a->errlen,
                         "claim %s/%s: selector #%u: CEL compile error: %s",
                         CLAIM_NAME(a, ci), i, sel[i].err ? sel[i].err : "");
            return R_ERR;
        }
        e[0] = '\0';
        r = ks_cel_eval(sel[i].prog, &c->dev->cel, a->in->cel_cost_limit, e,
                        sizeof e);
        if (r == KS_CEL_ERROR) {
            if (cls != NULL)
                snprintf(a->err, a->errlen,
                         "class %s: selector #%u on device %s/%s/%s: CEL "
                         "runtime error: %s",
                         cls->name, i, c->id.driver, c->id.pool,
                         c->id.device, e);
            else
                snprintf(a->err, a->errlen,
                         "claim %s/%s: selector #%u on device %s/%s/%s: CEL "
                         "runtime error: %s",
                         CLAIM_NAME(a, ci), i, c->id.driver, c->id.pool,
                         c->id.device, e);
            return R_ERR;
        }
        if (r != KS_CEL_TRUE)
            return R_NO;
    }
    return R_DONE;
}

/* isSelectable: class selectors, then the request's; cached per request
 * and candidate. */
static int is_selectable(alloc_t *a, uint32_t ci, uint32_t ri, uint32_t k)
{
    rdata_t *r = &a->rd[ri];
    int rc;
    if (r->match[k] >= 0)
        return r->match[k];
    if (r->class != NULL) {
        rc = selectors_match(a, ci, r->class, r->class->selectors,
                             r->class->n_selectors, &a->cands[k]);
        if (rc < 0)
            return rc;
        if (rc == R_NO) {
            r->match[k] = 0;
            return R_NO;
        }
    }
    rc = selectors_match(a, ci, NULL, r->req->selectors, r->req->n_selectors,
                         &a->cands[k]);
    if (rc < 0)
        return rc;
    r->match[k] = (int8_t)(rc == R_DONE);
    return r->match[k];
}

/* --- in use ------------------------------------------------------------------ */

static int id_eq(dra_devid_t x, dra_devid_t y)
{
    return str_eq(x.device, y.device) && str_eq(x.pool, y.pool) &&
           str_eq(x.driver, y.driver);
}

static int device_in_use(const alloc_t *a, dra_devid_t id)
{
    uint32_t i;
    if (a->in->allocated != NULL && dra_devset_has(a->in->allocated, id))
        return 1;
    for (i = 0; i < a->n_picked; i++)
        if (id_eq(a->picked[i].id, id))
            return 1;
    return 0;
}

/* --- constraints -------------------------------------------------------------- */

static const ks_cel_attr_t *lookup_attr(const dra_device_t *d,
                                        const char *domain, const char *id)
{
    size_t i;
    for (i = 0; i < d->cel.n_attrs; i++)
        if (str_eq(d->cel.attrs[i].id, id) &&
            str_eq(d->cel.attrs[i].domain, domain))
            return &d->cel.attrs[i];
    return NULL;
}

static int constraint_applies(const dra_constraint_t *c, const char *req,
                              const char *full)
{
    uint32_t i;
    if (c->n_requests == 0)
        return 1;
    for (i = 0; i < c->n_requests; i++)
        if (str_eq(c->requests[i], req) ||
            (full != NULL && str_eq(c->requests[i], full)))
            return 1;
    return 0;
}

static int attr_equal(const ks_cel_attr_t *x, const ks_cel_attr_t *y)
{
    if (x->type != y->type)
        return 0;
    switch (x->type) {
    case KS_CEL_ATTR_INT:
        return x->i == y->i;
    case KS_CEL_ATTR_BOOL:
        return !x->b == !y->b;
    default: /* strings; versions are in their minimal form */
        return str_eq(x->s, y->s);
    }
}

static int constraint_add(cstate_t *s, const char *req, const char *full,
                          const dra_device_t *d)
{
    const ks_cel_attr_t *v;
    if (!constraint_applies(s->c, req, full))
        return 1;
    if (s->c->unknown)
        return 0;
    v = lookup_attr(d, s->c->attr_domain, s->c->attr_id);
    if (v == NULL)
        return 0;
    if (s->num == 0) {
        s->value = v;
        s->num = 1;
        return 1;
    }
    if (!attr_equal(v, s->value))
        return 0;
    s->num++;
    return 1;
}

static void constraint_remove(cstate_t *s, const char *req, const char *full)
{
    if (!constraint_applies(s->c, req, full))
        return;
    s->num--;
}

/* --- allocateDevice ----------------------------------------------------------- */

/* 1 allocated (undo with deallocate), 0 not usable, <0 error. */
static int allocate_device(alloc_t *a, uint32_t ci, uint32_t ri, uint32_t k,
                           int must)
{
    const dra_claim_t *claim = a->in->claims[ci];
    rdata_t *r = &a->rd[ri];
    const cand_t *c = &a->cands[k];
    const char *base = r->parent ? r->parent : r->req->name;
    const char *full = r->parent ? r->full_name : NULL;
    uint32_t i;
    if (device_in_use(a, c->id))
        return 0;
    for (i = 0; i < claim->n_constraints; i++)
        if (!constraint_add(&a->cons[ci][i], base, full, c->dev)) {
            uint32_t e;
            if (must) {
                snprintf(a->err, a->errlen,
                         "claim %s/%s, request %s: cannot add device "
                         "%s/%s/%s because a claim constraint would not be "
                         "satisfied",
                         claim->ns, claim->name, r->req->name, c->id.driver,
                         c->id.pool, c->id.device);
                for (e = 0; e < i; e++)
                    constraint_remove(&a->cons[ci][e], base, full);
                return R_ERR;
            }
            for (e = 0; e < i; e++)
                constraint_remove(&a->cons[ci][e], base, full);
            return 0;
        }
    if (a->n_picked == a->cap_picked)
        return R_NOMEM; /* cannot happen: at most 32 per claim */
    a->picked[a->n_picked].id = c->id;
    a->picked[a->n_picked].claim = ci;
    a->picked[a->n_picked].dev = c->dev;
    a->picked[a->n_picked].slice = c->slice;
    a->picked[a->n_picked].rd = ri;
    a->n_picked++;
    a->claim_devs[ci]++;
    return 1;
}

static void deallocate(alloc_t *a, uint32_t ci, uint32_t ri)
{
    const dra_claim_t *claim = a->in->claims[ci];
    rdata_t *r = &a->rd[ri];
    const char *base = r->parent ? r->parent : r->req->name;
    const char *full = r->parent ? r->full_name : NULL;
    uint32_t i;
    for (i = 0; i < claim->n_constraints; i++)
        constraint_remove(&a->cons[ci][i], base, full);
    a->n_picked--;
    a->claim_devs[ci]--;
}

/* --- allocateOne --------------------------------------------------------------- */

static int allocate_one(alloc_t *a, uint32_t ci, uint32_t qi, uint32_t si,
                        uint32_t di, int in_sub)
{
    const dra_claim_t *claim;
    creq_t *q;
    rdata_t *r;
    uint32_t ri, k;
    int rc;

    a->steps++;
    if (a->in->deadline_ms > 0 && (a->steps & 63) == 0 &&
        dra_now_ms() >= a->in->deadline_ms)
        return R_TIMEOUT;
    if (ci >= a->in->n_claims)
        return R_DONE;
    claim = a->in->claims[ci];
    if (qi >= claim->n_requests) {
        rc = allocate_one(a, ci + 1, 0, 0, 0, 0);
        return rc == R_MAXSIZE ? R_NO : rc;
    }
    q = &a->creqs[ci][qi];
    if (!in_sub && q->has_subs) {
        int all_exceeded = 1;
        for (k = 0; k < q->n; k++) {
            rc = allocate_one(a, ci, qi, k, di, 1);
            if (rc == R_MAXSIZE)
                continue;
            all_exceeded = 0;
            if (rc < 0)
                return rc;
            if (rc == R_DONE) {
                q->selected = (int)k;
                return R_DONE;
            }
        }
        return all_exceeded ? R_MAXSIZE : R_NO;
    }
    ri = q->first + (q->has_subs ? si : 0);
    r = &a->rd[ri];
    if (r->req->mode == DRA_MODE_ALL && r->n_all == 0)
        return R_NO;
    if ((int)di >= r->num_devices)
        return allocate_one(a, ci, qi + 1, 0, 0, 0);
    if ((int64_t)a->claim_devs[ci] + r->num_devices - (int64_t)di >
        DRA_RESULTS_MAX)
        return R_MAXSIZE;
    if (r->req->mode == DRA_MODE_ALL) {
        k = r->all[di];
        rc = allocate_device(a, ci, ri, k, 1);
        if (rc <= 0)
            return rc;
        rc = allocate_one(a, ci, qi, si, di + 1, in_sub);
        if (rc != R_DONE)
            deallocate(a, ci, ri);
        return rc;
    }
    for (k = 0; k < a->n_cands; k++) {
        const pool_t *p = &a->pools[a->cands[k].pool];
        if (p->incomplete || p->invalid)
            continue;
        if (device_in_use(a, a->cands[k].id))
            continue;
        rc = is_selectable(a, ci, ri, k);
        if (rc < 0)
            return rc;
        if (rc == R_NO)
            continue;
        rc = allocate_device(a, ci, ri, k, 0);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        rc = allocate_one(a, ci, qi, si, di + 1, in_sub);
        if (rc == R_DONE)
            return R_DONE;
        deallocate(a, ci, ri);
        if (rc < 0)
            return rc;
    }
    return R_NO;
}

/* --- setting up ------------------------------------------------------------------ */

static int validate(alloc_t *a, uint32_t ci, rdata_t *r, const char *parent)
{
    const dra_claim_t *claim = a->in->claims[ci];
    const dra_exact_t *req = r->req;
    uint32_t i, k;
    (void)parent;
    if (req->admin_access) {
        snprintf(a->err, a->errlen,
                 "claim %s/%s, request %s: admin access is requested, but "
                 "the feature is disabled",
                 claim->ns, claim->name, req->name);
        return R_ERR;
    }
    if (req->class_name == NULL || req->class_name[0] == '\0') {
        snprintf(a->err, a->errlen,
                 "claim %s/%s, request %s: missing device class name "
                 "(unsupported request type?)",
                 claim->ns, claim->name, req->name);
        return R_ERR;
    }
    r->class = a->in->class_get ? a->in->class_get(a->in->class_ud,
                                                   req->class_name)
                                : NULL;
    if (r->class == NULL) {
        snprintf(a->err, a->errlen,
                 "claim %s/%s, request %s: could not retrieve device class "
                 "%s: deviceclass.resource.k8s.io \"%s\" not found",
                 claim->ns, claim->name, req->name, req->class_name,
                 req->class_name);
        return R_ERR;
    }
    if ((r->match = sc_alloc(&a->sc, a->n_cands ? a->n_cands : 1)) == NULL)
        return R_NOMEM;
    memset(r->match, -1, a->n_cands ? a->n_cands : 1);
    switch (req->mode) {
    case DRA_MODE_EXACT:
        r->num_devices = req->count > DRA_RESULTS_MAX * 1000
                             ? DRA_RESULTS_MAX * 1000
                             : (int)req->count;
        return 0;
    case DRA_MODE_ALL:
        for (i = 0; i < a->n_pools; i++) {
            if (a->pools[i].incomplete) {
                snprintf(a->err, a->errlen,
                         "claim %s/%s, request %s: asks for all devices, but "
                         "resource pool %s/%s is currently being updated",
                         claim->ns, claim->name, req->name,
                         a->pools[i].driver, a->pools[i].name);
                return R_ERR;
            }
            if (a->pools[i].invalid) {
                snprintf(a->err, a->errlen,
                         "claim %s/%s, request %s: asks for all devices, but "
                         "resource pool %s/%s is currently invalid",
                         claim->ns, claim->name, req->name,
                         a->pools[i].driver, a->pools[i].name);
                return R_ERR;
            }
        }
        if ((r->all = sc_alloc(&a->sc, (a->n_cands ? a->n_cands : 1) *
                                           sizeof *r->all)) == NULL)
            return R_NOMEM;
        for (k = 0; k < a->n_cands; k++) {
            int rc = is_selectable(a, ci, (uint32_t)(r - a->rd), k);
            if (rc < 0)
                return rc;
            if (rc == R_DONE)
                r->all[r->n_all++] = k;
        }
        r->num_devices = (int)r->n_all;
        return 0;
    default:
        snprintf(a->err, a->errlen,
                 "claim %s/%s, request %s: unsupported count mode",
                 claim->ns, claim->name, req->name);
        return R_ERR;
    }
}

static void alloc_free(alloc_t *a)
{
    sc_free(&a->sc);
}

void dra_alloc_out_free(dra_alloc_out_t *out)
{
    uint32_t i, j;
    if (out == NULL || out->claims == NULL)
        return;
    for (i = 0; i < out->n_claims; i++) {
        dra_claim_alloc_t *c = &out->claims[i];
        for (j = 0; j < c->n_results; j++)
            free((char *)c->results[j].request);
        free(c->results);
        free(c->sub_index);
    }
    free(out->claims);
    out->claims = NULL;
    out->n_claims = 0;
}

static int build_out(alloc_t *a, dra_alloc_out_t *out)
{
    uint32_t ci, i, n;
    out->claims = calloc(a->in->n_claims ? a->in->n_claims : 1,
                         sizeof *out->claims);
    if (out->claims == NULL)
        return R_NOMEM;
    out->n_claims = a->in->n_claims;
    for (ci = 0; ci < a->in->n_claims; ci++) {
        dra_claim_alloc_t *c = &out->claims[ci];
        const dra_claim_t *claim = a->in->claims[ci];
        c->results = calloc(a->claim_devs[ci] ? a->claim_devs[ci] : 1,
                            sizeof *c->results);
        c->sub_index = calloc(claim->n_requests ? claim->n_requests : 1,
                              sizeof *c->sub_index);
        if (c->results == NULL || c->sub_index == NULL)
            return R_NOMEM;
        c->n_requests = claim->n_requests;
        for (i = 0; i < claim->n_requests; i++)
            c->sub_index[i] =
                a->creqs[ci][i].has_subs ? a->creqs[ci][i].selected : -1;
        for (i = 0, n = 0; i < a->n_picked; i++) {
            const picked_t *p = &a->picked[i];
            char *name;
            if (p->claim != ci)
                continue;
            if ((name = strdup(rd_name(&a->rd[p->rd]))) == NULL)
                return R_NOMEM;
            c->results[n].request = name;
            c->results[n].id = p->id;
            n++;
            if (p->slice->sel == DRA_SLICE_NODE_NAME ||
                p->slice->sel == DRA_SLICE_SELECTOR)
                c->node_local = 1;
            c->n_results = n;
        }
    }
    return R_DONE;
}

/* The request data and constraints of claim ci (the checks upstream's
 * Allocate makes before the search): 0, or an R_ code with err set. */
static int setup_claim(alloc_t *a, uint32_t ci, char *err, size_t errlen)
{
    uint32_t i, k;
    int rc = 0;
    const dra_claim_t *claim = a->in->claims[ci];
    int64_t min_devices = 0;
    a->creqs[ci] = sc_alloc(&a->sc, (claim->n_requests ? claim->n_requests
                                                     : 1) *
                                      sizeof **a->creqs);
    a->cons[ci] = sc_alloc(&a->sc, (claim->n_constraints
                                      ? claim->n_constraints
                                      : 1) *
                                     sizeof **a->cons);
    if (a->creqs[ci] == NULL || a->cons[ci] == NULL) {
        rc = R_NOMEM;
        return rc;
    }
    for (i = 0; i < claim->n_requests; i++) {
        const dra_request_t *q = &claim->requests[i];
        creq_t *cq = &a->creqs[ci][i];
        cq->first = a->n_rd;
        if (q->has_exactly) {
            rdata_t *r = &a->rd[a->n_rd++];
            cq->n = 1;
            r->req = &q->exactly;
            if ((rc = validate(a, ci, r, NULL)) != 0)
                return rc;
            min_devices += r->num_devices;
        } else {
            int64_t min_sub = INT64_MAX;
            cq->n = q->n_subs;
            cq->has_subs = 1;
            for (k = 0; k < q->n_subs; k++) {
                rdata_t *r = &a->rd[a->n_rd++];
                size_t len = strlen(q->name) + strlen(q->subs[k].name) + 2;
                r->req = &q->subs[k];
                r->parent = q->name;
                if ((r->full_name = sc_alloc(&a->sc, len)) == NULL) {
                    rc = R_NOMEM;
                    return rc;
                }
                snprintf(r->full_name, len, "%s/%s", q->name,
                         q->subs[k].name);
                if ((rc = validate(a, ci, r, q->name)) != 0)
                    return rc;
                if (r->num_devices < min_sub)
                    min_sub = r->num_devices;
            }
            if (q->n_subs == 0) {
                snprintf(err, errlen,
                         "claim %s/%s, request %s: unknown request type",
                         claim->ns, claim->name, q->name);
                rc = R_ERR;
                return rc;
            }
            min_devices += min_sub;
        }
    }
    if (min_devices > DRA_RESULTS_MAX) {
        snprintf(err, errlen,
                 "claim %s/%s: number of requested devices %lld exceeds "
                 "the claim limit of %d",
                 claim->ns, claim->name, (long long)min_devices,
                 DRA_RESULTS_MAX);
        rc = R_ERR;
        return rc;
    }
    for (i = 0; i < claim->n_constraints; i++) {
        if (claim->constraints[i].unknown) {
            snprintf(err, errlen,
                     "claim %s/%s, constraint #%u: empty constraint "
                     "(unsupported constraint type?)",
                     claim->ns, claim->name, i);
            rc = R_ERR;
            return rc;
        }
        a->cons[ci][i].c = &claim->constraints[i];
    }
    return 0;
}

int dra_allocate(const dra_alloc_in_t *in, dra_alloc_out_t *out, char *err,
                 size_t errlen)
{
    alloc_t a;
    uint32_t ci, i, j, k, n_rd = 0;
    int rc;
    a.sc.used = 0;
    a.sc.extra = NULL;
    a.sc.n_extra = a.sc.cap_extra = 0;
    a.sc.oom = 0;
    memset((char *)&a + sizeof a.sc, 0, sizeof a - sizeof a.sc);
    memset(out, 0, sizeof *out);
    a.in = in;
    a.err = err;
    a.errlen = errlen;
    if (errlen > 0)
        err[0] = '\0';
    if (gather_pools(&a.sc, in, &a.pools, &a.n_pools) != 0) {
        alloc_free(&a);
        snprintf(err, errlen, "out of memory");
        return DRA_ALLOC_NOMEM;
    }
    /* the candidates, in iteration order */
    for (i = 0; i < a.n_pools; i++)
        for (j = 0; j < a.pools[i].n; j++)
            a.n_cands += a.pools[i].slices[j]->n_devices;
    a.cands = sc_alloc(&a.sc, (a.n_cands ? a.n_cands : 1) * sizeof *a.cands);
    if (a.cands == NULL) {
        rc = R_NOMEM;
        goto done;
    }
    for (i = 0, a.n_cands = 0; i < a.n_pools; i++)
        for (j = 0; j < a.pools[i].n; j++) {
            const dra_slice_t *s = a.pools[i].slices[j];
            for (k = 0; k < s->n_devices; k++) {
                cand_t *c = &a.cands[a.n_cands++];
                c->slice = s;
                c->dev = &s->devices[k];
                c->id.driver = s->driver;
                c->id.pool = s->pool;
                c->id.device = s->devices[k].name;
                c->pool = i;
            }
        }
    for (ci = 0; ci < in->n_claims; ci++)
        for (i = 0; i < in->claims[ci]->n_requests; i++) {
            const dra_request_t *q = &in->claims[ci]->requests[i];
            n_rd += q->has_exactly ? 1 : q->n_subs;
        }
    {
        uint32_t nc = in->n_claims ? in->n_claims : 1;
        a.rd = sc_alloc(&a.sc, (n_rd ? n_rd : 1) * sizeof *a.rd);
        a.creqs = sc_alloc(&a.sc, nc * sizeof *a.creqs);
        a.cons = sc_alloc(&a.sc, nc * sizeof *a.cons);
        a.claim_devs = sc_alloc(&a.sc, nc * sizeof *a.claim_devs);
        a.cap_picked = nc * DRA_RESULTS_MAX;
        a.picked = sc_alloc(&a.sc, a.cap_picked * sizeof *a.picked);
    }
    if (a.rd == NULL || a.creqs == NULL || a.cons == NULL ||
        a.claim_devs == NULL || a.picked == NULL) {
        rc = R_NOMEM;
        goto done;
    }
    for (ci = 0; ci < in->n_claims; ci++)
        if ((rc = setup_claim(&a, ci, err, errlen)) != 0)
            goto done;
    rc = allocate_one(&a, 0, 0, 0, 0, 0);
    if (rc == R_DONE)
        rc = build_out(&a, out);
    else if (rc == R_NO || rc == R_MAXSIZE) {
        rc = R_NO;
        for (i = 0; i < a.n_pools; i++)
            if (a.pools[i].invalid) {
                snprintf(err, errlen,
                         "invalid resource pools were encountered");
                rc = R_NODE_FAILED;
                break;
            }
    }
done:
    out->steps = a.steps;
    alloc_free(&a);
    switch (rc) {
    case R_DONE:
        return DRA_ALLOC_OK;
    case R_NO:
        return DRA_ALLOC_NONE;
    case R_TIMEOUT:
        dra_alloc_out_free(out);
        return DRA_ALLOC_TIMEOUT;
    case R_NOMEM:
        dra_alloc_out_free(out);
        snprintf(err, errlen, "out of memory");
        return DRA_ALLOC_NOMEM;
    case R_NODE_FAILED:
        dra_alloc_out_free(out);
        return DRA_ALLOC_NODE_FAILED;
    default:
        dra_alloc_out_free(out);
        return DRA_ALLOC_ERROR;
    }
}
