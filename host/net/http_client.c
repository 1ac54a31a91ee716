/*
 * libcurl multi-socket on libuv. See http_client.h for the contract.
 *
 * Shape:
 * - curl tells which sockets to watch (hc_socket_cb): each gets a fresh
 *   hc_sock_t with a uv_poll_t, closed when curl says REMOVE. Closing a
 *   uv_poll is asynchronous, so a context being closed is never reused:
 *   the next socket with the same fd number gets a new one (uv_close stops
 *   the watcher at once, so the fd is free for it).
 * - curl's single timeout is one uv_timer_t (hc_timer_cb).
 * - Every poll or timer event goes through hc_action(): one
 *   curl_multi_socket_action(), then the work deferred while curl was
 *   running (hc_after_curl), then the finished transfers one message at a
 *   time (hc_check_done).
 * - libcurl refuses curl_multi_add_handle/remove_handle from inside its
 *   own callbacks (on_data and on_headers run inside write/header
 *   callbacks), so while `in_curl` is set new requests go to `pending` and
 *   cancelled running ones to `zombies`, both flushed as soon as curl
 *   returns.
 * - ks_hc_close() from inside a callback only marks the client closing;
 *   the teardown runs when the outermost entry from the loop (`busy`)
 *   returns.
 *
 * - max_running caps the rate-limited requests that hold a libcurl
 *   transfer (`slot`): the others wait in `queued`, behind the token
 *   bucket, and hc_dispatch() starts them in order as slots free up (a
 *   slot freed from inside a callback kicks the rate timer at 0 ms).
 *
 * Every request is in exactly one list while it is alive: queued (waiting
 * for a token or a slot), pending (ready, to be added once curl returns), running
 * (added to the multi handle) or zombies (cancelled while curl was
 * running). A request being delivered (on_done running) is in none.
 */
#include "net/http_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/log.h"
#include "net/rate_limit.h"

#ifndef CURL_WRITEFUNC_ERROR
#define CURL_WRITEFUNC_ERROR 0
#endif

enum { HC_NOWHERE, HC_QUEUED, HC_PENDING, HC_RUNNING, HC_ZOMBIE };

/* Easy handles of finished requests kept (reset) for the next ones: a new
 * handle costs libcurl a fresh state and, on its first transfer, fresh
 * buffers. */
#define HC_IDLE_EASY 64

typedef struct hc_list {
    ks_hc_req_t *head, *tail;
    size_t n;
} hc_list_t;

typedef struct hc_sock {
    uv_poll_t poll;
    ks_hc_t *c;
    curl_socket_t fd;
    struct hc_sock *prev, *next; /* live sockets (not being closed) */
} hc_sock_t;

struct ks_hc_req {
    ks_hc_t *c;
    ks_hc_req_t *prev, *next;
    int where; /* HC_* */
    CURL *easy;
    struct curl_slist *headers, *connect_to;
    char *method, *verb, *url, *host, *body;
    ks_buf_t resp; /* buffered body when no on_data */
    int cancelled, in_done, head_done, too_large, aborted, oom;
    int capped; /* counts against max_running */
    int slot;   /* holds one of the max_running slots */
    int (*on_data)(void *ud, const char *p, size_t n);
    void (*on_headers)(void *ud, long status, const char *content_type);
    void (*on_done)(void *ud, const ks_hc_result_t *r);
    void *ud;
    uint64_t queued_ms, started_ms;
    /* What the easy handle is set up from (hc_easy_apply), kept so a
     * request that waits in the queue takes no easy handle until it
     * starts: a libcurl handle is many kilobytes, and a scheduler that
     * outruns the API server queues a request per pending pod. */
    char *eff_url; /* NULL: url */
    int https;
    long timeout_ms, low_speed_timeout_s;
    size_t body_len;
    char errbuf[CURL_ERROR_SIZE];
};

struct ks_hc {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;      /* curl's timeout */
    uv_timer_t rate_timer; /* next token for the queue head */
    ks_rate_t rate;
    uint64_t (*now_ms)(void *ud); /* NULL: uv_now */
    void *clock_ud;
    int limited;
    size_t max_running, slots_used, in_flight_max;
    size_t easy_in_use; /* easy handles requests hold (ks_hc_easy_in_use) */
    CURL *idle[HC_IDLE_EASY];   /* reset easy handles kept for reuse */
    size_t n_idle;
    hc_list_t queued, pending, running, zombies;
    hc_sock_t *socks;
    char *user_agent;
    ks_hc_tls_t tls; /* owned copies */
    long connect_timeout_ms;
    size_t max_body;
    void (*observe)(void *ud, const char *verb, const char *host, long code,
                    double seconds);
    void *observe_ud;
    int in_curl;   /* inside curl_multi_socket_action */
    int busy;      /* depth of entries from the loop */
    int closing;   /* ks_hc_close was called */
    int torn_down; /* handles are closing */
    int open_handles;
    void (*closed)(void *ud);
    void *closed_ud;
};

/* ---- process-wide init ------------------------------------------------ */

static pthread_once_t hc_once = PTHREAD_ONCE_INIT;
static CURLcode hc_global_rc;

static void hc_global_init(void)
{
    hc_global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- lists ------------------------------------------------------------- */

static void hc_list_push(hc_list_t *l, ks_hc_req_t *r, int where)
{
    r->prev = l->tail;
    r->next = NULL;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
    l->n++;
    r->where = where;
}

static void hc_list_remove(hc_list_t *l, ks_hc_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->prev = r->next = NULL;
    l->n--;
    r->where = HC_NOWHERE;
}

static hc_list_t *hc_list_of(ks_hc_t *c, ks_hc_req_t *r)
{
    switch (r->where) {
    case HC_QUEUED: return &c->queued;
    case HC_PENDING: return &c->pending;
    case HC_RUNNING: return &c->running;
    case HC_ZOMBIE: return &c->zombies;
    }
    return NULL;
}

/* ---- small helpers ----------------------------------------------------- */

static char *hc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void *hc_memdup(const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

/* The client's clock (ks_hc_opts_t.now_ms), in ms and in ns. */
static uint64_t hc_now_ms(const ks_hc_t *c)
{
    return c->now_ms ? c->now_ms(c->clock_ud) : (uint64_t)uv_now(c->loop);
}

static uint64_t hc_now_ns(const ks_hc_t *c)
{
    return hc_now_ms(c) * 1000000u;
}

static int hc_is_token(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch <= 0x20 || ch >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", ch))
            return 0;
    }
    return 1;
}

static int hc_has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return 1;
    return 0;
}

