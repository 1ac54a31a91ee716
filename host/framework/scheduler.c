/*
 * The scheduler object (scheduler.h): construction and teardown, the swap
 * to a new generation between cycles, the operations it offers plugins
 * through the host API (ks_fw_ops_t), counts for reporting, and the clock.
 * The stages live in their own files; scheduler_impl.h lists them and
 * states the out-of-memory policy they share.
 *
 * Ownership: see scheduler.h; teardown unreserves pods waiting at Permit
 * and frees every record. Loop thread only.
 */
#include "scheduler.h"

#include <stdlib.h>
#include <time.h>

#include "base/intern.h"
#include "base/log.h"
#include "plugin_async.h"
#include "pool.h"
#include "scheduler_impl.h"

/* --- clock ------------------------------------------------------------------ */

int64_t ks_scheduler_now(const ks_scheduler_t *s)
{
    if (s->clock_fn)
        return s->clock_fn(s->clock_ud);
    if (s->loop)
        return (int64_t)uv_now(s->loop);
    return s->vclock;
}

static int64_t env_now(ks_fw_env_t *e)
{
    return ks_scheduler_now((ks_scheduler_t *)e->ud);
}

void ks_scheduler_set_clock(ks_scheduler_t *s, int64_t (*now_ms)(void *ud),
                            void *ud)
{
    s->clock_fn = now_ms;
    s->clock_ud = ud;
}

/* --- operations for plugins ---------------------------------------------------- */

static void ops_event(ks_fw_env_t *e, const ks_pod_t *pod, const char *type,
                      const char *reason, const char *message)
{
    ks_scheduler_t *s = e->ud;
    ks_log(KS_LOGL_INFO, "event %s %s %s/%s: %s", type, reason, pod->ns,
           pod->name, message);
    if (s->opts.writer.event)
        s->opts.writer.event(s->opts.writer.ud, pod, type, reason, message);
}

/* --- plugins' API requests and PreBind's wait (ABI 1.4) -------------------- */

static ks_api_mode_t ops_api_mode(ks_fw_env_t *e)
{
    const ks_scheduler_t *s = e->ud;
    return s->opts.writer.api_mode;
}

static void *ops_api_send(ks_fw_env_t *e, const ks_api_request_t *req,
                          ks_api_done_fn done, void *ud, char *err,
                          size_t errlen)
{
    ks_scheduler_t *s = e->ud;
    if (s->opts.writer.api_send == NULL)
        return NULL;
    return s->opts.writer.api_send(s->opts.writer.ud, req, done, ud, err,
                                   errlen);
}

static void ops_api_abort(ks_fw_env_t *e, void *handle)
{
    ks_scheduler_t *s = e->ud;
    if (s->opts.writer.api_abort)
        s->opts.writer.api_abort(s->opts.writer.ud, handle);
}

static int ops_api_record(ks_fw_env_t *e, const char *plugin,
                          const ks_api_request_t *req)
{
    ks_scheduler_t *s = e->ud;
    if (s->opts.writer.api_record == NULL)
        return -1;
    return s->opts.writer.api_record(s->opts.writer.ud, plugin, req);
}

static int ops_pre_bind_resume(ks_fw_env_t *e, const void *inst,
                               const char *uid, ks_code_t code,
                               const char *reason)
{
    return ks_sched_pre_bind_resume(e->ud, inst, uid, code, reason);
}

static const ks_fw_ops_t sched_ops = {
    .bind = ks_sched_ops_bind,
    .delete_pod = ks_sched_ops_delete_pod,
    .set_nominated_node = ks_sched_ops_set_nominated,
    .event = ops_event,
    .waiting_pod_get = ks_sched_ops_wp_get,
    .waiting_pods_iterate = ks_sched_ops_wp_iterate,
    .waiting_pod_pod = ks_sched_ops_wp_pod,
    .waiting_pod_allow = ks_sched_ops_wp_allow,
    .waiting_pod_reject = ks_sched_wp_reject,
    .waiting_pod_pending_plugins = ks_sched_ops_wp_pending_plugins,
    .waiting_pod_permit_has = ks_sched_ops_wp_permit_has,
    .nominated_pods = ks_sched_ops_nominated_pods,
    .extenders_preempt = ks_sched_ops_ext_preempt,
    .extenders_preempt_result = ks_sched_ops_ext_preempt_result,
    .api_mode = ops_api_mode,
    .api_send = ops_api_send,
    .api_abort = ops_api_abort,
    .api_record = ops_api_record,
    .pre_bind_resume = ops_pre_bind_resume,
};

/* --- construction ------------------------------------------------------------ */

static int queue_less(void *ud, const ks_queued_pod_t *a,
                      const ks_queued_pod_t *b)
{
    ks_scheduler_t *s = ud;
    return ks_fw_less(s->gen->fws[0], a, b);
}

static void bind_env(ks_scheduler_t *s, ks_generation_t *g)
{
    size_t i;
    for (i = 0; i < g->n_fws; i++)
        ks_framework_set_env(g->fws[i], &s->env);
}

