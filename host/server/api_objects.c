/* The declared resources served by the embedded API (api_objects.h). */
#include "api_objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "api.h"
#include "base/rand.h"
#include "cluster/object_store.h"
#include "cluster/objects_json.h"
#include "cluster/validate.h"
#include "framework/cluster_event.h"
#include "journal.h"
#include "json_patch.h"
#include "label_query.h"
#include "merge_patch.h"

#define SEG_MAX 8
#define NAME_MAX_LEN 253

/* What a path names. */
typedef struct target {
    ks_store_t *store;
    const ks_resource_ref_t *ref;
    char api_version[300]; /* "v1", "storage.k8s.io/v1" */
    char qualified[300];   /* "persistentvolumeclaims",
                            * "storageclasses.storage.k8s.io" */
    char ns[NAME_MAX_LEN + 1];
    char name[NAME_MAX_LEN + 1];
    int ns_form;    /* the URL had /namespaces/NS/ */
    int has_name;
    int status_sub; /* .../NAME/status */
    int cluster;    /* the resource is cluster-scoped (after scope_of) */
} target_t;

/* --- answers ------------------------------------------------------------- */

static void answer_text(ks_obj_answer_t *a, int status, char *text)
{
    a->status = text ? status : 500;
    a->body = text;
    a->len = text ? strlen(text) : 0;
}

/* Answer `doc` (the reference is taken). */
static void answer_json(ks_obj_answer_t *a, int status, json_t *doc)
{
    answer_text(a, status, doc ? json_dumps(doc, JSON_COMPACT) : NULL);
    json_decref(doc);
}

/* A Status failure; details name the object when t is not NULL. */
static void answer_status(ks_obj_answer_t *a, int code, const char *reason,
                          const target_t *t, const char *name,
                          const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void answer_status(ks_obj_answer_t *a, int code, const char *reason,
                          const target_t *t, const char *name,
                          const char *fmt, ...)
{
    char raw[KS_ERROR_MSG_MAX + 512], msg[sizeof raw * 4], qn[1024];
    json_t *st, *d;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ks_api_utf8_escape(raw, msg, sizeof msg);
    st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status",
                   "apiVersion", "v1", "metadata", "status", "Failure",
                   "message", msg, "reason", reason, "code", code);
    if (st && t) {
        d = json_object();
        if (name) {
            ks_api_utf8_escape(name, qn, sizeof qn);
            json_object_set_new(d, "name", json_string(qn));
        }
        if (t->ref->group[0])
            json_object_set_new(d, "group", json_string(t->ref->group));
        json_object_set_new(d, "kind", json_string(t->ref->resource));
        json_object_set_new(st, "details", d);
    }
    answer_json(a, code, st);
}

void ks_objects_status(ks_obj_answer_t *ans, int code, const char *reason,
                       const char *message)
{
    memset(ans, 0, sizeof *ans);
    answer_status(ans, code, reason, NULL, NULL, "%s", message);
}

static void not_found(ks_obj_answer_t *a, const target_t *t)
{
    answer_status(a, 404, "NotFound", t, t->name, "%s \"%s\" not found",
                  t->qualified, t->name);
}

static void conflict_modified(ks_obj_answer_t *a, const target_t *t)
{
    answer_status(a, 409, "Conflict", t, t->name,
                  "Operation cannot be fulfilled on %s \"%s\": the object "
                  "has been modified; please apply your changes to the "
                  "latest version and try again",
                  t->qualified, t->name);
}

/* --- paths and scope ----------------------------------------------------- */

/* Resources of the built-in groups that are cluster-scoped (the rest of
 * those groups are namespaced). */
