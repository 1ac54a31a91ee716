/* kubeconfig files: reading each one, merging them as client-go does, and
 * choosing the context (kubeconfig.h); the connection is built from it by
 * conn_build.c. */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/log.h"
#include "base/yaml_doc.h"
#include "base/yaml_node.h"
#include "base/yaml_read.h"
#include "kube/kube_file.h"
#include "kube/kubeconfig_impl.h"

#define EXEC_EXTENSION "client.authentication.k8s.io/exec"

/* ==== reading one file ================================================= */

/* The reader of one file: the base YAML reader and the file. */
typedef struct kc_rd {
    ks_yread_t y;
    kc_file_t *f;
} kc_rd_t;

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
    if ((rc = ks_yread_str(&r->y, b, "server", &c->server, &c->n_server)) ||
        (rc = ks_yread_str(&r->y, b, "certificate-authority", &c->ca,
                           &c->n_ca)) ||
        (rc = ks_yread_bytes(&r->y, b, "certificate-authority-data",
                             &c->ca_data, &c->ca_len, &c->n_ca_data)) ||
        (rc = ks_yread_bool(&r->y, b, "insecure-skip-tls-verify", &c->insecure,
                            &c->n_insecure)) ||
        (rc = ks_yread_str(&r->y, b, "tls-server-name", &c->tls_server_name,
                           NULL)) ||
        (rc = ks_yread_str(&r->y, b, "proxy-url", &c->proxy_url,
                           &c->n_proxy)) ||
        (rc = ks_yread_bool(&r->y, b, "disable-compression",
                            &c->disable_compression, NULL)) ||
        (rc = ks_yread_seq(&r->y, b, "extensions", &exts)))
        return rc;
    n = ks_yaml_seq_len(exts);
    old = ks_yread_push(&r->y, "extensions");
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(r->y.doc, exts, i);
        const char *name;
        size_t o2 = ks_yread_push_index(&r->y, i);
        if (!ks_yaml_is_map(it))
            return ks_yread_fail(&r->y, it, KS_ESCHEMA,
                                 "expected a mapping, found %s",
                                 ks_yaml_type_name(ks_yaml_type(it)));
        if ((rc = ks_yread_str(&r->y, it, "name", &name, NULL)) != 0)
            return rc;
        if (name != NULL && strcmp(name, EXEC_EXTENSION) == 0)
            c->exec_ext = ks_yread_get(&r->y, it, "extension");
        ks_yread_pop(&r->y, o2);
    }
    ks_yread_pop(&r->y, old);
    return 0;
}

static int read_exec(kc_rd_t *r, yaml_node_t *x, kc_exec_t *e)
{
    yaml_node_t *env;
    size_t i, n, old;
    int rc;
    e->node = x;
    if ((rc = ks_yread_str(&r->y, x, "command", &e->command, &e->n_command)) ||
        (rc = ks_yread_strings(&r->y, x, "args", &e->args, &e->n_args)) ||
        (rc = ks_yread_str(&r->y, x, "apiVersion", &e->api_version,
                           &e->n_api)) ||
        (rc = ks_yread_str(&r->y, x, "installHint", &e->install_hint, NULL)) ||
        (rc = ks_yread_bool(&r->y, x, "provideClusterInfo",
                            &e->provide_cluster_info, NULL)) ||
        (rc = ks_yread_str(&r->y, x, "interactiveMode", &e->interactive_mode,
                           &e->n_mode)) ||
        (rc = ks_yread_seq(&r->y, x, "env", &env)))
        return rc;
    n = ks_yaml_seq_len(env);
    if (n == 0)
        return 0;
    e->env_names = calloc(n, sizeof(char *));
    e->env_values = calloc(n, sizeof(char *));
    e->env_nodes = calloc(n, sizeof(yaml_node_t *));
    if (e->env_names == NULL || e->env_values == NULL || e->env_nodes == NULL)
        return ks_error_set(r->y.err, KS_ENOMEM, "out of memory");
    e->n_env = n;
    old = ks_yread_push(&r->y, "env");
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(r->y.doc, env, i);
        size_t o2 = ks_yread_push_index(&r->y, i);
        if (!ks_yaml_is_map(it))
            return ks_yread_fail(&r->y, it, KS_ESCHEMA,
                                 "expected a mapping {name, value}, found %s",
                                 ks_yaml_type_name(ks_yaml_type(it)));
        e->env_nodes[i] = it;
        if ((rc = ks_yread_str(&r->y, it, "name", &e->env_names[i], NULL)) ||
            (rc = ks_yread_str(&r->y, it, "value", &e->env_values[i], NULL)))
            return rc;
        ks_yread_pop(&r->y, o2);
    }
    ks_yread_pop(&r->y, old);
    return 0;
}

