/*
 * QueueingHints through the scheduler's queue (upstream v1.36's
 * isPodWorthRequeuing with the in-tree plugins' hints): for each case, a
 * pod rejected by one plugin must stay in the unschedulable pool on an
 * event that cannot help it and must move on one that can. Expectations
 * are worked out by hand from the plugins' rules (see each test).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#include "fw_testlib.h"

#define NODE(name, extra)                                                      \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" extra      \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

static tl_world_t W;
static ks_generation_t *G;
static ks_scheduler_t *S;
static int64_t now_ms;
static char hints_seen[4096];

static void on_hint(void *ud, const char *plugin, const char *event,
                    const char *hint, double seconds)
{
    (void)ud;
    ck_assert(seconds >= 0);
    tl_appendf(hints_seen, sizeof hints_seen, "%s/%s/%s;", plugin, event,
               hint);
}

/* The default profile over `cluster`; `pod` is queued, tried once and
 * must land in the unschedulable pool. */
static void start(const char *cluster, const char *pod)
{
    ks_sched_opts_t so;
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.queueing_hint = on_hint;
    hints_seen[0] = '\0';
    G = tl_generation(NULL);
    tl_world_init(&W, cluster);
    S = ks_scheduler_new(G, W.cache, &so);
    now_ms = 1000;
    ks_scheduler_set_clock(S, tl_clock, &now_ms);
    ck_assert_int_eq(ks_scheduler_add_pod(S, tl_world_take_pod(&W, pod)), 0);
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_UNSCHED), 1);
    now_ms += 60000; /* past any backoff: a moved pod goes to activeQ */
}

static void teardown(void)
{
    ks_scheduler_free(S);
    ks_generation_unref(G);
    tl_world_free(&W);
    S = NULL;
    G = NULL;
}

static size_t in_pool(void)
{
    return ks_scheduler_pending(S, KS_Q_UNSCHED);
}

static void event(uint32_t res, uint32_t act, const void *old_obj,
                  const void *new_obj)
{
    ks_cluster_event_t ev = {res, act};
    ks_scheduler_on_cluster_event(S, ev, old_obj, new_obj);
}

static ks_node_t node_with_cpu(const char *name, int64_t milli)
{
    ks_node_t n;
    memset(&n, 0, sizeof n);
    n.name = ks_intern_str(ks_intern_global(), name);
    n.allocatable.milli_cpu = milli;
    n.allocatable.memory = 8ll << 30;
    n.allocatable.allowed_pods = 110;
    return n;
}

#define BIG_CLUSTER                                                            \
    NODE("n1", "")                                                             \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: "       \
    "default}\nspec: {containers: [{name: c, image: x, resources: "           \
    "{requests: {cpu: '6'}}}]}\n"

/* NodeResourcesFit rejected a 6-cpu pod on a 4-cpu node. A node added
 * with 2 cpus cannot hold it (QueueSkip); a node label change is not an
 * event Fit registered (its hint is not even asked); a node added with
 * 8 cpus can (Queue). */
START_TEST(test_fit_node_add)
{
    ks_node_t small = node_with_cpu("n2", 2000), large = node_with_cpu("n3", 8000);
    ks_node_t n1 = node_with_cpu("n1", 4000), n1b = n1;
    start(BIG_CLUSTER, "big");
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &small);
    ck_assert_uint_eq(in_pool(), 1);
    ck_assert_str_eq(hints_seen, "NodeResourcesFit/NodeAdd/QueueSkip;");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_LABEL, &n1, &n1b);
    ck_assert_uint_eq(in_pool(), 1);
    ck_assert_str_eq(hints_seen, "NodeResourcesFit/NodeAdd/QueueSkip;");
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &large);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_uint_eq(ks_scheduler_pending(S, KS_Q_ACTIVE), 1);
    ck_assert_str_eq(hints_seen, "NodeResourcesFit/NodeAdd/QueueSkip;"
                                 "NodeResourcesFit/NodeAdd/Queue;");
}
END_TEST

/* Allocatable growth: n1 from 4 to 5 cpus still cannot hold 6 (skip);
 * from 4 to 8 can (queue). */
START_TEST(test_fit_allocatable_growth)
{
    ks_node_t n1 = node_with_cpu("n1", 4000), n5 = node_with_cpu("n1", 5000),
              n8 = node_with_cpu("n1", 8000);
    start(BIG_CLUSTER, "big");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_ALLOCATABLE, &n1,
          &n5);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_ALLOCATABLE, &n5,
          &n8);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

