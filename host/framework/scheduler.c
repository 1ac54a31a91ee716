/* Scheduling and binding cycles (upstream schedule_one.go). */
#include "scheduler.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intern.h"
#include "cluster/objects.h"
#include "cycle_state.h"
#include "base/log.h"
#include "pool.h"
#include "queue.h"

#define UNSCHED_FLUSH_MS (5 * 60 * 1000)
#define KS_BATCH_STALL_MS (15 * 60 * 1000)
#define MIN_FEASIBLE_NODES 100
#define MIN_FEASIBLE_PERCENT 5
#define PLUGIN_SAMPLE_PERCENT 10 /* upstream pluginMetricsSamplePercent */

enum { WP_OPEN = 0, WP_ALLOWED, WP_REJECTED };

/* A binding handed to the cluster writer (cluster mode): none yet, waiting
 * for ks_scheduler_bind_done, or answered while the Bind plugin was still
 * running. */
enum { BIND_NONE = 0, BIND_PENDING, BIND_OK, BIND_FAILED };

struct ks_waiting_pod {
    ks_scheduler_t *s;
    ks_qpod_t *qp;
    ks_generation_t *gen;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const char *node;
    uint64_t pending; /* Permit plugins still to allow (bit = list index) */
    int64_t deadline; /* -1: not waiting */
    double wait_t0;   /* when the Permit wait began (wall clock) */
    uint64_t timeout_ms;
    const char *timeout_plugin;
    int state;
    int deleted; /* the pod was deleted while waiting: drop, not requeue */
    int sampled; /* its scheduling cycle timed plugins: so does binding */
    int bind_state; /* BIND_*: the writer's answer to the Bind plugin */
    char message[1024];
    int registered; /* in the waiting list */
    struct ks_waiting_pod *wnext, *wprev; /* waiting list */
    struct ks_waiting_pod *rnext;         /* ready list */
    struct ks_waiting_pod *bnext, *bprev; /* bindings in flight */
};

typedef struct nominee {
    const ks_pod_t *pod;
    const char *node;
} nominee_t;

struct ks_scheduler {
    ks_generation_t *gen;
    ks_cache_t *cache;
    ks_snapshot_t *snap;
    ks_queue_t *q;
    ks_sched_opts_t opts;
    ks_fw_env_t env;
    uint64_t cycle;
    uint32_t next_start;
    ks_sched_stats_t stats;
    /* clock */
    int64_t vclock;
    int64_t (*clock_fn)(void *ud);
    void *clock_ud;
    /* waiting and ready pods */
    struct ks_waiting_pod *waiting;
    struct ks_waiting_pod *ready_head, *ready_tail;
    size_t n_waiting;
    /* bindings handed to the writer and not answered yet; the pod whose
     * Bind plugins are running now */
    struct ks_waiting_pod *binding;
    size_t n_binding;
    struct ks_waiting_pod *in_bind;
    /* nominated pods */
    nominee_t *noms;
    size_t n_noms, cap_noms;
    /* per-cycle scratch, sized to the snapshot */
    struct ks_node_status_map smap;
    uint32_t cap_nodes;
    uint32_t *cand;          /* candidate node indices */
    uint8_t *feasible_flag;  /* by position */
    const ks_node_info_t **feasible;
    int64_t *scores, *totals;
    uint8_t *skipped;
    size_t cap_scores;
    /* libuv driver */
    uv_loop_t *loop;
    uv_idle_t idle;
    uv_timer_t timer;
    int attached, idle_on;
    int batch; /* driven by ks_scheduler_run_batch */
};

/* --- timing ---------------------------------------------------------------- */

