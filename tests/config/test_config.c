/*
 * KubeSchedulerConfiguration reading: the default merge, every error the
 * reader reports (exact text and position), the args tree, and the shipped
 * profiles.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#include "config/config.h"
#include "config/config_internal.h"

#define HDR                                                                    \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                            \
    "kind: KubeSchedulerConfiguration\n"

#define PROFILE HDR "profiles:\n- schedulerName: default-scheduler\n"

/* The default multiPoint list as rendered by render_profile(). */
#define DEFAULT_MP                                                             \
    "SchedulingGates PrioritySort NodeUnschedulable NodeName TaintToleration:3 " \
    "NodeAffinity:2 NodePorts NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 "        \
    "InterPodAffinity:2 DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 " \
    "ImageLocality:1 DefaultBinder"

/* One line per non-empty extension point:
 * "field: Enabled[:weight] ... -Disabled ...". */
static void render_profile(const ks_profile_config_t *p, char *buf, size_t len)
{
    size_t off = 0, i;
    int ep;
    buf[0] = '\0';
    for (ep = 0; ep < KS_EP_COUNT; ep++) {
        const ks_plugin_set_t *s = &p->points[ep];
        if (s->n_enabled == 0 && s->n_disabled == 0)
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s:",
                                ks_ext_point_field((ks_ext_point_t)ep));
        for (i = 0; i < s->n_enabled; i++) {
            if (s->enabled[i].weight != 0)
                off += (size_t)snprintf(buf + off, len - off, " %s:%d",
                                        s->enabled[i].name, s->enabled[i].weight);
            else
                off += (size_t)snprintf(buf + off, len - off, " %s",
                                        s->enabled[i].name);
        }
        for (i = 0; i < s->n_disabled; i++)
            off += (size_t)snprintf(buf + off, len - off, " -%s",
                                    s->disabled[i].name);
        off += (size_t)snprintf(buf + off, len - off, "\n");
    }
}

static int load(const char *yaml, ks_config_t **cfg, ks_error_t *err)
{
    return ks_config_load_string("t.yaml", yaml, strlen(yaml), cfg, err);
}

/* --- merge ------------------------------------------------------------------ */

typedef struct merge_case {
    const char *name;
    const char *yaml;
    const char *expected; /* render_profile() of profiles[0] */
} merge_case_t;

static const merge_case_t merge_cases[] = {
    {"default only", PROFILE, "multiPoint: " DEFAULT_MP "\n"},
    {"no profiles at all", HDR, "multiPoint: " DEFAULT_MP "\n"},
    {"disable one at multiPoint",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      disabled:\n"
             "      - name: TaintToleration\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "NodeAffinity:2 NodePorts NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 "
     "InterPodAffinity:2 DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 "
     "ImageLocality:1 DefaultBinder -TaintToleration\n"},
    {"'*' at score",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      disabled:\n"
             "      - name: '*'\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n"
             "        weight: 4\n",
     "score: NodeAffinity:4 -*\nmultiPoint: " DEFAULT_MP "\n"},
    {"re-enable NodeResourcesFit at score with weight 5",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: NodeResourcesFit\n"
             "        weight: 5\n",
     "score: NodeResourcesFit:5\nmultiPoint: " DEFAULT_MP "\n"},
    {"re-enable NodeResourcesFit at multiPoint with weight 5 (in place)",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: NodeResourcesFit\n"
             "        weight: 5\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:3 NodeAffinity:2 NodePorts NodeResourcesFit:5 "
     "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 InterPodAffinity:2 DynamicResources DefaultPreemption "
     "NodeResourcesBalancedAllocation:1 ImageLocality:1 DefaultBinder\n"},
    {"three re-enabled weighted plugins, each once",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: ImageLocality\n"
             "        weight: 4\n"
             "      - name: TaintToleration\n"
             "        weight: 1\n"
             "      - name: NodeAffinity\n"
             "        weight: 7\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:1 NodeAffinity:7 NodePorts NodeResourcesFit:1 "
     "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 InterPodAffinity:2 DynamicResources DefaultPreemption "
     "NodeResourcesBalancedAllocation:1 ImageLocality:4 DefaultBinder\n"},
    {"custom plugins appended",
     PROFILE "  plugins:\n"
             "    filter:\n"
             "      enabled:\n"
             "      - name: MyFilter\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: MyPlugin\n",
     "filter: MyFilter\nmultiPoint: " DEFAULT_MP " MyPlugin\n"},
    {"multiPoint custom with weight",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: MyScore\n"
             "        weight: 3\n"
             "      - name: ImageLocality\n"
             "        weight: 2\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:3 NodeAffinity:2 NodePorts NodeResourcesFit:1 "
     "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 InterPodAffinity:2 DynamicResources DefaultPreemption "
     "NodeResourcesBalancedAllocation:1 ImageLocality:2 DefaultBinder "
     "MyScore:3\n"},
    {"'*' at multiPoint keeps only the custom list",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      disabled:\n"
             "      - name: '*'\n"
             "      enabled:\n"
             "      - name: PrioritySort\n"
             "      - name: NodeUnschedulable\n"
             "      - name: NodeResourcesFit\n"
             "      - name: NodeAffinity\n"
             "        weight: 3\n"
             "      - name: DefaultBinder\n",
     "multiPoint: PrioritySort NodeUnschedulable NodeResourcesFit NodeAffinity:3 "
     "DefaultBinder -*\n"},
    {"disabled then re-enabled moves to the end",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      disabled:\n"
             "      - name: NodeAffinity\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n"
             "        weight: 7\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:3 NodePorts NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 "
     "InterPodAffinity:2 DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 "
     "ImageLocality:1 DefaultBinder NodeAffinity:7 -NodeAffinity\n"},
    {"a default named twice: the last replaces, the first is appended",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n"
             "        weight: 1\n"
             "      - name: NodeAffinity\n"
             "        weight: 7\n",
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:3 NodeAffinity:7 NodePorts NodeResourcesFit:1 "
     "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 InterPodAffinity:2 DynamicResources DefaultPreemption "
     "NodeResourcesBalancedAllocation:1 ImageLocality:1 DefaultBinder "
     "NodeAffinity:1\n"},
    {"volume plugins disabled like any other",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      disabled:\n"
             "      - name: VolumeBinding\n"
             "      - name: NodePorts\n"
             "      - name: VolumeZone\n"
             "    filter:\n"
             "      disabled:\n"
             "      - name: NodeVolumeLimits\n",
     "filter: -NodeVolumeLimits\n"
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeRestrictions "
     "NodeVolumeLimits PodTopologySpread:2 InterPodAffinity:2 "
     "DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 "
     "ImageLocality:1 DefaultBinder -VolumeBinding -NodePorts -VolumeZone\n"},
    {"disable at multiPoint and at score (conformance config-disabled)",
     "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
     "kind: KubeSchedulerConfiguration\n"
     "profiles:\n"
     "- plugins:\n"
     "    multiPoint:\n"
     "      disabled:\n"
     "      - name: TaintToleration\n"
     "    score:\n"
     "      disabled:\n"
     "      - name: NodeResourcesBalancedAllocation\n"
     "      - name: ImageLocality\n"
     "  schedulerName: default-scheduler\n",
     "score: -NodeResourcesBalancedAllocation -ImageLocality\n"
     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable NodeName "
     "NodeAffinity:2 NodePorts NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 "
     "InterPodAffinity:2 DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 "
     "ImageLocality:1 DefaultBinder -TaintToleration\n"},
    {"every extension point field is read",
     PROFILE "  plugins:\n"
             "    preEnqueue: {enabled: [{name: A}]}\n"
             "    queueSort: {enabled: [{name: B}], disabled: [{name: PrioritySort}]}\n"
             "    preFilter: {enabled: [{name: C}]}\n"
             "    filter: {enabled: [{name: D}]}\n"
             "    postFilter: {enabled: [{name: E}]}\n"
             "    preScore: {enabled: [{name: F}]}\n"
             "    score: {enabled: [{name: G, weight: 9}]}\n"
             "    reserve: {enabled: [{name: H}]}\n"
             "    permit: {enabled: [{name: I}]}\n"
             "    preBind: {enabled: [{name: J}]}\n"
             "    bind: {enabled: [{name: K}]}\n"
             "    postBind: {enabled: [{name: L}]}\n",
     "preEnqueue: A\nqueueSort: B -PrioritySort\npreFilter: C\nfilter: D\n"
     "postFilter: E\npreScore: F\nscore: G:9\nreserve: H\npermit: I\n"
     "preBind: J\nbind: K\npostBind: L\nmultiPoint: " DEFAULT_MP "\n"},
};

