/* The cache, NodeInfo bookkeeping, clones and snapshots. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cache.h"
#include "test_util.h"

#define MI (1024LL * 1024)
#define GI (1024LL * 1024 * 1024)

static ks_intern_t *in;
static ks_cache_t *cache;

static void setup(void)
{
    in = ks_intern_new();
    cache = ks_cache_new(in);
}

static void teardown(void)
{
    ks_cache_free(cache);
    ks_intern_free(in);
}

static const char *I(const char *s) { return ks_intern_str(in, s); }

static ks_node_t *mknode(const char *name, const char *images)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "metadata: {name: '%s'}\n"
             "status:\n"
             "  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
             "  images: [%s]\n",
             name, images ? images : "");
    return node_ok(buf, in);
}

static void add_node(const char *name, const char *images)
{
    ks_error_t err = {0};
    ck_assert_msg(ks_cache_add_node(cache, mknode(name, images), &err) == 0,
                  "%s", err.msg);
}

/* A pod with one container requesting cpu/memory (NULL: unset). */
static ks_pod_t *mkpod(const char *name, const char *node, const char *cpu,
                       const char *mem, const char *extra_spec)
{
    char buf[2048], res[256] = "";
    if (cpu || mem)
        snprintf(res, sizeof(res), "    resources: {requests: {%s%s%s%s%s}}\n",
                 cpu ? "cpu: " : "", cpu ? cpu : "", cpu && mem ? ", " : "",
                 mem ? "memory: " : "", mem ? mem : "");
    snprintf(buf, sizeof(buf),
             "metadata: {name: '%s', labels: {app: '%s'}}\n"
             "spec:\n"
             "  nodeName: %s\n"
             "%s"
             "  containers:\n"
             "  - name: c\n"
             "%s",
             name, name, node ? node : "\"\"", extra_spec ? extra_spec : "",
             res);
    return pod_ok(buf, in);
}

static void add_pod(ks_pod_t *p)
{
    ks_error_t err = {0};
    ck_assert_msg(ks_cache_add_pod(cache, p, &err) == 0, "%s", err.msg);
}

static const char *aff_spec =
    "  affinity:\n"
    "    podAffinity:\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 1\n"
    "        podAffinityTerm: {topologyKey: zone}\n";
static const char *anti_spec =
    "  affinity:\n"
    "    podAntiAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "      - topologyKey: kubernetes.io/hostname\n"
    "        labelSelector: {matchLabels: {app: x}}\n";
static const char *port_spec_fmt =
    "    ports: [{containerPort: 80, hostPort: %d}]\n";

static int has_pod(const ks_pod_t *const *list, uint32_t n, const char *uid)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (strcmp(list[i]->uid, uid) == 0)
            return 1;
    return 0;
}

START_TEST(test_node_info_sums)
{
    const ks_node_info_t *ni;
    ks_pod_t *p1, *p2, *p3, *p4;
    char ports[128];
    ks_error_t err = {0};
    add_node("n1", NULL);
    add_node("n2", NULL);
    ck_assert_uint_eq(ks_cache_num_nodes(cache), 2);

    p1 = mkpod("p1", "n1", "500m", "1Gi", NULL);
    p2 = mkpod("p2", "n1", NULL, NULL, aff_spec); /* non-zero defaults */
    snprintf(ports, sizeof(ports), port_spec_fmt, 8080);
    {
        /* p3: host port + required anti-affinity, container with ports */
        char buf[2048];
        snprintf(buf, sizeof(buf),
                 "metadata: {name: p3}\n"
                 "spec:\n"
                 "  nodeName: n1\n%s"
                 "  containers:\n"
                 "  - name: c\n"
                 "    resources: {requests: {cpu: 250m, example.com/dev: "
                 "\"1\"}}\n%s",
                 anti_spec, ports);
        p3 = pod_ok(buf, in);
    }
    p4 = mkpod("p4", "n2", "1", "2Gi", NULL);
    add_pod(p1);
    add_pod(p2);
    add_pod(p3);
    add_pod(p4);
    ck_assert_uint_eq(ks_cache_num_pods(cache), 4);

    ni = ks_cache_node_info(cache, "n1");
    ck_assert_ptr_nonnull(ni);
    ck_assert_ptr_nonnull(ni->node);
    ck_assert_str_eq(ni->node->name, "n1");
    ck_assert_uint_eq(ni->n_pods, 3);
    /* requested: 500 + 0 + 250 = 750m, memory 1Gi */
    ck_assert_int_eq(ni->requested.milli_cpu, 750);
    ck_assert_int_eq(ni->requested.memory, GI);
    ck_assert_int_eq(ks_resources_scalar(&ni->requested, I("example.com/dev")),
                     1);
    /* the pod count is not a requested resource (upstream) */
    ck_assert_int_eq(ni->requested.allowed_pods, 0);
    /* non-zero: 500 + 100 + 250 = 850m; 1Gi + 200Mi + 200Mi */
    ck_assert_int_eq(ni->non_zero_requested.milli_cpu, 850);
    ck_assert_int_eq(ni->non_zero_requested.memory, GI + 400 * MI);
    /* pods with affinity: p2 (podAffinity) and p3 (podAntiAffinity) */
    ck_assert_uint_eq(ni->n_pods_with_affinity, 2);
    ck_assert(has_pod(ni->pods_with_affinity, 2, "default/p2"));
    ck_assert(has_pod(ni->pods_with_affinity, 2, "default/p3"));
    ck_assert_uint_eq(ni->n_pods_with_required_anti_affinity, 1);
    ck_assert_str_eq(ni->pods_with_required_anti_affinity[0]->uid,
                     "default/p3");
    ck_assert_uint_eq(ni->n_used_ports, 1);
    ck_assert_int_eq(ni->used_ports[0]->host_port, 8080);

    ni = ks_cache_node_info(cache, "n2");
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_int_eq(ni->requested.milli_cpu, 1000);
    ck_assert_int_eq(ni->non_zero_requested.memory, 2 * GI);

    /* remove p2 and p3: sums and lists follow */
    ck_assert_int_eq(ks_cache_remove_pod(cache, "default/p3", &err), 0);
    ni = ks_cache_node_info(cache, "n1");
    ck_assert_uint_eq(ni->n_pods, 2);
    ck_assert_int_eq(ni->requested.milli_cpu, 500);
    ck_assert_int_eq(ks_resources_scalar(&ni->requested, I("example.com/dev")),
                     0);
    ck_assert_uint_eq(ni->n_used_ports, 0);
    ck_assert_uint_eq(ni->n_pods_with_required_anti_affinity, 0);
    ck_assert_uint_eq(ni->n_pods_with_affinity, 1);
    ck_assert_str_eq(ni->pods_with_affinity[0]->uid, "default/p2");
    ck_assert_int_eq(ks_cache_remove_pod(cache, "default/p2", &err), 0);
    ni = ks_cache_node_info(cache, "n1");
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_str_eq(ni->pods[0]->uid, "default/p1");
    ck_assert_uint_eq(ni->n_pods_with_affinity, 0);
    ck_assert_int_eq(ni->non_zero_requested.milli_cpu, 500);
    ck_assert_int_eq(ni->non_zero_requested.memory, GI);

    ck_assert_ptr_eq(ks_cache_get_pod(cache, "default/p1"), p1);
    ck_assert_ptr_null(ks_cache_get_pod(cache, "default/p2"));
    ck_assert_int_eq(ks_cache_remove_pod(cache, "default/p2", &err),
                     KS_ENOTFOUND);
}
END_TEST

