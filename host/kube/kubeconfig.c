/* kubeconfig files, in-cluster configuration and credentials; see
 * kubeconfig.h. */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "base/base64.h"
#include "base/buf.h"
#include "base/log.h"
#include "base/mono_clock.h"
#include "base/yaml_doc.h"
#include "base/yaml_node.h"

#define EXEC_EXTENSION "client.authentication.k8s.io/exec"
#define SMALL_FILE_MAX (16u << 20)

int64_t ks_kube_clock_realtime(void *ud)
{
    (void)ud;
    return ks_wall_ms();
}

/* ==== small helpers ==================================================== */

/* Read a whole (small) file. 0 with *buf (malloc'd, NUL-terminated) and
 * *len, or -1 with errno set. */
static int slurp(const char *path, char **buf, size_t *len)
{
    struct stat sb;
    ks_buf_t b = {0};
    char tmp[8192];
    int fd, e;
    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0)
        goto fail;
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        goto fail;
    }
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        if (b.len + (size_t)n > SMALL_FILE_MAX) {
            errno = EFBIG;
            goto fail;
        }
        ks_buf_append(&b, tmp, (size_t)n);
        if (b.oom) {
            errno = ENOMEM;
            goto fail;
        }
    }
    close(fd);
    if (b.data == NULL)
        ks_buf_append(&b, "", 0);
    if (b.oom) {
        ks_buf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    *buf = ks_buf_steal(&b, len);
    return 0;
fail:
    e = errno;
    close(fd);
    ks_buf_free(&b);
    errno = e;
    return -1;
}

/* Can `path` be opened for reading (and is it at most `max` bytes, when
 * max is not 0)? 0, or -1 with errno. */
static int readable(const char *path, off_t max)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode))
        e = EISDIR;
    else if (max > 0 && sb.st_size > max)
        e = EFBIG;
    close(fd);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}

/* Lexically clean an absolute path ("//", "/./", "x/.."), like Go's
 * filepath.Clean. In place: the output never overtakes the input. */
static void clean_path(char *p)
{
    char *out = p + 1, *in = p;
    if (*p != '/')
        return;
    while (*in) {
        char *seg;
        size_t n;
        while (*in == '/')
            in++;
        seg = in;
        while (*in && *in != '/')
            in++;
        n = (size_t)(in - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            /* Drop the last segment written (never above "/"). */
            while (out > p + 1 && out[-1] != '/')
                out--;
            if (out > p + 1)
                out--;
            continue;
        }
        if (out > p + 1)
            *out++ = '/';
        memmove(out, seg, n);
        out += n;
    }
    *out = '\0';
}

/* `rel` against directory `dir` (absolute), cleaned; absolute `rel` is
 * only cleaned. NULL when out of memory. */
static char *join_path(const char *dir, const char *rel)
{
    char *r;
    if (rel[0] == '/')
        r = strdup(rel);
    else if (asprintf(&r, "%s/%s", dir, rel) < 0)
        r = NULL;
    if (r != NULL)
        clean_path(r);
    return r;
}

/* The absolute directory of file `path`; NULL when out of memory. */
static char *abs_dir(const char *path)
{
    char *d, *slash, cwd[4096];
    if (path[0] == '/') {
        d = strdup(path);
    } else {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            snprintf(cwd, sizeof(cwd), "/");
        if (asprintf(&d, "%s/%s", cwd, path) < 0)
            d = NULL;
    }
    if (d == NULL)
        return NULL;
    slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else
        *slash = '\0';
    clean_path(d);
    return d;
}

/* Whitespace trimmed copy (like Go's strings.TrimSpace on ASCII). */
static char *trimmed_copy(const char *s, size_t n)
{
    char *r;
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
                     *s == '\v' || *s == '\f'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
                     s[n - 1] == '\n' || s[n - 1] == '\r' ||
                     s[n - 1] == '\v' || s[n - 1] == '\f'))
        n--;
    r = malloc(n + 1);
    if (r == NULL)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* ==== reading one file ================================================= */

typedef struct kc_file {
    char *path; /* as listed */
    char *dir;  /* absolute directory, for relative paths */
    yaml_document_t doc;
    int have_doc;
    yaml_node_t *root; /* a mapping, or NULL for an empty file */
} kc_file_t;

/* The reader: the file, the error, and the path of the current field
 * ("users[0].user.exec"). */
typedef struct kc_rd {
    kc_file_t *f;
    ks_error_t *err;
    char path[256];
    size_t plen;
} kc_rd_t;

static size_t rd_push(kc_rd_t *r, const char *seg)
{
    size_t old = r->plen;
    int w = snprintf(r->path + r->plen, sizeof(r->path) - r->plen, "%s%s",
                     r->plen ? "." : "", seg);
    if (w > 0)
        r->plen += (size_t)w;
    if (r->plen >= sizeof(r->path))
        r->plen = sizeof(r->path) - 1;
    return old;
}

static size_t rd_push_index(kc_rd_t *r, size_t i)
{
    size_t old = r->plen;
    int w = snprintf(r->path + r->plen, sizeof(r->path) - r->plen, "[%zu]",
                     i);
    if (w > 0)
        r->plen += (size_t)w;
    if (r->plen >= sizeof(r->path))
        r->plen = sizeof(r->path) - 1;
    return old;
}

static void rd_pop(kc_rd_t *r, size_t len)
{
    r->plen = len;
    r->path[len] = '\0';
}

