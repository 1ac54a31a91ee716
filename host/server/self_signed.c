/* A self-signed serving certificate (see self_signed.h). */
#include "self_signed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* One year, as the certificates kube-scheduler makes for itself. */
#define VALID_SECONDS (365L * 24 * 3600)

static int openssl_error(ks_error_t *err, int code, const char *what)
{
    char why[256];
    unsigned long e = ERR_get_error();
    if (e == 0)
        snprintf(why, sizeof why, "unknown error");
    else
        ERR_error_string_n(e, why, sizeof why);
    ERR_clear_error();
    return ks_error_set(err, code, "self-signed certificate: %s: %s", what,
                        why);
}

static EVP_PKEY *make_key(void)
{
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    EVP_PKEY *k = NULL;
    if (kc == NULL || EVP_PKEY_keygen_init(kc) != 1 ||
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kc, NID_X9_62_prime256v1) !=
            1 ||
        EVP_PKEY_keygen(kc, &k) != 1) {
        EVP_PKEY_free(k);
        k = NULL;
    }
    EVP_PKEY_CTX_free(kc);
    return k;
}

/* A DNS name the certificate may carry: printable, no space or comma. */
static int dns_name_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 127 || *s == ',')
            return 0;
    return 1;
}

static int seen_before(const char *const *names, size_t i)
{
    size_t k;
    for (k = 0; k < i; k++)
        if (names[k] && strcmp(names[k], names[i]) == 0)
            return 1;
    return 0;
}

/* subjectAltName: IP addresses as IPs, the rest as DNS names. */
static int add_san(X509 *x, const char *const *names, size_t n,
                   ks_error_t *err)
{
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    size_t i, added = 0;
    int rc = 0;
    if (gens == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        const char *nm = names[i];
        GENERAL_NAME *g;
        ASN1_OCTET_STRING *ip;
        if (nm == NULL || nm[0] == '\0' || seen_before(names, i))
            continue;
        if ((g = GENERAL_NAME_new()) == NULL) {
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            break;
        }
        ERR_set_mark();
        ip = a2i_IPADDRESS(nm);
        ERR_pop_to_mark();
        if (ip != NULL) {
            GENERAL_NAME_set0_value(g, GEN_IPADD, ip);
        } else {
            ASN1_IA5STRING *d = ASN1_IA5STRING_new();
            if (!dns_name_ok(nm)) {
                ASN1_IA5STRING_free(d);
                GENERAL_NAME_free(g);
                rc = ks_error_set(err, KS_EINVAL,
                                  "self-signed certificate: \"%s\" is "
                                  "neither an IP address nor a DNS name",
                                  nm);
                break;
            }
            if (d == NULL || ASN1_STRING_set(d, nm, (int)strlen(nm)) != 1) {
                ASN1_IA5STRING_free(d);
                GENERAL_NAME_free(g);
                rc = ks_error_set(err, KS_ENOMEM, "out of memory");
                break;
            }
            GENERAL_NAME_set0_value(g, GEN_DNS, d);
        }
        if (sk_GENERAL_NAME_push(gens, g) <= 0) {
            GENERAL_NAME_free(g);
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            break;
        }
        added++;
    }
    if (rc == 0 && added == 0)
        rc = ks_error_set(err, KS_EINVAL,
                          "self-signed certificate: no name to issue it "
                          "for");
    if (rc == 0 &&
        X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, 0) != 1)
        rc = openssl_error(err, KS_ENOMEM, "subjectAltName");
    GENERAL_NAMES_free(gens);
    return rc;
}

static int add_ext(X509 *x, int nid, const char *value, ks_error_t *err)
{
    X509V3_CTX v3;
    X509_EXTENSION *e;
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (e == NULL || X509_add_ext(x, e, -1) != 1) {
        X509_EXTENSION_free(e);
        return openssl_error(err, KS_ENOMEM, value);
    }
    X509_EXTENSION_free(e);
    return 0;
}

