/*
 * Durations written as Go writes them ("15s", "1m30s", "250ms", "1.5h"),
 * as the KubeSchedulerConfiguration's duration fields and upstream's
 * command-line flags take them. Pure; thread-safe.
 */
#ifndef KS_BASE_GO_DURATION_H
#define KS_BASE_GO_DURATION_H

#include <stdint.h>

/* Parse `s` into milliseconds (fractions of a millisecond are dropped).
 * Units: ns, us (or µs), ms, s, m, h; "0" alone is allowed; a leading '-'
 * or '+' as Go allows. 0, or -1 when `s` is not a duration. */
int ks_go_duration_parse(const char *s, int64_t *ms);

#endif
