/*
 * In-tree volumes as CSI volumes, as k8s.io/csi-translation-lib does it
 * for NodeVolumeLimits: which in-tree plugins migrate to which CSI
 * driver, which PersistentVolume sources they read, and the volume handle
 * a translated PersistentVolume gets. Only what the limit count needs
 * (the driver and the handle) is reproduced.
 *
 * Pure functions over host-owned views; thread-safe.
 */
#include "nvl.h"

#include <stdio.h>
#include <string.h>

#define LABEL_ZONE "topology.kubernetes.io/zone"
#define LABEL_BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define UNSPECIFIED "UNSPECIFIED"

typedef struct in_tree {
    const char *plugin; /* the in-tree plugin's name */
    const char *driver; /* the CSI driver it migrates to */
    const char *source; /* its PersistentVolume source: spec.<source> */
    int migrated;       /* isCSIMigrationOn's list (v1.36) */
} in_tree_t;

/* csi-translation-lib's in-tree plugins. vSphere and Azure File translate
 * too, but their migration is not on for the scheduler's count. */
static const in_tree_t in_trees[] = {
    {"kubernetes.io/aws-ebs", "ebs.csi.aws.com", "awsElasticBlockStore", 1},
    {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "gcePersistentDisk", 1},
    {"kubernetes.io/azure-disk", "disk.csi.azure.com", "azureDisk", 1},
    {"kubernetes.io/cinder", "cinder.csi.openstack.org", "cinder", 1},
    {"kubernetes.io/portworx-volume", "pxd.portworx.com", "portworxVolume",
     1},
    {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com",
     "vsphereVolume", 0},
    {"kubernetes.io/azure-file", "file.csi.azure.com", "azureFile", 0},
};
enum { N_IN_TREES = sizeof in_trees / sizeof in_trees[0] };

static const in_tree_t *by_plugin(const char *plugin)
{
    uint32_t i;
    for (i = 0; plugin != NULL && i < N_IN_TREES; i++)
        if (strcmp(in_trees[i].plugin, plugin) == 0)
            return &in_trees[i];
    return NULL;
}

const char *nvl_csi_driver_of(const char *in_tree_plugin)
{
    const in_tree_t *t = by_plugin(in_tree_plugin);
    return t ? t->driver : NULL;
}

int nvl_migration_on(int has_csinode, const char *in_tree_plugin)
{
    const in_tree_t *t = by_plugin(in_tree_plugin);
    return has_csinode && t != NULL && t->migrated;
}

const char *nvl_pv_in_tree_plugin(const ks_host_api_t *api,
                                  const ks_object_t *pv)
{
    char path[64];
    uint32_t i;
    for (i = 0; i < N_IN_TREES; i++) {
        snprintf(path, sizeof path, "spec.%s", in_trees[i].source);
        if (api->object_type(pv, path) == KS_FIELD_MAP)
            return in_trees[i].plugin;
    }
    return NULL;
}

/* A string field of the PV, "" when absent. */
static const char *pv_string(const ks_host_api_t *api, const ks_object_t *pv,
                             const char *path)
{
    const char *s = NULL;
    return api->object_string(pv, path, &s) == KS_FIELD_OK ? s : "";
}

/* KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/vol-..." or a bare ID. */
static int ebs_volume_id(const char *id, char *buf, size_t len)
{
    const char *p, *e;
    if (strncmp(id, "aws://", 6) != 0) {
        snprintf(buf, len, "%s", id);
        return 0;
    }
    /* the URL's path: after the host, up to a query or fragment */
    p = strchr(id + 6, '/');
    if (p == NULL)
        return -1;
    e = p + strcspn(p, "?#");
    while (p < e && *p == '/')
        p++;
    while (e > p && e[-1] == '/')
        e--;
    /* the two known formats: vol-12345678 and vol-12345678abcdef01 */
    if (e - p < 4 || strncmp(p, "vol-", 4) != 0 ||
        memchr(p, '/', (size_t)(e - p)) != NULL)
        return -1;
    snprintf(buf, len, "%.*s", (int)(e - p), p);
    return 0;
}

/* The GCE region of zones "a__b__...": each {locale}-{region}-{zone},
 * all in one region. 0, or -1. */
