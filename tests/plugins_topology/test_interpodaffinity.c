/*
 * InterPodAffinity: the built .so driven through the mock host. The
 * expected numbers come from the conformance scenarios interpod-*.yaml (the
 * plugin_scores there are normalised score x weight 2) and from hand
 * computation noted beside each assertion.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_testlib.h"

#define R_AFF "node(s) didn't match pod affinity rules"
#define R_ANTI "node(s) didn't match pod anti-affinity rules"
#define R_EXIST "node(s) didn't satisfy existing pods anti-affinity rules"
#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"

/* The plugin under test: one instance per test (topo_testlib.h). */
static void setup(void)
{
    topo_setup("InterPodAffinity");
}

static void teardown(void)
{
    topo_teardown();
}

/* Required (weight 0) or preferred term app In <app> on `key`. */
static void add_term(ks_pod_t *pod, int anti, int32_t weight, const char *app,
                     const char *key)
{
    mock_pod_add_affinity_term(pod, anti, weight, topo_sel_in("app", app), key,
                               "", NULL);
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

/* Verdict of node `name` in `v`. */
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

/* --- PreFilter's walk on the workers (host API parallelize) ------------- */

/* 60 nodes in 3 zones: db pods on the first 40, web replicas (hostname
 * anti-affinity to web) on the first 20, and a guard on n30 whose
 * required anti-affinity keeps app=batch out of its zone. */
static void walk_cluster(topo_cluster_t *c)
{
    static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};
    char name[32];
    ks_pod_t *p;
    int i;
    memset(c, 0, sizeof *c);
    for (i = 0; i < 60; i++) {
        snprintf(name, sizeof name, "n%02d", i);
        topo_add_node(c, name, zones[i % 3]);
    }
    for (i = 0; i < 40; i++) {
        char node[16];
        snprintf(name, sizeof name, "db-%d", i);
        snprintf(node, sizeof node, "n%02d", (i * 7) % 60);
        topo_place(c, topo_pod("default", name, "db"), node);
    }
    for (i = 0; i < 20; i++) {
        char node[16];
        snprintf(name, sizeof name, "web-%d", i);
        snprintf(node, sizeof node, "n%02d", i);
        p = topo_pod("default", name, "web");
        add_term(p, 1, 0, "web", HOST);
        topo_place(c, p, node);
    }
    p = topo_pod("default", "guard", "guard");
    add_term(p, 1, 0, "batch", ZONE);
    topo_place(c, p, "n30");
}

/* The feasible nodes and PreFilter's code for `pod`, as text. */
static const char *walk_verdict(const ks_pod_t *pod, const topo_cluster_t *c)
{
    static char out[1024];
    topo_verdicts_t v;
    ks_cycle_state_t *cs = topo_filter_all(mh, pl, self, pod, c, &v);
    snprintf(out, sizeof out, "%d:%s", (int)v.prefilter, topo_feasible(c, &v));
    mock_cycle_state_free(cs);
    return out;
}

