/* The queue as the console reads it (scheduler.h: ks_queued_info_t): a
 * read-only walk over the queue's records, for /debug/queue and
 * /debug/explain. Nothing here runs unless they are asked. */
#include <string.h>

#include "base/intern.h"
#include "scheduler_impl.h"

static void info_of(const ks_qpod_t *qp, ks_queued_info_t *qi)
{
    memset(qi, 0, sizeof *qi);
    qi->pod = qp->pod;
    qi->where = qp->where;
    qi->gated = qp->gated;
    qi->message = qp->last_message;
    qi->plugins = qp->plugins;
    qi->n_plugins = qp->n_plugins;
    qi->pending_mask = qp->pending_mask;
    qi->attempts = qp->q.attempts;
    qi->backoff_expiry_ms = qp->backoff_expiry_ms;
    qi->unsched_since_ms = qp->unsched_since_ms;
}

typedef struct visit_ctx {
    void (*fn)(void *ud, const ks_queued_info_t *qi);
    void *ud;
} visit_ctx_t;

static void visit(void *ud, ks_qpod_t *qp)
{
    visit_ctx_t *c = ud;
    ks_queued_info_t qi;
    if (qp->pod == NULL || qp->deleted)
        return;
    info_of(qp, &qi);
    c->fn(c->ud, &qi);
}

void ks_scheduler_foreach_queued(ks_scheduler_t *s,
                                 void (*fn)(void *ud,
                                            const ks_queued_info_t *qi),
                                 void *ud)
{
    visit_ctx_t c = {fn, ud};
    ks_queue_foreach(s->q, visit, &c);
}

const ks_pod_t *ks_scheduler_queued_pod(const ks_scheduler_t *s,
                                        const char *uid,
                                        ks_queued_info_t *qi)
{
    /* Uids in the queue are interned: look the string up by content. */
    const char *key = ks_intern_lookup(ks_intern_global(), uid);
    const ks_qpod_t *qp = key ? ks_queue_get(s->q, key) : NULL;
    if (qp == NULL || qp->pod == NULL || qp->deleted)
        return NULL;
    if (qi)
        info_of(qp, qi);
    return qp->pod;
}
