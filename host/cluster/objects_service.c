/*
 * v1.Service (namespace, name, spec.selector) and v1.Namespace (name,
 * labels) from libyaml trees.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "objects.h"
#include "objects_yaml.h"

typedef struct service_block {
    ks_arena_t *arena;
    ks_service_t svc;
} service_block_t;

typedef struct namespace_block {
    ks_arena_t *arena;
    ks_namespace_t ns;
} namespace_block_t;

/* metadata.namespace (defaulted when `ns` is non-NULL) and metadata.name. */
static int read_meta(ks_yctx_t *c, const yaml_node_t *root, const char *kind,
                     const char **ns, const char **name,
                     const yaml_node_t **md_out)
{
    const yaml_node_t *md;
    size_t old;
    int rc;
    if (root == NULL || !ky_is_map(root))
        return ky_fail(c, root, "expected a mapping");
    md = ky_get(c, root, "metadata");
    if (md == NULL)
        return ky_fail(c, root, "metadata.name is required");
    old = ky_push(c, "metadata");
    if ((rc = ky_expect_map(c, md)) != 0 ||
        (ns != NULL && (rc = ky_f_str(c, md, "namespace", ns)) != 0) ||
        (rc = ky_f_str(c, md, "name", name)) != 0)
        return rc;
    ky_pop(c, old);
    if (ns != NULL && (*ns)[0] == '\0' &&
        (*ns = ky_intern(c, "default", 7)) == NULL)
        return KS_ENOMEM;
    if ((*name)[0] == '\0')
        return ky_fail(c, md, "metadata.name is required");
    ky_set_what(c, kind, ns ? *ns : NULL, *name);
    *md_out = md;
    return 0;
}

/* kind: "Service" or "ReplicationController" (spec.selector is a map of
 * labels), "ReplicaSet" or "StatefulSet" (a metav1.LabelSelector). */
static int owner_from_yaml(const char *kind, const char *file, void *doc,
                           void *node, ks_intern_t *in, ks_service_t **out,
                           ks_error_t *err)
{
    int label_selector = strcmp(kind, "ReplicaSet") == 0 ||
                         strcmp(kind, "StatefulSet") == 0;
    const yaml_node_t *root = node, *md, *spec;
    ks_yctx_t ctx, *c = &ctx;
    ks_arena_t *arena;
    service_block_t *blk;
    ks_labels_t sel;
    int rc;

    *out = NULL;
    if ((arena = ks_arena_new(512)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    ky_init(c, file, doc, in, arena, err);
    ky_set_what(c, kind, NULL, NULL);
    if ((blk = ky_alloc(c, sizeof(*blk))) == NULL) {
        rc = KS_ENOMEM;
        goto fail;
    }
    blk->arena = arena;
    if ((rc = read_meta(c, root, kind, &blk->svc.ns, &blk->svc.name,
                        &md)) != 0)
        goto fail;
    if (strcmp(kind, "Service") != 0) {
        /* "KIND/NAME": names of different kinds never collide. */
        char key[600];
        int n = snprintf(key, sizeof key, "%s/%s", kind, blk->svc.name);
        if (n < 0 || (size_t)n >= sizeof key) {
            rc = ky_fail(c, md, "metadata.name is too long");
            goto fail;
        }
        if ((blk->svc.name = ky_intern(c, key, (size_t)n)) == NULL) {
            rc = KS_ENOMEM;
            goto fail;
        }
    }
    if (label_selector && (spec = ky_get(c, root, "spec")) != NULL) {
        const ks_label_selector_t *ls = NULL;
        size_t old = ky_push(c, "spec");
        if ((rc = ky_expect_map(c, spec)) != 0 ||
            (rc = ky_f_label_selector(c, spec, "selector", &ls)) != 0)
            goto fail;
        ky_pop(c, old);
        blk->svc.selector = (ks_label_selector_t *)ls;
    } else if ((spec = ky_get(c, root, "spec")) != NULL) {
        size_t old = ky_push(c, "spec");
        if ((rc = ky_expect_map(c, spec)) != 0 ||
            (rc = ky_f_labels(c, spec, "selector", &sel)) != 0)
            goto fail;
        ky_pop(c, old);
        if (ky_get(c, spec, "selector") != NULL) {
            ks_label_selector_t *ls = ky_alloc(c, sizeof(*ls));
            ks_requirement_t *reqs = NULL;
            uint32_t i;
            if (ls == NULL ||
                (sel.n > 0 &&
                 (reqs = ky_alloc(c, sel.n * sizeof(*reqs))) == NULL)) {
                rc = KS_ENOMEM;
                goto fail;
            }
            for (i = 0; i < sel.n; i++) {
                reqs[i].key = sel.items[i].key;
                reqs[i].op = KS_OP_IN;
                reqs[i].values = &sel.items[i].value;
                reqs[i].n_values = 1;
            }
            ls->reqs = reqs;
            ls->n = sel.n;
            blk->svc.selector = ls;
        }
    }
    *out = &blk->svc;
    return 0;
fail:
    ks_arena_free(arena);
    return rc;
}

int ks_service_from_yaml(const char *file, void *doc, void *node,
                         ks_intern_t *in, ks_service_t **out, ks_error_t *err)
{
    return owner_from_yaml("Service", file, doc, node, in, out, err);
}

int ks_workload_from_yaml(const char *kind, const char *file, void *doc,
                          void *node, ks_intern_t *in, ks_service_t **out,
                          ks_error_t *err)
{
    if (strcmp(kind, "ReplicaSet") != 0 && strcmp(kind, "StatefulSet") != 0 &&
        strcmp(kind, "ReplicationController") != 0 &&
        strcmp(kind, "Service") != 0)
        return ks_error_set(err, KS_EINVAL, "%s: %s has no selector ksched "
                                            "reads",
                            file, kind);
    return owner_from_yaml(kind, file, doc, node, in, out, err);
}

int ks_namespace_from_yaml(const char *file, void *doc, void *node,
                           ks_intern_t *in, ks_namespace_t **out,
                           ks_error_t *err)
{
    const yaml_node_t *root = node, *md;
    ks_yctx_t ctx, *c = &ctx;
    ks_arena_t *arena;
    namespace_block_t *blk;
    size_t old;
    int rc;

    *out = NULL;
    if ((arena = ks_arena_new(512)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    ky_init(c, file, doc, in, arena, err);
    ky_set_what(c, "namespace", NULL, NULL);
    if ((blk = ky_alloc(c, sizeof(*blk))) == NULL) {
        rc = KS_ENOMEM;
        goto fail;
    }
    blk->arena = arena;
    if ((rc = read_meta(c, root, "namespace", NULL, &blk->ns.name, &md)) != 0)
        goto fail;
    old = ky_push(c, "metadata");
    if ((rc = ky_f_labels(c, md, "labels", &blk->ns.labels)) != 0)
        goto fail;
    ky_pop(c, old);
    *out = &blk->ns;
    return 0;
fail:
    ks_arena_free(arena);
    return rc;
}

void ks_service_free(ks_service_t *svc)
{
    service_block_t *blk;
    if (svc == NULL)
        return;
    blk = (service_block_t *)(void *)((char *)svc -
                                      offsetof(service_block_t, svc));
    ks_arena_free(blk->arena);
}

void ks_namespace_free(ks_namespace_t *ns)
{
    namespace_block_t *blk;
    if (ns == NULL)
        return;
    blk = (namespace_block_t *)(void *)((char *)ns -
                                        offsetof(namespace_block_t, ns));
    ks_arena_free(blk->arena);
}
