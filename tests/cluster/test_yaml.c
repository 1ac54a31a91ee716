/* The base YAML layer (base/yaml_node.h, base/yaml_doc.h): core schema
 * typing, positions, loading one document, and the alias limits. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/yaml_doc.h"
#include "base/yaml_node.h"

/* Load `text` (which must succeed) into *doc; returns the root. */
static yaml_node_t *load_ok(const char *text, yaml_document_t *doc)
{
    ks_yaml_problem_t p;
    int rc = ks_yaml_load_string(text, strlen(text), doc, &p);
    ck_assert_msg(rc == 0, "load failed: %u:%u: %s", p.line, p.column, p.msg);
    return yaml_document_get_root_node(doc);
}

/* Load `text`, which must fail; returns the problem. */
static ks_yaml_problem_t load_fails(const char *text, size_t len)
{
    ks_yaml_problem_t p;
    yaml_document_t doc;
    memset(&p, 0, sizeof p);
    ck_assert_int_eq(ks_yaml_load_string(text, len, &doc, &p), -1);
    ck_assert_int_ne(p.kind, KS_YAML_P_NONE);
    return p;
}

/* The type of the value of "v" in a one-line document. */
static ks_yaml_type_t type_of(const char *line)
{
    yaml_document_t doc;
    yaml_node_t *root = load_ok(line, &doc);
    ks_yaml_type_t t = ks_yaml_type(ks_yaml_get(&doc, root, "v"));
    yaml_document_delete(&doc);
    return t;
}

START_TEST(test_core_schema_types)
{
    static const struct {
        const char *yaml;
        ks_yaml_type_t want;
    } cases[] = {
        {"v: true", KS_YAML_BOOL},   {"v: False", KS_YAML_BOOL},
        {"v: TRUE", KS_YAML_BOOL},   {"v: yes", KS_YAML_STR},
        {"v: on", KS_YAML_STR},      {"v: OFF", KS_YAML_STR},
        {"v: y", KS_YAML_STR},       {"v: tRUE", KS_YAML_STR},
        {"v: 'true'", KS_YAML_STR},  {"v: \"false\"", KS_YAML_STR},
        {"v: ~", KS_YAML_NULL},      {"v: null", KS_YAML_NULL},
        {"v: Null", KS_YAML_NULL},   {"v: NULL", KS_YAML_NULL},
        {"v:", KS_YAML_NULL},        {"v: nULL", KS_YAML_STR},
        {"v: ''", KS_YAML_STR},      {"v: 'null'", KS_YAML_STR},
        {"v: !!null x", KS_YAML_NULL}, {"v: !!null ''", KS_YAML_NULL},
        {"v: 42", KS_YAML_INT},      {"v: -7", KS_YAML_INT},
        {"v: +7", KS_YAML_INT},      {"v: 007", KS_YAML_INT},
        {"v: 0x1F", KS_YAML_INT},    {"v: 0o17", KS_YAML_INT},
        {"v: 0X1F", KS_YAML_STR},    {"v: 0b101", KS_YAML_STR},
        {"v: 1_000", KS_YAML_STR},   {"v: 0x", KS_YAML_STR},
        {"v: '5'", KS_YAML_STR},     {"v: !!str 5", KS_YAML_STR},
        {"v: ! 5", KS_YAML_STR},     {"v: |\n  5\n", KS_YAML_STR},
        {"v: 1.5", KS_YAML_FLOAT},   {"v: .5", KS_YAML_FLOAT},
        {"v: 1.", KS_YAML_FLOAT},    {"v: 1e3", KS_YAML_FLOAT},
        {"v: -2.5E-3", KS_YAML_FLOAT}, {"v: .inf", KS_YAML_FLOAT},
        {"v: -.Inf", KS_YAML_FLOAT}, {"v: .NaN", KS_YAML_FLOAT},
        {"v: 1:30", KS_YAML_STR},    {"v: .", KS_YAML_STR},
        {"v: [1]", KS_YAML_SEQ},     {"v: {a: 1}", KS_YAML_MAP},
        {"w: 1", KS_YAML_ABSENT},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(type_of(cases[i].yaml) == cases[i].want,
                      "%s: type %d, want %d", cases[i].yaml,
                      (int)type_of(cases[i].yaml), (int)cases[i].want);
}
END_TEST

START_TEST(test_scalar_values)
{
    yaml_document_t doc;
    yaml_node_t *r = load_ok("a: 0x1F\nb: 0o17\nc: -9223372036854775808\n"
                             "d: 9223372036854775808\ne: True\nf: yes\n"
                             "g: '12'\nh: 2.5\ni: -.inf\nj: 12\n"
                             "k: 0xFFFFFFFFFFFFFFFFF\n",
                             &doc);
    int64_t v = 0;
    double d = 0;
    int b = 0;
    char buf[64];
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "a"), &v), 0);
    ck_assert_int_eq(v, 31);
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "b"), &v), 0);
    ck_assert_int_eq(v, 15);
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "c"), &v), 0);
    ck_assert(v == INT64_MIN);
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "d"), &v), -2);
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "k"), &v), -2);
    ck_assert_int_eq(ks_yaml_int64(ks_yaml_get(&doc, r, "g"), &v), -1);
    ck_assert_int_eq(ks_yaml_bool(ks_yaml_get(&doc, r, "e"), &b), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(ks_yaml_bool(ks_yaml_get(&doc, r, "f"), &b), -1);
    ck_assert(ks_yaml_is_yaml11_bool(ks_yaml_get(&doc, r, "f")));
    ck_assert(!ks_yaml_is_yaml11_bool(ks_yaml_get(&doc, r, "e")));
    ck_assert_str_eq(ks_yaml_bool_hint(ks_yaml_get(&doc, r, "e")), "");
    ck_assert_ptr_nonnull(
        strstr(ks_yaml_bool_hint(ks_yaml_get(&doc, r, "f")), "true or false"));
    ck_assert_int_eq(ks_yaml_double(ks_yaml_get(&doc, r, "h"), &d), 0);
    ck_assert(d == 2.5);
    ck_assert_int_eq(ks_yaml_double(ks_yaml_get(&doc, r, "i"), &d), 0);
    ck_assert(d < -1e308);
    ck_assert_int_eq(ks_yaml_double(ks_yaml_get(&doc, r, "j"), &d), 0);
    ck_assert(d == 12);
    ck_assert_int_eq(ks_yaml_double(ks_yaml_get(&doc, r, "g"), &d), -1);
    ck_assert_str_eq(ks_yaml_describe(ks_yaml_get(&doc, r, "g"), buf,
                                      sizeof buf),
                     "a string (\"12\")");
    ck_assert_str_eq(ks_yaml_describe(r, buf, sizeof buf), "a mapping");
    ck_assert_str_eq(ks_yaml_describe(NULL, buf, sizeof buf), "nothing");
    yaml_document_delete(&doc);
}
END_TEST

