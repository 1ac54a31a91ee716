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
#include "scheduler_impl.h"

/* --- events ----------------------------------------------------------------- */

typedef struct ev_ctx {
    ks_scheduler_t *s;
    ks_cluster_event_t ev;
    const ks_qpod_t *skip; /* a pod the event must not move */
} ev_ctx_t;

static int ev_matters(void *ud, const ks_qpod_t *qp)
{
    ev_ctx_t *c = ud;
    ks_framework_t *fw =
        ks_generation_profile(c->s->gen, qp->pod->scheduler_name);
    unsigned i;
    if (qp == c->skip)
        return 0;
    if (qp->n_plugins == 0)
        return 1; /* no rejecting plugin known: any event may help */
    if (fw == NULL)
        return 0;
    for (i = 0; i < qp->n_plugins; i++)
        if (ks_fw_event_matters(fw, qp->plugins[i], c->ev))
            return 1;
    return 0;
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

void ks_sched_on_event_except(ks_scheduler_t *s, ks_cluster_event_t ev,
                              const ks_qpod_t *skip)
{
    ev_ctx_t c = {s, ev, skip};
    ks_queue_note_move(s->q, s->cycle);
    /* Only a pod's own update can lift its scheduling gates. */
    if ((ev.resource & KS_RES_POD) && (ev.action & KS_ACT_UPDATE))
        ks_queue_foreach_unsched(s->q, regate, s);
    ks_queue_move_on_event(s->q, ks_scheduler_now(s), ev_matters, &c);
    ks_scheduler_kick(s);
}

void ks_scheduler_on_event(ks_scheduler_t *s, ks_cluster_event_t ev)
{
    ks_sched_on_event_except(s, ev, NULL);
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
        if (ks_cache_remove_pod(s->cache, pod->uid, NULL) != 0)
            return -1;
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

void ks_sched_record_failure(ks_scheduler_t *s, ks_qpod_t *qp,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error)
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
    /* Interned: a plugin's own name string goes away with its .so when a
     * reload retires it, while the pod may stay queued much longer. A name
     * that cannot be interned is left out; with none left, any event may
     * move the pod. */
    for (i = 0; i < n_plugins && i < KS_QPOD_MAX_PLUGINS; i++) {
        const char *name =
            plugins[i] ? ks_intern_str(ks_intern_global(), plugins[i]) : NULL;
        if (name)
            qp->plugins[qp->n_plugins++] = name;
    }
    if (s->opts.obs.failed)
        s->opts.obs.failed(s->opts.obs.ud, qp->pod, msg);
    if (s->opts.writer.failed)
        s->opts.writer.failed(s->opts.writer.ud, qp->pod, msg, error);
}

void ks_sched_requeue_failed(ks_scheduler_t *s, ks_qpod_t *qp, int64_t now,
                             const char *msg, const char *const *plugins,
                             unsigned n_plugins, int error)
{
    if (qp->deleted) { /* deleted during its cycle: dropped, not requeued */
        ks_sched_nominate(s, qp->pod, ""); /* clearing never fails */
        ks_pod_free(ks_queue_remove(s->q, qp));
        return;
    }
    ks_sched_record_failure(s, qp, msg, plugins, n_plugins, error);
    ks_queue_requeue_failed(s->q, qp, now, error);
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
