/* Building a connection (kubeconfig.h): from a kubeconfig context's
 * cluster and user, checked as client-go checks them, or from the
 * in-cluster service account. */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <yaml.h>

#include "base/base64.h"
#include "base/log.h"
#include "base/yaml_node.h"
#include "base/yaml_read.h"
#include "kube/kube_file.h"
#include "kube/kubeconfig_impl.h"

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
    r = ks_kube_path_join(f->dir, p);
    if (r == NULL)
        b->oom = 1;
    return r;
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
        if ((cafile = ks_kube_path_join(cf->dir, c->ca)) == NULL) {
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto out;
        }
        if (ks_kube_file_read(cafile, &text, &ca_len) != 0) {
            rc = ks_yread_fail_at(err, KS_EIO, cf->path, c->n_ca, NULL,
                                  "cannot read certificate-authority %s: %s",
                                  cafile, strerror(errno));
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


/* A referenced file must be readable (client-go ConfirmUsable). */
static int check_file(const kc_entry_t *e, int kind, const char *field,
                      const yaml_node_t *n, const char *abs,
                      ks_error_t *err)
{
    char fp[256];
    int en, rel;
    if (ks_kube_file_check(abs, 0) == 0)
        return 0;
    en = errno;
    rel = ks_yaml_is_scalar(n) && ks_yaml_text(n)[0] != '/';
    kc_field_path(e, kind, field, fp, sizeof(fp));
    return ks_yread_fail_at(
        err, KS_EIO, e->f->path, n, fp, "cannot read %s: %s%s%s%s", abs,
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
        kc_field_path(e, K_CLUSTER, NULL, fp, sizeof(fp));
        return ks_yread_fail_at(
            err, KS_ESCHEMA, e->f->path, e->body ? e->body : e->item, fp,
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
            kc_field_path(e, K_CLUSTER, "proxy-url", fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, c->n_proxy, fp,
                "invalid proxy-url \"%s\" for cluster \"%s\": the "
                "scheme must be http, https, or socks5",
                c->proxy_url, e->name);
        }
    }
    if (c->ca != NULL && c->ca_data != NULL) {
        kc_field_path(e, K_CLUSTER, "certificate-authority-data", fp,
                      sizeof(fp));
        return ks_yread_fail_at(
            err, KS_ESCHEMA, e->f->path, c->n_ca_data, fp,
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
        kc_field_path(e, K_USER, "auth-provider", fp, sizeof(fp));
        return ks_yread_fail_at(
            err, KS_EAUTH, e->f->path, u->n_auth_provider, fp,
            "auth-provider %s is not supported; use an exec "
            "plugin (users[].user.exec, e.g. "
            "gke-gcloud-auth-plugin or kubelogin)",
            u->auth_provider[0] ? u->auth_provider : "(unnamed)");
    }
    if (u->cert != NULL || u->cert_data != NULL) {
        if (u->cert != NULL && u->cert_data != NULL) {
            kc_field_path(e, K_USER, "client-certificate-data", fp,
                          sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, u->n_cert_data, fp,
                "client-certificate-data and client-certificate "
                "are both set for user \"%s\"; keep one",
                e->name);
        }
        if (u->key != NULL && u->key_data != NULL) {
            kc_field_path(e, K_USER, "client-key-data", fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, u->n_key_data, fp,
                "client-key-data and client-key are both set for "
                "user \"%s\"; keep one",
                e->name);
        }
        if (u->key == NULL && u->key_data == NULL) {
            kc_field_path(e, K_USER,
                          u->cert ? "client-certificate"
                                  : "client-certificate-data",
                          fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path,
                u->cert ? u->n_cert : u->n_cert_data, fp,
                "user \"%s\" has a client certificate but no key; "
                "set client-key or client-key-data",
                e->name);
        }
    }
    if ((u->token != NULL || u->token_file != NULL) &&
        (u->username != NULL || u->password != NULL)) {
        kc_field_path(e, K_USER, u->username ? "username" : "password", fp,
                      sizeof(fp));
        return ks_yread_fail_at(
            err, KS_ESCHEMA, e->f->path,
            u->username ? u->n_username : u->n_password, fp,
            "more than one authentication method found for user "
            "\"%s\": %s and username/password; keep one",
            e->name, u->token ? "token" : "tokenFile");
    }
    if (u->token != NULL && ks_kube_has_ctl(u->token)) {
        kc_field_path(e, K_USER, "token", fp, sizeof(fp));
        return ks_yread_fail_at(
            err, KS_ESCHEMA, e->f->path, u->n_token, fp,
            "the token contains a control character (line "
            "break?); it cannot be sent in an HTTP header");
    }
    if (u->has_exec) {
        const kc_exec_t *x = &u->exec;
        size_t i;
        kc_field_path(e, K_USER, "exec", fp, sizeof(fp));
        if (x->command == NULL)
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, x->node, fp,
                "command must be specified for user \"%s\" to use "
                "an exec authentication plugin",
                e->name);
        if (x->api_version == NULL)
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, x->node, fp,
                "apiVersion must be specified for user \"%s\" to "
                "use an exec authentication plugin; use " KS_EXEC_API_V1
                " or " KS_EXEC_API_V1BETA1,
                e->name);
        if (strcmp(x->api_version, KS_EXEC_API_V1) != 0 &&
            strcmp(x->api_version, KS_EXEC_API_V1BETA1) != 0) {
            kc_field_path(e, K_USER, "exec.apiVersion", fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, x->n_api, fp,
                "\"%s\" is not supported; use " KS_EXEC_API_V1 " or v1beta1",
                x->api_version);
        }
        for (i = 0; i < x->n_env; i++)
            if (x->env_names[i] == NULL) {
                snprintf(fp, sizeof(fp), "users[%zu].user.exec.env[%zu]",
                         e->idx, i);
                return ks_yread_fail_at(
                    err, KS_ESCHEMA, e->f->path, x->env_nodes[i], fp,
                    "env variable name must be specified for "
                    "user \"%s\" to use an exec plugin",
                    e->name);
            }
        if (x->interactive_mode == NULL) {
            if (strcmp(x->api_version, KS_EXEC_API_V1) == 0)
                return ks_yread_fail_at(
                    err, KS_ESCHEMA, e->f->path, x->node, fp,
                    "interactiveMode must be specified for user "
                    "\"%s\" to use an exec plugin with %s; set "
                    "interactiveMode: Never (or IfAvailable)",
                    e->name, KS_EXEC_API_V1);
        } else if (strcmp(x->interactive_mode, "Always") == 0) {
            kc_field_path(e, K_USER, "exec.interactiveMode", fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, x->n_mode, fp,
                "Always needs a terminal, and ksched runs exec "
                "plugins without one (stdin is /dev/null); use "
                "Never or IfAvailable with a plugin that works "
                "without a terminal");
        } else if (strcmp(x->interactive_mode, "Never") != 0 &&
                   strcmp(x->interactive_mode, "IfAvailable") != 0) {
            kc_field_path(e, K_USER, "exec.interactiveMode", fp, sizeof(fp));
            return ks_yread_fail_at(
                err, KS_ESCHEMA, e->f->path, x->n_mode, fp,
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
    if (ks_kube_file_read(path, &text, &len) != 0)
        return f != NULL ? ks_yread_fail_at(err, KS_EAUTH, f->path, n, fp,
                                            "cannot read token file %s: %s",
                                            path, strerror(errno))
                         : ks_error_set(err, KS_EAUTH,
                                        "cannot read token file %s: %s", path,
                                        strerror(errno));
    tok = ks_kube_trimmed_copy(text, len);
    free(text);
    if (tok == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (tok[0] == '\0')
        rc = f != NULL
                 ? ks_yread_fail_at(err, KS_EAUTH, f->path, n, fp,
                                    "token file %s is empty", path)
                 : ks_error_set(err, KS_EAUTH, "token file %s is empty", path);
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

    k = ks_kube_conn_new();
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
        kc_field_path(&c->at, K_CLUSTER, "insecure-skip-tls-verify", fp,
                      sizeof(fp));
        rc = ks_yread_fail_at(
            err, KS_ESCHEMA, c->at.f->path, c->n_insecure, fp,
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
        kc_field_path(&u->at, K_USER, "tokenFile", fp, sizeof(fp));
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

int ks_kc_conn_build(kc_context_t *ctx, kc_cluster_t *c, kc_user_t *u,
                     ks_kube_conn_t **out, ks_error_t *err)
{
    int rc;
    if ((rc = check_cluster(c, err)) != 0 ||
        (u != NULL && (rc = check_user(u, err)) != 0))
        return rc;
    return build_conn(ctx, c, u, out, err);
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
    if (ks_kube_file_check(token_path, 0) != 0) {
        rc = ks_error_set(err, KS_EIO,
                          "in-cluster configuration: cannot read the service "
                          "account token %s: %s; is a service account token "
                          "mounted (automountServiceAccountToken)?",
                          token_path, strerror(errno));
        goto out;
    }
    if ((rc = check_token_file(NULL, NULL, NULL, token_path, err)) != 0)
        goto out;
    if (ks_kube_file_check(ca_path, 0) != 0) {
        rc = ks_error_set(err, KS_EIO,
                          "in-cluster configuration: cannot read the cluster "
                          "CA %s: %s",
                          ca_path, strerror(errno));
        goto out;
    }
    if ((k = ks_kube_conn_new()) == NULL)
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
    } else if (ks_kube_file_read(ns_path, &text, &len) == 0) {
        k->namespace = ks_kube_trimmed_copy(text, len);
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
