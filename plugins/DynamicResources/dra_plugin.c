/*
 * DynamicResources (upstream v1.36, pkg/scheduler/framework/plugins/
 * dynamicresources), structured parameters: the descriptor, its args
 * (filterTimeout), PreEnqueue, PreFilter, Filter, PostFilter, Score,
 * Reserve/Unreserve and the QueueingHints. PreBind is in dra_prebind.c,
 * the allocator in dra_alloc.c.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_host.h"

static const ks_resource_ref_t dra_resources[] = {
    {DRA_GROUP, "v1", "resourceslices", "ResourceSlice"},
    {DRA_GROUP, "v1", "deviceclasses", "DeviceClass"},
    {DRA_GROUP, "v1", "resourceclaims", "ResourceClaim"},
    {DRA_GROUP, "v1", "resourceclaimtemplates", "ResourceClaimTemplate"},
};

/* --- args ------------------------------------------------------------------------ */

/* A Go duration ("10s", "1m30s", "500ms", "0") into ms; -1 when invalid. */
static int64_t parse_duration(const char *s)
{
    int64_t total = 0;
    if (strcmp(s, "0") == 0)
        return 0;
    if (*s == '\0')
        return -1;
    while (*s) {
        double v = 0, scale = 1;
        int digits = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s++ - '0');
            digits++;
        }
        if (*s == '.') {
            s++;
            while (isdigit((unsigned char)*s)) {
                scale /= 10;
                v += (*s++ - '0') * scale;
                digits++;
            }
        }
        if (digits == 0)
            return -1;
        if (strncmp(s, "ms", 2) == 0) {
            s += 2;
        } else if (*s == 's') {
            v *= 1000;
            s++;
        } else if (*s == 'm') {
            v *= 60000;
            s++;
        } else if (*s == 'h') {
            v *= 3600000;
            s++;
        } else {
            return -1;
        }
        total += (int64_t)v;
    }
    return total;
}

static int parse_args(dra_t *d, const ks_args_t *args, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"filterTimeout", "bindingTimeout",
                                       NULL};
    const ks_args_t *a;
    d->filter_timeout_ms = 10000; /* upstream's default */
    if (args == NULL)
        return 0;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    a = ks_args_get(args, "filterTimeout");
    if (a != NULL) {
        int64_t ms = a->kind == KS_ARGS_SCALAR && a->scalar
                         ? parse_duration(a->scalar)
                         : -1;
        if (ms < 0) {
            snprintf(err, errlen,
                     "line %u: filterTimeout: Invalid value: must be a "
                     "duration like \"10s\" (0 turns the timeout off), not "
                     "negative",
                     a->line);
            return -1;
        }
        d->filter_timeout_ms = ms;
    }
    return 0;
}

/* --- create, destroy --------------------------------------------------------------- */