/* Pod deletion: an unassigned pod's deletion frees nothing (skip); an
 * assigned pod's does (queue). */
START_TEST(test_fit_pod_delete)
{
    ks_pod_t gone;
    memset(&gone, 0, sizeof gone);
    gone.ns = gone.name = gone.uid = ks_intern_str(ks_intern_global(), "x");
    gone.node_name = ks_intern_empty(ks_intern_global());
    start(BIG_CLUSTER, "big");
    event(KS_RES_POD, KS_ACT_DELETE, &gone, NULL);
    ck_assert_uint_eq(in_pool(), 1);
    gone.node_name = ks_intern_str(ks_intern_global(), "n1");
    event(KS_RES_POD, KS_ACT_DELETE, &gone, NULL);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

/* Callers without objects keep the 1.0 behaviour: any registered event
 * moves the pod, the hint unasked; the wildcard moves it too. */
START_TEST(test_no_objects_and_wildcard)
{
    ks_cluster_event_t add = {KS_RES_NODE, KS_ACT_ADD};
    ks_cluster_event_t all = {KS_RES_ALL, KS_ACT_ALL};
    ks_cluster_event_t lbl = {KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL};
    start(BIG_CLUSTER, "big");
    ks_scheduler_on_event(S, lbl);
    ck_assert_uint_eq(in_pool(), 1);
    ks_scheduler_on_event(S, add);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_str_eq(hints_seen, "");
    teardown();
    start(BIG_CLUSTER, "big");
    ks_scheduler_on_event(S, all);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

#define TAINT_CLUSTER                                                          \
    NODE("n1", "spec: {taints: [{key: dedicated, value: gpu, effect: "        \
               "NoSchedule}]}\n")                                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "         \
    "default}\nspec: {containers: [{name: c, image: x}]}\n"

/* TaintToleration rejected p on n1 (dedicated=gpu:NoSchedule). A taint
 * update that keeps an untolerated taint (now dedicated=tpu) is skipped;
 * one that removes every taint queues. */
START_TEST(test_taint_removed)
{
    ks_intern_t *in = ks_intern_global();
    ks_taint_t t1 = {ks_intern_str(in, "dedicated"), ks_intern_str(in, "gpu"),
                     KS_EFFECT_NO_SCHEDULE};
    ks_taint_t t2 = {ks_intern_str(in, "dedicated"), ks_intern_str(in, "tpu"),
                     KS_EFFECT_NO_SCHEDULE};
    ks_node_t a = node_with_cpu("n1", 4000), b = a, c = a;
    a.taints = &t1;
    a.n_taints = 1;
    b.taints = &t2;
    b.n_taints = 1;
    start(TAINT_CLUSTER, "p");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_TAINT, &a, &b);
    ck_assert_uint_eq(in_pool(), 1);
    ck_assert_str_eq(hints_seen, "TaintToleration/NodeTaintChange/QueueSkip;");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_TAINT, &b, &c);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

#define SELECTOR_CLUSTER                                                       \
    NODE("n1", "")                                                             \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "         \
    "default}\nspec: {nodeSelector: {disk: ssd}, containers: [{name: c, "     \
    "image: x}]}\n"

/* NodeAffinity rejected p (nodeSelector disk=ssd). A label change to
 * disk=hdd does not match (skip); to disk=ssd matches (queue). An
 * allocatable change is no NodeAffinity event. */
START_TEST(test_node_affinity_label)
{
    ks_intern_t *in = ks_intern_global();
    ks_label_t hdd = {ks_intern_str(in, "disk"), ks_intern_str(in, "hdd")};
    ks_label_t ssd = {ks_intern_str(in, "disk"), ks_intern_str(in, "ssd")};
    ks_node_t a = node_with_cpu("n1", 4000), b = a, c = a;
    b.labels.items = &hdd;
    b.labels.n = 1;
    c.labels.items = &ssd;
    c.labels.n = 1;
    start(SELECTOR_CLUSTER, "p");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_ALLOCATABLE, &a, &c);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_LABEL, &a, &b);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_LABEL, &b, &c);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_str_eq(hints_seen, "NodeAffinity/NodeLabelChange/QueueSkip;"
                                 "NodeAffinity/NodeLabelChange/Queue;");
}
END_TEST

