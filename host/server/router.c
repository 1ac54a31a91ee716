/* Routing of API requests to handlers. */
#include "router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_objects.h"
#include "base/mono_clock.h"
#include "console.h"
#include "server.h"

int ks_route_match(const char *pattern, const char *path,
                   char caps[][KS_ROUTE_CAP_MAX], size_t n_caps)
{
    const char *p = pattern, *s = path;
    size_t n = 0;
    while (*p && *s) {
        const char *pe, *se;
        size_t pl, sl;
        if (*p != '/' || *s != '/')
            return -1;
        p++;
        s++;
        pe = strchr(p, '/');
        se = strchr(s, '/');
        pl = pe ? (size_t)(pe - p) : strlen(p);
        sl = se ? (size_t)(se - s) : strlen(s);
        if (pl == 2 && p[0] == '{' && p[1] == '}') {
            if (sl == 0 || sl >= KS_ROUTE_CAP_MAX || n >= n_caps)
                return -1;
            memcpy(caps[n], s, sl);
            caps[n][sl] = '\0';
            n++;
        } else if (pl != sl || memcmp(p, s, pl) != 0) {
            return -1;
        }
        p += pl;
        s += sl;
    }
    if (*p == '\0' && (*s == '\0' || strcmp(s, "/") == 0))
        return (int)n;
    return -1;
}

int ks_route_method_allowed(const char *methods, const char *method)
{
    size_t ml = strlen(method);
    const char *m = methods;
    while (*m) {
        const char *e = strchr(m, ' ');
        size_t l = e ? (size_t)(e - m) : strlen(m);
        if (l == ml && memcmp(m, method, l) == 0)
            return 1;
        if (e == NULL)
            break;
        m = e + 1;
    }
    return 0;
}

enum route_id {
    R_HEALTHZ,
    R_READYZ,
    R_LIVEZ,
    R_METRICS,
    R_DEBUG_PLUGINS,
    R_DEBUG_SHADOW,
    R_DEBUG_CLUSTER,
    R_DEBUG_QUEUE,
    R_DEBUG_POD,
    R_DEBUG_EXPLAIN,
    R_DEBUG_RATES,
    R_UI,
    R_UI_FILE,
    R_CONFIGZ,
    R_RELOAD,
    R_NODES,
    R_NODE,
    R_PODS_ALL,
    R_NS_PODS,
    R_NS_POD,
    R_BINDINGS
};

static const struct route {
    enum route_id id;
    const char *pattern;
    const char *methods;
} routes[] = {
    {R_HEALTHZ, "/healthz", "GET"},
    {R_READYZ, "/readyz", "GET"},
    {R_LIVEZ, "/livez", "GET"},
    {R_METRICS, "/metrics", "GET"},
    {R_DEBUG_PLUGINS, "/debug/plugins", "GET"},
    {R_DEBUG_SHADOW, "/debug/shadow", "GET"},
    {R_DEBUG_CLUSTER, "/debug/cluster", "GET"},
    {R_DEBUG_QUEUE, "/debug/queue", "GET"},
    {R_DEBUG_POD, "/debug/pods/{}/{}", "GET"},
    {R_DEBUG_EXPLAIN, "/debug/explain/{}/{}", "POST"},
    {R_DEBUG_RATES, "/debug/rates", "GET"},
    {R_UI, "/ui", "GET"},
    {R_UI_FILE, "/ui/{}", "GET"},
    {R_CONFIGZ, "/configz", "GET"},
    {R_RELOAD, "/-/reload", "POST"},
    {R_NODES, "/api/v1/nodes", "GET POST"},
    {R_NODE, "/api/v1/nodes/{}", "GET PUT DELETE"},
    {R_PODS_ALL, "/api/v1/pods", "GET"},
    {R_NS_PODS, "/api/v1/namespaces/{}/pods", "GET POST"},
    {R_NS_POD, "/api/v1/namespaces/{}/pods/{}", "GET DELETE"},
    {R_BINDINGS, "/api/v1/bindings", "GET"},
};

