/* The embedded API's journal: see journal.h. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "api_objects.h"
#include "base/log.h"
#include "base/strmap.h"
#include "server.h"

#define COMPACT_MIN (64u * 1024 * 1024)

struct ks_journal {
    int fd;
    char *path;
    uint64_t size;      /* bytes in the file */
    uint64_t compacted; /* its size after the last compaction */
};

/* --- reading: the final objects of a journal --------------------------- */

typedef struct obj {
    char *key;   /* node name, "ns/name", or objects' "GVR ns/name" */
    char *ns;    /* pods; objects: their GV/RESOURCE */
    char *body;  /* the object's JSON text */
    char *node;  /* pods: bound to (NULL: not bound) */
    uint64_t rv; /* pods: the binding's resourceVersion */
    int live;
} obj_t;

typedef struct objs {
    obj_t *v;
    size_t n, cap;
    ks_strmap_t index; /* key -> index + 1 into v */
} objs_t;

static void objs_free(objs_t *o)
{
    size_t i;
    for (i = 0; i < o->n; i++) {
        free(o->v[i].key);
        free(o->v[i].ns);
        free(o->v[i].body);
        free(o->v[i].node);
    }
    free(o->v);
    ks_strmap_destroy(&o->index);
    memset(o, 0, sizeof *o);
}

static obj_t *objs_get(objs_t *o, const char *key)
{
    uintptr_t i = (uintptr_t)ks_strmap_get(&o->index, key);
    return i && o->v[i - 1].live ? &o->v[i - 1] : NULL;
}

static void objs_del(objs_t *o, const char *key)
{
    obj_t *x = objs_get(o, key);
    if (x)
        x->live = 0;
}

/* Put (a new entry at the end: creation order; a replaced node keeps its
 * place). -1 out of memory. */
static int objs_put(objs_t *o, const char *key, const char *ns,
                    const char *body)
{
    obj_t *x = objs_get(o, key);
    char *b = strdup(body);
    if (b == NULL)
        return -1;
    if (x) {
        free(x->body);
        x->body = b;
        return 0;
    }
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        obj_t *v = realloc(o->v, cap * sizeof *v);
        if (v == NULL) {
            free(b);
            return -1;
        }
        o->v = v;
        o->cap = cap;
    }
    x = &o->v[o->n];
    memset(x, 0, sizeof *x);
    x->key = strdup(key);
    x->ns = ns ? strdup(ns) : NULL;
    x->body = b;
    x->live = 1;
    if (x->key == NULL || (ns && x->ns == NULL)) {
        free(x->key);
        free(x->ns);
        free(b);
        return -1;
    }
    /* The index points at the newest entry of a key. */
    if (ks_strmap_put(&o->index, x->key, (void *)(uintptr_t)(o->n + 1)) != 0) {
        free(x->key);
        free(x->ns);
        free(b);
        return -1;
    }
    o->n++;
    return 0;
}

typedef struct state {
    objs_t nodes, pods, objects;
    uint64_t max_rv;
    uint64_t max_orv; /* the declared resources' counter at deletions */
} state_t;

static void state_free(state_t *s)
{
    objs_free(&s->nodes);
    objs_free(&s->pods);
    objs_free(&s->objects);
}

/* A declared resource's object's key: "GVR ns/name". */
static void object_key(char *buf, size_t len, const char *gvr,
                       const char *ns, const char *name)
{
    snprintf(buf, len, "%s %s/%s", gvr, ns, name);
}

