/*
 * The KubeSchedulerConfiguration schema: the entry points that load a file,
 * a string or a libyaml node, read every field with its type, validate the
 * values as upstream's validation does, and merge each profile's plugins with
 * the default set.
 */
#include "base/base64.h"
#include "base/go_duration.h"
#include "base/log.h"
#include "config_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_API_V1 "kubescheduler.config.k8s.io/v1"
#define KS_API_V1BETA3 "kubescheduler.config.k8s.io/v1beta3"
#define KS_KIND "KubeSchedulerConfiguration"
#define KS_DEFAULT_SCHEDULER "default-scheduler"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* --- the schema ------------------------------------------------------------- */

enum {
    TOP_API,
    TOP_KIND,
    TOP_PROFILES,
    TOP_PERCENTAGE,
    TOP_PARALLELISM,
    TOP_INITIAL_BACKOFF,
    TOP_MAX_BACKOFF,
    TOP_LEADER_ELECTION,
    TOP_CLIENT_CONNECTION,
    TOP_HEALTHZ,
    TOP_METRICS,
    TOP_PROFILING,
    TOP_CONTENTION,
    TOP_EXTENDERS,
    TOP_DELAY_CACHE
};

static const ks_cfg_field_t top_fields[] = {
    {"apiVersion", KS_CFG_T_STR},
    {"kind", KS_CFG_T_STR},
    {"profiles", KS_CFG_T_SEQ},
    {"percentageOfNodesToScore", KS_CFG_T_INT},
    {"parallelism", KS_CFG_T_INT},
    {"podInitialBackoffSeconds", KS_CFG_T_INT},
    {"podMaxBackoffSeconds", KS_CFG_T_INT},
    {"leaderElection", KS_CFG_T_MAP},
    {"clientConnection", KS_CFG_T_MAP},
    {"healthzBindAddress", KS_CFG_T_STR},
    {"metricsBindAddress", KS_CFG_T_STR},
    {"enableProfiling", KS_CFG_T_BOOL},
    {"enableContentionProfiling", KS_CFG_T_BOOL},
    {"extenders", KS_CFG_T_SEQ},
    {"delayCacheUntilActive", KS_CFG_T_BOOL},
};

/* Upstream v1.36's placement extension points (workload-aware scheduling,
 * behind its TopologyAwareWorkloadScheduling gate): accepted with nothing
 * enabled, refused otherwise. They follow the extension points in the
 * plugins mapping. */
static const char *const placement_points[] = {"placementGenerate",
                                               "placementScore"};
#define N_PLACEMENT_POINTS (sizeof placement_points / sizeof placement_points[0])

/* Upstream's LeaderElectionConfiguration and ClientConnectionConfiguration:
 * read for their types only. */
enum { LE_ELECT, LE_LEASE, LE_RENEW, LE_RETRY, LE_LOCK, LE_NAME, LE_NS };

static const ks_cfg_field_t leader_fields[] = {
    {"leaderElect", KS_CFG_T_BOOL},     {"leaseDuration", KS_CFG_T_STR},
    {"renewDeadline", KS_CFG_T_STR},    {"retryPeriod", KS_CFG_T_STR},
    {"resourceLock", KS_CFG_T_STR},     {"resourceName", KS_CFG_T_STR},
    {"resourceNamespace", KS_CFG_T_STR},
};

enum { CC_KUBECONFIG, CC_ACCEPT, CC_CONTENT_TYPE, CC_QPS, CC_BURST };

static const ks_cfg_field_t client_fields[] = {
    {"kubeconfig", KS_CFG_T_STR}, {"acceptContentTypes", KS_CFG_T_STR},
    {"contentType", KS_CFG_T_STR}, {"qps", KS_CFG_T_NUM},
    {"burst", KS_CFG_T_INT},
};

enum { PROF_NAME, PROF_PERCENTAGE, PROF_PLUGINS, PROF_PLUGIN_CONFIG };

static const ks_cfg_field_t profile_fields[] = {
    {"schedulerName", KS_CFG_T_STR},
    {"percentageOfNodesToScore", KS_CFG_T_INT},
    {"plugins", KS_CFG_T_MAP},
    {"pluginConfig", KS_CFG_T_SEQ},
};

enum { SET_ENABLED, SET_DISABLED };

static const ks_cfg_field_t set_fields[] = {
    {"enabled", KS_CFG_T_SEQ},
    {"disabled", KS_CFG_T_SEQ},
};

enum { PLUGIN_NAME, PLUGIN_WEIGHT };

static const ks_cfg_field_t plugin_fields[] = {
    {"name", KS_CFG_T_STR},
    {"weight", KS_CFG_T_INT},
};

enum { PC_NAME, PC_ARGS };

static const ks_cfg_field_t plugin_config_fields[] = {
    {"name", KS_CFG_T_STR},
    {"args", KS_CFG_T_ANY},
};

/* Per profile, what the cross-profile checks need while the document lives. */
typedef struct profile_nodes {
    yaml_node_t *item;       /* the profile mapping */
    yaml_node_t *name;       /* schedulerName value, or NULL */
    yaml_node_t *queue_sort; /* plugins.queueSort value, or NULL */
    int ok;                  /* read without problems of its own */
} profile_nodes_t;

/* --- small readers ------------------------------------------------------------ */

static void read_leader_election(ks_cfg_ctx_t *c, yaml_node_t *map,
                                 ks_leader_election_t *le)
{
    static const char *const dur_names[] = {"leaseDuration", "renewDeadline",
                                            "retryPeriod"};
    yaml_node_t *lf[COUNT(leader_fields)] = {NULL};
    int64_t *durs[3];
    int i, bad = 0;
    durs[0] = &le->lease_duration_ms;
    durs[1] = &le->renew_deadline_ms;
    durs[2] = &le->retry_period_ms;
    ks_cfg_fields(c, map, "leaderElection", leader_fields, COUNT(leader_fields),
                  lf, NULL);
    if (lf[LE_ELECT] != NULL) {
        int b = 0;
        if (ks_yaml_bool(lf[LE_ELECT], &b) == 0)
            le->leader_elect = b;
    }
    for (i = 0; i < 3; i++) {
        yaml_node_t *n = lf[LE_LEASE + i];
        int64_t ms;
        if (n == NULL)
            continue;
        if (ks_go_duration_parse(ks_yaml_text(n), &ms) != 0 || ms <= 0) {
            ks_cfg_problem(c, KS_ESCHEMA, n,
                           "leaderElection.%s: \"%s\" is not a positive "
                           "duration; write it as Go does, e.g. 15s or 1m30s",
                           dur_names[i], ks_yaml_text(n));
            bad = 1;
        } else {
            *durs[i] = ms;
        }
    }
    if (!bad && le->lease_duration_ms <= le->renew_deadline_ms)
        ks_cfg_problem(c, KS_ESCHEMA, lf[LE_LEASE] ? lf[LE_LEASE] : map,
                       "leaderElection.leaseDuration: must be greater than "
                       "renewDeadline");
    else if (!bad && (double)le->renew_deadline_ms <=
                         1.2 * (double)le->retry_period_ms)
        ks_cfg_problem(c, KS_ESCHEMA, lf[LE_RENEW] ? lf[LE_RENEW] : map,
                       "leaderElection.renewDeadline: must be greater than "
                       "retryPeriod*1.2");
    if (lf[LE_LOCK] != NULL) {
        const char *v = ks_yaml_text(lf[LE_LOCK]);
        if (strcmp(v, "leases") != 0)
            ks_cfg_problem(c, KS_ESCHEMA, lf[LE_LOCK],
                           "leaderElection.resourceLock: \"%s\" is not "
                           "supported; ksched uses \"leases\" (the only lock "
                           "newer kube-scheduler accepts)",
                           v);
    }
    if (lf[LE_NAME] != NULL && ks_yaml_text(lf[LE_NAME])[0])
        le->resource_name = ks_arena_strdup(c->arena, ks_yaml_text(lf[LE_NAME]));
    if (lf[LE_NS] != NULL && ks_yaml_text(lf[LE_NS])[0])
        le->resource_namespace =
            ks_arena_strdup(c->arena, ks_yaml_text(lf[LE_NS]));
}

