/*
 * NodeVolumeLimits: CSINode attach limits against the unique volumes of
 * the node's pods, its VolumeAttachments and the new pod; unbound claims
 * through their StorageClass; in-tree PersistentVolumes counted as their
 * CSI driver (csi-translation-lib's names and handles); generic ephemeral
 * volumes; inline in-tree volumes written in the pod (the pod view's
 * volume_inline, ABI 1.4) counted as their CSI driver; upstream v1.36's
 * messages and hints.
 */
#include "plugin_test.h"

#define MAX_VOLUMES "node(s) exceed max volume count"
#define SA "storage.k8s.io/v1"
#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"

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
    f.p = mock_plugin_load("NodeVolumeLimits");
    ck_assert_msg(f.p != NULL, "cannot load %s",
                  mock_plugin_path("NodeVolumeLimits"));
    ck_assert_str_eq(f.p->name, "NodeVolumeLimits");
    ck_assert_uint_eq(f.p->abi_minor, 3);
    ck_assert(KS_PLUGIN_HAS(f.p, resources));
    ck_assert_uint_eq(f.p->n_resources, 5);
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

/* --- objects ------------------------------------------------------------- */

/* A CSINode; `drivers` is the JSON of spec.drivers' items. */
static void put_csinode(const char *node, const char *drivers)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"" SA "\",\"kind\":\"CSINode\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"drivers\":[%s]}}",
             node, drivers);
    mock_object_put(SA, "CSINode", buf);
}

/* A claim, bound to `volume` and/or of class `sc` (NULL: absent). */
static void put_pvc(const char *ns, const char *name, const char *volume,
                    const char *sc)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{\"volumeName\":\"%s\",\"storageClassName\":%s%s%s}}",
             name, ns, volume ? volume : "", sc ? "\"" : "",
             sc ? sc : "null", sc ? "\"" : "");
    mock_object_put("v1", "PersistentVolumeClaim", buf);
}

/* A volume whose spec is `spec` (JSON members), with `labels` (JSON
 * members, may be ""). */
static void put_pv(const char *name, const char *labels, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},"
             "\"spec\":{%s}}",
             name, labels, spec);
    mock_object_put("v1", "PersistentVolume", buf);
}

/* A CSI volume. */
static void put_csi_pv(const char *name, const char *driver,
                       const char *handle)
{
    char spec[512];
    snprintf(spec, sizeof spec,
             "\"csi\":{\"driver\":\"%s\",\"volumeHandle\":\"%s\"}", driver,
             handle);
    put_pv(name, "", spec);
}

static void put_sc(const char *name, const char *provisioner)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"" SA "\",\"kind\":\"StorageClass\","
             "\"metadata\":{\"name\":\"%s\"},\"provisioner\":\"%s\"}",
             name, provisioner);
    mock_object_put(SA, "StorageClass", buf);
}

static void put_va(const char *name, const char *node, const char *attacher,
                   const char *pv)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"" SA "\",\"kind\":\"VolumeAttachment\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"nodeName\":\"%s\","
             "\"attacher\":\"%s\",\"source\":{\"persistentVolumeName\":"
             "\"%s\"}}}",
             name, node, attacher, pv);
    mock_object_put(SA, "VolumeAttachment", buf);
}

static ks_pod_t *claims_pod(const char *name, const char *c1, const char *c2)
{
    ks_pod_t *p = mock_pod_new("default", name, 100, 0);
    if (c1 != NULL)
        mock_pod_add_volume(p, "v1", KS_VOLUME_PVC, c1);
    if (c2 != NULL)
        mock_pod_add_volume(p, "v2", KS_VOLUME_PVC, c2);
    return p;
}

static ks_node_info_t *node(const char *name)
{
    return mock_nodeinfo_new(mock_node_new(name, 4000, 8 * GI, 110));
}

static ks_code_t run(fixture_t *f, const ks_pod_t *pod,
                     const ks_node_info_t *ni)
{
    return mock_prefilter_filter(f->mh, f->p, f->self, pod, ni, f->st);
}

/* Claims c1..c5 bound to CSI volumes pv1..pv5 of driver csi.a. */
static void csi_claims(void)
{
    char c[8], v[8], h[8];
    int i;
    for (i = 1; i <= 5; i++) {
        snprintf(c, sizeof c, "c%d", i);
        snprintf(v, sizeof v, "pv%d", i);
        snprintf(h, sizeof h, "h%d", i);
        put_csi_pv(v, "csi.a", h);
        put_pvc("default", c, v, NULL);
    }
}

/* --- tests --------------------------------------------------------------- */

