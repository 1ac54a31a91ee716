/* Server state: scheduler observer, metrics, pod index, lifetime. */
#include "server.h"

#include "console.h"
#include "journal.h"
#include "local_requests.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "base/log.h"
#include "framework/call_board.h"
#include "framework/status.h"
#include "shadow/shadow.h"

double ks_server_now(void)
{
    return (double)uv_hrtime() * 1e-9;
}

/* --- pod index ------------------------------------------------------------ */

ks_pod_entry_t *ks_server_pod_by_key(ks_server_t *srv, const char *ns,
                                     const char *name)
{
    char key[600];
    int n = snprintf(key, sizeof key, "%s/%s", ns, name);
    if (n < 0 || (size_t)n >= sizeof key)
        return NULL;
    return ks_strmap_get(&srv->pods, key);
}

ks_pod_entry_t *ks_server_pod_by_uid(ks_server_t *srv, const char *uid)
{
    return ks_strmap_get(&srv->pod_uids, uid);
}

ks_pod_entry_t *ks_server_pod_add(ks_server_t *srv, const ks_pod_t *pod,
                                  int state)
{
    size_t kl = strlen(pod->ns) + 1 + strlen(pod->name) + 1;
    size_t ul = strlen(pod->uid) + 1;
    ks_pod_entry_t *e = calloc(1, sizeof *e + kl + ul);
    if (e == NULL)
        return NULL;
    snprintf(e->key, kl, "%s/%s", pod->ns, pod->name);
    /* A copy: the pod's uid string goes with the pod, the entry may stay
     * (a pod of another scheduler, a bound pod). */
    memcpy(e->key + kl, pod->uid, ul);
    e->uid = e->key + kl;
    e->state = state;
    e->generation = ks_scheduler_generation(srv->sched)->id;
    if (ks_strmap_put(&srv->pods, e->key, e) != 0) {
        free(e);
        return NULL;
    }
    if (ks_strmap_put(&srv->pod_uids, e->uid, e) != 0) {
        ks_strmap_del(&srv->pods, e->key);
        free(e);
        return NULL;
    }
    return e;
}

void ks_server_pod_remove(ks_server_t *srv, ks_pod_entry_t *e)
{
    ks_journal_pod_deleted(srv, e->key);
    ks_strmap_del(&srv->pods, e->key);
    ks_strmap_del(&srv->pod_uids, e->uid);
    if (e->other)
        ks_pod_free(e->other);
    free(e);
}

/* --- scheduler observer ----------------------------------------------------- */

static void attempt_done(ks_server_t *srv, ks_pod_entry_t *e,
                         const char *result, double seconds)
{
    const char *profile = e && e->profile ? e->profile : "";
    ks_metric_add(srv->m_attempts, 1, result, profile);
    ks_metric_observe(srv->m_attempt_dur, seconds, result, profile);
    if (e)
        e->attempt_open = 0;
}

static void obs_cycle(void *ud, const ks_cycle_result_t *r)
{
    ks_server_t *srv = ud;
    ks_pod_entry_t *e = ks_server_pod_by_uid(srv, r->pod->uid);
    /* Cluster mode: pods come from the informers; index them while they
     * are being scheduled (for attempt metrics and the bindings watch). */
    if (e == NULL && srv->ksrc)
        e = ks_server_pod_add(srv, r->pod, KS_POD_PENDING);
    const char *profile =
        ks_intern_str(ks_intern_global(), r->fw->profile_name);
    ks_console_on_cycle(srv, r, ks_scheduler_generation(srv->sched)->id,
                        profile);
    if (e) {
        /* A cycle runs with the scheduler's current generation. */
        e->generation = ks_scheduler_generation(srv->sched)->id;
        e->profile = profile;
        e->permit_rejected = 0;
    }
    if (r->selected) {
        ks_sched_metrics_algorithm(srv->sched_metrics, r->seconds);
        if (e) {
            uint32_t attempts;
            int64_t first_ms;
            e->attempt_open = 1;
            e->attempt_t0 = ks_server_now() - r->seconds;
            e->sli_attempts = 0;
            if (ks_scheduler_pod_attempts(srv->sched, r->pod->uid, &attempts,
                                          &first_ms, &e->sli_flushed) == 0) {
                e->sli_attempts = attempts;
                e->sli_t0 = ks_server_now() -
                            (double)(ks_scheduler_now(srv->sched) -
                                     first_ms) * 1e-3;
            }
        }
        return;
    }
    if (e == NULL) {
        ks_metric_add(srv->m_attempts, 1,
                      r->error ? "error" : "unschedulable", profile);
        ks_metric_observe(srv->m_attempt_dur, r->seconds,
                          r->error ? "error" : "unschedulable", profile);
        return;
    }
    attempt_done(srv, e, r->error ? "error" : "unschedulable", r->seconds);
}

