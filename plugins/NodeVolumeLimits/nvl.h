/*
 * NodeVolumeLimits (PreFilter, Filter, QueueingHints), as upstream v1.36's
 * nodevolumelimits CSILimits: a node whose CSINode gives a CSI driver an
 * attach limit (spec.drivers[].allocatable.count) takes a pod only while
 * the unique volumes of that driver -- the node's pods', the
 * VolumeAttachments to the node, and the pod's new ones -- stay within
 * it.
 *
 * A volume counts under its CSI driver as "driver/volumeHandle":
 *   - a bound claim: its PersistentVolume's spec.csi, or, for an in-tree
 *     volume whose plugin is migrated to CSI, the translated driver and
 *     handle (nvl_translate.c, as k8s.io/csi-translation-lib);
 *   - an unbound claim (or one whose volume is missing): its
 *     StorageClass's provisioner (translated when in-tree), with a handle
 *     made of a random per-instance prefix and the claim's name;
 *   - a generic ephemeral volume: its claim, which the pod must own;
 *   - an inline in-tree volume written in the pod (gcePersistentDisk,
 *     awsElasticBlockStore, azureDisk, cinder, portworxVolume; the pod
 *     view's volume_inline, ABI 1.4) on a node with a CSINode: its CSI
 *     driver and translated handle, as TranslateInTreeInlineVolumeToCSI.
 *
 * Not reproduced: the refusal of an inline azureDisk whose kind is not
 * Managed (the pod view does not carry azureDisk.kind), VolumeLimitScaling
 * (a CSIDriver's preventPodSchedulingIfMissing; alpha and off in v1.36)
 * and the skip of pods whose resize is deferred (the pod view has no
 * resize status).
 *
 * Files: nvl_plugin.c (descriptor, events, hints), nvl_filter.c (PreFilter
 * and Filter), nvl_volumes.c (a pod's attachable volumes, the
 * VolumeAttachments), nvl_translate.c (in-tree to CSI), nvl_set.c (a set
 * of volume names). nvl_non_csi.c is upstream v1.24's EBSLimits,
 * GCEPDLimits and AzureDiskLimits, built as three more plugins from the
 * same directory (see meson.build).
 *
 * Threads: create, destroy, PreFilter and the hints on the loop thread;
 * Filter on workers (it reads the stores and its immutable state, and
 * allocates only its own scratch sets).
 */
#ifndef KS_NODE_VOLUME_LIMITS_H
#define KS_NODE_VOLUME_LIMITS_H

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define NVL_NAME "NodeVolumeLimits"
#define NVL_REASON_MAX_VOLUMES "node(s) exceed max volume count"

typedef struct nvl_plugin {
    const ks_host_api_t *api;
    ks_handle_t *h;
    const ks_store_t *pvcs, *pvs, *classes, *csinodes, *attachments;
    /* upstream's randomVolumeIDPrefix: 32 random characters, so that the
     * made-up handles of unbound claims match no real volume's */
    char prefix[33];
} nvl_plugin_t;

/* --- nvl_set.c: a set of volume names ------------------------------------ */

/*
 * Unique volume names ("driver/handle"), each with its driver, as
 * upstream's map[string]string. Strings are copied into the set. Owned by
 * whoever made it (nvl_set_free); one thread at a time.
 */
typedef struct nvl_set_item {
    size_t name, driver; /* offsets into buf */
    uint64_t hash;
} nvl_set_item_t;

typedef struct nvl_set {
    char *buf;
    size_t len, cap;
    nvl_set_item_t *items;
    uint32_t n, cap_items;
    uint32_t *slots; /* open addressing: item index + 1, 0 when free */
    uint32_t n_slots;
} nvl_set_t;

#define NVL_SET_INIT {NULL, 0, 0, NULL, 0, 0, NULL, 0}

/* Set name -> driver (a name already there takes the new driver, as a Go
 * map assignment). The name is driver "/" handle, built here. Returns the
 * name's index (0 .. n-1), or -1 when out of memory. */
int nvl_set_put(nvl_set_t *s, const char *driver, const char *handle);
int nvl_set_has(const nvl_set_t *s, const char *name);
static inline const char *nvl_set_name(const nvl_set_t *s, uint32_t i)
{
    return s->buf + s->items[i].name;
}
static inline const char *nvl_set_driver(const nvl_set_t *s, uint32_t i)
{
    return s->buf + s->items[i].driver;
}
void nvl_set_free(nvl_set_t *s);

/* --- nvl_translate.c: in-tree volumes as CSI (csi-translation-lib) ------- */

