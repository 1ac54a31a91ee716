/*
 * KubeSchedulerConfiguration: reading, validation and the default merge.
 *
 * ks_config_load_file() reads a kubescheduler.config.k8s.io/v1 (or v1beta3)
 * file with libyaml, rejects unknown fields, and merges every profile's
 * plugins with ksched's default plugin set exactly as upstream's
 * mergePlugins/mergePluginSet do. The result still holds multiPoint; the
 * expansion of multiPoint into extension points needs the plugins'
 * descriptors and is done by the framework builder.
 *
 * Ownership: a ks_config_t owns everything reachable from it; free with
 * ks_config_free(). Thread-safety: none; a config is immutable once loaded
 * and may then be read from any thread.
 */
#ifndef KS_CONFIG_H
#define KS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "ksched/plugin.h"
#include "base/error.h"

typedef enum ks_ext_point {
    KS_EP_PRE_ENQUEUE = 0,
    KS_EP_QUEUE_SORT,
    KS_EP_PRE_FILTER,
    KS_EP_FILTER,
    KS_EP_POST_FILTER,
    KS_EP_PRE_SCORE,
    KS_EP_SCORE,
    KS_EP_RESERVE,
    KS_EP_PERMIT,
    KS_EP_PRE_BIND,
    KS_EP_BIND,
    KS_EP_POST_BIND,
    KS_EP_MULTI_POINT, /* only in configs; never a runtime list */
    KS_EP_COUNT
} ks_ext_point_t;

/* "PreEnqueue", "QueueSort", ..., "MultiPoint" (upstream's type names). */
const char *ks_ext_point_name(ks_ext_point_t ep);
/* "preEnqueue", "queueSort", ..., "multiPoint" (the YAML field names). */
const char *ks_ext_point_field(ks_ext_point_t ep);

typedef struct ks_plugin_ref {
    char *name;
    int32_t weight; /* 0 when not given */
    uint32_t line, column; /* where it was written; 0 for defaults */
} ks_plugin_ref_t;

typedef struct ks_plugin_set {
    ks_plugin_ref_t *enabled;
    size_t n_enabled;
    ks_plugin_ref_t *disabled; /* name "*" disables all defaults */
    size_t n_disabled;
} ks_plugin_set_t;

typedef struct ks_plugin_config {
    char *name;
    ks_args_t *args; /* never NULL; a map (possibly empty) */
    uint32_t line, column;
} ks_plugin_config_t;

typedef struct ks_profile_config {
    char *scheduler_name;              /* "default-scheduler" by default */
    int32_t percentage_of_nodes_to_score; /* -1: not set, use the top level */
    ks_plugin_set_t points[KS_EP_COUNT];  /* after the default merge */
    ks_plugin_config_t *plugin_config;
    size_t n_plugin_config;
    uint32_t line; /* where the profile begins; 0 for the built-in one */
} ks_profile_config_t;

/* clientConnection: how `serve` talks to an API server (cluster mode). */
typedef struct ks_client_connection {
    char *kubeconfig;   /* NULL: not set */
    double qps;         /* default 50 (upstream) */
    int32_t burst;      /* default 100 (upstream) */
    char *content_type; /* as written; ksched always speaks JSON */
} ks_client_connection_t;

/* leaderElection: how `serve` replicas share the work (cluster mode).
 * Durations in milliseconds; defaults as upstream (15 s, 10 s, 2 s, Lease)
 * except leaderElect (ksched: off unless set; upstream: on) and the Lease's
 * name ("ksched", so that ksched never competes for kube-scheduler's). */
typedef struct ks_leader_election {
    int leader_elect; /* 0 or 1 */
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    char *resource_lock;      /* "leases" */
    char *resource_name;      /* "ksched" */
    char *resource_namespace; /* "kube-system" */
} ks_leader_election_t;

/* extenders[]: upstream's Extender (kubescheduler.config.k8s.io/v1),
 * validated as upstream's validateExtenders. Data fields are decoded from
 * base64; every string is NUL-terminated. */
typedef struct ks_extender_managed_resource {
    char *name;
    int ignored_by_scheduler;
} ks_extender_managed_resource_t;

typedef struct ks_extender_tls_config {
    int insecure;
    char *server_name, *cert_file, *key_file, *ca_file; /* NULL: not set */
    unsigned char *cert_data, *key_data, *ca_data;      /* NULL: not set */
    size_t cert_len, key_len, ca_len;
} ks_extender_tls_config_t;

typedef struct ks_extender_config {
    char *url_prefix;
    char *filter_verb, *preempt_verb, *prioritize_verb, *bind_verb; /* NULL:
                                                                       none */
    int64_t weight;
    int enable_https;
    ks_extender_tls_config_t *tls_config; /* NULL: not set */
    int64_t http_timeout_ms;              /* default 5000 */
    int node_cache_capable;
    ks_extender_managed_resource_t *managed_resources;
    size_t n_managed_resources;
    int ignorable;
    uint32_t line, column; /* where it was written */
} ks_extender_config_t;

typedef struct ks_config {
    char *path; /* as given, or "<default>" */
    ks_client_connection_t client_connection;
    ks_leader_election_t leader_election;
    int32_t percentage_of_nodes_to_score; /* 0: adaptive */
    int32_t parallelism;                  /* default 16 */
    int64_t pod_initial_backoff_seconds;  /* default 1 */
    int64_t pod_max_backoff_seconds;      /* default 10 */
    ks_profile_config_t *profiles;
    size_t n_profiles;
    void *priv_; /* arena and YAML state, private */
    ks_extender_config_t *extenders; /* in the order written */
    size_t n_extenders;
    /* delayCacheUntilActive (upstream v1.27+): read and kept, but a
     * standby ksched keeps its informers warm either way (true gets a
     * notice); it changes failover time and memory, never a decision. */
    int delay_cache_until_active;
    /* Notices about an accepted configuration ("FILE:LINE:COL: text", one
     * line each, e.g. a deprecated apiVersion), already printed as
     * warnings by the loader. */
    char **notices;
    size_t n_notices;
} ks_config_t;

/* Load and merge. On failure *out is NULL and err lists every problem found
 * ("FILE:LINE:COL: what is wrong; what was expected"), one per line. */
int ks_config_load_file(const char *path, ks_config_t **out, ks_error_t *err);
/* The same for a YAML text; `name` is used as the file name in messages. */
int ks_config_load_string(const char *name, const char *yaml, size_t len,
                          ks_config_t **out, ks_error_t *err);
/* Read a config from an already parsed libyaml node (the `config:` key of a
 * conformance scenario). `doc` is a yaml_document_t*, `node` a yaml_node_t*. */
int ks_config_load_yaml_node(const char *name, void *doc, void *node,
                             ks_config_t **out, ks_error_t *err);
/* The configuration used when no file is given: one profile,
 * "default-scheduler", with the default plugins. Never fails except ENOMEM
 * (then NULL). */
ks_config_t *ks_config_default(void);
void ks_config_free(ks_config_t *cfg);

/* The pluginConfig args for `plugin` in `prof`, or NULL. */
const ks_args_t *ks_profile_plugin_args(const ks_profile_config_t *prof,
                                        const char *plugin);

/* Is `name` one of upstream's volume plugins that ksched does not ship
 * (CinderLimits, an in-tree cloud volume limit outside v1.24's defaults
 * already)? */
int ks_plugin_is_volume(const char *name);

#endif /* KS_CONFIG_H */
