/*
 * Plugins' requests to the API server (plugin_requests.h): one kube
 * client call each, its answer handed over as a ks_api_response_t.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kube/plugin_requests.h"

/* Long enough for a slow server; the call's slot is released after it. */
#define PLUGIN_REQUEST_TIMEOUT_MS 60000

typedef struct plugin_req {
    ks_kube_call_t *call;
    ks_api_done_fn done;
    void *ud;
} plugin_req_t;

static void on_done(void *ud, const ks_kube_result_t *r)
{
    plugin_req_t *p = ud;
    ks_api_response_t resp;
    resp.status = (int)r->status;
    resp.body = r->body ? r->body : "";
    resp.body_len = r->body ? r->body_len : 0;
    resp.message = r->message ? r->message : "";
    p->done(p->ud, &resp);
    free(p);
}

/* The client drops the call (it is closing): the plugin still hears of
 * it, once, as a request that got no answer. */
static void on_cancel(void *ud)
{
    plugin_req_t *p = ud;
    ks_api_response_t resp;
    resp.status = 0;
    resp.body = "";
    resp.body_len = 0;
    resp.message = "cancelled: the API client is closing";
    p->done(p->ud, &resp);
    free(p);
}

void *ks_kube_plugin_request(ks_kube_client_t *c, const ks_api_request_t *req,
                             ks_api_done_fn done, void *ud, char *err,
                             size_t errlen)
{
    ks_kube_call_opts_t o = {0};
    ks_error_t e = {0};
    plugin_req_t *p;
    if (c == NULL) {
        snprintf(err, errlen, "no API client");
        return NULL;
    }
    if ((p = calloc(1, sizeof *p)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->done = done;
    p->ud = ud;
    o.method = req->method;
    o.path = req->path;
    o.body = req->body;
    o.content_type = req->content_type;
    o.timeout_ms = PLUGIN_REQUEST_TIMEOUT_MS;
    o.on_done = on_done;
    o.on_cancel = on_cancel;
    o.ud = p;
    if ((p->call = ks_kube_call(c, &o, &e)) == NULL) {
        snprintf(err, errlen, "%s", e.msg[0] ? e.msg : "out of memory");
        free(p);
        return NULL;
    }
    return p;
}

void ks_kube_plugin_request_abort(void *handle)
{
    plugin_req_t *p = handle;
    if (p == NULL)
        return;
    ks_kube_call_cancel(p->call);
    free(p);
}
