/* /api/v1/nodes: create, update, delete, get, list. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "journal.h"

#include "framework/cluster_event.h"

/* Events carry their objects for the QueueingHints (old_obj, new_obj). */
static void node_event(ks_server_t *srv, uint32_t act, const ks_node_t *old,
                       const ks_node_t *n)
{
    ks_cluster_event_t ev = {KS_RES_NODE, act};
    ks_scheduler_on_cluster_event(srv->sched, ev, old, n);
}

static const ks_node_t *node_get(ks_server_t *srv, const char *name)
{
    const ks_node_info_t *ni;
    if (ks_strmap_get(&srv->nodes, name) == NULL)
        return NULL;
    ni = ks_cache_node_info(srv->cache, name);
    return ni ? ni->node : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void list_nodes(ks_server_t *srv, ks_http_conn_t *c)
{
    const char **names = malloc((srv->nodes.count + 1) * sizeof *names);
    json_t *items = json_array();
    size_t i, n = 0;
    if (names == NULL || items == NULL) {
        free(names);
        json_decref(items);
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    for (i = 0; i < srv->nodes.cap; i++)
        if (srv->nodes.slots[i].key)
            names[n++] = srv->nodes.slots[i].key;
    qsort(names, n, sizeof *names, cmp_str);
    for (i = 0; i < n; i++) {
        const ks_node_t *node = node_get(srv, names[i]);
        if (node)
            json_array_append_new(items, ks_api_node_json(node));
    }
    free(names);
    ks_api_json(c, 200,
                json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", "v1", "kind",
                          "NodeList", "metadata", "items", items));
}

/* Decode, read and validate a Node body; NULL after answering an
 * error. */
static ks_node_t *read_node(ks_http_conn_t *c, const ks_http_request_t *req)
{
    json_t *doc = ks_api_decode(c, req, "Node", "nodes");
    ks_node_t *node = NULL;
    int rc;
    if (doc == NULL)
        return NULL;
    rc = ks_api_read_node(c, doc, &node);
    json_decref(doc);
    if (rc != 0)
        return NULL;
    if (ks_api_validate_node(c, node) != 0) {
        ks_node_free(node);
        return NULL;
    }
    return node;
}

void ks_api_nodes(ks_server_t *srv, ks_http_conn_t *c,
                  const ks_http_request_t *req, const char *name)
{
    ks_error_t err = {0};
    const ks_node_t *cur;
    ks_node_t *node;

    if (strcmp(req->method, "GET") == 0) {
        if (name == NULL) {
            list_nodes(srv, c);
            return;
        }
        if ((cur = node_get(srv, name)) == NULL) {
            ks_api_status(c, 404, "NotFound", "nodes", name,
                          "nodes \"%s\" not found", name);
            return;
        }
        ks_api_json(c, 200, ks_api_node_json(cur));
        return;
    }
    if (strcmp(req->method, "DELETE") == 0) {
        json_t *out;
        if ((cur = node_get(srv, name)) == NULL) {
            ks_api_status(c, 404, "NotFound", "nodes", name,
                          "nodes \"%s\" not found", name);
            return;
        }
        out = ks_api_node_json(cur);
        /* The hints read the node: before the cache frees it. */
        node_event(srv, KS_ACT_DELETE, cur, NULL);
        ks_strmap_del(&srv->nodes, name);
        if (ks_cache_remove_node(srv->cache, name, &err) != 0) {
            json_decref(out);
            ks_api_status(c, 500, "InternalError", "nodes", name, "%s",
                          err.msg);
            return;
        }
        ks_journal_node_deleted(srv, name);
        ks_api_json(c, 200, out);
        return;
    }
    if ((node = read_node(c, req)) == NULL)
        return;
    if (strcmp(req->method, "POST") == 0) {
        if (ks_strmap_get(&srv->nodes, node->name) != NULL) {
            ks_api_status(c, 409, "AlreadyExists", "nodes", node->name,
                          "nodes \"%s\" already exists", node->name);
            ks_node_free(node);
            return;
        }
        if (ks_cache_add_node(srv->cache, node, &err) != 0) {
            int code = err.code == KS_EEXIST ? 409 : 500;
            ks_api_status(c, code,
                          code == 409 ? "AlreadyExists" : "InternalError",
                          "nodes", node->name, "%s", err.msg);
            ks_node_free(node);
            return;
        }
        if (ks_strmap_put(&srv->nodes, node->name, (void *)1) != 0) {
            ks_api_status(c, 500, "InternalError", "nodes", node->name,
                          "out of memory");
            return;
        }
        ks_journal_node_put(srv, req);
        node_event(srv, KS_ACT_ADD, NULL, node);
        ks_api_json(c, 201, ks_api_node_json(node));
        return;
    }
    /* PUT */
    if (strcmp(node->name, name) != 0) {
        ks_api_status(c, 400, "BadRequest", "nodes", name,
                      "the name of the object (%s) does not match the name "
                      "on the URL (%s)",
                      node->name, name);
        ks_node_free(node);
        return;
    }
    if (node_get(srv, name) == NULL) {
        ks_api_status(c, 404, "NotFound", "nodes", name,
                      "nodes \"%s\" not found", name);
        ks_node_free(node);
        return;
    }
    /* The kinds of change, as upstream classifies them; the hints read the
     * old node, so before the cache replaces it. */
    {
        const ks_node_t *old = node_get(srv, name);
        uint32_t act = ks_cluster_event_node_update(old, node);
        node_event(srv, act ? act : KS_ACT_UPDATE, old, node);
    }
    if (ks_cache_update_node(srv->cache, node, &err) != 0) {
        ks_api_status(c, 500, "InternalError", "nodes", name, "%s", err.msg);
        ks_node_free(node);
        return;
    }
    ks_journal_node_put(srv, req);
    ks_api_json(c, 200, ks_api_node_json(node));
}
