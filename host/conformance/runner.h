/*
 * The conformance runner: drive one scenario through a fresh generation,
 * cache and scheduler, pod by pod, and record every decision in the shape
 * of the expected file.
 *
 * Rules of the run (the scenario README): every node is evaluated
 * (percentage 100, in name order), every Filter plugin runs on every node,
 * scores are computed even for a single feasible node, ties go to the
 * smallest node name. After each pod: bound to `selected`; when preemption
 * succeeded the victims are already deleted (through the scheduler) and the
 * pod is bound to `nominated`; an unschedulable pod is dropped.
 *
 * Ownership: ks_conformance_run moves the config, nodes, services and pods
 * out of `sc` (their entries become NULL) and frees or caches them; `got`
 * is filled (zero it first) and owned by the caller. Loop thread only (it
 * builds a generation and a scheduler).
 */
#ifndef KS_CONF_RUNNER_H
#define KS_CONF_RUNNER_H

#include <stddef.h>

#include "conf_result.h"
#include "base/error.h"
#include "scenario.h"

typedef struct ks_conf_run_opts {
    const char *const *plugin_dirs;
    size_t n_plugin_dirs;
    int no_default_path; /* search only plugin_dirs */
    int parallelism;     /* > 0 overrides the config's */
    /* Opportunistic batching (framework/batch.h): KS_BATCHING_ON (0) or
     * _VERIFY keep one scheduler from a pod to the next while each pod is
     * simply bound to its selected node (a new one after a preemption, an
     * unschedulable pod or an error), so a pod may reuse the previous
     * pod's results; _OFF: a new scheduler per pod. */
    int batching;
    /* When not NULL: the nodes whose results were reused (compared, under
     * verify) and the differences verify found are added to them. */
    unsigned long long *batch_reused, *batch_mismatches;
    /* Bulk Filter and Score (framework.h KS_BULK_*), and under verify the
     * node results compared and the differences, added when not NULL. */
    int bulk;
    unsigned long long *bulk_compared, *bulk_mismatches;
} ks_conf_run_opts_t;

/* 0 when the scenario ran (a pod whose cycle failed is recorded in its
 * result's `error`); a negative code with err filled when it could not run
 * (the plugins or the config do not load, the cache rejects an object). */
int ks_conformance_run(ks_scenario_t *sc, const ks_conf_run_opts_t *o,
                       ks_conf_results_t *got, ks_error_t *err);

#endif
