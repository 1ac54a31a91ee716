/* GET /configz: the configuration the running generation uses, with the
 * defaults merged in (as kube-scheduler's /configz serves its defaulted
 * KubeSchedulerConfiguration under "componentconfig"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ksched/helpers.h"

/* pluginConfig args as JSON: scalars stay strings (as written). */
static json_t *args_json(const ks_args_t *a, int depth)
{
    json_t *o;
    uint32_t i;
    if (a == NULL || depth > 64)
        return json_null();
    switch (a->kind) {
    case KS_ARGS_MAP:
        o = json_object();
        for (i = 0; o && i < a->n; i++)
            json_object_set_new(o, a->keys[i],
                                args_json(a->children[i], depth + 1));
        return o;
    case KS_ARGS_SEQ:
        o = json_array();
        for (i = 0; o && i < a->n; i++)
            json_array_append_new(o, args_json(a->children[i], depth + 1));
        return o;
    case KS_ARGS_SCALAR:
        return json_string(a->scalar ? a->scalar : "");
    default:
        return json_null();
    }
}

static json_t *set_json(const ks_plugin_set_t *set)
{
    json_t *en = json_array(), *dis = json_array();
    size_t i;
    for (i = 0; en && i < set->n_enabled; i++) {
        json_t *p = json_pack("{s:s}", "name", set->enabled[i].name);
        if (p && set->enabled[i].weight)
            json_object_set_new(p, "weight",
                                json_integer(set->enabled[i].weight));
        json_array_append_new(en, p);
    }
    for (i = 0; dis && i < set->n_disabled; i++)
        json_array_append_new(dis, json_pack("{s:s}", "name",
                                             set->disabled[i].name));
    return json_pack("{s:o, s:o}", "enabled", en, "disabled", dis);
}

static json_t *profile_json(const ks_profile_config_t *p)
{
    json_t *plugins = json_object(), *pc = json_array(), *o;
    size_t i;
    for (i = 0; plugins && i <= KS_EP_MULTI_POINT; i++)
        json_object_set_new(plugins, ks_ext_point_field((ks_ext_point_t)i),
                            set_json(&p->points[i]));
    for (i = 0; pc && i < p->n_plugin_config; i++)
        json_array_append_new(pc, json_pack("{s:s, s:o}", "name",
                                            p->plugin_config[i].name, "args",
                                            args_json(p->plugin_config[i].args,
                                                      0)));
    o = json_pack("{s:s, s:o, s:o}", "schedulerName", p->scheduler_name,
                  "plugins", plugins, "pluginConfig", pc);
    if (o && p->percentage_of_nodes_to_score >= 0)
        json_object_set_new(o, "percentageOfNodesToScore",
                            json_integer(p->percentage_of_nodes_to_score));
    return o;
}

void ks_api_configz(ks_server_t *srv, ks_http_conn_t *c,
                    const ks_http_request_t *req)
{
    const ks_config_t *cfg = ks_scheduler_generation(srv->sched)->cfg;
    const ks_client_connection_t *cc = &cfg->client_connection;
    const ks_leader_election_t *le = &cfg->leader_election;
    json_t *profiles = json_array(), *conf;
    char d[3][32];
    size_t i;
    (void)req;
    for (i = 0; profiles && i < cfg->n_profiles; i++)
        json_array_append_new(profiles, profile_json(&cfg->profiles[i]));
    ks_go_duration((uint64_t)le->lease_duration_ms, d[0], sizeof d[0]);
    ks_go_duration((uint64_t)le->renew_deadline_ms, d[1], sizeof d[1]);
    ks_go_duration((uint64_t)le->retry_period_ms, d[2], sizeof d[2]);
    conf = json_pack(
        "{s:s, s:s, s:i, s:i, s:I, s:I, s:{s:f, s:i, s:s, s:s},"
        " s:{s:b, s:s, s:s, s:s, s:s, s:s, s:s}, s:o}",
        "apiVersion", "kubescheduler.config.k8s.io/v1", "kind",
        "KubeSchedulerConfiguration", "percentageOfNodesToScore",
        (int)cfg->percentage_of_nodes_to_score, "parallelism",
        (int)cfg->parallelism, "podInitialBackoffSeconds",
        (json_int_t)cfg->pod_initial_backoff_seconds, "podMaxBackoffSeconds",
        (json_int_t)cfg->pod_max_backoff_seconds, "clientConnection", "qps",
        cc->qps, "burst", (int)cc->burst, "kubeconfig",
        cc->kubeconfig ? cc->kubeconfig : "", "contentType",
        cc->content_type ? cc->content_type : "application/json",
        "leaderElection", "leaderElect",
        srv->leader != NULL || le->leader_elect, "leaseDuration", d[0],
        "renewDeadline", d[1], "retryPeriod", d[2], "resourceLock",
        le->resource_lock ? le->resource_lock : "leases", "resourceName",
        le->resource_name ? le->resource_name : "", "resourceNamespace",
        le->resource_namespace ? le->resource_namespace : "", "profiles",
        profiles);
    if (conf == NULL) {
        ks_api_status(c, 500, "InternalError", NULL, NULL, "out of memory");
        return;
    }
    json_object_set_new(conf, "source", json_string(cfg->path));
    ks_api_json(c, 200, json_pack("{s:o}", "componentconfig", conf));
}
