/* Unit tests of the HTTP client (net/http_client.h) against a small
 * HTTP/1.1 server on the same libuv loop, and of the token bucket
 * (net/rate_limit.h) on synthetic times.
 *
 * The server answers by path:
 *   /hello         200 text/plain "hello world"
 *   /echo          200 "ok"; the request is recorded (method, headers, body)
 *   /status/N      status N, body "status N"
 *   /id/N          200 "id N"
 *   /big/N         200 with N bytes of 'x'
 *   /steps         200 chunked: "one", then each further chunk only when
 *                  the test calls srv_step() (so streaming is proven)
 *   /stream        200 chunked "tick\n" every 2 ms until the client leaves
 *   /burst         200 chunked: ten chunks in one write, then nothing (so
 *                  libcurl hands several chunks over in one go)
 *   /hang          never answers
 * A connection whose first byte is a TLS handshake gets a plain-text 400
 * and is closed. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/error.h"
#include "net/http_client.h"
#include "net/rate_limit.h"

/* ---- the test server --------------------------------------------------- */

typedef struct srv srv_t;

typedef struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    srv_t *s;
    ks_buf_t in;
    int busy;    /* answering a stream or hanging: input is ignored */
    int closing; /* handles being closed */
    int open;    /* handles not yet closed */
    int ticks;
    struct conn *prev, *next;
} conn_t;

#define SRV_MAX_ARRIVALS 64

struct srv {
    uv_loop_t *loop;
    uv_tcp_t listener;
    int port;
    int listener_closed;
    conn_t *conns;
    int n_accepted, n_closed, n_requests;
    char method[16];
    ks_buf_t headers; /* of the last /echo, "name: value\n" lowercased names */
    ks_buf_t body;    /* of the last /echo */
    int has_content_length;
    ks_hc_t *client;  /* queue length recorded at each arrival */
    size_t queued_at[SRV_MAX_ARRIVALS];
    conn_t *steps;    /* the /steps connection */
    int step;
};

static void conn_handle_closed(uv_handle_t *h)
{
    conn_t *cn = h->data;
    if (--cn->open == 0) {
        cn->s->n_closed++;
        ks_buf_free(&cn->in);
        free(cn);
    }
}

static void conn_close(conn_t *cn)
{
    srv_t *s = cn->s;
    if (cn->closing)
        return;
    cn->closing = 1;
    if (s->steps == cn)
        s->steps = NULL;
    if (cn->prev)
        cn->prev->next = cn->next;
    else
        s->conns = cn->next;
    if (cn->next)
        cn->next->prev = cn->prev;
    uv_close((uv_handle_t *)&cn->tcp, conn_handle_closed);
    uv_close((uv_handle_t *)&cn->timer, conn_handle_closed);
}

typedef struct wreq {
    uv_write_t w;
    int close_after;
    char data[];
} wreq_t;

static void conn_written(uv_write_t *w, int status)
{
    wreq_t *q = (wreq_t *)w;
    conn_t *cn = w->data;
    if ((status < 0 || q->close_after) && cn)
        conn_close(cn);
    free(q);
}

static void conn_write(conn_t *cn, const char *p, size_t n, int close_after)
{
    wreq_t *q;
    uv_buf_t b;
    if (cn->closing)
        return;
    q = malloc(sizeof *q + n);
    ck_assert_ptr_nonnull(q);
    memcpy(q->data, p, n);
    q->close_after = close_after;
    q->w.data = cn;
    b = uv_buf_init(q->data, (unsigned)n);
    if (uv_write(&q->w, (uv_stream_t *)&cn->tcp, &b, 1, conn_written) != 0) {
        free(q);
        conn_close(cn);
    }
}

