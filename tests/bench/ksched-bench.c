/*
 * ksched-bench: scheduling throughput, per-attempt latency and peak memory
 * of the real host and plugins on the workload shapes of kube-scheduler's
 * scheduler_perf.
 *
 * Every workload is generated as manifest YAML text and read back with the
 * manifest reader, so the objects scheduled here are exactly the ones that
 * --write-manifests writes out for `ksched schedule --cluster FILE`.
 *
 * Each (workload, percentageOfNodesToScore, parallelism, run) combination
 * runs in its own child process: the peak RSS reported is that child's
 * (wait4 rusage), not the sum of everything run before it. The child builds
 * a generation from a KubeSchedulerConfiguration text, fills a cache with
 * the nodes (and, for preemption, the pods already running), queues the
 * pending pods in order and calls ks_scheduler_step() until nothing is left
 * to do. Time runs from the first pod queued to the last pod bound. The
 * latency of an attempt is the wall time of the step that ran its
 * scheduling cycle (Filter/Score plus Reserve, Permit and the binding
 * cycle that the same step runs).
 *
 * Backoffs (a preemptor waits for its victims to go) elapse on a virtual
 * clock: when no step can run but pods are backing off, the clock moves
 * one second, as in `ksched schedule`, so no real time is spent waiting.
 *
 * Exit status: 0 when every run bound the expected number of pods, 1 when
 * some run bound a different number or failed, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cache.h"
#include "base/intern.h"
#include "cluster/objects.h"
#include "config/config.h"
#include "framework/batch.h"
#include "framework/generation.h"
#include "base/log.h"
#include "framework/queue.h"
#include "framework/scheduler.h"
#if defined(__has_include)
#if __has_include("framework/pool.h")
#include "framework/pool.h"
#endif
#endif
/* The stores of declared resources (PersistentVolumes, claims, classes)
 * exist from the SDK's ABI 1.3 on; compare.sh builds this same file in an
 * older tree too, where the Volumes workload's objects are skipped. */
#if defined(__has_include)
#if __has_include("cluster/object_store.h")
#include "cluster/object_store.h"
#define BENCH_HAVE_STORES 1
#endif
#endif
#ifndef BENCH_HAVE_STORES
#define BENCH_HAVE_STORES 0
#endif
/* Instruction counts of the scheduling phase alone: under `valgrind
 * --tool=callgrind --instr-atstart=no` only the pods' scheduling is
 * instrumented (generating and reading the workload runs at native
 * speed); outside valgrind these are no-ops. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

/* The seed seam (--seed) is newer than some trees compare.sh builds this
 * file in: weak, called only when linked. */
#pragma weak ks_scheduler_set_seed
void ks_scheduler_set_seed(ks_scheduler_t *s, uint64_t seed);

/* --- workloads ------------------------------------------------------------ */

typedef enum bench_kind {
    BK_BASIC,     /* plain pods */
    BK_SPREAD,    /* zone spreading, maxSkew 1, DoNotSchedule */
    BK_ANTI,      /* pods of N_ANTI_RS ReplicaSets, each with required
                   * hostname anti-affinity to its own ReplicaSet's pods */
    BK_NODE_AFF,  /* required node affinity bench In [yes] */
    BK_PREEMPT,   /* full nodes, high-priority pods preempt */
    BK_DEPLOY,    /* pods of N_DEPLOY ReplicaSets behind Services: the
                   * system-default spreading (hostname maxSkew 3, zone
                   * maxSkew 5, ScheduleAnyway) applies */
    BK_PREEMPT_BASIC, /* scheduler_perf's PreemptionBasic: LOW_PER_NODE
                       * low-priority pods of 900m on every node, then
                       * high-priority pods of 3 cpus (one per node fits) */
    BK_CHURN,     /* scheduler_perf's SchedulingWithMixedChurn: plain pods
                   * while a node, a Service and a high-priority pod that
                   * fits nowhere are created and deleted in turn */
    BK_VOLUMES    /* StatefulSet pods, each with a claim of a
                   * WaitForFirstConsumer class of local PVs pinned to
                   * nodes (PVS_PER_NODE per node) */
} bench_kind_t;

typedef struct bench_workload {
    const char *name;
    bench_kind_t kind;
    uint32_t nodes;
    uint32_t pods; /* pending pods measured */
} bench_workload_t;

static const bench_workload_t bench_workloads[] = {
    {"SchedulingBasic/500Nodes", BK_BASIC, 500, 1000},
    {"SchedulingBasic/1000Nodes", BK_BASIC, 1000, 2000},
    {"SchedulingBasic/5000Nodes", BK_BASIC, 5000, 10000},
    {"SchedulingBasic/15000Nodes", BK_BASIC, 15000, 30000},
    /* The cost curve's last point (pods = 2 x nodes); not in the default
     * selection: name it with --workload. */
    {"SchedulingBasic/50000Nodes", BK_BASIC, 50000, 100000},
    {"TopologySpreading/5000Nodes", BK_SPREAD, 5000, 10000},
    {"SchedulingPodAntiAffinity/5000Nodes", BK_ANTI, 5000, 2000},
    {"SchedulingNodeAffinity/5000Nodes", BK_NODE_AFF, 5000, 10000},
    {"Preemption/5000Nodes", BK_PREEMPT, 5000, 1000},
    {"PreemptionBasic/500Nodes", BK_PREEMPT_BASIC, 500, 500},
    {"PreemptionBasic/5000Nodes", BK_PREEMPT_BASIC, 5000, 5000},
    {"SchedulingWithMixedChurn/1000Nodes", BK_CHURN, 1000, 1000},
    {"SchedulingWithMixedChurn/5000Nodes", BK_CHURN, 5000, 10000},
    /* VolumeBinding's Filter reads every PV of the class for every node
     * it evaluates (about 23,000 instructions per PV): the cost grows with
     * nodes x PVs, so this shape stays small. */
    {"Volumes/100Nodes", BK_VOLUMES, 100, 200},
    {"SchedulingDeployment/5000Nodes", BK_DEPLOY, 5000, 10000},
    /* The largest public cluster's size; not in the default selection. */
    {"SchedulingBasic/130000Nodes", BK_BASIC, 130000, 10000},
    {"SchedulingDeployment/130000Nodes", BK_DEPLOY, 130000, 10000},
};
#define N_WORKLOADS (sizeof bench_workloads / sizeof bench_workloads[0])

/* Node shape (scheduler_perf's default node). */
#define NODE_MILLI_CPU 4000
#define NODE_MEMORY_MI (32 * 1024)
#define NODE_PODS 110
#define N_ZONES 3
/* Pod shape. */
#define POD_MILLI_CPU 100
#define POD_MEMORY_MI 256
/* Preemption: each node is full of LOW_PER_NODE pods of one cpu. */
#define LOW_PER_NODE 4
#define HIGH_PRIORITY 1000
/* SchedulingDeployment: pod j belongs to ReplicaSet j % N_DEPLOY. */
#define N_DEPLOY 100
/* SchedulingPodAntiAffinity: pod j belongs to ReplicaSet j % N_ANTI_RS. */
#define N_ANTI_RS 10
/* PreemptionBasic (scheduler_perf's pod-low-priority and
 * pod-high-priority templates). */
#define BASIC_LOW_MILLI 900
#define BASIC_HIGH_MILLI 3000
#define BASIC_HIGH_PRIORITY 10
/* SchedulingWithMixedChurn: one churn step (create, or delete what the
 * last one created) every CHURN_EVERY scheduling cycles; the churned pod
 * asks for CHURN_POD_CPU cpus, more than any node has. */
#define CHURN_EVERY 50
#define CHURN_POD_CPU 9
/* Volumes: local PVs per node, pods per StatefulSet. */
#define PVS_PER_NODE 2
#define STS_SIZE 100

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* Plain pods one node holds: the tightest of cpu, memory and pod count. */
static uint32_t pods_per_node(uint32_t milli_cpu, uint32_t memory_mi)
{
    return min_u32(min_u32(NODE_MILLI_CPU / milli_cpu,
                           NODE_MEMORY_MI / memory_mi),
                   NODE_PODS);
}

