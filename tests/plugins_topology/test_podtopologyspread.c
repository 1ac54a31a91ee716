/*
 * PodTopologySpread: the built .so driven through the mock host. The
 * expected numbers come from the conformance scenarios pts-*.yaml (the
 * plugin_scores there are normalised score x weight 2) and from hand
 * computation noted beside each assertion.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_testlib.h"
#include "../../plugins/PodTopologySpread/pts_round.h"

#define R_SKEW "node(s) didn't match pod topology spread constraints"
#define R_LABEL \
    "node(s) didn't match pod topology spread constraints (missing required label)"
#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"

/* The plugin under test: one instance per test (topo_testlib.h). */
static void setup(void)
{
    topo_setup("PodTopologySpread");
}

static void teardown(void)
{
    topo_teardown();
}

/* A pod app=<app> with one spread constraint on `key` selecting app=<sel>. */
static ks_pod_t *spread_pod(const char *name, const char *app, int32_t skew,
                            const char *key, ks_unsatisfiable_action_t action,
                            const char *sel)
{
    ks_pod_t *pod = topo_pod("default", name, app);
    ks_topology_spread_constraint_t c;
    memset(&c, 0, sizeof c);
    c.max_skew = skew;
    c.topology_key = key;
    c.when_unsatisfiable = action;
    c.label_selector = topo_sel_in("app", sel);
    mock_pod_add_spread(pod, &c);
    return pod;
}

static void check_node(const topo_cluster_t *c, const topo_verdicts_t *v,
                       const char *name, ks_code_t code, const char *reason)
{
    uint32_t i;
    for (i = 0; i < c->n; i++)
        if (strcmp(c->nodes[i]->node->name, name) == 0) {
            ck_assert_msg(v->code[i] == code, "%s: code %d, want %d (%s)",
                          name, v->code[i], code, v->reason[i]);
            ck_assert_str_eq(v->reason[i], reason);
            return;
        }
    ck_abort_msg("no node %s", name);
}

static void check_filter(const ks_pod_t *pod, const topo_cluster_t *c,
                         const char *feasible)
{
    topo_verdicts_t v;
    ks_cycle_state_t *cs = topo_filter_all(mh, pl, self, pod, c, &v);
    ck_assert_msg(v.prefilter == KS_SUCCESS || v.prefilter == KS_SKIP,
                  "PreFilter answered %d", (int)v.prefilter);
    ck_assert_str_eq(topo_feasible(c, &v), feasible);
    mock_cycle_state_free(cs);
}

/* The pods' owner: a Service in "default" selecting by `sel` (NULL: none),
 * whose selector the host's cache hands the plugin. */
static void set_owner(const ks_label_selector_t *sel)
{
    mock_host_set_owner_service(mh, "default", sel);
}

/* --- descriptor ---------------------------------------------------------- */

START_TEST(test_descriptor)
{
    ks_cluster_event_t ev[4];
    ck_assert_str_eq(pl->name, "PodTopologySpread");
    ck_assert_str_eq(pl->version, "1.24.1-ks1");
    ck_assert(pl->pre_filter_add_pod != NULL);
    ck_assert(pl->normalize_score != NULL);
    ck_assert_uint_eq(pl->events_to_register(self, ev, 4), 2);
    ck_assert_uint_eq(ev[0].resource, KS_RES_POD);
    ck_assert_uint_eq(ev[0].action, KS_ACT_ALL);
    ck_assert_uint_eq(ev[1].resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[1].action,
                      KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL);
}
END_TEST

/* --- DoNotSchedule (pts-zone-donotschedule.yaml) ------------------------- */

static void zone_cluster(topo_cluster_t *c)
{
    memset(c, 0, sizeof *c);
    topo_add_node(c, "s-a1", "zone-a");
    topo_add_node(c, "s-a2", "zone-a");
    topo_add_node(c, "s-b1", "zone-b");
    topo_add_node(c, "s-b2", "zone-b");
    topo_add_node(c, "s-c1", "zone-c");
    topo_add_node(c, "s-nolabel", NULL);
    topo_place(c, topo_pod("default", "app-0", "spread"), "s-a1");
    topo_place(c, topo_pod("default", "app-1", "spread"), "s-a2");
    topo_place(c, topo_pod("default", "app-2", "spread"), "s-b1");
}

static ks_pod_t *zone_pod(const char *name)
{
    return spread_pod(name, "spread", 1, ZONE, KS_DO_NOT_SCHEDULE, "spread");
}

START_TEST(test_zone_do_not_schedule)
{
    /* counts (a, b, c) before each pod and where it goes, as upstream did:
     * (2,1,0) -> c; (2,1,1) -> s-b2; (2,2,1) -> c; (2,2,2) -> s-a1;
     * (3,2,2) */
    static const char *const feasible[] = {
        "s-c1", "s-b1,s-b2,s-c1", "s-c1", "s-a1,s-a2,s-b1,s-b2,s-c1",
        "s-b1,s-b2,s-c1"};
    static const char *const target[] = {"s-c1", "s-b2", "s-c1", "s-a1", NULL};
    topo_cluster_t c;
    topo_verdicts_t v;
    int i;

    zone_cluster(&c);
    for (i = 0; i < 5; i++) {
        char name[16];
        ks_pod_t *pod;
        ks_cycle_state_t *cs;
        snprintf(name, sizeof name, "new-%d", i);
        pod = zone_pod(name);
        cs = topo_filter_all(mh, pl, self, pod, &c, &v);
        ck_assert_int_eq(v.prefilter, KS_SUCCESS);
        ck_assert_str_eq(topo_feasible(&c, &v), feasible[i]);
        check_node(&c, &v, "s-nolabel", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                   R_LABEL);
        if (i != 3)
            check_node(&c, &v, "s-a1", KS_UNSCHEDULABLE, R_SKEW);
        mock_cycle_state_free(cs);
        /* no ScheduleAnyway constraint and no owner: PreScore answers
         * Skip (upstream 1.27+); scored anyway, every node 100 */
        ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "s-b1,s-c1"),
                         "s-b1:100,s-c1:100");
        ck_assert_int_eq(mock_last_prescore_skipped, 1);
        if (target[i])
            topo_place(&c, pod, target[i]);
    }
}
END_TEST

