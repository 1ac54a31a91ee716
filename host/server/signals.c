/* The signal thread (see signals.h). */
#include "signals.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sigset_t set;
static const char *prog_name = "ksched";
static int started;
static atomic_int stops;     /* SIGTERM/SIGINT received */
static atomic_int first_sig; /* the first of them, not yet handed over */
static atomic_int hups;      /* SIGHUPs not yet handed over */

/* Under mu. */
static uv_async_t *async;
static ks_signals_fn cb;
static void *cb_ud;

static const char *sig_name(int signo)
{
    switch (signo) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}

static void exit_now(int signo, const char *why)
{
    char msg[256];
    int status = 128 + signo;
    int n = snprintf(msg, sizeof msg, "%s: %s %s: exiting now (status %d)\n",
                     prog_name, sig_name(signo), why, status);
    if (n > 0)
        (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n
                                                    : sizeof msg - 1);
    _exit(status);
}

static void *signal_thread(void *arg)
{
    (void)arg;
    for (;;) {
        siginfo_t si;
        int signo = sigwaitinfo(&set, &si);
        if (signo < 0)
            continue; /* EINTR */
        pthread_mutex_lock(&mu);
        if (signo == SIGHUP) {
            if (async) {
                atomic_fetch_add(&hups, 1);
                uv_async_send(async);
            }
        } else if (atomic_fetch_add(&stops, 1) > 0) {
            exit_now(signo, "again while stopping");
        } else if (async == NULL) {
            exit_now(signo, "while the loop is not running");
        } else {
            atomic_store(&first_sig, signo);
            uv_async_send(async);
        }
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int ks_signals_block(const char *prog, ks_error_t *err)
{
    pthread_t t;
    pthread_attr_t a;
    int rc;
    if (started)
        return 0;
    if (prog)
        prog_name = prog;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if ((rc = pthread_sigmask(SIG_BLOCK, &set, NULL)) != 0)
        return ks_error_set(err, KS_EIO, "cannot block signals: %s",
                            strerror(rc));
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    rc = pthread_create(&t, &a, signal_thread, NULL);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return ks_error_set(err, KS_EIO, "cannot start the signal thread: %s",
                            strerror(rc));
    }
    started = 1;
    return 0;
}

static void on_async(uv_async_t *h)
{
    int signo = atomic_exchange(&first_sig, 0);
    int n = atomic_exchange(&hups, 0);
    (void)h;
    /* cb and cb_ud change only on this thread. */
    if (n > 0 && cb)
        cb(cb_ud, SIGHUP);
    if (signo != 0 && cb)
        cb(cb_ud, signo);
}

static void free_async(uv_handle_t *h)
{
    uv_async_t *a = (uv_async_t *)h;
    free(a);
}

int ks_signals_attach(uv_loop_t *loop, ks_signals_fn fn, void *ud,
                      ks_error_t *err)
{
    uv_async_t *a = malloc(sizeof *a);
    if (a == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (uv_async_init(loop, a, on_async) != 0) {
        free(a);
        return ks_error_set(err, KS_EIO, "cannot watch signals");
    }
    pthread_mutex_lock(&mu);
    if (async) {
        pthread_mutex_unlock(&mu);
        uv_close((uv_handle_t *)a, free_async);
        return ks_error_set(err, KS_EINVAL, "signals are already attached "
                                            "to a loop");
    }
    cb = fn;
    cb_ud = ud;
    async = a;
    /* A signal that came before (and is still pending, or counted) is
     * handed over now. */
    if (atomic_load(&first_sig) != 0 || atomic_load(&hups) != 0)
        uv_async_send(a);
    pthread_mutex_unlock(&mu);
    return 0;
}

void ks_signals_detach(void)
{
    uv_async_t *a;
    pthread_mutex_lock(&mu);
    a = async;
    async = NULL;
    pthread_mutex_unlock(&mu);
    cb = NULL;
    cb_ud = NULL;
    if (a)
        uv_close((uv_handle_t *)a, free_async);
}

int ks_signals_stop_count(void)
{
    return atomic_load(&stops);
}
