/* client-go credential plugins; see exec_credential.h. */
#include "kube/exec_credential.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/json_go.h"
#include "base/log.h"
#include "base/mono_clock.h"
#include "cluster/objects.h"

extern char **environ;

#define EXEC_INFO_ENV "KUBERNETES_EXEC_INFO"
#define STDOUT_MAX (4u << 20)
#define STDERR_TAIL 2048

static const char install_help[] =
    "\n\nIt looks like you are trying to use a client-go credential plugin "
    "that is not installed.\n\nTo learn more about this feature, consult the "
    "documentation available at:\n      "
    "https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
    "#client-go-credential-plugins";

ks_exec_plugin_t *ks_exec_plugin_new(void)
{
    return calloc(1, sizeof(ks_exec_plugin_t));
}

void ks_exec_cred_clear(ks_exec_cred_t *c)
{
    if (c == NULL)
        return;
    free(c->token);
    free(c->cert_pem);
    free(c->key_pem);
    memset(c, 0, sizeof(*c));
}

void ks_exec_plugin_free(ks_exec_plugin_t *p)
{
    size_t i;
    if (p == NULL)
        return;
    free(p->command);
    for (i = 0; i < p->n_args; i++)
        free(p->args[i]);
    free(p->args);
    for (i = 0; i < p->n_env; i++) {
        free(p->env[i].name);
        free(p->env[i].value);
    }
    free(p->env);
    free(p->api_version);
    free(p->install_hint);
    free(p->cluster_json);
    free(p->user);
    ks_exec_cred_clear(&p->cred);
    free(p);
}

void ks_exec_plugin_invalidate(ks_exec_plugin_t *p)
{
    if (p == NULL)
        return;
    ks_exec_cred_clear(&p->cred);
    p->have_cred = 0;
}

/* "/usr/bin/x (user \"u\")" naming the plugin in messages. */
static const char *plugin_name(const ks_exec_plugin_t *p, char *buf,
                               size_t len)
{
    if (p->user != NULL && p->user[0] != '\0')
        snprintf(buf, len, "%s (user \"%s\")", p->command ? p->command : "?",
                 p->user);
    else
        snprintf(buf, len, "%s", p->command ? p->command : "?");
    return buf;
}

/* "exec plugin /usr/bin/x (user \"u\")". */
static const char *who(const ks_exec_plugin_t *p, char *buf, size_t len)
{
    char name[480];
    snprintf(buf, len, "exec plugin %s",
             plugin_name(p, name, sizeof(name)));
    return buf;
}

/* ---- KUBERNETES_EXEC_INFO ------------------------------------------- */

char *ks_exec_info_json(const ks_exec_plugin_t *p)
{
    json_t *root, *spec, *cluster = NULL;
    char *s = NULL;
    if (p->provide_cluster_info && p->cluster_json != NULL) {
        cluster = json_loads(p->cluster_json, 0, NULL);
        if (!json_is_object(cluster)) {
            json_decref(cluster);
            return NULL;
        }
    }
    root = json_object();
    spec = json_object();
    if (root == NULL || spec == NULL ||
        json_object_set_new(root, "apiVersion",
                            json_string(p->api_version ? p->api_version
                                                       : KS_EXEC_API_V1)) ||
        json_object_set_new(root, "kind", json_string("ExecCredential")) ||
        (cluster != NULL && json_object_set(spec, "cluster", cluster)) ||
        json_object_set_new(spec, "interactive", json_false()) ||
        json_object_set(root, "spec", spec))
        goto out;
    s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
    json_decref(cluster);
    json_decref(spec);
    json_decref(root);
    return s;
}

/* ---- parsing the output ---------------------------------------------- */

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* The value of the last key of obj that fills the Go field `field` under
 * encoding/json's case-insensitive matching, or NULL. */
static json_t *gvk_field(json_t *obj, const char *field)
{
    const char *key;
    json_t *v, *found = NULL;
    json_object_foreach(obj, key, v)
    {
        if (ks_gj_key_fills(key, strlen(key), field))
            found = v;
    }
    return found;
}

