/*
 * Coscheduling: all-or-nothing ("gang") scheduling of a group of pods, as an
 * out-of-tree ksched plugin. Modelled on the coscheduling plugin of
 * kubernetes-sigs/scheduler-plugins, simplified (README.md lists how).
 *
 * A pod belongs to group NAME when it carries the label
 *     scheduling.x-k8s.io/pod-group: NAME
 * Groups are scoped to the pod's namespace. The group's size and Permit
 * wait come from the PodGroup NAME of that namespace
 * (scheduling.x-k8s.io/v1alpha1, scheduler-plugins' custom resource):
 * spec.minMember and spec.scheduleTimeoutSeconds. Without such a PodGroup
 * the size comes from the annotation
 *     scheduling.x-k8s.io/min-available: "N"
 * on the pod, and the wait from the plugin's args.
 *
 * Extension points:
 *   PreEnqueue  admits every pod; remembers each group pod it sees, because
 *               the SDK has no lister of pending pods.
 *   PreFilter   rejects a member of a group that failed recently (held back
 *               for deniedPGExpirationTimeSeconds), and a member of a group
 *               with fewer than N known pods.
 *   PostFilter  when a member cannot be placed and the group is far from N,
 *               rejects the group's waiting members at once.
 *   Reserve     nothing (Unreserve needs a Reserve).
 *   Unreserve   rejects the group's other waiting members, so the whole
 *               group is released together, and holds the group back.
 *   Permit      holds a member until N members are assumed or bound, then
 *               allows every waiting member; waits at most the PodGroup's
 *               scheduleTimeoutSeconds, or permitWaitingTimeSeconds. In
 *               cluster mode the first member to wait writes the
 *               PodGroup's status.scheduleStartTime.
 *   PostBind    writes the PodGroup's status (phase, members scheduled)
 *               with a merge PATCH of its status subresource, through the
 *               host's API client (SDK ABI 1.4).
 *   Events      a pod added to a node, or a PodGroup added or updated
 *               (QueueingHint: the pod's own group only), may make a
 *               group schedulable.
 *
 * Everything runs on the host's loop thread (no Filter or Score here; API
 * answers run there too), so the plugin needs no locks.
 *
 * It needs a host with ABI 1.1; the PodGroup objects need 1.3 and the
 * status writes 1.4, each checked with KS_API_HAS: on an older host the
 * plugin sizes every group by the annotation and writes nothing.
 *
 * Build: cc -shared -fPIC -fvisibility=hidden \
 *            $(pkg-config --cflags ksched-plugin) coscheduling.c \
 *            -o coscheduling.so
 */
#define KS_PLUGIN_MIN_ABI_MINOR 1
#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PLUGIN_NAME "Coscheduling"
#define GROUP_LABEL "scheduling.x-k8s.io/pod-group"
#define MIN_ANNOTATION "scheduling.x-k8s.io/min-available"
#define PG_GROUP "scheduling.x-k8s.io"
#define PG_VERSION "v1alpha1"
#define PG_RESOURCE "podgroups"
#define PG_KIND "PodGroup"
#define DEFAULT_PERMIT_S 60
#define DEFAULT_DENIED_S 20
#define MAX_SECONDS (INT64_MAX / 1000)
#define WAIT_KEY PLUGIN_NAME "/wait"       /* cs_wait_t, Permit -> Unreserve */
#define REJECTED_KEY PLUGIN_NAME "/rejected" /* PreFilter -> PostFilter */
#define MSG_LEN 384

/* A group pod PreEnqueue has seen; every pointer is interned. */
typedef struct cs_member {
    const char *ns;
    const char *group;
    const char *uid;
} cs_member_t;

/* A group that failed recently, and why. */
typedef struct cs_denied {
    const char *ns;    /* interned */
    const char *group; /* interned */
    int64_t until_ms;
    char message[MSG_LEN];
} cs_denied_t;

typedef struct cosched {
    const ks_host_api_t *api;
    ks_handle_t *h;
    uint64_t permit_ms;
    int64_t denied_ms;
    const char *group_key; /* interned GROUP_LABEL */
    const char *min_key;   /* interned MIN_ANNOTATION */
    cs_member_t *members;  /* owned; grows, never shrinks */
    size_t n_members, cap_members;
    cs_denied_t *denied; /* owned; expired entries are reused */
    size_t n_denied, cap_denied;
    int saw_enqueue; /* PreEnqueue is enabled and has run */
    const ks_store_t *podgroups; /* NULL on a host older than ABI 1.3 */
    int has_api; /* the host has api_request (ABI 1.4) */
    struct cs_pg_status **pgs; /* owned; one per PodGroup written to */
    size_t n_pgs, cap_pgs;
} cosched_t;

