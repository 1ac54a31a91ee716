/*
 * The nominator (upstream's PodNominator): pods that preemption nominated
 * to a node, so that Filter counts them on that node
 * (RunFilterPluginsWithNominatedPods) until they bind or lose the
 * nomination.
 *
 * The nominations are an array kept sorted by the (interned) node name's
 * address, so that Filter, which asks once per node, finds a node's
 * nominated pods by binary search. The scheduler owns the array; the pods
 * are the queue's (an entry goes before its pod is freed).
 * Loop thread only (Filter workers read the array while the loop waits).
 */
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "grow.h"
#include "scheduler_impl.h"

static size_t nominee_lower_bound(const ks_scheduler_t *s, const char *node)
{
    size_t lo = 0, hi = s->n_noms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)s->noms[mid].node < (uintptr_t)node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ks_sched_nominate(ks_scheduler_t *s, const ks_pod_t *pod,
                      const char *node)
{
    ks_intern_t *tab = ks_intern_global();
    const char *in = node && node[0] ? ks_intern_str(tab, node)
                                     : ks_intern_empty(tab);
    size_t i, at;
    if (in == NULL)
        return KS_ENOMEM;
    for (i = 0; i < s->n_noms; i++)
        if (s->noms[i].pod->uid == pod->uid)
            break;
    /* A new entry needs room: make it before anything changes. */
    if (in[0] != '\0' && i == s->n_noms) {
        nominee_t *noms = ks_fw_grow(s->noms, &s->cap_noms, s->n_noms + 1,
                                     sizeof *noms, 16);
        if (noms == NULL)
            return KS_ENOMEM;
        s->noms = noms;
    }
    if (i < s->n_noms) {
        memmove(&s->noms[i], &s->noms[i + 1],
                (s->n_noms - i - 1) * sizeof *s->noms);
        s->n_noms--;
    }
    ((ks_pod_t *)pod)->nominated_node_name = in;
    if (in[0] != '\0') {
        at = nominee_lower_bound(s, in);
        memmove(&s->noms[at + 1], &s->noms[at],
                (s->n_noms - at) * sizeof *s->noms);
        s->noms[at].pod = pod;
        s->noms[at].node = in;
        s->n_noms++;
    }
    s->env.n_nominated = (uint32_t)s->n_noms;
    return 0;
}

/* `node` must be interned (the ops contract; the host API interns). */
uint32_t ks_sched_ops_nominated_pods(ks_fw_env_t *e, const char *node,
                                     const ks_pod_t **out, uint32_t cap)
{
    ks_scheduler_t *s = e->ud;
    uint32_t n = 0;
    size_t i;
    if (s->n_noms == 0)
        return 0;
    for (i = nominee_lower_bound(s, node);
         i < s->n_noms && s->noms[i].node == node; i++) {
        if (n < cap)
            out[n] = s->noms[i].pod;
        n++;
    }
    return n;
}

/* A plugin (preemption) nominates a pod or clears its nomination; the
 * cluster writer hears of it. -1 when out of memory (nothing changed). */
int ks_sched_ops_set_nominated(ks_fw_env_t *e, const ks_pod_t *pod,
                               const char *node)
{
    ks_scheduler_t *s = e->ud;
    if (ks_sched_nominate(s, pod, node) != 0)
        return -1;
    if (s->opts.writer.nominate)
        s->opts.writer.nominate(s->opts.writer.ud, pod, node ? node : "");
    return 0;
}
