/* NodeAffinity: the conformance "nodeaffinity-required" and
 * "nodeaffinity-preferred" scenarios, PreFilterResult and addedAffinity. */
#include "plugin_test.h"

#include "framework/cycle_state.h"

#define R_POD "node(s) didn't match Pod's node affinity/selector"
#define R_ENFORCED "node(s) didn't match scheduler-enforced node affinity"

static ks_node_info_t *na_nodes[6];

static void build_required_nodes(void)
{
    static const char *const labels[6] = {
        "topology.kubernetes.io/zone=zone-a,disktype=ssd,cpu-gen=3",
        "topology.kubernetes.io/zone=zone-a,disktype=hdd,cpu-gen=5,gpu=true",
        "topology.kubernetes.io/zone=zone-b,disktype=ssd,cpu-gen=7",
        "topology.kubernetes.io/zone=zone-b,disktype=nvme,cpu-gen=5",
        "topology.kubernetes.io/zone=zone-c,cpu-gen=9,gpu=false",
        "topology.kubernetes.io/zone=zone-c,disktype=ssd,cpu-gen=4,legacy="};
    int i;
    for (i = 0; i < 6; i++) {
        char name[8];
        ks_node_t *n;
        snprintf(name, sizeof name, "na-%d", i);
        n = mock_node_new(name, 4000, 8 * GI, 110);
        n->labels = mock_labels(labels[i]);
        mock_node_add_label(n, "kubernetes.io/hostname", name);
        na_nodes[i] = mock_nodeinfo_new(n);
    }
}

/* Filter the pod on na-0..na-5 and compare with `fits` ("101..." per node). */
static void expect_fits(mock_host_t *mh, const ks_plugin_t *p, void *self,
                        const ks_pod_t *pod, const char *fits,
                        const char *reason)
{
    ks_status_t *st = mock_status_new();
    int i;
    for (i = 0; i < 6; i++) {
        ks_code_t c = mock_prefilter_filter(mh, p, self, pod, na_nodes[i], st);
        if (fits[i] == '1') {
            ck_assert_msg(c == KS_SUCCESS, "%s on na-%d: %s", pod->name, i,
                          mock_status_text(st));
        } else {
            ck_assert_msg(c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "%s on na-%d: code %d", pod->name, i, (int)c);
            ck_assert_str_eq(mock_status_text(st), reason);
        }
    }
    mock_status_free(st);
}

static ks_pod_t *required_pod(const char *name,
                              const ks_node_selector_term_t *terms,
                              uint32_t n)
{
    ks_pod_t *p = mock_pod_new("default", name, 500, GI);
    mock_pod_set_node_affinity(
        p, mock_node_affinity_new(mock_node_selector_new(terms, n), NULL, 0));
    return p;
}

