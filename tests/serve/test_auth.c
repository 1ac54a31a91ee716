/* Unit tests of serve's bearer tokens (server/auth.h): the token file's
 * lines and rows, its errors with file:line, and the header check (exact
 * match only, scheme case-insensitive, every token tried). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/auth.h"

/* A temporary file holding `text`; the path is written to `path`. */
static void write_tmp(char *path, size_t len, const char *text)
{
    int fd;
    FILE *f;
    snprintf(path, len, "%s/ksched-auth-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(tokens_lines_and_rows)
{
    char path[512];
    ks_error_t err = {0};
    ks_auth_t *a;
    write_tmp(path, sizeof path,
              "# comment\n"
              "\n"
              "  plain-token  \n"
              "csv-token,alice,1000,\"group1,group2\"\n"
              "last-no-newline");
    a = ks_auth_load(path, &err);
    unlink(path);
    ck_assert_msg(a != NULL, "%s", err.msg);
    ck_assert_uint_eq(ks_auth_count(a), 3);
    ck_assert(ks_auth_check(a, "Bearer plain-token"));
    ck_assert(ks_auth_check(a, "bearer csv-token"));
    ck_assert(ks_auth_check(a, "BEARER   last-no-newline  "));
    ck_assert(!ks_auth_check(a, "Bearer alice"));
    ck_assert(!ks_auth_check(a, "Bearer plain-toke"));
    ck_assert(!ks_auth_check(a, "Bearer plain-tokenX"));
    ck_assert(!ks_auth_check(a, "Bearer "));
    ck_assert(!ks_auth_check(a, "Basic plain-token"));
    ck_assert(!ks_auth_check(a, "plain-token"));
    ck_assert(!ks_auth_check(a, NULL));
    ck_assert(!ks_auth_check(NULL, "Bearer plain-token"));
    ks_auth_free(a);
}
END_TEST

START_TEST(token_file_errors)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"# only a comment\n\n", "no token in the file"},
        {"good\nbad token\n", ":2: a token has a space or a control "
                              "character at column 4"},
        {"good\n,user,1\n", ":2: empty token"},
        {"tab\there\n", ":1: a token has a space"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        ks_error_t err = {0};
        ks_auth_t *a;
        write_tmp(path, sizeof path, cases[i].text);
        a = ks_auth_load(path, &err);
        unlink(path);
        ck_assert_ptr_null(a);
        ck_assert_int_eq(err.code, KS_EINVAL);
        ck_assert_msg(strstr(err.msg, cases[i].want) != NULL,
                      "case %zu: %s", i, err.msg);
    }
    {
        ks_error_t err = {0};
        ck_assert_ptr_null(ks_auth_load("/nonexistent/tokens", &err));
        ck_assert_int_eq(err.code, KS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/tokens"));
    }
}
END_TEST

START_TEST(always_allowed_paths)
{
    ck_assert(ks_auth_always_allowed("/healthz"));
    ck_assert(ks_auth_always_allowed("/readyz"));
    ck_assert(ks_auth_always_allowed("/livez"));
    ck_assert(!ks_auth_always_allowed("/metrics"));
    ck_assert(!ks_auth_always_allowed("/healthzx"));
    ck_assert(!ks_auth_always_allowed("/api/v1/pods"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("tokens");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, tokens_lines_and_rows);
    tcase_add_test(tc, token_file_errors);
    tcase_add_test(tc, always_allowed_paths);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
