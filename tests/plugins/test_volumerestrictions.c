/*
 * VolumeRestrictions: ReadWriteOncePod claims (PreFilter's count of the
 * snapshot's users, Filter's verdict, AddPod/RemovePod for preemption and
 * cloned cycle states), upstream v1.36's messages, the QueueingHints;
 * the disk conflicts of inline in-tree volumes (GCE PD, AWS EBS, iSCSI,
 * RBD; the pod view's volume_inline, ABI 1.4).
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

/* --- disk conflicts (inline in-tree volumes) ------------------------------ */

#define DISK_CONFLICT "node(s) had no available disk"

/* A pod with one inline in-tree volume. */
static ks_pod_t *disk_pod(const char *ns, const char *name,
                          ks_inline_kind_t kind, const char *id,
                          int read_only)
{
    ks_pod_t *p = mock_pod_new(ns, name, 100, 0);
    ks_volume_inline_t vi = {kind, read_only, id, NULL, NULL, NULL, 0};
    mock_pod_add_inline_volume(p, "disk", &vi);
    return p;
}

/* A pod with one inline RBD image. */
static ks_pod_t *rbd_pod(const char *name, const char *const *mons,
                         uint32_t n_mons, const char *pool,
                         const char *image, int read_only)
{
    ks_pod_t *p = mock_pod_new("default", name, 100, 0);
    ks_volume_inline_t vi = {KS_INLINE_RBD, read_only, image, NULL, pool,
                             mons, n_mons};
    mock_pod_add_inline_volume(p, "disk", &vi);
    return p;
}

/* Does `pod` pass on a node holding `existing` (Filter after PreFilter)? */
static ks_code_t run_beside(fixture_t *f, const ks_pod_t *existing,
                            const ks_pod_t *pod)
{
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    ks_pod_t *on = (ks_pod_t *)existing;
    mock_pod_set_node(on, "n1");
    mock_nodeinfo_add_pod(n1, existing);
    mock_host_set_nodes(f->mh, &n1, 1);
    mock_status_reset(f->st);
    return run(f, pod, n1);
}

/* Same disk, read-write: rejected with upstream's text; both read-only:
 * GCE PD and iSCSI pass, AWS EBS does not (upstream ignores readOnly for
 * it); another disk, or a pod with no disk, passes. */
START_TEST(disk_conflicts)
{
    static const struct {
        ks_inline_kind_t kind;
        int ro_conflicts; /* both read-only still conflict */
    } kinds[] = {
        {KS_INLINE_GCE_PD, 0},
        {KS_INLINE_AWS_EBS, 1},
        {KS_INLINE_ISCSI, 0},
    };
    uint32_t k;
    for (k = 0; k < 3; k++) {
        fixture_t f = fx_new();
        ks_inline_kind_t kind = kinds[k].kind;
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old", kind,
                                                 "d1", 0),
                                    disk_pod("default", "new", kind, "d1",
                                             0)),
                         KS_UNSCHEDULABLE);
        ck_assert_str_eq(mock_status_text(f.st), DISK_CONFLICT);
        /* one of the two read-only: still a conflict */
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old", kind,
                                                 "d1", 1),
                                    disk_pod("default", "new", kind, "d1",
                                             0)),
                         KS_UNSCHEDULABLE);
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old", kind,
                                                 "d1", 1),
                                    disk_pod("default", "new", kind, "d1",
                                             1)),
                         kinds[k].ro_conflicts ? KS_UNSCHEDULABLE
                                               : KS_SUCCESS);
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old", kind,
                                                 "d1", 0),
                                    disk_pod("default", "new", kind, "d2",
                                             0)),
                         KS_SUCCESS);
        /* any namespace: the disk is the cluster's */
        ck_assert_int_eq(run_beside(&f, disk_pod("other", "old", kind, "d1",
                                                 0),
                                    disk_pod("default", "new", kind, "d1",
                                             0)),
                         KS_UNSCHEDULABLE);
        ck_assert_int_eq(run_beside(&f, mock_pod_new("default", "old", 100,
                                                     0),
                                    disk_pod("default", "new", kind, "d1",
                                             0)),
                         KS_SUCCESS);
        fx_free(&f);
    }
    {
        /* another kind with the same id is another disk; kinds the rules
         * do not read (Azure Disk, Cinder, Portworx) never conflict */
        fixture_t f = fx_new();
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old",
                                                 KS_INLINE_GCE_PD, "d1", 0),
                                    disk_pod("default", "new",
                                             KS_INLINE_AWS_EBS, "d1", 0)),
                         KS_SUCCESS);
        ck_assert_int_eq(run_beside(&f, disk_pod("default", "old",
                                                 KS_INLINE_CINDER, "d1", 0),
                                    disk_pod("default", "new",
                                             KS_INLINE_CINDER, "d1", 0)),
                         KS_SUCCESS);
        fx_free(&f);
    }
}
END_TEST

