/*
 * An asynchronous HTTP client: libcurl's multi-socket interface driven by
 * a libuv loop. No thread per request: every transfer runs on the loop
 * that owns the client, sockets are watched with uv_poll_t and curl's
 * timeouts with one uv_timer_t.
 *
 * Used by the Kubernetes API-server client (list, watch, bind, patch,
 * events) and by scheduler extenders.
 *
 * Protocols and connections:
 * - http:// and https:// only; redirects are not followed (a 3xx is
 *   reported like any other status).
 * - https: HTTP/2 when the server offers it (ALPN), otherwise HTTP/1.1.
 *   HTTP/2 transfers to one host are multiplexed over one connection
 *   (new transfers wait for a connection being set up to find out whether
 *   it can multiplex rather than opening more).
 * - http: HTTP/1.1 with keep-alive; idle connections are reused.
 * - At most `max_host_connections` connections per host (default 8);
 *   transfers beyond that wait inside libcurl for a free connection.
 *   GOTCHA: over HTTP/1.1 every running watch (or any long stream) holds a
 *   connection of its own for as long as it runs, so with N watches on a
 *   plain-HTTP server (e.g. `kubectl proxy`) set max_host_connections
 *   above N, or other requests queue behind the watches forever. Over
 *   HTTP/2 this does not arise (up to 100 streams share a connection).
 * - Responses compressed with any encoding libcurl supports (gzip, ...)
 *   are asked for and decoded: callbacks always see the plain body.
 * - Proxies: libcurl's usual environment handling applies (http_proxy,
 *   HTTPS_PROXY, NO_PROXY, ...), as kubectl honours HTTPS_PROXY/NO_PROXY.
 *   Nothing overrides it; clear those variables if that is not wanted.
 * - TCP keep-alive probes are on (30 s), so dead peers of idle watch
 *   connections are found.
 *
 * TLS: peer and host verification are on unless `insecure`. The CA,
 * client certificate and key come from PEM files or PEM blobs (blobs win
 * when both are given). With neither CA file nor CA data, the system's
 * CA store is used. `server_name` (https only) makes the client connect
 * to the URL's host and port but send that name as SNI and verify the
 * certificate against it (kubeconfig's tls-server-name); it is done with
 * CURLOPT_CONNECT_TO and the URL's host rewritten, while the Host header
 * (HTTP/2 :authority) keeps the URL's host[:port] unless the request sets
 * its own Host header.
 *
 * Rate limit: a token bucket (net/rate_limit.h) of `burst` tokens refilled
 * at `qps` per second. A request that finds no token waits in a FIFO queue
 * (so later requests never overtake it) until a refill timer hands it one.
 * Requests with `no_rate_limit` skip the bucket (and the queue).
 *
 * Threads: the client and everything about it belongs to the thread
 * running its loop. Every function here must be called on that thread
 * (from loop callbacks, or before/between uv_run calls). Callbacks are
 * run on that thread, from inside uv_run.
 *
 * Re-entrancy: any callback may start new requests, cancel any request
 * (including, from on_data/on_headers, its own), or close the client.
 * Work that libcurl forbids inside its own callbacks (adding or removing
 * transfers) is deferred until libcurl returns, within the same loop
 * iteration.
 *
 * libcurl is initialised once per process (curl_global_init through
 * pthread_once) by the first ks_hc_new(); it is never torn down. No
 * signals are used (CURLOPT_NOSIGNAL; a host name lookup runs on a
 * short-lived helper thread of libcurl's threaded resolver, IP addresses
 * need none) and writes to sockets never raise SIGPIPE.
 */
#ifndef KS_NET_HTTP_CLIENT_H
#define KS_NET_HTTP_CLIENT_H

#include <stddef.h>

#include <uv.h>

#include "base/error.h"

typedef struct ks_hc ks_hc_t;         /* one client: one CURLM on one uv loop */
typedef struct ks_hc_req ks_hc_req_t; /* one request, queued or in flight */

/* TLS settings; every field is optional. PEM only. Files are read when a
 * connection is made; blobs are copied when handed over. */
typedef struct ks_hc_tls {
    const char *ca_file;   /* CA bundle file */
    const void *ca_data;   /* CA bundle (PEM text), ca_len bytes */
    size_t ca_len;
    const char *cert_file; /* client certificate */
    const void *cert_data;
    size_t cert_len;
    const char *key_file;  /* client private key */
    const void *key_data;
    size_t key_len;
    int insecure;            /* skip peer and host verification */
    const char *server_name; /* SNI and name to verify instead of the
                                URL's host (https only; see above) */
} ks_hc_tls_t;

