/* The intern table: pinned strings, counted strings and their release,
 * threads, and a pod's strings given back when the pod goes. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "cluster/objects.h"

START_TEST(test_intern_basic)
{
    ks_intern_t *t = ks_intern_new();
    char buf[32];
    const char *a, *b, *e;
    ck_assert_ptr_nonnull(t);
    a = ks_intern_str(t, "zone");
    strcpy(buf, "zone");
    b = ks_intern_str(t, buf);
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_ne(a, buf);
    ck_assert_str_eq(a, "zone");
    ck_assert_ptr_eq(ks_intern_strn(t, "zonex", 4), a);
    e = ks_intern_empty(t);
    ck_assert_str_eq(e, "");
    ck_assert_ptr_eq(ks_intern_str(t, ""), e);
    ck_assert_ptr_ne(ks_intern_str(t, "zone2"), a);
    ks_intern_free(t);
}
END_TEST

START_TEST(test_intern_many_and_big)
{
    ks_intern_t *t = ks_intern_new();
    const char **ptrs = malloc(50000 * sizeof(*ptrs));
    char buf[64], *big;
    int i;
    for (i = 0; i < 50000; i++) {
        snprintf(buf, sizeof(buf), "label-%d", i);
        ptrs[i] = ks_intern_str(t, buf);
    }
    for (i = 0; i < 50000; i++) {
        snprintf(buf, sizeof(buf), "label-%d", i);
        ck_assert_ptr_eq(ks_intern_str(t, buf), ptrs[i]);
        ck_assert_str_eq(ptrs[i], buf);
    }
    big = malloc(100001);
    memset(big, 'x', 100000);
    big[100000] = '\0';
    ck_assert_ptr_eq(ks_intern_str(t, big), ks_intern_str(t, big));
    ck_assert_uint_eq(strlen(ks_intern_str(t, big)), 100000);
    /* strings interned before the big one are untouched */
    ck_assert_str_eq(ptrs[49999], "label-49999");
    free(big);
    free(ptrs);
    ks_intern_free(t);
}
END_TEST

static ks_intern_t *shared;
static const char *seen[8][1000];

static void *intern_worker(void *arg)
{
    int id = (int)(intptr_t)arg, i;
    char buf[32];
    for (i = 0; i < 1000; i++) {
        snprintf(buf, sizeof(buf), "k%d", i);
        seen[id][i] = ks_intern_str(shared, buf);
    }
    return NULL;
}

