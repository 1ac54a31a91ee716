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

/* --- streaming document builder ----------------------------------------
 *
 * yaml_parser_load() would hold a whole `kind: List` (every object of a
 * cluster dump) in one document tree. Instead the events are assembled
 * here: the top-level mapping becomes one document, except that each item
 * of its `items` sequence is built, read and deleted on its own, so memory
 * follows the largest object rather than the whole input. */

typedef struct bframe {
    int id;     /* container node id */
    int is_map;
    int key;    /* pending mapping key id, 0 when none */
} bframe_t;

typedef struct banchor {
    char *name;
    int id;
} banchor_t;

typedef struct builder {
    yaml_document_t doc;
    int active;
    int root;   /* id of the completed root, 0 while building */
    bframe_t *stack;
    size_t depth, cap;
    banchor_t *anchors;
    size_t n_anchors, cap_anchors;
} builder_t;

static void builder_reset(builder_t *b)
{
    size_t i;
    if (b->active)
        yaml_document_delete(&b->doc);
    for (i = 0; i < b->n_anchors; i++)
        free(b->anchors[i].name);
    b->n_anchors = 0;
    b->active = 0;
    b->root = 0;
    b->depth = 0;
}

static void builder_destroy(builder_t *b)
{
    builder_reset(b);
    free(b->stack);
    free(b->anchors);
}

static int builder_start(builder_t *b)
{
    builder_reset(b);
    if (!yaml_document_initialize(&b->doc, NULL, NULL, NULL, 1, 1))
        return -1;
    b->active = 1;
    return 0;
}

static const yaml_char_t *node_tag(const yaml_char_t *tag)
{
    return (tag == NULL || strcmp((const char *)tag, "!") == 0) ? NULL : tag;
}

static int remember_anchor(builder_t *b, const yaml_char_t *anchor, int id)
{
    if (anchor == NULL)
        return 0;
    if (b->n_anchors == b->cap_anchors) {
        size_t ncap = b->cap_anchors ? b->cap_anchors * 2 : 8;
        banchor_t *na = realloc(b->anchors, ncap * sizeof(*na));
        if (na == NULL)
            return -1;
        b->anchors = na;
        b->cap_anchors = ncap;
    }
    b->anchors[b->n_anchors].name = strdup((const char *)anchor);
    if (b->anchors[b->n_anchors].name == NULL)
        return -1;
    b->anchors[b->n_anchors++].id = id;
    return 0;
}

/* Hang node `id` under the open container (or make it the root). */
static int attach(builder_t *b, int id)
{
    bframe_t *f;
    if (b->depth == 0) {
        b->root = id;
        return 0;
    }
    f = &b->stack[b->depth - 1];
    if (!f->is_map)
        return yaml_document_append_sequence_item(&b->doc, f->id, id) ? 0 : -1;
    if (f->key == 0) {
        f->key = id;
        return 0;
    }
    if (!yaml_document_append_mapping_pair(&b->doc, f->id, f->key, id))
        return -1;
    f->key = 0;
    return 0;
}

static int open_container(builder_t *b, int id, int is_map)
{
    if (attach(b, id) != 0)
        return -1;
    if (b->depth == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 16;
        bframe_t *ns = realloc(b->stack, ncap * sizeof(*ns));
        if (ns == NULL)
            return -1;
        b->stack = ns;
        b->cap = ncap;
    }
    b->stack[b->depth].id = id;
    b->stack[b->depth].is_map = is_map;
    b->stack[b->depth].key = 0;
    b->depth++;
    b->root = 0;
    return 0;
}

/* Feed one event. 0 ok, -1 ENOMEM, -2 unknown alias. Sets b->root when the
 * root node is complete. */
static int builder_feed(builder_t *b, const yaml_event_t *ev)
{
    int id = 0;
    yaml_node_t *n;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        id = yaml_document_add_scalar(
            &b->doc, node_tag(ev->data.scalar.tag), ev->data.scalar.value,
            (int)ev->data.scalar.length, ev->data.scalar.style);
        if (id == 0)
            return -1;
        n = yaml_document_get_node(&b->doc, id);
        n->start_mark = ev->start_mark;
        n->end_mark = ev->end_mark;
        if (remember_anchor(b, ev->data.scalar.anchor, id) != 0)
            return -1;
        return attach(b, id);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_map = ev->type == YAML_MAPPING_START_EVENT;
        id = is_map ? yaml_document_add_mapping(
                          &b->doc, node_tag(ev->data.mapping_start.tag),
                          ev->data.mapping_start.style)
                    : yaml_document_add_sequence(
                          &b->doc, node_tag(ev->data.sequence_start.tag),
                          ev->data.sequence_start.style);
        if (id == 0)
            return -1;
        n = yaml_document_get_node(&b->doc, id);
        n->start_mark = ev->start_mark;
        if (remember_anchor(b, is_map ? ev->data.mapping_start.anchor
                                      : ev->data.sequence_start.anchor,
                            id) != 0)
            return -1;
        return open_container(b, id, is_map);
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth == 0)
            return 0;
        id = b->stack[--b->depth].id;
        yaml_document_get_node(&b->doc, id)->end_mark = ev->end_mark;
        if (b->depth == 0)
            b->root = id;
        return 0;
    case YAML_ALIAS_EVENT: {
        size_t i;
        for (i = b->n_anchors; i > 0; i--)
            if (strcmp(b->anchors[i - 1].name,
                       (const char *)ev->data.alias.anchor) == 0)
                return attach(b, b->anchors[i - 1].id);
        return -2;
    }
    default:
        return 0;
    }
}

