/*
 * v1.Pod from a libyaml tree: every field of ks_pod_t, the API server's
 * defaulting and admission changes that the scheduler sees (requests from
 * limits, pod-level requests, host-network ports, matchLabelKeys and
 * mismatchLabelKeys merged into selectors), and the derived fields
 * (effective requests with sidecars and pod-level resources, non-zero
 * requests, host ports) as upstream v1.36 computes them. Fields upstream's
 * scheduler reads that ksched does not model get one notice per field per
 * run (note_once).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "objects.h"
#include "objects_yaml.h"
#include "pod_requests.h"

typedef struct pod_block {
    ks_arena_t *arena;
    ks_intern_t *in;
    const char **refs; /* counted strings: uid, name, annotations */
    uint32_t n_refs;
    ks_pod_t pod;
} pod_block_t;

/* Size of the last pod read on this thread: the next arena's first chunk. */
static _Thread_local size_t pod_size_hint = 2048;

/* Which of cpu / memory each container names (pod_requests.h). */
typedef ks_container_req_flags_t container_flags_t;

/* --- notices for fields ksched does not model ----------------------------- */

enum {
    NOTE_RESIZE,
    NOTE_COUNT
};

static const char *const note_why[NOTE_COUNT] = {
    [NOTE_RESIZE] = "upstream counts the larger of the spec's and the "
                    "status's resources of a pod being resized",
};

/* Process-wide: each field is reported once per run, whatever the thread. */
static atomic_int note_done[NOTE_COUNT];

static void note_once(int which, const ks_pod_t *pod, const char *field)
{
    int expected = 0;
    if (atomic_load_explicit(&note_done[which], memory_order_relaxed) ||
        !atomic_compare_exchange_strong(&note_done[which], &expected, 1))
        return;
    ks_log(KS_LOGL_WARN,
           "pod %s/%s sets %s, which ksched does not model (%s); pods that "
           "set it may be placed differently from kube-scheduler (said once "
           "per run)",
           pod->ns, pod->name, field, note_why[which]);
}

/* spec.resourceClaims needs no notice either: it is in
 * ks_pod_t.resource_claims since ABI 1.5 (the DynamicResources plugin). */

/* Volumes need no notice: claims and generic ephemeral volumes are in
 * ks_pod_t.volumes since ABI 1.3, and the inline in-tree sources that
 * upstream's volume plugins read (gcePersistentDisk, awsElasticBlockStore,
 * iscsi, rbd, azureDisk, cinder, portworxVolume) in volume_inline since
 * ABI 1.4. (upstream v1.36's NodeVolumeLimits also queues a pod when one
 * with an inline vsphereVolume or azureFile goes, but counts neither:
 * their migration is off for its count.) */

static void note_unmodelled(ks_yctx_t *c, const yaml_node_t *root,
                            const ks_pod_t *pod)
{
    const yaml_node_t *status = ky_get(c, root, "status");
    const yaml_node_t *v;
    uint32_t i;
    if (status != NULL && ky_is_map(status) &&
        (v = ky_get(c, status, "conditions")) != NULL && ky_is_seq(v))
        for (i = 0; i < ky_seq_len(v); i++) {
            const yaml_node_t *cond = ky_seq_at(c, v, i), *t;
            const char *type;
            if (cond == NULL || !ky_is_map(cond) ||
                (t = ky_get(c, cond, "type")) == NULL ||
                (type = ky_scalar(t)) == NULL)
                continue;
            if (strcmp(type, "PodResizePending") == 0 ||
                strcmp(type, "PodResizeInProgress") == 0)
                note_once(NOTE_RESIZE, pod, "status.conditions (resize)");
        }
}

/* --- matchLabelKeys, mismatchLabelKeys ------------------------------------ */

static int selector_has_key(const ks_requirement_t *reqs, uint32_t n,
                            const char *key)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (reqs[i].key == key || strcmp(reqs[i].key, key) == 0)
            return 1;
    return 0;
}

static const char *const *label_value_ref(const ks_pod_t *pod,
                                          const char *key)
{
    uint32_t i;
    for (i = 0; i < pod->labels.n; i++)
        if (pod->labels.items[i].key == key ||
            strcmp(pod->labels.items[i].key, key) == 0)
            return &pod->labels.items[i].value;
    return NULL;
}

/*
 * What the API server does when the pod is created (v1.34+ for spread
 * constraints, v1.31+ for affinity terms): for each key the pod has a label
 * for, an In (match) or NotIn (mismatch) requirement with the pod's value is
 * appended to the selector. A nil selector stays nil (it selects nothing).
 * A key the selector already constrains is left alone: upstream's
 * validation forbids a key in both places, so such a requirement is the
 * API server's own earlier merge (a pod read back from the API server).
 */
static int merge_label_keys(ks_yctx_t *c, const ks_pod_t *pod,
                            const ks_label_keys_t *k,
                            const ks_label_selector_t **selp)
{
    const ks_label_selector_t *old = *selp;
    ks_label_selector_t *sel;
    ks_requirement_t *reqs;
    uint32_t cap, n, i;
    if (old == NULL ||
        k->n_match_label_keys + k->n_mismatch_label_keys == 0)
        return 0;
    cap = old->n + k->n_match_label_keys + k->n_mismatch_label_keys;
    if ((sel = ky_alloc(c, sizeof(*sel))) == NULL ||
        (reqs = ky_alloc(c, cap * sizeof(*reqs))) == NULL)
        return KS_ENOMEM;
    for (n = 0; n < old->n; n++)
        reqs[n] = old->reqs[n];
    for (i = 0; i < k->n_match_label_keys + k->n_mismatch_label_keys; i++) {
        int match = i < k->n_match_label_keys;
        const char *key =
            match ? k->match_label_keys[i]
                  : k->mismatch_label_keys[i - k->n_match_label_keys];
        const char *const *val = label_value_ref(pod, key);
        if (val == NULL || selector_has_key(reqs, n, key))
            continue;
        reqs[n].key = key;
        reqs[n].op = match ? KS_OP_IN : KS_OP_NOT_IN;
        reqs[n].values = val;
        reqs[n].n_values = 1;
        n++;
    }
    if (n == old->n)
        return 0;
    sel->reqs = reqs;
    sel->n = n;
    *selp = sel;
    return 0;
}