START_TEST(conformance_required)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *sel_ssd = mock_pod_new("default", "sel-ssd", 500, GI);
    ks_pod_t *nomatch = mock_pod_new("default", "nomatch", 500, GI);
    ks_requirement_t in_notin[2], exists_dne[2], gt_lt[2], legacy, gen8;
    ks_node_selector_term_t two[2];

    build_required_nodes();
    mock_pod_add_node_selector(sel_ssd, "disktype", "ssd");
    expect_fits(mh, p, self, sel_ssd, "101001", R_POD);
    mock_pod_add_node_selector(nomatch, "disktype", "tape");
    expect_fits(mh, p, self, nomatch, "000000", R_POD);

    in_notin[0] = mock_req("disktype", KS_OP_IN, "ssd,nvme");
    in_notin[1] = mock_req("topology.kubernetes.io/zone", KS_OP_NOT_IN, "zone-a");
    two[0] = mock_term(in_notin, 2, NULL, 0);
    expect_fits(mh, p, self, required_pod("in-notin", two, 1), "001101", R_POD);

    exists_dne[0] = mock_req("gpu", KS_OP_EXISTS, "");
    exists_dne[1] = mock_req("disktype", KS_OP_DOES_NOT_EXIST, "");
    two[0] = mock_term(exists_dne, 2, NULL, 0);
    expect_fits(mh, p, self, required_pod("exists-dne", two, 1), "000010", R_POD);

    gt_lt[0] = mock_req("cpu-gen", KS_OP_GT, "4");
    gt_lt[1] = mock_req("cpu-gen", KS_OP_LT, "8");
    two[0] = mock_term(gt_lt, 2, NULL, 0);
    expect_fits(mh, p, self, required_pod("gt-lt", two, 1), "011100", R_POD);

    /* Terms are ORed. */
    legacy = mock_req("legacy", KS_OP_EXISTS, "");
    gen8 = mock_req("cpu-gen", KS_OP_GT, "8");
    two[0] = mock_term(&legacy, 1, NULL, 0);
    two[1] = mock_term(&gen8, 1, NULL, 0);
    expect_fits(mh, p, self, required_pod("two-terms", two, 2), "000011", R_POD);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(invalid_and_empty_terms)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p, NULL);
    ks_requirement_t bad_gt = mock_req("cpu-gen", KS_OP_GT, "4,5");
    ks_requirement_t exists = mock_req("gpu", KS_OP_EXISTS, "");
    ks_requirement_t field_two = mock_req("metadata.name", KS_OP_IN, "na-0,na-1");
    ks_requirement_t field_one = mock_req("metadata.name", KS_OP_NOT_IN, "na-0");
    ks_node_selector_term_t t[2];

    build_required_nodes();
    /* An invalid requirement spoils its term only. */
    t[0] = mock_term(&bad_gt, 1, NULL, 0);
    t[1] = mock_term(&exists, 1, NULL, 0);
    expect_fits(mh, p, self, required_pod("bad-gt", t, 2), "010010", R_POD);
    /* An empty term matches nothing; no terms match nothing. */
    t[0] = mock_term(NULL, 0, NULL, 0);
    expect_fits(mh, p, self, required_pod("empty", t, 1), "000000", R_POD);
    expect_fits(mh, p, self, required_pod("none", t, 0), "000000", R_POD);
    /* matchFields needs exactly one value. */
    t[0] = mock_term(NULL, 0, &field_two, 1);
    expect_fits(mh, p, self, required_pod("two-names", t, 1), "000000", R_POD);
    t[0] = mock_term(NULL, 0, &field_one, 1);
    expect_fits(mh, p, self, required_pod("not-na-0", t, 1), "011111", R_POD);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* PreFilter on `pod` (which must answer `want`), returning the recorded
 * result (caller frees). */
static ks_prefilter_result_t *run_prefilter(mock_host_t *mh,
                                            const ks_plugin_t *p, void *self,
                                            const ks_pod_t *pod, ks_code_t want)
{
    ks_prefilter_result_t *r = mock_prefilter_result_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    (void)mh;
    ck_assert_int_eq(p->pre_filter(self, cs, pod, r, st), want);
    /* The state is in the plugin's Filter slot (plugin_state_set). */
    ck_assert_uint_eq(ks_cycle_state_slot_count(cs), 1);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    return r;
}

START_TEST(prefilter_result_node_names)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p, NULL);
    ks_requirement_t ab = mock_req("metadata.name", KS_OP_IN, "a,b");
    ks_requirement_t bc[2] = {mock_req("metadata.name", KS_OP_IN, "b,c"),
                              mock_req("metadata.name", KS_OP_IN, "c,b,d")};
    ks_requirement_t x = mock_req("metadata.name", KS_OP_IN, "x");
    ks_requirement_t label = mock_req("zone", KS_OP_EXISTS, "");
    ks_node_selector_term_t t[2];
    ks_prefilter_result_t *r;

    /* No required affinity: no restriction. */
    /* No selector, no required affinity: nothing to filter (Skip). */
    r = run_prefilter(mh, p, self, mock_pod_new("default", "plain", 0, 0),
                      KS_SKIP);
    ck_assert_int_eq(mock_prefilter_result_is_set(r), 0);
    mock_prefilter_result_free(r);
    /* Union over terms of each term's intersection. */
    t[0] = mock_term(NULL, 0, &ab, 1);
    t[1] = mock_term(NULL, 0, bc, 2);
    r = run_prefilter(mh, p, self, required_pod("names", t, 2),
                      KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_result_is_set(r), 1);
    ck_assert_uint_eq(r->n, 3);
    ck_assert(mock_prefilter_result_has(r, "a"));
    ck_assert(mock_prefilter_result_has(r, "b"));
    ck_assert(mock_prefilter_result_has(r, "c"));
    ck_assert(!mock_prefilter_result_has(r, "d"));
    mock_prefilter_result_free(r);
    /* A term without a name restriction allows every node. */
    t[1] = mock_term(&label, 1, NULL, 0);
    r = run_prefilter(mh, p, self, required_pod("mixed", t, 2),
                      KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_result_is_set(r), 0);
    mock_prefilter_result_free(r);
    /* Disjoint names within one term: an empty set. */
    bc[1] = x;
    t[0] = mock_term(NULL, 0, bc, 2);
    r = run_prefilter(mh, p, self, required_pod("disjoint", t, 1),
                      KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_result_is_set(r), 1);
    ck_assert_uint_eq(r->n, 0);
    mock_prefilter_result_free(r);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

