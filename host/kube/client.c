/* REST calls to the API server over the libcurl-on-libuv HTTP client. */
#include "client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "net/http_client.h"

struct ks_kube_call {
    ks_kube_client_t *c;
    ks_hc_req_t *req;
    char *method, *path, *body, *content_type, *verb;
    long timeout_ms, low_speed_timeout_s;
    int watch, retried;
    ks_kube_data_cb on_data;
    ks_kube_done_cb on_done;
    void *ud;
    const void *owner;
    void (*on_cancel)(void *ud);
    uv_timer_t delay; /* armed until a delayed call is sent */
    int delay_inited;
    struct ks_kube_call *prev, *next;
};

struct ks_kube_client {
    uv_loop_t *loop;
    ks_hc_t *hc;
    ks_kube_conn_t *conn;
    char *server; /* without a trailing '/' */
    ks_kube_client_opts_t o;
    ks_kube_call_t *calls;
    size_t n_calls, n_calls_max;
    void (*closed)(void *ud);
    void *closed_ud;
};

static void call_unlink(ks_kube_call_t *k)
{
    ks_kube_client_t *c = k->c;
    if (k->prev)
        k->prev->next = k->next;
    else
        c->calls = k->next;
    if (k->next)
        k->next->prev = k->prev;
    c->n_calls--;
}

static void call_free_now(ks_kube_call_t *k)
{
    free(k->method);
    free(k->path);
    free(k->body);
    free(k->content_type);
    free(k->verb);
    free(k);
}

static void delay_closed(uv_handle_t *h)
{
    call_free_now(h->data);
}

/* Unlinked already; frees once its delay timer (if any) is closed. */
static void call_free(ks_kube_call_t *k)
{
    if (k->delay_inited)
        uv_close((uv_handle_t *)&k->delay, delay_closed);
    else
        call_free_now(k);
}

const char *ks_kube_status_message(const char *body, size_t n, char *buf,
                                   size_t len)
{
    json_t *doc, *kind, *msg;
    const char *out = NULL;
    if (body == NULL || n == 0 || body[0] != '{')
        return NULL;
    doc = json_loadb(body, n, 0, NULL);
    kind = json_object_get(doc, "kind");
    msg = json_object_get(doc, "message");
    if (json_is_string(kind) && strcmp(json_string_value(kind), "Status") == 0 &&
        json_is_string(msg)) {
        snprintf(buf, len, "%s", json_string_value(msg));
        out = buf;
    }
    json_decref(doc);
    return out;
}

static void observe_cb(void *ud, const char *verb, const char *host,
                       long code, double seconds)
{
    ks_kube_client_t *c = ud;
    (void)host;
    if (c->o.observe)
        c->o.observe(c->o.observe_ud, verb, code, seconds);
}

static int start(ks_kube_call_t *k, ks_error_t *err);

static int hc_data(void *ud, const char *p, size_t n)
{
    ks_kube_call_t *k = ud;
    return k->on_data ? k->on_data(k->ud, p, n) : 0;
}

/* A failure in words: what was asked, of whom, and why. */

/* A path of a resource the built-in scheduler roles cover (the core group
 * and the groups kube-scheduler reads), as opposed to a plugin's custom
 * resource. */
