/*
 * DefaultPreemption, loaded from its built .so and driven through the host
 * fixture with a resource-only Filter plugin (preemption_mock.h). Every expected value
 * below was worked out by hand from kube-scheduler v1.24.1's rules (v1.36's
 * for PodDisruptionBudgets, which v1.24.1 shared but for the order of the
 * victims: pdb_victims_sorted_after_reprieve); the comment above each test
 * shows the arithmetic.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"
#include "preemption_mock.h"

#define GI (1024LL * 1024 * 1024)
/* 2022-05-01T00:00:00Z in Unix milliseconds. */
#define MAY1 1651363200000LL

static mock_host_t *mh;
static const ks_plugin_t *P;
static void *self;
static ks_status_t *st;
static ks_cycle_state_t *cs;
static ks_node_status_map_t *sm;
static ks_node_info_t *nodes[16];
static uint32_t n_nodes;

static void create_with(const char *args)
{
    char err[512];
    if (self != NULL)
        P->destroy(self);
    self = NULL;
    ck_assert_msg(mock_plugin_create(mh, P, args, &self, err, sizeof err) == 0,
                  "create failed: %s", err);
}

static void setup(void)
{
    mh = mock_host_new();
    pm_install(mh);
    P = mock_plugin_load("DefaultPreemption");
    ck_assert_ptr_nonnull(P);
    self = NULL;
    create_with(NULL);
    st = mock_status_new();
    cs = mock_cycle_state_new();
    sm = mock_node_status_map_new();
    n_nodes = 0;
}

static void teardown(void)
{
    if (self != NULL)
        P->destroy(self);
    self = NULL;
    mock_status_free(st);
    mock_cycle_state_free(cs);
    mock_node_status_map_free(sm);
    mock_host_free(mh);
    mock_objects_clear();
    mock_free_all();
}

/* A node with `cpu` millicores, 8Gi, 110 pods, whose Filter verdict is
 * `code`; added to the snapshot (in call order, which is name order in the
 * tests). */
static ks_node_info_t *add_node(const char *name, int64_t cpu, ks_code_t code)
{
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new(name, cpu, 8 * GI, 110));
    nodes[n_nodes++] = ni;
    mock_host_set_nodes(mh, nodes, n_nodes);
    mock_node_status_map_set(sm, name, code);
    return ni;
}

static ks_pod_t *new_pod(const char *name, int32_t prio, int64_t cpu)
{
    ks_pod_t *p = mock_pod_new("default", name, cpu, 1 * GI);
    p->priority = prio;
    return p;
}

/* A running pod on `ni`. */
static ks_pod_t *run_on(ks_node_info_t *ni, const char *name, int32_t prio,
                        int64_t cpu, int64_t start_ms)
{
    ks_pod_t *p = new_pod(name, prio, cpu);
    p->start_unix_ms = start_ms;
    mock_pod_set_node(p, ni->node->name);
    mock_nodeinfo_add_pod(ni, p);
    return p;
}

static ks_code_t preempt(const ks_pod_t *pod, const char **nominated)
{
    *nominated = NULL;
    mock_status_reset(st);
    return P->post_filter(self, cs, pod, sm, nominated, st);
}

static void assert_message(const char *want)
{
    ck_assert_uint_eq(mock_status_reason_count(st), 1);
    ck_assert_str_eq(mock_status_reason_at(st, 0), want);
}

/* --- the conformance scenario ------------------------------------------- */

/*
 * preemption-basic (pn1..pn3: 4 CPUs each; every node fails Filter with
 * "Insufficient cpu"):
 *   hi-500 (2500m): pn1 loses low-100 (2000m, low-50 is reprieved: 1000 +
 *   2500 <= 4000), highest victim 100; pn2 loses low-10, highest 10; pn3 has
 *   only crit-1000 -> no victims. Lowest highest-priority victim: pn2.
 *   never (priority 800, preemptionPolicy Never): not eligible; nothing is
 *   simulated, deleted or nominated.
 *   zero (priority 0): nothing has lower priority anywhere.
 *   hi-2000 (4000m): pn1 [low-100, low-50] highest 100; pn2 [hi-500] 500;
 *   pn3 [crit-1000] 1000 -> pn1, victims in order of importance.
 * The "never" pod's preempt_never is set by hand here.
 */