static const ks_preferred_scheduling_term_t *pref_terms(void)
{
    static ks_preferred_scheduling_term_t t[3];
    ks_requirement_t gold = mock_req("tier", KS_OP_IN, "gold");
    ks_requirement_t arm = mock_req("arch", KS_OP_IN, "arm64");
    ks_requirement_t zc = mock_req("topology.kubernetes.io/zone", KS_OP_IN, "zone-c");
    t[0].weight = 80;
    t[0].preference = mock_term(&gold, 1, NULL, 0);
    t[1].weight = 30;
    t[1].preference = mock_term(&arm, 1, NULL, 0);
    t[2].weight = 10;
    t[2].preference = mock_term(&zc, 1, NULL, 0);
    return t;
}

static ks_node_info_t *pa_nodes[5];

static void build_preferred_nodes(void)
{
    static const char *const labels[5] = {
        "topology.kubernetes.io/zone=zone-a,tier=gold,arch=amd64",
        "topology.kubernetes.io/zone=zone-a,tier=silver,arch=amd64",
        "topology.kubernetes.io/zone=zone-b,tier=gold,arch=arm64",
        "topology.kubernetes.io/zone=zone-b,tier=bronze,arch=amd64",
        "topology.kubernetes.io/zone=zone-c,tier=silver,arch=arm64"};
    int i;
    for (i = 0; i < 5; i++) {
        char name[8];
        ks_node_t *n;
        snprintf(name, sizeof name, "pa-%d", i);
        n = mock_node_new(name, 8000, 16 * GI, 110);
        n->labels = mock_labels(labels[i]);
        pa_nodes[i] = mock_nodeinfo_new(n);
    }
}