START_TEST(test_pod_errors)
{
    ks_error_t err = {0};
    ks_pod_t *p = mkpod("p", "n1", "1", NULL, NULL);
    ks_pod_t *dup = mkpod("p", "n1", "1", NULL, NULL);
    ks_pod_t *none = mkpod("q", NULL, "1", NULL, NULL);
    ks_node_t *n1b = mknode("n1", NULL), *zz = mknode("zz", NULL);
    add_node("n1", NULL);
    add_pod(p);
    ck_assert_int_eq(ks_cache_add_pod(cache, dup, &err), KS_EEXIST);
    ck_assert_int_eq(ks_cache_add_pod(cache, none, &err), KS_EINVAL);
    ck_assert_int_eq(ks_cache_add_node(cache, n1b, &err), KS_EEXIST);
    ck_assert_str_eq(err.msg, "node n1 already exists");
    ck_assert_int_eq(ks_cache_remove_node(cache, "zz", &err), KS_ENOTFOUND);
    ck_assert_int_eq(ks_cache_update_node(cache, zz, &err), KS_ENOTFOUND);
    /* ownership stays with the caller on error (valgrind checks this) */
    ks_pod_free(dup);
    ks_pod_free(none);
    ks_node_free(n1b);
    ks_node_free(zz);
}
END_TEST

START_TEST(test_assume_forget_finish)
{
    ks_error_t err = {0};
    ks_pod_t *p = mkpod("a", NULL, "300m", "100Mi", NULL);
    ks_pod_t *back;
    const ks_node_info_t *ni;
    uint64_t g0;
    add_node("n1", NULL);
    g0 = ks_cache_node_info(cache, "n1")->generation;
    ck_assert_int_eq(ks_cache_assume_pod(cache, p, I("n1"), &err), 0);
    ck_assert_ptr_eq(p->node_name, I("n1"));
    ck_assert_int_eq(ks_cache_is_assumed(cache, "default/a"), 1);
    ni = ks_cache_node_info(cache, "n1");
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_int_eq(ni->requested.milli_cpu, 300);
    ck_assert_uint_gt(ni->generation, g0);
    /* assuming the same uid twice fails */
    ck_assert_int_eq(ks_cache_assume_pod(cache, p, I("n1"), &err), KS_EEXIST);

    back = ks_cache_forget_pod(cache, "default/a");
    ck_assert_ptr_eq(back, p);
    ck_assert_ptr_eq(p->node_name, ks_intern_empty(in));
    ck_assert_int_eq(ks_cache_is_assumed(cache, "default/a"), 0);
    ck_assert_ptr_null(ks_cache_get_pod(cache, "default/a"));
    ni = ks_cache_node_info(cache, "n1");
    ck_assert_uint_eq(ni->n_pods, 0);
    ck_assert_int_eq(ni->requested.milli_cpu, 0);
    ck_assert_int_eq(ni->non_zero_requested.memory, 0);
    ck_assert_ptr_null(ks_cache_forget_pod(cache, "default/a"));

    /* assume again, finish binding: it stays like an added pod */
    ck_assert_int_eq(ks_cache_assume_pod(cache, p, I("n1"), &err), 0);
    ck_assert_int_eq(ks_cache_finish_binding(cache, "default/a"), 0);
    ck_assert_int_eq(ks_cache_is_assumed(cache, "default/a"), 0);
    ck_assert_int_eq(ks_cache_finish_binding(cache, "default/a"), KS_EINVAL);
    ck_assert_int_eq(ks_cache_finish_binding(cache, "default/zz"),
                     KS_ENOTFOUND);
    ck_assert_ptr_null(ks_cache_forget_pod(cache, "default/a"));
    ck_assert_uint_eq(ks_cache_node_info(cache, "n1")->n_pods, 1);
    ck_assert_int_eq(ks_cache_remove_pod(cache, "default/a", &err), 0);
    ck_assert_uint_eq(ks_cache_node_info(cache, "n1")->n_pods, 0);
}
END_TEST

START_TEST(test_add_confirms_assumed)
{
    ks_error_t err = {0};
    ks_pod_t *assumed = mkpod("a", NULL, "300m", NULL, NULL);
    ks_pod_t *added = mkpod("a", "n2", "300m", NULL, NULL);
    add_node("n1", NULL);
    add_node("n2", NULL);
    ck_assert_int_eq(ks_cache_assume_pod(cache, assumed, I("n1"), &err), 0);
    /* the informer says it landed on n2: the added object replaces it */
    ck_assert_int_eq(ks_cache_add_pod(cache, added, &err), 0);
    ck_assert_int_eq(ks_cache_is_assumed(cache, "default/a"), 0);
    ck_assert_ptr_eq(ks_cache_get_pod(cache, "default/a"), added);
    ck_assert_uint_eq(ks_cache_node_info(cache, "n1")->n_pods, 0);
    ck_assert_uint_eq(ks_cache_node_info(cache, "n2")->n_pods, 1);
    ck_assert_int_eq(ks_cache_node_info(cache, "n2")->requested.milli_cpu, 300);
    ck_assert_uint_eq(ks_cache_num_pods(cache), 1);
}
END_TEST

