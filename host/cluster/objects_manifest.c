/*
 * Manifest reader: a multi-document YAML stream of Kubernetes objects, each
 * document one object or a `kind: List` (what `kubectl get -o yaml` prints)
 * whose items are flattened. Node, Pod, Service and Namespace are kept,
 * and so are ReplicaSet, StatefulSet and ReplicationController, as selector
 * holders (PodTopologySpread's system-default spreading reads their
 * selectors, as cluster mode does); objects of the kinds the caller takes
 * (ks_manifest_t.wants/take: the declared resources of plugins) are
 * handed over as JSON; other kinds are counted and reported through the
 * notice callback, one line per kind and input.
 *
 * Documents are built by base/yaml_doc.h's builder, with one alias budget
 * for the whole stream: at most KS_YAML_MAX_ALIASES alias references and an
 * expanded size of at most max(KS_YAML_MIN_EXPANDED, KS_YAML_EXPAND_FACTOR x
 * the nodes written), checked before each object is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/buf.h"
#include "base/yaml_doc.h"
#include "base/yaml_json.h"
#include "objects.h"
#include "objects_yaml.h"

#define READS "Node, Pod, Service, Namespace, ReplicaSet, StatefulSet, " \
              "ReplicationController"

/* The objects of one kind skipped in one input: reported once at its end. */
typedef struct skipped_kind {
    char *kind;
    size_t count, line;
    char first[520]; /* "ns/name" of the first one */
} skipped_kind_t;

typedef struct loader {
    ks_manifest_t *m;
    const char *file;
    yaml_document_t *doc;
    ks_intern_t *in;
    void (*notice)(const char *msg);
    ks_error_t *err;
    skipped_kind_t *skipped;
    size_t n_skipped;
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
    return ks_yaml_text(ks_yaml_get(l->doc, map, key));
}

static const yaml_node_t *map_field(const loader_t *l, const yaml_node_t *map,
                                    const char *key)
{
    return ks_yaml_get(l->doc, map, key);
}

static int note_skipped(loader_t *l, const yaml_node_t *obj,
                        const char *kind);

/* An object of a kind the caller takes, as JSON. */
static int take_object(loader_t *l, yaml_node_t *obj, const char *kind,
                       const char *where)
{
    ks_buf_t b = {0};
    char at[600];
    int rc;
    const char *api_version = scalar_field(l, obj, "apiVersion");
    snprintf(at, sizeof at, "%s:%zu%s%.*s", l->file,
             obj->start_mark.line + 1, where[0] ? ": " : "",
             where[0] ? (int)(strlen(where) - 2) : 0, where);
    rc = ks_yaml_to_json(l->doc, obj, &b, 64, (size_t)16 << 20);
    if (rc == -1) {
        ks_buf_free(&b);
        return ks_error_set(l->err, KS_ESCHEMA, "%s: %s is nested deeper "
                            "than 64 levels or larger than 16 MiB", at,
                            kind);
    }
    if (rc != 0 || b.oom || b.data == NULL) {
        ks_buf_free(&b);
        return ks_error_set(l->err, KS_ENOMEM, "out of memory");
    }
    rc = l->m->take(l->m->take_ud, api_version ? api_version : "", kind,
                    b.data, b.len, at, l->err);
    ks_buf_free(&b);
    if (rc == 0)
        l->m->n_taken++;
    return rc;
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
    } else if (strcmp(kind, "ReplicaSet") == 0 ||
               strcmp(kind, "StatefulSet") == 0 ||
               strcmp(kind, "ReplicationController") == 0) {
        ks_service_t *owner;
        rc = ks_workload_from_yaml(kind, l->file, l->doc, obj, l->in, &owner,
                                   l->err);
        if (rc == 0 &&
            push_service(&l->m->services, &l->m->n_services, owner)) {
            ks_service_free(owner);
            rc = ks_error_set(l->err, KS_ENOMEM, "out of memory");
        }
    } else if (l->m->take != NULL && l->m->wants != NULL &&
               l->m->wants(l->m->take_ud,
                           scalar_field(l, obj, "apiVersion") ?
                               scalar_field(l, obj, "apiVersion") : "",
                           kind)) {
        rc = take_object(l, obj, kind, where);
    } else {
        l->m->n_skipped++;
        rc = note_skipped(l, obj, kind);
    }
    return rc;
}