START_TEST(test_intern_threads)
{
    pthread_t th[8];
    int i, j;
    shared = ks_intern_new();
    for (i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, intern_worker, (void *)(intptr_t)i);
    for (i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    for (j = 0; j < 1000; j++)
        for (i = 1; i < 8; i++)
            ck_assert_ptr_eq(seen[i][j], seen[0][j]);
    ks_intern_free(shared);
}
END_TEST

START_TEST(test_intern_global)
{
    ks_intern_t *g = ks_intern_global();
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_eq(ks_intern_global(), g);
    ck_assert_ptr_eq(ks_intern_str(g, "x"), ks_intern_str(g, "x"));
}
END_TEST

START_TEST(test_intern_counted)
{
    ks_intern_t *t = ks_intern_new();
    size_t base = ks_intern_count(t);
    const char *a = ks_intern_ref(t, "uid-1", 5), *b;
    ck_assert_str_eq(a, "uid-1");
    b = ks_intern_ref(t, "uid-1xyz", 5);
    ck_assert_ptr_eq(a, b); /* one copy, two references */
    ck_assert_uint_eq(ks_intern_count(t), base + 1);
    ck_assert_uint_eq(ks_intern_counted_bytes(t), 6);
    ck_assert_ptr_eq(ks_intern_lookup(t, "uid-1"), a);
    ks_intern_unref(t, a);
    ck_assert_ptr_eq(ks_intern_lookup(t, "uid-1"), a);
    ks_intern_unref(t, b);
    ck_assert_ptr_null(ks_intern_lookup(t, "uid-1")); /* gone */
    ck_assert_uint_eq(ks_intern_count(t), base);
    ck_assert_uint_eq(ks_intern_counted_bytes(t), 0);
    /* Pinned by anyone: it stays whatever the counted references do. */
    a = ks_intern_ref(t, "zone", 4);
    ck_assert_ptr_eq(ks_intern_str(t, "zone"), a);
    ks_intern_unref(t, a);
    ks_intern_unref(t, a);
    ck_assert_ptr_eq(ks_intern_lookup(t, "zone"), a);
    ck_assert_ptr_eq(ks_intern_ref(t, "zone", 4), a);
    /* A lookup never creates; "" is always there. */
    ck_assert_ptr_null(ks_intern_lookup(t, "never"));
    ck_assert_ptr_eq(ks_intern_lookup(t, ""), ks_intern_empty(t));
    ks_intern_free(t); /* frees counted strings still held */
}
END_TEST

/* Deleting from the middle of probe runs keeps every other string
 * findable (backward-shift deletion). */
START_TEST(test_intern_counted_churn)
{
    ks_intern_t *t = ks_intern_new();
    const char **p = malloc(20000 * sizeof *p);
    char buf[32];
    int i, round;
    for (round = 0; round < 3; round++) {
        for (i = 0; i < 20000; i++) {
            int n = snprintf(buf, sizeof buf, "pod-%d-%d", round, i);
            p[i] = ks_intern_ref(t, buf, (size_t)n);
        }
        for (i = 0; i < 20000; i += 2)
            ks_intern_unref(t, p[i]);
        for (i = 0; i < 20000; i++) {
            snprintf(buf, sizeof buf, "pod-%d-%d", round, i);
            if (i % 2)
                ck_assert_ptr_eq(ks_intern_lookup(t, buf), p[i]);
            else
                ck_assert_ptr_null(ks_intern_lookup(t, buf));
        }
        for (i = 1; i < 20000; i += 2)
            ks_intern_unref(t, p[i]);
        ck_assert_uint_eq(ks_intern_counted_bytes(t), 0);
    }
    free(p);
    ks_intern_free(t);
}
END_TEST

/* A pod's uid, name and annotations go with the pod: creating and freeing
 * a pod with a 900 KiB annotation 300 times leaves nothing behind. */
START_TEST(test_pod_strings_released)
{
    ks_intern_t *t = ks_intern_new();
    size_t ann = 900 * 1024, base_count, i;
    char *yaml = malloc(ann + 512), *p;
    int n = sprintf(yaml, "apiVersion: v1\nkind: Pod\nmetadata:\n"
                          "  name: big\n  uid: u-1\n  labels: {app: web}\n"
                          "  annotations:\n    note: \"");
    p = yaml + n;
    memset(p, 'a', ann);
    p += ann;
    strcpy(p, "\"\nspec:\n  containers: [{name: c}]\n");
    /* Shared strings (labels, names of fields) may stay: measure after a
     * first pod has come and gone. */
    for (i = 0; i < 301; i++) {
        ks_manifest_t m;
        ks_error_t err = {0};
        memset(&m, 0, sizeof m);
        ck_assert_msg(ks_manifest_load_string(&m, "big.yaml", yaml,
                                              strlen(yaml), t, NULL, &err)
                          == 0, "%s", err.msg);
        ck_assert_uint_eq(m.n_pods, 1);
        ck_assert_uint_eq(strlen(m.pods[0]->annotations.items[0].value), ann);
        ck_assert_uint_ge(ks_intern_counted_bytes(t), ann);
        ks_manifest_free(&m);
        if (i == 0)
            base_count = ks_intern_count(t);
        ck_assert_uint_eq(ks_intern_counted_bytes(t), 0);
        ck_assert_uint_eq(ks_intern_count(t), base_count);
    }
    ck_assert_ptr_null(ks_intern_lookup(t, "u-1"));
    ck_assert_ptr_nonnull(ks_intern_lookup(t, "app")); /* a label key stays */
    free(yaml);
    ks_intern_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster-intern");
    TCase *ti = tcase_create("intern");
    SRunner *sr;
    int failed;
    tcase_add_test(ti, test_intern_basic);
    tcase_add_test(ti, test_intern_many_and_big);
    tcase_add_test(ti, test_intern_threads);
    tcase_add_test(ti, test_intern_global);
    tcase_add_test(ti, test_intern_counted);
    tcase_add_test(ti, test_intern_counted_churn);
    tcase_add_test(ti, test_pod_strings_released);
    tcase_set_timeout(ti, 120);
    suite_add_tcase(s, ti);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
