/* One pod's real placement against ksched's decision (compare.h). */
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "cluster/cache.h"
#include "explain.h"
#include "framework/framework.h"
#include "framework/status.h"

static const char *const result_names[KS_SHADOW_N_RESULTS] = {
    "same", "tied", "different", "unschedulable", "placed", "error"};

const char *ks_shadow_result_name(ks_shadow_result_t res)
{
    return (unsigned)res < KS_SHADOW_N_RESULTS ? result_names[res]
                                                : "unknown";
}

int ks_shadow_result_differs(ks_shadow_result_t res)
{
    return res != KS_SHADOW_SAME && res != KS_SHADOW_TIED;
}

void ks_shadow_decision_free(ks_shadow_decision_t *d)
{
    unsigned k;
    free(d->ns);
    free(d->name);
    free(d->profile);
    free(d->real_node);
    free(d->ksched_node);
    free(d->reason);
    for (k = 0; k < d->n_deciding; k++)
        free(d->deciding[k]);
    free(d->explain_real);
    free(d->explain_ksched);
    free(d->message);
    memset(d, 0, sizeof *d);
}

/* strdup of s, "" for NULL; sets *oom on failure. */
static char *dup_or_empty(const char *s, int *oom)
{
    char *c = strdup(s ? s : "");
    if (c == NULL)
        *oom = 1;
    return c;
}

/* The explain lines of node `name` ("" when not in the snapshot). */
static char *explain_of(const ks_cycle_result_t *r, const char *name,
                        int *oom)
{
    ks_buf_t b = {0};
    uint32_t i = ks_explain_node_index(r, name);
    char *s;
    if (i == UINT32_MAX)
        return dup_or_empty("", oom);
    ks_explain_node(&b, r, i);
    if (b.oom || b.data == NULL) {
        ks_buf_free(&b);
        return dup_or_empty("", oom);
    }
    s = ks_buf_steal(&b, NULL);
    if (s == NULL)
        *oom = 1;
    return s;
}

static void add_deciding(ks_shadow_decision_t *d, const char *plugin,
                         int64_t gap, int *oom)
{
    unsigned k, at;
    char *c;
    /* keep the largest parts, largest first */
    for (at = 0; at < d->n_deciding && d->deciding_gap[at] >= gap; at++)
        ;
    if (at == KS_SHADOW_MAX_DECIDING)
        return;
    if ((c = strdup(plugin)) == NULL) {
        *oom = 1;
        return;
    }
    if (d->n_deciding == KS_SHADOW_MAX_DECIDING)
        free(d->deciding[--d->n_deciding]);
    for (k = d->n_deciding; k > at; k--) {
        d->deciding[k] = d->deciding[k - 1];
        d->deciding_gap[k] = d->deciding_gap[k - 1];
    }
    d->deciding[at] = c;
    d->deciding_gap[at] = gap;
    d->n_deciding++;
}

/* Node i failed the filters: the plugin that rejected it and why. */
static void rejected(ks_shadow_decision_t *d, const ks_cycle_result_t *r,
                     uint32_t i, int *oom)
{
    const struct ks_node_status_map *m = r->statuses;
    char msg[2048], line[2600];
    const char *plugin = "PreFilter";
    if (i == UINT32_MAX) {
        snprintf(line, sizeof line, "ksched does not know node %s",
                 d->real_node);
        d->reason = dup_or_empty(line, oom);
        return;
    }
    if (m->set[i]) {
        ks_status_message(&m->st[i], msg, sizeof msg);
        if (m->st[i].plugin)
            plugin = m->st[i].plugin;
        else if (r->ext_trace)
            plugin = "extender";
    } else {
        snprintf(msg, sizeof msg, "not evaluated");
        plugin = "";
    }
    snprintf(line, sizeof line, "ksched would reject %s: %s", d->real_node,
             msg);
    d->reason = dup_or_empty(line, oom);
    if (plugin[0])
        add_deciding(d, plugin, 0, oom);
}

/* Both nodes pass: their totals, and the Score plugins that prefer
 * ksched's node. */