#define KS_HC_DEFAULT_MAX_BODY ((size_t)64 * 1024 * 1024)
#define KS_HC_DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define KS_HC_DEFAULT_MAX_HOST_CONNECTIONS 8L

typedef struct ks_hc_opts {
    double qps; /* token refill per second; <= 0: no rate limit */
    int burst;  /* bucket size; must be >= 1 when qps > 0 */
    long connect_timeout_ms;   /* 0: 10 s */
    long max_host_connections; /* 0: 8; < 0: no limit */
    /* At most this many rate-limited requests (those without
     * no_rate_limit) running at once; the rest wait in the rate limit's
     * FIFO queue, in order, without a libcurl transfer of their own, and
     * start as running ones end. 0: no cap. Streams (no_rate_limit) are
     * never held back. */
    size_t max_running;
    size_t max_body; /* cap of a buffered body (no on_data); 0: 64 MiB */
    const char *user_agent; /* NULL: "ksched"; copied */
    ks_hc_tls_t tls;        /* copied, data blobs too */
    /* Optional: called once per finished request (not for cancelled
     * ones, nor for requests dropped by ks_hc_close), just before its
     * on_done, for metrics such as rest_client_requests_total{code,
     * method,host} and the request latency. `verb` is the request's
     * verb (or method), `host` the URL's host[:port] as written (after
     * any server_name rewriting: the URL's own), `code` the HTTP status
     * or 0 when the transfer failed before a status arrived, `seconds`
     * the transfer's duration (not counting the rate-limit wait). The
     * strings live during the call only. */
    void (*observe)(void *ud, const char *verb, const char *host, long code,
                    double seconds);
    void *observe_ud;
    /* Optional: the clock of the rate limit and of queued_seconds, in
     * milliseconds on any monotonic scale (NULL: the loop's, uv_now).
     * Called on the loop thread; tests set it to move time by hand. The
     * rate timer still waits on the loop: when a token is due it looks
     * at this clock again. */
    uint64_t (*now_ms)(void *ud);
    void *clock_ud;
} ks_hc_opts_t;

/* What on_done gets. Everything in it (strings, body) lives during the
 * on_done call only; copy what must outlive it.
 *
 * A request succeeded iff curl_code == 0: only then is the body (or the
 * stream) complete. `status` is whatever the server answered, so a
 * transfer that fails after the response head (a watch cut off, a
 * whole-request timeout in the middle of the body, an on_data abort, the
 * body cap) reports that status together with a non-zero curl_code. */
typedef struct ks_hc_result {
    long status;        /* HTTP status; 0 when no response head arrived
                           (transport error, timeout before the head) */
    int curl_code;      /* CURLcode; 0 when the transfer completed */
    const char *error;  /* NULL on success; otherwise what went wrong and
                           where, e.g. "GET https://127.0.0.1:6443/api/v1/
                           nodes: the server certificate could not be
                           verified: SSL certificate problem: unable to get
                           local issuer certificate" */
    int tls_error;      /* 1: TLS verification or TLS configuration failed
                           (unknown CA, bad CA/cert/key data, name
                           mismatch) */
    int timed_out;      /* 1: the connect timeout, the whole-request timeout
                           or the low-speed limit ended the transfer */
    int body_too_large; /* 1: the buffered body exceeded max_body */
    int aborted;        /* 1: on_data returned non-zero */
    const char *body;   /* the whole body when the request had no on_data
                           (also on failure: what arrived, which may be
                           partial); NUL-terminated; "" when empty or
                           streaming. Never NULL. */
    size_t body_len;
    const char *content_type; /* Content-Type of the response, or NULL */
    double seconds;        /* transfer time (name lookup to end) */
    double queued_seconds; /* time spent waiting for a rate-limit token */
} ks_hc_result_t;

