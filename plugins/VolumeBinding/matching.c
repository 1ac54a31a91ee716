/*
 * Upstream's FindPodVolumes for one node (binder.go), with
 * FindMatchingVolume and CheckVolumeModeMismatches (component-helpers
 * storage/volume), checkVolumeProvisions and hasEnoughCapacity:
 *
 *   - a bound claim's PV must exist (else ERR_PV_NOT_EXIST) and its
 *     required node affinity match the node (else ERR_NODE_CONFLICT);
 *   - an unbound WaitForFirstConsumer claim with the selected-node
 *     annotation fits that node only; the others get the smallest
 *     matching Available PV of their class (claims taken smallest request
 *     first, no PV twice for one pod; a PV pre-bound to the claim wins),
 *     or, when none matches, dynamic provisioning: the class must name a
 *     provisioner other than kubernetes.io/no-provisioner, its
 *     allowedTopologies must match the node, and when the provisioner is
 *     a CSIDriver with storageCapacity: true a CSIStorageCapacity of the
 *     class visible from the node must hold the request
 *     (ERR_NOT_ENOUGH_SPACE).
 *
 * Reads stores and the assume cache only: thread-safe (Filter workers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb.h"

int vb_claim_fully_bound(const vb_t *v, const ks_object_t *pvc)
{
    return vb_str(v, pvc, "spec.volumeName")[0] != '\0' &&
           vb_annotation(v, pvc, ANN_BIND_COMPLETED) != NULL;
}

int vb_pod_volumes_bound(vb_t *v, const ks_pod_t *pod)
{
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *vol = &pod->volumes[i];
        const ks_object_t *pvc;
        if (vol->source != KS_VOLUME_PVC && vol->source != KS_VOLUME_EPHEMERAL)
            continue;
        pvc = v->api->object_get(v->pvcs, pod->ns, vol->claim_name);
        if (pvc == NULL || !vb_claim_fully_bound(v, pvc))
            return 0;
    }
    return 1;
}

void vb_pod_volumes_free(vb_pod_volumes_t *pv)
{
    uint32_t i;
    if (pv == NULL)
        return;
    for (i = 0; i < pv->n_statics; i++) {
        free(pv->statics[i].pv);
        free(pv->statics[i].pv_rv);
        free(pv->statics[i].pv_class);
    }
    free(pv->statics);
    free(pv->provs);
    free(pv);
}

/* --- static matching -------------------------------------------------------- */

/* IsVolumeBoundToClaim with the PV's claimRef as reads see it. */
static int bound_to_claim(const vb_claim_ref_t *ref, const vb_claim_t *c)
{
    return ref->present && strcmp(ref->name, c->name) == 0 &&
           strcmp(ref->ns, c->ns) == 0 &&
           (ref->uid[0] == '\0' || strcmp(ref->uid, c->uid) == 0);
}

/* CheckVolumeModeMismatches: an absent mode is Filesystem. */
static int volume_mode_mismatch(const vb_t *v, const ks_object_t *pvc,
                                const ks_object_t *pv)
{
    const char *a = vb_str(v, pvc, "spec.volumeMode");
    const char *b = vb_str(v, pv, "spec.volumeMode");
    return strcmp(a[0] ? a : "Filesystem", b[0] ? b : "Filesystem") != 0;
}

/* CheckAccessModes: every mode of the claim is one of the PV's. */
static int access_modes_ok(const vb_t *v, const ks_object_t *pvc,
                           const ks_object_t *pv)
{
    uint32_t nc = 0, np = 0, i, j;
    char p[64];
    (void)v->api->object_len(pvc, "spec.accessModes", &nc);
    (void)v->api->object_len(pv, "spec.accessModes", &np);
    for (i = 0; i < nc; i++) {
        const char *m;
        vb_pathf(p, sizeof p, "spec.accessModes[%u]", i);
        m = vb_str(v, pvc, p);
        for (j = 0; j < np; j++) {
            vb_pathf(p, sizeof p, "spec.accessModes[%u]", j);
            if (strcmp(vb_str(v, pv, p), m) == 0)
                break;
        }
        if (j == np)
            return 0;
    }
    return 1;
}

