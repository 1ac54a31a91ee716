/*
 * Pods in and out of the scheduling queue (upstream's queue operations in
 * eventhandlers.go and the failure handler of schedule_one.go): adding a
 * pending pod (PreEnqueue), removing one wherever it is, cluster events
 * that move unschedulable pods back (EnqueueExtensions) and lift
 * scheduling gates, recording a failed attempt and requeueing the pod,
 * and the deletion of a preemption victim, which is such an event.
 *
 * Ownership: a pod handed to ks_scheduler_add_pod belongs to the queue
 * (then to the cache once assumed); a failure's message and interned
 * plugin names are kept on the pod's queue record.
 * Loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "base/log.h"
#include "call_board.h"
#include "cluster_event.h"
#include "scheduler_impl.h"

/* --- events ----------------------------------------------------------------- */

/* One event of one kind (an update carries one property's bit), with its
 * objects (upstream clusterEvent). */
typedef struct ev_ctx {
    ks_scheduler_t *s;
    ks_cluster_event_t ev;
    const char *label;
    const void *old_obj, *new_obj;
    int has_objs;          /* hints are asked only with objects */
    const ks_qpod_t *skip; /* a pod the event must not move */
} ev_ctx_t;

static ks_plugin_inst_t *inst_named(ks_framework_t *fw, const char *name)
{
    size_t i;
    for (i = 0; i < fw->n_insts; i++)
        if (strcmp(fw->insts[i]->name, name) == 0)
            return fw->insts[i];
    return NULL;
}

/* The k-th registered hint of `in` for the pod: 1 for Queue (no hint, no
 * objects, or any value but QueueSkip), 0 for QueueSkip. Timed for
 * upstream's queueing_hint_execution_duration_seconds. */
static int hint_queues(const ev_ctx_t *c, ks_plugin_inst_t *in, uint32_t k,
                       const ks_pod_t *pod)
{
    ks_queueing_hint_fn fn = in->hints[k];
    const ks_sched_observer_t *obs = &c->s->opts.obs;
    ks_board_slot_t *slot;
    double t0;
    int h;
    if (fn == NULL || !c->has_objs)
        return 1;
    t0 = obs->queueing_hint ? ks_fw_mono_seconds() : 0.0;
    slot = ks_call_enter(in->call_id, KS_CALL_EVENTS, in->deadline_ms, pod,
                         pod->ns, pod->name);
    h = (int)fn(in->self, pod, c->old_obj, c->new_obj);
    ks_call_leave(slot);
    if (obs->queueing_hint)
        obs->queueing_hint(obs->ud, in->name, c->label,
                           h == KS_QUEUE_SKIP ? "QueueSkip"
                           : h == KS_QUEUE    ? "Queue"
                                              : "Error",
                           ks_fw_mono_seconds() - t0);
    return h != KS_QUEUE_SKIP;
}

/* Does plugin `in` (one that rejected the pod) queue it for this event? */
static int plugin_queues(const ev_ctx_t *c, ks_plugin_inst_t *in,
                         const ks_pod_t *pod)
{
    uint32_t k;
    if (in == NULL || in->every_event)
        return 1;
    for (k = 0; k < in->n_events; k++)
        if (ks_cluster_event_covers(in->events[k], c->ev) &&
            hint_queues(c, in, k, pod))
            return 1;
    return 0;
}

/* upstream isPodWorthRequeuing over the pod's rejecting plugins
 * (Unschedulable and Pending): a ks_qmove. */
static int ev_worth(void *ud, const ks_qpod_t *qp)
{
    ev_ctx_t *c = ud;
    ks_framework_t *fw;
    int how = KS_QMOVE_SKIP;
    unsigned i;
    if (qp == c->skip)
        return KS_QMOVE_SKIP;
    if (qp->n_plugins == 0 || ks_cluster_event_is_wildcard(c->ev))
        return KS_QMOVE_AFTER_BACKOFF; /* no rejector known: any event */
    fw = ks_generation_profile(c->s->gen, qp->pod->scheduler_name);
    if (fw == NULL)
        return KS_QMOVE_SKIP;
    for (i = 0; i < qp->n_plugins; i++) {
        if (!plugin_queues(c, inst_named(fw, qp->plugins[i]), qp->pod))
            continue;
        if (qp->pending_mask & (1u << i))
            return KS_QMOVE_NOW; /* a Pending plugin's Queue */
        how = KS_QMOVE_AFTER_BACKOFF;
        if (qp->pending_mask == 0)
            break;
    }
    return how;
}

static void regate(void *ud, ks_qpod_t *qp)
{
    ks_scheduler_t *s = ud;
    ks_framework_t *fw;
    ks_status_t st;
    if (!qp->gated)
        return;
    fw = ks_generation_profile(s->gen, qp->pod->scheduler_name);
    if (fw && ks_fw_run_pre_enqueue(fw, qp->pod, &st) == KS_SUCCESS)
        ks_queue_activate(s->q, qp, ks_scheduler_now(s));
}

