/*
 * Cluster events as upstream v1.36 classifies them (framework/events.go):
 * which properties of a pod or node an update changed, the event's label
 * for the metrics, and the wildcard event.
 *
 * Pure functions over the objects; any thread.
 */
#ifndef KS_CLUSTER_EVENT_H
#define KS_CLUSTER_EVENT_H

#include <stdint.h>

#include "ksched/plugin.h"

/* The update bits for a pod that changed from `old` to `n` (upstream
 * PodSchedulingPropertiesChange): KS_ACT_UPDATE_POD_LABEL,
 * _TOLERATION, _SCHEDULING_GATES_ELIMINATED (it had gates and has none),
 * _SCALE_DOWN (some request went down), always with KS_ACT_UPDATE (alone
 * when only other fields changed). */
uint32_t ks_cluster_event_pod_update(const ks_pod_t *old, const ks_pod_t *n);

/* The update bits for a node (upstream nodeSchedulingPropertiesChange):
 * _ALLOCATABLE, _LABEL, _TAINT (taints or spec.unschedulable), and
 * KS_ACT_UPDATE for any of them or the images changing; 0 when nothing
 * ksched reads changed (a heartbeat). */
uint32_t ks_cluster_event_node_update(const ks_node_t *old,
                                      const ks_node_t *n);

/* The event of a declared resource's object (SDK ABI 1.3) changing from
 * `old` to `n`: KS_RES_OBJECT with KS_ACT_ADD (old NULL), KS_ACT_DELETE
 * (n NULL) or KS_ACT_UPDATE; the QueueingHints get old and n. Cluster
 * mode's informers and the embedded API both report changes so. */
ks_cluster_event_t ks_cluster_event_object(const ks_object_t *old,
                                           const ks_object_t *n);

/* {KS_RES_ALL, KS_ACT_ALL}: moves every unschedulable pod. */
int ks_cluster_event_is_wildcard(ks_cluster_event_t ev);

/* Does a plugin's registered event cover `ev`: some resource and some
 * action in common (upstream's ClusterEvent.Match, without the wildcard,
 * which callers check first)? */
static inline int ks_cluster_event_covers(ks_cluster_event_t registered,
                                          ks_cluster_event_t ev)
{
    return (registered.resource & ev.resource) != 0 &&
           (registered.action & ev.action) != 0;
}

/* Upstream's label of one event (its metrics' "event" label): NodeAdd,
 * NodeDelete, NodeAllocatableChange, NodeLabelChange, NodeTaintChange,
 * NodeSpecUnschedulableChange, NodeAnnotationChange, NodeUpdate,
 * AssignedPodAdd/Update/Delete, UnschedulablePodAdd/Update/Delete,
 * PodLabelChange, PodTolerationChange, PodSchedulingGateChange,
 * PodRequestScaledDown, WildCard, or "<Resource><Action>" for the rest.
 * `ev` carries one update kind (see ks_scheduler_on_cluster_event);
 * old/new as there. A static string. */
const char *ks_cluster_event_label(ks_cluster_event_t ev, const void *old_obj,
                                   const void *new_obj);

#endif