/* What the plugin wrote, or is writing, to one PodGroup's status. Each
 * is allocated on its own: it is the `ud` of its PATCH in flight. */
typedef struct cs_pg_status {
    cosched_t *c;
    const char *ns;           /* interned */
    const char *name;         /* interned */
    const char **bound;       /* interned uids of members seen bound */
    size_t n_bound, cap_bound;
    int64_t min;              /* spec.minMember when last read */
    ks_api_call_t *call;      /* the PATCH in flight, or NULL */
    int64_t sent_scheduled;   /* what that PATCH says */
    const char *sent_phase;
    int64_t done_scheduled;   /* what the server took last (-1: nothing) */
    const char *done_phase;
    int again;                /* members bound while the PATCH was out */
    int want_start;           /* write scheduleStartTime (cluster mode) */
} cs_pg_status_t;

/* The group of one pod: namespace, name (both interned), the number of
 * members it needs, and where that came from. */
typedef struct cs_group {
    const char *ns;
    const char *name;
    int64_t min;
    int from_pg;         /* min (and timeout_ms) come from a PodGroup */
    uint64_t timeout_ms; /* the PodGroup's scheduleTimeoutSeconds; 0: args */
} cs_group_t;

/* What Permit leaves in the cycle state for Unreserve. */
typedef struct cs_wait {
    int64_t deadline_ms;
    uint64_t timeout_ms;
} cs_wait_t;

/* --- groups ---------------------------------------------------------------- */

/* Fill g->ns and g->name; 0 when the pod is in no group. */
static int cs_group_of(const cosched_t *c, const ks_pod_t *pod, cs_group_t *g)
{
    const char *name = ks_labels_get(&pod->labels, c->group_key);
    if (name == NULL || name[0] == '\0')
        return 0;
    g->ns = pod->ns;
    g->name = name;
    g->min = 0;
    g->from_pg = 0;
    g->timeout_ms = 0;
    return 1;
}

/* The PodGroup of group g, or NULL (none, or a host without stores). The
 * view is valid until the calling callback returns. */
static const ks_object_t *cs_podgroup(const cosched_t *c, const cs_group_t *g)
{
    if (c->podgroups == NULL)
        return NULL;
    return c->api->object_get(c->podgroups, g->ns, g->name);
}

/* Read the PodGroup's spec into g: minMember (absent or below 1 is 1: no
 * gang, as upstream, where the CRD's minimum keeps it at 1 anyway) and
 * scheduleTimeoutSeconds (absent or not positive: the args' wait, as
 * upstream's GetWaitTimeDuration). A field of another type is refused. */
static int cs_group_from_podgroup(const cosched_t *c, const ks_object_t *o,
                                  cs_group_t *g, ks_status_t *st)
{
    int64_t v = 0;
    ks_field_rc_t rc = c->api->object_int(o, "spec.minMember", &v);
    g->from_pg = 1;
    if (rc != KS_FIELD_OK && rc != KS_FIELD_MISSING) {
        if (st != NULL)
            c->api->status_reasonf(st,
                                   "PodGroup %s/%s: spec.minMember is not an "
                                   "integer",
                                   g->ns, g->name);
        return -1;
    }
    g->min = rc == KS_FIELD_OK && v > 1 ? v : 1;
    v = 0;
    rc = c->api->object_int(o, "spec.scheduleTimeoutSeconds", &v);
    if (rc != KS_FIELD_OK && rc != KS_FIELD_MISSING) {
        if (st != NULL)
            c->api->status_reasonf(st,
                                   "PodGroup %s/%s: "
                                   "spec.scheduleTimeoutSeconds is not an "
                                   "integer",
                                   g->ns, g->name);
        return -1;
    }
    if (rc == KS_FIELD_OK && v > 0)
        g->timeout_ms = (uint64_t)(v > MAX_SECONDS ? MAX_SECONDS : v) * 1000u;
    return 0;
}

/* Fill g->min (and g->timeout_ms): from the group's PodGroup when there is
 * one, else from min-available of the pod's annotation. On a missing or
 * bad value return -1, attaching the reason to st when st is not NULL. */
static int cs_group_min(const cosched_t *c, const ks_pod_t *pod, cs_group_t *g,
                        ks_status_t *st)
{
    const ks_object_t *pg = cs_podgroup(c, g);
    const char *v;
    if (pg != NULL)
        return cs_group_from_podgroup(c, pg, g, st);
    v = ks_labels_get(&pod->annotations, c->min_key);
    if (v == NULL) {
        if (st != NULL)
            c->api->status_reasonf(st,
                                   "pod group \"%s\": no PodGroup %s/%s and "
                                   "the pod has no annotation %s",
                                   g->name, g->ns, g->name, MIN_ANNOTATION);
        return -1;
    }
    if (ks_parse_int64(v, &g->min) != 0 || g->min < 1) {
        if (st != NULL)
            c->api->status_reasonf(st,
                                   "pod group \"%s\": annotation %s is "
                                   "\"%s\", not a positive integer",
                                   g->name, MIN_ANNOTATION, v);
        return -1;
    }
    return 0;
}

