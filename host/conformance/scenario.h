/*
 * Reader of conformance scenarios (NAME.yaml):
 *
 *   name: ID                 description: text
 *   config: KubeSchedulerConfiguration (optional; absent = the default)
 *   services: [v1.Service]   nodes: [v1.Node]
 *   pods: [v1.Pod running, spec.nodeName set]
 *   schedule: [v1.Pod to schedule, in order]
 *
 * Objects are read with the cluster object readers (which already apply the
 * API server's defaulting), all strings interned in ks_intern_global().
 * On top of that the reader applies the scenario rules: a pod without
 * status.startTime starts at 2022-06-01T00:00:00Z. (schedulerName is
 * overridden by the runner, which knows the profile.)
 *
 * Ownership: the scenario owns its config, nodes, services and pods until
 * the runner moves them out (it sets the moved entries to NULL);
 * ks_scenario_free frees whatever is still there. Thread: one at a time
 * (the intern table is thread-safe).
 */
#ifndef KS_CONF_SCENARIO_H
#define KS_CONF_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/objects.h"
#include "config/config.h"
#include "base/error.h"

/* 2022-06-01T00:00:00Z in Unix milliseconds. */
#define KS_SCENARIO_DEFAULT_START_MS INT64_C(1654041600000)

typedef struct ks_scenario {
    char *path;        /* as given */
    char *name;        /* `name`, or the file name without ".yaml" */
    char *description; /* "" when absent */
    ks_config_t *config; /* NULL: the built-in default configuration */
    ks_service_t **services;
    size_t n_services;
    ks_node_t **nodes;
    size_t n_nodes;
    ks_pod_t **pods;   /* running pods */
    size_t n_pods;
    ks_pod_t **schedule; /* pods to schedule, in order */
    size_t n_schedule;
} ks_scenario_t;

/* Read one scenario. On failure *out is NULL and err says
 * "FILE:LINE:COL: what is wrong". */
int ks_scenario_load(const char *path, ks_scenario_t **out, ks_error_t *err);
void ks_scenario_free(ks_scenario_t *sc);

/* "dir/x.yaml" -> "dir/x.expected.yaml" (malloc'd; NULL on ENOMEM). */
char *ks_scenario_expected_path(const char *path);
/* The file's base name without ".yaml" (malloc'd). */
char *ks_scenario_base_name(const char *path);

#endif