static void obs_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    ks_server_t *srv = ud;
    ks_pod_entry_t *e = ks_server_pod_by_uid(srv, pod->uid);
    if (e == NULL)
        return;
    e->state = KS_POD_BOUND;
    e->node = node;
    e->bind_rv = ++srv->bind_rv;
    ks_journal_pod_bound(srv, e->key, node, e->bind_rv);
    if (e->attempt_open && e->sli_attempts > 0)
        ks_sched_metrics_scheduled(srv->sched_metrics, e->sli_attempts,
                                   ks_server_now() - e->sli_t0,
                                   e->sli_flushed);
    if (e->attempt_open) {
        ks_console_on_bound(srv, e->key, node,
                            ks_server_now() - e->attempt_t0);
        attempt_done(srv, e, "scheduled", ks_server_now() - e->attempt_t0);
    }
    ks_server_emit_binding(srv, e);
    if (srv->ksrc) /* the cluster keeps the pod from here on */
        ks_server_pod_remove(srv, e);
}

static void obs_failed(void *ud, const ks_pod_t *pod, const char *message)
{
    ks_server_t *srv = ud;
    ks_pod_entry_t *e = ks_server_pod_by_uid(srv, pod->uid);
    if (e == NULL)
        return;
    /* A failure after a node was selected: Reserve, Permit or binding. */
    if (e->attempt_open) {
        ks_console_on_bind_failed(srv, e->key, message,
                                  ks_server_now() - e->attempt_t0);
        attempt_done(srv, e, e->permit_rejected ? "unschedulable" : "error",
                     ks_server_now() - e->attempt_t0);
    }
    ks_server_emit_failed(srv, e, message);
}

static void obs_deleted(void *ud, const ks_pod_t *pod)
{
    ks_server_t *srv = ud;
    ks_pod_entry_t *e = ks_server_pod_by_uid(srv, pod->uid);
    ks_sched_metrics_victim(srv->sched_metrics);
    if (e == NULL)
        return;
    ks_server_emit_preempted(srv, e);
    ks_server_pod_remove(srv, e);
}

static void obs_ep(void *ud, const ks_framework_t *fw, int ep, ks_code_t code,
                   double seconds)
{
    ks_server_t *srv = ud;
    const char *pname = ks_ext_point_name((ks_ext_point_t)ep);
    const char *cname = ks_code_name(code);
    ks_metric_observe(srv->m_ep_dur, seconds, pname, cname,
                      fw->profile_name);
    ks_console_on_ep(srv, ep, seconds);
    if (ep == KS_EP_POST_FILTER) {
        ks_metric_add(srv->m_preempt, 1);
        ks_sched_metrics_postfilter_done(srv->sched_metrics);
    }
}

/* Sampled cycles only; from the Filter and Score workers too. */
static void obs_plugin(void *ud, const char *plugin, int ep, ks_code_t code,
                       double seconds)
{
    ks_server_t *srv = ud;
    ks_plugin_samples_record(srv->plugin_samples, plugin,
                             ks_fw_metric_point_name(ep), ks_code_name(code),
                             seconds);
}

