/* HTTP/1.1 server on libuv with http_parser. */
#include "http.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <http_parser.h>

#include "base/buf.h"
#include "base/log.h"

#define MAX_CONNS 1024
#define MAX_URL 8192
#define REQUEST_TIMEOUT_MS 60000
#define IDLE_TIMEOUT_MS 120000
#define LINGER_MS 2000
#define READ_PAUSE_BYTES (4u << 20)
#define READ_RESUME_BYTES (1u << 20)
#define STREAM_MAX_PENDING (16u << 20)
#define READ_BUF 65536

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
    int too_large;      /* body over the limit: answered 413 */
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
    size_t pending;     /* bytes queued for writing */
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
    size_t body_limit;
    listener_t tcp, pipe;
    char *unix_path;
    ks_http_conn_t *conns;
    size_t n_conns;
    int closing;
    int draining;
    int handles_open; /* listeners + connections not yet closed */
    http_parser_settings settings;
    char rbuf[READ_BUF];
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
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
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
    s->n_conns--;
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

static void begin_shutdown(ks_http_conn_t *c)
{
    if (c->closing || c->shutting)
        return;
    c->shutting = 1;
    c->ignore_input = 1;
    c->shut.data = c;
    if (uv_shutdown(&c->shut, &c->h.stream, on_shutdown) != 0)
        conn_close(c);
}

/* --- writing -------------------------------------------------------------- */

static void on_write(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;
    ks_http_conn_t *c = w->c;
    c->pending -= w->len;
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
    if (!c->reading && !c->ignore_input && c->pending < READ_RESUME_BYTES)
        start_reading(c);
}

/* Queue a + b as one write. -1 when the connection is closing. */
static int conn_write(ks_http_conn_t *c, const char *a, size_t alen,
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
    if (!c->streaming && c->pending > READ_PAUSE_BYTES)
        stop_reading(c);
    return 0;
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
    if (c->close_after && c->pending == 0)
        begin_shutdown(c);
}

void ks_http_respond(ks_http_conn_t *c, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t len)
{
    respond_raw(c, status, content_type, extra_headers, body, len,
                c->parser.method == HTTP_HEAD);
}

/* An error answered by the HTTP layer itself; the connection closes. */
static void respond_error(ks_http_conn_t *c, int status, const char *msg)
{
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
                     "{},\"status\":\"Failure\",\"message\":\"%s\","
                     "\"reason\":\"%s\",\"code\":%d}\n",
                     msg,
                     status == 413   ? "RequestEntityTooLarge"
                     : status == 408 ? "Timeout"
                                     : "BadRequest",
                     status);
    c->keep_alive = 0;
    respond_raw(c, status, "application/json", NULL, body, (size_t)n, 0);
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
    uv_timer_stop(&c->timer);
    /* Keep reading (and dropping) input to notice when the client goes. */
    start_reading(c);
    return 0;
}

int ks_http_stream_write(ks_http_conn_t *c, const char *data, size_t len)
{
    char hdr[32];
    int n;
    if (!c->streaming || c->closing || c->shutting || c->close_after)
        return -1;
    if (len == 0)
        return 0;
    if (c->pending > STREAM_MAX_PENDING) {
        ks_log(KS_LOGL_WARN, "dropping a stream client: more than %u MiB "
                            "queued (it does not read)",
               STREAM_MAX_PENDING >> 20);
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
    c->last_was_value = 0;
    c->too_large = 0;
    c->url_too_long = 0;
    c->http10 = 0;
    c->in_request = 1;
    arm_timer(c, REQUEST_TIMEOUT_MS);
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
    c->too_large = 1;
    ks_buf_free(&c->body);
    snprintf(msg, sizeof msg,
             "request body is larger than the limit of %zu bytes",
             c->srv->body_limit);
    /* Answer now; the rest of the input is read and dropped until the
     * client closes (or the lingering timeout), then the connection
     * closes. */
    respond_error(c, 413, msg);
}

static int cb_headers_complete(http_parser *p)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->last_was_value)
        finish_header(c);
    c->keep_alive = http_should_keep_alive(p);
    c->http10 = p->http_major == 1 && p->http_minor == 0;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length != ULLONG_MAX &&
        p->content_length > c->srv->body_limit)
        body_too_large(c);
    return 0;
}

