/*
 * Private pieces shared by the config reader's files. Not for use outside
 * host/config/.
 *
 * config_arena.c   the arena that owns every byte of a ks_config_t
 * config_yaml.c    libyaml helpers: positions, scalar typing, field tables,
 *                  problem collection
 * config_args.c    ks_args_t trees from pluginConfig[].args
 * config_defaults.c  extension point names, the default plugin set, the merge
 * config_read.c    the KubeSchedulerConfiguration schema and entry points
 *
 * Thread-safety: every function here works on objects its caller owns; none
 * touches shared state.
 */
#ifndef KS_CONFIG_INTERNAL_H
#define KS_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "config.h"

/* --- arena --------------------------------------------------------------- */

typedef struct ks_cfg_arena_block ks_cfg_arena_block_t;

typedef struct ks_cfg_arena {
    ks_cfg_arena_block_t *head;
    int failed; /* an allocation failed at some point */
} ks_cfg_arena_t;

/* A new empty arena (malloc'd), or NULL. Free with ks_cfg_arena_free(). */
ks_cfg_arena_t *ks_cfg_arena_new(void);
void ks_cfg_arena_free(ks_cfg_arena_t *a);
/* Zeroed memory aligned for any type, valid until the arena is freed; NULL
 * (and a->failed set) when out of memory. */
void *ks_cfg_arena_alloc(ks_cfg_arena_t *a, size_t size);
/* Copies of `s` / of `len` bytes of `s` plus a NUL; NULL when out of memory. */
char *ks_cfg_arena_strdup(ks_cfg_arena_t *a, const char *s);
char *ks_cfg_arena_strndup(ks_cfg_arena_t *a, const char *s, size_t len);

/* --- reading context and problems ---------------------------------------- */

#define KS_CFG_MAX_SHOWN 40 /* problems written out; later ones are counted */

typedef struct ks_cfg_problem_rec {
    uint32_t line, column;
    int code;
    char *msg; /* malloc'd */
} ks_cfg_problem_rec_t;

typedef struct ks_cfg_ctx {
    const char *file;      /* name used in messages */
    yaml_document_t *doc;
    ks_error_t *err;       /* may be NULL */
    ks_cfg_arena_t *arena; /* owner of what is built */
    unsigned n_problems;
    int first_code;        /* code of the first problem in file order */
    ks_cfg_problem_rec_t *recs; /* problems kept until finish */
    size_t n_recs, cap_recs;
} ks_cfg_ctx_t;

/* 1-based position of a node. */
uint32_t ks_cfg_line(const yaml_node_t *n);
uint32_t ks_cfg_column(const yaml_node_t *n);

/* Record one problem "FILE:LINE:COL: message" (the position of `at`, or
 * 1:1 when `at` is NULL). Problems are kept in the context until
 * ks_cfg_problems_finish(). */
