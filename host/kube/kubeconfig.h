/*
 * How ksched finds and authenticates to a Kubernetes API server, read the
 * way kubectl / client-go read it: kubeconfig files (KUBECONFIG lists
 * merged), in-cluster service accounts, token files that rotate, and exec
 * credential plugins.
 *
 * The result is a ks_kube_conn_t: a plain description (server, namespace,
 * TLS material, where it came from) plus the credential sources, which
 * ks_kube_conn_credentials turns into the current Authorization header
 * value and exec-plugin client certificates. The HTTP layer configures
 * TLS from the public fields and asks for credentials before each request
 * (cheap when nothing changed: one stat(2) of a token file at most).
 *
 * kubectl compatibility notes (deliberate):
 *  - Like client-go, credentials and the cluster's TLS settings are only
 *    used when the server URL is https://. For an http:// server (or a
 *    server without a scheme, which client-go treats as http://) `tls` is
 *    0, every TLS field is empty and ks_kube_conn_credentials returns no
 *    Authorization header. The user entry is still read and checked.
 *  - Relative paths (certificate-authority, client-certificate,
 *    client-key, tokenFile, and exec.command when it contains a '/') are
 *    resolved against the directory of the kubeconfig file that defined
 *    the entry, and stored absolute.
 *  - Precedence among a user's credentials: tokenFile (re-read, falling
 *    back to token when unreadable) > token > username/password; a static
 *    client certificate is used alongside any of them; the exec plugin is
 *    only used when the user has no token, tokenFile, username/password or
 *    client certificate (client-go ignores it then).
 *  - Booleans follow the YAML 1.2 core schema (true/True/TRUE,
 *    false/False/FALSE); "yes"/"on" are errors, not true.
 *  - A context whose user does not exist is used without credentials (as
 *    kubectl does); a warning is logged.
 *
 * Thread rules: a ks_kube_conn_t is used from one thread at a time (the
 * loop thread). Loading reads the process environment (KUBECONFIG, HOME,
 * KUBERNETES_SERVICE_*, POD_NAMESPACE); there is no global state.
 */
#ifndef KS_KUBE_KUBECONFIG_H
#define KS_KUBE_KUBECONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/error.h"
#include "kube/exec_credential.h"

/* Where callers look for a service account inside a pod. */
#define KS_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
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

/* Load a kubeconfig and resolve one context.
 *
 * path: the file to read (like kubectl --kubeconfig; it must exist).
 *   NULL: $KUBECONFIG when set and not empty, a ':'-separated list merged
 *   as client-go does (repeated paths read once; files that do not exist
 *   are skipped, but at least one must exist; a file that exists but
 *   cannot be read or parsed is an error; for clusters, contexts and users
 *   the FIRST file defining a name wins; current-context comes from the
 *   first file setting it). Otherwise $HOME/.kube/config.
 * context: the context to use (like --context); NULL or "": the
 *   current-context.
 *
 * Every entry of every file is type-checked (as kubectl decodes the whole
 * file); the chosen context, cluster and user are also validated (server
 * present, referenced files readable, no conflicting fields, exec plugin
 * settings, no auth-provider).
 *
 * On success *out is a new conn (free with ks_kube_conn_free). Errors
 * (*out NULL; messages name file:line:col and the fix):
 *   KS_ENOTFOUND  no kubeconfig file exists; the context or its cluster is
 *                 not defined (the message lists the defined ones);
 *   KS_EPARSE     malformed YAML / JSON;
 *   KS_ESCHEMA    wrong field types, bad base64, duplicate names, missing
 *                 server, no current-context, conflicting fields,
 *                 unsupported exec apiVersion or interactiveMode;
 *   KS_EAUTH      auth-provider users; a tokenFile that cannot be read;
 *   KS_EIO        a referenced file (certificate-authority,
 *                 client-certificate, client-key) that is missing or
 *                 unreadable; a kubeconfig that exists but cannot be read;
 *   KS_EINVAL, KS_ENOMEM. */
int ks_kubeconfig_load(const char *path, const char *context,
                       ks_kube_conn_t **out, ks_error_t *err);

/* The in-cluster configuration (client-go rest.InClusterConfig): server
 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an IPv6 host
 * in brackets), CA file SA_DIR/ca.crt, rotating token file SA_DIR/token,
 * namespace from $POD_NAMESPACE, else SA_DIR/namespace, else "default".
 * sa_dir: the service-account directory; NULL means KS_KUBE_SA_DIR.
 * Errors: KS_ENOTFOUND when not in a cluster (either variable unset or
 * empty; callers may then fall back to a kubeconfig); KS_EIO naming the
 * file when the variables are set but the token or ca.crt is missing or
 * unreadable; KS_EAUTH when the token file is empty; KS_ENOMEM. */
int ks_kubeconfig_in_cluster(const char *sa_dir, ks_kube_conn_t **out,
                             ks_error_t *err);

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

#endif /* KS_KUBE_KUBECONFIG_H */
