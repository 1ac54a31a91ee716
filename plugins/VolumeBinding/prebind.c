/*
 * PreBind (upstream BindPodVolumes): write the decisions Reserve assumed,
 * then wait until the PV controller and the external provisioner have
 * bound every claim, without holding up other pods (SDK ABI 1.4):
 *
 *   1. one request at a time, in upstream's order (bindAPIUpdate): for each
 *      static binding a merge PATCH of the PV setting spec.claimRef (and
 *      pv.kubernetes.io/bound-by-controller when GetBindVolumeToClaim
 *      adds it) with the PV's metadata.resourceVersion, so the server
 *      refuses it if the PV changed (upstream's Update); for each claim to
 *      provision a merge PATCH of the PVC adding
 *      volume.kubernetes.io/selected-node, also with its resourceVersion.
 *      A failed write restores that object and every later one in the
 *      assume cache and ends the wait with the server's message.
 *   2. PreBind returns KS_PENDING; every second (upstream polls at 1 s)
 *      a timer runs checkBindings over the stores until every claim is
 *      bound (KS_SUCCESS through pre_bind_resume), a check fails
 *      ("binding volumes: ..." as upstream wraps it), or
 *      bindTimeoutSeconds pass ("binding volumes: context deadline
 *      exceeded").
 *   In KS_API_RECORD mode (`ksched schedule`) nothing will ever bind: the
 *   wait ends with success once the requests are answered.
 *
 * A wait (vb_wait_t) is owned by the plugin instance's list, created by
 * PreBind and freed when it ends, when Unreserve cancels it (its request
 * cancelled, its timer stopped) or by destroy. Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb.h"

#define POLL_MS 1000

typedef struct wait_binding {
    char *pv, *pv_rv;
    char *claim_ns, *claim_name, *claim_uid, *claim_rv;
    int set_bound_by_controller;
    int64_t api_rv; /* the PV's resourceVersion the server answered */
} wait_binding_t;

typedef struct wait_claim {
    char *ns, *name, *rv;
    int64_t api_rv; /* the claim's resourceVersion the server answered */
} wait_claim_t;

struct vb_wait {
    vb_t *v;
    char *pod_uid, *pod_ns, *pod_name, *node;
    wait_binding_t *b;
    uint32_t n_b;
    wait_claim_t *c;
    uint32_t n_c;
    uint32_t next_req;  /* requests answered so far: bindings, then claims */
    ks_api_call_t *call; /* the request in flight, or NULL */
    ks_timer_t *timer;   /* the next check, or NULL */
    int64_t deadline_ms;
    int polling;
    vb_wait_t *next;
};

static void wait_free(vb_wait_t *w)
{
    uint32_t i;
    for (i = 0; i < w->n_b; i++) {
        free(w->b[i].pv);
        free(w->b[i].pv_rv);
        free(w->b[i].claim_ns);
        free(w->b[i].claim_name);
        free(w->b[i].claim_uid);
        free(w->b[i].claim_rv);
    }
    for (i = 0; i < w->n_c; i++) {
        free(w->c[i].ns);
        free(w->c[i].name);
        free(w->c[i].rv);
    }
    free(w->b);
    free(w->c);
    free(w->pod_uid);
    free(w->pod_ns);
    free(w->pod_name);
    free(w->node);
    free(w);
}

