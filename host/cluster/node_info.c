/*
 * NodeInfo bookkeeping as upstream framework.NodeInfo AddPod/RemovePod:
 * requested resources (not the pod count), non-zero requests, the pod
 * lists and used host ports; every change takes a new generation.
 */
#include "node_info.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static atomic_uint_fast64_t g_generation;

uint64_t ks_generation_next(void)
{
    return (uint64_t)atomic_fetch_add(&g_generation, 1) + 1;
}

int ks_pod_has_affinity(const ks_pod_t *pod)
{
    return pod->affinity.pod_affinity != NULL ||
           pod->affinity.pod_anti_affinity != NULL;
}

int ks_pod_has_required_anti_affinity(const ks_pod_t *pod)
{
    return pod->affinity.pod_anti_affinity != NULL &&
           pod->affinity.pod_anti_affinity->n_required > 0;
}

void ks_ni_init(ks_ni_t *ni, int indexed)
{
    memset(ni, 0, sizeof(*ni));
    ni->indexed = indexed;
}

void ks_ni_destroy(ks_ni_t *ni)
{
    free(ni->pods);
    free(ni->pod_slots);
    free(ni->aff);
    free(ni->aff_slots);
    free(ni->anti);
    free(ni->anti_slots);
    free(ni->ports);
    memset(ni, 0, sizeof(*ni));
}

/* Make room for `need` entries in a pod list (and its slot list). */
static int reserve_list(const ks_pod_t ***items, ks_pod_slot_t ***slots,
                        uint32_t *cap, uint32_t need, int indexed)
{
    uint32_t ncap;
    const ks_pod_t **ni;
    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    ni = realloc((void *)*items, ncap * sizeof(*ni));
    if (ni == NULL)
        return -1;
    *items = ni;
    if (indexed) {
        ks_pod_slot_t **ns = realloc(*slots, ncap * sizeof(*ns));
        if (ns == NULL)
            return -1; /* items grew; harmless */
        *slots = ns;
    }
    *cap = ncap;
    return 0;
}

static int reserve_ports(ks_ni_t *ni, uint32_t need)
{
    uint32_t ncap;
    const ks_container_port_t **np;
    if (need <= ni->cap_ports)
        return 0;
    ncap = ni->cap_ports ? ni->cap_ports : 8;
    while (ncap < need)
        ncap *= 2;
    np = realloc((void *)ni->ports, ncap * sizeof(*np));
    if (np == NULL)
        return -1;
    ni->ports = np;
    ni->cap_ports = ncap;
    return 0;
}

static void sync_pub(ks_ni_t *ni)
{
    ni->pub.pods = ni->pods;
    ni->pub.pods_with_affinity = ni->aff;
    ni->pub.pods_with_required_anti_affinity = ni->anti;
    ni->pub.used_ports = ni->ports;
}

static void account(ks_ni_t *ni, const ks_pod_t *pod, int sign)
{
    ks_resources_t *r = &ni->pub.requested;
    int64_t pods = r->allowed_pods; /* upstream counts pods by list length */
    if (sign > 0)
        ks_resources_add(r, &pod->requests);
    else
        ks_resources_sub(r, &pod->requests);
    r->allowed_pods = pods;
    ni->pub.non_zero_requested.milli_cpu += sign * pod->non_zero_milli_cpu;
    ni->pub.non_zero_requested.memory += sign * pod->non_zero_memory;
}

int ks_ni_add_pod(ks_ni_t *ni, const ks_pod_t *pod, ks_pod_slot_t *slot)
{
    int aff = ks_pod_has_affinity(pod);
    int anti = ks_pod_has_required_anti_affinity(pod);
    uint32_t i;
    if (reserve_list(&ni->pods, &ni->pod_slots, &ni->cap_pods,
                     ni->pub.n_pods + 1, ni->indexed) != 0 ||
        (aff && reserve_list(&ni->aff, &ni->aff_slots, &ni->cap_aff,
                             ni->pub.n_pods_with_affinity + 1,
                             ni->indexed) != 0) ||
        (anti && reserve_list(&ni->anti, &ni->anti_slots, &ni->cap_anti,
                              ni->pub.n_pods_with_required_anti_affinity + 1,
                              ni->indexed) != 0) ||
        reserve_ports(ni, ni->pub.n_used_ports + pod->n_host_ports) != 0) {
        sync_pub(ni);
        return -1;
    }
    if (ni->indexed)
        slot->pods = ni->pub.n_pods;
    if (ni->indexed)
        ni->pod_slots[ni->pub.n_pods] = slot;
    ni->pods[ni->pub.n_pods++] = pod;
    if (aff) {
        if (ni->indexed) {
            slot->aff = ni->pub.n_pods_with_affinity;
            ni->aff_slots[ni->pub.n_pods_with_affinity] = slot;
        }
        ni->aff[ni->pub.n_pods_with_affinity++] = pod;
    }
    if (anti) {
        uint32_t k = ni->pub.n_pods_with_required_anti_affinity++;
        if (ni->indexed) {
            slot->anti = k;
            ni->anti_slots[k] = slot;
        }
        ni->anti[k] = pod;
    }
    for (i = 0; i < pod->n_host_ports; i++)
        ni->ports[ni->pub.n_used_ports++] = &pod->host_ports[i];
    account(ni, pod, 1);
    sync_pub(ni);
    ni->pub.generation = ks_generation_next();
    return 0;
}

static int same_pod(const ks_pod_t *a, const ks_pod_t *b)
{
    return a == b || a->uid == b->uid || strcmp(a->uid, b->uid) == 0;
}

static int find_pod(const ks_pod_t *const *items, uint32_t n,
                    const ks_pod_t *pod)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (same_pod(items[i], pod))
            return (int)i;
    return -1;
}