/* The CSI driver an in-tree plugin ("kubernetes.io/aws-ebs") migrates to,
 * or NULL when it is not a migratable plugin
 * (IsMigratableIntreePluginByName + GetCSINameFromInTreeName). */
const char *nvl_csi_driver_of(const char *in_tree_plugin);
/* upstream isCSIMigrationOn (v1.36): the node has a CSINode, and the
 * plugin is AWS EBS, GCE PD, Azure Disk, Cinder or Portworx (their
 * migration is on for good; the CSINode's migrated-plugins annotation is
 * no longer read). */
int nvl_migration_on(int has_csinode, const char *in_tree_plugin);
/* A PersistentVolume with an in-tree source: its plugin name, or NULL
 * when it has none that csi-translation-lib translates (IsPVMigratable +
 * GetInTreePluginNameFromSpec). */
const char *nvl_pv_in_tree_plugin(const ks_host_api_t *api,
                                  const ks_object_t *pv);
/* TranslateInTreePVToCSI's volume handle for such a PV into buf; 0, or -1
 * when the translation fails (a malformed EBS volume ID, GCE zones in
 * several regions). */
int nvl_pv_csi_handle(const ks_host_api_t *api, const ks_object_t *pv,
                      const char *in_tree_plugin, char *buf, size_t len);

/* The in-tree plugin of an inline source kind ("kubernetes.io/gce-pd"),
 * or NULL for a kind csi-translation-lib does not translate (iSCSI, RBD,
 * none). */
const char *nvl_inline_plugin(ks_inline_kind_t kind);
/* TranslateInTreeInlineVolumeToCSI's volume handle for an inline source
 * (GCE PD "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/<pdName>", the
 * EBS volume ID, the Azure disk URI, the Cinder or Portworx volume ID)
 * into buf; 0, or -1 when the translation fails (a malformed EBS volume
 * ID, or a kind without translation). */
int nvl_inline_csi_handle(const ks_volume_inline_t *vi, char *buf,
                          size_t len);

/* --- nvl_volumes.c: what a pod attaches ---------------------------------- */

/*
 * upstream filterAttachableVolumes: the pod's claims, ephemeral volumes
 * and inline in-tree volumes of a migrated plugin (checkAttachableInline-
 * Volume; read from a 1.4 host only) as CSI volumes into `out`.
 * `has_csinode`: the node has a CSINode (in-tree volumes, inline or
 * PersistentVolumes, count only then; an inline volume that does not
 * translate is an Error then, "converting volume(NAME) from inline to
 * csi: ..."). For the pod being scheduled
 * (`new_pod`), a missing claim is an error; for a pod of the node it is
 * not counted. KS_SUCCESS, or the failure's code with upstream's message
 * in st (KS_ERROR when out of memory).
 */
ks_code_t nvl_pod_volumes(const nvl_plugin_t *pl, const ks_pod_t *pod,
                          int has_csinode, int new_pod, nvl_set_t *out,
                          ks_status_t *st);

/* ephemeral.VolumeIsForPod: is the claim's controller (the first owner
 * reference with controller: true) the pod, by uid? */
int nvl_claim_is_for_pod(const nvl_plugin_t *pl, const ks_object_t *pvc,
                         const ks_pod_t *pod);

/* One VolumeAttachment that counts (upstream getNodeVolumeAttachmentInfo):
 * its node (interned) and its volume's name in `vols` (index). */
typedef struct nvl_attachment {
    const char *node;
    uint32_t vol;
} nvl_attachment_t;

/* Every VolumeAttachment with an attacher, a PersistentVolume source and
 * a CSI volume: its volume (attacher "/" handle) into `vols`, and an entry
 * in *out (malloc'd, *n of them, sorted by node address, each (node,
 * volume) once). 0, or -1 when out of memory. Loop thread (interns). */
int nvl_attachments(const nvl_plugin_t *pl, nvl_set_t *vols,
                    nvl_attachment_t **out, uint32_t *n);

/* --- nvl_filter.c -------------------------------------------------------- */

ks_code_t nvl_pre_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                         ks_prefilter_result_t *result, ks_status_t *st);
ks_code_t nvl_filter_with_state(void *self, ks_cycle_state_t *cs, void *state,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                ks_status_t *st);
ks_code_t nvl_filter(void *self, ks_cycle_state_t *cs, const ks_pod_t *pod,
                     const ks_node_info_t *ni, ks_status_t *st);
ks_code_t nvl_filter_nodes(void *self, ks_cycle_state_t *cs, void *state,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, ks_status_t *scratch);

#endif /* KS_NODE_VOLUME_LIMITS_H */