/* Does the header list set (or remove) `name`? */
static int hc_has_header(const char *const *h, size_t n, const char *name)
{
    size_t len = strlen(name), i;
    for (i = 0; i < n; i++)
        if (strncasecmp(h[i], name, len) == 0 &&
            (h[i][len] == ':' || h[i][len] == ';'))
            return 1;
    return 0;
}

static void hc_tls_free(ks_hc_tls_t *t)
{
    free((void *)t->ca_file);
    free((void *)t->ca_data);
    free((void *)t->cert_file);
    free((void *)t->cert_data);
    free((void *)t->key_file);
    free((void *)t->key_data);
    free((void *)t->server_name);
    memset(t, 0, sizeof *t);
}

static int hc_tls_copy(ks_hc_tls_t *d, const ks_hc_tls_t *s)
{
    memset(d, 0, sizeof *d);
    d->insecure = s->insecure;
#define HC_DUPSTR(f)                                                           \
    if (s->f && !(d->f = hc_strdup(s->f)))                                     \
        goto oom;
#define HC_DUPBLOB(f, l)                                                       \
    if (s->f && s->l) {                                                        \
        if (!(d->f = hc_memdup(s->f, s->l)))                                   \
            goto oom;                                                          \
        d->l = s->l;                                                           \
    }
    HC_DUPSTR(ca_file)
    HC_DUPSTR(cert_file)
    HC_DUPSTR(key_file)
    HC_DUPSTR(server_name)
    HC_DUPBLOB(ca_data, ca_len)
    HC_DUPBLOB(cert_data, cert_len)
    HC_DUPBLOB(key_data, key_len)
#undef HC_DUPSTR
#undef HC_DUPBLOB
    return 0;
oom:
    hc_tls_free(d);
    return -1;
}

/* ---- handles, teardown ------------------------------------------------- */

static void hc_teardown(ks_hc_t *c);

static void hc_handle_closed(ks_hc_t *c)
{
    void (*closed)(void *);
    void *ud;
    if (--c->open_handles > 0 || !c->torn_down)
        return;
    closed = c->closed;
    ud = c->closed_ud;
    free(c->user_agent);
    hc_tls_free(&c->tls);
    free(c);
    if (closed)
        closed(ud);
}

static void hc_sock_closed_cb(uv_handle_t *h)
{
    hc_sock_t *k = h->data;
    ks_hc_t *c = k->c;
    free(k);
    hc_handle_closed(c);
}

static void hc_timer_closed_cb(uv_handle_t *h)
{
    hc_handle_closed(h->data);
}

static void hc_sock_close(hc_sock_t *k)
{
    ks_hc_t *c = k->c;
    if (k->prev)
        k->prev->next = k->next;
    else
        c->socks = k->next;
    if (k->next)
        k->next->prev = k->prev;
    k->prev = k->next = NULL;
    uv_close((uv_handle_t *)&k->poll, hc_sock_closed_cb);
}

static void hc_enter(ks_hc_t *c)
{
    c->busy++;
}

static void hc_leave(ks_hc_t *c)
{
    if (--c->busy == 0 && c->closing && !c->torn_down)
        hc_teardown(c);
}

/* ---- max_running slots ------------------------------------------------- */

static void hc_rate_cb(uv_timer_t *t);

/* `r` lets go of its slot; a request waiting for one is started from the
 * rate timer (at once: safe from inside curl's callbacks too). */
static void hc_slot_release(ks_hc_t *c, ks_hc_req_t *r)
{
    if (!r->slot)
        return;
    r->slot = 0;
    c->slots_used--;
    if (c->queued.head && !c->closing && !c->torn_down)
        uv_timer_start(&c->rate_timer, hc_rate_cb, 0, 0);
}

static int hc_slot_free(const ks_hc_t *c)
{
    return c->max_running == 0 || c->slots_used < c->max_running;
}

static void hc_count_in_flight(ks_hc_t *c)
{
    size_t n = c->queued.n + c->pending.n + c->running.n;
    if (n > c->in_flight_max)
        c->in_flight_max = n;
}

/* ---- requests: freeing, results ---------------------------------------- */

/* An easy handle for a new request: a reset one, or a new one. */
static CURL *hc_easy_get(ks_hc_t *c)
{
    CURL *e = c->n_idle ? c->idle[--c->n_idle] : curl_easy_init();
    if (e != NULL)
        c->easy_in_use++;
    return e;
}

/* `r`'s easy handle (out of the multi handle) is done with. */
static void hc_easy_put(ks_hc_req_t *r)
{
    ks_hc_t *c = r->c;
    c->easy_in_use--;
    if (!c->closing && !c->torn_down && c->n_idle < HC_IDLE_EASY) {
        curl_easy_reset(r->easy);
        c->idle[c->n_idle++] = r->easy;
    } else {
        curl_easy_cleanup(r->easy);
    }
    r->easy = NULL;
}

static void hc_req_free(ks_hc_req_t *r)
{
    if (r->easy)
        hc_easy_put(r);
    curl_slist_free_all(r->headers);
    curl_slist_free_all(r->connect_to);
    free(r->eff_url);
    free(r->method);
    free(r->verb);
    free(r->url);
    free(r->host);
    free(r->body);
    ks_buf_free(&r->resp);
    free(r);
}

static int hc_is_tls_error(CURLcode code)
{
    switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return 1;
    default:
        return 0;
    }
}

