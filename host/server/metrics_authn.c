/* The authentication filter's series (metrics_authn.h). */
#include "metrics_authn.h"

#include <string.h>

int ks_authn_metrics_init(ks_authn_metrics_t *m, ks_metrics_t *r)
{
    static const char *const l_result[] = {"result", NULL};
    static const char *const l_user[] = {"username", NULL};
    double b[15];
    ks_metrics_exponential_buckets(0.001, 2, 15, b);
    m->user_requests = ks_metrics_add(
        r, KS_METRIC_COUNTER, "authenticated_user_requests",
        "[ALPHA] Counter of authenticated requests broken out by username.",
        l_user, NULL, 0);
    m->attempts = ks_metrics_add(r, KS_METRIC_COUNTER,
                                 "authentication_attempts",
                                 "[ALPHA] Counter of authenticated attempts.",
                                 l_result, NULL, 0);
    m->duration = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "authentication_duration_seconds",
        "[ALPHA] Authentication duration in seconds broken out by result.",
        l_result, b, 15);
    return m->user_requests && m->attempts && m->duration ? 0 : -1;
}

/* The API server's compressUsername. */
static const char *compress_username(const char *user)
{
    static const char *const kept[] = {
        "admin", "client", "kube_proxy", "kubelet",
        "system:serviceaccount:kube-system:default"};
    size_t i;
    for (i = 0; i < sizeof kept / sizeof kept[0]; i++)
        if (strcmp(user, kept[i]) == 0)
            return kept[i];
    if (strchr(user, '@') != NULL)
        return "email_id";
    return "other";
}

void ks_authn_metrics_record(ks_authn_metrics_t *m, const char *result,
                             double seconds, const char *user)
{
    if (m == NULL || m->attempts == NULL)
        return;
    ks_metric_add(m->attempts, 1, result);
    ks_metric_observe(m->duration, seconds, result);
    if (strcmp(result, "success") == 0)
        ks_metric_add(m->user_requests, 1,
                      compress_username(user ? user : ""));
}