START_TEST(test_prefilter_walk_on_workers)
{
    topo_cluster_t c;
    ks_pod_t *pods[4];
    char want[4][1024];
    int i, k;

    walk_cluster(&c);
    pods[0] = topo_pod("default", "web-new", "web"); /* anti web, hostname */
    add_term(pods[0], 1, 0, "web", HOST);
    pods[1] = topo_pod("default", "batch-1", "batch"); /* the guard's zone */
    pods[2] = topo_pod("default", "api-1", "api"); /* near db, not web */
    add_term(pods[2], 0, 0, "db", ZONE);
    add_term(pods[2], 1, 0, "web", HOST);
    pods[3] = topo_pod("default", "plain", "other"); /* Filter skipped */
    for (k = 0; k < 4; k++)
        snprintf(want[k], sizeof want[k], "%s", walk_verdict(pods[k], &c));
    /* what the cluster says, by hand: web-new avoids n00-n19; batch-1 the
     * guard's zone (n30: zone-a, every third node from n00) */
    ck_assert_str_eq(strchr(want[0], ':') + 1,
                     "n20,n21,n22,n23,n24,n25,n26,n27,n28,n29,n30,n31,n32,"
                     "n33,n34,n35,n36,n37,n38,n39,n40,n41,n42,n43,n44,n45,"
                     "n46,n47,n48,n49,n50,n51,n52,n53,n54,n55,n56,n57,n58,"
                     "n59");
    ck_assert_str_eq(strchr(want[1], ':') + 1,
                     "n01,n02,n04,n05,n07,n08,n10,n11,n13,n14,n16,n17,n19,"
                     "n20,n22,n23,n25,n26,n28,n29,n31,n32,n34,n35,n37,n38,"
                     "n40,n41,n43,n44,n46,n47,n49,n50,n52,n53,n55,n56,n58,"
                     "n59");
    ck_assert_int_eq(atoi(want[3]), KS_SKIP);
    /* Two workers, each walk shared or inline at random with chunks that
     * start late (the pool's chaos mode): the same verdicts every time. */
    setenv("KSCHED_POOL_CHAOS", "1", 1);
    mock_host_set_parallelism(mh, 2);
    unsetenv("KSCHED_POOL_CHAOS");
    ck_assert_uint_eq(mh->api.parallelize_workers(mh->handle), 2);
    for (i = 0; i < 25; i++)
        for (k = 0; k < 4; k++)
            ck_assert_str_eq(walk_verdict(pods[k], &c), want[k]);
    mock_host_set_parallelism(mh, 1);
    ck_assert_uint_eq(mh->api.parallelize_workers(mh->handle), 1);
}
END_TEST

/* --- descriptor ---------------------------------------------------------- */

START_TEST(test_descriptor)
{
    ks_cluster_event_t ev[4];
    ck_assert_str_eq(pl->name, "InterPodAffinity");
    ck_assert_str_eq(pl->version, "1.24.1-ks1");
    ck_assert(pl->pre_filter_add_pod != NULL);
    ck_assert(pl->pre_filter_remove_pod != NULL);
    ck_assert(pl->normalize_score != NULL);
    ck_assert_uint_eq(pl->events_to_register(self, ev, 4), 2);
    ck_assert_uint_eq(ev[0].resource, KS_RES_POD);
    ck_assert_uint_eq(ev[0].action, KS_ACT_ALL);
    ck_assert_uint_eq(ev[1].resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[1].action, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL);
    /* a short buffer still reports the full count */
    ck_assert_uint_eq(pl->events_to_register(self, ev, 1), 2);
}
END_TEST

/* --- anti-affinity (interpod-antiaffinity.yaml) -------------------------- */

static void antiaffinity_cluster(topo_cluster_t *c)
{
    ks_pod_t *guard;
    memset(c, 0, sizeof *c);
    topo_add_node(c, "w1", "zone-a");
    topo_add_node(c, "w2", "zone-b");
    topo_add_node(c, "w3", "zone-a");
    topo_add_node(c, "w4", "zone-a");
    guard = topo_pod("default", "batch-guard", "guard");
    add_term(guard, 1, 0, "batch", HOST);
    topo_place(c, guard, "w4");
}

START_TEST(test_anti_replicas_and_existing)
{
    static const char *const feasible[] = {"w1,w2,w3,w4", "w2,w3,w4", "w3,w4",
                                           "w4", ""};
    static const char *const target[] = {"w1", "w2", "w3", "w4", NULL};
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *batch;
    char name[16];
    int i;

    antiaffinity_cluster(&c);
    for (i = 0; i < 5; i++) {
        ks_pod_t *web;
        snprintf(name, sizeof name, "web-%d", i);
        web = topo_pod("default", name, "web");
        add_term(web, 1, 0, "web", HOST);
        cs = topo_filter_all(mh, pl, self, web, &c, &v);
        ck_assert_str_eq(topo_feasible(&c, &v), feasible[i]);
        if (i > 0) /* a node holding a replica: Unschedulable, one reason */
            check_node(&c, &v, "w1", KS_UNSCHEDULABLE, R_ANTI);
        mock_cycle_state_free(cs);
        if (target[i])
            topo_place(&c, web, target[i]);
    }
    /* batch-1 matches batch-guard's anti-affinity on w4 */
    batch = topo_pod("default", "batch-1", "batch");
    cs = topo_filter_all(mh, pl, self, batch, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "w1,w2,w3");
    check_node(&c, &v, "w4", KS_UNSCHEDULABLE, R_EXIST);
    ck_assert_int_eq(v.prefilter, KS_SUCCESS);
    mock_cycle_state_free(cs);
    /* A pod without terms that no existing anti-affinity matches: PreFilter
     * lets the host skip Filter (and Filter would pass everywhere). */
    batch = topo_pod("default", "plain", "other");
    cs = topo_filter_all(mh, pl, self, batch, &c, &v);
    ck_assert_int_eq(v.prefilter, KS_SKIP);
    ck_assert_str_eq(topo_feasible(&c, &v), "w1,w2,w3,w4");
    mock_cycle_state_free(cs);
}
END_TEST

