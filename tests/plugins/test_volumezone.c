/*
 * VolumeZone: the zones of the bound PersistentVolumes a pod's claims use,
 * read through the host's stores of declared resources (ABI 1.3), against
 * the nodes' zone labels; upstream v1.36's messages for missing objects.
 */
#include "plugin_test.h"

#define ZONE "topology.kubernetes.io/zone"
#define REGION "topology.kubernetes.io/region"
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define CONFLICT "node(s) had no available volume zone"

static const ks_plugin_t *load_vz(void)
{
    const ks_plugin_t *p = mock_plugin_load("VolumeZone");
    ck_assert_msg(p != NULL, "cannot load %s", mock_plugin_path("VolumeZone"));
    ck_assert_str_eq(p->name, "VolumeZone");
    ck_assert_uint_eq(p->abi_minor, 3);
    ck_assert(KS_PLUGIN_HAS(p, resources));
    ck_assert_uint_eq(p->n_resources, 3);
    return p;
}

static void put_pvc(const char *ns, const char *name, const char *volume,
                    const char *sc)
{
    char buf[1024], vol[256] = "", cls[256] = "";
    if (volume != NULL)
        snprintf(vol, sizeof vol, "\"volumeName\":\"%s\"", volume);
    if (sc != NULL)
        snprintf(cls, sizeof cls, "%s\"storageClassName\":\"%s\"",
                 volume ? "," : "", sc);
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{%s%s}}",
             name, ns, vol, cls);
    mock_object_put("v1", "PersistentVolumeClaim", buf);
}

static void put_pv(const char *name, const char *labels_json)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}",
             name, labels_json);
    mock_object_put("v1", "PersistentVolume", buf);
}

static void put_sc(const char *name, const char *mode)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
             "\"metadata\":{\"name\":\"%s\"}%s%s%s}",
             name, mode ? ",\"volumeBindingMode\":\"" : "", mode ? mode : "",
             mode ? "\"" : "");
    mock_object_put("storage.k8s.io/v1", "StorageClass", buf);
}

static ks_node_info_t *zoned(const char *name, const char *key,
                             const char *zone)
{
    ks_node_t *n = mock_node_new(name, 4000, 8 * GI, 110);
    if (key != NULL)
        mock_node_add_label(n, key, zone);
    return mock_nodeinfo_new(n);
}

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
    f.p = load_vz();
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

static ks_code_t run(fixture_t *f, const ks_pod_t *pod,
                     const ks_node_info_t *ni)
{
    return mock_prefilter_filter(f->mh, f->p, f->self, pod, ni, f->st);
}

