/*
 * The state of `ksched serve`: one libuv loop driving the scheduler, the
 * HTTP API, the metrics, the reload triggers and the shutdown drain.
 *
 * Everything here belongs to the loop thread: handlers, scheduler observer
 * callbacks, reload and signal callbacks all run on it, one at a time, and
 * never inside a scheduling cycle (the scheduler's idle handle runs whole
 * cycles), so a reload swaps generations between cycles.
 *
 * The pod index maps "namespace/name" and uid to an entry that says where
 * the pod is: pending in the scheduler's queue (the scheduler owns the
 * pod), bound (the cache owns it), or left to another scheduler (no
 * profile matches its schedulerName; the entry owns it).
 */
#ifndef KS_SERVER_SERVER_H
#define KS_SERVER_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "cluster/cache.h"
#include "cluster/pod_state.h"
#include "base/strmap.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader.h"
#include "kube/source.h"
#include "auth.h"
#include "delegate.h"
#include "http.h"
#include "tls.h"
#include "metrics.h"
#include "plugin_samples.h"
#include "metrics_authn.h"
#include "metrics_sched.h"

typedef struct ks_pod_entry {
    const char *uid; /* the entry's own copy (in key's buffer, after it) */
    int state;             /* enum ks_pod_state */
    ks_pod_t *other;       /* KS_POD_OTHER: owned here */
    const char *node;      /* KS_POD_BOUND: interned node name */
    uint64_t generation;   /* generation of the last scheduling cycle */
    const char *profile;   /* interned profile of the last cycle */
    uint64_t bind_rv;      /* KS_POD_BOUND: the binding's resourceVersion */
    double attempt_t0;     /* start of the open attempt (monotonic s) */
    int attempt_open;      /* selected a node; binding not finished */
    int permit_rejected;   /* the open attempt was rejected at Permit */
    uint32_t sli_attempts; /* attempts when the node was selected */
    double sli_t0;         /* its first attempt's start (monotonic s) */
    int sli_flushed;       /* the unschedulable timeout flushed it once */
    char key[];            /* "namespace/name" */
} ks_pod_entry_t;

typedef struct ks_watcher {
    struct ks_server *srv;
    ks_http_conn_t *conn;
    struct ks_watcher *prev, *next;
} ks_watcher_t;

/* One plugin of a generation, as recorded when it was swapped in. */
typedef struct ks_gen_plugin {
    char *name, *version, *file, *copy_path;
    uint64_t hash; /* content hash (console.h: ks_console_plugin_hash) */
} ks_gen_plugin_t;

/* History of generations (what the API reports about retired ones). */
typedef struct ks_gen_record {
    uint64_t id;
    char *trigger;
    double unix_time;
    ks_gen_plugin_t *plugins;
    size_t n_plugins;
} ks_gen_record_t;

#define KS_GEN_HISTORY 64

typedef struct ks_server {
    uv_loop_t *loop;
    ks_generation_opts_t gen_opts;
    ks_cache_t *cache;
    ks_scheduler_t *sched;
    ks_http_server_t *http;
    char listen_addr[128];
    ks_auth_t *auth;    /* --token-file, or NULL: no authentication */
    ks_tls_ctx_t *tls;  /* --tls-*-file, or NULL: plain HTTP */
    /* Delegated authentication and authorization (delegate.h), or NULL,
     * and the connections of --authentication-kubeconfig [0] and
     * --authorization-kubeconfig [1] (NULL: not given), freed with the
     * server (secure.h). */
    struct ks_delegate *delegate;
    ks_kube_conn_t *delegate_conn[2];

    /* objects */
    ks_strmap_t nodes;    /* interned node name -> (void *)1 */
    ks_strmap_t pods;     /* entry->key -> entry */
    ks_strmap_t pod_uids; /* entry->uid -> entry */
    ks_watcher_t *watchers;
    /* The embedded API's journal (journal.h), NULL when there is none,
     * and the last binding's resourceVersion (1, 2, ...). */
    struct ks_journal *journal;
    uint64_t bind_rv;
    /* The declared resources' last resourceVersion (api_objects.h). */
    uint64_t object_rv;
    size_t n_watchers;
    /* Bytes a bindings watcher may have queued and unsent (beyond its
     * initial events) before it is disconnected; 0: 4 MiB. */
    size_t watch_buffer_limit;

    /* metrics */
    ks_metrics_t *metrics;
    ks_metric_t *m_attempts, *m_pending, *m_attempt_dur, *m_ep_dur,
        *m_plugin_dur, *m_permit_wait, *m_preempt, *m_reloads, *m_plugin_gen,
        *m_generation, *m_images;
    /* opportunistic batching: counters advanced from the scheduler's
     * stats at scrape time (the *_seen values already added) */
    ks_metric_t *m_batch_reused, *m_batch_mismatches;
    uint64_t batch_reused_seen, batch_mismatches_seen;
    ks_metric_t *m_bulk_compared, *m_bulk_mismatches;
    uint64_t bulk_compared_seen, bulk_mismatches_seen;
    /* the Filter/Score workers' jobs (pool.h), shared or inline */
    ks_metric_t *m_worker_jobs;
    uint64_t worker_shared_seen, worker_inline_seen;
    /* the cycles their gate timed (pool_gate.h), by way */
    ks_metric_t *m_worker_cycles;
    uint64_t worker_cycles_share_seen, worker_cycles_inline_seen;
    uint64_t worker_cycles_stall_seen;
    ks_plugin_samples_t *plugin_samples; /* into m_plugin_dur, any thread */
    /* kube-scheduler's other scheduler_* series (metrics_sched.h) */
    ks_sched_metrics_t *sched_metrics;
    /* the authentication filter's series (metrics_authn.h) */
    ks_authn_metrics_t authn_metrics;

    /* reload */
    uv_fs_event_t *fs_events;
    char **fs_names; /* the file a watch filters on, NULL: any .so */
    size_t n_fs;
    uv_timer_t debounce;
    int debounce_armed;
    char debounce_what[1200];
    ks_gen_record_t history[KS_GEN_HISTORY];
    size_t n_history; /* records in history (ring, oldest first) */
    size_t history_head;
    int last_ok;              /* -1: no reload yet */
    uint64_t last_generation; /* generation of the last success */
    char *last_error;         /* malloc'd; NULL when the last succeeded */
    char last_trigger[1200];
    double last_time;

    /* cluster mode (NULL in the embedded mode) */
    ks_kube_conn_t *kconn;
    ks_kube_client_t *kclient, *kevents, *klease;
    ks_kube_source_t *ksrc;
    ks_metric_t *m_rest_requests, *m_rest_latency, *m_leader;
    ks_metric_t *m_ext_requests, *m_ext_latency; /* scheduler extenders */
    ks_metric_t *m_hint_dur, *m_event_dur; /* QueueingHints, queue events */
    ks_leader_t *leader; /* NULL: no leader election */
    struct ks_shadow *shadow; /* shadow mode (shadow/shadow.h), or NULL */
    int lost_lease;      /* exit status 4 */
    int releasing;       /* the lease is being released (drain) */

    /* memory: hand freed heap back to the system every few seconds */
    uv_timer_t trim_timer;

    /* shutdown (signals: signals.h, attached by ks_server_start) */
    uv_timer_t drain_timer;
    double drain_timeout_s;
    double drain_deadline;
    int draining;
    int stopped;
    int handles_inited;

    /* the web console's state (console.h), NULL when out of memory */
    struct ks_console *console;
} ks_server_t;

