/*
 * JSON merge patch (RFC 7386), the body of a PATCH with Content-Type
 * application/merge-patch+json: a member of the patch that is null
 * removes the target's member, an object member merges recursively, any
 * other value (arrays included) replaces the target's member whole. A
 * patch that is not an object replaces the target whole.
 *
 * jansson's json_object_update_recursive is not this: it stores a null
 * instead of removing the key, and does not replace a non-object target.
 *
 * Pure function; any thread (jansson values are not shared across
 * threads).
 */
#ifndef KS_SERVER_MERGE_PATCH_H
#define KS_SERVER_MERGE_PATCH_H

#include <jansson.h>

/* The patched document: a new reference (the target's own objects are
 * changed in place and reused when the target is an object; the patch is
 * only read, its values copied). NULL when out of memory (the target is
 * then in an unspecified but valid state). `target` may be NULL (an absent
 * document). */
json_t *ks_merge_patch(json_t *target, const json_t *patch);

#endif