static void conn_printf(conn_t *cn, int close_after, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conn_printf(conn_t *cn, int close_after, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ck_assert(n > 0 && (size_t)n < sizeof buf);
    conn_write(cn, buf, (size_t)n, close_after);
}

static void conn_respond(conn_t *cn, int status, const char *body, size_t len)
{
    conn_printf(cn, 0, "HTTP/1.1 %d X\r\nContent-Type: text/plain\r\n"
                "Content-Length: %zu\r\n\r\n", status, len);
    conn_write(cn, body, len, 0);
}

static void conn_chunk(conn_t *cn, const char *s)
{
    conn_printf(cn, 0, "%zx\r\n%s\r\n", strlen(s), s);
}

static void stream_tick(uv_timer_t *t)
{
    conn_t *cn = t->data;
    conn_chunk(cn, "tick\n");
    cn->ticks++;
}

/* The next piece of /steps: "two", "three", "four", then the end. */
static void srv_step(srv_t *s)
{
    static const char *const pieces[] = {"two", "three", "four"};
    conn_t *cn = s->steps;
    ck_assert_ptr_nonnull(cn);
    if (s->step < 3) {
        conn_chunk(cn, pieces[s->step++]);
    } else {
        s->steps = NULL;
        conn_write(cn, "0\r\n\r\n", 5, 0);
    }
}

static void srv_record(srv_t *s, const char *head, const char *body,
                       size_t blen)
{
    const char *line = strstr(head, "\r\n") + 2;
    ks_buf_reset(&s->headers);
    ks_buf_reset(&s->body);
    s->has_content_length = 0;
    while (*line && strncmp(line, "\r\n", 2) != 0) {
        const char *end = strstr(line, "\r\n");
        const char *colon = memchr(line, ':', (size_t)(end - line));
        const char *p;
        for (p = line; p < colon; p++) {
            char ch = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            ks_buf_append(&s->headers, &ch, 1);
        }
        ks_buf_append(&s->headers, colon, (size_t)(end - colon));
        ks_buf_append(&s->headers, "\n", 1);
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            s->has_content_length = 1;
        line = end + 2;
    }
    ks_buf_append(&s->body, body, blen);
    ck_assert(!s->headers.oom && !s->body.oom);
}

/* One complete request: head (NUL-terminated, with the blank line) and
 * body. */
static void srv_handle(conn_t *cn, const char *head, const char *body,
                       size_t blen)
{
    srv_t *s = cn->s;
    char method[16], path[256], text[64];
    int n;
    ck_assert_int_eq(sscanf(head, "%15s %255s", method, path), 2);
    if (s->n_requests < SRV_MAX_ARRIVALS)
        s->queued_at[s->n_requests] = s->client ? ks_hc_queued(s->client) : 0;
    s->n_requests++;
    if (strcmp(path, "/hello") == 0) {
        conn_respond(cn, 200, "hello world", 11);
    } else if (strcmp(path, "/echo") == 0) {
        snprintf(s->method, sizeof s->method, "%s", method);
        srv_record(s, head, body, blen);
        conn_respond(cn, 200, "ok", 2);
    } else if (sscanf(path, "/status/%d", &n) == 1) {
        snprintf(text, sizeof text, "status %d", n);
        conn_respond(cn, n, text, strlen(text));
    } else if (sscanf(path, "/id/%d", &n) == 1) {
        snprintf(text, sizeof text, "id %d", n);
        conn_respond(cn, 200, text, strlen(text));
    } else if (sscanf(path, "/big/%d", &n) == 1) {
        char *big = malloc((size_t)n);
        ck_assert_ptr_nonnull(big);
        memset(big, 'x', (size_t)n);
        conn_respond(cn, 200, big, (size_t)n);
        free(big);
    } else if (strcmp(path, "/steps") == 0) {
        cn->busy = 1;
        s->steps = cn;
        s->step = 0;
        conn_printf(cn, 0, "HTTP/1.1 200 OK\r\nContent-Type: text/x-steps\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n");
        conn_chunk(cn, "one");
    } else if (strcmp(path, "/stream") == 0) {
        cn->busy = 1;
        conn_printf(cn, 0, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n");
        uv_timer_start(&cn->timer, stream_tick, 2, 2);
    } else if (strcmp(path, "/burst") == 0) {
        cn->busy = 1;
        conn_printf(cn, 0, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n"
                    "2\r\nc0\r\n2\r\nc1\r\n2\r\nc2\r\n2\r\nc3\r\n"
                    "2\r\nc4\r\n2\r\nc5\r\n2\r\nc6\r\n2\r\nc7\r\n"
                    "2\r\nc8\r\n2\r\nc9\r\n");
    } else if (strcmp(path, "/hang") == 0) {
        cn->busy = 1;
    } else {
        conn_respond(cn, 404, "no such path", 12);
    }
}

/* Complete requests in the input buffer, in order. */
static void srv_parse(conn_t *cn)
{
    while (!cn->busy && !cn->closing && cn->in.len > 0) {
        char *end, *cl;
        size_t head_len, body_len = 0, total;
        if ((unsigned char)cn->in.data[0] == 0x16) {
            /* A TLS ClientHello: answer in plain text, as a plain HTTP
             * server would, and hang up. */
            conn_printf(cn, 1, "HTTP/1.1 400 Bad Request\r\n"
                        "Content-Length: 0\r\n\r\n");
            return;
        }
        end = strstr(cn->in.data, "\r\n\r\n");
        if (end == NULL)
            return;
        head_len = (size_t)(end - cn->in.data) + 4;
        *end = '\0';
        cl = strcasestr(cn->in.data, "\r\nContent-Length:");
        if (cl)
            body_len = strtoul(cl + 17, NULL, 10);
        *end = '\r';
        total = head_len + body_len;
        if (cn->in.len < total)
            return;
        {
            char *head = malloc(head_len + 1), *body = malloc(body_len + 1);
            ck_assert(head && body);
            memcpy(head, cn->in.data, head_len);
            head[head_len] = '\0';
            memcpy(body, cn->in.data + head_len, body_len);
            body[body_len] = '\0';
            memmove(cn->in.data, cn->in.data + total, cn->in.len - total);
            cn->in.len -= total;
            cn->in.data[cn->in.len] = '\0';
            srv_handle(cn, head, body, body_len);
            free(head);
            free(body);
        }
    }
}

static void srv_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    static char slab[65536];
    (void)h;
    (void)hint;
    *b = uv_buf_init(slab, sizeof slab);
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    conn_t *cn = st->data;
    if (n < 0) {
        conn_close(cn);
        return;
    }
    if (n == 0 || cn->busy)
        return;
    ks_buf_append(&cn->in, b->base, (size_t)n);
    ck_assert(!cn->in.oom);
    srv_parse(cn);
}

static void srv_accept(uv_stream_t *l, int status)
{
    srv_t *s = l->data;
    conn_t *cn;
    ck_assert_int_eq(status, 0);
    cn = calloc(1, sizeof *cn);
    ck_assert_ptr_nonnull(cn);
    cn->s = s;
    uv_tcp_init(s->loop, &cn->tcp);
    uv_timer_init(s->loop, &cn->timer);
    cn->tcp.data = cn->timer.data = cn;
    cn->open = 2;
    cn->next = s->conns;
    if (s->conns)
        s->conns->prev = cn;
    s->conns = cn;
    ck_assert_int_eq(uv_accept(l, (uv_stream_t *)&cn->tcp), 0);
    s->n_accepted++;
    ck_assert_int_eq(uv_read_start((uv_stream_t *)&cn->tcp, srv_alloc,
                                   srv_read), 0);
}

static int tcp_port(uv_tcp_t *t)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    ck_assert_int_eq(uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len), 0);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static void srv_start(srv_t *s, uv_loop_t *loop)
{
    struct sockaddr_in a;
    memset(s, 0, sizeof *s);
    s->loop = loop;
    uv_ip4_addr("127.0.0.1", 0, &a);
    ck_assert_int_eq(uv_tcp_init(loop, &s->listener), 0);
    s->listener.data = s;
    ck_assert_int_eq(uv_tcp_bind(&s->listener, (struct sockaddr *)&a, 0), 0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&s->listener, 512,
                               srv_accept), 0);
    s->port = tcp_port(&s->listener);
}

static void srv_listener_closed(uv_handle_t *h)
{
    ((srv_t *)h->data)->listener_closed = 1;
}

static void srv_stop(srv_t *s)
{
    while (s->conns)
        conn_close(s->conns);
    uv_close((uv_handle_t *)&s->listener, srv_listener_closed);
}

/* ---- fixture ----------------------------------------------------------- */

static uv_loop_t loop;
static srv_t srv;
static ks_hc_t *hc;
static int hc_closed;

static void on_closed(void *ud)
{
    *(int *)ud += 1;
}

static char *url(const char *path)
{
    static char buf[8][256];
    static int i;
    char *u = buf[i++ % 8];
    snprintf(u, 256, "http://127.0.0.1:%d%s", srv.port, path);
    return u;
}

