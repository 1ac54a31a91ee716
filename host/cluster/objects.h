/*
 * Cluster objects read from Kubernetes manifests (YAML, as `kubectl get -o
 * yaml` prints them): Node, Pod, Service, Namespace, plus `kind: List` and
 * multi-document streams.
 *
 * Each pod, node, service and namespace is one arena owned by the caller of
 * the reader (free with ks_pod_free / ks_node_free / ...); every string in
 * it is interned in the table passed in ("" when absent).
 *
 * Reading rules: unknown fields are ignored, YAML null equals absent, a
 * field we read with the wrong YAML type is an error
 * "FILE:LINE:COL: pod NS/NAME: spec.path: message" (KS_ESCHEMA; malformed
 * YAML is KS_EPARSE). metadata.name is required.
 *   Pod: namespace "default", uid "ns/name", schedulerName
 *   "default-scheduler", priority 0, toleration operator Equal, port
 *   protocol TCP when absent; a container's requests default to its limits
 *   (API server defaulting); the derived fields follow upstream v1.24:
 *   requests = max(sum of containers, each init container) + overhead;
 *   non-zero cpu/memory count 100m / 200Mi for a container whose requests
 *   do not name cpu / memory (an explicit 0 stays 0); host_ports = the
 *   containers' ports with hostPort > 0.
 *   Node: allocatable is status.allocatable, or status.capacity when that
 *   is absent or empty; resources cpu (milli), memory, ephemeral-storage,
 *   pods, and as scalars names containing '/', hugepages-* and
 *   attachable-volumes-* (other names are ignored; more than
 *   KS_MAX_SCALAR_RESOURCES is an error); images: one entry per name, a
 *   name repeated on one node kept once (first size).
 *
 * Thread-safety: the readers keep no shared state except the (locked)
 * intern table, so different threads may read different inputs.
 */
#ifndef KS_OBJECTS_H
#define KS_OBJECTS_H

#include <stddef.h>

#include "ksched/types.h"
#include "base/error.h"
#include "base/intern.h"

typedef struct ks_service {
    const char *ns;
    const char *name;
    ks_label_selector_t *selector; /* spec.selector as a selector; NULL if none */
} ks_service_t;

typedef struct ks_namespace {
    const char *name;
    ks_labels_t labels;
} ks_namespace_t;

/* Everything read from one or more manifest files. Owns its objects. */
typedef struct ks_manifest {
    ks_node_t **nodes;
    size_t n_nodes;
    ks_pod_t **pods;
    size_t n_pods;
    ks_service_t **services;
    size_t n_services;
    ks_namespace_t **namespaces;
    size_t n_namespaces;
    size_t n_skipped; /* objects of other kinds, skipped with a notice */
    /* Objects of other kinds the caller keeps (the stores of cluster
     * objects plugins declare, SDK ABI 1.3): when `take` is set and
     * wants(take_ud, apiVersion, kind) is non-zero, the object is handed
     * to take() as compact JSON (base/yaml_json.h: as sigs.k8s.io/yaml
     * converts it; NUL-terminated, valid during the call) instead of
     * being skipped; `where` names it in messages ("FILE:LINE" or
     * "FILE:LINE: items[N]"). A non-zero return from take() stops the
     * read with that error. Set these before loading. */
    int (*wants)(void *take_ud, const char *api_version, const char *kind);
    int (*take)(void *take_ud, const char *api_version, const char *kind,
                const char *json, size_t len, const char *where,
                ks_error_t *err);
    void *take_ud;
    size_t n_taken;
} ks_manifest_t;

/* Read a manifest file (multi-document; `kind: List` items are flattened).
 * Appends to *m (zero-initialise it first). Unknown kinds that the caller
 * does not take (wants/take above) are skipped with a notice written to `notice` (may be NULL: silent), "FILE:LINE: skipping
 * Deployment ns/name (ksched reads Node, Pod, Service, Namespace)". An
 * object without `kind` is an error. Malformed objects fail with
 * "FILE:LINE:COL: ..."; objects read before the error stay in *m (free
 * them with ks_manifest_free). `name` is the file name used in messages. */
int ks_manifest_load_file(ks_manifest_t *m, const char *path, ks_intern_t *in,
                          void (*notice)(const char *msg), ks_error_t *err);
int ks_manifest_load_string(ks_manifest_t *m, const char *name,
                            const char *yaml, size_t len, ks_intern_t *in,
                            void (*notice)(const char *msg), ks_error_t *err);
/* Frees every object still owned by the manifest (set an entry to NULL to
 * keep it). */
void ks_manifest_free(ks_manifest_t *m);

/* Build one object from a parsed libyaml mapping node (`doc` is a
 * yaml_document_t *, `node` a yaml_node_t *). `file` is used in messages.
 * Used by the manifest reader and by the conformance scenario reader. The
 * object does not point into the document (it may be deleted afterwards).
 * `kind` is not required. On error *out is NULL. */
