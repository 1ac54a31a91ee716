/* Pod, Node and Service objects read from YAML. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/objects.h"
#include "ksched/helpers.h"
#include "test_util.h"

#define MI (1024LL * 1024)
#define GI (1024LL * 1024 * 1024)

static ks_intern_t *in;

static void setup(void) { in = ks_intern_new(); }
static void teardown(void) { ks_intern_free(in); }

static const char *I(const char *s) { return ks_intern_str(in, s); }

static const char *full_pod =
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata:\n"
    "  name: web-1\n"
    "  namespace: shop\n"
    "  uid: 1234-abcd\n"
    "  labels: {app: web, tier: front}\n"
    "  annotations: {note: hello}\n"
    "  creationTimestamp: \"2022-06-01T00:00:00Z\"\n"
    "  deletionTimestamp: \"2022-06-01T00:01:00Z\"\n"
    "  managedFields: [{manager: kubectl, operation: Update}]\n"
    "spec:\n"
    "  schedulerName: my-scheduler\n"
    "  nodeName: n1\n"
    "  nodeSelector: {disk: ssd}\n"
    "  priority: 1000\n"
    "  priorityClassName: high\n"
    "  schedulingGates: [{name: g1}, {name: g2}]\n"
    "  overhead: {cpu: 250m, memory: 64Mi}\n"
    "  affinity:\n"
    "    nodeAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n"
    "        - matchExpressions:\n"
    "          - {key: zone, operator: In, values: [a, b]}\n"
    "          - {key: gen, operator: Gt, values: [\"3\"]}\n"
    "          matchFields:\n"
    "          - {key: metadata.name, operator: NotIn, values: [n9]}\n"
    "        - matchExpressions:\n"
    "          - {key: zone, operator: Lt, values: [\"9\"]}\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 7\n"
    "        preference:\n"
    "          matchExpressions:\n"
    "          - {key: gpu, operator: Exists}\n"
    "    podAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "      - labelSelector:\n"
    "          matchLabels: {app: db}\n"
    "          matchExpressions:\n"
    "          - {key: env, operator: NotIn, values: [dev]}\n"
    "        namespaces: [shop, other]\n"
    "        topologyKey: topology.kubernetes.io/zone\n"
    "    podAntiAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "      - labelSelector: {matchLabels: {app: web}}\n"
    "        namespaceSelector: {}\n"
    "        topologyKey: kubernetes.io/hostname\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 50\n"
    "        podAffinityTerm:\n"
    "          labelSelector:\n"
    "            matchExpressions: [{key: app, operator: DoesNotExist}]\n"
    "          namespaceSelector: {matchLabels: {team: a}}\n"
    "          topologyKey: kubernetes.io/hostname\n"
    "  tolerations:\n"
    "  - {key: dedicated, operator: Equal, value: shop, effect: NoSchedule}\n"
    "  - {operator: Exists}\n"
    "  - {key: k2, value: v2, effect: NoExecute, tolerationSeconds: 30}\n"
    "  - {key: k3, operator: Exists, effect: PreferNoSchedule}\n"
    "  topologySpreadConstraints:\n"
    "  - maxSkew: 2\n"
    "    topologyKey: zone\n"
    "    whenUnsatisfiable: ScheduleAnyway\n"
    "    labelSelector: {matchLabels: {app: web}}\n"
    "    minDomains: 3\n"
    "    nodeAffinityPolicy: Honor\n"
    "    nodeTaintsPolicy: Ignore\n"
    "  - maxSkew: 1\n"
    "    topologyKey: kubernetes.io/hostname\n"
    "    whenUnsatisfiable: DoNotSchedule\n"
    "  initContainers:\n"
    "  - name: init\n"
    "    image: busybox\n"
    "    resources:\n"
    "      requests: {cpu: \"2\", memory: 100Mi}\n"
    "  containers:\n"
    "  - name: app\n"
    "    image: nginx:1.21\n"
    "    resources:\n"
    "      requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 1Gi}\n"
    "      limits: {cpu: \"1\", memory: 2Gi, nvidia.com/gpu: \"2\"}\n"
    "    ports:\n"
    "    - {containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}\n"
    "    - {containerPort: 53, protocol: UDP}\n"
    "  - name: sidecar\n"
    "    image: envoy\n"
    "    ports:\n"
    "    - {containerPort: 9000, hostPort: 9000, protocol: SCTP}\n"
    "status:\n"
    "  nominatedNodeName: n2\n"
    "  startTime: \"2022-06-01T00:00:05.250Z\"\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n";

START_TEST(test_pod_metadata_and_spec)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    ck_assert_ptr_eq(p->ns, I("shop"));
    ck_assert_ptr_eq(p->name, I("web-1"));
    ck_assert_ptr_eq(p->uid, I("1234-abcd"));
    ck_assert_uint_eq(p->labels.n, 2);
    ck_assert_ptr_eq(ks_labels_get(&p->labels, I("app")), I("web"));
    ck_assert_ptr_eq(ks_labels_get(&p->labels, I("tier")), I("front"));
    ck_assert_uint_eq(p->annotations.n, 1);
    ck_assert_ptr_eq(ks_labels_get(&p->annotations, I("note")), I("hello"));
    ck_assert_int_eq(p->creation_unix_ms, 1654041600000LL);
    ck_assert_int_eq(p->start_unix_ms, 1654041605250LL);
    ck_assert_int_eq(p->deleting, 1);
    ck_assert_ptr_eq(p->scheduler_name, I("my-scheduler"));
    ck_assert_ptr_eq(p->node_name, I("n1"));
    ck_assert_ptr_eq(p->nominated_node_name, I("n2"));
    ck_assert_uint_eq(p->node_selector.n, 1);
    ck_assert_ptr_eq(ks_labels_get(&p->node_selector, I("disk")), I("ssd"));
    ck_assert_int_eq(p->priority, 1000);
    ck_assert_ptr_eq(p->priority_class_name, I("high"));
    ck_assert_uint_eq(p->n_scheduling_gates, 2);
    ck_assert_ptr_eq(p->scheduling_gates[0], I("g1"));
    ck_assert_ptr_eq(p->scheduling_gates[1], I("g2"));
    ck_assert_int_eq(p->overhead.milli_cpu, 250);
    ck_assert_int_eq(p->overhead.memory, 64 * MI);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_node_affinity)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    const ks_node_affinity_t *na = p->affinity.node_affinity;
    const ks_node_selector_term_t *t;
    ck_assert_ptr_nonnull(na);
    ck_assert_ptr_nonnull(na->required);
    ck_assert_uint_eq(na->required->n_terms, 2);
    t = &na->required->terms[0];
    ck_assert_uint_eq(t->n_match_expressions, 2);
    ck_assert_ptr_eq(t->match_expressions[0].key, I("zone"));
    ck_assert_int_eq(t->match_expressions[0].op, KS_OP_IN);
    ck_assert_uint_eq(t->match_expressions[0].n_values, 2);
    ck_assert_ptr_eq(t->match_expressions[0].values[0], I("a"));
    ck_assert_ptr_eq(t->match_expressions[0].values[1], I("b"));
    ck_assert_int_eq(t->match_expressions[1].op, KS_OP_GT);
    ck_assert_ptr_eq(t->match_expressions[1].values[0], I("3"));
    ck_assert_uint_eq(t->n_match_fields, 1);
    ck_assert_ptr_eq(t->match_fields[0].key, I("metadata.name"));
    ck_assert_int_eq(t->match_fields[0].op, KS_OP_NOT_IN);
    ck_assert_ptr_eq(t->match_fields[0].values[0], I("n9"));
    ck_assert_int_eq(na->required->terms[1].match_expressions[0].op, KS_OP_LT);
    ck_assert_uint_eq(na->required->terms[1].n_match_fields, 0);
    ck_assert_uint_eq(na->n_preferred, 1);
    ck_assert_int_eq(na->preferred[0].weight, 7);
    ck_assert_uint_eq(na->preferred[0].preference.n_match_expressions, 1);
    ck_assert_int_eq(na->preferred[0].preference.match_expressions[0].op,
                     KS_OP_EXISTS);
    ck_assert_uint_eq(na->preferred[0].preference.match_expressions[0].n_values,
                      0);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_pod_affinity)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    const ks_pod_affinity_t *pa = p->affinity.pod_affinity;
    const ks_pod_affinity_t *anti = p->affinity.pod_anti_affinity;
    const ks_pod_affinity_term_t *t;
    ck_assert_ptr_nonnull(pa);
    ck_assert_uint_eq(pa->n_required, 1);
    ck_assert_uint_eq(pa->n_preferred, 0);
    t = &pa->required[0];
    /* matchLabels first (as In), then matchExpressions */
    ck_assert_ptr_nonnull(t->label_selector);
    ck_assert_uint_eq(t->label_selector->n, 2);
    ck_assert_ptr_eq(t->label_selector->reqs[0].key, I("app"));
    ck_assert_int_eq(t->label_selector->reqs[0].op, KS_OP_IN);
    ck_assert_uint_eq(t->label_selector->reqs[0].n_values, 1);
    ck_assert_ptr_eq(t->label_selector->reqs[0].values[0], I("db"));
    ck_assert_ptr_eq(t->label_selector->reqs[1].key, I("env"));
    ck_assert_int_eq(t->label_selector->reqs[1].op, KS_OP_NOT_IN);
    ck_assert_ptr_eq(t->label_selector->reqs[1].values[0], I("dev"));
    ck_assert_uint_eq(t->n_namespaces, 2);
    ck_assert_ptr_eq(t->namespaces[0], I("shop"));
    ck_assert_ptr_eq(t->namespaces[1], I("other"));
    ck_assert_ptr_null(t->namespace_selector);
    ck_assert_ptr_eq(t->topology_key, I("topology.kubernetes.io/zone"));

    ck_assert_ptr_nonnull(anti);
    ck_assert_uint_eq(anti->n_required, 1);
    t = &anti->required[0];
    ck_assert_uint_eq(t->label_selector->n, 1);
    /* namespaceSelector: {} is present and selects everything */
    ck_assert_ptr_nonnull(t->namespace_selector);
    ck_assert_uint_eq(t->namespace_selector->n, 0);
    ck_assert_uint_eq(t->n_namespaces, 0);
    ck_assert_ptr_eq(t->topology_key, I("kubernetes.io/hostname"));
    ck_assert_uint_eq(anti->n_preferred, 1);
    ck_assert_int_eq(anti->preferred[0].weight, 50);
    t = &anti->preferred[0].term;
    ck_assert_uint_eq(t->label_selector->n, 1);
    ck_assert_int_eq(t->label_selector->reqs[0].op, KS_OP_DOES_NOT_EXIST);
    ck_assert_uint_eq(t->namespace_selector->n, 1);
    ck_assert_ptr_eq(t->namespace_selector->reqs[0].values[0], I("a"));
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_tolerations_and_spread)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    const ks_topology_spread_constraint_t *c;
    ck_assert_uint_eq(p->n_tolerations, 4);
    ck_assert_ptr_eq(p->tolerations[0].key, I("dedicated"));
    ck_assert_int_eq(p->tolerations[0].op, KS_TOLERATION_EQUAL);
    ck_assert_ptr_eq(p->tolerations[0].value, I("shop"));
    ck_assert_int_eq(p->tolerations[0].effect, KS_EFFECT_NO_SCHEDULE);
    ck_assert_ptr_eq(p->tolerations[1].key, I(""));
    ck_assert_int_eq(p->tolerations[1].op, KS_TOLERATION_EXISTS);
    ck_assert_int_eq(p->tolerations[1].effect, KS_EFFECT_ALL);
    ck_assert_ptr_eq(p->tolerations[1].value, ks_intern_empty(in));
    /* operator defaults to Equal */
    ck_assert_int_eq(p->tolerations[2].op, KS_TOLERATION_EQUAL);
    ck_assert_ptr_eq(p->tolerations[2].value, I("v2"));
    ck_assert_int_eq(p->tolerations[2].effect, KS_EFFECT_NO_EXECUTE);
    ck_assert_int_eq(p->tolerations[3].effect, KS_EFFECT_PREFER_NO_SCHEDULE);

    ck_assert_uint_eq(p->n_spread_constraints, 2);
    c = &p->spread_constraints[0];
    ck_assert_int_eq(c->max_skew, 2);
    ck_assert_ptr_eq(c->topology_key, I("zone"));
    ck_assert_int_eq(c->when_unsatisfiable, KS_SCHEDULE_ANYWAY);
    ck_assert_uint_eq(c->label_selector->n, 1);
    ck_assert_ptr_eq(c->label_selector->reqs[0].values[0], I("web"));
    ck_assert_int_eq(c->min_domains, 3);
    ck_assert_int_eq(c->node_affinity_policy, KS_POLICY_HONOR);
    ck_assert_int_eq(c->node_taints_policy, KS_POLICY_IGNORE);
    c = &p->spread_constraints[1];
    ck_assert_int_eq(c->when_unsatisfiable, KS_DO_NOT_SCHEDULE);
    ck_assert_ptr_null(c->label_selector);
    ck_assert_int_eq(c->min_domains, 0);
    ck_assert_int_eq(c->node_affinity_policy, KS_POLICY_UNSET);
    ck_assert_int_eq(c->node_taints_policy, KS_POLICY_UNSET);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_containers)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    const ks_container_t *app, *side, *init;
    ck_assert_uint_eq(p->n_containers, 2);
    ck_assert_uint_eq(p->n_init_containers, 1);
    app = &p->containers[0];
    side = &p->containers[1];
    init = &p->init_containers[0];
    ck_assert_ptr_eq(app->name, I("app"));
    ck_assert_ptr_eq(app->image, I("nginx:1.21"));
    ck_assert_int_eq(app->requests.milli_cpu, 500);
    ck_assert_int_eq(app->requests.memory, GI);
    ck_assert_int_eq(app->requests.ephemeral_storage, GI);
    ck_assert_int_eq(app->limits.milli_cpu, 1000);
    ck_assert_int_eq(app->limits.memory, 2 * GI);
    ck_assert_int_eq(ks_resources_scalar(&app->limits, I("nvidia.com/gpu")), 2);
    /* the gpu limit without a request became the request */
    ck_assert_int_eq(ks_resources_scalar(&app->requests, I("nvidia.com/gpu")),
                     2);
    ck_assert_uint_eq(app->n_ports, 2);
    ck_assert_int_eq(app->ports[0].container_port, 80);
    ck_assert_int_eq(app->ports[0].host_port, 8080);
    ck_assert_int_eq(app->ports[0].protocol, KS_PROTO_TCP);
    ck_assert_ptr_eq(app->ports[0].host_ip, I("10.0.0.1"));
    ck_assert_int_eq(app->ports[1].container_port, 53);
    ck_assert_int_eq(app->ports[1].host_port, 0);
    ck_assert_int_eq(app->ports[1].protocol, KS_PROTO_UDP);
    ck_assert_ptr_eq(app->ports[1].host_ip, I(""));
    ck_assert_ptr_eq(side->image, I("envoy"));
    ck_assert_int_eq(side->requests.milli_cpu, 0);
    ck_assert_int_eq(side->ports[0].protocol, KS_PROTO_SCTP);
    ck_assert_ptr_eq(init->name, I("init"));
    ck_assert_int_eq(init->requests.milli_cpu, 2000);
    ck_assert_int_eq(init->requests.memory, 100 * MI);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_derived)
{
    ks_pod_t *p = pod_ok(full_pod, in);
    /* requests: max(sum containers, each init) + overhead
     *   cpu: max(500 + 0, 2000) + 250 = 2250
     *   memory: max(1Gi + 0, 100Mi) + 64Mi
     *   ephemeral: 1Gi; gpu: 2 (from the limit) */
    ck_assert_int_eq(p->requests.milli_cpu, 2250);
    ck_assert_int_eq(p->requests.memory, GI + 64 * MI);
    ck_assert_int_eq(p->requests.ephemeral_storage, GI);
    ck_assert_int_eq(ks_resources_scalar(&p->requests, I("nvidia.com/gpu")), 2);
    /* non-zero: sidecar counts 100m / 200Mi; init 2000m / 100Mi
     *   cpu: max(500 + 100, 2000) + 250 = 2250
     *   memory: max(1Gi + 200Mi, 100Mi) + 64Mi */
    ck_assert_int_eq(p->non_zero_milli_cpu, 2250);
    ck_assert_int_eq(p->non_zero_memory, GI + 200 * MI + 64 * MI);
    ck_assert_uint_eq(p->n_host_ports, 2);
    ck_assert_int_eq(p->host_ports[0].host_port, 8080);
    ck_assert_ptr_eq(p->host_ports[0].host_ip, I("10.0.0.1"));
    ck_assert_int_eq(p->host_ports[1].host_port, 9000);
    ck_assert_int_eq(p->host_ports[1].protocol, KS_PROTO_SCTP);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_defaults)
{
    ks_pod_t *p = pod_ok("metadata: {name: x}\n"
                         "spec:\n"
                         "  containers:\n"
                         "  - name: c\n"
                         "    image: pause\n",
                         in);
    ck_assert_ptr_eq(p->ns, I("default"));
    ck_assert_ptr_eq(p->uid, I("default/x"));
    ck_assert_ptr_eq(p->scheduler_name, I("default-scheduler"));
    ck_assert_ptr_eq(p->node_name, ks_intern_empty(in));
    ck_assert_ptr_eq(p->nominated_node_name, I(""));
    ck_assert_ptr_eq(p->priority_class_name, I(""));
    ck_assert_int_eq(p->priority, 0);
    ck_assert_int_eq(p->deleting, 0);
    ck_assert_int_eq(p->creation_unix_ms, 0);
    ck_assert_int_eq(p->start_unix_ms, 0);
    ck_assert_uint_eq(p->labels.n, 0);
    ck_assert_ptr_null(p->affinity.node_affinity);
    ck_assert_ptr_null(p->affinity.pod_affinity);
    ck_assert_ptr_null(p->affinity.pod_anti_affinity);
    ck_assert_uint_eq(p->n_tolerations, 0);
    ck_assert_int_eq(p->requests.milli_cpu, 0);
    ck_assert_int_eq(p->requests.memory, 0);
    /* one container without requests: the upstream non-zero defaults */
    ck_assert_int_eq(p->non_zero_milli_cpu, 100);
    ck_assert_int_eq(p->non_zero_memory, 200 * MI);
    ck_assert_uint_eq(p->n_host_ports, 0);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_non_zero_rules)
{
    /* An explicit zero is not replaced (only an unset request is); cpu set
     * and memory unset in one container; init containers use the same rule. */
    ks_pod_t *p = pod_ok("metadata: {name: z}\n"
                         "spec:\n"
                         "  initContainers:\n"
                         "  - name: i\n"
                         "    resources: {requests: {cpu: 50m}}\n"
                         "  containers:\n"
                         "  - name: a\n"
                         "    resources: {requests: {cpu: \"0\", memory: \"0\"}}\n"
                         "  - name: b\n"
                         "    resources: {requests: {cpu: 20m}}\n",
                         in);
    /* containers: cpu 0 + 20 = 20, memory 0 + 200Mi; init: 50m, 200Mi */
    ck_assert_int_eq(p->non_zero_milli_cpu, 50);
    ck_assert_int_eq(p->non_zero_memory, 200 * MI);
    ck_assert_int_eq(p->requests.milli_cpu, 50);
    ck_assert_int_eq(p->requests.memory, 0);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_requests_from_limits)
{
    ks_pod_t *p = pod_ok("metadata: {name: l}\n"
                         "spec:\n"
                         "  containers:\n"
                         "  - name: a\n"
                         "    resources:\n"
                         "      requests: {memory: 300Mi}\n"
                         "      limits: {cpu: 1500m, memory: 1Gi, "
                         "example.com/foo: \"3\", hugepages-2Mi: 4Mi}\n"
                         "  initContainers:\n"
                         "  - name: i\n"
                         "    resources:\n"
                         "      limits: {cpu: \"3\"}\n",
                         in);
    const ks_container_t *a = &p->containers[0];
    ck_assert_int_eq(a->requests.milli_cpu, 1500);
    ck_assert_int_eq(a->requests.memory, 300 * MI); /* request kept */
    ck_assert_int_eq(ks_resources_scalar(&a->requests, I("example.com/foo")),
                     3);
    ck_assert_int_eq(ks_resources_scalar(&a->requests, I("hugepages-2Mi")),
                     4 * MI);
    ck_assert_int_eq(p->init_containers[0].requests.milli_cpu, 3000);
    /* cpu request now present: counted as is in non-zero */
    ck_assert_int_eq(p->non_zero_milli_cpu, 3000);
    /* memory: max(container 300Mi, init unset -> 200Mi) */
    ck_assert_int_eq(p->non_zero_memory, 300 * MI);
    ck_assert_int_eq(p->requests.milli_cpu, 3000);
    ck_assert_int_eq(p->requests.memory, 300 * MI);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_null_and_empty_fields)
{
    /* what `kubectl create --dry-run -o yaml` prints */
    ks_pod_t *p = pod_ok("metadata:\n"
                         "  creationTimestamp: null\n"
                         "  labels: {run: x}\n"
                         "  name: x\n"
                         "spec:\n"
                         "  containers:\n"
                         "  - image: nginx\n"
                         "    name: x\n"
                         "    resources: {}\n"
                         "  dnsPolicy: ClusterFirst\n"
                         "  restartPolicy: Always\n"
                         "  affinity:\n"
                         "status: {}\n",
                         in);
    ck_assert_int_eq(p->creation_unix_ms, 0);
    ck_assert_ptr_null(p->affinity.node_affinity);
    ck_assert_int_eq(p->non_zero_milli_cpu, 100);
    ks_pod_free(p);
}
END_TEST