/* One event of one kind through the pool, timed for upstream's
 * event_handling_duration_seconds. */
static void dispatch(ev_ctx_t *c)
{
    const ks_sched_observer_t *obs = &c->s->opts.obs;
    double t0 = obs->event_handled ? ks_fw_mono_seconds() : 0.0;
    c->label = ks_cluster_event_label(c->ev, c->old_obj, c->new_obj);
    ks_queue_move_on_event(c->s->q, ks_scheduler_now(c->s), ev_worth, c);
    if (obs->event_handled)
        obs->event_handled(obs->ud, c->label, ks_fw_mono_seconds() - t0);
}

static void on_event(ks_scheduler_t *s, ks_cluster_event_t ev,
                     const void *old_obj, const void *new_obj,
                     const ks_qpod_t *skip)
{
    ev_ctx_t c = {s, ev, NULL, old_obj, new_obj,
                  old_obj != NULL || new_obj != NULL, skip};
    uint32_t whole = KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE;
    uint32_t kinds = ev.action & ~whole, bit;
    ks_queue_note_move(s->q, s->cycle);
    /* Only a pod's own update can lift its scheduling gates. */
    if ((ev.resource & KS_RES_POD) && (ev.action & KS_ACT_UPDATE))
        ks_queue_foreach_unsched(s->q, regate, s);
    if (ks_cluster_event_is_wildcard(ev) || kinds == 0) {
        dispatch(&c);
    } else {
        /* As upstream, an update that changed several properties is one
         * event per property. */
        if (ev.action & (KS_ACT_ADD | KS_ACT_DELETE)) {
            c.ev.action = ev.action & (KS_ACT_ADD | KS_ACT_DELETE);
            dispatch(&c);
        }
        for (bit = 1; bit != 0 && bit <= kinds; bit <<= 1) {
            if (!(kinds & bit))
                continue;
            c.ev.action = bit | KS_ACT_UPDATE;
            dispatch(&c);
        }
    }
    ks_scheduler_kick(s);
}

void ks_sched_on_event_except(ks_scheduler_t *s, ks_cluster_event_t ev,
                              const ks_qpod_t *skip)
{
    on_event(s, ev, NULL, NULL, skip);
}

void ks_scheduler_on_event(ks_scheduler_t *s, ks_cluster_event_t ev)
{
    on_event(s, ev, NULL, NULL, NULL);
}

void ks_scheduler_on_cluster_event(ks_scheduler_t *s, ks_cluster_event_t ev,
                                   const void *old_obj, const void *new_obj)
{
    on_event(s, ev, old_obj, new_obj, NULL);
}

/* A pod a plugin deletes (a preemption victim, or any pod): one waiting
 * at Permit is rejected, as upstream's preemption does; any other is gone
 * at once for everyone, the observer and the writer told first. A bound
 * pod leaves the cache; a queued one leaves the queue; one in flight (in
 * its own scheduling cycle, ready to bind or binding) is marked deleted
 * and its cycle drops it (unreserved and forgotten) instead of binding it.
 * The deletion is a pod deletion event for the others. -1 when no pod of
 * this uid is known. */
int ks_sched_ops_delete_pod(ks_fw_env_t *e, const ks_pod_t *pod)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp = ks_sched_waiting_get(s, pod->uid);
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_DELETE};
    /* A lookup, not ks_intern_str (see ks_scheduler_remove_pod). */
    const char *in = ks_intern_lookup(ks_intern_global(), pod->uid);
    ks_qpod_t *qp = in ? ks_queue_get(s->q, in) : NULL;
    if (wp != NULL) {
        ks_sched_wp_reject(wp, "preemption", "preempted");
        return 0;
    }
    if (qp != NULL && qp->deleted)
        return 0; /* already deleted; its cycle drops it */
    if (qp == NULL && ks_cache_get_pod(s->cache, pod->uid) == NULL)
        return -1;
    /* `pod` may be the queue's own: tell everyone before it is freed. */
    if (s->opts.obs.deleted)
        s->opts.obs.deleted(s->opts.obs.ud, pod);
    if (s->opts.writer.delete_pod)
        s->opts.writer.delete_pod(s->opts.writer.ud, pod);
    if (qp == NULL) {
        /* An assigned pod's deletion: the hints read it while it exists. */
        ks_scheduler_on_cluster_event(s, ev, pod, NULL);
        return ks_cache_remove_pod(s->cache, pod->uid, NULL) != 0 ? -1 : 0;
    } else if (qp->where != KS_Q_INFLIGHT) {
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
        ks_pod_free(ks_queue_remove(s->q, qp));
    } else {
        qp->deleted = 1;
        if (qp->assumed && !ks_sched_waiting_drop(s, qp))
            (void)ks_sched_binding_drop(s, qp);
    }
    ks_scheduler_on_event(s, ev);
    return 0;
}

/* --- failures ---------------------------------------------------------------- */

/* record_failure with the Pending plugins among `plugins` (pending_mask,
 * bit i for plugins[i]). */