START_TEST(test_self_match_and_namespace)
{
    topo_cluster_t c;
    ks_pod_t *pod;

    zone_cluster(&c);
    /* the pod does not match its own selector: skew without the +1,
     * (2,1,0): zone-a 2 - 0 > 1, zone-b 1 - 0 <= 1 */
    pod = spread_pod("other", "other", 1, ZONE, KS_DO_NOT_SCHEDULE, "spread");
    check_filter(pod, &c, "s-b1,s-b2,s-c1");
    /* pods of other namespaces never count: all domains 0 */
    pod = spread_pod("ns-pod", "spread", 1, ZONE, KS_DO_NOT_SCHEDULE, "spread");
    pod->ns = mock_intern("elsewhere");
    check_filter(pod, &c, "s-a1,s-a2,s-b1,s-b2,s-c1");
    /* terminating pods do not count either */
    ((ks_pod_t *)c.nodes[0]->pods[0])->deleting = 1;
    ((ks_pod_t *)c.nodes[1]->pods[0])->deleting = 1;
    c.nodes[0]->generation++; /* a pod update bumps the generation */
    c.nodes[1]->generation++;
    pod = zone_pod("after-delete");
    /* (0,1,0): b is at 1 + 1 - 0 = 2 */
    check_filter(pod, &c, "s-a1,s-a2,s-c1");
}
END_TEST

START_TEST(test_schedule_anyway_does_not_filter)
{
    topo_cluster_t c;
    ks_pod_t *pod;

    zone_cluster(&c);
    pod = spread_pod("soft", "spread", 1, ZONE, KS_SCHEDULE_ANYWAY, "spread");
    check_filter(pod, &c, "s-a1,s-a2,s-b1,s-b2,s-c1,s-nolabel");
    {
        /* Only ScheduleAnyway: PreFilter lets the host skip Filter. */
        topo_verdicts_t v;
        ks_cycle_state_t *cs = topo_filter_all(mh, pl, self, pod, &c, &v);
        ck_assert_int_eq(v.prefilter, KS_SKIP);
        mock_cycle_state_free(cs);
    }
    {
        /* Clones of that state (preemption makes one per node) share it:
         * each works and each can go first (ASan/valgrind see a double
         * free or a use after free). */
        topo_verdicts_t v;
        ks_cycle_state_t *cs = topo_filter_all(mh, pl, self, pod, &c, &v);
        ks_cycle_state_t *a = mh->api.cycle_state_clone(mh->handle, cs);
        ks_cycle_state_t *b = mh->api.cycle_state_clone(mh->handle, a);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        mock_cycle_state_free(cs);
        topo_filter_with(mh, pl, self, a, pod, &c, &v);
        ck_assert_str_eq(topo_feasible(&c, &v),
                         "s-a1,s-a2,s-b1,s-b2,s-c1,s-nolabel");
        mh->api.cycle_state_free(mh->handle, a);
        topo_filter_with(mh, pl, self, b, pod, &c, &v);
        ck_assert_str_eq(topo_feasible(&c, &v),
                         "s-a1,s-a2,s-b1,s-b2,s-c1,s-nolabel");
        mh->api.cycle_state_free(mh->handle, b);
    }
}
END_TEST

START_TEST(test_min_domains)
{
    topo_cluster_t c;
    ks_pod_t *pod;
    ks_topology_spread_constraint_t *sc;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "a1", "zone-a");
    topo_add_node(&c, "b1", "zone-b");
    topo_place(&c, topo_pod("default", "x0", "x"), "a1");
    topo_place(&c, topo_pod("default", "x1", "x"), "b1");
    pod = spread_pod("p", "x", 1, ZONE, KS_DO_NOT_SCHEDULE, "x");
    sc = (ks_topology_spread_constraint_t *)pod->spread_constraints;
    /* unset: global minimum 1, skew 1 + 1 - 1 = 1 */
    check_filter(pod, &c, "a1,b1");
    /* two domains >= minDomains 2: same */
    sc->min_domains = 2;
    check_filter(pod, &c, "a1,b1");
    /* two domains < 3: the global minimum is 0, skew 2 > 1 */
    sc->min_domains = 3;
    cs = topo_filter_all(mh, pl, self, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "");
    check_node(&c, &v, "a1", KS_UNSCHEDULABLE, R_SKEW);
    mock_cycle_state_free(cs);
    /* maxSkew 2 tolerates it */
    sc->max_skew = 2;
    check_filter(pod, &c, "a1,b1");
}
END_TEST

START_TEST(test_inclusion_policies)
{
    topo_cluster_t c;
    ks_pod_t *pod;
    ks_topology_spread_constraint_t *sc;
    ks_node_info_t *a1, *b1, *c1;

    memset(&c, 0, sizeof c);
    a1 = topo_add_node(&c, "a1", "zone-a");
    b1 = topo_add_node(&c, "b1", "zone-b");
    c1 = topo_add_node(&c, "c1", "zone-c");
    mock_node_add_label((ks_node_t *)a1->node, "env", "prod");
    mock_node_add_label((ks_node_t *)b1->node, "env", "prod");
    topo_place(&c, topo_pod("default", "x0", "x"), "a1");
    topo_place(&c, topo_pod("default", "x1", "x"), "b1");
    topo_place(&c, topo_pod("default", "x2", "x"), "b1");

    /* nodeSelector env=prod, affinity policy Honor (default): c1 does not
     * count, the minimum is zone-a's 1: a1 1+1-1 ok, b1 2+1-1 > 1, c1
     * (no count) 0+1-1 ok */
    pod = spread_pod("p", "x", 1, ZONE, KS_DO_NOT_SCHEDULE, "x");
    mock_pod_add_node_selector(pod, "env", "prod");
    check_filter(pod, &c, "a1,c1");
    /* Ignore: c1's 0 is the minimum */
    sc = (ks_topology_spread_constraint_t *)pod->spread_constraints;
    sc->node_affinity_policy = KS_POLICY_IGNORE;
    check_filter(pod, &c, "c1");

    /* taints: c1 NoSchedule, untolerated. Ignore (default) counts c1 */
    mock_node_add_taint((ks_node_t *)c1->node, "dedicated", "db",
                        KS_EFFECT_NO_SCHEDULE);
    pod = spread_pod("q", "x", 1, ZONE, KS_DO_NOT_SCHEDULE, "x");
    check_filter(pod, &c, "c1");
    sc = (ks_topology_spread_constraint_t *)pod->spread_constraints;
    sc->node_taints_policy = KS_POLICY_HONOR;
    check_filter(pod, &c, "a1,c1");
    /* a tolerated taint does not exclude c1 */
    mock_pod_add_toleration(pod, "dedicated", KS_TOLERATION_EQUAL, "db",
                            KS_EFFECT_NO_SCHEDULE);
    check_filter(pod, &c, "c1");
}
END_TEST

/* --- bulk Filter ------------------------------------------------------------ */

/* filter_nodes over `c`'s nodes in runs of `run`, every node offered except
 * those with skip[i]; each offered node's verdict must be the per-node
 * Filter's (codes in v), a node not offered must stay rejected. Returns how
 * many passed. */
