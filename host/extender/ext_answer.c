/*
 * Extender answers (extender.h): ExtenderFilterResult, HostPriorityList,
 * ExtenderPreemptionResult and ExtenderBindingResult, read as
 * kube-scheduler reads them: Go's encoding/json into the extender/v1
 * types, which carry no json tags, so every field name matches
 * case-insensitively and the last repeated key wins (base/json_go.h).
 * Errors are Go's texts ("json: cannot unmarshal ... into Go struct field
 * ExtenderFilterResult.NodeNames of type []string"), because upstream
 * returns the decoder's error as it is.
 */
#include "extender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_go.h"

/* --- Go's decoding of scalar fields ------------------------------------------ */

/* A string field of obj: each value given to it in turn, as Go decodes
 * them: 0 with *out set to the last non-null one (unchanged when none), or
 * -1 with Go's type error for the first that is not a string. */
static int go_string(const ks_gj_value_t *obj, const char *name,
                     const char *strct, const char *path, const char **out,
                     char *msg, size_t msg_len)
{
    const ks_gj_value_t *v;
    size_t at = 0;
    while ((v = ks_gj_field_next(obj, name, &at)) != NULL) {
        if (v->type == KS_GJ_NULL)
            continue;
        if (v->type != KS_GJ_STRING)
            return ks_gj_type_error(msg, msg_len, v, 0, strct, path,
                                    "string");
        *out = v->text;
    }
    return 0;
}

/* A string value (a slice's element, a map's value): null leaves it "". */
static int go_string_value(const ks_gj_value_t *v, const char *strct,
                           const char *path, const char **out, char *msg,
                           size_t msg_len)
{
    if (v->type == KS_GJ_NULL)
        return 0;
    if (v->type != KS_GJ_STRING)
        return ks_gj_type_error(msg, msg_len, v, 0, strct, path, "string");
    *out = v->text;
    return 0;
}

/* An int64 field of obj, the same way. */
static int go_int64(const ks_gj_value_t *obj, const char *name,
                    const char *strct, const char *path, int64_t *out,
                    char *msg, size_t msg_len)
{
    const ks_gj_value_t *v;
    size_t at = 0;
    while ((v = ks_gj_field_next(obj, name, &at)) != NULL) {
        if (v->type == KS_GJ_NULL)
            continue;
        if (v->type != KS_GJ_NUMBER || ks_gj_int64(v, out) != 0)
            return ks_gj_type_error(msg, msg_len, v, v->type == KS_GJ_NUMBER,
                                    strct, path, "int64");
    }
    return 0;
}

/* The answer's root: an object, or NULL for a JSON null (Go leaves the
 * result zero). -1 with msg for a syntax error or another type. */
static int answer_root(const char *body, size_t len, const char *type,
                       ks_gj_doc_t **doc, const ks_gj_value_t **root,
                       char *msg, size_t msg_len)
{
    *doc = ks_gj_parse(body, len, msg, msg_len);
    *root = NULL;
    if (*doc == NULL)
        return -1;
    *root = ks_gj_root(*doc);
    if ((*root)->type == KS_GJ_NULL) {
        *root = NULL;
        return 0;
    }
    if ((*root)->type != KS_GJ_OBJECT) {
        ks_gj_type_error(msg, msg_len, *root, 0, NULL, NULL, type);
        ks_gj_free(*doc);
        *doc = NULL;
        return -1;
    }
    return 0;
}

/* The answer's Error field: -1 with msg set to it when it is non-empty
 * (or not a string), else 0. */
static int answer_error(const ks_gj_value_t *root, const char *strct,
                        char *msg, size_t msg_len)
{
    const char *e = NULL;
    if (go_string(root, "Error", strct, "Error", &e, msg, msg_len) != 0)
        return -1;
    if (e != NULL && e[0] != '\0') {
        snprintf(msg, msg_len, "%s", e);
        return -1;
    }
    return 0;
}

/* --- ExtenderFilterResult ------------------------------------------------------ */

#define FILTER_T "ExtenderFilterResult"

/* NodeNames *[]string: every value given to it in turn (a null resets
 * it); names[] from the last. */
