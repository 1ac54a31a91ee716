/*
 * The scheduling cycle's scheduler extenders (scheduler_impl.h): the HTTP
 * client they share, a cycle suspended while their calls run, and
 * upstream's findNodesThatPassExtenders and the extender part of
 * prioritizeNodes, applied when the answers are in. The binding cycle
 * (bindVerb), the driver and preemption (ext_preempt.c) use the same
 * calls. Threads: the loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "status.h"
#include "scheduler_impl.h"

size_t ks_sched_extenders(const ks_scheduler_t *s,
                          const ks_extender_config_t **out)
{
    const ks_config_t *cfg = s->susp && s->susp->gen ? s->susp->gen->cfg
                                                    : s->gen->cfg;
    *out = cfg->extenders;
    return s->ext_off ? 0 : cfg->n_extenders;
}

static void ext_answer(void *ud, const char *error, const char *body,
                       size_t len)
{
    ks_sched_ext_call_t *c = ud;
    ks_scheduler_t *s = c->s;
    c->done = 1;
    if (error)
        c->error = strdup(error);
    if (error && c->error == NULL)
        c->error = NULL; /* out of memory: an answer of "" fails to parse */
    if (!error) {
        c->body = malloc(len + 1);
        if (c->body) {
            memcpy(c->body, body, len);
            c->body[len] = '\0';
            c->len = len;
        }
    }
    if (s->susp && s->susp->outstanding > 0 && --s->susp->outstanding == 0)
        ks_scheduler_kick(s);
}

uv_loop_t *ks_sched_batch_loop(ks_scheduler_t *s)
{
    if (s->ext_loop == NULL) {
        s->ext_loop = malloc(sizeof *s->ext_loop);
        if (s->ext_loop == NULL || uv_loop_init(s->ext_loop) != 0) {
            free(s->ext_loop);
            s->ext_loop = NULL;
        }
    }
    return s->ext_loop;
}

ks_hc_t *ks_sched_ext_client(ks_scheduler_t *s, ks_error_t *err)
{
    uv_loop_t *loop = s->attached ? s->loop : NULL;
    ks_hc_opts_t ho;
    if (s->ext_hc)
        return s->ext_hc;
    if (loop == NULL && (loop = ks_sched_batch_loop(s)) == NULL) {
        ks_error_set(err, KS_ENOMEM, "cannot set up a loop for the "
                                     "extenders");
        return NULL;
    }
    memset(&ho, 0, sizeof ho);
    ho.max_host_connections = -1;
    ho.user_agent = "ksched-extender";
    s->ext_hc = ks_hc_new(loop, &ho, err);
    return s->ext_hc;
}

void ks_sched_ext_calls_free(ks_scheduler_t *s)
{
    ks_sched_suspended_t *p = s->susp;
    size_t i;
    if (p == NULL || p->calls == NULL)
        return;
    for (i = 0; i < p->n_calls; i++) {
        ks_extender_cancel(&p->calls[i].call);
        free(p->calls[i].error);
        free(p->calls[i].body);
    }
    free(p->calls);
    p->calls = NULL;
    p->n_calls = 0;
    p->outstanding = 0;
}

/* The extender stage is over: free its calls, and the record too unless a
 * suspended cycle owns it (schedule_one.c frees that one). */
void ks_sched_ext_release(ks_scheduler_t *s)
{
    ks_sched_ext_calls_free(s);
    if (s->susp && s->susp->has_pre) {
        ks_prefilter_result_free(&s->susp->pre);
        s->susp->has_pre = 0;
    }
    if (s->susp && s->susp->qp == NULL) {
        free(s->susp);
        s->susp = NULL;
    }
}

int ks_sched_ext_pending(const ks_scheduler_t *s)
{
    return (s->susp && s->susp->outstanding > 0) || s->n_ext_binding > 0;
}

void ks_sched_ext_detach(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp;
    if (s->ext_hc == NULL || s->ext_loop != NULL)
        return; /* the scheduler's own loop: ks_sched_ext_teardown */
    ks_sched_ext_calls_free(s);
    for (wp = s->binding; wp; wp = wp->bnext)
        if (wp->ext_bind)
            wp->ext_bind->call.req = NULL; /* dropped by the close */
    ks_hc_close(s->ext_hc, NULL, NULL);
    s->ext_hc = NULL;
}