/* How many of the workload's pending pods can be bound, from capacity. */
static uint32_t bench_expected_bound(const bench_workload_t *w)
{
    uint32_t per = pods_per_node(POD_MILLI_CPU, POD_MEMORY_MI);
    switch (w->kind) {
    case BK_BASIC:
    case BK_DEPLOY: /* ScheduleAnyway: spreading only scores */
        return min_u32(w->pods, w->nodes * per);
    case BK_SPREAD: {
        /* Zone z holds nodes i with i % 3 == z. With maxSkew 1 a zone can
         * take at most one pod more than the fullest-possible smallest
         * zone, so the total is sum(min(cap_z, min_cap + 1)). */
        uint32_t cap[N_ZONES], lo = UINT32_MAX, total = 0, z;
        for (z = 0; z < N_ZONES; z++) {
            uint32_t n = w->nodes / N_ZONES + (z < w->nodes % N_ZONES);
            cap[z] = n * per;
            lo = min_u32(lo, cap[z]);
        }
        for (z = 0; z < N_ZONES; z++)
            total += min_u32(cap[z], lo + 1);
        return min_u32(w->pods, total);
    }
    case BK_ANTI: {
        /* One pod of a ReplicaSet per node. */
        uint32_t d, total = 0;
        for (d = 0; d < N_ANTI_RS; d++)
            total += min_u32(w->pods / N_ANTI_RS + (d < w->pods % N_ANTI_RS),
                             w->nodes);
        return min_u32(total, w->nodes * per);
    }
    case BK_PREEMPT_BASIC: /* one high-priority pod per node */
        return min_u32(w->pods, w->nodes);
    case BK_CHURN: /* the churned pod never fits; the churned node does
                    * not count */
        return min_u32(w->pods, w->nodes * per);
    case BK_VOLUMES:
        return min_u32(w->pods, w->nodes * min_u32(per, PVS_PER_NODE));
    case BK_NODE_AFF: /* nodes with an even index carry bench=yes */
        return min_u32(w->pods, (w->nodes + 1) / 2 * per);
    case BK_PREEMPT:
        /* Every preemptor needs one cpu: a node can give up all four of
         * its low-priority pods' cpus. */
        return min_u32(w->pods, w->nodes * (NODE_MILLI_CPU / 1000));
    }
    return 0;
}

/* --- manifest text -------------------------------------------------------- */

/* Where generated YAML goes: parsed into a manifest chunk by chunk (so the
 * text never needs to be held whole), or written to a file. */
typedef struct bench_sink {
    char *buf;
    size_t len, cap;
    FILE *out;          /* write mode */
    ks_manifest_t *m;   /* parse mode */
    const char *name;   /* file name used in parse messages */
    int failed;
    ks_error_t *err;
} bench_sink_t;

#define SINK_CHUNK (256 * 1024)

static void sink_printf(bench_sink_t *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sink_printf(bench_sink_t *k, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (k->failed)
        return;
    for (;;) {
        size_t room = k->cap - k->len;
        va_start(ap, fmt);
        n = vsnprintf(k->buf + k->len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            k->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            k->len += (size_t)n;
            return;
        }
        {
            size_t cap = k->cap ? k->cap * 2 : SINK_CHUNK * 2;
            char *nb;
            while (cap - k->len <= (size_t)n)
                cap *= 2;
            if ((nb = realloc(k->buf, cap)) == NULL) {
                k->failed = 1;
                return;
            }
            k->buf = nb;
            k->cap = cap;
        }
    }
}

static int sink_flush(bench_sink_t *k)
{
    if (k->failed)
        return -1;
    if (k->len == 0)
        return 0;
    if (k->out) {
        if (fwrite(k->buf, 1, k->len, k->out) != k->len)
            k->failed = 1;
    } else if (ks_manifest_load_string(k->m, k->name, k->buf, k->len,
                                       ks_intern_global(), NULL,
                                       k->err) != 0) {
        k->failed = 1;
    }
    k->len = 0;
    return k->failed ? -1 : 0;
}

/* Called between objects: hand over a full chunk. */
static void sink_boundary(bench_sink_t *k)
{
    if (k->len >= SINK_CHUNK)
        sink_flush(k);
}

static void gen_node(bench_sink_t *k, const bench_workload_t *w, uint32_t i)
{
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: Node\n"
                "metadata:\n"
                "  name: node-%u\n"
                "  labels:\n"
                "    kubernetes.io/hostname: node-%u\n"
                "    topology.kubernetes.io/zone: zone-%u\n",
                i, i, i % N_ZONES);
    if (w->kind == BK_NODE_AFF && i % 2 == 0)
        sink_printf(k, "    bench: \"yes\"\n");
    sink_printf(k,
                "status:\n"
                "  capacity:\n"
                "    cpu: \"%u\"\n"
                "    memory: %uGi\n"
                "    pods: \"%u\"\n"
                "  allocatable:\n"
                "    cpu: \"%u\"\n"
                "    memory: %uGi\n"
                "    pods: \"%u\"\n",
                NODE_MILLI_CPU / 1000, NODE_MEMORY_MI / 1024, NODE_PODS,
                NODE_MILLI_CPU / 1000, NODE_MEMORY_MI / 1024, NODE_PODS);
}

static void gen_container(bench_sink_t *k, const char *cpu)
{
    sink_printf(k,
                "  containers:\n"
                "  - name: pause\n"
                "    image: registry.k8s.io/pause:3.7\n"
                "    resources:\n"
                "      requests:\n"
                "        cpu: %s\n"
                "        memory: %uMi\n",
                cpu, POD_MEMORY_MI);
}

/* A low-priority pod already running on node i (preemption victims). */
static void gen_low_pod(bench_sink_t *k, uint32_t i, uint32_t n,
                        const char *cpu)
{
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: Pod\n"
                "metadata:\n"
                "  name: low-%u-%u\n"
                "  namespace: default\n"
                "  labels:\n"
                "    app: low\n"
                "spec:\n"
                "  nodeName: node-%u\n"
                "  priority: 0\n",
                i, n, i);
    gen_container(k, cpu);
}

/* The pods' owners: a ReplicaSet (or StatefulSet) and a Service per app
 * ("rs-D" or "sts-D"). */
static void gen_deployment(bench_sink_t *k, const char *kind,
                           const char *prefix, uint32_t d)
{
    sink_printf(k,
                "---\n"
                "apiVersion: apps/v1\n"
                "kind: %s\n"
                "metadata:\n"
                "  name: %s-%u\n"
                "  namespace: default\n"
                "  uid: %s-uid-%u\n"
                "spec:\n"
                "  selector:\n"
                "    matchLabels:\n"
                "      app: %s-%u\n"
                "---\n"
                "apiVersion: v1\n"
                "kind: Service\n"
                "metadata:\n"
                "  name: svc-%s-%u\n"
                "  namespace: default\n"
                "spec:\n"
                "  selector:\n"
                "    app: %s-%u\n",
                kind, prefix, d, prefix, d, prefix, d, prefix, d, prefix, d);
}

/* Volumes: the class, and node i's local PVs. */
static void gen_storage_class(bench_sink_t *k)
{
    sink_printf(k, "---\n"
                   "apiVersion: storage.k8s.io/v1\n"
                   "kind: StorageClass\n"
                   "metadata:\n"
                   "  name: local-wffc\n"
                   "provisioner: kubernetes.io/no-provisioner\n"
                   "volumeBindingMode: WaitForFirstConsumer\n");
}