START_TEST(limit_reached_or_not)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1"), *n2 = node("n2"), *n3 = node("n3");
    ks_node_info_t *n4 = node("n4");
    ks_node_info_t *nis[4] = {n1, n2, n3, n4};
    csi_claims();
    put_csinode("n1", "{\"name\":\"csi.a\",\"nodeID\":\"i-1\","
                      "\"allocatable\":{\"count\":2}}");
    /* n3: the driver without a count; n4: only another driver's */
    put_csinode("n3", "{\"name\":\"csi.a\",\"nodeID\":\"i-3\"}");
    put_csinode("n4", "{\"name\":\"csi.b\",\"allocatable\":{\"count\":0}}");
    mock_nodeinfo_add_pod(n1, claims_pod("old", "c1", NULL));
    mock_nodeinfo_add_pod(n2, claims_pod("old2", "c1", "c2"));
    mock_nodeinfo_add_pod(n3, claims_pod("old3", "c1", "c2"));
    mock_nodeinfo_add_pod(n4, claims_pod("old4", "c1", "c2"));
    mock_host_set_nodes(f.mh, nis, 4);
    /* 1 used + 1 new = 2: fits */
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", NULL), n1), KS_SUCCESS);
    /* 1 used + 2 new = 3 > 2 */
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c3"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    /* a volume the node's pod already uses is not new: 1 + 1 */
    ck_assert_int_eq(run(&f, claims_pod("p", "c1", "c2"), n1), KS_SUCCESS);
    /* the same claim twice is one volume */
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c2"), n1), KS_SUCCESS);
    /* no CSINode, no count, or only another driver's count: no limit */
    ck_assert_int_eq(run(&f, claims_pod("p", "c3", "c4"), n2), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "c3", "c4"), n3), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "c3", "c4"), n4), KS_SUCCESS);
    /* the limit falls: the node's own pods already pass it */
    put_csinode("n1", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":1}}");
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", NULL), n1),
                     KS_UNSCHEDULABLE);
    /* ... but a pod adding nothing new still fits */
    ck_assert_int_eq(run(&f, claims_pod("p", "c1", NULL), n1), KS_SUCCESS);
    /* a pod without claims: PreFilter skips */
    {
        ks_cycle_state_t *cs = mock_cycle_state_new();
        ks_prefilter_result_t *r = mock_prefilter_result_new();
        ks_pod_t *plain = mock_pod_new("default", "plain", 100, 0);
        mock_pod_add_volume(plain, "cfg", KS_VOLUME_OTHER, NULL);
        ck_assert_int_eq(f.p->pre_filter(f.self, cs, plain, r, f.st),
                         KS_SKIP);
        mock_prefilter_result_free(r);
        mock_cycle_state_free(cs);
    }
    fx_free(&f);
}
END_TEST

/* Filter without PreFilter's state gives the same verdicts. */
START_TEST(filter_without_prefilter)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1");
    ks_cycle_state_t *cs = mock_cycle_state_new();
    csi_claims();
    put_csinode("n1", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":2}}");
    mock_nodeinfo_add_pod(n1, claims_pod("old", "c1", NULL));
    mock_host_set_nodes(f.mh, &n1, 1);
    ck_assert_int_eq(f.p->filter(f.self, cs, claims_pod("p", "c2", NULL), n1,
                                 f.st),
                     KS_SUCCESS);
    ck_assert_int_eq(f.p->filter(f.self, cs, claims_pod("p", "c2", "c3"), n1,
                                 f.st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

/* VolumeAttachments to the node count, once per volume, unless a pod of
 * the node already uses the volume. */
START_TEST(volume_attachments)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1"), *n2 = node("n2");
    ks_node_info_t *nis[2] = {n1, n2};
    csi_claims();
    put_csinode("n1", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":3}}");
    put_csinode("n2", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":3}}");
    mock_nodeinfo_add_pod(n1, claims_pod("old", "c1", NULL));
    mock_host_set_nodes(f.mh, nis, 2);
    /* pv1 (used by the node's pod), pv5 to n2, one without an attacher,
     * one of a volume that is not CSI, one of a volume that is gone */
    put_va("va-1", "n1", "csi.a", "pv1");
    put_va("va-5", "n2", "csi.a", "pv5");
    put_va("va-x", "n1", "", "pv4");
    put_pv("intree", "", "\"hostPath\":{\"path\":\"/x\"}");
    put_va("va-y", "n1", "csi.a", "intree");
    put_va("va-z", "n1", "csi.a", "gone");
    /* used: c1 only; + 2 new = 3 */
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c3"), n1), KS_SUCCESS);
    /* pv4 attached to n1: used 2 + 2 new = 4 > 3 */
    put_va("va-4", "n1", "csi.a", "pv4");
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c3"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    /* n2: pv5's attachment, 1 + 2 = 3 */
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c3"), n2), KS_SUCCESS);
    /* as upstream, an attached volume the new pod uses is still new */
    ck_assert_int_eq(run(&f, claims_pod("p", "c4", "c5"), n2),
                     KS_SUCCESS); /* 1 + 2 = 3 */
    put_va("va-5b", "n2", "csi.a", "pv2");
    ck_assert_int_eq(run(&f, claims_pod("p", "c2", "c5"), n2),
                     KS_UNSCHEDULABLE); /* 2 + 2 = 4 */
    fx_free(&f);
}
END_TEST

/* Unbound claims count under their class's provisioner (translated when
 * it is an in-tree plugin that migrated). */
START_TEST(unbound_claims)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1");
    csi_claims();
    put_csinode("n1", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":2}},"
                      "{\"name\":\"" EBS "\",\"allocatable\":{\"count\":1}}");
    mock_nodeinfo_add_pod(n1, claims_pod("old", "c1", NULL));
    mock_host_set_nodes(f.mh, &n1, 1);
    put_sc("fast", "csi.a");
    put_sc("ebs", "kubernetes.io/aws-ebs");
    put_sc("nfs", "example.com/nfs");
    put_pvc("default", "u1", NULL, "fast");
    put_pvc("default", "u2", NULL, "fast");
    put_pvc("default", "e1", NULL, "ebs");
    put_pvc("default", "e2", NULL, "ebs");
    put_pvc("default", "n", NULL, "nfs");
    put_pvc("default", "noclass", NULL, NULL);
    put_pvc("default", "lost", NULL, "missing");
    put_pvc("default", "prebound", "not-made-yet", "fast");
    /* 1 used + u1 = 2 */
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", NULL), n1), KS_SUCCESS);
    /* two unbound claims are two volumes: 1 + 2 */
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", "u2"), n1),
                     KS_UNSCHEDULABLE);
    /* a claim bound to a volume that does not exist yet: its class */
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", "prebound"), n1),
                     KS_UNSCHEDULABLE);
    /* the in-tree provisioner counts under the EBS CSI driver (limit 1) */
    ck_assert_int_eq(run(&f, claims_pod("p", "e1", NULL), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "e1", "e2"), n1),
                     KS_UNSCHEDULABLE);
    /* no class, a missing class, a driver without a limit: not counted */
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", "noclass"), n1),
                     KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", "lost"), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "u1", "n"), n1), KS_SUCCESS);
    fx_free(&f);
}
END_TEST

