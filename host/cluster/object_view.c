/*
 * Field-path reads over a JSON tree (object_view.h): the path is walked
 * segment by segment with no copy of the whole path; a quoted key is
 * unescaped into a stack buffer.
 */
#include "object_view.h"

#include <string.h>

/* One segment: a name or key (text, len) or an index. */
typedef struct seg {
    int is_index;
    size_t index;
    char key[KS_FIELD_PATH_MAX + 1];
} seg_t;

/* Read the name at *p (up to '.', '[' or the end). -1 when empty. */
static int read_name(const char **p, seg_t *sg)
{
    const char *s = *p;
    size_t n = strcspn(s, ".[");
    if (n == 0)
        return -1;
    memcpy(sg->key, s, n);
    sg->key[n] = '\0';
    sg->is_index = 0;
    *p = s + n;
    return 0;
}

/* Read a bracket at *p ("[...]"). -1 when malformed. */
static int read_bracket(const char **p, seg_t *sg)
{
    const char *s = *p + 1;
    size_t n = 0;
    if (*s == '"') {
        s++;
        for (;;) {
            char ch = *s++;
            if (ch == '\0')
                return -1;
            if (ch == '"')
                break;
            if (ch == '\\') {
                ch = *s++;
                if (ch != '"' && ch != '\\')
                    return -1;
            }
            if (n >= KS_FIELD_PATH_MAX)
                return -1;
            sg->key[n++] = ch;
        }
        if (*s != ']')
            return -1;
        sg->key[n] = '\0';
        sg->is_index = 0;
        *p = s + 1;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1;
    sg->index = 0;
    while (*s >= '0' && *s <= '9') {
        if (sg->index > (SIZE_MAX - 9) / 10)
            return -1;
        sg->index = sg->index * 10 + (size_t)(*s - '0');
        s++;
    }
    if (*s != ']')
        return -1;
    sg->is_index = 1;
    *p = s + 1;
    return 0;
}

ks_field_rc_t ks_field_lookup(const json_t *root, const char *path,
                              const json_t **out)
{
    const json_t *cur = root;
    const char *p = path;
    int missing = 0;
    seg_t sg;
    if (root == NULL || path == NULL || strlen(path) > KS_FIELD_PATH_MAX)
        return path == NULL || root == NULL ? KS_FIELD_MISSING
                                            : KS_FIELD_BAD_PATH;
    if (*p == '.')
        return KS_FIELD_BAD_PATH;
    /* The whole path is checked even after a missing segment, so a
     * malformed path is always reported as such. */
    while (*p != '\0') {
        if (*p == '[') {
            if (read_bracket(&p, &sg) != 0)
                return KS_FIELD_BAD_PATH;
        } else {
            if (read_name(&p, &sg) != 0)
                return KS_FIELD_BAD_PATH;
        }
        if (*p == '.') {
            p++;
            if (*p == '\0' || *p == '.' || *p == '[')
                return KS_FIELD_BAD_PATH;
        } else if (*p != '\0' && *p != '[') {
            return KS_FIELD_BAD_PATH;
        }
        if (missing)
            continue;
        if (sg.is_index)
            cur = json_is_array(cur) ? json_array_get(cur, sg.index) : NULL;
        else
            cur = json_is_object(cur) ? json_object_get(cur, sg.key) : NULL;
        if (cur == NULL || json_is_null(cur))
            missing = 1;
    }
    if (missing || cur == NULL || json_is_null(cur))
        return KS_FIELD_MISSING;
    *out = cur;
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_string(const json_t *root, const char *path,
                              const char **out)
{
    const json_t *v;
    ks_field_rc_t rc = ks_field_lookup(root, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (!json_is_string(v))
        return KS_FIELD_WRONG_TYPE;
    *out = json_string_value(v);
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_int(const json_t *root, const char *path,
                           int64_t *out)
{
    const json_t *v;
    ks_field_rc_t rc = ks_field_lookup(root, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (!json_is_integer(v))
        return KS_FIELD_WRONG_TYPE;
    *out = (int64_t)json_integer_value(v);
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_bool(const json_t *root, const char *path, int *out)
{
    const json_t *v;
    ks_field_rc_t rc = ks_field_lookup(root, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (!json_is_boolean(v))
        return KS_FIELD_WRONG_TYPE;
    *out = json_is_true(v) ? 1 : 0;
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_len(const json_t *root, const char *path,
                           uint32_t *out)
{
    const json_t *v;
    ks_field_rc_t rc = ks_field_lookup(root, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (json_is_array(v))
        *out = (uint32_t)json_array_size(v);
    else if (json_is_object(v))
        *out = (uint32_t)json_object_size(v);
    else
        return KS_FIELD_WRONG_TYPE;
    return KS_FIELD_OK;
}

ks_field_type_t ks_field_type(const json_t *root, const char *path)
{
    const json_t *v;
    switch (ks_field_lookup(root, path, &v)) {
    case KS_FIELD_OK:
        break;
    case KS_FIELD_BAD_PATH:
        return KS_FIELD_INVALID;
    default:
        return KS_FIELD_ABSENT;
    }
    switch (json_typeof(v)) {
    case JSON_STRING:
        return KS_FIELD_STRING;
    case JSON_INTEGER:
        return KS_FIELD_INT;
    case JSON_REAL:
        return KS_FIELD_REAL;
    case JSON_TRUE:
    case JSON_FALSE:
        return KS_FIELD_BOOL;
    case JSON_ARRAY:
        return KS_FIELD_ARRAY;
    case JSON_OBJECT:
        return KS_FIELD_MAP;
    default:
        return KS_FIELD_ABSENT;
    }
}

ks_field_rc_t ks_field_map_iterate(const json_t *root, const char *path,
                                   ks_field_kv_fn fn, void *ud)
{
    const json_t *v, *val;
    const char *key;
    ks_field_rc_t rc = ks_field_lookup(root, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (!json_is_object(v))
        return KS_FIELD_WRONG_TYPE;
    /* json_object_foreach wants a non-const object; iterating does not
     * change it. */
    json_object_foreach((json_t *)v, key, val) {
        if (fn(key, json_is_string(val) ? json_string_value(val) : NULL, ud))
            break;
    }
    return KS_FIELD_OK;
}