/* spec.volumes (ABI 1.3): claims, ephemeral volumes, other sources. */
START_TEST(test_pod_volumes)
{
    ks_error_t err = {0};
    void *out = NULL;
    ks_pod_t *p = pod_ok("metadata: {name: web-0, namespace: shop}\n"
                         "spec:\n"
                         "  volumes:\n"
                         "  - name: data\n"
                         "    persistentVolumeClaim: {claimName: data-web-0}\n"
                         "  - name: ro\n"
                         "    persistentVolumeClaim: {claimName: shared, "
                         "readOnly: true}\n"
                         "  - name: scratch\n"
                         "    ephemeral: {volumeClaimTemplate: {spec: {}}}\n"
                         "  - name: cfg\n"
                         "    configMap: {name: cfg}\n"
                         "  - name: noname\n"
                         "    persistentVolumeClaim: {}\n",
                         in);
    ck_assert_uint_eq(p->n_volumes, 5);
    ck_assert_ptr_eq(p->volumes[0].name, I("data"));
    ck_assert_int_eq(p->volumes[0].source, KS_VOLUME_PVC);
    ck_assert_ptr_eq(p->volumes[0].claim_name, I("data-web-0"));
    ck_assert_int_eq(p->volumes[0].read_only, 0);
    ck_assert_ptr_eq(p->volumes[1].claim_name, I("shared"));
    ck_assert_int_eq(p->volumes[1].read_only, 1);
    ck_assert_int_eq(p->volumes[2].source, KS_VOLUME_EPHEMERAL);
    ck_assert_ptr_eq(p->volumes[2].claim_name, I("web-0-scratch"));
    ck_assert_int_eq(p->volumes[3].source, KS_VOLUME_OTHER);
    ck_assert_ptr_eq(p->volumes[3].claim_name, I(""));
    ck_assert_int_eq(p->volumes[4].source, KS_VOLUME_PVC);
    ck_assert_ptr_eq(p->volumes[4].claim_name, I(""));
    ks_pod_free(p);
    p = pod_ok("metadata: {name: x}\n", in);
    ck_assert_uint_eq(p->n_volumes, 0);
    ck_assert_ptr_null(p->volumes);
    ks_pod_free(p);
    ck_assert_int_ne(parse_one("metadata: {name: x}\n"
                               "spec:\n"
                               "  volumes:\n"
                               "  - name: d\n"
                               "    persistentVolumeClaim: {claimName: [a]}\n",
                               in, 'p', &out, &err), 0);
    ck_assert_msg(strstr(err.msg, "spec.volumes[0].persistentVolumeClaim."
                                  "claimName: expected a string") != NULL,
                  "%s", err.msg);
}
END_TEST