/* The error text of a failed transfer into `b`. */
static void hc_error_text(ks_hc_t *c, ks_hc_req_t *r, CURLcode code,
                          const char *extra, ks_buf_t *b)
{
    const char *detail = r->errbuf[0] ? r->errbuf : curl_easy_strerror(code);
    long oserr = 0;
    ks_buf_printf(b, "%s %s: ", r->method, r->url);
    if (extra) {
        ks_buf_puts(b, extra);
        return;
    }
    if (r->too_large) {
        ks_buf_printf(b, "response body larger than %zu bytes", c->max_body);
        return;
    }
    if (r->oom) {
        ks_buf_puts(b, "out of memory buffering the response body");
        return;
    }
    if (r->aborted) {
        ks_buf_puts(b, "aborted by the data callback");
        return;
    }
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
        ks_buf_printf(b, "timed out: %s", detail);
        return;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        ks_buf_printf(b, "the server certificate could not be verified: %s",
                      detail);
        return;
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
        ks_buf_printf(b, "the CA certificates could not be loaded, so the "
                      "server certificate could not be verified: %s", detail);
        return;
    case CURLE_SSL_CERTPROBLEM:
        ks_buf_printf(b, "the client certificate or key could not be "
                      "used: %s", detail);
        return;
    case CURLE_SSL_CONNECT_ERROR:
        ks_buf_printf(b, "TLS handshake failed: %s", detail);
        return;
    default:
        break;
    }
    ks_buf_puts(b, detail);
    if (r->easy != NULL &&
        curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &oserr) == CURLE_OK &&
        oserr != 0) {
        const char *s = strerror((int)oserr);
        if (strstr(detail, s) == NULL)
            ks_buf_printf(b, " (%s)", s);
    }
}

/* Hand the end of `r` to its owner and free it. `r` is in no list and not
 * in the multi handle. `extra`: an error of our own (the transfer never
 * ran). */
static void hc_deliver(ks_hc_t *c, ks_hc_req_t *r, CURLcode code,
                       const char *extra)
{
    ks_hc_result_t res;
    ks_buf_t msg = {0};
    char *ct = NULL;
    curl_off_t total_us = 0;
    long status = 0;

    memset(&res, 0, sizeof res);
    if (r->easy != NULL) { /* none: it failed before it could start */
        if (curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status) ==
            CURLE_OK)
            res.status = status;
        if (curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct) ==
            CURLE_OK)
            res.content_type = ct;
        if (curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &total_us) ==
            CURLE_OK)
            res.seconds = (double)total_us / 1e6;
    }
    if (r->started_ms > r->queued_ms)
        res.queued_seconds = (double)(r->started_ms - r->queued_ms) / 1e3;
    res.curl_code = (int)code;
    if (code != CURLE_OK || extra) {
        if (res.curl_code == 0)
            res.curl_code = (int)CURLE_FAILED_INIT;
        hc_error_text(c, r, code, extra, &msg);
        res.error = msg.oom || msg.data == NULL ? curl_easy_strerror(code)
                                                : msg.data;
        res.timed_out = code == CURLE_OPERATION_TIMEDOUT;
        res.tls_error = hc_is_tls_error(code);
        res.body_too_large = r->too_large;
        res.aborted = r->aborted;
    }
    res.body = r->resp.data && !r->resp.oom ? r->resp.data : "";
    res.body_len = r->resp.data && !r->resp.oom ? r->resp.len : 0;

    r->in_done = 1;
    if (c->observe)
        c->observe(c->observe_ud, r->verb ? r->verb : r->method, r->host,
                   res.status, res.seconds);
    if (r->on_done)
        r->on_done(r->ud, &res);
    ks_buf_free(&msg);
    hc_req_free(r);
}

/* ---- curl callbacks ---------------------------------------------------- */

static int hc_dead(const ks_hc_req_t *r)
{
    return r->cancelled || r->c->closing;
}

/* The final response head is complete: tell on_headers once. 0, or -1
 * when the request was cancelled from inside it. */
static int hc_head_done(ks_hc_req_t *r)
{
    long status = 0;
    char *ct = NULL;
    if (r->head_done)
        return 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200)
        return 0; /* 1xx: another head follows */
    r->head_done = 1;
    if (r->on_headers) {
        curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct);
        r->on_headers(r->ud, status, ct);
        if (hc_dead(r))
            return -1;
    }
    return 0;
}

static size_t hc_header_cb(char *p, size_t size, size_t n, void *ud)
{
    ks_hc_req_t *r = ud;
    size_t len = size * n;
    if (hc_dead(r))
        return 0;
    if (!r->head_done &&
        ((len == 2 && p[0] == '\r' && p[1] == '\n') ||
         (len == 1 && p[0] == '\n')) &&
        hc_head_done(r) != 0)
        return 0;
    return len;
}

static size_t hc_write_cb(char *p, size_t size, size_t n, void *ud)
{
    ks_hc_req_t *r = ud;
    ks_hc_t *c = r->c;
    size_t len = size * n;
    if (hc_dead(r))
        return CURL_WRITEFUNC_ERROR;
    if (!r->head_done && hc_head_done(r) != 0)
        return CURL_WRITEFUNC_ERROR;
    if (r->on_data) {
        if (r->on_data(r->ud, p, len) != 0) {
            r->aborted = !hc_dead(r);
            return CURL_WRITEFUNC_ERROR;
        }
        return hc_dead(r) ? CURL_WRITEFUNC_ERROR : len;
    }
    if (len > c->max_body - r->resp.len) {
        r->too_large = 1;
        return CURL_WRITEFUNC_ERROR;
    }
    ks_buf_append(&r->resp, p, len);
    if (r->resp.oom) {
        r->oom = 1;
        return CURL_WRITEFUNC_ERROR;
    }
    return len;
}

static void hc_action(ks_hc_t *c, curl_socket_t fd, int flags);

