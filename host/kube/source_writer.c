/* The cluster source's writes: what the scheduler asks to change in the
 * API server (ks_sched_writer_t), made as kube-scheduler makes them. */
#include "source_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <jansson.h>

#include "base/intern.h"
#include "base/log.h"
#include "kube/plugin_requests.h"

#define BIND_TIMEOUT_MS 30000
#define WRITE_TIMEOUT_MS 30000

static ks_intern_t *IN(void)
{
    return ks_intern_global();
}


/* One write; while it lives, one client call owned by the source is in
 * flight for it (cancelled at close: write_cancelled frees it). */
typedef struct write {
    ks_kube_source_t *src;
    int kind;
    /* W_BIND */
    char *uid, *ns, *name, *node, *controller;
    /* W_DELETE: the DELETE to send once the condition patch is done */
    char *delete_path, *delete_body;
} write_t;

static void write_free(write_t *w)
{
    free(w->uid);
    free(w->ns);
    free(w->name);
    free(w->node);
    free(w->controller);
    free(w->delete_path);
    free(w->delete_body);
    free(w);
}

static write_t *write_new(ks_kube_source_t *src, int kind)
{
    write_t *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->src = src;
    w->kind = kind;
    return w;
}

static void write_cancelled(void *ud)
{
    write_free(ud);
}

/* Start `w`'s call; on failure the write is dropped (returns -1). */
static int write_send(write_t *w, const char *method, const char *path,
                      const char *body, const char *ctype, long timeout_ms,
                      ks_kube_done_cb done)
{
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    memset(&o, 0, sizeof o);
    o.method = method;
    o.path = path;
    o.body = body;
    o.content_type = ctype;
    o.timeout_ms = timeout_ms;
    o.on_done = done;
    o.ud = w;
    o.owner = w->src;
    o.on_cancel = write_cancelled;
    if (ks_kube_call(w->src->client, &o, &err) == NULL) {
        ks_log(KS_LOGL_WARN, "%s %s: %s", method, path, err.msg);
        w->src->write_fail[w->kind]++;
        write_free(w);
        return -1;
    }
    return 0;
}

static void record_event(ks_kube_source_t *src, const ks_pod_t *pod,
                         const char *type, const char *reason,
                         const char *action, const char *note)
{
    ks_event_ref_t ref = {pod->ns, pod->name, pod->uid};
    ks_event_record(src->events, pod->scheduler_name, &ref, NULL, type,
                    reason, action, note);
}

static void bind_answer(void *ud, const ks_kube_result_t *r)
{
    write_t *w = ud;
    ks_kube_source_t *src = w->src;
    if (r->status == 201 || r->status == 200) {
        char note[1200];
        ks_event_ref_t ref = {w->ns, w->name, w->uid};
        src->stats.bindings++;
        snprintf(note, sizeof note, "Successfully assigned %s/%s to %s",
                 w->ns, w->name, w->node);
        ks_event_record(src->events, w->controller, &ref, NULL, "Normal",
                        "Scheduled", "Binding", note);
        ks_scheduler_bind_done(src->sched, w->uid, 1, NULL);
    } else {
        char msg[1200];
        src->stats.binding_failures++;
        snprintf(msg, sizeof msg, "binding rejected: %s", r->message);
        ks_log(KS_LOGL_INFO, "pod %s/%s: %s", w->ns, w->name, msg);
        ks_scheduler_bind_done(src->sched, w->uid, 0, msg);
    }
    write_free(w);
}

static int may_write(ks_kube_source_t *src)
{
    return src->may_write == NULL || src->may_write(src->may_write_ud);
}