typedef struct match_ud {
    const vb_t *v;
    const vb_claim_t *c;
    const ks_object_t *pvc;
    const ks_node_t *node;
    const char *const *chosen;
    uint32_t n_chosen;
    int has_selector;
    const char *claim_vac;
    const ks_object_t *best; /* the smallest match so far */
    int64_t best_qty;
    const ks_object_t *prebound; /* a PV pre-bound to the claim */
    int prebound_conflict;       /* ... whose node affinity fails */
    const vb_pv_index_t *index;  /* walk_candidates */
    vb_pv_cands_t *cands;
    uint32_t known; /* the candidate's VB_CAND_CLASS, VB_CAND_AFFINITY */
} match_ud_t;

static int match_fn(const ks_object_t *pv, void *ud)
{
    match_ud_t *m = ud;
    const vb_t *v = m->v;
    const char *name = v->api->object_name(pv);
    vb_claim_ref_t ref;
    int64_t qty = 0;
    int affinity_ok;
    ks_labels_t pv_labels;
    uint32_t i;
    /* unboundVolumesDelayBinding: the PVs of the claim's class */
    if (!(m->known & VB_CAND_CLASS) &&
        strcmp(vb_volume_class(v, pv), m->c->class_name) != 0)
        return 0;
    for (i = 0; i < m->n_chosen; i++)
        if (strcmp(m->chosen[i], name) == 0)
            return 0;
    vb_pv_claim_ref(v, pv, &ref);
    if (ref.present && !bound_to_claim(&ref, m->c))
        return 0;
    (void)vb_quantity(v, pv, "spec.capacity.storage", &qty);
    if (qty < m->c->request)
        return 0;
    if (volume_mode_mismatch(v, m->pvc, pv))
        return 0;
    /* VolumeAttributesClass (GA, on): the names must agree. */
    if (strcmp(m->claim_vac, vb_str(v, pv, "spec.volumeAttributesClassName")) !=
        0)
        return 0;
    if (vb_has(v, pv, "metadata.deletionTimestamp"))
        return 0;
    affinity_ok = (m->known & VB_CAND_AFFINITY) != 0 ||
                  vb_node_affinity_matches(v, pv, &m->node->labels);
    if (bound_to_claim(&ref, m->c)) {
        /* pre-bound to this claim: it or nothing */
        m->prebound = pv;
        m->prebound_conflict = !affinity_ok;
        return 1;
    }
    if (strcmp(vb_str(v, pv, "status.phase"), "Available") != 0)
        return 0;
    pv_labels = v->api->object_labels(pv);
    if (m->has_selector &&
        vb_label_selector_matches(v, m->pvc, "spec.selector", &pv_labels) != 1)
        return 0;
    if (!affinity_ok)
        return 0;
    if (!access_modes_ok(v, m->pvc, pv))
        return 0;
    if (m->best == NULL || m->best_qty > qty) {
        m->best = pv;
        m->best_qty = qty;
    }
    return 0;
}

static int add_assumed(const char *pv_name, void *ud)
{
    match_ud_t *m = ud;
    return vb_pv_index_add_name(m->index, pv_name, m->cands);
}

/* match_fn over the node's candidates in store order (pv_index.c says why
 * they decide as the whole store would): 0, or -1 when there is no index
 * (or no memory for the list) and the caller walks the store. */
static int walk_candidates(const vb_t *v, match_ud_t *m)
{
    const vb_pv_index_t *x = vb_pv_index_acquire(v);
    vb_pv_cands_t c;
    uint32_t i;
    if (x == NULL)
        return -1;
    vb_pv_cands_init(&c);
    m->index = x;
    m->cands = &c;
    /* PVs the assume cache pre-binds to the claim, as reads see them */
    if (vb_cache_pvs_claimed(v, m->c->name, add_assumed, m) != 0 ||
        vb_pv_index_candidates(x, m->c->class_name,
                               ks_labels_get(&m->node->labels,
                                             LABEL_HOSTNAME),
                               m->c->name, &c) != 0) {
        vb_pv_cands_free(&c);
        vb_pv_index_release(x);
        return -1;
    }
    for (i = 0; i < c.n; i++) {
        const ks_object_t *pv = vb_pv_index_object(x, c.pos[i]);
        m->known = c.pos[i] & (VB_CAND_CLASS | VB_CAND_AFFINITY);
        if (pv != NULL && match_fn(pv, m) != 0)
            break;
    }
    m->known = 0;
    vb_pv_cands_free(&c);
    vb_pv_index_release(x);
    return 0;
}