/* Inline in-tree volume sources (ABI 1.4): volume_inline parallel to
 * volumes, only when one is present; the RBD pool's default. */
START_TEST(test_pod_volume_inline)
{
    ks_error_t err = {0};
    void *out = NULL;
    const ks_volume_inline_t *vi;
    ks_pod_t *p = pod_ok(
        "metadata: {name: db-0}\n"
        "spec:\n"
        "  volumes:\n"
        "  - name: cfg\n"
        "    configMap: {name: cfg}\n"
        "  - name: pd\n"
        "    gcePersistentDisk: {pdName: disk-1, readOnly: true}\n"
        "  - name: ebs\n"
        "    awsElasticBlockStore: {volumeID: vol-1}\n"
        "  - name: iscsi\n"
        "    iscsi: {iqn: 'iqn.2001-04.com.example:disk', lun: 0}\n"
        "  - name: rbd\n"
        "    rbd: {monitors: [m1, m2], image: img}\n"
        "  - name: rbd2\n"
        "    rbd: {monitors: [m1], image: img, pool: kube, readOnly: true}\n"
        "  - name: az\n"
        "    azureDisk: {diskName: d, diskURI: /sub/d}\n"
        "  - name: cinder\n"
        "    cinder: {volumeID: c-1}\n"
        "  - name: px\n"
        "    portworxVolume: {volumeID: px-1}\n"
        "  - name: claim\n"
        "    persistentVolumeClaim: {claimName: c}\n",
        in);
    ck_assert_uint_eq(p->n_volumes, 10);
    ck_assert_ptr_nonnull(p->volume_inline);
    vi = p->volume_inline;
    ck_assert_int_eq(vi[0].kind, KS_INLINE_NONE);
    ck_assert_ptr_null(vi[0].id);
    ck_assert_int_eq(vi[1].kind, KS_INLINE_GCE_PD);
    ck_assert_ptr_eq(vi[1].id, I("disk-1"));
    ck_assert_int_eq(vi[1].read_only, 1);
    ck_assert_int_eq(p->volumes[1].source, KS_VOLUME_OTHER);
    ck_assert_int_eq(vi[2].kind, KS_INLINE_AWS_EBS);
    ck_assert_ptr_eq(vi[2].id, I("vol-1"));
    ck_assert_int_eq(vi[2].read_only, 0);
    ck_assert_int_eq(vi[3].kind, KS_INLINE_ISCSI);
    ck_assert_ptr_eq(vi[3].id, I("iqn.2001-04.com.example:disk"));
    ck_assert_int_eq(vi[4].kind, KS_INLINE_RBD);
    ck_assert_ptr_eq(vi[4].id, I("img"));
    ck_assert_ptr_eq(vi[4].pool, I("rbd"));
    ck_assert_uint_eq(vi[4].n_monitors, 2);
    ck_assert_ptr_eq(vi[4].monitors[1], I("m2"));
    ck_assert_ptr_eq(vi[5].pool, I("kube"));
    ck_assert_int_eq(vi[5].read_only, 1);
    ck_assert_int_eq(vi[6].kind, KS_INLINE_AZURE_DISK);
    ck_assert_ptr_eq(vi[6].id, I("d"));
    ck_assert_ptr_eq(vi[6].disk_uri, I("/sub/d"));
    ck_assert_int_eq(vi[7].kind, KS_INLINE_CINDER);
    ck_assert_ptr_eq(vi[7].id, I("c-1"));
    ck_assert_int_eq(vi[8].kind, KS_INLINE_PORTWORX);
    ck_assert_ptr_eq(vi[8].id, I("px-1"));
    ck_assert_int_eq(vi[9].kind, KS_INLINE_NONE);
    ck_assert_int_eq(p->volumes[9].source, KS_VOLUME_PVC);
    ks_pod_free(p);
    /* no inline in-tree source: no array */
    p = pod_ok("metadata: {name: x}\n"
               "spec:\n"
               "  volumes:\n"
               "  - name: cfg\n"
               "    configMap: {name: cfg}\n"
               "  - name: csi\n"
               "    csi: {driver: d}\n",
               in);
    ck_assert_uint_eq(p->n_volumes, 2);
    ck_assert_ptr_null(p->volume_inline);
    ks_pod_free(p);
    ck_assert_int_ne(parse_one("metadata: {name: x}\n"
                               "spec:\n"
                               "  volumes:\n"
                               "  - name: d\n"
                               "    rbd: {monitors: m1, image: i}\n",
                               in, 'p', &out, &err), 0);
    ck_assert_msg(strstr(err.msg, "spec.volumes[0].rbd.monitors") != NULL,
                  "%s", err.msg);
}
END_TEST

