/*
 * What a pod attaches to a node, as CSI volumes (upstream
 * filterAttachableVolumes, getCSIDriverInfo, getCSIDriverInfoFromSC), and
 * the VolumeAttachments that count (getNodeVolumeAttachmentInfo).
 *
 * Claims and generic ephemeral volumes come from ks_volume_t, inline
 * in-tree volumes (awsElasticBlockStore in spec.volumes, ...) from the
 * pod view's volume_inline (ABI 1.4; none on an older host): counted
 * when their plugin is migrated, as in-tree PersistentVolumes are,
 * through nvl_translate.c.
 *
 * Reads the stores (thread-safe); allocates only into the caller's sets.
 */
#include "nvl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANN_BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"

/* Room for a volume handle (Azure disk URIs are the longest, ~200). */
enum { HANDLE_MAX = 1024 };

/* storagehelpers.GetPersistentVolumeClaimClass: the beta annotation when
 * present (even empty), else spec.storageClassName, else "". */
static const char *claim_class(const nvl_plugin_t *pl, const ks_object_t *pvc)
{
    const char *s = NULL;
    if (pl->api->object_string(pvc,
                               "metadata.annotations[\"" ANN_BETA_STORAGE_CLASS
                               "\"]",
                               &s) == KS_FIELD_OK)
        return s;
    if (pl->api->object_string(pvc, "spec.storageClassName", &s) ==
        KS_FIELD_OK)
        return s;
    return "";
}

static const char *str_or_empty(const nvl_plugin_t *pl, const ks_object_t *o,
                                const char *path)
{
    const char *s = NULL;
    return pl->api->object_string(o, path, &s) == KS_FIELD_OK ? s : "";
}

/* getCSIDriverInfoFromSC: the class's provisioner (its CSI driver when it
 * is a migrated in-tree plugin) and a made-up handle unique to the
 * claim. 1 with *driver and handle set, 0 when not counted. */
static int driver_from_class(const nvl_plugin_t *pl, int has_csinode,
                             const ks_object_t *pvc, const char **driver,
                             char *handle, size_t len)
{
    const char *sc_name = claim_class(pl, pvc), *prov;
    const ks_object_t *sc;
    if (sc_name[0] == '\0')
        return 0; /* immediate binding: bound before scheduling */
    sc = pl->api->object_get(pl->classes, NULL, sc_name);
    if (sc == NULL)
        return 0;
    snprintf(handle, len, "%s-%s/%s", pl->prefix,
             pl->api->object_namespace(pvc), pl->api->object_name(pvc));
    prov = str_or_empty(pl, sc, "provisioner");
    if (nvl_csi_driver_of(prov) != NULL) {
        if (!nvl_migration_on(has_csinode, prov))
            return 0;
        *driver = nvl_csi_driver_of(prov);
        return 1;
    }
    *driver = prov;
    return 1;
}

/* getCSIDriverInfo: the claim's CSI driver and volume handle. 1 when
 * both are known (handle written), 0 when the volume is not counted. */
static int driver_info(const nvl_plugin_t *pl, int has_csinode,
                       const ks_object_t *pvc, const char **driver,
                       char *handle, size_t len)
{
    const char *pv_name = str_or_empty(pl, pvc, "spec.volumeName");
    const char *plugin;
    const ks_object_t *pv;
    if (pv_name[0] == '\0')
        return driver_from_class(pl, has_csinode, pvc, driver, handle, len);
    pv = pl->api->object_get(pl->pvs, NULL, pv_name);
    if (pv == NULL) /* deleted, or prebound to one not made yet */
        return driver_from_class(pl, has_csinode, pvc, driver, handle, len);
    if (pl->api->object_type(pv, "spec.csi") != KS_FIELD_ABSENT) {
        *driver = str_or_empty(pl, pv, "spec.csi.driver");
        snprintf(handle, len, "%s",
                 str_or_empty(pl, pv, "spec.csi.volumeHandle"));
        return 1;
    }
    plugin = nvl_pv_in_tree_plugin(pl->api, pv);
    if (plugin == NULL || !nvl_migration_on(has_csinode, plugin) ||
        nvl_pv_csi_handle(pl->api, pv, plugin, handle, len) != 0)
        return 0;
    *driver = nvl_csi_driver_of(plugin);
    return 1;
}

/* ephemeral.VolumeIsForPod (see nvl.h). */
int nvl_claim_is_for_pod(const nvl_plugin_t *pl, const ks_object_t *pvc,
                         const ks_pod_t *pod)
{
    uint32_t n = 0, i;
    char path[96];
    if (pl->api->object_len(pvc, "metadata.ownerReferences", &n) !=
        KS_FIELD_OK)
        return 0;
    for (i = 0; i < n; i++) {
        int controller = 0;
        const char *uid = NULL;
        snprintf(path, sizeof path, "metadata.ownerReferences[%u].controller",
                 i);
        if (pl->api->object_bool(pvc, path, &controller) != KS_FIELD_OK ||
            !controller)
            continue;
        snprintf(path, sizeof path, "metadata.ownerReferences[%u].uid", i);
        return pl->api->object_string(pvc, path, &uid) == KS_FIELD_OK &&
               strcmp(uid, pod->uid) == 0;
    }
    return 0;
}

/* checkAttachableInlineVolume: volume `v` with inline source `vi`, when
 * its plugin is migrated on the node, as its CSI driver and translated
 * handle into `out`. */
