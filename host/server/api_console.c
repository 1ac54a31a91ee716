/* The console's JSON endpoints: /debug/cluster, /debug/queue,
 * /debug/pods/NS/NAME and /debug/rates (console.h). Each reads the state
 * when it is called; nothing is kept for them between calls but the
 * cluster snapshot (refreshed incrementally, as a scheduling cycle's). */
#include "console.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "framework/framework.h"
#include "framework/queue.h"
#include "server.h"

#define CLUSTER_LIMIT_DEFAULT 500
#define CLUSTER_LIMIT_MAX 1000
#define QUEUE_LIMIT_DEFAULT 500
#define QUEUE_LIMIT_MAX 1000
#define PODS_PER_NODE_MAX 50

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

int ks_console_query(const char *query, const char *key, char *buf,
                     size_t len)
{
    size_t kl = strlen(key);
    const char *p = query;
    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t l = amp ? (size_t)(amp - p) : strlen(p);
        if (l >= kl && memcmp(p, key, kl) == 0 &&
            (l == kl || p[kl] == '=')) {
            const char *v = p + kl + (l > kl), *e = p + l;
            size_t n = 0;
            while (v < e) {
                int ch = (unsigned char)*v;
                if (ch == '%' && e - v >= 3 && hexval(v[1]) >= 0 &&
                    hexval(v[2]) >= 0) {
                    ch = hexval(v[1]) * 16 + hexval(v[2]);
                    v += 3;
                } else {
                    if (ch == '+')
                        ch = ' ';
                    v++;
                }
                if (n + 1 >= len)
                    return 0;
                buf[n++] = (char)ch;
            }
            buf[n] = '\0';
            return 1;
        }
        p = amp ? amp + 1 : NULL;
    }
    return 0;
}

/* limit=N: default def, capped at max; -1 when malformed (answered). */
static long query_limit(ks_http_conn_t *c, const char *query, long def,
                        long max)
{
    char v[32], *end;
    long n;
    if (!ks_console_query(query, "limit", v, sizeof v))
        return def;
    n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < 0) {
        ks_api_status(c, 400, "BadRequest", NULL, NULL,
                      "limit must be a number >= 0, not \"%s\"", v);
        return -1;
    }
    return n == 0 || n > max ? max : n;
}

/* Is `name` in the comma-separated fields= list? */
static int want_field(const char *fields, const char *name)
{
    size_t nl = strlen(name);
    const char *p = fields;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == nl && memcmp(p, name, nl) == 0)
            return 1;
        if (e == NULL)
            break;
        p = e + 1;
    }
    return 0;
}

/* --- /debug/cluster ------------------------------------------------------- */

static json_t *resources_json(const ks_resources_t *r)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "cpu",
                          (json_int_t)r->milli_cpu, "memory",
                          (json_int_t)r->memory, "pods",
                          (json_int_t)r->allowed_pods, "ephemeralStorage",
                          (json_int_t)r->ephemeral_storage);
    uint32_t i;
    for (i = 0; o && i < r->n_scalar; i++)
        json_object_set_new(o, r->scalar[i].name,
                            json_integer((json_int_t)r->scalar[i].value));
    return o;
}

static const char *effect_name(int e)
{
    switch (e) {
    case KS_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case KS_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case KS_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return "";
    }
}

static const char *label_of(const ks_node_t *n, const char *key)
{
    uint32_t i;
    for (i = 0; i < n->labels.n; i++)
        if (strcmp(n->labels.items[i].key, key) == 0)
            return n->labels.items[i].value;
    return NULL;
}

static json_t *node_json(const ks_node_info_t *ni, const char *fields)
{
    const ks_node_t *n = ni->node;
    json_t *taints = json_array(), *o;
    const char *zone = label_of(n, "topology.kubernetes.io/zone");
    uint32_t i;
    ks_resources_t req = ni->requested;
    req.allowed_pods = ni->n_pods;
    for (i = 0; taints && i < n->n_taints; i++)
        json_array_append_new(
            taints, json_pack("{s:s, s:s, s:s}", "key", n->taints[i].key,
                              "value", n->taints[i].value, "effect",
                              effect_name(n->taints[i].effect)));
    o = json_pack("{s:s, s:s?, s:b, s:o, s:o, s:o, s:i}", "name", n->name,
                  "zone", zone, "unschedulable", n->unschedulable,
                  "allocatable", resources_json(&n->allocatable), "requested",
                  resources_json(&req), "taints", taints, "nPods",
                  (int)ni->n_pods);
    if (o && want_field(fields, "labels")) {
        json_t *l = json_object();
        for (i = 0; l && i < n->labels.n; i++)
            json_object_set_new(l, n->labels.items[i].key,
                                json_string(n->labels.items[i].value));
        json_object_set_new(o, "labels", l);
    }
    if (o && want_field(fields, "pods")) {
        json_t *p = json_array();
        for (i = 0; p && i < ni->n_pods && i < PODS_PER_NODE_MAX; i++) {
            char key[600];
            snprintf(key, sizeof key, "%s/%s", ni->pods[i]->ns,
                     ni->pods[i]->name);
            json_array_append_new(p, json_string(key));
        }
        json_object_set_new(o, "pods", p);
    }
    return o;
}

