/* HTTP/1.1 server on libuv with http_parser. */
#include "http.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <http_parser.h>

#include "base/buf.h"
#include "base/log.h"
#include "tls.h"

#define MAX_URL 8192
#define LINGER_MS 2000
#define READ_BUF 65536
/* Input kept while an answer is deferred (ks_http_defer) before reading
 * stops until it is sent. */
#define DEFERRED_BACKLOG_MAX (64 * 1024)
/* Descriptors kept free beyond the connections (listeners, the loop,
 * plugin files, watches, clients of an API server). */
#define FD_MARGIN 256

struct ks_http_conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_timer_t timer;
    uv_shutdown_t shut;
    ks_http_server_t *srv;
    http_parser parser;
    ks_buf_t url, body, hfield, hvalue;
    char ctype[128];
    int last_was_value;
    int in_request;     /* a message began and is not complete */
    int in_body;        /* ... and its head is complete */
    int answered_early; /* answered at the head (413, 429): no handler */
    int url_too_long;
    int keep_alive;     /* of the current request */
    int http10;         /* the current request is HTTP/1.0 */
    int ignore_input;   /* no more requests are read */
    int streaming, chunked;
    int close_after;    /* close once every queued write is done */
    int shutting;       /* shutdown sent, waiting for EOF (lingering) */
    int closing;        /* uv_close called */
    int reading;
    int handles_open;
    int reserved;       /* in a reserved slot: reserved paths only */
    int input_seen;     /* input arrived (read, or waiting in the socket) */
    int out_paused;     /* too much queued: later requests wait */
    int deferred;       /* the handler answers later (ks_http_defer) */
    int in_handler;     /* inside the handler's call */
    unsigned long served; /* requests answered */
    uint64_t last_active; /* loop time of the last progress */
    size_t pending;     /* bytes queued for writing */
    size_t stream_limit; /* 0: the server's stream_max_pending */
    ks_buf_t backlog;   /* input not parsed while out_paused */
    ks_tls_conn_t *tls; /* TLS on this connection, or NULL */
    char auth[1100];    /* the current request's Authorization value */
    void (*on_close)(void *ud, ks_http_conn_t *c);
    void *on_close_ud;
    struct ks_http_conn *prev, *next;
};

typedef struct listener {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    ks_http_server_t *srv;
    int is_pipe;
    int open;
} listener_t;

struct ks_http_server {
    uv_loop_t *loop;
    ks_http_handler_fn fn;
    void *ud;
    ks_http_limits_t lim;
    listener_t tcp, pipe;
    char *unix_path;
    ks_http_conn_t *conns, *conns_tail; /* newest first */
    size_t n_conns;
    size_t n_reserved;
    size_t queued; /* pending bytes over all connections */
    unsigned long long requests, evicted, refused;
    uint64_t emfile_logged; /* loop time of the last EMFILE warning */
    int fd_limit_checked;
    int closing;
    int draining;
    int handles_open; /* listeners + connections not yet closed */
    http_parser_settings settings;
    ks_tls_ctx_t *tls; /* TLS for TCP connections, or NULL; not owned */
    char rbuf[READ_BUF];
    char pbuf[READ_BUF]; /* decrypted input of a TLS connection */
};

typedef struct wreq {
    uv_write_t req;
    ks_http_conn_t *c;
    size_t len;
    char data[];
} wreq_t;

const char *ks_http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

/* --- limits ----------------------------------------------------------------- */

static const char *const default_reserved_paths[] = {"/healthz", "/readyz",
                                                     "/livez", "/metrics",
                                                     NULL};

void ks_http_limits_default(ks_http_limits_t *l)
{
    memset(l, 0, sizeof *l);
    l->body_limit = KS_HTTP_DEFAULT_BODY_LIMIT;
    l->max_conns = KS_HTTP_DEFAULT_MAX_CONNS;
    l->reserved_conns = KS_HTTP_DEFAULT_RESERVED_CONNS;
    l->header_timeout_ms = KS_HTTP_DEFAULT_HEADER_TIMEOUT_MS;
    l->body_timeout_ms = KS_HTTP_DEFAULT_BODY_TIMEOUT_MS;
    l->idle_timeout_ms = KS_HTTP_DEFAULT_IDLE_TIMEOUT_MS;
    l->max_output = KS_HTTP_DEFAULT_MAX_OUTPUT;
    l->stream_max_pending = KS_HTTP_DEFAULT_STREAM_MAX_PENDING;
    l->reserved_paths = default_reserved_paths;
}

void ks_http_server_set_limits(ks_http_server_t *s, const ks_http_limits_t *l)
{
    ks_http_limits_t d;
    ks_http_limits_default(&d);
#define PICK(f) s->lim.f = l->f ? l->f : d.f
    PICK(body_limit);
    PICK(max_conns);
    PICK(reserved_conns);
    PICK(header_timeout_ms);
    PICK(body_timeout_ms);
    PICK(idle_timeout_ms);
    PICK(max_output);
    PICK(stream_max_pending);
    PICK(reserved_paths);
#undef PICK
    s->fd_limit_checked = 0;
}