/* RBD: a monitor in common, the same pool and image, not both read-only. */
START_TEST(rbd_conflicts)
{
    static const char *const m12[] = {"10.0.0.1:6789", "10.0.0.2:6789"};
    static const char *const m23[] = {"10.0.0.2:6789", "10.0.0.3:6789"};
    static const char *const m3[] = {"10.0.0.3:6789"};
    fixture_t f = fx_new();
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 0),
                                rbd_pod("new", m23, 2, "rbd", "img", 0)),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(f.st), DISK_CONFLICT);
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 1),
                                rbd_pod("new", m23, 2, "rbd", "img", 0)),
                     KS_UNSCHEDULABLE);
    /* both read-only */
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 1),
                                rbd_pod("new", m23, 2, "rbd", "img", 1)),
                     KS_SUCCESS);
    /* no monitor in common: another cluster */
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 0),
                                rbd_pod("new", m3, 1, "rbd", "img", 0)),
                     KS_SUCCESS);
    /* another pool, another image */
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 0),
                                rbd_pod("new", m23, 2, "kube", "img", 0)),
                     KS_SUCCESS);
    ck_assert_int_eq(run_beside(&f, rbd_pod("old", m12, 2, "rbd", "img", 0),
                                rbd_pod("new", m23, 2, "rbd", "img2", 0)),
                     KS_SUCCESS);
    fx_free(&f);
}
END_TEST

/* PreFilter: a pod with an inline disk is checked (not Skip) even with no
 * claim; other inline sources (Cinder) and other volumes are skipped, and
 * so is everything on an ABI 1.3 host. A
 * pod whose later volume is a claim keeps volume_inline parallel. */
START_TEST(disk_prefilter)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_prefilter_result_t r;
    ks_pod_t *pod = disk_pod("default", "new", KS_INLINE_GCE_PD, "d1", 0);
    ks_pod_t *cinder = disk_pod("default", "c", KS_INLINE_CINDER, "d1", 0);
    ks_node_info_t *n1 = mock_nodeinfo_new(mock_node_new("n1", 4000, 8 * GI,
                                                         110));
    mock_host_set_nodes(f.mh, &n1, 1);
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(f.p->pre_filter(f.self, cs, pod, &r, f.st), KS_SUCCESS);
    mock_cycle_state_free(cs);
    cs = mock_cycle_state_new();
    ck_assert_int_eq(f.p->pre_filter(f.self, cs, cinder, &r, f.st), KS_SKIP);
    mock_cycle_state_free(cs);
    /* an ABI 1.3 host's pods end before volume_inline: not read */
    f.mh->api.abi_minor = 3;
    cs = mock_cycle_state_new();
    ck_assert_int_eq(f.p->pre_filter(f.self, cs, pod, &r, f.st), KS_SKIP);
    mock_cycle_state_free(cs);
    f.mh->api.abi_minor = KS_ABI_MINOR;
    mock_pod_add_volume(pod, "cfg", KS_VOLUME_OTHER, NULL);
    ck_assert_uint_eq(pod->n_volumes, 2);
    ck_assert_int_eq(pod->volume_inline[0].kind, KS_INLINE_GCE_PD);
    ck_assert_int_eq(pod->volume_inline[1].kind, KS_INLINE_NONE);
    ck_assert(mock_pod_new("default", "p", 100, 0)->volume_inline == NULL);
    fx_free(&f);
}
END_TEST