static const struct {
    const char *group, *resource;
} cluster_scoped[] = {
    {"", "persistentvolumes"},
    {"", "nodes"},
    {"", "namespaces"},
    {"", "componentstatuses"},
    {"storage.k8s.io", "storageclasses"},
    {"storage.k8s.io", "csinodes"},
    {"storage.k8s.io", "csidrivers"},
    {"storage.k8s.io", "volumeattachments"},
    {"storage.k8s.io", "volumeattributesclasses"},
    {"scheduling.k8s.io", "priorityclasses"},
    {"node.k8s.io", "runtimeclasses"},
    {"rbac.authorization.k8s.io", "clusterroles"},
    {"rbac.authorization.k8s.io", "clusterrolebindings"},
    {"apiextensions.k8s.io", "customresourcedefinitions"},
    {"apiregistration.k8s.io", "apiservices"},
    {"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
    {"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
    {"certificates.k8s.io", "certificatesigningrequests"},
    {"flowcontrol.apiserver.k8s.io", "flowschemas"},
    {"flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"},
    {"networking.k8s.io", "ingressclasses"},
    {"resource.k8s.io", "deviceclasses"},
    {"resource.k8s.io", "resourceslices"},
};

/* The groups whose scopes the table above decides. */
static int builtin_group(const char *g)
{
    static const char *const plain[] = {"",       "apps",        "batch",
                                        "policy", "autoscaling", "extensions"};
    size_t i, n = strlen(g);
    for (i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strcmp(g, plain[i]) == 0)
            return 1;
    return n > 8 && strcmp(g + n - 8, ".k8s.io") == 0;
}

static int first_obj(const ks_object_t *o, void *ud)
{
    *(const ks_object_t **)ud = o;
    return 1;
}

/* 1 cluster-scoped, 0 namespaced, -1 not known yet (a custom resource
 * with no object). */
static int scope_of(const ks_store_t *s, const ks_resource_ref_t *r)
{
    const ks_object_t *o = NULL;
    size_t i;
    if (builtin_group(r->group)) {
        for (i = 0; i < sizeof cluster_scoped / sizeof cluster_scoped[0]; i++)
            if (strcmp(r->group, cluster_scoped[i].group) == 0 &&
                strcmp(r->resource, cluster_scoped[i].resource) == 0)
                return 1;
        return 0;
    }
    ks_store_list(s, NULL, NULL, first_obj, &o);
    if (o == NULL)
        return -1;
    return o->ns[0] == '\0';
}

static int copy_seg(char *dst, size_t len, const char *seg)
{
    if (strlen(seg) >= len)
        return -1;
    memcpy(dst, seg, strlen(seg) + 1);
    return 0;
}

/* Parse `path` into t. 1 when it names a store; 0 when not. */
static int parse_path(const char *path, target_t *t)
{
    char buf[2048], *seg[SEG_MAX + 1], *p;
    size_t n = 0, i;
    const char *group, *version;
    memset(t, 0, sizeof *t);
    if (strlen(path) >= sizeof buf || path[0] != '/')
        return 0;
    memcpy(buf, path, strlen(path) + 1);
    p = buf + 1;
    while (*p) {
        char *e = strchr(p, '/');
        if (n == SEG_MAX)
            return 0;
        seg[n++] = p;
        if (e == NULL)
            break;
        *e = '\0';
        p = e + 1;
        if (*p == '\0')
            break; /* one trailing slash */
    }
    for (i = 0; i < n; i++)
        if (seg[i][0] == '\0')
            return 0;
    if (n >= 3 && strcmp(seg[0], "api") == 0) {
        group = "";
        version = seg[1];
        i = 2;
    } else if (n >= 4 && strcmp(seg[0], "apis") == 0) {
        group = seg[1];
        version = seg[2];
        i = 3;
    } else {
        return 0;
    }
    if (n - i >= 3 && strcmp(seg[i], "namespaces") == 0) {
        if (copy_seg(t->ns, sizeof t->ns, seg[i + 1]) != 0)
            return 0;
        t->ns_form = 1;
        i += 2;
    }
    /* RESOURCE [NAME [status]] */
    if (n - i > 3 || (n - i == 3 && strcmp(seg[i + 2], "status") != 0))
        return 0;
    if (group[0] == '\0' &&
        (strcmp(seg[i], "pods") == 0 || strcmp(seg[i], "bindings") == 0 ||
         strcmp(seg[i], "nodes") == 0))
        return 0;
    if ((t->store = ks_store_find(group, version, seg[i])) == NULL)
        return 0;
    t->ref = ks_store_ref(t->store);
    if (n - i >= 2) {
        if (copy_seg(t->name, sizeof t->name, seg[i + 1]) != 0)
            return 0;
        t->has_name = 1;
        t->status_sub = n - i == 3;
    }
    if (group[0])
        snprintf(t->api_version, sizeof t->api_version, "%s/%s", group,
                 version);
    else
        snprintf(t->api_version, sizeof t->api_version, "%s", version);
    if (group[0])
        snprintf(t->qualified, sizeof t->qualified, "%s.%s",
                 t->ref->resource, group);
    else
        snprintf(t->qualified, sizeof t->qualified, "%s", t->ref->resource);
    return 1;
}

void ks_objects_gvr(const ks_store_t *s, char *buf, size_t len)
{
    const ks_resource_ref_t *r = ks_store_ref(s);
    if (r->group[0])
        snprintf(buf, len, "%s/%s/%s", r->group, r->version, r->resource);
    else
        snprintf(buf, len, "%s/%s", r->version, r->resource);
}

/* --- object helpers ------------------------------------------------------ */

static const char *md_str(const json_t *doc, const char *key)
{
    const json_t *v =
        json_object_get(json_object_get(doc, "metadata"), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void md_set(json_t *doc, const char *key, const char *val)
{
    json_t *md = json_object_get(doc, "metadata");
    if (val)
        json_object_set_new(md, key, json_string(val));
    else
        json_object_del(md, key);
}

static const char *obj_md(const ks_object_t *o, const char *key)
{
    const ks_otree_t *t = o->tree;
    const ks_onode_t *md = ks_onode_get(t, ks_otree_root(t), "metadata");
    const ks_onode_t *v = ks_onode_get(t, md, key);
    return v && v->type == KS_ON_STRING ? ks_onode_str(t, v) : NULL;
}

static void gen_uid(char *out, size_t len)
{
    static uint64_t state;
    uint64_t a, b;
    if (state == 0)
        state = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    a = ks_rand_next(&state);
    b = ks_rand_next(&state);
    /* version 4, variant 10 */
    snprintf(out, len, "%08x-%04x-4%03x-%04x-%012llx",
             (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xffff),
             (unsigned)(a & 0xfff), (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
             (unsigned long long)(b & 0xffffffffffffull));
}

static void now_rfc3339(char *out, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The next resourceVersion, as text. */
static void next_rv(ks_server_t *srv, char *out, size_t len)
{
    snprintf(out, len, "%llu", (unsigned long long)++srv->object_rv);
}

static int json_depth_ok(const char *body, size_t len, size_t *at)
{
    return ks_api_json_depth(body, len, at) <= KS_JSON_MAX_DEPTH;
}

/* Parse a body that must be a JSON object (a JSON array with `array`);
 * NULL after answering 400. */
static json_t *parse_body(ks_obj_answer_t *a, const target_t *t,
                          const char *body, size_t len, const char *what,
                          int array)
{
    json_error_t je;
    json_t *doc;
    size_t at = 0;
    if (!json_depth_ok(body, len, &at)) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "json parse error: nested more than %d levels deep at "
                      "position %zu",
                      KS_JSON_MAX_DEPTH, at);
        return NULL;
    }
    doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "json parse error: %s at line %d, column %d "
                      "(position %d)",
                      je.text, je.line, je.column, je.position);
        return NULL;
    }
    if (array ? !json_is_array(doc) : !json_is_object(doc)) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "the %s must be a JSON %s", what,
                      array ? "array" : "object");
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* doc with kind and apiVersion set to the store's and first, as the API
 * server writes them (the reference is taken; a new one returned, NULL
 * when out of memory). */
static json_t *with_type(json_t *doc, const target_t *t)
{
    json_t *out = json_pack("{s:s, s:s}", "kind", t->ref->kind, "apiVersion",
                            t->api_version), *v;
    const char *k;
    if (out == NULL) {
        json_decref(doc);
        return NULL;
    }
    json_object_foreach(doc, k, v) {
        if (strcmp(k, "kind") && strcmp(k, "apiVersion"))
            json_object_set(out, k, v);
    }
    json_decref(doc);
    return out;
}

static json_t *parse_object(ks_obj_answer_t *a, const target_t *t,
                            const char *body, size_t len, const char *what)
{
    return parse_body(a, t, body, len, what, 0);
}

/* Decode a create or replace body: an object of the store's kind and
 * apiVersion (either may be left out) with an object metadata. */
static json_t *decode(ks_obj_answer_t *a, const target_t *t, const char *body,
                      size_t len)
{
    json_t *doc = parse_object(a, t, body, len, "request body"), *v;
    if (doc == NULL)
        return NULL;
    v = json_object_get(doc, "kind");
    if (v && (!json_is_string(v) ||
              strcmp(json_string_value(v), t->ref->kind) != 0)) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "the kind in the body (%.200s) does not match the kind "
                      "of the resource (%s: %s)",
                      json_is_string(v) ? json_string_value(v) : "?",
                      t->qualified, t->ref->kind);
        json_decref(doc);
        return NULL;
    }
    v = json_object_get(doc, "apiVersion");
    if (v && (!json_is_string(v) ||
              strcmp(json_string_value(v), t->api_version) != 0)) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "the API version in the data (%.200s) does not match "
                      "the expected API version (%s)",
                      json_is_string(v) ? json_string_value(v) : "?",
                      t->api_version);
        json_decref(doc);
        return NULL;
    }
    v = json_object_get(doc, "metadata");
    if (v == NULL)
        json_object_set_new(doc, "metadata", json_object());
    else if (!json_is_object(v)) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "metadata must be an object");
        json_decref(doc);
        return NULL;
    }
    return with_type(doc, t);
}

