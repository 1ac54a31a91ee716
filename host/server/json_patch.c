/* JSON patch, RFC 6902 (json_patch.h). */
#include "json_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next reference token of pointer *p (without its '/'), unescaped into
 * tok; *p advances. -1 when malformed or too long. */
static int next_token(const char **p, char *tok, size_t len)
{
    const char *s = *p;
    size_t o = 0;
    if (*s != '/')
        return -1;
    s++;
    while (*s && *s != '/') {
        char c = *s++;
        if (c == '~') {
            if (*s == '0')
                c = '~';
            else if (*s == '1')
                c = '/';
            else
                return -1;
            s++;
        }
        if (o + 1 >= len)
            return -1;
        tok[o++] = c;
    }
    tok[o] = '\0';
    *p = s;
    return 0;
}

/* An array index token: digits, no leading zero; -1 otherwise. */
static long index_of(const char *tok, size_t n, int allow_end)
{
    char *end;
    long i;
    if (allow_end && strcmp(tok, "-") == 0)
        return (long)n;
    if (tok[0] < '0' || tok[0] > '9' || (tok[0] == '0' && tok[1]))
        return -1;
    i = strtol(tok, &end, 10);
    return *end == '\0' ? i : -1;
}

/* Resolve `path` to its parent container and last token. The root ("")
 * has no parent: *parent NULL. -1 when a step is missing. */
static int resolve(json_t *doc, const char *path, json_t **parent, char *last,
                   size_t len)
{
    const char *p = path;
    json_t *cur = doc;
    char tok[1024];
    *parent = NULL;
    last[0] = '\0';
    if (*p == '\0')
        return 0;
    for (;;) {
        if (next_token(&p, tok, sizeof tok) != 0)
            return -1;
        if (*p == '\0') {
            if (strlen(tok) >= len)
                return -1;
            memcpy(last, tok, strlen(tok) + 1);
            *parent = cur;
            return 0;
        }
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tok);
        } else if (json_is_array(cur)) {
            long i = index_of(tok, json_array_size(cur), 0);
            cur = i < 0 ? NULL : json_array_get(cur, (size_t)i);
        } else {
            cur = NULL;
        }
        if (cur == NULL)
            return -1;
    }
}

/* The value at `path`, NULL when absent. */
static json_t *get(json_t *doc, const char *path)
{
    json_t *parent;
    char last[1024];
    if (resolve(doc, path, &parent, last, sizeof last) != 0)
        return NULL;
    if (parent == NULL)
        return doc;
    if (json_is_object(parent))
        return json_object_get(parent, last);
    if (json_is_array(parent)) {
        long i = index_of(last, json_array_size(parent), 0);
        return i < 0 ? NULL : json_array_get(parent, (size_t)i);
    }
    return NULL;
}

/* add (replace = 0) or replace (1) `v` (the reference is taken). */
static int put(json_t **doc, const char *path, json_t *v, int replace)
{
    json_t *parent;
    char last[1024];
    if (resolve(*doc, path, &parent, last, sizeof last) != 0) {
        json_decref(v);
        return -1;
    }
    if (parent == NULL) {
        json_decref(*doc);
        *doc = v;
        return 0;
    }
    if (json_is_object(parent)) {
        if (replace && json_object_get(parent, last) == NULL) {
            json_decref(v);
            return -1;
        }
        return json_object_set_new(parent, last, v);
    }
    if (json_is_array(parent)) {
        size_t n = json_array_size(parent);
        long i = index_of(last, n, !replace);
        if (i < 0 || (size_t)i > n || (replace && (size_t)i == n)) {
            json_decref(v);
            return -1;
        }
        if (replace)
            return json_array_set_new(parent, (size_t)i, v);
        return (size_t)i == n ? json_array_append_new(parent, v)
                              : json_array_insert_new(parent, (size_t)i, v);
    }
    json_decref(v);
    return -1;
}

static int del(json_t *doc, const char *path)
{
    json_t *parent;
    char last[1024];
    if (resolve(doc, path, &parent, last, sizeof last) != 0 ||
        parent == NULL)
        return -1;
    if (json_is_object(parent))
        return json_object_del(parent, last);
    if (json_is_array(parent)) {
        long i = index_of(last, json_array_size(parent), 0);
        return i < 0 ? -1 : json_array_remove(parent, (size_t)i);
    }
    return -1;
}

int ks_json_patch(json_t **doc, const json_t *ops, char *err, size_t errlen)
{
    size_t i;
    json_t *op;
    if (!json_is_array(ops)) {
        snprintf(err, errlen, "a JSON patch must be an array of operations");
        return -1;
    }
    json_array_foreach(ops, i, op) {
        const char *name = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        const char *from = json_string_value(json_object_get(op, "from"));
        json_t *value = json_object_get(op, "value"), *v;
        int rc;
        if (name == NULL || path == NULL) {
            snprintf(err, errlen, "operation %zu: \"op\" and \"path\" are "
                                  "required", i);
            return -1;
        }
        if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0) {
            if (value == NULL) {
                snprintf(err, errlen, "operation %zu (%s): \"value\" is "
                                      "required", i, name);
                return -1;
            }
            rc = put(doc, path, json_deep_copy(value), name[0] == 'r');
        } else if (strcmp(name, "remove") == 0) {
            rc = del(*doc, path);
        } else if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
            size_t fl = from ? strlen(from) : 0;
            if (from == NULL || (v = get(*doc, from)) == NULL) {
                snprintf(err, errlen, "operation %zu (%s): from \"%s\" "
                                      "does not exist", i, name,
                         from ? from : "");
                return -1;
            }
            if (name[0] == 'm' && strncmp(path, from, fl) == 0 &&
                (path[fl] == '/' || (path[fl] == '\0' && fl > 0 &&
                                     strcmp(path, from) != 0))) {
                snprintf(err, errlen, "operation %zu (move): path \"%s\" "
                                      "is inside from \"%s\"", i, path, from);
                return -1;
            }
            v = json_deep_copy(v);
            if (name[0] == 'm' && strcmp(path, from) != 0 &&
                del(*doc, from) != 0) {
                json_decref(v);
                rc = -1;
            } else {
                rc = put(doc, path, v, 0);
            }
        } else if (strcmp(name, "test") == 0) {
            v = get(*doc, path);
            if (v == NULL || value == NULL || !json_equal(v, value)) {
                snprintf(err, errlen, "operation %zu (test): the value at "
                                      "\"%s\" is not the one given", i, path);
                return -1;
            }
            rc = 0;
        } else {
            snprintf(err, errlen, "operation %zu: unknown op \"%s\"", i,
                     name);
            return -1;
        }
        if (rc != 0) {
            snprintf(err, errlen, "operation %zu (%s): path \"%s\" does not "
                                  "exist", i, name, path);
            return -1;
        }
    }
    return 0;
}
