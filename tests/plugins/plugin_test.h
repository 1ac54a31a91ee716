/*
 * Small helpers shared by the plugin tests (header only): units, plugin
 * creation that fails the test with the plugin's message, and a main().
 */
#ifndef KS_TEST_PLUGIN_TEST_H
#define KS_TEST_PLUGIN_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>

#include "mock_host.h"

#define MI (1024ll * 1024)
#define GI (1024ll * 1024 * 1024)

/* Load plugin `name` or fail the test. */
static inline const ks_plugin_t *pt_load(const char *name)
{
    const ks_plugin_t *p = mock_plugin_load(name);
    ck_assert_msg(p != NULL, "cannot load %s", mock_plugin_path(name));
    ck_assert_str_eq(p->name, name);
    ck_assert_str_eq(p->version, "1.24.1-ks1");
    ck_assert_uint_eq(p->magic, KS_PLUGIN_MAGIC);
    ck_assert_uint_eq(p->abi_major, KS_ABI_MAJOR);
    ck_assert_uint_eq(p->size, sizeof(ks_plugin_t));
    return p;
}

/* Create an instance with `yaml` args (NULL: none) or fail the test. */
static inline void *pt_create(mock_host_t *mh, const ks_plugin_t *p,
                              const char *yaml)
{
    char err[1024];
    void *self = NULL;
    int rc = mock_plugin_create(mh, p, yaml, &self, err, sizeof err);
    ck_assert_msg(rc == 0, "%s create failed: %s", p->name, err);
    return self;
}

/* Expect create to fail; returns its message (static per-thread buffer). */
static inline const char *pt_create_error(mock_host_t *mh,
                                          const ks_plugin_t *p,
                                          const char *yaml)
{
    static _Thread_local char err[1024];
    void *self = NULL;
    int rc = mock_plugin_create(mh, p, yaml, &self, err, sizeof err);
    ck_assert_msg(rc != 0, "%s create accepted bad args:\n%s", p->name, yaml);
    return err;
}

/* PreScore, Score and NormalizeScore of `pod` over `nis` (at most 16
 * nodes); fail the test unless node i gets want[i]. */
static inline void pt_expect_scores(mock_host_t *mh, const ks_plugin_t *p,
                                    void *self, const ks_pod_t *pod,
                                    ks_node_info_t *const *nis, uint32_t n,
                                    const int64_t *want)
{
    ks_status_t *st = mock_status_new();
    int64_t out[16];
    uint32_t i;
    ck_assert_uint_le(n, 16);
    ck_assert_int_eq(mock_score_nodes(mh, p, self, pod, nis, n, out, st),
                     KS_SUCCESS);
    for (i = 0; i < n; i++)
        ck_assert_msg(out[i] == want[i], "%s on %s: score %lld, want %lld",
                      pod->name, nis[i]->node->name, (long long)out[i],
                      (long long)want[i]);
    mock_status_free(st);
}

/* The bulk Filter (filter_nodes) of `pod` over all of `nis` at once (at
 * most 64 nodes, some may have no Node), after one PreFilter, against the
 * per-node Filter of each with the same state: with every pass[i] 1, and
 * with every other node already rejected (pass 0, which must stay 0); then
 * the same on the snapshot's entries of those nodes with the host's
 * columns, when every node is in the snapshot.
 * Fails the test on any difference; returns how many nodes the per-node
 * Filter rejected, so that a test can check it saw both verdicts. */
static inline uint32_t pt_check_filter_nodes(mock_host_t *mh,
                                             const ks_plugin_t *p, void *self,
                                             const ks_pod_t *pod,
                                             ks_node_info_t *const *nis,
                                             uint32_t n)
{
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new(), *scratch = mock_status_new();
    uint8_t want[64], pass[64];
    const ks_node_info_t *entries[64];
    int have_entries;
    uint32_t i, rejected = 0;
    ks_code_t c = KS_SUCCESS;
    void *state;
    int round;
    ck_assert_uint_le(n, 64);
    ck_assert_msg(p->filter_nodes != NULL, "%s: no filter_nodes", p->name);
    if (mh != NULL)
        mock_host_sync(mh);
    if (p->pre_filter) {
        ks_prefilter_result_t *r = mock_prefilter_result_new();
        c = p->pre_filter(self, cs, pod, r, st);
        mock_prefilter_result_free(r);
    }
    ck_assert_msg(c == KS_SUCCESS, "%s PreFilter: %d", p->name, (int)c);
    state = mock_plugin_state(cs, self, KS_STATE_FILTER);
    for (i = 0; i < n; i++) {
        ks_code_t v;
        mock_status_reset(st);
        v = p->filter_with_state
                ? p->filter_with_state(self, cs, state, pod, nis[i], st)
                : p->filter(self, cs, pod, nis[i], st);
        want[i] = ks_bulk_verdict(v);
        rejected += want[i] == 0;
    }
    /* rounds 2 and 3: the snapshot's entries of the same nodes, with the
     * host's columns (ABI 1.7), when every node has one */
    have_entries = mh != NULL &&
                   mock_snapshot_entries(
                       mh, (const ks_node_info_t *const *)nis, n, entries);
    for (round = 0; round < (have_entries ? 4 : 2); round++) {
        const ks_node_info_t *const *arg =
            round < 2 ? (const ks_node_info_t *const *)nis : entries;
        ks_code_t rc;
        for (i = 0; i < n; i++)
            pass[i] = round % 2 == 0 || i % 2 == 0;
        if (round >= 2)
            mock_bulk_columns_enter(mh, arg, n);
        rc = p->filter_nodes(self, cs, state, pod, arg, n, pass, scratch);
        if (round >= 2)
            mock_bulk_columns_leave();
        ck_assert_int_eq(rc, KS_SUCCESS);
        for (i = 0; i < n; i++) {
            uint8_t w = round % 2 == 0 || i % 2 == 0 ? want[i] : 0;
            ck_assert_msg(pass[i] == w,
                          "%s filter_nodes: node %u (%s) pass %d, want %d "
                          "(round %d)",
                          p->name, i,
                          nis[i]->node ? nis[i]->node->name : "(no node)",
                          (int)pass[i], (int)w, round);
        }
    }
    mock_status_free(st);
    mock_status_free(scratch);
    mock_cycle_state_free(cs);
    return rejected;
}

/* Assert that `haystack` contains `needle`. */
#define pt_assert_contains(haystack, needle)                                  \
    ck_assert_msg(strstr((haystack), (needle)) != NULL,                       \
                  "\"%s\" does not contain \"%s\"", (haystack), (needle))

/* Run one suite and return the process exit status. */
static inline int pt_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
