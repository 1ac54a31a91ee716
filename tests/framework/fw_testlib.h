/*
 * Helpers shared by the framework tests: fixture paths, inline profiles,
 * a small cluster in a cache, and the probe plugins' call traces.
 *
 * Everything here fails the current Check test (ck_assert) instead of
 * returning errors. Strings returned as `char *` are malloc'd and belong to
 * the caller. Single-threaded.
 */
#ifndef KS_FW_TESTLIB_H
#define KS_FW_TESTLIB_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cache.h"
#include "cluster/objects.h"
#include "config/config.h"
#include "framework/framework.h"
#include "framework/generation.h"
#include "framework/registry.h"

/* $KS_TEST_FIXTURE_DIR (the build folder of tests/fixtures) and
 * $KS_TEST_PLUGIN_DIR (the build folder of plugins/). */
const char *tl_fixture_dir(void);
const char *tl_plugin_dir(void);
/* "<fixture dir>/<rel>" */
char *tl_fixture(const char *rel);

/* `tmpl` with every "@KEY@" (key given without the @) replaced by `val`. */
char *tl_subst(const char *tmpl, const char *key, const char *val);

/* PROFILE_SORT_ONLY + `plugins` (more extension points) + "  pluginConfig:"
 * + `config` (its entries), every "@T@" replaced by `trace`. */
char *tl_sort_only_yaml(const char *plugins, const char *config,
                        const char *trace);

/* A config from inline YAML ("inline.yaml" in messages); must be valid. */
ks_config_t *tl_config(const char *yaml);
/* The registry of fixtures/plugins + the real plugins, nothing else. */
ks_registry_t *tl_registry(void);

/* A fresh empty file for a probe's traceFile, and its contents. */
char *tl_trace_new(void);
char *tl_read_file(const char *path);
/* Index of the line equal to `line` in `text` (0-based), or -1. */
int tl_line_index(const char *text, const char *line);
/* Number of lines of `text` that start with `prefix`. */
int tl_count_prefix(const char *text, const char *prefix);

/* A cluster: every node and every bound pod of the manifest in a cache,
 * a snapshot of it, and an env for frameworks. Pending pods stay in m. */
typedef struct tl_world {
    ks_manifest_t m;
    ks_cache_t *cache;
    ks_snapshot_t *snap;
    ks_fw_env_t env;
} tl_world_t;

void tl_world_init(tl_world_t *w, const char *manifest_yaml);
void tl_world_free(tl_world_t *w);
/* Refresh the snapshot after a cache change. */
void tl_world_sync(tl_world_t *w);
/* A pending pod of the manifest by name (still owned by the manifest). */
ks_pod_t *tl_world_pod(tl_world_t *w, const char *name);
/* The same, handed over: the manifest forgets it. */
ks_pod_t *tl_world_take_pod(tl_world_t *w, const char *name);
const ks_node_info_t *tl_world_node(tl_world_t *w, const char *name);

/* "apiVersion: v1\nkind: Node ..." for a node with 4 cpu / 8Gi / 110 pods. */
char *tl_node_yaml(const char *name);
/* A pending pod (priority, optional nominatedNodeName, "" for none). */
char *tl_pod_yaml(const char *name, int priority, const char *nominated);

/* A generation (own registry: every plugin loaded afresh) from inline
 * YAML, or the default configuration when yaml is NULL, with the fixture
 * plugins and the real ones, parallelism 1. Must succeed. */
ks_generation_t *tl_generation(const char *yaml);
/* The same with `parallelism` Filter and Score threads (at most the CPUs:
 * the host's own cap). */
ks_generation_t *tl_generation_par(const char *yaml, int parallelism);

/* A scheduler clock (ks_scheduler_set_clock) reading the int64_t that `ud`
 * points to, so a test moves time by assigning it. */
int64_t tl_clock(void *ud);

/* Append printf-style text to the string in buf[len] (bounded, always
 * terminated): the call records that observers keep. */
void tl_appendf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Run suite `s` (CK_NORMAL) and free it; the process exit status: 0 when
 * every test passed, else 1. */
int tl_run_suite(Suite *s);

/* Build a framework for the first profile of `cfg` (parallelism 1) and
 * attach `env` (may be NULL). Must succeed. */
ks_framework_t *tl_framework(const ks_config_t *cfg, const ks_registry_t *reg,
                             ks_fw_env_t *env);


/* Profile YAML fragments shared by the framework tests. */

/* A configuration's start, up to its one profile, default-scheduler. */
#define PROFILE_HEAD                                                           \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                            \
    "kind: KubeSchedulerConfiguration\n"                                       \
    "profiles:\n"                                                              \
    "- schedulerName: default-scheduler\n"

/* PROFILE_HEAD with every default plugin disabled and PrioritySort as the
 * queue sort; more extension points may follow. */
#define PROFILE_SORT_ONLY                                                      \
    PROFILE_HEAD                                                               \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled:\n"                                                        \
    "      - name: '*'\n"                                                      \
    "    queueSort:\n"                                                         \
    "      enabled:\n"                                                         \
    "      - name: PrioritySort\n"

/* A configuration's `profiles:` from its start: one profile,
 * default-scheduler, every default plugin disabled and PrioritySort as
 * the queue sort, in flow style; its extension points may follow. For a
 * configuration with top-level fields before its profiles. */
#define TL_PROFILES_SORT_ONLY                                                  \
    "profiles:\n"                                                              \
    "- schedulerName: default-scheduler\n"                                     \
    "  plugins:\n"                                                             \
    "    multiPoint:\n"                                                        \
    "      disabled: [{name: '*'}]\n"                                          \
    "    queueSort:\n"                                                         \
    "      enabled: [{name: PrioritySort}]\n"

/* A node manifest document with 4 cpu / 8Gi / 110 pods (string literal). */
#define TL_NODE_DOC(name)                                                      \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"         \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

#define BIND_DEFAULT                                                           \
    "    bind:\n"                                                              \
    "      enabled:\n"                                                         \
    "      - name: DefaultBinder\n"

/* One pluginConfig entry for a probe writing to the shared trace file
 * ('@T@' is replaced by the trace path). */
#define PROBE_CFG(name, body)                                                  \
    "  - name: " name "\n"                                                     \
    "    args:\n"                                                              \
    "      traceFile: '@T@'\n" body

#endif
