/*
 * The assume cache (upstream's PV and PVC AssumeCache), local to one
 * plugin instance: Reserve "assumes" a PV with the claimRef it is about
 * to get and a PVC with the selected-node annotation it is about to get,
 * so that the next pods' PreFilter and Filter see them taken before the
 * API server has the writes. An entry remembers the resourceVersion of
 * the object it was made from; reads use it while the store holds that
 * version or an older one, and ignore it once the store holds a newer
 * version (the informer caught up: upstream replaces the assumed object
 * with a strictly newer one) or the object is gone. Unreserve and failed
 * writes restore (drop) entries.
 *
 * Threads: entries are added and dropped on the loop thread only (Reserve,
 * Unreserve, PreBind's callbacks), never while Filter runs; reads come
 * from Filter workers too. The rwlock keeps the list consistent; a
 * pointer a read returns stays valid until the loop thread next changes
 * the cache, that is past the callback that read it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb.h"

typedef struct entry {
    int is_pv;
    char *ns, *name; /* ns "" for a PV */
    int64_t rv;      /* the stored object's resourceVersion when assumed */
    /* a PV's claimRef and annotation */
    char *claim_ns, *claim_name, *claim_uid;
    int bound_by_controller;
    /* a PVC's selected node */
    char *node;
    struct entry *next;
} entry_t;

struct vb_assume_cache {
    pthread_rwlock_t lock;
    entry_t *head;
};

