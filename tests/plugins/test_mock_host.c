/* Tests of the plugin tests' host fixture itself, so plugin tests can
 * trust it. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"
#include <ksched/helpers.h>

static int n_freed;
static void count_free(void *p)
{
    n_freed++;
    free(p);
}
static void *dup_int(const void *p)
{
    int *c = malloc(sizeof *c);
    *c = *(const int *)p;
    return c;
}

START_TEST(intern_equal_addresses)
{
    char a[] = "zone-a";
    ck_assert_ptr_eq(mock_intern(a), mock_intern("zone-a"));
    ck_assert_ptr_ne(mock_intern("zone-a"), mock_intern("zone-b"));
    ck_assert_ptr_null(mock_intern(NULL));
}
END_TEST

START_TEST(args_tree_with_positions)
{
    const ks_args_t *a = mock_args_parse(
        "scoringStrategy:\n  type: MostAllocated\n  resources:\n"
        "  - name: cpu\n    weight: 2\n");
    const ks_args_t *s, *r;
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->kind, KS_ARGS_MAP);
    ck_assert_uint_eq(a->n, 1);
    ck_assert_str_eq(a->keys[0], "scoringStrategy");
    s = a->children[0];
    ck_assert_str_eq(s->keys[0], "type");
    ck_assert_str_eq(s->children[0]->scalar, "MostAllocated");
    ck_assert_uint_eq(s->children[0]->line, 2);
    ck_assert_uint_eq(s->children[0]->column, 9);
    r = s->children[1];
    ck_assert_int_eq(r->kind, KS_ARGS_SEQ);
    ck_assert_uint_eq(r->n, 1);
    ck_assert_str_eq(r->children[0]->children[1]->scalar, "2");
    ck_assert_uint_eq(r->children[0]->children[1]->line, 5);
    ck_assert_ptr_null(mock_args_parse(""));
    mock_free_all();
}
END_TEST

START_TEST(cycle_state_clone_and_free)
{
    mock_host_t *mh = mock_host_new();
    ks_cycle_state_t *cs = mock_cycle_state_new(), *c;
    int *v = malloc(sizeof *v), *w;
    *v = 7;
    n_freed = 0;
    mh->api.cycle_state_write(cs, "k", v, dup_int, count_free);
    c = mh->api.cycle_state_clone(mh->handle, cs);
    w = mh->api.cycle_state_read(c, "k");
    ck_assert_ptr_ne(w, v);
    ck_assert_int_eq(*w, 7);
    /* Overwriting frees the old value. */
    v = malloc(sizeof *v);
    *v = 8;
    mh->api.cycle_state_write(cs, "k", v, dup_int, count_free);
    ck_assert_int_eq(n_freed, 1);
    mh->api.cycle_state_free(mh->handle, c);
    ck_assert_int_eq(n_freed, 2);
    mh->api.cycle_state_delete(cs, "k");
    ck_assert_int_eq(n_freed, 3);
    ck_assert_ptr_null(mh->api.cycle_state_read(cs, "k"));
    mock_cycle_state_free(cs);
    mock_host_free(mh);
}
END_TEST

