/*
 * The authentication filter's series kube-scheduler's secure port exposes
 * (k8s.io/apiserver's authentication metrics), for requests that need
 * authentication (everything but /healthz, /livez and /readyz) when serve
 * authenticates them (--token-file or delegated):
 *
 *   authentication_attempts{result}            counter
 *   authentication_duration_seconds{result}    histogram, 0.001 s x 2^k,
 *                                              15 buckets
 *   authenticated_user_requests{username}      counter
 *
 * result is "success" (a token of the file, or a TokenReview that knew
 * the user, whatever authorization then said), "failure" (no or an
 * unknown token: 401) or "error" (the review could not be made).
 * username is compressed as the API server's filter does: a few internal
 * identities kept as they are, "email_id" for a name with an '@',
 * "other" for the rest (a token file's users included).
 *
 * The families live in the server's registry. Ownership: the registry
 * owns the families. Loop thread only.
 */
#ifndef KS_SERVER_METRICS_AUTHN_H
#define KS_SERVER_METRICS_AUTHN_H

#include "metrics.h"

typedef struct ks_authn_metrics {
    ks_metric_t *attempts, *duration, *user_requests;
} ks_authn_metrics_t;

/* Register the families in r: 0, or -1 on ENOMEM. */
int ks_authn_metrics_init(ks_authn_metrics_t *m, ks_metrics_t *r);
/* One authentication: its result ("success", "failure", "error"), how
 * long it took, and on success the user's name (NULL or "": unknown). */
void ks_authn_metrics_record(ks_authn_metrics_t *m, const char *result,
                             double seconds, const char *user);

#endif
