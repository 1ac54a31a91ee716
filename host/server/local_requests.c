/* Plugins' API requests answered by the embedded API (local_requests.h). */
#include "local_requests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "api_objects.h"
#include "base/log.h"
#include "server.h"

typedef struct local_req {
    uv_timer_t timer;
    ks_server_t *srv;
    char *method, *path, *query, *ctype, *body;
    size_t body_len;
    ks_api_done_fn done;
    void *ud;
} local_req_t;

static void req_free(uv_handle_t *h)
{
    local_req_t *r = h->data;
    free(r->method);
    free(r->path);
    free(r->ctype);
    free(r->body);
    free(r);
}

static void on_turn(uv_timer_t *t)
{
    local_req_t *r = t->data;
    ks_obj_answer_t a;
    ks_api_response_t resp;
    char msg[1400];
    if (!ks_objects_request(r->srv, r->method, r->path, r->query, r->ctype,
                            r->body, r->body_len, &a))
        ks_objects_status(&a, 404, "NotFound",
                          "the server could not find the requested "
                          "resource");
    memset(&resp, 0, sizeof resp);
    resp.status = a.body ? a.status : 500;
    resp.body = a.body ? a.body : "";
    resp.body_len = a.body ? a.len : 0;
    if (resp.status >= 200 && resp.status <= 299) {
        msg[0] = '\0';
    } else {
        /* as the cluster client words it: the request and the reason */
        json_t *st = json_loadb(resp.body, resp.body_len, 0, NULL);
        const char *m = json_string_value(json_object_get(st, "message"));
        snprintf(msg, sizeof msg, "%s %s: %d: %s", r->method, r->path,
                 resp.status, m ? m : "no message");
        json_decref(st);
    }
    resp.message = msg;
    ks_log(KS_LOGL_DEBUG, "plugin request %s %s: %d", r->method, r->path,
           resp.status);
    r->done(r->ud, &resp);
    free(a.body);
    uv_close((uv_handle_t *)&r->timer, req_free);
}

static void *l_send(void *ud, const ks_api_request_t *req,
                    ks_api_done_fn done, void *dud, char *err, size_t errlen)
{
    ks_server_t *srv = ud;
    local_req_t *r = calloc(1, sizeof *r);
    char *q;
    if (r == NULL || (r->method = strdup(req->method)) == NULL ||
        (r->path = strdup(req->path)) == NULL ||
        (r->ctype = strdup(req->content_type ? req->content_type
                                             : "application/json")) ==
            NULL ||
        (r->body = strdup(req->body ? req->body : "")) == NULL) {
        if (r) {
            free(r->method);
            free(r->path);
            free(r->ctype);
            free(r);
        }
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* "/path?query": the query is the part after '?' (in path's copy). */
    q = strchr(r->path, '?');
    if (q)
        *q++ = '\0';
    r->query = q ? q : r->path + strlen(r->path);
    r->body_len = strlen(r->body);
    r->srv = srv;
    r->done = done;
    r->ud = dud;
    if (uv_timer_init(srv->loop, &r->timer) != 0) {
        free(r->method);
        free(r->path);
        free(r->ctype);
        free(r->body);
        free(r);
        snprintf(err, errlen, "cannot start a timer");
        return NULL;
    }
    r->timer.data = r;
    uv_timer_start(&r->timer, on_turn, 0, 0);
    return r;
}

static void l_abort(void *ud, void *handle)
{
    local_req_t *r = handle;
    (void)ud;
    if (r == NULL)
        return;
    uv_timer_stop(&r->timer);
    uv_close((uv_handle_t *)&r->timer, req_free);
}

void ks_local_requests_writer(ks_server_t *srv, ks_sched_writer_t *w)
{
    w->api_mode = KS_API_CLUSTER;
    w->api_send = l_send;
    w->api_abort = l_abort;
    w->ud = srv;
}