static double tnow(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Start timing an extension point when someone listens (0 otherwise). */
#define EP_T0(s) ((s)->opts.obs.ep_duration ? tnow() : 0.0)

static void ep_done(const ks_scheduler_t *s, const ks_framework_t *fw,
                    ks_ext_point_t ep, ks_code_t code, double t0)
{
    if (s->opts.obs.ep_duration && t0 > 0)
        s->opts.obs.ep_duration(s->opts.obs.ud, fw, (int)ep, code,
                                tnow() - t0);
}

/* Per-plugin times go to the observer; the env calls this from any thread. */
static void env_plugin_duration(ks_fw_env_t *e, const char *plugin, int ep,
                                ks_code_t code, double seconds)
{
    const ks_scheduler_t *s = e->ud;
    s->opts.obs.plugin_duration(s->opts.obs.ud, plugin, ep, code, seconds);
}

/* Does the cycle starting now time its plugins? One in
 * PLUGIN_SAMPLE_PERCENT of 100, drawn from the env's xorshift64*. */
static void sample_cycle(ks_scheduler_t *s)
{
    uint64_t x;
    if (s->env.plugin_duration == NULL || s->opts.sample_all_plugins) {
        s->env.sample_plugins = s->env.plugin_duration != NULL;
        return;
    }
    x = s->env.rng ? s->env.rng : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->env.rng = x;
    s->env.sample_plugins =
        (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32) % 100 <
        PLUGIN_SAMPLE_PERCENT;
}

/* --- clock ----------------------------------------------------------------- */

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

/* --- nominator ------------------------------------------------------------- */

/* The nominations are kept sorted by the (interned) node name's address,
 * so that Filter, which asks once per node, finds a node's nominated pods by
 * binary search. */
static size_t nominee_lower_bound(const ks_scheduler_t *s, const char *node)
{
    size_t lo = 0, hi = s->n_noms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)s->noms[mid].node < (uintptr_t)node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void nominator_set(ks_scheduler_t *s, const ks_pod_t *pod,
                          const char *node)
{
    size_t i, at;
    for (i = 0; i < s->n_noms; i++)
        if (s->noms[i].pod->uid == pod->uid) {
            memmove(&s->noms[i], &s->noms[i + 1],
                    (s->n_noms - i - 1) * sizeof *s->noms);
            s->n_noms--;
            break;
        }
    ((ks_pod_t *)pod)->nominated_node_name =
        ks_intern_str(ks_intern_global(), node ? node : "");
    s->env.n_nominated = (uint32_t)s->n_noms;
    if (node == NULL || node[0] == '\0')
        return;
    if (s->n_noms == s->cap_noms) {
        s->cap_noms = s->cap_noms ? s->cap_noms * 2 : 16;
        s->noms = realloc(s->noms, s->cap_noms * sizeof *s->noms);
    }
    at = nominee_lower_bound(s, pod->nominated_node_name);
    memmove(&s->noms[at + 1], &s->noms[at],
            (s->n_noms - at) * sizeof *s->noms);
    s->noms[at].pod = pod;
    s->noms[at].node = pod->nominated_node_name;
    s->n_noms++;
    s->env.n_nominated = (uint32_t)s->n_noms;
}

/* `node` must be interned (the ops contract; the host API interns). */
static uint32_t ops_nominated_pods(ks_fw_env_t *e, const char *node,
                                   const ks_pod_t **out, uint32_t cap)
{
    ks_scheduler_t *s = e->ud;
    uint32_t n = 0;
    size_t i;
    if (s->n_noms == 0)
        return 0;
    for (i = nominee_lower_bound(s, node);
         i < s->n_noms && s->noms[i].node == node; i++) {
        if (n < cap)
            out[n] = s->noms[i].pod;
        n++;
    }
    return n;
}

/* --- events ---------------------------------------------------------------- */

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

static void on_event_except(ks_scheduler_t *s, ks_cluster_event_t ev,
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
    on_event_except(s, ev, NULL);
}

/* --- ops for plugins --------------------------------------------------------- */

/* Without a writer a binding is the cache's alone (snapshots, the embedded
 * API). With one, the binding goes to the cluster: the writer answers
 * later through ks_scheduler_bind_done, and the binding cycle waits. Only
 * the pod of the binding cycle running now can be bound, once. */
static int ops_bind(ks_fw_env_t *e, const ks_pod_t *pod, const char *node)
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

static void wp_reject(ks_waiting_pod_t *wp, const char *plugin,
                      const char *msg);

static int ops_delete_pod(ks_fw_env_t *e, const ks_pod_t *pod)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp;
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_DELETE};
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (wp->qp->pod->uid == pod->uid) {
            wp_reject(wp, "preemption", "preempted");
            return 0;
        }
    if (s->opts.obs.deleted)
        s->opts.obs.deleted(s->opts.obs.ud, pod);
    if (s->opts.writer.delete_pod)
        s->opts.writer.delete_pod(s->opts.writer.ud, pod);
    if (ks_cache_remove_pod(s->cache, pod->uid, NULL) != 0)
        return -1;
    ks_scheduler_on_event(s, ev);
    return 0;
}

static int ops_set_nominated(ks_fw_env_t *e, const ks_pod_t *pod,
                             const char *node)
{
    ks_scheduler_t *s = e->ud;
    nominator_set(s, pod, node);
    if (s->opts.writer.nominate)
        s->opts.writer.nominate(s->opts.writer.ud, pod, node ? node : "");
    return 0;
}

static void ops_event(ks_fw_env_t *e, const ks_pod_t *pod, const char *type,
                      const char *reason, const char *message)
{
    ks_scheduler_t *s = e->ud;
    ks_log(KS_LOGL_INFO, "event %s %s %s/%s: %s", type, reason, pod->ns,
           pod->name, message);
    if (s->opts.writer.event)
        s->opts.writer.event(s->opts.writer.ud, pod, type, reason, message);
}

static ks_waiting_pod_t *ops_wp_get(ks_fw_env_t *e, const char *uid)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp;
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (strcmp(wp->qp->pod->uid, uid) == 0)
            return wp;
    return NULL;
}

static void ops_wp_iterate(ks_fw_env_t *e, ks_waiting_pod_fn fn, void *ud)
{
    ks_scheduler_t *s = e->ud;
    ks_waiting_pod_t *wp, *next;
    for (wp = s->waiting; wp; wp = next) {
        next = wp->wnext;
        fn(wp, ud);
    }
}

static const ks_pod_t *ops_wp_pod(ks_waiting_pod_t *wp)
{
    return wp->qp->pod;
}

static void ready_push(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    wp->rnext = NULL;
    if (s->ready_tail)
        s->ready_tail->rnext = wp;
    else
        s->ready_head = wp;
    s->ready_tail = wp;
    ks_scheduler_kick(s);
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

static void ops_wp_allow(ks_waiting_pod_t *wp, const char *plugin)
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
        ready_push(wp->s, wp);
    }
}

static void wp_reject(ks_waiting_pod_t *wp, const char *plugin,
                      const char *msg)
{
    if (wp->state != WP_OPEN)
        return;
    wp->state = WP_REJECTED;
    snprintf(wp->message, sizeof wp->message, "%s", msg ? msg : "");
    wp->timeout_plugin = plugin;
    wp_unregister(wp);
    ready_push(wp->s, wp);
}

static const ks_fw_ops_t sched_ops = {
    .bind = ops_bind,
    .delete_pod = ops_delete_pod,
    .set_nominated_node = ops_set_nominated,
    .event = ops_event,
    .waiting_pod_get = ops_wp_get,
    .waiting_pods_iterate = ops_wp_iterate,
    .waiting_pod_pod = ops_wp_pod,
    .waiting_pod_allow = ops_wp_allow,
    .waiting_pod_reject = wp_reject,
    .nominated_pods = ops_nominated_pods,
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
    s->gen = ks_generation_ref(gen);
    s->cache = cache;
    if (opts)
        s->opts = *opts;
    s->snap = ks_snapshot_new();
    s->q = ks_queue_new(queue_less, s,
                        gen->cfg->pod_initial_backoff_seconds * 1000,
                        gen->cfg->pod_max_backoff_seconds * 1000);
    s->env.snapshot = s->snap;
    s->env.cache = cache;
    s->env.ops = &sched_ops;
    s->env.deterministic = s->opts.deterministic;
    s->env.rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
    s->env.now_ms = env_now;
    s->env.ud = s;
    if (s->opts.obs.plugin_duration)
        s->env.plugin_duration = env_plugin_duration;
    s->vclock = 1;
    ks_host_api_set_ops(&sched_ops);
    bind_env(s, gen);
    return s;
}

