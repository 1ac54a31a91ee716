/*
 * Upstream v1.24's in-tree volume limits (nodevolumelimits/non_csi.go):
 * EBSLimits, GCEPDLimits and AzureDiskLimits, one plugin per disk type.
 * This file is compiled three times (meson.build), NVL_NON_CSI naming the
 * disk type; each build is its own .so with its own descriptor, so a
 * profile enables them by their upstream names.
 *
 * Filter counts the node's unique disks of the type -- the volume IDs of
 * the PersistentVolumes the node's pods' claims are bound to, and for an
 * unbound claim (or one whose volume is missing) whose StorageClass has
 * the type's in-tree provisioner, a made-up ID -- adds the pod's new ones
 * and rejects the node ("node(s) exceed max volume count", Unschedulable)
 * above its limit: the node's allocatable attachable-volumes-<type>, else
 * KUBE_MAX_PD_VOLS, else the type's default (EBS: 25 on Nitro instance
 * types, 39 otherwise; GCE PD and Azure Disk: 16). A node whose CSINode
 * lists the type's plugin in its storage.alpha.kubernetes.io/
 * migrated-plugins annotation is left to NodeVolumeLimits (v1.24 had the
 * four migrations' feature gates on).
 *
 * As in v1.24, every failure to read the pod's own claims is an Error
 * (Filter's AsStatus), there is no PreFilter, and the events are a node
 * added and a pod deleted. An inline volume of the type written in the
 * pod (awsElasticBlockStore, gcePersistentDisk, azureDisk: the pod view's
 * volume_inline, ABI 1.4; none on an older host) counts by its volumeID,
 * pdName or diskName, as v1.24's FilterVolume.
 *
 * Threads: create/destroy on the loop thread; Filter on workers (reads
 * the stores, allocates only its scratch sets).
 */
#define KS_PLUGIN_MIN_ABI_MINOR 3
#include "nvl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NVL_NON_CSI_EBS 1
#define NVL_NON_CSI_GCE_PD 2
#define NVL_NON_CSI_AZURE_DISK 3

#if NVL_NON_CSI == NVL_NON_CSI_EBS
#define NC_NAME "EBSLimits"
#define NC_PLUGIN "kubernetes.io/aws-ebs"
#define NC_PV_ID "spec.awsElasticBlockStore.volumeID"
#define NC_LIMIT_KEY "attachable-volumes-aws-ebs"
#define NC_INLINE KS_INLINE_AWS_EBS
#elif NVL_NON_CSI == NVL_NON_CSI_GCE_PD
#define NC_NAME "GCEPDLimits"
#define NC_PLUGIN "kubernetes.io/gce-pd"
#define NC_PV_ID "spec.gcePersistentDisk.pdName"
#define NC_LIMIT_KEY "attachable-volumes-gce-pd"
#define NC_INLINE KS_INLINE_GCE_PD
#define NC_DEFAULT_MAX 16
#elif NVL_NON_CSI == NVL_NON_CSI_AZURE_DISK
#define NC_NAME "AzureDiskLimits"
#define NC_PLUGIN "kubernetes.io/azure-disk"
#define NC_PV_ID "spec.azureDisk.diskName"
#define NC_LIMIT_KEY "attachable-volumes-azure-disk"
#define NC_INLINE KS_INLINE_AZURE_DISK
#define NC_DEFAULT_MAX 16
#else
#error "NVL_NON_CSI must name a disk type (1 EBS, 2 GCE PD, 3 Azure Disk)"
#endif

#define MIGRATED_PLUGINS "storage.alpha.kubernetes.io/migrated-plugins"
#define LABEL_INSTANCE_TYPE "node.kubernetes.io/instance-type"
#define LABEL_BETA_INSTANCE_TYPE "beta.kubernetes.io/instance-type"

/* The instance: the shared plugin struct (no attachment store) and
 * KUBE_MAX_PD_VOLS as read at create (-1 when unset or invalid). */
typedef struct nc_plugin {
    nvl_plugin_t base;
    int64_t env_max;
} nc_plugin_t;

static const ks_resource_ref_t nc_resources[] = {
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode"},
};

/* getMaxVolLimitFromEnv: a positive KUBE_MAX_PD_VOLS, else -1. */
static int64_t env_max_volumes(const nvl_plugin_t *pl)
{
    const char *raw = getenv("KUBE_MAX_PD_VOLS");
    int64_t v;
    if (raw == NULL || raw[0] == '\0')
        return -1;
    if (ks_parse_int64(raw, &v) != 0) {
        pl->api->log(pl->h, KS_LOG_ERROR,
                     "Unable to parse maximum PD volumes value %s, using "
                     "default", raw);
        return -1;
    }
    if (v <= 0) {
        pl->api->log(pl->h, KS_LOG_ERROR,
                     "Maximum PD volumes must be a positive value, using "
                     "default");
        return -1;
    }
    return v;
}

