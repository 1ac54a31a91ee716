/*
 * DynamicResources' internals, shared by its files (not an SDK header).
 *
 *   dra_plugin.c     the descriptor, args, PreEnqueue, PreFilter, Filter,
 *                    PostFilter, Score, Reserve/Unreserve, QueueingHints
 *   dra_objects.c    ResourceSlices, DeviceClasses and ResourceClaims read
 *                    from the stores into C structures, cached by uid and
 *                    resourceVersion; CEL programs compiled once
 *   dra_alloc.c      upstream's structured allocator (pools, backtracking
 *                    over claims, requests, subrequests and devices,
 *                    matchAttribute, allocationMode All); host-free, so the
 *                    unit test drives it on hand-built inputs
 *   dra_devset.c     a set of device IDs (allocated or in flight)
 *   dra_assume.c     the plugin's assume cache: allocations between
 *                    Reserve and the stores catching up
 *   dra_prebind.c    PreBind: the finalizer, then status.allocation and
 *                    status.reservedFor, written through api_request
 *
 * Threads: Filter and Score run on several threads at once; they read the
 * parsed caches (changed only by PreFilter, on the loop thread) and the
 * cycle state, and write only the state's per-node results, under its
 * mutex. Everything else runs on the loop thread.
 */
#ifndef KS_DYNAMICRESOURCES_DRA_H
#define KS_DYNAMICRESOURCES_DRA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cel.h"

#define DRA_NAME "DynamicResources"
#define DRA_GROUP "resource.k8s.io"
#define DRA_API "resource.k8s.io/v1"
#define DRA_FINALIZER "resource.kubernetes.io/delete-protection"
/* resourceapi.AllocationResultsMaxSize, FirstAvailableDeviceRequestMaxSize,
 * ResourceClaimReservedForMaxSize */
#define DRA_RESULTS_MAX 32
#define DRA_FIRST_AVAILABLE_MAX 8
#define DRA_RESERVED_FOR_MAX 256

