/*
 * NodeResourcesFit (PreFilter, Filter, PreScore, Score), as upstream
 * v1.24.1:
 *  - Filter: "Too many pods" when the node is full, then "Insufficient cpu",
 *    "Insufficient memory", "Insufficient ephemeral-storage" and
 *    "Insufficient <name>" for each extended resource the node lacks, all
 *    reasons at once, Unschedulable. ignoredResources / ignoredResourceGroups
 *    skip extended resources by name or by the part before '/'.
 *  - Score: scoringStrategy LeastAllocated (default), MostAllocated or
 *    RequestedToCapacityRatio over `resources` (default cpu and memory,
 *    weight 1). The first two truncate the weighted mean; the third rounds
 *    it. cpu and memory use the non-zero request defaults.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include "resource_allocation.h"

#define PREFILTER_KEY "PreFilterNodeResourcesFit"
#define PRESCORE_KEY "PreScoreNodeResourcesFit"
#define MAX_IGNORED 64
#define MAX_SHAPE 32
#define MAX_CUSTOM_SCORE 10 /* shape scores are 0..10, scaled to 0..100 */

typedef enum strategy {
    STRATEGY_LEAST = 0,
    STRATEGY_MOST,
    STRATEGY_RTCR
} strategy_t;

typedef struct shape_point {
    int64_t utilization;
    int64_t score; /* already scaled to 0..100 */
} shape_point_t;

typedef struct fit {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const char *ignored[MAX_IGNORED]; /* interned resource names */
    uint32_t n_ignored;
    char *ignored_groups[MAX_IGNORED];
    uint32_t n_ignored_groups;
    strategy_t strategy;
    ra_spec_t spec;
    shape_point_t shape[MAX_SHAPE];
    uint32_t n_shape;
} fit_t;

/* The pod's request, as Filter checks it. Immutable once written. */
typedef struct fit_prefilter {
    int64_t milli_cpu, memory, ephemeral;
    uint32_t n_all_scalar; /* scalars the pod requests, ignored ones too */
    uint32_t n_scalar;     /* those Filter checks */
    ks_scalar_resource_t scalar[KS_MAX_SCALAR_RESOURCES];
} fit_prefilter_t;

/* The pod's request per configured resource (same order as spec). */
typedef struct fit_prescore {
    int64_t pod_req[RA_MAX_RESOURCES];
} fit_prescore_t;

/* --- args ------------------------------------------------------------------ */

static int parse_string_list(const ks_args_t *a, const char *path,
                             const char **out, uint32_t *n, char *err,
                             size_t errlen)
{
    uint32_t i;
    *n = 0;
    if (a == NULL)
        return 0;
    if (a->kind == KS_ARGS_SCALAR && a->scalar[0] == '\0')
        return 0;
    if (a->kind != KS_ARGS_SEQ)
        return ra_errf(err, errlen, a, "%s: must be a list of strings", path);
    if (a->n > MAX_IGNORED)
        return ra_errf(err, errlen, a, "%s: at most %d entries", path,
                       MAX_IGNORED);
    for (i = 0; i < a->n; i++) {
        const ks_args_t *e = a->children[i];
        if (e->kind != KS_ARGS_SCALAR || e->scalar[0] == '\0')
            return ra_errf(err, errlen, e, "%s[%u]: must be a non-empty string",
                           path, i);
        out[(*n)++] = e->scalar;
    }
    return 0;
}

