/*
 * What `ksched schedule --explain` prints about one scheduling cycle, as
 * text: each node's Filter verdict (the plugin that rejected it and why),
 * each Score plugin's weighted score and the total, the extenders'
 * answers, and the outcome. Shared by `schedule --explain`, `schedule
 * --replay` and shadow mode's /debug/shadow so that all three say it the
 * same way.
 *
 * The result must come from a cycle that evaluated every node
 * (ks_sched_opts_t full_eval_* or percentage_override 100) for every node
 * to have a verdict. Any thread that owns the buffer; r is read during the
 * call only.
 */
#ifndef KS_SHADOW_EXPLAIN_H
#define KS_SHADOW_EXPLAIN_H

#include <stdint.h>

#include "base/buf.h"
#include "framework/scheduler.h"

/* The line(s) for the node at snapshot index i (two spaces, the name
 * padded to 24, the verdict; then one line per extender asked), each
 * ending in a newline. Nothing when i is out of range. */
void ks_explain_node(ks_buf_t *b, const ks_cycle_result_t *r, uint32_t i);
/* Every node's lines in snapshot order, then "  selected: NODE", the
 * FitError or error message, and "  nominated: NODE" when there are. */
void ks_explain_nodes(ks_buf_t *b, const ks_cycle_result_t *r);
/* The index of node `name` in r's snapshot, or UINT32_MAX. */
uint32_t ks_explain_node_index(const ks_cycle_result_t *r, const char *name);
/* Where node i stands in r->feasible (its column in r->scores and
 * r->totals), or UINT32_MAX when it did not pass the filters. */
uint32_t ks_explain_feasible_index(const ks_cycle_result_t *r, uint32_t i);

#endif
