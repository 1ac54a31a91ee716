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

#include "pool.h"
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
        memset(s->smap.set, 0, cap);
        GROW(cand, cap * sizeof *s->cand);
        GROW(feasible_flag, cap);
        GROW(feasible, cap * sizeof *s->feasible);
        GROW(totals, cap * sizeof *s->totals);
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
    free(s->smap.st);
    free(s->smap.set);
    free(s->cand);
    free(s->feasible_flag);
    free(s->feasible);
    free(s->scores);
    free(s->totals);
    free(s->skipped);
}

/* --- outcomes ------------------------------------------------------------------ */

static void add_plugin(cycle_out_t *o, const char *p)
{
    unsigned i;
    if (p == NULL)
        return;
    for (i = 0; i < o->n_plugins; i++)
        if (o->plugins[i] == p)
            return;
    if (o->n_plugins < KS_QPOD_MAX_PLUGINS)
        o->plugins[o->n_plugins++] = p;
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
    for (i = 0; i < n_all; i++) {
        s->smap.st[i] = o->pre_status;
        s->smap.set[i] = 1;
    }
    o->prefilter_failed = 1;
    add_plugin(o, o->pre_status.plugin);
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
        for (i = 0; i < n_all; i++)
            s->cand[i] = i;
        return n_all;
    }
    for (i = 0; i < pre->n; i++) {
        uint32_t idx = ks_snapshot_index(s->snap, pre->names[i]);
        if (idx != UINT32_MAX)
            s->cand[n_cand++] = idx;
    }
    return n_cand;
}

typedef struct filter_job {
    ks_scheduler_t *s;
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    uint32_t n_cand, start, want;
    atomic_uint found;
    atomic_int error;
} filter_job_t;

static void filter_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    filter_job_t *j = ud;
    ks_scheduler_t *s = j->s;
    uint32_t pos, found = 0;
    (void)worker;
    for (pos = b; pos < e; pos++) {
        uint32_t at = j->start + pos;
        uint32_t idx = s->cand[at >= j->n_cand ? at - j->n_cand : at];
        const ks_node_info_t *ni = ks_snapshot_node_at(s->snap, idx);
        ks_status_t st; /* copied to the map only on failure */
        ks_code_t c;
        /* The shared counter is touched once per 32 nodes, not per
         * feasible node: contended atomics cost more than filtering. */
        if ((pos - b) % 32 == 0) {
            if (found) {
                atomic_fetch_add(&j->found, found);
                found = 0;
            }
            if (atomic_load(&j->found) >= j->want || atomic_load(&j->error))
                return;
        }
        c = ks_fw_run_filter_with_nominated(j->fw, j->cs, j->pod, ni,
                                            s->opts.run_all_filters, &st);
        if (c == KS_SUCCESS) {
            s->feasible_flag[pos] = 1;
            found++;
        } else {
            s->smap.st[idx] = st;
            s->feasible_flag[pos] = 2;
            if (c == KS_ERROR)
                atomic_store(&j->error, (int)idx + 1);
        }
    }
    if (found)
        atomic_fetch_add(&j->found, found);
}

/* upstream findNodesThatPassFilters: Filter on the candidates from the
 * round-robin start until `want` pass, on the workers. The feasible nodes
 * go to s->feasible in evaluation order; *n_feasible says how many. 0, or
 * -1 on an Error. */
static int filter_nodes(ks_scheduler_t *s, ks_framework_t *fw,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        uint32_t n_cand, uint32_t want, cycle_out_t *o,
                        uint32_t *n_feasible)
{
    filter_job_t job = {.s = s, .fw = fw, .cs = cs, .pod = pod,
                        .n_cand = n_cand, .want = want,
                        .start = s->next_start < n_cand ? s->next_start : 0};
    uint32_t i, processed;
    double t0;
    s->next_start = job.start;
    memset(s->feasible_flag, 0, n_cand);
    if (fw->n_points[KS_EP_FILTER] == 0) {
        for (i = 0; i < want; i++)
            s->feasible_flag[i] = 1;
    } else {
        uint32_t chunk = fw->pool ? (n_cand / (8 * ks_pool_size(fw->pool))) + 1
                                  : n_cand;
        if (chunk > 256)
            chunk = 256;
        t0 = KS_SCHED_EP_T0(s);
        ks_pool_run(fw->pool, n_cand, chunk, filter_chunk, &job);
        ks_sched_ep_done(s, fw, KS_EP_FILTER,
                         atomic_load(&job.error)    ? KS_ERROR
                         : atomic_load(&job.found) ? KS_SUCCESS
                                                   : KS_UNSCHEDULABLE,
                         t0);
    }
    if (atomic_load(&job.error)) {
        uint32_t idx = (uint32_t)atomic_load(&job.error) - 1;
        return cycle_error(o, &s->smap.st[idx]);
    }
    /* Collect in evaluation order, keep the first `want`, and forget the
     * statuses of nodes past the cut (workers may overshoot). */
    *n_feasible = 0;
    processed = n_cand;
    for (i = 0; i < n_cand; i++) {
        uint32_t idx = s->cand[(s->next_start + i) % n_cand];
        if (*n_feasible == want) {
            processed = i;
            for (; i < n_cand; i++)
                s->feasible_flag[i] = 0;
            break;
        }
        if (s->feasible_flag[i] == 1) {
            s->feasible[(*n_feasible)++] = ks_snapshot_node_at(s->snap, idx);
        } else if (s->feasible_flag[i] == 2) {
            s->smap.set[idx] = 1;
            add_plugin(o, s->smap.st[idx].plugin);
        }
    }
    s->next_start = (s->next_start + processed) % n_cand;
    return 0;
}

