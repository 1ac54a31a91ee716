/*
 * VolumeBinding: the real .so against the fixture's host (its stores hold
 * the claims, volumes, classes and CSI objects; its ABI 1.4 part records
 * API requests, runs timers on a fake clock and records PreBind resumes).
 * Upstream v1.36's messages, static matching, provisioning, the assume
 * cache, and PreBind's writes and wait.
 */
#include <stdarg.h>

#include "plugin_test.h"

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"
#define SEL_NODE "volume.kubernetes.io/selected-node"
#define BIND_DONE "pv.kubernetes.io/bind-completed"

#define R_NODE_CONFLICT "node(s) had volume node affinity conflict"
#define R_BIND_CONFLICT \
    "node(s) didn't find available persistent volumes to bind"
#define R_NO_SPACE "node(s) did not have enough free storage"
#define R_PV_MISSING \
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

/* --- objects ------------------------------------------------------------- */

static void put(const char *api_version, const char *kind, const char *fmt,
                ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mock_object_put(api_version, kind, buf);
}

/* A claim in "default": class, request, more spec members (",..."), more
 * metadata members, more top-level members; resourceVersion "10". */
static void pvc(const char *name, const char *cls, const char *req,
                const char *spec, const char *meta, const char *top)
{
    put("v1", "PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
        "\"uid\":\"uid-%s\",\"resourceVersion\":\"10\"%s},"
        "\"spec\":{\"storageClassName\":\"%s\",\"accessModes\":"
        "[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":"
        "\"%s\"}}%s}%s}",
        name, name, meta ? meta : "", cls, req, spec ? spec : "",
        top ? top : "");
}

/* A claim bound to `pv` (bind-completed). */
static void bound_pvc(const char *name, const char *pv)
{
    char spec[256];
    snprintf(spec, sizeof spec, ",\"volumeName\":\"%s\"", pv);
    pvc(name, "fast", "1Gi", spec,
        ",\"annotations\":{\"" BIND_DONE "\":\"yes\"}", NULL);
}

/* An Available PV of class `cls`, resourceVersion "5". */
static void pv(const char *name, const char *cls, const char *cap,
               const char *spec, const char *meta)
{
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
        "\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"5\"%s},"
        "\"spec\":{\"storageClassName\":\"%s\",\"capacity\":{\"storage\":"
        "\"%s\"},\"accessModes\":[\"ReadWriteOnce\"]%s},"
        "\"status\":{\"phase\":\"Available\"}}",
        name, meta ? meta : "", cls, cap, spec ? spec : "");
}

/* A node affinity (spec member) requiring label key=value. */
#define AFFINITY(key, value)                                                 \
    ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"              \
    "\"matchExpressions\":[{\"key\":\"" key "\",\"operator\":\"In\","        \
    "\"values\":[\"" value "\"]}]}]}}"

static void sc(const char *name, const char *mode, const char *provisioner,
               const char *more)
{
    put("storage.k8s.io/v1", "StorageClass",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
        "\"metadata\":{\"name\":\"%s\"},\"provisioner\":\"%s\","
        "\"volumeBindingMode\":\"%s\"%s}",
        name, provisioner, mode, more ? more : "");
}

/* --- the fixture ------------------------------------------------------------ */

typedef struct fixture {
    mock_host_t *mh;
    const ks_plugin_t *p;
    void *self;
    ks_status_t *st;
    ks_node_info_t *n[3]; /* n1 (zone a), n2 (zone b), n3 (zone a) */
} fixture_t;

static const ks_plugin_t *load_vb(void)
{
    const ks_plugin_t *p = mock_plugin_load("VolumeBinding");
    ck_assert_msg(p != NULL, "cannot load %s",
                  mock_plugin_path("VolumeBinding"));
    return p;
}

static ks_node_info_t *node(const char *name, const char *zone)
{
    ks_node_t *n = mock_node_new(name, 4000, 8 * GI, 110);
    mock_node_add_label(n, ZONE, zone);
    mock_node_add_label(n, HOST, name);
    return mock_nodeinfo_new(n);
}

static fixture_t fx_args(const char *args)
{
    fixture_t f;
    f.mh = mock_host_new();
    f.mh->api_mode = KS_API_CLUSTER;
    f.p = load_vb();
    f.self = pt_create(f.mh, f.p, args);
    f.st = mock_status_new();
    f.n[0] = node("n1", "a");
    f.n[1] = node("n2", "b");
    f.n[2] = node("n3", "a");
    mock_host_set_nodes(f.mh, f.n, 3);
    mock_objects_clear();
    sc("fast", "WaitForFirstConsumer", "kubernetes.io/no-provisioner", NULL);
    return f;
}

static fixture_t fx_new(void)
{
    return fx_args(NULL);
}

static void fx_free(fixture_t *f)
{
    f->p->destroy(f->self);
    mock_status_free(f->st);
    mock_host_free(f->mh);
    mock_objects_clear();
    mock_free_all();
}

static ks_pod_t *pod_with(const char *name, const char *claim1,
                          const char *claim2)
{
    ks_pod_t *p = mock_pod_new("default", name, 100, 0);
    if (claim1 != NULL)
        mock_pod_add_volume(p, "v1", KS_VOLUME_PVC, claim1);
    if (claim2 != NULL)
        mock_pod_add_volume(p, "v2", KS_VOLUME_PVC, claim2);
    return p;
}

/* PreFilter into cs (st reset first). */
static ks_code_t prefilter(fixture_t *f, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, ks_prefilter_result_t *r)
{
    mock_status_reset(f->st);
    return mock_status_set_code(f->st, f->p->pre_filter(f->self, cs, pod, r, f->st)), mock_status_code(f->st);
}

/* Filter on node i with cs's state. */
static ks_code_t filter(fixture_t *f, ks_cycle_state_t *cs,
                        const ks_pod_t *pod, int i)
{
    mock_status_reset(f->st);
    return mock_status_set_code(f->st, f->p->filter(f->self, cs, pod, f->n[i], f->st)), mock_status_code(f->st);
}

/* A whole scheduling cycle up to Reserve on node i: PreFilter, Filter on
 * every node, Reserve; fails the test unless each succeeds. */