typedef struct ks_hc_request {
    const char *method; /* "GET", "POST", "PATCH", "PUT", "DELETE", "HEAD",
                           ...; NULL: "GET". A token, no spaces. */
    const char *url;    /* http:// or https:// */
    /* "Name: value" lines, copied. No CR or LF allowed. libcurl's rules:
     * "Name:" with nothing after removes a header libcurl would add,
     * "Name;" sends it empty. When a body is sent without a Content-Type
     * header, none is sent (libcurl's form type is suppressed). No
     * "Expect: 100-continue" is sent unless given here. */
    const char *const *headers;
    size_t n_headers;
    const char *body; /* request body, copied; NULL with body_len 0: none */
    size_t body_len;
    long timeout_ms;          /* whole request; 0: none (watches) */
    long low_speed_timeout_s; /* abort when not one byte arrives for this
                                 many seconds (watch liveness); 0: off */
    int no_rate_limit;        /* bypass the token bucket */
    const char *verb; /* label for observe, e.g. "WATCH"; NULL: method.
                         Copied. */
    /* NULL: the client's TLS settings. Otherwise these settings replace
     * the client's as a whole for this request (set the CA here too if
     * needed), e.g. for a client certificate handed out by an exec
     * credential plugin. Copied. Connections are only shared between
     * requests whose TLS settings are the same. */
    const ks_hc_tls_t *tls;
    /* Streaming: each received piece of the body, in order. Return
     * non-zero to abort the transfer (on_done then reports aborted, the
     * status as received and a non-zero curl_code). NULL: the body is
     * buffered, up to max_body, and handed to on_done. */
    int (*on_data)(void *ud, const char *p, size_t n);
    /* Optional: called once when the final response head is complete
     * (before any on_data), with the status and Content-Type (NULL if
     * none; the string lives during the call only). Not called when no
     * response head arrives. */
    void (*on_headers)(void *ud, long status, const char *content_type);
    /* Called exactly once when the request ends, unless it was cancelled
     * (or the client closed) first. Optional. */
    void (*on_done)(void *ud, const ks_hc_result_t *r);
    void *ud;
} ks_hc_request_t;

/* A client on `loop`. `o` may be NULL (defaults); everything in it is
 * copied. NULL on failure (KS_EINVAL for bad options, KS_ENOMEM, KS_EHTTP
 * when libcurl cannot be set up) with `err` filled. The loop must outlive
 * the client: close it with ks_hc_close() and let the loop run its close
 * callbacks before closing the loop. */
ks_hc_t *ks_hc_new(uv_loop_t *loop, const ks_hc_opts_t *o, ks_error_t *err);

/* Start a request, or queue it behind the token bucket. Everything in `r`
 * is copied; `r` itself may be discarded on return. Returns a handle that
 * stays valid until on_done returns or ks_hc_cancel() is called on it
 * (and, for requests dropped by ks_hc_close, until that call). Returns
 * NULL with `err` filled on failure (KS_EINVAL: bad method, URL, header,
 * or the client is closing; KS_ENOMEM; KS_ETLS: TLS settings libcurl
 * cannot take; KS_EHTTP: libcurl refused the transfer); the callbacks are
 * never called then. The transfer itself makes progress only while the
 * loop runs; on_done is never called from inside ks_hc_start. */
ks_hc_req_t *ks_hc_start(ks_hc_t *c, const ks_hc_request_t *r,
                         ks_error_t *err);

/* Cancel: no callback of `r` runs after this returns, and `r` must not be
 * used again. Safe from any callback of any request, including r's own
 * on_data/on_headers (the transfer is then aborted when that callback
 * returns). Calling it from inside r's own on_done does nothing (the
 * request is already finishing); after on_done returned, `r` is gone and
 * this must not be called. A queued request is dropped from the queue
 * without taking a token. */
void ks_hc_cancel(ks_hc_req_t *r);

/* Requests started and not yet finished or cancelled: queued for a token
 * plus running. */
size_t ks_hc_in_flight(const ks_hc_t *c);

/* Of those, the requests waiting for a rate-limit token or, under
 * max_running, for a running request to end. */
size_t ks_hc_queued(const ks_hc_t *c);

/* libcurl easy handles the requests hold now: the running and pending
 * ones, and queued ones with TLS settings of their own; a request queued
 * with the client's settings takes its handle when it starts. For tests
 * and diagnostics. Loop thread. */
size_t ks_hc_easy_in_use(const ks_hc_t *c);

/* The most requests that were in flight at once since the client was
 * made (queued ones included). */
size_t ks_hc_in_flight_max(const ks_hc_t *c);

/* Close the client: every request is dropped without any callback (their
 * handles become invalid), connections are closed and the uv handles are
 * closed. `closed` (may be NULL) is then called once from the loop after
 * the last handle has closed, when the client's memory is already freed;
 * run the loop until then. Call once; may be called from inside any of
 * the client's callbacks (the teardown then happens when that callback
 * returns to the client). After this call `c` and its request handles
 * must not be used, except inside one of this client's callbacks that is
 * still running: there ks_hc_start() fails with KS_EINVAL, ks_hc_cancel()
 * does nothing and ks_hc_in_flight() is 0. */
void ks_hc_close(ks_hc_t *c, void (*closed)(void *ud), void *ud);

#endif