vb_assume_cache_t *vb_cache_new(void)
{
    vb_assume_cache_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (pthread_rwlock_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void entry_free(entry_t *e)
{
    free(e->ns);
    free(e->name);
    free(e->claim_ns);
    free(e->claim_name);
    free(e->claim_uid);
    free(e->node);
    free(e);
}

void vb_cache_free(vb_assume_cache_t *c)
{
    entry_t *e, *n;
    if (c == NULL)
        return;
    for (e = c->head; e; e = n) {
        n = e->next;
        entry_free(e);
    }
    pthread_rwlock_destroy(&c->lock);
    free(c);
}

/* The entry for (is_pv, ns, name), or NULL; caller holds the lock. */
static entry_t *find(const vb_assume_cache_t *c, int is_pv, const char *ns,
                     const char *name)
{
    entry_t *e;
    for (e = c->head; e; e = e->next)
        if (e->is_pv == is_pv && strcmp(e->name, name) == 0 &&
            strcmp(e->ns, ns) == 0)
            return e;
    return NULL;
}

/* The entry that applies to the stored object `o`, or NULL. */
static const entry_t *valid(const vb_t *v, int is_pv, const ks_object_t *o)
{
    const entry_t *e;
    pthread_rwlock_rdlock(&v->cache->lock);
    e = find(v->cache, is_pv, v->api->object_namespace(o),
             v->api->object_name(o));
    if (e != NULL && vb_rv(v, o) > e->rv)
        e = NULL; /* the store holds a newer version */
    pthread_rwlock_unlock(&v->cache->lock);
    return e;
}

void vb_pv_claim_ref(const vb_t *v, const ks_object_t *pv,
                     vb_claim_ref_t *out)
{
    const entry_t *e = valid(v, 1, pv);
    if (e != NULL) {
        out->present = 1;
        out->ns = e->claim_ns;
        out->name = e->claim_name;
        out->uid = e->claim_uid;
        return;
    }
    out->present = vb_has(v, pv, "spec.claimRef");
    out->ns = vb_str(v, pv, "spec.claimRef.namespace");
    out->name = vb_str(v, pv, "spec.claimRef.name");
    out->uid = vb_str(v, pv, "spec.claimRef.uid");
}

int vb_pv_bound_by_controller(const vb_t *v, const ks_object_t *pv)
{
    const entry_t *e = valid(v, 1, pv);
    if (e != NULL && e->bound_by_controller)
        return 1;
    return vb_annotation(v, pv, ANN_BOUND_BY_CONTROLLER) != NULL;
}

const char *vb_pvc_selected_node(const vb_t *v, const ks_object_t *pvc,
                                 char *buf, size_t len)
{
    const entry_t *e = valid(v, 0, pvc);
    const char *s = e != NULL ? e->node
                              : vb_annotation(v, pvc, ANN_SELECTED_NODE);
    if (s == NULL)
        return NULL;
    snprintf(buf, len, "%s", s);
    return buf;
}

static char *dup(const char *s)
{
    return strdup(s ? s : "");
}

/* Put `n` in place of any entry for the same object. */
static void put(vb_t *v, entry_t *n)
{
    entry_t **pp;
    pthread_rwlock_wrlock(&v->cache->lock);
    for (pp = &v->cache->head; *pp; pp = &(*pp)->next)
        if ((*pp)->is_pv == n->is_pv && strcmp((*pp)->name, n->name) == 0 &&
            strcmp((*pp)->ns, n->ns) == 0) {
            entry_t *old = *pp;
            *pp = old->next;
            entry_free(old);
            break;
        }
    n->next = v->cache->head;
    v->cache->head = n;
    pthread_rwlock_unlock(&v->cache->lock);
}

int vb_assume_pv(vb_t *v, const ks_object_t *pv, int64_t matched_rv,
                 const char *claim_ns, const char *claim_name,
                 const char *claim_uid, int bound_by_controller, char *err,
                 size_t errlen)
{
    int64_t stored = vb_rv(v, pv);
    entry_t *n;
    char q[600];
    if (matched_rv < stored) {
        vb_pathf(err, errlen,
                 "v1.PersistentVolume %s is out of sync (stored: %lld, "
                 "assume: %lld)",
                 vb_quote(q, sizeof q, v->api->object_name(pv)),
                 (long long)stored, (long long)matched_rv);
        return -1;
    }
    n = calloc(1, sizeof *n);
    if (n == NULL)
        goto oom;
    n->is_pv = 1;
    n->ns = dup("");
    n->name = dup(v->api->object_name(pv));
    n->rv = matched_rv;
    n->claim_ns = dup(claim_ns);
    n->claim_name = dup(claim_name);
    n->claim_uid = dup(claim_uid);
    n->bound_by_controller = bound_by_controller;
    if (!n->ns || !n->name || !n->claim_ns || !n->claim_name ||
        !n->claim_uid) {
        entry_free(n);
        goto oom;
    }
    put(v, n);
    return 0;
oom:
    vb_pathf(err, errlen, "out of memory assuming PersistentVolume %s",
             v->api->object_name(pv));
    return -1;
}

int vb_assume_pvc(vb_t *v, const ks_object_t *pvc, int64_t read_rv,
                  const char *node, char *err, size_t errlen)
{
    int64_t stored = vb_rv(v, pvc);
    entry_t *n;
    char key[600], q[700];
    vb_pathf(key, sizeof key, "%s/%s", v->api->object_namespace(pvc),
             v->api->object_name(pvc));
    if (read_rv < stored) {
        vb_pathf(err, errlen,
                 "v1.PersistentVolumeClaim %s is out of sync (stored: "
                 "%lld, assume: %lld)",
                 vb_quote(q, sizeof q, key), (long long)stored,
                 (long long)read_rv);
        return -1;
    }
    n = calloc(1, sizeof *n);
    if (n == NULL)
        goto oom;
    n->ns = dup(v->api->object_namespace(pvc));
    n->name = dup(v->api->object_name(pvc));
    n->rv = read_rv;
    n->node = dup(node);
    if (!n->ns || !n->name || !n->node) {
        entry_free(n);
        goto oom;
    }
    put(v, n);
    return 0;
oom:
    vb_pathf(err, errlen, "out of memory assuming PersistentVolumeClaim %s",
             key);
    return -1;
}

static void drop(vb_t *v, int is_pv, const char *ns, const char *name)
{
    entry_t **pp;
    pthread_rwlock_wrlock(&v->cache->lock);
    for (pp = &v->cache->head; *pp; pp = &(*pp)->next)
        if ((*pp)->is_pv == is_pv && strcmp((*pp)->name, name) == 0 &&
            strcmp((*pp)->ns, ns) == 0) {
            entry_t *old = *pp;
            *pp = old->next;
            entry_free(old);
            break;
        }
    pthread_rwlock_unlock(&v->cache->lock);
}

void vb_restore_pv(vb_t *v, const char *name)
{
    drop(v, 1, "", name);
}

void vb_restore_pvc(vb_t *v, const char *ns, const char *name)
{
    drop(v, 0, ns, name);
}

void vb_cache_prune(vb_t *v)
{
    entry_t **pp;
    pthread_rwlock_wrlock(&v->cache->lock);
    for (pp = &v->cache->head; *pp;) {
        entry_t *e = *pp;
        const ks_object_t *o =
            e->is_pv ? v->api->object_get(v->pvs, NULL, e->name)
                     : v->api->object_get(v->pvcs, e->ns, e->name);
        if (o == NULL || vb_rv(v, o) > e->rv) {
            *pp = e->next;
            entry_free(e);
        } else {
            pp = &e->next;
        }
    }
    pthread_rwlock_unlock(&v->cache->lock);
}

int vb_cache_pvs_claimed(const vb_t *v, const char *claim_name,
                         int (*fn)(const char *pv_name, void *ud), void *ud)
{
    const entry_t *e;
    int rc = 0;
    pthread_rwlock_rdlock(&v->cache->lock);
    for (e = v->cache->head; e && rc == 0; e = e->next)
        if (e->is_pv && strcmp(e->claim_name, claim_name) == 0)
            rc = fn(e->name, ud);
    pthread_rwlock_unlock(&v->cache->lock);
    return rc;
}
