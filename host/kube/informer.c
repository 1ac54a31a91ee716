/* List and watch of one resource (client-go's reflector). */
#include "informer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/rand.h"
#include "base/strmap.h"

#define BACKOFF_BASE_MS 800
#define BACKOFF_MAX_MS 30000
#define WATCH_LINE_MAX (64u << 20) /* one event larger than this is refused */
#define LIST_TIMEOUT_MS 60000

typedef struct rec {
    char *uid;
    uint64_t mark; /* the list that last saw it */
    char key[];
} rec_t;

enum { ST_IDLE = 0, ST_LISTING, ST_WATCHING, ST_BACKOFF, ST_CLOSED };

struct ks_informer {
    uv_loop_t *loop;
    ks_kube_client_t *client;
    char *resource, *path, *field_selector;
    uint32_t page_size;
    ks_informer_handler_t h;
    ks_strmap_t store; /* key -> rec_t */
    char rv[64];
    char *cont;        /* list continue token */
    uint64_t list_gen; /* marks of the list in progress */
    int state, synced, relist_next;
    unsigned failures_in_row;
    ks_kube_call_t *call;
    uv_timer_t timer;
    int timer_inited;
    ks_buf_t line;      /* partial watch line */
    uint64_t watch_events; /* events of the current watch */
    uint64_t rng;
    ks_informer_stats_t stats;
};

static void do_list(ks_informer_t *inf);
static void do_watch(ks_informer_t *inf);

static uint32_t rnd(ks_informer_t *inf)
{
    return (uint32_t)(ks_rand_next(&inf->rng) >> 32);
}

/* --- the store ------------------------------------------------------------- */

/* "ns/name" (or "name") of an object into buf; the uid, or "". */
static int obj_key(const json_t *obj, char *buf, size_t len, const char **uid)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *u = json_string_value(json_object_get(md, "uid"));
    int n;
    if (name == NULL)
        return -1;
    *uid = u ? u : "";
    if (ns && ns[0])
        n = snprintf(buf, len, "%s/%s", ns, name);
    else
        n = snprintf(buf, len, "%s", name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void rec_free(rec_t *r)
{
    if (r) {
        free(r->uid);
        free(r);
    }
}

static int store_put(ks_informer_t *inf, const json_t *obj)
{
    char key[600];
    const char *uid;
    rec_t *r;
    size_t kl;
    if (obj_key(obj, key, sizeof key, &uid) != 0)
        return -1;
    r = ks_strmap_get(&inf->store, key);
    if (r != NULL) {
        if (strcmp(r->uid, uid) != 0) {
            char *u = strdup(uid);
            if (u == NULL)
                return -1;
            free(r->uid);
            r->uid = u;
        }
        r->mark = inf->list_gen;
        return 0;
    }
    kl = strlen(key) + 1;
    if ((r = calloc(1, sizeof *r + kl)) == NULL)
        return -1;
    memcpy(r->key, key, kl);
    r->mark = inf->list_gen;
    if ((r->uid = strdup(uid)) == NULL ||
        ks_strmap_put(&inf->store, r->key, r) != 0) {
        rec_free(r);
        return -1;
    }
    return 0;
}

static void store_del(ks_informer_t *inf, const json_t *obj)
{
    char key[600];
    const char *uid;
    if (obj_key(obj, key, sizeof key, &uid) == 0)
        rec_free(ks_strmap_del(&inf->store, key));
}

static void store_clear(ks_informer_t *inf)
{
    size_t i;
    for (i = 0; i < inf->store.cap; i++)
        if (inf->store.slots[i].key)
            rec_free(inf->store.slots[i].val);
    ks_strmap_destroy(&inf->store);
}

/* After a complete list: everything the list did not see is gone. */
static void store_sweep(ks_informer_t *inf)
{
    size_t i = 0;
    while (i < inf->store.cap) {
        rec_t *r = inf->store.slots[i].val;
        const char *slash;
        json_t *stub;
        if (inf->store.slots[i].key == NULL || r->mark == inf->list_gen) {
            i++;
            continue;
        }
        slash = strchr(r->key, '/');
        stub = slash ? json_pack("{s:{s:s%, s:s, s:s}}", "metadata",
                                 "namespace", r->key,
                                 (size_t)(slash - r->key), "name", slash + 1,
                                 "uid", r->uid)
                     : json_pack("{s:{s:s, s:s}}", "metadata", "name",
                                 r->key, "uid", r->uid);
        ks_strmap_del(&inf->store, r->key);
        if (stub && inf->h.remove)
            inf->h.remove(inf->h.ud, stub);
        json_decref(stub);
        rec_free(r);
        /* Deletion shifted entries back: look at slot i again. */
    }
}

/* --- retry ---------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    ks_informer_t *inf = t->data;
    if (inf->state != ST_BACKOFF)
        return;
    if (inf->relist_next || inf->rv[0] == '\0')
        do_list(inf);
    else
        do_watch(inf);
}

static void failed(ks_informer_t *inf, long status, const char *msg,
                   int relist)
{
    uint64_t delay = BACKOFF_BASE_MS;
    unsigned i;
    inf->stats.failures++;
    if (inf->h.failed)
        inf->h.failed(inf->h.ud, status, msg);
    for (i = 0; i < inf->failures_in_row && delay < BACKOFF_MAX_MS; i++)
        delay *= 2;
    if (delay > BACKOFF_MAX_MS)
        delay = BACKOFF_MAX_MS;
    delay += delay * (rnd(inf) % 1000) / 1000; /* jitter up to 100% */
    if (delay > BACKOFF_MAX_MS)
        delay = BACKOFF_MAX_MS;
    inf->failures_in_row++;
    inf->relist_next = relist;
    inf->state = ST_BACKOFF;
    ks_log(inf->failures_in_row > 1 ? KS_LOGL_INFO : KS_LOGL_WARN,
           "%s: %s; retrying in %.1f s", inf->resource, msg,
           (double)delay / 1000);
    uv_timer_start(&inf->timer, on_timer, delay, 0);
}