START_TEST(bound_claim_pins_the_zone)
{
    fixture_t f = fx_new();
    ks_node_info_t *a = zoned("a", ZONE, "z1"), *b = zoned("b", ZONE, "z2");
    ks_node_info_t *beta = zoned("beta", BETA_ZONE, "z1");
    ks_node_info_t *bare = zoned("bare", NULL, NULL);
    ks_node_info_t *region = zoned("region", REGION, "r1");
    ks_node_info_t *nis[5] = {a, b, beta, bare, region};
    ks_pod_t *pod = mock_pod_new("shop", "web-0", 100, 0);
    ks_pod_t *none = mock_pod_new("shop", "none", 100, 0);
    mock_host_set_nodes(f.mh, nis, 5);
    put_pvc("shop", "data", "pv-1", NULL);
    put_pv("pv-1", "\"" ZONE "\":\"z1\"");
    mock_pod_add_volume(pod, "data", KS_VOLUME_PVC, "data");
    ck_assert_int_eq(run(&f, pod, a), KS_SUCCESS);
    ck_assert_int_eq(run(&f, pod, b), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st), CONFLICT);
    /* a node with only the beta label matches a GA-labelled PV? No: the
     * GA key is looked up, then its own GA translation (itself). */
    ck_assert_int_eq(run(&f, pod, beta), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    /* no zone or region label at all: fits (a single-zone cluster) */
    ck_assert_int_eq(run(&f, pod, bare), KS_SUCCESS);
    /* a region label but not the zone: the zone is missing, rejected */
    ck_assert_int_eq(run(&f, pod, region), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    /* no volumes: PreFilter skips */
    ck_assert_int_eq(run(&f, none, b), KS_SUCCESS);
    fx_free(&f);
}
END_TEST

START_TEST(beta_labels_and_zone_sets)
{
    fixture_t f = fx_new();
    ks_node_info_t *a = zoned("a", ZONE, "z1"), *b = zoned("b", ZONE, "z2");
    ks_node_info_t *c = zoned("c", ZONE, "z3");
    ks_node_info_t *beta2 = zoned("beta2", BETA_ZONE, "z2");
    ks_node_info_t *nis[4] = {a, b, c, beta2};
    ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
    ks_pod_t *bad = mock_pod_new("default", "bad", 100, 0);
    mock_host_set_nodes(f.mh, nis, 4);
    /* a beta-labelled PV in two zones, "__"-separated with spaces */
    put_pvc("default", "multi", "pv-m", NULL);
    put_pv("pv-m", "\"" BETA_ZONE "\":\" z1 __z2\"");
    mock_pod_add_volume(pod, "v", KS_VOLUME_PVC, "multi");
    ck_assert_int_eq(run(&f, pod, a), KS_SUCCESS);     /* GA fallback */
    ck_assert_int_eq(run(&f, pod, b), KS_SUCCESS);
    ck_assert_int_eq(run(&f, pod, beta2), KS_SUCCESS); /* beta itself */
    ck_assert_int_eq(run(&f, pod, c), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    /* an empty element: the label is ignored, nothing to check: Skip */
    put_pvc("default", "broken", "pv-b", NULL);
    put_pv("pv-b", "\"" ZONE "\":\"z1____z2\"");
    mock_pod_add_volume(bad, "v", KS_VOLUME_PVC, "broken");
    ck_assert_int_eq(run(&f, bad, c), KS_SUCCESS);
    fx_free(&f);
}
END_TEST

START_TEST(unbound_claims)
{
    fixture_t f = fx_new();
    ks_node_info_t *b = zoned("b", ZONE, "z2");
    ks_node_info_t *nis[1] = {b};
    ks_pod_t *wffc = mock_pod_new("default", "wffc", 100, 0);
    ks_pod_t *imm = mock_pod_new("default", "imm", 100, 0);
    ks_pod_t *nosc = mock_pod_new("default", "nosc", 100, 0);
    ks_pod_t *gone = mock_pod_new("default", "gone", 100, 0);
    ks_pod_t *unset = mock_pod_new("default", "unset", 100, 0);
    mock_host_set_nodes(f.mh, nis, 1);
    put_sc("late", "WaitForFirstConsumer");
    put_sc("now", "Immediate");
    put_sc("unset", NULL);
    put_pvc("default", "c-late", NULL, "late");
    put_pvc("default", "c-now", NULL, "now");
    put_pvc("default", "c-none", NULL, NULL);
    put_pvc("default", "c-gone", NULL, "missing");
    put_pvc("default", "c-unset", NULL, "unset");
    mock_pod_add_volume(wffc, "v", KS_VOLUME_PVC, "c-late");
    ck_assert_int_eq(run(&f, wffc, b), KS_SUCCESS);
    mock_pod_add_volume(imm, "v", KS_VOLUME_PVC, "c-now");
    ck_assert_int_eq(run(&f, imm, b), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st), "PersistentVolume had no name");
    mock_pod_add_volume(nosc, "v", KS_VOLUME_PVC, "c-none");
    ck_assert_int_eq(run(&f, nosc, b), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "PersistentVolumeClaim had no pv name and storageClass "
                     "name");
    mock_pod_add_volume(gone, "v", KS_VOLUME_PVC, "c-gone");
    ck_assert_int_eq(run(&f, gone, b), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "storageclass.storage.k8s.io \"missing\" not found");
    mock_pod_add_volume(unset, "v", KS_VOLUME_PVC, "c-unset");
    ck_assert_int_eq(run(&f, unset, b), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "VolumeBindingMode not set for StorageClass \"unset\"");
    /* the beta annotation wins over spec.storageClassName */
    mock_object_put("v1", "PersistentVolumeClaim",
                    "{\"metadata\":{\"name\":\"c-ann\",\"namespace\":"
                    "\"default\",\"annotations\":{\"volume.beta.kubernetes.io"
                    "/storage-class\":\"late\"}},\"spec\":{"
                    "\"storageClassName\":\"now\"}}");
    {
        ks_pod_t *ann = mock_pod_new("default", "ann", 100, 0);
        mock_pod_add_volume(ann, "v", KS_VOLUME_PVC, "c-ann");
        ck_assert_int_eq(run(&f, ann, b), KS_SUCCESS);
    }
    fx_free(&f);
}
END_TEST

START_TEST(missing_objects)
{
    fixture_t f = fx_new();
    ks_node_info_t *a = zoned("a", ZONE, "z1");
    ks_node_info_t *nis[1] = {a};
    ks_pod_t *p1 = mock_pod_new("default", "p1", 100, 0);
    ks_pod_t *p2 = mock_pod_new("default", "p2", 100, 0);
    ks_pod_t *p3 = mock_pod_new("default", "p3", 100, 0);
    ks_pod_t *p4 = mock_pod_new("other", "p4", 100, 0);
    ks_pod_t *eph = mock_pod_new("default", "eph", 100, 0);
    mock_host_set_nodes(f.mh, nis, 1);
    mock_pod_add_volume(p1, "v", KS_VOLUME_PVC, "nope");
    ck_assert_int_eq(run(&f, p1, a), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolumeclaim \"nope\" not found");
    put_pvc("default", "dangling", "pv-gone", NULL);
    mock_pod_add_volume(p2, "v", KS_VOLUME_PVC, "dangling");
    ck_assert_int_eq(run(&f, p2, a), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolume \"pv-gone\" not found");
    mock_pod_add_volume(p3, "v", KS_VOLUME_PVC, "");
    ck_assert_int_eq(run(&f, p3, a), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "PersistentVolumeClaim had no name");
    /* claims are looked up in the pod's namespace */
    mock_pod_add_volume(p4, "v", KS_VOLUME_PVC, "dangling");
    ck_assert_int_eq(run(&f, p4, a), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "persistentvolumeclaim \"dangling\" not found");
    /* ephemeral volumes are not VolumeZone's (upstream reads claims only) */
    mock_pod_add_volume(eph, "scratch", KS_VOLUME_EPHEMERAL, "eph-scratch");
    ck_assert_int_eq(run(&f, eph, a), KS_SUCCESS);
    /* an object that appears later is seen at once */
    put_pv("pv-gone", "\"" ZONE "\":\"z1\"");
    ck_assert_int_eq(run(&f, p2, a), KS_SUCCESS);
    ck_assert_int_eq(mock_object_delete("v1", "PersistentVolume", NULL,
                                        "pv-gone"), 0);
    ck_assert_int_eq(run(&f, p2, a), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    fx_free(&f);
}
END_TEST

/* The host API as a plugin sees it: only declared resources have a
 * store; views read by field path. */
START_TEST(host_api_views)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    const ks_store_t *pvs;
    const ks_object_t *o;
    const char *s = NULL;
    ks_labels_t l;
    ck_assert(KS_API_HAS(api, object_map_iterate));
    pvs = api->store_get(f.mh->handle, "", "v1", "persistentvolumes");
    /* the fixture's own handle declared nothing */
    ck_assert_ptr_null(pvs);
    ck_assert_ptr_null(api->store_get(f.mh->handle, "", "v1", "secrets"));
    put_pv("pv-1", "\"" ZONE "\":\"z1\"");
    {
        /* a store a plugin declared, found through its handle */
        struct ks_handle *h = NULL;
        size_t i;
        for (i = 0; i < f.mh->fw->n_insts; i++)
            if (f.mh->fw->insts[i]->self == f.self)
                h = &f.mh->fw->insts[i]->handle;
        ck_assert_ptr_nonnull(h);
        pvs = api->store_get(h, "", "v1", "persistentvolumes");
        ck_assert_ptr_nonnull(pvs);
        ck_assert_ptr_null(api->store_get(h, "", "v1", "secrets"));
    }
    ck_assert_uint_eq(api->store_count(pvs), 1);
    o = api->object_get(pvs, NULL, "pv-1");
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(api->object_name(o), "pv-1");
    ck_assert_str_eq(api->object_namespace(o), "");
    ck_assert_str_eq(api->object_uid(o), "");
    l = api->object_labels(o);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_ptr_eq(l.items[0].value, mock_intern("z1"));
    ck_assert_int_eq(api->object_string(o, "kind", &s), KS_FIELD_OK);
    ck_assert_str_eq(s, "PersistentVolume");
    ck_assert_int_eq(api->object_string(o, "metadata.labels[\"" ZONE "\"]",
                                        &s), KS_FIELD_OK);
    ck_assert_str_eq(s, "z1");
    ck_assert_int_eq(api->object_type(o, "spec"), KS_FIELD_ABSENT);
    ck_assert_int_eq(api->object_type(o, "spec..x"), KS_FIELD_INVALID);
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

/* QueueingHints for the declared resources' events (KS_RES_OBJECT). */
START_TEST(hints_for_objects)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    ks_handle_t *h = handle_of(&f);
    const ks_store_t *pvcs = api->store_get(h, "", "v1",
                                            "persistentvolumeclaims");
    const ks_store_t *pvs = api->store_get(h, "", "v1", "persistentvolumes");
    const ks_store_t *scs = api->store_get(h, "storage.k8s.io", "v1",
                                           "storageclasses");
    ks_cluster_event_hint_t ev[4];
    ks_queueing_hint_fn hint = NULL;
    ks_pod_t *pod = mock_pod_new("shop", "web-0", 100, 0);
    const ks_object_t *mine, *other, *elsewhere, *pv1, *pv1b, *pv2;
    uint32_t n, i;
    mock_pod_add_volume(pod, "data", KS_VOLUME_PVC, "data");
    n = f.p->events_to_register_v2(f.self, ev, 4);
    ck_assert_uint_eq(n, 2);
    for (i = 0; i < n; i++)
        if (ev[i].event.resource == KS_RES_OBJECT) {
            ck_assert_uint_eq(ev[i].event.action, KS_ACT_ADD | KS_ACT_UPDATE);
            hint = ev[i].hint;
        }
    ck_assert(hint != NULL);
    put_pvc("shop", "data", NULL, "x");
    put_pvc("shop", "logs", NULL, "x");
    put_pvc("prod", "data", NULL, "x");
    mine = api->object_get(pvcs, "shop", "data");
    other = api->object_get(pvcs, "shop", "logs");
    elsewhere = api->object_get(pvcs, "prod", "data");
    /* list items carry no kind: the host sets it */
    ck_assert_int_eq(hint(f.self, pod, NULL, mine), KS_QUEUE);
    ck_assert_int_eq(hint(f.self, pod, other, mine), KS_QUEUE);
    ck_assert_int_eq(hint(f.self, pod, NULL, other), KS_QUEUE_SKIP);
    ck_assert_int_eq(hint(f.self, pod, NULL, elsewhere), KS_QUEUE_SKIP);
    /* volumes: a new one queues; an update only when its zone changed */
    put_pv("pv-1", "\"" ZONE "\":\"z1\"");
    pv1 = api->object_get(pvs, NULL, "pv-1");
    put_pv("pv-2", "\"" ZONE "\":\"z1\",\"other\":\"x\"");
    pv1b = api->object_get(pvs, NULL, "pv-2");
    put_pv("pv-3", "\"" ZONE "\":\"z2\"");
    pv2 = api->object_get(pvs, NULL, "pv-3");
    ck_assert_int_eq(hint(f.self, pod, NULL, pv1), KS_QUEUE);
    ck_assert_int_eq(hint(f.self, pod, pv1, pv1b), KS_QUEUE_SKIP);
    ck_assert_int_eq(hint(f.self, pod, pv1, pv2), KS_QUEUE);
    /* classes: only a new WaitForFirstConsumer one */
    put_sc("late", "WaitForFirstConsumer");
    put_sc("now", "Immediate");
    ck_assert_int_eq(hint(f.self, pod, NULL, api->object_get(scs, NULL, "late")),
                     KS_QUEUE);
    ck_assert_int_eq(hint(f.self, pod, NULL, api->object_get(scs, NULL, "now")),
                     KS_QUEUE_SKIP);
    ck_assert_int_eq(hint(f.self, pod, api->object_get(scs, NULL, "late"),
                          api->object_get(scs, NULL, "late")),
                     KS_QUEUE_SKIP);
    ck_assert_int_eq(hint(f.self, pod, mine, NULL), KS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("VolumeZone");
    TCase *tc = tcase_create("filter");
    tcase_add_test(tc, bound_claim_pins_the_zone);
    tcase_add_test(tc, beta_labels_and_zone_sets);
    tcase_add_test(tc, unbound_claims);
    tcase_add_test(tc, missing_objects);
    tcase_add_test(tc, host_api_views);
    tcase_add_test(tc, hints_for_objects);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