/* Read integer field `v` (already typed int) at `path` into *out, checking
 * [min, max]. `range_code` is the code for a value out of range. Returns 0,
 * or -1 after reporting. */
static int read_int(ks_cfg_ctx_t *c, const yaml_node_t *v, const char *path,
                    int64_t min, int64_t max, int range_code, int64_t *out)
{
    int64_t x;
    if (ks_yaml_int64(v, &x) != 0) {
        ks_cfg_problem(c, KS_ESCHEMA, v, "%s: %s is out of range for an integer",
                       path, ks_yaml_text(v));
        return -1;
    }
    if (x < min || x > max) {
        if (max == INT32_MAX && min == 1)
            ks_cfg_problem(c, range_code, v, "%s: must be greater than 0, found %" PRId64,
                           path, x);
        else if (max == INT32_MAX || max == INT64_MAX)
            ks_cfg_problem(c, range_code, v, "%s: must be at least %" PRId64
                           ", found %" PRId64, path, min, x);
        else
            ks_cfg_problem(c, range_code, v,
                           "%s: %" PRId64 " is not in the valid range [%" PRId64
                           "-%" PRId64 "]",
                           path, x, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

static char *dup_text(ks_cfg_ctx_t *c, const yaml_node_t *v)
{
    return ks_arena_strndup(c->arena, ks_yaml_text(v), v->data.scalar.length);
}

/* One `enabled` or `disabled` list. Entries that are rejected or ignored are
 * left out of the result. */
static void read_plugin_list(ks_cfg_ctx_t *c, yaml_node_t *seq, const char *path,
                             int enabled, ks_plugin_ref_t **refs, size_t *n)
{
    size_t len = ks_yaml_seq_len(seq), i;
    ks_plugin_ref_t *out;

    *refs = NULL;
    *n = 0;
    if (len == 0)
        return;
    out = ks_arena_alloc(c->arena, len * sizeof *out);
    if (out == NULL)
        return;
    for (i = 0; i < len; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, seq, i);
        yaml_node_t *f[COUNT(plugin_fields)];
        char ipath[160], wpath[176], buf[96];
        const char *name;
        int64_t weight = 0;
        int bad = 0;

        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        if (item == NULL || item->type != YAML_MAPPING_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, item, "%s: expected a mapping, found %s",
                           ipath, ks_yaml_describe(item, buf, sizeof buf));
            continue;
        }
        ks_cfg_fields(c, item, ipath, plugin_fields, COUNT(plugin_fields), f, NULL);
        if (f[PLUGIN_NAME] == NULL || f[PLUGIN_NAME]->data.scalar.length == 0) {
            ks_cfg_problem(c, KS_ESCHEMA, item, "%s: name is required", ipath);
            continue;
        }
        name = ks_yaml_text(f[PLUGIN_NAME]);
        if (f[PLUGIN_WEIGHT] != NULL && enabled) {
            snprintf(wpath, sizeof wpath, "%s.weight", ipath);
            if (read_int(c, f[PLUGIN_WEIGHT], wpath, 0, 100, KS_EWEIGHT, &weight) != 0)
                bad = 1;
        }
        if (ks_plugin_is_volume(name)) {
            if (enabled)
                ks_cfg_problem(c, KS_EUNAVAILABLE, f[PLUGIN_NAME],
                               "plugin \"%s\" is not available in ksched (an "
                               "in-tree cloud volume limit; NodeVolumeLimits "
                               "counts CSI and migrated volumes); remove it "
                               "from the profile",
                               name);
            continue; /* disabling one is accepted and has nothing to do */
        }
        if (enabled && strcmp(name, "*") == 0) {
            ks_cfg_problem(c, KS_ESCHEMA, f[PLUGIN_NAME],
                           "%s: \"*\" can only be used in a disabled list", ipath);
            continue;
        }
        if (bad)
            continue;
        out[*n].name = dup_text(c, f[PLUGIN_NAME]);
        out[*n].weight = (int32_t)weight;
        out[*n].line = ks_yaml_line(item);
        out[*n].column = ks_yaml_column(item);
        (*n)++;
    }
    *refs = out;
}

/* profiles[i].plugins into custom[KS_EP_COUNT]. */
static void read_plugins(ks_cfg_ctx_t *c, yaml_node_t *map, const char *path,
                         ks_plugin_set_t *custom, yaml_node_t **queue_sort)
{
    ks_cfg_field_t fields[KS_EP_COUNT + N_PLACEMENT_POINTS];
    yaml_node_t *points[KS_EP_COUNT + N_PLACEMENT_POINTS];
    size_t i;
    int ep;

    for (ep = 0; ep < KS_EP_COUNT; ep++) {
        fields[ep].name = ks_ext_point_field((ks_ext_point_t)ep);
        fields[ep].type = KS_CFG_T_MAP;
    }
    for (i = 0; i < N_PLACEMENT_POINTS; i++) {
        fields[KS_EP_COUNT + i].name = placement_points[i];
        fields[KS_EP_COUNT + i].type = KS_CFG_T_MAP;
    }
    ks_cfg_fields(c, map, path, fields, KS_EP_COUNT + N_PLACEMENT_POINTS,
                  points, NULL);
    *queue_sort = points[KS_EP_QUEUE_SORT];
    for (i = 0; i < N_PLACEMENT_POINTS; i++) {
        yaml_node_t *s[COUNT(set_fields)], *first;
        char ppath[112];
        if (points[KS_EP_COUNT + i] == NULL)
            continue;
        snprintf(ppath, sizeof ppath, "%s.%s", path, placement_points[i]);
        ks_cfg_fields(c, points[KS_EP_COUNT + i], ppath, set_fields,
                      COUNT(set_fields), s, NULL);
        if (s[SET_ENABLED] == NULL || ks_yaml_seq_len(s[SET_ENABLED]) == 0)
            continue;
        first = ks_yaml_seq_at(c->doc, s[SET_ENABLED], 0);
        ks_cfg_problem(c, KS_ESCHEMA, first ? first : s[SET_ENABLED],
                       "%s.enabled: the %s extension point (upstream's "
                       "workload-aware scheduling of pod groups) is not "
                       "supported in ksched; remove the plugins enabled "
                       "there",
                       ppath, placement_points[i]);
    }
    for (ep = 0; ep < KS_EP_COUNT; ep++) {
        yaml_node_t *s[COUNT(set_fields)];
        char ppath[112], lpath[128];
        if (points[ep] == NULL)
            continue;
        snprintf(ppath, sizeof ppath, "%s.%s", path, fields[ep].name);
        ks_cfg_fields(c, points[ep], ppath, set_fields, COUNT(set_fields), s, NULL);
        if (s[SET_ENABLED] != NULL) {
            snprintf(lpath, sizeof lpath, "%s.enabled", ppath);
            read_plugin_list(c, s[SET_ENABLED], lpath, 1, &custom[ep].enabled,
                             &custom[ep].n_enabled);
        }
        if (s[SET_DISABLED] != NULL) {
            snprintf(lpath, sizeof lpath, "%s.disabled", ppath);
            read_plugin_list(c, s[SET_DISABLED], lpath, 0, &custom[ep].disabled,
                             &custom[ep].n_disabled);
        }
    }
}

/* profiles[i].pluginConfig. */
static void read_plugin_config(ks_cfg_ctx_t *c, yaml_node_t *seq, const char *path,
                               ks_profile_config_t *prof)
{
    size_t len = ks_yaml_seq_len(seq), i, j;
    yaml_node_t **names;

    if (len == 0)
        return;
    prof->plugin_config = ks_arena_alloc(c->arena, len * sizeof *prof->plugin_config);
    names = ks_arena_alloc(c->arena, len * sizeof *names);
    if (prof->plugin_config == NULL || names == NULL)
        return;
    for (i = 0; i < len; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, seq, i);
        yaml_node_t *f[COUNT(plugin_config_fields)];
        ks_plugin_config_t *pc;
        char ipath[128], apath[136], buf[96];
        const char *name;
        int dup = 0;

        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        if (item == NULL || item->type != YAML_MAPPING_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, item, "%s: expected a mapping, found %s",
                           ipath, ks_yaml_describe(item, buf, sizeof buf));
            continue;
        }
        ks_cfg_fields(c, item, ipath, plugin_config_fields,
                      COUNT(plugin_config_fields), f, NULL);
        if (f[PC_NAME] == NULL || f[PC_NAME]->data.scalar.length == 0) {
            ks_cfg_problem(c, KS_ESCHEMA, item, "%s: name is required", ipath);
            continue;
        }
        name = ks_yaml_text(f[PC_NAME]);
        for (j = 0; j < i; j++) {
            if (names[j] != NULL && strcmp(ks_yaml_text(names[j]), name) == 0) {
                ks_cfg_problem(c, KS_EDUPCONFIG, item,
                               "%s: repeated pluginConfig for plugin \"%s\" "
                               "(first at line %" PRIu32 ")",
                               ipath, name, ks_yaml_line(names[j]));
                dup = 1;
                break;
            }
        }
        if (dup)
            continue;
        names[i] = f[PC_NAME];
        if (ks_plugin_is_volume(name))
            continue; /* accepted and ignored: not shipped (see above) */
        pc = &prof->plugin_config[prof->n_plugin_config];
        snprintf(apath, sizeof apath, "%s.args", ipath);
        pc->args = ks_cfg_args_build(c, f[PC_ARGS], apath);
        if (pc->args == NULL)
            continue;
        if (f[PC_ARGS] == NULL) { /* no args: an empty map where the entry is */
            pc->args->line = ks_yaml_line(item);
            pc->args->column = ks_yaml_column(item);
        }
        pc->name = dup_text(c, f[PC_NAME]);
        pc->line = ks_yaml_line(item);
        pc->column = ks_yaml_column(item);
        prof->n_plugin_config++;
    }
}