/* upstream findNodesThatFitPod: 0 with *n_feasible > 0 nodes in
 * s->feasible, or -1 with o saying why not (FitError or Error). */
static int find_nodes_that_fit(ks_scheduler_t *s, ks_framework_t *fw,
                               ks_cycle_state_t *cs, const ks_pod_t *pod,
                               int full_eval, cycle_out_t *o,
                               uint32_t *n_feasible)
{
    struct ks_prefilter_result pre = {0};
    uint32_t n_cand;
    int rc;
    if (run_prefilter(s, fw, cs, pod, &pre, o) != 0)
        return -1;
    rc = try_nominated_node(s, fw, cs, pod, &pre, o);
    if (rc != 0) {
        ks_prefilter_result_free(&pre);
        *n_feasible = rc > 0 ? 1 : 0;
        return rc > 0 ? 0 : -1;
    }
    n_cand = candidate_nodes(s, &pre, o->r.n_nodes);
    ks_prefilter_result_free(&pre);
    if (n_cand == 0)
        return fit_error(o);
    if (filter_nodes(s, fw, cs, pod, n_cand,
                     ks_sched_nodes_to_find(s, fw, full_eval, n_cand), o,
                     n_feasible) != 0)
        return -1;
    return *n_feasible > 0 ? 0 : fit_error(o);
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
        for (i = 0; i < n_feasible; i++)
            s->totals[i] = 1;
        o->r.totals = s->totals;
        return 0;
    }
    t0 = KS_SCHED_EP_T0(s);
    c = ks_fw_run_pre_score(fw, cs, pod, s->feasible, n_feasible, &st);
    ks_sched_ep_done(s, fw, KS_EP_PRE_SCORE, c, t0);
    if (c == KS_SUCCESS) {
        t0 = KS_SCHED_EP_T0(s);
        c = ks_fw_run_score(fw, cs, pod, s->feasible, n_feasible, s->scores,
                            s->skipped, s->totals, &st);
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

/* --- schedulePod ------------------------------------------------------------------ */

void ks_sched_schedule_pod(ks_scheduler_t *s, ks_framework_t *fw,
                           ks_cycle_state_t *cs, const ks_pod_t *pod,
                           cycle_out_t *o)
{
    uint32_t n_all = ks_snapshot_num_nodes(s->snap), n_feasible = 0, best;
    int full_eval = s->opts.full_eval_name &&
                    strcmp(pod->name, s->opts.full_eval_name) == 0 &&
                    strcmp(pod->ns, s->opts.full_eval_ns) == 0;

    if (ensure_scratch(s, n_all, fw->n_points[KS_EP_SCORE]) != 0) {
        cycle_error(o, NULL);
        return;
    }
    /* Clear the statuses the previous cycle set. */
    if (s->smap.n > 0) /* no nodes: no array (memset(NULL, 0, 0) is UB) */
        memset(s->smap.set, 0, s->smap.n);
    o->r.n_nodes = n_all;
    o->r.statuses = &s->smap;
    o->r.feasible = s->feasible;
    if (n_all == 0) {
        snprintf(o->message, sizeof o->message,
                 "no nodes available to schedule pods");
        o->r.error = 1;
        return;
    }
    if (find_nodes_that_fit(s, fw, cs, pod, full_eval, o, &n_feasible) != 0)
        return;
    o->r.n_feasible = n_feasible;
    if (n_feasible == 1 && !s->opts.score_single_node && !full_eval) {
        o->r.selected = s->feasible[0]->node->name;
        return;
    }
    if (prioritize_nodes(s, fw, cs, pod, n_feasible, o) != 0)
        return;
    best = ks_sched_select_host(s, n_feasible);
    o->r.selected = s->feasible[best]->node->name;
}
