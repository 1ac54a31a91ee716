/*
 * InterPodAffinity PreFilter, PreFilter AddPod/RemovePod and Filter
 * (upstream v1.24.1 interpodaffinity/filtering.go semantics).
 *
 * PreFilter counts, per topology pair (key, value):
 *   existing_anti: existing pods whose required anti-affinity terms match the
 *                  incoming pod, counted at the existing pod's node;
 *   affinity:      existing pods matching all of the incoming pod's required
 *                  affinity terms, counted once per term;
 *   anti:          existing pods matching each required anti-affinity term
 *                  of the incoming pod.
 * Filter then only looks the node's pairs up in these maps.
 */
#include "ipa.h"

#include <stdatomic.h>
#include <stdlib.h>

#define IPA_PREFILTER_KEY "PreFilter" IPA_NAME

typedef struct ipa_prefilter_state {
    ks_tpmap_t existing_anti;
    ks_tpmap_t affinity;
    ks_tpmap_t anti;
    const ks_pod_t *pod;  /* the incoming pod (valid for the cycle) */
    ks_labels_t ns_labels; /* labels of the incoming pod's namespace */
    int self_match;        /* the pod matches all its required affinity terms */
    /* References (ipa_prefilter_ref_t) to this state: a clone of a cycle
     * state (preemption tries one per node, Filter with nominated pods one
     * per node that has some) shares the counts, and AddPod/RemovePod copy
     * them first when they are shared, so a clone whose counts never
     * change (the plugin skipped, or no pod added or removed) costs no
     * copy. Atomic: Filter workers clone and free concurrently. */
    atomic_uint refs;
} ipa_prefilter_state_t;

/* What the cycle state's slot holds: one per cycle state, so that
 * AddPod/RemovePod can give their cycle state a private copy of shared
 * counts without plugin_state_set (loop thread only, where AddPod also
 * runs on Filter workers). */
typedef struct ipa_prefilter_ref {
    ipa_prefilter_state_t *s;
} ipa_prefilter_ref_t;

static ipa_prefilter_state_t *ipa_prefilter_state_new(void)
{
    ipa_prefilter_state_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    ks_tpmap_init(&s->existing_anti);
    ks_tpmap_init(&s->affinity);
    ks_tpmap_init(&s->anti);
    atomic_init(&s->refs, 1);
    return s;
}

/* Drops one reference to s; the last one frees it. */
static void ipa_prefilter_state_free(ipa_prefilter_state_t *s)
{
    if (s == NULL ||
        atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    ks_tpmap_free(&s->existing_anti);
    ks_tpmap_free(&s->affinity);
    ks_tpmap_free(&s->anti);
    free(s);
}

/* The slot's free_fn. */
static void ipa_prefilter_ref_free(void *data)
{
    ipa_prefilter_ref_t *r = data;
    if (r == NULL)
        return;
    ipa_prefilter_state_free(r->s);
    free(r);
}

/* The slot's clone_fn: a new reference to the same counts. */
static void *ipa_prefilter_ref_clone(const void *data)
{
    const ipa_prefilter_ref_t *r = data;
    ipa_prefilter_ref_t *c = malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    atomic_fetch_add_explicit(&r->s->refs, 1, memory_order_relaxed);
    c->s = r->s;
    return c;
}

/* A private deep copy of s (one holder); NULL when out of memory. */
static ipa_prefilter_state_t *
ipa_prefilter_state_copy(const ipa_prefilter_state_t *s)
{
    ipa_prefilter_state_t *c = ipa_prefilter_state_new();
    if (c == NULL)
        return NULL;
    c->pod = s->pod;
    c->ns_labels = s->ns_labels;
    c->self_match = s->self_match;
    if (ks_tpmap_clone(&c->existing_anti, &s->existing_anti) != 0 ||
        ks_tpmap_clone(&c->affinity, &s->affinity) != 0 ||
        ks_tpmap_clone(&c->anti, &s->anti) != 0) {
        ipa_prefilter_state_free(c);
        return NULL;
    }
    return c;
}

/* The counts behind the reference PreFilter set in the slot (`state`),
 * or NULL with the reason in st. */
static ipa_prefilter_state_t *ipa_prefilter_state_check(const ipa_plugin_t *pl,
                                                        void *state,
                                                        ks_status_t *st)
{
    const ipa_prefilter_ref_t *r = state;
    if (r == NULL) {
        pl->api->status_reason(st, "reading \"" IPA_PREFILTER_KEY
                                   "\" from cycle state: not found");
        return NULL;
    }
    return r->s;
}

/* Filter for callers without the state slots (the SDK's 1.0 entry
 * point): the same, with the state looked up. */
ks_code_t ipa_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    return ipa_filter_with_state(
        self, cs, pl->api->plugin_state_get(pl->h, cs, KS_STATE_FILTER), pod,
        ni, st);
}

