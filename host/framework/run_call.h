/*
 * How the run_* functions call a plugin (runtime.c, bulk.c): recorded on
 * the call board (call_board.h) and, in sampled cycles, timed for the
 * plugin_duration metric. Private to host/framework.
 * Threads: any; timing_report calls the env's thread-safe callback.
 */
#ifndef KS_FW_RUN_CALL_H
#define KS_FW_RUN_CALL_H

#include "call_board.h"
#include "framework.h"
#include "status.h"

/* Are this cycle's plugin calls timed? Read once per run_* call. */
static inline int timing_on(const ks_framework_t *fw)
{
    const ks_fw_env_t *e = fw->env;
    return e != NULL && e->sample_plugins && e->plugin_duration != NULL;
}

/* The bits of a score outside [KS_MIN_NODE_SCORE, KS_MAX_NODE_SCORE]:
 * with x = score - min as unsigned, x and range - x both have the top bit
 * clear exactly when x <= range, so one OR over the row keeps that bit of
 * any score out of range (subtractions and ORs: the loop vectorizes). */
#define KS_SCORE_RANGE ((uint64_t)(KS_MAX_NODE_SCORE - KS_MIN_NODE_SCORE))
#define KS_SCORE_BAD(v)                                                        \
    (((uint64_t)(v) - (uint64_t)KS_MIN_NODE_SCORE) |                           \
     (KS_SCORE_RANGE - ((uint64_t)(v) - (uint64_t)KS_MIN_NODE_SCORE)))

/* A row NormalizeScore left in ns[k].score, checked and weighed: one
 * pass reads it there, writes row[k] (weighed) and the totals, in
 * unsigned arithmetic (no UB however far out of range). 1 when a score
 * was out of range: row then holds the normalized scores unweighed (as
 * ks_fw_run_score's weighing of other rows leaves them). first: the
 * totals are set, not added to. Any thread; ns, row and totals apart. */
static inline int ks_fw_weigh_normalized(const ks_node_score_t *restrict ns,
                                         int64_t *restrict row,
                                         int64_t *restrict totals,
                                         uint32_t n, int64_t w, int first)
{
    uint64_t bad = 0, uw = (uint64_t)w;
    uint32_t k;
    if (first)
        for (k = 0; k < n; k++) {
            int64_t v = ns[k].score;
            bad |= KS_SCORE_BAD(v);
            totals[k] = row[k] = (int64_t)((uint64_t)v * uw);
        }
    else
        for (k = 0; k < n; k++) {
            int64_t v = ns[k].score;
            bad |= KS_SCORE_BAD(v);
            row[k] = (int64_t)((uint64_t)v * uw);
            totals[k] = (int64_t)((uint64_t)totals[k] + (uint64_t)row[k]);
        }
    if (!(bad >> 63))
        return 0;
    for (k = 0; k < n; k++)
        row[k] = ns[k].score;
    return 1;
}

/* Report one timed call (t0 from ks_fw_mono_seconds) to the env. */
void ks_fw_timing_report(ks_framework_t *fw, const ks_plugin_inst_t *in,
                         int ep, ks_code_t code, double t0);

/* `c = call`, recorded on the call board (call_board.h) as plugin `in`'s
 * call at `ep` for `pod` when `rec`, and when `on`, the call timed and
 * reported as plugin `in`'s at `ep` with the code it returned. Off, it
 * costs one branch. */
#define TIMED_REC(rec, on, fw, in, pod, ep, c, call)                           \
    do {                                                                       \
        ks_board_slot_t *slot_ = ks_call_enter_if(                             \
            (rec), (in)->call_id, (ep), (in)->deadline_ms, (pod), (pod)->ns,   \
            (pod)->name);                                                      \
        if (on) {                                                              \
            double t0_ = ks_fw_mono_seconds();                                 \
            (c) = (call);                                                      \
            ks_fw_timing_report((fw), (in), (ep), (c), t0_);                  \
        } else {                                                               \
            (c) = (call);                                                      \
        }                                                                      \
        ks_call_leave(slot_);                                                  \
    } while (0)

/* Once-per-cycle calls: always recorded. */
#define TIMED(on, fw, in, pod, ep, c, call)                                    \
    TIMED_REC(1, on, fw, in, pod, ep, c, call)
/* Per-node calls (Filter, Score, AddPod/RemovePod): recorded for plugins
 * not shipped with ksched or with a deadline (framework.h: record_hot). */
#define TIMED_HOT(on, fw, in, pod, ep, c, call)                                \
    TIMED_REC((in)->record_hot, on, fw, in, pod, ep, c, call)

/* The same for plugin functions that return nothing (reported Success). */
#define TIMED_VOID(on, fw, in, pod, ep, call)                                  \
    do {                                                                       \
        ks_board_slot_t *slot_ = ks_call_enter(                                \
            (in)->call_id, (ep), (in)->deadline_ms, (pod), (pod)->ns,          \
            (pod)->name);                                                      \
        if (on) {                                                              \
            double t0_ = ks_fw_mono_seconds();                                 \
            call;                                                              \
            ks_fw_timing_report((fw), (in), (ep), KS_SUCCESS, t0_);           \
        } else {                                                               \
            call;                                                              \
        }                                                                      \
        ks_call_leave(slot_);                                                  \
    } while (0)

/* A plugin's Filter on one node with `state` (its KS_STATE_FILTER slot,
 * looked up by the caller): filter_with_state (since ABI 1.1), else
 * filter. */
static inline ks_code_t ks_fw_call_filter(const ks_plugin_inst_t *in,
                                          ks_cycle_state_t *cs, void *state,
                                          const ks_pod_t *pod,
                                          const ks_node_info_t *ni,
                                          ks_status_t *st)
{
    if (in->d->filter_with_state != NULL)
        return in->d->filter_with_state(in->self, cs, state, pod, ni, st);
    return in->d->filter(in->self, cs, pod, ni, st);
}

/* The same for Score, with its KS_STATE_SCORE slot. */
static inline ks_code_t ks_fw_call_score(const ks_plugin_inst_t *in,
                                         ks_cycle_state_t *cs, void *state,
                                         const ks_pod_t *pod,
                                         const ks_node_info_t *ni,
                                         int64_t *score, ks_status_t *st)
{
    if (in->d->score_with_state != NULL)
        return in->d->score_with_state(in->self, cs, state, pod, ni, score,
                                       st);
    return in->d->score(in->self, cs, pod, ni, score, st);
}

/* A status whose reasons are dropped unread (the bulk calls' scratch): it
 * is full from the start, so status_reason and status_reasonf return at
 * once. */
static inline void ks_fw_scratch_init(ks_status_t *st)
{
    st->code = KS_SUCCESS;
    st->plugin = NULL;
    st->n_reasons = KS_STATUS_MAX_REASONS;
}

#endif