static ks_hc_t *client_new(const ks_hc_opts_t *o)
{
    ks_error_t err = {0};
    ks_hc_t *c = ks_hc_new(&loop, o, &err);
    ck_assert_msg(c != NULL, "ks_hc_new: %s", err.msg);
    return c;
}

static void setup(void)
{
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    srv_start(&srv, &loop);
    hc = NULL;
    hc_closed = 0;
}

/* Close the client (if still open) and the server, run the loop dry and
 * check that nothing is left open. */
static void teardown(void)
{
    if (hc) {
        ks_hc_close(hc, on_closed, &hc_closed);
        hc = NULL;
    }
    srv.client = NULL;
    srv_stop(&srv);
    while (uv_run(&loop, UV_RUN_DEFAULT) != 0)
        ;
    ck_assert_int_eq(hc_closed, 1);
    ck_assert(srv.listener_closed);
    ck_assert_int_eq(srv.n_accepted, srv.n_closed);
    ks_buf_free(&srv.headers);
    ks_buf_free(&srv.body);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}

#define RUN_UNTIL(cond)                                                        \
    do {                                                                       \
        while (!(cond))                                                        \
            uv_run(&loop, UV_RUN_ONCE);                                        \
    } while (0)

/* What a request saw. */
typedef struct seen {
    int done;                 /* on_done calls */
    ks_hc_result_t r;         /* copied, strings below */
    char *body, *error, *ctype;
    int headers;              /* on_headers calls */
    long head_status;
    int data_calls;           /* on_data calls */
    int data_before_headers;
    ks_buf_t data;            /* streamed bytes */
    ks_hc_req_t *req;
    int cancel_at;            /* cancel itself at this on_data call */
    int cancel_in_headers;
    int close_at;             /* close the client at this on_data call */
    int abort_at;             /* return non-zero at this on_data call */
    int start_at;             /* start *start_req at this on_data call */
    const ks_hc_request_t *start_req;
    struct seen *start_seen;
    int step;                 /* drive /steps from on_data */
    int close_in_done;
} seen_t;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void seen_free(seen_t *s)
{
    free(s->body);
    free(s->error);
    free(s->ctype);
    ks_buf_free(&s->data);
}

static void on_done(void *ud, const ks_hc_result_t *r)
{
    seen_t *s = ud;
    ck_assert_ptr_nonnull(r->body);
    ck_assert_int_eq(r->body[r->body_len], '\0');
    s->done++;
    s->r = *r;
    free(s->body);
    free(s->error);
    free(s->ctype);
    s->body = strdup(r->body);
    s->error = dup_or_null(r->error);
    s->ctype = dup_or_null(r->content_type);
    s->r.body = s->body;
    s->r.error = s->error;
    s->r.content_type = s->ctype;
    if (s->close_in_done && hc) {
        ks_hc_close(hc, on_closed, &hc_closed);
        hc = NULL;
    }
}

static void on_headers(void *ud, long status, const char *ct)
{
    seen_t *s = ud;
    s->headers++;
    s->head_status = status;
    if (ct && !s->ctype)
        s->ctype = strdup(ct);
    if (s->cancel_in_headers)
        ks_hc_cancel(s->req);
}

static int on_data(void *ud, const char *p, size_t n)
{
    seen_t *s = ud;
    s->data_calls++;
    if (s->headers == 0)
        s->data_before_headers = 1;
    ks_buf_append(&s->data, p, n);
    if (s->step && srv.steps) {
        static const size_t ends[] = {3, 6, 11, 15}; /* one two three four */
        size_t i;
        for (i = 0; i < 4; i++)
            if (s->data.len == ends[i])
                srv_step(&srv);
    }
    if (s->start_at && s->data_calls == s->start_at) {
        ks_error_t err = {0};
        s->start_seen->req = ks_hc_start(hc, s->start_req, &err);
        ck_assert_msg(s->start_seen->req != NULL, "%s", err.msg);
    }
    if (s->cancel_at && s->data_calls == s->cancel_at)
        ks_hc_cancel(s->req);
    if (s->close_at && s->data_calls == s->close_at) {
        ks_hc_close(hc, on_closed, &hc_closed);
        hc = NULL;
    }
    return s->abort_at && s->data_calls == s->abort_at;
}

static ks_hc_req_t *start(ks_hc_request_t *q, seen_t *s)
{
    ks_error_t err = {0};
    q->on_done = on_done;
    q->ud = s;
    s->req = ks_hc_start(hc, q, &err);
    ck_assert_msg(s->req != NULL, "ks_hc_start %s: %s", q->url, err.msg);
    return s->req;
}

static ks_hc_req_t *get(const char *path, seen_t *s)
{
    ks_hc_request_t q = {0};
    q.url = url(path);
    return start(&q, s);
}

/* ---- token bucket on synthetic time ------------------------------------ */

#define MS 1000000ull

START_TEST(rate_bucket_qps10_burst2)
{
    ks_rate_t b;
    ks_rate_init(&b, 10, 2, 1000 * MS);
    ck_assert_uint_eq(ks_rate_available(&b, 1000 * MS), 2);
    /* The burst: two at once, then one per 100 ms. */
    ck_assert_uint_eq(ks_rate_take(&b, 1000 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 1000 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 1000 * MS), 100 * MS);
    ck_assert_uint_eq(ks_rate_take(&b, 1030 * MS), 70 * MS);
    ck_assert_uint_eq(ks_rate_take(&b, 1099 * MS), 1 * MS);
    ck_assert_uint_eq(ks_rate_take(&b, 1100 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 1100 * MS), 100 * MS);
    /* Partial credit carries over: 150 ms give one token and half. */
    ck_assert_uint_eq(ks_rate_take(&b, 1250 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 1250 * MS), 50 * MS);
    ck_assert_uint_eq(ks_rate_take(&b, 1300 * MS), 0);
    /* A long idle time refills to the burst, not beyond. */
    ck_assert_uint_eq(ks_rate_available(&b, 60000 * MS), 2);
    ck_assert_uint_eq(ks_rate_take(&b, 60000 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 60000 * MS), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 60000 * MS), 100 * MS);
    /* Time going backwards adds nothing and takes nothing away. */
    ck_assert_uint_eq(ks_rate_take(&b, 59000 * MS), 100 * MS);
    ck_assert_uint_eq(ks_rate_take(&b, 60100 * MS), 0);
}
END_TEST

