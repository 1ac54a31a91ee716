/*
 * The embedded API's generic resources: the stores of the resources that
 * loaded plugins declare (SDK ABI 1.3, cluster/object_store.h) served as
 * the API server serves them, under /api/v1/... for the core group and
 * /apis/GROUP/VERSION/... otherwise:
 *
 *   GET    [/namespaces/NS]/RESOURCE            list (every namespace
 *                                               without NS), sorted by
 *                                               namespace and name;
 *                                               ?labelSelector= filters
 *                                               (label_query.h)
 *   POST   [/namespaces/NS]/RESOURCE            create: 201; 409
 *                                               AlreadyExists
 *   GET    [/namespaces/NS]/RESOURCE/NAME[/status]
 *   PUT    [/namespaces/NS]/RESOURCE/NAME[/status]  replace: 200; 404
 *   PATCH  [/namespaces/NS]/RESOURCE/NAME[/status]  application/
 *          merge-patch+json (RFC 7386, merge_patch.h), application/
 *          strategic-merge-patch+json applied as a merge patch (maps
 *          merge, lists are replaced whole, no $patch directives), and
 *          application/json-patch+json (RFC 6902, json_patch.h; a failed
 *          operation is 422); apply patches are 415
 *   DELETE [/namespaces/NS]/RESOURCE/NAME       200 with a Success Status;
 *                                               404 NotFound
 *
 * The /status subresource reads and writes the whole object (the API
 * server would take only status from a status write, and only the rest
 * from a write to the object). Each write sets metadata.resourceVersion
 * (one counter for every resource, 1, 2, ..., restored from the journal),
 * generates metadata.uid when absent (create) and sets
 * metadata.creationTimestamp when absent; PUT and PATCH keep both.
 * metadata.resourceVersion in a PUT body or a patch, and DELETE's
 * preconditions (uid, resourceVersion), must match the stored object's,
 * else 409 Conflict. Errors are v1.Status objects with the API server's
 * reasons and words (`persistentvolumeclaims "x" not found`,
 * `storageclasses.storage.k8s.io "fast" already exists`).
 *
 * Scope: the core and *.k8s.io resources are cluster-scoped or namespaced
 * as upstream defines them (a table of the cluster-scoped ones:
 * persistentvolumes, storageclasses, csinodes, csidrivers,
 * volumeattachments, priorityclasses, ...); a custom resource takes the
 * scope of the URL that created its first object (later objects follow the
 * stored ones). A cluster-scoped resource under /namespaces/NS/ is 404; a
 * namespaced one without it can only be listed.
 *
 * Pods, bindings and nodes are never served here (their own handlers),
 * nor resources without a store (404). Every change is a cluster event
 * (framework/cluster_event.h ks_cluster_event_object, as cluster mode's
 * informers report them) and a journal record (journal.h), before the
 * answer.
 *
 * Threads: the loop thread, never during a plugin callback (requests of
 * plugins are applied from a timer: local_requests.h).
 */
#ifndef KS_SERVER_API_OBJECTS_H
#define KS_SERVER_API_OBJECTS_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "http.h"
#include "server.h"

/* One request's answer. */
typedef struct ks_obj_answer {
    int status;       /* HTTP status */
    char *body;       /* JSON text, malloc'd (NULL: out of memory) */
    size_t len;
    const char *allow; /* 405: the methods allowed, "GET, POST"; else NULL */
} ks_obj_answer_t;

/* Serve a request on the stores. `path` is without the query (query: ""
 * or the text after '?'); content_type may carry parameters (";
 * charset=utf-8"). 1 with *ans filled (free its body) when the path names
 * a declared resource's store; 0 when it does not (nothing filled: the
 * caller answers 404). */
int ks_objects_request(ks_server_t *srv, const char *method, const char *path,
                       const char *query, const char *content_type,
                       const char *body, size_t body_len,
                       ks_obj_answer_t *ans);

/* The router's hook for paths no fixed route matched: 1 when answered. */
int ks_api_objects(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req);

/* A v1.Status failure as JSON text into *ans (the local requests' 404). */
void ks_objects_status(ks_obj_answer_t *ans, int code, const char *reason,
                       const char *message);

/* The journal's name of a store, "v1/persistentvolumeclaims" or
 * "storage.k8s.io/v1/storageclasses" (apiVersion/resource), into buf. */
void ks_objects_gvr(const ks_store_t *s, char *buf, size_t len);

/* Journal replay: put `obj` (a stored object, its metadata as it was; the
 * reference is taken) into the store `gvr` names, without an event, and
 * keep the resourceVersion counter above its. 0; KS_ENOTFOUND when no
 * loaded plugin declares that resource (the object is kept in the journal
 * only); others with err. */
int ks_objects_restore(ks_server_t *srv, const char *gvr, json_t *obj,
                       ks_error_t *err);

#endif
