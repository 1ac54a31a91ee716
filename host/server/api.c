/* Status bodies, request decoding and JSON views of pods and nodes. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "base/log.h"
#include "cluster/objects_json.h"
#include "cluster/objects_json_out.h"
#include "cluster/validate.h"

/* --- responses ------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len, i;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates, beyond U+10FFFF. */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

void ks_api_utf8_escape(const char *in, char *out, size_t out_len)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t n = strlen(in), o = 0, i = 0;
    if (out_len == 0)
        return;
    while (i < n) {
        size_t l = utf8_seq(s + i, n - i);
        if (l == 0) {
            if (o + 4 >= out_len)
                break;
            snprintf(out + o, out_len - o, "\\x%02x", s[i]);
            o += 4;
            i++;
            continue;
        }
        if (o + l >= out_len)
            break;
        memcpy(out + o, s + i, l);
        o += l;
        i += l;
    }
    out[o] = '\0';
}

static void status_v(ks_http_conn_t *c, const char *extra, int code,
                     const char *reason, const char *dkind, const char *dname,
                     const char *fmt, va_list ap)
{
    char raw[KS_ERROR_MSG_MAX + 512], msg[sizeof raw * 4], name[1024];
    json_t *st;
    /* Messages quote what the client sent (a path, a name), which need
     * not be UTF-8: JSON needs it, so other bytes are written \xNN. */
    vsnprintf(raw, sizeof raw, fmt, ap);
    if (c == NULL) {
        /* A request replayed from the journal: no one to answer. */
        ks_log(KS_LOGL_WARN, "journal replay: %d %s: %s", code, reason, raw);
        return;
    }
    ks_api_utf8_escape(raw, msg, sizeof msg);
    st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status",
                   "apiVersion", "v1", "metadata", "status", "Failure",
                   "message", msg, "reason", reason, "code", code);
    if (st && (dkind || dname)) {
        json_t *d = json_object();
        if (dname) {
            ks_api_utf8_escape(dname, name, sizeof name);
            json_object_set_new(d, "name", json_string(name));
        }
        if (dkind)
            json_object_set_new(d, "kind", json_string(dkind));
        json_object_set_new(st, "details", d);
    }
    if (st == NULL) {
        ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n", 14);
        return;
    }
    {
        char *text = json_dumps(st, JSON_COMPACT);
        json_decref(st);
        if (text == NULL) {
            ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n",
                            14);
            return;
        }
        ks_http_respond(c, code, "application/json", extra, text,
                        strlen(text));
        free(text);
    }
}

void ks_api_status(ks_http_conn_t *c, int code, const char *reason,
                   const char *details_kind, const char *details_name,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    status_v(c, NULL, code, reason, details_kind, details_name, fmt, ap);
    va_end(ap);
}

void ks_api_status_hdr(ks_http_conn_t *c, const char *extra_headers, int code,
                       const char *reason, const char *details_kind,
                       const char *details_name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    status_v(c, extra_headers, code, reason, details_kind, details_name, fmt,
             ap);
    va_end(ap);
}

void ks_api_json(ks_http_conn_t *c, int code, json_t *doc)
{
    char *text;
    if (c == NULL) { /* a replayed request (journal.h) */
        json_decref(doc);
        return;
    }
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL) {
        ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n", 14);
        return;
    }
    ks_http_respond(c, code, "application/json", NULL, text, strlen(text));
    free(text);
}

int ks_api_query_flag(const char *query, const char *key)
{
    size_t kl = strlen(key);
    const char *q = query;
    while (q && *q) {
        const char *e = strchr(q, '&');
        size_t l = e ? (size_t)(e - q) : strlen(q);
        if (l > kl && strncmp(q, key, kl) == 0 && q[kl] == '=') {
            const char *v = q + kl + 1;
            size_t vl = l - kl - 1;
            return (vl == 4 && strncmp(v, "true", 4) == 0) ||
                   (vl == 1 && v[0] == '1');
        }
        q = e ? e + 1 : NULL;
    }
    return 0;
}

/* --- decoding ------------------------------------------------------------- */

