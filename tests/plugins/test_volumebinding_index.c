/*
 * VolumeBinding's PV index (plugins/VolumeBinding/pv_index.c) against the
 * walk over every PV: the plugin's matching sources are built into this
 * program, and FindPodVolumes runs twice per node on the same stores and
 * assume cache, once with an index and once without. Random PVs (classes,
 * capacities with ties, claimRefs, phases, node affinities of every shape:
 * none, one hostname, several hostnames, other keys and operators, several
 * terms or expressions, invalid ones), claims, nodes (with and without the
 * hostname label, a hostname that is not the node's name) and assumed
 * PVs; between rounds PVs change and are deleted.
 */
#include <stdarg.h>

#include "plugin_test.h"
#include "vb.h"

#define ZONE "topology.kubernetes.io/zone"

static uint64_t rng = 88172645463325252ULL;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void put_v(const char *api_version, const char *kind,
                  const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mock_object_put(api_version, kind, buf);
}

static void put(const char *kind, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mock_object_put("v1", kind, buf);
}

#define N_NODES 12
#define N_CLAIMS 6

static const char *const classes[] = {"a", "b", "c"};
static const char *const caps[] = {"1Gi", "2Gi", "2Gi", "3Gi", "1073741824"};

/* A node affinity (spec member) of a random shape. */
static const char *affinity(char *buf, size_t len)
{
    uint32_t h1 = rnd(N_NODES + 1), h2 = rnd(N_NODES + 1), z = rnd(3);
    switch (rnd(14)) {
    case 0:
        return "";
    case 1:
        return ",\"nodeAffinity\":{}";
    case 2: /* two hostnames, maybe the same one twice */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\",\"h%u\"]}]}]}}",
                 h1, h2);
        return buf;
    case 3: /* a zone */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"" ZONE "\","
                 "\"operator\":\"In\",\"values\":[\"z%u\"]}]}]}}",
                 z);
        return buf;
    case 4: /* hostname NotIn */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"NotIn\",\"values\":[\"h%u\"]}]}]}}",
                 h1);
        return buf;
    case 5: /* hostname and zone in one term */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\"]},{\"key\":\"" ZONE
                 "\",\"operator\":\"In\",\"values\":[\"z%u\"]}]}]}}",
                 h1, z);
        return buf;
    case 6: /* two terms: either hostname */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":["
                 "{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\"]}]},"
                 "{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\"]}]}]}}",
                 h1, h2);
        return buf;
    case 7: /* hostname In with no values: invalid, matches nothing */
        return ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
               "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
               "\"operator\":\"In\",\"values\":[]}]}]}}";
    case 8: /* hostname and a matchFields */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\"]}],"
                 "\"matchFields\":[{\"key\":\"metadata.name\","
                 "\"operator\":\"NotIn\",\"values\":[\"x\"]}]}]}}",
                 h1);
        return buf;
    case 9: /* hostname Exists */
        return ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
               "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
               "\"operator\":\"Exists\"}]}]}}";
    default: /* one hostname (h12 is no node's) */
        snprintf(buf, len,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
                 "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                 "\"operator\":\"In\",\"values\":[\"h%u\"]}]}]}}",
                 h1);
        return buf;
    }
}

