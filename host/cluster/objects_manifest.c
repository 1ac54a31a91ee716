/*
 * Manifest reader: a multi-document YAML stream of Kubernetes objects, each
 * document one object or a `kind: List` (what `kubectl get -o yaml` prints)
 * whose items are flattened. Node, Pod, Service and Namespace are kept;
 * other kinds are counted and reported through the notice callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "objects.h"
#include "objects_yaml.h"

typedef struct loader {
    ks_manifest_t *m;
    const char *file;
    yaml_document_t *doc;
    ks_intern_t *in;
    void (*notice)(const char *msg);
    ks_error_t *err;
} loader_t;

/* Append to a manifest array. The capacity is implied by the count: 8,
 * then doubling (the array is full whenever n is 8 or a power of two
 * above it). */
#define DEFINE_PUSH(fn, T)                                                     \
    static int fn(T ***arr, size_t *n, T *p)                                   \
    {                                                                          \
        if (*n == 0 || (*n >= 8 && (*n & (*n - 1)) == 0)) {                    \
            size_t cap = *n ? *n * 2 : 8;                                      \
            T **na = realloc(*arr, cap * sizeof(*na));                         \
            if (na == NULL)                                                    \
                return -1;                                                     \
            *arr = na;                                                         \
        }                                                                      \
        (*arr)[(*n)++] = p;                                                    \
        return 0;                                                              \
    }

DEFINE_PUSH(push_pod, ks_pod_t)
DEFINE_PUSH(push_node, ks_node_t)
DEFINE_PUSH(push_service, ks_service_t)
DEFINE_PUSH(push_namespace, ks_namespace_t)

static const char *scalar_field(const loader_t *l, const yaml_node_t *map,
                                const char *key)
{
    yaml_node_pair_t *p;
    const char *found = NULL;
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            found = (v && v->type == YAML_SCALAR_NODE)
                        ? (const char *)v->data.scalar.value
                        : NULL;
    }
    return found;
}

static const yaml_node_t *map_field(const loader_t *l, const yaml_node_t *map,
                                    const char *key)
{
    yaml_node_pair_t *p;
    const yaml_node_t *found = NULL;
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            found = yaml_document_get_node(l->doc, p->value);
    }
    return found;
}

static int load_object(loader_t *l, yaml_node_t *obj, const char *where)
{
    const char *kind = scalar_field(l, obj, "kind");
    int rc = 0;
    if (obj->type != YAML_MAPPING_NODE)
        return ks_error_set(l->err, KS_ESCHEMA, "%s:%zu:%zu: %sexpected a "
                            "Kubernetes object (a mapping)", l->file,
                            obj->start_mark.line + 1,
                            obj->start_mark.column + 1, where);
    if (kind == NULL || kind[0] == '\0')
        return ks_error_set(l->err, KS_ESCHEMA,
                            "%s:%zu:%zu: %sobject has no kind", l->file,
                            obj->start_mark.line + 1,
                            obj->start_mark.column + 1, where);
    if (strcmp(kind, "Pod") == 0) {
        ks_pod_t *pod;
        rc = ks_pod_from_yaml(l->file, l->doc, obj, l->in, &pod, l->err);
        if (rc == 0 && push_pod(&l->m->pods, &l->m->n_pods, pod)) {
            ks_pod_free(pod);
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        }
    } else if (strcmp(kind, "Node") == 0) {
        ks_node_t *node;
        rc = ks_node_from_yaml(l->file, l->doc, obj, l->in, &node, l->err);
        if (rc == 0 &&
            push_node(&l->m->nodes, &l->m->n_nodes, node)) {
            ks_node_free(node);
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        }
    } else if (strcmp(kind, "Service") == 0) {
        ks_service_t *svc;
        rc = ks_service_from_yaml(l->file, l->doc, obj, l->in, &svc, l->err);
        if (rc == 0 &&
            push_service(&l->m->services, &l->m->n_services, svc)) {
            ks_service_free(svc);
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        }
    } else if (strcmp(kind, "Namespace") == 0) {
        ks_namespace_t *ns;
        rc = ks_namespace_from_yaml(l->file, l->doc, obj, l->in, &ns, l->err);
        if (rc == 0 &&
            push_namespace(&l->m->namespaces, &l->m->n_namespaces, ns)) {
            ks_namespace_free(ns);
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        }
    } else {
        const yaml_node_t *md = map_field(l, obj, "metadata");
        const char *ns = scalar_field(l, md, "namespace");
        const char *name = scalar_field(l, md, "name");
        char msg[1024];
        l->m->n_skipped++;
        if (l->notice != NULL) {
            snprintf(msg, sizeof(msg),
                     "%s:%zu: skipping %s %s%s%s (ksched reads Node, Pod, "
                     "Service, Namespace)",
                     l->file, obj->start_mark.line + 1, kind,
                     ns && ns[0] ? ns : "", ns && ns[0] ? "/" : "",
                     name ? name : "(unnamed)");
            l->notice(msg);
        }
    }
    return rc;
}