static void wp_free(ks_waiting_pod_t *wp)
{
    ks_cycle_state_free(wp->cs);
    ks_generation_unref(wp->gen);
    free(wp);
}

void ks_scheduler_free(ks_scheduler_t *s)
{
    ks_waiting_pod_t *wp, *next;
    if (s == NULL)
        return;
    ks_scheduler_detach_loop(s);
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
        wp_free(wp);
    }
    for (wp = s->ready_head; wp; wp = next) {
        next = wp->rnext;
        wp_free(wp);
    }
    /* Bindings in flight: the writer drops its requests before this. */
    for (wp = s->binding; wp; wp = next) {
        next = wp->bnext;
        wp_free(wp);
    }
    ks_queue_free(s->q);
    ks_snapshot_free(s->snap);
    free(s->smap.st);
    free(s->smap.set);
    free(s->cand);
    free(s->feasible_flag);
    free(s->feasible);
    free(s->scores);
    free(s->totals);
    free(s->skipped);
    free(s->noms);
    ks_generation_unref(s->gen);
    free(s);
}

void ks_scheduler_set_generation(ks_scheduler_t *s, ks_generation_t *gen)
{
    ks_generation_t *old = s->gen;
    bind_env(s, gen);
    s->gen = gen;
    ks_queue_set_less(s->q, queue_less, s);
    ks_generation_unref(old);
}

ks_generation_t *ks_scheduler_generation(const ks_scheduler_t *s)
{
    return s->gen;
}

int ks_scheduler_add_pod(ks_scheduler_t *s, ks_pod_t *pod)
{
    ks_framework_t *fw = ks_generation_profile(s->gen, pod->scheduler_name);
    ks_status_t st;
    int gated;
    if (fw == NULL)
        return 1;
    gated = ks_fw_run_pre_enqueue(fw, pod, &st) != KS_SUCCESS;
    if (ks_queue_add(s->q, pod, ks_scheduler_now(s), gated) == NULL)
        return 1;
    if (gated) {
        ks_qpod_t *qp = ks_queue_get(s->q, pod->uid);
        char msg[1024];
        ks_status_message(&st, msg, sizeof msg);
        free(qp->last_message);
        qp->last_message = strdup(msg);
    }
    if (pod->nominated_node_name && pod->nominated_node_name[0])
        nominator_set(s, pod, pod->nominated_node_name);
    ks_scheduler_kick(s);
    return 0;
}

/* --- scheduling cycle ---------------------------------------------------------- */

uint32_t ks_num_feasible_nodes_to_find(uint32_t n_all, int32_t pct)
{
    int64_t adaptive, n;
    if (n_all < MIN_FEASIBLE_NODES || pct >= 100)
        return n_all;
    adaptive = pct;
    if (adaptive <= 0) {
        adaptive = 50 - (int64_t)n_all / 125;
        if (adaptive < MIN_FEASIBLE_PERCENT)
            adaptive = MIN_FEASIBLE_PERCENT;
    }
    n = (int64_t)n_all * adaptive / 100;
    if (n < MIN_FEASIBLE_NODES)
        return MIN_FEASIBLE_NODES;
    return (uint32_t)n;
}