/* PV pv-<i>, resourceVersion rv, random otherwise. */
static void random_pv(uint32_t i, uint32_t rv)
{
    char aff[1024], ref[256] = "", meta[256] = "", cls[128];
    const char *phase = rnd(6) == 0 ? "Bound" : "Available";
    uint32_t r = rnd(10);
    if (r == 0)
        snprintf(ref, sizeof ref,
                 ",\"claimRef\":{\"namespace\":\"default\",\"name\":\"c%u\"}",
                 rnd(N_CLAIMS));
    else if (r == 1)
        snprintf(ref, sizeof ref,
                 ",\"claimRef\":{\"namespace\":\"other\",\"name\":\"c%u\","
                 "\"uid\":\"u\"}",
                 rnd(N_CLAIMS));
    if (rnd(12) == 0) /* the beta annotation wins over the field */
        snprintf(meta, sizeof meta,
                 ",\"annotations\":{\"volume.beta.kubernetes.io/"
                 "storage-class\":\"%s\"}",
                 classes[rnd(3)]);
    if (rnd(20) == 0)
        snprintf(meta + strlen(meta), sizeof meta - strlen(meta),
                 ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    snprintf(cls, sizeof cls, "%s", classes[rnd(3)]);
    put("PersistentVolume",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
        "\"metadata\":{\"name\":\"pv-%u\",\"resourceVersion\":\"%u\"%s},"
        "\"spec\":{\"storageClassName\":\"%s\",\"capacity\":{\"storage\":"
        "\"%s\"},\"accessModes\":[\"%s\"]%s%s},"
        "\"status\":{\"phase\":\"%s\"}}",
        i, rv, meta, cls, caps[rnd(5)],
        rnd(8) == 0 ? "ReadOnlyMany" : "ReadWriteOnce",
        affinity(aff, sizeof aff), ref, phase);
}

static void claim_object(uint32_t i, const char *cls, const char *req)
{
    put("PersistentVolumeClaim",
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"c%u\",\"namespace\":\"default\","
        "\"uid\":\"uid-c%u\",\"resourceVersion\":\"10\"},"
        "\"spec\":{\"storageClassName\":\"%s\",\"accessModes\":"
        "[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":"
        "\"%s\"}}}}",
        i, i, cls, req);
}

/* The two runs' answers as text: code, statics (claim -> PV),
 * provisions, reasons. */
static void describe(char *buf, size_t len, ks_code_t c,
                     const vb_pod_volumes_t *pv, const ks_status_t *st)
{
    size_t o = 0;
    uint32_t i;
    o += (size_t)snprintf(buf + o, len - o, "code %d;", (int)c);
    for (i = 0; pv != NULL && i < pv->n_statics && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, " %u->%s", pv->statics[i].claim,
                              pv->statics[i].pv);
    for (i = 0; pv != NULL && i < pv->n_provs && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, " prov %u", pv->provs[i].claim);
    if (o < len)
        snprintf(buf + o, len - o, "; %s", mock_status_text(st));
}

START_TEST(index_agrees_with_full_walk)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = mock_plugin_load("VolumeBinding");
    void *self;
    ck_assert_ptr_nonnull(p);
    self = pt_create(mh, p, NULL);
    vb_t vi = *(vb_t *)self, vf = *(vb_t *)self;
    ks_node_t *nodes[N_NODES + 1];
    ks_pod_t *pod = mock_pod_new("default", "p", 100, 0);
    ks_status_t *si = mock_status_new(), *sf = mock_status_new();
    uint32_t n_pvs = 80, round, i, matched = 0, none = 0, cands_seen = 0;
    char err[256];

    mock_objects_clear();
    put_v("storage.k8s.io/v1", "StorageClass", "{\"apiVersion\":\"storage.k8s.io/v1\","
                        "\"kind\":\"StorageClass\",\"metadata\":{\"name\":"
                        "\"a\"},\"provisioner\":\"kubernetes.io/"
                        "no-provisioner\",\"volumeBindingMode\":"
                        "\"WaitForFirstConsumer\"}");
    /* both instances read the same stores; each its own cache and index */
    vi.cache = vb_cache_new();
    vf.cache = vi.cache;
    vi.pv_index = vb_pv_index_new();
    vf.pv_index = NULL;
    ck_assert_ptr_nonnull(vi.cache);
    ck_assert_ptr_nonnull(vi.pv_index);
    /* nodes h0..h11 (node 3's hostname is not its name; node 12 has no
     * hostname label) */
    for (i = 0; i <= N_NODES; i++) {
        char name[32], host[32], zone[8];
        snprintf(name, sizeof name, "node-%u", i);
        snprintf(host, sizeof host, "h%u", i == 3 ? 4 : i);
        snprintf(zone, sizeof zone, "z%u", i % 3);
        nodes[i] = mock_node_new(name, 4000, 8 * GI, 110);
        if (i < N_NODES)
            mock_node_add_label(nodes[i], "kubernetes.io/hostname", host);
        mock_node_add_label(nodes[i], ZONE, zone);
    }
    for (i = 0; i < n_pvs; i++)
        random_pv(i, 5);

    for (round = 0; round < 120; round++) {
        vb_state_t s;
        vb_claim_t claims[N_CLAIMS];
        char names[N_CLAIMS][16], uids[N_CLAIMS][16];
        uint32_t nc = 1 + rnd(4), k;
        memset(&s, 0, sizeof s);
        pthread_mutex_init(&s.mu, NULL);
        /* the pod's claims (distinct names) */
        for (k = 0; k < nc; k++) {
            const char *cls = classes[rnd(2)];
            const char *req = caps[rnd(4)];
            uint32_t ci = (round + k) % N_CLAIMS;
            snprintf(names[k], sizeof names[k], "c%u", ci);
            snprintf(uids[k], sizeof uids[k], "uid-c%u", ci);
            claim_object(ci, cls, req);
            memset(&claims[k], 0, sizeof claims[k]);
            claims[k].ns = (char *)"default";
            claims[k].name = names[k];
            claims[k].uid = uids[k];
            claims[k].rv = (char *)"10";
            claims[k].volume_name = (char *)"";
            claims[k].class_name = (char *)cls;
            claims[k].has_request = 1;
            ck_assert_int_eq(vb_parse_quantity(req, &claims[k].request), 0);
        }
        s.delay = claims;
        s.n_delay = nc;
        for (i = 0; i <= N_NODES; i++) {
            vb_pod_volumes_t *ri = NULL, *rf = NULL;
            ks_code_t ci, cf;
            char a[2048], b[2048];
            mock_status_reset(si);
            mock_status_reset(sf);
            ci = vb_find_pod_volumes(&vi, &s, pod, nodes[i], &ri, si);
            cf = vb_find_pod_volumes(&vf, &s, pod, nodes[i], &rf, sf);
            describe(a, sizeof a, ci, ri, si);
            describe(b, sizeof b, cf, rf, sf);
            ck_assert_msg(strcmp(a, b) == 0,
                          "round %u node %u: index \"%s\", full walk \"%s\"",
                          round, i, a, b);
            if (ri != NULL && ri->n_statics > 0)
                matched++;
            else
                none++;
            vb_pod_volumes_free(ri);
            vb_pod_volumes_free(rf);
        }
        pthread_mutex_destroy(&s.mu);
        /* change the stores and the cache */
        for (k = rnd(4); k > 0; k--)
            random_pv(rnd(n_pvs), 6 + round);
        if (rnd(2) == 0) {
            char pvn[32];
            snprintf(pvn, sizeof pvn, "pv-%u", rnd(n_pvs));
            (void)mock_object_delete("v1", "PersistentVolume", "", pvn);
        }
        if (rnd(3) == 0)
            random_pv(n_pvs++, 5);
        if (rnd(3) == 0) { /* assume a PV to a claim */
            char pvn[32], cn[16];
            const ks_object_t *o;
            uint32_t c = rnd(N_CLAIMS);
            snprintf(pvn, sizeof pvn, "pv-%u", rnd(n_pvs));
            snprintf(cn, sizeof cn, "c%u", c);
            o = vi.api->object_get(vi.pvs, NULL, pvn);
            if (o != NULL) {
                ck_assert_int_eq(vb_assume_pv(&vi, o, vb_rv(&vi, o),
                                              "default", cn, "", 0, err,
                                              sizeof err),
                                 0);
                cands_seen++;
            }
        }
        if (rnd(10) == 0)
            vb_cache_prune(&vi);
    }
    /* the runs chose PVs and found none, both many times */
    ck_assert_uint_gt(matched, 200);
    ck_assert_uint_gt(none, 200);
    ck_assert_uint_gt(cands_seen, 10);
    vb_pv_index_free(vi.pv_index);
    vb_cache_free(vi.cache);
    p->destroy(self);
    mock_status_free(si);
    mock_status_free(sf);
    mock_host_free(mh);
    mock_objects_clear();
    mock_free_all();
}
END_TEST