static uint32_t check_bulk_on(const ks_pod_t *pod, const topo_cluster_t *c,
                              const ks_node_info_t *const *nodes,
                              const topo_verdicts_t *v, ks_cycle_state_t *cs,
                              uint32_t run, const uint8_t *skip)
{
    uint8_t pass[TOPO_MAX_NODES];
    ks_status_t *scratch = mock_status_new();
    void *state = mock_plugin_state(cs, self, KS_STATE_FILTER);
    uint32_t i, at, passed = 0;
    for (i = 0; i < c->n; i++)
        pass[i] = skip[i] ? 0 : 1;
    for (at = 0; at < c->n; at += run) {
        uint32_t len = c->n - at < run ? c->n - at : run;
        ck_assert_int_eq(pl->filter_nodes(self, cs, state, pod, nodes + at,
                                          len, pass + at, scratch),
                         KS_SUCCESS);
    }
    for (i = 0; i < c->n; i++) {
        int want = skip[i] ? 0 : v->code[i] == KS_SUCCESS;
        ck_assert_msg(pass[i] == want, "%s (run %u): bulk %d, node by node %d",
                      c->nodes[i]->node->name, run, (int)pass[i],
                      (int)v->code[i]);
        passed += pass[i];
    }
    mock_status_free(scratch);
    return passed;
}

/* The snapshot's entry for each of c's nodes, in c's order: the NodeInfos
 * the host hands Filter, whose snapshot_pos lets the plugin read its node
 * table. `forged`: clones of them (snapshot_pos 0) with snapshot_pos set
 * to the next entry's, which the plugin must not trust. */
static void snapshot_entries(const topo_cluster_t *c,
                             const ks_node_info_t **entries,
                             const ks_node_info_t **forged)
{
    uint32_t n, i;
    mh->api.snapshot_nodes(mh->handle, &n);
    ck_assert_uint_eq(n, c->n);
    /* by name; it fails the test on a wrong snapshot_pos */
    ck_assert(mock_snapshot_entries(
        mh, (const ks_node_info_t *const *)c->nodes, c->n, entries));
    for (i = 0; i < c->n; i++) {
        ks_node_info_t *f = mock_nodeinfo_clone(entries[i]);
        ck_assert_uint_eq(f->snapshot_pos, 0); /* a copy is no entry */
        f->snapshot_pos = entries[(i + 1) % c->n]->snapshot_pos;
        forged[i] = f;
    }
}

/* check_bulk_on over c's own NodeInfos (no snapshot_pos: the labels are
 * read), over the snapshot's entries in an array of the test's (the node
 * table is read at each snapshot_pos), over stretches of the snapshot's
 * own array (what the host hands Filter: the positions follow from where
 * the stretch starts, no NodeInfo is read) and over clones with a forged
 * snapshot_pos (the labels again); the same count passes each time. */
static uint32_t check_bulk(const ks_pod_t *pod, const topo_cluster_t *c,
                           const topo_verdicts_t *v, ks_cycle_state_t *cs,
                           uint32_t run, const uint8_t *skip)
{
    const ks_node_info_t *own[TOPO_MAX_NODES], *entries[TOPO_MAX_NODES],
        *forged[TOPO_MAX_NODES];
    const ks_node_info_t *const *snap;
    /* c, its verdicts and skips in the snapshot's order */
    topo_cluster_t in_snap = {.n = c->n};
    topo_verdicts_t *v_snap = malloc(sizeof *v_snap);
    uint8_t skip_snap[TOPO_MAX_NODES];
    uint32_t i, k, n_snap, passed;
    ck_assert_ptr_nonnull(v_snap);
    for (i = 0; i < c->n; i++)
        own[i] = c->nodes[i];
    snapshot_entries(c, entries, forged);
    snap = mh->api.snapshot_nodes(mh->handle, &n_snap);
    for (i = 0; i < c->n; i++) {
        /* checked against the snapshot by snapshot_entries */
        k = entries[i]->snapshot_pos - 1;
        in_snap.nodes[k] = c->nodes[i];
        v_snap->code[k] = v->code[i];
        skip_snap[k] = skip[i];
    }
    passed = check_bulk_on(pod, c, own, v, cs, run, skip);
    ck_assert_uint_eq(check_bulk_on(pod, c, entries, v, cs, run, skip),
                      passed);
    ck_assert_uint_eq(
        check_bulk_on(pod, &in_snap, snap, v_snap, cs, run, skip_snap),
        passed);
    free(v_snap);
    ck_assert_uint_eq(check_bulk_on(pod, c, forged, v, cs, run, skip),
                      passed);
    return passed;
}

/* The bulk Filter passes exactly the nodes the per-node Filter passes,
 * over 60 nodes in `n_zones` zones: more zones than PreFilter's verdict
 * tables hold (PTS_VT_MAX, 8: the per-run memo) or fewer (the tables,
 * probed, or with at most two values over the limit compared to those),
 * nodes listing the zone before the hostname (its label lookup starts
 * where the previous node had the key), nodes without the zone, two
 * constraints on two keys and on one, minDomains, a zone without any
 * count (its only node not counted: a value absent from the tables);
 * then, on the same
 * state, after AddPod changed the counts (the tables are dropped). */
