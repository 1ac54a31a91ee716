/*
 * The SDK's traps for plugin authors, closed in ABI 1.1; each test fails on
 * the behaviour before:
 *  - label and selector helpers compare strings by content (a key the
 *    plugin wrote itself used to match nothing), the ..._interned fast
 *    path by address;
 *  - cycle-state keys are matched by their whole text, at any length, and
 *    a buffer reused for another key no longer finds the old entry;
 *  - waiting_pod_allow/reject by name refuse a name that is no Permit
 *    plugin of the pod's profile, the ..._as calls act as the caller's
 *    handle (even a non-Permit plugin, as preemption);
 *  - status_message joins every reason with ", " (it returned the first);
 *  - plugin_state_set hands PreFilter's state to filter_with_state and
 *    PreScore's to score_with_state, through clones too.
 * Single-threaded (parallelism 1).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ksched/helpers.h>

#include "base/intern.h"
#include "framework/cycle_state.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

/* --- helpers by content ---------------------------------------------------- */

/* A copy of `s` at a new address (never interned). */
static char *dup_str(const char *s)
{
    char *d = strdup(s);
    ck_assert_ptr_nonnull(d);
    return d;
}

START_TEST(test_labels_by_content)
{
    ks_intern_t *in = ks_intern_global();
    ks_label_t items[2] = {{ks_intern_str(in, "app"), ks_intern_str(in, "web")},
                           {ks_intern_str(in, "zone"), ks_intern_str(in, "a")}};
    ks_labels_t ls = {items, 2};
    char *key = dup_str("zone"), *val = dup_str("a"), *other = dup_str("b");
    const char *vals[1] = {val};
    ks_requirement_t req = {key, KS_OP_IN, vals, 1};
    ks_label_selector_t sel = {&req, 1};
    ks_label_t want_items[1] = {{key, val}};
    ks_labels_t want = {want_items, 1};
    ks_node_t node = {0};
    ks_node_selector_term_t term = {&req, 1, NULL, 0};
    ks_node_selector_t ns = {&term, 1};

    /* The default lookups find a key the plugin wrote itself. */
    ck_assert_ptr_eq(ks_labels_get(&ls, key), items[1].value);
    ck_assert_ptr_eq(ks_labels_get_str(&ls, key), items[1].value);
    ck_assert_int_eq(ks_requirement_matches_value(&req, "a"), 1);
    ck_assert_int_eq(ks_requirement_matches(&req, &ls), 1);
    ck_assert_int_eq(ks_selector_matches(&sel, &ls), 1);
    ck_assert_int_eq(ks_labels_subset(&want, &ls), 1);
    node.labels = ls;
    node.name = ks_intern_str(in, "n1");
    ck_assert_int_eq(ks_node_selector_term_matches(&term, &node), 1);
    ck_assert_int_eq(ks_node_selector_matches(&ns, &node), 1);
    /* ... and still tell different values apart. */
    vals[0] = other;
    ck_assert_int_eq(ks_selector_matches(&sel, &ls), 0);
    req.op = KS_OP_NOT_IN;
    ck_assert_int_eq(ks_selector_matches(&sel, &ls), 1);
    vals[0] = val;
    ck_assert_int_eq(ks_selector_matches(&sel, &ls), 0);
    req.op = KS_OP_IN;

    /* The address fast path sees only interned strings. */
    ck_assert_ptr_null(ks_labels_get_interned(&ls, key));
    ck_assert_int_eq(ks_selector_matches_interned(&sel, &ls), 0);
    ck_assert_int_eq(ks_labels_subset_interned(&want, &ls), 0);
    ck_assert_int_eq(ks_node_selector_matches_interned(&ns, &node), 0);
    req.key = ks_intern_str(in, "zone");
    vals[0] = ks_intern_str(in, "a");
    ck_assert_ptr_eq(ks_labels_get_interned(&ls, req.key), items[1].value);
    ck_assert_int_eq(ks_selector_matches_interned(&sel, &ls), 1);
    ck_assert_int_eq(ks_node_selector_matches_interned(&ns, &node), 1);
    free(key);
    free(val);
    free(other);
}
END_TEST

/* --- cycle-state keys ------------------------------------------------------ */

