/*
 * Private: reading nodes of a libyaml document, the one way every reader of
 * the host does it (configuration, manifests, conformance files).
 *
 * Scalars are typed by the YAML 1.2 core schema:
 *   null     ~ null Null NULL and the empty plain scalar, or any scalar
 *            tagged !!null;
 *   boolean  true True TRUE false False FALSE (not YAML 1.1's yes/no/on/off/
 *            y/n: those are strings);
 *   integer  [-+]?[0-9]+ (decimal, leading zeros allowed), 0o[0-7]+,
 *            0x[0-9a-fA-F]+;
 *   float    [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf
 *            (.Inf .INF), .nan (.NaN .NAN);
 *   string   everything else, and every quoted or block scalar.
 * Only plain scalars are resolved; a quoted "true" is the string "true".
 * Tags other than !!null are not looked at (libyaml gives untagged scalars
 * the !!str tag, so an explicit one could not be told apart); the document
 * builder (yaml_doc.h) records an explicit !!str or ! on a plain scalar as
 * single-quoted, which makes it a string.
 *
 * Positions are 1-based. Nodes built in memory without a position (from
 * JSON) carry start_mark.line == KS_YAML_NO_MARK.
 *
 * Pure functions on documents the caller owns; thread-safe.
 */
#ifndef KS_BASE_YAML_NODE_H
#define KS_BASE_YAML_NODE_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

/* start_mark.line of a node that has no position. */
#define KS_YAML_NO_MARK ((size_t)-1)

/* --- typing ------------------------------------------------------------- */

typedef enum ks_yaml_type {
    KS_YAML_ABSENT = 0, /* a NULL node */
    KS_YAML_NULL,
    KS_YAML_BOOL,
    KS_YAML_INT,
    KS_YAML_FLOAT,
    KS_YAML_STR,
    KS_YAML_SEQ,
    KS_YAML_MAP
} ks_yaml_type_t;

ks_yaml_type_t ks_yaml_type(const yaml_node_t *n);
/* "nothing", "null", "a boolean", "an integer", "a number", "a string",
 * "a sequence", "a mapping". */
const char *ks_yaml_type_name(ks_yaml_type_t t);
/* The type name, with the text of a non-null scalar (up to 40 characters):
 * "a string (\"x\")", "an integer (\"1\")", "a mapping", "null". Writes into
 * buf when it needs to; returns buf or a constant. */
const char *ks_yaml_describe(const yaml_node_t *n, char *buf, size_t len);

/* Is n absent (NULL) or a null scalar? */
int ks_yaml_is_null(const yaml_node_t *n);
int ks_yaml_is_map(const yaml_node_t *n);
int ks_yaml_is_seq(const yaml_node_t *n);
int ks_yaml_is_scalar(const yaml_node_t *n);
/* Is n a quoted or block scalar (a string whatever its text)? */
int ks_yaml_is_quoted(const yaml_node_t *n);

/* --- scalar values -------------------------------------------------------- */

/* The text of a scalar node (NUL-terminated, owned by the document; it may
 * also contain NULs: see ks_yaml_text_len), NULL when n is not a scalar. */
const char *ks_yaml_text(const yaml_node_t *n);
size_t ks_yaml_text_len(const yaml_node_t *n);

/* A boolean scalar's value: 0, or -1 when n is not a boolean. */
int ks_yaml_bool(const yaml_node_t *n, int *out);
/* An integer scalar's value: 0; -1 when n is not an integer; -2 when it is
 * one but outside the int64 range. */
int ks_yaml_int64(const yaml_node_t *n, int64_t *out);
/* An integer or float scalar's value (.inf, .nan included): 0, or -1. */
int ks_yaml_double(const yaml_node_t *n, double *out);
/* Is n a plain scalar that YAML 1.1 reads as a boolean and YAML 1.2 as a
 * string (y Y yes Yes YES n N no No NO on On ON off Off OFF)? */
int ks_yaml_is_yaml11_bool(const yaml_node_t *n);
/* "" or, for such a scalar, the advice to append to "expected a boolean"
 * messages: "; ksched reads YAML 1.2, where yes/no/on/off are strings:
 * write true or false". */
const char *ks_yaml_bool_hint(const yaml_node_t *n);

/* --- navigation ------------------------------------------------------------ */

yaml_node_t *ks_yaml_node(yaml_document_t *doc, int id);
/* Items of a sequence (0 / NULL when n is not one or i is out of range). */
size_t ks_yaml_seq_len(const yaml_node_t *n);
yaml_node_t *ks_yaml_seq_at(yaml_document_t *doc, const yaml_node_t *seq,
                            size_t i);
/* Pairs of a mapping (0 / NULL likewise). */
size_t ks_yaml_map_len(const yaml_node_t *n);
yaml_node_t *ks_yaml_map_key(yaml_document_t *doc, const yaml_node_t *map,
                             size_t i);
yaml_node_t *ks_yaml_map_value(yaml_document_t *doc, const yaml_node_t *map,
                               size_t i);
/* The value of scalar key `key` in `map` (the last occurrence wins, as in
 * Go's JSON decoding), as is: it may be a null scalar. NULL when absent or
 * when map is not a mapping. */
yaml_node_t *ks_yaml_get(yaml_document_t *doc, const yaml_node_t *map,
                         const char *key);

/* --- positions ------------------------------------------------------------- */

/* 1-based line / column of a node; 0 for NULL or a node without one. */
uint32_t ks_yaml_line(const yaml_node_t *n);
uint32_t ks_yaml_column(const yaml_node_t *n);
/* "FILE:LINE:COL" of a node or a mark, or "FILE" without a position.
 * Returns buf. */
const char *ks_yaml_where(char *buf, size_t len, const char *file,
                          const yaml_node_t *n);
const char *ks_yaml_where_mark(char *buf, size_t len, const char *file,
                               yaml_mark_t mark);

#endif /* KS_BASE_YAML_NODE_H */
