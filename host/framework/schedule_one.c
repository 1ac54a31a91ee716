/*
 * The scheduling cycle (upstream scheduleOne): pop the next pod, bring the
 * snapshot up to date, run schedulePod (schedule_pod.c) and, on a
 * FitError, PostFilter; then assume the pod on the selected node, run
 * Reserve and Permit, and hand it to its binding cycle (binding_cycle.c)
 * or to the waiting pods (waiting_pods.c). A failed attempt is recorded
 * and the pod requeued (sched_queue_ops.c). Also ks_scheduler_try (one
 * attempt without assuming) and the FitError message.
 *
 * Ownership: a cycle holds a reference on the generation it started with;
 * its cycle state and waiting-pod record pass to the binding cycle once
 * Reserve succeeds, or are freed here. All three and the cycle's result
 * are allocated before any plugin runs, so running out of memory fails
 * the attempt with an Error and changes nothing else.
 * Loop thread only.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>

#include "base/log.h"
#include "pool.h"
#include "scheduler_impl.h"

/* --- FitError ------------------------------------------------------------------- */

void ks_fit_error_format(const struct ks_node_status_map *m, uint32_t n_nodes,
                         const ks_status_t *prefilter, int prefilter_counted,
                         const char *post_msg, char *buf, size_t len)
{
    /* One entry per reason text; a PreFilter failure counts for every
     * node (v1.24). The entries point into the statuses (valid for this
     * call). */
    ks_reason_count_t h[256];
    uint32_t nr = 0, i, k;
    unsigned j;
    if (prefilter && !prefilter_counted && prefilter->n_reasons > 0) {
        /* v1.36 (upstream Diagnosis.PreFilterMsg): the PreFilter failure's
         * message once, not counted per node. */
        char msg[KS_STATUS_REASON_MAX];
        ks_status_message(prefilter, msg, sizeof msg);
        snprintf(buf, len, "0/%u nodes are available: %s.%s%s", n_nodes, msg,
                 post_msg && post_msg[0] ? " " : "",
                 post_msg ? post_msg : "");
        return;
    }
    if (prefilter) {
        for (j = 0; j < prefilter->n_reasons && nr < 256; j++) {
            h[nr].reason = ks_status_reason(prefilter, j);
            h[nr++].count = n_nodes;
        }
    } else {
        for (k = 0; k < m->n; k++) {
            if (!m->set[k])
                continue;
            for (j = 0; j < m->st[k].n_reasons; j++) {
                const char *r = ks_status_reason(&m->st[k], j);
                for (i = 0; i < nr; i++)
                    if (strcmp(h[i].reason, r) == 0)
                        break;
                if (i == nr) {
                    if (nr == 256)
                        continue;
                    h[nr].reason = r;
                    h[nr++].count = 0;
                }
                h[i].count++;
            }
        }
    }
    if (nr > 0) {
        ks_fit_error_write(buf, len, n_nodes, h, nr, post_msg);
        return;
    }
    /* No reason at all (every node dropped by an extender without one):
     * upstream's FitError adds no histogram, so the text stops at the
     * colon, with PostFilter's message after it when there is one. */
    if (post_msg && post_msg[0])
        snprintf(buf, len, "0/%u nodes are available: %s", n_nodes, post_msg);
    else
        snprintf(buf, len, "0/%u nodes are available:", n_nodes);
}

/* --- one attempt --------------------------------------------------------------- */

/* PostFilter, from the plugin s->xp.post_at on, and the FitError's text.
 * 1 when a plugin asked the extenders' preemptVerb and their calls are in
 * flight (the cycle suspends; run_cycle_resume comes back here). */