/* --- PodTopologySpread, InterPodAffinity, NodeName, NodeUnschedulable,
 * NodePorts --------------------------------------------------------------- */

/* A moved pod is tried again (and fails the same way): back in the pool. */
static void refail(void)
{
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_uint_eq(in_pool(), 1);
    now_ms += 60000;
}

/* A copy of a pending pod of the manifest, made assigned to `node`
 * ("" keeps it unassigned). */
static ks_pod_t assigned(const char *name, const char *node)
{
    ks_pod_t p = *tl_world_pod(&W, name);
    p.node_name = ks_intern_str(ks_intern_global(), node);
    return p;
}

static ks_label_t label(const char *k, const char *v)
{
    ks_label_t l = {ks_intern_str(ks_intern_global(), k),
                    ks_intern_str(ks_intern_global(), v)};
    return l;
}

#define NODEL(name, labels)                                                    \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {" \
    labels "}}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: "        \
    "'110'}}\n"

#define PODL(name, labels)                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: " \
    "default, labels: {" labels "}}\nspec: {containers: [{name: c, image: "  \
    "x}]}\n"

/* p (app=web) spreads over zones with maxSkew 1 and minDomains 2; the one
 * zone holds a web pod, so the global minimum is 0 and n1 gives skew 2:
 * PodTopologySpread rejects p. Hand-checked against upstream's hints:
 * an assigned db pod added, or a web pod added unassigned or in another
 * namespace, cannot matter (skip); an assigned web pod added or deleted
 * can (queue); a relabel between two non-matching values is skipped, one
 * out of app=web queues. A node added without the zone label is skipped,
 * one with it queues; a node's unrelated label change is skipped, a zone
 * value change queues. */
#define PTS_CLUSTER                                                            \
    NODEL("n1", "topology.kubernetes.io/zone: a")                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w0, namespace: "        \
    "default, labels: {app: web}}\nspec: {nodeName: n1, containers: [{name: " \
    "c, image: x}]}\n"                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "         \
    "default, labels: {app: web}}\nspec:\n  containers: [{name: c, image: "   \
    "x}]\n  topologySpreadConstraints:\n  - maxSkew: 1\n    minDomains: 2\n"  \
    "    topologyKey: topology.kubernetes.io/zone\n"                          \
    "    whenUnsatisfiable: DoNotSchedule\n"                                   \
    "    labelSelector: {matchLabels: {app: web}}\n"                           \
    PODL("web", "app: web") PODL("db", "app: db") PODL("cache", "app: cache")

START_TEST(test_pts_pods)
{
    ks_pod_t web, db, cache, other_ns, web_pending;
    start(PTS_CLUSTER, "p");
    web = assigned("web", "n1");
    db = assigned("db", "n1");
    cache = assigned("cache", "n1");
    web_pending = assigned("web", "");
    other_ns = web;
    other_ns.ns = ks_intern_str(ks_intern_global(), "other");
    event(KS_RES_POD, KS_ACT_ADD, NULL, &db);
    event(KS_RES_POD, KS_ACT_ADD, NULL, &web_pending);
    event(KS_RES_POD, KS_ACT_ADD, NULL, &other_ns);
    event(KS_RES_POD, KS_ACT_DELETE, &db, NULL);
    event(KS_RES_POD, KS_ACT_UPDATE | KS_ACT_UPDATE_POD_LABEL, &db, &cache);
    ck_assert_uint_eq(in_pool(), 1);
    ck_assert_str_eq(hints_seen, "PodTopologySpread/AssignedPodAdd/QueueSkip;"
                                 "PodTopologySpread/UnschedulablePodAdd/QueueSkip;"
                                 "PodTopologySpread/AssignedPodAdd/QueueSkip;"
                                 "PodTopologySpread/AssignedPodDelete/QueueSkip;"
                                 "PodTopologySpread/PodLabelChange/QueueSkip;");
    event(KS_RES_POD, KS_ACT_ADD, NULL, &web);
    ck_assert_uint_eq(in_pool(), 0);
    refail();
    event(KS_RES_POD, KS_ACT_DELETE, &web, NULL);
    ck_assert_uint_eq(in_pool(), 0);
    refail();
    event(KS_RES_POD, KS_ACT_UPDATE | KS_ACT_UPDATE_POD_LABEL, &web, &db);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

START_TEST(test_pts_nodes)
{
    ks_label_t zone_a = label("topology.kubernetes.io/zone", "a");
    ks_label_t zone_b = label("topology.kubernetes.io/zone", "b");
    ks_label_t za_disk[2] = {label("disk", "ssd"), zone_a};
    ks_node_t bare = node_with_cpu("n2", 4000), zoned = bare;
    ks_node_t n1 = node_with_cpu("n1", 4000), n1_disk = n1, n1_b = n1;
    zoned.labels.items = &zone_b;
    zoned.labels.n = 1;
    n1.labels.items = &zone_a;
    n1.labels.n = 1;
    n1_disk.labels.items = za_disk;
    n1_disk.labels.n = 2;
    n1_b.labels.items = &zone_b;
    n1_b.labels.n = 1;
    start(PTS_CLUSTER, "p");
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &bare);
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_LABEL, &n1, &n1_disk);
    event(KS_RES_NODE, KS_ACT_DELETE, &bare, NULL);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &zoned);
    ck_assert_uint_eq(in_pool(), 0);
    refail();
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_LABEL, &n1_disk,
          &n1_b);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