static int is_list_kind(const char *kind)
{
    size_t n;
    if (kind == NULL)
        return 0;
    n = strlen(kind);
    return n >= 4 && strcmp(kind + n - 4, "List") == 0;
}

static int load_document(loader_t *l, yaml_node_t *root)
{
    const char *kind;
    const yaml_node_t *items;
    yaml_node_item_t *it;
    size_t i = 0;
    int rc;
    if (root->type == YAML_SCALAR_NODE && ky_is_null(root))
        return 0; /* an empty document */
    kind = scalar_field(l, root, "kind");
    if (!is_list_kind(kind))
        return load_object(l, root, "");
    items = map_field(l, root, "items");
    if (items == NULL || ky_is_null(items))
        return 0;
    if (items->type != YAML_SEQUENCE_NODE)
        return ks_error_set(l->err, KS_ESCHEMA,
                            "%s:%zu:%zu: %s: items: expected a sequence",
                            l->file, items->start_mark.line + 1,
                            items->start_mark.column + 1, kind);
    for (it = items->data.sequence.items.start;
         it < items->data.sequence.items.top; it++, i++) {
        char where[64];
        yaml_node_t *obj = yaml_document_get_node(l->doc, *it);
        snprintf(where, sizeof(where), "items[%zu]: ", i);
        if ((rc = load_object(l, obj, where)) != 0)
            return rc;
    }
    return 0;
}

static int load_parser(loader_t *l, yaml_parser_t *parser)
{
    for (;;) {
        yaml_document_t doc;
        yaml_node_t *root;
        int rc;
        if (!yaml_parser_load(parser, &doc)) {
            return ks_error_set(l->err, KS_EPARSE,
                                "%s:%zu:%zu: YAML error: %s%s%s", l->file,
                                parser->problem_mark.line + 1,
                                parser->problem_mark.column + 1,
                                parser->problem ? parser->problem : "malformed",
                                parser->context ? " " : "",
                                parser->context ? parser->context : "");
        }
        root = yaml_document_get_root_node(&doc);
        if (root == NULL) {
            yaml_document_delete(&doc);
            return 0; /* end of the stream */
        }
        l->doc = &doc;
        rc = load_document(l, root);
        l->doc = NULL;
        yaml_document_delete(&doc);
        if (rc != 0)
            return rc;
    }
}

int ks_manifest_load_string(ks_manifest_t *m, const char *name,
                            const char *yaml, size_t len, ks_intern_t *in,
                            void (*notice)(const char *msg), ks_error_t *err)
{
    yaml_parser_t parser;
    loader_t l = {m, name ? name : "<input>", NULL, in, notice, err};
    int rc;
    if (!yaml_parser_initialize(&parser))
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    rc = load_parser(&l, &parser);
    yaml_parser_delete(&parser);
    return rc;
}

int ks_manifest_load_file(ks_manifest_t *m, const char *path, ks_intern_t *in,
                          void (*notice)(const char *msg), ks_error_t *err)
{
    yaml_parser_t parser;
    loader_t l = {m, path, NULL, in, notice, err};
    FILE *f = fopen(path, "rb");
    int rc;
    if (f == NULL)
        return ks_error_set(err, KS_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    rc = load_parser(&l, &parser);
    yaml_parser_delete(&parser);
    if (rc == 0 && ferror(f))
        rc = ks_error_set(err, KS_EIO, "%s: read error", path);
    fclose(f);
    return rc;
}

void ks_manifest_free(ks_manifest_t *m)
{
    size_t i;
    for (i = 0; i < m->n_nodes; i++)
        ks_node_free(m->nodes[i]);
    for (i = 0; i < m->n_pods; i++)
        ks_pod_free(m->pods[i]);
    for (i = 0; i < m->n_services; i++)
        ks_service_free(m->services[i]);
    for (i = 0; i < m->n_namespaces; i++)
        ks_namespace_free(m->namespaces[i]);
    free(m->nodes);
    free(m->pods);
    free(m->services);
    free(m->namespaces);
    memset(m, 0, sizeof(*m));
}
