/* Counts over many comparisons (tally.h). */
#include "tally.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static int count_plugin(ks_shadow_tally_t *t, const char *plugin)
{
    size_t i;
    for (i = 0; i < t->n_plugins; i++)
        if (strcmp(t->plugins[i].plugin, plugin) == 0) {
            t->plugins[i].count++;
            return 0;
        }
    if (t->n_plugins == t->cap_plugins) {
        size_t cap = t->cap_plugins ? t->cap_plugins * 2 : 8;
        ks_shadow_plugin_count_t *np =
            realloc(t->plugins, cap * sizeof *np);
        if (np == NULL)
            return KS_ENOMEM;
        t->plugins = np;
        t->cap_plugins = cap;
    }
    if ((t->plugins[t->n_plugins].plugin = strdup(plugin)) == NULL)
        return KS_ENOMEM;
    t->plugins[t->n_plugins++].count = 1;
    return 0;
}

int ks_shadow_tally_add(ks_shadow_tally_t *t, const ks_shadow_decision_t *d)
{
    unsigned k;
    int rc = 0;
    if ((unsigned)d->result < KS_SHADOW_N_RESULTS)
        t->results[d->result]++;
    if (d->result != KS_SHADOW_DIFFERENT &&
        d->result != KS_SHADOW_UNSCHEDULABLE)
        return 0;
    for (k = 0; k < d->n_deciding; k++)
        if (count_plugin(t, d->deciding[k]) != 0)
            rc = KS_ENOMEM;
    return rc;
}

static int by_count(const void *a, const void *b)
{
    const ks_shadow_plugin_count_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->plugin, y->plugin);
}

void ks_shadow_tally_sort(ks_shadow_tally_t *t)
{
    if (t->n_plugins > 1)
        qsort(t->plugins, t->n_plugins, sizeof *t->plugins, by_count);
}

void ks_shadow_tally_free(ks_shadow_tally_t *t)
{
    size_t i;
    for (i = 0; i < t->n_plugins; i++)
        free(t->plugins[i].plugin);
    free(t->plugins);
    memset(t, 0, sizeof *t);
}