static ks_cycle_state_t *reserve_on(fixture_t *f, const ks_pod_t *pod, int i)
{
    ks_cycle_state_t *cs = mock_cycle_state_new();
    int k;
    ck_assert_int_eq(prefilter(f, cs, pod, NULL), KS_SUCCESS);
    for (k = 0; k < 3; k++)
        (void)filter(f, cs, pod, k);
    ck_assert_int_eq(filter(f, cs, pod, i), KS_SUCCESS);
    mock_status_reset(f->st);
    ck_assert_msg(f->p->reserve(f->self, cs, pod, f->n[i]->node->name,
                                f->st) == KS_SUCCESS,
                  "reserve: %s", mock_status_text(f->st));
    return cs;
}

/* The only reason of the last call. */
static const char *why(const fixture_t *f)
{
    return mock_status_text(f->st);
}

/* --- tests -------------------------------------------------------------------- */

START_TEST(descriptor)
{
    const ks_plugin_t *p = load_vb();
    const char *kinds[6] = {"PersistentVolumeClaim", "PersistentVolume",
                            "StorageClass", "CSINode", "CSIDriver",
                            "CSIStorageCapacity"};
    uint32_t i;
    ck_assert_str_eq(p->name, "VolumeBinding");
    ck_assert_uint_eq(p->abi_minor, 4);
    ck_assert(KS_PLUGIN_HAS(p, resources));
    ck_assert_uint_eq(p->n_resources, 6);
    for (i = 0; i < 6; i++)
        ck_assert_str_eq(p->resources[i].kind, kinds[i]);
    ck_assert(p->pre_filter && p->filter && p->reserve && p->unreserve &&
              p->pre_bind && p->pre_score && p->score);
}
END_TEST

