/* Conformance expected files. */
#include "expected.h"

#include <stdlib.h>
#include <string.h>

#include "conf_yaml.h"

typedef struct exp_ctx {
    const char *file;
    yaml_document_t *doc;
    ks_error_t *err;
} exp_ctx_t;

static int expect_map(exp_ctx_t *c, const yaml_node_t *n, const char *what)
{
    if (n->type != YAML_MAPPING_NODE)
        return ks_cy_fail(c->err, KS_ESCHEMA, c->file, n,
                          "%s: expected a mapping", what);
    return 0;
}

/* {node: N, ...} (null = empty). */
static int read_scores(exp_ctx_t *c, const yaml_node_t *n, const char *what,
                       ks_conf_score_t **out, size_t *n_out)
{
    ks_conf_score_t *s;
    size_t cnt, i;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (ks_yaml_is_null(n))
        return 0;
    if ((rc = expect_map(c, n, what)) != 0)
        return rc;
    if ((cnt = ks_yaml_map_len(n)) == 0)
        return 0;
    if ((s = calloc(cnt, sizeof *s)) == NULL)
        return ks_error_set(c->err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        yaml_node_t *k = ks_yaml_map_key(c->doc, n, i);
        yaml_node_t *v = ks_yaml_map_value(c->doc, n, i);
        *n_out = i + 1;
        *out = s;
        if ((rc = ks_cy_string(c->file, k, what, &s[i].node, c->err)) != 0 ||
            (rc = ks_cy_int64(c->file, v, what, &s[i].score, c->err)) != 0)
            return rc;
    }
    return 0;
}

static int read_rejected(exp_ctx_t *c, const yaml_node_t *n,
                         ks_conf_result_t *r)
{
    size_t cnt, i;
    int rc;
    if (ks_yaml_is_null(n))
        return 0;
    if ((rc = expect_map(c, n, "rejected")) != 0)
        return rc;
    if ((cnt = ks_yaml_map_len(n)) == 0)
        return 0;
    if ((r->rejected = calloc(cnt, sizeof *r->rejected)) == NULL)
        return ks_error_set(c->err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        ks_conf_reasons_t *e = &r->rejected[i];
        r->n_rejected = i + 1;
        if ((rc = ks_cy_string(c->file,
                               ks_yaml_map_key(c->doc, n, i),
                               "rejected", &e->node, c->err)) != 0 ||
            (rc = ks_cy_strv(c->doc, c->file,
                             ks_yaml_map_value(c->doc, n, i),
                             "rejected", &e->reasons, &e->n_reasons,
                             c->err)) != 0)
            return rc;
    }
    return 0;
}

static int read_plugin_scores(exp_ctx_t *c, const yaml_node_t *n,
                              ks_conf_result_t *r)
{
    size_t cnt, i;
    int rc;
    if (ks_yaml_is_null(n))
        return 0;
    if ((rc = expect_map(c, n, "plugin_scores")) != 0)
        return rc;
    if ((cnt = ks_yaml_map_len(n)) == 0)
        return 0;
    if ((r->plugin_scores = calloc(cnt, sizeof *r->plugin_scores)) == NULL)
        return ks_error_set(c->err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        ks_conf_plugin_scores_t *e = &r->plugin_scores[i];
        r->n_plugin_scores = i + 1;
        if ((rc = ks_cy_string(c->file,
                               ks_yaml_map_key(c->doc, n, i),
                               "plugin_scores", &e->plugin, c->err)) != 0 ||
            (rc = read_scores(c, ks_yaml_map_value(c->doc, n, i),
                              "plugin_scores", &e->scores, &e->n_scores)) !=
                0)
            return rc;
    }
    return 0;
}

static int read_opt_string(exp_ctx_t *c, const yaml_node_t *item,
                           const char *key, char **out)
{
    yaml_node_t *v = ks_yaml_get(c->doc, item, key);
    *out = NULL;
    if (ks_yaml_is_null(v))
        return 0;
    return ks_cy_string(c->file, v, key, out, c->err);
}