/* Optional string member `key` of `obj` into a malloc'd copy (*out stays
 * NULL when absent, null or ""). */
static int opt_string(json_t *obj, const char *key, const char *cmd,
                      char **out, size_t *len, ks_error_t *err)
{
    json_t *v = json_object_get(obj, key);
    const char *s;
    size_t n;
    *out = NULL;
    if (len != NULL)
        *len = 0;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return ks_error_set(err, KS_EAUTH,
                            "exec plugin %s returned an ExecCredential whose "
                            "status.%s is not a string",
                            cmd, key);
    s = json_string_value(v);
    n = json_string_length(v);
    if (n == 0)
        return 0;
    if (memchr(s, '\0', n) != NULL)
        return ks_error_set(err, KS_EAUTH,
                            "exec plugin %s returned status.%s with a NUL "
                            "character",
                            cmd, key);
    *out = malloc(n + 1);
    if (*out == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    if (len != NULL)
        *len = n;
    return 0;
}

int ks_exec_credential_parse(const char *json, size_t len,
                             const char *api_version, const char *command,
                             ks_exec_cred_t *out, ks_error_t *err)
{
    json_t *root, *status, *v;
    json_error_t je;
    const char *kind, *av;
    ks_exec_cred_t c;
    size_t i;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    if (command == NULL)
        command = "?";
    for (i = 0; i < len; i++)
        if (json[i] != ' ' && json[i] != '\n' && json[i] != '\r' &&
            json[i] != '\t')
            break;
    if (i == len)
        return ks_error_set(err, KS_EAUTH,
                            "exec plugin %s printed nothing on stdout; it "
                            "must print an ExecCredential (apiVersion %s)",
                            command, api_version);
    root = json_loadb(json, len, 0, &je);
    if (root == NULL)
        return ks_error_set(err, KS_EAUTH,
                            "exec plugin %s: decoding stdout: line %d column "
                            "%d: %s; it must print an ExecCredential as JSON",
                            command, je.line, je.column, je.text);
    if (!json_is_object(root)) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s: decoding stdout: expected a JSON "
                          "object (an ExecCredential)",
                          command);
        goto out;
    }
    /* client-go finds the kind and apiVersion with encoding/json (Go's
     * case-insensitive keys); the rest is decoded case-sensitively. */
    v = gvk_field(root, "kind");
    kind = json_is_string(v) ? json_string_value(v) : NULL;
    v = gvk_field(root, "apiVersion");
    av = json_is_string(v) ? json_string_value(v) : NULL;
    if (kind == NULL || strcmp(kind, "ExecCredential") != 0) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s returned kind \"%s\"; expected "
                          "ExecCredential",
                          command, kind ? kind : "");
        goto out;
    }
    if (av == NULL || strcmp(av, api_version) != 0) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s is configured to use API version "
                          "%s, plugin returned version \"%s\"",
                          command, api_version, av ? av : "");
        goto out;
    }
    status = json_object_get(root, "status");
    if (status == NULL || json_is_null(status)) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s didn't return a status field",
                          command);
        goto out;
    }
    if (!json_is_object(status)) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s returned a status that is not an "
                          "object",
                          command);
        goto out;
    }
    if ((rc = opt_string(status, "token", command, &c.token, NULL, err)) ||
        (rc = opt_string(status, "clientCertificateData", command,
                         &c.cert_pem, &c.cert_len, err)) ||
        (rc = opt_string(status, "clientKeyData", command, &c.key_pem,
                         &c.key_len, err)))
        goto out;
    if (c.token == NULL && c.cert_pem == NULL && c.key_pem == NULL) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s didn't return a token or cert/key "
                          "pair",
                          command);
        goto out;
    }
    if ((c.cert_pem == NULL) != (c.key_pem == NULL)) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s returned only certificate or key, "
                          "not both",
                          command);
        goto out;
    }
    if (c.token != NULL && has_ctl(c.token)) {
        rc = ks_error_set(err, KS_EAUTH,
                          "exec plugin %s returned a token with a control "
                          "character (line break?); it cannot be sent in an "
                          "Authorization header",
                          command);
        goto out;
    }
    v = json_object_get(status, "expirationTimestamp");
    if (v != NULL && !json_is_null(v)) {
        const char *ts = json_string_value(v);
        if (ts == NULL) {
            rc = ks_error_set(err, KS_EAUTH,
                              "exec plugin %s returned an "
                              "expirationTimestamp that is not a string",
                              command);
            goto out;
        }
        if (ts[0] != '\0' && ks_rfc3339_parse(ts, &c.expiry_ms) != 0) {
            rc = ks_error_set(err, KS_EAUTH,
                              "exec plugin %s returned expirationTimestamp "
                              "\"%s\", which is not an RFC 3339 time "
                              "(2006-01-02T15:04:05Z)",
                              command, ts);
            goto out;
        }
    }
    if (c.token == NULL && (c.token = strdup("")) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto out;
    }
    *out = c;
    memset(&c, 0, sizeof(c));
