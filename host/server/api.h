/*
 * Kubernetes-shaped API helpers: Status error bodies, JSON responses,
 * request-body decoding (jansson validates the JSON; the cluster object
 * reader builds the pod or node from the same text), and the JSON views of
 * pods and nodes the API returns.
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
 * Bytes of the message or name that are not UTF-8 are written \xNN. */
void ks_api_status(ks_http_conn_t *c, int code, const char *reason,
                   const char *details_kind, const char *details_name,
                   const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The same with extra CRLF-terminated header lines (NULL: none). */
void ks_api_status_hdr(ks_http_conn_t *c, const char *extra_headers, int code,
                       const char *reason, const char *details_kind,
                       const char *details_name, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Reply with a JSON document (the reference is stolen). */
void ks_api_json(ks_http_conn_t *c, int code, json_t *doc);

/* Decode a request body that must hold one object of `kind` ("Pod" or
 * "Node"). Malformed JSON, a wrong kind or apiVersion and unknown
 * top-level fields are answered (400/422) and NULL is returned; otherwise
 * the parsed document (caller's reference). When the body has no kind,
 * *text receives a malloc'd copy of the document with the kind added
 * (free it); else *text is NULL and the body itself is the text to read. */
json_t *ks_api_decode(ks_http_conn_t *c, const ks_http_request_t *req,
                      const char *kind, const char *resource, char **text);

/* Build the object from the validated document with the manifest reader,
 * reading `text` (the body as sent, so that messages give its line and
 * column). Returns 0 and fills *m (zeroed first; one object), or answers
 * the error (400 for malformed input, 422 for invalid fields) and
 * returns -1. */
int ks_api_read_object(ks_http_conn_t *c, json_t *doc, const char *text,
                       size_t len, ks_manifest_t *m);

/* Copy `in` to `out` (NUL-terminated, truncated to fit) with every byte
 * that is not part of valid UTF-8 written as \xNN. */
void ks_api_utf8_escape(const char *in, char *out, size_t out_len);

/* JSON views. */
json_t *ks_api_pod_json(const ks_pod_t *pod, const char *node,
                        const char *message);
json_t *ks_api_node_json(const ks_node_t *node);

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
void ks_api_debug_plugins(ks_server_t *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req);
void ks_api_reload(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req);
void ks_api_metrics(ks_server_t *srv, ks_http_conn_t *c,
                    const ks_http_request_t *req);

/* Is `key=value` (value "true"/"1" for flags) in the query string? */
int ks_api_query_flag(const char *query, const char *key);

#endif
