/*
 * The configuration fields and versions of upstream v1.36 that ksched
 * accepts: delayCacheUntilActive, the placementGenerate / placementScore
 * extension points (refused when plugins are enabled there), and v1beta3
 * with a deprecation notice. Exact messages.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define V1                                                                     \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                            \
    "kind: KubeSchedulerConfiguration\n"

static int load(const char *yaml, ks_config_t **cfg, ks_error_t *err)
{
    return ks_config_load_string("t.yaml", yaml, strlen(yaml), cfg, err);
}

START_TEST(test_delay_cache_until_active)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_int_eq(load(V1 "delayCacheUntilActive: false\n", &cfg, &err), 0);
    ck_assert_int_eq(cfg->delay_cache_until_active, 0);
    ck_assert_uint_eq(cfg->n_notices, 0);
    ks_config_free(cfg);
    cfg = NULL;
    ck_assert_int_eq(load(V1 "delayCacheUntilActive: true\n", &cfg, &err), 0);
    ck_assert_int_eq(cfg->delay_cache_until_active, 1);
    ck_assert_uint_eq(cfg->n_notices, 1);
    ck_assert_str_eq(cfg->notices[0],
                     "t.yaml:3:24: delayCacheUntilActive: true is accepted, "
                     "but a standby ksched fills its informer caches anyway");
    ks_config_free(cfg);
    cfg = NULL;
    /* The type is checked as for every boolean field. */
    ck_assert_int_ne(load(V1 "delayCacheUntilActive: 1\n", &cfg, &err), 0);
    ck_assert_ptr_null(cfg);
    ck_assert_ptr_nonnull(strstr(err.msg, "t.yaml:3:24: delayCacheUntilActive"));
}
END_TEST

START_TEST(test_placement_points_empty_accepted)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_int_eq(load(V1 "profiles:\n"
                             "- schedulerName: default-scheduler\n"
                             "  plugins:\n"
                             "    placementGenerate: {}\n"
                             "    placementScore:\n"
                             "      enabled: []\n"
                             "      disabled:\n"
                             "      - name: '*'\n",
                          &cfg, &err),
                     0);
    ck_assert_uint_eq(cfg->n_profiles, 1);
    ks_config_free(cfg);
}
END_TEST

START_TEST(test_placement_points_enabled_refused)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_int_ne(load(V1 "profiles:\n"
                             "- schedulerName: default-scheduler\n"
                             "  plugins:\n"
                             "    placementScore:\n"
                             "      enabled:\n"
                             "      - name: NodeResourcesFit\n"
                             "    placementGenerate:\n"
                             "      enabled:\n"
                             "      - name: TopologyPlacement\n",
                          &cfg, &err),
                     0);
    ck_assert_ptr_null(cfg);
    ck_assert_str_eq(
        err.msg,
        "t.yaml:8:9: profiles[0].plugins.placementScore.enabled: the "
        "placementScore extension point (upstream's workload-aware "
        "scheduling of pod groups) is not supported in ksched; remove the "
        "plugins enabled there\n"
        "t.yaml:11:9: profiles[0].plugins.placementGenerate.enabled: the "
        "placementGenerate extension point (upstream's workload-aware "
        "scheduling of pod groups) is not supported in ksched; remove the "
        "plugins enabled there");
}
END_TEST

START_TEST(test_v1beta3_deprecated)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_int_eq(load("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                          "kind: KubeSchedulerConfiguration\n",
                          &cfg, &err),
                     0);
    ck_assert_uint_eq(cfg->n_notices, 1);
    ck_assert_str_eq(cfg->notices[0],
                     "t.yaml:1:13: apiVersion kubescheduler.config.k8s.io/"
                     "v1beta3 is deprecated (kube-scheduler removed it in "
                     "v1.29); use kubescheduler.config.k8s.io/v1");
    ks_config_free(cfg);
    cfg = NULL;
    ck_assert_int_eq(load(V1, &cfg, &err), 0);
    ck_assert_uint_eq(cfg->n_notices, 0);
    ks_config_free(cfg);
}
END_TEST

static Suite *upstream136_suite(void)
{
    Suite *s = suite_create("config-upstream136");
    TCase *tc = tcase_create("fields");
    tcase_add_test(tc, test_delay_cache_until_active);
    tcase_add_test(tc, test_placement_points_empty_accepted);
    tcase_add_test(tc, test_placement_points_enabled_refused);
    tcase_add_test(tc, test_v1beta3_deprecated);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(upstream136_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