START_TEST(test_cycle_state_keys_by_text)
{
    const ks_host_api_t *api = ks_host_api();
    ks_cycle_state_t *cs = ks_cycle_state_new(), *c;
    char buf[32], k1[201], k2[201], k3[201];
    int a = 1, b = 2, x = 3, y = 4;

    /* A buffer reused for another key: the old key's entry is not found
     * under the new text, and each text finds its own entry. */
    snprintf(buf, sizeof buf, "%s", "alpha");
    ck_assert_int_eq(api->cycle_state_write(cs, buf, &a, NULL, NULL), 0);
    snprintf(buf, sizeof buf, "%s", "beta");
    ck_assert_ptr_null(api->cycle_state_read(cs, buf));
    ck_assert_int_eq(api->cycle_state_write(cs, buf, &b, NULL, NULL), 0);
    ck_assert_ptr_eq(api->cycle_state_read(cs, "alpha"), &a);
    ck_assert_ptr_eq(api->cycle_state_read(cs, "beta"), &b);
    snprintf(buf, sizeof buf, "%s", "alpha");
    ck_assert_ptr_eq(api->cycle_state_read(cs, buf), &a);
    api->cycle_state_delete(cs, buf); /* deletes "alpha", not "beta" */
    ck_assert_ptr_null(api->cycle_state_read(cs, "alpha"));
    ck_assert_ptr_eq(api->cycle_state_read(cs, "beta"), &b);

    /* Long keys that differ only after byte 63 (the old inline limit) or
     * at the very end are different keys. */
    memset(k1, 'k', 200);
    k1[200] = '\0';
    memcpy(k2, k1, sizeof k1);
    memcpy(k3, k1, sizeof k1);
    k2[80] = 'x';
    k3[199] = 'z';
    ck_assert_int_eq(api->cycle_state_write(cs, k1, &a, NULL, NULL), 0);
    ck_assert_int_eq(api->cycle_state_write(cs, k2, &x, NULL, NULL), 0);
    ck_assert_int_eq(api->cycle_state_write(cs, k3, &y, NULL, NULL), 0);
    ck_assert_uint_eq(ks_cycle_state_count(cs), 4);
    ck_assert_ptr_eq(api->cycle_state_read(cs, k1), &a);
    ck_assert_ptr_eq(api->cycle_state_read(cs, k2), &x);
    ck_assert_ptr_eq(api->cycle_state_read(cs, k3), &y);
    /* A 63-byte prefix alone is no key. */
    k1[63] = '\0';
    ck_assert_ptr_null(api->cycle_state_read(cs, k1));
    k1[63] = 'k';
    /* Found by text from another buffer, in a clone too. */
    {
        char copy[201];
        memcpy(copy, k2, sizeof copy);
        ck_assert_ptr_eq(api->cycle_state_read(cs, copy), &x);
        c = ks_cycle_state_clone(cs);
        ck_assert_ptr_nonnull(c);
        ck_assert_ptr_eq(api->cycle_state_read(c, copy), &x);
        ck_assert_ptr_eq(api->cycle_state_read(c, k3), &y);
        ks_cycle_state_free(c);
    }
    ks_cycle_state_free(cs);
}
END_TEST

/* --- status_message -------------------------------------------------------- */

START_TEST(test_status_message_joins_reasons)
{
    const ks_host_api_t *api = ks_host_api();
    ks_status_t *st = api->status_new(NULL);
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(api->status_message(st), "");
    api->status_reason(st, "Insufficient cpu");
    ck_assert_str_eq(api->status_message(st), "Insufficient cpu");
    api->status_reason(st, "Insufficient memory");
    api->status_reasonf(st, "Insufficient %s", "example.com/gpu");
    /* upstream Status.Message(): strings.Join(reasons, ", ") */
    ck_assert_str_eq(api->status_message(st),
                     "Insufficient cpu, Insufficient memory, "
                     "Insufficient example.com/gpu");
    ck_assert_uint_eq(api->status_reason_count(st), 3);
    api->status_free(st);
}
END_TEST

/* --- per-plugin state through the runtime ---------------------------------- */

typedef struct stateful {
    const ks_host_api_t *api;
    ks_handle_t *h;
    int n_filter, n_score;
    void *seen_filter, *seen_score;
} stateful_t;

