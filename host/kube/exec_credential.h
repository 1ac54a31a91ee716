/*
 * client-go credential plugins ("exec" in a kubeconfig user): running the
 * plugin, reading the ExecCredential it prints, and caching the result
 * until it expires.
 *
 * What the plugin sees, as with kubectl: the arguments of the kubeconfig,
 * ksched's environment plus the kubeconfig's env entries (they override
 * variables of the same name), KUBERNETES_EXEC_INFO holding the JSON
 * ExecCredential input ({"apiVersion": <configured>, "kind":
 * "ExecCredential", "spec": {"interactive": false[, "cluster": {...}]}}),
 * stdin from /dev/null (ksched never runs plugins interactively), stdout
 * captured (at most 4 MiB), stderr passed through to ksched's stderr (the
 * last 2 KiB are also kept for error messages). The plugin runs in its own
 * process group; on timeout the whole group is killed with SIGKILL and
 * reaped. A command without a '/' is looked up in ksched's PATH.
 *
 * Running a plugin blocks the calling thread until it exits or times out
 * (30 s by default). Thread rules: a ks_exec_plugin_t is used by one
 * thread at a time (the loop thread); nothing here has global state,
 * although a SIGCHLD handler that reaps every child (waitpid(-1)) would
 * steal the plugin's exit status (libuv's handler only reaps its own).
 */
#ifndef KS_KUBE_EXEC_CREDENTIAL_H
#define KS_KUBE_EXEC_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define KS_EXEC_API_V1 "client.authentication.k8s.io/v1"
#define KS_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define KS_EXEC_DEFAULT_TIMEOUT_MS 30000

/* exec.interactiveMode. ksched never has a terminal for the plugin, so
 * IfAvailable behaves as Never; the kubeconfig loader refuses Always. */
typedef enum ks_exec_interactive {
    KS_EXEC_INTERACTIVE_NEVER = 0,
    KS_EXEC_INTERACTIVE_IF_AVAILABLE,
    KS_EXEC_INTERACTIVE_ALWAYS
} ks_exec_interactive_t;

typedef struct ks_kube_env {
    char *name;
    char *value;
} ks_kube_env_t;

/* The status of one ExecCredential. token is "" when the plugin returned
 * none; cert_pem/key_pem are NULL (lengths 0) unless the plugin returned a
 * client certificate (both are then set: PEM text, NUL-terminated).
 * expiry_ms is status.expirationTimestamp in Unix ms, 0 when absent. */
typedef struct ks_exec_cred {
    char *token;
    char *cert_pem;
    size_t cert_len;
    char *key_pem;
    size_t key_len;
    int64_t expiry_ms;
} ks_exec_cred_t;

/* One configured plugin and its cache. All strings and arrays are malloc'd
 * and owned by the struct (ks_exec_plugin_free). The kubeconfig loader
 * fills the configuration; callers may change timeout_ms. */
typedef struct ks_exec_plugin {
    /* Configuration (from users[].user.exec). */
    char *command;          /* as configured; relative paths with a '/'
                               already resolved against the kubeconfig */
    char **args;            /* n_args strings */
    size_t n_args;
    ks_kube_env_t *env;     /* n_env entries, added to the environment */
    size_t n_env;
    char *api_version;      /* KS_EXEC_API_V1 or KS_EXEC_API_V1BETA1 */
    char *install_hint;     /* may be NULL */
    int provide_cluster_info;
    ks_exec_interactive_t interactive_mode;
    char *cluster_json;     /* spec.cluster as a JSON object, sent when
                               provide_cluster_info; may be NULL */
    char *user;             /* the kubeconfig user's name, for messages;
                               may be NULL */
    int64_t timeout_ms;     /* 0: KS_EXEC_DEFAULT_TIMEOUT_MS */

    /* Cache (read-only for callers). */
    ks_exec_cred_t cred;    /* valid when have_cred */
    int have_cred;
    unsigned long runs;     /* times the plugin was started */
} ks_exec_plugin_t;

/* A new, zeroed plugin (no command yet); NULL when out of memory. */
ks_exec_plugin_t *ks_exec_plugin_new(void);

/* Free the plugin, its configuration and its cache. NULL is fine. */
void ks_exec_plugin_free(ks_exec_plugin_t *p);

/* The cached credential when it has not expired at `now_ms` (Unix ms; no
 * expiry means it never expires, as client-go), otherwise run the plugin
 * and cache its result. *out points into p and stays valid until the next
 * ks_exec_plugin_get / ks_exec_plugin_invalidate / ks_exec_plugin_free.
 * Errors (nothing is cached; the old credential is dropped):
 *   KS_ETIMEDOUT  the plugin ran longer than timeout_ms (it was killed);
 *   KS_EAUTH      not found / not executable (message has the installHint),
 *                 non-zero exit or signal (message has the stderr tail),
 *                 bad ExecCredential output;
 *   KS_ENOMEM, KS_EIO (pipes, fork). */
int ks_exec_plugin_get(ks_exec_plugin_t *p, int64_t now_ms,
                       const ks_exec_cred_t **out, ks_error_t *err);

/* Drop the cached credential so the next ks_exec_plugin_get runs the
 * plugin again (after the API server answered 401). */
void ks_exec_plugin_invalidate(ks_exec_plugin_t *p);

/* Run the plugin once, without the cache, into *out (which the caller
 * clears with ks_exec_cred_clear). Same errors as ks_exec_plugin_get. */
int ks_exec_plugin_run(const ks_exec_plugin_t *p, ks_exec_cred_t *out,
                       ks_error_t *err);

/* The KUBERNETES_EXEC_INFO value for p: malloc'd JSON, NULL when out of
 * memory (or when cluster_json is not a JSON object). */
char *ks_exec_info_json(const ks_exec_plugin_t *p);

/* Parse an ExecCredential printed by a plugin (`len` bytes of JSON).
 * `api_version` is the configured version the output must have; `command`
 * names the plugin in messages. Checks kind ExecCredential, the apiVersion,
 * that status is present with a token or a certificate/key pair (never
 * only one of the two), field types, and the RFC 3339 expiry. Returns 0 or
 * KS_EAUTH (KS_ENOMEM); on error *out is left empty. */
int ks_exec_credential_parse(const char *json, size_t len,
                             const char *api_version, const char *command,
                             ks_exec_cred_t *out, ks_error_t *err);

/* Free what a credential holds and zero it. */
void ks_exec_cred_clear(ks_exec_cred_t *c);

#endif /* KS_KUBE_EXEC_CREDENTIAL_H */
