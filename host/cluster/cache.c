/*
 * The scheduler cache (upstream internal/cache): nodes, pods, NodeInfos,
 * assumed pods, image counts, services and namespaces. All lookups are
 * hash maps; NodeInfo updates are O(1) amortised (cache NodeInfos are
 * indexed, see node_info.h). Every change moves the NodeInfo to the head
 * of the recency list so that snapshots refresh only what changed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "ksched/helpers.h"

typedef struct ks_pod_rec {
    ks_pod_t *pod;
    ks_cache_node_t *cn;
    ks_pod_slot_t slot;
    int assumed;
} ks_pod_rec_t;

/* What ks_cache_owner_selectors tests first of a service, kept beside
 * the list in its order so that the walk reads one array instead of
 * following every service to its selector's requirements: the key and
 * value of the selector's first requirement that asks for one value
 * (key=value, In with one value), which a pod must carry to match;
 * key NULL when the selector has none (the whole selector is tested),
 * `never` when the selector selects nothing here (none, or empty). */
typedef struct ks_svc_anchor {
    const char *key, *value;
    int never;
} ks_svc_anchor_t;

typedef struct ks_svc_list {
    ks_service_t **items;
    ks_svc_anchor_t *anchors; /* [i]: items[i]'s */
    size_t n, cap;
} ks_svc_list_t;

static ks_svc_anchor_t svc_anchor(const ks_service_t *svc)
{
    const ks_label_selector_t *sel = svc->selector;
    ks_svc_anchor_t a = {NULL, NULL, 0};
    uint32_t i;
    if (sel == NULL || sel->n == 0) {
        a.never = 1;
        return a;
    }
    for (i = 0; i < sel->n; i++)
        if (sel->reqs[i].op == KS_OP_IN && sel->reqs[i].n_values == 1) {
            a.key = sel->reqs[i].key;
            a.value = sel->reqs[i].values[0];
            break;
        }
    return a;
}

ks_cache_t *ks_cache_new(ks_intern_t *in)
{
    ks_cache_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->in = in;
    return c;
}

static void free_pod_cb(void *p) { ks_pod_free(p); }
static void free_node_cb(void *p) { ks_node_free(p); }
static void free_service_cb(void *p) { ks_service_free(p); }
static void free_namespace_cb(void *p) { ks_namespace_free(p); }

/* Defer freeing `obj`; when the graveyard cannot grow, free it now. */
static void bury_later(ks_cache_t *c, void *obj, void (*free_fn)(void *))
{
    if (c->n_dead == c->cap_dead) {
        size_t ncap = c->cap_dead ? c->cap_dead * 2 : 64;
        ks_dead_t *nd = realloc(c->graveyard, ncap * sizeof(*nd));
        if (nd == NULL) {
            free_fn(obj);
            return;
        }
        c->graveyard = nd;
        c->cap_dead = ncap;
    }
    c->graveyard[c->n_dead].obj = obj;
    c->graveyard[c->n_dead].free_fn = free_fn;
    c->n_dead++;
}

void ks_cache_bury(ks_cache_t *c)
{
    size_t i;
    for (i = 0; i < c->n_dead; i++)
        c->graveyard[i].free_fn(c->graveyard[i].obj);
    c->n_dead = 0;
}