void ks_cfg_problem(ks_cfg_ctx_t *c, int code, const yaml_node_t *at,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ks_cfg_problem_at(ks_cfg_ctx_t *c, int code, uint32_t line, uint32_t col,
                       const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Write the recorded problems into c->err sorted by position (at most
 * KS_CFG_MAX_SHOWN, fewer when the message would not fit, then a count of
 * the rest), set c->first_code to the
 * first one's code, and release them. Call once on every path that recorded
 * problems. */
void ks_cfg_problems_finish(ks_cfg_ctx_t *c);

/* --- scalars -------------------------------------------------------------- */

typedef enum ks_cfg_scalar_kind {
    KS_CFG_S_NULL = 0,
    KS_CFG_S_BOOL,
    KS_CFG_S_INT,
    KS_CFG_S_FLOAT,
    KS_CFG_S_STRING
} ks_cfg_scalar_kind_t;

/* How a YAML-to-JSON conversion would type this scalar: a quoted or block
 * scalar is always a string; a plain one may be null, bool, int or float. */
ks_cfg_scalar_kind_t ks_cfg_scalar_kind(const yaml_node_t *n);
/* Is the node absent, or the null scalar? */
int ks_cfg_is_null(const yaml_node_t *n);
/* The text of a scalar node (NUL-terminated; owned by the document). */
const char *ks_cfg_text(const yaml_node_t *n);
/* "a mapping", "a sequence", "the string \"x\"", ... for messages; writes
 * into buf and returns it. */
const char *ks_cfg_describe(const yaml_node_t *n, char *buf, size_t len);

/* --- field tables --------------------------------------------------------- */

typedef enum ks_cfg_type {
    KS_CFG_T_ANY = 0,
    KS_CFG_T_MAP,
    KS_CFG_T_SEQ,
    KS_CFG_T_STR,
    KS_CFG_T_INT,
    KS_CFG_T_BOOL,
    KS_CFG_T_NUM /* int or float */
} ks_cfg_type_t;

typedef struct ks_cfg_field {
    const char *name;
    ks_cfg_type_t type;
} ks_cfg_field_t;

/*
 * Walk mapping `map` (at path `what` in messages, e.g. "profiles[0]"; "" for
 * the top level) against `fields` (at most 32). vals[i] receives the value node of fields[i] and keys[i]
 * its key node (keys may be NULL); a field that is absent, null or of the
 * wrong type is left NULL. Unknown keys, repeated keys and type mismatches are
 * reported. `map` must be a mapping node.
 */
void ks_cfg_fields(ks_cfg_ctx_t *c, yaml_node_t *map, const char *what,
                   const ks_cfg_field_t *fields, size_t n, yaml_node_t **vals,
                   yaml_node_t **keys);

/* Parse an integer scalar already typed KS_CFG_S_INT. Returns 0, or -1 when
 * out of the int64 range. */
int ks_cfg_int64(const yaml_node_t *n, int64_t *out);

/* Item i of a sequence node, or NULL. */
yaml_node_t *ks_cfg_seq_item(ks_cfg_ctx_t *c, yaml_node_t *seq, size_t i);
size_t ks_cfg_seq_len(const yaml_node_t *seq);

/* Load the single document of a YAML text. On failure records the problem
 * (malformed YAML, empty input, more than one document) and returns -1; on
 * success *doc must be deleted by the caller. */
int ks_cfg_yaml_load(ks_cfg_ctx_t *c, const char *yaml, size_t len,
                     yaml_document_t *doc);

/* --- args ----------------------------------------------------------------- */

/* Build the args tree of `n` (a mapping, or null for an empty map) into the
 * arena. Root-level "apiVersion" and "kind" keys are left out. Reports a
 * non-mapping root, repeated keys and excessive nesting. Returns NULL only
 * after reporting a problem (or when out of memory). */
ks_args_t *ks_cfg_args_build(ks_cfg_ctx_t *c, yaml_node_t *n,
                             const char *what);
/* Deep equality of two trees (positions ignored); NULL equals NULL only. */
int ks_cfg_args_equal(const ks_args_t *a, const ks_args_t *b);

/* --- defaults and merge ----------------------------------------------------- */

/* The default plugins (enabled at multiPoint, in order). */
const ks_plugin_ref_t *ks_cfg_default_plugins(size_t *n);
/* Merge `custom` into `def` like upstream's mergePluginSet, into `out`
 * (arrays allocated in the arena). Returns 0, or KS_ENOMEM. */
int ks_cfg_merge_set(ks_cfg_arena_t *a, const ks_plugin_set_t *def,
                     const ks_plugin_set_t *custom, ks_plugin_set_t *out);
/* Fill prof->points from the default set merged with `custom` (an array of
 * KS_EP_COUNT sets; may be NULL for "no plugins field"). */
int ks_cfg_merge_profile(ks_cfg_arena_t *a, const ks_plugin_set_t *custom,
                         ks_profile_config_t *prof);

#endif /* KS_CONFIG_INTERNAL_H */