static void gen_local_pv(bench_sink_t *k, uint32_t i, uint32_t n)
{
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: PersistentVolume\n"
                "metadata:\n"
                "  name: pv-%u-%u\n"
                "  resourceVersion: \"1\"\n"
                "spec:\n"
                "  storageClassName: local-wffc\n"
                "  capacity:\n"
                "    storage: 10Gi\n"
                "  accessModes:\n"
                "  - ReadWriteOnce\n"
                "  local:\n"
                "    path: /mnt/disks/vol%u\n"
                "  nodeAffinity:\n"
                "    required:\n"
                "      nodeSelectorTerms:\n"
                "      - matchExpressions:\n"
                "        - key: kubernetes.io/hostname\n"
                "          operator: In\n"
                "          values:\n"
                "          - node-%u\n"
                "status:\n"
                "  phase: Available\n",
                i, n, n, i);
}

/* Pod j's claim (StatefulSet sts-D's volumeClaimTemplate "data"). */
static void gen_claim(bench_sink_t *k, uint32_t j)
{
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: PersistentVolumeClaim\n"
                "metadata:\n"
                "  name: data-sts-%u-%u\n"
                "  namespace: default\n"
                "  uid: claim-uid-%u\n"
                "  resourceVersion: \"1\"\n"
                "spec:\n"
                "  storageClassName: local-wffc\n"
                "  accessModes:\n"
                "  - ReadWriteOnce\n"
                "  resources:\n"
                "    requests:\n"
                "      storage: 1Gi\n",
                j / STS_SIZE, j % STS_SIZE, j);
}

/* SchedulingWithMixedChurn's churned objects, number c of each (upstream's
 * node-default, pod-high-priority-large-cpu and service-default). */
static void gen_churn(bench_sink_t *k, uint32_t c)
{
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: Node\n"
                "metadata:\n"
                "  name: churn-node-%u\n"
                "  labels:\n"
                "    kubernetes.io/hostname: churn-node-%u\n"
                "    topology.kubernetes.io/zone: zone-%u\n"
                "status:\n"
                "  capacity:\n"
                "    cpu: \"%u\"\n"
                "    memory: %uGi\n"
                "    pods: \"%u\"\n"
                "  allocatable:\n"
                "    cpu: \"%u\"\n"
                "    memory: %uGi\n"
                "    pods: \"%u\"\n"
                "---\n"
                "apiVersion: v1\n"
                "kind: Service\n"
                "metadata:\n"
                "  name: churn-svc-%u\n"
                "  namespace: default\n"
                "spec:\n"
                "  selector:\n"
                "    app: churn\n"
                "---\n"
                "apiVersion: v1\n"
                "kind: Pod\n"
                "metadata:\n"
                "  name: churn-pod-%u\n"
                "  namespace: default\n"
                "  uid: churn-pod-uid-%u\n"
                "  labels:\n"
                "    app: churn\n"
                "spec:\n"
                "  priority: %d\n",
                c, c, c % N_ZONES, NODE_MILLI_CPU / 1000,
                NODE_MEMORY_MI / 1024, NODE_PODS, NODE_MILLI_CPU / 1000,
                NODE_MEMORY_MI / 1024, NODE_PODS, c, c, c,
                BASIC_HIGH_PRIORITY);
    {
        char cpu[16];
        snprintf(cpu, sizeof cpu, "\"%d\"", CHURN_POD_CPU);
        gen_container(k, cpu);
    }
}

/* How many churn steps' objects a run of w generates: enough for every
 * CHURN_EVERY cycles of the measured pods and their retries. */
static uint32_t churn_sets(const bench_workload_t *w)
{
    return w->kind == BK_CHURN ? w->pods / CHURN_EVERY + 16 : 0;
}

static void gen_pod(bench_sink_t *k, const bench_workload_t *w, uint32_t j)
{
    char app[32], name[48];
    const char *owner = NULL;
    snprintf(name, sizeof name, "pod-%u", j);
    if (w->kind == BK_DEPLOY) {
        snprintf(app, sizeof app, "rs-%u", j % N_DEPLOY);
        owner = "ReplicaSet";
    } else if (w->kind == BK_ANTI) {
        snprintf(app, sizeof app, "rs-%u", j % N_ANTI_RS);
        owner = "ReplicaSet";
    } else if (w->kind == BK_VOLUMES) { /* sts-D-ORDINAL */
        snprintf(app, sizeof app, "sts-%u", j / STS_SIZE);
        snprintf(name, sizeof name, "sts-%u-%u", j / STS_SIZE, j % STS_SIZE);
        owner = "StatefulSet";
    } else {
        snprintf(app, sizeof app, "bench");
    }
    sink_printf(k,
                "---\n"
                "apiVersion: v1\n"
                "kind: Pod\n"
                "metadata:\n"
                "  name: %s\n"
                "  namespace: default\n"
                "  labels:\n"
                "    app: %s\n",
                name, app);
    if (owner) /* owned by its ReplicaSet or StatefulSet */
        sink_printf(k,
                    "  ownerReferences:\n"
                    "  - apiVersion: apps/v1\n"
                    "    kind: %s\n"
                    "    name: %s\n"
                    "    uid: %s-uid-%s\n"
                    "    controller: true\n",
                    owner, app, w->kind == BK_VOLUMES ? "sts" : "rs",
                    strchr(app, '-') + 1);
    sink_printf(k, "spec:\n");
    switch (w->kind) {
    case BK_BASIC:
    case BK_CHURN:
        break;
    case BK_PREEMPT_BASIC:
        sink_printf(k, "  priority: %d\n", BASIC_HIGH_PRIORITY);
        break;
    case BK_VOLUMES:
        sink_printf(k, "  volumes:\n"
                       "  - name: data\n"
                       "    persistentVolumeClaim:\n"
                       "      claimName: data-%s\n",
                    name);
        break;
    case BK_SPREAD:
        sink_printf(k, "  topologySpreadConstraints:\n"
                       "  - maxSkew: 1\n"
                       "    topologyKey: topology.kubernetes.io/zone\n"
                       "    whenUnsatisfiable: DoNotSchedule\n"
                       "    labelSelector:\n"
                       "      matchLabels:\n"
                       "        app: bench\n");
        break;
    case BK_ANTI:
        sink_printf(k, "  affinity:\n"
                       "    podAntiAffinity:\n"
                       "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                       "      - labelSelector:\n"
                       "          matchLabels:\n"
                       "            app: %s\n"
                       "        topologyKey: kubernetes.io/hostname\n",
                    app);
        break;
    case BK_NODE_AFF:
        sink_printf(k, "  affinity:\n"
                       "    nodeAffinity:\n"
                       "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                       "        nodeSelectorTerms:\n"
                       "        - matchExpressions:\n"
                       "          - key: bench\n"
                       "            operator: In\n"
                       "            values:\n"
                       "            - \"yes\"\n");
        break;
    case BK_PREEMPT:
        sink_printf(k, "  priority: %d\n", HIGH_PRIORITY);
        break;
    case BK_DEPLOY:
        break; /* its owner is above */
    }
    if (w->kind == BK_PREEMPT)
        gen_container(k, "\"1\"");
    else if (w->kind == BK_PREEMPT_BASIC)
        gen_container(k, "3000m");
    else
        gen_container(k, "100m");
}

/* The whole workload: nodes, running pods, then pending pods in creation
 * order. */