/* "FILE:LINE:COL: PATH: message" (PATH when set). */
static int vfail_at(ks_error_t *err, int code, const kc_file_t *f,
                    const yaml_node_t *n, const char *path, const char *fmt,
                    va_list ap)
{
    char msg[KS_ERROR_MSG_MAX], where[KS_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return ks_error_set(err, code, "%s: %s%s%s",
                        ks_yaml_where(where, sizeof(where), f->path, n),
                        path ? path : "", path && path[0] ? ": " : "", msg);
}

static int fail_at(ks_error_t *err, int code, const kc_file_t *f,
                   const yaml_node_t *n, const char *path, const char *fmt,
                   ...) __attribute__((format(printf, 6, 7)));
static int fail_at(ks_error_t *err, int code, const kc_file_t *f,
                   const yaml_node_t *n, const char *path, const char *fmt,
                   ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail_at(err, code, f, n, path, fmt, ap);
    va_end(ap);
    return rc;
}

static int rd_fail(kc_rd_t *r, const yaml_node_t *n, int code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int rd_fail(kc_rd_t *r, const yaml_node_t *n, int code,
                   const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail_at(r->err, code, r->f, n, r->path, fmt, ap);
    va_end(ap);
    return rc;
}

/* "a string", "a mapping", ... ("nothing" for NULL). */
static const char *kind_of(const yaml_node_t *n)
{
    return ks_yaml_type_name(ks_yaml_type(n));
}

/* Value of `key` in mapping `map` (the last occurrence wins, as Go's JSON
 * decoding); NULL when absent or null. */
static yaml_node_t *rd_get(const kc_rd_t *r, const yaml_node_t *map,
                           const char *key)
{
    yaml_node_t *n = ks_yaml_get(&r->f->doc, map, key);
    return ks_yaml_is_null(n) ? NULL : n;
}

/* A string field: *out NULL when absent, null or "". A plain scalar that
 * YAML reads as a boolean or a number is an error (kubectl cannot decode
 * it into a string either). */
static int rd_str(kc_rd_t *r, const yaml_node_t *map, const char *key,
                  const char **out, yaml_node_t **node)
{
    yaml_node_t *n = rd_get(r, map, key);
    size_t old;
    int rc = 0;
    *out = NULL;
    if (node != NULL)
        *node = n;
    if (n == NULL)
        return 0;
    old = rd_push(r, key);
    if (!ks_yaml_is_scalar(n)) {
        rc = rd_fail(r, n, KS_ESCHEMA, "expected a string, found %s",
                     kind_of(n));
    } else if (ks_yaml_type(n) != KS_YAML_STR) {
        rc = rd_fail(r, n, KS_ESCHEMA,
                     "expected a string, found %s (%s); quote it: \"%s\"",
                     kind_of(n), ks_yaml_text(n), ks_yaml_text(n));
    } else if (memchr(ks_yaml_text(n), '\0', ks_yaml_text_len(n))) {
        rc = rd_fail(r, n, KS_ESCHEMA, "the string contains a NUL character");
    } else if (ks_yaml_text_len(n) > 0) {
        *out = ks_yaml_text(n);
    }
    rd_pop(r, old);
    return rc;
}

/* A boolean field (YAML 1.2 core schema; quoted strings are not
 * booleans). *out keeps its value when absent. */
static int rd_bool(kc_rd_t *r, const yaml_node_t *map, const char *key,
                   int *out, yaml_node_t **node)
{
    yaml_node_t *n = rd_get(r, map, key);
    size_t old;
    int rc = 0;
    if (node != NULL)
        *node = n;
    if (n == NULL)
        return 0;
    old = rd_push(r, key);
    if (!ks_yaml_is_scalar(n)) {
        rc = rd_fail(r, n, KS_ESCHEMA,
                     "expected a boolean (true or false), found %s",
                     kind_of(n));
    } else if (ks_yaml_bool(n, out) != 0) {
        const char *s = ks_yaml_text(n);
        int looks = !strcasecmp(s, "true") || !strcasecmp(s, "false");
        rc = rd_fail(r, n, KS_ESCHEMA,
                     "expected a boolean (true or false), found %s \"%s\"%s%s",
                     ks_yaml_is_quoted(n) ? "the quoted string" : kind_of(n),
                     s, looks ? "; remove the quotes" : "",
                     ks_yaml_bool_hint(n));
    }
    rd_pop(r, old);
    return rc;
}

/* A mapping (want_map) or a sequence, or absent/null: *out NULL. */
static int rd_container(kc_rd_t *r, const yaml_node_t *map, const char *key,
                        int want_map, yaml_node_t **out)
{
    yaml_node_t *n = rd_get(r, map, key);
    int rc;
    size_t old;
    *out = NULL;
    if (n == NULL)
        return 0;
    if (want_map ? ks_yaml_is_map(n) : ks_yaml_is_seq(n)) {
        *out = n;
        return 0;
    }
    old = rd_push(r, key);
    rc = rd_fail(r, n, KS_ESCHEMA, "expected a %s, found %s",
                 want_map ? "mapping" : "sequence", kind_of(n));
    rd_pop(r, old);
    return rc;
}

static int rd_map(kc_rd_t *r, const yaml_node_t *map, const char *key,
                  yaml_node_t **out)
{
    return rd_container(r, map, key, 1, out);
}

static int rd_seq(kc_rd_t *r, const yaml_node_t *map, const char *key,
                  yaml_node_t **out)
{
    return rd_container(r, map, key, 0, out);
}

/* A base64 []byte field, decoded into a malloc'd blob. */
static int rd_data(kc_rd_t *r, const yaml_node_t *map, const char *key,
                   unsigned char **out, size_t *len, yaml_node_t **node)
{
    const char *s;
    yaml_node_t *n;
    ks_error_t e;
    size_t old;
    int rc;
    *out = NULL;
    *len = 0;
    if ((rc = rd_str(r, map, key, &s, &n)) != 0)
        return rc;
    if (node != NULL)
        *node = n;
    if (s == NULL)
        return 0;
    e.code = 0;
    e.msg[0] = '\0';
    rc = ks_base64_decode(s, ks_yaml_text_len(n), out, len, NULL, &e);
    if (rc == KS_ENOMEM)
        return ks_error_set(r->err, KS_ENOMEM, "%s: out of memory",
                            r->f->path);
    if (rc != 0) {
        old = rd_push(r, key);
        rc = rd_fail(r, n, KS_ESCHEMA,
                     "%s; the value must be standard base64 of the PEM "
                     "file (base64 -w0 FILE)",
                     e.msg);
        rd_pop(r, old);
    }
    return rc;
}

/* A sequence of strings into a malloc'd array of pointers into the
 * document. */
static int rd_strings(kc_rd_t *r, const yaml_node_t *map, const char *key,
                      const char ***out, size_t *n_out)
{
    yaml_node_t *seq;
    const char **v;
    size_t i, n, old;
    int rc;
    *out = NULL;
    *n_out = 0;
    if ((rc = rd_seq(r, map, key, &seq)) != 0 || seq == NULL)
        return rc;
    n = ks_yaml_seq_len(seq);
    if (n == 0)
        return 0;
    v = calloc(n, sizeof(*v));
    if (v == NULL)
        return ks_error_set(r->err, KS_ENOMEM, "out of memory");
    old = rd_push(r, key);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(&r->f->doc, seq, i);
        size_t o2 = rd_push_index(r, i);
        ks_yaml_type_t t = ks_yaml_type(it);
        if (t != KS_YAML_STR && t != KS_YAML_NULL) {
            rc = rd_fail(r, it, KS_ESCHEMA, "expected a string, found %s%s",
                         ks_yaml_type_name(t),
                         ks_yaml_is_scalar(it) ? "; quote it" : "");
            free(v);
            return rc;
        }
        v[i] = t == KS_YAML_NULL ? "" : ks_yaml_text(it);
        rd_pop(r, o2);
    }
    rd_pop(r, old);
    *out = v;
    *n_out = n;
    return 0;
}

/* ==== entries ========================================================== */

typedef struct kc_entry {
    const char *name;
    kc_file_t *f;
    size_t idx;
    yaml_node_t *item; /* the list item {name, cluster|context|user} */
    yaml_node_t *body; /* the cluster|context|user mapping; may be NULL */
} kc_entry_t;

typedef struct kc_cluster {
    kc_entry_t at;
    const char *server, *ca, *tls_server_name, *proxy_url;
    unsigned char *ca_data;
    size_t ca_len;
    int insecure, disable_compression;
    yaml_node_t *n_server, *n_ca, *n_ca_data, *n_proxy, *n_insecure;
    yaml_node_t *exec_ext; /* extensions[client.authentication.k8s.io/exec] */
} kc_cluster_t;

typedef struct kc_exec {
    yaml_node_t *node;
    const char *command, *api_version, *install_hint, *interactive_mode;
    const char **args;
    size_t n_args;
    const char **env_names, **env_values;
    yaml_node_t **env_nodes;
    size_t n_env;
    int provide_cluster_info;
    yaml_node_t *n_command, *n_api, *n_mode;
} kc_exec_t;

typedef struct kc_user {
    kc_entry_t at;
    const char *cert, *key, *token, *token_file, *username, *password;
    unsigned char *cert_data, *key_data;
    size_t cert_len, key_len;
    yaml_node_t *n_cert, *n_key, *n_cert_data, *n_key_data, *n_token,
        *n_token_file, *n_username, *n_password;
    int has_exec;
    kc_exec_t exec;
    const char *auth_provider;
    yaml_node_t *n_auth_provider;
} kc_user_t;

typedef struct kc_context {
    kc_entry_t at;
    const char *cluster, *user, *ns;
    yaml_node_t *n_cluster, *n_user, *n_ns;
} kc_context_t;

static void cluster_clear(kc_cluster_t *c)
{
    free(c->ca_data);
    memset(c, 0, sizeof(*c));
}

static void user_clear(kc_user_t *u)
{
    free(u->cert_data);
    free(u->key_data);
    free(u->exec.args);
    free(u->exec.env_names);
    free(u->exec.env_values);
    free(u->exec.env_nodes);
    memset(u, 0, sizeof(*u));
}

static int read_cluster(kc_rd_t *r, yaml_node_t *b, kc_cluster_t *c)
{
    yaml_node_t *exts;
    size_t i, n, old;
    int rc;
    if ((rc = rd_str(r, b, "server", &c->server, &c->n_server)) ||
        (rc = rd_str(r, b, "certificate-authority", &c->ca, &c->n_ca)) ||
        (rc = rd_data(r, b, "certificate-authority-data", &c->ca_data,
                      &c->ca_len, &c->n_ca_data)) ||
        (rc = rd_bool(r, b, "insecure-skip-tls-verify", &c->insecure,
                      &c->n_insecure)) ||
        (rc = rd_str(r, b, "tls-server-name", &c->tls_server_name, NULL)) ||
        (rc = rd_str(r, b, "proxy-url", &c->proxy_url, &c->n_proxy)) ||
        (rc = rd_bool(r, b, "disable-compression", &c->disable_compression,
                      NULL)) ||
        (rc = rd_seq(r, b, "extensions", &exts)))
        return rc;
    n = ks_yaml_seq_len(exts);
    old = rd_push(r, "extensions");
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(&r->f->doc, exts, i);
        const char *name;
        size_t o2 = rd_push_index(r, i);
        if (!ks_yaml_is_map(it))
            return rd_fail(r, it, KS_ESCHEMA, "expected a mapping, found %s",
                           kind_of(it));
        if ((rc = rd_str(r, it, "name", &name, NULL)) != 0)
            return rc;
        if (name != NULL && strcmp(name, EXEC_EXTENSION) == 0)
            c->exec_ext = rd_get(r, it, "extension");
        rd_pop(r, o2);
    }
    rd_pop(r, old);
    return 0;
}

