/*
 * VolumeRestrictions' disk conflicts (upstream isVolumeConflict): a pod
 * cannot go to a node where another pod mounts
 *   - the same GCE persistent disk (pdName), unless both mount it
 *     read-only;
 *   - the same AWS EBS volume (volumeID), read-only or not;
 *   - the same iSCSI target (IQN), unless both mount it read-only;
 *   - the same Ceph RBD image (a monitor in common, same pool and image),
 *     unless both mount it read-only.
 *
 * The rules work on vr_disk_t, one in-tree disk of a pod. The SDK's pod
 * view (ks_volume_t, ABI 1.4) does not carry a volume's in-tree source
 * yet, only claims and ephemeral volumes: vr_pod_disks() can find no disk
 * until it does, so no pod has one and Filter never reports a disk
 * conflict. What the view needs, per volume: the source kind
 * (gcePersistentDisk, awsElasticBlockStore, iscsi, rbd), its identity
 * (pdName; volumeID; iqn; monitors, pool, image) and its readOnly flag.
 *
 * Pure functions over host-owned views; thread-safe.
 */
#include "vr.h"

#include <string.h>

typedef enum vr_disk_kind {
    VR_DISK_GCE_PD = 1,
    VR_DISK_AWS_EBS,
    VR_DISK_ISCSI,
    VR_DISK_RBD
} vr_disk_kind_t;

/* One in-tree disk of a pod; strings belong to the pod view. */
typedef struct vr_disk {
    vr_disk_kind_t kind;
    const char *id;   /* pdName, volumeID, iqn, or the RBD image */
    const char *pool; /* RBD: the RADOS pool; NULL otherwise */
    const char *const *monitors; /* RBD: the Ceph monitors */
    uint32_t n_monitors;
    int read_only;
} vr_disk_t;

/* The in-tree disks of `pod`, at most `cap` of them into `out`; returns how
 * many it has. None yet: see the top of this file. */
static uint32_t vr_pod_disks(const ks_pod_t *pod, vr_disk_t *out,
                             uint32_t cap)
{
    (void)pod;
    (void)out;
    (void)cap;
    return 0;
}

/* Do two monitor lists share an entry (upstream haveOverlap)? */
static int monitors_overlap(const vr_disk_t *a, const vr_disk_t *b)
{
    uint32_t i, j;
    for (i = 0; i < a->n_monitors; i++)
        for (j = 0; j < b->n_monitors; j++)
            if (ks_str_eq(a->monitors[i], b->monitors[j]))
                return 1;
    return 0;
}

/* Does disk `d` of the incoming pod conflict with disk `e` of a pod on
 * the node? */
static int disks_conflict(const vr_disk_t *d, const vr_disk_t *e)
{
    if (d->kind != e->kind)
        return 0;
    switch (d->kind) {
    case VR_DISK_GCE_PD:
    case VR_DISK_ISCSI:
        return ks_str_eq(d->id, e->id) && !(d->read_only && e->read_only);
    case VR_DISK_AWS_EBS:
        return ks_str_eq(d->id, e->id);
    case VR_DISK_RBD:
        return monitors_overlap(d, e) && ks_str_eq(d->pool, e->pool) &&
               ks_str_eq(d->id, e->id) && !(d->read_only && e->read_only);
    }
    return 0;
}

enum { VR_MAX_DISKS = 64 }; /* per pod; more are not looked at */

int vr_pod_needs_disk_check(const ks_pod_t *pod)
{
    vr_disk_t d[1];
    return vr_pod_disks(pod, d, 1) > 0;
}

int vr_pods_disk_conflict(const ks_pod_t *pod, const ks_pod_t *existing)
{
    vr_disk_t mine[VR_MAX_DISKS], theirs[VR_MAX_DISKS];
    uint32_t n, m, i, j;
    n = vr_pod_disks(pod, mine, VR_MAX_DISKS);
    if (n == 0)
        return 0;
    m = vr_pod_disks(existing, theirs, VR_MAX_DISKS);
    if (n > VR_MAX_DISKS)
        n = VR_MAX_DISKS;
    if (m > VR_MAX_DISKS)
        m = VR_MAX_DISKS;
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            if (disks_conflict(&mine[i], &theirs[j]))
                return 1;
    return 0;
}