static int gen_workload(bench_sink_t *k, const bench_workload_t *w)
{
    uint32_t i, n;
    sink_printf(k, "# %s: %u nodes, %u pending pods (generated by "
                   "ksched-bench)\n",
                w->name, w->nodes, w->pods);
    for (i = 0; i < w->nodes; i++) {
        gen_node(k, w, i);
        sink_boundary(k);
    }
    if (w->kind == BK_DEPLOY || w->kind == BK_ANTI)
        for (i = 0; i < (w->kind == BK_DEPLOY ? N_DEPLOY : N_ANTI_RS); i++) {
            gen_deployment(k, "ReplicaSet", "rs", i);
            sink_boundary(k);
        }
    if (w->kind == BK_VOLUMES) {
        for (i = 0; i < (w->pods + STS_SIZE - 1) / STS_SIZE; i++) {
            gen_deployment(k, "StatefulSet", "sts", i);
            sink_boundary(k);
        }
        gen_storage_class(k);
        for (i = 0; i < w->nodes; i++)
            for (n = 0; n < PVS_PER_NODE; n++) {
                gen_local_pv(k, i, n);
                sink_boundary(k);
            }
        for (i = 0; i < w->pods; i++) {
            gen_claim(k, i);
            sink_boundary(k);
        }
    }
    if (w->kind == BK_PREEMPT || w->kind == BK_PREEMPT_BASIC)
        for (i = 0; i < w->nodes; i++)
            for (n = 0; n < LOW_PER_NODE; n++) {
                gen_low_pod(k, i, n,
                            w->kind == BK_PREEMPT ? "\"1\"" : "900m");
                sink_boundary(k);
            }
    for (i = 0; i < w->pods; i++) {
        gen_pod(k, w, i);
        sink_boundary(k);
    }
    /* Churned objects last: the run takes them out of the manifest and
     * creates them while it schedules (a written manifest holds them as
     * objects like any other). */
    for (i = 0; i < churn_sets(w); i++) {
        gen_churn(k, i);
        sink_boundary(k);
    }
    return sink_flush(k);
}

static void config_text(char *buf, size_t len, int pct, int par)
{
    snprintf(buf, len,
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "parallelism: %d\n"
             "percentageOfNodesToScore: %d\n"
             "profiles:\n"
             "- schedulerName: default-scheduler\n",
             par, pct);
}

/* "SchedulingBasic/500Nodes" -> "SchedulingBasic-500Nodes". */
static void file_stem(const char *name, char *out, size_t len)
{
    size_t i;
    for (i = 0; name[i] && i + 1 < len; i++)
        out[i] = name[i] == '/' ? '-' : name[i];
    out[i] = '\0';
}

static int write_manifests(const char *dir, const bench_workload_t *const *ws,
                           size_t n_ws, const int *pcts, int n_pcts,
                           const int *pars, int n_pars)
{
    char path[4096], stem[256], text[512];
    size_t i;
    int a, b;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ksched-bench: cannot create %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    for (i = 0; i < n_ws; i++) {
        bench_sink_t k;
        memset(&k, 0, sizeof k);
        file_stem(ws[i]->name, stem, sizeof stem);
        snprintf(path, sizeof path, "%s/%s.yaml", dir, stem);
        if ((k.out = fopen(path, "w")) == NULL) {
            fprintf(stderr, "ksched-bench: cannot write %s: %s\n", path,
                    strerror(errno));
            return -1;
        }
        if (gen_workload(&k, ws[i]) != 0 || fclose(k.out) != 0) {
            fprintf(stderr, "ksched-bench: writing %s failed\n", path);
            free(k.buf);
            return -1;
        }
        free(k.buf);
        fprintf(stderr, "wrote %s\n", path);
    }
    /* The configurations, exactly as the runs load them. */
    for (a = 0; a < n_pcts; a++)
        for (b = 0; b < n_pars; b++) {
            FILE *f;
            snprintf(path, sizeof path, "%s/config-pct%d-par%d.yaml", dir,
                     pcts[a], pars[b]);
            config_text(text, sizeof text, pcts[a], pars[b]);
            if ((f = fopen(path, "w")) == NULL || fputs(text, f) < 0 ||
                fclose(f) != 0) {
                fprintf(stderr, "ksched-bench: cannot write %s\n", path);
                return -1;
            }
            fprintf(stderr, "wrote %s\n", path);
        }
    return 0;
}

/* --- one run (in a child process) ----------------------------------------- */

typedef struct bench_result {
    int ok;               /* 0: the run failed, see err */
    char err[1024];
    uint32_t nodes, pods;
    uint64_t bound, expected, attempts, victims;
    double seconds;       /* first pod queued .. last pod bound */
    double load_seconds;  /* generating and reading the manifest */
    double pods_per_s;
    double p50_us, p99_us, max_us;
    double cpu_us_per_pod; /* user + system CPU of the scheduling phase
                            * (every thread) per pod bound */
    double rss_mb;        /* filled by the parent */
    double rss_kb_per_node; /* peak RSS / nodes, filled by the parent */
    uint64_t batch_reused, batch_mismatches;
    uint64_t bulk_compared, bulk_mismatches;
    /* the Filter/Score workers: jobs of more than one chunk shared or
     * kept inline, and their items (ks_sched_stats_t) */
    uint64_t pool_shared, pool_inline, pool_shared_items, pool_inline_items;
    /* cycles the workers' gate timed, and ran inline (pool_gate.h) */
    uint64_t pool_gate_cycles, pool_gate_inline;
    double pool_gate_ratio;
    uint64_t churn_steps;  /* SchedulingWithMixedChurn's creates and
                            * deletes */
    uint64_t api_requests; /* plugins' API requests answered (Volumes:
                            * VolumeBinding's PreBind writes) */
    uint64_t digest;       /* of the bindings in order (--seed) */
    /* --splittable: the share of the run's time in jobs a second thread
     * could split, and their microseconds per pod bound */
    double split_share, split_us_per_pod;
} bench_result_t;

typedef struct bench_run {
    int64_t vclock_ms;
    uint64_t bound, victims, cycles;
    uint64_t api_requests; /* plugins' API requests (VolumeBinding) */
    uint64_t digest;       /* FNV-1a over "ns/name node\n" per binding */
    struct timespec last_bound;
} bench_run_t;

/* SchedulingWithMixedChurn: the churned objects, taken out of the manifest
 * before the run, and where the churn is. */
typedef struct bench_churn {
    ks_node_t **nodes;
    ks_pod_t **pods;
    ks_service_t **svcs;
    size_t n, next;    /* sets, and the next set to create */
    int live;          /* set next - 1 exists */
    uint64_t at_cycle; /* cycles at the last step */
    uint64_t steps;
} bench_churn_t;

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Take the churn-* objects out of m (kept in c, in order). 0, or -1 when
 * out of memory. */
static int churn_take(bench_churn_t *c, ks_manifest_t *m)
{
    size_t i, nn = 0, np = 0, ns = 0;
    for (i = 0; i < m->n_nodes; i++)
        nn += has_prefix(m->nodes[i]->name, "churn-node-");
    if (nn == 0)
        return 0;
    c->nodes = calloc(nn, sizeof *c->nodes);
    c->pods = calloc(nn, sizeof *c->pods);
    c->svcs = calloc(nn, sizeof *c->svcs);
    if (!c->nodes || !c->pods || !c->svcs)
        return -1;
    for (i = 0; i < m->n_nodes; i++)
        if (has_prefix(m->nodes[i]->name, "churn-node-")) {
            c->nodes[c->n++] = m->nodes[i];
            m->nodes[i] = NULL;
        }
    for (i = 0; i < m->n_pods && np < c->n; i++)
        if (m->pods[i] && has_prefix(m->pods[i]->name, "churn-pod-")) {
            c->pods[np++] = m->pods[i];
            m->pods[i] = NULL;
        }
    for (i = 0; i < m->n_services && ns < c->n; i++)
        if (m->services[i] && has_prefix(m->services[i]->name, "churn-svc-")) {
            c->svcs[ns++] = m->services[i];
            m->services[i] = NULL;
        }
    return np == c->n && ns == c->n ? 0 : -1;
}

static void churn_free(bench_churn_t *c)
{
    size_t i;
    for (i = 0; i < c->n; i++) {
        if (c->nodes[i])
            ks_node_free(c->nodes[i]);
        if (c->pods[i])
            ks_pod_free(c->pods[i]);
        if (c->svcs[i])
            ks_service_free(c->svcs[i]);
    }
    free(c->nodes);
    free(c->pods);
    free(c->svcs);
}

/* One churn step, as scheduler_perf's churn op in recreate mode: delete
 * the node, Service and pod the last step created (as the cluster's
 * events arrive: the scheduler hears first, then the cache changes), or
 * create the next set. 0, or -1 with the message in err. */