/* Count a skipped object under its kind (the first one's name and line are
 * kept for the notice). */
static int note_skipped(loader_t *l, const yaml_node_t *obj, const char *kind)
{
    const yaml_node_t *md = map_field(l, obj, "metadata");
    const char *ns = scalar_field(l, md, "namespace");
    const char *name = scalar_field(l, md, "name");
    skipped_kind_t *k;
    size_t i;
    for (i = 0; i < l->n_skipped; i++)
        if (strcmp(l->skipped[i].kind, kind) == 0) {
            l->skipped[i].count++;
            return 0;
        }
    k = realloc(l->skipped, (l->n_skipped + 1) * sizeof *k);
    if (k == NULL)
        return ks_error_set(l->err, KS_ENOMEM, "out of memory");
    l->skipped = k;
    k = &l->skipped[l->n_skipped];
    if ((k->kind = strdup(kind)) == NULL)
        return ks_error_set(l->err, KS_ENOMEM, "out of memory");
    l->n_skipped++;
    k->count = 1;
    k->line = obj->start_mark.line + 1;
    snprintf(k->first, sizeof k->first, "%s%s%s", ns && ns[0] ? ns : "",
             ns && ns[0] ? "/" : "", name ? name : "(unnamed)");
    return 0;
}

/* One notice per skipped kind, in the order the kinds first appeared:
 * "FILE:LINE: skipping KIND NAME (...)" for one object, "FILE: skipping N
 * KIND objects, the first KIND NAME at line L (...)" for several. */