START_TEST(test_navigation_and_positions)
{
    yaml_document_t doc;
    yaml_node_t *r = load_ok("a: 1\nb:\n  - x\n  - {k: v}\na: 2\n", &doc);
    yaml_node_t *b = ks_yaml_get(&doc, r, "b");
    char buf[64];
    /* the last occurrence of a key wins */
    ck_assert_str_eq(ks_yaml_text(ks_yaml_get(&doc, r, "a")), "2");
    ck_assert_ptr_null(ks_yaml_get(&doc, r, "zz"));
    ck_assert_ptr_null(ks_yaml_get(&doc, b, "a")); /* not a mapping */
    ck_assert_uint_eq(ks_yaml_seq_len(b), 2);
    ck_assert_uint_eq(ks_yaml_seq_len(r), 0);
    ck_assert_ptr_null(ks_yaml_seq_at(&doc, b, 2));
    ck_assert_str_eq(ks_yaml_text(ks_yaml_seq_at(&doc, b, 0)), "x");
    ck_assert_uint_eq(ks_yaml_map_len(r), 3);
    ck_assert_str_eq(ks_yaml_text(ks_yaml_map_key(&doc, r, 1)), "b");
    ck_assert_ptr_eq(ks_yaml_map_value(&doc, r, 1), b);
    ck_assert_ptr_null(ks_yaml_map_key(&doc, r, 3));
    ck_assert_uint_eq(ks_yaml_line(ks_yaml_seq_at(&doc, b, 1)), 4);
    ck_assert_uint_eq(ks_yaml_column(ks_yaml_seq_at(&doc, b, 1)), 5);
    ck_assert_str_eq(ks_yaml_where(buf, sizeof buf, "f.yaml",
                                   ks_yaml_seq_at(&doc, b, 1)),
                     "f.yaml:4:5");
    ck_assert_str_eq(ks_yaml_where(buf, sizeof buf, "f.yaml", NULL), "f.yaml");
    ks_yaml_seq_at(&doc, b, 1)->start_mark.line = KS_YAML_NO_MARK;
    ck_assert_str_eq(ks_yaml_where(buf, sizeof buf, "f.yaml",
                                   ks_yaml_seq_at(&doc, b, 1)),
                     "f.yaml");
    ck_assert_uint_eq(ks_yaml_line(ks_yaml_seq_at(&doc, b, 1)), 0);
    ck_assert_uint_eq(ks_yaml_line(NULL), 0);
    yaml_document_delete(&doc);
}
END_TEST