START_TEST(rate_bucket_order_of_starts)
{
    /* 7 requests at t=0 with qps 10, burst 2, each retried when told:
     * they start at 0, 0, 100, 200, 300, 400, 500 ms. */
    ks_rate_t b;
    uint64_t now = 0, wait;
    uint64_t starts[7];
    int i;
    ks_rate_init(&b, 10, 2, 0);
    for (i = 0; i < 7; i++) {
        while ((wait = ks_rate_take(&b, now)) != 0)
            now += wait;
        starts[i] = now;
    }
    ck_assert_uint_eq(starts[0], 0);
    ck_assert_uint_eq(starts[1], 0);
    for (i = 2; i < 7; i++)
        ck_assert_uint_eq(starts[i], (uint64_t)(i - 1) * 100 * MS);
}
END_TEST

START_TEST(rate_bucket_edges)
{
    ks_rate_t b;
    /* Unlimited: zeroed or qps <= 0. */
    memset(&b, 0, sizeof b);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    ks_rate_init(&b, 0, 5, 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    ck_assert_uint_eq(ks_rate_available(&b, 0), UINT64_MAX);
    ks_rate_init(&b, -3, 5, 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    /* burst < 1 is 1. */
    ks_rate_init(&b, 1, 0, 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 1000 * MS);
    /* qps 3: a token every ceil(1e9/3) ns, never faster than 3/s. */
    ks_rate_init(&b, 3, 1, 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 333333334);
    ck_assert_uint_eq(ks_rate_take(&b, 333333333), 1);
    ck_assert_uint_eq(ks_rate_take(&b, 333333334), 0);
    /* Tiny qps and a huge burst do not overflow. */
    ks_rate_init(&b, 1e-12, 1000000, 0);
    ck_assert_uint_eq(ks_rate_take(&b, 0), 0);
    ck_assert_uint_eq(ks_rate_take(&b, UINT64_MAX), 0);
    /* A very high rate: one token per ns. */
    ks_rate_init(&b, 2e9, 1, 10);
    ck_assert_uint_eq(ks_rate_take(&b, 10), 0);
    ck_assert_uint_eq(ks_rate_take(&b, 10), 1);
    ck_assert_uint_eq(ks_rate_take(&b, 11), 0);
}
END_TEST

/* ---- requests ---------------------------------------------------------- */

typedef struct obs {
    int calls;
    char verb[16], host[64];
    long code;
} obs_t;

static void observe(void *ud, const char *verb, const char *host, long code,
                    double seconds)
{
    obs_t *o = ud;
    o->calls++;
    snprintf(o->verb, sizeof o->verb, "%s", verb);
    snprintf(o->host, sizeof o->host, "%s", host);
    o->code = code;
    ck_assert(seconds >= 0);
}

START_TEST(get_buffered)
{
    ks_hc_opts_t o = {0};
    obs_t ob = {0};
    seen_t s = {0};
    char host[64];
    o.observe = observe;
    o.observe_ud = &ob;
    hc = client_new(&o);
    get("/hello", &s);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 1);
    RUN_UNTIL(s.done);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.r.status, 200);
    ck_assert_int_eq(s.r.curl_code, 0);
    ck_assert_ptr_null(s.r.error);
    ck_assert_str_eq(s.r.body, "hello world");
    ck_assert_uint_eq(s.r.body_len, 11);
    ck_assert_str_eq(s.r.content_type, "text/plain");
    ck_assert(!s.r.timed_out && !s.r.tls_error && !s.r.aborted);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    /* observe ran once with the method, host:port and status. */
    snprintf(host, sizeof host, "127.0.0.1:%d", srv.port);
    ck_assert_int_eq(ob.calls, 1);
    ck_assert_str_eq(ob.verb, "GET");
    ck_assert_str_eq(ob.host, host);
    ck_assert_int_eq(ob.code, 200);
    seen_free(&s);
}
END_TEST

START_TEST(post_body_and_headers)
{
    static const char *const hdrs[] = {"X-Test: abc",
                                       "Content-Type: application/json"};
    static const char body[] = "{\"a\":1,\"z\":\"\\u0000\"}";
    ks_hc_request_t q = {0};
    seen_t s = {0}, s2 = {0}, s3 = {0}, s4 = {0};
    ks_hc_opts_t o = {0};
    o.user_agent = "ksched-test/1";
    hc = client_new(&o);

    q.method = "POST";
    q.url = url("/echo");
    q.headers = hdrs;
    q.n_headers = 2;
    q.body = body;
    q.body_len = sizeof body - 1;
    start(&q, &s);
    RUN_UNTIL(s.done);
    ck_assert_int_eq(s.r.status, 200);
    ck_assert_str_eq(s.r.body, "ok");
    ck_assert_str_eq(srv.method, "POST");
    ck_assert_uint_eq(srv.body.len, sizeof body - 1);
    ck_assert_mem_eq(srv.body.data, body, sizeof body - 1);
    ck_assert_ptr_nonnull(strstr(srv.headers.data, "x-test: abc\n"));
    ck_assert_ptr_nonnull(
        strstr(srv.headers.data, "content-type: application/json\n"));
    ck_assert_ptr_nonnull(
        strstr(srv.headers.data, "user-agent: ksched-test/1\n"));
    ck_assert_ptr_null(strstr(srv.headers.data, "expect:"));

    /* PATCH with a body and no Content-Type: none is made up. */
    memset(&q, 0, sizeof q);
    q.method = "PATCH";
    q.url = url("/echo");
    q.body = "[1]";
    q.body_len = 3;
    start(&q, &s2);
    RUN_UNTIL(s2.done);
    ck_assert_int_eq(s2.r.status, 200);
    ck_assert_str_eq(srv.method, "PATCH");
    ck_assert_str_eq(srv.body.data, "[1]");
    ck_assert_ptr_null(strstr(srv.headers.data, "content-type:"));

    /* PUT with an empty body still says Content-Length: 0. */
    memset(&q, 0, sizeof q);
    q.method = "PUT";
    q.url = url("/echo");
    q.body = "";
    start(&q, &s3);
    RUN_UNTIL(s3.done);
    ck_assert_str_eq(srv.method, "PUT");
    ck_assert(srv.has_content_length);
    ck_assert_uint_eq(srv.body.len, 0);

    /* DELETE without a body. */
    memset(&q, 0, sizeof q);
    q.method = "DELETE";
    q.url = url("/echo");
    start(&q, &s4);
    RUN_UNTIL(s4.done);
    ck_assert_int_eq(s4.r.status, 200);
    ck_assert_str_eq(srv.method, "DELETE");
    ck_assert_uint_eq(srv.body.len, 0);
    /* All four went over one kept-alive connection. */
    ck_assert_int_eq(srv.n_accepted, 1);
    seen_free(&s);
    seen_free(&s2);
    seen_free(&s3);
    seen_free(&s4);
}
END_TEST