/* The pod-deleted hint queues for a pod whose disk the deleted pod held. */
START_TEST(disk_hint)
{
    fixture_t f = fx_new();
    ks_cluster_event_hint_t ev[8];
    ks_queueing_hint_fn pod_deleted = NULL;
    ks_pod_t *pod = disk_pod("default", "new", KS_INLINE_AWS_EBS, "vol-1", 0);
    ks_pod_t *gone = disk_pod("default", "old", KS_INLINE_AWS_EBS, "vol-1",
                              0);
    uint32_t n, i;
    n = f.p->events_to_register_v2(f.self, ev, 8);
    for (i = 0; i < n; i++)
        if (ev[i].event.resource == KS_RES_POD)
            pod_deleted = ev[i].hint;
    ck_assert(pod_deleted != NULL);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE);
    gone = disk_pod("default", "old", KS_INLINE_AWS_EBS, "vol-2", 0);
    mock_pod_set_node(gone, "n1");
    ck_assert_int_eq(pod_deleted(f.self, pod, gone, NULL), KS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

/* A signer that keeps what it is given. */
typedef struct test_signer {
    ks_signer_t sg;
    unsigned char buf[1024];
    size_t len;
} test_signer_t;

static void test_put(ks_signer_t *sg, const void *data, size_t n)
{
    test_signer_t *t = (test_signer_t *)sg;
    ck_assert(t->len + n <= sizeof t->buf);
    memcpy(t->buf + t->len, data, n);
    t->len += n;
}

static int same_signature(fixture_t *f, const ks_pod_t *a, const ks_pod_t *b)
{
    test_signer_t sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    sa.sg.put = test_put;
    sb.sg.put = test_put;
    ck_assert_int_eq(f->p->sign(f->self, a, &sa.sg), KS_SUCCESS);
    ck_assert_int_eq(f->p->sign(f->self, b, &sb.sg), KS_SUCCESS);
    return sa.len == sb.len && memcmp(sa.buf, sb.buf, sa.len) == 0;
}

/* Batching: pods with different disks do not share a signature. */
START_TEST(disk_signature)
{
    fixture_t f = fx_new();
    ck_assert(same_signature(
        &f, disk_pod("default", "a", KS_INLINE_GCE_PD, "d1", 0),
        disk_pod("default", "b", KS_INLINE_GCE_PD, "d1", 0)));
    ck_assert(!same_signature(
        &f, disk_pod("default", "a", KS_INLINE_GCE_PD, "d1", 0),
        disk_pod("default", "b", KS_INLINE_GCE_PD, "d2", 0)));
    ck_assert(!same_signature(
        &f, disk_pod("default", "a", KS_INLINE_GCE_PD, "d1", 0),
        disk_pod("default", "b", KS_INLINE_GCE_PD, "d1", 1)));
    ck_assert(!same_signature(
        &f, disk_pod("default", "a", KS_INLINE_GCE_PD, "d1", 0),
        disk_pod("default", "b", KS_INLINE_ISCSI, "d1", 0)));
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
    tc = tcase_create("disks");
    tcase_add_test(tc, disk_conflicts);
    tcase_add_test(tc, rbd_conflicts);
    tcase_add_test(tc, disk_prefilter);
    tcase_add_test(tc, disk_hint);
    tcase_add_test(tc, disk_signature);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