static int post_filter(ks_scheduler_t *s, ks_framework_t *fw,
                       ks_cycle_state_t *cs, const ks_pod_t *pod,
                       cycle_out_t *o)
{
    ks_status_t *st = &s->xp.post_st;
    char post[2048] = "";
    const char *nominated = NULL;
    double t0 = KS_SCHED_EP_T0(s);
    ks_code_t c;
    for (;;) {
        c = ks_fw_run_post_filter_at(fw, &s->xp.post_at, cs, pod, &s->smap,
                                     &nominated, st);
        if (c != KS_PENDING)
            break;
        if (s->xp.state == XP_ASKING && s->susp && s->susp->outstanding > 0)
            return 1;
        if (s->xp.state == XP_DONE || s->xp.state == XP_FAILED)
            continue; /* answered at once: call the plugin again */
        ks_status_reset(st);
        ks_status_add_reason(st, "PostFilter returned Pending without "
                                 "asking the extenders");
        c = KS_ERROR;
        break;
    }
    ks_sched_ep_done(s, fw, KS_EP_POST_FILTER, c, t0);
    if (c != KS_ERROR) {
        ks_status_message(st, post, sizeof post);
    } else {
        char em[1024];
        ks_log(KS_LOGL_ERROR, "PostFilter for %s/%s: %s", pod->ns, pod->name,
               ks_status_message(st, em, sizeof em));
    }
    if (c == KS_SUCCESS) {
        s->stats.preemptions++;
        o->r.nominated = nominated;
    }
    if (s->xp.state != XP_NONE && s->susp) {
        ks_sched_ext_calls_free(s);
        if (s->susp->qp == NULL) {
            free(s->susp);
            s->susp = NULL;
        }
    }
    ks_sched_xp_clear(s);
    if (post[0]) {
        size_t l = strlen(o->message);
        snprintf(o->message + l, sizeof o->message - l, " %s", post);
    }
    o->r.message = o->message;
    return 0;
}

/* The rest of an attempt once schedulePod is done: the FitError's text and
 * PostFilter (1: suspended for the extenders' preemptVerb). */
static int after_schedule_pod(ks_scheduler_t *s, ks_framework_t *fw,
                              ks_cycle_state_t *cs, const ks_pod_t *pod,
                              cycle_out_t *o)
{
    if (o->r.error)
        o->r.message = o->message;
    if (!o->fit_error)
        return 0;
    ks_fit_error_format(&s->smap, o->r.n_nodes,
                        o->prefilter_failed ? &o->pre_status : NULL,
                        s->opts.prefilter_counted, NULL, o->message,
                        sizeof o->message);
    o->r.message = o->message;
    if (fw->n_points[KS_EP_POST_FILTER] == 0 || s->opts.no_post_filter)
        return 0;
    ks_sched_xp_clear(s);
    ks_status_reset(&s->xp.post_st);
    return post_filter(s, fw, cs, pod, o);
}

/* One scheduling attempt without side effects on the queue: schedulePod,
 * and PostFilter on a FitError (which may nominate and delete victims).
 * 1 when it suspended for extenders (run_cycle_resume goes on). */
static int run_cycle(ks_scheduler_t *s, ks_framework_t *fw,
                     ks_cycle_state_t *cs, const ks_pod_t *pod,
                     cycle_out_t *o)
{
    int rc;
    o->r.pod = pod;
    o->r.fw = fw;
    rc = ks_sched_schedule_pod(s, fw, cs, pod, o);
    /* batching covers schedulePod only (batch.h) */
    s->bt.active = 0;
    s->stats.batch_reused = atomic_load(&s->bt.reused);
    s->stats.batch_mismatches = atomic_load(&s->bt.mismatches);
    if (rc)
        return 1;
    return after_schedule_pod(s, fw, cs, pod, o);
}

static int run_cycle_resume(ks_scheduler_t *s, ks_framework_t *fw,
                            ks_cycle_state_t *cs, const ks_pod_t *pod,
                            cycle_out_t *o)
{
    if (s->susp && s->susp->stage == EXT_STAGE_PREEMPT) {
        if (ks_sched_xp_resume(s))
            return 1;
        return post_filter(s, fw, cs, pod, o);
    }
    if (ks_sched_schedule_pod_resume(s, fw, cs, pod, o))
        return 1;
    return after_schedule_pod(s, fw, cs, pod, o);
}

/* malloc'd and zeroed as calloc would, except the bytes of text after
 * the first of [text, text + len): a C string, read up to its NUL (a few
 * KiB of zeroes per attempt otherwise). */
