/*
 * Building a framework from a merged profile and the plugin registry (see
 * framework.h for the checks and their order).
 *
 * Out of memory while building is one more problem in the error list
 * (KS_ENOMEM); the half-built framework is freed and nothing is returned.
 * Loop thread only.
 */
#include "framework.h"
#include "plugin_async.h"

#include "call_board.h"
#include "quarantine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/object_store.h"
#include "config/ext_points.h"
#include "pool.h"

int ks_plugin_implements(const ks_plugin_t *d, ks_ext_point_t ep)
{
    switch (ep) {
#define KS_EP_IMPL(e, key, name, metric, fn, impl)                             \
    case KS_EP_##e: return (impl);
        KS_EXT_POINT_MAP(KS_EP_IMPL)
#undef KS_EP_IMPL
    case KS_EP_COUNT: break;
    }
    return 0;
}

const char *ks_ext_point_fn(ks_ext_point_t ep)
{
    switch (ep) {
#define KS_EP_FN(e, key, name, metric, fn, impl)                               \
    case KS_EP_##e: return fn;
        KS_EXT_POINT_MAP(KS_EP_FN)
#undef KS_EP_FN
    case KS_EP_COUNT: break;
    }
    return "";
}

static ks_plugin_inst_t *inst_find(ks_framework_t *fw, const char *name)
{
    size_t i;
    for (i = 0; i < fw->n_insts; i++)
        if (strcmp(fw->insts[i]->name, name) == 0)
            return fw->insts[i];
    return NULL;
}

/* The framework's instance of lp, made on first use; NULL when out of
 * memory (nothing changed). */
static ks_plugin_inst_t *inst_get(ks_framework_t *fw, ks_loaded_plugin_t *lp)
{
    ks_plugin_inst_t *in = inst_find(fw, lp->desc.name);
    ks_plugin_inst_t **insts;
    if (in)
        return in;
    insts = realloc(fw->insts, (fw->n_insts + 1) * sizeof *fw->insts);
    if (insts == NULL)
        return NULL;
    fw->insts = insts;
    if ((in = calloc(1, sizeof *in)) == NULL)
        return NULL;
    in->lp = ks_plugin_ref(lp);
    in->d = &lp->desc;
    in->name = lp->desc.name;
    in->handle.fw = fw;
    in->handle.inst = in;
    fw->insts[fw->n_insts++] = in;
    return in;
}

static int list_has(const ks_point_entry_t *l, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(l[i].inst->name, name) == 0)
            return 1;
    return 0;
}

/* Append `in` to the runtime list of ep; -1 when out of memory. */
static int list_push(ks_framework_t *fw, ks_ext_point_t ep,
                     ks_plugin_inst_t *in)
{
    ks_point_entry_t *l = realloc(fw->points[ep],
                                  (fw->n_points[ep] + 1) * sizeof *l);
    if (l == NULL)
        return -1;
    fw->points[ep] = l;
    l[fw->n_points[ep]].inst = in;
    l[fw->n_points[ep]].weight = 0;
    l[fw->n_points[ep]].filter_at = -1;
    fw->n_points[ep]++;
    return 0;
}

static int set_has(const ks_plugin_ref_t *refs, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(refs[i].name, name) == 0)
            return 1;
    return 0;
}

/* "FILE:L:C: " for a plugin reference, or "" for defaults. */
static const char *where(char *buf, size_t len, const char *path,
                         const ks_plugin_ref_t *r)
{
    if (r->line)
        snprintf(buf, len, "%s:%u:%u: ", path, r->line, r->column);
    else
        buf[0] = '\0';
    return buf;
}

/* Resolve a plugin name, reporting a missing one. */
static ks_loaded_plugin_t *resolve(const ks_registry_t *reg, const char *prof,
                                   const char *path, const ks_plugin_ref_t *r,
                                   ks_ext_point_t ep, ks_error_t *err)
{
    char w[512];
    ks_loaded_plugin_t *lp = ks_registry_get(reg, r->name);
    size_t i, off = 0;
    char dirs[1024] = "";
    if (lp)
        return lp;
    for (i = 0; i < reg->n_dirs && off < sizeof dirs; i++)
        off += (size_t)snprintf(dirs + off, sizeof dirs - off, "%s%s",
                                i ? ":" : "", reg->dirs[i]);
    ks_error_append(err, KS_ENOTFOUND,
                    "%sprofile \"%s\": plugin \"%s\" (enabled at %s) was not "
                    "found in the plugin path %s; build or install it, or pass "
                    "--plugin-dir",
                    where(w, sizeof w, path, r), prof, r->name,
                    ks_ext_point_name(ep), dirs[0] ? dirs : "(empty)");
    return NULL;
}

