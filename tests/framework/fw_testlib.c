#include "fw_testlib.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/intern.h"

static const char *env_dir(const char *var)
{
    const char *d = getenv(var);
    ck_assert_msg(d != NULL && d[0] != '\0', "%s is not set", var);
    return d;
}

const char *tl_fixture_dir(void)
{
    return env_dir("KS_TEST_FIXTURE_DIR");
}

const char *tl_plugin_dir(void)
{
    return env_dir("KS_TEST_PLUGIN_DIR");
}

char *tl_fixture(const char *rel)
{
    const char *d = tl_fixture_dir();
    size_t n = strlen(d) + strlen(rel) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", d, rel);
    return p;
}

char *tl_subst(const char *tmpl, const char *key, const char *val)
{
    char pat[128];
    size_t cap = strlen(tmpl) + 1, n = 0, plen, vlen = strlen(val);
    const char *s = tmpl, *hit;
    char *out;
    snprintf(pat, sizeof pat, "@%s@", key);
    plen = strlen(pat);
    for (hit = strstr(s, pat); hit; hit = strstr(hit + plen, pat))
        cap += vlen;
    out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    while ((hit = strstr(s, pat)) != NULL) {
        memcpy(out + n, s, (size_t)(hit - s));
        n += (size_t)(hit - s);
        memcpy(out + n, val, vlen);
        n += vlen;
        s = hit + plen;
    }
    strcpy(out + n, s);
    return out;
}

char *tl_sort_only_yaml(const char *plugins, const char *config,
                        const char *trace)
{
    size_t n =
        strlen(PROFILE_SORT_ONLY) + strlen(plugins) + strlen(config) + 32;
    char *yaml = malloc(n), *full;
    ck_assert_ptr_nonnull(yaml);
    snprintf(yaml, n, "%s%s  pluginConfig:\n%s", PROFILE_SORT_ONLY, plugins,
             config);
    full = tl_subst(yaml, "T", trace);
    free(yaml);
    return full;
}

ks_config_t *tl_config(const char *yaml)
{
    ks_config_t *cfg = NULL;
    ks_error_t err = {0};
    int rc = ks_config_load_string("inline.yaml", yaml, strlen(yaml), &cfg,
                                   &err);
    ck_assert_msg(rc == 0, "config: %s", err.msg);
    ck_assert_ptr_nonnull(cfg);
    return cfg;
}

ks_registry_t *tl_registry(void)
{
    char *fx = tl_fixture("plugins");
    const char *dirs[2];
    ks_registry_t *reg = NULL;
    ks_error_t err = {0};
    int rc;
    dirs[0] = fx;
    dirs[1] = tl_plugin_dir();
    rc = ks_registry_load(dirs, 2, 1, &reg, &err);
    ck_assert_msg(rc == 0, "registry: %s", err.msg);
    free(fx);
    return reg;
}

char *tl_trace_new(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(4096);
    int fd;
    ck_assert_ptr_nonnull(path);
    snprintf(path, 4096, "%s/ks-trace-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return path;
}

char *tl_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

int tl_line_index(const char *text, const char *line)
{
    size_t len = strlen(line);
    int idx = 0;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == len && memcmp(s, line, len) == 0)
            return idx;
        idx++;
        if (e == NULL)
            break;
        s = e + 1;
    }
    return -1;
}

int tl_count_prefix(const char *text, const char *prefix)
{
    size_t len = strlen(prefix);
    int n = 0;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        if (strncmp(s, prefix, len) == 0)
            n++;
        if (e == NULL)
            break;
        s = e + 1;
    }
    return n;
}

void tl_world_init(tl_world_t *w, const char *yaml)
{
    ks_error_t err = {0};
    size_t i;
    int rc;
    memset(w, 0, sizeof *w);
    rc = ks_manifest_load_string(&w->m, "cluster.yaml", yaml, strlen(yaml),
                                 ks_intern_global(), NULL, &err);
    ck_assert_msg(rc == 0, "manifest: %s", err.msg);
    w->cache = ks_cache_new(ks_intern_global());
    ck_assert_ptr_nonnull(w->cache);
    for (i = 0; i < w->m.n_nodes; i++) {
        rc = ks_cache_add_node(w->cache, w->m.nodes[i], &err);
        ck_assert_msg(rc == 0, "add node: %s", err.msg);
        w->m.nodes[i] = NULL;
    }
    for (i = 0; i < w->m.n_pods; i++) {
        ks_pod_t *pod = w->m.pods[i];
        if (pod->node_name[0] == '\0')
            continue;
        rc = ks_cache_add_pod(w->cache, pod, &err);
        ck_assert_msg(rc == 0, "add pod: %s", err.msg);
        w->m.pods[i] = NULL;
    }
    w->snap = ks_snapshot_new();
    tl_world_sync(w);
    w->env.snapshot = w->snap;
    w->env.cache = w->cache;
    w->env.deterministic = 1;
    w->env.rng = 1;
}