void ks_http_server_get_limits(const ks_http_server_t *s, ks_http_limits_t *l)
{
    *l = s->lim;
}

void ks_http_server_stats(const ks_http_server_t *s, ks_http_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->conns = s->n_conns;
    st->reserved_conns = s->n_reserved;
    st->queued_bytes = s->queued;
    st->requests = s->requests;
    st->evicted = s->evicted;
    st->refused = s->refused;
}

/* Every connection allowed needs a descriptor: raise the soft limit
 * toward the hard one when it is too low for them. */
static void ensure_fd_limit(ks_http_server_t *s)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)(s->lim.max_conns + s->lim.reserved_conns +
                           FD_MARGIN);
    if (s->fd_limit_checked)
        return;
    s->fd_limit_checked = 1;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= need)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need
                      ? need
                      : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need)
        ks_log(KS_LOGL_WARN,
               "the open-file limit (%llu) is below the %zu connections "
               "allowed plus %d: raise it (ulimit -n) or lower the "
               "connection limits",
               (unsigned long long)rl.rlim_cur,
               s->lim.max_conns + s->lim.reserved_conns, FD_MARGIN);
}

/* --- lifetime ------------------------------------------------------------ */

static void server_maybe_free(ks_http_server_t *s)
{
    if (!s->closing || s->handles_open > 0)
        return;
    if (s->unix_path) {
        unlink(s->unix_path);
        free(s->unix_path);
    }
    free(s);
}

static void conn_handle_closed(uv_handle_t *h)
{
    ks_http_conn_t *c = h->data;
    ks_http_server_t *s = c->srv;
    if (--c->handles_open > 0)
        return;
    ks_buf_free(&c->url);
    ks_buf_free(&c->body);
    ks_buf_free(&c->hfield);
    ks_buf_free(&c->hvalue);
    ks_buf_free(&c->backlog);
    ks_tls_conn_free(c->tls);
    free(c);
    s->handles_open--;
    server_maybe_free(s);
}