START_TEST(error_statuses_with_body)
{
    seen_t s404 = {0}, s409 = {0};
    ks_hc_request_t q = {0};
    hc = client_new(NULL);
    get("/status/404", &s404);
    q.method = "POST";
    q.url = url("/status/409");
    q.body = "{}";
    q.body_len = 2;
    q.on_headers = on_headers;
    start(&q, &s409);
    RUN_UNTIL(s404.done && s409.done);
    ck_assert_int_eq(s404.r.status, 404);
    ck_assert_int_eq(s404.r.curl_code, 0);
    ck_assert_ptr_null(s404.r.error);
    ck_assert_str_eq(s404.r.body, "status 404");
    ck_assert_int_eq(s409.r.status, 409);
    ck_assert_str_eq(s409.r.body, "status 409");
    ck_assert_int_eq(s409.headers, 1);
    ck_assert_int_eq(s409.head_status, 409);
    seen_free(&s404);
    seen_free(&s409);
}
END_TEST

START_TEST(streaming_chunks)
{
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/steps");
    q.verb = "WATCH";
    q.on_data = on_data;
    q.on_headers = on_headers;
    s.step = 1;
    start(&q, &s);
    RUN_UNTIL(s.done);
    /* The server sent each chunk only after the previous one reached
     * on_data, so the body arrived piece by piece while the response was
     * still open. */
    ck_assert_int_eq(s.headers, 1);
    ck_assert_int_eq(s.head_status, 200);
    ck_assert(!s.data_before_headers);
    ck_assert_int_ge(s.data_calls, 4);
    ck_assert_uint_eq(s.data.len, 15);
    ck_assert_mem_eq(s.data.data, "onetwothreefour", 15);
    ck_assert_int_eq(s.r.status, 200);
    ck_assert_int_eq(s.r.curl_code, 0);
    ck_assert_uint_eq(s.r.body_len, 0);
    ck_assert_str_eq(s.r.body, "");
    ck_assert_str_eq(s.r.content_type, "text/x-steps");
    seen_free(&s);
}
END_TEST

START_TEST(cancel_inside_on_data)
{
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/stream");
    q.on_data = on_data;
    q.on_headers = on_headers;
    s.cancel_at = 3;
    start(&q, &s);
    /* Run until the server sees the client hang up. */
    RUN_UNTIL(srv.n_accepted == 1 && srv.n_closed == 1);
    ck_assert_int_eq(s.data_calls, 3);
    ck_assert_int_eq(s.done, 0);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    seen_free(&s);
}
END_TEST

START_TEST(cancel_inside_on_data_burst)
{
    /* Several chunks reach libcurl in one read: none after the cancel is
     * delivered. */
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/burst");
    q.on_data = on_data;
    s.cancel_at = 3;
    start(&q, &s);
    RUN_UNTIL(srv.n_accepted == 1 && srv.n_closed == 1);
    ck_assert_int_eq(s.data_calls, 3);
    ck_assert_int_eq(s.done, 0);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    seen_free(&s);
}
END_TEST

START_TEST(cancel_inside_on_headers)
{
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/stream");
    q.on_data = on_data;
    q.on_headers = on_headers;
    s.cancel_in_headers = 1;
    start(&q, &s);
    RUN_UNTIL(srv.n_accepted == 1 && srv.n_closed == 1);
    ck_assert_int_eq(s.headers, 1);
    ck_assert_int_eq(s.data_calls, 0);
    ck_assert_int_eq(s.done, 0);
    seen_free(&s);
}
END_TEST

START_TEST(start_and_cancel_from_on_data)
{
    /* From inside a stream's on_data: start another request, and cancel
     * the stream itself; the new request runs to completion. */
    ks_hc_request_t q = {0}, q2 = {0};
    seen_t s = {0}, s2 = {0};
    hc = client_new(NULL);
    q2.url = url("/hello");
    q2.on_done = on_done;
    q2.ud = &s2;
    q.url = url("/stream");
    q.on_data = on_data;
    s.start_at = 2;
    s.start_req = &q2;
    s.start_seen = &s2;
    s.cancel_at = 2;
    start(&q, &s);
    RUN_UNTIL(s2.done);
    ck_assert_int_eq(s2.r.status, 200);
    ck_assert_str_eq(s2.r.body, "hello world");
    ck_assert_int_eq(s.data_calls, 2);
    ck_assert_int_eq(s.done, 0);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    seen_free(&s);
    seen_free(&s2);
}
END_TEST

START_TEST(abort_from_on_data)
{
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/stream");
    q.on_data = on_data;
    s.abort_at = 2;
    start(&q, &s);
    RUN_UNTIL(s.done);
    ck_assert_int_eq(s.data_calls, 2);
    ck_assert_int_eq(s.r.status, 200);
    ck_assert(s.r.aborted);
    ck_assert_int_ne(s.r.curl_code, 0);
    ck_assert_ptr_nonnull(s.r.error);
    ck_assert_ptr_nonnull(strstr(s.r.error, "aborted"));
    seen_free(&s);
}
END_TEST

START_TEST(connection_refused)
{
    static uv_tcp_t idle; /* bound, not listening: refuses connections */
    struct sockaddr_in a;
    char u[128];
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    uv_ip4_addr("127.0.0.1", 0, &a);
    ck_assert_int_eq(uv_tcp_init(&loop, &idle), 0);
    ck_assert_int_eq(uv_tcp_bind(&idle, (struct sockaddr *)&a, 0), 0);
    snprintf(u, sizeof u, "http://127.0.0.1:%d/api/v1/nodes", tcp_port(&idle));
    q.url = u;
    q.on_headers = on_headers;
    start(&q, &s);
    RUN_UNTIL(s.done);
    ck_assert_int_eq(s.r.status, 0);
    ck_assert_int_eq(s.r.curl_code, CURLE_COULDNT_CONNECT);
    ck_assert_int_eq(s.headers, 0);
    ck_assert_ptr_nonnull(s.r.error);
    ck_assert_msg(strncmp(s.r.error, "GET ", 4) == 0 &&
                      strstr(s.r.error, u) != NULL &&
                      strstr(s.r.error, "refused") != NULL,
                  "%s", s.r.error);
    ck_assert(!s.r.timed_out && !s.r.tls_error);
    uv_close((uv_handle_t *)&idle, NULL);
    seen_free(&s);
}
END_TEST

