/* A pod's effective and non-zero requests (pod_requests.h). */
#include <string.h>

#include "objects_yaml.h"
#include "pod_requests.h"
#include "objects.h"

_Static_assert((unsigned)KS_REQ_CPU == (unsigned)KY_RES_CPU &&
                   (unsigned)KS_REQ_MEMORY == (unsigned)KY_RES_MEMORY,
               "pod_requests.h's bits are objects_yaml.h's");

/* Upstream's defaults for containers that do not request cpu / memory. */
#define KS_DEFAULT_MILLI_CPU_REQUEST 100
#define KS_DEFAULT_MEMORY_REQUEST (200 * 1024 * 1024)

static int is_hugepages(const char *name)
{
    return strncmp(name, "hugepages-", 10) == 0;
}

static int has_scalar(const ks_resources_t *r, const char *name)
{
    uint32_t i;
    for (i = 0; i < r->n_scalar; i++)
        if (r->scalar[i].name == name || strcmp(r->scalar[i].name, name) == 0)
            return 1;
    return 0;
}

/* Upstream's applyNonMissing: the default cpu / memory request for a
 * container that names none (an explicit 0 stays 0). */
static void apply_non_missing(ks_resources_t *r, unsigned present,
                              unsigned defaults)
{
    if ((defaults & KS_REQ_CPU) && !(present & KS_REQ_CPU))
        r->milli_cpu = KS_DEFAULT_MILLI_CPU_REQUEST;
    if ((defaults & KS_REQ_MEMORY) && !(present & KS_REQ_MEMORY))
        r->memory = KS_DEFAULT_MEMORY_REQUEST;
}

/*
 * Upstream's AggregateContainerRequests (v1.29+): the containers' sum plus
 * every sidecar; then at least, for each init container, its request plus
 * the sidecars started before it (a sidecar counts the sidecars up to and
 * including itself). `defaults` adds the non-zero defaults per container.
 */
static void aggregate_requests(const ks_pod_t *pod, const ks_pod_req_flags_t *d,
                               unsigned defaults, ks_resources_t *out)
{
    ks_resources_t sidecars, init_max, cur;
    uint32_t i;
    memset(out, 0, sizeof(*out));
    memset(&sidecars, 0, sizeof(sidecars));
    memset(&init_max, 0, sizeof(init_max));
    for (i = 0; i < pod->n_containers; i++) {
        cur = pod->containers[i].requests;
        apply_non_missing(&cur, d->cfl[i].present, defaults);
        ks_resources_add(out, &cur);
    }
    for (i = 0; i < pod->n_init_containers; i++) {
        cur = pod->init_containers[i].requests;
        apply_non_missing(&cur, d->ifl[i].present, defaults);
        if (d->ifl[i].restart_always) {
            ks_resources_add(out, &cur);
            ks_resources_add(&sidecars, &cur);
            cur = sidecars;
        } else {
            ks_resources_add(&cur, &sidecars);
        }
        ks_resources_set_max(&init_max, &cur);
    }
    ks_resources_set_max(out, &init_max);
}

/* Pod-level requests replace cpu, memory and hugepages when set
 * (upstream's applyPodLevelResources). */
static void apply_pod_level(const ks_pod_t *pod, unsigned pod_req,
                            ks_resources_t *r)
{
    uint32_t i;
    if (!pod->has_pod_requests)
        return;
    if (pod_req & KS_REQ_CPU)
        r->milli_cpu = pod->pod_requests.milli_cpu;
    if (pod_req & KS_REQ_MEMORY)
        r->memory = pod->pod_requests.memory;
    for (i = 0; i < pod->pod_requests.n_scalar; i++)
        if (is_hugepages(pod->pod_requests.scalar[i].name))
            ks_resources_set_scalar(r, pod->pod_requests.scalar[i].name,
                                    pod->pod_requests.scalar[i].value);
}

/*
 * The API server's defaulting of pod-level requests (PodLevelResources,
 * on by default since v1.34), only when pod-level limits are set: cpu and
 * memory the containers request default to the containers' aggregate;
 * then every cpu, memory or hugepages limit still without a request
 * defaults to the limit. Returns the KS_REQ_* bits now requested.
 */
static unsigned default_pod_requests(ks_pod_t *pod, const ks_pod_req_flags_t *d,
                                     unsigned ctr_present)
{
    unsigned req = d->pod_req;
    uint32_t i;
    if (d->pod_lim == 0 && pod->pod_limits.n_scalar == 0)
        return req;
    if ((ctr_present & (KS_REQ_CPU | KS_REQ_MEMORY) & ~req) != 0) {
        ks_resources_t agg;
        aggregate_requests(pod, d, 0, &agg);
        if ((ctr_present & KS_REQ_CPU) && !(req & KS_REQ_CPU)) {
            pod->pod_requests.milli_cpu = agg.milli_cpu;
            req |= KS_REQ_CPU;
        }
        if ((ctr_present & KS_REQ_MEMORY) && !(req & KS_REQ_MEMORY)) {
            pod->pod_requests.memory = agg.memory;
            req |= KS_REQ_MEMORY;
        }
    }
    if ((d->pod_lim & KS_REQ_CPU) && !(req & KS_REQ_CPU)) {
        pod->pod_requests.milli_cpu = pod->pod_limits.milli_cpu;
        req |= KS_REQ_CPU;
    }
    if ((d->pod_lim & KS_REQ_MEMORY) && !(req & KS_REQ_MEMORY)) {
        pod->pod_requests.memory = pod->pod_limits.memory;
        req |= KS_REQ_MEMORY;
    }
    for (i = 0; i < pod->pod_limits.n_scalar; i++) {
        const ks_scalar_resource_t *l = &pod->pod_limits.scalar[i];
        if (is_hugepages(l->name) && !has_scalar(&pod->pod_requests, l->name))
            ks_resources_set_scalar(&pod->pod_requests, l->name, l->value);
    }
    return req;
}

void ks_pod_requests_derive(ks_pod_t *pod, const ks_pod_req_flags_t *d)
{
    ks_resources_t nz;
    uint32_t i;
    unsigned ctr_present = 0, pod_req, defaults;

    for (i = 0; i < pod->n_containers; i++)
        ctr_present |= d->cfl[i].present;
    for (i = 0; i < pod->n_init_containers; i++)
        ctr_present |= d->ifl[i].present;
    pod_req = default_pod_requests(pod, d, ctr_present);
    pod->has_pod_requests = (pod_req & (KS_REQ_CPU | KS_REQ_MEMORY)) != 0;
    for (i = 0; i < pod->pod_requests.n_scalar; i++)
        if (is_hugepages(pod->pod_requests.scalar[i].name))
            pod->has_pod_requests = 1;

    /* PodRequests. */
    aggregate_requests(pod, d, 0, &pod->requests);
    apply_pod_level(pod, pod_req, &pod->requests);
    ks_resources_add(&pod->requests, &pod->overhead);

    /* The scheduler's non-zero requests: the defaults per container; with
     * pod-level requests, only for a resource that neither the containers,
     * the pod level nor the overhead names (getNonMissingContainerRequests). */
    defaults = KS_REQ_CPU | KS_REQ_MEMORY;
    if (pod->has_pod_requests)
        defaults &= ~(ctr_present | pod_req | d->overhead);
    aggregate_requests(pod, d, defaults, &nz);
    apply_pod_level(pod, pod_req, &nz);
    ks_resources_add(&nz, &pod->overhead);
    pod->non_zero_milli_cpu = nz.milli_cpu;
    pod->non_zero_memory = nz.memory;
}
