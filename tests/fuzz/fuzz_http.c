/*
 * libFuzzer target: the HTTP request path of `ksched serve`. Each input is
 * the byte stream one client sends on one connection (pipelined requests,
 * partial heads, bodies, anything): it goes to a real ks_http server (the
 * http_parser-based reader, limits, keep-alive, pipelining) over a Unix
 * socket, with the write side shut at the end, and every request is routed
 * with the API's router functions over the API's paths; POST bodies on
 * /api/v1/nodes and /api/v1/namespaces/{}/pods are decoded, read and
 * validated by the API's own functions (ks_api_decode, ks_api_read_*,
 * ks_api_validate_*). The answers are read until the server closes the
 * connection. Built with -Dfuzz=true (tests/fuzz/meson.build).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <uv.h>

#include "server/api.h"
#include "server/http.h"
#include "server/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *pattern, *methods;
} routes[] = {
    {"/healthz", "GET"},
    {"/metrics", "GET"},
    {"/-/reload", "POST"},
    {"/api/v1/nodes", "GET POST"},
    {"/api/v1/nodes/{}", "GET PUT DELETE"},
    {"/api/v1/pods", "GET"},
    {"/api/v1/namespaces/{}/pods", "GET POST"},
    {"/api/v1/namespaces/{}/pods/{}", "GET DELETE"},
    {"/api/v1/bindings", "GET"},
};

static void post_object(ks_http_conn_t *c, const ks_http_request_t *req,
                        int is_pod)
{
    json_t *doc = ks_api_decode(c, req, is_pod ? "Pod" : "Node",
                                is_pod ? "pods" : "nodes");
    if (doc == NULL)
        return; /* answered */
    if (is_pod) {
        ks_pod_t *pod = NULL;
        if (ks_api_read_pod(c, doc, &pod) == 0) {
            if (ks_api_validate_pod(c, pod) == 0)
                ks_http_respond(c, 201, "application/json", NULL, "{}", 2);
            ks_pod_free(pod);
        }
    } else {
        ks_node_t *node = NULL;
        if (ks_api_read_node(c, doc, &node) == 0) {
            if (ks_api_validate_node(c, node) == 0)
                ks_http_respond(c, 201, "application/json", NULL, "{}", 2);
            ks_node_free(node);
        }
    }
    json_decref(doc);
}

static void handle(void *ud, ks_http_conn_t *c, const ks_http_request_t *req)
{
    char caps[KS_ROUTE_MAX_CAPS][KS_ROUTE_CAP_MAX];
    char path[512];
    size_t i;
    (void)ud;
    for (i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (ks_route_match(routes[i].pattern, req->path, caps,
                           KS_ROUTE_MAX_CAPS) < 0)
            continue;
        if (!ks_route_method_allowed(routes[i].methods, req->method)) {
            ks_api_status_hdr(c, "Allow: GET\r\n", 405, "MethodNotAllowed",
                              NULL, NULL, "%s %s", req->method, req->path);
            return;
        }
        if (strcmp(req->method, "POST") == 0 &&
            (i == 3 || i == 6)) {
            post_object(c, req, i == 6);
            return;
        }
        ks_http_respond(c, 200, "text/plain", NULL, "ok", 2);
        return;
    }
    ks_api_utf8_escape(req->path, path, sizeof path);
    ks_api_status(c, 404, "NotFound", NULL, NULL, "the path %s was not found",
                  path);
}

static uv_loop_t loop;
static ks_http_server_t *server;
static char sock_path[256];

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[200];
    ks_error_t err = {0};
    snprintf(dir, sizeof dir, "%s/ks-fuzz-http-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL || uv_loop_init(&loop) != 0)
        abort();
    snprintf(sock_path, sizeof sock_path, "%s/s", dir);
    server = ks_http_server_new(&loop, handle, NULL, 64 * 1024);
    if (server == NULL || ks_http_listen_unix(server, sock_path, &err) != 0) {
        fprintf(stderr, "fuzz_http: cannot listen: %s\n", err.msg);
        abort();
    }
}

/* Let the server run until `fd` or the loop has something, or 1 ms. */
static void step(int fd)
{
    struct pollfd p[2] = {{fd, POLLIN, 0},
                          {uv_backend_fd(&loop), POLLIN, 0}};
    uv_run(&loop, UV_RUN_NOWAIT);
    poll(p, 2, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sockaddr_un sa;
    size_t sent = 0;
    char buf[65536];
    int fd, spins;
    if (server == NULL)
        setup();
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        abort();
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        abort();
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    /* Send everything, reading answers as they come (a server that stops
     * reading while its answers wait must not deadlock us). */
    for (;;) {
        ssize_t n;
        if (sent < size) {
            n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN)
                break; /* the server closed the connection */
        }
        if (sent == size) {
            shutdown(fd, SHUT_WR);
            break;
        }
        while (recv(fd, buf, sizeof buf, 0) > 0)
            ;
        step(fd);
    }
    /* Read every answer until the server closes. */
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            break;
        if (n < 0)
            step(fd);
    }
    close(fd);
    /* The server side goes away too before the next input. */
    for (spins = 0; ks_http_conn_count(server) > 0 && spins < 1000; spins++)
        step(-1);
    if (ks_http_conn_count(server) > 0)
        abort(); /* a connection outlived its client's close */
    return 0;
}
