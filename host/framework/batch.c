/*
 * Opportunistic batching: pod signatures and the per-node results a cycle
 * may reuse from the previous one (see batch.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "call_board.h"
#include "cycle_state.h"
#include "pool.h"
#include "run_call.h"
#include "scheduler_impl.h"
#include "status.h"

int ks_batching_parse(const char *s)
{
    if (strcmp(s, "on") == 0)
        return KS_BATCHING_ON;
    if (strcmp(s, "off") == 0)
        return KS_BATCHING_OFF;
    if (strcmp(s, "verify") == 0)
        return KS_BATCHING_VERIFY;
    return -1;
}

void ks_sched_batch_free(ks_batch_t *b)
{
    free(b->cur);
    free(b->sig);
    free(b->f_gen);
    free(b->f_ep);
    free(b->s_ep);
    free(b->f_code);
    free(b->f_st);
    free(b->s_gen);
    free(b->s_raw);
    free(b->s_wt);
    free(b->s_tot);
    free(b->norm);
    memset(b, 0, sizeof *b);
}

static void sign_put(ks_signer_t *sg, const void *data, size_t n)
{
    ks_batch_t *b = (ks_batch_t *)sg; /* signer is the first member */
    if (b->cur_oom)
        return;
    if (b->cur_len + n > b->cur_cap) {
        size_t cap = (b->cur_len + n) * 2 + 64;
        uint8_t *p = realloc(b->cur, cap);
        if (p == NULL) {
            b->cur_oom = 1;
            return;
        }
        b->cur = p;
        b->cur_cap = cap;
    }
    memcpy(b->cur + b->cur_len, data, n);
    b->cur_len += n;
}

static int at_point(const ks_framework_t *fw, const ks_plugin_inst_t *in)
{
    static const ks_ext_point_t pts[] = {KS_EP_PRE_FILTER, KS_EP_FILTER,
                                         KS_EP_PRE_SCORE, KS_EP_SCORE};
    size_t k, i;
    for (k = 0; k < sizeof pts / sizeof pts[0]; k++)
        for (i = 0; i < fw->n_points[pts[k]]; i++)
            if (fw->points[pts[k]][i].inst == in)
                return 1;
    return 0;
}

/* The pod's signature into b->cur: 1, or 0 when it cannot be signed. */
static int sign_pod(ks_batch_t *b, const ks_framework_t *fw,
                    const ks_pod_t *pod)
{
    size_t i;
    b->signer.put = sign_put;
    b->cur_len = 0;
    b->cur_oom = 0;
    ks_sign_ptr(&b->signer, pod->scheduler_name);
    for (i = 0; i < fw->n_insts; i++) {
        ks_plugin_inst_t *in = fw->insts[i];
        if (!at_point(fw, in))
            continue;
        ks_board_slot_t *slot;
        ks_code_t c;
        if (!KS_PLUGIN_HAS(in->d, sign))
            return 0;
        ks_sign_ptr(&b->signer, in);
        /* a plugin call like any other: a crash in it names the plugin */
        slot = ks_call_enter(in->call_id, KS_CALL_SIGN, in->deadline_ms, pod,
                             pod->ns, pod->name);
        c = in->d->sign(in->self, pod, &b->signer);
        ks_call_leave(slot);
        if (c != KS_SUCCESS)
            return 0;
    }
    return !b->cur_oom;
}

#define GROW(field, n)                                                         \
    do {                                                                       \
        void *p_ = realloc((void *)b->field, (n) * sizeof *b->field);          \
        if (p_ == NULL)                                                        \
            return -1;                                                         \
        b->field = p_;                                                         \
    } while (0)