static int cs_in_group(const cosched_t *c, const ks_pod_t *p,
                       const cs_group_t *g)
{
    return p->ns == g->ns && ks_labels_get(&p->labels, c->group_key) == g->name;
}

static int cs_is_member(const cosched_t *c, const cs_group_t *g,
                        const char *uid)
{
    size_t i;
    for (i = 0; i < c->n_members; i++)
        if (c->members[i].uid == uid && c->members[i].ns == g->ns &&
            c->members[i].group == g->name)
            return 1;
    return 0;
}

/* Group pods on nodes in this cycle's snapshot (bound, or assumed and
 * waiting at Permit), not counting `self_pod`. With `only_unknown`, count
 * only those PreEnqueue has not seen. */
static uint32_t cs_count_on_nodes(const cosched_t *c, const cs_group_t *g,
                                  const ks_pod_t *self_pod, int only_unknown)
{
    uint32_t n_nodes = c->api->snapshot_num_nodes(c->h), i, k, n = 0;
    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = c->api->snapshot_node_at(c->h, i);
        for (k = 0; k < ni->n_pods; k++) {
            const ks_pod_t *p = ni->pods[k];
            if (p->uid == self_pod->uid || !cs_in_group(c, p, g))
                continue;
            if (only_unknown && cs_is_member(c, g, p->uid))
                continue;
            n++;
        }
    }
    return n;
}

/* Is the (assumed) pod on its node in this cycle's snapshot? */
static int cs_in_snapshot(const cosched_t *c, const ks_pod_t *p)
{
    const ks_node_info_t *ni;
    uint32_t k;
    if (p->node_name == NULL || p->node_name[0] == '\0')
        return 0;
    ni = c->api->snapshot_get(c->h, p->node_name);
    if (ni == NULL)
        return 0;
    for (k = 0; k < ni->n_pods; k++)
        if (ni->pods[k]->uid == p->uid)
            return 1;
    return 0;
}

/* --- denied groups ------------------------------------------------------------ */

/* The unexpired denial of group g, or NULL. */
static const cs_denied_t *cs_denied_get(const cosched_t *c,
                                        const cs_group_t *g, int64_t now)
{
    size_t i;
    for (i = 0; i < c->n_denied; i++)
        if (c->denied[i].ns == g->ns && c->denied[i].group == g->name &&
            now < c->denied[i].until_ms)
            return &c->denied[i];
    return NULL;
}

/* Hold group g back with `message`, unless it already is (the first reason
 * is the one worth keeping: later ones are its consequences). */
static void cs_denied_add(cosched_t *c, const cs_group_t *g,
                          const char *message)
{
    int64_t now = c->api->now_ms(c->h);
    cs_denied_t *d = NULL;
    size_t i;
    if (cs_denied_get(c, g, now) != NULL)
        return;
    for (i = 0; i < c->n_denied && d == NULL; i++)
        if (now >= c->denied[i].until_ms)
            d = &c->denied[i];
    if (d == NULL) {
        if (c->n_denied == c->cap_denied) {
            size_t cap = c->cap_denied ? c->cap_denied * 2 : 8;
            cs_denied_t *a = realloc(c->denied, cap * sizeof *a);
            if (a == NULL)
                return; /* only an optimisation: Permit still gates */
            c->denied = a;
            c->cap_denied = cap;
        }
        d = &c->denied[c->n_denied++];
    }
    d->ns = c->api->intern(c->h, g->ns);
    d->group = c->api->intern(c->h, g->name);
    d->until_ms = now + c->denied_ms;
    snprintf(d->message, sizeof d->message, "%s", message);
}

/* --- waiting pods ----------------------------------------------------------- */

enum { CS_COUNT, CS_WAITING, CS_ALLOW, CS_REJECT };

typedef struct cs_visit {
    const cosched_t *c;
    const cs_group_t *g;
    const ks_pod_t *pod; /* the pod of the current call; skipped */
    int action;
    const char *message; /* CS_REJECT */
    uint32_t n;          /* CS_COUNT: waiting members not in the snapshot;
                            CS_WAITING: every waiting member;
                            otherwise: members allowed or rejected */
} cs_visit_t;