void ks_cache_free(ks_cache_t *c)
{
    size_t i;
    if (c == NULL)
        return;
    for (i = 0; i < c->pods.cap; i++) {
        ks_pod_rec_t *r = c->pods.slots[i].val;
        if (c->pods.slots[i].key == NULL)
            continue;
        ks_pod_free(r->pod);
        free(r);
    }
    for (i = 0; i < c->nodes.cap; i++) {
        ks_cache_node_t *cn = c->nodes.slots[i].val;
        if (c->nodes.slots[i].key == NULL)
            continue;
        ks_node_free(cn->node);
        ks_ni_destroy(&cn->ni);
        free(cn);
    }
    for (i = 0; i < c->services.cap; i++) {
        ks_svc_list_t *l = c->services.slots[i].val;
        size_t j;
        if (c->services.slots[i].key == NULL)
            continue;
        for (j = 0; j < l->n; j++)
            ks_service_free(l->items[j]);
        free(l->items);
        free(l->anchors);
        free(l);
    }
    for (i = 0; i < c->namespaces.cap; i++)
        if (c->namespaces.slots[i].key != NULL)
            ks_namespace_free(c->namespaces.slots[i].val);
    ks_cache_bury(c);
    free(c->graveyard);
    ks_strmap_destroy(&c->pods);
    ks_strmap_destroy(&c->nodes);
    ks_strmap_destroy(&c->images);
    ks_strmap_destroy(&c->services);
    ks_strmap_destroy(&c->namespaces);
    free(c);
}

/* --- recency list ---------------------------------------------------------- */

static void list_unlink(ks_cache_t *c, ks_cache_node_t *cn)
{
    if (cn->prev != NULL)
        cn->prev->next = cn->next;
    else if (c->head == cn)
        c->head = cn->next;
    if (cn->next != NULL)
        cn->next->prev = cn->prev;
    cn->prev = cn->next = NULL;
}

/* The NodeInfo changed: new generation (if not taken already) and head. */
static void touch(ks_cache_t *c, ks_cache_node_t *cn, int bump)
{
    if (bump)
        cn->ni.pub.generation = ks_generation_next();
    if (c->head == cn)
        return;
    list_unlink(c, cn);
    cn->next = c->head;
    if (c->head != NULL)
        c->head->prev = cn;
    c->head = cn;
}

static ks_cache_node_t *cache_node_new(ks_cache_t *c, const char *name)
{
    ks_cache_node_t *cn = calloc(1, sizeof(*cn));
    if (cn == NULL)
        return NULL;
    ks_ni_init(&cn->ni, 1);
    cn->name = name;
    if (ks_strmap_put(&c->nodes, name, cn) != 0) {
        free(cn);
        return NULL;
    }
    touch(c, cn, 1);
    return cn;
}

static void cache_node_delete(ks_cache_t *c, ks_cache_node_t *cn)
{
    list_unlink(c, cn);
    ks_strmap_del(&c->nodes, cn->name);
    ks_ni_destroy(&cn->ni);
    free(cn);
}

/* --- images ---------------------------------------------------------------- */

static void images_change(ks_cache_t *c, const ks_node_t *node, int delta)
{
    uint32_t i;
    if (node == NULL || node->n_images == 0)
        return;
    for (i = 0; i < node->n_images; i++) {
        const char *name = node->images[i].name;
        uintptr_t n = (uintptr_t)ks_strmap_get(&c->images, name);
        if (delta > 0) {
            /* on ENOMEM the count is simply not recorded */
            (void)ks_strmap_put(&c->images, name, (void *)(n + 1));
        } else if (n <= 1) {
            ks_strmap_del(&c->images, name);
        } else {
            ks_strmap_put(&c->images, name, (void *)(n - 1));
        }
    }
    c->images_gen++;
}

uint32_t ks_cache_image_num_nodes(const ks_cache_t *c, const char *image)
{
    return (uint32_t)(uintptr_t)ks_strmap_get(&c->images, image);
}

/* --- nodes ----------------------------------------------------------------- */

static void set_node(ks_cache_node_t *cn, ks_node_t *node)
{
    cn->node = node;
    cn->ni.pub.node = node;
}