static int ensure(ks_batch_t *b, uint32_t n, size_t np)
{
    size_t raw = (size_t)n * (np ? np : 1);
    if (n > b->cap) {
        uint32_t cap = n + n / 4 + 16;
        GROW(f_gen, cap);
        GROW(f_ep, cap);
        GROW(f_code, cap);
        GROW(f_st, cap);
        GROW(s_gen, cap);
        GROW(s_ep, cap);
        GROW(s_tot, cap);
        /* the new entries hold nothing: epoch 0 is never current */
        memset(b->f_ep + b->cap, 0, (cap - b->cap) * sizeof *b->f_ep);
        memset(b->s_ep + b->cap, 0, (cap - b->cap) * sizeof *b->s_ep);
        if (b->f_epoch == 0)
            b->f_epoch = b->s_epoch = 1;
        b->kept = 0;
        b->cap = cap;
    }
    if (raw > b->cap_raw) {
        size_t cap = (size_t)b->cap * (np ? np : 1);
        GROW(s_raw, cap);
        GROW(s_wt, cap);
        b->cap_raw = cap;
        b->kept = 0;
    }
    return 0;
}

#undef GROW

/* Forget every kept score: the next epoch (a pass over the array only
 * when the epoch wraps). */
static void drop_scores(ks_batch_t *b)
{
    if (++b->s_epoch == 0) {
        memset(b->s_ep, 0, b->cap * sizeof *b->s_ep);
        b->s_epoch = 1;
    }
}

/* Forget every kept result. */
static void drop(ks_batch_t *b)
{
    if (++b->f_epoch == 0) {
        memset(b->f_ep, 0, b->cap * sizeof *b->f_ep);
        b->f_epoch = 1;
    }
    drop_scores(b);
}

static inline int f_kept(const ks_batch_t *b, uint32_t idx)
{
    return b->f_ep[idx] == b->f_epoch;
}

/* Remember the current pod's signature as the batch's (and what it was
 * computed with). 0, or -1 when out of memory. */
static int remember_sig(ks_batch_t *b, const ks_framework_t *fw,
                        const void *gen, size_t np)
{
    if (b->sig_cap < b->cur_len) {
        uint8_t *p = realloc(b->sig, b->cur_len);
        if (p == NULL)
            return -1;
        b->sig = p;
        b->sig_cap = b->cur_len;
    }
    if (b->cur_len)
        memcpy(b->sig, b->cur, b->cur_len);
    b->sig_len = b->cur_len;
    b->fw = fw;
    b->gen = gen;
    b->np = np;
    return 0;
}

int ks_sched_batch_begin(ks_scheduler_t *s, ks_framework_t *fw,
                         const ks_pod_t *pod, int full_eval, size_t n_ext)
{
    ks_batch_t *b = &s->bt;
    uint32_t n = ks_snapshot_num_nodes(s->snap);
    uint64_t changes = ks_snapshot_changes(s->snap);
    size_t np = fw->n_points[KS_EP_SCORE];
    int same, same_sig;
    b->active = 0;
    b->reusing = 0;
    b->verify = s->opts.batching == KS_BATCHING_VERIFY;
    if (s->opts.batching == KS_BATCHING_OFF || n_ext > 0 || full_eval ||
        n == 0 || (pod->nominated_node_name && pod->nominated_node_name[0]) ||
        s->env.n_nominated > 0 || !sign_pod(b, fw, pod)) {
        b->kept = 0; /* upstream: a pod that does not batch ends the batch */
        return 0;
    }
    if (ensure(b, n, np) != 0) {
        b->kept = 0;
        return -1;
    }
    same_sig = b->fw == fw && b->gen == s->gen && b->np == np &&
               b->sig_len == b->cur_len &&
               memcmp(b->sig, b->cur, b->cur_len) == 0;
    same = b->kept && same_sig;
    if (same && changes != b->changes_ref) {
        /* Only the node the previous pod went to may have changed. */
        const ks_node_info_t *x =
            b->last_idx < n ? ks_snapshot_node_at(s->snap, b->last_idx) : NULL;
        same = changes - b->changes_ref == 1 && x != NULL &&
               x->node == b->last_node && f_kept(b, b->last_idx) &&
               x->generation != b->f_gen[b->last_idx];
    }
    if (same) {
        b->fresh_unused = 0;
        b->wasted = 0;
        /* The one node that changed: its kept results go. Every other
         * node is as it was, so the lookups below need not compare
         * generations (reading them touched each NodeInfo: a cache miss
         * per node at 130,000 nodes). */
        if (changes != b->changes_ref) {
            b->f_ep[b->last_idx] = 0;
            b->s_ep[b->last_idx] = 0;
        }
    } else if (b->fresh_unused && b->wasted < 2) {
        b->wasted++; /* the last pod's kept results were never reused */
    }
    if (!same && !same_sig && remember_sig(b, fw, s->gen, np) != 0) {
        b->kept = 0;
        return -1;
    }
    if (!same && !same_sig && b->wasted >= 2) {
        /* Twice in a row a pod's kept results went unused (pods of many
         * ReplicaSets interleaved change signature every cycle, and kept
         * results cost such a cycle 2.4x the instructions of an unbatched
         * one, on the node-by-node paths). Until a reuse happens again, a
         * signature is only remembered the first time; a second pod with
         * it keeps its results for the third and later ones. */
        b->kept = 0;
        b->fresh_unused = 0;
        return 0;
    }
    if (!same) {
        drop(b);
        b->skip_score = 0;
        b->kept = 1;
        b->fresh_unused = 1;
    }
    b->changes_ref = changes;
    b->last_idx = UINT32_MAX;
    b->last_node = NULL;
    b->active = 1;
    b->reusing = same && !b->verify;
    return 0;
}

