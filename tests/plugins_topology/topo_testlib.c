/*
 * Cluster builders and cycle runners for the topology plugin tests. See
 * topo_testlib.h.
 */
#include <check.h>

#include "topo_testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ks_node_info_t *topo_add_node(topo_cluster_t *c, const char *name,
                              const char *zone)
{
    ks_node_t *node = mock_node_new(name, 4000, 8ll << 30, 110);
    ks_node_info_t *ni;
    mock_node_add_label(node, "kubernetes.io/hostname", name);
    if (zone != NULL)
        mock_node_add_label(node, "topology.kubernetes.io/zone", zone);
    ni = mock_nodeinfo_new(node);
    if (c->n < TOPO_MAX_NODES)
        c->nodes[c->n++] = ni;
    return ni;
}

ks_node_info_t *topo_node(const topo_cluster_t *c, const char *name)
{
    uint32_t i;
    for (i = 0; i < c->n; i++)
        if (strcmp(c->nodes[i]->node->name, name) == 0)
            return c->nodes[i];
    return NULL;
}

ks_pod_t *topo_pod(const char *ns, const char *name, const char *app)
{
    ks_pod_t *pod = mock_pod_new(ns, name, 500, 512ll << 20);
    if (app != NULL)
        mock_pod_add_label(pod, "app", app);
    return pod;
}

void topo_place(topo_cluster_t *c, ks_pod_t *pod, const char *node)
{
    ks_node_info_t *ni = topo_node(c, node);
    if (ni == NULL) {
        fprintf(stderr, "topo_place: no node %s\n", node);
        abort();
    }
    mock_pod_set_node(pod, node);
    mock_nodeinfo_add_pod(ni, pod);
}

void topo_unplace(topo_cluster_t *c, ks_pod_t *pod)
{
    ks_node_info_t *ni = topo_node(c, pod->node_name);
    if (ni != NULL)
        mock_nodeinfo_remove_pod(ni, pod);
    mock_pod_set_node(pod, "");
}

void topo_sync(mock_host_t *mh, const topo_cluster_t *c)
{
    mock_host_set_nodes(mh, c->nodes, c->n);
}

const ks_label_selector_t *topo_sel_in(const char *key, const char *values_csv)
{
    ks_requirement_t r = mock_req(key, KS_OP_IN, values_csv);
    return mock_selector_new(&r, 1);
}

const ks_label_selector_t *topo_sel_all(void)
{
    return mock_selector_new(NULL, 0);
}

void topo_filter_with(mock_host_t *mh, const ks_plugin_t *p, void *self,
                      ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const topo_cluster_t *c, topo_verdicts_t *v)
{
    ks_status_t *st = mock_status_new();
    uint32_t i;
    (void)mh;
    for (i = 0; i < c->n; i++) {
        mock_status_reset(st);
        v->code[i] = p->filter(self, cs, pod, c->nodes[i], st);
        snprintf(v->reason[i], sizeof v->reason[i], "%s", mock_status_text(st));
    }
    mock_status_free(st);
}

ks_cycle_state_t *topo_filter_all(mock_host_t *mh, const ks_plugin_t *p,
                                  void *self, const ks_pod_t *pod,
                                  const topo_cluster_t *c, topo_verdicts_t *v)
{
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_prefilter_result_t *r = mock_prefilter_result_new();
    ks_status_t *st = mock_status_new();

    memset(v, 0, sizeof *v);
    topo_sync(mh, c);
    v->prefilter = p->pre_filter(self, cs, pod, r, st);
    mock_prefilter_result_free(r);
    mock_status_free(st);
    if (v->prefilter == KS_SUCCESS || v->prefilter == KS_SKIP)
        topo_filter_with(mh, p, self, cs, pod, c, v);
    if (v->prefilter == KS_SKIP) {
        /* Skip tells the host Filter cannot fail: check that it holds. */
        uint32_t i;
        for (i = 0; i < c->n; i++)
            ck_assert_msg(v->code[i] == KS_SUCCESS,
                          "PreFilter answered Skip but Filter rejects %s: %s",
                          c->nodes[i]->node->name, v->reason[i]);
    }
    return cs;
}

const char *topo_feasible(const topo_cluster_t *c, const topo_verdicts_t *v)
{
    static char buf[1024];
    size_t off = 0;
    uint32_t i;
    buf[0] = '\0';
    for (i = 0; i < c->n; i++)
        if (v->code[i] == KS_SUCCESS && off < sizeof buf)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                    off ? "," : "", c->nodes[i]->node->name);
    return buf;
}

/* Split "a,b,c" into NodeInfos of `c`. */
static uint32_t topo_pick(const topo_cluster_t *c, const char *names_csv,
                          ks_node_info_t **out)
{
    uint32_t n = 0;
    const char *p = names_csv;
    while (p && *p && n < TOPO_MAX_NODES) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[128];
        ks_node_info_t *ni;
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, p, len);
        name[len] = '\0';
        ni = topo_node(c, name);
        if (ni == NULL) {
            fprintf(stderr, "topo_pick: no node %s\n", name);
            abort();
        }
        out[n++] = ni;
        p = comma ? comma + 1 : NULL;
    }
    return n;
}

ks_code_t topo_score(mock_host_t *mh, const ks_plugin_t *p, void *self,
                     const ks_pod_t *pod, const topo_cluster_t *c,
                     const char *names_csv, int64_t *out)
{
    ks_node_info_t *picked[TOPO_MAX_NODES];
    ks_status_t *st = mock_status_new();
    uint32_t n = topo_pick(c, names_csv, picked);
    ks_code_t code;
    topo_sync(mh, c);
    code = mock_score_nodes(mh, p, self, pod, picked, n, out, st);
    if (code != KS_SUCCESS)
        fprintf(stderr, "topo_score: %s\n", mock_status_text(st));
    mock_status_free(st);
    return code;
}

const char *topo_score_text(mock_host_t *mh, const ks_plugin_t *p, void *self,
                            const ks_pod_t *pod, const topo_cluster_t *c,
                            const char *names_csv)
{
    static char buf[1024];
    ks_node_info_t *picked[TOPO_MAX_NODES];
    int64_t scores[TOPO_MAX_NODES];
    uint32_t n = topo_pick(c, names_csv, picked), i;
    size_t off = 0;
    if (topo_score(mh, p, self, pod, c, names_csv, scores) != KS_SUCCESS)
        return "error";
    buf[0] = '\0';
    for (i = 0; i < n && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s:%lld",
                                i ? "," : "", picked[i]->node->name,
                                (long long)scores[i]);
    return buf;
}

mock_host_t *mh;
const ks_plugin_t *pl;
void *self;

void topo_setup(const char *plugin)
{
    char err[512];
    mh = mock_host_new();
    pl = mock_plugin_load(plugin);
    ck_assert_ptr_nonnull(pl);
    ck_assert_int_eq(mock_plugin_create(mh, pl, NULL, &self, err, sizeof err),
                     0);
}

void topo_teardown(void)
{
    if (self)
        pl->destroy(self);
    self = NULL;
    mock_host_free(mh);
    mock_free_all();
}

void recreate(const char *yaml)
{
    char err[512];
    pl->destroy(self);
    self = NULL;
    ck_assert_msg(mock_plugin_create(mh, pl, yaml, &self, err, sizeof err) ==
                      0,
                  "create failed: %s", err);
}
