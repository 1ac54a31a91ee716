/*
 * Coscheduling: all-or-nothing ("gang") scheduling of a group of pods, as an
 * out-of-tree ksched plugin. Modelled on the coscheduling plugin of
 * kubernetes-sigs/scheduler-plugins, simplified (README.md lists how).
 *
 * A pod belongs to group NAME when it carries the label
 *     scheduling.x-k8s.io/pod-group: NAME
 * and the group needs the number of members given by the annotation
 *     scheduling.x-k8s.io/min-available: "N"
 * on the pod. Groups are scoped to the pod's namespace.
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
 *               allows every waiting member; waits at most
 *               permitWaitingTimeSeconds.
 *
 * Everything runs on the host's loop thread (no Filter or Score here), so
 * the plugin needs no locks.
 *
 * Build: cc -shared -fPIC -fvisibility=hidden \
 *            $(pkg-config --cflags ksched-plugin) coscheduling.c \
 *            -o coscheduling.so
 */
#include <ksched/helpers.h>
#include <ksched/plugin.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "Coscheduling"
#define GROUP_LABEL "scheduling.x-k8s.io/pod-group"
#define MIN_ANNOTATION "scheduling.x-k8s.io/min-available"
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
} cosched_t;

/* The group of one pod: namespace, name (both interned) and min-available. */
typedef struct cs_group {
    const char *ns;
    const char *name;
    int64_t min;
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
    return 1;
}

/* Read min-available from the pod's annotation into g->min. On a missing or
 * bad value return -1, attaching the reason to st when st is not NULL. */
static int cs_group_min(const cosched_t *c, const ks_pod_t *pod, cs_group_t *g,
                        ks_status_t *st)
{
    const char *v = ks_labels_get(&pod->annotations, c->min_key);
    if (v == NULL) {
        if (st != NULL)
            c->api->status_reasonf(st,
                                   "pod group \"%s\": pod has no annotation %s",
                                   g->name, MIN_ANNOTATION);
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

enum { CS_COUNT, CS_ALLOW, CS_REJECT };

typedef struct cs_visit {
    const cosched_t *c;
    const cs_group_t *g;
    const ks_pod_t *pod; /* the pod of the current call; skipped */
    int action;
    const char *message; /* CS_REJECT */
    uint32_t n;          /* CS_COUNT: waiting members not in the snapshot;
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
    *self = c;
    return 0;
}

static void cs_destroy(void *self)
{
    cosched_t *c = self;
    if (c == NULL)
        return;
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
    snprintf(msg, sizeof msg,
             "pod group \"%s\" failed: member %s/%s is unschedulable", g.name,
             pod->ns, pod->name);
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
    cs_wait_t *w;
    (void)node;
    if (!cs_group_of(c, pod, &g))
        return KS_SUCCESS;
    if (cs_group_min(c, pod, &g, st) != 0)
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    /* Members bound or assumed (the snapshot has both), plus any waiting
     * member the snapshot does not show; the pod itself is the +1. */
    ready = cs_count_on_nodes(c, &g, pod, 0) +
            cs_waiting_apply(c, &g, pod, CS_COUNT, NULL);
    if ((int64_t)ready + 1 >= g.min) {
        cs_waiting_apply(c, &g, pod, CS_ALLOW, NULL);
        return KS_SUCCESS;
    }
    w = malloc(sizeof *w);
    if (w != NULL) {
        w->timeout_ms = c->permit_ms;
        w->deadline_ms = c->api->now_ms(c->h) + (int64_t)c->permit_ms;
        if (c->api->cycle_state_write(cs, WAIT_KEY, w, cs_wait_clone, free) !=
            0)
            free(w);
    }
    *timeout_ms = c->permit_ms;
    return KS_WAIT;
}

/* --- EnqueueExtensions ----------------------------------------------------------------------- */

/* A new pod (or a member being bound) may complete a group. Deletions do
 * not: a group rejected for lack of members stays rejected until one is
 * added. */
static uint32_t cs_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    (void)self;
    if (cap >= 1) {
        out[0].resource = KS_RES_POD;
        out[0].action = KS_ACT_ADD;
    }
    return 1;
}

KS_PLUGIN_DEFINE(PLUGIN_NAME, "0.1.0",
    .create = cs_create,
    .destroy = cs_destroy,
    .pre_enqueue = cs_pre_enqueue,
    .pre_filter = cs_pre_filter,
    .post_filter = cs_post_filter,
    .reserve = cs_reserve,
    .unreserve = cs_unreserve,
    .permit = cs_permit,
    .events_to_register = cs_events);