static int read_exec(kc_rd_t *r, yaml_node_t *x, kc_exec_t *e)
{
    yaml_node_t *env;
    size_t i, n, old;
    int rc;
    e->node = x;
    if ((rc = rd_str(r, x, "command", &e->command, &e->n_command)) ||
        (rc = rd_strings(r, x, "args", &e->args, &e->n_args)) ||
        (rc = rd_str(r, x, "apiVersion", &e->api_version, &e->n_api)) ||
        (rc = rd_str(r, x, "installHint", &e->install_hint, NULL)) ||
        (rc = rd_bool(r, x, "provideClusterInfo", &e->provide_cluster_info,
                      NULL)) ||
        (rc = rd_str(r, x, "interactiveMode", &e->interactive_mode,
                     &e->n_mode)) ||
        (rc = rd_seq(r, x, "env", &env)))
        return rc;
    n = ks_yaml_seq_len(env);
    if (n == 0)
        return 0;
    e->env_names = calloc(n, sizeof(char *));
    e->env_values = calloc(n, sizeof(char *));
    e->env_nodes = calloc(n, sizeof(yaml_node_t *));
    if (e->env_names == NULL || e->env_values == NULL || e->env_nodes == NULL)
        return ks_error_set(r->err, KS_ENOMEM, "out of memory");
    e->n_env = n;
    old = rd_push(r, "env");
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(&r->f->doc, env, i);
        size_t o2 = rd_push_index(r, i);
        if (!ks_yaml_is_map(it))
            return rd_fail(r, it, KS_ESCHEMA,
                           "expected a mapping {name, value}, found %s",
                           kind_of(it));
        e->env_nodes[i] = it;
        if ((rc = rd_str(r, it, "name", &e->env_names[i], NULL)) ||
            (rc = rd_str(r, it, "value", &e->env_values[i], NULL)))
            return rc;
        rd_pop(r, o2);
    }
    rd_pop(r, old);
    return 0;
}

static int read_user(kc_rd_t *r, yaml_node_t *b, kc_user_t *u)
{
    yaml_node_t *x, *ap;
    int rc;
    if ((rc = rd_str(r, b, "client-certificate", &u->cert, &u->n_cert)) ||
        (rc = rd_data(r, b, "client-certificate-data", &u->cert_data,
                      &u->cert_len, &u->n_cert_data)) ||
        (rc = rd_str(r, b, "client-key", &u->key, &u->n_key)) ||
        (rc = rd_data(r, b, "client-key-data", &u->key_data, &u->key_len,
                      &u->n_key_data)) ||
        (rc = rd_str(r, b, "token", &u->token, &u->n_token)) ||
        (rc = rd_str(r, b, "tokenFile", &u->token_file, &u->n_token_file)) ||
        (rc = rd_str(r, b, "username", &u->username, &u->n_username)) ||
        (rc = rd_str(r, b, "password", &u->password, &u->n_password)) ||
        (rc = rd_map(r, b, "exec", &x)) ||
        (rc = rd_map(r, b, "auth-provider", &ap)))
        return rc;
    if (x != NULL) {
        size_t old = rd_push(r, "exec");
        u->has_exec = 1;
        rc = read_exec(r, x, &u->exec);
        if (rc != 0)
            return rc;
        rd_pop(r, old);
    }
    if (ap != NULL) {
        size_t old = rd_push(r, "auth-provider");
        u->n_auth_provider = ap;
        rc = rd_str(r, ap, "name", &u->auth_provider, NULL);
        if (rc != 0)
            return rc;
        if (u->auth_provider == NULL)
            u->auth_provider = "";
        rd_pop(r, old);
    }
    return 0;
}

static int read_context(kc_rd_t *r, yaml_node_t *b, kc_context_t *c)
{
    int rc;
    if ((rc = rd_str(r, b, "cluster", &c->cluster, &c->n_cluster)) ||
        (rc = rd_str(r, b, "user", &c->user, &c->n_user)) ||
        (rc = rd_str(r, b, "namespace", &c->ns, &c->n_ns)))
        return rc;
    return 0;
}

/* ==== the merged view ================================================== */

typedef struct kc_all {
    kc_file_t *files;
    size_t n_files;
    kc_cluster_t *clusters;
    size_t n_clusters, cap_clusters;
    kc_user_t *users;
    size_t n_users, cap_users;
    kc_context_t *contexts;
    size_t n_contexts, cap_contexts;
    const char *current_context;
    yaml_node_t *n_current_context;
    kc_file_t *cc_file;
    char label[1024]; /* "/p/config" or "KUBECONFIG (a:b)" for messages */
} kc_all_t;

static void all_free(kc_all_t *a)
{
    size_t i;
    for (i = 0; i < a->n_clusters; i++)
        cluster_clear(&a->clusters[i]);
    for (i = 0; i < a->n_users; i++)
        user_clear(&a->users[i]);
    free(a->clusters);
    free(a->users);
    free(a->contexts);
    for (i = 0; i < a->n_files; i++) {
        if (a->files[i].have_doc)
            yaml_document_delete(&a->files[i].doc);
        free(a->files[i].path);
        free(a->files[i].dir);
    }
    free(a->files);
}

static void *grow(void *arr, size_t *cap, size_t need, size_t size)
{
    void *n;
    size_t c;
    if (need <= *cap)
        return arr;
    c = *cap ? *cap * 2 : 8;
    while (c < need)
        c *= 2;
    n = realloc(arr, c * size);
    if (n == NULL)
        return NULL;
    *cap = c;
    return n;
}

/* Position of an earlier entry for duplicate messages. */
static void entry_pos(const kc_entry_t *e, char *buf, size_t len)
{
    ks_yaml_where(buf, len, e->f->path, e->item);
}

enum { K_CLUSTER, K_CONTEXT, K_USER };
static const char *const list_key[] = {"clusters", "contexts", "users"};
static const char *const body_key[] = {"cluster", "context", "user"};

static kc_entry_t *entry_of(kc_all_t *a, int kind, size_t i)
{
    switch (kind) {
    case K_CLUSTER: return &a->clusters[i].at;
    case K_CONTEXT: return &a->contexts[i].at;
    default: return &a->users[i].at;
    }
}

static size_t count_of(const kc_all_t *a, int kind)
{
    return kind == K_CLUSTER ? a->n_clusters
           : kind == K_CONTEXT ? a->n_contexts
                               : a->n_users;
}

