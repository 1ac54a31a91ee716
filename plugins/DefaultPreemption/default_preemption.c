/*
 * DefaultPreemption: the PostFilter plugin that makes room for a pod no node
 * could take, by evicting pods of lower priority. It follows kube-scheduler
 * v1.24.1 (the DefaultPreemption plugin and its preemption evaluator), and
 * upstream v1.36 for PodDisruptionBudgets (v1.24.1 had the same rules but
 * left a node's victims in reprieve order, violating ones first, where
 * v1.36 sorts them again; see step 3):
 *
 *   1. Eligibility: a pod whose preemptionPolicy is Never never preempts. A
 *      pod that has a nominated node on which a lower-priority pod is still
 *      terminating waits instead of preempting again, unless the Filter
 *      verdict for that node is UnschedulableAndUnresolvable.
 *   2. Candidate nodes: every node of the snapshot whose Filter verdict is
 *      not UnschedulableAndUnresolvable. A number of them (the larger of
 *      minCandidateNodesPercentage % of them and minCandidateNodesAbsolute,
 *      capped by their count) is dry-run, starting at a random offset and
 *      wrapping around; the dry run stops as soon as that many candidates
 *      were found. The PodDisruptionBudgets of every namespace are read
 *      once for the dry run (the policy/v1 store this plugin declares:
 *      snapshot files in `ksched schedule`, an informer in cluster mode).
 *   3. Victims on one node: on private copies of the NodeInfo and the cycle
 *      state, remove every pod of lower priority and check that the pod
 *      then passes the Filter plugins. The removed pods, most important
 *      first (higher priority, then earlier start), are split as upstream's
 *      filterPodsWithPDBViolation does: going down that list with each
 *      budget's status.disruptionsAllowed as a counter, a pod takes one
 *      from every budget of its namespace whose selector matches its labels
 *      and that does not list it in status.disruptedPods (already counted
 *      by the API server); a pod that takes any budget below zero is
 *      "violating". A pod without labels, and a budget whose selector is
 *      absent, empty or invalid, match nothing (upstream's preemption code,
 *      which differs here from the disruption controller's "empty selects
 *      all"). The violating pods are added back first, one by one, then the
 *      others, each kept when the pod still fits with it; the rest are the
 *      victims (again most important first), and the violating ones among
 *      them are the candidate's PDB violations.
 *   3b. Scheduler extenders with a preemptVerb (host API, since ABI 1.1):
 *      the candidates are handed to the host, with their victims and PDB
 *      violations, PostFilter returns Pending
 *      while the extenders are asked (asynchronously, each narrowing what
 *      the previous one kept), and the host calls PostFilter again; the
 *      candidates they kept, with the victims and violation counts they
 *      named, go on to step 4
 *      ("no candidate node for preemption" when none is left; an error of
 *      an extender that is not ignorable is this plugin's Error). A host
 *      without those calls has no extenders: step 4 follows at once.
 *   4. Choice of node among the candidates: fewest PodDisruptionBudget
 *      violations, then the lowest highest-priority victim, then the lowest
 *      sum of victim priorities (each shifted by 2^31 so that negative
 *      priorities cannot make more victims look cheaper), then the fewest
 *      victims, then the latest start among the highest-priority victims,
 *      then the first candidate in evaluation order.
 *   5. The victims are deleted (or rejected when they wait at Permit), pods
 *      of lower priority nominated to the chosen node lose their nomination,
 *      and the chosen node is returned as the pod's nominated node.
 *
 * When no candidate exists the status carries the same summary the
 * scheduler's FitError prints, over the dry-run verdicts: "0/N nodes are
 * available: COUNT REASON, ...", every reason of every node's verdict
 * counted, entries sorted as strings; every message this plugin returns
 * starts with "preemption: ".
 *
 * Differences from upstream, by construction of ksched's model:
 *   - Upstream evaluates nodes in parallel and keeps candidates in a map, so
 *     its last tie-break is effectively random; here nodes are evaluated in
 *     order and candidates keep that order. Victims of equal importance
 *     keep their order on the node where upstream's unstable sort may swap
 *     them.
 *   - A PodDisruptionBudget's selector is not re-validated: an operator
 *     other than In, NotIn, Exists and DoesNotExist, In/NotIn without
 *     values or Exists/DoesNotExist with values make it match nothing, as
 *     upstream's LabelSelectorAsSelector error does; malformed label keys
 *     and values (which the API server refuses) are compared as written.
 *   - A pod without status.startTime counts as started "now" (the wall
 *     clock, read once per PostFilter call), as upstream's GetPodStartTime.
 *   - A host whose API table predates status_reason_count/status_reason_at
 *     exposes only the first reason of a status; with such a host a node
 *     contributes one reason to the summary.
 *
 * Threads: everything runs on the host's loop thread (PostFilter). The
 * budgets' views are read within one PostFilter call and never kept.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define DP_NAME "DefaultPreemption"
#define DP_VERSION "1.24.1-ks1"

#define DP_DEFAULT_MIN_PERCENTAGE 10
#define DP_DEFAULT_MIN_ABSOLUTE 100

#define DP_MSG_NOT_HELPFUL "Preemption is not helpful for scheduling"
#define DP_MSG_NO_VICTIMS "No preemption victims found for incoming pod"
#define DP_MSG_TERMINATING \
    "not eligible due to a terminating pod on the nominated node."
#define DP_MSG_NEVER "not eligible due to preemptionPolicy=Never."
#define DP_MSG_NO_CANDIDATE "no candidate node for preemption"

/* --- plugin instance ------------------------------------------------------ */

typedef struct dp_plugin {
    const ks_host_api_t *api;
    ks_handle_t *h;
    int32_t min_percentage; /* minCandidateNodesPercentage, 0..100 */
    int32_t min_absolute;   /* minCandidateNodesAbsolute, >= 0 */
    /* The host's policy/v1 PodDisruptionBudget store (declared below in
     * dp_resources; owned by the host, lives as long as it). */
    const ks_store_t *pdbs;
} dp_plugin_t;

/* The cluster resources this plugin reads (upstream: the Evaluator's
 * PodDisruptionBudget lister). */