static void read_profile(ks_cfg_ctx_t *c, yaml_node_t *item, size_t idx,
                         size_t n_profiles, ks_profile_config_t *prof,
                         profile_nodes_t *pn)
{
    yaml_node_t *f[COUNT(profile_fields)];
    ks_plugin_set_t custom[KS_EP_COUNT];
    char path[48], fpath[96];
    unsigned before = c->n_problems;
    int64_t v;
    int rc;

    memset(custom, 0, sizeof custom);
    prof->percentage_of_nodes_to_score = -1;
    prof->line = ks_yaml_line(item);
    pn->item = item;
    snprintf(path, sizeof path, "profiles[%zu]", idx);
    ks_cfg_fields(c, item, path, profile_fields, COUNT(profile_fields), f, NULL);

    pn->name = f[PROF_NAME];
    if (f[PROF_NAME] != NULL) {
        if (f[PROF_NAME]->data.scalar.length == 0)
            ks_cfg_problem(c, KS_ESCHEMA, f[PROF_NAME],
                           "%s.schedulerName: must not be empty", path);
        prof->scheduler_name = dup_text(c, f[PROF_NAME]);
    } else if (n_profiles == 1) {
        prof->scheduler_name = ks_arena_strdup(c->arena, KS_DEFAULT_SCHEDULER);
    } else {
        ks_cfg_problem(c, KS_ESCHEMA, item,
                       "%s: schedulerName is required when there are several "
                       "profiles", path);
    }
    if (f[PROF_PERCENTAGE] != NULL) {
        snprintf(fpath, sizeof fpath, "%s.percentageOfNodesToScore", path);
        if (read_int(c, f[PROF_PERCENTAGE], fpath, 0, 100, KS_ESCHEMA, &v) == 0)
            prof->percentage_of_nodes_to_score = (int32_t)v;
    }
    pn->queue_sort = NULL;
    if (f[PROF_PLUGINS] != NULL) {
        snprintf(fpath, sizeof fpath, "%s.plugins", path);
        read_plugins(c, f[PROF_PLUGINS], fpath, custom, &pn->queue_sort);
    }
    if (f[PROF_PLUGIN_CONFIG] != NULL) {
        snprintf(fpath, sizeof fpath, "%s.pluginConfig", path);
        read_plugin_config(c, f[PROF_PLUGIN_CONFIG], fpath, prof);
    }
    rc = ks_cfg_merge_profile(c->arena, custom, prof);
    if (rc != KS_OK)
        ks_cfg_problem(c, rc, item, "out of memory");
    pn->ok = c->n_problems == before;
}

static int sets_equal(const ks_plugin_set_t *a, const ks_plugin_set_t *b)
{
    size_t i;
    if (a->n_enabled != b->n_enabled || a->n_disabled != b->n_disabled)
        return 0;
    for (i = 0; i < a->n_enabled; i++)
        if (strcmp(a->enabled[i].name, b->enabled[i].name) != 0 ||
            a->enabled[i].weight != b->enabled[i].weight)
            return 0;
    for (i = 0; i < a->n_disabled; i++)
        if (strcmp(a->disabled[i].name, b->disabled[i].name) != 0)
            return 0;
    return 1;
}

/* --- extenders ------------------------------------------------------------------ */

enum {
    EXT_URL, EXT_FILTER, EXT_PREEMPT, EXT_PRIORITIZE, EXT_BIND, EXT_WEIGHT,
    EXT_HTTPS, EXT_TLS, EXT_TIMEOUT, EXT_NODE_CACHE, EXT_MANAGED,
    EXT_IGNORABLE
};

