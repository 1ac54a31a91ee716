/* The manifest reader: streams, Lists, skipped kinds, errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/objects.h"

static ks_intern_t *in;
static char notices[8][512];
static int n_notices;

static void setup(void)
{
    in = ks_intern_new();
    n_notices = 0;
}

static void teardown(void) { ks_intern_free(in); }

static void on_notice(const char *msg)
{
    if (n_notices < 8)
        snprintf(notices[n_notices], sizeof(notices[0]), "%s", msg);
    n_notices++;
}

static int load(ks_manifest_t *m, const char *yaml, ks_error_t *err)
{
    return ks_manifest_load_string(m, "c.yaml", yaml, strlen(yaml), in,
                                   on_notice, err);
}

static const char *stream =
    "apiVersion: v1\n"                          /* 1 */
    "kind: Node\n"                              /* 2 */
    "metadata: {name: n1}\n"                    /* 3 */
    "status: {capacity: {cpu: \"2\"}}\n"        /* 4 */
    "---\n"                                     /* 5 */
    "apiVersion: v1\n"                          /* 6 */
    "kind: List\n"                              /* 7 */
    "items:\n"                                  /* 8 */
    "- apiVersion: v1\n"                        /* 9 */
    "  kind: Pod\n"                             /* 10 */
    "  metadata: {name: p1, namespace: shop}\n" /* 11 */
    "  spec: {nodeName: n1}\n"                  /* 12 */
    "- apiVersion: apps/v1\n"                   /* 13 */
    "  kind: Deployment\n"                      /* 14 */
    "  metadata: {name: web, namespace: shop}\n"/* 15 */
    "- kind: Service\n"                         /* 16 */
    "  metadata: {name: web, namespace: shop}\n"/* 17 */
    "  spec: {selector: {app: web}}\n"          /* 18 */
    "- kind: Namespace\n"                       /* 19 */
    "  metadata: {name: shop, labels: {team: a}}\n" /* 20 */
    "- kind: Node\n"                            /* 21 */
    "  metadata: {name: n2}\n"                  /* 22 */
    "metadata: {resourceVersion: \"\"}\n"       /* 23 */
    "---\n"                                     /* 24 */
    "kind: ClusterRole\n"                       /* 25 */
    "metadata: {name: admin}\n"                 /* 26 */
    "---\n"                                     /* 27 */
    "---\n"                                     /* 28: empty document */
    "kind: Pod\n"                               /* 29 */
    "metadata: {name: p2}\n";                   /* 30 */

START_TEST(test_stream_and_list)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    ck_assert_msg(load(&m, stream, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_nodes, 2);
    ck_assert_str_eq(m.nodes[0]->name, "n1");
    ck_assert_int_eq(m.nodes[0]->allocatable.milli_cpu, 2000);
    ck_assert_str_eq(m.nodes[1]->name, "n2");
    ck_assert_uint_eq(m.n_pods, 2);
    ck_assert_str_eq(m.pods[0]->uid, "shop/p1");
    ck_assert_str_eq(m.pods[0]->node_name, "n1");
    ck_assert_str_eq(m.pods[1]->uid, "default/p2");
    ck_assert_uint_eq(m.n_services, 1);
    ck_assert_str_eq(m.services[0]->name, "web");
    ck_assert_uint_eq(m.services[0]->selector->n, 1);
    ck_assert_uint_eq(m.n_namespaces, 1);
    ck_assert_str_eq(m.namespaces[0]->name, "shop");
    ck_assert_uint_eq(m.namespaces[0]->labels.n, 1);
    ck_assert_uint_eq(m.n_skipped, 2);
    ck_assert_int_eq(n_notices, 2);
    ck_assert_str_eq(notices[0], "c.yaml:13: skipping Deployment shop/web "
                                 "(ksched reads Node, Pod, Service, "
                                 "Namespace, ReplicaSet, StatefulSet, "
                                 "ReplicationController)");
    ck_assert_str_eq(notices[1], "c.yaml:25: skipping ClusterRole admin "
                                 "(ksched reads Node, Pod, Service, "
                                 "Namespace, ReplicaSet, StatefulSet, "
                                 "ReplicationController)");
    /* appending a second input to the same manifest */
    ck_assert_int_eq(load(&m, "kind: Pod\nmetadata: {name: p3}\n", &err), 0);
    ck_assert_uint_eq(m.n_pods, 3);
    ck_assert_ptr_eq(m.pods[0]->ns, ks_intern_str(in, "shop"));
    ks_manifest_free(&m);
    ck_assert_uint_eq(m.n_pods, 0);
    ck_assert_ptr_null(m.pods);
}
END_TEST