static void conn_close(ks_http_conn_t *c)
{
    ks_http_server_t *s = c->srv;
    if (c->closing)
        return;
    c->closing = 1;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        s->conns_tail = c->prev;
    s->n_conns--;
    if (c->reserved)
        s->n_reserved--;
    if (c->on_close) {
        void (*fn)(void *, ks_http_conn_t *) = c->on_close;
        c->on_close = NULL;
        fn(c->on_close_ud, c);
    }
    uv_timer_stop(&c->timer);
    uv_close(&c->h.handle, conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

static void on_timer(uv_timer_t *t);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

static void arm_timer(ks_http_conn_t *c, uint64_t ms)
{
    if (!c->closing)
        uv_timer_start(&c->timer, on_timer, ms, 0);
}

static void start_reading(ks_http_conn_t *c)
{
    if (!c->reading && !c->closing &&
        uv_read_start(&c->h.stream, on_alloc, on_read) == 0)
        c->reading = 1;
}

static void stop_reading(ks_http_conn_t *c)
{
    if (c->reading) {
        uv_read_stop(&c->h.stream);
        c->reading = 0;
    }
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    ks_http_conn_t *c = req->data;
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    /* Lingering close: read (and drop) until the peer closes, so that
     * unread input does not turn our close into a reset. */
    start_reading(c);
    arm_timer(c, LINGER_MS);
}

static int raw_write(ks_http_conn_t *c, const char *a, size_t alen,
                     const char *b, size_t blen);
static void tls_flush(ks_http_conn_t *c);

static void begin_shutdown(ks_http_conn_t *c)
{
    if (c->closing || c->shutting)
        return;
    if (c->tls) {
        /* close_notify, then the TCP shutdown once it is written. */
        ks_tls_close_notify(c->tls);
        tls_flush(c);
        if (c->closing)
            return;
    }
    c->shutting = 1;
    c->ignore_input = 1;
    c->shut.data = c;
    if (uv_shutdown(&c->shut, &c->h.stream, on_shutdown) != 0)
        conn_close(c);
}

/* --- writing -------------------------------------------------------------- */

static void conn_resume(ks_http_conn_t *c);

static void on_write(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;
    ks_http_conn_t *c = w->c;
    c->pending -= w->len;
    c->srv->queued -= w->len;
    free(w);
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->close_after && c->pending == 0) {
        begin_shutdown(c);
        return;
    }
    if (c->shutting || c->streaming || c->deferred)
        return;
    /* The client reads: the idle deadline counts from now. */
    c->last_active = uv_now(c->srv->loop);
    if (!c->in_request)
        arm_timer(c, c->srv->lim.idle_timeout_ms);
    if (c->close_after)
        return;
    if (c->pending <= c->srv->lim.max_output / 2) {
        if (c->out_paused)
            conn_resume(c);
        else if (!c->reading && !c->ignore_input)
            start_reading(c);
    }
}

/* Queue a + b as one write to the socket. -1 when the connection is
 * closing. */
static int raw_write(ks_http_conn_t *c, const char *a, size_t alen,
                     const char *b, size_t blen)
{
    wreq_t *w;
    uv_buf_t buf;
    if (c->closing || c->shutting)
        return -1;
    w = malloc(sizeof *w + alen + blen);
    if (w == NULL) {
        conn_close(c);
        return -1;
    }
    w->c = c;
    w->len = alen + blen;
    if (alen)
        memcpy(w->data, a, alen);
    if (blen)
        memcpy(w->data + alen, b, blen);
    buf = uv_buf_init(w->data, (unsigned)w->len);
    if (uv_write(&w->req, &c->h.stream, &buf, 1, on_write) != 0) {
        free(w);
        conn_close(c);
        return -1;
    }
    c->pending += w->len;
    c->srv->queued += w->len;
    if (!c->streaming && c->pending > c->srv->lim.max_output)
        stop_reading(c);
    return 0;
}

/* TLS records waiting in the connection's output BIO go to the socket. */
static void tls_flush(ks_http_conn_t *c)
{
    size_t n = ks_tls_out_pending(c->tls);
    wreq_t *w;
    uv_buf_t buf;
    if (n == 0 || c->closing || c->shutting)
        return;
    w = malloc(sizeof *w + n);
    if (w == NULL) {
        conn_close(c);
        return;
    }
    w->c = c;
    w->len = ks_tls_out_take(c->tls, w->data, n);
    buf = uv_buf_init(w->data, (unsigned)w->len);
    if (uv_write(&w->req, &c->h.stream, &buf, 1, on_write) != 0) {
        free(w);
        conn_close(c);
        return;
    }
    c->pending += w->len;
    c->srv->queued += w->len;
    if (!c->streaming && c->pending > c->srv->lim.max_output)
        stop_reading(c);
}

/* Queue a + b for the client (encrypted on a TLS connection). */
static int conn_write(ks_http_conn_t *c, const char *a, size_t alen,
                      const char *b, size_t blen)
{
    if (c->tls == NULL)
        return raw_write(c, a, alen, b, blen);
    if (c->closing || c->shutting)
        return -1;
    /* Nothing can be sent before the handshake is done (a deadline that
     * passes during a handshake closes the connection). */
    if (!ks_tls_established(c->tls) ||
        (alen && ks_tls_write(c->tls, a, alen) != KS_TLS_OK) ||
        (blen && ks_tls_write(c->tls, b, blen) != KS_TLS_OK)) {
        conn_close(c);
        return -1;
    }
    tls_flush(c);
    return c->closing ? -1 : 0;
}

/* A deferred request got its answer: parse the requests that waited
 * behind it and read again (not from inside the handler's call: the
 * parser is still running there). */
static void deferred_done(ks_http_conn_t *c)
{
    if (!c->deferred)
        return;
    c->deferred = 0;
    if (c->in_handler || c->closing || c->shutting || c->streaming)
        return;
    if (!c->out_paused)
        conn_resume(c);
}

static void respond_raw(ks_http_conn_t *c, int status, const char *ctype,
                        const char *extra, const char *body, size_t len,
                        int head)
{
    char hdr[1024];
    int n, close_it;
    if (c->closing || c->shutting || c->streaming)
        return;
    close_it = !c->keep_alive || c->srv->draining;
    n = snprintf(hdr, sizeof hdr,
                 "HTTP/1.%d %d %s\r\n"
                 "Content-Type: %s\r\n"
                 "Content-Length: %zu\r\n"
                 "%s%s\r\n",
                 c->http10 ? 0 : 1, status, ks_http_reason(status), ctype,
                 len,
                 close_it    ? "Connection: close\r\n"
                 : c->http10 ? "Connection: keep-alive\r\n"
                             : "",
                 extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof hdr) {
        conn_close(c);
        return;
    }
    if (close_it) {
        c->close_after = 1;
        c->ignore_input = 1;
    }
    if (conn_write(c, hdr, (size_t)n, body, head ? 0 : len) != 0)
        return;
    if (c->close_after && c->pending == 0) {
        begin_shutdown(c);
        return;
    }
    deferred_done(c);
}

void ks_http_respond(ks_http_conn_t *c, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t len)
{
    respond_raw(c, status, content_type, extra_headers, body, len,
                c->parser.method == HTTP_HEAD);
}

/* An error answered by the HTTP layer itself; the connection closes.
 * `msg` must need no JSON escaping. */
static void respond_error_hdr(ks_http_conn_t *c, int status, const char *msg,
                              const char *extra)
{
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
                     "{},\"status\":\"Failure\",\"message\":\"%s\","
                     "\"reason\":\"%s\",\"code\":%d}\n",
                     msg,
                     status == 413   ? "RequestEntityTooLarge"
                     : status == 408 ? "Timeout"
                     : status == 429 ? "TooManyRequests"
                                     : "BadRequest",
                     status);
    if (n < 0 || (size_t)n >= sizeof body)
        n = 0;
    c->keep_alive = 0;
    respond_raw(c, status, "application/json", extra, body, (size_t)n, 0);
}

static void respond_error(ks_http_conn_t *c, int status, const char *msg)
{
    respond_error_hdr(c, status, msg, NULL);
}

