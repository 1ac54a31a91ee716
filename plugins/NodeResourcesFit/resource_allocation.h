/*
 * Shared by NodeResourcesFit and NodeResourcesBalancedAllocation (header
 * only, compiled into each plugin): the `resources` argument list and the
 * per-node (allocatable, requested) pair each scoring strategy starts from,
 * as upstream v1.24.1 resource_allocation.go.
 *
 * Pure functions over views; thread-safe; nothing here allocates.
 */
#ifndef KS_PLUGIN_RESOURCE_ALLOCATION_H
#define KS_PLUGIN_RESOURCE_ALLOCATION_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define RA_MAX_RESOURCES 32

typedef enum ra_kind {
    RA_CPU = 0,
    RA_MEMORY,
    RA_EPHEMERAL,
    RA_SCALAR, /* extended, hugepages-*, attachable-volumes-*, kubernetes.io/ */
    RA_OTHER   /* anything else ("pods", ...): never scored */
} ra_kind_t;

typedef struct ra_resource {
    const char *name; /* interned */
    ra_kind_t kind;
    int64_t weight;
} ra_resource_t;

typedef struct ra_spec {
    ra_resource_t res[RA_MAX_RESOURCES];
    uint32_t n;
} ra_spec_t;

/* Write "line L, column C: " + message to err. Returns -1. */
static inline int ra_errf(char *err, size_t errlen, const ks_args_t *at,
                          const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline int ra_errf(char *err, size_t errlen, const ks_args_t *at,
                          const char *fmt, ...)
{
    va_list ap;
    int off;
    if (errlen == 0)
        return -1;
    off = snprintf(err, errlen, "line %u, column %u: ", at ? at->line : 0,
                   at ? at->column : 0);
    if (off < 0 || (size_t)off >= errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
    va_end(ap);
    return -1;
}

static inline int ra_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Upstream IsExtendedResourceName (without the qualified-name syntax
 * check): has a '/', is not in the kubernetes.io/ namespace and does not
 * start with "requests.". */
static inline int ra_is_extended(const char *name)
{
    return strchr(name, '/') != NULL && strstr(name, "kubernetes.io/") == NULL &&
           !ra_has_prefix(name, "requests.");
}

/* Upstream IsScalarResourceName. */
static inline int ra_is_scalar(const char *name)
{
    return ra_is_extended(name) || ra_has_prefix(name, "hugepages-") ||
           strstr(name, "kubernetes.io/") != NULL ||
           ra_has_prefix(name, "attachable-volumes-");
}

static inline ra_kind_t ra_kind_of(const char *name)
{
    if (strcmp(name, "cpu") == 0)
        return RA_CPU;
    if (strcmp(name, "memory") == 0)
        return RA_MEMORY;
    if (strcmp(name, "ephemeral-storage") == 0)
        return RA_EPHEMERAL;
    return ra_is_scalar(name) ? RA_SCALAR : RA_OTHER;
}

/* Value of scalar `name` (interned) in r, 0 when absent; *found says
 * whether it is present. */
static inline int64_t ra_scalar(const ks_resources_t *r, const char *name,
                                int *found)
{
    uint32_t i;
    for (i = 0; i < r->n_scalar; i++)
        if (r->scalar[i].name == name) {
            if (found)
                *found = 1;
            return r->scalar[i].value;
        }
    if (found)
        *found = 0;
    return 0;
}

/*
 * Parse the `resources` argument ([{name, weight}], absent or empty: cpu and
 * memory with weight 1; weight 0 defaults to 1). `path` names the list in
 * messages. With `balanced`, weights must be 1 and names unique (upstream's
 * BalancedAllocation validation); otherwise weights must be in (0, 100] and
 * a repeated name keeps its last weight. Returns 0, or -1 with a message.
 */
static inline int ra_parse_resources(const ks_host_api_t *api, ks_handle_t *h,
                                     const ks_args_t *a, const char *path,
                                     int balanced, ra_spec_t *spec, char *err,
                                     size_t errlen)
{
    static const char *const keys[] = {"name", "weight", NULL};
    uint32_t i, j;
    spec->n = 0;
    if (a == NULL || (a->kind == KS_ARGS_SEQ && a->n == 0) ||
        (a->kind == KS_ARGS_SCALAR && a->scalar[0] == '\0')) {
        spec->res[0].name = api->intern(h, "cpu");
        spec->res[0].kind = RA_CPU;
        spec->res[0].weight = 1;
        spec->res[1].name = api->intern(h, "memory");
        spec->res[1].kind = RA_MEMORY;
        spec->res[1].weight = 1;
        spec->n = 2;
        return 0;
    }
    if (a->kind != KS_ARGS_SEQ)
        return ra_errf(err, errlen, a, "%s: must be a list", path);
    if (a->n > RA_MAX_RESOURCES)
        return ra_errf(err, errlen, a, "%s: at most %d resources", path,
                       RA_MAX_RESOURCES);
    for (i = 0; i < a->n; i++) {
        const ks_args_t *e = a->children[i];
        const ks_args_t *nm, *wt;
        const char *name;
        int64_t weight = 0;
        char what[128];
        if (e->kind != KS_ARGS_MAP)
            return ra_errf(err, errlen, e, "%s[%u]: must be a mapping", path,
                           i);
        if (ks_args_check_keys(e, keys, err, errlen) != 0)
            return -1;
        nm = ks_args_get(e, "name");
        if (nm == NULL || nm->kind != KS_ARGS_SCALAR || nm->scalar[0] == '\0')
            return ra_errf(err, errlen, nm ? nm : e,
                           "%s[%u].name: Required value", path, i);
        wt = ks_args_get(e, "weight");
        snprintf(what, sizeof what, "%s[%u].weight", path, i);
        if (wt != NULL &&
            ks_args_int64(wt, what, &weight, err, errlen) != 0)
            return -1;
        if (weight == 0)
            weight = 1;
        name = api->intern(h, nm->scalar);
        if (balanced && weight != 1)
            return ra_errf(err, errlen, wt,
                           "%s: Invalid value: %lld: must be 1", what,
                           (long long)weight);
        if (!balanced && (weight <= 0 || weight > 100))
            return ra_errf(err, errlen, wt,
                           "%s: Invalid value: %lld: resource weight of %s "
                           "not in valid range (0, 100]",
                           what, (long long)weight, name);
        for (j = 0; j < spec->n; j++)
            if (spec->res[j].name == name)
                break;
        if (j < spec->n) {
            if (balanced)
                return ra_errf(err, errlen, nm,
                               "%s[%u].name: Duplicate value: \"%s\"", path,
                               i, name);
            spec->res[j].weight = weight;
            continue;
        }
        spec->res[spec->n].name = name;
        spec->res[spec->n].kind = ra_kind_of(name);
        spec->res[spec->n].weight = weight;
        spec->n++;
    }
    return 0;
}

/*
 * The pod's request of `r`: with `use_requested` the actual requests,
 * otherwise cpu and memory count the non-zero defaults (100m, 200Mi) for
 * containers that request nothing. Both include init containers and
 * overhead (upstream calculatePodResourceRequest, with its CPU overhead
 * quirk). Relies on the host adding the overhead to pod->requests and to
 * the non-zero cpu in millicores.
 */
static inline int64_t ra_pod_request(const ks_pod_t *pod,
                                     const ra_resource_t *r, int use_requested)
{
    int64_t oh = pod->overhead.milli_cpu;
    switch (r->kind) {
    case RA_CPU:
        /* v1.24.1 adds the CPU overhead here in whole cores, rounded up
         * (Quantity.Value(), not MilliValue()): 250m of overhead counts as
         * 1m. The conformance data shows it (fit-init-overhead). */
        return (use_requested ? pod->requests.milli_cpu
                              : pod->non_zero_milli_cpu) -
               oh + (oh > 0 ? (oh + 999) / 1000 : 0);
    case RA_MEMORY:
        return use_requested ? pod->requests.memory : pod->non_zero_memory;
    case RA_EPHEMERAL:
        return pod->requests.ephemeral_storage;
    case RA_SCALAR:
        return ra_scalar(&pod->requests, r->name, NULL);
    case RA_OTHER:
        break;
    }
    return 0;
}

/*
 * The node's allocatable amount of `r` and what would be requested with the
 * pod on it (upstream calculateResourceAllocatableRequest). *alloc == 0
 * means "do not score this resource" (absent, or an extended resource the
 * pod does not ask for).
 */
static inline void ra_alloc_request(const ks_node_info_t *ni,
                                    const ra_resource_t *r, int64_t pod_req,
                                    int use_requested, int64_t *alloc,
                                    int64_t *req)
{
    const ks_resources_t *used =
        use_requested ? &ni->requested : &ni->non_zero_requested;
    const ks_resources_t *al = &ni->node->allocatable;
    int found;
    *alloc = 0;
    *req = 0;
    switch (r->kind) {
    case RA_CPU:
        *alloc = al->milli_cpu;
        *req = used->milli_cpu + pod_req;
        return;
    case RA_MEMORY:
        *alloc = al->memory;
        *req = used->memory + pod_req;
        return;
    case RA_EPHEMERAL:
        *alloc = al->ephemeral_storage;
        *req = ni->requested.ephemeral_storage + pod_req;
        return;
    case RA_SCALAR:
        if (pod_req == 0)
            return;
        *alloc = ra_scalar(al, r->name, &found);
        if (!found)
            return;
        *req = ra_scalar(&ni->requested, r->name, NULL) + pod_req;
        return;
    case RA_OTHER:
        return;
    }
}

#endif /* KS_PLUGIN_RESOURCE_ALLOCATION_H */