static void obs_extender(void *ud, const char *url_prefix, const char *verb,
                         const char *result, double seconds)
{
    ks_server_t *srv = ud;
    ks_metric_add(srv->m_ext_requests, 1, url_prefix, verb, result);
    ks_metric_observe(srv->m_ext_latency, seconds, url_prefix, verb);
}

static void obs_hint(void *ud, const char *plugin, const char *event,
                     const char *hint, double seconds)
{
    ks_server_t *srv = ud;
    ks_metric_observe(srv->m_hint_dur, seconds, plugin, event, hint);
}

static void obs_event(void *ud, const char *event, double seconds)
{
    ks_server_t *srv = ud;
    ks_metric_observe(srv->m_event_dur, seconds, event);
    ks_sched_metrics_event_done(srv->sched_metrics, event);
}

static void obs_incoming(void *ud, const char *queue, const char *event)
{
    ks_server_t *srv = ud;
    ks_sched_metrics_incoming(srv->sched_metrics, queue, event);
}

static void obs_permit(void *ud, const ks_pod_t *pod, int allowed,
                       double seconds)
{
    ks_server_t *srv = ud;
    ks_pod_entry_t *e = ks_server_pod_by_uid(srv, pod->uid);
    ks_metric_observe(srv->m_permit_wait, seconds,
                      allowed ? "Success" : "Unschedulable");
    if (e && !allowed)
        e->permit_rejected = 1;
}

/* --- metrics ----------------------------------------------------------------- */

static const char *const l_result_profile[] = {"result", "profile", NULL};
static const char *const l_queue[] = {"queue", NULL};
static const char *const l_ep[] = {"extension_point", "status", "profile",
                                   NULL};
static const char *const l_plugin[] = {"plugin", "extension_point", "status",
                                       NULL};
static const char *const l_result[] = {"result", NULL};
static const char *const l_plugin_only[] = {"plugin", NULL};
static const char *const l_ext[] = {"extender", "verb", "result", NULL};
static const char *const l_ext_verb[] = {"extender", "verb", NULL};
static const char *const l_hint[] = {"plugin", "event", "hint", NULL};
static const char *const l_event[] = {"event", NULL};
static const char *const l_mode[] = {"mode", NULL};
static const char *const l_way[] = {"way", NULL};

#define M_AT(field) offsetof(ks_server_t, field)

/* The server's own series, registered in this order: where each is kept
 * in ks_server_t, its type, name, help and labels; for a histogram its
 * exponential buckets (start, factor, count); `zero`: a series without
 * labels that exists from the start at zero. */
