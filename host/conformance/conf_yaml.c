/* The conformance readers' side of YAML: the base reader's rules
 * (base/yaml_read.h) with results the caller owns. */
#include "conf_yaml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml_read.h"

int ks_cy_fail(ks_error_t *err, int code, const char *file,
               const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_yread_vfail_at(err, code, file, n, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int ks_cy_load_file(const char *path, yaml_document_t *doc, ks_error_t *err)
{
    ks_yaml_problem_t p;
    if (ks_yaml_load_file(path, doc, &p) == 0)
        return 0;
    switch (p.kind) {
    case KS_YAML_P_EMPTY:
        return ks_error_set(err, KS_EPARSE,
                            "%s: the file holds no YAML document", path);
    case KS_YAML_P_EXTRA:
        return ks_error_set(err, KS_EPARSE,
                            "%s:%u:%u: a second YAML document; a conformance "
                            "file holds exactly one",
                            path, (unsigned)p.line, (unsigned)p.column);
    case KS_YAML_P_SYNTAX:
        return ks_yaml_problem_error(err, path, "malformed YAML: ", &p);
    default:
        return ks_yaml_problem_error(err, path, NULL, &p);
    }
}

int ks_cy_check_keys(yaml_document_t *doc, const char *file,
                     const yaml_node_t *map, const char *const *valid,
                     const char *what, ks_error_t *err)
{
    size_t j, n = ks_yaml_map_len(map);
    for (j = 0; j < n; j++) {
        yaml_node_t *kn = ks_yaml_map_key(doc, map, j);
        const char *k = ks_yaml_text(kn);
        size_t i, q;
        char list[512];
        size_t len = 0;
        if (k == NULL)
            return ks_cy_fail(err, KS_ESCHEMA, file, kn,
                              "%s: expected a field name", what);
        for (q = 0; q < j; q++) {
            const char *k2 = ks_yaml_text(ks_yaml_map_key(doc, map, q));
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
    ks_yread_t r;
    const char *s;
    int rc;
    *out = NULL;
    if (n == NULL)
        return ks_cy_fail(err, KS_ESCHEMA, file, n, "%s: expected a string",
                          what);
    ks_yread_init(&r, file, NULL, err);
    ks_yread_push(&r, what);
    if ((rc = ks_yread_node_str(&r, n, &s)) != 0)
        return rc;
    if ((*out = strdup(s ? s : "")) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    return 0;
}

int ks_cy_int64(const char *file, const yaml_node_t *n, const char *what,
                int64_t *out, ks_error_t *err)
{
    ks_yread_t r;
    if (ks_yaml_is_null(n))
        return ks_cy_fail(err, KS_ESCHEMA, file, n, "%s: expected an integer",
                          what);
    ks_yread_init(&r, file, NULL, err);
    ks_yread_push(&r, what);
    return ks_yread_node_int64(&r, n, out);
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
    if (ks_yaml_is_null(n))
        return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return ks_cy_fail(err, KS_ESCHEMA, file, n,
                          "%s: expected a list of strings", what);
    cnt = ks_yaml_seq_len(n);
    if (cnt == 0)
        return 0;
    if ((v = calloc(cnt, sizeof *v)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        yaml_node_t *it = ks_yaml_seq_at(doc, n, i);
        if ((rc = ks_cy_string(file, it, what, &v[i], err)) != 0) {
            ks_cy_strv_free(v, i);
            return rc;
        }
    }
    *out = v;
    *n_out = cnt;
    return 0;
}