START_TEST(pod_requests_and_nodeinfo)
{
    ks_pod_t *p = mock_pod_new("default", "p", 500, 0);
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n", 4000, 1 << 30, 110));
    uint32_t ic;
    ck_assert_str_eq(p->uid, "default/p");
    ck_assert_int_eq(p->requests.milli_cpu, 500);
    ck_assert_int_eq(p->requests.memory, 0);
    ck_assert_int_eq(p->non_zero_milli_cpu, 500);
    ck_assert_int_eq(p->non_zero_memory, 200ll << 20);
    /* An init container larger than the sum wins; overhead is added. */
    ic = mock_pod_add_container(p, 1, "busybox", 800, 100);
    ck_assert_uint_eq(ic, 0);
    p->overhead.milli_cpu = 10;
    mock_pod_update(p);
    ck_assert_int_eq(p->requests.milli_cpu, 810);
    ck_assert_int_eq(p->requests.memory, 100);
    mock_pod_set_request(p, 0, 0, "nvidia.com/gpu", 2);
    ck_assert_uint_eq(p->requests.n_scalar, 1);
    ck_assert_ptr_eq(p->requests.scalar[0].name, mock_intern("nvidia.com/gpu"));
    mock_pod_add_port(p, 0, 80, 8080, KS_PROTO_TCP, "");
    ck_assert_uint_eq(p->n_host_ports, 1);
    mock_nodeinfo_add_pod(ni, p);
    ck_assert_uint_eq(ni->n_pods, 1);
    ck_assert_uint_eq(ni->n_used_ports, 1);
    ck_assert_int_eq(ni->requested.milli_cpu, 810);
    ck_assert_int_eq(ni->non_zero_requested.memory, (200ll << 20));
    mock_nodeinfo_remove_pod(ni, p);
    ck_assert_uint_eq(ni->n_pods, 0);
    ck_assert_uint_eq(ni->n_used_ports, 0);
    ck_assert_int_eq(ni->requested.milli_cpu, 0);
    mock_free_all();
}
END_TEST