static kc_entry_t *find_entry(kc_all_t *a, int kind, const char *name)
{
    size_t i, n = count_of(a, kind);
    for (i = 0; i < n; i++) {
        kc_entry_t *e = entry_of(a, kind, i);
        if (strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

/* Read list `kind` of file f and merge it into a (first file wins). */
static int read_list(kc_all_t *a, kc_rd_t *r, int kind)
{
    yaml_node_t *seq;
    size_t i, n, old;
    int rc;
    if ((rc = rd_seq(r, r->f->root, list_key[kind], &seq)) != 0)
        return rc;
    n = ks_yaml_seq_len(seq);
    old = rd_push(r, list_key[kind]);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(&r->f->doc, seq, i), *body;
        const char *name;
        kc_entry_t at, *prev;
        union {
            kc_cluster_t c;
            kc_context_t x;
            kc_user_t u;
        } v;
        size_t o2 = rd_push_index(r, i);
        memset(&v, 0, sizeof(v));
        if (!ks_yaml_is_map(it))
            return rd_fail(r, it, KS_ESCHEMA,
                           "expected a mapping {name, %s}, found %s",
                           body_key[kind], kind_of(it));
        if ((rc = rd_str(r, it, "name", &name, NULL)) ||
            (rc = rd_map(r, it, body_key[kind], &body)))
            return rc;
        {
            size_t o3 = rd_push(r, body_key[kind]);
            switch (kind) {
            case K_CLUSTER: rc = read_cluster(r, body, &v.c); break;
            case K_CONTEXT: rc = read_context(r, body, &v.x); break;
            default: rc = read_user(r, body, &v.u); break;
            }
            if (rc != 0) {
                if (kind == K_CLUSTER)
                    cluster_clear(&v.c);
                else if (kind == K_USER)
                    user_clear(&v.u);
                return rc;
            }
            rd_pop(r, o3);
        }
        at.name = name ? name : "";
        at.f = r->f;
        at.idx = i;
        at.item = it;
        at.body = body;
        prev = find_entry(a, kind, at.name);
        if (prev != NULL && prev->f == r->f) {
            char pos[512];
            entry_pos(prev, pos, sizeof(pos));
            if (kind == K_CLUSTER)
                cluster_clear(&v.c);
            else if (kind == K_USER)
                user_clear(&v.u);
            return rd_fail(r, it, KS_ESCHEMA,
                           "duplicate %s name \"%s\" (first defined at %s); "
                           "names must be unique in a file",
                           body_key[kind], at.name, pos);
        }
        if (prev != NULL || name == NULL) {
            /* An earlier file defines this name (it wins), or the entry
             * has no name and can never be referenced. */
            if (kind == K_CLUSTER)
                cluster_clear(&v.c);
            else if (kind == K_USER)
                user_clear(&v.u);
            rd_pop(r, o2);
            continue;
        }
        switch (kind) {
        case K_CLUSTER: {
            kc_cluster_t *na = grow(a->clusters, &a->cap_clusters,
                                    a->n_clusters + 1, sizeof(*na));
            if (na == NULL) {
                cluster_clear(&v.c);
                return ks_error_set(r->err, KS_ENOMEM, "out of memory");
            }
            a->clusters = na;
            v.c.at = at;
            a->clusters[a->n_clusters++] = v.c;
            break;
        }
        case K_CONTEXT: {
            kc_context_t *na = grow(a->contexts, &a->cap_contexts,
                                    a->n_contexts + 1, sizeof(*na));
            if (na == NULL)
                return ks_error_set(r->err, KS_ENOMEM, "out of memory");
            a->contexts = na;
            v.x.at = at;
            a->contexts[a->n_contexts++] = v.x;
            break;
        }
        default: {
            kc_user_t *na = grow(a->users, &a->cap_users, a->n_users + 1,
                                 sizeof(*na));
            if (na == NULL) {
                user_clear(&v.u);
                return ks_error_set(r->err, KS_ENOMEM, "out of memory");
            }
            a->users = na;
            v.u.at = at;
            a->users[a->n_users++] = v.u;
            break;
        }
        }
        rd_pop(r, o2);
    }
    rd_pop(r, old);
    return 0;
}

/* Load the document of f (already checked to be readable) and merge its
 * entries into a. An empty file (or comments only) defines nothing. */
static int load_one(kc_all_t *a, kc_file_t *f, ks_error_t *err)
{
    ks_yaml_problem_t p;
    kc_rd_t r;
    yaml_node_t *root, *cc;
    const char *ccs;
    int rc;

    if (ks_yaml_load_file(f->path, &f->doc, &p) != 0) {
        const char *why;
        switch (p.kind) {
        case KS_YAML_P_EMPTY: return 0;
        case KS_YAML_P_NOMEM:
            return ks_error_set(err, KS_ENOMEM, "%s: out of memory", f->path);
        case KS_YAML_P_EXTRA:
            return ks_yaml_problem_error(
                err, f->path, "a kubeconfig is a single YAML document: ", &p);
        case KS_YAML_P_IO:
            why = strstr(p.msg, ": ");
            return ks_error_set(err, KS_EIO, "cannot read kubeconfig %s: %s",
                                f->path, why ? why + 2 : p.msg);
        case KS_YAML_P_SYNTAX:
            return ks_yaml_problem_error(err, f->path, "malformed YAML: ", &p);
        default: return ks_yaml_problem_error(err, f->path, NULL, &p);
        }
    }
    f->have_doc = 1;
    root = yaml_document_get_root_node(&f->doc);
    if (ks_yaml_is_null(root))
        return 0;
    if (!ks_yaml_is_map(root))
        return fail_at(err, KS_ESCHEMA, f, root, NULL,
                       "expected a kubeconfig (a mapping with clusters, "
                       "contexts, users and current-context), found %s",
                       kind_of(root));
    f->root = root;
    memset(&r, 0, sizeof(r));
    r.f = f;
    r.err = err;
    if ((rc = rd_str(&r, root, "current-context", &ccs, &cc)) != 0)
        return rc;
    if (a->current_context == NULL && ccs != NULL) {
        a->current_context = ccs;
        a->n_current_context = cc;
        a->cc_file = f;
    }
    if ((rc = read_list(a, &r, K_CLUSTER)) != 0 ||
        (rc = read_list(a, &r, K_CONTEXT)) != 0 ||
        (rc = read_list(a, &r, K_USER)) != 0)
        return rc;
    return 0;
}

/* "a, b, c" of the names of `kind`, or "none defined". */
static void names_of(kc_all_t *a, int kind, char *buf, size_t len)
{
    size_t i, n = count_of(a, kind), off = 0;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, len, "no %s defined", list_key[kind]);
        return;
    }
    off = (size_t)snprintf(buf, len, "%s: ", list_key[kind]);
    for (i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                entry_of(a, kind, i)->name);
}

/* ==== building the conn ================================================= */

typedef struct kc_build {
    ks_kube_conn_t *k;
    int oom;
} kc_build_t;

static char *dup_or_null(kc_build_t *b, const char *s)
{
    char *r;
    if (s == NULL)
        return NULL;
    r = strdup(s);
    if (r == NULL)
        b->oom = 1;
    return r;
}

static unsigned char *dup_blob(kc_build_t *b, const unsigned char *d,
                               size_t n)
{
    unsigned char *r;
    if (d == NULL)
        return NULL;
    r = malloc(n + 1);
    if (r == NULL) {
        b->oom = 1;
        return NULL;
    }
    memcpy(r, d, n);
    r[n] = '\0';
    return r;
}

static char *resolved(kc_build_t *b, const kc_file_t *f, const char *p)
{
    char *r;
    if (p == NULL)
        return NULL;
    r = join_path(f->dir, p);
    if (r == NULL)
        b->oom = 1;
    return r;
}

static ks_kube_conn_t *conn_new(void)
{
    ks_kube_conn_t *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return NULL;
    k->now = ks_kube_clock_realtime;
    k->token_file_period_ms = KS_KUBE_TOKEN_FILE_PERIOD_MS;
    return k;
}

/* YAML node to JSON (for the exec extension): plain scalars by the core
 * schema, everything else as strings. */
static json_t *node_to_json(yaml_document_t *d, yaml_node_t *n, int depth)
{
    json_t *j = NULL;
    size_t i, len;
    int64_t iv;
    double dv;
    int bv;
    if (n == NULL || depth > 64)
        return json_null();
    switch (ks_yaml_type(n)) {
    case KS_YAML_MAP:
        j = json_object();
        len = ks_yaml_map_len(n);
        for (i = 0; j != NULL && i < len; i++) {
            const char *k = ks_yaml_text(ks_yaml_map_key(d, n, i));
            if (k == NULL)
                continue;
            if (json_object_set_new(
                    j, k,
                    node_to_json(d, ks_yaml_map_value(d, n, i),
                                 depth + 1)) != 0) {
                json_decref(j);
                j = NULL;
            }
        }
        return j;
    case KS_YAML_SEQ:
        j = json_array();
        len = ks_yaml_seq_len(n);
        for (i = 0; j != NULL && i < len; i++) {
            if (json_array_append_new(
                    j, node_to_json(d, ks_yaml_seq_at(d, n, i), depth + 1)) !=
                0) {
                json_decref(j);
                j = NULL;
            }
        }
        return j;
    case KS_YAML_NULL: return json_null();
    case KS_YAML_BOOL:
        ks_yaml_bool(n, &bv);
        return json_boolean(bv);
    case KS_YAML_INT:
    case KS_YAML_FLOAT:
        /* An integer out of the int64 range is a number. */
        if (ks_yaml_int64(n, &iv) == 0)
            return json_integer((json_int_t)iv);
        if (ks_yaml_double(n, &dv) == 0 && isfinite(dv))
            return json_real(dv);
        return json_string(ks_yaml_text(n)); /* JSON has no inf/nan */
    case KS_YAML_STR:
        return json_stringn(ks_yaml_text(n), ks_yaml_text_len(n));
    default: return json_null();
    }
}

/* spec.cluster of KUBERNETES_EXEC_INFO (client-go ConfigToExecCluster). */
static int exec_cluster_json(kc_file_t *cf, const kc_cluster_t *c,
                             char **out, ks_error_t *err)
{
    json_t *o = json_object();
    unsigned char *ca = NULL;
    char *cafile = NULL, *b64 = NULL;
    size_t ca_len = 0;
    int rc = 0;
    *out = NULL;
    if (o == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (c->ca_data != NULL) {
        ca = c->ca_data;
        ca_len = c->ca_len;
    } else if (c->ca != NULL) {
        char *text;
        if ((cafile = join_path(cf->dir, c->ca)) == NULL) {
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto out;
        }
        if (slurp(cafile, &text, &ca_len) != 0) {
            rc = fail_at(err, KS_EIO, cf, c->n_ca, NULL,
                         "cannot read certificate-authority %s: %s", cafile,
                         strerror(errno));
            goto out;
        }
        ca = (unsigned char *)text;
    }
    if (ca != NULL && (b64 = ks_base64_encode(ca, ca_len)) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto out;
    }
    if (json_object_set_new(o, "server", json_string(c->server)) ||
        (c->tls_server_name &&
         json_object_set_new(o, "tls-server-name",
                             json_string(c->tls_server_name))) ||
        (c->insecure &&
         json_object_set_new(o, "insecure-skip-tls-verify", json_true())) ||
        (b64 && json_object_set_new(o, "certificate-authority-data",
                                    json_string(b64))) ||
        (c->proxy_url &&
         json_object_set_new(o, "proxy-url", json_string(c->proxy_url))) ||
        (c->disable_compression &&
         json_object_set_new(o, "disable-compression", json_true())) ||
        (c->exec_ext &&
         json_object_set_new(o, "config",
                             node_to_json(&cf->doc, c->exec_ext, 0)))) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto out;
    }
    *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (*out == NULL)
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
out:
    if (ca != c->ca_data)
        free(ca);
    free(cafile);
    free(b64);
    json_decref(o);
    return rc;
}

