/*
 * TLS for serve's HTTP server (--tls-cert-file, --tls-private-key-file),
 * with OpenSSL driven through memory BIOs: the HTTP server reads
 * ciphertext from its libuv stream and feeds it here, takes the plaintext
 * out for its parser, hands its answers here and writes the ciphertext
 * that comes out. No socket is touched, so the HTTP server's deadlines,
 * slots and output bounds apply to TLS connections unchanged (a handshake
 * that does not finish is a request head that does not arrive).
 *
 * The server side only: TLS 1.2 or newer, the certificate chain and key
 * from PEM files (the key must match the certificate). A client that
 * speaks plain HTTP to the port is told so and closed (400, as Go's
 * servers answer it).
 *
 * Ownership: a context is shared by the connections made from it and must
 * outlive them. Threads: a connection on one thread at a time (the loop).
 */
#ifndef KS_SERVER_TLS_H
#define KS_SERVER_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

typedef struct ks_tls_ctx ks_tls_ctx_t;
typedef struct ks_tls_conn ks_tls_conn_t;

/* Load the certificate chain and private key. NULL with err (KS_EINVAL,
 * naming the file and OpenSSL's reason). */
ks_tls_ctx_t *ks_tls_ctx_new(const char *cert_file, const char *key_file,
                             ks_error_t *err);
/* The same from PEM texts in memory (a certificate and its key, e.g.
 * self_signed.h's); the texts are not kept. NULL with err (KS_EINVAL). */
ks_tls_ctx_t *ks_tls_ctx_new_pem(const char *cert_pem, const char *key_pem,
                                 ks_error_t *err);
void ks_tls_ctx_free(ks_tls_ctx_t *ctx);

/* A server connection; NULL on ENOMEM. */
ks_tls_conn_t *ks_tls_conn_new(ks_tls_ctx_t *ctx);
void ks_tls_conn_free(ks_tls_conn_t *t);

enum {
    KS_TLS_OK = 0,
    KS_TLS_CLOSED = -1,     /* the peer sent close_notify */
    KS_TLS_ERROR = -2,      /* a TLS failure (handshake, bad record) */
    KS_TLS_PLAINTEXT = -3   /* the client spoke plain HTTP */
};

/* Feed `len` bytes read from the socket. KS_TLS_OK, or KS_TLS_PLAINTEXT
 * when the very first bytes are not a TLS handshake record. */
int ks_tls_feed(ks_tls_conn_t *t, const char *data, size_t len);
/* Decrypted bytes into buf: > 0 bytes, 0 when no more for now (the
 * handshake may have progressed: take the output), or KS_TLS_CLOSED /
 * KS_TLS_ERROR. */
ssize_t ks_tls_read(ks_tls_conn_t *t, char *buf, size_t cap);
/* Encrypt plaintext for the peer. 0, or KS_TLS_ERROR. */
int ks_tls_write(ks_tls_conn_t *t, const char *data, size_t len);
/* Queue a close_notify alert. */
void ks_tls_close_notify(ks_tls_conn_t *t);
/* Ciphertext waiting to go to the socket: bytes, and take them (up to
 * cap; returns how many). */
size_t ks_tls_out_pending(ks_tls_conn_t *t);
size_t ks_tls_out_take(ks_tls_conn_t *t, char *buf, size_t cap);
/* Has the handshake completed? */
int ks_tls_established(const ks_tls_conn_t *t);
/* The last failure, for a log line ("" when none). */
const char *ks_tls_error(const ks_tls_conn_t *t);

#endif
