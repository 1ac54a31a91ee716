/*
 * Private: field-path reads over a compact JSON tree (object_tree.h), for
 * the host API's object accessors (plugin.h, ABI 1.3: ks_object_t and "Field paths").
 *
 * A path is a sequence of segments: a name ("spec"), separated by dots;
 * [N] (an array index, decimal digits, no sign); or ["key"] (a map key
 * written as a JSON-like string: \" and \\ are its only escapes), which may
 * follow a name or another bracket without a dot. "" is the root. Examples:
 * "spec.accessModes[0]", "metadata.labels[\"topology.kubernetes.io/zone\"]",
 * "items[2].name". Malformed: an empty name ("a..b", ".a", "a."), an
 * unterminated or empty bracket, a non-digit index, text after a bracket
 * other than '.' or '[', a path longer than KS_FIELD_PATH_MAX bytes.
 *
 * Lookups never allocate and never change the tree, so any number of
 * threads may read one tree at once (jansson's reads are pure).
 */
#ifndef KS_CLUSTER_OBJECT_VIEW_H
#define KS_CLUSTER_OBJECT_VIEW_H

#include <stdint.h>

#include "cluster/object_tree.h"
#include "ksched/plugin.h"

#define KS_FIELD_PATH_MAX 1024

/* The value at `path` in tree `t` (NULL: no tree): KS_FIELD_OK with *out
 * set (never JSON null), KS_FIELD_MISSING (absent, null, or a segment
 * that does not apply: an index into a non-array, a name into a non-map,
 * an index out of range) or KS_FIELD_BAD_PATH. */
ks_field_rc_t ks_field_lookup(const ks_otree_t *t, const char *path,
                              const ks_onode_t **out);

/* Typed reads; see plugin.h's object_* members for what each returns. */
ks_field_rc_t ks_field_string(const ks_otree_t *t, const char *path,
                              const char **out);
ks_field_rc_t ks_field_int(const ks_otree_t *t, const char *path,
                           int64_t *out);
ks_field_rc_t ks_field_bool(const ks_otree_t *t, const char *path, int *out);
ks_field_rc_t ks_field_len(const ks_otree_t *t, const char *path,
                           uint32_t *out);
ks_field_type_t ks_field_type(const ks_otree_t *t, const char *path);
ks_field_rc_t ks_field_map_iterate(const ks_otree_t *t, const char *path,
                                   ks_field_kv_fn fn, void *ud);

#endif /* KS_CLUSTER_OBJECT_VIEW_H */
