/*
 * Private: the NodeInfo behind every ks_node_info_t view the cluster code
 * hands out (cache entries, snapshot entries, clones).
 *
 * A ks_ni_t embeds the public view first and owns growable arrays that back
 * it (pods, pods with affinity, pods with required anti-affinity, used host
 * ports). An "indexed" NodeInfo (the cache's) also keeps, for every array
 * entry, a pointer to the pod's slot record, so a pod is removed in O(1) by
 * swapping the last entry into its place; other NodeInfos find the pod by
 * uid. Not thread-safe: one writer at a time.
 */
#ifndef KS_CLUSTER_NODE_INFO_H
#define KS_CLUSTER_NODE_INFO_H

#include <stdint.h>

#include "ksched/types.h"

/* Where one pod sits in an indexed NodeInfo's arrays. */
typedef struct ks_pod_slot {
    uint32_t pods, aff, anti;
} ks_pod_slot_t;

typedef struct ks_ni {
    ks_node_info_t pub; /* first: a ks_node_info_t * of ours is a ks_ni_t * */
    const ks_pod_t **pods;
    ks_pod_slot_t **pod_slots;
    uint32_t cap_pods;
    const ks_pod_t **aff;
    ks_pod_slot_t **aff_slots;
    uint32_t cap_aff;
    const ks_pod_t **anti;
    ks_pod_slot_t **anti_slots;
    uint32_t cap_anti;
    const ks_container_port_t **ports;
    uint32_t cap_ports;
    int indexed;
} ks_ni_t;

/* A process-wide, strictly increasing generation number (thread-safe). */
uint64_t ks_generation_next(void);

void ks_ni_init(ks_ni_t *ni, int indexed);
void ks_ni_destroy(ks_ni_t *ni);
/* Add `pod`: requests, non-zero requests, lists, ports; bumps generation.
 * `slot` is required for indexed NodeInfos and ignored otherwise.
 * 0, or -1 on ENOMEM (nothing changed then). */
int ks_ni_add_pod(ks_ni_t *ni, const ks_pod_t *pod, ks_pod_slot_t *slot);
/* Remove `pod` (by slot when indexed, else by uid); bumps generation.
 * -1 when the pod is not on the node. */
int ks_ni_remove_pod(ks_ni_t *ni, const ks_pod_t *pod, ks_pod_slot_t *slot);
/* Make `dst` (not indexed) an exact copy of the view `src`, reusing dst's
 * arrays. 0 or -1 on ENOMEM. */
int ks_ni_copy(ks_ni_t *dst, const ks_node_info_t *src);
/* Does the pod count in pods_with_affinity / _required_anti_affinity? */
int ks_pod_has_affinity(const ks_pod_t *pod);
int ks_pod_has_required_anti_affinity(const ks_pod_t *pod);

#endif