static void bulk_matches(uint32_t n_zones)
{
    static const uint32_t runs[] = {1, 3, 32, TOPO_MAX_NODES};
    topo_cluster_t c;
    topo_verdicts_t v;
    uint8_t skip[TOPO_MAX_NODES];
    ks_pod_t *pods[4];
    ks_topology_spread_constraint_t h;
    uint32_t i, r, k;

    memset(&c, 0, sizeof c);
    for (i = 0; i < 60; i++) {
        char name[16], zone[16];
        snprintf(name, sizeof name, "n%u", i);
        snprintf(zone, sizeof zone, "z%u", i % n_zones);
        if (i % 7 == 6) {
            topo_add_node(&c, name, NULL);
        } else if (i % 5 == 2) {
            /* the zone first, the hostname second */
            ks_node_t *node = mock_node_new(name, 4000, 8ll << 30, 110);
            mock_node_add_label(node, ZONE, zone);
            mock_node_add_label(node, HOST, name);
            c.nodes[c.n++] = mock_nodeinfo_new(node);
        } else {
            topo_add_node(&c, name, zone);
        }
        skip[i] = i % 11 == 4;
    }
    {
        /* a tainted node alone in zone zx: with nodeTaintsPolicy Honor
         * (set below) it is not counted, so zx has no count at all */
        ks_node_t *node = mock_node_new("tainted", 4000, 8ll << 30, 110);
        mock_node_add_label(node, HOST, "tainted");
        mock_node_add_label(node, ZONE, "zx");
        mock_node_add_taint(node, "dedicated", "x", KS_EFFECT_NO_SCHEDULE);
        skip[c.n] = 0;
        c.nodes[c.n++] = mock_nodeinfo_new(node);
    }
    /* zone z<k> holds k % 3 matching pods, on its first labelled node */
    for (k = 0; k < n_zones; k++) {
        char want[16];
        snprintf(want, sizeof want, "z%u", k);
        for (i = 0; i < c.n; i++) {
            const ks_labels_t *ls = &c.nodes[i]->node->labels;
            uint32_t l;
            for (l = 0; l < ls->n; l++)
                if (strcmp(ls->items[l].key, ZONE) == 0 &&
                    strcmp(ls->items[l].value, want) == 0)
                    break;
            if (l < ls->n)
                break;
        }
        ck_assert_uint_lt(i, c.n);
        for (r = 0; r < k % 3; r++) {
            char name[24];
            snprintf(name, sizeof name, "m%u-%u", k, r);
            topo_place(&c, topo_pod("default", name, "b"),
                       c.nodes[i]->node->name);
        }
    }
    pods[0] = spread_pod("one", "b", 1, ZONE, KS_DO_NOT_SCHEDULE, "b");
    pods[1] = spread_pod("two", "b", 1, ZONE, KS_DO_NOT_SCHEDULE, "b");
    memset(&h, 0, sizeof h);
    h.max_skew = 1;
    h.topology_key = HOST;
    h.when_unsatisfiable = KS_DO_NOT_SCHEDULE;
    h.label_selector = topo_sel_in("app", "b");
    mock_pod_add_spread(pods[1], &h);
    /* fewer domains than minDomains 20: the minimum is 0, a zone of 2
     * fails */
    pods[2] = spread_pod("min", "b", 2, ZONE, KS_DO_NOT_SCHEDULE, "b");
    ((ks_topology_spread_constraint_t *)pods[2]->spread_constraints)
        ->min_domains = 20;
    /* two constraints on the zone */
    pods[3] = spread_pod("zz", "b", 2, ZONE, KS_DO_NOT_SCHEDULE, "b");
    h.topology_key = ZONE;
    mock_pod_add_spread(pods[3], &h);
    for (k = 0; k < 4; k++) {
        ks_topology_spread_constraint_t *sc =
            (ks_topology_spread_constraint_t *)pods[k]->spread_constraints;
        for (i = 0; i < pods[k]->n_spread_constraints; i++)
            sc[i].node_taints_policy = KS_POLICY_HONOR;
    }
    for (k = 0; k < 4; k++) {
        ks_cycle_state_t *cs = topo_filter_all(mh, pl, self, pods[k], &c, &v);
        ks_status_t *st = mock_status_new();
        uint32_t n_pass = 0, n_fail = 0, round;
        ck_assert_int_eq(v.prefilter, KS_SUCCESS);
        for (round = 0; round < 2; round++) {
            n_pass = n_fail = 0;
            for (i = 0; i < c.n; i++)
                if (!skip[i]) {
                    if (v.code[i] == KS_SUCCESS)
                        n_pass++;
                    else
                        n_fail++;
                }
            /* both verdicts occur, so the comparison means something */
            ck_assert_msg(n_pass > 0 && n_fail > 0,
                          "pod %u round %u: %u pass, %u fail", k, round,
                          n_pass, n_fail);
            for (r = 0; r < sizeof runs / sizeof runs[0]; r++)
                ck_assert_uint_eq(
                    check_bulk(pods[k], &c, &v, cs, runs[r], skip), n_pass);
            /* a matching pod added to the zone of n0 (its count becomes
             * 1), in place */
            ck_assert_int_eq(pl->pre_filter_add_pod(
                                 self, cs, pods[k],
                                 topo_pod("default", "added", "b"),
                                 c.nodes[0], st),
                             KS_SUCCESS);
            topo_filter_with(mh, pl, self, cs, pods[k], &c, &v);
        }
        mock_status_free(st);
        mock_cycle_state_free(cs);
    }
}

START_TEST(test_bulk_filter_matches_node_by_node)
{
    bulk_matches(13);
    bulk_matches(5);
    /* two zones of three over the limit, one of two: the tables' few
     * exceptions (PTS_VT_EXC) */
    bulk_matches(3);
    bulk_matches(2);
}
END_TEST

/* Score's rounding without libm is (int64_t)round() on halves, their
 * neighbours, negatives, large and random values. */
START_TEST(test_round_matches_libm)
{
    static const double fixed[] = {
        0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
        -0.49999999999999994, 0.5000000000000001, 4503599627370495.5,
        -4503599627370495.5, 4503599627370496.0, 9007199254740993.0,
        1e18, -1e18, 123.456, 99.5, 100.49999999999999};
    uint32_t i, seed = 7;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        ck_assert_msg(pts_round_i64(fixed[i]) == (int64_t)round(fixed[i]),
                      "%.17g: %lld, round %lld", fixed[i],
                      (long long)pts_round_i64(fixed[i]),
                      (long long)(int64_t)round(fixed[i]));
    for (i = 0; i < 20000; i++) {
        double x;
        seed = seed * 1103515245u + 12345u;
        /* multiples of 1/8 (halves hit often) and arbitrary fractions,
         * scaled over many magnitudes */
        x = (double)(int32_t)seed / (i % 2 ? 8.0 : 977.0) *
            (double)(1u << (i % 24));
        ck_assert_msg(pts_round_i64(x) == (int64_t)round(x), "%.17g", x);
    }
}
END_TEST

/* --- AddPod / RemovePod -------------------------------------------------- */

static ks_code_t update_pod(int add, ks_cycle_state_t *cs, const ks_pod_t *pod,
                            const ks_pod_t *other, const ks_node_info_t *ni)
{
    ks_status_t *st = mock_status_new();
    ks_code_t code = add ? pl->pre_filter_add_pod(self, cs, pod, other, ni, st)
                         : pl->pre_filter_remove_pod(self, cs, pod, other, ni,
                                                     st);
    mock_status_free(st);
    return code;
}

START_TEST(test_add_remove)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs, *copy;
    ks_pod_t *pod, *nominated, *foreign, *unrelated;
    ks_node_info_t *c1 = NULL, *a1 = NULL;

    zone_cluster(&c);
    a1 = topo_node(&c, "s-a1");
    c1 = topo_node(&c, "s-c1");
    pod = zone_pod("new-0");
    cs = topo_filter_all(mh, pl, self, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "s-c1");

    copy = mh->api.cycle_state_clone(mh->handle, cs);
    ck_assert_ptr_nonnull(copy);
    /* a nominated spread pod on s-c1: (2,1,1), minimum 1 */
    nominated = topo_pod("default", "nominated", "spread");
    ck_assert_int_eq(update_pod(1, copy, pod, nominated, c1), KS_SUCCESS);
    topo_filter_with(mh, pl, self, copy, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "s-b1,s-b2,s-c1");
    /* pods of another namespace or not selected change nothing */
    foreign = topo_pod("default", "foreign", "spread");
    foreign->ns = mock_intern("elsewhere");
    unrelated = topo_pod("default", "unrelated", "web");
    ck_assert_int_eq(update_pod(1, copy, pod, foreign, c1), KS_SUCCESS);
    ck_assert_int_eq(update_pod(1, copy, pod, unrelated, c1), KS_SUCCESS);
    topo_filter_with(mh, pl, self, copy, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "s-b1,s-b2,s-c1");
    /* removing app-0 from s-a1: (1,1,1) */
    ck_assert_int_eq(update_pod(0, copy, pod, a1->pods[0], a1), KS_SUCCESS);
    topo_filter_with(mh, pl, self, copy, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "s-a1,s-a2,s-b1,s-b2,s-c1");
    /* the original state is untouched */
    topo_filter_with(mh, pl, self, cs, pod, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "s-c1");
    mh->api.cycle_state_free(mh->handle, copy);
    mock_cycle_state_free(cs);
}
END_TEST