/* In-tree PersistentVolumes count as their CSI driver, with
 * csi-translation-lib's handles: the same disk through a CSI PV and an
 * in-tree PV is one volume. */
START_TEST(migrated_in_tree_volumes)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1"), *bare = node("bare");
    ks_node_info_t *nis[2] = {n1, bare};
    put_csinode("n1", "{\"name\":\"" EBS "\",\"allocatable\":{\"count\":1}},"
                      "{\"name\":\"" GCE "\",\"allocatable\":{\"count\":1}},"
                      "{\"name\":\"disk.csi.azure.com\",\"allocatable\":"
                      "{\"count\":0}},"
                      "{\"name\":\"csi.vsphere.vmware.com\",\"allocatable\":"
                      "{\"count\":0}}");
    /* CSI volumes the node's pod uses */
    put_csi_pv("csi-ebs", EBS, "vol-1");
    put_csi_pv("csi-gce", GCE, "projects/UNSPECIFIED/zones/z1/disks/pd-1");
    put_pvc("default", "csi-ebs", "csi-ebs", NULL);
    put_pvc("default", "csi-gce", "csi-gce", NULL);
    mock_nodeinfo_add_pod(n1, claims_pod("old", "csi-ebs", "csi-gce"));
    mock_host_set_nodes(f.mh, nis, 2);
    /* the same EBS disk, in-tree, with the aws:// form of its ID */
    put_pv("tree-ebs-1", "",
           "\"awsElasticBlockStore\":{\"volumeID\":\"aws://z1/vol-1\"}");
    put_pvc("default", "t-ebs-1", "tree-ebs-1", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-ebs-1", NULL), n1),
                     KS_SUCCESS);
    /* another EBS disk: 1 + 1 > 1 */
    put_pv("tree-ebs-2", "",
           "\"awsElasticBlockStore\":{\"volumeID\":\"vol-2\"}");
    put_pvc("default", "t-ebs-2", "tree-ebs-2", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-ebs-2", NULL), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    /* a malformed EBS ID does not translate: not counted */
    put_pv("tree-ebs-bad", "",
           "\"awsElasticBlockStore\":{\"volumeID\":\"aws://z1/disk-3\"}");
    put_pvc("default", "t-ebs-bad", "tree-ebs-bad", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-ebs-bad", NULL), n1),
                     KS_SUCCESS);
    /* GCE PD: the zone label makes the handle; same disk, then another */
    put_pv("tree-gce-1", "\"topology.kubernetes.io/zone\":\"z1\"",
           "\"gcePersistentDisk\":{\"pdName\":\"pd-1\"}");
    put_pvc("default", "t-gce-1", "tree-gce-1", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-gce-1", NULL), n1),
                     KS_SUCCESS);
    put_pv("tree-gce-2",
           "\"failure-domain.beta.kubernetes.io/zone\":"
           "\"us-east1-b__us-east1-c\"",
           "\"gcePersistentDisk\":{\"pdName\":\"pd-2\"}");
    put_pvc("default", "t-gce-2", "tree-gce-2", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-gce-2", NULL), n1),
                     KS_UNSCHEDULABLE);
    /* Azure Disk is migrated (count 0 rejects it); vSphere is not */
    put_pv("tree-az", "", "\"azureDisk\":{\"diskName\":\"d\",\"diskURI\":"
                          "\"/subscriptions/x/disks/d\"}");
    put_pvc("default", "t-az", "tree-az", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-az", NULL), n1),
                     KS_UNSCHEDULABLE);
    put_pv("tree-vs", "", "\"vsphereVolume\":{\"volumePath\":\"[ds] v\"}");
    put_pvc("default", "t-vs", "tree-vs", NULL);
    ck_assert_int_eq(run(&f, claims_pod("p", "t-vs", NULL), n1), KS_SUCCESS);
    /* a node without a CSINode: migration is off there, no limit */
    ck_assert_int_eq(run(&f, claims_pod("p", "t-ebs-2", NULL), bare),
                     KS_SUCCESS);
    fx_free(&f);
}
END_TEST