START_TEST(test_anti_zone)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *z[3];
    int i;

    antiaffinity_cluster(&c);
    for (i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "zonal-%d", i + 1);
        z[i] = topo_pod("default", name, "zonal");
        add_term(z[i], 1, 0, "zonal", ZONE);
    }
    check_filter(z[0], &c, "w1,w2,w3,w4");
    topo_place(&c, z[0], "w2");
    cs = topo_filter_all(mh, pl, self, z[1], &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "w1,w3,w4");
    check_node(&c, &v, "w2", KS_UNSCHEDULABLE, R_ANTI);
    mock_cycle_state_free(cs);
    topo_place(&c, z[1], "w3");
    /* zone-a and zone-b both hold a zonal pod now */
    check_filter(z[2], &c, "");
}
END_TEST

/* --- required affinity (interpod-affinity-required.yaml) ----------------- */

static void affinity_cluster(topo_cluster_t *c)
{
    ks_pod_t *p;
    memset(c, 0, sizeof *c);
    topo_add_node(c, "za-1", "zone-a");
    topo_add_node(c, "za-2", "zone-a");
    topo_add_node(c, "zb-1", "zone-b");
    topo_add_node(c, "zb-2", "zone-b");
    topo_add_node(c, "zc-1", "zone-c");
    topo_add_node(c, "zc-2", "zone-c");
    p = topo_pod("default", "db-0", "db");
    topo_place(c, p, "zb-1");
    p = topo_pod("default", "db-1", "db");
    topo_place(c, p, "zb-2");
    p = topo_pod("team-x", "other", "db");
    topo_place(c, p, "za-1");
}

START_TEST(test_affinity_required)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *api, *cache1, *cache2, *queue, *xns;

    affinity_cluster(&c);
    api = topo_pod("default", "api-1", "api");
    add_term(api, 0, 0, "db", ZONE);
    cs = topo_filter_all(mh, pl, self, api, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "zb-1,zb-2");
    /* team-x's db pod does not count: the term means the pod's namespace */
    check_node(&c, &v, "za-1", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    check_node(&c, &v, "zc-2", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    mock_cycle_state_free(cs);
    topo_place(&c, api, "zb-1");

    /* no cache pod anywhere and the pod matches its own term: all pass */
    cache1 = topo_pod("default", "cache-1", "cache");
    add_term(cache1, 0, 0, "cache", ZONE);
    check_filter(cache1, &c, "za-1,za-2,zb-1,zb-2,zc-1,zc-2");
    topo_place(&c, cache1, "za-2");

    cache2 = topo_pod("default", "cache-2", "cache");
    add_term(cache2, 0, 0, "cache", ZONE);
    check_filter(cache2, &c, "za-1,za-2");
    topo_place(&c, cache2, "za-1");

    /* no queue pod, and the pod is not one itself: nothing fits */
    queue = topo_pod("default", "needs-queue", "worker");
    add_term(queue, 0, 0, "queue", ZONE);
    cs = topo_filter_all(mh, pl, self, queue, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "");
    check_node(&c, &v, "za-1", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    mock_cycle_state_free(cs);

    xns = topo_pod("default", "x-ns", "x");
    mock_pod_add_affinity_term(xns, 0, 0, topo_sel_in("app", "db"), HOST,
                               "team-x", NULL);
    check_filter(xns, &c, "za-1");
}
END_TEST

START_TEST(test_affinity_missing_topology_label)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "a", "zone-a");
    topo_add_node(&c, "nolabel", NULL);
    /* first pod of its group: passes where the zone label exists only */
    p = topo_pod("default", "self", "cache");
    add_term(p, 0, 0, "cache", ZONE);
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "a");
    check_node(&c, &v, "nolabel", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    mock_cycle_state_free(cs);
}
END_TEST

