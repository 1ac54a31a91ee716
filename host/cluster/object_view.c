/*
 * Field-path reads over a compact JSON tree (object_view.h): the path is walked
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

ks_field_rc_t ks_field_lookup(const ks_otree_t *t, const char *path,
                              const ks_onode_t **out)
{
    const ks_onode_t *cur = ks_otree_root(t);
    const char *p = path;
    int missing = 0;
    seg_t sg;
    if (t == NULL || path == NULL || strlen(path) > KS_FIELD_PATH_MAX)
        return path == NULL || t == NULL ? KS_FIELD_MISSING
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
            cur = cur->type == KS_ON_ARRAY ? ks_onode_at(t, cur, sg.index)
                                           : NULL;
        else
            cur = ks_onode_get(t, cur, sg.key);
        if (cur == NULL || cur->type == KS_ON_NULL)
            missing = 1;
    }
    if (missing || cur == NULL || cur->type == KS_ON_NULL)
        return KS_FIELD_MISSING;
    *out = cur;
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_string(const ks_otree_t *t, const char *path,
                              const char **out)
{
    const ks_onode_t *v;
    ks_field_rc_t rc = ks_field_lookup(t, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (v->type != KS_ON_STRING)
        return KS_FIELD_WRONG_TYPE;
    *out = ks_onode_str(t, v);
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_int(const ks_otree_t *t, const char *path,
                           int64_t *out)
{
    const ks_onode_t *v;
    ks_field_rc_t rc = ks_field_lookup(t, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (v->type != KS_ON_INT)
        return KS_FIELD_WRONG_TYPE;
    *out = v->v.i;
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_bool(const ks_otree_t *t, const char *path, int *out)
{
    const ks_onode_t *v;
    ks_field_rc_t rc = ks_field_lookup(t, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (v->type != KS_ON_TRUE && v->type != KS_ON_FALSE)
        return KS_FIELD_WRONG_TYPE;
    *out = v->type == KS_ON_TRUE;
    return KS_FIELD_OK;
}

ks_field_rc_t ks_field_len(const ks_otree_t *t, const char *path,
                           uint32_t *out)
{
    const ks_onode_t *v;
    ks_field_rc_t rc = ks_field_lookup(t, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (v->type != KS_ON_ARRAY && v->type != KS_ON_MAP)
        return KS_FIELD_WRONG_TYPE;
    *out = v->v.kids.n;
    return KS_FIELD_OK;
}

ks_field_type_t ks_field_type(const ks_otree_t *t, const char *path)
{
    const ks_onode_t *v;
    switch (ks_field_lookup(t, path, &v)) {
    case KS_FIELD_OK:
        break;
    case KS_FIELD_BAD_PATH:
        return KS_FIELD_INVALID;
    default:
        return KS_FIELD_ABSENT;
    }
    switch (v->type) {
    case KS_ON_STRING:
        return KS_FIELD_STRING;
    case KS_ON_INT:
        return KS_FIELD_INT;
    case KS_ON_REAL:
        return KS_FIELD_REAL;
    case KS_ON_TRUE:
    case KS_ON_FALSE:
        return KS_FIELD_BOOL;
    case KS_ON_ARRAY:
        return KS_FIELD_ARRAY;
    case KS_ON_MAP:
        return KS_FIELD_MAP;
    default:
        return KS_FIELD_ABSENT;
    }
}

ks_field_rc_t ks_field_map_iterate(const ks_otree_t *t, const char *path,
                                   ks_field_kv_fn fn, void *ud)
{
    const ks_onode_t *v, *m;
    uint32_t i;
    ks_field_rc_t rc = ks_field_lookup(t, path, &v);
    if (rc != KS_FIELD_OK)
        return rc;
    if (v->type != KS_ON_MAP)
        return KS_FIELD_WRONG_TYPE;
    for (i = 0; (m = ks_onode_at(t, v, i)) != NULL; i++)
        if (fn(ks_onode_key(t, m),
               m->type == KS_ON_STRING ? ks_onode_str(t, m) : NULL, ud))
            break;
    return KS_FIELD_OK;
}