START_TEST(conformance_preemption_basic)
{
    ks_node_info_t *pn1 = add_node("pn1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *pn2 = add_node("pn2", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *pn3 = add_node("pn3", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *low100 = run_on(pn1, "low-100", 100, 2000, MAY1 + 60000);
    ks_pod_t *low50 = run_on(pn1, "low-50", 50, 1000, MAY1 + 120000);
    ks_pod_t *low10 = run_on(pn2, "low-10", 10, 3000, MAY1 + 180000);
    ks_pod_t *hi500, *never, *zero, *hi2000;
    const char *nom;

    run_on(pn3, "crit-1000", 1000, 3000, MAY1 + 240000);

    hi500 = new_pod("hi-500", 500, 2500);
    ck_assert_int_eq(preempt(hi500, &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "pn2");
    ck_assert_ptr_eq(nom, mock_intern("pn2"));
    ck_assert_uint_eq(mock_status_reason_count(st), 0);
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], low10);
    ck_assert_uint_eq(mh->n_events, 1);
    ck_assert_str_eq(mh->last_event_reason, "Preempted");
    ck_assert_str_eq(mh->last_event_message,
                     "Preempted by default/hi-500 on node pn2");

    /* The victim is gone and the preemptor runs on its nominated node. */
    mock_nodeinfo_remove_pod(pn2, low10);
    mock_pod_set_node(hi500, "pn2");
    hi500->start_unix_ms = MAY1 + 30 * 86400000LL;
    mock_nodeinfo_add_pod(pn2, hi500);

    never = new_pod("never", 800, 2500);
    never->preempt_never = 1;
    pm.n_filter_calls = 0;
    ck_assert_int_eq(preempt(never, &nom), KS_UNSCHEDULABLE);
    ck_assert_ptr_null(nom);
    assert_message("preemption: not eligible due to preemptionPolicy=Never.");
    ck_assert_uint_eq(pm.n_filter_calls, 0);
    ck_assert_uint_eq(pm.n_rand_calls, 1); /* only hi-500's run */
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_uint_eq(mh->n_events, 1);
    ck_assert_uint_eq(mh->n_nominations, 0);

    zero = new_pod("zero", 0, 2500);
    ck_assert_int_eq(preempt(zero, &nom), KS_UNSCHEDULABLE);
    ck_assert_ptr_null(nom);
    assert_message("preemption: 0/3 nodes are available: 3 No preemption "
                   "victims found for incoming pod.");
    ck_assert_uint_eq(mh->n_deleted, 1);

    hi2000 = new_pod("hi-2000", 2000, 4000);
    ck_assert_int_eq(preempt(hi2000, &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "pn1");
    ck_assert_uint_eq(mh->n_deleted, 3);
    ck_assert_ptr_eq(mh->deleted[1], low100);
    ck_assert_ptr_eq(mh->deleted[2], low50);
}
END_TEST

/* --- victims on one node ------------------------------------------------- */

/*
 * n1 has 4500m: H (prio 200, 500m) stays; X (50, 1500m), Y (40, 1000m),
 * Z (30, 500m) may go. Preemptor 2000m, prio 100.
 * Without X, Y, Z: 500 + 2000 = 2500 fits. Reprieve X: 4000 fits; Y: 5000
 * does not -> victim; Z: 4500 fits. Victims: [Y] only, although Z has the
 * lowest priority.
 * Calls: remove x3, add x3, remove again for Y -> 4 removes, 3 adds;
 * filters: 1 (all removed) + 3 reprieves = 4.
 */
START_TEST(reprieves_as_many_as_fit)
{
    ks_node_info_t *n1 = add_node("n1", 4500, KS_UNSCHEDULABLE);
    ks_pod_t *y;
    const char *nom;
    run_on(n1, "h", 200, 500, MAY1);
    run_on(n1, "z", 30, 500, MAY1);
    y = run_on(n1, "y", 40, 1000, MAY1);
    run_on(n1, "x", 50, 1500, MAY1);

    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], y);
    ck_assert_uint_eq(pm.n_remove_calls, 4);
    ck_assert_uint_eq(pm.n_add_calls, 3);
    ck_assert_uint_eq(pm.n_filter_calls, 4);
    /* The simulation ran on a copy of the cycle state... */
    ck_assert_ptr_nonnull(pm.last_ext_state);
    ck_assert_ptr_ne(pm.last_ext_state, cs);
    /* ...and a copy of the NodeInfo: the snapshot is untouched. */
    ck_assert_uint_eq(n1->n_pods, 4);
    ck_assert_int_eq(n1->requested.milli_cpu, 3500);
}
END_TEST

/*
 * Equal priority: the pod that started earlier is more important and is
 * reprieved first. n1 4000m, a (10, 2000m, started +1000) and b (10, 2000m,
 * started +2000) -> with a back, 4000 fits; b does not -> victim b.
 */
START_TEST(equal_priority_earlier_start_is_kept)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *b = run_on(n1, "b", 10, 2000, MAY1 + 2000);
    const char *nom;
    run_on(n1, "a", 10, 2000, MAY1 + 1000);
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], b);
}
END_TEST

/* A pod without a start time counts as started now, i.e. after b (2022),
 * so it is the less important one and becomes the victim. */
START_TEST(unset_start_time_counts_as_now)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *a = run_on(n1, "a", 10, 2000, 0);
    const char *nom;
    run_on(n1, "b", 10, 2000, MAY1 + 2000);
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], a);
}
END_TEST

/* Higher priority before start time: c (20, started last) is reprieved
 * before d (10, started first). n1 4000m, c 2000m, d 2000m, preemptor
 * 2000m -> victim d. Victims are deleted most important first: with a
 * 4000m preemptor both go, c before d. */
START_TEST(priority_before_start_time)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *d = run_on(n1, "d", 10, 2000, MAY1);
    ks_pod_t *c = run_on(n1, "c", 20, 2000, MAY1 + 5000);
    const char *nom;
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], d);

    mh->n_deleted = 0;
    ck_assert_int_eq(preempt(new_pod("q", 100, 4000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 2);
    ck_assert_ptr_eq(mh->deleted[0], c);
    ck_assert_ptr_eq(mh->deleted[1], d);
}
END_TEST

/* --- choosing the node --------------------------------------------------- */

/* Rule: lowest highest-priority victim. n1's victim has 20, n2's 10. */
START_TEST(pick_lowest_highest_priority)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *v2;
    const char *nom;
    run_on(n1, "v1", 20, 4000, MAY1);
    v2 = run_on(n2, "v2", 10, 4000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 1000, 2000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], v2);
}
END_TEST

