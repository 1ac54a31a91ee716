/*
 * Extension point names and YAML keys (from ext_points.h), ksched's default
 * plugin set, and the merge of a profile's plugins into it (upstream's mergePlugins / mergePluginSet).
 */
#include "config_internal.h"
#include "ext_points.h"

#include <string.h>

/* The table's order is ks_ext_point_t's: each KS_EP_<ENUM> is its row. */
enum {
#define KS_EP_ROW(e, key, name, metric, fn, impl) KS_EP_ROW_##e,
    KS_EXT_POINT_MAP(KS_EP_ROW)
#undef KS_EP_ROW
    KS_EP_ROWS
};
#define KS_EP_ROW(e, key, name, metric, fn, impl)                              \
    _Static_assert((int)KS_EP_##e == (int)KS_EP_ROW_##e,                         \
                   "KS_EXT_POINT_MAP and ks_ext_point_t differ at " #e);
KS_EXT_POINT_MAP(KS_EP_ROW)
#undef KS_EP_ROW
_Static_assert((int)KS_EP_ROWS == (int)KS_EP_COUNT,
               "KS_EXT_POINT_MAP lists every extension point");

static const char *const point_names[KS_EP_COUNT] = {
#define KS_EP_NAME(e, key, name, metric, fn, impl) [KS_EP_##e] = name,
    KS_EXT_POINT_MAP(KS_EP_NAME)
#undef KS_EP_NAME
};

static const char *const point_fields[KS_EP_COUNT] = {
#define KS_EP_KEY(e, key, name, metric, fn, impl) [KS_EP_##e] = key,
    KS_EXT_POINT_MAP(KS_EP_KEY)
#undef KS_EP_KEY
};

const char *ks_ext_point_name(ks_ext_point_t ep)
{
    return (unsigned)ep < KS_EP_COUNT ? point_names[ep] : "Unknown";
}

const char *ks_ext_point_field(ks_ext_point_t ep)
{
    return (unsigned)ep < KS_EP_COUNT ? point_fields[ep] : "unknown";
}

/*
 * Upstream v1.36's default multiPoint list (v1.24's with SchedulingGates in
 * front and without the in-tree cloud volume limits EBSLimits, GCEPDLimits
 * and AzureDiskLimits, which ksched ships for v1.24 profiles that name
 * them), DynamicResources included.
 */
static const ks_plugin_ref_t default_plugins[] = {
    {(char *)"SchedulingGates", 0, 0, 0},
    {(char *)"PrioritySort", 0, 0, 0},
    {(char *)"NodeUnschedulable", 0, 0, 0},
    {(char *)"NodeName", 0, 0, 0},
    {(char *)"TaintToleration", 3, 0, 0},
    {(char *)"NodeAffinity", 2, 0, 0},
    {(char *)"NodePorts", 0, 0, 0},
    {(char *)"NodeResourcesFit", 1, 0, 0},
    {(char *)"VolumeRestrictions", 0, 0, 0},
    {(char *)"NodeVolumeLimits", 0, 0, 0},
    {(char *)"VolumeBinding", 0, 0, 0},
    {(char *)"VolumeZone", 0, 0, 0},
    {(char *)"PodTopologySpread", 2, 0, 0},
    {(char *)"InterPodAffinity", 2, 0, 0},
    {(char *)"DynamicResources", 0, 0, 0},
    {(char *)"DefaultPreemption", 0, 0, 0},
    {(char *)"NodeResourcesBalancedAllocation", 1, 0, 0},
    {(char *)"ImageLocality", 1, 0, 0},
    {(char *)"DefaultBinder", 0, 0, 0},
};

const ks_plugin_ref_t *ks_cfg_default_plugins(size_t *n)
{
    *n = sizeof default_plugins / sizeof default_plugins[0];
    return default_plugins;
}

int ks_plugin_is_volume(const char *name)
{
    /* VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits and
     * v1.24's EBSLimits, GCEPDLimits and AzureDiskLimits are plugins of
     * their own (plugins/), enabled like any other. */
    static const char *const volume[] = {"CinderLimits"};
    size_t i;
    if (name == NULL)
        return 0;
    for (i = 0; i < sizeof volume / sizeof volume[0]; i++)
        if (strcmp(name, volume[i]) == 0)
            return 1;
    return 0;
}

static int set_has(const ks_plugin_ref_t *v, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return 1;
    return 0;
}

static ks_plugin_ref_t copy_ref(ks_arena_t *a, const ks_plugin_ref_t *r)
{
    ks_plugin_ref_t out = *r;
    out.name = ks_arena_strdup(a, r->name);
    return out;
}

/*
 * The merge, per extension point:
 *  - disabled = the custom disabled names, then the default's disabled names;
 *  - unless "*" is disabled, every default enabled plugin not disabled is
 *    kept in order; when the custom enabled list names it, the custom entry
 *    (its weight) takes its place. When the custom list names a plugin
 *    several times, the last entry is the one that replaces;
 *  - every custom enabled entry that did not replace a default is appended
 *    in its order (repeats included; the framework reports them).
 * Each custom entry replaces only the default of its own name (v1.24.1
 * substituted the last custom entry for every replaced default).
 */
int ks_cfg_merge_set(ks_arena_t *a, const ks_plugin_set_t *def,
                     const ks_plugin_set_t *custom, ks_plugin_set_t *out)
{
    static const ks_plugin_set_t empty;
    size_t n_dis, n_en, i, j, k = 0;
    unsigned char *replaced;
    int all_off;

    if (custom == NULL)
        custom = &empty;
    if (def == NULL)
        def = &empty;
    memset(out, 0, sizeof *out);

    n_dis = custom->n_disabled + def->n_disabled;
    if (n_dis > 0) {
        out->disabled = ks_arena_alloc(a, n_dis * sizeof *out->disabled);
        if (out->disabled == NULL)
            return KS_ENOMEM;
        for (i = 0; i < custom->n_disabled; i++)
            out->disabled[k++] = copy_ref(a, &custom->disabled[i]);
        for (i = 0; i < def->n_disabled; i++)
            out->disabled[k++] = copy_ref(a, &def->disabled[i]);
        for (i = 0; i < k; i++) {
            out->disabled[i].weight = 0;
            if (out->disabled[i].name == NULL)
                return KS_ENOMEM;
        }
        out->n_disabled = k;
    }
    all_off = set_has(out->disabled, out->n_disabled, "*");

    n_en = def->n_enabled + custom->n_enabled;
    if (n_en == 0)
        return ks_arena_failed(a) ? KS_ENOMEM : KS_OK;
    out->enabled = ks_arena_alloc(a, n_en * sizeof *out->enabled);
    replaced = ks_arena_alloc(a, custom->n_enabled + 1);
    if (out->enabled == NULL || replaced == NULL)
        return KS_ENOMEM;
    k = 0;
    if (!all_off) {
        for (i = 0; i < def->n_enabled; i++) {
            const ks_plugin_ref_t *use = &def->enabled[i];
            if (set_has(out->disabled, out->n_disabled, use->name))
                continue;
            /* The last custom entry of this name replaces the default. */
            for (j = custom->n_enabled; j-- > 0;) {
                if (strcmp(custom->enabled[j].name, use->name) == 0) {
                    use = &custom->enabled[j];
                    replaced[j] = 1;
                    break;
                }
            }
            out->enabled[k++] = copy_ref(a, use);
        }
    }
    for (j = 0; j < custom->n_enabled; j++)
        if (!replaced[j])
            out->enabled[k++] = copy_ref(a, &custom->enabled[j]);
    out->n_enabled = k;
    return ks_arena_failed(a) ? KS_ENOMEM : KS_OK;
}

int ks_cfg_merge_profile(ks_arena_t *a, const ks_plugin_set_t *custom,
                         ks_profile_config_t *prof)
{
    ks_plugin_set_t def[KS_EP_COUNT];
    int ep, rc;

    memset(def, 0, sizeof def);
    def[KS_EP_MULTI_POINT].enabled = (ks_plugin_ref_t *)default_plugins;
    def[KS_EP_MULTI_POINT].n_enabled =
        sizeof default_plugins / sizeof default_plugins[0];
    for (ep = 0; ep < KS_EP_COUNT; ep++) {
        rc = ks_cfg_merge_set(a, &def[ep], custom ? &custom[ep] : NULL,
                              &prof->points[ep]);
        if (rc != KS_OK)
            return rc;
    }
    return KS_OK;
}