static void unlink_wait(vb_t *v, vb_wait_t *w)
{
    vb_wait_t **pp;
    for (pp = &v->waits; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

void vb_waits_free(vb_t *v)
{
    vb_wait_t *w, *n;
    for (w = v->waits; w; w = n) {
        n = w->next;
        wait_free(w);
    }
    v->waits = NULL;
}

void vb_wait_cancel(vb_t *v, const char *pod_uid)
{
    vb_wait_t *w;
    for (w = v->waits; w; w = w->next)
        if (strcmp(w->pod_uid, pod_uid) == 0)
            break;
    if (w == NULL)
        return;
    if (w->call != NULL)
        v->api->api_cancel(v->h, w->call);
    if (w->timer != NULL)
        v->api->timer_stop(v->h, w->timer);
    unlink_wait(v, w);
    wait_free(w);
}

/* End the wait: resume the pod's binding cycle and free `w`. */
static void finish(vb_wait_t *w, ks_code_t code, const char *reason)
{
    vb_t *v = w->v;
    unlink_wait(v, w);
    if (v->api->pre_bind_resume(v->h, w->pod_uid, code, reason) != 0)
        v->api->log(v->h, KS_LOG_DEBUG,
                    "pod %s/%s no longer waits in PreBind (deleted?); "
                    "dropping its volume binding wait",
                    w->pod_ns, w->pod_name);
    wait_free(w);
}

/* --- JSON bits of the answers ---------------------------------------------- */

/* Past the JSON value at p (a string, object, array or scalar). */
static const char *json_skip(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return p;
            if (depth == 0)
                return p + 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (depth == 0 && (*p == ',')) {
            return p;
        }
    }
    return p;
}

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    return p;
}