int ks_cache_add_node(ks_cache_t *c, ks_node_t *node, ks_error_t *err)
{
    ks_cache_node_t *cn = ks_strmap_get(&c->nodes, node->name);
    if (cn != NULL && cn->node != NULL)
        return ks_error_set(err, KS_EEXIST, "node %s already exists",
                            node->name);
    if (cn == NULL && (cn = cache_node_new(c, node->name)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    set_node(cn, node);
    c->n_real_nodes++;
    images_change(c, node, 1);
    touch(c, cn, 1);
    return 0;
}

int ks_cache_update_node(ks_cache_t *c, ks_node_t *node, ks_error_t *err)
{
    ks_cache_node_t *cn = ks_strmap_get(&c->nodes, node->name);
    if (cn == NULL || cn->node == NULL)
        return ks_error_set(err, KS_ENOTFOUND, "node %s not found",
                            node->name);
    if (cn->node == node)
        return ks_error_set(err, KS_EINVAL,
                            "node %s: update with the object already cached",
                            node->name);
    images_change(c, cn->node, -1);
    bury_later(c, cn->node, free_node_cb);
    set_node(cn, node);
    images_change(c, node, 1);
    touch(c, cn, 1);
    return 0;
}

int ks_cache_remove_node(ks_cache_t *c, const char *name, ks_error_t *err)
{
    ks_cache_node_t *cn = ks_strmap_get(&c->nodes, name);
    if (cn == NULL || cn->node == NULL)
        return ks_error_set(err, KS_ENOTFOUND, "node %s not found", name);
    images_change(c, cn->node, -1);
    bury_later(c, cn->node, free_node_cb);
    set_node(cn, NULL);
    c->n_real_nodes--;
    if (cn->ni.pub.n_pods == 0)
        cache_node_delete(c, cn);
    else
        touch(c, cn, 1); /* stays as a placeholder for its pods */
    return 0;
}

const ks_node_info_t *ks_cache_node_info(const ks_cache_t *c, const char *name)
{
    ks_cache_node_t *cn = ks_strmap_get(&c->nodes, name);
    return cn ? &cn->ni.pub : NULL;
}

size_t ks_cache_num_nodes(const ks_cache_t *c)
{
    return c->n_real_nodes;
}

/* --- pods ------------------------------------------------------------------ */

/* Put `pod` on node `name` (placeholder created when unknown). */
static int place_pod(ks_cache_t *c, ks_pod_rec_t *r, ks_error_t *err)
{
    ks_cache_node_t *cn = ks_strmap_get(&c->nodes, r->pod->node_name);
    int fresh = 0;
    if (cn == NULL) {
        if ((cn = cache_node_new(c, r->pod->node_name)) == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        fresh = 1;
    }
    if (ks_ni_add_pod(&cn->ni, r->pod, &r->slot) != 0) {
        if (fresh)
            cache_node_delete(c, cn);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    r->cn = cn;
    touch(c, cn, 0); /* ks_ni_add_pod took the new generation */
    return 0;
}

static void unplace_pod(ks_cache_t *c, ks_pod_rec_t *r)
{
    ks_cache_node_t *cn = r->cn;
    (void)ks_ni_remove_pod(&cn->ni, r->pod, &r->slot);
    r->cn = NULL;
    if (cn->node == NULL && cn->ni.pub.n_pods == 0)
        cache_node_delete(c, cn);
    else
        touch(c, cn, 0);
}

static int insert_pod(ks_cache_t *c, ks_pod_t *pod, int assumed,
                      ks_error_t *err)
{
    ks_pod_rec_t *r = calloc(1, sizeof(*r));
    int rc;
    if (r == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    r->pod = pod;
    r->assumed = assumed;
    if (ks_strmap_put(&c->pods, pod->uid, r) != 0) {
        free(r);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    if ((rc = place_pod(c, r, err)) != 0) {
        ks_strmap_del(&c->pods, pod->uid);
        free(r);
        return rc;
    }
    return 0;
}

int ks_cache_add_pod(ks_cache_t *c, ks_pod_t *pod, ks_error_t *err)
{
    ks_pod_rec_t *r;
    if (pod->node_name == NULL || pod->node_name[0] == '\0')
        return ks_error_set(err, KS_EINVAL, "pod %s/%s has no nodeName",
                            pod->ns, pod->name);
    r = ks_strmap_get(&c->pods, pod->uid);
    if (r != NULL && !r->assumed)
        return ks_error_set(err, KS_EEXIST, "pod %s/%s (uid %s) already added",
                            pod->ns, pod->name, pod->uid);
    if (r != NULL) {
        /* the assumed pod is confirmed: the added object replaces it */
        ks_pod_t *old = r->pod;
        unplace_pod(c, r);
        r->pod = pod;
        r->assumed = 0;
        if (place_pod(c, r, err) != 0) {
            r->pod = old;
            r->assumed = 1;
            if (place_pod(c, r, NULL) != 0) {
                ks_strmap_del(&c->pods, old->uid);
                free(r);
                bury_later(c, old, free_pod_cb);
            }
            return err ? err->code : KS_ENOMEM;
        }
        if (old->uid != pod->uid)
            ks_strmap_put(&c->pods, pod->uid, r); /* same text, new key */
        bury_later(c, old, free_pod_cb);
        return 0;
    }
    return insert_pod(c, pod, 0, err);
}

int ks_cache_remove_pod(ks_cache_t *c, const char *uid, ks_error_t *err)
{
    ks_pod_rec_t *r = ks_strmap_get(&c->pods, uid);
    if (r == NULL)
        return ks_error_set(err, KS_ENOTFOUND, "pod with uid %s not found",
                            uid);
    unplace_pod(c, r);
    ks_strmap_del(&c->pods, uid);
    bury_later(c, r->pod, free_pod_cb);
    free(r);
    return 0;
}

ks_pod_t *ks_cache_get_pod(const ks_cache_t *c, const char *uid)
{
    ks_pod_rec_t *r = ks_strmap_get(&c->pods, uid);
    return r ? r->pod : NULL;
}

size_t ks_cache_num_pods(const ks_cache_t *c)
{
    return c->pods.count;
}

void ks_cache_foreach_pod(const ks_cache_t *c,
                          void (*fn)(ks_pod_t *pod, int assumed, void *ud),
                          void *ud)
{
    size_t i;
    for (i = 0; i < c->pods.cap; i++) {
        ks_pod_rec_t *r = c->pods.slots[i].val;
        if (c->pods.slots[i].key != NULL)
            fn(r->pod, r->assumed, ud);
    }
}

int ks_cache_assume_pod(ks_cache_t *c, ks_pod_t *pod, const char *node_name,
                        ks_error_t *err)
{
    const char *prev = pod->node_name;
    int rc;
    if (node_name == NULL || node_name[0] == '\0')
        return ks_error_set(err, KS_EINVAL, "pod %s/%s: no node to assume on",
                            pod->ns, pod->name);
    if (ks_strmap_get(&c->pods, pod->uid) != NULL)
        return ks_error_set(err, KS_EEXIST,
                            "pod %s/%s (uid %s) is already in the cache",
                            pod->ns, pod->name, pod->uid);
    pod->node_name = node_name;
    if ((rc = insert_pod(c, pod, 1, err)) != 0)
        pod->node_name = prev;
    return rc;
}

ks_pod_t *ks_cache_forget_pod(ks_cache_t *c, const char *uid)
{
    ks_pod_rec_t *r = ks_strmap_get(&c->pods, uid);
    ks_pod_t *pod;
    if (r == NULL || !r->assumed)
        return NULL;
    pod = r->pod;
    unplace_pod(c, r);
    ks_strmap_del(&c->pods, uid);
    free(r);
    pod->node_name = ks_intern_empty(c->in);
    return pod;
}

int ks_cache_finish_binding(ks_cache_t *c, const char *uid)
{
    ks_pod_rec_t *r = ks_strmap_get(&c->pods, uid);
    if (r == NULL)
        return KS_ENOTFOUND;
    if (!r->assumed)
        return KS_EINVAL;
    r->assumed = 0;
    return 0;
}

int ks_cache_is_assumed(const ks_cache_t *c, const char *uid)
{
    ks_pod_rec_t *r = ks_strmap_get(&c->pods, uid);
    return r != NULL && r->assumed;
}

/* --- services and namespaces ----------------------------------------------- */

int ks_cache_add_service(ks_cache_t *c, ks_service_t *svc)
{
    ks_svc_list_t *l = ks_strmap_get(&c->services, svc->ns);
    size_t i;
    if (l == NULL) {
        if ((l = calloc(1, sizeof(*l))) == NULL)
            return KS_ENOMEM;
        if (ks_strmap_put(&c->services, svc->ns, l) != 0) {
            free(l);
            return KS_ENOMEM;
        }
    }
    for (i = 0; i < l->n; i++) {
        if (strcmp(l->items[i]->name, svc->name) == 0) {
            if (l->items[i] != svc)
                bury_later(c, l->items[i], free_service_cb);
            l->items[i] = svc;
            l->anchors[i] = svc_anchor(svc);
            return 0;
        }
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 4;
        ks_service_t **ni = realloc(l->items, ncap * sizeof(*ni));
        ks_svc_anchor_t *na;
        if (ni == NULL)
            return KS_ENOMEM;
        l->items = ni;
        /* the items' room grows first: on ENOMEM here both arrays still
         * hold the l->n entries, items merely with more room */
        na = realloc(l->anchors, ncap * sizeof(*na));
        if (na == NULL)
            return KS_ENOMEM;
        l->anchors = na;
        l->cap = ncap;
    }
    l->anchors[l->n] = svc_anchor(svc);
    l->items[l->n++] = svc;
    return 0;
}

int ks_cache_add_namespace(ks_cache_t *c, ks_namespace_t *ns)
{
    ks_namespace_t *old = ks_strmap_get(&c->namespaces, ns->name);
    if (ks_strmap_put(&c->namespaces, ns->name, ns) != 0)
        return KS_ENOMEM;
    if (old != NULL && old != ns)
        bury_later(c, old, free_namespace_cb);
    return 0;
}

int ks_cache_remove_service(ks_cache_t *c, const char *ns, const char *name)
{
    ks_svc_list_t *l = ks_strmap_get(&c->services, ns);
    size_t i;
    if (l == NULL)
        return KS_ENOTFOUND;
    for (i = 0; i < l->n; i++)
        if (strcmp(l->items[i]->name, name) == 0) {
            bury_later(c, l->items[i], free_service_cb);
            l->items[i] = l->items[--l->n];
            l->anchors[i] = l->anchors[l->n];
            return 0;
        }
    return KS_ENOTFOUND;
}

int ks_cache_remove_namespace(ks_cache_t *c, const char *name)
{
    ks_namespace_t *old = ks_strmap_del(&c->namespaces, name);
    if (old == NULL)
        return KS_ENOTFOUND;
    bury_later(c, old, free_namespace_cb);
    return 0;
}

uint32_t ks_cache_owner_selectors(const ks_cache_t *c, const ks_pod_t *pod,
                                  const ks_label_selector_t **out,
                                  uint32_t cap)
{
    const ks_svc_list_t *l = ks_strmap_get(&c->services, pod->ns);
    uint32_t n = 0;
    size_t i;
    if (l == NULL)
        return 0;
    /* Compared by address: the selectors' strings and the pod's labels
     * come from the one intern table (the SDK hands plugins both as
     * interned, and PodTopologySpread compares them so). */
    for (i = 0; i < l->n; i++) {
        const ks_svc_anchor_t *a = &l->anchors[i];
        const ks_label_selector_t *sel;
        /* the anchor first: a pod without its key=value cannot match */
        if (a->never || (a->key != NULL &&
                         ks_labels_get_interned(&pod->labels, a->key) !=
                             a->value))
            continue;
        sel = l->items[i]->selector;
        if (!ks_selector_matches_interned(sel, &pod->labels))
            continue;
        if (n < cap)
            out[n] = sel;
        n++;
    }
    return n;
}

ks_labels_t ks_cache_namespace_labels(const ks_cache_t *c, const char *ns)
{
    const ks_namespace_t *n = ks_strmap_get(&c->namespaces, ns);
    ks_labels_t none = {NULL, 0};
    return n ? n->labels : none;
}