START_TEST(test_placeholder_node)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new();
    const ks_node_info_t *ni;
    add_node("n1", NULL);
    add_pod(mkpod("p", "ghost", "1", NULL, NULL));
    ni = ks_cache_node_info(cache, "ghost");
    ck_assert_ptr_nonnull(ni);
    ck_assert_ptr_null(ni->node);
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_uint_eq(ks_cache_num_nodes(cache), 1);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 1);
    ck_assert_ptr_null(ks_snapshot_get(s, "ghost"));
    /* the node shows up: its NodeInfo already carries the pod */
    add_node("ghost", NULL);
    ck_assert_uint_eq(ks_cache_num_nodes(cache), 2);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 2);
    ni = ks_snapshot_get(s, "ghost");
    ck_assert_ptr_nonnull(ni);
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_int_eq(ni->requested.milli_cpu, 1000);
    /* removing the node keeps a placeholder while the pod is there */
    ck_assert_int_eq(ks_cache_remove_node(cache, "ghost", &err), 0);
    ck_assert_ptr_nonnull(ks_cache_node_info(cache, "ghost"));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 1);
    ck_assert_ptr_null(ks_snapshot_get(s, "ghost"));
    ck_assert_int_eq(ks_cache_remove_pod(cache, "default/p", &err), 0);
    ck_assert_ptr_null(ks_cache_node_info(cache, "ghost"));
    ks_snapshot_free(s);
}
END_TEST

START_TEST(test_image_counts)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new();
    add_node("n1", "{names: [\"nginx:1\", \"docker.io/nginx:1\"], sizeBytes: 10}");
    add_node("n2", "{names: [\"nginx:1\"], sizeBytes: 10}, "
                   "{names: [\"redis:7\"], sizeBytes: 20}");
    add_node("n3", "{names: [\"redis:7\"], sizeBytes: 20}");
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "nginx:1"), 2);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "docker.io/nginx:1"), 1);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "redis:7"), 2);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "busybox"), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_image_num_nodes(s, "nginx:1"), 2);

    ck_assert_int_eq(ks_cache_remove_node(cache, "n2", &err), 0);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "nginx:1"), 1);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "redis:7"), 1);
    /* the snapshot keeps its counts until updated */
    ck_assert_uint_eq(ks_snapshot_image_num_nodes(s, "nginx:1"), 2);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_image_num_nodes(s, "nginx:1"), 1);
    ck_assert_uint_eq(ks_snapshot_image_num_nodes(s, "redis:7"), 1);

    /* an update replaces the node's images */
    ck_assert_int_eq(ks_cache_update_node(cache,
                                          mknode("n3", "{names: [\"nginx:1\"], "
                                                       "sizeBytes: 10}"),
                                          &err),
                     0);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "redis:7"), 0);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "nginx:1"), 2);
    ck_assert_int_eq(ks_cache_remove_node(cache, "n1", &err), 0);
    ck_assert_int_eq(ks_cache_remove_node(cache, "n3", &err), 0);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "nginx:1"), 0);
    ck_assert_uint_eq(ks_cache_image_num_nodes(cache, "docker.io/nginx:1"), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 0);
    ck_assert_uint_eq(ks_snapshot_image_num_nodes(s, "nginx:1"), 0);
    ks_snapshot_free(s);
}
END_TEST

START_TEST(test_snapshot_incremental)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new();
    const ks_node_info_t *a, *b, *c, *a2, *b2, *c2;
    uint64_t ga, gb, gc;
    add_node("c", NULL);
    add_node("a", NULL);
    add_node("b", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 3);
    a = ks_snapshot_node_at(s, 0);
    b = ks_snapshot_node_at(s, 1);
    c = ks_snapshot_node_at(s, 2);
    ck_assert_str_eq(a->node->name, "a");
    ck_assert_str_eq(b->node->name, "b");
    ck_assert_str_eq(c->node->name, "c");
    ck_assert_ptr_null(ks_snapshot_node_at(s, 3));
    ck_assert_ptr_eq(ks_snapshot_get(s, "b"), b);
    ck_assert_ptr_null(ks_snapshot_get(s, "zz"));
    /* the snapshot holds copies, not the cache's NodeInfos */
    ck_assert_ptr_ne(b, ks_cache_node_info(cache, "b"));
    ga = a->generation;
    gb = b->generation;
    gc = c->generation;
    ck_assert_uint_eq(gb, ks_cache_node_info(cache, "b")->generation);

    /* a pod lands on b: only b changes */
    add_pod(mkpod("p", "b", "2", "1Gi", NULL));
    ck_assert_uint_eq(b->n_pods, 0); /* not before the update */
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    a2 = ks_snapshot_node_at(s, 0);
    b2 = ks_snapshot_node_at(s, 1);
    c2 = ks_snapshot_node_at(s, 2);
    ck_assert_ptr_eq(a2, a);
    ck_assert_ptr_eq(c2, c);
    ck_assert_uint_eq(a2->generation, ga);
    ck_assert_uint_eq(c2->generation, gc);
    ck_assert_ptr_eq(ks_snapshot_get(s, "b"), b2);
    ck_assert_uint_gt(b2->generation, gb);
    ck_assert_uint_eq(b2->n_pods, 1);
    ck_assert_str_eq(b2->pods[0]->uid, "default/p");
    ck_assert_int_eq(b2->requested.milli_cpu, 2000);
    ck_assert_int_eq(b2->requested.memory, GI);
    ck_assert_uint_eq(a2->n_pods, 0);

    /* nothing changed: an update keeps everything */
    gb = b2->generation;
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_node_at(s, 1)->generation, gb);

    /* nodes join and leave: name order is kept */
    add_node("aa", NULL);
    add_node("0", NULL);
    ck_assert_int_eq(ks_cache_remove_node(cache, "c", &err), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 4);
    ck_assert_str_eq(ks_snapshot_node_at(s, 0)->node->name, "0");
    ck_assert_str_eq(ks_snapshot_node_at(s, 1)->node->name, "a");
    ck_assert_str_eq(ks_snapshot_node_at(s, 2)->node->name, "aa");
    ck_assert_str_eq(ks_snapshot_node_at(s, 3)->node->name, "b");
    ck_assert_ptr_eq(ks_snapshot_node_at(s, 1), a);
    ck_assert_ptr_null(ks_snapshot_get(s, "c"));

    /* a node removed and re-added between updates */
    ck_assert_int_eq(ks_cache_remove_node(cache, "a", &err), 0);
    add_node("a", "{names: [img], sizeBytes: 1}");
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 4);
    ck_assert_uint_eq(ks_snapshot_get(s, "a")->node->n_images, 1);

    /* an updated node object is visible after the update */
    ck_assert_int_eq(ks_cache_update_node(cache, mknode("b", NULL), &err), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_get(s, "b")->n_pods, 1);
    ck_assert_ptr_eq(ks_snapshot_get(s, "b")->node,
                     ks_cache_node_info(cache, "b")->node);
    ks_snapshot_free(s);
}
END_TEST

