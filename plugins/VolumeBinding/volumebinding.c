/*
 * VolumeBinding (PreFilter, Filter, PreScore, Score, Reserve, Unreserve,
 * PreBind), as upstream v1.36: binds a pod's unbound
 * WaitForFirstConsumer PersistentVolumeClaims to the node chosen for it,
 * to a matching static PV or by asking for dynamic provisioning there
 * (the volume.kubernetes.io/selected-node annotation the external
 * provisioner waits for), and keeps pods off nodes their bound volumes
 * cannot reach.
 *
 * It reads claims, volumes, classes, CSINodes, CSIDrivers and
 * CSIStorageCapacities through the host's stores (SDK ABI 1.3) and
 * writes through the host's API requests, timers and waiting PreBind
 * (ABI 1.4).
 *
 *   PreFilter  sorts the claims: bound, unbound WaitForFirstConsumer
 *              ("delay"), unbound Immediate (the pod waits for the PV
 *              controller: UnschedulableAndUnresolvable); restricts the
 *              nodes to those local PVs name (GetEligibleNodes)
 *   Filter     matching.c, one node at a time; the node's decision kept
 *              in the cycle state for Reserve
 *   Score      StorageCapacityScoring (off by default, as upstream's
 *              feature gate in v1.36; args enableStorageCapacityScoring:
 *              true turns it on, shape then defaults to upstream's)
 *   Reserve    assumes the chosen PVs and claims (assume_cache.c)
 *   PreBind    prebind.c: writes, then waits for the PV controller
 *
 * Args (pluginConfig): bindTimeoutSeconds (default 600), shape (a list
 * of {utilization, score}; only with enableStorageCapacityScoring),
 * enableStorageCapacityScoring (default false; ksched has no feature
 * gates, this stands for upstream's StorageCapacityScoring gate).
 */
/* PreBind needs the host's API requests, timers and pre_bind_resume. */
#define KS_PLUGIN_MIN_ABI_MINOR 4

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb.h"

static const ks_resource_ref_t vb_resources[] = {
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode"},
    {"storage.k8s.io", "v1", "csidrivers", "CSIDriver"},
    {"storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"},
};

#define N_RESOURCES (sizeof vb_resources / sizeof vb_resources[0])

/* --- args --------------------------------------------------------------------- */

