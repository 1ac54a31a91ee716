/*
 * serve's secure serving, as kube-scheduler's secure port: who may call
 * the API and over what.
 *
 * - Delegated authentication and authorization (delegate.h) when
 *   --authentication-kubeconfig or --authorization-kubeconfig is given,
 *   or when --allow-remote is given in cluster mode without --token-file:
 *   each review goes to the API server the flag's kubeconfig names, else
 *   to the other flag's, else to the cluster's own connection (inside a
 *   pod: its service account). A token of --token-file, when there is
 *   one, is still accepted without a review.
 * - HTTPS whenever authentication is delegated: from --tls-cert-file and
 *   --tls-private-key-file, else with a self-signed certificate made at
 *   start (self_signed.h) for the listen address, localhost, 127.0.0.1,
 *   ::1 and the host name; its fingerprint is printed on stderr.
 *
 * Threads: the loop thread, before listening.
 */
#ifndef KS_SERVER_SECURE_H
#define KS_SERVER_SECURE_H

#include "base/error.h"
#include "server.h"

typedef struct ks_server_secure_opts {
    const char *authn_kubeconfig; /* --authentication-kubeconfig, or NULL */
    const char *authz_kubeconfig; /* --authorization-kubeconfig, or NULL */
    int allow_remote;             /* --allow-remote */
    const char *listen;           /* the --listen address, NULL: a socket */
} ks_server_secure_opts_t;

/* Set srv->delegate (and its connections) and srv->tls as above, after
 * ks_server_init and with srv->auth and srv->tls already set from their
 * flags. 0, or a KS_E* code with err: KS_EINVAL when --allow-remote has
 * no authentication at all, or a kubeconfig's or the certificate's
 * error. */
int ks_server_secure(ks_server_t *srv, const ks_server_secure_opts_t *o,
                     ks_error_t *err);

#endif