static int builtin_path(const char *path)
{
    static const char *const groups[] = {
        "/apis/apps/", "/apis/policy/", "/apis/storage.k8s.io/",
        "/apis/coordination.k8s.io/", "/apis/events.k8s.io/"};
    size_t i;
    if (strncmp(path, "/api/", 5) == 0)
        return 1;
    for (i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strncmp(path, groups[i], strlen(groups[i])) == 0)
            return 1;
    return 0;
}
static void describe_failure(ks_kube_call_t *k, const ks_hc_result_t *r,
                             char *buf, size_t len)
{
    char smsg[1024];
    const char *m;
    if (r->status == 0 || (r->curl_code != 0 && r->status < 400)) {
        if (r->tls_error)
            snprintf(buf, len,
                     "%s %s%s: the API server's certificate is not trusted "
                     "or the client certificate was refused (check "
                     "certificate-authority / tls-server-name in the "
                     "kubeconfig): %s",
                     k->method, k->c->server, k->path,
                     r->error ? r->error : "TLS error");
        else
            snprintf(buf, len, "%s", r->error ? r->error : "request failed");
        return;
    }
    m = ks_kube_status_message(r->body, r->body_len, smsg, sizeof smsg);
    switch (r->status) {
    case 401:
        snprintf(buf, len,
                 "%s %s: 401 Unauthorized: the API server rejected the "
                 "credentials of %s (an expired or invalid token, or an "
                 "unknown client certificate)%s%s",
                 k->method, k->path, k->c->conn->user[0] ? k->c->conn->user
                                                          : "this client",
                 m ? ": " : "", m ? m : "");
        break;
    case 403:
        snprintf(buf, len, "%s %s: 403 Forbidden: %s (%s)", k->method,
                 k->path, m ? m : "forbidden",
                 builtin_path(k->path)
                     ? "grant this user what deploy/rbac.yaml grants: the "
                       "ClusterRoles system:kube-scheduler and "
                       "system:volume-scheduler, and volumeattachments"
                     : "grant this user that verb on that resource with a "
                       "ClusterRole and a ClusterRoleBinding: a plugin's "
                       "resource is not in the built-in scheduler roles");
        break;
    default:
        snprintf(buf, len, "%s %s: %ld%s%s", k->method, k->path, r->status,
                 m ? ": " : "", m ? m : "");
        break;
    }
}

static void hc_done(void *ud, const ks_hc_result_t *r)
{
    ks_kube_call_t *k = ud;
    ks_kube_client_t *c = k->c;
    ks_kube_result_t res;
    char msg[2048] = "";
    k->req = NULL;
    if (r->status == 401 && !k->retried) {
        /* A rotated token or an expired exec credential: fetch anew and
         * try once more. */
        ks_error_t err = {0};
        k->retried = 1;
        ks_kube_conn_invalidate(c->conn);
        if (start(k, &err) == 0)
            return;
        snprintf(msg, sizeof msg, "%s %s: %.1024s", k->method, k->path, err.msg);
    }
    memset(&res, 0, sizeof res);
    res.status = r->curl_code != 0 && r->status < 400 && !k->watch ? 0
                                                                  : r->status;
    res.body = r->body;
    res.body_len = r->body_len;
    res.tls_error = r->tls_error;
    if (msg[0] == '\0' &&
        (r->curl_code != 0 || r->status >= 400 || r->status == 0))
        describe_failure(k, r, msg, sizeof msg);
    res.message = msg;
    call_unlink(k);
    if (k->on_done)
        k->on_done(k->ud, &res);
    call_free(k);
}

