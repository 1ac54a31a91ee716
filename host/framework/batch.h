/*
 * Opportunistic batching (upstream v1.35, KEP 5598), ksched's form.
 *
 * Each plugin at PreFilter, Filter, PreScore and Score puts what it reads
 * of the pod into the pod's signature (the SDK's `sign` slot). A pod whose
 * signature equals the one of the previous batched cycle (same profile,
 * same framework) reuses that cycle's per-node results: the Filter verdict
 * (with its status) and every Score plugin's raw score, kept per node with
 * the NodeInfo generation they were computed on. A node whose NodeInfo
 * changed since (the node the previous pod was assumed on) is evaluated
 * again; the rotation of the start node, the number of feasible nodes
 * looked for, NormalizeScore, weights and the choice among the best run
 * as without batching, so the decision is the unbatched one. Any other
 * change to the cluster (more than that one node's NodeInfo refreshed in
 * the snapshot, the node object replaced, nodes added or removed, a
 * generation swap) drops every kept result. Batching is off for a cycle
 * when a plugin cannot sign the pod (or has no `sign`), when pods are
 * nominated anywhere (Filter then adds them), when the pod has a
 * nominated node, when extenders are configured, and for the --explain
 * pod.
 *
 * Modes: on (the default, as upstream's beta), off, and verify: reuse
 * nothing but compute every kept result afresh and compare it with what
 * batching would have reused; each difference is logged and counted
 * (ks_sched_stats_t.batch_mismatches).
 *
 * Threads: the loop thread, except ks_sched_batch_filter_* and the score
 * workers, which read and write the entries of their own nodes.
 * Ownership: the scheduler owns one ks_batch_t (scheduler_impl.h).
 */
#ifndef KS_BATCH_H
#define KS_BATCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "framework.h"

struct ks_scheduler;

typedef struct ks_batch {
    ks_signer_t signer; /* first: put() finds the batch from it */
    /* the signature of this cycle's pod, and of the kept results */
    uint8_t *cur, *sig;
    size_t cur_len, cur_cap, sig_len, sig_cap;
    int cur_oom;
    int kept;                  /* the per-node results below are usable */
    const ks_framework_t *fw;  /* of the kept results */
    const void *gen;
    uint64_t changes_ref;      /* snapshot changes when last used */
    uint32_t last_idx;         /* node the last batched pod went to */
    const ks_node_t *last_node;
    uint64_t skip_score;       /* PreScore's Skip set of the kept scores */
    /* fresh_unused: the last batched pod started a new batch that no pod
     * has reused yet; wasted: how many such batches in a row (at 2, a new
     * signature is only remembered, ks_sched_batch_begin) */
    int fresh_unused, wasted;
    size_t np;                 /* Score plugins per entry */
    /* per snapshot node index */
    uint32_t cap;
    /* A node's kept Filter result holds while f_ep[idx] is f_epoch and
     * f_gen[idx] its NodeInfo generation (scores: s_ep, s_epoch, s_gen).
     * Forgetting every kept result is one epoch step, not a pass over the
     * arrays: pods that change signature from one cycle to the next (pods
     * of many ReplicaSets interleaved) paid that pass every cycle. Epoch 0
     * is never current. */
    uint64_t *f_gen;
    uint32_t *f_ep, f_epoch;
    ks_code_t *f_code;
    ks_status_t *f_st;
    uint64_t *s_gen;
    uint32_t *s_ep, s_epoch;
    int64_t *s_raw;            /* np per node */
    /* np per node: the kept scores of the plugins not skipped, in their
     * order, weighed as the rows hold them (a reuse copies these) */
    int64_t *s_wt;
    /* per node: its kept scores of the plugins without NormalizeScore,
     * weighed and summed (a reuse's total before the normalized rows) */
    int64_t *s_tot;
    size_t cap_raw;
    /* this cycle's feasible nodes' indices: the scheduler's
     * feasible_idx, borrowed (not freed here) */
    const uint32_t *fidx;
    /* NormalizeScore's lists, one of the feasible nodes per plugin that
     * has it, filled by the Score workers (ks_sched_batch_score) */
    ks_node_score_t *norm;
    size_t cap_norm;
    /* this cycle */
    int active;
    int verify;
    /* the cycle reuses the kept results (all but the last pod's node):
     * its Filter and Score jobs cost a few nanoseconds a node, a fresh
     * cycle's a hundred times more. The two kinds run as two call sites
     * of the pool (pool.h), each with its own estimate. */
    int reusing;
    /* nodes whose kept results were reused (verify: compared), and
     * differences found in verify mode; counted by the workers, each
     * adding its chunk's count once (ks_sched_batch_add_reused), on a
     * cache line of their own: a counter bumped per node next to the
     * arrays every worker reads cost more than the Filter it saved */
    _Alignas(64) _Atomic uint64_t reused;
    _Atomic uint64_t mismatches;
    char pad_[64 - 2 * sizeof(uint64_t)];
} ks_batch_t;

