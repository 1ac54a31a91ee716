/*
 * VolumeRestrictions' PreFilter, its AddPod/RemovePod and Filter: the
 * ReadWriteOncePod rule, and the disk conflicts of vr_disks.c.
 *
 * PreFilter reads the pod's claims from the PersistentVolumeClaim store
 * (a missing claim rejects the pod, UnschedulableAndUnresolvable, with
 * the API's not-found text), keeps those whose spec.accessModes hold
 * ReadWriteOncePod, and counts how many of them a pod of the snapshot
 * already uses (upstream IsPVCUsedByPods: one per claim, whatever the
 * number of users). With nothing to check (no RWOP claim in use, no
 * in-tree disk) it answers Skip. Filter then rejects every node while the
 * count is above 0 (Unschedulable: preemption may free the claim), and
 * AddPod/RemovePod add or take away the references of a pod added to or
 * removed from a node.
 */
#include "vr.h"

#include <stdlib.h>
#include <string.h>

#define RWOP "ReadWriteOncePod"

/* The state as one block: the struct, then the claim pointers. */
static vr_state_t *state_new(uint32_t n_claims)
{
    vr_state_t *s = malloc(sizeof *s + (size_t)n_claims * sizeof(char *));
    if (s == NULL)
        return NULL;
    s->conflicts = 0;
    s->n_claims = n_claims;
    s->claims = (const char **)(void *)(s + 1);
    return s;
}

/* clone_fn of the state (preemption copies the cycle state). */
static void *state_clone(const void *data)
{
    const vr_state_t *s = data;
    vr_state_t *c = state_new(s->n_claims);
    if (c == NULL)
        return NULL;
    c->conflicts = s->conflicts;
    if (s->n_claims)
        memcpy(c->claims, s->claims, s->n_claims * sizeof(char *));
    return c;
}

static int has_claim(const vr_state_t *s, const char *name)
{
    uint32_t i;
    for (i = 0; i < s->n_claims; i++)
        if (ks_str_eq(s->claims[i], name))
            return 1;
    return 0;
}

/* Does the claim's spec.accessModes hold ReadWriteOncePod? */
static int is_rwop(const vr_plugin_t *pl, const ks_object_t *pvc)
{
    uint32_t n = 0, i;
    char path[48];
    if (pl->api->object_len(pvc, "spec.accessModes", &n) != KS_FIELD_OK)
        return 0;
    for (i = 0; i < n; i++) {
        const char *mode = NULL;
        snprintf(path, sizeof path, "spec.accessModes[%u]", i);
        if (pl->api->object_string(pvc, path, &mode) == KS_FIELD_OK &&
            strcmp(mode, RWOP) == 0)
            return 1;
    }
    return 0;
}

/* The pod's RWOP claims into s->claims (s has room for every volume);
 * KS_SUCCESS, or a failure with upstream's reason in st. */