START_TEST(status_and_snapshot)
{
    mock_host_t *mh = mock_host_new();
    ks_status_t *st = mock_status_new();
    ks_node_t *n1 = mock_node_new("n1", 1000, 1000, 10);
    ks_node_t *n2 = mock_node_new("n2", 1000, 1000, 10);
    ks_node_info_t *nis[2];
    mock_node_add_image(n1, "nginx:1.0", 100);
    nis[0] = mock_nodeinfo_new(n1);
    nis[1] = mock_nodeinfo_new(n2);
    mock_host_set_nodes(mh, nis, 2);
    mh->api.status_reason(st, "a");
    mh->api.status_reasonf(st, "b %d", 2);
    ck_assert_uint_eq(mock_status_reason_count(st), 2);
    ck_assert(mock_status_has(st, "b 2"));
    ck_assert_str_eq(mock_status_text(st), "a; b 2");
    ck_assert_uint_eq(mh->api.snapshot_num_nodes(mh->handle), 2);
    /* The snapshot's NodeInfos are the host's copies of the test's. */
    ck_assert_ptr_eq(mh->api.snapshot_get(mh->handle, "n2")->node->name,
                     nis[1]->node->name);
    ck_assert_uint_eq(mh->api.image_num_nodes(mh->handle, "nginx:1.0"), 1);
    mock_host_set_image_count(mh, "nginx:1.0", 5);
    ck_assert_uint_eq(mh->api.image_num_nodes(mh->handle, "nginx:1.0"), 5);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST


/* The snapshot is the host's, kept in step with the test's NodeInfos: a
 * pod added after set_nodes is on the snapshot's node (the very object),
 * its affinity puts the node in the host's affinity list, and a removed
 * node leaves. */
START_TEST(snapshot_follows_nodeinfos)
{
    mock_host_t *mh = mock_host_new();
    ks_node_t *n1 = mock_node_new("n1", 1000, 1000, 10);
    ks_node_t *n2 = mock_node_new("n2", 1000, 1000, 10);
    ks_node_info_t *nis[2];
    ks_pod_t *p = mock_pod_new("default", "p", 100, 0);
    ks_requirement_t r = mock_req("app", KS_OP_IN, "web");
    const ks_node_info_t *got;
    uint32_t n;
    nis[0] = mock_nodeinfo_new(n1);
    nis[1] = mock_nodeinfo_new(n2);
    mock_host_set_nodes(mh, nis, 2);
    mock_pod_add_affinity_term(p, 0, 0, mock_selector_new(&r, 1),
                               "kubernetes.io/hostname", "", NULL);
    mock_pod_set_node(p, "n2");
    mock_nodeinfo_add_pod(nis[1], p);
    got = mh->api.snapshot_get(mh->handle, "n2");
    ck_assert_ptr_ne(got, nis[1]);
    ck_assert_uint_eq(got->n_pods, 1);
    ck_assert_ptr_eq(got->pods[0], p);
    ck_assert_int_eq(got->requested.milli_cpu, 100);
    ck_assert_ptr_eq(mh->api.snapshot_nodes_with_affinity(mh->handle, &n)[0],
                     got);
    ck_assert_uint_eq(n, 1);
    /* A label set by hand reaches the host's copy at the next sync. */
    mock_node_add_label(n1, "zone", "a");
    ck_assert_uint_eq(mh->api.snapshot_get(mh->handle, "n1")->node->labels.n,
                      1);
    mock_nodeinfo_remove_pod(nis[1], p);
    ck_assert_uint_eq(mh->api.snapshot_get(mh->handle, "n2")->n_pods, 0);
    mock_host_set_nodes(mh, nis, 1);
    ck_assert_uint_eq(mh->api.snapshot_num_nodes(mh->handle), 1);
    ck_assert_ptr_null(mh->api.snapshot_get(mh->handle, "n2"));
    mock_host_free(mh);
    /* The test's pod is its own again. */
    ck_assert_str_eq(p->node_name, "n2");
    mock_free_all();
}
END_TEST

static ks_code_t deny_filter(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_node_info_t *ni,
                             ks_status_t *st)
{
    (void)self, (void)cs, (void)pod;
    ks_host_api()->status_reasonf(st, "no to %s", ni->node->name);
    return KS_UNSCHEDULABLE;
}

/* run_filters is the host's: every Filter plugin of the framework runs
 * (v1.24's run-all), the reasons are merged, the worst code wins; the
 * scheduler operations are recorded. */
START_TEST(framework_filters_and_operations)
{
    static const ks_plugin_t deny = {.magic = KS_PLUGIN_MAGIC,
                                     .abi_major = KS_ABI_MAJOR,
                                     .abi_minor = KS_ABI_MINOR,
                                     .size = sizeof(ks_plugin_t),
                                     .name = "Deny",
                                     .version = "test",
                                     .filter = deny_filter};
    mock_host_t *mh = mock_host_new();
    ks_status_t *st = mock_status_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n1", 1, 1, 1));
    ks_pod_t *p = mock_pod_new("default", "p", 100, 0);
    ck_assert_int_eq(mh->api.run_filters(mh->handle, cs, p, ni, st),
                     KS_SUCCESS);
    mock_host_add_filter(mh, &deny, NULL);
    mock_host_add_filter(mh, &deny, (void *)1);
    ck_assert_int_eq(mh->api.run_filters(mh->handle, cs, p, ni, st),
                     KS_UNSCHEDULABLE);
    /* Each plugin's reasons, merged as upstream's PluginToStatus.Merge. */
    ck_assert_str_eq(mock_status_text(st), "no to n1; no to n1");
    ck_assert_int_eq(mh->api.bind(mh->handle, p, "n1"), 0);
    ck_assert_ptr_eq(mh->bound_pod, p);
    ck_assert_ptr_eq(mh->bound_node, mock_intern("n1"));
    mh->now_ms = 42;
    ck_assert_int_eq(mh->api.now_ms(mh->handle), 42);
    mock_host_add_nominated(mh, "n1", p);
    ck_assert_uint_eq(mh->env.n_nominated, 1);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

/* The host API's parallelize (ABI 1.8): what a walk saw. */
typedef struct walk {
    const ks_host_api_t *api;
    ks_handle_t *h;
    unsigned char *hits;   /* per index */
    unsigned calls, bad_worker, max_len, workers, nested_bad;
    int nest;
    pthread_mutex_t mu;
} walk_t;

static void inner_walk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    walk_t *w = ud;
    pthread_mutex_lock(&w->mu);
    /* nested: the whole range at once, as the worker it runs on */
    if (b != 0 || e != 5 || worker >= w->workers)
        w->nested_bad++;
    pthread_mutex_unlock(&w->mu);
}

static void outer_walk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    walk_t *w = ud;
    uint32_t i;
    pthread_mutex_lock(&w->mu);
    w->calls++;
    if (worker >= w->workers)
        w->bad_worker++;
    if (e - b > w->max_len)
        w->max_len = e - b;
    for (i = b; i < e; i++)
        w->hits[i]++;
    pthread_mutex_unlock(&w->mu);
    if (w->nest && b == 0)
        w->api->parallelize(w->h, 5, 0, inner_walk, w);
}