/* --- list ------------------------------------------------------------------- */

static void list_done(void *ud, const ks_kube_result_t *r)
{
    ks_informer_t *inf = ud;
    json_error_t jerr;
    json_t *doc, *items, *md, *item;
    const char *cont, *rv;
    size_t i;

    inf->call = NULL;
    if (r->status == 410 && inf->cont) {
        /* The continue token expired: start the list again. */
        free(inf->cont);
        inf->cont = NULL;
        inf->stats.gone++;
        do_list(inf);
        return;
    }
    if (r->status != 200) {
        failed(inf, r->status, r->message, 1);
        return;
    }
    doc = json_loadb(r->body, r->body_len, 0, &jerr);
    items = json_object_get(doc, "items");
    md = json_object_get(doc, "metadata");
    if (doc == NULL || !json_is_array(items)) {
        char msg[300];
        snprintf(msg, sizeof msg, "list of %s: not a list (%s)",
                 inf->resource, doc ? "no items" : jerr.text);
        json_decref(doc);
        failed(inf, r->status, msg, 1);
        return;
    }
    json_array_foreach(items, i, item) {
        if (store_put(inf, item) != 0) {
            ks_log(KS_LOGL_WARN, "%s: an item without metadata.name, or out "
                                 "of memory; skipped",
                   inf->resource);
            continue;
        }
        if (inf->h.upsert)
            inf->h.upsert(inf->h.ud, item);
        if (inf->state == ST_CLOSED)
            break;
    }
    cont = json_string_value(json_object_get(md, "continue"));
    rv = json_string_value(json_object_get(md, "resourceVersion"));
    free(inf->cont);
    inf->cont = NULL;
    if (inf->state == ST_CLOSED) {
        json_decref(doc);
        return;
    }
    if (cont && cont[0]) {
        inf->cont = strdup(cont);
        json_decref(doc);
        if (inf->cont == NULL) {
            failed(inf, 0, "out of memory", 1);
            return;
        }
        do_list(inf);
        return;
    }
    snprintf(inf->rv, sizeof inf->rv, "%s", rv ? rv : "");
    json_decref(doc);
    store_sweep(inf);
    inf->stats.lists++;
    inf->relist_next = 0;
    if (!inf->synced) {
        inf->synced = 1;
        if (inf->h.synced)
            inf->h.synced(inf->h.ud);
    }
    if (inf->state != ST_CLOSED)
        do_watch(inf);
}

/* The path of a list or watch request: the informer's path, `params`,
 * then its field selector and `cont` (a list's continue token; may be
 * NULL), escaped. 0, or -1 with the reason in *why (the request would be
 * too long, or out of memory). */
