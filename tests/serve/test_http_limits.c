/* The HTTP server's limits with small values: deadlines for the request
 * head and body and for idle connections, connection slots (idle ones
 * replaced, reserved slots for health paths), the bound on answers queued
 * for a client that does not read pipelined requests, and the stream
 * queue limit. One thread: the loop is stepped while the client waits. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "server/http.h"

static uv_loop_t loop;
static ks_http_server_t *srv;
static char dir[64], sock_path[100];
static int handled;             /* requests the handler saw */
static int stream_writes_ok;    /* pieces ks_http_stream_write took */
static int stream_unbounded;    /* /stream: no limit on this stream */
static ks_http_conn_t *deferred; /* /defer: answered later by the test */
static int deferred_closed;     /* its client left before the answer */

static void deferred_gone(void *ud, ks_http_conn_t *c)
{
    (void)ud;
    (void)c;
    deferred = NULL;
    deferred_closed++;
}

#define BIG (32 * 1024)

static void handler(void *ud, ks_http_conn_t *c, const ks_http_request_t *req)
{
    static char big[BIG];
    (void)ud;
    handled++;
    if (strcmp(req->path, "/defer") == 0) {
        ks_http_defer(c);
        ks_http_conn_on_close(c, deferred_gone, NULL);
        deferred = c;
    } else if (strcmp(req->path, "/big") == 0) {
        memset(big, 'x', sizeof big);
        ks_http_respond(c, 200, "text/plain", NULL, big, sizeof big);
    } else if (strcmp(req->path, "/stream") == 0) {
        char piece[8192];
        int i;
        memset(piece, 'e', sizeof piece);
        if (ks_http_stream_begin(c, 200, "text/plain") != 0)
            return;
        if (stream_unbounded)
            ks_http_stream_set_limit(c, SIZE_MAX);
        for (i = 0; i < 100; i++) {
            if (ks_http_stream_write(c, piece, sizeof piece) != 0)
                break;
            stream_writes_ok++;
        }
    } else {
        ks_http_respond(c, 200, "text/plain", NULL, "ok", 2);
    }
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pump(int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    do {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(500);
    } while (now_ms() < end);
}

static void start(const ks_http_limits_t *l)
{
    ks_error_t err = {0};
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    snprintf(dir, sizeof dir, "/tmp/ks-http-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sock_path, sizeof sock_path, "%s/s", dir);
    srv = ks_http_server_new(&loop, handler, NULL, 0);
    ck_assert_ptr_nonnull(srv);
    ks_http_server_set_limits(srv, l);
    ck_assert_msg(ks_http_listen_unix(srv, sock_path, &err) == 0, "%s",
                  err.msg);
    handled = stream_writes_ok = stream_unbounded = deferred_closed = 0;
    deferred = NULL;
}

static void stop(void)
{
    ks_http_server_close(srv);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    rmdir(dir);
}

static int cl_connect(void)
{
    struct sockaddr_un a;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    pump(5); /* accepted */
    return fd;
}

static void cl_send(int fd, const char *data, size_t len)
{
    uint64_t end = now_ms() + 10000;
    while (len > 0 && now_ms() < end) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            break;
        } else {
            pump(1);
        }
    }
    ck_assert_uint_eq(len, 0);
    pump(5);
}

/* Read until `want` bytes, EOF or `ms`; *eof says whether it ended. */
static size_t cl_read(int fd, char *buf, size_t want, int ms, int *eof)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    size_t got = 0;
    *eof = 0;
    while (got < want && now_ms() < end) {
        ssize_t n = recv(fd, buf + got, want - got, 0);
        if (n > 0) {
            got += (size_t)n;
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            *eof = 1;
            break;
        } else {
            pump(1);
        }
    }
    if (got < want)
        buf[got] = '\0';
    return got;
}

static const char get_ok[] = "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n";