static const ks_cfg_field_t extender_fields[] = {
    {"urlPrefix", KS_CFG_T_STR},       {"filterVerb", KS_CFG_T_STR},
    {"preemptVerb", KS_CFG_T_STR},     {"prioritizeVerb", KS_CFG_T_STR},
    {"bindVerb", KS_CFG_T_STR},        {"weight", KS_CFG_T_INT},
    {"enableHTTPS", KS_CFG_T_BOOL},    {"tlsConfig", KS_CFG_T_MAP},
    {"httpTimeout", KS_CFG_T_STR},     {"nodeCacheCapable", KS_CFG_T_BOOL},
    {"managedResources", KS_CFG_T_SEQ}, {"ignorable", KS_CFG_T_BOOL},
};

enum {
    TLS_INSECURE, TLS_SERVER_NAME, TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE,
    TLS_CERT_DATA, TLS_KEY_DATA, TLS_CA_DATA
};

static const ks_cfg_field_t tls_fields[] = {
    {"insecure", KS_CFG_T_BOOL},  {"serverName", KS_CFG_T_STR},
    {"certFile", KS_CFG_T_STR},   {"keyFile", KS_CFG_T_STR},
    {"caFile", KS_CFG_T_STR},     {"certData", KS_CFG_T_STR},
    {"keyData", KS_CFG_T_STR},    {"caData", KS_CFG_T_STR},
};

enum { MR_NAME, MR_IGNORED };

static const ks_cfg_field_t managed_fields[] = {
    {"name", KS_CFG_T_STR},
    {"ignoredByScheduler", KS_CFG_T_BOOL},
};

static int flag(const yaml_node_t *n)
{
    int b = 0;
    if (n != NULL)
        ks_yaml_bool(n, &b);
    return b;
}

/* A non-empty string field, or NULL (upstream treats "" as not set). */
static char *opt_text(ks_cfg_ctx_t *c, const yaml_node_t *n)
{
    if (n == NULL || n->data.scalar.length == 0)
        return NULL;
    return dup_text(c, n);
}

/* A []byte field: base64 in YAML, decoded into the arena. */
static void read_b64(ks_cfg_ctx_t *c, const yaml_node_t *n, const char *path,
                     unsigned char **out, size_t *out_len)
{
    unsigned char *raw = NULL;
    size_t len = 0, bad = 0;
    ks_error_t e = {0};
    if (n == NULL)
        return;
    if (ks_base64_decode(ks_yaml_text(n), n->data.scalar.length, &raw, &len,
                         &bad, &e) != 0) {
        ks_cfg_problem(c, KS_ESCHEMA, n, "%s: not valid base64 (%s)", path,
                       e.msg);
        return;
    }
    *out = ks_arena_alloc(c->arena, len + 1);
    if (*out != NULL) {
        memcpy(*out, raw, len);
        (*out)[len] = '\0';
        *out_len = len;
    }
    free(raw);
}

static int qname_char(char ch, int upper)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           (upper && ch >= 'A' && ch <= 'Z');
}

#define QNAME_FMT                                                              \
    "must consist of alphanumeric characters, '-', '_' or '.', and must "     \
    "start and end with an alphanumeric character (e.g. 'MyName',  or "       \
    "'my.name',  or '123-abc', regex used for validation is "                 \
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

/* apimachinery's IsQualifiedName: NULL when valid, else its message. */
static const char *qualified_name_error(const char *s)
{
    const char *slash = strchr(s, '/'), *name = s;
    size_t n, i;
    if (slash != NULL) {
        size_t plen = (size_t)(slash - s);
        if (strchr(slash + 1, '/') != NULL)
            return "a qualified name " QNAME_FMT " with an optional DNS "
                   "subdomain prefix and '/' (e.g. 'example.com/MyName')";
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > 253)
            return "prefix part must be no more than 253 characters";
        for (i = 0; i < plen; i++) {
            char ch = s[i];
            /* labels of [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.' */
            int start = i == 0 || s[i - 1] == '.';
            int end = i + 1 == plen || s[i + 1] == '.';
            if (qname_char(ch, 0) || (ch == '-' && !start && !end) ||
                (ch == '.' && !start && !end))
                continue;
            return "prefix part a lowercase RFC 1123 subdomain must consist "
                   "of lower case alphanumeric characters, '-' or '.', and "
                   "must start and end with an alphanumeric character (e.g. "
                   "'example.com', regex used for validation is "
                   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                   "[a-z0-9])?)*')";
        }
        name = slash + 1;
    }
    n = strlen(name);
    if (n == 0)
        return "name part must be non-empty";
    if (n > 63)
        return "name part must be no more than 63 characters";
    for (i = 0; i < n; i++) {
        char ch = name[i];
        if (qname_char(ch, 1))
            continue;
        if ((ch == '-' || ch == '_' || ch == '.') && i > 0 && i + 1 < n)
            continue;
        return "name part " QNAME_FMT;
    }
    return NULL;
}

/* v1helper.IsExtendedResourceName: a qualified name outside the
 * kubernetes.io domain, with a '/', that stays qualified behind
 * "requests.". */
static int is_extended_resource_name(const char *s)
{
    char buf[600];
    size_t len = strlen(s);
    if (strchr(s, '/') == NULL || strstr(s, "kubernetes.io/") != NULL)
        return 0;
    if (strncmp(s, "requests.", 9) == 0 || len >= 500)
        return 0;
    memcpy(buf, "requests.", 9);
    memcpy(buf + 9, s, len + 1);
    return qualified_name_error(buf) == NULL;
}

static void read_tls(ks_cfg_ctx_t *c, yaml_node_t *map, const char *path,
                     ks_extender_tls_config_t *t)
{
    yaml_node_t *f[COUNT(tls_fields)] = {NULL};
    char p[160];
    ks_cfg_fields(c, map, path, tls_fields, COUNT(tls_fields), f, NULL);
    t->insecure = flag(f[TLS_INSECURE]);
    t->server_name = opt_text(c, f[TLS_SERVER_NAME]);
    t->cert_file = opt_text(c, f[TLS_CERT_FILE]);
    t->key_file = opt_text(c, f[TLS_KEY_FILE]);
    t->ca_file = opt_text(c, f[TLS_CA_FILE]);
    snprintf(p, sizeof p, "%s.certData", path);
    read_b64(c, f[TLS_CERT_DATA], p, &t->cert_data, &t->cert_len);
    snprintf(p, sizeof p, "%s.keyData", path);
    read_b64(c, f[TLS_KEY_DATA], p, &t->key_data, &t->key_len);
    snprintf(p, sizeof p, "%s.caData", path);
    read_b64(c, f[TLS_CA_DATA], p, &t->ca_data, &t->ca_len);
}

/* managedResources of one extender; names checked as upstream, and unique
 * across every extender (seen/n_seen: the names read so far). */
