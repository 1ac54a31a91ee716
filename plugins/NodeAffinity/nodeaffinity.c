/*
 * NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore), as
 * upstream v1.24.1:
 *  - Filter: the node must match the args' addedAffinity required selector
 *    ("node(s) didn't match scheduler-enforced node affinity"), then the
 *    pod's nodeSelector and its required node affinity ("node(s) didn't match
 *    Pod's node affinity/selector"), both UnschedulableAndUnresolvable.
 *  - PreFilter: when every required term names nodes with a matchFields
 *    `metadata.name In` requirement, restrict Filter to those nodes (the
 *    union over terms of each term's intersection).
 *  - Score: the sum of the weights of the preferred terms (the pod's and
 *    addedAffinity's) the node matches; normalised to 0..100 by the highest.
 *
 * Selector semantics follow upstream's nodeaffinity package: a term with no
 * requirements matches nothing; a term with an invalid requirement (wrong
 * number of values, a non-integer for Gt/Lt, a field operator other than
 * In/NotIn) never matches; required terms are ORed, requirements ANDed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define PREFILTER_KEY "PreFilterNodeAffinity"
#define PRESCORE_KEY "PreScoreNodeAffinity"
#define REASON_POD "node(s) didn't match Pod's node affinity/selector"
#define REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"

typedef struct node_affinity {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_node_selector_t *added_required; /* NULL when none */
    const ks_preferred_scheduling_term_t *added_preferred;
    uint32_t n_added_preferred;
    void **blocks; /* every allocation made for the args */
    uint32_t n_blocks;
} node_affinity_t;

/* What Filter checks; points into the pod. Immutable once written. */
typedef struct na_prefilter {
    const ks_labels_t *node_selector;
    const ks_node_selector_t *required; /* NULL when absent */
} na_prefilter_t;

/* What Score checks; points into the pod. Immutable once written. */
typedef struct na_prescore {
    const ks_preferred_scheduling_term_t *preferred;
    uint32_t n_preferred;
} na_prescore_t;

/* --- matching ---------------------------------------------------------------- */

static int expr_valid(const ks_requirement_t *r)
{
    int64_t v;
    switch (r->op) {
    case KS_OP_IN:
    case KS_OP_NOT_IN:
        return r->n_values > 0;
    case KS_OP_EXISTS:
    case KS_OP_DOES_NOT_EXIST:
        return r->n_values == 0;
    case KS_OP_GT:
    case KS_OP_LT:
        return r->n_values == 1 && ks_parse_int64(r->values[0], &v) == 0;
    }
    return 0;
}

static int field_valid(const ks_requirement_t *r)
{
    return (r->op == KS_OP_IN || r->op == KS_OP_NOT_IN) && r->n_values == 1;
}

/* The term's reason for being invalid, or NULL when it is valid. */
static const char *term_problem(const ks_node_selector_term_t *t)
{
    uint32_t i;
    for (i = 0; i < t->n_match_expressions; i++)
        if (!expr_valid(&t->match_expressions[i]))
            return "invalid matchExpressions requirement";
    for (i = 0; i < t->n_match_fields; i++)
        if (!field_valid(&t->match_fields[i]))
            return "invalid matchFields requirement";
    return NULL;
}

static int term_empty(const ks_node_selector_term_t *t)
{
    return t->n_match_expressions == 0 && t->n_match_fields == 0;
}

/* A field selector sees only metadata.name; other keys read as "". */
static int field_matches(const ks_requirement_t *r, const ks_node_t *node)
{
    const char *v = strcmp(r->key, "metadata.name") == 0 ? node->name : "";
    int eq = r->values[0] == v || strcmp(r->values[0], v) == 0;
    return r->op == KS_OP_IN ? eq : !eq;
}

/* A valid, non-empty term against a node. Every string of a term (the
 * pod's, or the args' through intern) is interned: compared by address. */
static int term_matches(const ks_node_selector_term_t *t, const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < t->n_match_expressions; i++)
        if (!ks_requirement_matches_interned(&t->match_expressions[i],
                                             &node->labels))
            return 0;
    for (i = 0; i < t->n_match_fields; i++)
        if (!field_matches(&t->match_fields[i], node))
            return 0;
    return 1;
}

