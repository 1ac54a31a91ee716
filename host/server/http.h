/*
 * A small HTTP/1.1 server on a libuv loop (TCP or Unix socket), requests
 * parsed with http_parser.
 *
 * - Keep-alive and pipelining: requests on one connection are handled in
 *   order; each handler answers synchronously with ks_http_respond() or
 *   turns the connection into a stream with ks_http_stream_begin().
 * - Limits (ks_http_limits_t, defaults below): request bodies over
 *   `body_limit` get 413 and the connection is closed once the rest of
 *   the body has been read and dropped; URLs over 8 KiB get 414; header
 *   fields over 80 KiB get 431.
 * - Deadlines: a request head must arrive within `header_timeout_ms` (of
 *   the connection's opening for its first request, of the request's
 *   first byte for a later one) and its body within `body_timeout_ms` of
 *   the head's end, else 408 and a close; a keep-alive connection waiting
 *   for its next request is closed after `idle_timeout_ms` without
 *   traffic (a connection whose answers the client does not read counts
 *   as idle).
 * - Connection slots: at most `max_conns` connections serve any request.
 *   When they are all taken, a new connection first replaces the one idle
 *   the longest (lingering after a close, between requests, or waiting
 *   for its client to read its answers); if none
 *   is idle it may take one of `reserved_conns` further slots, which
 *   answer only the `reserved_paths` (by default /healthz, /readyz,
 *   /livez, /metrics; one request, then the connection closes) and answer
 *   429 with Retry-After to anything else; when those are taken too, the
 *   oldest reserved connection not yet answered is closed for the new
 *   one. So a client holding every slot with idle or half-sent requests
 *   never locks out health checks and scrapes.
 * - Slow readers never block the loop or grow memory without bound:
 *   writes are queued per connection (uv_write); once a connection has
 *   more than `max_output` bytes queued, its further pipelined requests
 *   are not parsed (nor its socket read) until the queue drains to half
 *   of that; a stream whose queue exceeds its limit (`stream_max_pending`
 *   or ks_http_stream_set_limit) is dropped.
 * - TLS (ks_http_server_set_tls): TCP connections speak TLS through
 *   tls.h's memory BIOs, so every limit above applies to them as to plain
 *   ones; the handshake counts against the request head's deadline. A
 *   client that sends plain HTTP gets a plain 400 and is closed.
 * - The soft open-file limit is raised (within the hard limit) when it is
 *   below the connections allowed plus a margin.
 *
 * Ownership: the server owns its listeners and connections. A connection
 * pointer handed to a handler stays valid until its close callback (set
 * with ks_http_conn_on_close) has run; after that it must not be used.
 * Threads: every function, on the loop thread only.
 */
#ifndef KS_SERVER_HTTP_H
#define KS_SERVER_HTTP_H

#include <stddef.h>

#include <uv.h>

#include "base/error.h"

typedef struct ks_http_server ks_http_server_t;
typedef struct ks_http_conn ks_http_conn_t;

typedef struct ks_http_request {
    const char *method;       /* "GET", "POST", ... ("GET" for HEAD) */
    int head;                 /* the request was HEAD: no body is sent */
    const char *path;         /* the path, without query */
    const char *query;        /* the query string without '?', "" if none */
    const char *content_type; /* "" if absent */
    const char *authorization; /* the Authorization header, or NULL */
    const char *body;         /* NUL-terminated; "" if none */
    size_t body_len;
} ks_http_request_t;

typedef void (*ks_http_handler_fn)(void *ud, ks_http_conn_t *c,
                                   const ks_http_request_t *req);

#define KS_HTTP_DEFAULT_BODY_LIMIT (1024 * 1024)
#define KS_HTTP_DEFAULT_MAX_CONNS 1024
#define KS_HTTP_DEFAULT_RESERVED_CONNS 32
#define KS_HTTP_DEFAULT_HEADER_TIMEOUT_MS 10000
#define KS_HTTP_DEFAULT_BODY_TIMEOUT_MS 60000
#define KS_HTTP_DEFAULT_IDLE_TIMEOUT_MS 60000
#define KS_HTTP_DEFAULT_MAX_OUTPUT (1024 * 1024)
#define KS_HTTP_DEFAULT_STREAM_MAX_PENDING (4 * 1024 * 1024)

/* Limits of one server. A field left 0 (NULL) takes its default. */
typedef struct ks_http_limits {
    size_t body_limit;           /* request body bytes (1 MiB) */
    size_t max_conns;            /* connections for any request (1024) */
    size_t reserved_conns;       /* more, for reserved_paths only (32) */
    unsigned header_timeout_ms;  /* request head deadline (10 s) */
    unsigned body_timeout_ms;    /* request body deadline (60 s) */
    unsigned idle_timeout_ms;    /* idle keep-alive connection (60 s) */
    size_t max_output;           /* queued answer bytes before pipelined
                                    requests wait (1 MiB) */
    size_t stream_max_pending;   /* queued stream bytes before the stream
                                    is dropped (4 MiB) */
    const char *const *reserved_paths; /* NULL-terminated; the array must
                                          outlive the server. Default:
                                          /healthz /readyz /livez
                                          /metrics */
} ks_http_limits_t;

