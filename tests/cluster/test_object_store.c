/*
 * The stores of declared cluster objects and their field-path views
 * (cluster/object_store.h, cluster/object_view.h; SDK ABI 1.3).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/intern.h"
#include "cluster/object_store.h"
#include "cluster/object_view.h"

static const ks_resource_ref_t PVC = {"", "v1", "persistentvolumeclaims",
                                      "PersistentVolumeClaim"};
static const ks_resource_ref_t SC = {"storage.k8s.io", "v1",
                                     "storageclasses", "StorageClass"};

static const char *PVC_JSON =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
    "\"metadata\":{\"name\":\"data\",\"namespace\":\"default\","
    "\"uid\":\"u-1\",\"labels\":{\"app\":\"web\","
    "\"topology.kubernetes.io/zone\":\"z1\"}},"
    "\"spec\":{\"storageClassName\":\"fast\",\"accessModes\":"
    "[\"ReadWriteOnce\",\"ReadOnlyMany\"],\"volumeName\":null,"
    "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},"
    "\"weird\":{\"a.b\":{\"c\\\"d\":7}},\"count\":3,\"ratio\":0.5,"
    "\"flag\":true}}";

static int put(ks_store_t *s, const char *json, ks_error_t *err)
{
    return ks_store_put_text(s, json, strlen(json), "t", err);
}

static ks_store_t *fresh(const ks_resource_ref_t *ref)
{
    ks_store_t *s = NULL;
    ks_error_t err;
    ks_stores_reset();
    ck_assert_int_eq(ks_store_register(ref, &s, &err), 0);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(test_register_one_store_per_resource)
{
    ks_store_t *a = fresh(&PVC), *b = NULL, *c = NULL;
    ks_resource_ref_t other = PVC, bad = PVC;
    ks_error_t err;
    ck_assert_int_eq(ks_store_register(&PVC, &b, &err), 0);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(ks_store_register(&SC, &c, &err), 0);
    ck_assert_ptr_ne(a, c);
    ck_assert_ptr_eq(ks_store_find("", "v1", "persistentvolumeclaims"), a);
    ck_assert_ptr_eq(ks_store_find(NULL, "v1", "persistentvolumeclaims"), a);
    ck_assert_ptr_null(ks_store_find("", "v2", "persistentvolumeclaims"));
    ck_assert_ptr_eq(ks_store_find_kind("v1", "PersistentVolumeClaim"), a);
    ck_assert_ptr_eq(ks_store_find_kind("storage.k8s.io/v1", "StorageClass"),
                     c);
    ck_assert_ptr_null(ks_store_find_kind("other.io/v1", "StorageClass"));
    ck_assert_ptr_null(ks_store_find_kind("v1", "StorageClass"));
    ck_assert_ptr_eq(ks_store_next(NULL), a);
    ck_assert_ptr_eq(ks_store_next(a), c);
    ck_assert_ptr_null(ks_store_next(c));
    /* the same resource with another kind */
    other.kind = "Claim";
    ck_assert_int_eq(ks_store_register(&other, &b, &err), KS_ECONFLICT);
    ck_assert_msg(strstr(err.msg, "kind Claim") != NULL, "%s", err.msg);
    /* incomplete references */
    bad.kind = "";
    ck_assert_int_eq(ks_store_register(&bad, &b, &err), KS_EINVAL);
    ck_assert_str_eq(err.msg, "kind is empty");
    bad = PVC;
    bad.group = NULL;
    ck_assert_int_eq(ks_store_register(&bad, &b, &err), KS_EINVAL);
    bad = PVC;
    bad.resource = "a/b";
    ck_assert_int_eq(ks_store_register(&bad, &b, &err), KS_EINVAL);
    ks_stores_reset();
}
END_TEST

static int count_cb(const ks_object_t *o, void *ud)
{
    (void)o;
    (*(int *)ud)++;
    return 0;
}

static int stop_cb(const ks_object_t *o, void *ud)
{
    (void)o;
    (*(int *)ud)++;
    return 1;
}