START_TEST(test_merge_table)
{
    const merge_case_t *tc = &merge_cases[_i];
    ks_config_t *cfg = NULL;
    ks_error_t err;
    char got[4096];
    int rc = load(tc->yaml, &cfg, &err);

    ck_assert_msg(rc == KS_OK, "%s: %s", tc->name, err.msg);
    ck_assert_uint_eq(cfg->n_profiles, 1);
    ck_assert_str_eq(cfg->profiles[0].scheduler_name, "default-scheduler");
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_msg(strcmp(got, tc->expected) == 0, "%s:\n got: %s\nwant: %s",
                  tc->name, got, tc->expected);
    ks_config_free(cfg);
}
END_TEST

/* mergePluginSet with a default set that has its own disabled list. */
START_TEST(test_merge_set_direct)
{
    ks_arena_t *a = ks_arena_new(KS_CFG_ARENA_FIRST);
    ks_plugin_ref_t def_en[] = {{"A", 0, 0, 0}, {"B", 2, 0, 0}, {"E", 1, 0, 0}};
    ks_plugin_ref_t def_dis[] = {{"C", 0, 0, 0}};
    ks_plugin_ref_t cus_en[] = {{"B", 5, 3, 9}, {"D", 0, 0, 0}, {"C", 4, 0, 0}};
    ks_plugin_ref_t cus_dis[] = {{"A", 0, 0, 0}};
    ks_plugin_set_t def = {def_en, 3, def_dis, 1};
    ks_plugin_set_t cus = {cus_en, 3, cus_dis, 1};
    ks_plugin_set_t out;

    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(ks_cfg_merge_set(a, &def, &cus, &out), KS_OK);
    /* A disabled by the custom set; B replaced in place (weight 5, position
     * of the custom entry kept); E kept; D and C appended (C was disabled by
     * the default set, so it does not replace anything). */
    ck_assert_uint_eq(out.n_enabled, 4);
    ck_assert_str_eq(out.enabled[0].name, "B");
    ck_assert_int_eq(out.enabled[0].weight, 5);
    ck_assert_uint_eq(out.enabled[0].line, 3);
    ck_assert_uint_eq(out.enabled[0].column, 9);
    ck_assert_str_eq(out.enabled[1].name, "E");
    ck_assert_int_eq(out.enabled[1].weight, 1);
    ck_assert_str_eq(out.enabled[2].name, "D");
    ck_assert_str_eq(out.enabled[3].name, "C");
    ck_assert_int_eq(out.enabled[3].weight, 4);
    ck_assert_uint_eq(out.n_disabled, 2);
    ck_assert_str_eq(out.disabled[0].name, "A");
    ck_assert_str_eq(out.disabled[1].name, "C");
    /* The output owns copies, not the input's strings. */
    ck_assert_ptr_ne(out.enabled[0].name, cus_en[0].name);

    /* Nothing custom: the default comes back unchanged. */
    ck_assert_int_eq(ks_cfg_merge_set(a, &def, NULL, &out), KS_OK);
    ck_assert_uint_eq(out.n_enabled, 3);
    ck_assert_str_eq(out.enabled[0].name, "A");
    ck_assert_str_eq(out.enabled[1].name, "B");
    ck_assert_int_eq(out.enabled[1].weight, 2);
    ck_assert_str_eq(out.enabled[2].name, "E");
    ck_assert_uint_eq(out.n_disabled, 1);
    ck_assert_str_eq(out.disabled[0].name, "C");
    ks_arena_free(a);
}
END_TEST

/* --- errors -------------------------------------------------------------------- */

typedef struct error_case {
    const char *name;
    const char *yaml;
    int code;
    const char *msg;
} error_case_t;

