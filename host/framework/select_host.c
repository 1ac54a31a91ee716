/*
 * Host selection: how many feasible nodes a cycle looks for (upstream
 * numFeasibleNodesToFind, percentageOfNodesToScore) and which of the
 * scored nodes it picks (upstream selectHost: the highest total, ties
 * broken at random, or by the smallest node name with --deterministic).
 *
 * Reads the scheduler's scratch arrays of the current cycle; advances the
 * env's random numbers. Loop thread only. Allocates nothing.
 */
#include <string.h>

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

/* The highest total; ties broken uniformly at random (upstream's
 * reservoir sampling picks each of k equal totals with probability 1/k:
 * so does one draw over the k, here, after counting them), or by the
 * smallest node name when deterministic. Two plain passes instead of one
 * random draw per tie: on an empty cluster every node ties. */
uint32_t ks_sched_select_host(ks_scheduler_t *s, uint32_t n_feasible)
{
    const int64_t *t = s->totals;
    int64_t max;
    uint32_t best = 0, ties = 0, i, pick;
    if (n_feasible == 0)
        return 0;
    max = t[0];
    for (i = 1; i < n_feasible; i++)
        if (t[i] > max)
            max = t[i];
    for (i = 0; i < n_feasible; i++)
        if (t[i] == max) {
            if (ties == 0)
                best = i;
            ties++;
        }
    if (ties == 1)
        return best;
    if (s->opts.deterministic) {
        for (i = best + 1; i < n_feasible; i++)
            if (t[i] == max && strcmp(s->feasible[i]->node->name,
                                      s->feasible[best]->node->name) < 0)
                best = i;
        return best;
    }
    pick = rand_below(s, ties);
    for (i = best; i < n_feasible; i++)
        if (t[i] == max && pick-- == 0)
            return i;
    return best; /* not reached */
}