out:
    ks_exec_cred_clear(&c);
    json_decref(root);
    return rc;
}

/* ---- running the plugin ---------------------------------------------- */

static void free_strv(char **v)
{
    size_t i;
    if (v == NULL)
        return;
    for (i = 0; v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

/* ksched's environment without the names the plugin config sets, then the
 * config's entries (a later duplicate wins, as Go's os/exec), then
 * KUBERNETES_EXEC_INFO. */
static char **build_env(const ks_exec_plugin_t *p, const char *info)
{
    size_t n = 0, i, j, o = 0;
    char **v;
    for (i = 0; environ != NULL && environ[i] != NULL; i++)
        n++;
    v = calloc(n + p->n_env + 2, sizeof(char *));
    if (v == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *e = environ[i];
        size_t nl = strcspn(e, "=");
        int skip = nl == strlen(EXEC_INFO_ENV) &&
                   memcmp(e, EXEC_INFO_ENV, nl) == 0;
        for (j = 0; !skip && j < p->n_env; j++)
            skip = strlen(p->env[j].name) == nl &&
                   memcmp(e, p->env[j].name, nl) == 0;
        if (skip)
            continue;
        if ((v[o++] = strdup(e)) == NULL)
            goto oom;
    }
    for (i = 0; i < p->n_env; i++) {
        int later = 0;
        for (j = i + 1; j < p->n_env; j++)
            later |= strcmp(p->env[i].name, p->env[j].name) == 0;
        if (later || strcmp(p->env[i].name, EXEC_INFO_ENV) == 0)
            continue;
        if (asprintf(&v[o], "%s=%s", p->env[i].name,
                     p->env[i].value ? p->env[i].value : "") < 0) {
            v[o] = NULL;
            goto oom;
        }
        o++;
    }
    if (asprintf(&v[o], "%s=%s", EXEC_INFO_ENV, info) < 0) {
        v[o] = NULL;
        goto oom;
    }
    return v;
oom:
    free_strv(v);
    return NULL;
}

typedef struct run_io {
    ks_buf_t out;
    char tail[STDERR_TAIL];
    size_t tail_len;
    int tail_cut;
} run_io_t;

static void keep_tail(run_io_t *io, const char *d, size_t n)
{
    if (n >= sizeof(io->tail)) {
        memcpy(io->tail, d + n - sizeof(io->tail), sizeof(io->tail));
        io->tail_len = sizeof(io->tail);
        io->tail_cut = 1;
        return;
    }
    if (io->tail_len + n > sizeof(io->tail)) {
        size_t drop = io->tail_len + n - sizeof(io->tail);
        memmove(io->tail, io->tail + drop, io->tail_len - drop);
        io->tail_len -= drop;
        io->tail_cut = 1;
    }
    memcpy(io->tail + io->tail_len, d, n);
    io->tail_len += n;
}

static void pass_stderr(const char *d, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, d, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        d += w;
        n -= (size_t)w;
    }
}

/* "; stderr: ..." (trimmed) into buf, or "" when the plugin wrote none. */
static const char *stderr_note(const run_io_t *io, char *buf, size_t len)
{
    size_t n = io->tail_len;
    while (n > 0 && (io->tail[n - 1] == '\n' || io->tail[n - 1] == '\r' ||
                     io->tail[n - 1] == ' ' || io->tail[n - 1] == '\t'))
        n--;
    if (n == 0) {
        snprintf(buf, len, "; it wrote nothing on stderr");
        return buf;
    }
    snprintf(buf, len, "; stderr: %s%.*s", io->tail_cut ? "..." : "", (int)n,
             io->tail);
    return buf;
}

static void kill_and_reap(pid_t pid)
{
    int st;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

static int spawn_error(const ks_exec_plugin_t *p, int e, ks_error_t *err)
{
    char w[512];
    who(p, w, sizeof(w));
    if (e == ENOENT)
        return ks_error_set(
            err, KS_EAUTH, "%s: exec: executable %s not found%s%s%s%s", w,
            p->command,
            strchr(p->command, '/') ? "" : " in PATH", install_help,
            p->install_hint && p->install_hint[0] ? "\n\n" : "",
            p->install_hint ? p->install_hint : "");
    if (e == EACCES)
        return ks_error_set(err, KS_EAUTH,
                            "%s: exec: %s is not executable (permission "
                            "denied); chmod +x it",
                            w, p->command);
    if (e == ENOEXEC)
        return ks_error_set(err, KS_EAUTH,
                            "%s: exec: %s is not a program the system can "
                            "run (a script needs a #! line)",
                            w, p->command);
    return ks_error_set(err, KS_EIO, "%s: exec: starting %s: %s", w,
                        p->command, strerror(e));
}

/* The program to run for `cmd`, as Go's exec.LookPath: a command with a
 * '/' as is, otherwise the first executable regular file of that name in
 * ksched's PATH. 0 with *out (malloc'd), or an errno (ENOENT, EACCES,
 * ENOMEM). Checking first, rather than relying on posix_spawnp's error,
 * gives the same answer where spawn cannot report exec failures. */
static int look_path(const char *cmd, char **out)
{
    struct stat sb;
    const char *path, *p;
    int seen_eacces = 0;
    *out = NULL;
    if (strchr(cmd, '/') != NULL) {
        if (stat(cmd, &sb) != 0)
            return errno;
        if (S_ISDIR(sb.st_mode) || (sb.st_mode & 0111) == 0)
            return EACCES;
        *out = strdup(cmd);
        return *out ? 0 : ENOMEM;
    }
    path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path; *p;) {
        size_t n = strcspn(p, ":");
        char *full;
        if (n > 0) {
            if (asprintf(&full, "%.*s/%s", (int)n, p, cmd) < 0)
                return ENOMEM;
            if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
                if ((sb.st_mode & 0111) != 0 && access(full, X_OK) == 0) {
                    *out = full;
                    return 0;
                }
                seen_eacces = 1;
            }
            free(full);
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return seen_eacces ? EACCES : ENOENT;
}

/* Read the child's stdout and stderr until both close or the deadline.
 * Returns 0, KS_ETIMEDOUT, KS_EAUTH (too much output), KS_ENOMEM. */
static int pump(int out_fd, int err_fd, int64_t deadline, run_io_t *io)
{
    struct pollfd fds[2];
    int open_fds = 2;
    char tmp[16384];
    fds[0].fd = out_fd;
    fds[1].fd = err_fd;
    fds[0].events = fds[1].events = POLLIN;
    while (open_fds > 0) {
        int64_t left = deadline - ks_mono_ms();
        int i, r;
        if (left <= 0)
            return KS_ETIMEDOUT;
        r = poll(fds, 2, left > 60000 ? 60000 : (int)left);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return KS_EIO;
        }
        for (i = 0; i < 2; i++) {
            ssize_t n;
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            n = read(fds[i].fd, tmp, sizeof(tmp));
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0) {
                if (io->out.len + (size_t)n > STDOUT_MAX)
                    return KS_EAUTH;
                ks_buf_append(&io->out, tmp, (size_t)n);
                if (io->out.oom)
                    return KS_ENOMEM;
            } else {
                pass_stderr(tmp, (size_t)n);
                keep_tail(io, tmp, (size_t)n);
            }
        }
    }
    return 0;
}