static int cmp_reason(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void ks_fit_error_format(const struct ks_node_status_map *m, uint32_t n_nodes,
                         const ks_status_t *prefilter, const char *post_msg,
                         char *buf, size_t len)
{
    /* Count reasons by interned address. */
    const char *rs[256];
    uint32_t cnt[256];
    char *lines[256];
    size_t nr = 0, i, off;
    uint32_t k;
    unsigned j;
    if (prefilter) {
        for (j = 0; j < prefilter->n_reasons && nr < 256; j++) {
            rs[nr] = prefilter->reasons[j];
            cnt[nr++] = n_nodes;
        }
    } else {
        for (k = 0; k < m->n; k++) {
            if (!m->set[k])
                continue;
            for (j = 0; j < m->st[k].n_reasons; j++) {
                const char *r = m->st[k].reasons[j];
                for (i = 0; i < nr; i++)
                    if (rs[i] == r)
                        break;
                if (i == nr) {
                    if (nr == 256)
                        continue;
                    rs[nr] = r;
                    cnt[nr++] = 0;
                }
                cnt[i]++;
            }
        }
    }
    for (i = 0; i < nr; i++) {
        size_t l = strlen(rs[i]) + 16;
        lines[i] = malloc(l);
        snprintf(lines[i], l, "%u %s", cnt[i], rs[i]);
    }
    qsort(lines, nr, sizeof *lines, cmp_reason);
    off = (size_t)snprintf(buf, len, "0/%u nodes are available", n_nodes);
    for (i = 0; i < nr; i++) {
        if (off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                    i ? ", " : ": ", lines[i]);
        free(lines[i]);
    }
    if (off < len)
        off += (size_t)snprintf(buf + off, len - off, ".");
    if (post_msg && post_msg[0] && off < len)
        snprintf(buf + off, len - off, " %s", post_msg);
}

static void ensure_scratch(ks_scheduler_t *s, uint32_t n, size_t n_score)
{
    if (n > s->cap_nodes) {
        uint32_t cap = n + n / 4 + 16;
        s->smap.st = realloc(s->smap.st, cap * sizeof *s->smap.st);
        s->smap.set = realloc(s->smap.set, cap);
        memset(s->smap.set, 0, cap);
        s->cand = realloc(s->cand, cap * sizeof *s->cand);
        s->feasible_flag = realloc(s->feasible_flag, cap);
        s->feasible = realloc(s->feasible, cap * sizeof *s->feasible);
        s->totals = realloc(s->totals, cap * sizeof *s->totals);
        s->cap_nodes = cap;
    }
    if ((size_t)s->cap_nodes * (n_score ? n_score : 1) > s->cap_scores) {
        s->cap_scores = (size_t)s->cap_nodes * (n_score ? n_score : 1);
        s->scores = realloc(s->scores, s->cap_scores * sizeof *s->scores);
        s->skipped = realloc(s->skipped, n_score + 64);
    }
    s->smap.n = n;
    s->smap.snap = s->snap;
}

static uint32_t snap_index(const ks_snapshot_t *snap, const char *name)
{
    uint32_t lo = 0, hi = ks_snapshot_num_nodes(snap);
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = strcmp(ks_snapshot_node_at(snap, mid)->node->name, name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}

typedef struct filter_job {
    ks_scheduler_t *s;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    uint32_t n_cand, start, want;
    atomic_uint found;
    atomic_int error;
} filter_job_t;

static void filter_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    filter_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    uint32_t pos, found = 0;
    (void)worker;
    for (pos = b; pos < e; pos++) {
        uint32_t at = j->start + pos;
        uint32_t idx = s->cand[at >= j->n_cand ? at - j->n_cand : at];
        const ks_node_info_t *ni = ks_snapshot_node_at(s->snap, idx);
        ks_status_t st; /* copied to the map only on failure */
        ks_code_t c;
        /* The shared counter is touched once per 32 nodes, not per
         * feasible node: contended atomics cost more than filtering. */
        if ((pos - b) % 32 == 0) {
            if (found) {
                atomic_fetch_add(&j->found, found);
                found = 0;
            }
            if (atomic_load(&j->found) >= j->want || atomic_load(&j->error))
                return;
        }
        c = ks_fw_run_filter_with_nominated(j->fw, j->cs, j->pod, ni,
                                            s->opts.run_all_filters, &st);
        if (c == KS_SUCCESS) {
            s->feasible_flag[pos] = 1;
            found++;
        } else {
            s->smap.st[idx] = st;
            s->feasible_flag[pos] = 2;
            if (c == KS_ERROR)
                atomic_store(&j->error, (int)idx + 1);
        }
    }
    if (found)
        atomic_fetch_add(&j->found, found);
}

/* Clear the status map entries set by the previous cycle. */
static void smap_reset(ks_scheduler_t *s)
{
    memset(s->smap.set, 0, s->smap.n);
}

typedef struct cycle_out {
    ks_cycle_result_t r;
    char message[4096];
    int fit_error;            /* 1: FitError (run PostFilter) */
    int prefilter_failed;
    ks_status_t pre_status;   /* PreFilter failure */
    const char *plugins[KS_QPOD_MAX_PLUGINS];
    unsigned n_plugins;
} cycle_out_t;

static void add_plugin(cycle_out_t *o, const char *p)
{
    unsigned i;
    if (p == NULL)
        return;
    for (i = 0; i < o->n_plugins; i++)
        if (o->plugins[i] == p)
            return;
    if (o->n_plugins < KS_QPOD_MAX_PLUGINS)
        o->plugins[o->n_plugins++] = p;
}

/* xorshift64* on the scheduler's seed, for host selection ties. */
static uint32_t sched_rand_below(ks_scheduler_t *s, uint32_t n)
{
    uint64_t x = s->env.rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->env.rng = x;
    return (uint32_t)((((x * 0x2545f4914f6cdd1dull) >> 32) * (uint64_t)n) >>
                      32);
}

/* upstream schedulePod. */
static void schedule_pod(ks_scheduler_t *s, ks_framework_t *fw,
                         ks_cycle_state_t *cs, const ks_pod_t *pod,
                         cycle_out_t *o)
{
    uint32_t n_all = ks_snapshot_num_nodes(s->snap), n_cand = 0, i, want;
    size_t n_score = fw->n_points[KS_EP_SCORE];
    struct ks_prefilter_result pre = {0};
    int32_t pct;
    uint32_t n_feasible = 0, processed;
    ks_status_t st;
    filter_job_t job;
    double t0;
    ks_code_t c;
    int full_eval = s->opts.full_eval_name &&
                    strcmp(pod->name, s->opts.full_eval_name) == 0 &&
                    strcmp(pod->ns, s->opts.full_eval_ns) == 0;

    ensure_scratch(s, n_all, n_score);
    smap_reset(s);
    o->r.n_nodes = n_all;
    o->r.statuses = &s->smap;
    o->r.feasible = s->feasible;
    if (n_all == 0) {
        snprintf(o->message, sizeof o->message,
                 "no nodes available to schedule pods");
        o->r.error = 1;
        return;
    }
    t0 = EP_T0(s);
    c = ks_fw_run_pre_filter(fw, cs, pod, &pre, &o->pre_status);
    ep_done(s, fw, KS_EP_PRE_FILTER, c, t0);
    if (c != KS_SUCCESS) {
        ks_prefilter_result_free(&pre);
        if (o->pre_status.code == KS_ERROR) {
            ks_status_message(&o->pre_status, o->message, sizeof o->message);
            o->r.error = 1;
            return;
        }
        /* Every node gets the PreFilter status. */
        for (i = 0; i < n_all; i++) {
            s->smap.st[i] = o->pre_status;
            s->smap.set[i] = 1;
        }
        o->prefilter_failed = 1;
        o->fit_error = 1;
        add_plugin(o, o->pre_status.plugin);
        return;
    }

    /* A node nominated by an earlier preemption is tried first. */
    if (pod->nominated_node_name && pod->nominated_node_name[0]) {
        uint32_t idx = snap_index(s->snap, pod->nominated_node_name);
        int in_pre = pre.all;
        for (i = 0; !in_pre && i < pre.n; i++)
            if (pre.names[i] == pod->nominated_node_name)
                in_pre = 1;
        if (idx != UINT32_MAX && in_pre) {
            const ks_node_info_t *ni = ks_snapshot_node_at(s->snap, idx);
            if (ks_fw_run_filter_with_nominated(fw, cs, pod, ni,
                                                s->opts.run_all_filters,
                                                &st) == KS_SUCCESS) {
                s->feasible[n_feasible++] = ni;
                ks_prefilter_result_free(&pre);
                goto scored;
            }
            if (st.code == KS_ERROR) {
                ks_prefilter_result_free(&pre);
                ks_status_message(&st, o->message, sizeof o->message);
                o->r.error = 1;
                return;
            }
        }
    }

    if (pre.all) {
        for (i = 0; i < n_all; i++)
            s->cand[i] = i;
        n_cand = n_all;
    } else {
        for (i = 0; i < pre.n; i++) {
            uint32_t idx = snap_index(s->snap, pre.names[i]);
            if (idx != UINT32_MAX)
                s->cand[n_cand++] = idx;
        }
    }
    ks_prefilter_result_free(&pre);
    if (n_cand == 0)
        goto fit_error;

    pct = full_eval                          ? 100
          : s->opts.percentage_override > 0 ? s->opts.percentage_override
          : fw->percentage_of_nodes_to_score >= 0
              ? fw->percentage_of_nodes_to_score
              : s->gen->cfg->percentage_of_nodes_to_score;
    want = ks_num_feasible_nodes_to_find(n_cand, pct);
    if (s->next_start >= n_cand)
        s->next_start = 0;
    memset(s->feasible_flag, 0, n_cand);
    memset(&job, 0, sizeof job);
    job.s = s;
    job.fw = fw;
    job.cs = cs;
    job.pod = pod;
    job.n_cand = n_cand;
    job.start = s->next_start;
    job.want = want;
    if (fw->n_points[KS_EP_FILTER] == 0) {
        for (i = 0; i < want; i++)
            s->feasible_flag[i] = 1;
    } else {
        uint32_t chunk = fw->pool ? (n_cand / (8 * ks_pool_size(fw->pool))) + 1
                                  : n_cand;
        if (chunk > 256)
            chunk = 256;
        t0 = EP_T0(s);
        ks_pool_run(fw->pool, n_cand, chunk, filter_chunk, &job);
        ep_done(s, fw, KS_EP_FILTER,
                atomic_load(&job.error)    ? KS_ERROR
                : atomic_load(&job.found) ? KS_SUCCESS
                                          : KS_UNSCHEDULABLE,
                t0);
    }
    if (atomic_load(&job.error)) {
        uint32_t idx = (uint32_t)atomic_load(&job.error) - 1;
        ks_status_message(&s->smap.st[idx], o->message, sizeof o->message);
        o->r.error = 1;
        return;
    }
    /* Collect in evaluation order, keep the first `want`, and forget the
     * statuses of nodes past the cut (workers may overshoot). */
    processed = n_cand;
    for (i = 0; i < n_cand; i++) {
        uint32_t idx = s->cand[(s->next_start + i) % n_cand];
        if (n_feasible == want) {
            processed = i;
            for (; i < n_cand; i++)
                s->feasible_flag[i] = 0;
            break;
        }
        if (s->feasible_flag[i] == 1) {
            s->feasible[n_feasible++] = ks_snapshot_node_at(s->snap, idx);
        } else if (s->feasible_flag[i] == 2) {
            s->smap.set[idx] = 1;
            add_plugin(o, s->smap.st[idx].plugin);
        }
    }
    s->next_start = (s->next_start + processed) % n_cand;
    if (n_feasible == 0)
        goto fit_error;

scored:
    o->r.n_feasible = n_feasible;
    if (n_feasible == 1 && !s->opts.score_single_node && !full_eval) {
        o->r.selected = s->feasible[0]->node->name;
        return;
    }
    if (n_score == 0) {
        /* No Score plugins: every node scores 1 (upstream). */
        for (i = 0; i < n_feasible; i++)
            s->totals[i] = 1;
    } else {
        t0 = EP_T0(s);
        c = ks_fw_run_pre_score(fw, cs, pod, s->feasible, n_feasible, &st);
        ep_done(s, fw, KS_EP_PRE_SCORE, c, t0);
        if (c == KS_SUCCESS) {
            t0 = EP_T0(s);
            c = ks_fw_run_score(fw, cs, pod, s->feasible, n_feasible,
                                s->scores, s->skipped, s->totals, &st);
            ep_done(s, fw, KS_EP_SCORE, c, t0);
        }
        if (c != KS_SUCCESS) {
            ks_status_message(&st, o->message, sizeof o->message);
            o->r.error = 1;
            return;
        }
        o->r.scored = 1;
        o->r.scores = s->scores;
        o->r.score_skipped = s->skipped;
    }
    o->r.totals = s->totals;
    {
        /* selectHost: highest total; ties at random (reservoir sampling) or
         * the smallest name when deterministic. */
        uint32_t best = 0, ties = 1;
        for (i = 1; i < n_feasible; i++) {
            if (s->totals[i] > s->totals[best]) {
                best = i;
                ties = 1;
            } else if (s->totals[i] == s->totals[best]) {
                ties++;
                if (s->opts.deterministic) {
                    if (strcmp(s->feasible[i]->node->name,
                               s->feasible[best]->node->name) < 0)
                        best = i;
                } else if (sched_rand_below(s, ties) == 0) {
                    best = i;
                }
            }
        }
        o->r.selected = s->feasible[best]->node->name;
    }
    return;

fit_error:
    o->r.n_feasible = 0;
    o->fit_error = 1;
}

/* --- binding cycle -------------------------------------------------------------- */

/* error: an Error status (SchedulerError), not Unschedulable. */
static void record_failure(ks_scheduler_t *s, ks_qpod_t *qp, const char *msg,
                           const char *const *plugins, unsigned n_plugins,
                           int error)
{
    unsigned i;
    free(qp->last_message);
    qp->last_message = strdup(msg);
    qp->n_plugins = 0;
    /* Interned: a plugin's own name string goes away with its .so when a
     * reload retires it, while the pod may stay queued much longer. */
    for (i = 0; i < n_plugins && i < KS_QPOD_MAX_PLUGINS; i++)
        if (plugins[i])
            qp->plugins[qp->n_plugins++] =
                ks_intern_str(ks_intern_global(), plugins[i]);
    if (s->opts.obs.failed)
        s->opts.obs.failed(s->opts.obs.ud, qp->pod, msg);
    if (s->opts.writer.failed)
        s->opts.writer.failed(s->opts.writer.ud, qp->pod, msg, error);
}

/* Undo an assumed pod after a failure past Reserve and requeue it. */
static void fail_assumed(ks_scheduler_t *s, ks_waiting_pod_t *wp,
                         const char *msg, int error)
{
    ks_qpod_t *qp = wp->qp;
    const char *plugin = wp->timeout_plugin;
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_DELETE};
    ks_fw_run_unreserve(wp->fw, wp->cs, qp->pod, wp->node);
    ks_cache_forget_pod(s->cache, qp->pod->uid);
    qp->assumed = 0;
    qp->pod->node_name = ks_intern_empty(ks_intern_global());
    record_failure(s, qp, msg, plugin ? &plugin : NULL, plugin ? 1 : 0,
                   error);
    if (error)
        s->stats.errors++;
    else
        s->stats.unschedulable++;
    ks_queue_requeue_failed(s->q, qp, ks_scheduler_now(s), error);
    /* The forgotten pod freed room: others may fit now. As upstream, this
     * counts as an assigned pod's deletion, after the pod itself has been
     * requeued and without moving it (it would fail the same way). */
    on_event_except(s, ev, qp);
}

