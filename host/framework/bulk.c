/*
 * Bulk Filter (framework.h ks_fw_run_filter_bulk): the Filter plugins of a
 * cycle run plugin by plugin over a run of nodes, each plugin called once
 * per run through its filter_nodes (plugin.h, since ABI 1.2) or, without
 * one, node by node, and only on the nodes every earlier plugin passed. A
 * node that fails is reported back with pass 0, and the caller runs the
 * ordinary node-by-node Filter on it for its status, so rejections keep
 * their exact codes, reasons and plugin, with or without run_all.
 *
 * The in-tree plugins and the host both gain: one indirect call per
 * plugin per run instead of per node (the states are looked up once per
 * cycle, in the plan), and each plugin's loop stays on its own fields of
 * a few NodeInfos that are still in cache.
 *
 * The plan may run one plugin first, out of the list's order: the one
 * that lately rejected the largest share of the nodes it saw (a topology
 * spread constraint rejecting two zones of three, say), so the others
 * see only what it passed. Verdicts do not depend on the order (each
 * plugin's depends only on the pod, the node and the cycle state); the
 * nodes it rejected are reported with the first plugin as rejector, so
 * their statuses, asked later, follow the list's order.
 * Threads: ks_fw_bulk_plan_init and ks_fw_bulk_learn on the loop thread,
 * ks_fw_run_filter_bulk on worker threads, several at once for different
 * runs of one plan.
 */
#include "framework.h"

#include <string.h>

#include <ksched/helpers.h>

#include "batch.h"
#include "cycle_state.h"
#include "pass_bits.h"
#include "run_call.h"
#include "status.h"

_Static_assert((int)KS_BULK_ON == (int)KS_BATCHING_ON &&
                   (int)KS_BULK_OFF == (int)KS_BATCHING_OFF &&
                   (int)KS_BULK_VERIFY == (int)KS_BATCHING_VERIFY,
               "--bulk and --batching take the same words");

int ks_bulk_parse(const char *s)
{
    return ks_batching_parse(s);
}

int ks_fw_filter_bulk_ok(const ks_framework_t *fw)
{
    const ks_fw_env_t *e = fw->env;
    return e != NULL && e->bulk != KS_BULK_OFF && !timing_on(fw) &&
           e->n_nominated == 0;
}

int ks_fw_bulk_verified(ks_fw_env_t *env, int differs)
{
    __atomic_add_fetch(&env->bulk_compared, 1, __ATOMIC_RELAXED);
    if (differs)
        __atomic_add_fetch(&env->bulk_mismatches, 1, __ATOMIC_RELAXED);
    return differs;
}

void ks_fw_bulk_plan_init(ks_framework_t *fw, ks_cycle_state_t *cs,
                          int may_lead, ks_fw_bulk_plan_t *plan)
{
    size_t np = fw->n_points[KS_EP_FILTER];
    const ks_point_entry_t *pl = fw->points[KS_EP_FILTER];
    /* the plugins PreFilter did not skip, in order, by their bits */
    uint64_t todo = (np >= 64 ? ~0ull : (1ull << np) - 1) &
                    ~*ks_cycle_state_skip_filter(cs);
    uint32_t n = 0;
    int lead = fw->bulk_lead - 1;
    plan->lead = 0;
    plan->first_at = todo ? (uint8_t)__builtin_ctzll(todo) : 0;
    if (may_lead && lead > (int)plan->first_at && (todo >> lead & 1)) {
        /* the lead first, out of the list's order */
        plan->step[n].in = pl[lead].inst;
        plan->step[n++].at = (uint8_t)lead;
        todo &= ~(1ull << lead);
        plan->lead = 1;
    }
    for (; todo != 0; todo &= todo - 1, n++) {
        plan->step[n].at = (uint8_t)__builtin_ctzll(todo);
        plan->step[n].in = pl[plan->step[n].at].inst;
    }
    plan->n = n;
    for (n = 0; n < plan->n; n++) {
        ks_plugin_inst_t *in = plan->step[n].in;
        plan->step[n].state = in->d->filter_with_state
                                  ? ks_cycle_state_slot_get(cs, &in->handle,
                                                            KS_STATE_FILTER)
                                  : NULL;
    }
}