static int dra_create(const ks_host_api_t *api, ks_handle_t *h,
                      const ks_args_t *args, void **self, char *err,
                      size_t errlen)
{
    dra_t *d;
    if (api->abi_minor < 5 || !KS_API_HAS(api, store_version)) {
        snprintf(err, errlen, "DynamicResources needs a host with ABI 1.5 "
                              "(a pod's spec.resourceClaims)");
        return -1;
    }
    if ((d = calloc(1, sizeof *d)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->api = api;
    d->h = h;
    if (parse_args(d, args, err, errlen) != 0) {
        free(d);
        return -1;
    }
    d->slices = api->store_get(h, DRA_GROUP, "v1", "resourceslices");
    d->classes = api->store_get(h, DRA_GROUP, "v1", "deviceclasses");
    d->claims = api->store_get(h, DRA_GROUP, "v1", "resourceclaims");
    d->templates =
        api->store_get(h, DRA_GROUP, "v1", "resourceclaimtemplates");
    if (!d->slices || !d->classes || !d->claims || !d->templates ||
        (d->assume = dra_assume_new()) == NULL) {
        snprintf(err, errlen, "the host has no store for a resource "
                              "DynamicResources declares");
        free(d);
        return -1;
    }
    *self = d;
    return 0;
}

/* The host has already cancelled this instance's requests and timers. */
static void dra_destroy(void *self)
{
    dra_t *d = self;
    if (d == NULL)
        return;
    dra_waits_free(d);
    dra_objects_free(d);
    dra_devset_free(&d->allocated);
    dra_assume_free(d->assume);
    free(d);
}

/* --- the pod's claims (foreachPodResourceClaim) ------------------------------------- */

/* The claim object of each pod claim into fn; 0, or -1 with the reason
 * (upstream's message) in msg. */
typedef int (*claim_fn)(dra_t *d, const ks_object_t *o, void *ud);

static int foreach_pod_claim(dra_t *d, const ks_pod_t *pod, claim_fn fn,
                             void *ud, char *msg, size_t len)
{
    uint32_t n = 0, i;
    const ks_pod_claim_t *pcs = ks_pod_resource_claims(d->api, pod, &n);
    for (i = 0; i < n; i++) {
        const ks_pod_claim_t *pc = &pcs[i];
        const char *name;
        int must_check_owner = 0;
        const ks_object_t *o;
        if (pc->claim_name[0] != '\0') {
            name = pc->claim_name;
        } else if (pc->template_name[0] != '\0') {
            if (!pc->has_status) {
                snprintf(msg, len,
                         "pod \"%s/%s\": ResourceClaim not created yet",
                         pod->ns, pod->name);
                return -1;
            }
            if (pc->status_claim_name[0] == '\0')
                continue; /* no claim needed */
            name = pc->status_claim_name;
            must_check_owner = 1;
        } else {
            snprintf(msg, len,
                     "pod \"%s/%s\", spec.resourceClaim \"%s\": API "
                     "unsupported (neither resourceClaimName nor "
                     "resourceClaimTemplateName)",
                     pod->ns, pod->name, pc->name);
            return -1;
        }
        o = d->api->object_get(d->claims, pod->ns, name);
        if (o == NULL) {
            snprintf(msg, len,
                     "resourceclaim.resource.k8s.io \"%s\" not found", name);
            return -1;
        }
        if (d->api->object_type(o, "metadata.deletionTimestamp") !=
            KS_FIELD_ABSENT) {
            snprintf(msg, len, "resourceclaim \"%s\" is being deleted", name);
            return -1;
        }
        if (must_check_owner) {
            /* resourceclaim.IsForPod: the controller owner is the pod */
            uint32_t k, nr = 0;
            int owned = 0;
            d->api->object_len(o, "metadata.ownerReferences", &nr);
            for (k = 0; k < nr && !owned; k++) {
                char p[96];
                int ctl = 0;
                snprintf(p, sizeof p, "metadata.ownerReferences[%u].controller",
                         k);
                if (d->api->object_bool(o, p, &ctl) != KS_FIELD_OK || !ctl)
                    continue;
                snprintf(p, sizeof p, "metadata.ownerReferences[%u].uid", k);
                owned = strcmp(dra_str(d, o, p), pod->uid) == 0;
            }
            if (!owned) {
                snprintf(msg, len,
                         "ResourceClaim %s/%s was not created for pod %s/%s "
                         "(pod is not owner)",
                         pod->ns, name, pod->ns, pod->name);
                return -1;
            }
        }
        if (fn != NULL && fn(d, o, ud) != 0) {
            snprintf(msg, len, "out of memory");
            return -1;
        }
    }
    return 0;
}

static ks_code_t dra_pre_enqueue(void *self, const ks_pod_t *pod,
                                 ks_status_t *st)
{
    dra_t *d = self;
    char msg[640];
    if (foreach_pod_claim(d, pod, NULL, NULL, msg, sizeof msg) != 0) {
        d->api->status_reason(st, msg);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* --- the cycle state ------------------------------------------------------------------ */

static dra_state_t dra_skip_state = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                     .skip = 1};

static void state_free(void *data)
{
    dra_state_t *s = data;
    uint32_t i;
    if (s == NULL || s == &dra_skip_state)
        return;
    for (i = 0; i < s->n_claims; i++)
        dra_entry_unref(s->claims[i]);
    for (i = 0; i < s->n_classes; i++)
        dra_entry_unref(s->classes[i]);
    for (i = 0; i < DRA_STATE_BUCKETS; i++) {
        dra_node_alloc_t *n = s->by_node[i], *next;
        for (; n != NULL; n = next) {
            next = n->next;
            dra_alloc_out_free(&n->out);
            free(n);
        }
    }
    free(s->claims);
    free(s->classes);
    free(s->allocated);
    free(s->assumed_node);
    free(s->to_alloc);
    free(s->unavailable);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

dra_state_t *dra_state_get(const dra_t *d, const ks_cycle_state_t *cs)
{
    return d->api->plugin_state_get(d->h, cs, KS_STATE_FILTER);
}

static uint32_t node_bucket(const char *node)
{
    return (uint32_t)(((uintptr_t)node >> 4) % DRA_STATE_BUCKETS);
}

/* Under s->mu (or after Filter). */
dra_node_alloc_t *dra_state_node(dra_state_t *s, const char *node)
{
    dra_node_alloc_t *n;
    uint32_t b;
    for (n = s->by_node[node_bucket(node)]; n != NULL; n = n->next)
        if (n->node == node)
            return n;
    for (b = 0; b < DRA_STATE_BUCKETS; b++)
        for (n = s->by_node[b]; n != NULL; n = n->next)
            if (strcmp(n->node, node) == 0)
                return n;
    return NULL;
}

typedef struct collect {
    dra_state_t *s;
    uint32_t cap;
} collect_t;

static int collect_claim(dra_t *d, const ks_object_t *o, void *ud)
{
    collect_t *c = ud;
    dra_entry_t *e = dra_claim_entry(d, o);
    if (e == NULL)
        return -1;
    if (c->s->n_claims == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 4;
        dra_entry_t **nv = realloc(c->s->claims, nc * sizeof *nv);
        if (nv == NULL)
            return -1;
        c->s->claims = nv;
        c->cap = nc;
    }
    dra_entry_ref(e);
    c->s->claims[c->s->n_claims++] = e;
    return 0;
}

static int reserved_for_pod(const dra_claim_t *c, const ks_pod_t *pod)
{
    uint32_t i;
    for (i = 0; i < c->n_reserved; i++)
        if (strcmp(c->reserved[i].uid, pod->uid) == 0)
            return 1;
    return 0;
}

static int add_class(dra_t *d, dra_state_t *s, const char *name)
{
    dra_entry_t *e;
    dra_entry_t **nv;
    uint32_t i;
    for (i = 0; i < s->n_classes; i++)
        if (s->classes[i]->u.cls.name == name ||
            strcmp(s->classes[i]->u.cls.name, name) == 0)
            return 1;
    if ((e = dra_class_entry(d, name)) == NULL)
        return 0;
    if ((nv = realloc(s->classes, (s->n_classes + 1) * sizeof *nv)) == NULL)
        return -1;
    s->classes = nv;
    dra_entry_ref(e);
    s->classes[s->n_classes++] = e;
    return 1;
}

static const dra_class_t *state_class(void *ud, const char *name)
{
    const dra_state_t *s = ud;
    uint32_t i;
    for (i = 0; i < s->n_classes; i++)
        if (s->classes[i]->u.cls.name == name ||
            strcmp(s->classes[i]->u.cls.name, name) == 0)
            return &s->classes[i]->u.cls;
    return NULL;
}

/* validateDeviceClass: 0 fine, 1 status set. */
static int validate_class(dra_t *d, dra_state_t *s, const char *cls,
                          const char *req, ks_status_t *st, ks_code_t *code)
{
    int rc;
    if (cls[0] == '\0') {
        d->api->status_reasonf(st, "request %s: unsupported request type",
                               req);
        *code = KS_ERROR;
        return 1;
    }
    rc = add_class(d, s, cls);
    if (rc < 0) {
        d->api->status_reason(st, "out of memory");
        *code = KS_ERROR;
        return 1;
    }
    if (rc == 0) {
        d->api->status_reasonf(st, "request %s: device class %s does not "
                                   "exist",
                               req, cls);
        *code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        return 1;
    }
    return 0;
}

static int gather_allocated(dra_t *d)
{
    uint32_t b, i;
    if (d->allocated_valid && d->allocated_claims_ver == d->ver_claims &&
        d->allocated_assume_ver == dra_assume_version(d->assume))
        return 0; /* nothing changed since */
    d->allocated_valid = 0;
    dra_devset_clear(&d->allocated);
    for (b = 0; b < DRA_BUCKETS; b++) {
        dra_entry_t *e;
        for (e = d->claim_cache.b[b]; e != NULL; e = e->next) {
            const dra_claim_t *c = &e->u.claim;
            if (!c->allocated)
                continue;
            for (i = 0; i < c->n_results; i++)
                if (dra_devset_add(&d->allocated, c->results[i].id) != 0)
                    return -1;
        }
    }
    if (dra_assume_devices(d->assume, &d->allocated) != 0)
        return -1;
    d->allocated_valid = 1;
    d->allocated_claims_ver = d->ver_claims;
    d->allocated_assume_ver = dra_assume_version(d->assume);
    return 0;
}

static ks_code_t dra_pre_filter(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                ks_prefilter_result_t *result,
                                ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s;
    collect_t col;
    uint32_t n = 0, i, k;
    char msg[640];
    ks_code_t code = KS_SUCCESS;
    (void)result;
    ks_pod_resource_claims(d->api, pod, &n);
    if (n == 0) {
        if (d->api->plugin_state_set(d->h, cs, KS_STATE_FILTER,
                                     &dra_skip_state, NULL, NULL) != 0) {
            d->api->status_reason(st, "cannot write cycle state");
            return KS_ERROR;
        }
        return KS_SKIP;
    }
    if (dra_refresh(d) != 0) {
        d->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    if ((s = calloc(1, sizeof *s)) == NULL) {
        d->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    pthread_mutex_init(&s->mu, NULL);
    col.s = s;
    col.cap = 0;
    if (foreach_pod_claim(d, pod, collect_claim, &col, msg, sizeof msg) !=
        0) {
        state_free(s);
        d->api->status_reason(st, msg);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (s->n_claims == 0) {
        state_free(s);
        if (d->api->plugin_state_set(d->h, cs, KS_STATE_FILTER,
                                     &dra_skip_state, NULL, NULL) != 0) {
            d->api->status_reason(st, "cannot write cycle state");
            return KS_ERROR;
        }
        return KS_SKIP;
    }
    s->allocated = calloc(s->n_claims, sizeof *s->allocated);
    s->assumed_node = calloc(s->n_claims, sizeof *s->assumed_node);
    s->to_alloc = calloc(s->n_claims, sizeof *s->to_alloc);
    s->unavailable = calloc(s->n_claims, sizeof *s->unavailable);
    if (!s->allocated || !s->assumed_node || !s->to_alloc ||
        !s->unavailable) {
        state_free(s);
        d->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    for (i = 0; i < s->n_claims && code == KS_SUCCESS; i++) {
        const dra_claim_t *c = &s->claims[i]->u.claim;
        const dra_assumed_t *as = dra_assume_get(d->assume, c->uid);
        if (c->allocated && c->n_reserved >= DRA_RESERVED_FOR_MAX &&
            !reserved_for_pod(c, pod)) {
            d->api->status_reason(st, "resourceclaim in use");
            code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            break;
        }
        if (c->allocated) {
            s->allocated[i] = 1;
            continue;
        }
        /* Upstream waits for the other pod's PreBind to write the claim
         * (its update event retries this pod). `ksched schedule` records
         * the write and no event follows: there the allocation in flight
         * counts as written, which is where the retry ends upstream. */
        if (as != NULL && as->pending &&
            d->api->api_mode(d->h) != KS_API_RECORD) {
            d->api->status_reasonf(st,
                                   "resource claim %s/%s is in the process "
                                   "of being allocated",
                                   c->ns, c->name);
            code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            break;
        }
        if (as != NULL) { /* written, the store has not caught up */
            s->allocated[i] = 1;
            s->assumed_node[i] = as->node_local ? as->node : NULL;
            continue;
        }
        s->to_alloc[s->n_to_alloc++] = c;
        for (k = 0; k < c->n_requests && code == KS_SUCCESS; k++) {
            const dra_request_t *r = &c->requests[k];
            uint32_t j;
            if (r->has_exactly) {
                validate_class(d, s, r->exactly.class_name, r->name, st,
                               &code);
            } else if (r->n_subs > 0) {
                for (j = 0; j < r->n_subs && code == KS_SUCCESS; j++) {
                    char q[300];
                    snprintf(q, sizeof q, "%s/%s", r->name, r->subs[j].name);
                    validate_class(d, s, r->subs[j].class_name, q, st,
                                   &code);
                }
            } else {
                d->api->status_reasonf(st,
                                       "resource claim %s/%s, request %s: "
                                       "unknown request type",
                                       c->ns, c->name, r->name);
                code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
        }
    }
    if (code == KS_SUCCESS && s->n_to_alloc > 0 && gather_allocated(d) != 0) {
        d->api->status_reason(st, "out of memory");
        code = KS_ERROR;
    }
    if (code != KS_SUCCESS) {
        state_free(s);
        return code;
    }
    if (d->api->plugin_state_set(d->h, cs, KS_STATE_FILTER, s, NULL,
                                 state_free) != 0) {
        state_free(s);
        d->api->status_reason(st, "cannot write cycle state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* --- Filter ---------------------------------------------------------------------------- */

static ks_code_t dra_filter_with_state(void *self, ks_cycle_state_t *cs,
                                       void *state, const ks_pod_t *pod,
                                       const ks_node_info_t *ni,
                                       ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = state;
    const ks_node_t *node;
    uint32_t i, n_unavail = 0;
    (void)cs;
    (void)pod;
    if (s == NULL) {
        d->api->status_reason(st, "reading \"DynamicResources\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    if (s->skip)
        return KS_SUCCESS;
    if ((node = ni->node) == NULL) {
        d->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    for (i = 0; i < s->n_claims; i++) {
        const dra_claim_t *c = &s->claims[i]->u.claim;
        int out = 0;
        if (!s->allocated[i])
            continue;
        if (c->allocated && c->has_nodesel)
            out = !dra_nodesel_matches(&c->nodesel, node->name,
                                       &node->labels);
        else if (!c->allocated && s->assumed_node[i] != NULL)
            out = strcmp(s->assumed_node[i], node->name) != 0;
        if (out) {
            /* several Filters at once: under the state's mutex */
            pthread_mutex_lock(&s->mu);
            s->unavailable[i] = 1;
            pthread_mutex_unlock(&s->mu);
            n_unavail++;
        }
    }
    if (s->n_to_alloc > 0) {
        dra_alloc_in_t in;
        dra_alloc_out_t out;
        dra_node_alloc_t *na;
        char err[1024];
        int rc;
        memset(&in, 0, sizeof in);
        memset(&out, 0, sizeof out);
        in.node_name = node->name;
        in.claims = s->to_alloc;
        in.n_claims = s->n_to_alloc;
        const dra_slice_t **sl = NULL;
        if (dra_node_slices(d, node, &sl, &in.n_slices) != 0) {
            d->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
        in.slices = sl;
        in.class_get = state_class;
        in.class_ud = s;
        in.allocated = &d->allocated;
        in.deadline_ms =
            d->filter_timeout_ms > 0 ? dra_now_ms() + d->filter_timeout_ms : 0;
        rc = dra_allocate(&in, &out, err, sizeof err);
        free((void *)in.slices);
        atomic_fetch_add(&d->node_evals, 1);
        atomic_fetch_add(&d->alloc_steps, out.steps);
        switch (rc) {
        case DRA_ALLOC_TIMEOUT:
            d->api->status_reason(st, "timed out trying to allocate devices");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        case DRA_ALLOC_NODE_FAILED: /* this node only */
            d->api->status_reason(st, err);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        case DRA_ALLOC_NOMEM:
            d->api->status_reason(st, "out of memory");
            return KS_ERROR;
        case DRA_ALLOC_ERROR:
            /* something wrong with a claim or class (a CEL error): upstream
             * aborts the cycle, and retries */
            d->api->status_reason(st, err);
            return KS_ERROR;
        case DRA_ALLOC_NONE:
            d->api->status_reason(st, "cannot allocate all claims");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        default:
            break;
        }
        if ((na = calloc(1, sizeof *na)) == NULL) {
            dra_alloc_out_free(&out);
            d->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
        na->node = node->name;
        na->out = out;
        pthread_mutex_lock(&s->mu);
        na->next = s->by_node[node_bucket(node->name)];
        s->by_node[node_bucket(node->name)] = na;
        pthread_mutex_unlock(&s->mu);
    }
    if (n_unavail > 0) {
        d->api->status_reason(st, "resourceclaim not available on the node");
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static ks_code_t dra_filter(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const ks_node_info_t *ni,
                            ks_status_t *st)
{
    dra_t *d = self;
    return dra_filter_with_state(self, cs, dra_state_get(d, cs), pod, ni, st);
}

/* --- PostFilter ------------------------------------------------------------------------ */

static void on_dealloc(void *ud, const ks_api_response_t *r)
{
    dra_t *d = ud;
    if (r->status < 200 || r->status >= 300)
        d->api->log(d->h, KS_LOG_WARN, "deallocating a ResourceClaim: %s",
                    r->message);
}

static ks_code_t dra_post_filter(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod,
                                 const ks_node_status_map_t *statuses,
                                 const char **nominated, ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    uint32_t i;
    (void)statuses;
    (void)nominated;
    if (s == NULL || s->skip || s->n_claims == 0) {
        d->api->status_reason(st, "no new claims to deallocate");
        return KS_UNSCHEDULABLE;
    }
    for (i = 0; i < s->n_claims; i++) {
        const dra_claim_t *c = &s->claims[i]->u.claim;
        dra_buf_t b = {0};
        ks_api_request_t req;
        char path[600];
        int rc;
        if (!s->unavailable[i] || !c->allocated)
            continue;
        if (!(c->n_reserved == 0 ||
              (c->n_reserved == 1 &&
               strcmp(c->reserved[0].uid, pod->uid) == 0)))
            continue;
        /* UpdateStatus without allocation and reservedFor */
        dra_buf_put(&b, "{\"metadata\":{\"uid\":");
        dra_buf_json(&b, c->uid);
        dra_buf_put(&b, ",\"resourceVersion\":");
        dra_buf_json(&b, c->rv);
        dra_buf_put(&b, "},\"status\":{\"allocation\":null,"
                        "\"reservedFor\":null,\"devices\":null}}");
        snprintf(path, sizeof path,
                 "/apis/" DRA_API "/namespaces/%s/resourceclaims/%s/status",
                 c->ns, c->name);
        memset(&req, 0, sizeof req);
        req.method = "PATCH";
        req.path = path;
        req.body = b.s;
        req.content_type = "application/merge-patch+json";
        rc = b.oom ? -1 : d->api->api_request(d->h, &req, on_dealloc, d, NULL);
        dra_buf_free(&b);
        if (rc != 0) {
            d->api->status_reasonf(st, "deallocating ResourceClaim %s/%s: "
                                       "the request could not be sent",
                                   c->ns, c->name);
            return KS_ERROR;
        }
        d->api->status_reason(st, "deallocation of ResourceClaim completed");
        return KS_UNSCHEDULABLE;
    }
    d->api->status_reason(st, "still not schedulable");
    return KS_UNSCHEDULABLE;
}

/* --- Score ------------------------------------------------------------------------------ */

/* Scores are all 0 unless a claim to allocate has a firstAvailable
 * request: PreScore skips Score then (the same result as upstream's Score,
 * which has no PreScore, without a call per node). */
static ks_code_t dra_pre_score(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               const ks_node_info_t *const *nodes, uint32_t n,
                               ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    uint32_t i, k;
    (void)pod;
    (void)nodes;
    (void)n;
    (void)st;
    if (s == NULL || s->skip)
        return KS_SKIP;
    for (i = 0; i < s->n_to_alloc; i++)
        for (k = 0; k < s->to_alloc[i]->n_requests; k++)
            if (!s->to_alloc[i]->requests[k].has_exactly)
                return KS_SUCCESS;
    return KS_SKIP;
}

/* computeScore: for each claim allocated here, each firstAvailable request
 * scores FirstAvailableDeviceRequestMaxSize minus the index of the
 * subrequest chosen. */
static ks_code_t dra_score(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           int64_t *score, ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    dra_node_alloc_t *na;
    uint32_t i, k;
    (void)pod;
    (void)st;
    *score = 0;
    if (s == NULL || s->skip || s->n_to_alloc == 0 || ni->node == NULL)
        return KS_SUCCESS;
    pthread_mutex_lock(&s->mu);
    na = dra_state_node(s, ni->node->name);
    pthread_mutex_unlock(&s->mu);
    if (na == NULL)
        return KS_SUCCESS;
    for (i = 0; i < na->out.n_claims; i++)
        for (k = 0; k < na->out.claims[i].n_requests; k++)
            if (na->out.claims[i].sub_index[k] >= 0)
                *score += DRA_FIRST_AVAILABLE_MAX -
                          na->out.claims[i].sub_index[k];
    return KS_SUCCESS;
}

static ks_code_t dra_normalize(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod, ks_node_score_t *scores,
                               uint32_t n, ks_status_t *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 0, scores, n);
    return KS_SUCCESS;
}

/* --- Reserve, Unreserve ------------------------------------------------------------------- */

static ks_code_t dra_reserve(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const char *node_name,
                             ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    dra_node_alloc_t *na;
    uint32_t i;
    (void)pod;
    if (s == NULL || s->skip || s->n_to_alloc == 0)
        return KS_SUCCESS;
    na = dra_state_node(s, node_name);
    if (na == NULL || na->out.n_claims == 0) {
        d->api->status_reason(st, "claim allocation not found for node");
        return KS_ERROR;
    }
    if (na->out.n_claims != s->n_to_alloc) {
        d->api->status_reasonf(st,
                               "internal error, have %u allocations, %u "
                               "claims to allocate, want %u claims",
                               na->out.n_claims, s->n_to_alloc,
                               s->n_to_alloc);
        return KS_ERROR;
    }
    for (i = 0; i < s->n_to_alloc; i++)
        if (dra_assume_put(d->assume, s->to_alloc[i], na->node,
                           &na->out.claims[i]) != 0) {
            d->api->status_reasonf(st,
                                   "internal error, couldn't signal "
                                   "allocation for claim %s",
                                   s->to_alloc[i]->name);
            return KS_ERROR;
        }
    s->reserved_node = na->node;
    /* the assume cache has the allocation: the per-node results are not
     * read any more (a pod's state lives until it is bound) */
    for (i = 0; i < DRA_STATE_BUCKETS; i++) {
        dra_node_alloc_t *n = s->by_node[i], *next;
        for (; n != NULL; n = next) {
            next = n->next;
            dra_alloc_out_free(&n->out);
            free(n);
        }
        s->by_node[i] = NULL;
    }
    return KS_SUCCESS;
}

static void on_unreserve(void *ud, const ks_api_response_t *r)
{
    dra_t *d = ud;
    if (r->status < 200 || r->status >= 300)
        d->api->log(d->h, KS_LOG_WARN, "unreserve: %s", r->message);
}

static void dra_unreserve(void *self, ks_cycle_state_t *cs,
                          const ks_pod_t *pod, const char *node_name)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    uint32_t i;
    (void)node_name;
    dra_wait_cancel(d, pod->uid);
    if (s == NULL || s->skip)
        return;
    for (i = 0; i < s->n_to_alloc; i++) {
        const dra_assumed_t *a = dra_assume_get(d->assume, s->to_alloc[i]->uid);
        if (a != NULL && a->pending)
            dra_assume_drop(d->assume, s->to_alloc[i]->uid);
    }
    s->reserved_node = NULL;
    /* A claim PreBind reserved for the pod (a later plugin failed): take
     * the pod out of reservedFor. Upstream sends a strategic merge patch
     * that deletes the entry by uid; the embedded API applies strategic
     * merge patches as merge patches, so this sends the list without the
     * pod, with the claim's resourceVersion as the precondition. */
    for (i = 0; i < s->n_claims; i++) {
        const dra_claim_t *c = &s->claims[i]->u.claim;
        const ks_object_t *o = d->api->object_get(d->claims, c->ns, c->name);
        int reserved = dra_assume_unreserved(d->assume, c->uid, pod->uid);
        uint32_t k, n = 0, kept = 0;
        char p[64];
        dra_buf_t b = {0};
        ks_api_request_t req;
        char path[600];
        if (o == NULL)
            continue;
        d->api->object_len(o, "status.reservedFor", &n);
        dra_buf_put(&b, "{\"metadata\":{\"uid\":");
        dra_buf_json(&b, c->uid);
        dra_buf_put(&b, ",\"resourceVersion\":");
        dra_buf_json(&b, dra_str(d, o, "metadata.resourceVersion"));
        dra_buf_put(&b, "},\"status\":{\"reservedFor\":[");
        for (k = 0; k < n; k++) {
            static const char *const f[] = {"resource", "name", "uid"};
            uint32_t j;
            snprintf(p, sizeof p, "status.reservedFor[%u].uid", k);
            if (strcmp(dra_str(d, o, p), pod->uid) == 0) {
                reserved = 1;
                continue;
            }
            dra_buf_put(&b, kept++ ? ",{" : "{");
            for (j = 0; j < 3; j++) {
                snprintf(p, sizeof p, "status.reservedFor[%u].%s", k, f[j]);
                dra_buf_printf(&b, "%s\"%s\":", j ? "," : "", f[j]);
                dra_buf_json(&b, dra_str(d, o, p));
            }
            dra_buf_put(&b, "}");
        }
        dra_buf_put(&b, "]}}");
        if (reserved && !b.oom) {
            snprintf(path, sizeof path,
                     "/apis/" DRA_API "/namespaces/%s/resourceclaims/%s/"
                     "status",
                     c->ns, c->name);
            memset(&req, 0, sizeof req);
            req.method = "PATCH";
            req.path = path;
            req.body = b.s;
            req.content_type = "application/merge-patch+json";
            if (d->api->api_request(d->h, &req, on_unreserve, d, NULL) != 0)
                d->api->log(d->h, KS_LOG_WARN,
                            "unreserve: claim %s/%s: the request could not "
                            "be sent",
                            c->ns, c->name);
        }
        dra_buf_free(&b);
    }
}

/* --- QueueingHints ------------------------------------------------------------------------- */

static int is_kind(const dra_t *d, const ks_object_t *o, const char *kind)
{
    return strcmp(dra_str(d, o, "kind"), kind) == 0 &&
           strcmp(dra_str(d, o, "apiVersion"), DRA_API) == 0;
}

typedef struct uses {
    const char *uid;
    int found;
} uses_t;

static int uses_claim(dra_t *d, const ks_object_t *o, void *ud)
{
    uses_t *u = ud;
    char buf[512];
    if (strcmp(dra_uid(d, o, buf, sizeof buf), u->uid) == 0)
        u->found = 1;
    return 0;
}

/* isSchedulableAfterClaimChange (claims); slices and classes: add and
 * update queue (registered without a hint upstream). */
static ks_queueing_hint_t dra_after_object(void *self, const ks_pod_t *pod,
                                           const void *old_obj,
                                           const void *new_obj)
{
    dra_t *d = self;
    const ks_object_t *old = old_obj, *n = new_obj;
    uses_t u;
    char msg[640];
    uint32_t np = 0;
    if (n == NULL)
        return KS_QUEUE_SKIP; /* deletes are not registered */
    if (is_kind(d, n, "ResourceSlice") || is_kind(d, n, "DeviceClass"))
        return KS_QUEUE;
    if (!is_kind(d, n, "ResourceClaim"))
        return KS_QUEUE_SKIP;
    ks_pod_resource_claims(d->api, pod, &np);
    char ubuf[512];
    u.uid = dra_uid(d, n, ubuf, sizeof ubuf);
    u.found = 0;
    if (foreach_pod_claim(d, pod, uses_claim, &u, msg, sizeof msg) != 0)
        return KS_QUEUE_SKIP;
    if (old != NULL &&
        d->api->object_type(old, "status.allocation") != KS_FIELD_ABSENT &&
        d->api->object_type(n, "status.allocation") == KS_FIELD_ABSENT)
        return KS_QUEUE; /* deallocated: devices freed */
    if (!u.found)
        return KS_QUEUE_SKIP;
    if (old == NULL)
        return KS_QUEUE;
    /* the status as before (apiequality.Semantic.DeepEqual): something
     * else changed, e.g. the driver added a finalizer */
    if (dra_field_equal(d, old, n, "status"))
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

/* isSchedulableAfterPodChange: the pod's own update that generated its
 * claims. */
static ks_queueing_hint_t dra_after_pod(void *self, const ks_pod_t *pod,
                                        const void *old_obj,
                                        const void *new_obj)
{
    dra_t *d = self;
    const ks_pod_t *np = new_obj;
    char msg[640];
    (void)old_obj;
    if (np == NULL || strcmp(np->uid, pod->uid) != 0)
        return KS_QUEUE_SKIP;
    if (foreach_pod_claim(d, np, NULL, NULL, msg, sizeof msg) != 0)
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

/* upstream's EventsToRegister: ResourceClaim add/update (hint), the pod's
 * own update (generated claims), DeviceClass and ResourceSlice add and
 * update (KS_RES_OBJECT: the hint tells them apart). */
static uint32_t dra_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE},
        {KS_RES_POD, KS_ACT_UPDATE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

static uint32_t dra_events_v2(void *self, ks_cluster_event_hint_t *out,
                              uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE}, dra_after_object},
        {{KS_RES_POD, KS_ACT_UPDATE}, dra_after_pod},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching: a pod with claims cannot be signed (each pod
 * gets its own devices); one without depends on nothing here. */
static ks_code_t dra_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    dra_t *d = self;
    uint32_t n = 0;
    ks_pod_resource_claims(d->api, pod, &n);
    if (n > 0)
        return KS_UNSCHEDULABLE;
    ks_sign_i64(sg, 0);
    return KS_SUCCESS;
}

KS_FILTER_NODES_FROM(dra_filter_nodes, dra_filter_with_state)

KS_PLUGIN_DEFINE("DynamicResources", "1.36.0-ks1",
    .create = dra_create,
    .destroy = dra_destroy,
    .pre_enqueue = dra_pre_enqueue,
    .pre_filter = dra_pre_filter,
    .filter = dra_filter,
    .filter_with_state = dra_filter_with_state,
    .filter_nodes = dra_filter_nodes,
    .post_filter = dra_post_filter,
    .pre_score = dra_pre_score,
    .score = dra_score,
    .normalize_score = dra_normalize,
    .reserve = dra_reserve,
    .unreserve = dra_unreserve,
    .pre_bind = dra_pre_bind,
    .events_to_register = dra_events,
    .events_to_register_v2 = dra_events_v2,
    .sign = dra_sign,
    .resources = dra_resources,
    .n_resources = 4);
