/*
 * What the scheduler extenders said about each node in one scheduling
 * cycle, for `ksched schedule --explain`: per interested extender, its
 * filter verdict on every node it was sent (passed, failed with its
 * FailedNodes reason, unresolvable with its FailedAndUnresolvableNodes
 * reason, dropped from the answer without a reason, or the call's error)
 * and its prioritize score on every node it was sent (or the call's
 * error). Nodes are identified by their position in the cycle's snapshot.
 *
 * The scheduler records into one trace only for the pod that --explain
 * names (scheduler.h's full_eval pod); every recording function does
 * nothing while the trace is not active, so the other pods pay one test.
 * A node sent again (a second filter round after the nominated node was
 * rejected) gets the later answer.
 *
 * Ownership: the trace owns its arrays and copies of the reasons and
 * errors; the extender configurations and the snapshot are borrowed and
 * must outlive the cycle (they do: the cycle holds its generation and
 * snapshot). Loop thread only.
 */
#ifndef KS_EXT_TRACE_H
#define KS_EXT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/cache.h"
#include "config/config.h"
#include "ksched/types.h"

typedef enum ks_ext_verdict {
    KS_EXT_NOT_SENT = 0,
    KS_EXT_SENT,         /* asked; not in the answer's nodes nor its maps */
    KS_EXT_PASSED,
    KS_EXT_FAILED,       /* FailedNodes */
    KS_EXT_UNRESOLVABLE, /* FailedAndUnresolvableNodes */
    KS_EXT_ERROR         /* the call failed: filter_error */
} ks_ext_verdict_t;

typedef struct ks_ext_trace_ext {
    const ks_extender_config_t *cfg;
    char *filter_error;     /* the last failed filter call's error */
    char *prioritize_error; /* the prioritize call's error */
    uint8_t *verdict;       /* ks_ext_verdict_t per node */
    char **reason;          /* FAILED / UNRESOLVABLE: the reason */
    uint8_t *prio;          /* 0 not sent, 1 sent, 2 scored, 3 error */
    int64_t *score;         /* the raw 0..MaxExtenderPriority score */
} ks_ext_trace_ext_t;

typedef struct ks_ext_trace {
    int active;
    const ks_snapshot_t *snap;
    uint32_t n_nodes;
    size_t n_ext;
    ks_ext_trace_ext_t *ext; /* one per configured extender */
} ks_ext_trace_t;

/* Start a trace for one cycle over `snap` with the configured extenders
 * (frees what the previous one held). 0, or -1 when out of memory (the
 * trace stays inactive). */
int ks_ext_trace_begin(ks_ext_trace_t *t, const ks_snapshot_t *snap,
                       const ks_extender_config_t *ex, size_t n_ext);
/* Stop recording; what was recorded stays readable until the next begin
 * or free. */
void ks_ext_trace_stop(ks_ext_trace_t *t);
void ks_ext_trace_free(ks_ext_trace_t *t);

/* Extender k's filterVerb was sent `nodes` (before its answer). */
void ks_ext_trace_filter_sent(ks_ext_trace_t *t, size_t k,
                              const ks_node_info_t *const *nodes, uint32_t n);
/* Its answer kept `node`, or failed it (unresolvable: 1 for
 * FailedAndUnresolvableNodes) with `reason`. */
void ks_ext_trace_filter_passed(ks_ext_trace_t *t, size_t k,
                                const char *node);
void ks_ext_trace_filter_failed(ks_ext_trace_t *t, size_t k, const char *node,
                                int unresolvable, const char *reason);
/* The call failed (HTTP, timeout, bad answer, its Error): every node it
 * was sent gets the error. */
void ks_ext_trace_filter_error(ks_ext_trace_t *t, size_t k,
                               const ks_node_info_t *const *nodes, uint32_t n,
                               const char *error);
/* prioritizeVerb: sent `nodes`; a node's score; or the call's error. */
void ks_ext_trace_prioritize_sent(ks_ext_trace_t *t, size_t k,
                                  const ks_node_info_t *const *nodes,
                                  uint32_t n);
void ks_ext_trace_score(ks_ext_trace_t *t, size_t k, const char *node,
                        int64_t score);
void ks_ext_trace_prioritize_error(ks_ext_trace_t *t, size_t k,
                                   const char *error);

#endif