static int parse_shape(fit_t *f, const ks_args_t *rtcr, char *err,
                       size_t errlen)
{
    static const char *const rkeys[] = {"shape", NULL};
    static const char *const pkeys[] = {"utilization", "score", NULL};
    const char *path = "scoringStrategy.requestedToCapacityRatio.shape";
    const ks_args_t *shape;
    uint32_t i;
    if (rtcr == NULL)
        return ra_errf(err, errlen, NULL,
                       "%s: Required value: at least one point must be "
                       "specified",
                       path);
    if (ks_args_check_keys(rtcr, rkeys, err, errlen) != 0)
        return -1;
    shape = ks_args_get(rtcr, "shape");
    if (shape == NULL || shape->kind != KS_ARGS_SEQ || shape->n == 0)
        return ra_errf(err, errlen, shape ? shape : rtcr,
                       "%s: Required value: at least one point must be "
                       "specified",
                       path);
    if (shape->n > MAX_SHAPE)
        return ra_errf(err, errlen, shape, "%s: at most %d points", path,
                       MAX_SHAPE);
    for (i = 0; i < shape->n; i++) {
        const ks_args_t *p = shape->children[i];
        const ks_args_t *u, *s;
        int64_t util = 0, score = 0;
        char what[160];
        if (p->kind != KS_ARGS_MAP)
            return ra_errf(err, errlen, p, "%s[%u]: must be a mapping", path,
                           i);
        if (ks_args_check_keys(p, pkeys, err, errlen) != 0)
            return -1;
        u = ks_args_get(p, "utilization");
        s = ks_args_get(p, "score");
        snprintf(what, sizeof what, "%s[%u].utilization", path, i);
        if (u != NULL && ks_args_int64(u, what, &util, err, errlen) != 0)
            return -1;
        if (i > 0 && f->shape[i - 1].utilization >= util)
            return ra_errf(err, errlen, u ? u : p,
                           "%s: Invalid value: %lld: values must be sorted in "
                           "increasing order",
                           what, (long long)util);
        if (util < 0 || util > 100)
            return ra_errf(err, errlen, u,
                           "%s: Invalid value: %lld: not in valid range "
                           "[0, 100]",
                           what, (long long)util);
        snprintf(what, sizeof what, "%s[%u].score", path, i);
        if (s != NULL && ks_args_int64(s, what, &score, err, errlen) != 0)
            return -1;
        if (score < 0 || score > MAX_CUSTOM_SCORE)
            return ra_errf(err, errlen, s,
                           "%s: Invalid value: %lld: not in valid range "
                           "[0, %d]",
                           what, (long long)score, MAX_CUSTOM_SCORE);
        f->shape[i].utilization = util;
        f->shape[i].score = score * (KS_MAX_NODE_SCORE / MAX_CUSTOM_SCORE);
    }
    f->n_shape = shape->n;
    return 0;
}

static int parse_strategy(fit_t *f, const ks_args_t *ss, char *err,
                          size_t errlen)
{
    static const char *const keys[] = {"type", "resources",
                                       "requestedToCapacityRatio", NULL};
    const ks_args_t *type, *rtcr;
    const char *t;
    if (ss == NULL || (ss->kind == KS_ARGS_SCALAR && ss->scalar[0] == '\0'))
        return ra_parse_resources(f->api, f->h, NULL, "", 0, &f->spec, err,
                                  errlen);
    if (ks_args_check_keys(ss, keys, err, errlen) != 0)
        return -1;
    type = ks_args_get(ss, "type");
    t = type && type->kind == KS_ARGS_SCALAR ? type->scalar : "";
    if (strcmp(t, "LeastAllocated") == 0)
        f->strategy = STRATEGY_LEAST;
    else if (strcmp(t, "MostAllocated") == 0)
        f->strategy = STRATEGY_MOST;
    else if (strcmp(t, "RequestedToCapacityRatio") == 0)
        f->strategy = STRATEGY_RTCR;
    else
        return ra_errf(err, errlen, type ? type : ss,
                       "scoringStrategy.type: Unsupported value: \"%s\": "
                       "supported values: \"LeastAllocated\", "
                       "\"MostAllocated\", \"RequestedToCapacityRatio\"",
                       t);
    if (ra_parse_resources(f->api, f->h, ks_args_get(ss, "resources"),
                           "scoringStrategy.resources", 0, &f->spec, err,
                           errlen) != 0)
        return -1;
    rtcr = ks_args_get(ss, "requestedToCapacityRatio");
    /* A shape is validated whenever given, and required by its strategy. */
    if (rtcr != NULL || f->strategy == STRATEGY_RTCR)
        return parse_shape(f, rtcr, err, errlen);
    return 0;
}