/* FindMatchingVolume on the scheduler's path (delayBinding, a node).
 * 0 with *out (NULL: none), or -1 with the error in err. */
static int find_matching_volume(const vb_t *v, const vb_claim_t *c,
                                const ks_object_t *pvc, const ks_node_t *node,
                                const char *const *chosen, uint32_t n_chosen,
                                const ks_object_t **out, char *err,
                                size_t errlen)
{
    match_ud_t m;
    memset(&m, 0, sizeof m);
    m.v = v;
    m.c = c;
    m.pvc = pvc;
    m.node = node;
    m.chosen = chosen;
    m.n_chosen = n_chosen;
    m.claim_vac = vb_str(v, pvc, "spec.volumeAttributesClassName");
    m.has_selector = vb_has(v, pvc, "spec.selector");
    if (m.has_selector) {
        ks_labels_t none = {NULL, 0};
        if (vb_label_selector_matches(v, pvc, "spec.selector", &none) < 0) {
            vb_pathf(err, errlen,
                     "error creating internal label selector for claim: "
                     "%s/%s: invalid label selector",
                     c->ns, c->name);
            return -1;
        }
    }
    if (walk_candidates(v, &m) != 0)
        (void)v->api->object_list(v->pvs, NULL, NULL, match_fn, &m);
    if (m.prebound != NULL)
        *out = m.prebound_conflict ? NULL : m.prebound;
    else
        *out = m.best;
    return 0;
}

/* --- dynamic provisioning ---------------------------------------------------- */

typedef struct cap_ud {
    const vb_t *v;
    const char *class_name;
    int64_t size;
    const ks_labels_t *node_labels;
    const ks_object_t *found;
} cap_ud_t;

static int capacity_fn(const ks_object_t *cap, void *ud)
{
    cap_ud_t *c = ud;
    const vb_t *v = c->v;
    int64_t limit = 0;
    int has_limit;
    if (strcmp(vb_str(v, cap, "storageClassName"), c->class_name) != 0)
        return 0;
    /* volumeLimit: maximumVolumeSize when set, else capacity */
    if (vb_has(v, cap, "maximumVolumeSize"))
        has_limit = vb_quantity(v, cap, "maximumVolumeSize", &limit);
    else
        has_limit = vb_quantity(v, cap, "capacity", &limit);
    if (!has_limit || limit < c->size)
        return 0;
    /* nodeHasAccess: only a nodeTopology label selector grants access */
    if (!vb_has(v, cap, "nodeTopology"))
        return 0;
    {
        /* an empty selector ({}) selects every node */
        uint32_t n = 0;
        (void)v->api->object_len(cap, "nodeTopology", &n);
        if (n != 0 && vb_label_selector_matches(v, cap, "nodeTopology",
                                                c->node_labels) != 1)
            return 0;
    }
    c->found = cap;
    return 1;
}

typedef enum prov_rc {
    PROV_OK = 0,        /* every claim can be provisioned */
    PROV_UNSATISFIED,   /* no provisioner or topology */
    PROV_NO_SPACE,      /* not enough capacity */
    PROV_ERROR
} prov_rc_t;