static const error_case_t error_cases[] = {
    {"unknown top-level field", HDR "profile: []\n", KS_ESCHEMA,
     "t.yaml:3:1: unknown field \"profile\"; did you mean \"profiles\"? (valid: "
     "apiVersion, kind, profiles, percentageOfNodesToScore, parallelism, "
     "podInitialBackoffSeconds, podMaxBackoffSeconds, leaderElection, "
     "clientConnection, healthzBindAddress, metricsBindAddress, enableProfiling, "
     "enableContentionProfiling, extenders, delayCacheUntilActive)"},
    {"unknown profile field", PROFILE "  weights: {}\n", KS_ESCHEMA,
     "t.yaml:5:3: unknown field \"weights\" in profiles[0] (valid: schedulerName, "
     "percentageOfNodesToScore, plugins, pluginConfig)"},
    {"typo'd extension point",
     PROFILE "  plugins:\n"
             "    socre:\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n",
     KS_ESCHEMA,
     "t.yaml:6:5: unknown field \"socre\" in profiles[0].plugins; did you mean "
     "\"score\"? (valid: preEnqueue, queueSort, preFilter, filter, postFilter, "
     "preScore, score, reserve, permit, preBind, bind, postBind, multiPoint, "
     "placementGenerate, placementScore)"},
    {"unknown field in a plugin entry",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n"
             "        wieght: 2\n",
     KS_ESCHEMA,
     "t.yaml:9:9: unknown field \"wieght\" in "
     "profiles[0].plugins.score.enabled[0]; did you mean \"weight\"? (valid: "
     "name, weight)"},
    {"wrong types, all reported",
     HDR "profiles:\n"
         "  schedulerName: a\n"
         "parallelism: many\n"
         "enableProfiling: 1\n",
     KS_ESCHEMA,
     "t.yaml:4:3: profiles: expected a sequence, found a mapping\n"
     "t.yaml:5:14: parallelism: expected an integer, found a string (\"many\")\n"
     "t.yaml:6:18: enableProfiling: expected a boolean, found an integer (\"1\")"},
    {"wrong type deep inside",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      enabled: NodeAffinity\n"
             "    filter:\n"
             "      disabled:\n"
             "      - NodePorts\n",
     KS_ESCHEMA,
     "t.yaml:7:16: profiles[0].plugins.score.enabled: expected a sequence, found "
     "a string (\"NodeAffinity\")\n"
     "t.yaml:10:9: profiles[0].plugins.filter.disabled[0]: expected a mapping, "
     "found a string (\"NodePorts\")"},
    {"quoted integer is a string",
     PROFILE "  percentageOfNodesToScore: '50'\n", KS_ESCHEMA,
     "t.yaml:5:29: profiles[0].percentageOfNodesToScore: expected an integer, "
     "found a string (\"50\") (quoted scalars are strings: remove the "
     "quotes)"},
    {"malformed YAML: bad indentation in a sequence",
     HDR "profiles:\n"
         "  - schedulerName: a\n"
         "   plugins: {}\n",
     KS_EPARSE,
     "t.yaml:5:4: malformed YAML: did not find expected '-' indicator (while "
     "parsing a block collection at line 4, column 3)"},
    {"malformed YAML: bad indentation in a mapping",
     "apiVersion: kubescheduler.config.k8s.io/v1\n"
     "kind: KubeSchedulerConfiguration\n"
     "  parallelism: 4\n",
     KS_EPARSE,
     "t.yaml:3:14: malformed YAML: mapping values are not allowed in this "
     "context"},
    {"malformed YAML: invalid UTF-8", "kind: \"\xff\"\n", KS_EPARSE,
     "t.yaml:1:8: malformed YAML: invalid leading UTF-8 octet"},
    {"duplicate schedulerName",
     HDR "profiles:\n"
         "- schedulerName: a\n"
         "- schedulerName: b\n"
         "- schedulerName: a\n",
     KS_ESCHEMA,
     "t.yaml:6:18: profiles[2].schedulerName: duplicate scheduler name \"a\" "
     "(also used by profiles[0] at line 4)"},
    {"schedulerName required with several profiles",
     HDR "profiles:\n"
         "- schedulerName: a\n"
         "- plugins: {}\n",
     KS_ESCHEMA,
     "t.yaml:5:3: profiles[1]: schedulerName is required when there are "
     "several profiles"},
    {"repeated pluginConfig",
     PROFILE "  pluginConfig:\n"
             "  - name: NodeResourcesFit\n"
             "    args: {}\n"
             "  - name: NodeResourcesFit\n"
             "    args:\n"
             "      kind: NodeResourcesFitArgs\n",
     KS_EDUPCONFIG,
     "t.yaml:8:5: profiles[0].pluginConfig[1]: repeated pluginConfig for plugin "
     "\"NodeResourcesFit\" (first at line 6)"},
    {"percentage 150", HDR "percentageOfNodesToScore: 150\n", KS_ESCHEMA,
     "t.yaml:3:27: percentageOfNodesToScore: 150 is not in the valid range "
     "[0-100]"},
    {"profile percentage and parallelism",
     HDR "parallelism: 0\n"
         "profiles:\n"
         "- percentageOfNodesToScore: -5\n",
     KS_ESCHEMA,
     "t.yaml:3:14: parallelism: must be greater than 0, found 0\n"
     "t.yaml:5:29: profiles[0].percentageOfNodesToScore: -5 is not in the valid "
     "range [0-100]"},
    {"backoffs",
     HDR "podInitialBackoffSeconds: 8\n"
         "podMaxBackoffSeconds: 5\n",
     KS_ESCHEMA,
     "t.yaml:4:23: podMaxBackoffSeconds: 5 is less than podInitialBackoffSeconds "
     "(8)"},
    {"negative backoff",
     HDR "podInitialBackoffSeconds: -1\n", KS_ESCHEMA,
     "t.yaml:3:27: podInitialBackoffSeconds: must be greater than 0, found -1"},
    {"initial backoff above the default max",
     HDR "podInitialBackoffSeconds: 20\n", KS_ESCHEMA,
     "t.yaml:3:27: podInitialBackoffSeconds: 20 is greater than "
     "podMaxBackoffSeconds (10, the default); set podMaxBackoffSeconds too"},
    {"negative weight",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: NodeAffinity\n"
             "        weight: -1\n",
     KS_EWEIGHT,
     "t.yaml:9:17: profiles[0].plugins.score.enabled[0].weight: -1 is not in "
     "the valid range [0-100]"},
    {"weight above 100",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - {name: MyScore, weight: 101}\n",
     KS_EWEIGHT,
     "t.yaml:8:33: profiles[0].plugins.multiPoint.enabled[0].weight: 101 is not "
     "in the valid range [0-100]"},
    {"cloud volume limit enabled",
     PROFILE "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - name: CinderLimits\n"
             "      disabled:\n"
             "      - name: GCEPDLimits\n"
             "  pluginConfig:\n"
             "  - name: CinderLimits\n"
             "    args: {}\n",
     KS_EUNAVAILABLE,
     "t.yaml:8:15: plugin \"CinderLimits\" is not available in ksched (an "
     "in-tree cloud volume limit; NodeVolumeLimits counts CSI and migrated "
     "volumes); remove it from the profile"},
    {"empty file", "", KS_ESCHEMA,
     "t.yaml:1:1: the file is empty; expected a KubeSchedulerConfiguration "
     "(apiVersion: kubescheduler.config.k8s.io/v1, kind: "
     "KubeSchedulerConfiguration)"},
    {"only comments", "# nothing here\n\n", KS_ESCHEMA,
     "t.yaml:1:1: the file is empty; expected a KubeSchedulerConfiguration "
     "(apiVersion: kubescheduler.config.k8s.io/v1, kind: "
     "KubeSchedulerConfiguration)"},
    {"not a mapping", "- a\n- b\n", KS_ESCHEMA,
     "t.yaml:1:1: expected a KubeSchedulerConfiguration mapping, found a "
     "sequence"},
    {"wrong apiVersion",
     "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
     "kind: KubeSchedulerConfiguration\n",
     KS_ESCHEMA,
     "t.yaml:1:13: apiVersion \"kubescheduler.config.k8s.io/v1beta2\" is not "
     "supported (expected kubescheduler.config.k8s.io/v1 or "
     "kubescheduler.config.k8s.io/v1beta3)"},
    {"missing apiVersion, wrong kind", "kind: KubeProxyConfiguration\n",
     KS_ESCHEMA,
     "t.yaml:1:1: apiVersion is missing (expected kubescheduler.config.k8s.io/v1 "
     "or kubescheduler.config.k8s.io/v1beta3)\n"
     "t.yaml:1:7: kind \"KubeProxyConfiguration\" is not supported (expected "
     "KubeSchedulerConfiguration)"},
    {"repeated field", HDR "parallelism: 4\nparallelism: 8\n", KS_ESCHEMA,
     "t.yaml:4:1: field \"parallelism\" repeated (first at line 3)"},
    {"two documents", HDR "---\n" HDR, KS_ESCHEMA,
     "t.yaml:3:1: a second YAML document; a configuration file holds exactly "
     "one KubeSchedulerConfiguration"},
    {"extenders: prioritizeVerb needs a positive weight",
     HDR "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n",
     KS_ESCHEMA,
     "t.yaml:4:3: extenders[0].weight: Invalid value: 0: must have a "
     "positive weight applied to it"},
    {"upstream-only sections are type-checked",
     HDR "leaderElection:\n"
         "  leaderElect: maybe\n"
         "  leaseDurtion: 15s\n"
         "clientConnection:\n"
         "  qps: fast\n"
         "healthzBindAddress: [a]\n",
     KS_ESCHEMA,
     "t.yaml:4:16: leaderElection.leaderElect: expected a boolean, found a "
     "string (\"maybe\")\n"
     "t.yaml:5:3: unknown field \"leaseDurtion\" in leaderElection; did you mean "
     "\"leaseDuration\"? (valid: leaderElect, leaseDuration, renewDeadline, "
     "retryPeriod, resourceLock, resourceName, resourceNamespace)\n"
     "t.yaml:7:8: clientConnection.qps: expected a number, found a string "
     "(\"fast\")\n"
     "t.yaml:8:21: healthzBindAddress: expected a string, found a sequence"},
    {"plugin entry without a name",
     PROFILE "  plugins:\n"
             "    filter:\n"
             "      enabled:\n"
             "      - weight: 1\n"
             "      disabled:\n"
             "      - name: ''\n",
     KS_ESCHEMA,
     "t.yaml:8:9: profiles[0].plugins.filter.enabled[0]: name is required\n"
     "t.yaml:10:9: profiles[0].plugins.filter.disabled[0]: name is required"},
    {"'*' in an enabled list",
     PROFILE "  plugins:\n"
             "    score:\n"
             "      enabled:\n"
             "      - name: '*'\n",
     KS_ESCHEMA,
     "t.yaml:8:15: profiles[0].plugins.score.enabled[0]: \"*\" can only be used "
     "in a disabled list"},
    {"args not a mapping",
     PROFILE "  pluginConfig:\n"
             "  - name: NodeResourcesFit\n"
             "    args: [1, 2]\n",
     KS_ESCHEMA,
     "t.yaml:7:11: profiles[0].pluginConfig[0].args: expected a mapping, found "
     "a sequence"},
    {"repeated key inside args",
     PROFILE "  pluginConfig:\n"
             "  - name: Custom\n"
             "    args:\n"
             "      a: 1\n"
             "      b:\n"
             "        c: 1\n"
             "        c: 2\n",
     KS_ESCHEMA,
     "t.yaml:11:9: profiles[0].pluginConfig[0].args: field \"c\" repeated "
     "(first at line 10)"},
    {"queue sort differs between profiles",
     HDR "profiles:\n"
         "- schedulerName: a\n"
         "- schedulerName: b\n"
         "  plugins:\n"
         "    queueSort:\n"
         "      enabled:\n"
         "      - name: MySort\n",
     KS_ESCHEMA,
     "t.yaml:8:7: profiles[1].plugins.queueSort: must be the same for all "
     "profiles (differs from profiles[0])"},
    {"queue sort args differ between profiles",
     HDR "profiles:\n"
         "- schedulerName: a\n"
         "  plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
         "  pluginConfig:\n"
         "  - name: MySort\n"
         "    args: {order: asc}\n"
         "- schedulerName: b\n"
         "  plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
         "  pluginConfig:\n"
         "  - name: MySort\n"
         "    args: {order: desc}\n",
     KS_ESCHEMA,
     "t.yaml:9:3: profiles[1].pluginConfig: the args of queue sort plugin "
     "\"MySort\" must be the same for all profiles"},
    {"integer out of range", HDR "parallelism: 99999999999999999999\n",
     KS_ESCHEMA,
     "t.yaml:3:14: parallelism: 99999999999999999999 is out of range for an "
     "integer"},
    /* YAML 1.2 core schema: YAML 1.1's yes/no/on/off are strings, and a
     * quoted "true" is a string too. */
    {"YAML 1.1 booleans",
     HDR "leaderElection:\n"
         "  leaderElect: yes\n"
         "enableProfiling: on\n"
         "enableContentionProfiling: 'true'\n",
     KS_ESCHEMA,
     "t.yaml:4:16: leaderElection.leaderElect: expected a boolean, found a "
     "string (\"yes\"); ksched reads YAML 1.2, where yes/no/on/off are "
     "strings: write true or false\n"
     "t.yaml:5:18: enableProfiling: expected a boolean, found a string "
     "(\"on\"); ksched reads YAML 1.2, where yes/no/on/off are strings: write "
     "true or false\n"
     "t.yaml:6:28: enableContentionProfiling: expected a boolean, found a "
     "string (\"true\") (quoted scalars are strings: remove the quotes)"},
    {"recursive alias", HDR "profiles: &p\n- *p\n", KS_EPARSE,
     "t.yaml:4:3: alias *p is inside the node its anchor names (a recursive "
     "structure)"},
    {"undefined alias", PROFILE "  pluginConfig: *pc\n", KS_EPARSE,
     "t.yaml:5:17: alias *pc refers to an undefined anchor"},
};