/* Path segment names (apimachinery's IsValidPathSegmentName). 0 or an
 * answered 422. */
static int name_ok(ks_obj_answer_t *a, const target_t *t, const char *name)
{
    char q[600];
    const char *why = NULL;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        why = "may not be '.' or '..'";
    else if (strchr(name, '/'))
        why = "may not contain '/'";
    else if (strchr(name, '%'))
        why = "may not contain '%'";
    else if (strlen(name) > NAME_MAX_LEN)
        why = "must be no more than 253 characters";
    if (why == NULL)
        return 0;
    answer_status(a, 422, "Invalid", t, name,
                  "%s %s is invalid: metadata.name: Invalid value: %s: %s",
                  t->ref->kind, ks_validate_quote(name, q, sizeof q),
                  ks_validate_quote(name, q, sizeof q), why);
    return -1;
}

/* The namespace of the object: the URL's for a namespaced resource (a
 * different one in the body is 400), none for a cluster-scoped one. */
static int fix_namespace(ks_obj_answer_t *a, const target_t *t, json_t *doc)
{
    const char *bns = md_str(doc, "namespace");
    char why[1024], q[600];
    json_t *v = json_object_get(json_object_get(doc, "metadata"),
                                "namespace");
    if (t->cluster) {
        md_set(doc, "namespace", NULL);
        return 0;
    }
    if ((v && !json_is_string(v)) || (bns && bns[0] && strcmp(bns, t->ns))) {
        answer_status(a, 400, "BadRequest", t, NULL,
                      "the namespace of the provided object (%s) does not "
                      "match the namespace sent on the request (%s)",
                      bns ? bns : "?", t->ns);
        return -1;
    }
    if (ks_validate_dns1123_label(t->ns, why, sizeof why) != 0) {
        answer_status(a, 422, "Invalid", t, NULL,
                      "%s is invalid: metadata.namespace: Invalid value: "
                      "%s: %s",
                      t->ref->kind, ks_validate_quote(t->ns, q, sizeof q),
                      why);
        return -1;
    }
    md_set(doc, "namespace", t->ns);
    return 0;
}

