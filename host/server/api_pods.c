/* /api/v1/namespaces/NS/pods and /api/v1/pods: create, delete, get, list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "journal.h"
#include "base/intern.h"

static const ks_cluster_event_t ev_pod_add = {KS_RES_POD, KS_ACT_ADD};
static const ks_cluster_event_t ev_pod_delete = {KS_RES_POD, KS_ACT_DELETE};

/* --- listing -------------------------------------------------------------- */

typedef struct item {
    const ks_pod_t *pod;
    const char *node;
    const char *message;
} item_t;

typedef struct collect {
    const char *ns; /* NULL: every namespace */
    const char *uid; /* non-NULL: only this pod */
    item_t *a;
    size_t n, cap;
    int oom;
} collect_t;

static void push(collect_t *l, const ks_pod_t *pod, const char *node,
                 const char *message)
{
    if (l->ns && strcmp(pod->ns, l->ns) != 0)
        return;
    if (l->uid && strcmp(pod->uid, l->uid) != 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        item_t *a = realloc(l->a, cap * sizeof *a);
        if (a == NULL) {
            l->oom = 1;
            return;
        }
        l->a = a;
        l->cap = cap;
    }
    l->a[l->n].pod = pod;
    l->a[l->n].node = node;
    l->a[l->n].message = message;
    l->n++;
}

static void visit_pending(void *ud, const ks_pod_t *pod, const char *message,
                          int gated)
{
    (void)gated;
    push(ud, pod, NULL, message);
}

static void visit_cached(ks_pod_t *pod, int assumed, void *ud)
{
    /* An assumed pod is still being bound (Permit, binding cycle). */
    push(ud, pod, assumed ? NULL : pod->node_name, NULL);
}

static int cmp_item(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    int c = strcmp(x->pod->ns, y->pod->ns);
    return c ? c : strcmp(x->pod->name, y->pod->name);
}

static void collect_pods(ks_server_t *srv, collect_t *l)
{
    size_t i;
    ks_scheduler_foreach_pending(srv->sched, visit_pending, l);
    ks_cache_foreach_pod(srv->cache, visit_cached, l);
    for (i = 0; i < srv->pods.cap; i++) {
        ks_pod_entry_t *e = srv->pods.slots[i].val;
        if (srv->pods.slots[i].key && e->state == KS_POD_OTHER)
            push(l, e->other, NULL,
                 "no profile of this scheduler has the pod's schedulerName");
    }
}

static void list_pods(ks_server_t *srv, ks_http_conn_t *c, const char *ns)
{
    collect_t l = {ns, NULL, NULL, 0, 0, 0};
    json_t *items = json_array();
    size_t i;
    collect_pods(srv, &l);
    if (l.oom || items == NULL) {
        free(l.a);
        json_decref(items);
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    if (l.n > 1) /* l.a is NULL when nothing was collected */
        qsort(l.a, l.n, sizeof *l.a, cmp_item);
    for (i = 0; i < l.n; i++)
        json_array_append_new(items, ks_api_pod_json(l.a[i].pod, l.a[i].node,
                                                     l.a[i].message));
    free(l.a);
    ks_api_json(c, 200,
                json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", "v1", "kind",
                          "PodList", "metadata", "items", items));
}

/* The JSON view of one indexed pod, or NULL when it cannot be found. */
static json_t *entry_json(ks_server_t *srv, ks_pod_entry_t *e)
{
    collect_t l = {NULL, e->uid, NULL, 0, 0, 0};
    json_t *out = NULL;
    if (e->state == KS_POD_OTHER)
        return ks_api_pod_json(e->other, NULL, NULL);
    collect_pods(srv, &l);
    if (l.n > 0)
        out = ks_api_pod_json(l.a[0].pod, l.a[0].node, l.a[0].message);
    free(l.a);
    return out;
}

/* --- create --------------------------------------------------------------- */

