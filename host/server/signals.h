/*
 * Process signals for a long-running command (serve, a supervisor): one
 * thread of their own waits for SIGTERM, SIGINT and SIGHUP with
 * sigwaitinfo, so a signal is acted on even while the loop thread is
 * blocked (a plugin that hangs).
 *
 *  - SIGHUP, and the first SIGTERM or SIGINT, are handed to the loop: the
 *    callback runs on the loop thread (several SIGHUPs before it runs are
 *    one call).
 *  - A second SIGTERM or SIGINT (any mix) exits the process at once from
 *    the signal thread, whatever the loop is doing: it writes
 *    "PROG: SIGTERM again while stopping: exiting now (status 143)" to
 *    stderr and calls _exit(128 + signo) (130 for SIGINT, 143 for SIGTERM);
 *    nothing is cleaned up.
 *  - A SIGTERM or SIGINT while no loop is attached (before
 *    ks_signals_attach, after ks_signals_detach) exits the same way.
 *
 * Use: ks_signals_block() first thing, before the process creates any
 * other thread (threads inherit the mask, so the signals reach only the
 * signal thread); then ks_signals_attach() on the loop thread; finally
 * ks_signals_detach() when the loop stops (it closes the async handle:
 * run the loop afterwards).
 *
 * There is one set per process. Threads: block and attach/detach from the
 * thread that runs the loop; the callback runs on that loop.
 */
#ifndef KS_SERVER_SIGNALS_H
#define KS_SERVER_SIGNALS_H

#include <uv.h>

#include "base/error.h"

typedef void (*ks_signals_fn)(void *ud, int signo);

/* Block SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every
 * thread it creates afterwards) and start the signal thread. `prog` names
 * the process in the exit message (a static string). 0, or a KS_E* code
 * with err. */
int ks_signals_block(const char *prog, ks_error_t *err);

/* Hand SIGHUP and the first SIGTERM/SIGINT to fn(ud, signo) on `loop`
 * (signals already pending are handed over now). One loop at a time. 0,
 * or a KS_E* code with err. */
int ks_signals_attach(uv_loop_t *loop, ks_signals_fn fn, void *ud,
                      ks_error_t *err);

/* Stop handing signals to the loop (from now on SIGTERM/SIGINT exit at
 * once, SIGHUP is ignored) and close the async handle. Safe when not
 * attached. */
void ks_signals_detach(void);

/* How many SIGTERM/SIGINT the process has received (for tests). */
int ks_signals_stop_count(void);

#endif