START_TEST(test_error_table)
{
    const error_case_t *tc = &error_cases[_i];
    ks_config_t *cfg = (ks_config_t *)&cfg; /* must be reset to NULL */
    ks_error_t err;
    int rc = load(tc->yaml, &cfg, &err);

    ck_assert_msg(rc == tc->code, "%s: rc %s, want %s (%s)", tc->name,
                  ks_err_name(rc), ks_err_name(tc->code), err.msg);
    ck_assert_int_eq(err.code, tc->code);
    ck_assert_ptr_null(cfg);
    ck_assert_msg(strcmp(err.msg, tc->msg) == 0, "%s:\n got: %s\nwant: %s",
                  tc->name, err.msg, tc->msg);
}
END_TEST

/* Problems are listed in file order while they fit (at most 40); the rest
 * are counted. err may be NULL. */
static void check_limit(int n_fields, int want_shown)
{
    char yaml[8192], want[64];
    size_t off = (size_t)snprintf(yaml, sizeof yaml, "%s", HDR);
    ks_config_t *cfg = NULL;
    ks_error_t err;
    const char *p;
    int i, lines = 1;

    /* Short unknown keys in a plugin entry keep each message short. */
    off += (size_t)snprintf(yaml + off, sizeof yaml - off,
                            "profiles:\n- plugins:\n    score:\n      enabled:\n"
                            "      - name: X\n");
    for (i = 0; i < n_fields; i++)
        off += (size_t)snprintf(yaml + off, sizeof yaml - off, "        b%02d: 1\n", i);
    ck_assert_int_eq(load(yaml, &cfg, &err), KS_ESCHEMA);
    for (p = err.msg; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, want_shown + 1);
    ck_assert_ptr_nonnull(strstr(err.msg, "t.yaml:8:9: unknown field \"b00\""));
    snprintf(want, sizeof want, "\"b%02d\"", want_shown - 1);
    ck_assert_ptr_nonnull(strstr(err.msg, want));
    snprintf(want, sizeof want, "\"b%02d\"", want_shown);
    ck_assert_ptr_null(strstr(err.msg, want));
    snprintf(want, sizeof want, "\nt.yaml: %d more problems not shown", n_fields - want_shown);
    ck_assert_ptr_nonnull(strstr(err.msg, want));
    ck_assert_int_eq(load(yaml, &cfg, NULL), KS_ESCHEMA);
    ck_assert_ptr_null(cfg);
}

START_TEST(test_error_limit)
{
    /* Each line is "t.yaml:L:C: unknown field "bNN" in
     * profiles[0].plugins.score.enabled[0] (valid: name, weight)": 89 or 90
     * characters, so 40 of them fit in the message. */
    check_limit(50, 40);
}
END_TEST

/* Long lines: the listing stops before the message would be cut. */
START_TEST(test_error_limit_space)
{
    char yaml[8192];
    size_t off = (size_t)snprintf(yaml, sizeof yaml, "%s", HDR);
    ks_config_t *cfg = NULL;
    ks_error_t err;
    const char *p, *last;
    int i, lines = 1;

    for (i = 0; i < 40; i++)
        off += (size_t)snprintf(yaml + off, sizeof yaml - off, "bogus%02d: 1\n", i);
    ck_assert_int_eq(load(yaml, &cfg, &err), KS_ESCHEMA);
    for (p = err.msg; *p; p++)
        lines += *p == '\n';
    /* Every top-level line lists the 14 valid fields (about 300 characters):
     * fewer than 40 fit, and the last line is the count of the others. */
    ck_assert_int_lt(lines, 40);
    ck_assert_int_gt(lines, 20);
    last = strrchr(err.msg, '\n') + 1;
    ck_assert_int_eq(atoi(last + strlen("t.yaml: ")), 40 - (lines - 1));
    ck_assert_ptr_nonnull(strstr(last, " more problems not shown"));
    ck_assert_int_lt((int)strlen(err.msg), KS_ERROR_MSG_MAX - 1);
}
END_TEST