/* One difference verify found: counted and logged with the pod, the node
 * and what differed (kept: what batching would have reused). */
static void mismatch(ks_scheduler_t *s, const ks_pod_t *pod,
                     const ks_node_info_t *ni, const char *what,
                     const char *kept, const char *fresh)
{
    atomic_fetch_add(&s->bt.mismatches, 1);
    ks_log(KS_LOGL_ERROR,
           "batching verify: pod %s/%s, node %s: %s differs: kept %s, "
           "fresh %s",
           pod->ns, pod->name, ni->node ? ni->node->name : "?", what, kept,
           fresh);
}

static const char *code_name(ks_code_t c)
{
    switch (c) {
    case KS_SUCCESS: return "Success";
    case KS_ERROR: return "Error";
    case KS_UNSCHEDULABLE: return "Unschedulable";
    case KS_UNSCHEDULABLE_AND_UNRESOLVABLE:
        return "UnschedulableAndUnresolvable";
    case KS_WAIT: return "Wait";
    case KS_SKIP: return "Skip";
    case KS_PENDING: return "Pending";
    default: return "?";
    }
}

/* "Unschedulable (NodeResourcesFit: Insufficient cpu)" */
static void verdict_text(char *buf, size_t len, ks_code_t c,
                         const ks_status_t *st)
{
    char msg[400];
    if (c == KS_SUCCESS || st == NULL) {
        snprintf(buf, len, "%s", code_name(c));
        return;
    }
    snprintf(buf, len, "%s (%s: %s)", code_name(c),
             st->plugin ? st->plugin : "?",
             ks_status_message(st, msg, sizeof msg));
}

int ks_sched_batch_filter_get(ks_scheduler_t *s, uint32_t idx,
                              ks_code_t *c, const ks_status_t **st)
{
    ks_batch_t *b = &s->bt;
    /* no generation to compare: ks_sched_batch_begin dropped the changed
     * node's kept results */
    if (b->verify || !f_kept(b, idx))
        return 0;
    *c = b->f_code[idx];
    *st = *c != KS_SUCCESS ? &b->f_st[idx] : NULL;
    return 1;
}

int ks_sched_batch_filter_all_passed(const ks_scheduler_t *s, uint32_t at,
                                     const uint32_t *idx, uint32_t n)
{
    const ks_batch_t *b = &s->bt;
    const uint32_t ep = b->f_epoch;
    uint32_t r, bad = 0;
    if (b->verify)
        return 0;
    /* kept (f_ep is the epoch) and a Success (KS_SUCCESS is 0), branch
     * free so that the contiguous loop vectorizes */
    if (idx == NULL) {
        const uint32_t *e = b->f_ep + at;
        const ks_code_t *c = b->f_code + at;
        for (r = 0; r < n; r++)
            bad |= (e[r] ^ ep) | (uint32_t)c[r];
    } else {
        for (r = 0; r < n; r++)
            bad |= (b->f_ep[idx[r]] ^ ep) | (uint32_t)b->f_code[idx[r]];
    }
    return bad == 0;
}