/* Upstream's messages for the pod's own claims. */
START_TEST(missing_and_foreign_claims)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1"), *bare = node("bare");
    ks_node_info_t *nis[2] = {n1, bare};
    ks_pod_t *eph = mock_pod_new("default", "e", 100, 0);
    ks_pod_t *thief = mock_pod_new("default", "t", 100, 0);
    csi_claims();
    put_csinode("n1", "{\"name\":\"csi.a\",\"allocatable\":{\"count\":1}}");
    /* the node's pod has a claim that is gone: not counted */
    mock_nodeinfo_add_pod(n1, claims_pod("old", "vanished", NULL));
    mock_host_set_nodes(f.mh, nis, 2);
    ck_assert_int_eq(run(&f, claims_pod("p", "c1", NULL), n1), KS_SUCCESS);
    /* the pod's own missing claim: every node, limit or not */
    ck_assert_int_eq(run(&f, claims_pod("p", "c1", "nope"), bare),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "looking up PVC default/nope: persistentvolumeclaim "
                     "\"nope\" not found");
    ck_assert_int_eq(run(&f, claims_pod("p", "", NULL), n1), KS_ERROR);
    ck_assert_str_eq(mock_status_text(f.st),
                     "PersistentVolumeClaim had no name");
    /* a generic ephemeral volume: its claim <pod>-<volume>, owned by the
     * pod, counts */
    mock_pod_add_volume(eph, "scratch", KS_VOLUME_EPHEMERAL, "e-scratch");
    ck_assert_int_eq(run(&f, eph, n1), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(mock_status_text(f.st),
                     "looking up PVC default/e-scratch: persistentvolumeclaim "
                     "\"e-scratch\" not found");
    mock_object_put("v1", "PersistentVolumeClaim",
                    "{\"apiVersion\":\"v1\","
                    "\"kind\":\"PersistentVolumeClaim\","
                    "\"metadata\":{\"name\":\"e-scratch\",\"namespace\":"
                    "\"default\",\"ownerReferences\":[{\"kind\":\"Pod\","
                    "\"name\":\"e\",\"uid\":\"default/e\",\"controller\":"
                    "true}]},\"spec\":{\"volumeName\":\"pv1\"}}");
    ck_assert_int_eq(run(&f, eph, n1), KS_SUCCESS);      /* 0 + 1 */
    mock_pod_add_volume(eph, "more", KS_VOLUME_PVC, "c2");
    ck_assert_int_eq(run(&f, eph, n1), KS_UNSCHEDULABLE); /* 0 + 2 */
    /* another pod's ephemeral claim */
    mock_object_put("v1", "PersistentVolumeClaim",
                    "{\"apiVersion\":\"v1\","
                    "\"kind\":\"PersistentVolumeClaim\","
                    "\"metadata\":{\"name\":\"t-scratch\",\"namespace\":"
                    "\"default\",\"ownerReferences\":[{\"kind\":\"Pod\","
                    "\"name\":\"e\",\"uid\":\"default/e\",\"controller\":"
                    "true}]},\"spec\":{\"volumeName\":\"pv1\"}}");
    mock_pod_add_volume(thief, "scratch", KS_VOLUME_EPHEMERAL, "t-scratch");
    ck_assert_int_eq(run(&f, thief, n1), KS_ERROR);
    ck_assert_str_eq(mock_status_text(f.st),
                     "PVC default/t-scratch was not created for pod "
                     "default/t (pod is not owner)");
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

/* upstream v1.36's events and hints. */
START_TEST(hints)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    ks_handle_t *h = handle_of(&f);
    const ks_store_t *pvcs = api->store_get(h, "", "v1",
                                            "persistentvolumeclaims");
    const ks_store_t *csn = api->store_get(h, "storage.k8s.io", "v1",
                                           "csinodes");
    const ks_store_t *vas = api->store_get(h, "storage.k8s.io", "v1",
                                           "volumeattachments");
    ks_cluster_event_hint_t ev[8];
    ks_cluster_event_t ev1[8];
    ks_queueing_hint_fn pod_deleted = NULL, object = NULL;
    ks_pod_t *pod = claims_pod("p", "data", NULL);
    ks_pod_t *plain = mock_pod_new("default", "plain", 100, 0);
    ks_pod_t *gone;
    const ks_object_t *a, *b, *c, *d;
    uint32_t n, i;
    n = f.p->events_to_register_v2(f.self, ev, 8);
    ck_assert_uint_eq(n, 2);
    for (i = 0; i < n; i++) {
        if (ev[i].event.resource == KS_RES_POD) {
            ck_assert_uint_eq(ev[i].event.action, KS_ACT_DELETE);
            pod_deleted = ev[i].hint;
        } else {
            ck_assert_uint_eq(ev[i].event.resource, KS_RES_OBJECT);
            object = ev[i].hint;
        }
    }
    ck_assert(pod_deleted != NULL && object != NULL);
    ck_assert_uint_eq(f.p->events_to_register(f.self, ev1, 8), 2);
    /* an assigned pod with a claim */
    gone = claims_pod("old", "other", NULL);
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE);
    mock_pod_set_node(plain, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, plain, NULL), KS_QUEUE_SKIP);
    /* CSINode: added; a count raised, lowered, a driver added */
    put_csinode("a", "{\"name\":\"x\",\"allocatable\":{\"count\":2}}");
    put_csinode("b", "{\"name\":\"x\",\"allocatable\":{\"count\":3}}");
    put_csinode("c", "{\"name\":\"x\",\"allocatable\":{\"count\":1}}");
    put_csinode("d", "{\"name\":\"x\",\"allocatable\":{\"count\":2}},"
                     "{\"name\":\"y\"}");
    a = api->object_get(csn, NULL, "a");
    b = api->object_get(csn, NULL, "b");
    c = api->object_get(csn, NULL, "c");
    d = api->object_get(csn, NULL, "d");
    ck_assert_int_eq(object(f.self, pod, NULL, a), KS_QUEUE);
    ck_assert_int_eq(object(f.self, pod, a, b), KS_QUEUE);
    ck_assert_int_eq(object(f.self, pod, a, c), KS_QUEUE_SKIP);
    ck_assert_int_eq(object(f.self, pod, a, d), KS_QUEUE_SKIP);
    put_csinode("e", "{\"name\":\"x\",\"allocatable\":{\"count\":2}},"
                     "{\"name\":\"y\",\"allocatable\":{\"count\":1}}");
    ck_assert_int_eq(object(f.self, pod, a,
                            api->object_get(csn, NULL, "e")),
                     KS_QUEUE);
    /* a claim the pod uses was added */
    put_pvc("default", "data", NULL, "x");
    put_pvc("default", "logs", NULL, "x");
    ck_assert_int_eq(object(f.self, pod, NULL,
                            api->object_get(pvcs, "default", "data")),
                     KS_QUEUE);
    ck_assert_int_eq(object(f.self, pod, NULL,
                            api->object_get(pvcs, "default", "logs")),
                     KS_QUEUE_SKIP);
    /* an attachment was deleted: a pod with a claim may fit now */
    put_va("va", "n1", "csi.a", "pv1");
    ck_assert_int_eq(object(f.self, pod, api->object_get(vas, NULL, "va"),
                            NULL),
                     KS_QUEUE);
    ck_assert_int_eq(object(f.self, plain, api->object_get(vas, NULL, "va"),
                            NULL),
                     KS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

/* --- inline in-tree volumes ---------------------------------------------- */

/* A pod with inline in-tree volumes of `kind` (ids id1, id2; NULL: none). */
static ks_pod_t *inline_pod(const char *name, ks_inline_kind_t kind,
                            const char *id1, const char *id2)
{
    ks_pod_t *p = mock_pod_new("default", name, 100, 0);
    const char *ids[2] = {id1, id2};
    int i;
    for (i = 0; i < 2; i++) {
        ks_volume_inline_t vi = {kind, 0, ids[i], NULL, NULL, NULL, 0};
        char vname[8];
        if (ids[i] == NULL)
            continue;
        if (kind == KS_INLINE_AZURE_DISK) {
            /* the handle is the disk URI */
            static char uri[2][128];
            snprintf(uri[i], sizeof uri[i],
                     "/subscriptions/s/resourceGroups/g/providers/"
                     "Microsoft.Compute/disks/%s",
                     ids[i]);
            vi.disk_uri = uri[i];
        }
        snprintf(vname, sizeof vname, "d%d", i);
        mock_pod_add_inline_volume(p, vname, &vi);
    }
    return p;
}

/* Inline volumes of each migrated plugin count under their CSI driver with
 * the translated handle: the same disk inline and through a CSI PV is one
 * volume; iSCSI and RBD (no translator) are not counted; a node without a
 * CSINode counts nothing. */
START_TEST(inline_volumes)
{
    static const struct {
        ks_inline_kind_t kind;
        const char *driver;
        const char *handle1; /* the CSI handle of id "a1" */
    } kinds[] = {
        {KS_INLINE_GCE_PD, GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/"
                                "disks/a1"},
        {KS_INLINE_AWS_EBS, EBS, "a1"},
        {KS_INLINE_AZURE_DISK, "disk.csi.azure.com",
         "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/"
         "disks/a1"},
        {KS_INLINE_CINDER, "cinder.csi.openstack.org", "a1"},
        {KS_INLINE_PORTWORX, "pxd.portworx.com", "a1"},
    };
    uint32_t k;
    for (k = 0; k < 5; k++) {
        fixture_t f = fx_new();
        ks_node_info_t *n1 = node("n1"), *n2 = node("n2");
        ks_node_info_t *nis[2] = {n1, n2};
        ks_inline_kind_t kind = kinds[k].kind;
        char drivers[256];
        snprintf(drivers, sizeof drivers,
                 "{\"name\":\"%s\",\"allocatable\":{\"count\":2}}",
                 kinds[k].driver);
        put_csinode("n1", drivers);
        mock_nodeinfo_add_pod(n1, inline_pod("old", kind, "a1", NULL));
        mock_host_set_nodes(f.mh, nis, 2);
        /* 1 used + 1 new */
        ck_assert_int_eq(run(&f, inline_pod("p", kind, "a2", NULL), n1),
                         KS_SUCCESS);
        /* 1 used + 2 new > 2 */
        ck_assert_int_eq(run(&f, inline_pod("p", kind, "a2", "a3"), n1),
                         KS_UNSCHEDULABLE);
        ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
        /* the node's pod's disk is not new: 1 + 1 */
        ck_assert_int_eq(run(&f, inline_pod("p", kind, "a1", "a2"), n1),
                         KS_SUCCESS);
        /* the same disk through a CSI PV (the translated handle) */
        put_csi_pv("csi-a1", kinds[k].driver, kinds[k].handle1);
        put_pvc("default", "c-a1", "csi-a1", NULL);
        {
            ks_pod_t *p = inline_pod("p", kind, "a2", NULL);
            mock_pod_add_volume(p, "c", KS_VOLUME_PVC, "c-a1");
            ck_assert_int_eq(run(&f, p, n1), KS_SUCCESS);
        }
        /* no CSINode: not counted */
        ck_assert_int_eq(run(&f, inline_pod("p", kind, "a2", "a3"), n2),
                         KS_SUCCESS);
        fx_free(&f);
    }
    {
        fixture_t f = fx_new();
        ks_node_info_t *n1 = node("n1");
        ks_cycle_state_t *cs = mock_cycle_state_new();
        ks_prefilter_result_t *r = mock_prefilter_result_new();
        put_csinode("n1", "{\"name\":\"" GCE "\",\"allocatable\":"
                          "{\"count\":0}}");
        mock_host_set_nodes(f.mh, &n1, 1);
        /* iSCSI, RBD: no CSI translation, PreFilter skips */
        ck_assert_int_eq(f.p->pre_filter(f.self, cs,
                                         inline_pod("i", KS_INLINE_ISCSI,
                                                    "iqn", NULL),
                                         r, f.st),
                         KS_SKIP);
        ck_assert_int_eq(f.p->pre_filter(f.self, cs,
                                         inline_pod("r", KS_INLINE_RBD,
                                                    "img", NULL),
                                         r, f.st),
                         KS_SKIP);
        /* a GCE PD with a limit of 0 */
        ck_assert_int_eq(run(&f, inline_pod("g", KS_INLINE_GCE_PD, "x",
                                            NULL),
                             n1),
                         KS_UNSCHEDULABLE);
        mock_prefilter_result_free(r);
        mock_cycle_state_free(cs);
        fx_free(&f);
    }
}
END_TEST

/* An EBS volume ID in the aws:// form is translated to its path; a
 * malformed one fails the translation: an Error on a node with a CSINode
 * (upstream checkAttachableInlineVolume), nothing on one without. */
START_TEST(inline_ebs_translation)
{
    fixture_t f = fx_new();
    ks_node_info_t *n1 = node("n1"), *n2 = node("n2");
    ks_node_info_t *nis[2] = {n1, n2};
    put_csinode("n1", "{\"name\":\"" EBS "\",\"allocatable\":"
                      "{\"count\":1}}");
    mock_nodeinfo_add_pod(n1, inline_pod("old", KS_INLINE_AWS_EBS,
                                         "vol-1", NULL));
    mock_host_set_nodes(f.mh, nis, 2);
    /* aws://zone/vol-1 is vol-1: not new */
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_AWS_EBS,
                                        "aws://us-east-1a/vol-1", NULL),
                         n1),
                     KS_SUCCESS);
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_AWS_EBS,
                                        "aws://us-east-1a/vol-2", NULL),
                         n1),
                     KS_UNSCHEDULABLE);
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_AWS_EBS,
                                        "aws://us-east-1a/bad", NULL),
                         n1),
                     KS_ERROR);
    ck_assert_str_eq(mock_status_text(f.st),
                     "converting volume(d0) from inline to csi: failed to "
                     "translate Kubernetes ID to EBS Volume ID Invalid "
                     "format for AWS volume (aws://us-east-1a/bad)");
    mock_status_reset(f.st);
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_AWS_EBS,
                                        "aws://us-east-1a/bad", NULL),
                         n2),
                     KS_SUCCESS);
    fx_free(&f);
}
END_TEST