static const char *json_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int ks_api_json_depth(const char *body, size_t len, size_t *at)
{
    int depth = 0, max = 0, in_str = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        char ch = body[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max) {
                max = depth;
                if (at)
                    *at = i;
                if (max > KS_JSON_MAX_DEPTH)
                    return max; /* enough to refuse */
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return max;
}

json_t *ks_api_decode(ks_http_conn_t *c, const ks_http_request_t *req,
                      const char *kind, const char *resource)
{
    static const char *const allowed[] = {"apiVersion", "kind", "metadata",
                                          "spec", "status"};
    json_error_t jerr;
    json_t *doc, *k, *v, *md, *name;
    const char *key;
    char unknown[1024] = "";
    size_t ul = 0, deep_at = 0;

    /* Before jansson (whose own parse of deep nesting is costly): a
     * Kubernetes object is shallow. */
    if (ks_api_json_depth(req->body, req->body_len, &deep_at) >
        KS_JSON_MAX_DEPTH) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "json parse error: nested more than %d levels deep at "
                      "position %zu",
                      KS_JSON_MAX_DEPTH, deep_at);
        return NULL;
    }
    doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "json parse error: %s at line %d, column %d "
                      "(position %d)",
                      jerr.text, jerr.line, jerr.column, jerr.position);
        return NULL;
    }
    if (!json_is_object(doc)) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "the request body must be a %s object, got %s", kind,
                      json_type_name(doc));
        json_decref(doc);
        return NULL;
    }
    json_object_foreach(doc, key, v) {
        size_t i;
        int ok = 0;
        for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            if (strcmp(key, allowed[i]) == 0)
                ok = 1;
        if (!ok && ul < sizeof unknown - 64)
            ul += (size_t)snprintf(unknown + ul, sizeof unknown - ul,
                                   "%sunknown field \"%.200s\"",
                                   ul ? ", " : "", key);
    }
    if (ul) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "%s in version \"v1\" cannot be handled as a %s: "
                      "strict decoding error: %s",
                      kind, kind, unknown);
        json_decref(doc);
        return NULL;
    }
    k = json_object_get(doc, "kind");
    if (k && !json_is_string(k)) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "kind must be a string, got %s", json_type_name(k));
        json_decref(doc);
        return NULL;
    }
    if (k && strcmp(json_string_value(k), kind) != 0) {
        const char *got = json_string_value(k);
        if (strcmp(got, "Pod") == 0 || strcmp(got, "Node") == 0)
            ks_api_status(c, 400, "BadRequest", resource, NULL,
                          "the kind in the body (%s) does not match the "
                          "kind of the resource (%s: %s)",
                          got, resource, kind);
        else
            ks_api_status(c, 400, "BadRequest", resource, NULL,
                          "no kind \"%.200s\" is registered for version "
                          "\"v1\" in this API (%s expects kind %s)",
                          got, resource, kind);
        json_decref(doc);
        return NULL;
    }
    v = json_object_get(doc, "apiVersion");
    if (v && (!json_is_string(v) || strcmp(json_string_value(v), "v1"))) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "the API version in the data (%.200s) does not match "
                      "the expected API version (v1)",
                      json_is_string(v) ? json_string_value(v) : "?");
        json_decref(doc);
        return NULL;
    }
    md = json_object_get(doc, "metadata");
    if (md && !json_is_object(md)) {
        ks_api_status(c, 400, "BadRequest", resource, NULL,
                      "metadata must be an object, got %s",
                      json_type_name(md));
        json_decref(doc);
        return NULL;
    }
    name = md ? json_object_get(md, "name") : NULL;
    if (name == NULL || !json_is_string(name) ||
        json_string_value(name)[0] == '\0') {
        ks_api_status(c, 422, "Invalid", resource, "",
                      "%s \"\" is invalid: metadata.name: Required value: "
                      "name is required",
                      kind);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Answer a reader's failure: 500 for memory, else 422 with its message
 * (which names the field path). */
static void read_failed(ks_http_conn_t *c, const char *resource, int rc,
                        const ks_error_t *err)
{
    if (rc == KS_ENOMEM)
        ks_api_status(c, 500, "InternalError", resource, NULL,
                      "out of memory");
    else
        ks_api_status(c, 422, "Invalid", resource, NULL, "%s", err->msg);
}

int ks_api_read_pod(ks_http_conn_t *c, const json_t *doc, ks_pod_t **pod)
{
    ks_error_t err = {0};
    int rc = ks_pod_from_json("body", doc, ks_intern_global(), pod, &err);
    if (rc != 0) {
        read_failed(c, "pods", rc, &err);
        return -1;
    }
    return 0;
}

int ks_api_read_node(ks_http_conn_t *c, const json_t *doc, ks_node_t **node)
{
    ks_error_t err = {0};
    int rc = ks_node_from_json("body", doc, ks_intern_global(), node, &err);
    if (rc != 0) {
        read_failed(c, "nodes", rc, &err);
        return -1;
    }
    return 0;
}

/* --- validation ----------------------------------------------------------- */

/* 422 for one field: KIND "NAME" is invalid: FIELD: Invalid value: "V":
 * WHY (as the API server words it). */
static void invalid(ks_http_conn_t *c, const char *kind, const char *resource,
                    const char *name, const char *field, const char *value,
                    const char *why)
{
    char qn[600], qv[600];
    ks_api_status(c, 422, "Invalid", resource, name,
                  "%s %s is invalid: %s: Invalid value: %s: %s", kind,
                  ks_validate_quote(name, qn, sizeof qn), field,
                  ks_validate_quote(value, qv, sizeof qv), why);
}

static int labels_ok(ks_http_conn_t *c, const char *kind,
                     const char *resource, const char *name,
                     const ks_labels_t *l, const char *field)
{
    char msg[4096], qn[600];
    if (ks_validate_field_labels(l, field, msg, sizeof msg) == 0)
        return 1;
    ks_api_status(c, 422, "Invalid", resource, name, "%s %s is invalid: %s",
                  kind, ks_validate_quote(name, qn, sizeof qn), msg);
    return 0;
}

int ks_api_validate_pod(ks_http_conn_t *c, const ks_pod_t *pod)
{
    char why[2048];
    if (ks_validate_dns1123_subdomain(pod->name, why, sizeof why) != 0) {
        invalid(c, "Pod", "pods", pod->name, "metadata.name", pod->name, why);
        return -1;
    }
    if (ks_validate_dns1123_label(pod->ns, why, sizeof why) != 0) {
        invalid(c, "Pod", "pods", pod->name, "metadata.namespace", pod->ns,
                why);
        return -1;
    }
    if (!labels_ok(c, "Pod", "pods", pod->name, &pod->labels,
                   "metadata.labels") ||
        !labels_ok(c, "Pod", "pods", pod->name, &pod->node_selector,
                   "spec.nodeSelector"))
        return -1;
    if (pod->node_name[0] &&
        ks_validate_dns1123_subdomain(pod->node_name, why, sizeof why) != 0) {
        invalid(c, "Pod", "pods", pod->name, "spec.nodeName", pod->node_name,
                why);
        return -1;
    }
    return 0;
}

int ks_api_validate_node(ks_http_conn_t *c, const ks_node_t *node)
{
    char why[2048];
    if (ks_validate_dns1123_subdomain(node->name, why, sizeof why) != 0) {
        invalid(c, "Node", "nodes", node->name, "metadata.name", node->name,
                why);
        return -1;
    }
    if (!labels_ok(c, "Node", "nodes", node->name, &node->labels,
                   "metadata.labels"))
        return -1;
    return 0;
}

/* --- views ---------------------------------------------------------------- */

json_t *ks_api_pod_json(const ks_pod_t *pod, const char *node,
                        const char *message)
{
    json_t *md, *spec, *status, *cond;
    md = json_pack("{s:s, s:s, s:s}", "name", pod->name, "namespace", pod->ns,
                   "uid", pod->uid);
    if (md && pod->labels.n)
        json_object_set_new(md, "labels", ks_json_labels(pod->labels));
    spec = json_pack("{s:s}", "schedulerName", pod->scheduler_name);
    if (spec && node && node[0])
        json_object_set_new(spec, "nodeName", json_string(node));
    if (spec && pod->priority)
        json_object_set_new(spec, "priority", json_integer(pod->priority));
    if (node && node[0])
        cond = json_pack("{s:s, s:s}", "type", "PodScheduled", "status",
                         "True");
    else if (message && message[0])
        cond = json_pack("{s:s, s:s, s:s, s:s}", "type", "PodScheduled",
                         "status", "False", "reason", "Unschedulable",
                         "message", message);
    else
        cond = json_pack("{s:s, s:s}", "type", "PodScheduled", "status",
                         "False");
    status = json_pack("{s:s, s:[o]}", "phase", "Pending", "conditions", cond);
    if (pod->nominated_node_name && pod->nominated_node_name[0] && status)
        json_object_set_new(status, "nominatedNodeName",
                            json_string(pod->nominated_node_name));
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "apiVersion", "v1", "kind",
                     "Pod", "metadata", md, "spec", spec, "status", status);
}