/* The path of entry e's field for messages: "users[2].user.exec". */
static void field_path(const kc_entry_t *e, int kind, const char *field,
                       char *buf, size_t len)
{
    snprintf(buf, len, "%s[%zu].%s%s%s", list_key[kind], e->idx,
             body_key[kind], field ? "." : "", field ? field : "");
}

/* A referenced file must be readable (client-go ConfirmUsable). */
static int check_file(const kc_entry_t *e, int kind, const char *field,
                      const yaml_node_t *n, const char *abs,
                      ks_error_t *err)
{
    char fp[256];
    int en, rel;
    if (readable(abs, 0) == 0)
        return 0;
    en = errno;
    rel = ks_yaml_is_scalar(n) && ks_yaml_text(n)[0] != '/';
    field_path(e, kind, field, fp, sizeof(fp));
    return fail_at(err, KS_EIO, e->f, n, fp, "cannot read %s: %s%s%s%s", abs,
                   strerror(en),
                   rel ? " (a relative path is relative to the directory of "
                         "the kubeconfig file, "
                       : "",
                   rel ? e->f->dir : "", rel ? ")" : "");
}

static int check_cluster(const kc_cluster_t *c, ks_error_t *err)
{
    const kc_entry_t *e = &c->at;
    char fp[256];
    if (c->server == NULL) {
        field_path(e, K_CLUSTER, NULL, fp, sizeof(fp));
        return fail_at(err, KS_ESCHEMA, e->f, e->body ? e->body : e->item, fp,
                       "no server found for cluster \"%s\"; set server: "
                       "https://HOST:PORT",
                       e->name);
    }
    if (c->proxy_url != NULL) {
        const char *sep = strstr(c->proxy_url, "://");
        size_t sl = sep ? (size_t)(sep - c->proxy_url) : 0;
        if (sep == NULL || sep[3] == '\0' ||
            !((sl == 4 && !strncasecmp(c->proxy_url, "http", 4)) ||
              (sl == 5 && !strncasecmp(c->proxy_url, "https", 5)) ||
              (sl == 6 && !strncasecmp(c->proxy_url, "socks5", 6)))) {
            field_path(e, K_CLUSTER, "proxy-url", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, c->n_proxy, fp,
                           "invalid proxy-url \"%s\" for cluster \"%s\": the "
                           "scheme must be http, https, or socks5",
                           c->proxy_url, e->name);
        }
    }
    if (c->ca != NULL && c->ca_data != NULL) {
        field_path(e, K_CLUSTER, "certificate-authority-data", fp,
                   sizeof(fp));
        return fail_at(err, KS_ESCHEMA, e->f, c->n_ca_data, fp,
                       "certificate-authority-data and certificate-authority "
                       "are both set for cluster \"%s\"; keep one",
                       e->name);
    }
    return 0;
}

static int check_user(const kc_user_t *u, ks_error_t *err)
{
    const kc_entry_t *e = &u->at;
    char fp[256];
    if (u->auth_provider != NULL) {
        field_path(e, K_USER, "auth-provider", fp, sizeof(fp));
        return fail_at(err, KS_EAUTH, e->f, u->n_auth_provider, fp,
                       "auth-provider %s is not supported; use an exec "
                       "plugin (users[].user.exec, e.g. "
                       "gke-gcloud-auth-plugin or kubelogin)",
                       u->auth_provider[0] ? u->auth_provider : "(unnamed)");
    }
    if (u->cert != NULL || u->cert_data != NULL) {
        if (u->cert != NULL && u->cert_data != NULL) {
            field_path(e, K_USER, "client-certificate-data", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, u->n_cert_data, fp,
                           "client-certificate-data and client-certificate "
                           "are both set for user \"%s\"; keep one",
                           e->name);
        }
        if (u->key != NULL && u->key_data != NULL) {
            field_path(e, K_USER, "client-key-data", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, u->n_key_data, fp,
                           "client-key-data and client-key are both set for "
                           "user \"%s\"; keep one",
                           e->name);
        }
        if (u->key == NULL && u->key_data == NULL) {
            field_path(e, K_USER, u->cert ? "client-certificate"
                                          : "client-certificate-data",
                       fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f,
                           u->cert ? u->n_cert : u->n_cert_data, fp,
                           "user \"%s\" has a client certificate but no key; "
                           "set client-key or client-key-data",
                           e->name);
        }
    }
    if ((u->token != NULL || u->token_file != NULL) &&
        (u->username != NULL || u->password != NULL)) {
        field_path(e, K_USER, u->username ? "username" : "password", fp,
                   sizeof(fp));
        return fail_at(err, KS_ESCHEMA, e->f,
                       u->username ? u->n_username : u->n_password, fp,
                       "more than one authentication method found for user "
                       "\"%s\": %s and username/password; keep one",
                       e->name, u->token ? "token" : "tokenFile");
    }
    if (u->token != NULL && has_ctl(u->token)) {
        field_path(e, K_USER, "token", fp, sizeof(fp));
        return fail_at(err, KS_ESCHEMA, e->f, u->n_token, fp,
                       "the token contains a control character (line "
                       "break?); it cannot be sent in an HTTP header");
    }
    if (u->has_exec) {
        const kc_exec_t *x = &u->exec;
        size_t i;
        field_path(e, K_USER, "exec", fp, sizeof(fp));
        if (x->command == NULL)
            return fail_at(err, KS_ESCHEMA, e->f, x->node, fp,
                           "command must be specified for user \"%s\" to use "
                           "an exec authentication plugin",
                           e->name);
        if (x->api_version == NULL)
            return fail_at(err, KS_ESCHEMA, e->f, x->node, fp,
                           "apiVersion must be specified for user \"%s\" to "
                           "use an exec authentication plugin; use "
                           KS_EXEC_API_V1 " or " KS_EXEC_API_V1BETA1,
                           e->name);
        if (strcmp(x->api_version, KS_EXEC_API_V1) != 0 &&
            strcmp(x->api_version, KS_EXEC_API_V1BETA1) != 0) {
            field_path(e, K_USER, "exec.apiVersion", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, x->n_api, fp,
                           "\"%s\" is not supported; use " KS_EXEC_API_V1
                           " or v1beta1",
                           x->api_version);
        }
        for (i = 0; i < x->n_env; i++)
            if (x->env_names[i] == NULL) {
                snprintf(fp, sizeof(fp), "users[%zu].user.exec.env[%zu]",
                         e->idx, i);
                return fail_at(err, KS_ESCHEMA, e->f, x->env_nodes[i], fp,
                               "env variable name must be specified for "
                               "user \"%s\" to use an exec plugin",
                               e->name);
            }
        if (x->interactive_mode == NULL) {
            if (strcmp(x->api_version, KS_EXEC_API_V1) == 0)
                return fail_at(err, KS_ESCHEMA, e->f, x->node, fp,
                               "interactiveMode must be specified for user "
                               "\"%s\" to use an exec plugin with %s; set "
                               "interactiveMode: Never (or IfAvailable)",
                               e->name, KS_EXEC_API_V1);
        } else if (strcmp(x->interactive_mode, "Always") == 0) {
            field_path(e, K_USER, "exec.interactiveMode", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, x->n_mode, fp,
                           "Always needs a terminal, and ksched runs exec "
                           "plugins without one (stdin is /dev/null); use "
                           "Never or IfAvailable with a plugin that works "
                           "without a terminal");
        } else if (strcmp(x->interactive_mode, "Never") != 0 &&
                   strcmp(x->interactive_mode, "IfAvailable") != 0) {
            field_path(e, K_USER, "exec.interactiveMode", fp, sizeof(fp));
            return fail_at(err, KS_ESCHEMA, e->f, x->n_mode, fp,
                           "invalid interactiveMode \"%s\"; use Never, "
                           "IfAvailable or Always",
                           x->interactive_mode);
        }
    }
    return 0;
}

/* Strip escape sequences and control characters other than newlines and
 * tabs from an installHint (client-go cleans ANSI codes too). */