/* Required selector: ORed terms, empty and invalid terms skipped. */
static int selector_matches(const ks_node_selector_t *s, const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < s->n_terms; i++) {
        const ks_node_selector_term_t *t = &s->terms[i];
        if (term_empty(t) || term_problem(t) != NULL)
            continue;
        if (term_matches(t, node))
            return 1;
    }
    return 0;
}

/* Sum of the weights of matching preferred terms (weight 0 and empty terms
 * skipped). The terms have been validated. */
static int64_t preferred_score(const ks_preferred_scheduling_term_t *p,
                               uint32_t n, const ks_node_t *node)
{
    int64_t sum = 0;
    uint32_t i;
    for (i = 0; i < n; i++) {
        if (p[i].weight == 0 || term_empty(&p[i].preference))
            continue;
        if (term_matches(&p[i].preference, node))
            sum += p[i].weight;
    }
    return sum;
}

/* Index of the first invalid preferred term, or -1. */
static int64_t preferred_invalid(const ks_preferred_scheduling_term_t *p,
                                 uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        if (p[i].weight == 0 || term_empty(&p[i].preference))
            continue;
        if (term_problem(&p[i].preference) != NULL)
            return i;
    }
    return -1;
}

/* --- args ---------------------------------------------------------------------- */

static void *na_alloc(node_affinity_t *na, size_t size)
{
    void **nb;
    void *p = calloc(1, size ? size : 1);
    if (p == NULL)
        return NULL;
    nb = realloc(na->blocks, (na->n_blocks + 1) * sizeof *nb);
    if (nb == NULL) {
        free(p);
        return NULL;
    }
    na->blocks = nb;
    na->blocks[na->n_blocks++] = p;
    return p;
}

static int na_errf(char *err, size_t errlen, const ks_args_t *at,
                   const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int na_errf(char *err, size_t errlen, const ks_args_t *at,
                   const char *fmt, ...)
{
    va_list ap;
    int off;
    if (errlen == 0)
        return -1;
    off = snprintf(err, errlen, "line %u, column %u: ", at ? at->line : 0,
                   at ? at->column : 0);
    if (off < 0 || (size_t)off >= errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
    va_end(ap);
    return -1;
}

#define OOM(err, errlen) (snprintf(err, errlen, "out of memory"), -1)

static int parse_op(const char *s, ks_selector_op_t *op)
{
    static const struct {
        const char *name;
        ks_selector_op_t op;
    } ops[] = {{"In", KS_OP_IN},         {"NotIn", KS_OP_NOT_IN},
               {"Exists", KS_OP_EXISTS}, {"DoesNotExist", KS_OP_DOES_NOT_EXIST},
               {"Gt", KS_OP_GT},         {"Lt", KS_OP_LT}};
    size_t i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(s, ops[i].name) == 0) {
            *op = ops[i].op;
            return 0;
        }
    return -1;
}

/* Parse a list of NodeSelectorRequirements at `path`. */
static int parse_reqs(node_affinity_t *na, const ks_args_t *a,
                      const char *path, int fields,
                      const ks_requirement_t **out, uint32_t *n, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"key", "operator", "values", NULL};
    ks_requirement_t *reqs;
    uint32_t i, j;
    *out = NULL;
    *n = 0;
    if (a == NULL)
        return 0;
    if (a->kind != KS_ARGS_SEQ)
        return na_errf(err, errlen, a, "%s: must be a list", path);
    reqs = na_alloc(na, a->n * sizeof *reqs);
    if (reqs == NULL)
        return OOM(err, errlen);
    for (i = 0; i < a->n; i++) {
        const ks_args_t *e = a->children[i], *k, *o, *v;
        const char **vals;
        ks_requirement_t *r = &reqs[i];
        if (e->kind != KS_ARGS_MAP)
            return na_errf(err, errlen, e, "%s[%u]: must be a mapping", path,
                           i);
        if (ks_args_check_keys(e, keys, err, errlen) != 0)
            return -1;
        k = ks_args_get(e, "key");
        o = ks_args_get(e, "operator");
        v = ks_args_get(e, "values");
        if (k == NULL || k->kind != KS_ARGS_SCALAR || k->scalar[0] == '\0')
            return na_errf(err, errlen, k ? k : e, "%s[%u].key: Required value",
                           path, i);
        if (o == NULL || o->kind != KS_ARGS_SCALAR ||
            parse_op(o->scalar, &r->op) != 0)
            return na_errf(err, errlen, o ? o : e,
                           "%s[%u].operator: Unsupported value: \"%s\": "
                           "supported values: \"In\", \"NotIn\", \"Exists\", "
                           "\"DoesNotExist\", \"Gt\", \"Lt\"",
                           path, i,
                           o && o->kind == KS_ARGS_SCALAR ? o->scalar : "");
        if (v != NULL && v->kind != KS_ARGS_SEQ)
            return na_errf(err, errlen, v, "%s[%u].values: must be a list",
                           path, i);
        r->key = na->api->intern(na->h, k->scalar);
        r->n_values = v ? v->n : 0;
        vals = na_alloc(na, r->n_values * sizeof *vals);
        if (vals == NULL)
            return OOM(err, errlen);
        for (j = 0; j < r->n_values; j++) {
            if (v->children[j]->kind != KS_ARGS_SCALAR)
                return na_errf(err, errlen, v->children[j],
                               "%s[%u].values[%u]: must be a string", path, i,
                               j);
            vals[j] = na->api->intern(na->h, v->children[j]->scalar);
        }
        r->values = vals;
        if (fields ? !field_valid(r) : !expr_valid(r))
            return na_errf(err, errlen, o,
                           "%s[%u]: Invalid value: %s with %u value(s): %s",
                           path, i, o->scalar, r->n_values,
                           fields ? "field selectors support In and NotIn "
                                    "with exactly one value"
                                  : "In/NotIn need values, Exists/DoesNotExist "
                                    "none, Gt/Lt one integer");
    }
    *out = reqs;
    *n = a->n;
    return 0;
}