/* Every entry's snapshot_pos is 1 + its position (ABI 1.6). */
static void check_positions(const ks_snapshot_t *s)
{
    uint32_t i, n = ks_snapshot_num_nodes(s);
    const ks_node_info_t *const *all = ks_snapshot_nodes(s, &i);
    ck_assert_uint_eq(i, n);
    for (i = 0; i < n; i++) {
        ck_assert_ptr_eq(all[i], ks_snapshot_node_at(s, i));
        ck_assert_msg(all[i]->snapshot_pos == i + 1,
                      "%s at %u has snapshot_pos %u", all[i]->node->name, i,
                      all[i]->snapshot_pos);
    }
}

/* snapshot_pos follows the entries through refreshes in place, joins and
 * leaves; the cache's own NodeInfos and clones say 0. */
START_TEST(test_snapshot_positions)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new();
    ks_node_info_t *cl;
    add_node("c", NULL);
    add_node("a", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_positions(s);
    ck_assert_uint_eq(ks_cache_node_info(cache, "a")->snapshot_pos, 0);
    /* refreshed in place (a pod lands on c) */
    add_pod(mkpod("p", "c", "1", "1Gi", NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_positions(s);
    ck_assert_uint_eq(ks_snapshot_get(s, "c")->snapshot_pos, 2);
    /* two nodes join and one leaves: 0, b, c (c moves from 2 to 3) */
    add_node("0", NULL);
    add_node("b", NULL);
    ck_assert_int_eq(ks_cache_remove_node(cache, "a", &err), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), 3);
    check_positions(s);
    ck_assert_uint_eq(ks_snapshot_get(s, "c")->snapshot_pos, 3);
    /* an entry refreshed in place after the renumbering */
    add_pod(mkpod("q", "b", "1", "1Gi", NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_positions(s);
    /* a clone of an entry is no entry */
    cl = ks_node_info_clone(ks_snapshot_get(s, "b"));
    ck_assert_ptr_nonnull(cl);
    ck_assert_uint_eq(cl->snapshot_pos, 0);
    ks_node_info_free(cl);
    ks_snapshot_free(s);
}
END_TEST

/* Every column entry (ABI 1.7) holds what the NodeInfo at that position
 * holds, and the positions array is 0, 1, ... */
static void check_columns(const ks_snapshot_t *s)
{
    uint32_t i, n;
    const ks_node_info_t *const *all = ks_snapshot_nodes(s, &n);
    const ks_node_columns_t *c = ks_snapshot_columns(s);
    const uint32_t *iota = ks_snapshot_positions(s);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(iota);
    ck_assert_uint_eq(c->n, n);
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = all[i];
        const ks_node_t *nd = ni->node;
        uint8_t f = (uint8_t)((nd->unschedulable ? KS_COL_UNSCHEDULABLE : 0) |
                              (nd->n_taints ? KS_COL_TAINTED : 0));
        ck_assert_uint_eq(iota[i], i);
        ck_assert_msg(c->flags[i] == f, "%s: flags %u, want %u", nd->name,
                      c->flags[i], f);
        ck_assert_uint_eq(c->n_pods[i], ni->n_pods);
        ck_assert_int_eq(c->alloc_milli_cpu[i], nd->allocatable.milli_cpu);
        ck_assert_int_eq(c->alloc_memory[i], nd->allocatable.memory);
        ck_assert_int_eq(c->alloc_ephemeral[i],
                         nd->allocatable.ephemeral_storage);
        ck_assert_int_eq(c->alloc_pods[i], nd->allocatable.allowed_pods);
        ck_assert_int_eq(c->req_milli_cpu[i], ni->requested.milli_cpu);
        ck_assert_int_eq(c->req_memory[i], ni->requested.memory);
        ck_assert_int_eq(c->req_ephemeral[i],
                         ni->requested.ephemeral_storage);
        ck_assert_int_eq(c->nz_milli_cpu[i], ni->non_zero_requested.milli_cpu);
        ck_assert_int_eq(c->nz_memory[i], ni->non_zero_requested.memory);
    }
}

/* The columns follow the NodeInfos through refreshes in place (a pod
 * lands, a node turns unschedulable and tainted), joins and leaves, and
 * growth past the lists' room. */
START_TEST(test_snapshot_columns)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new();
    const ks_node_columns_t *c;
    char name[16];
    uint32_t i, at;
    add_node("c", NULL);
    add_node("a", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    c = ks_snapshot_columns(s);
    ck_assert_int_eq(c->alloc_milli_cpu[0], 4000);
    ck_assert_int_eq(c->req_milli_cpu[1], 0);
    /* a pod lands on c: its entry (position 1) refreshed in place */
    add_pod(mkpod("p", "c", "1500m", "1Gi", NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    c = ks_snapshot_columns(s);
    ck_assert_int_eq(c->req_milli_cpu[1], 1500);
    ck_assert_int_eq(c->req_memory[1], INT64_C(1) << 30);
    ck_assert_uint_eq(c->n_pods[1], 1);
    ck_assert_int_eq(c->req_milli_cpu[0], 0);
    /* a turns unschedulable and tainted, in place */
    ck_assert_int_eq(
        ks_cache_update_node(
            cache,
            node_ok("metadata: {name: a}\n"
                    "spec:\n"
                    "  unschedulable: true\n"
                    "  taints: [{key: k, effect: NoSchedule}]\n"
                    "status:\n"
                    "  allocatable: {cpu: \"2\", memory: 1Gi, "
                    "ephemeral-storage: 10Gi, pods: \"7\"}\n",
                    in),
            &err),
        0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    c = ks_snapshot_columns(s);
    ck_assert_uint_eq(c->flags[0], KS_COL_UNSCHEDULABLE | KS_COL_TAINTED);
    ck_assert_int_eq(c->alloc_pods[0], 7);
    ck_assert_int_eq(c->alloc_ephemeral[0], INT64_C(10) << 30);
    /* nodes join before, between and after, and a leaves: c moves */
    add_node("0", NULL);
    add_node("b", NULL);
    add_node("d", NULL);
    ck_assert_int_eq(ks_cache_remove_node(cache, "a", &err), 0);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    at = ks_snapshot_get(s, "c")->snapshot_pos - 1;
    ck_assert_uint_eq(at, 2);
    ck_assert_int_eq(ks_snapshot_columns(s)->req_milli_cpu[at], 1500);
    /* far more nodes than the lists had room for, then a refresh */
    for (i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "n%03u", i);
        add_node(name, NULL);
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    add_pod(mkpod("q", "n150", "250m", "100Mi", NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_columns(s);
    at = ks_snapshot_get(s, "n150")->snapshot_pos - 1;
    ck_assert_int_eq(ks_snapshot_columns(s)->nz_milli_cpu[at], 250);
    ks_snapshot_free(s);
}
END_TEST

/* Does idx[0..n) contain position pos? */
static int has_pos(const uint32_t *idx, uint32_t n, uint32_t pos)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (idx[i] == pos)
            return 1;
    return 0;
}

/* ks_snapshot_changed_since from older versions: every position refreshed
 * in place since then; an update that adds a node restarts the log; a
 * version of another snapshot is unknown. */
START_TEST(test_snapshot_changes_since_older_versions)
{
    ks_error_t err = {0};
    ks_snapshot_t *s = ks_snapshot_new(), *other = ks_snapshot_new();
    const uint32_t *idx;
    uint32_t n;
    uint64_t v0, v1, v2, v3, v_other;
    add_node("a", NULL);
    add_node("b", NULL);
    add_node("c", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    v0 = ks_snapshot_changed_since(s, 0, &idx, &n);
    ck_assert_ptr_null(idx); /* 0: never seen, walk every node */
    add_pod(mkpod("p1", "a", "1", NULL, NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    v1 = ks_snapshot_changed_since(s, v0, &idx, &n);
    ck_assert_ptr_nonnull(idx);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(idx[0], 0);
    add_pod(mkpod("p2", "c", "1", NULL, NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    add_pod(mkpod("p3", "c", "1", NULL, NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    v3 = ks_snapshot_changed_since(s, v1, &idx, &n);
    /* since v1: c twice (positions may repeat), not a, not b */
    ck_assert_ptr_nonnull(idx);
    ck_assert_uint_eq(n, 2);
    ck_assert(has_pos(idx, n, 2) && !has_pos(idx, n, 0) &&
              !has_pos(idx, n, 1));
    /* since v0: a and c */
    ck_assert_uint_eq(ks_snapshot_changed_since(s, v0, &idx, &n), v3);
    ck_assert_ptr_nonnull(idx);
    ck_assert(has_pos(idx, n, 0) && has_pos(idx, n, 2) &&
              !has_pos(idx, n, 1));
    /* since now: nothing */
    ks_snapshot_changed_since(s, v3, &idx, &n);
    ck_assert_ptr_nonnull(idx);
    ck_assert_uint_eq(n, 0);
    /* a version of another snapshot: unknown */
    ck_assert_int_eq(ks_cache_update_snapshot(cache, other, &err), 0);
    v_other = ks_snapshot_changed_since(other, 0, &idx, &n);
    ks_snapshot_changed_since(s, v_other, &idx, &n);
    ck_assert_ptr_null(idx);
    /* a node joins: positions shift, the older versions are forgotten */
    add_node("b0", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    v2 = ks_snapshot_changed_since(s, v1, &idx, &n);
    ck_assert_ptr_null(idx);
    ks_snapshot_changed_since(s, v3, &idx, &n);
    ck_assert_ptr_null(idx);
    add_pod(mkpod("p4", "b", "1", NULL, NULL));
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ks_snapshot_changed_since(s, v2, &idx, &n);
    ck_assert_ptr_nonnull(idx);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(idx[0], 1); /* a, b, b0, c */
    ks_snapshot_free(s);
    ks_snapshot_free(other);
}
END_TEST

START_TEST(test_two_snapshots)
{
    ks_error_t err = {0};
    ks_snapshot_t *s1 = ks_snapshot_new(), *s2 = ks_snapshot_new();
    add_node("a", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s1, &err), 0);
    add_node("b", NULL);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s2, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s1), 1);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s2), 2);
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s1, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s1), 2);
    ks_snapshot_free(s1);
    ks_snapshot_free(s2);
}
END_TEST

START_TEST(test_clone)
{
    ks_node_info_t *cl;
    const ks_node_info_t *orig;
    ks_pod_t *p1 = mkpod("p1", "n1", "1", "1Gi", aff_spec);
    ks_pod_t *p2 = mkpod("p2", "n1", "2", NULL, anti_spec);
    ks_pod_t *extra;
    char buf[256];
    uint64_t g;
    add_node("n1", NULL);
    add_pod(p1);
    add_pod(p2);
    orig = ks_cache_node_info(cache, "n1");
    g = orig->generation;
    cl = ks_node_info_clone(orig);
    ck_assert_ptr_nonnull(cl);
    ck_assert_uint_eq(cl->n_pods, 2);
    ck_assert_ptr_ne(cl->pods, orig->pods);
    ck_assert_int_eq(cl->requested.milli_cpu, 3000);
    ck_assert_ptr_eq(cl->node, orig->node);

    /* removing a victim from the clone leaves the original alone */
    ck_assert_int_eq(ks_node_info_remove_pod(cl, p2), 0);
    ck_assert_uint_eq(cl->n_pods, 1);
    ck_assert_int_eq(cl->requested.milli_cpu, 1000);
    ck_assert_int_eq(cl->non_zero_requested.memory, GI);
    ck_assert_uint_eq(cl->n_pods_with_required_anti_affinity, 0);
    ck_assert_uint_eq(cl->n_pods_with_affinity, 1);
    ck_assert_uint_gt(cl->generation, g);
    ck_assert_int_eq(ks_node_info_remove_pod(cl, p2), -1);
    ck_assert_uint_eq(orig->n_pods, 2);
    ck_assert_int_eq(orig->requested.milli_cpu, 3000);
    ck_assert_uint_eq(orig->n_pods_with_required_anti_affinity, 1);
    ck_assert_uint_eq(orig->generation, g);

    /* adding the preemptor, with a host port */
    snprintf(buf, sizeof(buf),
             "metadata: {name: new}\nspec:\n  containers:\n  - name: c\n"
             "    resources: {requests: {cpu: 500m}}\n" 
             "    ports: [{containerPort: 1, hostPort: 99}]\n");
    extra = pod_ok(buf, in);
    ks_node_info_add_pod(cl, extra);
    ck_assert_uint_eq(cl->n_pods, 2);
    ck_assert_int_eq(cl->requested.milli_cpu, 1500);
    ck_assert_uint_eq(cl->n_used_ports, 1);
    ck_assert_int_eq(cl->used_ports[0]->host_port, 99);
    ck_assert_uint_eq(orig->n_used_ports, 0);
    ck_assert_int_eq(ks_node_info_remove_pod(cl, extra), 0);
    ck_assert_uint_eq(cl->n_used_ports, 0);
    ks_node_info_free(cl);
    ks_pod_free(extra);
    ks_node_info_free(NULL);
}
END_TEST

/* Hand every service the manifest read to the cache (the manifest lets
 * go of them); sel, when not NULL, gets each one's selector in order. */
static void cache_take_services(ks_manifest_t *m,
                                const ks_label_selector_t **sel)
{
    size_t i;
    for (i = 0; i < m->n_services; i++) {
        if (sel != NULL)
            sel[i] = m->services[i]->selector;
        ck_assert_int_eq(ks_cache_add_service(cache, m->services[i]), 0);
        m->services[i] = NULL;
    }
}

START_TEST(test_services_namespaces)
{
    ks_error_t err = {0};
    void *v;
    ks_service_t *svc;
    const ks_label_selector_t *out[4];
    ks_pod_t *pod = mkpod("web", "n1", NULL, NULL, NULL); /* label app=web */
    ks_pod_t *other = mkpod("db", "n1", NULL, NULL, NULL);
    ks_manifest_t m = {0};
    const char *yaml =
        "kind: Service\nmetadata: {name: s1}\nspec: {selector: {app: web}}\n"
        "---\n"
        "kind: Service\nmetadata: {name: s2}\nspec: {selector: {app: db}}\n"
        "---\n"
        "kind: Service\nmetadata: {name: s3}\nspec: {clusterIP: None}\n"
        "---\n"
        "kind: Service\nmetadata: {name: s4, namespace: other}\n"
        "spec: {selector: {app: web}}\n"
        "---\n"
        "kind: Namespace\nmetadata: {name: default, labels: {env: prod}}\n";
    ck_assert_int_eq(ks_manifest_load_string(&m, "s.yaml", yaml, strlen(yaml),
                                             in, NULL, &err),
                     0);
    cache_take_services(&m, NULL);
    ck_assert_int_eq(ks_cache_add_namespace(cache, m.namespaces[0]), 0);
    m.namespaces[0] = NULL;
    ks_manifest_free(&m);

    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 4), 1);
    ck_assert_ptr_eq(out[0]->reqs[0].values[0], I("web"));
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, other, out, 4), 1);
    ck_assert_ptr_eq(out[0]->reqs[0].values[0], I("db"));
    /* how many match, also past `cap` (the host API's contract: the
     * caller makes room and asks again) */
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 0), 1);
    ck_assert_int_eq(parse_one("metadata: {name: s5}\n"
                               "spec: {selector: {app: web}}\n",
                               in, 's', &v, &err),
                     0);
    ck_assert_int_eq(ks_cache_add_service(cache, v), 0);
    out[1] = NULL;
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 1), 2);
    ck_assert_ptr_null(out[1]);
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 4), 2);
    ck_assert_ptr_eq(out[1]->reqs[0].values[0], I("web"));
    ck_assert_int_eq(ks_cache_remove_service(cache, "default", "s5"), 0);

    /* replacing s1 by a service selecting nothing of ours */
    ck_assert_int_eq(parse_one("metadata: {name: s1}\n"
                               "spec: {selector: {app: other}}\n",
                               in, 's', &v, &err),
                     0);
    svc = v;
    ck_assert_int_eq(ks_cache_add_service(cache, svc), 0);
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 4), 0);

    ck_assert_uint_eq(ks_cache_namespace_labels(cache, "default").n, 1);
    ck_assert_ptr_eq(ks_cache_namespace_labels(cache, "default").items[0].value,
                     I("prod"));
    ck_assert_uint_eq(ks_cache_namespace_labels(cache, "nope").n, 0);
    ks_pod_free(pod);
    ks_pod_free(other);
}
END_TEST

