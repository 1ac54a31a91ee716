/*
 * The supervisor of `ksched serve`, in the spirit of nginx's master and
 * workers: the process a user starts maps the call board
 * (framework/call_board.h), then forks a worker that does all the work
 * (loop, API, plugins) and watches it. The supervisor itself never loads
 * or runs plugin code.
 *
 *  - Deadlines: every 10 ms it scans the board; a plugin call running past
 *    its deadline is a fault of that plugin version: the worker is killed
 *    (SIGKILL) and replaced.
 *  - Crashes: when the worker dies from a signal inside a plugin call (its
 *    crash handler marks the thread's slot), that plugin version is the
 *    culprit. Either fault is appended to the board's fault list, which
 *    the next worker reads to quarantine the version (framework/
 *    quarantine.h), and a new worker starts at once.
 *  - Other deaths (a crash outside plugin code, an unexpected exit) restart
 *    the worker with capped exponential backoff (100 ms doubling to 30 s,
 *    reset after a worker ran 60 s).
 *  - Exits the worker chose end the supervisor with the same status
 *    (cli/cli.h's codes): 0 after a drain, 4 after a lost Lease, and 1 or
 *    2 when no worker was ever ready (the configuration was refused).
 *  - Its private directory ($TMPDIR/ksched-keep-PID-XXXXXX: known-good and
 *    swapped-out plugin copies, the journal) is removed at exit; one left by
 *    a supervisor that was killed is removed by the next one to start.
 *  - SIGTERM and SIGINT are passed to the worker (a second one too, which
 *    makes it exit at once); SIGHUP is passed on (reload). A worker dies
 *    with its supervisor (PR_SET_PDEATHSIG).
 *
 * Threads: the main thread of a process that has started no other thread.
 */
#ifndef KS_SUPERVISOR_H
#define KS_SUPERVISOR_H

#include <stddef.h>
#include <sys/socket.h>

#include "framework/call_board.h"

typedef struct ks_supervisor_opts {
    /* Where known-good plugin copies are kept (a directory created under
     * it and removed at exit); NULL: $TMPDIR or /tmp. */
    const char *keep_parent;
    unsigned backoff_max_ms; /* 0: 30000 */
    /* Where the supervisor answers 503 while no worker runs: the address
     * `serve` parsed from --listen (copied; its port is replaced by the
     * one the worker bound, see ks_supervisor_worker_listening). NULL: no
     * stand-in (a Unix socket; or TLS, since the supervisor holds no key,
     * so the port is closed meanwhile). */
    const struct sockaddr *stand_in_addr;
} ks_supervisor_opts_t;

/*
 * Become the supervisor. Returns 0 in each worker process, with the shared
 * board in use (ks_call_board_use) and the signal mask restored; the
 * worker then runs `serve` as usual. In the supervisor it never returns:
 * it exits the process with the final status. Returns -1 with `msg` filled
 * (nothing forked) when supervision cannot be set up.
 */
int ks_supervisor_run(const ks_supervisor_opts_t *o, char *msg, size_t len);

/*
 * What crosses from one worker to the next is the state on the board;
 * everything `serve` parsed from its arguments before calling
 * ks_supervisor_run is in every worker's memory by fork, unchanged. The
 * listening address is such a parsed value: a worker passes it to
 * ks_supervisor_worker_address before listening, which gives it the port
 * an earlier worker bound (when the flag said port 0) and leaves the host
 * part as parsed, so a replacement listens exactly where the first worker
 * did. Once listening, the worker publishes its port with
 * ks_supervisor_worker_listening. Both are no-ops without a supervisor
 * (the board is then private). Main or loop thread of the worker.
 */
void ks_supervisor_worker_address(struct sockaddr_storage *addr);
void ks_supervisor_worker_listening(unsigned port);

#endif
