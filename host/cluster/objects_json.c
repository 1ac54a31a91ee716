/* Cluster objects from jansson trees, through an in-memory libyaml
 * document read by the manifest field readers. */
#include "objects_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "objects_yaml.h"

/* Add `j` to `doc`; returns the node id (> 0) or 0 on failure, with err
 * filled. */
static int add_node(yaml_document_t *doc, const json_t *j, int depth,
                    const char *what, ks_error_t *err)
{
    char num[64];
    const char *text = NULL;
    int len = -1, id;
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

    if (depth > KS_JSON_MAX_DEPTH) {
        ks_error_set(err, KS_ESCHEMA, "%s: nested more than %d levels deep",
                     what, KS_JSON_MAX_DEPTH);
        return 0;
    }
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *v;
        id = yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
        if (id == 0)
            goto oom;
        json_object_foreach((json_t *)j, key, v) {
            int k = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)key,
                                             (int)strlen(key),
                                             YAML_DOUBLE_QUOTED_SCALAR_STYLE);
            int val;
            if (k == 0)
                goto oom;
            if ((val = add_node(doc, v, depth + 1, what, err)) == 0)
                return 0;
            if (!yaml_document_append_mapping_pair(doc, id, k, val))
                goto oom;
        }
        return id;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *v;
        id = yaml_document_add_sequence(doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
        if (id == 0)
            goto oom;
        json_array_foreach((json_t *)j, i, v) {
            int val = add_node(doc, v, depth + 1, what, err);
            if (val == 0)
                return 0;
            if (!yaml_document_append_sequence_item(doc, id, val))
                goto oom;
        }
        return id;
    }
    case JSON_STRING:
        text = json_string_value(j);
        len = (int)json_string_length(j);
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        break;
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(j));
        text = num;
        break;
    case JSON_REAL:
        snprintf(num, sizeof num, "%.17g", json_real_value(j));
        text = num;
        break;
    case JSON_TRUE:
        text = "true";
        break;
    case JSON_FALSE:
        text = "false";
        break;
    case JSON_NULL:
        text = "null";
        break;
    }
    if (len < 0)
        len = (int)strlen(text);
    id = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)text, len, style);
    if (id == 0)
        goto oom;
    return id;
oom:
    ks_error_set(err, KS_ENOMEM, "%s: out of memory", what);
    return 0;
}

/* Build the document for `obj` and hand its root to `read`. */
typedef int (*read_fn)(const char *file, void *doc, void *node, void *ud,
                       void **out, ks_error_t *err);

static int from_json(const char *what, const json_t *obj, read_fn read,
                     void *ud, void **out, ks_error_t *err)
{
    yaml_document_t doc;
    yaml_node_t *root;
    int id, rc;
    size_t i, n;
    *out = NULL;
    if (!json_is_object(obj))
        return ks_error_set(err, KS_ESCHEMA, "%s: expected a JSON object",
                            what);
    if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1))
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", what);
    if ((id = add_node(&doc, obj, 0, what, err)) == 0) {
        yaml_document_delete(&doc);
        return err && err->code ? err->code : KS_ENOMEM;
    }
    /* No line or column: the messages give the field path. */
    n = (size_t)(doc.nodes.top - doc.nodes.start);
    for (i = 0; i < n; i++)
        doc.nodes.start[i].start_mark.line = KY_NO_MARK;
    root = yaml_document_get_node(&doc, id);
    rc = read(what, &doc, root, ud, out, err);
    yaml_document_delete(&doc);
    return rc;
}

static int rd_pod(const char *f, void *d, void *n, void *ud, void **out,
                  ks_error_t *err)
{
    return ks_pod_from_yaml(f, d, n, ud, (ks_pod_t **)out, err);
}

static int rd_node(const char *f, void *d, void *n, void *ud, void **out,
                   ks_error_t *err)
{
    return ks_node_from_yaml(f, d, n, ud, (ks_node_t **)out, err);
}

static int rd_ns(const char *f, void *d, void *n, void *ud, void **out,
                 ks_error_t *err)
{
    return ks_namespace_from_yaml(f, d, n, ud, (ks_namespace_t **)out, err);
}

typedef struct owner_ud {
    const char *kind;
    ks_intern_t *in;
} owner_ud_t;

static int rd_owner(const char *f, void *d, void *n, void *ud, void **out,
                    ks_error_t *err)
{
    owner_ud_t *o = ud;
    return ks_workload_from_yaml(o->kind, f, d, n, o->in,
                                 (ks_service_t **)out, err);
}

int ks_pod_from_json(const char *what, const json_t *obj, ks_intern_t *in,
                     ks_pod_t **out, ks_error_t *err)
{
    return from_json(what, obj, rd_pod, in, (void **)out, err);
}

int ks_node_from_json(const char *what, const json_t *obj, ks_intern_t *in,
                      ks_node_t **out, ks_error_t *err)
{
    return from_json(what, obj, rd_node, in, (void **)out, err);
}

int ks_namespace_from_json(const char *what, const json_t *obj,
                           ks_intern_t *in, ks_namespace_t **out,
                           ks_error_t *err)
{
    return from_json(what, obj, rd_ns, in, (void **)out, err);
}

int ks_selector_owner_from_json(const char *kind, const char *what,
                                const json_t *obj, ks_intern_t *in,
                                ks_service_t **out, ks_error_t *err)
{
    owner_ud_t o = {kind, in};
    return from_json(what, obj, rd_owner, &o, (void **)out, err);
}