static const char *str_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Apply one record. 0; 1 not a record we know (ignored); -1 memory. */
static int apply_record(state_t *s, json_t *r)
{
    json_t *v;
    const char *k;
    char *text;
    int rc;
    if ((v = json_object_get(r, "n")) != NULL && json_is_object(v)) {
        const char *name = str_of(json_object_get(v, "metadata"), "name");
        if (name == NULL)
            return 1;
        if ((text = json_dumps(v, JSON_COMPACT)) == NULL)
            return -1;
        rc = objs_put(&s->nodes, name, NULL, text);
        free(text);
        return rc;
    }
    if ((k = str_of(r, "dn")) != NULL) {
        objs_del(&s->nodes, k);
        return 0;
    }
    if ((v = json_object_get(r, "p")) != NULL && json_is_object(v) &&
        (k = str_of(r, "k")) != NULL && str_of(r, "ns") != NULL) {
        obj_t *x;
        json_t *rv = json_object_get(r, "rv");
        const char *node = str_of(r, "node");
        if ((text = json_dumps(v, JSON_COMPACT)) == NULL)
            return -1;
        objs_del(&s->pods, k); /* a new pod of the same name */
        rc = objs_put(&s->pods, k, str_of(r, "ns"), text);
        free(text);
        if (rc == 0 && node && (x = objs_get(&s->pods, k)) != NULL) {
            /* a compacted record: the pod and its binding */
            x->node = strdup(node);
            x->rv = json_is_integer(rv) ? (uint64_t)json_integer_value(rv)
                                        : 0;
            if (x->rv > s->max_rv)
                s->max_rv = x->rv;
            if (x->node == NULL)
                return -1;
        }
        return rc;
    }
    if ((k = str_of(r, "dp")) != NULL) {
        objs_del(&s->pods, k);
        return 0;
    }
    if ((v = json_object_get(r, "o")) != NULL && json_is_object(v) &&
        (k = str_of(r, "r")) != NULL) {
        const json_t *md = json_object_get(v, "metadata");
        const char *name = str_of((json_t *)md, "name");
        const char *ns = str_of((json_t *)md, "namespace");
        char key[1200];
        if (name == NULL)
            return 1;
        object_key(key, sizeof key, k, ns ? ns : "", name);
        if ((text = json_dumps(v, JSON_COMPACT)) == NULL)
            return -1;
        rc = objs_put(&s->objects, key, k, text);
        free(text);
        return rc;
    }
    if ((k = str_of(r, "do")) != NULL && str_of(r, "r") != NULL) {
        char key[1200];
        const char *ns = str_of(r, "ns");
        json_t *rv = json_object_get(r, "rv");
        object_key(key, sizeof key, str_of(r, "r"), ns ? ns : "", k);
        objs_del(&s->objects, key);
        if (json_is_integer(rv) &&
            (uint64_t)json_integer_value(rv) > s->max_orv)
            s->max_orv = (uint64_t)json_integer_value(rv);
        return 0;
    }
    if ((v = json_object_get(r, "orv")) != NULL && json_is_integer(v)) {
        if ((uint64_t)json_integer_value(v) > s->max_orv)
            s->max_orv = (uint64_t)json_integer_value(v);
        return 0;
    }
    if ((k = str_of(r, "b")) != NULL && str_of(r, "node") != NULL) {
        obj_t *x = objs_get(&s->pods, k);
        json_t *rv = json_object_get(r, "rv");
        if (x == NULL)
            return 0; /* deleted meanwhile */
        free(x->node);
        x->node = strdup(str_of(r, "node"));
        x->rv = json_is_integer(rv) ? (uint64_t)json_integer_value(rv) : 0;
        if (x->rv > s->max_rv)
            s->max_rv = x->rv;
        return x->node ? 0 : -1;
    }
    return 1;
}

/* Read the whole file into s. A missing file is empty. */
static int read_journal(const char *path, state_t *s, uint64_t *size,
                        ks_error_t *err)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    *size = 0;
    if (f == NULL)
        return errno == ENOENT
                   ? 0
                   : ks_error_set(err, KS_EIO, "%s: cannot read: %s", path,
                                  strerror(errno));
    while ((len = getline(&line, &cap, f)) > 0) {
        json_error_t je;
        json_t *r;
        lineno++;
        *size += (uint64_t)len;
        if (line[len - 1] != '\n')
            break; /* a torn last record: the crash came mid-write */
        r = json_loadb(line, (size_t)len, 0, &je);
        if (r == NULL || !json_is_object(r)) {
            ks_log(KS_LOGL_WARN, "%s:%lu: not a journal record (%s); "
                                 "skipped",
                   path, lineno, r ? "not an object" : je.text);
            json_decref(r);
            continue;
        }
        if (apply_record(s, r) < 0) {
            json_decref(r);
            rc = ks_error_set(err, KS_ENOMEM, "%s:%lu: out of memory", path,
                              lineno);
            break;
        }
        json_decref(r);
    }
    free(line);
    fclose(f);
    return rc;
}

/* --- writing -------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write `r` as one line (consumes the reference). */
static int put_record(int fd, json_t *r, uint64_t *size)
{
    char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
    size_t n;
    int rc;
    json_decref(r);
    if (text == NULL)
        return -1;
    n = strlen(text);
    text[n] = '\n'; /* over the NUL: one write for the whole line */
    rc = write_all(fd, text, n + 1);
    free(text);
    if (rc == 0 && size)
        *size += n + 1;
    return rc;
}

