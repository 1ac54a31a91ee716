/*
 * One pod's two decisions compared: the node another scheduler really
 * chose (shadow mode: the binding seen on the API server; replay: the
 * node the snapshot shows) against ksched's scheduling cycle for the same
 * pod on the same cluster.
 *
 * Result classes (their names are metric labels and output values):
 *   same           the same node, or neither placed the pod
 *   tied           a different node whose total ksched scores at its best
 *                  (upstream breaks such ties at random)
 *   different      a different node: ksched rejects the real node, or
 *                  scores it lower than its choice
 *   unschedulable  ksched finds no node for a pod placed for real
 *   placed         ksched would place a pod the real scheduler could not
 *   error          ksched's attempt ended on an Error status
 *
 * The cycle should have evaluated and scored every node (ks_sched_opts_t
 * percentage_override 100 and score_single_node) so that the real node
 * has a verdict and a score.
 */
#ifndef KS_SHADOW_COMPARE_H
#define KS_SHADOW_COMPARE_H

#include <stdint.h>

#include "framework/scheduler.h"

typedef enum ks_shadow_result {
    KS_SHADOW_SAME = 0,
    KS_SHADOW_TIED,
    KS_SHADOW_DIFFERENT,
    KS_SHADOW_UNSCHEDULABLE,
    KS_SHADOW_PLACED,
    KS_SHADOW_ERROR,
    KS_SHADOW_N_RESULTS
} ks_shadow_result_t;

/* "same", "tied", ...; "unknown" out of range. */
const char *ks_shadow_result_name(ks_shadow_result_t res);
/* Whether the class means the pod would go elsewhere (different,
 * unschedulable, placed, error): what makes `schedule --replay` exit 3. */
int ks_shadow_result_differs(ks_shadow_result_t res);

#define KS_SHADOW_MAX_DECIDING 8

/* The comparison. Every string is malloc'd and owned by the decision
 * (ks_shadow_decision_free); "" rather than NULL when absent. */
typedef struct ks_shadow_decision {
    ks_shadow_result_t result;
    char *ns, *name;
    char *profile;     /* the profile ksched scheduled the pod with */
    char *real_node;   /* "" when the real scheduler did not place it */
    char *ksched_node; /* "" when ksched would not */
    /* Scores (has_scores): ksched's total for its node (best) and for the
     * real node when it passes the filters (real_feasible); gap = best -
     * real_total. */
    int has_scores, real_feasible;
    int64_t best, real_total, gap;
    /* One sentence: "ksched would reject node-7: Insufficient cpu",
     * "node-7 scores 143, node-2 scores 171", ... ("" for same). */
    char *reason;
    /* The plugins that made the difference: the one rejecting the real
     * node, or the Score plugins that score ksched's node higher than the
     * real one, the largest part first (deciding_gap[k]). */
    char *deciding[KS_SHADOW_MAX_DECIDING];
    int64_t deciding_gap[KS_SHADOW_MAX_DECIDING];
    unsigned n_deciding;
    /* --explain's lines (explain.h) for the real node and ksched's node;
     * "" when there is no such node. */
    char *explain_real, *explain_ksched;
    char *message; /* ksched's FitError or error message, "" when placed */
} ks_shadow_decision_t;

/* Fill *d (cleared first) from r, the cycle ksched ran for the pod, and
 * real_node, where the pod really went (NULL or "": not placed). 0, or
 * KS_ENOMEM with *d freed. Any thread; r is read during the call only. */
int ks_shadow_compare(const ks_cycle_result_t *r, const char *real_node,
                      ks_shadow_decision_t *d);
/* Free the strings (d itself is the caller's); d is left cleared. */
void ks_shadow_decision_free(ks_shadow_decision_t *d);

#endif