json_t *ks_api_node_json(const ks_node_t *node)
{
    json_t *md, *spec, *alloc;
    uint32_t i;
    md = json_pack("{s:s}", "name", node->name);
    if (md && node->labels.n)
        json_object_set_new(md, "labels", ks_json_labels(node->labels));
    spec = json_object();
    if (spec && node->unschedulable)
        json_object_set_new(spec, "unschedulable", json_true());
    if (spec && node->n_taints)
        json_object_set_new(spec, "taints",
                            ks_json_taints(node->taints, node->n_taints));
    alloc = json_object();
    if (alloc) {
        const ks_resources_t *r = &node->allocatable;
        json_object_set_new(alloc, "cpu", ks_json_cpu(r->milli_cpu));
        json_object_set_new(alloc, "memory",
                            ks_json_int_quantity(r->memory));
        json_object_set_new(alloc, "pods",
                            ks_json_int_quantity(r->allowed_pods));
        if (r->ephemeral_storage)
            json_object_set_new(alloc, "ephemeral-storage",
                                ks_json_int_quantity(r->ephemeral_storage));
        for (i = 0; i < r->n_scalar && i < KS_MAX_SCALAR_RESOURCES; i++)
            json_object_set_new(alloc, r->scalar[i].name,
                                ks_json_int_quantity(r->scalar[i].value));
    }
    return json_pack("{s:s, s:s, s:o, s:o, s:{s:o}}", "apiVersion", "v1",
                     "kind", "Node", "metadata", md, "spec", spec, "status",
                     "allocatable", alloc);
}