/* The incoming pod's required terms, read once per PreFilter instead of
 * once per existing pod. */
typedef struct ipa_own_terms {
    const ks_pod_affinity_term_t *aff, *anti;
    uint32_t n_aff, n_anti;
} ipa_own_terms_t;

static void ipa_own_terms(const ks_pod_t *pod, ipa_own_terms_t *t)
{
    t->aff = ipa_required_affinity(pod, &t->n_aff);
    t->anti = ipa_required_anti_affinity(pod, &t->n_anti);
}

/* Count what one existing pod `e` on `node` contributes. */
static int ipa_prefilter_count_pod(const ipa_plugin_t *pl,
                                   ipa_prefilter_state_t *s,
                                   const ks_pod_t *pod,
                                   const ipa_own_terms_t *own,
                                   const ks_pod_t *e, const ks_node_t *node,
                                   int64_t delta, int with_existing)
{
    const ks_pod_affinity_term_t *terms;
    uint32_t n, i;

    /* e's required anti-affinity terms against the incoming pod */
    if (with_existing) {
        terms = ipa_required_anti_affinity(e, &n);
        for (i = 0; i < n; i++)
            if (ipa_term_matches(pl, &terms[i], e->ns, pod, &s->ns_labels) &&
                ipa_count_update(&s->existing_anti, node,
                                 terms[i].topology_key, delta) != 0)
                return -1;
    }

    /* the incoming pod's required affinity: e must match every term */
    if (own->n_aff > 0 &&
        ipa_matches_all_terms(pl, own->aff, own->n_aff, pod->ns, e, NULL))
        for (i = 0; i < own->n_aff; i++)
            if (ipa_count_update(&s->affinity, node,
                                 own->aff[i].topology_key, delta) != 0)
                return -1;

    /* the incoming pod's required anti-affinity, term by term */
    for (i = 0; i < own->n_anti; i++)
        if (ipa_term_matches(pl, &own->anti[i], pod->ns, e, NULL) &&
            ipa_count_update(&s->anti, node, own->anti[i].topology_key,
                             delta) != 0)
            return -1;
    return 0;
}

/* PreFilter's walk over the nodes, on the host's workers (upstream's
 * Parallelizer().Until over processNode): each worker counts into maps of
 * its own, worker 0 into the state's, and the others' counts are added to
 * the state's after the walk, as upstream appends each node's results.
 * The counts are sums, so they are the same whatever the split. */
typedef struct ipa_walk_job {
    const ipa_plugin_t *pl;
    const ks_pod_t *pod;
    const ipa_own_terms_t *own;
    const ks_node_info_t *const *nodes;
    int has_own_terms;
    /* per worker: [0] the state, the others made by their worker on its
     * first chunk (NULL until then; each index is one thread's) */
    ipa_prefilter_state_t **part;
    atomic_int oom;
} ipa_walk_job_t;