static const struct server_metric {
    size_t at;
    ks_metric_type_t type;
    const char *name, *help;
    const char *const *labels;
    double start, factor;
    size_t n_bounds;
    int zero;
} server_metrics[] = {
    {M_AT(m_attempts), KS_METRIC_COUNTER, "scheduler_schedule_attempts_total",
     "Scheduling attempts by result: scheduled, unschedulable (no node "
     "fits the pod) or error (a plugin or the host failed).",
     l_result_profile, 0, 0, 0, 0},
    {M_AT(m_pending), KS_METRIC_GAUGE, "scheduler_pending_pods",
     "Pods waiting to be scheduled, by queue: active, backoff, "
     "unschedulable, and gated (held back by a PreEnqueue plugin).",
     l_queue, 0, 0, 0, 0},
    {M_AT(m_attempt_dur), KS_METRIC_HISTOGRAM,
     "scheduler_scheduling_attempt_duration_seconds",
     "Duration of one scheduling attempt in seconds, from taking the pod "
     "off the queue to its binding or failure.",
     l_result_profile, 0.001, 2, 15, 0},
    {M_AT(m_ep_dur), KS_METRIC_HISTOGRAM,
     "scheduler_framework_extension_point_duration_seconds",
     "Duration in seconds of running every plugin at one extension point "
     "(Filter and Score: the whole phase over all nodes).",
     l_ep, 0.0001, 2, 12, 0},
    {M_AT(m_plugin_dur), KS_METRIC_HISTOGRAM,
     "scheduler_plugin_execution_duration_seconds",
     "Seconds one plugin call took at one extension point (Filter and "
     "Score: on one node), timed for every plugin call in 10% of "
     "scheduling cycles and in their binding cycles.",
     l_plugin, 0.00001, 1.5, 20, 0},
    {M_AT(m_ext_requests), KS_METRIC_COUNTER, "ksched_extender_requests_total",
     "Scheduler extender calls by extender (its urlPrefix), verb and "
     "result: the HTTP status code, timeout (no answer within "
     "httpTimeout), error (no HTTP answer) or cancelled (the pod went "
     "away first).",
     l_ext, 0, 0, 0, 0},
    {M_AT(m_ext_latency), KS_METRIC_HISTOGRAM,
     "ksched_extender_request_duration_seconds",
     "Seconds from the start of a scheduler extender call to its answer "
     "(or its failure), by extender and verb.",
     l_ext_verb, 0.001, 2, 15, 0},
    /* upstream's buckets: 10us * 1.5^k for hints (as plugin execution),
     * 0.1ms * 2^k for events */
    {M_AT(m_hint_dur), KS_METRIC_HISTOGRAM,
     "scheduler_queueing_hint_execution_duration_seconds",
     "Seconds one QueueingHint call took, by plugin, event and result "
     "(Queue, QueueSkip, or Error for a value that is neither).",
     l_hint, 0.00001, 1.5, 20, 0},
    {M_AT(m_event_dur), KS_METRIC_HISTOGRAM,
     "scheduler_event_handling_duration_seconds",
     "Seconds the scheduling queue took to handle one cluster event, by "
     "event.",
     l_event, 0.0001, 2, 12, 0},
    {M_AT(m_permit_wait), KS_METRIC_HISTOGRAM,
     "scheduler_permit_wait_duration_seconds",
     "Seconds pods spent waiting at Permit, by result.", l_result, 0.001, 2,
     15, 0},
    {M_AT(m_preempt), KS_METRIC_COUNTER, "scheduler_preemption_attempts_total",
     "PostFilter (preemption) runs for pods no node could take.", NULL, 0, 0,
     0, 1},
    {M_AT(m_reloads), KS_METRIC_COUNTER, "ksched_plugin_reloads_total",
     "Reloads of the configuration and plugins, by result (success or "
     "failure; a failure keeps the running generation).",
     l_result, 0, 0, 0, 0},
    {M_AT(m_plugin_gen), KS_METRIC_GAUGE, "ksched_plugin_generation",
     "The framework generation that serves each loaded plugin.",
     l_plugin_only, 0, 0, 0, 0},
    {M_AT(m_generation), KS_METRIC_GAUGE, "ksched_generation",
     "The current framework generation.", NULL, 0, 0, 0, 0},
    {M_AT(m_images), KS_METRIC_GAUGE, "ksched_plugin_images_loaded",
     "Plugin shared objects mapped by the process, over every "
     "generation still in use.",
     NULL, 0, 0, 0, 0},
    {M_AT(m_batch_reused), KS_METRIC_COUNTER,
     "ksched_batch_reused_nodes_total",
     "Nodes whose Filter verdict or Score results a scheduling cycle "
     "reused from the previous pod's cycle (opportunistic batching; "
     "with --batching verify: compared with a fresh evaluation).",
     NULL, 0, 0, 0, 1},
    {M_AT(m_batch_mismatches), KS_METRIC_COUNTER,
     "ksched_batch_mismatches_total",
     "Results that --batching verify found different from a fresh "
     "evaluation (each is logged with its pod and node).",
     NULL, 0, 0, 0, 1},
    {M_AT(m_bulk_compared), KS_METRIC_COUNTER,
     "ksched_bulk_compared_nodes_total",
     "Node results --bulk verify compared between the bulk Filter and "
     "Score (filter_nodes, score_nodes) and the node-by-node ones.",
     NULL, 0, 0, 0, 1},
    {M_AT(m_bulk_mismatches), KS_METRIC_COUNTER,
     "ksched_bulk_mismatches_total",
     "Results that --bulk verify found different between the bulk and "
     "the node-by-node calls (each is logged with its pod, node and "
     "plugin).",
     NULL, 0, 0, 0, 1},
    {M_AT(m_worker_jobs), KS_METRIC_COUNTER, "ksched_worker_jobs_total",
     "Filter and Score jobs of more than one chunk, by mode: shared with "
     "the worker threads, or run inline on the scheduling thread because "
     "sharing them did not pay (the pool measures both, per call site). "
     "None at parallelism 1.",
     l_mode, 0, 0, 0, 0},
    {M_AT(m_worker_cycles), KS_METRIC_COUNTER, "ksched_worker_cycles_total",
     "Scheduling cycles that gave the workers a job, by the way they ran: "
     "share (jobs shared where the pool's per-job choice says so) or "
     "inline (every job on the scheduling thread, the workers asleep, "
     "because whole cycles ran faster so), both timed by the workers' "
     "gate; or stall (partly in the inline stretch that follows a wait "
     "for a worker off its CPU, not timed). None at parallelism 1.",
     l_way, 0, 0, 0, 0},
};