static void *alloc_zero_but(size_t size, size_t text, size_t len)
{
    char *p = malloc(size);
    if (p == NULL)
        return NULL;
    memset(p, 0, text + 1);
    memset(p + text + len, 0, size - text - len);
    return p;
}

/* A scheduling attempt's outcome and its waiting-pod record (NULL when
 * out of memory; freed with free / ks_sched_wp_free). */
static cycle_out_t *cycle_out_new(void)
{
    return alloc_zero_but(sizeof(cycle_out_t), offsetof(cycle_out_t, message),
                          sizeof(((cycle_out_t *)0)->message));
}

static ks_waiting_pod_t *wp_new(void)
{
    return alloc_zero_but(sizeof(ks_waiting_pod_t),
                          offsetof(ks_waiting_pod_t, message),
                          sizeof(((ks_waiting_pod_t *)0)->message));
}

int ks_scheduler_try(ks_scheduler_t *s, const ks_pod_t *pod,
                     void (*cb)(void *ud, const ks_cycle_result_t *r),
                     void *ud, ks_error_t *err)
{
    ks_framework_t *fw = ks_generation_profile(s->gen, pod->scheduler_name);
    ks_fw_env_t *env_was = s->gen->fws[0]->env;
    ks_cycle_state_t *cs;
    cycle_out_t *o;
    int rc = 0;
    size_t i;
    if (fw == NULL)
        fw = s->gen->fws[0];
    if (ks_cache_update_snapshot(s->cache, s->snap, err) != 0)
        return err ? err->code : KS_EINVAL;
    /* The generation may be shared with another scheduler (shadow mode
     * beside serve's own): for this attempt its plugins see this
     * scheduler's snapshot and clock; the other's env comes back after. */
    for (i = 0; i < s->gen->n_fws; i++)
        ks_framework_set_env(s->gen->fws[i], &s->env);
    ks_sched_sample_cycle(s);
    cs = ks_cycle_state_new();
    o = cycle_out_new();
    if (cs == NULL || o == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto out;
    }
    /* Synchronous: extenders are asked on the scheduler's own loop, run
     * here until they answer; on a scheduler attached to a loop they are
     * not asked (that loop cannot be run from inside itself). */
    s->ext_off = s->attached;
    rc = run_cycle(s, fw, cs, pod, o);
    while (rc == 1) {
        while (s->susp->outstanding > 0 && s->ext_loop)
            uv_run(s->ext_loop, UV_RUN_ONCE);
        rc = run_cycle_resume(s, fw, cs, pod, o);
    }
    s->ext_off = 0;
    free(s->susp);
    s->susp = NULL;
    if (o->r.nominated && ks_sched_nominate(s, pod, o->r.nominated) != 0) {
        rc = ks_error_set(err, KS_ENOMEM,
                          "out of memory nominating %s/%s to node %s",
                          pod->ns, pod->name, o->r.nominated);
        goto out;
    }
    cb(ud, &o->r);
out:
    ks_cycle_state_free(cs);
    free(o);
    for (i = 0; i < s->gen->n_fws; i++)
        ks_framework_set_env(s->gen->fws[i], env_was);
    return rc;
}

/* --- scheduleOne ------------------------------------------------------------------ */

/* The pod fits on `node`: assume it there, then Reserve and Permit
 * (upstream scheduleOne after schedulePod). Takes cs and wp over. */