static int gce_region(const char *zones, char *buf, size_t len)
{
    const char *z = zones;
    buf[0] = '\0';
    for (;;) {
        const char *end = strstr(z, "__");
        size_t n = end ? (size_t)(end - z) : strlen(z);
        const char *d1 = memchr(z, '-', n), *d2;
        char region[256];
        if (d1 == NULL)
            return -1;
        d2 = memchr(d1 + 1, '-', n - (size_t)(d1 + 1 - z));
        if (d2 == NULL ||
            memchr(d2 + 1, '-', n - (size_t)(d2 + 1 - z)) != NULL ||
            (size_t)(d2 - z) >= sizeof region)
            return -1;
        snprintf(region, sizeof region, "%.*s", (int)(d2 - z), z);
        if (buf[0] == '\0')
            snprintf(buf, len, "%s", region);
        else if (strcmp(buf, region) != 0)
            return -1; /* several regions */
        if (end == NULL)
            return 0;
        z = end + 2;
    }
}

int nvl_pv_csi_handle(const ks_host_api_t *api, const ks_object_t *pv,
                      const char *in_tree_plugin, char *buf, size_t len)
{
    const in_tree_t *t = by_plugin(in_tree_plugin);
    if (t == NULL)
        return -1;
    if (strcmp(t->source, "awsElasticBlockStore") == 0)
        return ebs_volume_id(
            pv_string(api, pv, "spec.awsElasticBlockStore.volumeID"), buf,
            len);
    if (strcmp(t->source, "gcePersistentDisk") == 0) {
        ks_labels_t labels = api->object_labels(pv);
        const char *pd = pv_string(api, pv, "spec.gcePersistentDisk.pdName");
        const char *zones = ks_labels_get(&labels, LABEL_BETA_ZONE);
        char region[256];
        if (zones == NULL || zones[0] == '\0')
            zones = ks_labels_get(&labels, LABEL_ZONE);
        if (zones == NULL || zones[0] == '\0')
            snprintf(buf, len, "projects/" UNSPECIFIED "/zones/" UNSPECIFIED
                               "/disks/%s", pd);
        else if (strstr(zones, "__") == NULL)
            snprintf(buf, len, "projects/" UNSPECIFIED "/zones/%s/disks/%s",
                     zones, pd);
        else if (gce_region(zones, region, sizeof region) == 0)
            snprintf(buf, len,
                     "projects/" UNSPECIFIED "/regions/%s/disks/%s", region,
                     pd);
        else
            return -1;
        return 0;
    }
    if (strcmp(t->source, "azureDisk") == 0) {
        snprintf(buf, len, "%s", pv_string(api, pv, "spec.azureDisk.diskURI"));
        return 0;
    }
    if (strcmp(t->source, "cinder") == 0) {
        snprintf(buf, len, "%s", pv_string(api, pv, "spec.cinder.volumeID"));
        return 0;
    }
    if (strcmp(t->source, "portworxVolume") == 0) {
        snprintf(buf, len, "%s",
                 pv_string(api, pv, "spec.portworxVolume.volumeID"));
        return 0;
    }
    return -1; /* vSphere, Azure File: not counted (migration off) */
}

/* The in-tree plugin of each inline kind csi-translation-lib translates
 * (IsInlineMigratable + GetInTreePluginNameFromSpec); iSCSI and RBD have
 * no translator. */
const char *nvl_inline_plugin(ks_inline_kind_t kind)
{
    switch (kind) {
    case KS_INLINE_GCE_PD:
        return "kubernetes.io/gce-pd";
    case KS_INLINE_AWS_EBS:
        return "kubernetes.io/aws-ebs";
    case KS_INLINE_AZURE_DISK:
        return "kubernetes.io/azure-disk";
    case KS_INLINE_CINDER:
        return "kubernetes.io/cinder";
    case KS_INLINE_PORTWORX:
        return "kubernetes.io/portworx-volume";
    default:
        return NULL;
    }
}

int nvl_inline_csi_handle(const ks_volume_inline_t *vi, char *buf,
                          size_t len)
{
    switch (vi->kind) {
    case KS_INLINE_GCE_PD:
        /* no zone labels on a pod: the zonal form, both UNSPECIFIED */
        snprintf(buf, len, "projects/" UNSPECIFIED "/zones/" UNSPECIFIED
                           "/disks/%s", vi->id);
        return 0;
    case KS_INLINE_AWS_EBS:
        return ebs_volume_id(vi->id, buf, len);
    case KS_INLINE_AZURE_DISK:
        snprintf(buf, len, "%s", vi->disk_uri ? vi->disk_uri : "");
        return 0;
    case KS_INLINE_CINDER:
    case KS_INLINE_PORTWORX:
        snprintf(buf, len, "%s", vi->id);
        return 0;
    default:
        return -1;
    }
}
