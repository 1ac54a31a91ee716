/*
 * Which spread constraints apply to a pod (its own, or the defaults with
 * the owners' merged selector), which nodes take part (node inclusion
 * policies), and counting matching pods on a node.
 */
#include "pts.h"

#include <stdlib.h>
#include <string.h>

static ks_inclusion_policy_t pts_policy(ks_inclusion_policy_t p,
                                        ks_inclusion_policy_t dflt)
{
    return p == KS_POLICY_UNSET ? dflt : p;
}

/* The merged selector of every owner (Service, ReplicaSet, ...) selecting
 * the pod: all their requirements ANDed, as upstream DefaultSelector. */
static int pts_merge_owner_selectors(const pts_plugin_t *pl,
                                     const ks_pod_t *pod, pts_constraints_t *out)
{
    const ks_label_selector_t *stack[16];
    const ks_label_selector_t **sels = stack;
    uint32_t n, total = 0, i, j, k = 0;

    n = pl->api->owner_selectors(pl->h, pod, stack, 16);
    if (n > 16) {
        sels = malloc(n * sizeof *sels);
        if (sels == NULL)
            return -1;
        n = pl->api->owner_selectors(pl->h, pod, sels, n);
    }
    for (i = 0; i < n; i++)
        if (sels[i] != NULL)
            total += sels[i]->n;
    if (total > 0) {
        out->merged_reqs = malloc(total * sizeof *out->merged_reqs);
        if (out->merged_reqs == NULL) {
            if (sels != stack)
                free(sels);
            return -1;
        }
        for (i = 0; i < n; i++)
            for (j = 0; sels[i] != NULL && j < sels[i]->n; j++)
                out->merged_reqs[k++] = sels[i]->reqs[j];
    }
    out->merged.reqs = out->merged_reqs;
    out->merged.n = k;
    if (sels != stack)
        free(sels);
    return 0;
}

int pts_constraints_build(const pts_plugin_t *pl, const ks_pod_t *pod,
                          ks_unsatisfiable_action_t action,
                          pts_constraints_t *out)
{
    uint32_t i, n = 0;

    memset(out, 0, sizeof *out);
    if (pod->n_spread_constraints > 0) {
        for (i = 0; i < pod->n_spread_constraints; i++)
            if (pod->spread_constraints[i].when_unsatisfiable == action)
                n++;
        if (n == 0)
            return 0;
        out->items = calloc(n, sizeof *out->items);
        if (out->items == NULL)
            return -1;
        for (i = 0; i < pod->n_spread_constraints; i++) {
            const ks_topology_spread_constraint_t *s =
                &pod->spread_constraints[i];
            pts_constraint_t *c;
            if (s->when_unsatisfiable != action)
                continue;
            c = &out->items[out->n++];
            c->max_skew = s->max_skew;
            c->topology_key = s->topology_key;
            c->selector = s->label_selector;
            c->min_domains = s->min_domains > 0 ? s->min_domains : 1;
            c->affinity_policy = pts_policy(s->node_affinity_policy,
                                            KS_POLICY_HONOR);
            c->taints_policy = pts_policy(s->node_taints_policy,
                                          KS_POLICY_IGNORE);
        }
    } else {
        for (i = 0; i < pl->n_defaults; i++)
            if (pl->defaults[i].action == action)
                n++;
        if (n == 0)
            return 0;
        if (pts_merge_owner_selectors(pl, pod, out) != 0)
            return -1;
        if (out->merged.n == 0) { /* no owner selects the pod */
            pts_constraints_free(out);
            return 0;
        }
        out->items = calloc(n, sizeof *out->items);
        if (out->items == NULL) {
            pts_constraints_free(out);
            return -1;
        }
        for (i = 0; i < pl->n_defaults; i++) {
            const pts_default_t *d = &pl->defaults[i];
            pts_constraint_t *c;
            if (d->action != action)
                continue;
            c = &out->items[out->n++];
            c->max_skew = d->max_skew;
            c->topology_key = d->topology_key;
            c->selector = &out->merged;
            c->min_domains = d->min_domains > 0 ? d->min_domains : 1;
            c->affinity_policy = pts_policy(d->affinity_policy,
                                            KS_POLICY_HONOR);
            c->taints_policy = pts_policy(d->taints_policy, KS_POLICY_IGNORE);
        }
    }
    for (i = 0; i < out->n; i++)
        out->items[i].self_match =
            ks_selector_matches_interned(out->items[i].selector, &pod->labels);
    return 0;
}

int pts_constraints_copy(pts_constraints_t *dst, const pts_constraints_t *src)
{
    uint32_t i;

    memset(dst, 0, sizeof *dst);
    if (src->n > 0) {
        dst->items = malloc(src->n * sizeof *dst->items);
        if (dst->items == NULL)
            return -1;
        memcpy(dst->items, src->items, src->n * sizeof *dst->items);
        dst->n = src->n;
    }
    if (src->merged.n > 0) {
        dst->merged_reqs = malloc(src->merged.n * sizeof *dst->merged_reqs);
        if (dst->merged_reqs == NULL) {
            pts_constraints_free(dst);
            return -1;
        }
        memcpy(dst->merged_reqs, src->merged_reqs,
               src->merged.n * sizeof *dst->merged_reqs);
    }
    dst->merged.reqs = dst->merged_reqs;
    dst->merged.n = src->merged.n;
    /* default constraints point at the copy's own merged selector */
    for (i = 0; i < dst->n; i++)
        if (dst->items[i].selector == &src->merged)
            dst->items[i].selector = &dst->merged;
    return 0;
}

void pts_constraints_free(pts_constraints_t *c)
{
    free(c->items);
    free(c->merged_reqs);
    memset(c, 0, sizeof *c);
}

int pts_node_has_all_keys(const ks_node_t *node, const pts_constraints_t *c)
{
    uint32_t i;
    for (i = 0; i < c->n; i++)
        if (ks_labels_get_interned(&node->labels, c->items[i].topology_key) == NULL)
            return 0;
    return 1;
}

/* Upstream GetRequiredNodeAffinity(pod).Match(node): nodeSelector and the
 * required node affinity. */
static int pts_node_matches_pod_affinity(const ks_pod_t *pod,
                                         const ks_node_t *node)
{
    const ks_node_affinity_t *na = pod->affinity.node_affinity;
    if (!ks_labels_subset_interned(&pod->node_selector, &node->labels))
        return 0;
    if (na != NULL && na->required != NULL &&
        !ks_node_selector_matches_interned(na->required, node))
        return 0;
    return 1;
}

/* No NoSchedule/NoExecute taint the pod does not tolerate. */
static int pts_node_taints_tolerated(const ks_pod_t *pod, const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < node->n_taints; i++) {
        const ks_taint_t *t = &node->taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE &&
            t->effect != KS_EFFECT_NO_EXECUTE)
            continue;
        if (!ks_tolerations_tolerate(pod->tolerations, pod->n_tolerations, t))
            return 0;
    }
    return 1;
}

int pts_node_included(pts_inclusion_t *memo, const pts_constraint_t *c,
                      const ks_pod_t *pod, const ks_node_t *node)
{
    if (c->affinity_policy == KS_POLICY_HONOR) {
        if (memo->affinity < 0)
            memo->affinity = pts_node_matches_pod_affinity(pod, node);
        if (!memo->affinity)
            return 0;
    }
    if (c->taints_policy == KS_POLICY_HONOR) {
        if (memo->taints < 0)
            memo->taints = pts_node_taints_tolerated(pod, node);
        if (!memo->taints)
            return 0;
    }
    return 1;
}