static void hc_poll_cb(uv_poll_t *h, int status, int events)
{
    hc_sock_t *k = h->data;
    int flags = 0;
    /* On a poll error (libuv has stopped the watcher) pass no bits: curl
     * then checks the socket itself and reads the real error (say,
     * "Connection reset by peer") instead of a bare "poll error". */
    if (status >= 0) {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    hc_action(k->c, k->fd, flags);
}

static void hc_on_timeout(uv_timer_t *t)
{
    hc_action(t->data, CURL_SOCKET_TIMEOUT, 0);
}

static int hc_socket_cb(CURL *e, curl_socket_t s, int what, void *userp,
                        void *socketp)
{
    ks_hc_t *c = userp;
    hc_sock_t *k = socketp;
    int events = 0, rc;
    (void)e;
    if (what == CURL_POLL_REMOVE) {
        if (k) {
            if (!c->torn_down)
                curl_multi_assign(c->multi, s, NULL);
            hc_sock_close(k);
        }
        return 0;
    }
    if (k == NULL) {
        if (c->torn_down)
            return -1;
        k = calloc(1, sizeof *k);
        if (k == NULL)
            return -1;
        rc = uv_poll_init_socket(c->loop, &k->poll, s);
        if (rc == UV_EEXIST) {
            /* A context whose socket curl closed without telling: that fd
             * number is now this socket. Drop the stale one. */
            hc_sock_t *o;
            for (o = c->socks; o; o = o->next)
                if (o->fd == s) {
                    hc_sock_close(o);
                    break;
                }
            rc = uv_poll_init_socket(c->loop, &k->poll, s);
        }
        if (rc != 0) {
            ks_log(KS_LOGL_WARN, "http client: cannot watch socket %d: %s",
                   (int)s, uv_strerror(rc));
            free(k);
            return -1;
        }
        k->c = c;
        k->fd = s;
        k->poll.data = k;
        k->next = c->socks;
        if (c->socks)
            c->socks->prev = k;
        c->socks = k;
        c->open_handles++;
        curl_multi_assign(c->multi, s, k);
    }
    if (what & CURL_POLL_IN)
        events |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        events |= UV_WRITABLE;
    rc = uv_poll_start(&k->poll, events, hc_poll_cb);
    if (rc != 0) {
        ks_log(KS_LOGL_WARN, "http client: cannot poll socket %d: %s",
               (int)s, uv_strerror(rc));
        return -1;
    }
    return 0;
}

static int hc_timer_cb(CURLM *m, long timeout_ms, void *userp)
{
    ks_hc_t *c = userp;
    (void)m;
    if (c->torn_down)
        return 0;
    if (timeout_ms < 0)
        uv_timer_stop(&c->timer);
    else if (uv_timer_start(&c->timer, hc_on_timeout, (uint64_t)timeout_ms,
                            0) != 0)
        return -1;
    return 0;
}

/* ---- running transfers ------------------------------------------------- */

/* Hand `r` (in no list) to curl. Outside curl callbacks only. On failure
 * the request is finished with an error: 0 or -1. */
static int hc_add(ks_hc_t *c, ks_hc_req_t *r, int report)
{
    CURLMcode mc;
    r->started_ms = hc_now_ms(c);
    hc_list_push(&c->running, r, HC_RUNNING);
    mc = curl_multi_add_handle(c->multi, r->easy);
    if (mc == CURLM_OK)
        return 0;
    hc_list_remove(&c->running, r);
    hc_slot_release(c, r);
    if (report) {
        char msg[256];
        snprintf(msg, sizeof msg, "cannot start the transfer: %s",
                 curl_multi_strerror(mc));
        hc_deliver(c, r, CURLE_FAILED_INIT, msg);
    }
    return -1;
}

static void hc_flush_zombies(ks_hc_t *c)
{
    ks_hc_req_t *r;
    while (!c->closing && (r = c->zombies.head) != NULL) {
        hc_list_remove(&c->zombies, r);
        curl_multi_remove_handle(c->multi, r->easy);
        hc_req_free(r);
    }
}

static void hc_flush_pending(ks_hc_t *c)
{
    ks_hc_req_t *r;
    while (!c->closing && !c->in_curl && (r = c->pending.head) != NULL) {
        hc_list_remove(&c->pending, r);
        hc_add(c, r, 1);
    }
}

/* A transfer curl finished: out of the multi handle, then delivered. */
static void hc_finish(ks_hc_t *c, ks_hc_req_t *r, CURLcode code)
{
    hc_list_t *l = hc_list_of(c, r);
    if (l)
        hc_list_remove(l, r);
    curl_multi_remove_handle(c->multi, r->easy);
    hc_slot_release(c, r);
    if (r->cancelled) {
        hc_req_free(r);
        return;
    }
    hc_deliver(c, r, code, NULL);
}

/* Finished transfers, one message at a time: each callback may add,
 * cancel (which drops that transfer's message) or close. */
static void hc_check_done(ks_hc_t *c)
{
    CURLMsg *m;
    int left;
    while (!c->closing && !c->in_curl &&
           (m = curl_multi_info_read(c->multi, &left)) != NULL) {
        CURL *e;
        CURLcode code;
        char *priv = NULL;
        if (m->msg != CURLMSG_DONE)
            continue;
        e = m->easy_handle;
        code = m->data.result;
        if (curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv) != CURLE_OK ||
            priv == NULL) {
            curl_multi_remove_handle(c->multi, e);
            continue;
        }
        hc_finish(c, (ks_hc_req_t *)(void *)priv, code);
    }
}

static void hc_after_curl(ks_hc_t *c)
{
    hc_flush_zombies(c);
    hc_flush_pending(c);
    hc_check_done(c);
}

static void hc_action(ks_hc_t *c, curl_socket_t fd, int flags)
{
    int running = 0;
    CURLMcode mc;
    hc_enter(c);
    if (!c->closing) {
        c->in_curl = 1;
        mc = curl_multi_socket_action(c->multi, fd, flags, &running);
        c->in_curl = 0;
        if (mc != CURLM_OK)
            ks_log(KS_LOGL_WARN, "http client: %s", curl_multi_strerror(mc));
        hc_after_curl(c);
    }
    hc_leave(c);
}

/* ---- rate limit -------------------------------------------------------- */

static void hc_rate_arm(ks_hc_t *c, uint64_t wait_ns)
{
    uint64_t ms = (wait_ns + 999999u) / 1000000u;
    uv_timer_start(&c->rate_timer, hc_rate_cb, ms ? ms : 1, 0);
}

static int hc_easy_late(ks_hc_t *c, ks_hc_req_t *r);

