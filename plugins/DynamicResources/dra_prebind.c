/*
 * DynamicResources' PreBind (upstream bindClaim): for each claim of the
 * pod not yet reserved for it, the finalizer
 * resource.kubernetes.io/delete-protection (when the scheduler allocated
 * the claim and it is missing), then status.allocation and
 * status.reservedFor, written through api_request; PreBind returns
 * KS_PENDING and resumes when the last answer came, or fails with
 * upstream's message on the first error.
 *
 * Upstream sends Update and UpdateStatus (PUT of the whole claim); the
 * plugin has no JSON of the whole object, so it sends JSON merge patches
 * of the same fields, with the claim's uid (and, for the finalizer, its
 * resourceVersion) as preconditions: the result in the API server is the
 * same claim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_host.h"

typedef struct step {
    char *path;
    char *body;
    char *what; /* "add finalizer to claim ns/name" ... */
} step_t;

struct dra_wait {
    dra_t *d;
    char *pod_uid;
    step_t *steps;
    uint32_t n_steps, at;
    char **claim_uids; /* the allocations this PreBind writes */
    uint32_t n_uids;
    char **reserve_uids; /* every claim this PreBind reserves */
    uint32_t n_reserve;
    char *pod_name;
    ks_api_call_t *call;
    struct dra_wait *next;
};

static void wait_free(dra_wait_t *w)
{
    uint32_t i;
    for (i = 0; i < w->n_steps; i++) {
        free(w->steps[i].path);
        free(w->steps[i].body);
        free(w->steps[i].what);
    }
    for (i = 0; i < w->n_uids; i++)
        free(w->claim_uids[i]);
    free(w->claim_uids);
    for (i = 0; i < w->n_reserve; i++)
        free(w->reserve_uids[i]);
    free(w->reserve_uids);
    free(w->pod_name);
    free(w->steps);
    free(w->pod_uid);
    free(w);
}

static void wait_unlink(dra_t *d, dra_wait_t *w)
{
    dra_wait_t **pp;
    for (pp = &d->waits; *pp != NULL; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

void dra_allocation_json(dra_buf_t *b, const dra_result_t *res, uint32_t n,
                         int node_local, const char *node)
{
    uint32_t i;
    dra_buf_put(b, "{\"devices\":{\"results\":[");
    for (i = 0; i < n; i++) {
        dra_buf_put(b, i ? ",{\"request\":" : "{\"request\":");
        dra_buf_json(b, res[i].request);
        dra_buf_put(b, ",\"driver\":");
        dra_buf_json(b, res[i].id.driver);
        dra_buf_put(b, ",\"pool\":");
        dra_buf_json(b, res[i].id.pool);
        dra_buf_put(b, ",\"device\":");
        dra_buf_json(b, res[i].id.device);
        dra_buf_put(b, "}");
    }
    dra_buf_put(b, "]}");
    if (node_local) {
        dra_buf_put(b, ",\"nodeSelector\":{\"nodeSelectorTerms\":[{"
                       "\"matchFields\":[{\"key\":\"metadata.name\","
                       "\"operator\":\"In\",\"values\":[");
        dra_buf_json(b, node);
        dra_buf_put(b, "]}]}]}");
    }
    dra_buf_put(b, "}");
}

static void resume(dra_wait_t *w, ks_code_t code, const char *reason)
{
    dra_t *d = w->d;
    uint32_t i;
    for (i = 0; i < w->n_uids; i++) {
        if (code == KS_SUCCESS)
            dra_assume_done(d->assume, w->claim_uids[i]);
        else
            dra_assume_drop(d->assume, w->claim_uids[i]);
    }
    for (i = 0; code == KS_SUCCESS && i < w->n_reserve; i++)
        dra_assume_reserved(d->assume, w->reserve_uids[i], w->pod_name,
                            w->pod_uid);
    wait_unlink(d, w);
    if (d->api->pre_bind_resume(d->h, w->pod_uid, code, reason) != 0)
        d->api->log(d->h, KS_LOG_DEBUG, "pod %s left before its PreBind "
                                        "ended",
                    w->pod_uid);
    wait_free(w);
}

static int send_step(dra_wait_t *w);

static void on_answer(void *ud, const ks_api_response_t *r)
{
    dra_wait_t *w = ud;
    w->call = NULL;
    if (r->status < 200 || r->status >= 300) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s: %s", w->steps[w->at].what,
                 r->message && r->message[0] ? r->message : "no answer");
        resume(w, KS_ERROR, msg);
        return;
    }
    w->at++;
    if (w->at >= w->n_steps) {
        resume(w, KS_SUCCESS, NULL);
        return;
    }
    if (send_step(w) != 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s: the request could not be sent",
                 w->steps[w->at].what);
        resume(w, KS_ERROR, msg);
    }
}