void ks_sched_batch_add_reused(ks_scheduler_t *s, uint64_t n)
{
    if (n > 0)
        atomic_fetch_add_explicit(&s->bt.reused, n, memory_order_relaxed);
}

void ks_sched_batch_filter_put(ks_scheduler_t *s, const ks_pod_t *pod,
                               uint32_t idx, const ks_node_info_t *ni,
                               ks_code_t c, const ks_status_t *st)
{
    ks_batch_t *b = &s->bt;
    if (c == KS_ERROR) {
        b->f_ep[idx] = 0;
        return;
    }
    if (b->verify && f_kept(b, idx)) {
        atomic_fetch_add(&b->reused, 1);
        if (b->f_gen[idx] != ni->generation)
            /* kept for a node that changed since: a reuse would be wrong
             * even where the verdict happens to agree */
            mismatch(s, pod, ni, "the kept Filter verdict's node",
                     "an older generation", "changed");
        else if (b->f_code[idx] != c ||
            (c != KS_SUCCESS && !ks_status_equal(&b->f_st[idx], st))) {
            char kept[512], fresh[512];
            verdict_text(kept, sizeof kept, b->f_code[idx], &b->f_st[idx]);
            verdict_text(fresh, sizeof fresh, c, st);
            mismatch(s, pod, ni, "the Filter verdict", kept, fresh);
        }
    }
    b->f_code[idx] = c;
    if (c != KS_SUCCESS)
        ks_status_copy(&b->f_st[idx], st);
    b->f_gen[idx] = ni->generation;
    b->f_ep[idx] = b->f_epoch;
}

void ks_sched_batch_chosen(ks_scheduler_t *s, uint32_t idx)
{
    ks_batch_t *b = &s->bt;
    if (!b->active || idx == UINT32_MAX)
        return;
    b->last_idx = idx;
    b->last_node = ks_snapshot_node_at(s->snap, idx)->node;
}

/* --- Score ---------------------------------------------------------------- */

typedef struct bscore_job {
    ks_scheduler_t *s;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    uint32_t n;
    uint64_t skip;
    /* NormalizeScore's lists: plugin p's at norm + norm_at[p] * n (p with
     * NormalizeScore, not skipped), filled per chunk */
    ks_node_score_t *norm;
    uint8_t norm_at[64];
    atomic_int failed;
} bscore_job_t;

/* The Score plugins a chunk copies or weighs: those not skipped, their
 * rows, and the factor their kept raw scores are weighed by (the weight;
 * 1 for those with NormalizeScore, weighed after it). */
typedef struct bscore_act {
    size_t n;
    uint8_t p[64];
    uint8_t normalized[64];
    int64_t mul[64];
    int64_t *row[64];
    /* the rows a reuse writes: those of the plugins with NormalizeScore
     * (their lists are filled from them); rn of them, ra[r] their place
     * among the n. The others' kept scores stay where they are
     * (ks_cycle_result_score reads them there). */
    size_t rn;
    uint8_t ra[64];
} bscore_act_t;

/* Node k (snapshot index idx) scored afresh, its raw scores kept, its
 * rows weighed and its total of the plugins without NormalizeScore kept
 * beside them (what a reuse copies). 0, or -1 when a plugin failed or a
 * score was out of range (nothing kept: the caller re-runs Score for the
 * message). */