int ks_http_stream_begin(ks_http_conn_t *c, int status,
                         const char *content_type)
{
    char hdr[512];
    int n;
    if (c->closing || c->shutting || c->streaming)
        return -1;
    c->chunked = !c->http10;
    n = snprintf(hdr, sizeof hdr,
                 "HTTP/1.%d %d %s\r\n"
                 "Content-Type: %s\r\n"
                 "Cache-Control: no-cache\r\n"
                 "%s\r\n",
                 c->chunked ? 1 : 0, status, ks_http_reason(status),
                 content_type,
                 c->chunked ? "Transfer-Encoding: chunked\r\n"
                            : "Connection: close\r\n");
    if (conn_write(c, hdr, (size_t)n, NULL, 0) != 0)
        return -1;
    c->streaming = 1;
    c->ignore_input = 1;
    c->deferred = 0; /* a stream reads no further request */
    uv_timer_stop(&c->timer);
    /* Keep reading (and dropping) input to notice when the client goes. */
    start_reading(c);
    return 0;
}

int ks_http_stream_write(ks_http_conn_t *c, const char *data, size_t len)
{
    char hdr[32];
    size_t limit;
    int n;
    if (!c->streaming || c->closing || c->shutting || c->close_after)
        return -1;
    if (len == 0)
        return 0;
    limit = c->stream_limit ? c->stream_limit : c->srv->lim.stream_max_pending;
    if (c->pending > limit) {
        ks_log(KS_LOGL_WARN, "dropping a stream client: %zu bytes queued, "
                            "over its limit of %zu (it does not read fast "
                            "enough)",
               c->pending, limit);
        conn_close(c);
        return -1;
    }
    if (!c->chunked)
        return conn_write(c, data, len, NULL, 0);
    n = snprintf(hdr, sizeof hdr, "%zx\r\n", len);
    if (conn_write(c, hdr, (size_t)n, data, len) != 0)
        return -1;
    return conn_write(c, "\r\n", 2, NULL, 0);
}

void ks_http_stream_set_limit(ks_http_conn_t *c, size_t max_pending)
{
    c->stream_limit = max_pending;
}

size_t ks_http_conn_queued(const ks_http_conn_t *c)
{
    return c->pending;
}

void ks_http_stream_end(ks_http_conn_t *c)
{
    if (!c->streaming || c->closing || c->shutting || c->close_after)
        return;
    if (c->chunked && conn_write(c, "0\r\n\r\n", 5, NULL, 0) != 0)
        return;
    c->close_after = 1;
    if (c->pending == 0)
        begin_shutdown(c);
}

void ks_http_defer(ks_http_conn_t *c)
{
    if (!c->closing && !c->shutting && !c->streaming)
        c->deferred = 1;
}

void ks_http_conn_on_close(ks_http_conn_t *c,
                           void (*fn)(void *ud, ks_http_conn_t *c), void *ud)
{
    c->on_close = fn;
    c->on_close_ud = ud;
}

/* --- parsing -------------------------------------------------------------- */

static ks_http_conn_t *conn_of(http_parser *p)
{
    return p->data;
}

static void finish_header(ks_http_conn_t *c)
{
    if (c->hfield.len == 12 &&
        strncasecmp(c->hfield.data, "content-type", 12) == 0)
        snprintf(c->ctype, sizeof c->ctype, "%s",
                 c->hvalue.data ? c->hvalue.data : "");
    else if (c->hfield.len == 13 &&
             strncasecmp(c->hfield.data, "authorization", 13) == 0)
        snprintf(c->auth, sizeof c->auth, "%.*s", (int)c->hvalue.len,
                 c->hvalue.data ? c->hvalue.data : "");
    ks_buf_reset(&c->hfield);
    ks_buf_reset(&c->hvalue);
    c->last_was_value = 0;
}

static int cb_message_begin(http_parser *p)
{
    ks_http_conn_t *c = conn_of(p);
    ks_buf_reset(&c->url);
    ks_buf_reset(&c->body);
    ks_buf_reset(&c->hfield);
    ks_buf_reset(&c->hvalue);
    c->ctype[0] = '\0';
    c->auth[0] = '\0';
    c->last_was_value = 0;
    c->answered_early = 0;
    c->url_too_long = 0;
    c->http10 = 0;
    c->in_request = 1;
    c->in_body = 0;
    /* The first request's head has had its deadline since the connection
     * opened; a later one's starts with its first byte. */
    if (c->served > 0)
        arm_timer(c, c->srv->lim.header_timeout_ms);
    return 0;
}

static int cb_url(http_parser *p, const char *at, size_t len)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->url.len + len > MAX_URL) {
        c->url_too_long = 1;
        return 0;
    }
    ks_buf_append(&c->url, at, len);
    return 0;
}

static int cb_header_field(http_parser *p, const char *at, size_t len)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->last_was_value)
        finish_header(c);
    if (c->hfield.len < 256)
        ks_buf_append(&c->hfield, at, len);
    return 0;
}

