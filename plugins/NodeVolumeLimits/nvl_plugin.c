/*
 * NodeVolumeLimits: the descriptor, create/destroy, the events and
 * QueueingHints (upstream v1.36 with QueueingHints on) and the batching
 * signature. PreFilter and Filter are in nvl_filter.c.
 *
 * Ownership: the instance (nvl_plugin_t) is the plugin's, freed by
 * destroy; the stores it holds are the host's and live as long as it.
 */
#define KS_PLUGIN_MIN_ABI_MINOR 3
#include "nvl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const ks_resource_ref_t nvl_resources[] = {
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode"},
    {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment"},
};
enum { N_RESOURCES = sizeof nvl_resources / sizeof nvl_resources[0] };

/* 32 characters from apimachinery's rand.String alphabet. The prefix only
 * has to be unlike any real volume handle; it need not be unpredictable. */
static void make_prefix(nvl_plugin_t *pl)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    struct timespec ts = {0, 0};
    uint64_t x;
    int i;
    (void)timespec_get(&ts, TIME_UTC);
    x = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
        (uint64_t)(uintptr_t)pl;
    for (i = 0; i < 32; i++) {
        x ^= x << 13; /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        pl->prefix[i] = alphabet[x % (sizeof alphabet - 1)];
    }
    pl->prefix[32] = '\0';
}

