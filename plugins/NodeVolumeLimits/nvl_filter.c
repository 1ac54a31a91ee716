/*
 * NodeVolumeLimits' PreFilter and Filter (upstream v1.36 CSILimits).
 *
 * PreFilter skips a pod without claims, ephemeral volumes or inline
 * in-tree volumes that csi-translation-lib translates. Otherwise it
 * works out, once per cycle, what Filter needs beyond the node: the pod's
 * own CSI volumes (or the failure every node will report: a missing claim
 * is UnschedulableAndUnresolvable, "looking up PVC ns/name: ..."), and
 * the VolumeAttachments indexed by node. Filter then reads the node's
 * CSINode limits, counts the unique volumes of the node's pods and of the
 * attachments to it, and rejects the node (Unschedulable, "node(s) exceed
 * max volume count") when a driver's count plus the pod's new volumes of
 * that driver pass its limit. A volume a pod of the node already uses is
 * not new; an attachment's volume is counted unless a pod of the node
 * uses it.
 *
 * The state is immutable once PreFilter set it (upstream has no
 * AddPod/RemovePod here): a cloned cycle state shares it.
 */
#include "nvl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvl_state {
    ks_code_t code;     /* KS_SUCCESS, or what Filter answers every node */
    const char *reason; /* the failure's message (host-owned, interned) */
    /* What Filter answers a node without a CSINode when `code` is a
     * failure: an inline in-tree volume is not translated there, so its
     * failure to translate is not one (code0 KS_SUCCESS, or the next
     * failure). */
    ks_code_t code0;
    const char *reason0;
    nvl_set_t mine;     /* the pod's volumes (in-tree ones as migrated) */
    nvl_set_t vas;      /* the VolumeAttachments' volumes */
    nvl_attachment_t *att; /* sorted by node */
    uint32_t n_att;
} nvl_state_t;

static void state_free(void *data)
{
    nvl_state_t *s = data;
    if (s == NULL)
        return;
    nvl_set_free(&s->mine);
    nvl_set_free(&s->vas);
    free(s->att);
    free(s);
}

/* Does the pod have a volume this plugin counts (a claim, an ephemeral
 * volume, or an inline in-tree volume that translates to CSI: upstream
 * IsInlineMigratable)? */
static int has_counted_volume(const nvl_plugin_t *pl, const ks_pod_t *pod)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(pl->api, pod);
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC ||
            pod->volumes[i].source == KS_VOLUME_EPHEMERAL ||
            (inl != NULL && nvl_inline_plugin(inl[i].kind) != NULL))
            return 1;
    return 0;
}

/* The pod's code and message on a node without a CSINode into s->code0
 * and s->reason0 (its volumes there are not kept: such a node has no
 * limit). */
static void state_code0(const nvl_plugin_t *pl, const ks_pod_t *pod,
                        nvl_state_t *s)
{
    nvl_set_t scratch = NVL_SET_INIT;
    ks_status_t *why = pl->api->status_new(pl->h);
    s->code0 = s->code;
    s->reason0 = s->reason;
    if (why == NULL)
        return; /* out of memory: the CSINode answer for every node */
    s->code0 = nvl_pod_volumes(pl, pod, 0, 1, &scratch, why);
    s->reason0 =
        s->code0 == KS_SUCCESS ? NULL : pl->api->status_message(why);
    pl->api->status_free(why);
    nvl_set_free(&scratch);
}

/* The state for `pod`; NULL when out of memory (said in st). */
static nvl_state_t *state_build(const nvl_plugin_t *pl, const ks_pod_t *pod,
                                ks_status_t *st)
{
    nvl_state_t *s = calloc(1, sizeof *s);
    ks_status_t *why;
    if (s == NULL || (why = pl->api->status_new(pl->h)) == NULL) {
        free(s);
        pl->api->status_reason(st, "out of memory");
        return NULL;
    }
    s->code = nvl_pod_volumes(pl, pod, 1, 1, &s->mine, why);
    if (s->code != KS_SUCCESS) {
        s->reason = pl->api->status_message(why);
        pl->api->status_free(why);
        state_code0(pl, pod, s);
        return s;
    }
    pl->api->status_free(why);
    if (s->mine.n > 0 &&
        nvl_attachments(pl, &s->vas, &s->att, &s->n_att) != 0) {
        state_free(s);
        pl->api->status_reason(st, "out of memory");
        return NULL;
    }
    return s;
}