static int cb_header_value(http_parser *p, const char *at, size_t len)
{
    ks_http_conn_t *c = conn_of(p);
    c->last_was_value = 1;
    if (c->hvalue.len < 1024)
        ks_buf_append(&c->hvalue, at, len);
    return 0;
}

static void body_too_large(ks_http_conn_t *c)
{
    char msg[128];
    c->answered_early = 1;
    ks_buf_free(&c->body);
    snprintf(msg, sizeof msg,
             "request body is larger than the limit of %zu bytes",
             c->srv->lim.body_limit);
    /* Answer now; the rest of the input is read and dropped until the
     * client closes (or the lingering timeout), then the connection
     * closes. */
    respond_error(c, 413, msg);
}

/* Is the URL's path (before any query or fragment) a reserved path? */
static int reserved_path(const ks_http_server_t *s, const ks_buf_t *url)
{
    const char *const *r;
    size_t n = 0;
    while (n < url->len && url->data[n] != '?' && url->data[n] != '#')
        n++;
    for (r = s->lim.reserved_paths; r && *r; r++)
        if (strlen(*r) == n && memcmp(*r, url->data, n) == 0)
            return 1;
    return 0;
}

static int cb_headers_complete(http_parser *p)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->last_was_value)
        finish_header(c);
    c->keep_alive = http_should_keep_alive(p);
    c->http10 = p->http_major == 1 && p->http_minor == 0;
    c->in_body = 1;
    arm_timer(c, c->srv->lim.body_timeout_ms);
    if (c->reserved) {
        /* A reserved slot serves one request, and only a reserved path. */
        c->keep_alive = 0;
        if (!reserved_path(c->srv, &c->url)) {
            c->answered_early = 1;
            respond_error_hdr(c, 429,
                              "too many connections: the server has no "
                              "connection slot free for this request; "
                              "retry later",
                              "Retry-After: 1\r\n");
            return 0;
        }
    }
    if ((p->flags & F_CONTENTLENGTH) && p->content_length != ULLONG_MAX &&
        p->content_length > c->srv->lim.body_limit)
        body_too_large(c);
    return 0;
}

static int cb_body(http_parser *p, const char *at, size_t len)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->answered_early)
        return 0;
    if (c->body.len + len > c->srv->lim.body_limit) {
        body_too_large(c);
        return 0;
    }
    ks_buf_append(&c->body, at, len);
    return 0;
}

static void split_url(char *url, const char **path, const char **query)
{
    char *h = strchr(url, '#'), *q;
    if (h)
        *h = '\0'; /* a fragment never reaches the handlers */
    q = strchr(url, '?');
    if (q) {
        *q = '\0';
        *query = q + 1;
    } else {
        *query = "";
    }
    *path = url;
}

static int cb_message_complete(http_parser *p)
{
    ks_http_conn_t *c = conn_of(p);
    ks_http_server_t *s = c->srv;
    ks_http_request_t req;
    c->in_request = 0;
    c->in_body = 0;
    uv_timer_stop(&c->timer);
    if (c->answered_early) {
        c->ignore_input = 1;
    } else if (c->url_too_long) {
        respond_error(c, 414, "request URI too long");
    } else if (c->url.oom || c->body.oom) {
        c->keep_alive = 0;
        respond_raw(c, 500, "text/plain", NULL, "out of memory\n", 14, 0);
    } else {
        memset(&req, 0, sizeof req);
        req.head = p->method == HTTP_HEAD;
        req.method = req.head ? "GET" : http_method_str(p->method);
        ks_buf_append(&c->url, "", 0);
        ks_buf_append(&c->body, "", 0);
        split_url(c->url.data, &req.path, &req.query);
        req.content_type = c->ctype;
        req.authorization = c->auth[0] ? c->auth : NULL;
        req.body = c->body.data;
        req.body_len = c->body.len;
        c->served++;
        s->requests++;
        c->last_active = uv_now(s->loop);
        c->in_handler = 1;
        s->fn(s->ud, c, &req);
        c->in_handler = 0;
    }
    /* Waiting for the next request, or for the client to read the
     * answers (a closing connection too: it may never read them). */
    if (!c->closing && !c->streaming && !c->shutting)
        arm_timer(c, s->lim.idle_timeout_ms);
    if (c->ignore_input || c->closing) {
        http_parser_pause(p, 1); /* stop at this message */
    } else if (c->deferred) {
        /* The answer comes later: parse nothing more until then (the
         * request's buffers stay as they are). Reading goes on, into the
         * backlog, so that a client that leaves is noticed. */
        http_parser_pause(p, 1);
    } else if (!c->streaming && c->pending > s->lim.max_output) {
        /* Its answers are not being read: parse no further request until
         * they drain (one read could hold thousands of requests). */
        c->out_paused = 1;
        stop_reading(c);
        http_parser_pause(p, 1);
    }
    return 0;
}

/* --- reading -------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    ks_http_conn_t *c = h->data;
    (void)suggested;
    /* Parsing is synchronous in on_read, so one buffer serves all. */
    *buf = uv_buf_init(c->srv->rbuf, sizeof c->srv->rbuf);
}

