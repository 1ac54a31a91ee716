/*
 * Waiting pods (upstream waitingPodsMap): assumed pods that a Permit plugin
 * asked to wait. Each waits until every such plugin allows it, one
 * rejects it, or the shortest timeout passes; then it moves to the ready
 * list and its binding cycle runs from the next step (binding_cycle.c).
 *
 * The records (ks_waiting_pod_t) are the scheduler's; each holds its pod's
 * cycle state and a reference on the generation its cycle started with.
 * A record is in at most one of the waiting list, the ready list and the
 * bindings in flight (binding_cycle.c). Plugins reach waiting pods through
 * the host API (get, iterate, allow, reject; the name-based allow and
 * reject only with a name ks_sched_ops_wp_permit_has accepts).
 * Loop thread only. Allocates nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>

#include "scheduler_impl.h"

void ks_sched_wp_free(ks_waiting_pod_t *wp)
{
    ks_cycle_state_free(wp->cs);
    ks_generation_unref(wp->gen);
    free(wp);
}

void ks_sched_wp_wait(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                      uint64_t wait_mask, uint64_t timeout_ms,
                      const char *timeout_plugin, int64_t now)
{
    if (wp->qp->deleted) {
        /* Deleted by a plugin during its own Reserve or Permit: no wait,
         * its binding cycle drops it. */
        wp->deleted = 1;
        wp->state = WP_REJECTED;
        ks_sched_ready_push(s, wp);
        return;
    }
    wp->pending = wait_mask;
    wp->timeout_ms = timeout_ms;
    wp->timeout_plugin = timeout_plugin;
    wp->deadline = now + (int64_t)timeout_ms;
    wp->wait_t0 = ks_fw_mono_seconds();
    wp->registered = 1;
    wp->wnext = s->waiting;
    wp->wprev = NULL;
    if (s->waiting)
        s->waiting->wprev = wp;
    s->waiting = wp;
    s->n_waiting++;
    s->stats.waiting++;
}

void ks_sched_ready_push(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    wp->rnext = NULL;
    if (s->ready_tail)
        s->ready_tail->rnext = wp;
    else
        s->ready_head = wp;
    s->ready_tail = wp;
    ks_scheduler_kick(s);
}

ks_waiting_pod_t *ks_sched_ready_pop(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp = s->ready_head;
    if (wp == NULL)
        return NULL;
    s->ready_head = wp->rnext;
    if (s->ready_head == NULL)
        s->ready_tail = NULL;
    return wp;
}

static void wp_unregister(ks_waiting_pod_t *wp)
{
    ks_scheduler_t *s = wp->s;
    if (!wp->registered)
        return;
    if (wp->wprev)
        wp->wprev->wnext = wp->wnext;
    else
        s->waiting = wp->wnext;
    if (wp->wnext)
        wp->wnext->wprev = wp->wprev;
    wp->registered = 0;
    s->n_waiting--;
}

int ks_sched_ops_wp_permit_has(ks_waiting_pod_t *wp, const char *plugin)
{
    size_t i;
    if (plugin == NULL)
        return 0;
    for (i = 0; i < wp->fw->n_points[KS_EP_PERMIT]; i++)
        if (strcmp(wp->fw->points[KS_EP_PERMIT][i].inst->name, plugin) == 0)
            return 1;
    return 0;
}

void ks_sched_ops_wp_allow(ks_waiting_pod_t *wp, const char *plugin)
{
    size_t i;
    if (wp->state != WP_OPEN)
        return;
    for (i = 0; i < wp->fw->n_points[KS_EP_PERMIT]; i++)
        if (strcmp(wp->fw->points[KS_EP_PERMIT][i].inst->name, plugin) == 0)
            wp->pending &= ~(1ull << i);
    if (wp->pending == 0) {
        wp->state = WP_ALLOWED;
        wp_unregister(wp);
        ks_sched_ready_push(wp->s, wp);
    }
}

