/*
 * Signals and shutdown: SIGTERM or SIGINT stops accepting connections,
 * lets pods waiting at Permit and their binding cycles finish until the
 * drain deadline, then closes every handle so the loop ends. A second
 * signal exits at once with status 128+signo (signals.c: it does not wait
 * for the loop, which a hung plugin may block).
 */
#include <signal.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "console.h"
#include "faults.h"
#include "server.h"
#include "signals.h"

void ks_server_stop(ks_server_t *srv)
{
    if (srv->stopped)
        return;
    srv->stopped = 1;
    ks_faults_stop();
    ks_server_reload_close(srv);
    if (srv->handles_inited & 2) {
        srv->handles_inited &= ~2;
        ks_signals_detach();
        uv_close((uv_handle_t *)&srv->drain_timer, NULL);
        uv_close((uv_handle_t *)&srv->trim_timer, NULL);
        ks_console_stop(srv);
    }
    if (srv->sched)
        ks_scheduler_detach_loop(srv->sched);
    ks_leader_close(srv->leader);
    srv->leader = NULL;
    /* Cluster mode: informers and writes stop (no answer reaches the
     * scheduler any more), then the API clients close their handles. */
    ks_kube_source_close(srv->ksrc);
    srv->ksrc = NULL;
    if (srv->kclient)
        ks_kube_client_close(srv->kclient, NULL, NULL);
    if (srv->kevents)
        ks_kube_client_close(srv->kevents, NULL, NULL);
    if (srv->klease)
        ks_kube_client_close(srv->klease, NULL, NULL);
    srv->kclient = srv->kevents = srv->klease = NULL;
    if (srv->http)
        ks_http_server_close(srv->http);
    srv->http = NULL; /* freed by libuv close callbacks */
    /* After the connections: a request still waiting for its verdict gets
     * 503 (or nothing, when its connection is gone). */
    ks_delegate_close(srv->delegate);
}

static void released(void *ud)
{
    ks_server_t *srv = ud;
    srv->releasing = 2; /* done */
}

static void on_drain_tick(uv_timer_t *t)
{
    ks_server_t *srv = t->data;
    size_t waiting = ks_scheduler_pending(srv->sched, -1);
    if (waiting == 0 && srv->leader && srv->releasing == 0) {
        /* Nothing in flight: hand the lease over so that a standby takes
         * over at once (a rolling update), then stop. */
        srv->releasing = 1;
        if (srv->ksrc)
            ks_kube_source_set_active(srv->ksrc, 0);
        ks_leader_release(srv->leader, released, srv);
    }
    if (srv->releasing == 1 && ks_server_now() < srv->drain_deadline)
        return;
    if (waiting == 0) {
        fprintf(stderr, "ksched serve: drained; exiting\n");
        ks_server_stop(srv);
    } else if (ks_server_now() >= srv->drain_deadline) {
        fprintf(stderr,
                "ksched serve: drain deadline passed with %zu pod(s) still "
                "waiting at Permit; exiting\n",
                waiting);
        ks_server_stop(srv);
    }
}

void ks_server_begin_drain(ks_server_t *srv, const char *why)
{
    if (srv->stopped)
        return;
    if (srv->draining) {
        fprintf(stderr, "ksched serve: %s again: stopping now\n", why);
        ks_server_stop(srv);
        return;
    }
    srv->draining = 1;
    fprintf(stderr,
            "ksched serve: %s: no longer accepting connections; draining "
            "%zu pod(s) at Permit (up to %g s)\n",
            why, ks_scheduler_pending(srv->sched, -1), srv->drain_timeout_s);
    ks_http_stop_accepting(srv->http);
    srv->drain_deadline = ks_server_now() + srv->drain_timeout_s;
    uv_timer_start(&srv->drain_timer, on_drain_tick, 0, 20);
}

static void on_trim(uv_timer_t *t)
{
    (void)t;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void on_signal(void *ud, int signum)
{
    if (signum == SIGHUP)
        ks_server_on_sighup(ud);
    else
        ks_server_begin_drain(ud, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

int ks_server_start(ks_server_t *srv, ks_error_t *err)
{
    uv_timer_init(srv->loop, &srv->drain_timer);
    srv->drain_timer.data = srv;
    uv_timer_init(srv->loop, &srv->trim_timer);
    srv->handles_inited |= 2;
    /* Pods come and go: what they freed is returned to the system, so that
     * the resident size follows the live set (glibc keeps freed memory in
     * the middle of its heap otherwise). */
    uv_timer_start(&srv->trim_timer, on_trim, 5000, 5000);
    uv_unref((uv_handle_t *)&srv->trim_timer);
    if (ks_console_start(srv) != 0)
        return ks_error_set(err, KS_EIO, "cannot start the console's timer");
    if (ks_signals_attach(srv->loop, on_signal, srv, err) != 0)
        return err->code;
    if (ks_scheduler_attach_loop(srv->sched, srv->loop) != 0)
        return ks_error_set(err, KS_EIO, "cannot attach the scheduler");
    return ks_server_reload_start(srv, err);
}
