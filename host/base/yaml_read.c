/* The typed YAML field reader (yaml_read.h). */
#include "base/yaml_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base64.h"
#include "base/yaml_node.h"
#include "base/yaml_scalar.h"

void ks_yread_init(ks_yread_t *r, const char *file, yaml_document_t *doc,
                   ks_error_t *err)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    r->doc = doc;
    r->err = err;
}

static size_t path_add(ks_yread_t *r, int w)
{
    if (w > 0)
        r->plen += (size_t)w;
    if (r->plen >= sizeof r->path)
        r->plen = sizeof r->path - 1;
    return r->plen;
}

size_t ks_yread_push(ks_yread_t *r, const char *name)
{
    size_t old = r->plen;
    path_add(r, snprintf(r->path + r->plen, sizeof r->path - r->plen, "%s%s",
                         r->plen ? "." : "", name));
    return old;
}

size_t ks_yread_push_index(ks_yread_t *r, size_t i)
{
    size_t old = r->plen;
    path_add(r, snprintf(r->path + r->plen, sizeof r->path - r->plen,
                         "[%zu]", i));
    return old;
}

void ks_yread_pop(ks_yread_t *r, size_t len)
{
    r->plen = len;
    r->path[len] = '\0';
}

int ks_yread_vfail_at(ks_error_t *err, int code, const char *file,
                      const yaml_node_t *n, const char *path,
                      const char *fmt, va_list ap)
{
    char msg[KS_ERROR_MSG_MAX], where[KS_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return ks_error_set(err, code, "%s: %s%s%s",
                        ks_yaml_where(where, sizeof where, file, n),
                        path ? path : "", path && path[0] ? ": " : "", msg);
}

int ks_yread_fail_at(ks_error_t *err, int code, const char *file,
                     const yaml_node_t *n, const char *path,
                     const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_yread_vfail_at(err, code, file, n, path, fmt, ap);
    va_end(ap);
    return rc;
}

int ks_yread_vfail(ks_yread_t *r, const yaml_node_t *n, int code,
                   const char *fmt, va_list ap)
{
    char where[sizeof r->what + sizeof r->path + 2];
    if (r->what[0] == '\0')
        return ks_yread_vfail_at(r->err, code, r->file, n, r->path, fmt, ap);
    snprintf(where, sizeof where, "%s%s%s", r->what, r->plen ? ": " : "",
             r->path);
    return ks_yread_vfail_at(r->err, code, r->file, n, where, fmt, ap);
}

int ks_yread_fail(ks_yread_t *r, const yaml_node_t *n, int code,
                  const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_yread_vfail(r, n, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* "a string", "a mapping", ... ("nothing" for NULL). */
static const char *kind_of(const yaml_node_t *n)
{
    return ks_yaml_type_name(ks_yaml_type(n));
}

yaml_node_t *ks_yread_get(const ks_yread_t *r, const yaml_node_t *map,
                          const char *key)
{
    yaml_node_t *n = ks_yaml_get(r->doc, map, key);
    return ks_yaml_is_null(n) ? NULL : n;
}

int ks_yread_str(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 const char **out, yaml_node_t **node)
{
    yaml_node_t *n = ks_yread_get(r, map, key);
    size_t old;
    int rc;
    *out = NULL;
    if (node != NULL)
        *node = n;
    if (n == NULL)
        return 0;
    old = ks_yread_push(r, key);
    rc = ks_yread_node_str(r, n, out);
    ks_yread_pop(r, old);
    return rc;
}

int ks_yread_node_str(ks_yread_t *r, const yaml_node_t *n, const char **out)
{
    char msg[256];
    size_t len;
    int rc = ks_yaml_want_str(n, out, &len, msg, sizeof msg);
    if (rc == KS_YS_WRONG)
        return ks_yread_fail(r, n, KS_ESCHEMA, "%s", msg);
    if (rc == KS_YS_UNSET || len == 0)
        *out = NULL;
    return 0;
}

int ks_yread_node_int64(ks_yread_t *r, const yaml_node_t *n, int64_t *out)
{
    char msg[256];
    int64_t v;
    int rc = ks_yaml_want_int64(n, &v, msg, sizeof msg);
    if (rc == KS_YS_WRONG)
        return ks_yread_fail(r, n, KS_ESCHEMA, "%s", msg);
    if (rc == KS_YS_OK)
        *out = v;
    return 0;
}

int ks_yread_bool(ks_yread_t *r, const yaml_node_t *map, const char *key,
                  int *out, yaml_node_t **node)
{
    yaml_node_t *n = ks_yread_get(r, map, key);
    char msg[256];
    size_t old;
    int rc = 0;
    if (node != NULL)
        *node = n;
    if (n == NULL)
        return 0;
    old = ks_yread_push(r, key);
    if (ks_yaml_want_bool(n, out, msg, sizeof msg) == KS_YS_WRONG)
        rc = ks_yread_fail(r, n, KS_ESCHEMA, "%s", msg);
    ks_yread_pop(r, old);
    return rc;
}

/* A mapping (want_map) or a sequence, or absent/null: *out NULL. */
static int container(ks_yread_t *r, const yaml_node_t *map, const char *key,
                     int want_map, yaml_node_t **out)
{
    yaml_node_t *n = ks_yread_get(r, map, key);
    size_t old;
    int rc;
    *out = NULL;
    if (n == NULL)
        return 0;
    if (want_map ? ks_yaml_is_map(n) : ks_yaml_is_seq(n)) {
        *out = n;
        return 0;
    }
    old = ks_yread_push(r, key);
    rc = ks_yread_fail(r, n, KS_ESCHEMA, "expected a %s, found %s",
                       want_map ? "mapping" : "sequence", kind_of(n));
    ks_yread_pop(r, old);
    return rc;
}

int ks_yread_map(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 yaml_node_t **out)
{
    return container(r, map, key, 1, out);
}

int ks_yread_seq(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 yaml_node_t **out)
{
    return container(r, map, key, 0, out);
}

int ks_yread_bytes(ks_yread_t *r, const yaml_node_t *map, const char *key,
                   unsigned char **out, size_t *len, yaml_node_t **node)
{
    const char *s;
    yaml_node_t *n;
    ks_error_t e;
    size_t old;
    int rc;
    *out = NULL;
    *len = 0;
    if ((rc = ks_yread_str(r, map, key, &s, &n)) != 0)
        return rc;
    if (node != NULL)
        *node = n;
    if (s == NULL)
        return 0;
    e.code = 0;
    e.msg[0] = '\0';
    rc = ks_base64_decode(s, ks_yaml_text_len(n), out, len, NULL, &e);
    if (rc == KS_ENOMEM)
        return ks_error_set(r->err, KS_ENOMEM, "%s: out of memory", r->file);
    if (rc != 0) {
        old = ks_yread_push(r, key);
        rc = ks_yread_fail(r, n, KS_ESCHEMA,
                           "%s; the value must be standard base64 of the PEM "
                           "file (base64 -w0 FILE)",
                           e.msg);
        ks_yread_pop(r, old);
    }
    return rc;
}

int ks_yread_strings(ks_yread_t *r, const yaml_node_t *map, const char *key,
                     const char ***out, size_t *n_out)
{
    yaml_node_t *seq;
    const char **v;
    size_t i, n, old;
    int rc;
    *out = NULL;
    *n_out = 0;
    if ((rc = ks_yread_seq(r, map, key, &seq)) != 0 || seq == NULL)
        return rc;
    n = ks_yaml_seq_len(seq);
    if (n == 0)
        return 0;
    v = calloc(n, sizeof *v);
    if (v == NULL)
        return ks_error_set(r->err, KS_ENOMEM, "out of memory");
    old = ks_yread_push(r, key);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(r->doc, seq, i);
        size_t o2 = ks_yread_push_index(r, i);
        if ((rc = ks_yread_node_str(r, it, &v[i])) != 0) {
            free(v);
            return rc;
        }
        if (v[i] == NULL)
            v[i] = ""; /* a null item */
        ks_yread_pop(r, o2);
    }
    ks_yread_pop(r, old);
    *out = v;
    *n_out = n;
    return 0;
}