static void binding_finish(ks_scheduler_t *s, ks_waiting_pod_t *wp);
static void drop_deleted(ks_scheduler_t *s, ks_waiting_pod_t *wp);

static void binding_cycle(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_status_t st;
    ks_qpod_t *qp = wp->qp;
    char msg[2048];
    double t0;
    ks_code_t c;

    /* The binding cycle times plugins as its scheduling cycle did. */
    s->env.sample_plugins = wp->sampled;
    if (wp->wait_t0 > 0 && s->opts.obs.permit_wait)
        s->opts.obs.permit_wait(s->opts.obs.ud, qp->pod,
                                wp->state == WP_ALLOWED, tnow() - wp->wait_t0);
    if (wp->deleted) {
        drop_deleted(s, wp);
        return;
    }
    if (wp->state == WP_REJECTED) {
        fail_assumed(s, wp, wp->message, 0);
        wp_free(wp);
        return;
    }
    t0 = EP_T0(s);
    c = ks_fw_run_pre_bind(wp->fw, wp->cs, qp->pod, wp->node, &st);
    ep_done(s, wp->fw, KS_EP_PRE_BIND, c, t0);
    if (c == KS_SUCCESS) {
        t0 = EP_T0(s);
        s->in_bind = wp;
        c = ks_fw_run_bind(wp->fw, wp->cs, qp->pod, wp->node, &st);
        s->in_bind = NULL;
        ep_done(s, wp->fw, KS_EP_BIND, c, t0);
    }
    if (c == KS_SUCCESS && wp->bind_state == BIND_PENDING) {
        /* The cluster answers later (ks_scheduler_bind_done). */
        wp->bprev = NULL;
        wp->bnext = s->binding;
        if (s->binding)
            s->binding->bprev = wp;
        s->binding = wp;
        s->n_binding++;
        return;
    }
    if (c == KS_SUCCESS && wp->bind_state == BIND_FAILED) {
        fail_assumed(s, wp, wp->message, 1);
        wp_free(wp);
        return;
    }
    if (c != KS_SUCCESS) {
        if (st.code == KS_SKIP)
            snprintf(msg, sizeof msg,
                     "bind status: Skip, no Bind plugin bound the pod");
        else
            ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        fail_assumed(s, wp, msg, 1);
        wp_free(wp);
        return;
    }
    binding_finish(s, wp);
}