/* Is the top builder positioned at the value of the root mapping's
 * "items" key? */
static int at_items_value(builder_t *b)
{
    const bframe_t *f;
    const yaml_node_t *k;
    if (b->depth != 1 || !b->stack[0].is_map || b->stack[0].key == 0)
        return 0;
    f = &b->stack[0];
    k = yaml_document_get_node(&b->doc, f->key);
    return k != NULL && k->type == YAML_SCALAR_NODE &&
           strcmp((const char *)k->data.scalar.value, "items") == 0;
}

/* The top-level document is complete. */
static int finish_top(loader_t *l, builder_t *top, int had_items)
{
    yaml_node_t *root;
    const char *kind;
    if (top->root == 0)
        return 0;
    root = yaml_document_get_node(&top->doc, top->root);
    l->doc = &top->doc;
    if (!had_items)
        return load_document(l, root);
    kind = scalar_field(l, root, "kind");
    if (is_list_kind(kind))
        return 0; /* its items were read already */
    return load_object(l, root, "");
}

static int parse_error(loader_t *l, yaml_parser_t *parser)
{
    return ks_error_set(l->err, KS_EPARSE, "%s:%zu:%zu: YAML error: %s%s%s",
                        l->file, parser->problem_mark.line + 1,
                        parser->problem_mark.column + 1,
                        parser->problem ? parser->problem : "malformed",
                        parser->context ? " " : "",
                        parser->context ? parser->context : "");
}

static int load_parser(loader_t *l, yaml_parser_t *parser)
{
    builder_t top, item;
    yaml_mark_t items_mark = {0, 0, 0};
    int in_items = 0, had_items = 0, rc = 0;
    size_t n_item = 0;
    memset(&top, 0, sizeof(top));
    memset(&item, 0, sizeof(item));
    for (;;) {
        yaml_event_t ev;
        int done = 0, frc = 0;
        if (!yaml_parser_parse(parser, &ev)) {
            rc = parse_error(l, parser);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            had_items = 0;
            if (builder_start(&top) != 0)
                frc = -1;
            break;
        case YAML_DOCUMENT_END_EVENT:
            rc = finish_top(l, &top, had_items);
            l->doc = NULL;
            builder_reset(&top);
            break;
        case YAML_SEQUENCE_START_EVENT:
            if (!in_items && at_items_value(&top)) {
                in_items = had_items = 1;
                n_item = 0;
                items_mark = ev.start_mark;
                break;
            }
            /* fall through */
        default:
            if (!in_items) {
                frc = builder_feed(&top, &ev);
                break;
            }
            if (item.depth == 0 && ev.type == YAML_SEQUENCE_END_EVENT) {
                /* the end of `items`: leave an empty sequence in its place */
                int id = yaml_document_add_sequence(&top.doc, NULL,
                                                    YAML_BLOCK_SEQUENCE_STYLE);
                in_items = 0;
                if (id == 0 || attach(&top, id) != 0) {
                    frc = -1;
                    break;
                }
                yaml_document_get_node(&top.doc, id)->start_mark = items_mark;
                break;
            }
            if (item.depth == 0 && builder_start(&item) != 0) {
                frc = -1;
                break;
            }
            frc = builder_feed(&item, &ev);
            if (frc == 0 && item.root != 0) {
                char where[64];
                snprintf(where, sizeof(where), "items[%zu]: ", n_item++);
                l->doc = &item.doc;
                rc = load_object(l, yaml_document_get_node(&item.doc,
                                                           item.root),
                                 where);
                l->doc = NULL;
                builder_reset(&item);
            }
            break;
        }
        if (frc == -2)
            rc = ks_error_set(l->err, KS_EPARSE,
                              "%s:%zu:%zu: YAML error: alias *%s refers to an "
                              "anchor outside this object",
                              l->file, ev.start_mark.line + 1,
                              ev.start_mark.column + 1, ev.data.alias.anchor);
        else if (frc != 0)
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        yaml_event_delete(&ev);
        if (rc != 0 || done)
            break;
    }
    builder_destroy(&item);
    builder_destroy(&top);
    return rc;
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
