/*
 * VolumeRestrictions (PreFilter with AddPod/RemovePod, Filter,
 * QueueingHints), as upstream v1.36's volumerestrictions plugin:
 *
 *   - ReadWriteOncePod: a claim with that access mode may be used by one
 *     pod only. PreFilter counts the pod's RWOP claims that a pod of the
 *     snapshot already uses (vr_rwop.c); Filter rejects every node while
 *     that count is above 0, and AddPod/RemovePod move it so that
 *     preemption sees a victim's claim freed.
 *   - Disk conflicts on a node (vr_disks.c): GCE PD, AWS EBS, iSCSI and
 *     RBD volumes mounted by a pod of the node.
 *
 * Threads: create, destroy, PreFilter and the hints run on the loop
 * thread; Filter and AddPod/RemovePod may run on workers (AddPod and
 * RemovePod change only their own clone of the state, as the host hands
 * each preemption candidate its own cycle-state copy).
 */
#ifndef KS_VOLUME_RESTRICTIONS_H
#define KS_VOLUME_RESTRICTIONS_H

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define VR_NAME "VolumeRestrictions"
#define VR_STATE_KEY "PreFilter" VR_NAME

#define VR_REASON_DISK_CONFLICT "node(s) had no available disk"
/* v1.36's text (kubernetes/kubernetes#129145); older releases said "node
 * has pod using PersistentVolumeClaim with the same name and
 * ReadWriteOncePod access mode", and until #114051 (v1.27) rejected the
 * pod at PreFilter, UnschedulableAndUnresolvable, which preemption could
 * not help. */
#define VR_REASON_RWOP_CONFLICT                                               \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod " \
    "access mode already in-use by another pod"

typedef struct vr_plugin {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_store_t *pvcs; /* PersistentVolumeClaims (declared) */
} vr_plugin_t;

/* --- vr_rwop.c ----------------------------------------------------------- */

/*
 * The Filter state (upstream preFilterState): the names of the pending
 * pod's claims with the ReadWriteOncePod access mode, and how many
 * references to them the scheduled pods hold. `claims` points into the
 * same allocation; the names are the pending pod's own interned strings,
 * valid for the cycle (the pod outlives its cycle). Owned by the cycle
 * state (free / vr_state_clone).
 */
typedef struct vr_state {
    int64_t conflicts;
    uint32_t n_claims;
    const char **claims;
} vr_state_t;

ks_code_t vr_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        ks_prefilter_result_t *result, ks_status_t *st);
ks_code_t vr_add_pod(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_pod_t *to_add, const ks_node_info_t *ni,
                     ks_status_t *st);
ks_code_t vr_remove_pod(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const ks_pod_t *to_remove, const ks_node_info_t *ni,
                        ks_status_t *st);
ks_code_t vr_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                               const ks_pod_t *pod, const ks_node_info_t *ni,
                               ks_status_t *st);
ks_code_t vr_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                    const ks_node_info_t *ni, ks_status_t *st);
ks_code_t vr_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes, uint32_t n,
                          uint8_t *pass, ks_status_t *scratch);

/* --- vr_disks.c ---------------------------------------------------------- */

/* Does the pod have a volume the disk-conflict rules look at (upstream
 * needsRestrictionsCheck)? `api` is the host's table (the pods' inline
 * sources are read only from a 1.4 host). */
int vr_pod_needs_disk_check(const ks_host_api_t *api, const ks_pod_t *pod);
/* Would `pod` on a node running `existing` conflict over a disk (upstream
 * isVolumeConflict for each of the pod's volumes)? Thread-safe. */
int vr_pods_disk_conflict(const ks_host_api_t *api, const ks_pod_t *pod,
                          const ks_pod_t *existing);

#endif /* KS_VOLUME_RESTRICTIONS_H */
