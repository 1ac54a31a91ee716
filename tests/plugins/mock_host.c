/*
 * The plugin tests' host fixture; see mock_host.h. Everything a plugin
 * reaches through its API table is the host's own code: the table
 * (framework/host_api.c), a framework and env (framework.h), statuses and
 * cycle states, a cache and snapshot (cluster/cache.c, snapshot.c) fed
 * with nodes read back by the host's manifest reader and the test's pods
 * assumed on them, NodeInfo arithmetic (cluster/node_info.c), interning
 * and pluginConfig args (read by the configuration reader). The fixture's
 * own parts are the env's operations, which record what plugins asked,
 * and the builders.
 */
#include "mock_host.h"
#include <ksched/helpers.h>

#include "base/intern.h"
#include "cluster/cache.h"
#include "cluster/node_info.h"
#include "cluster/object_store.h"
#include "cluster/objects.h"
#include "cluster/pod_requests.h"
#include "framework/cycle_state.h"
#include "framework/pool.h"
#include "framework/status.h"
#include "config/config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* --- arena ---------------------------------------------------------------- */

typedef union blk_hdr {
    struct {
        union blk_hdr *prev, *next;
    } l;
    max_align_t align;
} blk_hdr_t;

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static blk_hdr_t *arena_head;

static void oom(void)
{
    fprintf(stderr, "mock_host: out of memory\n");
    abort();
}

static void arena_link(blk_hdr_t *b)
{
    b->l.prev = NULL;
    b->l.next = arena_head;
    if (arena_head)
        arena_head->l.prev = b;
    arena_head = b;
}

static void arena_unlink(blk_hdr_t *b)
{
    if (b->l.prev)
        b->l.prev->l.next = b->l.next;
    else
        arena_head = b->l.next;
    if (b->l.next)
        b->l.next->l.prev = b->l.prev;
}

void *mock_alloc(size_t size)
{
    blk_hdr_t *b = calloc(1, sizeof *b + size);
    if (b == NULL)
        oom();
    pthread_mutex_lock(&arena_lock);
    arena_link(b);
    pthread_mutex_unlock(&arena_lock);
    return b + 1;
}

/* Grow an arena block to `size` bytes (new bytes zeroed up to `old`). */
static void *arena_grow(void *p, size_t old, size_t size)
{
    blk_hdr_t *b;
    if (p == NULL)
        return mock_alloc(size);
    b = (blk_hdr_t *)p - 1;
    pthread_mutex_lock(&arena_lock);
    arena_unlink(b);
    b = realloc(b, sizeof *b + size);
    if (b == NULL)
        oom();
    arena_link(b);
    pthread_mutex_unlock(&arena_lock);
    if (size > old)
        memset((char *)(b + 1) + old, 0, size - old);
    return b + 1;
}

static void arena_free(void *p)
{
    blk_hdr_t *b;
    if (p == NULL)
        return;
    b = (blk_hdr_t *)p - 1;
    pthread_mutex_lock(&arena_lock);
    arena_unlink(b);
    pthread_mutex_unlock(&arena_lock);
    free(b);
}

static void ni_free_all(void);

static void cfg_free_all(void);

void mock_free_all(void)
{
    ni_free_all();
    cfg_free_all();
    pthread_mutex_lock(&arena_lock);
    while (arena_head) {
        blk_hdr_t *b = arena_head;
        arena_head = b->l.next;
        free(b);
    }
    pthread_mutex_unlock(&arena_lock);
}

/* Append one element of `elem` bytes to the arena array *arr of *n. */
static void *arr_push(const void *arr_in, uint32_t *n, size_t elem)
{
    void *arr = arena_grow((void *)arr_in, elem * *n, elem * (*n + 1));
    (*n)++;
    return arr;
}

static char *arena_strdup(const char *s)
{
    size_t len = strlen(s);
    char *d = mock_alloc(len + 1);
    memcpy(d, s, len);
    return d;
}

/* --- interning ------------------------------------------------------------ */

/* The host's global table: the same addresses the real host hands out. */
const char *mock_intern(const char *s)
{
    const char *d;
    if (s == NULL)
        return NULL;
    d = ks_intern_str(ks_intern_global(), s);
    if (d == NULL)
        oom();
    return d;
}

/* --- statuses and cycle states: the host's ------------------------------- */

ks_status_t *mock_status_new(void)
{
    ks_status_t *st = ks_host_api()->status_new(NULL);
    if (st == NULL)
        oom();
    return st;
}

void mock_status_reset(ks_status_t *st)
{
    ks_status_reset(st);
}

void mock_status_free(ks_status_t *st)
{
    if (st != NULL)
        ks_host_api()->status_free(st);
}

ks_code_t mock_status_code(const ks_status_t *st)
{
    return st->code;
}

void mock_status_set_code(ks_status_t *st, ks_code_t code)
{
    st->code = code;
}

uint32_t mock_status_reason_count(const ks_status_t *st)
{
    return st->n_reasons;
}

const char *mock_status_reason_at(const ks_status_t *st, uint32_t i)
{
    return i < st->n_reasons ? ks_status_reason(st, i) : NULL;
}

int mock_status_has(const ks_status_t *st, const char *reason)
{
    unsigned i;
    for (i = 0; i < st->n_reasons; i++)
        if (strcmp(ks_status_reason(st, i), reason) == 0)
            return 1;
    return 0;
}

const char *mock_status_text(const ks_status_t *st)
{
    static _Thread_local char buf[2048];
    size_t off = 0;
    unsigned i;
    buf[0] = '\0';
    for (i = 0; i < st->n_reasons && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                i ? "; " : "", ks_status_reason(st, i));
    return buf;
}

ks_cycle_state_t *mock_cycle_state_new(void)
{
    ks_cycle_state_t *cs = ks_cycle_state_new();
    if (cs == NULL)
        oom();
    return cs;
}

void mock_cycle_state_free(ks_cycle_state_t *cs)
{
    ks_cycle_state_free(cs);
}

uint32_t mock_cycle_state_count(const ks_cycle_state_t *cs)
{
    return ks_cycle_state_count(cs);
}

/* --- prefilter result, status map: the host's structs --------------------- */

ks_prefilter_result_t *mock_prefilter_result_new(void)
{
    ks_prefilter_result_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        oom();
    r->all = 1; /* as ks_fw_run_pre_filter hands it to each plugin */
    return r;
}

void mock_prefilter_result_free(ks_prefilter_result_t *r)
{
    if (r == NULL)
        return;
    ks_prefilter_result_free(r);
    free(r);
}

int mock_prefilter_result_is_set(const ks_prefilter_result_t *r)
{
    return !r->all;
}

int mock_prefilter_result_has(const ks_prefilter_result_t *r,
                              const char *node_name)
{
    uint32_t i;
    for (i = 0; i < r->n; i++)
        if (strcmp(r->names[i], node_name) == 0)
            return 1;
    return 0;
}

/* The host's map plus the codes the test set by name, laid out against a
 * snapshot whenever a fixture syncs (live maps are listed). */
typedef struct mock_status_map {
    struct ks_node_status_map m; /* first: what plugins get */
    const char **names;
    ks_code_t *codes;
    uint32_t n;
    struct mock_status_map *next;
} mock_status_map_t;

static mock_status_map_t *live_maps;
static mock_host_t *live_hosts; /* newest first */

static void map_layout(mock_status_map_t *sm, const ks_snapshot_t *snap)
{
    uint32_t n = snap ? ks_snapshot_num_nodes(snap) : 0, i;
    free(sm->m.st);
    free(sm->m.set);
    sm->m.st = calloc(n ? n : 1, sizeof *sm->m.st);
    sm->m.set = calloc(n ? n : 1, 1);
    if (sm->m.st == NULL || sm->m.set == NULL)
        oom();
    sm->m.n = n;
    sm->m.snap = snap;
    for (i = 0; i < sm->n; i++) {
        uint32_t at = snap ? ks_snapshot_index(snap, sm->names[i]) : UINT32_MAX;
        if (at >= n || sm->codes[i] == KS_SUCCESS)
            continue;
        sm->m.set[at] = 1;
        sm->m.st[at].code = sm->codes[i];
    }
}

ks_node_status_map_t *mock_node_status_map_new(void)
{
    mock_status_map_t *sm = calloc(1, sizeof *sm);
    if (sm == NULL)
        oom();
    sm->next = live_maps;
    live_maps = sm;
    map_layout(sm, live_hosts ? live_hosts->snap : NULL);
    return &sm->m;
}

void mock_node_status_map_set(ks_node_status_map_t *m, const char *node_name,
                              ks_code_t code)
{
    mock_status_map_t *sm = (mock_status_map_t *)m;
    uint32_t i;
    for (i = 0; i < sm->n && strcmp(sm->names[i], node_name) != 0; i++)
        ;
    if (i == sm->n) {
        const char **nn = realloc(sm->names, (sm->n + 1) * sizeof *nn);
        ks_code_t *cc;
        if (nn == NULL)
            oom();
        sm->names = nn;
        cc = realloc(sm->codes, (sm->n + 1) * sizeof *cc);
        if (cc == NULL)
            oom();
        sm->codes = cc;
        sm->names[sm->n++] = mock_intern(node_name);
    }
    sm->codes[i] = code;
    map_layout(sm, live_hosts ? live_hosts->snap : sm->m.snap);
}

void mock_node_status_map_free(ks_node_status_map_t *m)
{
    mock_status_map_t *sm = (mock_status_map_t *)m, **pp;
    if (sm == NULL)
        return;
    for (pp = &live_maps; *pp; pp = &(*pp)->next)
        if (*pp == sm) {
            *pp = sm->next;
            break;
        }
    free(sm->m.st);
    free(sm->m.set);
    free(sm->names);
    free(sm->codes);
    free(sm);
}

