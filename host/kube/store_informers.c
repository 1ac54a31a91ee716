/*
 * The declared resources' informers (store_informers.h).
 */
#include "store_informers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cluster/object_store.h"
#include "kube/informer.h"

typedef struct slot {
    struct ks_store_informers *set;
    ks_store_t *store;
    ks_informer_t *inf;
    char path[512];
    char label[300]; /* "persistentvolumes" or "widgets.example.com" */
    long last_status;
    int said_404;
    char last_error[1200];
} slot_t;

struct ks_store_informers {
    slot_t *slots;
    size_t n;
    ks_store_informers_handler_t h;
};

/* metadata.namespace (ns = 1, "" when none) or metadata.name. */
static const char *name_ns(const json_t *obj, int ns)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *s = json_string_value(
        json_object_get(md, ns ? "namespace" : "name"));
    return s ? s : "";
}

static void upsert(void *ud, json_t *obj)
{
    slot_t *sl = ud;
    json_t *copy = json_deep_copy(obj), *md;
    ks_object_t *old = NULL;
    ks_error_t err;
    char ns[256], name[256];
    if (copy == NULL) {
        ks_log(KS_LOGL_WARN, "%s: out of memory; an object was not stored",
               sl->label);
        return;
    }
    /* The server's write history: large, and no plugin reads it. */
    md = json_object_get(copy, "metadata");
    if (json_is_object(md))
        json_object_del(md, "managedFields");
    /* The store takes `copy` (and frees it): keep its key first. */
    snprintf(ns, sizeof ns, "%s", name_ns(copy, 1));
    snprintf(name, sizeof name, "%s", name_ns(copy, 0));
    if (ks_store_replace(sl->store, copy, sl->label, &old, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    if (sl->set->h.changed && ks_informer_synced(sl->inf))
        sl->set->h.changed(sl->set->h.ud, old,
                           ks_store_get(sl->store, ns, name));
    ks_object_free(old);
}

static void remove_obj(void *ud, json_t *obj)
{
    slot_t *sl = ud;
    json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    ks_object_t *old;
    if (name == NULL)
        return;
    old = ks_store_take(sl->store, ns ? ns : "", name);
    if (old != NULL && sl->set->h.changed)
        sl->set->h.changed(sl->set->h.ud, old, NULL);
    ks_object_free(old);
}

static void synced(void *ud)
{
    slot_t *sl = ud;
    sl->last_error[0] = '\0';
    sl->last_status = 0;
    ks_store_set_synced(sl->store, 1);
    ks_log(KS_LOGL_INFO, "%s: %u objects for plugins", sl->label,
           ks_store_count(sl->store));
    if (ks_store_informers_synced(sl->set) && sl->set->h.synced)
        sl->set->h.synced(sl->set->h.ud);
}

static void failed(void *ud, long status, const char *message)
{
    slot_t *sl = ud;
    const ks_resource_ref_t *r = ks_store_ref(sl->store);
    sl->last_status = status;
    if (status == 404) {
        snprintf(sl->last_error, sizeof sl->last_error,
                 "the API server does not serve %s (404 on %s): a plugin "
                 "declares it; install its CustomResourceDefinition or "
                 "fix the plugin's group/version/resource",
                 sl->label, sl->path);
        if (!sl->said_404)
            ks_log(KS_LOGL_ERROR, "%s (kind %s)", sl->last_error, r->kind);
        sl->said_404 = 1;
        return;
    }
    snprintf(sl->last_error, sizeof sl->last_error, "%s", message);
}

ks_store_informers_t *ks_store_informers_new(
    uv_loop_t *loop, ks_kube_client_t *client,
    const ks_store_informers_handler_t *h, ks_error_t *err)
{
    ks_store_informers_t *si = calloc(1, sizeof *si);
    ks_store_t *s;
    size_t n = 0, i = 0;
    if (si == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    if (h != NULL)
        si->h = *h;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s))
        n++;
    if (n > 0 && (si->slots = calloc(n, sizeof *si->slots)) == NULL) {
        free(si);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    for (s = ks_store_next(NULL); s != NULL && i < n; s = ks_store_next(s)) {
        const ks_resource_ref_t *r = ks_store_ref(s);
        slot_t *sl = &si->slots[i];
        ks_informer_opts_t io;
        ks_informer_handler_t ih;
        sl->set = si;
        sl->store = s;
        if (r->group[0] == '\0') {
            snprintf(sl->path, sizeof sl->path, "/api/%s/%s", r->version,
                     r->resource);
            snprintf(sl->label, sizeof sl->label, "%s", r->resource);
        } else {
            snprintf(sl->path, sizeof sl->path, "/apis/%s/%s/%s", r->group,
                     r->version, r->resource);
            snprintf(sl->label, sizeof sl->label, "%s.%s", r->resource,
                     r->group);
        }
        memset(&io, 0, sizeof io);
        io.resource = sl->label;
        io.path = sl->path;
        memset(&ih, 0, sizeof ih);
        ih.upsert = upsert;
        ih.remove = remove_obj;
        ih.synced = synced;
        ih.failed = failed;
        ih.ud = sl;
        si->n = ++i;
        sl->inf = ks_informer_new(loop, client, &io, &ih, err);
        if (sl->inf == NULL) {
            ks_store_informers_close(si);
            return NULL;
        }
    }
    return si;
}

int ks_store_informers_start(ks_store_informers_t *si, ks_error_t *err)
{
    size_t i;
    if (si->n == 0) {
        if (si->h.synced)
            si->h.synced(si->h.ud);
        return 0;
    }
    for (i = 0; i < si->n; i++) {
        /* A store fills from a fresh list: drop what an earlier run
         * left (a replaced worker's source starts again). */
        ks_store_clear(si->slots[i].store);
        ks_store_set_synced(si->slots[i].store, 0);
        if (ks_informer_start(si->slots[i].inf, err) != 0)
            return err ? err->code : KS_EIO;
    }
    return 0;
}

int ks_store_informers_synced(const ks_store_informers_t *si)
{
    size_t i;
    if (si == NULL)
        return 1;
    for (i = 0; i < si->n; i++)
        if (!ks_informer_synced(si->slots[i].inf))
            return 0;
    return 1;
}

size_t ks_store_informers_count(const ks_store_informers_t *si)
{
    return si ? si->n : 0;
}

void ks_store_informers_describe(const ks_store_informers_t *si, char *buf,
                                 size_t len, size_t *off)
{
    size_t i;
    if (si == NULL)
        return;
    for (i = 0; i < si->n && *off < len; i++) {
        const slot_t *sl = &si->slots[i];
        int w;
        if (ks_informer_synced(sl->inf))
            continue;
        w = snprintf(buf + *off, len - *off, "%s%s%s%s%s",
                     *off ? ", " : "informers not synced: ", sl->label,
                     sl->last_error[0] ? " (" : "", sl->last_error,
                     sl->last_error[0] ? ")" : "");
        if (w < 0)
            return;
        *off += (size_t)w < len - *off ? (size_t)w : len - *off - 1;
    }
}

void ks_store_informers_close(ks_store_informers_t *si)
{
    size_t i;
    if (si == NULL)
        return;
    for (i = 0; i < si->n; i++)
        ks_informer_close(si->slots[i].inf);
    free(si->slots);
    free(si);
}
