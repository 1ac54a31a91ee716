/* TLS through memory BIOs (see tls.h). */
#include "tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

struct ks_tls_ctx {
    SSL_CTX *ctx;
};

struct ks_tls_conn {
    SSL *ssl;
    BIO *in, *out; /* socket -> SSL, SSL -> socket (owned by ssl) */
    int seen_input;
    char error[256];
};

static void last_error(char *buf, size_t len)
{
    unsigned long e = ERR_get_error();
    if (e == 0)
        snprintf(buf, len, "unknown error");
    else
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
}

/* A server context with ksched's settings and no certificate yet. */
static ks_tls_ctx_t *ctx_base(ks_error_t *err)
{
    ks_tls_ctx_t *c = calloc(1, sizeof *c);
    char why[256];
    if (c == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    c->ctx = SSL_CTX_new(TLS_server_method());
    if (c->ctx == NULL) {
        last_error(why, sizeof why);
        ks_error_set(err, KS_ENOMEM, "TLS: %s", why);
        free(c);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    /* Writes hand over whole buffers that move when the queue grows. */
    SSL_CTX_set_mode(c->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                 SSL_MODE_ENABLE_PARTIAL_WRITE);
    SSL_CTX_set_mode(c->ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE);
    return c;
}

ks_tls_ctx_t *ks_tls_ctx_new(const char *cert_file, const char *key_file,
                             ks_error_t *err)
{
    ks_tls_ctx_t *c = ctx_base(err);
    char why[256];
    if (c == NULL)
        return NULL;
    if (SSL_CTX_use_certificate_chain_file(c->ctx, cert_file) != 1) {
        last_error(why, sizeof why);
        ks_error_set(err, KS_EINVAL, "--tls-cert-file %s: %s", cert_file,
                     why);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(c->ctx, key_file, SSL_FILETYPE_PEM) !=
        1) {
        last_error(why, sizeof why);
        ks_error_set(err, KS_EINVAL, "--tls-private-key-file %s: %s",
                     key_file, why);
        goto fail;
    }
    if (SSL_CTX_check_private_key(c->ctx) != 1) {
        last_error(why, sizeof why);
        ks_error_set(err, KS_EINVAL,
                     "--tls-private-key-file %s does not match the "
                     "certificate in %s: %s",
                     key_file, cert_file, why);
        goto fail;
    }
    return c;
fail:
    SSL_CTX_free(c->ctx);
    free(c);
    return NULL;
}

ks_tls_ctx_t *ks_tls_ctx_new_pem(const char *cert_pem, const char *key_pem,
                                 ks_error_t *err)
{
    ks_tls_ctx_t *c = ctx_base(err);
    BIO *cb = NULL, *kb = NULL;
    X509 *x = NULL;
    EVP_PKEY *k = NULL;
    char why[256];
    if (c == NULL)
        return NULL;
    cb = BIO_new_mem_buf(cert_pem, -1);
    kb = BIO_new_mem_buf(key_pem, -1);
    if (cb && kb) {
        x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
        k = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
    }
    if (x == NULL || k == NULL || SSL_CTX_use_certificate(c->ctx, x) != 1 ||
        SSL_CTX_use_PrivateKey(c->ctx, k) != 1 ||
        SSL_CTX_check_private_key(c->ctx) != 1) {
        last_error(why, sizeof why);
        ks_error_set(err, KS_EINVAL, "TLS certificate: %s", why);
        SSL_CTX_free(c->ctx);
        free(c);
        c = NULL;
    }
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    return c;
}

void ks_tls_ctx_free(ks_tls_ctx_t *c)
{
    if (c == NULL)
        return;
    SSL_CTX_free(c->ctx);
    free(c);
}

ks_tls_conn_t *ks_tls_conn_new(ks_tls_ctx_t *ctx)
{
    ks_tls_conn_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->ssl = SSL_new(ctx->ctx);
    t->in = BIO_new(BIO_s_mem());
    t->out = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->in == NULL || t->out == NULL) {
        SSL_free(t->ssl);
        BIO_free(t->in);
        BIO_free(t->out);
        free(t);
        ERR_clear_error();
        return NULL;
    }
    BIO_set_mem_eof_return(t->in, -1); /* empty: "retry", not EOF */
    BIO_set_mem_eof_return(t->out, -1);
    SSL_set_bio(t->ssl, t->in, t->out); /* the SSL owns them now */
    SSL_set_accept_state(t->ssl);
    return t;
}

void ks_tls_conn_free(ks_tls_conn_t *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl);
    free(t);
}

int ks_tls_feed(ks_tls_conn_t *t, const char *data, size_t len)
{
    if (len == 0)
        return KS_TLS_OK;
    /* A TLS connection opens with a handshake record (content type 22);
     * "GET ", "POST" ... is a client that did not read the URL. */
    if (!t->seen_input) {
        t->seen_input = 1;
        if ((unsigned char)data[0] != 0x16) {
            snprintf(t->error, sizeof t->error,
                     "client sent an HTTP request to an HTTPS server");
            return KS_TLS_PLAINTEXT;
        }
    }
    while (len > 0) {
        int chunk = len > (size_t)1 << 30 ? 1 << 30 : (int)len;
        int n = BIO_write(t->in, data, chunk);
        if (n <= 0) {
            snprintf(t->error, sizeof t->error, "out of memory");
            return KS_TLS_ERROR;
        }
        data += n;
        len -= (size_t)n;
    }
    return KS_TLS_OK;
}

ssize_t ks_tls_read(ks_tls_conn_t *t, char *buf, size_t cap)
{
    int n, e;
    if (cap > (size_t)1 << 30)
        cap = (size_t)1 << 30;
    n = SSL_read(t->ssl, buf, (int)cap);
    if (n > 0)
        return n;
    e = SSL_get_error(t->ssl, n);
    switch (e) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        return 0;
    case SSL_ERROR_ZERO_RETURN:
        return KS_TLS_CLOSED;
    default:
        last_error(t->error, sizeof t->error);
        return KS_TLS_ERROR;
    }
}

int ks_tls_write(ks_tls_conn_t *t, const char *data, size_t len)
{
    while (len > 0) {
        int chunk = len > (size_t)1 << 30 ? 1 << 30 : (int)len;
        /* The output BIO is memory: a write never waits for the socket;
         * before the handshake is done OpenSSL cannot encrypt yet. */
        int n = SSL_write(t->ssl, data, chunk);
        if (n <= 0) {
            last_error(t->error, sizeof t->error);
            return KS_TLS_ERROR;
        }
        data += n;
        len -= (size_t)n;
    }
    return KS_TLS_OK;
}

void ks_tls_close_notify(ks_tls_conn_t *t)
{
    if (SSL_is_init_finished(t->ssl))
        (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
}

size_t ks_tls_out_pending(ks_tls_conn_t *t)
{
    return BIO_ctrl_pending(t->out);
}

size_t ks_tls_out_take(ks_tls_conn_t *t, char *buf, size_t cap)
{
    int n;
    if (cap > (size_t)1 << 30)
        cap = (size_t)1 << 30;
    n = BIO_read(t->out, buf, (int)cap);
    return n > 0 ? (size_t)n : 0;
}

int ks_tls_established(const ks_tls_conn_t *t)
{
    return SSL_is_init_finished(t->ssl);
}

const char *ks_tls_error(const ks_tls_conn_t *t)
{
    return t->error;
}