static void limits_small(ks_http_limits_t *l)
{
    ks_http_limits_default(l);
    l->header_timeout_ms = 200;
    l->body_timeout_ms = 200;
    l->idle_timeout_ms = 300;
}

START_TEST(defaults)
{
    ks_http_limits_t l, got;
    uv_loop_t lp;
    ks_http_server_t *s;
    ks_http_limits_default(&l);
    ck_assert_uint_eq(l.max_conns, 1024);
    ck_assert_uint_eq(l.header_timeout_ms, 10000);
    ck_assert_uint_eq(l.idle_timeout_ms, 60000);
    ck_assert_uint_eq(l.max_output, 1 << 20);
    ck_assert_uint_eq(l.stream_max_pending, 4 << 20);
    ck_assert_str_eq(l.reserved_paths[0], "/healthz");
    ck_assert_int_eq(uv_loop_init(&lp), 0);
    s = ks_http_server_new(&lp, handler, NULL, 1000);
    ks_http_server_get_limits(s, &got);
    ck_assert_uint_eq(got.body_limit, 1000);
    ck_assert_uint_eq(got.reserved_conns, KS_HTTP_DEFAULT_RESERVED_CONNS);
    /* Zero fields take the defaults. */
    memset(&l, 0, sizeof l);
    l.max_conns = 7;
    ks_http_server_set_limits(s, &l);
    ks_http_server_get_limits(s, &got);
    ck_assert_uint_eq(got.max_conns, 7);
    ck_assert_uint_eq(got.body_limit, KS_HTTP_DEFAULT_BODY_LIMIT);
    ck_assert_uint_eq(got.body_timeout_ms, 60000);
    ks_http_server_close(s);
    uv_run(&lp, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&lp), 0);
}
END_TEST

START_TEST(deadlines)
{
    ks_http_limits_t l;
    char buf[4096];
    int fd, eof;
    size_t n;
    limits_small(&l);
    start(&l);
    /* Half a head: 408 once the head deadline passes. */
    fd = cl_connect();
    cl_send(fd, "GET /ok HTTP/1.1\r\nHo", 20);
    n = cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_msg(n > 0 && strstr(buf, "HTTP/1.1 408") == buf &&
                      strstr(buf, "request head not received in time"),
                  "%s", buf);
    close(fd);
    /* A head, then half the body: 408 for the body. */
    fd = cl_connect();
    cl_send(fd, "POST /ok HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", 44);
    n = cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_msg(n > 0 && strstr(buf, "HTTP/1.1 408") == buf &&
                      strstr(buf, "request body not received in time"),
                  "%s", buf);
    close(fd);
    /* Nothing at all: closed without an answer. */
    fd = cl_connect();
    n = cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(eof, 1);
    close(fd);
    /* Idle after an answer: closed after the idle deadline. */
    fd = cl_connect();
    cl_send(fd, get_ok, sizeof get_ok - 1);
    n = cl_read(fd, buf, sizeof buf - 1, 100, &eof);
    ck_assert_msg(strstr(buf, "HTTP/1.1 200") == buf, "%s", buf);
    ck_assert_int_eq(eof, 0);
    n = cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(eof, 1);
    close(fd);
    stop();
}
END_TEST