/* The caller takes Deployments of group apps (ks_manifest_t.wants/take). */
static char taken[4][512];
static int n_taken_calls;

static int wants_apps_deploy(void *ud, const char *api_version,
                             const char *kind)
{
    (void)ud;
    return strcmp(kind, "Deployment") == 0 &&
           strncmp(api_version, "apps/", 5) == 0;
}

static int take_json(void *ud, const char *api_version, const char *kind,
                     const char *json, size_t len, const char *where,
                     ks_error_t *err)
{
    (void)ud;
    (void)err;
    ck_assert_uint_eq(strlen(json), len);
    if (n_taken_calls < 4)
        snprintf(taken[n_taken_calls], sizeof taken[0], "%s|%s|%s|%s",
                 where, api_version, kind, json);
    n_taken_calls++;
    return strstr(json, "\"refuse\"") != NULL
               ? ks_error_set(err, KS_ESCHEMA, "%s: refused", where)
               : 0;
}

START_TEST(test_taken_kinds)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    n_taken_calls = 0;
    m.wants = wants_apps_deploy;
    m.take = take_json;
    ck_assert_msg(load(&m, stream, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_taken, 1);
    ck_assert_int_eq(n_taken_calls, 1);
    ck_assert_str_eq(taken[0], "c.yaml:13: items[1]|apps/v1|Deployment|"
                               "{\"apiVersion\":\"apps/v1\",\"kind\":"
                               "\"Deployment\",\"metadata\":{\"name\":"
                               "\"web\",\"namespace\":\"shop\"}}");
    /* still one notice for the kinds nobody takes */
    ck_assert_uint_eq(m.n_skipped, 1);
    ck_assert_int_eq(n_notices, 1);
    ck_assert_msg(strncmp(notices[0], "c.yaml:25: skipping ClusterRole", 31)
                      == 0, "%s", notices[0]);
    /* a top-level object, typed scalars; take's error stops the read */
    ck_assert_int_eq(load(&m, "apiVersion: apps/v1\nkind: Deployment\n"
                              "metadata: {name: d2}\nspec: {replicas: 3, "
                              "paused: false}\n", &err), 0);
    ck_assert_str_eq(taken[1], "c.yaml:1|apps/v1|Deployment|{\"apiVersion\":"
                               "\"apps/v1\",\"kind\":\"Deployment\","
                               "\"metadata\":{\"name\":\"d2\"},\"spec\":"
                               "{\"replicas\":3,\"paused\":false}}");
    ck_assert_int_eq(load(&m, "apiVersion: apps/v1\nkind: Deployment\n"
                              "metadata: {name: refuse}\n", &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "c.yaml:1: refused");
    ck_assert_uint_eq(m.n_taken, 2);
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_many_objects)
{
    /* more than the initial array capacity, in one List */
    size_t cap = 1 << 20, off = 0;
    char *buf = malloc(cap);
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int i;
    off += (size_t)snprintf(buf + off, cap - off, "kind: List\nitems:\n");
    for (i = 0; i < 1000; i++)
        off += (size_t)snprintf(buf + off, cap - off,
                                "- kind: Pod\n  metadata: {name: p%d}\n"
                                "  spec: {containers: [{name: c, resources: "
                                "{requests: {cpu: %dm}}}]}\n",
                                i, i + 1);
    ck_assert_int_eq(ks_manifest_load_string(&m, "big.yaml", buf, off, in,
                                             NULL, &err),
                     0);
    ck_assert_uint_eq(m.n_pods, 1000);
    for (i = 0; i < 1000; i++)
        ck_assert_int_eq(m.pods[i]->requests.milli_cpu, i + 1);
    ks_manifest_free(&m);
    free(buf);
}
END_TEST

START_TEST(test_malformed_yaml)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: Pod\n"
                  "metadata: {name: x}\n"
                  "---\n"
                  "kind: Pod\n"
                  "metadata: {name: [unclosed\n"
                  "spec: {}\n",
                  &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    ck_assert_msg(strncmp(err.msg, "c.yaml:6:", 9) == 0, "got: %s", err.msg);
    ck_assert_msg(strstr(err.msg, "YAML error: ") != NULL, "got: %s", err.msg);
    /* objects read before the error stay in the manifest for the caller */
    ck_assert_uint_eq(m.n_pods, 1);
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_wrong_type_in_list)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: List\n"
                  "items:\n"
                  "- kind: Node\n"
                  "  metadata: {name: n1}\n"
                  "  spec:\n"
                  "    taints: {key: a}\n",
                  &err);
    ck_assert_int_eq(rc, KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "c.yaml:6:13: node n1: spec.taints: expected a "
                              "sequence, found a mapping");
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_item_without_kind)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: List\n"
                  "items:\n"
                  "- kind: Node\n"
                  "  metadata: {name: n1}\n"
                  "- metadata: {name: n2}\n",
                  &err);
    ck_assert_int_eq(rc, KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "c.yaml:5:3: items[1]: object has no kind");
    ks_manifest_free(&m);
    rc = load(&m, "metadata: {name: x}\n", &err);
    ck_assert_int_eq(rc, KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "c.yaml:1:1: object has no kind");
    ks_manifest_free(&m);
    rc = load(&m, "kind: List\nitems: {a: b}\n", &err);
    ck_assert_int_eq(rc, KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "c.yaml:2:8: List: items: expected a sequence");
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_kubectl_list_order)
{
    /* kubectl prints `items` before `kind: List`; anchors work inside an
     * item; an empty List is fine */
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "apiVersion: v1\n"
                  "items:\n"
                  "- apiVersion: v1\n"
                  "  kind: Pod\n"
                  "  metadata:\n"
                  "    name: a\n"
                  "    labels: &l {app: web}\n"
                  "    annotations: *l\n"
                  "    managedFields:\n"
                  "    - {manager: kubectl, fieldsV1: {f:spec: {}}}\n"
                  "  spec:\n"
                  "    nodeName: n1\n"
                  "- apiVersion: v1\n"
                  "  kind: Node\n"
                  "  metadata: {name: n1}\n"
                  "kind: List\n"
                  "metadata:\n"
                  "  resourceVersion: \"\"\n"
                  "---\n"
                  "apiVersion: v1\n"
                  "items: []\n"
                  "kind: List\n",
                  &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_pods, 1);
    ck_assert_uint_eq(m.n_nodes, 1);
    ck_assert_uint_eq(m.pods[0]->annotations.n, 1);
    ck_assert_ptr_eq(m.pods[0]->annotations.items[0].value,
                     ks_intern_str(in, "web"));
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_alias_across_items)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: List\n"
                  "items:\n"
                  "- kind: Node\n"
                  "  metadata: {name: n1, labels: &l {a: b}}\n"
                  "- kind: Node\n"
                  "  metadata: {name: n2, labels: *l}\n",
                  &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    ck_assert_str_eq(err.msg, "c.yaml:6:32: YAML error: alias *l refers to an "
                              "anchor outside this object");
    ck_assert_uint_eq(m.n_nodes, 1);
    ks_manifest_free(&m);
}
END_TEST