/* Store `doc` (kept by the caller), journal it, make the cluster event and
 * answer it with `status`. */
static void commit(ks_server_t *srv, const target_t *t, json_t *doc,
                   int status, ks_obj_answer_t *a)
{
    ks_object_t *old = NULL;
    const ks_object_t *n;
    ks_error_t err;
    char gvr[600];
    ks_error_init(&err);
    json_incref(doc);
    if (ks_store_replace(t->store, doc, t->qualified, &old, &err) != 0) {
        answer_status(a, err.code == KS_ENOMEM ? 500 : 422,
                      err.code == KS_ENOMEM ? "InternalError" : "Invalid", t,
                      t->name, "%s", err.msg);
        return;
    }
    ks_objects_gvr(t->store, gvr, sizeof gvr);
    ks_journal_object_put(srv, gvr, doc);
    n = ks_store_get(t->store, t->cluster ? "" : t->ns, t->name);
    if (srv->sched && n)
        ks_scheduler_on_cluster_event(srv->sched,
                                      ks_cluster_event_object(old, n), old, n);
    ks_object_free(old);
    answer_json(a, status, json_incref(doc));
}

/* --- verbs ------------------------------------------------------------- */

typedef struct listed {
    const ks_object_t **v;
    size_t n, cap;
    int oom;
} listed_t;