static void record_failure(ks_scheduler_t *s, ks_qpod_t *qp, const char *msg,
                           const char *const *plugins, unsigned n_plugins,
                           uint32_t pending_mask, int error)
{
    char *copy = strdup(msg);
    unsigned i;
    /* Out of memory, the previous message stays (it is only shown). */
    if (copy != NULL) {
        free(qp->last_message);
        qp->last_message = copy;
    } else {
        ks_log(KS_LOGL_ERROR, "%s/%s: out of memory recording: %s",
               qp->pod->ns, qp->pod->name, msg);
    }
    qp->n_plugins = 0;
    qp->pending_mask = 0;
    /* Interned: a plugin's own name string goes away with its .so when a
     * reload retires it, while the pod may stay queued much longer. A name
     * that cannot be interned is left out; with none left, any event may
     * move the pod. */
    for (i = 0; i < n_plugins && i < KS_QPOD_MAX_PLUGINS; i++) {
        const char *name =
            plugins[i] ? ks_intern_str(ks_intern_global(), plugins[i]) : NULL;
        if (name == NULL)
            continue;
        if (pending_mask & (1u << i))
            qp->pending_mask |= 1u << qp->n_plugins;
        qp->plugins[qp->n_plugins++] = name;
    }
    if (s->opts.obs.failed)
        s->opts.obs.failed(s->opts.obs.ud, qp->pod, msg);
    if (s->opts.writer.failed)
        s->opts.writer.failed(s->opts.writer.ud, qp->pod, msg, error);
}

void ks_sched_record_failure(ks_scheduler_t *s, ks_qpod_t *qp,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error)
{
    record_failure(s, qp, msg, plugins, n_plugins, 0, error);
}

static void requeue(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                    const char *msg, const char *const *plugins,
                    unsigned n_plugins, uint32_t pending_mask, int error)
{
    if (qp->deleted) { /* deleted during its cycle: dropped, not requeued */
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
        ks_pod_free(ks_queue_remove(s->q, qp));
        return;
    }
    record_failure(s, qp, msg, plugins, n_plugins, pending_mask, error);
    ks_queue_requeue_failed(s->q, qp, now, error);
}

void ks_sched_requeue_failed(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error)
{
    requeue(s, qp, now, msg, plugins, n_plugins, 0, error);
}

void ks_sched_requeue_rejected(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                               const char *msg, const char *const *plugins,
                               unsigned n_plugins, uint32_t pending_mask)
{
    requeue(s, qp, now, msg, plugins, n_plugins, pending_mask, 0);
}

/* --- adding and removing pods ---------------------------------------------------- */

int ks_scheduler_add_pod(ks_scheduler_t *s, ks_pod_t *pod)
{
    ks_framework_t *fw = ks_generation_profile(s->gen, pod->scheduler_name);
    const char *nominated = pod->nominated_node_name;
    ks_status_t st;
    char *gate_msg = NULL;
    ks_qpod_t *qp;
    int gated;
    if (fw == NULL)
        return 1;
    gated = ks_fw_run_pre_enqueue(fw, pod, &st) != KS_SUCCESS;
    if (gated) {
        char msg[1024];
        ks_status_message(&st, msg, sizeof msg);
        if ((gate_msg = strdup(msg)) == NULL)
            return KS_ENOMEM;
    }
    /* The pod's nomination (from the cluster) first: it is the step that
     * can fail, and queueing cannot be undone without freeing the pod. */
    if (nominated && nominated[0] && ks_sched_nominate(s, pod, nominated)) {
        free(gate_msg);
        return KS_ENOMEM;
    }
    qp = ks_queue_add(s->q, pod, ks_scheduler_now(s), gated);
    if (qp == NULL) {
        if (nominated && nominated[0])
            ks_sched_nominate(s, pod, ""); /* clearing never fails */
        pod->nominated_node_name = nominated;
        free(gate_msg);
        return KS_ENOMEM;
    }
    if (gated) {
        free(qp->last_message);
        qp->last_message = gate_msg;
    }
    ks_scheduler_kick(s);
    return 0;
}

int ks_scheduler_remove_pod(ks_scheduler_t *s, const char *uid)
{
    /* A lookup, not ks_intern_str: that would pin every removed pod's
     * uid for the life of the process. */
    const char *in = ks_intern_lookup(ks_intern_global(), uid);
    ks_qpod_t *qp = in ? ks_queue_get(s->q, in) : NULL;
    if (qp == NULL)
        return KS_ENOTFOUND;
    if (!qp->assumed) {
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
        ks_pod_free(ks_queue_remove(s->q, qp));
        return 0;
    }
    /* Assumed: waiting at Permit, or allowed and in the ready list. */
    if (ks_sched_waiting_drop(s, qp)) {
        ks_sched_run_ready(s);
        return 0;
    }
    /* Binding in flight: dropped when the cluster answers. */
    if (ks_sched_binding_drop(s, qp))
        return 0;
    return KS_ENOTFOUND;
}