static const ks_resource_ref_t dp_resources[] = {
    {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"},
};

/* --- a growable string ---------------------------------------------------- */

typedef struct dp_buf {
    char *s;
    size_t len, cap;
    int oom;
} dp_buf_t;

static void dp_buf_printf(dp_buf_t *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void dp_buf_printf(dp_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (b->oom)
        return;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        char *s;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        s = realloc(b->s, cap);
        if (s == NULL) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static char *dp_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* --- the reasons of a status ---------------------------------------------- */

/* Copies of every reason of a failing status, in order. */
typedef struct dp_reasons {
    char **v; /* owned strings */
    uint32_t n;
} dp_reasons_t;

static void dp_reasons_free(dp_reasons_t *rs)
{
    uint32_t i;
    for (i = 0; i < rs->n; i++)
        free(rs->v[i]);
    free(rs->v);
    rs->v = NULL;
    rs->n = 0;
}

/* Append a copy of s; -1 when out of memory. */
static int dp_reasons_push(dp_reasons_t *rs, const char *s)
{
    char *copy = dp_strdup(s);
    char **v;
    if (copy == NULL)
        return -1;
    v = realloc(rs->v, sizeof(*v) * (rs->n + 1));
    if (v == NULL) {
        free(copy);
        return -1;
    }
    rs->v = v;
    rs->v[rs->n++] = copy;
    return 0;
}

/* The reasons joined with ", " (upstream Status.Message); "" when none.
 * NULL when out of memory. The caller frees the result. */
static char *dp_reasons_join(const dp_reasons_t *rs)
{
    const char *const *v = (const char *const *)rs->v;
    size_t len = ks_strs_join(NULL, 0, v, rs->n) + 1;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    ks_strs_join(s, len, v, rs->n);
    return s;
}

/* 1 when the host table has the per-reason accessors (members of ABI 1.0,
 * so only their presence is checked). */
static int dp_api_has_reason_at(const ks_host_api_t *api)
{
    return KS_API_HAS(api, status_reason_count) &&
           KS_API_HAS(api, status_reason_at);
}

/* 1 when the host table has the extenders' preemptVerb calls (since ABI
 * 1.1); an older host has no extenders to ask. */
static int dp_api_has_extenders(const ks_host_api_t *api)
{
    return KS_API_HAS(api, extenders_preempt) &&
           KS_API_HAS(api, extenders_preempt_result);
}

/* Copy every reason of st into rs (empty reasons are skipped). Hosts
 * without the per-reason accessors expose only the first reason. Returns -1
 * when out of memory. */
static int dp_reasons_from_status(const ks_host_api_t *api,
                                  const ks_status_t *st, dp_reasons_t *rs)
{
    if (dp_api_has_reason_at(api)) {
        uint32_t i, n = api->status_reason_count(st);
        for (i = 0; i < n; i++) {
            const char *m = api->status_reason_at(st, i);
            if (m != NULL && *m != '\0' && dp_reasons_push(rs, m) != 0)
                return -1;
        }
    } else {
        const char *m = api->status_message(st);
        if (m != NULL && *m != '\0' && dp_reasons_push(rs, m) != 0)
            return -1;
    }
    return 0;
}

/* --- pod ordering (upstream util.MoreImportantPod, GetPodStartTime) ------- */

static int64_t dp_wall_now_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return INT64_MAX;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A pod's start time; a pod that has not started counts as started now. */
static int64_t dp_start_ms(const ks_pod_t *p, int64_t now_ms)
{
    return p->start_unix_ms != 0 ? p->start_unix_ms : now_ms;
}

/* Higher priority first; among equals, the pod that started earlier. */
static int dp_more_important(const ks_pod_t *a, const ks_pod_t *b,
                             int64_t now_ms)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return dp_start_ms(a, now_ms) < dp_start_ms(b, now_ms);
}

/* Stable insertion sort, most important first (a handful of pods per node). */
static void dp_sort_by_importance(const ks_pod_t **pods, uint32_t n,
                                  int64_t now_ms)
{
    uint32_t i, j;
    for (i = 1; i < n; i++) {
        const ks_pod_t *p = pods[i];
        for (j = i; j > 0 && dp_more_important(p, pods[j - 1], now_ms); j--)
            pods[j] = pods[j - 1];
        pods[j] = p;
    }
}

/* --- the state of one PostFilter call ------------------------------------- */

/* One entry of the preemption's node-to-verdict map. */
typedef struct dp_verdict {
    const char *node;
    ks_code_t code;
    dp_reasons_t reasons; /* owned; may be empty */
} dp_verdict_t;

/* A node where preemption would let the pod in. */
typedef struct dp_candidate {
    const char *node;         /* interned */
    const ks_pod_t **victims; /* owned array, most important first */
    uint32_t n_victims;
    /* Victims that were PDB-violating (step 3), or what an extender said. */
    uint32_t n_pdb_violations;
} dp_candidate_t;

/* One PodDisruptionBudget as the dry run reads it. Every pointer into the
 * object is a view of the host's store: valid only during the PostFilter
 * call that listed it (the run's lifetime), never kept beyond. */
typedef struct dp_pdb {
    const ks_object_t *obj; /* for status.disruptedPods */
    const char *ns;         /* metadata.namespace (as the view) */
    int64_t allowed;        /* status.disruptionsAllowed; 0 when unset */
    /* 1 when the selector can match a pod: present, not empty, valid
     * (upstream's preemption skips a nil, empty or invalid one). */
    int selects;
    ks_label_selector_t sel; /* over reqs, when selects */
    ks_requirement_t *reqs;  /* owned array */
    const char **values;     /* owned array: the requirements' values */
    char **copies;           /* owned copies of matchLabels keys and values */
    uint32_t n_copies;
} dp_pdb_t;

typedef struct dp_run {
    const dp_plugin_t *pl;
    const ks_host_api_t *api;
    ks_handle_t *h;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    int64_t now_ms;

    dp_verdict_t *verdicts;
    uint32_t n_verdicts, cap_verdicts;
    dp_candidate_t *cands;
    uint32_t n_cands, cap_cands;
    char **errs; /* owned messages of Error verdicts, in evaluation order */
    uint32_t n_errs, cap_errs;
    dp_pdb_t *pdbs; /* owned array (views inside: this call only) */
    uint32_t n_pdbs, cap_pdbs;
    /* The status every run_* call of the dry run writes to (made on first
     * use, freed with the run): each call resets it before it reports, so
     * one serves them all instead of a status made and freed per call. */
    ks_status_t *scratch;
    /* Per-node scratch of the victim search, grown as needed and kept for
     * the whole run (one node at a time): pods holds 3 arrays of a node's
     * pod count (potential victims, reprieve order, victims), flags its
     * PDB-violation marks, allowed the budgets' counters. */
    const ks_pod_t **pods;
    uint32_t cap_pods;
    uint8_t *flags;
    uint32_t cap_flags;
    int64_t *allowed;
    uint32_t cap_allowed;
} dp_run_t;

static int dp_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    uint32_t c;
    void *p;
    if (need <= *cap)
        return 0;
    c = *cap ? *cap * 2 : 8;
    while (c < need)
        c *= 2;
    p = realloc(*arr, (size_t)c * elem);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* Record a verdict; takes the reasons over (*reasons is left empty, also
 * on failure). */
static int dp_add_verdict(dp_run_t *r, const char *node, ks_code_t code,
                          dp_reasons_t *reasons)
{
    void *arr = r->verdicts;
    if (dp_grow(&arr, &r->cap_verdicts, r->n_verdicts + 1,
                sizeof(dp_verdict_t)) != 0) {
        dp_reasons_free(reasons);
        return -1;
    }
    r->verdicts = arr;
    r->verdicts[r->n_verdicts].node = node;
    r->verdicts[r->n_verdicts].code = code;
    r->verdicts[r->n_verdicts].reasons = *reasons;
    r->n_verdicts++;
    reasons->v = NULL;
    reasons->n = 0;
    return 0;
}

static int dp_add_error(dp_run_t *r, const char *msg)
{
    void *arr = r->errs;
    char *copy = dp_strdup(msg);
    if (copy == NULL ||
        dp_grow(&arr, &r->cap_errs, r->n_errs + 1, sizeof(char *)) != 0) {
        free(copy);
        return -1;
    }
    r->errs = arr;
    r->errs[r->n_errs++] = copy;
    return 0;
}

/* Takes ownership of `victims`. */
static int dp_add_candidate(dp_run_t *r, const char *node,
                            const ks_pod_t **victims, uint32_t n,
                            uint32_t n_pdb_violations)
{
    void *arr = r->cands;
    if (dp_grow(&arr, &r->cap_cands, r->n_cands + 1,
                sizeof(dp_candidate_t)) != 0) {
        free(victims);
        return -1;
    }
    r->cands = arr;
    r->cands[r->n_cands].node = node;
    r->cands[r->n_cands].victims = victims;
    r->cands[r->n_cands].n_victims = n;
    r->cands[r->n_cands].n_pdb_violations = n_pdb_violations;
    r->n_cands++;
    return 0;
}

static void dp_pdb_free(dp_pdb_t *p)
{
    uint32_t i;
    for (i = 0; i < p->n_copies; i++)
        free(p->copies[i]);
    free(p->copies);
    free(p->reqs);
    free(p->values);
}

static void dp_run_free(dp_run_t *r)
{
    uint32_t i;
    for (i = 0; i < r->n_pdbs; i++)
        dp_pdb_free(&r->pdbs[i]);
    free(r->pdbs);
    for (i = 0; i < r->n_verdicts; i++)
        dp_reasons_free(&r->verdicts[i].reasons);
    for (i = 0; i < r->n_cands; i++)
        free(r->cands[i].victims);
    for (i = 0; i < r->n_errs; i++)
        free(r->errs[i]);
    free(r->verdicts);
    free(r->cands);
    free(r->errs);
    if (r->scratch != NULL)
        r->api->status_free(r->scratch);
    r->scratch = NULL;
    free(r->pods);
    free(r->flags);
    free(r->allowed);
}

/* --- PodDisruptionBudgets (upstream getPodDisruptionBudgets,
 *     filterPodsWithPDBViolation) ----------------------------------------- */

/* object_map_iterate's callback over spec.selector.matchLabels: copies
 * each key and value (the iteration's strings live only during the call)
 * into p->copies, turning it into an In requirement with one value. */
typedef struct dp_ml_walk {
    dp_pdb_t *p;
    uint32_t cap; /* entries of p->reqs and p->values reserved for it */
    int oom, invalid;
} dp_ml_walk_t;

static int dp_match_label_fn(const char *key, const char *value, void *ud)
{
    dp_ml_walk_t *w = ud;
    dp_pdb_t *p = w->p;
    char *k, *v;
    if (value == NULL) { /* not a string: the object is not a selector */
        w->invalid = 1;
        return 1;
    }
    if (p->sel.n >= w->cap) { /* the map grew? it cannot: immutable */
        w->invalid = 1;
        return 1;
    }
    k = dp_strdup(key);
    v = dp_strdup(value);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        w->oom = 1;
        return 1;
    }
    p->copies[p->n_copies++] = k;
    p->copies[p->n_copies++] = v;
    p->values[p->sel.n] = v;
    p->reqs[p->sel.n].key = k;
    p->reqs[p->sel.n].op = KS_OP_IN;
    p->reqs[p->sel.n].values = &p->values[p->sel.n];
    p->reqs[p->sel.n].n_values = 1;
    p->sel.n++;
    return 0;
}

/* metav1.LabelSelectorAsSelector's operators; -1 for any other. */
static int dp_selector_op(const char *s)
{
    if (strcmp(s, "In") == 0)
        return KS_OP_IN;
    if (strcmp(s, "NotIn") == 0)
        return KS_OP_NOT_IN;
    if (strcmp(s, "Exists") == 0)
        return KS_OP_EXISTS;
    if (strcmp(s, "DoesNotExist") == 0)
        return KS_OP_DOES_NOT_EXIST;
    return -1;
}

/* Read p->obj's spec.selector into p->sel and set p->selects. A nil or
 * empty selector (labels.Everything(), which upstream's preemption skips)
 * and one LabelSelectorAsSelector refuses leave selects 0. Returns -1 only
 * when out of memory. */
static int dp_pdb_compile(const ks_host_api_t *api, dp_pdb_t *p)
{
    const ks_object_t *o = p->obj;
    uint32_t n_ml = 0, n_me = 0, n_vals = 0, i, j, k;
    ks_field_type_t t;
    dp_ml_walk_t w;
    char path[96];

    p->selects = 0;
    if (api->object_type(o, "spec.selector") != KS_FIELD_MAP)
        return 0; /* nil: matches nothing */
    t = api->object_type(o, "spec.selector.matchLabels");
    if (t == KS_FIELD_MAP)
        (void)api->object_len(o, "spec.selector.matchLabels", &n_ml);
    else if (t != KS_FIELD_ABSENT)
        return 0;
    t = api->object_type(o, "spec.selector.matchExpressions");
    if (t == KS_FIELD_ARRAY)
        (void)api->object_len(o, "spec.selector.matchExpressions", &n_me);
    else if (t != KS_FIELD_ABSENT)
        return 0;
    if (n_ml + n_me == 0)
        return 0; /* empty: "A PDB with a nil or empty selector matches
                     nothing" */
    n_vals = n_ml;
    for (i = 0; i < n_me; i++) {
        uint32_t n = 0;
        snprintf(path, sizeof path, "spec.selector.matchExpressions[%u].values",
                 i);
        t = api->object_type(o, path);
        if (t == KS_FIELD_ARRAY)
            (void)api->object_len(o, path, &n);
        else if (t != KS_FIELD_ABSENT)
            return 0;
        n_vals += n;
    }
    p->reqs = calloc(n_ml + n_me, sizeof *p->reqs);
    p->values = calloc(n_vals ? n_vals : 1, sizeof *p->values);
    p->copies = calloc(2 * n_ml + 1, sizeof *p->copies);
    if (p->reqs == NULL || p->values == NULL || p->copies == NULL)
        return -1;
    p->sel.reqs = p->reqs;
    p->sel.n = 0;

    if (n_ml > 0) {
        memset(&w, 0, sizeof w);
        w.p = p;
        w.cap = n_ml;
        (void)api->object_map_iterate(o, "spec.selector.matchLabels",
                                      dp_match_label_fn, &w);
        if (w.oom)
            return -1;
        if (w.invalid)
            return 0;
    }
    k = p->sel.n; /* next free entry of p->values */
    for (i = 0; i < n_me; i++) {
        ks_requirement_t *rq = &p->reqs[p->sel.n];
        const char *key = NULL, *op = NULL;
        uint32_t n = 0;
        int o_op;
        snprintf(path, sizeof path, "spec.selector.matchExpressions[%u].key",
                 i);
        if (api->object_string(o, path, &key) != KS_FIELD_OK)
            return 0;
        snprintf(path, sizeof path,
                 "spec.selector.matchExpressions[%u].operator", i);
        if (api->object_string(o, path, &op) != KS_FIELD_OK ||
            (o_op = dp_selector_op(op)) < 0)
            return 0;
        snprintf(path, sizeof path, "spec.selector.matchExpressions[%u].values",
                 i);
        if (api->object_type(o, path) == KS_FIELD_ARRAY)
            (void)api->object_len(o, path, &n);
        /* labels.NewRequirement: In/NotIn need values, Exists and
         * DoesNotExist take none. */
        if ((o_op == KS_OP_IN || o_op == KS_OP_NOT_IN) ? n == 0 : n != 0)
            return 0;
        rq->key = key;
        rq->op = (ks_selector_op_t)o_op;
        rq->values = &p->values[k];
        rq->n_values = n;
        for (j = 0; j < n; j++) {
            const char *v = NULL;
            snprintf(path, sizeof path,
                     "spec.selector.matchExpressions[%u].values[%u]", i, j);
            if (api->object_string(o, path, &v) != KS_FIELD_OK)
                return 0;
            p->values[k++] = v;
        }
        p->sel.n++;
    }
    p->selects = 1;
    return 0;
}

/* object_list's callback: one budget appended to the run's list. */
typedef struct dp_pdb_walk {
    dp_run_t *r;
    int oom;
} dp_pdb_walk_t;

static int dp_pdb_fn(const ks_object_t *o, void *ud)
{
    dp_pdb_walk_t *w = ud;
    dp_run_t *r = w->r;
    const ks_host_api_t *api = r->api;
    void *arr = r->pdbs;
    dp_pdb_t *p;
    int64_t allowed = 0;
    if (dp_grow(&arr, &r->cap_pdbs, r->n_pdbs + 1, sizeof(dp_pdb_t)) != 0) {
        w->oom = 1;
        return 1;
    }
    r->pdbs = arr;
    p = &r->pdbs[r->n_pdbs++];
    memset(p, 0, sizeof *p);
    p->obj = o;
    p->ns = api->object_namespace(o);
    /* An int32 in the API; a budget the disruption controller has not
     * seen yet has none, which reads as 0 (Go's zero value). */
    (void)api->object_int(o, "status.disruptionsAllowed", &allowed);
    p->allowed = allowed;
    if (dp_pdb_compile(api, p) != 0) {
        w->oom = 1;
        return 1;
    }
    return 0;
}

/* List every PodDisruptionBudget of every namespace into r->pdbs (none
 * when the plugin has no store). Returns -1 when out of memory. */
static int dp_load_pdbs(dp_run_t *r)
{
    dp_pdb_walk_t w = {r, 0};
    if (r->pl->pdbs == NULL)
        return 0;
    (void)r->api->object_list(r->pl->pdbs, NULL, NULL, dp_pdb_fn, &w);
    return w.oom ? -1 : 0;
}

/* object_map_iterate's callback over status.disruptedPods: is `name`
 * among the keys? */
typedef struct dp_name_walk {
    const char *name;
    int found;
} dp_name_walk_t;

static int dp_name_fn(const char *key, const char *value, void *ud)
{
    dp_name_walk_t *w = ud;
    (void)value;
    if (strcmp(key, w->name) == 0) {
        w->found = 1;
        return 1;
    }
    return 0;
}

/* Upstream filterPodsWithPDBViolation over pods[0..n) (most important
 * first): violating[i] set to 1 for each pod that would take a matching
 * budget below zero. `allowed` (r->n_pdbs entries) is scratch: the
 * budgets' counters for this node. */
static void dp_mark_pdb_violations(const dp_run_t *r, const ks_pod_t **pods,
                                   uint32_t n, int64_t *allowed,
                                   uint8_t *violating)
{
    const ks_host_api_t *api = r->api;
    uint32_t i, j;
    for (j = 0; j < r->n_pdbs; j++)
        allowed[j] = r->pdbs[j].allowed;
    for (i = 0; i < n; i++) {
        const ks_pod_t *pod = pods[i];
        violating[i] = 0;
        /* A pod with no labels matches no budget. */
        if (pod->labels.n == 0)
            continue;
        for (j = 0; j < r->n_pdbs; j++) {
            const dp_pdb_t *p = &r->pdbs[j];
            dp_name_walk_t w = {pod->name, 0};
            if (!p->selects || strcmp(p->ns, pod->ns) != 0 ||
                !ks_selector_matches(&p->sel, &pod->labels))
                continue;
            /* Already in disruptedPods: the API server counted it. */
            (void)api->object_map_iterate(p->obj, "status.disruptedPods",
                                          dp_name_fn, &w);
            if (w.found)
                continue;
            if (--allowed[j] < 0)
                violating[i] = 1;
        }
    }
}

/* --- victims on one node (upstream SelectVictimsOnNode) ------------------- */

/* The outcome of the victim search on one node. On KS_SUCCESS, victims and
 * n_victims are set (the array is the caller's); otherwise reasons holds
 * the failing status's reasons (the caller's, may be empty). */
typedef struct dp_node_result {
    ks_code_t code;
    dp_reasons_t reasons;
    const ks_pod_t **victims;
    uint32_t n_victims;
    uint32_t n_pdb_violations; /* victims that were PDB-violating */
} dp_node_result_t;

/* Run one host call with the run's scratch status. Returns its code; on
 * failure *reasons (empty on entry) receives copies of every reason of the
 * status. Running out of memory is an error with the reason
 * "out of memory". */
enum { DP_CALL_FILTERS, DP_CALL_ADD, DP_CALL_REMOVE };

static ks_code_t dp_call(dp_run_t *r, int which, ks_cycle_state_t *cs,
                         const ks_node_info_t *ni, const ks_pod_t *other,
                         dp_reasons_t *reasons)
{
    const ks_host_api_t *api = r->api;
    ks_status_t *st;
    ks_code_t code;
    if (r->scratch == NULL && (r->scratch = api->status_new(r->h)) == NULL) {
        (void)dp_reasons_push(reasons, "out of memory");
        return KS_ERROR;
    }
    st = r->scratch;
    switch (which) {
    case DP_CALL_ADD:
        code = api->run_prefilter_add_pod(r->h, cs, r->pod, other, ni, st);
        break;
    case DP_CALL_REMOVE:
        code = api->run_prefilter_remove_pod(r->h, cs, r->pod, other, ni, st);
        break;
    default:
        code = api->run_filters(r->h, cs, r->pod, ni, st);
        break;
    }
    if (code != KS_SUCCESS && dp_reasons_from_status(api, st, reasons) != 0) {
        dp_reasons_free(reasons);
        (void)dp_reasons_push(reasons, "out of memory");
        code = KS_ERROR;
    }
    return code;
}

static void dp_select_victims(dp_run_t *r, const ks_node_info_t *ni,
                              dp_node_result_t *out)
{
    const ks_host_api_t *api = r->api;
    const ks_pod_t **potential = NULL, **victims = NULL, **order = NULL;
    ks_node_info_t *copy = NULL;
    ks_cycle_state_t *state = NULL;
    int64_t *allowed = NULL;
    uint8_t *violating = NULL;
    uint32_t n_potential = 0, n_victims = 0, n_violating = 0, n_violations = 0;
    uint32_t i, k;
    dp_reasons_t reasons = {0};
    ks_code_t code;
    void *arr;

    memset(out, 0, sizeof *out);

    /* Every pod of lower priority than the preemptor may be a victim. The
     * arrays are the run's scratch; only the victims of a candidate are
     * copied out. */
    if (ni->n_pods > 0) {
        if ((uint64_t)ni->n_pods * 3 > UINT32_MAX)
            goto oom;
        arr = r->pods;
        if (dp_grow(&arr, &r->cap_pods, ni->n_pods * 3, sizeof(*r->pods)) !=
            0)
            goto oom;
        r->pods = arr;
        arr = r->flags;
        if (dp_grow(&arr, &r->cap_flags, ni->n_pods, 1) != 0)
            goto oom;
        r->flags = arr;
        potential = r->pods;
        order = r->pods + ni->n_pods;
        victims = r->pods + 2 * (size_t)ni->n_pods;
        violating = r->flags;
    }
    if (r->n_pdbs > 0) {
        arr = r->allowed;
        if (dp_grow(&arr, &r->cap_allowed, r->n_pdbs, sizeof(*r->allowed)) !=
            0)
            goto oom;
        r->allowed = arr;
        allowed = r->allowed;
    }
    for (i = 0; i < ni->n_pods; i++)
        if (ni->pods[i]->priority < r->pod->priority)
            potential[n_potential++] = ni->pods[i];
    if (n_potential == 0) {
        out->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        if (dp_reasons_push(&out->reasons, DP_MSG_NO_VICTIMS) != 0)
            goto oom;
        goto done;
    }

    copy = api->nodeinfo_clone(r->h, ni);
    state = api->cycle_state_clone(r->h, r->cs);
    if (copy == NULL || state == NULL)
        goto oom;

    for (i = 0; i < n_potential; i++) {
        api->nodeinfo_remove_pod(r->h, copy, potential[i]);
        code = dp_call(r, DP_CALL_REMOVE, state, copy, potential[i], &reasons);
        if (code != KS_SUCCESS) {
            out->code = KS_ERROR;
            out->reasons = reasons;
            goto done;
        }
    }

    /* Without all of them the pod must fit, or the node is no candidate. */
    code = dp_call(r, DP_CALL_FILTERS, state, copy, NULL, &reasons);
    if (code != KS_SUCCESS) {
        out->code = code;
        out->reasons = reasons;
        goto done;
    }

    /* Reprieve as many as possible: the PDB-violating pods first, then the
     * others, each group most important first. */
    dp_sort_by_importance(potential, n_potential, r->now_ms);
    if (r->n_pdbs > 0)
        dp_mark_pdb_violations(r, potential, n_potential, allowed, violating);
    else
        memset(violating, 0, n_potential);
    for (i = 0; i < n_potential; i++)
        if (violating[i])
            order[n_violating++] = potential[i];
    for (i = 0, k = n_violating; i < n_potential; i++)
        if (!violating[i])
            order[k++] = potential[i];
    for (i = 0; i < n_potential; i++) {
        const ks_pod_t *p = order[i];
        api->nodeinfo_add_pod(r->h, copy, p);
        code = dp_call(r, DP_CALL_ADD, state, copy, p, &reasons);
        if (code != KS_SUCCESS) {
            out->code = KS_ERROR;
            out->reasons = reasons;
            goto done;
        }
        code = dp_call(r, DP_CALL_FILTERS, state, copy, NULL, &reasons);
        if (code == KS_SUCCESS)
            continue;
        dp_reasons_free(&reasons);
        api->nodeinfo_remove_pod(r->h, copy, p);
        code = dp_call(r, DP_CALL_REMOVE, state, copy, p, &reasons);
        if (code != KS_SUCCESS) {
            out->code = KS_ERROR;
            out->reasons = reasons;
            goto done;
        }
        victims[n_victims++] = p;
        if (i < n_violating)
            n_violations++;
    }
    /* Both groups gave victims: back to the order of importance. */
    if (n_violating > 0 && n_violating < n_potential)
        dp_sort_by_importance(victims, n_victims, r->now_ms);
    out->code = KS_SUCCESS;
    if (n_victims > 0) {
        out->victims = malloc(sizeof(*victims) * n_victims);
        if (out->victims == NULL)
            goto oom;
        memcpy(out->victims, victims, sizeof(*victims) * n_victims);
    }
    out->n_victims = n_victims;
    out->n_pdb_violations = n_violations;
    goto done;

oom:
    dp_reasons_free(&out->reasons);
    out->code = KS_ERROR;
    (void)dp_reasons_push(&out->reasons, "out of memory");
done:
    if (state != NULL)
        api->cycle_state_free(r->h, state);
    if (copy != NULL)
        api->nodeinfo_free(r->h, copy);
}

/* --- dry run (upstream DryRunPreemption) ---------------------------------- */

/* Number of candidates to look for among n potential nodes. */
static uint32_t dp_num_candidates(const dp_plugin_t *pl, uint32_t n)
{
    int64_t k = (int64_t)n * pl->min_percentage / 100;
    if (k < pl->min_absolute)
        k = pl->min_absolute;
    if (k > (int64_t)n)
        k = n;
    return (uint32_t)k;
}

static int dp_dry_run(dp_run_t *r, const ks_node_info_t *const *nodes,
                      uint32_t n, uint32_t offset, uint32_t want)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = nodes[(offset + i) % n];
        dp_node_result_t res;
        dp_select_victims(r, ni, &res);
        if (res.code == KS_SUCCESS && res.n_victims > 0) {
            if (dp_add_candidate(r, ni->node->name, res.victims,
                                 res.n_victims, res.n_pdb_violations) != 0)
                return -1;
            if (r->n_cands >= want)
                break;
            continue;
        }
        if (res.code == KS_SUCCESS) {
            dp_buf_t b = {0};
            free(res.victims);
            dp_buf_printf(&b, "expected at least one victim pod on node \"%s\"",
                          ni->node->name);
            if (b.oom || dp_reasons_push(&res.reasons, b.s) != 0) {
                free(b.s);
                return -1;
            }
            free(b.s);
            res.code = KS_ERROR;
        }
        if (res.code == KS_ERROR) {
            /* The node's error, as upstream's status-as-error: every reason
             * joined. */
            char *joined = dp_reasons_join(&res.reasons);
            int rc = joined != NULL ? dp_add_error(r, joined) : -1;
            free(joined);
            if (rc != 0) {
                dp_reasons_free(&res.reasons);
                return -1;
            }
        }
        if (dp_add_verdict(r, ni->node->name, res.code, &res.reasons) != 0)
            return -1;
    }
    return 0;
}