static void cs_visit_waiting(ks_waiting_pod_t *wp, void *ud)
{
    cs_visit_t *v = ud;
    const ks_host_api_t *api = v->c->api;
    const ks_pod_t *p = api->waiting_pod_pod(wp);
    if (p->uid == v->pod->uid || !cs_in_group(v->c, p, v->g))
        return;
    switch (v->action) {
    case CS_COUNT:
        /* Assumed pods normally are in the snapshot already; count the
         * others here so that no member is counted twice or missed. */
        if (!cs_in_snapshot(v->c, p))
            v->n++;
        break;
    case CS_WAITING:
        v->n++;
        break;
    case CS_ALLOW:
        api->waiting_pod_allow(wp, PLUGIN_NAME);
        v->n++;
        break;
    case CS_REJECT:
        api->waiting_pod_reject(wp, PLUGIN_NAME, v->message);
        v->n++;
        break;
    }
}

static uint32_t cs_waiting_apply(const cosched_t *c, const cs_group_t *g,
                                 const ks_pod_t *pod, int action,
                                 const char *message)
{
    cs_visit_t v = {c, g, pod, action, message, 0};
    c->api->waiting_pods_iterate(c->h, cs_visit_waiting, &v);
    return v.n;
}

/* --- PodGroup status ------------------------------------------------------- */

/* The phases this plugin writes (scheduler-plugins' PodGroupScheduling and
 * PodGroupScheduled, as its PostBind set them while it owned the status). */
static const char PHASE_SCHEDULING[] = "Scheduling";
static const char PHASE_SCHEDULED[] = "Scheduled";

/* Names go into a URL path and a JSON text unescaped: the API server's
 * names (DNS subdomains) never need escaping; a snapshot file's odd name
 * is not written. */
static int cs_plain_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

/* Are PodGroup statuses written? Only to a cluster (KS_API_CLUSTER) or
 * into `ksched schedule`'s record (KS_API_RECORD). Asked when needed, not
 * in create: the host may set its API client up after creating plugins. */
static ks_api_mode_t cs_api_mode(const cosched_t *c)
{
    if (c->podgroups == NULL || !c->has_api)
        return KS_API_NONE;
    return c->api->api_mode(c->h);
}

static int cs_writes_status(const cosched_t *c)
{
    ks_api_mode_t mode = cs_api_mode(c);
    return mode == KS_API_CLUSTER || mode == KS_API_RECORD;
}

/* The status record of group g, created on first use; NULL when out of
 * memory. */
static cs_pg_status_t *cs_pg_get(cosched_t *c, const cs_group_t *g)
{
    const char *ns = c->api->intern(c->h, g->ns);
    const char *name = c->api->intern(c->h, g->name);
    cs_pg_status_t *e;
    size_t i;
    for (i = 0; i < c->n_pgs; i++)
        if (c->pgs[i]->ns == ns && c->pgs[i]->name == name)
            return c->pgs[i];
    if (c->n_pgs == c->cap_pgs) {
        size_t cap = c->cap_pgs ? c->cap_pgs * 2 : 8;
        cs_pg_status_t **a = realloc(c->pgs, cap * sizeof *a);
        if (a == NULL)
            return NULL;
        c->pgs = a;
        c->cap_pgs = cap;
    }
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->c = c;
    e->ns = ns;
    e->name = name;
    e->min = g->min;
    e->done_scheduled = -1;
    c->pgs[c->n_pgs++] = e;
    return e;
}

/* Count the member `uid` as scheduled (once). */
static void cs_pg_add_bound(cs_pg_status_t *e, const char *uid)
{
    const ks_host_api_t *api = e->c->api;
    size_t i;
    uid = api->intern(e->c->h, uid); /* permanent: outlives the pod */
    for (i = 0; i < e->n_bound; i++)
        if (e->bound[i] == uid)
            return;
    if (e->n_bound == e->cap_bound) {
        size_t cap = e->cap_bound ? e->cap_bound * 2 : 8;
        const char **a = realloc((void *)e->bound, cap * sizeof *a);
        if (a == NULL)
            return; /* the count is only reported */
        e->bound = a;
        e->cap_bound = cap;
    }
    e->bound[e->n_bound++] = uid;
}

/* Permit: members already on nodes and not waiting at Permit (bound
 * before this scheduler saw them, or being bound) count as scheduled,
 * so a group whose first members run already reports them all. */
static void cs_pg_seed(cosched_t *c, const cs_group_t *g,
                       const ks_pod_t *self_pod)
{
    cs_pg_status_t *e = cs_pg_get(c, g);
    uint32_t n_nodes = c->api->snapshot_num_nodes(c->h), i, k;
    if (e == NULL)
        return;
    e->min = g->min;
    for (i = 0; i < n_nodes; i++) {
        const ks_node_info_t *ni = c->api->snapshot_node_at(c->h, i);
        for (k = 0; k < ni->n_pods; k++) {
            const ks_pod_t *p = ni->pods[k];
            if (p->uid == self_pod->uid || !cs_in_group(c, p, g) ||
                c->api->waiting_pod_get(c->h, p->uid) != NULL)
                continue;
            cs_pg_add_bound(e, p->uid);
        }
    }
}