/* spec.resourceClaims (ABI 1.5): names, template names and the claim
 * status.resourceClaimStatuses generated for each entry. */
START_TEST(test_pod_resource_claims)
{
    ks_error_t err = {0};
    void *out = NULL;
    const ks_pod_claim_t *pc;
    ks_pod_t *p = pod_ok(
        "metadata: {name: trainer-0}\n"
        "spec:\n"
        "  resourceClaims:\n"
        "  - name: gpu\n"
        "    resourceClaimTemplateName: one-gpu\n"
        "  - name: shared\n"
        "    resourceClaimName: team-gpus\n"
        "  - name: nic\n"
        "    resourceClaimTemplateName: nic\n"
        "  - name: later\n"
        "    resourceClaimTemplateName: later\n"
        "status:\n"
        "  resourceClaimStatuses:\n"
        "  - name: gpu\n"
        "    resourceClaimName: trainer-0-gpu-x7k2p\n"
        "  - name: nic\n",
        in);
    ck_assert_uint_eq(p->n_resource_claims, 4);
    pc = p->resource_claims;
    ck_assert_ptr_eq(pc[0].name, I("gpu"));
    ck_assert_ptr_eq(pc[0].template_name, I("one-gpu"));
    ck_assert_str_eq(pc[0].claim_name, "");
    ck_assert_int_eq(pc[0].has_status, 1);
    ck_assert_ptr_eq(pc[0].status_claim_name, I("trainer-0-gpu-x7k2p"));
    ck_assert_ptr_eq(pc[1].claim_name, I("team-gpus"));
    ck_assert_int_eq(pc[1].has_status, 0);
    ck_assert_str_eq(pc[1].status_claim_name, "");
    /* a status entry without a claim: none was needed */
    ck_assert_int_eq(pc[2].has_status, 1);
    ck_assert_str_eq(pc[2].status_claim_name, "");
    ck_assert_int_eq(pc[3].has_status, 0);
    ks_pod_free(p);
    p = pod_ok("metadata: {name: x}\n", in);
    ck_assert_uint_eq(p->n_resource_claims, 0);
    ck_assert_ptr_null(p->resource_claims);
    ks_pod_free(p);
    ck_assert_int_ne(parse_one("metadata: {name: x}\n"
                               "spec:\n"
                               "  resourceClaims:\n"
                               "  - resourceClaimName: c\n",
                               in, 'p', &out, &err), 0);
    ck_assert_msg(strstr(err.msg, "spec.resourceClaims[0]") != NULL &&
                      strstr(err.msg, "name is required") != NULL,
                  "%s", err.msg);
}
END_TEST