/* Append a pod whose node affinity names k terms of k expressions of k
 * values, all through aliases: k^3 values once expanded. */
static size_t add_bomb_pod(char *buf, size_t cap, size_t len, const char *name,
                           int k, int item)
{
    const char *ind = item ? "  " : "";
    int i;
#define ADD(...) (len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__))
    ADD("%skind: Pod\n", item ? "- " : "");
    ADD("%smetadata:\n", ind);
    ADD("%s  name: %s\n", ind, name);
    ADD("%s  x-anchors:\n", ind);
    ADD("%s    v: &v x\n", ind);
    ADD("%s    e: &e {key: k, operator: In, values: [", ind);
    for (i = 0; i < k; i++)
        ADD("%s*v", i ? ", " : "");
    ADD("]}\n%s    t: &t {matchExpressions: [", ind);
    for (i = 0; i < k; i++)
        ADD("%s*e", i ? ", " : "");
    ADD("]}\n%sspec:\n", ind);
    ADD("%s  affinity:\n", ind);
    ADD("%s    nodeAffinity:\n", ind);
    ADD("%s      requiredDuringSchedulingIgnoredDuringExecution:\n", ind);
    ADD("%s        nodeSelectorTerms: [", ind);
    for (i = 0; i < k; i++)
        ADD("%s*t", i ? ", " : "");
    ADD("]\n");
#undef ADD
    return len;
}

/* A 5 KiB pod standing for 64 million values (it took seconds and half a
 * gigabyte to read) is refused at once, naming the alias. */
