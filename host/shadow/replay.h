/*
 * Replay: for every pod already bound in a cluster snapshot, in creation
 * order, take it out and run one scheduling attempt for it with every
 * other pod where it is, then put it back where it was, and compare
 * (compare.h). `ksched schedule --replay`.
 *
 * Every attempt evaluates and scores every node (percentage 100, a single
 * feasible node scored too) so that the real node has a verdict and a
 * score, and stops at a FitError (no PostFilter: nothing is nominated or
 * preempted). Nothing is assumed, reserved or bound.
 *
 * Ownership: the replay holds a reference on the generation; the cache is
 * the caller's and must outlive the replay. Pods handed to
 * ks_replay_add_pod go to the cache. One thread (the caller's).
 */
#ifndef KS_SHADOW_REPLAY_H
#define KS_SHADOW_REPLAY_H

#include <stddef.h>

#include "base/error.h"
#include "cluster/cache.h"
#include "compare.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "shadow.h"

typedef struct ks_replay ks_replay_t;

/* opts: deterministic, run_all_filters, parallelism-related fields, bulk
 * and batching are used; the evaluation fields are overridden as above,
 * obs.cycle and writer are the replay's. NULL when out of memory. */
ks_replay_t *ks_replay_new(ks_generation_t *gen, ks_cache_t *cache,
                           const ks_sched_opts_t *opts);
void ks_replay_free(ks_replay_t *rp);

/* Replay the pods of scheduler NAME with profile PROFILE (names as
 * --shadow takes them, shadow.h; without, a pod's schedulerName names its
 * profile). Before ks_replay_add_pod. 0, or KS_EINVAL with err naming a
 * profile the generation lacks, or KS_ENOMEM. */
int ks_replay_map(ks_replay_t *rp, const ks_shadow_names_t *names,
                  ks_error_t *err);

/* A bound pod (node_name set), taken over: into the cache, and replayed
 * when a profile has its schedulerName (or the profile ks_replay_map
 * gives it). 0 (will be replayed), 1 (no
 * profile: it only stays where it is), or an error code with err filled
 * (the pod is freed). */
int ks_replay_add_pod(ks_replay_t *rp, ks_pod_t *pod, ks_error_t *err);
/* Pods added so far that will be replayed. */
size_t ks_replay_count(const ks_replay_t *rp);

/* Called once per replayed pod with ksched's cycle (r, for --explain)
 * and the comparison; both valid during the call only, but fn may keep
 * d's strings: copy *d and clear d (memset 0), which the replay then
 * frees as an empty decision. */
typedef void (*ks_replay_fn)(void *ud, const ks_cycle_result_t *r,
                             ks_shadow_decision_t *d);

/* Replay every pod, oldest first (creationTimestamp, then namespace and
 * name). 0, or an error code with err filled (out of memory; the pods
 * replayed so far were reported). */
int ks_replay_run(ks_replay_t *rp, ks_replay_fn fn, void *ud,
                  ks_error_t *err);

#endif