START_TEST(whole_request_timeout)
{
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/hang");
    q.timeout_ms = 100;
    start(&q, &s);
    RUN_UNTIL(s.done);
    ck_assert(s.r.timed_out);
    ck_assert_int_eq(s.r.status, 0);
    ck_assert_int_eq(s.r.curl_code, CURLE_OPERATION_TIMEDOUT);
    ck_assert_ptr_nonnull(strstr(s.r.error, q.url));
    ck_assert_ptr_nonnull(strstr(s.r.error, "timed out"));
    ck_assert_int_eq(srv.n_requests, 1);
    seen_free(&s);
}
END_TEST

START_TEST(low_speed_timeout)
{
    /* A stream that sends its head and then nothing: the low-speed limit
     * ends it, with the status as received. */
    ks_hc_request_t q = {0};
    seen_t s = {0};
    hc = client_new(NULL);
    q.url = url("/steps");
    q.on_data = on_data;
    q.on_headers = on_headers;
    q.low_speed_timeout_s = 1;
    start(&q, &s);
    RUN_UNTIL(s.done);
    ck_assert(s.r.timed_out);
    ck_assert_int_eq(s.r.status, 200);
    ck_assert_int_eq(s.headers, 1);
    ck_assert_mem_eq(s.data.data, "one", 3);
    seen_free(&s);
}
END_TEST

#define N_CONC 200

static int conc_done[N_CONC];
static int conc_ok;

static void conc_on_done(void *ud, const ks_hc_result_t *r)
{
    int i = (int)(intptr_t)ud;
    char want[32];
    snprintf(want, sizeof want, "id %d", i);
    conc_done[i]++;
    if (r->status == 200 && strcmp(r->body, want) == 0)
        conc_ok++;
}

START_TEST(many_concurrent)
{
    int i, total = 0;
    hc = client_new(NULL);
    memset(conc_done, 0, sizeof conc_done);
    conc_ok = 0;
    for (i = 0; i < N_CONC; i++) {
        ks_hc_request_t q = {0};
        char path[32];
        ks_error_t err = {0};
        snprintf(path, sizeof path, "/id/%d", i);
        q.url = url(path);
        q.on_done = conc_on_done;
        q.ud = (void *)(intptr_t)i;
        ck_assert_msg(ks_hc_start(hc, &q, &err) != NULL, "%s", err.msg);
    }
    ck_assert_uint_eq(ks_hc_in_flight(hc), N_CONC);
    RUN_UNTIL(ks_hc_in_flight(hc) == 0);
    for (i = 0; i < N_CONC; i++) {
        ck_assert_int_eq(conc_done[i], 1);
        total += conc_done[i];
    }
    ck_assert_int_eq(total, N_CONC);
    ck_assert_int_eq(conc_ok, N_CONC);
    ck_assert_int_eq(srv.n_requests, N_CONC);
    /* At most 8 connections to one host, reused. */
    ck_assert_int_le(srv.n_accepted, 8);
}
END_TEST

/* The client's clock in rate_limited_starts: moved by hand. */
static uint64_t fake_now_ms;

static uint64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now_ms;
}

static void run_for_done(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

static void run_for_closed(uv_handle_t *h)
{
    *(int *)h->data = 2;
}

/* Run the loop for `ms` of the loop's own time (long enough for the rate
 * timer to fire; nothing is asserted about how long anything took). */
static void run_for_ms(uint64_t ms)
{
    uv_timer_t t;
    int done = 0;
    uv_timer_init(&loop, &t);
    t.data = &done;
    uv_timer_start(&t, run_for_done, ms, 0);
    RUN_UNTIL(done);
    uv_close((uv_handle_t *)&t, run_for_closed);
    RUN_UNTIL(done == 2);
}

START_TEST(rate_limited_starts)
{
    /* qps 2, burst 2, on a clock the test moves: of 5 requests started
     * together, 2 go at once and 3 wait for tokens, one per 500 ms of
     * that clock; a no_rate_limit request skips the queue. The server
     * records the queue length as each request arrives. */
    ks_hc_opts_t o = {0};
    seen_t s[6];
    ks_hc_request_t q = {0};
    int i;
    memset(s, 0, sizeof s);
    fake_now_ms = 1000;
    o.qps = 2;
    o.burst = 2;
    o.now_ms = fake_clock;
    hc = client_new(&o);
    srv.client = hc;
    for (i = 0; i < 5; i++)
        get("/hello", &s[i]);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 5);
    q.url = url("/hello");
    q.no_rate_limit = 1;
    start(&q, &s[5]);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    RUN_UNTIL(s[0].done && s[1].done && s[5].done);
    /* The clock has not moved: only the burst and the exempt request
     * reached the server, however long that took. */
    ck_assert_int_eq(srv.n_requests, 3);
    ck_assert_uint_eq(srv.queued_at[0], 3);
    ck_assert_uint_eq(srv.queued_at[1], 3);
    ck_assert_uint_eq(srv.queued_at[2], 3);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    /* 499 ms: still no token, however often the rate timer looks. */
    fake_now_ms = 1499;
    run_for_ms(600);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    ck_assert_int_eq(srv.n_requests, 3);
    /* 500 ms: one token, for the head of the queue. */
    fake_now_ms = 1500;
    RUN_UNTIL(s[2].done);
    ck_assert_int_eq(srv.n_requests, 4);
    ck_assert_uint_eq(srv.queued_at[3], 2);
    ck_assert_uint_eq(ks_hc_queued(hc), 2);
    /* 1.5 s after the start: the two tokens left, in order. */
    fake_now_ms = 2500;
    RUN_UNTIL(ks_hc_in_flight(hc) == 0);
    ck_assert_int_eq(srv.n_requests, 6);
    ck_assert_uint_eq(srv.queued_at[4], 0);
    ck_assert_uint_eq(srv.queued_at[5], 0);
    for (i = 0; i < 6; i++) {
        ck_assert_int_eq(s[i].done, 1);
        ck_assert_int_eq(s[i].r.status, 200);
    }
    /* Time in the queue, on the client's clock. */
    ck_assert(s[0].r.queued_seconds == 0 && s[1].r.queued_seconds == 0);
    ck_assert(s[5].r.queued_seconds == 0);
    ck_assert(s[2].r.queued_seconds == 0.5);
    ck_assert(s[3].r.queued_seconds == 1.5 && s[4].r.queued_seconds == 1.5);
    for (i = 0; i < 6; i++)
        seen_free(&s[i]);
}
END_TEST