/* --- messages ------------------------------------------------------------- */

static int dp_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "0/N nodes are available: C1 R1, C2 R2." over the run's verdicts, with N
 * the number of verdicts (upstream FitError.Error without a PostFilter
 * message; the SDK's ks_fit_error_write, which the host's FitError uses
 * too). */
static void dp_fit_error(const dp_run_t *r, dp_buf_t *b)
{
    const char **reasons = NULL;
    ks_reason_count_t *entries = NULL;
    char *text = NULL;
    size_t total = 0, len;
    uint32_t n_reasons = 0, n_entries = 0, i, j;

    for (i = 0; i < r->n_verdicts; i++)
        total += r->verdicts[i].reasons.n;
    if (total > 0) {
        reasons = malloc(sizeof(*reasons) * total);
        entries = malloc(sizeof(*entries) * total);
        if (reasons == NULL || entries == NULL) {
            b->oom = 1;
            goto out;
        }
    }
    for (i = 0; i < r->n_verdicts; i++)
        for (j = 0; j < r->verdicts[i].reasons.n; j++)
            reasons[n_reasons++] = r->verdicts[i].reasons.v[j];
    /* Equal reasons (by text) side by side, then one entry per run. */
    if (n_reasons > 1)
        qsort(reasons, n_reasons, sizeof(*reasons), dp_cmp_str);
    for (i = 0; i < n_reasons; i = j) {
        for (j = i + 1; j < n_reasons && strcmp(reasons[i], reasons[j]) == 0;)
            j++;
        entries[n_entries].reason = reasons[i];
        entries[n_entries].count = j - i;
        n_entries++;
    }
    len = ks_fit_error_write(NULL, 0, r->n_verdicts, entries, n_entries,
                             NULL);
    text = malloc(len + 1);
    if (text == NULL) {
        b->oom = 1;
        goto out;
    }
    ks_fit_error_write(text, len + 1, r->n_verdicts, entries, n_entries, NULL);
    dp_buf_printf(b, "%s", text);
out:
    free(text);
    free(entries);
    free(reasons);
}

