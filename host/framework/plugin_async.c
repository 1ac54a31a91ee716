/*
 * Plugins' API requests and timers (plugin_async.h): one record each, on
 * one list, until its callback runs or it is cancelled.
 *
 * A timer's record owns a uv_timer_t: it leaves the list when it fires or
 * is stopped, and is freed by the handle's close callback. A request's
 * record leaves the list when the writer answers (then the plugin's
 * callback runs) or it is cancelled (the writer's call is aborted). In
 * KS_API_RECORD mode the request is kept by the writer and answered on
 * the loop's next turn, through the same timer as a plugin's: 200 with the
 * request's body ("{}" when it had none).
 */
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/log.h"
#include "plugin_async.h"

enum { ASYNC_TIMER = 1, ASYNC_CALL, ASYNC_RECORDED };

typedef struct ks_fw_async {
    struct ks_fw_async *prev, *next;
    ks_fw_env_t *env;
    const void *inst;
    int kind;
    uv_timer_t timer;      /* ASYNC_TIMER, ASYNC_RECORDED */
    ks_timer_fn fn;        /* ASYNC_TIMER */
    ks_api_done_fn done;   /* ASYNC_CALL, ASYNC_RECORDED */
    void *ud;
    void *handle;          /* ASYNC_CALL: the writer's */
    char *echo;            /* ASYNC_RECORDED: the answer's body */
    int live;              /* on the list: its callback has not run */
} ks_fw_async_t;

static ks_fw_async_t *g_async;
static uint32_t g_count;

static void link_rec(ks_fw_async_t *a)
{
    a->prev = NULL;
    a->next = g_async;
    if (g_async)
        g_async->prev = a;
    g_async = a;
    a->live = 1;
    g_count++;
}

static void unlink_rec(ks_fw_async_t *a)
{
    if (a->prev)
        a->prev->next = a->next;
    else
        g_async = a->next;
    if (a->next)
        a->next->prev = a->prev;
    a->prev = a->next = NULL;
    a->live = 0;
    g_count--;
}

static void rec_free(ks_fw_async_t *a)
{
    free(a->echo);
    free(a);
}

static void on_closed(uv_handle_t *h)
{
    rec_free(h->data);
}

/* A record with a timer goes once libuv lets go of the handle. */
static void rec_release(ks_fw_async_t *a)
{
    if (a->kind == ASYNC_TIMER || a->kind == ASYNC_RECORDED) {
        uv_timer_stop(&a->timer);
        uv_close((uv_handle_t *)&a->timer, on_closed);
    } else {
        rec_free(a);
    }
}

uint32_t ks_fw_async_count(void)
{
    return g_count;
}

ks_api_mode_t ks_fw_api_mode(ks_fw_env_t *e)
{
    if (e == NULL || e->ops == NULL || e->ops->api_mode == NULL)
        return KS_API_NONE;
    return e->ops->api_mode(e);
}

/* --- timers --------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    ks_fw_async_t *a = t->data;
    unlink_rec(a);
    if (a->kind == ASYNC_TIMER) {
        a->fn(a->ud);
    } else {
        ks_api_response_t r;
        r.status = 200;
        r.body = a->echo;
        r.body_len = strlen(a->echo);
        r.message = "";
        a->done(a->ud, &r);
    }
    rec_release(a);
}

static ks_fw_async_t *timer_rec(ks_fw_env_t *e, const void *inst, int kind,
                                uint64_t ms)
{
    ks_fw_async_t *a;
    if (e == NULL || e->loop == NULL)
        return NULL;
    if ((a = calloc(1, sizeof *a)) == NULL)
        return NULL;
    if (uv_timer_init(e->loop, &a->timer) != 0) {
        free(a);
        return NULL;
    }
    a->timer.data = a;
    a->env = e;
    a->inst = inst;
    a->kind = kind;
    if (uv_timer_start(&a->timer, on_timer, ms, 0) != 0) {
        uv_close((uv_handle_t *)&a->timer, on_closed);
        return NULL;
    }
    link_rec(a);
    return a;
}

ks_timer_t *ks_fw_timer_start(ks_fw_env_t *e, const void *inst, uint64_t ms,
                              ks_timer_fn fn, void *ud)
{
    ks_fw_async_t *a;
    if (fn == NULL || (a = timer_rec(e, inst, ASYNC_TIMER, ms)) == NULL)
        return NULL;
    a->fn = fn;
    a->ud = ud;
    return (ks_timer_t *)a;
}

void ks_fw_timer_stop(ks_timer_t *t)
{
    ks_fw_async_t *a = (ks_fw_async_t *)t;
    if (a == NULL || a->kind != ASYNC_TIMER || !a->live)
        return; /* not a timer, or it has run: a plugin's mistake */
    unlink_rec(a);
    rec_release(a);
}