/* --- the scheduler's operations: recorders -------------------------------- */

static mock_host_t *env_host(ks_fw_env_t *env)
{
    return env->ud;
}

static int op_bind(ks_fw_env_t *env, const ks_pod_t *pod, const char *node)
{
    mock_host_t *mh = env_host(env);
    mh->n_binds++;
    mh->bound_pod = pod;
    mh->bound_node = mock_intern(node);
    return mh->bind_rc;
}

static int op_delete_pod(ks_fw_env_t *env, const ks_pod_t *pod)
{
    mock_host_t *mh = env_host(env);
    if (mh->n_deleted < MOCK_MAX_ITEMS)
        mh->deleted[mh->n_deleted++] = pod;
    return mh->delete_rc;
}

static int op_set_nominated_node(ks_fw_env_t *env, const ks_pod_t *pod,
                                 const char *node)
{
    mock_host_t *mh = env_host(env);
    mh->n_nominations++;
    mh->nominated_pod = pod;
    mh->nominated_node = mock_intern(node ? node : "");
    return 0;
}

static void op_event(ks_fw_env_t *env, const ks_pod_t *pod, const char *type,
                     const char *reason, const char *message)
{
    mock_host_t *mh = env_host(env);
    (void)pod;
    mh->n_events++;
    snprintf(mh->last_event_type, sizeof mh->last_event_type, "%s", type);
    snprintf(mh->last_event_reason, sizeof mh->last_event_reason, "%s",
             reason);
    snprintf(mh->last_event_message, sizeof mh->last_event_message, "%s",
             message);
}

static ks_waiting_pod_t *op_waiting_pod_get(ks_fw_env_t *env, const char *uid)
{
    mock_host_t *mh = env_host(env);
    uint32_t i;
    for (i = 0; i < mh->n_waiting; i++)
        if (strcmp(mh->waiting[i].pod->uid, uid) == 0)
            return &mh->waiting[i];
    return NULL;
}

static void op_waiting_pods_iterate(ks_fw_env_t *env, ks_waiting_pod_fn fn,
                                    void *ud)
{
    mock_host_t *mh = env_host(env);
    uint32_t i;
    for (i = 0; i < mh->n_waiting; i++)
        fn(&mh->waiting[i], ud);
}

static const ks_pod_t *op_waiting_pod_pod(ks_waiting_pod_t *wp)
{
    return wp->pod;
}

static void op_waiting_pod_allow(ks_waiting_pod_t *wp, const char *plugin)
{
    wp->allowed++;
    snprintf(wp->last_plugin, sizeof wp->last_plugin, "%s", plugin);
}

static void op_waiting_pod_reject(ks_waiting_pod_t *wp, const char *plugin,
                                  const char *message)
{
    wp->rejected++;
    snprintf(wp->last_plugin, sizeof wp->last_plugin, "%s", plugin);
    snprintf(wp->reject_message, sizeof wp->reject_message, "%s", message);
}

static uint32_t op_nominated_pods(ks_fw_env_t *env, const char *node,
                                  const ks_pod_t **out, uint32_t cap)
{
    mock_host_t *mh = env_host(env);
    uint32_t i, n = 0;
    for (i = 0; i < mh->n_nominated; i++)
        if (strcmp(mh->nominated[i].node, node) == 0) {
            if (n < cap)
                out[n] = mh->nominated[i].pod;
            n++;
        }
    return n;
}

static const ks_fw_ops_t fixture_ops = {
    .bind = op_bind,
    .delete_pod = op_delete_pod,
    .set_nominated_node = op_set_nominated_node,
    .event = op_event,
    .waiting_pod_get = op_waiting_pod_get,
    .waiting_pods_iterate = op_waiting_pods_iterate,
    .waiting_pod_pod = op_waiting_pod_pod,
    .waiting_pod_allow = op_waiting_pod_allow,
    .waiting_pod_reject = op_waiting_pod_reject,
    .nominated_pods = op_nominated_pods,
};

static int64_t env_now_ms(ks_fw_env_t *env)
{
    return env_host(env)->now_ms;
}

/* image_num_nodes: the test's stand-in count, else the host's. */
static uint32_t api_image_num_nodes(ks_handle_t *h, const char *image)
{
    mock_host_t *mh = ((struct ks_handle *)h)->fw->env->ud;
    uint32_t i;
    for (i = 0; i < mh->n_image_counts; i++)
        if (strcmp(mh->image_counts[i].name, image) == 0)
            return mh->image_counts[i].count;
    return ks_host_api()->image_num_nodes(h, image);
}

/* --- the cluster's API, timers, PreBind resumes (ABI 1.4) ----------------- */

static mock_host_t *handle_host(ks_handle_t *h)
{
    return ((struct ks_handle *)h)->fw->env->ud;
}

static char *dup_or_null(const char *s)
{
    char *d;
    if (s == NULL)
        return NULL;
    d = strdup(s);
    if (d == NULL)
        oom();
    return d;
}

/* Grow `*arr` (of `size`-byte items) to hold n + 1. */
static void grow_one(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
    void *na;
    uint32_t nc;
    if (n < *cap)
        return;
    nc = *cap ? *cap * 2 : 16;
    na = realloc(*arr, (size_t)nc * size);
    if (na == NULL)
        oom();
    *arr = na;
    *cap = nc;
}

static ks_api_mode_t api_mode(ks_handle_t *h)
{
    return handle_host(h)->api_mode;
}

static int api_request(ks_handle_t *h, const ks_api_request_t *req,
                       ks_api_done_fn done, void *ud, ks_api_call_t **call)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH",
                                          "DELETE"};
    mock_host_t *mh = handle_host(h);
    mock_api_call_t *c;
    size_t i;
    int known = 0;
    if (mh->api_mode == KS_API_NONE || req == NULL || req->method == NULL ||
        req->path == NULL || req->path[0] != '/' || done == NULL)
        return -1;
    for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
        known |= strcmp(req->method, methods[i]) == 0;
    if (!known)
        return -1;
    grow_one((void **)&mh->calls, &mh->cap_calls, mh->n_calls,
             sizeof *mh->calls);
    c = &mh->calls[mh->n_calls];
    memset(c, 0, sizeof *c);
    snprintf(c->method, sizeof c->method, "%s", req->method);
    c->path = dup_or_null(req->path);
    c->body = dup_or_null(req->body);
    c->content_type = dup_or_null(req->content_type);
    c->done = done;
    c->ud = ud;
    c->state = MOCK_CALL_PENDING;
    /* The handle is the call's index + 1 (the array moves as it grows). */
    if (call != NULL)
        *call = (ks_api_call_t *)(uintptr_t)(mh->n_calls + 1);
    mh->n_calls++;
    return 0;
}

static void api_cancel(ks_handle_t *h, ks_api_call_t *call)
{
    mock_host_t *mh = handle_host(h);
    uintptr_t i = (uintptr_t)call;
    if (i == 0 || i > mh->n_calls ||
        mh->calls[i - 1].state != MOCK_CALL_PENDING) {
        fprintf(stderr, "mock host: api_cancel of a call that is not "
                        "pending\n");
        abort();
    }
    mh->calls[i - 1].state = MOCK_CALL_CANCELLED;
}

int mock_api_answer(mock_host_t *mh, uint32_t i, int status, const char *body,
                    const char *message)
{
    ks_api_response_t r;
    char msg[1024];
    mock_api_call_t *c;
    if (i >= mh->n_calls || mh->calls[i].state != MOCK_CALL_PENDING)
        return -1;
    c = &mh->calls[i];
    c->state = MOCK_CALL_ANSWERED;
    if (message == NULL) {
        if (status >= 200 && status < 300)
            msg[0] = '\0';
        else
            snprintf(msg, sizeof msg, "%s %s: failed", c->method, c->path);
        message = msg;
    }
    r.status = status;
    r.body = body ? body : "";
    r.body_len = strlen(r.body);
    r.message = message;
    c->done(c->ud, &r);
    return 0;
}

uint32_t mock_api_run_record(mock_host_t *mh)
{
    uint32_t i, n = 0;
    int again = 1;
    while (again) {
        again = 0;
        for (i = 0; i < mh->n_calls; i++) {
            char *body;
            if (mh->calls[i].state != MOCK_CALL_PENDING)
                continue;
            body = dup_or_null(mh->calls[i].body ? mh->calls[i].body : "{}");
            mock_api_answer(mh, i, 200, body, "");
            free(body);
            n++;
            again = 1;
        }
    }
    return n;
}

uint32_t mock_api_pending(const mock_host_t *mh)
{
    uint32_t i, n = 0;
    for (i = 0; i < mh->n_calls; i++)
        n += mh->calls[i].state == MOCK_CALL_PENDING;
    return n;
}

static ks_timer_t *api_timer_start(ks_handle_t *h, uint64_t ms, ks_timer_fn fn,
                                   void *ud)
{
    mock_host_t *mh = handle_host(h);
    mock_timer_t *t;
    grow_one((void **)&mh->timers, &mh->cap_timers, mh->n_timers,
             sizeof *mh->timers);
    t = &mh->timers[mh->n_timers++];
    t->due_ms = mh->now_ms + (int64_t)ms;
    t->fn = fn;
    t->ud = ud;
    t->live = 1;
    return (ks_timer_t *)(uintptr_t)mh->n_timers; /* index + 1 */
}