/* The errors of the dry run as one message: the message itself when there
 * is one, "[a, b]" for several distinct ones (upstream's error aggregate). */
static void dp_aggregate_errors(const dp_run_t *r, dp_buf_t *b)
{
    uint32_t i, j, distinct = 0;
    dp_buf_t list = {0};
    if (r->n_errs == 1) {
        dp_buf_printf(b, "%s", r->errs[0]);
        return;
    }
    for (i = 0; i < r->n_errs; i++) {
        int seen = 0;
        for (j = 0; j < i; j++)
            if (strcmp(r->errs[i], r->errs[j]) == 0)
                seen = 1;
        if (seen)
            continue;
        dp_buf_printf(&list, "%s%s", distinct ? ", " : "", r->errs[i]);
        distinct++;
    }
    if (list.oom)
        b->oom = 1;
    else if (distinct == 1)
        dp_buf_printf(b, "%s", list.s);
    else
        dp_buf_printf(b, "[%s]", list.s);
    free(list.s);
}

/* Attach "preemption: <b>" to st and return code; "out of memory" when the
 * message could not be built. */
static ks_code_t dp_fail(const ks_host_api_t *api, ks_status_t *st,
                         ks_code_t code, dp_buf_t *b)
{
    if (b->oom || b->s == NULL) {
        api->status_reason(st, "preemption: out of memory");
        free(b->s);
        return KS_ERROR;
    }
    api->status_reasonf(st, "preemption: %s", b->s);
    free(b->s);
    return code;
}

