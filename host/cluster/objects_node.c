/*
 * v1.Node from a libyaml tree: name, labels, taints, unschedulable,
 * allocatable (capacity when allocatable is absent) and images (one entry
 * per image name; a name listed twice on one node counts once); and, when
 * ks_node_keep_raw is on, the whole object as compact JSON (objects.h).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/yaml_json.h"
#include "objects.h"
#include "objects_yaml.h"

typedef struct node_block {
    ks_arena_t *arena;
    char *raw; /* malloc'd compact JSON of the object as read, or NULL */
    size_t raw_len;
    ks_node_t node;
} node_block_t;

static atomic_int keep_raw = 0;

static node_block_t *block_of(const ks_node_t *node)
{
    return (node_block_t *)(void *)((char *)node -
                                    offsetof(node_block_t, node));
}

void ks_node_keep_raw(int on)
{
    atomic_store(&keep_raw, on != 0);
}

int ks_node_keeps_raw(void)
{
    return atomic_load(&keep_raw);
}

const char *ks_node_raw_json(const ks_node_t *node, size_t *len)
{
    const node_block_t *blk = block_of(node);
    if (len)
        *len = blk->raw_len;
    return blk->raw;
}

int ks_node_raw_differs(const ks_node_t *a, const ks_node_t *b)
{
    const node_block_t *x = block_of(a), *y = block_of(b);
    if (x->raw == NULL || y->raw == NULL)
        return x->raw != y->raw;
    return x->raw_len != y->raw_len || memcmp(x->raw, y->raw, x->raw_len) != 0;
}

void ks_node_raw_move(const ks_node_t *dst, ks_node_t *src)
{
    node_block_t *d = block_of(dst), *s = block_of(src);
    free(d->raw);
    d->raw = s->raw;
    d->raw_len = s->raw_len;
    s->raw = NULL;
    s->raw_len = 0;
}

/* The object as compact JSON into blk->raw; nothing kept when it cannot
 * be written (nested too deep, larger than KS_NODE_RAW_MAX, out of
 * memory): the extenders then get ksched's view of the node. */
static void keep_json(yaml_document_t *doc, const yaml_node_t *root,
                      node_block_t *blk)
{
    ks_buf_t b = {0};
    char *s;
    size_t len;
    if (ks_yaml_to_json(doc, root, &b, 64, KS_NODE_RAW_MAX) != 0) {
        ks_buf_free(&b);
        return;
    }
    s = ks_buf_steal(&b, &len);
    if (s == NULL)
        return;
    /* An exact-size copy gives back the buffer's slack (up to half). */
    blk->raw = malloc(len + 1);
    if (blk->raw != NULL) {
        memcpy(blk->raw, s, len + 1);
        free(s);
    } else {
        blk->raw = s;
    }
    blk->raw_len = len;
}

static _Thread_local size_t node_size_hint = 1024;

static int parse_taint(ks_yctx_t *c, const yaml_node_t *item, void *elem,
                       void *ud)
{
    ks_taint_t *t = elem;
    const char *eff;
    int rc;
    (void)ud;
    if ((rc = ky_f_str(c, item, "key", &t->key)) != 0 ||
        (rc = ky_f_str(c, item, "value", &t->value)) != 0 ||
        (rc = ky_f_str(c, item, "effect", &eff)) != 0)
        return rc;
    if (strcmp(eff, "NoSchedule") == 0) {
        t->effect = KS_EFFECT_NO_SCHEDULE;
    } else if (strcmp(eff, "PreferNoSchedule") == 0) {
        t->effect = KS_EFFECT_PREFER_NO_SCHEDULE;
    } else if (strcmp(eff, "NoExecute") == 0) {
        t->effect = KS_EFFECT_NO_EXECUTE;
    } else {
        const yaml_node_t *en = ky_get(c, item, "effect");
        ky_push(c, "effect");
        return ky_fail(c, en ? en : item,
                       "%s effect \"%s\" (valid: NoSchedule, "
                       "PreferNoSchedule, NoExecute)",
                       eff[0] ? "unknown" : "missing", eff);
    }
    return 0;
}

static int parse_taints(ks_yctx_t *c, const yaml_node_t *n, ks_node_t *node)
{
    void *arr;
    int rc = ky_seq_of_maps(c, n, sizeof(ks_taint_t), parse_taint, NULL,
                            &arr, &node->n_taints);
    node->taints = arr;
    return rc;
}

/* Is `name` already among the first n images? An open-addressing set of
 * interned pointers sized by the caller. */
static int seen_insert(const char **set, size_t cap, const char *name)
{
    size_t j = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ULL & (cap - 1);
    while (set[j] != NULL) {
        if (set[j] == name)
            return 1;
        j = (j + 1) & (cap - 1);
    }
    set[j] = name;
    return 0;
}