/*
 * Rule: lowest sum of priorities, each shifted by 2^31. Preemptor 4000m.
 * n1 victims [10, -5]: 10 + 2^31 + (-5) + 2^31 = 4294967301
 * n2 victims [10]:     10 + 2^31            = 2147483658  -> n2.
 * (A plain sum, 5 < 10, would have picked n1.)
 */
START_TEST(pick_lowest_shifted_priority_sum)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "a", 10, 2000, MAY1);
    run_on(n1, "b", -5, 2000, MAY1);
    run_on(n2, "c", 10, 4000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 1000, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
}
END_TEST

/*
 * Rule: fewest victims. The shifted sums tie when n1's second victim has
 * priority INT32_MIN: n1 [10, -2^31]: 10 + 2^31 + 0 = 2147483658 = n2 [10].
 * Highest victim is 10 on both, so the count decides: n2 (1 < 2).
 */
START_TEST(pick_fewest_victims)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "a", 10, 2000, MAY1);
    run_on(n1, "b", INT32_MIN, 2000, MAY1);
    run_on(n2, "c", 10, 4000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 1000, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
    ck_assert_uint_eq(mh->n_deleted, 1);
}
END_TEST

/*
 * Rule: latest "earliest start among the highest-priority victims".
 * n1 victims (10, +9000) and (10, +1000): earliest +1000.
 * n2 victims (10, +5000) and (10, +6000): earliest +5000 -> n2, although n1
 * holds the most recently started pod. Same priorities, sums and counts.
 */