static int send_step(dra_wait_t *w)
{
    ks_api_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "PATCH";
    req.path = w->steps[w->at].path;
    req.body = w->steps[w->at].body;
    req.content_type = "application/merge-patch+json";
    return w->d->api->api_request(w->d->h, &req, on_answer, w, &w->call);
}

static int add_step(dra_wait_t *w, const char *path, dra_buf_t *body,
                    const char *what)
{
    step_t *ns = realloc(w->steps, (w->n_steps + 1) * sizeof *ns);
    step_t *s;
    if (ns == NULL || body->oom)
        return -1;
    w->steps = ns;
    s = &w->steps[w->n_steps];
    memset(s, 0, sizeof *s);
    s->path = strdup(path);
    s->body = body->s;
    body->s = NULL;
    s->what = strdup(what);
    w->n_steps++;
    if (s->path == NULL || s->what == NULL)
        return -1;
    return 0;
}

static int has_finalizer(const dra_claim_t *c)
{
    uint32_t i;
    for (i = 0; i < c->n_finalizers; i++)
        if (strcmp(c->finalizers[i], DRA_FINALIZER) == 0)
            return 1;
    return 0;
}

/* The steps of one claim (bindClaim). */
static int claim_steps(dra_wait_t *w, const dra_claim_t *c,
                       const dra_assumed_t *as, const ks_pod_t *pod)
{
    /* the claim's entry, this pod's allocation or another pod's */
    const dra_assumed_t *as_any = dra_assume_get(w->d->assume, c->uid);
    dra_buf_t b = {0};
    char path[700], what[700];
    uint32_t i;
    int rc;
    snprintf(path, sizeof path,
             "/apis/" DRA_API "/namespaces/%s/resourceclaims/%s", c->ns,
             c->name);
    if (as != NULL && !has_finalizer(c)) {
        dra_buf_put(&b, "{\"metadata\":{\"uid\":");
        dra_buf_json(&b, c->uid);
        dra_buf_put(&b, ",\"resourceVersion\":");
        dra_buf_json(&b, c->rv);
        dra_buf_put(&b, ",\"finalizers\":[");
        for (i = 0; i < c->n_finalizers; i++) {
            if (i)
                dra_buf_put(&b, ",");
            dra_buf_json(&b, c->finalizers[i]);
        }
        dra_buf_put(&b, c->n_finalizers ? "," : "");
        dra_buf_json(&b, DRA_FINALIZER);
        dra_buf_put(&b, "]}}");
        snprintf(what, sizeof what, "add finalizer to claim %s/%s", c->ns,
                 c->name);
        rc = add_step(w, path, &b, what);
        dra_buf_free(&b);
        if (rc != 0)
            return -1;
    }
    dra_buf_put(&b, "{\"metadata\":{\"uid\":");
    dra_buf_json(&b, c->uid);
    dra_buf_put(&b, "},\"status\":{");
    if (as != NULL) {
        dra_buf_put(&b, "\"allocation\":");
        dra_allocation_json(&b, as->results, as->n_results, as->node_local,
                            as->node);
        dra_buf_put(&b, ",");
    }
    dra_buf_put(&b, "\"reservedFor\":[");
    for (i = 0; i < c->n_reserved; i++) {
        dra_buf_put(&b, "{\"resource\":");
        dra_buf_json(&b, c->reserved[i].resource);
        dra_buf_put(&b, ",\"name\":");
        dra_buf_json(&b, c->reserved[i].name);
        dra_buf_put(&b, ",\"uid\":");
        dra_buf_json(&b, c->reserved[i].uid);
        dra_buf_put(&b, "},");
    }
    for (i = 0; as_any != NULL && i < as_any->n_res; i++) {
        uint32_t k;
        int dup = strcmp(as_any->res_uids[i], pod->uid) == 0;
        for (k = 0; k < c->n_reserved && !dup; k++)
            dup = strcmp(c->reserved[k].uid, as_any->res_uids[i]) == 0;
        if (dup)
            continue;
        dra_buf_put(&b, "{\"resource\":\"pods\",\"name\":");
        dra_buf_json(&b, as_any->res_names[i]);
        dra_buf_put(&b, ",\"uid\":");
        dra_buf_json(&b, as_any->res_uids[i]);
        dra_buf_put(&b, "},");
    }
    dra_buf_put(&b, "{\"resource\":\"pods\",\"name\":");
    dra_buf_json(&b, pod->name);
    dra_buf_put(&b, ",\"uid\":");
    dra_buf_json(&b, pod->uid);
    dra_buf_put(&b, "}]}}");
    snprintf(what, sizeof what, "%s to claim %s/%s",
             as != NULL ? "add allocation and reservation" : "add reservation",
             c->ns, c->name);
    strncat(path, "/status", sizeof path - strlen(path) - 1);
    rc = add_step(w, path, &b, what);
    dra_buf_free(&b);
    return rc;
}