/* The owners' selectors of pod are want[0..n), in that order. */
static void check_owners(const ks_pod_t *pod,
                         const ks_label_selector_t *const *want, uint32_t n)
{
    const ks_label_selector_t *out[8];
    uint32_t k;
    ck_assert_uint_eq(ks_cache_owner_selectors(cache, pod, out, 8), n);
    for (k = 0; k < n; k++)
        ck_assert_ptr_eq(out[k], want[k]);
}

/* Owner selectors are tested by their first one-value requirement
 * before the whole selector (the cache keeps it beside the list): every
 * kind of selector still answers as a full match would, in the list's
 * order, after a replacement that moves a selector's value and a removal
 * that moves the last owner into the removed one's place (each fails
 * with the kept requirement left stale). */
START_TEST(test_owner_selectors_anchor)
{
    ks_error_t err = {0};
    void *v;
    const ks_label_selector_t *sel[5];
    ks_pod_t *web = mkpod("web", "n1", NULL, NULL, NULL); /* app=web */
    ks_pod_t *db = mkpod("db", "n1", NULL, NULL, NULL);   /* app=db */
    ks_manifest_t m = {0};
    const char *yaml =
        /* 0: anchor app=db */
        "kind: Service\nmetadata: {name: a}\nspec: {selector: {app: db}}\n"
        "---\n" /* 1: no anchor (Exists) */
        "kind: ReplicaSet\nmetadata: {name: b}\nspec:\n  selector:\n"
        "    matchExpressions: [{key: app, operator: Exists}]\n"
        "---\n" /* 2: no anchor (In with two values) */
        "kind: ReplicaSet\nmetadata: {name: c}\nspec:\n  selector:\n"
        "    matchExpressions: [{key: app, operator: In, values: [web, db]}]\n"
        "---\n" /* 3: anchor app=web after a DoesNotExist */
        "kind: ReplicaSet\nmetadata: {name: d}\nspec:\n  selector:\n"
        "    matchExpressions: [{key: tier, operator: DoesNotExist},\n"
        "                       {key: app, operator: In, values: [web]}]\n"
        "---\n" /* 4: anchor app=web, then a requirement web lacks */
        "kind: ReplicaSet\nmetadata: {name: e}\nspec:\n  selector:\n"
        "    matchLabels: {app: web, tier: front}\n";
    ck_assert_int_eq(ks_manifest_load_string(&m, "o.yaml", yaml, strlen(yaml),
                                             in, NULL, &err),
                     0);
    ck_assert_uint_eq(m.n_services, 5);
    cache_take_services(&m, sel);
    ks_manifest_free(&m);

#define OWNERS(...) (const ks_label_selector_t *const[]){__VA_ARGS__}
    check_owners(web, OWNERS(sel[1], sel[2], sel[3]), 3);
    check_owners(db, OWNERS(sel[0], sel[1], sel[2]), 3);

    /* a replaced in place by app=web: its new value counts, not db */
    ck_assert_int_eq(parse_one("metadata: {name: a}\n"
                               "spec: {selector: {app: web}}\n",
                               in, 's', &v, &err),
                     0);
    sel[0] = ((ks_service_t *)v)->selector;
    ck_assert_int_eq(ks_cache_add_service(cache, v), 0);
    check_owners(web, OWNERS(sel[0], sel[1], sel[2], sel[3]), 4);
    check_owners(db, OWNERS(sel[1], sel[2]), 2);

    /* f (app=db) added last; removing a (app=web) moves f to the front,
     * with its own anchor */
    ck_assert_int_eq(parse_one("metadata: {name: f}\n"
                               "spec: {selector: {app: db}}\n",
                               in, 's', &v, &err),
                     0);
    sel[4] = ((ks_service_t *)v)->selector; /* e's no longer needed */
    ck_assert_int_eq(ks_cache_add_service(cache, v), 0);
    ck_assert_int_eq(ks_cache_remove_service(cache, "default", "a"), 0);
    check_owners(db, OWNERS(sel[4], sel[1], sel[2]), 3);
    check_owners(web, OWNERS(sel[1], sel[2], sel[3]), 3);
#undef OWNERS
    ks_pod_free(web);
    ks_pod_free(db);
}
END_TEST