void ks_api_debug_cluster(ks_server_t *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req)
{
    ks_console_t *con = srv->console;
    ks_error_t err;
    char fields[256] = "", cont[300] = "", filter[256] = "";
    const ks_node_info_t *const *nodes;
    const char *const *names;
    uint32_t n = 0, lo, hi, i, sent = 0, matched = 0;
    long limit;
    json_t *items, *doc;
    if (con == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "no console");
        return;
    }
    if ((limit = query_limit(c, req->query, CLUSTER_LIMIT_DEFAULT,
                             CLUSTER_LIMIT_MAX)) < 0)
        return;
    ks_console_query(req->query, "fields", fields, sizeof fields);
    ks_console_query(req->query, "continue", cont, sizeof cont);
    ks_console_query(req->query, "filter", filter, sizeof filter);
    ks_error_init(&err);
    if (con->snap == NULL && (con->snap = ks_snapshot_new()) == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    if (ks_cache_update_snapshot(srv->cache, con->snap, &err) != 0) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "%s", err.msg);
        return;
    }
    nodes = ks_snapshot_nodes(con->snap, &n);
    names = ks_snapshot_node_names(con->snap);
    /* continue=NAME: the first node after NAME (nodes are in name order;
     * a node deleted meanwhile does not lose the place). */
    lo = 0;
    if (cont[0] && names) {
        hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (strcmp(names[mid], cont) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    items = json_array();
    for (i = lo; items && i < n; i++) {
        const ks_node_info_t *ni = nodes[i];
        if (ni->node == NULL)
            continue;
        if (filter[0] && strstr(ni->node->name, filter) == NULL)
            continue;
        matched++;
        if ((long)sent == limit)
            break;
        json_array_append_new(items, node_json(ni, fields));
        sent++;
    }
    doc = json_pack("{s:s, s:I, s:I, s:o}", "kind", "ClusterView", "total",
                    (json_int_t)ks_cache_num_nodes(srv->cache), "pods",
                    (json_int_t)ks_cache_num_pods(srv->cache), "items",
                    items);
    if (doc && i < n && sent > 0) {
        /* more to come: the last name sent */
        json_t *last = json_object_get(
            json_array_get(items, json_array_size(items) - 1), "name");
        json_object_set(doc, "continue", last);
    }
    (void)matched;
    ks_api_json(c, 200, doc);
}

/* --- /debug/queue ----------------------------------------------------------- */

static const char *const res_names[] = {"Pod", "Node", "Service",
                                        "Namespace", "Object"};
static const char *const act_names[] = {
    "Add",
    "Delete",
    "UpdateNodeAllocatable",
    "UpdateNodeLabel",
    "UpdateNodeTaint",
    "UpdateNodeCondition",
    "Update",
    "UpdateNodeAnnotation",
    "UpdatePodLabel",
    "UpdatePodToleration",
    "UpdatePodSchedulingGatesEliminated",
    "UpdatePodScaleDown"};

static void join_bits(char *buf, size_t len, size_t *at, uint32_t bits,
                      const char *const *names, size_t n, uint32_t all,
                      const char *all_name)
{
    size_t i;
    int first = 1;
    if ((bits & all) == all) {
        *at += (size_t)snprintf(buf + *at, len - *at, "%s", all_name);
        return;
    }
    for (i = 0; i < n && *at < len; i++)
        if (bits & (1u << i)) {
            *at += (size_t)snprintf(buf + *at, len - *at, "%s%s",
                                    first ? "" : "|", names[i]);
            first = 0;
        }
}

void ks_console_event_text(uint32_t resource, uint32_t action, char *buf,
                           size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    join_bits(buf, len, &at, resource, res_names, 5, KS_RES_ALL, "*");
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "/");
    if (at < len)
        join_bits(buf, len, &at, action, act_names, 12, KS_ACT_ALL, "*");
}

