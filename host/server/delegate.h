/*
 * Delegated authentication and authorization of serve's HTTP API, as
 * kube-scheduler does it on its secure port (--authentication-kubeconfig,
 * --authorization-kubeconfig, or the cluster's own connection):
 *
 * - the request's bearer token is sent to the API server as a TokenReview
 *   (authentication.k8s.io/v1); an unauthenticated token, a missing one,
 *   or a review that fails is 401;
 * - the user it names is checked with a SubjectAccessReview
 *   (authorization.k8s.io/v1) for the request's path as a non-resource
 *   URL and its lower-cased method as the verb (GET /metrics: path
 *   "/metrics", verb "get"); not allowed is 403 with upstream's message
 *   (User "NAME" cannot get path "/metrics"), a review that fails is 500.
 *   ksched's views of API objects (/api/v1/nodes[/N], /api/v1/pods,
 *   /api/v1/namespaces/NS/pods[/P], /api/v1/bindings) are reviewed as the
 *   same request to the API server, with resource attributes (GET of a
 *   collection is list, of one object get; POST create, PUT update,
 *   DELETE delete; the bindings stream is watch on pods): the built-in
 *   system:discovery role lets every user get /api and below as a path,
 *   which must not open the objects ksched holds to everyone.
 *
 * Answers are cached as upstream caches them: a token's review for 10 s
 * (keyed by the token's SHA-256, never the token itself), an allowed
 * access for 10 s and a denied one for 30 s. Failed reviews are not
 * cached. Calls go through the Kubernetes API client (kube/client.h) on
 * the loop, at most 10 s each, with their own rate limit (qps 200, burst
 * 400, as upstream's delegating clients).
 *
 * Ownership: the connections are the caller's and must outlive the
 * delegate (until ks_delegate_free). Threads: the loop thread only.
 */
#ifndef KS_SERVER_DELEGATE_H
#define KS_SERVER_DELEGATE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/error.h"
#include "kube/kubeconfig.h"

typedef struct ks_delegate ks_delegate_t;
typedef struct ks_delegate_req ks_delegate_req_t;

#define KS_DELEGATE_AUTHN_TTL_MS 10000
#define KS_DELEGATE_ALLOW_TTL_MS 10000
#define KS_DELEGATE_DENY_TTL_MS 30000
#define KS_DELEGATE_TIMEOUT_MS 10000

typedef struct ks_delegate_opts {
    ks_kube_conn_t *authn; /* TokenReviews go here */
    ks_kube_conn_t *authz; /* SubjectAccessReviews (may be the same) */
    /* 0: the defaults above */
    int64_t authn_ttl_ms, allow_ttl_ms, deny_ttl_ms;
    long timeout_ms;
} ks_delegate_opts_t;

/* The verdict on one request. */
typedef struct ks_delegate_result {
    int status;        /* 200 allowed, 401, 403, 500, 503 (closing) */
    char user[256];    /* the authenticated user, "" when none */
    char message[600]; /* why, for anything but 200 */
} ks_delegate_result_t;

typedef void (*ks_delegate_cb)(void *ud, const ks_delegate_result_t *r);

/* NULL with err (KS_ENOMEM, or the API client's error). */
ks_delegate_t *ks_delegate_new(uv_loop_t *loop, const ks_delegate_opts_t *o,
                               ks_error_t *err);

/* Decide whether the request with this Authorization header value (NULL
 * when absent) may `method` (as the HTTP server names it: "GET", ...)
 * `path`. Returns 0 when decided at once (*res filled: no token, or cached
 * answers), or 1 when it asked the API server: cb(ud, result) then runs
 * later, exactly once, unless ks_delegate_cancel(*pending) comes first. */
int ks_delegate_check(ks_delegate_t *d, const char *authorization,
                      const char *method, const char *path,
                      ks_delegate_result_t *res, ks_delegate_cb cb, void *ud,
                      ks_delegate_req_t **pending);
/* No callback of the request runs after this. */
void ks_delegate_cancel(ks_delegate_req_t *r);

/* Stop: every pending request's callback runs now with 503, and the API
 * clients close (the loop must run to finish closing them). */
void ks_delegate_close(ks_delegate_t *d);
/* Free it (after ks_delegate_close and the loop's run). NULL is fine. */
void ks_delegate_free(ks_delegate_t *d);

/* Cached answers held, for tests and diagnostics. */
size_t ks_delegate_cached(const ks_delegate_t *d);

#endif