static ks_code_t inline_volume(const nvl_plugin_t *pl, const ks_volume_t *v,
                               const ks_volume_inline_t *vi, int has_csinode,
                               nvl_set_t *out, ks_status_t *st)
{
    const char *plugin = nvl_inline_plugin(vi->kind);
    char handle[HANDLE_MAX];
    if (plugin == NULL || !nvl_migration_on(has_csinode, plugin))
        return KS_SUCCESS;
    if (nvl_inline_csi_handle(vi, handle, sizeof handle) != 0) {
        /* only EBS fails: KubernetesVolumeIDToEBSVolumeID */
        pl->api->status_reasonf(
            st, "converting volume(%s) from inline to csi: failed to "
                "translate Kubernetes ID to EBS Volume ID Invalid format "
                "for AWS volume (%s)",
            v->name, vi->id);
        return KS_ERROR;
    }
    if (nvl_set_put(out, nvl_csi_driver_of(plugin), handle) < 0) {
        pl->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

ks_code_t nvl_pod_volumes(const nvl_plugin_t *pl, const ks_pod_t *pod,
                          int has_csinode, int new_pod, nvl_set_t *out,
                          ks_status_t *st)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(pl->api, pod);
    char handle[HANDLE_MAX];
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *v = &pod->volumes[i];
        const ks_object_t *pvc;
        const char *driver = "";
        if (v->source != KS_VOLUME_PVC && v->source != KS_VOLUME_EPHEMERAL) {
            ks_code_t c;
            if (inl != NULL &&
                (c = inline_volume(pl, v, &inl[i], has_csinode, out, st)) !=
                    KS_SUCCESS)
                return c;
            continue;
        }
        if (v->claim_name[0] == '\0') {
            pl->api->status_reason(st, "PersistentVolumeClaim had no name");
            return KS_ERROR;
        }
        pvc = pl->api->object_get(pl->pvcs, pod->ns, v->claim_name);
        if (pvc == NULL) {
            if (!new_pod)
                continue; /* not known to belong to the node's pod */
            pl->api->status_reasonf(
                st, "looking up PVC %s/%s: persistentvolumeclaim \"%s\" "
                    "not found",
                pod->ns, v->claim_name, v->claim_name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (v->source == KS_VOLUME_EPHEMERAL &&
            !nvl_claim_is_for_pod(pl, pvc, pod)) {
            pl->api->status_reasonf(st,
                                    "PVC %s/%s was not created for pod %s/%s "
                                    "(pod is not owner)",
                                    pod->ns, v->claim_name, pod->ns,
                                    pod->name);
            return KS_ERROR;
        }
        if (!driver_info(pl, has_csinode, pvc, &driver, handle,
                         sizeof handle) ||
            driver[0] == '\0' || handle[0] == '\0')
            continue; /* no CSI driver or handle: not counted */
        if (nvl_set_put(out, driver, handle) < 0) {
            pl->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
    }
    return KS_SUCCESS;
}

/* object_list's callback of nvl_attachments. */
typedef struct va_walk {
    const nvl_plugin_t *pl;
    nvl_set_t *vols;
    nvl_attachment_t *list;
    uint32_t n, cap;
    int oom;
} va_walk_t;

static int add_attachment(const ks_object_t *va, void *ud)
{
    va_walk_t *w = ud;
    const nvl_plugin_t *pl = w->pl;
    const char *node = str_or_empty(pl, va, "spec.nodeName");
    const char *attacher = str_or_empty(pl, va, "spec.attacher");
    const char *pv_name = NULL;
    const ks_object_t *pv;
    int vol;
    if (attacher[0] == '\0' ||
        pl->api->object_string(va, "spec.source.persistentVolumeName",
                               &pv_name) != KS_FIELD_OK)
        return 0; /* no attacher, or no PV (an inline volume) */
    pv = pl->api->object_get(pl->pvs, NULL, pv_name);
    if (pv == NULL || pl->api->object_type(pv, "spec.csi") == KS_FIELD_ABSENT)
        return 0; /* unknown, or not a CSI volume */
    vol = nvl_set_put(w->vols, attacher,
                      str_or_empty(pl, pv, "spec.csi.volumeHandle"));
    if (vol < 0)
        goto oom;
    if (w->n == w->cap) {
        uint32_t nc = w->cap ? w->cap * 2 : 64;
        nvl_attachment_t *nl = realloc(w->list, nc * sizeof *nl);
        if (nl == NULL)
            goto oom;
        w->list = nl;
        w->cap = nc;
    }
    w->list[w->n].node = pl->api->intern(pl->h, node);
    w->list[w->n].vol = (uint32_t)vol;
    w->n++;
    return 0;
oom:
    w->oom = 1;
    return 1;
}

static int by_node_then_volume(const void *a, const void *b)
{
    const nvl_attachment_t *x = a, *y = b;
    if (x->node != y->node)
        return (uintptr_t)x->node < (uintptr_t)y->node ? -1 : 1;
    return x->vol < y->vol ? -1 : x->vol > y->vol;
}

int nvl_attachments(const nvl_plugin_t *pl, nvl_set_t *vols,
                    nvl_attachment_t **out, uint32_t *n)
{
    va_walk_t w = {pl, vols, NULL, 0, 0, 0};
    uint32_t i, k = 0;
    pl->api->object_list(pl->attachments, NULL, NULL, add_attachment, &w);
    if (w.oom) {
        free(w.list);
        return -1;
    }
    if (w.n > 1)
        qsort(w.list, w.n, sizeof *w.list, by_node_then_volume);
    for (i = 0; i < w.n; i++) /* each (node, volume) once, as a map */
        if (k == 0 || w.list[i].node != w.list[k - 1].node ||
            w.list[i].vol != w.list[k - 1].vol)
            w.list[k++] = w.list[i];
    *out = w.list;
    *n = k;
    return 0;
}