/* --- values ----------------------------------------------------------------- */

/* leaderElection: durations as Go writes them, upstream's checks. */
static const struct le_row {
    const char *body; /* the leaderElection mapping's lines */
    int ok;
    int64_t lease, renew, retry;
    const char *msg; /* expected message when !ok */
} le_rows[] = {
    {"  leaderElect: true\n  leaseDuration: 1m30s\n  renewDeadline: 20s\n"
     "  retryPeriod: 500ms\n",
     1, 90000, 20000, 500, NULL},
    {"  leaseDuration: 10s\n", 0, 0, 0, 0,
     "t.yaml:4:18: leaderElection.leaseDuration: must be greater than "
     "renewDeadline"},
    {"  retryPeriod: 9s\n", 0, 0, 0, 0,
     "t.yaml:4:3: leaderElection.renewDeadline: must be greater than "
     "retryPeriod*1.2"},
    {"  leaseDuration: 15x\n", 0, 0, 0, 0,
     "t.yaml:4:18: leaderElection.leaseDuration: \"15x\" is not a positive "
     "duration; write it as Go does, e.g. 15s or 1m30s"},
    {"  leaseDuration: 15\n", 0, 0, 0, 0,
     "t.yaml:4:18: leaderElection.leaseDuration: expected a string, found "
     "an integer (\"15\"); quote it: \"15\""},
    {"  resourceLock: endpoints\n", 0, 0, 0, 0,
     "t.yaml:4:17: leaderElection.resourceLock: \"endpoints\" is not "
     "supported; ksched uses \"leases\" (the only lock newer kube-scheduler "
     "accepts)"},
};

START_TEST(test_leader_election)
{
    const struct le_row *r = &le_rows[_i];
    char yaml[1024];
    ks_config_t *cfg = NULL;
    ks_error_t err;
    snprintf(yaml, sizeof yaml,
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "leaderElection:\n%s",
             r->body);
    if (r->ok) {
        ck_assert_msg(load(yaml, &cfg, &err) == KS_OK, "%s", err.msg);
        ck_assert_int_eq(cfg->leader_election.leader_elect, 1);
        ck_assert_int_eq(cfg->leader_election.lease_duration_ms, r->lease);
        ck_assert_int_eq(cfg->leader_election.renew_deadline_ms, r->renew);
        ck_assert_int_eq(cfg->leader_election.retry_period_ms, r->retry);
        ck_assert_str_eq(cfg->leader_election.resource_name, "ksched");
        ks_config_free(cfg);
    } else {
        ck_assert_int_ne(load(yaml, &cfg, &err), KS_OK);
        ck_assert_ptr_null(cfg);
        ck_assert_str_eq(err.msg, r->msg);
    }
}
END_TEST

START_TEST(test_top_level_values)
{
    static const char yaml[] =
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
        "kind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 30\n"
        "parallelism: 8\n"
        "podInitialBackoffSeconds: 2\n"
        "podMaxBackoffSeconds: 20\n"
        "leaderElection:\n"
        "  leaderElect: false\n"
        "  leaseDuration: 15s\n"
        "  resourceName: kube-scheduler\n"
        "clientConnection:\n"
        "  kubeconfig: /etc/kubernetes/scheduler.conf\n"
        "  qps: 50.5\n"
        "  burst: 100\n"
        "healthzBindAddress: 0.0.0.0:10251\n"
        "metricsBindAddress: ~\n"
        "enableProfiling: true\n"
        "enableContentionProfiling: false\n"
        "extenders: []\n"
        "profiles:\n"
        "- schedulerName: fast\n"
        "  percentageOfNodesToScore: 70\n"
        "- schedulerName: slow\n";
    ks_config_t *cfg = NULL;
    ks_error_t err;

    ck_assert_msg(load(yaml, &cfg, &err) == KS_OK, "%s", err.msg);
    ck_assert_int_eq(err.code, 0);
    ck_assert_str_eq(cfg->path, "t.yaml");
    ck_assert_int_eq(cfg->percentage_of_nodes_to_score, 30);
    ck_assert_int_eq(cfg->parallelism, 8);
    ck_assert_int_eq(cfg->pod_initial_backoff_seconds, 2);
    ck_assert_int_eq(cfg->pod_max_backoff_seconds, 20);
    ck_assert_uint_eq(cfg->n_profiles, 2);
    ck_assert_str_eq(cfg->profiles[0].scheduler_name, "fast");
    ck_assert_int_eq(cfg->profiles[0].percentage_of_nodes_to_score, 70);
    ck_assert_uint_eq(cfg->profiles[0].line, 21);
    ck_assert_int_eq(cfg->leader_election.leader_elect, 0);
    ck_assert_int_eq(cfg->leader_election.lease_duration_ms, 15000);
    ck_assert_int_eq(cfg->leader_election.renew_deadline_ms, 10000);
    ck_assert_int_eq(cfg->leader_election.retry_period_ms, 2000);
    ck_assert_str_eq(cfg->leader_election.resource_name, "kube-scheduler");
    ck_assert_str_eq(cfg->leader_election.resource_namespace, "kube-system");
    ck_assert_str_eq(cfg->client_connection.kubeconfig,
                     "/etc/kubernetes/scheduler.conf");
    ck_assert(cfg->client_connection.qps == 50.5);
    ck_assert_int_eq(cfg->client_connection.burst, 100);
    ck_assert_str_eq(cfg->profiles[1].scheduler_name, "slow");
    ck_assert_int_eq(cfg->profiles[1].percentage_of_nodes_to_score, -1);
    ck_assert_uint_eq(cfg->profiles[1].line, 23);
    ks_config_free(cfg);
}
END_TEST

/* Several profiles sharing one queue sort setting are accepted. */
START_TEST(test_common_queue_sort)
{
    static const char yaml[] =
        HDR "profiles:\n"
            "- schedulerName: a\n"
            "  plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
            "  pluginConfig:\n"
            "  - name: MySort\n"
            "    args: {order: asc}\n"
            "- schedulerName: b\n"
            "  plugins:\n"
            "    queueSort: {enabled: [{name: MySort}]}\n"
            "    score: {disabled: [{name: '*'}]}\n"
            "  pluginConfig:\n"
            "  - name: MySort\n"
            "    args:\n"
            "      order: asc\n"
            "- schedulerName: c\n"
            "  plugins: {queueSort: {enabled: [{name: MySort}]}}\n";
    ks_config_t *cfg = NULL;
    ks_error_t err;
    char got[4096];

    ck_assert_msg(load(yaml, &cfg, &err) == KS_OK, "%s", err.msg);
    ck_assert_uint_eq(cfg->n_profiles, 3);
    render_profile(&cfg->profiles[1], got, sizeof got);
    ck_assert_str_eq(got, "queueSort: MySort\nscore: -*\nmultiPoint: " DEFAULT_MP "\n");
    ks_config_free(cfg);
}
END_TEST

/* Core schema values: 0x and 0o integers, !!null, and YAML 1.1 booleans
 * where a string is expected. */