static int churn_step(bench_churn_t *c, ks_scheduler_t *s, ks_cache_t *cache,
                      ks_error_t *err)
{
    if (c->live) {
        size_t k = c->next - 1;
        char name[64], uid[64];
        const ks_node_info_t *ni;
        ks_cluster_event_t ev_node = {KS_RES_NODE, KS_ACT_DELETE};
        ks_cluster_event_t ev_svc = {KS_RES_SERVICE, KS_ACT_DELETE};
        snprintf(name, sizeof name, "churn-node-%zu", k);
        snprintf(uid, sizeof uid, "churn-pod-uid-%zu", k);
        if ((ni = ks_cache_node_info(cache, name)) != NULL)
            ks_scheduler_on_cluster_event(s, ev_node, ni->node, NULL);
        if (ks_cache_remove_node(cache, name, err) != 0)
            return -1;
        snprintf(name, sizeof name, "churn-svc-%zu", k);
        ks_cache_remove_service(cache, "default", name);
        ks_scheduler_on_event(s, ev_svc);
        /* The pod that fits nowhere is pending (not found: never) */
        (void)ks_scheduler_remove_pod(s, uid);
        c->live = 0;
    } else if (c->next < c->n) {
        size_t k = c->next++;
        ks_node_t *node = c->nodes[k];
        ks_pod_t *pod = c->pods[k];
        ks_cluster_event_t ev_node = {KS_RES_NODE, KS_ACT_ADD};
        ks_cluster_event_t ev_svc = {KS_RES_SERVICE, KS_ACT_ADD};
        c->nodes[k] = NULL;
        if (ks_cache_add_node(cache, node, err) != 0)
            return -1;
        ks_scheduler_on_cluster_event(s, ev_node, NULL, node);
        if (ks_cache_add_service(cache, c->svcs[k]) != 0) {
            snprintf(err->msg, sizeof err->msg, "out of memory");
            return -1;
        }
        c->svcs[k] = NULL;
        ks_scheduler_on_event(s, ev_svc);
        c->pods[k] = NULL;
        if (ks_scheduler_add_pod(s, pod) != 0) {
            ks_pod_free(pod);
            snprintf(err->msg, sizeof err->msg, "churned pod not queued");
            return -1;
        }
        c->live = 1;
    }
    c->steps++;
    return 0;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) +
           (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static int64_t bench_clock(void *ud)
{
    return ((bench_run_t *)ud)->vclock_ms;
}

static void on_cycle(void *ud, const ks_cycle_result_t *r)
{
    (void)r;
    ((bench_run_t *)ud)->cycles++;
}

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    bench_run_t *b = ud;
    const char *parts[4];
    size_t i;
    parts[0] = pod->ns;
    parts[1] = pod->name;
    parts[2] = node;
    parts[3] = NULL;
    for (i = 0; parts[i]; i++) {
        const unsigned char *c;
        for (c = (const unsigned char *)parts[i]; *c; c++)
            b->digest = (b->digest ^ *c) * 1099511628211ULL;
        b->digest = (b->digest ^ (unsigned char)(i < 2 ? '/' : '\n')) *
                    1099511628211ULL;
    }
    b->bound++;
    clock_gettime(CLOCK_MONOTONIC, &b->last_bound);
}

#if BENCH_HAVE_STORES
/* Plugins' API requests (VolumeBinding's PreBind writes): counted and
 * answered as `ksched schedule` does (record mode), never sent. */
static int on_api_request(void *ud, const char *plugin,
                          const ks_api_request_t *req)
{
    (void)plugin;
    (void)req;
    ((bench_run_t *)ud)->api_requests++;
    return 0;
}
#endif

