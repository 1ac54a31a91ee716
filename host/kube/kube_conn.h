/*
 * A connection to a Kubernetes API server and its credentials (client-go's
 * rest.Config and its credential providers): a plain description (server,
 * namespace, TLS material, where it came from) plus the credential
 * sources, which ks_kube_conn_credentials turns into the current
 * Authorization header value and exec-plugin client certificates. The HTTP
 * layer configures TLS from the public fields and asks for credentials
 * before each request (cheap when nothing changed: one stat(2) of a token
 * file at most).
 *
 * Connections are made by the loaders of kubeconfig.h (a kubeconfig
 * context, or the in-cluster service account).
 *
 * Thread rules: a ks_kube_conn_t is used from one thread at a time (the
 * loop thread).
 */
#ifndef KS_KUBE_KUBE_CONN_H
#define KS_KUBE_KUBE_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/error.h"
#include "kube/exec_credential.h"

/* Token files are re-read at least this often (client-go: every minute). */
#define KS_KUBE_TOKEN_FILE_PERIOD_MS 60000

/* A wall clock in Unix milliseconds (exec credential expiry times are wall
 * clock times). `ud` is the struct's now_ud. */
typedef int64_t (*ks_kube_clock_fn)(void *ud);

/* The default clock: clock_gettime(CLOCK_REALTIME) in ms. */
int64_t ks_kube_clock_realtime(void *ud);

typedef struct ks_kube_conn {
    /* -- Where it came from (for messages; all owned, never NULL). */
    char *source;      /* the kubeconfig file that defines the context, or
                          the service-account directory (in-cluster) */
    char *context;     /* context name; "in-cluster" for in-cluster */
    char *cluster;     /* cluster entry name; "" in-cluster */
    char *user;        /* the user the context names (even when no such
                          entry exists); "" when it names none;
                          "serviceaccount" in-cluster */
    int in_cluster;

    /* -- The server. */
    char *server;      /* "https://host:port[/prefix]"; a server written
                          without a scheme gets "http://" */
    char *namespace;   /* the context's namespace, "default" when unset */
    int tls;           /* server is https:// (credentials are used) */

    /* -- Server verification (NULL / 0 when unset or when !tls). When both
     *    a file and data could apply, data wins (client-go); the loader
     *    rejects kubeconfigs that set both. */
    char *ca_file;             /* absolute path of a PEM bundle */
    unsigned char *ca_data;    /* PEM (decoded certificate-authority-data),
                                  NUL-terminated */
    size_t ca_len;
    int insecure;              /* insecure-skip-tls-verify */
    char *tls_server_name;     /* SNI / verification name override */
    char *proxy_url;           /* http://, https:// or socks5:// URL; kept
                                  even when !tls */
    int disable_compression;   /* cluster.disable-compression */

    /* -- Static client certificate from the user entry (NULL / 0 when
     *    unset or when !tls). File and data are never both set. */
    char *cert_file;
    unsigned char *cert_data;  /* PEM, NUL-terminated */
    size_t cert_len;
    char *key_file;
    unsigned char *key_data;   /* PEM, NUL-terminated */
    size_t key_len;

    /* -- Credential sources, used by ks_kube_conn_credentials (NULL when
     *    unset or when !tls). Read them only for diagnostics. */
    char *token;               /* static bearer token */
    char *token_file;          /* absolute path, re-read as it rotates */
    char *username;            /* basic auth; only when username is not
                                  empty (client-go's HasBasicAuth) */
    char *password;            /* "" when unset */
    ks_exec_plugin_t *exec;    /* exec plugin; NULL as well when client-go
                                  would ignore it (the user has a token,
                                  tokenFile, username/password or client
                                  certificate); its timeout_ms may be set */

    /* -- Tunables (set by the loaders to defaults; callers and tests may
     *    change them). */
    ks_kube_clock_fn now;      /* ks_kube_clock_realtime */
    void *now_ud;
    int64_t token_file_period_ms; /* KS_KUBE_TOKEN_FILE_PERIOD_MS */

    /* -- State of the credential cache (read-only for callers). */
    unsigned long token_file_reads; /* successful + failed reads */
    unsigned long generation;  /* bumped whenever the credential returned
                                  by ks_kube_conn_credentials changes */
    struct {
        char *file_token;      /* last token read from token_file */
        int64_t read_at_ms;    /* clock time of the last read attempt */
        int have_stat;         /* the fields below describe the file */
        int stat_ok;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        int stale;             /* ks_kube_conn_invalidate was called */
        char *auth;            /* current Authorization value */
        char *cert_seen;       /* copy of the exec certificate of the
                                  last answer */
    } st_;
} ks_kube_conn_t;

/* What to send with the next request. `authorization` is the whole
 * Authorization header value ("Bearer TOKEN" or "Basic BASE64"), "" when
 * nothing is to be sent; never NULL. cert_pem/key_pem are a client
 * certificate from an exec plugin (NULL/0 otherwise; a static certificate
 * is in the conn's cert_* / key_* fields). expiry_ms is when an exec
 * credential expires (Unix ms; 0 for none). generation changes whenever
 * authorization or the certificate changed since an earlier call (rebuild
 * TLS state when the certificate changed). */
typedef struct ks_kube_cred {
    const char *authorization;
    const char *cert_pem;
    size_t cert_len;
    const char *key_pem;
    size_t key_len;
    int64_t expiry_ms;
    unsigned long generation;
} ks_kube_cred_t;

/* A new empty conn with the default tunables (the loaders fill it);
 * NULL when out of memory. Free with ks_kube_conn_free. */
ks_kube_conn_t *ks_kube_conn_new(void);

/* The current credentials of k into *out. Pointers in *out point into k
 * and stay valid until the next ks_kube_conn_credentials /
 * ks_kube_conn_invalidate / ks_kube_conn_free on k.
 *
 * A token file is stat'ed on every call and re-read when its identity,
 * size or mtime changed, when token_file_period_ms passed since the last
 * read (by k->now), or after ks_kube_conn_invalidate. When a re-read fails
 * the previous token (else the static token) is kept and a warning logged;
 * with nothing to fall back on it is KS_EAUTH. An exec plugin's result is
 * cached until its expirationTimestamp (forever without one) and the
 * plugin is run again after that (this blocks; see exec_credential.h).
 * Errors: KS_EAUTH, KS_ETIMEDOUT, KS_EIO, KS_ENOMEM (see
 * ks_exec_plugin_get); *out is then zeroed with authorization "". */
int ks_kube_conn_credentials(ks_kube_conn_t *k, ks_kube_cred_t *out,
                             ks_error_t *err);

/* Make the next ks_kube_conn_credentials re-read the token file and re-run
 * the exec plugin (call it after the server answered 401). */
void ks_kube_conn_invalidate(ks_kube_conn_t *k);

/* Free k and everything it owns. NULL is fine. */
void ks_kube_conn_free(ks_kube_conn_t *k);

/* "server https://h:6443 (context ctx, user u, from FILE)" into buf (or
 * "server https://h:443 (in-cluster, service account DIR)"); truncated to
 * len. Returns buf. */
const char *ks_kube_conn_describe(const ks_kube_conn_t *k, char *buf,
                                  size_t len);

#endif /* KS_KUBE_KUBE_CONN_H */
