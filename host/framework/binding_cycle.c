/*
 * The binding cycle (upstream bindingCycle): for a pod Permit allowed,
 * PreBind, Bind and PostBind; for one it rejected, or any failure past
 * Reserve, Unreserve, forget the assumed pod and requeue it.
 *
 * Without a cluster writer a binding is the cache's alone (snapshots, the
 * embedded API) and the cycle ends at once. With one (cluster mode), a
 * Bind plugin's binding goes to the writer, which answers later through
 * ks_scheduler_bind_done (or from inside the call): the record then waits
 * in the list of bindings in flight, its pod still assumed. A pod removed
 * meanwhile is dropped when the answer comes.
 *
 * A PreBind plugin may return KS_PENDING (SDK ABI 1.4): the record then
 * waits among the bindings in flight (BIND_PREBIND_WAIT) until the plugin
 * calls pre_bind_resume (ks_sched_pre_bind_resume), which puts it back in
 * the ready list to go on from that plugin's answer; a pod deleted
 * meanwhile goes back the same way and is dropped (Unreserve runs).
 *
 * Ownership: a record (ks_waiting_pod_t) popped from the ready list or
 * the bindings in flight is this file's until it is freed here. Loop
 * thread only; ks_scheduler_bind_done not from inside another pod's plugin
 * call. Allocates nothing (a failure message that cannot be stored keeps
 * the previous one, see sched_queue_ops.c).
 */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "base/intern.h"
#include "base/log.h"
#include "status.h"
#include "scheduler_impl.h"

/* Only the pod of the binding cycle running now can be bound, once. */
int ks_sched_ops_bind(ks_fw_env_t *e, const ks_pod_t *pod, const char *node)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp = s->in_bind;
    if (s->opts.writer.bind == NULL)
        return ks_cache_node_info(s->cache, node) ? 0 : -1;
    if (wp == NULL || wp->qp->pod->uid != pod->uid ||
        wp->bind_state != BIND_NONE)
        return -1;
    wp->bind_state = BIND_PENDING;
    if (s->opts.writer.bind(s->opts.writer.ud, pod, node) != 0) {
        wp->bind_state = BIND_NONE;
        return -1;
    }
    return 0;
}

static void drop_deleted(ks_scheduler_t *s, ks_waiting_pod_t *wp);

/* Was the pod deleted since it was assumed (through the API, by a plugin,
 * as a preemption victim)? Then it is dropped, never bound or requeued. */
static int is_deleted(const ks_waiting_pod_t *wp)
{
    return wp->deleted || wp->qp->deleted;
}

void ks_sched_fail_assumed(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                           const char *msg, int error)
{
    ks_qpod_t *qp = wp->qp;
    const char *plugin = wp->timeout_plugin;
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_DELETE};
    if (is_deleted(wp)) {
        drop_deleted(s, wp);
        return;
    }
    ks_fw_run_unreserve(wp->fw, wp->cs, qp->pod, wp->node);
    ks_cache_forget_pod(s->cache, qp->pod->uid);
    qp->assumed = 0;
    qp->pod->node_name = ks_intern_empty(ks_intern_global());
    if (error == KS_SCHED_FAIL_PENDING)
        ks_sched_requeue_rejected(s, qp, ks_scheduler_now(s), msg,
                                  plugin ? &plugin : NULL, plugin ? 1 : 0, 1);
    else
        ks_sched_requeue_failed(s, qp, ks_scheduler_now(s), msg,
                                plugin ? &plugin : NULL, plugin ? 1 : 0,
                                error);
    if (error == 1)
        s->stats.errors++;
    else
        s->stats.unschedulable++;
    /* The forgotten pod freed room: others may fit now. As upstream, this
     * counts as an assigned pod's deletion, after the pod itself has been
     * requeued and without moving it (it would fail the same way). */
    ks_sched_on_event_except(s, ev, qp);
    ks_sched_wp_free(wp);
}

/* A pod deleted while it was assumed: undo and drop it. */
static void drop_deleted(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_qpod_t *qp = wp->qp;
    ks_cluster_event_t del = {KS_RES_POD, KS_ACT_DELETE};
    ks_fw_run_unreserve(wp->fw, wp->cs, qp->pod, wp->node);
    ks_cache_forget_pod(s->cache, qp->pod->uid);
    qp->assumed = 0;
    ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
    ks_pod_free(ks_queue_remove(s->q, qp));
    ks_sched_wp_free(wp);
    ks_scheduler_on_event(s, del);
}