static int n_freed;

static void count_free(void *p)
{
    n_freed++;
    free(p);
}

static void *int_clone(const void *p)
{
    int *c = malloc(sizeof *c);
    if (c != NULL)
        *c = *(const int *)p + 100; /* tell the copy from the original */
    return c;
}

static ks_code_t sf_filter(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           ks_status_t *st)
{
    stateful_t *s = self;
    (void)cs;
    (void)pod;
    (void)ni;
    s->n_filter++;
    s->seen_filter = state;
    if (state == NULL || *(int *)state != 7) {
        s->api->status_reason(st, "no filter state");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

static ks_code_t sf_score(void *self, ks_cycle_state_t *cs, void *state,
                          const ks_pod_t *pod, const ks_node_info_t *ni,
                          int64_t *score, ks_status_t *st)
{
    stateful_t *s = self;
    (void)cs;
    (void)pod;
    (void)ni;
    (void)st;
    s->n_score++;
    s->seen_score = state;
    *score = state ? *(int *)state : 0;
    return KS_SUCCESS;
}

static const ks_plugin_t sf_desc = {
    .magic = KS_PLUGIN_MAGIC,
    .abi_major = KS_ABI_MAJOR,
    .abi_minor = KS_ABI_MINOR,
    .size = sizeof(ks_plugin_t),
    .name = "Stateful",
    .version = "1",
    .filter_with_state = sf_filter,
    .score_with_state = sf_score,
};

START_TEST(test_plugin_state_slots)
{
    const ks_host_api_t *api = ks_host_api();
    tl_world_t w;
    ks_framework_t fw;
    ks_plugin_inst_t in, other;
    ks_point_entry_t entry = {&in, 1, -1};
    stateful_t self = {0};
    ks_cycle_state_t *cs = ks_cycle_state_new(), *c;
    ks_handle_t *h = (ks_handle_t *)&in.handle;
    ks_handle_t *h2 = (ks_handle_t *)&other.handle;
    const ks_node_info_t *nodes[1];
    int64_t scores[1], totals[1];
    uint8_t skipped[1];
    ks_status_t st;
    int *fs = malloc(sizeof *fs), *ss = malloc(sizeof *ss);
    int *bad = malloc(sizeof *bad);
    char *node_yaml = tl_node_yaml("n1"), *pod_yaml = tl_pod_yaml("p", 0, "");
    char *yaml = malloc(strlen(node_yaml) + strlen(pod_yaml) + 1);
    const ks_pod_t *pod;

    ck_assert_ptr_nonnull(yaml);
    strcpy(yaml, node_yaml);
    strcat(yaml, pod_yaml);
    tl_world_init(&w, yaml);
    free(yaml);
    free(node_yaml);
    free(pod_yaml);
    pod = tl_world_pod(&w, "p");
    memset(&fw, 0, sizeof fw);
    memset(&in, 0, sizeof in);
    memset(&other, 0, sizeof other);
    in.d = &sf_desc;
    in.self = &self;
    in.name = "Stateful";
    in.handle.fw = &fw;
    in.handle.inst = &in;
    other.handle.fw = &fw;
    other.handle.inst = &other;
    fw.points[KS_EP_FILTER] = &entry;
    fw.n_points[KS_EP_FILTER] = 1;
    fw.points[KS_EP_SCORE] = &entry;
    fw.n_points[KS_EP_SCORE] = 1;
    fw.parallelism = 1;
    self.api = api;
    self.h = h;
    ck_assert_ptr_nonnull(fs);
    ck_assert_ptr_nonnull(ss);
    ck_assert_ptr_nonnull(bad);
    *fs = 7;
    *ss = 42;
    *bad = 0;
    nodes[0] = tl_world_node(&w, "n1");
    ck_assert(ks_plugin_implements(&sf_desc, KS_EP_FILTER));
    ck_assert(ks_plugin_implements(&sf_desc, KS_EP_SCORE));

    /* Nothing set: Filter sees NULL. */
    ck_assert_int_eq(ks_fw_run_filter(&fw, cs, pod, nodes[0], 0, &st),
                     KS_UNSCHEDULABLE);
    ck_assert_ptr_null(self.seen_filter);

    /* Set at "PreFilter" / "PreScore": handed over without a lookup, each
     * slot its own, each plugin its own. */
    ck_assert_int_eq(api->plugin_state_set(h, cs, KS_STATE_FILTER, fs,
                                           int_clone, count_free),
                     0);
    ck_assert_int_eq(api->plugin_state_set(h, cs, KS_STATE_SCORE, ss, NULL,
                                           count_free),
                     0);
    ck_assert_int_eq(api->plugin_state_set(h, cs, (ks_state_slot_t)2, bad,
                                           NULL, count_free),
                     -1); /* not a slot: data stays the caller's */
    ck_assert_ptr_eq(api->plugin_state_get(h, cs, KS_STATE_FILTER), fs);
    ck_assert_ptr_eq(api->plugin_state_get(h, cs, KS_STATE_SCORE), ss);
    ck_assert_ptr_null(api->plugin_state_get(h2, cs, KS_STATE_FILTER));
    ck_assert_uint_eq(ks_cycle_state_count(cs), 0); /* no keyed entry */
    ck_assert_int_eq(ks_fw_run_filter(&fw, cs, pod, nodes[0], 0, &st),
                     KS_SUCCESS);
    ck_assert_ptr_eq(self.seen_filter, fs);
    ck_assert_int_eq(ks_fw_run_score(&fw, cs, pod, nodes, NULL, NULL, 1, scores, skipped,
                                     totals, &st),
                     KS_SUCCESS);
    ck_assert_ptr_eq(self.seen_score, ss);
    ck_assert_int_eq(scores[0], 42);

    /* A clone (preemption's) copies the filter state with its clone_fn and
     * shares the score state (no clone_fn), never freeing it. */
    c = ks_cycle_state_clone(cs);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(*(int *)api->plugin_state_get(h, c, KS_STATE_FILTER),
                     107);
    ck_assert_ptr_eq(api->plugin_state_get(h, c, KS_STATE_SCORE), ss);
    ks_cycle_state_free(c);
    ck_assert_int_eq(n_freed, 1); /* the filter state's copy only */

    /* Setting again releases what the slot held; clearing releases all. */
    n_freed = 0;
    fs = malloc(sizeof *fs);
    ck_assert_ptr_nonnull(fs);
    *fs = 8;
    ck_assert_int_eq(api->plugin_state_set(h, cs, KS_STATE_FILTER, fs, NULL,
                                           count_free),
                     0);
    ck_assert_int_eq(n_freed, 1);
    ks_cycle_state_clear(cs);
    ck_assert_int_eq(n_freed, 3);
    ck_assert_ptr_null(api->plugin_state_get(h, cs, KS_STATE_FILTER));
    ks_cycle_state_free(cs);
    free(bad);
    tl_world_free(&w);
}
END_TEST

/* --- waiting pods: names and handles --------------------------------------- */

#define PROFILE                                                                \
    PROFILE_SORT_ONLY                                                          \
    "    filter:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: Probe2\n"                                                   \
    "    permit:\n"                                                            \
    "      enabled:\n"                                                         \
    "      - name: Probe1\n" BIND_DEFAULT "  pluginConfig:\n"                  \
    PROBE_CFG("Probe1", "      permit: Wait\n") PROBE_CFG("Probe2", "")

typedef struct wst {
    tl_world_t w;
    ks_generation_t *gen;
    ks_scheduler_t *s;
    char *trace;
    char bound[256];
    char failure[512];
    int64_t now; /* the scheduler's clock: Permit's timeout never passes */
} wst_t;

static wst_t W;

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    tl_appendf(W.bound, sizeof W.bound, "%s->%s;", pod->name, node);
}

static void on_failed(void *ud, const ks_pod_t *pod, const char *msg)
{
    (void)ud;
    (void)pod;
    snprintf(W.failure, sizeof W.failure, "%s", msg);
}

/* A scheduler whose pod p1 waits at Probe1's Permit; returns it. */
static ks_waiting_pod_t *wait_p1(ks_handle_t **permit_h, ks_handle_t **other_h)
{
    char *yaml;
    ks_sched_opts_t so;
    ks_framework_t *fw;
    ks_pod_t *pod;
    ks_waiting_pod_t *wp;
    memset(&W, 0, sizeof W);
    W.trace = tl_trace_new();
    yaml = tl_subst(PROFILE, "T", W.trace);
    W.gen = tl_generation(yaml);
    free(yaml);
    tl_world_init(&W.w, "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: "
                        "'110'}}\n"
                        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, "
                        "namespace: default}\n"
                        "spec:\n  containers: [{name: c, image: x}]\n");
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.bound = on_bound;
    so.obs.failed = on_failed;
    W.s = ks_scheduler_new(W.gen, W.w.cache, &so);
    ck_assert_ptr_nonnull(W.s);
    W.now = 1000;
    ks_scheduler_set_clock(W.s, tl_clock, &W.now);
    pod = tl_world_take_pod(&W.w, "p1");
    ck_assert_int_eq(ks_scheduler_add_pod(W.s, pod), 0);
    ck_assert_int_eq(ks_scheduler_step(W.s), 1);
    fw = ks_generation_profile(W.gen, "default-scheduler");
    ck_assert_ptr_nonnull(fw);
    *permit_h = (ks_handle_t *)&fw->points[KS_EP_PERMIT][0].inst->handle;
    *other_h = (ks_handle_t *)&fw->points[KS_EP_FILTER][0].inst->handle;
    wp = ks_host_api()->waiting_pod_get(*permit_h, "default/p1");
    ck_assert_ptr_nonnull(wp);
    return wp;
}

static void wait_teardown(void)
{
    ks_scheduler_free(W.s);
    ks_generation_unref(W.gen);
    tl_world_free(&W.w);
    unlink(W.trace);
    free(W.trace);
}

/* ks_div_score, the scaling division of NormalizeScore helpers, is C's
 * integer division for every input: where it takes a double division
 * (0 <= n <= 128 d, d < 2^46) at each quotient's edges (r = 0, 1, d - 1)
 * and at random, and on the other side of each of its bounds (larger
 * quotients, larger divisors, negative dividends). */
START_TEST(test_div_score_is_integer_division)
{
    static const int64_t ds[] = {1,
                                 2,
                                 3,
                                 7,
                                 100,
                                 101,
                                 997,
                                 (INT64_C(1) << 20) + 1,
                                 (INT64_C(1) << 40) - 1,
                                 (INT64_C(1) << 46) - 1,
                                 INT64_C(1) << 46,
                                 (INT64_C(1) << 46) + 1,
                                 INT64_C(1) << 50};
    uint64_t x = 88172645463325252ull;
    size_t i;
    int64_t q, k;
    /* The loops check with a plain test and fail with ck_abort_msg: a
     * passing ck_assert records its place each time, which under
     * valgrind made them take minutes. */
    for (i = 0; i < sizeof ds / sizeof *ds; i++) {
        int64_t d = ds[i];
        for (q = 0; q <= 4000; q = q < 140 ? q + 1 : q * 2 + 1) {
            int64_t rs[3] = {0, 1, d - 1};
            for (k = 0; k < 3; k++) {
                int64_t n = q * d + rs[k];
                if (rs[k] >= d)
                    continue;
                if (ks_div_score(n, d) != n / d)
                    ck_abort_msg("%lld / %lld: %lld, want %lld", (long long)n,
                                 (long long)d, (long long)ks_div_score(n, d),
                                 (long long)(n / d));
                if (ks_div_score(-n, d) != -n / d)
                    ck_abort_msg("%lld / %lld: %lld, want %lld", (long long)-n,
                                 (long long)d, (long long)ks_div_score(-n, d),
                                 (long long)(-n / d));
            }
        }
    }
    for (i = 0; i < 1000000; i++) {
        int64_t d, n;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        d = (int64_t)(x % ((UINT64_C(1) << 46) - 1)) + 1;
        /* quotients up to 2048: past 128 the integer way */
        n = (int64_t)((x >> 17) % 2049) * d + (int64_t)((x >> 3) % (uint64_t)d);
        if (ks_div_score(n, d) != n / d)
            ck_abort_msg("%lld / %lld", (long long)n, (long long)d);
        /* a negative dividend, however large: the integer way */
        n = -(int64_t)(x >> 2);
        if (ks_div_score(n, d) != n / d)
            ck_abort_msg("%lld / %lld", (long long)n, (long long)d);
    }
    /* past the upper bound of n: the integer way */
    ck_assert_int_eq(ks_div_score(128 * 1000 + 999, 1000), 128);
    ck_assert_int_eq(ks_div_score(INT64_MAX, 3), INT64_MAX / 3);
    /* where a double division would be wrong: a quotient of 131 with a
     * divisor just below 2^46, and a dividend a double cannot hold */
    ck_assert_int_eq(ks_div_score(132 * ((INT64_C(1) << 46) - 1) - 1,
                                  (INT64_C(1) << 46) - 1),
                     131);
    ck_assert_int_eq(ks_div_score(-((INT64_C(1) << 62) - 1), 3),
                     -((INT64_C(1) << 62) - 1) / 3);
}
END_TEST

START_TEST(test_waiting_pod_names_refused)
{
    const ks_host_api_t *api = ks_host_api();
    ks_handle_t *ph, *oh;
    ks_waiting_pod_t *wp = wait_p1(&ph, &oh);
    /* A typo, and a real plugin of the profile that is not at Permit:
     * neither may reject nor allow by name. */
    api->waiting_pod_reject(wp, "Probe 1", "typo");
    api->waiting_pod_reject(wp, "Probe2", "spoofed");
    api->waiting_pod_allow(wp, "Probe2");
    ks_scheduler_run_batch(W.s);
    ck_assert_str_eq(W.bound, "");
    ck_assert_str_eq(W.failure, "");
    wp = api->waiting_pod_get(ph, "default/p1");
    ck_assert_ptr_nonnull(wp); /* still waiting */
    /* The Permit plugin's own name still works (1.0 plugins). */
    api->waiting_pod_reject(wp, "Probe1", "by name");
    ck_assert_int_eq(ks_scheduler_step(W.s), 1);
    ck_assert_str_eq(W.failure, "by name");
    ck_assert_str_eq(W.bound, "");
    wait_teardown();
}
END_TEST

START_TEST(test_waiting_pod_as_handle)
{
    const ks_host_api_t *api = ks_host_api();
    ks_handle_t *ph, *oh;
    ks_waiting_pod_t *wp = wait_p1(&ph, &oh);
    ck_assert(KS_API_HAS(api, waiting_pod_allow_as));
    ck_assert(KS_API_HAS(api, waiting_pod_reject_as));
    /* allow_as by a plugin the pod does not wait for changes nothing. */
    api->waiting_pod_allow_as(oh, wp);
    ks_scheduler_run_batch(W.s);
    ck_assert_str_eq(W.bound, "");
    wp = api->waiting_pod_get(ph, "default/p1");
    ck_assert_ptr_nonnull(wp);
    /* The Permit plugin's own handle allows it. */
    api->waiting_pod_allow_as(ph, wp);
    ks_scheduler_run_batch(W.s);
    ck_assert_str_eq(W.bound, "p1->n1;");
    wait_teardown();
}
END_TEST

START_TEST(test_waiting_pod_reject_as_any_plugin)
{
    const ks_host_api_t *api = ks_host_api();
    ks_handle_t *ph, *oh;
    ks_waiting_pod_t *wp = wait_p1(&ph, &oh);
    char msg[64];
    /* A non-Permit plugin (preemption does so) rejects as itself; the
     * message is copied. */
    snprintf(msg, sizeof msg, "%s", "preempted");
    api->waiting_pod_reject_as(oh, wp, msg);
    memset(msg, 0, sizeof msg);
    ck_assert_int_eq(ks_scheduler_step(W.s), 1);
    ck_assert_str_eq(W.failure, "preempted");
    ck_assert_str_eq(W.bound, "");
    wait_teardown();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sdk-traps");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_labels_by_content);
    tcase_add_test(tc, test_cycle_state_keys_by_text);
    tcase_add_test(tc, test_status_message_joins_reasons);
    tcase_add_test(tc, test_plugin_state_slots);
    tcase_add_test(tc, test_div_score_is_integer_division);
    tcase_add_test(tc, test_waiting_pod_names_refused);
    tcase_add_test(tc, test_waiting_pod_as_handle);
    tcase_add_test(tc, test_waiting_pod_reject_as_any_plugin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tl_run_suite(suite());
}
