/*
 * VolumeZone (PreFilter, Filter), as upstream v1.36: a pod whose
 * persistentVolumeClaim volumes are bound to PersistentVolumes with zone
 * or region labels (topology.kubernetes.io/zone and /region, and the beta
 * failure-domain.beta.kubernetes.io ones) fits only nodes carrying one of
 * the volume's values for that label ("a__b" lists several). A node with
 * none of those four labels fits every pod (a single-zone cluster).
 *
 * It reads PersistentVolumeClaims, PersistentVolumes and StorageClasses
 * through the host's stores of declared resources (SDK ABI 1.3).
 * PreFilter looks the claims up and keeps the bound volumes' topology as
 * interned strings in its Filter state; Filter compares node labels by
 * address. A claim that is missing, unbound without a class, or whose
 * class is missing or not WaitForFirstConsumer, rejects the pod at
 * PreFilter with upstream's message; an unbound WaitForFirstConsumer
 * claim is skipped (VolumeBinding decides its zone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Needs ABI 1.3 (declared resources, object views), nothing newer. */
#define KS_PLUGIN_MIN_ABI_MINOR 3
#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define REASON_CONFLICT "node(s) had no available volume zone"

#define LABEL_BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define LABEL_BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define LABEL_ZONE "topology.kubernetes.io/zone"
#define LABEL_REGION "topology.kubernetes.io/region"
#define ANN_BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"

/* Upstream's topologyLabels, in its order. */
enum { N_TOPO_LABELS = 4 };

static const ks_resource_ref_t vz_resources[] = {
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
};

typedef struct vz {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_store_t *pvcs, *pvs, *classes;
    const char *keys[N_TOPO_LABELS]; /* interned */
    const char *ga[N_TOPO_LABELS];   /* translateToGALabel of each */
} vz_t;

/* One PV label to match: the node's value of `key` (or of its GA name)
 * must be one of values[first .. first + n). */
typedef struct vz_topo {
    uint32_t label; /* index into vz_t.keys */
    uint32_t first, n;
} vz_topo_t;

/* Filter state: one block (plain data, freed with free). */
typedef struct vz_state {
    uint32_t n_topos, n_values;
    vz_topo_t *topos;     /* into the same block */
    const char **values;  /* interned */
} vz_state_t;

/* Growable arrays while PreFilter collects. */
typedef struct vz_acc {
    vz_topo_t *topos;
    uint32_t n_topos, cap_topos;
    const char **values;
    uint32_t n_values, cap_values;
} vz_acc_t;

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
    void *na;
    uint32_t nc;
    if (need <= *cap)
        return 0;
    nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    na = realloc(*arr, (size_t)nc * size);
    if (na == NULL)
        return -1;
    *arr = na;
    *cap = nc;
    return 0;
}

static int vz_create(const ks_host_api_t *api, ks_handle_t *h,
                     const ks_args_t *args, void **self, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {NULL};
    static const char *const names[N_TOPO_LABELS] = {
        LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION};
    static const char *const ga[N_TOPO_LABELS] = {LABEL_ZONE, LABEL_REGION,
                                                  LABEL_ZONE, LABEL_REGION};
    vz_t *v;
    int i;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    if (!KS_API_HAS(api, store_get) || !KS_API_HAS(api, object_map_iterate)) {
        snprintf(err, errlen, "this host has no cluster object stores "
                              "(ABI 1.3); VolumeZone needs them");
        return -1;
    }
    v = calloc(1, sizeof *v);
    if (v == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    v->api = api;
    v->h = h;
    v->pvcs = api->store_get(h, "", "v1", "persistentvolumeclaims");
    v->pvs = api->store_get(h, "", "v1", "persistentvolumes");
    v->classes = api->store_get(h, "storage.k8s.io", "v1", "storageclasses");
    if (v->pvcs == NULL || v->pvs == NULL || v->classes == NULL) {
        snprintf(err, errlen, "the host has no store for a declared "
                              "resource");
        free(v);
        return -1;
    }
    for (i = 0; i < N_TOPO_LABELS; i++) {
        v->keys[i] = api->intern(h, names[i]);
        v->ga[i] = api->intern(h, ga[i]);
    }
    *self = v;
    return 0;
}

static void vz_destroy(void *self)
{
    free(self);
}

/* A failing status with a Go-%q-quoted name: `fmt` holds one %s that
 * receives the quoted text. */
static void reason_quoted(const vz_t *v, ks_status_t *st, const char *fmt,
                          const char *name)
{
    char q[600];
    size_t o = 0;
    q[o++] = '"';
    for (; *name && o < sizeof q - 4; name++) {
        if (*name == '"' || *name == '\\')
            q[o++] = '\\';
        q[o++] = *name;
    }
    q[o++] = '"';
    q[o] = '\0';
    v->api->status_reasonf(st, fmt, q);
}

/* upstream volumehelpers.LabelZonesToSet: split on "__", trim spaces; an
 * empty element makes the whole label unusable (-1: ignored). Appends the
 * interned values to acc. */
static int add_zone_set(const vz_t *v, vz_acc_t *acc, const char *text)
{
    uint32_t start = acc->n_values;
    const char *p = text;
    for (;;) {
        const char *end = strstr(p, "__");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *b = p, *e = p + n;
        char buf[256];
        const char *in;
        uint32_t k;
        while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' ||
                         *b == '\r' || *b == '\v' || *b == '\f'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
                         e[-1] == '\r' || e[-1] == '\v' || e[-1] == '\f'))
            e--;
        if (e == b || (size_t)(e - b) >= sizeof buf) {
            acc->n_values = start;
            return -1;
        }
        memcpy(buf, b, (size_t)(e - b));
        buf[e - b] = '\0';
        in = v->api->intern(v->h, buf);
        for (k = start; k < acc->n_values; k++)
            if (acc->values[k] == in)
                break;
        if (k == acc->n_values) {
            if (grow((void **)&acc->values, &acc->cap_values,
                     acc->n_values + 1, sizeof *acc->values) != 0)
                return -2;
            acc->values[acc->n_values++] = in;
        }
        if (end == NULL)
            return 0;
        p = end + 2;
    }
}

