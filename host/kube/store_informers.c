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
    int absent; /* a built-in resource this server does not serve: empty */
    char last_error[1200];
} slot_t;

/* How often the set looks for stores registered after it was made. */
#define REFRESH_MS 1000

struct ks_store_informers {
    slot_t **slots; /* each allocated alone: informers hold the address */
    size_t n;
    ks_store_informers_handler_t h;
    uv_loop_t *loop;
    ks_kube_client_t *client;
    uv_timer_t timer;
    int timer_on;
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

/* A group of Kubernetes itself (core, a group without a dot, *.k8s.io,
 * *.kubernetes.io), as opposed to a CustomResourceDefinition's (whose
 * group has a dot, and may not use those two without approval). */
static int builtin_group(const char *g)
{
    size_t n = strlen(g);
    return n == 0 || strchr(g, '.') == NULL ||
           (n > 7 && strcmp(g + n - 7, ".k8s.io") == 0) ||
           (n > 14 && strcmp(g + n - 14, ".kubernetes.io") == 0);
}

static void synced(void *ud)
{
    slot_t *sl = ud;
    sl->absent = 0;
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
    if (status == 404 && builtin_group(r->group)) {
        /* An API server older than the resource (resource.k8s.io/v1 came
         * with v1.34): the plugins see none, and serve does not wait for
         * it; the informer keeps trying, so an upgraded server fills it. */
        if (!sl->absent) {
            ks_log(KS_LOGL_WARN,
                   "the API server does not serve %s (404 on %s): it is "
                   "older than that resource; plugins that read it see "
                   "none until it does",
                   sl->label, sl->path);
            ks_store_clear(sl->store);
            ks_store_set_synced(sl->store, 1);
            sl->absent = 1;
            sl->last_error[0] = '\0';
            if (ks_store_informers_synced(sl->set) && sl->set->h.synced)
                sl->set->h.synced(sl->set->h.ud);
        }
        return;
    }
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

/* A slot and its informer for store `s`; NULL with err set. */
static slot_t *slot_new(ks_store_informers_t *si, ks_store_t *s,
                        ks_error_t *err)
{
    const ks_resource_ref_t *r = ks_store_ref(s);
    slot_t *sl = calloc(1, sizeof *sl), **slots;
    ks_informer_opts_t io;
    ks_informer_handler_t ih;
    if (sl == NULL ||
        (slots = realloc(si->slots, (si->n + 1) * sizeof *slots)) == NULL) {
        free(sl);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    si->slots = slots;
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
    sl->inf = ks_informer_new(si->loop, si->client, &io, &ih, err);
    if (sl->inf == NULL) {
        free(sl);
        return NULL;
    }
    si->slots[si->n++] = sl;
    return sl;
}

static int slot_start(slot_t *sl, ks_error_t *err)
{
    /* A store fills from a fresh list: drop what an earlier run left (a
     * replaced worker's source starts again). */
    ks_store_clear(sl->store);
    ks_store_set_synced(sl->store, 0);
    return ks_informer_start(sl->inf, err);
}

static int has_store(const ks_store_informers_t *si, const ks_store_t *s)
{
    size_t i;
    for (i = 0; i < si->n; i++)
        if (si->slots[i]->store == s)
            return 1;
    return 0;
}

/* Stores registered after the set was made (a reload loaded a plugin
 * that declares a new resource) get their informer here. */
static void on_refresh(uv_timer_t *t)
{
    ks_store_informers_t *si = t->data;
    ks_store_t *s;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s)) {
        ks_error_t err;
        slot_t *sl;
        if (!ks_store_wanted(s) || has_store(si, s))
            continue;
        ks_error_init(&err);
        if ((sl = slot_new(si, s, &err)) == NULL ||
            slot_start(sl, &err) != 0) {
            ks_log(KS_LOGL_ERROR, "%s: cannot watch a newly declared "
                                  "resource: %s", ks_store_ref(s)->resource,
                   err.msg);
            continue;
        }
        ks_log(KS_LOGL_INFO, "%s: a plugin loaded since the start declares "
                             "it; listing and watching it", sl->label);
    }
}

ks_store_informers_t *ks_store_informers_new(
    uv_loop_t *loop, ks_kube_client_t *client,
    const ks_store_informers_handler_t *h, ks_error_t *err)
{
    ks_store_informers_t *si = calloc(1, sizeof *si);
    ks_store_t *s;
    if (si == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    if (h != NULL)
        si->h = *h;
    si->loop = loop;
    si->client = client;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s))
        if (ks_store_wanted(s) && slot_new(si, s, err) == NULL) {
            ks_store_informers_close(si);
            return NULL;
        }
    return si;
}

int ks_store_informers_start(ks_store_informers_t *si, ks_error_t *err)
{
    size_t i;
    for (i = 0; i < si->n; i++)
        if (slot_start(si->slots[i], err) != 0)
            return err ? err->code : KS_EIO;
    if (uv_timer_init(si->loop, &si->timer) == 0) {
        si->timer_on = 1;
        si->timer.data = si;
        uv_timer_start(&si->timer, on_refresh, REFRESH_MS, REFRESH_MS);
    }
    if (si->n == 0 && si->h.synced)
        si->h.synced(si->h.ud);
    return 0;
}

int ks_store_informers_synced(const ks_store_informers_t *si)
{
    size_t i;
    if (si == NULL)
        return 1;
    for (i = 0; i < si->n; i++)
        if (!ks_informer_synced(si->slots[i]->inf) && !si->slots[i]->absent)
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
        const slot_t *sl = si->slots[i];
        int w;
        if (ks_informer_synced(sl->inf) || sl->absent)
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

static void free_set(ks_store_informers_t *si)
{
    size_t i;
    for (i = 0; i < si->n; i++)
        free(si->slots[i]);
    free(si->slots);
    free(si);
}

static void on_timer_closed(uv_handle_t *h)
{
    free_set(h->data);
}

void ks_store_informers_close(ks_store_informers_t *si)
{
    size_t i;
    if (si == NULL)
        return;
    /* The informers stop calling back at once (informer.h). */
    for (i = 0; i < si->n; i++)
        ks_informer_close(si->slots[i]->inf);
    if (si->timer_on) {
        uv_timer_stop(&si->timer);
        uv_close((uv_handle_t *)&si->timer, on_timer_closed);
        return;
    }
    free_set(si);
}