/* Parse input; input after a pause for output is kept for later. */
static void conn_feed(ks_http_conn_t *c, const char *data, size_t len)
{
    size_t done = http_parser_execute(&c->parser, &c->srv->settings, data,
                                      len);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (c->closing)
        return;
    if (e == HPE_PAUSED) {
        http_parser_pause(&c->parser, 0);
        if (c->ignore_input || (!c->out_paused && !c->deferred)) {
            c->ignore_input = 1; /* paused after a message ending input */
            return;
        }
        if (done < len) {
            ks_buf_append(&c->backlog, data + done, len - done);
            if (c->backlog.oom)
                conn_close(c);
        }
        return;
    }
    if (e != HPE_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "malformed HTTP request: %s",
                 http_errno_description(e));
        c->ignore_input = 1;
        if (e == HPE_HEADER_OVERFLOW)
            respond_error(c, 431, "request header fields too large");
        else if (!c->streaming)
            respond_error(c, 400, msg);
    }
}

/* Its queue drained: parse the requests that waited, then read again. */
static void conn_resume(ks_http_conn_t *c)
{
    ks_buf_t b = c->backlog;
    c->out_paused = 0;
    memset(&c->backlog, 0, sizeof c->backlog);
    if (b.len > 0)
        conn_feed(c, b.data, b.len);
    ks_buf_free(&b);
    if (!c->closing && !c->out_paused && !c->ignore_input && !c->deferred)
        start_reading(c);
}

/* Request bytes (decrypted on a TLS connection). */
static void plain_input(ks_http_conn_t *c, const char *data, size_t len)
{
    if (c->ignore_input)
        return;
    if (c->out_paused || c->deferred) {
        /* Read before the pause took effect (or while an answer is
         * deferred): keep it for later, up to a bound. */
        ks_buf_append(&c->backlog, data, len);
        if (c->backlog.oom)
            conn_close(c);
        else if (c->backlog.len > DEFERRED_BACKLOG_MAX)
            stop_reading(c);
        return;
    }
    conn_feed(c, data, len);
}

/* Ciphertext from a TLS connection: the handshake goes on, records are
 * decrypted into the parser, and what OpenSSL has to say goes out. */
static void tls_input(ks_http_conn_t *c, const char *data, size_t len)
{
    static const char plain_answer[] =
        "HTTP/1.0 400 Bad Request\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Connection: close\r\n"
        "\r\n"
        "Client sent an HTTP request to an HTTPS server.\n";
    ks_http_server_t *s = c->srv;
    ssize_t n = 0;
    int rc;
    if (c->ignore_input)
        return;
    rc = ks_tls_feed(c->tls, data, len);
    if (rc == KS_TLS_PLAINTEXT) {
        /* Told in plain text, then closed once it is written. */
        c->ignore_input = 1;
        c->close_after = 1;
        c->keep_alive = 0;
        uv_timer_stop(&c->timer);
        if (raw_write(c, plain_answer, sizeof plain_answer - 1, NULL, 0) ==
            0)
            arm_timer(c, LINGER_MS);
        return;
    }
    if (rc != KS_TLS_OK) {
        conn_close(c);
        return;
    }
    while (!c->closing &&
           (n = ks_tls_read(c->tls, s->pbuf, sizeof s->pbuf)) > 0)
        plain_input(c, s->pbuf, (size_t)n);
    if (c->closing)
        return;
    tls_flush(c); /* handshake messages, alerts */
    if (n == KS_TLS_ERROR) {
        ks_log(KS_LOGL_DEBUG, "TLS: %s", ks_tls_error(c->tls));
        c->ignore_input = 1;
        if (c->pending == 0)
            conn_close(c);
        else
            c->close_after = 1; /* the alert goes first */
    } else if (n == KS_TLS_CLOSED) {
        conn_close(c); /* close_notify: as the end of input */
    }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    ks_http_conn_t *c = st->data;
    if (nread == 0 || c->closing)
        return;
    if (nread < 0) {
        /* EOF or an error: a stream client left, or lingering ended. */
        conn_close(c);
        return;
    }
    c->input_seen = 1;
    if (c->tls)
        tls_input(c, buf->base, (size_t)nread);
    else
        plain_input(c, buf->base, (size_t)nread);
}

static void on_timer(uv_timer_t *t)
{
    ks_http_conn_t *c = t->data;
    if (c->shutting) {
        conn_close(c); /* lingering ended */
        return;
    }
    if (c->in_request && !c->close_after) {
        c->ignore_input = 1;
        respond_error(c, 408, c->in_body
                                  ? "request body not received in time"
                                  : "request head not received in time");
        arm_timer(c, LINGER_MS);
        return;
    }
    conn_close(c); /* idle, or never sent anything */
}

/* Has a connection that sent nothing yet got input waiting in its
 * socket? (Accepting a burst of connections comes before reading them.) */
static int unread_input(ks_http_conn_t *c)
{
    uv_os_fd_t fd;
    int n = 0;
    if (c->input_seen)
        return 1;
    if (uv_fileno(&c->h.handle, &fd) == 0 && ioctl(fd, FIONREAD, &n) == 0 &&
        n > 0)
        c->input_seen = 1;
    return c->input_seen;
}