/* p (app=web) requires a db pod in its zone; there is none, so
 * InterPodAffinity rejects it. Upstream's hints: an assigned web pod added
 * or an unassigned db pod added cannot help (skip), nor a db pod deleted
 * (p has no anti-affinity); an assigned db pod added helps (queue), as does
 * an assigned pod relabelled from web to db. A node added without the
 * zone key is skipped, one with it queues. */
#define IPA_CLUSTER                                                            \
    NODEL("n1", "topology.kubernetes.io/zone: a")                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "         \
    "default, labels: {app: web}}\nspec:\n  containers: [{name: c, image: "   \
    "x}]\n  affinity:\n    podAffinity:\n"                                     \
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"                  \
    "      - topologyKey: topology.kubernetes.io/zone\n"                       \
    "        labelSelector: {matchLabels: {app: db}}\n"                        \
    PODL("web", "app: web") PODL("db", "app: db")

START_TEST(test_ipa)
{
    ks_pod_t web, db, db_pending;
    ks_label_t zone = label("topology.kubernetes.io/zone", "b");
    ks_node_t bare = node_with_cpu("n2", 4000), zoned = node_with_cpu("n3", 4000);
    zoned.labels.items = &zone;
    zoned.labels.n = 1;
    start(IPA_CLUSTER, "p");
    web = assigned("web", "n1");
    db = assigned("db", "n1");
    db_pending = assigned("db", "");
    event(KS_RES_POD, KS_ACT_ADD, NULL, &web);
    event(KS_RES_POD, KS_ACT_ADD, NULL, &db_pending);
    event(KS_RES_POD, KS_ACT_DELETE, &db, NULL);
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &bare);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_POD, KS_ACT_ADD, NULL, &db);
    ck_assert_uint_eq(in_pool(), 0);
    refail();
    event(KS_RES_POD, KS_ACT_UPDATE | KS_ACT_UPDATE_POD_LABEL, &web, &db);
    ck_assert_uint_eq(in_pool(), 0);
    refail();
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &zoned);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

/* q (app=web) must not share a node with a db pod; n1 runs one, so
 * InterPodAffinity rejects q. Deleting a web pod is skipped; deleting the
 * db pod queues. */
#define ANTI_CLUSTER                                                           \
    NODEL("n1", "kubernetes.io/hostname: n1")                    \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: d0, namespace: "        \
    "default, labels: {app: db}}\nspec: {nodeName: n1, containers: [{name: "  \
    "c, image: x}]}\n"                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: "         \
    "default, labels: {app: web}}\nspec:\n  containers: [{name: c, image: "   \
    "x}]\n  affinity:\n    podAntiAffinity:\n"                                 \
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"                  \
    "      - topologyKey: kubernetes.io/hostname\n"                            \
    "        labelSelector: {matchLabels: {app: db}}\n"                        \
    PODL("web", "app: web") PODL("db", "app: db")

START_TEST(test_ipa_anti_delete)
{
    ks_pod_t web, db;
    start(ANTI_CLUSTER, "q");
    web = assigned("web", "n1");
    db = assigned("db", "n1");
    event(KS_RES_POD, KS_ACT_DELETE, &web, NULL);
    ck_assert_uint_eq(in_pool(), 1);
    ck_assert_str_eq(hints_seen,
                     "InterPodAffinity/AssignedPodDelete/QueueSkip;");
    event(KS_RES_POD, KS_ACT_DELETE, &db, NULL);
    ck_assert_uint_eq(in_pool(), 0);
}
END_TEST

