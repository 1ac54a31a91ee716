/* --explain's text for one scheduling cycle (explain.h). */
#include "explain.h"

#include <stddef.h>
#include <stdint.h>

#include "cluster/cache.h"
#include "extender/ext_trace.h"
#include "extender/extender.h"
#include "framework/framework.h"
#include "framework/status.h"

/* The extender that rejected node i (FailedNodes or
 * FailedAndUnresolvableNodes; the last one asked when several did), or
 * NULL. */
static const ks_ext_trace_ext_t *ext_rejecter(const ks_ext_trace_t *t,
                                              uint32_t i)
{
    size_t k;
    if (t == NULL || i >= t->n_nodes)
        return NULL;
    for (k = t->n_ext; k-- > 0;)
        if (t->ext[k].verdict[i] == KS_EXT_FAILED ||
            t->ext[k].verdict[i] == KS_EXT_UNRESOLVABLE)
            return &t->ext[k];
    return NULL;
}

/* An extender's prioritize contribution to node i's total: score x weight
 * x MaxNodeScore / MaxExtenderPriority (as schedule_pod.c adds it). */
static int64_t ext_contribution(const ks_ext_trace_ext_t *e, uint32_t i)
{
    return e->score[i] * e->cfg->weight *
           (KS_EXT_MAX_NODE_SCORE / KS_EXT_MAX_PRIORITY);
}

/* One line per extender asked about node i: its filter verdict and its
 * prioritize score (or the calls' errors). */
static void explain_extenders(ks_buf_t *b, const ks_ext_trace_t *t,
                              uint32_t i)
{
    size_t k;
    for (k = 0; t && i < t->n_nodes && k < t->n_ext; k++) {
        const ks_ext_trace_ext_t *e = &t->ext[k];
        const char *sep = "";
        if (e->verdict[i] == KS_EXT_NOT_SENT && e->prio[i] == 0)
            continue;
        ks_buf_printf(b, "    extender %s:", e->cfg->url_prefix);
        switch (e->verdict[i]) {
        case KS_EXT_SENT:
            ks_buf_puts(b, " filter dropped the node without a reason");
            break;
        case KS_EXT_PASSED:
            ks_buf_puts(b, " filter passed");
            break;
        case KS_EXT_FAILED:
            ks_buf_printf(b, " filter failed: %s",
                          e->reason[i] ? e->reason[i] : "");
            break;
        case KS_EXT_UNRESOLVABLE:
            ks_buf_printf(b, " filter unresolvable: %s",
                          e->reason[i] ? e->reason[i] : "");
            break;
        case KS_EXT_ERROR:
            ks_buf_printf(b, " filter error%s: %s",
                          e->cfg->ignorable ? " (ignorable, skipped)" : "",
                          e->filter_error ? e->filter_error : "");
            break;
        default:
            break;
        }
        if (e->verdict[i] != KS_EXT_NOT_SENT)
            sep = ";";
        if (e->prio[i] == 2)
            ks_buf_printf(b, "%s prioritize score %lld x weight %lld x %d = "
                             "%lld",
                          sep, (long long)e->score[i],
                          (long long)e->cfg->weight,
                          KS_EXT_MAX_NODE_SCORE / KS_EXT_MAX_PRIORITY,
                          (long long)ext_contribution(e, i));
        else if (e->prio[i] == 1)
            ks_buf_printf(b, "%s prioritize gave the node no score", sep);
        else if (e->prio[i] == 3)
            ks_buf_printf(b, "%s prioritize error (ignored): %s", sep,
                          e->prioritize_error ? e->prioritize_error : "");
        ks_buf_puts(b, "\n");
    }
}

uint32_t ks_explain_feasible_index(const ks_cycle_result_t *r, uint32_t i)
{
    const ks_node_info_t *ni;
    uint32_t k;
    if (r->statuses == NULL || i >= r->statuses->n)
        return UINT32_MAX;
    ni = ks_snapshot_node_at(r->statuses->snap, i);
    for (k = 0; k < r->n_feasible; k++)
        if (r->feasible[k] == ni)
            return k;
    return UINT32_MAX;
}

uint32_t ks_explain_node_index(const ks_cycle_result_t *r, const char *name)
{
    uint32_t i;
    if (r->statuses == NULL || name == NULL)
        return UINT32_MAX;
    i = ks_snapshot_index(r->statuses->snap, name);
    return i < r->statuses->n ? i : UINT32_MAX;
}

