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