START_TEST(test_put_get_replace_delete_list)
{
    ks_store_t *s = fresh(&PVC);
    const ks_object_t *o, *o2;
    ks_error_t err;
    ks_requirement_t req;
    const char *vals[1];
    ks_label_selector_t sel;
    int n = 0;
    ck_assert_int_eq(ks_store_put_text(s, PVC_JSON, strlen(PVC_JSON), "t",
                                       &err), 0);
    ck_assert_int_eq(put(s, "{\"metadata\":{\"name\":\"logs\","
                            "\"namespace\":\"prod\"}}", &err), 0);
    ck_assert_uint_eq(ks_store_count(s), 2);
    o = ks_store_get(s, "default", "data");
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(o->name, "data");
    ck_assert_str_eq(o->ns, "default");
    ck_assert_str_eq(o->uid, "u-1");
    ck_assert_uint_eq(o->labels.n, 2);
    ck_assert_ptr_eq(o->labels.items[0].key,
                     ks_intern_str(ks_intern_global(), "app"));
    ck_assert_ptr_null(ks_store_get(s, "prod", "data"));
    {
        /* kind and apiVersion set from the store when absent */
        const ks_object_t *logs = ks_store_get(s, "prod", "logs");
        const char *k = NULL;
        ck_assert_int_eq(ks_field_string(logs->tree, "kind", &k),
                         KS_FIELD_OK);
        ck_assert_str_eq(k, "PersistentVolumeClaim");
        ck_assert_int_eq(ks_field_string(logs->tree, "apiVersion", &k),
                         KS_FIELD_OK);
        ck_assert_str_eq(k, "v1");
    }
    ck_assert_ptr_null(ks_store_get(s, NULL, "data"));
    ck_assert_ptr_null(ks_store_get(s, "default", NULL));
    /* list: every namespace, one namespace, a selector, early stop */
    ck_assert_uint_eq(ks_store_list(s, NULL, NULL, count_cb, &n), 2);
    ck_assert_int_eq(n, 2);
    n = 0;
    ck_assert_uint_eq(ks_store_list(s, "prod", NULL, count_cb, &n), 1);
    vals[0] = "web";
    req.key = "app";
    req.op = KS_OP_IN;
    req.values = vals;
    req.n_values = 1;
    sel.reqs = &req;
    sel.n = 1;
    n = 0;
    ck_assert_uint_eq(ks_store_list(s, NULL, &sel, count_cb, &n), 1);
    vals[0] = "db";
    ck_assert_uint_eq(ks_store_list(s, NULL, &sel, count_cb, &n), 0);
    n = 0;
    ck_assert_uint_eq(ks_store_list(s, NULL, NULL, stop_cb, &n), 1);
    ck_assert_int_eq(n, 1);
    /* an update replaces the object whole */
    ck_assert_int_eq(put(s, "{\"metadata\":{\"name\":\"data\","
                            "\"namespace\":\"default\"},\"spec\":{}}",
                         &err), 0);
    ck_assert_uint_eq(ks_store_count(s), 2);
    o2 = ks_store_get(s, "default", "data");
    ck_assert_uint_eq(o2->labels.n, 0);
    ck_assert_int_eq(ks_field_type(o2->tree, "spec.storageClassName"),
                     KS_FIELD_ABSENT);
    /* delete */
    ck_assert_int_eq(ks_store_delete(s, "default", "data"), 0);
    ck_assert_int_eq(ks_store_delete(s, "default", "data"), KS_ENOTFOUND);
    ck_assert_uint_eq(ks_store_count(s), 1);
    ks_store_clear(s);
    ck_assert_uint_eq(ks_store_count(s), 0);
    ks_stores_reset();
}
END_TEST

/* store_version (SDK ABI 1.5): every add, update, delete and clear
 * changes it; reads and a failed put do not. */
START_TEST(test_version_changes_with_the_objects)
{
    ks_store_t *s = fresh(&PVC);
    ks_error_t err;
    uint64_t v0 = ks_store_version(s), v1, v2, v3;
    ck_assert_int_eq(put(s, PVC_JSON, &err), 0);
    v1 = ks_store_version(s);
    ck_assert_uint_ne(v1, v0);
    (void)ks_store_get(s, "default", "data");
    ck_assert_uint_eq(ks_store_version(s), v1);
    ck_assert_int_ne(put(s, "{", &err), 0);
    ck_assert_uint_eq(ks_store_version(s), v1);
    ck_assert_int_eq(put(s, PVC_JSON, &err), 0); /* an update */
    v2 = ks_store_version(s);
    ck_assert_uint_ne(v2, v1);
    ck_assert_int_eq(ks_store_delete(s, "default", "data"), 0);
    v3 = ks_store_version(s);
    ck_assert_uint_ne(v3, v2);
    ck_assert_int_eq(put(s, PVC_JSON, &err), 0);
    ks_store_clear(s);
    ck_assert_uint_ne(ks_store_version(s), v3);
    ck_assert_uint_eq(ks_store_version(NULL), 0);
}
END_TEST

