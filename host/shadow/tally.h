/*
 * Counts over many comparisons (compare.h): decisions per result class,
 * and how often each plugin made the difference (named among a different
 * or unschedulable decision's deciding plugins). The summary of
 * `schedule --replay`. A zeroed ks_shadow_tally_t is empty; the caller
 * owns it and frees it with ks_shadow_tally_free. Not thread-safe.
 */
#ifndef KS_SHADOW_TALLY_H
#define KS_SHADOW_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"

typedef struct ks_shadow_plugin_count {
    char *plugin; /* malloc'd */
    uint64_t count;
} ks_shadow_plugin_count_t;

typedef struct ks_shadow_tally {
    uint64_t results[KS_SHADOW_N_RESULTS];
    ks_shadow_plugin_count_t *plugins;
    size_t n_plugins, cap_plugins;
} ks_shadow_tally_t;

/* Count d. 0, or KS_ENOMEM (the result is counted, a plugin may not be). */
int ks_shadow_tally_add(ks_shadow_tally_t *t, const ks_shadow_decision_t *d);
/* Order the plugins by count, most first (ties by name). */
void ks_shadow_tally_sort(ks_shadow_tally_t *t);
void ks_shadow_tally_free(ks_shadow_tally_t *t);

#endif