static void cs_pg_sync(cs_pg_status_t *e);

/* The answer to a status PATCH (loop thread). */
static void cs_pg_answer(void *ud, const ks_api_response_t *r)
{
    cs_pg_status_t *e = ud;
    cosched_t *c = e->c;
    e->call = NULL;
    if (r->status >= 200 && r->status <= 299) {
        e->done_scheduled = e->sent_scheduled;
        e->done_phase = e->sent_phase;
    } else {
        c->api->log(c->h, KS_LOG_WARN,
                    "PodGroup %s/%s: status (phase %s, scheduled %" PRId64
                    ") not written: %s",
                    e->ns, e->name, e->sent_phase, e->sent_scheduled,
                    r->message[0] ? r->message : "no answer");
    }
    if (e->again) {
        e->again = 0;
        cs_pg_sync(e);
    }
}

/* Write the group's phase and scheduled count, unless the server has them
 * already. One PATCH per group at a time: a member bound while one is out
 * sends the newer count when it answers, so counts never go back. */
static void cs_pg_sync(cs_pg_status_t *e)
{
    cosched_t *c = e->c;
    const ks_host_api_t *api = c->api;
    int64_t n = (int64_t)e->n_bound, have = -1;
    const char *phase = n >= e->min ? PHASE_SCHEDULED : PHASE_SCHEDULING;
    const char *have_phase = NULL;
    const ks_object_t *o;
    char path[640], body[192], start[48] = "";
    ks_api_request_t req;
    if (e->call != NULL) {
        e->again = 1;
        return;
    }
    if (e->want_start) {
        /* RFC 3339 in UTC, as metav1.Time; loop thread only, so gmtime's
         * static buffer is ours. */
        time_t now = time(NULL);
        const struct tm *tm = gmtime(&now);
        if (tm != NULL)
            strftime(start, sizeof start,
                     ",\"scheduleStartTime\":\"%Y-%m-%dT%H:%M:%SZ\"", tm);
        e->want_start = 0;
    } else if (n == e->done_scheduled && phase == e->done_phase) {
        return;
    }
    /* The stored object follows the cluster (a watch in cluster mode): a
     * status someone already wrote is not written again. */
    o = api->object_get(c->podgroups, e->ns, e->name);
    if (start[0] == '\0' && o != NULL &&
        api->object_int(o, "status.scheduled", &have) == KS_FIELD_OK &&
        api->object_string(o, "status.phase", &have_phase) == KS_FIELD_OK &&
        have == n && strcmp(have_phase, phase) == 0) {
        e->done_scheduled = n;
        e->done_phase = phase;
        return;
    }
    if (!cs_plain_name(e->ns) || !cs_plain_name(e->name)) {
        api->log(c->h, KS_LOG_WARN,
                 "PodGroup %s/%s: status not written: not a valid name",
                 e->ns, e->name);
        return;
    }
    snprintf(path, sizeof path,
             "/apis/" PG_GROUP "/" PG_VERSION "/namespaces/%s/" PG_RESOURCE
             "/%s/status",
             e->ns, e->name);
    snprintf(body, sizeof body,
             "{\"status\":{\"phase\":\"%s\",\"scheduled\":%" PRId64
             "%s}}",
             phase, n, start);
    req.method = "PATCH";
    req.path = path;
    req.body = body;
    req.content_type = "application/merge-patch+json";
    e->sent_scheduled = n;
    e->sent_phase = phase;
    if (api->api_request(c->h, &req, cs_pg_answer, e, &e->call) != 0) {
        e->call = NULL;
        api->log(c->h, KS_LOG_WARN,
                 "PodGroup %s/%s: status not written: the host refused the "
                 "request",
                 e->ns, e->name);
    }
}

/* --- create / destroy --------------------------------------------------------- */

/* Read optional positive seconds `key` of args into *secs. */
static int cs_args_seconds(const ks_args_t *args, const char *key,
                           int64_t *secs, char *err, size_t errlen)
{
    const ks_args_t *a = ks_args_get(args, key);
    if (a == NULL)
        return 0;
    if (ks_args_int64(a, key, secs, err, errlen) != 0)
        return -1;
    if (*secs < 1 || *secs > MAX_SECONDS) {
        snprintf(err, errlen,
                 "line %u, column %u: %s must be a positive integer, got %s",
                 a->line, a->column, key, a->scalar);
        return -1;
    }
    return 0;
}