START_TEST(test_affinity_reason_first)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *p, *web, *db;

    /* a node failing affinity and anti-affinity reports the affinity
     * reason only */
    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-b");
    web = topo_pod("default", "web", "web");
    topo_place(&c, web, "n1");
    db = topo_pod("default", "db", "db");
    topo_place(&c, db, "n2");
    p = topo_pod("default", "p", "api");
    add_term(p, 0, 0, "db", ZONE);
    add_term(p, 1, 0, "web", HOST);
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n2");
    check_node(&c, &v, "n1", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    mock_cycle_state_free(cs);
}
END_TEST

/* --- namespaces ---------------------------------------------------------- */

static void ns_cluster(topo_cluster_t *c)
{
    ks_pod_t *p;
    memset(c, 0, sizeof *c);
    topo_add_node(c, "n1", "zone-a");
    topo_add_node(c, "n2", "zone-b");
    topo_add_node(c, "n3", "zone-c");
    p = topo_pod("team-x", "db-x", "db");
    topo_place(c, p, "n1");
    p = topo_pod("team-y", "db-y", "db");
    topo_place(c, p, "n2");
    p = topo_pod("default", "db-d", "db");
    topo_place(c, p, "n3");
    mock_host_set_namespace(mh, "team-x", mock_labels("team=x"));
    mock_host_set_namespace(mh, "team-y", mock_labels("team=y"));
}

START_TEST(test_namespace_selector)
{
    topo_cluster_t c;
    ks_pod_t *p;

    ns_cluster(&c);
    /* namespaceSelector team In (x) */
    p = topo_pod("default", "p1", "api");
    mock_pod_add_affinity_term(p, 0, 0, topo_sel_in("app", "db"), HOST, "",
                               topo_sel_in("team", "x"));
    check_filter(p, &c, "n1");
    /* the empty selector: every namespace */
    p = topo_pod("default", "p2", "api");
    mock_pod_add_affinity_term(p, 0, 0, topo_sel_in("app", "db"), HOST, "",
                               topo_sel_all());
    check_filter(p, &c, "n1,n2,n3");
    /* listed namespaces OR the selector */
    p = topo_pod("default", "p3", "api");
    mock_pod_add_affinity_term(p, 0, 0, topo_sel_in("app", "db"), HOST,
                               "team-y", topo_sel_in("team", "x"));
    check_filter(p, &c, "n1,n2");
    /* neither: the pod's own namespace */
    p = topo_pod("default", "p4", "api");
    add_term(p, 0, 0, "db", HOST);
    check_filter(p, &c, "n3");
    /* anti-affinity with a selector */
    p = topo_pod("default", "p5", "api");
    mock_pod_add_affinity_term(p, 1, 0, topo_sel_in("app", "db"), HOST, "",
                               topo_sel_in("team", "y"));
    check_filter(p, &c, "n1,n3");
}
END_TEST

START_TEST(test_existing_anti_namespace_selector)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *guard, *p;

    ns_cluster(&c);
    /* a guard in team-y refuses web pods of namespaces labelled team=x */
    guard = topo_pod("team-y", "guard", "guard");
    mock_pod_add_affinity_term(guard, 1, 0, topo_sel_in("app", "web"), HOST,
                               "", topo_sel_in("team", "x"));
    topo_place(&c, guard, "n3");
    p = topo_pod("team-x", "web-x", "web");
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2");
    check_node(&c, &v, "n3", KS_UNSCHEDULABLE, R_EXIST);
    mock_cycle_state_free(cs);
    p = topo_pod("default", "web-d", "web");
    check_filter(p, &c, "n1,n2,n3");
}
END_TEST

/* --- AddPod / RemovePod -------------------------------------------------- */

static ks_code_t add_pod(ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const ks_pod_t *other, const ks_node_info_t *ni)
{
    ks_status_t *st = mock_status_new();
    ks_code_t c = pl->pre_filter_add_pod(self, cs, pod, other, ni, st);
    mock_status_free(st);
    return c;
}

