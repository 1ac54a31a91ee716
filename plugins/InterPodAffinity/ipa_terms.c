/*
 * Matching a pod against a PodAffinityTerm (upstream AffinityTerm.Matches,
 * with the incoming pod's namespaceSelector resolved against the labels of
 * the candidate pod's namespace).
 */
#include "ipa.h"

static int ipa_term_namespace_matches(const ipa_plugin_t *pl,
                                      const ks_pod_affinity_term_t *t,
                                      const char *owner_ns,
                                      const char *target_ns,
                                      const ks_labels_t *target_ns_labels)
{
    const ks_label_selector_t *sel = t->namespace_selector;
    ks_labels_t labels;
    uint32_t i;

    /* Neither namespaces nor a selector: the owner's own namespace. */
    if (t->n_namespaces == 0 && sel == NULL)
        return target_ns == owner_ns;
    for (i = 0; i < t->n_namespaces; i++)
        if (t->namespaces[i] == target_ns)
            return 1;
    if (sel == NULL)
        return 0;
    if (sel->n == 0) /* an empty selector selects every namespace */
        return 1;
    if (target_ns_labels != NULL)
        return ks_selector_matches_interned(sel, target_ns_labels);
    labels = pl->api->namespace_labels(pl->h, target_ns);
    return ks_selector_matches_interned(sel, &labels);
}

int ipa_term_matches(const ipa_plugin_t *pl, const ks_pod_affinity_term_t *t,
                     const char *owner_ns, const ks_pod_t *target,
                     const ks_labels_t *target_ns_labels)
{
    /* The label check first: it needs no host call. */
    if (!ks_selector_matches_interned(t->label_selector, &target->labels))
        return 0;
    return ipa_term_namespace_matches(pl, t, owner_ns, target->ns,
                                      target_ns_labels);
}

int ipa_matches_all_terms(const ipa_plugin_t *pl,
                          const ks_pod_affinity_term_t *terms, uint32_t n,
                          const char *owner_ns, const ks_pod_t *target,
                          const ks_labels_t *target_ns_labels)
{
    uint32_t i;
    if (n == 0)
        return 0;
    for (i = 0; i < n; i++)
        if (!ipa_term_matches(pl, &terms[i], owner_ns, target,
                              target_ns_labels))
            return 0;
    return 1;
}

int ipa_count_update(ks_tpmap_t *m, const ks_node_t *node, const char *key,
                     int64_t delta)
{
    const char *value = ks_labels_get_interned(&node->labels, key);
    if (value == NULL)
        return 0;
    return ks_tpmap_add(m, key, value, delta, NULL) < 0 ? -1 : 0;
}
