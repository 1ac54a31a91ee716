/*
 * The console's record of scheduling attempts (/debug/pods/NS/NAME): the
 * last KS_ATTEMPTS_PER_POD attempts of each of at most KS_ATTEMPTS_PODS
 * pods, in one table allocated once (ks_attempts_new). A pod seen for the
 * first time takes the slot used the longest ago (first in, first out);
 * its attempts then go round its own ring. Recording an attempt is one
 * hash lookup and a copy of at most KS_ATTEMPT_MSG bytes: O(1), no
 * allocation except the pod's key when it takes a slot.
 *
 * Also a latency histogram of every attempt (log2 buckets from 1 us) that
 * the rates sampler (rates.h) reads once a second.
 *
 * Loop thread only; names (node, profile) must be interned strings (they
 * are kept as pointers).
 */
#ifndef KS_SERVER_ATTEMPTS_H
#define KS_SERVER_ATTEMPTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/strmap.h"

#define KS_ATTEMPTS_PODS 2048
#define KS_ATTEMPTS_PER_POD 4
#define KS_ATTEMPT_MSG 160
/* PreFilter, Filter, PostFilter, PreScore, Score. */
#define KS_ATTEMPT_EPS 5
#define KS_ATTEMPT_LAT_BUCKETS 32
/* Score plugins whose scores of the chosen node are kept. */
#define KS_ATTEMPT_SCORES 12

enum ks_attempt_result {
    KS_ATTEMPT_SELECTED = 0, /* a node was chosen; binding under way */
    KS_ATTEMPT_BOUND,        /* ... and bound */
    KS_ATTEMPT_UNSCHEDULABLE,
    KS_ATTEMPT_ERROR,
    KS_ATTEMPT_BIND_FAILED /* chosen, then Reserve/Permit/binding failed */
};

typedef struct ks_attempt {
    double unix_time;   /* when the cycle ended */
    float seconds;      /* the scheduling cycle */
    float bind_seconds; /* selection to binding's end; 0 until then */
    float ep_seconds[KS_ATTEMPT_EPS]; /* < 0: not run */
    uint8_t result;     /* enum ks_attempt_result */
    uint64_t generation;
    const char *node;    /* interned, NULL: none */
    const char *nominated;
    const char *profile; /* interned */
    uint32_t n_nodes, n_feasible;
    /* The chosen node's score (has_scores): its total, the best total of
     * the other feasible nodes (has_runner_up), and each Score plugin's
     * weighted score in the profile's order (INT32_MIN: skipped). */
    uint8_t has_scores, has_runner_up, n_scores;
    int64_t total, runner_up;
    int32_t scores[KS_ATTEMPT_SCORES];
    char message[KS_ATTEMPT_MSG]; /* FitError or error, cut to fit */
} ks_attempt_t;

typedef struct ks_attempt_pod {
    char *key; /* "ns/name", malloc'd; NULL: slot free */
    uint64_t total;  /* attempts recorded for this pod */
    ks_attempt_t ring[KS_ATTEMPTS_PER_POD];
} ks_attempt_pod_t;

typedef struct ks_attempts {
    ks_attempt_pod_t *pods; /* KS_ATTEMPTS_PODS */
    size_t next;            /* the slot a new pod takes */
    ks_strmap_t index;      /* key -> slot */
    uint64_t lat[KS_ATTEMPT_LAT_BUCKETS]; /* attempts by log2(us) */
    /* the cycle under way: extension point times seen so far */
    float ep_scratch[KS_ATTEMPT_EPS];
} ks_attempts_t;

/* NULL on ENOMEM. Frees with ks_attempts_free (NULL is fine). */
ks_attempts_t *ks_attempts_new(void);
void ks_attempts_free(ks_attempts_t *a);
/* The index of ext point ep (config.h's ks_ext_point_t) in ep_seconds,
 * or -1 when the table does not keep it. */
int ks_attempts_ep_slot(int ep);
/* An extension point ran in the cycle under way. */
void ks_attempts_note_ep(ks_attempts_t *a, int ep, double seconds);
/* A cycle ended: a new attempt for pod `key` ("ns/name") from the
 * scratch times; returns it (valid until the next record), or NULL on
 * ENOMEM (nothing recorded). message may be NULL. */
ks_attempt_t *ks_attempts_record(ks_attempts_t *a, const char *key,
                                 double unix_time, double seconds,
                                 int result, uint64_t generation,
                                 const char *node, const char *nominated,
                                 const char *profile, uint32_t n_nodes,
                                 uint32_t n_feasible, const char *message);
/* The pod's latest attempt, or NULL. */
ks_attempt_t *ks_attempts_last(ks_attempts_t *a, const char *key);
/* The pod's attempts, oldest first, into out (at most
 * KS_ATTEMPTS_PER_POD); returns how many, and the pod's total in *total. */
size_t ks_attempts_get(const ks_attempts_t *a, const char *key,
                       const ks_attempt_t **out, uint64_t *total);
/* "selected", "bound", "unschedulable", "error", "bindFailed". */
const char *ks_attempt_result_name(int result);
/* The quantile q (0..1) of a latency histogram (delta of two readings of
 * lat[]), in seconds: the upper edge of its bucket; 0 when empty. */
double ks_attempts_quantile(const uint64_t *lat, double q);

#endif