/* Parse expecting failure; returns the message. */
static const char *pod_err(const char *yaml, ks_error_t *err)
{
    void *pod = NULL;
    int rc = parse_one(yaml, in, 'p', &pod, err);
    ck_assert_msg(rc != 0, "parse should fail");
    ck_assert_int_eq(rc, err->code);
    ck_assert_ptr_null(pod);
    return err->msg;
}

START_TEST(test_pod_errors)
{
    ks_error_t err = {0};
    const char *m;
    /* apimachinery's rules (base/yaml_scalar.h): a plain number is not a
     * string (kubectl refuses `version: 1` too), a quoted one is; a mapping
     * key is its text whatever it reads as */
    m = pod_err("metadata: {name: p, labels: {version: 1}}\n", &err);
    ck_assert_str_eq(m, "t.yaml:1:39: pod default/p: metadata.labels.version: "
                        "expected a string, found an integer (\"1\"); quote "
                        "it: \"1\"");
    m = pod_err("metadata: {name: true}\n", &err);
    ck_assert_str_eq(m, "t.yaml:1:18: pod: metadata.name: expected a string, "
                        "found a boolean (\"true\"); quote it: \"true\"");
    {
        ks_pod_t *ok = NULL;
        ck_assert_int_eq(parse_one("metadata: {name: p, labels: {1: '2', "
                                   "on: 'x'}}\n",
                                   in, 'p', (void **)&ok, &err),
                         0);
        ck_assert_ptr_eq(ks_labels_get(&ok->labels, I("1")), I("2"));
        ck_assert_ptr_eq(ks_labels_get(&ok->labels, I("on")), I("x"));
        ks_pod_free(ok);
    }
    m = pod_err("metadata: {name: x}\n"
                "spec:\n"
                "  containers:\n"
                "  - name: c\n"
                "    resources:\n"
                "      requests:\n"
                "        cpu: abc\n",
                &err);
    ck_assert_int_eq(err.code, KS_ESCHEMA);
    ck_assert_msg(strstr(m, "t.yaml:7:14: pod default/x: "
                            "spec.containers[0].resources.requests.cpu: "
                            "invalid quantity \"abc\"") == m,
                  "got: %s", m);

    m = pod_err("metadata:\n"
                "  namespace: ns1\n"
                "  name: y\n"
                "  labels: [a, b]\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:4:11: pod ns1/y: metadata.labels: expected a "
                        "mapping, found a sequence");

    m = pod_err("metadata: {namespace: a}\nspec: {}\n", &err);
    ck_assert_str_eq(m, "t.yaml:1:11: pod: metadata.name is required");

    m = pod_err("spec: {}\n", &err);
    ck_assert_str_eq(m, "t.yaml:1:1: pod: metadata.name is required");

    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  priority: high\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:3:13: pod default/p: spec.priority: expected "
                        "an integer, found a string (\"high\")");

    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  tolerations:\n"
                "  - {key: a, operator: Maybe}\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:4:24: pod default/p: spec.tolerations[0]."
                        "operator: unknown operator \"Maybe\" (valid: Equal, "
                        "Exists)");

    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  affinity:\n"
                "    podAffinity:\n"
                "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                "      - labelSelector:\n"
                "          matchExpressions:\n"
                "          - {key: a, operator: Gt, values: [\"1\"]}\n",
                &err);
    ck_assert_msg(strstr(m, "t.yaml:8:32: pod default/p: spec.affinity."
                            "podAffinity.requiredDuringSchedulingIgnoredDuring"
                            "Execution[0].labelSelector.matchExpressions[0]."
                            "operator: unknown operator \"Gt\"") == m,
                  "got: %s", m);

    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  containers:\n"
                "  - name: c\n"
                "    ports:\n"
                "    - containerPort: 80\n"
                "      hostPort: [1]\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:7:17: pod default/p: spec.containers[0]."
                        "ports[0].hostPort: expected an integer, found a "
                        "sequence");

    m = pod_err("metadata: {name: p}\n"
                "status:\n"
                "  startTime: yesterday\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:3:14: pod default/p: status.startTime: "
                        "invalid RFC 3339 time \"yesterday\"");

    m = pod_err("- a\n- b\n", &err);
    ck_assert_str_eq(m, "t.yaml:1:1: pod: expected a mapping");

    /* YAML 1.2 core schema: a quoted integer is a string */
    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  priority: \"5\"\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:3:13: pod default/p: spec.priority: expected "
                        "an integer, found a string (\"5\") (quoted scalars "
                        "are strings: remove the quotes)");
    m = pod_err("metadata: {name: p}\n"
                "spec:\n"
                "  priority: 99999999999999999999\n",
                &err);
    ck_assert_str_eq(m, "t.yaml:3:13: pod default/p: spec.priority: integer "
                        "99999999999999999999 out of range");
}
END_TEST

