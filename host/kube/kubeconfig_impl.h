/*
 * Private to the kubeconfig loader (kubeconfig.c: reading and merging the
 * files) and the connection builder (conn_build.c: checking the chosen
 * context's cluster and user, building the ks_kube_conn_t): the entries
 * as read, each with the file and the YAML nodes that messages point at.
 * The strings and nodes live in the file's document, which the loader
 * keeps until the build is done.
 */
#ifndef KS_KUBE_KUBECONFIG_IMPL_H
#define KS_KUBE_KUBECONFIG_IMPL_H

#include <stddef.h>
#include <stdio.h>

#include <yaml.h>

#include "base/error.h"
#include "kube/kube_conn.h"

typedef struct kc_file {
    char *path; /* as listed */
    char *dir;  /* absolute directory, for relative paths */
    yaml_document_t doc;
    int have_doc;
    yaml_node_t *root; /* a mapping, or NULL for an empty file */
} kc_file_t;

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

/* The three lists of a kubeconfig, and the body key of their items. */
enum { K_CLUSTER, K_CONTEXT, K_USER };

static inline const char *kc_list_key(int kind)
{
    return kind == K_CLUSTER ? "clusters"
           : kind == K_CONTEXT ? "contexts"
                               : "users";
}

static inline const char *kc_body_key(int kind)
{
    return kind == K_CLUSTER ? "cluster" : kind == K_CONTEXT ? "context"
                                                             : "user";
}

/* The path of entry e's field for messages: "users[2].user.exec". */
static inline void kc_field_path(const kc_entry_t *e, int kind,
                                 const char *field, char *buf, size_t len)
{
    snprintf(buf, len, "%s[%zu].%s%s%s", kc_list_key(kind), e->idx,
             kc_body_key(kind), field ? "." : "", field ? field : "");
}

/* Check the context's cluster and user (u may be NULL: no such user) and
 * build the connection: 0 with *out (the caller's), or an error naming
 * the file, the field and the fix. */
int ks_kc_conn_build(kc_context_t *ctx, kc_cluster_t *c, kc_user_t *u,
                     ks_kube_conn_t **out, ks_error_t *err);

#endif
