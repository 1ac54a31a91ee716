/*
 * The Kubernetes API client: REST calls to one API server over the HTTP
 * client (libcurl on the libuv loop), with the connection's TLS settings
 * and credentials (kubeconfig, in-cluster, exec plugins), the
 * clientConnection rate limit, and upstream's error texts.
 *
 * Every request carries "Authorization" from ks_kube_conn_credentials().
 * A 401 invalidates the credentials (a rotated token file is re-read, an
 * exec plugin re-run) and the request is retried once. Failures are
 * reported as a message that says what was refused and why, e.g.
 * "GET /api/v1/nodes: forbidden: User \"ksched\" cannot list resource
 * \"nodes\" in API group \"\" at the cluster scope" (the API server's
 * Status message), "... : the server's certificate is not trusted: ...".
 *
 * Threads: loop thread only. Ownership: the client keeps a pointer to the
 * connection (the caller's; it must outlive the client).
 */
#ifndef KS_KUBE_CLIENT_H
#define KS_KUBE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/error.h"
#include "kube/kubeconfig.h"

typedef struct ks_kube_client ks_kube_client_t;
typedef struct ks_kube_call ks_kube_call_t;

/* Requests (not watches) a client has running at once by default: the
 * rest wait in order in the client's queue. Over HTTP/2 they share one
 * connection with the watches (libcurl's 100 streams a connection), and
 * more at once only makes the API server juggle them, not answer sooner. */
#define KS_KUBE_DEFAULT_MAX_RUNNING 64

typedef struct ks_kube_client_opts {
    double qps; /* clientConnection.qps (upstream default 50) */
    int burst;  /* clientConnection.burst (upstream default 100) */
    /* Requests (watches not counted) running at once: 0 the default
     * (KS_KUBE_DEFAULT_MAX_RUNNING), < 0 no cap. */
    int max_running;
    const char *user_agent;
    /* Optional: every finished request (metrics). */
    void (*observe)(void *ud, const char *verb, long code, double seconds);
    void *observe_ud;
} ks_kube_client_opts_t;

/* What a finished call returns. status 0: no answer (transport failure;
 * message says why). body: the response (NUL-terminated), valid during
 * the callback. message: a one-line description of a failure (status 0
 * or >= 400), "" on success. */
typedef struct ks_kube_result {
    long status;
    const char *body;
    size_t body_len;
    const char *message;
    int tls_error;
} ks_kube_result_t;

typedef void (*ks_kube_done_cb)(void *ud, const ks_kube_result_t *r);
/* Streaming (watches): body bytes as they arrive; return non-zero to stop
 * (done is then called). */
typedef int (*ks_kube_data_cb)(void *ud, const char *p, size_t n);

ks_kube_client_t *ks_kube_client_new(uv_loop_t *loop, ks_kube_conn_t *conn,
                                     const ks_kube_client_opts_t *o,
                                     ks_error_t *err);
/* Cancels every call (only on_cancel callbacks run) and frees the client
 * once its handles are closed; `closed` (may be NULL) runs then. */
void ks_kube_client_close(ks_kube_client_t *c, void (*closed)(void *ud),
                          void *ud);

typedef struct ks_kube_call_opts {
    const char *method;       /* GET, POST, PATCH, PUT, DELETE */
    const char *path;         /* "/api/v1/nodes?limit=500" */
    const char *body;         /* JSON (copied); NULL: none */
    const char *content_type; /* NULL: application/json when body */
    long timeout_ms;          /* 0: none (watches) */
    long low_speed_timeout_s; /* abort a silent stream after this long */
    int watch;                /* streaming, not rate limited */
    const char *verb;         /* metric label; NULL: method */
    ks_kube_data_cb on_data;  /* with watch */
    ks_kube_done_cb on_done;  /* exactly once unless cancelled */
    void *ud;
    /* Optional: the object the call works for. ks_kube_client_cancel_owner
     * cancels every call of one owner (so an owner keeps no list of its
     * own), and on_cancel(ud) then runs instead of on_done, as it does for
     * the calls ks_kube_client_close drops, to free what ud holds. */
    const void *owner;
    void (*on_cancel)(void *ud);
    /* Send after this many ms (a retry's backoff; 0: now). Until then the
     * call counts as in flight and is cancelled like any other; when it
     * cannot be sent then, on_done runs with status 0 and the reason. */
    uint64_t delay_ms;
} ks_kube_call_opts_t;

/* Start a call. NULL with err when it cannot start (no callback runs).
 * The returned handle is valid until on_done runs or the call is
 * cancelled. */
ks_kube_call_t *ks_kube_call(ks_kube_client_t *c, const ks_kube_call_opts_t *o,
                             ks_error_t *err);
/* No callback of the call runs after this (not on_cancel either). */
void ks_kube_call_cancel(ks_kube_call_t *call);
/* Cancel every call started with this owner: each one's on_cancel runs
 * (when set), never its on_done. */
void ks_kube_client_cancel_owner(ks_kube_client_t *c, const void *owner);

/* `s` percent-encoded for a query parameter (malloc'd; NULL on ENOMEM). */
char *ks_kube_query_escape(const char *s);

/* "https://host:port" of the server, for messages. */
const char *ks_kube_client_server(const ks_kube_client_t *c);
/* Calls queued or running, watches included. */
size_t ks_kube_client_in_flight(const ks_kube_client_t *c);
/* The most calls there were at once since the client was made. */
size_t ks_kube_client_in_flight_max(const ks_kube_client_t *c);

/* The message of an API server Status body ("pods \"x\" not found"), or
 * NULL when the body is not a Status. Writes at most len bytes. */
const char *ks_kube_status_message(const char *body, size_t n, char *buf,
                                   size_t len);

#endif