static int read_user(kc_rd_t *r, yaml_node_t *b, kc_user_t *u)
{
    yaml_node_t *x, *ap;
    int rc;
    if ((rc = ks_yread_str(&r->y, b, "client-certificate", &u->cert,
                           &u->n_cert)) ||
        (rc = ks_yread_bytes(&r->y, b, "client-certificate-data",
                             &u->cert_data, &u->cert_len, &u->n_cert_data)) ||
        (rc = ks_yread_str(&r->y, b, "client-key", &u->key, &u->n_key)) ||
        (rc = ks_yread_bytes(&r->y, b, "client-key-data", &u->key_data,
                             &u->key_len, &u->n_key_data)) ||
        (rc = ks_yread_str(&r->y, b, "token", &u->token, &u->n_token)) ||
        (rc = ks_yread_str(&r->y, b, "tokenFile", &u->token_file,
                           &u->n_token_file)) ||
        (rc = ks_yread_str(&r->y, b, "username", &u->username,
                           &u->n_username)) ||
        (rc = ks_yread_str(&r->y, b, "password", &u->password,
                           &u->n_password)) ||
        (rc = ks_yread_map(&r->y, b, "exec", &x)) ||
        (rc = ks_yread_map(&r->y, b, "auth-provider", &ap)))
        return rc;
    if (x != NULL) {
        size_t old = ks_yread_push(&r->y, "exec");
        u->has_exec = 1;
        rc = read_exec(r, x, &u->exec);
        if (rc != 0)
            return rc;
        ks_yread_pop(&r->y, old);
    }
    if (ap != NULL) {
        size_t old = ks_yread_push(&r->y, "auth-provider");
        u->n_auth_provider = ap;
        rc = ks_yread_str(&r->y, ap, "name", &u->auth_provider, NULL);
        if (rc != 0)
            return rc;
        if (u->auth_provider == NULL)
            u->auth_provider = "";
        ks_yread_pop(&r->y, old);
    }
    return 0;
}