/* Rewrite the journal with the final objects of `s`, atomically. */
static int write_compacted(const char *path, const state_t *s,
                           uint64_t *size, ks_error_t *err)
{
    char tmp[4200];
    size_t i;
    int fd, rc = 0;
    *size = 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return ks_error_set(err, KS_EIO, "%s: cannot write: %s", tmp,
                            strerror(errno));
    for (i = 0; rc == 0 && i < s->nodes.n; i++) {
        const obj_t *x = &s->nodes.v[i];
        if (x->live)
            rc = put_record(fd, json_pack("{s:o}", "n",
                                          json_loads(x->body, 0, NULL)),
                            size);
    }
    if (rc == 0 && s->max_orv)
        rc = put_record(fd, json_pack("{s:I}", "orv",
                                      (json_int_t)s->max_orv),
                        size);
    for (i = 0; rc == 0 && i < s->objects.n; i++) {
        const obj_t *x = &s->objects.v[i];
        if (x->live)
            rc = put_record(fd, json_pack("{s:o, s:s}", "o",
                                          json_loads(x->body, 0, NULL), "r",
                                          x->ns),
                            size);
    }
    for (i = 0; rc == 0 && i < s->pods.n; i++) {
        const obj_t *x = &s->pods.v[i];
        json_t *r;
        if (!x->live)
            continue;
        r = json_pack("{s:o, s:s, s:s}", "p", json_loads(x->body, 0, NULL),
                      "ns", x->ns, "k", x->key);
        if (r && x->node) {
            json_object_set_new(r, "node", json_string(x->node));
            json_object_set_new(r, "rv", json_integer((json_int_t)x->rv));
        }
        rc = put_record(fd, r, size);
    }
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        unlink(tmp);
        return ks_error_set(err, KS_EIO, "%s: cannot write the compacted "
                                         "journal: %s",
                            path, strerror(errno));
    }
    return 0;
}

/* --- replay ---------------------------------------------------------------- */

static void replay_request(ks_server_t *srv, const char *body, int pod,
                           const char *ns)
{
    ks_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "";
    req.query = "";
    req.content_type = "application/json";
    req.body = body;
    req.body_len = strlen(body);
    /* The API's own handlers, answering no one (api.h: a NULL conn). */
    if (pod)
        ks_api_pods(srv, NULL, &req, ns, NULL);
    else
        ks_api_nodes(srv, NULL, &req, NULL);
}

/* The declared resources' objects into their stores; the number
 * restored. */
static size_t replay_objects(ks_server_t *srv, const state_t *s)
{
    size_t i, n = 0;
    for (i = 0; i < s->objects.n; i++) {
        const obj_t *x = &s->objects.v[i];
        ks_error_t err;
        json_t *doc;
        if (!x->live)
            continue;
        ks_error_init(&err);
        if ((doc = json_loads(x->body, 0, NULL)) == NULL) {
            ks_log(KS_LOGL_WARN, "journal: %s: out of memory", x->key);
            continue;
        }
        if (ks_objects_restore(srv, x->ns, doc, &err) != 0)
            ks_log(err.code == KS_ENOTFOUND ? KS_LOGL_INFO : KS_LOGL_WARN,
                   "journal: %s: not restored: %s (kept in the journal)",
                   x->key, err.msg);
        else
            n++;
    }
    return n;
}

/* Replay s into srv: nodes, the declared resources' objects, then pods
 * (bound ones created bound). */
static void replay(ks_server_t *srv, const state_t *s)
{
    size_t i, nodes = 0, pods = 0, bound = 0, objects;
    for (i = 0; i < s->nodes.n; i++)
        if (s->nodes.v[i].live) {
            replay_request(srv, s->nodes.v[i].body, 0, NULL);
            nodes++;
        }
    objects = replay_objects(srv, s);
    if (s->max_orv > srv->object_rv)
        srv->object_rv = s->max_orv;
    if (objects)
        fprintf(stderr, "ksched serve: journal: restored %zu object(s) of "
                        "declared resources\n",
                objects);
    for (i = 0; i < s->pods.n; i++) {
        const obj_t *x = &s->pods.v[i];
        const char *body = x->body;
        char *bound_body = NULL;
        ks_pod_entry_t *e;
        if (!x->live)
            continue;
        if (x->node) {
            json_t *doc = json_loads(x->body, 0, NULL), *spec;
            if (doc && !json_is_object(spec = json_object_get(doc, "spec"))) {
                json_object_set_new(doc, "spec", json_object());
                spec = json_object_get(doc, "spec");
            }
            if (doc && spec) {
                json_object_set_new(spec, "nodeName", json_string(x->node));
                bound_body = json_dumps(doc, JSON_COMPACT);
            }
            json_decref(doc);
            if (bound_body)
                body = bound_body;
        }
        replay_request(srv, body, 1, x->ns);
        free(bound_body);
        pods++;
        e = ks_strmap_get(&srv->pods, x->key);
        if (e && x->node && e->state == KS_POD_BOUND) {
            e->bind_rv = x->rv;
            bound++;
        }
    }
    if (s->max_rv > srv->bind_rv)
        srv->bind_rv = s->max_rv;
    if (nodes || pods)
        fprintf(stderr,
                "ksched serve: journal: restored %zu node(s) and %zu pod(s) "
                "(%zu bound, %zu to schedule)\n",
                nodes, pods, bound, pods - bound);
}

