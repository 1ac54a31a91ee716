/*
 * The embedded API's journal: what clients posted (nodes, pods) and what
 * the scheduler decided (bindings), appended to a file as it happens, so
 * that a new worker (after a crash, under the supervisor) or a new serve
 * process (with --state-file) starts from the same objects.
 *
 * Format: one JSON object per line.
 *   {"n": NODE}                      a node created or replaced (the
 *                                    request body as the client sent it)
 *   {"dn": "NAME"}                   a node deleted
 *   {"p": POD, "ns": "NS", "k": "NS/NAME"}  a pod created (its body)
 *   {"dp": "NS/NAME"}                a pod deleted (by a client, a plugin
 *                                    or preemption)
 *   {"b": "NS/NAME", "node": "N", "rv": RV}  a pod bound; RV is the
 *                                    binding's resourceVersion (watch
 *                                    resume)
 *   {"o": OBJ, "r": "GV/RESOURCE"}   a declared resource's object created
 *                                    or changed (api_objects.h), as
 *                                    stored: its uid, resourceVersion
 *                                    and creationTimestamp included;
 *                                    GV/RESOURCE as "v1/persistentvolumes"
 *                                    or "storage.k8s.io/v1/storageclasses"
 *   {"do": "NAME", "ns": "NS", "r": "GV/RESOURCE", "rv": RV}  one
 *                                    deleted ("" for a cluster-scoped
 *                                    one); RV the resourceVersion counter
 *                                    after the deletion
 *   {"orv": RV}                      the counter (a compacted journal's
 *                                    deletions), so that it never goes
 *                                    back
 * Each record is one write(2) on a file opened O_APPEND: a process crash
 * loses nothing written; a power loss may (no fsync). A torn last line is
 * ignored on reading.
 *
 * Opening replays the file into the server (nodes first, in the order
 * they came, then the declared resources' objects into their stores (no
 * cluster event: no pod is queued yet; an object of a resource no loaded
 * plugin declares stays in the file), then pods: a pod bound before is created bound to its node,
 * the others are queued and scheduled again), then compacts it: the file
 * is rewritten with the final objects only. It is compacted again when it
 * grows past four times its last compacted size (at least 64 MiB).
 *
 * Threads: the loop thread.
 */
#ifndef KS_SERVER_JOURNAL_H
#define KS_SERVER_JOURNAL_H

#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "http.h"

struct ks_server;
typedef struct ks_journal ks_journal_t;

/* Replay `path` (missing: empty) into srv, compact it and keep it open
 * for appends (srv->journal). 0, or an error naming the file and line. */
int ks_journal_open(struct ks_server *srv, const char *path, ks_error_t *err);
void ks_journal_close(struct ks_server *srv);

/* Records; each a no-op when srv has no journal. */
void ks_journal_node_put(struct ks_server *srv, const ks_http_request_t *req);
void ks_journal_node_deleted(struct ks_server *srv, const char *name);
void ks_journal_pod_created(struct ks_server *srv, const ks_http_request_t *req,
                            const char *ns, const char *key);
void ks_journal_pod_deleted(struct ks_server *srv, const char *key);
void ks_journal_pod_bound(struct ks_server *srv, const char *key,
                          const char *node, uint64_t rv);
/* A declared resource's object as stored (`obj` is only read). */
void ks_journal_object_put(struct ks_server *srv, const char *gvr,
                           json_t *obj);
void ks_journal_object_deleted(struct ks_server *srv, const char *gvr,
                               const char *ns, const char *name);

#endif