/* Core schema values: hex and octal integers, !!null, and YAML 1.1
 * booleans as string values. */
START_TEST(test_pod_core_schema)
{
    ks_pod_t *p = pod_ok("metadata:\n"
                         "  name: p\n"
                         "  labels: {enabled: yes, off: on}\n"
                         "  annotations: !!null\n"
                         "spec:\n"
                         "  priority: 0x10\n"
                         "  containers:\n"
                         "  - name: c\n"
                         "    ports: [{containerPort: 0o17, hostPort: 8080}]\n",
                         in);
    ck_assert_int_eq(p->priority, 16);
    ck_assert_uint_eq(p->labels.n, 2);
    ck_assert_ptr_eq(p->labels.items[0].value, I("yes"));
    ck_assert_ptr_eq(p->labels.items[1].key, I("off"));
    ck_assert_ptr_eq(p->labels.items[1].value, I("on"));
    ck_assert_uint_eq(p->annotations.n, 0);
    ks_pod_free(p);
}
END_TEST

START_TEST(test_pod_interning_across_objects)
{
    ks_pod_t *a = pod_ok("metadata: {name: a, labels: {app: web}}\n", in);
    ks_pod_t *b = pod_ok("metadata: {name: b, labels: {app: web}}\n", in);
    ck_assert_ptr_eq(a->labels.items[0].key, b->labels.items[0].key);
    ck_assert_ptr_eq(a->labels.items[0].value, b->labels.items[0].value);
    ck_assert_ptr_eq(a->ns, b->ns);
    ks_pod_free(a);
    ks_pod_free(b);
    ks_pod_free(NULL);
}
END_TEST