static int reserved_for(const dra_claim_t *c, const char *uid)
{
    uint32_t i;
    for (i = 0; i < c->n_reserved; i++)
        if (strcmp(c->reserved[i].uid, uid) == 0)
            return 1;
    return 0;
}

ks_code_t dra_pre_bind(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                       const char *node_name, ks_status_t *st)
{
    dra_t *d = self;
    dra_state_t *s = dra_state_get(d, cs);
    dra_wait_t *w;
    uint32_t i, k;
    (void)node_name;
    if (s == NULL || s->skip || s->n_claims == 0)
        return KS_SUCCESS;
    if ((w = calloc(1, sizeof *w)) == NULL ||
        (w->pod_uid = strdup(pod->uid)) == NULL ||
        (w->pod_name = strdup(pod->name)) == NULL)
        goto oom;
    w->d = d;
    for (i = 0; i < s->n_claims; i++) {
        const dra_claim_t *c = &s->claims[i]->u.claim;
        const dra_assumed_t *as = NULL;
        if (reserved_for(c, pod->uid))
            continue;
        for (k = 0; k < s->n_to_alloc; k++)
            if (s->to_alloc[k] == c)
                as = dra_assume_get(d->assume, c->uid);
        if (as != NULL) {
            char **nu = realloc(w->claim_uids, (w->n_uids + 1) * sizeof *nu);
            if (nu == NULL)
                goto oom;
            w->claim_uids = nu;
            if ((nu[w->n_uids] = strdup(c->uid)) == NULL)
                goto oom;
            w->n_uids++;
        }
        if (claim_steps(w, c, as, pod) != 0)
            goto oom;
        {
            char **nr = realloc(w->reserve_uids,
                                (w->n_reserve + 1) * sizeof *nr);
            if (nr == NULL)
                goto oom;
            w->reserve_uids = nr;
            if ((nr[w->n_reserve] = strdup(c->uid)) == NULL)
                goto oom;
            w->n_reserve++;
        }
    }
    if (w->n_steps == 0) {
        wait_free(w);
        return KS_SUCCESS;
    }
    if (send_step(w) != 0) {
        d->api->status_reasonf(st, "%s: the request could not be sent",
                               w->steps[0].what);
        for (i = 0; i < w->n_uids; i++)
            dra_assume_drop(d->assume, w->claim_uids[i]);
        wait_free(w);
        return KS_ERROR;
    }
    w->next = d->waits;
    d->waits = w;
    return KS_PENDING;
oom:
    if (w != NULL)
        wait_free(w);
    d->api->status_reason(st, "out of memory");
    return KS_ERROR;
}

void dra_wait_cancel(dra_t *d, const char *pod_uid)
{
    dra_wait_t *w;
    for (w = d->waits; w != NULL; w = w->next)
        if (strcmp(w->pod_uid, pod_uid) == 0)
            break;
    if (w == NULL)
        return;
    if (w->call != NULL)
        d->api->api_cancel(d->h, w->call);
    wait_unlink(d, w);
    wait_free(w);
}

void dra_waits_free(dra_t *d)
{
    while (d->waits != NULL) {
        dra_wait_t *w = d->waits;
        d->waits = w->next;
        wait_free(w);
    }
}