/* Out of memory while building: one more problem in the list; -1. */
static int nomem(const ks_framework_t *fw, ks_error_t *err)
{
    ks_error_append(err, KS_ENOMEM, "profile \"%s\": out of memory",
                    fw->profile_name);
    return -1;
}

/* The runtime lists of every point: 0, 1 when the profile has problems
 * (all appended to err), -1 when out of memory. */
static int build_points(ks_framework_t *fw, const ks_profile_config_t *prof,
                        const char *path, const ks_registry_t *reg,
                        ks_error_t *err)
{
    const ks_plugin_set_t *mp = &prof->points[KS_EP_MULTI_POINT];
    int bad = 0, oom = 0;
    size_t i, k;
    int ep;
    char w[512];

    /* multiPoint plugins must all exist. */
    for (i = 0; i < mp->n_enabled; i++)
        if (resolve(reg, fw->profile_name, path, &mp->enabled[i],
                    KS_EP_MULTI_POINT, err) == NULL)
            bad = 1;

    for (ep = 0; ep < KS_EP_MULTI_POINT; ep++) {
        const ks_plugin_set_t *ps = &prof->points[ep];
        ks_point_entry_t *spec = NULL; /* specific-point plugins */
        size_t n_spec = 0;
        const char **mpe = NULL; /* multiPoint-enabled names */
        size_t n_mpe = 0;
        uint8_t *override = NULL;
        int all_disabled = set_has(ps->disabled, ps->n_disabled, "*");

        for (i = 0; i < ps->n_enabled; i++) {
            const ks_plugin_ref_t *r = &ps->enabled[i];
            ks_loaded_plugin_t *lp = resolve(reg, fw->profile_name, path, r,
                                             (ks_ext_point_t)ep, err);
            ks_point_entry_t *more;
            if (lp == NULL) {
                bad = 1;
                continue;
            }
            if (!ks_plugin_implements(&lp->desc, (ks_ext_point_t)ep)) {
                ks_error_append(err, KS_EMISSINGFN,
                                "%sprofile \"%s\": plugin \"%s\" (%s) is "
                                "enabled at %s but does not implement %s",
                                where(w, sizeof w, path, r), fw->profile_name,
                                r->name, ks_plugin_file(lp),
                                ks_ext_point_name((ks_ext_point_t)ep),
                                ks_ext_point_fn((ks_ext_point_t)ep));
                bad = 1;
                continue;
            }
            if (list_has(spec, n_spec, r->name)) {
                ks_error_append(err, KS_EDUPPOINT,
                                "%sprofile \"%s\": plugin \"%s\" is enabled "
                                "twice at %s; remove one entry",
                                where(w, sizeof w, path, r), fw->profile_name,
                                r->name, ks_ext_point_name((ks_ext_point_t)ep));
                bad = 1;
                continue;
            }
            more = realloc(spec, (n_spec + 1) * sizeof *spec);
            if (more != NULL)
                spec = more;
            if (more == NULL ||
                (spec[n_spec].inst = inst_get(fw, lp)) == NULL) {
                oom = 1;
                break;
            }
            spec[n_spec].weight = r->weight;
            n_spec++;
        }
        if (!oom && (override = calloc(n_spec + 1, 1)) == NULL)
            oom = 1;
        if (!oom && !all_disabled) {
            for (i = 0; i < mp->n_enabled; i++) {
                const ks_plugin_ref_t *r = &mp->enabled[i];
                ks_loaded_plugin_t *lp = ks_registry_get(reg, r->name);
                int found = 0;
                if (lp == NULL ||
                    !ks_plugin_implements(&lp->desc, (ks_ext_point_t)ep))
                    continue;
                if (set_has(ps->disabled, ps->n_disabled, r->name))
                    continue;
                for (k = 0; k < n_spec; k++)
                    if (strcmp(spec[k].inst->name, r->name) == 0) {
                        override[k] = 1;
                        found = 1;
                    }
                if (found)
                    continue;
                for (k = 0; k < n_mpe; k++)
                    if (strcmp(mpe[k], r->name) == 0)
                        found = 1;
                if (found) {
                    ks_error_append(err, KS_EDUPPOINT,
                                    "%sprofile \"%s\": plugin \"%s\" is "
                                    "enabled twice at multiPoint; remove one "
                                    "entry",
                                    where(w, sizeof w, path, r),
                                    fw->profile_name, r->name);
                    bad = 1;
                    continue;
                }
                {
                    const char **more =
                        realloc(mpe, (n_mpe + 1) * sizeof *mpe);
                    if (more == NULL) {
                        oom = 1;
                        break;
                    }
                    mpe = more;
                }
                mpe[n_mpe++] = r->name;
            }
        }
        /* Upstream's order: overridden specific plugins, then multiPoint
         * ones, then the remaining specific plugins. */
        for (k = 0; !oom && k < n_spec; k++)
            if (override[k] && list_push(fw, (ks_ext_point_t)ep,
                                         spec[k].inst) != 0)
                oom = 1;
        for (k = 0; !oom && k < n_mpe; k++) {
            ks_plugin_inst_t *in = inst_get(fw, ks_registry_get(reg, mpe[k]));
            if (in == NULL || list_push(fw, (ks_ext_point_t)ep, in) != 0)
                oom = 1;
        }
        for (k = 0; !oom && k < n_spec; k++)
            if (!override[k] && list_push(fw, (ks_ext_point_t)ep,
                                          spec[k].inst) != 0)
                oom = 1;
        free(override);
        free(spec);
        free(mpe);
        if (oom)
            return nomem(fw, err);
    }
    return bad;
}

