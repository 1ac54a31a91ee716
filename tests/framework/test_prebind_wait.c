/*
 * SDK ABI 1.4 through the scheduler, with the fixture ApiProbe (a PreBind
 * that PATCHes its pod and returns KS_PENDING, see
 * tests/fixtures/plugins/apiprobe.c):
 *  - `ksched schedule`'s mode (a batch run, KS_API_RECORD): the request is
 *    recorded with its exact method, path, content type and body, answered
 *    on the batch loop, and the pod is bound once the plugin resumes; a
 *    resume with a failure requeues the pod with upstream's PreBind error;
 *  - a loop attached and KS_API_CLUSTER (a writer that answers on the
 *    loop): the pod binds after the answer and the plugin's timer; an
 *    error answer fails the pod with its message; a pod deleted while it
 *    waits is unreserved (the plugin's event) and dropped, and the late
 *    resume is refused; a scheduler freed with a pod waiting cancels the
 *    plugin's timers and requests (nothing left running);
 *  - no writer (KS_API_NONE): api_request is refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/intern.h"
#include "framework/generation.h"
#include "framework/plugin_async.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define POD_DOC(name, label)                                                   \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                  \
    ", namespace: default, labels: {" label "}}\n"                            \
    "spec: {containers: [{name: c, image: x}]}\n"

#define CLUSTER                                                                \
    TL_NODE_DOC("n1") TL_NODE_DOC("n2") POD_DOC("p1", "")                     \
    POD_DOC("p2", "api-probe: fail") POD_DOC("p3", "api-probe: hold")         \
    POD_DOC("p4", "")

#define PLUGINS                                                                \
    "    reserve:\n      enabled:\n      - name: ApiProbe\n"                   \
    "    preBind:\n      enabled:\n      - name: ApiProbe\n" BIND_DEFAULT

static tl_world_t W;
static ks_generation_t *G;
static ks_scheduler_t *S;
static uv_loop_t loop;
static int loop_on;
static char failures[4096];
static char bound[256];
static char events[1024];
static char recorded[4096];
static int n_sent, n_aborted;

static void on_failed(void *ud, const ks_pod_t *pod, const char *msg)
{
    char key[300];
    (void)ud;
    /* The first failure of each pod (an Error is retried after backoff). */
    snprintf(key, sizeof key, "%s: ", pod->name);
    if (strstr(failures, key) == NULL)
        tl_appendf(failures, sizeof failures, "%s: %s;", pod->name, msg);
}

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    (void)ud;
    tl_appendf(bound, sizeof bound, "%s->%s;", pod->name, node);
}

static void on_event(void *ud, const ks_pod_t *pod, const char *type,
                     const char *reason, const char *message)
{
    (void)ud;
    (void)message;
    tl_appendf(events, sizeof events, "%s %s %s;", pod->name, type, reason);
}

static int on_record(void *ud, const char *plugin, const ks_api_request_t *r)
{
    (void)ud;
    tl_appendf(recorded, sizeof recorded, "%s %s %s %s %s\n", plugin,
               r->method, r->path, r->content_type, r->body);
    return 0;
}

/* KS_API_CLUSTER's writer: answers on the loop after 1 ms, 404 for pod
 * p4's path, 200 otherwise. */
typedef struct fake_call {
    uv_timer_t t;
    ks_api_done_fn done;
    void *ud;
    int status;
} fake_call_t;

static void fake_closed(uv_handle_t *h)
{
    free(h->data);
}

static void fake_answer(uv_timer_t *t)
{
    fake_call_t *c = t->data;
    ks_api_response_t r;
    r.status = c->status;
    r.body = "{}";
    r.body_len = 2;
    r.message = c->status == 200 ? "" : "pods \"p4\" not found";
    c->done(c->ud, &r);
    uv_close((uv_handle_t *)&c->t, fake_closed);
}