START_TEST(test_load_problems)
{
    ks_yaml_problem_t p;
    ks_error_t err = {0};
    p = load_fails("", 0);
    ck_assert_int_eq(p.kind, KS_YAML_P_EMPTY);
    p = load_fails("# only a comment\n", 17);
    ck_assert_int_eq(p.kind, KS_YAML_P_EMPTY);
    p = load_fails("a: 1\n---\nb: 2\n", 14);
    ck_assert_int_eq(p.kind, KS_YAML_P_EXTRA);
    ck_assert_uint_eq(p.line, 2);
    ck_assert_uint_eq(p.column, 1);
    p = load_fails("a: [1, 2\n", 9);
    ck_assert_int_eq(p.kind, KS_YAML_P_SYNTAX);
    ck_assert_int_eq(p.code, KS_EPARSE);
    ck_assert_uint_eq(p.line, 2);
    ck_assert_int_eq(ks_yaml_problem_error(&err, "f.yaml", "malformed YAML: ",
                                           &p),
                     KS_EPARSE);
    ck_assert_msg(strncmp(err.msg, "f.yaml:2:", 9) == 0 &&
                      strstr(err.msg, "malformed YAML: did not find "
                                      "expected ',' or ']' (while parsing a "
                                      "flow sequence at line 1, column 4)"),
                  "got: %s", err.msg);
    /* a reader error gets a position from the byte offset */
    p = load_fails("a: b\nc: \"\xff\"\n", 12);
    ck_assert_int_eq(p.kind, KS_YAML_P_SYNTAX);
    ck_assert_uint_eq(p.line, 2);
    ck_assert_uint_eq(p.column, 5);
    p = load_fails("a: *nope\n", 9);
    ck_assert_int_eq(p.kind, KS_YAML_P_UNDEFINED);
    ck_assert_str_eq(p.anchor, "nope");
    ck_assert_uint_eq(p.line, 1);
    ck_assert_uint_eq(p.column, 4);
    /* an empty second document still counts as a second document */
    p = load_fails("a: 1\n---\n", 9);
    ck_assert_int_eq(p.kind, KS_YAML_P_EXTRA);
}
END_TEST

START_TEST(test_load_file)
{
    char path[] = "/tmp/ks-yaml-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    yaml_document_t doc;
    ks_yaml_problem_t p;
    ks_error_t err = {0};
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs("a: [x, y]\n", f);
    fclose(f);
    ck_assert_int_eq(ks_yaml_load_file(path, &doc, &p), 0);
    ck_assert_uint_eq(
        ks_yaml_seq_len(ks_yaml_get(&doc, yaml_document_get_root_node(&doc),
                                    "a")),
        2);
    yaml_document_delete(&doc);
    unlink(path);
    ck_assert_int_eq(ks_yaml_load_file(path, &doc, &p), -1);
    ck_assert_int_eq(p.kind, KS_YAML_P_IO);
    ck_assert_int_eq(p.code, KS_EIO);
    ks_yaml_problem_error(&err, path, NULL, &p);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0 &&
                      strstr(err.msg, ": cannot open: ") != NULL,
                  "got: %s", err.msg);
}
END_TEST

