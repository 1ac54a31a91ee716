/*
 * How ksched finds and authenticates to a Kubernetes API server, read the
 * way kubectl / client-go read it: kubeconfig files (KUBECONFIG lists
 * merged), in-cluster service accounts, token files that rotate, and exec
 * credential plugins.
 *
 * The result is a ks_kube_conn_t (kube_conn.h: the connection and its
 * credentials). Loading reads and merges the files (kubeconfig.c), then
 * checks the chosen context's cluster and user and builds the connection
 * from them (conn_build.c, as client-go's clientcmd does).
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
 * Thread rules: loading reads the process environment (KUBECONFIG, HOME,
 * KUBERNETES_SERVICE_*, POD_NAMESPACE); there is no global state.
 */
#ifndef KS_KUBE_KUBECONFIG_H
#define KS_KUBE_KUBECONFIG_H

#include "base/error.h"
#include "kube/kube_conn.h"

/* Where callers look for a service account inside a pod. */
#define KS_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

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

#endif /* KS_KUBE_KUBECONFIG_H */