/* The value of `key` in the object starting at `obj` (its '{'), or NULL. */
static const char *json_member(const char *obj, const char *key)
{
    const char *p = ws(obj);
    size_t kl = strlen(key);
    if (*p != '{')
        return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *k = p + 1, *e = json_skip(p);
        int match = (size_t)(e - k - 1) == kl && strncmp(k, key, kl) == 0;
        p = ws(e);
        if (*p != ':')
            return NULL;
        p = ws(p + 1);
        if (match)
            return p;
        p = ws(json_skip(p));
        if (*p != ',')
            return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

/* The JSON string at p into buf (simple escapes kept as the character). */
static const char *json_string(const char *p, char *buf, size_t len)
{
    size_t o = 0;
    if (p == NULL || *p != '"' || len == 0)
        return NULL;
    for (p++; *p && *p != '"' && o + 1 < len; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            buf[o++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* metadata.resourceVersion of an answered object, 0 when none. */
static int64_t answer_rv(const char *body)
{
    char buf[64];
    const char *m = body ? json_member(body, "metadata") : NULL;
    const char *rv = m ? json_member(m, "resourceVersion") : NULL;
    return json_string(rv, buf, sizeof buf) ? vb_rv_text(buf) : 0;
}

/* --- the writes ------------------------------------------------------------------ */

/* `s` as a JSON string (quotes included) at buf. */
static size_t json_put(char *buf, size_t len, size_t o, const char *s)
{
    if (o < len)
        buf[o] = '"';
    o++;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        const char *e = NULL;
        if (c == '"')
            e = "\\\"";
        else if (c == '\\')
            e = "\\\\";
        else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            e = esc;
        }
        if (e != NULL) {
            for (; *e; e++, o++)
                if (o < len)
                    buf[o] = *e;
        } else {
            if (o < len)
                buf[o] = (char)c;
            o++;
        }
    }
    if (o < len)
        buf[o] = '"';
    o++;
    if (len)
        buf[o < len ? o : len - 1] = '\0';
    return o;
}

static size_t raw_put(char *buf, size_t len, size_t o, const char *s)
{
    return ks_msg_append(buf, len, o, s);
}

static void on_answer(void *ud, const ks_api_response_t *r);
static int start_polling(vb_wait_t *w);

/* Send request w->next_req; -1 when the host refused it. */
static int send_next(vb_wait_t *w)
{
    vb_t *v = w->v;
    char path[1024], body[4096];
    size_t o = 0;
    ks_api_request_t req;
    if (w->next_req < w->n_b) {
        const wait_binding_t *b = &w->b[w->next_req];
        vb_pathf(path, sizeof path, "/api/v1/persistentvolumes/%s", b->pv);
        o = raw_put(body, sizeof body, o, "{\"metadata\":{");
        if (b->pv_rv[0]) {
            o = raw_put(body, sizeof body, o, "\"resourceVersion\":");
            o = json_put(body, sizeof body, o, b->pv_rv);
            if (b->set_bound_by_controller)
                o = raw_put(body, sizeof body, o, ",");
        }
        if (b->set_bound_by_controller)
            o = raw_put(body, sizeof body, o,
                        "\"annotations\":{\"" ANN_BOUND_BY_CONTROLLER
                        "\":\"yes\"}");
        o = raw_put(body, sizeof body, o,
                    "},\"spec\":{\"claimRef\":{\"kind\":"
                    "\"PersistentVolumeClaim\",\"namespace\":");
        o = json_put(body, sizeof body, o, b->claim_ns);
        o = raw_put(body, sizeof body, o, ",\"name\":");
        o = json_put(body, sizeof body, o, b->claim_name);
        o = raw_put(body, sizeof body, o, ",\"uid\":");
        o = json_put(body, sizeof body, o, b->claim_uid);
        o = raw_put(body, sizeof body, o, ",\"apiVersion\":\"v1\"");
        if (b->claim_rv[0]) {
            o = raw_put(body, sizeof body, o, ",\"resourceVersion\":");
            o = json_put(body, sizeof body, o, b->claim_rv);
        }
        o = raw_put(body, sizeof body, o, "}}}");
    } else {
        const wait_claim_t *c = &w->c[w->next_req - w->n_b];
        vb_pathf(path, sizeof path,
                 "/api/v1/namespaces/%s/persistentvolumeclaims/%s", c->ns,
                 c->name);
        o = raw_put(body, sizeof body, o, "{\"metadata\":{");
        if (c->rv[0]) {
            o = raw_put(body, sizeof body, o, "\"resourceVersion\":");
            o = json_put(body, sizeof body, o, c->rv);
            o = raw_put(body, sizeof body, o, ",");
        }
        o = raw_put(body, sizeof body, o,
                    "\"annotations\":{\"" ANN_SELECTED_NODE "\":");
        o = json_put(body, sizeof body, o, w->node);
        o = raw_put(body, sizeof body, o, "}}}");
    }
    if (o >= sizeof body)
        return -1;
    req.method = "PATCH";
    req.path = path;
    req.body = body;
    req.content_type = "application/merge-patch+json";
    return v->api->api_request(v->h, &req, on_answer, w, &w->call);
}

/* Restore request i and every later one in the assume cache. */
static void revert_from(vb_wait_t *w, uint32_t i)
{
    for (; i < w->n_b + w->n_c; i++) {
        if (i < w->n_b)
            vb_restore_pv(w->v, w->b[i].pv);
        else
            vb_restore_pvc(w->v, w->c[i - w->n_b].ns, w->c[i - w->n_b].name);
    }
}

static void on_answer(void *ud, const ks_api_response_t *r)
{
    vb_wait_t *w = ud;
    uint32_t i = w->next_req;
    w->call = NULL;
    if (r->status < 200 || r->status > 299) {
        /* upstream returns the client's error as is: the Status message */
        char msg[1024];
        const char *m = json_string(
            r->body && r->body[0] == '{' ? json_member(r->body, "message")
                                         : NULL,
            msg, sizeof msg);
        revert_from(w, i);
        finish(w, KS_ERROR, m ? m : r->message);
        return;
    }
    if (i < w->n_b)
        w->b[i].api_rv = answer_rv(r->body);
    else
        w->c[i - w->n_b].api_rv = answer_rv(r->body);
    w->next_req++;
    if (w->next_req < w->n_b + w->n_c) {
        if (send_next(w) != 0) {
            revert_from(w, w->next_req);
            finish(w, KS_ERROR, "VolumeBinding: the host refused a volume "
                                "binding request");
        }
        return;
    }
    if (w->v->api->api_mode(w->v->h) == KS_API_RECORD) {
        finish(w, KS_SUCCESS, NULL); /* recorded: nothing will bind */
        return;
    }
    if (start_polling(w) != 0)
        finish(w, KS_ERROR, "binding volumes: VolumeBinding cannot start "
                            "its poll timer (no host loop or out of "
                            "memory)");
}

/* --- checkBindings ------------------------------------------------------------------- */

typedef enum check_rc { CHECK_DONE, CHECK_WAIT, CHECK_FAILED } check_rc_t;

static check_rc_t check_bindings(vb_wait_t *w, char *err, size_t errlen)
{
    vb_t *v = w->v;
    const ks_node_info_t *ni = v->api->snapshot_get(v->h, w->node);
    const ks_node_t *node = ni ? ni->node : NULL;
    char q[600], q2[600], key[600];
    uint32_t i;
    if (node == NULL) {
        vb_quote(q, sizeof q, w->node);
        vb_pathf(err, errlen, "failed to get node %s: node %s not found", q,
                 q);
        return CHECK_FAILED;
    }
    for (i = 0; i < w->n_b; i++) {
        const wait_binding_t *b = &w->b[i];
        const ks_object_t *pv = v->api->object_get(v->pvs, NULL, b->pv);
        const ks_object_t *pvc;
        if (pv == NULL) {
            vb_pathf(err, errlen,
                     "failed to check binding: could not find "
                     "v1.PersistentVolume %s",
                     vb_quote(q, sizeof q, b->pv));
            return CHECK_FAILED;
        }
        pvc = v->api->object_get(v->pvcs, b->claim_ns, b->claim_name);
        if (pvc == NULL) {
            vb_pathf(key, sizeof key, "%s/%s", b->claim_ns, b->claim_name);
            vb_pathf(err, errlen,
                     "failed to check binding: could not find "
                     "v1.PersistentVolumeClaim %s",
                     vb_quote(q, sizeof q, key));
            return CHECK_FAILED;
        }
        if (b->api_rv > vb_rv(v, pv))
            return CHECK_WAIT; /* the store has not seen our write yet */
        if (!vb_node_affinity_matches(v, pv, &node->labels)) {
            vb_pathf(err, errlen,
                     "pv %s node affinity doesn't match node %s: no "
                     "matching NodeSelectorTerms",
                     vb_quote(q, sizeof q, b->pv),
                     vb_quote(q2, sizeof q2, w->node));
            return CHECK_FAILED;
        }
        if (!vb_has(v, pv, "spec.claimRef") ||
            vb_str(v, pv, "spec.claimRef.uid")[0] == '\0') {
            vb_pathf(err, errlen, "ClaimRef got reset for pv %s",
                     vb_quote(q, sizeof q, b->pv));
            return CHECK_FAILED;
        }
        if (!vb_claim_fully_bound(v, pvc))
            return CHECK_WAIT;
    }
    for (i = 0; i < w->n_c; i++) {
        const wait_claim_t *c = &w->c[i];
        const ks_object_t *pvc = v->api->object_get(v->pvcs, c->ns, c->name);
        const char *sel, *vol;
        if (pvc == NULL) {
            vb_pathf(key, sizeof key, "%s/%s", c->ns, c->name);
            vb_pathf(err, errlen,
                     "failed to check provisioning pvc: could not find "
                     "v1.PersistentVolumeClaim %s",
                     vb_quote(q, sizeof q, key));
            return CHECK_FAILED;
        }
        if (c->api_rv > vb_rv(v, pvc))
            return CHECK_WAIT;
        if (!vb_has(v, pvc, "metadata.annotations")) {
            vb_pathf(err, errlen, "selectedNode annotation reset for PVC %s",
                     vb_quote(q, sizeof q, c->name));
            return CHECK_FAILED;
        }
        sel = vb_annotation(v, pvc, ANN_SELECTED_NODE);
        if (sel == NULL || strcmp(sel, w->node) != 0) {
            /* the provisioner removes it to ask for another try */
            vb_pathf(err, errlen, "provisioning failed for PVC %s",
                     vb_quote(q, sizeof q, c->name));
            return CHECK_FAILED;
        }
        vol = vb_str(v, pvc, "spec.volumeName");
        if (vol[0] != '\0') {
            const ks_object_t *pv = v->api->object_get(v->pvs, NULL, vol);
            if (pv == NULL)
                return CHECK_WAIT; /* not seen yet, or unbound soon */
            if (!vb_node_affinity_matches(v, pv, &node->labels)) {
                vb_pathf(err, errlen,
                         "pv %s node affinity doesn't match node %s: no "
                         "matching NodeSelectorTerms",
                         vb_quote(q, sizeof q, vol),
                         vb_quote(q2, sizeof q2, w->node));
                return CHECK_FAILED;
            }
        }
        if (!vb_claim_fully_bound(v, pvc))
            return CHECK_WAIT;
    }
    return CHECK_DONE;
}

static void on_tick(void *ud)
{
    vb_wait_t *w = ud;
    vb_t *v = w->v;
    char err[1024], msg[1100];
    w->timer = NULL;
    if (v->api->now_ms(v->h) >= w->deadline_ms) {
        finish(w, KS_ERROR, "binding volumes: context deadline exceeded");
        return;
    }
    switch (check_bindings(w, err, sizeof err)) {
    case CHECK_DONE:
        finish(w, KS_SUCCESS, NULL);
        return;
    case CHECK_FAILED:
        vb_pathf(msg, sizeof msg, "binding volumes: %s", err);
        finish(w, KS_ERROR, msg);
        return;
    case CHECK_WAIT:
        break;
    }
    w->timer = v->api->timer_start(v->h, POLL_MS, on_tick, w);
    if (w->timer == NULL)
        finish(w, KS_ERROR, "binding volumes: VolumeBinding cannot start "
                            "its poll timer (no host loop or out of "
                            "memory)");
}

/* Start checking every POLL_MS until bindTimeoutSeconds; -1 when the
 * host has no timer for it (the caller ends the wait). */
static int start_polling(vb_wait_t *w)
{
    vb_t *v = w->v;
    w->polling = 1;
    w->deadline_ms = v->api->now_ms(v->h) + v->bind_timeout_ms;
    w->timer = v->api->timer_start(v->h, POLL_MS, on_tick, w);
    return w->timer != NULL ? 0 : -1;
}

/* --- PreBind ------------------------------------------------------------------------- */

static char *dup(const char *s)
{
    return strdup(s ? s : "");
}

/* A wait for the node's decision; NULL when out of memory. */
static vb_wait_t *wait_new(vb_t *v, const vb_state_t *s,
                           const vb_pod_volumes_t *pv, const ks_pod_t *pod,
                           const char *node)
{
    vb_wait_t *w = calloc(1, sizeof *w);
    uint32_t i;
    int bad = 0;
    if (w == NULL)
        return NULL;
    w->v = v;
    w->pod_uid = dup(pod->uid);
    w->pod_ns = dup(pod->ns);
    w->pod_name = dup(pod->name);
    w->node = dup(node);
    w->b = calloc(pv->n_statics + 1, sizeof *w->b);
    w->c = calloc(pv->n_provs + 1, sizeof *w->c);
    if (!w->pod_uid || !w->pod_ns || !w->pod_name || !w->node || !w->b ||
        !w->c) {
        wait_free(w);
        return NULL;
    }
    for (i = 0; i < pv->n_statics; i++) {
        const vb_static_t *st = &pv->statics[i];
        const vb_claim_t *c = &s->delay[st->claim];
        wait_binding_t *b = &w->b[w->n_b++];
        b->pv = dup(st->pv);
        b->pv_rv = dup(st->pv_rv);
        b->claim_ns = dup(c->ns);
        b->claim_name = dup(c->name);
        b->claim_uid = dup(c->uid);
        b->claim_rv = dup(c->rv);
        b->set_bound_by_controller = st->set_bound_by_controller;
        bad |= !b->pv || !b->pv_rv || !b->claim_ns || !b->claim_name ||
               !b->claim_uid || !b->claim_rv;
    }
    for (i = 0; i < pv->n_provs; i++) {
        const vb_claim_t *c = &s->delay[pv->provs[i].claim];
        wait_claim_t *wc = &w->c[w->n_c++];
        wc->ns = dup(c->ns);
        wc->name = dup(c->name);
        wc->rv = dup(c->rv);
        bad |= !wc->ns || !wc->name || !wc->rv;
    }
    if (bad) {
        wait_free(w);
        return NULL;
    }
    return w;
}

ks_code_t vb_pre_bind(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const char *node_name, ks_status_t *st)
{
    vb_t *v = self;
    vb_state_t *s = vb_state_get(v, cs);
    vb_pod_volumes_t *pv;
    vb_wait_t *w;
    ks_api_mode_t mode;
    char q[600];
    if (s == NULL) {
        v->api->status_reason(st, "reading \"VolumeBinding\" from cycle "
                                  "state: not found");
        return KS_ERROR;
    }
    if (s->skip || s->all_bound)
        return KS_SUCCESS; /* nothing to bind */
    pv = vb_state_node(s, node_name);
    if (pv == NULL) {
        v->api->status_reasonf(st, "no pod volumes found for node %s",
                               vb_quote(q, sizeof q, node_name));
        return KS_ERROR;
    }
    if (!KS_API_HAS(v->api, pre_bind_resume) ||
        !KS_API_HAS(v->api, api_request) ||
        !KS_API_HAS(v->api, api_cancel) || !KS_API_HAS(v->api, timer_start) ||
        !KS_API_HAS(v->api, timer_stop) || !KS_API_HAS(v->api, api_mode)) {
        v->api->status_reasonf(
            st,
            "VolumeBinding cannot bind the volumes of pod %s/%s: this host "
            "has no API requests or waiting PreBind (SDK ABI 1.4 "
            "pre_bind_resume)",
            pod->ns, pod->name);
        vb_revert(v, s, pv);
        return KS_ERROR;
    }
    mode = v->api->api_mode(v->h);
    if (mode == KS_API_NONE) {
        v->api->status_reasonf(
            st,
            "VolumeBinding cannot bind the volumes of pod %s/%s: the host "
            "has no cluster to write to (API mode none)",
            pod->ns, pod->name);
        vb_revert(v, s, pv);
        return KS_ERROR;
    }
    vb_wait_cancel(v, pod->uid); /* a leftover of an earlier attempt */
    w = wait_new(v, s, pv, pod, node_name);
    if (w == NULL) {
        v->api->status_reason(st, "out of memory");
        vb_revert(v, s, pv);
        return KS_ERROR;
    }
    w->next = v->waits;
    v->waits = w;
    if (w->n_b + w->n_c == 0) {
        if (mode == KS_API_RECORD) {
            vb_wait_cancel(v, pod->uid);
            return KS_SUCCESS;
        }
        if (start_polling(w) != 0) {
            unlink_wait(v, w);
            wait_free(w);
            v->api->status_reason(st, "binding volumes: VolumeBinding "
                                      "cannot start its poll timer");
            return KS_ERROR;
        }
        return KS_PENDING;
    }
    if (send_next(w) != 0) {
        revert_from(w, 0);
        unlink_wait(v, w);
        wait_free(w);
        v->api->status_reasonf(st,
                               "VolumeBinding: the host refused the volume "
                               "binding requests of pod %s/%s",
                               pod->ns, pod->name);
        return KS_ERROR;
    }
    return KS_PENDING;
}
