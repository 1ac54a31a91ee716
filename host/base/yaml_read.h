/*
 * Private: the host's typed reader of YAML fields, on top of yaml_node.h
 * (typing by the YAML 1.2 core schema, navigation, positions). A reader
 * walks one document, keeps the path of the field it is in
 * ("users[0].user.exec") and fails with "FILE:LINE:COL: PATH: message",
 * one rule per scalar type:
 *   integer  the core schema's integer (decimal, 0o, 0x) within int64; a
 *            quoted number is a string, and the message says so;
 *   string   a scalar of the core schema's string type; a plain scalar that
 *            reads as a boolean or a number is an error that says to quote
 *            it (Go cannot decode it into a string either); null or ""
 *            is "not set"; a NUL character is an error;
 *   boolean  true/True/TRUE, false/False/FALSE only (yes/no/on/off are
 *            strings in YAML 1.2, and the message says so);
 *   bytes    a string holding standard base64 (Go's []byte);
 *   mapping, sequence   as they are; null is "not set".
 * A field that is absent or null keeps the caller's default.
 *
 * Ownership: strings returned point into the document (valid while it
 * is); byte and string arrays are malloc'd for the caller. Errors fill
 * the reader's ks_error_t and return its code.
 * Thread-safety: a reader is used by one thread at a time.
 */
#ifndef KS_BASE_YAML_READ_H
#define KS_BASE_YAML_READ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/error.h"

typedef struct ks_yread {
    const char *file;      /* for messages; not copied */
    yaml_document_t *doc;  /* not owned */
    ks_error_t *err;       /* filled on failure */
    char what[256];        /* the object read ("pod default/x"); may be "" */
    char path[512];        /* the current field; "" at the top */
    size_t plen;
} ks_yread_t;

void ks_yread_init(ks_yread_t *r, const char *file, yaml_document_t *doc,
                   ks_error_t *err);

/* Enter field `name` or item `i` of the current path; both return the
 * length to give ks_yread_pop to leave it again. */
size_t ks_yread_push(ks_yread_t *r, const char *name);
size_t ks_yread_push_index(ks_yread_t *r, size_t i);
void ks_yread_pop(ks_yread_t *r, size_t len);

/* Fail at node n (NULL: no position) with
 * "FILE:LINE:COL: WHAT: PATH: message" (WHAT and PATH only when set).
 * Returns code. */
int ks_yread_fail(ks_yread_t *r, const yaml_node_t *n, int code,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ks_yread_vfail(ks_yread_t *r, const yaml_node_t *n, int code,
                   const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* The same without a reader: `path` may be NULL or "". */
int ks_yread_fail_at(ks_error_t *err, int code, const char *file,
                     const yaml_node_t *n, const char *path,
                     const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
int ks_yread_vfail_at(ks_error_t *err, int code, const char *file,
                      const yaml_node_t *n, const char *path,
                      const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

/* The value of `key` in mapping `map` (the last occurrence wins, as Go's
 * JSON decoding does); NULL when absent or null. */
yaml_node_t *ks_yread_get(const ks_yread_t *r, const yaml_node_t *map,
                          const char *key);

/* Field `key` of `map`, by the rules above. *node (may be NULL) gets the
 * value's node (NULL when absent or null). */
int ks_yread_str(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 const char **out, yaml_node_t **node);
int ks_yread_bool(ks_yread_t *r, const yaml_node_t *map, const char *key,
                  int *out, yaml_node_t **node);
int ks_yread_map(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 yaml_node_t **out);
int ks_yread_seq(ks_yread_t *r, const yaml_node_t *map, const char *key,
                 yaml_node_t **out);
/* The same rules for a node already in hand (a sequence item, a mapping
 * key), named by the current path; NULL or null is "not set" (*out NULL,
 * or unchanged for the integer). */
int ks_yread_node_str(ks_yread_t *r, const yaml_node_t *n, const char **out);
int ks_yread_node_int64(ks_yread_t *r, const yaml_node_t *n, int64_t *out);

/* Base64 decoded into *out (malloc'd; NULL and 0 when not set). */
int ks_yread_bytes(ks_yread_t *r, const yaml_node_t *map, const char *key,
                   unsigned char **out, size_t *len, yaml_node_t **node);
/* A sequence of strings (a null item is ""): *out a malloc'd array of
 * pointers into the document, NULL and 0 when not set or empty. */
int ks_yread_strings(ks_yread_t *r, const yaml_node_t *map, const char *key,
                     const char ***out, size_t *n_out);

#endif /* KS_BASE_YAML_READ_H */