/* The pod is bound: the cache keeps it, PostBind runs, the record goes. */
static void binding_finish(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_qpod_t *qp = wp->qp;
    ks_cluster_event_t ev = {KS_RES_POD, KS_ACT_ADD};
    double t0;
    ks_cache_finish_binding(s->cache, qp->pod->uid);
    if (qp->pod->nominated_node_name && qp->pod->nominated_node_name[0])
        nominator_set(s, qp->pod, "");
    s->stats.bound++;
    if (s->opts.obs.bound)
        s->opts.obs.bound(s->opts.obs.ud, qp->pod, wp->node);
    t0 = EP_T0(s);
    ks_fw_run_post_bind(wp->fw, wp->cs, qp->pod, wp->node);
    ep_done(s, wp->fw, KS_EP_POST_BIND, KS_SUCCESS, t0);
    /* The record goes; the pod stays in the cache. */
    ks_queue_remove(s->q, qp);
    wp_free(wp);
    ks_scheduler_on_event(s, ev);
}

/* A pod deleted while it was assumed: undo and drop it. */
static void drop_deleted(ks_scheduler_t *s, ks_waiting_pod_t *wp)
{
    ks_qpod_t *qp = wp->qp;
    ks_cluster_event_t del = {KS_RES_POD, KS_ACT_DELETE};
    ks_fw_run_unreserve(wp->fw, wp->cs, qp->pod, wp->node);
    ks_cache_forget_pod(s->cache, qp->pod->uid);
    qp->assumed = 0;
    nominator_set(s, qp->pod, "");
    ks_pod_free(ks_queue_remove(s->q, qp));
    wp_free(wp);
    ks_scheduler_on_event(s, del);
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
    for (wp = s->binding; wp; wp = wp->bnext)
        if (strcmp(wp->qp->pod->uid, uid) == 0)
            break;
    if (wp == NULL)
        return KS_ENOTFOUND;
    if (wp->bprev)
        wp->bprev->bnext = wp->bnext;
    else
        s->binding = wp->bnext;
    if (wp->bnext)
        wp->bnext->bprev = wp->bprev;
    s->n_binding--;
    s->env.sample_plugins = wp->sampled;
    if (wp->deleted)
        drop_deleted(s, wp);
    else if (ok)
        binding_finish(s, wp);
    else {
        fail_assumed(s, wp, message ? message : "binding failed", 1);
        wp_free(wp);
    }
    ks_scheduler_kick(s);
    return 0;
}

static int run_ready(ks_scheduler_t *s)
{
    int did = 0;
    while (s->ready_head) {
        ks_waiting_pod_t *wp = s->ready_head;
        s->ready_head = wp->rnext;
        if (s->ready_head == NULL)
            s->ready_tail = NULL;
        binding_cycle(s, wp);
        did = 1;
    }
    return did;
}

static void fire_timeouts(ks_scheduler_t *s, int64_t now)
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
            wp_reject(wp, wp->timeout_plugin, msg);
        }
    }
}