/* The pod is bound: the cache keeps it, PostBind runs, the record goes. */
static void binding_finish(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_qpod_t *qp = wp->qp;
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_ADD};
    double t0;
    ks_cache_finish_binding(s->cache, qp->pod->uid);
    if (qp->pod->nominated_node_name && qp->pod->nominated_node_name[0])
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
    s->stats.bound++;
    if (s->opts.obs.bound)
        s->opts.obs.bound(s->opts.obs.ud, qp->pod, wp->node);
    t0 = KS_SCHED_EP_T0(s);
    ks_fw_run_post_bind(wp->fw, wp->cs, qp->pod, wp->node);
    ks_sched_ep_done(s, wp->fw, KS_EP_POST_BIND, KS_SUCCESS, t0);
    /* The record goes; the pod stays in the cache. */
    ks_queue_remove(s->q, qp);
    ks_sched_wp_free(wp);
    ks_scheduler_on_event(s, ev);
}

/* Wait for the cluster's answer to the binding the writer started. */
static void binding_wait(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    wp->bprev = NULL;
    wp->bnext = s->binding;
    if (s->binding)
        s->binding->bprev = wp;
    s->binding = wp;
    s->n_binding++;
    if (!s->binding_by_uid_off &&
        ks_strmap_put(&s->binding_by_uid, wp->qp->pod->uid, wp) != 0)
        s->binding_by_uid_off = 1; /* search the list instead */
}

static void binding_unlink(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    if (wp->bprev)
        wp->bprev->bnext = wp->bnext;
    else
        s->binding = wp->bnext;
    if (wp->bnext)
        wp->bnext->bprev = wp->bprev;
    s->n_binding--;
    if (ks_strmap_get(&s->binding_by_uid, wp->qp->pod->uid) == wp)
        ks_strmap_del(&s->binding_by_uid, wp->qp->pod->uid);
    if (s->n_binding == 0 && s->binding_by_uid_off) {
        ks_strmap_clear(&s->binding_by_uid);
        s->binding_by_uid_off = 0; /* empty again: the map is whole */
    }
}

/* The binding in flight for this uid, or NULL. */
static ks_waiting_pod_t *binding_find(const ks_scheduler_t *s,
                                      const char *uid)
{
    ks_waiting_pod_t *wp;
    if (!s->binding_by_uid_off)
        return ks_strmap_get(&s->binding_by_uid, uid);
    for (wp = s->binding; wp; wp = wp->bnext)
        if (strcmp(wp->qp->pod->uid, uid) == 0)
            return wp;
    return NULL;
}

static void bind_plugins(ks_scheduler_t *s, ks_waiting_pod_t *wp, ks_code_t c,
                         ks_status_t *pre);

/* upstream extendersBinding: the first interested extender with a
 * bindVerb binds instead of the Bind plugins, asynchronously. 0 when its
 * call is under way (the binding waits as for the cluster writer), -1 when
 * no extender binds this pod (or an ignorable one could not be asked), 1
 * when the call could not start (wp->message says why). */
static void ext_bind_answer(void *ud, const char *error, const char *body,
                            size_t len)
{
    ks_sched_ext_call_t *c = ud;
    ks_scheduler_t *s = c->s;
    ks_waiting_pod_t *wp = c->wp;
    const ks_extender_config_t *e = &wp->gen->cfg->extenders[c->ext];
    char msg[2048];
    int ok;
    s->n_ext_binding--;
    if (error)
        snprintf(msg, sizeof msg, "%s", error);
    ok = !error && ks_extender_parse_binding(body, len, msg, sizeof msg) == 0;
    wp->ext_bind = NULL;
    free(c);
    if (!ok && e->ignorable && !is_deleted(wp)) {
        ks_status_t st;
        ks_log(KS_LOGL_INFO, "skipping extender %s in bind: it failed and is "
                             "ignorable: %s",
               e->url_prefix, msg);
        binding_unlink(s, wp);
        wp->bind_state = BIND_NONE;
        s->env.sample_plugins = wp->sampled;
        ks_status_reset(&st);
        bind_plugins(s, wp, KS_SUCCESS, &st);
        ks_scheduler_kick(s);
        return;
    }
    ks_scheduler_bind_done(s, wp->qp->pod->uid, ok, ok ? NULL : msg);
}