/* Set up the scheduler, metrics and API on `loop` with a built generation
 * (the server takes the caller's reference). 0 or a KS_E* code. */
/* Cluster mode: the API server's connection (the server takes it) and,
 * with leader_elect, the Lease to hold while scheduling. */
typedef struct ks_server_cluster {
    ks_kube_conn_t *conn;
    int leader_elect;
    ks_leader_opts_t le; /* callbacks are the server's; strings copied */
    /* shadow mode: the scheduler names to compare with, or NULL (copied;
     * not with leader_elect) */
    const struct ks_shadow_names *shadow;
} ks_server_cluster_t;

/* cluster: NULL for the embedded API. */
int ks_server_init(ks_server_t *srv, uv_loop_t *loop,
                   const ks_generation_opts_t *opts, ks_generation_t *gen,
                   const ks_server_cluster_t *cluster, ks_error_t *err);
/* Start the reload triggers (SIGHUP, file watches) and the shutdown
 * signals: attaches the process's signals (signals.h; the caller must
 * have called ks_signals_block first) to the loop. SIGHUP reloads, the
 * first SIGTERM/SIGINT begins the drain, a second one exits at once with
 * status 128+signo even while the loop is blocked. */
int ks_server_start(ks_server_t *srv, ks_error_t *err);
/* Free everything (after the loop has stopped running handles). */
void ks_server_free(ks_server_t *srv);

/* The HTTP entry point (router). */
void ks_server_handle(void *ud, ks_http_conn_t *c,
                      const ks_http_request_t *req);

/* Reload: build a new generation with the same options and swap it in;
 * on failure keep the current one. Records the result (metrics, history,
 * /debug/plugins). `trigger` says why ("SIGHUP", "POST /-/reload", a file
 * name). Returns 0 and the new id in *gen_id, or a KS_E* code with err. */
int ks_server_reload(ks_server_t *srv, const char *trigger, uint64_t *gen_id,
                     ks_error_t *err);
/* Record the current generation in the history (after init or a swap). */
void ks_server_record_generation(ks_server_t *srv, const char *trigger);
void ks_server_reload_close(ks_server_t *srv);
/* SIGHUP: reload now (the signal thread hands it to the loop). */
void ks_server_on_sighup(ks_server_t *srv);
int ks_server_reload_start(ks_server_t *srv, ks_error_t *err);

/* Shutdown: stop accepting, drain Permit waits and binding cycles until
 * nothing is in flight or the drain deadline passes, then stop. */
void ks_server_begin_drain(ks_server_t *srv, const char *why);
/* Close every handle now (the loop then ends); safe in any state after
 * ks_server_init, even a failed one. */
void ks_server_stop(ks_server_t *srv);

/* The pod index. */
ks_pod_entry_t *ks_server_pod_by_key(ks_server_t *srv, const char *ns,
                                     const char *name);
ks_pod_entry_t *ks_server_pod_by_uid(ks_server_t *srv, const char *uid);
/* Insert a new entry ("ns/name", uid); NULL on ENOMEM. */
ks_pod_entry_t *ks_server_pod_add(ks_server_t *srv, const ks_pod_t *pod,
                                  int state);
void ks_server_pod_remove(ks_server_t *srv, ks_pod_entry_t *e);

/* Send one JSON line to every bindings watcher. */
void ks_server_broadcast(ks_server_t *srv, const char *line, size_t len);
/* Watch events: {"type":"Binding","pod":"ns/name","node":N,"generation":G},
 * {"type":"FailedScheduling","pod":...,"message":...,"generation":G},
 * {"type":"Preempted","pod":...}. */
void ks_server_emit_binding(ks_server_t *srv, const ks_pod_entry_t *e);
void ks_server_emit_failed(ks_server_t *srv, const ks_pod_entry_t *e,
                           const char *message);
void ks_server_emit_preempted(ks_server_t *srv, const ks_pod_entry_t *e);
/* Monotonic seconds. */
double ks_server_now(void);

#endif