static int bscore_fresh(bscore_job_t *j, void *const *state,
                        const bscore_act_t *act, uint32_t k, uint32_t idx,
                        int have)
{
    ks_scheduler_t *s = j->s;
    ks_batch_t *b = &s->bt;
    size_t np = j->fw->n_points[KS_EP_SCORE], p, a;
    const ks_point_entry_t *pl = j->fw->points[KS_EP_SCORE];
    const ks_node_info_t *ni = s->feasible[k];
    int64_t *kept = b->s_raw + (size_t)idx * np, tot = 0;
    int64_t *wt = b->s_wt + (size_t)idx * np;
    for (p = 0; p < np; p++) {
        ks_plugin_inst_t *in = pl[p].inst;
        ks_board_slot_t *slot;
        ks_status_t st;
        ks_code_t c;
        int64_t v = 0;
        if ((j->skip >> p) & 1) {
            kept[p] = 0;
            continue;
        }
        st.code = KS_SUCCESS;
        st.plugin = NULL;
        st.n_reasons = 0;
        slot = ks_call_enter_if(in->record_hot, in->call_id, KS_EP_SCORE,
                                in->deadline_ms, j->pod, j->pod->ns,
                                j->pod->name);
        c = in->d->score_with_state
                ? in->d->score_with_state(in->self, j->cs, state[p], j->pod,
                                          ni, &v, &st)
                : in->d->score(in->self, j->cs, j->pod, ni, &v, &st);
        ks_call_leave(slot);
        if (c != KS_SUCCESS) {
            b->s_ep[idx] = 0;
            return -1;
        }
        if (have && b->verify && kept[p] != v) {
            char what[160], kv[32], fv[32];
            snprintf(what, sizeof what, "the raw Score of %s", in->name);
            snprintf(kv, sizeof kv, "%lld", (long long)kept[p]);
            snprintf(fv, sizeof fv, "%lld", (long long)v);
            mismatch(s, j->pod, ni, what, kv, fv);
        }
        kept[p] = v;
    }
    for (a = 0; a < act->n; a++) {
        int64_t v = kept[act->p[a]];
        if (!act->normalized[a] &&
            (v < KS_MIN_NODE_SCORE || v > KS_MAX_NODE_SCORE)) {
            b->s_ep[idx] = 0;
            return -1;
        }
        act->row[a][k] = wt[a] = v * act->mul[a];
        if (!act->normalized[a])
            tot += wt[a];
    }
    if (have && b->verify) {
        ks_sched_batch_add_reused(s, 1);
        if (b->s_gen[idx] != ni->generation)
            mismatch(s, j->pod, ni, "the kept Scores' node",
                     "an older generation", "changed");
    }
    s->totals[k] = b->s_tot[idx] = tot;
    b->s_gen[idx] = ni->generation;
    b->s_ep[idx] = b->s_epoch;
    return 0;
}

/* Reuses from position k on, while the nodes' scores are kept: each
 * one's kept total into the totals, and its kept weighed scores of the
 * plugins with NormalizeScore into their rows, R (act->rn, a constant
 * where inlined) of them. Returns the first position not reused (hi when
 * none is left). The arrays in locals: the stores into the rows cannot
 * change them. */
static inline __attribute__((always_inline)) uint32_t
reuse_run(const ks_batch_t *b, const bscore_act_t *act, const size_t R,
          size_t np, int64_t *restrict totals, uint32_t k, uint32_t hi)
{
    const uint32_t *fidx = b->fidx, *s_ep = b->s_ep, epoch = b->s_epoch;
    const int64_t *s_wt = b->s_wt, *s_tot = b->s_tot;
    int64_t *rows[64];
    uint8_t ra[64];
    size_t r;
    for (r = 0; r < R; r++) {
        ra[r] = act->ra[r];
        rows[r] = act->row[ra[r]];
    }
    for (; k < hi; k++) {
        uint32_t idx = fidx[k];
        const int64_t *wt = s_wt + (size_t)idx * np;
        if (s_ep[idx] != epoch)
            break;
        for (r = 0; r < R; r++)
            rows[r][k] = wt[ra[r]];
        totals[k] = s_tot[idx];
    }
    return k;
}

/* reuse_run with its count of rows a constant for the usual counts
 * (any other count: the same loop, not unrolled). */
static uint32_t reuse_scores(const ks_batch_t *b, const bscore_act_t *act,
                             size_t np, int64_t *totals, uint32_t k,
                             uint32_t hi)
{
    switch (act->rn) {
    case 0:
        return reuse_run(b, act, 0, np, totals, k, hi);
    case 1:
        return reuse_run(b, act, 1, np, totals, k, hi);
    case 2:
        return reuse_run(b, act, 2, np, totals, k, hi);
    case 3:
        return reuse_run(b, act, 3, np, totals, k, hi);
    case 4:
        return reuse_run(b, act, 4, np, totals, k, hi);
    default:
        return reuse_run(b, act, act->rn, np, totals, k, hi);
    }
}

