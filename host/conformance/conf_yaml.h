/*
 * Private: the conformance readers' side of YAML (scenario and expected
 * files): messages that name "FILE:LINE:COL" (1-based) of the node at
 * fault, and typed readers whose results are malloc'd. Loading, typing
 * (YAML 1.2 core schema), navigation and positions are base/yaml_node.h and
 * base/yaml_doc.h, with their alias limits.
 *
 * Thread-safety: none needed (no shared state); one document per thread.
 */
#ifndef KS_CONF_YAML_H
#define KS_CONF_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/error.h"
#include "base/yaml_doc.h"
#include "base/yaml_node.h"

/* Parse the single document of `path` into *doc (delete it with
 * yaml_document_delete). Fails with "PATH: cannot open ..." or
 * "PATH:LINE:COL: <problem>" (malformed YAML, an alias bomb), or when the
 * file holds no document or more than one. */
int ks_cy_load_file(const char *path, yaml_document_t *doc, ks_error_t *err);

/* Fill err with "FILE:LINE:COL: message" for node n (n may be NULL: then
 * "FILE: message"). Returns the code. */
int ks_cy_fail(ks_error_t *err, int code, const char *file,
               const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Check that every key of `map` is one of the NULL-terminated `valid`
 * names; fails naming the first unknown key and listing the valid ones. */
int ks_cy_check_keys(yaml_document_t *doc, const char *file,
                     const yaml_node_t *map, const char *const *valid,
                     const char *what, ks_error_t *err);

/* Typed readers, by the rules of base/yaml_read.h (a string is a string
 * of the core schema: a plain 1 or true must be quoted; null or "" is "").
 * `what` names the field in messages. The results are malloc'd (free
 * with free / ks_cy_strv_free). */
int ks_cy_string(const char *file, const yaml_node_t *n, const char *what,
                 char **out, ks_error_t *err);
int ks_cy_int64(const char *file, const yaml_node_t *n, const char *what,
                int64_t *out, ks_error_t *err);
/* A sequence of scalars (null = empty). */
int ks_cy_strv(yaml_document_t *doc, const char *file, const yaml_node_t *n,
               const char *what, char ***out, size_t *n_out, ks_error_t *err);
void ks_cy_strv_free(char **v, size_t n);

#endif