/* Counters of one server (for tests and diagnostics). */
typedef struct ks_http_stats {
    size_t conns;          /* open now, reserved ones included */
    size_t reserved_conns; /* open now in reserved slots */
    size_t queued_bytes;   /* answer bytes queued over all connections */
    unsigned long long requests; /* requests handed to the handler */
    unsigned long long evicted;  /* connections closed for a new one */
    unsigned long long refused;  /* connections closed at once: no slot */
} ks_http_stats_t;

/* The defaults, filled in. */
void ks_http_limits_default(ks_http_limits_t *l);

/* A server with one handler for every request, with the default limits
 * and `body_limit` (0: the default). NULL on ENOMEM. */
ks_http_server_t *ks_http_server_new(uv_loop_t *loop, ks_http_handler_fn fn,
                                     void *ud, size_t body_limit);
/* Replace the limits (fields left 0 take the defaults). Slot counts apply
 * to connections accepted from now on, deadlines to those armed from now
 * on, output bounds at once. Call before listening to be sure the
 * open-file limit is raised to match. */
void ks_http_server_set_limits(ks_http_server_t *s, const ks_http_limits_t *l);
/* The limits in force (defaults filled in). */
void ks_http_server_get_limits(const ks_http_server_t *s, ks_http_limits_t *l);
void ks_http_server_stats(const ks_http_server_t *s, ks_http_stats_t *st);
/* Listen on a TCP address (port 0: any free port). The address actually
 * bound is written to `bound` as "HOST:PORT" ("[HOST]:PORT" for IPv6). */
int ks_http_listen_tcp(ks_http_server_t *s, const struct sockaddr *addr,
                       char *bound, size_t bound_len, ks_error_t *err);
/* The TCP port the server listens on (host order), or 0 when it does not
 * listen on TCP. Loop thread. */
unsigned ks_http_tcp_port(const ks_http_server_t *s);
/* Listen on a Unix socket created with mode 0600 (a stale socket file at
 * `path` is replaced; any other file is an error). The file is removed by
 * ks_http_server_close(). */
int ks_http_listen_unix(ks_http_server_t *s, const char *path,
                        ks_error_t *err);
/* Serve TLS on TCP connections accepted from now on (NULL: plain). The
 * context is the caller's and must outlive the server. */
struct ks_tls_ctx;
void ks_http_server_set_tls(ks_http_server_t *s, struct ks_tls_ctx *ctx);
/* Stop accepting new connections; existing ones go on. */
void ks_http_stop_accepting(ks_http_server_t *s);
/* Close every connection (streams are ended cleanly) and listener; the
 * server is freed once libuv has closed all its handles (run the loop). */
void ks_http_server_close(ks_http_server_t *s);
/* Connections currently open. */
size_t ks_http_conn_count(const ks_http_server_t *s);

/* Send a complete response. `extra_headers` is NULL or CRLF-terminated
 * header lines. Content-Length is added; "Connection: close" when the
 * connection will close after this response. */
void ks_http_respond(ks_http_conn_t *c, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t len);

/* Begin a streamed response (chunked for HTTP/1.1). The connection then
 * reads no more requests. 0, or -1 when the connection is going away. */
int ks_http_stream_begin(ks_http_conn_t *c, int status,
                         const char *content_type);
/* Send one piece of a stream. -1 when the connection is closing (the
 * caller should forget it) or its queue overflowed (it is then closed). */
int ks_http_stream_write(ks_http_conn_t *c, const char *data, size_t len);
/* This stream's queue limit in bytes: a write finding more than this still
 * queued drops the connection (SIZE_MAX: never; 0: the server's
 * stream_max_pending). */
void ks_http_stream_set_limit(ks_http_conn_t *c, size_t max_pending);
/* Bytes queued on a connection and not yet written to the socket. */
size_t ks_http_conn_queued(const ks_http_conn_t *c);
/* End a stream and close the connection. */
void ks_http_stream_end(ks_http_conn_t *c);

/* From inside the handler: the answer comes later (an asynchronous check,
 * such as a delegated authentication). The connection then parses and
 * reads no further request until ks_http_respond (or
 * ks_http_stream_begin) answers this one; the request's strings (path,
 * query, body, ...) stay valid until then. The idle deadline still runs:
 * a request left unanswered that long closes the connection. The caller
 * must learn of a close meanwhile (ks_http_conn_on_close) and then forget
 * the connection. */
void ks_http_defer(ks_http_conn_t *c);

/* Called once when the connection closes (for stream owners). */
void ks_http_conn_on_close(ks_http_conn_t *c, void (*fn)(void *ud,
                                                        ks_http_conn_t *c),
                           void *ud);

/* "OK", "Not Found", ... */
const char *ks_http_reason(int status);

#endif