/* A feasible node's line: its total and every Score plugin's part. */
static void explain_feasible(ks_buf_t *b, const ks_cycle_result_t *r,
                             uint32_t i, uint32_t k, const char *name)
{
    const ks_ext_trace_t *t = r->ext_trace;
    size_t np = r->fw->n_points[KS_EP_SCORE], p, k2;
    int ext_scored = 0;
    for (k2 = 0; t && i < t->n_nodes && k2 < t->n_ext; k2++)
        if (t->ext[k2].prio[i] == 2)
            ext_scored = 1;
    ks_buf_printf(b, "  %-24s passes filters", name);
    if ((r->scored || ext_scored) && r->totals) {
        const char *plus = "";
        ks_buf_printf(b, "; score %lld =", (long long)r->totals[k]);
        for (p = 0; r->scored && p < np; p++, plus = " +") {
            if (r->score_skipped && r->score_skipped[p]) {
                /* PreScore answered Skip: the plugin adds nothing */
                ks_buf_printf(b, "%s %s skipped", plus,
                              r->fw->points[KS_EP_SCORE][p].inst->name);
                continue;
            }
            ks_buf_printf(b, "%s %s %lld", plus,
                          r->fw->points[KS_EP_SCORE][p].inst->name,
                          (long long)ks_cycle_result_score(r, p, k));
        }
        for (k2 = 0; ext_scored && k2 < t->n_ext; k2++)
            if (t->ext[k2].prio[i] == 2) {
                ks_buf_printf(b, "%s extender %s %lld", plus,
                              t->ext[k2].cfg->url_prefix,
                              (long long)ext_contribution(&t->ext[k2], i));
                plus = " +";
            }
    }
    ks_buf_puts(b, "\n");
}

void ks_explain_node(ks_buf_t *b, const ks_cycle_result_t *r, uint32_t i)
{
    const struct ks_node_status_map *m = r->statuses;
    const ks_ext_trace_t *t = r->ext_trace;
    const ks_node_info_t *ni;
    const ks_ext_trace_ext_t *rej;
    char msg[2048];
    uint32_t k;
    if (m == NULL || i >= m->n)
        return;
    ni = ks_snapshot_node_at(m->snap, i);
    if ((k = ks_explain_feasible_index(r, i)) != UINT32_MAX) {
        explain_feasible(b, r, i, k, ni->node->name);
    } else if (m->set[i] && m->st[i].plugin == NULL &&
               (rej = ext_rejecter(t, i)) != NULL) {
        ks_buf_printf(b, "  %-24s rejected by extender %s: %s\n",
                      ni->node->name, rej->cfg->url_prefix,
                      ks_status_message(&m->st[i], msg, sizeof msg));
    } else if (m->set[i]) {
        ks_buf_printf(b, "  %-24s rejected by %s: %s\n", ni->node->name,
                      m->st[i].plugin ? m->st[i].plugin : "PreFilter",
                      ks_status_message(&m->st[i], msg, sizeof msg));
    } else {
        /* Sent to an extender: it passed the Filter plugins; then
         * dropped from an answer, or the cycle ended on an extender's
         * error. */
        size_t kk, sent = SIZE_MAX;
        int asked = 0;
        for (kk = 0; t && i < t->n_nodes && kk < t->n_ext; kk++) {
            if (t->ext[kk].verdict[i] == KS_EXT_SENT && sent == SIZE_MAX)
                sent = kk;
            if (t->ext[kk].verdict[i] != KS_EXT_NOT_SENT)
                asked = 1;
        }
        if (sent != SIZE_MAX)
            ks_buf_printf(b, "  %-24s rejected by extender %s: not in its "
                             "answer, no reason given (counted in the "
                             "FitError's total without a reason; not tried "
                             "by preemption)\n",
                          ni->node->name, t->ext[sent].cfg->url_prefix);
        else if (asked)
            ks_buf_printf(b, "  %-24s passes the Filter plugins\n",
                          ni->node->name);
        else
            ks_buf_printf(b, "  %-24s not evaluated\n", ni->node->name);
    }
    explain_extenders(b, t, i);
}

void ks_explain_nodes(ks_buf_t *b, const ks_cycle_result_t *r)
{
    uint32_t i;
    for (i = 0; r->statuses && i < r->statuses->n; i++)
        ks_explain_node(b, r, i);
    if (r->selected)
        ks_buf_printf(b, "  selected: %s\n", r->selected);
    if (r->message)
        ks_buf_printf(b, "  %s\n", r->message);
    if (r->nominated)
        ks_buf_printf(b, "  nominated: %s\n", r->nominated);
}