/* upstream getScoreWeights: Score.Enabled first, then MultiPoint.Enabled;
 * the first weight seen wins; 0 means 1. */
static int build_weights(ks_framework_t *fw, const ks_profile_config_t *prof,
                         const char *path, ks_error_t *err)
{
    const ks_plugin_set_t *sets[2] = {&prof->points[KS_EP_SCORE],
                                      &prof->points[KS_EP_MULTI_POINT]};
    int64_t total = 0;
    size_t s, i, k;
    char w[512];
    for (s = 0; s < 2; s++) {
        for (i = 0; i < sets[s]->n_enabled; i++) {
            const ks_plugin_ref_t *r = &sets[s]->enabled[i];
            for (k = 0; k < fw->n_points[KS_EP_SCORE]; k++) {
                ks_point_entry_t *e = &fw->points[KS_EP_SCORE][k];
                int32_t wt;
                if (strcmp(e->inst->name, r->name) != 0 || e->weight != 0)
                    continue;
                wt = r->weight == 0 ? 1 : r->weight;
                if (wt < 0) {
                    ks_error_append(err, KS_EWEIGHT,
                                    "%sprofile \"%s\": score weight of plugin "
                                    "\"%s\" is %d; it must be positive",
                                    where(w, sizeof w, path, r),
                                    fw->profile_name, r->name, wt);
                    return 1;
                }
                if ((int64_t)wt * KS_MAX_NODE_SCORE > INT64_MAX - total) {
                    ks_error_append(err, KS_EWEIGHT,
                                    "%sprofile \"%s\": total score of Score "
                                    "plugins could overflow; lower the "
                                    "weights",
                                    where(w, sizeof w, path, r),
                                    fw->profile_name);
                    return 1;
                }
                e->weight = wt;
                total += (int64_t)wt * KS_MAX_NODE_SCORE;
            }
        }
    }
    for (k = 0; k < fw->n_points[KS_EP_SCORE]; k++)
        if (fw->points[KS_EP_SCORE][k].weight == 0)
            fw->points[KS_EP_SCORE][k].weight = 1;
    return 0;
}