void ks_go_duration(uint64_t ms, char *buf, size_t len)
{
    /* Go's time.Duration.String at millisecond resolution: "50ms",
     * "1.5s", "15m0s", "1h0m0s". */
    uint64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60,
             frac = ms % 1000;
    char fs[8] = "";
    if (ms == 0) {
        snprintf(buf, len, "0s");
        return;
    }
    if (ms < 1000) {
        snprintf(buf, len, "%llums", (unsigned long long)ms);
        return;
    }
    if (frac) {
        snprintf(fs, sizeof fs, ".%03llu", (unsigned long long)frac);
        while (fs[strlen(fs) - 1] == '0')
            fs[strlen(fs) - 1] = '\0';
    }
    if (h)
        snprintf(buf, len, "%lluh%llum%llu%ss", (unsigned long long)h,
                 (unsigned long long)m, (unsigned long long)sec, fs);
    else if (m)
        snprintf(buf, len, "%llum%llu%ss", (unsigned long long)m,
                 (unsigned long long)sec, fs);
    else
        snprintf(buf, len, "%llu%ss", (unsigned long long)sec, fs);
}

static int64_t next_deadline(const ks_scheduler_t *s)
{
    int64_t d = ks_queue_next_backoff(s->q);
    ks_waiting_pod_t *wp;
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (wp->deadline >= 0 && (d < 0 || wp->deadline < d))
            d = wp->deadline;
    return d;
}

/* One scheduling attempt without side effects on the queue: schedulePod,
 * and PostFilter on a FitError (which may nominate and delete victims). */
static void run_cycle(ks_scheduler_t *s, ks_framework_t *fw,
                      ks_cycle_state_t *cs, const ks_pod_t *pod,
                      cycle_out_t *o)
{
    ks_status_t st;
    o->r.pod = pod;
    o->r.fw = fw;
    schedule_pod(s, fw, cs, pod, o);
    if (o->fit_error) {
        char post[2048] = "";
        const char *nominated = NULL;
        ks_fit_error_format(&s->smap, o->r.n_nodes,
                            o->prefilter_failed ? &o->pre_status : NULL, NULL,
                            o->message, sizeof o->message);
        if (fw->n_points[KS_EP_POST_FILTER] > 0) {
            double t0 = EP_T0(s);
            ks_code_t c = ks_fw_run_post_filter(fw, cs, pod, &s->smap,
                                                &nominated, &st);
            ep_done(s, fw, KS_EP_POST_FILTER, c, t0);
            if (c != KS_ERROR) {
                ks_status_message(&st, post, sizeof post);
            } else {
                char em[1024];
                ks_log(KS_LOGL_ERROR, "PostFilter for %s/%s: %s", pod->ns,
                       pod->name, ks_status_message(&st, em, sizeof em));
            }
            if (c == KS_SUCCESS) {
                s->stats.preemptions++;
                o->r.nominated = nominated;
            }
        }
        if (post[0]) {
            size_t l = strlen(o->message);
            snprintf(o->message + l, sizeof o->message - l, " %s", post);
        }
        o->r.message = o->message;
    } else if (o->r.error) {
        o->r.message = o->message;
    }
}

