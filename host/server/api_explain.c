/* POST /debug/explain/NS/NAME (console.h): a what-if scheduling cycle for
 * one pod on the current cluster, every node evaluated and scored
 * (percentageOfNodesToScore 100), with nothing assumed, reserved, bound,
 * nominated or preempted.
 *
 * It runs on the loop, between cycles, on a scheduler of its own made for
 * the request (no writer: a plugin's API request is refused; no
 * PostFilter) over the same cache and generation, and is freed at once;
 * a plugin's call deadline (Fault isolation) bounds each call. A bucket
 * of KS_EXPLAIN_BURST requests refilled at KS_EXPLAIN_PER_SECOND limits
 * a flood (429 with Retry-After). */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "base/intern.h"
#include "extender/ext_trace.h"
#include "extender/extender.h"
#include "framework/framework.h"
#include "framework/status.h"
#include "server.h"
#include "shadow/explain.h"

typedef struct explain_ctx {
    json_t *doc;
    int bound;
    double t0; /* when the cycle began (monotonic s) */
} explain_ctx_t;

static const char *verdict_name(int v)
{
    switch (v) {
    case KS_EXT_SENT:
        return "dropped without a reason";
    case KS_EXT_PASSED:
        return "passed";
    case KS_EXT_FAILED:
        return "failed";
    case KS_EXT_UNRESOLVABLE:
        return "unresolvable";
    case KS_EXT_ERROR:
        return "error";
    default:
        return "not asked";
    }
}

/* Node i's answers from each extender, or NULL without extenders. */
static json_t *extenders_json(const ks_ext_trace_t *t, uint32_t i)
{
    json_t *a;
    size_t k;
    if (t == NULL || t->n_ext == 0 || i >= t->n_nodes)
        return NULL;
    a = json_array();
    for (k = 0; a && k < t->n_ext; k++) {
        const ks_ext_trace_ext_t *e = &t->ext[k];
        json_t *o = json_pack("{s:s, s:s}", "extender", e->cfg->url_prefix,
                              "filter", verdict_name(e->verdict[i]));
        if (o && e->reason && e->reason[i])
            json_object_set_new(o, "reason",
                                ks_console_json_str(e->reason[i]));
        if (o && e->prio[i] == 2)
            json_object_set_new(
                o, "score",
                json_integer((json_int_t)(e->score[i] * e->cfg->weight *
                                          (KS_EXT_MAX_NODE_SCORE /
                                           KS_EXT_MAX_PRIORITY))));
        json_array_append_new(a, o);
    }
    return a;
}

/* One row. A feasible node: its Score plugins' weighted scores (aligned
 * with scorePlugins; null: skipped) and the total. A rejected one: who
 * rejected it and why, and where in the Filter list (rejectedAt: the
 * plugins before it passed, those after it did not run; -1 before the
 * Filter plugins ran (PreFilter), the list's length after all of them
 * (an extender)). Compact, since explain answers for every node. */
static json_t *node_row(const ks_cycle_result_t *r, uint32_t i)
{
    const struct ks_node_status_map *m = r->statuses;
    const ks_node_info_t *ni = ks_snapshot_node_at(m->snap, i);
    const ks_ext_trace_t *t = r->ext_trace;
    ks_framework_t *fw = r->fw;
    size_t nf = fw->n_points[KS_EP_FILTER], ns = fw->n_points[KS_EP_SCORE];
    uint32_t k = ks_explain_feasible_index(r, i);
    json_t *row, *ext;
    const char *by = NULL, *why = "not evaluated";
    char msg[2048];
    long at = -1;
    size_t p, e;
    if (k != UINT32_MAX) {
        json_t *scores = json_array();
        for (p = 0; r->scored && scores && p < ns; p++) {
            if (r->score_skipped && r->score_skipped[p])
                json_array_append_new(scores, json_null());
            else
                json_array_append_new(
                    scores,
                    json_integer((json_int_t)ks_cycle_result_score(r, p, k)));
        }
        row = json_pack("{s:s, s:b, s:o}", "name", ni->node->name,
                        "feasible", 1, "scores", scores);
        if (row && r->totals)
            json_object_set_new(row, "total",
                                json_integer((json_int_t)r->totals[k]));
    } else {
        if (m->set[i]) {
            why = ks_status_message(&m->st[i], msg, sizeof msg);
            by = m->st[i].plugin;
            if (by == NULL) {
                /* an extender's (after every Filter plugin), or
                 * PreFilter's without a plugin */
                by = "PreFilter";
                for (e = 0; t && i < t->n_nodes && e < t->n_ext; e++)
                    if (t->ext[e].verdict[i] == KS_EXT_FAILED ||
                        t->ext[e].verdict[i] == KS_EXT_UNRESOLVABLE) {
                        by = t->ext[e].cfg->url_prefix;
                        at = (long)nf;
                    }
            } else {
                for (p = 0; p < nf; p++)
                    if (strcmp(fw->points[KS_EP_FILTER][p].inst->name, by) ==
                        0) {
                        at = (long)p;
                        break;
                    }
            }
        } else {
            /* passed the Filter plugins, then left out of an extender's
             * answer without a reason */
            for (e = 0; t && i < t->n_nodes && e < t->n_ext; e++)
                if (t->ext[e].verdict[i] == KS_EXT_SENT) {
                    by = t->ext[e].cfg->url_prefix;
                    why = "not in the extender's answer, no reason given";
                    at = (long)nf;
                    break;
                }
        }
        row = json_pack("{s:s, s:b, s:o, s:i, s:o}", "name", ni->node->name,
                        "feasible", 0, "rejectedBy", ks_console_json_str(by),
                        "rejectedAt", (int)at, "reason",
                        ks_console_json_str(why));
    }
    if (row && (ext = extenders_json(t, i)) != NULL)
        json_object_set_new(row, "extenders", ext);
    return row;
}