static void report_skipped(loader_t *l)
{
    size_t i;
    char msg[1400];
    for (i = 0; i < l->n_skipped; i++) {
        const skipped_kind_t *k = &l->skipped[i];
        if (l->notice != NULL && k->count == 1)
            snprintf(msg, sizeof msg, "%s:%zu: skipping %s %s (ksched reads "
                                      READS ")",
                     l->file, k->line, k->kind, k->first);
        else if (l->notice != NULL)
            snprintf(msg, sizeof msg, "%s: skipping %zu %s objects, the "
                                      "first %s at line %zu (ksched reads "
                                      READS ")",
                     l->file, k->count, k->kind, k->first, k->line);
        if (l->notice != NULL)
            l->notice(msg);
        free(k->kind);
    }
    free(l->skipped);
    l->skipped = NULL;
    l->n_skipped = 0;
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

/* --- streaming -----------------------------------------------------------
 *
 * yaml_parser_load() would hold a whole `kind: List` (every object of a
 * cluster dump) in one document tree. Instead the events are assembled
 * here: the top-level mapping becomes one document, except that each item
 * of its `items` sequence is built, read and deleted on its own, so memory
 * follows the largest object rather than the whole input. An alias inside
 * an item can only name an anchor of the same item. */

/* Is the top builder positioned at the value of the root mapping's
 * "items" key? */
static int at_items_value(ks_yaml_builder_t *b)
{
    const yaml_node_t *k;
    if (ks_yaml_builder_depth(b) != 1)
        return 0;
    k = ks_yaml_builder_pending_key(b);
    return k != NULL && k->type == YAML_SCALAR_NODE &&
           strcmp((const char *)k->data.scalar.value, "items") == 0;
}

/* The top-level document is complete. */
static int finish_top(loader_t *l, ks_yaml_builder_t *top, int had_items)
{
    yaml_node_t *root = ks_yaml_builder_root(top);
    const char *kind;
    if (root == NULL)
        return 0;
    l->doc = ks_yaml_builder_doc(top);
    if (!had_items)
        return load_document(l, root);
    kind = scalar_field(l, root, "kind");
    if (is_list_kind(kind))
        return 0; /* its items were read already */
    return load_object(l, root, "");
}

static int yaml_problem(loader_t *l, const ks_yaml_problem_t *p)
{
    if (p->kind == KS_YAML_P_UNDEFINED)
        return ks_error_set(l->err, KS_EPARSE,
                            "%s:%u:%u: YAML error: alias *%s refers to an "
                            "anchor outside this object",
                            l->file, (unsigned)p->line, (unsigned)p->column,
                            p->anchor);
    if (p->kind == KS_YAML_P_NOMEM)
        return ks_error_set(l->err, KS_ENOMEM, "out of memory");
    return ks_yaml_problem_error(l->err, l->file, "YAML error: ", p);
}

static int load_parser(loader_t *l, yaml_parser_t *parser, const char *text,
                       size_t len)
{
    ks_yaml_budget_t budget = {0, 0, 0}; /* one for the whole stream */
    ks_yaml_builder_t top, item;
    ks_yaml_problem_t prob;
    yaml_mark_t items_mark = {0, 0, 0};
    int in_items = 0, had_items = 0, rc = 0;
    size_t n_item = 0;
    ks_yaml_builder_init(&top, &budget);
    ks_yaml_builder_init(&item, &budget);
    for (;;) {
        yaml_event_t ev;
        int done = 0, frc = 0;
        if (!yaml_parser_parse(parser, &ev)) {
            ks_yaml_parser_problem(parser, text, len, &prob);
            rc = yaml_problem(l, &prob);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            had_items = 0;
            frc = ks_yaml_builder_start(&top, &ev, &prob);
            break;
        case YAML_DOCUMENT_END_EVENT:
            rc = finish_top(l, &top, had_items);
            l->doc = NULL;
            ks_yaml_builder_reset(&top);
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
                frc = ks_yaml_builder_feed(&top, &ev, &prob);
                break;
            }
            if (ks_yaml_builder_depth(&item) == 0 &&
                ev.type == YAML_SEQUENCE_END_EVENT) {
                /* the end of `items`: leave an empty sequence in its place */
                in_items = 0;
                frc = ks_yaml_builder_add_empty_seq(&top, items_mark, &prob);
                break;
            }
            if (ks_yaml_builder_depth(&item) == 0 &&
                (frc = ks_yaml_builder_start(&item, NULL, &prob)) != 0)
                break;
            frc = ks_yaml_builder_feed(&item, &ev, &prob);
            if (frc == 0 && ks_yaml_builder_root(&item) != NULL) {
                char where[64];
                snprintf(where, sizeof(where), "items[%zu]: ", n_item++);
                l->doc = ks_yaml_builder_doc(&item);
                rc = load_object(l, ks_yaml_builder_root(&item), where);
                l->doc = NULL;
                ks_yaml_builder_reset(&item);
            }
            break;
        }
        if (frc != 0)
            rc = yaml_problem(l, &prob);
        yaml_event_delete(&ev);
        if (rc != 0 || done)
            break;
    }
    ks_yaml_builder_destroy(&item);
    ks_yaml_builder_destroy(&top);
    return rc;
}

int ks_manifest_load_string(ks_manifest_t *m, const char *name,
                            const char *yaml, size_t len, ks_intern_t *in,
                            void (*notice)(const char *msg), ks_error_t *err)
{
    yaml_parser_t parser;
    loader_t l = {m, name ? name : "<input>", NULL, in, notice, err, NULL, 0};
    int rc;
    if (!yaml_parser_initialize(&parser))
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    rc = load_parser(&l, &parser, yaml, len);
    yaml_parser_delete(&parser);
    report_skipped(&l);
    return rc;
}

int ks_manifest_load_file(ks_manifest_t *m, const char *path, ks_intern_t *in,
                          void (*notice)(const char *msg), ks_error_t *err)
{
    yaml_parser_t parser;
    loader_t l = {m, path, NULL, in, notice, err, NULL, 0};
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
    rc = load_parser(&l, &parser, NULL, 0);
    yaml_parser_delete(&parser);
    report_skipped(&l);
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
