/* serve's secure serving (see secure.h). */
#include "secure.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "framework/call_board.h"
#include "self_signed.h"

static int load_conn(const char *flag, const char *path, ks_kube_conn_t **out,
                     ks_error_t *err)
{
    ks_error_t e = {0};
    if (ks_kubeconfig_load(path, NULL, out, &e) != 0)
        return ks_error_set(err, e.code, "%s: %s", flag, e.msg);
    return 0;
}

/* The host of "HOST:PORT" or "[V6]:PORT" into buf ("" when unparsable). */
static void listen_host(const char *listen, char *buf, size_t len)
{
    const char *end;
    buf[0] = '\0';
    if (listen == NULL)
        return;
    if (listen[0] == '[') {
        end = strchr(listen, ']');
        listen++;
    } else {
        end = strrchr(listen, ':');
    }
    if (end && (size_t)(end - listen) < len) {
        memcpy(buf, listen, (size_t)(end - listen));
        buf[end - listen] = '\0';
    }
}

/* The certificate an earlier worker of this supervisor made, from the
 * call board: 1 with ss filled (strings malloc'd), or 0. */
static int board_self_signed(ks_self_signed_t *ss)
{
    ks_call_board_t *b = ks_call_board();
    uint32_t len = atomic_load(&b->self_signed_len);
    const char *cert = b->self_signed, *key, *fp;
    memset(ss, 0, sizeof *ss);
    if (len == 0 || len > sizeof b->self_signed)
        return 0;
    key = memchr(cert, '\0', len);
    fp = key ? memchr(key + 1, '\0', len - (size_t)(key + 1 - cert)) : NULL;
    if (key == NULL || fp == NULL)
        return 0;
    key++;
    fp++;
    ss->cert_pem = strdup(cert);
    ss->key_pem = strdup(key);
    snprintf(ss->fingerprint, sizeof ss->fingerprint, "%s", fp);
    if (ss->cert_pem == NULL || ss->key_pem == NULL) {
        ks_self_signed_free(ss);
        return 0;
    }
    return 1;
}

/* Keep the certificate on the board for the workers that may follow. */
static void board_keep_self_signed(const ks_self_signed_t *ss)
{
    ks_call_board_t *b = ks_call_board();
    size_t lc = strlen(ss->cert_pem) + 1, lk = strlen(ss->key_pem) + 1,
           lf = strlen(ss->fingerprint) + 1;
    if (lc + lk + lf > sizeof b->self_signed)
        return; /* a replacement makes its own */
    memcpy(b->self_signed, ss->cert_pem, lc);
    memcpy(b->self_signed + lc, ss->key_pem, lk);
    memcpy(b->self_signed + lc + lk, ss->fingerprint, lf);
    atomic_store(&b->self_signed_len, (uint32_t)(lc + lk + lf));
}

static int self_signed(ks_server_t *srv, const char *listen, ks_error_t *err)
{
    char host[256] = "", bind[256], cn[300];
    const char *names[5];
    size_t n = 0;
    ks_self_signed_t ss;
    int rc, reused = 0;
    listen_host(listen, bind, sizeof bind);
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    /* An unspecified address is no name a client can use. */
    if (bind[0] && strcmp(bind, "0.0.0.0") != 0 && strcmp(bind, "::") != 0)
        names[n++] = bind;
    names[n++] = "localhost";
    names[n++] = "127.0.0.1";
    names[n++] = "::1";
    if (host[0])
        names[n++] = host;
    /* upstream's subject: HOST@UNIX-TIME */
    snprintf(cn, sizeof cn, "%s@%lld", host[0] ? host : "localhost",
             (long long)time(NULL));
    if (board_self_signed(&ss)) {
        reused = 1;
    } else {
        if ((rc = ks_self_signed_make(cn, names, n, &ss, err)) != 0)
            return rc;
        board_keep_self_signed(&ss);
    }
    srv->tls = ks_tls_ctx_new_pem(ss.cert_pem, ss.key_pem, err);
    if (srv->tls) {
        char list[700] = "";
        size_t i, off = 0;
        for (i = 0; i < n && off < sizeof list; i++) {
            size_t k;
            for (k = 0; k < i && strcmp(names[k], names[i]) != 0; k++)
                ;
            if (k == i)
                off += (size_t)snprintf(list + off, sizeof list - off,
                                        "%s%s", off ? ", " : "", names[i]);
        }
        fprintf(stderr, "ksched serve: no --tls-cert-file: serving HTTPS "
                        "with %s self-signed certificate for %s (%s)\n",
                reused ? "the earlier worker's" : "a", list, ss.fingerprint);
    }
    ks_self_signed_free(&ss);
    return srv->tls ? 0 : err->code;
}

int ks_server_secure(ks_server_t *srv, const ks_server_secure_opts_t *o,
                     ks_error_t *err)
{
    ks_kube_conn_t *authn = NULL, *authz = NULL;
    ks_delegate_opts_t dopts;
    char d1[1500], d2[1500];
    int rc;
    int delegated = o->authn_kubeconfig || o->authz_kubeconfig ||
                    (o->allow_remote && srv->auth == NULL && srv->kconn);
    if (!delegated) {
        if (o->allow_remote && srv->auth == NULL && srv->tls == NULL)
            return ks_error_set(err, KS_EINVAL,
                                "--allow-remote needs authentication: "
                                "--token-file FILE, TLS, or cluster mode "
                                "(which delegates it to the API server)");
        return 0;
    }
    if (o->authn_kubeconfig &&
        (rc = load_conn("--authentication-kubeconfig", o->authn_kubeconfig,
                        &srv->delegate_conn[0], err)) != 0)
        return rc;
    if (o->authz_kubeconfig &&
        (rc = load_conn("--authorization-kubeconfig", o->authz_kubeconfig,
                        &srv->delegate_conn[1], err)) != 0)
        return rc;
    authn = srv->delegate_conn[0] ? srv->delegate_conn[0]
            : srv->delegate_conn[1] ? srv->delegate_conn[1]
                                    : srv->kconn;
    authz = srv->delegate_conn[1] ? srv->delegate_conn[1] : authn;
    memset(&dopts, 0, sizeof dopts);
    dopts.authn = authn;
    dopts.authz = authz;
    if ((srv->delegate = ks_delegate_new(srv->loop, &dopts, err)) == NULL)
        return err->code ? err->code : KS_ENOMEM;
    fprintf(stderr, "ksched serve: authentication delegated to %s, "
                    "authorization to %s (TokenReview, "
                    "SubjectAccessReview; /healthz, /livez and /readyz "
                    "need neither)\n",
            ks_kube_conn_describe(authn, d1, sizeof d1),
            authz == authn ? "the same"
                           : ks_kube_conn_describe(authz, d2, sizeof d2));
    if (srv->tls == NULL && o->listen)
        return self_signed(srv, o->listen, err);
    return 0;
}
