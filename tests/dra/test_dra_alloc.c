/*
 * DynamicResources' structured allocator (plugins/DynamicResources/
 * dra_alloc.c) on hand-built slices, classes and claims. Each case names
 * the upstream behaviour it pins (k8s.io/dynamic-resource-allocation,
 * structured/internal/stable: allocator_stable.go, pools_stable.go, the
 * version v1.36 runs without alpha gates); the expected devices were
 * worked out by following that code by hand.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "dra.h"

/* --- a tiny interner: the allocator compares IDs by address ------------- */

static char *strs[4096];
static int n_strs;

static const char *I(const char *s)
{
    int i;
    for (i = 0; i < n_strs; i++)
        if (strcmp(strs[i], s) == 0)
            return strs[i];
    strs[n_strs] = strdup(s);
    return strs[n_strs++];
}

/* --- builders ------------------------------------------------------------ */

#define DRV "gpu.example.com"

typedef struct dev_spec {
    const char *name, *model, *root;
    int64_t mem_gb;
} dev_spec_t;

static dra_slice_t *slice(const char *name, const char *node,
                          const char *pool, int64_t gen, int64_t count,
                          const dev_spec_t *devs, uint32_t n)
{
    dra_slice_t *s = calloc(1, sizeof *s);
    uint32_t i;
    s->name = I(name);
    s->driver = I(DRV);
    s->pool = I(pool);
    s->generation = gen;
    s->slice_count = count;
    s->sel = node ? DRA_SLICE_NODE_NAME : DRA_SLICE_ALL_NODES;
    s->node_name = node ? I(node) : NULL;
    s->devices = calloc(n ? n : 1, sizeof *s->devices);
    s->n_devices = n;
    for (i = 0; i < n; i++) {
        dra_device_t *d = &s->devices[i];
        ks_cel_attr_t *a = calloc(3, sizeof *a);
        d->name = I(devs[i].name);
        d->cel.driver = s->driver;
        a[0].domain = I(DRV);
        a[0].id = I("model");
        a[0].type = KS_CEL_ATTR_STRING;
        a[0].s = I(devs[i].model);
        a[1].domain = I(DRV);
        a[1].id = I("pcieRoot");
        a[1].type = KS_CEL_ATTR_STRING;
        a[1].s = I(devs[i].root ? devs[i].root : "none");
        a[2].domain = I(DRV);
        a[2].id = I("memoryGiB");
        a[2].type = KS_CEL_ATTR_INT;
        a[2].i = devs[i].mem_gb;
        d->cel.attrs = a;
        d->cel.n_attrs = 3;
    }
    return s;
}

static void slice_free(dra_slice_t *s)
{
    uint32_t i;
    for (i = 0; i < s->n_devices; i++)
        free((void *)s->devices[i].cel.attrs);
    free(s->devices);
    free(s);
}

static dra_selector_t *sel(const char *expr)
{
    dra_selector_t *s = calloc(1, sizeof *s);
    char err[256];
    s->expr = expr;
    s->prog = ks_cel_compile(expr, err, sizeof err);
    ck_assert_msg(s->prog != NULL, "compile %s: %s", expr, err);
    return s;
}

static void sel_free(dra_selector_t *s)
{
    if (s != NULL)
        ks_cel_free((ks_cel_program_t *)s->prog);
    free(s);
}

/* the class every request uses: the driver's devices */
static dra_class_t gpu_class;
static dra_selector_t *gpu_class_sel;

static const dra_class_t *class_get(void *ud, const char *name)
{
    (void)ud;
    return strcmp(name, "gpu.example.com") == 0 ? &gpu_class : NULL;
}

static void exact(dra_exact_t *e, const char *name, dra_mode_t mode,
                  int64_t count, dra_selector_t *s)
{
    memset(e, 0, sizeof *e);
    e->name = I(name);
    e->class_name = I("gpu.example.com");
    e->mode = mode;
    e->count = count;
    e->selectors = s;
    e->n_selectors = s ? 1 : 0;
}

static dra_claim_t *claim1(const char *name, dra_mode_t mode, int64_t count,
                           dra_selector_t *s)
{
    dra_claim_t *c = calloc(1, sizeof *c);
    c->ns = I("default");
    c->name = I(name);
    c->uid = I(name);
    c->requests = calloc(1, sizeof *c->requests);
    c->n_requests = 1;
    c->requests[0].name = I("gpu");
    c->requests[0].has_exactly = 1;
    exact(&c->requests[0].exactly, "gpu", mode, count, s);
    return c;
}

