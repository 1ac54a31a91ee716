/* GET /metrics: Prometheus text exposition. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "framework/plugin_loader.h"
#include "framework/queue.h"
#include "process_metrics.h"
#include "shadow/shadow.h"

/* Add to counter `m` what the scheduler's running count `now` gained
 * since *seen, and remember it. `label`: the value of m's one label, or
 * NULL for a counter without labels (ks_metric_add reads one value per
 * label name, so it is not read then). */
static void counter_catch_up(ks_metric_t *m, uint64_t now, uint64_t *seen,
                             const char *label)
{
    if (now > *seen)
        ks_metric_add(m, (double)(now - *seen), label);
    *seen = now;
}

static void count_gated(void *ud, const ks_pod_t *pod, const char *message,
                        int gated)
{
    size_t *n = ud;
    (void)pod;
    (void)message;
    if (gated)
        (*n)++;
}

/* Refresh the gauges that are read from the scheduler at scrape time. */
static void refresh(ks_server_t *srv)
{
    ks_generation_t *g = ks_scheduler_generation(srv->sched);
    size_t gated = 0, unsched, i;
    ks_scheduler_foreach_pending(srv->sched, count_gated, &gated);
    unsched = ks_scheduler_pending(srv->sched, KS_Q_UNSCHED);
    ks_metric_set(srv->m_pending,
                  (double)ks_scheduler_pending(srv->sched, KS_Q_ACTIVE),
                  "active");
    ks_metric_set(srv->m_pending,
                  (double)ks_scheduler_pending(srv->sched, KS_Q_BACKOFF),
                  "backoff");
    ks_metric_set(srv->m_pending,
                  (double)(unsched > gated ? unsched - gated : 0),
                  "unschedulable");
    ks_metric_set(srv->m_pending, (double)gated, "gated");
    ks_metric_clear(srv->m_plugin_gen);
    for (i = 0; i < g->reg->n; i++)
        ks_metric_set(srv->m_plugin_gen, (double)g->id,
                      g->reg->plugins[i]->desc.name);
    ks_metric_set(srv->m_generation, (double)g->id);
    ks_metric_set(srv->m_images, (double)ks_plugin_live_count());
    ks_plugin_samples_flush(srv->plugin_samples);
    ks_sched_metrics_refresh(srv->sched_metrics, srv->sched, srv->cache);
    {
        ks_sched_stats_t st = ks_scheduler_stats(srv->sched);
        counter_catch_up(srv->m_batch_reused, st.batch_reused,
                         &srv->batch_reused_seen, NULL);
        counter_catch_up(srv->m_batch_mismatches, st.batch_mismatches,
                         &srv->batch_mismatches_seen, NULL);
        counter_catch_up(srv->m_bulk_compared, st.bulk_compared,
                         &srv->bulk_compared_seen, NULL);
        counter_catch_up(srv->m_bulk_mismatches, st.bulk_mismatches,
                         &srv->bulk_mismatches_seen, NULL);
        /* (a new generation starts its pools at 0: caught up from there) */
        counter_catch_up(srv->m_worker_jobs, st.pool_shared,
                         &srv->worker_shared_seen, "shared");
        counter_catch_up(srv->m_worker_jobs, st.pool_inline,
                         &srv->worker_inline_seen, "inline");
        counter_catch_up(srv->m_worker_cycles,
                         st.pool_gate_cycles - st.pool_gate_inline,
                         &srv->worker_cycles_share_seen, "share");
        counter_catch_up(srv->m_worker_cycles, st.pool_gate_inline,
                         &srv->worker_cycles_inline_seen, "inline");
        counter_catch_up(srv->m_worker_cycles, st.pool_stall_cycles,
                         &srv->worker_cycles_stall_seen, "stall");
    }
}

void ks_api_metrics(ks_server_t *srv, ks_http_conn_t *c,
                    const ks_http_request_t *req)
{
    size_t len;
    char *text;
    (void)req;
    refresh(srv);
    text = ks_metrics_render(srv->metrics, &len);
    if (text != NULL) {
        ks_buf_t b = {0};
        ks_buf_append(&b, text, len);
        if (srv->ksrc)
            ks_kube_source_metrics(srv->ksrc, &b);
        if (srv->shadow)
            ks_shadow_metrics(srv->shadow, &b);
        ks_process_metrics_render(&b);
        free(text);
        text = ks_buf_steal(&b, &len);
    }
    if (text == NULL) {
        ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n", 14);
        return;
    }
    ks_http_respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL,
                    text, len);
    free(text);
}
