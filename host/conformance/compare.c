/* Conformance comparison. */
#include "compare.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

typedef struct cmp_ctx {
    FILE *out;
    const char *pod;
    size_t n;
} cmp_ctx_t;

/* A growable text buffer for rendering values. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf_t;

static void sb_putc(sbuf_t *b, char c)
{
    if (b->len + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        char *s = realloc(b->s, cap);
        if (s == NULL)
            return;
        b->s = s;
        b->cap = cap;
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

static void sb_puts(sbuf_t *b, const char *s)
{
    for (; *s; s++)
        sb_putc(b, *s);
}

static void sb_quoted(sbuf_t *b, const char *s)
{
    sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_putc(b, '\\');
        if (*s == '\n') {
            sb_puts(b, "\\n");
            continue;
        }
        sb_putc(b, *s);
    }
    sb_putc(b, '"');
}

static void sb_list(sbuf_t *b, char *const *v, size_t n, int quoted)
{
    size_t i;
    sb_putc(b, '[');
    for (i = 0; i < n; i++) {
        if (i)
            sb_puts(b, ", ");
        if (quoted)
            sb_quoted(b, v[i]);
        else
            sb_puts(b, v[i]);
    }
    sb_putc(b, ']');
}

static void sb_scores(sbuf_t *b, const ks_conf_score_t *s, size_t n)
{
    char num[32];
    size_t i;
    sb_putc(b, '{');
    for (i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%" PRId64, s[i].score);
        if (i)
            sb_puts(b, ", ");
        sb_puts(b, s[i].node);
        sb_puts(b, ": ");
        sb_puts(b, num);
    }
    sb_putc(b, '}');
}

static const char *sb_str(const sbuf_t *b)
{
    return b->s ? b->s : "";
}

/* One mismatch line: "  POD: FIELD: expected E, got G". */
static void mismatch(cmp_ctx_t *c, const char *field, const char *e,
                     const char *g)
{
    c->n++;
    if (c->out)
        fprintf(c->out, "  %s: %s: expected %s, got %s\n", c->pod, field, e,
                g);
}