static void claim_free(dra_claim_t *c)
{
    uint32_t i;
    for (i = 0; i < c->n_requests; i++)
        free(c->requests[i].subs);
    free(c->requests);
    free(c->constraints);
    free(c);
}

static dra_devset_t allocated;

static int run(const dra_claim_t *const *claims, uint32_t nc,
               const dra_slice_t *const *slices, uint32_t ns,
               dra_alloc_out_t *out, char *err, size_t errlen)
{
    dra_alloc_in_t in;
    memset(&in, 0, sizeof in);
    in.node_name = I("node-1");
    in.claims = claims;
    in.n_claims = nc;
    in.slices = slices;
    in.n_slices = ns;
    in.class_get = class_get;
    in.allocated = &allocated;
    return dra_allocate(&in, out, err, errlen);
}

static dra_devid_t id(const char *pool, const char *dev)
{
    dra_devid_t d = {I(DRV), I(pool), I(dev)};
    return d;
}

static void setup(void)
{
    gpu_class_sel = sel("device.driver == \"gpu.example.com\"");
    gpu_class.name = I("gpu.example.com");
    gpu_class.selectors = gpu_class_sel;
    gpu_class.n_selectors = 1;
    dra_devset_clear(&allocated);
}

static void teardown(void)
{
    sel_free(gpu_class_sel);
    dra_devset_free(&allocated);
}

static const dev_spec_t eight[] = {
    {"gpu-0", "a100", "pci-a", 40}, {"gpu-1", "a100", "pci-b", 40},
    {"gpu-2", "a100", "pci-a", 80}, {"gpu-3", "a100", "pci-b", 80},
    {"gpu-4", "h100", "pci-c", 80}, {"gpu-5", "h100", "pci-c", 80},
    {"gpu-6", "h100", "pci-d", 80}, {"gpu-7", "h100", "pci-d", 80},
};

/* --- cases ---------------------------------------------------------------- */

/* One GPU per pod on nodes with 0 to 8 devices: the first free device in
 * slice order (allocateOne's device loop); a node without devices, or
 * with all taken by previous pods (allocatedDevices), has no solution. */
START_TEST(test_one_gpu_per_pod)
{
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 1, NULL);
    const dra_claim_t *cs[] = {c};
    dra_alloc_out_t out;
    char err[512];
    uint32_t n;
    for (n = 0; n <= 8; n++) {
        dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, n);
        const dra_slice_t *ss[] = {s};
        uint32_t k;
        /* previous pods took the first n/2 devices */
        dra_devset_clear(&allocated);
        for (k = 0; k < n / 2; k++)
            dra_devset_add(&allocated, id("node-1", eight[k].name));
        if (n == 0) {
            ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                             DRA_ALLOC_NONE);
        } else {
            ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                             DRA_ALLOC_OK);
            ck_assert_uint_eq(out.claims[0].n_results, 1);
            ck_assert_str_eq(out.claims[0].results[0].id.device,
                             eight[n / 2].name);
            ck_assert_str_eq(out.claims[0].results[0].request, "gpu");
            ck_assert_int_eq(out.claims[0].node_local, 1);
            dra_alloc_out_free(&out);
        }
        /* all taken */
        for (k = 0; k < n; k++)
            dra_devset_add(&allocated, id("node-1", eight[k].name));
        ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                         DRA_ALLOC_NONE);
        slice_free(s);
    }
    claim_free(c);
}
END_TEST

/* The request's own selector after the class's (isSelectable). */
START_TEST(test_request_selector)
{
    dra_selector_t *h100 = sel(
        "device.attributes[\"gpu.example.com\"].model == \"h100\"");
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 2, h100);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 8);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    dra_devset_add(&allocated, id("node-1", "gpu-4"));
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_uint_eq(out.claims[0].n_results, 2);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-5");
    ck_assert_str_eq(out.claims[0].results[1].id.device, "gpu-6");
    dra_alloc_out_free(&out);
    claim_free(c);
    sel_free(h100);
    slice_free(s);
}
END_TEST

/* Two claims of one pod never get the same device (allocatingDevices),
 * and the claims are allocated in the pod's order. */