static int w_bind(void *ud, const ks_pod_t *pod, const char *node)
{
    ks_kube_source_t *src = ud;
    char path[800];
    char *body;
    json_t *b;
    write_t *w;
    int rc;
    if (!may_write(src)) {
        ks_log(KS_LOGL_WARN, "pod %s/%s: not bound to %s: this replica is "
                             "not the leader",
               pod->ns, pod->name, node);
        return -1;
    }
    if ((w = write_new(src, W_BIND)) == NULL)
        return -1;
    if ((w->uid = strdup(pod->uid)) == NULL ||
        (w->ns = strdup(pod->ns)) == NULL ||
        (w->name = strdup(pod->name)) == NULL ||
        (w->node = strdup(node)) == NULL ||
        (w->controller = strdup(pod->scheduler_name)) == NULL) {
        write_free(w);
        return -1;
    }
    /* As DefaultBinder: the pod's namespace, name and UID (so a pod that
     * was deleted and re-created under the same name is not bound). */
    b = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}",
                  "apiVersion", "v1", "kind", "Binding", "metadata", "name",
                  pod->name, "namespace", pod->ns, "uid", pod->uid, "target",
                  "apiVersion", "v1", "kind", "Node", "name", node);
    body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/binding",
             pod->ns, pod->name);
    rc = body ? write_send(w, "POST", path, body, NULL, BIND_TIMEOUT_MS,
                           bind_answer)
              : (write_free(w), -1);
    free(body);
    return rc;
}

static void status_answer(void *ud, const ks_kube_result_t *r)
{
    write_t *w = ud;
    if (r->status == 200)
        w->src->stats.status_patches++;
    else if (r->status != 404) { /* a pod deleted meanwhile is no news */
        w->src->write_fail[W_STATUS]++;
        ks_log(KS_LOGL_WARN, "updating the status of pod %s/%s: %s",
               w->ns ? w->ns : "?", w->name ? w->name : "?", r->message);
    }
    write_free(w);
}

static void patch_status(ks_kube_source_t *src, const ks_pod_t *pod,
                         json_t *status)
{
    char path[800];
    json_t *patch = json_pack("{s:o}", "status", status);
    char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    write_t *w;
    json_decref(patch);
    if (body == NULL || (w = write_new(src, W_STATUS)) == NULL) {
        free(body);
        return;
    }
    w->ns = strdup(pod->ns);
    w->name = strdup(pod->name);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status",
             pod->ns, pod->name);
    write_send(w, "PATCH", path, body, "application/strategic-merge-patch+json",
               WRITE_TIMEOUT_MS, status_answer);
    free(body);
}