/* Many pods on many nodes, removed in a scattered order: the O(1) slot
 * bookkeeping must leave every list consistent. */
START_TEST(test_churn)
{
    enum { NODES = 200, PODS = 6000 };
    ks_error_t err = {0};
    char name[32], node[32];
    ks_snapshot_t *s = ks_snapshot_new();
    int i, n;
    uint32_t total = 0;
    for (i = 0; i < NODES; i++) {
        snprintf(node, sizeof(node), "node-%04d", i);
        add_node(node, NULL);
    }
    for (i = 0; i < PODS; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(node, sizeof(node), "node-%04d", (i * 7) % NODES);
        add_pod(mkpod(name, node, "10m", "1Mi",
                      i % 3 == 0 ? anti_spec : (i % 3 == 1 ? aff_spec : NULL)));
        if (i % 1000 == 0)
            ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    }
    /* remove every pod whose index is not a multiple of 5 */
    for (i = PODS - 1; i >= 0; i -= 1) {
        if (i % 5 == 0)
            continue;
        snprintf(name, sizeof(name), "default/p%d", i);
        ck_assert_int_eq(ks_cache_remove_pod(cache, name, &err), 0);
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    for (n = 0; n < NODES; n++) {
        const ks_node_info_t *ni = ks_snapshot_node_at(s, (uint32_t)n);
        const ks_node_info_t *cni = ks_cache_node_info(cache, ni->node->name);
        uint32_t j, aff = 0, anti = 0;
        for (j = 0; j < ni->n_pods; j++) {
            int idx = atoi(ni->pods[j]->name + 1);
            ck_assert_int_eq(idx % 5, 0);
            snprintf(node, sizeof(node), "node-%04d", (idx * 7) % NODES);
            ck_assert_str_eq(node, ni->node->name);
            aff += idx % 3 != 2;
            anti += idx % 3 == 0;
        }
        ck_assert_uint_eq(ni->n_pods_with_affinity, aff);
        ck_assert_uint_eq(ni->n_pods_with_required_anti_affinity, anti);
        for (j = 0; j < ni->n_pods_with_affinity; j++)
            ck_assert(has_pod(ni->pods, ni->n_pods,
                              ni->pods_with_affinity[j]->uid));
        ck_assert_int_eq(ni->requested.milli_cpu, 10 * (int64_t)ni->n_pods);
        ck_assert_int_eq(ni->requested.memory, MI * (int64_t)ni->n_pods);
        ck_assert_uint_eq(ni->generation, cni->generation);
        total += ni->n_pods;
    }
    ck_assert_uint_eq(total, PODS / 5);
    ck_assert_uint_eq(ks_cache_num_pods(cache), PODS / 5);
    ks_snapshot_free(s);
}
END_TEST

/* Entries come from blocks, a first large update from a mapped one, and a
 * dropped node's entry serves a node added later: it must carry nothing of
 * its last node (pods, requests, lists), and every node reads as its own. */
START_TEST(test_snapshot_entries_reused)
{
    enum { NODES = 6000 }; /* 6,000 entries: over the mapped block's size */
    ks_error_t err = {0};
    char name[32], node[32];
    ks_snapshot_t *s = ks_snapshot_new();
    const ks_node_info_t *const *all;
    uint32_t n, i;
    int k;
    for (k = 0; k < NODES; k++) {
        snprintf(node, sizeof(node), "n%05d", k);
        add_node(node, NULL);
        if (k % 2 == 1) { /* the nodes that go have pods, with anti-affinity */
            snprintf(name, sizeof(name), "p%d", k);
            add_pod(mkpod(name, node, "1", "1Gi", anti_spec));
        }
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), NODES);
    ks_snapshot_nodes_with_required_anti_affinity(s, &n);
    ck_assert_uint_eq(n, NODES / 2);
    check_positions(s);
    for (k = 1; k < NODES; k += 2) {
        snprintf(name, sizeof(name), "default/p%d", k);
        ck_assert_int_eq(ks_cache_remove_pod(cache, name, &err), 0);
        snprintf(node, sizeof(node), "n%05d", k);
        ck_assert_int_eq(ks_cache_remove_node(cache, node, &err), 0);
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), NODES / 2);
    /* new nodes, in two updates: the first takes dropped entries only */
    for (k = 0; k < NODES / 2 + 100; k++) {
        snprintf(node, sizeof(node), "m%05d", k);
        add_node(node, NULL);
        if (k == NODES / 4)
            ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    ck_assert_uint_eq(ks_snapshot_num_nodes(s), NODES + 100);
    check_positions(s);
    all = ks_snapshot_nodes(s, &n);
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni = all[i];
        ck_assert_ptr_eq(ni->node, ks_cache_node_info(cache, ni->node->name)->node);
        ck_assert_ptr_eq(ks_snapshot_get(s, ni->node->name), ni);
        ck_assert_uint_eq(ni->n_pods, 0);
        ck_assert_uint_eq(ni->n_pods_with_affinity, 0);
        ck_assert_uint_eq(ni->n_pods_with_required_anti_affinity, 0);
        ck_assert_int_eq(ni->requested.milli_cpu, 0);
        ck_assert_int_eq(ni->requested.memory, 0);
        ck_assert_int_eq(ni->node->allocatable.milli_cpu, 4000);
    }
    ks_snapshot_nodes_with_required_anti_affinity(s, &n);
    ck_assert_uint_eq(n, 0);
    ks_snapshot_free(s);
}
END_TEST

