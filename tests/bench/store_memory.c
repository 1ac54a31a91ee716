/*
 * Memory per stored object of a declared resource (cluster/object_store.h):
 * N PersistentVolumeClaims, N PersistentVolumes and N objects of a custom
 * resource, each shaped as the API server serves them (managedFields
 * dropped, as the informers drop them), stored one by one; prints the
 * heap bytes per object (mallinfo2's in-use bytes before and after) and
 * the object's compact JSON size. A benchmark: it prints figures.
 *
 * Usage: store-memory [N]   (default 20000)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/object_store.h"

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static int pvc(char *buf, size_t len, unsigned i)
{
    return snprintf(
        buf, len,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        "\"metadata\":{\"name\":\"data-web-%u\",\"namespace\":\"shop\","
        "\"uid\":\"6b1f0c3e-%08x-4e7a-9c55-0a1b2c3d4e5f\","
        "\"resourceVersion\":\"%u\",\"creationTimestamp\":"
        "\"2026-11-26T10:00:00Z\",\"labels\":{\"app\":\"web\"},"
        "\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\","
        "\"pv.kubernetes.io/bound-by-controller\":\"yes\","
        "\"volume.kubernetes.io/selected-node\":\"node-%u\","
        "\"volume.kubernetes.io/storage-provisioner\":\"ebs.csi.aws.com\"},"
        "\"finalizers\":[\"kubernetes.io/pvc-protection\"]},"
        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":"
        "{\"requests\":{\"storage\":\"10Gi\"}},\"volumeName\":"
        "\"pvc-6b1f0c3e-%08x\",\"storageClassName\":\"gp3\","
        "\"volumeMode\":\"Filesystem\"},\"status\":{\"phase\":\"Bound\","
        "\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":"
        "\"10Gi\"}}}",
        i, i, 1000 + i, i % 500, i);
}

static int pv(char *buf, size_t len, unsigned i)
{
    return snprintf(
        buf, len,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
        "\"metadata\":{\"name\":\"pvc-6b1f0c3e-%08x\","
        "\"uid\":\"9a2e1d4c-%08x-4b6d-8e7f-1a2b3c4d5e6f\","
        "\"resourceVersion\":\"%u\",\"creationTimestamp\":"
        "\"2026-11-26T10:00:01Z\",\"annotations\":{"
        "\"pv.kubernetes.io/provisioned-by\":\"ebs.csi.aws.com\","
        "\"volume.kubernetes.io/provisioner-deletion-secret-name\":\"\"},"
        "\"finalizers\":[\"kubernetes.io/pv-protection\","
        "\"external-attacher/ebs-csi-aws-com\"]},"
        "\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"csi\":{\"driver\":"
        "\"ebs.csi.aws.com\",\"fsType\":\"ext4\",\"volumeHandle\":"
        "\"vol-0%015x\",\"volumeAttributes\":{\"storage.kubernetes.io/"
        "csiProvisionerIdentity\":\"1700000000000-8081-ebs.csi.aws.com\"}},"
        "\"accessModes\":[\"ReadWriteOnce\"],\"claimRef\":{\"kind\":"
        "\"PersistentVolumeClaim\",\"namespace\":\"shop\",\"name\":"
        "\"data-web-%u\",\"uid\":\"6b1f0c3e-%08x-4e7a-9c55-0a1b2c3d4e5f\","
        "\"apiVersion\":\"v1\",\"resourceVersion\":\"%u\"},"
        "\"persistentVolumeReclaimPolicy\":\"Delete\",\"storageClassName\":"
        "\"gp3\",\"volumeMode\":\"Filesystem\",\"nodeAffinity\":{\"required\":"
        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
        "\"topology.ebs.csi.aws.com/zone\",\"operator\":\"In\",\"values\":"
        "[\"eu-west-1a\"]}]}]}}},\"status\":{\"phase\":\"Bound\"}}",
        i, i, 2000 + i, i, i, i, 1000 + i);
}

static int podgroup(char *buf, size_t len, unsigned i)
{
    return snprintf(
        buf, len,
        "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":"
        "\"PodGroup\",\"metadata\":{\"name\":\"train-%u\",\"namespace\":"
        "\"ml\",\"uid\":\"1c2d3e4f-%08x-4a5b-8c7d-9e0f1a2b3c4d\","
        "\"resourceVersion\":\"%u\",\"creationTimestamp\":"
        "\"2026-11-26T10:00:02Z\"},\"spec\":{\"minMember\":8,"
        "\"scheduleTimeoutSeconds\":60},\"status\":{\"phase\":\"Running\","
        "\"running\":8,\"scheduled\":8}}",
        i, i, 3000 + i);
}

static int measure(const ks_resource_ref_t *ref, unsigned n,
                   int (*make)(char *, size_t, unsigned))
{
    ks_store_t *s;
    ks_error_t err = {0};
    char buf[4096];
    size_t before, after, json = 0;
    unsigned i;
    if (ks_store_register(ref, &s, &err) != 0) {
        fprintf(stderr, "store-memory: %s\n", err.msg);
        return 1;
    }
    before = heap_in_use();
    for (i = 0; i < n; i++) {
        int len = make(buf, sizeof buf, i);
        json += (size_t)len;
        if (ks_store_put_text(s, buf, (size_t)len, "bench", &err) != 0) {
            fprintf(stderr, "store-memory: %s\n", err.msg);
            return 1;
        }
    }
    after = heap_in_use();
    printf("{\"kind\": \"%s\", \"objects\": %u, \"bytes_per_object\": %zu, "
           "\"json_bytes_per_object\": %zu}\n",
           ref->kind, ks_store_count(s), (after - before) / n, json / n);
    return 0;
}

int main(int argc, char **argv)
{
    static const ks_resource_ref_t pvcs = {"", "v1", "persistentvolumeclaims",
                                           "PersistentVolumeClaim"};
    static const ks_resource_ref_t pvs = {"", "v1", "persistentvolumes",
                                          "PersistentVolume"};
    static const ks_resource_ref_t groups = {
        "scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup"};
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
    if (n == 0)
        n = 1;
    if (measure(&pvcs, n, pvc) || measure(&pvs, n, pv) ||
        measure(&groups, n, podgroup))
        return 1;
    ks_stores_reset();
    return 0;
}
