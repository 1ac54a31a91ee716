/* GET /api/v1/bindings?watch=true: a stream of binding events.
 *
 * A watcher that does not keep up is disconnected, as the API server
 * drops a watch whose buffer is full: once more than the server's
 * watch_buffer_limit (default KS_WATCH_DEFAULT_BUFFER) of its events is
 * queued and unsent (its initial events, sent at once, come on top), the
 * next event closes its connection; the client watches again. */
#include <stdint.h>
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

static json_t *binding_event(const char *key, const char *node,
                               uint64_t generation)
{
    return json_pack("{s:s, s:s, s:s, s:I}", "type", "Binding", "pod", key,
                     "node", node, "generation", (json_int_t)generation);
}

void ks_server_emit_binding(ks_server_t *srv, const ks_pod_entry_t *e)
{
    if (srv->watchers)
        send_line(NULL, srv,
                  binding_event(e->key, e->node, e->generation));
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
    if (ks_api_query_flag(req->query, "sendInitialEvents")) {
        /* The bindings made before the watch began. */
        for (i = 0; i < srv->pods.cap; i++) {
            const ks_pod_entry_t *e = srv->pods.slots[i].val;
            if (srv->pods.slots[i].key && e->state == KS_POD_BOUND)
                initial += send_line(c, srv,
                                     binding_event(e->key, e->node,
                                                   e->generation));
        }
    }
    limit = srv->watch_buffer_limit ? srv->watch_buffer_limit
                                    : KS_WATCH_DEFAULT_BUFFER;
    ks_http_stream_set_limit(c, limit > SIZE_MAX - initial ? SIZE_MAX
                                                            : limit + initial);
}