void ks_sched_ext_teardown(ks_scheduler_t *s)
{
    ks_sched_suspended_t *p = s->susp;
    ks_ext_trace_free(&s->ext_trace);
    ks_sched_xp_clear(s);
    if (p != NULL) {
        ks_sched_ext_calls_free(s);
        if (p->has_pre)
            ks_prefilter_result_free(&p->pre);
        if (p->qp)
            p->qp->assumed = 0; /* the queue frees the pod */
        ks_cycle_state_free(p->cs);
        if (p->wp)
            ks_sched_wp_free(p->wp);
        free(p->o);
        if (p->gen)
            ks_generation_unref(p->gen);
        free(p);
        s->susp = NULL;
    }
    if (s->ext_hc) {
        ks_hc_close(s->ext_hc, NULL, NULL);
        s->ext_hc = NULL;
    }
    if (s->ext_loop) {
        uv_run(s->ext_loop, UV_RUN_DEFAULT); /* the client's close */
        uv_loop_close(s->ext_loop);
        free(s->ext_loop);
        s->ext_loop = NULL;
    }
}

int ks_sched_ext_start_body(ks_scheduler_t *s, const ks_extender_config_t *e,
                            size_t k, const char *verb, const char *body)
{
    ks_sched_suspended_t *p = s->susp;
    ks_sched_ext_call_t *c = &p->calls[k];
    ks_error_t err = {0};
    ks_hc_t *hc = ks_sched_ext_client(s, &err);
    c->s = s;
    c->ext = k;
    if (hc == NULL || body == NULL ||
        ks_extender_post(hc, e, verb, body, &c->call, ext_answer, c, &err) != 0) {
        c->done = 1;
        c->error = strdup(body ? err.msg : "out of memory");
        return -1;
    }
    c->call.report = s->opts.obs.extender_call;
    c->call.report_ud = s->opts.obs.ud;
    p->outstanding++;
    return 0;
}

/* Start the call of extender k with `verb` on the cycle's feasible nodes.
 * 0, or -1 with its error stored in the call. */
int ks_sched_ext_start(ks_scheduler_t *s, const ks_extender_config_t *e,
                       size_t k, const char *verb, const ks_pod_t *pod)
{
    char *body = ks_extender_args_json(e, pod, s->feasible,
                                       s->susp->n_feasible);
    int rc = ks_sched_ext_start_body(s, e, k, verb, body);
    free(body);
    return rc;
}

int ks_sched_ext_suspend(ks_scheduler_t *s, size_t n_ext, int stage,
                         uint32_t n_feasible)
{
    ks_sched_suspended_t *p = s->susp;
    if (p == NULL) {
        p = calloc(1, sizeof *p);
        if (p == NULL)
            return -1;
        s->susp = p;
    }
    ks_sched_ext_calls_free(s);
    p->calls = calloc(n_ext, sizeof *p->calls);
    if (p->calls == NULL)
        return -1;
    p->n_calls = n_ext;
    p->stage = stage;
    p->n_feasible = n_feasible;
    return 0;
}

static void set_status(ks_scheduler_t *s, const char *node, ks_code_t code,
                       const char *reason)
{
    uint32_t idx = ks_snapshot_index(s->snap, node);
    ks_status_t *st;
    if (idx == UINT32_MAX || idx >= s->smap.n)
        return; /* upstream records it by name; not a node ksched knows */
    st = &s->smap.st[idx];
    ks_status_reset(st);
    st->code = code;
    st->plugin = NULL;
    ks_status_add_reason(st, reason);
    ks_sched_status_mark(s, idx);
}