static void on_deleted(void *ud, const ks_pod_t *pod)
{
    (void)pod;
    ((bench_run_t *)ud)->victims++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, double p)
{
    size_t rank;
    if (n == 0)
        return 0;
    rank = (size_t)((p / 100.0) * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

static double tv_us(const struct timeval *tv)
{
    return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
}

/* Give up when backoffs keep cycling for an hour of virtual time. */
#define VCLOCK_LIMIT_MS (3600 * 1000)

static int bench_batching; /* KS_BATCHING_* (--batching) */
static int bench_seeded;   /* --seed given */
static int bench_splittable; /* --splittable given */
static uint64_t bench_seed;
static int bench_bulk;     /* KS_BULK_* (--bulk) */

static void run_workload(const bench_workload_t *w, int pct, int par,
                         const char *plugin_dir, bench_result_t *r)
{
    static ks_error_t err;
    bench_sink_t k;
    ks_manifest_t m;
    ks_config_t *cfg = NULL;
    ks_generation_t *gen = NULL;
    ks_generation_opts_t go;
    ks_cache_t *cache = NULL;
    ks_scheduler_t *s = NULL;
    ks_sched_opts_t so;
    bench_run_t b;
    bench_churn_t churn;
    char text[512];
    const char *dirs[1];
    struct timespec t0, t1, t_start;
    struct rusage ru0, ru1;
    uint64_t *lat = NULL;
    size_t n_lat = 0, cap_lat, i;

    memset(r, 0, sizeof *r);
    memset(&m, 0, sizeof m);
    memset(&b, 0, sizeof b);
    b.digest = 14695981039346656037ULL;
    memset(&churn, 0, sizeof churn);
    r->nodes = w->nodes;
    r->pods = w->pods;
    r->expected = bench_expected_bound(w);

    config_text(text, sizeof text, pct, par);
    if (ks_config_load_string("bench-config.yaml", text, strlen(text), &cfg,
                              &err) != 0) {
        snprintf(r->err, sizeof r->err, "config: %.900s", err.msg);
        goto out;
    }
    memset(&go, 0, sizeof go);
    go.config = cfg;
    go.config_path = "bench-config.yaml";
    if (plugin_dir) {
        dirs[0] = plugin_dir;
        go.plugin_dirs = dirs;
        go.n_plugin_dirs = 1;
        go.no_default_path = 1;
    }
    cfg = NULL; /* owned by the generation from here on */
    memset(&err, 0, sizeof err);
    if (ks_generation_build(&go, &gen, &err) != 0) {
        snprintf(r->err, sizeof r->err, "generation: %.900s", err.msg);
        goto out;
    }

    /* After the generation: its plugins declared the stores that take
     * the Volumes workload's PVs, claims and class. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&k, 0, sizeof k);
    k.m = &m;
    k.name = "workload.yaml";
    k.err = &err;
#if BENCH_HAVE_STORES
    m.wants = ks_store_manifest_wants;
    m.take = ks_store_manifest_take;
#endif
    if (gen_workload(&k, w) != 0) {
        snprintf(r->err, sizeof r->err, "manifest: %.900s",
                 err.msg[0] ? err.msg : "out of memory");
        free(k.buf);
        goto out;
    }
    free(k.buf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->load_seconds = ts_diff(&t0, &t1);
    if (churn_take(&churn, &m) != 0) {
        snprintf(r->err, sizeof r->err, "churn objects: out of memory or "
                                        "incomplete sets");
        goto out;
    }

    cache = ks_cache_new(ks_intern_global());
    for (i = 0; i < m.n_nodes; i++) {
        if (m.nodes[i] == NULL) /* churned */
            continue;
        if (ks_cache_add_node(cache, m.nodes[i], &err) != 0) {
            snprintf(r->err, sizeof r->err, "cache: %.900s", err.msg);
            goto out;
        }
        m.nodes[i] = NULL;
    }
    for (i = 0; i < m.n_pods; i++) {
        if (m.pods[i] == NULL || m.pods[i]->node_name[0] == '\0')
            continue;
        if (ks_cache_add_pod(cache, m.pods[i], &err) != 0) {
            snprintf(r->err, sizeof r->err, "cache: %.900s", err.msg);
            goto out;
        }
        m.pods[i] = NULL;
    }
    /* Services and workload owners (the selectors of PodTopologySpread's
     * system-default spreading), as ksched schedule fills them */
    for (i = 0; i < m.n_services; i++) {
        if (m.services[i] == NULL)
            continue;
        if (ks_cache_add_service(cache, m.services[i]) != 0) {
            snprintf(r->err, sizeof r->err, "cache: out of memory");
            goto out;
        }
        m.services[i] = NULL;
    }

    memset(&so, 0, sizeof so);
    so.deterministic = 0;
    so.batching = bench_batching;
    so.bulk = bench_bulk;
    so.obs.cycle = on_cycle;
    so.obs.bound = on_bound;
    so.obs.deleted = on_deleted;
    so.obs.ud = &b;
#if BENCH_HAVE_STORES
    so.writer.api_mode = KS_API_RECORD;
    so.writer.api_record = on_api_request;
    so.writer.ud = &b;
#endif
    if ((s = ks_scheduler_new(gen, cache, &so)) == NULL) {
        snprintf(r->err, sizeof r->err, "scheduler: out of memory");
        goto out;
    }
    ks_scheduler_set_clock(s, bench_clock, &b);
    if (bench_seeded && ks_scheduler_set_seed != NULL)
        ks_scheduler_set_seed(s, bench_seed);
    cap_lat = (size_t)w->pods * 2 + 16;
    if ((lat = malloc(cap_lat * sizeof *lat)) == NULL) {
        snprintf(r->err, sizeof r->err, "out of memory");
        goto out;
    }

    CALLGRIND_START_INSTRUMENTATION;
#ifdef KS_POOL_CLOCK_JOBS
    if (bench_splittable)
        ks_pool_clock_jobs(1);
#endif
    getrusage(RUSAGE_SELF, &ru0);
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    b.last_bound = t_start;
    for (i = 0; i < m.n_pods; i++) {
        ks_pod_t *pod = m.pods[i];
        if (pod == NULL)
            continue;
        m.pods[i] = NULL;
        if (ks_scheduler_add_pod(s, pod) != 0) {
            snprintf(r->err, sizeof r->err,
                     "pod %s/%s matches no profile", pod->ns, pod->name);
            ks_pod_free(pod);
            goto out;
        }
    }
    /* Plugins' API requests (VolumeBinding's PreBind) are answered on a
     * loop only the batch driver runs: such a workload runs under it
     * (no per-attempt latency then). */
    if (w->kind == BK_VOLUMES) {
        ks_scheduler_set_clock(s, NULL, NULL);
        ks_scheduler_run_batch(s);
    }
    for (;;) {
        uint64_t before = b.cycles;
        int did;
        if (churn.n && b.bound < r->expected &&
            b.cycles - churn.at_cycle >= CHURN_EVERY) {
            churn.at_cycle = b.cycles;
            if (churn_step(&churn, s, cache, &err) != 0) {
                snprintf(r->err, sizeof r->err, "churn: %.900s", err.msg);
                goto out;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        did = ks_scheduler_step(s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (b.cycles != before) {
            if (n_lat == cap_lat) {
                uint64_t *nl = realloc(lat, cap_lat * 2 * sizeof *lat);
                if (nl == NULL) {
                    snprintf(r->err, sizeof r->err, "out of memory");
                    goto out;
                }
                lat = nl;
                cap_lat *= 2;
            }
            lat[n_lat++] = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
                                      (t1.tv_nsec - t0.tv_nsec));
        }
        if (did)
            continue;
        if (churn.live) { /* the measured pods are done: end the churn */
            if (churn_step(&churn, s, cache, &err) != 0) {
                snprintf(r->err, sizeof r->err, "churn: %.900s", err.msg);
                goto out;
            }
            continue;
        }
        if ((ks_scheduler_pending(s, KS_Q_BACKOFF) > 0 ||
             ks_scheduler_pending(s, -1) > 0) &&
            b.vclock_ms < VCLOCK_LIMIT_MS) {
            b.vclock_ms += 1000; /* let backoffs expire */
            continue;
        }
        break;
    }

    getrusage(RUSAGE_SELF, &ru1);
    CALLGRIND_STOP_INSTRUMENTATION;
    r->bound = b.bound;
    r->victims = b.victims;
    if (b.bound > 0)
        r->cpu_us_per_pod = (tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime) +
                             tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime)) /
                            (double)b.bound;
    r->attempts = ks_scheduler_stats(s).attempts;
    r->batch_reused = ks_scheduler_stats(s).batch_reused;
    r->batch_mismatches = ks_scheduler_stats(s).batch_mismatches;
    r->bulk_compared = ks_scheduler_stats(s).bulk_compared;
    r->bulk_mismatches = ks_scheduler_stats(s).bulk_mismatches;
#ifdef KS_SCHED_STATS_POOL_COUNTS
    {
        ks_sched_stats_t st = ks_scheduler_stats(s);
        r->pool_shared = st.pool_shared;
        r->pool_inline = st.pool_inline;
        r->pool_shared_items = st.pool_shared_items;
        r->pool_inline_items = st.pool_inline_items;
#ifdef KS_SCHED_STATS_POOL_GATE
        r->pool_gate_cycles = st.pool_gate_cycles;
        r->pool_gate_inline = st.pool_gate_inline;
        r->pool_gate_ratio = st.pool_gate_ratio;
#endif
    }
#endif
    r->churn_steps = churn.steps;
    r->api_requests = b.api_requests;
    r->digest = b.digest;
    r->seconds = ts_diff(&t_start, &b.last_bound);
    r->pods_per_s = r->seconds > 0 ? (double)b.bound / r->seconds : 0;
#ifdef KS_POOL_CLOCK_JOBS
    if (bench_splittable) {
        double split_s = (double)ks_pool_clocked_ns() / 1e9;
        ks_pool_clock_jobs(0);
        r->split_share = r->seconds > 0 ? split_s / r->seconds : 0;
        r->split_us_per_pod = b.bound ? split_s * 1e6 / (double)b.bound : 0;
    }
#endif
    qsort(lat, n_lat, sizeof *lat, cmp_u64);
    r->p50_us = (double)percentile(lat, n_lat, 50) / 1000.0;
    r->p99_us = (double)percentile(lat, n_lat, 99) / 1000.0;
    r->max_us = n_lat ? (double)lat[n_lat - 1] / 1000.0 : 0;
    r->ok = 1;
out:
    free(lat);
    ks_scheduler_free(s);
    churn_free(&churn);
    ks_cache_free(cache);
    ks_manifest_free(&m);
    if (gen)
        ks_generation_unref(gen);
    ks_config_free(cfg);
}

/* Run in a child; the result comes back through a pipe, the peak RSS from
 * the child's rusage. */
static void run_forked(const bench_workload_t *w, int pct, int par,
                       const char *plugin_dir, bench_result_t *r)
{
    int fd[2], status = 0;
    pid_t pid;
    struct rusage ru;
    size_t got = 0;

    memset(r, 0, sizeof *r);
    fflush(NULL);
    if (pipe(fd) != 0 || (pid = fork()) < 0) {
        snprintf(r->err, sizeof r->err, "fork: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        bench_result_t res;
        const char *p;
        size_t left;
        close(fd[0]);
        run_workload(w, pct, par, plugin_dir, &res);
        for (p = (const char *)&res, left = sizeof res; left > 0;) {
            ssize_t n = write(fd[1], p, left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                _exit(1);
            p += n;
            left -= (size_t)n;
        }
        _exit(0);
    }
    close(fd[1]);
    while (got < sizeof *r) {
        ssize_t n = read(fd[0], (char *)r + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd[0]);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    if (got < sizeof *r) {
        memset(r, 0, sizeof *r);
        if (WIFSIGNALED(status))
            snprintf(r->err, sizeof r->err, "child killed by signal %d",
                     WTERMSIG(status));
        else
            snprintf(r->err, sizeof r->err, "child exited with status %d",
                     WEXITSTATUS(status));
        return;
    }
    if (r->ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        /* e.g. a memory checker's error exit code */
        r->ok = 0;
        snprintf(r->err, sizeof r->err, "child reported its result but %s %d",
                 WIFSIGNALED(status) ? "was killed by signal"
                                     : "exited with status",
                 WIFSIGNALED(status) ? WTERMSIG(status)
                                     : WEXITSTATUS(status));
    }
    r->rss_mb = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB */
    r->rss_kb_per_node = w->nodes ? (double)ru.ru_maxrss / w->nodes : 0;
}

/* --- reporting ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(bench_result_t *rs, int n, size_t off)
{
    double v[128];
    int i;
    for (i = 0; i < n; i++)
        memcpy(&v[i], (const char *)&rs[i] + off, sizeof(double));
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_header(void)
{
    printf("%-36s %6s %6s %4s %3s %10s %9s %9s %9s %7s %7s %15s %10s "
           "%11s\n",
           "WORKLOAD", "NODES", "PODS", "PCT", "PAR", "PODS/S", "P50_US",
           "P99_US", "MAX_US", "RSS_MB", "ATTEMPT", "BOUND/EXPECTED",
           "CPU_US/POD", "RSS_KB/NODE");
    fflush(stdout);
}

static const char usage[] =
    "Usage: ksched-bench [options]\n"
    "\n"
    "Schedule the scheduler_perf-shaped workloads through the ksched host\n"
    "and plugins and print, per workload, percentageOfNodesToScore and\n"
    "parallelism: throughput (first pod queued to last pod bound),\n"
    "per-attempt latency p50/p99/max, peak RSS of the run, attempts, and\n"
    "pods bound against the number that fit.\n"
    "\n"
    "Options:\n"
    "  -w, --workload NAME      run this workload (repeatable; a name\n"
    "                           without '/N' selects every size; default:\n"
    "                           all)\n"
    "  -P, --percentage N       only percentageOfNodesToScore N (0..100;\n"
    "                           default: 0 (adaptive) and 100)\n"
    "  -j, --parallelism N      only parallelism N (default: 1 and 2)\n"
    "  -r, --runs N             repeat each run N times, report the median\n"
    "                           (default 1)\n"
    "  -p, --plugin-dir DIR     load plugins from DIR only (default: the\n"
    "                           ksched plugin search path)\n"
    "  -q, --quick              only the 500-node / 1,000-pod workloads\n"
    "  -N, --pods N             queue N pending pods instead of the\n"
    "                           workload's count (for profiling)\n"
    "      --nodes N            N nodes instead of the workload's count\n"
    "                           (small runs, e.g. for tests)\n"
    "  -m, --write-manifests DIR\n"
    "                           also write each selected workload to\n"
    "                           DIR/<Workload>-<N>Nodes.yaml and each\n"
    "                           configuration to DIR/config-pctP-parJ.yaml,\n"
    "                           for `ksched schedule --cluster --config`\n"
    "  -b, --batching MODE      opportunistic batching: on (default), off,\n"
    "                           or verify (every reused result compared\n"
    "                           with a fresh one; a difference fails the\n"
"                           run)\n"
    "  -B, --bulk MODE          bulk Filter and Score (ABI 1.2 filter_nodes,\n"
    "                           score_nodes): on (default), off (node by\n"
    "                           node), or verify (bulk, every result\n"
    "                           compared with the node-by-node one; a\n"
    "                           difference fails the run)\n"
    "  -n, --no-run             with --write-manifests: write, do not run\n"
    "  -s, --seed N             seed the scheduler's random numbers (ties\n"
    "                           between equal scores) and print a digest\n"
    "                           of the bindings in order: equal digests,\n"
    "                           equal decisions\n"
    "  -S, --splittable         also time the jobs a second thread could\n"
    "                           split (Filter, Score, weighing, host\n"
    "                           selection: jobs of more than one chunk)\n"
    "                           and print their share of the run and the\n"
    "                           most two threads could gain from it\n"
    "                           (Amdahl's law). At parallelism 1 host\n"
    "                           selection is one scan, not a job: read\n"
    "                           the share at parallelism 2\n"
    "  -l, --list               list the workloads and exit\n"
    "  -h, --help               show this help\n"
    "\n"
    "Exit status: 0 every run bound the expected pods, 1 a run failed or\n"
    "bound a different number, 2 usage error.\n";

static int parse_int(const char *opt, const char *s, long lo, long hi,
                     int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *s == '\0' || *end || v < lo || v > hi) {
        fprintf(stderr, "ksched-bench: %s must be an integer in %ld..%ld, "
                        "got '%s'\n",
                opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int name_matches(const char *want, const char *name)
{
    size_t n = strlen(want);
    if (strcmp(want, name) == 0)
        return 1;
    return strncmp(want, name, n) == 0 && name[n] == '/';
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"workload", required_argument, NULL, 'w'},
        {"percentage", required_argument, NULL, 'P'},
        {"parallelism", required_argument, NULL, 'j'},
        {"runs", required_argument, NULL, 'r'},
        {"plugin-dir", required_argument, NULL, 'p'},
        {"quick", no_argument, NULL, 'q'},
        {"pods", required_argument, NULL, 'N'},
        {"write-manifests", required_argument, NULL, 'm'},
        {"no-run", no_argument, NULL, 'n'},
        {"batching", required_argument, NULL, 'b'},
        {"bulk", required_argument, NULL, 'B'},
        {"nodes", required_argument, NULL, 1001},
        {"seed", required_argument, NULL, 's'},
        {"splittable", no_argument, NULL, 'S'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *wanted[64];
    size_t n_wanted = 0, i, n_sel = 0;
    bench_workload_t sel_buf[N_WORKLOADS];
    const bench_workload_t *sel[N_WORKLOADS];
    int pcts[2] = {0, 100}, n_pcts = 2, pars[2] = {1, 2}, n_pars = 2;
    int runs = 1, quick = 0, no_run = 0, c, failures = 0, mismatches = 0;
    int pods_override = 0, nodes_override = 0;
    const char *plugin_dir = NULL, *manifest_dir = NULL;

    while ((c = getopt_long(argc, argv, "w:P:j:r:p:qN:m:nb:B:s:Slh", opts, NULL)) !=
           -1) {
        switch (c) {
        case 'w':
            if (n_wanted == sizeof wanted / sizeof wanted[0]) {
                fprintf(stderr, "ksched-bench: too many --workload\n");
                return 2;
            }
            wanted[n_wanted++] = optarg;
            break;
        case 'P':
            if (parse_int("--percentage", optarg, 0, 100, &pcts[0]) != 0)
                return 2;
            n_pcts = 1;
            break;
        case 'j':
            if (parse_int("--parallelism", optarg, 1, 1024, &pars[0]) != 0)
                return 2;
            n_pars = 1;
            break;
        case 'r':
            if (parse_int("--runs", optarg, 1, 99, &runs) != 0)
                return 2;
            break;
        case 'p': plugin_dir = optarg; break;
        case 'q': quick = 1; break;
        case 'N':
            if (parse_int("--pods", optarg, 1, 10000000, &pods_override) !=
                0)
                return 2;
            break;
        case 'm': manifest_dir = optarg; break;
        case 1001:
            if (parse_int("--nodes", optarg, 1, 1000000, &nodes_override) !=
                0)
                return 2;
            break;
        case 'n': no_run = 1; break;
        case 's': {
            char *end;
            errno = 0;
            bench_seed = strtoull(optarg, &end, 10);
            if (errno || *optarg == '\0' || *end) {
                fprintf(stderr, "ksched-bench: --seed must be an unsigned "
                                "integer, got '%s'\n", optarg);
                return 2;
            }
            bench_seeded = 1;
            break;
        }
        case 'b':
            if ((bench_batching = ks_batching_parse(optarg)) < 0) {
                fprintf(stderr, "ksched-bench: --batching must be on, off "
                                "or verify, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'B':
            if ((bench_bulk = ks_bulk_parse(optarg)) < 0) {
                fprintf(stderr, "ksched-bench: --bulk must be on, off or "
                                "verify, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'S': bench_splittable = 1; break;
        case 'l':
            for (i = 0; i < N_WORKLOADS; i++)
                printf("%-36s %6u nodes %6u pods, %u expected bound\n",
                       bench_workloads[i].name, bench_workloads[i].nodes,
                       bench_workloads[i].pods,
                       bench_expected_bound(&bench_workloads[i]));
            return 0;
        case 'h': fputs(usage, stdout); return 0;
        default:
            fprintf(stderr, "Try 'ksched-bench --help'.\n");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ksched-bench: unexpected argument '%s'\n"
                        "Try 'ksched-bench --help'.\n",
                argv[optind]);
        return 2;
    }
    if (no_run && manifest_dir == NULL) {
        fprintf(stderr, "ksched-bench: --no-run needs --write-manifests\n");
        return 2;
    }
    for (i = 0; i < n_wanted; i++) {
        size_t j, hit = 0;
        for (j = 0; j < N_WORKLOADS; j++)
            hit += (size_t)name_matches(wanted[i], bench_workloads[j].name);
        if (hit == 0) {
            fprintf(stderr, "ksched-bench: no workload named '%s' (see "
                            "--list)\n",
                    wanted[i]);
            return 2;
        }
    }
    for (i = 0; i < N_WORKLOADS; i++) {
        const bench_workload_t *w = &bench_workloads[i];
        size_t j;
        int take = n_wanted == 0 && w->nodes < 50000;
        for (j = 0; j < n_wanted; j++)
            take |= w->nodes < 50000 ? name_matches(wanted[j], w->name)
                                     : strcmp(wanted[j], w->name) == 0;
        if (quick && !(w->nodes == 500 && w->pods == 1000))
            take = 0;
        if (take) {
            sel_buf[n_sel] = *w;
            if (pods_override)
                sel_buf[n_sel].pods = (uint32_t)pods_override;
            if (nodes_override)
                sel_buf[n_sel].nodes = (uint32_t)nodes_override;
            sel[n_sel] = &sel_buf[n_sel];
            n_sel++;
        }
    }
    if (n_sel == 0) {
        fprintf(stderr, "ksched-bench: no workload selected (--quick keeps "
                        "only the 500-node / 1,000-pod ones)\n");
        return 2;
    }
    if (manifest_dir && write_manifests(manifest_dir, sel, n_sel, pcts,
                                        n_pcts, pars, n_pars) != 0)
        return 1;
    if (no_run)
        return 0;

    print_header();
    for (i = 0; i < n_sel; i++) {
        int a, b2;
        for (a = 0; a < n_pcts; a++)
            for (b2 = 0; b2 < n_pars; b2++) {
                bench_result_t rs[99], *r0 = &rs[0];
                int k, bad = 0;
                uint64_t min_bound = UINT64_MAX;
                for (k = 0; k < runs; k++) {
                    run_forked(sel[i], pcts[a], pars[b2], plugin_dir, &rs[k]);
                    if (!rs[k].ok) {
                        fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                        "FAILED: %s\n",
                                sel[i]->name, pcts[a], pars[b2], rs[k].err);
                        bad = 1;
                        break;
                    }
                    if (rs[k].bound < min_bound)
                        min_bound = rs[k].bound;
                    if (rs[k].bound != rs[k].expected)
                        bad = 2;
                    if (rs[k].bulk_mismatches > 0) {
                        fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                        "bulk verify found %llu "
                                        "differences\n",
                                sel[i]->name, pcts[a], pars[b2],
                                (unsigned long long)rs[k].bulk_mismatches);
                        bad = 2;
                    }
                    if (rs[k].batch_mismatches > 0) {
                        fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                        "batching verify found %llu "
                                        "differences\n",
                                sel[i]->name, pcts[a], pars[b2],
                                (unsigned long long)rs[k].batch_mismatches);
                        bad = 2;
                    }
                }
                if (bad == 1) {
                    printf("%-36s %6u %6u %4d %3d %s\n", sel[i]->name,
                           sel[i]->nodes, sel[i]->pods, pcts[a], pars[b2],
                           "FAILED (see stderr)");
                    fflush(stdout);
                    failures++;
                    continue;
                }
                printf("%-36s %6u %6u %4d %3d %10.0f %9.1f %9.1f %9.1f "
                       "%7.1f %7llu %7llu/%-7llu %10.1f %11.2f%s\n",
                       sel[i]->name, sel[i]->nodes, sel[i]->pods, pcts[a],
                       pars[b2],
                       median_of(rs, runs,
                                 offsetof(bench_result_t, pods_per_s)),
                       median_of(rs, runs, offsetof(bench_result_t, p50_us)),
                       median_of(rs, runs, offsetof(bench_result_t, p99_us)),
                       median_of(rs, runs, offsetof(bench_result_t, max_us)),
                       median_of(rs, runs, offsetof(bench_result_t, rss_mb)),
                       (unsigned long long)r0->attempts,
                       (unsigned long long)min_bound,
                       (unsigned long long)r0->expected,
                       median_of(rs, runs,
                                 offsetof(bench_result_t, cpu_us_per_pod)),
                       median_of(rs, runs,
                                 offsetof(bench_result_t, rss_kb_per_node)),
                       bad ? "  MISMATCH" : "");
                if (bench_batching != KS_BATCHING_OFF)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "batching %s reused %llu node results, "
                                    "%llu differences\n",
                            sel[i]->name, pcts[a], pars[b2],
                            bench_batching == KS_BATCHING_VERIFY ? "verify"
                                                                 : "on",
                            (unsigned long long)r0->batch_reused,
                            (unsigned long long)r0->batch_mismatches);
                if (pars[b2] > 1)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "workers shared %llu of %llu jobs "
                                    "(%llu of %llu items)\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)r0->pool_shared,
                            (unsigned long long)(r0->pool_shared +
                                                 r0->pool_inline),
                            (unsigned long long)r0->pool_shared_items,
                            (unsigned long long)(r0->pool_shared_items +
                                                 r0->pool_inline_items));
                if (pars[b2] > 1 && r0->pool_gate_cycles > 0)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "the workers' gate ran %llu of %llu "
                                    "timed cycles inline (a cycle shared "
                                    "took %.2fx one inline)\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)r0->pool_gate_inline,
                            (unsigned long long)r0->pool_gate_cycles,
                            r0->pool_gate_ratio);
                if (bench_splittable) {
                    double f = median_of(rs, runs,
                                         offsetof(bench_result_t,
                                                  split_share)),
                           us = median_of(rs, runs,
                                          offsetof(bench_result_t,
                                                   split_us_per_pod));
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "jobs a second thread could split "
                                    "took %.1f%% of the run (%.1f us a "
                                    "pod): two threads, each as fast as "
                                    "one alone, could make it at most "
                                    "%.2fx as fast\n",
                            sel[i]->name, pcts[a], pars[b2], f * 100, us,
                            f < 1 ? 1 / (1 - f / 2) : 2.0);
                }
                if (bench_seeded)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "bindings digest %016llx\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)r0->digest);
                if (r0->churn_steps || r0->api_requests)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "%llu churn steps, %llu API requests "
                                    "recorded\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)r0->churn_steps,
                            (unsigned long long)r0->api_requests);
                if (bench_bulk == KS_BULK_VERIFY)
                    fprintf(stderr, "ksched-bench: %s pct %d par %d: "
                                    "bulk verify compared %llu node "
                                    "results, %llu differences\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)r0->bulk_compared,
                            (unsigned long long)r0->bulk_mismatches);
                fflush(stdout);
                if (bad) {
                    fprintf(stderr,
                            "ksched-bench: MISMATCH: %s pct %d par %d bound "
                            "%llu pods, expected %llu\n",
                            sel[i]->name, pcts[a], pars[b2],
                            (unsigned long long)min_bound,
                            (unsigned long long)r0->expected);
                    mismatches++;
                }
            }
    }
    if (failures || mismatches) {
        fprintf(stderr, "ksched-bench: %d run(s) failed, %d bound a number "
                        "of pods other than expected\n",
                failures, mismatches);
        return 1;
    }
    return 0;
}