/* Hints: a deleted pod with an inline volume that translates queues; a
 * deleted attachment queues a pod with an inline volume of its driver. */
START_TEST(inline_hints)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    const ks_store_t *vas = api->store_get(handle_of(&f), "storage.k8s.io",
                                           "v1", "volumeattachments");
    ks_cluster_event_hint_t ev[8];
    ks_queueing_hint_fn pod_deleted = NULL, object = NULL;
    ks_pod_t *pod = inline_pod("p", KS_INLINE_GCE_PD, "a", NULL);
    ks_pod_t *gone;
    uint32_t n, i;
    n = f.p->events_to_register_v2(f.self, ev, 8);
    for (i = 0; i < n; i++) {
        if (ev[i].event.resource == KS_RES_POD)
            pod_deleted = ev[i].hint;
        else
            object = ev[i].hint;
    }
    ck_assert(pod_deleted != NULL && object != NULL);
    gone = inline_pod("old", KS_INLINE_CINDER, "c", NULL);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE);
    gone = inline_pod("old", KS_INLINE_ISCSI, "iqn", NULL);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    put_va("va-gce", "n1", GCE, "pv1");
    put_va("va-ebs", "n1", EBS, "pv1");
    ck_assert_int_eq(object(f.self, pod, api->object_get(vas, NULL, "va-gce"),
                            NULL),
                     KS_QUEUE);
    ck_assert_int_eq(object(f.self, pod, api->object_get(vas, NULL, "va-ebs"),
                            NULL),
                     KS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

/* --- upstream v1.24's EBSLimits, GCEPDLimits, AzureDiskLimits ---------- */

/* A fixture for one of the in-tree limit plugins, built beside
 * NodeVolumeLimits (NodeVolumeLimits/<lower name>.so). */
static fixture_t nc_new(const char *name, const char *file)
{
    fixture_t f;
    char path[4096];
    const char *dir = getenv("KS_TEST_PLUGIN_DIR");
    ck_assert_ptr_nonnull(dir);
    snprintf(path, sizeof path, "%s/NodeVolumeLimits/%s", dir, file);
    f.mh = mock_host_new();
    f.p = mock_plugin_open(path);
    ck_assert_msg(f.p != NULL, "cannot load %s", path);
    ck_assert_str_eq(f.p->name, name);
    ck_assert_str_eq(f.p->version, "1.24.1-ks1");
    ck_assert(f.p->pre_filter == NULL); /* v1.24 had none */
    ck_assert_uint_eq(f.p->n_resources, 4);
    f.self = pt_create(f.mh, f.p, NULL);
    f.st = mock_status_new();
    mock_objects_clear();
    return f;
}

/* Claims t1..tn bound to in-tree volumes `source` with ID <prefix><i>. */
static void in_tree_claims(int n, const char *source, const char *id_field,
                           const char *prefix)
{
    char c[16], v[16], spec[256];
    int i;
    for (i = 1; i <= n; i++) {
        snprintf(c, sizeof c, "t%d", i);
        snprintf(v, sizeof v, "tv%d", i);
        snprintf(spec, sizeof spec, "\"%s\":{\"%s\":\"%s%d\"}", source,
                 id_field, prefix, i);
        put_pv(v, "", spec);
        put_pvc("default", c, v, NULL);
    }
}

static ks_node_info_t *limited_node(const char *name, const char *key,
                                    int64_t limit)
{
    ks_node_t *n = mock_node_new(name, 4000, 8 * GI, 110);
    if (key != NULL)
        mock_resources_set(&n->allocatable, key, limit);
    return mock_nodeinfo_new(n);
}

START_TEST(ebs_limits)
{
    fixture_t f = nc_new("EBSLimits", "ebslimits.so");
    ks_node_info_t *n1 = limited_node("n1", "attachable-volumes-aws-ebs", 2);
    ks_node_info_t *mig = limited_node("mig", "attachable-volumes-aws-ebs", 0);
    ks_node_info_t *nis[2] = {n1, mig};
    ks_cluster_event_t ev[4];
    in_tree_claims(4, "awsElasticBlockStore", "volumeID", "vol-");
    csi_claims(); /* CSI volumes: not this plugin's */
    mock_nodeinfo_add_pod(n1, claims_pod("old", "t1", "c1"));
    mock_host_set_nodes(f.mh, nis, 2);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "c2"), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "t3"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    /* the volume the node's pod mounts is not new */
    ck_assert_int_eq(run(&f, claims_pod("p", "t1", "t2"), n1), KS_SUCCESS);
    /* unbound claims of the EBS provisioner's class count, others not;
     * so does one bound to a volume that is gone */
    put_sc("ebs", "kubernetes.io/aws-ebs");
    put_sc("other", "ebs.csi.aws.com");
    put_pvc("default", "u-ebs", NULL, "ebs");
    put_pvc("default", "u-other", NULL, "other");
    put_pvc("default", "gone", "no-such-pv", "ebs");
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "u-ebs"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "u-other"), n1),
                     KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "gone"), n1),
                     KS_UNSCHEDULABLE);
    /* migrated on the node (v1.24: the CSINode's annotation): skipped */
    mock_object_put(SA, "CSINode",
                    "{\"apiVersion\":\"" SA "\",\"kind\":\"CSINode\","
                    "\"metadata\":{\"name\":\"mig\",\"annotations\":{"
                    "\"storage.alpha.kubernetes.io/migrated-plugins\":"
                    "\"kubernetes.io/gce-pd,kubernetes.io/aws-ebs\"}},"
                    "\"spec\":{\"drivers\":[]}}");
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", NULL), mig), KS_SUCCESS);
    mock_object_put(SA, "CSINode",
                    "{\"apiVersion\":\"" SA "\",\"kind\":\"CSINode\","
                    "\"metadata\":{\"name\":\"mig\",\"annotations\":{"
                    "\"storage.alpha.kubernetes.io/migrated-plugins\":"
                    "\"kubernetes.io/gce-pd\"}},\"spec\":{\"drivers\":[]}}");
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", NULL), mig),
                     KS_UNSCHEDULABLE);
    /* v1.24: the pod's own missing claim is an Error */
    ck_assert_int_eq(run(&f, claims_pod("p", "nope", NULL), n1), KS_ERROR);
    ck_assert_str_eq(mock_status_text(f.st),
                     "looking up PVC default/nope: persistentvolumeclaim "
                     "\"nope\" not found");
    ck_assert_uint_eq(f.p->events_to_register(f.self, ev, 4), 2);
    fx_free(&f);
}
END_TEST