static void api_timer_stop(ks_handle_t *h, ks_timer_t *t)
{
    mock_host_t *mh = handle_host(h);
    uintptr_t i = (uintptr_t)t;
    if (i == 0 || i > mh->n_timers || !mh->timers[i - 1].live) {
        fprintf(stderr, "mock host: timer_stop of a timer that is not "
                        "live\n");
        abort();
    }
    mh->timers[i - 1].live = 0;
}

uint32_t mock_clock_advance(mock_host_t *mh, int64_t ms)
{
    int64_t end = mh->now_ms + ms;
    uint32_t ran = 0;
    for (;;) {
        uint32_t i, best = UINT32_MAX;
        for (i = 0; i < mh->n_timers; i++)
            if (mh->timers[i].live && mh->timers[i].due_ms <= end &&
                (best == UINT32_MAX ||
                 mh->timers[i].due_ms < mh->timers[best].due_ms))
                best = i;
        if (best == UINT32_MAX)
            break;
        if (mh->timers[best].due_ms > mh->now_ms)
            mh->now_ms = mh->timers[best].due_ms;
        mh->timers[best].live = 0;
        mh->timers[best].fn(mh->timers[best].ud);
        ran++;
    }
    mh->now_ms = end;
    return ran;
}

uint32_t mock_timers_live(const mock_host_t *mh)
{
    uint32_t i, n = 0;
    for (i = 0; i < mh->n_timers; i++)
        n += mh->timers[i].live != 0;
    return n;
}

static int api_pre_bind_resume(ks_handle_t *h, const char *pod_uid,
                               ks_code_t code, const char *reason)
{
    mock_host_t *mh = handle_host(h);
    mock_resume_t *r;
    const char *uid = mock_intern(pod_uid);
    uint32_t i;
    grow_one((void **)&mh->resumes, &mh->cap_resumes, mh->n_resumes,
             sizeof *mh->resumes);
    r = &mh->resumes[mh->n_resumes++];
    memset(r, 0, sizeof *r);
    r->pod_uid = uid;
    r->code = code;
    snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "");
    r->inside_pre_bind = mh->in_pre_bind;
    r->rc = -1;
    if (mh->in_pre_bind)
        return -1;
    for (i = 0; i < mh->n_waiting_prebind; i++)
        if (mh->waiting_prebind[i] == uid) {
            mh->waiting_prebind[i] =
                mh->waiting_prebind[--mh->n_waiting_prebind];
            r->rc = 0;
            break;
        }
    return r->rc;
}

ks_code_t mock_pre_bind(mock_host_t *mh, const ks_plugin_t *p, void *self,
                        ks_cycle_state_t *cs, const ks_pod_t *pod,
                        const char *node_name, ks_status_t *st)
{
    ks_code_t c;
    mock_status_reset(st);
    mh->in_pre_bind = 1;
    c = p->pre_bind(self, cs, pod, mock_intern(node_name), st);
    mh->in_pre_bind = 0;
    if (c == KS_PENDING) {
        if (mh->n_waiting_prebind == MOCK_MAX_ITEMS)
            abort();
        mh->waiting_prebind[mh->n_waiting_prebind++] = mock_intern(pod->uid);
    }
    return st->code = c;
}

int mock_pre_bind_waiting(const mock_host_t *mh, const ks_pod_t *pod)
{
    const char *uid = mock_intern(pod->uid);
    uint32_t i;
    for (i = 0; i < mh->n_waiting_prebind; i++)
        if (mh->waiting_prebind[i] == uid)
            return 1;
    return 0;
}

/* --- the framework --------------------------------------------------------- */

/* A new instance of `d` in the framework (not created by the framework:
 * ks_framework_free frees it without destroying `self`). */
/* A bulk slot disagreed with its per-node function: the test fails. */
static void mock_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void mock_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mock_host: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* Every instance made by plugin_create, to find a plugin's handle from
 * its `self` (mock_plugin_state). */
static ks_plugin_inst_t **made;
static size_t n_made;

static ks_plugin_inst_t *fw_inst_new(mock_host_t *mh, const ks_plugin_t *d,
                                     const char *name, void *self)
{
    ks_framework_t *fw = mh->fw;
    ks_plugin_inst_t *in = calloc(1, sizeof *in), **insts;
    if (in == NULL)
        oom();
    insts = realloc(fw->insts, (fw->n_insts + 1) * sizeof *insts);
    if (insts == NULL)
        oom();
    fw->insts = insts;
    fw->insts[fw->n_insts++] = in;
    in->d = d;
    in->self = self;
    in->name = mock_intern(name);
    in->every_event = 1;
    in->handle.fw = fw;
    in->handle.inst = in;
    return in;
}

static void fw_point_add(ks_framework_t *fw, ks_ext_point_t ep,
                         ks_plugin_inst_t *in)
{
    ks_point_entry_t *pl = realloc(fw->points[ep],
                                   (fw->n_points[ep] + 1) * sizeof *pl);
    if (pl == NULL)
        oom();
    fw->points[ep] = pl;
    pl[fw->n_points[ep]].inst = in;
    pl[fw->n_points[ep]].weight = 1;
    pl[fw->n_points[ep]].filter_at = -1;
    fw->n_points[ep]++;
    ks_framework_link_points(fw);
}

void mock_host_add_filter(mock_host_t *mh, const ks_plugin_t *p, void *self)
{
    ks_framework_t *fw = mh->fw;
    ks_plugin_inst_t *in = NULL;
    size_t i;
    for (i = 0; i < fw->n_insts; i++)
        if (fw->insts[i]->d == p && fw->insts[i]->self == self)
            in = fw->insts[i];
    if (in == NULL)
        in = fw_inst_new(mh, p, p->name, self);
    if (fw->n_points[KS_EP_FILTER] == KS_FW_MAX_MASKED_PLUGINS)
        abort();
    if (p->filter)
        fw_point_add(fw, KS_EP_FILTER, in);
    if (p->pre_filter)
        fw_point_add(fw, KS_EP_PRE_FILTER, in);
}

/* --- the cache and snapshot ----------------------------------------------- */

/* One node the fixture put in its cache: the YAML it was read from, so a
 * node changed by the test is read again. */
typedef struct sync_node {
    const char *name; /* interned */
    char *yaml;
} sync_node_t;

/* One pod the fixture assumed, with the node name it had before. */
typedef struct sync_pod {
    ks_pod_t *pod;
    const char *node_name;
} sync_pod_t;

struct mock_sync {
    sync_node_t *nodes;
    uint32_t n_nodes;
    sync_pod_t *pods;
    uint32_t n_pods, cap_pods;
};

static void yaml_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void yaml_labels(FILE *f, const ks_labels_t *ls)
{
    uint32_t i;
    fputc('{', f);
    for (i = 0; i < ls->n; i++) {
        fputs(i ? ", " : "", f);
        yaml_str(f, ls->items[i].key);
        fputs(": ", f);
        yaml_str(f, ls->items[i].value);
    }
    fputc('}', f);
}

static const char *effect_name(ks_taint_effect_t e)
{
    switch (e) {
    case KS_EFFECT_NO_SCHEDULE: return "NoSchedule";
    case KS_EFFECT_PREFER_NO_SCHEDULE: return "PreferNoSchedule";
    case KS_EFFECT_NO_EXECUTE: return "NoExecute";
    default: return "";
    }
}

/* The node as a v1.Node manifest (what the host's reader turns back into
 * an equal ks_node_t). malloc'ed. */
static char *node_yaml(const ks_node_t *n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const ks_resources_t *a = &n->allocatable;
    uint32_t i;
    if (f == NULL)
        oom();
    fputs("apiVersion: v1\nkind: Node\nmetadata:\n  name: ", f);
    yaml_str(f, n->name);
    fputs("\n  labels: ", f);
    yaml_labels(f, &n->labels);
    fprintf(f, "\nspec:\n  unschedulable: %s\n  taints:\n",
            n->unschedulable ? "true" : "false");
    for (i = 0; i < n->n_taints; i++) {
        fputs("  - key: ", f);
        yaml_str(f, n->taints[i].key);
        fputs("\n    value: ", f);
        yaml_str(f, n->taints[i].value ? n->taints[i].value : "");
        fprintf(f, "\n    effect: %s\n", effect_name(n->taints[i].effect));
    }
    fprintf(f,
            "status:\n  allocatable:\n    cpu: %lldm\n    memory: \"%lld\"\n"
            "    ephemeral-storage: \"%lld\"\n    pods: \"%lld\"\n",
            (long long)a->milli_cpu, (long long)a->memory,
            (long long)a->ephemeral_storage, (long long)a->allowed_pods);
    for (i = 0; i < a->n_scalar; i++) {
        fputs("    ", f);
        yaml_str(f, a->scalar[i].name);
        fprintf(f, ": \"%lld\"\n", (long long)a->scalar[i].value);
    }
    fputs("  images:\n", f);
    for (i = 0; i < n->n_images; i++) {
        fputs("  - names: [", f);
        yaml_str(f, n->images[i].name);
        fprintf(f, "]\n    sizeBytes: %lld\n",
                (long long)n->images[i].size_bytes);
    }
    if (fclose(f) != 0)
        oom();
    return text;
}

/* Read one manifest text with the host's reader; fails the run when the
 * reader refuses it (the fixture wrote it wrong). */
static void read_manifest(const char *what, const char *yaml,
                          ks_manifest_t *m)
{
    ks_error_t err;
    memset(m, 0, sizeof *m);
    memset(&err, 0, sizeof err);
    if (ks_manifest_load_string(m, what, yaml, strlen(yaml),
                                ks_intern_global(), NULL, &err) != 0) {
        fprintf(stderr, "mock_host: the host refuses the %s:\n%s\n%s\n", what,
                yaml, err.msg);
        abort();
    }
}

