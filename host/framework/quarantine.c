/* Quarantine and deadlines: see quarantine.h. */
#include "quarantine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "call_board.h"

static ks_quarantine_policy_t policy = KS_QUARANTINE_ROLLBACK;
/* Plugin names skipped since ks_quarantine_begin(). */
static char skipped[32][64];
static size_t n_skipped;

void ks_quarantine_set_policy(ks_quarantine_policy_t p) { policy = p; }

void ks_quarantine_begin(void) { n_skipped = 0; }

int ks_quarantine_vet(const char *path, const char **load_path,
                      uint64_t *hash, ks_error_t *err)
{
    const ks_call_board_t *b = ks_call_board();
    const ks_board_fault_t *f;
    const ks_board_good_t *g;
    const ks_board_good_t *before;
    uint32_t n = atomic_load_explicit(&b->n_faults, memory_order_acquire);
    uint64_t h;
    char what[1024], prev[256];

    *load_path = path;
    *hash = 0;
    if (n == 0)
        return 0; /* the common case: nothing ever failed */
    h = ks_file_hash(path);
    *hash = h;
    f = ks_call_board_quarantined(b, NULL, h);
    if (f == NULL)
        return 0;
    ks_board_fault_describe(f, what, sizeof what);
    g = ks_call_board_rollback(b, f->plugin.name, h, &before);
    if (g != NULL) {
        ks_log(KS_LOGL_WARN,
               "%s: quarantined (%s); rolling back to version %s of "
               "generation %llu (%s)",
               path, what, g->version[0] ? g->version : "(none)",
               (unsigned long long)g->generation,
               g == before ? "the version serving when the faulty one was "
                             "swapped in"
                           : "it passed its probation");
        *load_path = g->path;
        *hash = g->hash;
        return 0;
    }
    if (policy == KS_QUARANTINE_DISABLE) {
        if (n_skipped < sizeof skipped / sizeof skipped[0]) {
            size_t len = strlen(f->plugin.name);
            if (len >= sizeof skipped[0])
                len = sizeof skipped[0] - 1;
            memcpy(skipped[n_skipped], f->plugin.name, len);
            skipped[n_skipped][len] = '\0';
            n_skipped++;
        }
        ks_log(KS_LOGL_WARN,
               "%s: quarantined (%s); no earlier good version, so plugin "
               "\"%s\" is left out of every profile (--quarantine=disable)",
               path, what, f->plugin.name);
        return 1;
    }
    if (before)
        snprintf(prev, sizeof prev, "version %s of \"%s\", serving when "
                                    "this one was swapped in, faulted too",
                 before->version[0] ? before->version : "(none)",
                 before->name);
    else
        snprintf(prev, sizeof prev, "no version of \"%s\" was serving "
                                    "when this one was swapped in",
                 f->plugin.name);
    ks_error_append(err, KS_EQUARANTINED,
                    "%s: quarantined: %s; %s, and no earlier one ran through "
                    "its probation, so there is nothing to roll back to; "
                    "replace the file (a reload picks it up), or pass "
                    "--quarantine=disable to run without the plugin",
                    path, what, prev);
    return -1;
}

static void remove_from_set(ks_plugin_ref_t *refs, size_t *n,
                            const char *name)
{
    size_t i = 0;
    while (i < *n) {
        if (refs[i].name && strcmp(refs[i].name, name) == 0) {
            /* The name belongs to the configuration's arena. */
            memmove(&refs[i], &refs[i + 1], (*n - i - 1) * sizeof refs[0]);
            (*n)--;
        } else {
            i++;
        }
    }
}

int ks_quarantine_apply(ks_config_t *cfg)
{
    size_t k, p, ep;
    for (k = 0; k < n_skipped; k++)
        for (p = 0; p < cfg->n_profiles; p++)
            for (ep = 0; ep < KS_EP_COUNT; ep++)
                remove_from_set(cfg->profiles[p].points[ep].enabled,
                                &cfg->profiles[p].points[ep].n_enabled,
                                skipped[k]);
    return 0;
}

/* --- deadlines ---------------------------------------------------------- */

typedef struct deadline {
    char *name;
    uint32_t ms;
} deadline_t;

static uint32_t dl_default, dl_in_tree;
static deadline_t *dl_list;
static size_t dl_n;

int ks_deadlines_set(uint32_t default_ms, uint32_t in_tree_ms,
                     const char *const *names, const uint32_t *ms, size_t n)
{
    deadline_t *l = n ? calloc(n, sizeof *l) : NULL;
    size_t i;
    if (n && l == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        l[i].name = strdup(names[i]);
        l[i].ms = ms[i];
        if (l[i].name == NULL) {
            while (i--)
                free(l[i].name);
            free(l);
            return -1;
        }
    }
    for (i = 0; i < dl_n; i++)
        free(dl_list[i].name);
    free(dl_list);
    dl_list = l;
    dl_n = n;
    dl_default = default_ms;
    dl_in_tree = in_tree_ms;
    return 0;
}

uint32_t ks_deadline_for(const char *name, int in_tree)
{
    size_t i;
    for (i = 0; i < dl_n; i++)
        if (strcmp(dl_list[i].name, name) == 0)
            return dl_list[i].ms;
    return in_tree ? dl_in_tree : dl_default;
}

int ks_plugin_in_tree(const char *name)
{
    static const char *const own[] = {
        "DefaultBinder",     "DefaultPreemption",
        "DynamicResources", /* its Filter is bounded by filterTimeout */
        "ImageLocality",     "InterPodAffinity",
        "NodeAffinity",      "NodeName",
        "NodePorts",         "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",  "NodeUnschedulable",
        "PodTopologySpread", "PrioritySort",
        "SchedulingGates",   "TaintToleration"};
    size_t i;
    for (i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(own[i], name) == 0)
            return 1;
    return 0;
}