START_TEST(max_running_caps_requests)
{
    /* max_running 2, no rate limit: of 5 requests started together two
     * run and three wait, in order; cancelling a running one lets the
     * next start; a stream (no_rate_limit) is never held back. Finished
     * requests' easy handles serve the later ones. */
    ks_hc_opts_t o = {0};
    seen_t s[7];
    ks_hc_request_t q = {0};
    int i;
    memset(s, 0, sizeof s);
    o.max_running = 2;
    hc = client_new(&o);
    srv.client = hc;
    get("/hang", &s[0]);
    for (i = 1; i < 5; i++)
        get("/hello", &s[i]);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 5);
    /* the three waiting hold no libcurl handle yet */
    ck_assert_uint_eq(ks_hc_easy_in_use(hc), 2);
    q.url = url("/stream");
    q.on_data = on_data;
    q.no_rate_limit = 1;
    start(&q, &s[5]);
    ck_assert_uint_eq(ks_hc_queued(hc), 3);
    ck_assert_uint_eq(ks_hc_in_flight_max(hc), 6);
    ck_assert_uint_eq(ks_hc_easy_in_use(hc), 3);
    /* /hang holds a slot; the others pass one at a time through the
     * other. */
    RUN_UNTIL(s[4].done && s[5].data_calls > 0);
    for (i = 1; i < 5; i++)
        ck_assert_int_eq(s[i].r.status, 200);
    /* The queue as each request arrived: 3 while /hang, the first /hello
     * and the stream came; then one fewer with each waiting request, so
     * none of them reached the server before its turn. */
    {
        int seen[4] = {0};
        ck_assert_int_eq(srv.n_requests, 6);
        for (i = 0; i < 6; i++) {
            ck_assert_uint_le(srv.queued_at[i], 3);
            seen[srv.queued_at[i]]++;
        }
        ck_assert_int_eq(seen[3], 3);
        ck_assert_int_eq(seen[2], 1);
        ck_assert_int_eq(seen[1], 1);
        ck_assert_int_eq(seen[0], 1);
    }
    ck_assert_int_eq(s[0].done, 0);
    /* Both slots taken again (/hang and a second /hang), one waiting:
     * cancelling a running one starts it. */
    get("/hang", &s[6]);
    seen_free(&s[1]);
    memset(&s[1], 0, sizeof s[1]);
    get("/hello", &s[1]);
    ck_assert_uint_eq(ks_hc_queued(hc), 1);
    ks_hc_cancel(s[0].req);
    RUN_UNTIL(s[1].done);
    ck_assert_int_eq(s[1].r.status, 200);
    ks_hc_cancel(s[6].req);
    ks_hc_cancel(s[5].req);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    ck_assert_uint_eq(ks_hc_easy_in_use(hc), 0);
    for (i = 0; i < 7; i++)
        seen_free(&s[i]);
}
END_TEST

START_TEST(cancel_queued_and_running)
{
    ks_hc_opts_t o = {0};
    seen_t a = {0}, b = {0}, c = {0};
    o.qps = 1;
    o.burst = 1;
    hc = client_new(&o);
    get("/hang", &a);
    get("/hello", &b); /* queued */
    get("/hello", &c); /* queued */
    ck_assert_uint_eq(ks_hc_queued(hc), 2);
    ks_hc_cancel(b.req);
    ck_assert_uint_eq(ks_hc_queued(hc), 1);
    RUN_UNTIL(srv.n_requests == 1);
    ks_hc_cancel(a.req);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 1);
    RUN_UNTIL(c.done);
    ck_assert_int_eq(c.r.status, 200);
    ck_assert_int_eq(a.done + b.done, 0);
    ck_assert_int_eq(srv.n_requests, 2);
    seen_free(&a);
    seen_free(&b);
    seen_free(&c);
}
END_TEST

START_TEST(close_with_requests_in_flight)
{
    ks_hc_opts_t o = {0};
    seen_t s[5];
    ks_hc_request_t q = {0};
    int i;
    memset(s, 0, sizeof s);
    o.qps = 1;
    o.burst = 3;
    hc = client_new(&o);
    for (i = 0; i < 4; i++)
        get("/hang", &s[i]); /* the 4th waits for a token */
    q.url = url("/stream");
    q.on_data = on_data;
    q.on_headers = on_headers;
    q.no_rate_limit = 1;
    start(&q, &s[4]);
    RUN_UNTIL(srv.n_requests == 4 && s[4].data_calls > 0);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 5);
    ks_hc_close(hc, on_closed, &hc_closed);
    hc = NULL;
    RUN_UNTIL(hc_closed);
    /* The server sees every connection go. */
    RUN_UNTIL(srv.n_closed == srv.n_accepted);
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(s[i].done, 0);
    ck_assert_int_eq(s[4].headers, 1);
    for (i = 0; i < 5; i++)
        seen_free(&s[i]);
}
END_TEST

START_TEST(close_inside_callbacks)
{
    /* Closing from on_done and from on_data: no further callbacks. */
    seen_t a = {0}, b = {0};
    ks_hc_request_t q = {0};
    hc = client_new(NULL);
    q.url = url("/burst");
    q.on_data = on_data;
    b.close_at = 2;
    start(&q, &b);
    RUN_UNTIL(hc_closed);
    ck_assert_int_eq(b.data_calls, 2);
    ck_assert_int_eq(b.done, 0);

    hc_closed = 0;
    hc = client_new(NULL);
    get("/hang", &b);
    get("/hello", &a);
    a.close_in_done = 1;
    RUN_UNTIL(hc_closed);
    ck_assert_int_eq(a.done, 1);
    ck_assert_int_eq(a.r.status, 200);
    ck_assert_int_eq(b.done, 0);
    hc_closed = 0;
    hc = client_new(NULL); /* for the teardown */
    seen_free(&a);
    seen_free(&b);
}
END_TEST