/* --- affinity ------------------------------------------------------------- */

static int parse_node_selector_term(ks_yctx_t *c, const yaml_node_t *n,
                                    ks_node_selector_term_t *t)
{
    size_t old;
    int rc;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    old = ky_push(c, "matchExpressions");
    rc = ky_requirements(c, ky_get(c, n, "matchExpressions"), 1,
                         &t->match_expressions, &t->n_match_expressions);
    ky_pop(c, old);
    if (rc != 0)
        return rc;
    old = ky_push(c, "matchFields");
    rc = ky_requirements(c, ky_get(c, n, "matchFields"), 1, &t->match_fields,
                         &t->n_match_fields);
    ky_pop(c, old);
    return rc;
}

static int parse_node_affinity(ks_yctx_t *c, const yaml_node_t *n,
                               const ks_node_affinity_t **out)
{
    ks_node_affinity_t *na;
    const yaml_node_t *req, *pref;
    size_t old;
    uint32_t i;
    int rc;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    if ((na = ky_alloc(c, sizeof(*na))) == NULL)
        return KS_ENOMEM;
    req = ky_get(c, n, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req != NULL) {
        ks_node_selector_t *sel;
        ks_node_selector_term_t *terms = NULL;
        const yaml_node_t *tn;
        size_t old2;
        old = ky_push(c, "requiredDuringSchedulingIgnoredDuringExecution");
        if ((rc = ky_expect_map(c, req)) != 0)
            return rc;
        if ((sel = ky_alloc(c, sizeof(*sel))) == NULL)
            return KS_ENOMEM;
        tn = ky_get(c, req, "nodeSelectorTerms");
        old2 = ky_push(c, "nodeSelectorTerms");
        if ((rc = ky_expect_seq(c, tn)) != 0)
            return rc;
        sel->n_terms = ky_seq_len(tn);
        if (sel->n_terms > 0 &&
            (terms = ky_alloc(c, sel->n_terms * sizeof(*terms))) == NULL)
            return KS_ENOMEM;
        for (i = 0; i < sel->n_terms; i++) {
            size_t old3 = ky_push_index(c, i);
            if ((rc = parse_node_selector_term(c, ky_seq_at(c, tn, i),
                                               &terms[i])) != 0)
                return rc;
            ky_pop(c, old3);
        }
        sel->terms = terms;
        ky_pop(c, old2);
        ky_pop(c, old);
        na->required = sel;
    }
    pref = ky_get(c, n, "preferredDuringSchedulingIgnoredDuringExecution");
    if (pref != NULL) {
        ks_preferred_scheduling_term_t *p = NULL;
        old = ky_push(c, "preferredDuringSchedulingIgnoredDuringExecution");
        if ((rc = ky_expect_seq(c, pref)) != 0)
            return rc;
        na->n_preferred = ky_seq_len(pref);
        if (na->n_preferred > 0 &&
            (p = ky_alloc(c, na->n_preferred * sizeof(*p))) == NULL)
            return KS_ENOMEM;
        for (i = 0; i < na->n_preferred; i++) {
            const yaml_node_t *item = ky_seq_at(c, pref, i);
            size_t old2 = ky_push_index(c, i), old3;
            if ((rc = ky_expect_map(c, item)) != 0)
                return rc;
            if ((rc = ky_f_int32(c, item, "weight", &p[i].weight)) != 0)
                return rc;
            old3 = ky_push(c, "preference");
            rc = parse_node_selector_term(c, ky_get(c, item, "preference"),
                                          &p[i].preference);
            if (rc != 0)
                return rc;
            ky_pop(c, old3);
            ky_pop(c, old2);
        }
        na->preferred = p;
        ky_pop(c, old);
    }
    *out = na;
    return 0;
}

static int parse_pod_affinity_term(ks_yctx_t *c, const yaml_node_t *n,
                                   const ks_pod_t *pod,
                                   ks_pod_affinity_term_t *t,
                                   ks_label_keys_t *k)
{
    int rc;
    if (n == NULL)
        return ky_fail(c, n, "expected a mapping");
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    if ((rc = ky_f_label_selector(c, n, "labelSelector",
                                  &t->label_selector)) != 0 ||
        (rc = ky_f_strings(c, n, "matchLabelKeys", &k->match_label_keys,
                           &k->n_match_label_keys)) != 0 ||
        (rc = ky_f_strings(c, n, "mismatchLabelKeys",
                           &k->mismatch_label_keys,
                           &k->n_mismatch_label_keys)) != 0 ||
        (rc = merge_label_keys(c, pod, k, &t->label_selector)) != 0)
        return rc;
    if ((rc = ky_f_strings(c, n, "namespaces", &t->namespaces,
                           &t->n_namespaces)) != 0)
        return rc;
    if ((rc = ky_f_label_selector(c, n, "namespaceSelector",
                                  &t->namespace_selector)) != 0)
        return rc;
    return ky_f_str(c, n, "topologyKey", &t->topology_key);
}

