/*
 * Host selection: how many feasible nodes a cycle looks for (upstream
 * numFeasibleNodesToFind, percentageOfNodesToScore) and which of the
 * scored nodes it picks (upstream selectHost: the highest total, ties
 * broken at random, or by the smallest node name with --deterministic).
 *
 * Reads the scheduler's scratch arrays of the current cycle; advances the
 * env's random numbers. Loop thread only (a long list is scanned on the
 * Filter pool's threads, which only read the totals). Allocates nothing.
 */
#include <string.h>

#include "pool.h"
#include "scheduler_impl.h"

#define MIN_FEASIBLE_NODES 100
#define MIN_FEASIBLE_PERCENT 5

uint32_t ks_num_feasible_nodes_to_find(uint32_t n_all, int32_t pct)
{
    int64_t adaptive, n;
    if (n_all < MIN_FEASIBLE_NODES || pct >= 100)
        return n_all;
    adaptive = pct;
    if (adaptive <= 0) {
        adaptive = 50 - (int64_t)n_all / 125;
        if (adaptive < MIN_FEASIBLE_PERCENT)
            adaptive = MIN_FEASIBLE_PERCENT;
    }
    n = (int64_t)n_all * adaptive / 100;
    if (n < MIN_FEASIBLE_NODES)
        return MIN_FEASIBLE_NODES;
    return (uint32_t)n;
}

/* The percentage: 100 for the pod under --explain, else the override,
 * else the profile's, else the configuration's. */
uint32_t ks_sched_nodes_to_find(const ks_scheduler_t *s,
                                const ks_framework_t *fw, int full_eval,
                                uint32_t n_cand)
{
    int32_t pct;
    if (full_eval)
        pct = 100;
    else if (s->opts.percentage_override > 0)
        pct = s->opts.percentage_override;
    else if (fw->percentage_of_nodes_to_score >= 0)
        pct = fw->percentage_of_nodes_to_score;
    else
        pct = s->gen->cfg->percentage_of_nodes_to_score;
    return ks_num_feasible_nodes_to_find(n_cand, pct);
}

/* A uniform draw in [0, n) from the env's random numbers. */
static uint32_t rand_below(ks_scheduler_t *s, uint32_t n)
{
    return (uint32_t)(((ks_fw_env_rand(&s->env) >> 32) * (uint64_t)n) >> 32);
}

/* Lists at least this long are scanned by the pool's threads, in at most
 * SEL_SEGS segments of at least SEL_MIN_SEG totals. */
#define SEL_PAR_MIN 2048
#define SEL_MIN_SEG 512
#define SEL_SEGS 64

/* The scan of one list: per segment, the highest total, how many reach
 * it and where the first one is. */
typedef struct sel_job {
    const int64_t *t;
    uint32_t n, seg_len;
    int64_t max[SEL_SEGS];
    uint32_t ties[SEL_SEGS], first[SEL_SEGS];
} sel_job_t;

/* One pass over t[lo, hi) (not empty): the highest total, how many reach
 * it, and where the first one is. */
static int64_t scan_max(const int64_t *t, uint32_t lo, uint32_t hi,
                        uint32_t *ties, uint32_t *first)
{
    int64_t max = t[lo];
    uint32_t i, n = 1, at = lo;
    for (i = lo + 1; i < hi; i++) {
        int64_t v = t[i];
        if (v > max) {
            max = v;
            n = 1;
            at = i;
        } else {
            n += v == max;
        }
    }
    *ties = n;
    *first = at;
    return max;
}

static void sel_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    sel_job_t *j = ud;
    uint32_t g;
    (void)worker;
    for (g = b; g < e; g++) {
        uint32_t lo = g * j->seg_len, hi = lo + j->seg_len;
        if (hi > j->n)
            hi = j->n;
        j->max[g] = scan_max(j->t, lo, hi, &j->ties[g], &j->first[g]);
    }
}

/* The highest total; ties broken uniformly at random (upstream's
 * reservoir sampling picks each of k equal totals with probability 1/k:
 * so does one draw over the k, here, after counting them), or by the
 * smallest node name when deterministic. One pass finds the highest
 * total and lists where its ties are (s->tie_at), then one draw picks
 * among them, instead of one random draw per tie. A long list is counted
 * by segments on the pool (each segment's maximum, ties and first tie),
 * then the draw is the same one over the same count, and the pick-th tie
 * is found in the segment that holds it (at its place when every total
 * from the segment's first tie on ties). */
uint32_t ks_sched_select_host(ks_scheduler_t *s, struct ks_pool *pool,
                              uint32_t n_feasible)
{
    const int64_t *t = s->totals;
    int64_t max;
    uint32_t best = 0, ties = 0, i, pick, from = 0;
    if (n_feasible == 0)
        return 0;
    if (pool != NULL && ks_pool_size(pool) > 1 &&
        n_feasible >= SEL_PAR_MIN && !s->opts.deterministic) {
        sel_job_t j;
        uint32_t n_seg, g;
        j.t = t;
        j.n = n_feasible;
        n_seg = n_feasible / SEL_MIN_SEG;
        if (n_seg > SEL_SEGS)
            n_seg = SEL_SEGS;
        j.seg_len = (n_feasible + n_seg - 1) / n_seg;
        n_seg = (n_feasible + j.seg_len - 1) / j.seg_len;
        ks_pool_run_affine(pool, n_seg, 1, sel_chunk, &j);
        max = j.max[0];
        for (g = 1; g < n_seg; g++)
            if (j.max[g] > max)
                max = j.max[g];
        for (g = 0; g < n_seg; g++)
            if (j.max[g] == max) {
                if (ties == 0)
                    best = j.first[g];
                ties += j.ties[g];
            }
        if (ties == 1)
            return best;
        pick = rand_below(s, ties);
        /* the segment of the pick-th tie, then the tie within it */
        for (g = 0; g < n_seg; g++) {
            if (j.max[g] != max)
                continue;
            if (pick < j.ties[g]) {
                uint32_t end = (g + 1) * j.seg_len;
                from = j.first[g];
                if (end > n_feasible)
                    end = n_feasible;
                /* every total from the first tie to the segment's end
                 * ties: the pick-th is at its place */
                if (j.ties[g] == end - from)
                    return from + pick;
                break;
            }
            pick -= j.ties[g];
        }
        for (i = from; i < n_feasible; i++)
            if (t[i] == max && pick-- == 0)
                return i;
        return best; /* not reached */
    }
    if (!s->opts.deterministic) {
        /* one pass: the highest total and where each of its ties is
         * (tie_at is sized with the totals) */
        uint32_t *at = s->tie_at;
        max = t[0];
        for (i = 0; i < n_feasible; i++) {
            int64_t v = t[i];
            if (v > max) {
                max = v;
                ties = 0;
            }
            at[ties] = i;
            ties += v == max;
        }
        if (ties == 1)
            return at[0];
        return at[rand_below(s, ties)];
    }
    /* deterministic: the smallest node name among the highest totals */
    max = scan_max(t, 0, n_feasible, &ties, &best);
    if (ties == 1)
        return best;
    for (i = best + 1; i < n_feasible; i++)
        if (t[i] == max && strcmp(s->feasible[i]->node->name,
                                  s->feasible[best]->node->name) < 0)
            best = i;
    return best;
}