static void fail_at(const char *what, const ks_error_t *err)
{
    fprintf(stderr, "mock_host: %s: %s\n", what, err->msg);
    abort();
}

static void sync_forget_pods(mock_host_t *mh)
{
    struct mock_sync *s = mh->sync;
    uint32_t i;
    for (i = 0; i < s->n_pods; i++) {
        ks_pod_t *pod = ks_cache_forget_pod(mh->cache, s->pods[i].pod->uid);
        if (pod != NULL)
            pod->node_name = s->pods[i].node_name;
    }
    s->n_pods = 0;
}

static int node_wanted(const mock_host_t *mh, const char *name)
{
    uint32_t i;
    for (i = 0; i < mh->n_nodes; i++)
        if (mh->nodes[i]->node != NULL && mh->nodes[i]->node->name == name)
            return 1;
    return 0;
}

static void sync_nodes(mock_host_t *mh)
{
    struct mock_sync *s = mh->sync;
    ks_error_t err;
    uint32_t i, j;
    memset(&err, 0, sizeof err);
    /* Nodes no longer listed leave the cache. */
    for (i = 0; i < s->n_nodes;) {
        if (node_wanted(mh, s->nodes[i].name)) {
            i++;
            continue;
        }
        if (ks_cache_remove_node(mh->cache, s->nodes[i].name, &err) != 0)
            fail_at("remove node", &err);
        free(s->nodes[i].yaml);
        s->nodes[i] = s->nodes[--s->n_nodes];
    }
    /* Listed nodes are (re)read when new or changed. */
    for (i = 0; i < mh->n_nodes; i++) {
        const ks_node_t *n = mh->nodes[i]->node;
        char *yaml;
        ks_manifest_t m;
        int rc;
        if (n == NULL)
            continue;
        yaml = node_yaml(n);
        for (j = 0; j < s->n_nodes && s->nodes[j].name != n->name; j++)
            ;
        if (j < s->n_nodes && strcmp(s->nodes[j].yaml, yaml) == 0) {
            free(yaml);
            continue;
        }
        read_manifest("node", yaml, &m);
        if (m.n_nodes != 1)
            abort();
        if (j < s->n_nodes) {
            rc = ks_cache_update_node(mh->cache, m.nodes[0], &err);
            free(s->nodes[j].yaml);
            s->nodes[j].yaml = yaml;
        } else {
            sync_node_t *nn = realloc(s->nodes, (s->n_nodes + 1) * sizeof *nn);
            if (nn == NULL)
                oom();
            s->nodes = nn;
            s->nodes[s->n_nodes].name = n->name;
            s->nodes[s->n_nodes++].yaml = yaml;
            rc = ks_cache_add_node(mh->cache, m.nodes[0], &err);
        }
        if (rc != 0)
            fail_at("add node", &err);
        m.nodes[0] = NULL; /* the cache owns it */
        ks_manifest_free(&m);
    }
}

static void sync_assume_pods(mock_host_t *mh)
{
    struct mock_sync *s = mh->sync;
    ks_error_t err;
    uint32_t i, j;
    memset(&err, 0, sizeof err);
    for (i = 0; i < mh->n_nodes; i++) {
        const ks_node_info_t *ni = mh->nodes[i];
        if (ni->node == NULL)
            continue;
        for (j = 0; j < ni->n_pods; j++) {
            ks_pod_t *pod = (ks_pod_t *)ni->pods[j];
            const char *prev = pod->node_name;
            if (s->n_pods == s->cap_pods) {
                uint32_t cap = s->cap_pods ? s->cap_pods * 2 : 32;
                sync_pod_t *sp = realloc(s->pods, cap * sizeof *sp);
                if (sp == NULL)
                    oom();
                s->pods = sp;
                s->cap_pods = cap;
            }
            if (ks_cache_assume_pod(mh->cache, pod, ni->node->name, &err) != 0)
                fail_at("assume pod", &err);
            s->pods[s->n_pods].pod = pod;
            s->pods[s->n_pods++].node_name = prev;
        }
    }
}

void mock_host_sync(mock_host_t *mh)
{
    ks_error_t err;
    mock_status_map_t *sm;
    memset(&err, 0, sizeof err);
    sync_forget_pods(mh);
    sync_nodes(mh);
    sync_assume_pods(mh);
    if (ks_cache_update_snapshot(mh->cache, mh->snap, &err) != 0)
        fail_at("update snapshot", &err);
    if (mh == live_hosts)
        for (sm = live_maps; sm; sm = sm->next)
            map_layout(sm, mh->snap);
}

/* Sync every live fixture whose snapshot mirrors `ni` (any when NULL). */
static void sync_holders(const ks_node_info_t *ni)
{
    mock_host_t *mh;
    uint32_t i;
    for (mh = live_hosts; mh; mh = mh->next_live)
        for (i = 0; i < mh->n_nodes; i++)
            if (ni == NULL || mh->nodes[i] == ni) {
                mock_host_sync(mh);
                break;
            }
}

/* --- the fixture ---------------------------------------------------------- */

mock_host_t *mock_host_new(void)
{
    mock_host_t *mh = calloc(1, sizeof *mh);
    ks_framework_t *fw;
    if (mh == NULL)
        oom();
    mh->api = *ks_host_api();
    mh->api.image_num_nodes = api_image_num_nodes;
    mh->api.api_mode = api_mode;
    mh->api.api_request = api_request;
    mh->api.api_cancel = api_cancel;
    mh->api.timer_start = api_timer_start;
    mh->api.timer_stop = api_timer_stop;
    mh->api.pre_bind_resume = api_pre_bind_resume;
    mh->cache = ks_cache_new(ks_intern_global());
    mh->snap = ks_snapshot_new();
    mh->sync = calloc(1, sizeof *mh->sync);
    mh->fw = fw = calloc(1, sizeof *fw);
    if (mh->cache == NULL || mh->snap == NULL || mh->sync == NULL ||
        fw == NULL)
        oom();
    fw->profile_name = malloc(sizeof "mock-host");
    if (fw->profile_name == NULL)
        oom();
    memcpy(fw->profile_name, "mock-host", sizeof "mock-host");
    fw->percentage_of_nodes_to_score = -1;
    fw->parallelism = 1;
    mh->env.snapshot = mh->snap;
    mh->env.cache = mh->cache;
    mh->env.ops = &fixture_ops;
    mh->env.now_ms = env_now_ms;
    mh->env.ud = mh;
    ks_framework_set_env(fw, &mh->env);
    ks_host_api_set_ops(&fixture_ops);
    mh->handle = &fw_inst_new(mh, NULL, "mock-host", NULL)->handle;
    mh->nominated_node = mock_intern("");
    mh->next_live = live_hosts;
    live_hosts = mh;
    mock_host_sync(mh);
    return mh;
}

void mock_host_set_parallelism(mock_host_t *mh, int threads)
{
    ks_pool_free(mh->fw->pool);
    mh->fw->pool = NULL;
    mh->fw->parallelism = threads > 1 ? threads : 1;
    if (threads > 1 && (mh->fw->pool = ks_pool_new(threads)) == NULL)
        oom();
}

void mock_host_free(mock_host_t *mh)
{
    mock_host_t **pp;
    uint32_t i;
    if (mh == NULL)
        return;
    for (pp = &live_hosts; *pp; pp = &(*pp)->next_live)
        if (*pp == mh) {
            *pp = mh->next_live;
            break;
        }
    sync_forget_pods(mh);
    /* Forget this framework's instances before it frees them. */
    {
        size_t k, w = 0;
        for (k = 0; k < n_made; k++)
            if (made[k]->handle.fw != mh->fw)
                made[w++] = made[k];
        n_made = w;
        if (n_made == 0) {
            free(made);
            made = NULL;
        }
    }
    ks_framework_free(mh->fw);
    ks_snapshot_free(mh->snap);
    ks_cache_free(mh->cache);
    for (i = 0; i < mh->sync->n_nodes; i++)
        free(mh->sync->nodes[i].yaml);
    free(mh->sync->nodes);
    free(mh->sync->pods);
    free(mh->sync);
    free(mh->nodes);
    for (i = 0; i < mh->n_calls; i++) {
        free(mh->calls[i].path);
        free(mh->calls[i].body);
        free(mh->calls[i].content_type);
    }
    free(mh->calls);
    free(mh->timers);
    free(mh->resumes);
    free(mh);
}

void mock_host_set_nodes(mock_host_t *mh, ks_node_info_t *const *nodes,
                         uint32_t n)
{
    uint32_t i;
    free(mh->nodes);
    mh->nodes = n ? calloc(n, sizeof *mh->nodes) : NULL;
    if (n && mh->nodes == NULL)
        oom();
    for (i = 0; i < n; i++)
        mh->nodes[i] = nodes[i];
    mh->n_nodes = n;
    mock_host_sync(mh);
}

void mock_host_set_image_count(mock_host_t *mh, const char *image,
                               uint32_t count)
{
    uint32_t i;
    for (i = 0; i < mh->n_image_counts; i++)
        if (strcmp(mh->image_counts[i].name, image) == 0) {
            mh->image_counts[i].count = count;
            return;
        }
    if (mh->n_image_counts == MOCK_MAX_ITEMS)
        abort();
    mh->image_counts[mh->n_image_counts].name = mock_intern(image);
    mh->image_counts[mh->n_image_counts++].count = count;
}

void mock_host_set_namespace(mock_host_t *mh, const char *ns,
                             ks_labels_t labels)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ks_manifest_t m;
    if (f == NULL)
        oom();
    fputs("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ", f);
    yaml_str(f, ns);
    fputs("\n  labels: ", f);
    yaml_labels(f, &labels);
    fputc('\n', f);
    if (fclose(f) != 0)
        oom();
    read_manifest("namespace", text, &m);
    free(text);
    if (m.n_namespaces != 1 ||
        ks_cache_add_namespace(mh->cache, m.namespaces[0]) != 0)
        abort();
    m.namespaces[0] = NULL;
    ks_manifest_free(&m);
    mock_host_sync(mh);
}