static int parse_pod_affinity(ks_yctx_t *c, const yaml_node_t *n,
                              const ks_pod_t *pod,
                              const ks_pod_affinity_t **out)
{
    ks_pod_affinity_t *pa;
    const yaml_node_t *req, *pref;
    uint32_t i;
    size_t old;
    int rc;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    if ((pa = ky_alloc(c, sizeof(*pa))) == NULL)
        return KS_ENOMEM;
    req = ky_get(c, n, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req != NULL) {
        ks_pod_affinity_term_t *terms = NULL;
        ks_label_keys_t *keys = NULL;
        old = ky_push(c, "requiredDuringSchedulingIgnoredDuringExecution");
        if ((rc = ky_expect_seq(c, req)) != 0)
            return rc;
        pa->n_required = ky_seq_len(req);
        if (pa->n_required > 0 &&
            ((terms = ky_alloc(c, pa->n_required * sizeof(*terms))) == NULL ||
             (keys = ky_alloc(c, pa->n_required * sizeof(*keys))) == NULL))
            return KS_ENOMEM;
        for (i = 0; i < pa->n_required; i++) {
            size_t old2 = ky_push_index(c, i);
            if ((rc = parse_pod_affinity_term(c, ky_seq_at(c, req, i), pod,
                                              &terms[i], &keys[i])) != 0)
                return rc;
            ky_pop(c, old2);
        }
        pa->required = terms;
        pa->required_keys = keys;
        ky_pop(c, old);
    }
    pref = ky_get(c, n, "preferredDuringSchedulingIgnoredDuringExecution");
    if (pref != NULL) {
        ks_weighted_pod_affinity_term_t *w = NULL;
        ks_label_keys_t *keys = NULL;
        old = ky_push(c, "preferredDuringSchedulingIgnoredDuringExecution");
        if ((rc = ky_expect_seq(c, pref)) != 0)
            return rc;
        pa->n_preferred = ky_seq_len(pref);
        if (pa->n_preferred > 0 &&
            ((w = ky_alloc(c, pa->n_preferred * sizeof(*w))) == NULL ||
             (keys = ky_alloc(c, pa->n_preferred * sizeof(*keys))) == NULL))
            return KS_ENOMEM;
        for (i = 0; i < pa->n_preferred; i++) {
            const yaml_node_t *item = ky_seq_at(c, pref, i);
            size_t old2 = ky_push_index(c, i), old3;
            if ((rc = ky_expect_map(c, item)) != 0)
                return rc;
            if ((rc = ky_f_int32(c, item, "weight", &w[i].weight)) != 0)
                return rc;
            old3 = ky_push(c, "podAffinityTerm");
            rc = parse_pod_affinity_term(
                c, ky_get(c, item, "podAffinityTerm"), pod, &w[i].term,
                &keys[i]);
            if (rc != 0)
                return rc;
            ky_pop(c, old3);
            ky_pop(c, old2);
        }
        pa->preferred = w;
        pa->preferred_keys = keys;
        ky_pop(c, old);
    }
    *out = pa;
    return 0;
}

static int parse_affinity(ks_yctx_t *c, const yaml_node_t *n,
                          const ks_pod_t *pod, ks_affinity_t *a)
{
    const yaml_node_t *v;
    size_t old;
    int rc;
    if ((rc = ky_expect_map(c, n)) != 0)
        return rc;
    if ((v = ky_get(c, n, "nodeAffinity")) != NULL) {
        old = ky_push(c, "nodeAffinity");
        if ((rc = parse_node_affinity(c, v, &a->node_affinity)) != 0)
            return rc;
        ky_pop(c, old);
    }
    if ((v = ky_get(c, n, "podAffinity")) != NULL) {
        old = ky_push(c, "podAffinity");
        if ((rc = parse_pod_affinity(c, v, pod, &a->pod_affinity)) != 0)
            return rc;
        ky_pop(c, old);
    }
    if ((v = ky_get(c, n, "podAntiAffinity")) != NULL) {
        old = ky_push(c, "podAntiAffinity");
        if ((rc = parse_pod_affinity(c, v, pod, &a->pod_anti_affinity)) != 0)
            return rc;
        ky_pop(c, old);
    }
    return 0;
}

/* --- tolerations, spread constraints, gates ------------------------------- */

static int parse_effect(ks_yctx_t *c, const yaml_node_t *map,
                        ks_taint_effect_t *out)
{
    const char *s;
    const yaml_node_t *v = ky_get(c, map, "effect");
    size_t old;
    int rc;
    *out = KS_EFFECT_ALL;
    if (v == NULL)
        return 0;
    old = ky_push(c, "effect");
    if ((rc = ky_str(c, v, &s)) != 0)
        return rc;
    if (s[0] == '\0')
        *out = KS_EFFECT_ALL;
    else if (strcmp(s, "NoSchedule") == 0)
        *out = KS_EFFECT_NO_SCHEDULE;
    else if (strcmp(s, "PreferNoSchedule") == 0)
        *out = KS_EFFECT_PREFER_NO_SCHEDULE;
    else if (strcmp(s, "NoExecute") == 0)
        *out = KS_EFFECT_NO_EXECUTE;
    else
        return ky_fail(c, v, "unknown effect \"%s\" (valid: NoSchedule, "
                             "PreferNoSchedule, NoExecute)", s);
    ky_pop(c, old);
    return 0;
}

static int parse_tolerations_item(ks_yctx_t *c, const yaml_node_t *item,
                                  void *elem, void *ud)
{
    ks_toleration_t *t = elem;
    const yaml_node_t *opn;
    const char *op;
    int rc;
    (void)ud;
    if ((rc = ky_f_str(c, item, "key", &t->key)) != 0 ||
        (rc = ky_f_str(c, item, "value", &t->value)) != 0 ||
        (rc = ky_f_str(c, item, "operator", &op)) != 0 ||
        (rc = parse_effect(c, item, &t->effect)) != 0)
        return rc;
    opn = ky_get(c, item, "operator");
    if (op[0] == '\0' || strcmp(op, "Equal") == 0) {
        t->op = KS_TOLERATION_EQUAL;
    } else if (strcmp(op, "Exists") == 0) {
        t->op = KS_TOLERATION_EXISTS;
    } else {
        ky_push(c, "operator");
        return ky_fail(c, opn, "unknown operator \"%s\" (valid: Equal, "
                               "Exists)", op);
    }
    return 0;
}

static int parse_tolerations(ks_yctx_t *c, const yaml_node_t *n, ks_pod_t *pod)
{
    void *arr;
    int rc = ky_seq_of_maps(c, n, sizeof(ks_toleration_t),
                            parse_tolerations_item, NULL, &arr,
                            &pod->n_tolerations);
    pod->tolerations = arr;
    return rc;
}