START_TEST(prefilter_skips_pods_without_claims)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *p = mock_pod_new("default", "plain", 100, 0);
    mock_pod_add_volume(p, "cfg", KS_VOLUME_OTHER, NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SKIP);
    /* Reserve and PreBind of a skipped pod: nothing to do */
    ck_assert_int_eq(f.p->reserve(f.self, cs, p, f.n[0]->node->name, f.st),
                     KS_SUCCESS);
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, p, "n1", f.st),
                     KS_SUCCESS);
    ck_assert_uint_eq(f.mh->n_calls, 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(prefilter_messages)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *missing = pod_with("m", "nope", NULL);
    ks_pod_t *eph = mock_pod_new("default", "e", 100, 0);
    ks_pod_t *eph2 = mock_pod_new("default", "e2", 100, 0);
    ks_pod_t *del = pod_with("d", "dying", NULL);
    ks_pod_t *lost = pod_with("l", "lost", NULL);
    ks_pod_t *imm = pod_with("i", "later", NULL);
    ks_pod_t *unset = pod_with("u", "unset", NULL);
    sc("now", "Immediate", "csi.example.com", NULL);
    put("storage.k8s.io/v1", "StorageClass",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
        "\"metadata\":{\"name\":\"nomode\"},\"provisioner\":\"x\"}");
    pvc("dying", "fast", "1Gi", NULL,
        ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"", NULL);
    pvc("lost", "fast", "1Gi", ",\"volumeName\":\"pv-gone\"", NULL,
        ",\"status\":{\"phase\":\"Lost\"}");
    pvc("later", "now", "1Gi", NULL, NULL, NULL);
    pvc("unset", "nomode", "1Gi", NULL, NULL, NULL);
    /* an ephemeral volume's claim made for another pod */
    pvc("e2-scratch", "fast", "1Gi", NULL,
        ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
        "\"name\":\"other\",\"uid\":\"default/other\",\"controller\":true}]",
        NULL);
    mock_pod_add_volume(eph, "scratch", KS_VOLUME_EPHEMERAL, "e-scratch");
    mock_pod_add_volume(eph2, "scratch", KS_VOLUME_EPHEMERAL, "e2-scratch");

    ck_assert_int_eq(prefilter(&f, cs, missing, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "persistentvolumeclaim \"nope\" not found");
    ck_assert_int_eq(prefilter(&f, cs, eph, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "waiting for ephemeral volume controller to "
                              "create the persistentvolumeclaim "
                              "\"e-scratch\"");
    ck_assert_int_eq(prefilter(&f, cs, eph2, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "PVC default/e2-scratch was not created for "
                              "pod default/e2 (pod is not owner)");
    ck_assert_int_eq(prefilter(&f, cs, del, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "persistentvolumeclaim \"dying\" is being "
                              "deleted");
    ck_assert_int_eq(prefilter(&f, cs, lost, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "persistentvolumeclaim \"lost\" bound to "
                              "non-existent persistentvolume \"pv-gone\"");
    ck_assert_int_eq(prefilter(&f, cs, imm, NULL),
                     KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), "pod has unbound immediate "
                              "PersistentVolumeClaims");
    ck_assert_int_eq(prefilter(&f, cs, unset, NULL), KS_ERROR);
    ck_assert_str_eq(why(&f), "VolumeBindingMode not set for StorageClass "
                              "\"nomode\"");
    /* the pod's own ephemeral claim passes */
    pvc("e-scratch", "fast", "1Gi", NULL,
        ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
        "\"name\":\"e\",\"uid\":\"default/e\",\"controller\":true}]",
        NULL);
    pv("pv-1", "fast", "1Gi", NULL, NULL);
    ck_assert_int_eq(prefilter(&f, cs, eph, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, eph, 0), KS_SUCCESS);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(bound_claims_node_affinity)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_prefilter_result_t *r = mock_prefilter_result_new();
    ks_pod_t *p = pod_with("p", "data", NULL);
    ks_pod_t *q = pod_with("q", "orphan", NULL);
    ks_pod_t *l = pod_with("l", "local", NULL);
    bound_pvc("data", "pv-a");
    pv("pv-a", "fast", "1Gi", AFFINITY(ZONE, "a"), NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, r), KS_SUCCESS);
    ck_assert(!mock_prefilter_result_is_set(r)); /* not a local PV */
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 1), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_NODE_CONFLICT);
    ck_assert_int_eq(filter(&f, cs, p, 2), KS_SUCCESS);
    /* a claim bound to a PV that does not exist: Filter says so */
    bound_pvc("orphan", "pv-none");
    ck_assert_int_eq(prefilter(&f, cs, q, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, q, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_PV_MISSING);
    /* a local PV (hostname affinity): PreFilter names its node */
    bound_pvc("local", "pv-l");
    pv("pv-l", "fast", "1Gi", AFFINITY(HOST, "n3"), NULL);
    mock_prefilter_result_free(r);
    r = mock_prefilter_result_new();
    ck_assert_int_eq(prefilter(&f, cs, l, r), KS_SUCCESS);
    ck_assert(mock_prefilter_result_is_set(r));
    ck_assert(mock_prefilter_result_has(r, "n3"));
    ck_assert(!mock_prefilter_result_has(r, "n1"));
    ck_assert_int_eq(filter(&f, cs, l, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_int_eq(filter(&f, cs, l, 2), KS_SUCCESS);
    mock_prefilter_result_free(r);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

/* The PV Reserve assumed for the pod's claim `claim` (by PreBind's PATCH
 * path), "" when none. */
static const char *patched_pv(fixture_t *f, ks_cycle_state_t *cs,
                              const ks_pod_t *pod, int node_i,
                              const char *claim)
{
    static char name[128];
    uint32_t first = f->mh->n_calls, i;
    char needle[128];
    name[0] = '\0';
    ck_assert_int_eq(mock_pre_bind(f->mh, f->p, f->self, cs, pod,
                                   f->n[node_i]->node->name, f->st),
                     KS_PENDING);
    /* answer every write; the bodies name the claims */
    snprintf(needle, sizeof needle, "\"name\":\"%s\"", claim);
    for (i = first; i < f->mh->n_calls || mock_api_pending(f->mh); i++) {
        const mock_api_call_t *c;
        if (i >= f->mh->n_calls)
            break;
        c = &f->mh->calls[i];
        if (strncmp(c->path, "/api/v1/persistentvolumes/", 26) == 0 &&
            strstr(c->body, needle) != NULL)
            snprintf(name, sizeof name, "%s", c->path + 26);
        mock_api_answer(f->mh, i, 200, "{}", NULL);
    }
    return name;
}

START_TEST(static_matching_smallest_first)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "big", "small");
    ks_cycle_state_t *cs;
    pvc("big", "fast", "5Gi", NULL, NULL, NULL);
    pvc("small", "fast", "1Gi", NULL, NULL, NULL);
    pv("pv-10", "fast", "10Gi", NULL, NULL);
    pv("pv-6", "fast", "6Gi", NULL, NULL);
    pv("pv-2", "fast", "2Gi", NULL, NULL);
    pv("pv-1-slow", "slow", "1Gi", NULL, NULL); /* another class */
    pv("pv-1-block", "fast", "1Gi", ",\"volumeMode\":\"Block\"", NULL);
    pv("pv-1-rwx", "fast", "1536Mi", NULL, NULL);
    /* pv-1-rwx only has RWO... make it RWX-only: access modes mismatch */
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
        "{\"name\":\"pv-1-rwx\",\"resourceVersion\":\"5\"},\"spec\":{"
        "\"storageClassName\":\"fast\",\"capacity\":{\"storage\":\"1536Mi\"},"
        "\"accessModes\":[\"ReadWriteMany\"]},\"status\":{\"phase\":"
        "\"Available\"}}");
    pv("pv-1-far", "fast", "1Gi", AFFINITY(ZONE, "b"), NULL);
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
        "{\"name\":\"pv-1-released\",\"resourceVersion\":\"5\"},\"spec\":{"
        "\"storageClassName\":\"fast\",\"capacity\":{\"storage\":\"1Gi\"},"
        "\"accessModes\":[\"ReadWriteOnce\"]},\"status\":{\"phase\":"
        "\"Released\"}}");
    cs = reserve_on(&f, p, 0);
    ck_assert_str_eq(patched_pv(&f, cs, p, 0, "small"), "pv-2");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(static_matching_big_claim)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "big", "small");
    ks_cycle_state_t *cs;
    /* the smaller claim goes first and takes the 6Gi PV; taken in the
     * pod's order the big one would have had it */
    pvc("big", "fast", "5Gi", NULL, NULL, NULL);
    pvc("small", "fast", "1Gi", NULL, NULL, NULL);
    pv("pv-10", "fast", "10Gi", NULL, NULL);
    pv("pv-6", "fast", "6Gi", NULL, NULL);
    cs = reserve_on(&f, p, 0);
    ck_assert_str_eq(patched_pv(&f, cs, p, 0, "big"), "pv-10");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(static_matching_rules)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *two = pod_with("two", "c1", "c2");
    ks_pod_t *sel = pod_with("sel", "picky", NULL);
    ks_pod_t *pre = pod_with("pre", "mine", NULL);
    pvc("c1", "fast", "1Gi", NULL, NULL, NULL);
    pvc("c2", "fast", "1Gi", NULL, NULL, NULL);
    pv("only", "fast", "2Gi", NULL, NULL);
    /* one PV for two claims: never twice, no provisioner: no fit */
    ck_assert_int_eq(prefilter(&f, cs, two, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, two, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    /* node affinity: zone b's PV fits n2 only */
    pv("only-b", "fast", "2Gi", AFFINITY(ZONE, "b"), NULL);
    ck_assert_int_eq(prefilter(&f, cs, two, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, two, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_int_eq(filter(&f, cs, two, 1), KS_SUCCESS);
    /* a label selector on the claim */
    pvc("picky", "fast", "1Gi",
        ",\"selector\":{\"matchLabels\":{\"tier\":\"gold\"}}", NULL, NULL);
    ck_assert_int_eq(prefilter(&f, cs, sel, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, sel, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    pv("gold", "fast", "50Gi", NULL, ",\"labels\":{\"tier\":\"gold\"}");
    ck_assert_int_eq(prefilter(&f, cs, sel, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, sel, 0), KS_SUCCESS);
    /* a PV pre-bound (claimRef) to another claim is not taken; one
     * pre-bound to this claim wins over a smaller free one */
    mock_objects_clear();
    sc("fast", "WaitForFirstConsumer", "kubernetes.io/no-provisioner", NULL);
    pvc("mine", "fast", "1Gi", NULL, NULL, NULL);
    pv("theirs", "fast", "1Gi",
        ",\"claimRef\":{\"namespace\":\"default\",\"name\":\"other\"}", NULL);
    ck_assert_int_eq(prefilter(&f, cs, pre, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, pre, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    pv("free-small", "fast", "1Gi", NULL, NULL);
    pv("for-me", "fast", "9Gi",
        ",\"claimRef\":{\"namespace\":\"default\",\"name\":\"mine\"}", NULL);
    mock_cycle_state_free(cs);
    cs = reserve_on(&f, pre, 0);
    ck_assert_str_eq(patched_pv(&f, cs, pre, 0, "mine"), "for-me");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(provisioning_topology_and_capacity)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *p = pod_with("p", "data", NULL);
    ks_pod_t *nop = pod_with("nop", "static", NULL);
    sc("csi", "WaitForFirstConsumer", "csi.example.com",
       ",\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"" ZONE
       "\",\"values\":[\"a\"]}]}]");
    pvc("data", "csi", "10Gi", NULL, NULL, NULL);
    pvc("static", "fast", "10Gi", NULL, NULL, NULL);
    /* no-provisioner and no PV: no fit */
    ck_assert_int_eq(prefilter(&f, cs, nop, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, nop, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    /* allowedTopologies: zone a only */
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 1), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    /* a CSIDriver tracking capacity: a CSIStorageCapacity must hold it */
    put("storage.k8s.io/v1", "CSIDriver",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIDriver\","
        "\"metadata\":{\"name\":\"csi.example.com\"},\"spec\":"
        "{\"storageCapacity\":true}}");
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_NO_SPACE);
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"cap-a\",\"namespace\":\"kube-system\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"100Gi\","
        "\"maximumVolumeSize\":\"5Gi\",\"nodeTopology\":{\"matchLabels\":"
        "{\"" ZONE "\":\"a\"}}}");
    /* maximumVolumeSize wins over capacity: still too small */
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_NO_SPACE);
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"cap-a\",\"namespace\":\"kube-system\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"100Gi\","
        "\"nodeTopology\":{\"matchLabels\":{\"" ZONE "\":\"a\"}}}");
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 2), KS_SUCCESS);
    /* the claim selected node n3 already: other nodes do not fit */
    pvc("data", "csi", "10Gi", NULL,
        ",\"annotations\":{\"" SEL_NODE "\":\"n3\"}", NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    ck_assert_int_eq(filter(&f, cs, p, 2), KS_SUCCESS);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(assume_cache_reserve_unreserve)
{
    fixture_t f = fx_new();
    ks_pod_t *a = pod_with("a", "ca", NULL), *b = pod_with("b", "cb", NULL);
    ks_cycle_state_t *csa, *csb = mock_cycle_state_new();
    pvc("ca", "fast", "1Gi", NULL, NULL, NULL);
    pvc("cb", "fast", "1Gi", NULL, NULL, NULL);
    pv("only", "fast", "1Gi", NULL, NULL);
    csa = reserve_on(&f, a, 0);
    /* b sees the PV taken by a's Reserve */
    ck_assert_int_eq(prefilter(&f, csb, b, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    /* Unreserve restores it */
    f.p->unreserve(f.self, csa, a, "n1");
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_SUCCESS);
    /* assumed again; a newer stored version (the informer caught up,
     * here: the PV controller set claimRef to a) replaces the assumed
     * one, which b cannot take either */
    mock_cycle_state_free(csa);
    csa = reserve_on(&f, a, 0);
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
        "{\"name\":\"only\",\"resourceVersion\":\"6\"},\"spec\":{"
        "\"storageClassName\":\"fast\",\"capacity\":{\"storage\":\"1Gi\"},"
        "\"accessModes\":[\"ReadWriteOnce\"]},\"status\":{\"phase\":"
        "\"Available\"}}");
    /* version 6 has no claimRef: the assumption (made on 5) is gone */
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_SUCCESS);
    /* a claim assumed with a selected node: another pod using it sees it */
    mock_cycle_state_free(csa);
    mock_cycle_state_free(csb);
    fx_free(&f);
}
END_TEST

START_TEST(assume_cache_selected_node)
{
    fixture_t f = fx_new();
    ks_pod_t *a = pod_with("a", "shared", NULL);
    ks_pod_t *b = pod_with("b", "shared", NULL);
    ks_cycle_state_t *csa, *csb = mock_cycle_state_new();
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("shared", "csi", "1Gi", NULL, NULL, NULL);
    csa = reserve_on(&f, a, 1); /* provisioning on n2 assumed */
    ck_assert_int_eq(prefilter(&f, csb, b, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ck_assert_str_eq(why(&f), R_BIND_CONFLICT);
    ck_assert_int_eq(filter(&f, csb, b, 1), KS_SUCCESS);
    f.p->unreserve(f.self, csa, a, "n2");
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_SUCCESS);
    mock_cycle_state_free(csa);
    mock_cycle_state_free(csb);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_request_bodies)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "st", "dyn");
    ks_cycle_state_t *cs;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("st", "fast", "1Gi", NULL, NULL, NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    pv("pv-st", "fast", "1Gi", NULL, NULL);
    cs = reserve_on(&f, p, 0);
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, p, "n1", f.st),
                     KS_PENDING);
    /* one request at a time, the PV first */
    ck_assert_uint_eq(f.mh->n_calls, 1);
    ck_assert_str_eq(f.mh->calls[0].method, "PATCH");
    ck_assert_str_eq(f.mh->calls[0].path, "/api/v1/persistentvolumes/pv-st");
    ck_assert_str_eq(f.mh->calls[0].content_type,
                     "application/merge-patch+json");
    ck_assert_str_eq(
        f.mh->calls[0].body,
        "{\"metadata\":{\"resourceVersion\":\"5\",\"annotations\":"
        "{\"pv.kubernetes.io/bound-by-controller\":\"yes\"}},\"spec\":"
        "{\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":"
        "\"default\",\"name\":\"st\",\"uid\":\"uid-st\",\"apiVersion\":"
        "\"v1\",\"resourceVersion\":\"10\"}}}");
    ck_assert_int_eq(mock_api_answer(f.mh, 0, 200,
                                     "{\"kind\":\"PersistentVolume\","
                                     "\"metadata\":{\"name\":\"pv-st\","
                                     "\"resourceVersion\":\"7\"}}",
                                     NULL),
                     0);
    ck_assert_uint_eq(f.mh->n_calls, 2);
    ck_assert_str_eq(f.mh->calls[1].path,
                     "/api/v1/namespaces/default/persistentvolumeclaims/dyn");
    ck_assert_str_eq(f.mh->calls[1].content_type,
                     "application/merge-patch+json");
    ck_assert_str_eq(f.mh->calls[1].body,
                     "{\"metadata\":{\"resourceVersion\":\"10\","
                     "\"annotations\":{\"" SEL_NODE "\":\"n1\"}}}");
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

/* Reserve on n1 and PreBind with every write answered 200 (each answer
 * carrying resourceVersion 11); the pod then waits. */
static ks_cycle_state_t *prebind_waiting(fixture_t *f, const ks_pod_t *p)
{
    ks_cycle_state_t *cs = reserve_on(f, p, 0);
    uint32_t i, resumes = f->mh->n_resumes;
    ck_assert_int_eq(mock_pre_bind(f->mh, f->p, f->self, cs, p, "n1", f->st),
                     KS_PENDING);
    for (i = 0; i < f->mh->n_calls; i++)
        if (f->mh->calls[i].state == MOCK_CALL_PENDING)
            ck_assert_int_eq(
                mock_api_answer(
                    f->mh, i, 200,
                    "{\"metadata\":{\"resourceVersion\":\"11\"}}", NULL),
                0);
    ck_assert_uint_eq(mock_api_pending(f->mh), 0);
    ck_assert_uint_eq(f->mh->n_resumes, resumes);
    ck_assert(mock_pre_bind_waiting(f->mh, p));
    return cs;
}

START_TEST(prebind_waits_until_bound)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "st", "dyn");
    ks_cycle_state_t *cs;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("st", "fast", "1Gi", NULL, NULL, NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    pv("pv-st", "fast", "1Gi", NULL, NULL);
    cs = prebind_waiting(&f, p);
    ck_assert_uint_eq(mock_timers_live(f.mh), 1);
    /* a second: the stores have not seen the writes (version 11) */
    ck_assert_uint_eq(mock_clock_advance(f.mh, 1000), 1);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    /* the PV controller binds the static claim; the provisioner has not
     * bound the other yet */
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
        "{\"name\":\"pv-st\",\"resourceVersion\":\"12\"},\"spec\":{"
        "\"storageClassName\":\"fast\",\"capacity\":{\"storage\":\"1Gi\"},"
        "\"claimRef\":{\"namespace\":\"default\",\"name\":\"st\",\"uid\":"
        "\"uid-st\"}},\"status\":{\"phase\":\"Bound\"}}");
    put("v1", "PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"st\",\"namespace\":\"default\",\"uid\":"
        "\"uid-st\",\"resourceVersion\":\"13\",\"annotations\":{\"" BIND_DONE
        "\":\"yes\"}},\"spec\":{\"volumeName\":\"pv-st\"}}");
    put("v1", "PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"dyn\",\"namespace\":\"default\",\"uid\":"
        "\"uid-dyn\",\"resourceVersion\":\"14\",\"annotations\":{\"" SEL_NODE
        "\":\"n1\"}},\"spec\":{\"storageClassName\":\"csi\"}}");
    ck_assert_uint_eq(mock_clock_advance(f.mh, 1000), 1);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    /* provisioned and bound */
    pv("pv-dyn", "csi", "1Gi", NULL, NULL);
    put("v1", "PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"dyn\",\"namespace\":\"default\",\"uid\":"
        "\"uid-dyn\",\"resourceVersion\":\"15\",\"annotations\":{\"" SEL_NODE
        "\":\"n1\",\"" BIND_DONE "\":\"yes\"}},\"spec\":{\"storageClassName\":"
        "\"csi\",\"volumeName\":\"pv-dyn\"}}");
    ck_assert_uint_eq(mock_clock_advance(f.mh, 999), 0);
    ck_assert_uint_eq(mock_clock_advance(f.mh, 1), 1);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_int_eq(f.mh->resumes[0].code, KS_SUCCESS);
    ck_assert_int_eq(f.mh->resumes[0].rc, 0);
    ck_assert(!f.mh->resumes[0].inside_pre_bind);
    ck_assert_uint_eq(mock_timers_live(f.mh), 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_timeout)
{
    fixture_t f = fx_args("bindTimeoutSeconds: 5\n");
    ks_pod_t *p = pod_with("p", "dyn", NULL);
    ks_cycle_state_t *cs;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    cs = prebind_waiting(&f, p);
    ck_assert_uint_eq(mock_clock_advance(f.mh, 4000), 4);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    mock_clock_advance(f.mh, 1000);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_int_eq(f.mh->resumes[0].code, KS_ERROR);
    ck_assert_str_eq(f.mh->resumes[0].reason,
                     "binding volumes: context deadline exceeded");
    ck_assert_uint_eq(mock_timers_live(f.mh), 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_default_timeout_is_600s)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL);
    ks_cycle_state_t *cs;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    cs = prebind_waiting(&f, p);
    mock_clock_advance(f.mh, 599000);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    mock_clock_advance(f.mh, 1000);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_str_eq(f.mh->resumes[0].reason,
                     "binding volumes: context deadline exceeded");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_claim_deleted_or_unselected)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL), *q = pod_with("q", "dyn2", NULL);
    ks_pod_t *s = pod_with("s", "st", NULL);
    ks_cycle_state_t *cs, *cs2, *cs3;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    pvc("dyn2", "csi", "1Gi", NULL, NULL, NULL);
    pvc("st", "fast", "1Gi", NULL, NULL, NULL);
    pv("pv-st", "fast", "1Gi", NULL, NULL);
    cs = prebind_waiting(&f, p);
    ck_assert_int_eq(mock_object_delete("v1", "PersistentVolumeClaim",
                                        "default", "dyn"),
                     0);
    mock_clock_advance(f.mh, 1000);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_int_eq(f.mh->resumes[0].code, KS_ERROR);
    ck_assert_str_eq(f.mh->resumes[0].reason,
                     "binding volumes: failed to check provisioning pvc: "
                     "could not find v1.PersistentVolumeClaim "
                     "\"default/dyn\"");
    /* the provisioner gave up: it removed the selected-node annotation */
    cs2 = prebind_waiting(&f, q);
    put("v1", "PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"dyn2\",\"namespace\":\"default\",\"uid\":"
        "\"uid-dyn2\",\"resourceVersion\":\"20\",\"annotations\":"
        "{\"other\":\"x\"}},\"spec\":{\"storageClassName\":\"csi\"}}");
    mock_clock_advance(f.mh, 1000);
    ck_assert_uint_eq(f.mh->n_resumes, 2);
    ck_assert_str_eq(f.mh->resumes[1].reason,
                     "binding volumes: provisioning failed for PVC \"dyn2\"");
    /* a static binding whose claim is deleted */
    cs3 = prebind_waiting(&f, s);
    mock_object_delete("v1", "PersistentVolumeClaim", "default", "st");
    mock_clock_advance(f.mh, 1000);
    ck_assert_uint_eq(f.mh->n_resumes, 3);
    ck_assert_str_eq(f.mh->resumes[2].reason,
                     "binding volumes: failed to check binding: could not "
                     "find v1.PersistentVolumeClaim \"default/st\"");
    mock_cycle_state_free(cs);
    mock_cycle_state_free(cs2);
    mock_cycle_state_free(cs3);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_write_refused)
{
    fixture_t f = fx_new();
    ks_pod_t *a = pod_with("a", "ca", NULL), *b = pod_with("b", "cb", NULL);
    ks_cycle_state_t *cs, *csb = mock_cycle_state_new();
    pvc("ca", "fast", "1Gi", NULL, NULL, NULL);
    pvc("cb", "fast", "1Gi", NULL, NULL, NULL);
    pv("only", "fast", "1Gi", NULL, NULL);
    cs = reserve_on(&f, a, 0);
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, a, "n1", f.st),
                     KS_PENDING);
    mock_api_answer(f.mh, 0, 409,
                    "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":"
                    "\"Operation cannot be fulfilled on persistentvolumes "
                    "\\\"only\\\": the object has been modified\","
                    "\"code\":409}",
                    NULL);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_int_eq(f.mh->resumes[0].code, KS_ERROR);
    ck_assert_str_eq(f.mh->resumes[0].reason,
                     "Operation cannot be fulfilled on persistentvolumes "
                     "\"only\": the object has been modified");
    /* the assumed PV was restored: b can take it */
    ck_assert_int_eq(prefilter(&f, csb, b, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, csb, b, 0), KS_SUCCESS);
    mock_cycle_state_free(cs);
    mock_cycle_state_free(csb);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_record_mode)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL);
    ks_cycle_state_t *cs;
    f.mh->api_mode = KS_API_RECORD;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    cs = reserve_on(&f, p, 0);
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, p, "n1", f.st),
                     KS_PENDING);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    ck_assert_uint_eq(mock_api_run_record(f.mh), 1);
    ck_assert_uint_eq(f.mh->n_resumes, 1);
    ck_assert_int_eq(f.mh->resumes[0].code, KS_SUCCESS);
    ck_assert_int_eq(f.mh->resumes[0].rc, 0);
    ck_assert_uint_eq(mock_timers_live(f.mh), 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(unreserve_stops_the_wait)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL), *q = pod_with("q", "dyn2", NULL);
    ks_cycle_state_t *cs, *cs2;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    pvc("dyn2", "csi", "1Gi", NULL, NULL, NULL);
    /* a request in flight is cancelled */
    cs = reserve_on(&f, p, 0);
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, p, "n1", f.st),
                     KS_PENDING);
    ck_assert_uint_eq(mock_api_pending(f.mh), 1);
    f.p->unreserve(f.self, cs, p, "n1");
    ck_assert_uint_eq(mock_api_pending(f.mh), 0);
    ck_assert_int_eq(f.mh->calls[0].state, MOCK_CALL_CANCELLED);
    /* a poll timer is stopped */
    cs2 = prebind_waiting(&f, q);
    ck_assert_uint_eq(mock_timers_live(f.mh), 1);
    f.p->unreserve(f.self, cs2, q, "n1");
    ck_assert_uint_eq(mock_timers_live(f.mh), 0);
    mock_clock_advance(f.mh, 10000);
    ck_assert_uint_eq(f.mh->n_resumes, 0);
    mock_cycle_state_free(cs);
    mock_cycle_state_free(cs2);
    fx_free(&f);
}
END_TEST

