/*
 * Private: JSON read as Go's encoding/json reads it into structs whose
 * fields carry no json tags (or tags Go still matches loosely), for the
 * answers kube-scheduler decodes with encoding/json rather than with
 * apimachinery's case-sensitive serializer: scheduler extenders' answers
 * (k8s.io/kube-scheduler/extender/v1) and the apiVersion/kind of an exec
 * credential plugin's output.
 *
 * The rules carried over from encoding/json:
 * - An object key fills a struct field when it equals the field's name,
 *   or equals it under Go's case folding (ASCII letters in either case,
 *   and the two non-ASCII runes whose fold orbit reaches ASCII: U+212A
 *   KELVIN SIGN folds to K, U+017F LATIN SMALL LETTER LONG S to S).
 *   `NodeNames`, `nodenames` and `nodeNames` all fill NodeNames.
 * - Keys are processed in document order and duplicates are kept, so the
 *   last key that fills a field wins (ks_gj_field_next gives them all).
 *   A map field is filled by every matching key in turn: entries merge,
 *   and a null empties it (ks_gj_map_each).
 * - Unknown keys are ignored.
 * - Numbers into Go int64 must be integers in range (no fraction, no
 *   exponent); null into a non-pointer scalar leaves it unchanged.
 * - Only the first value of the body is read (json.Decoder.Decode): what
 *   follows it is ignored. An empty body is the error "EOF".
 * - Invalid UTF-8 and lone surrogates in strings become U+FFFD.
 * - Error texts are Go's ("invalid character 'x' looking for beginning of
 *   value", "unexpected EOF", "json: cannot unmarshal string into Go
 *   struct field HostPriority.Score of type int64").
 *
 * A parsed document is one arena: every value and string lives until
 * ks_gj_free. Strings are NUL-terminated (a \u0000 inside shortens the C
 * view; `len` has the whole length). Thread-safe: a document may be read
 * from any thread once parsed; parsing uses no shared state.
 */
#ifndef KS_BASE_JSON_GO_H
#define KS_BASE_JSON_GO_H

#include <stddef.h>
#include <stdint.h>

typedef enum ks_gj_type {
    KS_GJ_NULL,
    KS_GJ_BOOL,
    KS_GJ_NUMBER,
    KS_GJ_STRING,
    KS_GJ_ARRAY,
    KS_GJ_OBJECT
} ks_gj_type_t;

typedef struct ks_gj_value ks_gj_value_t;
struct ks_gj_value {
    ks_gj_type_t type;
    int boolean;       /* BOOL */
    const char *text;  /* STRING: the decoded text; NUMBER: the literal */
    size_t len;        /* of text */
    size_t n;          /* ARRAY: items; OBJECT: pairs (duplicates kept) */
    const char **keys; /* OBJECT: keys[i] pairs with items[i] */
    size_t *key_lens;
    ks_gj_value_t **items;
};

typedef struct ks_gj_doc ks_gj_doc_t;

/* Parses the first JSON value of buf[0..len). NULL on a syntax error or
 * out of memory, with msg filled with Go's text for it. Nesting deeper
 * than 10,000 is an error, as in Go. */
ks_gj_doc_t *ks_gj_parse(const char *buf, size_t len, char *msg,
                         size_t msg_len);
const ks_gj_value_t *ks_gj_root(const ks_gj_doc_t *doc);
void ks_gj_free(ks_gj_doc_t *doc);

/* Does the object key fill the Go field `field` (ASCII name)? */
int ks_gj_key_fills(const char *key, size_t key_len, const char *field);

/* The values of every key filling `field`, in document order: the index
 * after `*at` (start with *at = 0) of the next one, or NULL at the end.
 * Go decodes each in turn, so a type error in any of them fails the
 * decoding, and a scalar keeps the last non-null one. */
const ks_gj_value_t *ks_gj_field_next(const ks_gj_value_t *obj,
                                      const char *field, size_t *at);

/* A Go map[string]X field: calls fn(ud, key, value) for each entry of the
 * map Go would end with, in the order the entries were first set after
 * the last null; a key set again later keeps its place and takes the
 * later value. 0, 1 when the field is absent or null (a nil map), or -1
 * when a matching value is neither an object nor null (*bad is set to
 * it), or fn's non-zero result. */
int ks_gj_map_each(const ks_gj_value_t *obj, const char *field,
                   int (*fn)(void *ud, const char *key,
                             const ks_gj_value_t *v),
                   void *ud, const ks_gj_value_t **bad);

/* A JSON number literal as Go's int64: 0, or -1 when it has a fraction or
 * an exponent or is out of range. */
int ks_gj_int64(const ks_gj_value_t *v, int64_t *out);

/* Fills msg with Go's UnmarshalTypeError text: "json: cannot unmarshal
 * KIND into Go struct field STRUCT.FIELD of type TYPE" (or "into Go value
 * of type TYPE" when strct is NULL). Returns -1 for the caller to pass
 * on. */
int ks_gj_type_error(char *msg, size_t msg_len, const ks_gj_value_t *v,
                     int for_int, const char *strct, const char *field,
                     const char *type);

#endif