static int check_counts(ks_framework_t *fw, const char *path, uint32_t line,
                        ks_error_t *err)
{
    /* The points whose plugins a cycle tracks in a 64-bit mask. */
    static const ks_ext_point_t masked[] = {KS_EP_FILTER, KS_EP_SCORE,
                                            KS_EP_PERMIT};
    size_t i;
    int bad = 0;
    char w[512] = "";
    if (line)
        snprintf(w, sizeof w, "%s:%u: ", path, line);
    if (fw->n_points[KS_EP_QUEUE_SORT] != 1) {
        char names[512] = "";
        size_t off = 0;
        for (i = 0; i < fw->n_points[KS_EP_QUEUE_SORT] && off < sizeof names;
             i++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                    i ? ", " : "",
                                    fw->points[KS_EP_QUEUE_SORT][i].inst->name);
        ks_error_append(err, KS_EQUEUESORT,
                        "%sprofile \"%s\" has %zu QueueSort plugins%s%s%s; "
                        "exactly one is required",
                        w, fw->profile_name, fw->n_points[KS_EP_QUEUE_SORT],
                        off ? " (" : "", names, off ? ")" : "");
        bad = 1;
    }
    if (fw->n_points[KS_EP_BIND] == 0) {
        ks_error_append(err, KS_ENOBIND,
                        "%sprofile \"%s\" has no Bind plugin; enable one (for "
                        "example DefaultBinder)",
                        w, fw->profile_name);
        bad = 1;
    }
    for (i = 0; i < sizeof masked / sizeof masked[0]; i++) {
        if (fw->n_points[masked[i]] <= KS_FW_MAX_MASKED_PLUGINS)
            continue;
        ks_error_append(err, KS_EINVAL,
                        "%sprofile \"%s\" has %zu %s plugins; at most %d are "
                        "supported",
                        w, fw->profile_name, fw->n_points[masked[i]],
                        ks_ext_point_name(masked[i]),
                        KS_FW_MAX_MASKED_PLUGINS);
        bad = 1;
    }
    return bad;
}

/* The events a plugin cares about do not change: ask once, after create.
 * A 1.1 descriptor's events_to_register_v2 (with QueueingHints) wins over
 * the 1.0 events_to_register. */
static void cache_events(ks_plugin_inst_t *in)
{
    enum { CAP = sizeof in->events / sizeof in->events[0] };
    ks_cluster_event_hint_t v2[CAP];
    uint32_t n, k;
    ks_board_slot_t *slot;
    int has_v2 = KS_PLUGIN_HAS(in->d, events_to_register_v2);
    if (!has_v2 && in->d->events_to_register == NULL) {
        in->every_event = 1;
        return;
    }
    memset(v2, 0, sizeof v2);
    slot = ks_call_enter(in->call_id, KS_CALL_EVENTS, in->deadline_ms, NULL,
                         NULL, NULL);
    if (has_v2)
        n = in->d->events_to_register_v2(in->self, v2, CAP);
    else
        n = in->d->events_to_register(in->self, in->events, CAP);
    ks_call_leave(slot);
    if (n > CAP) {
        in->every_event = 1; /* more than fit: requeue on every event */
        return;
    }
    in->n_events = n;
    for (k = 0; k < n; k++) {
        if (has_v2)
            in->events[k] = v2[k].event;
        in->hints[k] = has_v2 ? v2[k].hint : NULL;
    }
}

/* The plugin is enabled in a profile: the stores of the resources it
 * declares (ABI 1.3, registered when it was loaded) are filled from now
 * on (cluster/object_store.h). */
static void want_resources(const ks_plugin_t *d)
{
    uint32_t i;
    if (!KS_PLUGIN_HAS(d, resources))
        return;
    for (i = 0; i < d->n_resources; i++) {
        const ks_resource_ref_t *r = &d->resources[i];
        ks_store_set_wanted(ks_store_find(r->group ? r->group : "",
                                          r->version, r->resource));
    }
}

static int create_all(ks_framework_t *fw, const ks_profile_config_t *prof,
                      const char *path, ks_error_t *err)
{
    size_t i;
    int bad = 0;
    for (i = 0; i < fw->n_insts; i++) {
        ks_plugin_inst_t *in = fw->insts[i];
        char msg[1024] = "";
        const ks_args_t *args = ks_profile_plugin_args(prof, in->name);
        ks_board_slot_t *slot;
        int rc;
        int own = ks_plugin_in_tree(in->name);
        in->call_id = ks_call_board_register(
            in->name, in->d->version, in->lp->path, in->lp->hash,
            ks_call_board_building(), own);
        in->deadline_ms = ks_deadline_for(in->name, own);
        in->record_hot = !own || in->deadline_ms != 0;
        want_resources(in->d);
        if (in->d->create == NULL) {
            in->created = 1;
            cache_events(in);
            continue;
        }
        slot = ks_call_enter(in->call_id, KS_CALL_CREATE, in->deadline_ms,
                             NULL, NULL, NULL);
        rc = in->d->create(ks_host_api(), (ks_handle_t *)&in->handle, args,
                           &in->self, msg, sizeof msg);
        ks_call_leave(slot);
        if (rc != 0) {
            msg[sizeof msg - 1] = '\0';
            ks_error_append(err, KS_ECREATE,
                            "%s: profile \"%s\": plugin \"%s\" (%s) refused "
                            "its configuration: %s",
                            path, fw->profile_name, in->name,
                            ks_plugin_file(in->lp),
                            msg[0] ? msg : "create failed without a message");
            bad = 1;
            continue;
        }
        in->created = 1;
        cache_events(in);
    }
    return bad;
}