static int nc_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {NULL};
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    struct timespec ts = {0, 0};
    nc_plugin_t *nc;
    uint64_t x;
    int i;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    if (api->abi_minor < 3 || !KS_API_HAS(api, store_get) ||
        !KS_API_HAS(api, object_map_iterate)) {
        snprintf(err, errlen, "this host has no cluster object stores "
                              "(ABI 1.3); " NC_NAME " needs them");
        return -1;
    }
    nc = calloc(1, sizeof *nc);
    if (nc == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    nc->base.api = api;
    nc->base.h = h;
    nc->base.pvcs = api->store_get(h, "", "v1", "persistentvolumeclaims");
    nc->base.pvs = api->store_get(h, "", "v1", "persistentvolumes");
    nc->base.classes =
        api->store_get(h, "storage.k8s.io", "v1", "storageclasses");
    nc->base.csinodes = api->store_get(h, "storage.k8s.io", "v1", "csinodes");
    if (nc->base.pvcs == NULL || nc->base.pvs == NULL ||
        nc->base.classes == NULL || nc->base.csinodes == NULL) {
        snprintf(err, errlen, "the host has no store for a resource "
                              NC_NAME " declares");
        free(nc);
        return -1;
    }
    /* the made-up IDs' random prefix (see nvl_plugin.c) */
    (void)timespec_get(&ts, TIME_UTC);
    x = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
        (uint64_t)(uintptr_t)nc;
    for (i = 0; i < 32; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        nc->base.prefix[i] = alphabet[x % (sizeof alphabet - 1)];
    }
    nc->env_max = env_max_volumes(&nc->base);
    *self = nc;
    return 0;
}

static void nc_destroy(void *self)
{
    free(self);
}

/* matchProvisioner: spec.storageClassName set (the beta annotation is not
 * read here), the class found, its provisioner the type's plugin. */
static int match_provisioner(const nvl_plugin_t *pl, const ks_object_t *pvc)
{
    const char *sc_name = NULL, *prov = NULL;
    const ks_object_t *sc;
    if (pl->api->object_string(pvc, "spec.storageClassName", &sc_name) !=
        KS_FIELD_OK)
        return 0;
    sc = pl->api->object_get(pl->classes, NULL, sc_name);
    return sc != NULL &&
           pl->api->object_string(sc, "provisioner", &prov) == KS_FIELD_OK &&
           strcmp(prov, NC_PLUGIN) == 0;
}

/* filterVolumes: the pod's disks of the type into `out`. */
static ks_code_t filter_volumes(const nvl_plugin_t *pl, const ks_pod_t *pod,
                                int new_pod, nvl_set_t *out, ks_status_t *st)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(pl->api, pod);
    char made_up[512];
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *v = &pod->volumes[i];
        const ks_object_t *pvc, *pv;
        const char *pv_name = NULL, *id = NULL;
        int put = 0;
        if (inl != NULL && inl[i].kind == NC_INLINE) {
            /* FilterVolume: the inline source's ID */
            if (nvl_set_put(out, NC_NAME, inl[i].id) < 0) {
                pl->api->status_reason(st, "out of memory");
                return KS_ERROR;
            }
            continue;
        }
        if (v->source != KS_VOLUME_PVC && v->source != KS_VOLUME_EPHEMERAL)
            continue;
        if (v->claim_name[0] == '\0') {
            pl->api->status_reason(st, "PersistentVolumeClaim had no name");
            return KS_ERROR;
        }
        snprintf(made_up, sizeof made_up, "%s-%s/%s", pl->prefix, pod->ns,
                 v->claim_name);
        pvc = pl->api->object_get(pl->pvcs, pod->ns, v->claim_name);
        if (pvc == NULL) {
            if (!new_pod)
                continue;
            pl->api->status_reasonf(st,
                                    "looking up PVC %s/%s: "
                                    "persistentvolumeclaim \"%s\" not found",
                                    pod->ns, v->claim_name, v->claim_name);
            return KS_ERROR;
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
        if (pl->api->object_string(pvc, "spec.volumeName", &pv_name) !=
                KS_FIELD_OK ||
            pv_name[0] == '\0' ||
            (pv = pl->api->object_get(pl->pvs, NULL, pv_name)) == NULL) {
            /* unbound, or its volume is gone: counted when the class is
             * the type's */
            if (match_provisioner(pl, pvc))
                put = nvl_set_put(out, NC_NAME, made_up) >= 0 ? 1 : -1;
        } else if (pl->api->object_type(pv, NC_PV_ID) != KS_FIELD_ABSENT) {
            if (pl->api->object_string(pv, NC_PV_ID, &id) != KS_FIELD_OK)
                id = "";
            put = nvl_set_put(out, NC_NAME, id) >= 0 ? 1 : -1;
        }
        if (put < 0) {
            pl->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
    }
    return KS_SUCCESS;
}