/* What the nodes [b, e) contribute, into worker's maps. */
static void ipa_walk_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    ipa_walk_job_t *w = ud;
    const ipa_plugin_t *pl = w->pl;
    const ks_pod_t *pod = w->pod;
    ipa_prefilter_state_t *s = w->part[worker];
    uint32_t i, j;
    if (s == NULL) {
        if ((s = ipa_prefilter_state_new()) == NULL) {
            atomic_store(&w->oom, 1);
            return;
        }
        s->ns_labels = w->part[0]->ns_labels;
        w->part[worker] = s;
    }
    for (i = b; i < e; i++) {
        const ks_node_info_t *ni = w->nodes[i];
        const ks_node_t *node = ni ? ni->node : NULL;
        if (node == NULL)
            continue;
        /* existing pods' required anti-affinity against the incoming pod */
        for (j = 0; j < ni->n_pods_with_required_anti_affinity; j++) {
            const ks_pod_t *ep = ni->pods_with_required_anti_affinity[j];
            const ks_pod_affinity_term_t *terms;
            uint32_t n, k;
            terms = ipa_required_anti_affinity(ep, &n);
            for (k = 0; k < n; k++)
                if (ipa_term_matches(pl, &terms[k], ep->ns, pod,
                                     &s->ns_labels) &&
                    ipa_count_update(&s->existing_anti, node,
                                     terms[k].topology_key, 1) != 0)
                    goto oom;
        }
        /* existing pods against the incoming pod's required terms */
        if (!w->has_own_terms)
            continue;
        for (j = 0; j < ni->n_pods; j++)
            if (ipa_prefilter_count_pod(pl, s, pod, w->own, ni->pods[j], node,
                                        1, 0) != 0)
                goto oom;
    }
    return;
oom:
    atomic_store(&w->oom, 1);
}

/* The walk over nodes[0, n) into s; 0 or -1 when out of memory. */
static int ipa_walk(const ipa_plugin_t *pl, ipa_prefilter_state_t *s,
                    const ks_pod_t *pod, const ipa_own_terms_t *own,
                    const ks_node_info_t *const *nodes, uint32_t n,
                    int has_own_terms)
{
    unsigned workers = ks_parallelize_workers(pl->api, pl->h), i;
    ipa_walk_job_t w;
    int rc = 0;
    if (n == 0)
        return 0;
    w.pl = pl;
    w.pod = pod;
    w.own = own;
    w.nodes = nodes;
    w.has_own_terms = has_own_terms;
    atomic_init(&w.oom, 0);
    w.part = calloc(workers, sizeof *w.part);
    if (w.part == NULL)
        return -1;
    w.part[0] = s;
    ks_parallelize(pl->api, pl->h, n, 0, ipa_walk_chunk, &w);
    if (atomic_load(&w.oom))
        rc = -1;
    for (i = 1; i < workers; i++) {
        if (w.part[i] == NULL)
            continue;
        if (rc == 0 &&
            (ks_tpmap_merge(&s->existing_anti, &w.part[i]->existing_anti) !=
                 0 ||
             ks_tpmap_merge(&s->affinity, &w.part[i]->affinity) != 0 ||
             ks_tpmap_merge(&s->anti, &w.part[i]->anti) != 0))
            rc = -1;
        ipa_prefilter_state_free(w.part[i]);
    }
    free(w.part);
    return rc;
}