static void *fake_send(void *ud, const ks_api_request_t *req,
                       ks_api_done_fn done, void *dud, char *err,
                       size_t errlen)
{
    fake_call_t *c = calloc(1, sizeof *c);
    (void)ud;
    (void)err;
    (void)errlen;
    ck_assert_ptr_nonnull(c);
    c->done = done;
    c->ud = dud;
    c->status = strstr(req->path, "/pods/p4") ? 404 : 200;
    uv_timer_init(&loop, &c->t);
    c->t.data = c;
    uv_timer_start(&c->t, fake_answer, 1, 0);
    n_sent++;
    return c;
}

static void fake_abort(void *ud, void *handle)
{
    fake_call_t *c = handle;
    (void)ud;
    n_aborted++;
    uv_timer_stop(&c->t);
    uv_close((uv_handle_t *)&c->t, fake_closed);
}

static void start(ks_api_mode_t mode, int attach)
{
    char *yaml = tl_sort_only_yaml(PLUGINS, "", "");
    ks_sched_opts_t so;
    G = tl_generation(yaml);
    free(yaml);
    tl_world_init(&W, CLUSTER);
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.failed = on_failed;
    so.obs.bound = on_bound;
    so.writer.event = on_event;
    so.writer.api_mode = mode;
    so.writer.api_record = on_record;
    so.writer.api_send = fake_send;
    so.writer.api_abort = fake_abort;
    failures[0] = bound[0] = events[0] = recorded[0] = '\0';
    n_sent = n_aborted = 0;
    S = ks_scheduler_new(G, W.cache, &so);
    ck_assert_ptr_nonnull(S);
    if (attach) {
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        loop_on = 1;
        ck_assert_int_eq(ks_scheduler_attach_loop(S, &loop), 0);
    }
}

static void add(const char *name)
{
    ck_assert_int_eq(ks_scheduler_add_pod(S, tl_world_take_pod(&W, name)), 0);
}

/* Run the loop until `cond` holds (at most ~2 s of real time). */
static int run_until(int (*cond)(void))
{
    int i;
    for (i = 0; i < 2000 && !cond(); i++)
        uv_run(&loop, UV_RUN_NOWAIT), uv_sleep(1);
    return cond();
}

static void teardown(void)
{
    if (loop_on) {
        /* The scheduler's handles close before it is freed. */
        ks_scheduler_detach_loop(S);
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    ks_scheduler_free(S);
    S = NULL;
    ks_generation_unref(G);
    G = NULL;
    if (loop_on) {
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        loop_on = 0;
    }
    tl_world_free(&W);
    ck_assert_uint_eq(ks_fw_async_count(), 0);
}

/* `ksched schedule`: recorded, answered, resumed, bound; the failing pod
 * requeued with the PreBind error. */
START_TEST(test_record_mode_batch)
{
    start(KS_API_RECORD, 0);
    add("p1");
    add("p2");
    ks_scheduler_run_batch(S);
    ck_assert_str_eq(bound, "p1->n1;");
    ck_assert_ptr_nonnull(strstr(
        recorded, "ApiProbe PATCH /api/v1/namespaces/default/pods/p1 "
                  "application/merge-patch+json "
                  "{\"metadata\":{\"annotations\":{\"api-probe/node\":"
                  "\"n1\"}}}\n"));
    ck_assert_ptr_nonnull(
        strstr(recorded, "ApiProbe PATCH /api/v1/namespaces/default/pods/p2 "));
    ck_assert_str_eq(failures, "p2: running PreBind plugin \"ApiProbe\": "
                               "api-probe: asked to fail;");
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED) +
                          ks_scheduler_pending(S, KS_Q_BACKOFF),
                      1);
    teardown();
}
END_TEST

static int p1_bound(void)
{
    return strstr(bound, "p1->") != NULL;
}

static int p4_failed(void)
{
    return strstr(failures, "p4:") != NULL;
}

