/*
 * upstream schedulePod, step by step: findNodesThatFitPod (PreFilter, the
 * node a previous preemption nominated, Filter over the candidate nodes in
 * parallel from a round-robin start), then prioritizeNodes (PreScore,
 * Score) and selectHost (select_host.c).
 *
 * The per-cycle arrays (statuses by node, candidates, feasible nodes,
 * scores) are the scheduler's scratch, grown to the snapshot and reused;
 * a cycle's result points into them until the next cycle.
 * Threads: the loop thread; filter_chunk runs on the Filter workers, each
 * writing the entries of its own positions and nodes.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "pass_bits.h"
#include "pool.h"
#include "status.h"
#include "scheduler_impl.h"

/* --- scratch ------------------------------------------------------------------ */

/* realloc one scratch array; on failure the old one stays and the
 * enclosing function returns -1. */
#define GROW(field, size)                                                      \
    do {                                                                       \
        void *p_ = realloc((void *)s->field, (size));                          \
        if (p_ == NULL)                                                        \
            return -1;                                                         \
        s->field = p_;                                                         \
    } while (0)

/* Grow every array to hold one cycle over n nodes and n_score Score
 * plugins. 0, or -1 with the arrays and capacities still valid (some may
 * have grown; the capacities say what every one of them holds). */
static int ensure_scratch(ks_scheduler_t *s, uint32_t n, size_t n_score)
{
    size_t rows = n_score ? n_score : 1;
    if (n > s->cap_nodes) {
        uint32_t cap = n + n / 4 + 16;
        GROW(smap.st, cap * sizeof *s->smap.st);
        GROW(smap.set, cap);
        GROW(set_list, cap * sizeof *s->set_list);
        memset(s->smap.set, 0, cap);
        s->n_set = 0;
        s->set_all = 0;
        GROW(cand, cap * sizeof *s->cand);
        s->cand_identity = 0;
        GROW(feasible_flag, cap);
        GROW(lazy_rej, cap);
        GROW(feasible, cap * sizeof *s->feasible);
        GROW(feasible_names, cap * sizeof *s->feasible_names);
        GROW(feasible_idx, cap * sizeof *s->feasible_idx);
        s->bt.fidx = s->feasible_idx;
        GROW(totals, cap * sizeof *s->totals);
        GROW(tie_at, cap * sizeof *s->tie_at);
        s->cap_nodes = cap;
    }
    if ((size_t)s->cap_nodes * rows > s->cap_scores) {
        GROW(scores, (size_t)s->cap_nodes * rows * sizeof *s->scores);
        GROW(skipped, n_score + 64);
        s->cap_scores = (size_t)s->cap_nodes * rows;
    }
    s->smap.n = n;
    s->smap.snap = s->snap;
    return 0;
}

#undef GROW

void ks_sched_scratch_free(ks_scheduler_t *s)
{
    ks_sched_batch_free(&s->bt);
    free(s->smap.st);
    free(s->smap.set);
    free(s->set_list);
    free(s->cand);
    free(s->feasible_flag);
    free(s->lazy_rej);
    free(s->tally);
    free(s->feasible);
    free(s->feasible_names);
    free(s->feasible_idx);
    free(s->scores);
    free(s->totals);
    free(s->tie_at);
    free(s->skipped);
}

/* Clear the statuses the previous cycle set: those on the list (or all
 * of them, up to the capacity: the snapshot may have shrunk since). */
void ks_sched_status_clear(ks_scheduler_t *s)
{
    uint32_t k;
    if (s->set_all && s->cap_nodes > 0)
        memset(s->smap.set, 0, s->cap_nodes);
    else
        for (k = 0; k < s->n_set; k++)
            s->smap.set[s->set_list[k]] = 0;
    s->n_set = 0;
    s->set_all = 0;
}

/* --- outcomes ------------------------------------------------------------------ */

/* upstream Diagnosis.AddPluginStatus: the rejecting plugin, also among
 * the Pending plugins when its code is Pending. */
static void add_plugin(cycle_out_t *o, const char *p, ks_code_t code)
{
    unsigned i;
    if (p == NULL)
        return;
    for (i = 0; i < o->n_plugins; i++)
        if (o->plugins[i] == p)
            break;
    if (i == o->n_plugins) {
        if (o->n_plugins == KS_QPOD_MAX_PLUGINS)
            return;
        o->plugins[o->n_plugins++] = p;
    }
    if (code == KS_PENDING)
        o->pending_mask |= 1u << i;
}

/* The attempt ends with an Error (not a FitError). Returns -1. */
static int cycle_error(cycle_out_t *o, const ks_status_t *st)
{
    if (st)
        ks_status_message(st, o->message, sizeof o->message);
    else
        snprintf(o->message, sizeof o->message, "out of memory");
    o->r.error = 1;
    return -1;
}

/* No node fits: a FitError (PostFilter runs next). Returns -1. */
static int fit_error(cycle_out_t *o)
{
    o->r.n_feasible = 0;
    o->fit_error = 1;
    return -1;
}

int ks_sched_cycle_error(cycle_out_t *o, const ks_status_t *st)
{
    return cycle_error(o, st);
}

/* --- PreFilter ---------------------------------------------------------------- */

/* RunPreFilterPlugins: 0 with pre filled, or -1 when the attempt ends (a
 * PreFilter failure holds for every node). */
static int run_prefilter(ks_scheduler_t *s, ks_framework_t *fw,
                         ks_cycle_state_t *cs, const ks_pod_t *pod,
                         struct ks_prefilter_result *pre, cycle_out_t *o)
{
    uint32_t i, n_all = o->r.n_nodes;
    double t0 = KS_SCHED_EP_T0(s);
    ks_code_t c = ks_fw_run_pre_filter(fw, cs, pod, pre, &o->pre_status);
    ks_sched_ep_done(s, fw, KS_EP_PRE_FILTER, c, t0);
    if (c == KS_SUCCESS)
        return 0;
    ks_prefilter_result_free(pre);
    if (o->pre_status.code == KS_ERROR)
        return cycle_error(o, &o->pre_status);
    for (i = 0; i < n_all; i++)
        ks_status_copy(&s->smap.st[i], &o->pre_status);
    memset(s->smap.set, 1, n_all);
    s->set_all = 1;
    o->prefilter_failed = 1;
    add_plugin(o, o->pre_status.plugin, o->pre_status.code);
    return fit_error(o);
}

static int prefilter_allows(const struct ks_prefilter_result *pre,
                            const char *node)
{
    uint32_t i;
    if (pre->all)
        return 1;
    for (i = 0; i < pre->n; i++)
        if (pre->names[i] == node)
            return 1;
    return 0;
}

/* --- the nominated node --------------------------------------------------------- */

/* upstream evaluateNominatedNode: a node nominated by an earlier
 * preemption is tried first. 1 when it passes (s->feasible[0]), 0 when it
 * does not (or there is none), -1 on an Error. */
static int try_nominated_node(ks_scheduler_t *s, ks_framework_t *fw,
                              ks_cycle_state_t *cs, const ks_pod_t *pod,
                              const struct ks_prefilter_result *pre,
                              cycle_out_t *o)
{
    const char *nom = pod->nominated_node_name;
    const ks_node_info_t *ni;
    ks_status_t st;
    uint32_t idx;
    if (nom == NULL || nom[0] == '\0')
        return 0;
    idx = ks_snapshot_index(s->snap, nom);
    if (idx == UINT32_MAX || !prefilter_allows(pre, nom))
        return 0;
    ni = ks_snapshot_node_at(s->snap, idx);
    if (ks_fw_run_filter_with_nominated(fw, cs, pod, ni,
                                        s->opts.run_all_filters,
                                        &st) == KS_SUCCESS) {
        s->feasible[0] = ni;
        s->feasible_idx[0] = idx;
        s->names_ok = 0;
        s->idx_ok = 1;
        return 1;
    }
    if (st.code == KS_ERROR)
        return cycle_error(o, &st);
    return 0;
}