/* A few legitimate aliases: the aliased node is shared, not copied. */
START_TEST(test_aliases_shared)
{
    yaml_document_t doc;
    yaml_node_t *r = load_ok("base: &b {cpu: 1, memory: 2Gi}\n"
                             "one: *b\n"
                             "two: *b\n"
                             "name: &n x\n"
                             "again: *n\n"
                             "name2: &n y\n" /* a redefined anchor */
                             "latest: *n\n",
                             &doc);
    ck_assert_ptr_eq(ks_yaml_get(&doc, r, "one"), ks_yaml_get(&doc, r, "base"));
    ck_assert_ptr_eq(ks_yaml_get(&doc, r, "two"), ks_yaml_get(&doc, r, "base"));
    ck_assert_str_eq(ks_yaml_text(ks_yaml_get(&doc, r, "again")), "x");
    ck_assert_str_eq(ks_yaml_text(ks_yaml_get(&doc, r, "latest")), "y");
    yaml_document_delete(&doc);
}
END_TEST

START_TEST(test_recursive_alias)
{
    ks_yaml_problem_t p = load_fails("a: &x [1, *x]\n", 14);
    ck_assert_int_eq(p.kind, KS_YAML_P_RECURSIVE);
    ck_assert_str_eq(p.anchor, "x");
    ck_assert_uint_eq(p.line, 1);
    ck_assert_uint_eq(p.column, 11);
    p = load_fails("&m {a: {b: *m}}\n", 16);
    ck_assert_int_eq(p.kind, KS_YAML_P_RECURSIVE);
}
END_TEST

/* Nested lists of ten, `depth` levels: about 10^depth nodes expanded. */
static char *laughs(int depth)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    int i, j;
    len += (size_t)snprintf(s + len, cap - len, "l0: &l0 [x, x, x, x, x, x, "
                                                "x, x, x, x]\n");
    for (i = 1; i <= depth; i++) {
        len += (size_t)snprintf(s + len, cap - len, "l%d: &l%d [", i, i);
        for (j = 0; j < 10; j++)
            len += (size_t)snprintf(s + len, cap - len, "%s*l%d", j ? ", " : "",
                                    i - 1);
        len += (size_t)snprintf(s + len, cap - len, "]\n");
    }
    return s;
}

START_TEST(test_billion_laughs)
{
    char *s = laughs(9); /* 10^10 nodes once expanded */
    ks_yaml_problem_t p = load_fails(s, strlen(s));
    ks_error_t err = {0};
    ck_assert_int_eq(p.kind, KS_YAML_P_LIMIT);
    ck_assert_int_eq(p.code, KS_EPARSE);
    /* l5 is the first list past a million nodes: its eighth alias of l4
     * (8 x 111,111 plus the 123,353 nodes before) crosses the limit */
    ck_assert_str_eq(p.anchor, "l4");
    ck_assert_uint_eq(p.line, 6);
    ck_assert_uint_eq(p.column, 45);
    ks_yaml_problem_error(&err, "bomb.yaml", NULL, &p);
    ck_assert_str_eq(err.msg,
                     "bomb.yaml:6:45: alias *l4: expanding the aliases would "
                     "give more than 1000000 nodes (the limit is "
                     "max(1000000, 10 x the 31 nodes written)); refusing a "
                     "possible alias bomb");
    free(s);
    /* four levels (about 123,000 nodes) are fine */
    s = laughs(4);
    {
        yaml_document_t doc;
        load_ok(s, &doc);
        yaml_document_delete(&doc);
    }
    free(s);
}
END_TEST