static void assume_reserve_permit(ks_scheduler_t *s, ks_qpod_t *qp,
                                  ks_generation_t *gen, ks_framework_t *fw,
                                  ks_cycle_state_t *cs, ks_waiting_pod_t *wp,
                                  const char *node, int64_t now)
{
    ks_pod_t *pod = qp->pod;
    ks_error_t err; /* 8 KiB: set up only when it is used */
    uint64_t timeout_ms, wait_mask;
    const char *timeout_plugin;
    char msg[2048];
    ks_status_t st;
    double t0;
    ks_code_t c;

    ks_error_init(&err);
    if (ks_cache_assume_pod(s->cache, pod, node, &err) != 0) {
        ks_sched_requeue_failed(s, qp, now, err.msg, NULL, 0, 1);
        s->stats.errors++;
        ks_cycle_state_free(cs);
        ks_sched_wp_free(wp);
        return;
    }
    qp->assumed = 1;
    wp->s = s;
    wp->qp = qp;
    wp->gen = ks_generation_ref(gen);
    wp->fw = fw;
    wp->cs = cs;
    wp->node = pod->node_name;
    wp->deadline = -1;
    wp->sampled = s->env.sample_plugins;

    t0 = KS_SCHED_EP_T0(s);
    c = ks_fw_run_reserve(fw, wp->cs, pod, wp->node, &st);
    ks_sched_ep_done(s, fw, KS_EP_RESERVE, c, t0);
    if (c != KS_SUCCESS) {
        ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        ks_sched_fail_assumed(s, wp, msg, 1);
        return;
    }

    t0 = KS_SCHED_EP_T0(s);
    c = ks_fw_run_permit(fw, wp->cs, pod, wp->node, &timeout_ms, &wait_mask,
                         &timeout_plugin, &st);
    ks_sched_ep_done(s, fw, KS_EP_PERMIT, c, t0);
    switch (c) {
    case KS_SUCCESS:
        wp->state = WP_ALLOWED;
        ks_sched_ready_push(s, wp);
        break;
    case KS_WAIT:
        ks_sched_wp_wait(s, wp, wait_mask, timeout_ms, timeout_plugin, now);
        break;
    case KS_PENDING: {
        /* upstream v1.36: a rejection at Permit is a FitError over the
         * selected node ("0/1 nodes are available: 1 <reason>."), the
         * plugin among the pod's Pending plugins. */
        ks_reason_count_t h[KS_STATUS_MAX_REASONS];
        uint32_t k;
        for (k = 0; k < st.n_reasons && k < KS_STATUS_MAX_REASONS; k++) {
            h[k].reason = ks_status_reason(&st, k);
            h[k].count = 1;
        }
        ks_fit_error_write(msg, sizeof msg, 1, h, k, NULL);
        wp->timeout_plugin = st.plugin;
        ks_sched_fail_assumed(s, wp, msg, KS_SCHED_FAIL_PENDING);
        break;
    }
    default:
        ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        ks_sched_fail_assumed(s, wp, msg, st.code == KS_ERROR);
        break;
    }
}

/* The attempt's outcome: requeue on a FitError or an Error, else go on to
 * assume the pod. Takes cs and wp over. */
static void handle_outcome(ks_scheduler_t *s, ks_qpod_t *qp,
                           ks_generation_t *gen, ks_framework_t *fw,
                           ks_cycle_state_t *cs, ks_waiting_pod_t *wp,
                           const cycle_out_t *o, int64_t now)
{
    if (o->fit_error &&
        (o->r.nominated == NULL ||
         ks_sched_nominate(s, qp->pod, o->r.nominated) == 0)) {
        s->stats.unschedulable++;
        ks_sched_requeue_rejected(s, qp, now, o->message, o->plugins,
                                  o->n_plugins, o->pending_mask);
    } else if (o->fit_error) {
        /* Preemption made room but the nomination cannot be kept. */
        s->stats.errors++;
        ks_sched_requeue_failed(s, qp, now, "out of memory", NULL, 0, 1);
    } else if (o->r.error) {
        s->stats.errors++;
        ks_sched_requeue_failed(s, qp, now, o->message, NULL, 0, 1);
    } else {
        s->stats.scheduled++;
        assume_reserve_permit(s, qp, gen, fw, cs, wp, o->r.selected, now);
        return;
    }
    ks_cycle_state_free(cs);
    ks_sched_wp_free(wp);
}

