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
 * The rules work on vr_disk_t, one in-tree disk of a pod, read from the
 * pod view's inline in-tree sources (ks_pod_t.volume_inline, ABI 1.4;
 * the RBD pool already defaulted to "rbd" by the host, as the API server
 * does). On a 1.3 host the pod view has none: no pod has a disk there
 * and Filter never reports a disk conflict.
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
 * many it has (upstream's isVolumeConflict looks at these four sources). */
static uint32_t vr_pod_disks(const ks_host_api_t *api, const ks_pod_t *pod,
                             vr_disk_t *out, uint32_t cap)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(api, pod);
    uint32_t i, n = 0;
    if (inl == NULL)
        return 0;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_inline_t *vi = &inl[i];
        vr_disk_t d;
        switch (vi->kind) {
        case KS_INLINE_GCE_PD:
            d.kind = VR_DISK_GCE_PD;
            break;
        case KS_INLINE_AWS_EBS:
            d.kind = VR_DISK_AWS_EBS;
            break;
        case KS_INLINE_ISCSI:
            d.kind = VR_DISK_ISCSI;
            break;
        case KS_INLINE_RBD:
            d.kind = VR_DISK_RBD;
            break;
        default:
            continue;
        }
        d.id = vi->id;
        d.pool = vi->pool;
        d.monitors = vi->monitors;
        d.n_monitors = vi->n_monitors;
        d.read_only = vi->read_only;
        if (n < cap)
            out[n] = d;
        n++;
    }
    return n;
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

int vr_pod_needs_disk_check(const ks_host_api_t *api, const ks_pod_t *pod)
{
    vr_disk_t d[1];
    return vr_pod_disks(api, pod, d, 1) > 0;
}

int vr_pods_disk_conflict(const ks_host_api_t *api, const ks_pod_t *pod,
                          const ks_pod_t *existing)
{
    vr_disk_t mine[VR_MAX_DISKS], theirs[VR_MAX_DISKS];
    uint32_t n, m, i, j;
    n = vr_pod_disks(api, pod, mine, VR_MAX_DISKS);
    if (n == 0)
        return 0;
    m = vr_pod_disks(api, existing, theirs, VR_MAX_DISKS);
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