static int metrics_init(ks_server_t *srv, const ks_generation_t *g)
{
    ks_metrics_t *r = ks_metrics_new();
    size_t i;
    if (r == NULL)
        return -1;
    srv->metrics = r;
    for (i = 0; i < sizeof server_metrics / sizeof server_metrics[0]; i++) {
        const struct server_metric *d = &server_metrics[i];
        ks_metric_t **slot = (ks_metric_t **)((char *)srv + d->at);
        double b[20];
        if (d->n_bounds > sizeof b / sizeof b[0])
            return -1;
        if (d->n_bounds > 0)
            ks_metrics_exponential_buckets(d->start, d->factor, d->n_bounds,
                                           b);
        *slot = ks_metrics_add(r, d->type, d->name, d->help, d->labels,
                               d->n_bounds > 0 ? b : NULL, d->n_bounds);
        if (*slot == NULL)
            return -1;
        if (d->zero)
            ks_metric_add(*slot, 0);
    }
    srv->plugin_samples = ks_plugin_samples_new(srv->m_plugin_dur);
    if (srv->plugin_samples == NULL)
        return -1;
    srv->sched_metrics = ks_sched_metrics_new(r);
    if (srv->sched_metrics == NULL ||
        ks_authn_metrics_init(&srv->authn_metrics, r) != 0)
        return -1;
    /* Series with labels that exist from the start, at zero. */
    for (i = 0; i < g->n_fws; i++) {
        const char *p = g->fws[i]->profile_name;
        ks_metric_add(srv->m_attempts, 0, "scheduled", p);
        ks_metric_add(srv->m_attempts, 0, "unschedulable", p);
        ks_metric_add(srv->m_attempts, 0, "error", p);
    }
    ks_metric_add(srv->m_reloads, 0, "success");
    ks_metric_add(srv->m_reloads, 0, "failure");
    return 0;
}

/* --- lifetime ---------------------------------------------------------------- */

static void rest_observe(void *ud, const char *verb, long code,
                         double seconds)
{
    ks_server_t *srv = ud;
    char c[16];
    snprintf(c, sizeof c, "%ld", code);
    ks_metric_add(srv->m_rest_requests, 1, c, verb);
    ks_metric_observe(srv->m_rest_latency, seconds, verb);
}

/* Cluster mode: the API clients (one for reads and writes, one for events,
 * each with clientConnection's qps and burst, as kube-scheduler's two
 * clients) and the cluster source. */