static int read_result(exp_ctx_t *c, const yaml_node_t *item,
                       ks_conf_result_t *r)
{
    static const char *const keys[] = {
        "pod",      "feasible",      "rejected",  "scores",
        "plugin_scores", "selected", "unschedulable", "nominated",
        "victims",  NULL};
    yaml_node_t *pod;
    int rc;
    if ((rc = expect_map(c, item, "results[]")) != 0)
        return rc;
    r->line = ks_yaml_line(item);
    if ((rc = ks_cy_check_keys(c->doc, c->file, item, keys, "results[]",
                               c->err)) != 0)
        return rc;
    pod = ks_yaml_get(c->doc, item, "pod");
    if (ks_yaml_is_null(pod))
        return ks_cy_fail(c->err, KS_ESCHEMA, c->file, item,
                          "results[]: \"pod\" is missing");
    if ((rc = ks_cy_string(c->file, pod, "pod", &r->pod, c->err)) != 0)
        return rc;
    if (strchr(r->pod, '/') == NULL)
        return ks_cy_fail(c->err, KS_ESCHEMA, c->file, pod,
                          "pod: expected \"namespace/name\", found \"%s\"",
                          r->pod);
    if ((rc = ks_cy_strv(c->doc, c->file,
                         ks_yaml_get(c->doc, item, "feasible"), "feasible",
                         &r->feasible, &r->n_feasible, c->err)) != 0 ||
        (rc = read_rejected(c, ks_yaml_get(c->doc, item, "rejected"), r)) !=
            0 ||
        (rc = read_scores(c, ks_yaml_get(c->doc, item, "scores"), "scores",
                          &r->scores, &r->n_scores)) != 0 ||
        (rc = read_plugin_scores(c, ks_yaml_get(c->doc, item, "plugin_scores"),
                                 r)) != 0 ||
        (rc = read_opt_string(c, item, "selected", &r->selected)) != 0 ||
        (rc = read_opt_string(c, item, "unschedulable",
                              &r->unschedulable)) != 0 ||
        (rc = read_opt_string(c, item, "nominated", &r->nominated)) != 0 ||
        (rc = ks_cy_strv(c->doc, c->file, ks_yaml_get(c->doc, item, "victims"),
                         "victims", &r->victims, &r->n_victims, c->err)) != 0)
        return rc;
    ks_conf_result_normalise(r);
    return 0;
}

int ks_expected_load(const char *path, ks_conf_results_t *out,
                     ks_error_t *err)
{
    static const char *const keys[] = {"name", "results", NULL};
    yaml_document_t doc;
    yaml_node_t *root, *name, *results;
    exp_ctx_t c;
    size_t i, cnt;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = ks_cy_load_file(path, &doc, err)) != 0)
        return rc;
    c.file = path;
    c.doc = &doc;
    c.err = err;
    root = yaml_document_get_root_node(&doc);
    if ((rc = expect_map(&c, root, "expected file")) != 0 ||
        (rc = ks_cy_check_keys(&doc, path, root, keys, "expected file",
                               err)) != 0)
        goto fail;
    name = ks_yaml_get(&doc, root, "name");
    if (ks_yaml_is_null(name)) {
        rc = ks_cy_fail(err, KS_ESCHEMA, path, root, "\"name\" is missing");
        goto fail;
    }
    if ((rc = ks_cy_string(path, name, "name", &out->name, err)) != 0)
        goto fail;
    results = ks_yaml_get(&doc, root, "results");
    if (!ks_yaml_is_null(results)) {
        if (results->type != YAML_SEQUENCE_NODE) {
            rc = ks_cy_fail(err, KS_ESCHEMA, path, results,
                            "results: expected a list");
            goto fail;
        }
        cnt = ks_yaml_seq_len(results);
        for (i = 0; i < cnt; i++) {
            ks_conf_result_t *r = ks_conf_results_append(out);
            if (r == NULL) {
                rc = ks_error_set(err, KS_ENOMEM, "out of memory");
                goto fail;
            }
            if ((rc = read_result(&c, ks_yaml_seq_at(&doc, results, i),
                                  r)) != 0)
                goto fail;
        }
    }
    yaml_document_delete(&doc);
    return 0;
fail:
    yaml_document_delete(&doc);
    ks_conf_results_free(out);
    return rc;
}