static void create_pod(ks_server_t *srv, ks_http_conn_t *c,
                       const ks_http_request_t *req, const char *ns)
{
    char key[600];
    json_t *doc = ks_api_decode(c, req, "Pod", "pods");
    json_t *md, *jns, *juid;
    ks_pod_t *pod;
    ks_pod_entry_t *e;
    ks_error_t err = {0};
    int rc, has_uid;

    if (doc == NULL)
        return;
    md = json_object_get(doc, "metadata");
    jns = json_object_get(md, "namespace");
    juid = json_object_get(md, "uid");
    has_uid = json_is_string(juid) && json_string_value(juid)[0];
    if (jns && (!json_is_string(jns) ||
                (json_string_value(jns)[0] &&
                 strcmp(json_string_value(jns), ns) != 0))) {
        ks_api_status(c, 400, "BadRequest", "pods", NULL,
                      "the namespace of the provided object (%s) does not "
                      "match the namespace sent on the request (%s)",
                      json_is_string(jns) ? json_string_value(jns) : "?",
                      ns);
        json_decref(doc);
        return;
    }
    rc = ks_api_read_pod(c, doc, &pod);
    json_decref(doc);
    if (rc != 0)
        return;
    /* The namespace comes from the URL when the body has none. */
    if (strcmp(pod->ns, ns) != 0) {
        pod->ns = ks_intern_str(ks_intern_global(), ns);
        if (pod->ns == NULL) {
            ks_api_status(c, 500, "InternalError", "pods", NULL,
                          "out of memory");
            ks_pod_free(pod);
            return;
        }
        if (!has_uid) {
            snprintf(key, sizeof key, "%s/%s", pod->ns, pod->name);
            pod->uid = ks_intern_str(ks_intern_global(), key);
        }
    }
    /* Names the API could not address later are refused now. */
    if (ks_api_validate_pod(c, pod) != 0) {
        ks_pod_free(pod);
        return;
    }
    if (ks_server_pod_by_key(srv, pod->ns, pod->name) != NULL) {
        ks_api_status(c, 409, "AlreadyExists", "pods", pod->name,
                      "pods \"%s\" already exists", pod->name);
        ks_pod_free(pod);
        return;
    }
    if (ks_server_pod_by_uid(srv, pod->uid) != NULL) {
        ks_api_status(c, 409, "AlreadyExists", "pods", pod->name,
                      "a pod with uid \"%s\" already exists", pod->uid);
        ks_pod_free(pod);
        return;
    }
    /* The same uid still in the cache: a pod deleted while its binding
     * was under way, dropped when the binding answers. */
    if (ks_cache_get_pod(srv->cache, pod->uid) != NULL) {
        ks_api_status(c, 409, "AlreadyExists", "pods", pod->name,
                      "object is being deleted: pods \"%s\" already exists",
                      pod->name);
        ks_pod_free(pod);
        return;
    }
    if (pod->node_name[0] != '\0') {
        /* Already bound: it only occupies its node. */
        if (ks_cache_add_pod(srv->cache, pod, &err) != 0) {
            ks_api_status(c, 409, "AlreadyExists", "pods", pod->name, "%s",
                          err.msg);
            ks_pod_free(pod);
            return;
        }
        e = ks_server_pod_add(srv, pod, KS_POD_BOUND);
        if (e) {
            e->node = pod->node_name;
            ks_journal_pod_created(srv, req, ns, e->key);
        }
        /* With the pod (the cache's now) for the QueueingHints. */
        ks_scheduler_on_cluster_event(srv->sched, ev_pod_add, NULL,
                                      ks_cache_get_pod(srv->cache, pod->uid));
        ks_api_json(c, 201, ks_api_pod_json(pod, pod->node_name, NULL));
        return;
    }
    e = ks_server_pod_add(srv, pod, KS_POD_PENDING);
    if (e == NULL) {
        ks_api_status(c, 500, "InternalError", "pods", pod->name,
                      "out of memory");
        ks_pod_free(pod);
        return;
    }
    ks_journal_pod_created(srv, req, ns, e->key);
    /* Render before the scheduler may take and bind it. */
    {
        json_t *out = ks_api_pod_json(pod, NULL, NULL);
        if (ks_scheduler_add_pod(srv->sched, pod) != 0) {
            e->state = KS_POD_OTHER;
            e->other = pod;
        } else {
            ks_scheduler_kick(srv->sched);
        }
        ks_api_json(c, 201, out);
    }
}

/* --- delete --------------------------------------------------------------- */

static void delete_pod(ks_server_t *srv, ks_http_conn_t *c, const char *ns,
                       const char *name)
{
    ks_pod_entry_t *e = ks_server_pod_by_key(srv, ns, name);
    json_t *out;
    if (e == NULL) {
        ks_api_status(c, 404, "NotFound", "pods", name,
                      "pods \"%s\" not found", name);
        return;
    }
    switch (e->state) {
    case KS_POD_OTHER:
        out = ks_api_pod_json(e->other, NULL, NULL);
        ks_pod_free(e->other);
        e->other = NULL;
        ks_server_pod_remove(srv, e);
        ks_api_json(c, 200, out);
        return;
    case KS_POD_BOUND:
        out = entry_json(srv, e);
        {
            /* The hints read the pod: before the cache frees it. */
            const ks_pod_t *old = ks_cache_get_pod(srv->cache, e->uid);
            if (old != NULL)
                ks_scheduler_on_cluster_event(srv->sched, ev_pod_delete, old,
                                              NULL);
        }
        if (ks_cache_remove_pod(srv->cache, e->uid, NULL) != 0) {
            json_decref(out);
            ks_api_status(c, 500, "InternalError", "pods", name,
                          "pods \"%s\" is not in the cache", name);
            return;
        }
        ks_server_pod_remove(srv, e);
        ks_api_json(c, 200, out);
        return;
    default:
        break;
    }
    out = entry_json(srv, e);
    if (ks_scheduler_remove_pod(srv->sched, e->uid) != 0) {
        json_decref(out);
        ks_api_status(c, 409, "Conflict", "pods", name,
                      "pods \"%s\" cannot be deleted now", name);
        return;
    }
    ks_server_pod_remove(srv, e);
    ks_api_json(c, 200, out);
}

/* --- entry ---------------------------------------------------------------- */

void ks_api_pods(ks_server_t *srv, ks_http_conn_t *c,
                 const ks_http_request_t *req, const char *ns,
                 const char *name)
{
    if (strcmp(req->method, "POST") == 0) {
        create_pod(srv, c, req, ns);
    } else if (strcmp(req->method, "DELETE") == 0) {
        delete_pod(srv, c, ns, name);
    } else if (name == NULL) {
        list_pods(srv, c, ns);
    } else {
        ks_pod_entry_t *e = ks_server_pod_by_key(srv, ns, name);
        json_t *out = e ? entry_json(srv, e) : NULL;
        if (out == NULL)
            ks_api_status(c, 404, "NotFound", "pods", name,
                          "pods \"%s\" not found", name);
        else
            ks_api_json(c, 200, out);
    }
}
