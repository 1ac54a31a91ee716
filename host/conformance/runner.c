/* Running a conformance scenario. */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cache.h"
#include "base/intern.h"
#include "framework/batch.h"
#include "framework/generation.h"
#include "framework/scheduler.h"
#include "framework/status.h"

typedef struct run_ctx {
    ks_conf_result_t *cur; /* the record of the pod being scheduled */
    int oom;
} run_ctx_t;

static char *pod_key(const ks_pod_t *pod)
{
    size_t n = strlen(pod->ns) + strlen(pod->name) + 2;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s/%s", pod->ns, pod->name);
    return s;
}

static char *dup_or_null(run_ctx_t *c, const char *s)
{
    char *d;
    if (s == NULL)
        return NULL;
    if ((d = strdup(s)) == NULL)
        c->oom = 1;
    return d;
}

/* Observer: a preemption victim is being deleted. */
static void on_deleted(void *ud, const ks_pod_t *pod)
{
    run_ctx_t *c = ud;
    char *k;
    if (c->cur == NULL)
        return;
    if ((k = pod_key(pod)) == NULL ||
        ks_conf_strv_push(&c->cur->victims, &c->cur->n_victims, k) != 0)
        c->oom = 1;
    free(k);
}

static void record_rejected(run_ctx_t *c, ks_conf_result_t *g,
                            const ks_cycle_result_t *r)
{
    const struct ks_node_status_map *m = r->statuses;
    uint32_t i, n;
    unsigned j;
    if (m == NULL)
        return;
    n = m->n < r->n_nodes ? m->n : r->n_nodes;
    for (i = 0; i < n; i++) {
        const ks_node_info_t *ni;
        ks_conf_reasons_t *e, *nr;
        if (!m->set[i])
            continue;
        ni = ks_snapshot_node_at(m->snap, i);
        nr = realloc(g->rejected, (g->n_rejected + 1) * sizeof *nr);
        if (nr == NULL) {
            c->oom = 1;
            return;
        }
        g->rejected = nr;
        e = &nr[g->n_rejected++];
        memset(e, 0, sizeof *e);
        e->node = dup_or_null(c, ni && ni->node ? ni->node->name : "?");
        for (j = 0; j < m->st[i].n_reasons; j++)
            if (ks_conf_strv_push(&e->reasons, &e->n_reasons,
                                  ks_status_reason(&m->st[i], j)) != 0)
                c->oom = 1;
    }
}

static void record_scores(run_ctx_t *c, ks_conf_result_t *g,
                          const ks_cycle_result_t *r)
{
    uint32_t k, n = r->n_feasible;
    size_t p, n_plugins;
    if (n == 0 || r->totals == NULL)
        return;
    if ((g->scores = calloc(n, sizeof *g->scores)) == NULL) {
        c->oom = 1;
        return;
    }
    for (k = 0; k < n; k++) {
        g->scores[k].node = dup_or_null(c, r->feasible[k]->node->name);
        g->scores[k].score = r->totals[k];
        g->n_scores = k + 1;
    }
    if (!r->scored || r->scores == NULL)
        return;
    n_plugins = r->fw->n_points[KS_EP_SCORE];
    if (n_plugins == 0)
        return;
    if ((g->plugin_scores = calloc(n_plugins, sizeof *g->plugin_scores)) ==
        NULL) {
        c->oom = 1;
        return;
    }
    for (p = 0; p < n_plugins; p++) {
        ks_conf_plugin_scores_t *ps = &g->plugin_scores[p];
        g->n_plugin_scores = p + 1;
        ps->plugin =
            dup_or_null(c, r->fw->points[KS_EP_SCORE][p].inst->name);
        if ((ps->scores = calloc(n, sizeof *ps->scores)) == NULL) {
            c->oom = 1;
            return;
        }
        for (k = 0; k < n; k++) {
            ps->scores[k].node = dup_or_null(c, r->feasible[k]->node->name);
            /* a row of a plugin that skipped Score is not written */
            ps->scores[k].score =
                r->score_skipped && r->score_skipped[p]
                    ? 0
                    : ks_cycle_result_score(r, p, k);
            ps->n_scores = k + 1;
        }
    }
}

