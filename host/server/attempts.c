/* The console's bounded table of recent attempts (attempts.h). */
#include "attempts.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"

ks_attempts_t *ks_attempts_new(void)
{
    ks_attempts_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->pods = calloc(KS_ATTEMPTS_PODS, sizeof *a->pods);
    if (a->pods == NULL || ks_strmap_reserve(&a->index, KS_ATTEMPTS_PODS)) {
        ks_attempts_free(a);
        return NULL;
    }
    for (size_t i = 0; i < KS_ATTEMPT_EPS; i++)
        a->ep_scratch[i] = -1;
    return a;
}

void ks_attempts_free(ks_attempts_t *a)
{
    size_t i;
    if (a == NULL)
        return;
    for (i = 0; a->pods && i < KS_ATTEMPTS_PODS; i++)
        free(a->pods[i].key);
    free(a->pods);
    ks_strmap_destroy(&a->index);
    free(a);
}

int ks_attempts_ep_slot(int ep)
{
    switch (ep) {
    case KS_EP_PRE_FILTER:
        return 0;
    case KS_EP_FILTER:
        return 1;
    case KS_EP_POST_FILTER:
        return 2;
    case KS_EP_PRE_SCORE:
        return 3;
    case KS_EP_SCORE:
        return 4;
    default:
        return -1;
    }
}

void ks_attempts_note_ep(ks_attempts_t *a, int ep, double seconds)
{
    int k = ks_attempts_ep_slot(ep);
    if (k < 0)
        return;
    if (a->ep_scratch[k] < 0)
        a->ep_scratch[k] = 0;
    a->ep_scratch[k] += (float)seconds;
}

static unsigned lat_bucket(double seconds)
{
    double us = seconds * 1e6;
    unsigned b = 0;
    while (us >= 2 && b + 1 < KS_ATTEMPT_LAT_BUCKETS) {
        us /= 2;
        b++;
    }
    return b;
}

double ks_attempts_quantile(const uint64_t *lat, double q)
{
    uint64_t total = 0, run = 0, want;
    unsigned b;
    for (b = 0; b < KS_ATTEMPT_LAT_BUCKETS; b++)
        total += lat[b];
    if (total == 0)
        return 0;
    want = (uint64_t)(q * (double)total + 0.5);
    if (want < 1)
        want = 1;
    for (b = 0; b < KS_ATTEMPT_LAT_BUCKETS; b++) {
        run += lat[b];
        if (run >= want)
            break;
    }
    if (b == KS_ATTEMPT_LAT_BUCKETS)
        b--;
    /* bucket b holds [2^b, 2^(b+1)) microseconds (bucket 0 also below) */
    return (double)(2ull << b) * 1e-6;
}

static ks_attempt_pod_t *slot_for(ks_attempts_t *a, const char *key)
{
    ks_attempt_pod_t *p = ks_strmap_get(&a->index, key);
    char *copy;
    if (p)
        return p;
    if ((copy = strdup(key)) == NULL)
        return NULL;
    p = &a->pods[a->next];
    if (p->key) {
        ks_strmap_del(&a->index, p->key);
        free(p->key);
    }
    memset(p, 0, sizeof *p);
    p->key = copy;
    /* Reserved for KS_ATTEMPTS_PODS keys: never grows, never fails. */
    if (ks_strmap_put(&a->index, p->key, p) != 0) {
        free(p->key);
        p->key = NULL;
        return NULL;
    }
    a->next = (a->next + 1) % KS_ATTEMPTS_PODS;
    return p;
}

ks_attempt_t *ks_attempts_record(ks_attempts_t *a, const char *key,
                                 double unix_time, double seconds,
                                 int result, uint64_t generation,
                                 const char *node, const char *nominated,
                                 const char *profile, uint32_t n_nodes,
                                 uint32_t n_feasible, const char *message)
{
    ks_attempt_pod_t *p = slot_for(a, key);
    ks_attempt_t *t;
    size_t i;
    a->lat[lat_bucket(seconds)]++;
    if (p == NULL) {
        for (i = 0; i < KS_ATTEMPT_EPS; i++)
            a->ep_scratch[i] = -1;
        return NULL;
    }
    t = &p->ring[p->total % KS_ATTEMPTS_PER_POD];
    p->total++;
    t->unix_time = unix_time;
    t->seconds = (float)seconds;
    t->bind_seconds = 0;
    for (i = 0; i < KS_ATTEMPT_EPS; i++) {
        t->ep_seconds[i] = a->ep_scratch[i];
        a->ep_scratch[i] = -1;
    }
    t->result = (uint8_t)result;
    t->generation = generation;
    t->node = node;
    t->nominated = nominated;
    t->profile = profile;
    t->n_nodes = n_nodes;
    t->n_feasible = n_feasible;
    t->has_scores = t->has_runner_up = t->n_scores = 0;
    t->message[0] = '\0';
    if (message) {
        size_t n = strlen(message);
        if (n >= KS_ATTEMPT_MSG) {
            /* cut on a UTF-8 boundary, "..." after */
            n = KS_ATTEMPT_MSG - 4;
            while (n > 0 && ((unsigned char)message[n] & 0xC0) == 0x80)
                n--;
            memcpy(t->message, message, n);
            memcpy(t->message + n, "...", 4);
        } else {
            memcpy(t->message, message, n + 1);
        }
    }
    return t;
}

ks_attempt_t *ks_attempts_last(ks_attempts_t *a, const char *key)
{
    ks_attempt_pod_t *p = ks_strmap_get(&a->index, key);
    if (p == NULL || p->total == 0)
        return NULL;
    return &p->ring[(p->total - 1) % KS_ATTEMPTS_PER_POD];
}

size_t ks_attempts_get(const ks_attempts_t *a, const char *key,
                       const ks_attempt_t **out, uint64_t *total)
{
    const ks_attempt_pod_t *p = ks_strmap_get(&a->index, key);
    uint64_t first, i;
    size_t n = 0;
    *total = 0;
    if (p == NULL)
        return 0;
    *total = p->total;
    first = p->total > KS_ATTEMPTS_PER_POD ? p->total - KS_ATTEMPTS_PER_POD
                                           : 0;
    for (i = first; i < p->total; i++)
        out[n++] = &p->ring[i % KS_ATTEMPTS_PER_POD];
    return n;
}

const char *ks_attempt_result_name(int result)
{
    switch (result) {
    case KS_ATTEMPT_SELECTED:
        return "selected";
    case KS_ATTEMPT_BOUND:
        return "bound";
    case KS_ATTEMPT_UNSCHEDULABLE:
        return "unschedulable";
    case KS_ATTEMPT_ERROR:
        return "error";
    default:
        return "bindFailed";
    }
}