static void read_managed(ks_cfg_ctx_t *c, yaml_node_t *seq, const char *path,
                         ks_extender_config_t *e, yaml_node_t **seen,
                         size_t *n_seen)
{
    size_t len = ks_yaml_seq_len(seq), i, j;
    if (len == 0)
        return;
    e->managed_resources =
        ks_arena_alloc(c->arena, len * sizeof *e->managed_resources);
    if (e->managed_resources == NULL)
        return;
    for (i = 0; i < len; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, seq, i);
        yaml_node_t *f[COUNT(managed_fields)] = {NULL};
        ks_extender_managed_resource_t *mr;
        const char *name, *why;
        char ipath[160], buf[96];
        int bad = 0;
        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        if (item == NULL || item->type != YAML_MAPPING_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, item,
                           "%s: expected a mapping, found %s", ipath,
                           ks_yaml_describe(item, buf, sizeof buf));
            continue;
        }
        ks_cfg_fields(c, item, ipath, managed_fields, COUNT(managed_fields),
                      f, NULL);
        name = f[MR_NAME] ? ks_yaml_text(f[MR_NAME]) : "";
        if ((why = qualified_name_error(name)) != NULL) {
            ks_cfg_problem(c, KS_ESCHEMA, f[MR_NAME] ? f[MR_NAME] : item,
                           "%s.name: Invalid value: \"%s\": %s", ipath, name,
                           why);
            bad = 1;
        } else if (!is_extended_resource_name(name)) {
            ks_cfg_problem(c, KS_ESCHEMA, f[MR_NAME],
                           "%s.name: Invalid value: \"%s\": is an invalid "
                           "extended resource name",
                           ipath, name);
            bad = 1;
        }
        for (j = 0; j < *n_seen; j++)
            if (strcmp(ks_yaml_text(seen[j]), name) == 0) {
                ks_cfg_problem(c, KS_ESCHEMA, f[MR_NAME] ? f[MR_NAME] : item,
                               "%s.name: Invalid value: \"%s\": duplicate "
                               "extender managed resource name (first at "
                               "line %" PRIu32 ")",
                               ipath, name, ks_yaml_line(seen[j]));
                bad = 1;
                break;
            }
        if (f[MR_NAME] != NULL && j == *n_seen)
            seen[(*n_seen)++] = f[MR_NAME];
        if (bad)
            continue;
        mr = &e->managed_resources[e->n_managed_resources++];
        mr->name = dup_text(c, f[MR_NAME]);
        mr->ignored_by_scheduler = flag(f[MR_IGNORED]);
    }
}

/* extenders: every field of upstream's Extender, then validateExtenders. */
static void read_extenders(ks_cfg_ctx_t *c, yaml_node_t *seq, ks_config_t *cfg)
{
    size_t len = ks_yaml_seq_len(seq), i, n_seen = 0, total = 0;
    yaml_node_t **seen;
    yaml_node_t *first_binder = NULL;
    size_t binders = 0;
    if (len == 0)
        return;
    cfg->extenders = ks_arena_alloc(c->arena, len * sizeof *cfg->extenders);
    for (i = 0; i < len; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, seq, i);
        if (item != NULL && item->type == YAML_MAPPING_NODE) {
            yaml_node_t *mr = ks_yaml_get(c->doc, item, "managedResources");
            if (mr != NULL && mr->type == YAML_SEQUENCE_NODE)
                total += ks_yaml_seq_len(mr);
        }
    }
    seen = ks_arena_alloc(c->arena, (total + 1) * sizeof *seen);
    if (cfg->extenders == NULL || seen == NULL)
        return;
    for (i = 0; i < len; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, seq, i);
        yaml_node_t *f[COUNT(extender_fields)] = {NULL};
        ks_extender_config_t *e = &cfg->extenders[cfg->n_extenders];
        char path[48], p[80], buf[96];
        unsigned before = c->n_problems;
        snprintf(path, sizeof path, "extenders[%zu]", i);
        if (item == NULL || item->type != YAML_MAPPING_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, item,
                           "%s: expected a mapping, found %s", path,
                           ks_yaml_describe(item, buf, sizeof buf));
            continue;
        }
        memset(e, 0, sizeof *e);
        ks_cfg_fields(c, item, path, extender_fields, COUNT(extender_fields),
                      f, NULL);
        e->line = ks_yaml_line(item);
        e->column = ks_yaml_column(item);
        e->url_prefix = f[EXT_URL] ? dup_text(c, f[EXT_URL])
                                   : ks_arena_strdup(c->arena, "");
        if (f[EXT_URL] != NULL && f[EXT_URL]->data.scalar.length > 0 &&
            strncmp(e->url_prefix, "http://", 7) != 0 &&
            strncmp(e->url_prefix, "https://", 8) != 0)
            ks_cfg_problem(c, KS_ESCHEMA, f[EXT_URL],
                           "%s.urlPrefix: \"%s\" is not an http:// or "
                           "https:// URL",
                           path, e->url_prefix);
        e->filter_verb = opt_text(c, f[EXT_FILTER]);
        e->preempt_verb = opt_text(c, f[EXT_PREEMPT]);
        e->prioritize_verb = opt_text(c, f[EXT_PRIORITIZE]);
        e->bind_verb = opt_text(c, f[EXT_BIND]);
        if (f[EXT_WEIGHT] != NULL && ks_yaml_int64(f[EXT_WEIGHT], &e->weight) != 0)
            ks_cfg_problem(c, KS_ESCHEMA, f[EXT_WEIGHT],
                           "%s.weight: %s is out of range for an integer",
                           path, ks_yaml_text(f[EXT_WEIGHT]));
        else if (e->prioritize_verb != NULL && e->weight <= 0)
            ks_cfg_problem(c, KS_ESCHEMA, f[EXT_WEIGHT] ? f[EXT_WEIGHT] : item,
                           "%s.weight: Invalid value: %" PRId64 ": must have "
                           "a positive weight applied to it",
                           path, e->weight);
        e->enable_https = flag(f[EXT_HTTPS]);
        if (f[EXT_TLS] != NULL) {
            e->tls_config = ks_arena_alloc(c->arena, sizeof *e->tls_config);
            if (e->tls_config != NULL) {
                memset(e->tls_config, 0, sizeof *e->tls_config);
                snprintf(p, sizeof p, "%s.tlsConfig", path);
                read_tls(c, f[EXT_TLS], p, e->tls_config);
            }
        }
        e->http_timeout_ms = 5000; /* upstream DefaultExtenderTimeout */
        if (f[EXT_TIMEOUT] != NULL) {
            int64_t ms = 0;
            if (ks_go_duration_parse(ks_yaml_text(f[EXT_TIMEOUT]), &ms) != 0 ||
                ms < 0)
                ks_cfg_problem(c, KS_ESCHEMA, f[EXT_TIMEOUT],
                               "%s.httpTimeout: \"%s\" is not a duration of "
                               "at least 0; write it as Go does, e.g. 5s or "
                               "1m30s",
                               path, ks_yaml_text(f[EXT_TIMEOUT]));
            else if (ms > 0)
                e->http_timeout_ms = ms; /* 0: the default, as upstream */
        }
        e->node_cache_capable = flag(f[EXT_NODE_CACHE]);
        if (f[EXT_MANAGED] != NULL) {
            snprintf(p, sizeof p, "%s.managedResources", path);
            read_managed(c, f[EXT_MANAGED], p, e, seen, &n_seen);
        }
        e->ignorable = flag(f[EXT_IGNORABLE]);
        if (e->bind_verb != NULL && binders++ == 0)
            first_binder = item;
        if (c->n_problems == before)
            cfg->n_extenders++;
    }
    if (binders > 1)
        ks_cfg_problem(c, KS_ESCHEMA, seq,
                       "extenders: Invalid value: \"found %zu extenders\": "
                       "only one extender can implement bind (the first at "
                       "line %" PRIu32 ")",
                       binders, ks_yaml_line(first_binder));
}

/* upstream scheduler.New: the names of managed resources that are
 * ignoredByScheduler become NodeResourcesFit's ignoredResources in every
 * profile (replacing what its args said, as upstream does), so that the
 * plugin leaves them to the extender. */
