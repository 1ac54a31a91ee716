/* The embedded API's declared resources, pure parts:
 * - JSON merge patch (RFC 7386) as applied to the objects: the RFC's own
 *   examples (its appendix A), a null deleting a key (where jansson's
 *   json_object_update_recursive would store the null), nested nulls in a
 *   new member dropped, arrays replaced whole, a non-object patch or
 *   target;
 * - JSON patch (RFC 6902): RFC 6902's appendix A examples and failures;
 * - the labelSelector query parameter: URL decoding, each requirement
 *   form, and malformed selectors. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ksched/helpers.h"
#include "server/json_patch.h"
#include "server/label_query.h"
#include "server/merge_patch.h"

/* merge(target, patch) equals want (all JSON texts; target "" absent). */
static void check_patch(const char *target, const char *patch,
                        const char *want)
{
    json_t *t = target[0] ? json_loads(target, JSON_DECODE_ANY, NULL) : NULL;
    json_t *p = json_loads(patch, JSON_DECODE_ANY, NULL);
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
    json_t *got;
    char *gt;
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(w);
    got = ks_merge_patch(t, p);
    ck_assert_ptr_nonnull(got);
    gt = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    ck_assert_msg(json_equal(got, w), "merge(%s, %s) = %s, want %s", target,
                  patch, gt, want);
    free(gt);
    json_decref(got);
    json_decref(t);
    json_decref(p);
    json_decref(w);
}