static void bscore_chunk(void *ud, uint32_t lo, uint32_t hi, unsigned worker)
{
    bscore_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    ks_batch_t *b = &s->bt;
    size_t np = j->fw->n_points[KS_EP_SCORE], p;
    const ks_point_entry_t *pl = j->fw->points[KS_EP_SCORE];
    uint32_t k;
    uint64_t reused = 0;
    /* score_with_state (since ABI 1.1): the PreScore state, looked up once
     * per chunk as ks_fw_run_score does */
    void *state[64];
    bscore_act_t act;
    (void)worker;
    act.n = 0;
    act.rn = 0;
    for (p = 0; p < np && p < 64; p++) {
        state[p] = pl[p].inst->d->score_with_state
                       ? ks_cycle_state_slot_get(j->cs, &pl[p].inst->handle,
                                                 KS_STATE_SCORE)
                       : NULL;
        if (!((j->skip >> p) & 1)) {
            int norm = pl[p].inst->d->normalize_score != NULL;
            if (norm)
                act.ra[act.rn++] = (uint8_t)act.n;
            act.p[act.n] = (uint8_t)p;
            act.normalized[act.n] = (uint8_t)norm;
            act.mul[act.n] = norm ? 1 : pl[p].weight;
            act.row[act.n++] = s->scores + p * j->n;
        }
    }
    /* A node whose scores are kept: its raw scores weighed into the rows
     * (as ks_fw_run_score leaves them) and its kept total; they were in
     * range when kept. Any other node is scored afresh. */
    for (k = lo; k < hi; k++) {
        uint32_t idx;
        if (!b->verify) {
            uint32_t from = k;
            k = reuse_scores(b, &act, np, s->totals, k, hi);
            reused += k - from;
            if (k == hi)
                break;
        }
        idx = b->fidx[k];
        if (bscore_fresh(j, state, &act, k, idx,
                         b->s_ep[idx] == b->s_epoch) != 0) {
            atomic_store(&j->failed, 1);
            ks_sched_batch_add_reused(s, reused);
            return;
        }
    }
    /* The plugins with NormalizeScore: this chunk's part of their lists */
    for (p = 0; p < np; p++) {
        const int64_t *row = s->scores + p * j->n;
        ks_node_score_t *ns;
        if (((j->skip >> p) & 1) || !pl[p].inst->d->normalize_score)
            continue;
        ns = j->norm + (size_t)j->norm_at[p] * j->n;
        /* the names from the snapshot's list (one sequential load each)
         * rather than through every NodeInfo and Node */
        if (s->names_ok)
            for (k = lo; k < hi; k++) {
                ns[k].node_name = s->feasible_names[k];
                ns[k].score = row[k];
            }
        else
            for (k = lo; k < hi; k++) {
                ns[k].node_name = s->feasible[k]->node->name;
                ns[k].score = row[k];
            }
    }
    ks_sched_batch_add_reused(s, reused);
}

/* The same job when the cycle reuses the kept scores (b->reusing): a
 * call site of its own, so that the pool's estimate of a reusing job
 * (about a nanosecond a node) is not averaged with a fresh one's. */
static void bscore_chunk_reuse(void *ud, uint32_t lo, uint32_t hi,
                               unsigned worker)
{
    bscore_chunk(ud, lo, hi, worker);
}

/* After NormalizeScore: the normalized scores back into their rows,
 * checked and weighed into the totals, for the nodes [lo, hi). */
static void bnorm_chunk(void *ud, uint32_t lo, uint32_t hi, unsigned worker)
{
    bscore_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    size_t np = j->fw->n_points[KS_EP_SCORE], p;
    const ks_point_entry_t *pl = j->fw->points[KS_EP_SCORE];
    (void)worker;
    for (p = 0; p < np; p++) {
        int64_t *row = s->scores + p * j->n;
        const ks_node_score_t *ns;
        if (((j->skip >> p) & 1) || !pl[p].inst->d->normalize_score)
            continue;
        ns = j->norm + (size_t)j->norm_at[p] * j->n;
        if (ks_fw_weigh_normalized(ns + lo, row + lo, s->totals + lo,
                                   hi - lo, pl[p].weight, 0)) {
            atomic_store(&j->failed, 1); /* the caller re-runs Score */
            return;
        }
    }
}