START_TEST(pick_latest_earliest_start)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "a", 10, 2000, MAY1 + 9000);
    run_on(n1, "b", 10, 2000, MAY1 + 1000);
    run_on(n2, "c", 10, 2000, MAY1 + 5000);
    run_on(n2, "d", 10, 2000, MAY1 + 6000);
    ck_assert_int_eq(preempt(new_pod("p", 1000, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
    ck_assert_uint_eq(mh->n_deleted, 2);
}
END_TEST

/* Rule: on a full tie, the first candidate in evaluation order, which
 * starts at the random offset: 0 -> n1, 1 -> n2. */
START_TEST(pick_first_evaluated_on_tie)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "a", 10, 4000, MAY1);
    run_on(n2, "b", 10, 4000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 1000, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
    ck_assert_uint_eq(pm.n_rand_calls, 1);
    ck_assert_uint_eq(pm.last_rand_n, 2);

    pm.offset = 1;
    ck_assert_int_eq(preempt(new_pod("q", 1000, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
}
END_TEST

/* --- how many candidates ------------------------------------------------- */

/*
 * Four nodes whose single victims have priorities 30, 20, 10, 5.
 * Defaults (10 %, 100): max(4*10/100 = 0, 100) capped at 4 -> all four are
 * dry-run -> n4 (priority 5).
 * minCandidateNodesPercentage 50, absolute 1: max(4*50/100 = 2, 1) = 2 ->
 * the dry run stops after n1, n2 -> n2; n3 and n4 are never filtered.
 * Percentage 0, absolute 1 -> 1 candidate -> n1.
 */
START_TEST(number_of_candidates)
{
    const char *nom;
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n3 = add_node("n3", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n4 = add_node("n4", 4000, KS_UNSCHEDULABLE);
    run_on(n1, "a", 30, 4000, MAY1);
    run_on(n2, "b", 20, 4000, MAY1);
    run_on(n3, "c", 10, 4000, MAY1);
    run_on(n4, "d", 5, 4000, MAY1);

    ck_assert_int_eq(preempt(new_pod("p", 1000, 1000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n4");
    ck_assert_uint_eq(pm_distinct_filtered(), 4);

    create_with("minCandidateNodesPercentage: 50\nminCandidateNodesAbsolute: 1\n");
    pm.n_filter_calls = 0;
    ck_assert_int_eq(preempt(new_pod("q", 1000, 1000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
    ck_assert_uint_eq(pm_distinct_filtered(), 2);
    ck_assert(!pm_was_filtered("n3"));
    ck_assert(!pm_was_filtered("n4"));

    create_with("minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 1\n");
    pm.n_filter_calls = 0;
    ck_assert_int_eq(preempt(new_pod("r", 1000, 1000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
    ck_assert_uint_eq(pm_distinct_filtered(), 1);
}
END_TEST

/* --- when preemption cannot help ----------------------------------------- */

/*
 * n1: a low-priority pod, but the 5000m pod does not fit even alone ->
 * "Insufficient cpu"; n2: Filter said UnschedulableAndUnresolvable -> not
 * tried; n3: only a higher-priority pod -> no victims. Entries are sorted
 * as strings.
 */
START_TEST(no_candidate_message)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n3;
    const char *nom;
    add_node("n2", 4000, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    n3 = add_node("n3", 4000, KS_UNSCHEDULABLE);
    run_on(n1, "low", 10, 1000, MAY1);
    run_on(n3, "high", 5000, 1000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 100, 5000), &nom), KS_UNSCHEDULABLE);
    ck_assert_ptr_null(nom);
    assert_message("preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                   "1 No preemption victims found for incoming pod, "
                   "1 Preemption is not helpful for scheduling.");
    ck_assert(!pm_was_filtered("n2"));
    ck_assert_uint_eq(mh->n_deleted, 0);
    ck_assert_uint_eq(mh->n_nominations, 0);
}
END_TEST

/* 10 empty nodes and 2 nodes where even without their pod the 5000m pod
 * does not fit: "10 No ..." sorts before "2 Insufficient cpu" as strings. */
START_TEST(no_candidate_entries_sorted_as_strings)
{
    char name[16];
    uint32_t i;
    const char *nom;
    for (i = 0; i < 12; i++) {
        ks_node_info_t *ni;
        snprintf(name, sizeof name, "n%02u", i);
        ni = add_node(name, 4000, KS_UNSCHEDULABLE);
        if (i >= 10)
            run_on(ni, i == 10 ? "l1" : "l2", 1, 1000, MAY1);
    }
    ck_assert_int_eq(preempt(new_pod("p", 100, 5000), &nom), KS_UNSCHEDULABLE);
    assert_message("preemption: 0/12 nodes are available: 10 No preemption "
                   "victims found for incoming pod, 2 Insufficient cpu.");
}
END_TEST

/* Every node unresolvable: nothing is tried and the pod's own nomination is
 * cleared. Its nominated node's terminating pod does not block it, since
 * that node's verdict is UnschedulableAndUnresolvable. */
START_TEST(all_unresolvable_clears_nomination)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ks_pod_t *dying, *p;
    const char *nom;
    add_node("n2", 4000, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    dying = run_on(n1, "dying", 1, 1000, MAY1);
    dying->deleting = 1;
    p = new_pod("p", 100, 1000);
    p->nominated_node_name = mock_intern("n1");
    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    assert_message("preemption: 0/2 nodes are available: 2 Preemption is not "
                   "helpful for scheduling.");
    ck_assert_uint_eq(pm.n_filter_calls, 0);
    ck_assert_uint_eq(mh->n_nominations, 1);
    ck_assert_ptr_eq(mh->nominated_pod, p);
    ck_assert_str_eq(mh->nominated_node, "");
}
END_TEST

/* A lower-priority pod still terminating on the pod's nominated node: wait
 * instead of preempting again. A terminating pod of equal or higher
 * priority does not count. */
START_TEST(terminating_pod_on_nominated_node)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *dying = run_on(n1, "dying", 10, 1000, MAY1);
    ks_pod_t *p;
    const char *nom;
    run_on(n1, "victim", 10, 3000, MAY1);
    dying->deleting = 1;
    p = new_pod("p", 100, 2000);
    p->nominated_node_name = mock_intern("n1");
    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    assert_message("preemption: not eligible due to a terminating pod on the "
                   "nominated node.");
    ck_assert_uint_eq(pm.n_filter_calls, 0);
    ck_assert_uint_eq(mh->n_deleted, 0);

    dying->priority = 100;
    ck_assert_int_eq(preempt(p, &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
}
END_TEST

/* preemptionPolicy Never is checked first: with a terminating pod on its
 * nominated node the message is still the Never one, and its nomination is
 * left alone. Without the flag the same pod gets the terminating message. */
START_TEST(never_is_checked_first)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *dying = run_on(n1, "dying", 10, 1000, MAY1);
    ks_pod_t *p;
    const char *nom;
    run_on(n1, "victim", 10, 3000, MAY1);
    dying->deleting = 1;
    p = new_pod("p", 100, 2000);
    p->nominated_node_name = mock_intern("n1");
    p->preempt_never = 1;
    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    ck_assert_ptr_null(nom);
    assert_message("preemption: not eligible due to preemptionPolicy=Never.");
    ck_assert_uint_eq(mh->n_nominations, 0);
    ck_assert_uint_eq(pm.n_rand_calls, 0);

    p->preempt_never = 0;
    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    assert_message("preemption: not eligible due to a terminating pod on the "
                   "nominated node.");
}
END_TEST

/*
 * Every reason of a node's verdict is counted. Preemptor: prio 100, 5000m,
 * 4Gi.
 *   n1 (4000m, 2Gi) runs low1 (1000m, 1Gi): without it 5000 > 4000 and
 *      4Gi > 2Gi -> "Insufficient cpu" and "Insufficient memory";
 *   n2 (4000m, 8Gi) is empty -> "No preemption victims found ...";
 *   n3 (4000m, 8Gi) runs low3 (1000m, 1Gi): without it 5000 > 4000, 4Gi fits
 *      -> "Insufficient cpu".
 * Counts: cpu 2, memory 1, no victims 1, over 3 nodes; entries sorted as
 * strings: "1 Insufficient memory" < "1 No ..." < "2 Insufficient cpu".
 * With a host that lacks the per-reason accessors, only n1's first reason
 * (cpu, the mock filter's order) is seen: memory drops out.
 */
START_TEST(every_reason_of_a_node_is_counted)
{
    ks_node_info_t *n1, *n3;
    ks_pod_t *p;
    const char *nom;
    n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 2 * GI, 110));
    nodes[n_nodes++] = n1;
    mock_node_status_map_set(sm, "n1", KS_UNSCHEDULABLE);
    mock_host_set_nodes(mh, nodes, n_nodes);
    add_node("n2", 4000, KS_UNSCHEDULABLE);
    n3 = add_node("n3", 4000, KS_UNSCHEDULABLE);
    run_on(n1, "low1", 10, 1000, MAY1);
    run_on(n3, "low3", 10, 1000, MAY1);
    p = mock_pod_new("default", "p", 5000, 4 * GI);
    p->priority = 100;

    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    ck_assert_ptr_null(nom);
    assert_message("preemption: 0/3 nodes are available: 1 Insufficient "
                   "memory, 1 No preemption victims found for incoming pod, "
                   "2 Insufficient cpu.");
    ck_assert_uint_eq(pm.n_reason_count_calls, 2); /* n1 and n3 failed */
    ck_assert_uint_eq(mh->n_deleted, 0);

    pm_act_as_abi_1_0(mh);
    ck_assert_int_eq(preempt(p, &nom), KS_UNSCHEDULABLE);
    assert_message("preemption: 0/3 nodes are available: 1 No preemption "
                   "victims found for incoming pod, 2 Insufficient cpu.");
    ck_assert_uint_eq(pm.n_reason_count_calls, 2);
}
END_TEST

/* The pod would fit without evicting anyone (its node failed Filter for a
 * reason the simulation does not see): upstream reports an error. */
START_TEST(no_victim_needed_is_an_error)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2;
    const char *nom;
    run_on(n1, "low", 10, 1000, MAY1);
    ck_assert_int_eq(preempt(new_pod("p", 100, 1000), &nom), KS_ERROR);
    assert_message("preemption: expected at least one victim pod on node \"n1\"");

    n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    run_on(n2, "low2", 10, 1000, MAY1);
    ck_assert_int_eq(preempt(new_pod("q", 100, 1000), &nom), KS_ERROR);
    assert_message("preemption: [expected at least one victim pod on node "
                   "\"n1\", expected at least one victim pod on node \"n2\"]");
    ck_assert_uint_eq(mh->n_deleted, 0);
}
END_TEST

/* A failing PreFilter RemovePod extension makes the node an error. */
START_TEST(prefilter_extension_error)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "low", 10, 4000, MAY1);
    pm.fail_remove = 1;
    ck_assert_int_eq(preempt(new_pod("p", 100, 1000), &nom), KS_ERROR);
    /* The framework names the extension and plugin as upstream's
     * RunPreFilterExtensionRemovePod does. */
    assert_message("preemption: running RemovePod on PreFilter plugin "
                   "\"PreemptionFit\": injected remove failure");

    /* An error with two reasons reads as both, joined with ", ". */
    pm.fail_remove = 2;
    ck_assert_int_eq(preempt(new_pod("q", 100, 1000), &nom), KS_ERROR);
    assert_message("preemption: running RemovePod on PreFilter plugin "
                   "\"PreemptionFit\": injected remove failure, second "
                   "injected reason");
}
END_TEST

/* --- after the choice ---------------------------------------------------- */

/* Lower-priority pods nominated to the chosen node lose their nomination;
 * higher-priority ones keep it. */
START_TEST(clears_lower_priority_nominations)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *lowp = new_pod("nominated-low", 50, 1000);
    ks_pod_t *highp = new_pod("nominated-high", 500, 1000);
    const char *nom;
    run_on(n1, "v", 10, 4000, MAY1);
    lowp->nominated_node_name = mock_intern("n1");
    highp->nominated_node_name = mock_intern("n1");
    mock_host_add_nominated(mh, "n1", highp);
    mock_host_add_nominated(mh, "n1", lowp);
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_nominations, 1);
    ck_assert_ptr_eq(mh->nominated_pod, lowp);
    ck_assert_str_eq(mh->nominated_node, "");
}
END_TEST

/* A victim waiting at Permit is rejected instead of deleted. */
START_TEST(waiting_victim_is_rejected)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *v = run_on(n1, "v", 10, 4000, MAY1);
    struct ks_waiting_pod *wp = mock_host_add_waiting(mh, v);
    const char *nom;
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
    ck_assert_uint_eq(mh->n_deleted, 0);
    ck_assert_int_eq(wp->rejected, 1);
    ck_assert_str_eq(wp->last_plugin, "DefaultPreemption");
    ck_assert_str_eq(wp->reject_message, "preempted");
}
END_TEST

START_TEST(delete_failure_is_an_error)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "v", 10, 4000, MAY1);
    mh->delete_rc = -1;
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_ERROR);
    ck_assert_ptr_null(nom);
    assert_message("preemption: deleting pod default/v failed");
}
END_TEST

START_TEST(no_nodes_is_an_error)
{
    const char *nom;
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_ERROR);
    assert_message("preemption: no nodes available");
}
END_TEST