static int cs_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {"permitWaitingTimeSeconds",
                                       "deniedPGExpirationTimeSeconds", NULL};
    int64_t permit_s = DEFAULT_PERMIT_S, denied_s = DEFAULT_DENIED_S;
    cosched_t *c;

    if (ks_args_check_keys(args, keys, err, errlen) != 0 ||
        cs_args_seconds(args, "permitWaitingTimeSeconds", &permit_s, err,
                        errlen) != 0 ||
        cs_args_seconds(args, "deniedPGExpirationTimeSeconds", &denied_s, err,
                        errlen) != 0)
        return -1;
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->api = api;
    c->h = h;
    c->permit_ms = (uint64_t)permit_s * 1000u;
    c->denied_ms = denied_s * 1000;
    c->group_key = api->intern(h, GROUP_LABEL);
    c->min_key = api->intern(h, MIN_ANNOTATION);
    if (KS_API_HAS(api, store_get))
        c->podgroups = api->store_get(h, PG_GROUP, PG_VERSION, PG_RESOURCE);
    c->has_api = KS_API_HAS(api, api_request);
    if (c->podgroups == NULL)
        api->log(h, KS_LOG_INFO,
                 "host ABI 1.%u: PodGroups are not read, groups are sized by "
                 "the annotation " MIN_ANNOTATION,
                 (unsigned)api->abi_minor);
    *self = c;
    return 0;
}

static void cs_destroy(void *self)
{
    cosched_t *c = self;
    size_t i;
    if (c == NULL)
        return;
    /* The host cancelled our PATCHes in flight before this call. */
    for (i = 0; i < c->n_pgs; i++) {
        free((void *)c->pgs[i]->bound);
        free(c->pgs[i]);
    }
    free(c->pgs);
    free(c->members);
    free(c->denied);
    free(c);
}

/* --- PreEnqueue ------------------------------------------------------------------ */

static ks_code_t cs_pre_enqueue(void *self, const ks_pod_t *pod,
                                ks_status_t *st)
{
    cosched_t *c = self;
    cs_group_t g;
    (void)st;
    c->saw_enqueue = 1;
    if (!cs_group_of(c, pod, &g) || cs_is_member(c, &g, pod->uid))
        return KS_SUCCESS;
    if (c->n_members == c->cap_members) {
        size_t cap = c->cap_members ? c->cap_members * 2 : 16;
        cs_member_t *m = realloc(c->members, cap * sizeof *m);
        if (m == NULL) {
            c->api->log(c->h, KS_LOG_WARN,
                        "out of memory: %s/%s not counted in pod group \"%s\"",
                        pod->ns, pod->name, g.name);
            return KS_SUCCESS;
        }
        c->members = m;
        c->cap_members = cap;
    }
    /* View strings are interned already; intern() returns the same
     * pointers, with a lifetime as long as the host's. */
    c->members[c->n_members].ns = c->api->intern(c->h, g.ns);
    c->members[c->n_members].group = c->api->intern(c->h, g.name);
    c->members[c->n_members].uid = c->api->intern(c->h, pod->uid);
    c->n_members++;
    return KS_SUCCESS;
}

/* --- PreFilter --------------------------------------------------------------------- */

/* Marks a cycle whose pod this plugin's PreFilter rejected; PostFilter only
 * tests for its presence, so it is shared and never freed. */
static int cs_rejected_marker;