void ks_fw_bulk_learn(ks_framework_t *fw, const ks_fw_bulk_counts_t *c)
{
    size_t i, np = fw->n_points[KS_EP_FILTER];
    const ks_point_entry_t *pl = fw->points[KS_EP_FILTER];
    double best = KS_FW_LEAD_SHARE;
    int lead = 0;
    if (np > KS_FW_MAX_MASKED_PLUGINS)
        np = KS_FW_MAX_MASKED_PLUGINS;
    for (i = 0; i < np; i++) {
        /* a cycle's weight halves in about two cycles */
        fw->bulk_seen[i] = fw->bulk_seen[i] * 0.75 + c->seen[i];
        fw->bulk_rejected[i] = fw->bulk_rejected[i] * 0.75 + c->rejected[i];
        /* a lead calls its filter_nodes: a plugin without one would be
         * called node by node on every node */
        if (fw->bulk_seen[i] >= 32 && pl[i].inst->d->filter_nodes != NULL &&
            fw->bulk_rejected[i] >= best * fw->bulk_seen[i]) {
            best = fw->bulk_rejected[i] / fw->bulk_seen[i];
            lead = (int)i + 1;
        }
    }
    fw->bulk_lead = lead;
}

/* The run's bytes 16 at a time (GCC's portable vector extension: SSE2 on
 * x86-64, NEON on arm64, plain words elsewhere). */
typedef uint8_t bytes16_t __attribute__((vector_size(16)));
#define LANES 16
_Static_assert(KS_FW_BULK_MAX % LANES == 0, "whole vectors");

