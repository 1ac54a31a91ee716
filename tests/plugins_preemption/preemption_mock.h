/*
 * The DefaultPreemption tests' parts on top of the host fixture
 * (../plugins/mock_host.h):
 *
 *   - a Filter plugin, "PreemptionFit", in the fixture's framework (so the
 *     host's run_filters and PreFilter AddPod/RemovePod run it): a
 *     resource check like NodeResourcesFit's (cpu, memory, pod count
 *     against the NodeInfo's requested resources), reasons "Insufficient
 *     cpu", "Insufficient memory", "Too many pods"; it records the name of
 *     every node it is asked about, in order. Its AddPod/RemovePod count
 *     the calls, remember the cycle state they saw, and fail on request;
 *   - rand_below: returns the offset the test chose (the random source is
 *     the test's input), counting the calls;
 *   - status_reason_count: the host's, with the calls counted.
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
    int fail_remove;          /* RemovePod returns KS_ERROR with one
                                 reason, or two when > 1 */
    /* Recordings. */
    const char *filtered[PM_MAX_CALLS]; /* node of each Filter call */
    uint32_t n_filter_calls;
    uint32_t n_add_calls, n_remove_calls;
    const ks_cycle_state_t *last_ext_state; /* cycle state seen by add/remove */
    uint32_t n_rand_calls;
    uint32_t last_rand_n;
    uint32_t n_reason_count_calls;
} pm_state_t;

extern pm_state_t pm;

/* Reset `pm`, wrap rand_below and status_reason_count in mh->api and put
 * PreemptionFit in the fixture's Filter and PreFilter lists. Call before
 * the plugin's create (the plugin keeps a pointer to mh->api, so later
 * changes are seen too). */
void pm_install(mock_host_t *mh);

/* Make mh->api what an ABI 1.0 host hands out: no status_reason_count /
 * status_reason_at, and status_message answers the first reason only. */
void pm_act_as_abi_1_0(mock_host_t *mh);

/* Number of distinct nodes Filter was asked about. */
uint32_t pm_distinct_filtered(void);
/* 1 when Filter was ever asked about `node`. */
int pm_was_filtered(const char *node);

#endif