static void fit_destroy(void *self)
{
    fit_t *f = self;
    uint32_t i;
    if (f == NULL)
        return;
    for (i = 0; i < f->n_ignored_groups; i++)
        free(f->ignored_groups[i]);
    free(f);
}

static int fit_create(const ks_host_api_t *api, ks_handle_t *h,
                      const ks_args_t *args, void **self, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"ignoredResources",
                                       "ignoredResourceGroups",
                                       "scoringStrategy", NULL};
    const char *names[MAX_IGNORED];
    uint32_t i, n = 0;
    fit_t *f;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    f = calloc(1, sizeof *f);
    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    f->api = api;
    f->h = h;
    if (parse_string_list(ks_args_get(args, "ignoredResources"),
                          "ignoredResources", names, &n, err, errlen) != 0)
        goto fail;
    for (i = 0; i < n; i++)
        f->ignored[i] = api->intern(h, names[i]);
    f->n_ignored = n;
    if (parse_string_list(ks_args_get(args, "ignoredResourceGroups"),
                          "ignoredResourceGroups", names, &n, err,
                          errlen) != 0)
        goto fail;
    for (i = 0; i < n; i++) {
        if (strchr(names[i], '/') != NULL) {
            ra_errf(err, errlen,
                    ks_args_get(args, "ignoredResourceGroups")->children[i],
                    "ignoredResourceGroups[%u]: Invalid value: \"%s\": "
                    "resource group name can't contain '/'",
                    i, names[i]);
            goto fail;
        }
        f->ignored_groups[i] = strdup(names[i]);
        if (f->ignored_groups[i] == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        f->n_ignored_groups = i + 1;
    }
    if (parse_strategy(f, ks_args_get(args, "scoringStrategy"), err,
                       errlen) != 0)
        goto fail;
    *self = f;
    return 0;
fail:
    fit_destroy(f);
    return -1;
}

/* --- filter ---------------------------------------------------------------- */

/* Is extended resource `name` excluded from Filter by the args? */
static int fit_ignores(const fit_t *f, const char *name)
{
    const char *slash;
    uint32_t i;
    if (!ra_is_extended(name))
        return 0;
    for (i = 0; i < f->n_ignored; i++)
        if (f->ignored[i] == name || strcmp(f->ignored[i], name) == 0)
            return 1;
    if (f->n_ignored_groups == 0)
        return 0;
    slash = strchr(name, '/');
    for (i = 0; i < f->n_ignored_groups; i++)
        if (strlen(f->ignored_groups[i]) == (size_t)(slash - name) &&
            strncmp(f->ignored_groups[i], name, (size_t)(slash - name)) == 0)
            return 1;
    return 0;
}