/* The PEM text a writer leaves in a memory BIO, as a C string. */
static char *bio_string(BIO *b)
{
    char *data = NULL, *s;
    long n = BIO_get_mem_data(b, &data);
    if (n <= 0 || (s = malloc((size_t)n + 1)) == NULL)
        return NULL;
    memcpy(s, data, (size_t)n);
    s[n] = '\0';
    return s;
}

static void wipe_free(char *s)
{
    if (s) {
        volatile char *p = s;
        size_t i, n = strlen(s);
        for (i = 0; i < n; i++)
            p[i] = 0;
        free(s);
    }
}

void ks_self_signed_free(ks_self_signed_t *s)
{
    if (s == NULL)
        return;
    free(s->cert_pem);
    wipe_free(s->key_pem);
    memset(s, 0, sizeof *s);
}

int ks_self_signed_make(const char *cn, const char *const *names,
                        size_t n_names, ks_self_signed_t *out,
                        ks_error_t *err)
{
    EVP_PKEY *key = NULL;
    X509 *x = NULL;
    BIGNUM *serial = NULL;
    BIO *cb = NULL, *kb = NULL;
    X509_NAME *subj;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0, i;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if ((key = make_key()) == NULL)
        return openssl_error(err, KS_ENOMEM, "P-256 key");
    if ((x = X509_new()) == NULL || (serial = BN_new()) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto done;
    }
    /* v3; a random 127-bit serial (positive, as RFC 5280 wants). */
    if (X509_set_version(x, 2) != 1 ||
        BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) == NULL ||
        X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(x), VALID_SECONDS) == NULL ||
        X509_set_pubkey(x, key) != 1) {
        rc = openssl_error(err, KS_ENOMEM, "certificate fields");
        goto done;
    }
    subj = X509_get_subject_name(x);
    if (X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_UTF8,
                                   (const unsigned char *)cn, -1, -1,
                                   0) != 1 ||
        X509_set_issuer_name(x, subj) != 1) {
        rc = openssl_error(err, KS_EINVAL, "subject");
        goto done;
    }
    if ((rc = add_san(x, names, n_names, err)) != 0 ||
        (rc = add_ext(x, NID_basic_constraints, "critical,CA:TRUE",
                      err)) != 0 ||
        (rc = add_ext(x, NID_key_usage,
                      "critical,digitalSignature,keyCertSign", err)) != 0 ||
        (rc = add_ext(x, NID_ext_key_usage, "serverAuth", err)) != 0 ||
        (rc = add_ext(x, NID_subject_key_identifier, "hash", err)) != 0)
        goto done;
    if (X509_sign(x, key, EVP_sha256()) == 0) {
        rc = openssl_error(err, KS_ENOMEM, "signing");
        goto done;
    }
    cb = BIO_new(BIO_s_mem());
    kb = BIO_new(BIO_s_mem());
    if (cb == NULL || kb == NULL || PEM_write_bio_X509(cb, x) != 1 ||
        PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) != 1 ||
        (out->cert_pem = bio_string(cb)) == NULL ||
        (out->key_pem = bio_string(kb)) == NULL) {
        rc = openssl_error(err, KS_ENOMEM, "PEM");
        goto done;
    }
    if (X509_digest(x, EVP_sha256(), md, &mdlen) != 1) {
        rc = openssl_error(err, KS_ENOMEM, "fingerprint");
        goto done;
    }
    {
        size_t off = (size_t)snprintf(out->fingerprint,
                                      sizeof out->fingerprint, "SHA256 ");
        for (i = 0; i < mdlen && off + 3 < sizeof out->fingerprint; i++)
            off += (size_t)snprintf(out->fingerprint + off,
                                    sizeof out->fingerprint - off, "%s%02X",
                                    i ? ":" : "", md[i]);
    }
done:
    if (rc != 0)
        ks_self_signed_free(out);
    BIO_free(kb);
    BIO_free(cb);
    BN_free(serial);
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}
