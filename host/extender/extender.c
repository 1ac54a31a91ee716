/*
 * Scheduler extenders: interest, the extender/v1 JSON both ways, and the
 * HTTP call (extender.h).
 */
#include "extender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ksched/helpers.h"

#include "base/buf.h"
#include "base/mono_clock.h"
#include "cluster/objects.h"
#include "cluster/objects_json_out.h"

/* --- interest ----------------------------------------------------------------- */

static int managed(const ks_extender_config_t *e, const char *name)
{
    size_t i;
    for (i = 0; i < e->n_managed_resources; i++)
        if (strcmp(e->managed_resources[i].name, name) == 0)
            return 1;
    return 0;
}

static int resources_managed(const ks_extender_config_t *e,
                             const ks_resources_t *r)
{
    uint32_t i;
    /* Managed resources are extended resources (validated): only the
     * scalar ones can match. */
    for (i = 0; i < r->n_scalar && i < KS_MAX_SCALAR_RESOURCES; i++)
        if (managed(e, r->scalar[i].name))
            return 1;
    return 0;
}

static int containers_managed(const ks_extender_config_t *e,
                              const ks_container_t *c, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (resources_managed(e, &c[i].requests) ||
            resources_managed(e, &c[i].limits))
            return 1;
    return 0;
}

int ks_extender_wants_nodes(const ks_config_t *cfg)
{
    size_t i;
    for (i = 0; cfg && i < cfg->n_extenders; i++) {
        const ks_extender_config_t *e = &cfg->extenders[i];
        if (!e->node_cache_capable && (e->filter_verb || e->prioritize_verb))
            return 1;
    }
    return 0;
}

int ks_extender_interested(const ks_extender_config_t *e, const ks_pod_t *pod)
{
    if (e->n_managed_resources == 0)
        return 1;
    return containers_managed(e, pod->containers, pod->n_containers) ||
           containers_managed(e, pod->init_containers, pod->n_init_containers);
}

/* --- JSON out ------------------------------------------------------------------- */

/* A v1.ResourceList; `pods` adds the pod count (nodes only). */
static json_t *resources_json(const ks_resources_t *r, int pods)
{
    json_t *o = json_object();
    uint32_t i;
    if (o == NULL)
        return NULL;
    if (r->milli_cpu || pods)
        json_object_set_new(o, "cpu", ks_json_cpu(r->milli_cpu));
    if (r->memory || pods)
        json_object_set_new(o, "memory",
                            ks_json_int_quantity(r->memory));
    if (r->ephemeral_storage)
        json_object_set_new(o, "ephemeral-storage",
                            ks_json_int_quantity(r->ephemeral_storage));
    if (pods)
        json_object_set_new(o, "pods",
                            ks_json_int_quantity(r->allowed_pods));
    for (i = 0; i < r->n_scalar && i < KS_MAX_SCALAR_RESOURCES; i++)
        json_object_set_new(o, r->scalar[i].name,
                            ks_json_int_quantity(r->scalar[i].value));
    return o;
}

static json_t *containers_json(const ks_container_t *c, uint32_t n)
{
    json_t *a = json_array();
    uint32_t i;
    for (i = 0; a && i < n; i++) {
        json_t *res = json_object();
        json_t *req = resources_json(&c[i].requests, 0);
        json_t *lim = resources_json(&c[i].limits, 0);
        if (req && json_object_size(req))
            json_object_set(res, "requests", req);
        if (lim && json_object_size(lim))
            json_object_set(res, "limits", lim);
        json_decref(req);
        json_decref(lim);
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:o}", "name", c[i].name ? c[i].name : "",
                         "image", c[i].image ? c[i].image : "", "resources",
                         res));
    }
    return a;
}