/* checkVolumeProvisions over claims idx[0..n) of the state. */
static prov_rc_t check_provisions(const vb_t *v, const vb_state_t *s,
                                  const uint32_t *idx, uint32_t n,
                                  const ks_node_t *node, vb_pod_volumes_t *pv,
                                  char *err, size_t errlen)
{
    uint32_t i;
    char q[600], key[600];
    for (i = 0; i < n; i++) {
        const vb_claim_t *c = &s->delay[idx[i]];
        const ks_object_t *sc, *driver;
        const char *provisioner;
        vb_provision_t *np;
        int has_cap = 0;
        int64_t capacity = 0;
        if (c->class_name[0] == '\0') {
            vb_pathf(key, sizeof key, "%s/%s", c->ns, c->name);
            vb_pathf(err, errlen, "no class for claim %s",
                     vb_quote(q, sizeof q, key));
            return PROV_ERROR;
        }
        sc = v->api->object_get(v->classes, NULL, c->class_name);
        if (sc == NULL) {
            vb_pathf(err, errlen, "failed to find storage class %s",
                     vb_quote(q, sizeof q, c->class_name));
            return PROV_ERROR;
        }
        provisioner = vb_str(v, sc, "provisioner");
        if (provisioner[0] == '\0' ||
            strcmp(provisioner, NOT_SUPPORTED_PROVISIONER) == 0)
            return PROV_UNSATISFIED;
        if (!vb_topology_matches(v, sc, &node->labels))
            return PROV_UNSATISFIED;
        /* hasEnoughCapacity */
        driver = c->has_request
                     ? v->api->object_get(v->csidrivers, NULL, provisioner)
                     : NULL;
        if (driver != NULL) {
            int on = 0;
            if (v->api->object_bool(driver, "spec.storageCapacity", &on) ==
                    KS_FIELD_OK &&
                on) {
                cap_ud_t cu = {v, v->api->object_name(sc), c->request,
                               &node->labels, NULL};
                (void)v->api->object_list(v->capacities, NULL, NULL,
                                          capacity_fn, &cu);
                if (cu.found == NULL)
                    return PROV_NO_SPACE;
                has_cap = 1;
                (void)vb_quantity(v, cu.found, "capacity", &capacity);
            }
        }
        np = realloc(pv->provs, (pv->n_provs + 1) * sizeof *np);
        if (np == NULL) {
            vb_pathf(err, errlen, "out of memory");
            return PROV_ERROR;
        }
        pv->provs = np;
        np[pv->n_provs].claim = idx[i];
        np[pv->n_provs].has_capacity = has_cap;
        np[pv->n_provs].capacity = capacity;
        pv->n_provs++;
    }
    return PROV_OK;
}

/* --- FindPodVolumes ------------------------------------------------------------ */

static int add_static(vb_pod_volumes_t *pv, const vb_t *v, uint32_t claim,
                      const vb_claim_t *c, const ks_object_t *o)
{
    vb_static_t *ns = realloc(pv->statics, (pv->n_statics + 1) * sizeof *ns);
    vb_static_t *b;
    int64_t qty = 0;
    if (ns == NULL)
        return -1;
    pv->statics = ns;
    b = &ns[pv->n_statics];
    memset(b, 0, sizeof *b);
    (void)vb_quantity(v, o, "spec.capacity.storage", &qty);
    b->claim = claim;
    b->pv = strdup(v->api->object_name(o));
    b->pv_rv = strdup(vb_str(v, o, "metadata.resourceVersion"));
    b->pv_class = strdup(vb_volume_class(v, o));
    b->capacity = qty;
    b->request = c->request;
    pv->n_statics++;
    if (!b->pv || !b->pv_rv || !b->pv_class)
        return -1;
    return 0;
}

