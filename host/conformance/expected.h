/*
 * Reader of conformance expected files (NAME.expected.yaml): the scenario
 * name and one result per scheduled pod, in order.
 *
 *   name: ID
 *   results:
 *   - pod: ns/name
 *     feasible: [..]           rejected: {node: [reason, ..]}
 *     scores: {node: N}        plugin_scores: {Plugin: {node: N}}
 *     selected: node           unschedulable: "message"
 *     nominated: node          victims: [ns/name, ..]
 *
 * Unknown fields are errors ("FILE:LINE:COL: ..."), so that a typo cannot
 * silently drop a check. The records are returned normalised
 * (ks_conf_result_normalise).
 *
 * Ownership: *out is filled by the call and owned by the caller
 * (ks_conf_results_free). Any thread; no shared state.
 */
#ifndef KS_CONF_EXPECTED_H
#define KS_CONF_EXPECTED_H

#include "conf_result.h"
#include "base/error.h"

int ks_expected_load(const char *path, ks_conf_results_t *out,
                     ks_error_t *err);

#endif