static ks_code_t cs_reject_prefilter(const cosched_t *c, ks_cycle_state_t *cs)
{
    c->api->cycle_state_write(cs, REJECTED_KEY, &cs_rejected_marker, NULL,
                              NULL);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static ks_code_t cs_pre_filter(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod, ks_prefilter_result_t *res,
                               ks_status_t *st)
{
    cosched_t *c = self;
    const cs_denied_t *d;
    cs_group_t g;
    uint32_t known = 0;
    size_t i;
    (void)res;
    if (!cs_group_of(c, pod, &g))
        return KS_SUCCESS;
    if (cs_group_min(c, pod, &g, st) != 0)
        return cs_reject_prefilter(c, cs);
    d = cs_denied_get(c, &g, c->api->now_ms(c->h));
    if (d != NULL) {
        c->api->status_reason(st, d->message);
        return cs_reject_prefilter(c, cs);
    }
    /* Without PreEnqueue the plugin cannot see pending members; Permit's
     * timeout then catches a group that is too small. */
    if (!c->saw_enqueue)
        return KS_SUCCESS;
    for (i = 0; i < c->n_members; i++)
        if (c->members[i].ns == g.ns && c->members[i].group == g.name)
            known++;
    known += cs_count_on_nodes(c, &g, pod, 1);
    if (!cs_is_member(c, &g, pod->uid))
        known++; /* the pod itself, if PreEnqueue missed it */
    if ((int64_t)known < g.min) {
        if (g.from_pg) /* upstream's words */
            c->api->status_reasonf(st,
                                   "pre-filter pod %s cannot find enough "
                                   "sibling pods, current pods number: %" PRIu32
                                   ", minMember of group: %" PRId64,
                                   pod->name, known, g.min);
        else
            c->api->status_reasonf(st,
                                   "pod group \"%s\" has %" PRIu32
                                   " pods, fewer than min-available %" PRId64,
                                   g.name, known, g.min);
        return cs_reject_prefilter(c, cs);
    }
    return KS_SUCCESS;
}

/* --- PostFilter ---------------------------------------------------------------------- */

static ks_code_t cs_post_filter(void *self, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                const ks_node_status_map_t *statuses,
                                const char **nominated, ks_status_t *st)
{
    cosched_t *c = self;
    cs_group_t g;
    char msg[MSG_LEN];
    uint32_t assigned, released;
    (void)statuses;
    (void)nominated;
    if (!cs_group_of(c, pod, &g) || cs_group_min(c, pod, &g, NULL) != 0)
        return KS_UNSCHEDULABLE;
    /* Rejected by this plugin's own PreFilter: nothing more to say. */
    if (c->api->cycle_state_read(cs, REJECTED_KEY) != NULL)
        return KS_UNSCHEDULABLE;
    assigned = cs_count_on_nodes(c, &g, pod, 0);
    /* Enough members placed, or within 10% of min-available: let the next
     * members try rather than give up on the group. */
    if ((int64_t)assigned >= g.min ||
        (g.min - (int64_t)assigned) * 10 <= g.min)
        return KS_UNSCHEDULABLE;
    if (g.from_pg) /* upstream's words */
        snprintf(msg, sizeof msg,
                 "PodGroup %s/%s gets rejected due to Pod %s is unschedulable "
                 "even after PostFilter",
                 g.ns, g.name, pod->name);
    else
        snprintf(msg, sizeof msg,
                 "pod group \"%s\" failed: member %s/%s is unschedulable",
                 g.name, pod->ns, pod->name);
    cs_denied_add(c, &g, msg);
    released = cs_waiting_apply(c, &g, pod, CS_REJECT, msg);
    if (released > 0)
        c->api->status_reasonf(st,
                               "pod group \"%s\": released %" PRIu32
                               " waiting member(s)",
                               g.name, released);
    return KS_UNSCHEDULABLE;
}

/* --- Reserve / Unreserve -------------------------------------------------------------- */

static ks_code_t cs_reserve(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const char *node,
                            ks_status_t *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)node;
    (void)st;
    return KS_SUCCESS;
}

static void cs_unreserve(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const char *node)
{
    cosched_t *c = self;
    cs_group_t g;
    const cs_wait_t *w;
    char msg[MSG_LEN];
    (void)node;
    if (!cs_group_of(c, pod, &g))
        return;
    w = c->api->cycle_state_read(cs, WAIT_KEY);
    if (w != NULL && c->api->now_ms(c->h) >= w->deadline_ms)
        snprintf(msg, sizeof msg,
                 "pod group \"%s\" failed: member %s/%s waited %" PRIu64
                 "s at Permit and the group did not reach min-available",
                 g.name, pod->ns, pod->name, w->timeout_ms / 1000u);
    else
        snprintf(msg, sizeof msg,
                 "pod group \"%s\" failed: member %s/%s was unreserved",
                 g.name, pod->ns, pod->name);
    cs_denied_add(c, &g, msg);
    cs_waiting_apply(c, &g, pod, CS_REJECT, msg);
}

/* --- Permit ------------------------------------------------------------------------------ */

static void *cs_wait_clone(const void *data)
{
    cs_wait_t *w = malloc(sizeof *w);
    if (w != NULL)
        *w = *(const cs_wait_t *)data;
    return w;
}

