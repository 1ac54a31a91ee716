/* The supervisor of `ksched serve`: see supervisor.h. */
#include "supervisor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/mono_clock.h"
#include "cli/cli.h"
#include "server/process_metrics.h"

#define TICK_MS 10
#define BACKOFF_MIN_MS 100
#define BACKOFF_RESET_S 60

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    fputs("ksched serve: supervisor: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Remove the keep directory (flat: files only). */
static void remove_keep_dir(const char *dir)
{
    DIR *d;
    struct dirent *de;
    char path[1024];
    if (dir[0] == '\0' || (d = opendir(dir)) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* `a` with its port set to `port` (host order). */
static void addr_set_port(struct sockaddr_storage *a, unsigned port)
{
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
    else if (a->ss_family == AF_INET)
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

void ks_supervisor_worker_address(struct sockaddr_storage *addr)
{
    unsigned port = atomic_load(&ks_call_board()->listen_port);
    if (ks_call_board_shared() && port != 0)
        addr_set_port(addr, port);
}

void ks_supervisor_worker_listening(unsigned port)
{
    if (ks_call_board_shared())
        atomic_store(&ks_call_board()->listen_port, port);
}

/*
 * While no worker runs (a restart backoff), the supervisor itself answers
 * on the worker's TCP address: 503 to every request, saying why, so that
 * /readyz and clients learn the reason instead of a refused connection.
 * The address is the one `serve` parsed (ks_supervisor_opts_t), at the
 * port the worker bound. -1 when there is none or it cannot listen.
 */
static int stand_in_listen(const struct sockaddr_storage *parsed,
                           unsigned port)
{
    struct sockaddr_storage ss = *parsed;
    socklen_t len = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in);
    int fd, one = 1;
    if (port == 0 ||
        (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
        return -1;
    addr_set_port(&ss, port);
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET /metrics while no worker runs: 200 with the supervisor's own
 * process_* series (a scrape keeps its CPU and memory panels), 1 when
 * answered, 0 for any other request. */
static int stand_in_metrics(int c, const char *req, ssize_t len)
{
    static const char get[] = "GET /metrics";
    ks_buf_t body = {0}, resp = {0};
    size_t n;
    char *text;
    if (len < (ssize_t)sizeof get ||
        memcmp(req, get, sizeof get - 1) != 0 ||
        (req[sizeof get - 1] != ' ' && req[sizeof get - 1] != '?'))
        return 0;
    ks_process_metrics_render(&body);
    ks_buf_printf(&resp,
                  "HTTP/1.1 200 OK\r\n"
                  "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                  "Connection: close\r\nContent-Length: %zu\r\n\r\n",
                  body.len);
    ks_buf_append(&resp, body.data ? body.data : "", body.len);
    ks_buf_free(&body);
    text = ks_buf_steal(&resp, &n);
    if (text == NULL)
        return 0;
    (void)!write(c, text, n);
    free(text);
    return 1;
}

/* Answer every pending connection 503 with `why` (GET /metrics: the
 * supervisor's process_* series). */
static void stand_in_answer(int lfd, const char *why)
{
    for (;;) {
        char req[4096], resp[2048];
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), n;
        ssize_t got = 0;
        struct pollfd p;
        if (c < 0)
            return;
        /* Read what the request sent (briefly): closing on unread bytes
         * would reset the connection before the answer arrives. */
        p.fd = c;
        p.events = POLLIN;
        if (poll(&p, 1, 200) > 0)
            got = read(c, req, sizeof req);
        if (stand_in_metrics(c, req, got)) {
            close(c);
            continue;
        }
        n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 503 Service Unavailable\r\n"
                     "Content-Type: text/plain; charset=utf-8\r\n"
                     "Retry-After: 1\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n%s\n",
                     strlen(why) + 1, why);
        if (n > 0)
            (void)!write(c, resp, (size_t)n < sizeof resp ? (size_t)n
                                                            : sizeof resp - 1);
        close(c);
    }
}

/* Remove keep directories under `parent` left by supervisors that are
 * gone (killed: they could not clean up): ksched-keep-PID-XXXXXX, a real
 * directory of this user, whose PID no longer exists. */
static void remove_stale_keep_dirs(const char *parent)
{
    DIR *d = opendir(parent);
    struct dirent *de;
    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        char path[1024], *end;
        struct stat st;
        long pid;
        if (strncmp(de->d_name, "ksched-keep-", 12) != 0)
            continue;
        pid = strtol(de->d_name + 12, &end, 10);
        if (pid <= 0 || *end != '-')
            continue;
        snprintf(path, sizeof path, "%s/%s", parent, de->d_name);
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        remove_keep_dir(path);
    }
    closedir(d);
}

/* A fresh board for the next worker: clear what the dead one left. */
static void board_reset_worker(ks_call_board_t *b)
{
    memset(b->slots, 0, sizeof b->slots);
    atomic_store(&b->n_slots, 0);
    atomic_store(&b->crash_slot, 0);
    atomic_store(&b->crash_signo, 0);
    atomic_store(&b->crash_in_call, 0);
    atomic_store(&b->crash_seq, 0);
    atomic_store(&b->ready, 0);
}

/* What the supervisor exits with for a worker status it passes on. */
static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

static void describe_status(int st, char *buf, size_t len)
{
    if (WIFEXITED(st)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
    } else if (WIFSIGNALED(st)) {
        const char *a = sigabbrev_np(WTERMSIG(st));
        snprintf(buf, len, "died from SIG%s%s", a ? a : "?",
                 WCOREDUMP(st) ? " (core dumped)" : "");
    } else {
        snprintf(buf, len, "ended (status %#x)", st);
    }
}

/* The supervisor's state (one per process). */
typedef struct sup {
    ks_call_board_t *b;       /* shared with every worker; never unmapped
                               * once a worker runs (exit releases it) */
    ks_deadline_scan_t *scan; /* the supervisor's; the worker frees its copy */
    sigset_t set, old;        /* the signals it takes; the mask before */
    char keep[256];           /* the keep directory: removed by sup_exit */
    struct sockaddr_storage stand_in; /* ss_family 0: no stand-in */
    unsigned backoff_max, backoff;    /* ms */
    int stopping, ever_ready;
    int force_sig; /* a second SIGTERM/SIGINT while stopping: end now */
    char why[1400]; /* what the stand-in answers */
} sup_t;

/* End the supervisor: the keep directory is removed here and only here. */
static void sup_exit(sup_t *s, int code) __attribute__((noreturn));
static void sup_exit(sup_t *s, int code)
{
    remove_keep_dir(s->keep);
    exit(code);
}

/* Map the board, create the keep directory, take the signals. -1 with
 * `msg` filled (and everything released) on failure. */
static int sup_setup(sup_t *s, const ks_supervisor_opts_t *o, char *msg,
                     size_t len)
{
    const char *tmp = o && o->keep_parent ? o->keep_parent : getenv("TMPDIR");
    memset(s, 0, sizeof *s);
    s->backoff_max = o && o->backoff_max_ms ? o->backoff_max_ms : 30000;
    if (o && o->stand_in_addr && (o->stand_in_addr->sa_family == AF_INET ||
                                  o->stand_in_addr->sa_family == AF_INET6))
        memcpy(&s->stand_in, o->stand_in_addr,
               o->stand_in_addr->sa_family == AF_INET6
                   ? sizeof(struct sockaddr_in6)
                   : sizeof(struct sockaddr_in));
    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    s->b = ks_call_board_map_shared();
    s->scan = calloc(1, sizeof *s->scan);
    if (s->b == NULL || s->scan == NULL) {
        snprintf(msg, len, "cannot map the call board: %s", strerror(errno));
        goto fail;
    }
    remove_stale_keep_dirs(tmp);
    if ((size_t)snprintf(s->keep, sizeof s->keep, "%s/ksched-keep-%ld-XXXXXX",
                         tmp, (long)getpid()) >= sizeof s->keep) {
        snprintf(msg, len, "cannot create a directory for known-good plugin "
                           "copies under %s: the path is too long", tmp);
        goto fail;
    }
    if (mkdtemp(s->keep) == NULL) {
        snprintf(msg, len, "cannot create a directory for known-good plugin "
                           "copies under %s: %s",
                 tmp, strerror(errno));
        goto fail;
    }
    snprintf(s->b->keep_dir, sizeof s->b->keep_dir, "%s", s->keep);
    atomic_store(&s->b->supervisor_pid, (int32_t)getpid());
    sigemptyset(&s->set);
    sigaddset(&s->set, SIGTERM);
    sigaddset(&s->set, SIGINT);
    sigaddset(&s->set, SIGHUP);
    sigaddset(&s->set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &s->set, &s->old);
    return 0;
fail:
    ks_call_board_unmap(s->b);
    free(s->scan);
    s->b = NULL;
    s->scan = NULL;
    return -1;
}

/* Wait out the backoff, still answering signals (SIGTERM/SIGINT end the
 * supervisor), and requests with 503 and why. */
static void sup_wait_backoff(sup_t *s)
{
    uint64_t restart_at = (uint64_t)ks_mono_ms() + s->backoff;
    int stand_in = -1;
    if (s->backoff >= 2 * TICK_MS && s->stand_in.ss_family != 0)
        stand_in = stand_in_listen(&s->stand_in,
                                   atomic_load(&s->b->listen_port));
    while (!s->stopping && (uint64_t)ks_mono_ms() < restart_at) {
        struct timespec d = {0, TICK_MS * 1000000L};
        int sig = sigtimedwait(&s->set, NULL, &d);
        if (sig == SIGTERM || sig == SIGINT) {
            say("%s while no worker runs; exiting",
                sig == SIGTERM ? "SIGTERM" : "SIGINT");
            s->stopping = 1;
            break;
        }
        if (stand_in >= 0)
            stand_in_answer(stand_in, s->why);
    }
    if (stand_in >= 0)
        close(stand_in);
    if (s->stopping)
        sup_exit(s, KS_EXIT_OK);
}

/* The next backoff after a death that was not a plugin's fault. */
static void sup_grow_backoff(sup_t *s, uint64_t started_ms)
{
    if (started_ms && (uint64_t)ks_mono_ms() - started_ms >
                          BACKOFF_RESET_S * 1000u)
        s->backoff = 0;
    s->backoff = s->backoff ? s->backoff * 2 : BACKOFF_MIN_MS;
    if (s->backoff > s->backoff_max)
        s->backoff = s->backoff_max;
}

/* Fork a worker. In the worker: 0, set up to run serve. In the
 * supervisor: its pid, or -1 (backoff grown) when fork failed. */
static pid_t sup_fork(sup_t *s)
{
    pid_t pid;
    board_reset_worker(s->b);
    atomic_fetch_add(&s->b->worker_starts, 1);
    pid = fork();
    if (pid < 0) {
        say("cannot start a worker: %s; retrying", strerror(errno));
        sup_grow_backoff(s, 0);
        return -1;
    }
    if (pid == 0) {
        /* The worker: dies with us, sees the board, gets its signals
         * back. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != (pid_t)atomic_load(&s->b->supervisor_pid))
            _exit(1); /* the supervisor is already gone */
        sigprocmask(SIG_SETMASK, &s->old, NULL);
        free(s->scan);
        s->scan = NULL;
        ks_call_board_use(s->b);
        return 0;
    }
    memset(s->scan, 0, sizeof *s->scan);
    if (atomic_load(&s->b->worker_starts) > 1)
        say("worker %ld started", (long)pid);
    return pid;
}

/* Watch worker `pid` until it ends: pass signals on, enforce deadlines.
 * Its wait status; *deadline set when it was killed for one. */
static int sup_watch(sup_t *s, pid_t pid, int *deadline)
{
    int st = 0;
    *deadline = 0;
    for (;;) {
        struct timespec d = {0, TICK_MS * 1000000L};
        siginfo_t si;
        int sig = sigtimedwait(&s->set, &si, &d), i;
        if ((sig == SIGTERM || sig == SIGINT) && s->stopping) {
            /* The second stop signal ends the worker now, as its own
             * signal thread would. Passed on, it could merge with the
             * first in the worker's pending set (standard signals do
             * not queue) and be lost while a plugin blocks the loop. */
            s->force_sig = sig;
            kill(pid, SIGKILL);
        } else if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
            if (sig != SIGHUP)
                s->stopping = 1;
            kill(pid, sig);
        }
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        if (atomic_load(&s->b->ready))
            s->ever_ready = 1;
        if (s->stopping || *deadline)
            continue;
        i = ks_deadline_scan(s->b, s->scan, (uint64_t)ks_mono_ms());
        if (i >= 0) {
            ks_board_fault_t f;
            char line[1200];
            ks_call_board_fault_from_slot(s->b, (size_t)i, KS_FAULT_DEADLINE,
                                          0, &f);
            ks_call_board_fault_add(s->b, &f);
            ks_board_fault_describe(&f, line, sizeof line);
            say("%s; quarantined; replacing worker %ld", line, (long)pid);
            kill(pid, SIGKILL);
            *deadline = 1;
        }
    }
    if (atomic_load(&s->b->ready))
        s->ever_ready = 1;
    return st;
}

/* A worker that died from a signal inside a plugin call: record the
 * fault. 1 when it was one. */
static int sup_plugin_crash(sup_t *s, pid_t pid, int st, const char *how)
{
    ks_board_fault_t f;
    char line[1200];
    if (!WIFSIGNALED(st) || atomic_load(&s->b->crash_slot) <= 0 ||
        !atomic_load(&s->b->crash_in_call))
        return 0;
    ks_call_board_fault_from_slot(
        s->b, (size_t)(atomic_load(&s->b->crash_slot) - 1), KS_FAULT_SIGNAL,
        atomic_load(&s->b->crash_signo), &f);
    ks_call_board_fault_add(s->b, &f);
    ks_board_fault_describe(&f, line, sizeof line);
    say("worker %ld %s: %s; quarantined; starting a new worker", (long)pid,
        how, line);
    return 1;
}

/* Not a plugin's fault: back off, say so, and set what the stand-in
 * answers meanwhile: the newest fault when there is one (a quarantined
 * version with nothing to roll back to makes the worker exit), else the
 * status. */
static void sup_back_off(sup_t *s, pid_t pid, int st, const char *how,
                         uint64_t started_ms)
{
    int refused = WIFEXITED(st) && WEXITSTATUS(st) == KS_EXIT_QUARANTINED;
    uint32_t nf = atomic_load(&s->b->n_faults);
    char line[1200] = "";
    sup_grow_backoff(s, started_ms);
    if (refused)
        say("worker %ld refused to start: a quarantined plugin version "
            "has no earlier good version (replace the file or pass "
            "--quarantine=disable); retrying in %u ms",
            (long)pid, s->backoff);
    else
        say("worker %ld %s outside plugin code; restarting in %u ms",
            (long)pid, how, s->backoff);
    if (nf)
        ks_board_fault_describe(&s->b->faults[(nf - 1) % KS_BOARD_FAULTS],
                                line, sizeof line);
    snprintf(s->why, sizeof s->why,
             "not ready: the worker %s and restarts in %u ms%s%s%s",
             refused ? "refused a quarantined plugin version" : how,
             s->backoff, nf ? "; last plugin fault: " : "", line,
             nf ? " (quarantined; replace the plugin file or pass "
                  "--quarantine=disable)"
                : "");
}

/* After worker `pid` ended with `st`: exit with its status, or set the
 * backoff for the next one. */
static void sup_after_exit(sup_t *s, pid_t pid, int st, int deadline,
                           uint64_t started_ms)
{
    char how[128];
    describe_status(st, how, sizeof how);
    if (s->force_sig) {
        const char *a = sigabbrev_np(s->force_sig);
        fprintf(stderr, "ksched serve: SIG%s again while stopping: exiting "
                        "now (status %d)\n",
                a ? a : "?", 128 + s->force_sig);
        fflush(stderr);
        sup_exit(s, 128 + s->force_sig);
    }
    if (s->stopping) {
        say("worker %ld %s; exiting", (long)pid, how);
        sup_exit(s, status_code(st));
    }
    if (deadline || sup_plugin_crash(s, pid, st, how)) {
        s->backoff = 0; /* the culprit is known: restart at once */
        return;
    }
    if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        if (code == KS_EXIT_OK || code == KS_EXIT_LOST_LEASE ||
            ((code == KS_EXIT_INVALID || code == KS_EXIT_USAGE) &&
             !s->ever_ready))
            sup_exit(s, code);
    }
    sup_back_off(s, pid, st, how, started_ms);
}

int ks_supervisor_run(const ks_supervisor_opts_t *o, char *msg, size_t len)
{
    static sup_t s;
    if (sup_setup(&s, o, msg, len) != 0)
        return -1;
    for (;;) {
        pid_t pid;
        uint64_t started_ms;
        int st, deadline;
        sup_wait_backoff(&s);
        if ((pid = sup_fork(&s)) < 0)
            continue;
        if (pid == 0)
            return 0; /* the worker */
        started_ms = (uint64_t)ks_mono_ms();
        st = sup_watch(&s, pid, &deadline);
        sup_after_exit(&s, pid, st, deadline, started_ms);
    }
}