/* --- counts kept across cycles ------------------------------------------- */

static uint32_t rng_state = 12345;
static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 16) % n;
}

/* n nodes <prefix>00.. labelled pool=main, in zones zone-a..zone-d in
 * turn, the last one without a zone. */
static void pool_cluster(topo_cluster_t *c, uint32_t n, const char *prefix)
{
    uint32_t i;
    memset(c, 0, sizeof *c);
    for (i = 0; i < n; i++) {
        char name[16], zone[16];
        ks_node_info_t *ni;
        snprintf(name, sizeof name, "%s%02u", prefix, i);
        snprintf(zone, sizeof zone, "zone-%c", 'a' + (int)(i % 4));
        ni = topo_add_node(c, name, i + 1 == n ? NULL : zone);
        mock_node_add_label((ks_node_t *)ni->node, "pool", "main");
    }
}

/* Two pods with the same constraints; `direct` also has a nodeSelector
 * every node satisfies, so its counts are always computed from scratch
 * while `cached`'s come from the instance's incremental aggregate. */
static void twins(ks_pod_t **cached, ks_pod_t **direct, const char *name,
                  int soft)
{
    static const char *const keys[] = {ZONE, HOST};
    int i, k;
    for (k = 0; k < 2; k++) {
        ks_pod_t *pod = topo_pod("default", name, "x");
        for (i = 0; i < 2; i++) {
            ks_topology_spread_constraint_t c;
            memset(&c, 0, sizeof c);
            c.max_skew = soft ? 2 + i : 1 + i;
            c.topology_key = keys[i];
            c.when_unsatisfiable = soft ? KS_SCHEDULE_ANYWAY
                                        : KS_DO_NOT_SCHEDULE;
            c.label_selector = topo_sel_in("app", "x");
            mock_pod_add_spread(pod, &c);
        }
        if (k == 1)
            mock_pod_add_node_selector(pod, "pool", "main");
        if (k == 0)
            *cached = pod;
        else
            *direct = pod;
    }
}

/* 200 random steps (pods land, leave, start terminating; a node moves
 * zone), the cached and the direct twin compared after each. `stable`:
 * every node in every snapshot, so the aggregates refresh from the change
 * log (only the positions that changed); otherwise a rotated view missing
 * a few nodes each step (nodes added and dropped: rebuilt). */
static void aggregate_vs_direct(int stable)
{
    topo_cluster_t all, view;
    ks_pod_t *placed[256];
    uint32_t n_placed = 0, step, i;
    char names[1024], want[1024];

    pool_cluster(&all, 24, "n");
    for (step = 0; step < 200; step++) {
        uint32_t op = rng(10);
        ks_pod_t *cached, *direct;
        topo_verdicts_t v1, v2;
        ks_cycle_state_t *cs;
        size_t off = 0;

        if (op < 5 && n_placed < 256) { /* a pod lands */
            char name[16];
            snprintf(name, sizeof name, "p%u", step);
            placed[n_placed] = topo_pod("default", name, rng(3) ? "x" : "y");
            topo_place(&all, placed[n_placed],
                       all.nodes[rng(all.n)]->node->name);
            n_placed++;
        } else if (op < 7 && n_placed > 0) { /* a pod leaves */
            i = rng(n_placed);
            topo_unplace(&all, placed[i]);
            placed[i] = placed[--n_placed];
        } else if (op == 7) { /* a node moves zone (label update) */
            ks_node_info_t *ni = all.nodes[rng(all.n - 1)];
            char zone[16];
            snprintf(zone, sizeof zone, "zone-%c", 'a' + (int)rng(5));
            mock_node_add_label((ks_node_t *)ni->node,
                                "topology.kubernetes.io/zone", zone);
            ni->generation++;
        } else if (op == 8 && n_placed > 0) { /* a pod starts terminating */
            ks_pod_t *p = placed[rng(n_placed)];
            p->deleting = 1;
            topo_node(&all, p->node_name)->generation++;
        }
        /* the snapshot: a rotated view missing a few nodes */
        memset(&view, 0, sizeof view);
        if (stable) {
            view = all;
        } else {
            uint32_t start = rng(all.n), skip = rng(4);
            for (i = 0; i < all.n; i++) {
                ks_node_info_t *ni = all.nodes[(start + i) % all.n];
                if (skip > 0 && rng(8) == 0) {
                    skip--;
                    continue;
                }
                view.nodes[view.n++] = ni;
            }
        }
        names[0] = '\0';
        for (i = 0; i < view.n; i++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                    i ? "," : "", view.nodes[i]->node->name);

        twins(&cached, &direct, "hard", 0);
        cs = topo_filter_all(mh, pl, self, direct, &view, &v1);
        mock_cycle_state_free(cs);
        cs = topo_filter_all(mh, pl, self, cached, &view, &v2);
        mock_cycle_state_free(cs);
        snprintf(want, sizeof want, "%s", topo_feasible(&view, &v1));
        ck_assert_msg(strcmp(want, topo_feasible(&view, &v2)) == 0,
                      "step %u: direct %s, cached %s", step, want,
                      topo_feasible(&view, &v2));

        twins(&cached, &direct, "soft", 1);
        snprintf(want, sizeof want, "%s",
                 topo_score_text(mh, pl, self, direct, &view, names));
        ck_assert_msg(
            strcmp(want, topo_score_text(mh, pl, self, cached, &view, names)) ==
                0,
            "step %u: direct %s, cached %s", step, want,
            topo_score_text(mh, pl, self, cached, &view, names));
    }
}

START_TEST(test_aggregate_matches_direct)
{
    aggregate_vs_direct(0);
}
END_TEST

START_TEST(test_aggregate_matches_direct_incremental)
{
    aggregate_vs_direct(1);
}
END_TEST

/* The system-default constraints' PreScore stops walking the scored nodes
 * once it has met every zone the snapshot has (the aggregate knows how
 * many): scores of a pod that takes that way against its twin with a
 * nodeSelector every node satisfies (no aggregate: the whole walk), over
 * 300 random lists of nodes in random order (a zone met last or not at
 * all, the node without a zone anywhere) while pods land. */