static void clean_hint(char *s)
{
    char *o = s;
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c == 0x1b) {
            s++;
            if (*s == '[') {
                s++;
                while (*s && !(*s >= '@' && *s <= '~'))
                    s++;
                if (*s)
                    s++;
            } else if (*s) {
                s++;
            }
            continue;
        }
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            s++;
            continue;
        }
        *o++ = *s++;
    }
    *o = '\0';
}

static int build_exec(kc_build_t *b, const kc_user_t *u,
                      kc_cluster_t *c, ks_error_t *err)
{
    const kc_exec_t *x = &u->exec;
    ks_exec_plugin_t *p = ks_exec_plugin_new();
    size_t i;
    int rc;
    if (p == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    b->k->exec = p;
    p->command = strchr(x->command, '/') ? resolved(b, u->at.f, x->command)
                                         : dup_or_null(b, x->command);
    if (x->n_args > 0) {
        p->args = calloc(x->n_args, sizeof(char *));
        if (p->args == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        p->n_args = x->n_args;
        for (i = 0; i < x->n_args; i++)
            p->args[i] = dup_or_null(b, x->args[i]);
    }
    if (x->n_env > 0) {
        p->env = calloc(x->n_env, sizeof(ks_kube_env_t));
        if (p->env == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        p->n_env = x->n_env;
        for (i = 0; i < x->n_env; i++) {
            p->env[i].name = dup_or_null(b, x->env_names[i]);
            p->env[i].value =
                dup_or_null(b, x->env_values[i] ? x->env_values[i] : "");
        }
    }
    p->api_version = dup_or_null(b, x->api_version);
    p->install_hint = dup_or_null(b, x->install_hint);
    if (p->install_hint != NULL)
        clean_hint(p->install_hint);
    p->provide_cluster_info = x->provide_cluster_info;
    p->interactive_mode =
        x->interactive_mode == NULL ||
                strcmp(x->interactive_mode, "IfAvailable") == 0
            ? KS_EXEC_INTERACTIVE_IF_AVAILABLE
            : KS_EXEC_INTERACTIVE_NEVER;
    p->user = dup_or_null(b, u->at.name);
    p->timeout_ms = KS_EXEC_DEFAULT_TIMEOUT_MS;
    if (x->provide_cluster_info &&
        (rc = exec_cluster_json(c->at.f, c, &p->cluster_json, err)) != 0)
        return rc;
    return 0;
}

/* Read a token file once (load-time check): 0, or an error at node n. */
static int check_token_file(const kc_file_t *f, const yaml_node_t *n,
                            const char *fp, const char *path,
                            ks_error_t *err)
{
    char *text, *tok;
    size_t len;
    int rc = 0;
    if (slurp(path, &text, &len) != 0)
        return f != NULL
                   ? fail_at(err, KS_EAUTH, f, n, fp,
                             "cannot read token file %s: %s", path,
                             strerror(errno))
                   : ks_error_set(err, KS_EAUTH,
                                  "cannot read token file %s: %s", path,
                                  strerror(errno));
    tok = trimmed_copy(text, len);
    free(text);
    if (tok == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (tok[0] == '\0')
        rc = f != NULL ? fail_at(err, KS_EAUTH, f, n, fp,
                                 "token file %s is empty", path)
                       : ks_error_set(err, KS_EAUTH, "token file %s is empty",
                                      path);
    free(tok);
    return rc;
}

static int build_conn(kc_context_t *ctx, kc_cluster_t *c, kc_user_t *u,
                      ks_kube_conn_t **out, ks_error_t *err)
{
    kc_build_t b;
    ks_kube_conn_t *k;
    char fp[256];
    int rc;

    k = conn_new();
    if (k == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    b.k = k;
    b.oom = 0;
    k->source = dup_or_null(&b, ctx->at.f->path);
    k->context = dup_or_null(&b, ctx->at.name);
    k->cluster = dup_or_null(&b, c->at.name);
    k->user = dup_or_null(&b, ctx->user ? ctx->user : "");
    k->namespace = dup_or_null(&b, ctx->ns ? ctx->ns : "default");
    if (strstr(c->server, "://") == NULL) {
        /* client-go: a bare host[:port] without TLS settings in the
         * request config is http://. */
        if (asprintf(&k->server, "http://%s", c->server) < 0) {
            k->server = NULL;
            b.oom = 1;
        }
    } else {
        k->server = dup_or_null(&b, c->server);
    }
    k->tls = k->server != NULL && strncasecmp(k->server, "https://", 8) == 0;
    k->proxy_url = dup_or_null(&b, c->proxy_url);
    k->disable_compression = c->disable_compression;
    if (b.oom)
        goto oom;

    if (!k->tls) {
        if (u != NULL &&
            (u->token || u->token_file || u->username || u->cert ||
             u->cert_data || u->has_exec))
            ks_log(KS_LOGL_WARN,
                   "%s: server %s of cluster \"%s\" is not https://; the "
                   "credentials of user \"%s\" are not sent (as kubectl)",
                   ctx->at.f->path, k->server, c->at.name, u->at.name);
        *out = k;
        return 0;
    }

    /* Server verification. */
    if (c->ca != NULL) {
        k->ca_file = resolved(&b, c->at.f, c->ca);
        if (b.oom)
            goto oom;
        if ((rc = check_file(&c->at, K_CLUSTER, "certificate-authority",
                             c->n_ca, k->ca_file, err)) != 0)
            goto fail;
    }
    k->ca_data = dup_blob(&b, c->ca_data, c->ca_len);
    k->ca_len = c->ca_data ? c->ca_len : 0;
    k->insecure = c->insecure;
    k->tls_server_name = dup_or_null(&b, c->tls_server_name);
    if (b.oom)
        goto oom;
    if (k->insecure && (k->ca_file != NULL || k->ca_data != NULL)) {
        field_path(&c->at, K_CLUSTER, "insecure-skip-tls-verify", fp,
                   sizeof(fp));
        rc = fail_at(err, KS_ESCHEMA, c->at.f, c->n_insecure, fp,
                     "cluster \"%s\" sets insecure-skip-tls-verify and a "
                     "certificate authority; specifying a root certificates "
                     "file with the insecure flag is not allowed, remove one",
                     c->at.name);
        goto fail;
    }
    if (u == NULL) {
        *out = k;
        return 0;
    }

    /* Client certificate. */
    if (u->cert != NULL || u->cert_data != NULL) {
        k->cert_file = resolved(&b, u->at.f, u->cert);
        k->key_file = resolved(&b, u->at.f, u->key);
        k->cert_data = dup_blob(&b, u->cert_data, u->cert_len);
        k->cert_len = u->cert_data ? u->cert_len : 0;
        k->key_data = dup_blob(&b, u->key_data, u->key_len);
        k->key_len = u->key_data ? u->key_len : 0;
        if (b.oom)
            goto oom;
        if ((k->cert_file &&
             (rc = check_file(&u->at, K_USER, "client-certificate", u->n_cert,
                              k->cert_file, err)) != 0) ||
            (k->key_file &&
             (rc = check_file(&u->at, K_USER, "client-key", u->n_key,
                              k->key_file, err)) != 0))
            goto fail;
    }

    /* Tokens and basic auth. */
    k->token = dup_or_null(&b, u->token);
    k->token_file = resolved(&b, u->at.f, u->token_file);
    if (u->username != NULL) {
        k->username = dup_or_null(&b, u->username);
        k->password = dup_or_null(&b, u->password ? u->password : "");
    }
    if (b.oom)
        goto oom;
    if (k->token_file != NULL && k->token == NULL) {
        field_path(&u->at, K_USER, "tokenFile", fp, sizeof(fp));
        if ((rc = check_token_file(u->at.f, u->n_token_file, fp,
                                   k->token_file, err)) != 0)
            goto fail;
    }

    /* The exec plugin, unless client-go would ignore it. */
    if (u->has_exec) {
        if (k->token || k->token_file || k->username || k->cert_file ||
            k->cert_data) {
            ks_log(KS_LOGL_DEBUG,
                   "%s: user \"%s\" has an exec plugin and static "
                   "credentials; the exec plugin is not used (as kubectl)",
                   u->at.f->path, u->at.name);
        } else if ((rc = build_exec(&b, u, c, err)) != 0) {
            goto fail;
        }
        if (b.oom)
            goto oom;
    }
    *out = k;
    return 0;
oom:
    rc = ks_error_set(err, KS_ENOMEM, "out of memory");
fail:
    ks_kube_conn_free(k);
    return rc;
}

/* ==== ks_kubeconfig_load ================================================ */

/* The list of files to read into a->files (paths only). */
static int file_list(kc_all_t *a, const char *path, int *explicit_path,
                     ks_error_t *err)
{
    const char *env = getenv("KUBECONFIG");
    *explicit_path = 0;
    if (path != NULL && path[0] != '\0') {
        *explicit_path = 1;
        if ((a->files = calloc(1, sizeof(kc_file_t))) == NULL ||
            (a->files[0].path = strdup(path)) == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        a->n_files = 1;
        snprintf(a->label, sizeof(a->label), "%s", path);
        return 0;
    }
    if (env != NULL && env[0] != '\0') {
        size_t n = 1, i;
        const char *p;
        for (p = env; *p; p++)
            n += *p == ':';
        if ((a->files = calloc(n, sizeof(kc_file_t))) == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        p = env;
        while (*p) {
            size_t l = strcspn(p, ":");
            int dup = 0;
            for (i = 0; i < a->n_files; i++)
                dup |= strlen(a->files[i].path) == l &&
                       memcmp(a->files[i].path, p, l) == 0;
            if (l > 0 && !dup) {
                if ((a->files[a->n_files].path = strndup(p, l)) == NULL)
                    return ks_error_set(err, KS_ENOMEM, "out of memory");
                a->n_files++;
            }
            p += l;
            if (*p == ':')
                p++;
        }
        snprintf(a->label, sizeof(a->label), "KUBECONFIG (%s)", env);
        if (a->n_files == 0)
            return ks_error_set(err, KS_ENOTFOUND,
                                "KUBECONFIG=\"%s\" names no file; set it to "
                                "a ':'-separated list of kubeconfig files",
                                env);
        return 0;
    }
    env = getenv("HOME");
    if (env == NULL || env[0] == '\0')
        return ks_error_set(err, KS_ENOTFOUND,
                            "no kubeconfig: KUBECONFIG and HOME are not set; "
                            "pass --kubeconfig FILE");
    if ((a->files = calloc(1, sizeof(kc_file_t))) == NULL ||
        asprintf(&a->files[0].path, "%s/.kube/config", env) < 0) {
        if (a->files != NULL)
            a->files[0].path = NULL;
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    a->n_files = 1;
    snprintf(a->label, sizeof(a->label), "%s", a->files[0].path);
    return 0;
}

int ks_kubeconfig_load(const char *path, const char *context,
                       ks_kube_conn_t **out, ks_error_t *err)
{
    kc_all_t a;
    kc_context_t *ctx = NULL;
    kc_cluster_t *cl = NULL;
    kc_user_t *us = NULL;
    const char *want;
    char names[2048], missing[1024];
    size_t i, loaded = 0, moff = 0;
    int explicit_path, rc;

    if (out == NULL)
        return ks_error_set(err, KS_EINVAL, "ks_kubeconfig_load: out is NULL");
    *out = NULL;
    memset(&a, 0, sizeof(a));
    missing[0] = '\0';
    if ((rc = file_list(&a, path, &explicit_path, err)) != 0)
        goto done;
    for (i = 0; i < a.n_files; i++) {
        kc_file_t *f = &a.files[i];
        if (readable(f->path, SMALL_FILE_MAX) != 0) {
            int en = errno;
            if (en == ENOENT && !explicit_path) {
                moff += (size_t)snprintf(missing + moff,
                                         moff < sizeof(missing)
                                             ? sizeof(missing) - moff
                                             : 0,
                                         "%s%s", moff ? ", " : "", f->path);
                if (moff >= sizeof(missing))
                    moff = sizeof(missing);
                continue;
            }
            if (en == ENOMEM)
                rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            else if (en == ENOENT)
                rc = ks_error_set(err, KS_ENOTFOUND,
                                  "kubeconfig %s does not exist", f->path);
            else
                rc = ks_error_set(err, KS_EIO, "cannot read kubeconfig %s: %s",
                                  f->path, strerror(en));
            goto done;
        }
        if ((f->dir = abs_dir(f->path)) == NULL) {
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = load_one(&a, f, err)) != 0)
            goto done;
        loaded++;
    }
    if (loaded == 0) {
        if (a.n_files == 1)
            rc = ks_error_set(err, KS_ENOTFOUND,
                              "no kubeconfig: %s does not exist; pass "
                              "--kubeconfig FILE or set KUBECONFIG (or run "
                              "ksched inside a cluster)",
                              a.files[0].path);
        else
            rc = ks_error_set(err, KS_ENOTFOUND,
                              "no kubeconfig: none of the files in %s "
                              "exists",
                              a.label);
        goto done;
    }

    want = context != NULL && context[0] != '\0' ? context
                                                 : a.current_context;
    if (want == NULL) {
        names_of(&a, K_CONTEXT, names, sizeof(names));
        rc = ks_error_set(err, KS_ESCHEMA,
                          "no current-context in %s; pass --context NAME "
                          "(%s)",
                          a.label, names);
        goto done;
    }
    ctx = (kc_context_t *)find_entry(&a, K_CONTEXT, want);
    if (ctx == NULL) {
        names_of(&a, K_CONTEXT, names, sizeof(names));
        if (context == NULL || context[0] == '\0')
            rc = fail_at(err, KS_ENOTFOUND, a.cc_file, a.n_current_context,
                         "current-context",
                         "context \"%s\" not found in %s (%s)", want,
                         a.label, names);
        else
            rc = ks_error_set(err, KS_ENOTFOUND,
                              "context \"%s\" not found in %s (%s)", want,
                              a.label, names);
        goto done;
    }
    if (ctx->cluster == NULL) {
        char fp[256];
        field_path(&ctx->at, K_CONTEXT, NULL, fp, sizeof(fp));
        rc = fail_at(err, KS_ESCHEMA, ctx->at.f,
                     ctx->at.body ? ctx->at.body : ctx->at.item, fp,
                     "context \"%s\" names no cluster; set %s.cluster",
                     ctx->at.name, fp);
        goto done;
    }
    cl = (kc_cluster_t *)find_entry(&a, K_CLUSTER, ctx->cluster);
    if (cl == NULL) {
        char fp[256];
        names_of(&a, K_CLUSTER, names, sizeof(names));
        field_path(&ctx->at, K_CONTEXT, "cluster", fp, sizeof(fp));
        rc = fail_at(err, KS_ENOTFOUND, ctx->at.f, ctx->n_cluster, fp,
                     "cluster \"%s\" of context \"%s\" not found in %s (%s)",
                     ctx->cluster, ctx->at.name, a.label, names);
        goto done;
    }
    if (ctx->user != NULL) {
        us = (kc_user_t *)find_entry(&a, K_USER, ctx->user);
        if (us == NULL) {
            names_of(&a, K_USER, names, sizeof(names));
            char where[1024];
            ks_log(KS_LOGL_WARN,
                   "%s: user \"%s\" of context \"%s\" not found in "
                   "%s (%s); connecting without credentials, as kubectl "
                   "does",
                   ks_yaml_where(where, sizeof(where), ctx->at.f->path,
                                 ctx->n_user),
                   ctx->user,
                   ctx->at.name, a.label, names);
        }
    }
    if ((rc = check_cluster(cl, err)) != 0 ||
        (us != NULL && (rc = check_user(us, err)) != 0))
        goto done;
    rc = build_conn(ctx, cl, us, out, err);
done:
    all_free(&a);
    return rc;
}

/* ==== in-cluster ========================================================= */

int ks_kubeconfig_in_cluster(const char *sa_dir, ks_kube_conn_t **out,
                             ks_error_t *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *pod_ns = getenv("POD_NAMESPACE");
    char *token_path = NULL, *ca_path = NULL, *ns_path = NULL, *text = NULL;
    ks_kube_conn_t *k = NULL;
    kc_build_t b;
    size_t len;
    int rc = 0;

    if (out == NULL)
        return ks_error_set(err, KS_EINVAL,
                            "ks_kubeconfig_in_cluster: out is NULL");
    *out = NULL;
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
        return ks_error_set(err, KS_ENOTFOUND,
                            "not running inside a Kubernetes cluster: "
                            "KUBERNETES_SERVICE_HOST and "
                            "KUBERNETES_SERVICE_PORT must be set (the kubelet "
                            "sets them in every pod); outside a cluster pass "
                            "--kubeconfig FILE");
    if (sa_dir == NULL || sa_dir[0] == '\0')
        sa_dir = KS_KUBE_SA_DIR;
    if (asprintf(&token_path, "%s/token", sa_dir) < 0) {
        token_path = NULL;
        goto oom;
    }
    if (asprintf(&ca_path, "%s/ca.crt", sa_dir) < 0) {
        ca_path = NULL;
        goto oom;
    }
    if (asprintf(&ns_path, "%s/namespace", sa_dir) < 0) {
        ns_path = NULL;
        goto oom;
    }
    if (readable(token_path, 0) != 0) {
        rc = ks_error_set(err, KS_EIO,
                          "in-cluster configuration: cannot read the service "
                          "account token %s: %s; is a service account token "
                          "mounted (automountServiceAccountToken)?",
                          token_path, strerror(errno));
        goto out;
    }
    if ((rc = check_token_file(NULL, NULL, NULL, token_path, err)) != 0)
        goto out;
    if (readable(ca_path, 0) != 0) {
        rc = ks_error_set(err, KS_EIO,
                          "in-cluster configuration: cannot read the cluster "
                          "CA %s: %s",
                          ca_path, strerror(errno));
        goto out;
    }
    if ((k = conn_new()) == NULL)
        goto oom;
    b.k = k;
    b.oom = 0;
    k->in_cluster = 1;
    k->tls = 1;
    k->source = dup_or_null(&b, sa_dir);
    k->context = dup_or_null(&b, "in-cluster");
    k->cluster = dup_or_null(&b, "");
    k->user = dup_or_null(&b, "serviceaccount");
    if (asprintf(&k->server, strchr(host, ':') ? "https://[%s]:%s"
                                               : "https://%s:%s",
                 host, port) < 0) {
        k->server = NULL;
        b.oom = 1;
    }
    k->ca_file = dup_or_null(&b, ca_path);
    k->token_file = dup_or_null(&b, token_path);
    if (pod_ns != NULL && pod_ns[0] != '\0') {
        k->namespace = dup_or_null(&b, pod_ns);
    } else if (slurp(ns_path, &text, &len) == 0) {
        k->namespace = trimmed_copy(text, len);
        if (k->namespace == NULL)
            b.oom = 1;
        else if (k->namespace[0] == '\0') {
            free(k->namespace);
            k->namespace = NULL;
        }
    } else if (errno == ENOMEM) {
        b.oom = 1;
    }
    if (k->namespace == NULL && !b.oom)
        k->namespace = dup_or_null(&b, "default");
    if (b.oom)
        goto oom;
    *out = k;
    k = NULL;
    goto out;
oom:
    rc = ks_error_set(err, KS_ENOMEM, "out of memory");
out:
    ks_kube_conn_free(k);
    free(text);
    free(token_path);
    free(ca_path);
    free(ns_path);
    return rc;
}

/* ==== credentials ======================================================== */

/* Re-read the token file when needed (see the header). 0, or KS_EAUTH /
 * KS_ENOMEM when there is no token to fall back on. */
static int refresh_token_file(ks_kube_conn_t *k, ks_error_t *err)
{
    struct stat sb;
    int64_t now = k->now(k->now_ud);
    int ok = stat(k->token_file, &sb) == 0, changed, due;
    char *text = NULL, *tok = NULL;
    const char *why = NULL;
    size_t len;
    int en = 0;

    changed = !k->st_.have_stat || ok != k->st_.stat_ok ||
              (ok && (sb.st_dev != k->st_.dev || sb.st_ino != k->st_.ino ||
                      sb.st_size != k->st_.size ||
                      sb.st_mtim.tv_sec != k->st_.mtime.tv_sec ||
                      sb.st_mtim.tv_nsec != k->st_.mtime.tv_nsec));
    due = k->st_.file_token == NULL || k->st_.stale || changed ||
          now < k->st_.read_at_ms ||
          now - k->st_.read_at_ms >= k->token_file_period_ms;
    if (!due)
        return 0;
    k->st_.have_stat = 1;
    k->st_.stat_ok = ok;
    if (ok) {
        k->st_.dev = sb.st_dev;
        k->st_.ino = sb.st_ino;
        k->st_.size = sb.st_size;
        k->st_.mtime = sb.st_mtim;
    }
    k->st_.read_at_ms = now;
    k->token_file_reads++;
    if (slurp(k->token_file, &text, &len) != 0) {
        en = errno;
        if (en == ENOMEM)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        why = strerror(en);
    } else {
        tok = trimmed_copy(text, len);
        free(text);
        if (tok == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        if (tok[0] == '\0')
            why = "the file is empty";
        else if (has_ctl(tok))
            why = "the token contains a control character";
    }
    if (why != NULL) {
        free(tok);
        if (k->st_.file_token != NULL || k->token != NULL) {
            ks_log(KS_LOGL_WARN,
                   "token file %s: %s; keeping the previous token",
                   k->token_file, why);
            return 0;
        }
        return ks_error_set(err, KS_EAUTH, "cannot read token file %s: %s",
                            k->token_file, why);
    }
    free(k->st_.file_token);
    k->st_.file_token = tok;
    return 0;
}

int ks_kube_conn_credentials(ks_kube_conn_t *k, ks_kube_cred_t *out,
                             ks_error_t *err)
{
    const ks_exec_cred_t *ec = NULL;
    const char *bearer = NULL;
    char *want = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    out->authorization = "";
    if (k == NULL)
        return ks_error_set(err, KS_EINVAL, "no connection");
    if (k->tls) {
        if (k->token_file != NULL) {
            if ((rc = refresh_token_file(k, err)) != 0)
                return rc;
            bearer = k->st_.file_token ? k->st_.file_token : k->token;
        } else if (k->token != NULL) {
            bearer = k->token;
        }
        if (bearer == NULL && k->username == NULL && k->exec != NULL) {
            if (k->st_.stale)
                ks_exec_plugin_invalidate(k->exec);
            rc = ks_exec_plugin_get(k->exec, k->now(k->now_ud), &ec, err);
            if (rc != 0)
                return rc;
            if (ec->token != NULL && ec->token[0] != '\0')
                bearer = ec->token;
        }
    }
    k->st_.stale = 0;
    if (bearer != NULL) {
        if (asprintf(&want, "Bearer %s", bearer) < 0)
            want = NULL;
    } else if (k->tls && k->username != NULL) {
        char *up = NULL, *b64 = NULL;
        if (asprintf(&up, "%s:%s", k->username, k->password) >= 0) {
            b64 = ks_base64_encode(up, strlen(up));
            if (b64 != NULL && asprintf(&want, "Basic %s", b64) < 0)
                want = NULL;
        }
        free(up);
        free(b64);
    } else {
        want = strdup("");
    }
    if (want == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (k->st_.auth == NULL || strcmp(k->st_.auth, want) != 0) {
        free(k->st_.auth);
        k->st_.auth = want;
        k->generation++;
    } else {
        free(want);
    }
    if (ec != NULL && ec->cert_pem != NULL) {
        if (k->st_.cert_seen == NULL ||
            strcmp(k->st_.cert_seen, ec->cert_pem) != 0) {
            char *copy = strdup(ec->cert_pem);
            if (copy == NULL)
                return ks_error_set(err, KS_ENOMEM, "out of memory");
            free(k->st_.cert_seen);
            k->st_.cert_seen = copy;
            k->generation++;
        }
        out->cert_pem = ec->cert_pem;
        out->cert_len = ec->cert_len;
        out->key_pem = ec->key_pem;
        out->key_len = ec->key_len;
    } else if (k->st_.cert_seen != NULL) {
        free(k->st_.cert_seen);
        k->st_.cert_seen = NULL;
        k->generation++;
    }
    if (ec != NULL)
        out->expiry_ms = ec->expiry_ms;
    out->authorization = k->st_.auth;
    out->generation = k->generation;
    return 0;
}

void ks_kube_conn_invalidate(ks_kube_conn_t *k)
{
    if (k == NULL)
        return;
    k->st_.stale = 1;
    if (k->exec != NULL)
        ks_exec_plugin_invalidate(k->exec);
}

void ks_kube_conn_free(ks_kube_conn_t *k)
{
    if (k == NULL)
        return;
    free(k->source);
    free(k->context);
    free(k->cluster);
    free(k->user);
    free(k->server);
    free(k->namespace);
    free(k->ca_file);
    free(k->ca_data);
    free(k->tls_server_name);
    free(k->proxy_url);
    free(k->cert_file);
    free(k->cert_data);
    free(k->key_file);
    free(k->key_data);
    free(k->token);
    free(k->token_file);
    free(k->username);
    free(k->password);
    ks_exec_plugin_free(k->exec);
    free(k->st_.file_token);
    free(k->st_.auth);
    free(k->st_.cert_seen);
    free(k);
}

const char *ks_kube_conn_describe(const ks_kube_conn_t *k, char *buf,
                                  size_t len)
{
    if (len == 0)
        return buf;
    if (k == NULL)
        snprintf(buf, len, "(no connection)");
    else if (k->in_cluster)
        snprintf(buf, len, "server %s (in-cluster, service account %s)",
                 k->server, k->source);
    else if (k->user == NULL || k->user[0] == '\0')
        snprintf(buf, len, "server %s (context %s, no user, from %s)",
                 k->server, k->context, k->source);
    else
        snprintf(buf, len, "server %s (context %s, user %s, from %s)",
                 k->server, k->context, k->user, k->source);
    return buf;
}