/* A request waiting for the API server's verdict on its caller. */
typedef struct auth_wait {
    ks_server_t *srv;
    ks_http_conn_t *c;
    ks_http_request_t req; /* its strings live while the answer waits */
    ks_delegate_req_t *pending;
    double t0; /* when authentication started (the metrics' duration) */
} auth_wait_t;

/* A delegated verdict in the authentication series: 200 and 403 come
 * after the user was known, 401 is a failed authentication, the rest an
 * error of the review (metrics_authn.h). */
static void authn_record(ks_server_t *srv, const ks_delegate_result_t *r,
                         double t0)
{
    const char *result = r->status == 200 || r->status == 403 ? "success"
                         : r->status == 401                   ? "failure"
                                                              : "error";
    ks_authn_metrics_record(&srv->authn_metrics, result,
                            ks_mono_seconds() - t0, r->user);
}

static void route(ks_server_t *srv, ks_http_conn_t *c,
                  const ks_http_request_t *req);

/* 401, 403, 500 or 503 as a v1.Status, as upstream answers them. */
static void refuse(ks_http_conn_t *c, const ks_delegate_result_t *r)
{
    switch (r->status) {
    case 401:
        ks_api_status_hdr(c, "WWW-Authenticate: Bearer realm=\"ksched\"\r\n",
                          401, "Unauthorized", NULL, NULL, "%s",
                          "Unauthorized");
        break;
    case 403:
        ks_api_status(c, 403, "Forbidden", NULL, NULL, "%s", r->message);
        break;
    case 503:
        ks_api_status(c, 503, "ServiceUnavailable", NULL, NULL, "%s",
                      r->message);
        break;
    default:
        ks_api_status(c, 500, "InternalError", NULL, NULL, "%s", r->message);
        break;
    }
}

static void auth_answered(void *ud, const ks_delegate_result_t *r)
{
    auth_wait_t *w = ud;
    ks_http_conn_on_close(w->c, NULL, NULL);
    authn_record(w->srv, r, w->t0);
    if (r->status == 200)
        route(w->srv, w->c, &w->req);
    else
        refuse(w->c, r);
    free(w);
}

/* The client left before the verdict: nobody to answer. */
static void auth_conn_closed(void *ud, ks_http_conn_t *c)
{
    auth_wait_t *w = ud;
    (void)c;
    ks_delegate_cancel(w->pending);
    free(w);
}

/* Delegated authentication and authorization (delegate.h): answered now
 * from the cache, or later, the connection waiting meanwhile. */
