/*
 * Private pieces shared by the config reader's files. Not for use outside
 * host/config/.
 *
 * config_yaml.c    problem collection, field tables, loading the document
 *                  (through base/yaml_doc.h: YAML 1.2 core schema, alias
 *                  limits)
 * config_args.c    ks_args_t trees from pluginConfig[].args
 * config_defaults.c  extension point names, the default plugin set, the merge
 * config_read.c    the KubeSchedulerConfiguration schema and entry points
 *
 * Every byte of a ks_config_t comes from one base arena (base/arena.h).
 *
 * Thread-safety: every function here works on objects its caller owns; none
 * touches shared state.
 */
#ifndef KS_CONFIG_INTERNAL_H
#define KS_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "base/arena.h"
#include "base/yaml_doc.h"
#include "base/yaml_node.h"
#include "config.h"

/* First chunk of a config's arena: a typical configuration fits. */
#define KS_CFG_ARENA_FIRST 4096

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
    ks_arena_t *arena;     /* owner of what is built */
    unsigned n_problems;
    int first_code;        /* code of the first problem in file order */
    ks_cfg_problem_rec_t *recs; /* problems kept until finish */
    size_t n_recs, cap_recs;
} ks_cfg_ctx_t;

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

/* Load the single document of a YAML text (base/yaml_doc.h: alias limits
 * included). On failure records the problem (malformed YAML, an alias bomb,
 * empty input, more than one document) and returns -1; on success *doc
 * must be deleted by the caller. */
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
int ks_cfg_merge_set(ks_arena_t *a, const ks_plugin_set_t *def,
                     const ks_plugin_set_t *custom, ks_plugin_set_t *out);
/* Fill prof->points from the default set merged with `custom` (an array of
 * KS_EP_COUNT sets; may be NULL for "no plugins field"). */
int ks_cfg_merge_profile(ks_arena_t *a, const ks_plugin_set_t *custom,
                         ks_profile_config_t *prof);

#endif /* KS_CONFIG_INTERNAL_H */
