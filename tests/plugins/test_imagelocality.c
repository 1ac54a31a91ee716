/* ImageLocality: the conformance "imagelocality" scenario (weight 1). */
#include "plugin_test.h"

static ks_node_info_t *il_nodes[5];

static void build_nodes(mock_host_t *mh)
{
    ks_node_t *n[5];
    int i;
    n[0] = mock_node_new("i1", 4000, 8 * GI, 110);
    n[1] = mock_node_new("i2", 4000, 8 * GI, 110);
    n[2] = mock_node_new("i3", 4000, 8 * GI, 110);
    n[3] = mock_node_new("i4", 4000, 8 * GI, 110);
    n[4] = mock_node_new("i5", 4000, 8 * GI, 110);
    mock_node_add_image(n[0], "docker.io/library/nginx:1.21", 148897792);
    mock_node_add_image(n[0], "nginx:1.21", 148897792);
    mock_node_add_image(n[0], "myrepo/ml-runtime:v2", 943718400);
    mock_node_add_image(n[1], "nginx:1.21", 148897792);
    mock_node_add_image(n[1], "redis:latest", 115343360);
    mock_node_add_image(n[1], "redis:7", 115343360);
    mock_node_add_image(n[2], "myrepo/ml-runtime:v2", 943718400);
    mock_node_add_image(n[2], "redis:latest", 115343360);
    mock_node_add_image(n[2], "busybox:latest", 2097152);
    mock_node_add_image(n[4], "myrepo/ml-runtime:v2", 943718400);
    mock_node_add_image(n[4], "myrepo/sidecar:1.0", 419430400);
    for (i = 0; i < 5; i++)
        il_nodes[i] = mock_nodeinfo_new(n[i]);
    mock_host_set_nodes(mh, il_nodes, 5);
}

static ks_pod_t *image_pod(const char *name, const char *image)
{
    ks_pod_t *p = mock_pod_new("default", name, 500, GI);
    ((ks_container_t *)p->containers)[0].image = mock_intern(image);
    return p;
}

static void expect_scores(mock_host_t *mh, const ks_plugin_t *p, void *self,
                          const ks_pod_t *pod, const int64_t *want)
{
    ks_status_t *st = mock_status_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    uint32_t i;
    pt_expect_scores(mh, p, self, pod, il_nodes, 5, want);
    /* Score without PreScore (upstream v1.24 has none) agrees. */
    for (i = 0; i < 5; i++) {
        int64_t s = -1;
        ck_assert_int_eq(p->score(self, cs, pod, il_nodes[i], &s, st),
                         KS_SUCCESS);
        ck_assert_int_eq(s, want[i]);
    }
    mock_cycle_state_free(cs);
    mock_status_free(st);
}

START_TEST(conformance_imagelocality)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("ImageLocality");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *ml = image_pod("ml", "myrepo/ml-runtime:v2");
    ks_pod_t *web = image_pod("web", "nginx:1.21");
    ks_pod_t *cache = image_pod("cache", "redis");
    ks_pod_t *tiny = image_pod("tiny", "busybox");
    /* i1: 943718400 * 3/5 = 566231040 over two containers:
     * 100 * (566231040 - 23Mi) / (2000Mi - 23Mi) = 26. i5 adds the
     * sidecar 419430400 * 1/5: 30. */
    static const int64_t w_ml[] = {26, 0, 26, 0, 30};
    static const int64_t w_web[] = {3, 3, 0, 0, 0};
    /* "redis" is looked up as "redis:latest". */
    static const int64_t w_cache[] = {0, 2, 2, 0, 0};
    /* 2 MiB is under the 23 MiB threshold. */
    static const int64_t w_tiny[] = {0, 0, 0, 0, 0};

    build_nodes(mh);
    mock_pod_add_container(ml, 0, "myrepo/sidecar:1.0", 0, 0);
    expect_scores(mh, p, self, ml, w_ml);
    expect_scores(mh, p, self, web, w_web);
    expect_scores(mh, p, self, cache, w_cache);
    expect_scores(mh, p, self, tiny, w_tiny);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(spread_from_host_and_init_containers)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("ImageLocality");
    void *self = pt_create(mh, p, NULL);
    ks_pod_t *ml = image_pod("ml", "myrepo/ml-runtime:v2");
    ks_pod_t *init = image_pod("init", "none:1");
    int64_t want[5] = {0, 0, 0, 0, 0};

    build_nodes(mh);
    /* The host's count of nodes holding the image drives the spread:
     * 943718400 * 5/5 on one container:
     * 100 * (943718400 - 23Mi) / (1000Mi - 23Mi) = 89. */
    mock_host_set_image_count(mh, "myrepo/ml-runtime:v2", 5);
    want[0] = 89;
    want[2] = 89;
    want[4] = 89;
    expect_scores(mh, p, self, ml, want);
    /* Init containers are not counted. */
    mock_pod_add_container(init, 1, "myrepo/ml-runtime:v2", 0, 0);
    want[0] = want[2] = want[4] = 0;
    expect_scores(mh, p, self, init, want);
    pt_assert_contains(pt_create_error(mh, p, "minThreshold: 1\n"),
                       "unknown field \"minThreshold\"");
    ck_assert(p->events_to_register == NULL);
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ImageLocality");
    TCase *tc = tcase_create("score");
    tcase_add_test(tc, conformance_imagelocality);
    tcase_add_test(tc, spread_from_host_and_init_containers);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