/* A connection of the slot class `reserved` that can go for a newcomer,
 * or NULL: one lingering after a close; else the one idle the longest
 * after an answer (between keep-alive requests, or waiting for its client
 * to read); else the oldest that never sent anything; in reserved slots,
 * else the oldest still sending its request (they serve quick requests:
 * a slow one is hostile). */
static ks_http_conn_t *pick_victim(ks_http_server_t *s, int reserved)
{
    ks_http_conn_t *c, *idle = NULL, *busy = NULL;
    for (c = s->conns; c; c = c->next) {
        if (c->closing || c->streaming || c->reserved != reserved ||
            c->deferred)
            continue;
        if (c->shutting)
            return c;
        if (c->served > 0 && !c->in_request) {
            if (idle == NULL || c->last_active < idle->last_active)
                idle = c;
        } else if (reserved && c->in_request) {
            if (busy == NULL || c->last_active < busy->last_active)
                busy = c;
        }
    }
    if (idle)
        return idle;
    /* The list is in accept order: oldest at the tail. */
    for (c = s->conns_tail; c; c = c->prev) {
        if (c->closing || c->streaming || c->reserved != reserved ||
            c->served > 0 || c->in_request || unread_input(c))
            continue;
        return c;
    }
    return busy;
}

static void evict(ks_http_server_t *s, ks_http_conn_t *c)
{
    s->evicted++;
    conn_close(c);
}