static int parse_policy(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                        ks_inclusion_policy_t *out)
{
    const char *s;
    int rc;
    if ((rc = ky_f_str(c, map, key, &s)) != 0)
        return rc;
    if (s[0] == '\0') {
        *out = KS_POLICY_UNSET;
    } else if (strcmp(s, "Honor") == 0) {
        *out = KS_POLICY_HONOR;
    } else if (strcmp(s, "Ignore") == 0) {
        *out = KS_POLICY_IGNORE;
    } else {
        size_t old = ky_push(c, key);
        rc = ky_fail(c, ky_get(c, map, key),
                     "unknown policy \"%s\" (valid: Honor, Ignore)", s);
        ky_pop(c, old);
        return rc;
    }
    return 0;
}

static int parse_spread_item(ks_yctx_t *c, const yaml_node_t *item,
                             void *elem, void *ud)
{
    ks_topology_spread_constraint_t *t = elem;
    const char *wu;
    int rc;
    (void)ud;
    if ((rc = ky_f_int32(c, item, "maxSkew", &t->max_skew)) != 0 ||
        (rc = ky_f_str(c, item, "topologyKey", &t->topology_key)) != 0 ||
        (rc = ky_f_str(c, item, "whenUnsatisfiable", &wu)) != 0 ||
        (rc = ky_f_label_selector(c, item, "labelSelector",
                                  &t->label_selector)) != 0 ||
        (rc = ky_f_int32(c, item, "minDomains", &t->min_domains)) != 0 ||
        (rc = parse_policy(c, item, "nodeAffinityPolicy",
                           &t->node_affinity_policy)) != 0 ||
        (rc = parse_policy(c, item, "nodeTaintsPolicy",
                           &t->node_taints_policy)) != 0)
        return rc;
    if (wu[0] == '\0' || strcmp(wu, "DoNotSchedule") == 0) {
        t->when_unsatisfiable = KS_DO_NOT_SCHEDULE;
    } else if (strcmp(wu, "ScheduleAnyway") == 0) {
        t->when_unsatisfiable = KS_SCHEDULE_ANYWAY;
    } else {
        ky_push(c, "whenUnsatisfiable");
        return ky_fail(c, ky_get(c, item, "whenUnsatisfiable"),
                       "unknown action \"%s\" (valid: DoNotSchedule, "
                       "ScheduleAnyway)", wu);
    }
    return 0;
}

static int parse_spread(ks_yctx_t *c, const yaml_node_t *n, ks_pod_t *pod)
{
    ks_topology_spread_constraint_t *tsc;
    ks_label_keys_t *keys;
    void *arr;
    uint32_t i;
    int rc = ky_seq_of_maps(c, n, sizeof(ks_topology_spread_constraint_t),
                            parse_spread_item, NULL, &arr,
                            &pod->n_spread_constraints);
    pod->spread_constraints = tsc = arr;
    if (rc != 0 || pod->n_spread_constraints == 0)
        return rc;
    /* matchLabelKeys, merged as the API server does at creation. */
    if ((keys = ky_alloc(c, pod->n_spread_constraints * sizeof(*keys))) ==
        NULL)
        return KS_ENOMEM;
    for (i = 0; i < pod->n_spread_constraints; i++) {
        size_t old = ky_push_index(c, i);
        if ((rc = ky_f_strings(c, ky_seq_at(c, n, i), "matchLabelKeys",
                               &keys[i].match_label_keys,
                               &keys[i].n_match_label_keys)) != 0 ||
            (rc = merge_label_keys(c, pod, &keys[i],
                                   &tsc[i].label_selector)) != 0)
            return rc;
        ky_pop(c, old);
    }
    pod->spread_keys = keys;
    return 0;
}

static int parse_gates_item(ks_yctx_t *c, const yaml_node_t *item,
                            void *elem, void *ud)
{
    (void)ud;
    return ky_f_str(c, item, "name", (const char **)elem);
}

static int parse_gates(ks_yctx_t *c, const yaml_node_t *n, ks_pod_t *pod)
{
    void *arr;
    int rc = ky_seq_of_maps(c, n, sizeof(const char *), parse_gates_item,
                            NULL, &arr, &pod->n_scheduling_gates);
    pod->scheduling_gates = arr;
    return rc;
}

/* --- volumes (ABI 1.3; inline in-tree sources ABI 1.4) -------------------- */

/* The inline in-tree sources ks_volume_inline_t carries: the field of a
 * v1.Volume and the field its `id` is read from. */
static const struct inline_source {
    const char *field;
    ks_inline_kind_t kind;
    const char *id;
} inline_sources[] = {
    {"gcePersistentDisk", KS_INLINE_GCE_PD, "pdName"},
    {"awsElasticBlockStore", KS_INLINE_AWS_EBS, "volumeID"},
    {"iscsi", KS_INLINE_ISCSI, "iqn"},
    {"rbd", KS_INLINE_RBD, "image"},
    {"azureDisk", KS_INLINE_AZURE_DISK, "diskName"},
    {"cinder", KS_INLINE_CINDER, "volumeID"},
    {"portworxVolume", KS_INLINE_PORTWORX, "volumeID"},
};

/* parse_volumes_item's state: the pod, how many volumes it has, the item
 * being read, and the volume_inline array, allocated (in the pod's arena)
 * at the first volume with an inline in-tree source only, so that a pod
 * without one costs nothing more. */
typedef struct volumes_ud {
    ks_pod_t *pod;
    uint32_t len;
    uint32_t at;
    ks_volume_inline_t *inl;
} volumes_ud_t;

/* The volume's inline in-tree source (the first of inline_sources that it
 * sets: a valid volume has one source) into u->inl[u->at]. The strings
 * are counted (the caller set c->counted). */