static ks_code_t fit_pre_filter(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                ks_prefilter_result_t *result, ks_status_t *st)
{
    fit_t *f = self;
    fit_prefilter_t *s = calloc(1, sizeof *s);
    uint32_t i;
    (void)result;
    if (s == NULL) {
        f->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->milli_cpu = pod->requests.milli_cpu;
    s->memory = pod->requests.memory;
    s->ephemeral = pod->requests.ephemeral_storage;
    for (i = 0; i < pod->requests.n_scalar; i++) {
        const ks_scalar_resource_t *r = &pod->requests.scalar[i];
        if (!ra_is_scalar(r->name))
            continue;
        s->n_all_scalar++;
        if (!fit_ignores(f, r->name))
            s->scalar[s->n_scalar++] = *r;
    }
    /* Filter gets it as its state (no cycle-state lookup per node). */
    return ks_plugin_state_put(f->api, f->h, cs, KS_STATE_FILTER, s, st);
}

static ks_code_t fit_filter_with_state(void *self, ks_cycle_state_t *cs,
                                       void *state, const ks_pod_t *pod,
                                       const ks_node_info_t *ni,
                                       ks_status_t *st)
{
    fit_t *f = self;
    const fit_prefilter_t *s = state;
    const ks_resources_t *al, *used = &ni->requested;
    ks_code_t code = KS_SUCCESS;
    uint32_t i;
    (void)cs;
    (void)pod;
    if (s == NULL) {
        f->api->status_reason(
            st, "error reading \"" PREFILTER_KEY "\" from cycleState: not found");
        return KS_ERROR;
    }
    al = &ni->node->allocatable;
    if ((int64_t)ni->n_pods + 1 > al->allowed_pods) {
        f->api->status_reason(st, "Too many pods");
        code = KS_UNSCHEDULABLE;
    }
    if (s->milli_cpu == 0 && s->memory == 0 && s->ephemeral == 0 &&
        s->n_all_scalar == 0)
        return code;
    if (al->milli_cpu < s->milli_cpu + used->milli_cpu) {
        f->api->status_reason(st, "Insufficient cpu");
        code = KS_UNSCHEDULABLE;
    }
    if (al->memory < s->memory + used->memory) {
        f->api->status_reason(st, "Insufficient memory");
        code = KS_UNSCHEDULABLE;
    }
    if (al->ephemeral_storage < s->ephemeral + used->ephemeral_storage) {
        f->api->status_reason(st, "Insufficient ephemeral-storage");
        code = KS_UNSCHEDULABLE;
    }
    for (i = 0; i < s->n_scalar; i++) {
        const char *name = s->scalar[i].name;
        if (ra_scalar(al, name, NULL) <
            s->scalar[i].value + ra_scalar(used, name, NULL)) {
            f->api->status_reasonf(st, "Insufficient %s", name);
            code = KS_UNSCHEDULABLE;
        }
    }
    return code;
}

/* --- score ----------------------------------------------------------------- */

static int64_t least_requested(int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return 0;
    return (capacity - requested) * KS_MAX_NODE_SCORE / capacity;
}

static int64_t most_requested(int64_t requested, int64_t capacity)
{
    if (capacity == 0)
        return 0;
    if (requested > capacity)
        requested = capacity;
    return requested * KS_MAX_NODE_SCORE / capacity;
}

/* The piecewise-linear shape at utilization p (upstream
 * BuildBrokenLinearFunction). */
static int64_t shape_at(const fit_t *f, int64_t p)
{
    uint32_t i;
    for (i = 0; i < f->n_shape; i++) {
        if (p <= f->shape[i].utilization) {
            const shape_point_t *a, *b;
            if (i == 0)
                return f->shape[0].score;
            a = &f->shape[i - 1];
            b = &f->shape[i];
            return a->score + (b->score - a->score) * (p - a->utilization) /
                                  (b->utilization - a->utilization);
        }
    }
    return f->shape[f->n_shape - 1].score;
}

static int64_t rtcr_requested(const fit_t *f, int64_t requested,
                              int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return shape_at(f, 100);
    return shape_at(f, requested * 100 / capacity);
}

static int64_t fit_node_score(const fit_t *f, const int64_t *pod_req,
                              const ks_node_info_t *ni)
{
    int64_t node_score = 0, weight_sum = 0;
    uint32_t i;
    for (i = 0; i < f->spec.n; i++) {
        const ra_resource_t *r = &f->spec.res[i];
        int64_t alloc, req, s;
        ra_alloc_request(ni, r, pod_req[i], 0, &alloc, &req);
        if (alloc == 0)
            continue;
        switch (f->strategy) {
        case STRATEGY_LEAST:
            s = least_requested(req, alloc);
            break;
        case STRATEGY_MOST:
            s = most_requested(req, alloc);
            break;
        default:
            s = rtcr_requested(f, req, alloc);
            /* Resources scoring 0 do not count in the mean. */
            if (s <= 0)
                continue;
            break;
        }
        node_score += s * r->weight;
        weight_sum += r->weight;
    }
    if (weight_sum == 0)
        return 0;
    if (f->strategy == STRATEGY_RTCR)
        return (int64_t)llround((double)node_score / (double)weight_sum);
    return node_score / weight_sum;
}

static void fit_pod_requests(const fit_t *f, const ks_pod_t *pod,
                             int64_t *pod_req)
{
    uint32_t i;
    for (i = 0; i < f->spec.n; i++)
        pod_req[i] = ra_pod_request(pod, &f->spec.res[i], 0);
}

static ks_code_t fit_pre_score(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               const ks_node_info_t *const *nodes, uint32_t n,
                               ks_status_t *st)
{
    fit_t *f = self;
    fit_prescore_t *s = malloc(sizeof *s);
    (void)nodes;
    (void)n;
    if (s == NULL) {
        f->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    fit_pod_requests(f, pod, s->pod_req);
    return ks_plugin_state_put(f->api, f->h, cs, KS_STATE_SCORE, s, st);
}

static ks_code_t fit_score_with_state(void *self, ks_cycle_state_t *cs,
                                      void *state, const ks_pod_t *pod,
                                      const ks_node_info_t *ni, int64_t *score,
                                      ks_status_t *st)
{
    fit_t *f = self;
    const fit_prescore_t *s = state;
    int64_t local[RA_MAX_RESOURCES];
    (void)cs;
    if (ni->node == NULL) {
        f->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    /* Upstream v1.24 has no PreScore here: score without it too. */
    if (s == NULL)
        fit_pod_requests(f, pod, local);
    *score = fit_node_score(f, s ? s->pod_req : local, ni);
    return KS_SUCCESS;
}

/* Filter and Score for callers without the state slots (the SDK's 1.0
 * entry points): the same, with the state looked up. */
static ks_code_t fit_filter(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const ks_node_info_t *ni,
                            ks_status_t *st)
{
    fit_t *f = self;
    return fit_filter_with_state(
        self, cs, f->api->plugin_state_get(f->h, cs, KS_STATE_FILTER), pod, ni,
        st);
}

static ks_code_t fit_score(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           int64_t *score, ks_status_t *st)
{
    fit_t *f = self;
    return fit_score_with_state(
        self, cs, f->api->plugin_state_get(f->h, cs, KS_STATE_SCORE), pod, ni,
        score, st);
}

/* --- QueueingHints (upstream v1.36) -------------------------------------- */

/* One resource of a list: 0 cpu, 1 memory, 2 ephemeral-storage, else the
 * extended resource `name`. */
static int64_t res_get(const ks_resources_t *r, int which, const char *name)
{
    switch (which) {
    case 0: return r->milli_cpu;
    case 1: return r->memory;
    case 2: return r->ephemeral_storage;
    default: return ra_scalar(r, name, NULL);
    }
}

/* upstream isFit: would the pod fit the node were it empty? */
static int fit_empty_node(const fit_t *f, const ks_pod_t *pod,
                          const ks_node_t *node)
{
    const ks_resources_t *rq = &pod->requests, *al = &node->allocatable;
    uint32_t i;
    int w;
    if (al->allowed_pods < 1)
        return 0;
    for (w = 0; w < 3; w++)
        if (res_get(rq, w, NULL) > res_get(al, w, NULL))
            return 0;
    for (i = 0; i < rq->n_scalar; i++) {
        const ks_scalar_resource_t *r = &rq->scalar[i];
        if (!ra_is_scalar(r->name) || fit_ignores(f, r->name))
            continue;
        if (r->value > ra_scalar(al, r->name, NULL))
            return 0;
    }
    return 1;
}

/* Did a resource the pod requests go from more in `a` to less in `b`
 * (up: b more than a)? */
static int requested_moved(const ks_pod_t *pod, const ks_resources_t *a,
                           const ks_resources_t *b)
{
    const ks_resources_t *rq = &pod->requests;
    uint32_t i;
    int w;
    for (w = 0; w < 3; w++)
        if (res_get(rq, w, NULL) > 0 &&
            res_get(a, w, NULL) > res_get(b, w, NULL))
            return 1;
    for (i = 0; i < rq->n_scalar; i++)
        if (rq->scalar[i].value > 0 && ra_is_scalar(rq->scalar[i].name) &&
            ra_scalar(a, rq->scalar[i].name, NULL) >
                ra_scalar(b, rq->scalar[i].name, NULL))
            return 1;
    return 0;
}

/* A node added or its allocatable changed: Queue when the pod fits the
 * node (empty) and, for an update, something it requests grew. */
static ks_queueing_hint_t fit_after_node(void *self, const ks_pod_t *pod,
                                         const void *old_obj,
                                         const void *new_obj)
{
    const ks_node_t *old = old_obj, *n = new_obj;
    if (n == NULL || !fit_empty_node(self, pod, n))
        return KS_QUEUE_SKIP;
    if (old == NULL)
        return KS_QUEUE;
    return requested_moved(pod, &n->allocatable, &old->allocatable)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

/* An assigned pod deleted, or a pod's requests scaled down: Queue when
 * that frees something (an unassigned pod's deletion frees nothing; a
 * scale-down only when a resource this pod requests went down, or it is
 * the pod itself). */
static ks_queueing_hint_t fit_after_pod(void *self, const ks_pod_t *pod,
                                        const void *old_obj,
                                        const void *new_obj)
{
    const ks_pod_t *old = old_obj, *n = new_obj;
    (void)self;
    if (n == NULL)
        return old != NULL && old->node_name[0] ? KS_QUEUE : KS_QUEUE_SKIP;
    if (n->uid == pod->uid)
        return KS_QUEUE;
    if (old == NULL || n->node_name[0] == '\0')
        return KS_QUEUE_SKIP;
    return requested_moved(pod, &old->requests, &n->requests)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

static uint32_t fit_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    static const ks_cluster_event_t ev[] = {
        {KS_RES_POD, KS_ACT_DELETE},
        {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

static uint32_t fit_events_v2(void *self, ks_cluster_event_hint_t *out,
                              uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_DELETE | KS_ACT_UPDATE_POD_SCALE_DOWN},
         fit_after_pod},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE},
         fit_after_node},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's resources signer). */
static ks_code_t fit_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    (void)self;
    ks_sign_pod_resources(sg, pod);
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2). The general cases are the
 * per-node functions in a loop; the common ones (no extended resource
 * requested; cpu and memory scored least- or most-allocated) get loops of
 * their own that read only the few fields they compare, with the same
 * verdicts and scores. */
KS_FILTER_NODES_FROM(fit_filter_nodes_general, fit_filter_with_state)
KS_SCORE_NODES_FROM(fit_score_nodes_general, fit_score_with_state)

static ks_code_t fit_filter_nodes(void *self, ks_cycle_state_t *cs,
                                  void *state, const ks_pod_t *pod,
                                  const ks_node_info_t *const *nodes,
                                  uint32_t n, uint8_t *pass,
                                  ks_status_t *scratch)
{
    const fit_t *f = self;
    const fit_prefilter_t *s = state;
    const ks_node_columns_t *col;
    const uint32_t *pos;
    int64_t cpu, mem, eph;
    uint32_t i;
    int none;
    if (s == NULL || s->n_scalar > 0)
        return fit_filter_nodes_general(self, cs, state, pod, nodes, n, pass,
                                        scratch);
    none = s->milli_cpu == 0 && s->memory == 0 && s->ephemeral == 0 &&
           s->n_all_scalar == 0;
    cpu = s->milli_cpu;
    mem = s->memory;
    eph = s->ephemeral;
    col = ks_bulk_columns(f->api, f->h, nodes, &pos);
    if (col != NULL) {
        /* the host's columns (since ABI 1.7): the same comparisons, no
         * NodeInfo or Node read; a missing node goes to the per-node
         * Filter, which gives its verdict */
        const uint8_t *fl = col->flags;
        const uint32_t *np = col->n_pods;
        const int64_t *ap = col->alloc_pods, *ac = col->alloc_milli_cpu,
                      *am = col->alloc_memory, *ae = col->alloc_ephemeral,
                      *rc = col->req_milli_cpu, *rm = col->req_memory,
                      *re = col->req_ephemeral;
        for (i = 0; i < n; i++) {
            uint32_t p = pos[i];
            if (!pass[i])
                continue;
            if (fl[p] & KS_COL_NO_NODE) {
                pass[i] = ks_bulk_verdict(fit_filter_with_state(
                    self, cs, state, pod, nodes[i], scratch));
                continue;
            }
            if ((int64_t)np[p] + 1 > ap[p] ||
                (!none && (ac[p] < cpu + rc[p] || am[p] < mem + rm[p] ||
                           ae[p] < eph + re[p])))
                pass[i] = 0;
        }
        return KS_SUCCESS;
    }
    /* Two loops: the pod requests nothing, or the usual case. */
    if (none) {
#pragma GCC unroll 4
        for (i = 0; i < n; i++)
            if (pass[i] && (int64_t)nodes[i]->n_pods + 1 >
                               nodes[i]->node->allocatable.allowed_pods)
                pass[i] = 0;
        return KS_SUCCESS;
    }
#pragma GCC unroll 2
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_resources_t *al, *used = &ni->requested;
        /* the lines read 8 nodes on (their NodeInfo's first line, with
         * `node`, an earlier plugin of the run has loaded) */
        if (i + 8 < n && nodes[i + 8]->node != NULL) {
            __builtin_prefetch(&nodes[i + 8]->requested.memory);
            __builtin_prefetch(&nodes[i + 8]->node->allocatable.allowed_pods);
        }
        if (!pass[i])
            continue;
        al = &ni->node->allocatable;
        if ((int64_t)ni->n_pods + 1 > al->allowed_pods ||
            al->milli_cpu < cpu + used->milli_cpu ||
            al->memory < mem + used->memory ||
            al->ephemeral_storage < eph + used->ephemeral_storage)
            pass[i] = 0;
    }
    return KS_SUCCESS;
}

/* least_requested without the integer division: the quotient is at most
 * 100 and, with 0 <= requested <= capacity < 2^46, the numerator is exact
 * in a double and the division's rounding error (half a unit in the last
 * place, at most 2^-47 below 128) is smaller than the distance from a
 * quotient that is not a whole number to the next one (at least
 * 1/capacity > 2^-46): truncating gives the integer quotient. A double
 * division is one short instruction where a 64-bit integer one is many
 * micro-operations; any other input takes the integer way, and so does
 * every input where doubles are evaluated in a wider format (x87: a
 * double rounding would void the argument). */
#if FLT_EVAL_METHOD == 0
#define LEAST_EXACT_CAP (INT64_C(1) << 46)
#else
#define LEAST_EXACT_CAP 0
#endif
static inline int64_t least_requested_fast(int64_t requested,
                                           int64_t capacity)
{
    if ((uint64_t)requested <= (uint64_t)capacity &&
        capacity < LEAST_EXACT_CAP)
        return (int64_t)((double)((capacity - requested) *
                                  KS_MAX_NODE_SCORE) /
                         (double)capacity);
    return least_requested(requested, capacity);
}

/* LeastAllocated over cpu and memory on nodes that have some of both
 * (the usual node): fit_node_score's formula with both resources
 * counted, so the weighted mean's divisor is the loop's constant wc + wm;
 * with equal weights, w*(a + b) / 2w is (a + b) / 2, a shift as both are
 * non-negative (a positive capacity). Any other node (no Node, a
 * capacity of 0 or below) is scored by fit_score_with_state. Returns its
 * code (KS_SUCCESS). */
static ks_code_t fit_score_least(const fit_t *f, ks_cycle_state_t *cs,
                                 const fit_prescore_t *s, const ks_pod_t *pod,
                                 const ks_node_info_t *const *nodes,
                                 uint32_t n, int64_t *scores,
                                 ks_status_t *scratch)
{
    const int64_t wc = f->spec.res[0].weight, wm = f->spec.res[1].weight;
    const int64_t wsum = wc + wm, req_c = s->pod_req[0],
                  req_m = s->pod_req[1];
    const int equal = wc == wm;
    const uint32_t *pos;
    const ks_node_columns_t *col = ks_bulk_columns(f->api, f->h, nodes, &pos);
    uint32_t i;
    if (col != NULL) {
        /* the host's columns (since ABI 1.7): no NodeInfo or Node read */
        const int64_t *acol = col->alloc_milli_cpu, *amol = col->alloc_memory,
                      *ncol = col->nz_milli_cpu, *nmol = col->nz_memory;
        for (i = 0; i < n; i++) {
            uint32_t p = pos[i];
            int64_t ac = acol[p], am = amol[p], sc, sm;
            if (ac <= 0 || am <= 0) {
                /* no node (allocatable 0), or nothing of one: as below */
                ks_code_t c = fit_score_with_state((void *)f, cs, (void *)s,
                                                   pod, nodes[i], &scores[i],
                                                   scratch);
                if (c != KS_SUCCESS)
                    return c;
                continue;
            }
            sc = least_requested_fast(ncol[p] + req_c, ac);
            sm = least_requested_fast(nmol[p] + req_m, am);
            scores[i] = equal ? (int64_t)((uint64_t)(sc + sm) >> 1)
                              : (sc * wc + sm * wm) / wsum;
        }
        return KS_SUCCESS;
    }
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_node_t *node = ni->node;
        int64_t ac, am, rc, rm, sc, sm;
        if (i + 8 < n) /* the line read 8 nodes on */
            __builtin_prefetch(&nodes[i + 8]->non_zero_requested);
        if (node == NULL || node->allocatable.milli_cpu <= 0 ||
            node->allocatable.memory <= 0) {
            ks_code_t c = fit_score_with_state((void *)f, cs, (void *)s, pod,
                                               ni, &scores[i], scratch);
            if (c != KS_SUCCESS)
                return c;
            continue;
        }
        ac = node->allocatable.milli_cpu;
        am = node->allocatable.memory;
        rc = ni->non_zero_requested.milli_cpu + req_c;
        rm = ni->non_zero_requested.memory + req_m;
        sc = least_requested_fast(rc, ac);
        sm = least_requested_fast(rm, am);
        scores[i] = equal ? (int64_t)((uint64_t)(sc + sm) >> 1)
                          : (sc * wc + sm * wm) / wsum;
    }
    return KS_SUCCESS;
}

static ks_code_t fit_score_nodes(void *self, ks_cycle_state_t *cs,
                                 void *state, const ks_pod_t *pod,
                                 const ks_node_info_t *const *nodes,
                                 uint32_t n, int64_t *scores,
                                 ks_status_t *scratch)
{
    const fit_t *f = self;
    const fit_prescore_t *s = state;
    int64_t wc, wm, req_c, req_m;
    uint32_t i;
    if (s == NULL || f->spec.n != 2 || f->spec.res[0].kind != RA_CPU ||
        f->spec.res[1].kind != RA_MEMORY ||
        (f->strategy != STRATEGY_LEAST && f->strategy != STRATEGY_MOST))
        return fit_score_nodes_general(self, cs, state, pod, nodes, n, scores,
                                       scratch);
    if (f->strategy == STRATEGY_LEAST)
        return fit_score_least(f, cs, s, pod, nodes, n, scores, scratch);
    /* MostAllocated */
    wc = f->spec.res[0].weight;
    wm = f->spec.res[1].weight;
    req_c = s->pod_req[0];
    req_m = s->pod_req[1];
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        const ks_resources_t *al, *used;
        int64_t sum = 0, wsum = 0;
        if (ni->node == NULL)
            return fit_score_nodes_general(self, cs, state, pod, nodes, n,
                                           scores, scratch);
        al = &ni->node->allocatable;
        used = &ni->non_zero_requested;
        if (al->milli_cpu != 0) {
            int64_t r = used->milli_cpu + req_c;
            sum += wc * most_requested(r, al->milli_cpu);
            wsum += wc;
        }
        if (al->memory != 0) {
            int64_t r = used->memory + req_m;
            sum += wm * most_requested(r, al->memory);
            wsum += wm;
        }
        scores[i] = wsum ? sum / wsum : 0;
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("NodeResourcesFit", "1.24.1-ks1",
    .create = fit_create,
    .destroy = fit_destroy,
    .pre_filter = fit_pre_filter,
    .filter = fit_filter,
    .filter_with_state = fit_filter_with_state,
    .pre_score = fit_pre_score,
    .score = fit_score,
    .score_with_state = fit_score_with_state,
    .events_to_register = fit_events,
    .events_to_register_v2 = fit_events_v2,
                 .sign = fit_sign,
    .filter_nodes = fit_filter_nodes,
    .score_nodes = fit_score_nodes);