/* --- Filter ------------------------------------------------------------------- */

/* The candidates PreFilter left (all nodes, or its node set), by snapshot
 * index into s->cand. */
static uint32_t candidate_nodes(ks_scheduler_t *s,
                                const struct ks_prefilter_result *pre,
                                uint32_t n_all)
{
    uint32_t i, n_cand = 0;
    if (pre->all) {
        /* every node: the identity, written once (at 130,000 nodes a fill
         * per cycle was a serial pass over every node) */
        if (s->cand_identity != n_all) {
            for (i = 0; i < n_all; i++)
                s->cand[i] = i;
            s->cand_identity = n_all;
        }
        return n_all;
    }
    s->cand_identity = 0;
    for (i = 0; i < pre->n; i++) {
        uint32_t idx = ks_snapshot_index(s->snap, pre->names[i]);
        if (idx != UINT32_MAX)
            s->cand[n_cand++] = idx;
    }
    return n_cand;
}

/* Staged collection: a chunk of a shared Filter job (non-direct) writes
 * its feasible nodes to s->feasible (names, indices) from its own first
 * position on, where no other chunk writes (a chunk has no more feasible
 * nodes than positions), and tallies what it found. After the job the
 * blocks are moved down in chunk order (collect_staged); when every node
 * before a block passed, as at percentageOfNodesToScore 100 with most
 * nodes fitting, it is already in place. Collecting in two more jobs
 * (count, then write) took 11 to 12 us a cycle at 5,000 nodes, more than
 * sharing the Filter saved. */
typedef struct ks_filter_tally {
    uint32_t evaluated; /* positions whose flag the chunk set */
    uint32_t ones;      /* feasible (flag 1), at the chunk's first on */
    uint32_t lazy;      /* flag 3 */
    uint32_t pad_;
} filter_tally_t;

/* Threads (by worker id) whose unpublished count a filter job keeps in a
 * line of its own; a thread past them adds its count to `found` at the
 * end of each chunk. */
#define FILTER_SLOTS 16
typedef struct filter_slot {
    _Alignas(64) uint32_t n;
} filter_slot_t;

typedef struct filter_job {
    ks_scheduler_t *s;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    uint32_t n_cand, start, want;
    int bulk; /* ks_fw_filter_bulk_ok for this cycle */
    ks_fw_bulk_plan_t plan; /* with bulk: its plugins, in its order */
    ks_fw_bulk_counts_t counts; /* with bulk: worker 0's, for the lead */
    int identity; /* cand[i] == i: every node a candidate */
    const ks_node_info_t *const *all; /* the snapshot's nodes by index */
    const uint32_t *iota; /* 0, 1, ...: positions of runs of `all` */
    unsigned threads;     /* the pool's, for filter_publish */
    /* Staged collection (filter_tally_t): the job's chunk size and a
     * tally per chunk, cleared before the job; NULL: flags only */
    filter_tally_t *tally;
    uint32_t chunk;
    /* Direct collection: a filter_chunk call with every position (the
     * serial case) sees them in evaluation order, so it puts the first
     * `want` feasible nodes straight into s->feasible (names, batching's
     * indices) and marks the statuses before the cut, instead of flag 1
     * and filter_nodes' collect pass. */
    int direct;                /* set by that call */
    const char *const *names;  /* the snapshot's names, or NULL */
    cycle_out_t *o;
    uint32_t nf;               /* feasible nodes collected */
    uint32_t processed;        /* positions up to the want-th one */
    uint32_t n_lazy;           /* flag 3 (all before the cut when no
                                * node passed) */
    /* Written by every thread: a cache line of their own, so that the
     * fields above, which each run reads, stay in every core's cache. */
    _Alignas(64) atomic_uint found; /* feasible nodes published */
    atomic_int error;
    char pad_[64 - sizeof(atomic_uint) - sizeof(atomic_int)];
    /* Each thread's feasible nodes not yet in `found`, carried from one
     * of its chunks to the next (filter_publish): written by its thread
     * only, read after the job (filter_found). */
    filter_slot_t kept[FILTER_SLOTS];
} filter_job_t;

/* How many nodes a worker filters between looks at the shared counter:
 * contended atomics cost more than filtering. Also the bulk Filter's run. */
#define FILTER_RUN 32
/* The bulk Filter's run when one call has every position (no counter to
 * look at): up to FILTER_RUN_MAX nodes, halving the per-run costs, but no
 * more than the feasible nodes still wanted, rounded up to a multiple of
 * 8, so that fewer nodes are filtered past the last one wanted. */
#define FILTER_RUN_MAX 64
_Static_assert(FILTER_RUN_MAX <= KS_FW_BULK_MAX, "a run in one bulk call");

static inline uint32_t run_length(const filter_job_t *j, uint32_t left,
                                  int fast)
{
    uint32_t n = FILTER_RUN;
    if (fast && j->direct) {
        uint32_t need = j->want - j->nf;
        n = need >= FILTER_RUN_MAX ? FILTER_RUN_MAX : (need + 7) & ~7u;
        if (n == 0)
            n = 8;
    }
    return left < n ? left : n;
}

/* The verdict of one node of a run: node by node, unless the bulk Filter
 * passed it (bulk_pass 1). Under KS_BULK_VERIFY the node-by-node Filter
 * runs on passed nodes too and a difference is counted and logged. */
static ks_code_t filter_verdict(filter_job_t *j, const ks_node_info_t *ni,
                                int bulk_pass, uint8_t rejector,
                                ks_status_t *st)
{
    ks_fw_env_t *env = j->fw->env;
    ks_code_t c;
    if (bulk_pass == 1 && env->bulk != KS_BULK_VERIFY) {
        ks_status_reset(st);
        return KS_SUCCESS;
    }
    if (bulk_pass == 0 && env->bulk != KS_BULK_VERIFY)
        /* the plugins before the rejector passed it: start there (bulk
         * runs only without nominated pods) */
        return ks_fw_run_filter_from(j->fw, j->cs, j->pod, ni,
                                     j->s->opts.run_all_filters,
                                     rejector & ~KS_FW_BULK_UNSURE, st);
    c = ks_fw_run_filter_with_nominated(j->fw, j->cs, j->pod, ni,
                                        j->s->opts.run_all_filters, st);
    if (bulk_pass >= 0 && env->bulk == KS_BULK_VERIFY &&
        ks_fw_bulk_verified(env, (c == KS_SUCCESS) != (bulk_pass == 1)))
        ks_log(KS_LOG_ERROR,
               "bulk verify: pod %s/%s node %s: Filter %s in bulk, %s node "
               "by node (plugin %s)",
               j->pod->ns, j->pod->name, ni->node ? ni->node->name : "?",
               bulk_pass ? "passed" : "rejected", ks_code_name(c),
               st->plugin ? st->plugin : "-");
    return c;
}

/* The snapshot index of the node at position `pos` of the evaluation
 * order that starts at candidate `start` (< n_cand). */
static inline uint32_t cand_at(const ks_scheduler_t *s, uint32_t start,
                               uint32_t pos, uint32_t n_cand)
{
    uint32_t at = start + pos;
    return s->cand[at >= n_cand ? at - n_cand : at];
}

/* Nodes ni[0..n) that passed, with their snapshot indices idx[] (NULL:
 * at + r), into s->feasible (names, indices) from position k on. */