static inline bytes16_t load16(const uint8_t *p)
{
    bytes16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The number of bytes of v (each 0 or 1) that are 1. */
static inline uint32_t ones16(bytes16_t v)
{
    uint64_t w[2];
    memcpy(w, &v, sizeof w);
    return (uint32_t)(((w[0] + w[1]) * UINT64_C(0x0101010101010101)) >> 56);
}

/* Are a[0..n) and b[0..n) the same, n rounded up to LANES (both have
 * room)? */
static inline int runs_equal(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    bytes16_t x = {0};
    uint64_t w[2];
    uint32_t k;
    for (k = 0; k < n; k += LANES)
        x |= load16(a + k) ^ load16(b + k);
    memcpy(w, &x, sizeof w);
    return (w[0] | w[1]) == 0;
}

/* After a filter_nodes call: before[] (0 or 1) was pass[] before it. A
 * node it set to 0 is rejected there, to anything but 1 unsure (its
 * rejector rej, with KS_FW_BULK_UNSURE); a node it set back to passing
 * keeps what it had. Whole vectors: the arrays have room, and the bytes
 * past n are 1 in both (ks_fw_run_filter_bulk). Returns how many it
 * rejected. */
static inline uint32_t settle(const uint8_t *before, uint8_t *pass,
                              uint8_t *rejector, uint32_t n, uint8_t rej)
{
    const bytes16_t one = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    bytes16_t r = one * rej, unsure = one * KS_FW_BULK_UNSURE;
    uint32_t k, newly = 0;
    for (k = 0; k < n; k += LANES) {
        bytes16_t b = load16(before + k), p = load16(pass + k);
        bytes16_t kept = (bytes16_t)(p == one);   /* 0xff: still passing */
        bytes16_t out = b & ~kept;                /* 1: rejected now */
        bytes16_t m = (bytes16_t)(out == one);    /* 0xff: rejected now */
        bytes16_t v = r | (unsure & ~(bytes16_t)(p == 0));
        bytes16_t old = load16(rejector + k);
        bytes16_t nw = (v & m) | (old & ~m);
        newly += ones16(out);
        b &= kept;
        memcpy(pass + k, &b, sizeof b);
        memcpy(rejector + k, &nw, sizeof nw);
    }
    return newly;
}

/* One step of a run: plugin st over nodes[0..n), pass[] and rejector[]
 * as ks_fw_run_filter_bulk's, rej the rejector it gives. Returns how many
 * nodes it rejected, or UINT32_MAX when its filter_nodes failed (then
 * every node it was asked about is rejected, unsure). */
static uint32_t run_step(ks_framework_t *fw, const ks_fw_bulk_step_t *st,
                         ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const ks_node_info_t *const *nodes,
                         const uint32_t *pos, uint32_t n, uint8_t *pass,
                         uint8_t *rejector, uint8_t rej)
{
    ks_plugin_inst_t *in = st->in;
    ks_status_t scratch;
    uint32_t k, newly = 0;
    ks_code_t c;
    ks_fw_scratch_init(&scratch);
    if (in->d->filter_nodes != NULL) {
        uint8_t before[KS_FW_BULK_MAX];
        memcpy(before, pass, KS_FW_BULK_MAX);
        /* Each plugin skips the nodes an earlier one rejected
         * (plugin.h). */
        ks_fw_bulk_ctx_enter(fw->env, nodes, pos);
        TIMED_HOT(0, fw, in, pod, KS_EP_FILTER, c,
                  in->d->filter_nodes(in->self, cs, st->state, pod, nodes, n,
                                      pass, &scratch));
        ks_fw_bulk_ctx_leave();
        if (c != KS_SUCCESS) {
            /* the node-by-node Filter decides, from this plugin on */
            for (k = 0; k < n; k++)
                if (before[k]) {
                    pass[k] = 0;
                    rejector[k] = (uint8_t)(rej | KS_FW_BULK_UNSURE);
                }
            return UINT32_MAX;
        }
        /* it rejected none: the common case */
        return runs_equal(before, pass, n)
                   ? 0
                   : settle(before, pass, rejector, n, rej);
    }
    for (k = 0; k < n; k++) {
        if (!pass[k])
            continue;
        ks_fw_scratch_init(&scratch);
        TIMED_HOT(0, fw, in, pod, KS_EP_FILTER, c,
                  ks_fw_call_filter(in, cs, st->state, pod, nodes[k],
                                    &scratch));
        if (c != KS_SUCCESS) {
            /* a rejection, or (2) anything else: asked again at once */
            pass[k] = 0;
            rejector[k] = (uint8_t)(ks_bulk_verdict(c) == 0
                                        ? rej
                                        : rej | KS_FW_BULK_UNSURE);
            newly++;
        }
    }
    return newly;
}

_Thread_local ks_fw_bulk_ctx_t ks_fw_bulk_ctx;

void ks_fw_bulk_ctx_enter(const ks_fw_env_t *env,
                          const ks_node_info_t *const *nodes,
                          const uint32_t *pos)
{
    const ks_node_columns_t *cols;
    if (pos == NULL || env == NULL || env->snapshot == NULL ||
        (cols = ks_snapshot_columns(env->snapshot)) == NULL)
        return;
    ks_fw_bulk_ctx.nodes = nodes;
    ks_fw_bulk_ctx.pos = pos;
    ks_fw_bulk_ctx.cols = cols;
}

void ks_fw_run_filter_bulk(ks_framework_t *fw, const ks_fw_bulk_plan_t *plan,
                           ks_cycle_state_t *cs, const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes,
                           const uint32_t *pos, uint32_t n, uint8_t *pass,
                           uint8_t *rejector, ks_fw_bulk_counts_t *counts)
{
    /* Once a step has rejected a quarter of the run, the nodes left are
     * packed (in order) so that the later plugins' loops skip nothing. */
    const ks_node_info_t *packed[KS_FW_BULK_MAX];
    uint8_t ppass[KS_FW_BULK_MAX], prej[KS_FW_BULK_MAX];
    const ks_node_info_t *const *cur = nodes;
    uint32_t ppos_buf[KS_FW_BULK_MAX];
    const uint32_t *cpos = pos;
    uint8_t *cp = pass, *cr = rejector;
    uint32_t s, cn = n, alive = n;
    uint64_t m, packed_from = 0; /* the positions packed, by bit */

    /* all of it: runs_equal and settle read whole vectors past n (and
     * settle blends the rejector of every lane: all defined) */
    memset(pass, 1, KS_FW_BULK_MAX);
    memset(rejector, 0, KS_FW_BULK_MAX);
    for (s = 0; s < plan->n && alive > 0; s++) {
        const ks_fw_bulk_step_t *st = &plan->step[s];
        /* a node the lead rejects: its status from the first plugin on */
        uint8_t rej = s == 0 && plan->lead ? plan->first_at : st->at;
        uint32_t newly = run_step(fw, st, cs, pod, cur, cpos, cn, cp, cr,
                                  rej);
        if (newly == UINT32_MAX)
            break; /* every node left is rejected */
        if (counts != NULL) {
            counts->seen[st->at] += alive;
            counts->rejected[st->at] += newly;
        }
        alive -= newly;
        if (cur == nodes && newly > 0 && alive > 0 && s + 1 < plan->n &&
            4 * alive <= 3 * n) {
            uint32_t d = 0;
            packed_from = ks_pass_mask(pass, n);
            for (m = packed_from; m != 0; m &= m - 1) {
                uint32_t k = (uint32_t)__builtin_ctzll(m);
                if (pos != NULL)
                    ppos_buf[d] = pos[k];
                packed[d++] = nodes[k];
            }
            cpos = pos != NULL ? ppos_buf : NULL;
            memset(ppass, 1, KS_FW_BULK_MAX);
            memset(prej, 0, KS_FW_BULK_MAX);
            cur = packed;
            cn = d;
            cp = ppass;
            cr = prej;
        }
    }
    if (cur != nodes && ks_pass_mask(ppass, cn) != ks_pass_all(cn)) {
        /* the packed nodes' rejections back at their places (the d-th
         * packed node is the d-th bit of packed_from) */
        uint32_t d = 0;
        for (m = packed_from; m != 0; m &= m - 1, d++)
            if (!ppass[d]) {
                uint32_t k = (uint32_t)__builtin_ctzll(m);
                pass[k] = 0;
                rejector[k] = prej[d];
            }
    }
}