/* --- requests ------------------------------------------------------------- */

static int method_ok(const char *m)
{
    static const char *const ok[] = {"GET", "POST", "PUT", "PATCH",
                                     "DELETE"};
    size_t i;
    for (i = 0; m && i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(m, ok[i]) == 0)
            return 1;
    return 0;
}

static void on_answer(void *ud, const ks_api_response_t *r)
{
    ks_fw_async_t *a = ud;
    unlink_rec(a);
    a->done(a->ud, r);
    rec_release(a);
}

int ks_fw_api_request(ks_fw_env_t *e, const void *inst, const char *plugin,
                      const ks_api_request_t *req, ks_api_done_fn done,
                      void *ud, ks_api_call_t **out)
{
    ks_api_mode_t mode = ks_fw_api_mode(e);
    ks_fw_async_t *a;
    char err[512];
    if (out)
        *out = NULL;
    if (req == NULL || done == NULL || !method_ok(req->method) ||
        req->path == NULL || req->path[0] != '/') {
        ks_log(KS_LOGL_WARN, "plugin %s: api_request refused: %s", plugin,
               req == NULL || done == NULL ? "no request or callback"
               : !method_ok(req->method)
                   ? "method must be GET, POST, PUT, PATCH or DELETE"
                   : "the path must start with \"/\"");
        return -1;
    }
    if (mode == KS_API_RECORD) {
        const char *body = req->body ? req->body : "{}";
        if ((a = timer_rec(e, inst, ASYNC_RECORDED, 0)) == NULL)
            return -1;
        a->done = done;
        a->ud = ud;
        if ((a->echo = strdup(body)) == NULL ||
            e->ops->api_record(e, plugin, req) != 0) {
            unlink_rec(a);
            rec_release(a);
            return -1;
        }
        if (out)
            *out = (ks_api_call_t *)a;
        return 0;
    }
    if (mode != KS_API_CLUSTER || e->ops->api_send == NULL)
        return -1;
    if ((a = calloc(1, sizeof *a)) == NULL)
        return -1;
    a->env = e;
    a->inst = inst;
    a->kind = ASYNC_CALL;
    a->done = done;
    a->ud = ud;
    err[0] = '\0';
    a->handle = e->ops->api_send(e, req, on_answer, a, err, sizeof err);
    if (a->handle == NULL) {
        ks_log(KS_LOGL_WARN, "plugin %s: %s %s could not start: %s", plugin,
               req->method, req->path, err[0] ? err : "out of memory");
        free(a);
        return -1;
    }
    link_rec(a);
    if (out)
        *out = (ks_api_call_t *)a;
    return 0;
}

static void call_cancel(ks_fw_async_t *a)
{
    unlink_rec(a);
    if (a->kind == ASYNC_CALL && a->env->ops->api_abort)
        a->env->ops->api_abort(a->env, a->handle);
    rec_release(a);
}

void ks_fw_api_cancel(ks_api_call_t *call)
{
    ks_fw_async_t *a = (ks_fw_async_t *)call;
    if (a == NULL || (a->kind != ASYNC_CALL && a->kind != ASYNC_RECORDED) ||
        !a->live)
        return;
    call_cancel(a);
}

void ks_fw_async_cancel(ks_fw_env_t *e, const void *inst)
{
    ks_fw_async_t *a = g_async, *next;
    for (; a; a = next) {
        next = a->next;
        if (inst ? a->inst != inst : a->env != e)
            continue;
        if (a->kind == ASYNC_TIMER) {
            unlink_rec(a);
            rec_release(a);
        } else {
            call_cancel(a);
        }
    }
}