static ks_code_t remove_pod(ks_cycle_state_t *cs, const ks_pod_t *pod,
                            const ks_pod_t *other, const ks_node_info_t *ni)
{
    ks_status_t *st = mock_status_new();
    ks_code_t c = pl->pre_filter_remove_pod(self, cs, pod, other, ni, st);
    mock_status_free(st);
    return c;
}

START_TEST(test_add_remove_incoming_anti)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs, *copy;
    ks_pod_t *web_a, *web_b, *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-b");
    web_a = topo_pod("default", "web-a", "web");
    topo_place(&c, web_a, "n1");
    p = topo_pod("default", "p", "web");
    add_term(p, 1, 0, "web", HOST);
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n2");

    /* preemption works on a copy: removing web-a there frees n1 */
    copy = mh->api.cycle_state_clone(mh->handle, cs);
    ck_assert_ptr_nonnull(copy);
    ck_assert_int_eq(remove_pod(copy, p, web_a, c.nodes[0]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, copy, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2");
    /* the original state is untouched */
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n2");

    /* a nominated web pod on n2 blocks n2 */
    web_b = topo_pod("default", "web-b", "web");
    ck_assert_int_eq(add_pod(copy, p, web_b, c.nodes[1]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, copy, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1");
    check_node(&c, &v, "n2", KS_UNSCHEDULABLE, R_ANTI);
    mh->api.cycle_state_free(mh->handle, copy);

    /* The other way round: the original changes under a live copy (the
     * copy shares the counts until one of them changes them). */
    copy = mh->api.cycle_state_clone(mh->handle, cs);
    ck_assert_ptr_nonnull(copy);
    ck_assert_int_eq(add_pod(cs, p, web_b, c.nodes[1]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "");
    topo_filter_with(mh, pl, self, copy, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n2");
    mock_cycle_state_free(cs);
    topo_filter_with(mh, pl, self, copy, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n2");
    mh->api.cycle_state_free(mh->handle, copy);
}
END_TEST

START_TEST(test_add_remove_existing_anti)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *guard, *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-a");
    topo_add_node(&c, "n3", "zone-b");
    p = topo_pod("default", "p", "web");
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2,n3");
    /* a nominated guard refusing web pods in its zone */
    guard = topo_pod("default", "guard", "guard");
    add_term(guard, 1, 0, "web", ZONE);
    ck_assert_int_eq(add_pod(cs, p, guard, c.nodes[0]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n3");
    check_node(&c, &v, "n2", KS_UNSCHEDULABLE, R_EXIST);
    ck_assert_int_eq(remove_pod(cs, p, guard, c.nodes[0]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2,n3");
    mock_cycle_state_free(cs);
}
END_TEST

START_TEST(test_add_remove_affinity)
{
    topo_cluster_t c;
    topo_verdicts_t v;
    ks_cycle_state_t *cs;
    ks_pod_t *cache, *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-b");
    p = topo_pod("default", "p", "cache");
    add_term(p, 0, 0, "cache", ZONE);
    cs = topo_filter_all(mh, pl, self, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2"); /* self-match rule */
    cache = topo_pod("default", "cache-0", "cache");
    ck_assert_int_eq(add_pod(cs, p, cache, c.nodes[0]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1");
    check_node(&c, &v, "n2", KS_UNSCHEDULABLE_AND_UNRESOLVABLE, R_AFF);
    /* removing it brings the count back to zero: self-match applies again */
    ck_assert_int_eq(remove_pod(cs, p, cache, c.nodes[0]), KS_SUCCESS);
    topo_filter_with(mh, pl, self, cs, p, &c, &v);
    ck_assert_str_eq(topo_feasible(&c, &v), "n1,n2");
    mock_cycle_state_free(cs);
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
    ck_assert_msg(strstr(mock_status_text(st), "PreFilterInterPodAffinity"),
                  "%s", mock_status_text(st));
    mock_status_reset(st);
    ck_assert_int_eq(pl->score(self, cs, p, c.nodes[0], &score, st), KS_ERROR);
    mock_status_free(st);
    mock_cycle_state_free(cs);
}
END_TEST

/* --- scoring (interpod-preferred.yaml) ----------------------------------- */

static void preferred_cluster(topo_cluster_t *c)
{
    static const char *const nodes[][2] = {
        {"p0", "zone-a"}, {"p1", "zone-b"}, {"p2", "zone-c"},
        {"p3", "zone-a"}, {"p4", "zone-b"}, {"p5", "zone-c"}};
    static const char *const pods[][4] = {
        {"team-a", "cache-a", "cache", "p0"}, {"team-b", "cache-b", "cache", "p1"},
        {"team-b", "cache-b2", "cache", "p4"}, {"team-a", "web-0", "web", "p3"},
        {"team-a", "web-1", "web", "p1"}};
    uint32_t i;
    memset(c, 0, sizeof *c);
    for (i = 0; i < 6; i++)
        topo_add_node(c, nodes[i][0], nodes[i][1]);
    for (i = 0; i < 5; i++)
        topo_place(c, topo_pod(pods[i][0], pods[i][1], pods[i][2]),
                   pods[i][3]);
}

#define ALL6 "p0,p1,p2,p3,p4,p5"

START_TEST(test_score_preferred)
{
    topo_cluster_t c;
    ks_pod_t *f1, *f2, *plain;

    preferred_cluster(&c);
    /* front-1: +80 zone-a (cache-a), -40 on p1 and p3 (web pods).
     * Raw p0 80, p1 -40, p2 0, p3 40, p4 0, p5 0; range [-40, 80]. */
    f1 = topo_pod("team-a", "front-1", "web");
    add_term(f1, 0, 80, "cache", ZONE);
    add_term(f1, 1, 40, "web", HOST);
    ck_assert_str_eq(topo_score_text(mh, pl, self, f1, &c, ALL6),
                     "p0:100,p1:0,p2:33,p3:66,p4:33,p5:33");
    topo_place(&c, f1, "p0");

    /* front-2: +60 on p1 and p4 (team-b caches), -100 per web pod in the
     * zone (zone-a: web-0, front-1; zone-b: web-1), and front-1's own
     * preferred anti-affinity -40 on p0. Raw p0 -240, p1 -40, p2 0,
     * p3 -200, p4 -40, p5 0. */
    f2 = topo_pod("team-a", "front-2", "web");
    mock_pod_add_affinity_term(f2, 0, 60, topo_sel_in("app", "cache"), HOST,
                               "team-b", NULL);
    add_term(f2, 1, 100, "web", ZONE);
    ck_assert_str_eq(topo_score_text(mh, pl, self, f2, &c, ALL6),
                     "p0:0,p1:83,p2:100,p3:16,p4:83,p5:100");
    topo_place(&c, f2, "p2");

    /* plain: no terms; front-1/2's terms do not select app=other */
    plain = topo_pod("team-a", "plain", "other");
    ck_assert_str_eq(topo_score_text(mh, pl, self, plain, &c, ALL6),
                     "p0:0,p1:0,p2:0,p3:0,p4:0,p5:0");
}
END_TEST

/* Raw Score values (no NormalizeScore) over `names`, then " skip" when
 * PreScore answered Skip (scored anyway: the state stays written). */
static const char *raw_scores(const ks_pod_t *pod, const topo_cluster_t *c,
                              uint32_t n)
{
    static char buf[256];
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    size_t off = 0;
    uint32_t i;
    ks_code_t pre;
    topo_sync(mh, c);
    pre = pl->pre_score(self, cs, pod, (const ks_node_info_t *const *)c->nodes,
                        n, st);
    ck_assert(pre == KS_SUCCESS || pre == KS_SKIP);
    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        int64_t s = -1;
        ck_assert_int_eq(pl->score(self, cs, pod, c->nodes[i], &s, st),
                         KS_SUCCESS);
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%lld",
                                i ? "," : "", (long long)s);
    }
    if (pre == KS_SKIP)
        snprintf(buf + off, sizeof buf - off, " skip");
    mock_status_free(st);
    mock_cycle_state_free(cs);
    return buf;
}

START_TEST(test_score_hard_weight)
{
    topo_cluster_t c;
    ks_pod_t *e, *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-a");
    topo_add_node(&c, "n3", "zone-b");
    /* an existing pod requiring web pods in its zone */
    e = topo_pod("default", "e", "db");
    add_term(e, 0, 0, "web", ZONE);
    topo_place(&c, e, "n1");
    p = topo_pod("default", "web", "web");
    /* default weight 1: zone-a nodes 1, zone-b 0 */
    ck_assert_str_eq(raw_scores(p, &c, 3), "1,1,0");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3"),
                     "n1:100,n2:100,n3:0");
    recreate("hardPodAffinityWeight: 5\n");
    ck_assert_str_eq(raw_scores(p, &c, 3), "5,5,0");
    recreate("hardPodAffinityWeight: 0\n");
    /* nothing to score: Skip (upstream 1.27+), every node 0 anyway */
    ck_assert_str_eq(raw_scores(p, &c, 3), "0,0,0 skip");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3"),
                     "n1:0,n2:0,n3:0");
}
END_TEST

START_TEST(test_score_ignore_existing_preferred)
{
    topo_cluster_t c;
    ks_pod_t *e, *p, *q;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-b");
    e = topo_pod("default", "e", "db");
    add_term(e, 0, 30, "web", HOST);
    topo_place(&c, e, "n1");
    p = topo_pod("default", "web", "web");
    ck_assert_str_eq(raw_scores(p, &c, 2), "30,0");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2"),
                     "n1:100,n2:0");
    recreate("ignorePreferredTermsOfExistingPods: true\n");
    ck_assert_str_eq(raw_scores(p, &c, 2), "0,0 skip");
    /* with preferred terms of its own the existing pods count again */
    q = topo_pod("default", "web-q", "web");
    add_term(q, 1, 10, "nothing", HOST);
    ck_assert_str_eq(raw_scores(q, &c, 2), "30,0");
}
END_TEST

START_TEST(test_score_negative_only)
{
    topo_cluster_t c;
    ks_pod_t *p;

    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-a");
    topo_add_node(&c, "n3", "zone-b");
    topo_place(&c, topo_pod("default", "w1", "web"), "n1");
    topo_place(&c, topo_pod("default", "w2", "web"), "n1");
    topo_place(&c, topo_pod("default", "w3", "web"), "n2");
    p = topo_pod("default", "p", "web");
    add_term(p, 1, 40, "web", HOST);
    /* raw -80, -40, 0: range [-80, 0]; 100 * 40/80 = 50 */
    ck_assert_str_eq(raw_scores(p, &c, 3), "-80,-40,0");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3"),
                     "n1:0,n2:50,n3:100");
}
END_TEST

START_TEST(test_score_truncates)
{
    topo_cluster_t c;
    ks_pod_t *p;

    /* n1 holds three cache pods, n2 two, n4 a web pod; weights cancel or
     * add up as noted per pod below */
    memset(&c, 0, sizeof c);
    topo_add_node(&c, "n1", "zone-a");
    topo_add_node(&c, "n2", "zone-b");
    topo_add_node(&c, "n3", "zone-c");
    topo_add_node(&c, "n4", "zone-d");
    topo_place(&c, topo_pod("default", "c1", "cache"), "n1");
    topo_place(&c, topo_pod("default", "c2", "cache"), "n1");
    topo_place(&c, topo_pod("default", "c3", "cache"), "n1");
    topo_place(&c, topo_pod("default", "c4", "cache"), "n2");
    topo_place(&c, topo_pod("default", "c5", "cache"), "n2");
    topo_place(&c, topo_pod("default", "w1", "web"), "n4");
    p = topo_pod("default", "p", "x");
    add_term(p, 0, 1, "cache", HOST);
    add_term(p, 1, 1, "cache,web", HOST);
    /* +1 and -1 per cache pod cancel; the web pod gives n4 -1 */
    ck_assert_str_eq(raw_scores(p, &c, 4), "0,0,0,-1");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3,n4"),
                     "n1:100,n2:100,n3:100,n4:0");
    p = topo_pod("default", "q", "x");
    add_term(p, 0, 2, "cache", HOST);
    add_term(p, 1, 1, "cache,web", HOST);
    /* n1: 3*2-3 = 3, n2: 2*2-2 = 2, n3: 0, n4: -1; range [-1, 3]:
     * n1 100, n2 75, n3 25, n4 0 */
    ck_assert_str_eq(raw_scores(p, &c, 4), "3,2,0,-1");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3,n4"),
                     "n1:100,n2:75,n3:25,n4:0");
    p = topo_pod("default", "r", "x");
    add_term(p, 0, 1, "cache", ZONE);
    add_term(p, 1, 1, "web", HOST);
    /* zone-a 3, zone-b 2; scored over n1..n3 only the range is [0, 3]:
     * 100 * 2/3 = 66.67 truncates to 66 */
    ck_assert_str_eq(raw_scores(p, &c, 3), "3,2,0");
    ck_assert_str_eq(topo_score_text(mh, pl, self, p, &c, "n1,n2,n3"),
                     "n1:100,n2:66,n3:0");
}
END_TEST

/* --- args ---------------------------------------------------------------- */

static const char *create_error(const char *yaml)
{
    static char err[512];
    void *s = NULL;
    int rc = mock_plugin_create(mh, pl, yaml, &s, err, sizeof err);
    if (rc == 0) {
        pl->destroy(s);
        return "";
    }
    return err;
}

START_TEST(test_args)
{
    ck_assert_str_eq(create_error("hardPodAffinityWeight: 100\n"
                                  "ignorePreferredTermsOfExistingPods: false\n"),
                     "");
    ck_assert_str_eq(create_error("hardPodAffinityWeight: 101\n"),
                     "line 1, column 24: hardPodAffinityWeight: Invalid "
                     "value: 101: not in valid range [0, 100]");
    ck_assert_str_eq(create_error("hardPodAffinityWeight: -1\n"),
                     "line 1, column 24: hardPodAffinityWeight: Invalid "
                     "value: -1: not in valid range [0, 100]");
    ck_assert_str_eq(create_error("hardPodAffinityWeight: two\n"),
                     "line 1, column 24: hardPodAffinityWeight must be an "
                     "integer");
    ck_assert_str_eq(create_error("hardPodAfinityWeight: 2\n"),
                     "line 1, column 23: unknown field "
                     "\"hardPodAfinityWeight\" (valid: hardPodAffinityWeight, "
                     "ignorePreferredTermsOfExistingPods)");
    ck_assert_str_eq(create_error("ignorePreferredTermsOfExistingPods: yes\n"),
                     "line 1, column 37: ignorePreferredTermsOfExistingPods "
                     "must be true or false");
    ck_assert_str_eq(create_error("- 1\n"),
                     "line 1, column 1: args must be a mapping");
}
END_TEST

static Suite *ipa_suite(void)
{
    Suite *s = suite_create("InterPodAffinity");
    TCase *tc;

    tc = tcase_create("descriptor");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_descriptor);
    suite_add_tcase(s, tc);

    tc = tcase_create("anti-affinity");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_anti_replicas_and_existing);
    tcase_add_test(tc, test_anti_zone);
    suite_add_tcase(s, tc);

    tc = tcase_create("affinity");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_affinity_required);
    tcase_add_test(tc, test_affinity_missing_topology_label);
    tcase_add_test(tc, test_affinity_reason_first);
    suite_add_tcase(s, tc);

    tc = tcase_create("namespaces");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_namespace_selector);
    tcase_add_test(tc, test_existing_anti_namespace_selector);
    suite_add_tcase(s, tc);

    tc = tcase_create("add-remove");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_add_remove_incoming_anti);
    tcase_add_test(tc, test_add_remove_existing_anti);
    tcase_add_test(tc, test_add_remove_affinity);
    tcase_add_test(tc, test_missing_state);
    suite_add_tcase(s, tc);

    tc = tcase_create("workers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_prefilter_walk_on_workers);
    suite_add_tcase(s, tc);

    tc = tcase_create("score");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_score_preferred);
    tcase_add_test(tc, test_score_hard_weight);
    tcase_add_test(tc, test_score_ignore_existing_preferred);
    tcase_add_test(tc, test_score_negative_only);
    tcase_add_test(tc, test_score_truncates);
    suite_add_tcase(s, tc);

    tc = tcase_create("args");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_args);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ipa_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