static void on_explained(void *ud, const ks_cycle_result_t *r)
{
    explain_ctx_t *x = ud;
    ks_framework_t *fw = r->fw;
    json_t *fp = json_array(), *sp = json_array(), *nodes = json_array();
    size_t p;
    uint32_t i;
    for (p = 0; fp && p < fw->n_points[KS_EP_FILTER]; p++)
        json_array_append_new(
            fp, json_string(fw->points[KS_EP_FILTER][p].inst->name));
    for (p = 0; sp && p < fw->n_points[KS_EP_SCORE]; p++) {
        const ks_point_entry_t *e = &fw->points[KS_EP_SCORE][p];
        json_array_append_new(
            sp, json_pack("{s:s, s:i, s:b}", "name", e->inst->name, "weight",
                          (int)e->weight, "normalizes",
                          e->inst->d->normalize_score != NULL));
    }
    for (i = 0; nodes && r->statuses && i < r->statuses->n; i++) {
        const ks_node_info_t *ni = ks_snapshot_node_at(r->statuses->snap, i);
        if (ni == NULL || ni->node == NULL)
            continue;
        json_array_append_new(nodes, node_row(r, i));
    }
    x->doc = json_pack(
        "{s:s, s:s, s:s, s:s, s:i, s:i, s:s?, s:o, s:b, s:f, s:o, s:o, "
        "s:o}",
        "kind", "Explain", "namespace", r->pod->ns, "name", r->pod->name,
        "profile", fw->profile_name, "nodesTotal", (int)r->n_nodes,
        "feasible", (int)r->n_feasible, "selected", r->selected, "message",
        ks_console_json_str(r->message), "error", r->error, "seconds",
        ks_server_now() - x->t0, "filterPlugins", fp, "scorePlugins", sp,
        "nodes", nodes);
}

/* The bucket: 1 and a token taken, or 0 when empty. */
static int take_token(ks_console_t *con)
{
    double now = ks_server_now();
    if (con->explain_t > 0) {
        con->explain_tokens += (now - con->explain_t) * KS_EXPLAIN_PER_SECOND;
        if (con->explain_tokens > KS_EXPLAIN_BURST)
            con->explain_tokens = KS_EXPLAIN_BURST;
    }
    con->explain_t = now;
    if (con->explain_tokens < 1)
        return 0;
    con->explain_tokens -= 1;
    return 1;
}

void ks_api_debug_explain(ks_server_t *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req, const char *ns,
                          const char *name)
{
    explain_ctx_t x = {NULL, 0, 0};
    ks_sched_opts_t so;
    ks_scheduler_t *s;
    ks_error_t err;
    const ks_pod_t *found;
    ks_pod_t copy;
    uint64_t gen;
    (void)req;
    if (srv->console == NULL || !take_token(srv->console)) {
        ks_api_status_hdr(c, "Retry-After: 1\r\n", 429, "TooManyRequests",
                          NULL, NULL,
                          "too many explain requests: at most %d at once "
                          "and %g a second",
                          KS_EXPLAIN_BURST, KS_EXPLAIN_PER_SECOND);
        return;
    }
    if (srv->draining) {
        ks_api_status(c, 503, "ServiceUnavailable", NULL, NULL,
                      "the scheduler is shutting down");
        return;
    }
    found = ks_console_find_pod(srv, ns, name, &x.bound);
    if (found == NULL) {
        ks_api_status(c, 404, "NotFound", "pods", name,
                      "pods \"%s\" not found", name);
        return;
    }
    /* A bound pod is explained as if it were pending again (it still
     * counts on its node meanwhile: the answer says so). */
    copy = *found;
    copy.node_name = ks_intern_empty(ks_intern_global());
    memset(&so, 0, sizeof so);
    so.no_post_filter = 1;
    so.borrows_generation = 1; /* lent for the cycle only */
    gen = ks_scheduler_generation(srv->sched)->id;
    s = ks_scheduler_new(ks_scheduler_generation(srv->sched), srv->cache,
                         &so);
    if (s == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    ks_scheduler_set_full_eval(s, copy.ns, copy.name);
    ks_error_init(&err);
    x.t0 = ks_server_now();
    if (ks_scheduler_try(s, &copy, on_explained, &x, &err) != 0) {
        ks_scheduler_free(s);
        json_decref(x.doc);
        ks_api_status(c, 500, "InternalError", NULL, NULL,
                      "explain %s/%s: %s", ns, name, err.msg);
        return;
    }
    ks_scheduler_free(s);
    if (x.doc == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    json_object_set_new(x.doc, "generation", json_integer((json_int_t)gen));
    json_object_set_new(x.doc, "podState",
                        json_string(x.bound ? "bound" : "pending"));
    if (x.bound)
        json_object_set_new(x.doc, "boundNode",
                            json_string(found->node_name));
    if (x.bound)
        json_object_set_new(
            x.doc, "note",
            json_sprintf("the pod is bound to %s; this cycle places it as "
                         "if it were pending now, while it still counts on "
                         "%s",
                         found->node_name, found->node_name));
    ks_api_json(c, 200, x.doc);
}
