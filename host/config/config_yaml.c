/*
 * libyaml helpers for the config reader: positions, problem collection,
 * scalar typing the way a YAML-to-JSON conversion types scalars, and
 * table-driven checks of mapping fields.
 */
#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- positions and problems ------------------------------------------------ */

uint32_t ks_cfg_line(const yaml_node_t *n)
{
    return n ? (uint32_t)n->start_mark.line + 1 : 1;
}

uint32_t ks_cfg_column(const yaml_node_t *n)
{
    return n ? (uint32_t)n->start_mark.column + 1 : 1;
}

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
    va_list ap;
    va_start(ap, fmt);
    problem_v(c, code, ks_cfg_line(at), ks_cfg_column(at), fmt, ap);
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

/* --- scalars --------------------------------------------------------------- */

const char *ks_cfg_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static int is_int_text(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    return *s == '\0';
}

static int is_float_text(const char *s)
{
    static const char *const special[] = {
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
        "-.INF", ".nan", ".NaN", ".NAN", NULL};
    int digits = 0;
    if (in_list(s, special))
        return 1;
    if (*s == '-' || *s == '+')
        s++;
    while (isdigit((unsigned char)*s))
        s++, digits++;
    if (*s == '.') {
        s++;
        while (isdigit((unsigned char)*s))
            s++, digits++;
    }
    if (digits == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == '\0';
}

ks_cfg_scalar_kind_t ks_cfg_scalar_kind(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const bools[] = {
        "true", "True", "TRUE", "false", "False", "FALSE", "y",   "Y",
        "yes",  "Yes",  "YES",  "n",     "N",     "no",    "No",  "NO",
        "on",   "On",   "ON",   "off",   "Off",   "OFF",   NULL};
    const char *s;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return KS_CFG_S_STRING;
    s = ks_cfg_text(n);
    if (in_list(s, nulls))
        return KS_CFG_S_NULL;
    if (in_list(s, bools))
        return KS_CFG_S_BOOL;
    if (is_int_text(s))
        return KS_CFG_S_INT;
    if (is_float_text(s))
        return KS_CFG_S_FLOAT;
    return KS_CFG_S_STRING;
}

int ks_cfg_is_null(const yaml_node_t *n)
{
    return n == NULL || (n->type == YAML_SCALAR_NODE &&
                         ks_cfg_scalar_kind(n) == KS_CFG_S_NULL);
}

const char *ks_cfg_describe(const yaml_node_t *n, char *buf, size_t len)
{
    const char *what;
    if (n == NULL)
        return "nothing";
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a sequence";
    switch (ks_cfg_scalar_kind(n)) {
    case KS_CFG_S_NULL: return "null";
    case KS_CFG_S_BOOL: what = "a boolean"; break;
    case KS_CFG_S_INT: what = "an integer"; break;
    case KS_CFG_S_FLOAT: what = "a number"; break;
    default: what = "a string"; break;
    }
    if (strlen(ks_cfg_text(n)) > 40)
        snprintf(buf, len, "%s (\"%.37s...\")", what, ks_cfg_text(n));
    else
        snprintf(buf, len, "%s (\"%s\")", what, ks_cfg_text(n));
    return buf;
}

int ks_cfg_int64(const yaml_node_t *n, int64_t *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(ks_cfg_text(n), &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* --- sequences ------------------------------------------------------------- */

size_t ks_cfg_seq_len(const yaml_node_t *seq)
{
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *ks_cfg_seq_item(ks_cfg_ctx_t *c, yaml_node_t *seq, size_t i)
{
    if (i >= ks_cfg_seq_len(seq))
        return NULL;
    return yaml_document_get_node(c->doc, seq->data.sequence.items.start[i]);
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
    ks_cfg_scalar_kind_t k;
    switch (t) {
    case KS_CFG_T_ANY: return 1;
    case KS_CFG_T_MAP: return v->type == YAML_MAPPING_NODE;
    case KS_CFG_T_SEQ: return v->type == YAML_SEQUENCE_NODE;
    default: break;
    }
    if (v->type != YAML_SCALAR_NODE)
        return 0;
    k = ks_cfg_scalar_kind(v);
    switch (t) {
    case KS_CFG_T_STR: return k == KS_CFG_S_STRING;
    case KS_CFG_T_INT: return k == KS_CFG_S_INT;
    case KS_CFG_T_BOOL: return k == KS_CFG_S_BOOL;
    case KS_CFG_T_NUM: return k == KS_CFG_S_INT || k == KS_CFG_S_FLOAT;
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
    const char *name = ks_cfg_text(key);

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
                           ks_cfg_describe(k, buf, sizeof buf));
            continue;
        }
        for (i = 0; i < n; i++)
            if (strcmp(fields[i].name, ks_cfg_text(k)) == 0)
                break;
        if (i == n) {
            unknown_field(c, k, what, fields, n);
            continue;
        }
        if (seen_key[i] != NULL) {
            ks_cfg_problem(c, KS_ESCHEMA, k,
                           "field \"%s\" repeated%s%s (first at line %" PRIu32 ")",
                           fields[i].name, what[0] ? " in " : "", what,
                           ks_cfg_line(seen_key[i]));
            continue;
        }
        seen_key[i] = k;
        if (keys)
            keys[i] = k;
        if (ks_cfg_is_null(v))
            continue;
        if (!type_ok(v, fields[i].type)) {
            ks_cfg_problem(c, KS_ESCHEMA, v, "%s%s%s: expected %s, found %s",
                           what, what[0] ? "." : "", fields[i].name,
                           type_name(fields[i].type),
                           ks_cfg_describe(v, buf, sizeof buf));
            continue;
        }
        vals[i] = v;
    }
}

/* --- loading a document ---------------------------------------------------- */

static void position_of_offset(const char *text, size_t len, size_t off,
                               uint32_t *line, uint32_t *col)
{
    size_t i;
    *line = 1;
    *col = 1;
    for (i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

static void parser_problem(ks_cfg_ctx_t *c, const yaml_parser_t *p,
                           const char *yaml, size_t len)
{
    uint32_t line, col;
    if (p->error == YAML_MEMORY_ERROR) {
        ks_cfg_problem_at(c, KS_ENOMEM, 1, 1, "out of memory reading YAML");
        return;
    }
    if (p->error == YAML_READER_ERROR) {
        position_of_offset(yaml, len, p->problem_offset, &line, &col);
        ks_cfg_problem_at(c, KS_EPARSE, line, col, "malformed YAML: %s",
                          p->problem ? p->problem : "unreadable input");
        return;
    }
    line = (uint32_t)p->problem_mark.line + 1;
    col = (uint32_t)p->problem_mark.column + 1;
    if (p->context != NULL)
        ks_cfg_problem_at(c, KS_EPARSE, line, col,
                          "malformed YAML: %s (%s at line %u, column %u)",
                          p->problem ? p->problem : "syntax error", p->context,
                          (unsigned)p->context_mark.line + 1,
                          (unsigned)p->context_mark.column + 1);
    else
        ks_cfg_problem_at(c, KS_EPARSE, line, col, "malformed YAML: %s",
                          p->problem ? p->problem : "syntax error");
}

int ks_cfg_yaml_load(ks_cfg_ctx_t *c, const char *yaml, size_t len,
                     yaml_document_t *doc)
{
    yaml_parser_t p;
    yaml_document_t extra;
    yaml_node_t *root;

    if (!yaml_parser_initialize(&p)) {
        ks_cfg_problem_at(c, KS_ENOMEM, 1, 1, "out of memory reading YAML");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&p, doc)) {
        parser_problem(c, &p, yaml, len);
        yaml_parser_delete(&p);
        return -1;
    }
    root = yaml_document_get_root_node(doc);
    if (root == NULL) {
        ks_cfg_problem_at(c, KS_ESCHEMA, 1, 1,
                          "the file is empty; expected a KubeSchedulerConfiguration "
                          "(apiVersion: kubescheduler.config.k8s.io/v1, kind: "
                          "KubeSchedulerConfiguration)");
        yaml_document_delete(doc);
        yaml_parser_delete(&p);
        return -1;
    }
    if (!yaml_parser_load(&p, &extra)) {
        parser_problem(c, &p, yaml, len);
        yaml_document_delete(doc);
        yaml_parser_delete(&p);
        return -1;
    }
    root = yaml_document_get_root_node(&extra);
    if (root != NULL) {
        ks_cfg_problem_at(c, KS_ESCHEMA, (uint32_t)extra.start_mark.line + 1,
                          (uint32_t)extra.start_mark.column + 1,
                          "a second YAML document; a configuration file holds "
                          "exactly one KubeSchedulerConfiguration");
        yaml_document_delete(&extra);
        yaml_document_delete(doc);
        yaml_parser_delete(&p);
        return -1;
    }
    yaml_document_delete(&extra);
    yaml_parser_delete(&p);
    return 0;
}