static int extender_bind(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    const ks_config_t *cfg = wp->gen->cfg;
    ks_error_t err; /* 8 KiB: emptied, not cleared, on every bind */
    ks_sched_ext_call_t *c;
    ks_hc_t *hc;
    char *body;
    size_t k;
    ks_error_init(&err);
    for (k = 0; k < cfg->n_extenders; k++) {
        const ks_extender_config_t *e = &cfg->extenders[k];
        if (e->bind_verb == NULL || !ks_extender_interested(e, wp->qp->pod))
            continue;
        c = calloc(1, sizeof *c);
        hc = ks_sched_ext_client(s, &err);
        body = ks_extender_binding_json(wp->qp->pod, wp->node);
        if (c == NULL || hc == NULL || body == NULL ||
            ks_extender_post(hc, e, e->bind_verb, body, &c->call,
                             ext_bind_answer, c, &err) != 0) {
            free(c);
            free(body);
            if (e->ignorable)
                continue;
            snprintf(wp->message, sizeof wp->message, "%.1000s",
                     err.msg[0] ? err.msg : "out of memory");
            return 1;
        }
        free(body);
        c->call.report = s->opts.obs.extender_call;
        c->call.report_ud = s->opts.obs.ud;
        c->s = s;
        c->wp = wp;
        c->ext = k;
        wp->ext_bind = c;
        wp->bind_state = BIND_PENDING;
        s->n_ext_binding++;
        binding_wait(s, wp);
        return 0;
    }
    return -1;
}

/* PreBind, from the first plugin or, for a record a plugin resumed,
 * from the answer it gave on. KS_PENDING: the record waits. */
static ks_code_t pre_bind(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                          ks_status_t *st)
{
    ks_code_t c = KS_SUCCESS;
    double t0 = KS_SCHED_EP_T0(s);
    if (wp->resumed) {
        wp->resumed = 0;
        c = ks_fw_pre_bind_resumed(wp->fw, wp->prebind_at, wp->resume_code,
                                   wp->message, st);
        wp->prebind_at++;
    }
    if (c == KS_SUCCESS)
        c = ks_fw_run_pre_bind(wp->fw, wp->cs, wp->qp->pod, wp->node,
                               &wp->prebind_at, st);
    if (c == KS_PENDING) {
        wp->bind_state = BIND_PREBIND_WAIT;
        binding_wait(s, wp); /* ks_sched_pre_bind_resume goes on */
        return c;
    }
    ks_sched_ep_done(s, wp->fw, KS_EP_PRE_BIND, c, t0);
    return c;
}

static void binding_cycle(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_status_t st;
    ks_code_t c;

    /* The binding cycle times plugins as its scheduling cycle did. */
    s->env.sample_plugins = wp->sampled;
    if (!wp->resumed)
        ks_sched_report_permit_wait(s, wp);
    if (is_deleted(wp)) {
        drop_deleted(s, wp);
        return;
    }
    if (wp->state == WP_REJECTED) {
        ks_sched_fail_assumed(s, wp, wp->message, 0);
        return;
    }
    c = pre_bind(s, wp, &st);
    if (c == KS_PENDING)
        return;
    if (c == KS_SUCCESS) {
        int rc = extender_bind(s, wp);
        if (rc == 0)
            return; /* the extender binds; ext_bind_answer goes on */
        if (rc > 0) {
            ks_sched_fail_assumed(s, wp, wp->message, 1);
            return;
        }
    }
    bind_plugins(s, wp, c, &st);
}

int ks_sched_pre_bind_resume(ks_scheduler_t *s, const void *inst,
                             const char *uid, ks_code_t code,
                             const char *reason)
{
    ks_waiting_pod_t *wp = uid ? binding_find(s, uid) : NULL;
    if (wp == NULL || wp->bind_state != BIND_PREBIND_WAIT ||
        ks_fw_pre_bind_inst(wp->fw, wp->prebind_at) != inst)
        return -1;
    binding_unlink(s, wp);
    wp->bind_state = BIND_NONE;
    wp->resumed = 1;
    wp->resume_code = code;
    snprintf(wp->message, sizeof wp->message, "%s", reason ? reason : "");
    ks_sched_ready_push(s, wp);
    ks_scheduler_kick(s);
    return 0;
}

