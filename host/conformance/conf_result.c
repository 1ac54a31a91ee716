/* Conformance result records: lifetime, canonical order, printing. */
#include "conf_result.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void strv_free(char **v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void scores_free(ks_conf_score_t *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(s[i].node);
    free(s);
}

void ks_conf_result_clear(ks_conf_result_t *r)
{
    size_t i;
    if (r == NULL)
        return;
    free(r->pod);
    strv_free(r->feasible, r->n_feasible);
    for (i = 0; i < r->n_rejected; i++) {
        free(r->rejected[i].node);
        strv_free(r->rejected[i].reasons, r->rejected[i].n_reasons);
    }
    free(r->rejected);
    scores_free(r->scores, r->n_scores);
    for (i = 0; i < r->n_plugin_scores; i++) {
        free(r->plugin_scores[i].plugin);
        scores_free(r->plugin_scores[i].scores, r->plugin_scores[i].n_scores);
    }
    free(r->plugin_scores);
    free(r->selected);
    free(r->unschedulable);
    free(r->nominated);
    strv_free(r->victims, r->n_victims);
    free(r->error);
    memset(r, 0, sizeof *r);
}

void ks_conf_results_free(ks_conf_results_t *rs)
{
    size_t i;
    if (rs == NULL)
        return;
    for (i = 0; i < rs->n; i++)
        ks_conf_result_clear(&rs->items[i]);
    free(rs->items);
    free(rs->name);
    memset(rs, 0, sizeof *rs);
}

ks_conf_result_t *ks_conf_results_append(ks_conf_results_t *rs)
{
    ks_conf_result_t *items =
        realloc(rs->items, (rs->n + 1) * sizeof *rs->items);
    if (items == NULL)
        return NULL;
    rs->items = items;
    memset(&items[rs->n], 0, sizeof items[rs->n]);
    return &items[rs->n++];
}

int ks_conf_strv_push(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof **v);
    char *copy;
    if (nv == NULL)
        return -1;
    *v = nv;
    if ((copy = strdup(s)) == NULL)
        return -1;
    nv[(*n)++] = copy;
    return 0;
}

/* --- canonical order ------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_score(const void *a, const void *b)
{
    return strcmp(((const ks_conf_score_t *)a)->node,
                  ((const ks_conf_score_t *)b)->node);
}

static int cmp_reasons(const void *a, const void *b)
{
    return strcmp(((const ks_conf_reasons_t *)a)->node,
                  ((const ks_conf_reasons_t *)b)->node);
}

static int cmp_plugin(const void *a, const void *b)
{
    return strcmp(((const ks_conf_plugin_scores_t *)a)->plugin,
                  ((const ks_conf_plugin_scores_t *)b)->plugin);
}

void ks_conf_result_normalise(ks_conf_result_t *r)
{
    size_t i;
    if (r->n_feasible > 1)
        qsort(r->feasible, r->n_feasible, sizeof *r->feasible, cmp_str);
    if (r->n_victims > 1)
        qsort(r->victims, r->n_victims, sizeof *r->victims, cmp_str);
    for (i = 0; i < r->n_rejected; i++)
        if (r->rejected[i].n_reasons > 1)
            qsort(r->rejected[i].reasons, r->rejected[i].n_reasons,
                  sizeof *r->rejected[i].reasons, cmp_str);
    if (r->n_rejected > 1)
        qsort(r->rejected, r->n_rejected, sizeof *r->rejected, cmp_reasons);
    if (r->n_scores > 1)
        qsort(r->scores, r->n_scores, sizeof *r->scores, cmp_score);
    for (i = 0; i < r->n_plugin_scores; i++)
        if (r->plugin_scores[i].n_scores > 1)
            qsort(r->plugin_scores[i].scores, r->plugin_scores[i].n_scores,
                  sizeof *r->plugin_scores[i].scores, cmp_score);
    if (r->n_plugin_scores > 1)
        qsort(r->plugin_scores, r->n_plugin_scores, sizeof *r->plugin_scores,
              cmp_plugin);
}

/* --- printing -------------------------------------------------------------- */

static void put_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void put_list(FILE *out, char *const *v, size_t n, int quoted)
{
    size_t i;
    fputc('[', out);
    for (i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        if (quoted)
            put_quoted(out, v[i]);
        else
            fputs(v[i], out);
    }
    fputc(']', out);
}

static void put_scores(FILE *out, const ks_conf_score_t *s, size_t n)
{
    size_t i;
    fputc('{', out);
    for (i = 0; i < n; i++)
        fprintf(out, "%s%s: %" PRId64, i ? ", " : "", s[i].node, s[i].score);
    fputc('}', out);
}

void ks_conf_results_write(FILE *out, const ks_conf_results_t *rs,
                           const char *indent)
{
    size_t i, j;
    fprintf(out, "%sname: %s\n%sresults:\n", indent,
            rs->name ? rs->name : "", indent);
    for (i = 0; i < rs->n; i++) {
        const ks_conf_result_t *r = &rs->items[i];
        fprintf(out, "%s- pod: %s\n%s  feasible: ", indent,
                r->pod ? r->pod : "", indent);
        put_list(out, r->feasible, r->n_feasible, 0);
        fprintf(out, "\n%s  rejected: {", indent);
        for (j = 0; j < r->n_rejected; j++) {
            fprintf(out, "%s%s: ", j ? ", " : "", r->rejected[j].node);
            put_list(out, r->rejected[j].reasons, r->rejected[j].n_reasons, 1);
        }
        fputs("}\n", out);
        if (r->n_scores > 0) {
            fprintf(out, "%s  scores: ", indent);
            put_scores(out, r->scores, r->n_scores);
            fputc('\n', out);
        }
        if (r->n_plugin_scores > 0) {
            fprintf(out, "%s  plugin_scores:\n", indent);
            for (j = 0; j < r->n_plugin_scores; j++) {
                fprintf(out, "%s    %s: ", indent,
                        r->plugin_scores[j].plugin);
                put_scores(out, r->plugin_scores[j].scores,
                           r->plugin_scores[j].n_scores);
                fputc('\n', out);
            }
        }
        if (r->selected)
            fprintf(out, "%s  selected: %s\n", indent, r->selected);
        if (r->unschedulable) {
            fprintf(out, "%s  unschedulable: ", indent);
            put_quoted(out, r->unschedulable);
            fputc('\n', out);
        }
        if (r->nominated)
            fprintf(out, "%s  nominated: %s\n", indent, r->nominated);
        if (r->n_victims > 0) {
            fprintf(out, "%s  victims: ", indent);
            put_list(out, r->victims, r->n_victims, 0);
            fputc('\n', out);
        }
        if (r->error) {
            fprintf(out, "%s  # error: ", indent);
            put_quoted(out, r->error);
            fputc('\n', out);
        }
    }
}