static int request_path(const ks_informer_t *inf, const char *params,
                        const char *cont, char *buf, size_t len,
                        const char **why)
{
    char *sel = NULL, *c = NULL;
    int n = -1;
    *why = "out of memory";
    if ((inf->field_selector == NULL ||
         (sel = ks_kube_query_escape(inf->field_selector)) != NULL) &&
        (cont == NULL || (c = ks_kube_query_escape(cont)) != NULL)) {
        n = snprintf(buf, len, "%s?%s%s%s%s%s", inf->path, params,
                     sel ? "&fieldSelector=" : "", sel ? sel : "",
                     c ? "&continue=" : "", c ? c : "");
        if (n < 0 || (size_t)n >= len) {
            *why = "request path too long";
            n = -1;
        }
    }
    free(sel);
    free(c);
    return n < 0 ? -1 : 0;
}

static void do_list(ks_informer_t *inf)
{
    char path[2048], params[32];
    ks_error_t err = {0};
    ks_kube_call_opts_t o;
    const char *why;
    if (inf->cont == NULL)
        inf->list_gen++; /* a new list, from the first page */
    snprintf(params, sizeof params, "limit=%u", inf->page_size);
    if (request_path(inf, params, inf->cont, path, sizeof path, &why) != 0) {
        failed(inf, 0, why, 1);
        return;
    }
    memset(&o, 0, sizeof o);
    o.method = "GET";
    o.path = path;
    o.verb = "LIST";
    o.timeout_ms = LIST_TIMEOUT_MS;
    o.on_done = list_done;
    o.ud = inf;
    inf->state = ST_LISTING;
    inf->call = ks_kube_call(inf->client, &o, &err);
    if (inf->call == NULL)
        failed(inf, 0, err.msg, 1);
}

/* --- watch -------------------------------------------------------------------- */

static void set_rv_from(ks_informer_t *inf, const json_t *obj)
{
    const char *rv = json_string_value(json_object_get(
        json_object_get(obj, "metadata"), "resourceVersion"));
    if (rv && rv[0])
        snprintf(inf->rv, sizeof inf->rv, "%s", rv);
}

/* One watch event line. Returns 1 to stop the watch (410: re-list). */
static int watch_event(ks_informer_t *inf, const char *p, size_t n)
{
    json_error_t jerr;
    json_t *ev = json_loadb(p, n, 0, &jerr), *obj;
    const char *type;
    int stop = 0;
    if (ev == NULL) {
        ks_log(KS_LOGL_WARN, "%s watch: undecodable event (%s); re-listing",
               inf->resource, jerr.text);
        inf->relist_next = 1;
        return 1;
    }
    type = json_string_value(json_object_get(ev, "type"));
    obj = json_object_get(ev, "object");
    if (type == NULL || !json_is_object(obj)) {
        json_decref(ev);
        return 0;
    }
    if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) {
        set_rv_from(inf, obj);
        inf->stats.events++;
        inf->watch_events++;
        if (store_put(inf, obj) == 0 && inf->h.upsert)
            inf->h.upsert(inf->h.ud, obj);
    } else if (strcmp(type, "DELETED") == 0) {
        set_rv_from(inf, obj);
        inf->stats.events++;
        inf->watch_events++;
        store_del(inf, obj);
        if (inf->h.remove)
            inf->h.remove(inf->h.ud, obj);
    } else if (strcmp(type, "BOOKMARK") == 0) {
        set_rv_from(inf, obj);
    } else if (strcmp(type, "ERROR") == 0) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        if (code == 410) {
            inf->stats.gone++;
            ks_log(KS_LOGL_INFO, "%s watch: %s; re-listing", inf->resource,
                   msg ? msg : "resource version too old");
        } else {
            ks_log(KS_LOGL_WARN, "%s watch: error %lld: %s; re-listing",
                   inf->resource, (long long)code, msg ? msg : "");
        }
        inf->relist_next = 1;
        stop = 1;
    }
    json_decref(ev);
    return stop;
}

static int watch_data(void *ud, const char *p, size_t n)
{
    ks_informer_t *inf = ud;
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (inf->line.len + take > WATCH_LINE_MAX) {
            ks_log(KS_LOGL_WARN, "%s watch: an event over %u MiB; re-listing",
                   inf->resource, WATCH_LINE_MAX >> 20);
            inf->relist_next = 1;
            return 1;
        }
        if (nl == NULL) {
            ks_buf_append(&inf->line, p, n);
            return inf->line.oom;
        }
        if (inf->line.len > 0) {
            ks_buf_append(&inf->line, p, take);
            if (inf->line.oom)
                return 1;
            if (watch_event(inf, inf->line.data, inf->line.len))
                return 1;
            ks_buf_reset(&inf->line);
        } else if (take > 0 && watch_event(inf, p, take)) {
            return 1;
        }
        if (inf->state == ST_CLOSED)
            return 1;
        p = nl + 1;
        n -= take + 1;
    }
    return 0;
}

