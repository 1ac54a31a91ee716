/*
 * VolumeRestrictions: the descriptor, create/destroy, the events and
 * QueueingHints (upstream v1.36 with QueueingHints on) and the batching
 * signature. The rules are in vr_rwop.c and vr_disks.c.
 *
 * Ownership: the instance (vr_plugin_t) is the plugin's, freed by
 * destroy; it holds the host's PersistentVolumeClaim store, which lives
 * as long as the host.
 */
#define KS_PLUGIN_MIN_ABI_MINOR 3
#include "vr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ks_resource_ref_t vr_resources[] = {
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
};

static int vr_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {NULL};
    vr_plugin_t *pl;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    if (api->abi_minor < 3 || !KS_API_HAS(api, store_get) ||
        !KS_API_HAS(api, object_map_iterate) ||
        !KS_API_HAS(api, snapshot_nodes) ||
        !KS_API_HAS(api, plugin_state_set)) {
        snprintf(err, errlen, "this host has no cluster object stores "
                              "(ABI 1.3); " VR_NAME " needs them");
        return -1;
    }
    pl = calloc(1, sizeof *pl);
    if (pl == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pl->api = api;
    pl->h = h;
    pl->pvcs = api->store_get(h, "", "v1", "persistentvolumeclaims");
    if (pl->pvcs == NULL) {
        snprintf(err, errlen, "the host has no store of "
                              "persistentvolumeclaims, which " VR_NAME
                              " declares");
        free(pl);
        return -1;
    }
    *self = pl;
    return 0;
}

static void vr_destroy(void *self)
{
    free(self);
}

/* Does `pod` use claim `name` (a persistentVolumeClaim volume)? */
static int pod_uses_claim(const ks_pod_t *pod, const char *name)
{
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC &&
            ks_str_eq(pod->volumes[i].claim_name, name))
            return 1;
    return 0;
}

/* An assigned pod was deleted (upstream
 * isSchedulableAfterAssignedPodDeleted; ksched's pod events carry
 * unassigned pods too, which upstream's AssignedPod event does not):
 * Queue when it was in the pod's namespace and mounted a disk the pod
 * conflicts with, or used one of the pod's claims (the claim's access
 * mode is not looked up, as upstream). */
static ks_queueing_hint_t vr_after_pod_deleted(void *self, const ks_pod_t *pod,
                                               const void *old_obj,
                                               const void *new_obj)
{
    const vr_plugin_t *pl = self;
    const ks_pod_t *gone = old_obj;
    uint32_t i;
    (void)new_obj;
    if (gone == NULL)
        return KS_QUEUE;
    if (gone->node_name[0] == '\0' || !ks_str_eq(gone->ns, pod->ns))
        return KS_QUEUE_SKIP;
    if (vr_pods_disk_conflict(pl->api, pod, gone))
        return KS_QUEUE;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC &&
            pod_uses_claim(gone, pod->volumes[i].claim_name))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* An object of a declared resource was added: Queue only for a
 * PersistentVolumeClaim of the pod's namespace that the pod uses (upstream
 * isSchedulableAfterPersistentVolumeClaimAdded). */
static ks_queueing_hint_t vr_after_object_added(void *self,
                                                const ks_pod_t *pod,
                                                const void *old_obj,
                                                const void *new_obj)
{
    const vr_plugin_t *pl = self;
    const ks_object_t *o = new_obj;
    const char *kind = NULL, *av = NULL;
    (void)old_obj;
    if (o == NULL)
        return KS_QUEUE_SKIP;
    if (pl->api->object_string(o, "kind", &kind) != KS_FIELD_OK ||
        pl->api->object_string(o, "apiVersion", &av) != KS_FIELD_OK ||
        strcmp(kind, "PersistentVolumeClaim") != 0 || strcmp(av, "v1") != 0)
        return KS_QUEUE_SKIP; /* another plugin's resource */
    if (strcmp(pl->api->object_namespace(o), pod->ns) != 0)
        return KS_QUEUE_SKIP;
    return pod_uses_claim(pod, pl->api->object_name(o)) ? KS_QUEUE
                                                        : KS_QUEUE_SKIP;
}

/* EnqueueExtensions for hosts without hints: a pod deleted, a node added
 * (and, as upstream without hints, relabelled or retainted), a claim
 * added. */
static uint32_t vr_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_POD, KS_ACT_DELETE},
        {KS_RES_NODE,
         KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT | KS_ACT_UPDATE_NODE_LABEL},
        {KS_RES_OBJECT, KS_ACT_ADD},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 3);
}

/* With QueueingHints: a new node always queues (no hint). */
static uint32_t vr_events_v2(void *self, ks_cluster_event_hint_t *out,
                             uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_DELETE}, vr_after_pod_deleted},
        {{KS_RES_NODE, KS_ACT_ADD}, NULL},
        {{KS_RES_OBJECT, KS_ACT_ADD}, vr_after_object_added},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 3);
}

/* Opportunistic batching: a pod with a claim cannot be signed (the
 * ReadWriteOncePod verdict depends on the pods of every node); any other
 * pod's verdict depends on its namespace and volumes only, the inline
 * in-tree disks included (interned strings: signed by address). */
static ks_code_t vr_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const vr_plugin_t *pl = self;
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC)
            return KS_UNSCHEDULABLE;
    ks_sign_volumes(pl->api, sg, pod);
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(VR_NAME, "1.36.0-ks1",
    .create = vr_create,
    .destroy = vr_destroy,
    .pre_filter = vr_pre_filter,
    .pre_filter_add_pod = vr_add_pod,
    .pre_filter_remove_pod = vr_remove_pod,
    .filter = vr_filter,
    .filter_with_state = vr_filter_with_state,
    .filter_nodes = vr_filter_nodes,
    .events_to_register = vr_events,
    .events_to_register_v2 = vr_events_v2,
    .sign = vr_sign,
    .resources = vr_resources,
    .n_resources = 1);
