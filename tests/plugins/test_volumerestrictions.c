/*
 * VolumeRestrictions: ReadWriteOncePod claims (PreFilter's count of the
 * snapshot's users, Filter's verdict, AddPod/RemovePod for preemption and
 * cloned cycle states), upstream v1.36's messages, the QueueingHints.
 */
#include "plugin_test.h"

#define RWOP_CONFLICT                                                         \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod " \
    "access mode already in-use by another pod"

typedef struct fixture {
    mock_host_t *mh;
    const ks_plugin_t *p;
    void *self;
    ks_status_t *st;
} fixture_t;

static fixture_t fx_new(void)
{
    fixture_t f;
    f.mh = mock_host_new();
    f.p = mock_plugin_load("VolumeRestrictions");
    ck_assert_msg(f.p != NULL, "cannot load %s",
                  mock_plugin_path("VolumeRestrictions"));
    ck_assert_str_eq(f.p->name, "VolumeRestrictions");
    ck_assert_uint_eq(f.p->abi_minor, 3);
    ck_assert(KS_PLUGIN_HAS(f.p, resources));
    ck_assert_uint_eq(f.p->n_resources, 1);
    ck_assert(f.p->pre_filter_add_pod != NULL);
    ck_assert(f.p->pre_filter_remove_pod != NULL);
    f.self = pt_create(f.mh, f.p, NULL);
    f.st = mock_status_new();
    mock_objects_clear();
    return f;
}

static void fx_free(fixture_t *f)
{
    f->p->destroy(f->self);
    mock_status_free(f->st);
    mock_host_free(f->mh);
    mock_objects_clear();
    mock_free_all();
}

/* A claim with one access mode. */
static void put_pvc(const char *ns, const char *name, const char *mode)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{\"accessModes\":[\"ReadOnlyMany\",\"%s\"]}}",
             name, ns, mode);
    mock_object_put("v1", "PersistentVolumeClaim", buf);
}

static ks_pod_t *claim_pod(const char *ns, const char *name,
                           const char *claim)
{
    ks_pod_t *p = mock_pod_new(ns, name, 100, 0);
    mock_pod_add_volume(p, "v", KS_VOLUME_PVC, claim);
    return p;
}

static ks_code_t run(fixture_t *f, const ks_pod_t *pod,
                     const ks_node_info_t *ni)
{
    return mock_prefilter_filter(f->mh, f->p, f->self, pod, ni, f->st);
}

/* A claim in use by a pod of any node rejects every node. */
START_TEST(rwop_claim_in_use)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    ks_node_info_t *n2 = mock_nodeinfo_new(mock_node_new("n2", 4000, 8 * GI,
                                                         110));
    ks_node_info_t *nis[2] = {n1, n2};
    put_pvc("default", "data", "ReadWriteOncePod");
    put_pvc("default", "shared", "ReadWriteMany");
    put_pvc("other", "data", "ReadWriteOncePod");
    mock_nodeinfo_add_pod(n1, claim_pod("default", "old", "data"));
    mock_nodeinfo_add_pod(n1, claim_pod("default", "rw", "shared"));
    mock_host_set_nodes(f.mh, nis, 2);
    /* the claim's user is on n1; n2 is rejected all the same */
    ck_assert_int_eq(run(&f, claim_pod("default", "new", "data"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), RWOP_CONFLICT);
    ck_assert_int_eq(run(&f, claim_pod("default", "new", "data"), n2),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), RWOP_CONFLICT);
    /* ReadWriteMany: no restriction (PreFilter skips) */
    ck_assert_int_eq(run(&f, claim_pod("default", "new", "shared"), n1),
                     KS_SUCCESS);
    /* a claim of the same name in another namespace is another claim */
    ck_assert_int_eq(run(&f, claim_pod("other", "new", "data"), n1),
                     KS_SUCCESS);
    /* no volumes at all */
    ck_assert_int_eq(run(&f, mock_pod_new("default", "plain", 100, 0), n1),
                     KS_SUCCESS);
    fx_free(&f);
}
END_TEST

