/*
 * What makes the scheduler run: one step (Permit timeouts, the queue's
 * flushes, ready binding cycles, one scheduling cycle), and the two
 * drivers that repeat it.
 *
 *  - batch (ks_scheduler_run_batch): a virtual clock jumps to the next
 *    deadline when nothing else can run; the run ends when nothing can
 *    change any more, or after KS_BATCH_STALL_MS of simulated time without
 *    a binding. While extender calls are in flight it runs the
 *    extenders' own uv loop instead (real time; the simulated clock
 *    stands still).
 *  - libuv (ks_scheduler_attach_loop): an idle handle runs steps while
 *    there is work, and one timer is armed for the next deadline, on the
 *    loop's clock. The handles live in the scheduler; detach closes them
 *    (the loop must run their close before the scheduler is freed).
 *
 * Loop thread only. Allocates nothing.
 */
#include <stdint.h>

#include "plugin_async.h"
#include "scheduler_impl.h"

#define UNSCHED_FLUSH_MS (5 * 60 * 1000)
#define KS_BATCH_STALL_MS (15 * 60 * 1000)
#define IDLE_BATCH 64 /* steps per loop iteration */

/* The next backoff expiry or Permit timeout, or -1. */
static int64_t next_deadline(const ks_scheduler_t *s)
{
    int64_t d = ks_queue_next_backoff(s->q);
    int64_t w = ks_sched_waiting_deadline(s);
    if (w >= 0 && (d < 0 || w < d))
        d = w;
    return d;
}

int ks_scheduler_step(ks_scheduler_t *s)
{
    int64_t now = ks_scheduler_now(s);
    ks_sched_fire_timeouts(s, now);
    /* The 5-minute flush of the unschedulable pool stands in for cluster
     * changes nobody reported; a batch run has none, so it is off there. */
    ks_queue_flush(s->q, now, s->batch ? INT64_MAX : UNSCHED_FLUSH_MS);
    if (ks_sched_run_ready(s))
        return 1;
    /* A cycle suspended for extenders: resumed once they answered; no
     * other scheduling cycle starts meanwhile. */
    if (s->susp != NULL) {
        if (!ks_sched_resume_one(s))
            return 0;
        ks_sched_run_ready(s);
        return 1;
    }
    if (ks_queue_len(s->q, KS_Q_ACTIVE) > 0) {
        ks_sched_schedule_one(s);
        ks_sched_run_ready(s);
        return 1;
    }
    return 0;
}

/* --- batch ------------------------------------------------------------------- */

void ks_scheduler_run_batch(ks_scheduler_t *s)
{
    uint64_t bound = s->stats.bound;
    int64_t progress_at = ks_scheduler_now(s);
    s->batch = 1;
    if (s->env.loop == NULL)
        s->env.loop = ks_sched_batch_loop(s); /* plugins' timers, answers */
    for (;;) {
        int64_t d;
        if (ks_scheduler_step(s))
            continue;
        /* Extender calls or plugins' timers and API requests in flight:
         * run their loop (real time) until something answers; the
         * simulated clock stands still. */
        if ((ks_sched_ext_pending(s) || ks_fw_async_count() > 0) &&
            s->ext_loop != NULL) {
            uv_run(s->ext_loop, UV_RUN_ONCE);
            continue;
        }
        if (s->stats.bound != bound) {
            bound = s->stats.bound;
            progress_at = ks_scheduler_now(s);
        }
        d = next_deadline(s);
        if (d < 0)
            break;
        /* Pods that keep timing out at Permit can requeue each other for
         * ever (each forget is a pod deletion for the others); a batch run
         * ends once KS_BATCH_STALL_MS of simulated time pass without a
         * binding. */
        if (d - progress_at > KS_BATCH_STALL_MS)
            break;
        if (s->clock_fn == NULL && d > s->vclock)
            s->vclock = d;
        else if (s->clock_fn != NULL)
            break; /* an external clock: the caller advances it */
    }
}

/* --- libuv ------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    ks_scheduler_t *s = t->data;
    ks_scheduler_kick(s);
}

static void arm_timer(ks_scheduler_t *s)
{
    int64_t d, now;
    if (!s->attached)
        return;
    d = next_deadline(s);
    if (d < 0) {
        uv_timer_stop(&s->timer);
        return;
    }
    now = ks_scheduler_now(s);
    uv_timer_start(&s->timer, on_timer, d > now ? (uint64_t)(d - now) : 0, 0);
}

static void on_idle(uv_idle_t *h)
{
    ks_scheduler_t *s = h->data;
    int i;
    /* A batch of cycles per loop iteration keeps the loop responsive. */
    for (i = 0; i < IDLE_BATCH; i++)
        if (!ks_scheduler_step(s))
            break;
    if (i < IDLE_BATCH) {
        uv_idle_stop(&s->idle);
        s->idle_on = 0;
        arm_timer(s);
    }
}

void ks_scheduler_kick(ks_scheduler_t *s)
{
    if (!s->attached || s->idle_on)
        return;
    s->idle_on = 1;
    uv_idle_start(&s->idle, on_idle);
}

/* 0, or KS_EIO when libuv refuses a handle (nothing stays attached). */
int ks_scheduler_attach_loop(ks_scheduler_t *s, uv_loop_t *loop)
{
    if (uv_idle_init(loop, &s->idle) != 0)
        return KS_EIO;
    if (uv_timer_init(loop, &s->timer) != 0) {
        uv_close((uv_handle_t *)&s->idle, NULL);
        return KS_EIO;
    }
    s->loop = loop;
    s->env.loop = loop;
    s->idle.data = s;
    s->timer.data = s;
    s->attached = 1;
    ks_scheduler_kick(s);
    return 0;
}

void ks_scheduler_detach_loop(ks_scheduler_t *s)
{
    if (!s->attached)
        return;
    ks_sched_ext_detach(s);
    /* Plugins' timers and requests go with the loop (their callbacks
     * never run); so does every PreBind waiting for them. */
    ks_fw_async_cancel(&s->env, NULL);
    s->env.loop = NULL;
    s->attached = 0;
    uv_idle_stop(&s->idle);
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->idle, NULL);
    uv_close((uv_handle_t *)&s->timer, NULL);
    s->idle_on = 0;
}