START_TEST(test_alias_count)
{
    size_t cap = 16 * 10002 + 64, len = 0;
    char *s = malloc(cap);
    ks_yaml_problem_t p;
    int i;
    len += (size_t)snprintf(s + len, cap - len, "a: &v x\nb: [");
    for (i = 0; i < 10001; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s*v", i ? ", " : "");
    len += (size_t)snprintf(s + len, cap - len, "]\n");
    p = load_fails(s, len);
    ck_assert_int_eq(p.kind, KS_YAML_P_LIMIT);
    ck_assert_str_eq(p.anchor, "v");
    ck_assert_uint_eq(p.line, 2);
    ck_assert_uint_eq(p.column, 5 + 4 * 10000);
    ck_assert_ptr_nonnull(strstr(p.msg, "more than 10000 alias references"));
    /* 10,000 are accepted */
    s[len - 6] = ']';
    s[len - 5] = '\n';
    {
        yaml_document_t doc;
        ck_assert_int_eq(ks_yaml_load_string(s, len - 4, &doc, &p), 0);
        ck_assert_uint_eq(
            ks_yaml_seq_len(ks_yaml_get(&doc, yaml_document_get_root_node(&doc),
                                        "b")),
            10000);
        yaml_document_delete(&doc);
    }
    free(s);
}
END_TEST

/* The limit grows with the document: 10 x its own nodes. */
START_TEST(test_limit_scales_with_size)
{
    size_t cap = 2 * 1000 + 8 * 1400 + 4 * 200000 + 256, len = 0;
    char *s = malloc(cap);
    yaml_document_t doc;
    ks_yaml_problem_t p;
    int i;
    /* 1001 nodes, aliased 1400 times: 1.4 million expanded */
    len += (size_t)snprintf(s + len, cap - len, "a: &x [");
    for (i = 0; i < 1000; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s0", i ? "," : "");
    len += (size_t)snprintf(s + len, cap - len, "]\nb: [");
    for (i = 0; i < 1400; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s*x", i ? "," : "");
    len += (size_t)snprintf(s + len, cap - len, "]\n");
    p = load_fails(s, len);
    ck_assert_int_eq(p.kind, KS_YAML_P_LIMIT);
    /* with 200,000 nodes of its own the document may expand to 2 million */
    len += (size_t)snprintf(s + len, cap - len, "c: [");
    for (i = 0; i < 200000; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s1", i ? "," : "");
    len += (size_t)snprintf(s + len, cap - len, "]\n");
    ck_assert_msg(ks_yaml_load_string(s, len, &doc, &p) == 0, "%s", p.msg);
    yaml_document_delete(&doc);
    free(s);
}
END_TEST

/* A budget shared by the documents of a stream. */
START_TEST(test_shared_budget)
{
    char *s = laughs(4); /* about 123,000 nodes once expanded */
    ks_yaml_budget_t budget = {0, 0, 0};
    ks_yaml_builder_t b;
    ks_yaml_problem_t p;
    yaml_parser_t parser;
    int docs = 0, rc = 0, i;
    size_t n = strlen(s), len;
    char *stream = malloc(12 * (n + 8));
    if (stream == NULL)
        ck_abort_msg("out of memory");
    len = 0;
    for (i = 0; i < 12; i++) {
        memcpy(stream + len, "---\n", 4);
        memcpy(stream + len + 4, s, n);
        len += n + 4;
    }
    ck_assert(yaml_parser_initialize(&parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)stream, len);
    ks_yaml_builder_init(&b, &budget);
    for (;;) {
        yaml_event_t ev;
        ck_assert(yaml_parser_parse(&parser, &ev));
        if (ev.type == YAML_DOCUMENT_START_EVENT)
            rc = ks_yaml_builder_start(&b, &ev, &p);
        else if (ev.type == YAML_STREAM_END_EVENT)
            rc = 1;
        else
            rc = ks_yaml_builder_feed(&b, &ev, &p);
        if (rc == 0 && ev.type == YAML_DOCUMENT_END_EVENT) {
            ck_assert_ptr_nonnull(ks_yaml_builder_root(&b));
            docs++;
        }
        yaml_event_delete(&ev);
        if (rc != 0)
            break;
    }
    /* each document alone is fine; the ninth passes a million in all */
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(docs, 8);
    ck_assert_int_eq(p.kind, KS_YAML_P_LIMIT);
    ck_assert_uint_eq(budget.aliases, 9 * 40);
    ks_yaml_builder_destroy(&b);
    yaml_parser_delete(&parser);
    free(stream);
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base-yaml");
    TCase *tc = tcase_create("yaml");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, test_core_schema_types);
    tcase_add_test(tc, test_scalar_values);
    tcase_add_test(tc, test_navigation_and_positions);
    tcase_add_test(tc, test_load_problems);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_aliases_shared);
    tcase_add_test(tc, test_recursive_alias);
    tcase_add_test(tc, test_billion_laughs);
    tcase_add_test(tc, test_alias_count);
    tcase_add_test(tc, test_limit_scales_with_size);
    tcase_add_test(tc, test_shared_budget);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