START_TEST(prebind_without_resume)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL);
    ks_cycle_state_t *cs;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "1Gi", NULL, NULL, NULL);
    cs = reserve_on(&f, p, 0);
    f.mh->api.pre_bind_resume = NULL; /* an ABI 1.3 host */
    ck_assert_int_eq(mock_pre_bind(f.mh, f.p, f.self, cs, p, "n1", f.st),
                     KS_ERROR);
    ck_assert_str_eq(why(&f),
                     "VolumeBinding cannot bind the volumes of pod "
                     "default/p: this host has no API requests or waiting "
                     "PreBind (SDK ABI 1.4 pre_bind_resume)");
    ck_assert_uint_eq(f.mh->n_calls, 0);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(args)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = load_vb();
    void *self;
    ck_assert_ptr_nonnull(strstr(pt_create_error(mh, p,
                                                 "bindTimeoutSeconds: -1\n"),
                                 "invalid BindTimeoutSeconds, should not be "
                                 "a negative value"));
    ck_assert_ptr_nonnull(
        strstr(pt_create_error(mh, p,
                               "shape:\n- utilization: 0\n  score: 0\n"),
               "unsupported when `StorageCapacityScoring` feature is "
               "disabled"));
    ck_assert_ptr_nonnull(strstr(
        pt_create_error(mh, p,
                        "enableStorageCapacityScoring: true\nshape:\n"
                        "- utilization: 50\n  score: 1\n"
                        "- utilization: 10\n  score: 2\n"),
        "values must be sorted in increasing order"));
    ck_assert_ptr_nonnull(strstr(pt_create_error(mh, p, "bogus: 1\n"),
                                 "unknown field \"bogus\""));
    self = pt_create(mh, p,
                     "enableStorageCapacityScoring: true\n"
                     "bindTimeoutSeconds: 30\n");
    p->destroy(self);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(score_off_by_default_and_capacity_scoring)
{
    fixture_t f = fx_new();
    ks_pod_t *p = pod_with("p", "st", NULL);
    ks_cycle_state_t *cs = mock_cycle_state_new();
    const ks_node_info_t *nodes[3] = {f.n[0], f.n[1], f.n[2]};
    void *on;
    int64_t s = -1;
    pvc("st", "fast", "2Gi", NULL, NULL, NULL);
    pv("pv-8", "fast", "8Gi", AFFINITY(ZONE, "a"), NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_SUCCESS);
    ck_assert_int_eq(f.p->pre_score(f.self, cs, p, nodes, 3, f.st), KS_SKIP);
    mock_cycle_state_free(cs);
    /* on: default shape {0,10},{100,0}: 2Gi of 8Gi = 25% -> 75 */
    on = pt_create(f.mh, f.p, "enableStorageCapacityScoring: true\n");
    cs = mock_cycle_state_new();
    mock_status_reset(f.st);
    ck_assert_int_eq(f.p->pre_filter(on, cs, p, NULL, f.st), KS_SUCCESS);
    ck_assert_int_eq(f.p->filter(on, cs, p, f.n[0], f.st), KS_SUCCESS);
    ck_assert_int_eq(f.p->pre_score(on, cs, p, nodes, 3, f.st), KS_SUCCESS);
    ck_assert_int_eq(f.p->score(on, cs, p, f.n[0], &s, f.st), KS_SUCCESS);
    ck_assert_int_eq(s, 75);
    /* a node Filter did not pass: 0 */
    ck_assert_int_eq(f.p->score(on, cs, p, f.n[1], &s, f.st), KS_SUCCESS);
    ck_assert_int_eq(s, 0);
    f.p->destroy(on);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

static ks_queueing_hint_t hint(fixture_t *f, const ks_pod_t *pod,
                               const ks_object_t *old, const ks_object_t *n)
{
    ks_cluster_event_hint_t ev[8];
    uint32_t k = f->p->events_to_register_v2(f->self, ev, 8), i;
    for (i = 0; i < k; i++)
        if (ev[i].event.resource == KS_RES_OBJECT)
            return ev[i].hint(f->self, pod, old, n);
    ck_abort_msg("no KS_RES_OBJECT event");
    return KS_QUEUE;
}

/* The plugin instance's handle (its declared stores). */
static ks_handle_t *handle_of(const fixture_t *f)
{
    size_t i;
    for (i = 0; i < f->mh->fw->n_insts; i++)
        if (f->mh->fw->insts[i]->self == f->self)
            return &f->mh->fw->insts[i]->handle;
    return NULL;
}

START_TEST(queueing_hints)
{
    fixture_t f = fx_new();
    const ks_host_api_t *api = &f.mh->api;
    ks_handle_t *h = handle_of(&f);
    const ks_store_t *pvcs = api->store_get(h, "", "v1",
                                            "persistentvolumeclaims");
    const ks_store_t *scs =
        api->store_get(h, "storage.k8s.io", "v1", "storageclasses");
    const ks_store_t *caps =
        api->store_get(h, "storage.k8s.io", "v1", "csistoragecapacities");
    ks_pod_t *p = pod_with("p", "mine", NULL);
    ks_cluster_event_hint_t ev[8];
    const ks_object_t *o1, *o2;
    ck_assert_ptr_nonnull(pvcs);
    ck_assert_uint_eq(f.p->events_to_register_v2(f.self, ev, 8), 2);
    ck_assert_uint_eq(ev[0].event.resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[0].event.action,
                      KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL);
    pvc("mine", "fast", "1Gi", NULL, NULL, NULL);
    pvc("theirs", "fast", "1Gi", NULL, NULL, NULL);
    ck_assert_int_eq(hint(&f, p, NULL, api->object_get(pvcs, "default",
                                                       "mine")),
                     KS_QUEUE);
    ck_assert_int_eq(hint(&f, p, NULL, api->object_get(pvcs, "default",
                                                       "theirs")),
                     KS_QUEUE_SKIP);
    /* a class: new queues; allowedTopologies changed queues */
    o1 = api->object_get(scs, NULL, "fast");
    ck_assert_int_eq(hint(&f, p, NULL, o1), KS_QUEUE);
    ck_assert_int_eq(hint(&f, p, o1, o1), KS_QUEUE_SKIP);
    sc("topo", "WaitForFirstConsumer", "x",
       ",\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"k\","
       "\"values\":[\"v\"]}]}]");
    ck_assert_int_eq(hint(&f, p, o1, api->object_get(scs, NULL, "topo")),
                     KS_QUEUE);
    /* a capacity: only a larger limit queues */
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"c1\",\"namespace\":\"ks\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"10Gi\"}");
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"c2\",\"namespace\":\"ks\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"20Gi\"}");
    o1 = api->object_get(caps, "ks", "c1");
    o2 = api->object_get(caps, "ks", "c2");
    ck_assert_int_eq(hint(&f, p, o1, o2), KS_QUEUE);
    ck_assert_int_eq(hint(&f, p, o2, o1), KS_QUEUE_SKIP);
    ck_assert_int_eq(hint(&f, p, NULL, o1), KS_QUEUE);
    fx_free(&f);
}
END_TEST