static int parse_term(node_affinity_t *na, const ks_args_t *a,
                      const char *path, ks_node_selector_term_t *t, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"matchExpressions", "matchFields",
                                       NULL};
    char sub[512];
    if (a == NULL || a->kind != KS_ARGS_MAP)
        return na_errf(err, errlen, a, "%s: must be a mapping", path);
    if (ks_args_check_keys(a, keys, err, errlen) != 0)
        return -1;
    snprintf(sub, sizeof sub, "%s.matchExpressions", path);
    if (parse_reqs(na, ks_args_get(a, "matchExpressions"), sub, 0,
                   &t->match_expressions, &t->n_match_expressions, err,
                   errlen) != 0)
        return -1;
    snprintf(sub, sizeof sub, "%s.matchFields", path);
    return parse_reqs(na, ks_args_get(a, "matchFields"), sub, 1,
                      &t->match_fields, &t->n_match_fields, err, errlen);
}

static int parse_required(node_affinity_t *na, const ks_args_t *a,
                          char *err, size_t errlen)
{
    static const char *const keys[] = {"nodeSelectorTerms", NULL};
    static const char path[] =
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    ks_node_selector_t *sel;
    ks_node_selector_term_t *terms;
    const ks_args_t *ts;
    uint32_t i;
    if (a->kind != KS_ARGS_MAP)
        return na_errf(err, errlen, a, "%s: must be a mapping", path);
    if (ks_args_check_keys(a, keys, err, errlen) != 0)
        return -1;
    ts = ks_args_get(a, "nodeSelectorTerms");
    if (ts != NULL && ts->kind != KS_ARGS_SEQ)
        return na_errf(err, errlen, ts, "%s.nodeSelectorTerms: must be a list",
                       path);
    sel = na_alloc(na, sizeof *sel);
    terms = na_alloc(na, (ts ? ts->n : 0) * sizeof *terms);
    if (sel == NULL || terms == NULL)
        return OOM(err, errlen);
    for (i = 0; ts != NULL && i < ts->n; i++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.nodeSelectorTerms[%u]", path, i);
        if (parse_term(na, ts->children[i], sub, &terms[i], err, errlen) != 0)
            return -1;
    }
    sel->terms = terms;
    sel->n_terms = ts ? ts->n : 0;
    na->added_required = sel;
    return 0;
}