static void put_run(filter_job_t *j, uint32_t k,
                    const ks_node_info_t *const *ni, const uint32_t *idx,
                    uint32_t at, uint32_t n)
{
    ks_scheduler_t *s = j->s;
    uint32_t r;
    uint32_t *fidx = s->feasible_idx + k; /* a local: stores cannot
                                             change it */
    memcpy(s->feasible + k, ni, n * sizeof *ni);
    if (idx == NULL) {
        if (j->names != NULL)
            memcpy(s->feasible_names + k, j->names + at,
                   n * sizeof *j->names);
        for (r = 0; r < n; r++)
            fidx[r] = at + r;
    } else {
        if (j->names != NULL)
            for (r = 0; r < n; r++)
                s->feasible_names[k + r] = j->names[idx[r]];
        memcpy(fidx, idx, n * sizeof *idx);
    }
}

/* put_run for one node, inline. */
static inline void put_one(filter_job_t *j, uint32_t k, uint32_t idx,
                           const ks_node_info_t *ni)
{
    ks_scheduler_t *s = j->s;
    if (j->names != NULL)
        s->feasible_names[k] = j->names[idx];
    s->feasible_idx[k] = idx;
    s->feasible[k] = ni;
}

/* Direct collection: nodes ni[0..n) at positions pos.. passed (idx: their
 * snapshot indices, or NULL for pos's candidates at..at+n of the
 * identity); those before the cut are collected. */
static void direct_pass(filter_job_t *j, uint32_t pos,
                        const ks_node_info_t *const *ni, const uint32_t *idx,
                        uint32_t at, uint32_t n)
{
    uint32_t nf = j->nf;
    if (n > j->want - nf)
        n = j->want - nf;
    if (n == 0)
        return;
    put_run(j, nf, ni, idx, at, n);
    j->nf = nf + n;
    if (j->nf == j->want)
        j->processed = pos + n;
}

/* direct_pass for one node, inline: the mixed runs' common case. */
static inline void direct_one(filter_job_t *j, uint32_t pos, uint32_t idx,
                              const ks_node_info_t *ni)
{
    uint32_t nf = j->nf;
    if (nf == j->want)
        return;
    put_one(j, nf++, idx, ni);
    j->nf = nf;
    if (nf == j->want)
        j->processed = pos + 1;
}

/* Staged collection (filter_tally_t): node ni, snapshot index idx, passed;
 * written at *out, the chunk's next staged position. */
static inline void stage_one(filter_job_t *j, uint32_t *out, uint32_t idx,
                             const ks_node_info_t *ni)
{
    put_one(j, (*out)++, idx, ni);
}

/* Staged collection of a run of n nodes ni[] that all passed, their
 * snapshot indices idx[] (NULL: at + r), from *out on. */
static void stage_run(filter_job_t *j, uint32_t *out,
                      const ks_node_info_t *const *ni, const uint32_t *idx,
                      uint32_t at, uint32_t n)
{
    put_run(j, *out, ni, idx, at, n);
    *out += n;
}

/* Direct collection of a bulk run some nodes of which were rejected, when
 * every rejection is a plain one left for later (flag 3): the passed nodes
 * (bits of ok) appended at once. The run's nodes are run[r], their
 * snapshot indices idx[r] (or at + r when idx is NULL). 1 when done
 * (*found and *lazy counted), 0 when a rejection needs the node-by-node
 * Filter now (nothing done: the caller goes node by node, in order).
 * Only for filter_chunk's runs in bulk, which batching's cycles do not
 * take (no kept indices to write). */
static int direct_mixed_run(filter_job_t *j, uint32_t pos,
                            const ks_node_info_t *const *run,
                            const uint32_t *idx, uint32_t at, uint64_t ok,
                            const uint8_t *rej, uint32_t n_run,
                            uint32_t *found, uint32_t *lazy)
{
    ks_scheduler_t *s = j->s;
    uint64_t out = ~ok & ks_pass_all(n_run), m;
    uint32_t r = 0, nf = j->nf;
    uint8_t unsure = 0, *flag = s->feasible_flag + pos, *lrej = s->lazy_rej;
    for (m = out; m != 0; m &= m - 1)
        unsure |= rej[__builtin_ctzll(m)];
    if (unsure & KS_FW_BULK_UNSURE)
        return 0;
    if (idx == NULL) {
        /* The whole run at once: flag 3 and the rejector at the passed
         * positions too, where nothing reads them (a direct job asks
         * flag 3 statuses only when no node passed at all). */
        memset(flag, 3, n_run);
        memcpy(lrej + at, rej, n_run);
    } else {
        for (m = out; m != 0; m &= m - 1) {
            r = (uint32_t)__builtin_ctzll(m);
            flag[r] = 3;
            lrej[idx[r]] = rej[r];
        }
    }
    *lazy += (uint32_t)__builtin_popcountll(out);
    *found += (uint32_t)__builtin_popcountll(ok);
    {
        /* the arrays in locals: the stores cannot change them */
        const char *const *names = j->names;
        const char **fnames = s->feasible_names;
        const ks_node_info_t **feasible = s->feasible;
        uint32_t *fidx = s->feasible_idx;
        uint32_t want = j->want;
        for (m = ok; m != 0 && nf < want; m &= m - 1) {
            uint32_t x;
            r = (uint32_t)__builtin_ctzll(m);
            x = idx ? idx[r] : at + r;
            if (names != NULL)
                fnames[nf] = names[x];
            fidx[nf] = x;
            feasible[nf++] = run[r];
        }
    }
    if (nf != j->nf) {
        j->nf = nf;
        if (nf == j->want)
            j->processed = pos + r + 1;
    }
    return 1;
}

/* record_verdict's rejection: its status kept, an Error stopping the
 * job. */
static void record_rejection(filter_job_t *j, uint32_t pos, uint32_t idx,
                             ks_code_t c, const ks_status_t *st)
{
    ks_scheduler_t *s = j->s;
    ks_status_copy(&s->smap.st[idx], st);
    s->feasible_flag[pos] = 2;
    if (c == KS_ERROR)
        atomic_store(&j->error, (int)idx + 1);
    else if (j->direct && j->nf < j->want) {
        ks_sched_status_mark(s, idx);
        add_plugin(j->o, st->plugin, st->code);
    }
}

/* Position `pos` (snapshot index idx) got verdict c with status st:
 * feasible (counted in *found; collected at once in a direct job), or
 * rejected (record_rejection). Inline: the feasible case is the common
 * one, node by node under batching. */
static inline void record_verdict(filter_job_t *j, uint32_t pos,
                                  uint32_t idx, ks_code_t c,
                                  const ks_status_t *st, uint32_t *found,
                                  uint32_t *out)
{
    if (c != KS_SUCCESS) {
        record_rejection(j, pos, idx, c, st);
        return;
    }
    if (j->direct) {
        direct_one(j, pos, idx, j->all[idx]);
    } else {
        j->s->feasible_flag[pos] = 1;
        if (j->tally != NULL)
            stage_one(j, out, idx, j->all[idx]);
    }
    (*found)++;
}

/* Under batching, the run of n_run positions from pos when batching kept
 * a Success for every node of it (the common case of a batch): appended
 * at once, as node by node would. 1 when done (the caller counts the
 * nodes found and reused), 0 when the run must go node by node. */