/* Wait for `pid` until the deadline; 0 with *status, or KS_ETIMEDOUT. */
static int wait_until(pid_t pid, int64_t deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        struct timespec ts = {0, 2 * 1000 * 1000};
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return KS_EIO;
        if (ks_mono_ms() >= deadline)
            return KS_ETIMEDOUT;
        nanosleep(&ts, NULL);
    }
}

/* The child's file actions (stdin from /dev/null, stdout and stderr into
 * the pipes' write ends) and attributes (its own process group, no signal
 * blocked, the signals a host may catch back to their defaults). *have_fa
 * and *have_at say what the caller must destroy, whatever the result. */
static int spawn_setup(posix_spawn_file_actions_t *fa, int *have_fa,
                       posix_spawnattr_t *at, int *have_at, int out_w,
                       int err_w, const char *w, ks_error_t *err)
{
    sigset_t none, def;
    int e;
    if (posix_spawn_file_actions_init(fa) != 0)
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", w);
    *have_fa = 1;
    if (posix_spawnattr_init(at) != 0)
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", w);
    *have_at = 1;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    sigaddset(&def, SIGQUIT);
    sigaddset(&def, SIGCHLD);
    sigaddset(&def, SIGUSR1);
    sigaddset(&def, SIGUSR2);
    if ((e = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null",
                                              O_RDONLY, 0)) != 0 ||
        (e = posix_spawn_file_actions_adddup2(fa, out_w, STDOUT_FILENO)) != 0 ||
        (e = posix_spawn_file_actions_adddup2(fa, err_w, STDERR_FILENO)) != 0 ||
        (e = posix_spawnattr_setsigmask(at, &none)) != 0 ||
        (e = posix_spawnattr_setsigdefault(at, &def)) != 0 ||
        (e = posix_spawnattr_setpgroup(at, 0)) != 0 ||
        (e = posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP |
                                              POSIX_SPAWN_SETSIGMASK |
                                              POSIX_SPAWN_SETSIGDEF)) != 0)
        return ks_error_set(err, e == ENOMEM ? KS_ENOMEM : KS_EIO,
                            "%s: preparing to start it: %s", w, strerror(e));
    return 0;
}