static int strv_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
    size_t i;
    if (na != nb)
        return 0;
    for (i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

static void cmp_strv(cmp_ctx_t *c, const char *field, char *const *e,
                     size_t ne, char *const *g, size_t ng, int quoted)
{
    sbuf_t be = {0}, bg = {0};
    if (strv_equal(e, ne, g, ng))
        return;
    sb_list(&be, e, ne, quoted);
    sb_list(&bg, g, ng, quoted);
    mismatch(c, field, sb_str(&be), sb_str(&bg));
    free(be.s);
    free(bg.s);
}

static void cmp_opt_str(cmp_ctx_t *c, const char *field, const char *e,
                        const char *g, int quoted)
{
    sbuf_t be = {0}, bg = {0};
    if ((e == NULL && g == NULL) || (e && g && strcmp(e, g) == 0))
        return;
    if (e == NULL)
        sb_puts(&be, "(none)");
    else if (quoted)
        sb_quoted(&be, e);
    else
        sb_puts(&be, e);
    if (g == NULL)
        sb_puts(&bg, "(none)");
    else if (quoted)
        sb_quoted(&bg, g);
    else
        sb_puts(&bg, g);
    mismatch(c, field, sb_str(&be), sb_str(&bg));
    free(be.s);
    free(bg.s);
}

static void cmp_rejected(cmp_ctx_t *c, const ks_conf_result_t *e,
                         const ks_conf_result_t *g)
{
    size_t i = 0, j = 0;
    char field[512];
    while (i < e->n_rejected || j < g->n_rejected) {
        const ks_conf_reasons_t *re = i < e->n_rejected ? &e->rejected[i] : NULL;
        const ks_conf_reasons_t *rg = j < g->n_rejected ? &g->rejected[j] : NULL;
        int d = re == NULL ? 1 : rg == NULL ? -1 : strcmp(re->node, rg->node);
        sbuf_t b = {0};
        snprintf(field, sizeof field, "rejected.%s", d <= 0 ? re->node : rg->node);
        if (d == 0) {
            cmp_strv(c, field, re->reasons, re->n_reasons, rg->reasons,
                     rg->n_reasons, 1);
            i++;
            j++;
        } else if (d < 0) {
            sb_list(&b, re->reasons, re->n_reasons, 1);
            mismatch(c, field, sb_str(&b), "(none)");
            i++;
        } else {
            sb_list(&b, rg->reasons, rg->n_reasons, 1);
            mismatch(c, field, "(none)", sb_str(&b));
            j++;
        }
        free(b.s);
    }
}

/* Compare two {node: score} maps, field names "PREFIX.NODE". */
static void cmp_scores(cmp_ctx_t *c, const char *prefix,
                       const ks_conf_score_t *e, size_t ne,
                       const ks_conf_score_t *g, size_t ng)
{
    size_t i = 0, j = 0;
    char field[512], ve[32], vg[32];
    while (i < ne || j < ng) {
        int d = i >= ne ? 1 : j >= ng ? -1 : strcmp(e[i].node, g[j].node);
        snprintf(field, sizeof field, "%s.%s", prefix,
                 d <= 0 ? e[i].node : g[j].node);
        snprintf(ve, sizeof ve, "(none)");
        snprintf(vg, sizeof vg, "(none)");
        if (d <= 0)
            snprintf(ve, sizeof ve, "%" PRId64, e[i].score);
        if (d >= 0)
            snprintf(vg, sizeof vg, "%" PRId64, g[j].score);
        if (d != 0 || e[i].score != g[j].score)
            mismatch(c, field, ve, vg);
        if (d <= 0)
            i++;
        if (d >= 0)
            j++;
    }
}

static const ks_conf_plugin_scores_t *find_plugin(const ks_conf_result_t *r,
                                                  const char *name)
{
    size_t i;
    for (i = 0; i < r->n_plugin_scores; i++)
        if (strcmp(r->plugin_scores[i].plugin, name) == 0)
            return &r->plugin_scores[i];
    return NULL;
}

static void cmp_plugin_scores(cmp_ctx_t *c, const ks_conf_result_t *e,
                              const ks_conf_result_t *g)
{
    char field[512];
    size_t i;
    for (i = 0; i < e->n_plugin_scores; i++) {
        const ks_conf_plugin_scores_t *pe = &e->plugin_scores[i];
        const ks_conf_plugin_scores_t *pg = find_plugin(g, pe->plugin);
        snprintf(field, sizeof field, "plugin_scores.%s", pe->plugin);
        if (pg == NULL) {
            sbuf_t b = {0};
            sb_scores(&b, pe->scores, pe->n_scores);
            mismatch(c, field, sb_str(&b), "(none: the plugin did not score)");
            free(b.s);
            continue;
        }
        cmp_scores(c, field, pe->scores, pe->n_scores, pg->scores,
                   pg->n_scores);
    }
    for (i = 0; i < g->n_plugin_scores; i++) {
        const ks_conf_plugin_scores_t *pg = &g->plugin_scores[i];
        sbuf_t b = {0};
        /* The expected files leave VolumeBinding's score out (always 0
         * there: the shared scenarios have no volumes; their README). */
        if (find_plugin(e, pg->plugin) != NULL ||
            strcmp(pg->plugin, "VolumeBinding") == 0)
            continue;
        snprintf(field, sizeof field, "plugin_scores.%s", pg->plugin);
        sb_scores(&b, pg->scores, pg->n_scores);
        mismatch(c, field, "(none: not in the expected file)", sb_str(&b));
        free(b.s);
    }
}

static void cmp_result(cmp_ctx_t *c, const ks_conf_result_t *e,
                       const ks_conf_result_t *g)
{
    if (g->error != NULL) {
        sbuf_t b = {0};
        sb_quoted(&b, g->error);
        c->n++;
        if (c->out)
            fprintf(c->out, "  %s: error: %s\n", c->pod, sb_str(&b));
        free(b.s);
    }
    cmp_strv(c, "feasible", e->feasible, e->n_feasible, g->feasible,
             g->n_feasible, 0);
    cmp_rejected(c, e, g);
    cmp_scores(c, "scores", e->scores, e->n_scores, g->scores, g->n_scores);
    cmp_plugin_scores(c, e, g);
    cmp_opt_str(c, "selected", e->selected, g->selected, 0);
    cmp_opt_str(c, "unschedulable", e->unschedulable, g->unschedulable, 1);
    cmp_opt_str(c, "nominated", e->nominated, g->nominated, 0);
    cmp_strv(c, "victims", e->victims, e->n_victims, g->victims, g->n_victims,
             0);
}

size_t ks_conf_compare(const ks_conf_results_t *expected,
                       const ks_conf_results_t *got, FILE *out)
{
    cmp_ctx_t c = {out, "", 0};
    size_t i, n = expected->n > got->n ? expected->n : got->n;
    char at[64];

    if (expected->name && got->name && strcmp(expected->name, got->name) != 0) {
        sbuf_t be = {0}, bg = {0};
        sb_quoted(&be, expected->name);
        sb_quoted(&bg, got->name);
        c.pod = "scenario";
        mismatch(&c, "name", sb_str(&be), sb_str(&bg));
        free(be.s);
        free(bg.s);
    }
    for (i = 0; i < n; i++) {
        const ks_conf_result_t *e = i < expected->n ? &expected->items[i] : NULL;
        const ks_conf_result_t *g = i < got->n ? &got->items[i] : NULL;
        snprintf(at, sizeof at, "results[%zu]", i);
        if (e == NULL || g == NULL) {
            c.pod = at;
            mismatch(&c, "pod", e ? e->pod : "(no entry)",
                     g ? g->pod : "(no such pod in the scenario)");
            continue;
        }
        if (strcmp(e->pod, g->pod) != 0) {
            c.pod = at;
            mismatch(&c, "pod", e->pod, g->pod);
            continue;
        }
        c.pod = g->pod;
        cmp_result(&c, e, g);
    }
    return c.n;
}