static int parse_volume_inline(ks_yctx_t *c, const yaml_node_t *item,
                               volumes_ud_t *u)
{
    const struct inline_source *is = NULL;
    const yaml_node_t *src = NULL;
    ks_volume_inline_t *vi;
    size_t old;
    uint32_t k;
    int rc;
    for (k = 0; k < sizeof inline_sources / sizeof inline_sources[0]; k++)
        if ((src = ky_get(c, item, inline_sources[k].field)) != NULL &&
            !ky_is_null(src)) {
            is = &inline_sources[k];
            break;
        }
    if (is == NULL)
        return 0;
    if (u->inl == NULL &&
        (u->inl = ky_alloc(c, u->len * sizeof(*u->inl))) == NULL)
        return KS_ENOMEM; /* zero-filled: kind KS_INLINE_NONE */
    vi = &u->inl[u->at];
    old = ky_push(c, is->field);
    if ((rc = ky_expect_map(c, src)) != 0)
        return rc;
    vi->kind = is->kind;
    if ((rc = ky_f_str(c, src, is->id, &vi->id)) != 0 ||
        (rc = ky_f_bool(c, src, "readOnly", &vi->read_only)) != 0)
        return rc;
    if (is->kind == KS_INLINE_AZURE_DISK &&
        (rc = ky_f_str(c, src, "diskURI", &vi->disk_uri)) != 0)
        return rc;
    if (is->kind == KS_INLINE_RBD) {
        /* the API server's default pool */
        if ((rc = ky_f_str(c, src, "pool", &vi->pool)) != 0)
            return rc;
        if (vi->pool[0] == '\0' && (vi->pool = ky_intern(c, "rbd", 3)) == NULL)
            return KS_ENOMEM;
        if ((rc = ky_f_strings(c, src, "monitors", &vi->monitors,
                               &vi->n_monitors)) != 0)
            return rc;
    }
    ky_pop(c, old);
    return 0;
}

static int parse_volumes_item(ks_yctx_t *c, const yaml_node_t *item,
                              void *elem, void *ud)
{
    ks_volume_t *v = elem;
    volumes_ud_t *u = ud;
    const ks_pod_t *pod = u->pod;
    const yaml_node_t *src;
    int rc;
    /* Names live as long as the pod (claims of a StatefulSet's pods are
     * as many as its pods). */
    c->counted = 1;
    rc = ky_f_str(c, item, "name", &v->name);
    v->claim_name = ks_intern_empty(c->in);
    if (rc == 0 && (src = ky_get(c, item, "persistentVolumeClaim")) != NULL) {
        size_t old = ky_push(c, "persistentVolumeClaim");
        v->source = KS_VOLUME_PVC;
        if ((rc = ky_expect_map(c, src)) == 0 &&
            (rc = ky_f_str(c, src, "claimName", &v->claim_name)) == 0)
            rc = ky_f_bool(c, src, "readOnly", &v->read_only);
        ky_pop(c, old);
    } else if (rc == 0 && ky_get(c, item, "ephemeral") != NULL) {
        /* The claim the API server's ephemeral controller makes:
         * "<pod name>-<volume name>" (upstream ephemeral.VolumeClaimName). */
        char buf[512];
        int w = snprintf(buf, sizeof buf, "%s-%s", pod->name, v->name);
        v->source = KS_VOLUME_EPHEMERAL;
        if (w < 0 || (size_t)w >= sizeof buf)
            rc = ky_fail(c, item, "ephemeral volume claim name too long");
        else if ((v->claim_name = ky_intern(c, buf, (size_t)w)) == NULL)
            rc = KS_ENOMEM;
    } else if (rc == 0) {
        rc = parse_volume_inline(c, item, u);
    }
    c->counted = 0;
    u->at++;
    return rc;
}

static int parse_volumes(ks_yctx_t *c, const yaml_node_t *n, ks_pod_t *pod)
{
    volumes_ud_t u = {pod, 0, 0, NULL};
    void *arr;
    int rc;
    if (n != NULL && ky_is_seq(n))
        u.len = ky_seq_len(n);
    rc = ky_seq_of_maps(c, n, sizeof(ks_volume_t), parse_volumes_item, &u,
                        &arr, &pod->n_volumes);
    pod->volumes = arr;
    pod->volume_inline = rc == 0 ? u.inl : NULL;
    return rc;
}

/* --- resource claims (ABI 1.5) ------------------------------------------- */

static int parse_claims_item(ks_yctx_t *c, const yaml_node_t *item,
                             void *elem, void *ud)
{
    ks_pod_claim_t *pc = elem;
    int rc;
    (void)ud;
    /* Claims made from templates are as many as the pods: the names live
     * as long as the pod. */
    c->counted = 1;
    if ((rc = ky_f_str(c, item, "name", &pc->name)) == 0 &&
        (rc = ky_f_str(c, item, "resourceClaimName", &pc->claim_name)) == 0)
        rc = ky_f_str(c, item, "resourceClaimTemplateName",
                      &pc->template_name);
    c->counted = 0;
    pc->status_claim_name = ks_intern_empty(c->in);
    if (rc == 0 && pc->name[0] == '\0')
        rc = ky_fail(c, item, "name is required");
    return rc;
}

static int parse_resource_claims(ks_yctx_t *c, const yaml_node_t *n,
                                 ks_pod_t *pod)
{
    void *arr;
    int rc = ky_seq_of_maps(c, n, sizeof(ks_pod_claim_t), parse_claims_item,
                            NULL, &arr, &pod->n_resource_claims);
    pod->resource_claims = pod->n_resource_claims > 0 ? arr : NULL;
    return rc;
}

/* status.resourceClaimStatuses: each entry's resourceClaimName goes to the
 * spec entry of the same name (an entry naming none is ignored, as the
 * API server's validation refuses it). */
static int parse_claim_statuses(ks_yctx_t *c, const yaml_node_t *status,
                                ks_pod_t *pod)
{
    const yaml_node_t *n = ky_get(c, status, "resourceClaimStatuses");
    size_t old;
    uint32_t i, j;
    int rc = 0;
    if (n == NULL || ky_is_null(n))
        return 0;
    old = ky_push(c, "resourceClaimStatuses");
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    for (i = 0; i < ky_seq_len(n) && rc == 0; i++) {
        const yaml_node_t *item = ky_seq_at(c, n, i);
        const char *name = NULL, *claim = NULL;
        size_t o2 = ky_push_index(c, i);
        if ((rc = ky_expect_map(c, item)) != 0)
            break;
        c->counted = 1;
        if ((rc = ky_f_str(c, item, "name", &name)) == 0)
            rc = ky_f_str(c, item, "resourceClaimName", &claim);
        c->counted = 0;
        ky_pop(c, o2);
        if (rc != 0)
            break;
        for (j = 0; j < pod->n_resource_claims; j++) {
            /* The array was allocated by this reader. */
            ks_pod_claim_t *pc = (ks_pod_claim_t *)&pod->resource_claims[j];
            if (pc->name == name || strcmp(pc->name, name) == 0) {
                pc->has_status = 1;
                pc->status_claim_name = claim;
                break;
            }
        }
    }
    if (rc == 0)
        ky_pop(c, old);
    return rc;
}

