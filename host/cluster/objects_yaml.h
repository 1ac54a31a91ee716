/*
 * Private: reading cluster objects out of a libyaml document tree.
 *
 * A ks_yctx_t carries what every field reader needs: the file name and
 * document (for "FILE:LINE:COL" messages), the object being read ("pod
 * default/x") and the path to the current field
 * ("spec.containers[0].resources"), the intern table and the object's arena.
 * Readers return 0 or a negative KS_E* code after filling ctx->err.
 *
 * Conventions: an absent field and a field whose value is YAML null are the
 * same thing (the reader leaves its default). Unknown fields are ignored;
 * a field we read that has the wrong YAML type is an error. Scalars follow
 * the host's one rule per type (base/yaml_scalar.h), as apimachinery reads
 * a manifest: integers and booleans must be plain (a quoted "5" is a
 * string), a string field refuses a plain number or boolean (`version: 1`
 * must be quoted, as kubectl requires), and a mapping key is its text.
 */
#ifndef KS_CLUSTER_OBJECTS_YAML_H
#define KS_CLUSTER_OBJECTS_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/intern.h"
#include "base/yaml_node.h"
#include "base/yaml_read.h"
#include "ksched/types.h"

typedef struct ks_yctx {
    /* file, document, error, what ("pod default/x") and path
     * ("spec.containers[0]"): the host's one YAML field reader */
    ks_yread_t r;
    ks_intern_t *in;
    ks_arena_t *arena;
    /* While `counted` is set, ky_intern takes counted references (strings
     * that live as long as the object: a pod's uid, name, annotations) and
     * records them in refs; the object keeps them (ky_refs_keep) and gives
     * them back when freed (ky_refs_release). */
    int counted;
    const char **refs;
    size_t n_refs, cap_refs;
} ks_yctx_t;

/* Bits of ky_resources()'s `present`: which native names were given. */
enum {
    KY_RES_CPU = 1u << 0,
    KY_RES_MEMORY = 1u << 1,
    KY_RES_EPHEMERAL = 1u << 2,
    KY_RES_PODS = 1u << 3
};

/* A start_mark.line of KY_NO_MARK means "no position" (documents built in
 * memory from JSON): messages then give the field path only. */
#define KY_NO_MARK KS_YAML_NO_MARK

void ky_init(ks_yctx_t *c, const char *file, yaml_document_t *doc,
             ks_intern_t *in, ks_arena_t *arena, ks_error_t *err);
void ky_set_what(ks_yctx_t *c, const char *kind, const char *ns,
                 const char *name);