static void now_rfc3339(char *buf, size_t len)
{
    struct timeval tv;
    struct tm tm;
    time_t t;
    gettimeofday(&tv, NULL);
    t = tv.tv_sec;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A failed attempt: PodScheduled=False with the reason and message, the
 * nominated node, and a FailedScheduling event (upstream
 * handleSchedulingFailure). The status is written only when it changes. */
static void w_failed(void *ud, const ks_pod_t *pod, const char *message,
                     int error)
{
    ks_kube_source_t *src = ud;
    pod_ent_t *e = ks_kube_source_ent(src, pod->uid);
    const char *nom = pod->nominated_node_name ? pod->nominated_node_name
                                               : "";
    json_t *status, *cond;
    char t[40];
    if (!may_write(src))
        return;
    record_event(src, pod, "Warning", "FailedScheduling", "Scheduling",
                 message);
    if (e == NULL)
        return; /* deleted meanwhile */
    if (e->cond_message && strcmp(e->cond_message, message) == 0 &&
        e->nominated == nom)
        return;
    cond = json_pack("{s:s, s:s, s:s, s:s, s:n}", "type", "PodScheduled",
                     "status", "False", "reason",
                     error ? "SchedulerError" : "Unschedulable", "message",
                     message, "lastProbeTime");
    if (cond && e->cond_message == NULL) {
        now_rfc3339(t, sizeof t);
        json_object_set_new(cond, "lastTransitionTime", json_string(t));
    }
    status = json_pack("{s:[o]}", "conditions", cond);
    if (status && (nom[0] || (e->nominated && e->nominated[0])))
        json_object_set_new(status, "nominatedNodeName",
                            nom[0] ? json_string(nom) : json_null());
    if (status == NULL)
        return;
    free(e->cond_message);
    e->cond_message = strdup(message);
    e->nominated = nom;
    patch_status(src, pod, status);
}

static void w_nominate(void *ud, const ks_pod_t *pod, const char *node)
{
    ks_kube_source_t *src = ud;
    pod_ent_t *e = ks_kube_source_ent(src, pod->uid);
    const char *nom = ks_intern_str(IN(), node);
    json_t *status;
    if (e == NULL || e->nominated == nom || !may_write(src))
        return;
    if ((e->nominated == NULL || e->nominated[0] == '\0') && nom[0] == '\0')
        return;
    status = json_pack("{s:o}", "nominatedNodeName",
                       nom[0] ? json_string(nom) : json_null());
    if (status == NULL)
        return;
    e->nominated = nom;
    patch_status(src, pod, status);
}

static void delete_answer(void *ud, const ks_kube_result_t *r)
{
    write_t *w = ud;
    if (r->status == 200 || r->status == 202)
        w->src->stats.deletes++;
    else if (r->status != 404 && r->status != 409) {
        /* 404: already gone; 409: a new pod took the name (UID
         * precondition): nothing to delete either. */
        w->src->write_fail[W_DELETE]++;
        ks_log(KS_LOGL_WARN, "deleting preemption victim %s/%s: %s", w->ns,
               w->name, r->message);
    }
    write_free(w);
}

static void victim_condition_answer(void *ud, const ks_kube_result_t *r)
{
    write_t *w = ud;
    char *path = w->delete_path, *body = w->delete_body;
    if (r->status != 200 && r->status != 404)
        ks_log(KS_LOGL_INFO, "preemption victim %s/%s: condition: %s", w->ns,
               w->name, r->message);
    if (r->status == 404) {
        write_free(w);
        return;
    }
    w->delete_path = w->delete_body = NULL;
    /* Same record, second request (the source's call again). */
    write_send(w, "DELETE", path, body, NULL, WRITE_TIMEOUT_MS, delete_answer);
    free(path);
    free(body);
}

/* A preemption victim: the DisruptionTarget condition, then a DELETE with
 * the UID as precondition (upstream prepareCandidate). */
static void w_delete(void *ud, const ks_pod_t *victim)
{
    ks_kube_source_t *src = ud;
    char path[800], msg[600], t[40];
    json_t *patch, *del;
    char *pbody, *dbody;
    write_t *w;
    if (!may_write(src) || (w = write_new(src, W_DELETE)) == NULL)
        return;
    now_rfc3339(t, sizeof t);
    snprintf(msg, sizeof msg,
             "%s: preempting to accommodate a higher priority pod",
             victim->scheduler_name);
    patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
                      "conditions", "type", "DisruptionTarget", "status",
                      "True", "reason", "PreemptionByScheduler", "message",
                      msg, "lastTransitionTime", t);
    del = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
                    "DeleteOptions", "preconditions", "uid", victim->uid);
    pbody = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    dbody = del ? json_dumps(del, JSON_COMPACT) : NULL;
    json_decref(patch);
    json_decref(del);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s",
             victim->ns, victim->name);
    w->ns = strdup(victim->ns);
    w->name = strdup(victim->name);
    w->delete_path = strdup(path);
    w->delete_body = dbody;
    if (pbody == NULL || dbody == NULL || w->delete_path == NULL ||
        w->ns == NULL || w->name == NULL) {
        free(pbody);
        write_free(w);
        return;
    }
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status",
             victim->ns, victim->name);
    write_send(w, "PATCH", path, pbody,
               "application/strategic-merge-patch+json", WRITE_TIMEOUT_MS,
               victim_condition_answer);
    free(pbody);
}

static void w_event(void *ud, const ks_pod_t *pod, const char *type,
                    const char *reason, const char *message)
{
    ks_kube_source_t *src = ud;
    if (!may_write(src))
        return;
    record_event(src, pod, type, reason,
                 strcmp(reason, "Preempted") == 0 ? "Preempting" : reason,
                 message);
}

/* Plugins' API requests (SDK ABI 1.4) go out on the writes' client. */
static void *w_api_send(void *ud, const ks_api_request_t *req,
                        ks_api_done_fn done, void *dud, char *err,
                        size_t errlen)
{
    ks_kube_source_t *src = ud;
    return ks_kube_plugin_request(src->client, req, done, dud, err, errlen);
}

static void w_api_abort(void *ud, void *handle)
{
    (void)ud;
    ks_kube_plugin_request_abort(handle);
}

ks_sched_writer_t ks_kube_source_writer(ks_kube_source_t *src)
{
    ks_sched_writer_t w;
    memset(&w, 0, sizeof w);
    w.api_mode = KS_API_CLUSTER;
    w.api_send = w_api_send;
    w.api_abort = w_api_abort;
    w.bind = w_bind;
    w.delete_pod = w_delete;
    w.failed = w_failed;
    w.nominate = w_nominate;
    w.event = w_event;
    w.ud = src;
    return w;
}