ks_scheduler_t *ks_scheduler_new(ks_generation_t *gen, ks_cache_t *cache,
                                 const ks_sched_opts_t *opts)
{
    ks_scheduler_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->snap = ks_snapshot_new();
    s->q = ks_queue_new(queue_less, s,
                        gen->cfg->pod_initial_backoff_seconds * 1000,
                        gen->cfg->pod_max_backoff_seconds * 1000);
    if (s->snap == NULL || s->q == NULL) {
        ks_queue_free(s->q);
        ks_snapshot_free(s->snap);
        free(s);
        return NULL;
    }
    s->gen = ks_generation_ref(gen);
    s->cache = cache;
    if (opts)
        s->opts = *opts;
    s->env.snapshot = s->snap;
    s->env.cache = cache;
    s->env.ops = &sched_ops;
    s->env.deterministic = s->opts.deterministic;
    s->env.bulk = s->opts.bulk;
    s->env.score_skipped = s->opts.score_skipped;
    s->env.rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
    s->env.now_ms = env_now;
    s->env.ud = s;
    ks_sched_timing_init(s);
    s->vclock = 1;
    if (s->opts.obs.queue_incoming)
        ks_queue_set_incoming(s->q, s->opts.obs.queue_incoming,
                              s->opts.obs.ud);
    ks_host_api_set_ops(&sched_ops);
    if (!s->opts.borrows_generation)
        bind_env(s, gen);
    return s;
}

void ks_scheduler_free(ks_scheduler_t *s)
{
    if (s == NULL)
        return;
    ks_scheduler_detach_loop(s);
    ks_fw_async_cancel(&s->env, NULL); /* a batch run's, before its loop */
    ks_sched_waiting_teardown(s);
    ks_sched_binding_teardown(s);
    ks_queue_free(s->q);
    ks_snapshot_free(s->snap);
    ks_sched_scratch_free(s);
    free(s->noms);
    ks_generation_unref(s->gen);
    free(s);
}

void ks_scheduler_set_seed(ks_scheduler_t *s, uint64_t seed)
{
    s->env.rng = seed;
}

void ks_scheduler_set_generation(ks_scheduler_t *s, ks_generation_t *gen)
{
    ks_generation_t *old = s->gen;
    if (!s->opts.borrows_generation)
        bind_env(s, gen);
    s->gen = gen;
    ks_queue_set_less(s->q, queue_less, s);
    ks_generation_unref(old);
}

ks_generation_t *ks_scheduler_generation(const ks_scheduler_t *s)
{
    return s->gen;
}

/* --- reporting ------------------------------------------------------------------- */

void ks_scheduler_set_bulk(ks_scheduler_t *s, int mode)
{
    s->opts.bulk = mode;
    s->env.bulk = mode;
}

void ks_scheduler_set_full_eval(ks_scheduler_t *s, const char *ns,
                                const char *name)
{
    s->opts.full_eval_ns = name ? ns : NULL;
    s->opts.full_eval_name = name;
}

ks_sched_stats_t ks_scheduler_stats(const ks_scheduler_t *s)
{
    ks_sched_stats_t st = s->stats;
    size_t i;
    st.bulk_compared =
        __atomic_load_n(&s->env.bulk_compared, __ATOMIC_RELAXED);
    st.bulk_mismatches =
        __atomic_load_n(&s->env.bulk_mismatches, __ATOMIC_RELAXED);
    for (i = 0; i < s->gen->n_fws; i++) {
        ks_pool_counts_t c = ks_pool_counts(s->gen->fws[i]->pool);
        st.pool_shared += c.shared;
        st.pool_inline += c.inline_jobs;
        st.pool_shared_items += c.shared_items;
        st.pool_inline_items += c.inline_items;
        st.pool_gate_cycles += c.gate_cycles;
        st.pool_gate_inline += c.gate_inline_cycles;
        st.pool_stall_cycles += c.stall_cycles;
        if (st.pool_gate_ratio == 0)
            st.pool_gate_ratio = c.gate_ratio;
    }
    return st;
}

size_t ks_scheduler_pending(const ks_scheduler_t *s, int where)
{
    if (where == -1)
        return s->n_waiting + s->n_binding;
    return ks_queue_len(s->q, where);
}

typedef struct pend_ctx {
    void (*fn)(void *ud, const ks_pod_t *pod, const char *message, int gated);
    void *ud;
} pend_ctx_t;

static void pend_visit(void *ud, ks_qpod_t *qp)
{
    pend_ctx_t *c = ud;
    if (qp->pod == NULL || qp->where == KS_Q_INFLIGHT)
        return;
    c->fn(c->ud, qp->pod, qp->last_message ? qp->last_message : "",
          qp->gated);
}

void ks_scheduler_foreach_pending(ks_scheduler_t *s,
                                  void (*fn)(void *ud, const ks_pod_t *pod,
                                             const char *message, int gated),
                                  void *ud)
{
    pend_ctx_t c = {fn, ud};
    ks_queue_foreach(s->q, pend_visit, &c);
}

int ks_scheduler_pod_attempts(const ks_scheduler_t *s, const char *uid,
                              uint32_t *attempts, int64_t *first_attempt_ms,
                              int *flushed)
{
    /* Uids in the queue are interned: look the string up by content. */
    const char *key = ks_intern_lookup(ks_intern_global(), uid);
    const ks_qpod_t *qp = key ? ks_queue_get(s->q, key) : NULL;
    if (qp == NULL)
        return KS_ENOTFOUND;
    *attempts = qp->q.attempts;
    *first_attempt_ms = qp->q.initial_attempt_ms;
    *flushed = qp->flushed;
    return 0;
}

typedef struct unsched_ctx {
    void (*fn)(void *ud, const char *plugin, const char *profile);
    void *ud;
} unsched_ctx_t;

static void unsched_visit(void *ud, ks_qpod_t *qp)
{
    unsched_ctx_t *c = ud;
    unsigned i;
    for (i = 0; i < qp->n_plugins; i++)
        c->fn(c->ud, qp->plugins[i], qp->pod->scheduler_name);
}

void ks_scheduler_foreach_unsched_plugin(ks_scheduler_t *s,
                                         void (*fn)(void *ud,
                                                    const char *plugin,
                                                    const char *profile),
                                         void *ud)
{
    unsched_ctx_t c = {fn, ud};
    ks_queue_foreach_unsched(s->q, unsched_visit, &c);
}
