/* host/shadow's pieces that need no scheduler: the result classes, the
 * NAME[=PROFILE] list of --shadow and --replay-as, and the tally behind
 * replay's summary. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "shadow/compare.h"
#include "shadow/shadow.h"
#include "shadow/tally.h"

START_TEST(result_names)
{
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_SAME), "same");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_TIED), "tied");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_DIFFERENT),
                     "different");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_UNSCHEDULABLE),
                     "unschedulable");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_PLACED), "placed");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_ERROR), "error");
    ck_assert_str_eq(ks_shadow_result_name(KS_SHADOW_N_RESULTS), "unknown");
    /* ties are no difference: upstream breaks them at random */
    ck_assert(!ks_shadow_result_differs(KS_SHADOW_SAME));
    ck_assert(!ks_shadow_result_differs(KS_SHADOW_TIED));
    ck_assert(ks_shadow_result_differs(KS_SHADOW_DIFFERENT));
    ck_assert(ks_shadow_result_differs(KS_SHADOW_UNSCHEDULABLE));
    ck_assert(ks_shadow_result_differs(KS_SHADOW_PLACED));
    ck_assert(ks_shadow_result_differs(KS_SHADOW_ERROR));
}
END_TEST

START_TEST(names_parse)
{
    ks_shadow_names_t n;
    ks_error_t err = {0};
    memset(&n, 0, sizeof n);
    ck_assert_int_eq(ks_shadow_names_parse("default-scheduler,other=exp",
                                           &n, &err),
                     0);
    ck_assert_uint_eq(n.n, 2);
    ck_assert_str_eq(n.name[0], "default-scheduler");
    ck_assert_str_eq(n.profile[0], "");
    ck_assert_str_eq(n.name[1], "other");
    ck_assert_str_eq(n.profile[1], "exp");
    ks_shadow_names_free(&n);
    ck_assert_uint_eq(n.n, 0);

    ck_assert_int_eq(ks_shadow_names_parse("a,=b", &n, &err), KS_EINVAL);
    ck_assert_str_eq(err.msg, "'=b' is not NAME or NAME=PROFILE");
    ks_shadow_names_free(&n);
    ck_assert_int_eq(ks_shadow_names_parse("a=", &n, &err), KS_EINVAL);
    ks_shadow_names_free(&n);
    ck_assert_int_eq(ks_shadow_names_parse("", &n, &err), KS_EINVAL);
    ck_assert_str_eq(err.msg, "at least one scheduler name is needed");
    ks_shadow_names_free(&n);
}
END_TEST

/* A decision naming plugins (only the fields the tally reads). */
static ks_shadow_decision_t decision(ks_shadow_result_t res, const char *a,
                                     const char *b)
{
    ks_shadow_decision_t d;
    memset(&d, 0, sizeof d);
    d.result = res;
    if (a)
        d.deciding[d.n_deciding++] = (char *)a;
    if (b)
        d.deciding[d.n_deciding++] = (char *)b;
    return d;
}

START_TEST(tally_counts)
{
    ks_shadow_tally_t t;
    ks_shadow_decision_t d;
    memset(&t, 0, sizeof t);
    d = decision(KS_SHADOW_SAME, NULL, NULL);
    ck_assert_int_eq(ks_shadow_tally_add(&t, &d), 0);
    d = decision(KS_SHADOW_DIFFERENT, "NodeResourcesFit",
                 "NodeResourcesBalancedAllocation");
    ck_assert_int_eq(ks_shadow_tally_add(&t, &d), 0);
    d = decision(KS_SHADOW_UNSCHEDULABLE, "NodeAffinity", NULL);
    ck_assert_int_eq(ks_shadow_tally_add(&t, &d), 0);
    d = decision(KS_SHADOW_DIFFERENT, "NodeResourcesFit", NULL);
    ck_assert_int_eq(ks_shadow_tally_add(&t, &d), 0);
    /* a tie names no plugin in the summary */
    d = decision(KS_SHADOW_TIED, "ImageLocality", NULL);
    ck_assert_int_eq(ks_shadow_tally_add(&t, &d), 0);
    ks_shadow_tally_sort(&t);
    ck_assert_uint_eq(t.results[KS_SHADOW_SAME], 1);
    ck_assert_uint_eq(t.results[KS_SHADOW_DIFFERENT], 2);
    ck_assert_uint_eq(t.results[KS_SHADOW_UNSCHEDULABLE], 1);
    ck_assert_uint_eq(t.results[KS_SHADOW_TIED], 1);
    ck_assert_uint_eq(t.n_plugins, 3);
    ck_assert_str_eq(t.plugins[0].plugin, "NodeResourcesFit");
    ck_assert_uint_eq(t.plugins[0].count, 2);
    /* equal counts by name */
    ck_assert_str_eq(t.plugins[1].plugin, "NodeAffinity");
    ck_assert_str_eq(t.plugins[2].plugin,
                     "NodeResourcesBalancedAllocation");
    ks_shadow_tally_free(&t);
    ck_assert_uint_eq(t.n_plugins, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shadow");
    TCase *tc = tcase_create("units");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, result_names);
    tcase_add_test(tc, names_parse);
    tcase_add_test(tc, tally_counts);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