START_TEST(test_core_schema_values)
{
    static const char yaml[] = HDR "parallelism: 0x10\n"
                                   "percentageOfNodesToScore: 0o17\n"
                                   "metricsBindAddress: !!null\n"
                                   "healthzBindAddress: yes\n"
                                   "clientConnection: {qps: .5e1}\n";
    ks_config_t *cfg = NULL;
    ks_error_t err;

    ck_assert_msg(load(yaml, &cfg, &err) == KS_OK, "%s", err.msg);
    ck_assert_int_eq(cfg->parallelism, 16);
    ck_assert_int_eq(cfg->percentage_of_nodes_to_score, 15);
    ck_assert(cfg->client_connection.qps == 5.0);
    ks_config_free(cfg);
}
END_TEST

/* A config sharing pieces through anchors reads as if they were written
 * out. */
START_TEST(test_legitimate_aliases)
{
    static const char yaml[] =
        HDR "profiles:\n"
            "- schedulerName: a\n"
            "  plugins: &plugins\n"
            "    score:\n"
            "      disabled: [{name: NodeResourcesBalancedAllocation}]\n"
            "  pluginConfig: &pc\n"
            "  - name: NodeResourcesFit\n"
            "    args: &fit\n"
            "      scoringStrategy: {type: MostAllocated}\n"
            "- schedulerName: b\n"
            "  plugins: *plugins\n"
            "  pluginConfig: *pc\n"
            "- schedulerName: c\n"
            "  plugins: *plugins\n"
            "  pluginConfig:\n"
            "  - {name: NodeResourcesFit, args: *fit}\n";
    ks_config_t *cfg = NULL;
    ks_error_t err;
    char a[4096], b[4096];
    size_t i;

    ck_assert_msg(load(yaml, &cfg, &err) == KS_OK, "%s", err.msg);
    ck_assert_uint_eq(cfg->n_profiles, 3);
    render_profile(&cfg->profiles[0], a, sizeof a);
    ck_assert_ptr_nonnull(strstr(a, "-NodeResourcesBalancedAllocation"));
    for (i = 1; i < 3; i++) {
        render_profile(&cfg->profiles[i], b, sizeof b);
        ck_assert_str_eq(a, b);
        ck_assert(ks_cfg_args_equal(
            ks_profile_plugin_args(&cfg->profiles[0], "NodeResourcesFit"),
            ks_profile_plugin_args(&cfg->profiles[i], "NodeResourcesFit")));
    }
    ck_assert_str_eq(ks_profile_plugin_args(&cfg->profiles[2], "NodeResourcesFit")
                         ->keys[0],
                     "scoringStrategy");
    ks_config_free(cfg);
}
END_TEST


/* An alias bomb: lists of ten nested five deep (111,111 nodes), aliased by
 * the args of 400 pluginConfig entries (44 million nodes; about 3 GB as
 * args trees). The per-tree cap of pluginConfig args does not stop this;
 * the loader does, at the alias that crosses the limit. */
START_TEST(test_alias_bomb)
{
    size_t cap = 64 * 1024, len = 0;
    char *yaml = malloc(cap);
    ks_config_t *cfg = NULL;
    ks_error_t err;
    int i, j;

    len += (size_t)snprintf(yaml + len, cap - len,
                            HDR "x: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (i = 1; i < 5; i++) {
        len += (size_t)snprintf(yaml + len, cap - len, "y%d: &a%d [", i, i);
        for (j = 0; j < 10; j++)
            len += (size_t)snprintf(yaml + len, cap - len, "%s*a%d",
                                    j ? ", " : "", i - 1);
        len += (size_t)snprintf(yaml + len, cap - len, "]\n");
    }
    len += (size_t)snprintf(yaml + len, cap - len,
                            "profiles:\n- schedulerName: s\n  pluginConfig:\n");
    for (i = 0; i < 400; i++)
        len += (size_t)snprintf(yaml + len, cap - len,
                                "  - name: P%d\n    args: {v: *a4}\n", i);
    ck_assert_int_eq(load(yaml, &cfg, &err), KS_EPARSE);
    ck_assert_ptr_null(cfg);
    /* 123,353 nodes before the entries, 111,111 more per entry: the eighth
     * entry's alias (line 26) crosses a million */
    ck_assert_msg(strncmp(err.msg,
                          "t.yaml:26:15: alias *a4: expanding the aliases "
                          "would give more than 1000000 nodes (the limit is "
                          "max(1000000, 10 x the ",
                          strlen("t.yaml:26:15: alias *a4: expanding the "
                                 "aliases would give more than 1000000 nodes "
                                 "(the limit is max(1000000, 10 x the ")) == 0,
                  "got: %s", err.msg);
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    free(yaml);
}
END_TEST

START_TEST(test_defaults)
{
    ks_config_t *cfg = ks_config_default();
    char got[4096];
    static const char *const volume[] = {"CinderLimits"};
    size_t i;

    ck_assert_ptr_nonnull(cfg);
    ck_assert_str_eq(cfg->path, "<default>");
    ck_assert_int_eq(cfg->percentage_of_nodes_to_score, 0);
    ck_assert_int_eq(cfg->parallelism, 16);
    ck_assert_int_eq(cfg->pod_initial_backoff_seconds, 1);
    ck_assert_int_eq(cfg->pod_max_backoff_seconds, 10);
    ck_assert_uint_eq(cfg->n_profiles, 1);
    ck_assert_str_eq(cfg->profiles[0].scheduler_name, "default-scheduler");
    ck_assert_int_eq(cfg->profiles[0].percentage_of_nodes_to_score, -1);
    ck_assert_uint_eq(cfg->profiles[0].line, 0);
    ck_assert_uint_eq(cfg->profiles[0].n_plugin_config, 0);
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got, "multiPoint: " DEFAULT_MP "\n");
    ck_assert_uint_eq(cfg->profiles[0].points[KS_EP_MULTI_POINT].enabled[0].line, 0);
    ks_config_free(cfg);
    ks_config_free(NULL);

    for (i = 0; i < sizeof volume / sizeof volume[0]; i++)
        ck_assert_msg(ks_plugin_is_volume(volume[i]), "%s", volume[i]);
    ck_assert(!ks_plugin_is_volume("NodeResourcesFit"));
    /* plugins of their own (plugins/) */
    ck_assert(!ks_plugin_is_volume("VolumeZone"));
    ck_assert(!ks_plugin_is_volume("VolumeBinding"));
    ck_assert(!ks_plugin_is_volume("VolumeRestrictions"));
    ck_assert(!ks_plugin_is_volume("NodeVolumeLimits"));
    ck_assert(!ks_plugin_is_volume("EBSLimits"));
    ck_assert(!ks_plugin_is_volume("volumebinding"));
    ck_assert(!ks_plugin_is_volume(NULL));

    ck_assert_str_eq(ks_ext_point_name(KS_EP_PRE_ENQUEUE), "PreEnqueue");
    ck_assert_str_eq(ks_ext_point_name(KS_EP_POST_FILTER), "PostFilter");
    ck_assert_str_eq(ks_ext_point_name(KS_EP_MULTI_POINT), "MultiPoint");
    ck_assert_str_eq(ks_ext_point_field(KS_EP_QUEUE_SORT), "queueSort");
    ck_assert_str_eq(ks_ext_point_field(KS_EP_POST_BIND), "postBind");
    ck_assert_str_eq(ks_ext_point_field(KS_EP_MULTI_POINT), "multiPoint");
}
END_TEST

/* --- args ---------------------------------------------------------------------- */