START_TEST(test_put_refuses_bad_objects)
{
    ks_store_t *s = fresh(&SC);
    ks_error_t err;
    ck_assert_int_eq(ks_store_put_text(s, "[1]", 3, "f.yaml: items[0]", &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "f.yaml: items[0]: StorageClass: expected an "
                              "object");
    ck_assert_int_eq(ks_store_put_text(s, "{\"metadata\":{}}", 15, "x", &err),
                     KS_ESCHEMA);
    ck_assert_str_eq(err.msg, "x: StorageClass: metadata.name is required");
    ck_assert_int_eq(ks_store_put_text(s, "{", 1, "x", &err), KS_EPARSE);
    ck_assert_uint_eq(ks_store_count(s), 0);
    /* cluster-scoped: namespace "" */
    ck_assert_int_eq(put(s, "{\"metadata\":{\"name\":\"fast\"}}", &err),
                     0);
    ck_assert_ptr_nonnull(ks_store_get(s, NULL, "fast"));
    ck_assert_ptr_nonnull(ks_store_get(s, "", "fast"));
    ks_stores_reset();
}
END_TEST

static int kv_cb(const char *k, const char *v, void *ud)
{
    char *buf = ud;
    size_t n = strlen(buf);
    snprintf(buf + n, 256 - n, "%s=%s;", k, v ? v : "(nil)");
    return 0;
}

START_TEST(test_field_paths)
{
    json_t *j = json_loads(PVC_JSON, 0, NULL);
    ks_otree_t *root = ks_otree_from_json(j, 64);
    const ks_onode_t *v;
    const char *str = "untouched";
    int64_t i = -1;
    int b = -1;
    uint32_t len = 0;
    char buf[256] = "";
    ck_assert_ptr_nonnull(root);
    /* strings, arrays, quoted keys */
    ck_assert_int_eq(ks_field_string(root, "spec.storageClassName", &str),
                     KS_FIELD_OK);
    ck_assert_str_eq(str, "fast");
    ck_assert_int_eq(ks_field_string(root, "spec.accessModes[1]", &str),
                     KS_FIELD_OK);
    ck_assert_str_eq(str, "ReadOnlyMany");
    ck_assert_int_eq(
        ks_field_string(root,
                        "metadata.labels[\"topology.kubernetes.io/zone\"]",
                        &str),
        KS_FIELD_OK);
    ck_assert_str_eq(str, "z1");
    ck_assert_int_eq(ks_field_int(root, "spec.weird[\"a.b\"][\"c\\\"d\"]", &i),
                     KS_FIELD_OK);
    ck_assert_int_eq(i, 7);
    ck_assert_int_eq(ks_field_int(root, "spec[\"count\"]", &i), KS_FIELD_OK);
    ck_assert_int_eq(i, 3);
    ck_assert_int_eq(ks_field_bool(root, "spec.flag", &b), KS_FIELD_OK);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(ks_field_len(root, "spec.accessModes", &len),
                     KS_FIELD_OK);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(ks_field_len(root, "metadata.labels", &len),
                     KS_FIELD_OK);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(ks_field_lookup(root, "", &v), KS_FIELD_OK);
    ck_assert_ptr_eq(v, ks_otree_root(root));
    json_decref(j);
    /* missing: absent, null, out of range, through a scalar */
    str = "untouched";
    ck_assert_int_eq(ks_field_string(root, "spec.volumeName", &str),
                     KS_FIELD_MISSING);
    ck_assert_int_eq(ks_field_string(root, "spec.nope", &str),
                     KS_FIELD_MISSING);
    ck_assert_int_eq(ks_field_string(root, "spec.accessModes[2]", &str),
                     KS_FIELD_MISSING);
    ck_assert_int_eq(ks_field_string(root, "spec.storageClassName.x", &str),
                     KS_FIELD_MISSING);
    ck_assert_int_eq(ks_field_string(root, "spec[0]", &str),
                     KS_FIELD_MISSING);
    ck_assert_str_eq(str, "untouched");
    /* wrong types */
    ck_assert_int_eq(ks_field_string(root, "spec.count", &str),
                     KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(ks_field_int(root, "spec.ratio", &i),
                     KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(ks_field_int(root, "spec.storageClassName", &i),
                     KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(ks_field_bool(root, "spec.count", &b),
                     KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(ks_field_len(root, "spec.count", &len),
                     KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(ks_field_map_iterate(root, "spec.accessModes", kv_cb,
                                          buf), KS_FIELD_WRONG_TYPE);
    ck_assert_int_eq(i, 3);
    /* malformed paths, reported even past a missing segment */
    {
        static const char *const bad[] = {
            ".spec", "spec.", "spec..x", "spec[", "spec[]", "spec[x]",
            "spec[-1]", "spec[\"a]", "spec[\"a\"", "spec[0]x", "spec.[0]",
            "nope.a..b", "spec[\"a\\n\"]",
            "spec[99999999999999999999999999]"};
        size_t k;
        for (k = 0; k < sizeof bad / sizeof bad[0]; k++)
            ck_assert_msg(ks_field_string(root, bad[k], &str) ==
                              KS_FIELD_BAD_PATH,
                          "path %s not refused", bad[k]);
        ck_assert_int_eq(ks_field_type(root, "a..b"), KS_FIELD_INVALID);
    }
    /* types */
    ck_assert_int_eq(ks_field_type(root, "spec"), KS_FIELD_MAP);
    ck_assert_int_eq(ks_field_type(root, "spec.accessModes"),
                     KS_FIELD_ARRAY);
    ck_assert_int_eq(ks_field_type(root, "spec.count"), KS_FIELD_INT);
    ck_assert_int_eq(ks_field_type(root, "spec.ratio"), KS_FIELD_REAL);
    ck_assert_int_eq(ks_field_type(root, "spec.flag"), KS_FIELD_BOOL);
    ck_assert_int_eq(ks_field_type(root, "kind"), KS_FIELD_STRING);
    ck_assert_int_eq(ks_field_type(root, "spec.volumeName"), KS_FIELD_ABSENT);
    /* map iteration in the object's order; non-strings as NULL */
    ck_assert_int_eq(ks_field_map_iterate(root, "metadata.labels", kv_cb,
                                          buf), KS_FIELD_OK);
    ck_assert_str_eq(buf, "app=web;topology.kubernetes.io/zone=z1;");
    buf[0] = '\0';
    ck_assert_int_eq(ks_field_map_iterate(root, "spec.resources", kv_cb, buf),
                     KS_FIELD_OK);
    ck_assert_str_eq(buf, "requests=(nil);");
    ck_assert_int_eq(ks_field_map_iterate(root, "metadata.annotations",
                                          kv_cb, buf), KS_FIELD_MISSING);
    /* no tree */
    ck_assert_int_eq(ks_field_string(NULL, "a", &str), KS_FIELD_MISSING);
    ks_otree_free(root);
}
END_TEST

/* The compact tree: one block, depth limit, scalars and order kept. */
START_TEST(test_compact_tree)
{
    json_t *j = json_loads("{\"a\":[1,2.5,\"x\",true,false,null,{}],"
                           "\"b\":{\"c\":{\"d\":-9007199254740993}}}",
                           0, NULL);
    ks_otree_t *t = ks_otree_from_json(j, 64);
    const ks_onode_t *a, *n;
    int64_t i = 0;
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_null(ks_otree_from_json(j, 2)); /* 4 levels deep */
    {
        ks_otree_t *t3 = ks_otree_from_json(j, 3);
        ck_assert_ptr_nonnull(t3);
        ks_otree_free(t3);
    }
    a = ks_onode_get(t, ks_otree_root(t), "a");
    ck_assert_uint_eq(a->type, KS_ON_ARRAY);
    ck_assert_uint_eq(a->v.kids.n, 7);
    ck_assert_uint_eq(ks_onode_at(t, a, 0)->type, KS_ON_INT);
    ck_assert(ks_onode_at(t, a, 1)->v.r == 2.5);
    ck_assert_str_eq(ks_onode_str(t, ks_onode_at(t, a, 2)), "x");
    ck_assert_uint_eq(ks_onode_at(t, a, 3)->type, KS_ON_TRUE);
    ck_assert_uint_eq(ks_onode_at(t, a, 5)->type, KS_ON_NULL);
    ck_assert_uint_eq(ks_onode_at(t, a, 6)->v.kids.n, 0);
    ck_assert_ptr_null(ks_onode_at(t, a, 7));
    n = ks_onode_at(t, ks_otree_root(t), 1);
    ck_assert_str_eq(ks_onode_key(t, n), "b");
    ck_assert_int_eq(ks_field_int(t, "b.c.d", &i), KS_FIELD_OK);
    ck_assert_int_eq(i, -9007199254740993LL);
    ck_assert_int_eq(ks_field_type(t, "a[5]"), KS_FIELD_ABSENT);
    /* the whole tree is one allocation, far below jansson's */
    ck_assert_uint_lt(ks_otree_bytes(t), 400);
    ks_otree_free(t);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("object-store");
    TCase *tc = tcase_create("object-store");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, test_register_one_store_per_resource);
    tcase_add_test(tc, test_put_get_replace_delete_list);
    tcase_add_test(tc, test_put_refuses_bad_objects);
    tcase_add_test(tc, test_version_changes_with_the_objects);
    tcase_add_test(tc, test_field_paths);
    tcase_add_test(tc, test_compact_tree);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
