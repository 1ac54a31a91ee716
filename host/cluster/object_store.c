/*
 * The per-resource object stores (object_store.h): a process-wide list of
 * stores, each a string map from "ns/name" to an immutable object.
 */
#include "object_store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>

#include "base/intern.h"
#include "base/strmap.h"
#include "object_view.h"

struct ks_store {
    ks_resource_ref_t ref; /* owned copies */
    ks_strmap_t objects;   /* key "ns/name" -> ks_object_t * */
    atomic_int synced;
    atomic_int wanted; /* a plugin declaring it is enabled in a profile */
    atomic_uint_fast64_t version; /* bumped by every change */
    _Atomic(struct ks_store *) next;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct ks_store *) first;

static int str_ok(const char *s)
{
    return s != NULL && s[0] != '\0';
}

int ks_resource_ref_check(const ks_resource_ref_t *ref, ks_error_t *err)
{
    if (ref->group == NULL)
        return ks_error_set(err, KS_EINVAL, "group is NULL (\"\" is the "
                            "core group)");
    if (!str_ok(ref->version))
        return ks_error_set(err, KS_EINVAL, "version is empty");
    if (!str_ok(ref->resource))
        return ks_error_set(err, KS_EINVAL, "resource is empty");
    if (!str_ok(ref->kind))
        return ks_error_set(err, KS_EINVAL, "kind is empty");
    if (strchr(ref->group, '/') != NULL || strchr(ref->version, '/') ||
        strchr(ref->resource, '/') != NULL)
        return ks_error_set(err, KS_EINVAL, "group, version and resource "
                            "must not contain '/'");
    return 0;
}

ks_store_t *ks_store_next(const ks_store_t *s)
{
    return s == NULL ? atomic_load(&first) : atomic_load(&s->next);
}

ks_store_t *ks_store_find(const char *group, const char *version,
                          const char *resource)
{
    ks_store_t *s;
    if (group == NULL)
        group = "";
    if (version == NULL || resource == NULL)
        return NULL;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s))
        if (strcmp(s->ref.group, group) == 0 &&
            strcmp(s->ref.version, version) == 0 &&
            strcmp(s->ref.resource, resource) == 0)
            return s;
    return NULL;
}

ks_store_t *ks_store_find_kind(const char *api_version, const char *kind)
{
    const char *slash;
    size_t glen;
    ks_store_t *s;
    if (api_version == NULL || kind == NULL)
        return NULL;
    slash = strchr(api_version, '/');
    glen = slash ? (size_t)(slash - api_version) : 0;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s))
        if (strcmp(s->ref.kind, kind) == 0 &&
            strlen(s->ref.group) == glen &&
            strncmp(s->ref.group, api_version, glen) == 0)
            return s;
    return NULL;
}

const ks_resource_ref_t *ks_store_ref(const ks_store_t *s)
{
    return &s->ref;
}