/* The message for a run that pump or wait_until ended with `rc` (the
 * child killed since); `e`: errno at that moment. */
static int run_error(int rc, int e, int64_t timeout, run_io_t *io,
                     const char *w, ks_error_t *err)
{
    char note[STDERR_TAIL + 64];
    if (rc == KS_ETIMEDOUT)
        return ks_error_set(err, KS_ETIMEDOUT,
                            "%s did not finish within %.3g s; it was "
                            "killed%s",
                            w, (double)timeout / 1000.0,
                            stderr_note(io, note, sizeof(note)));
    if (rc == KS_EAUTH)
        return ks_error_set(err, KS_EAUTH,
                            "%s printed more than %u bytes on stdout; it "
                            "was killed",
                            w, STDOUT_MAX);
    if (rc == KS_ENOMEM)
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", w);
    return ks_error_set(err, KS_EIO,
                        "%s: lost track of the process (%s); was it "
                        "reaped by another SIGCHLD handler?",
                        w, strerror(e));
}

/* 0 when the child exited with status 0, else the error that says how
 * it ended. */
static int exit_error(const ks_exec_plugin_t *p, int status, run_io_t *io,
                      const char *w, ks_error_t *err)
{
    char note[STDERR_TAIL + 64];
    if (WIFSIGNALED(status))
        return ks_error_set(err, KS_EAUTH,
                            "%s: exec: executable %s was killed by signal "
                            "%d (%s)%s",
                            w, p->command, WTERMSIG(status),
                            strsignal(WTERMSIG(status)),
                            stderr_note(io, note, sizeof(note)));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return ks_error_set(err, KS_EAUTH,
                            "%s: exec: executable %s failed with exit code "
                            "%d%s",
                            w, p->command,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                            stderr_note(io, note, sizeof(note)));
    return 0;
}