START_TEST(test_system_default_prescore_stops_early)
{
    topo_cluster_t c;
    uint32_t step, i, k;
    char names[512], want[512];

    pool_cluster(&c, 13, "e");
    set_owner(topo_sel_in("app", "web"));
    for (step = 0; step < 300; step++) {
        uint32_t order[13], n = 1 + rng(13);
        size_t off = 0;
        ks_pod_t *plain, *direct;
        char pname[24];
        if (rng(3) == 0) { /* a pod of the Service lands */
            snprintf(pname, sizeof pname, "web-%u", step);
            topo_place(&c, topo_pod("default", pname, "web"),
                       c.nodes[rng(c.n)]->node->name);
        }
        for (i = 0; i < 13; i++)
            order[i] = i;
        for (i = 12; i > 0; i--) { /* shuffled; the first n are scored */
            uint32_t j = rng(i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        names[0] = '\0';
        for (k = 0; k < n; k++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                    k ? "," : "",
                                    c.nodes[order[k]]->node->name);
        snprintf(pname, sizeof pname, "new-%u", step);
        plain = topo_pod("default", pname, "web");
        direct = topo_pod("default", pname, "web");
        mock_pod_add_node_selector(direct, "pool", "main");
        snprintf(want, sizeof want, "%s",
                 topo_score_text(mh, pl, self, direct, &c, names));
        ck_assert_msg(
            strcmp(want, topo_score_text(mh, pl, self, plain, &c, names)) == 0,
            "step %u over %s: direct %s, aggregate %s", step, names, want,
            topo_score_text(mh, pl, self, plain, &c, names));
    }
}
END_TEST

/* --- ScheduleAnyway scores (pts-hostname-scheduleanyway.yaml) ------------ */

START_TEST(test_hostname_schedule_anyway)
{
    /* counts per node before each pod, e.g. (3,2,1,0,0): raw
     * round(count * ln 7 + 1) = 7,5,3,1,1, normalised 100*(max+min-s)/max */
    static const char *const want[] = {
        "h0:14,h1:42,h2:71,h3:100,h4:100", "h0:14,h1:42,h2:71,h3:71,h4:100",
        "h0:42,h1:71,h2:100,h3:100,h4:100", "h0:42,h1:71,h2:71,h3:100,h4:100"};
    static const char *const target[] = {"h3", "h4", "h2", "h3"};
    static const char *const zones[] = {"zone-a", "zone-b", "zone-a", "zone-b",
                                        "zone-a"};
    static const char *const pods[][2] = {{"r-0", "h0"}, {"r-1", "h0"},
                                          {"r-2", "h0"}, {"r-3", "h1"},
                                          {"r-4", "h1"}, {"r-5", "h2"}};
    topo_cluster_t c;
    int i;

    memset(&c, 0, sizeof c);
    for (i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "h%d", i);
        topo_add_node(&c, name, zones[i]);
    }
    for (i = 0; i < 6; i++)
        topo_place(&c, topo_pod("default", pods[i][0], "api"), pods[i][1]);
    for (i = 0; i < 4; i++) {
        char name[16];
        ks_pod_t *pod;
        snprintf(name, sizeof name, "api-%d", i);
        pod = spread_pod(name, "api", 2, HOST, KS_SCHEDULE_ANYWAY, "api");
        check_filter(pod, &c, "h0,h1,h2,h3,h4");
        ck_assert_str_eq(
            topo_score_text(mh, pl, self, pod, &c, "h0,h1,h2,h3,h4"), want[i]);
        topo_place(&c, pod, target[i]);
    }
}
END_TEST

/* The bulk Score (its per-run memo of zone counts, 8 entries, met by 13
 * zones) gives the per-node scores (mock_score_nodes compares them): a
 * zone and a hostname constraint, then six, five of them on the zone
 * (the fifth past the memo's constraints). */
START_TEST(test_bulk_score_matches_node_by_node)
{
    topo_cluster_t c;
    char names[64 * 8] = "";
    int64_t out[TOPO_MAX_NODES];
    ks_pod_t *pods[2];
    ks_topology_spread_constraint_t z;
    uint32_t i, k;

    memset(&c, 0, sizeof c);
    for (i = 0; i < 60; i++) {
        char name[16], zone[16];
        snprintf(name, sizeof name, "n%u", i);
        snprintf(zone, sizeof zone, "z%u", i % 13);
        topo_add_node(&c, name, zone);
        strcat(names, i ? ",n" : "n");
        snprintf(name, sizeof name, "%u", i);
        strcat(names, name);
    }
    for (i = 0; i < 40; i++) {
        char pn[16], node[16];
        snprintf(pn, sizeof pn, "m%u", i);
        snprintf(node, sizeof node, "n%u", (i * 7) % 23);
        topo_place(&c, topo_pod("default", pn, "s"), node);
    }
    pods[0] = spread_pod("two", "s", 1, ZONE, KS_SCHEDULE_ANYWAY, "s");
    pods[1] = spread_pod("six", "s", 2, HOST, KS_SCHEDULE_ANYWAY, "s");
    memset(&z, 0, sizeof z);
    z.topology_key = HOST;
    z.when_unsatisfiable = KS_SCHEDULE_ANYWAY;
    z.label_selector = topo_sel_in("app", "s");
    z.max_skew = 3;
    mock_pod_add_spread(pods[0], &z);
    z.topology_key = ZONE;
    for (k = 0; k < 5; k++) {
        z.max_skew = (int32_t)k + 1;
        mock_pod_add_spread(pods[1], &z);
    }
    for (k = 0; k < 2; k++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        ck_assert_int_eq(topo_score(mh, pl, self, pods[k], &c, names, out),
                         KS_SUCCESS);
        for (i = 0; i < c.n; i++) {
            lo = out[i] < lo ? out[i] : lo;
            hi = out[i] > hi ? out[i] : hi;
        }
        ck_assert_int_lt(lo, hi); /* the scores differ */
    }
}
END_TEST

START_TEST(test_score_ignores_unlabelled_nodes)
{
    topo_cluster_t c;
    ks_pod_t *pod;

    /* zone weight ln(2 + 2); z1 round(1 * 1.386) = 1, z2 0; nolabel is
     * ignored and scores 0 */
    memset(&c, 0, sizeof c);
    topo_add_node(&c, "z1", "zone-a");
    topo_add_node(&c, "z2", "zone-b");
    topo_add_node(&c, "nolabel", NULL);
    topo_place(&c, topo_pod("default", "x0", "x"), "z1");
    pod = spread_pod("p", "x", 1, ZONE, KS_SCHEDULE_ANYWAY, "x");
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "z1,z2,nolabel"),
                     "z1:0,z2:100,nolabel:0");
    ck_assert_int_eq(mock_last_prescore_skipped, 0);
}
END_TEST