START_TEST(test_alias_bomb)
{
    size_t cap = 16 * 1024, len;
    char *yaml = malloc(cap);
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc;
    len = add_bomb_pod(yaml, cap, 0, "bomb", 400, 0);
    ck_assert_uint_lt(len, 5200);
    rc = load(&m, yaml, &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    /* a term is 162,803 nodes once expanded, and the anchored one counts
     * too: the sixth alias of the terms list (column 29 + 4 x 5) passes a
     * million */
    ck_assert_str_eq(err.msg,
                     "c.yaml:12:49: YAML error: alias *t: expanding the "
                     "aliases would give more than 1000000 nodes (the limit "
                     "is max(1000000, 10 x the 33 nodes written)); refusing "
                     "a possible alias bomb");
    ck_assert_uint_eq(m.n_pods, 0);
    ks_manifest_free(&m);
    /* the same shape with 60 aliases a level (216,000 values) reads */
    len = add_bomb_pod(yaml, cap, 0, "big", 60, 0);
    ck_assert_msg(load(&m, yaml, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_pods, 1);
    ks_manifest_free(&m);
    free(yaml);
}
END_TEST

/* The budget covers the whole stream: List items and documents, each
 * harmless alone, cannot add up to a bomb. */
START_TEST(test_alias_bomb_spread)
{
    size_t cap = 64 * 1024, len = 0;
    char *yaml = malloc(cap);
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int i, rc;
    len += (size_t)snprintf(yaml + len, cap - len, "kind: List\nitems:\n");
    for (i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        len = add_bomb_pod(yaml, cap, len, name, 60, 1);
    }
    rc = load(&m, yaml, &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    /* about 241,000 nodes a pod once expanded: the fifth passes a
     * million */
    ck_assert_uint_eq(m.n_pods, 4);
    ck_assert_msg(strstr(err.msg, ": YAML error: alias *t: expanding the "
                                  "aliases would give more than 1000000 "
                                  "nodes") != NULL,
                  "got: %s", err.msg);
    ks_manifest_free(&m);

    len = 0;
    for (i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        len += (size_t)snprintf(yaml + len, cap - len, "---\n");
        len = add_bomb_pod(yaml, cap, len, name, 60, 0);
    }
    rc = load(&m, yaml, &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    ck_assert_uint_eq(m.n_pods, 4);
    /* 13 lines a document: the fifth pod's terms are on line 65, and its
     * fourth alias there crosses the limit */
    ck_assert_msg(strncmp(err.msg, "c.yaml:65:41: ", 14) == 0 &&
                      strstr(err.msg, "alias *t") != NULL,
                  "got: %s", err.msg);
    ks_manifest_free(&m);
    free(yaml);
}
END_TEST

START_TEST(test_recursive_alias)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m, "kind: Pod\nmetadata: &m {name: x, self: *m}\n", &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    ck_assert_str_eq(err.msg, "c.yaml:2:30: YAML error: alias *m is inside "
                              "the node its anchor names (a recursive "
                              "structure)");
    ks_manifest_free(&m);
}
END_TEST

/* A few ordinary anchors and aliases, within an object and reused across
 * documents, read as if written out. */
START_TEST(test_legitimate_aliases)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: Pod\n"
                  "metadata:\n"
                  "  name: a\n"
                  "  labels: &l {app: web, tier: fe}\n"
                  "  annotations: *l\n"
                  "spec:\n"
                  "  nodeSelector: *l\n"
                  "  containers:\n"
                  "  - name: c1\n"
                  "    resources: &r {requests: {cpu: 100m, memory: 64Mi}}\n"
                  "  - name: c2\n"
                  "    resources: *r\n"
                  "---\n"
                  "kind: Pod\n"
                  "metadata: {name: b, labels: &l {app: db}}\n"
                  "spec: {nodeSelector: *l}\n",
                  &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_pods, 2);
    ck_assert_uint_eq(m.pods[0]->labels.n, 2);
    ck_assert_uint_eq(m.pods[0]->annotations.n, 2);
    ck_assert_uint_eq(m.pods[0]->node_selector.n, 2);
    ck_assert_int_eq(m.pods[0]->requests.milli_cpu, 200);
    ck_assert_int_eq(m.pods[0]->requests.memory, 128LL * 1024 * 1024);
    ck_assert_uint_eq(m.pods[1]->node_selector.n, 1);
    ck_assert_ptr_eq(m.pods[1]->node_selector.items[0].value,
                     ks_intern_str(in, "db"));
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_items_key_on_other_kinds)
{
    /* a document with `items` whose kind is not a List is read as that
     * kind; its items are still read as objects */
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: Widget\n"
                  "metadata: {name: w}\n"
                  "items:\n"
                  "- kind: Namespace\n"
                  "  metadata: {name: x}\n",
                  &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_namespaces, 1);
    ck_assert_uint_eq(m.n_skipped, 1);
    ck_assert_str_eq(notices[0], "c.yaml:1: skipping Widget w (ksched reads "
                                 "Node, Pod, Service, Namespace, ReplicaSet, "
                                 "StatefulSet, ReplicationController)");
    ks_manifest_free(&m);
}
END_TEST