/* Bind plugins (c: PreBind's code; they run only after its success), then
 * the outcome. */
static void bind_plugins(ks_scheduler_t *s, ks_waiting_pod_t *wp, ks_code_t c,
                         ks_status_t *pre)
{
    ks_qpod_t *qp = wp->qp;
    ks_status_t st = *pre;
    char msg[2048];
    double t0;
    if (c == KS_SUCCESS) {
        t0 = KS_SCHED_EP_T0(s);
        s->in_bind = wp;
        c = ks_fw_run_bind(wp->fw, wp->cs, qp->pod, wp->node, &st);
        s->in_bind = NULL;
        ks_sched_ep_done(s, wp->fw, KS_EP_BIND, c, t0);
    }
    if (c != KS_SUCCESS) {
        if (st.code == KS_SKIP)
            snprintf(msg, sizeof msg,
                     "bind status: Skip, no Bind plugin bound the pod");
        else
            ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        ks_sched_fail_assumed(s, wp, msg, 1);
    } else if (wp->bind_state == BIND_PENDING) {
        binding_wait(s, wp); /* ks_scheduler_bind_done answers */
    } else if (wp->bind_state == BIND_FAILED) {
        ks_sched_fail_assumed(s, wp, wp->message, 1);
    } else if (is_deleted(wp)) {
        drop_deleted(s, wp); /* deleted by a PreBind or Bind plugin */
    } else {
        binding_finish(s, wp);
    }
}

int ks_sched_run_ready(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp;
    int did = 0;
    while ((wp = ks_sched_ready_pop(s)) != NULL) {
        binding_cycle(s, wp);
        did = 1;
    }
    return did;
}

int ks_scheduler_bind_done(ks_scheduler_t *s, const char *uid, int ok,
                           const char *message)
{
    ks_waiting_pod_t *wp = s->in_bind;
    if (wp != NULL && strcmp(wp->qp->pod->uid, uid) == 0 &&
        wp->bind_state == BIND_PENDING) {
        /* Answered from inside the Bind plugin's call. */
        wp->bind_state = ok ? BIND_OK : BIND_FAILED;
        if (!ok)
            snprintf(wp->message, sizeof wp->message, "%s",
                     message ? message : "binding failed");
        return 0;
    }
    if ((wp = binding_find(s, uid)) == NULL ||
        wp->bind_state == BIND_PREBIND_WAIT)
        return KS_ENOTFOUND;
    binding_unlink(s, wp);
    s->env.sample_plugins = wp->sampled;
    if (is_deleted(wp))
        drop_deleted(s, wp);
    else if (ok)
        binding_finish(s, wp);
    else
        ks_sched_fail_assumed(s, wp, message ? message : "binding failed", 1);
    ks_scheduler_kick(s);
    return 0;
}

int ks_sched_binding_drop(ks_scheduler_t *s, const ks_qpod_t *qp)
{
    ks_waiting_pod_t *wp;
    /* The pod of a cycle suspended for extenders: its calls are cancelled
     * and the next step drops it. */
    if (s->susp && s->susp->qp == qp) {
        s->susp->deleted = 1;
        ks_sched_ext_calls_free(s);
        ks_scheduler_kick(s);
        return 1;
    }
    for (wp = s->binding; wp; wp = wp->bnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            if (wp->bind_state == BIND_PREBIND_WAIT) {
                /* Nothing of the cluster's to wait for: Unreserve (which
                 * ends the plugin's wait) and the drop come from the
                 * ready list, outside the caller's plugin call. */
                binding_unlink(s, wp);
                wp->bind_state = BIND_NONE;
                ks_sched_ready_push(s, wp);
                ks_scheduler_kick(s);
            }
            return 1;
        }
    return 0;
}

void ks_sched_binding_teardown(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp, *next;
    /* The writer drops its requests before this. */
    for (wp = s->binding; wp; wp = next) {
        next = wp->bnext;
        if (wp->ext_bind) {
            ks_extender_cancel(&wp->ext_bind->call);
            free(wp->ext_bind);
        }
        ks_sched_wp_free(wp);
    }
    s->binding = NULL;
    s->n_binding = 0;
    ks_strmap_destroy(&s->binding_by_uid);
    s->binding_by_uid_off = 0;
    s->n_ext_binding = 0;
    ks_sched_ext_teardown(s);
}