static const char args_yaml[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"     /* 1 */
    "kind: KubeSchedulerConfiguration\n"               /* 2 */
    "profiles:\n"                                      /* 3 */
    "- schedulerName: default-scheduler\n"             /* 4 */
    "  pluginConfig:\n"                                /* 5 */
    "  - name: NodeResourcesFit\n"                     /* 6 */
    "    args:\n"                                      /* 7 */
    "      apiVersion: kubescheduler.config.k8s.io/v1\n" /* 8 */
    "      kind: NodeResourcesFitArgs\n"               /* 9 */
    "      scoringStrategy:\n"                         /* 10 */
    "        type: MostAllocated\n"                    /* 11 */
    "        resources:\n"                             /* 12 */
    "        - name: cpu\n"                            /* 13 */
    "          weight: 3\n"                            /* 14 */
    "        - {name: memory, weight: 1}\n"            /* 15 */
    "      ignoredResources: []\n"                     /* 16 */
    "  - name: DefaultPreemption\n"                    /* 17 */
    "  - name: Custom\n"                               /* 18 */
    "    args:\n"                                      /* 19 */
    "      flag: \"yes\"\n"                            /* 20 */
    "  - name: VolumeBinding\n"                        /* 21 */
    "    args: {bindTimeoutSeconds: 600}\n";           /* 22 */

static void assert_scalar(const ks_args_t *a, const char *text, uint32_t line,
                          uint32_t col)
{
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->kind, KS_ARGS_SCALAR);
    ck_assert_str_eq(a->scalar, text);
    ck_assert_uint_eq(a->line, line);
    ck_assert_uint_eq(a->column, col);
}

START_TEST(test_args_tree)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    const ks_profile_config_t *p;
    const ks_args_t *a, *ss, *res, *r0, *r1, *ign;

    ck_assert_msg(load(args_yaml, &cfg, &err) == KS_OK, "%s", err.msg);
    p = &cfg->profiles[0];
    /* VolumeBinding's entry is kept (the plugin reads it); an in-tree
     * cloud volume limit's would be accepted and left out. */
    ck_assert_uint_eq(p->n_plugin_config, 4);
    ck_assert_str_eq(p->plugin_config[0].name, "NodeResourcesFit");
    ck_assert_uint_eq(p->plugin_config[0].line, 6);
    ck_assert_uint_eq(p->plugin_config[0].column, 5);
    ck_assert_ptr_nonnull(ks_profile_plugin_args(p, "VolumeBinding"));
    ck_assert_ptr_null(ks_profile_plugin_args(p, "NodeAffinity"));
    ck_assert_ptr_null(ks_profile_plugin_args(NULL, "NodeAffinity"));

    a = ks_profile_plugin_args(p, "NodeResourcesFit");
    ck_assert_ptr_eq(a, p->plugin_config[0].args);
    ck_assert_int_eq(a->kind, KS_ARGS_MAP);
    ck_assert_ptr_null(a->scalar);
    /* apiVersion and kind are dropped. */
    ck_assert_uint_eq(a->n, 2);
    ck_assert_str_eq(a->keys[0], "scoringStrategy");
    ck_assert_str_eq(a->keys[1], "ignoredResources");
    ck_assert_uint_eq(a->line, 8);
    ck_assert_uint_eq(a->column, 7);

    ss = a->children[0];
    ck_assert_int_eq(ss->kind, KS_ARGS_MAP);
    ck_assert_uint_eq(ss->n, 2);
    ck_assert_uint_eq(ss->line, 11);
    ck_assert_uint_eq(ss->column, 9);
    assert_scalar(ss->children[0], "MostAllocated", 11, 15);
    ck_assert_str_eq(ss->keys[1], "resources");
    res = ss->children[1];
    ck_assert_int_eq(res->kind, KS_ARGS_SEQ);
    ck_assert_uint_eq(res->n, 2);
    ck_assert_uint_eq(res->line, 13);
    ck_assert_uint_eq(res->column, 9);
    r0 = res->children[0];
    ck_assert_int_eq(r0->kind, KS_ARGS_MAP);
    ck_assert_uint_eq(r0->line, 13);
    ck_assert_uint_eq(r0->column, 11);
    assert_scalar(r0->children[0], "cpu", 13, 17);
    assert_scalar(r0->children[1], "3", 14, 19);
    r1 = res->children[1];
    ck_assert_uint_eq(r1->line, 15);
    ck_assert_uint_eq(r1->column, 11);
    ck_assert_str_eq(r1->keys[1], "weight");
    assert_scalar(r1->children[0], "memory", 15, 18);
    assert_scalar(r1->children[1], "1", 15, 34);
    ign = a->children[1];
    ck_assert_int_eq(ign->kind, KS_ARGS_SEQ);
    ck_assert_uint_eq(ign->n, 0);
    ck_assert_uint_eq(ign->line, 16);
    ck_assert_uint_eq(ign->column, 25);

    /* An entry without args: an empty map at the entry's position. */
    a = ks_profile_plugin_args(p, "DefaultPreemption");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->kind, KS_ARGS_MAP);
    ck_assert_uint_eq(a->n, 0);
    ck_assert_uint_eq(a->line, 17);
    ck_assert_uint_eq(a->column, 5);

    /* A quoted scalar keeps its text. */
    a = ks_profile_plugin_args(p, "Custom");
    ck_assert_uint_eq(a->n, 1);
    ck_assert_str_eq(a->keys[0], "flag");
    assert_scalar(a->children[0], "yes", 20, 13);
    ks_config_free(cfg);
}
END_TEST

START_TEST(test_args_equal)
{
    ks_config_t *c1 = NULL, *c2 = NULL;
    ks_error_t err;
    ck_assert_int_eq(load(args_yaml, &c1, &err), KS_OK);
    ck_assert_int_eq(load(args_yaml, &c2, &err), KS_OK);
    ck_assert(ks_cfg_args_equal(ks_profile_plugin_args(&c1->profiles[0], "NodeResourcesFit"),
                                ks_profile_plugin_args(&c2->profiles[0], "NodeResourcesFit")));
    ck_assert(!ks_cfg_args_equal(ks_profile_plugin_args(&c1->profiles[0], "NodeResourcesFit"),
                                 ks_profile_plugin_args(&c2->profiles[0], "Custom")));
    ck_assert(!ks_cfg_args_equal(ks_profile_plugin_args(&c1->profiles[0], "Custom"), NULL));
    ck_assert(ks_cfg_args_equal(NULL, NULL));
    ks_config_free(c1);
    ks_config_free(c2);
}
END_TEST