static int nvl_create(const ks_host_api_t *api, ks_handle_t *h,
                      const ks_args_t *args, void **self, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {NULL};
    nvl_plugin_t *pl;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    if (api->abi_minor < 3 || !KS_API_HAS(api, store_get) ||
        !KS_API_HAS(api, object_map_iterate) ||
        !KS_API_HAS(api, plugin_state_set)) {
        snprintf(err, errlen, "this host has no cluster object stores "
                              "(ABI 1.3); " NVL_NAME " needs them");
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
    pl->pvs = api->store_get(h, "", "v1", "persistentvolumes");
    pl->classes = api->store_get(h, "storage.k8s.io", "v1", "storageclasses");
    pl->csinodes = api->store_get(h, "storage.k8s.io", "v1", "csinodes");
    pl->attachments =
        api->store_get(h, "storage.k8s.io", "v1", "volumeattachments");
    if (pl->pvcs == NULL || pl->pvs == NULL || pl->classes == NULL ||
        pl->csinodes == NULL || pl->attachments == NULL) {
        snprintf(err, errlen, "the host has no store for a resource "
                              NVL_NAME " declares");
        free(pl);
        return -1;
    }
    make_prefix(pl);
    *self = pl;
    return 0;
}

static void nvl_destroy(void *self)
{
    free(self);
}

/* --- QueueingHints ------------------------------------------------------- */

static int is_kind(const nvl_plugin_t *pl, const ks_object_t *o,
                   const char *api_version, const char *kind)
{
    const char *k = NULL, *av = NULL;
    return o != NULL &&
           pl->api->object_string(o, "kind", &k) == KS_FIELD_OK &&
           pl->api->object_string(o, "apiVersion", &av) == KS_FIELD_OK &&
           strcmp(k, kind) == 0 && strcmp(av, api_version) == 0;
}

/* Is volume i of `pod` one this plugin may count: a claim, an ephemeral
 * volume, or an inline in-tree volume that translates to CSI (upstream
 * IsInlineMigratable)? */
static int counted_volume(const ks_pod_t *pod,
                          const ks_volume_inline_t *inl, uint32_t i)
{
    return pod->volumes[i].source == KS_VOLUME_PVC ||
           pod->volumes[i].source == KS_VOLUME_EPHEMERAL ||
           (inl != NULL && nvl_inline_plugin(inl[i].kind) != NULL);
}

/* An assigned (or nominated) pod with a claim, an ephemeral volume or an
 * inline in-tree volume that translates to CSI was deleted (upstream
 * isSchedulableAfterAssignedPodDeleted). */
static ks_queueing_hint_t nvl_after_pod_deleted(void *self,
                                                const ks_pod_t *pod,
                                                const void *old_obj,
                                                const void *new_obj)
{
    const nvl_plugin_t *pl = self;
    const ks_pod_t *gone = old_obj;
    const ks_volume_inline_t *inl;
    uint32_t i;
    (void)pod;
    (void)new_obj;
    if (gone == NULL)
        return KS_QUEUE;
    if (gone->n_volumes == 0)
        return KS_QUEUE_SKIP;
    if (gone->node_name[0] == '\0' && gone->nominated_node_name[0] == '\0')
        return KS_QUEUE_SKIP;
    inl = ks_pod_volume_inline(pl->api, gone);
    for (i = 0; i < gone->n_volumes; i++)
        if (counted_volume(gone, inl, i))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* isSchedulableAfterPVCAdded: a claim of the pod's namespace that one of
 * its volumes names. */
static ks_queueing_hint_t after_pvc_added(const nvl_plugin_t *pl,
                                          const ks_pod_t *pod,
                                          const ks_object_t *pvc)
{
    const char *name = pl->api->object_name(pvc);
    uint32_t i;
    if (strcmp(pl->api->object_namespace(pvc), pod->ns) != 0)
        return KS_QUEUE_SKIP;
    for (i = 0; i < pod->n_volumes; i++)
        if ((pod->volumes[i].source == KS_VOLUME_PVC ||
             pod->volumes[i].source == KS_VOLUME_EPHEMERAL) &&
            strcmp(pod->volumes[i].claim_name, name) == 0)
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* The count of each driver of a CSINode (0 without one), for `name`;
 * -1 when the CSINode has no such driver. */
static int64_t driver_count(const nvl_plugin_t *pl, const ks_object_t *csinode,
                            const char *name)
{
    uint32_t n = 0, i;
    int64_t found = -1;
    char path[80];
    if (pl->api->object_len(csinode, "spec.drivers", &n) != KS_FIELD_OK)
        return -1;
    for (i = 0; i < n; i++) {
        const char *d = NULL;
        int64_t count = 0;
        snprintf(path, sizeof path, "spec.drivers[%u].name", i);
        if (pl->api->object_string(csinode, path, &d) != KS_FIELD_OK)
            d = "";
        if (strcmp(d, name) != 0)
            continue;
        snprintf(path, sizeof path, "spec.drivers[%u].allocatable.count", i);
        if (pl->api->object_int(csinode, path, &count) != KS_FIELD_OK)
            count = 0;
        found = count; /* the last entry of a name wins, as a Go map */
    }
    return found;
}

/* isSchedulableAfterCSINodeUpdated: a driver's count went up (a driver
 * new to the CSINode counts from 0). */
static ks_queueing_hint_t after_csinode_updated(const nvl_plugin_t *pl,
                                                const ks_object_t *old,
                                                const ks_object_t *cur)
{
    uint32_t n = 0, i;
    char path[80];
    if (pl->api->object_len(cur, "spec.drivers", &n) != KS_FIELD_OK)
        return KS_QUEUE_SKIP;
    for (i = 0; i < n; i++) {
        const char *d = NULL;
        int64_t count = 0, before;
        snprintf(path, sizeof path, "spec.drivers[%u].name", i);
        if (pl->api->object_string(cur, path, &d) != KS_FIELD_OK)
            d = "";
        snprintf(path, sizeof path, "spec.drivers[%u].allocatable.count", i);
        if (pl->api->object_int(cur, path, &count) != KS_FIELD_OK)
            count = 0;
        before = driver_count(pl, old, d);
        if (count > (before < 0 ? 0 : before))
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* isSchedulableAfterVolumeAttachmentDeleted: the pod has a claim, or an
 * inline in-tree volume whose CSI driver is the attachment's attacher (or
 * that fails to translate: upstream queues on the error). */
static ks_queueing_hint_t after_attachment_deleted(const nvl_plugin_t *pl,
                                                   const ks_pod_t *pod,
                                                   const ks_object_t *va)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(pl->api, pod);
    const char *attacher = NULL;
    char handle[1024];
    uint32_t i;
    if (pl->api->object_string(va, "spec.attacher", &attacher) !=
        KS_FIELD_OK)
        attacher = "";
    for (i = 0; i < pod->n_volumes; i++) {
        const char *plugin;
        if (pod->volumes[i].source == KS_VOLUME_PVC)
            return KS_QUEUE;
        if (inl == NULL ||
            (plugin = nvl_inline_plugin(inl[i].kind)) == NULL)
            continue;
        if (nvl_inline_csi_handle(&inl[i], handle, sizeof handle) != 0 ||
            strcmp(nvl_csi_driver_of(plugin), attacher) == 0)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* One hint for every declared resource's events, told apart by kind:
 * CSINode added (always) or updated, claim added, attachment deleted. */
static ks_queueing_hint_t nvl_after_object(void *self, const ks_pod_t *pod,
                                           const void *old_obj,
                                           const void *new_obj)
{
    const nvl_plugin_t *pl = self;
    const ks_object_t *old = old_obj, *cur = new_obj;
    const char *csinode_av = "storage.k8s.io/v1";
    if (cur != NULL && is_kind(pl, cur, csinode_av, "CSINode"))
        return old == NULL ? KS_QUEUE : after_csinode_updated(pl, old, cur);
    if (old == NULL && is_kind(pl, cur, "v1", "PersistentVolumeClaim"))
        return after_pvc_added(pl, pod, cur);
    if (cur == NULL && is_kind(pl, old, csinode_av, "VolumeAttachment"))
        return after_attachment_deleted(pl, pod, old);
    return KS_QUEUE_SKIP;
}

/* Without hints: a pod deleted; any change to a declared resource. */
static uint32_t nvl_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_POD, KS_ACT_DELETE},
        {KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE | KS_ACT_DELETE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

static uint32_t nvl_events_v2(void *self, ks_cluster_event_hint_t *out,
                              uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_DELETE}, nvl_after_pod_deleted},
        {{KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE | KS_ACT_DELETE},
         nvl_after_object},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's volumes signer): the namespace and
 * the volumes, inline in-tree sources included (ks_sign_volumes). An
 * ephemeral volume's claim is named after the pod, so no two pods share
 * that signature. */
static ks_code_t nvl_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const nvl_plugin_t *pl = self;
    ks_sign_volumes(pl->api, sg, pod);
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(NVL_NAME, "1.36.0-ks1",
    .create = nvl_create,
    .destroy = nvl_destroy,
    .pre_filter = nvl_pre_filter,
    .filter = nvl_filter,
    .filter_with_state = nvl_filter_with_state,
    .filter_nodes = nvl_filter_nodes,
    .events_to_register = nvl_events,
    .events_to_register_v2 = nvl_events_v2,
    .sign = nvl_sign,
    .resources = nvl_resources,
    .n_resources = N_RESOURCES);
