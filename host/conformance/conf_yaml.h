/*
 * Private: the small libyaml helpers the scenario and expected-file readers
 * share. A document is loaded whole (yaml_parser_load) and walked; every
 * message names "FILE:LINE:COL" (1-based) of the node at fault.
 *
 * Thread-safety: none needed (no shared state); one document per thread.
 */
#ifndef KS_CONF_YAML_H
#define KS_CONF_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/error.h"

/* Parse the single document of `path` into *doc (delete it with
 * yaml_document_delete). Fails with "PATH: cannot open ..." or
 * "PATH:LINE:COL: <parser problem>", or when the file holds no document or
 * more than one. */
int ks_cy_load_file(const char *path, yaml_document_t *doc, ks_error_t *err);

/* Fill err with "FILE:LINE:COL: message" for node n (n may be NULL: then
 * "FILE: message"). Returns the code. */
int ks_cy_fail(ks_error_t *err, int code, const char *file,
               const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* 1-based line of a node (0 for NULL). */
uint32_t ks_cy_line(const yaml_node_t *n);

/* A plain or quoted scalar's text, NULL when n is not a scalar. */
const char *ks_cy_scalar(const yaml_node_t *n);
/* Is n absent (NULL) or the YAML null (`~`, `null`, empty plain scalar)? */
int ks_cy_is_null(const yaml_node_t *n);

/* Value of `key` in a mapping, NULL when absent. */
yaml_node_t *ks_cy_get(yaml_document_t *doc, const yaml_node_t *map,
                       const char *key);

/* Check that every key of `map` is one of the NULL-terminated `valid`
 * names; fails naming the first unknown key and listing the valid ones. */
int ks_cy_check_keys(yaml_document_t *doc, const char *file,
                     const yaml_node_t *map, const char *const *valid,
                     const char *what, ks_error_t *err);

/* Typed readers. `what` names the field in messages. The results are
 * malloc'd (free with free / ks_cy_strv_free). */
int ks_cy_string(const char *file, const yaml_node_t *n, const char *what,
                 char **out, ks_error_t *err);
int ks_cy_int64(const char *file, const yaml_node_t *n, const char *what,
                int64_t *out, ks_error_t *err);
/* A sequence of scalars (null = empty). */
int ks_cy_strv(yaml_document_t *doc, const char *file, const yaml_node_t *n,
               const char *what, char ***out, size_t *n_out, ks_error_t *err);
void ks_cy_strv_free(char **v, size_t n);

#endif