/* A create error at `at`'s position (when known); returns -1. */
static int args_err(char *err, size_t errlen, const ks_args_t *at,
                    const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int args_err(char *err, size_t errlen, const ks_args_t *at,
                    const char *fmt, ...)
{
    va_list ap;
    int n = 0;
    if (at != NULL)
        n = snprintf(err, errlen, "line %u, column %u: ", at->line,
                     at->column);
    if (n < 0 || (size_t)n >= errlen)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_bool(const ks_args_t *a, int *out)
{
    if (a == NULL || a->kind != KS_ARGS_SCALAR)
        return -1;
    if (strcmp(a->scalar, "true") == 0)
        *out = 1;
    else if (strcmp(a->scalar, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

/* upstream validateFunctionShape, scores scaled by MaxNodeScore / 10. */
static int parse_shape(vb_t *v, const ks_args_t *shape, char *err,
                       size_t errlen)
{
    static const char *const pkeys[] = {"utilization", "score", NULL};
    uint32_t i;
    if (shape->kind != KS_ARGS_SEQ || shape->n == 0)
        return args_err(err, errlen, shape,
                        "shape: Required value: at least one point must "
                        "be specified");
    if (shape->n > VB_MAX_SHAPE)
        return args_err(err, errlen, shape, "shape: at most %d points",
                        VB_MAX_SHAPE);
    for (i = 0; i < shape->n; i++) {
        const ks_args_t *p = shape->children[i], *u, *s;
        int64_t util = 0, score = 0;
        char what[64];
        if (p->kind != KS_ARGS_MAP)
            return args_err(err, errlen, p, "shape[%u]: must be a mapping",
                            i);
        if (ks_args_check_keys(p, pkeys, err, errlen) != 0)
            return -1;
        u = ks_args_get(p, "utilization");
        s = ks_args_get(p, "score");
        vb_pathf(what, sizeof what, "shape[%u].utilization", i);
        if (u != NULL && ks_args_int64(u, what, &util, err, errlen) != 0)
            return -1;
        if (i > 0 && v->shape[i - 1].utilization >= util)
            return args_err(err, errlen, u ? u : p,
                            "%s: Invalid value: %lld: %s", what,
                            (long long)util,
                            "values must be sorted in increasing order");
        if (util < 0 || util > 100)
            return args_err(err, errlen, u, "%s: Invalid value: %lld: %s",
                            what, (long long)util,
                            "not in valid range [0, 100]");
        vb_pathf(what, sizeof what, "shape[%u].score", i);
        if (s != NULL && ks_args_int64(s, what, &score, err, errlen) != 0)
            return -1;
        if (score < 0 || score > 10)
            return args_err(err, errlen, s, "%s: Invalid value: %lld: %s",
                            what, (long long)score,
                            "not in valid range [0, 10]");
        v->shape[i].utilization = util;
        v->shape[i].score = score * (KS_MAX_NODE_SCORE / 10);
    }
    v->n_shape = shape->n;
    return 0;
}

static int parse_args(vb_t *v, const ks_args_t *args, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"bindTimeoutSeconds", "shape",
                                       "enableStorageCapacityScoring", NULL};
    const ks_args_t *a;
    int64_t secs = 600;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    a = ks_args_get(args, "enableStorageCapacityScoring");
    if (a != NULL && parse_bool(a, &v->scoring) != 0)
        return args_err(err, errlen, a,
                        "enableStorageCapacityScoring must be true or "
                        "false");
    a = ks_args_get(args, "bindTimeoutSeconds");
    if (a != NULL) {
        if (ks_args_int64(a, "bindTimeoutSeconds", &secs, err, errlen) != 0)
            return -1;
        if (secs < 0)
            return args_err(err, errlen, a, "%s: Invalid value: %lld: %s",
                            "bindTimeoutSeconds", (long long)secs,
                            "invalid BindTimeoutSeconds, should not be a "
                            "negative value");
    }
    v->bind_timeout_ms = secs * 1000;
    a = ks_args_get(args, "shape");
    if (a != NULL && !v->scoring)
        return args_err(err, errlen, a,
                        "shape: Invalid value: unsupported when "
                        "`StorageCapacityScoring` feature is disabled "
                        "(enableStorageCapacityScoring: true turns it on)");
    if (a != NULL)
        return parse_shape(v, a, err, errlen);
    if (v->scoring) {
        /* upstream's default when the gate is on: more free space first */
        v->shape[0].utilization = 0;
        v->shape[0].score = 10 * (KS_MAX_NODE_SCORE / 10);
        v->shape[1].utilization = 100;
        v->shape[1].score = 0;
        v->n_shape = 2;
    }
    return 0;
}

/* --- create, destroy ---------------------------------------------------------- */

static int vb_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    vb_t *v;
    if (!KS_API_HAS(api, store_get) || !KS_API_HAS(api, object_map_iterate)) {
        vb_pathf(err, errlen, "this host has no cluster object stores "
                              "(ABI 1.3); VolumeBinding needs them");
        return -1;
    }
    v = calloc(1, sizeof *v);
    if (v == NULL) {
        vb_pathf(err, errlen, "out of memory");
        return -1;
    }
    v->api = api;
    v->h = h;
    if (parse_args(v, args, err, errlen) != 0) {
        free(v);
        return -1;
    }
    v->pvcs = api->store_get(h, "", "v1", "persistentvolumeclaims");
    v->pvs = api->store_get(h, "", "v1", "persistentvolumes");
    v->classes = api->store_get(h, "storage.k8s.io", "v1", "storageclasses");
    v->csinodes = api->store_get(h, "storage.k8s.io", "v1", "csinodes");
    v->csidrivers = api->store_get(h, "storage.k8s.io", "v1", "csidrivers");
    v->capacities =
        api->store_get(h, "storage.k8s.io", "v1", "csistoragecapacities");
    if (!v->pvcs || !v->pvs || !v->classes || !v->csinodes ||
        !v->csidrivers || !v->capacities) {
        vb_pathf(err, errlen, "the host has no store for a resource "
                              "VolumeBinding declares");
        free(v);
        return -1;
    }
    v->cache = vb_cache_new();
    if (v->cache == NULL) {
        vb_pathf(err, errlen, "out of memory");
        free(v);
        return -1;
    }
    v->pv_index = vb_pv_index_new(); /* NULL: Filter walks every PV */
    *self = v;
    return 0;
}

/* The host has already cancelled this instance's requests and timers. */
static void vb_destroy(void *self)
{
    vb_t *v = self;
    if (v == NULL)
        return;
    vb_waits_free(v);
    vb_cache_free(v->cache);
    vb_pv_index_free(v->pv_index);
    free(v);
}

/* --- the cycle state ---------------------------------------------------------- */

static void claims_free(vb_claim_t *c, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        free(c[i].ns);
        free(c[i].name);
        free(c[i].uid);
        free(c[i].rv);
        free(c[i].volume_name);
        free(c[i].class_name);
    }
    free(c);
}

static void state_free(void *data)
{
    vb_state_t *s = data;
    uint32_t b;
    if (s == NULL)
        return;
    for (b = 0; b < VB_BUCKETS; b++) {
        vb_pod_volumes_t *p = s->by_node[b], *n;
        for (; p; p = n) {
            n = p->next;
            vb_pod_volumes_free(p);
        }
    }
    claims_free(s->bound, s->n_bound);
    claims_free(s->delay, s->n_delay);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The state of every pod without claims: never written, never freed. */
static vb_state_t vb_skip_state = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                   .skip = 1};

static vb_state_t *state_new(void)
{
    vb_state_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

vb_state_t *vb_state_get(const vb_t *v, const ks_cycle_state_t *cs)
{
    return v->api->plugin_state_get(v->h, cs, KS_STATE_FILTER);
}

static uint32_t bucket(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % VB_BUCKETS;
}

vb_pod_volumes_t *vb_state_node(vb_state_t *s, const char *node)
{
    vb_pod_volumes_t *p;
    pthread_mutex_lock(&s->mu);
    for (p = s->by_node[bucket(node)]; p; p = p->next)
        if (ks_str_eq(p->node, node))
            break;
    pthread_mutex_unlock(&s->mu);
    return p;
}

/* Keep `pv` as the node's decision (Filter; any thread). */
static void state_put_node(vb_state_t *s, vb_pod_volumes_t *pv)
{
    vb_pod_volumes_t **pp;
    uint32_t b = bucket(pv->node);
    pthread_mutex_lock(&s->mu);
    for (pp = &s->by_node[b]; *pp; pp = &(*pp)->next)
        if (ks_str_eq((*pp)->node, pv->node)) {
            vb_pod_volumes_t *old = *pp;
            *pp = old->next;
            vb_pod_volumes_free(old);
            break;
        }
    pv->next = s->by_node[b];
    s->by_node[b] = pv;
    if (pv->n_statics > 0)
        s->has_static_bindings = 1;
    pthread_mutex_unlock(&s->mu);
}

/* --- PreFilter ------------------------------------------------------------------ */

static int claim_add(vb_claim_t **arr, uint32_t *n, const vb_t *v,
                     const ks_object_t *pvc)
{
    vb_claim_t *na = realloc(*arr, (*n + 1) * sizeof *na), *c;
    if (na == NULL)
        return -1;
    *arr = na;
    c = &na[*n];
    memset(c, 0, sizeof *c);
    (*n)++;
    c->ns = strdup(v->api->object_namespace(pvc));
    c->name = strdup(v->api->object_name(pvc));
    c->uid = strdup(v->api->object_uid(pvc));
    c->rv = strdup(vb_str(v, pvc, "metadata.resourceVersion"));
    c->volume_name = strdup(vb_str(v, pvc, "spec.volumeName"));
    c->class_name = strdup(vb_claim_class(v, pvc));
    c->has_request =
        vb_quantity(v, pvc, "spec.resources.requests.storage", &c->request);
    if (!c->has_request)
        c->request = 0;
    if (!c->ns || !c->name || !c->uid || !c->rv || !c->volume_name ||
        !c->class_name)
        return -1;
    return 0;
}

/* ephemeral.VolumeIsForPod: the pod controls the claim. */
static int claim_owned_by_pod(const vb_t *v, const ks_object_t *pvc,
                              const ks_pod_t *pod)
{
    uint32_t n = 0, i;
    char p[96];
    if (strcmp(v->api->object_namespace(pvc), pod->ns) != 0)
        return 0;
    (void)v->api->object_len(pvc, "metadata.ownerReferences", &n);
    for (i = 0; i < n; i++) {
        int ctl = 0;
        vb_pathf(p, sizeof p, "metadata.ownerReferences[%u].controller", i);
        if (v->api->object_bool(pvc, p, &ctl) != KS_FIELD_OK || !ctl)
            continue;
        vb_pathf(p, sizeof p, "metadata.ownerReferences[%u].uid", i);
        return strcmp(vb_str(v, pvc, p), pod->uid) == 0;
    }
    return 0;
}

/* podHasPVCs: 1 when the pod uses claims, 0 when none, -1 with the
 * reason in st. */
static int pod_has_pvcs(const vb_t *v, const ks_pod_t *pod, ks_status_t *st)
{
    uint32_t i;
    int has = 0;
    char q[600], q2[600];
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *vol = &pod->volumes[i];
        const ks_object_t *pvc;
        int eph = vol->source == KS_VOLUME_EPHEMERAL;
        if (vol->source != KS_VOLUME_PVC && !eph)
            continue;
        has = 1;
        pvc = v->api->object_get(v->pvcs, pod->ns, vol->claim_name);
        if (pvc == NULL) {
            vb_quote(q, sizeof q, vol->claim_name);
            if (eph)
                v->api->status_reasonf(st,
                                       "waiting for ephemeral volume "
                                       "controller to create the "
                                       "persistentvolumeclaim %s",
                                       q);
            else
                v->api->status_reasonf(st, "persistentvolumeclaim %s not found",
                                       q);
            return -1;
        }
        if (strcmp(vb_str(v, pvc, "status.phase"), "Lost") == 0) {
            v->api->status_reasonf(
                st,
                "persistentvolumeclaim %s bound to non-existent "
                "persistentvolume %s",
                vb_quote(q, sizeof q, v->api->object_name(pvc)),
                vb_quote(q2, sizeof q2, vb_str(v, pvc, "spec.volumeName")));
            return -1;
        }
        if (vb_has(v, pvc, "metadata.deletionTimestamp")) {
            v->api->status_reasonf(
                st, "persistentvolumeclaim %s is being deleted",
                vb_quote(q, sizeof q, v->api->object_name(pvc)));
            return -1;
        }
        if (eph && !claim_owned_by_pod(v, pvc, pod)) {
            v->api->status_reasonf(st,
                                   "PVC %s/%s was not created for pod %s/%s "
                                   "(pod is not owner)",
                                   v->api->object_namespace(pvc),
                                   v->api->object_name(pvc), pod->ns,
                                   pod->name);
            return -1;
        }
    }
    return has;
}

/* A set of node names (GetEligibleNodes). */
typedef struct names {
    char **v;
    uint32_t n;
    int set; /* 0: nil (no local PV seen yet) */
} names_t;

static void names_free(names_t *s)
{
    uint32_t i;
    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static int names_has(const names_t *s, const char *x)
{
    uint32_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return 1;
    return 0;
}

static int names_add(names_t *s, const char *x)
{
    char **nv;
    if (names_has(s, x))
        return 0;
    nv = realloc(s->v, (s->n + 1) * sizeof *nv);
    if (nv == NULL)
        return -1;
    s->v = nv;
    if ((s->v[s->n] = strdup(x)) == NULL)
        return -1;
    s->n++;
    return 0;
}

/* Keep in `s` only the names also in `o`. */
static void names_intersect(names_t *s, const names_t *o)
{
    uint32_t i, w = 0;
    for (i = 0; i < s->n; i++) {
        if (names_has(o, s->v[i]))
            s->v[w++] = s->v[i];
        else
            free(s->v[i]);
    }
    s->n = w;
}

/* GetLocalPersistentVolumeNodeNames: per term, the intersection of its
 * kubernetes.io/hostname In values; the union over terms. */
static int local_pv_nodes(const vb_t *v, const ks_object_t *pv, names_t *out)
{
    const char *base = "spec.nodeAffinity.required.nodeSelectorTerms";
    char p[512];
    uint32_t nt = 0, t, e, k;
    (void)v->api->object_len(pv, base, &nt);
    for (t = 0; t < nt; t++) {
        names_t term = {NULL, 0, 0};
        uint32_t ne = 0;
        vb_pathf(p, sizeof p, "%s[%u].matchExpressions", base, t);
        (void)v->api->object_len(pv, p, &ne);
        for (e = 0; e < ne; e++) {
            names_t vals = {NULL, 0, 1};
            uint32_t nv = 0;
            char ep[600], xp[700];
            vb_pathf(ep, sizeof ep, "%s[%u]", p, e);
            vb_pathf(xp, sizeof xp, "%s.key", ep);
            if (strcmp(vb_str(v, pv, xp), LABEL_HOSTNAME) != 0)
                continue;
            vb_pathf(xp, sizeof xp, "%s.operator", ep);
            if (strcmp(vb_str(v, pv, xp), "In") != 0)
                continue;
            vb_pathf(xp, sizeof xp, "%s.values", ep);
            (void)v->api->object_len(pv, xp, &nv);
            for (k = 0; k < nv; k++) {
                char vp[720];
                vb_pathf(vp, sizeof vp, "%s[%u]", xp, k);
                if (names_add(&vals, vb_str(v, pv, vp)) != 0) {
                    names_free(&vals);
                    names_free(&term);
                    return -1;
                }
            }
            if (!term.set) {
                term = vals;
                term.set = 1;
            } else {
                names_intersect(&term, &vals);
                names_free(&vals);
            }
        }
        for (k = 0; k < term.n; k++)
            if (names_add(out, term.v[k]) != 0) {
                names_free(&term);
                return -1;
            }
        names_free(&term);
    }
    return 0;
}

/* GetEligibleNodes into the PreFilter result. */
static int eligible_nodes(const vb_t *v, const vb_state_t *s,
                          ks_prefilter_result_t *result)
{
    names_t el = {NULL, 0, 0};
    uint32_t i;
    for (i = 0; i < s->n_bound; i++) {
        names_t pvn = {NULL, 0, 1};
        const ks_object_t *pv =
            v->api->object_get(v->pvs, NULL, s->bound[i].volume_name);
        if (pv == NULL)
            continue;
        if (local_pv_nodes(v, pv, &pvn) != 0) {
            names_free(&pvn);
            names_free(&el);
            return -1;
        }
        if (pvn.n == 0) {
            names_free(&pvn);
            continue;
        }
        if (!el.set) {
            el = pvn;
            el.set = 1;
        } else {
            names_intersect(&el, &pvn);
            names_free(&pvn);
        }
    }
    if (el.set && result != NULL) {
        v->api->prefilter_result_set_none(result);
        for (i = 0; i < el.n; i++)
            v->api->prefilter_result_add_node(result,
                                              v->api->intern(v->h, el.v[i]));
    }
    names_free(&el);
    return 0;
}

static ks_code_t vb_pre_filter(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               ks_prefilter_result_t *result, ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s;
    uint32_t i, immediate = 0;
    char q[600];
    int has;
    vb_cache_prune(v);
    has = pod_has_pvcs(v, pod, st);
    if (has < 0)
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    if (has == 0) {
        /* Upstream writes an empty state: one shared, read-only one here
         * (most pods have no claims; a state of their own is 2 KiB). */
        if (v->api->plugin_state_set(v->h, cs, KS_STATE_FILTER,
                                     (void *)&vb_skip_state, NULL,
                                     NULL) != 0) {
            v->api->status_reason(st, "cannot write cycle state");
            return KS_ERROR;
        }
        return KS_SKIP;
    }
    s = state_new();
    if (s == NULL)
        goto oom;
    /* GetPodVolumeClaims */
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *vol = &pod->volumes[i];
        const ks_object_t *pvc, *sc;
        const char *cls, *mode;
        int delay = 0;
        if (vol->source != KS_VOLUME_PVC && vol->source != KS_VOLUME_EPHEMERAL)
            continue;
        pvc = v->api->object_get(v->pvcs, pod->ns, vol->claim_name);
        if (pvc == NULL) { /* checked above; cannot happen in a callback */
            char key[600];
            vb_pathf(key, sizeof key, "%s/%s", pod->ns, vol->claim_name);
            v->api->status_reasonf(st, "error getting PVC %s",
                                   vb_quote(q, sizeof q, key));
            state_free(s);
            return KS_ERROR;
        }
        if (vb_claim_fully_bound(v, pvc)) {
            if (claim_add(&s->bound, &s->n_bound, v, pvc) != 0)
                goto oom_state;
            continue;
        }
        /* IsDelayBindingMode */
        cls = vb_claim_class(v, pvc);
        sc = cls[0] ? v->api->object_get(v->classes, NULL, cls) : NULL;
        if (sc != NULL) {
            mode = vb_str(v, sc, "volumeBindingMode");
            if (mode[0] == '\0') {
                v->api->status_reasonf(
                    st, "VolumeBindingMode not set for StorageClass %s",
                    vb_quote(q, sizeof q, cls));
                state_free(s);
                return KS_ERROR;
            }
            delay = strcmp(mode, "WaitForFirstConsumer") == 0;
        }
        if (delay && vb_str(v, pvc, "spec.volumeName")[0] == '\0') {
            if (claim_add(&s->delay, &s->n_delay, v, pvc) != 0)
                goto oom_state;
        } else {
            immediate++; /* the PV controller binds it, or pre-bound */
        }
    }
    if (immediate > 0) {
        state_free(s);
        v->api->status_reason(st, ERR_UNBOUND_IMMEDIATE);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (eligible_nodes(v, s, result) != 0)
        goto oom_state;
    if (v->api->plugin_state_set(v->h, cs, KS_STATE_FILTER, s, NULL,
                                 state_free) != 0) {
        state_free(s);
        v->api->status_reason(st, "cannot write cycle state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
oom_state:
    state_free(s);
oom:
    v->api->status_reason(st, "out of memory");
    return KS_ERROR;
}

/* --- Filter ----------------------------------------------------------------------- */

static inline ks_code_t vb_filter_with_state(void *self, ks_cycle_state_t *cs,
                                             void *state, const ks_pod_t *pod,
                                             const ks_node_info_t *ni,
                                             ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s = state;
    vb_pod_volumes_t *res = NULL;
    ks_code_t c;
    (void)cs;
    if (s == NULL) {
        v->api->status_reason(st, "reading \"VolumeBinding\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    if (s->skip)
        return KS_SUCCESS;
    if (ni->node == NULL) {
        v->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    c = vb_find_pod_volumes(v, s, pod, ni->node, &res, st);
    if (c != KS_SUCCESS)
        return c;
    state_put_node(s, res);
    return KS_SUCCESS;
}

static ks_code_t vb_filter(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           ks_status_t *st)
{
    vb_t *v = self;
    return vb_filter_with_state(self, cs, vb_state_get(v, cs), pod, ni, st);
}

KS_FILTER_NODES_FROM(vb_filter_nodes, vb_filter_with_state)

/* --- PreScore, Score (StorageCapacityScoring) ------------------------------------ */

static ks_code_t vb_pre_score(void *self, ks_cycle_state_t *cs,
                              const ks_pod_t *pod,
                              const ks_node_info_t *const *nodes, uint32_t n,
                              ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s;
    (void)pod;
    (void)nodes;
    (void)n;
    if (!v->scoring)
        return KS_SKIP; /* no scorer: the gate is off */
    s = vb_state_get(v, cs);
    if (s == NULL) {
        v->api->status_reason(st, "reading \"VolumeBinding\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* helper.BuildBrokenLinearFunction */
static int64_t broken_linear(const vb_t *v, int64_t p)
{
    uint32_t i;
    for (i = 0; i < v->n_shape; i++)
        if (p <= v->shape[i].utilization) {
            if (i == 0)
                return v->shape[0].score;
            return v->shape[i - 1].score +
                   (v->shape[i].score - v->shape[i - 1].score) *
                       (p - v->shape[i - 1].utilization) /
                       (v->shape[i].utilization - v->shape[i - 1].utilization);
        }
    return v->shape[v->n_shape - 1].score;
}

typedef struct class_res {
    const char *cls;
    int64_t requested, capacity;
} class_res_t;

static ks_code_t vb_score(void *self, ks_cycle_state_t *cs,
                          const ks_pod_t *pod, const ks_node_info_t *ni,
                          int64_t *score, ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s;
    vb_pod_volumes_t *pv;
    class_res_t *cr;
    uint32_t n = 0, i, k, cap;
    int64_t sum = 0;
    (void)pod;
    *score = 0;
    if (!v->scoring || v->n_shape == 0)
        return KS_SUCCESS;
    s = vb_state_get(v, cs);
    if (s == NULL) {
        v->api->status_reason(st, "reading \"VolumeBinding\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    if (s->skip || ni->node == NULL ||
        (pv = vb_state_node(s, ni->node->name)) == NULL)
        return KS_SUCCESS;
    cap = pv->n_statics + pv->n_provs + 1;
    cr = calloc(cap, sizeof *cr);
    if (cr == NULL) {
        v->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    if (pv->n_statics != 0 || !v->scoring) {
        for (i = 0; i < pv->n_statics; i++) {
            const vb_static_t *b = &pv->statics[i];
            for (k = 0; k < n && strcmp(cr[k].cls, b->pv_class) != 0; k++)
                ;
            if (k == n)
                cr[n++].cls = b->pv_class;
            cr[k].requested += b->request;
            cr[k].capacity += b->capacity;
        }
    } else {
        for (i = 0; i < pv->n_provs; i++) {
            const vb_provision_t *p = &pv->provs[i];
            const vb_claim_t *c = &s->delay[p->claim];
            if (!p->has_capacity)
                continue;
            for (k = 0; k < n && strcmp(cr[k].cls, c->class_name) != 0; k++)
                ;
            if (k == n) {
                cr[n].cls = c->class_name;
                cr[n++].capacity = p->capacity;
            }
            cr[k].requested += c->request;
        }
    }
    for (k = 0; k < n; k++) {
        int64_t req = cr[k].requested, c = cr[k].capacity;
        sum += c == 0 || req > c ? broken_linear(v, 100)
                                 : broken_linear(v, req * 100 / c);
    }
    free(cr);
    if (n > 0)
        *score = (int64_t)llround((double)sum / (double)n);
    return KS_SUCCESS;
}

/* --- Reserve, Unreserve ------------------------------------------------------------ */

void vb_revert(vb_t *v, const vb_state_t *s, const vb_pod_volumes_t *pv)
{
    uint32_t i;
    for (i = 0; i < pv->n_statics; i++)
        vb_restore_pv(v, pv->statics[i].pv);
    for (i = 0; i < pv->n_provs; i++)
        vb_restore_pvc(v, s->delay[pv->provs[i].claim].ns,
                       s->delay[pv->provs[i].claim].name);
}

static ks_code_t vb_reserve(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const char *node_name,
                            ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s = vb_state_get(v, cs);
    vb_pod_volumes_t *pv;
    char err[1024], q[600];
    uint32_t i;
    if (s == NULL) {
        v->api->status_reason(st, "reading \"VolumeBinding\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    if (s->skip)
        return KS_SUCCESS; /* no claims (the shared state stays as is) */
    pv = vb_state_node(s, node_name);
    if (pv == NULL) {
        s->all_bound = 1; /* no claims */
        return KS_SUCCESS;
    }
    if (vb_pod_volumes_bound(v, pod)) {
        s->all_bound = 1;
        return KS_SUCCESS;
    }
    for (i = 0; i < pv->n_statics; i++) {
        vb_static_t *b = &pv->statics[i];
        const vb_claim_t *c = &s->delay[b->claim];
        const ks_object_t *o = v->api->object_get(v->pvs, NULL, b->pv);
        vb_claim_ref_t ref;
        int should_set, dirty, bbc;
        if (o == NULL) {
            vb_pathf(err, sizeof err,
                     "could not find v1.PersistentVolume %s",
                     vb_quote(q, sizeof q, b->pv));
            goto fail;
        }
        /* GetBindVolumeToClaim */
        vb_pv_claim_ref(v, o, &ref);
        should_set = !(ref.present && strcmp(ref.name, c->name) == 0 &&
                       strcmp(ref.ns, c->ns) == 0 &&
                       (ref.uid[0] == '\0' || strcmp(ref.uid, c->uid) == 0));
        dirty = !ref.present || strcmp(ref.name, c->name) != 0 ||
                strcmp(ref.ns, c->ns) != 0 || strcmp(ref.uid, c->uid) != 0;
        bbc = vb_pv_bound_by_controller(v, o);
        b->set_bound_by_controller = should_set && !bbc;
        if (b->set_bound_by_controller)
            dirty = 1;
        if (dirty &&
            vb_assume_pv(v, o, vb_rv_text(b->pv_rv), c->ns, c->name, c->uid,
                         bbc || b->set_bound_by_controller, err,
                         sizeof err) != 0)
            goto fail;
    }
    for (i = 0; i < pv->n_provs; i++) {
        const vb_claim_t *c = &s->delay[pv->provs[i].claim];
        const ks_object_t *o = v->api->object_get(v->pvcs, c->ns, c->name);
        if (o == NULL) {
            char key[600];
            vb_pathf(key, sizeof key, "%s/%s", c->ns, c->name);
            vb_pathf(err, sizeof err,
                     "could not find v1.PersistentVolumeClaim %s",
                     vb_quote(q, sizeof q, key));
            goto fail;
        }
        if (vb_assume_pvc(v, o, vb_rv_text(c->rv), node_name, err,
                          sizeof err) != 0)
            goto fail;
    }
    s->all_bound = 0;
    return KS_SUCCESS;
fail:
    vb_revert(v, s, pv);
    v->api->status_reason(st, err);
    return KS_ERROR;
}

static void vb_unreserve(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const char *node_name)
{
    vb_t *v = self;
    vb_state_t *s = vb_state_get(v, cs);
    vb_pod_volumes_t *pv;
    vb_wait_cancel(v, pod->uid);
    if (s == NULL || s->skip)
        return;
    pv = vb_state_node(s, node_name);
    if (pv != NULL)
        vb_revert(v, s, pv);
}

/* --- QueueingHints ------------------------------------------------------------------ */

static int is_kind(const vb_t *v, const ks_object_t *o, const char *api_version,
                   const char *kind)
{
    return strcmp(vb_str(v, o, "kind"), kind) == 0 &&
           strcmp(vb_str(v, o, "apiVersion"), api_version) == 0;
}

/* volumeLimit of a CSIStorageCapacity: 1 with *out, 0 when none. */
static int volume_limit(const vb_t *v, const ks_object_t *c, int64_t *out)
{
    if (vb_has(v, c, "maximumVolumeSize"))
        return vb_quantity(v, c, "maximumVolumeSize", out);
    return vb_quantity(v, c, "capacity", out);
}

static ks_queueing_hint_t vb_after_object(void *self, const ks_pod_t *pod,
                                          const void *old_obj,
                                          const void *new_obj)
{
    const vb_t *v = self;
    const ks_object_t *old = old_obj, *n = new_obj;
    uint32_t i;
    if (n == NULL)
        return KS_QUEUE_SKIP; /* deletes are not registered */
    if (is_kind(v, n, "v1", "PersistentVolumeClaim")) {
        /* isSchedulableAfterPersistentVolumeClaimChange */
        if (strcmp(v->api->object_namespace(n), pod->ns) != 0)
            return KS_QUEUE_SKIP;
        for (i = 0; i < pod->n_volumes; i++)
            if ((pod->volumes[i].source == KS_VOLUME_PVC ||
                 pod->volumes[i].source == KS_VOLUME_EPHEMERAL) &&
                strcmp(pod->volumes[i].claim_name,
                       v->api->object_name(n)) == 0)
                return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (is_kind(v, n, "v1", "PersistentVolume"))
        return KS_QUEUE; /* registered without a hint */
    if (is_kind(v, n, "storage.k8s.io/v1", "StorageClass"))
        /* a new class, or new allowedTopologies */
        return old == NULL || !vb_field_equal(v, old, n, "allowedTopologies")
                   ? KS_QUEUE
                   : KS_QUEUE_SKIP;
    if (is_kind(v, n, "storage.k8s.io/v1", "CSINode")) {
        const char *a, *b;
        if (old == NULL)
            return KS_QUEUE;
        a = vb_annotation(v, old, ANN_MIGRATED_PLUGINS);
        b = vb_annotation(v, n, ANN_MIGRATED_PLUGINS);
        return strcmp(a ? a : "", b ? b : "") != 0 ? KS_QUEUE
                                                    : KS_QUEUE_SKIP;
    }
    if (is_kind(v, n, "storage.k8s.io/v1", "CSIStorageCapacity")) {
        int64_t lo = 0, ln = 0;
        int ho, hn;
        if (old == NULL)
            return KS_QUEUE;
        ho = volume_limit(v, old, &lo);
        hn = volume_limit(v, n, &ln);
        return hn && (!ho || ln > lo) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (is_kind(v, n, "storage.k8s.io/v1", "CSIDriver"))
        /* upstream queues only pods with inline CSI volumes of the
         * driver whose storageCapacity was turned off; ksched's pods
         * carry no inline CSI volumes (and adds are not registered) */
        return KS_QUEUE_SKIP;
    return KS_QUEUE_SKIP; /* another plugin's resource */
}

/* upstream's EventsToRegister with QueueingHints on: Node add and label
 * update; PVC, PV, StorageClass, CSINode, CSIStorageCapacity add and
 * update, CSIDriver update (KS_RES_OBJECT: the hint tells them apart). */
static uint32_t vb_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
        {KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

static uint32_t vb_events_v2(void *self, ks_cluster_event_hint_t *out,
                             uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, NULL},
        {{KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE}, vb_after_object},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching: a pod with claims cannot be signed (each pod's
 * Filter decides which PVs it takes, and Reserve needs its own decision
 * per node); one without depends on nothing of VolumeBinding's. */
static ks_code_t vb_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    uint32_t i;
    (void)self;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC ||
            pod->volumes[i].source == KS_VOLUME_EPHEMERAL)
            return KS_UNSCHEDULABLE;
    ks_sign_i64(sg, 0);
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("VolumeBinding", "1.36.0-ks1",
    .create = vb_create,
    .destroy = vb_destroy,
    .pre_filter = vb_pre_filter,
    .filter = vb_filter,
    .filter_with_state = vb_filter_with_state,
    .filter_nodes = vb_filter_nodes,
    .pre_score = vb_pre_score,
    .score = vb_score,
    .reserve = vb_reserve,
    .unreserve = vb_unreserve,
    .pre_bind = vb_pre_bind,
    .events_to_register = vb_events,
    .events_to_register_v2 = vb_events_v2,
    .sign = vb_sign,
    .resources = vb_resources,
    .n_resources = (uint32_t)N_RESOURCES);