/* getPVTopologies: the PV's topology labels, in upstream's order. */
static int add_pv_topologies(const vz_t *v, vz_acc_t *acc,
                             const ks_object_t *pv)
{
    ks_labels_t labels = v->api->object_labels(pv);
    uint32_t i;
    for (i = 0; i < N_TOPO_LABELS; i++) {
        const char *val = ks_labels_get_interned(&labels, v->keys[i]);
        uint32_t first = acc->n_values;
        int rc;
        if (val == NULL)
            continue;
        rc = add_zone_set(v, acc, val);
        if (rc == -2)
            return -1;
        if (rc == -1) {
            v->api->log(v->h, KS_LOG_DEBUG,
                        "PV %s: cannot parse topology label %s=%s, "
                        "ignoring it", v->api->object_name(pv),
                        v->keys[i], val);
            continue;
        }
        if (grow((void **)&acc->topos, &acc->cap_topos, acc->n_topos + 1,
                 sizeof *acc->topos) != 0)
            return -1;
        acc->topos[acc->n_topos].label = i;
        acc->topos[acc->n_topos].first = first;
        acc->topos[acc->n_topos].n = acc->n_values - first;
        acc->n_topos++;
    }
    return 0;
}

/* storagehelpers.GetPersistentVolumeClaimClass: the beta annotation when
 * present (even empty), else spec.storageClassName, else "". */
static const char *claim_class(const vz_t *v, const ks_object_t *pvc)
{
    const char *s = NULL;
    if (v->api->object_string(pvc, "metadata.annotations[\"" 
                                   ANN_BETA_STORAGE_CLASS "\"]",
                              &s) == KS_FIELD_OK)
        return s;
    if (v->api->object_string(pvc, "spec.storageClassName", &s) ==
        KS_FIELD_OK)
        return s;
    return "";
}

/* getPVbyPod: the bound volumes' topologies into acc; a failing code with
 * upstream's reason in st when a claim, volume or class is missing. */