/* The default limits: 25 EBS volumes on Nitro instance types, 39 on
 * others; KUBE_MAX_PD_VOLS (read at create) replaces them. */
START_TEST(ebs_default_limits)
{
    fixture_t f = nc_new("EBSLimits", "ebslimits.so");
    ks_node_t *nitro = mock_node_new("nitro", 4000, 8 * GI, 110);
    ks_node_t *older = mock_node_new("older", 4000, 8 * GI, 110);
    ks_node_info_t *a, *b, *nis[2];
    ks_pod_t *old = mock_pod_new("default", "old", 100, 0);
    ks_pod_t *old2 = mock_pod_new("default", "old2", 100, 0);
    ks_pod_t *pod = claims_pod("p", "t26", NULL);
    void *one;
    char c[16];
    int i;
    mock_node_add_label(nitro, "node.kubernetes.io/instance-type",
                        "m5.large");
    mock_node_add_label(older, "beta.kubernetes.io/instance-type",
                        "m4.large");
    a = mock_nodeinfo_new(nitro);
    b = mock_nodeinfo_new(older);
    nis[0] = a;
    nis[1] = b;
    in_tree_claims(26, "awsElasticBlockStore", "volumeID", "vol-");
    for (i = 1; i <= 25; i++) {
        snprintf(c, sizeof c, "t%d", i);
        mock_pod_add_volume(old, c, KS_VOLUME_PVC, c);
        mock_pod_add_volume(old2, c, KS_VOLUME_PVC, c);
    }
    mock_nodeinfo_add_pod(a, old);
    mock_nodeinfo_add_pod(b, old2);
    mock_host_set_nodes(f.mh, nis, 2);
    ck_assert_int_eq(run(&f, pod, a), KS_UNSCHEDULABLE); /* 26 > 25 */
    ck_assert_int_eq(run(&f, pod, b), KS_SUCCESS);       /* 26 <= 39 */
    setenv("KUBE_MAX_PD_VOLS", "30", 1);
    one = pt_create(f.mh, f.p, NULL);
    unsetenv("KUBE_MAX_PD_VOLS");
    ck_assert_int_eq(mock_prefilter_filter(f.mh, f.p, one, pod, a, f.st),
                     KS_SUCCESS);
    f.p->destroy(one);
    fx_free(&f);
}
END_TEST