static int kept_run_passed(filter_job_t *j, uint32_t pos, uint32_t n_run,
                           uint32_t *out)
{
    ks_scheduler_t *s = j->s;
    const ks_node_info_t *ni[FILTER_RUN];
    const ks_node_info_t *const *run;
    const uint32_t *ci;
    uint32_t r, at = j->start + pos; /* < 2 n_cand */
    if (at >= j->n_cand)
        at -= j->n_cand;
    if (at + n_run > j->n_cand)
        return 0; /* the run wraps: node by node */
    ci = j->identity ? NULL : s->cand + at;
    if (!ks_sched_batch_filter_all_passed(s, at, ci, n_run))
        return 0;
    run = j->all + at;
    if (ci != NULL) {
        for (r = 0; r < n_run; r++)
            ni[r] = j->all[ci[r]];
        run = ni;
    }
    if (j->direct) {
        direct_pass(j, pos, run, ci, at, n_run);
    } else {
        memset(s->feasible_flag + pos, 1, n_run);
        if (j->tally != NULL)
            stage_run(j, out, run, ci, at, n_run);
    }
    return 1;
}

/* The nodes of the bulk run of n_run candidates from `at` (< n_cand):
 * the snapshot's own array from `at` when every node is a candidate and
 * the run does not wrap (idx[r] = at + r is then set by the caller only
 * when a node was rejected), else gathered into ni[] with their indices
 * in idx[]. */
static inline const ks_node_info_t *const *
gather_run(const filter_job_t *j, uint32_t at, uint32_t n_run,
           const ks_node_info_t **ni, uint32_t *idx)
{
    const uint32_t *cand = j->s->cand;
    uint32_t r;
    if (j->identity && at + n_run <= j->n_cand)
        return j->all + at;
    if (at + n_run <= j->n_cand) { /* no wrap in the run */
        const uint32_t *c = cand + at;
        for (r = 0; r < n_run; r++) {
            idx[r] = c[r];
            ni[r] = j->all[c[r]];
        }
        return ni;
    }
    for (r = 0; r < n_run; r++) {
        idx[r] = cand[at];
        ni[r] = j->all[idx[r]];
        if (++at == j->n_cand)
            at = 0;
    }
    return ni;
}

/* The snapshot positions of a bulk run (for the plugins' bulk_columns):
 * idx when the run was gathered, else those of the snapshot's own array
 * from `at` on (iota is there whenever `all` is). */
static inline const uint32_t *run_pos(const filter_job_t *j,
                                      const uint32_t *idx, uint32_t at)
{
    return idx != NULL ? idx : j->iota + at;
}

/* Before filter_chunk's run at pos (of its positions up to e): 1 to
 * stop, when `want` feasible nodes are found or a node's Filter erred.
 * The flags of the positions left out say so, unless this call has every
 * position (then the collect stops before them: the `want` feasible
 * nodes, or an Error, come first); the chunks not yet claimed are left
 * unclaimed (their flags were cleared before the job, filter_nodes).
 *
 * Deterministic, no claimed position is left out: only the claims stop
 * (once cut, ks_pool_cut returns at its first look). Chunks are claimed
 * in order, so the positions evaluated are then a prefix holding the
 * first `want` feasible nodes, the serial run's, however the threads
 * ran. Without it, as upstream, a thread held up before the rest of its
 * chunk, while another ran later chunks, leaves a hole, and later nodes
 * stand in for the ones in it. */
static int filter_stop(filter_job_t *j, uint32_t pos, uint32_t e)
{
    int erred = atomic_load(&j->error) != 0;
    if (!erred && atomic_load(&j->found) < j->want)
        return 0;
    if (!erred && !j->direct && j->s->opts.deterministic) {
        ks_pool_cut(j->fw->pool);
        return 0;
    }
    if (!j->direct)
        memset(j->s->feasible_flag + pos, 0, e - pos);
    ks_pool_cut(j->fw->pool);
    return 1;
}

/* This thread's feasible nodes not yet added to j->found: added when
 * they could bring it to `want`, else kept (the return value, carried to
 * the thread's next chunk in its slot). A fetch-and-add from every thread
 * at every run moved j->found's cache line between the cores at every
 * run, and doubled a shared Filter's time per node. With T threads, once
 * all of them together hold want - found, one of them holds (want -
 * found) / T and publishes at its next run, so the cut comes at most a
 * run or two per thread later than with every run published (or, when
 * the rest is held by a thread that has no chunk left, at the end of the
 * chunk running); one thread alone publishes at `want` exactly. */
static inline uint32_t filter_publish(filter_job_t *j, uint32_t found)
{
    uint32_t g;
    if (found == 0)
        return 0;
    g = atomic_load_explicit(&j->found, memory_order_relaxed);
    if (g < j->want && (uint64_t)found * j->threads < j->want - g)
        return found;
    atomic_fetch_add(&j->found, found);
    return 0;
}

/* The feasible nodes a finished filter job found: published and kept. */
static uint32_t filter_found(const filter_job_t *j)
{
    uint32_t n = atomic_load(&j->found), w;
    for (w = 0; w < FILTER_SLOTS; w++)
        n += j->kept[w].n;
    return n;
}

