/* libyaml helpers for the conformance readers. */
#include "conf_yaml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ks_cy_fail(ks_error_t *err, int code, const char *file,
               const yaml_node_t *n, const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n != NULL)
        return ks_error_set(err, code, "%s:%zu:%zu: %s", file,
                            n->start_mark.line + 1, n->start_mark.column + 1,
                            msg);
    return ks_error_set(err, code, "%s: %s", file, msg);
}

uint32_t ks_cy_line(const yaml_node_t *n)
{
    return n ? (uint32_t)n->start_mark.line + 1 : 0;
}

int ks_cy_load_file(const char *path, yaml_document_t *doc, ks_error_t *err)
{
    yaml_parser_t parser;
    yaml_document_t extra;
    FILE *f = fopen(path, "rb");
    int rc = 0;

    memset(doc, 0, sizeof *doc);
    if (f == NULL)
        return ks_error_set(err, KS_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", path);
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, doc)) {
        rc = ks_error_set(err, KS_EPARSE, "%s:%zu:%zu: %s%s%s", path,
                          parser.problem_mark.line + 1,
                          parser.problem_mark.column + 1,
                          parser.problem ? parser.problem : "malformed YAML",
                          parser.context ? " " : "",
                          parser.context ? parser.context : "");
        memset(doc, 0, sizeof *doc);
        goto out;
    }
    if (yaml_document_get_root_node(doc) == NULL) {
        yaml_document_delete(doc);
        memset(doc, 0, sizeof *doc);
        rc = ks_error_set(err, KS_EPARSE, "%s: the file holds no YAML document",
                          path);
        goto out;
    }
    if (!yaml_parser_load(&parser, &extra)) {
        rc = ks_error_set(err, KS_EPARSE, "%s:%zu:%zu: %s", path,
                          parser.problem_mark.line + 1,
                          parser.problem_mark.column + 1,
                          parser.problem ? parser.problem : "malformed YAML");
    } else {
        if (yaml_document_get_root_node(&extra) != NULL)
            rc = ks_error_set(err, KS_EPARSE,
                              "%s:%zu:%zu: a second YAML document; a "
                              "conformance file holds exactly one",
                              path, extra.start_mark.line + 1,
                              extra.start_mark.column + 1);
        yaml_document_delete(&extra);
    }
    if (rc != 0) {
        yaml_document_delete(doc);
        memset(doc, 0, sizeof *doc);
    }
out:
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

const char *ks_cy_scalar(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)n->data.scalar.value;
}

int ks_cy_is_null(const yaml_node_t *n)
{
    const char *s;
    if (n == NULL)
        return 1;
    if (n->type != YAML_SCALAR_NODE ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    s = (const char *)n->data.scalar.value;
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

yaml_node_t *ks_cy_get(yaml_document_t *doc, const yaml_node_t *map,
                       const char *key)
{
    yaml_node_pair_t *p;
    yaml_node_t *found = NULL;
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = ks_cy_scalar(yaml_document_get_node(doc, p->key));
        if (k != NULL && strcmp(k, key) == 0)
            found = yaml_document_get_node(doc, p->value);
    }
    return found;
}

int ks_cy_check_keys(yaml_document_t *doc, const char *file,
                     const yaml_node_t *map, const char *const *valid,
                     const char *what, ks_error_t *err)
{
    yaml_node_pair_t *p, *q;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yaml_document_get_node(doc, p->key);
        const char *k = ks_cy_scalar(kn);
        size_t i;
        char list[512];
        size_t len = 0;
        if (k == NULL)
            return ks_cy_fail(err, KS_ESCHEMA, file, kn,
                              "%s: expected a field name", what);
        for (q = map->data.mapping.pairs.start; q < p; q++) {
            const char *k2 = ks_cy_scalar(yaml_document_get_node(doc, q->key));
            if (k2 != NULL && strcmp(k, k2) == 0)
                return ks_cy_fail(err, KS_ESCHEMA, file, kn,
                                  "%s: field \"%s\" repeated", what, k);
        }
        for (i = 0; valid[i] != NULL; i++)
            if (strcmp(k, valid[i]) == 0)
                break;
        if (valid[i] != NULL)
            continue;
        list[0] = '\0';
        for (i = 0; valid[i] != NULL && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    i ? ", " : "", valid[i]);
        return ks_cy_fail(err, KS_ESCHEMA, file, kn,
                          "%s: unknown field \"%s\" (valid: %s)", what, k,
                          list);
    }
    return 0;
}

int ks_cy_string(const char *file, const yaml_node_t *n, const char *what,
                 char **out, ks_error_t *err)
{
    const char *s = ks_cy_scalar(n);
    *out = NULL;
    if (s == NULL)
        return ks_cy_fail(err, KS_ESCHEMA, file, n, "%s: expected a string",
                          what);
    if ((*out = strdup(s)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    return 0;
}

int ks_cy_int64(const char *file, const yaml_node_t *n, const char *what,
                int64_t *out, ks_error_t *err)
{
    const char *s = ks_cy_scalar(n);
    char *end;
    long long v;
    if (s == NULL || s[0] == '\0')
        return ks_cy_fail(err, KS_ESCHEMA, file, n, "%s: expected an integer",
                          what);
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return ks_cy_fail(err, KS_ESCHEMA, file, n,
                          "%s: expected an integer, found \"%s\"", what, s);
    *out = (int64_t)v;
    return 0;
}

void ks_cy_strv_free(char **v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int ks_cy_strv(yaml_document_t *doc, const char *file, const yaml_node_t *n,
               const char *what, char ***out, size_t *n_out, ks_error_t *err)
{
    char **v;
    size_t cnt, i;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (ks_cy_is_null(n))
        return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return ks_cy_fail(err, KS_ESCHEMA, file, n,
                          "%s: expected a list of strings", what);
    cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt == 0)
        return 0;
    if ((v = calloc(cnt, sizeof *v)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        yaml_node_t *it =
            yaml_document_get_node(doc, n->data.sequence.items.start[i]);
        if ((rc = ks_cy_string(file, it, what, &v[i], err)) != 0) {
            ks_cy_strv_free(v, i);
            return rc;
        }
    }
    *out = v;
    *n_out = cnt;
    return 0;
}