static json_t *pod_json(const ks_pod_t *pod)
{
    json_t *md, *spec, *status, *tols;
    uint32_t i;
    md = json_pack("{s:s, s:s, s:s}", "name", pod->name, "namespace", pod->ns,
                   "uid", pod->uid);
    if (md && pod->labels.n)
        json_object_set_new(md, "labels", ks_json_labels(pod->labels));
    if (md && pod->annotations.n)
        json_object_set_new(md, "annotations",
                            ks_json_labels(pod->annotations));
    spec = json_pack("{s:s, s:i, s:o}", "schedulerName", pod->scheduler_name,
                     "priority", (json_int_t)pod->priority, "containers",
                     containers_json(pod->containers, pod->n_containers));
    if (spec && pod->n_init_containers)
        json_object_set_new(spec, "initContainers",
                            containers_json(pod->init_containers,
                                            pod->n_init_containers));
    if (spec && pod->priority_class_name && pod->priority_class_name[0])
        json_object_set_new(spec, "priorityClassName",
                            json_string(pod->priority_class_name));
    if (spec && pod->node_selector.n)
        json_object_set_new(spec, "nodeSelector",
                            ks_json_labels(pod->node_selector));
    if (spec && pod->node_name && pod->node_name[0])
        json_object_set_new(spec, "nodeName", json_string(pod->node_name));
    if (spec && pod->n_tolerations) {
        tols = json_array();
        for (i = 0; tols && i < pod->n_tolerations; i++) {
            const ks_toleration_t *t = &pod->tolerations[i];
            json_t *o = json_pack(
                "{s:s, s:s}", "key", t->key ? t->key : "", "operator",
                t->op == KS_TOLERATION_EXISTS ? "Exists" : "Equal");
            if (o && t->value && t->value[0])
                json_object_set_new(o, "value", json_string(t->value));
            if (o && t->effect != KS_EFFECT_ALL)
                json_object_set_new(
                    o, "effect", json_string(ks_taint_effect_name(t->effect)));
            json_array_append_new(tols, o);
        }
        json_object_set_new(spec, "tolerations", tols);
    }
    status = json_object();
    if (status && pod->nominated_node_name && pod->nominated_node_name[0])
        json_object_set_new(status, "nominatedNodeName",
                            json_string(pod->nominated_node_name));
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "apiVersion", "v1", "kind",
                     "Pod", "metadata", md, "spec", spec, "status", status);
}

static json_t *node_json(const ks_node_t *node)
{
    json_t *md, *spec, *alloc;
    md = json_pack("{s:s}", "name", node->name);
    if (md && node->labels.n)
        json_object_set_new(md, "labels", ks_json_labels(node->labels));
    spec = json_object();
    if (spec && node->unschedulable)
        json_object_set_new(spec, "unschedulable", json_true());
    if (spec && node->n_taints)
        json_object_set_new(spec, "taints",
                            ks_json_taints(node->taints, node->n_taints));
    alloc = resources_json(&node->allocatable, 1);
    return json_pack("{s:s, s:s, s:o, s:o, s:{s:O, s:o}}", "apiVersion", "v1",
                     "kind", "Node", "metadata", md, "spec", spec, "status",
                     "capacity", alloc, "allocatable", alloc);
}