static void filter_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    filter_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    filter_slot_t *slot = worker < FILTER_SLOTS ? &j->kept[worker] : NULL;
    uint32_t pos, found = slot != NULL ? slot->n : 0, r, n_run, n_eval;
    uint32_t out = b; /* staged collection: the next position */
    uint64_t reused = 0; /* batching's kept verdicts, added once */
    uint32_t lazy = 0;   /* flag 3 positions, added once */
    const ks_node_info_t *ni[FILTER_RUN_MAX], *eval[FILTER_RUN];
    uint32_t idx[FILTER_RUN_MAX], eval_idx[FILTER_RUN];
    uint8_t pass[KS_FW_BULK_MAX], kept[FILTER_RUN], rej[KS_FW_BULK_MAX];
    ks_fw_bulk_counts_t *counts = worker == 0 ? &j->counts : NULL;
    ks_code_t kept_c[FILTER_RUN];
    const ks_status_t *kept_st[FILTER_RUN];
    /* every node of a run in bulk (the common case) */
    const int fast =
        j->bulk && !s->bt.active && j->fw->env->bulk == KS_BULK_ON;
    if (b == 0 && e == j->n_cand) {
        j->direct = 1; /* the only call: every position, in order */
        j->threads = 1;
    }
    for (pos = b; pos < e; pos += n_run) {
        n_run = run_length(j, e - pos, fast);
        found = filter_publish(j, found);
        if (filter_stop(j, pos, e))
            break;
        if (fast) {
            /* The common case: every node of the run in bulk, the ones it
             * rejected node by node for their statuses. */
            uint32_t at = j->start + pos; /* < 2 n_cand */
            uint64_t ok;
            const ks_node_info_t *const *run;
            if (at >= j->n_cand)
                at -= j->n_cand;
            run = gather_run(j, at, n_run, ni, idx);
            ks_fw_run_filter_bulk(j->fw, &j->plan, j->cs, j->pod, run,
                                  run_pos(j, run == ni ? idx : NULL, at),
                                  n_run, pass, rej, counts);
            /* pass is 0 or 1 here: a run that passed whole is marked at
             * once */
            ok = ks_pass_mask(pass, n_run);
            if (ok == ks_pass_all(n_run)) {
                if (j->direct) {
                    direct_pass(j, pos, run, run == ni ? idx : NULL, at,
                                n_run);
                } else {
                    memset(s->feasible_flag + pos, 1, n_run);
                    if (j->tally != NULL)
                        stage_run(j, &out, run, run == ni ? idx : NULL, at,
                                  n_run);
                }
                found += n_run;
                continue;
            }
            if (j->direct && s->filter_lazy &&
                direct_mixed_run(j, pos, run, run == ni ? idx : NULL, at,
                                 ok, rej, n_run, &found, &lazy))
                continue;
            if (run != ni)
                for (r = 0; r < n_run; r++) {
                    idx[r] = at + r;
                    ni[r] = run[r];
                }
            for (r = 0; r < n_run; r++) {
                ks_status_t st;
                if (pass[r]) {
                    if (j->direct) {
                        direct_one(j, pos + r, idx[r], ni[r]);
                    } else {
                        s->feasible_flag[pos + r] = 1;
                        if (j->tally != NULL)
                            stage_one(j, &out, idx[r], ni[r]);
                    }
                    found++;
                } else if (s->filter_lazy && !(rej[r] & KS_FW_BULK_UNSURE)) {
                    /* a plain rejection: its status only when asked
                     * (resolve_lazy) */
                    s->feasible_flag[pos + r] = 3;
                    s->lazy_rej[idx[r]] = rej[r];
                    lazy++; /* read only when no node passed: no cut */
                } else {
                    record_verdict(j, pos + r, idx[r],
                                   filter_verdict(j, ni[r], 0, rej[r], &st),
                                   &st, &found, &out);
                }
            }
            continue;
        }
        if (s->bt.active && kept_run_passed(j, pos, n_run, &out)) {
            found += n_run;
            reused += n_run;
            continue;
        }
        /* The run's nodes; those batching kept a verdict for are done. */
        n_eval = 0;
        for (r = 0; r < n_run; r++) {
            idx[r] = cand_at(s, j->start, pos + r, j->n_cand);
            ni[r] = j->all[idx[r]];
            kept[r] = s->bt.active &&
                      ks_sched_batch_filter_get(s, idx[r], &kept_c[r],
                                                &kept_st[r]);
            if (!kept[r]) {
                eval_idx[n_eval] = idx[r];
                eval[n_eval++] = ni[r];
            }
        }
        if (j->bulk && n_eval > 0)
            ks_fw_run_filter_bulk(j->fw, &j->plan, j->cs, j->pod, eval,
                                  eval_idx, n_eval, pass, rej, counts);
        n_eval = 0;
        for (r = 0; r < n_run; r++) {
            ks_status_t st; /* copied to the map only on failure */
            ks_code_t c;
            if (kept[r]) {
                /* the kept status goes to the map from where it is kept */
                record_verdict(j, pos + r, idx[r], kept_c[r], kept_st[r],
                               &found, &out);
                reused++;
                continue;
            }
            c = filter_verdict(j, ni[r], j->bulk ? pass[n_eval] : -1,
                               j->bulk ? rej[n_eval] : 0, &st);
            n_eval++;
            if (s->bt.active)
                ks_sched_batch_filter_put(s, j->pod, idx[r], ni[r], c, &st);
            record_verdict(j, pos + r, idx[r], c, &st, &found, &out);
        }
    }
    if (!j->direct && j->tally != NULL) {
        /* chunks start at multiples of the chunk size (pool.h) */
        filter_tally_t *t = &j->tally[b / j->chunk];
        t->evaluated = (pos < e ? pos : e) - b;
        t->ones = out - b;
        t->lazy = lazy;
    }
    found = filter_publish(j, found);
    if (slot != NULL)
        slot->n = found;
    else if (found)
        atomic_fetch_add(&j->found, found);
    if (j->direct)
        j->n_lazy += lazy;
    ks_sched_batch_add_reused(s, reused);
}

/* filter_chunk when the cycle reuses batching's kept verdicts
 * (ks_batch_t.reusing): a call site of its own for the pool's estimates,
 * as ks_sched_batch_score's Score job has. */
static void filter_chunk_reuse(void *ud, uint32_t b, uint32_t e,
                               unsigned worker)
{
    filter_chunk(ud, b, e, worker);
}

typedef struct lazy_job {
    ks_scheduler_t *s;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    uint32_t n_cand;
    const ks_node_info_t *const *all;
    atomic_int error; /* snapshot index + 1 of a node whose Filter erred */
} lazy_job_t;

/* Positions [b, e) of the evaluation order: the status of each node the
 * bulk Filter left at flag 3, from its rejector on. On the workers, as
 * any Filter call (the thread rules hold). */
static void lazy_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    lazy_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    uint32_t pos;
    (void)worker;
    for (pos = b; pos < e; pos++) {
        uint32_t idx;
        ks_code_t c;
        if (s->feasible_flag[pos] != 3)
            continue;
        idx = cand_at(s, s->next_start, pos, j->n_cand);
        c = ks_fw_run_filter_from(j->fw, j->cs, j->pod, j->all[idx],
                                  s->opts.run_all_filters,
                                  s->lazy_rej[idx] & ~KS_FW_BULK_UNSURE,
                                  &s->smap.st[idx]);
        if (c == KS_ERROR)
            atomic_store(&j->error, (int)idx + 1);
        else if (c == KS_SUCCESS)
            /* the bulk Filter and the node's own disagree: the node
             * counts as rejected all the same, with no reason */
            s->smap.st[idx].code = KS_UNSCHEDULABLE;
        s->feasible_flag[pos] = 2;
    }
}

/* The statuses the bulk Filter left at flag 3 (filter_chunk), asked now,
 * and the rejecting plugins collected again in evaluation order, as if
 * every status had been asked at once. 0, or -1 on an Error (o says
 * why). */
static int resolve_lazy(ks_scheduler_t *s, ks_framework_t *fw,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        uint32_t n_cand, uint32_t processed,
                        const ks_node_info_t *const *all, cycle_out_t *o)
{
    lazy_job_t job = {.s = s, .fw = fw, .cs = cs, .pod = pod,
                      .n_cand = n_cand, .all = all};
    uint32_t i, at, chunk;
    chunk = fw->pool ? processed / (8 * ks_pool_size(fw->pool)) + 1
                     : processed;
    ks_pool_run(fw->pool, processed, chunk, lazy_chunk, &job);
    if (atomic_load(&job.error)) {
        uint32_t idx = (uint32_t)atomic_load(&job.error) - 1;
        return cycle_error(o, &s->smap.st[idx]);
    }
    o->n_plugins = 0;
    o->pending_mask = 0;
    for (i = 0, at = s->next_start; i < processed; i++, at++) {
        uint32_t idx;
        if (at == n_cand)
            at = 0;
        idx = s->cand[at];
        if (s->feasible_flag[i] == 2) {
            ks_sched_status_mark(s, idx);
            add_plugin(o, s->smap.st[idx].plugin, s->smap.st[idx].code);
        }
    }
    return 0;
}

/* Where the k-th (from 1) flag 1 of flag[0..n) is: its index. The
 * chunk's tally says there are at least k. */
static uint32_t nth_passed(const uint8_t *flag, uint32_t n, uint32_t k)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (flag[i] == 1 && --k == 0)
            return i;
    return n; /* not reached: the tally counted them */
}

/* Staged collection (filter_tally_t) after a shared Filter job, when no
 * rejection before the cut needs its status marked (flag 2): the chunks'
 * blocks moved down into one list in evaluation order, up to the
 * want-th feasible node, as the caller's loop over the flags would
 * collect them. A chunk cut short (its flags past the stop cleared) or
 * never claimed is a hole there as in that loop. 1 done (*n_feasible,
 * *n_lazy and *processed, the positions up to the want-th node or every
 * one, set), 0 when the caller must collect from the flags (its loop
 * rewrites the list from the start). */