static void apply_ignored_resources(ks_cfg_ctx_t *c, ks_config_t *cfg)
{
    size_t n = 0, i, j, k;
    const ks_args_t **items;
    ks_args_t *seq;
    for (i = 0; i < cfg->n_extenders; i++)
        for (j = 0; j < cfg->extenders[i].n_managed_resources; j++)
            n += cfg->extenders[i].managed_resources[j].ignored_by_scheduler;
    if (n == 0)
        return;
    items = ks_arena_alloc(c->arena, n * sizeof *items);
    seq = ks_arena_alloc(c->arena, sizeof *seq);
    if (items == NULL || seq == NULL)
        return;
    memset(seq, 0, sizeof *seq);
    seq->kind = KS_ARGS_SEQ;
    seq->line = cfg->extenders[0].line;
    seq->column = cfg->extenders[0].column;
    for (i = 0, k = 0; i < cfg->n_extenders; i++)
        for (j = 0; j < cfg->extenders[i].n_managed_resources; j++) {
            const ks_extender_managed_resource_t *mr =
                &cfg->extenders[i].managed_resources[j];
            ks_args_t *a;
            if (!mr->ignored_by_scheduler)
                continue;
            a = ks_arena_alloc(c->arena, sizeof *a);
            if (a == NULL)
                return;
            memset(a, 0, sizeof *a);
            a->kind = KS_ARGS_SCALAR;
            a->scalar = mr->name;
            a->line = cfg->extenders[i].line;
            a->column = cfg->extenders[i].column;
            items[k++] = a;
        }
    seq->children = items;
    seq->n = (uint32_t)n;
    for (i = 0; i < cfg->n_profiles; i++) {
        ks_profile_config_t *p = &cfg->profiles[i];
        ks_plugin_config_t *pc = NULL;
        const ks_args_t *old;
        ks_args_t *map;
        const char **keys;
        const ks_args_t **children;
        uint32_t m = 0, o;
        for (j = 0; j < p->n_plugin_config; j++)
            if (strcmp(p->plugin_config[j].name, "NodeResourcesFit") == 0)
                pc = &p->plugin_config[j];
        if (pc == NULL) {
            ks_plugin_config_t *grown = ks_arena_alloc(
                c->arena, (p->n_plugin_config + 1) * sizeof *grown);
            if (grown == NULL)
                return;
            if (p->n_plugin_config)
                memcpy(grown, p->plugin_config,
                       p->n_plugin_config * sizeof *grown);
            pc = &grown[p->n_plugin_config];
            memset(pc, 0, sizeof *pc);
            pc->name = ks_arena_strdup(c->arena, "NodeResourcesFit");
            pc->line = seq->line;
            pc->column = seq->column;
            p->plugin_config = grown;
            p->n_plugin_config++;
        }
        old = pc->args;
        o = old && old->kind == KS_ARGS_MAP ? old->n : 0;
        map = ks_arena_alloc(c->arena, sizeof *map);
        keys = ks_arena_alloc(c->arena, (o + 1) * sizeof *keys);
        children = ks_arena_alloc(c->arena, (o + 1) * sizeof *children);
        if (map == NULL || keys == NULL || children == NULL || pc->name == NULL)
            return;
        memset(map, 0, sizeof *map);
        map->kind = KS_ARGS_MAP;
        map->line = old ? old->line : seq->line;
        map->column = old ? old->column : seq->column;
        for (j = 0; j < o; j++) {
            if (strcmp(old->keys[j], "ignoredResources") == 0)
                continue;
            keys[m] = old->keys[j];
            children[m++] = old->children[j];
        }
        keys[m] = "ignoredResources";
        children[m++] = seq;
        map->keys = keys;
        map->children = children;
        map->n = m;
        pc->args = map;
    }
}

/* Checks across profiles: unique scheduler names, one queue sort setting. */
static void check_profiles(ks_cfg_ctx_t *c, ks_config_t *cfg, profile_nodes_t *pn)
{
    size_t i, j;
    const ks_plugin_set_t *qs0 = &cfg->profiles[0].points[KS_EP_QUEUE_SORT];
    const char *qs_name = qs0->n_enabled ? qs0->enabled[0].name : NULL;
    const ks_args_t *qs_args = qs_name ? ks_profile_plugin_args(&cfg->profiles[0], qs_name)
                                       : NULL;

    for (i = 1; i < cfg->n_profiles; i++) {
        const ks_profile_config_t *p = &cfg->profiles[i];
        const ks_plugin_set_t *qs = &p->points[KS_EP_QUEUE_SORT];
        const ks_args_t *args;
        if (p->scheduler_name == NULL)
            continue;
        for (j = 0; j < i; j++) {
            const ks_profile_config_t *q = &cfg->profiles[j];
            if (q->scheduler_name == NULL ||
                strcmp(q->scheduler_name, p->scheduler_name) != 0)
                continue;
            ks_cfg_problem(c, KS_ESCHEMA, pn[i].name ? pn[i].name : pn[i].item,
                           "profiles[%zu].schedulerName: duplicate scheduler name "
                           "\"%s\" (also used by profiles[%zu] at line %" PRIu32 ")",
                           i, p->scheduler_name, j,
                           ks_yaml_line(pn[j].name ? pn[j].name : pn[j].item));
            break;
        }
        if (!pn[0].ok || !pn[i].ok)
            continue;
        if (!sets_equal(qs0, qs)) {
            ks_cfg_problem(c, KS_ESCHEMA, pn[i].queue_sort ? pn[i].queue_sort : pn[i].item,
                           "profiles[%zu].plugins.queueSort: must be the same for "
                           "all profiles (differs from profiles[0])", i);
            continue;
        }
        /* Profile i's args for the queue sort plugin, when it sets them,
         * must equal profiles[0]'s (absent there: none). */
        if (qs_name != NULL && (args = ks_profile_plugin_args(p, qs_name)) != NULL &&
            !ks_cfg_args_equal(qs_args, args))
            ks_cfg_problem(c, KS_ESCHEMA, pn[i].item,
                           "profiles[%zu].pluginConfig: the args of queue sort "
                           "plugin \"%s\" must be the same for all profiles",
                           i, qs_name);
    }
}

/* Record a notice "FILE:LINE:COL: text" in cfg (printed when the load
 * succeeds). */
static void add_notice(ks_cfg_ctx_t *c, ks_config_t *cfg, const yaml_node_t *at,
                       const char *text)
{
    char buf[512], **grown;
    snprintf(buf, sizeof buf, "%s:%" PRIu32 ":%" PRIu32 ": %s", c->file,
             at ? ks_yaml_line(at) : 1, at ? ks_yaml_column(at) : 1, text);
    grown = ks_arena_alloc(c->arena, (cfg->n_notices + 1) * sizeof *grown);
    if (grown == NULL)
        return;
    if (cfg->n_notices > 0)
        memcpy(grown, cfg->notices, cfg->n_notices * sizeof *grown);
    if ((grown[cfg->n_notices] = ks_arena_strdup(c->arena, buf)) == NULL)
        return;
    cfg->notices = grown;
    cfg->n_notices++;
}

