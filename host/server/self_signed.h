/*
 * A self-signed serving certificate made at start, as kube-scheduler makes
 * one for its secure port when it is given none: an ECDSA P-256 key and an
 * X.509 v3 certificate for the names a client may use to reach the server
 * (subjectAltName: the DNS names and IP addresses given, which the caller
 * fills with the bind address, localhost, 127.0.0.1, ::1 and the host
 * name), valid from an hour ago for one year, extendedKeyUsage serverAuth,
 * basicConstraints CA:TRUE so that a client can trust it as its own
 * anchor (curl --cacert, Python's cafile, Prometheus' ca_file).
 *
 * Nothing is written to disk: the PEM texts are handed to the TLS context
 * (tls.h). The SHA-256 fingerprint lets an operator pin the certificate.
 *
 * Ownership: the result's strings are malloc'd, freed by
 * ks_self_signed_free. Threads: any (OpenSSL's own locking).
 */
#ifndef KS_SERVER_SELF_SIGNED_H
#define KS_SERVER_SELF_SIGNED_H

#include <stddef.h>

#include "base/error.h"

typedef struct ks_self_signed {
    char *cert_pem;        /* the certificate, PEM */
    char *key_pem;         /* its private key, PEM (PKCS#8) */
    char fingerprint[112]; /* "SHA256 AB:CD:..." (32 hex pairs) */
} ks_self_signed_t;

/* Make a key and a certificate whose subject CN is `cn` and whose
 * subjectAltName lists `names`: each one an IP address (IPv4 or IPv6) or
 * else a DNS name; duplicates and empty strings are skipped. 0, or
 * KS_EINVAL (a name OpenSSL refuses; no names) / KS_ENOMEM with err. */
int ks_self_signed_make(const char *cn, const char *const *names,
                        size_t n_names, ks_self_signed_t *out,
                        ks_error_t *err);
/* Free the strings (the key is wiped first); *s is zeroed. */
void ks_self_signed_free(ks_self_signed_t *s);

#endif