static void hc_rate_cb(uv_timer_t *t)
{
    ks_hc_t *c = t->data;
    ks_hc_req_t *r;
    hc_enter(c);
    while (!c->closing && (r = c->queued.head) != NULL) {
        if (r->capped && !hc_slot_free(c))
            break; /* a slot released kicks the timer */
        if (c->limited) {
            uint64_t wait = ks_rate_take(&c->rate, hc_now_ns(c));
            if (wait) {
                hc_rate_arm(c, wait);
                break;
            }
        }
        hc_list_remove(&c->queued, r);
        if (r->capped) {
            r->slot = 1;
            c->slots_used++;
        }
        if (hc_easy_late(c, r) == 0)
            hc_add(c, r, 1);
    }
    hc_leave(c);
}

/* ---- setting up a request ---------------------------------------------- */

static int hc_curl_err(ks_error_t *err, CURLcode cc, const char *what)
{
    if (cc == CURLE_OUT_OF_MEMORY)
        return ks_error_set(err, KS_ENOMEM, "out of memory setting %s", what);
    return ks_error_set(err, KS_EHTTP, "libcurl refused %s: %s", what,
                        curl_easy_strerror(cc));
}

static int hc_tls_setopt_blob(CURL *e, CURLoption opt, const void *p,
                              size_t n, const char *what, ks_error_t *err)
{
    struct curl_blob b;
    CURLcode cc;
    b.data = (void *)p;
    b.len = n;
    b.flags = CURL_BLOB_COPY;
    cc = curl_easy_setopt(e, opt, &b);
    if (cc == CURLE_OK)
        return 0;
    if (cc == CURLE_OUT_OF_MEMORY)
        return ks_error_set(err, KS_ENOMEM, "out of memory copying %s", what);
    return ks_error_set(err, KS_ETLS, "%s cannot be given as data with this "
                        "libcurl: %s", what, curl_easy_strerror(cc));
}

static int hc_tls_apply(CURL *e, const ks_hc_tls_t *t, ks_error_t *err)
{
    CURLcode cc;
    int rc;
#define HC_TLS_SET(opt, val, what)                                             \
    if ((cc = curl_easy_setopt(e, opt, val)) != CURLE_OK)                      \
        return cc == CURLE_OUT_OF_MEMORY                                       \
                   ? ks_error_set(err, KS_ENOMEM, "out of memory")             \
                   : ks_error_set(err, KS_ETLS, "cannot set %s: %s", what,     \
                                  curl_easy_strerror(cc));
    HC_TLS_SET(CURLOPT_SSL_VERIFYPEER, t->insecure ? 0L : 1L,
               "peer verification")
    HC_TLS_SET(CURLOPT_SSL_VERIFYHOST, t->insecure ? 0L : 2L,
               "host verification")
    if (t->ca_data && t->ca_len) {
#if LIBCURL_VERSION_NUM >= 0x074d00
        rc = hc_tls_setopt_blob(e, CURLOPT_CAINFO_BLOB, t->ca_data, t->ca_len,
                                "the CA bundle", err);
        if (rc)
            return rc;
#else
        return ks_error_set(err, KS_ETLS, "CA data needs libcurl >= 7.77; "
                            "give a CA file instead");
#endif
    } else if (t->ca_file) {
        HC_TLS_SET(CURLOPT_CAINFO, t->ca_file, "the CA file")
    }
    if ((t->cert_data && t->cert_len) || t->cert_file) {
        HC_TLS_SET(CURLOPT_SSLCERTTYPE, "PEM", "the certificate type")
        if (t->cert_data && t->cert_len) {
            rc = hc_tls_setopt_blob(e, CURLOPT_SSLCERT_BLOB, t->cert_data,
                                    t->cert_len, "the client certificate",
                                    err);
            if (rc)
                return rc;
        } else {
            HC_TLS_SET(CURLOPT_SSLCERT, t->cert_file,
                       "the client certificate file")
        }
    }
    if ((t->key_data && t->key_len) || t->key_file) {
        HC_TLS_SET(CURLOPT_SSLKEYTYPE, "PEM", "the key type")
        if (t->key_data && t->key_len) {
            rc = hc_tls_setopt_blob(e, CURLOPT_SSLKEY_BLOB, t->key_data,
                                    t->key_len, "the client key", err);
            if (rc)
                return rc;
        } else {
            HC_TLS_SET(CURLOPT_SSLKEY, t->key_file, "the client key file")
        }
    }
#undef HC_TLS_SET
    return 0;
}

/* Parse the URL: the metrics host label, and with a TLS server name the
 * rewritten URL and CONNECT_TO entry. *eff_url is NULL when the URL is
 * used as given, else curl_free()d by the caller. */
static int hc_url_setup(ks_hc_req_t *r, const char *server_name, int *https,
                        char **eff_url, ks_error_t *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *dport = NULL,
         *nhost = NULL;
    ks_buf_t b = {0};
    CURLUcode uc;
    int rc = 0;

    *eff_url = NULL;
    if (u == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory parsing a URL");
    uc = curl_url_set(u, CURLUPART_URL, r->url, 0);
    if (uc == CURLUE_OUT_OF_MEMORY) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory parsing a URL");
        goto out;
    }
    if (uc != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        rc = ks_error_set(err, KS_EINVAL, "invalid URL \"%s\"", r->url);
        goto out;
    }
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        rc = ks_error_set(err, KS_EINVAL, "URL \"%s\": only http and https "
                          "are supported", r->url);
        goto out;
    }
    *https = strcmp(scheme, "https") == 0;
    uc = curl_url_get(u, CURLUPART_PORT, &port, 0);
    if (uc != CURLUE_OK && uc != CURLUE_NO_PORT) {
        rc = ks_error_set(err, KS_EINVAL, "invalid URL \"%s\"", r->url);
        goto out;
    }
    ks_buf_puts(&b, host);
    if (port)
        ks_buf_printf(&b, ":%s", port);
    if (b.oom) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto out;
    }
    r->host = ks_buf_steal(&b, NULL);

    if (*https && server_name && *server_name) {
        if (curl_url_get(u, CURLUPART_PORT, &dport, CURLU_DEFAULT_PORT) !=
                CURLUE_OK ||
            curl_url_set(u, CURLUPART_HOST, server_name, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &nhost, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_URL, eff_url, 0) != CURLUE_OK) {
            rc = ks_error_set(err, KS_EINVAL, "invalid TLS server name "
                              "\"%s\" for URL \"%s\"", server_name, r->url);
            goto out;
        }
        ks_buf_printf(&b, "%s:%s:%s:%s", nhost, dport, host, dport);
        if (b.oom ||
            !(r->connect_to = curl_slist_append(NULL, b.data))) {
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto out;
        }
    }