/* p names node n9, which does not exist: NodeName rejects it everywhere.
 * Node n2 added: skip; n9 added: queue. */
START_TEST(test_node_name_add)
{
    ks_pod_t *pod;
    ks_node_t n2 = node_with_cpu("n2", 4000), n9 = node_with_cpu("n9", 4000);
    ks_sched_opts_t so;
    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.obs.queueing_hint = on_hint;
    hints_seen[0] = '\0';
    G = tl_generation(NULL);
    tl_world_init(&W, NODE("n1", "") PODL("p", "app: web"));
    S = ks_scheduler_new(G, W.cache, &so);
    now_ms = 1000;
    ks_scheduler_set_clock(S, tl_clock, &now_ms);
    pod = tl_world_take_pod(&W, "p");
    pod->node_name = ks_intern_str(ks_intern_global(), "n9");
    ck_assert_int_eq(ks_scheduler_add_pod(S, pod), 0);
    ck_assert_int_eq(ks_scheduler_step(S), 1);
    ck_assert_uint_eq(in_pool(), 1);
    now_ms += 60000;
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &n2);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_ADD, NULL, &n9);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_str_eq(hints_seen, "NodeName/NodeAdd/QueueSkip;"
                                 "NodeName/NodeAdd/Queue;");
}
END_TEST

/* n1 is cordoned: NodeUnschedulable rejects p. A taint update that keeps
 * the node cordoned is skipped; uncordoning queues. */
START_TEST(test_node_unschedulable)
{
    ks_node_t a = node_with_cpu("n1", 4000), b = a, c = a;
    ks_intern_t *in = ks_intern_global();
    ks_taint_t t = {ks_intern_str(in, "x"), ks_intern_str(in, "y"),
                    KS_EFFECT_PREFER_NO_SCHEDULE};
    a.unschedulable = b.unschedulable = 1;
    b.taints = &t;
    b.n_taints = 1;
    start(NODE("n1", "spec: {unschedulable: true}\n") PODL("p", "app: web"),
          "p");
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_TAINT, &a, &b);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_NODE, KS_ACT_UPDATE | KS_ACT_UPDATE_NODE_TAINT, &b, &c);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_str_eq(hints_seen, "NodeUnschedulable/NodeTaintChange/QueueSkip;"
                                 "NodeUnschedulable/NodeTaintChange/Queue;");
}
END_TEST

/* n1 runs h0 on host port 8080; p wants 8080: NodePorts rejects it. An
 * assigned pod without host ports deleted: skip; one holding 8080: queue. */
#define PORTS_POD(name, extra)                                                 \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: " \
    "default}\nspec: {" extra "containers: [{name: c, image: x, ports: "     \
    "[{containerPort: 80, hostPort: 8080}]}]}\n"

START_TEST(test_node_ports_delete)
{
    ks_pod_t holder, plain;
    start(NODE("n1", "") PORTS_POD("h0", "nodeName: n1, ")
              PORTS_POD("p", "") PORTS_POD("h1", "") PODL("x", "app: x"),
          "p");
    holder = assigned("h1", "n1");
    plain = assigned("x", "n1");
    event(KS_RES_POD, KS_ACT_DELETE, &plain, NULL);
    ck_assert_uint_eq(in_pool(), 1);
    event(KS_RES_POD, KS_ACT_DELETE, &holder, NULL);
    ck_assert_uint_eq(in_pool(), 0);
    ck_assert_str_eq(hints_seen, "NodePorts/AssignedPodDelete/QueueSkip;"
                                 "NodePorts/AssignedPodDelete/Queue;");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue-hints");
    TCase *tc = tcase_create("hints");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fit_node_add);
    tcase_add_test(tc, test_fit_allocatable_growth);
    tcase_add_test(tc, test_fit_pod_delete);
    tcase_add_test(tc, test_no_objects_and_wildcard);
    tcase_add_test(tc, test_taint_removed);
    tcase_add_test(tc, test_node_affinity_label);
    tcase_add_test(tc, test_pts_pods);
    tcase_add_test(tc, test_pts_nodes);
    tcase_add_test(tc, test_ipa);
    tcase_add_test(tc, test_ipa_anti_delete);
    tcase_add_test(tc, test_node_name_add);
    tcase_add_test(tc, test_node_unschedulable);
    tcase_add_test(tc, test_node_ports_delete);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
