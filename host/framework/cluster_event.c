/*
 * Cluster event classification (cluster_event.h).
 */
#include "cluster_event.h"

#include <stddef.h>

#include "ksched/helpers.h"

#include <stdio.h>

#include "base/intern.h"
#include "cluster/object_store.h"
#include "cluster/object_view.h"

static int64_t scalar_of(const ks_resources_t *r, const char *name)
{
    uint32_t i;
    for (i = 0; i < r->n_scalar; i++)
        if (r->scalar[i].name == name)
            return r->scalar[i].value;
    return 0;
}

/* Did any request of `old` go down in `n`? */
static int scaled_down(const ks_resources_t *old, const ks_resources_t *n)
{
    uint32_t i;
    if (n->milli_cpu < old->milli_cpu || n->memory < old->memory ||
        n->ephemeral_storage < old->ephemeral_storage)
        return 1;
    for (i = 0; i < old->n_scalar; i++)
        if (scalar_of(n, old->scalar[i].name) < old->scalar[i].value)
            return 1;
    return 0;
}

uint32_t ks_cluster_event_pod_update(const ks_pod_t *old, const ks_pod_t *n)
{
    uint32_t act = KS_ACT_UPDATE;
    if (!ks_labels_equal_interned(&old->labels, &n->labels))
        act |= KS_ACT_UPDATE_POD_LABEL;
    if (!ks_pod_tolerations_equal(old, n))
        act |= KS_ACT_UPDATE_POD_TOLERATION;
    if (old->n_scheduling_gates > 0 && n->n_scheduling_gates == 0)
        act |= KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
    if (scaled_down(&old->requests, &n->requests))
        act |= KS_ACT_UPDATE_POD_SCALE_DOWN;
    return act;
}

static int images_equal(const ks_node_t *a, const ks_node_t *b)
{
    uint32_t i;
    if (a->n_images != b->n_images)
        return 0;
    for (i = 0; i < a->n_images; i++)
        if (a->images[i].name != b->images[i].name ||
            a->images[i].size_bytes != b->images[i].size_bytes)
            return 0;
    return 1;
}

static int resources_equal(const ks_resources_t *a, const ks_resources_t *b)
{
    uint32_t i;
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage ||
        a->allowed_pods != b->allowed_pods || a->n_scalar != b->n_scalar)
        return 0;
    for (i = 0; i < a->n_scalar; i++)
        if (scalar_of(b, a->scalar[i].name) != a->scalar[i].value)
            return 0;
    return 1;
}

uint32_t ks_cluster_event_node_update(const ks_node_t *old,
                                      const ks_node_t *n)
{
    uint32_t act = 0;
    if (!resources_equal(&old->allocatable, &n->allocatable))
        act |= KS_ACT_UPDATE_NODE_ALLOCATABLE;
    if (!ks_labels_equal_interned(&old->labels, &n->labels))
        act |= KS_ACT_UPDATE_NODE_LABEL;
    if (!ks_node_taints_equal(old, n) ||
        old->unschedulable != n->unschedulable)
        act |= KS_ACT_UPDATE_NODE_TAINT;
    if (act != 0 || !images_equal(old, n))
        act |= KS_ACT_UPDATE;
    return act;
}

int ks_cluster_event_is_wildcard(ks_cluster_event_t ev)
{
    return (ev.resource & KS_RES_ALL) == KS_RES_ALL &&
           (ev.action & KS_ACT_ALL) == KS_ACT_ALL;
}

static const char *node_label(uint32_t a, const ks_node_t *old,
                              const ks_node_t *n)
{
    if (a & KS_ACT_ADD)
        return "NodeAdd";
    if (a & KS_ACT_DELETE)
        return "NodeDelete";
    if (a & KS_ACT_UPDATE_NODE_ALLOCATABLE)
        return "NodeAllocatableChange";
    if (a & KS_ACT_UPDATE_NODE_LABEL)
        return "NodeLabelChange";
    if (a & KS_ACT_UPDATE_NODE_TAINT)
        return old && n && old->unschedulable != n->unschedulable &&
                       ks_node_taints_equal(old, n)
                   ? "NodeSpecUnschedulableChange"
                   : "NodeTaintChange";
    if (a & KS_ACT_UPDATE_NODE_CONDITION)
        return "NodeConditionChange";
    if (a & KS_ACT_UPDATE_NODE_ANNOTATION)
        return "NodeAnnotationChange";
    return "NodeUpdate";
}

static const char *pod_label(uint32_t a, const ks_pod_t *old,
                             const ks_pod_t *n)
{
    const ks_pod_t *p = n ? n : old;
    int assigned = p && p->node_name && p->node_name[0];
    if (a & KS_ACT_ADD)
        return assigned ? "AssignedPodAdd" : "UnschedulablePodAdd";
    if (a & KS_ACT_DELETE)
        return assigned ? "AssignedPodDelete" : "UnschedulablePodDelete";
    if (a & KS_ACT_UPDATE_POD_SCALE_DOWN)
        return "PodRequestScaledDown";
    if (a & KS_ACT_UPDATE_POD_LABEL)
        return "PodLabelChange";
    if (a & KS_ACT_UPDATE_POD_TOLERATION)
        return "PodTolerationChange";
    if (a & KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
        return "PodSchedulingGateChange";
    return assigned ? "AssignedPodUpdate" : "UnschedulablePodUpdate";
}

/* A declared resource's event (ABI 1.3): upstream's "<Kind><Action>"
 * ("PersistentVolumeClaimAdd"), interned once so the label is as
 * long-lived as a static string. */
static const char *object_label(uint32_t a, const ks_object_t *o)
{
    const char *kind = NULL, *in;
    char buf[300];
    if (o == NULL || ks_field_string(o->tree, "kind", &kind) != KS_FIELD_OK)
        kind = "Object";
    snprintf(buf, sizeof buf, "%s%s", kind,
             a & KS_ACT_ADD      ? "Add"
             : a & KS_ACT_DELETE ? "Delete"
                                 : "Update");
    in = ks_intern_str(ks_intern_global(), buf);
    return in ? in : "ObjectUpdate";
}

const char *ks_cluster_event_label(ks_cluster_event_t ev, const void *old_obj,
                                   const void *new_obj)
{
    if (ks_cluster_event_is_wildcard(ev))
        return "WildCard";
    if (ev.resource == KS_RES_NODE)
        return node_label(ev.action, old_obj, new_obj);
    if (ev.resource == KS_RES_POD)
        return pod_label(ev.action, old_obj, new_obj);
    if (ev.resource == KS_RES_SERVICE)
        return ev.action & KS_ACT_ADD      ? "ServiceAdd"
               : ev.action & KS_ACT_DELETE ? "ServiceDelete"
                                           : "ServiceUpdate";
    if (ev.resource == KS_RES_NAMESPACE)
        return ev.action & KS_ACT_ADD      ? "NamespaceAdd"
               : ev.action & KS_ACT_DELETE ? "NamespaceDelete"
                                           : "NamespaceUpdate";
    if (ev.resource == KS_RES_OBJECT)
        return object_label(ev.action, new_obj ? new_obj : old_obj);
    return "Unknown";
}

ks_cluster_event_t ks_cluster_event_object(const ks_object_t *old,
                                           const ks_object_t *n)
{
    ks_cluster_event_t ev;
    ev.resource = KS_RES_OBJECT;
    ev.action = old == NULL ? KS_ACT_ADD
                : n == NULL ? KS_ACT_DELETE
                            : KS_ACT_UPDATE;
    return ev;
}