/* --- arguments ----------------------------------------------------------- */

static void expect_args_error(const char *yaml, const char *want)
{
    char err[512];
    void *s = NULL;
    ck_assert_int_ne(mock_plugin_create(mh, P, yaml, &s, err, sizeof err), 0);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err, want) != NULL, "args %s: got \"%s\", want \"%s\"",
                  yaml, err, want);
}

static void expect_args_ok(const char *yaml)
{
    char err[512];
    void *s = NULL;
    ck_assert_msg(mock_plugin_create(mh, P, yaml, &s, err, sizeof err) == 0,
                  "args %s: %s", yaml ? yaml : "(none)", err);
    ck_assert_ptr_nonnull(s);
    P->destroy(s);
}

START_TEST(args_validation)
{
    expect_args_ok(NULL);
    expect_args_ok("minCandidateNodesPercentage: 0\n"); /* absolute stays 100 */
    expect_args_ok("minCandidateNodesAbsolute: 0\n");   /* percentage stays 10 */
    expect_args_ok("kind: DefaultPreemptionArgs\n"
                   "apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "minCandidateNodesPercentage: 100\n"
                   "minCandidateNodesAbsolute: 5\n");

    expect_args_error("minCandidateNodesPercentage: 101\n",
                      "line 1, column 30: minCandidateNodesPercentage: "
                      "Invalid value: 101: not in valid range [0, 100]");
    expect_args_error("minCandidateNodesPercentage: -1\n",
                      "minCandidateNodesPercentage: Invalid value: -1: not in "
                      "valid range [0, 100]");
    expect_args_error("minCandidateNodesAbsolute: -5\n",
                      "line 1, column 28: minCandidateNodesAbsolute: Invalid "
                      "value: -5: not in valid range [0, inf)");
    expect_args_error(
        "minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 0\n",
        "line 1, column 30: minCandidateNodesPercentage: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesAbsolute; "
        "line 2, column 28: minCandidateNodesAbsolute: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesPercentage");
    expect_args_error("minCandidateNodesAbsolute: ten\n",
                      "minCandidateNodesAbsolute must be an integer");
    expect_args_error("minCandidateNodesAbsolute: 3000000000\n",
                      "out of the int32 range");
    expect_args_error("minCandidateNodes: 3\n", "unknown field \"minCandidateNodes\"");
    /* The host's reader drops kind at the args' root, so only the
     * plugin's own check, given the args as written, sees a wrong one. */
    {
        char err[512];
        void *s = NULL;
        ck_assert_int_ne(mock_plugin_create_raw(mh, P,
                                                "kind: NodeResourcesFitArgs\n",
                                                &s, err, sizeof err),
                         0);
        ck_assert_ptr_null(s);
        ck_assert_msg(strstr(err, "kind: want DefaultPreemptionArgs") != NULL,
                      "got \"%s\"", err);
    }
    expect_args_error("- 1\n", "args must be a mapping");
}
END_TEST