static int start(ks_kube_call_t *k, ks_error_t *err)
{
    ks_kube_client_t *c = k->c;
    ks_kube_cred_t cred;
    ks_hc_request_t r;
    ks_hc_tls_t tls;
    const char *hdr[4];
    char auth[8200], ctype[200], url[4096];
    size_t nh = 0;
    int n;
    if (ks_kube_conn_credentials(c->conn, &cred, err) != 0)
        return err ? err->code : KS_EAUTH;
    n = snprintf(url, sizeof url, "%s%s", c->server, k->path);
    if (n < 0 || (size_t)n >= sizeof url)
        return ks_error_set(err, KS_EINVAL, "URL too long: %s%s", c->server,
                            k->path);
    hdr[nh++] = "Accept: application/json";
    if (cred.authorization[0]) {
        snprintf(auth, sizeof auth, "Authorization: %s", cred.authorization);
        hdr[nh++] = auth;
    }
    if (k->body) {
        snprintf(ctype, sizeof ctype, "Content-Type: %s",
                 k->content_type ? k->content_type : "application/json");
        hdr[nh++] = ctype;
    }
    memset(&r, 0, sizeof r);
    r.method = k->method;
    r.url = url;
    r.headers = hdr;
    r.n_headers = nh;
    r.body = k->body;
    r.body_len = k->body ? strlen(k->body) : 0;
    r.timeout_ms = k->timeout_ms;
    r.low_speed_timeout_s = k->low_speed_timeout_s;
    r.no_rate_limit = k->watch;
    r.verb = k->verb;
    if (cred.cert_pem != NULL) {
        /* An exec plugin's client certificate replaces the static one. */
        memset(&tls, 0, sizeof tls);
        tls.ca_file = c->conn->ca_file;
        tls.ca_data = c->conn->ca_data;
        tls.ca_len = c->conn->ca_len;
        tls.insecure = c->conn->insecure;
        tls.server_name = c->conn->tls_server_name;
        tls.cert_data = cred.cert_pem;
        tls.cert_len = cred.cert_len;
        tls.key_data = cred.key_pem;
        tls.key_len = cred.key_len;
        r.tls = &tls;
    }
    r.on_data = k->on_data ? hc_data : NULL;
    r.on_done = hc_done;
    r.ud = k;
    k->req = ks_hc_start(c->hc, &r, err);
    return k->req ? 0 : (err ? err->code : KS_EHTTP);
}

/* A delayed call's time has come: send it, or report why it cannot be. */
static void delay_fire(uv_timer_t *t)
{
    ks_kube_call_t *k = t->data;
    ks_error_t err = {0};
    ks_kube_result_t res;
    char msg[sizeof err.msg + 600];
    if (start(k, &err) == 0)
        return;
    snprintf(msg, sizeof msg, "%s %s: %s", k->method, k->path, err.msg);
    memset(&res, 0, sizeof res);
    res.body = "";
    res.message = msg;
    call_unlink(k);
    if (k->on_done)
        k->on_done(k->ud, &res);
    call_free(k);
}

