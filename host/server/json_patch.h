/*
 * JSON patch (RFC 6902), the body of a PATCH with Content-Type
 * application/json-patch+json: an array of operations (add, remove,
 * replace, move, copy, test) on JSON pointers (RFC 6901: "/a/b/0", "~1"
 * for '/', "~0" for '~', "-" past an array's end for add), applied in
 * order; the first that fails fails the whole patch.
 *
 * Pure function; any thread (jansson values are not shared across
 * threads).
 */
#ifndef KS_SERVER_JSON_PATCH_H
#define KS_SERVER_JSON_PATCH_H

#include <stddef.h>

#include <jansson.h>

/* Apply `ops` to *doc (changed in place; an operation on the root path ""
 * replaces *doc, whose reference is then the caller's new one). 0; -1 with
 * the reason in err when an operation is malformed or does not apply (a
 * missing path, a failed test): *doc is then partly changed, the caller
 * throws it away. */
int ks_json_patch(json_t **doc, const json_t *ops, char *err, size_t errlen);

#endif