out:
    if (rc && *eff_url) {
        curl_free(*eff_url);
        *eff_url = NULL;
    }
    ks_buf_free(&b);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(dport);
    curl_free(nhost);
    curl_url_cleanup(u);
    return rc;
}

static int hc_headers_setup(ks_hc_req_t *r, const ks_hc_request_t *q,
                            ks_error_t *err)
{
    size_t i;
    struct curl_slist *l;
#define HC_HDR(s)                                                              \
    do {                                                                       \
        if ((l = curl_slist_append(r->headers, (s))) == NULL)                  \
            return ks_error_set(err, KS_ENOMEM, "out of memory");             \
        r->headers = l;                                                        \
    } while (0)
    for (i = 0; i < q->n_headers; i++)
        HC_HDR(q->headers[i]);
    if (r->body && !hc_has_header(q->headers, q->n_headers, "Content-Type"))
        HC_HDR("Content-Type:");
    if (!hc_has_header(q->headers, q->n_headers, "Expect"))
        HC_HDR("Expect:");
    if (r->connect_to && !hc_has_header(q->headers, q->n_headers, "Host")) {
        ks_buf_t b = {0};
        ks_buf_printf(&b, "Host: %s", r->host);
        if (b.oom)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        l = curl_slist_append(r->headers, b.data);
        ks_buf_free(&b);
        if (l == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        r->headers = l;
    }
#undef HC_HDR
    return 0;
}

/* What does not need an easy handle: the URL (and the TLS server name's
 * connect-to), the headers and the options kept for hc_easy_apply. */
static int hc_easy_prepare(ks_hc_t *c, ks_hc_req_t *r, const ks_hc_request_t *q,
                           ks_error_t *err)
{
    const ks_hc_tls_t *tls = q->tls ? q->tls : &c->tls;
    char *eff_url = NULL;
    int rc;

    rc = hc_url_setup(r, tls->server_name, &r->https, &eff_url, err);
    if (rc == 0 && eff_url != NULL && (r->eff_url = hc_strdup(eff_url)) == NULL)
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
    curl_free(eff_url);
    if (rc)
        return rc;
    r->timeout_ms = q->timeout_ms;
    r->low_speed_timeout_s = q->low_speed_timeout_s;
    r->body_len = q->body_len;
    return hc_headers_setup(r, q, err);
}

/* Set r->easy up from what hc_easy_prepare kept and `tls`. */
static int hc_easy_apply(ks_hc_t *c, ks_hc_req_t *r, const ks_hc_tls_t *tls,
                         ks_error_t *err)
{
    CURL *e = r->easy;
    CURLcode cc;

#define HC_SET(opt, val, what)                                                 \
    if ((cc = curl_easy_setopt(e, opt, val)) != CURLE_OK)                      \
        return hc_curl_err(err, cc, what);
    HC_SET(CURLOPT_PRIVATE, (void *)r, "private data")
    HC_SET(CURLOPT_NOSIGNAL, 1L, "nosignal")
    HC_SET(CURLOPT_ERRORBUFFER, r->errbuf, "the error buffer")
    HC_SET(CURLOPT_URL, r->eff_url ? r->eff_url : r->url, "the URL")
#if LIBCURL_VERSION_NUM >= 0x075500
    HC_SET(CURLOPT_PROTOCOLS_STR, "http,https", "the protocols")
#endif
    HC_SET(CURLOPT_WRITEFUNCTION, hc_write_cb, "the write callback")
    HC_SET(CURLOPT_WRITEDATA, (void *)r, "the write data")
    HC_SET(CURLOPT_HEADERFUNCTION, hc_header_cb, "the header callback")
    HC_SET(CURLOPT_HEADERDATA, (void *)r, "the header data")
    HC_SET(CURLOPT_USERAGENT, c->user_agent, "the user agent")
    HC_SET(CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms,
           "the connect timeout")
    if (r->timeout_ms > 0)
        HC_SET(CURLOPT_TIMEOUT_MS, r->timeout_ms, "the timeout")
    if (r->low_speed_timeout_s > 0) {
        HC_SET(CURLOPT_LOW_SPEED_LIMIT, 1L, "the low speed limit")
        HC_SET(CURLOPT_LOW_SPEED_TIME, r->low_speed_timeout_s,
               "the low speed time")
    }
    HC_SET(CURLOPT_ACCEPT_ENCODING, "", "the accepted encodings")
    HC_SET(CURLOPT_TCP_KEEPALIVE, 1L, "TCP keep-alive")
    HC_SET(CURLOPT_TCP_KEEPIDLE, 30L, "TCP keep-alive idle time")
    HC_SET(CURLOPT_TCP_KEEPINTVL, 30L, "TCP keep-alive interval")
    HC_SET(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L, "proxy CONNECT headers")
    HC_SET(CURLOPT_FOLLOWLOCATION, 0L, "redirects")
    if (r->https) {
        HC_SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS,
               "the HTTP version")
        HC_SET(CURLOPT_PIPEWAIT, 1L, "pipewait")
    } else {
        HC_SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1,
               "the HTTP version")
    }
    if (strcmp(r->method, "HEAD") == 0) {
        HC_SET(CURLOPT_NOBODY, 1L, "HEAD")
    } else if (r->body || strcmp(r->method, "POST") == 0) {
        HC_SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len,
               "the body size")
        HC_SET(CURLOPT_POSTFIELDS, r->body ? r->body : "", "the body")
        if (strcmp(r->method, "POST") != 0)
            HC_SET(CURLOPT_CUSTOMREQUEST, r->method, "the method")
    } else if (strcmp(r->method, "GET") == 0) {
        HC_SET(CURLOPT_HTTPGET, 1L, "GET")
    } else {
        HC_SET(CURLOPT_CUSTOMREQUEST, r->method, "the method")
    }
    HC_SET(CURLOPT_HTTPHEADER, r->headers, "the headers")
    if (r->connect_to)
        HC_SET(CURLOPT_CONNECT_TO, r->connect_to, "connect-to")