/* An unused RWOP claim: nothing to check, PreFilter answers Skip. */
START_TEST(rwop_claim_free)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_prefilter_result_t *r = mock_prefilter_result_new();
    ks_pod_t *pod = claim_pod("default", "new", "data");
    mock_pod_add_volume(pod, "again", KS_VOLUME_PVC, "data");
    put_pvc("default", "data", "ReadWriteOncePod");
    mock_host_set_nodes(f.mh, &n1, 1);
    ck_assert_int_eq(f.p->pre_filter(f.self, cs, pod, r, f.st), KS_SKIP);
    ck_assert_ptr_null(mock_plugin_state(cs, f.self, KS_STATE_FILTER));
    ck_assert_int_eq(run(&f, pod, n1), KS_SUCCESS);
    mock_prefilter_result_free(r);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

/* Upstream's messages for claims that cannot be read. */
START_TEST(missing_claims)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    mock_host_set_nodes(f.mh, &n1, 1);
    put_pvc("default", "data", "ReadWriteOncePod");
    ck_assert_int_eq(run(&f, claim_pod("default", "p", "nope"), n1),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolumeclaim \"nope\" not found");
    /* looked up in the pod's namespace only */
    ck_assert_int_eq(run(&f, claim_pod("prod", "p", "data"), n1),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolumeclaim \"data\" not found");
    /* a claim volume without a name */
    ck_assert_int_eq(run(&f, claim_pod("default", "p", NULL), n1),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolumeclaim \"\" not found");
    /* ephemeral volumes are not this plugin's business */
    {
        ks_pod_t *e = mock_pod_new("default", "e", 100, 0);
        mock_pod_add_volume(e, "scratch", KS_VOLUME_EPHEMERAL, "e-scratch");
        ck_assert_int_eq(run(&f, e, n1), KS_SUCCESS);
    }
    fx_free(&f);
}
END_TEST

/* PreFilter's AddPod/RemovePod: preemption removing the claim's user
 * frees the node; adding it back (a nominated pod) takes it again. Each
 * cloned cycle state keeps its own count. */
START_TEST(add_and_remove_pod)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    ks_pod_t *old = claim_pod("default", "old", "data");
    ks_pod_t *unrelated = claim_pod("default", "rw", "shared");
    ks_pod_t *pod = claim_pod("default", "new", "data");
    ks_cycle_state_t *cs = mock_cycle_state_new(), *copy;
    ks_prefilter_result_t *r = mock_prefilter_result_new();
    put_pvc("default", "data", "ReadWriteOncePod");
    put_pvc("default", "shared", "ReadWriteOnce");
    mock_nodeinfo_add_pod(n1, old);
    mock_nodeinfo_add_pod(n1, unrelated);
    mock_host_set_nodes(f.mh, &n1, 1);
    ck_assert_int_eq(f.p->pre_filter(f.self, cs, pod, r, f.st), KS_SUCCESS);
#define FILTER(c)                                                             \
    f.p->filter_with_state(f.self, (c),                                       \
                           mock_plugin_state((c), f.self, KS_STATE_FILTER),   \
                           pod, n1, f.st)
    ck_assert_int_eq(FILTER(cs), KS_UNSCHEDULABLE);
    /* removing a pod that does not use the claim changes nothing */
    ck_assert_int_eq(f.p->pre_filter_remove_pod(f.self, cs, pod, unrelated,
                                                n1, f.st),
                     KS_SUCCESS);
    mock_status_reset(f.st);
    ck_assert_int_eq(FILTER(cs), KS_UNSCHEDULABLE);
    /* a clone taken now, then the user removed from the original */
    copy = api->cycle_state_clone(f.mh->handle, cs);
    ck_assert_ptr_nonnull(copy);
    ck_assert_int_eq(f.p->pre_filter_remove_pod(f.self, cs, pod, old, n1,
                                                f.st),
                     KS_SUCCESS);
    mock_status_reset(f.st);
    ck_assert_int_eq(FILTER(cs), KS_SUCCESS);
    ck_assert_int_eq(FILTER(copy), KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), RWOP_CONFLICT);
    /* added back (a nominated pod using the claim) */
    ck_assert_int_eq(f.p->pre_filter_add_pod(f.self, cs, pod, old, n1, f.st),
                     KS_SUCCESS);
    mock_status_reset(f.st);
    ck_assert_int_eq(FILTER(cs), KS_UNSCHEDULABLE);
    /* the same through the host's framework calls */
    mock_host_add_filter(f.mh, f.p, f.self);
    mock_status_reset(f.st);
    ck_assert_int_eq(api->run_prefilter_remove_pod(f.mh->handle, copy, pod,
                                                   old, n1, f.st),
                     KS_SUCCESS);
    mock_status_reset(f.st);
    ck_assert_int_eq(FILTER(copy), KS_SUCCESS);