/* The attempt is over: tell the observer, then requeue or assume. */
static void finish_cycle(ks_scheduler_t *s, ks_qpod_t *qp,
                         ks_generation_t *gen, ks_framework_t *fw,
                         ks_cycle_state_t *cs, ks_waiting_pod_t *wp,
                         cycle_out_t *o, int64_t now, double start)
{
    o->r.seconds = ks_fw_mono_seconds() - start;
    if (s->opts.obs.cycle)
        s->opts.obs.cycle(s->opts.obs.ud, &o->r);
    handle_outcome(s, qp, gen, fw, cs, wp, o, now);
    free(o);
    ks_generation_unref(gen);
}

void ks_sched_schedule_one(ks_scheduler_t *s)
{
    int64_t now = ks_scheduler_now(s);
    ks_qpod_t *qp = ks_queue_pop(s->q, now, ++s->cycle);
    ks_generation_t *gen;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    ks_waiting_pod_t *wp;
    cycle_out_t *o;
    ks_error_t err; /* 8 KiB: set up only when it is used */
    double start = ks_fw_mono_seconds();

    if (qp == NULL)
        return;
    gen = ks_generation_ref(s->gen);
    fw = ks_generation_profile(gen, qp->pod->scheduler_name);
    s->stats.attempts++;
    if (fw == NULL) {
        /* The profile went away in a reload: hold the pod as unschedulable
         * until a profile for it returns. */
        ks_sched_requeue_failed(s, qp, now,
                                "no profile schedules this pod any more",
                                NULL, 0, 0);
        ks_generation_unref(gen);
        return;
    }
    ks_error_init(&err);
    if (ks_cache_update_snapshot(s->cache, s->snap, &err) != 0) {
        ks_sched_requeue_failed(s, qp, now, err.msg, NULL, 0, 1);
        ks_generation_unref(gen);
        return;
    }
    ks_sched_sample_cycle(s);
    cs = ks_cycle_state_new();
    o = cycle_out_new();
    wp = wp_new();
    if (cs == NULL || o == NULL || wp == NULL) {
        s->stats.errors++;
        ks_sched_requeue_failed(s, qp, now, "out of memory", NULL, 0, 1);
        ks_cycle_state_free(cs);
        free(o);
        free(wp);
        ks_generation_unref(gen);
        return;
    }
    /* the workers' cycle gate times the attempt (pool.h) */
    ks_pool_cycle_begin(fw->pool);
    if (run_cycle(s, fw, cs, qp->pod, o)) {
        ks_pool_cycle_end(fw->pool, 0); /* waits on extenders: untimed */
        /* Suspended for extenders: keep the cycle (scheduler_impl.h). */
        ks_sched_suspended_t *p = s->susp;
        p->qp = qp;
        p->gen = gen;
        p->fw = fw;
        p->cs = cs;
        p->wp = wp;
        p->o = o;
        p->now = now;
        p->start = start;
        p->sampled = s->env.sample_plugins;
        p->deleted = 0;
        qp->assumed = 1; /* removal goes through binding_cycle.c's drop */
        return;
    }
    ks_pool_cycle_end(fw->pool, 1); /* before gen (and fw) may go */
    finish_cycle(s, qp, gen, fw, cs, wp, o, now, start);
}

int ks_sched_resume_one(ks_scheduler_t *s)
{
    ks_sched_suspended_t *p = s->susp;
    ks_qpod_t *qp;
    if (p == NULL || p->outstanding > 0 || p->qp == NULL)
        return 0;
    qp = p->qp;
    qp->assumed = 0;
    if (p->deleted) {
        ks_sched_ext_calls_free(s);
        ks_sched_xp_clear(s);
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
        ks_pod_free(ks_queue_remove(s->q, qp));
        ks_cycle_state_free(p->cs);
        ks_sched_wp_free(p->wp);
        free(p->o);
        ks_generation_unref(p->gen);
        free(p);
        s->susp = NULL;
        return 1;
    }
    s->env.sample_plugins = p->sampled;
    if (run_cycle_resume(s, p->fw, p->cs, qp->pod, p->o)) {
        qp->assumed = 1;
        return 1;
    }
    s->susp = NULL;
    finish_cycle(s, qp, p->gen, p->fw, p->cs, p->wp, p->o, p->now, p->start);
    free(p);
    return 1;
}