#undef HC_SET
    return hc_tls_apply(e, tls, err);
}

/* A request that waited in the queue without an easy handle (its TLS
 * settings are the client's own): take one and set it up now. 0, or -1
 * with the request delivered as failed (in no list, its slot released). */
static int hc_easy_late(ks_hc_t *c, ks_hc_req_t *r)
{
    ks_error_t err;
    if (r->easy != NULL)
        return 0;
    ks_error_init(&err);
    r->easy = hc_easy_get(c);
    if (r->easy == NULL)
        ks_error_set(&err, KS_ENOMEM, "out of memory");
    else if (hc_easy_apply(c, r, &c->tls, &err) == 0)
        return 0;
    hc_slot_release(c, r);
    hc_deliver(c, r, CURLE_FAILED_INIT, err.msg);
    return -1;
}

/* ---- public ------------------------------------------------------------ */

ks_hc_t *ks_hc_new(uv_loop_t *loop, const ks_hc_opts_t *o, ks_error_t *err)
{
    static const ks_hc_opts_t defaults;
    ks_hc_t *c;
    long maxconn;

    if (o == NULL)
        o = &defaults;
    if (loop == NULL) {
        ks_error_set(err, KS_EINVAL, "http client: no loop");
        return NULL;
    }
    if (o->qps > 0 && o->burst < 1) {
        ks_error_set(err, KS_EINVAL, "http client: burst must be at least 1 "
                     "when qps (%g) is set", o->qps);
        return NULL;
    }
    if (o->connect_timeout_ms < 0) {
        ks_error_set(err, KS_EINVAL, "http client: negative connect timeout");
        return NULL;
    }
    pthread_once(&hc_once, hc_global_init);
    if (hc_global_rc != CURLE_OK) {
        ks_error_set(err, KS_EHTTP, "cannot initialise libcurl: %s",
                     curl_easy_strerror(hc_global_rc));
        return NULL;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    c->loop = loop;
    c->user_agent = hc_strdup(o->user_agent ? o->user_agent : "ksched");
    if (c->user_agent == NULL || hc_tls_copy(&c->tls, &o->tls) != 0) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        goto fail;
    }
    c->connect_timeout_ms = o->connect_timeout_ms
                                ? o->connect_timeout_ms
                                : KS_HC_DEFAULT_CONNECT_TIMEOUT_MS;
    c->max_body = o->max_body ? o->max_body : KS_HC_DEFAULT_MAX_BODY;
    c->observe = o->observe;
    c->observe_ud = o->observe_ud;
    c->now_ms = o->now_ms;
    c->clock_ud = o->clock_ud;
    maxconn = o->max_host_connections == 0
                  ? KS_HC_DEFAULT_MAX_HOST_CONNECTIONS
                  : o->max_host_connections < 0 ? 0L
                                                : o->max_host_connections;
    c->multi = curl_multi_init();
    if (c->multi == NULL) {
        ks_error_set(err, KS_ENOMEM, "cannot create a libcurl multi handle");
        goto fail;
    }
    if (curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, hc_socket_cb) ||
        curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, (void *)c) ||
        curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, hc_timer_cb) ||
        curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, (void *)c) ||
        curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX) ||
        curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxconn)) {
        ks_error_set(err, KS_EHTTP, "cannot set up the libcurl multi handle");
        goto fail;
    }
    c->limited = o->qps > 0;
    c->max_running = o->max_running;
    /* Cannot fail for timers; both are closed by the teardown. */
    uv_timer_init(loop, &c->timer);
    uv_timer_init(loop, &c->rate_timer);
    c->timer.data = c;
    c->rate_timer.data = c;
    c->open_handles = 2;
    ks_rate_init(&c->rate, o->qps, o->burst, hc_now_ns(c));
    return c;
fail:
    if (c->multi)
        curl_multi_cleanup(c->multi);
    free(c->user_agent);
    hc_tls_free(&c->tls);
    free(c);
    return NULL;
}