START_TEST(descriptor)
{
    ck_assert_str_eq(P->name, "DefaultPreemption");
    ck_assert_str_eq(P->version, "1.24.1-ks1");
    ck_assert(P->post_filter != NULL);
    ck_assert(P->filter == NULL);
    ck_assert(P->score == NULL);
    ck_assert(P->events_to_register == NULL); /* upstream v1.24: all events */
    /* The PodDisruptionBudget store (upstream's Evaluator PdbLister). */
    ck_assert_uint_eq(P->n_resources, 1);
    ck_assert_str_eq(P->resources[0].group, "policy");
    ck_assert_str_eq(P->resources[0].version, "v1");
    ck_assert_str_eq(P->resources[0].resource, "poddisruptionbudgets");
    ck_assert_str_eq(P->resources[0].kind, "PodDisruptionBudget");
}
END_TEST

/* --- PodDisruptionBudgets (upstream v1.36 filterPodsWithPDBViolation) ---- */

/* Store a policy/v1 PodDisruptionBudget: `selector` is the JSON of
 * spec.selector (NULL: none), `disrupted` the JSON of
 * status.disruptedPods (NULL: none). */
static void put_pdb(const char *ns, const char *name, const char *selector,
                    int allowed, const char *disrupted)
{
    char json[1024];
    int n = snprintf(json, sizeof json,
                     "{\"apiVersion\":\"policy/v1\","
                     "\"kind\":\"PodDisruptionBudget\","
                     "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
                     "\"spec\":{%s%s},"
                     "\"status\":{\"disruptionsAllowed\":%d%s%s}}",
                     name, ns, selector ? "\"selector\":" : "",
                     selector ? selector : "", allowed,
                     disrupted ? ",\"disruptedPods\":" : "",
                     disrupted ? disrupted : "");
    ck_assert(n > 0 && (size_t)n < sizeof json);
    mock_object_put("policy/v1", "PodDisruptionBudget", json);
}

static ks_pod_t *labelled(ks_pod_t *p, const char *key, const char *value)
{
    mock_pod_add_label(p, key, value);
    return p;
}

/* The extenders' view of the candidates: what the plugin hands to
 * extenders_preempt (no extender is interested: KS_SKIP). */
static struct {
    uint32_t n;
    char node[8][16];
    int64_t violations[8];
    uint32_t victims[8];
} ext_seen;

static ks_code_t ext_record(ks_handle_t *h, const ks_pod_t *pod,
                            const ks_preempt_candidate_t *c, uint32_t n,
                            ks_status_t *s)
{
    uint32_t i;
    (void)h;
    (void)pod;
    (void)s;
    ext_seen.n = n;
    for (i = 0; i < n && i < 8; i++) {
        snprintf(ext_seen.node[i], sizeof ext_seen.node[i], "%s", c[i].node);
        ext_seen.violations[i] = c[i].n_pdb_violations;
        ext_seen.victims[i] = c[i].n_victims;
    }
    return KS_SKIP;
}

/*
 * n1 (4000m): a (prio 50, 2000m, app=web), b (prio 40, 2000m, app=db).
 * Preemptor 2000m, prio 100. Without budgets: reprieve a (4000 fits), b
 * (6000 does not) -> victim b. With "db" protected (disruptionsAllowed 0):
 * b is violating and reprieved first (4000 fits), then a (6000 does not)
 * -> victim a, although it has the higher priority; no violation.
 */