/* --- containers ----------------------------------------------------------- */

static int parse_ports_item(ks_yctx_t *c, const yaml_node_t *item,
                            void *elem, void *ud)
{
    ks_container_port_t *p = elem;
    const char *proto;
    int rc;
    (void)ud;
    if ((rc = ky_f_int32(c, item, "containerPort",
                         &p->container_port)) != 0 ||
        (rc = ky_f_int32(c, item, "hostPort", &p->host_port)) != 0 ||
        (rc = ky_f_str(c, item, "protocol", &proto)) != 0 ||
        (rc = ky_f_str(c, item, "hostIP", &p->host_ip)) != 0)
        return rc;
    if (proto[0] == '\0' || strcmp(proto, "TCP") == 0) {
        p->protocol = KS_PROTO_TCP;
    } else if (strcmp(proto, "UDP") == 0) {
        p->protocol = KS_PROTO_UDP;
    } else if (strcmp(proto, "SCTP") == 0) {
        p->protocol = KS_PROTO_SCTP;
    } else {
        ky_push(c, "protocol");
        return ky_fail(c, ky_get(c, item, "protocol"),
                       "unknown protocol \"%s\" (valid: TCP, UDP, SCTP)",
                       proto);
    }
    return 0;
}

static int parse_ports(ks_yctx_t *c, const yaml_node_t *n, ks_container_t *ct)
{
    void *arr;
    int rc = ky_seq_of_maps(c, n, sizeof(ks_container_port_t),
                            parse_ports_item, NULL, &arr, &ct->n_ports);
    ct->ports = arr;
    return rc;
}

/* The API server's defaulting: every resource with a limit and no request
 * gets the limit as its request. */
static void requests_from_limits(ks_container_t *ct, unsigned *req_present,
                                 unsigned lim_present)
{
    uint32_t i;
    if ((lim_present & KY_RES_CPU) && !(*req_present & KY_RES_CPU))
        ct->requests.milli_cpu = ct->limits.milli_cpu;
    if ((lim_present & KY_RES_MEMORY) && !(*req_present & KY_RES_MEMORY))
        ct->requests.memory = ct->limits.memory;
    if ((lim_present & KY_RES_EPHEMERAL) && !(*req_present & KY_RES_EPHEMERAL))
        ct->requests.ephemeral_storage = ct->limits.ephemeral_storage;
    if ((lim_present & KY_RES_PODS) && !(*req_present & KY_RES_PODS))
        ct->requests.allowed_pods = ct->limits.allowed_pods;
    *req_present |= lim_present;
    for (i = 0; i < ct->limits.n_scalar; i++) {
        const ks_scalar_resource_t *s = &ct->limits.scalar[i];
        uint32_t j;
        for (j = 0; j < ct->requests.n_scalar; j++)
            if (ct->requests.scalar[j].name == s->name)
                break;
        if (j == ct->requests.n_scalar)
            ks_resources_set_scalar(&ct->requests, s->name, s->value);
    }
}

static int parse_container(ks_yctx_t *c, const yaml_node_t *n,
                           ks_container_t *ct, container_flags_t *fl)
{
    const yaml_node_t *res;
    const char *restart;
    unsigned lim = 0;
    size_t old;
    int rc;
    if (n == NULL || !ky_is_map(n))
        return n ? ky_expect_map(c, n) : ky_fail(c, n, "expected a mapping");
    if ((rc = ky_f_str(c, n, "name", &ct->name)) != 0 ||
        (rc = ky_f_str(c, n, "image", &ct->image)) != 0 ||
        (rc = ky_f_str(c, n, "restartPolicy", &restart)) != 0)
        return rc;
    fl->present = 0;
    fl->restart_always = strcmp(restart, "Always") == 0;
    res = ky_get(c, n, "resources");
    if (res != NULL) {
        old = ky_push(c, "resources");
        if ((rc = ky_expect_map(c, res)) != 0 ||
            (rc = ky_f_resources(c, res, "requests", &ct->requests,
                                 &fl->present)) != 0 ||
            (rc = ky_f_resources(c, res, "limits", &ct->limits, &lim)) != 0)
            return rc;
        ky_pop(c, old);
        /* a limit needs a free request slot when it is a new scalar */
        if (ct->limits.n_scalar > 0) {
            ks_resources_t probe = ct->requests;
            uint32_t i;
            for (i = 0; i < ct->limits.n_scalar; i++)
                if (ks_resources_scalar(&probe, ct->limits.scalar[i].name) ==
                        0 &&
                    ks_resources_set_scalar(&probe, ct->limits.scalar[i].name,
                                            0) != 0) {
                    old = ky_push(c, "resources");
                    return ky_fail(c, res, "more than %d extended resources",
                                   KS_MAX_SCALAR_RESOURCES);
                }
        }
        requests_from_limits(ct, &fl->present, lim);
    }
    if (ky_get(c, n, "ports") != NULL) {
        old = ky_push(c, "ports");
        if ((rc = parse_ports(c, ky_get(c, n, "ports"), ct)) != 0)
            return rc;
        ky_pop(c, old);
    }
    return 0;
}