int ks_scheduler_try(ks_scheduler_t *s, const ks_pod_t *pod,
                     void (*cb)(void *ud, const ks_cycle_result_t *r),
                     void *ud, ks_error_t *err)
{
    ks_framework_t *fw = ks_generation_profile(s->gen, pod->scheduler_name);
    ks_cycle_state_t *cs;
    cycle_out_t *o;
    if (fw == NULL)
        fw = s->gen->fws[0];
    if (ks_cache_update_snapshot(s->cache, s->snap, err) != 0)
        return err ? err->code : KS_EINVAL;
    sample_cycle(s);
    cs = ks_cycle_state_new();
    o = calloc(1, sizeof *o);
    if (cs == NULL || o == NULL) {
        ks_cycle_state_free(cs);
        free(o);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    run_cycle(s, fw, cs, pod, o);
    if (o->r.nominated)
        nominator_set(s, pod, o->r.nominated);
    cb(ud, &o->r);
    ks_cycle_state_free(cs);
    free(o);
    return 0;
}

static void schedule_one(ks_scheduler_t *s)
{
    int64_t now = ks_scheduler_now(s);
    ks_qpod_t *qp = ks_queue_pop(s->q, now, ++s->cycle);
    ks_generation_t *gen;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    ks_pod_t *pod;
    cycle_out_t *o;
    ks_error_t err = {0};
    ks_status_t st;
    ks_waiting_pod_t *wp;
    uint64_t timeout_ms, wait_mask;
    const char *timeout_plugin;
    double t0, start = tnow();
    ks_code_t c;

    if (qp == NULL)
        return;
    pod = qp->pod;
    gen = ks_generation_ref(s->gen);
    fw = ks_generation_profile(gen, pod->scheduler_name);
    s->stats.attempts++;
    if (fw == NULL) {
        /* The profile went away in a reload: hold the pod as unschedulable
         * until a profile for it returns. */
        record_failure(s, qp, "no profile schedules this pod any more", NULL,
                       0, 0);
        ks_queue_requeue_failed(s->q, qp, now, 0);
        ks_generation_unref(gen);
        return;
    }
    if (ks_cache_update_snapshot(s->cache, s->snap, &err) != 0) {
        record_failure(s, qp, err.msg, NULL, 0, 1);
        ks_queue_requeue_failed(s->q, qp, now, 1);
        ks_generation_unref(gen);
        return;
    }
    sample_cycle(s);
    cs = ks_cycle_state_new();
    o = calloc(1, sizeof *o);
    run_cycle(s, fw, cs, pod, o);
    o->r.seconds = tnow() - start;
    if (s->opts.obs.cycle)
        s->opts.obs.cycle(s->opts.obs.ud, &o->r);
    if (o->fit_error) {
        if (o->r.nominated)
            nominator_set(s, pod, o->r.nominated);
        s->stats.unschedulable++;
        record_failure(s, qp, o->message, o->plugins, o->n_plugins, 0);
        ks_queue_requeue_failed(s->q, qp, now, 0);
        goto done;
    }
    if (o->r.error) {
        s->stats.errors++;
        record_failure(s, qp, o->message, NULL, 0, 1);
        ks_queue_requeue_failed(s->q, qp, now, 1);
        goto done;
    }
    s->stats.scheduled++;

    /* Assume, Reserve, Permit. */
    if (ks_cache_assume_pod(s->cache, pod, o->r.selected, &err) != 0) {
        record_failure(s, qp, err.msg, NULL, 0, 1);
        s->stats.errors++;
        ks_queue_requeue_failed(s->q, qp, now, 1);
        goto done;
    }
    qp->assumed = 1;
    wp = calloc(1, sizeof *wp);
    wp->s = s;
    wp->qp = qp;
    wp->gen = ks_generation_ref(gen);
    wp->fw = fw;
    wp->cs = cs;
    cs = NULL;
    wp->node = pod->node_name;
    wp->deadline = -1;
    wp->sampled = s->env.sample_plugins;
    t0 = EP_T0(s);
    c = ks_fw_run_reserve(fw, wp->cs, pod, wp->node, &st);
    ep_done(s, fw, KS_EP_RESERVE, c, t0);
    if (c != KS_SUCCESS) {
        char msg[2048];
        ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        fail_assumed(s, wp, msg, 1);
        wp_free(wp);
        goto done;
    }
    t0 = EP_T0(s);
    c = ks_fw_run_permit(fw, wp->cs, pod, wp->node, &timeout_ms, &wait_mask,
                         &timeout_plugin, &st);
    ep_done(s, fw, KS_EP_PERMIT, c, t0);
    switch (c) {
    case KS_SUCCESS:
        wp->state = WP_ALLOWED;
        ready_push(s, wp);
        break;
    case KS_WAIT:
        wp->pending = wait_mask;
        wp->timeout_ms = timeout_ms;
        wp->timeout_plugin = timeout_plugin;
        wp->deadline = now + (int64_t)timeout_ms;
        wp->wait_t0 = tnow();
        wp->registered = 1;
        wp->wnext = s->waiting;
        wp->wprev = NULL;
        if (s->waiting)
            s->waiting->wprev = wp;
        s->waiting = wp;
        s->n_waiting++;
        s->stats.waiting++;
        break;
    default: {
        char msg[2048];
        ks_status_message(&st, msg, sizeof msg);
        wp->timeout_plugin = st.plugin;
        fail_assumed(s, wp, msg, st.code == KS_ERROR);
        wp_free(wp);
        break;
    }
    }
done:
    ks_cycle_state_free(cs);
    free(o);
    ks_generation_unref(gen);
}

int ks_scheduler_step(ks_scheduler_t *s)
{
    int64_t now = ks_scheduler_now(s);
    fire_timeouts(s, now);
    /* The 5-minute flush of the unschedulable pool stands in for cluster
     * changes nobody reported; a batch run has none, so it is off there. */
    ks_queue_flush(s->q, now, s->batch ? INT64_MAX : UNSCHED_FLUSH_MS);
    if (run_ready(s))
        return 1;
    if (ks_queue_len(s->q, KS_Q_ACTIVE) > 0) {
        schedule_one(s);
        run_ready(s);
        return 1;
    }
    return 0;
}

void ks_scheduler_run_batch(ks_scheduler_t *s)
{
    uint64_t bound = s->stats.bound;
    int64_t progress_at = ks_scheduler_now(s);
    s->batch = 1;
    for (;;) {
        int64_t d;
        if (ks_scheduler_step(s))
            continue;
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

/* --- libuv driver ------------------------------------------------------------------ */

static void arm_timer(ks_scheduler_t *s);

static void on_idle(uv_idle_t *h)
{
    ks_scheduler_t *s = h->data;
    int i;
    /* A batch of cycles per loop iteration keeps the loop responsive. */
    for (i = 0; i < 64; i++)
        if (!ks_scheduler_step(s))
            break;
    if (i < 64) {
        uv_idle_stop(&s->idle);
        s->idle_on = 0;
        arm_timer(s);
    }
}

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

void ks_scheduler_kick(ks_scheduler_t *s)
{
    if (!s->attached || s->idle_on)
        return;
    s->idle_on = 1;
    uv_idle_start(&s->idle, on_idle);
}

int ks_scheduler_attach_loop(ks_scheduler_t *s, uv_loop_t *loop)
{
    s->loop = loop;
    uv_idle_init(loop, &s->idle);
    uv_timer_init(loop, &s->timer);
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
    s->attached = 0;
    uv_idle_stop(&s->idle);
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->idle, NULL);
    uv_close((uv_handle_t *)&s->timer, NULL);
    s->idle_on = 0;
}

/* --- removal ------------------------------------------------------------- */

int ks_scheduler_remove_pod(ks_scheduler_t *s, const char *uid)
{
    const char *in = ks_intern_str(ks_intern_global(), uid);
    ks_qpod_t *qp = ks_queue_get(s->q, in);
    ks_waiting_pod_t *wp;
    if (qp == NULL)
        return KS_ENOTFOUND;
    if (!qp->assumed) {
        nominator_set(s, qp->pod, "");
        ks_pod_free(ks_queue_remove(s->q, qp));
        return 0;
    }
    /* Assumed: waiting at Permit, or allowed and in the ready list. */
    for (wp = s->waiting; wp; wp = wp->wnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            wp->state = WP_REJECTED;
            wp_unregister(wp);
            ready_push(s, wp);
            run_ready(s);
            return 0;
        }
    for (wp = s->ready_head; wp; wp = wp->rnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            run_ready(s);
            return 0;
        }
    /* Binding in flight: dropped when the cluster answers. */
    for (wp = s->binding; wp; wp = wp->bnext)
        if (wp->qp == qp) {
            wp->deleted = 1;
            return 0;
        }
    return KS_ENOTFOUND;
}

/* --- reporting ------------------------------------------------------------------------ */

ks_sched_stats_t ks_scheduler_stats(const ks_scheduler_t *s)
{
    return s->stats;
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