static ks_code_t cs_permit(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const char *node,
                           uint64_t *timeout_ms, ks_status_t *st)
{
    cosched_t *c = self;
    cs_group_t g;
    uint32_t ready;
    uint64_t wait_ms;
    cs_wait_t *w;
    (void)node;
    if (!cs_group_of(c, pod, &g))
        return KS_SUCCESS;
    if (cs_group_min(c, pod, &g, st) != 0)
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    if (g.from_pg && cs_writes_status(c))
        cs_pg_seed(c, &g, pod);
    /* Members bound or assumed (the snapshot has both), plus any waiting
     * member the snapshot does not show; the pod itself is the +1. */
    ready = cs_count_on_nodes(c, &g, pod, 0) +
            cs_waiting_apply(c, &g, pod, CS_COUNT, NULL);
    if ((int64_t)ready + 1 >= g.min) {
        cs_waiting_apply(c, &g, pod, CS_ALLOW, NULL);
        return KS_SUCCESS;
    }
    wait_ms = g.timeout_ms ? g.timeout_ms : c->permit_ms;
    w = malloc(sizeof *w);
    if (w != NULL) {
        w->timeout_ms = wait_ms;
        w->deadline_ms = c->api->now_ms(c->h) + (int64_t)wait_ms;
        if (c->api->cycle_state_write(cs, WAIT_KEY, w, cs_wait_clone, free) !=
            0)
            free(w);
    }
    /* The first member to wait starts the group's attempt: its PodGroup
     * gets status.scheduleStartTime. Beyond the record, the write is how
     * members PreFilter turned away (too few pods then) are retried: the
     * SDK has no "activate these pods" (upstream's PodsToActivate, which
     * scheduler-plugins uses here), and a pending pod's arrival is no
     * cluster event, but the PodGroup's update is one, and the hint
     * queues the group's pods. Cluster mode only: a snapshot does not
     * change, and a recorded time would make runs differ. */
    if (g.from_pg && cs_api_mode(c) == KS_API_CLUSTER &&
        cs_waiting_apply(c, &g, pod, CS_WAITING, NULL) == 0) {
        cs_pg_status_t *e = cs_pg_get(c, &g);
        if (e != NULL) {
            e->min = g.min;
            e->want_start = 1;
            cs_pg_sync(e);
        }
    }
    *timeout_ms = wait_ms;
    return KS_WAIT;
}

/* --- PostBind ---------------------------------------------------------------------------- */

/* A member is bound: the group's PodGroup status gets the new count. */
static void cs_post_bind(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         const char *node)
{
    cosched_t *c = self;
    cs_pg_status_t *e;
    cs_group_t g;
    (void)cs;
    (void)node;
    if (!cs_group_of(c, pod, &g) || !cs_writes_status(c) ||
        cs_podgroup(c, &g) == NULL || cs_group_min(c, pod, &g, NULL) != 0)
        return;
    e = cs_pg_get(c, &g);
    if (e == NULL)
        return;
    e->min = g.min;
    cs_pg_add_bound(e, pod->uid);
    cs_pg_sync(e);
}

/* --- EnqueueExtensions ----------------------------------------------------------------------- */

/* A pod added to a node (upstream's AssignedPodAdd: a member bound, or
 * placed by someone else) may complete a group. A pending pod's arrival is
 * no event (as upstream); PreEnqueue sees it, and Permit's PodGroup write
 * retries the members turned away before it came. Deletions do not help:
 * a group rejected for lack of members stays rejected until one comes. */
static uint32_t cs_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_POD;
        out[0].action = KS_ACT_ADD;
    }
    return 1;
}

/* A PodGroup added or updated (its minMember lowered, say) may make its
 * own pods schedulable, no other group's. */
static ks_queueing_hint_t cs_hint_podgroup(void *self, const ks_pod_t *pod,
                                           const void *old_obj,
                                           const void *new_obj)
{
    const cosched_t *c = self;
    const ks_object_t *o = new_obj;
    const char *kind = NULL, *api_version = NULL;
    cs_group_t g;
    (void)old_obj;
    if (o == NULL || !cs_group_of(c, pod, &g) ||
        c->api->object_string(o, "kind", &kind) != KS_FIELD_OK ||
        c->api->object_string(o, "apiVersion", &api_version) != KS_FIELD_OK ||
        strcmp(kind, PG_KIND) != 0 ||
        strncmp(api_version, PG_GROUP "/", sizeof PG_GROUP) != 0)
        return KS_QUEUE_SKIP;
    return strcmp(c->api->object_namespace(o), g.ns) == 0 &&
                   strcmp(c->api->object_name(o), g.name) == 0
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

static uint32_t cs_events_v2(void *self, ks_cluster_event_hint_t *out,
                             uint32_t cap)
{
    static const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_ADD}, NULL},
        {{KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE}, cs_hint_podgroup},
    };
    const cosched_t *c = self;
    /* PodGroup events only on a host that reads them. */
    return ks_event_hints_copy(out, cap, ev, c->podgroups != NULL ? 2 : 1);
}

/* What the plugin reads: scheduler-plugins' PodGroups. */
static const ks_resource_ref_t cs_resources[] = {
    {PG_GROUP, PG_VERSION, PG_RESOURCE, PG_KIND},
};

KS_PLUGIN_DEFINE(PLUGIN_NAME, "0.2.0",
    .create = cs_create,
    .destroy = cs_destroy,
    .pre_enqueue = cs_pre_enqueue,
    .pre_filter = cs_pre_filter,
    .post_filter = cs_post_filter,
    .reserve = cs_reserve,
    .unreserve = cs_unreserve,
    .permit = cs_permit,
    .post_bind = cs_post_bind,
    .events_to_register = cs_events,
    .events_to_register_v2 = cs_events_v2,
    .resources = cs_resources,
    .n_resources = 1);