/* vb_pathf formats %s, %u and %% itself: the same text as snprintf,
 * truncated the same way, for every buffer length. */
START_TEST(pathf_as_snprintf)
{
    char a[64], b[64];
    size_t len;
    for (len = 1; len <= sizeof a; len++) {
        memset(a, 'x', sizeof a);
        memset(b, 'x', sizeof b);
        vb_pathf(a, len, "%s[%u].key", "spec.values", 4294967295u);
        snprintf(b, len, "%s[%u].key", "spec.values", 4294967295u);
        ck_assert_mem_eq(a, b, sizeof a);
        vb_pathf(a, len, "metadata.annotations[\"%s\"] 100%% %u", "k", 0u);
        snprintf(b, len, "metadata.annotations[\"%s\"] 100%% %u", "k", 0u);
        ck_assert_mem_eq(a, b, sizeof a);
        vb_pathf(a, len, "%s/%s: %lld", "ns", "name", -12ll); /* vsnprintf */
        snprintf(b, len, "%s/%s: %lld", "ns", "name", -12ll);
        ck_assert_mem_eq(a, b, sizeof a);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("VolumeBinding PV index");
    TCase *tc = tcase_create("pv_index");
    tcase_add_test(tc, index_agrees_with_full_walk);
    tcase_add_test(tc, pathf_as_snprintf);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