ks_code_t ks_sched_batch_score(ks_scheduler_t *s, ks_framework_t *fw,
                               ks_cycle_state_t *cs, const ks_pod_t *pod,
                               uint32_t n)
{
    ks_batch_t *b = &s->bt;
    size_t np = fw->n_points[KS_EP_SCORE], p;
    uint64_t skip = *ks_cycle_state_skip_score(cs);
    bscore_job_t j;
    size_t n_norm = 0, n_act = 0;
    uint32_t chunk;
    ks_code_t c = KS_SUCCESS;

    if (skip != b->skip_score) {
        drop_scores(b);
        b->skip_score = skip;
    }
    memset(&j, 0, sizeof j);
    j.s = s;
    j.fw = fw;
    j.cs = cs;
    j.pod = pod;
    j.n = n;
    j.skip = skip;
    if (np > 64)
        return KS_ERROR; /* the unbatched Score handles any number */
    /* skipped rows are left as they are, as ks_fw_run_score leaves them
     * (skipped[] says which); the reused scores of the plugins without
     * NormalizeScore stay in s_wt (the view says where) */
    s->kept_view.wt = b->s_wt;
    s->kept_view.fidx = b->fidx;
    s->kept_view.np = np;
    for (p = 0; p < np; p++) {
        int norm = fw->points[KS_EP_SCORE][p].inst->d->normalize_score != NULL;
        s->skipped[p] = (skip >> p) & 1;
        s->kept_view.at[p] = KS_SCORE_IN_ROW;
        if (s->skipped[p])
            continue;
        if (norm)
            j.norm_at[p] = (uint8_t)n_norm++;
        else
            s->kept_view.at[p] = (uint8_t)n_act;
        n_act++; /* s_wt's order: the plugins not skipped */
    }
    if (n_norm * n > b->cap_norm) {
        size_t cap = n_norm * n + n_norm * n / 4 + 64;
        ks_node_score_t *nn = realloc(b->norm, cap * sizeof *nn);
        if (nn == NULL)
            return KS_ERROR;
        b->norm = nn;
        b->cap_norm = cap;
    }
    j.norm = b->norm;
    /* Score, the plugins without NormalizeScore weighed and the lists of
     * those with it filled, on the workers; NormalizeScore here; the
     * normalized rows weighed on the workers again. */
    chunk = n / (4 * ks_pool_size(fw->pool)) + 1;
    ks_pool_run_affine(fw->pool, n, chunk,
                       b->reusing ? bscore_chunk_reuse : bscore_chunk, &j);
    if (atomic_load(&j.failed))
        return KS_ERROR;
    if (n_norm == 0)
        return KS_SUCCESS;
    for (p = 0; p < np && c == KS_SUCCESS; p++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_SCORE][p].inst;
        ks_status_t st;
        ks_board_slot_t *slot;
        if (s->skipped[p] || in->d->normalize_score == NULL)
            continue; /* no NormalizeScore: weighted by bscore_chunk */
        ks_status_reset(&st);
        slot = ks_call_enter(in->call_id, KS_FW_EP_NORMALIZE_SCORE,
                             in->deadline_ms, pod, pod->ns, pod->name);
        if (in->d->normalize_score(in->self, cs, pod,
                                   b->norm + (size_t)j.norm_at[p] * n, n,
                                   &st) != KS_SUCCESS)
            c = KS_ERROR;
        ks_call_leave(slot);
    }
    if (c != KS_SUCCESS)
        return c;
    ks_pool_run_affine(fw->pool, n, chunk, bnorm_chunk, &j);
    /* out of range: the caller re-runs Score for the message */
    return atomic_load(&j.failed) ? KS_ERROR : KS_SUCCESS;
}

void ks_scheduler_set_batching(ks_scheduler_t *s, int mode)
{
    s->opts.batching = mode;
    s->bt.kept = 0;
}
