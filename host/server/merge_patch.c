/* JSON merge patch, RFC 7386 (merge_patch.h). */
#include "merge_patch.h"

/* A copy of `patch` with its null members removed (RFC 7386: merging a
 * patch into an absent or non-object target starts from {}). */
static json_t *strip_nulls(const json_t *patch)
{
    const char *k;
    json_t *v, *out;
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    if ((out = json_object()) == NULL)
        return NULL;
    json_object_foreach((json_t *)patch, k, v) {
        json_t *c;
        if (json_is_null(v))
            continue;
        if ((c = strip_nulls(v)) == NULL ||
            json_object_set_new(out, k, c) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

json_t *ks_merge_patch(json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    if (!json_is_object(target))
        return strip_nulls(patch);
    json_object_foreach((json_t *)patch, k, v) {
        json_t *cur, *merged;
        if (json_is_null(v)) {
            json_object_del(target, k);
            continue;
        }
        cur = json_object_get(target, k);
        if (json_is_object(v) && json_is_object(cur)) {
            json_incref(cur);
            merged = ks_merge_patch(cur, v);
            json_decref(cur);
        } else {
            merged = strip_nulls(v);
        }
        if (merged == NULL || json_object_set_new(target, k, merged) != 0)
            return NULL;
    }
    return json_incref(target);
}
