/* Delegated authentication and authorization (see delegate.h). */
#include "delegate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "base/log.h"
#include "kube/client.h"
#include "ttl_cache.h"

/* Cached answers kept at most (each a few hundred bytes). */
#define CACHE_MAX 4096

struct ks_delegate_req {
    ks_delegate_t *d;
    ks_kube_call_t *call;
    ks_delegate_cb cb;
    void *ud;
    char *user_json; /* the reviewed user (authorization stage) */
    char user[256];
    char verb[16];
    char tkey[65];   /* the token's cache key */
    char *path;
    /* A request for ksched's views of API objects (/api/v1/...) is
     * reviewed as the same request to the API server: resource
     * attributes (res set), not the path. */
    int res;
    char res_verb[16], ns[64], resource[32], name[254];
    ks_delegate_req_t *prev, *next;
};

struct ks_delegate {
    uv_loop_t *loop;
    ks_kube_client_t *authn, *authz; /* authz may be authn */
    ks_ttl_cache_t *cache;
    int64_t authn_ttl, allow_ttl, deny_ttl;
    long timeout_ms;
    ks_delegate_req_t *pending;
    int closed;
};

static int64_t now_ms(const ks_delegate_t *d)
{
    return (int64_t)uv_now(d->loop);
}

/* Hex SHA-256 of "tag" and the parts (NUL-separated), into out[65]. */
static void digest_key(char out[65], const char *tag, const char *a,
                       const char *b, const char *c)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    const char *parts[4] = {tag, a, b, c};
    out[0] = '\0';
    if (m == NULL)
        return;
    if (EVP_DigestInit_ex(m, EVP_sha256(), NULL) == 1) {
        for (i = 0; i < 4; i++)
            if (parts[i])
                EVP_DigestUpdate(m, parts[i], strlen(parts[i]) + 1);
        if (EVP_DigestFinal_ex(m, md, &n) != 1)
            n = 0;
    }
    EVP_MD_CTX_free(m);
    for (i = 0; i < n && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void set_result(ks_delegate_result_t *r, int status, const char *user,
                       const char *fmt, const char *a, const char *b)
{
    memset(r, 0, sizeof *r);
    r->status = status;
    snprintf(r->user, sizeof r->user, "%s", user ? user : "");
    if (fmt)
        snprintf(r->message, sizeof r->message, fmt, a ? a : "",
                 b ? b : "");
}

static void req_unlink(ks_delegate_req_t *q)
{
    ks_delegate_t *d = q->d;
    if (q->prev)
        q->prev->next = q->next;
    else if (d->pending == q)
        d->pending = q->next;
    if (q->next)
        q->next->prev = q->prev;
    q->prev = q->next = NULL;
}

static void req_free(ks_delegate_req_t *q)
{
    free(q->user_json);
    free(q->path);
    free(q);
}

/* Hand the verdict over and forget the request. */
static void req_finish(ks_delegate_req_t *q, const ks_delegate_result_t *r)
{
    ks_delegate_cb cb = q->cb;
    void *ud = q->ud;
    req_unlink(q);
    req_free(q);
    cb(ud, r);
}

/* --- authorization ------------------------------------------------------ */

/* The segment of `p` up to the next '/' into buf (< len, non-empty); the
 * rest after it, or NULL. */
static const char *segment(const char *p, char *buf, size_t len, int *ok)
{
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    *ok = n > 0 && n < len;
    if (*ok) {
        memcpy(buf, p, n);
        buf[n] = '\0';
    }
    return e ? e + 1 : NULL;
}

/* /api/v1/RESOURCE[/NAME] or /api/v1/namespaces/NS/RESOURCE[/NAME], as
 * the API server's request info reads them: GET is get (one object) or
 * list, POST create, PUT update, PATCH patch, DELETE delete. ksched's bindings stream
 * (/api/v1/bindings) shows pods: it is reviewed as watching pods. */
static void resource_attrs(ks_delegate_req_t *q, const char *method)
{
    const char *p = q->path;
    char first[64];
    int ok;
    if (strncmp(p, "/api/v1/", 8) != 0)
        return;
    p = segment(p + 8, first, sizeof first, &ok);
    if (!ok)
        return;
    if (strcmp(first, "namespaces") == 0 && p) {
        p = segment(p, q->ns, sizeof q->ns, &ok);
        if (!ok || p == NULL)
            return;
        p = segment(p, q->resource, sizeof q->resource, &ok);
    } else {
        size_t n = strlen(first);
        ok = n < sizeof q->resource;
        if (ok)
            memcpy(q->resource, first, n + 1);
    }
    if (!ok)
        return;
    if (p && *p) {
        p = segment(p, q->name, sizeof q->name, &ok);
        if (!ok || (p && *p))
            return; /* a subresource: left to the path review */
    }
    if (strcmp(q->resource, "bindings") == 0 && q->ns[0] == '\0' &&
        q->name[0] == '\0') {
        snprintf(q->resource, sizeof q->resource, "pods");
        snprintf(q->res_verb, sizeof q->res_verb, "watch");
    } else if (strcmp(method, "GET") == 0) {
        snprintf(q->res_verb, sizeof q->res_verb, "%s",
                 q->name[0] ? "get" : "list");
    } else if (strcmp(method, "POST") == 0) {
        snprintf(q->res_verb, sizeof q->res_verb, "create");
    } else if (strcmp(method, "PUT") == 0) {
        snprintf(q->res_verb, sizeof q->res_verb, "update");
    } else if (strcmp(method, "DELETE") == 0) {
        snprintf(q->res_verb, sizeof q->res_verb, "delete");
    } else if (strcmp(method, "PATCH") == 0) {
        snprintf(q->res_verb, sizeof q->res_verb, "patch");
    } else {
        return;
    }
    q->res = 1;
}

/* The authorization cache's key: the user (as reviewed), verb, path. */
static void authz_key(char out[65], const char *user_json, const char *verb,
                      const char *path)
{
    digest_key(out, "authz", user_json, verb, path);
}

/* A cached authorization answer: "1" allowed, "0reason" denied. */
static int authz_cached(ks_delegate_t *d, const char *user,
                        const char *user_json, const char *verb,
                        const char *path, ks_delegate_result_t *res)
{
    char key[65];
    size_t len = 0;
    const char *v;
    authz_key(key, user_json, verb, path);
    v = ks_ttl_cache_get(d->cache, key, now_ms(d), &len);
    if (v == NULL || len == 0)
        return 0;
    if (v[0] == '1') {
        set_result(res, 200, user, NULL, NULL, NULL);
    } else {
        set_result(res, 403, user, "%s%s", NULL, NULL);
        snprintf(res->message, sizeof res->message, "%s", v + 1);
    }
    return 1;
}

/* Upstream's wording: forbidden: User "u" cannot get path "/metrics"[:
 * reason]. */
static void forbidden_message(char *buf, size_t len,
                              const ks_delegate_req_t *q, const char *reason)
{
    const char *sep = reason && reason[0] ? ": " : "";
    if (!reason)
        reason = "";
    if (!q->res) {
        snprintf(buf, len, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s",
                 q->user, q->verb, q->path, sep, reason);
        return;
    }
    /* pods "x" is forbidden: User "u" cannot get resource "pods" in API
     * group "" in the namespace "ns" (or: at the cluster scope) */
    snprintf(buf, len,
             "%s%s%s%s is forbidden: User \"%s\" cannot %s resource \"%s\" "
             "in API group \"\" %s%s%s%s%s",
             q->resource, q->name[0] ? " \"" : "", q->name,
             q->name[0] ? "\"" : "", q->user, q->res_verb, q->resource,
             q->ns[0] ? "in the namespace \"" : "at the cluster scope",
             q->ns, q->ns[0] ? "\"" : "", sep, reason);
}

static void sar_done(void *ud, const ks_kube_result_t *r)
{
    ks_delegate_req_t *q = ud;
    ks_delegate_t *d = q->d;
    ks_delegate_result_t res;
    json_t *doc = NULL, *st;
    q->call = NULL;
    if (r->status != 201 && r->status != 200) {
        ks_log(KS_LOGL_WARN, "delegated authorization: %s", r->message);
        set_result(&res, 500, q->user,
                   "Internal Server Error: \"%s\": authorization: %s",
                   q->path, r->message);
        req_finish(q, &res);
        return;
    }
    doc = json_loadb(r->body, r->body_len, 0, NULL);
    st = doc ? json_object_get(doc, "status") : NULL;
    if (!json_is_object(st)) {
        set_result(&res, 500, q->user,
                   "Internal Server Error: \"%s\": authorization: %s",
                   q->path, "a SubjectAccessReview without a status");
    } else {
        char key[65];
        const char *reason = json_string_value(json_object_get(st, "reason"));
        const char *eval =
            json_string_value(json_object_get(st, "evaluationError"));
        int allowed = json_is_true(json_object_get(st, "allowed")) &&
                      !json_is_true(json_object_get(st, "denied"));
        authz_key(key, q->user_json, q->verb, q->path);
        if (allowed) {
            set_result(&res, 200, q->user, NULL, NULL, NULL);
            ks_ttl_cache_put(d->cache, key, "1", 1, now_ms(d) + d->allow_ttl,
                             now_ms(d));
        } else {
            char msg[1400], val[sizeof msg + 1];
            if (eval && eval[0])
                ks_log(KS_LOGL_WARN, "delegated authorization of %s %s for "
                                     "%s: evaluation error: %s",
                       q->verb, q->path, q->user, eval);
            forbidden_message(msg, sizeof msg, q, reason);
            set_result(&res, 403, q->user, "%.590s%s", msg, NULL);
            snprintf(val, sizeof val, "0%s", msg);
            ks_ttl_cache_put(d->cache, key, val, strlen(val),
                             now_ms(d) + d->deny_ttl, now_ms(d));
        }
    }
    json_decref(doc);
    req_finish(q, &res);
}

static void call_cancelled(void *ud)
{
    (void)ud; /* the request is freed by whoever cancelled it */
}

/* Ask for a SubjectAccessReview. 0, or -1 with *res filled (500). */
static int sar_start(ks_delegate_req_t *q, ks_delegate_result_t *res)
{
    ks_delegate_t *d = q->d;
    json_t *user = json_loads(q->user_json, 0, NULL), *spec, *body;
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    char *text = NULL;
    const char *k;
    json_t *v;
    spec = json_object();
    if (user && spec) {
        /* TokenReview's user is {username, uid, groups, extra}; the
         * review's spec names the same as {user, uid, groups, extra}. */
        json_object_foreach(user, k, v)
        {
            if (strcmp(k, "username") == 0)
                json_object_set(spec, "user", v);
            else if (strcmp(k, "uid") == 0 || strcmp(k, "groups") == 0 ||
                     strcmp(k, "extra") == 0)
                json_object_set(spec, k, v);
        }
        if (q->res) {
            json_t *ra = json_pack("{s:s, s:s, s:s, s:s}", "verb",
                                   q->res_verb, "group", "", "version", "v1",
                                   "resource", q->resource);
            if (ra && q->ns[0])
                json_object_set_new(ra, "namespace", json_string(q->ns));
            if (ra && q->name[0])
                json_object_set_new(ra, "name", json_string(q->name));
            json_object_set_new(spec, "resourceAttributes", ra);
        } else {
            json_object_set_new(spec, "nonResourceAttributes",
                                json_pack("{s:s, s:s}", "path", q->path,
                                          "verb", q->verb));
        }
    }
    body = spec ? json_pack("{s:s, s:s, s:o}", "apiVersion",
                            "authorization.k8s.io/v1", "kind",
                            "SubjectAccessReview", "spec", spec)
                : NULL;
    if (body)
        text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    json_decref(user);
    if (text == NULL) {
        set_result(res, 500, q->user, "Internal Server Error: %s%s",
                   "out of memory", NULL);
        return -1;
    }
    memset(&o, 0, sizeof o);
    o.method = "POST";
    o.path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    o.body = text;
    o.timeout_ms = d->timeout_ms;
    o.verb = "POST";
    o.on_done = sar_done;
    o.on_cancel = call_cancelled;
    o.ud = q;
    q->call = ks_kube_call(d->authz, &o, &err);
    free(text);
    if (q->call == NULL) {
        set_result(res, 500, q->user,
                   "Internal Server Error: authorization: %.400s%s", err.msg,
                   NULL);
        return -1;
    }
    return 0;
}

/* --- authentication ----------------------------------------------------- */

static void tr_done(void *ud, const ks_kube_result_t *r)
{
    ks_delegate_req_t *q = ud;
    ks_delegate_t *d = q->d;
    ks_delegate_result_t res;
    json_t *doc = NULL, *st, *user;
    const char *name = NULL;
    char *val = NULL;
    q->call = NULL;
    if (r->status != 201 && r->status != 200) {
        /* Upstream: an authentication error is a 401 (and a log line). */
        ks_log(KS_LOGL_WARN, "delegated authentication: %s", r->message);
        set_result(&res, 401, NULL, "Unauthorized: %s%s", r->message, NULL);
        req_finish(q, &res);
        return;
    }
    doc = json_loadb(r->body, r->body_len, 0, NULL);
    st = doc ? json_object_get(doc, "status") : NULL;
    user = json_object_get(st, "user");
    name = json_string_value(json_object_get(user, "username"));
    if (!json_is_true(json_object_get(st, "authenticated")) ||
        name == NULL || name[0] == '\0') {
        const char *why = json_string_value(json_object_get(st, "error"));
        size_t n;
        set_result(&res, 401, NULL, "Unauthorized%s%s", why ? ": " : "",
                   why);
        n = strlen(res.message) + 2;
        if ((val = malloc(n)) != NULL) {
            snprintf(val, n, "0%s", res.message);
            ks_ttl_cache_put(d->cache, q->tkey, val, strlen(val),
                             now_ms(d) + d->authn_ttl, now_ms(d));
        }
        free(val);
        json_decref(doc);
        req_finish(q, &res);
        return;
    }
    snprintf(q->user, sizeof q->user, "%s", name);
    q->user_json = json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    if (q->user_json == NULL) {
        set_result(&res, 500, q->user, "Internal Server Error: %s%s",
                   "out of memory", NULL);
        req_finish(q, &res);
        return;
    }
    {
        size_t n = strlen(q->user_json) + 2;
        if ((val = malloc(n)) != NULL) {
            snprintf(val, n, "1%s", q->user_json);
            ks_ttl_cache_put(d->cache, q->tkey, val, strlen(val),
                             now_ms(d) + d->authn_ttl, now_ms(d));
            free(val);
        }
    }
    if (authz_cached(d, q->user, q->user_json, q->verb, q->path, &res) ||
        sar_start(q, &res) != 0)
        req_finish(q, &res);
}

static int tr_start(ks_delegate_req_t *q, const char *token,
                    ks_delegate_result_t *res)
{
    ks_delegate_t *d = q->d;
    json_t *body = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
                             "authentication.k8s.io/v1", "kind",
                             "TokenReview", "spec", "token", token);
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        set_result(res, 500, NULL, "Internal Server Error: %s%s",
                   "out of memory", NULL);
        return -1;
    }
    memset(&o, 0, sizeof o);
    o.method = "POST";
    o.path = "/apis/authentication.k8s.io/v1/tokenreviews";
    o.body = text;
    o.timeout_ms = d->timeout_ms;
    o.verb = "POST";
    o.on_done = tr_done;
    o.on_cancel = call_cancelled;
    o.ud = q;
    q->call = ks_kube_call(d->authn, &o, &err);
    /* The body held the token: wiped before it is freed. */
    {
        volatile char *p = text;
        size_t i, n = strlen(text);
        for (i = 0; i < n; i++)
            p[i] = 0;
    }
    free(text);
    if (q->call == NULL) {
        ks_log(KS_LOGL_WARN, "delegated authentication: %s", err.msg);
        set_result(res, 401, NULL, "Unauthorized: %.400s%s", err.msg, NULL);
        return -1;
    }
    return 0;
}

