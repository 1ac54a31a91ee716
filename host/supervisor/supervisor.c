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

#define TICK_MS 10
#define BACKOFF_MIN_MS 100
#define BACKOFF_RESET_S 60

/* The worker's statuses the supervisor passes on instead of restarting. */
#define EXIT_INVALID 1
#define EXIT_USAGE 2
#define EXIT_LOST_LEASE 4
#define EXIT_QUARANTINED 7 /* the worker refused a quarantined version */

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

/*
 * While no worker runs (a restart backoff), the supervisor itself answers
 * on the worker's TCP address: 503 to every request, saying why, so that
 * /readyz and clients learn the reason instead of a refused connection.
 */
static int stand_in_listen(const char *addr)
{
    char host[160];
    const char *colon = strrchr(addr, ':');
    struct sockaddr_storage ss;
    socklen_t len;
    int fd, one = 1;
    size_t hl;
    if (colon == NULL || addr[0] == '\0')
        return -1;
    memset(&ss, 0, sizeof ss);
    if (addr[0] == '[') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        hl = (size_t)(colon - addr) - 2;
        if (hl >= sizeof host)
            return -1;
        memcpy(host, addr + 1, hl);
        host[hl] = '\0';
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
            return -1;
        len = sizeof *a6;
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        hl = (size_t)(colon - addr);
        if (hl >= sizeof host)
            return -1;
        memcpy(host, addr, hl);
        host[hl] = '\0';
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
            return -1;
        len = sizeof *a4;
    }
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

