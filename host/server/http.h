/*
 * A small HTTP/1.1 server on a libuv loop (TCP or Unix socket), requests
 * parsed with http_parser.
 *
 * - Keep-alive and pipelining: requests on one connection are handled in
 *   order; each handler answers synchronously with ks_http_respond() or
 *   turns the connection into a stream with ks_http_stream_begin().
 * - Limits: request bodies over `body_limit` get 413 and the connection is
 *   closed once the rest of the body has been read and dropped; URLs over
 *   8 KiB get 414; a request must arrive within 60 s of its first byte
 *   (408), an idle keep-alive connection is closed after 120 s; at most
 *   1024 connections (more are closed at once).
 * - Slow clients never block the loop: writes are queued per connection
 *   (uv_write); a connection that stops reading its responses is no longer
 *   read from until its queue drains below 1 MiB, and a stream whose queue
 *   exceeds 16 MiB is dropped.
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
    const char *body;         /* NUL-terminated; "" if none */
    size_t body_len;
} ks_http_request_t;

typedef void (*ks_http_handler_fn)(void *ud, ks_http_conn_t *c,
                                   const ks_http_request_t *req);

#define KS_HTTP_DEFAULT_BODY_LIMIT (1024 * 1024)

/* A server with one handler for every request. NULL on ENOMEM. */
ks_http_server_t *ks_http_server_new(uv_loop_t *loop, ks_http_handler_fn fn,
                                     void *ud, size_t body_limit);
/* Listen on a TCP address (port 0: any free port). The address actually
 * bound is written to `bound` as "HOST:PORT" ("[HOST]:PORT" for IPv6). */
int ks_http_listen_tcp(ks_http_server_t *s, const struct sockaddr *addr,
                       char *bound, size_t bound_len, ks_error_t *err);
/* Listen on a Unix socket created with mode 0600 (a stale socket file at
 * `path` is replaced; any other file is an error). The file is removed by
 * ks_http_server_close(). */
int ks_http_listen_unix(ks_http_server_t *s, const char *path,
                        ks_error_t *err);
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
/* End a stream and close the connection. */
void ks_http_stream_end(ks_http_conn_t *c);

/* Called once when the connection closes (for stream owners). */
void ks_http_conn_on_close(ks_http_conn_t *c, void (*fn)(void *ud,
                                                        ks_http_conn_t *c),
                           void *ud);

/* "OK", "Not Found", ... */
const char *ks_http_reason(int status);

#endif