/* Scheduler callback: convert one cycle's result. */
static void on_cycle(void *ud, const ks_cycle_result_t *r)
{
    run_ctx_t *c = ud;
    ks_conf_result_t *g = c->cur;
    uint32_t k;
    if (g == NULL)
        return;
    for (k = 0; k < r->n_feasible; k++)
        if (ks_conf_strv_push(&g->feasible, &g->n_feasible,
                              r->feasible[k]->node->name) != 0)
            c->oom = 1;
    record_rejected(c, g, r);
    record_scores(c, g, r);
    if (r->error) {
        g->error = dup_or_null(c, r->message ? r->message
                                             : "scheduling cycle failed");
        return;
    }
    g->selected = dup_or_null(c, r->selected);
    if (r->selected == NULL)
        g->unschedulable = dup_or_null(c, r->message ? r->message : "");
    g->nominated = dup_or_null(c, r->nominated);
}

static void set_error(ks_conf_result_t *g, const char *fmt, const char *msg)
{
    size_t n = strlen(fmt) + strlen(msg) + 1;
    free(g->error);
    if ((g->error = malloc(n)) != NULL)
        snprintf(g->error, n, fmt, msg);
}

/* Prefix err's message with "PATH: WHAT[I]: ". */
static int wrap_error(ks_error_t *err, int rc, const char *path,
                      const char *what, size_t i)
{
    char msg[KS_ERROR_MSG_MAX / 2];
    snprintf(msg, sizeof msg, "%.4000s",
             err->msg[0] ? err->msg : ks_strerror(rc));
    return ks_error_set(err, rc, "%s: %s[%zu]: %s", path, what, i, msg);
}

/* Put nodes, services and running pods into a new cache. */
static int fill_cache(ks_scenario_t *sc, ks_cache_t *cache, ks_error_t *err)
{
    size_t i;
    int rc;
    for (i = 0; i < sc->n_nodes; i++) {
        ks_node_t *node = sc->nodes[i];
        sc->nodes[i] = NULL;
        err->msg[0] = '\0';
        if ((rc = ks_cache_add_node(cache, node, err)) != 0) {
            ks_node_free(node);
            return wrap_error(err, rc, sc->path, "nodes", i);
        }
    }
    for (i = 0; i < sc->n_services; i++) {
        ks_service_t *svc = sc->services[i];
        sc->services[i] = NULL;
        err->msg[0] = '\0';
        if ((rc = ks_cache_add_service(cache, svc)) != 0) {
            ks_service_free(svc);
            return wrap_error(err, rc, sc->path, "services", i);
        }
    }
    for (i = 0; i < sc->n_pods; i++) {
        ks_pod_t *pod = sc->pods[i];
        sc->pods[i] = NULL;
        err->msg[0] = '\0';
        if ((rc = ks_cache_add_pod(cache, pod, err)) != 0) {
            ks_pod_free(pod);
            return wrap_error(err, rc, sc->path, "pods", i);
        }
    }
    return 0;
}

/* Add the scheduler's batching and bulk counts to the caller's and free
 * it. */
static void scheduler_done(ks_scheduler_t *s, const ks_conf_run_opts_t *o)
{
    ks_sched_stats_t st;
    if (s == NULL)
        return;
    st = ks_scheduler_stats(s);
    if (o->batch_reused)
        *o->batch_reused += st.batch_reused;
    if (o->batch_mismatches)
        *o->batch_mismatches += st.batch_mismatches;
    if (o->bulk_compared)
        *o->bulk_compared += st.bulk_compared;
    if (o->bulk_mismatches)
        *o->bulk_mismatches += st.bulk_mismatches;
    ks_scheduler_free(s);
}

/* v1.24.1's default plugins had no DynamicResources (DRA came in beta in
 * v1.32 and in the default set with v1.34): the scenarios' expected
 * results are v1.24.1's, so the default entry is taken out (a scenario
 * that names the plugin keeps it). */
static void drop_newer_defaults(ks_config_t *cfg)
{
    size_t p, i, k;
    for (p = 0; p < cfg->n_profiles; p++) {
        ks_plugin_set_t *mp = &cfg->profiles[p].points[KS_EP_MULTI_POINT];
        for (i = k = 0; i < mp->n_enabled; i++)
            if (mp->enabled[i].line != 0 ||
                strcmp(mp->enabled[i].name, "DynamicResources") != 0)
                mp->enabled[k++] = mp->enabled[i];
        mp->n_enabled = k;
    }
}