START_TEST(test_two_claims)
{
    dra_claim_t *a = claim1("a", DRA_MODE_EXACT, 1, NULL);
    dra_claim_t *b = claim1("b", DRA_MODE_EXACT, 2, NULL);
    const dra_claim_t *cs[] = {a, b};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 3);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    ck_assert_int_eq(run(cs, 2, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-0");
    ck_assert_str_eq(out.claims[1].results[0].id.device, "gpu-1");
    ck_assert_str_eq(out.claims[1].results[1].id.device, "gpu-2");
    dra_alloc_out_free(&out);
    /* four devices wanted, three there */
    b->requests[0].exactly.count = 3;
    ck_assert_int_eq(run(cs, 2, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    claim_free(a);
    claim_free(b);
    slice_free(s);
}
END_TEST

/* matchAttribute (matchAttributeConstraint): two GPUs on the same PCIe
 * root. gpu-0 (pci-a) is taken first, gpu-1 (pci-b) breaks the
 * constraint, gpu-2 (pci-a) completes it. With gpu-2 taken, the search
 * backtracks past gpu-0 and finds gpu-1 + gpu-3 (pci-b). */
START_TEST(test_match_attribute)
{
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 2, NULL);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 4);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    c->constraints = calloc(1, sizeof *c->constraints);
    c->n_constraints = 1;
    c->constraints[0].attr_domain = I(DRV);
    c->constraints[0].attr_id = I("pcieRoot");
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-0");
    ck_assert_str_eq(out.claims[0].results[1].id.device, "gpu-2");
    dra_alloc_out_free(&out);
    dra_devset_add(&allocated, id("node-1", "gpu-2"));
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-1");
    ck_assert_str_eq(out.claims[0].results[1].id.device, "gpu-3");
    dra_alloc_out_free(&out);
    /* an attribute no device has: never satisfied */
    c->constraints[0].attr_id = I("numaNode");
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    claim_free(c);
    slice_free(s);
}
END_TEST

/* firstAvailable: the subrequests in order; the first that can be
 * satisfied wins and the result names "request/subrequest". */
START_TEST(test_first_available)
{
    dra_selector_t *h100 = sel(
        "device.attributes[\"gpu.example.com\"].model == \"h100\"");
    dra_selector_t *a100 = sel(
        "device.attributes[\"gpu.example.com\"].model == \"a100\"");
    dra_claim_t *c = calloc(1, sizeof *c);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 4);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    c->ns = I("default");
    c->name = I("c1");
    c->requests = calloc(1, sizeof *c->requests);
    c->n_requests = 1;
    c->requests[0].name = I("gpu");
    c->requests[0].subs = calloc(2, sizeof *c->requests[0].subs);
    c->requests[0].n_subs = 2;
    exact(&c->requests[0].subs[0], "big", DRA_MODE_EXACT, 1, h100);
    exact(&c->requests[0].subs[1], "small", DRA_MODE_EXACT, 2, a100);
    /* no h100 among gpu-0..3: the second subrequest */
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_int_eq(out.claims[0].sub_index[0], 1);
    ck_assert_uint_eq(out.claims[0].n_results, 2);
    ck_assert_str_eq(out.claims[0].results[0].request, "gpu/small");
    ck_assert_str_eq(out.claims[0].results[1].id.device, "gpu-1");
    dra_alloc_out_free(&out);
    slice_free(s);
    /* with h100s: the first */
    s = slice("s", "node-1", "node-1", 1, 1, eight, 8);
    ss[0] = s;
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_int_eq(out.claims[0].sub_index[0], 0);
    ck_assert_str_eq(out.claims[0].results[0].request, "gpu/big");
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-4");
    dra_alloc_out_free(&out);
    claim_free(c);
    sel_free(h100);
    sel_free(a100);
    slice_free(s);
}
END_TEST

/* A pool republished with a newer generation: the older slices are
 * ignored (addSlice); a pool with fewer slices than resourceSliceCount is
 * incomplete: not used for ExactCount, an error for All. */