START_TEST(buffered_body_cap)
{
    ks_hc_opts_t o = {0};
    seen_t ok = {0}, big = {0};
    char want[64];
    o.max_body = 1000;
    hc = client_new(&o);
    get("/big/1000", &ok);
    RUN_UNTIL(ok.done);
    ck_assert_int_eq(ok.r.curl_code, 0);
    ck_assert_uint_eq(ok.r.body_len, 1000);
    get("/big/5000", &big);
    RUN_UNTIL(big.done);
    ck_assert(big.r.body_too_large);
    ck_assert_int_ne(big.r.curl_code, 0);
    ck_assert_int_eq(big.r.status, 200);
    ck_assert_uint_le(big.r.body_len, 1000);
    snprintf(want, sizeof want, "larger than 1000 bytes");
    ck_assert_msg(strstr(big.r.error, want) != NULL, "%s", big.r.error);
    seen_free(&ok);
    seen_free(&big);
}
END_TEST

START_TEST(invalid_requests)
{
    static const char *const bad_hdr[] = {"X-A: b\r\nX-Injected: 1"};
    static const char *const no_colon[] = {"X-A"};
    ks_hc_request_t q = {0};
    ks_hc_opts_t o = {0};
    ks_error_t err = {0};
    hc = client_new(NULL);
    q.url = "ftp://127.0.0.1/x";
    ck_assert_ptr_null(ks_hc_start(hc, &q, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
    q.url = "not a url";
    ck_assert_ptr_null(ks_hc_start(hc, &q, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
    q.url = url("/hello");
    q.method = "GE T";
    ck_assert_ptr_null(ks_hc_start(hc, &q, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
    q.method = NULL;
    q.headers = bad_hdr;
    q.n_headers = 1;
    ck_assert_ptr_null(ks_hc_start(hc, &q, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
    q.headers = no_colon;
    ck_assert_ptr_null(ks_hc_start(hc, &q, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
    ck_assert_uint_eq(ks_hc_in_flight(hc), 0);
    o.qps = 5;
    o.burst = 0;
    ck_assert_ptr_null(ks_hc_new(&loop, &o, &err));
    ck_assert_int_eq(err.code, KS_EINVAL);
}
END_TEST

/* TLS is tested against a real API server elsewhere; here only that the
 * settings reach libcurl: a plain-HTTP server answers https requests. */
START_TEST(tls_settings_are_used)
{
    static const char garbage[] = "this is not PEM";
    ks_hc_opts_t o = {0};
    ks_hc_tls_t insecure = {0};
    ks_hc_request_t q = {0};
    seen_t a = {0}, b = {0}, c = {0};
    char u[128], u2[128];
    o.tls.ca_data = garbage;
    o.tls.ca_len = sizeof garbage - 1;
    hc = client_new(&o);
    snprintf(u, sizeof u, "https://127.0.0.1:%d/api", srv.port);
    /* The client's CA data cannot be loaded. */
    q.url = u;
    start(&q, &a);
    RUN_UNTIL(a.done);
    ck_assert_int_eq(a.r.status, 0);
    ck_assert(a.r.tls_error);
    ck_assert_msg(strstr(a.r.error, u) && strstr(a.r.error, "verif"), "%s",
                  a.r.error);
    /* The request's own settings replace the client's: no CA problem, the
     * handshake meets a plain-HTTP server. */
    insecure.insecure = 1;
    q.tls = &insecure;
    start(&q, &b);
    RUN_UNTIL(b.done);
    ck_assert_int_eq(b.r.status, 0);
    ck_assert_int_eq(b.r.curl_code, CURLE_SSL_CONNECT_ERROR);
    ck_assert(!b.r.tls_error);
    ck_assert_msg(strstr(b.r.error, "TLS handshake failed"), "%s",
                  b.r.error);
    /* server_name: the connection still goes to the URL's address. */
    insecure.server_name = "kubernetes.invalid";
    snprintf(u2, sizeof u2, "https://127.0.0.1:%d/api?x=1", srv.port);
    q.url = u2;
    start(&q, &c);
    RUN_UNTIL(c.done);
    ck_assert_int_eq(c.r.curl_code, CURLE_SSL_CONNECT_ERROR);
    ck_assert_msg(strstr(c.r.error, u2), "%s", c.r.error);
    seen_free(&a);
    seen_free(&b);
    seen_free(&c);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("net-http-client");
    TCase *t;
    SRunner *sr;
    int failed;
    static const char *const proxies[] = {"http_proxy", "HTTP_PROXY",
                                          "https_proxy", "HTTPS_PROXY",
                                          "all_proxy", "ALL_PROXY"};
    size_t i;
    /* The test server writes to clients that hang up (libcurl itself
     * never raises SIGPIPE: it sends with MSG_NOSIGNAL). */
    signal(SIGPIPE, SIG_IGN);
    /* The tests talk to 127.0.0.1 directly. */
    for (i = 0; i < sizeof proxies / sizeof *proxies; i++)
        unsetenv(proxies[i]);

    t = tcase_create("rate");
    tcase_add_test(t, rate_bucket_qps10_burst2);
    tcase_add_test(t, rate_bucket_order_of_starts);
    tcase_add_test(t, rate_bucket_edges);
    suite_add_tcase(su, t);

    t = tcase_create("client");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, get_buffered);
    tcase_add_test(t, post_body_and_headers);
    tcase_add_test(t, error_statuses_with_body);
    tcase_add_test(t, streaming_chunks);
    tcase_add_test(t, cancel_inside_on_data);
    tcase_add_test(t, cancel_inside_on_data_burst);
    tcase_add_test(t, cancel_inside_on_headers);
    tcase_add_test(t, start_and_cancel_from_on_data);
    tcase_add_test(t, abort_from_on_data);
    tcase_add_test(t, connection_refused);
    tcase_add_test(t, whole_request_timeout);
    tcase_add_test(t, low_speed_timeout);
    tcase_add_test(t, many_concurrent);
    tcase_add_test(t, rate_limited_starts);
    tcase_add_test(t, max_running_caps_requests);
    tcase_add_test(t, cancel_queued_and_running);
    tcase_add_test(t, close_with_requests_in_flight);
    tcase_add_test(t, close_inside_callbacks);
    tcase_add_test(t, buffered_body_cap);
    tcase_add_test(t, invalid_requests);
    tcase_add_test(t, tls_settings_are_used);
    suite_add_tcase(su, t);

    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
