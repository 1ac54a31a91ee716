/*
 * The config reader's side of YAML: problem collection, table-driven checks
 * of mapping fields, and loading the document. Typing, positions and the
 * loading itself (with its alias limits) are base/yaml_node.h and
 * base/yaml_doc.h: scalars follow the YAML 1.2 core schema.
 */
#include "config_internal.h"

#include "base/yaml_scalar.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- positions and problems ------------------------------------------------ */

static void problem_v(ks_cfg_ctx_t *c, int code, uint32_t line, uint32_t col,
                      const char *fmt, va_list ap)
{
    char msg[1024];
    ks_cfg_problem_rec_t *r;

    if (c->n_problems == 0)
        c->first_code = code;
    c->n_problems++;
    if (c->n_recs == c->cap_recs) {
        size_t cap = c->cap_recs ? c->cap_recs * 2 : 16;
        ks_cfg_problem_rec_t *grown = realloc(c->recs, cap * sizeof *grown);
        if (grown == NULL)
            return; /* still counted */
        c->recs = grown;
        c->cap_recs = cap;
    }
    vsnprintf(msg, sizeof msg, fmt, ap);
    r = &c->recs[c->n_recs];
    r->msg = strdup(msg);
    if (r->msg == NULL)
        return;
    r->line = line;
    r->column = col;
    r->code = code;
    c->n_recs++;
}

void ks_cfg_problem(ks_cfg_ctx_t *c, int code, const yaml_node_t *at,
                    const char *fmt, ...)
{
    uint32_t line = ks_yaml_line(at), col = ks_yaml_column(at);
    va_list ap;
    if (line == 0) /* no node (or no position): the top of the file */
        line = col = 1;
    va_start(ap, fmt);
    problem_v(c, code, line, col, fmt, ap);
    va_end(ap);
}

void ks_cfg_problem_at(ks_cfg_ctx_t *c, int code, uint32_t line, uint32_t col,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problem_v(c, code, line, col, fmt, ap);
    va_end(ap);
}

void ks_cfg_problems_finish(ks_cfg_ctx_t *c)
{
    size_t i, j;
    unsigned shown = 0;

    /* Insertion sort by position keeps problems at one place in the order
     * they were found. */
    for (i = 1; i < c->n_recs; i++) {
        ks_cfg_problem_rec_t r = c->recs[i];
        for (j = i; j > 0 && (c->recs[j - 1].line > r.line ||
                              (c->recs[j - 1].line == r.line &&
                               c->recs[j - 1].column > r.column));
             j--)
            c->recs[j] = c->recs[j - 1];
        c->recs[j] = r;
    }
    if (c->n_recs > 0)
        c->first_code = c->recs[0].code;
    for (i = 0; i < c->n_recs; i++) {
        if (c->err != NULL && i == shown && i < KS_CFG_MAX_SHOWN) {
            /* Keep room for this line and the trailer, or stop listing. */
            size_t used = strlen(c->err->msg);
            size_t need = strlen(c->file) + strlen(c->recs[i].msg) + 32 + 64;
            if (used + need < sizeof c->err->msg) {
                ks_error_append(c->err, c->recs[i].code,
                                "%s:%" PRIu32 ":%" PRIu32 ": %s", c->file,
                                c->recs[i].line, c->recs[i].column,
                                c->recs[i].msg);
                shown++;
            }
        }
        free(c->recs[i].msg);
    }
    if (c->err != NULL && c->n_problems > shown)
        ks_error_append(c->err, c->first_code, "%s: %u more problems not shown",
                        c->file, c->n_problems - shown);
    if (c->err != NULL && c->n_problems > 0)
        c->err->code = c->first_code;
    free(c->recs);
    c->recs = NULL;
    c->n_recs = c->cap_recs = 0;
}

