/*
 * Framework generations (generation.h): build everything or nothing, and
 * free with the last reference. Out of memory is reported as KS_ENOMEM
 * with nothing built. Loop thread only.
 */
#include "generation.h"

#include "call_board.h"
#include "cluster/objects.h"
#include "extender/extender.h"
#include "quarantine.h"

#include <stdlib.h>
#include <string.h>

static uint64_t g_next_id = 1;

static void gen_free(ks_generation_t *g)
{
    size_t i;
    for (i = 0; i < g->n_fws; i++)
        ks_framework_free(g->fws[i]);
    free(g->fws);
    ks_registry_free(g->reg);
    ks_config_free(g->cfg);
    free(g);
}

int ks_generation_build(const ks_generation_opts_t *o, ks_generation_t **out,
                        ks_error_t *err)
{
    ks_generation_t *g = calloc(1, sizeof *g);
    const char *path = o->config_path ? o->config_path : "<default>";
    size_t i;
    int rc, par;

    *out = NULL;
    if (g == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    g->refs = 1;
    if (o->config) {
        g->cfg = o->config;
    } else if (o->config_path) {
        rc = ks_config_load_file(o->config_path, &g->cfg, err);
        if (rc != 0) {
            gen_free(g);
            return rc;
        }
    } else {
        g->cfg = ks_config_default();
        if (g->cfg == NULL) {
            gen_free(g);
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        }
    }
    ks_quarantine_begin();
    ks_call_board_set_building(g_next_id);
    rc = ks_registry_load(o->plugin_dirs, o->n_plugin_dirs, o->no_default_path,
                          &g->reg, err);
    if (rc != 0) {
        gen_free(g);
        return rc;
    }
    /* Plugins quarantined with nowhere to roll back to, under
     * --quarantine=disable: every profile runs without them. */
    ks_quarantine_apply(g->cfg);
    par = o->parallelism > 0 ? o->parallelism : g->cfg->parallelism;
    g->fws = calloc(g->cfg->n_profiles ? g->cfg->n_profiles : 1,
                    sizeof *g->fws);
    if (g->fws == NULL) {
        gen_free(g);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    for (i = 0; i < g->cfg->n_profiles; i++) {
        ks_framework_t *fw = NULL;
        if (ks_framework_build(&g->cfg->profiles[i], path, g->reg, par, &fw,
                               err) == 0)
            g->fws[g->n_fws++] = fw;
    }
    if (err && err->code == 0 && g->n_fws > 1) {
        /* Upstream: every profile must use the same QueueSort plugin. */
        const char *qs = g->fws[0]->points[KS_EP_QUEUE_SORT][0].inst->name;
        for (i = 1; i < g->n_fws; i++) {
            const char *o2 = g->fws[i]->points[KS_EP_QUEUE_SORT][0].inst->name;
            /* (names are never NULL; said so for GCC's format check) */
            if (qs != NULL && o2 != NULL && strcmp(qs, o2) != 0)
                ks_error_append(err, KS_EQUEUESORT,
                                "%s: profiles \"%s\" and \"%s\" use different "
                                "QueueSort plugins (%s, %s); all profiles "
                                "must share one",
                                path, g->fws[0]->profile_name,
                                g->fws[i]->profile_name, qs, o2);
        }
    }
    if (g->n_fws != g->cfg->n_profiles || (err && err->code != 0)) {
        rc = err && err->code ? err->code : KS_EINVAL;
        gen_free(g);
        return rc;
    }
    /* Extenders that are sent node objects: nodes read from now on keep
     * the object as read (never turned off again: a later reload may
     * need them). */
    if (ks_extender_wants_nodes(g->cfg))
        ks_node_keep_raw(1);
    g->id = g_next_id++;
    *out = g;
    return 0;
}

ks_generation_t *ks_generation_ref(ks_generation_t *g)
{
    g->refs++;
    return g;
}

void ks_generation_unref(ks_generation_t *g)
{
    if (g && --g->refs == 0)
        gen_free(g);
}

ks_framework_t *ks_generation_profile(const ks_generation_t *g,
                                      const char *scheduler_name)
{
    size_t i;
    for (i = 0; i < g->n_fws; i++)
        if (strcmp(g->fws[i]->profile_name, scheduler_name) == 0)
            return g->fws[i];
    return NULL;
}