static ks_plugin_inst_t *inst_named(ks_framework_t *fw, const char *name)
{
    size_t i;
    for (i = 0; fw && i < fw->n_insts; i++)
        if (strcmp(fw->insts[i]->name, name) == 0)
            return fw->insts[i];
    return NULL;
}

/* The events that would move a pod the plugin rejected, from its
 * EnqueueExtensions (and whether a QueueingHint decides). */
static json_t *plugin_events_json(ks_plugin_inst_t *in)
{
    json_t *a = json_array();
    uint32_t k;
    char text[256];
    if (in == NULL || in->every_event) {
        json_array_append_new(a, json_pack("{s:s, s:b}", "event", "*/*",
                                           "hint", 0));
        return a;
    }
    for (k = 0; a && k < in->n_events; k++) {
        ks_console_event_text(in->events[k].resource, in->events[k].action,
                              text, sizeof text);
        json_array_append_new(a, json_pack("{s:s, s:b}", "event", text,
                                           "hint", in->hints[k] != NULL));
    }
    return a;
}

static const char *where_name(int where, int gated)
{
    if (gated)
        return "gated";
    switch (where) {
    case KS_Q_ACTIVE:
        return "active";
    case KS_Q_BACKOFF:
        return "backoff";
    case KS_Q_UNSCHED:
        return "unschedulable";
    case KS_Q_INFLIGHT:
        return "inFlight";
    default:
        return "none";
    }
}

static json_t *queued_json(ks_server_t *srv, const ks_queued_info_t *qi)
{
    ks_framework_t *fw = ks_generation_profile(
        ks_scheduler_generation(srv->sched), qi->pod->scheduler_name);
    json_t *plugins = json_array();
    int64_t now = ks_scheduler_now(srv->sched);
    unsigned i;
    json_t *o;
    for (i = 0; plugins && i < qi->n_plugins; i++)
        json_array_append_new(
            plugins,
            json_pack("{s:s, s:s, s:o}", "name", qi->plugins[i], "status",
                      (qi->pending_mask & (1u << i)) ? "Pending"
                                                     : "Unschedulable",
                      "events",
                      plugin_events_json(inst_named(fw, qi->plugins[i]))));
    o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:i, s:o, s:o, s:s?, s:s}",
                  "namespace", qi->pod->ns, "name", qi->pod->name, "uid",
                  qi->pod->uid, "queue", where_name(qi->where, qi->gated),
                  "gated", qi->gated, "attempts", (int)qi->attempts,
                  "message", ks_console_json_str(qi->message), "rejectedBy",
                  plugins,
                  "nominatedNode",
                  qi->pod->nominated_node_name[0]
                      ? qi->pod->nominated_node_name
                      : NULL,
                  "profile", qi->pod->scheduler_name);
    if (o && qi->where == KS_Q_BACKOFF)
        json_object_set_new(o, "backoffRemainingMs",
                            json_integer(qi->backoff_expiry_ms - now));
    if (o && qi->where == KS_Q_UNSCHED)
        json_object_set_new(o, "unschedulableForMs",
                            json_integer(now - qi->unsched_since_ms));
    return o;
}

typedef struct queue_ctx {
    ks_server_t *srv;
    json_t *items;
    char want[32]; /* queue=... filter, "" for all */
    long skip, limit, seen, sent;
    size_t counts[6];
} queue_ctx_t;

static void queue_visit(void *ud, const ks_queued_info_t *qi)
{
    queue_ctx_t *q = ud;
    const char *w = where_name(qi->where, qi->gated);
    q->counts[qi->gated ? 5 : (qi->where >= 0 && qi->where < 5 ? qi->where
                                                                : 0)]++;
    if (q->want[0] && strcmp(q->want, w) != 0)
        return;
    q->seen++;
    if (q->seen <= q->skip || q->sent >= q->limit)
        return;
    json_array_append_new(q->items, queued_json(q->srv, qi));
    q->sent++;
}

