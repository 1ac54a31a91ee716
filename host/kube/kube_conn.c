/* A connection's credentials and lifetime (kube_conn.h). */
#include "kube/kube_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base64.h"
#include "base/log.h"
#include "base/mono_clock.h"
#include "kube/kube_file.h"

int64_t ks_kube_clock_realtime(void *ud)
{
    (void)ud;
    return ks_wall_ms();
}

ks_kube_conn_t *ks_kube_conn_new(void)
{
    ks_kube_conn_t *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return NULL;
    k->now = ks_kube_clock_realtime;
    k->token_file_period_ms = KS_KUBE_TOKEN_FILE_PERIOD_MS;
    return k;
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
    if (ks_kube_file_read(k->token_file, &text, &len) != 0) {
        en = errno;
        if (en == ENOMEM)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        why = strerror(en);
    } else {
        tok = ks_kube_trimmed_copy(text, len);
        free(text);
        if (tok == NULL)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        if (tok[0] == '\0')
            why = "the file is empty";
        else if (ks_kube_has_ctl(tok))
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
