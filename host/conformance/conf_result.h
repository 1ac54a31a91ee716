/*
 * One scheduling decision in the shape of a conformance expected file:
 * what the expected file says for a pod, and what ksched decided for it.
 *
 * Ownership: every string and array is malloc'd and owned by the record;
 * ks_conf_result_clear / ks_conf_results_free release them.
 * Thread-safety: plain data; one thread at a time.
 */
#ifndef KS_CONF_RESULT_H
#define KS_CONF_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A node name with a score. */
typedef struct ks_conf_score {
    char *node;
    int64_t score;
} ks_conf_score_t;

/* A node name with its filter failure reasons (a multiset). */
typedef struct ks_conf_reasons {
    char *node;
    char **reasons;
    size_t n_reasons;
} ks_conf_reasons_t;

/* One Score plugin's weighted, normalised scores. */
typedef struct ks_conf_plugin_scores {
    char *plugin;
    ks_conf_score_t *scores;
    size_t n_scores;
} ks_conf_plugin_scores_t;

typedef struct ks_conf_result {
    char *pod;     /* "namespace/name" */
    uint32_t line; /* line of the entry in an expected file; 0 otherwise */
    char **feasible;
    size_t n_feasible;
    ks_conf_reasons_t *rejected;
    size_t n_rejected;
    ks_conf_score_t *scores;
    size_t n_scores;
    ks_conf_plugin_scores_t *plugin_scores;
    size_t n_plugin_scores;
    char *selected;      /* NULL: no node selected */
    char *unschedulable; /* the FitError message, NULL when selected */
    char *nominated;     /* PostFilter's nominated node or NULL */
    char **victims;      /* "ns/name" of the pods preemption deleted */
    size_t n_victims;
    char *error;         /* ksched only: an Error status or a runner failure */
} ks_conf_result_t;

/* The results of one scenario, one entry per pod of `schedule`. */
typedef struct ks_conf_results {
    char *name;
    ks_conf_result_t *items;
    size_t n;
} ks_conf_results_t;

void ks_conf_result_clear(ks_conf_result_t *r);
/* Frees the items and the name (not `rs` itself). */
void ks_conf_results_free(ks_conf_results_t *rs);
/* Append a zeroed entry; NULL on ENOMEM. The pointer is valid until the
 * next append. */
ks_conf_result_t *ks_conf_results_append(ks_conf_results_t *rs);

/* Sort every list into canonical order: feasible, victims and each reason
 * list by string; rejected, scores and plugin scores by node; plugins by
 * name. Comparison and printing expect normalised records. */
void ks_conf_result_normalise(ks_conf_result_t *r);

/* Write rs in the expected-file format, each line prefixed by `indent`. */
void ks_conf_results_write(FILE *out, const ks_conf_results_t *rs,
                           const char *indent);

/* Helpers for building records: append a string (copied) to a list.
 * Return 0 or -1 on ENOMEM. */
int ks_conf_strv_push(char ***v, size_t *n, const char *s);

#endif