static int p3_sent(void)
{
    return n_sent >= 1 && ks_fw_async_count() == 0;
}

static int p3_unreserved(void)
{
    return strstr(events, "ApiProbeUnreserved") != NULL;
}

/* A loop attached, the cluster's API: bound after the answer and the
 * plugin's timer; while waiting, nothing of the pod is bound and other
 * pods go on. */
START_TEST(test_cluster_mode_binds_after_answer)
{
    start(KS_API_CLUSTER, 1);
    add("p1");
    ck_assert(!p1_bound()); /* nothing ran yet: the loop has not turned */
    ck_assert(run_until(p1_bound));
    ck_assert_str_eq(bound, "p1->n1;");
    ck_assert_int_eq(n_sent, 1);
    ck_assert_str_eq(failures, "");
    teardown();
}
END_TEST

/* An error answer: the plugin resumes with Error and the message. */
START_TEST(test_cluster_mode_error_answer)
{
    start(KS_API_CLUSTER, 1);
    add("p4");
    ck_assert(run_until(p4_failed));
    ck_assert_str_eq(failures, "p4: running PreBind plugin \"ApiProbe\": "
                               "api-probe: 404 pods \"p4\" not found;");
    ck_assert_str_eq(bound, "");
    teardown();
}
END_TEST

/* Deleted while waiting: Unreserve (the plugin's event), dropped; a late
 * resume refused (the plugin logs an error otherwise; its event comes
 * after the refusal); nothing requeued or bound. */
START_TEST(test_cluster_mode_deleted_while_waiting)
{
    const char *uid;
    start(KS_API_CLUSTER, 1);
    uid = tl_world_pod(&W, "p3")->uid;
    add("p3");
    add("p1");
    ck_assert(run_until(p1_bound));
    ck_assert(run_until(p3_sent));
    ck_assert_str_eq(bound, "p1->n1;"); /* p3 holds, p1 went past it */
    ck_assert_str_eq(events, "");
    ck_assert_int_eq(ks_scheduler_remove_pod(S, uid), 0);
    ck_assert(run_until(p3_unreserved));
    ck_assert_str_eq(events, "p3 Normal ApiProbeUnreserved;");
    ck_assert_str_eq(failures, "");
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_ACTIVE) +
                          ks_scheduler_pending(S, KS_Q_BACKOFF) +
                          ks_scheduler_pending(S, KS_Q_UNSCHED),
                      0);
    teardown();
}
END_TEST

/* Freed with a request in flight: the writer's call is aborted, the
 * plugin's callback never runs (teardown checks nothing is left). */
START_TEST(test_free_cancels_requests)
{
    start(KS_API_CLUSTER, 1);
    add("p3");
    uv_run(&loop, UV_RUN_NOWAIT); /* the cycle starts the request */
    ck_assert_int_eq(n_sent, 1);
    ck_assert_uint_eq(ks_fw_async_count(), 1);
    teardown();
    ck_assert_int_eq(n_aborted, 1);
}
END_TEST

/* No writer: api_request refused, PreBind fails at once. */
START_TEST(test_no_writer_refuses)
{
    start(KS_API_NONE, 0);
    add("p1");
    ks_scheduler_run_batch(S);
    ck_assert_str_eq(bound, "");
    ck_assert_str_eq(failures, "p1: running PreBind plugin \"ApiProbe\": "
                               "api_request refused (api_mode 0);");
    teardown();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prebind-wait");
    TCase *tc = tcase_create("abi14");
    tcase_add_test(tc, test_record_mode_batch);
    tcase_add_test(tc, test_cluster_mode_binds_after_answer);
    tcase_add_test(tc, test_cluster_mode_error_answer);
    tcase_add_test(tc, test_cluster_mode_deleted_while_waiting);
    tcase_add_test(tc, test_free_cancels_requests);
    tcase_add_test(tc, test_no_writer_refuses);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