enum { KS_BATCHING_ON = 0, KS_BATCHING_OFF = 1, KS_BATCHING_VERIFY = 2 };

/* "on", "off", "verify" -> KS_BATCHING_*, or -1. */
int ks_batching_parse(const char *s);

/* A scheduling cycle of `pod` starts (snapshot updated, scratch sized):
 * decide whether it batches (b->active) and drop what can no longer be
 * reused. 0, or -1 when out of memory (the cycle then runs unbatched). */
int ks_sched_batch_begin(struct ks_scheduler *s, ks_framework_t *fw,
                         const ks_pod_t *pod, int full_eval, size_t n_ext);
/* Filter of node idx for the active cycle: 1 with *c and *st, the kept
 * result (*st points at the kept status, valid until the node's next
 * put; NULL for a Success), or 0 (run Filter, then
 * ks_sched_batch_filter_put). In verify mode always 0; the put compares.
 * Workers; the caller counts the 1s and adds them with
 * ks_sched_batch_add_reused once per chunk. */
int ks_sched_batch_filter_get(struct ks_scheduler *s, uint32_t idx,
                              ks_code_t *c, const ks_status_t **st);
/* Have the n nodes at snapshot indices at..at+n (idx NULL) or idx[0..n)
 * all a kept Success for the active cycle? 1: each counts as a reused
 * verdict (the caller adds them), 0: ask ks_sched_batch_filter_get node
 * by node. Always 0 in verify mode. One pass over the kept epochs and
 * codes, for a run of Filter positions (schedule_pod.c's FILTER_RUN).
 * Workers. */
int ks_sched_batch_filter_all_passed(const struct ks_scheduler *s,
                                     uint32_t at, const uint32_t *idx,
                                     uint32_t n);
void ks_sched_batch_add_reused(struct ks_scheduler *s, uint64_t n);
void ks_sched_batch_filter_put(struct ks_scheduler *s, const ks_pod_t *pod,
                               uint32_t idx, const ks_node_info_t *ni,
                               ks_code_t c, const ks_status_t *st);
/* upstream prioritizeNodes' Score with the kept raw scores: as
 * ks_fw_run_score (same rows, totals and skipped flags). KS_SUCCESS, or
 * anything else: the caller runs ks_fw_run_score instead (errors keep
 * their exact messages there). */
ks_code_t ks_sched_batch_score(struct ks_scheduler *s, ks_framework_t *fw,
                               ks_cycle_state_t *cs, const ks_pod_t *pod,
                               uint32_t n_feasible);
/* The cycle chose the node at snapshot index idx (UINT32_MAX: none). */
void ks_sched_batch_chosen(struct ks_scheduler *s, uint32_t idx);
void ks_sched_batch_free(ks_batch_t *b);

/* Switch the mode (KS_BATCHING_*) between cycles; whatever was kept is
 * dropped. Loop thread. */
void ks_scheduler_set_batching(struct ks_scheduler *s, int mode);

#endif