/* Apply extender k's filter answer. 0, or -1 (o says why). */
int ks_sched_ext_filter_apply(ks_scheduler_t *s,
                              const ks_extender_config_t *e,
                              ks_sched_ext_call_t *c, cycle_out_t *o)
{
    ks_sched_suspended_t *p = s->susp;
    ks_ext_filter_result_t r;
    char msg[2048];
    const ks_node_info_t **keep;
    uint32_t n_keep = 0, i;
    size_t j, k;
    ks_ext_trace_filter_sent(&s->ext_trace, c->ext, s->feasible,
                             p->n_feasible);
    if (c->error) {
        snprintf(msg, sizeof msg, "%s", c->error);
        goto failed;
    }
    if (ks_extender_parse_filter(e, c->body ? c->body : "", c->len, &r, msg,
                                 sizeof msg) != 0)
        goto failed;
    keep = calloc(r.n_nodes + 1, sizeof *keep);
    if (keep == NULL) {
        ks_extender_filter_result_free(&r);
        return ks_sched_cycle_error(o, NULL);
    }
    for (j = 0; j < r.n_nodes; j++) {
        for (i = 0; i < p->n_feasible; i++)
            if (strcmp(s->feasible[i]->node->name, r.nodes[j]) == 0)
                break;
        if (i == p->n_feasible) {
            snprintf(msg, sizeof msg,
                     "extender %s claims a filtered node %s which is not "
                     "found in the input node list",
                     e->url_prefix, r.nodes[j]);
            free(keep);
            ks_extender_filter_result_free(&r);
            goto failed;
        }
        keep[n_keep++] = s->feasible[i];
        s->names_ok = 0; /* s->feasible is rewritten from keep below */
        s->idx_ok = 0;
        ks_ext_trace_filter_passed(&s->ext_trace, c->ext, r.nodes[j]);
    }
    for (j = 0; j < r.n_unresolvable; j++) {
        set_status(s, r.unresolvable[j].node, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                   r.unresolvable[j].reason);
        ks_ext_trace_filter_failed(&s->ext_trace, c->ext,
                                   r.unresolvable[j].node, 1,
                                   r.unresolvable[j].reason);
    }
    for (j = 0; j < r.n_failed; j++) {
        for (k = 0; k < r.n_unresolvable; k++)
            if (strcmp(r.unresolvable[k].node, r.failed[j].node) == 0)
                break;
        if (k == r.n_unresolvable) {
            set_status(s, r.failed[j].node, KS_UNSCHEDULABLE,
                       r.failed[j].reason);
            ks_ext_trace_filter_failed(&s->ext_trace, c->ext,
                                       r.failed[j].node, 0,
                                       r.failed[j].reason);
        }
    }
    memcpy(s->feasible, keep, n_keep * sizeof *keep);
    p->n_feasible = n_keep;
    free(keep);
    ks_extender_filter_result_free(&r);
    return 0;
failed:
    ks_ext_trace_filter_error(&s->ext_trace, c->ext, s->feasible,
                              p->n_feasible, msg);
    if (e->ignorable) {
        ks_log(KS_LOGL_INFO, "skipping extender %s: it failed and is "
                             "ignorable: %s",
               e->url_prefix, msg);
        return 0;
    }
    snprintf(o->message, sizeof o->message, "%s", msg);
    o->r.error = 1;
    return -1;
}

/* upstream findNodesThatPassExtenders, one extender at a time from
 * p->next: 1 when a call was started (suspended), 0 when every extender
 * has been asked, -1 on an Error. */
int ks_sched_ext_filter_next(ks_scheduler_t *s, const ks_pod_t *pod,
                             cycle_out_t *o)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n = ks_sched_extenders(s, &ex);
    for (; p->next < n && p->n_feasible > 0; p->next++) {
        const ks_extender_config_t *e = &ex[p->next];
        if (e->filter_verb == NULL || !ks_extender_interested(e, pod))
            continue;
        if (ks_sched_ext_start(s, e, p->next, e->filter_verb, pod) == 0)
            return 1;
        if (ks_sched_ext_filter_apply(s, e, &p->calls[p->next], o) != 0)
            return -1;
    }
    return 0;
}

typedef struct prio_ctx {
    ks_scheduler_t *s;
    int64_t factor;
    uint32_t n;
    size_t ext;
} prio_ctx_t;

static void add_priority(void *ud, const char *host, int64_t score)
{
    prio_ctx_t *c = ud;
    uint32_t i;
    for (i = 0; i < c->n; i++)
        if (strcmp(c->s->feasible[i]->node->name, host) == 0) {
            c->s->totals[i] += score * c->factor;
            ks_ext_trace_score(&c->s->ext_trace, c->ext, host, score);
            return;
        }
}

/* upstream prioritizeNodes' extender part: the answers (errors ignored, as
 * upstream) added to the totals: score x weight x (100 / 10). */
void ks_sched_ext_prioritize_apply(ks_scheduler_t *s, const ks_pod_t *pod)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n = ks_sched_extenders(s, &ex), k;
    char msg[1024];
    for (k = 0; k < n && k < p->n_calls; k++) {
        ks_sched_ext_call_t *c = &p->calls[k];
        prio_ctx_t pc = {s, ex[k].weight * (KS_EXT_MAX_NODE_SCORE /
                                            KS_EXT_MAX_PRIORITY),
                         p->n_feasible, k};
        if (!c->done)
            continue;
        ks_ext_trace_prioritize_sent(&s->ext_trace, k, s->feasible,
                                     p->n_feasible);
        if (c->error == NULL && c->body &&
            ks_extender_parse_priorities(c->body, c->len, add_priority, &pc,
                                         msg, sizeof msg) == 0)
            continue;
        ks_ext_trace_prioritize_error(&s->ext_trace, k,
                                      c->error ? c->error : msg);
        ks_log(KS_LOGL_DEBUG, "extender %s gave no scores for %s/%s: %s",
               ex[k].url_prefix, pod->ns, pod->name,
               c->error ? c->error : msg);
    }
}