void mock_host_set_owner_service(mock_host_t *mh, const char *ns,
                                 const ks_label_selector_t *sel)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    ks_manifest_t m;
    uint32_t i;
    (void)ks_cache_remove_service(mh->cache, mock_intern(ns),
                                  mock_intern("owner"));
    if (sel != NULL) {
        if ((f = open_memstream(&text, &len)) == NULL)
            oom();
        fputs("apiVersion: v1\nkind: Service\nmetadata:\n  name: owner\n"
              "  namespace: ", f);
        yaml_str(f, ns);
        fputs("\nspec:\n  selector: {", f);
        for (i = 0; i < sel->n; i++) {
            if (sel->reqs[i].op != KS_OP_IN || sel->reqs[i].n_values != 1) {
                fprintf(stderr, "mock_host_set_owner_service: a Service "
                                "selects by key=value only\n");
                abort();
            }
            fputs(i ? ", " : "", f);
            yaml_str(f, sel->reqs[i].key);
            fputs(": ", f);
            yaml_str(f, sel->reqs[i].values[0]);
        }
        fputs("}\n", f);
        if (fclose(f) != 0)
            oom();
        read_manifest("service", text, &m);
        free(text);
        if (m.n_services != 1 ||
            ks_cache_add_service(mh->cache, m.services[0]) != 0)
            abort();
        m.services[0] = NULL;
        ks_manifest_free(&m);
    }
    mock_host_sync(mh);
}

void mock_host_add_nominated(mock_host_t *mh, const char *node,
                             const ks_pod_t *pod)
{
    if (mh->n_nominated == MOCK_MAX_ITEMS)
        abort();
    mh->nominated[mh->n_nominated].node = mock_intern(node);
    mh->nominated[mh->n_nominated++].pod = pod;
    mh->env.n_nominated = mh->n_nominated;
}

struct ks_waiting_pod *mock_host_add_waiting(mock_host_t *mh,
                                             const ks_pod_t *pod)
{
    struct ks_waiting_pod *wp;
    if (mh->n_waiting == MOCK_MAX_ITEMS)
        abort();
    wp = &mh->waiting[mh->n_waiting++];
    memset(wp, 0, sizeof *wp);
    wp->pod = pod;
    return wp;
}

/* --- plugin loading ------------------------------------------------------- */

const ks_plugin_t *mock_plugin_open(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const ks_plugin_t *p;
    if (dl == NULL) {
        fprintf(stderr, "mock_plugin_open: %s\n", dlerror());
        return NULL;
    }
    p = dlsym(dl, KS_PLUGIN_SYMBOL);
    if (p == NULL) {
        fprintf(stderr, "mock_plugin_open: no %s in %s\n", KS_PLUGIN_SYMBOL,
                path);
        return NULL;
    }
    return p;
}

const char *mock_plugin_path(const char *name)
{
    static _Thread_local char buf[4096];
    const char *dir = getenv("KS_TEST_PLUGIN_DIR");
    char lower[256];
    size_t i;
    for (i = 0; name[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)name[i]);
    lower[i] = '\0';
    snprintf(buf, sizeof buf, "%s/%s/%s.so", dir ? dir : "plugins", name,
             lower);
    return buf;
}

const ks_plugin_t *mock_plugin_load(const char *name)
{
    return mock_plugin_open(mock_plugin_path(name));
}

int mock_last_prescore_skipped;

void *mock_plugin_state(ks_cycle_state_t *cs, const void *self,
                        ks_state_slot_t slot)
{
    size_t i;
    for (i = n_made; i-- > 0;)
        if (made[i]->self == self)
            return ks_host_api()->plugin_state_get(&made[i]->handle, cs,
                                                   slot);
    return NULL;
}

static int plugin_create(mock_host_t *mh, const ks_plugin_t *p,
                         const char *args_yaml,
                         const ks_args_t *(*parse)(const char *), void **self,
                         char *err, size_t errlen)
{
    const ks_args_t *args = NULL;
    ks_plugin_inst_t *in;
    int rc;
    *self = NULL;
    if (errlen)
        err[0] = '\0';
    if (args_yaml != NULL) {
        args = parse(args_yaml);
        if (args == NULL && args_yaml[strspn(args_yaml, " \t\r\n")] != '\0') {
            snprintf(err, errlen, "mock: cannot parse args YAML");
            return -1;
        }
    }
    /* The declared resources' stores, as the host's loader makes them. */
    if (KS_PLUGIN_HAS(p, resources)) {
        uint32_t i;
        for (i = 0; i < p->n_resources; i++) {
            ks_store_t *store;
            ks_error_t e;
            if (ks_store_register(&p->resources[i], &store, &e) != 0) {
                snprintf(err, errlen, "mock: resources[%u]: %s", i, e.msg);
                return -1;
            }
        }
    }
    in = fw_inst_new(mh, p, p->name, NULL);
    rc = p->create(&mh->api, &in->handle, args, self, err, errlen);
    in->self = *self;
    if (rc == 0) {
        ks_plugin_inst_t **m = realloc(made, (n_made + 1) * sizeof *m);
        if (m == NULL)
            oom();
        made = m;
        made[n_made++] = in;
    }
    return rc;
}

/* --- cluster objects (ABI 1.3) ------------------------------------------- */

void mock_object_put(const char *api_version, const char *kind,
                     const char *json)
{
    ks_store_t *s = ks_store_find_kind(api_version, kind);
    ks_error_t e;
    if (s == NULL) {
        fprintf(stderr, "mock_object_put: no store for %s %s (create a "
                        "plugin that declares it first)\n", api_version,
                kind);
        abort();
    }
    if (ks_store_put_text(s, json, strlen(json), "mock", &e) != 0) {
        fprintf(stderr, "mock_object_put: %s\n", e.msg);
        abort();
    }
}

int mock_object_delete(const char *api_version, const char *kind,
                       const char *ns, const char *name)
{
    ks_store_t *s = ks_store_find_kind(api_version, kind);
    return s != NULL && ks_store_delete(s, ns, name) == 0 ? 0 : -1;
}

void mock_objects_clear(void)
{
    ks_store_t *s;
    for (s = ks_store_next(NULL); s != NULL; s = ks_store_next(s))
        ks_store_clear(s);
}

int mock_plugin_create(mock_host_t *mh, const ks_plugin_t *p,
                       const char *args_yaml, void **self, char *err,
                       size_t errlen)
{
    return plugin_create(mh, p, args_yaml, mock_args_parse, self, err, errlen);
}

int mock_plugin_create_raw(mock_host_t *mh, const ks_plugin_t *p,
                           const char *args_yaml, void **self, char *err,
                           size_t errlen)
{
    return plugin_create(mh, p, args_yaml, mock_args_parse_raw, self, err,
                         errlen);
}

/* --- args parsing --------------------------------------------------------- */

static ks_args_t *args_node(yaml_document_t *doc, yaml_node_t *n)
{
    ks_args_t *a = mock_alloc(sizeof *a);
    a->line = (uint32_t)n->start_mark.line + 1;
    a->column = (uint32_t)n->start_mark.column + 1;
    if (n->type == YAML_SCALAR_NODE) {
        a->kind = KS_ARGS_SCALAR;
        a->scalar = arena_strdup((const char *)n->data.scalar.value);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        yaml_node_item_t *it;
        const ks_args_t **ch;
        a->kind = KS_ARGS_SEQ;
        a->n = (uint32_t)(n->data.sequence.items.top -
                          n->data.sequence.items.start);
        ch = mock_alloc((a->n + 1) * sizeof *ch);
        for (it = n->data.sequence.items.start;
             it < n->data.sequence.items.top; it++)
            ch[it - n->data.sequence.items.start] =
                args_node(doc, yaml_document_get_node(doc, *it));
        a->children = ch;
    } else {
        yaml_node_pair_t *pr;
        const ks_args_t **ch;
        const char **keys;
        uint32_t i = 0;
        a->kind = KS_ARGS_MAP;
        a->n = (uint32_t)(n->data.mapping.pairs.top -
                          n->data.mapping.pairs.start);
        ch = mock_alloc((a->n + 1) * sizeof *ch);
        keys = mock_alloc((a->n + 1) * sizeof *keys);
        for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
             pr++, i++) {
            yaml_node_t *k = yaml_document_get_node(doc, pr->key);
            keys[i] = arena_strdup(k->type == YAML_SCALAR_NODE
                                       ? (const char *)k->data.scalar.value
                                       : "");
            ch[i] = args_node(doc, yaml_document_get_node(doc, pr->value));
        }
        a->children = ch;
        a->keys = keys;
    }
    return a;
}

/* Configurations whose args trees were handed out: freed by mock_free_all. */
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static ks_config_t **cfgs;
static size_t n_cfgs, cap_cfgs;

static void cfg_keep(ks_config_t *cfg)
{
    pthread_mutex_lock(&cfg_lock);
    if (n_cfgs == cap_cfgs) {
        size_t ncap = cap_cfgs ? cap_cfgs * 2 : 16;
        ks_config_t **n = realloc(cfgs, ncap * sizeof *n);
        if (n == NULL)
            oom();
        cfgs = n;
        cap_cfgs = ncap;
    }
    cfgs[n_cfgs++] = cfg;
    pthread_mutex_unlock(&cfg_lock);
}