void ks_api_debug_queue(ks_server_t *srv, ks_http_conn_t *c,
                        const ks_http_request_t *req)
{
    queue_ctx_t q;
    char cont[32];
    json_t *doc;
    memset(&q, 0, sizeof q);
    q.srv = srv;
    if ((q.limit = query_limit(c, req->query, QUEUE_LIMIT_DEFAULT,
                               QUEUE_LIMIT_MAX)) < 0)
        return;
    if (ks_console_query(req->query, "continue", cont, sizeof cont))
        q.skip = strtol(cont, NULL, 10);
    ks_console_query(req->query, "queue", q.want, sizeof q.want);
    q.items = json_array();
    ks_scheduler_foreach_queued(srv->sched, queue_visit, &q);
    doc = json_pack(
        "{s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:I, s:o}", "kind", "QueueView",
        "counts", "active", (json_int_t)q.counts[KS_Q_ACTIVE], "backoff",
        (json_int_t)q.counts[KS_Q_BACKOFF], "unschedulable",
        (json_int_t)q.counts[KS_Q_UNSCHED], "inFlight",
        (json_int_t)q.counts[KS_Q_INFLIGHT], "gated",
        (json_int_t)q.counts[5], "matched", (json_int_t)q.seen, "items",
        q.items);
    if (doc && q.skip + q.sent < q.seen) {
        char next[32];
        snprintf(next, sizeof next, "%ld", q.skip + q.sent);
        json_object_set_new(doc, "continue", json_string(next));
    }
    ks_api_json(c, 200, doc);
}

/* --- /debug/pods/NS/NAME ------------------------------------------------------ */

static const char *const ep_names[KS_ATTEMPT_EPS] = {
    "PreFilter", "Filter", "PostFilter", "PreScore", "Score"};

/* The chosen node's scores of an attempt: the total, the runner-up's,
 * and each Score plugin's, named when the attempt ran with the current
 * generation (the plugins of an older one may be gone). */
static json_t *attempt_scores_json(ks_server_t *srv, const ks_attempt_t *t)
{
    ks_generation_t *g = ks_scheduler_generation(srv->sched);
    ks_framework_t *fw = g->id == t->generation && t->profile
                             ? ks_generation_profile(g, t->profile)
                             : NULL;
    json_t *plugins = json_array(), *o;
    size_t p;
    if (fw && fw->n_points[KS_EP_SCORE] != t->n_scores &&
        !(fw->n_points[KS_EP_SCORE] > KS_ATTEMPT_SCORES &&
          t->n_scores == KS_ATTEMPT_SCORES))
        fw = NULL;
    for (p = 0; plugins && p < t->n_scores; p++) {
        json_t *v = t->scores[p] == INT32_MIN ? json_null()
                                               : json_integer(t->scores[p]);
        json_array_append_new(
            plugins,
            json_pack("{s:s?, s:i, s:o}", "name",
                      fw ? fw->points[KS_EP_SCORE][p].inst->name : NULL,
                      "weight",
                      fw ? (int)fw->points[KS_EP_SCORE][p].weight : 0,
                      "score", v));
    }
    o = json_pack("{s:I, s:o}", "total", (json_int_t)t->total, "plugins",
                  plugins);
    if (o && t->has_runner_up)
        json_object_set_new(o, "runnerUp",
                            json_integer((json_int_t)t->runner_up));
    return o;
}

static json_t *attempt_json(ks_server_t *srv, const ks_attempt_t *t)
{
    json_t *eps = json_object(), *o;
    size_t i;
    for (i = 0; eps && i < KS_ATTEMPT_EPS; i++)
        if (t->ep_seconds[i] >= 0)
            json_object_set_new(eps, ep_names[i],
                                json_real(t->ep_seconds[i]));
    o = json_pack("{s:f, s:s, s:s?, s:s?, s:f, s:f, s:o, s:I, s:s?, "
                     "s:i, s:i, s:o}",
                     "time", t->unix_time, "result",
                     ks_attempt_result_name(t->result), "node", t->node,
                     "nominatedNode", t->nominated, "seconds",
                     (double)t->seconds, "bindSeconds",
                     (double)t->bind_seconds, "extensionPoints", eps,
                     "generation", (json_int_t)t->generation, "profile",
                     t->profile, "nodes", (int)t->n_nodes, "feasible",
                     (int)t->n_feasible, "message",
                  ks_console_json_str(t->message));
    if (o && t->has_scores)
        json_object_set_new(o, "score", attempt_scores_json(srv, t));
    return o;
}

typedef struct find_ctx {
    const char *ns, *name;
    const ks_pod_t *pod;
} find_ctx_t;

static void find_visit(ks_pod_t *pod, int assumed, void *ud)
{
    find_ctx_t *f = ud;
    (void)assumed;
    if (f->pod == NULL && strcmp(pod->ns, f->ns) == 0 &&
        strcmp(pod->name, f->name) == 0)
        f->pod = pod;
}