START_TEST(slots)
{
    ks_http_limits_t l;
    ks_http_stats_t st;
    char buf[4096];
    int slow[4], idle[4], fd, fd2, eof, i;
    ks_http_limits_default(&l);
    l.max_conns = 4;
    l.reserved_conns = 2;
    start(&l);
    /* Every ordinary slot holds half a request head. */
    for (i = 0; i < 4; i++) {
        slow[i] = cl_connect();
        cl_send(slow[i], "GET /ok HTTP/1.1\r\nX-Slow: ", 26);
    }
    /* Health answers from a reserved slot; anything else gets 429. */
    fd = cl_connect();
    cl_send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 35);
    cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_msg(strstr(buf, "HTTP/1.1 200") == buf &&
                      strstr(buf, "Connection: close"),
                  "%s", buf);
    close(fd);
    fd = cl_connect();
    cl_send(fd, get_ok, sizeof get_ok - 1);
    cl_read(fd, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_msg(strstr(buf, "HTTP/1.1 429") == buf &&
                      strstr(buf, "Retry-After: 1\r\n") &&
                      strstr(buf, "\"reason\":\"TooManyRequests\""),
                  "%s", buf);
    close(fd);
    pump(50); /* the answered connections are gone */
    /* The reserved slots full of half heads too: the oldest goes. */
    fd = cl_connect();
    cl_send(fd, "GET /healthz HTTP/1.1\r\n", 23);
    fd2 = cl_connect();
    cl_send(fd2, "GET /healthz HTTP/1.1\r\n", 23);
    i = cl_connect();
    cl_send(i, "GET /metrics HTTP/1.1\r\n\r\n", 25);
    cl_read(i, buf, sizeof buf - 1, 3000, &eof);
    ck_assert_msg(strstr(buf, "HTTP/1.1 200") == buf, "%s", buf);
    close(i);
    ck_assert_uint_eq(cl_read(fd, buf, sizeof buf - 1, 500, &eof), 0);
    ck_assert_int_eq(eof, 1); /* fd was the oldest */
    close(fd);
    close(fd2);
    for (i = 0; i < 4; i++)
        close(slow[i]);
    pump(20);
    ks_http_server_stats(srv, &st);
    ck_assert_uint_eq(st.conns, 0);
    ck_assert_uint_eq(st.reserved_conns, 0);
    /* Idle keep-alive connections make room for newcomers, the one idle
     * the longest first. */
    for (i = 0; i < 4; i++) {
        idle[i] = cl_connect();
        cl_send(idle[i], get_ok, sizeof get_ok - 1);
        cl_read(idle[i], buf, sizeof buf - 1, 500, &eof);
        ck_assert_msg(strstr(buf, "HTTP/1.1 200") == buf, "%s", buf);
        pump(3);
    }
    fd = cl_connect();
    cl_send(fd, get_ok, sizeof get_ok - 1);
    cl_read(fd, buf, sizeof buf - 1, 500, &eof);
    ck_assert_msg(strstr(buf, "HTTP/1.1 200") == buf, "%s", buf);
    ck_assert_uint_eq(cl_read(idle[0], buf, sizeof buf - 1, 500, &eof), 0);
    ck_assert_int_eq(eof, 1);
    cl_read(idle[1], buf, sizeof buf - 1, 50, &eof);
    ck_assert_int_eq(eof, 0);
    ks_http_server_stats(srv, &st);
    ck_assert_uint_eq(st.conns, 4);
    ck_assert_uint_ge(st.evicted, 2);
    close(fd);
    for (i = 0; i < 4; i++)
        close(idle[i]);
    stop();
}
END_TEST

START_TEST(pipelined_output_bound)
{
    static char req[1000 * 40], *all;
    ks_http_limits_t l;
    ks_http_stats_t st;
    size_t len = 0, n, got = 0;
    int fd, eof, i, before;
    ks_http_limits_default(&l);
    l.max_output = 64 * 1024;
    start(&l);
    for (i = 0; i < 1000; i++)
        len += (size_t)snprintf(req + len, sizeof req - len,
                                "GET /big HTTP/1.1\r\n\r\n");
    fd = cl_connect();
    cl_send(fd, req, len);
    pump(300);
    before = handled;
    ks_http_server_stats(srv, &st);
    /* 1000 requests of 32 KiB answers: the server stopped after about
     * 64 KiB queued (plus what the socket holds). */
    ck_assert_msg(before < 100, "%d requests handled", before);
    ck_assert_uint_le(st.queued_bytes, 64 * 1024 + BIG + 200);
    pump(100);
    ck_assert_int_eq(handled, before);
    /* Read everything: each one is answered. */
    all = malloc((size_t)1000 * (BIG + 200));
    ck_assert_ptr_nonnull(all);
    while ((n = cl_read(fd, all + got, (size_t)1000 * (BIG + 200) - got - 1,
                        200, &eof)) > 0)
        got += n;
    ck_assert_int_eq(handled, 1000);
    all[got] = '\0';
    for (i = 0, n = 0; (size_t)i < got; i++)
        if (all[i] == 'H' && strncmp(all + i, "HTTP/1.1 200 OK\r\n", 17) == 0)
            n++;
    ck_assert_uint_eq(n, 1000);
    free(all);
    close(fd);
    stop();
}
END_TEST

