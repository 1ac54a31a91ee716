/*
 * Extra mock host functions for the DefaultPreemption tests, installed over
 * the generic mock host (../plugins/mock_host.h):
 *
 *   - run_filters: a resource check like NodeResourcesFit's (cpu, memory,
 *     pod count against the NodeInfo's requested resources), reasons
 *     "Insufficient cpu", "Insufficient memory", "Too many pods"; it records
 *     the name of every node it is asked about, in order;
 *   - run_prefilter_add_pod / run_prefilter_remove_pod: count the calls,
 *     remember the cycle state they saw, and fail on request;
 *   - rand_below: returns the offset the test chose;
 *   - status_reason_count / status_reason_at: every reason of a mock status
 *     (the generic mock host leaves these two NULL); the count calls are
 *     counted.
 *
 * State is process-wide (the plugin API carries no user data) and reset by
 * pm_install(). Test main thread only.
 */
#ifndef KS_TEST_PREEMPTION_MOCK_H
#define KS_TEST_PREEMPTION_MOCK_H

#include "mock_host.h"

#define PM_MAX_CALLS 256

typedef struct pm_state {
    /* Inputs. */
    uint32_t offset;          /* what rand_below returns (mod n) */
    int fail_remove;          /* run_prefilter_remove_pod returns KS_ERROR
                                 with one reason, or two when > 1 */
    /* Recordings. */
    const char *filtered[PM_MAX_CALLS]; /* node of each run_filters call */
    uint32_t n_filter_calls;
    uint32_t n_add_calls, n_remove_calls;
    const ks_cycle_state_t *last_ext_state; /* cycle state seen by add/remove */
    uint32_t n_rand_calls;
    uint32_t last_rand_n;
    uint32_t n_reason_count_calls;
} pm_state_t;

extern pm_state_t pm;

/* Reset `pm` and replace the six functions in mh->api. Call before the
 * plugin's create (the plugin keeps a pointer to mh->api, so later changes
 * are seen too). */
void pm_install(mock_host_t *mh);

/* Number of distinct nodes run_filters was asked about. */
uint32_t pm_distinct_filtered(void);
/* 1 when run_filters was ever asked about `node`. */
int pm_was_filtered(const char *node);

#endif