START_TEST(conformance_preferred)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *pref1 = mock_pod_new("default", "pref1", 1000, GI);
    ks_pod_t *plain = mock_pod_new("default", "plain", 1000, GI);
    /* Sums 80, 0, 110, 0, 40 normalised by 110; conformance totals are
     * these times the weight 2 (144, 0, 200, 0, 72). */
    static const int64_t want[] = {72, 0, 100, 0, 36};
    static const int64_t zero[] = {0, 0, 0, 0, 0};

    build_preferred_nodes();
    mock_pod_set_node_affinity(pref1, mock_node_affinity_new(NULL, pref_terms(), 3));
    pt_expect_scores(mh, p, self, pref1, pa_nodes, 5, want);
    ck_assert_int_eq(mock_last_prescore_skipped, 0);
    /* No preferred term: PreScore answers Skip (upstream 1.27+), and
     * scored anyway every node gets 0. */
    pt_expect_scores(mh, p, self, plain, pa_nodes, 5, zero);
    ck_assert_int_eq(mock_last_prescore_skipped, 1);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(invalid_preferred_is_error)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *pod = mock_pod_new("default", "bad", 1000, GI);
    ks_preferred_scheduling_term_t t;
    ks_requirement_t bad = mock_req("tier", KS_OP_EXISTS, "gold");
    ks_status_t *st = mock_status_new();
    int64_t out[5];

    build_preferred_nodes();
    t.weight = 5;
    t.preference = mock_term(&bad, 1, NULL, 0);
    mock_pod_set_node_affinity(pod, mock_node_affinity_new(NULL, &t, 1));
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, pa_nodes, 5, out, st),
                     KS_ERROR);
    ck_assert_str_eq(mock_status_text(st),
                     "preferredSchedulingTerms[0]: invalid matchExpressions "
                     "requirement");
    /* Weight 0 terms are skipped, valid or not. */
    t.weight = 0;
    mock_pod_set_node_affinity(pod, mock_node_affinity_new(NULL, &t, 1));
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, pa_nodes, 5, out, st),
                     KS_SUCCESS);
    ck_assert_int_eq(out[0], 0);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(added_affinity)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    void *self = pt_create(mh, p,
        "addedAffinity:\n"
        "  requiredDuringSchedulingIgnoredDuringExecution:\n"
        "    nodeSelectorTerms:\n"
        "    - matchExpressions:\n"
        "      - {key: arch, operator: In, values: [amd64]}\n"
        "  preferredDuringSchedulingIgnoredDuringExecution:\n"
        "  - weight: 20\n"
        "    preference:\n"
        "      matchExpressions:\n"
        "      - {key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}\n");
    ks_pod_t *pod = mock_pod_new("default", "p", 1000, GI);
    ks_pod_t *sel = mock_pod_new("default", "sel", 1000, GI);
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[1];
    /* pa-0..pa-4 own sums with the added 20 on zone-b (pa-2, pa-3):
     * 80, 0, 130, 20, 40 -> normalised by 130. */
    static const int64_t want[] = {61, 0, 100, 15, 30};

    build_preferred_nodes();
    /* The enforced selector is checked first, with its own reason. */
    mock_pod_add_node_selector(sel, "tier", "gold");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, sel, pa_nodes[2], st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(st), R_ENFORCED);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, sel, pa_nodes[1], st),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(st), R_POD);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, sel, pa_nodes[0], st),
                     KS_SUCCESS);
    mock_pod_set_node_affinity(pod, mock_node_affinity_new(NULL, pref_terms(), 3));
    pt_expect_scores(mh, p, self, pod, pa_nodes, 5, want);
    ck_assert_uint_eq(p->events_to_register(self, ev, 1), 1);
    ck_assert_uint_eq(ev[0].resource, KS_RES_NODE);
    ck_assert(ev[0].action & KS_ACT_UPDATE_NODE_LABEL);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(bad_args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodeAffinity");
    pt_assert_contains(pt_create_error(mh, p, "addedAfinity: {}\n"),
                       "unknown field \"addedAfinity\" (valid: addedAffinity)");
    ck_assert_str_eq(pt_create_error(mh, p,
                         "addedAffinity:\n"
                         "  requiredDuringSchedulingIgnoredDuringExecution:\n"
                         "    nodeSelectorTerms:\n"
                         "    - matchExpressions:\n"
                         "      - {key: a, operator: Near, values: [x]}\n"),
                     "line 5, column 28: addedAffinity."
                     "requiredDuringSchedulingIgnoredDuringExecution."
                     "nodeSelectorTerms[0].matchExpressions[0].operator: "
                     "Unsupported value: \"Near\": supported values: \"In\", "
                     "\"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
    pt_assert_contains(pt_create_error(mh, p,
                           "addedAffinity:\n"
                           "  preferredDuringSchedulingIgnoredDuringExecution:\n"
                           "  - weight: 1\n"
                           "    preference:\n"
                           "      matchExpressions:\n"
                           "      - {key: n, operator: Gt, values: [a]}\n"),
                       "preferredDuringSchedulingIgnoredDuringExecution[0]."
                       "preference.matchExpressions[0]: Invalid value: Gt "
                       "with 1 value(s)");
    pt_assert_contains(pt_create_error(mh, p,
                           "addedAffinity:\n"
                           "  requiredDuringSchedulingIgnoredDuringExecution:\n"
                           "    nodeSelectorTerms:\n"
                           "    - matchFields:\n"
                           "      - {key: metadata.name, operator: Exists}\n"),
                       "matchFields[0]: Invalid value: Exists with 0 value(s)");
    pt_assert_contains(pt_create_error(mh, p,
                           "addedAffinity:\n"
                           "  preferredDuringSchedulingIgnoredDuringExecution:\n"
                           "  - weight: 1\n"
                           "    preferences: {}\n"),
                       "unknown field \"preferences\"");
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeAffinity");
    TCase *tc = tcase_create("affinity");
    tcase_add_test(tc, conformance_required);
    tcase_add_test(tc, invalid_and_empty_terms);
    tcase_add_test(tc, prefilter_result_node_names);
    tcase_add_test(tc, conformance_preferred);
    tcase_add_test(tc, invalid_preferred_is_error);
    tcase_add_test(tc, added_affinity);
    tcase_add_test(tc, bad_args);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