ks_code_t nvl_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st)
{
    const nvl_plugin_t *pl = self;
    nvl_state_t *s;
    (void)result;
    if (!has_counted_volume(pl, pod))
        return KS_SKIP;
    s = state_build(pl, pod, st);
    if (s == NULL)
        return KS_ERROR;
    if (pl->api->plugin_state_set(pl->h, cs, KS_STATE_FILTER, s, NULL,
                                  state_free) != 0) {
        state_free(s);
        pl->api->status_reason(st, "writing the " NVL_NAME
                                   " state to cycle state failed");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* getVolumeLimits: does the CSINode give any driver a count? And the
 * limit of `driver` (the last entry of that name with a count). */
static int limit_of(const nvl_plugin_t *pl, const ks_object_t *csinode,
                    const char *driver, int64_t *limit)
{
    uint32_t n = 0, i;
    int found = 0;
    char path[80];
    if (pl->api->object_len(csinode, "spec.drivers", &n) != KS_FIELD_OK)
        return 0;
    for (i = 0; i < n; i++) {
        const char *name = NULL;
        int64_t count;
        snprintf(path, sizeof path, "spec.drivers[%u].allocatable.count", i);
        if (pl->api->object_int(csinode, path, &count) != KS_FIELD_OK)
            continue;
        if (driver == NULL) {
            found = 1;
            break;
        }
        snprintf(path, sizeof path, "spec.drivers[%u].name", i);
        if (pl->api->object_string(csinode, path, &name) == KS_FIELD_OK &&
            strcmp(name, driver) == 0) {
            *limit = count;
            found = 1;
        }
    }
    return found;
}

/* Volumes per driver on one node. */
typedef struct tally {
    const char *driver;
    int64_t used, add;
} tally_t;

typedef struct tallies {
    tally_t *t;
    uint32_t n, cap;
} tallies_t;

static tally_t *tally_of(tallies_t *ts, const char *driver)
{
    uint32_t i;
    for (i = 0; i < ts->n; i++)
        if (strcmp(ts->t[i].driver, driver) == 0)
            return &ts->t[i];
    if (ts->n == ts->cap) {
        uint32_t nc = ts->cap ? ts->cap * 2 : 8;
        tally_t *nt = realloc(ts->t, nc * sizeof *nt);
        if (nt == NULL)
            return NULL;
        ts->t = nt;
        ts->cap = nc;
    }
    ts->t[ts->n].driver = driver;
    ts->t[ts->n].used = 0;
    ts->t[ts->n].add = 0;
    return &ts->t[ts->n++];
}

/* The first attachment to `node` (by address) in the sorted list. */
static uint32_t first_attachment(const nvl_state_t *s, const char *node)
{
    uint32_t lo = 0, hi = s->n_att;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->att[mid].node < (uintptr_t)node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Count the node's volumes into ts and check the limits. */
static ks_code_t check_node(const nvl_plugin_t *pl, const nvl_state_t *s,
                            const ks_node_info_t *ni,
                            const ks_object_t *csinode, nvl_set_t *attached,
                            tallies_t *ts, ks_status_t *st)
{
    uint32_t i;
    ks_code_t c;
    for (i = 0; i < ni->n_pods; i++) {
        c = nvl_pod_volumes(pl, ni->pods[i], 1, 0, attached, st);
        if (c != KS_SUCCESS)
            return KS_ERROR; /* upstream AsStatus */
    }
    for (i = 0; i < attached->n; i++) {
        tally_t *t = tally_of(ts, nvl_set_driver(attached, i));
        if (t == NULL)
            goto oom;
        t->used++;
    }
    for (i = first_attachment(s, ni->node->name);
         i < s->n_att && s->att[i].node == ni->node->name; i++) {
        const char *name = nvl_set_name(&s->vas, s->att[i].vol);
        tally_t *t;
        if (nvl_set_has(attached, name))
            continue; /* a pod of the node uses it: counted once */
        t = tally_of(ts, nvl_set_driver(&s->vas, s->att[i].vol));
        if (t == NULL)
            goto oom;
        t->used++;
    }
    for (i = 0; i < s->mine.n; i++) {
        tally_t *t;
        if (nvl_set_has(attached, nvl_set_name(&s->mine, i)))
            continue; /* shared with a pod of the node: not new */
        t = tally_of(ts, nvl_set_driver(&s->mine, i));
        if (t == NULL)
            goto oom;
        t->add++;
    }
    for (i = 0; i < ts->n; i++) {
        int64_t limit = 0; /* set by limit_of when it answers */
        if (ts->t[i].add == 0 ||
            !limit_of(pl, csinode, ts->t[i].driver, &limit))
            continue;
        if (ts->t[i].used + ts->t[i].add > limit) {
            pl->api->status_reason(st, NVL_REASON_MAX_VOLUMES);
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
oom:
    pl->api->status_reason(st, "out of memory");
    return KS_ERROR;
}

static inline ks_code_t nvl_filter_one(void *self, ks_cycle_state_t *cs,
                                       void *state, const ks_pod_t *pod,
                                       const ks_node_info_t *ni,
                                       ks_status_t *st)
{
    const nvl_plugin_t *pl = self;
    const nvl_state_t *s = state;
    nvl_state_t *own = NULL;
    const ks_object_t *csinode;
    nvl_set_t attached = NVL_SET_INIT;
    tallies_t ts = {NULL, 0, 0};
    ks_code_t c;
    (void)cs;
    if (pod->n_volumes == 0)
        return KS_SUCCESS;
    if (ni->node == NULL) {
        pl->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    if (s == NULL) {
        /* no PreFilter state: work it out here, as upstream does */
        if (!has_counted_volume(pl, pod))
            return KS_SUCCESS;
        own = state_build(pl, pod, st);
        if (own == NULL)
            return KS_ERROR;
        s = own;
    }
    if (s->code != KS_SUCCESS &&
        pl->api->object_get(pl->csinodes, NULL, ni->node->name) == NULL) {
        c = s->code0;
        if (c != KS_SUCCESS)
            pl->api->status_reason(st, s->reason0);
    } else if (s->code != KS_SUCCESS) {
        pl->api->status_reason(st, s->reason);
        c = s->code;
    } else if (s->mine.n == 0 ||
               (csinode = pl->api->object_get(pl->csinodes, NULL,
                                              ni->node->name)) == NULL ||
               !limit_of(pl, csinode, NULL, NULL)) {
        c = KS_SUCCESS; /* nothing new, or no limit on the node */
    } else {
        c = check_node(pl, s, ni, csinode, &attached, &ts, st);
    }
    nvl_set_free(&attached);
    free(ts.t);
    state_free(own);
    return c;
}

ks_code_t nvl_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                ks_status_t *st)
{
    return nvl_filter_one(self, cs, state, pod, ni, st);
}

ks_code_t nvl_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st)
{
    const nvl_plugin_t *pl = self;
    return nvl_filter_one(self, cs,
                          pl->api->plugin_state_get(pl->h, cs,
                                                    KS_STATE_FILTER),
                          pod, ni, st);
}

KS_FILTER_NODES_FROM(nvl_filter_nodes_, nvl_filter_one)

ks_code_t nvl_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch)
{
    return nvl_filter_nodes_(self, cs, state, pod, nodes, n, pass, scratch);
}