static int collect(const ks_object_t *o, void *ud)
{
    listed_t *l = ud;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        const ks_object_t **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            l->oom = 1;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = o;
    return 0;
}

static int cmp_obj(const void *x, const void *y)
{
    const ks_object_t *a = *(const ks_object_t *const *)x;
    const ks_object_t *b = *(const ks_object_t *const *)y;
    int c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

static void do_list(ks_server_t *srv, const target_t *t, const char *query,
                    ks_obj_answer_t *a)
{
    listed_t l = {NULL, 0, 0, 0};
    json_t *items, *doc;
    char rv[32], kind[300], err[600];
    char *text = ks_query_value(query, "labelSelector");
    ks_label_query_t lq;
    size_t i;
    if (ks_label_query_parse(text ? text : "", &lq, err, sizeof err) != 0) {
        free(text);
        answer_status(a, 400, "BadRequest", NULL, NULL, "%s", err);
        return;
    }
    free(text);
    ks_store_list(t->store, t->ns_form ? t->ns : NULL, &lq.sel, collect, &l);
    ks_label_query_free(&lq);
    items = json_array();
    if (l.oom || items == NULL) {
        free(l.v);
        json_decref(items);
        answer_status(a, 500, "InternalError", t, NULL, "out of memory");
        return;
    }
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, cmp_obj);
    for (i = 0; i < l.n; i++)
        json_array_append_new(items, ks_otree_to_json(l.v[i]->tree));
    free(l.v);
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)srv->object_rv);
    snprintf(kind, sizeof kind, "%sList", t->ref->kind);
    doc = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "apiVersion",
                    t->api_version, "metadata", "resourceVersion", rv,
                    "items", items);
    answer_json(a, 200, doc);
}