/* The aff and anti lists of `s` are exactly its nodes with such pods, in
 * snapshot order. */
static void check_lists(const ks_snapshot_t *s)
{
    uint32_t n, n_aff, n_anti, i, a = 0, b = 0;
    const ks_node_info_t *const *all = ks_snapshot_nodes(s, &n);
    const ks_node_info_t *const *aff = ks_snapshot_nodes_with_affinity(s, &n_aff);
    const ks_node_info_t *const *anti =
        ks_snapshot_nodes_with_required_anti_affinity(s, &n_anti);
    for (i = 0; i < n; i++) {
        if (all[i]->n_pods_with_affinity > 0) {
            ck_assert_uint_lt(a, n_aff);
            ck_assert_ptr_eq(aff[a], all[i]);
            a++;
        }
        if (all[i]->n_pods_with_required_anti_affinity > 0) {
            ck_assert_uint_lt(b, n_anti);
            ck_assert_ptr_eq(anti[b], all[i]);
            b++;
        }
    }
    ck_assert_uint_eq(a, n_aff);
    ck_assert_uint_eq(b, n_anti);
}

/* Nodes join and leave the aff and anti lists as their pods come and go,
 * one update at a time (moved in the lists alone) and together with
 * nodes added and removed (the lists rebuilt). */