/* --- choosing a candidate (upstream pickOneNodeForPreemption) ------------- */

/* The earliest start among the highest-priority victims of c. */
static int64_t dp_earliest_start_of_highest(const dp_candidate_t *c,
                                            int64_t now_ms)
{
    int32_t max_prio = c->victims[0]->priority;
    int64_t earliest = dp_start_ms(c->victims[0], now_ms);
    uint32_t i;
    for (i = 0; i < c->n_victims; i++) {
        const ks_pod_t *p = c->victims[i];
        if (p->priority == max_prio) {
            if (dp_start_ms(p, now_ms) < earliest)
                earliest = dp_start_ms(p, now_ms);
        } else if (p->priority > max_prio) {
            max_prio = p->priority;
            earliest = dp_start_ms(p, now_ms);
        }
    }
    return earliest;
}

/* Keep, in idx[0..*n), the candidates with the minimum key. */
static void dp_keep_min(const dp_candidate_t *cands, uint32_t *idx,
                        uint32_t *n, int64_t (*key)(const dp_candidate_t *))
{
    int64_t best = INT64_MAX;
    uint32_t i, k = 0;
    for (i = 0; i < *n; i++) {
        int64_t v = key(&cands[idx[i]]);
        if (v < best) {
            best = v;
            k = 0;
        }
        if (v == best)
            idx[k++] = idx[i];
    }
    *n = k;
}