static void cfg_free_all(void)
{
    size_t i;
    pthread_mutex_lock(&cfg_lock);
    for (i = 0; i < n_cfgs; i++)
        ks_config_free(cfgs[i]);
    free(cfgs);
    cfgs = NULL;
    n_cfgs = cap_cfgs = 0;
    pthread_mutex_unlock(&cfg_lock);
}

/* The args a mapping `yaml` becomes when the host reads it as a plugin's
 * pluginConfig args: the text goes, indented, into a configuration read by
 * ks_config_load_string, and the tree ks_profile_plugin_args returns has its
 * positions moved back to `yaml`'s own lines and columns. */
#define ARGS_PLUGIN "MockArgs"
#define ARGS_HEAD                                                              \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                             \
    "kind: KubeSchedulerConfiguration\n"                                       \
    "profiles:\n"                                                              \
    "- schedulerName: default-scheduler\n"                                     \
    "  pluginConfig:\n"                                                        \
    "  - name: " ARGS_PLUGIN "\n"                                              \
    "    args:\n"
#define ARGS_HEAD_LINES 7
#define ARGS_INDENT 6

static void args_shift(ks_args_t *a)
{
    uint32_t i;
    if (a->line > ARGS_HEAD_LINES)
        a->line -= ARGS_HEAD_LINES;
    if (a->column > ARGS_INDENT)
        a->column -= ARGS_INDENT;
    if (a->kind != KS_ARGS_SCALAR)
        for (i = 0; i < a->n; i++)
            args_shift((ks_args_t *)a->children[i]);
}

static const ks_args_t *host_args_parse(const char *yaml)
{
    size_t len = strlen(yaml), lines = 1, i, o;
    char *text;
    ks_config_t *cfg = NULL;
    ks_error_t err;
    const ks_args_t *a;
    for (i = 0; i < len; i++)
        lines += yaml[i] == '\n';
    text = malloc(sizeof ARGS_HEAD + len + lines * ARGS_INDENT + 2);
    if (text == NULL)
        oom();
    o = strlen(ARGS_HEAD);
    memcpy(text, ARGS_HEAD, o);
    for (i = 0; i <= len; i++) {
        if (i == 0 || yaml[i - 1] == '\n') {
            memset(text + o, ' ', ARGS_INDENT);
            o += ARGS_INDENT;
        }
        text[o++] = yaml[i]; /* the '\0' too */
    }
    memset(&err, 0, sizeof err);
    if (ks_config_load_string("args.yaml", text, strlen(text), &cfg, &err) !=
        0) {
        fprintf(stderr, "mock_args_parse: the host refuses these args:\n%s\n",
                err.msg);
        free(text);
        return NULL;
    }
    free(text);
    cfg_keep(cfg);
    a = ks_profile_plugin_args(&cfg->profiles[0], ARGS_PLUGIN);
    if (a != NULL)
        args_shift((ks_args_t *)a);
    return a;
}

static const ks_args_t *args_parse(const char *yaml, int raw)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *root;
    const ks_args_t *a = NULL;
    if (!yaml_parser_initialize(&parser))
        oom();
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml,
                                 strlen(yaml));
    if (!yaml_parser_load(&parser, &doc)) {
        fprintf(stderr, "mock_args_parse: line %zu: %s\n",
                parser.problem_mark.line + 1,
                parser.problem ? parser.problem : "error");
        yaml_parser_delete(&parser);
        return NULL;
    }
    root = yaml_document_get_root_node(&doc);
    /* A mapping is what the host hands a plugin: read it as the host does.
     * Other roots never reach a plugin (the configuration reader refuses
     * them); they are kept as written for the plugins' own checks. */
    if (!raw && root != NULL && root->type == YAML_MAPPING_NODE)
        a = host_args_parse(yaml);
    else if (root != NULL)
        a = args_node(&doc, root);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return a;
}

const ks_args_t *mock_args_parse(const char *yaml)
{
    return args_parse(yaml, 0);
}

const ks_args_t *mock_args_parse_raw(const char *yaml)
{
    return args_parse(yaml, 1);
}

/* --- runners -------------------------------------------------------------- */

ks_code_t mock_prefilter_filter(mock_host_t *mh, const ks_plugin_t *p,
                                void *self, const ks_pod_t *pod,
                                const ks_node_info_t *ni, ks_status_t *st)
{
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_code_t c = KS_SUCCESS;
    if (mh != NULL)
        mock_host_sync(mh);
    mock_status_reset(st);
    if (p->pre_filter) {
        ks_prefilter_result_t *r = mock_prefilter_result_new();
        c = p->pre_filter(self, cs, pod, r, st);
        mock_prefilter_result_free(r);
    }
    /* As the host: PreFilter Skip means the plugin's Filter is not run. */
    if (c == KS_SKIP)
        c = KS_SUCCESS;
    else if (c == KS_SUCCESS) {
        c = p->filter(self, cs, pod, ni, st);
        /* The bulk Filter (ABI 1.2) must pass exactly the same nodes. */
        if (p->filter_nodes != NULL) {
            uint8_t pass = 1;
            ks_status_t *scratch = mock_status_new();
            if (p->filter_nodes(self, cs,
                                mock_plugin_state(cs, self, KS_STATE_FILTER),
                                pod, &ni, 1, &pass, scratch) != KS_SUCCESS)
                mock_fail("%s: filter_nodes failed", p->name);
            if (pass != ks_bulk_verdict(c))
                mock_fail("%s: filter_nodes gives %d on %s, filter says %d",
                          p->name, (int)pass,
                          ni && ni->node ? ni->node->name : "?", (int)c);
            mock_status_free(scratch);
        }
    }
    mock_cycle_state_free(cs);
    return st->code = c;
}

int mock_snapshot_entries(mock_host_t *mh, const ks_node_info_t *const *nodes,
                          uint32_t n, const ks_node_info_t **out)
{
    uint32_t n_snap, i, j;
    const ks_node_info_t *const *snap =
        mh->api.snapshot_nodes(mh->handle, &n_snap);
    for (i = 0; i < n; i++) {
        if (nodes[i]->node == NULL)
            return 0;
        for (j = 0; j < n_snap; j++)
            if (snap[j]->node != NULL &&
                strcmp(snap[j]->node->name, nodes[i]->node->name) == 0)
                break;
        if (j == n_snap)
            return 0;
        if (snap[j]->snapshot_pos != j + 1)
            mock_fail("snapshot entry %u (%s) has snapshot_pos %u", j,
                      snap[j]->node->name, snap[j]->snapshot_pos);
        out[i] = snap[j];
    }
    return 1;
}

static _Thread_local uint32_t bulk_pos[KS_FW_BULK_MAX];

void mock_bulk_columns_enter(mock_host_t *mh,
                             const ks_node_info_t *const *nodes, uint32_t n)
{
    uint32_t i;
    if (n > KS_FW_BULK_MAX)
        mock_fail("mock_bulk_columns_enter: %u nodes, at most %u", n,
                  (unsigned)KS_FW_BULK_MAX);
    for (i = 0; i < n; i++) {
        if (nodes[i]->snapshot_pos == 0)
            mock_fail("mock_bulk_columns_enter: node %u is no snapshot entry",
                      i);
        bulk_pos[i] = nodes[i]->snapshot_pos - 1;
    }
    ks_fw_bulk_ctx_enter(&mh->env, nodes, bulk_pos);
    if (ks_fw_bulk_ctx.cols == NULL)
        mock_fail("mock_bulk_columns_enter: the snapshot has no columns");
}

void mock_bulk_columns_leave(void)
{
    ks_fw_bulk_ctx_leave();
}

/* score_nodes over `nodes` must give want[i] (the per-node Score's). */
static void check_score_nodes(const ks_plugin_t *p, void *self,
                              ks_cycle_state_t *cs, const ks_pod_t *pod,
                              const ks_node_info_t *const *nodes, uint32_t n,
                              const ks_node_score_t *want, const char *what)
{
    int64_t *bulk = calloc(n, sizeof *bulk);
    ks_status_t *scratch = mock_status_new();
    void *state = mock_plugin_state(cs, self, KS_STATE_SCORE);
    uint32_t i;
    if (bulk == NULL)
        oom();
    if (p->score_nodes(self, cs, state, pod, nodes, n, bulk, scratch) !=
        KS_SUCCESS)
        mock_fail("%s: score_nodes failed on %s where score did not",
                  p->name, what);
    for (i = 0; i < n; i++)
        if (bulk[i] != want[i].score)
            mock_fail("%s: score_nodes gives %lld on %s (%s), score %lld",
                      p->name, (long long)bulk[i], nodes[i]->node->name, what,
                      (long long)want[i].score);
    mock_status_free(scratch);
    free(bulk);
}