static ks_code_t rwop_claims(const vr_plugin_t *pl, const ks_pod_t *pod,
                             vr_state_t *s, ks_status_t *st)
{
    uint32_t i;
    s->n_claims = 0;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *v = &pod->volumes[i];
        const ks_object_t *pvc;
        if (v->source != KS_VOLUME_PVC)
            continue;
        pvc = pl->api->object_get(pl->pvcs, pod->ns, v->claim_name);
        if (pvc == NULL) {
            pl->api->status_reasonf(st,
                                    "persistentvolumeclaim \"%s\" not found",
                                    v->claim_name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (is_rwop(pl, pvc) && !has_claim(s, v->claim_name))
            s->claims[s->n_claims++] = v->claim_name;
    }
    return KS_SUCCESS;
}

/* Does a pod of the snapshot in namespace `ns` use claim `name`? */
static int claim_in_use(const ks_node_info_t *const *nodes, uint32_t n,
                        const char *ns, const char *name)
{
    uint32_t i, j, k;
    for (i = 0; i < n; i++)
        for (j = 0; j < nodes[i]->n_pods; j++) {
            const ks_pod_t *e = nodes[i]->pods[j];
            if (!ks_str_eq(e->ns, ns))
                continue;
            for (k = 0; k < e->n_volumes; k++)
                if (e->volumes[k].source == KS_VOLUME_PVC &&
                    ks_str_eq(e->volumes[k].claim_name, name))
                    return 1;
        }
    return 0;
}

/* How many of the state's claims a pod of the snapshot in namespace `ns`
 * uses (each claim once, however many pods use it). */
static int64_t claims_in_use(const vr_plugin_t *pl, const vr_state_t *s,
                             const char *ns)
{
    const ks_node_info_t *const *nodes;
    uint32_t n = 0, c;
    int64_t used = 0;
    nodes = pl->api->snapshot_nodes(pl->h, &n);
    if (nodes == NULL)
        return 0;
    for (c = 0; c < s->n_claims; c++)
        used += claim_in_use(nodes, n, ns, s->claims[c]);
    return used;
}

ks_code_t vr_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        ks_prefilter_result_t *result, ks_status_t *st)
{
    const vr_plugin_t *pl = self;
    vr_state_t *s;
    ks_code_t c;
    int needs_disk_check = vr_pod_needs_disk_check(pl->api, pod);
    (void)result;
    s = state_new(pod->n_volumes);
    if (s == NULL) {
        pl->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    c = rwop_claims(pl, pod, s, st);
    if (c != KS_SUCCESS) {
        free(s);
        return c;
    }
    if (s->n_claims > 0)
        s->conflicts = claims_in_use(pl, s, pod->ns);
    if (!needs_disk_check && s->conflicts == 0) {
        free(s);
        return KS_SKIP;
    }
    if (pl->api->plugin_state_set(pl->h, cs, KS_STATE_FILTER, s, state_clone,
                                  free) != 0) {
        free(s);
        pl->api->status_reason(st, "writing \"" VR_STATE_KEY
                                   "\" to cycle state failed");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* AddPod/RemovePod: `delta` times the references of `changed` to the
 * pending pod's RWOP claims. Like upstream, the changed pod's claims are
 * compared by name only (not by namespace). */
static ks_code_t update_with_pod(void *self, ks_cycle_state_t *cs,
                                 const ks_pod_t *changed, int64_t delta,
                                 ks_status_t *st)
{
    const vr_plugin_t *pl = self;
    vr_state_t *s = pl->api->plugin_state_get(pl->h, cs, KS_STATE_FILTER);
    uint32_t i;
    if (s == NULL) {
        pl->api->status_reason(st, "cannot read \"" VR_STATE_KEY
                                   "\" from cycleState");
        return KS_ERROR;
    }
    for (i = 0; i < changed->n_volumes; i++)
        if (changed->volumes[i].source == KS_VOLUME_PVC &&
            has_claim(s, changed->volumes[i].claim_name))
            s->conflicts += delta;
    return KS_SUCCESS;
}

ks_code_t vr_add_pod(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_pod_t *to_add, const ks_node_info_t *ni,
                     ks_status_t *st)
{
    (void)pod;
    (void)ni;
    return update_with_pod(self, cs, to_add, 1, st);
}

ks_code_t vr_remove_pod(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_pod_t *to_remove, const ks_node_info_t *ni,
                        ks_status_t *st)
{
    (void)pod;
    (void)ni;
    return update_with_pod(self, cs, to_remove, -1, st);
}

static inline ks_code_t vr_filter_one(void *self, ks_cycle_state_t *cs,
                                      void *state, const ks_pod_t *pod,
                                      const ks_node_info_t *ni,
                                      ks_status_t *st)
{
    const vr_plugin_t *pl = self;
    const vr_state_t *s = state;
    uint32_t i;
    (void)cs;
    for (i = 0; i < ni->n_pods; i++)
        if (vr_pods_disk_conflict(pl->api, pod, ni->pods[i])) {
            pl->api->status_reason(st, VR_REASON_DISK_CONFLICT);
            return KS_UNSCHEDULABLE;
        }
    if (s == NULL) {
        pl->api->status_reason(st, "cannot read \"" VR_STATE_KEY
                                   "\" from cycleState");
        return KS_ERROR;
    }
    if (s->conflicts > 0) {
        pl->api->status_reason(st, VR_REASON_RWOP_CONFLICT);
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

ks_code_t vr_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st)
{
    return vr_filter_one(self, cs, state, pod, ni, st);
}

ks_code_t vr_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, ks_status_t *st)
{
    const vr_plugin_t *pl = self;
    return vr_filter_one(self, cs,
                         pl->api->plugin_state_get(pl->h, cs, KS_STATE_FILTER),
                         pod, ni, st);
}

KS_FILTER_NODES_FROM(vr_filter_nodes_, vr_filter_one)

ks_code_t vr_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          uint8_t *pass, ks_status_t *scratch)
{
    return vr_filter_nodes_(self, cs, state, pod, nodes, n, pass, scratch);
}