START_TEST(rfc7386_appendix_a)
{
    check_patch("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    check_patch("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    check_patch("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    check_patch("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    check_patch("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    check_patch("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    check_patch("{\"a\":{\"b\":\"c\"}}",
                "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}");
    check_patch("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    check_patch("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
    check_patch("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
    check_patch("{\"a\":\"foo\"}", "null", "null");
    check_patch("{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
    check_patch("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    check_patch("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
    check_patch("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}",
                "{\"a\":{\"bb\":{}}}");
}
END_TEST

START_TEST(kubernetes_shapes)
{
    /* VolumeBinding's claim patch: an annotation added beside others,
     * the resourceVersion precondition taken over */
    check_patch("{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"3\","
                "\"annotations\":{\"x\":\"1\"}},\"spec\":{\"a\":[1,2]}}",
                "{\"metadata\":{\"resourceVersion\":\"3\",\"annotations\":"
                "{\"volume.kubernetes.io/selected-node\":\"n1\"}}}",
                "{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"3\","
                "\"annotations\":{\"x\":\"1\",\"volume.kubernetes.io/"
                "selected-node\":\"n1\"}},\"spec\":{\"a\":[1,2]}}");
    /* a label removed, a list replaced, a nested null in a new map
     * dropped, a whole map removed */
    check_patch("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},"
                "\"spec\":{\"modes\":[\"RWO\",\"RWX\"],\"x\":{\"y\":1}}}",
                "{\"metadata\":{\"labels\":{\"a\":null}},\"spec\":{\"modes\":"
                "[\"RWO\"],\"new\":{\"k\":null,\"v\":2},\"x\":null}}",
                "{\"metadata\":{\"labels\":{\"b\":\"2\"}},\"spec\":{\"modes\":"
                "[\"RWO\"],\"new\":{\"v\":2}}}");
    /* an absent target */
    check_patch("", "{\"a\":{\"b\":null,\"c\":1}}", "{\"a\":{\"c\":1}}");
}
END_TEST

/* The patch is only read: merging it twice gives the same result. */
START_TEST(patch_not_changed)
{
    json_t *p = json_loads("{\"a\":{\"b\":null,\"c\":[1]}}", 0, NULL);
    json_t *t1 = json_loads("{\"a\":{\"b\":1}}", 0, NULL);
    json_t *t2 = json_object();
    json_t *copy = json_deep_copy(p), *r1, *r2;
    r1 = ks_merge_patch(t1, p);
    r2 = ks_merge_patch(t2, p);
    ck_assert(json_equal(p, copy));
    ck_assert(json_equal(r1, r2));
    json_decref(r1);
    json_decref(r2);
    json_decref(t1);
    json_decref(t2);
    json_decref(p);
    json_decref(copy);
}
END_TEST

/* apply(doc, ops) equals want ("" for: fails). */
static void check_jp(const char *doc, const char *ops, const char *want)
{
    json_t *d = json_loads(doc, JSON_DECODE_ANY, NULL);
    json_t *o = json_loads(ops, 0, NULL);
    char err[512] = "";
    int rc;
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(o);
    rc = ks_json_patch(&d, o, err, sizeof err);
    if (want[0] == '\0') {
        ck_assert_msg(rc == -1 && err[0], "%s on %s should fail", ops, doc);
    } else {
        json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
        char *got = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_msg(rc == 0 && json_equal(d, w), "%s on %s: %s (%s), want %s",
                      ops, doc, got, err, want);
        free(got);
        json_decref(w);
    }
    json_decref(d);
    json_decref(o);
}

START_TEST(rfc6902_appendix_a)
{
    check_jp("{\"foo\":\"bar\"}",
             "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
             "{\"baz\":\"qux\",\"foo\":\"bar\"}");
    check_jp("{\"foo\":[\"bar\",\"baz\"]}",
             "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
             "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
    check_jp("{\"baz\":\"qux\",\"foo\":\"bar\"}",
             "[{\"op\":\"remove\",\"path\":\"/baz\"}]", "{\"foo\":\"bar\"}");
    check_jp("{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
             "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
             "{\"foo\":[\"bar\",\"baz\"]}");
    check_jp("{\"baz\":\"qux\",\"foo\":\"bar\"}",
             "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
             "{\"baz\":\"boo\",\"foo\":\"bar\"}");
    check_jp("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":"
             "{\"corge\":\"grault\"}}",
             "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":"
             "\"/qux/thud\"}]",
             "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\","
             "\"thud\":\"fred\"}}");
    check_jp("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
             "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
             "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
    check_jp("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
             "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
             "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
             "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
    check_jp("{\"baz\":\"qux\"}",
             "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", "");
    check_jp("{\"foo\":\"bar\"}",
             "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":"
             "{}}}]",
             "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}");
    check_jp("{\"foo\":\"bar\"}",
             "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", "");
    check_jp("{\"/\":9,\"~1\":10}",
             "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10},"
             "{\"op\":\"copy\",\"from\":\"/~1\",\"path\":\"/c\"}]",
             "{\"/\":9,\"~1\":10,\"c\":9}");
    check_jp("{\"foo\":[\"bar\"]}",
             "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
             "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
    check_jp("{\"foo\":[1]}",
             "[{\"op\":\"add\",\"path\":\"/foo/01\",\"value\":2}]", "");
    check_jp("{\"foo\":[1]}",
             "[{\"op\":\"replace\",\"path\":\"/foo/1\",\"value\":2}]", "");
    check_jp("{\"a\":{\"b\":1}}",
             "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b\"}]", "");
    check_jp("{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", "");
    check_jp("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":"
             "{\"b\":2}}]", "{\"b\":2}");
}
END_TEST

static int selects(const char *selector, const char *const *kv, uint32_t n)
{
    ks_label_t items[8];
    ks_labels_t ls = {items, n};
    ks_label_query_t q;
    char err[256];
    uint32_t i;
    int r;
    for (i = 0; i < n; i++) {
        items[i].key = kv[2 * i];
        items[i].value = kv[2 * i + 1];
    }
    ck_assert_msg(ks_label_query_parse(selector, &q, err, sizeof err) == 0,
                  "%s: %s", selector, err);
    r = ks_selector_matches(&q.sel, &ls);
    ks_label_query_free(&q);
    return r;
}

START_TEST(label_selectors)
{
    static const char *const db[] = {"app", "db", "tier", "back"};
    static const char *const web[] = {"app", "web"};
    ks_label_query_t q;
    char err[256], *v;
    ck_assert(selects("", db, 2));
    ck_assert(selects("app=db", db, 2));
    ck_assert(selects("app==db,tier", db, 2));
    ck_assert(!selects("app=db,tier", web, 1));
    ck_assert(selects("app!=db", web, 1));
    ck_assert(selects("app!=db", NULL, 0)); /* absent: not equal */
    ck_assert(selects("!tier", web, 1));
    ck_assert(!selects("!tier", db, 2));
    ck_assert(selects("app in (web, db)", db, 2));
    ck_assert(selects(" app in (web,db) , tier notin (front)", db, 2));
    ck_assert(!selects("app notin (web,db)", db, 2));
    ck_assert(selects("app notin (web,db)", NULL, 0));
    ck_assert_int_eq(ks_label_query_parse("app in web", &q, err, sizeof err),
                     -1);
    ck_assert_int_eq(ks_label_query_parse("=x", &q, err, sizeof err), -1);
    ck_assert_int_eq(ks_label_query_parse("a=(b", &q, err, sizeof err), -1);
    ck_assert_int_eq(ks_label_query_parse("a in (b", &q, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "unable to parse requirement"));
    v = ks_query_value("limit=5&labelSelector=app%3Ddb%2Ctier+in+(x)&x=1",
                       "labelSelector");
    ck_assert_str_eq(v, "app=db,tier in (x)");
    free(v);
    ck_assert_ptr_null(ks_query_value("a=1", "labelSelector"));
    v = ks_query_value("labelSelector=%zz%4", "labelSelector");
    ck_assert_str_eq(v, "%zz%4");
    free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("objects");
    TCase *t = tcase_create("core");
    SRunner *sr;
    int failed;
    tcase_add_test(t, rfc7386_appendix_a);
    tcase_add_test(t, kubernetes_shapes);
    tcase_add_test(t, patch_not_changed);
    tcase_add_test(t, label_selectors);
    tcase_add_test(t, rfc6902_appendix_a);
    suite_add_tcase(s, t);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