ks_code_t mock_score_nodes(mock_host_t *mh, const ks_plugin_t *p, void *self,
                           const ks_pod_t *pod, ks_node_info_t *const *nodes,
                           uint32_t n, int64_t *out, ks_status_t *st)
{
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_node_score_t *sc = calloc(n ? n : 1, sizeof *sc);
    ks_code_t c = KS_SUCCESS;
    uint32_t i;
    if (sc == NULL)
        oom();
    if (mh != NULL)
        mock_host_sync(mh);
    mock_status_reset(st);
    mock_last_prescore_skipped = 0;
    if (p->pre_score)
        c = p->pre_score(self, cs, pod,
                         (const ks_node_info_t *const *)nodes, n, st);
    /* Skip: scored anyway, as the host's score_skipped mode (the in-tree
     * plugins keep their state written), and remembered for the test. */
    if (c == KS_SKIP) {
        mock_last_prescore_skipped = 1;
        c = KS_SUCCESS;
    }
    for (i = 0; c == KS_SUCCESS && i < n; i++) {
        sc[i].node_name = nodes[i]->node->name;
        c = p->score(self, cs, pod, nodes[i], &sc[i].score, st);
    }
    /* The bulk Score (ABI 1.2) must give the same raw scores, on the
     * test's NodeInfos and on the snapshot's entries of the same nodes
     * (what the host hands it, with their snapshot_pos). */
    if (c == KS_SUCCESS && p->score_nodes != NULL && n > 0) {
        const ks_node_info_t **entries = calloc(n, sizeof *entries);
        if (entries == NULL)
            oom();
        check_score_nodes(p, self, cs, pod,
                          (const ks_node_info_t *const *)nodes, n, sc,
                          "the test's NodeInfo");
        if (mh != NULL &&
            mock_snapshot_entries(mh, (const ks_node_info_t *const *)nodes,
                                  n, entries))
        {
            check_score_nodes(p, self, cs, pod, entries, n, sc,
                              "the snapshot's entry");
            /* and with the host's columns (ABI 1.7), in the host's
             * largest runs */
            for (i = 0; i < n; i += KS_FW_BULK_MAX) {
                uint32_t k = n - i < KS_FW_BULK_MAX ? n - i : KS_FW_BULK_MAX;
                mock_bulk_columns_enter(mh, entries + i, k);
                check_score_nodes(p, self, cs, pod, entries + i, k, sc + i,
                                  "the snapshot's columns");
                mock_bulk_columns_leave();
            }
        }
        free(entries);
    }
    if (c == KS_SUCCESS && p->normalize_score)
        c = p->normalize_score(self, cs, pod, sc, n, st);
    if (c == KS_SUCCESS)
        for (i = 0; i < n; i++)
            out[i] = sc[i].score;
    free(sc);
    mock_cycle_state_free(cs);
    return st->code = c;
}

/* --- resources ------------------------------------------------------------ */

static void res_set_scalar(ks_resources_t *r, const char *name, int64_t v)
{
    if (ks_resources_set_scalar(r, mock_intern(name), v) != 0)
        abort();
}

void mock_resources_set(ks_resources_t *r, const char *resource, int64_t v)
{
    if (strcmp(resource, "cpu") == 0)
        r->milli_cpu = v;
    else if (strcmp(resource, "memory") == 0)
        r->memory = v;
    else if (strcmp(resource, "ephemeral-storage") == 0)
        r->ephemeral_storage = v;
    else if (strcmp(resource, "pods") == 0)
        r->allowed_pods = v;
    else
        res_set_scalar(r, resource, v);
}


/* --- pods ----------------------------------------------------------------- */

/* The host's formula (cluster/pod_requests.h): a request of 0 is "not
 * named", mock pods have no sidecars, pod-level resources or overhead
 * flags. */
void mock_pod_update(ks_pod_t *pod)
{
    ks_container_req_flags_t *fl = NULL;
    ks_pod_req_flags_t f = {NULL, NULL, 0, 0, 0};
    ks_container_port_t *hp = NULL;
    uint32_t i, j, n = pod->n_containers + pod->n_init_containers, n_hp = 0;

    if (n > 0 && (fl = calloc(n, sizeof *fl)) == NULL)
        abort();
    for (i = 0; i < n; i++) {
        const ks_container_t *c = i < pod->n_containers
                                      ? &pod->containers[i]
                                      : &pod->init_containers[i -
                                                              pod->n_containers];
        fl[i].present = (c->requests.milli_cpu ? KS_REQ_CPU : 0u) |
                        (c->requests.memory ? KS_REQ_MEMORY : 0u);
    }
    f.cfl = fl;
    f.ifl = fl == NULL ? NULL : fl + pod->n_containers;
    ks_pod_requests_derive(pod, &f);
    free(fl);
    for (i = 0; i < pod->n_containers; i++)
        for (j = 0; j < pod->containers[i].n_ports; j++)
            if (pod->containers[i].ports[j].host_port > 0) {
                hp = arr_push(hp, &n_hp, sizeof *hp);
                hp[n_hp - 1] = pod->containers[i].ports[j];
            }
    arena_free((void *)pod->host_ports);
    pod->host_ports = hp;
    pod->n_host_ports = n_hp;
}

ks_pod_t *mock_pod_new(const char *ns, const char *name, int64_t cpu_milli,
                       int64_t mem)
{
    ks_pod_t *pod = mock_alloc(sizeof *pod);
    char uid[512];
    const char *e = mock_intern("");
    snprintf(uid, sizeof uid, "%s/%s", ns, name);
    pod->ns = mock_intern(ns);
    pod->name = mock_intern(name);
    pod->uid = mock_intern(uid);
    pod->scheduler_name = mock_intern("default-scheduler");
    pod->node_name = e;
    pod->nominated_node_name = e;
    pod->priority_class_name = e;
    mock_pod_add_container(pod, 0, "registry.k8s.io/pause:3.7", cpu_milli,
                           mem);
    return pod;
}

uint32_t mock_pod_add_container(ks_pod_t *pod, int init, const char *image,
                                int64_t cpu_milli, int64_t mem)
{
    const ks_container_t **arr =
        init ? &pod->init_containers : &pod->containers;
    uint32_t *n = init ? &pod->n_init_containers : &pod->n_containers;
    ks_container_t *cs = arr_push(*arr, n, sizeof *cs);
    ks_container_t *c = &cs[*n - 1];
    char cname[32];
    snprintf(cname, sizeof cname, "%s%u", init ? "init" : "app", *n - 1);
    memset(c, 0, sizeof *c);
    c->name = mock_intern(*n == 1 && !init ? "app" : cname);
    c->image = mock_intern(image);
    c->requests.milli_cpu = cpu_milli > 0 ? cpu_milli : 0;
    c->requests.memory = mem > 0 ? mem : 0;
    *arr = cs;
    mock_pod_update(pod);
    return *n - 1;
}

void mock_pod_set_request(ks_pod_t *pod, int init, uint32_t ci,
                          const char *resource, int64_t value)
{
    ks_container_t *c = (ks_container_t *)(init ? pod->init_containers
                                                : pod->containers) +
                        ci;
    mock_resources_set(&c->requests, resource, value);
    mock_pod_update(pod);
}

void mock_pod_add_port(ks_pod_t *pod, uint32_t ci, int32_t container_port,
                       int32_t host_port, ks_protocol_t proto,
                       const char *host_ip)
{
    ks_container_t *c = (ks_container_t *)pod->containers + ci;
    ks_container_port_t *ps = arr_push(c->ports, &c->n_ports, sizeof *ps);
    ks_container_port_t *p = &ps[c->n_ports - 1];
    p->container_port = container_port;
    p->host_port = host_port;
    p->protocol = proto;
    p->host_ip = mock_intern(host_ip ? host_ip : "");
    c->ports = ps;
    mock_pod_update(pod);
}

static void labels_set(ks_labels_t *ls, const char *key, const char *value)
{
    ks_label_t *items;
    uint32_t i;
    key = mock_intern(key);
    value = mock_intern(value);
    for (i = 0; i < ls->n; i++)
        if (ls->items[i].key == key) {
            ((ks_label_t *)ls->items)[i].value = value;
            return;
        }
    items = arr_push(ls->items, &ls->n, sizeof *items);
    items[ls->n - 1].key = key;
    items[ls->n - 1].value = value;
    ls->items = items;
}

void mock_pod_add_label(ks_pod_t *pod, const char *key, const char *value)
{
    labels_set(&pod->labels, key, value);
}

void mock_pod_add_annotation(ks_pod_t *pod, const char *key,
                             const char *value)
{
    labels_set(&pod->annotations, key, value);
}

void mock_pod_add_node_selector(ks_pod_t *pod, const char *key,
                                const char *value)
{
    labels_set(&pod->node_selector, key, value);
}

void mock_pod_add_toleration(ks_pod_t *pod, const char *key,
                             ks_toleration_op_t op, const char *value,
                             ks_taint_effect_t effect)
{
    ks_toleration_t *ts =
        arr_push(pod->tolerations, &pod->n_tolerations, sizeof *ts);
    ks_toleration_t *t = &ts[pod->n_tolerations - 1];
    t->key = mock_intern(key ? key : "");
    t->op = op;
    t->value = mock_intern(value ? value : "");
    t->effect = effect;
    pod->tolerations = ts;
}

void mock_pod_add_gate(ks_pod_t *pod, const char *gate)
{
    const char **gs = arr_push(pod->scheduling_gates, &pod->n_scheduling_gates,
                               sizeof *gs);
    gs[pod->n_scheduling_gates - 1] = mock_intern(gate);
    pod->scheduling_gates = gs;
}

void mock_pod_add_volume(ks_pod_t *pod, const char *name,
                         ks_volume_source_t source, const char *claim)
{
    ks_volume_t *vs = arr_push(pod->volumes, &pod->n_volumes, sizeof *vs);
    vs[pod->n_volumes - 1].name = mock_intern(name);
    vs[pod->n_volumes - 1].source = source;
    vs[pod->n_volumes - 1].claim_name = mock_intern(claim ? claim : "");
    pod->volumes = vs;
    if (pod->volume_inline != NULL) /* stays parallel: a KS_INLINE_NONE */
        pod->volume_inline = arena_grow(
            (void *)pod->volume_inline,
            (pod->n_volumes - 1) * sizeof(ks_volume_inline_t),
            pod->n_volumes * sizeof(ks_volume_inline_t));
}

