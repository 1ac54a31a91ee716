/*
 * Enforcement of the SDK's threading rules (ksched/plugin.h): the host API
 * functions documented "loop thread only" must not be called while the
 * calling thread runs Filter, Score or PreFilter's AddPod/RemovePod for a
 * parallel job (pool.h: ks_pool_in_job). Such a call is a plugin bug that
 * races with the other workers, so the host never performs it:
 *
 *   - abort mode (builds without optimisation, and sanitizer builds): print
 *     "ksched: fatal: ks_api->NAME called from a Filter/Score worker
 *     thread; it may be called only on the loop thread (see plugin.h)"
 *     on stderr and abort(), so the bug shows where it happens;
 *   - refuse mode (optimised builds): the call does nothing and returns
 *     its error value (documented per function in plugin.h); the first
 *     refusal of each function is logged at error level, then only the
 *     1,000th, 10,000th, ... (with the count), never one line per call.
 *
 * Cost on the loop thread: one thread-local load per guarded call.
 * Thread-safety: every function here is thread-safe.
 */
#ifndef KS_THREAD_RULES_H
#define KS_THREAD_RULES_H

#include <stdatomic.h>

#include "pool.h"

typedef enum ks_thread_rules_mode {
    KS_THREAD_RULES_ABORT = 1,
    KS_THREAD_RULES_REFUSE = 2
} ks_thread_rules_mode_t;

/* One loop-thread-only function: its name as plugins spell it
 * ("cycle_state_write") and how often it was refused. Static storage,
 * initialised with KS_THREAD_RULE("name"). */
typedef struct ks_thread_rule {
    const char *fn;
    atomic_ulong refused;
} ks_thread_rule_t;

#define KS_THREAD_RULE(name) {(name), 0}

/* A call broke the rule: aborts in abort mode; in refuse mode counts (and
 * maybe logs) the refusal and returns 0. */
int ks_thread_rule_broken(ks_thread_rule_t *r);

/* 1 when the caller may go on; 0 when the call must be refused (it runs
 * inside a parallel job, refuse mode). Does not return in abort mode when
 * the rule is broken. */
static inline int ks_thread_rule_ok(ks_thread_rule_t *r)
{
    return !ks_pool_in_job() || ks_thread_rule_broken(r);
}

/* The mode this build chose, and the one in force (the same unless a test
 * changed it with ks_thread_rules_set_mode, which is for tests only and
 * must be called before any parallel job runs). */
ks_thread_rules_mode_t ks_thread_rules_build_mode(void);
ks_thread_rules_mode_t ks_thread_rules_mode(void);
void ks_thread_rules_set_mode(ks_thread_rules_mode_t mode);

/* The message of a refusal or abort, without the "ksched: LEVEL: " prefix
 * (tests compare it). */
#define KS_THREAD_RULE_MSG_FMT                                                 \
    "ks_api->%s called from a Filter/Score worker thread; it may be called "  \
    "only on the loop thread (see plugin.h)"

#endif
