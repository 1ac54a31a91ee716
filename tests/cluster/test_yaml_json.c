/* A YAML node written out as JSON (base/yaml_json.h), and the node
 * object kept as read (cluster/objects.h, ks_node_raw_json). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/yaml_doc.h"
#include "base/yaml_json.h"
#include "cluster/objects.h"
#include "cluster/objects_json.h"

/* The JSON of `text`'s root (load must succeed); rc is the renderer's. */
static char *to_json(const char *text, int max_depth, size_t max_len, int *rc)
{
    ks_yaml_problem_t p;
    yaml_document_t doc;
    ks_buf_t b = {0};
    ck_assert_int_eq(ks_yaml_load_string(text, strlen(text), &doc, &p), 0);
    *rc = ks_yaml_to_json(&doc, yaml_document_get_root_node(&doc), &b,
                          max_depth, max_len);
    yaml_document_delete(&doc);
    return ks_buf_steal(&b, NULL);
}

START_TEST(test_scalars_typed_as_core_schema)
{
    static const struct {
        const char *yaml, *json;
    } cases[] = {
        {"v: true", "{\"v\":true}"},
        {"v: False", "{\"v\":false}"},
        {"v: yes", "{\"v\":\"yes\"}"},
        {"v: 'true'", "{\"v\":\"true\"}"},
        {"v: ~", "{\"v\":null}"},
        {"v:", "{\"v\":null}"},
        {"v: 42", "{\"v\":42}"},
        {"v: +7", "{\"v\":7}"},
        {"v: 007", "{\"v\":7}"},
        {"v: 0x1F", "{\"v\":31}"},
        {"v: 0o17", "{\"v\":15}"},
        {"v: \"5\"", "{\"v\":\"5\"}"},
        {"v: !!str 5", "{\"v\":\"5\"}"},
        {"v: 1.5", "{\"v\":1.5}"},
        {"v: -2.5E-3", "{\"v\":-2.5E-3}"},
        {"v: 1.", "{\"v\":1}"},
        {"v: .5", "{\"v\":0.5}"},
        {"v: .inf", "{\"v\":null}"},
        {"v: .nan", "{\"v\":null}"},
        {"v: 99999999999999999999", "{\"v\":99999999999999999999}"},
        {"v: 8Gi", "{\"v\":\"8Gi\"}"},
        {"v: \"a\\\"b\\\\c\\n\\t\\u0001\"", "{\"v\":\"a\\\"b\\\\c\\n\\t\\u0001\"}"},
        {"v: [1, x, {a: [], b: {}}]", "{\"v\":[1,\"x\",{\"a\":[],\"b\":{}}]}"},
        {"1: one\nnull: two", "{\"1\":\"one\",\"null\":\"two\"}"},
        {"v: |\n  two\n  lines\n", "{\"v\":\"two\\nlines\\n\"}"},
        {"a: &x {k: 1}\nb: *x", "{\"a\":{\"k\":1},\"b\":{\"k\":1}}"},
        {"? [complex]\n: skipped\nkept: 1", "{\"kept\":1}"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        char *got = to_json(cases[i].yaml, 64, 1 << 20, &rc);
        ck_assert_int_eq(rc, 0);
        ck_assert_msg(strcmp(got, cases[i].json) == 0, "%s: got %s, want %s",
                      cases[i].yaml, got, cases[i].json);
        free(got);
    }
}
END_TEST

START_TEST(test_limits)
{
    int rc;
    char *s = to_json("a: {b: {c: {d: 1}}}", 3, 1 << 20, &rc);
    ck_assert_int_eq(rc, -1); /* a, b, c, d: four levels below the root */
    free(s);
    s = to_json("a: {b: {c: {d: 1}}}", 4, 1 << 20, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(s, "{\"a\":{\"b\":{\"c\":{\"d\":1}}}}");
    free(s);
    /* aliases make a short document long: the length cap stops it */
    s = to_json("a: &a [x, x, x, x, x, x, x, x]\n"
                "b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n",
                64, 1000, &rc);
    ck_assert_int_eq(rc, -1);
    free(s);
}
END_TEST

static const char *node_yaml =
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n"
    "  name: n1\n"
    "  annotations: {note: \"0\"}\n"
    "status:\n"
    "  allocatable: {cpu: \"2\"}\n"
    "  nodeInfo: {kubeletVersion: v1.30.1}\n"
    "  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}\n";

static ks_node_t *load_node(ks_intern_t *in)
{
    ks_manifest_t m;
    ks_error_t err = {0};
    ks_node_t *n;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(ks_manifest_load_string(&m, "c.yaml", node_yaml,
                                             strlen(node_yaml), in, NULL,
                                             &err),
                     0);
    ck_assert_uint_eq(m.n_nodes, 1);
    n = m.nodes[0];
    m.nodes[0] = NULL;
    ks_manifest_free(&m);
    return n;
}

START_TEST(test_node_keeps_the_object)
{
    ks_intern_t *in = ks_intern_new();
    ks_node_t *a, *b, *c;
    json_t *obj;
    ks_error_t err = {0};
    size_t len;
    const char *raw;

    ks_node_keep_raw(0);
    a = load_node(in);
    ck_assert_ptr_null(ks_node_raw_json(a, &len)); /* off: nothing kept */
    ck_assert_uint_eq(len, 0);

    ks_node_keep_raw(1);
    ck_assert_int_eq(ks_node_keeps_raw(), 1);
    b = load_node(in);
    raw = ks_node_raw_json(b, &len);
    ck_assert_str_eq(raw,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                     "{\"name\":\"n1\",\"annotations\":{\"note\":\"0\"}},"
                     "\"status\":{\"allocatable\":{\"cpu\":\"2\"},"
                     "\"nodeInfo\":{\"kubeletVersion\":\"v1.30.1\"},"
                     "\"daemonEndpoints\":{\"kubeletEndpoint\":"
                     "{\"Port\":10250}}}}");
    ck_assert_uint_eq(len, strlen(raw));

    /* JSON (the API server, the embedded API) comes back as it was */
    obj = json_loads(raw, 0, NULL);
    ck_assert_ptr_nonnull(obj);
    json_object_set_new(json_object_get(obj, "metadata"), "annotations",
                        json_pack("{s:s}", "note", "1"));
    ck_assert_int_eq(ks_node_from_json("node n1", obj, in, &c, &err), 0);
    ck_assert_int_eq(ks_node_raw_differs(b, c), 1);
    ck_assert_int_eq(ks_node_raw_differs(a, c), 1); /* none vs some */
    ck_assert_int_eq(ks_node_raw_differs(b, b), 0);
    {
        char *want = json_dumps(obj, JSON_COMPACT);
        ck_assert_str_eq(ks_node_raw_json(c, NULL), want);
        /* an update that only changes the object hands its text over */
        ks_node_raw_move(b, c);
        ck_assert_str_eq(ks_node_raw_json(b, NULL), want);
        ck_assert_ptr_null(ks_node_raw_json(c, NULL));
        free(want);
    }
    json_decref(obj);
    ks_node_free(a);
    ks_node_free(b);
    ks_node_free(c);
    ks_node_keep_raw(0);
    ks_intern_free(in);
}
END_TEST

/* A pod as an API server of v1.34 or later returns it (JSON, cluster
 * mode and the embedded API): spec.resourceClaims and the claims the
 * resourceclaim controller made, in status.resourceClaimStatuses (SDK
 * ABI 1.5). */
START_TEST(test_pod_claims_from_json)
{
    ks_intern_t *in = ks_intern_new();
    ks_error_t err = {0};
    ks_pod_t *pod = NULL;
    json_t *obj = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
        "\"metadata\":{\"name\":\"trainer-0\",\"namespace\":\"ml\","
        "\"uid\":\"0b2d\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"cuda\","
        "\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}],"
        "\"resourceClaims\":[{\"name\":\"gpu\","
        "\"resourceClaimTemplateName\":\"one-gpu\"},"
        "{\"name\":\"nic\",\"resourceClaimName\":\"shared-nic\"}]},"
        "\"status\":{\"phase\":\"Pending\",\"resourceClaimStatuses\":"
        "[{\"name\":\"gpu\",\"resourceClaimName\":\"trainer-0-gpu-7fz2q\"}]}}",
        0, NULL);
    ck_assert_ptr_nonnull(obj);
    ck_assert_int_eq(ks_pod_from_json("pod ml/trainer-0", obj, in, &pod,
                                      &err), 0);
    ck_assert_uint_eq(pod->n_resource_claims, 2);
    ck_assert_str_eq(pod->resource_claims[0].name, "gpu");
    ck_assert_str_eq(pod->resource_claims[0].template_name, "one-gpu");
    ck_assert_int_eq(pod->resource_claims[0].has_status, 1);
    ck_assert_str_eq(pod->resource_claims[0].status_claim_name,
                     "trainer-0-gpu-7fz2q");
    ck_assert_str_eq(pod->resource_claims[1].claim_name, "shared-nic");
    ck_assert_int_eq(pod->resource_claims[1].has_status, 0);
    ks_pod_free(pod);
    json_decref(obj);
    ks_intern_free(in);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yaml-json");
    TCase *tc = tcase_create("yaml-json");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, test_scalars_typed_as_core_schema);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_node_keeps_the_object);
    tcase_add_test(tc, test_pod_claims_from_json);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
