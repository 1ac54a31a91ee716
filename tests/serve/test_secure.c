/* Unit tests of serve's secure-serving pieces: the cache of answers that
 * expire (server/ttl_cache.h) and the self-signed certificate
 * (server/self_signed.h) with the TLS context made from it (tls.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "server/self_signed.h"
#include "server/tls.h"
#include "server/ttl_cache.h"

START_TEST(cache_expiry)
{
    ks_ttl_cache_t *c = ks_ttl_cache_new(8);
    size_t len = 0;
    const char *v;
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(ks_ttl_cache_put(c, "k", "abc", 3, 1000, 0), 0);
    v = ks_ttl_cache_get(c, "k", 999, &len);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(v, "abc", 3), 0);
    /* Expired at its time: gone, and dropped. */
    ck_assert_ptr_null(ks_ttl_cache_get(c, "k", 1000, &len));
    ck_assert_uint_eq(ks_ttl_cache_count(c), 0);
    /* Replaced: the new value and expiry. */
    ck_assert_int_eq(ks_ttl_cache_put(c, "k", "x", 1, 50, 0), 0);
    ck_assert_int_eq(ks_ttl_cache_put(c, "k", "yz", 2, 5000, 0), 0);
    v = ks_ttl_cache_get(c, "k", 100, &len);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(len, 2);
    ck_assert_uint_eq(ks_ttl_cache_count(c), 1);
    ck_assert_ptr_null(ks_ttl_cache_get(c, "other", 0, &len));
    ks_ttl_cache_free(c);
}
END_TEST

START_TEST(cache_bound)
{
    ks_ttl_cache_t *c = ks_ttl_cache_new(3);
    size_t len;
    ck_assert_int_eq(ks_ttl_cache_put(c, "a", "1", 1, 100, 0), 0);
    ck_assert_int_eq(ks_ttl_cache_put(c, "b", "2", 1, 300, 0), 0);
    ck_assert_int_eq(ks_ttl_cache_put(c, "c", "3", 1, 200, 0), 0);
    /* Full, none expired at 50: the soonest to expire (a) goes. */
    ck_assert_int_eq(ks_ttl_cache_put(c, "d", "4", 1, 400, 50), 0);
    ck_assert_uint_eq(ks_ttl_cache_count(c), 3);
    ck_assert_ptr_null(ks_ttl_cache_get(c, "a", 60, &len));
    ck_assert_ptr_nonnull(ks_ttl_cache_get(c, "b", 60, &len));
    ck_assert_ptr_nonnull(ks_ttl_cache_get(c, "c", 60, &len));
    /* Full at 250: the expired one (c) goes, not the soonest live. */
    ck_assert_int_eq(ks_ttl_cache_put(c, "e", "5", 1, 900, 250), 0);
    ck_assert_ptr_null(ks_ttl_cache_get(c, "c", 260, &len));
    ck_assert_ptr_nonnull(ks_ttl_cache_get(c, "b", 260, &len));
    ck_assert_ptr_nonnull(ks_ttl_cache_get(c, "d", 260, &len));
    ck_assert_ptr_nonnull(ks_ttl_cache_get(c, "e", 260, &len));
    ks_ttl_cache_free(c);
}
END_TEST

static X509 *parse_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    return x;
}

START_TEST(self_signed_names)
{
    static const char *const names[] = {"10.1.2.3", "localhost",
                                        "127.0.0.1", "::1", "node-7",
                                        "localhost", ""};
    ks_self_signed_t ss;
    ks_error_t err = {0};
    X509 *x;
    EVP_PKEY *pub;
    BIO *kb;
    EVP_PKEY *key;
    ks_tls_ctx_t *ctx;
    ck_assert_msg(ks_self_signed_make("node-7@1", names, 7, &ss, &err) == 0,
                  "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(ss.cert_pem, "BEGIN CERTIFICATE"));
    ck_assert_ptr_nonnull(strstr(ss.key_pem, "BEGIN PRIVATE KEY"));
    ck_assert_uint_eq(strlen(ss.fingerprint), 7 + 32 * 3 - 1);
    ck_assert_int_eq(strncmp(ss.fingerprint, "SHA256 ", 7), 0);
    x = parse_cert(ss.cert_pem);
    ck_assert_ptr_nonnull(x);
    /* Every name, IPs as IPs, each once. */
    ck_assert_int_eq(X509_check_ip_asc(x, "10.1.2.3", 0), 1);
    ck_assert_int_eq(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
    ck_assert_int_eq(X509_check_ip_asc(x, "::1", 0), 1);
    ck_assert_int_eq(X509_check_host(x, "localhost", 0, 0, NULL), 1);
    ck_assert_int_eq(X509_check_host(x, "node-7", 0, 0, NULL), 1);
    ck_assert_int_eq(X509_check_host(x, "example.com", 0, 0, NULL), 0);
    {
        GENERAL_NAMES *g = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
                                            NULL);
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(sk_GENERAL_NAME_num(g), 5);
        GENERAL_NAMES_free(g);
    }
    /* Self-signed: its own key verifies it; the key is the pair's. */
    pub = X509_get_pubkey(x);
    ck_assert_int_eq(X509_verify(x, pub), 1);
    EVP_PKEY_free(pub);
    kb = BIO_new_mem_buf(ss.key_pem, -1);
    key = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(key);
    ck_assert_int_eq(X509_check_private_key(x, key), 1);
    ck_assert_int_eq(X509_check_purpose(x, X509_PURPOSE_SSL_SERVER, 0), 1);
    EVP_PKEY_free(key);
    BIO_free(kb);
    X509_free(x);
    ctx = ks_tls_ctx_new_pem(ss.cert_pem, ss.key_pem, &err);
    ck_assert_msg(ctx != NULL, "%s", err.msg);
    ks_tls_ctx_free(ctx);
    ks_self_signed_free(&ss);
    ck_assert_ptr_null(ss.cert_pem);
}
END_TEST

START_TEST(self_signed_errors)
{
    static const char *const bad[] = {"a name, with a comma"};
    static const char *const none[] = {"", NULL};
    ks_self_signed_t ss, other;
    ks_error_t err = {0};
    ck_assert_int_eq(ks_self_signed_make("x", bad, 1, &ss, &err), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "neither an IP address nor"));
    ck_assert_int_eq(ks_self_signed_make("x", none, 2, &ss, &err), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no name"));
    /* A key that is not the certificate's is refused. */
    {
        static const char *const n[] = {"localhost"};
        ks_tls_ctx_t *ctx;
        ck_assert_int_eq(ks_self_signed_make("a", n, 1, &ss, &err), 0);
        ck_assert_int_eq(ks_self_signed_make("b", n, 1, &other, &err), 0);
        ck_assert_str_ne(ss.fingerprint, other.fingerprint);
        ctx = ks_tls_ctx_new_pem(ss.cert_pem, other.key_pem, &err);
        ck_assert_ptr_null(ctx);
        ck_assert_int_eq(err.code, KS_EINVAL);
        ctx = ks_tls_ctx_new_pem("not a certificate", ss.key_pem, &err);
        ck_assert_ptr_null(ctx);
        ks_self_signed_free(&ss);
        ks_self_signed_free(&other);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("secure");
    TCase *tc = tcase_create("secure");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, cache_expiry);
    tcase_add_test(tc, cache_bound);
    tcase_add_test(tc, self_signed_names);
    tcase_add_test(tc, self_signed_errors);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
