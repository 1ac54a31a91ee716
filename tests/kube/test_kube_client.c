/*
 * The API client's call bookkeeping, against an address nobody answers
 * on: delayed calls (a retry's backoff), cancelling every call of one
 * owner (on_cancel runs, on_done never), and close handing owned calls
 * back through on_cancel; and the event recorder's bound on the writes
 * that wait for an API server slower than the scheduler.
 */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uv.h>

#include "kube/client.h"
#include "kube/events.h"
#include "kube/kubeconfig.h"

static int n_done, n_cancel, n_closed;
static long last_status;
static char last_msg[1024];

static void on_done(void *ud, const ks_kube_result_t *r)
{
    n_done++;
    last_status = r->status;
    snprintf(last_msg, sizeof last_msg, "%s", r->message);
    free(ud);
}

static void on_cancel(void *ud)
{
    n_cancel++;
    free(ud); /* what the owner frees; a leak shows under the sanitizers */
}

static void on_closed(void *ud)
{
    (void)ud;
    n_closed++;
}

static char dir[256], cfg[300];
static uv_loop_t loop;
static ks_kube_conn_t *conn;
static ks_kube_client_t *client;

/* A TCP port on 127.0.0.1 that was free a moment ago (nothing listens). */
static int closed_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    ck_assert_int_ge(fd, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    ks_error_t err = {0};
    FILE *f;
    snprintf(dir, sizeof dir, "%s/ks-kube-client-XXXXXX",
             base && base[0] ? base : "/tmp");
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    snprintf(cfg, sizeof cfg, "%s/config", dir);
    f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
            "    server: http://127.0.0.1:%d\ncontexts:\n- name: x\n"
            "  context: {cluster: c, user: u}\ncurrent-context: x\n"
            "users:\n- name: u\n  user: {}\n",
            closed_port());
    fclose(f);
    unsetenv("KUBECONFIG");
    ck_assert_msg(ks_kubeconfig_load(cfg, NULL, &conn, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    client = ks_kube_client_new(&loop, conn, NULL, &err);
    ck_assert_msg(client != NULL, "%s", err.msg);
    n_done = n_cancel = n_closed = 0;
    last_status = -1;
    last_msg[0] = '\0';
}

static void teardown(void)
{
    if (client != NULL)
        ks_kube_client_close(client, on_closed, NULL);
    client = NULL;
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    ks_kube_conn_free(conn);
    conn = NULL;
    unlink(cfg);
    rmdir(dir);
}

/* A GET owned by `owner`; its ud is malloc'ed (the callbacks free it)
 * unless `ud` is given. */
static ks_kube_call_t *call_ud(const void *owner, uint64_t delay_ms, void *ud)
{
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    ks_kube_call_t *k;
    memset(&o, 0, sizeof o);
    o.method = "GET";
    o.path = "/api/v1/nodes";
    o.timeout_ms = 5000;
    o.on_done = on_done;
    o.on_cancel = on_cancel;
    o.owner = owner;
    o.delay_ms = delay_ms;
    o.ud = ud ? ud : malloc(16);
    k = ks_kube_call(client, &o, &err);
    ck_assert_msg(k != NULL, "%s", err.msg);
    return k;
}

static ks_kube_call_t *call(const void *owner, uint64_t delay_ms)
{
    return call_ud(owner, delay_ms, NULL);
}

START_TEST(cancel_by_owner)
{
    static const int a = 1, b = 2;
    static char kb_ud[16]; /* no callback may free it */
    ks_kube_call_t *kb;
    call(&a, 60000);
    call(&a, 60000);
    kb = call_ud(&b, 60000, kb_ud);
    ck_assert_uint_eq(ks_kube_client_in_flight(client), 3);
    ks_kube_client_cancel_owner(client, &a);
    ck_assert_int_eq(n_cancel, 2);
    ck_assert_int_eq(n_done, 0);
    ck_assert_uint_eq(ks_kube_client_in_flight(client), 1);
    /* Cancelling one call runs none of its callbacks. */
    ks_kube_call_cancel(kb);
    ck_assert_int_eq(n_cancel, 2);
    ck_assert_uint_eq(ks_kube_client_in_flight(client), 0);
    ks_kube_client_close(client, on_closed, NULL);
    client = NULL;
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(n_closed, 1);
    ck_assert_int_eq(n_done, 0);
}
END_TEST

START_TEST(delayed_call_is_sent_later)
{
    static const int a = 1;
    int spins = 0;
    call(&a, 20);
    ck_assert_uint_eq(ks_kube_client_in_flight(client), 1);
    while (n_done == 0 && spins++ < 100000)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_int_eq(n_done, 1);
    ck_assert_int_eq(n_cancel, 0);
    /* Nobody listens: no answer, and the message says so. */
    ck_assert_int_eq(last_status, 0);
    ck_assert_msg(last_msg[0] != '\0', "no message");
    ck_assert_uint_eq(ks_kube_client_in_flight(client), 0);
}
END_TEST

START_TEST(close_hands_owned_calls_back)
{
    static const int a = 1;
    call(&a, 60000);
    call(NULL, 0);
    ks_kube_client_close(client, on_closed, NULL);
    client = NULL;
    ck_assert_int_eq(n_cancel, 2);
    ck_assert_int_eq(n_done, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(n_closed, 1);
}
END_TEST

/* An API server that does not answer: event writes pile up to
 * KS_EVENTS_MAX_QUEUED, then new events are dropped and counted, while a
 * repeat of a queued one is still folded into its series. */
START_TEST(events_beyond_the_queue_are_dropped)
{
    ks_error_t err = {0};
    ks_event_recorder_t *r = ks_event_recorder_new(&loop, client, "host",
                                                   &err);
    ks_event_stats_t st;
    char uid[32], name[32];
    int i;
    ck_assert_msg(r != NULL, "%s", err.msg);
    for (i = 0; i < KS_EVENTS_MAX_QUEUED + 300; i++) {
        ks_event_ref_t pod = {"default", name, uid};
        snprintf(uid, sizeof uid, "uid-%d", i);
        snprintf(name, sizeof name, "p%d", i);
        ks_event_record(r, "default-scheduler", &pod, NULL, "Warning",
                        "FailedScheduling", "Scheduling", "0/1 nodes");
    }
    {
        ks_event_ref_t first = {"default", "p0", "uid-0"};
        ks_event_record(r, "default-scheduler", &first, NULL, "Warning",
                        "FailedScheduling", "Scheduling", "0/1 nodes");
    }
    uv_run(&loop, UV_RUN_NOWAIT);
    st = ks_event_recorder_stats(r);
    ck_assert_uint_eq(st.queued, KS_EVENTS_MAX_QUEUED);
    ck_assert_uint_eq(st.dropped, 300);
    ck_assert_uint_eq(st.aggregated, 1);
    ck_assert_uint_eq(st.created, 0);
    ck_assert_uint_le(ks_kube_client_in_flight(client), KS_EVENTS_MAX_QUEUED);
    ks_event_recorder_close(r); /* cancels the writes: nothing leaks */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_client");
    TCase *tc = tcase_create("calls");
    SRunner *sr;
    int failed;
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, cancel_by_owner);
    tcase_add_test(tc, delayed_call_is_sent_later);
    tcase_add_test(tc, close_hands_owned_calls_back);
    tcase_add_test(tc, events_beyond_the_queue_are_dropped);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