static int parse_images(ks_yctx_t *c, const yaml_node_t *n, ks_node_t *node)
{
    ks_node_image_t *img;
    const char **seen = NULL;
    uint32_t i, j, total = 0, k = 0;
    size_t cap = 8;
    int rc = 0;
    if ((rc = ky_expect_seq(c, n)) != 0)
        return rc;
    for (i = 0; i < ky_seq_len(n); i++) {
        const yaml_node_t *item = ky_seq_at(c, n, i);
        size_t old = ky_push_index(c, i), old2;
        const yaml_node_t *names;
        if (item == NULL || !ky_is_map(item))
            return item ? ky_expect_map(c, item)
                        : ky_fail(c, item, "expected a mapping");
        names = ky_get(c, item, "names");
        old2 = ky_push(c, "names");
        if ((rc = ky_expect_seq(c, names)) != 0)
            return rc;
        ky_pop(c, old2);
        total += ky_seq_len(names);
        ky_pop(c, old);
    }
    if (total == 0)
        return 0;
    if ((img = ky_alloc(c, total * sizeof(*img))) == NULL)
        return KS_ENOMEM;
    while (cap < (size_t)total * 2)
        cap *= 2;
    if ((seen = calloc(cap, sizeof(*seen))) == NULL)
        return ks_error_set(c->r.err, KS_ENOMEM, "out of memory");
    for (i = 0; i < ky_seq_len(n) && rc == 0; i++) {
        const yaml_node_t *item = ky_seq_at(c, n, i), *names;
        size_t old = ky_push_index(c, i);
        int64_t size = 0;
        {
            const yaml_node_t *sz = ky_get(c, item, "sizeBytes");
            size_t old2 = ky_push(c, "sizeBytes");
            rc = ky_int64(c, sz, &size);
            ky_pop(c, old2);
            if (rc != 0)
                break;
        }
        names = ky_get(c, item, "names");
        for (j = 0; j < ky_seq_len(names); j++) {
            const char *name;
            size_t old2 = ky_push(c, "names");
            ky_push_index(c, j);
            rc = ky_str(c, ky_seq_at(c, names, j), &name);
            ky_pop(c, old2);
            if (rc != 0)
                break;
            if (seen_insert(seen, cap, name))
                continue;
            img[k].name = name;
            img[k].size_bytes = size;
            k++;
        }
        ky_pop(c, old);
    }
    free(seen);
    if (rc != 0)
        return rc;
    node->images = img;
    node->n_images = k;
    return 0;
}

static int parse_status(ks_yctx_t *c, const yaml_node_t *st, ks_node_t *node)
{
    const yaml_node_t *alloc, *v;
    size_t old = ky_push(c, "status");
    int rc;
    if ((rc = ky_expect_map(c, st)) != 0)
        return rc;
    alloc = ky_get(c, st, "allocatable");
    if (alloc != NULL && ky_is_map(alloc) &&
        alloc->data.mapping.pairs.top == alloc->data.mapping.pairs.start)
        alloc = NULL; /* {} counts as absent */
    if ((rc = ky_f_resources(c, st, alloc ? "allocatable" : "capacity",
                             &node->allocatable, NULL)) != 0)
        return rc;
    if ((v = ky_get(c, st, "images")) != NULL) {
        size_t o2 = ky_push(c, "images");
        if ((rc = parse_images(c, v, node)) != 0)
            return rc;
        ky_pop(c, o2);
    }
    ky_pop(c, old);
    return 0;
}

int ks_node_from_yaml(const char *file, void *doc, void *yn, ks_intern_t *in,
                      ks_node_t **out, ks_error_t *err)
{
    yaml_node_t *root = yn;
    const yaml_node_t *md, *spec, *st, *v;
    ks_yctx_t ctx, *c = &ctx;
    ks_arena_t *arena;
    node_block_t *blk;
    ks_node_t *node;
    size_t old;
    int rc;

    *out = NULL;
    if ((arena = ks_arena_new(node_size_hint)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    ky_init(c, file, doc, in, arena, err);
    ky_set_what(c, "node", NULL, NULL);
    if ((blk = ky_alloc(c, sizeof(*blk))) == NULL) {
        rc = KS_ENOMEM;
        goto fail;
    }
    blk->arena = arena;
    blk->raw = NULL;
    blk->raw_len = 0;
    node = &blk->node;
    if (root == NULL || !ky_is_map(root)) {
        rc = ky_fail(c, root, "expected a mapping");
        goto fail;
    }
    md = ky_get(c, root, "metadata");
    if (md == NULL) {
        rc = ky_fail(c, root, "metadata.name is required");
        goto fail;
    }
    old = ky_push(c, "metadata");
    if ((rc = ky_expect_map(c, md)) != 0 ||
        (rc = ky_f_str(c, md, "name", &node->name)) != 0)
        goto fail;
    ky_pop(c, old);
    if (node->name[0] == '\0') {
        rc = ky_fail(c, md, "metadata.name is required");
        goto fail;
    }
    ky_set_what(c, "node", NULL, node->name);
    old = ky_push(c, "metadata");
    if ((rc = ky_f_labels(c, md, "labels", &node->labels)) != 0)
        goto fail;
    ky_pop(c, old);
    if ((spec = ky_get(c, root, "spec")) != NULL) {
        old = ky_push(c, "spec");
        if ((rc = ky_expect_map(c, spec)) != 0 ||
            (rc = ky_f_bool(c, spec, "unschedulable", &node->unschedulable)) !=
                0)
            goto fail;
        if ((v = ky_get(c, spec, "taints")) != NULL) {
            size_t o2 = ky_push(c, "taints");
            if ((rc = parse_taints(c, v, node)) != 0)
                goto fail;
            ky_pop(c, o2);
        }
        ky_pop(c, old);
    }
    if ((st = ky_get(c, root, "status")) != NULL &&
        (rc = parse_status(c, st, node)) != 0)
        goto fail;
    node_size_hint = ks_arena_used(arena) + 64;
    if (atomic_load(&keep_raw))
        keep_json(doc, root, blk);
    *out = node;
    return 0;
fail:
    ks_arena_free(arena);
    return rc;
}

void ks_node_free(ks_node_t *node)
{
    node_block_t *blk;
    if (node == NULL)
        return;
    blk = block_of(node);
    free(blk->raw);
    ks_arena_free(blk->arena);
}