int ks_exec_plugin_run(const ks_exec_plugin_t *p, ks_exec_cred_t *out,
                       ks_error_t *err)
{
    char w[512];
    char *info = NULL, **envp = NULL, **argv = NULL, *prog = NULL;
    int outp[2] = {-1, -1}, errp[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int have_fa = 0, have_at = 0, rc, status = 0, e;
    int64_t timeout, deadline;
    pid_t pid = -1;
    run_io_t *io;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (p == NULL || p->command == NULL || p->command[0] == '\0')
        return ks_error_set(err, KS_EINVAL, "exec plugin has no command");
    who(p, w, sizeof(w));
    timeout = p->timeout_ms > 0 ? p->timeout_ms : KS_EXEC_DEFAULT_TIMEOUT_MS;
    io = calloc(1, sizeof(*io));
    if (io == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if ((info = ks_exec_info_json(p)) == NULL ||
        (envp = build_env(p, info)) == NULL ||
        (argv = calloc(p->n_args + 2, sizeof(char *))) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "%s: out of memory", w);
        goto out;
    }
    argv[0] = p->command;
    for (i = 0; i < p->n_args; i++)
        argv[i + 1] = p->args[i];
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        rc = ks_error_set(err, KS_EIO, "%s: pipe: %s", w, strerror(errno));
        goto out;
    }
    if ((rc = spawn_setup(&fa, &have_fa, &at, &have_at, outp[1], errp[1], w,
                          err)) != 0)
        goto out;
    if ((e = look_path(p->command, &prog)) != 0) {
        rc = e == ENOMEM ? ks_error_set(err, KS_ENOMEM, "%s: out of memory", w)
                         : spawn_error(p, e, err);
        goto out;
    }
    deadline = ks_mono_ms() + timeout;
    e = posix_spawn(&pid, prog, &fa, &at, argv, envp);
    if (e != 0) {
        pid = -1;
        rc = spawn_error(p, e, err);
        goto out;
    }
    close(outp[1]);
    close(errp[1]);
    outp[1] = errp[1] = -1;

    rc = pump(outp[0], errp[0], deadline, io);
    if (rc == 0)
        rc = wait_until(pid, deadline, &status);
    if (rc != 0) {
        e = errno;
        kill_and_reap(pid);
        pid = -1;
        rc = run_error(rc, e, timeout, io, w, err);
        goto out;
    }
    pid = -1;
    if ((rc = exit_error(p, status, io, w, err)) != 0)
        goto out;
    rc = ks_exec_credential_parse(io->out.data ? io->out.data : "",
                                  io->out.len, p->api_version,
                                  plugin_name(p, w, sizeof(w)), out, err);
out:
    if (pid > 0)
        kill_and_reap(pid);
    if (have_fa)
        posix_spawn_file_actions_destroy(&fa);
    if (have_at)
        posix_spawnattr_destroy(&at);
    for (i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    ks_buf_free(&io->out);
    free(io);
    free(argv);
    free(prog);
    free_strv(envp);
    free(info);
    return rc;
}

int ks_exec_plugin_get(ks_exec_plugin_t *p, int64_t now_ms,
                       const ks_exec_cred_t **out, ks_error_t *err)
{
    ks_exec_cred_t c;
    int rc;
    *out = NULL;
    if (p->have_cred &&
        (p->cred.expiry_ms == 0 || now_ms <= p->cred.expiry_ms)) {
        *out = &p->cred;
        return 0;
    }
    ks_exec_plugin_invalidate(p);
    p->runs++;
    rc = ks_exec_plugin_run(p, &c, err);
    if (rc != 0)
        return rc;
    if (c.expiry_ms != 0 && c.expiry_ms < now_ms)
        ks_log(KS_LOGL_WARN,
               "exec plugin %s returned a credential that already expired "
               "(expirationTimestamp is %.3f s in the past); it will run "
               "again on every request",
               p->command, (double)(now_ms - c.expiry_ms) / 1000.0);
    p->cred = c;
    p->have_cred = 1;
    *out = &p->cred;
    return 0;
}