static void scored(ks_shadow_decision_t *d, const ks_cycle_result_t *r,
                   uint32_t kr, uint32_t ks, int *oom)
{
    size_t np = r->fw->n_points[KS_EP_SCORE], p;
    char line[1024];
    d->has_scores = 1;
    d->real_feasible = 1;
    d->best = r->totals[ks];
    d->real_total = r->totals[kr];
    d->gap = d->best - d->real_total;
    if (d->gap <= 0) {
        d->result = KS_SHADOW_TIED;
        snprintf(line, sizeof line, "%s and %s both score %lld",
                 d->real_node, d->ksched_node, (long long)d->best);
        d->reason = dup_or_empty(line, oom);
        return;
    }
    snprintf(line, sizeof line, "%s scores %lld, %s scores %lld",
             d->real_node, (long long)d->real_total, d->ksched_node,
             (long long)d->best);
    d->reason = dup_or_empty(line, oom);
    for (p = 0; r->scored && r->scores && p < np; p++) {
        int64_t g;
        if (r->score_skipped && r->score_skipped[p])
            continue;
        g = ks_cycle_result_score(r, p, ks) -
            ks_cycle_result_score(r, p, kr);
        if (g > 0)
            add_deciding(d, r->fw->points[KS_EP_SCORE][p].inst->name, g,
                         oom);
    }
    if (d->n_deciding == 0) /* only the extenders' parts differ */
        add_deciding(d, "extender", d->gap, oom);
}

int ks_shadow_compare(const ks_cycle_result_t *r, const char *real_node,
                      ks_shadow_decision_t *d)
{
    const char *sel = r->selected;
    uint32_t ir, is, kr, ks;
    int oom = 0;
    memset(d, 0, sizeof *d);
    if (real_node == NULL)
        real_node = "";
    d->ns = dup_or_empty(r->pod->ns, &oom);
    d->name = dup_or_empty(r->pod->name, &oom);
    d->profile = dup_or_empty(r->fw ? r->fw->profile_name : "", &oom);
    d->real_node = dup_or_empty(real_node, &oom);
    d->ksched_node = dup_or_empty(sel, &oom);
    d->message = dup_or_empty(sel ? NULL : r->message, &oom);
    d->explain_real = explain_of(r, real_node, &oom);
    d->explain_ksched = explain_of(r, sel, &oom);
    if (oom)
        goto oom;
    ir = ks_explain_node_index(r, real_node);
    is = ks_explain_node_index(r, sel);
    kr = ir == UINT32_MAX ? UINT32_MAX : ks_explain_feasible_index(r, ir);
    ks = is == UINT32_MAX ? UINT32_MAX : ks_explain_feasible_index(r, is);
    if (r->error) {
        d->result = KS_SHADOW_ERROR;
        d->reason = dup_or_empty(r->message, &oom);
    } else if (real_node[0] == '\0') {
        d->result = sel ? KS_SHADOW_PLACED : KS_SHADOW_SAME;
        d->reason = dup_or_empty(sel ? "ksched would place a pod the real "
                                       "scheduler could not"
                                     : "",
                                 &oom);
    } else if (sel == NULL) {
        d->result = KS_SHADOW_UNSCHEDULABLE;
        rejected(d, r, ir, &oom);
    } else if (strcmp(sel, real_node) == 0) {
        d->result = KS_SHADOW_SAME;
        d->reason = dup_or_empty("", &oom);
        if (ks != UINT32_MAX && r->totals) {
            d->has_scores = d->real_feasible = 1;
            d->best = d->real_total = r->totals[ks];
        }
    } else if (kr == UINT32_MAX) {
        d->result = KS_SHADOW_DIFFERENT;
        rejected(d, r, ir, &oom);
    } else if (ks != UINT32_MAX && r->totals) {
        d->result = KS_SHADOW_DIFFERENT;
        scored(d, r, kr, ks, &oom);
    } else {
        /* not scored (a single feasible node without full evaluation) */
        d->result = KS_SHADOW_DIFFERENT;
        d->reason = dup_or_empty("ksched did not score the real node", &oom);
    }
    if (!oom)
        return 0;
oom:
    ks_shadow_decision_free(d);
    return KS_ENOMEM;
}
