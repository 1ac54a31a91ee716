/*
 * Private: a node of a libyaml document written out as compact JSON, the
 * way sigs.k8s.io/yaml turns a manifest into the JSON the API server
 * decodes, with scalars typed as base/yaml_node.h types them (YAML 1.2
 * core schema): null, true/false, integers (0o and 0x ones in decimal),
 * floats (a text that is already a JSON number is kept as written;
 * .inf and .nan, which JSON cannot carry, become null), and strings for
 * everything else. Mapping keys are their scalar's text; a pair whose key
 * is not a scalar is left out. Keys keep their order (a key given twice
 * is written twice, as it was read).
 *
 * A document built from JSON (cluster/objects_json.c) comes back as the
 * same JSON, compact.
 *
 * Pure function on a document the caller owns; thread-safe.
 */
#ifndef KS_BASE_YAML_JSON_H
#define KS_BASE_YAML_JSON_H

#include <stddef.h>
#include <yaml.h>

#include "base/buf.h"

/* Append the JSON of `n` to `b`. 0; -1 when `n` nests deeper than
 * max_depth or the text would pass max_len bytes (aliases can make a small
 * document large); -2 when the buffer ran out of memory. On failure `b`
 * holds a partial text: the caller drops it. */
int ks_yaml_to_json(yaml_document_t *doc, const yaml_node_t *n, ks_buf_t *b,
                    int max_depth, size_t max_len);

#endif /* KS_BASE_YAML_JSON_H */