static void run_walk(mock_host_t *mh, walk_t *w, uint32_t n, uint32_t chunk)
{
    uint32_t i;
    w->hits = calloc(n, 1);
    ck_assert_ptr_nonnull(w->hits);
    w->calls = w->bad_worker = w->max_len = w->nested_bad = 0;
    w->api->parallelize(w->h, n, chunk, outer_walk, w);
    for (i = 0; i < n && w->hits[i] == 1; i++)
        ;
    ck_assert_msg(i == n, "index %u of %u run %u times", i, n,
                  i < n ? w->hits[i] : 0);
    ck_assert_uint_eq(w->bad_worker, 0);
    ck_assert_uint_eq(w->nested_bad, 0);
    free(w->hits);
    (void)mh;
}

START_TEST(parallelize_runs_each_index_once)
{
    mock_host_t *mh = mock_host_new();
    walk_t w;
    int k;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.mu, NULL);
    w.api = &mh->api;
    w.h = mh->handle;
    /* no workers: one call over the whole range, as worker 0 */
    w.workers = w.api->parallelize_workers(w.h);
    ck_assert_uint_eq(w.workers, 1);
    run_walk(mh, &w, 1000, 0);
    ck_assert_uint_eq(w.calls, 1);
    ck_assert_uint_eq(w.max_len, 1000);
    w.api->parallelize(w.h, 0, 0, outer_walk, &w); /* nothing to run */
    /* two workers, every walk shared or inline at random, late chunks:
     * each index once, chunks of at most upstream's size (the square
     * root, 100 of 10,000) or the whole range inline, workers 0 and 1,
     * and a walk nested in a chunk runs there in one call */
    setenv("KSCHED_POOL_CHAOS", "1", 1);
    mock_host_set_parallelism(mh, 2);
    unsetenv("KSCHED_POOL_CHAOS");
    w.workers = w.api->parallelize_workers(w.h);
    ck_assert_uint_eq(w.workers, 2);
    w.nest = 1;
    for (k = 0; k < 10; k++) {
        run_walk(mh, &w, 10000, 0);
        ck_assert_msg(w.max_len == 100 || (w.max_len == 10000 && w.calls == 1),
                      "chunks of up to %u in %u calls", w.max_len, w.calls);
        run_walk(mh, &w, 37, 4);
        ck_assert_msg(w.max_len <= 4 || (w.max_len == 37 && w.calls == 1),
                      "chunks of up to %u in %u calls", w.max_len, w.calls);
    }
    /* the SDK's helper says the same */
    ck_assert_uint_eq(ks_parallelize_workers(w.api, w.h), 2);
    pthread_mutex_destroy(&w.mu);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mock_host");
    TCase *tc = tcase_create("mock");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, intern_equal_addresses);
    tcase_add_test(tc, args_tree_with_positions);
    tcase_add_test(tc, cycle_state_clone_and_free);
    tcase_add_test(tc, pod_requests_and_nodeinfo);
    tcase_add_test(tc, status_and_snapshot);
    tcase_add_test(tc, snapshot_follows_nodeinfos);
    tcase_add_test(tc, framework_filters_and_operations);
    tcase_add_test(tc, parallelize_runs_each_index_once);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