int ks_conformance_run(ks_scenario_t *sc, const ks_conf_run_opts_t *o,
                       ks_conf_results_t *got, ks_error_t *err)
{
    ks_scheduler_t *s = NULL;
    ks_generation_opts_t go;
    ks_generation_t *gen = NULL;
    ks_cache_t *cache = NULL;
    ks_sched_opts_t so;
    run_ctx_t ctx = {NULL, 0};
    ks_intern_t *in = ks_intern_global();
    const char *profile;
    ks_error_t local = {0};
    size_t i;
    int rc;

    if (err == NULL)
        err = &local;
    err->code = 0;
    err->msg[0] = '\0';
    if ((got->name = strdup(sc->name)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");

    memset(&go, 0, sizeof go);
    go.plugin_dirs = o->plugin_dirs;
    go.n_plugin_dirs = o->n_plugin_dirs;
    go.no_default_path = o->no_default_path;
    go.parallelism = o->parallelism;
    go.config = sc->config ? sc->config : ks_config_default();
    go.config_path = sc->path;
    sc->config = NULL;
    if (go.config == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    drop_newer_defaults(go.config);
    if ((rc = ks_generation_build(&go, &gen, err)) != 0)
        return rc;
    if (gen->n_fws == 0) {
        ks_generation_unref(gen);
        return ks_error_set(err, KS_EINVAL, "%s: the config has no profile",
                            sc->path);
    }
    /* profiles[0] schedules every pod. */
    profile = ks_intern_str(in, gen->fws[0]->profile_name);

    if ((cache = ks_cache_new(in)) == NULL) {
        ks_generation_unref(gen);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    if ((rc = fill_cache(sc, cache, err)) != 0)
        goto done;

    memset(&so, 0, sizeof so);
    so.deterministic = 1;
    so.run_all_filters = 1;
    so.score_skipped = 1; /* v1.24.1 had no PreScore Skip */
    so.absent_success = 1; /* v1.24.1: a node without a status is Success */
    so.prefilter_counted = 1; /* v1.24.1: PreFilter reasons per node */
    so.score_single_node = 1;
    so.percentage_override = 100;
    so.batching = o->batching;
    so.bulk = o->bulk;
    so.obs.deleted = on_deleted;
    so.obs.ud = &ctx;

    for (i = 0; i < sc->n_schedule; i++) {
        ks_pod_t *pod = sc->schedule[i];
        ks_conf_result_t *g = ks_conf_results_append(got);
        ks_error_t e = {0};
        const char *target;

        sc->schedule[i] = NULL;
        if (g == NULL || (g->pod = pod_key(pod)) == NULL) {
            ks_pod_free(pod);
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto done;
        }
        pod->scheduler_name = profile;
        /* A scheduler per pod, or (batching) kept while pods are simply
         * bound: nothing but the cache and the batching results carries
         * over from one pod to the next (in particular no nomination: a
         * preemptor is bound to its nominated node right away, and the
         * next pod gets a new scheduler). */
        if (s == NULL && (s = ks_scheduler_new(gen, cache, &so)) == NULL) {
            ks_pod_free(pod);
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto done;
        }
        ctx.cur = g;
        rc = ks_scheduler_try(s, pod, on_cycle, &ctx, &e);
        ctx.cur = NULL;
        if (o->batching == KS_BATCHING_OFF || rc != 0 || ctx.oom ||
            g->error || g->selected == NULL || g->nominated) {
            scheduler_done(s, o);
            s = NULL;
        }
        if (ctx.oom) {
            ks_pod_free(pod);
            rc = ks_error_set(err, KS_ENOMEM, "out of memory");
            goto done;
        }
        if (rc != 0) {
            set_error(g, "scheduling attempt failed: %s",
                      e.msg[0] ? e.msg : ks_strerror(rc));
            ks_pod_free(pod);
            rc = 0;
            continue;
        }
        ks_conf_result_normalise(g);
        target = g->error ? NULL : g->selected ? g->selected : g->nominated;
        if (target == NULL) {
            ks_pod_free(pod);
            continue;
        }
        pod->node_name = ks_intern_str(in, target);
        if (ks_cache_add_pod(cache, pod, &e) != 0) {
            set_error(g, "binding failed: %s", e.msg);
            ks_pod_free(pod);
        }
    }
    rc = 0;
done:
    scheduler_done(s, o);
    ks_cache_free(cache);
    ks_generation_unref(gen);
    return rc;
}
