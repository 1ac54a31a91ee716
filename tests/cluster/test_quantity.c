/* Quantities and RFC 3339 timestamps. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "cluster/objects.h"
#include "cluster/quantity.h"

typedef struct qrow {
    const char *in;
    int milli;
    int ok;
    int64_t want; /* when ok */
    const char *why; /* substring of the error when !ok */
} qrow_t;

#define GI (1024LL * 1024 * 1024)
#define MI (1024LL * 1024)

static const qrow_t rows[] = {
    {"100m", 1, 1, 100, NULL},
    {"100m", 0, 1, 1, NULL},           /* Value() rounds 0.1 up */
    {"1.5", 1, 1, 1500, NULL},
    {"1.5", 0, 1, 2, NULL},
    {"2Gi", 0, 1, 2 * GI, NULL},
    {"1e3", 0, 1, 1000, NULL},
    {"1e3", 1, 1, 1000000, NULL},
    {"1E3", 0, 1, 1000, NULL},
    {"1e+3", 0, 1, 1000, NULL},
    {"512Mi", 0, 1, 512 * MI, NULL},
    {"0.5Gi", 0, 1, 512 * MI, NULL},
    {"+1", 0, 1, 1, NULL},
    {"1k", 0, 1, 1000, NULL},
    {"1M", 0, 1, 1000000, NULL},
    {"1G", 0, 1, 1000000000, NULL},
    {"10n", 1, 1, 1, NULL},            /* 0.00001 milli rounds up to 1 */
    {"5u", 1, 1, 1, NULL},
    {"1.5m", 1, 1, 2, NULL},           /* upstream MilliValue ceiling */
    {"0.1", 0, 1, 1, NULL},            /* memory Value ceiling */
    {"0", 0, 1, 0, NULL},
    {"0m", 1, 1, 0, NULL},
    {"000.000", 0, 1, 0, NULL},
    {"1Ki", 0, 1, 1024, NULL},
    {"0.1Ki", 0, 1, 103, NULL},        /* 102.4 rounds up */
    {"1.G", 0, 1, 1000000000, NULL},   /* empty fraction is allowed */
    {".5", 1, 1, 500, NULL},
    {"1e-3", 1, 1, 1, NULL},
    {"1.234567891234", 1, 1, 1235, NULL},
    {"7800m", 1, 1, 7800, NULL},
    {"1000Ki", 0, 1, 1024000, NULL},
    {"9E", 0, 1, 9000000000000000000LL, NULL},
    {"8Ei", 0, 1, INT64_MAX, NULL},    /* binary values cap at 2^63-1 */
    {"-1.5", 0, 1, -2, NULL},          /* away from zero */
    {"-250m", 1, 1, -250, NULL},
    {"1e-400", 1, 1, 1, NULL},
    {"0.000000000000000000000000000000000000000000000000000000000000000000000001", 0, 1, 1, NULL},
    {"", 0, 0, 0, "empty"},
    {"abc", 0, 0, 0, "unexpected character 'a'"},
    {"1Kb", 0, 0, 0, "unexpected character 'b'"},
    {"1 Gi", 0, 0, 0, "unexpected character ' '"},
    {"1.2.3", 0, 0, 0, "unexpected character '.'"},
    {"1e", 0, 0, 0, "unknown suffix \"e\""},
    {"1ki", 0, 0, 0, "unknown suffix \"ki\""},
    {"1e3.5", 0, 0, 0, "unexpected character '.'"},
    {"1e30", 0, 0, 0, "out of range"},
    {"12E", 0, 0, 0, "out of range"},
    {"9E", 1, 0, 0, "out of range"},   /* fits as a value, not in milli */
    {"8Ei", 1, 0, 0, "out of range"},
    {"1e99999999999", 0, 0, 0, "exponent out of range"},
};

START_TEST(test_quantity_table)
{
    const qrow_t *r = &rows[_i];
    int64_t v = -12345;
    char err[256] = "";
    int rc = ks_quantity_parse(r->in, r->milli, &v, err, sizeof(err));
    if (r->ok) {
        ck_assert_msg(rc == 0, "\"%s\": unexpected error %s", r->in, err);
        ck_assert_msg(v == r->want, "\"%s\" milli=%d: got %lld want %lld",
                      r->in, r->milli, (long long)v, (long long)r->want);
    } else {
        ck_assert_msg(rc == -1, "\"%s\" should fail, got %lld", r->in,
                      (long long)v);
        ck_assert_msg(strstr(err, "invalid quantity \"") == err,
                      "message \"%s\"", err);
        ck_assert_msg(strstr(err, r->why) != NULL,
                      "\"%s\": message \"%s\" lacks \"%s\"", r->in, err,
                      r->why);
    }
}
END_TEST

START_TEST(test_quantity_error_names_input)
{
    char err[256];
    int64_t v;
    ck_assert_int_eq(ks_quantity_parse("abc", 1, &v, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "invalid quantity \"abc\": unexpected character "
                          "'a' at offset 0");
    /* a NULL or zero-size buffer is fine */
    ck_assert_int_eq(ks_quantity_parse("x", 1, &v, NULL, 0), -1);
}
END_TEST

START_TEST(test_rfc3339)
{
    int64_t ms = 0;
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01T00:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 1654041600000LL);
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01T00:00:05.250Z", &ms), 0);
    ck_assert_int_eq(ms, 1654041605250LL);
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01T02:00:00+02:00", &ms), 0);
    ck_assert_int_eq(ms, 1654041600000LL);
    ck_assert_int_eq(ks_rfc3339_parse("1970-01-01T00:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 0);
    ck_assert_int_eq(ks_rfc3339_parse("2024-02-29T12:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 1709208000000LL);
    ck_assert_int_eq(ks_rfc3339_parse("2023-02-29T12:00:00Z", &ms), -1);
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01", &ms), -1);
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01T00:00:00", &ms), -1);
    ck_assert_int_eq(ks_rfc3339_parse("2022-13-01T00:00:00Z", &ms), -1);
    ck_assert_int_eq(ks_rfc3339_parse("2022-06-01T00:00:00Zjunk", &ms), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster-quantity");
    TCase *tc = tcase_create("quantity");
    TCase *tt = tcase_create("time");
    SRunner *sr;
    int failed;
    tcase_add_loop_test(tc, test_quantity_table, 0,
                        (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_test(tc, test_quantity_error_names_input);
    tcase_add_test(tt, test_rfc3339);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tt);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