void mock_pod_add_inline_volume(ks_pod_t *pod, const char *name,
                                const ks_volume_inline_t *src)
{
    ks_volume_inline_t *vi;
    const char **mons = NULL;
    uint32_t i;
    mock_pod_add_volume(pod, name, KS_VOLUME_OTHER, NULL);
    if (pod->volume_inline == NULL)
        pod->volume_inline =
            mock_alloc(pod->n_volumes * sizeof(ks_volume_inline_t));
    vi = (ks_volume_inline_t *)&pod->volume_inline[pod->n_volumes - 1];
    *vi = *src;
    vi->id = mock_intern(src->id ? src->id : "");
    vi->disk_uri = mock_intern(src->disk_uri);
    vi->pool = mock_intern(src->pool);
    if (src->n_monitors > 0) {
        mons = mock_alloc(src->n_monitors * sizeof *mons);
        for (i = 0; i < src->n_monitors; i++)
            mons[i] = mock_intern(src->monitors[i]);
    }
    vi->monitors = mons;
}

void mock_pod_add_spread(ks_pod_t *pod,
                         const ks_topology_spread_constraint_t *c)
{
    ks_topology_spread_constraint_t *cs = arr_push(
        pod->spread_constraints, &pod->n_spread_constraints, sizeof *cs);
    cs[pod->n_spread_constraints - 1] = *c;
    cs[pod->n_spread_constraints - 1].topology_key =
        mock_intern(c->topology_key);
    pod->spread_constraints = cs;
}

void mock_pod_set_node_affinity(ks_pod_t *pod, const ks_node_affinity_t *na)
{
    pod->affinity.node_affinity = na;
}

void mock_pod_add_affinity_term(ks_pod_t *pod, int anti, int32_t weight,
                                const ks_label_selector_t *sel,
                                const char *topology_key,
                                const char *namespaces_csv,
                                const ks_label_selector_t *ns_sel)
{
    const ks_pod_affinity_t **slot = anti ? &pod->affinity.pod_anti_affinity
                                          : &pod->affinity.pod_affinity;
    ks_pod_affinity_t *pa = (ks_pod_affinity_t *)*slot;
    ks_pod_affinity_term_t term;
    ks_requirement_t nsr = mock_req("", KS_OP_IN,
                                    namespaces_csv ? namespaces_csv : "");
    if (pa == NULL) {
        pa = mock_alloc(sizeof *pa);
        *slot = pa;
    }
    memset(&term, 0, sizeof term);
    term.label_selector = sel;
    term.namespaces = nsr.values;
    term.n_namespaces = nsr.n_values;
    term.namespace_selector = ns_sel;
    term.topology_key = mock_intern(topology_key);
    if (weight == 0) {
        ks_pod_affinity_term_t *ts =
            arr_push(pa->required, &pa->n_required, sizeof *ts);
        ts[pa->n_required - 1] = term;
        pa->required = ts;
    } else {
        ks_weighted_pod_affinity_term_t *ts =
            arr_push(pa->preferred, &pa->n_preferred, sizeof *ts);
        ts[pa->n_preferred - 1].weight = weight;
        ts[pa->n_preferred - 1].term = term;
        pa->preferred = ts;
    }
}

void mock_pod_set_node(ks_pod_t *pod, const char *node_name)
{
    pod->node_name = mock_intern(node_name);
}

/* --- selectors ------------------------------------------------------------ */

ks_requirement_t mock_req(const char *key, ks_selector_op_t op,
                          const char *values_csv)
{
    ks_requirement_t r;
    const char **vals = NULL;
    const char *p = values_csv;
    memset(&r, 0, sizeof r);
    r.key = mock_intern(key);
    r.op = op;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[256];
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        vals = arr_push(vals, &r.n_values, sizeof *vals);
        vals[r.n_values - 1] = mock_intern(buf);
        p = comma ? comma + 1 : NULL;
    }
    r.values = vals;
    return r;
}

ks_label_selector_t *mock_selector_new(const ks_requirement_t *reqs,
                                       uint32_t n)
{
    ks_label_selector_t *s = mock_alloc(sizeof *s);
    ks_requirement_t *rs = mock_alloc((n + 1) * sizeof *rs);
    if (n)
        memcpy(rs, reqs, n * sizeof *rs);
    s->reqs = rs;
    s->n = n;
    return s;
}

ks_node_selector_term_t mock_term(const ks_requirement_t *exprs, uint32_t ne,
                                  const ks_requirement_t *fields, uint32_t nf)
{
    ks_node_selector_term_t t;
    ks_requirement_t *e = mock_alloc((ne + 1) * sizeof *e);
    ks_requirement_t *f = mock_alloc((nf + 1) * sizeof *f);
    if (ne)
        memcpy(e, exprs, ne * sizeof *e);
    if (nf)
        memcpy(f, fields, nf * sizeof *f);
    t.match_expressions = e;
    t.n_match_expressions = ne;
    t.match_fields = f;
    t.n_match_fields = nf;
    return t;
}

ks_node_selector_t *mock_node_selector_new(const ks_node_selector_term_t *terms,
                                           uint32_t n)
{
    ks_node_selector_t *s = mock_alloc(sizeof *s);
    ks_node_selector_term_t *ts = mock_alloc((n + 1) * sizeof *ts);
    if (n)
        memcpy(ts, terms, n * sizeof *ts);
    s->terms = ts;
    s->n_terms = n;
    return s;
}

ks_node_affinity_t *mock_node_affinity_new(
    const ks_node_selector_t *required,
    const ks_preferred_scheduling_term_t *preferred, uint32_t n_preferred)
{
    ks_node_affinity_t *na = mock_alloc(sizeof *na);
    ks_preferred_scheduling_term_t *ps =
        mock_alloc((n_preferred + 1) * sizeof *ps);
    if (n_preferred)
        memcpy(ps, preferred, n_preferred * sizeof *ps);
    na->required = required;
    na->preferred = ps;
    na->n_preferred = n_preferred;
    return na;
}

ks_labels_t mock_labels(const char *csv)
{
    ks_labels_t ls = {NULL, 0};
    const char *p = csv;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[512], *eq;
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        eq = strchr(buf, '=');
        if (eq) {
            *eq = '\0';
            labels_set(&ls, buf, eq + 1);
        } else {
            labels_set(&ls, buf, "");
        }
        p = comma ? comma + 1 : NULL;
    }
    return ls;
}

/* --- nodes and NodeInfo ---------------------------------------------------- */

ks_node_t *mock_node_new(const char *name, int64_t cpu_milli, int64_t mem,
                         int64_t pods)
{
    ks_node_t *n = mock_alloc(sizeof *n);
    n->name = mock_intern(name);
    n->allocatable.milli_cpu = cpu_milli;
    n->allocatable.memory = mem;
    n->allocatable.allowed_pods = pods;
    return n;
}

void mock_node_add_label(ks_node_t *node, const char *key, const char *value)
{
    labels_set(&node->labels, key, value);
    sync_holders(NULL);
}

void mock_node_add_taint(ks_node_t *node, const char *key, const char *value,
                         ks_taint_effect_t effect)
{
    ks_taint_t *ts = arr_push(node->taints, &node->n_taints, sizeof *ts);
    ts[node->n_taints - 1].key = mock_intern(key);
    ts[node->n_taints - 1].value = mock_intern(value ? value : "");
    ts[node->n_taints - 1].effect = effect;
    node->taints = ts;
    sync_holders(NULL);
}

void mock_node_add_image(ks_node_t *node, const char *name,
                         int64_t size_bytes)
{
    ks_node_image_t *is = arr_push(node->images, &node->n_images, sizeof *is);
    is[node->n_images - 1].name = mock_intern(name);
    is[node->n_images - 1].size_bytes = size_bytes;
    node->images = is;
    sync_holders(NULL);
}

/* NodeInfos made by the builders: the host's own (ks_ni_t, cluster/
 * node_info.c), freed by mock_free_all. */
static pthread_mutex_t ni_lock = PTHREAD_MUTEX_INITIALIZER;
static ks_node_info_t **ni_made;
static size_t ni_n, ni_cap;

static ks_node_info_t *ni_keep(ks_node_info_t *ni)
{
    if (ni == NULL)
        oom();
    pthread_mutex_lock(&ni_lock);
    if (ni_n == ni_cap) {
        size_t ncap = ni_cap ? ni_cap * 2 : 64;
        ks_node_info_t **nm = realloc(ni_made, ncap * sizeof *nm);
        if (nm == NULL)
            oom();
        ni_made = nm;
        ni_cap = ncap;
    }
    ni_made[ni_n++] = ni;
    pthread_mutex_unlock(&ni_lock);
    return ni;
}

static void ni_free_all(void)
{
    size_t i;
    pthread_mutex_lock(&ni_lock);
    for (i = 0; i < ni_n; i++)
        ks_node_info_free(ni_made[i]);
    free(ni_made);
    ni_made = NULL;
    ni_n = ni_cap = 0;
    pthread_mutex_unlock(&ni_lock);
}

ks_node_info_t *mock_nodeinfo_new(const ks_node_t *node)
{
    ks_ni_t *ni = malloc(sizeof *ni);
    if (ni == NULL)
        oom();
    ks_ni_init(ni, 0);
    ni->pub.node = node;
    ni->pub.generation = ks_generation_next();
    return ni_keep(&ni->pub);
}

void mock_nodeinfo_add_pod(ks_node_info_t *ni, const ks_pod_t *pod)
{
    ks_node_info_add_pod(ni, pod);
    sync_holders(ni);
}

void mock_nodeinfo_remove_pod(ks_node_info_t *ni, const ks_pod_t *pod)
{
    (void)ks_node_info_remove_pod(ni, pod); /* a pod not there: no change */
    sync_holders(ni);
}

ks_node_info_t *mock_nodeinfo_clone(const ks_node_info_t *ni)
{
    return ni_keep(ks_node_info_clone(ni));
}