int ks_journal_open(ks_server_t *srv, const char *path, ks_error_t *err)
{
    state_t s;
    ks_journal_t *j;
    uint64_t size = 0;
    int rc;
    memset(&s, 0, sizeof s);
    if ((rc = read_journal(path, &s, &size, err)) != 0) {
        state_free(&s);
        return rc;
    }
    srv->journal = NULL; /* replaying writes nothing */
    replay(srv, &s);
    rc = write_compacted(path, &s, &size, err);
    state_free(&s);
    if (rc != 0)
        return rc;
    j = calloc(1, sizeof *j);
    if (j == NULL || (j->path = strdup(path)) == NULL) {
        free(j);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    j->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (j->fd < 0) {
        rc = ks_error_set(err, KS_EIO, "%s: cannot append: %s", path,
                          strerror(errno));
        free(j->path);
        free(j);
        return rc;
    }
    j->size = j->compacted = size;
    srv->journal = j;
    return 0;
}

void ks_journal_close(ks_server_t *srv)
{
    ks_journal_t *j = srv->journal;
    if (j == NULL)
        return;
    close(j->fd);
    free(j->path);
    free(j);
    srv->journal = NULL;
}

/* Compact from the file itself when it has grown enough. */
static void maybe_compact(ks_server_t *srv)
{
    ks_journal_t *j = srv->journal;
    uint64_t limit = j->compacted * 4;
    state_t s;
    ks_error_t err = {0};
    uint64_t size = 0;
    int fd;
    if (limit < COMPACT_MIN)
        limit = COMPACT_MIN;
    if (j->size < limit)
        return;
    memset(&s, 0, sizeof s);
    if (read_journal(j->path, &s, &size, &err) != 0 ||
        write_compacted(j->path, &s, &size, &err) != 0) {
        ks_log(KS_LOGL_WARN, "journal compaction: %s", err.msg);
        state_free(&s);
        j->compacted = j->size; /* try again after it has grown more */
        return;
    }
    state_free(&s);
    fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        ks_log(KS_LOGL_ERROR, "%s: cannot append after compaction: %s",
               j->path, strerror(errno));
        return;
    }
    close(j->fd);
    j->fd = fd;
    j->size = j->compacted = size;
}

static void record(ks_server_t *srv, json_t *r)
{
    ks_journal_t *j = srv->journal;
    if (j == NULL) {
        json_decref(r);
        return;
    }
    if (put_record(j->fd, r, &j->size) != 0)
        ks_log(KS_LOGL_ERROR, "%s: cannot append a record: %s", j->path,
               strerror(errno));
    maybe_compact(srv);
}

void ks_journal_node_put(ks_server_t *srv, const ks_http_request_t *req)
{
    if (srv->journal)
        record(srv, json_pack("{s:o}", "n",
                              json_loadb(req->body, req->body_len, 0, NULL)));
}

void ks_journal_node_deleted(ks_server_t *srv, const char *name)
{
    if (srv->journal)
        record(srv, json_pack("{s:s}", "dn", name));
}

void ks_journal_pod_created(ks_server_t *srv, const ks_http_request_t *req,
                            const char *ns, const char *key)
{
    if (srv->journal)
        record(srv, json_pack("{s:o, s:s, s:s}", "p",
                              json_loadb(req->body, req->body_len, 0, NULL),
                              "ns", ns, "k", key));
}

void ks_journal_pod_deleted(ks_server_t *srv, const char *key)
{
    if (srv->journal)
        record(srv, json_pack("{s:s}", "dp", key));
}

void ks_journal_pod_bound(ks_server_t *srv, const char *key, const char *node,
                          uint64_t rv)
{
    if (srv->journal)
        record(srv, json_pack("{s:s, s:s, s:I}", "b", key, "node", node, "rv",
                              (json_int_t)rv));
}

void ks_journal_object_put(ks_server_t *srv, const char *gvr, json_t *obj)
{
    if (srv->journal)
        record(srv, json_pack("{s:O, s:s}", "o", obj, "r", gvr));
}

void ks_journal_object_deleted(ks_server_t *srv, const char *gvr,
                               const char *ns, const char *name)
{
    if (srv->journal)
        record(srv, json_pack("{s:s, s:s, s:s, s:I}", "do", name, "ns", ns,
                              "r", gvr, "rv", (json_int_t)srv->object_rv));
}
