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

/* Ties at random by reservoir sampling: each of k equal totals seen so far
 * is kept with probability 1/k. */
uint32_t ks_sched_select_host(ks_scheduler_t *s, uint32_t n_feasible)
{
    uint32_t best = 0, ties = 1, i;
    for (i = 1; i < n_feasible; i++) {
        if (s->totals[i] > s->totals[best]) {
            best = i;
            ties = 1;
        } else if (s->totals[i] == s->totals[best]) {
            ties++;
            if (s->opts.deterministic) {
                if (strcmp(s->feasible[i]->node->name,
                           s->feasible[best]->node->name) < 0)
                    best = i;
            } else if (rand_below(s, ties) == 0) {
                best = i;
            }
        }
    }
    return best;
}