static ks_code_t collect(const vz_t *v, const ks_pod_t *pod, vz_acc_t *acc,
                         ks_status_t *st)
{
    uint32_t i;
    for (i = 0; i < pod->n_volumes; i++) {
        const ks_volume_t *vol = &pod->volumes[i];
        const ks_object_t *pvc, *pv, *sc;
        const char *pv_name = "", *sc_name, *mode = NULL;
        if (vol->source != KS_VOLUME_PVC)
            continue;
        if (vol->claim_name[0] == '\0') {
            v->api->status_reason(st, "PersistentVolumeClaim had no name");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        pvc = v->api->object_get(v->pvcs, pod->ns, vol->claim_name);
        if (pvc == NULL) {
            reason_quoted(v, st, "persistentvolumeclaim %s not found",
                          vol->claim_name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        (void)v->api->object_string(pvc, "spec.volumeName", &pv_name);
        if (pv_name[0] == '\0') {
            sc_name = claim_class(v, pvc);
            if (sc_name[0] == '\0') {
                v->api->status_reason(st, "PersistentVolumeClaim had no pv "
                                          "name and storageClass name");
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            sc = v->api->object_get(v->classes, NULL, sc_name);
            if (sc == NULL) {
                reason_quoted(v, st,
                              "storageclass.storage.k8s.io %s not found",
                              sc_name);
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            if (v->api->object_string(sc, "volumeBindingMode", &mode) !=
                KS_FIELD_OK) {
                reason_quoted(v, st,
                              "VolumeBindingMode not set for StorageClass %s",
                              sc_name);
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            if (strcmp(mode, "WaitForFirstConsumer") == 0)
                continue; /* unbound: VolumeBinding's business */
            v->api->status_reason(st, "PersistentVolume had no name");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        pv = v->api->object_get(v->pvs, NULL, pv_name);
        if (pv == NULL) {
            reason_quoted(v, st, "persistentvolume %s not found", pv_name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (add_pv_topologies(v, acc, pv) != 0) {
            v->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
    }
    return KS_SUCCESS;
}

/* The collected topologies as one block; NULL when out of memory. */
static vz_state_t *pack(const vz_acc_t *acc)
{
    size_t sz = sizeof(vz_state_t) + acc->n_topos * sizeof(vz_topo_t) +
                acc->n_values * sizeof(const char *);
    vz_state_t *s = malloc(sz);
    if (s == NULL)
        return NULL;
    s->n_topos = acc->n_topos;
    s->n_values = acc->n_values;
    /* The pointers first: they need the stricter alignment. */
    s->values = (const char **)(void *)(s + 1);
    s->topos = (vz_topo_t *)(void *)(s->values + acc->n_values);
    if (acc->n_topos)
        memcpy(s->topos, acc->topos, acc->n_topos * sizeof(vz_topo_t));
    if (acc->n_values)
        memcpy(s->values, acc->values, acc->n_values * sizeof(const char *));
    return s;
}

static void acc_free(vz_acc_t *acc)
{
    free(acc->topos);
    free(acc->values);
}

static ks_code_t vz_pre_filter(void *self, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               ks_prefilter_result_t *result, ks_status_t *st)
{
    vz_t *v = self;
    vz_acc_t acc = {NULL, 0, 0, NULL, 0, 0};
    vz_state_t *s;
    ks_code_t c;
    (void)result;
    c = collect(v, pod, &acc, st);
    if (c != KS_SUCCESS) {
        acc_free(&acc);
        return c;
    }
    if (acc.n_topos == 0) {
        acc_free(&acc);
        return KS_SKIP;
    }
    s = pack(&acc);
    acc_free(&acc);
    if (s == NULL) {
        v->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return ks_plugin_state_put(v->api, v->h, cs, KS_STATE_FILTER, s, st);
}

/* Does the node fit every topology? */
static int node_fits(const vz_t *v, const vz_state_t *s, const ks_node_t *node)
{
    uint32_t i, k;
    int constrained = 0;
    for (i = 0; i < N_TOPO_LABELS && !constrained; i++)
        constrained = ks_labels_get_interned(&node->labels, v->keys[i]) != NULL;
    if (!constrained)
        return 1; /* a node without zone labels: a single-zone cluster */
    for (i = 0; i < s->n_topos; i++) {
        const vz_topo_t *t = &s->topos[i];
        const char *val =
            ks_labels_get_interned(&node->labels, v->keys[t->label]);
        if (val == NULL)
            val = ks_labels_get_interned(&node->labels, v->ga[t->label]);
        if (val == NULL)
            return 0;
        for (k = 0; k < t->n; k++)
            if (s->values[t->first + k] == val)
                break;
        if (k == t->n)
            return 0;
    }
    return 1;
}

static inline ks_code_t vz_filter_with_state(void *self, ks_cycle_state_t *cs,
                                             void *state, const ks_pod_t *pod,
                                             const ks_node_info_t *ni,
                                             ks_status_t *st)
{
    vz_t *v = self;
    const vz_state_t *s = state;
    vz_state_t *own = NULL;
    int fits;
    (void)cs;
    if (pod->n_volumes == 0)
        return KS_SUCCESS;
    if (ni->node == NULL) {
        v->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    if (s == NULL) {
        /* No PreFilter state: collect here, as upstream falls back. */
        vz_acc_t acc = {NULL, 0, 0, NULL, 0, 0};
        ks_code_t c = collect(v, pod, &acc, st);
        if (c != KS_SUCCESS) {
            acc_free(&acc);
            return c;
        }
        own = pack(&acc);
        acc_free(&acc);
        if (own == NULL) {
            v->api->status_reason(st, "out of memory");
            return KS_ERROR;
        }
        s = own;
    }
    fits = node_fits(v, s, ni->node);
    free(own);
    if (!fits) {
        v->api->status_reason(st, REASON_CONFLICT);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static ks_code_t vz_filter(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           ks_status_t *st)
{
    vz_t *v = self;
    return vz_filter_with_state(
        self, cs, v->api->plugin_state_get(v->h, cs, KS_STATE_FILTER), pod,
        ni, st);
}

KS_FILTER_NODES_FROM(vz_filter_nodes, vz_filter_with_state)

/* QueueingHints for the declared resources (upstream's
 * isSchedulableAfter... functions). The host sends one kind of event for
 * every declared resource of every plugin; the objects' kind and
 * apiVersion tell them apart. */
static int is_type(const vz_t *v, const ks_object_t *o, const char *api_version,
                   const char *kind)
{
    const char *k = NULL, *av = NULL;
    return v->api->object_string(o, "kind", &k) == KS_FIELD_OK &&
           v->api->object_string(o, "apiVersion", &av) == KS_FIELD_OK &&
           strcmp(k, kind) == 0 && strcmp(av, api_version) == 0;
}

/* Does the pod use the claim (its namespace and one of its claim names)? */
static int pod_uses_claim(const vz_t *v, const ks_pod_t *pod,
                          const ks_object_t *pvc)
{
    const char *ns = v->api->object_namespace(pvc);
    const char *name = v->api->object_name(pvc);
    uint32_t i;
    if (strcmp(ns, pod->ns) != 0)
        return 0;
    for (i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].source == KS_VOLUME_PVC &&
            strcmp(pod->volumes[i].claim_name, name) == 0)
            return 1;
    return 0;
}

/* Do two PVs have the same topology labels (getPVTopologies equal)? */
static int same_topology(const vz_t *v, const ks_object_t *a,
                         const ks_object_t *b)
{
    ks_labels_t la = v->api->object_labels(a), lb = v->api->object_labels(b);
    uint32_t i;
    for (i = 0; i < N_TOPO_LABELS; i++)
        if (ks_labels_get_interned(&la, v->keys[i]) !=
            ks_labels_get_interned(&lb, v->keys[i]))
            return 0;
    return 1;
}

static ks_queueing_hint_t vz_after_object(void *self, const ks_pod_t *pod,
                                          const void *old_obj,
                                          const void *new_obj)
{
    const vz_t *v = self;
    const ks_object_t *old = old_obj, *n = new_obj;
    const char *mode = NULL;
    if (n == NULL)
        return KS_QUEUE_SKIP;
    if (is_type(v, n, "v1", "PersistentVolumeClaim"))
        /* a claim the pod uses was added or changed (bound, say) */
        return pod_uses_claim(v, pod, n) ? KS_QUEUE : KS_QUEUE_SKIP;
    if (is_type(v, n, "v1", "PersistentVolume"))
        /* a new volume, or one whose topology labels changed */
        return old == NULL || !same_topology(v, old, n) ? KS_QUEUE
                                                        : KS_QUEUE_SKIP;
    if (is_type(v, n, "storage.k8s.io/v1", "StorageClass"))
        /* only a new WaitForFirstConsumer class (the mode is immutable) */
        return old == NULL &&
                       v->api->object_string(n, "volumeBindingMode",
                                             &mode) == KS_FIELD_OK &&
                       strcmp(mode, "WaitForFirstConsumer") == 0
                   ? KS_QUEUE
                   : KS_QUEUE_SKIP;
    return KS_QUEUE_SKIP; /* another plugin's resource */
}

/* EnqueueExtensions as upstream with QueueingHints on: a node added or
 * relabelled; a claim or volume added or updated, a class added
 * (KS_RES_OBJECT, since ABI 1.3; the hint picks the relevant ones). */
static uint32_t vz_events(void *self, ks_cluster_event_t *out, uint32_t cap)
{
    const ks_cluster_event_t ev[] = {
        {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL},
        {KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE},
    };
    (void)self;
    return ks_events_copy(out, cap, ev, 2);
}

static uint32_t vz_events_v2(void *self, ks_cluster_event_hint_t *out,
                             uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, NULL},
        {{KS_RES_OBJECT, KS_ACT_ADD | KS_ACT_UPDATE}, vz_after_object},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching (upstream's volumes signer): the pod's namespace
 * (claims are looked up there) and its volumes. */
static ks_code_t vz_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const vz_t *v = self;
    ks_sign_volumes(v->api, sg, pod);
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("VolumeZone", "1.36.0-ks1",
    .create = vz_create,
    .destroy = vz_destroy,
    .pre_filter = vz_pre_filter,
    .filter = vz_filter,
    .filter_with_state = vz_filter_with_state,
    .filter_nodes = vz_filter_nodes,
    .events_to_register = vz_events,
    .events_to_register_v2 = vz_events_v2,
    .sign = vz_sign,
    .resources = vz_resources,
    .n_resources = 3);