/* IsMigrated: v1.24's isCSIMigrationOn with the type's migration gate on:
 * the node has a CSINode whose migrated-plugins annotation lists the
 * plugin (comma-separated, as written). */
static int is_migrated(const nvl_plugin_t *pl, const char *node)
{
    const ks_object_t *csinode = pl->api->object_get(pl->csinodes, NULL, node);
    const char *mpa = NULL, *p;
    size_t want = strlen(NC_PLUGIN);
    if (csinode == NULL ||
        pl->api->object_string(csinode,
                               "metadata.annotations[\"" MIGRATED_PLUGINS
                               "\"]",
                               &mpa) != KS_FIELD_OK)
        return 0;
    for (p = mpa;;) {
        size_t n = strcspn(p, ",");
        if (n == want && strncmp(p, NC_PLUGIN, want) == 0)
            return 1;
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

/* maxVolumeFunc, then the node's allocatable attachable-volumes-<type>. */
static int64_t max_volumes(const nc_plugin_t *nc, const ks_node_t *node)
{
    int64_t max = nc->env_max;
    uint32_t i;
    for (i = 0; i < node->allocatable.n_scalar &&
                i < KS_MAX_SCALAR_RESOURCES;
         i++)
        if (strcmp(node->allocatable.scalar[i].name, NC_LIMIT_KEY) == 0)
            return node->allocatable.scalar[i].value;
    if (max > 0)
        return max;
#if NVL_NON_CSI == NVL_NON_CSI_EBS
    {
        /* getMaxEBSVolume: "^[cmr]5.*|t3|z1d" are Nitro types */
        const char *t = ks_labels_get(&node->labels, LABEL_INSTANCE_TYPE);
        if (t == NULL)
            t = ks_labels_get(&node->labels, LABEL_BETA_INSTANCE_TYPE);
        if (t != NULL && ((t[0] != '\0' && strchr("cmr", t[0]) != NULL &&
                           t[1] == '5') ||
                          strstr(t, "t3") != NULL || strstr(t, "z1d") != NULL))
            return 25;
        return 39;
    }
#else
    (void)node;
    return NC_DEFAULT_MAX;
#endif
}

static inline ks_code_t nc_filter_one(void *self, ks_cycle_state_t *cs,
                                      void *state, const ks_pod_t *pod,
                                      const ks_node_info_t *ni,
                                      ks_status_t *st)
{
    const nc_plugin_t *nc = self;
    const nvl_plugin_t *pl = &nc->base;
    nvl_set_t mine = NVL_SET_INIT, existing = NVL_SET_INIT;
    ks_code_t c;
    uint32_t i;
    int64_t add = 0;
    (void)cs;
    (void)state;
    if (pod->n_volumes == 0)
        return KS_SUCCESS;
    c = filter_volumes(pl, pod, 1, &mine, st);
    if (c != KS_SUCCESS || mine.n == 0)
        goto out;
    if (ni->node == NULL) {
        pl->api->status_reason(st, "node not found");
        c = KS_ERROR;
        goto out;
    }
    if (is_migrated(pl, ni->node->name))
        goto out; /* NodeVolumeLimits counts them */
    for (i = 0; i < ni->n_pods && c == KS_SUCCESS; i++)
        c = filter_volumes(pl, ni->pods[i], 0, &existing, st);
    if (c != KS_SUCCESS)
        goto out;
    for (i = 0; i < mine.n; i++)
        if (!nvl_set_has(&existing, nvl_set_name(&mine, i)))
            add++;
    if ((int64_t)existing.n + add > max_volumes(nc, ni->node)) {
        pl->api->status_reason(st, NVL_REASON_MAX_VOLUMES);
        c = KS_UNSCHEDULABLE;
    }
out:
    nvl_set_free(&mine);
    nvl_set_free(&existing);
    return c;
}

static ks_code_t nc_filter(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           ks_status_t *st)
{
    return nc_filter_one(self, cs, NULL, pod, ni, st);
}

KS_FILTER_NODES_FROM(nc_filter_nodes, nc_filter_one)

/* v1.24's EventsToRegister: a node added, a pod deleted (no hints). */
static uint32_t nc_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_NODE, KS_ACT_ADD},
        {KS_RES_POD, KS_ACT_DELETE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

/* Batching: the namespace and the volumes (as NodeVolumeLimits). */
static ks_code_t nc_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const nc_plugin_t *nc = self;
    ks_sign_volumes(nc->base.api, sg, pod);
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(NC_NAME, "1.24.1-ks1",
    .create = nc_create,
    .destroy = nc_destroy,
    .filter = nc_filter,
    .filter_nodes = nc_filter_nodes,
    .events_to_register = nc_events,
    .sign = nc_sign,
    .resources = nc_resources,
    .n_resources = 4);
