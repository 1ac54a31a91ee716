/* Conformance scenario files. */
#include "scenario.h"

#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "conf_yaml.h"

char *ks_scenario_base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    size_t n;
    char *out;
    b = b ? b + 1 : path;
    n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".yaml") == 0)
        n -= 5;
    if ((out = malloc(n + 1)) == NULL)
        return NULL;
    memcpy(out, b, n);
    out[n] = '\0';
    return out;
}

char *ks_scenario_expected_path(const char *path)
{
    size_t n = strlen(path);
    char *out;
    if (n > 5 && strcmp(path + n - 5, ".yaml") == 0)
        n -= 5;
    if ((out = malloc(n + sizeof ".expected.yaml")) == NULL)
        return NULL;
    memcpy(out, path, n);
    memcpy(out + n, ".expected.yaml", sizeof ".expected.yaml");
    return out;
}

void ks_scenario_free(ks_scenario_t *sc)
{
    size_t i;
    if (sc == NULL)
        return;
    ks_config_free(sc->config);
    for (i = 0; i < sc->n_services; i++)
        ks_service_free(sc->services[i]);
    for (i = 0; i < sc->n_nodes; i++)
        ks_node_free(sc->nodes[i]);
    for (i = 0; i < sc->n_pods; i++)
        ks_pod_free(sc->pods[i]);
    for (i = 0; i < sc->n_schedule; i++)
        ks_pod_free(sc->schedule[i]);
    free(sc->services);
    free(sc->nodes);
    free(sc->pods);
    free(sc->schedule);
    free(sc->path);
    free(sc->name);
    free(sc->description);
    free(sc);
}

typedef enum obj_kind { OBJ_SERVICE, OBJ_NODE, OBJ_POD } obj_kind_t;

/* Read the sequence under `key` with the object reader of `kind`, into
 * the scenario's array for that key. */
static int read_list(ks_scenario_t *sc, yaml_document_t *doc,
                     const yaml_node_t *root, const char *key,
                     obj_kind_t kind, ks_error_t *err)
{
    ks_intern_t *in = ks_intern_global();
    yaml_node_t *seq = ks_yaml_get(doc, root, key);
    int running = strcmp(key, "pods") == 0;
    size_t cnt, i;
    int rc = 0;

    if (ks_yaml_is_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return ks_cy_fail(err, KS_ESCHEMA, sc->path, seq,
                          "%s: expected a list of objects", key);
    cnt = ks_yaml_seq_len(seq);
    if (cnt == 0)
        return 0;
    switch (kind) {
    case OBJ_SERVICE:
        sc->services = calloc(cnt, sizeof *sc->services);
        rc = sc->services == NULL;
        break;
    case OBJ_NODE:
        sc->nodes = calloc(cnt, sizeof *sc->nodes);
        rc = sc->nodes == NULL;
        break;
    default:
        if (running) {
            sc->pods = calloc(cnt, sizeof *sc->pods);
            rc = sc->pods == NULL;
        } else {
            sc->schedule = calloc(cnt, sizeof *sc->schedule);
            rc = sc->schedule == NULL;
        }
        break;
    }
    if (rc != 0)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < cnt; i++) {
        yaml_node_t *item = ks_yaml_seq_at(doc, seq, i);
        ks_service_t *svc = NULL;
        ks_node_t *node = NULL;
        ks_pod_t *pod = NULL;
        if (item == NULL || item->type != YAML_MAPPING_NODE)
            return ks_cy_fail(err, KS_ESCHEMA, sc->path, item,
                              "%s[%zu]: expected an object (a mapping)", key,
                              i);
        switch (kind) {
        case OBJ_SERVICE:
            if ((rc = ks_service_from_yaml(sc->path, doc, item, in, &svc,
                                           err)) != 0)
                return rc;
            sc->services[sc->n_services++] = svc;
            break;
        case OBJ_NODE:
            if ((rc = ks_node_from_yaml(sc->path, doc, item, in, &node,
                                        err)) != 0)
                return rc;
            sc->nodes[sc->n_nodes++] = node;
            break;
        default:
            if ((rc = ks_pod_from_yaml(sc->path, doc, item, in, &pod, err)) !=
                0)
                return rc;
            if (running)
                sc->pods[sc->n_pods++] = pod;
            else
                sc->schedule[sc->n_schedule++] = pod;
            if (pod->start_unix_ms == 0)
                pod->start_unix_ms = KS_SCENARIO_DEFAULT_START_MS;
            if (running &&
                (pod->node_name == NULL || pod->node_name[0] == '\0'))
                return ks_cy_fail(err, KS_ESCHEMA, sc->path, item,
                                  "pods[%zu] (%s/%s): a running pod needs "
                                  "spec.nodeName; pods to schedule go under "
                                  "\"schedule\"",
                                  i, pod->ns, pod->name);
            break;
        }
    }
    return 0;
}

int ks_scenario_load(const char *path, ks_scenario_t **out, ks_error_t *err)
{
    static const char *const keys[] = {"name",  "description", "config",
                                       "services", "nodes",   "pods",
                                       "schedule", NULL};
    yaml_document_t doc;
    yaml_node_t *root, *v;
    ks_scenario_t *sc;
    int rc;

    *out = NULL;
    if ((rc = ks_cy_load_file(path, &doc, err)) != 0)
        return rc;
    if ((sc = calloc(1, sizeof *sc)) == NULL ||
        (sc->path = strdup(path)) == NULL) {
        free(sc);
        yaml_document_delete(&doc);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    root = yaml_document_get_root_node(&doc);
    if (root->type != YAML_MAPPING_NODE) {
        rc = ks_cy_fail(err, KS_ESCHEMA, path, root,
                        "a scenario is a mapping (name, config, services, "
                        "nodes, pods, schedule)");
        goto fail;
    }
    if ((rc = ks_cy_check_keys(&doc, path, root, keys, "scenario", err)) !=
        0)
        goto fail;

    v = ks_yaml_get(&doc, root, "name");
    if (!ks_yaml_is_null(v)) {
        if ((rc = ks_cy_string(path, v, "name", &sc->name, err)) != 0)
            goto fail;
    } else if ((sc->name = ks_scenario_base_name(path)) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto fail;
    }
    v = ks_yaml_get(&doc, root, "description");
    if (!ks_yaml_is_null(v)) {
        if ((rc = ks_cy_string(path, v, "description", &sc->description,
                               err)) != 0)
            goto fail;
    } else if ((sc->description = strdup("")) == NULL) {
        rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        goto fail;
    }

    v = ks_yaml_get(&doc, root, "config");
    if (!ks_yaml_is_null(v)) {
        if (v->type != YAML_MAPPING_NODE) {
            rc = ks_cy_fail(err, KS_ESCHEMA, path, v,
                            "config: expected a KubeSchedulerConfiguration "
                            "mapping");
            goto fail;
        }
        if ((rc = ks_config_load_yaml_node(path, &doc, v, &sc->config,
                                           err)) != 0)
            goto fail;
    }

    if ((rc = read_list(sc, &doc, root, "services", OBJ_SERVICE, err)) !=
            0 ||
        (rc = read_list(sc, &doc, root, "nodes", OBJ_NODE, err)) != 0 ||
        (rc = read_list(sc, &doc, root, "pods", OBJ_POD, err)) != 0 ||
        (rc = read_list(sc, &doc, root, "schedule", OBJ_POD, err)) != 0)
        goto fail;

    yaml_document_delete(&doc);
    *out = sc;
    return 0;
fail:
    yaml_document_delete(&doc);
    ks_scenario_free(sc);
    return rc;
}