static int filter_names(const ks_gj_value_t *root,
                        ks_ext_filter_result_t *out, char *msg,
                        size_t msg_len)
{
    const ks_gj_value_t *v, *last = NULL;
    size_t at = 0, i;
    while ((v = ks_gj_field_next(root, "NodeNames", &at)) != NULL) {
        if (v->type == KS_GJ_NULL) {
            last = NULL;
            continue;
        }
        if (v->type != KS_GJ_ARRAY)
            return ks_gj_type_error(msg, msg_len, v, 0, FILTER_T,
                                    "NodeNames", "[]string");
        for (i = 0; i < v->n; i++)
            if (v->items[i]->type != KS_GJ_NULL &&
                v->items[i]->type != KS_GJ_STRING)
                return ks_gj_type_error(msg, msg_len, v->items[i], 0,
                                        FILTER_T, "NodeNames", "string");
        last = v;
    }
    if (last == NULL)
        return 0;
    out->nodes = calloc(last->n + 1, sizeof *out->nodes);
    if (out->nodes == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    for (i = 0; i < last->n; i++)
        out->nodes[out->n_nodes++] =
            last->items[i]->type == KS_GJ_STRING ? last->items[i]->text : "";
    out->has_nodes = 1;
    return 0;
}

/* Nodes *v1.NodeList: the names of items[].metadata.name (json tags, which
 * encoding/json also matches case-insensitively). A repeated Nodes key
 * decodes into the same NodeList, so its items stay unless given again;
 * a null resets it. */
static int filter_node_list(const ks_gj_value_t *root,
                            ks_ext_filter_result_t *out, char *msg,
                            size_t msg_len)
{
    const ks_gj_value_t *v, *it, *items = NULL;
    size_t at = 0, at2, i;
    int present = 0;
    while ((v = ks_gj_field_next(root, "Nodes", &at)) != NULL) {
        if (v->type == KS_GJ_NULL) {
            present = 0;
            items = NULL;
            continue;
        }
        if (v->type != KS_GJ_OBJECT)
            return ks_gj_type_error(msg, msg_len, v, 0, FILTER_T, "Nodes",
                                    "v1.NodeList");
        present = 1;
        at2 = 0;
        while ((it = ks_gj_field_next(v, "items", &at2)) != NULL) {
            if (it->type != KS_GJ_NULL && it->type != KS_GJ_ARRAY)
                return ks_gj_type_error(msg, msg_len, it, 0, "NodeList",
                                        "Nodes.items", "[]v1.Node");
            items = it->type == KS_GJ_ARRAY ? it : NULL;
        }
    }
    if (!present)
        return 0;
    out->nodes = calloc((items ? items->n : 0) + 1, sizeof *out->nodes);
    if (out->nodes == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    out->has_nodes = 1;
    for (i = 0; items && i < items->n; i++) {
        const ks_gj_value_t *node = items->items[i], *meta;
        const char *name = "";
        if (node->type != KS_GJ_NULL && node->type != KS_GJ_OBJECT)
            return ks_gj_type_error(msg, msg_len, node, 0, "NodeList",
                                    "Nodes.items", "v1.Node");
        at2 = 0;
        while ((meta = ks_gj_field_next(node, "metadata", &at2)) != NULL) {
            if (meta->type != KS_GJ_NULL && meta->type != KS_GJ_OBJECT)
                return ks_gj_type_error(msg, msg_len, meta, 0, "Node",
                                        "Nodes.items.metadata",
                                        "v1.ObjectMeta");
            if (go_string(meta, "name", "ObjectMeta",
                          "Nodes.items.metadata.name", &name, msg,
                          msg_len) != 0)
                return -1;
        }
        out->nodes[out->n_nodes++] = name;
    }
    return 0;
}

typedef struct pairs_ctx {
    ks_ext_pair_t *p;
    size_t n;
    const char *field;
    char *msg;
    size_t msg_len;
} pairs_ctx_t;

static int add_pair(void *ud, const char *key, const ks_gj_value_t *v)
{
    pairs_ctx_t *c = ud;
    const char *reason = "";
    if (go_string_value(v, FILTER_T, c->field, &reason, c->msg,
                        c->msg_len) != 0)
        return -1;
    c->p[c->n].node = key;
    c->p[c->n++].reason = reason;
    return 0;
}

/* A FailedNodesMap (map[string]string) field into pairs. */
static int filter_failed(const ks_gj_value_t *root, const char *field,
                         ks_ext_pair_t **out, size_t *n, char *msg,
                         size_t msg_len)
{
    pairs_ctx_t c = {NULL, 0, field, msg, msg_len};
    const ks_gj_value_t *bad = NULL, *v;
    size_t i, total = 0;
    int rc;
    *out = NULL;
    *n = 0;
    /* room for every entry of every object the field is given */
    for (i = 0; root && i < root->n; i++) {
        v = root->items[i];
        if (v->type == KS_GJ_OBJECT &&
            ks_gj_key_fills(root->keys[i], root->key_lens[i], field))
            total += v->n;
    }
    c.p = calloc(total + 1, sizeof *c.p);
    if (c.p == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    rc = ks_gj_map_each(root, field, add_pair, &c, &bad);
    if (rc < 0 && bad != NULL)
        ks_gj_type_error(msg, msg_len, bad, 0, FILTER_T, field,
                         "v1.FailedNodesMap");
    else if (rc < 0 && c.msg[0] == '\0')
        snprintf(msg, msg_len, "out of memory");
    *out = c.p;
    *n = c.n;
    return rc < 0 ? -1 : 0;
}

int ks_extender_parse_filter(const ks_extender_config_t *e, const char *body,
                             size_t len, ks_ext_filter_result_t *out,
                             char *msg, size_t msg_len)
{
    const ks_gj_value_t *root;
    ks_ext_filter_result_t names, list;
    ks_gj_doc_t *doc;
    memset(out, 0, sizeof *out);
    memset(&names, 0, sizeof names);
    memset(&list, 0, sizeof list);
    msg[0] = '\0';
    if (answer_root(body, len, "v1." FILTER_T, &doc, &root, msg, msg_len))
        return -1;
    out->doc_ = doc;
    if (root == NULL)
        return 0;
    /* Go decodes every field, so a bad one fails the answer whichever
     * list upstream then reads. */
    if (filter_names(root, &names, msg, msg_len) != 0 ||
        filter_node_list(root, &list, msg, msg_len) != 0 ||
        filter_failed(root, "FailedNodes", &out->failed, &out->n_failed, msg,
                      msg_len) != 0 ||
        filter_failed(root, "FailedAndUnresolvableNodes", &out->unresolvable,
                      &out->n_unresolvable, msg, msg_len) != 0 ||
        answer_error(root, FILTER_T, msg, msg_len) != 0)
        goto fail;
    /* upstream: NodeNames when nodeCacheCapable and given, else Nodes */
    if (e->node_cache_capable && names.has_nodes) {
        out->nodes = names.nodes;
        out->n_nodes = names.n_nodes;
        out->has_nodes = 1;
        free(list.nodes);
    } else {
        out->nodes = list.nodes;
        out->n_nodes = list.n_nodes;
        out->has_nodes = list.has_nodes;
        free(names.nodes);
    }
    return 0;
fail:
    free(names.nodes);
    free(list.nodes);
    ks_extender_filter_result_free(out);
    return -1;
}

void ks_extender_filter_result_free(ks_ext_filter_result_t *r)
{
    ks_gj_free(r->doc_);
    free(r->nodes);
    free(r->failed);
    free(r->unresolvable);
    memset(r, 0, sizeof *r);
}

/* --- HostPriorityList ---------------------------------------------------------- */

int ks_extender_parse_priorities(const char *body, size_t len,
                                 void (*fn)(void *ud, const char *host,
                                            int64_t score),
                                 void *ud, char *msg, size_t msg_len)
{
    ks_gj_doc_t *doc = ks_gj_parse(body, len, msg, msg_len);
    const ks_gj_value_t *root;
    const char **hosts = NULL;
    int64_t *scores = NULL;
    size_t i;
    int rc = -1;
    if (doc == NULL)
        return -1;
    root = ks_gj_root(doc);
    if (root->type != KS_GJ_ARRAY && root->type != KS_GJ_NULL) {
        ks_gj_type_error(msg, msg_len, root, 0, NULL, NULL,
                         "v1.HostPriorityList");
        goto out; /* the document is freed after the message quotes it */
    }
    hosts = calloc(root->n + 1, sizeof *hosts);
    scores = calloc(root->n + 1, sizeof *scores);
    if (hosts == NULL || scores == NULL) {
        snprintf(msg, msg_len, "out of memory");
        goto out;
    }
    /* every entry decoded before any is used: a bad one fails them all */
    for (i = 0; i < root->n; i++) {
        const ks_gj_value_t *it = root->items[i];
        hosts[i] = "";
        if (it->type != KS_GJ_OBJECT && it->type != KS_GJ_NULL) {
            ks_gj_type_error(msg, msg_len, it, 0, NULL, NULL,
                             "v1.HostPriority");
            goto out;
        }
        if (go_string(it, "Host", "HostPriority", "Host", &hosts[i], msg,
                      msg_len) != 0 ||
            go_int64(it, "Score", "HostPriority", "Score", &scores[i], msg,
                     msg_len) != 0)
            goto out;
    }
    for (i = 0; i < root->n; i++)
        fn(ud, hosts[i], scores[i]);
    rc = 0;
out:
    free(hosts);
    free(scores);
    ks_gj_free(doc);
    return rc;
}

/* --- ExtenderPreemptionResult -------------------------------------------------- */

#define PREEMPT_T "ExtenderPreemptionResult"

typedef struct victims_ctx {
    ks_ext_victims_fn fn;
    void *ud;
    char *msg;
    size_t msg_len;
} victims_ctx_t;

/* One MetaVictims: its pods' UIDs and NumPDBViolations. */
static int on_meta_victims(void *ud, const char *node,
                           const ks_gj_value_t *v)
{
    victims_ctx_t *c = ud;
    const ks_gj_value_t *pods = NULL, *p;
    const char **uids;
    int64_t pdb = 0;
    size_t i, n, at = 0;
    int rc;
    if (v->type != KS_GJ_OBJECT && v->type != KS_GJ_NULL)
        return ks_gj_type_error(c->msg, c->msg_len, v, 0, PREEMPT_T,
                                "NodeNameToMetaVictims", "v1.MetaVictims");
    /* Pods []*MetaPod: each value given to it in turn (a null resets it),
     * as for NodeNames */
    while ((p = ks_gj_field_next(v, "Pods", &at)) != NULL) {
        if (p->type != KS_GJ_NULL && p->type != KS_GJ_ARRAY)
            return ks_gj_type_error(c->msg, c->msg_len, p, 0, "MetaVictims",
                                    "NodeNameToMetaVictims.Pods",
                                    "[]*v1.MetaPod");
        pods = p->type == KS_GJ_ARRAY ? p : NULL;
    }
    if (go_int64(v, "NumPDBViolations", "MetaVictims",
                 "NodeNameToMetaVictims.NumPDBViolations", &pdb, c->msg,
                 c->msg_len) != 0)
        return -1;
    n = pods && pods->type == KS_GJ_ARRAY ? pods->n : 0;
    uids = calloc(n + 1, sizeof *uids);
    if (uids == NULL) {
        snprintf(c->msg, c->msg_len, "out of memory");
        return -1;
    }
    for (i = 0; i < n; i++) {
        const ks_gj_value_t *pod = pods->items[i];
        const char *uid = "";
        if (pod->type == KS_GJ_NULL) {
            /* a nil *MetaPod: upstream would dereference it */
            snprintf(c->msg, c->msg_len,
                     "invalid answer from the extender: "
                     "NodeNameToMetaVictims[%s].Pods[%zu] is null",
                     node, i);
            free(uids);
            return -1;
        }
        if (pod->type != KS_GJ_OBJECT) {
            free(uids);
            return ks_gj_type_error(c->msg, c->msg_len, pod, 0,
                                    "MetaVictims",
                                    "NodeNameToMetaVictims.Pods",
                                    "v1.MetaPod");
        }
        if (go_string(pod, "UID", "MetaPod", "NodeNameToMetaVictims.Pods.UID",
                      &uid, c->msg, c->msg_len) != 0) {
            free(uids);
            return -1;
        }
        uids[i] = uid;
    }
    rc = c->fn(c->ud, node, uids, n, pdb, c->msg, c->msg_len);
    free(uids);
    return rc != 0 ? -1 : 0;
}

int ks_extender_parse_preemption(const char *body, size_t len,
                                 ks_ext_victims_fn fn, void *ud, char *msg,
                                 size_t msg_len)
{
    victims_ctx_t c = {fn, ud, msg, msg_len};
    const ks_gj_value_t *root, *bad = NULL;
    ks_gj_doc_t *doc;
    int rc;
    msg[0] = '\0';
    if (answer_root(body, len, "v1." PREEMPT_T, &doc, &root, msg, msg_len))
        return -1;
    if (root != NULL && answer_error(root, PREEMPT_T, msg, msg_len) != 0) {
        ks_gj_free(doc);
        return -1;
    }
    rc = ks_gj_map_each(root, "NodeNameToMetaVictims", on_meta_victims, &c,
                        &bad);
    if (rc < 0 && bad != NULL)
        ks_gj_type_error(msg, msg_len, bad, 0, PREEMPT_T,
                         "NodeNameToMetaVictims",
                         "map[string]*v1.MetaVictims");
    else if (rc < 0 && msg[0] == '\0')
        snprintf(msg, msg_len, "out of memory");
    ks_gj_free(doc);
    return rc < 0 ? -1 : 0;
}

/* --- ExtenderBindingResult ----------------------------------------------------- */

int ks_extender_parse_binding(const char *body, size_t len, char *msg,
                              size_t msg_len)
{
    const ks_gj_value_t *root;
    ks_gj_doc_t *doc;
    int rc = 0;
    if (answer_root(body, len, "v1.ExtenderBindingResult", &doc, &root, msg,
                    msg_len))
        return -1;
    if (root != NULL)
        rc = answer_error(root, "ExtenderBindingResult", msg, msg_len);
    ks_gj_free(doc);
    return rc;
}