static int parse_preferred(node_affinity_t *na, const ks_args_t *a,
                           char *err, size_t errlen)
{
    static const char *const keys[] = {"weight", "preference", NULL};
    static const char path[] =
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution";
    ks_preferred_scheduling_term_t *p;
    uint32_t i;
    if (a->kind != KS_ARGS_SEQ)
        return na_errf(err, errlen, a, "%s: must be a list", path);
    p = na_alloc(na, a->n * sizeof *p);
    if (p == NULL)
        return OOM(err, errlen);
    for (i = 0; i < a->n; i++) {
        const ks_args_t *e = a->children[i], *w;
        char sub[256];
        int64_t weight = 0;
        if (e->kind != KS_ARGS_MAP)
            return na_errf(err, errlen, e, "%s[%u]: must be a mapping", path,
                           i);
        if (ks_args_check_keys(e, keys, err, errlen) != 0)
            return -1;
        snprintf(sub, sizeof sub, "%s[%u].weight", path, i);
        w = ks_args_get(e, "weight");
        if (w != NULL && ks_args_int64(w, sub, &weight, err, errlen) != 0)
            return -1;
        if (weight < INT32_MIN || weight > INT32_MAX)
            return na_errf(err, errlen, w, "%s: out of range", sub);
        p[i].weight = (int32_t)weight;
        snprintf(sub, sizeof sub, "%s[%u].preference", path, i);
        if (parse_term(na, ks_args_get(e, "preference"), sub, &p[i].preference,
                       err, errlen) != 0)
            return -1;
    }
    na->added_preferred = p;
    na->n_added_preferred = a->n;
    return 0;
}

static void node_affinity_destroy(void *self)
{
    node_affinity_t *na = self;
    uint32_t i;
    if (na == NULL)
        return;
    for (i = 0; i < na->n_blocks; i++)
        free(na->blocks[i]);
    free(na->blocks);
    free(na);
}