/* Fail at node `n` (may be NULL) with "FILE:LINE:COL: what: path: msg". */
int ky_fail(ks_yctx_t *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Arena allocation that reports ENOMEM through ctx. */
void *ky_alloc(ks_yctx_t *c, size_t n);
/* The interned copy of `s` (ENOMEM reported). */
const char *ky_intern(ks_yctx_t *c, const char *s, size_t n);

/* Move the counted references into the object's arena (*out, *n); after a
 * failure, or when the object is not kept, ky_refs_drop gives them back.
 * Both free the context's list. ky_refs_release gives back a kept list. */
int ky_refs_keep(ks_yctx_t *c, const char ***out, uint32_t *n);
void ky_refs_drop(ks_yctx_t *c);
void ky_refs_release(ks_intern_t *in, const char *const *refs, uint32_t n);

/* Path handling: push returns the length to pop back to. */
size_t ky_push(ks_yctx_t *c, const char *field);
size_t ky_push_index(ks_yctx_t *c, size_t i);
void ky_pop(ks_yctx_t *c, size_t len);

yaml_node_t *ky_node(const ks_yctx_t *c, int id);
int ky_is_null(const yaml_node_t *n);
int ky_is_map(const yaml_node_t *n);
int ky_is_seq(const yaml_node_t *n);
/* The text of a scalar node, NULL when it is not a scalar. */
const char *ky_scalar(const yaml_node_t *n);
/* Value of `key` in mapping `map`; NULL when absent, null, or `map` is not
 * a mapping. The last occurrence wins. */
yaml_node_t *ky_get(const ks_yctx_t *c, const yaml_node_t *map,
                    const char *key);
/* Number of items of a sequence node. */
uint32_t ky_seq_len(const yaml_node_t *n);
yaml_node_t *ky_seq_at(const ks_yctx_t *c, const yaml_node_t *n, uint32_t i);

/* Parse the sequence `n` (NULL: absent) into a new array of `size`-byte
 * elements in the object's arena: for each item, with the index pushed on
 * the path, check it is a mapping and call item(c, node, element, ud).
 * *out is NULL and *cnt 0 for an absent or empty sequence. Returns the
 * first failure. */
typedef int (*ky_item_fn)(ks_yctx_t *c, const yaml_node_t *item, void *elem,
                          void *ud);
int ky_seq_of_maps(ks_yctx_t *c, const yaml_node_t *n, size_t size,
                   ky_item_fn item, void *ud, void **out, uint32_t *cnt);

/* Typed readers of a node (NULL node = absent: the default is kept). Each
 * pushes nothing; callers push the field name first (the ky_f_* forms below
 * do both). */
int ky_expect_map(ks_yctx_t *c, const yaml_node_t *n);
int ky_expect_seq(ks_yctx_t *c, const yaml_node_t *n);
int ky_str(ks_yctx_t *c, const yaml_node_t *n, const char **out);
int ky_int32(ks_yctx_t *c, const yaml_node_t *n, int32_t *out);
int ky_int64(ks_yctx_t *c, const yaml_node_t *n, int64_t *out);
int ky_bool(ks_yctx_t *c, const yaml_node_t *n, int *out);
int ky_time(ks_yctx_t *c, const yaml_node_t *n, int64_t *unix_ms);
int ky_labels(ks_yctx_t *c, const yaml_node_t *n, ks_labels_t *out);
int ky_strings(ks_yctx_t *c, const yaml_node_t *n,
               const char *const **out, uint32_t *n_out);
/* A metav1.LabelSelector; *out stays NULL when the node is absent. */
int ky_label_selector(ks_yctx_t *c, const yaml_node_t *n,
                      const ks_label_selector_t **out);
/* A sequence of {key, operator, values}; node_ops allows Gt and Lt. */
int ky_requirements(ks_yctx_t *c, const yaml_node_t *n, int node_ops,
                    const ks_requirement_t **out, uint32_t *n_out);
/* A v1.ResourceList into fixed arrays (cpu in milli, the rest in base
 * units; scalar names: containing '/', hugepages-*, attachable-volumes-*;
 * other names ignored). `present` (may be NULL) gets KY_RES_* bits. */
int ky_resources(ks_yctx_t *c, const yaml_node_t *n, ks_resources_t *out,
                 unsigned *present);

/* Field forms: look `key` up in `map`, push it on the path, read it. */
int ky_f_str(ks_yctx_t *c, const yaml_node_t *map, const char *key,
             const char **out);
int ky_f_int32(ks_yctx_t *c, const yaml_node_t *map, const char *key,
               int32_t *out);
int ky_f_bool(ks_yctx_t *c, const yaml_node_t *map, const char *key,
              int *out);
int ky_f_time(ks_yctx_t *c, const yaml_node_t *map, const char *key,
              int64_t *unix_ms);
int ky_f_labels(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                ks_labels_t *out);
int ky_f_strings(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                 const char *const **out, uint32_t *n_out);
int ky_f_label_selector(ks_yctx_t *c, const yaml_node_t *map,
                        const char *key, const ks_label_selector_t **out);
int ky_f_resources(ks_yctx_t *c, const yaml_node_t *map, const char *key,
                   ks_resources_t *out, unsigned *present);

#endif