ks_kube_call_t *ks_kube_call(ks_kube_client_t *c, const ks_kube_call_opts_t *o,
                             ks_error_t *err)
{
    ks_kube_call_t *k = calloc(1, sizeof *k);
    if (k == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    k->c = c;
    k->method = strdup(o->method);
    k->path = strdup(o->path);
    k->verb = strdup(o->verb ? o->verb : o->method);
    if ((o->body && (k->body = strdup(o->body)) == NULL) ||
        (o->content_type &&
         (k->content_type = strdup(o->content_type)) == NULL) ||
        k->method == NULL || k->path == NULL || k->verb == NULL) {
        call_free(k);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    k->timeout_ms = o->timeout_ms;
    k->low_speed_timeout_s = o->low_speed_timeout_s;
    k->watch = o->watch;
    k->on_data = o->on_data;
    k->on_done = o->on_done;
    k->ud = o->ud;
    k->owner = o->owner;
    k->on_cancel = o->on_cancel;
    if (o->delay_ms > 0) {
        if (uv_timer_init(c->loop, &k->delay) != 0) {
            call_free(k);
            ks_error_set(err, KS_EINVAL, "%s %s: cannot arm a timer",
                         o->method, o->path);
            return NULL;
        }
        k->delay.data = k;
        k->delay_inited = 1;
    }
    k->next = c->calls;
    if (c->calls)
        c->calls->prev = k;
    c->calls = k;
    if (++c->n_calls > c->n_calls_max)
        c->n_calls_max = c->n_calls;
    if (k->delay_inited) {
        uv_timer_start(&k->delay, delay_fire, o->delay_ms, 0);
        return k;
    }
    if (start(k, err) != 0) {
        char m[sizeof err->msg];
        if (err) {
            snprintf(m, sizeof m, "%s", err->msg);
            ks_error_set(err, err->code, "%s %s: %s", o->method, o->path, m);
        }
        call_unlink(k);
        call_free(k);
        return NULL;
    }
    return k;
}

void ks_kube_call_cancel(ks_kube_call_t *k)
{
    if (k == NULL)
        return;
    if (k->req)
        ks_hc_cancel(k->req);
    call_unlink(k);
    call_free(k);
}

/* Unlink and free `k` (its request already gone or cancelled), letting
 * its owner free what ud holds. */
static void call_drop(ks_kube_call_t *k)
{
    void (*on_cancel)(void *) = k->on_cancel;
    void *ud = k->ud;
    call_unlink(k);
    call_free(k);
    if (on_cancel)
        on_cancel(ud);
}

void ks_kube_client_cancel_owner(ks_kube_client_t *c, const void *owner)
{
    ks_kube_call_t *k = c->calls;
    while (k) {
        ks_kube_call_t *next = k->next;
        if (owner != NULL && k->owner == owner) {
            if (k->req)
                ks_hc_cancel(k->req);
            call_drop(k);
            next = c->calls; /* on_cancel may have changed the list */
        }
        k = next;
    }
}

ks_kube_client_t *ks_kube_client_new(uv_loop_t *loop, ks_kube_conn_t *conn,
                                     const ks_kube_client_opts_t *o,
                                     ks_error_t *err)
{
    ks_kube_client_t *c = calloc(1, sizeof *c);
    ks_hc_opts_t ho;
    size_t n;
    if (c == NULL || (c->server = strdup(conn->server)) == NULL) {
        free(c);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    n = strlen(c->server);
    while (n > 0 && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    c->loop = loop;
    c->conn = conn;
    if (o)
        c->o = *o;
    memset(&ho, 0, sizeof ho);
    ho.qps = c->o.qps;
    ho.burst = c->o.burst;
    ho.user_agent = c->o.user_agent ? c->o.user_agent : "ksched";
    /* Every informer holds a watch; over HTTP/1.1 each needs its own
     * connection, so leave room for them and for writes. */
    ho.max_host_connections = 32;
    ho.max_running = c->o.max_running == 0   ? KS_KUBE_DEFAULT_MAX_RUNNING
                     : c->o.max_running < 0 ? 0
                                            : (size_t)c->o.max_running;
    ho.tls.ca_file = conn->ca_file;
    ho.tls.ca_data = conn->ca_data;
    ho.tls.ca_len = conn->ca_len;
    ho.tls.cert_file = conn->cert_file;
    ho.tls.cert_data = conn->cert_data;
    ho.tls.cert_len = conn->cert_len;
    ho.tls.key_file = conn->key_file;
    ho.tls.key_data = conn->key_data;
    ho.tls.key_len = conn->key_len;
    ho.tls.insecure = conn->insecure;
    ho.tls.server_name = conn->tls_server_name;
    ho.observe = observe_cb;
    ho.observe_ud = c;
    c->hc = ks_hc_new(loop, &ho, err);
    if (c->hc == NULL) {
        free(c->server);
        free(c);
        return NULL;
    }
    return c;
}

static void hc_closed(void *ud)
{
    ks_kube_client_t *c = ud;
    void (*closed)(void *) = c->closed;
    void *cud = c->closed_ud;
    free(c->server);
    free(c);
    if (closed)
        closed(cud);
}

void ks_kube_client_close(ks_kube_client_t *c, void (*closed)(void *ud),
                          void *ud)
{
    if (c == NULL)
        return;
    /* The HTTP client drops every request without callbacks. */
    while (c->calls) {
        ks_kube_call_t *k = c->calls;
        k->req = NULL;
        call_drop(k);
    }
    c->closed = closed;
    c->closed_ud = ud;
    ks_hc_close(c->hc, hc_closed, c);
}

const char *ks_kube_client_server(const ks_kube_client_t *c)
{
    return c->server;
}

size_t ks_kube_client_in_flight(const ks_kube_client_t *c)
{
    return c->n_calls;
}

size_t ks_kube_client_in_flight_max(const ks_kube_client_t *c)
{
    return c->n_calls_max;
}

char *ks_kube_query_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s), i, o = 0;
    char *out = malloc(n * 3 + 1);
    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
            ch == '.' || ch == '~') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    return out;
}