uint32_t ks_sched_ops_wp_pending_plugins(ks_waiting_pod_t *wp,
                                         const char **out, uint32_t cap)
{
    uint32_t n = 0;
    size_t i;
    if (wp->state != WP_OPEN)
        return 0;
    for (i = 0; i < wp->fw->n_points[KS_EP_PERMIT] && i < 64; i++) {
        if (!(wp->pending & (1ull << i)))
            continue;
        if (n < cap)
            out[n] = wp->fw->points[KS_EP_PERMIT][i].inst->name;
        n++;
    }
    return n;
}

void ks_sched_wp_reject(ks_waiting_pod_t *wp, const char *plugin,
                        const char *msg)
{
    if (wp->state != WP_OPEN)
        return;
    wp->state = WP_REJECTED;
    snprintf(wp->message, sizeof wp->message, "%s", msg ? msg : "");
    wp->timeout_plugin = plugin;
    wp_unregister(wp);
    ks_sched_ready_push(wp->s, wp);
}

ks_waiting_pod_t *ks_sched_waiting_get(ks_scheduler_t *s, const char *uid)
{
    ks_waiting_pod_t *wp;
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (strcmp(wp->qp->pod->uid, uid) == 0)
            return wp;
    return NULL;
}

ks_waiting_pod_t *ks_sched_ops_wp_get(ks_fw_env_t *e, const char *uid)
{
    return ks_sched_waiting_get(e->ud, uid);
}

void ks_sched_ops_wp_iterate(ks_fw_env_t *e, ks_waiting_pod_fn fn, void *ud)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp, *next;
    for (wp = s->waiting; wp; wp = next) {
        next = wp->wnext;
        fn(wp, ud);
    }
}

const ks_pod_t *ks_sched_ops_wp_pod(ks_waiting_pod_t *wp)
{
    return wp->qp->pod;
}

int ks_sched_waiting_drop(ks_scheduler_t *s, const ks_qpod_t *qp)
{
    ks_waiting_pod_t *wp;
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            wp->state = WP_REJECTED;
            wp_unregister(wp);
            ks_sched_ready_push(s, wp);
            return 1;
        }
    for (wp = s->ready_head; wp; wp = wp->rnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            return 1;
        }
    return 0;
}

void ks_sched_fire_timeouts(ks_scheduler_t *s, int64_t now)
{
    ks_waiting_pod_t *wp, *next;
    for (wp = s->waiting; wp; wp = next) {
        next = wp->wnext;
        if (wp->deadline >= 0 && wp->deadline <= now) {
            char msg[512], dur[64];
            ks_go_duration(wp->timeout_ms, dur, sizeof dur);
            snprintf(msg, sizeof msg,
                     "rejected due to timeout after waiting %s at plugin %s",
                     dur, wp->timeout_plugin);
            ks_sched_wp_reject(wp, wp->timeout_plugin, msg);
        }
    }
}

int64_t ks_sched_waiting_deadline(const ks_scheduler_t *s)
{
    int64_t d = -1;
    ks_waiting_pod_t *wp;
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (wp->deadline >= 0 && (d < 0 || wp->deadline < d))
            d = wp->deadline;
    return d;
}

void ks_sched_waiting_teardown(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp, *next;
    /* Pods waiting or ready: their pods are in the cache (assumed). Detach
     * the whole waiting list first, so that a plugin's Unreserve that walks
     * or rejects waiting pods sees none and nothing moves to the ready list
     * during teardown. */
    wp = s->waiting;
    s->waiting = NULL;
    s->n_waiting = 0;
    for (; wp; wp = next) {
        next = wp->wnext;
        wp->registered = 0;
        wp->state = WP_REJECTED;
        s->env.sample_plugins = wp->sampled;
        ks_fw_run_unreserve(wp->fw, wp->cs, wp->qp->pod, wp->node);
        ks_sched_wp_free(wp);
    }
    while ((wp = ks_sched_ready_pop(s)) != NULL)
        ks_sched_wp_free(wp);
}