START_TEST(test_pool_generations)
{
    static const dev_spec_t old_devs[] = {{"gpu-0", "a100", "pci-a", 40},
                                          {"gpu-1", "a100", "pci-a", 40}};
    static const dev_spec_t new_devs[] = {{"gpu-9", "a100", "pci-a", 40}};
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 1, NULL);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s1 = slice("s-old", "node-1", "node-1", 1, 1, old_devs, 2);
    dra_slice_t *s2 = slice("s-new", "node-1", "node-1", 2, 1, new_devs, 1);
    dra_slice_t *s3 = slice("s-half", "node-1", "other", 1, 2, old_devs, 2);
    const dra_slice_t *ss[] = {s1, s2};
    const dra_slice_t *half[] = {s3};
    dra_alloc_out_t out;
    char err[512];
    ck_assert_int_eq(run(cs, 1, ss, 2, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-9");
    dra_alloc_out_free(&out);
    /* order of the slices does not matter */
    ss[0] = s2;
    ss[1] = s1;
    ck_assert_int_eq(run(cs, 1, ss, 2, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_str_eq(out.claims[0].results[0].id.device, "gpu-9");
    dra_alloc_out_free(&out);
    /* the new generation's only device taken: nothing (the old one is
     * gone, not a fallback) */
    dra_devset_add(&allocated, id("node-1", "gpu-9"));
    ck_assert_int_eq(run(cs, 1, ss, 2, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    /* incomplete pool */
    ck_assert_int_eq(run(cs, 1, half, 1, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    c->requests[0].exactly.mode = DRA_MODE_ALL;
    ck_assert_int_eq(run(cs, 1, half, 1, &out, err, sizeof err),
                     DRA_ALLOC_ERROR);
    ck_assert_msg(strstr(err, "asks for all devices, but resource pool "
                              "gpu.example.com/other is currently being "
                              "updated") != NULL,
                  "%s", err);
    claim_free(c);
    slice_free(s1);
    slice_free(s2);
    slice_free(s3);
}
END_TEST

/* allocationMode All: every selectable device of the node; one of them in
 * use means no solution (allDevices is fixed before allocation). */
START_TEST(test_all_mode)
{
    dra_claim_t *c = claim1("c1", DRA_MODE_ALL, 0, NULL);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 3);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err), DRA_ALLOC_OK);
    ck_assert_uint_eq(out.claims[0].n_results, 3);
    ck_assert_str_eq(out.claims[0].results[2].id.device, "gpu-2");
    dra_alloc_out_free(&out);
    dra_devset_add(&allocated, id("node-1", "gpu-1"));
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    /* no device at all: no solution */
    s->n_devices = 0;
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_NONE);
    s->n_devices = 3;
    claim_free(c);
    slice_free(s);
}
END_TEST

/* Errors upstream returns from Allocate: a missing class, more than
 * AllocationResultsMaxSize devices, a duplicate device name (an invalid
 * pool, reported when nothing else fits). */
START_TEST(test_errors)
{
    static const dev_spec_t dup[] = {{"gpu-0", "a100", "pci-a", 40},
                                     {"gpu-0", "a100", "pci-a", 40}};
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 33, NULL);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 8);
    dra_slice_t *bad = slice("s", "node-1", "node-1", 1, 1, dup, 2);
    const dra_slice_t *ss[] = {s};
    const dra_slice_t *bs[] = {bad};
    dra_alloc_out_t out;
    char err[512];
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_ERROR);
    ck_assert_str_eq(err, "claim default/c1: number of requested devices 33 "
                          "exceeds the claim limit of 32");
    c->requests[0].exactly.count = 1;
    c->requests[0].exactly.class_name = I("fpga.example.com");
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_ERROR);
    ck_assert_msg(strstr(err, "could not retrieve device class "
                              "fpga.example.com") != NULL,
                  "%s", err);
    c->requests[0].exactly.class_name = I("gpu.example.com");
    ck_assert_int_eq(run(cs, 1, bs, 1, &out, err, sizeof err),
                     DRA_ALLOC_NODE_FAILED);
    ck_assert_str_eq(err, "invalid resource pools were encountered");
    claim_free(c);
    slice_free(s);
    slice_free(bad);
}
END_TEST

/* A CEL runtime error is an allocation error naming the class, selector
 * and device (selectorsMatch). */
START_TEST(test_cel_runtime_error)
{
    dra_selector_t *missing = sel(
        "device.attributes[\"gpu.example.com\"].vendor == \"x\"");
    dra_claim_t *c = claim1("c1", DRA_MODE_EXACT, 1, missing);
    const dra_claim_t *cs[] = {c};
    dra_slice_t *s = slice("s", "node-1", "node-1", 1, 1, eight, 1);
    const dra_slice_t *ss[] = {s};
    dra_alloc_out_t out;
    char err[512];
    ck_assert_int_eq(run(cs, 1, ss, 1, &out, err, sizeof err),
                     DRA_ALLOC_ERROR);
    ck_assert_msg(strstr(err, "claim default/c1: selector #0 on device "
                              "gpu.example.com/node-1/gpu-0: CEL runtime "
                              "error: ") != NULL,
                  "%s", err);
    claim_free(c);
    sel_free(missing);
    slice_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dra_alloc");
    TCase *tc = tcase_create("allocator");
    SRunner *sr;
    int failed, i;
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_one_gpu_per_pod);
    tcase_add_test(tc, test_request_selector);
    tcase_add_test(tc, test_two_claims);
    tcase_add_test(tc, test_match_attribute);
    tcase_add_test(tc, test_first_available);
    tcase_add_test(tc, test_pool_generations);
    tcase_add_test(tc, test_all_mode);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_cel_runtime_error);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (i = 0; i < n_strs; i++)
        free(strs[i]);
    return failed == 0 ? 0 : 1;
}
