/*
 * Kubernetes-shaped API helpers: Status error bodies, JSON responses,
 * request-body decoding (one parse: a cheap nesting check, jansson, then
 * the cluster object readers build the pod or node from jansson's tree),
 * validation of names and labels, and the JSON views of pods and nodes
 * the API returns.
 *
 * Handlers, one file per resource: api_nodes.c, api_pods.c, api_watch.c
 * (bindings watch), api_debug.c (healthz, readyz, debug/plugins, reload),
 * api_metrics.c. Loop thread only.
 */
#ifndef KS_SERVER_API_H
#define KS_SERVER_API_H

#include <jansson.h>

#include "cluster/objects.h"
#include "http.h"
#include "server.h"

/* Reply with a v1.Status failure: {"kind":"Status","apiVersion":"v1",
 * "metadata":{},"status":"Failure","message":...,"reason":...,
 * "details":{...},"code":N}. `details_kind`/`details_name` may be NULL.
 * Bytes of the message or name that are not UTF-8 are written \xNN.
 * With c NULL (a request replayed from the journal, journal.h) nothing is
 * sent: the message is logged. */
void ks_api_status(ks_http_conn_t *c, int code, const char *reason,
                   const char *details_kind, const char *details_name,
                   const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The same with extra CRLF-terminated header lines (NULL: none). */
void ks_api_status_hdr(ks_http_conn_t *c, const char *extra_headers, int code,
                       const char *reason, const char *details_kind,
                       const char *details_name, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Reply with a JSON document (the reference is stolen); c NULL: none. */
void ks_api_json(ks_http_conn_t *c, int code, json_t *doc);

/* Decode a request body that must hold one object of `kind` ("Pod" or
 * "Node"). Nesting deeper than KS_JSON_MAX_DEPTH (checked before
 * parsing), malformed JSON (with jansson's message, line, column and
 * position), a wrong kind or apiVersion and unknown top-level fields are
 * answered 400, a missing name 422, and NULL is returned; otherwise the
 * parsed document (caller's reference). */
json_t *ks_api_decode(ks_http_conn_t *c, const ks_http_request_t *req,
                      const char *kind, const char *resource);

/* The deepest nesting of [ and { outside strings in a JSON text (the
 * scan stops once past KS_JSON_MAX_DEPTH); *at (may be NULL) receives the
 * byte position where that depth was reached. */
int ks_api_json_depth(const char *body, size_t len, size_t *at);

/* Build the object from a decoded document with the cluster readers (no
 * second parse). 0 with the object (caller's: ks_pod_free/ks_node_free),
 * or the error answered (422 naming the field path, 500 for memory) and
 * -1. */
int ks_api_read_pod(ks_http_conn_t *c, const json_t *doc, ks_pod_t **pod);
int ks_api_read_node(ks_http_conn_t *c, const json_t *doc, ks_node_t **node);

/* Kubernetes' rules (cluster/validate.h): pod names and spec.nodeName DNS
 * subdomains, namespaces DNS labels, label keys qualified names and values
 * label values (metadata.labels, and a pod's spec.nodeSelector). 0, or
 * 422 Invalid answered naming the field, the value and the rule, and -1. */
int ks_api_validate_pod(ks_http_conn_t *c, const ks_pod_t *pod);
int ks_api_validate_node(ks_http_conn_t *c, const ks_node_t *node);

/* Copy `in` to `out` (NUL-terminated, truncated to fit) with every byte
 * that is not part of valid UTF-8 written as \xNN. */
void ks_api_utf8_escape(const char *in, char *out, size_t out_len);

/* JSON views. */
json_t *ks_api_pod_json(const ks_pod_t *pod, const char *node,
                        const char *message);
json_t *ks_api_node_json(const ks_node_t *node);

/* How far a bindings watcher may fall behind by default (queued, unsent
 * bytes) before it is disconnected; ks_server_t.watch_buffer_limit
 * overrides it. */
#define KS_WATCH_DEFAULT_BUFFER (4u << 20)

/* Handlers. */
void ks_api_nodes(ks_server_t *srv, ks_http_conn_t *c,
                  const ks_http_request_t *req, const char *name);
void ks_api_pods(ks_server_t *srv, ks_http_conn_t *c,
                 const ks_http_request_t *req, const char *ns,
                 const char *name);
void ks_api_bindings(ks_server_t *srv, ks_http_conn_t *c,
                     const ks_http_request_t *req);
void ks_api_health(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req);
/* GET /configz: {"componentconfig": the running configuration, defaults
 * merged, with "source" naming the file}. */
void ks_api_configz(ks_server_t *srv, ks_http_conn_t *c,
                    const ks_http_request_t *req);
/* GET /debug/shadow: shadow mode's counts and last differences
 * (shadow/shadow.h); 404 when not in shadow mode. */
void ks_api_debug_shadow(ks_server_t *srv, ks_http_conn_t *c,
                         const ks_http_request_t *req);
void ks_api_debug_plugins(ks_server_t *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req);
void ks_api_reload(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req);
void ks_api_metrics(ks_server_t *srv, ks_http_conn_t *c,
                    const ks_http_request_t *req);

/* Is `key=value` (value "true"/"1" for flags) in the query string? */
int ks_api_query_flag(const char *query, const char *key);

#endif