START_TEST(gce_pd_and_azure_disk_limits)
{
    fixture_t f = nc_new("GCEPDLimits", "gcepdlimits.so");
    fixture_t g;
    ks_node_info_t *n1 = limited_node("n1", "attachable-volumes-gce-pd", 1);
    ks_node_info_t *n2 = limited_node("n2", NULL, 0); /* default 16 */
    ks_node_info_t *nis[2] = {n1, n2};
    in_tree_claims(3, "gcePersistentDisk", "pdName", "pd-");
    mock_nodeinfo_add_pod(n1, claims_pod("old", "t1", NULL));
    mock_host_set_nodes(f.mh, nis, 2);
    ck_assert_int_eq(run(&f, claims_pod("p", "t1", NULL), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", NULL), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_int_eq(run(&f, claims_pod("p", "t2", "t3"), n2), KS_SUCCESS);
    fx_free(&f);

    g = nc_new("AzureDiskLimits", "azuredisklimits.so");
    n1 = limited_node("n1", "attachable-volumes-azure-disk", 1);
    mock_host_set_nodes(g.mh, &n1, 1);
    in_tree_claims(2, "azureDisk", "diskName", "disk-");
    ck_assert_int_eq(run(&g, claims_pod("p", "t1", NULL), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&g, claims_pod("p", "t1", "t2"), n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(g.st), MAX_VOLUMES);
    fx_free(&g);
}
END_TEST

/* v1.24's FilterVolume: an inline volume of the type counts by its ID
 * (volumeID, not translated), others not. */
START_TEST(non_csi_inline_volumes)
{
    fixture_t f = nc_new("EBSLimits", "ebslimits.so");
    ks_node_info_t *n1 = limited_node("n1", "attachable-volumes-aws-ebs", 2);
    in_tree_claims(2, "awsElasticBlockStore", "volumeID", "vol-");
    mock_nodeinfo_add_pod(n1, inline_pod("old", KS_INLINE_AWS_EBS, "vol-1",
                                         NULL));
    mock_host_set_nodes(f.mh, &n1, 1);
    /* vol-1 inline and through claim t1 is one volume: 1 + 1 */
    ck_assert_int_eq(run(&f, claims_pod("p", "t1", "t2"), n1), KS_SUCCESS);
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_AWS_EBS, "vol-2",
                                        "vol-3"),
                         n1),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), MAX_VOLUMES);
    /* GCE PDs are GCEPDLimits' */
    ck_assert_int_eq(run(&f, inline_pod("p", KS_INLINE_GCE_PD, "vol-2",
                                        "vol-3"),
                         n1),
                     KS_SUCCESS);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodeVolumeLimits");
    TCase *tc = tcase_create("csi");
    tcase_add_test(tc, limit_reached_or_not);
    tcase_add_test(tc, filter_without_prefilter);
    tcase_add_test(tc, volume_attachments);
    tcase_add_test(tc, unbound_claims);
    tcase_add_test(tc, migrated_in_tree_volumes);
    tcase_add_test(tc, missing_and_foreign_claims);
    tcase_add_test(tc, hints);
    tcase_add_test(tc, inline_volumes);
    tcase_add_test(tc, inline_ebs_translation);
    tcase_add_test(tc, inline_hints);
    suite_add_tcase(s, tc);
    tc = tcase_create("non-csi");
    tcase_add_test(tc, ebs_limits);
    tcase_add_test(tc, ebs_default_limits);
    tcase_add_test(tc, gce_pd_and_azure_disk_limits);
    tcase_add_test(tc, non_csi_inline_volumes);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