static void delegate(ks_server_t *srv, ks_http_conn_t *c,
                     const ks_http_request_t *req, double t0)
{
    ks_delegate_result_t res;
    auth_wait_t *w = calloc(1, sizeof *w);
    if (w == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    w->srv = srv;
    w->c = c;
    w->req = *req;
    w->t0 = t0;
    if (ks_delegate_check(srv->delegate, req->authorization, req->method,
                          req->path, &res, auth_answered, w,
                          &w->pending) == 0) {
        free(w);
        authn_record(srv, &res, t0);
        if (res.status == 200)
            route(srv, c, req);
        else
            refuse(c, &res);
        return;
    }
    ks_http_defer(c);
    ks_http_conn_on_close(c, auth_conn_closed, w);
}

void ks_server_handle(void *ud, ks_http_conn_t *c,
                      const ks_http_request_t *req)
{
    ks_server_t *srv = ud;
    int token_ok;
    /* With --token-file or delegated authentication, everything but the
     * health checks needs a bearer token (any path: an unknown one is 401
     * too, as upstream). A token of the file is allowed everything; any
     * other goes to the API server when authentication is delegated. The
     * console's static files carry no data: the page asks for the token
     * and sends it with each /debug request. */
    if ((srv->auth || srv->delegate) && !ks_auth_always_allowed(req->path) &&
        !ks_console_is_asset_path(req->path)) {
        double t0 = ks_mono_seconds();
        token_ok = srv->auth && ks_auth_check(srv->auth, req->authorization);
        if (!token_ok && srv->delegate) {
            delegate(srv, c, req, t0);
            return;
        }
        ks_authn_metrics_record(&srv->authn_metrics,
                                token_ok ? "success" : "failure",
                                ks_mono_seconds() - t0, NULL);
        if (!token_ok) {
            ks_api_status_hdr(c, "WWW-Authenticate: Bearer realm=\"ksched\"\r\n",
                              401, "Unauthorized", NULL, NULL, "Unauthorized");
            return;
        }
    }
    route(srv, c, req);
}

static void route(ks_server_t *srv, ks_http_conn_t *c,
                  const ks_http_request_t *req)
{
    char caps[KS_ROUTE_MAX_CAPS][KS_ROUTE_CAP_MAX];
    size_t i;
    for (i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const struct route *r = &routes[i];
        if (ks_route_match(r->pattern, req->path, caps, KS_ROUTE_MAX_CAPS) <
            0)
            continue;
        if (!ks_route_method_allowed(r->methods, req->method)) {
            char allow[128];
            snprintf(allow, sizeof allow, "Allow: %s\r\n", r->methods);
            /* "Allow" lists methods comma-separated. */
            for (char *p = allow + 7; *p; p++)
                if (*p == ' ')
                    *p = ',';
            ks_api_status_hdr(c, allow, 405, "MethodNotAllowed", NULL, NULL,
                              "the server does not allow this method on "
                              "the requested resource (%s %s; allowed: %s)",
                              req->method, req->path, r->methods);
            return;
        }
        if (srv->ksrc && r->id >= R_NODES && r->id != R_BINDINGS &&
            strcmp(req->method, "GET") != 0) {
            ks_api_status(c, 405, "MethodNotAllowed", NULL, NULL,
                          "ksched schedules the pods of the cluster at %s: "
                          "create and delete nodes and pods there",
                          ks_kube_client_server(srv->kclient));
            return;
        }
        switch (r->id) {
        case R_HEALTHZ:
        case R_READYZ:
        case R_LIVEZ:
            ks_api_health(srv, c, req);
            return;
        case R_METRICS:
            ks_api_metrics(srv, c, req);
            return;
        case R_DEBUG_PLUGINS:
            ks_console_looked(srv);
            ks_api_debug_plugins(srv, c, req);
            return;
        case R_DEBUG_SHADOW:
            ks_api_debug_shadow(srv, c, req);
            return;
        case R_DEBUG_CLUSTER:
            ks_console_looked(srv);
            ks_api_debug_cluster(srv, c, req);
            return;
        case R_DEBUG_QUEUE:
            ks_console_looked(srv);
            ks_api_debug_queue(srv, c, req);
            return;
        case R_DEBUG_POD:
            ks_console_looked(srv);
            ks_api_debug_pod(srv, c, req, caps[0], caps[1]);
            return;
        case R_DEBUG_EXPLAIN:
            ks_console_looked(srv);
            ks_api_debug_explain(srv, c, req, caps[0], caps[1]);
            return;
        case R_DEBUG_RATES:
            ks_console_looked(srv);
            ks_api_debug_rates(srv, c, req);
            return;
        case R_UI:
        case R_UI_FILE:
            ks_api_ui(srv, c, req);
            return;
        case R_CONFIGZ:
            ks_api_configz(srv, c, req);
            return;
        case R_RELOAD:
            ks_api_reload(srv, c, req);
            return;
        case R_NODES:
            ks_api_nodes(srv, c, req, NULL);
            return;
        case R_NODE:
            ks_api_nodes(srv, c, req, caps[0]);
            return;
        case R_PODS_ALL:
            ks_api_pods(srv, c, req, NULL, NULL);
            return;
        case R_NS_PODS:
            ks_api_pods(srv, c, req, caps[0], NULL);
            return;
        case R_NS_POD:
            ks_api_pods(srv, c, req, caps[0], caps[1]);
            return;
        case R_BINDINGS:
            ks_api_bindings(srv, c, req);
            return;
        }
    }
    /* The declared resources' objects (embedded API only). */
    if (srv->ksrc == NULL && ks_api_objects(srv, c, req))
        return;
    ks_api_status(c, 404, "NotFound", NULL, NULL,
                  "the server could not find the requested resource (%s %s)",
                  req->method, req->path);
}