/* --- system defaults (pts-system-default.yaml) --------------------------- */

static void system_cluster(topo_cluster_t *c)
{
    static const char *const zones[] = {"zone-a", "zone-b", "zone-c",
                                        "zone-a", "zone-b", "zone-c"};
    static const char *const pods[][2] = {{"web-0", "d0"}, {"web-1", "d0"},
                                          {"web-2", "d3"}, {"web-3", "d1"},
                                          {"web-4", "d1"}, {"web-5", "d1"}};
    int i;
    memset(c, 0, sizeof *c);
    for (i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", i);
        topo_add_node(c, name, zones[i]);
    }
    for (i = 0; i < 6; i++)
        topo_place(c, topo_pod("default", pods[i][0], "web"), pods[i][1]);
}

#define D6 "d0,d1,d2,d3,d4,d5"

START_TEST(test_system_default_with_service)
{
    /* hostname maxSkew 3 (weight ln 8), zone maxSkew 5 (weight ln 5) */
    static const char *const want[] = {
        "d0:47,d1:35,d2:100,d3:58,d4:70,d5:100",
        "d0:58,d1:47,d2:88,d3:70,d4:82,d5:100",
        "d0:76,d1:64,d2:100,d3:88,d4:100,d5:100"};
    static const char *const target[] = {"d2", "d5", "d4"};
    topo_cluster_t c;
    ks_pod_t *pod;
    int i;

    system_cluster(&c);
    set_owner(topo_sel_in("app", "web"));
    for (i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "web-new-%d", i);
        pod = topo_pod("default", name, "web");
        /* the defaults are ScheduleAnyway: nothing is filtered */
        check_filter(pod, &c, D6);
        ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, D6), want[i]);
        topo_place(&c, pod, target[i]);
    }
    /* no Service selects the pod: no constraints, every node 100 */
    set_owner(NULL);
    pod = topo_pod("default", "lonely", "lonely");
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, D6),
                     "d0:100,d1:100,d2:100,d3:100,d4:100,d5:100");
    /* a selector that selects everything is no selector */
    set_owner(topo_sel_all());
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, D6),
                     "d0:100,d1:100,d2:100,d3:100,d4:100,d5:100");
}
END_TEST

static void zoneless_cluster(topo_cluster_t *c)
{
    memset(c, 0, sizeof *c);
    topo_add_node(c, "d0", "zone-a");
    topo_add_node(c, "d1", NULL);
    topo_add_node(c, "d2", "zone-b");
    topo_place(c, topo_pod("default", "w0", "web"), "d0");
    topo_place(c, topo_pod("default", "w1", "web"), "d0");
    topo_place(c, topo_pod("default", "w2", "web"), "d1");
}

START_TEST(test_system_default_node_without_zone)
{
    topo_cluster_t c;
    ks_pod_t *pod;

    /* System defaults do not require every key: d1 spreads by hostname.
     * Weights ln 5 (3 hosts; zones a, "" and b). d0 2*1.609+2 + 2*1.609+4
     * = 12.44 -> 12, d1 1*1.609+2 = 3.61 -> 4, d2 2+4 = 6; max 12, min 4 */
    zoneless_cluster(&c);
    set_owner(topo_sel_in("app", "web"));
    pod = topo_pod("default", "p", "web");
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "d0,d1,d2"),
                     "d0:33,d1:100,d2:83");
}
END_TEST

/* A node without a hostname label, its zone's pods elsewhere: only its
 * zone term counts (the bulk Score's per-zone memo of empty nodes must
 * not give it the hostname term of the others). Weights ln 5 (3 nodes)
 * and ln 4 (2 zones): d0 and d2 1.609+2 + 1.386+4 = 8.99 -> 9, d1
 * 1.386+4 = 5.39 -> 5; max 9, min 5. */
START_TEST(test_system_default_node_without_hostname)
{
    topo_cluster_t c;
    ks_node_t *node = mock_node_new("d1", 4000, 8ll << 30, 110);
    ks_pod_t *pod;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "d0", "zone-a");
    mock_node_add_label(node, "topology.kubernetes.io/zone", "zone-a");
    c.nodes[c.n++] = mock_nodeinfo_new(node);
    topo_add_node(&c, "d2", "zone-b");
    topo_place(&c, topo_pod("default", "w0", "web"), "d0");
    topo_place(&c, topo_pod("default", "w1", "web"), "d2");
    set_owner(topo_sel_in("app", "web"));
    pod = topo_pod("default", "p", "web");
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "d0,d1,d2"),
                     "d0:55,d1:100,d2:55");
}
END_TEST

START_TEST(test_list_defaults)
{
    topo_cluster_t c;
    ks_pod_t *pod;

    /* The same constraints as a List: d1 lacks the zone and is ignored.
     * Weights ln 4 (2 hosts, 2 zones): d0 2*1.386+2 + 2*1.386+4 = 11.5
     * -> 12, d2 6; max 12, min 6 */
    recreate("defaultingType: List\n"
             "defaultConstraints:\n"
             "- maxSkew: 3\n"
             "  topologyKey: kubernetes.io/hostname\n"
             "  whenUnsatisfiable: ScheduleAnyway\n"
             "- maxSkew: 5\n"
             "  topologyKey: topology.kubernetes.io/zone\n"
             "  whenUnsatisfiable: ScheduleAnyway\n");
    zoneless_cluster(&c);
    set_owner(topo_sel_in("app", "web"));
    pod = topo_pod("default", "p", "web");
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "d0,d1,d2"),
                     "d0:50,d1:0,d2:100");

    /* a DoNotSchedule default filters pods a Service selects */
    recreate("defaultingType: List\n"
             "defaultConstraints:\n"
             "- maxSkew: 1\n"
             "  topologyKey: topology.kubernetes.io/zone\n"
             "  whenUnsatisfiable: DoNotSchedule\n");
    check_filter(pod, &c, "d2");
    set_owner(NULL);
    check_filter(pod, &c, "d0,d1,d2");
    /* List with no constraints: nothing applies */
    recreate("defaultingType: List\n");
    set_owner(topo_sel_in("app", "web"));
    ck_assert_str_eq(topo_score_text(mh, pl, self, pod, &c, "d0,d1,d2"),
                     "d0:100,d1:100,d2:100");
}
END_TEST

START_TEST(test_missing_state)
{
    topo_cluster_t c;
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    ks_pod_t *p = topo_pod("default", "p", "web");
    int64_t score = 7;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    ck_assert_int_eq(pl->filter(self, cs, p, c.nodes[0], st), KS_ERROR);
    ck_assert_msg(strstr(mock_status_text(st), "PreFilterPodTopologySpread"),
                  "%s", mock_status_text(st));
    mock_status_reset(st);
    ck_assert_int_eq(pl->score(self, cs, p, c.nodes[0], &score, st), KS_ERROR);
    mock_status_free(st);
    mock_cycle_state_free(cs);
}
END_TEST

