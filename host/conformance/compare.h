/*
 * Comparing ksched's results with an expected file.
 *
 * Both sides must be normalised (ks_conf_result_normalise). Entries are
 * paired by position (one per pod of `schedule`). Lists are compared as
 * sorted lists, each node's reasons as a multiset. Only the Score plugins
 * named in the expected file are compared; a plugin that ksched ran and the
 * expected file does not name is a mismatch unless it is a volume plugin
 * (upstream's VolumeBinding score was left out of the expected files).
 *
 * Every mismatch is one line on `out` (NULL: count only):
 *   "  default/p1: plugin_scores.NodeResourcesFit.a1: expected 56, got 55"
 * Thread-safety: pure, any thread.
 */
#ifndef KS_CONF_COMPARE_H
#define KS_CONF_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "conf_result.h"

/* Returns the number of mismatches (0: the results conform). */
size_t ks_conf_compare(const ks_conf_results_t *expected,
                       const ks_conf_results_t *got, FILE *out);

#endif