/* A growable text buffer (JSON bodies, messages). */
typedef struct dra_buf {
    char *s;
    size_t len, cap;
    int oom;
} dra_buf_t;
void dra_buf_put(dra_buf_t *b, const char *s);
void dra_buf_printf(dra_buf_t *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s as a JSON string, quotes included. */
void dra_buf_json(dra_buf_t *b, const char *s);
void dra_buf_free(dra_buf_t *b);

/* --- node selection (v1.NodeSelector) ------------------------------------- */

typedef enum {
    DRA_OP_IN, DRA_OP_NOT_IN, DRA_OP_EXISTS, DRA_OP_DOES_NOT_EXIST,
    DRA_OP_GT, DRA_OP_LT
} dra_op_t;

typedef struct dra_nsreq {
    char *key;
    dra_op_t op;
    char **values;
    uint32_t n_values;
    int field; /* matchFields (metadata.name) rather than matchExpressions */
} dra_nsreq_t;

typedef struct dra_nsterm {
    dra_nsreq_t *reqs;
    uint32_t n_reqs;
} dra_nsterm_t;

/* nodeSelectorTerms, ORed; a term's requirements ANDed. */
typedef struct dra_nodesel {
    dra_nsterm_t *terms;
    uint32_t n_terms;
} dra_nodesel_t;

/* 1 when a node with this name and labels matches. */
struct ks_labels;
int dra_nodesel_matches(const dra_nodesel_t *s, const char *node_name,
                        const struct ks_labels *labels);
void dra_nodesel_free(dra_nodesel_t *s);

/* --- devices, slices ------------------------------------------------------ */

/* A device ID: three interned strings (the plugin interns every driver,
 * pool and device name with api->intern; the unit test with its own
 * table), compared by address. */
typedef struct dra_devid {
    const char *driver, *pool, *device;
} dra_devid_t;

typedef struct dra_device {
    const char *name;  /* interned */
    ks_cel_device_t cel; /* driver, attributes (domain resolved), capacity */
} dra_device_t;

typedef enum {
    DRA_SLICE_NODE_NAME, DRA_SLICE_ALL_NODES, DRA_SLICE_SELECTOR,
    DRA_SLICE_UNKNOWN /* none set (per-device selection): never used */
} dra_slice_sel_t;

typedef struct dra_slice {
    const char *name;
    const char *driver, *pool; /* interned */
    int64_t generation, slice_count;
    dra_slice_sel_t sel;
    const char *node_name; /* interned; DRA_SLICE_NODE_NAME */
    dra_nodesel_t selector; /* DRA_SLICE_SELECTOR */
    dra_device_t *devices;
    uint32_t n_devices;
} dra_slice_t;

/* --- classes, claims ------------------------------------------------------ */

/* One CEL selector: the program, or the compile error. */
typedef struct dra_selector {
    const char *expr;
    const ks_cel_program_t *prog; /* NULL: err says why */
    const char *err;
} dra_selector_t;

typedef struct dra_class {
    const char *name;
    dra_selector_t *selectors;
    uint32_t n_selectors;
} dra_class_t;

typedef enum { DRA_MODE_EXACT, DRA_MODE_ALL, DRA_MODE_UNKNOWN } dra_mode_t;

/* `exactly` or one entry of `firstAvailable`. */
typedef struct dra_exact {
    const char *name; /* the request's or subrequest's name */
    const char *class_name;
    dra_selector_t *selectors;
    uint32_t n_selectors;
    dra_mode_t mode;
    int64_t count;
    int admin_access;
} dra_exact_t;

typedef struct dra_request {
    const char *name;
    int has_exactly;
    dra_exact_t exactly;
    dra_exact_t *subs; /* firstAvailable */
    uint32_t n_subs;
} dra_request_t;

typedef struct dra_constraint {
    const char **requests; /* empty: every request */
    uint32_t n_requests;
    const char *attr_domain, *attr_id; /* matchAttribute, split at '/' */
    int unknown; /* not a matchAttribute constraint */
} dra_constraint_t;

typedef struct dra_result {
    const char *request; /* "req" or "req/sub", interned */
    dra_devid_t id;
} dra_result_t;

typedef struct dra_consumer {
    const char *resource, *name, *uid;
} dra_consumer_t;

typedef struct dra_claim {
    const char *ns, *name, *uid, *rv; /* interned */
    int deleting;
    const char *controller_uid; /* the controller ownerReference's uid */
    dra_request_t *requests;
    uint32_t n_requests;
    dra_constraint_t *constraints;
    uint32_t n_constraints;
    int allocated; /* status.allocation is set */
    dra_result_t *results;
    uint32_t n_results;
    int has_nodesel;
    dra_nodesel_t nodesel; /* status.allocation.nodeSelector */
    dra_consumer_t *reserved;
    uint32_t n_reserved;
    const char **finalizers;
    uint32_t n_finalizers;
} dra_claim_t;

/* --- dra_devset.c ---------------------------------------------------------- */

typedef struct dra_devset {
    dra_devid_t *slots;
    uint32_t cap, n;
} dra_devset_t;
int dra_devset_add(dra_devset_t *s, dra_devid_t id); /* 0, -1 no memory */
int dra_devset_has(const dra_devset_t *s, dra_devid_t id);
void dra_devset_clear(dra_devset_t *s);
void dra_devset_free(dra_devset_t *s);

/* --- dra_alloc.c ----------------------------------------------------------- */

typedef const dra_class_t *(*dra_class_fn)(void *ud, const char *name);

typedef struct dra_alloc_in {
    const char *node_name;
    const dra_claim_t *const *claims; /* to allocate, in the pod's order */
    uint32_t n_claims;
    const dra_slice_t *const *slices; /* the slices that reach the node */
    uint32_t n_slices;
    dra_class_fn class_get;
    void *class_ud;
    const dra_devset_t *allocated; /* in use (stores and in flight) */
    int64_t deadline_ms; /* CLOCK_MONOTONIC ms; 0: none */
    uint64_t cel_cost_limit;
} dra_alloc_in_t;

/* One claim's allocation. */
typedef struct dra_claim_alloc {
    dra_result_t *results;
    uint32_t n_results;
    /* per request of the claim: the subrequest chosen (-1: none) */
    int32_t *sub_index;
    uint32_t n_requests;
    int node_local; /* a device from a nodeName slice: select this node */
} dra_claim_alloc_t;

typedef struct dra_alloc_out {
    dra_claim_alloc_t *claims; /* n_claims of the input */
    uint32_t n_claims;
    uint64_t steps; /* allocateOne invocations */
} dra_alloc_out_t;

enum {
    DRA_ALLOC_OK = 1,
    DRA_ALLOC_NONE = 0,   /* no solution on this node */
    DRA_ALLOC_ERROR = -1, /* err says why (upstream returns an error) */
    DRA_ALLOC_TIMEOUT = -2,
    DRA_ALLOC_NOMEM = -3,
    DRA_ALLOC_NODE_FAILED = -4 /* upstream's ErrFailedAllocationOnNode:
                                  this node only (invalid pools) */
};

/* Upstream's Allocate for one node. DRA_ALLOC_OK fills *out (free with
 * dra_alloc_out_free); the other codes leave it empty. Thread-safe (no
 * shared state; the inputs are read only). */
int dra_allocate(const dra_alloc_in_t *in, dra_alloc_out_t *out, char *err,
                 size_t errlen);
void dra_alloc_out_free(dra_alloc_out_t *out);
int64_t dra_now_ms(void);

#endif /* KS_DYNAMICRESOURCES_DRA_H */