START_TEST(stream_limit)
{
    ks_http_limits_t l;
    char buf[1024];
    int fd, eof;
    ks_http_limits_default(&l);
    l.stream_max_pending = 64 * 1024;
    start(&l);
    /* A stream that is not read is dropped past its limit. */
    fd = cl_connect();
    cl_send(fd, "GET /stream HTTP/1.1\r\n\r\n", 24);
    ck_assert_int_le(stream_writes_ok, 64 / 8 + 1);
    ck_assert_int_ge(stream_writes_ok, 64 / 8);
    while (cl_read(fd, buf, sizeof buf, 200, &eof) > 0 && !eof)
        ;
    ck_assert_int_eq(eof, 1);
    close(fd);
    /* With its own limit lifted, all of it is queued. */
    stream_writes_ok = 0;
    stream_unbounded = 1;
    fd = cl_connect();
    cl_send(fd, "GET /stream HTTP/1.1\r\n\r\n", 24);
    ck_assert_int_eq(stream_writes_ok, 100);
    close(fd);
    stop();
}
END_TEST

/* A deferred answer (ks_http_defer): the requests pipelined behind it wait
 * unparsed, then are answered in order once it is; a client that leaves
 * meanwhile is reported to the deferring party. */
START_TEST(deferred_answer)
{
    ks_http_limits_t l;
    char buf[4096], pipelined[256];
    const char *first, *second;
    int fd, eof;
    size_t got;
    ks_http_limits_default(&l);
    start(&l);
    fd = cl_connect();
    snprintf(pipelined, sizeof pipelined,
             "GET /defer HTTP/1.1\r\nHost: x\r\n\r\n%s", get_ok);
    cl_send(fd, pipelined, strlen(pipelined));
    pump(50);
    ck_assert_ptr_nonnull(deferred);
    ck_assert_int_eq(handled, 1); /* the second request waits */
    got = cl_read(fd, buf, sizeof buf - 1, 100, &eof);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(eof, 0);
    ks_http_conn_on_close(deferred, NULL, NULL);
    ks_http_respond(deferred, 200, "text/plain", NULL, "later", 5);
    deferred = NULL;
    pump(50);
    ck_assert_int_eq(handled, 2);
    got = cl_read(fd, buf, sizeof buf - 1, 2000, &eof);
    buf[got] = '\0';
    first = strstr(buf, "later");
    second = strstr(buf, "\r\n\r\nok");
    ck_assert_msg(first && second && first < second, "answers: %s", buf);
    /* Deferred again, and the client goes away. */
    cl_send(fd, "GET /defer HTTP/1.1\r\nHost: x\r\n\r\n", 32);
    pump(50);
    ck_assert_ptr_nonnull(deferred);
    close(fd);
    pump(100);
    ck_assert_ptr_null(deferred);
    ck_assert_int_eq(deferred_closed, 1);
    stop();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_limits");
    TCase *t = tcase_create("http");
    SRunner *sr;
    int failed;
    tcase_set_timeout(t, 60);
    tcase_add_test(t, defaults);
    tcase_add_test(t, deadlines);
    tcase_add_test(t, slots);
    tcase_add_test(t, pipelined_output_bound);
    tcase_add_test(t, stream_limit);
    tcase_add_test(t, deferred_answer);
    suite_add_tcase(s, t);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