static char *dump(json_t *root)
{
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

/* One item of ExtenderArgs.Nodes: the object as read when the node kept
 * it, else ksched's view. */
static void put_node(ks_buf_t *b, const ks_node_t *node)
{
    size_t len;
    const char *raw = ks_node_raw_json(node, &len);
    char *s;
    if (raw != NULL) {
        ks_buf_append(b, raw, len);
        return;
    }
    s = dump(node_json(node));
    if (s == NULL) {
        b->oom = 1;
        return;
    }
    ks_buf_puts(b, s);
    free(s);
}

char *ks_extender_args_json(const ks_extender_config_t *e, const ks_pod_t *pod,
                            const ks_node_info_t *const *nodes, uint32_t n)
{
    ks_buf_t b = {0};
    char *text = dump(pod_json(pod));
    uint32_t i;
    if (text == NULL)
        return NULL;
    /* Written as text: the node objects are spliced in as they were
     * kept, no tree is built for them. */
    ks_buf_puts(&b, "{\"Pod\":");
    ks_buf_puts(&b, text);
    free(text);
    if (e->node_cache_capable) {
        json_t *names = json_array();
        for (i = 0; names && i < n; i++)
            if (json_array_append_new(names,
                                      json_string(nodes[i]->node->name)) != 0)
                b.oom = 1;
        text = dump(names);
        if (text == NULL)
            b.oom = 1;
        ks_buf_puts(&b, ",\"Nodes\":null,\"NodeNames\":");
        if (text)
            ks_buf_puts(&b, text);
        free(text);
        ks_buf_puts(&b, "}");
    } else {
        ks_buf_puts(&b, ",\"Nodes\":{\"apiVersion\":\"v1\",\"kind\":"
                        "\"NodeList\",\"metadata\":{},\"items\":[");
        for (i = 0; i < n; i++) {
            if (i)
                ks_buf_puts(&b, ",");
            put_node(&b, nodes[i]->node);
        }
        ks_buf_puts(&b, "]},\"NodeNames\":null}");
    }
    if (b.oom) {
        ks_buf_free(&b);
        return NULL;
    }
    return ks_buf_steal(&b, NULL);
}

char *ks_extender_preempt_json(const ks_extender_config_t *e,
                               const ks_pod_t *pod,
                               const ks_preempt_candidate_t *cands,
                               uint32_t n)
{
    json_t *root = json_object(), *map = json_object();
    uint32_t i, j;
    if (root == NULL || map == NULL) {
        json_decref(root);
        json_decref(map);
        return NULL;
    }
    json_object_set_new(root, "Pod", pod_json(pod));
    for (i = 0; i < n; i++) {
        json_t *pods = json_array();
        for (j = 0; pods && j < cands[i].n_victims; j++) {
            const ks_pod_t *v = cands[i].victims[j];
            json_array_append_new(pods, e->node_cache_capable
                                            ? json_pack("{s:s}", "UID", v->uid)
                                            : pod_json(v));
        }
        json_object_set_new(map, cands[i].node,
                            json_pack("{s:o, s:I}", "Pods", pods,
                                      "NumPDBViolations",
                                      (json_int_t)cands[i].n_pdb_violations));
    }
    json_object_set_new(root, "NodeNameToVictims",
                        e->node_cache_capable ? json_null() : json_incref(map));
    json_object_set_new(root, "NodeNameToMetaVictims",
                        e->node_cache_capable ? json_incref(map) : json_null());
    json_decref(map);
    return dump(root);
}

char *ks_extender_binding_json(const ks_pod_t *pod, const char *node)
{
    return dump(json_pack("{s:s, s:s, s:s, s:s}", "PodName", pod->name,
                          "PodNamespace", pod->ns, "PodUID", pod->uid, "Node",
                          node));
}

/* --- HTTP --------------------------------------------------------------------------- */

static void on_done(void *ud, const ks_hc_result_t *r)
{
    ks_ext_call_t *call = ud;
    char msg[2048];
    call->req = NULL;
    if (call->report) {
        char code[32];
        snprintf(code, sizeof code, "%ld", r->status);
        call->report(call->report_ud, call->url_prefix, call->verb,
                     r->curl_code == 0 ? code
                     : r->timed_out    ? "timeout"
                                       : "error",
                     ks_mono_seconds() - call->t0);
    }
    if (r->curl_code == 0 && r->status == 200) {
        call->done(call->ud, NULL, r->body, r->body_len);
        return;
    }
    if (r->curl_code == 0)
        snprintf(msg, sizeof msg, "failed %s with extender at URL %s, code %ld",
                 call->verb, call->url, r->status);
    else if (r->timed_out)
        snprintf(msg, sizeof msg,
                 "failed %s with extender at URL %s: no answer within the "
                 "httpTimeout of %ld ms",
                 call->verb, call->url, call->timeout_ms);
    else
        snprintf(msg, sizeof msg, "%s", r->error ? r->error : "request failed");
    call->done(call->ud, msg, NULL, 0);
}

int ks_extender_post(ks_hc_t *hc, const ks_extender_config_t *e,
                     const char *verb, const char *body, ks_ext_call_t *call,
                     ks_ext_done_fn done, void *ud, ks_error_t *err)
{
    static const char *const headers[] = {"Content-Type: application/json"};
    ks_hc_request_t rq;
    ks_hc_tls_t tls;
    const ks_extender_tls_config_t *t = e->tls_config;
    size_t l = strlen(e->url_prefix);
    memset(call, 0, sizeof *call);
    /* upstream: strings.TrimRight(urlPrefix, "/") + "/" + verb */
    while (l > 0 && e->url_prefix[l - 1] == '/')
        l--;
    snprintf(call->url, sizeof call->url, "%.*s/%s", (int)l, e->url_prefix,
             verb);
    snprintf(call->verb, sizeof call->verb, "%s", verb);
    call->timeout_ms = (long)e->http_timeout_ms;
    call->url_prefix = e->url_prefix;
    call->t0 = ks_mono_seconds();
    call->done = done;
    call->ud = ud;
    memset(&tls, 0, sizeof tls);
    if (t != NULL) {
        tls.insecure = t->insecure;
        tls.server_name = t->server_name;
        tls.ca_file = t->ca_file;
        tls.cert_file = t->cert_file;
        tls.key_file = t->key_file;
        tls.ca_data = t->ca_data;
        tls.ca_len = t->ca_len;
        tls.cert_data = t->cert_data;
        tls.cert_len = t->cert_len;
        tls.key_data = t->key_data;
        tls.key_len = t->key_len;
    }
    if (e->enable_https && tls.ca_file == NULL && tls.ca_data == NULL)
        tls.insecure = 1; /* upstream makeTransport */
    memset(&rq, 0, sizeof rq);
    rq.method = "POST";
    rq.url = call->url;
    rq.headers = headers;
    rq.n_headers = 1;
    rq.body = body;
    rq.body_len = strlen(body);
    rq.timeout_ms = call->timeout_ms;
    rq.no_rate_limit = 1;
    rq.verb = verb;
    rq.tls = &tls;
    rq.on_done = on_done;
    rq.ud = call;
    call->req = ks_hc_start(hc, &rq, err);
    return call->req ? 0 : (err && err->code ? err->code : KS_EHTTP);
}

void ks_extender_cancel(ks_ext_call_t *call)
{
    if (call->req != NULL && call->report)
        call->report(call->report_ud, call->url_prefix, call->verb,
                     "cancelled", ks_mono_seconds() - call->t0);
    if (call->req != NULL)
        ks_hc_cancel(call->req);
    call->req = NULL;
}