static int node_affinity_create(const ks_host_api_t *api, ks_handle_t *h,
                                const ks_args_t *args, void **self, char *err,
                                size_t errlen)
{
    static const char *const keys[] = {"addedAffinity", NULL};
    static const char *const akeys[] = {
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    const ks_args_t *added, *req, *pref;
    node_affinity_t *na;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    na = calloc(1, sizeof *na);
    if (na == NULL)
        return OOM(err, errlen);
    na->api = api;
    na->h = h;
    added = ks_args_get(args, "addedAffinity");
    if (added != NULL &&
        !(added->kind == KS_ARGS_SCALAR && added->scalar[0] == '\0')) {
        if (ks_args_check_keys(added, akeys, err, errlen) != 0)
            goto fail;
        req = ks_args_get(added, akeys[0]);
        pref = ks_args_get(added, akeys[1]);
        if (req != NULL && parse_required(na, req, err, errlen) != 0)
            goto fail;
        if (pref != NULL && parse_preferred(na, pref, err, errlen) != 0)
            goto fail;
    }
    *self = na;
    return 0;
fail:
    node_affinity_destroy(na);
    return -1;
}

/* --- PreFilter, Filter --------------------------------------------------------- */

/* Add `name` to the set names[0..*n) (capacity cap) unless present. */
static int set_add(const char ***names, uint32_t *n, uint32_t *cap,
                   const char *name)
{
    uint32_t i;
    for (i = 0; i < *n; i++)
        if ((*names)[i] == name || strcmp((*names)[i], name) == 0)
            return 0;
    if (*n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        const char **nn = realloc(*names, ncap * sizeof *nn);
        if (nn == NULL)
            return -1;
        *names = nn;
        *cap = ncap;
    }
    (*names)[(*n)++] = name;
    return 0;
}

static int values_have(const ks_requirement_t *r, const char *v)
{
    uint32_t i;
    for (i = 0; i < r->n_values; i++)
        if (r->values[i] == v || strcmp(r->values[i], v) == 0)
            return 1;
    return 0;
}

/*
 * The node names the required terms allow, when every term restricts
 * metadata.name with In. Returns 1 with the set in *out (may be empty),
 * 0 when all nodes remain possible, -1 on ENOMEM.
 */
static int required_node_names(const ks_node_selector_t *req,
                               const char ***out, uint32_t *n_out)
{
    const char **all = NULL, **cur = NULL;
    uint32_t n_all = 0, cap_all = 0, n_cur, cap_cur = 0, i, j, k;
    for (i = 0; i < req->n_terms; i++) {
        const ks_node_selector_term_t *t = &req->terms[i];
        int have = 0;
        n_cur = 0;
        for (j = 0; j < t->n_match_fields; j++) {
            const ks_requirement_t *r = &t->match_fields[j];
            if (r->op != KS_OP_IN || strcmp(r->key, "metadata.name") != 0)
                continue;
            if (!have) {
                for (k = 0; k < r->n_values; k++)
                    if (set_add(&cur, &n_cur, &cap_cur, r->values[k]) != 0)
                        goto oom;
                have = 1;
                continue;
            }
            /* Intersect in place. */
            for (k = 0; k < n_cur;)
                if (values_have(r, cur[k]))
                    k++;
                else
                    cur[k] = cur[--n_cur];
        }
        if (!have) {
            free(cur);
            free(all);
            return 0;
        }
        for (k = 0; k < n_cur; k++)
            if (set_add(&all, &n_all, &cap_all, cur[k]) != 0)
                goto oom;
    }
    free(cur);
    *out = all;
    *n_out = n_all;
    return 1;
oom:
    free(cur);
    free(all);
    return -1;
}

static ks_code_t node_affinity_pre_filter(void *self, ks_cycle_state_t *cs,
                                          const ks_pod_t *pod,
                                          ks_prefilter_result_t *result,
                                          ks_status_t *st)
{
    node_affinity_t *na = self;
    const ks_node_affinity_t *aff = pod->affinity.node_affinity;
    na_prefilter_t *s = malloc(sizeof *s);
    const char **names = NULL;
    uint32_t n = 0, i;
    int rc;
    if (s == NULL) {
        na->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->node_selector = &pod->node_selector;
    s->required = aff ? aff->required : NULL;
    /* Filter gets it as its state (no cycle-state lookup per node). */
    if (ks_plugin_state_put(na->api, na->h, cs, KS_STATE_FILTER, s, st) !=
        KS_SUCCESS)
        return KS_ERROR;
    /* Nothing to check on any node: the host may skip Filter (upstream
     * 1.26+). The state stays written for callers that filter anyway. */
    if ((aff == NULL || aff->required == NULL) && pod->node_selector.n == 0 &&
        na->added_required == NULL)
        return KS_SKIP;
    if (aff == NULL || aff->required == NULL || aff->required->n_terms == 0)
        return KS_SUCCESS;
    rc = required_node_names(aff->required, &names, &n);
    if (rc < 0) {
        na->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    if (rc == 1) {
        if (n == 0)
            na->api->prefilter_result_set_none(result);
        for (i = 0; i < n; i++)
            na->api->prefilter_result_add_node(result, names[i]);
    }
    free(names);
    return KS_SUCCESS;
}

static ks_code_t node_affinity_filter_with_state(void *self,
                                                 ks_cycle_state_t *cs,
                                                 void *state,
                                                 const ks_pod_t *pod,
                                                 const ks_node_info_t *ni,
                                                 ks_status_t *st)
{
    node_affinity_t *na = self;
    const na_prefilter_t *s = state;
    const ks_labels_t *node_selector;
    const ks_node_selector_t *required;
    const ks_node_t *node = ni->node;
    (void)cs;
    if (node == NULL) {
        na->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    if (na->added_required != NULL &&
        !selector_matches(na->added_required, node)) {
        na->api->status_reason(st, REASON_ENFORCED);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    /* Without PreFilter, read the pod directly (as upstream falls back). */
    node_selector = s ? s->node_selector : &pod->node_selector;
    required = s ? s->required
                 : (pod->affinity.node_affinity
                        ? pod->affinity.node_affinity->required
                        : NULL);
    if (!ks_labels_subset_interned(node_selector, &node->labels) ||
        (required != NULL && !selector_matches(required, node))) {
        na->api->status_reason(st, REASON_POD);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* Filter for callers without the state slots (the SDK's 1.0 entry
 * point): the same, with the state looked up. */
static ks_code_t node_affinity_filter(void *self, ks_cycle_state_t *cs,
                                      const ks_pod_t *pod, const ks_node_info_t *ni,
                                      ks_status_t *st)
{
    node_affinity_t *na = self;
    return node_affinity_filter_with_state(
        self, cs, na->api->plugin_state_get(na->h, cs, KS_STATE_FILTER),
        pod, ni, st);
}

/* --- PreScore, Score, NormalizeScore ----------------------------------------- */

static ks_code_t check_preferred(node_affinity_t *na,
                                 const ks_node_affinity_t *aff,
                                 ks_status_t *st)
{
    int64_t bad;
    if (aff == NULL)
        return KS_SUCCESS;
    bad = preferred_invalid(aff->preferred, aff->n_preferred);
    if (bad < 0)
        return KS_SUCCESS;
    na->api->status_reasonf(
        st, "preferredSchedulingTerms[%lld]: %s", (long long)bad,
        term_problem(&aff->preferred[bad].preference));
    return KS_ERROR;
}

static ks_code_t node_affinity_pre_score(void *self, ks_cycle_state_t *cs,
                                         const ks_pod_t *pod,
                                         const ks_node_info_t *const *nodes,
                                         uint32_t n, ks_status_t *st)
{
    node_affinity_t *na = self;
    const ks_node_affinity_t *aff = pod->affinity.node_affinity;
    na_prescore_t *s;
    ks_code_t c;
    (void)nodes;
    if (n == 0)
        return KS_SUCCESS;
    c = check_preferred(na, aff, st);
    if (c != KS_SUCCESS)
        return c;
    s = malloc(sizeof *s);
    if (s == NULL) {
        na->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->preferred = aff ? aff->preferred : NULL;
    s->n_preferred = aff ? aff->n_preferred : 0;
    /* Score gets it as its state (no cycle-state lookup per node). */
    if (ks_plugin_state_put(na->api, na->h, cs, KS_STATE_SCORE, s, st) !=
        KS_SUCCESS)
        return KS_ERROR;
    /* No preferred term of the pod's or the args': every node would score
     * 0, the host may skip Score (upstream 1.27+). The state stays
     * written for hosts that score anyway. */
    if ((aff == NULL || aff->n_preferred == 0) && na->n_added_preferred == 0)
        return KS_SKIP;
    return KS_SUCCESS;
}

static ks_code_t node_affinity_score_with_state(void *self,
                                                ks_cycle_state_t *cs,
                                                void *state,
                                                const ks_pod_t *pod,
                                                const ks_node_info_t *ni,
                                                int64_t *score,
                                                ks_status_t *st)
{
    node_affinity_t *na = self;
    const na_prescore_t *s = state;
    const ks_node_affinity_t *aff = pod->affinity.node_affinity;
    int64_t count = 0;
    (void)cs;
    if (ni->node == NULL) {
        na->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    count += preferred_score(na->added_preferred, na->n_added_preferred,
                             ni->node);
    if (s != NULL) {
        count += preferred_score(s->preferred, s->n_preferred, ni->node);
    } else if (aff != NULL) {
        /* Without PreScore, validate and read the pod here. */
        ks_code_t c = check_preferred(na, aff, st);
        if (c != KS_SUCCESS)
            return c;
        count += preferred_score(aff->preferred, aff->n_preferred, ni->node);
    }
    *score = count;
    return KS_SUCCESS;
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
static ks_code_t node_affinity_score(void *self, ks_cycle_state_t *cs,
                                     const ks_pod_t *pod, const ks_node_info_t *ni,
                                     int64_t *score, ks_status_t *st)
{
    node_affinity_t *na = self;
    return node_affinity_score_with_state(
        self, cs, na->api->plugin_state_get(na->h, cs, KS_STATE_SCORE),
        pod, ni, score, st);
}

/* Upstream helper.DefaultNormalizeScore(max, reverse=false). */
static ks_code_t node_affinity_normalize(void *self, ks_cycle_state_t *cs,
                                         const ks_pod_t *pod,
                                         ks_node_score_t *scores, uint32_t n,
                                         ks_status_t *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 0, scores, n);
    return KS_SUCCESS;
}

static uint32_t node_affinity_events(void *self, ks_cluster_event_t *out,
                                     uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_NODE;
        out[0].action = KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE |
                        KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT |
                        KS_ACT_UPDATE_NODE_CONDITION | KS_ACT_UPDATE;
    }
    return 1;
}

/* The pod's required node affinity (nodeSelector and required terms) and
 * the args' addedAffinity against one node (upstream
 * GetRequiredNodeAffinity(pod).Match). */
static int required_match(const node_affinity_t *na, const ks_pod_t *pod,
                          const ks_node_t *node)
{
    const ks_node_affinity_t *aff = pod->affinity.node_affinity;
    if (na->added_required != NULL &&
        !selector_matches(na->added_required, node))
        return 0;
    if (!ks_labels_subset_interned(&pod->node_selector, &node->labels))
        return 0;
    return aff == NULL || aff->required == NULL ||
           selector_matches(aff->required, node);
}

/* QueueingHint (upstream isSchedulableAfterNodeChange): a node added that
 * matches, or a node whose labels now match and did not before. */
static ks_queueing_hint_t node_affinity_after_node(void *self,
                                                   const ks_pod_t *pod,
                                                   const void *old_obj,
                                                   const void *new_obj)
{
    const ks_node_t *old = old_obj, *n = new_obj;
    if (n == NULL || !required_match(self, pod, n))
        return KS_QUEUE_SKIP;
    if (old == NULL || !required_match(self, pod, old))
        return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

static uint32_t node_affinity_events_v2(void *self,
                                        ks_cluster_event_hint_t *out,
                                        uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].event.resource = KS_RES_NODE;
        out[0].event.action = KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL;
        out[0].hint = node_affinity_after_node;
    }
    return 1;
}

/* Opportunistic batching (upstream's node selector and node affinity
 * signers): the nodeSelector and every term of the node affinity. */
static void na_sign_reqs(ks_signer_t *sg, const ks_requirement_t *r,
                         uint32_t n)
{
    uint32_t i, v;
    ks_sign_i64(sg, n);
    for (i = 0; i < n; i++) {
        ks_sign_ptr(sg, r[i].key);
        ks_sign_i64(sg, r[i].op);
        ks_sign_i64(sg, r[i].n_values);
        for (v = 0; v < r[i].n_values; v++)
            ks_sign_ptr(sg, r[i].values[v]);
    }
}

static void na_sign_term(ks_signer_t *sg, const ks_node_selector_term_t *t)
{
    na_sign_reqs(sg, t->match_expressions, t->n_match_expressions);
    na_sign_reqs(sg, t->match_fields, t->n_match_fields);
}

static ks_code_t na_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const ks_node_affinity_t *na = pod->affinity.node_affinity;
    uint32_t i;
    (void)self;
    ks_sign_i64(sg, pod->node_selector.n);
    for (i = 0; i < pod->node_selector.n; i++) {
        ks_sign_ptr(sg, pod->node_selector.items[i].key);
        ks_sign_ptr(sg, pod->node_selector.items[i].value);
    }
    ks_sign_i64(sg, na != NULL);
    if (na == NULL)
        return KS_SUCCESS;
    ks_sign_i64(sg, na->required ? (int64_t)na->required->n_terms : -1);
    for (i = 0; na->required && i < na->required->n_terms; i++)
        na_sign_term(sg, &na->required->terms[i]);
    ks_sign_i64(sg, na->n_preferred);
    for (i = 0; i < na->n_preferred; i++) {
        ks_sign_i64(sg, na->preferred[i].weight);
        na_sign_term(sg, &na->preferred[i].preference);
    }
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
KS_FILTER_NODES_FROM(node_affinity_filter_nodes, node_affinity_filter_with_state)
KS_SCORE_NODES_FROM(node_affinity_score_nodes, node_affinity_score_with_state)

KS_PLUGIN_DEFINE("NodeAffinity", "1.24.1-ks1",
    .create = node_affinity_create,
    .destroy = node_affinity_destroy,
    .pre_filter = node_affinity_pre_filter,
    .filter = node_affinity_filter,
    .filter_with_state = node_affinity_filter_with_state,
    .pre_score = node_affinity_pre_score,
    .score = node_affinity_score,
    .score_with_state = node_affinity_score_with_state,
    .normalize_score = node_affinity_normalize,
    .events_to_register = node_affinity_events,
    .events_to_register_v2 = node_affinity_events_v2,
                 .sign = na_sign,
    .filter_nodes = node_affinity_filter_nodes,
    .score_nodes = node_affinity_score_nodes);