static int collect_staged(ks_scheduler_t *s, const filter_job_t *j,
                          uint32_t want, uint32_t *n_feasible,
                          uint32_t *n_lazy, uint32_t *processed)
{
    const filter_tally_t *t = j->tally;
    uint32_t n_cand = j->n_cand, n_chunks, c, b, at = 0, lazy = 0;
    if (t == NULL || j->direct || want == 0)
        return 0;
    *processed = n_cand;
    n_chunks = (n_cand + j->chunk - 1) / j->chunk;
    for (c = 0, b = 0; c < n_chunks && at < want; c++, b += j->chunk) {
        uint32_t k = t[c].ones, l = t[c].lazy;
        if (k + l != t[c].evaluated)
            return 0; /* a status to mark in order: the caller's loop */
        if (k > want - at) {
            /* the want-th node is in this chunk: the positions after it
             * are not collected, nor their flag 3 counted */
            const uint8_t *f = s->feasible_flag + b;
            uint32_t cut, i;
            k = want - at;
            cut = nth_passed(f, t[c].evaluated, k) + 1;
            for (i = 0, l = 0; i < cut; i++)
                l += f[i] == 3;
            *processed = b + cut;
        } else if (k == want - at && want < n_cand) {
            *processed = b + nth_passed(s->feasible_flag + b,
                                        t[c].evaluated, k) + 1;
        }
        if (k > 0 && at != b) {
            memmove(s->feasible + at, s->feasible + b,
                    k * sizeof *s->feasible);
            memmove(s->feasible_idx + at, s->feasible_idx + b,
                    k * sizeof *s->feasible_idx);
            if (j->names != NULL)
                memmove(s->feasible_names + at, s->feasible_names + b,
                        k * sizeof *s->feasible_names);
        }
        at += k;
        lazy += l;
    }
    *n_feasible = at;
    *n_lazy = lazy;
    return 1;
}

/* The end of filter_nodes: the statuses left for later when no node
 * passed (the FitError needs them all), and the next round-robin start.
 * 0, or -1 on an Error. */
static int filter_finish(ks_scheduler_t *s, ks_framework_t *fw,
                         ks_cycle_state_t *cs, const ks_pod_t *pod,
                         cycle_out_t *o, uint32_t n_cand, uint32_t processed,
                         uint32_t n_lazy, const ks_node_info_t *const *all,
                         uint32_t n_feasible)
{
    if (n_lazy > 0 && n_feasible == 0 &&
        resolve_lazy(s, fw, cs, pod, n_cand, processed, all, o) != 0)
        return -1;
    s->next_start = (s->next_start + processed) % n_cand;
    return 0;
}

/* filter_nodes after a direct collection (filter_job_t). */
static int filter_done(ks_scheduler_t *s, ks_framework_t *fw,
                       ks_cycle_state_t *cs, const ks_pod_t *pod,
                       cycle_out_t *o, const filter_job_t *j,
                       uint32_t *n_feasible)
{
    *n_feasible = j->nf;
    return filter_finish(s, fw, cs, pod, o, j->n_cand,
                         j->nf == j->want ? j->processed : j->n_cand,
                         j->n_lazy, j->all, j->nf);
}

/* Staged collection on a pool of threads: a tally per chunk of
 * j->n_cand, cleared (a chunk cut off is never claimed). Without the
 * memory for it the job keeps to the flags (j->tally stays NULL). */
static void tally_prepare(ks_scheduler_t *s, filter_job_t *j, uint32_t chunk)
{
    uint32_t n_chunks = (j->n_cand + chunk - 1) / chunk;
    if (n_chunks > s->cap_tally) {
        filter_tally_t *t = realloc(s->tally, n_chunks * sizeof *t);
        if (t != NULL) {
            s->tally = t;
            s->cap_tally = n_chunks;
        }
    }
    if (n_chunks <= s->cap_tally) {
        j->tally = s->tally;
        j->chunk = chunk;
        memset(j->tally, 0, n_chunks * sizeof *j->tally);
    }
}

/* upstream findNodesThatPassFilters: Filter on the candidates from the
 * round-robin start until `want` pass, on the workers. The feasible nodes
 * go to s->feasible in evaluation order; *n_feasible says how many. 0, or
 * -1 on an Error. */
static int filter_nodes(ks_scheduler_t *s, ks_framework_t *fw,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        uint32_t n_cand, int identity, uint32_t want,
                        cycle_out_t *o, uint32_t *n_feasible)
{
    filter_job_t job = {.s = s, .fw = fw, .cs = cs, .pod = pod,
                        .n_cand = n_cand, .identity = identity,
                        .want = want,
                        .start = s->next_start < n_cand ? s->next_start : 0,
                        .bulk = ks_fw_filter_bulk_ok(fw)};
    uint32_t i, processed, n_all, at, n_lazy = 0, n_set, pending_mask;
    unsigned n_plugins;
    const char *const *names;
    double t0;
    job.all = ks_snapshot_nodes(s->snap, &n_all);
    if (job.all == NULL || n_all != ks_snapshot_num_nodes(s->snap))
        return cycle_error(o, NULL); /* its lists failed to build */
    job.iota = ks_snapshot_positions(s->snap);
    job.threads = fw->pool != NULL ? ks_pool_size(fw->pool) : 1;
    names = ks_snapshot_node_names(s->snap);
    s->names_ok = names != NULL;
    s->idx_ok = 1; /* every way below fills feasible_idx */
    s->next_start = job.start;
    job.names = names;
    job.o = o;
    n_set = s->n_set;
    n_plugins = o->n_plugins;
    pending_mask = o->pending_mask;
    /* filter_chunk writes the flag of every position it evaluates, and
     * zeroes those it leaves out unless one call has them all (the
     * serial case: the collect stops at `want` or an Error before them);
     * on a pool of threads the flags start cleared all the same. Without
     * Filter plugins the collect stops at `want`. */
    if (fw->pool != NULL && ks_pool_size(fw->pool) > 1)
        memset(s->feasible_flag, 0, n_cand);
    if (fw->n_points[KS_EP_FILTER] == 0) {
        memset(s->feasible_flag, 1, want);
        s->bt.active = 0; /* nothing to reuse */
    } else {
        uint32_t chunk = fw->pool ? (n_cand / (8 * ks_pool_size(fw->pool))) + 1
                                  : n_cand;
        if (chunk > 256)
            chunk = 256;
        if (fw->pool != NULL && ks_pool_size(fw->pool) > 1)
            tally_prepare(s, &job, chunk);
        if (job.bulk) {
            /* A lead's rejections are asked for their statuses from the
             * first plugin on: where they are asked only when needed (or
             * only compared, verifying) */
            int may_lead = (s->filter_lazy && !s->bt.active &&
                            fw->env->bulk == KS_BULK_ON) ||
                           fw->env->bulk == KS_BULK_VERIFY;
            ks_fw_bulk_plan_init(fw, cs, may_lead, &job.plan);
        }
        t0 = KS_SCHED_EP_T0(s);
        ks_pool_run(fw->pool, n_cand, chunk,
                    s->bt.active && s->bt.reusing ? filter_chunk_reuse
                                                  : filter_chunk,
                    &job);
        if (job.bulk)
            ks_fw_bulk_learn(fw, &job.counts);
        ks_sched_ep_done(s, fw, KS_EP_FILTER,
                         atomic_load(&job.error)    ? KS_ERROR
                         : filter_found(&job)       ? KS_SUCCESS
                                                   : KS_UNSCHEDULABLE,
                         t0);
    }
    if (atomic_load(&job.error)) {
        uint32_t idx = (uint32_t)atomic_load(&job.error) - 1;
        /* an Error: no rejection is reported (direct collection's
         * undone) */
        while (s->n_set > n_set)
            s->smap.set[s->set_list[--s->n_set]] = 0;
        o->n_plugins = n_plugins;
        o->pending_mask = pending_mask;
        return cycle_error(o, &s->smap.st[idx]);
    }
    if (job.direct)
        return filter_done(s, fw, cs, pod, o, &job, n_feasible);
    /* Collect in evaluation order, keep the first `want`, and forget the
     * statuses of nodes past the cut (workers may overshoot). */
    *n_feasible = 0;
    processed = n_cand;
    if (fw->n_points[KS_EP_FILTER] > 0 &&
        collect_staged(s, &job, want, n_feasible, &n_lazy, &processed))
        i = n_cand; /* collected: no status to collect */
    else
        i = 0;
    {
        /* the arrays in locals: the stores below cannot alias them */
        const uint32_t *cand = s->cand;
        uint8_t *flag = s->feasible_flag;
        const ks_node_info_t **feasible = s->feasible;
        const char **fnames = s->feasible_names;
        uint32_t *fidx = s->feasible_idx;
        uint32_t nf = *n_feasible, end;
        /* positions [i, end) map to candidates [at, n_cand), then from
         * candidate 0 on: no wrap test per node */
        for (at = s->next_start; i < n_cand; at = 0) {
            end = i + (n_cand - at);
            if (end > n_cand)
                end = n_cand;
            while (i < end) {
                uint32_t idx;
                uint8_t f;
                if (names != NULL)
                    /* the common case's feasible nodes, without the
                     * test; any other node the general way below */
                    for (; i < end && nf != want && flag[i] == 1;
                         i++, at++) {
                        idx = cand[at];
                        fnames[nf] = names[idx];
                        fidx[nf] = idx;
                        feasible[nf++] = job.all[idx];
                    }
                if (i == end || nf == want)
                    break;
                f = flag[i];
                if (f == 1) {
                    idx = cand[at];
                    fidx[nf] = idx;
                    if (names != NULL)
                        fnames[nf] = names[idx];
                    feasible[nf++] = job.all[idx];
                } else if (f == 2) {
                    idx = cand[at];
                    ks_sched_status_mark(s, idx);
                    add_plugin(o, s->smap.st[idx].plugin,
                               s->smap.st[idx].code);
                } else if (f == 3) {
                    n_lazy++;
                }
                i++;
                at++;
            }
            if (i < end) { /* `want` found: the rest is not evaluated */
                processed = i; /* (and no flag past it is read again) */
                break;
            }
        }
        *n_feasible = nf;
    }
    return filter_finish(s, fw, cs, pod, o, n_cand, processed, n_lazy,
                         job.all, *n_feasible);
}