static int cb_body(http_parser *p, const char *at, size_t len)
{
    ks_http_conn_t *c = conn_of(p);
    if (c->too_large)
        return 0;
    if (c->body.len + len > c->srv->body_limit) {
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
    ks_http_request_t req;
    c->in_request = 0;
    uv_timer_stop(&c->timer);
    if (c->too_large) {
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
        req.body = c->body.data;
        req.body_len = c->body.len;
        c->srv->fn(c->srv->ud, c, &req);
        if (!c->closing && !c->streaming && !c->close_after && !c->shutting)
            arm_timer(c, IDLE_TIMEOUT_MS);
    }
    if (c->ignore_input || c->closing)
        http_parser_pause(p, 1); /* stop at this message */
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

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    ks_http_conn_t *c = st->data;
    size_t done;
    (void)buf;
    if (nread == 0 || c->closing)
        return;
    if (nread < 0) {
        /* EOF or an error: a stream client left, or lingering ended. */
        conn_close(c);
        return;
    }
    if (c->ignore_input)
        return;
    done = http_parser_execute(&c->parser, &c->srv->settings, buf->base,
                               (size_t)nread);
    (void)done;
    if (c->closing)
        return;
    if (HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED) {
        /* Paused after a message that ends the input. */
        http_parser_pause(&c->parser, 0);
        c->ignore_input = 1;
        return;
    }
    if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
        char msg[256];
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        snprintf(msg, sizeof msg, "malformed HTTP request: %s",
                 http_errno_description(e));
        c->ignore_input = 1;
        if (e == HPE_HEADER_OVERFLOW)
            respond_error(c, 431, "request header fields too large");
        else if (!c->streaming)
            respond_error(c, 400, msg);
        return;
    }
}

static void on_timer(uv_timer_t *t)
{
    ks_http_conn_t *c = t->data;
    if (c->shutting) {
        conn_close(c); /* lingering ended */
        return;
    }
    if (c->in_request) {
        c->ignore_input = 1;
        respond_error(c, 408, "request not received in time");
        arm_timer(c, LINGER_MS);
        return;
    }
    conn_close(c); /* idle keep-alive connection */
}

static void on_connection(uv_stream_t *ls, int status)
{
    listener_t *l = ls->data;
    ks_http_server_t *s = l->srv;
    ks_http_conn_t *c;
    int rc;
    if (status < 0) {
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
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->n_conns++;
    if (uv_accept(ls, &c->h.stream) != 0 || s->n_conns > MAX_CONNS ||
        s->closing) {
        conn_close(c);
        return;
    }
    if (!l->is_pipe)
        uv_tcp_nodelay(&c->h.tcp, 1);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->keep_alive = 1;
    start_reading(c);
    arm_timer(c, IDLE_TIMEOUT_MS);
}

/* --- server --------------------------------------------------------------- */

ks_http_server_t *ks_http_server_new(uv_loop_t *loop, ks_http_handler_fn fn,
                                     void *ud, size_t body_limit)
{
    ks_http_server_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->loop = loop;
    s->fn = fn;
    s->ud = ud;
    s->body_limit = body_limit ? body_limit : KS_HTTP_DEFAULT_BODY_LIMIT;
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

int ks_http_listen_unix(ks_http_server_t *s, const char *path,
                        ks_error_t *err)
{
    struct stat st;
    mode_t old;
    int rc;
    if (s->pipe.open)
        return ks_error_set(err, KS_EINVAL, "already listening on a socket");
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