static int64_t dp_key_pdb(const dp_candidate_t *c)
{
    return c->n_pdb_violations;
}

static int64_t dp_key_highest(const dp_candidate_t *c)
{
    return c->victims[0]->priority; /* victims are most important first */
}

static int64_t dp_key_sum(const dp_candidate_t *c)
{
    int64_t sum = 0;
    uint32_t i;
    for (i = 0; i < c->n_victims; i++)
        sum += (int64_t)c->victims[i]->priority + (int64_t)INT32_MAX + 1;
    return sum;
}

static int64_t dp_key_count(const dp_candidate_t *c)
{
    return c->n_victims;
}

/* Index of the chosen candidate (n_cands >= 1). */
static uint32_t dp_pick(const dp_run_t *r, uint32_t *idx)
{
    int64_t (*const keys[])(const dp_candidate_t *) = {
        dp_key_pdb, dp_key_highest, dp_key_sum, dp_key_count};
    uint32_t n = r->n_cands, i, k, best;
    int64_t latest;

    if (n == 1)
        return 0;
    for (i = 0; i < n; i++)
        idx[i] = i;
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        dp_keep_min(r->cands, idx, &n, keys[k]);
        if (n == 1)
            return idx[0];
    }
    /* The latest "earliest start of the highest-priority victims"; the
     * first one on ties. */
    best = idx[0];
    latest = dp_earliest_start_of_highest(&r->cands[idx[0]], r->now_ms);
    for (i = 1; i < n; i++) {
        int64_t t = dp_earliest_start_of_highest(&r->cands[idx[i]], r->now_ms);
        if (t > latest) {
            latest = t;
            best = idx[i];
        }
    }
    return best;
}

/* --- extenders (upstream Evaluator.callExtenders) ------------------------- */

/* Hand the candidates to the extenders with a preemptVerb. KS_SKIP: none
 * is interested, go on; KS_PENDING: return it, PostFilter comes again
 * (dp_ext_result); KS_ERROR with st filled. */
static ks_code_t dp_ext_ask(dp_run_t *r, ks_status_t *st)
{
    const ks_host_api_t *api = r->api;
    ks_preempt_candidate_t *pc;
    ks_status_t *hs;
    ks_code_t code;
    uint32_t i;
    if (!dp_api_has_extenders(api))
        return KS_SKIP;
    pc = calloc(r->n_cands, sizeof *pc);
    hs = api->status_new(r->h);
    if (pc == NULL || hs == NULL) {
        free(pc);
        if (hs != NULL)
            api->status_free(hs);
        api->status_reason(st, "preemption: out of memory");
        return KS_ERROR;
    }
    for (i = 0; i < r->n_cands; i++) {
        pc[i].node = r->cands[i].node;
        pc[i].victims = r->cands[i].victims;
        pc[i].n_victims = r->cands[i].n_victims;
        pc[i].n_pdb_violations = r->cands[i].n_pdb_violations;
    }
    code = api->extenders_preempt(r->h, r->pod, pc, r->n_cands, hs);
    if (code == KS_ERROR)
        api->status_reasonf(st, "preemption: %s", api->status_message(hs));
    else if (code != KS_PENDING)
        code = KS_SKIP;
    api->status_free(hs);
    free(pc);
    return code;
}