static int parse_containers(ks_yctx_t *c, const yaml_node_t *spec,
                            const char *key, const ks_container_t **out,
                            uint32_t *n_out, container_flags_t **flags)
{
    const yaml_node_t *n = ky_get(c, spec, key);
    ks_container_t *ct;
    container_flags_t *fl;
    uint32_t i, cnt;
    size_t old;
    int rc;
    *out = NULL;
    *n_out = 0;
    *flags = NULL;
    if (n == NULL)
        return 0;
    old = ky_push(c, key);
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    cnt = ky_seq_len(n);
    if (cnt > 0) {
        if ((ct = ky_alloc(c, cnt * sizeof(*ct))) == NULL ||
            (fl = ky_alloc(c, cnt * sizeof(*fl))) == NULL)
            return KS_ENOMEM;
        for (i = 0; i < cnt; i++) {
            size_t old2 = ky_push_index(c, i);
            if ((rc = parse_container(c, ky_seq_at(c, n, i), &ct[i],
                                      &fl[i])) != 0)
                return rc;
            ky_pop(c, old2);
        }
        *out = ct;
        *n_out = cnt;
        *flags = fl;
    }
    ky_pop(c, old);
    return 0;
}

/* --- derived fields ------------------------------------------------------- */

static int compute_derived(ks_yctx_t *c, ks_pod_t *pod,
                           const ks_pod_req_flags_t *d)
{
    ks_container_port_t *hp;
    uint32_t i, j, k, n_hp = 0;

    ks_pod_requests_derive(pod, d);
    for (i = 0; i < pod->n_containers; i++)
        for (j = 0; j < pod->containers[i].n_ports; j++)
            if (pod->containers[i].ports[j].host_port > 0)
                n_hp++;
    if (n_hp == 0)
        return 0;
    if ((hp = ky_alloc(c, n_hp * sizeof(*hp))) == NULL)
        return KS_ENOMEM;
    k = 0;
    for (i = 0; i < pod->n_containers; i++)
        for (j = 0; j < pod->containers[i].n_ports; j++)
            if (pod->containers[i].ports[j].host_port > 0)
                hp[k++] = pod->containers[i].ports[j];
    pod->host_ports = hp;
    pod->n_host_ports = n_hp;
    return 0;
}

/* The API server's defaulting for hostNetwork pods: a port without a host
 * port gets its container port. */
static void default_host_network_ports(const ks_container_t *cts, uint32_t n)
{
    uint32_t i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < cts[i].n_ports; j++) {
            /* The ports were allocated by this reader. */
            ks_container_port_t *p = (ks_container_port_t *)&cts[i].ports[j];
            if (p->host_port == 0)
                p->host_port = p->container_port;
        }
}

/* --- the pod -------------------------------------------------------------- */

static int parse_metadata(ks_yctx_t *c, const yaml_node_t *root,
                          ks_pod_t *pod)
{
    const yaml_node_t *md = ky_get(c, root, "metadata");
    size_t old;
    int rc;
    if (md == NULL)
        return ky_fail(c, root, "metadata.name is required");
    old = ky_push(c, "metadata");
    if ((rc = ky_expect_map(c, md)) != 0)
        return rc;
    /* The name, uid and annotations live as long as the pod (counted: a
     * pod that goes gives them back); other strings are shared with many
     * objects and stay. */
    if ((rc = ky_f_str(c, md, "namespace", &pod->ns)) != 0)
        return rc;
    c->counted = 1;
    rc = ky_f_str(c, md, "name", &pod->name);
    c->counted = 0;
    if (rc != 0)
        return rc;
    ky_pop(c, old);
    if (pod->ns[0] == '\0' &&
        (pod->ns = ky_intern(c, "default", 7)) == NULL)
        return KS_ENOMEM;
    if (pod->name[0] == '\0')
        return ky_fail(c, md, "metadata.name is required");
    ky_set_what(c, "pod", pod->ns, pod->name);
    old = ky_push(c, "metadata");
    c->counted = 1;
    rc = ky_f_str(c, md, "uid", &pod->uid);
    if (rc == 0)
        rc = ky_f_labels(c, md, "annotations", &pod->annotations);
    c->counted = 0;
    if (rc != 0)
        return rc;
    if ((rc = ky_f_labels(c, md, "labels", &pod->labels)) != 0 ||
        (rc = ky_f_time(c, md, "creationTimestamp",
                        &pod->creation_unix_ms)) != 0)
        return rc;
    if (ky_get(c, md, "deletionTimestamp") != NULL) {
        int64_t ignored = 0;
        if ((rc = ky_f_time(c, md, "deletionTimestamp", &ignored)) != 0)
            return rc;
        pod->deleting = 1;
    }
    ky_pop(c, old);
    if (pod->uid[0] == '\0') {
        char buf[512];
        int w = snprintf(buf, sizeof(buf), "%s/%s", pod->ns, pod->name);
        if (w < 0 || (size_t)w >= sizeof(buf))
            return ky_fail(c, md, "namespace/name too long");
        c->counted = 1;
        pod->uid = ky_intern(c, buf, (size_t)w);
        c->counted = 0;
        if (pod->uid == NULL)
            return KS_ENOMEM;
    }
    return 0;
}