START_TEST(pdb_violating_victims_reprieved_first)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_pod_t *a = labelled(run_on(n1, "a", 50, 2000, MAY1), "app", "web");
    ks_pod_t *b = labelled(run_on(n1, "b", 40, 2000, MAY1), "app", "db");
    const char *nom;

    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 1);
    ck_assert_ptr_eq(mh->deleted[0], b);

    put_pdb("default", "db", "{\"matchLabels\":{\"app\":\"db\"}}", 0, NULL);
    mh->api.extenders_preempt = ext_record;
    memset(&ext_seen, 0, sizeof ext_seen);
    ck_assert_int_eq(preempt(new_pod("q", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");
    ck_assert_uint_eq(mh->n_deleted, 2);
    ck_assert_ptr_eq(mh->deleted[1], a);
    ck_assert_uint_eq(ext_seen.n, 1);
    ck_assert_int_eq(ext_seen.violations[0], 0);
}
END_TEST

/*
 * Both victims needed (preemptor 4000m on 4000m nodes):
 *   n1: x1 (prio 20, 2000m), x2 (prio 10, 2000m), both app=db;
 *   n2: y (prio 30, 4000m), app=web, no budget.
 * The budget "db" with disruptionsAllowed A, going down n1's pods most
 * important first: x1 takes it to A-1, x2 to A-2; a pod taking it below 0
 * is violating, and both are victims:
 *   A=2: 0 violations on n1 -> lowest highest-priority victim: n1 (20<30);
 *   A=1: x2 violates -> n1 has 1, n2 0 -> n2;
 *   A=0: both violate -> n1 has 2 -> n2;
 *   A=1, x2 in disruptedPods: x2 does not count -> 0 -> n1.
 * The extenders see the counts (n1 first: the offset is 0).
 */
START_TEST(pdb_violations_counted_per_node)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    static const struct {
        int allowed;
        const char *disrupted;
        const char *want;
        int64_t n1_violations;
    } cases[] = {
        {2, NULL, "n1", 0},
        {1, NULL, "n2", 1},
        {0, NULL, "n2", 2},
        {1, "{\"x2\":\"2022-05-01T00:00:00Z\"}", "n1", 0},
        /* Another pod's name in disruptedPods changes nothing. */
        {1, "{\"x3\":\"2022-05-01T00:00:00Z\"}", "n2", 1},
    };
    size_t i;
    labelled(run_on(n1, "x1", 20, 2000, MAY1), "app", "db");
    labelled(run_on(n1, "x2", 10, 2000, MAY1), "app", "db");
    labelled(run_on(n2, "y", 30, 4000, MAY1), "app", "web");
    mh->api.extenders_preempt = ext_record;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *nom;
        char name[16];
        put_pdb("default", "db", "{\"matchLabels\":{\"app\":\"db\"}}",
                cases[i].allowed, cases[i].disrupted);
        memset(&ext_seen, 0, sizeof ext_seen);
        snprintf(name, sizeof name, "p%zu", i);
        ck_assert_int_eq(preempt(new_pod(name, 100, 4000), &nom), KS_SUCCESS);
        ck_assert_msg(strcmp(nom, cases[i].want) == 0,
                      "case %zu: nominated %s, want %s", i, nom,
                      cases[i].want);
        ck_assert_uint_eq(ext_seen.n, 2);
        ck_assert_str_eq(ext_seen.node[0], "n1");
        ck_assert_uint_eq(ext_seen.victims[0], 2);
        ck_assert_int_eq(ext_seen.violations[0], cases[i].n1_violations);
        ck_assert_str_eq(ext_seen.node[1], "n2");
        ck_assert_int_eq(ext_seen.violations[1], 0);
    }
}
END_TEST

/*
 * Which budgets match: n1's x (prio 10, app=db, tier=gold) would be chosen
 * (highest victim 10 against n2's y, app=web, at 50) unless a budget with
 * disruptionsAllowed 0 matches x and not y, which sends the preemptor to
 * n2 ("matches" below).
 */
START_TEST(pdb_selector_rules)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    static const struct {
        const char *ns;
        const char *selector; /* NULL: spec.selector absent */
        int matches;
    } cases[] = {
        {"default", "{\"matchLabels\":{\"app\":\"db\"}}", 1},
        {"default", "{\"matchLabels\":{\"app\":\"db\",\"tier\":\"gold\"}}", 1},
        {"default", "{\"matchLabels\":{\"app\":\"db\",\"tier\":\"x\"}}", 0},
        {"other", "{\"matchLabels\":{\"app\":\"db\"}}", 0},
        /* nil and empty selectors match nothing in upstream's preemption */
        {"default", NULL, 0},
        {"default", "null", 0},
        {"default", "{}", 0},
        {"default", "{\"matchLabels\":{},\"matchExpressions\":[]}", 0},
        {"default", "{\"matchExpressions\":[{\"key\":\"tier\","
                    "\"operator\":\"In\",\"values\":[\"silver\",\"gold\"]}]}",
         1},
        {"default", "{\"matchExpressions\":[{\"key\":\"tier\","
                    "\"operator\":\"NotIn\",\"values\":[\"gold\"]}]}", 0},
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"NotIn\",\"values\":[\"web\"]}]}", 1},
        /* NotIn matches a pod without the key */
        {"default", "{\"matchLabels\":{\"app\":\"db\"},"
                    "\"matchExpressions\":[{\"key\":\"zone\","
                    "\"operator\":\"NotIn\",\"values\":[\"a\"]}]}", 1},
        {"default", "{\"matchExpressions\":[{\"key\":\"tier\","
                    "\"operator\":\"Exists\"}]}", 1},
        /* y matches too: one violation on each node, then n1 (10 < 50) */
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"Exists\"}]}", 0},
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"DoesNotExist\"}]}", 0},
        {"default", "{\"matchLabels\":{\"app\":\"db\"},"
                    "\"matchExpressions\":[{\"key\":\"tier\","
                    "\"operator\":\"DoesNotExist\"}]}", 0},
        /* LabelSelectorAsSelector refuses these: no match */
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"Gt\",\"values\":[\"1\"]}]}", 0},
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"In\",\"values\":[]}]}", 0},
        {"default", "{\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"Exists\",\"values\":[\"db\"]}]}", 0},
        {"default", "{\"matchLabels\":{\"app\":\"db\"},"
                    "\"matchExpressions\":[{\"key\":\"app\","
                    "\"operator\":\"Bogus\"}]}", 0},
    };
    size_t i;
    labelled(labelled(run_on(n1, "x", 10, 3000, MAY1), "app", "db"), "tier",
             "gold");
    labelled(run_on(n2, "y", 50, 3000, MAY1), "app", "web");

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *nom;
        char name[16];
        mock_objects_clear();
        put_pdb(cases[i].ns, "guard", cases[i].selector, 0, NULL);
        snprintf(name, sizeof name, "p%zu", i);
        ck_assert_int_eq(preempt(new_pod(name, 100, 2000), &nom), KS_SUCCESS);
        ck_assert_msg(strcmp(nom, cases[i].matches ? "n2" : "n1") == 0,
                      "case %zu (%s %s): nominated %s", i, cases[i].ns,
                      cases[i].selector ? cases[i].selector : "(none)", nom);
    }
}
END_TEST