/* Filter every candidate PreFilter left (frees pre). 0, or -1 with o
 * saying why. */
static int filter_all_nodes(ks_scheduler_t *s, ks_framework_t *fw,
                            ks_cycle_state_t *cs, const ks_pod_t *pod,
                            int full_eval, cycle_out_t *o,
                            struct ks_prefilter_result *pre,
                            uint32_t *n_feasible)
{
    uint32_t n_cand = candidate_nodes(s, pre, o->r.n_nodes);
    int identity = pre->all; /* candidate_nodes: cand[i] = i */
    ks_prefilter_result_free(pre);
    *n_feasible = 0;
    if (n_cand == 0)
        return fit_error(o);
    if (filter_nodes(s, fw, cs, pod, n_cand, identity,
                     ks_sched_nodes_to_find(s, fw, full_eval, n_cand), o,
                     n_feasible) != 0)
        return -1;
    return 0; /* extenders next; no node left is a FitError then */
}

/* upstream findNodesThatFitPod: 0 with the feasible nodes in s->feasible
 * (*n_feasible of them, maybe none: extenders come next), or -1 with o
 * saying why not (FitError or Error). When the nominated node passes and
 * keep_pre is given, *nominated is set and PreFilter's result is handed
 * over in *keep_pre (the caller frees it): extenders that reject the
 * nominated node send the attempt on to every node, as upstream. */
static int find_nodes_that_fit(ks_scheduler_t *s, ks_framework_t *fw,
                               ks_cycle_state_t *cs, const ks_pod_t *pod,
                               int full_eval, cycle_out_t *o,
                               uint32_t *n_feasible,
                               struct ks_prefilter_result *keep_pre,
                               int *nominated)
{
    struct ks_prefilter_result pre = {0};
    int rc;
    if (run_prefilter(s, fw, cs, pod, &pre, o) != 0)
        return -1;
    rc = try_nominated_node(s, fw, cs, pod, &pre, o);
    if (rc > 0 && keep_pre != NULL) {
        *keep_pre = pre;
        *nominated = 1;
        *n_feasible = 1;
        return 0;
    }
    if (rc != 0) {
        ks_prefilter_result_free(&pre);
        *n_feasible = rc > 0 ? 1 : 0;
        return rc > 0 ? 0 : -1;
    }
    return filter_all_nodes(s, fw, cs, pod, full_eval, o, &pre, n_feasible);
}

/* --- Score ---------------------------------------------------------------------- */

/* upstream prioritizeNodes: PreScore and Score (weighted, normalized) into
 * s->scores and s->totals; without Score plugins every node scores 1. 0,
 * or -1 on an Error. */
static int prioritize_nodes(ks_scheduler_t *s, ks_framework_t *fw,
                            ks_cycle_state_t *cs, const ks_pod_t *pod,
                            uint32_t n_feasible, cycle_out_t *o)
{
    ks_status_t st;
    double t0;
    ks_code_t c;
    uint32_t i;
    if (fw->n_points[KS_EP_SCORE] == 0) {
        /* upstream: every node scores 1 only without extenders */
        int64_t one = s->ext_n_cycle ? 0 : 1;
        for (i = 0; i < n_feasible; i++)
            s->totals[i] = one;
        o->r.totals = s->totals;
        return 0;
    }
    t0 = KS_SCHED_EP_T0(s);
    c = ks_fw_run_pre_score(fw, cs, pod, s->feasible, n_feasible, &st);
    ks_sched_ep_done(s, fw, KS_EP_PRE_SCORE, c, t0);
    o->r.kept = NULL;
    if (c == KS_SUCCESS) {
        t0 = KS_SCHED_EP_T0(s);
        /* Batched: the kept raw scores; plugin timing samples and any
         * failure go the unbatched way, which writes every row. */
        if (s->bt.active && !s->env.sample_plugins &&
            ks_sched_batch_score(s, fw, cs, pod, n_feasible) == KS_SUCCESS)
            o->r.kept = &s->kept_view;
        else
            c = ks_fw_run_score(fw, cs, pod, s->feasible,
                                s->idx_ok ? s->feasible_idx : NULL,
                                s->names_ok ? s->feasible_names : NULL,
                                n_feasible, s->scores, s->skipped, s->totals,
                                &st);
        ks_sched_ep_done(s, fw, KS_EP_SCORE, c, t0);
    }
    if (c != KS_SUCCESS)
        return cycle_error(o, &st);
    o->r.scored = 1;
    o->r.scores = s->scores;
    o->r.score_skipped = s->skipped;
    o->r.totals = s->totals;
    return 0;
}

int64_t ks_cycle_result_score(const ks_cycle_result_t *r, size_t p,
                              uint32_t k)
{
    const ks_score_kept_view_t *v = r->kept;
    if (v != NULL && p < 64 && v->at[p] != KS_SCORE_IN_ROW)
        return v->wt[(size_t)v->fidx[k] * v->np + v->at[p]];
    return r->scores[p * r->n_feasible + k];
}

/* --- schedulePod ------------------------------------------------------------------ */

/* After Filter and the extenders' filters: select, or Score and ask the
 * extenders' prioritizeVerb (1: suspended). */
