/* Prometheus metrics registry and text exposition. */
#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

typedef struct series {
    char *values[KS_METRIC_MAX_LABELS];
    double value;        /* counter / gauge */
    double sum;          /* histogram */
    unsigned long long count;
    unsigned long long *buckets; /* histogram: per bound, not cumulative */
    struct series *next;
} series_t;

struct ks_metric {
    ks_metric_type_t type;
    const char *name;
    const char *help;
    const char *labels[KS_METRIC_MAX_LABELS];
    size_t n_labels;
    double *bounds;
    size_t n_bounds;
    series_t *head, *tail;
    struct ks_metric *next;
};

struct ks_metrics {
    ks_metric_t *head, *tail;
};

ks_metrics_t *ks_metrics_new(void)
{
    return calloc(1, sizeof(ks_metrics_t));
}

static void series_free(series_t *s)
{
    size_t i;
    for (i = 0; i < KS_METRIC_MAX_LABELS; i++)
        free(s->values[i]);
    free(s->buckets);
    free(s);
}

void ks_metric_clear(ks_metric_t *m)
{
    series_t *s, *next;
    for (s = m->head; s; s = next) {
        next = s->next;
        series_free(s);
    }
    m->head = m->tail = NULL;
}

void ks_metrics_free(ks_metrics_t *r)
{
    ks_metric_t *m, *next;
    if (r == NULL)
        return;
    for (m = r->head; m; m = next) {
        next = m->next;
        ks_metric_clear(m);
        free(m->bounds);
        free(m);
    }
    free(r);
}

ks_metric_t *ks_metrics_add(ks_metrics_t *r, ks_metric_type_t type,
                            const char *name, const char *help,
                            const char *const *labels, const double *bounds,
                            size_t n_bounds)
{
    ks_metric_t *m = calloc(1, sizeof *m);
    size_t i;
    if (m == NULL)
        return NULL;
    m->type = type;
    m->name = name;
    m->help = help;
    for (i = 0; labels && labels[i]; i++) {
        if (i == KS_METRIC_MAX_LABELS) {
            free(m);
            return NULL;
        }
        m->labels[i] = labels[i];
    }
    m->n_labels = i;
    if (type == KS_METRIC_HISTOGRAM && n_bounds > 0) {
        m->bounds = malloc(n_bounds * sizeof *m->bounds);
        if (m->bounds == NULL) {
            free(m);
            return NULL;
        }
        memcpy(m->bounds, bounds, n_bounds * sizeof *m->bounds);
        m->n_bounds = n_bounds;
    }
    if (r->tail)
        r->tail->next = m;
    else
        r->head = m;
    r->tail = m;
    return m;
}

/* Find the series for the label values in `ap`; create it when `create`. */
static series_t *series_get(ks_metric_t *m, va_list ap, int create)
{
    const char *vals[KS_METRIC_MAX_LABELS];
    series_t *s;
    size_t i;
    for (i = 0; i < m->n_labels; i++) {
        vals[i] = va_arg(ap, const char *);
        if (vals[i] == NULL)
            vals[i] = "";
    }
    for (s = m->head; s; s = s->next) {
        for (i = 0; i < m->n_labels; i++)
            if (strcmp(s->values[i], vals[i]) != 0)
                break;
        if (i == m->n_labels)
            return s;
    }
    if (!create)
        return NULL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    for (i = 0; i < m->n_labels; i++) {
        s->values[i] = strdup(vals[i]);
        if (s->values[i] == NULL) {
            series_free(s);
            return NULL;
        }
    }
    if (m->type == KS_METRIC_HISTOGRAM && m->n_bounds > 0) {
        s->buckets = calloc(m->n_bounds, sizeof *s->buckets);
        if (s->buckets == NULL) {
            series_free(s);
            return NULL;
        }
    }
    if (m->tail)
        m->tail->next = s;
    else
        m->head = s;
    m->tail = s;
    return s;
}

void ks_metric_add(ks_metric_t *m, double v, ...)
{
    va_list ap;
    series_t *s;
    if (m == NULL || m->type == KS_METRIC_HISTOGRAM)
        return;
    va_start(ap, v);
    s = series_get(m, ap, 1);
    va_end(ap);
    if (s && (m->type == KS_METRIC_GAUGE || v >= 0))
        s->value += v;
}

void ks_metric_set(ks_metric_t *m, double v, ...)
{
    va_list ap;
    series_t *s;
    if (m == NULL || m->type != KS_METRIC_GAUGE)
        return;
    va_start(ap, v);
    s = series_get(m, ap, 1);
    va_end(ap);
    if (s)
        s->value = v;
}

void ks_metric_observe(ks_metric_t *m, double v, ...)
{
    va_list ap;
    series_t *s;
    size_t i;
    if (m == NULL || m->type != KS_METRIC_HISTOGRAM)
        return;
    va_start(ap, v);
    s = series_get(m, ap, 1);
    va_end(ap);
    if (s == NULL)
        return;
    s->count++;
    s->sum += v;
    for (i = 0; i < m->n_bounds; i++)
        if (v <= m->bounds[i]) {
            s->buckets[i]++;
            break;
        }
}