/* PostFilter called again after the extenders answered: the candidates
 * they kept become the run's. KS_SKIP: nothing was asked (a first call);
 * KS_SUCCESS: r->cands set; KS_ERROR with st filled. */
static ks_code_t dp_ext_result(dp_run_t *r, ks_status_t *st)
{
    const ks_host_api_t *api = r->api;
    const ks_preempt_candidate_t *kept = NULL;
    ks_status_t *hs;
    ks_code_t code;
    uint32_t i, n = 0;
    if (!dp_api_has_extenders(api))
        return KS_SKIP;
    hs = api->status_new(r->h);
    if (hs == NULL) {
        api->status_reason(st, "preemption: out of memory");
        return KS_ERROR;
    }
    code = api->extenders_preempt_result(r->h, r->pod, &kept, &n, hs);
    if (code == KS_ERROR)
        api->status_reasonf(st, "preemption: %s", api->status_message(hs));
    api->status_free(hs);
    if (code != KS_SUCCESS)
        return code == KS_ERROR ? KS_ERROR : KS_SKIP;
    for (i = 0; i < n; i++) {
        const ks_pod_t **v = malloc(sizeof(*v) * (kept[i].n_victims + 1));
        if (v == NULL) {
            api->status_reason(st, "preemption: out of memory");
            return KS_ERROR;
        }
        memcpy(v, kept[i].victims, sizeof(*v) * kept[i].n_victims);
        /* The extender's count, as upstream keeps its NumPDBViolations
         * (clamped to the candidate's range). */
        if (dp_add_candidate(r, kept[i].node, v, kept[i].n_victims,
                             kept[i].n_pdb_violations < 0 ? 0
                             : kept[i].n_pdb_violations > UINT32_MAX
                                 ? UINT32_MAX
                                 : (uint32_t)kept[i].n_pdb_violations) != 0) {
            api->status_reason(st, "preemption: out of memory");
            return KS_ERROR;
        }
    }
    return KS_SUCCESS;
}

/* --- executing the choice (upstream prepareCandidate) --------------------- */

static ks_code_t dp_prepare(dp_run_t *r, const dp_candidate_t *c,
                            ks_status_t *st)
{
    const ks_host_api_t *api = r->api;
    const ks_pod_t *stack[32];
    const ks_pod_t **nominated = stack;
    uint32_t i, n;

    for (i = 0; i < c->n_victims; i++) {
        const ks_pod_t *v = c->victims[i];
        ks_waiting_pod_t *wp = api->waiting_pod_get(r->h, v->uid);
        char msg[512];
        if (wp != NULL) {
            /* As itself: since ABI 1.1 a name that is no Permit plugin of
             * the victim's profile is refused. */
            if (KS_API_HAS(api, waiting_pod_reject_as))
                api->waiting_pod_reject_as(r->h, wp, "preempted");
            else
                api->waiting_pod_reject(wp, DP_NAME, "preempted");
        } else if (api->delete_pod(r->h, v) != 0) {
            api->status_reasonf(st, "preemption: deleting pod %s/%s failed",
                                v->ns, v->name);
            return KS_ERROR;
        }
        snprintf(msg, sizeof msg, "Preempted by %s/%s on node %s",
                 r->pod->ns, r->pod->name, c->node);
        api->event(r->h, v, "Normal", "Preempted", msg);
    }

    /* Pods of lower priority nominated to this node may no longer fit on it:
     * drop their nomination so that they look for another place. */
    n = api->nominated_pods(r->h, c->node, stack,
                            (uint32_t)(sizeof stack / sizeof stack[0]));
    if (n > sizeof stack / sizeof stack[0]) {
        nominated = malloc(sizeof(*nominated) * n);
        if (nominated == NULL) {
            api->log(r->h, KS_LOG_WARN,
                     "out of memory clearing nominations on node %s", c->node);
            return KS_SUCCESS; /* not critical, as upstream */
        }
        n = api->nominated_pods(r->h, c->node, nominated, n);
    }
    for (i = 0; i < n; i++) {
        const ks_pod_t *p = nominated[i];
        if (p->priority < r->pod->priority && p->nominated_node_name != NULL &&
            p->nominated_node_name[0] != '\0' &&
            api->set_nominated_node(r->h, p, "") != 0)
            api->log(r->h, KS_LOG_WARN,
                     "cannot clear the nominated node of pod %s/%s", p->ns,
                     p->name);
    }
    if (nominated != stack)
        free(nominated);
    return KS_SUCCESS;
}

/* --- PostFilter ----------------------------------------------------------- */

/* Upstream PodEligibleToPreemptOthers: NULL when the pod may preempt,
 * otherwise why not. */