int ks_pod_from_yaml(const char *file, void *doc, void *node, ks_intern_t *in,
                     ks_pod_t **out, ks_error_t *err);
/* Parse one RFC 3339 timestamp ("2022-06-01T00:00:00Z", fractions and
 * offsets allowed) into Unix milliseconds; 0, or -1 when malformed. */
int ks_rfc3339_parse(const char *s, int64_t *unix_ms);
int ks_node_from_yaml(const char *file, void *doc, void *node, ks_intern_t *in,
                      ks_node_t **out, ks_error_t *err);
int ks_service_from_yaml(const char *file, void *doc, void *node,
                         ks_intern_t *in, ks_service_t **out, ks_error_t *err);
/* A ReplicaSet, StatefulSet, ReplicationController (or Service) read as a
 * holder of a pod selector, for upstream's DefaultSelector: the result is
 * a ks_service_t named "KIND/NAME" (a Service keeps its name). */
int ks_workload_from_yaml(const char *kind, const char *file, void *doc,
                          void *node, ks_intern_t *in, ks_service_t **out,
                          ks_error_t *err);
int ks_namespace_from_yaml(const char *file, void *doc, void *node,
                           ks_intern_t *in, ks_namespace_t **out,
                           ks_error_t *err);

/* The node object as read. Besides its parsed view, a node keeps the
 * whole object it was read from (every field, including those ksched does
 * not model: annotations, status.conditions, nodeInfo, addresses...) as
 * one compact JSON text, which scheduler extenders that are not
 * nodeCacheCapable receive in ExtenderArgs.Nodes (extender/extender.h).
 * A manifest's YAML is written out as sigs.k8s.io/yaml would convert it
 * (base/yaml_json.h); an object that came as JSON (API server, embedded
 * API) comes back as the same JSON. The text is not part of the SDK's
 * node view.
 *
 * The text costs about as much memory again as the parsed node (a node
 * as kubelets report it: ~5 KB), so it is kept only while
 * ks_node_keep_raw is on: off by default, turned on (process-wide, for
 * nodes read afterwards) when a generation is built whose configuration
 * has an extender that receives node objects (ks_extender_wants_nodes).
 * Nodes read while it was off, and an object whose text would be larger
 * than KS_NODE_RAW_MAX or nest deeper than 64 levels, have none (NULL).
 * ks_node_keep_raw and ks_node_keeps_raw are thread-safe.
 *
 * ks_node_raw_json: the text (NUL-terminated, *len bytes), valid as long
 * as the node and until ks_node_raw_move replaces it, or NULL.
 * ks_node_raw_differs: 1 when the two nodes' texts differ.
 * ks_node_raw_move: hand src's text over to dst (a node the cache keeps;
 * dst's old text is freed, src has none afterwards), for an update that
 * changes nothing ksched models, so extenders see the object as it is now.
 * The text is read and moved on the loop thread only (the Filter and
 * Score workers never read it), so dst may be shared with snapshots. */
#define KS_NODE_RAW_MAX ((size_t)4 << 20)
void ks_node_keep_raw(int on);
int ks_node_keeps_raw(void);
const char *ks_node_raw_json(const ks_node_t *node, size_t *len);
int ks_node_raw_differs(const ks_node_t *a, const ks_node_t *b);
void ks_node_raw_move(const ks_node_t *dst, ks_node_t *src);

void ks_pod_free(ks_pod_t *pod);
void ks_node_free(ks_node_t *node);
void ks_service_free(ks_service_t *svc);
void ks_namespace_free(ks_namespace_t *ns);

/* Resource helpers on ks_resources_t (fixed arrays, no allocation). Scalar
 * names are matched by address, then by content. add/sub create missing
 * scalar slots; when all KS_MAX_SCALAR_RESOURCES slots are taken a new name
 * is dropped. */
void ks_resources_add(ks_resources_t *dst, const ks_resources_t *src);
void ks_resources_sub(ks_resources_t *dst, const ks_resources_t *src);
/* a + b, saturated at the int64 range. */
int64_t ks_int64_sat_add(int64_t a, int64_t b);
/* Value of scalar resource `name` (interned), 0 if absent. */
int64_t ks_resources_scalar(const ks_resources_t *r, const char *name);
/* Set scalar `name` to v (adds a slot); -1 when all slots are taken. */
int ks_resources_set_scalar(ks_resources_t *r, const char *name, int64_t v);
/* dst = max(dst, src) per resource for cpu, memory, ephemeral storage and
 * scalars (not pods), as upstream Resource.SetMaxResource. */
void ks_resources_set_max(ks_resources_t *dst, const ks_resources_t *src);

#endif