static void watch_done(void *ud, const ks_kube_result_t *r)
{
    ks_informer_t *inf = ud;
    inf->call = NULL;
    ks_buf_reset(&inf->line);
    if (inf->state == ST_CLOSED)
        return;
    if (inf->relist_next) {
        inf->failures_in_row = 0;
        do_list(inf);
        return;
    }
    if (r->status == 410) {
        inf->stats.gone++;
        do_list(inf);
        return;
    }
    if (r->status == 200) {
        /* The server ended the watch (its timeout), or the stream broke
         * after delivering events: reopen from the last version. */
        if (inf->watch_events > 0 || r->message == NULL ||
            r->message[0] == '\0') {
            inf->failures_in_row = 0;
            do_watch(inf);
            return;
        }
    }
    failed(inf, r->status, r->message, 0);
}

static void do_watch(ks_informer_t *inf)
{
    char path[2048], params[sizeof inf->rv + 100];
    ks_error_t err = {0};
    ks_kube_call_opts_t o;
    const char *why;
    snprintf(params, sizeof params,
             "watch=1&allowWatchBookmarks=true&resourceVersion=%s"
             "&timeoutSeconds=%u",
             inf->rv, 300 + rnd(inf) % 300);
    if (request_path(inf, params, NULL, path, sizeof path, &why) != 0) {
        failed(inf, 0, why, 1);
        return;
    }
    memset(&o, 0, sizeof o);
    o.method = "GET";
    o.path = path;
    o.verb = "WATCH";
    o.watch = 1;
    o.on_data = watch_data;
    o.on_done = watch_done;
    o.ud = inf;
    inf->state = ST_WATCHING;
    inf->watch_events = 0;
    ks_buf_reset(&inf->line);
    inf->stats.watches++;
    inf->call = ks_kube_call(inf->client, &o, &err);
    if (inf->call == NULL)
        failed(inf, 0, err.msg, 0);
}

/* --- life cycle ------------------------------------------------------------------- */

ks_informer_t *ks_informer_new(uv_loop_t *loop, ks_kube_client_t *client,
                               const ks_informer_opts_t *o,
                               const ks_informer_handler_t *h,
                               ks_error_t *err)
{
    ks_informer_t *inf = calloc(1, sizeof *inf);
    if (inf == NULL)
        goto oom;
    inf->loop = loop;
    inf->client = client;
    inf->h = *h;
    inf->page_size = o->page_size ? o->page_size : 500;
    inf->rng = (uint64_t)uv_hrtime() ^ (uint64_t)(uintptr_t)inf;
    inf->resource = strdup(o->resource);
    inf->path = strdup(o->path);
    if (o->field_selector &&
        (inf->field_selector = strdup(o->field_selector)) == NULL)
        goto oom;
    if (inf->resource == NULL || inf->path == NULL)
        goto oom;
    if (uv_timer_init(loop, &inf->timer) != 0)
        goto oom;
    inf->timer.data = inf;
    inf->timer_inited = 1;
    return inf;
oom:
    if (inf) {
        free(inf->resource);
        free(inf->path);
        free(inf->field_selector);
        free(inf);
    }
    ks_error_set(err, KS_ENOMEM, "out of memory");
    return NULL;
}

int ks_informer_start(ks_informer_t *inf, ks_error_t *err)
{
    (void)err;
    do_list(inf);
    return 0;
}

static void timer_closed(uv_handle_t *h)
{
    ks_informer_t *inf = h->data;
    free(inf);
}

void ks_informer_close(ks_informer_t *inf)
{
    if (inf == NULL)
        return;
    inf->state = ST_CLOSED;
    if (inf->call)
        ks_kube_call_cancel(inf->call);
    inf->call = NULL;
    store_clear(inf);
    ks_buf_free(&inf->line);
    free(inf->cont);
    free(inf->resource);
    free(inf->path);
    free(inf->field_selector);
    inf->cont = inf->resource = inf->path = inf->field_selector = NULL;
    uv_close((uv_handle_t *)&inf->timer, timer_closed);
}

int ks_informer_synced(const ks_informer_t *inf)
{
    return inf->synced;
}

size_t ks_informer_count(const ks_informer_t *inf)
{
    return inf->store.count;
}

const char *ks_informer_resource(const ks_informer_t *inf)
{
    return inf->resource;
}

const char *ks_informer_resource_version(const ks_informer_t *inf)
{
    return inf->rv;
}

ks_informer_stats_t ks_informer_stats(const ks_informer_t *inf)
{
    return inf->stats;
}