/* --- nodes ---------------------------------------------------------------- */

static const char *node_yaml =
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n"
    "  name: n1\n"
    "  labels: {zone: a, kubernetes.io/hostname: n1}\n"
    "  annotations: {x: y}\n"
    "spec:\n"
    "  unschedulable: true\n"
    "  podCIDR: 10.0.0.0/24\n"
    "  taints:\n"
    "  - {key: dedicated, value: shop, effect: NoSchedule}\n"
    "  - {key: spot, effect: PreferNoSchedule, timeAdded: null}\n"
    "  - {key: bad, effect: NoExecute}\n"
    "status:\n"
    "  capacity:\n"
    "    cpu: \"4\"\n"
    "    memory: 16Gi\n"
    "    pods: \"110\"\n"
    "    ephemeral-storage: 100Gi\n"
    "    nvidia.com/gpu: \"2\"\n"
    "    hugepages-2Mi: 1Gi\n"
    "    foo: \"5\"\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n"
    "  images:\n"
    "  - names: [\"nginx:1.21\", \"docker.io/library/nginx:1.21\"]\n"
    "    sizeBytes: 1000\n"
    "  - names: [\"redis:7\", \"nginx:1.21\"]\n"
    "    sizeBytes: 2000\n"
    "  - sizeBytes: 5\n";

START_TEST(test_node_fields)
{
    ks_node_t *n = node_ok(node_yaml, in);
    ck_assert_ptr_eq(n->name, I("n1"));
    ck_assert_uint_eq(n->labels.n, 2);
    ck_assert_ptr_eq(ks_labels_get(&n->labels, I("zone")), I("a"));
    ck_assert_int_eq(n->unschedulable, 1);
    ck_assert_uint_eq(n->n_taints, 3);
    ck_assert_ptr_eq(n->taints[0].key, I("dedicated"));
    ck_assert_ptr_eq(n->taints[0].value, I("shop"));
    ck_assert_int_eq(n->taints[0].effect, KS_EFFECT_NO_SCHEDULE);
    ck_assert_ptr_eq(n->taints[1].value, I(""));
    ck_assert_int_eq(n->taints[1].effect, KS_EFFECT_PREFER_NO_SCHEDULE);
    ck_assert_int_eq(n->taints[2].effect, KS_EFFECT_NO_EXECUTE);
    /* allocatable absent: capacity */
    ck_assert_int_eq(n->allocatable.milli_cpu, 4000);
    ck_assert_int_eq(n->allocatable.memory, 16 * GI);
    ck_assert_int_eq(n->allocatable.allowed_pods, 110);
    ck_assert_int_eq(n->allocatable.ephemeral_storage, 100 * GI);
    ck_assert_uint_eq(n->allocatable.n_scalar, 2); /* foo is not a resource */
    ck_assert_int_eq(ks_resources_scalar(&n->allocatable, I("nvidia.com/gpu")),
                     2);
    ck_assert_int_eq(ks_resources_scalar(&n->allocatable, I("hugepages-2Mi")),
                     GI);
    ck_assert_int_eq(ks_resources_scalar(&n->allocatable, I("foo")), 0);
    /* one entry per name; nginx:1.21 listed twice counts once */
    ck_assert_uint_eq(n->n_images, 3);
    ck_assert_ptr_eq(n->images[0].name, I("nginx:1.21"));
    ck_assert_int_eq(n->images[0].size_bytes, 1000);
    ck_assert_ptr_eq(n->images[1].name, I("docker.io/library/nginx:1.21"));
    ck_assert_int_eq(n->images[1].size_bytes, 1000);
    ck_assert_ptr_eq(n->images[2].name, I("redis:7"));
    ck_assert_int_eq(n->images[2].size_bytes, 2000);
    ks_node_free(n);
}
END_TEST

START_TEST(test_node_allocatable_wins)
{
    ks_node_t *n = node_ok("metadata: {name: n2}\n"
                           "status:\n"
                           "  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
                           "  allocatable: {cpu: 7800m, memory: 31Gi, pods: \"100\"}\n",
                           in);
    ck_assert_int_eq(n->allocatable.milli_cpu, 7800);
    ck_assert_int_eq(n->allocatable.memory, 31 * GI);
    ck_assert_int_eq(n->allocatable.allowed_pods, 100);
    ck_assert_int_eq(n->unschedulable, 0);
    ck_assert_uint_eq(n->n_taints, 0);
    ck_assert_uint_eq(n->n_images, 0);
    ks_node_free(n);
}
END_TEST