/* --- a config inside another document --------------------------------------- */

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static void parse_doc(const char *text, yaml_document_t *doc)
{
    yaml_parser_t parser;
    ck_assert(yaml_parser_initialize(&parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    ck_assert(yaml_parser_load(&parser, doc));
    yaml_parser_delete(&parser);
}

START_TEST(test_yaml_node)
{
    static const char scenario[] =
        "name: config-weights\n"
        "config:\n"
        "  profiles:\n"
        "  - schedulerName: default-scheduler\n"
        "    plugins:\n"
        "      multiPoint:\n"
        "        enabled:\n"
        "        - name: TaintToleration\n"
        "          weight: 1\n"
        "        - name: NodeAffinity\n"
        "          weight: 7\n"
        "      score:\n"
        "        enabled:\n"
        "        - name: NodeResourcesFit\n"
        "          weight: 5\n"
        "        - name: ImageLocality\n"
        "          weight: 4\n"
        "    pluginConfig:\n"
        "    - name: Custom\n"
        "      args: {mode: fast}\n"
        "nodes: []\n";
    yaml_document_t doc;
    yaml_node_t *config;
    ks_config_t *cfg = NULL;
    ks_error_t err;
    char got[4096];
    const ks_args_t *a;

    parse_doc(scenario, &doc);
    config = map_get(&doc, yaml_document_get_root_node(&doc), "config");
    ck_assert_ptr_nonnull(config);
    ck_assert_msg(ks_config_load_yaml_node("scenario.yaml", &doc, config, &cfg, &err) ==
                      KS_OK, "%s", err.msg);
    yaml_document_delete(&doc); /* the config owns its strings */
    ck_assert_str_eq(cfg->path, "scenario.yaml");
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got,
                     "score: NodeResourcesFit:5 ImageLocality:4\n"
                     "multiPoint: SchedulingGates PrioritySort NodeUnschedulable "
                     "NodeName TaintToleration:1 NodeAffinity:7 NodePorts "
                     "NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 InterPodAffinity:2 "
                     "DynamicResources DefaultPreemption "
                     "NodeResourcesBalancedAllocation:1 "
                     "ImageLocality:1 DefaultBinder\n");
    a = ks_profile_plugin_args(&cfg->profiles[0], "Custom");
    ck_assert_ptr_nonnull(a);
    assert_scalar(a->children[0], "fast", 20, 20);
    ks_config_free(cfg);
}
END_TEST

START_TEST(test_yaml_node_errors)
{
    static const char scenario[] =
        "name: x\n"
        "config:\n"
        "  apiVersion: kubescheduler.config.k8s.io/v2\n"
        "  profiles:\n"
        "  - plugins:\n"
        "      scores: {}\n"
        "nulls: ~\n";
    yaml_document_t doc;
    ks_config_t *cfg = NULL;
    ks_error_t err;
    char got[4096];

    parse_doc(scenario, &doc);
    ck_assert_int_eq(ks_config_load_yaml_node("s.yaml", &doc,
                                              map_get(&doc, yaml_document_get_root_node(&doc),
                                                      "config"),
                                              &cfg, &err),
                     KS_ESCHEMA);
    ck_assert_ptr_null(cfg);
    ck_assert_str_eq(err.msg,
                     "s.yaml:3:15: apiVersion \"kubescheduler.config.k8s.io/v2\" is not "
                     "supported (expected kubescheduler.config.k8s.io/v1 or "
                     "kubescheduler.config.k8s.io/v1beta3)\n"
                     "s.yaml:6:7: unknown field \"scores\" in profiles[0].plugins; did "
                     "you mean \"score\"? (valid: preEnqueue, queueSort, preFilter, "
                     "filter, postFilter, preScore, score, reserve, permit, preBind, "
                     "bind, postBind, multiPoint, placementGenerate, "
                     "placementScore)");

    /* A null node means the defaults. */
    ck_assert_int_eq(ks_config_load_yaml_node("s.yaml", &doc,
                                              map_get(&doc, yaml_document_get_root_node(&doc),
                                                      "nulls"),
                                              &cfg, &err),
                     KS_OK);
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got, "multiPoint: " DEFAULT_MP "\n");
    ks_config_free(cfg);
    yaml_document_delete(&doc);
}
END_TEST

/* --- the shipped profiles -------------------------------------------------------- */

static ks_config_t *load_shipped(const char *rel)
{
    const char *dir = getenv("KS_PROFILES_DIR");
    char path[1024];
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_msg(dir != NULL, "KS_PROFILES_DIR is not set");
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    ck_assert_msg(ks_config_load_file(path, &cfg, &err) == KS_OK, "%s", err.msg);
    ck_assert_str_eq(cfg->path, path);
    return cfg;
}

START_TEST(test_shipped_default)
{
    ks_config_t *cfg = load_shipped("default.yaml");
    ks_config_t *def = ks_config_default();
    char got[4096], want[4096];
    ck_assert_uint_eq(cfg->n_profiles, 1);
    ck_assert_str_eq(cfg->profiles[0].scheduler_name, "default-scheduler");
    ck_assert_uint_eq(cfg->profiles[0].n_plugin_config, 0);
    render_profile(&cfg->profiles[0], got, sizeof got);
    render_profile(&def->profiles[0], want, sizeof want);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(cfg->parallelism, def->parallelism);
    ck_assert_int_eq(cfg->percentage_of_nodes_to_score, 0);
    ks_config_free(cfg);
    ks_config_free(def);
}
END_TEST

START_TEST(test_shipped_examples)
{
    ks_config_t *cfg;
    const ks_args_t *a, *ss;
    char got[4096];

    cfg = load_shipped("examples/most-allocated.yaml");
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got, "multiPoint: " DEFAULT_MP "\n");
    a = ks_profile_plugin_args(&cfg->profiles[0], "NodeResourcesFit");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->n, 1); /* apiVersion and kind dropped */
    ss = a->children[0];
    ck_assert_str_eq(ss->keys[0], "type");
    ck_assert_str_eq(ss->children[0]->scalar, "MostAllocated");
    ck_assert_uint_eq(ss->children[1]->n, 2);
    ks_config_free(cfg);

    cfg = load_shipped("examples/two-profiles.yaml");
    ck_assert_uint_eq(cfg->n_profiles, 2);
    ck_assert_str_eq(cfg->profiles[0].scheduler_name, "default-scheduler");
    ck_assert_str_eq(cfg->profiles[1].scheduler_name, "bin-packing");
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got, "multiPoint: " DEFAULT_MP "\n");
    render_profile(&cfg->profiles[1], got, sizeof got);
    ck_assert_str_eq(got, "score: NodeResourcesFit:5 -PodTopologySpread\n"
                          "multiPoint: " DEFAULT_MP "\n");
    ck_assert_ptr_null(ks_profile_plugin_args(&cfg->profiles[0], "NodeResourcesFit"));
    ck_assert_ptr_nonnull(ks_profile_plugin_args(&cfg->profiles[1], "NodeResourcesFit"));
    ks_config_free(cfg);

    cfg = load_shipped("examples/no-preemption.yaml");
    render_profile(&cfg->profiles[0], got, sizeof got);
    ck_assert_str_eq(got, "postFilter: -DefaultPreemption\nmultiPoint: " DEFAULT_MP "\n");
    ks_config_free(cfg);
}
END_TEST

START_TEST(test_missing_file)
{
    ks_config_t *cfg = NULL;
    ks_error_t err;
    ck_assert_int_eq(ks_config_load_file("no/such/profile.yaml", &cfg, &err), KS_EIO);
    ck_assert_ptr_null(cfg);
    ck_assert_str_eq(err.msg, "no/such/profile.yaml: cannot open: No such file or directory");
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc;

    tc = tcase_create("merge");
    tcase_add_loop_test(tc, test_merge_table, 0,
                        (int)(sizeof merge_cases / sizeof merge_cases[0]));
    tcase_add_test(tc, test_merge_set_direct);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_loop_test(tc, test_error_table, 0,
                        (int)(sizeof error_cases / sizeof error_cases[0]));
    tcase_add_test(tc, test_error_limit);
    tcase_add_test(tc, test_error_limit_space);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_add_test(tc, test_top_level_values);
    tcase_add_loop_test(tc, test_leader_election, 0,
                        (int)(sizeof le_rows / sizeof le_rows[0]));
    tcase_add_test(tc, test_core_schema_values);
    tcase_add_test(tc, test_legitimate_aliases);
    tcase_add_test(tc, test_alias_bomb);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_common_queue_sort);
    suite_add_tcase(s, tc);

    tc = tcase_create("args");
    tcase_add_test(tc, test_args_tree);
    tcase_add_test(tc, test_args_equal);
    suite_add_tcase(s, tc);

    tc = tcase_create("yaml-node");
    tcase_add_test(tc, test_yaml_node);
    tcase_add_test(tc, test_yaml_node_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_test(tc, test_shipped_default);
    tcase_add_test(tc, test_shipped_examples);
    tcase_add_test(tc, test_missing_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(config_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
