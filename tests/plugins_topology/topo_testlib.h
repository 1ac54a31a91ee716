/*
 * Helpers for the InterPodAffinity and PodTopologySpread tests, on top of
 * the shared mock host: a small cluster of nodes labelled with hostname and
 * zone, pods labelled app=<x>, and runners that drive one scheduling cycle
 * (PreFilter then Filter on every node with one cycle state; PreScore, Score
 * and NormalizeScore over the feasible nodes) the way the framework does.
 *
 * Everything is allocated from the mock arena (mock_free_all releases it)
 * except the cycle states, which the caller frees. Main thread only.
 */
#ifndef KS_TEST_TOPO_TESTLIB_H
#define KS_TEST_TOPO_TESTLIB_H

#include "mock_host.h"

#define TOPO_MAX_NODES 64

typedef struct topo_cluster {
    ks_node_info_t *nodes[TOPO_MAX_NODES];
    uint32_t n;
} topo_cluster_t;

/* One node per call, with labels kubernetes.io/hostname=<name> and, when
 * `zone` is not NULL, topology.kubernetes.io/zone=<zone>. Returns its
 * NodeInfo (4 CPU, 8Gi, 110 pods). */
ks_node_info_t *topo_add_node(topo_cluster_t *c, const char *name,
                              const char *zone);
ks_node_info_t *topo_node(const topo_cluster_t *c, const char *name);

/* A pod in `ns` named `name` with label app=<app> (no label when NULL). */
ks_pod_t *topo_pod(const char *ns, const char *name, const char *app);
/* Bind `pod` to node `node` (sets spec.nodeName, adds it to the NodeInfo). */
void topo_place(topo_cluster_t *c, ks_pod_t *pod, const char *node);
/* Take `pod` off its node. */
void topo_unplace(topo_cluster_t *c, ks_pod_t *pod);
/* Make the mock host's snapshot the cluster's nodes. */
void topo_sync(mock_host_t *mh, const topo_cluster_t *c);

/* Fixture shared by the plugin tests: `mh` is a fresh mock host, `pl` the
 * named plugin's descriptor loaded from the build, `self` an instance
 * created with default args. recreate() replaces the instance with one
 * created from `yaml` args (failing the test if create fails). */
extern mock_host_t *mh;
extern const ks_plugin_t *pl;
extern void *self;
void topo_setup(const char *plugin);
void topo_teardown(void);
void recreate(const char *yaml);

/* A selector with one requirement key In (values_csv). */
const ks_label_selector_t *topo_sel_in(const char *key, const char *values_csv);
/* The empty selector (selects everything). */
const ks_label_selector_t *topo_sel_all(void);

/* What Filter said about every node of one cycle. */
typedef struct topo_verdicts {
    ks_code_t code[TOPO_MAX_NODES];
    char reason[TOPO_MAX_NODES][200];
    ks_code_t prefilter; /* PreFilter's code */
} topo_verdicts_t;

/* PreFilter, then Filter on each node of `c` in order, one cycle state.
 * When PreFilter answers KS_SKIP, Filter still runs and every node must
 * pass (the test fails otherwise): Skip has to be sound.
 * Returns the cycle state (caller frees with mock_cycle_state_free) so
 * AddPod/RemovePod can be tried on it. */
ks_cycle_state_t *topo_filter_all(mock_host_t *mh, const ks_plugin_t *p,
                                  void *self, const ks_pod_t *pod,
                                  const topo_cluster_t *c, topo_verdicts_t *v);
/* Filter only (state from an earlier PreFilter). */
void topo_filter_with(mock_host_t *mh, const ks_plugin_t *p, void *self,
                      ks_cycle_state_t *cs, const ks_pod_t *pod,
                      const topo_cluster_t *c, topo_verdicts_t *v);
/* The names of the nodes whose verdict is KS_SUCCESS, comma-separated
 * ("" when none), into a static buffer. */
const char *topo_feasible(const topo_cluster_t *c, const topo_verdicts_t *v);

/* PreScore, Score and NormalizeScore over the nodes named in `names_csv`
 * (in that order), writing the normalised scores to out[]. Returns the
 * first non-success code. */
ks_code_t topo_score(mock_host_t *mh, const ks_plugin_t *p, void *self,
                     const ks_pod_t *pod, const topo_cluster_t *c,
                     const char *names_csv, int64_t *out);
/* The same scores as "name:score,..." into a static buffer. */
const char *topo_score_text(mock_host_t *mh, const ks_plugin_t *p, void *self,
                            const ks_pod_t *pod, const topo_cluster_t *c,
                            const char *names_csv);

#endif /* KS_TEST_TOPO_TESTLIB_H */