START_TEST(test_node_errors)
{
    ks_error_t err = {0};
    void *n = NULL;
    ck_assert_int_eq(parse_one("metadata: {name: n}\n"
                               "spec:\n"
                               "  taints:\n"
                               "  - {key: a, effect: Sometimes}\n",
                               in, 'n', &n, &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:4:22: node n: spec.taints[0].effect: "
                              "unknown effect \"Sometimes\" (valid: "
                              "NoSchedule, PreferNoSchedule, NoExecute)");
    ck_assert_int_eq(parse_one("metadata: {name: n}\n"
                               "spec: {unschedulable: maybe}\n",
                               in, 'n', &n, &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:2:23: node n: spec.unschedulable: "
                              "expected a boolean, found a string "
                              "(\"maybe\")");
    /* YAML 1.2: yes/no/on/off are strings, with a hint; a quoted "true"
     * is a string */
    ck_assert_int_eq(parse_one("metadata: {name: n}\n"
                               "spec: {unschedulable: yes}\n",
                               in, 'n', &n, &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:2:23: node n: spec.unschedulable: "
                              "expected a boolean, found a string (\"yes\"); ksched "
                              "reads YAML 1.2, where yes/no/on/off are "
                              "strings: write true or false");
    ck_assert_int_eq(parse_one("metadata: {name: n}\n"
                               "spec: {unschedulable: 'true'}\n",
                               in, 'n', &n, &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:2:23: node n: spec.unschedulable: "
                              "expected a boolean, found a string (\"true\") "
                              "(quoted scalars are strings: remove the "
                              "quotes)");
    ck_assert_int_eq(parse_one("metadata: {name: n}\n"
                               "status:\n"
                               "  allocatable:\n"
                               "    memory: 1Gb\n",
                               in, 'n', &n, &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:4:13: node n: status.allocatable."
                              "memory: invalid quantity \"1Gb\": unexpected "
                              "character 'b' at offset 2");
    ck_assert_int_eq(parse_one("metadata: {labels: {a: b}}\n", in, 'n', &n,
                               &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "t.yaml:1:11: node: metadata.name is required");
}
END_TEST

START_TEST(test_service)
{
    ks_error_t err = {0};
    void *v = NULL;
    ks_service_t *s;
    ck_assert_int_eq(parse_one("kind: Service\n"
                               "metadata: {name: web, namespace: shop}\n"
                               "spec:\n"
                               "  selector: {app: web, tier: front}\n"
                               "  ports: [{port: 80}]\n",
                               in, 's', &v, &err),
                     0);
    s = v;
    ck_assert_ptr_eq(s->ns, I("shop"));
    ck_assert_ptr_eq(s->name, I("web"));
    ck_assert_ptr_nonnull(s->selector);
    ck_assert_uint_eq(s->selector->n, 2);
    ck_assert_ptr_eq(s->selector->reqs[1].key, I("tier"));
    ck_assert_int_eq(s->selector->reqs[1].op, KS_OP_IN);
    ck_assert_ptr_eq(s->selector->reqs[1].values[0], I("front"));
    ks_service_free(s);
    ck_assert_int_eq(parse_one("metadata: {name: headless}\n"
                               "spec: {clusterIP: None}\n",
                               in, 's', &v, &err),
                     0);
    s = v;
    ck_assert_ptr_eq(s->ns, I("default"));
    ck_assert_ptr_null(s->selector);
    ks_service_free(s);
}
END_TEST

START_TEST(test_resources_helpers)
{
    ks_resources_t a, b;
    int i;
    char name[32];
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.milli_cpu = 100;
    a.memory = 10;
    a.allowed_pods = 1;
    ck_assert_int_eq(ks_resources_set_scalar(&a, I("x/gpu"), 2), 0);
    b.milli_cpu = 50;
    b.ephemeral_storage = 7;
    ks_resources_set_scalar(&b, I("x/gpu"), 3);
    ks_resources_set_scalar(&b, I("y/fpga"), 1);
    ks_resources_add(&a, &b);
    ck_assert_int_eq(a.milli_cpu, 150);
    ck_assert_int_eq(a.ephemeral_storage, 7);
    ck_assert_int_eq(ks_resources_scalar(&a, I("x/gpu")), 5);
    ck_assert_int_eq(ks_resources_scalar(&a, I("y/fpga")), 1);
    ks_resources_sub(&a, &b);
    ck_assert_int_eq(a.milli_cpu, 100);
    ck_assert_int_eq(ks_resources_scalar(&a, I("x/gpu")), 2);
    ck_assert_int_eq(ks_resources_scalar(&a, I("y/fpga")), 0);
    /* set_max: per resource, pods untouched */
    b.allowed_pods = 9;
    ks_resources_set_max(&a, &b);
    ck_assert_int_eq(a.milli_cpu, 100);
    ck_assert_int_eq(a.ephemeral_storage, 7);
    ck_assert_int_eq(ks_resources_scalar(&a, I("x/gpu")), 3);
    ck_assert_int_eq(a.allowed_pods, 1);
    /* the slots run out at KS_MAX_SCALAR_RESOURCES */
    memset(&a, 0, sizeof(a));
    for (i = 0; i < KS_MAX_SCALAR_RESOURCES; i++) {
        snprintf(name, sizeof(name), "r/%d", i);
        ck_assert_int_eq(ks_resources_set_scalar(&a, I(name), i), 0);
    }
    ck_assert_int_eq(ks_resources_set_scalar(&a, I("r/extra"), 1), -1);
    ck_assert_int_eq(ks_resources_set_scalar(&a, I("r/3"), 30), 0);
    ck_assert_int_eq(ks_resources_scalar(&a, I("r/3")), 30);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster-objects");
    TCase *tp = tcase_create("pod");
    TCase *tn = tcase_create("node");
    TCase *tr = tcase_create("resources");
    SRunner *sr;
    int failed;
    tcase_add_checked_fixture(tp, setup, teardown);
    tcase_add_checked_fixture(tn, setup, teardown);
    tcase_add_checked_fixture(tr, setup, teardown);
    tcase_add_test(tp, test_pod_metadata_and_spec);
    tcase_add_test(tp, test_pod_node_affinity);
    tcase_add_test(tp, test_pod_pod_affinity);
    tcase_add_test(tp, test_pod_tolerations_and_spread);
    tcase_add_test(tp, test_pod_containers);
    tcase_add_test(tp, test_pod_volumes);
    tcase_add_test(tp, test_pod_volume_inline);
    tcase_add_test(tp, test_pod_resource_claims);
    tcase_add_test(tp, test_pod_derived);
    tcase_add_test(tp, test_pod_defaults);
    tcase_add_test(tp, test_pod_non_zero_rules);
    tcase_add_test(tp, test_pod_requests_from_limits);
    tcase_add_test(tp, test_pod_null_and_empty_fields);
    tcase_add_test(tp, test_pod_errors);
    tcase_add_test(tp, test_pod_core_schema);
    tcase_add_test(tp, test_pod_interning_across_objects);
    tcase_add_test(tn, test_node_fields);
    tcase_add_test(tn, test_node_allocatable_wins);
    tcase_add_test(tn, test_node_errors);
    tcase_add_test(tn, test_service);
    tcase_add_test(tr, test_resources_helpers);
    suite_add_tcase(s, tp);
    suite_add_tcase(s, tn);
    suite_add_tcase(s, tr);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