/*
 * A pod without labels matches no budget, not even one whose selector
 * would match its (absent) labels with NotIn; a budget without a status
 * (not computed yet) allows no disruption.
 */
START_TEST(pdb_unlabelled_pod_and_missing_status)
{
    ks_node_info_t *n1 = add_node("n1", 4000, KS_UNSCHEDULABLE);
    ks_node_info_t *n2 = add_node("n2", 4000, KS_UNSCHEDULABLE);
    const char *nom;
    run_on(n1, "x", 10, 3000, MAY1);
    labelled(run_on(n2, "y", 50, 3000, MAY1), "app", "web");

    put_pdb("default", "all-but-web",
            "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\","
            "\"values\":[\"web\"]}]}", 0, NULL);
    ck_assert_int_eq(preempt(new_pod("p", 100, 2000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n1");

    mock_objects_clear();
    mock_object_put("policy/v1", "PodDisruptionBudget",
                    "{\"apiVersion\":\"policy/v1\","
                    "\"kind\":\"PodDisruptionBudget\","
                    "\"metadata\":{\"name\":\"cache\","
                    "\"namespace\":\"default\"},"
                    "\"spec\":{\"minAvailable\":1,"
                    "\"selector\":{\"matchLabels\":{\"app\":\"cache\"}}}}");
    labelled(run_on(n1, "z", 5, 1000, MAY1), "app", "cache");
    /* n1 now needs x and z gone (4000m): z violates the budget, which has
     * no status (0 allowed) -> 1 violation against n2's 0 -> n2. */
    ck_assert_int_eq(preempt(new_pod("q", 100, 4000), &nom), KS_SUCCESS);
    ck_assert_str_eq(nom, "n2");
}
END_TEST

/*
 * The victims stay in order of importance when both groups gave some
 * (upstream v1.36; v1.24.1 left them in reprieve order, [v, w, u]):
 * n1 (6000m): v (prio 5, 2000m, app=db, protected, allowed 0),
 * w (prio 30, 2000m), u (prio 20, 2000m). Preemptor 6000m: all three go;
 * v first among the reprieves but last in importance: [w, u, v].
 */
START_TEST(pdb_victims_sorted_after_reprieve)
{
    ks_node_info_t *n1 = add_node("n1", 6000, KS_UNSCHEDULABLE);
    ks_pod_t *v = labelled(run_on(n1, "v", 5, 2000, MAY1), "app", "db");
    ks_pod_t *w = run_on(n1, "w", 30, 2000, MAY1);
    ks_pod_t *u = run_on(n1, "u", 20, 2000, MAY1);
    const char *nom;
    put_pdb("default", "db", "{\"matchLabels\":{\"app\":\"db\"}}", 0, NULL);
    ck_assert_int_eq(preempt(new_pod("p", 100, 6000), &nom), KS_SUCCESS);
    ck_assert_uint_eq(mh->n_deleted, 3);
    ck_assert_ptr_eq(mh->deleted[0], w);
    ck_assert_ptr_eq(mh->deleted[1], u);
    ck_assert_ptr_eq(mh->deleted[2], v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("DefaultPreemption");
    struct {
        const char *name;
        const TTest *tests[8];
    } groups[] = {
        {"conformance", {conformance_preemption_basic}},
        {"victims",
         {reprieves_as_many_as_fit, equal_priority_earlier_start_is_kept,
          unset_start_time_counts_as_now, priority_before_start_time}},
        {"pick",
         {pick_lowest_highest_priority, pick_lowest_shifted_priority_sum,
          pick_fewest_victims, pick_latest_earliest_start,
          pick_first_evaluated_on_tie}},
        {"candidates", {number_of_candidates}},
        {"failures",
         {no_candidate_message, no_candidate_entries_sorted_as_strings,
          every_reason_of_a_node_is_counted,
          all_unresolvable_clears_nomination, terminating_pod_on_nominated_node,
          never_is_checked_first}},
        {"errors",
         {no_victim_needed_is_an_error, prefilter_extension_error,
          delete_failure_is_an_error, no_nodes_is_an_error}},
        {"prepare", {clears_lower_priority_nominations, waiting_victim_is_rejected}},
        {"args", {args_validation, descriptor}},
        {"pdb",
         {pdb_violating_victims_reprieved_first,
          pdb_violations_counted_per_node, pdb_selector_rules,
          pdb_unlabelled_pod_and_missing_status,
          pdb_victims_sorted_after_reprieve}},
    };
    size_t g, t;
    for (g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (t = 0; t < 8 && groups[g].tests[t] != NULL; t++)
            tcase_add_test(tc, groups[g].tests[t]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