int ks_store_register(const ks_resource_ref_t *ref, ks_store_t **out,
                      ks_error_t *err)
{
    ks_store_t *s, *last = NULL;
    int rc = 0;
    *out = NULL;
    if ((rc = ks_resource_ref_check(ref, err)) != 0)
        return rc;
    pthread_mutex_lock(&reg_mu);
    for (s = ks_store_next(NULL); s != NULL; last = s, s = ks_store_next(s))
        if (strcmp(s->ref.group, ref->group) == 0 &&
            strcmp(s->ref.version, ref->version) == 0 &&
            strcmp(s->ref.resource, ref->resource) == 0)
            break;
    if (s != NULL) {
        if (strcmp(s->ref.kind, ref->kind) != 0)
            rc = ks_error_set(err, KS_ECONFLICT,
                              "resource %s%s%s/%s is declared with kind %s "
                              "here and with kind %s by another plugin",
                              ref->group, ref->group[0] ? "/" : "",
                              ref->version, ref->resource, ref->kind,
                              s->ref.kind);
        else
            *out = s;
        pthread_mutex_unlock(&reg_mu);
        return rc;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL || (s->ref.group = strdup(ref->group)) == NULL ||
        (s->ref.version = strdup(ref->version)) == NULL ||
        (s->ref.resource = strdup(ref->resource)) == NULL ||
        (s->ref.kind = strdup(ref->kind)) == NULL) {
        if (s != NULL) {
            free((char *)s->ref.group);
            free((char *)s->ref.version);
            free((char *)s->ref.resource);
        }
        free(s);
        pthread_mutex_unlock(&reg_mu);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    /* Published complete: readers walk the list without the lock. */
    if (last == NULL)
        atomic_store(&first, s);
    else
        atomic_store(&last->next, s);
    pthread_mutex_unlock(&reg_mu);
    *out = s;
    return 0;
}

/* --- objects ---------------------------------------------------------------- */

void ks_object_free(ks_object_t *o)
{
    if (o == NULL)
        return;
    ks_otree_free(o->tree);
    free((void *)o->labels.items);
    free(o); /* the key is in the same block */
}

static const char *meta_str(const json_t *meta, const char *key)
{
    const json_t *v = json_object_get(meta, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static const char *tree_str(const ks_otree_t *t, const char *path)
{
    const char *v = "";
    return ks_field_string(t, path, &v) == KS_FIELD_OK ? v : "";
}

typedef struct label_acc {
    ks_label_t *items;
    uint32_t n;
    int oom;
} label_acc_t;

static int add_label(const char *k, const char *v, void *ud)
{
    label_acc_t *a = ud;
    ks_intern_t *in = ks_intern_global();
    if (v == NULL)
        return 0; /* not a string: the API server would have refused it */
    a->items[a->n].key = ks_intern_str(in, k);
    a->items[a->n].value = ks_intern_str(in, v);
    if (a->items[a->n].key == NULL || a->items[a->n].value == NULL) {
        a->oom = 1;
        return 1;
    }
    a->n++;
    return 0;
}

/* metadata.labels, interned. */
static int object_labels(ks_object_t *o)
{
    label_acc_t a = {NULL, 0, 0};
    uint32_t n = 0;
    if (ks_field_len(o->tree, "metadata.labels", &n) != KS_FIELD_OK || n == 0)
        return 0;
    if ((a.items = calloc(n, sizeof *a.items)) == NULL)
        return -1;
    (void)ks_field_map_iterate(o->tree, "metadata.labels", add_label, &a);
    if (a.oom) {
        free(a.items);
        return -1;
    }
    o->labels.items = a.items;
    o->labels.n = a.n;
    return 0;
}

/* "kind" and "apiVersion" from the store's resource when absent. */
static int set_type(const ks_store_t *s, json_t *obj)
{
    char av[300];
    if (!json_is_string(json_object_get(obj, "kind")) &&
        json_object_set_new(obj, "kind", json_string(s->ref.kind)) != 0)
        return -1;
    if (json_is_string(json_object_get(obj, "apiVersion")))
        return 0;
    snprintf(av, sizeof av, "%s%s%s", s->ref.group,
             s->ref.group[0] ? "/" : "", s->ref.version);
    return json_object_set_new(obj, "apiVersion", json_string(av));
}

int ks_store_put(ks_store_t *s, json_t *obj, const char *what,
                 ks_error_t *err)
{
    ks_object_t *old = NULL;
    int rc = ks_store_replace(s, obj, what, &old, err);
    ks_object_free(old);
    return rc;
}

int ks_store_replace(ks_store_t *s, json_t *obj, const char *what,
                     ks_object_t **oldp, ks_error_t *err)
{
    const json_t *meta;
    ks_object_t *o, *old;
    size_t klen;
    *oldp = NULL;
    if (what == NULL)
        what = "object";
    if (!json_is_object(obj)) {
        json_decref(obj);
        return ks_error_set(err, KS_ESCHEMA, "%s: %s: expected an object",
                            what, s->ref.kind);
    }
    meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta) || meta_str(meta, "name")[0] == '\0') {
        json_decref(obj);
        return ks_error_set(err, KS_ESCHEMA, "%s: %s: metadata.name is "
                            "required", what, s->ref.kind);
    }
    klen = strlen(meta_str(meta, "namespace")) +
           strlen(meta_str(meta, "name")) + 2;
    o = calloc(1, sizeof *o + klen);
    if (o == NULL || set_type(s, obj) != 0) {
        free(o);
        json_decref(obj);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    /* Kept compact (object_tree.h); the jansson tree goes. */
    o->tree = ks_otree_from_json(obj, 64);
    json_decref(obj);
    if (o->tree == NULL) {
        free(o);
        return ks_error_set(err, KS_ESCHEMA, "%s: %s: nested deeper than 64 "
                            "levels, or out of memory", what, s->ref.kind);
    }
    o->name = tree_str(o->tree, "metadata.name");
    o->ns = tree_str(o->tree, "metadata.namespace");
    o->uid = tree_str(o->tree, "metadata.uid");
    o->key = (char *)(o + 1);
    if (object_labels(o) != 0) {
        ks_object_free(o);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    snprintf(o->key, klen, "%s/%s", o->ns, o->name);
    /* Room first, so that the replacement below cannot fail half way;
     * the old object's key is the map's key: delete it before freeing. */
    if (ks_strmap_reserve(&s->objects, s->objects.count + 1) != 0) {
        ks_object_free(o);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    old = ks_strmap_del(&s->objects, o->key);
    if (ks_strmap_put(&s->objects, o->key, o) != 0) {
        /* Not reached after the reserve; kept for safety. */
        if (old != NULL)
            (void)ks_strmap_put(&s->objects, old->key, old);
        ks_object_free(o);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    atomic_fetch_add(&s->version, 1);
    *oldp = old;
    return 0;
}

int ks_store_put_text(ks_store_t *s, const char *json, size_t len,
                      const char *what, ks_error_t *err)
{
    json_error_t jerr;
    json_t *obj = json_loadb(json, len, 0, &jerr);
    if (obj == NULL)
        return ks_error_set(err, KS_EPARSE, "%s: %s: invalid JSON: %s",
                            what ? what : "object", s->ref.kind, jerr.text);
    return ks_store_put(s, obj, what, err);
}

static int make_key(char *buf, size_t len, const char *ns, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", ns ? ns : "", name ? name : "");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

ks_object_t *ks_store_take(ks_store_t *s, const char *ns, const char *name)
{
    char key[1024];
    if (make_key(key, sizeof key, ns, name) != 0)
        return NULL;
    atomic_fetch_add(&s->version, 1);
    return ks_strmap_del(&s->objects, key);
}

int ks_store_delete(ks_store_t *s, const char *ns, const char *name)
{
    ks_object_t *o = ks_store_take(s, ns, name);
    if (o == NULL)
        return KS_ENOTFOUND;
    ks_object_free(o);
    return 0;
}

void ks_store_clear(ks_store_t *s)
{
    size_t i;
    for (i = 0; i < s->objects.cap; i++)
        if (s->objects.slots[i].key != NULL)
            ks_object_free(s->objects.slots[i].val);
    ks_strmap_destroy(&s->objects);
    memset(&s->objects, 0, sizeof s->objects);
    atomic_fetch_add(&s->version, 1);
}

void ks_store_set_synced(ks_store_t *s, int synced)
{
    atomic_store(&s->synced, synced ? 1 : 0);
}

int ks_store_synced(const ks_store_t *s)
{
    return atomic_load(&((ks_store_t *)s)->synced);
}

uint32_t ks_store_count(const ks_store_t *s)
{
    return s == NULL ? 0 : (uint32_t)s->objects.count;
}

uint64_t ks_store_version(const ks_store_t *s)
{
    return s == NULL ? 0 : (uint64_t)atomic_load(&s->version);
}

const ks_object_t *ks_store_get(const ks_store_t *s, const char *ns,
                                const char *name)
{
    char key[1024];
    if (s == NULL || name == NULL ||
        make_key(key, sizeof key, ns, name) != 0)
        return NULL;
    return ks_strmap_get(&s->objects, key);
}

uint32_t ks_store_list(const ks_store_t *s, const char *ns,
                       const ks_label_selector_t *sel, ks_object_fn fn,
                       void *ud)
{
    uint32_t n = 0;
    size_t i;
    if (s == NULL || fn == NULL)
        return 0;
    for (i = 0; i < s->objects.cap; i++) {
        const ks_object_t *o = s->objects.slots[i].val;
        if (s->objects.slots[i].key == NULL)
            continue;
        if (ns != NULL && strcmp(o->ns, ns) != 0)
            continue;
        if (sel != NULL && !ks_selector_matches(sel, &o->labels))
            continue;
        n++;
        if (fn(o, ud) != 0)
            break;
    }
    return n;
}

int ks_store_manifest_wants(void *ud, const char *api_version,
                            const char *kind)
{
    (void)ud;
    return ks_store_find_kind(api_version, kind) != NULL;
}

int ks_store_manifest_take(void *ud, const char *api_version,
                           const char *kind, const char *json, size_t len,
                           const char *where, ks_error_t *err)
{
    ks_store_t *s = ks_store_find_kind(api_version, kind);
    (void)ud;
    if (s == NULL)
        return ks_error_set(err, KS_EINVAL, "%s: no store for %s", where,
                            kind);
    return ks_store_put_text(s, json, len, where, err);
}

void ks_stores_reset(void)
{
    ks_store_t *s, *next;
    pthread_mutex_lock(&reg_mu);
    for (s = atomic_load(&first); s != NULL; s = next) {
        next = atomic_load(&s->next);
        ks_store_clear(s);
        free((char *)s->ref.group);
        free((char *)s->ref.version);
        free((char *)s->ref.resource);
        free((char *)s->ref.kind);
        free(s);
    }
    atomic_store(&first, NULL);
    pthread_mutex_unlock(&reg_mu);
}

void ks_store_set_wanted(ks_store_t *s)
{
    if (s)
        atomic_store(&s->wanted, 1);
}

int ks_store_wanted(const ks_store_t *s)
{
    return s ? atomic_load(&s->wanted) : 0;
}