void tl_world_sync(tl_world_t *w)
{
    ks_error_t err = {0};
    int rc = ks_cache_update_snapshot(w->cache, w->snap, &err);
    ck_assert_msg(rc == 0, "snapshot: %s", err.msg);
}

void tl_world_free(tl_world_t *w)
{
    ks_snapshot_free(w->snap);
    ks_cache_free(w->cache);
    ks_manifest_free(&w->m);
}

static size_t pod_index(tl_world_t *w, const char *name)
{
    size_t i;
    for (i = 0; i < w->m.n_pods; i++)
        if (w->m.pods[i] && strcmp(w->m.pods[i]->name, name) == 0)
            return i;
    ck_abort_msg("no pending pod %s in the manifest", name);
    return 0;
}

ks_pod_t *tl_world_pod(tl_world_t *w, const char *name)
{
    return w->m.pods[pod_index(w, name)];
}

ks_pod_t *tl_world_take_pod(tl_world_t *w, const char *name)
{
    size_t i = pod_index(w, name);
    ks_pod_t *p = w->m.pods[i];
    w->m.pods[i] = NULL;
    return p;
}

const ks_node_info_t *tl_world_node(tl_world_t *w, const char *name)
{
    const ks_node_info_t *ni = ks_snapshot_get(w->snap, name);
    ck_assert_msg(ni != NULL, "no node %s in the snapshot", name);
    return ni;
}

ks_generation_t *tl_generation(const char *yaml)
{
    return tl_generation_par(yaml, 1);
}

ks_generation_t *tl_generation_par(const char *yaml, int parallelism)
{
    char *fx = tl_fixture("plugins");
    const char *dirs[2];
    ks_generation_opts_t o;
    ks_generation_t *g = NULL;
    ks_error_t err = {0};
    dirs[0] = fx;
    dirs[1] = tl_plugin_dir();
    memset(&o, 0, sizeof o);
    if (yaml != NULL) {
        o.config = tl_config(yaml);
        o.config_path = "inline.yaml";
    }
    o.plugin_dirs = dirs;
    o.n_plugin_dirs = 2;
    o.no_default_path = 1;
    o.parallelism = parallelism;
    ck_assert_msg(ks_generation_build(&o, &g, &err) == 0, "%s", err.msg);
    free(fx);
    return g;
}

char *tl_node_yaml(const char *name)
{
    char *s = malloc(512);
    ck_assert_ptr_nonnull(s);
    snprintf(s, 512,
             "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
             "  labels: {kubernetes.io/hostname: %s}\n"
             "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n",
             name, name);
    return s;
}

char *tl_pod_yaml(const char *name, int priority, const char *nominated)
{
    char *s = malloc(1024);
    int n;
    ck_assert_ptr_nonnull(s);
    n = snprintf(s, 1024,
                 "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"
                 "  namespace: default\nspec:\n  priority: %d\n"
                 "  containers:\n  - name: c\n    image: busybox\n",
                 name, priority);
    if (nominated && nominated[0])
        snprintf(s + n, 1024 - (size_t)n, "status:\n  nominatedNodeName: %s\n",
                 nominated);
    return s;
}

ks_framework_t *tl_framework(const ks_config_t *cfg, const ks_registry_t *reg,
                             ks_fw_env_t *env)
{
    ks_framework_t *fw = NULL;
    ks_error_t err = {0};
    int rc = ks_framework_build(&cfg->profiles[0], "inline.yaml", reg, 1, &fw,
                                &err);
    ck_assert_msg(rc == 0, "framework: %s", err.msg);
    ck_assert_ptr_nonnull(fw);
    if (env)
        ks_framework_set_env(fw, env);
    return fw;
}

int64_t tl_clock(void *ud)
{
    return *(const int64_t *)ud;
}

void tl_appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t l = strlen(buf);
    va_list ap;
    if (l + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + l, len - l, fmt, ap);
    va_end(ap);
}

int tl_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
