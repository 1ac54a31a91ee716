/*
 * Extender answers read with Go's encoding/json rules: each answer type in
 * upper, lower and mixed case, repeated keys (the last wins; a map merges
 * and a null empties it), unknown keys, and Go's error texts.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_go.h"
#include "extender/extender.h"

static ks_extender_config_t cfg_names = {.node_cache_capable = 1};
static ks_extender_config_t cfg_nodes = {.node_cache_capable = 0};

/* "a,b|n1=r1,n2=r2|u=r" for a filter answer, or "ERR:<msg>". */
static void filter_str(const ks_extender_config_t *e, const char *body,
                       char *out, size_t len)
{
    ks_ext_filter_result_t r;
    char msg[1024];
    size_t i, o = 0;
    if (ks_extender_parse_filter(e, body, strlen(body), &r, msg,
                                 sizeof msg) != 0) {
        snprintf(out, len, "ERR:%s", msg);
        return;
    }
    out[0] = '\0';
    for (i = 0; i < r.n_nodes; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
                              r.nodes[i]);
    o += (size_t)snprintf(out + o, len - o, "|");
    for (i = 0; i < r.n_failed; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s=%s", i ? "," : "",
                              r.failed[i].node, r.failed[i].reason);
    o += (size_t)snprintf(out + o, len - o, "|");
    for (i = 0; i < r.n_unresolvable; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s=%s", i ? "," : "",
                              r.unresolvable[i].node,
                              r.unresolvable[i].reason);
    ks_extender_filter_result_free(&r);
}

typedef struct {
    const char *body;
    int cache;
    const char *want;
} filter_case_t;

static const filter_case_t filter_cases[] = {
    /* the Go names, as kube-scheduler's own types write them */
    {"{\"NodeNames\":[\"n1\",\"n2\"],\"FailedNodes\":{\"n3\":\"no\"}}", 1,
     "n1,n2|n3=no|"},
    /* lower case and camel case, as hand-written extenders answer */
    {"{\"nodenames\":[\"n1\"],\"failednodes\":{\"n2\":\"x\"},"
     "\"failedandunresolvablenodes\":{\"n3\":\"y\"}}",
     1, "n1|n2=x|n3=y"},
    {"{\"nodeNames\":[\"n2\"],\"failedNodes\":{\"n1\":\"a\"},"
     "\"failedAndUnresolvableNodes\":{}}",
     1, "n2|n1=a|"},
    {"{\"NODENAMES\":[\"n1\"],\"FAILEDNODES\":{\"n2\":\"b\"}}", 1, "n1|n2=b|"},
    /* Go's fold also maps U+017F (long s) to S and U+212A (Kelvin) to K */
    {"{\"NodeName\xc5\xbf\":[\"n1\"]}", 1, "n1||"},
    {"{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\"}}]}}", 0,
     "n1||"},
    {"{\"nodes\":{\"Items\":[{\"METADATA\":{\"Name\":\"n2\"}}]}}", 0,
     "n2||"},
    /* not nodeCacheCapable: Nodes is read, NodeNames ignored */
    {"{\"nodenames\":[\"n1\"],\"nodes\":{\"items\":[]}}", 0, "||"},
    /* nodeCacheCapable without NodeNames: Nodes is read */
    {"{\"nodes\":{\"items\":[{\"metadata\":{\"name\":\"n3\"}}]}}", 1,
     "n3||"},
    /* repeated keys: the last one fills the field, in document order */
    {"{\"NodeNames\":[\"n1\"],\"nodenames\":[\"n2\"]}", 1, "n2||"},
    {"{\"nodenames\":[\"n1\"],\"NodeNames\":[\"n2\"],\"nodenames\":[\"n3\"]}",
     1, "n3||"},
    {"{\"NodeNames\":[\"n1\"],\"NodeNames\":null}", 1, "||"},
    /* a map merges repeated keys; its own repeated keys take the last */
    {"{\"FailedNodes\":{\"n1\":\"a\",\"n2\":\"b\"},\"failednodes\":"
     "{\"n2\":\"c\",\"n3\":\"d\"}}",
     1, "|n1=a,n2=c,n3=d|"},
    {"{\"FailedNodes\":{\"n1\":\"a\",\"n1\":\"z\"}}", 1, "|n1=z|"},
    {"{\"FailedNodes\":{\"n1\":\"a\"},\"failedNodes\":null,"
     "\"FAILEDNODES\":{\"n2\":\"b\"}}",
     1, "|n2=b|"},
    /* unknown keys are ignored, and so is what follows the first value */
    {"{\"Unknown\":[1,{\"x\":true}],\"NodeNames\":[\"n1\"]} trailing", 1,
     "n1||"},
    /* a repeated Nodes decodes into the same NodeList: items stay */
    {"{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\"}}]},"
     "\"nodes\":{\"kind\":\"NodeList\"}}",
     0, "n1||"},
    /* a type error in any repeated key fails the answer, as in Go */
    {"{\"NodeNames\":\"n1\",\"nodenames\":[\"n1\"]}", 1,
     "ERR:json: cannot unmarshal string into Go struct field "
     "ExtenderFilterResult.NodeNames of type []string"},
    /* null answer: nothing passes, no error */
    {"null", 1, "||"},
    /* the Error field, in any case */
    {"{\"error\":\"extender is down\",\"NodeNames\":[\"n1\"]}", 1,
     "ERR:extender is down"},
    {"{\"Error\":\"\",\"NodeNames\":[\"n1\"]}", 1, "n1||"},
    /* Go's error texts */
    {"", 1, "ERR:EOF"},
    {"{\"NodeNames\":[\"n1\"", 1, "ERR:unexpected EOF"},
    {"{\"NodeNames\":[\"n1\",]}", 1,
     "ERR:invalid character ']' looking for beginning of value"},
    {"{NodeNames:[]}", 1,
     "ERR:invalid character 'N' looking for beginning of object key string"},
    {"{\"NodeNames\":\"n1\"}", 1,
     "ERR:json: cannot unmarshal string into Go struct field "
     "ExtenderFilterResult.NodeNames of type []string"},
    {"{\"nodenames\":[1]}", 1,
     "ERR:json: cannot unmarshal number into Go struct field "
     "ExtenderFilterResult.NodeNames of type string"},
    {"{\"FailedNodes\":[]}", 1,
     "ERR:json: cannot unmarshal array into Go struct field "
     "ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap"},
    {"{\"failednodes\":{\"n1\":5}}", 1,
     "ERR:json: cannot unmarshal number into Go struct field "
     "ExtenderFilterResult.FailedNodes of type string"},
    {"[]", 1,
     "ERR:json: cannot unmarshal array into Go value of type "
     "v1.ExtenderFilterResult"},
    {"{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":7}}]}}", 0,
     "ERR:json: cannot unmarshal number into Go struct field "
     "ObjectMeta.Nodes.items.metadata.name of type string"},
    {"{\"error\":tru}", 1,
     "ERR:invalid character '}' in literal true (expecting 'e')"},
};