static void do_create(ks_server_t *srv, target_t *t, const char *body,
                      size_t len, ks_obj_answer_t *a)
{
    json_t *doc = decode(a, t, body, len);
    const char *name, *gen;
    char buf[NAME_MAX_LEN + 1], uid[40], ts[32], rv[32];
    if (doc == NULL)
        return;
    name = md_str(doc, "name");
    gen = md_str(doc, "generateName");
    if ((name == NULL || name[0] == '\0') && gen && gen[0]) {
        uint64_t r = uv_hrtime() ^ srv->object_rv * 0x9e3779b97f4a7c15ull;
        static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
        size_t i, gl = strlen(gen) > NAME_MAX_LEN - 5 ? NAME_MAX_LEN - 5
                                                      : strlen(gen);
        memcpy(buf, gen, gl);
        for (i = 0; i < 5; i++)
            buf[gl + i] = alnum[ks_rand_next(&r) % (sizeof alnum - 1)];
        buf[gl + 5] = '\0';
        md_set(doc, "name", buf);
        name = md_str(doc, "name");
    }
    if (name == NULL || name[0] == '\0') {
        answer_status(a, 422, "Invalid", t, "",
                      "%s \"\" is invalid: metadata.name: Required value: "
                      "name or generateName is required",
                      t->ref->kind);
        json_decref(doc);
        return;
    }
    if (name_ok(a, t, name) != 0) {
        json_decref(doc);
        return;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    if (fix_namespace(a, t, doc) != 0) {
        json_decref(doc);
        return;
    }
    if (ks_store_get(t->store, t->cluster ? "" : t->ns, t->name) != NULL) {
        answer_status(a, 409, "AlreadyExists", t, t->name,
                      "%s \"%s\" already exists", t->qualified, t->name);
        json_decref(doc);
        return;
    }
    if (md_str(doc, "uid") == NULL || md_str(doc, "uid")[0] == '\0') {
        gen_uid(uid, sizeof uid);
        md_set(doc, "uid", uid);
    }
    if (md_str(doc, "creationTimestamp") == NULL) {
        now_rfc3339(ts, sizeof ts);
        md_set(doc, "creationTimestamp", ts);
    }
    next_rv(srv, rv, sizeof rv);
    md_set(doc, "resourceVersion", rv);
    commit(srv, t, doc, 201, a);
    json_decref(doc);
}

/* The stored object's uid and creationTimestamp onto doc, and a new
 * resourceVersion. */
static void carry_meta(ks_server_t *srv, const ks_object_t *cur, json_t *doc)
{
    char rv[32];
    const char *ts = obj_md(cur, "creationTimestamp");
    md_set(doc, "uid", cur->uid[0] ? cur->uid : NULL);
    if (ts)
        md_set(doc, "creationTimestamp", ts);
    next_rv(srv, rv, sizeof rv);
    md_set(doc, "resourceVersion", rv);
}

/* A resourceVersion that must be the stored one's (NULL or "": none). */
static int rv_matches(const ks_object_t *cur, const char *rv)
{
    const char *have = obj_md(cur, "resourceVersion");
    return rv == NULL || rv[0] == '\0' ||
           (have != NULL && strcmp(have, rv) == 0);
}

static void do_replace(ks_server_t *srv, target_t *t, const char *body,
                       size_t len, ks_obj_answer_t *a)
{
    json_t *doc = decode(a, t, body, len);
    const ks_object_t *cur;
    const char *name;
    if (doc == NULL)
        return;
    name = md_str(doc, "name");
    if (name == NULL || name[0] == '\0') {
        md_set(doc, "name", t->name);
    } else if (strcmp(name, t->name) != 0) {
        answer_status(a, 400, "BadRequest", t, t->name,
                      "the name of the object (%s) does not match the name "
                      "on the URL (%s)",
                      name, t->name);
        json_decref(doc);
        return;
    }
    if (fix_namespace(a, t, doc) != 0) {
        json_decref(doc);
        return;
    }
    if ((cur = ks_store_get(t->store, t->cluster ? "" : t->ns, t->name)) ==
        NULL) {
        not_found(a, t);
        json_decref(doc);
        return;
    }
    if (!rv_matches(cur, md_str(doc, "resourceVersion"))) {
        conflict_modified(a, t);
        json_decref(doc);
        return;
    }
    carry_meta(srv, cur, doc);
    commit(srv, t, doc, 200, a);
    json_decref(doc);
}

/* The media type without parameters is `want`. */
static int media_is(const char *ct, const char *want)
{
    size_t n = strlen(want);
    if (ct == NULL || strncmp(ct, want, n) != 0)
        return 0;
    return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

static void do_patch(ks_server_t *srv, target_t *t, const char *ctype,
                     const char *body, size_t len, ks_obj_answer_t *a)
{
    const ks_object_t *cur;
    json_t *patch, *doc, *merged, *pmd;
    const char *s;
    char q1[600], q2[600], why[1200];
    int jp = media_is(ctype, "application/json-patch+json");
    if (!jp && !media_is(ctype, "application/merge-patch+json") &&
        !media_is(ctype, "application/strategic-merge-patch+json")) {
        answer_status(a, 415, "UnsupportedMediaType", t, t->name,
                      "the body of the request was in an unknown format - "
                      "accepted media types include: "
                      "application/json-patch+json, "
                      "application/merge-patch+json, "
                      "application/strategic-merge-patch+json");
        return;
    }
    if ((cur = ks_store_get(t->store, t->cluster ? "" : t->ns, t->name)) ==
        NULL) {
        not_found(a, t);
        return;
    }
    if (jp) {
        /* RFC 6902: its own "test" operations are the preconditions */
        if ((patch = parse_body(a, t, body, len, "patch", 1)) == NULL)
            return;
        merged = ks_otree_to_json(cur->tree);
        if (merged == NULL) {
            json_decref(patch);
            answer_status(a, 500, "InternalError", t, t->name,
                          "out of memory");
            return;
        }
        if (ks_json_patch(&merged, patch, why, sizeof why) != 0) {
            json_decref(patch);
            json_decref(merged);
            answer_status(a, 422, "Invalid", t, t->name, "%s", why);
            return;
        }
        json_decref(patch);
        if (!json_is_object(merged)) {
            json_decref(merged);
            answer_status(a, 422, "Invalid", t, t->name,
                          "the patched %s is not a JSON object",
                          t->ref->kind);
            return;
        }
        goto patched;
    }
    if ((patch = parse_object(a, t, body, len, "patch")) == NULL)
        return;
    pmd = json_object_get(patch, "metadata");
    s = json_string_value(json_object_get(pmd, "resourceVersion"));
    if (!rv_matches(cur, s)) {
        conflict_modified(a, t);
        json_decref(patch);
        return;
    }
    s = json_string_value(json_object_get(pmd, "uid"));
    if (s && s[0] && strcmp(s, cur->uid) != 0) {
        answer_status(a, 409, "Conflict", t, t->name,
                      "Precondition failed: UID in precondition: %s, UID in "
                      "object meta: %s",
                      s, cur->uid);
        json_decref(patch);
        return;
    }
    doc = ks_otree_to_json(cur->tree);
    merged = doc ? ks_merge_patch(doc, patch) : NULL;
    json_decref(doc);
    json_decref(patch);
    if (merged == NULL || !json_is_object(merged)) {
        json_decref(merged);
        answer_status(a, 500, "InternalError", t, t->name, "out of memory");
        return;
    }
patched:
    if (!json_is_object(json_object_get(merged, "metadata")))
        json_object_set_new(merged, "metadata", json_object());
    s = md_str(merged, "name");
    if (s == NULL || strcmp(s, t->name) != 0) {
        answer_status(a, 422, "Invalid", t, t->name,
                      "%s %s is invalid: metadata.name: Invalid value: %s: "
                      "field is immutable",
                      t->ref->kind, ks_validate_quote(t->name, q1, sizeof q1),
                      ks_validate_quote(s ? s : "", q2, sizeof q2));
        json_decref(merged);
        return;
    }
    s = md_str(merged, "namespace");
    if (!t->cluster && (s == NULL || strcmp(s, t->ns) != 0)) {
        answer_status(a, 422, "Invalid", t, t->name,
                      "%s %s is invalid: metadata.namespace: Invalid value: "
                      "%s: field is immutable",
                      t->ref->kind, ks_validate_quote(t->name, q1, sizeof q1),
                      ks_validate_quote(s ? s : "", q2, sizeof q2));
        json_decref(merged);
        return;
    }
    if ((merged = with_type(merged, t)) == NULL) {
        answer_status(a, 500, "InternalError", t, t->name, "out of memory");
        return;
    }
    carry_meta(srv, cur, merged);
    commit(srv, t, merged, 200, a);
    json_decref(merged);
}

static void do_delete(ks_server_t *srv, target_t *t, const char *body,
                      size_t len, ks_obj_answer_t *a)
{
    const ks_object_t *cur;
    ks_object_t *old;
    json_t *opts = NULL, *pre, *st;
    const char *s;
    char gvr[600];
    if ((cur = ks_store_get(t->store, t->cluster ? "" : t->ns, t->name)) ==
        NULL) {
        not_found(a, t);
        return;
    }
    if (len > 0 &&
        (opts = parse_object(a, t, body, len, "DeleteOptions")) == NULL)
        return;
    pre = json_object_get(opts, "preconditions");
    s = json_string_value(json_object_get(pre, "uid"));
    if (s && strcmp(s, cur->uid) != 0) {
        answer_status(a, 409, "Conflict", t, t->name,
                      "Precondition failed: UID in precondition: %s, UID in "
                      "object meta: %s",
                      s, cur->uid);
        json_decref(opts);
        return;
    }
    s = json_string_value(json_object_get(pre, "resourceVersion"));
    if (s && !rv_matches(cur, s)) {
        const char *have = obj_md(cur, "resourceVersion");
        answer_status(a, 409, "Conflict", t, t->name,
                      "Precondition failed: ResourceVersion in precondition: "
                      "%s, ResourceVersion in meta: %s",
                      s, have ? have : "");
        json_decref(opts);
        return;
    }
    json_decref(opts);
    old = ks_store_take(t->store, t->cluster ? "" : t->ns, t->name);
    srv->object_rv++;
    ks_objects_gvr(t->store, gvr, sizeof gvr);
    ks_journal_object_deleted(srv, gvr, t->cluster ? "" : t->ns, t->name);
    if (srv->sched && old)
        ks_scheduler_on_cluster_event(srv->sched,
                                      ks_cluster_event_object(old, NULL),
                                      old, NULL);
    st = json_pack("{s:s, s:s, s:{}, s:s, s:{s:s, s:s, s:s}}", "kind",
                   "Status", "apiVersion", "v1", "metadata", "status",
                   "Success", "details", "name", t->name, "kind",
                   t->ref->resource, "uid", old ? old->uid : "");
    if (st && t->ref->group[0])
        json_object_set_new(json_object_get(st, "details"), "group",
                            json_string(t->ref->group));
    ks_object_free(old);
    answer_json(a, 200, st);
}

/* --- entry points -------------------------------------------------------- */

static void method_not_allowed(ks_obj_answer_t *a, const char *method,
                               const char *path, const char *allow)
{
    char p[1200];
    ks_api_utf8_escape(path, p, sizeof p);
    answer_status(a, 405, "MethodNotAllowed", NULL, NULL,
                  "the server does not allow this method on the requested "
                  "resource (%s %s; allowed: %s)",
                  method, p, allow);
    a->allow = allow;
}

int ks_objects_request(ks_server_t *srv, const char *method, const char *path,
                       const char *query, const char *content_type,
                       const char *body, size_t body_len,
                       ks_obj_answer_t *ans)
{
    target_t t;
    int scope;
    const char *allow;
    memset(ans, 0, sizeof *ans);
    if (!parse_path(path, &t))
        return 0;
    scope = scope_of(t.store, t.ref);
    /* A cluster-scoped resource has no namespaced URL; a namespaced one's
     * cluster-wide URL only lists. */
    if (scope == 1 && t.ns_form)
        return 0;
    if (scope == 0 && !t.ns_form && t.has_name)
        return 0;
    t.cluster = scope == 1 || (scope == -1 && !t.ns_form);
    allow = !t.has_name     ? (scope == 0 && !t.ns_form ? "GET" : "GET, POST")
            : t.status_sub ? "GET, PUT, PATCH"
                           : "GET, PUT, PATCH, DELETE";
    if (strcmp(method, "GET") == 0) {
        if (ks_api_query_flag(query, "watch")) {
            answer_status(ans, 405, "MethodNotAllowed", &t, NULL,
                          "the embedded API does not serve watches of %s",
                          t.qualified);
            return 1;
        }
        if (!t.has_name) {
            do_list(srv, &t, query, ans);
        } else {
            const ks_object_t *o =
                ks_store_get(t.store, t.cluster ? "" : t.ns, t.name);
            if (o == NULL)
                not_found(ans, &t);
            else
                answer_json(ans, 200, ks_otree_to_json(o->tree));
        }
        return 1;
    }
    if (strstr(allow, method) == NULL || strlen(method) < 3) {
        method_not_allowed(ans, method, path, allow);
        return 1;
    }
    if (strcmp(method, "POST") == 0)
        do_create(srv, &t, body, body_len, ans);
    else if (strcmp(method, "PUT") == 0)
        do_replace(srv, &t, body, body_len, ans);
    else if (strcmp(method, "PATCH") == 0)
        do_patch(srv, &t, content_type, body, body_len, ans);
    else
        do_delete(srv, &t, body, body_len, ans);
    return 1;
}

int ks_api_objects(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req)
{
    ks_obj_answer_t a;
    char hdr[128];
    if (!ks_objects_request(srv, req->method, req->path, req->query,
                            req->content_type, req->body, req->body_len, &a))
        return 0;
    if (a.body == NULL) {
        ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n", 14);
        return 1;
    }
    if (a.allow)
        snprintf(hdr, sizeof hdr, "Allow: %s\r\n", a.allow);
    ks_http_respond(c, a.status, "application/json", a.allow ? hdr : NULL,
                    a.body, a.len);
    free(a.body);
    return 1;
}

int ks_objects_restore(ks_server_t *srv, const char *gvr, json_t *obj,
                       ks_error_t *err)
{
    char buf[600], *group = NULL, *version, *resource, *slash;
    ks_store_t *s;
    const char *rv;
    unsigned long long n;
    snprintf(buf, sizeof buf, "%s", gvr);
    if ((resource = strrchr(buf, '/')) == NULL) {
        json_decref(obj);
        return ks_error_set(err, KS_EINVAL, "%s: not group/version/resource",
                            gvr);
    }
    *resource++ = '\0';
    if ((slash = strchr(buf, '/')) != NULL) {
        *slash = '\0';
        group = buf;
        version = slash + 1;
    } else {
        version = buf;
    }
    s = ks_store_find(group ? group : "", version, resource);
    if (s == NULL) {
        json_decref(obj);
        return ks_error_set(err, KS_ENOTFOUND,
                            "%s: no loaded plugin declares it", gvr);
    }
    rv = md_str(obj, "resourceVersion");
    if (rv && sscanf(rv, "%llu", &n) == 1 && n > srv->object_rv)
        srv->object_rv = n;
    return ks_store_put(s, obj, gvr, err);
}