/* --- the check ------------------------------------------------------------ */

/* The token of "Bearer TOKEN" (scheme in any case), or NULL. */
static const char *bearer_token(const char *authorization, char *buf,
                                size_t len)
{
    const char *p = authorization, *e;
    if (p == NULL)
        return NULL;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncasecmp(p, "bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
        return NULL;
    p += 6;
    while (*p == ' ' || *p == '\t')
        p++;
    e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (e == p || (size_t)(e - p) >= len)
        return NULL;
    memcpy(buf, p, (size_t)(e - p));
    buf[e - p] = '\0';
    return buf;
}

int ks_delegate_check(ks_delegate_t *d, const char *authorization,
                      const char *method, const char *path,
                      ks_delegate_result_t *res, ks_delegate_cb cb, void *ud,
                      ks_delegate_req_t **pending)
{
    char tok[1100], verb[16];
    const char *token = bearer_token(authorization, tok, sizeof tok);
    const char *cached;
    size_t i, len = 0;
    ks_delegate_req_t *q;
    int rc = 0;
    *pending = NULL;
    if (d->closed) {
        set_result(res, 503, NULL, "the server is shutting down%s%s", NULL,
                   NULL);
        return 0;
    }
    if (token == NULL) {
        set_result(res, 401, NULL, "Unauthorized%s%s", NULL, NULL);
        return 0;
    }
    for (i = 0; method[i] && i + 1 < sizeof verb; i++)
        verb[i] = (char)tolower((unsigned char)method[i]);
    verb[i] = '\0';
    q = calloc(1, sizeof *q);
    if (q == NULL || (q->path = strdup(path)) == NULL) {
        free(q);
        set_result(res, 500, NULL, "Internal Server Error: %s%s",
                   "out of memory", NULL);
        return 0;
    }
    q->d = d;
    q->cb = cb;
    q->ud = ud;
    snprintf(q->verb, sizeof q->verb, "%s", verb);
    resource_attrs(q, method);
    digest_key(q->tkey, "authn", token, NULL, NULL);
    cached = ks_ttl_cache_get(d->cache, q->tkey, now_ms(d), &len);
    if (cached && len > 0 && cached[0] == '0') {
        set_result(res, 401, NULL, "%s%s", cached + 1, NULL);
        rc = 0;
    } else if (cached && len > 0) {
        json_t *u = json_loads(cached + 1, 0, NULL);
        snprintf(q->user, sizeof q->user, "%s",
                 u ? json_string_value(json_object_get(u, "username")) ?
                         json_string_value(json_object_get(u, "username")) :
                         ""
                   : "");
        json_decref(u);
        q->user_json = strdup(cached + 1);
        if (q->user_json == NULL) {
            set_result(res, 500, NULL, "Internal Server Error: %s%s",
                       "out of memory", NULL);
            rc = 0;
        } else if (authz_cached(d, q->user, q->user_json, q->verb, q->path,
                                res)) {
            rc = 0;
        } else {
            rc = sar_start(q, res) == 0 ? 1 : 0;
        }
    } else {
        rc = tr_start(q, token, res) == 0 ? 1 : 0;
    }
    {
        volatile char *p = tok;
        for (i = 0; i < sizeof tok; i++)
            p[i] = 0;
    }
    if (rc == 0) {
        req_free(q);
        return 0;
    }
    q->next = d->pending;
    if (d->pending)
        d->pending->prev = q;
    d->pending = q;
    *pending = q;
    return 1;
}

void ks_delegate_cancel(ks_delegate_req_t *q)
{
    if (q == NULL)
        return;
    if (q->call)
        ks_kube_call_cancel(q->call);
    req_unlink(q);
    req_free(q);
}

/* --- lifetime ---------------------------------------------------------- */

ks_delegate_t *ks_delegate_new(uv_loop_t *loop, const ks_delegate_opts_t *o,
                               ks_error_t *err)
{
    ks_delegate_t *d = calloc(1, sizeof *d);
    ks_kube_client_opts_t co;
    if (d == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    d->loop = loop;
    d->authn_ttl = o->authn_ttl_ms ? o->authn_ttl_ms : KS_DELEGATE_AUTHN_TTL_MS;
    d->allow_ttl = o->allow_ttl_ms ? o->allow_ttl_ms : KS_DELEGATE_ALLOW_TTL_MS;
    d->deny_ttl = o->deny_ttl_ms ? o->deny_ttl_ms : KS_DELEGATE_DENY_TTL_MS;
    d->timeout_ms = o->timeout_ms ? o->timeout_ms : KS_DELEGATE_TIMEOUT_MS;
    memset(&co, 0, sizeof co);
    co.qps = 200;
    co.burst = 400;
    co.user_agent = "ksched/" KS_VERSION " (delegated auth)";
    if ((d->cache = ks_ttl_cache_new(CACHE_MAX)) == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        free(d);
        return NULL;
    }
    d->authn = ks_kube_client_new(loop, o->authn, &co, err);
    if (d->authn && o->authz != o->authn)
        d->authz = ks_kube_client_new(loop, o->authz, &co, err);
    else
        d->authz = d->authn;
    if (d->authn == NULL || d->authz == NULL) {
        /* A client made is closed (it frees itself once the loop has
         * closed its handles; nothing of it points here). */
        ks_delegate_close(d);
        ks_ttl_cache_free(d->cache);
        free(d);
        return NULL;
    }
    return d;
}

void ks_delegate_close(ks_delegate_t *d)
{
    ks_delegate_result_t res;
    if (d == NULL || d->closed)
        return;
    d->closed = 1;
    set_result(&res, 503, NULL, "the server is shutting down%s%s", NULL,
               NULL);
    while (d->pending) {
        ks_delegate_req_t *q = d->pending;
        if (q->call)
            ks_kube_call_cancel(q->call);
        q->call = NULL;
        req_finish(q, &res);
    }
    if (d->authz && d->authz != d->authn)
        ks_kube_client_close(d->authz, NULL, NULL);
    if (d->authn)
        ks_kube_client_close(d->authn, NULL, NULL);
    d->authn = d->authz = NULL;
}

void ks_delegate_free(ks_delegate_t *d)
{
    if (d == NULL)
        return;
    ks_delegate_close(d);
    ks_ttl_cache_free(d->cache);
    free(d);
}

size_t ks_delegate_cached(const ks_delegate_t *d)
{
    return ks_ttl_cache_count(d->cache);
}