void ks_framework_link_points(ks_framework_t *fw)
{
    size_t i, f;
    for (i = 0; i < fw->n_points[KS_EP_PRE_FILTER]; i++) {
        ks_point_entry_t *e = &fw->points[KS_EP_PRE_FILTER][i];
        e->filter_at = -1;
        for (f = 0; f < fw->n_points[KS_EP_FILTER] && f < 64; f++)
            if (fw->points[KS_EP_FILTER][f].inst == e->inst) {
                e->filter_at = (int32_t)f;
                break;
            }
    }
}

int ks_framework_build(const ks_profile_config_t *prof, const char *cfg_path,
                       const ks_registry_t *reg, int parallelism,
                       ks_framework_t **out, ks_error_t *err)
{
    ks_framework_t *fw = calloc(1, sizeof *fw);
    int bad;
    *out = NULL;
    if (fw == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    fw->profile_name = strdup(prof->scheduler_name);
    if (fw->profile_name == NULL) {
        free(fw);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    fw->percentage_of_nodes_to_score = prof->percentage_of_nodes_to_score;
    fw->parallelism = parallelism > 0 ? parallelism : 1;
    bad = build_points(fw, prof, cfg_path, reg, err);
    if (bad < 0) {
        ks_framework_free(fw);
        return KS_ENOMEM;
    }
    /* Counted even after point errors, so every problem shows at once. */
    bad |= check_counts(fw, cfg_path, prof->line, err);
    ks_framework_link_points(fw);
    if (!bad)
        bad = build_weights(fw, prof, cfg_path, err);
    /* Only now, with everything checked, run plugin code. */
    if (!bad)
        bad = create_all(fw, prof, cfg_path, err);
    /* More workers than CPUs only adds contention: parallelism is an upper
     * bound (kube-scheduler's default of 16 is sized for goroutines). */
    if (fw->parallelism > 1) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus >= 1 && fw->parallelism > cpus)
            fw->parallelism = (int)cpus;
    }
    if (!bad && fw->parallelism > 1) {
        fw->pool = ks_pool_new(fw->parallelism);
        if (fw->pool == NULL)
            bad = ks_error_append(err, KS_ENOMEM, "cannot start %d workers",
                                  fw->parallelism) != 0;
    }
    if (bad) {
        ks_framework_free(fw);
        return err && err->code ? err->code : KS_EINVAL;
    }
    *out = fw;
    return 0;
}

void ks_framework_free(ks_framework_t *fw)
{
    size_t i;
    if (fw == NULL)
        return;
    if (fw->pool)
        ks_pool_free(fw->pool);
    for (i = 0; i < fw->n_insts; i++) {
        ks_plugin_inst_t *in = fw->insts[i];
        /* Its timers and API requests first: no callback after destroy. */
        ks_fw_async_cancel(NULL, in);
        if (in->created && in->d->destroy) {
            ks_board_slot_t *slot = ks_call_enter(
                in->call_id, KS_CALL_DESTROY, in->deadline_ms, NULL, NULL,
                NULL);
            in->d->destroy(in->self);
            ks_call_leave(slot);
        }
        ks_plugin_unref(in->lp);
        free(in);
    }
    for (i = 0; i < KS_EP_MULTI_POINT; i++)
        free(fw->points[i]);
    free(fw->insts);
    free(fw->profile_name);
    free(fw);
}

void ks_framework_set_env(ks_framework_t *fw, ks_fw_env_t *env)
{
    fw->env = env;
}