static void le_started(void *ud)
{
    ks_server_t *srv = ud;
    ks_metric_set(srv->m_leader, 1);
    if (srv->ksrc)
        ks_kube_source_set_active(srv->ksrc, 1);
}

/* Upstream exits when it loses the lease; so does ksched (status 4): the
 * write gate already refuses every binding, and a restart comes back as a
 * standby with fresh informers. */
static void le_stopped(void *ud)
{
    ks_server_t *srv = ud;
    ks_metric_set(srv->m_leader, 0);
    if (srv->releasing || srv->stopped)
        return;
    fprintf(stderr, "ksched serve: lost the leader lease; exiting (status "
                    "4)\n");
    srv->lost_lease = 1;
    ks_server_stop(srv);
}

static void le_new_leader(void *ud, const char *id)
{
    (void)ud;
    ks_log(KS_LOGL_WARN, "leader election: the leader is now %s", id);
}

static int le_may_write(void *ud)
{
    ks_server_t *srv = ud;
    return srv->leader == NULL || ks_leader_is_leader(srv->leader);
}

/* Shadow mode: a pod another scheduler bound (before the cache takes it)
 * or found unschedulable. */
static int shadow_bound(void *ud, ks_pod_t *pod)
{
    ks_server_t *srv = ud;
    return ks_shadow_observe(srv->shadow, pod);
}

