/*
 * Scheduler extenders (upstream pkg/scheduler/extender.go, HTTPExtender):
 * the JSON of k8s.io/kube-scheduler/extender/v1 and the HTTP calls, made
 * asynchronously on a libuv loop through net/http_client.h.
 *
 * What is sent. Nodes go as the objects were read (cluster/objects.h's
 * ks_node_raw_json: the API server's JSON in cluster mode and from the
 * embedded API, a manifest's YAML as JSON in snapshots), spliced into
 * the body as text. A node without that text (kept off, see
 * ks_node_keep_raw) is rebuilt from ksched's view: apiVersion, kind,
 * metadata {name, labels}, spec {taints, unschedulable}, status
 * {allocatable, capacity (= allocatable)}. ksched keeps only its parsed
 * view of pods, so the v1.Pod objects are rebuilt from it: apiVersion,
 * kind, metadata {name, namespace, uid, labels, annotations}, spec
 * {schedulerName, priority, priorityClassName, nodeSelector, tolerations,
 * containers and initContainers {name, image, resources {requests,
 * limits}}, overhead}, status {} (a nominatedNodeName when set).
 * ExtenderArgs carries Nodes (a v1.NodeList) unless the extender is
 * nodeCacheCapable, then NodeNames; the other is null, as Go marshals a
 * nil pointer.
 *
 * Errors are reported as upstream words them where it can: "failed VERB
 * with extender at URL URL, code N" for a status other than 200, the
 * answer's Error field as is.
 *
 * Threads: the loop thread of the client's loop.
 */
#ifndef KS_EXTENDER_H
#define KS_EXTENDER_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "ksched/plugin.h"
#include "ksched/types.h"
#include "net/http_client.h"

#define KS_EXT_MAX_PRIORITY 10 /* extenderv1.MaxExtenderPriority */
#define KS_EXT_MAX_NODE_SCORE 100 /* framework.MaxNodeScore */

/* Does some extender of cfg receive node objects (a filterVerb or a
 * prioritizeVerb, not nodeCacheCapable)? Then nodes must keep the object
 * as read (cluster/objects.h, ks_node_keep_raw; the generation turns it
 * on). */
int ks_extender_wants_nodes(const ks_config_t *cfg);

/* upstream IsInterested: managedResources empty, or a container or init
 * container requests or limits one of them. */
int ks_extender_interested(const ks_extender_config_t *e, const ks_pod_t *pod);

/* ExtenderArgs for `nodes` (malloc'd JSON text, NULL when out of
 * memory). */
char *ks_extender_args_json(const ks_extender_config_t *e, const ks_pod_t *pod,
                            const ks_node_info_t *const *nodes, uint32_t n);
/* ExtenderBindingArgs. */
char *ks_extender_binding_json(const ks_pod_t *pod, const char *node);

/* ExtenderPreemptionArgs: the pod and, per candidate, its victims: full
 * v1.Pod objects in NodeNameToVictims, or (nodeCacheCapable) only their
 * UIDs in NodeNameToMetaVictims; the other map is null. */
char *ks_extender_preempt_json(const ks_extender_config_t *e,
                               const ks_pod_t *pod,
                               const ks_preempt_candidate_t *cands,
                               uint32_t n);

/* ExtenderPreemptionResult (upstream reads only NodeNameToMetaVictims).
 * For each node, fn(ud, node, uids, n_uids, num_pdb_violations); fn
 * returns 0 to go on, or -1 with msg filled to stop. 0, or -1 with msg
 * (bad JSON, the answer's Error, or fn's). */
typedef int (*ks_ext_victims_fn)(void *ud, const char *node,
                                 const char *const *uids, size_t n_uids,
                                 int64_t num_pdb_violations, char *msg,
                                 size_t msg_len);
int ks_extender_parse_preemption(const char *body, size_t len,
                                 ks_ext_victims_fn fn, void *ud, char *msg,
                                 size_t msg_len);

/* The answers (ext_answer.c) are read as kube-scheduler reads them, with
 * Go's encoding/json rules (base/json_go.h): field names match
 * case-insensitively, the last repeated key wins, unknown keys are
 * ignored, and a malformed answer's error is Go's text.
 *
 * ExtenderFilterResult. Strings point into the parsed document, which
 * lives until ks_extender_filter_result_free. */
typedef struct ks_ext_pair {
    const char *node, *reason;
} ks_ext_pair_t;

typedef struct ks_ext_filter_result {
    void *doc_;               /* ks_gj_doc_t (base/json_go.h) */
    const char **nodes;       /* NodeNames, or Nodes.items[].metadata.name */
    size_t n_nodes;
    int has_nodes;            /* the list read was given (not null) */
    ks_ext_pair_t *failed;    /* FailedNodes */
    size_t n_failed;
    ks_ext_pair_t *unresolvable; /* FailedAndUnresolvableNodes */
    size_t n_unresolvable;
} ks_ext_filter_result_t;

/* Parse an answer to filterVerb. 0, or -1 with msg saying why (bad JSON,
 * or the answer's Error). */
int ks_extender_parse_filter(const ks_extender_config_t *e, const char *body,
                             size_t len, ks_ext_filter_result_t *out,
                             char *msg, size_t msg_len);
void ks_extender_filter_result_free(ks_ext_filter_result_t *r);

/* A HostPriorityList: for each entry, fn(ud, host, score). 0, or -1 with
 * msg (bad JSON). */
int ks_extender_parse_priorities(const char *body, size_t len,
                                 void (*fn)(void *ud, const char *host,
                                            int64_t score),
                                 void *ud, char *msg, size_t msg_len);
/* ExtenderBindingResult: 0, or -1 with msg (bad JSON or its Error). */
int ks_extender_parse_binding(const char *body, size_t len, char *msg,
                              size_t msg_len);

/* One call: POST urlPrefix/verb with a JSON body (copied), httpTimeout
 * enforced, TLS from tlsConfig (enableHTTPS without a CA: insecure, as
 * upstream). The record is the caller's and must stay put until done runs
 * or the call is cancelled. done runs once from the loop: error NULL and
 * the body on a 200, else the error's text (all valid during the call). */
typedef void (*ks_ext_done_fn)(void *ud, const char *error, const char *body,
                               size_t len);
/* Told of every finished call (metrics): the extender's urlPrefix, the
 * verb, the result ("200", another HTTP status code, "timeout", "error",
 * or "cancelled": the pod went away or the scheduler stopped) and the seconds from the start of the call. */
typedef void (*ks_ext_report_fn)(void *ud, const char *url_prefix,
                                 const char *verb, const char *result,
                                 double seconds);
typedef struct ks_ext_call {
    ks_hc_req_t *req; /* NULL once done or cancelled */
    char verb[64];
    char url[1024];
    long timeout_ms;
    ks_ext_done_fn done;
    void *ud;
    /* optional, set by the caller once ks_extender_post returned 0 */
    ks_ext_report_fn report;
    void *report_ud;
    const char *url_prefix; /* the configuration's */
    double t0;
} ks_ext_call_t;

/* 0, or an error code with err filled (done never runs then). */
int ks_extender_post(ks_hc_t *hc, const ks_extender_config_t *e,
                     const char *verb, const char *body, ks_ext_call_t *call,
                     ks_ext_done_fn done, void *ud, ks_error_t *err);
/* Cancel a call still running (nothing when it is not). */
void ks_extender_cancel(ks_ext_call_t *call);

#endif