START_TEST(filter_answers)
{
    const filter_case_t *c = &filter_cases[_i];
    char got[2048];
    filter_str(c->cache ? &cfg_names : &cfg_nodes, c->body, got, sizeof got);
    ck_assert_msg(strcmp(got, c->want) == 0, "case %d %s: got \"%s\", want "
                                             "\"%s\"",
                  _i, c->body, got, c->want);
}
END_TEST

/* --- HostPriorityList --------------------------------------------------- */

static void add(void *ud, const char *host, int64_t score)
{
    char *out = ud;
    size_t o = strlen(out);
    snprintf(out + o, 1024 - o, "%s%s=%lld", o ? "," : "", host,
             (long long)score);
}

static void prio_str(const char *body, char *out)
{
    char msg[1024];
    out[0] = '\0';
    if (ks_extender_parse_priorities(body, strlen(body), add, out, msg,
                                     sizeof msg) != 0)
        snprintf(out, 1024, "ERR:%.1000s", msg);
}

static const char *const prio_cases[][2] = {
    {"[{\"Host\":\"n1\",\"Score\":3},{\"Host\":\"n2\",\"Score\":10}]",
     "n1=3,n2=10"},
    {"[{\"host\":\"n1\",\"score\":3}]", "n1=3"},
    {"[{\"HOST\":\"n1\",\"sCoRe\":4}]", "n1=4"},
    {"[{\"host\":\"n1\",\"score\":3,\"Score\":5,\"score\":7}]", "n1=7"},
    {"[{\"host\":\"n1\",\"score\":3,\"score\":null}]", "n1=3"},
    {"[{\"host\":\"n1\",\"extra\":{}}]", "n1=0"},
    {"[null]", "=0"},
    {"[{\"host\":\"n1\",\"score\":\"x\",\"score\":2}]",
     "ERR:json: cannot unmarshal string into Go struct field "
     "HostPriority.Score of type int64"},
    {"null", ""},
    {"[{\"host\":\"n1\",\"score\":1.5}]",
     "ERR:json: cannot unmarshal number 1.5 into Go struct field "
     "HostPriority.Score of type int64"},
    {"[{\"host\":\"n1\",\"score\":1e2}]",
     "ERR:json: cannot unmarshal number 1e2 into Go struct field "
     "HostPriority.Score of type int64"},
    {"[{\"host\":\"n1\",\"score\":\"3\"}]",
     "ERR:json: cannot unmarshal string into Go struct field "
     "HostPriority.Score of type int64"},
    {"[{\"host\":1}]", "ERR:json: cannot unmarshal number into Go struct "
                       "field HostPriority.Host of type string"},
    {"{\"host\":\"n1\"}", "ERR:json: cannot unmarshal object into Go value "
                          "of type v1.HostPriorityList"},
    {"[\"n1\"]", "ERR:json: cannot unmarshal string into Go value of type "
                 "v1.HostPriority"},
};