ks_hc_req_t *ks_hc_start(ks_hc_t *c, const ks_hc_request_t *q,
                         ks_error_t *err)
{
    const char *method;
    ks_hc_req_t *r;
    size_t i;
    int rc, queue = 0;

    if (c == NULL || q == NULL || q->url == NULL) {
        ks_error_set(err, KS_EINVAL, "http request: no client or URL");
        return NULL;
    }
    if (c->closing) {
        ks_error_set(err, KS_EINVAL, "%s: the HTTP client is closing", q->url);
        return NULL;
    }
    method = q->method ? q->method : "GET";
    if (!hc_is_token(method)) {
        ks_error_set(err, KS_EINVAL, "%s: invalid HTTP method \"%s\"", q->url,
                     method);
        return NULL;
    }
    if (hc_has_ctl(q->url) || strchr(q->url, ' ')) {
        ks_error_set(err, KS_EINVAL, "invalid URL \"%s\": spaces or control "
                     "characters", q->url);
        return NULL;
    }
    for (i = 0; i < q->n_headers; i++)
        if (q->headers == NULL || q->headers[i] == NULL ||
            hc_has_ctl(q->headers[i]) ||
            strpbrk(q->headers[i], ":;") == NULL) {
            ks_error_set(err, KS_EINVAL, "%s %s: invalid header \"%s\"",
                         method, q->url,
                         q->headers && q->headers[i] ? q->headers[i] : "");
            return NULL;
        }
    if (q->body == NULL && q->body_len) {
        ks_error_set(err, KS_EINVAL, "%s %s: body length without a body",
                     method, q->url);
        return NULL;
    }
    if (q->body && strcmp(method, "HEAD") == 0) {
        ks_error_set(err, KS_EINVAL, "HEAD %s: a HEAD request has no body",
                     q->url);
        return NULL;
    }

    r = calloc(1, sizeof *r);
    if (r == NULL)
        goto oom;
    r->c = c;
    r->on_data = q->on_data;
    r->on_headers = q->on_headers;
    r->on_done = q->on_done;
    r->ud = q->ud;
    if (!(r->method = hc_strdup(method)) || !(r->url = hc_strdup(q->url)) ||
        (q->verb && !(r->verb = hc_strdup(q->verb))) ||
        (q->body && !(r->body = hc_memdup(q->body, q->body_len))))
        goto oom;
    rc = hc_easy_prepare(c, r, q, err);
    if (rc)
        goto fail;

    r->queued_ms = r->started_ms = hc_now_ms(c);
    r->capped = !q->no_rate_limit && c->max_running > 0;
    if (r->capped && (c->queued.head != NULL || !hc_slot_free(c))) {
        /* Behind the queue, or every slot taken: a release or the rate
         * timer (armed while the queue waits for a token) starts it. */
        queue = 1;
        hc_list_push(&c->queued, r, HC_QUEUED);
    } else if (c->limited && !q->no_rate_limit) {
        uint64_t wait = 0;
        if (c->queued.head == NULL)
            wait = ks_rate_take(&c->rate, hc_now_ns(c));
        if (c->queued.head != NULL || wait != 0) {
            queue = 1;
            if (c->queued.head == NULL)
                hc_rate_arm(c, wait);
            hc_list_push(&c->queued, r, HC_QUEUED);
        }
    }
    /* The easy handle now, unless the request waits in the queue with the
     * client's own TLS settings (then it takes one when it starts). */
    if (!queue || q->tls != NULL) {
        r->easy = hc_easy_get(c);
        if (r->easy == NULL) {
            if (queue)
                hc_list_remove(&c->queued, r);
            goto oom;
        }
        rc = hc_easy_apply(c, r, q->tls ? q->tls : &c->tls, err);
        if (rc) {
            if (queue)
                hc_list_remove(&c->queued, r);
            goto fail;
        }
    }
    if (!queue && r->capped) {
        r->slot = 1;
        c->slots_used++;
    }
    if (!queue) {
        if (c->in_curl) {
            hc_list_push(&c->pending, r, HC_PENDING);
        } else if (hc_add(c, r, 0) != 0) {
            ks_error_set(err, KS_EHTTP, "%s %s: libcurl refused the transfer",
                         method, q->url);
            goto fail;
        }
    }
    hc_count_in_flight(c);
    return r;
oom:
    ks_error_set(err, KS_ENOMEM, "%s %s: out of memory", method, q->url);
fail:
    if (r)
        hc_req_free(r);
    return NULL;
}

void ks_hc_cancel(ks_hc_req_t *r)
{
    ks_hc_t *c;
    if (r == NULL || r->cancelled || r->in_done)
        return;
    c = r->c;
    r->cancelled = 1;
    switch (r->where) {
    case HC_QUEUED:
        hc_list_remove(&c->queued, r);
        hc_req_free(r);
        if (c->queued.head == NULL)
            uv_timer_stop(&c->rate_timer); /* nothing left to wait for */
        break;
    case HC_PENDING:
        hc_list_remove(&c->pending, r);
        hc_slot_release(c, r);
        hc_req_free(r);
        break;
    case HC_RUNNING:
        hc_list_remove(&c->running, r);
        hc_slot_release(c, r);
        if (c->in_curl) {
            /* curl is running: it cannot let go of the transfer now; our
             * callbacks refuse its data until it is removed. */
            hc_list_push(&c->zombies, r, HC_ZOMBIE);
        } else {
            curl_multi_remove_handle(c->multi, r->easy);
            hc_req_free(r);
        }
        break;
    default:
        break;
    }
}

size_t ks_hc_in_flight(const ks_hc_t *c)
{
    if (c == NULL || c->closing)
        return 0;
    return c->queued.n + c->pending.n + c->running.n;
}

size_t ks_hc_queued(const ks_hc_t *c)
{
    if (c == NULL || c->closing)
        return 0;
    return c->queued.n;
}

size_t ks_hc_easy_in_use(const ks_hc_t *c)
{
    return c ? c->easy_in_use : 0;
}

size_t ks_hc_in_flight_max(const ks_hc_t *c)
{
    return c ? c->in_flight_max : 0;
}

static void hc_drop_list(ks_hc_t *c, hc_list_t *l, int added)
{
    ks_hc_req_t *r;
    while ((r = l->head) != NULL) {
        hc_list_remove(l, r);
        if (added)
            curl_multi_remove_handle(c->multi, r->easy);
        hc_req_free(r);
    }
}

static void hc_teardown(ks_hc_t *c)
{
    c->torn_down = 1;
    hc_drop_list(c, &c->queued, 0);
    hc_drop_list(c, &c->pending, 0);
    hc_drop_list(c, &c->running, 1);
    hc_drop_list(c, &c->zombies, 1);
    curl_multi_cleanup(c->multi);
    c->multi = NULL;
    while (c->n_idle > 0)
        curl_easy_cleanup(c->idle[--c->n_idle]);
    while (c->socks)
        hc_sock_close(c->socks);
    uv_close((uv_handle_t *)&c->timer, hc_timer_closed_cb);
    uv_close((uv_handle_t *)&c->rate_timer, hc_timer_closed_cb);
}

static void hc_mark_cancelled(hc_list_t *l)
{
    ks_hc_req_t *r;
    for (r = l->head; r; r = r->next)
        r->cancelled = 1;
}

void ks_hc_close(ks_hc_t *c, void (*closed)(void *ud), void *ud)
{
    if (c == NULL || c->closing)
        return;
    c->closing = 1;
    c->closed = closed;
    c->closed_ud = ud;
    hc_mark_cancelled(&c->queued);
    hc_mark_cancelled(&c->pending);
    hc_mark_cancelled(&c->running);
    hc_mark_cancelled(&c->zombies);
    uv_timer_stop(&c->rate_timer);
    if (c->busy == 0)
        hc_teardown(c);
}