START_TEST(filter_errors_and_reserve_out_of_sync)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *p = pod_with("p", "gone-class", NULL);
    ks_pod_t *q = pod_with("q", "c", NULL);
    /* a WaitForFirstConsumer claim whose class vanished after PreFilter */
    sc("brief", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("gone-class", "brief", "1Gi", NULL, NULL, NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(mock_object_delete("storage.k8s.io/v1", "StorageClass",
                                        NULL, "brief"),
                     0);
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_ERROR);
    ck_assert_str_eq(why(&f), "failed to find storage class \"brief\"");
    mock_cycle_state_free(cs);
    /* the PV changed between Filter and Reserve */
    cs = mock_cycle_state_new();
    pvc("c", "fast", "1Gi", NULL, NULL, NULL);
    pv("pv", "fast", "1Gi", NULL, NULL);
    ck_assert_int_eq(prefilter(&f, cs, q, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, q, 0), KS_SUCCESS);
    put("v1", "PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
        "{\"name\":\"pv\",\"resourceVersion\":\"6\"},\"spec\":{"
        "\"storageClassName\":\"fast\",\"capacity\":{\"storage\":\"1Gi\"},"
        "\"accessModes\":[\"ReadWriteOnce\"]},\"status\":{\"phase\":"
        "\"Available\"}}");
    mock_status_reset(f.st);
    ck_assert_int_eq(f.p->reserve(f.self, cs, q, "n1", f.st), KS_ERROR);
    ck_assert_str_eq(why(&f), "v1.PersistentVolume \"pv\" is out of sync "
                              "(stored: 6, assume: 5)");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(bulk_filter_agrees)
{
    fixture_t f = fx_new();
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *p = pod_with("p", "c", NULL);
    const ks_node_info_t *nodes[3] = {f.n[0], f.n[1], f.n[2]};
    uint8_t pass[3] = {1, 1, 0};
    pvc("c", "fast", "1Gi", NULL, NULL, NULL);
    pv("pv-b", "fast", "1Gi", AFFINITY(ZONE, "b"), NULL);
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(f.p->filter_nodes(f.self, cs,
                                       mock_plugin_state(cs, f.self,
                                                         KS_STATE_FILTER),
                                       p, nodes, 3, pass, f.st),
                     KS_SUCCESS);
    ck_assert_uint_eq(pass[0], 0);
    ck_assert_uint_eq(pass[1], 1);
    ck_assert_uint_eq(pass[2], 0); /* already rejected: left alone */
    /* the bulk pass kept n2's decision for Reserve */
    mock_status_reset(f.st);
    ck_assert_int_eq(f.p->reserve(f.self, cs, p, "n2", f.st), KS_SUCCESS);
    ck_assert_str_eq(patched_pv(&f, cs, p, 1, "c"), "pv-b");
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

START_TEST(score_dynamic_capacity)
{
    fixture_t f = fx_args("enableStorageCapacityScoring: true\n"
                          "shape:\n- utilization: 0\n  score: 0\n"
                          "- utilization: 100\n  score: 10\n");
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_pod_t *p = pod_with("p", "dyn", NULL);
    const ks_node_info_t *nodes[3] = {f.n[0], f.n[1], f.n[2]};
    int64_t s0 = -1, s1 = -1;
    sc("csi", "WaitForFirstConsumer", "csi.example.com", NULL);
    pvc("dyn", "csi", "10Gi", NULL, NULL, NULL);
    put("storage.k8s.io/v1", "CSIDriver",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIDriver\","
        "\"metadata\":{\"name\":\"csi.example.com\"},\"spec\":"
        "{\"storageCapacity\":true}}");
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"a\",\"namespace\":\"ks\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"20Gi\","
        "\"nodeTopology\":{\"matchLabels\":{\"" ZONE "\":\"a\"}}}");
    put("storage.k8s.io/v1", "CSIStorageCapacity",
        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIStorageCapacity\","
        "\"metadata\":{\"name\":\"b\",\"namespace\":\"ks\"},"
        "\"storageClassName\":\"csi\",\"capacity\":\"40Gi\","
        "\"nodeTopology\":{\"matchLabels\":{\"" ZONE "\":\"b\"}}}");
    ck_assert_int_eq(prefilter(&f, cs, p, NULL), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 0), KS_SUCCESS);
    ck_assert_int_eq(filter(&f, cs, p, 1), KS_SUCCESS);
    ck_assert_int_eq(f.p->pre_score(f.self, cs, p, nodes, 3, f.st),
                     KS_SUCCESS);
    ck_assert_int_eq(f.p->score(f.self, cs, p, f.n[0], &s0, f.st),
                     KS_SUCCESS);
    ck_assert_int_eq(f.p->score(f.self, cs, p, f.n[1], &s1, f.st),
                     KS_SUCCESS);
    /* 10Gi of 20Gi: 50% -> 50; 10Gi of 40Gi: 25% -> 25 (this shape
     * prefers the fuller pool) */
    ck_assert_int_eq(s0, 50);
    ck_assert_int_eq(s1, 25);
    mock_cycle_state_free(cs);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("VolumeBinding");
    TCase *tc = tcase_create("volumebinding");
    tcase_add_test(tc, descriptor);
    tcase_add_test(tc, prefilter_skips_pods_without_claims);
    tcase_add_test(tc, prefilter_messages);
    tcase_add_test(tc, bound_claims_node_affinity);
    tcase_add_test(tc, static_matching_smallest_first);
    tcase_add_test(tc, static_matching_big_claim);
    tcase_add_test(tc, static_matching_rules);
    tcase_add_test(tc, provisioning_topology_and_capacity);
    tcase_add_test(tc, assume_cache_reserve_unreserve);
    tcase_add_test(tc, assume_cache_selected_node);
    tcase_add_test(tc, prebind_request_bodies);
    tcase_add_test(tc, prebind_waits_until_bound);
    tcase_add_test(tc, prebind_timeout);
    tcase_add_test(tc, prebind_default_timeout_is_600s);
    tcase_add_test(tc, prebind_claim_deleted_or_unselected);
    tcase_add_test(tc, prebind_write_refused);
    tcase_add_test(tc, prebind_record_mode);
    tcase_add_test(tc, unreserve_stops_the_wait);
    tcase_add_test(tc, prebind_without_resume);
    tcase_add_test(tc, args);
    tcase_add_test(tc, score_off_by_default_and_capacity_scoring);
    tcase_add_test(tc, queueing_hints);
    tcase_add_test(tc, filter_errors_and_reserve_out_of_sync);
    tcase_add_test(tc, bulk_filter_agrees);
    tcase_add_test(tc, score_dynamic_capacity);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