void ks_metric_observe_many(ks_metric_t *m, const unsigned long long *counts,
                            unsigned long long count, double sum, ...)
{
    va_list ap;
    series_t *s;
    size_t i;
    if (m == NULL || m->type != KS_METRIC_HISTOGRAM || count == 0)
        return;
    va_start(ap, sum);
    s = series_get(m, ap, 1);
    va_end(ap);
    if (s == NULL)
        return;
    s->count += count;
    s->sum += sum;
    for (i = 0; i < m->n_bounds; i++)
        s->buckets[i] += counts[i];
}

const double *ks_metric_bounds(const ks_metric_t *m, size_t *n)
{
    *n = m ? m->n_bounds : 0;
    return m ? m->bounds : NULL;
}

double ks_metric_value(const ks_metric_t *m, ...)
{
    va_list ap;
    series_t *s;
    if (m == NULL)
        return 0;
    va_start(ap, m);
    s = series_get((ks_metric_t *)m, ap, 0);
    va_end(ap);
    if (s == NULL)
        return 0;
    return m->type == KS_METRIC_HISTOGRAM ? (double)s->count : s->value;
}

void ks_metrics_exponential_buckets(double start, double factor, size_t n,
                                    double *out)
{
    size_t i;
    for (i = 0; i < n; i++) {
        out[i] = start;
        start *= factor;
    }
}

void ks_metrics_format_double(char *buf, size_t len, double v)
{
    char e[40];
    int prec, exp;
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (isnan(v)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (v == 0) {
        snprintf(buf, len, "0");
        return;
    }
    /* The fewest significant digits that read back as v. */
    for (prec = 1; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    exp = atoi(strchr(e, 'e') + 1);
    /* Go: %e when the exponent is below -4 or at least 6 (shortest). */
    if (exp < -4 || exp >= 6)
        snprintf(buf, len, "%s", e);
    else
        snprintf(buf, len, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0,
                 v);
}

static void fmt_double(char *buf, size_t len, double v)
{
    ks_metrics_format_double(buf, len, v);
}

static void put_label_value(ks_buf_t *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            ks_buf_puts(b, "\\\\");
        else if (*v == '"')
            ks_buf_puts(b, "\\\"");
        else if (*v == '\n')
            ks_buf_puts(b, "\\n");
        else
            ks_buf_append(b, v, 1);
    }
}

/* {a="x",b="y"[,le="..."]} or nothing when there are no labels. */
static void put_labels(ks_buf_t *b, const ks_metric_t *m, const series_t *s,
                       const char *le)
{
    size_t i;
    if (m->n_labels == 0 && le == NULL)
        return;
    ks_buf_puts(b, "{");
    for (i = 0; i < m->n_labels; i++) {
        ks_buf_printf(b, "%s%s=\"", i ? "," : "", m->labels[i]);
        put_label_value(b, s->values[i]);
        ks_buf_puts(b, "\"");
    }
    if (le)
        ks_buf_printf(b, "%sle=\"%s\"", m->n_labels ? "," : "", le);
    ks_buf_puts(b, "}");
}

static void put_help(ks_buf_t *b, const char *help)
{
    for (; *help; help++) {
        if (*help == '\\')
            ks_buf_puts(b, "\\\\");
        else if (*help == '\n')
            ks_buf_puts(b, "\\n");
        else
            ks_buf_append(b, help, 1);
    }
}

char *ks_metrics_render(const ks_metrics_t *r, size_t *len)
{
    static const char *types[] = {"counter", "gauge", "histogram"};
    ks_buf_t b = {0};
    const ks_metric_t *m;
    const series_t *s;
    char num[64];
    size_t i;
    for (m = r->head; m; m = m->next) {
        ks_buf_printf(&b, "# HELP %s ", m->name);
        put_help(&b, m->help);
        ks_buf_printf(&b, "\n# TYPE %s %s\n", m->name, types[m->type]);
        for (s = m->head; s; s = s->next) {
            if (m->type != KS_METRIC_HISTOGRAM) {
                ks_buf_puts(&b, m->name);
                put_labels(&b, m, s, NULL);
                fmt_double(num, sizeof num, s->value);
                ks_buf_printf(&b, " %s\n", num);
                continue;
            }
            {
                unsigned long long cum = 0;
                for (i = 0; i < m->n_bounds; i++) {
                    char le[64];
                    cum += s->buckets[i];
                    fmt_double(le, sizeof le, m->bounds[i]);
                    ks_buf_printf(&b, "%s_bucket", m->name);
                    put_labels(&b, m, s, le);
                    ks_buf_printf(&b, " %llu\n", cum);
                }
                ks_buf_printf(&b, "%s_bucket", m->name);
                put_labels(&b, m, s, "+Inf");
                ks_buf_printf(&b, " %llu\n", s->count);
                ks_buf_printf(&b, "%s_sum", m->name);
                put_labels(&b, m, s, NULL);
                fmt_double(num, sizeof num, s->sum);
                ks_buf_printf(&b, " %s\n", num);
                ks_buf_printf(&b, "%s_count", m->name);
                put_labels(&b, m, s, NULL);
                ks_buf_printf(&b, " %llu\n", s->count);
            }
        }
    }
    return ks_buf_steal(&b, len);
}