const ks_pod_t *ks_console_find_pod(ks_server_t *srv, const char *ns,
                                    const char *name, int *bound)
{
    ks_pod_entry_t *e = ks_server_pod_by_key(srv, ns, name);
    const ks_pod_t *p;
    find_ctx_t f = {ns, name, NULL};
    *bound = 0;
    if (e) {
        if ((p = ks_scheduler_queued_pod(srv->sched, e->uid, NULL)) != NULL)
            return p;
        if ((p = ks_cache_get_pod(srv->cache, e->uid)) != NULL) {
            *bound = 1;
            return p;
        }
        if (e->other)
            return e->other;
    }
    /* cluster mode: bound pods are not indexed */
    ks_cache_foreach_pod(srv->cache, find_visit, &f);
    if (f.pod)
        *bound = 1;
    return f.pod;
}

void ks_api_debug_pod(ks_server_t *srv, ks_http_conn_t *c,
                      const ks_http_request_t *req, const char *ns,
                      const char *name)
{
    const ks_attempt_t *at[KS_ATTEMPTS_PER_POD];
    uint64_t total = 0;
    char key[600];
    size_t n = 0, i;
    int bound = 0;
    const ks_pod_t *pod = ks_console_find_pod(srv, ns, name, &bound);
    ks_pod_entry_t *e = ks_server_pod_by_key(srv, ns, name);
    int other = e && e->other && pod == e->other;
    ks_queued_info_t qi;
    json_t *doc, *atts;
    (void)req;
    snprintf(key, sizeof key, "%s/%s", ns, name);
    if (srv->console)
        n = ks_attempts_get(srv->console->attempts, key, at, &total);
    if (pod == NULL && n == 0) {
        ks_api_status(c, 404, "NotFound", "pods", name,
                      "pods \"%s\" not found", name);
        return;
    }
    atts = json_array();
    for (i = n; atts && i-- > 0;) /* newest first */
        json_array_append_new(atts, attempt_json(srv, at[i]));
    doc = json_pack("{s:s, s:s, s:s, s:I, s:o}", "namespace", ns, "name",
                    name, "state",
                    pod == NULL ? "gone"
                    : bound     ? "bound"
                    : other     ? "otherScheduler"
                                : "pending",
                    "attemptsTotal", (json_int_t)total, "attempts", atts);
    if (doc && pod) {
        json_object_set_new(doc, "uid", json_string(pod->uid));
        json_object_set_new(doc, "profile", json_string(pod->scheduler_name));
        if (pod->node_name[0])
            json_object_set_new(doc, "node", json_string(pod->node_name));
        if (!bound &&
            ks_scheduler_queued_pod(srv->sched, pod->uid, &qi) != NULL)
            json_object_set_new(doc, "queue", queued_json(srv, &qi));
    }
    ks_api_json(c, 200, doc);
}

/* --- /debug/rates ----------------------------------------------------------- */

void ks_api_debug_rates(ks_server_t *srv, ks_http_conn_t *c,
                        const ks_http_request_t *req)
{
    const ks_rates_t *r = srv->console ? &srv->console->rates : NULL;
    json_t *samples = json_array(), *doc;
    char v[32];
    size_t i, from = 0;
    if (r && ks_console_query(req->query, "seconds", v, sizeof v)) {
        long s = strtol(v, NULL, 10);
        if (s > 0 && (size_t)s < r->n)
            from = r->n - (size_t)s;
    }
    for (i = from; r && samples && i < r->n; i++) {
        const ks_rate_sample_t *s = ks_rates_at(r, i);
        json_array_append_new(
            samples,
            json_pack("[f, I, I, I, I, I, i, i, i, i, f, f, f]",
                      s->unix_time, (json_int_t)s->attempts,
                      (json_int_t)s->scheduled, (json_int_t)s->bound,
                      (json_int_t)s->unschedulable, (json_int_t)s->errors,
                      (int)s->active, (int)s->backoff, (int)s->unsched,
                      (int)s->inflight, (double)s->p50, (double)s->p90,
                      (double)s->p99));
    }
    doc = json_pack("{s:s, s:i, s:i, s:[s,s,s,s,s,s,s,s,s,s,s,s,s], s:o}",
                    "kind", "RatesView", "intervalSeconds", 1,
                    "latencyWindowSeconds", KS_RATES_WINDOW, "columns",
                    "time", "attempts", "scheduled", "bound",
                    "unschedulable", "errors", "active", "backoff",
                    "unschedulablePool", "inFlight", "p50", "p90", "p99",
                    "samples", samples);
    ks_api_json(c, 200, doc);
}
