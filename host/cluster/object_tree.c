/*
 * Compact JSON trees (object_tree.h): counted first, then written into
 * one block (header, nodes, strings).
 */
#include "object_tree.h"

#include <stdlib.h>
#include <string.h>

struct ks_otree {
    size_t bytes;
    uint32_t n_nodes, n_chars;
    ks_onode_t *nodes;
    char *chars; /* offset 0 is "" */
};

typedef struct builder {
    ks_otree_t *t;
    uint32_t next_node, next_char;
} builder_t;

/* Count the nodes and string bytes of j; -1 when too deep or too big. */
static int count(const json_t *j, int depth, size_t *nodes, size_t *chars)
{
    const char *k;
    json_t *v;
    size_t i;
    if (depth < 0)
        return -1;
    (*nodes)++;
    switch (json_typeof(j)) {
    case JSON_STRING:
        *chars += strlen(json_string_value(j)) + 1;
        break;
    case JSON_OBJECT:
        json_object_foreach((json_t *)j, k, v) {
            *chars += strlen(k) + 1;
            if (count(v, depth - 1, nodes, chars) != 0)
                return -1;
        }
        break;
    case JSON_ARRAY:
        json_array_foreach((json_t *)j, i, v) {
            if (count(v, depth - 1, nodes, chars) != 0)
                return -1;
        }
        break;
    default:
        break;
    }
    return *nodes > INT32_MAX || *chars > INT32_MAX ? -1 : 0;
}

static uint32_t add_str(builder_t *b, const char *s)
{
    size_t n = strlen(s) + 1;
    uint32_t off = b->next_char;
    memcpy(b->t->chars + off, s, n);
    b->next_char += (uint32_t)n;
    return off;
}

/* Write j into node idx (its key already set); its members go into the
 * next free run. */
static void fill(builder_t *b, const json_t *j, uint32_t idx)
{
    ks_onode_t *n = &b->t->nodes[idx];
    const char *k;
    json_t *v;
    size_t i;
    uint32_t first, m = 0;
    switch (json_typeof(j)) {
    case JSON_STRING:
        n->type = KS_ON_STRING;
        n->v.s = add_str(b, json_string_value(j));
        return;
    case JSON_INTEGER:
        n->type = KS_ON_INT;
        n->v.i = (int64_t)json_integer_value(j);
        return;
    case JSON_REAL:
        n->type = KS_ON_REAL;
        n->v.r = json_real_value(j);
        return;
    case JSON_TRUE:
        n->type = KS_ON_TRUE;
        return;
    case JSON_FALSE:
        n->type = KS_ON_FALSE;
        return;
    case JSON_OBJECT:
        n->type = KS_ON_MAP;
        first = b->next_node;
        b->next_node += (uint32_t)json_object_size(j);
        n->v.kids.first = first;
        n->v.kids.n = (uint32_t)json_object_size(j);
        json_object_foreach((json_t *)j, k, v) {
            b->t->nodes[first + m].key = add_str(b, k);
            fill(b, v, first + m);
            m++;
        }
        return;
    case JSON_ARRAY:
        n->type = KS_ON_ARRAY;
        first = b->next_node;
        b->next_node += (uint32_t)json_array_size(j);
        n->v.kids.first = first;
        n->v.kids.n = (uint32_t)json_array_size(j);
        json_array_foreach((json_t *)j, i, v) {
            fill(b, v, first + (uint32_t)i);
        }
        return;
    default:
        n->type = KS_ON_NULL;
        return;
    }
}

ks_otree_t *ks_otree_from_json(const json_t *j, int max_depth)
{
    size_t nodes = 0, chars = 1, bytes;
    builder_t b;
    ks_otree_t *t;
    if (j == NULL || count(j, max_depth, &nodes, &chars) != 0)
        return NULL;
    bytes = sizeof *t + nodes * sizeof(ks_onode_t) + chars;
    t = calloc(1, bytes);
    if (t == NULL)
        return NULL;
    t->bytes = bytes;
    t->n_nodes = (uint32_t)nodes;
    t->n_chars = (uint32_t)chars;
    t->nodes = (ks_onode_t *)(void *)(t + 1);
    t->chars = (char *)(t->nodes + nodes);
    b.t = t;
    b.next_node = 1;
    b.next_char = 1; /* chars[0] = "" */
    fill(&b, j, 0);
    return t;
}

void ks_otree_free(ks_otree_t *t)
{
    free(t);
}

size_t ks_otree_bytes(const ks_otree_t *t)
{
    return t ? t->bytes : 0;
}

const ks_onode_t *ks_otree_root(const ks_otree_t *t)
{
    return t ? &t->nodes[0] : NULL;
}

const ks_onode_t *ks_onode_get(const ks_otree_t *t, const ks_onode_t *map,
                               const char *key)
{
    uint32_t i;
    if (map == NULL || map->type != KS_ON_MAP)
        return NULL;
    for (i = map->v.kids.n; i-- > 0;) {
        const ks_onode_t *m = &t->nodes[map->v.kids.first + i];
        if (strcmp(t->chars + m->key, key) == 0)
            return m;
    }
    return NULL;
}

const ks_onode_t *ks_onode_at(const ks_otree_t *t, const ks_onode_t *c,
                              size_t i)
{
    if (c == NULL || (c->type != KS_ON_ARRAY && c->type != KS_ON_MAP) ||
        i >= c->v.kids.n)
        return NULL;
    return &t->nodes[c->v.kids.first + i];
}

const char *ks_onode_str(const ks_otree_t *t, const ks_onode_t *n)
{
    return n != NULL && n->type == KS_ON_STRING ? t->chars + n->v.s
                                                : t->chars;
}

const char *ks_onode_key(const ks_otree_t *t, const ks_onode_t *n)
{
    return n != NULL ? t->chars + n->key : t->chars;
}

static json_t *node_json(const ks_otree_t *t, const ks_onode_t *n)
{
    json_t *out;
    uint32_t i;
    switch (n->type) {
    case KS_ON_STRING:
        return json_string(t->chars + n->v.s);
    case KS_ON_INT:
        return json_integer((json_int_t)n->v.i);
    case KS_ON_REAL:
        return json_real(n->v.r);
    case KS_ON_TRUE:
        return json_true();
    case KS_ON_FALSE:
        return json_false();
    case KS_ON_ARRAY:
    case KS_ON_MAP:
        out = n->type == KS_ON_ARRAY ? json_array() : json_object();
        for (i = 0; out != NULL && i < n->v.kids.n; i++) {
            const ks_onode_t *m = &t->nodes[n->v.kids.first + i];
            json_t *v = node_json(t, m);
            int rc = v == NULL ? -1
                     : n->type == KS_ON_ARRAY
                         ? json_array_append_new(out, v)
                         : json_object_set_new(out, t->chars + m->key, v);
            if (rc != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    default:
        return json_null();
    }
}

json_t *ks_otree_to_json(const ks_otree_t *t)
{
    return t ? node_json(t, &t->nodes[0]) : NULL;
}