/* ReplicaSets, StatefulSets and ReplicationControllers are read as
 * selector holders; skipped kinds are reported once per kind. */
START_TEST(test_workloads_and_folded_notices)
{
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    int rc = load(&m,
                  "kind: List\n"                                    /* 1 */
                  "items:\n"                                        /* 2 */
                  "- kind: ReplicaSet\n"                            /* 3 */
                  "  metadata: {name: web-1, namespace: shop}\n"
                  "  spec: {selector: {matchLabels: {app: web}}}\n"
                  "- kind: StatefulSet\n"                           /* 6 */
                  "  metadata: {name: db, namespace: shop}\n"
                  "  spec: {selector: {matchExpressions: [{key: app, "
                  "operator: In, values: [db]}]}}\n"
                  "- kind: ReplicationController\n"                 /* 9 */
                  "  metadata: {name: old, namespace: shop}\n"
                  "  spec: {selector: {app: old}}\n"
                  "- kind: ConfigMap\n"                             /* 12 */
                  "  metadata: {name: a, namespace: shop}\n"
                  "- kind: Secret\n"                                /* 14 */
                  "  metadata: {name: s, namespace: shop}\n"
                  "- kind: ConfigMap\n"                             /* 16 */
                  "  metadata: {name: b, namespace: shop}\n"
                  "- kind: ConfigMap\n"
                  "  metadata: {name: c, namespace: shop}\n",
                  &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n_services, 3);
    ck_assert_str_eq(m.services[0]->name, "ReplicaSet/web-1");
    ck_assert_str_eq(m.services[1]->name, "StatefulSet/db");
    ck_assert_str_eq(m.services[2]->name, "ReplicationController/old");
    ck_assert_ptr_nonnull(m.services[0]->selector);
    ck_assert_uint_eq(m.services[1]->selector->n, 1);
    ck_assert_uint_eq(m.n_skipped, 4);
    ck_assert_int_eq(n_notices, 2);
    ck_assert_str_eq(notices[0], "c.yaml: skipping 3 ConfigMap objects, the "
                                 "first shop/a at line 12 (ksched reads "
                                 "Node, Pod, Service, Namespace, ReplicaSet, "
                                 "StatefulSet, ReplicationController)");
    ck_assert_str_eq(notices[1], "c.yaml:14: skipping Secret shop/s (ksched "
                                 "reads Node, Pod, Service, Namespace, "
                                 "ReplicaSet, StatefulSet, "
                                 "ReplicationController)");
    ks_manifest_free(&m);
}
END_TEST

START_TEST(test_load_file)
{
    char path[] = "/tmp/ksched-manifest-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    ks_manifest_t m = {0};
    ks_error_t err = {0};
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(stream, f);
    fclose(f);
    ck_assert_msg(ks_manifest_load_file(&m, path, in, NULL, &err) == 0, "%s",
                  err.msg);
    ck_assert_uint_eq(m.n_nodes, 2);
    ck_assert_uint_eq(m.n_pods, 2);
    ck_assert_uint_eq(m.n_skipped, 2);
    ks_manifest_free(&m);
    unlink(path);
    ck_assert_int_eq(ks_manifest_load_file(&m, path, in, NULL, &err), KS_EIO);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0 &&
                      strstr(err.msg, "cannot open") != NULL,
                  "got: %s", err.msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster-manifest");
    TCase *tc = tcase_create("manifest");
    SRunner *sr;
    int failed;
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_stream_and_list);
    tcase_add_test(tc, test_taken_kinds);
    tcase_add_test(tc, test_many_objects);
    tcase_add_test(tc, test_malformed_yaml);
    tcase_add_test(tc, test_wrong_type_in_list);
    tcase_add_test(tc, test_item_without_kind);
    tcase_add_test(tc, test_kubectl_list_order);
    tcase_add_test(tc, test_alias_across_items);
    tcase_add_test(tc, test_items_key_on_other_kinds);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_workloads_and_folded_notices);
    tcase_add_test(tc, test_alias_bomb);
    tcase_add_test(tc, test_alias_bomb_spread);
    tcase_add_test(tc, test_recursive_alias);
    tcase_add_test(tc, test_legitimate_aliases);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
