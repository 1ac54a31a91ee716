/*
 * A pod's effective requests, as upstream v1.36 computes them from its
 * containers: pod->requests (PodRequests: the containers' sum with
 * sidecars and init containers, pod-level requests, overhead), the
 * scheduler's non-zero requests (non_zero_milli_cpu, non_zero_memory: 100m
 * cpu and 200Mi memory for a container that names none) and the API
 * server's defaulting of pod-level requests when pod-level limits are set.
 *
 * One formula for every reader of pods: the manifest / JSON pod reader
 * (objects_pod.c) and the plugin test fixture (tests/plugins/mock_host.c)
 * both call ks_pod_requests_derive.
 */
#ifndef KS_CLUSTER_POD_REQUESTS_H
#define KS_CLUSTER_POD_REQUESTS_H

#include <ksched/types.h>

/* Which native resources a spec names (bits of `present`, pod_req,
 * pod_lim, overhead); the same values as objects_yaml.h's KY_RES_CPU and
 * KY_RES_MEMORY. */
enum { KS_REQ_CPU = 1u << 0, KS_REQ_MEMORY = 1u << 1 };

/* Per container: which of cpu / memory its requests name (after the API
 * server's defaulting of requests from limits), and whether it is a
 * sidecar (an init container with restartPolicy Always). */
typedef struct ks_container_req_flags {
    unsigned present;
    int restart_always;
} ks_container_req_flags_t;

/* What the derivation needs beyond the pod: one flags entry per container
 * and init container (NULL when the pod has none), and the KS_REQ_* bits
 * that the pod-level requests, the pod-level limits and the overhead name
 * (pod_requests / pod_limits / overhead hold the values). */
typedef struct ks_pod_req_flags {
    const ks_container_req_flags_t *cfl, *ifl;
    unsigned pod_req, pod_lim, overhead;
} ks_pod_req_flags_t;

/* Fills pod->requests, non_zero_milli_cpu, non_zero_memory and
 * has_pod_requests, and defaults pod->pod_requests from the containers and
 * the pod-level limits as the API server does. Reads the containers'
 * requests, overhead, pod_requests and pod_limits; writes only the fields
 * named. Allocates nothing (scalar resources live in ks_resources_t).
 * Any thread that owns the pod. */
void ks_pod_requests_derive(ks_pod_t *pod, const ks_pod_req_flags_t *f);

#endif
