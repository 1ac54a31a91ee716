/*
 * A small Prometheus metrics registry: counters, gauges and histograms with
 * labels, rendered in the Prometheus text exposition format (version 0.0.4).
 *
 * A family is created once with its name, help text and label names; each
 * distinct tuple of label values is a series, created on first use. Label
 * values are copied. Families are rendered in creation order, series in
 * creation order, each family preceded by its # HELP and # TYPE lines.
 *
 * Ownership: the registry owns its families and series; a ks_metric_t
 * pointer stays valid until ks_metrics_free(). Thread-safety: none; the
 * server uses it from the loop thread only.
 */
#ifndef KS_SERVER_METRICS_H
#define KS_SERVER_METRICS_H

#include <stddef.h>

typedef struct ks_metrics ks_metrics_t;
typedef struct ks_metric ks_metric_t;

typedef enum ks_metric_type {
    KS_METRIC_COUNTER = 0,
    KS_METRIC_GAUGE,
    KS_METRIC_HISTOGRAM
} ks_metric_type_t;

#define KS_METRIC_MAX_LABELS 4

ks_metrics_t *ks_metrics_new(void);
void ks_metrics_free(ks_metrics_t *r);

/* A new family. `labels` is NULL-terminated (NULL or {NULL}: no labels; at
 * most KS_METRIC_MAX_LABELS). For histograms, `bounds` lists the upper
 * bounds in increasing order (+Inf is implicit); copied. Returns NULL on
 * ENOMEM or bad arguments. Name and help must be string literals or
 * otherwise outlive the registry. */
ks_metric_t *ks_metrics_add(ks_metrics_t *r, ks_metric_type_t type,
                            const char *name, const char *help,
                            const char *const *labels, const double *bounds,
                            size_t n_bounds);

/* Counters: add v (>= 0). Gauges: add v (any sign). The variadic arguments
 * are the label values (const char *), one per label name, in order. */
void ks_metric_add(ks_metric_t *m, double v, ...);
/* Gauges: set the series to v. */
void ks_metric_set(ks_metric_t *m, double v, ...);
/* Histograms: record one observation. */
void ks_metric_observe(ks_metric_t *m, double v, ...);
/* Histograms: merge observations counted elsewhere into one series.
 * counts[i] is the number of observations in (bounds[i-1], bounds[i]] for
 * each of the family's bounds (not cumulative; those above the last bound
 * appear only in `count`), `count` and `sum` their total number and sum. */
void ks_metric_observe_many(ks_metric_t *m, const unsigned long long *counts,
                            unsigned long long count, double sum, ...);
/* A histogram's upper bounds (without +Inf) and their number in *n; the
 * array lives as long as the family. */
const double *ks_metric_bounds(const ks_metric_t *m, size_t *n);
/* Drop every series of a family (gauges recomputed at scrape time). */
void ks_metric_clear(ks_metric_t *m);
/* The current value of a counter/gauge series, or the count of a
 * histogram series; 0 when the series does not exist. */
double ks_metric_value(const ks_metric_t *m, ...);

/* Render every family. Returns a malloc'd NUL-terminated text (the caller
 * frees it) and its length in *len; NULL on ENOMEM. */
char *ks_metrics_render(const ks_metrics_t *r, size_t *len);

/* v as client_golang writes it (Go's strconv 'g' with the shortest
 * precision that reads back as v: exponent form below 1e-4 and from 1e6
 * on, "+Inf", "-Inf", "NaN") into buf (len bytes; 32 are enough). */
void ks_metrics_format_double(char *buf, size_t len, double v);

/* n bounds: start, start*factor, start*factor^2, ... */
void ks_metrics_exponential_buckets(double start, double factor, size_t n,
                                    double *out);

#endif