START_TEST(priority_answers)
{
    char got[1024];
    prio_str(prio_cases[_i][0], got);
    ck_assert_msg(strcmp(got, prio_cases[_i][1]) == 0,
                  "case %d %s: got \"%s\", want \"%s\"", _i,
                  prio_cases[_i][0], got, prio_cases[_i][1]);
}
END_TEST

/* --- ExtenderPreemptionResult ----------------------------------------- */

static int on_victims(void *ud, const char *node, const char *const *uids,
                      size_t n, int64_t pdb, char *msg, size_t msg_len)
{
    char *out = ud;
    size_t o = strlen(out), i;
    (void)msg;
    (void)msg_len;
    o += (size_t)snprintf(out + o, 1024 - o, "%s%s:", o ? ";" : "", node);
    for (i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, 1024 - o, "%s%s", i ? "," : "",
                              uids[i]);
    snprintf(out + o, 1024 - o, "/%lld", (long long)pdb);
    return 0;
}

static void preempt_str(const char *body, char *out)
{
    char msg[1024];
    out[0] = '\0';
    if (ks_extender_parse_preemption(body, strlen(body), on_victims, out,
                                     msg, sizeof msg) != 0)
        snprintf(out, 1024, "ERR:%.1000s", msg);
}

static const char *const preempt_cases[][2] = {
    {"{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"u1\"}],"
     "\"NumPDBViolations\":1}}}",
     "n1:u1/1"},
    {"{\"nodenametometavictims\":{\"n1\":{\"pods\":[{\"uid\":\"u1\"},"
     "{\"Uid\":\"u2\"}],\"numpdbviolations\":2}}}",
     "n1:u1,u2/2"},
    {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[]}},"
     "\"NodeNameToMetaVictims\":{\"n2\":{\"pods\":[{\"uid\":\"u3\"}]}}}",
     "n1:/0;n2:u3/0"},
    {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[{\"uid\":\"a\"}]},"
     "\"n1\":{\"pods\":[{\"uid\":\"b\"}]}}}",
     "n1:b/0"},
    {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[{\"uid\":\"a\"}],"
     "\"Pods\":null}}}",
     "n1:/0"},
    {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":\"a\","
     "\"Pods\":[{\"uid\":\"b\"}]}}}",
     "ERR:json: cannot unmarshal string into Go struct field "
     "MetaVictims.NodeNameToMetaVictims.Pods of type []*v1.MetaPod"},
    {"{\"error\":\"no\"}", "ERR:no"},
    {"{\"nodenametometavictims\":{\"n1\":{\"numpdbviolations\":\"x\"}}}",
     "ERR:json: cannot unmarshal string into Go struct field "
     "MetaVictims.NodeNameToMetaVictims.NumPDBViolations of type int64"},
};

START_TEST(preemption_answers)
{
    char got[1024];
    preempt_str(preempt_cases[_i][0], got);
    ck_assert_msg(strcmp(got, preempt_cases[_i][1]) == 0,
                  "case %d %s: got \"%s\", want \"%s\"", _i,
                  preempt_cases[_i][0], got, preempt_cases[_i][1]);
}
END_TEST

/* --- ExtenderBindingResult ---------------------------------------------- */

static int bind_rc(const char *body, char *msg, size_t len)
{
    return ks_extender_parse_binding(body, strlen(body), msg, len);
}

START_TEST(binding_answers)
{
    char msg[512];
    ck_assert_int_eq(bind_rc("{}", msg, sizeof msg), 0);
    ck_assert_int_eq(bind_rc("{\"Error\":\"\"}", msg, sizeof msg), 0);
    ck_assert_int_eq(bind_rc("{\"error\":\"bind refused\"}", msg, sizeof msg),
                     -1);
    ck_assert_str_eq(msg, "bind refused");
    ck_assert_int_eq(bind_rc("{\"ERROR\":\"a\",\"Error\":\"b\"}", msg,
                             sizeof msg),
                     -1);
    ck_assert_str_eq(msg, "b");
    ck_assert_int_eq(bind_rc("null", msg, sizeof msg), 0);
    ck_assert_int_eq(bind_rc("[]", msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "json: cannot unmarshal array into Go value of "
                          "type v1.ExtenderBindingResult");
}
END_TEST

/* --- the reader itself -------------------------------------------------- */

START_TEST(key_folding)
{
    ck_assert(ks_gj_key_fills("nodenames", 9, "NodeNames"));
    ck_assert(ks_gj_key_fills("NODENAMES", 9, "NodeNames"));
    ck_assert(!ks_gj_key_fills("NodeName", 8, "NodeNames"));
    ck_assert(!ks_gj_key_fills("Node_Names", 10, "NodeNames"));
    ck_assert(ks_gj_key_fills("\xe2\x84\xaa"
                              "ind",
                              6, "kind"));
    ck_assert(!ks_gj_key_fills("\xc3\xa9rror", 6, "Error"));
}
END_TEST

START_TEST(strings_as_go_reads_them)
{
    char msg[256];
    const char *in = "[\"a\\u00e9\\ud83d\\ude00\\ud800x\xff\"]";
    ks_gj_doc_t *d = ks_gj_parse(in, strlen(in), msg, sizeof msg);
    const ks_gj_value_t *v;
    ck_assert_ptr_nonnull(d);
    v = ks_gj_root(d)->items[0];
    /* é, U+1F600, a lone surrogate and a bad byte both as U+FFFD */
    ck_assert_str_eq(v->text, "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx"
                              "\xef\xbf\xbd");
    ks_gj_free(d);
    ck_assert_ptr_null(ks_gj_parse("\"a\nb\"", 5, msg, sizeof msg));
    ck_assert_str_eq(msg, "invalid character '\\n' in string literal");
    ck_assert_ptr_null(ks_gj_parse("[01]", 4, msg, sizeof msg));
    ck_assert_str_eq(msg, "invalid character '1' after array element");
    ck_assert_ptr_null(ks_gj_parse("-x", 2, msg, sizeof msg));
    ck_assert_str_eq(msg, "invalid character 'x' in numeric literal");
}
END_TEST

START_TEST(depth_limit)
{
    size_t n = 10001, i;
    char *deep = malloc(2 * n + 1), msg[128];
    ks_gj_doc_t *d;
    for (i = 0; i < n; i++) {
        deep[i] = '[';
        deep[2 * n - 1 - i] = ']';
    }
    deep[2 * n] = '\0';
    ck_assert_ptr_null(ks_gj_parse(deep, 2 * n, msg, sizeof msg));
    ck_assert_str_eq(msg, "exceeded max depth");
    d = ks_gj_parse(deep + 1, 2 * n - 2, msg, sizeof msg);
    ck_assert_ptr_nonnull(d);
    ks_gj_free(d);
    free(deep);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ext_answer");
    TCase *tc = tcase_create("answers");
    SRunner *sr;
    int failed;
    tcase_add_loop_test(tc, filter_answers, 0,
                        (int)(sizeof filter_cases / sizeof *filter_cases));
    tcase_add_loop_test(tc, priority_answers, 0,
                        (int)(sizeof prio_cases / sizeof *prio_cases));
    tcase_add_loop_test(tc, preemption_answers, 0,
                        (int)(sizeof preempt_cases / sizeof *preempt_cases));
    tcase_add_test(tc, binding_answers);
    tcase_add_test(tc, key_folding);
    tcase_add_test(tc, strings_as_go_reads_them);
    tcase_add_test(tc, depth_limit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