static void on_connection(uv_stream_t *ls, int status)
{
    listener_t *l = ls->data;
    ks_http_server_t *s = l->srv;
    ks_http_conn_t *c, *v;
    int rc, reserved = 0;
    if (status < 0) {
        uint64_t now = uv_now(s->loop);
        if (status == UV_EMFILE || status == UV_ENFILE) {
            /* Out of descriptors: libuv dropped the connection; make room
             * for the next one. */
            if ((v = pick_victim(s, 0)) != NULL)
                evict(s, v);
            if (s->emfile_logged && now - s->emfile_logged < 10000)
                return;
            s->emfile_logged = now ? now : 1;
        }
        ks_log(KS_LOGL_WARN, "accept: %s", uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return;
    c->srv = s;
    if (l->is_pipe)
        rc = uv_pipe_init(s->loop, &c->h.pipe, 0);
    else
        rc = uv_tcp_init(s->loop, &c->h.tcp);
    if (rc != 0) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    uv_timer_init(s->loop, &c->timer);
    c->timer.data = c;
    c->handles_open = 2;
    s->handles_open++;
    if (uv_accept(ls, &c->h.stream) != 0 || s->closing) {
        c->closing = 1; /* not linked: close the handles only */
        uv_close(&c->h.handle, conn_handle_closed);
        uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
        return;
    }
    /* A slot: a free one, an idle connection's, or a reserved one. */
    if (s->n_conns - s->n_reserved >= s->lim.max_conns &&
        (v = pick_victim(s, 0)) != NULL)
        evict(s, v);
    if (s->n_conns - s->n_reserved >= s->lim.max_conns) {
        reserved = 1;
        if (s->n_reserved >= s->lim.reserved_conns &&
            (v = pick_victim(s, 1)) != NULL)
            evict(s, v);
        if (s->n_reserved >= s->lim.reserved_conns) {
            s->refused++;
            c->closing = 1;
            uv_close(&c->h.handle, conn_handle_closed);
            uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
            return;
        }
    }
    c->reserved = reserved;
    s->n_reserved += (size_t)reserved;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    else
        s->conns_tail = c;
    s->conns = c;
    s->n_conns++;
    if (!l->is_pipe)
        uv_tcp_nodelay(&c->h.tcp, 1);
    if (!l->is_pipe && s->tls && (c->tls = ks_tls_conn_new(s->tls)) == NULL) {
        conn_close(c);
        return;
    }
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->keep_alive = 1;
    c->last_active = uv_now(s->loop);
    start_reading(c);
    arm_timer(c, s->lim.header_timeout_ms);
}

/* --- server --------------------------------------------------------------- */

ks_http_server_t *ks_http_server_new(uv_loop_t *loop, ks_http_handler_fn fn,
                                     void *ud, size_t body_limit)
{
    ks_http_server_t *s = calloc(1, sizeof *s);
    ks_http_limits_t l;
    if (s == NULL)
        return NULL;
    s->loop = loop;
    s->fn = fn;
    s->ud = ud;
    ks_http_limits_default(&l);
    l.body_limit = body_limit;
    ks_http_server_set_limits(s, &l);
    s->tcp.srv = s;
    s->pipe.srv = s;
    s->pipe.is_pipe = 1;
    http_parser_settings_init(&s->settings);
    s->settings.on_message_begin = cb_message_begin;
    s->settings.on_url = cb_url;
    s->settings.on_header_field = cb_header_field;
    s->settings.on_header_value = cb_header_value;
    s->settings.on_headers_complete = cb_headers_complete;
    s->settings.on_body = cb_body;
    s->settings.on_message_complete = cb_message_complete;
    return s;
}

void ks_http_server_set_tls(ks_http_server_t *s, ks_tls_ctx_t *ctx)
{
    s->tls = ctx;
}

static void listener_closed(uv_handle_t *h)
{
    listener_t *l = h->data;
    ks_http_server_t *s = l->srv;
    s->handles_open--;
    server_maybe_free(s);
}

int ks_http_listen_tcp(ks_http_server_t *s, const struct sockaddr *addr,
                       char *bound, size_t bound_len, ks_error_t *err)
{
    struct sockaddr_storage ss;
    int len = sizeof ss, rc;
    char host[INET6_ADDRSTRLEN];
    if (s->tcp.open)
        return ks_error_set(err, KS_EINVAL, "already listening on TCP");
    ensure_fd_limit(s);
    if ((rc = uv_tcp_init(s->loop, &s->tcp.h.tcp)) != 0)
        return ks_error_set(err, KS_EIO, "tcp: %s", uv_strerror(rc));
    s->tcp.h.handle.data = &s->tcp;
    s->tcp.open = 1;
    s->handles_open++;
    if ((rc = uv_tcp_bind(&s->tcp.h.tcp, addr, 0)) != 0 ||
        (rc = uv_listen(&s->tcp.h.stream, 511, on_connection)) != 0) {
        s->tcp.open = 0;
        uv_close(&s->tcp.h.handle, listener_closed);
        return ks_error_set(err, KS_EIO, "cannot listen: %s",
                            uv_strerror(rc));
    }
    if (uv_tcp_getsockname(&s->tcp.h.tcp, (struct sockaddr *)&ss, &len) ==
        0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(a6, host, sizeof host);
            snprintf(bound, bound_len, "[%s]:%u", host, ntohs(a6->sin6_port));
        } else {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
            uv_ip4_name(a4, host, sizeof host);
            snprintf(bound, bound_len, "%s:%u", host, ntohs(a4->sin_port));
        }
    }
    return 0;
}

unsigned ks_http_tcp_port(const ks_http_server_t *s)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (!s->tcp.open ||
        uv_tcp_getsockname(&s->tcp.h.tcp, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    return ss.ss_family == AF_INET6
               ? ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port)
               : ntohs(((const struct sockaddr_in *)&ss)->sin_port);
}

int ks_http_listen_unix(ks_http_server_t *s, const char *path,
                        ks_error_t *err)
{
    struct stat st;
    mode_t old;
    int rc;
    if (s->pipe.open)
        return ks_error_set(err, KS_EINVAL, "already listening on a socket");
    ensure_fd_limit(s);
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return ks_error_set(err, KS_EEXIST,
                                "%s: exists and is not a socket", path);
        if (unlink(path) != 0)
            return ks_error_set(err, KS_EIO, "%s: cannot remove the old "
                                "socket: %s", path, strerror(errno));
    }
    if ((rc = uv_pipe_init(s->loop, &s->pipe.h.pipe, 0)) != 0)
        return ks_error_set(err, KS_EIO, "pipe: %s", uv_strerror(rc));
    s->pipe.h.handle.data = &s->pipe;
    s->pipe.open = 1;
    s->handles_open++;
    old = umask(0177); /* the socket is created 0600 */
    rc = uv_pipe_bind(&s->pipe.h.pipe, path);
    umask(old);
    if (rc == 0 && chmod(path, 0600) != 0)
        rc = UV_EPERM;
    if (rc == 0)
        rc = uv_listen(&s->pipe.h.stream, 511, on_connection);
    if (rc != 0) {
        s->pipe.open = 0;
        uv_close(&s->pipe.h.handle, listener_closed);
        return ks_error_set(err, KS_EIO, "%s: cannot listen: %s", path,
                            uv_strerror(rc));
    }
    s->unix_path = strdup(path);
    return 0;
}

void ks_http_stop_accepting(ks_http_server_t *s)
{
    s->draining = 1;
    if (s->tcp.open) {
        s->tcp.open = 0;
        uv_close(&s->tcp.h.handle, listener_closed);
    }
    if (s->pipe.open) {
        s->pipe.open = 0;
        uv_close(&s->pipe.h.handle, listener_closed);
    }
    if (s->unix_path)
        unlink(s->unix_path);
}

void ks_http_server_close(ks_http_server_t *s)
{
    ks_http_conn_t *c, *next;
    if (s == NULL || s->closing)
        return;
    ks_http_stop_accepting(s);
    s->closing = 1;
    for (c = s->conns; c; c = next) {
        next = c->next;
        if (c->streaming) {
            ks_http_stream_end(c);
        } else if (c->pending > 0) {
            c->close_after = 1;
            c->ignore_input = 1;
        } else {
            conn_close(c);
            continue;
        }
        /* A client that does not read its last bytes must not keep the
         * process alive: close it after the lingering time regardless. */
        if (!c->closing && !c->shutting)
            arm_timer(c, LINGER_MS);
    }
    server_maybe_free(s);
}

size_t ks_http_conn_count(const ks_http_server_t *s)
{
    return s->n_conns;
}