ks_code_t ipa_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st)
{
    ipa_plugin_t *pl = self;
    const ks_host_api_t *api = pl->api;
    ipa_prefilter_state_t *s;
    ipa_own_terms_t own;
    ks_tpmap_t *maps[3]; /* in prefilter_pairs' order */
    uint32_t n_nodes, i;
    const ks_node_info_t *const *nodes;
    ipa_prefilter_ref_t *ref;
    int has_own_terms;

    (void)result;
    s = ipa_prefilter_state_new();
    if (s == NULL) {
        api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->pod = pod;
    s->ns_labels = api->namespace_labels(pl->h, pod->ns);
    maps[0] = &s->existing_anti;
    maps[1] = &s->affinity;
    maps[2] = &s->anti;
    for (i = 0; i < 3; i++)
        if (pl->prefilter_pairs[i] > 0 &&
            ks_tpmap_reserve(maps[i], pl->prefilter_pairs[i]) != 0)
            goto oom;

    ipa_own_terms(pod, &own);
    has_own_terms = own.n_aff > 0 || own.n_anti > 0;

    /* Without terms of its own, only nodes running a pod with required
     * anti-affinity can matter (upstream's HavePodsWithRequiredAntiAffinity
     * list). */
    nodes = has_own_terms
                ? api->snapshot_nodes(pl->h, &n_nodes)
                : api->snapshot_nodes_with_required_anti_affinity(pl->h,
                                                                  &n_nodes);
    if (ipa_walk(pl, s, pod, &own, nodes, n_nodes, has_own_terms) != 0)
        goto oom;
    s->self_match = ipa_matches_all_terms(pl, own.aff, own.n_aff, pod->ns,
                                          pod, &s->ns_labels);
    for (i = 0; i < 3; i++)
        pl->prefilter_pairs[i] = maps[i]->used;

    /* Filter gets it as its state (no cycle-state lookup per node). */
    ref = malloc(sizeof *ref);
    if (ref == NULL)
        goto oom;
    ref->s = s;
    if (api->plugin_state_set(pl->h, cs, KS_STATE_FILTER, ref,
                              ipa_prefilter_ref_clone,
                              ipa_prefilter_ref_free) != 0) {
        ipa_prefilter_ref_free(ref);
        api->status_reason(st, "writing \"" IPA_PREFILTER_KEY
                               "\" to cycle state failed");
        return KS_ERROR;
    }
    /* No required term of its own and no existing pod's required
     * anti-affinity matches it: Filter cannot fail, the host may skip it
     * (upstream 1.26+). */
    if (!has_own_terms && s->existing_anti.nonzero == 0)
        return KS_SKIP;
    return KS_SUCCESS;
oom:
    ipa_prefilter_state_free(s);
    api->status_reason(st, "out of memory");
    return KS_ERROR;
}

static ks_code_t ipa_update_with_pod(void *self, ks_cycle_state_t *cs,
                                     const ks_pod_t *pod,
                                     const ks_pod_t *changed,
                                     const ks_node_info_t *ni, int64_t delta,
                                     ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    ipa_prefilter_ref_t *r = pl->api->plugin_state_get(pl->h, cs,
                                                       KS_STATE_FILTER);
    ipa_prefilter_state_t *s = ipa_prefilter_state_check(pl, r, st);
    ipa_own_terms_t own;
    if (s == NULL)
        return KS_ERROR;
    if (ni == NULL || ni->node == NULL)
        return KS_SUCCESS;
    /* Shared with another cycle state (a clone's): this one gets its own
     * copy before its counts change. */
    if (atomic_load_explicit(&s->refs, memory_order_acquire) > 1) {
        ipa_prefilter_state_t *c = ipa_prefilter_state_copy(s);
        if (c == NULL) {
            pl->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
        ipa_prefilter_state_free(s);
        r->s = s = c;
    }
    ipa_own_terms(pod, &own);
    if (ipa_prefilter_count_pod(pl, s, pod, &own, changed, ni->node, delta,
                                1) != 0) {
        pl->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

ks_code_t ipa_pre_filter_add_pod(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_pod_t *to_add,
                                 const ks_node_info_t *ni, ks_status_t *st)
{
    return ipa_update_with_pod(self, cs, pod, to_add, ni, 1, st);
}

ks_code_t ipa_pre_filter_remove_pod(void *self, ks_cycle_state_t *cs,
                                    const ks_pod_t *pod,
                                    const ks_pod_t *to_remove,
                                    const ks_node_info_t *ni, ks_status_t *st)
{
    return ipa_update_with_pod(self, cs, pod, to_remove, ni, -1, st);
}

/* The node satisfies the incoming pod's required affinity. */
static int ipa_satisfies_affinity(const ipa_prefilter_state_t *s,
                                  const ks_node_t *node)
{
    const ks_pod_affinity_term_t *terms;
    uint32_t n, i;
    int pods_exist = 1;

    terms = ipa_required_affinity(s->pod, &n);
    for (i = 0; i < n; i++) {
        const char *key = terms[i].topology_key;
        const char *value = ks_labels_get_interned(&node->labels, key);
        if (value == NULL)
            return 0; /* every topology label must exist on the node */
        if (ks_tpmap_get(&s->affinity, key, value) <= 0)
            pods_exist = 0;
    }
    if (pods_exist)
        return 1;
    /* The first pod of a group with affinity to itself: no pod matches
     * anywhere yet, and the pod matches its own terms. */
    return s->affinity.nonzero == 0 && s->self_match;
}

static int ipa_satisfies_anti_affinity(const ipa_prefilter_state_t *s,
                                       const ks_node_t *node)
{
    const ks_pod_affinity_term_t *terms;
    uint32_t n, i;

    if (s->anti.nonzero == 0)
        return 1;
    terms = ipa_required_anti_affinity(s->pod, &n);
    for (i = 0; i < n; i++) {
        const char *key = terms[i].topology_key;
        const char *value = ks_labels_get_interned(&node->labels, key);
        if (value != NULL && ks_tpmap_get(&s->anti, key, value) > 0)
            return 0;
    }
    return 1;
}

static int ipa_satisfies_existing_anti_affinity(const ipa_prefilter_state_t *s,
                                                const ks_node_t *node)
{
    uint32_t i;
    if (s->existing_anti.nonzero == 0)
        return 1;
    for (i = 0; i < node->labels.n; i++) {
        const ks_label_t *l = &node->labels.items[i];
        if (ks_tpmap_get(&s->existing_anti, l->key, l->value) > 0)
            return 0;
    }
    return 1;
}

ks_code_t ipa_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st)
{
    const ipa_plugin_t *pl = self;
    const ipa_prefilter_state_t *s;

    (void)cs;
    (void)pod;
    if (ni == NULL || ni->node == NULL) {
        pl->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    s = ipa_prefilter_state_check(pl, state, st);
    if (s == NULL)
        return KS_ERROR;
    if (!ipa_satisfies_affinity(s, ni->node)) {
        pl->api->status_reason(st, IPA_REASON_AFFINITY);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (!ipa_satisfies_anti_affinity(s, ni->node)) {
        pl->api->status_reason(st, IPA_REASON_ANTI_AFFINITY);
        return KS_UNSCHEDULABLE;
    }
    if (!ipa_satisfies_existing_anti_affinity(s, ni->node)) {
        pl->api->status_reason(st, IPA_REASON_EXISTING_ANTI);
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

/* Bulk Filter (ABI 1.2 filter_nodes): ipa_filter_with_state's verdict for
 * every node still passing, the state checked once; a check whose map is
 * empty (no matching pod anywhere) is not asked per node. A node without
 * its node object is marked 2 (the per-node Filter reports the error).
 * Thread-safe, as Filter. */
ks_code_t ipa_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch)
{
    const ipa_plugin_t *pl = self;
    const ipa_prefilter_ref_t *r = state;
    const ipa_prefilter_state_t *s = r != NULL ? r->s : NULL;
    uint32_t i, n_aff;
    int check_anti, check_existing;

    (void)pl;
    (void)cs;
    (void)pod;
    (void)scratch;
    if (s == NULL)
        return KS_ERROR; /* node by node: the state's reason */
    (void)ipa_required_affinity(s->pod, &n_aff);
    check_anti = s->anti.nonzero != 0;
    check_existing = s->existing_anti.nonzero != 0;
    for (i = 0; i < n; i++) {
        const ks_node_t *node;
        if (!pass[i])
            continue;
        node = nodes[i] ? nodes[i]->node : NULL;
        if (node == NULL) {
            pass[i] = 2;
            continue;
        }
        if ((n_aff > 0 && !ipa_satisfies_affinity(s, node)) ||
            (check_anti && !ipa_satisfies_anti_affinity(s, node)) ||
            (check_existing &&
             !ipa_satisfies_existing_anti_affinity(s, node)))
            pass[i] = 0;
    }
    return KS_SUCCESS;
}