static int after_filter(ks_scheduler_t *s, ks_framework_t *fw,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        uint32_t n_feasible, int full_eval, cycle_out_t *o)
{
    const ks_extender_config_t *ex;
    size_t n_ext = ks_sched_extenders(s, &ex), k;
    int started = 0;
    if (n_feasible == 0) {
        fit_error(o);
        return 0;
    }
    o->r.n_feasible = n_feasible;
    if (n_feasible == 1 && !s->opts.score_single_node && !full_eval) {
        o->r.selected = s->feasible[0]->node->name;
        if (s->bt.active)
            ks_sched_batch_chosen(s, s->bt.fidx[0]);
        return 0;
    }
    s->ext_n_cycle = n_ext;
    if (prioritize_nodes(s, fw, cs, pod, n_feasible, o) != 0)
        return 0;
    for (k = 0; k < n_ext; k++) {
        if (ex[k].prioritize_verb == NULL ||
            !ks_extender_interested(&ex[k], pod))
            continue;
        if (!started && ks_sched_ext_suspend(s, n_ext, EXT_STAGE_PRIORITIZE,
                                    n_feasible) != 0) {
            ks_sched_ext_release(s);
            cycle_error(o, NULL);
            return 0;
        }
        started = 1;
        ks_sched_ext_start(s, &ex[k], k, ex[k].prioritize_verb, pod);
    }
    if (started && s->susp->outstanding > 0)
        return 1;
    if (started) {
        ks_sched_ext_prioritize_apply(s, pod);
        ks_sched_ext_release(s);
    }
    {
        uint32_t at = ks_sched_select_host(s, fw->pool, n_feasible);
        o->r.selected = s->feasible[at]->node->name;
        if (s->bt.active)
            ks_sched_batch_chosen(s, s->bt.fidx[at]);
    }
    return 0;
}

/* The extenders' filters are done (ext_filter_next returned 0): when they
 * rejected the nominated node, evaluate every node and ask them again;
 * else go on to Score. 1: suspended. */
static int filter_stage_done(ks_scheduler_t *s, ks_framework_t *fw,
                             ks_cycle_state_t *cs, const ks_pod_t *pod,
                             int full_eval, cycle_out_t *o)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n_ext = ks_sched_extenders(s, &ex);
    uint32_t n_feasible = p->n_feasible;
    int rc;
    if (p->has_pre && n_feasible == 0) {
        p->has_pre = 0;
        if (filter_all_nodes(s, fw, cs, pod, full_eval, o, &p->pre,
                             &n_feasible) != 0) {
            ks_sched_ext_release(s);
            return 0;
        }
        if (n_feasible > 0) {
            if (ks_sched_ext_suspend(s, n_ext, EXT_STAGE_FILTER, n_feasible) != 0) {
                ks_sched_ext_release(s);
                cycle_error(o, NULL);
                return 0;
            }
            p->next = 0;
            rc = ks_sched_ext_filter_next(s, pod, o);
            if (rc > 0)
                return 1;
            n_feasible = p->n_feasible;
            if (rc < 0) {
                ks_sched_ext_release(s);
                return 0;
            }
        }
    }
    ks_sched_ext_release(s);
    return after_filter(s, fw, cs, pod, n_feasible, full_eval, o);
}

int ks_sched_schedule_pod(ks_scheduler_t *s, ks_framework_t *fw,
                          ks_cycle_state_t *cs, const ks_pod_t *pod,
                          cycle_out_t *o)
{
    uint32_t n_all = ks_snapshot_num_nodes(s->snap), n_feasible = 0;
    const ks_extender_config_t *ex;
    size_t n_ext = ks_sched_extenders(s, &ex);
    struct ks_prefilter_result pre = {0};
    int nominated = 0;
    int full_eval = s->opts.full_eval_name &&
                    strcmp(pod->name, s->opts.full_eval_name) == 0 &&
                    strcmp(pod->ns, s->opts.full_eval_ns) == 0;
    int rc;

    if (ensure_scratch(s, n_all, fw->n_points[KS_EP_SCORE]) != 0) {
        cycle_error(o, NULL);
        return 0;
    }
    s->names_ok = 0; /* set by filter_nodes when it fills the names */
    s->idx_ok = 0;   /* and the indices */
    ks_sched_status_clear(s);
    s->smap.absent = s->opts.absent_success ? KS_SUCCESS
                                            : KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    o->r.n_nodes = n_all;
    o->r.statuses = &s->smap;
    o->r.feasible = s->feasible;
    ks_ext_trace_stop(&s->ext_trace);
    if (full_eval && n_ext > 0 &&
        ks_ext_trace_begin(&s->ext_trace, s->snap, ex, n_ext) == 0)
        o->r.ext_trace = &s->ext_trace;
    if (n_all == 0) {
        snprintf(o->message, sizeof o->message,
                 "no nodes available to schedule pods");
        o->r.error = 1;
        return 0;
    }
    (void)ks_sched_batch_begin(s, fw, pod, full_eval, n_ext);
    /* Rejections' statuses may wait until a FitError asks for them, unless
     * something reads them on success: --explain's pod, the conformance
     * runner (every Filter plugin on every node) and extenders. */
    s->filter_lazy = !full_eval && n_ext == 0 && !s->opts.run_all_filters;
    if (find_nodes_that_fit(s, fw, cs, pod, full_eval, o, &n_feasible,
                            n_ext > 0 ? &pre : NULL, &nominated) != 0)
        return 0;
    if (n_ext > 0 && n_feasible > 0) {
        if (ks_sched_ext_suspend(s, n_ext, EXT_STAGE_FILTER, n_feasible) != 0) {
            if (nominated)
                ks_prefilter_result_free(&pre);
            ks_sched_ext_release(s);
            cycle_error(o, NULL);
            return 0;
        }
        s->susp->next = 0;
        s->susp->pre = pre;
        s->susp->has_pre = nominated;
        rc = ks_sched_ext_filter_next(s, pod, o);
        if (rc > 0)
            return 1;
        if (rc < 0) {
            ks_sched_ext_release(s);
            return 0;
        }
        return filter_stage_done(s, fw, cs, pod, full_eval, o);
    }
    return after_filter(s, fw, cs, pod, n_feasible, full_eval, o);
}

int ks_sched_schedule_pod_resume(ks_scheduler_t *s, ks_framework_t *fw,
                                 ks_cycle_state_t *cs, const ks_pod_t *pod,
                                 cycle_out_t *o)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n_ext = ks_sched_extenders(s, &ex);
    int full_eval = s->opts.full_eval_name &&
                    strcmp(pod->name, s->opts.full_eval_name) == 0 &&
                    strcmp(pod->ns, s->opts.full_eval_ns) == 0;
    int rc;
    if (p->stage == EXT_STAGE_PRIORITIZE) {
        uint32_t n = p->n_feasible;
        ks_sched_ext_prioritize_apply(s, pod);
        ks_sched_ext_release(s);
        o->r.selected =
            s->feasible[ks_sched_select_host(s, fw->pool, n)]->node->name;
        return 0;
    }
    /* EXT_STAGE_FILTER: the answer of extender p->next */
    if (p->next < n_ext &&
        ks_sched_ext_filter_apply(s, &ex[p->next], &p->calls[p->next], o) != 0) {
        ks_sched_ext_release(s);
        return 0;
    }
    p->next++;
    rc = ks_sched_ext_filter_next(s, pod, o);
    if (rc > 0)
        return 1;
    if (rc < 0) {
        ks_sched_ext_release(s);
        return 0;
    }
    return filter_stage_done(s, fw, cs, pod, full_eval, o);
}