static const char *dp_ineligible(const dp_run_t *r,
                                 const ks_node_status_map_t *statuses)
{
    const char *nom = r->pod->nominated_node_name;
    const ks_node_info_t *ni;
    uint32_t i;
    if (r->pod->preempt_never)
        return DP_MSG_NEVER;
    if (nom == NULL || nom[0] == '\0')
        return NULL;
    if (r->api->node_status_code(statuses, nom) ==
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
        return NULL;
    ni = r->api->snapshot_get(r->h, nom);
    if (ni == NULL)
        return NULL;
    for (i = 0; i < ni->n_pods; i++)
        if (ni->pods[i]->deleting && ni->pods[i]->priority < r->pod->priority)
            return DP_MSG_TERMINATING;
    return NULL;
}

static void dp_clear_own_nomination(const dp_run_t *r)
{
    if (r->pod->nominated_node_name != NULL &&
        r->pod->nominated_node_name[0] != '\0' &&
        r->api->set_nominated_node(r->h, r->pod, "") != 0)
        r->api->log(r->h, KS_LOG_WARN,
                    "cannot clear the nominated node of pod %s/%s",
                    r->pod->ns, r->pod->name);
}

static ks_code_t dp_post_filter(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                const ks_node_status_map_t *statuses,
                                const char **nominated_node, ks_status_t *st)
{
    const dp_plugin_t *pl = self;
    const ks_host_api_t *api = pl->api;
    dp_run_t r;
    dp_buf_t msg = {0};
    const ks_node_info_t **potential = NULL;
    uint32_t *idx = NULL;
    const char *ineligible;
    uint32_t n_nodes, n_potential = 0, i, offset, want, chosen;
    ks_code_t code;

    memset(&r, 0, sizeof r);
    r.pl = pl;
    r.api = api;
    r.h = pl->h;
    r.cs = cs;
    r.pod = pod;
    r.now_ms = dp_wall_now_ms();

    /* Called again once the extenders answered: their candidates. */
    code = dp_ext_result(&r, st);
    if (code == KS_ERROR)
        goto out;
    if (code == KS_SUCCESS) {
        if (r.n_cands == 0) {
            api->status_reason(st, "preemption: " DP_MSG_NO_CANDIDATE);
            code = KS_UNSCHEDULABLE;
            goto out;
        }
        goto choose;
    }

    ineligible = dp_ineligible(&r, statuses);
    if (ineligible != NULL) {
        api->status_reasonf(st, "preemption: %s", ineligible);
        return KS_UNSCHEDULABLE;
    }

    n_nodes = api->snapshot_num_nodes(pl->h);
    if (n_nodes == 0) {
        api->status_reason(st, "preemption: no nodes available");
        return KS_ERROR;
    }
    potential = malloc(sizeof(*potential) * n_nodes);
    if (potential == NULL)
        goto oom;
    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = api->snapshot_node_at(pl->h, i);
        if (ni == NULL || ni->node == NULL)
            continue;
        if (api->node_status_code(statuses, ni->node->name) ==
            KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            dp_reasons_t reasons = {0};
            if (dp_reasons_push(&reasons, DP_MSG_NOT_HELPFUL) != 0 ||
                dp_add_verdict(&r, ni->node->name,
                               KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                               &reasons) != 0) {
                dp_reasons_free(&reasons);
                goto oom;
            }
            continue;
        }
        potential[n_potential++] = ni;
    }

    if (n_potential > 0) {
        if (dp_load_pdbs(&r) != 0)
            goto oom;
        offset = api->rand_below(pl->h, n_potential) % n_potential;
        want = dp_num_candidates(pl, n_potential);
        if (dp_dry_run(&r, potential, n_potential, offset, want) != 0)
            goto oom;
    }

    if (r.n_cands == 0) {
        if (r.n_errs > 0) {
            dp_aggregate_errors(&r, &msg);
            code = dp_fail(api, st, KS_ERROR, &msg);
        } else {
            /* The pod keeps no nomination when preemption cannot help. */
            dp_clear_own_nomination(&r);
            dp_fit_error(&r, &msg);
            code = dp_fail(api, st, KS_UNSCHEDULABLE, &msg);
        }
        goto out;
    }

    /* The extenders with a preemptVerb narrow the candidates first. */
    code = dp_ext_ask(&r, st);
    if (code != KS_SKIP)
        goto out;

choose:
    idx = malloc(sizeof(*idx) * r.n_cands);
    if (idx == NULL)
        goto oom;
    chosen = dp_pick(&r, idx);
    code = dp_prepare(&r, &r.cands[chosen], st);
    if (code == KS_SUCCESS)
        *nominated_node = api->intern(pl->h, r.cands[chosen].node);
    goto out;

oom:
    api->status_reason(st, "preemption: out of memory");
    code = KS_ERROR;
out:
    free(idx);
    free(potential);
    dp_run_free(&r);
    return code;
}

/* --- create / destroy ----------------------------------------------------- */

/* Read an int32 arg at `a`; 0 on success. */
static int dp_arg_int32(const ks_args_t *a, const char *what, int32_t *out,
                        char *err, size_t errlen)
{
    int64_t v;
    if (ks_args_int64(a, what, &v, err, errlen) != 0)
        return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Invalid value: %lld: out of the "
                 "int32 range",
                 a->line, a->column, what, (long long)v);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* Append one validation error to err ("; " between errors). */
static void dp_err_append(char *err, size_t errlen, const ks_args_t *at,
                          const char *field, int32_t value, const char *detail)
{
    size_t off = strlen(err);
    if (off >= errlen)
        return;
    if (at != NULL)
        snprintf(err + off, errlen - off,
                 "%sline %u, column %u: %s: Invalid value: %d: %s",
                 off ? "; " : "", at->line, at->column, field, (int)value,
                 detail);
    else
        snprintf(err + off, errlen - off, "%s%s: Invalid value: %d: %s",
                 off ? "; " : "", field, (int)value, detail);
}

static int dp_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const allowed[] = {"minCandidateNodesPercentage",
                                          "minCandidateNodesAbsolute",
                                          "apiVersion", "kind", NULL};
    const ks_args_t *a_pct = ks_args_get(args, "minCandidateNodesPercentage");
    const ks_args_t *a_abs = ks_args_get(args, "minCandidateNodesAbsolute");
    const ks_args_t *a_kind = ks_args_get(args, "kind");
    int32_t pct = DP_DEFAULT_MIN_PERCENTAGE, abs_ = DP_DEFAULT_MIN_ABSOLUTE;
    dp_plugin_t *pl;
    char tmp[1];

    if (errlen == 0) {
        err = tmp;
        errlen = sizeof tmp;
    }
    err[0] = '\0';
    if (ks_args_check_keys(args, allowed, err, errlen) != 0)
        return -1;
    if (a_kind != NULL &&
        (a_kind->kind != KS_ARGS_SCALAR ||
         strcmp(a_kind->scalar, "DefaultPreemptionArgs") != 0)) {
        snprintf(err, errlen,
                 "line %u, column %u: kind: want DefaultPreemptionArgs",
                 a_kind->line, a_kind->column);
        return -1;
    }
    if (a_pct != NULL &&
        dp_arg_int32(a_pct, "minCandidateNodesPercentage", &pct, err,
                     errlen) != 0)
        return -1;
    if (a_abs != NULL &&
        dp_arg_int32(a_abs, "minCandidateNodesAbsolute", &abs_, err,
                     errlen) != 0)
        return -1;

    if (pct < 0 || pct > 100)
        dp_err_append(err, errlen, a_pct, "minCandidateNodesPercentage", pct,
                      "not in valid range [0, 100]");
    if (abs_ < 0)
        dp_err_append(err, errlen, a_abs, "minCandidateNodesAbsolute", abs_,
                      "not in valid range [0, inf)");
    if (pct == 0 && abs_ == 0) {
        dp_err_append(err, errlen, a_pct, "minCandidateNodesPercentage", pct,
                      "cannot be zero at the same time as "
                      "minCandidateNodesAbsolute");
        dp_err_append(err, errlen, a_abs, "minCandidateNodesAbsolute", abs_,
                      "cannot be zero at the same time as "
                      "minCandidateNodesPercentage");
    }
    if (err[0] != '\0')
        return -1;

    /* The budgets' store: declared in the descriptor, so a host with the
     * cluster-object calls (ABI 1.3) always has it. */
    if (!KS_API_HAS(api, store_get) || !KS_API_HAS(api, object_list) ||
        !KS_API_HAS(api, object_map_iterate)) {
        snprintf(err, errlen,
                 "the host has no cluster-object calls (ABI 1.3) to read "
                 "PodDisruptionBudgets with");
        return -1;
    }
    pl = calloc(1, sizeof *pl);
    if (pl == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pl->pdbs = api->store_get(h, "policy", "v1", "poddisruptionbudgets");
    if (pl->pdbs == NULL) {
        snprintf(err, errlen,
                 "the host gave no store for poddisruptionbudgets.policy/v1, "
                 "which the plugin declares");
        free(pl);
        return -1;
    }
    pl->api = api;
    pl->h = h;
    pl->min_percentage = pct;
    pl->min_absolute = abs_;
    *self = pl;
    return 0;
}

static void dp_destroy(void *self)
{
    free(self);
}

KS_PLUGIN_DEFINE(DP_NAME, DP_VERSION,
                 .create = dp_create,
                 .destroy = dp_destroy,
                 .post_filter = dp_post_filter,
                 .resources = dp_resources,
                 .n_resources = sizeof dp_resources / sizeof dp_resources[0]);