static int parse_spec(ks_yctx_t *c, const yaml_node_t *spec, ks_pod_t *pod)
{
    container_flags_t *cfl = NULL, *ifl = NULL;
    ks_pod_req_flags_t d = {NULL, NULL, 0, 0, 0};
    const yaml_node_t *v;
    uint8_t *sidecar;
    size_t old;
    int rc, host_network = 0;

    old = ky_push(c, "spec");
    if ((rc = ky_expect_map(c, spec)) != 0)
        return rc;
    if ((rc = ky_f_str(c, spec, "schedulerName", &pod->scheduler_name)) != 0 ||
        (rc = ky_f_str(c, spec, "nodeName", &pod->node_name)) != 0 ||
        (rc = ky_f_labels(c, spec, "nodeSelector", &pod->node_selector)) != 0 ||
        (rc = ky_f_int32(c, spec, "priority", &pod->priority)) != 0 ||
        (rc = ky_f_str(c, spec, "priorityClassName",
                       &pod->priority_class_name)) != 0 ||
        (rc = ky_f_resources(c, spec, "overhead", &pod->overhead,
                             &d.overhead)) != 0 ||
        (rc = ky_f_bool(c, spec, "hostNetwork", &host_network)) != 0)
        return rc;
    if ((v = ky_get(c, spec, "resources")) != NULL) {
        size_t o2 = ky_push(c, "resources");
        if ((rc = ky_expect_map(c, v)) != 0 ||
            (rc = ky_f_resources(c, v, "requests", &pod->pod_requests,
                                 &d.pod_req)) != 0 ||
            (rc = ky_f_resources(c, v, "limits", &pod->pod_limits,
                                 &d.pod_lim)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    {
        const char *policy = NULL;
        if ((rc = ky_f_str(c, spec, "preemptionPolicy", &policy)) != 0)
            return rc;
        if (policy && strcmp(policy, "Never") == 0)
            pod->preempt_never = 1;
        else if (policy && policy[0] && strcmp(policy, "PreemptLowerPriority"))
            return ky_fail(c, ky_get(c, spec, "preemptionPolicy"),
                           "preemptionPolicy must be PreemptLowerPriority or "
                           "Never, got \"%s\"",
                           policy);
    }
    if ((v = ky_get(c, spec, "affinity")) != NULL) {
        size_t o2 = ky_push(c, "affinity");
        if ((rc = parse_affinity(c, v, pod, &pod->affinity)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((v = ky_get(c, spec, "tolerations")) != NULL) {
        size_t o2 = ky_push(c, "tolerations");
        if ((rc = parse_tolerations(c, v, pod)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((v = ky_get(c, spec, "topologySpreadConstraints")) != NULL) {
        size_t o2 = ky_push(c, "topologySpreadConstraints");
        if ((rc = parse_spread(c, v, pod)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((v = ky_get(c, spec, "schedulingGates")) != NULL) {
        size_t o2 = ky_push(c, "schedulingGates");
        if ((rc = parse_gates(c, v, pod)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((v = ky_get(c, spec, "volumes")) != NULL) {
        size_t o2 = ky_push(c, "volumes");
        if ((rc = parse_volumes(c, v, pod)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((v = ky_get(c, spec, "resourceClaims")) != NULL) {
        size_t o2 = ky_push(c, "resourceClaims");
        if ((rc = parse_resource_claims(c, v, pod)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    if ((rc = parse_containers(c, spec, "containers", &pod->containers,
                               &pod->n_containers, &cfl)) != 0 ||
        (rc = parse_containers(c, spec, "initContainers",
                               &pod->init_containers, &pod->n_init_containers,
                               &ifl)) != 0)
        return rc;
    ky_pop(c, old);
    if (pod->n_init_containers > 0) {
        uint32_t i;
        if ((sidecar = ky_alloc(c, pod->n_init_containers)) == NULL)
            return KS_ENOMEM;
        for (i = 0; i < pod->n_init_containers; i++)
            sidecar[i] = (uint8_t)(ifl[i].restart_always != 0);
        pod->init_restart_always = sidecar;
    }
    if (host_network) {
        default_host_network_ports(pod->containers, pod->n_containers);
        default_host_network_ports(pod->init_containers,
                                   pod->n_init_containers);
    }
    d.cfl = cfl;
    d.ifl = ifl;
    return compute_derived(c, pod, &d);
}

int ks_pod_from_yaml(const char *file, void *doc, void *node, ks_intern_t *in,
                     ks_pod_t **out, ks_error_t *err)
{
    yaml_node_t *root = node, *v;
    ks_yctx_t ctx, *c = &ctx;
    ks_arena_t *arena;
    pod_block_t *blk;
    ks_pod_t *pod;
    int rc;

    *out = NULL;
    if ((arena = ks_arena_new(pod_size_hint)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    ky_init(c, file, doc, in, arena, err);
    ky_set_what(c, "pod", NULL, NULL);
    if ((blk = ky_alloc(c, sizeof(*blk))) == NULL) {
        rc = KS_ENOMEM;
        goto fail;
    }
    blk->arena = arena;
    blk->in = in;
    pod = &blk->pod;
    if (root == NULL || !ky_is_map(root)) {
        rc = ky_fail(c, root, "expected a mapping");
        goto fail;
    }
    pod->scheduler_name = pod->node_name = pod->nominated_node_name =
        pod->priority_class_name = ks_intern_empty(in);
    if ((rc = parse_metadata(c, root, pod)) != 0)
        goto fail;
    if ((v = ky_get(c, root, "spec")) != NULL) {
        if ((rc = parse_spec(c, v, pod)) != 0)
            goto fail;
    } else {
        ks_pod_req_flags_t d = {NULL, NULL, 0, 0, 0};
        if ((rc = compute_derived(c, pod, &d)) != 0)
            goto fail;
    }
    if (pod->scheduler_name[0] == '\0' &&
        (pod->scheduler_name = ky_intern(c, "default-scheduler", 17)) ==
            NULL) {
        rc = KS_ENOMEM;
        goto fail;
    }
    if ((v = ky_get(c, root, "status")) != NULL) {
        size_t old = ky_push(c, "status");
        if ((rc = ky_expect_map(c, v)) != 0 ||
            (rc = ky_f_str(c, v, "nominatedNodeName",
                           &pod->nominated_node_name)) != 0 ||
            (rc = ky_f_time(c, v, "startTime", &pod->start_unix_ms)) != 0 ||
            (rc = parse_claim_statuses(c, v, pod)) != 0)
            goto fail;
        ky_pop(c, old);
    }
    if ((rc = ky_refs_keep(c, &blk->refs, &blk->n_refs)) != 0)
        goto fail;
    note_unmodelled(c, root, pod);
    pod_size_hint = ks_arena_used(arena) + 64;
    *out = pod;
    return 0;
fail:
    ky_refs_drop(c);
    ks_arena_free(arena);
    return rc;
}

void ks_pod_free(ks_pod_t *pod)
{
    pod_block_t *blk;
    if (pod == NULL)
        return;
    blk = (pod_block_t *)(void *)((char *)pod - offsetof(pod_block_t, pod));
    ky_refs_release(blk->in, blk->refs, blk->n_refs);
    ks_arena_free(blk->arena);
}