ks_code_t vb_find_pod_volumes(vb_t *v, const vb_state_t *s,
                              const ks_pod_t *pod, const ks_node_t *node,
                              vb_pod_volumes_t **out, ks_status_t *st)
{
    int unbound_ok = 1, bound_ok = 1, enough = 1, pvs_found = 1;
    vb_pod_volumes_t *res = calloc(1, sizeof *res);
    uint32_t *to_match = NULL, *to_prov = NULL, n_match = 0, n_prov = 0, i;
    const char **chosen = NULL;
    const ks_object_t **pvcs = NULL; /* the delay claims' objects */
    uint32_t n_chosen = 0;
    char err[1024];
    (void)pod;
    *out = NULL;
    if (res == NULL)
        goto oom;
    res->node = node->name;

    /* checkBoundClaims */
    for (i = 0; i < s->n_bound; i++) {
        const ks_object_t *o =
            v->api->object_get(v->pvs, NULL, s->bound[i].volume_name);
        if (o == NULL) {
            pvs_found = 0;
            break;
        }
        if (!vb_node_affinity_matches(v, o, &node->labels)) {
            bound_ok = 0;
            break;
        }
    }
    if (!bound_ok || !pvs_found)
        goto done;

    if (s->n_delay > 0) {
        to_match = calloc(s->n_delay, sizeof *to_match);
        to_prov = calloc(s->n_delay, sizeof *to_prov);
        chosen = calloc(s->n_delay, sizeof *chosen);
        pvcs = calloc(s->n_delay, sizeof *pvcs);
        if (!to_match || !to_prov || !chosen || !pvcs)
            goto oom;
        for (i = 0; i < s->n_delay; i++) {
            const vb_claim_t *c = &s->delay[i];
            const ks_object_t *pvc =
                v->api->object_get(v->pvcs, c->ns, c->name);
            char buf[512];
            const char *sel =
                pvc ? vb_pvc_selected_node(v, pvc, buf, sizeof buf) : NULL;
            pvcs[i] = pvc;
            if (sel != NULL) {
                if (strcmp(sel, node->name) != 0) {
                    unbound_ok = 0; /* fast path: another node's claim */
                    goto done;
                }
                to_prov[n_prov++] = i;
            } else {
                to_match[n_match++] = i;
            }
        }
        /* byPVCSize: smallest request first (stable) */
        for (i = 1; i < n_match; i++) {
            uint32_t x = to_match[i], j = i;
            while (j > 0 &&
                   s->delay[to_match[j - 1]].request > s->delay[x].request) {
                to_match[j] = to_match[j - 1];
                j--;
            }
            to_match[j] = x;
        }
        for (i = 0; i < n_match; i++) {
            const vb_claim_t *c = &s->delay[to_match[i]];
            const ks_object_t *pvc = pvcs[to_match[i]];
            const ks_object_t *found = NULL;
            if (pvc == NULL) {
                char key[600], q[700];
                vb_pathf(key, sizeof key, "%s/%s", c->ns, c->name);
                v->api->status_reasonf(
                    st, "error getting PVC %s: could not find "
                        "v1.PersistentVolumeClaim %s",
                    vb_quote(q, sizeof q, key), q);
                goto error;
            }
            if (find_matching_volume(v, c, pvc, node, chosen, n_chosen,
                                     &found, err, sizeof err) != 0) {
                v->api->status_reason(st, err);
                goto error;
            }
            if (found == NULL) {
                to_prov[n_prov++] = to_match[i];
                unbound_ok = 0;
                continue;
            }
            if (add_static(res, v, to_match[i], c, found) != 0)
                goto oom;
            chosen[n_chosen++] = res->statics[res->n_statics - 1].pv;
        }
        if (n_prov > 0) {
            switch (check_provisions(v, s, to_prov, n_prov, node, res, err,
                                     sizeof err)) {
            case PROV_OK:
                unbound_ok = 1;
                enough = 1;
                break;
            case PROV_UNSATISFIED:
                unbound_ok = 0;
                enough = 1;
                res->n_provs = 0;
                break;
            case PROV_NO_SPACE:
                unbound_ok = 1;
                enough = 0;
                res->n_provs = 0;
                break;
            case PROV_ERROR:
                v->api->status_reason(st, err);
                goto error;
            }
        }
    }

done:
    free(to_match);
    free(to_prov);
    free(chosen);
    free(pvcs);
    if (!bound_ok || !unbound_ok || !enough || !pvs_found) {
        if (!bound_ok)
            v->api->status_reason(st, ERR_NODE_CONFLICT);
        if (!unbound_ok)
            v->api->status_reason(st, ERR_BIND_CONFLICT);
        if (!enough)
            v->api->status_reason(st, ERR_NOT_ENOUGH_SPACE);
        if (!pvs_found)
            v->api->status_reason(st, ERR_PV_NOT_EXIST);
        vb_pod_volumes_free(res);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    *out = res;
    return KS_SUCCESS;
oom:
    v->api->status_reason(st, "out of memory");
error:
    free(to_match);
    free(to_prov);
    free(chosen);
    free(pvcs);
    vb_pod_volumes_free(res);
    return KS_ERROR;
}
