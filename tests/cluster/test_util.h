/* Helpers shared by the cluster tests: parse one YAML object string. */
#ifndef KS_TEST_CLUSTER_UTIL_H
#define KS_TEST_CLUSTER_UTIL_H

#include <check.h>
#include <string.h>
#include <yaml.h>

#include "cluster/objects.h"

/* Parse the first document of `yaml` with `fn`; returns its code. */
static inline int parse_one(const char *yaml, ks_intern_t *in, int kind,
                            void **out, ks_error_t *err)
{
    yaml_parser_t p;
    yaml_document_t doc;
    int rc;
    ck_assert(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)yaml,
                                 strlen(yaml));
    ck_assert_msg(yaml_parser_load(&p, &doc), "test YAML is malformed: %s",
                  p.problem);
    switch (kind) {
    case 'p': {
        ks_pod_t *pod = NULL;
        rc = ks_pod_from_yaml("t.yaml", &doc, yaml_document_get_root_node(&doc),
                              in, &pod, err);
        *out = pod;
        break;
    }
    case 'n': {
        ks_node_t *node = NULL;
        rc = ks_node_from_yaml("t.yaml", &doc,
                               yaml_document_get_root_node(&doc), in, &node,
                               err);
        *out = node;
        break;
    }
    default: {
        ks_service_t *svc = NULL;
        rc = ks_service_from_yaml("t.yaml", &doc,
                                  yaml_document_get_root_node(&doc), in, &svc,
                                  err);
        *out = svc;
        break;
    }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return rc;
}

static inline ks_pod_t *pod_ok(const char *yaml, ks_intern_t *in)
{
    ks_error_t err = {0};
    void *pod = NULL;
    int rc = parse_one(yaml, in, 'p', &pod, &err);
    ck_assert_msg(rc == 0, "pod parse failed: %s", err.msg);
    return pod;
}

static inline ks_node_t *node_ok(const char *yaml, ks_intern_t *in)
{
    ks_error_t err = {0};
    void *node = NULL;
    int rc = parse_one(yaml, in, 'n', &node, &err);
    ck_assert_msg(rc == 0, "node parse failed: %s", err.msg);
    return node;
}

#endif
