/* Per-node record of the extenders' answers in one cycle (ext_trace.h). */
#include "ext_trace.h"

#include <stdlib.h>
#include <string.h>

static void ext_clear(ks_ext_trace_ext_t *e, uint32_t n_nodes)
{
    uint32_t i;
    if (e->reason)
        for (i = 0; i < n_nodes; i++)
            free(e->reason[i]);
    free(e->reason);
    free(e->verdict);
    free(e->prio);
    free(e->score);
    free(e->filter_error);
    free(e->prioritize_error);
    memset(e, 0, sizeof *e);
}

void ks_ext_trace_free(ks_ext_trace_t *t)
{
    size_t k;
    for (k = 0; k < t->n_ext; k++)
        ext_clear(&t->ext[k], t->n_nodes);
    free(t->ext);
    memset(t, 0, sizeof *t);
}

void ks_ext_trace_stop(ks_ext_trace_t *t)
{
    t->active = 0;
}

int ks_ext_trace_begin(ks_ext_trace_t *t, const ks_snapshot_t *snap,
                       const ks_extender_config_t *ex, size_t n_ext)
{
    uint32_t n = ks_snapshot_num_nodes(snap);
    size_t k;
    ks_ext_trace_free(t);
    if (n_ext == 0)
        return 0;
    t->ext = calloc(n_ext, sizeof *t->ext);
    if (t->ext == NULL)
        return -1;
    t->n_ext = n_ext;
    t->n_nodes = n;
    for (k = 0; k < n_ext; k++) {
        ks_ext_trace_ext_t *e = &t->ext[k];
        e->cfg = &ex[k];
        e->verdict = calloc(n + 1, 1);
        e->prio = calloc(n + 1, 1);
        e->reason = calloc(n + 1, sizeof *e->reason);
        e->score = calloc(n + 1, sizeof *e->score);
        if (!e->verdict || !e->prio || !e->reason || !e->score) {
            ks_ext_trace_free(t);
            return -1;
        }
    }
    t->snap = snap;
    t->active = 1;
    return 0;
}

/* The node's position, or UINT32_MAX when not traced. */
static uint32_t at(const ks_ext_trace_t *t, size_t k, const char *node)
{
    uint32_t i;
    if (!t->active || k >= t->n_ext || node == NULL)
        return UINT32_MAX;
    i = ks_snapshot_index(t->snap, node);
    return i < t->n_nodes ? i : UINT32_MAX;
}

static void set_verdict(ks_ext_trace_t *t, size_t k, uint32_t i,
                        ks_ext_verdict_t v, const char *reason)
{
    ks_ext_trace_ext_t *e = &t->ext[k];
    free(e->reason[i]);
    e->reason[i] = reason ? strdup(reason) : NULL; /* NULL: printed as "" */
    e->verdict[i] = (uint8_t)v;
}

void ks_ext_trace_filter_sent(ks_ext_trace_t *t, size_t k,
                              const ks_node_info_t *const *nodes, uint32_t n)
{
    uint32_t j, i;
    for (j = 0; j < n; j++)
        if ((i = at(t, k, nodes[j]->node->name)) != UINT32_MAX)
            set_verdict(t, k, i, KS_EXT_SENT, NULL);
}

void ks_ext_trace_filter_passed(ks_ext_trace_t *t, size_t k, const char *node)
{
    uint32_t i = at(t, k, node);
    if (i != UINT32_MAX)
        set_verdict(t, k, i, KS_EXT_PASSED, NULL);
}

void ks_ext_trace_filter_failed(ks_ext_trace_t *t, size_t k, const char *node,
                                int unresolvable, const char *reason)
{
    uint32_t i = at(t, k, node);
    if (i != UINT32_MAX)
        set_verdict(t, k, i,
                    unresolvable ? KS_EXT_UNRESOLVABLE : KS_EXT_FAILED,
                    reason);
}

void ks_ext_trace_filter_error(ks_ext_trace_t *t, size_t k,
                               const ks_node_info_t *const *nodes, uint32_t n,
                               const char *error)
{
    uint32_t j, i;
    if (!t->active || k >= t->n_ext)
        return;
    free(t->ext[k].filter_error);
    t->ext[k].filter_error = strdup(error ? error : "");
    for (j = 0; j < n; j++)
        if ((i = at(t, k, nodes[j]->node->name)) != UINT32_MAX)
            set_verdict(t, k, i, KS_EXT_ERROR, NULL);
}

void ks_ext_trace_prioritize_sent(ks_ext_trace_t *t, size_t k,
                                  const ks_node_info_t *const *nodes,
                                  uint32_t n)
{
    uint32_t j, i;
    for (j = 0; j < n; j++)
        if ((i = at(t, k, nodes[j]->node->name)) != UINT32_MAX) {
            t->ext[k].prio[i] = 1;
            t->ext[k].score[i] = 0;
        }
}

void ks_ext_trace_score(ks_ext_trace_t *t, size_t k, const char *node,
                        int64_t score)
{
    uint32_t i = at(t, k, node);
    if (i != UINT32_MAX && t->ext[k].prio[i] != 0) {
        t->ext[k].prio[i] = 2;
        t->ext[k].score[i] = score;
    }
}

void ks_ext_trace_prioritize_error(ks_ext_trace_t *t, size_t k,
                                   const char *error)
{
    uint32_t i;
    if (!t->active || k >= t->n_ext)
        return;
    free(t->ext[k].prioritize_error);
    t->ext[k].prioritize_error = strdup(error ? error : "");
    for (i = 0; i < t->n_nodes; i++)
        if (t->ext[k].prio[i] != 0)
            t->ext[k].prio[i] = 3;
}