/* Answer every pending connection 503 with `why`. */
static void stand_in_answer(int lfd, const char *why)
{
    for (;;) {
        char req[4096], resp[2048];
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), n;
        struct pollfd p;
        if (c < 0)
            return;
        /* Read what the request sent (briefly): closing on unread bytes
         * would reset the connection before the answer arrives. */
        p.fd = c;
        p.events = POLLIN;
        if (poll(&p, 1, 200) > 0)
            (void)!read(c, req, sizeof req);
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

int ks_supervisor_run(const ks_supervisor_opts_t *o, char *msg, size_t len)
{
    ks_call_board_t *b = ks_call_board_map_shared();
    sigset_t set, old;
    const char *tmp;
    char keep[256];
    unsigned backoff_max = o && o->backoff_max_ms ? o->backoff_max_ms : 30000;
    unsigned backoff = 0;
    int stopping = 0, ever_ready = 0, stand_in = -1;
    char why[1400] = "";
    uint64_t started_ms = 0;
    pid_t pid = -1;
    ks_deadline_scan_t *scan = calloc(1, sizeof *scan);

    if (b == NULL || scan == NULL) {
        snprintf(msg, len, "cannot map the call board: %s", strerror(errno));
        ks_call_board_unmap(b);
        free(scan);
        return -1;
    }
    tmp = o && o->keep_parent ? o->keep_parent : getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    remove_stale_keep_dirs(tmp);
    snprintf(keep, sizeof keep, "%s/ksched-keep-%ld-XXXXXX", tmp,
             (long)getpid());
    if (mkdtemp(keep) == NULL) {
        snprintf(msg, len, "cannot create a directory for known-good plugin "
                           "copies under %s: %s",
                 tmp, strerror(errno));
        ks_call_board_unmap(b);
        free(scan);
        return -1;
    }
    snprintf(b->keep_dir, sizeof b->keep_dir, "%s", keep);
    atomic_store(&b->supervisor_pid, (int32_t)getpid());

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);

    for (;;) {
        uint64_t restart_at = (uint64_t)ks_mono_ms() + backoff;
        int killed_for_deadline = 0, st = 0;
        char how[128];

        /* Wait out the backoff, still answering signals, and requests
         * with 503 and why. */
        if (backoff >= 2 * TICK_MS && b->listen_addr[0])
            stand_in = stand_in_listen(b->listen_addr);
        while (!stopping && (uint64_t)ks_mono_ms() < restart_at) {
            struct timespec d = {0, TICK_MS * 1000000L};
            int sig = sigtimedwait(&set, NULL, &d);
            if (sig == SIGTERM || sig == SIGINT) {
                say("%s while no worker runs; exiting",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
                if (stand_in >= 0)
                    close(stand_in);
                remove_keep_dir(keep);
                exit(0);
            }
            if (stand_in >= 0)
                stand_in_answer(stand_in, why);
        }
        if (stand_in >= 0) {
            close(stand_in);
            stand_in = -1;
        }
        board_reset_worker(b);
        atomic_fetch_add(&b->worker_starts, 1);
        pid = fork();
        if (pid < 0) {
            say("cannot start a worker: %s; retrying", strerror(errno));
            backoff = backoff ? backoff * 2 : BACKOFF_MIN_MS;
            if (backoff > backoff_max)
                backoff = backoff_max;
            continue;
        }
        if (pid == 0) {
            /* The worker: dies with us, sees the board, gets its signals
             * back. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != (pid_t)atomic_load(&b->supervisor_pid))
                _exit(1); /* the supervisor is already gone */
            sigprocmask(SIG_SETMASK, &old, NULL);
            free(scan);
            ks_call_board_use(b);
            return 0;
        }
        started_ms = (uint64_t)ks_mono_ms();
        memset(scan, 0, sizeof *scan);
        if (atomic_load(&b->worker_starts) > 1)
            say("worker %ld started", (long)pid);

        /* Watch it. */
        for (;;) {
            struct timespec d = {0, TICK_MS * 1000000L};
            siginfo_t si;
            int sig = sigtimedwait(&set, &si, &d), i;
            pid_t w;
            if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
                if (sig != SIGHUP)
                    stopping = 1;
                kill(pid, sig);
            }
            w = waitpid(pid, &st, WNOHANG);
            if (w == pid)
                break;
            if (atomic_load(&b->ready))
                ever_ready = 1;
            if (stopping || killed_for_deadline)
                continue;
            i = ks_deadline_scan(b, scan, (uint64_t)ks_mono_ms());
            if (i >= 0) {
                ks_board_fault_t f;
                char line[1200];
                ks_call_board_fault_from_slot(b, (size_t)i, KS_FAULT_DEADLINE,
                                              0, &f);
                ks_call_board_fault_add(b, &f);
                ks_board_fault_describe(&f, line, sizeof line);
                say("%s; quarantined; replacing worker %ld", line, (long)pid);
                kill(pid, SIGKILL);
                killed_for_deadline = 1;
            }
        }
        if (atomic_load(&b->ready))
            ever_ready = 1;
        describe_status(st, how, sizeof how);

        if (stopping) {
            say("worker %ld %s; exiting", (long)pid, how);
            remove_keep_dir(keep);
            exit(status_code(st));
        }
        if (killed_for_deadline) {
            backoff = 0; /* the culprit is known: restart at once */
            continue;
        }
        if (WIFEXITED(st)) {
            int code = WEXITSTATUS(st);
            if (code == 0 || code == EXIT_LOST_LEASE ||
                ((code == EXIT_INVALID || code == EXIT_USAGE) &&
                 !ever_ready)) {
                remove_keep_dir(keep);
                exit(code);
            }
        }
        if (WIFSIGNALED(st) && atomic_load(&b->crash_slot) > 0 &&
            atomic_load(&b->crash_in_call)) {
            ks_board_fault_t f;
            char line[1200];
            ks_call_board_fault_from_slot(
                b, (size_t)(atomic_load(&b->crash_slot) - 1), KS_FAULT_SIGNAL,
                atomic_load(&b->crash_signo), &f);
            ks_call_board_fault_add(b, &f);
            ks_board_fault_describe(&f, line, sizeof line);
            say("worker %ld %s: %s; quarantined; starting a new worker",
                (long)pid, how, line);
            backoff = 0;
            continue;
        }
        /* Not a plugin's fault: back off. */
        if ((uint64_t)ks_mono_ms() - started_ms > BACKOFF_RESET_S * 1000u)
            backoff = 0;
        backoff = backoff ? backoff * 2 : BACKOFF_MIN_MS;
        if (backoff > backoff_max)
            backoff = backoff_max;
        if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_QUARANTINED)
            say("worker %ld refused to start: a quarantined plugin version "
                "has no earlier good version (replace the file or pass "
                "--quarantine=disable); retrying in %u ms",
                (long)pid, backoff);
        else
            say("worker %ld %s outside plugin code; restarting in %u ms",
                (long)pid, how, backoff);
        {
            /* What the stand-in answers meanwhile: the newest fault when
             * there is one (a quarantined version with nothing to roll
             * back to makes the worker exit), else the status. */
            uint32_t nf = atomic_load(&b->n_faults);
            char line[1200] = "";
            if (nf)
                ks_board_fault_describe(
                    &b->faults[(nf - 1) % KS_BOARD_FAULTS], line,
                    sizeof line);
            snprintf(why, sizeof why,
                     "not ready: the worker %s and restarts in %u ms%s%s%s",
                     WIFEXITED(st) && WEXITSTATUS(st) == EXIT_QUARANTINED
                         ? "refused a quarantined plugin version"
                         : how,
                     backoff, nf ? "; last plugin fault: " : "", line,
                     nf ? " (quarantined; replace the plugin file or pass "
                          "--quarantine=disable)"
                        : "");
        }
    }
}