static int read_context(kc_rd_t *r, yaml_node_t *b, kc_context_t *c)
{
    int rc;
    if ((rc = ks_yread_str(&r->y, b, "cluster", &c->cluster, &c->n_cluster)) ||
        (rc = ks_yread_str(&r->y, b, "user", &c->user, &c->n_user)) ||
        (rc = ks_yread_str(&r->y, b, "namespace", &c->ns, &c->n_ns)))
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
    if ((rc = ks_yread_seq(&r->y, r->f->root, kc_list_key(kind), &seq)) != 0)
        return rc;
    n = ks_yaml_seq_len(seq);
    old = ks_yread_push(&r->y, kc_list_key(kind));
    for (i = 0; i < n; i++) {
        yaml_node_t *it = ks_yaml_seq_at(r->y.doc, seq, i), *body;
        const char *name;
        kc_entry_t at, *prev;
        union {
            kc_cluster_t c;
            kc_context_t x;
            kc_user_t u;
        } v;
        size_t o2 = ks_yread_push_index(&r->y, i);
        memset(&v, 0, sizeof(v));
        if (!ks_yaml_is_map(it))
            return ks_yread_fail(&r->y, it, KS_ESCHEMA,
                                 "expected a mapping {name, %s}, found %s",
                                 kc_body_key(kind),
                                 ks_yaml_type_name(ks_yaml_type(it)));
        if ((rc = ks_yread_str(&r->y, it, "name", &name, NULL)) ||
            (rc = ks_yread_map(&r->y, it, kc_body_key(kind), &body)))
            return rc;
        {
            size_t o3 = ks_yread_push(&r->y, kc_body_key(kind));
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
            ks_yread_pop(&r->y, o3);
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
            return ks_yread_fail(
                &r->y, it, KS_ESCHEMA,
                "duplicate %s name \"%s\" (first defined at %s); "
                "names must be unique in a file",
                kc_body_key(kind), at.name, pos);
        }
        if (prev != NULL || name == NULL) {
            /* An earlier file defines this name (it wins), or the entry
             * has no name and can never be referenced. */
            if (kind == K_CLUSTER)
                cluster_clear(&v.c);
            else if (kind == K_USER)
                user_clear(&v.u);
            ks_yread_pop(&r->y, o2);
            continue;
        }
        switch (kind) {
        case K_CLUSTER: {
            kc_cluster_t *na = grow(a->clusters, &a->cap_clusters,
                                    a->n_clusters + 1, sizeof(*na));
            if (na == NULL) {
                cluster_clear(&v.c);
                return ks_error_set(r->y.err, KS_ENOMEM, "out of memory");
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
                return ks_error_set(r->y.err, KS_ENOMEM, "out of memory");
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
                return ks_error_set(r->y.err, KS_ENOMEM, "out of memory");
            }
            a->users = na;
            v.u.at = at;
            a->users[a->n_users++] = v.u;
            break;
        }
        }
        ks_yread_pop(&r->y, o2);
    }
    ks_yread_pop(&r->y, old);
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
        return ks_yread_fail_at(
            err, KS_ESCHEMA, f->path, root, NULL,
            "expected a kubeconfig (a mapping with clusters, "
            "contexts, users and current-context), found %s",
            ks_yaml_type_name(ks_yaml_type(root)));
    f->root = root;
    ks_yread_init(&r.y, f->path, &f->doc, err);
    r.f = f;
    if ((rc = ks_yread_str(&r.y, root, "current-context", &ccs, &cc)) != 0)
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
        snprintf(buf, len, "no %s defined", kc_list_key(kind));
        return;
    }
    off = (size_t)snprintf(buf, len, "%s: ", kc_list_key(kind));
    for (i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                entry_of(a, kind, i)->name);
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
        if (ks_kube_file_check(f->path, KS_KUBE_FILE_MAX) != 0) {
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
        if ((f->dir = ks_kube_path_dir(f->path)) == NULL) {
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
            rc = ks_yread_fail_at(err, KS_ENOTFOUND, a.cc_file->path,
                                  a.n_current_context, "current-context",
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
        kc_field_path(&ctx->at, K_CONTEXT, NULL, fp, sizeof(fp));
        rc =
            ks_yread_fail_at(err, KS_ESCHEMA, ctx->at.f->path,
                             ctx->at.body ? ctx->at.body : ctx->at.item, fp,
                             "context \"%s\" names no cluster; set %s.cluster",
                             ctx->at.name, fp);
        goto done;
    }
    cl = (kc_cluster_t *)find_entry(&a, K_CLUSTER, ctx->cluster);
    if (cl == NULL) {
        char fp[256];
        names_of(&a, K_CLUSTER, names, sizeof(names));
        kc_field_path(&ctx->at, K_CONTEXT, "cluster", fp, sizeof(fp));
        rc = ks_yread_fail_at(
            err, KS_ENOTFOUND, ctx->at.f->path, ctx->n_cluster, fp,
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
    rc = ks_kc_conn_build(ctx, cl, us, out, err);
done:
    all_free(&a);
    return rc;
}
