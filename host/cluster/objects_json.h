/*
 * Cluster objects from JSON: the wire format of the API server and of the
 * embedded API. One parse: the caller's jansson tree is turned into an
 * in-memory libyaml document (no text round trip) and read by the same
 * field readers as manifests, so a pod means the same from a file, from
 * `serve`'s API and from a cluster.
 *
 * Messages name `what` (for example "pod default/web-0 from the API
 * server") and the field path instead of a line and column. Objects nested
 * deeper than KS_JSON_MAX_DEPTH are refused (Kubernetes objects are
 * shallow; this bounds the work a hostile body can cause).
 *
 * Ownership: the returned object is the caller's (ks_pod_free, ...); it
 * does not point into the JSON. Thread-safety: as the manifest readers
 * (no shared state but the locked intern table).
 */
#ifndef KS_CLUSTER_OBJECTS_JSON_H
#define KS_CLUSTER_OBJECTS_JSON_H

#include <jansson.h>

#include "base/error.h"
#include "base/intern.h"
#include "objects.h"

#define KS_JSON_MAX_DEPTH 64

int ks_pod_from_json(const char *what, const json_t *obj, ks_intern_t *in,
                     ks_pod_t **out, ks_error_t *err);
int ks_node_from_json(const char *what, const json_t *obj, ks_intern_t *in,
                      ks_node_t **out, ks_error_t *err);
int ks_namespace_from_json(const char *what, const json_t *obj,
                           ks_intern_t *in, ks_namespace_t **out,
                           ks_error_t *err);
/* A Service, or a ReplicaSet, StatefulSet or ReplicationController read as
 * a selector holder (PodTopologySpread's system default spreading uses
 * their selectors, as upstream's DefaultSelector): `kind` says which; the
 * object's name becomes "KIND/NAME" for the non-Service kinds so the
 * names of different kinds never collide in the cache. */
int ks_selector_owner_from_json(const char *kind, const char *what,
                                const json_t *obj, ks_intern_t *in,
                                ks_service_t **out, ks_error_t *err);

#endif