static void check_api(ks_cfg_ctx_t *c, ks_config_t *cfg, yaml_node_t *root,
                      yaml_node_t *api, yaml_node_t *kind, int require)
{
    if (api != NULL) {
        const char *s = ks_yaml_text(api);
        if (strcmp(s, KS_API_V1) != 0 && strcmp(s, KS_API_V1BETA3) != 0)
            ks_cfg_problem(c, KS_ESCHEMA, api,
                           "apiVersion \"%s\" is not supported (expected " KS_API_V1
                           " or " KS_API_V1BETA3 ")", s);
        else if (strcmp(s, KS_API_V1BETA3) == 0)
            add_notice(c, cfg, api,
                       "apiVersion " KS_API_V1BETA3 " is deprecated "
                       "(kube-scheduler removed it in v1.29); use " KS_API_V1);
    } else if (require) {
        ks_cfg_problem(c, KS_ESCHEMA, root,
                       "apiVersion is missing (expected " KS_API_V1 " or "
                       KS_API_V1BETA3 ")");
    }
    if (kind != NULL) {
        if (strcmp(ks_yaml_text(kind), KS_KIND) != 0)
            ks_cfg_problem(c, KS_ESCHEMA, kind,
                           "kind \"%s\" is not supported (expected " KS_KIND ")",
                           ks_yaml_text(kind));
    } else if (require) {
        ks_cfg_problem(c, KS_ESCHEMA, root, "kind is missing (expected " KS_KIND ")");
    }
}

static ks_config_t *config_new(ks_arena_t *arena, const char *name)
{
    ks_config_t *cfg = ks_arena_alloc(arena, sizeof *cfg);
    if (cfg == NULL)
        return NULL;
    cfg->priv_ = arena;
    cfg->path = ks_arena_strdup(arena, name);
    cfg->percentage_of_nodes_to_score = 0;
    cfg->parallelism = 16;
    cfg->pod_initial_backoff_seconds = 1;
    cfg->pod_max_backoff_seconds = 10;
    cfg->client_connection.qps = 50;
    cfg->client_connection.burst = 100;
    cfg->leader_election.lease_duration_ms = 15000;
    cfg->leader_election.renew_deadline_ms = 10000;
    cfg->leader_election.retry_period_ms = 2000;
    cfg->leader_election.resource_lock = ks_arena_strdup(arena, "leases");
    cfg->leader_election.resource_name = ks_arena_strdup(arena, "ksched");
    cfg->leader_election.resource_namespace =
        ks_arena_strdup(arena, "kube-system");
    return cfg;
}

/* Read the document rooted at `root` into a new config. */
static ks_config_t *read_root(ks_cfg_ctx_t *c, yaml_node_t *root, int require_api)
{
    yaml_node_t *f[COUNT(top_fields)];
    ks_config_t *cfg = config_new(c->arena, c->file);
    profile_nodes_t *pn = NULL;
    size_t n_items = 0, i;
    int64_t v;
    char buf[96];

    if (cfg == NULL)
        return NULL;
    if (ks_yaml_is_null(root) && !require_api) {
        memset(f, 0, sizeof f);
    } else if (root->type != YAML_MAPPING_NODE) {
        ks_cfg_problem(c, KS_ESCHEMA, root,
                       "expected a KubeSchedulerConfiguration mapping, found %s",
                       ks_yaml_describe(root, buf, sizeof buf));
        return NULL;
    } else {
        ks_cfg_fields(c, root, "", top_fields, COUNT(top_fields), f, NULL);
        check_api(c, cfg, root, f[TOP_API], f[TOP_KIND], require_api);
    }

    if (f[TOP_PERCENTAGE] != NULL &&
        read_int(c, f[TOP_PERCENTAGE], "percentageOfNodesToScore", 0, 100,
                 KS_ESCHEMA, &v) == 0)
        cfg->percentage_of_nodes_to_score = (int32_t)v;
    if (f[TOP_PARALLELISM] != NULL &&
        read_int(c, f[TOP_PARALLELISM], "parallelism", 1, INT32_MAX, KS_ESCHEMA,
                 &v) == 0)
        cfg->parallelism = (int32_t)v;
    if (f[TOP_INITIAL_BACKOFF] != NULL &&
        read_int(c, f[TOP_INITIAL_BACKOFF], "podInitialBackoffSeconds", 1,
                 INT32_MAX, KS_ESCHEMA, &v) == 0)
        cfg->pod_initial_backoff_seconds = v;
    if (f[TOP_MAX_BACKOFF] != NULL &&
        read_int(c, f[TOP_MAX_BACKOFF], "podMaxBackoffSeconds", 1, INT32_MAX,
                 KS_ESCHEMA, &v) == 0)
        cfg->pod_max_backoff_seconds = v;
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds) {
        if (f[TOP_MAX_BACKOFF] != NULL)
            ks_cfg_problem(c, KS_ESCHEMA, f[TOP_MAX_BACKOFF],
                           "podMaxBackoffSeconds: %" PRId64 " is less than "
                           "podInitialBackoffSeconds (%" PRId64 ")",
                           cfg->pod_max_backoff_seconds,
                           cfg->pod_initial_backoff_seconds);
        else
            ks_cfg_problem(c, KS_ESCHEMA, f[TOP_INITIAL_BACKOFF],
                           "podInitialBackoffSeconds: %" PRId64 " is greater than "
                           "podMaxBackoffSeconds (%" PRId64 ", the default); set "
                           "podMaxBackoffSeconds too",
                           cfg->pod_initial_backoff_seconds,
                           cfg->pod_max_backoff_seconds);
    }
    if (f[TOP_LEADER_ELECTION] != NULL)
        read_leader_election(c, f[TOP_LEADER_ELECTION], &cfg->leader_election);
    if (f[TOP_CLIENT_CONNECTION] != NULL) {
        yaml_node_t *cf[COUNT(client_fields)] = {NULL};
        ks_client_connection_t *cc = &cfg->client_connection;
        ks_cfg_fields(c, f[TOP_CLIENT_CONNECTION], "clientConnection", client_fields,
                      COUNT(client_fields), cf, NULL);
        if (cf[CC_KUBECONFIG] != NULL && ks_yaml_text(cf[CC_KUBECONFIG])[0])
            cc->kubeconfig = ks_arena_strdup(c->arena, ks_yaml_text(cf[CC_KUBECONFIG]));
        if (cf[CC_CONTENT_TYPE] != NULL)
            cc->content_type = ks_arena_strdup(c->arena, ks_yaml_text(cf[CC_CONTENT_TYPE]));
        if (cf[CC_QPS] != NULL) {
            double q = 0;
            if (ks_yaml_double(cf[CC_QPS], &q) != 0 || !(q >= 0) || q > 1e9)
                ks_cfg_problem(c, KS_ESCHEMA, cf[CC_QPS],
                               "clientConnection.qps: must be a number of at least 0 "
                               "(0 disables the limit), found %s",
                               ks_yaml_text(cf[CC_QPS]));
            else
                cc->qps = q;
        }
        if (cf[CC_BURST] != NULL &&
            read_int(c, cf[CC_BURST], "clientConnection.burst", 1, INT32_MAX,
                     KS_ESCHEMA, &v) == 0)
            cc->burst = (int32_t)v;
    }
    if (f[TOP_EXTENDERS] != NULL)
        read_extenders(c, f[TOP_EXTENDERS], cfg);
    if (f[TOP_DELAY_CACHE] != NULL) {
        int b = 0;
        if (ks_yaml_bool(f[TOP_DELAY_CACHE], &b) == 0)
            cfg->delay_cache_until_active = b;
        if (b)
            add_notice(c, cfg, f[TOP_DELAY_CACHE],
                       "delayCacheUntilActive: true is accepted, but a "
                       "standby ksched fills its informer caches anyway");
    }

    if (f[TOP_PROFILES] != NULL)
        n_items = ks_yaml_seq_len(f[TOP_PROFILES]);
    cfg->n_profiles = n_items ? n_items : 1;
    cfg->profiles = ks_arena_alloc(c->arena, cfg->n_profiles * sizeof *cfg->profiles);
    pn = ks_arena_alloc(c->arena, cfg->n_profiles * sizeof *pn);
    if (cfg->profiles == NULL || pn == NULL)
        return NULL;
    if (n_items == 0) {
        /* No profiles: upstream's defaulting adds one default profile. */
        ks_profile_config_t *p = &cfg->profiles[0];
        p->scheduler_name = ks_arena_strdup(c->arena, KS_DEFAULT_SCHEDULER);
        p->percentage_of_nodes_to_score = -1;
        if (ks_cfg_merge_profile(c->arena, NULL, p) != KS_OK)
            return NULL;
        return cfg;
    }
    for (i = 0; i < n_items; i++) {
        yaml_node_t *item = ks_yaml_seq_at(c->doc, f[TOP_PROFILES], i);
        if (item == NULL || item->type != YAML_MAPPING_NODE) {
            ks_cfg_problem(c, KS_ESCHEMA, item, "profiles[%zu]: expected a mapping, found %s",
                           i, ks_yaml_describe(item, buf, sizeof buf));
            cfg->profiles[i].percentage_of_nodes_to_score = -1;
            pn[i].item = item;
            continue;
        }
        read_profile(c, item, i, n_items, &cfg->profiles[i], &pn[i]);
    }
    check_profiles(c, cfg, pn);
    return cfg;
}

