/*
 * pluginConfig[].args as a ks_args_t tree: a copy of the YAML node with
 * 1-based positions, owned by the config's arena.
 */
#include "config_internal.h"

#include <inttypes.h>
#include <string.h>

#define KS_CFG_ARGS_MAX_DEPTH 64
#define KS_CFG_ARGS_MAX_NODES 100000 /* one tree's size; alias bombs are
                                      * refused when the file is loaded */

typedef struct args_builder {
    ks_cfg_ctx_t *c;
    const char *what;
    size_t nodes;
    int stopped; /* a limit was hit and reported */
} args_builder_t;

static ks_args_t *build(args_builder_t *b, yaml_node_t *n, int depth, int root);

static int skip_root_key(const char *k)
{
    return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0;
}

static ks_args_t *build_map(args_builder_t *b, ks_args_t *a, yaml_node_t *n,
                            int depth, int root)
{
    ks_cfg_ctx_t *c = b->c;
    yaml_node_pair_t *p, *q;
    size_t cap = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    const char **keys;
    const ks_args_t **children;
    uint32_t m = 0;

    keys = ks_arena_alloc(c->arena, (cap ? cap : 1) * sizeof *keys);
    children = ks_arena_alloc(c->arena, (cap ? cap : 1) * sizeof *children);
    if (keys == NULL || children == NULL)
        return NULL;
    for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        ks_args_t *child;
        int dup = 0;
        char buf[96];

        if (k == NULL || k->type != YAML_SCALAR_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, k, "%s: expected a field name, found %s",
                           b->what, ks_yaml_describe(k, buf, sizeof buf));
            continue;
        }
        if (root && skip_root_key(ks_yaml_text(k)))
            continue;
        for (q = n->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = yaml_document_get_node(c->doc, q->key);
            if (k2 != NULL && k2->type == YAML_SCALAR_NODE &&
                strcmp(ks_yaml_text(k2), ks_yaml_text(k)) == 0) {
                ks_cfg_problem(c, KS_ESCHEMA, k,
                               "%s: field \"%s\" repeated (first at line %" PRIu32 ")",
                               b->what, ks_yaml_text(k), ks_yaml_line(k2));
                dup = 1;
                break;
            }
        }
        if (dup)
            continue;
        child = build(b, v, depth + 1, 0);
        if (child == NULL)
            return NULL;
        keys[m] = ks_arena_strdup(c->arena, ks_yaml_text(k));
        if (keys[m] == NULL)
            return NULL;
        children[m++] = child;
    }
    a->keys = keys;
    a->children = children;
    a->n = m;
    return a;
}

static ks_args_t *build(args_builder_t *b, yaml_node_t *n, int depth, int root)
{
    ks_cfg_ctx_t *c = b->c;
    ks_args_t *a;

    if (b->stopped)
        return NULL;
    if (depth > KS_CFG_ARGS_MAX_DEPTH || ++b->nodes > KS_CFG_ARGS_MAX_NODES) {
        ks_cfg_problem(c, KS_ESCHEMA, n,
                       "%s: nested too deeply or too large (at most %d levels "
                       "and %d values)",
                       b->what, KS_CFG_ARGS_MAX_DEPTH, KS_CFG_ARGS_MAX_NODES);
        b->stopped = 1;
        return NULL;
    }
    a = ks_arena_alloc(c->arena, sizeof *a);
    if (a == NULL)
        return NULL;
    a->line = ks_yaml_line(n);
    a->column = ks_yaml_column(n);
    switch (n->type) {
    case YAML_MAPPING_NODE:
        a->kind = KS_ARGS_MAP;
        return build_map(b, a, n, depth, root);
    case YAML_SEQUENCE_NODE: {
        size_t len = ks_yaml_seq_len(n), i;
        const ks_args_t **children =
            ks_arena_alloc(c->arena, (len ? len : 1) * sizeof *children);
        if (children == NULL)
            return NULL;
        for (i = 0; i < len; i++) {
            children[i] = build(b, ks_yaml_seq_at(c->doc, n, i), depth + 1, 0);
            if (children[i] == NULL)
                return NULL;
        }
        a->kind = KS_ARGS_SEQ;
        a->children = children;
        a->n = (uint32_t)len;
        return a;
    }
    case YAML_SCALAR_NODE:
        a->kind = KS_ARGS_SCALAR;
        a->scalar = ks_arena_strndup(c->arena, ks_yaml_text(n),
                                         n->data.scalar.length);
        return a->scalar ? a : NULL;
    default:
        return NULL;
    }
}

ks_args_t *ks_cfg_args_build(ks_cfg_ctx_t *c, yaml_node_t *n, const char *what)
{
    args_builder_t b = {c, what, 0, 0};
    char buf[96];

    if (ks_yaml_is_null(n)) {
        ks_args_t *a = ks_arena_alloc(c->arena, sizeof *a);
        static const char *const no_keys[1] = {NULL};
        static const ks_args_t *const no_children[1] = {NULL};
        if (a == NULL)
            return NULL;
        a->kind = KS_ARGS_MAP;
        a->keys = no_keys;
        a->children = no_children;
        a->line = n ? ks_yaml_line(n) : 0;
        a->column = n ? ks_yaml_column(n) : 0;
        return a;
    }
    if (n->type != YAML_MAPPING_NODE) {
        ks_cfg_problem(c, KS_ESCHEMA, n, "%s: expected a mapping, found %s", what,
                       ks_yaml_describe(n, buf, sizeof buf));
        return NULL;
    }
    return build(&b, n, 0, 1);
}

int ks_cfg_args_equal(const ks_args_t *a, const ks_args_t *b)
{
    uint32_t i;
    if (a == NULL || b == NULL)
        return a == b;
    if (a->kind != b->kind || a->n != b->n)
        return 0;
    if (a->kind == KS_ARGS_SCALAR)
        return strcmp(a->scalar, b->scalar) == 0;
    for (i = 0; i < a->n; i++) {
        if (a->kind == KS_ARGS_MAP && strcmp(a->keys[i], b->keys[i]) != 0)
            return 0;
        if (!ks_cfg_args_equal(a->children[i], b->children[i]))
            return 0;
    }
    return 1;
}
