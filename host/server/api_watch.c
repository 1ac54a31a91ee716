/* GET /api/v1/bindings?watch=true: a stream of binding events.
 *
 * A watcher that does not keep up is disconnected, as the API server
 * drops a watch whose buffer is full: once more than the server's
 * watch_buffer_limit (default KS_WATCH_DEFAULT_BUFFER) of its events is
 * queued and unsent (its initial events, sent at once, come on top), the
 * next event closes its connection; the client watches again.
 *
 * Each Binding event carries its resourceVersion (1, 2, ...; kept across
 * worker restarts by the journal). A watch with ?resourceVersion=N
 * resumes: it first gets every binding after N still standing (oldest
 * first), then the new ones. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static void watcher_closed(void *ud, ks_http_conn_t *c)
{
    ks_watcher_t *w = ud;
    ks_server_t *srv = w->srv;
    (void)c;
    if (w->prev)
        w->prev->next = w->next;
    else
        srv->watchers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    srv->n_watchers--;
    free(w);
}

/* One event as a line of JSON; the reference to `ev` is stolen. Returns
 * the bytes sent to `c` (0 when broadcast or nothing was sent). */
static size_t send_line(ks_http_conn_t *c, ks_server_t *srv, json_t *ev)
{
    char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    size_t sent = 0;
    json_decref(ev);
    if (text == NULL)
        return 0;
    {
        size_t n = strlen(text);
        char *line = realloc(text, n + 2);
        if (line == NULL) {
            free(text);
            return 0;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        if (c == NULL)
            ks_server_broadcast(srv, line, n + 1);
        else if (ks_http_stream_write(c, line, n + 1) == 0)
            sent = n + 1;
        free(line);
    }
    return sent;
}

void ks_server_broadcast(ks_server_t *srv, const char *line, size_t len)
{
    ks_watcher_t *w, *next;
    for (w = srv->watchers; w; w = next) {
        next = w->next;
        ks_http_stream_write(w->conn, line, len);
    }
}

static json_t *binding_event(const ks_pod_entry_t *e)
{
    char rv[24];
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)e->bind_rv);
    return json_pack("{s:s, s:s, s:s, s:I, s:s}", "type", "Binding", "pod",
                     e->key, "node", e->node, "generation",
                     (json_int_t)e->generation, "resourceVersion", rv);
}

static int cmp_rv(const void *a, const void *b)
{
    const ks_pod_entry_t *x = *(const ks_pod_entry_t *const *)a;
    const ks_pod_entry_t *y = *(const ks_pod_entry_t *const *)b;
    return x->bind_rv < y->bind_rv ? -1 : x->bind_rv > y->bind_rv;
}

/* ?resourceVersion=N: 1 and *rv = N when present and numeric. */
static int query_rv(const char *q, uint64_t *rv)
{
    const char *p = q;
    while (p && *p) {
        if (strncmp(p, "resourceVersion=", 16) == 0) {
            char *end;
            unsigned long long v = strtoull(p + 16, &end, 10);
            if (end != p + 16 && (*end == '\0' || *end == '&')) {
                *rv = v;
                return 1;
            }
            return 0;
        }
        p = strchr(p, '&');
        if (p)
            p++;
    }
    return 0;
}

/* The bindings after `rv` still standing, oldest first. */
static size_t send_since(ks_http_conn_t *c, ks_server_t *srv, uint64_t rv)
{
    ks_pod_entry_t **v = malloc((srv->pods.count + 1) * sizeof *v);
    size_t i, n = 0, sent = 0;
    if (v == NULL)
        return 0;
    for (i = 0; i < srv->pods.cap; i++) {
        ks_pod_entry_t *e = srv->pods.slots[i].val;
        if (srv->pods.slots[i].key && e->state == KS_POD_BOUND &&
            e->bind_rv > rv)
            v[n++] = e;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_rv);
    for (i = 0; i < n; i++)
        sent += send_line(c, srv, binding_event(v[i]));
    free(v);
    return sent;
}

void ks_server_emit_binding(ks_server_t *srv, const ks_pod_entry_t *e)
{
    if (srv->watchers)
        send_line(NULL, srv, binding_event(e));
}

void ks_server_emit_failed(ks_server_t *srv, const ks_pod_entry_t *e,
                           const char *message)
{
    if (srv->watchers)
        send_line(NULL, srv,
                  json_pack("{s:s, s:s, s:s, s:I}", "type",
                            "FailedScheduling", "pod", e->key, "message",
                            message, "generation",
                            (json_int_t)e->generation));
}

void ks_server_emit_preempted(ks_server_t *srv, const ks_pod_entry_t *e)
{
    if (srv->watchers)
        send_line(NULL, srv,
                  json_pack("{s:s, s:s}", "type", "Preempted", "pod",
                            e->key));
}

void ks_api_bindings(ks_server_t *srv, ks_http_conn_t *c,
                     const ks_http_request_t *req)
{
    ks_watcher_t *w;
    size_t i, initial = 0, limit;
    uint64_t since = 0;
    if (!ks_api_query_flag(req->query, "watch")) {
        ks_api_status(c, 400, "BadRequest", "bindings", NULL,
                      "bindings can only be watched: add ?watch=true");
        return;
    }
    if (srv->draining) {
        ks_api_status(c, 503, "ServiceUnavailable", "bindings", NULL,
                      "the scheduler is shutting down");
        return;
    }
    w = calloc(1, sizeof *w);
    if (w == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    if (ks_http_stream_begin(c, 200, "application/json") != 0) {
        free(w);
        return;
    }
    w->srv = srv;
    w->conn = c;
    w->next = srv->watchers;
    if (srv->watchers)
        srv->watchers->prev = w;
    srv->watchers = w;
    srv->n_watchers++;
    ks_http_conn_on_close(c, watcher_closed, w);
    /* The initial events go out at once, whatever their size; the bound
     * applies to what comes after them. */
    ks_http_stream_set_limit(c, SIZE_MAX);
    if (query_rv(req->query, &since)) {
        /* Resume after the last event the client saw. */
        initial += send_since(c, srv, since);
    } else if (ks_api_query_flag(req->query, "sendInitialEvents")) {
        /* The bindings made before the watch began. */
        for (i = 0; i < srv->pods.cap; i++) {
            const ks_pod_entry_t *e = srv->pods.slots[i].val;
            if (srv->pods.slots[i].key && e->state == KS_POD_BOUND)
                initial += send_line(c, srv, binding_event(e));
        }
    }
    limit = srv->watch_buffer_limit ? srv->watch_buffer_limit
                                    : KS_WATCH_DEFAULT_BUFFER;
    ks_http_stream_set_limit(c, limit > SIZE_MAX - initial ? SIZE_MAX
                                                            : limit + initial);
}