#undef FILTER
    api->cycle_state_free(f.mh->handle, copy);
    mock_prefilter_result_free(r);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

/* Filter, AddPod and RemovePod without PreFilter's state: an Error naming
 * the state, as upstream. */
START_TEST(no_prefilter_state)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *pod = claim_pod("default", "new", "data");
    mock_host_set_nodes(f.mh, &n1, 1);
    ck_assert_int_eq(f.p->filter(f.self, cs, pod, n1, f.st), KS_ERROR);
    ck_assert_str_eq(mock_status_text(f.st),
                     "cannot read \"PreFilterVolumeRestrictions\" from "
                     "cycleState");
    mock_status_reset(f.st);
    ck_assert_int_eq(f.p->pre_filter_add_pod(f.self, cs, pod, pod, n1, f.st),
                     KS_ERROR);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

static ks_handle_t *handle_of(fixture_t *f)
{
    size_t i;
    for (i = 0; i < f->mh->fw->n_insts; i++)
        if (f->mh->fw->insts[i]->self == f->self)
            return &f->mh->fw->insts[i]->handle;
    ck_abort_msg("no handle for the plugin instance");
    return NULL;
}

/* upstream v1.36's events with QueueingHints. */
START_TEST(hints)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    const ks_store_t *pvcs =
        api->store_get(handle_of(&f), "", "v1", "persistentvolumeclaims");
    ks_cluster_event_hint_t ev[8];
    ks_cluster_event_t ev1[8];
    ks_queueing_hint_fn pod_deleted = NULL, object_added = NULL;
    ks_pod_t *pod = claim_pod("default", "new", "data");
    ks_pod_t *gone;
    uint32_t n, i;
    int node_add = 0;
    n = f.p->events_to_register_v2(f.self, ev, 8);
    ck_assert_uint_eq(n, 3);
    for (i = 0; i < n; i++) {
        if (ev[i].event.resource == KS_RES_POD) {
            ck_assert_uint_eq(ev[i].event.action, KS_ACT_DELETE);
            pod_deleted = ev[i].hint;
        } else if (ev[i].event.resource == KS_RES_NODE) {
            ck_assert_uint_eq(ev[i].event.action, KS_ACT_ADD);
            ck_assert(ev[i].hint == NULL);
            node_add = 1;
        } else {
            ck_assert_uint_eq(ev[i].event.resource, KS_RES_OBJECT);
            ck_assert_uint_eq(ev[i].event.action, KS_ACT_ADD);
            object_added = ev[i].hint;
        }
    }
    ck_assert(node_add && pod_deleted != NULL && object_added != NULL);
    ck_assert_uint_eq(f.p->events_to_register(f.self, ev1, 8), 3);
    /* a deleted pod of the namespace using one of the pod's claims, once
     * it was assigned */
    gone = claim_pod("default", "old", "data");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE);
    gone = claim_pod("default", "old", "logs");
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    gone = claim_pod("prod", "old", "data");
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    /* a claim the pod uses, added in its namespace */
    put_pvc("default", "data", "ReadWriteOncePod");
    put_pvc("default", "logs", "ReadWriteOncePod");
    put_pvc("prod", "data", "ReadWriteOncePod");
    ck_assert_int_eq(object_added(f.self, pod, NULL,
                                  api->object_get(pvcs, "default", "data")),
                     KS_QUEUE);
    ck_assert_int_eq(object_added(f.self, pod, NULL,
                                  api->object_get(pvcs, "default", "logs")),
                     KS_QUEUE_SKIP);
    ck_assert_int_eq(object_added(f.self, pod, NULL,
                                  api->object_get(pvcs, "prod", "data")),
                     KS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

/* Batching: a pod with a claim depends on other nodes' pods. */
START_TEST(signature)
{
    fixture_t f = fx_new();
    ck_assert(f.p->sign != NULL);
    ck_assert_int_eq(f.p->sign(f.self, claim_pod("default", "p", "data"),
                               NULL),
                     KS_UNSCHEDULABLE);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("VolumeRestrictions");
    TCase *tc = tcase_create("rwop");
    tcase_add_test(tc, rwop_claim_in_use);
    tcase_add_test(tc, rwop_claim_free);
    tcase_add_test(tc, missing_claims);
    tcase_add_test(tc, add_and_remove_pod);
    tcase_add_test(tc, no_prefilter_state);
    tcase_add_test(tc, hints);
    tcase_add_test(tc, signature);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