/* --- field tables ---------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t row[64];
    if (la >= 63 || lb >= 63)
        return (size_t)-1;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) ==
                                  tolower((unsigned char)b[j - 1])
                              ? 0
                              : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int type_ok(const yaml_node_t *v, ks_cfg_type_t t)
{
    ks_yaml_type_t k = ks_yaml_type(v);
    switch (t) {
    case KS_CFG_T_ANY: return 1;
    case KS_CFG_T_MAP: return k == KS_YAML_MAP;
    case KS_CFG_T_SEQ: return k == KS_YAML_SEQ;
    case KS_CFG_T_STR: return k == KS_YAML_STR;
    case KS_CFG_T_INT: return k == KS_YAML_INT;
    case KS_CFG_T_BOOL: return k == KS_YAML_BOOL;
    case KS_CFG_T_NUM: return k == KS_YAML_INT || k == KS_YAML_FLOAT;
    default: return 0;
    }
}

static const char *type_name(ks_cfg_type_t t)
{
    switch (t) {
    case KS_CFG_T_MAP: return "a mapping";
    case KS_CFG_T_SEQ: return "a sequence";
    case KS_CFG_T_STR: return "a string";
    case KS_CFG_T_INT: return "an integer";
    case KS_CFG_T_BOOL: return "a boolean";
    case KS_CFG_T_NUM: return "a number";
    default: return "a value";
    }
}

static void unknown_field(ks_cfg_ctx_t *c, const yaml_node_t *key,
                          const char *what, const ks_cfg_field_t *fields,
                          size_t n)
{
    char valid[512], hint[128] = "";
    size_t off = 0, i, best = (size_t)-1, best_i = 0;
    const char *name = ks_yaml_text(key);

    valid[0] = '\0';
    for (i = 0; i < n; i++) {
        size_t d = edit_distance(name, fields[i].name);
        if (d < best) {
            best = d;
            best_i = i;
        }
        if (off < sizeof valid)
            off += (size_t)snprintf(valid + off, sizeof valid - off, "%s%s",
                                    i ? ", " : "", fields[i].name);
    }
    if (n > 0 && best <= 2 && best < strlen(name))
        snprintf(hint, sizeof hint, "; did you mean \"%s\"?",
                 fields[best_i].name);
    ks_cfg_problem(c, KS_ESCHEMA, key, "unknown field \"%s\"%s%s%s (valid: %s)",
                   name, what[0] ? " in " : "", what, hint, valid);
}

void ks_cfg_fields(ks_cfg_ctx_t *c, yaml_node_t *map, const char *what,
                   const ks_cfg_field_t *fields, size_t n, yaml_node_t **vals,
                   yaml_node_t **keys)
{
    yaml_node_pair_t *p;
    yaml_node_t *seen_key[32];
    size_t i;

    if (n > sizeof seen_key / sizeof seen_key[0])
        n = sizeof seen_key / sizeof seen_key[0];
    for (i = 0; i < n; i++) {
        vals[i] = NULL;
        if (keys)
            keys[i] = NULL;
        seen_key[i] = NULL;
    }
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        char buf[96];
        if (k == NULL || k->type != YAML_SCALAR_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, k, "%s%sexpected a field name, found %s",
                           what, what[0] ? ": " : "",
                           ks_yaml_describe(k, buf, sizeof buf));
            continue;
        }
        for (i = 0; i < n; i++)
            if (strcmp(fields[i].name, ks_yaml_text(k)) == 0)
                break;
        if (i == n) {
            unknown_field(c, k, what, fields, n);
            continue;
        }
        if (seen_key[i] != NULL) {
            ks_cfg_problem(c, KS_ESCHEMA, k,
                           "field \"%s\" repeated%s%s (first at line %" PRIu32 ")",
                           fields[i].name, what[0] ? " in " : "", what,
                           ks_yaml_line(seen_key[i]));
            continue;
        }
        seen_key[i] = k;
        if (keys)
            keys[i] = k;
        if (ks_yaml_is_null(v))
            continue;
        if (fields[i].type == KS_CFG_T_STR || fields[i].type == KS_CFG_T_INT ||
            fields[i].type == KS_CFG_T_BOOL) {
            /* the host's scalar rules (base/yaml_scalar.h) */
            char msg[256];
            const char *s;
            size_t len;
            int64_t x;
            int b,
                rc = fields[i].type == KS_CFG_T_STR
                         ? ks_yaml_want_str(v, &s, &len, msg, sizeof msg)
                     : fields[i].type == KS_CFG_T_INT
                         ? ks_yaml_want_int64(v, &x, msg, sizeof msg)
                         : ks_yaml_want_bool(v, &b, msg, sizeof msg);
            if (rc == KS_YS_WRONG &&
                !(fields[i].type == KS_CFG_T_INT &&
                  ks_yaml_type(v) == KS_YAML_INT)) {
                ks_cfg_problem(c, KS_ESCHEMA, v, "%s%s%s: %s", what,
                               what[0] ? "." : "", fields[i].name, msg);
                continue;
            }
        } else if (!type_ok(v, fields[i].type)) {
            ks_cfg_problem(c, KS_ESCHEMA, v, "%s%s%s: expected %s, found %s%s",
                           what, what[0] ? "." : "", fields[i].name,
                           type_name(fields[i].type),
                           ks_yaml_describe(v, buf, sizeof buf),
                           fields[i].type == KS_CFG_T_BOOL
                               ? ks_yaml_bool_hint(v)
                               : "");
            continue;
        }
        vals[i] = v;
    }
}

/* --- loading a document ---------------------------------------------------- */

int ks_cfg_yaml_load(ks_cfg_ctx_t *c, const char *yaml, size_t len,
                     yaml_document_t *doc)
{
    ks_yaml_problem_t p;
    uint32_t line, col;

    if (ks_yaml_load_string(yaml, len, doc, &p) == 0)
        return 0;
    line = p.line ? p.line : 1;
    col = p.line ? p.column : 1;
    switch (p.kind) {
    case KS_YAML_P_EMPTY:
        ks_cfg_problem_at(c, KS_ESCHEMA, 1, 1,
                          "the file is empty; expected a KubeSchedulerConfiguration "
                          "(apiVersion: kubescheduler.config.k8s.io/v1, kind: "
                          "KubeSchedulerConfiguration)");
        break;
    case KS_YAML_P_EXTRA:
        ks_cfg_problem_at(c, KS_ESCHEMA, line, col,
                          "a second YAML document; a configuration file holds "
                          "exactly one KubeSchedulerConfiguration");
        break;
    case KS_YAML_P_SYNTAX:
        ks_cfg_problem_at(c, p.code, line, col, "malformed YAML: %s", p.msg);
        break;
    default:
        ks_cfg_problem_at(c, p.code, line, col, "%s", p.msg);
        break;
    }
    return -1;
}