static int cluster_init(ks_server_t *srv, ks_generation_t *gen,
                        const ks_server_cluster_t *cl, ks_error_t *err)
{
    static const char *const l_code_verb[] = {"code", "verb", NULL};
    static const char *const l_verb[] = {"verb", NULL};
    const ks_client_connection_t *cc = &gen->cfg->client_connection;
    double b_lat[15];
    ks_kube_client_opts_t co;
    ks_kube_source_opts_t so;
    char host[256] = "ksched";
    ks_metrics_exponential_buckets(0.001, 2, 15, b_lat);
    srv->m_rest_requests = ks_metrics_add(
        srv->metrics, KS_METRIC_COUNTER, "rest_client_requests_total",
        "Requests to the API server by HTTP code (0: no answer) and verb.",
        l_code_verb, NULL, 0);
    srv->m_rest_latency = ks_metrics_add(
        srv->metrics, KS_METRIC_HISTOGRAM,
        "rest_client_request_duration_seconds",
        "Request latency to the API server in seconds, by verb (watches: "
        "how long the stream lasted).",
        l_verb, b_lat, 15);
    if (srv->m_rest_requests == NULL || srv->m_rest_latency == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (cc->content_type && strcmp(cc->content_type, "application/json"))
        fprintf(stderr, "ksched serve: clientConnection.contentType \"%s\" "
                        "ignored: ksched speaks JSON to the API server\n",
                cc->content_type);
    memset(&co, 0, sizeof co);
    co.qps = cc->qps;
    co.burst = cc->burst > 0 ? cc->burst : 1;
    co.user_agent = "ksched/" KS_VERSION;
    co.observe = rest_observe;
    co.observe_ud = srv;
    if ((srv->kclient = ks_kube_client_new(srv->loop, srv->kconn, &co,
                                           err)) == NULL ||
        (srv->kevents = ks_kube_client_new(srv->loop, srv->kconn, &co,
                                           err)) == NULL)
        return err->code ? err->code : KS_ENOMEM;
    gethostname(host, sizeof host - 1);
    memset(&so, 0, sizeof so);
    so.client = srv->kclient;
    so.event_client = srv->kevents;
    so.cache = srv->cache;
    so.hostname = host;
    srv->ksrc = ks_kube_source_new(srv->loop, &so, err);
    if (srv->ksrc == NULL)
        return err->code ? err->code : KS_ENOMEM;
    if (cl->shadow) {
        int rc = ks_shadow_new(cl->shadow, gen, srv->cache, &srv->shadow,
                               err);
        if (rc != 0)
            return rc;
        ks_kube_source_set_shadow(srv->ksrc, shadow_bound, srv);
    }
    if (cl->leader_elect) {
        ks_leader_opts_t le = cl->le;
        le.started = le_started;
        le.stopped = le_stopped;
        le.new_leader = le_new_leader;
        le.ud = srv;
        srv->m_leader = ks_metrics_add(
            srv->metrics, KS_METRIC_GAUGE, "ksched_leader",
            "1 while this replica holds the leader lease and schedules, 0 "
            "while it is a standby.",
            NULL, NULL, 0);
        if (srv->m_leader == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        ks_metric_set(srv->m_leader, 0);
        /* The lease on a client of its own, as kube-scheduler's leader
         * election: a renewal never waits behind queued bindings. */
        if ((srv->klease = ks_kube_client_new(srv->loop, srv->kconn, &co,
                                              err)) == NULL)
            return err->code ? err->code : KS_ENOMEM;
        srv->leader = ks_leader_new(srv->loop, srv->klease, &le, err);
        if (srv->leader == NULL)
            return err->code ? err->code : KS_ENOMEM;
        ks_kube_source_set_active(srv->ksrc, 0);
        ks_kube_source_set_write_gate(srv->ksrc, le_may_write, srv);
    }
    return 0;
}

int ks_server_init(ks_server_t *srv, uv_loop_t *loop,
                   const ks_generation_opts_t *opts, ks_generation_t *gen,
                   const ks_server_cluster_t *cluster, ks_error_t *err)
{
    ks_sched_opts_t so;
    memset(srv, 0, sizeof *srv);
    srv->kconn = cluster ? cluster->conn : NULL;
    srv->loop = loop;
    srv->gen_opts = *opts;
    srv->gen_opts.config = NULL; /* a reload reads the file again */
    srv->last_ok = -1;
    srv->drain_timeout_s = 10;
    srv->cache = ks_cache_new(ks_intern_global());
    srv->console = ks_console_new();
    if (srv->cache == NULL || srv->console == NULL ||
        metrics_init(srv, gen) != 0) {
        ks_generation_unref(gen);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    memset(&so, 0, sizeof so);
    so.obs.cycle = obs_cycle;
    so.obs.bound = obs_bound;
    so.obs.failed = obs_failed;
    so.obs.deleted = obs_deleted;
    so.obs.ep_duration = obs_ep;
    so.obs.extender_call = obs_extender;
    so.obs.queueing_hint = obs_hint;
    so.obs.event_handled = obs_event;
    so.obs.permit_wait = obs_permit;
    so.obs.queue_incoming = obs_incoming;
    so.obs.plugin_duration = obs_plugin;
    so.obs.ud = srv;
    if (cluster != NULL) {
        int rc = cluster_init(srv, gen, cluster, err);
        if (rc != 0) {
            ks_generation_unref(gen);
            return rc;
        }
        so.writer = ks_kube_source_writer(srv->ksrc);
    } else {
        /* plugins' API requests: applied to the embedded API's stores */
        ks_local_requests_writer(srv, &so.writer);
    }
    srv->sched = ks_scheduler_new(gen, srv->cache, &so);
    ks_generation_unref(gen); /* the scheduler holds its own reference */
    if (srv->sched == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (srv->ksrc && ks_kube_source_start(srv->ksrc, srv->sched, err) != 0)
        return err->code;
    if (srv->leader)
        ks_leader_start(srv->leader);
    srv->http = ks_http_server_new(loop, ks_server_handle, srv,
                                   KS_HTTP_DEFAULT_BODY_LIMIT);
    if (srv->http == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    ks_server_record_generation(srv, "start");
    return 0;
}

static void gen_record_free(ks_gen_record_t *r)
{
    size_t i;
    for (i = 0; i < r->n_plugins; i++) {
        free(r->plugins[i].name);
        free(r->plugins[i].version);
        free(r->plugins[i].file);
        free(r->plugins[i].copy_path);
    }
    free(r->plugins);
    free(r->trigger);
    memset(r, 0, sizeof *r);
}

void ks_server_record_generation(ks_server_t *srv, const char *trigger)
{
    ks_generation_t *g = ks_scheduler_generation(srv->sched);
    ks_gen_record_t *r;
    uv_timeval64_t tv;
    size_t i;
    if (srv->n_history == KS_GEN_HISTORY) {
        gen_record_free(&srv->history[srv->history_head]);
        srv->history_head = (srv->history_head + 1) % KS_GEN_HISTORY;
        srv->n_history--;
    }
    r = &srv->history[(srv->history_head + srv->n_history) % KS_GEN_HISTORY];
    srv->n_history++;
    r->id = g->id;
    r->trigger = strdup(trigger);
    r->unix_time = uv_gettimeofday(&tv) == 0
                       ? (double)tv.tv_sec + (double)tv.tv_usec * 1e-6
                       : 0;
    r->plugins = calloc(g->reg->n ? g->reg->n : 1, sizeof *r->plugins);
    if (r->plugins == NULL)
        return;
    for (i = 0; i < g->reg->n; i++) {
        const ks_loaded_plugin_t *lp = g->reg->plugins[i];
        ks_gen_plugin_t *p = &r->plugins[r->n_plugins];
        p->name = strdup(lp->desc.name);
        p->version = strdup(lp->desc.version ? lp->desc.version : "");
        p->file = strdup(lp->path);
        p->copy_path = strdup(lp->copy_path);
        p->hash = lp->hash ? lp->hash : ks_file_hash(lp->copy_path);
        r->n_plugins++;
        if (!p->name || !p->version || !p->file || !p->copy_path)
            break;
    }
    if (r->trigger == NULL)
        r->trigger = calloc(1, 1);
}

void ks_server_free(ks_server_t *srv)
{
    size_t i;
    /* Teardown is not a deletion: the journal records no more. */
    ks_journal_close(srv);
    /* The source first: it cancels its calls, so no answer reaches the
     * scheduler while it is torn down. */
    ks_kube_source_close(srv->ksrc);
    srv->ksrc = NULL;
    ks_shadow_free(srv->shadow);
    srv->shadow = NULL;
    ks_console_free(srv->console);
    srv->console = NULL;
    if (srv->sched)
        ks_scheduler_free(srv->sched);
    /* After the scheduler: its teardown may still run Unreserve. */
    ks_plugin_samples_free(srv->plugin_samples);
    for (i = 0; i < srv->pods.cap; i++) {
        ks_pod_entry_t *e = srv->pods.slots[i].val;
        if (srv->pods.slots[i].key) {
            if (e->other)
                ks_pod_free(e->other);
            free(e);
        }
    }
    ks_strmap_destroy(&srv->pods);
    ks_strmap_destroy(&srv->pod_uids);
    ks_strmap_destroy(&srv->nodes);
    if (srv->cache)
        ks_cache_free(srv->cache);
    ks_metrics_free(srv->metrics);
    ks_sched_metrics_free(srv->sched_metrics);
    for (i = 0; i < KS_GEN_HISTORY; i++)
        gen_record_free(&srv->history[i]);
    for (i = 0; i < srv->n_fs; i++)
        free(srv->fs_names[i]);
    free(srv->fs_names);
    free(srv->fs_events);
    free(srv->last_error);
    ks_kube_conn_free(srv->kconn);
    ks_auth_free(srv->auth);
    ks_delegate_free(srv->delegate);
    ks_kube_conn_free(srv->delegate_conn[0]);
    ks_kube_conn_free(srv->delegate_conn[1]);
    ks_tls_ctx_free(srv->tls); /* after the HTTP server's connections */
    memset(srv, 0, sizeof *srv);
}