/* Swap the last entry into `at` and shrink. */
static void list_remove_at(const ks_pod_t **items, ks_pod_slot_t **slots,
                           uint32_t *n, uint32_t at, int which)
{
    uint32_t last = *n - 1;
    if (at != last) {
        items[at] = items[last];
        if (slots != NULL) {
            slots[at] = slots[last];
            if (which == 0)
                slots[at]->pods = at;
            else if (which == 1)
                slots[at]->aff = at;
            else
                slots[at]->anti = at;
        }
    }
    *n = last;
}

int ks_ni_remove_pod(ks_ni_t *ni, const ks_pod_t *pod, ks_pod_slot_t *slot)
{
    int at, aff, anti;
    uint32_t i;
    const ks_pod_t *stored;

    if (ni->indexed) {
        if (slot == NULL || slot->pods >= ni->pub.n_pods ||
            !same_pod(ni->pods[slot->pods], pod))
            return -1;
        at = (int)slot->pods;
    } else {
        at = find_pod(ni->pods, ni->pub.n_pods, pod);
        if (at < 0)
            return -1;
    }
    stored = ni->pods[at]; /* the object whose ports are listed */
    aff = ks_pod_has_affinity(stored);
    anti = ks_pod_has_required_anti_affinity(stored);
    list_remove_at(ni->pods, ni->indexed ? ni->pod_slots : NULL,
                   &ni->pub.n_pods, (uint32_t)at, 0);
    if (aff) {
        int k = ni->indexed ? (int)slot->aff
                            : find_pod(ni->aff, ni->pub.n_pods_with_affinity,
                                       stored);
        if (k >= 0)
            list_remove_at(ni->aff, ni->indexed ? ni->aff_slots : NULL,
                           &ni->pub.n_pods_with_affinity, (uint32_t)k, 1);
    }
    if (anti) {
        int k = ni->indexed
                    ? (int)slot->anti
                    : find_pod(ni->anti,
                               ni->pub.n_pods_with_required_anti_affinity,
                               stored);
        if (k >= 0)
            list_remove_at(ni->anti, ni->indexed ? ni->anti_slots : NULL,
                           &ni->pub.n_pods_with_required_anti_affinity,
                           (uint32_t)k, 2);
    }
    for (i = 0; i < stored->n_host_ports; i++) {
        const ks_container_port_t *p = &stored->host_ports[i];
        uint32_t j = ni->pub.n_used_ports;
        while (j > 0 && ni->ports[j - 1] != p)
            j--;
        if (j > 0) {
            ni->ports[j - 1] = ni->ports[ni->pub.n_used_ports - 1];
            ni->pub.n_used_ports--;
        }
    }
    account(ni, stored, -1);
    sync_pub(ni);
    ni->pub.generation = ks_generation_next();
    return 0;
}

int ks_ni_copy(ks_ni_t *dst, const ks_node_info_t *src)
{
    if (reserve_list(&dst->pods, NULL, &dst->cap_pods, src->n_pods, 0) ||
        reserve_list(&dst->aff, NULL, &dst->cap_aff,
                     src->n_pods_with_affinity, 0) ||
        reserve_list(&dst->anti, NULL, &dst->cap_anti,
                     src->n_pods_with_required_anti_affinity, 0) ||
        reserve_ports(dst, src->n_used_ports)) {
        sync_pub(dst);
        return -1;
    }
    if (src->n_pods)
        memcpy((void *)dst->pods, src->pods, src->n_pods * sizeof(*dst->pods));
    if (src->n_pods_with_affinity)
        memcpy((void *)dst->aff, src->pods_with_affinity,
               src->n_pods_with_affinity * sizeof(*dst->aff));
    if (src->n_pods_with_required_anti_affinity)
        memcpy((void *)dst->anti, src->pods_with_required_anti_affinity,
               src->n_pods_with_required_anti_affinity * sizeof(*dst->anti));
    if (src->n_used_ports)
        memcpy((void *)dst->ports, src->used_ports,
               src->n_used_ports * sizeof(*dst->ports));
    dst->pub = *src;
    dst->pub.snapshot_pos = 0; /* a copy is no snapshot entry (the
                                * snapshot sets its own entries') */
    dst->indexed = 0;
    sync_pub(dst);
    return 0;
}

/* --- standalone clones (public API) ---------------------------------------- */

ks_node_info_t *ks_node_info_clone(const ks_node_info_t *src)
{
    ks_ni_t *ni = malloc(sizeof(*ni));
    if (ni == NULL)
        return NULL;
    ks_ni_init(ni, 0);
    if (ks_ni_copy(ni, src) != 0) {
        ks_ni_destroy(ni);
        free(ni);
        return NULL;
    }
    return &ni->pub;
}

int ks_node_info_refill(ks_node_info_t *dst, const ks_node_info_t *src)
{
    return ks_ni_copy((ks_ni_t *)(void *)dst, src);
}

void ks_node_info_free(ks_node_info_t *pub)
{
    ks_ni_t *ni = (ks_ni_t *)(void *)pub;
    if (ni == NULL)
        return;
    ks_ni_destroy(ni);
    free(ni);
}

void ks_node_info_add_pod(ks_node_info_t *pub, const ks_pod_t *pod)
{
    if (ks_ni_add_pod((ks_ni_t *)(void *)pub, pod, NULL) != 0) {
        fprintf(stderr, "ksched: out of memory adding a pod to a NodeInfo\n");
        abort();
    }
}

int ks_node_info_remove_pod(ks_node_info_t *pub, const ks_pod_t *pod)
{
    return ks_ni_remove_pod((ks_ni_t *)(void *)pub, pod, NULL);
}