START_TEST(test_snapshot_affinity_lists)
{
    enum { NODES = 40, STEPS = 3000 };
    ks_error_t err = {0};
    char name[32], node[32];
    ks_snapshot_t *s = ks_snapshot_new();
    int present[NODES * 8], up[NODES + 8];
    uint32_t rnd = 12345, i;
    memset(present, 0, sizeof present);
    memset(up, 0, sizeof up);
    for (i = 0; i < NODES; i += 2) { /* every other node at first */
        snprintf(node, sizeof node, "node-%04u", i);
        add_node(node, NULL);
        up[i] = 1;
    }
    ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
    check_lists(s);
    for (i = 0; i < STEPS; i++) {
        uint32_t k, pod;
        int ops = 1 + (int)(i % 3), o;
        for (o = 0; o < ops; o++) {
            rnd = rnd * 1103515245u + 12345u;
            k = (rnd >> 8) % NODES;
            pod = k * 8 + (rnd >> 20) % 8;
            if (((rnd >> 4) & 63) == 0) { /* a node comes or goes */
                snprintf(node, sizeof node, "node-%04u", k);
                if (up[k]) {
                    uint32_t j;
                    for (j = 0; j < 8; j++)
                        if (present[k * 8 + j]) {
                            snprintf(name, sizeof name, "default/q%u",
                                     k * 8 + j);
                            ck_assert_int_eq(
                                ks_cache_remove_pod(cache, name, &err), 0);
                            present[k * 8 + j] = 0;
                        }
                    ck_assert_int_eq(ks_cache_remove_node(cache, node, &err),
                                     0);
                    up[k] = 0;
                } else {
                    add_node(node, NULL);
                    up[k] = 1;
                }
                continue;
            }
            if (!up[k])
                continue;
            snprintf(name, sizeof name, "q%u", pod);
            if (present[pod]) {
                char uid[40];
                snprintf(uid, sizeof uid, "default/%s", name);
                ck_assert_int_eq(ks_cache_remove_pod(cache, uid, &err), 0);
                present[pod] = 0;
            } else {
                snprintf(node, sizeof node, "node-%04u", k);
                add_pod(mkpod(name, node, "10m", "1Mi",
                              pod % 3 == 0   ? anti_spec
                              : pod % 3 == 1 ? aff_spec
                                             : NULL));
                present[pod] = 1;
            }
        }
        ck_assert_int_eq(ks_cache_update_snapshot(cache, s, &err), 0);
        check_lists(s);
    }
    ks_snapshot_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster-cache");
    TCase *tc = tcase_create("cache");
    TCase *ts = tcase_create("snapshot");
    SRunner *sr;
    int failed;
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_checked_fixture(ts, setup, teardown);
    tcase_add_test(tc, test_node_info_sums);
    tcase_add_test(tc, test_pod_errors);
    tcase_add_test(tc, test_assume_forget_finish);
    tcase_add_test(tc, test_add_confirms_assumed);
    tcase_add_test(tc, test_placeholder_node);
    tcase_add_test(tc, test_image_counts);
    tcase_add_test(tc, test_clone);
    tcase_add_test(tc, test_services_namespaces);
    tcase_add_test(tc, test_owner_selectors_anchor);
    tcase_add_test(tc, test_churn);
    tcase_add_test(ts, test_snapshot_incremental);
    tcase_add_test(ts, test_snapshot_positions);
    tcase_add_test(ts, test_snapshot_columns);
    tcase_add_test(ts, test_snapshot_affinity_lists);
    tcase_add_test(ts, test_snapshot_entries_reused);
    tcase_add_test(ts, test_two_snapshots);
    tcase_add_test(ts, test_snapshot_changes_since_older_versions);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, ts);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