/* --- entry points ------------------------------------------------------------ */

static void ctx_init(ks_cfg_ctx_t *c, const char *name, ks_error_t *err,
                     ks_arena_t *arena)
{
    memset(c, 0, sizeof *c);
    c->file = name;
    c->err = err;
    c->arena = arena;
    if (err != NULL) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

/* Turn the reading's outcome into the return value. */
static int finish(ks_cfg_ctx_t *c, ks_config_t *cfg, ks_config_t **out)
{
    size_t i;
    if (ks_arena_failed(c->arena) && c->n_problems == 0)
        ks_cfg_problem_at(c, KS_ENOMEM, 1, 1, "out of memory");
    if (cfg == NULL && c->n_problems == 0)
        ks_cfg_problem_at(c, KS_ENOMEM, 1, 1, "out of memory");
    ks_cfg_problems_finish(c);
    if (c->n_problems > 0) {
        ks_arena_free(c->arena);
        return c->first_code;
    }
    for (i = 0; i < cfg->n_notices; i++)
        ks_log(KS_LOGL_WARN, "%s", cfg->notices[i]);
    *out = cfg;
    return KS_OK;
}

static int load_node(const char *name, yaml_document_t *doc, yaml_node_t *node,
                     int require_api, ks_config_t **out, ks_error_t *err)
{
    ks_cfg_ctx_t c;
    ks_arena_t *arena = ks_arena_new(KS_CFG_ARENA_FIRST);
    ks_config_t *cfg;

    if (arena == NULL)
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", name);
    ctx_init(&c, name, err, arena);
    c.doc = doc;
    cfg = read_root(&c, node, require_api);
    if (cfg != NULL && c.n_problems == 0)
        apply_ignored_resources(&c, cfg);
    return finish(&c, cfg, out);
}

int ks_config_load_string(const char *name, const char *yaml, size_t len,
                          ks_config_t **out, ks_error_t *err)
{
    yaml_document_t doc;
    ks_cfg_ctx_t c;
    int rc;

    if (out == NULL)
        return ks_error_set(err, KS_EINVAL, "ks_config_load_string: out is NULL");
    *out = NULL;
    if (name == NULL)
        name = "<string>";
    if (yaml == NULL)
        return ks_error_set(err, KS_EINVAL, "%s: no YAML text given", name);
    ctx_init(&c, name, err, NULL);
    if (ks_cfg_yaml_load(&c, yaml, len, &doc) != 0) {
        ks_cfg_problems_finish(&c);
        return c.first_code;
    }
    rc = load_node(name, &doc, yaml_document_get_root_node(&doc), 1, out, err);
    yaml_document_delete(&doc);
    return rc;
}

int ks_config_load_file(const char *path, ks_config_t **out, ks_error_t *err)
{
    FILE *f;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (out == NULL || path == NULL)
        return ks_error_set(err, KS_EINVAL, "ks_config_load_file: NULL argument");
    *out = NULL;
    f = fopen(path, "rb");
    if (f == NULL)
        return ks_error_set(err, KS_EIO, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        size_t got;
        if (cap - len < 4096) {
            char *grown = realloc(text, cap ? cap * 2 : 8192);
            if (grown == NULL) {
                free(text);
                fclose(f);
                return ks_error_set(err, KS_ENOMEM, "%s: out of memory", path);
            }
            text = grown;
            cap = cap ? cap * 2 : 8192;
        }
        got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = ks_error_set(err, KS_EIO, "%s: cannot read: %s", path, strerror(errno));
        free(text);
        fclose(f);
        return rc;
    }
    fclose(f);
    rc = ks_config_load_string(path, text, len, out, err);
    free(text);
    return rc;
}

int ks_config_load_yaml_node(const char *name, void *doc, void *node,
                             ks_config_t **out, ks_error_t *err)
{
    if (out == NULL || doc == NULL)
        return ks_error_set(err, KS_EINVAL, "ks_config_load_yaml_node: NULL argument");
    *out = NULL;
    if (name == NULL)
        name = "<config>";
    return load_node(name, doc, node, 0, out, err);
}

ks_config_t *ks_config_default(void)
{
    ks_arena_t *arena = ks_arena_new(KS_CFG_ARENA_FIRST);
    ks_config_t *cfg;
    ks_profile_config_t *p;

    if (arena == NULL)
        return NULL;
    cfg = config_new(arena, "<default>");
    if (cfg == NULL)
        goto fail;
    p = ks_arena_alloc(arena, sizeof *p);
    if (p == NULL)
        goto fail;
    p->scheduler_name = ks_arena_strdup(arena, KS_DEFAULT_SCHEDULER);
    p->percentage_of_nodes_to_score = -1;
    if (ks_cfg_merge_profile(arena, NULL, p) != KS_OK || ks_arena_failed(arena))
        goto fail;
    cfg->profiles = p;
    cfg->n_profiles = 1;
    return cfg;
fail:
    ks_arena_free(arena);
    return NULL;
}

void ks_config_free(ks_config_t *cfg)
{
    if (cfg != NULL)
        ks_arena_free(cfg->priv_); /* cfg itself lives in the arena */
}

const ks_args_t *ks_profile_plugin_args(const ks_profile_config_t *prof,
                                        const char *plugin)
{
    size_t i;
    if (prof == NULL || plugin == NULL)
        return NULL;
    for (i = 0; i < prof->n_plugin_config; i++)
        if (strcmp(prof->plugin_config[i].name, plugin) == 0)
            return prof->plugin_config[i].args;
    return NULL;
}