/* --- args ---------------------------------------------------------------- */

static const char *create_error(const char *yaml)
{
    static char err[512];
    void *s = NULL;
    if (mock_plugin_create(mh, pl, yaml, &s, err, sizeof err) == 0) {
        pl->destroy(s);
        return "";
    }
    return err;
}

#define ONE_CONSTRAINT(extra)                                                 \
    "defaultingType: List\n"                                                  \
    "defaultConstraints:\n"                                                   \
    "- maxSkew: 1\n"                                                          \
    "  topologyKey: zone\n"                                                   \
    "  whenUnsatisfiable: DoNotSchedule\n" extra

START_TEST(test_args)
{
    ck_assert_str_eq(create_error("defaultingType: System\n"), "");
    ck_assert_str_eq(create_error("defaultingType: System\n"
                                  "defaultConstraints: []\n"),
                     "");
    ck_assert_str_eq(create_error(ONE_CONSTRAINT("  minDomains: 2\n"
                                                 "  nodeAffinityPolicy: Ignore\n"
                                                 "  nodeTaintsPolicy: Honor\n")),
                     "");
    ck_assert_str_eq(create_error("defaultingType: Lists\n"),
                     "line 1, column 17: defaultingType: Unsupported value: "
                     "\"Lists\": supported values: \"System\", \"List\"");
    ck_assert_str_eq(create_error("defaultConstraints:\n"
                                  "- maxSkew: 1\n"
                                  "  topologyKey: zone\n"
                                  "  whenUnsatisfiable: DoNotSchedule\n"),
                     "line 2, column 1: defaultingType: Invalid value: "
                     "\"System\": when .defaultConstraints are not empty");
    ck_assert_str_eq(create_error("defaultingType: List\n"
                                  "defaultConstraints:\n"
                                  "- maxSkew: 0\n"
                                  "  topologyKey: zone\n"
                                  "  whenUnsatisfiable: DoNotSchedule\n"),
                     "line 3, column 12: defaultConstraints[0].maxSkew: "
                     "Invalid value: 0: not in valid range (0, inf)");
    ck_assert_str_eq(create_error("defaultingType: List\n"
                                  "defaultConstraints:\n"
                                  "- maxSkew: 1\n"
                                  "  whenUnsatisfiable: DoNotSchedule\n"),
                     "line 3, column 3: defaultConstraints[0].topologyKey: "
                     "Required value: can not be empty");
    ck_assert_str_eq(create_error("defaultingType: List\n"
                                  "defaultConstraints:\n"
                                  "- maxSkew: 1\n"
                                  "  topologyKey: zone\n"
                                  "  whenUnsatisfiable: Never\n"),
                     "line 5, column 22: defaultConstraints[0]."
                     "whenUnsatisfiable: Unsupported value: \"Never\": "
                     "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
    ck_assert_str_eq(create_error(ONE_CONSTRAINT("  labelSelector: {}\n")),
                     "line 6, column 18: defaultConstraints[0].labelSelector: "
                     "Forbidden: constraint must not define a selector, as "
                     "they deduced for each pod");
    ck_assert_str_eq(create_error(ONE_CONSTRAINT("- maxSkew: 2\n"
                                                 "  topologyKey: zone\n"
                                                 "  whenUnsatisfiable: "
                                                 "DoNotSchedule\n")),
                     "line 6, column 3: defaultConstraints[1]: Duplicate "
                     "value: {\"zone\", \"DoNotSchedule\"}");
    ck_assert_str_eq(create_error(ONE_CONSTRAINT("  maxskew: 2\n")),
                     "line 6, column 12: unknown field \"maxskew\" (valid: "
                     "maxSkew, topologyKey, whenUnsatisfiable, labelSelector, "
                     "minDomains, nodeAffinityPolicy, nodeTaintsPolicy)");
    ck_assert_str_eq(create_error("defaultConstraint: []\n"),
                     "line 1, column 20: unknown field \"defaultConstraint\" "
                     "(valid: defaultConstraints, defaultingType)");
    ck_assert_str_eq(create_error(ONE_CONSTRAINT("  nodeTaintsPolicy: Always\n")),
                     "line 6, column 21: defaultConstraints[0]."
                     "nodeTaintsPolicy: Unsupported value: \"Always\": "
                     "supported values: \"Honor\", \"Ignore\"");
    ck_assert_str_eq(create_error("defaultingType: List\n"
                                  "defaultConstraints:\n"
                                  "- maxSkew: 1\n"
                                  "  topologyKey: -zone\n"
                                  "  whenUnsatisfiable: DoNotSchedule\n"),
                     "line 4, column 16: defaultConstraints[0].topologyKey: "
                     "Invalid value: \"-zone\": not a valid label name "
                     "(optional DNS prefix and '/', then at most 63 "
                     "characters of [A-Za-z0-9-_.], starting and ending "
                     "alphanumeric)");
}
END_TEST

static Suite *pts_suite(void)
{
    Suite *s = suite_create("PodTopologySpread");
    TCase *tc;

    tc = tcase_create("descriptor");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_descriptor);
    suite_add_tcase(s, tc);

    tc = tcase_create("filter");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_zone_do_not_schedule);
    tcase_add_test(tc, test_self_match_and_namespace);
    tcase_add_test(tc, test_schedule_anyway_does_not_filter);
    tcase_add_test(tc, test_min_domains);
    tcase_add_test(tc, test_inclusion_policies);
    tcase_add_test(tc, test_missing_state);
    suite_add_tcase(s, tc);

    tc = tcase_create("add-remove");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_add_remove);
    suite_add_tcase(s, tc);

    tc = tcase_create("aggregate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_aggregate_matches_direct);
    tcase_add_test(tc, test_aggregate_matches_direct_incremental);
    tcase_add_test(tc, test_system_default_prescore_stops_early);
    tcase_add_test(tc, test_bulk_filter_matches_node_by_node);
    tcase_add_test(tc, test_round_matches_libm);
    tcase_add_test(tc, test_bulk_score_matches_node_by_node);
    suite_add_tcase(s, tc);

    tc = tcase_create("score");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_hostname_schedule_anyway);
    tcase_add_test(tc, test_score_ignores_unlabelled_nodes);
    suite_add_tcase(s, tc);

    tc = tcase_create("defaults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_system_default_with_service);
    tcase_add_test(tc, test_system_default_node_without_zone);
    tcase_add_test(tc, test_system_default_node_without_hostname);
    tcase_add_test(tc, test_list_defaults);
    suite_add_tcase(s, tc);

    tc = tcase_create("args");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_args);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pts_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
