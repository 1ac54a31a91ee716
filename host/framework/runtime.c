/*
 * Running each extension point with upstream's status rules, and the
 * per-plugin timing of those runs.
 *
 * A framework-side failure (out of memory) is an Error status with the
 * reason "out of memory", as any other Error the caller handles.
 * Threads: see framework.h (Filter and Score run on workers).
 */
#include "framework.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/mono_clock.h"
#include "call_board.h"
#include "run_call.h"
#include "cycle_state.h"
#include "base/intern.h"
#include "base/log.h"
#include "cluster_event.h"
#include "config/ext_points.h"
#include "grow.h"
#include "pool.h"

#define PERMIT_MAX_TIMEOUT_MS (15ull * 60 * 1000)

/* --- per-plugin timing ---------------------------------------------------- */

static const char *const metric_labels[KS_FW_EP_END] = {
#define KS_EP_LABEL(e, key, name, metric, fn, impl) [KS_EP_##e] = metric,
    KS_EXT_POINT_MAP(KS_EP_LABEL)
#undef KS_EP_LABEL
#define KS_FW_EP_LABEL(e, metric) [KS_FW_EP_##e] = metric,
    KS_FW_EXTRA_POINT_MAP(KS_FW_EP_LABEL)
#undef KS_FW_EP_LABEL
};

const char *ks_fw_metric_point_name(int ext_point)
{
    const char *l = (unsigned)ext_point < KS_FW_EP_END
                        ? metric_labels[ext_point]
                        : NULL;
    return l ? l : "Unknown";
}

double ks_fw_mono_seconds(void) { return ks_mono_seconds(); }

void ks_fw_timing_report(ks_framework_t *fw, const ks_plugin_inst_t *in,
                         int ep, ks_code_t code, double t0)
{
    double dt = ks_fw_mono_seconds() - t0;
    fw->env->plugin_duration(fw->env, in->name, ep, code, dt);
}

/* --- statuses ---------------------------------------------------------------- */

static ks_code_t fail(ks_status_t *st, const char *plugin, ks_code_t code)
{
    st->code = code;
    st->plugin = plugin;
    return code;
}

/* A plugin returned an error: keep its reasons behind a prefix naming it. */
static ks_code_t as_error(ks_status_t *st, const char *what, const char *plugin)
{
    char msg[KS_STATUS_REASON_MAX - 128];
    char buf[KS_STATUS_REASON_MAX];
    ks_status_message(st, msg, sizeof msg);
    snprintf(buf, sizeof buf, "running %s plugin \"%.64s\": %s", what, plugin,
             msg[0] ? msg : "error without a message");
    st->n_reasons = 0;
    ks_status_add_reason(st, buf);
    return fail(st, plugin, KS_ERROR);
}

/* upstream: running "X" filter plugin: <message> */
static ks_code_t filter_error(ks_status_t *st, const char *plugin)
{
    char msg[KS_STATUS_REASON_MAX - 128];
    ks_status_message(st, msg, sizeof msg);
    st->n_reasons = 0;
    ks_status_add_reasonf(st, "running \"%.64s\" filter plugin: %s", plugin,
                          msg[0] ? msg : "error without a message");
    return fail(st, plugin, KS_ERROR);
}

/* upstream: <what>: plugin "X" failed with: <message> */
static ks_code_t score_error(ks_status_t *st, const char *what,
                             const char *plugin)
{
    char msg[KS_STATUS_REASON_MAX - 192];
    ks_status_message(st, msg, sizeof msg);
    st->n_reasons = 0;
    ks_status_add_reasonf(st, "%s: plugin \"%.64s\" failed with: %s", what,
                          plugin, msg[0] ? msg : "error without a message");
    return fail(st, plugin, KS_ERROR);
}

/* The framework itself ran out of memory (not a plugin's failure). */
static ks_code_t out_of_memory(ks_status_t *st, const char *plugin)
{
    st->n_reasons = 0;
    ks_status_add_reason(st, "out of memory");
    return fail(st, plugin, KS_ERROR);
}

static int is_unsched(ks_code_t c)
{
    return c == KS_UNSCHEDULABLE || c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* upstream Status.IsRejected (v1.36): Unschedulable* or Pending. */
static int is_rejected(ks_code_t c)
{
    return is_unsched(c) || c == KS_PENDING;
}

/* A code a plugin may not return at this point is turned into an error. */
static ks_code_t invalid_code(ks_status_t *st, const char *what,
                              const char *plugin, int code)
{
    st->n_reasons = 0;
    ks_status_add_reasonf(st, "%s plugin \"%s\" returned an invalid status "
                              "code %d",
                          what, plugin, code);
    return fail(st, plugin, KS_ERROR);
}

static int valid_code(int c)
{
    return c >= KS_SUCCESS && c <= KS_PENDING;
}

ks_code_t ks_fw_run_pre_enqueue(ks_framework_t *fw, const ks_pod_t *pod,
                                ks_status_t *st)
{
    size_t i;
    ks_status_reset(st);
    ks_call_board_pod_changed(); /* a pod's first plugin calls */
    for (i = 0; i < fw->n_points[KS_EP_PRE_ENQUEUE]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_PRE_ENQUEUE][i].inst;
        ks_board_slot_t *slot = ks_call_enter(in->call_id, KS_EP_PRE_ENQUEUE,
                                              in->deadline_ms, pod, pod->ns,
                                              pod->name);
        ks_code_t c = in->d->pre_enqueue(in->self, pod, st);
        ks_call_leave(slot);
        if (c == KS_SUCCESS)
            continue;
        if (!valid_code((int)c))
            return invalid_code(st, "PreEnqueue", in->name, (int)c);
        if (c == KS_ERROR)
            return as_error(st, "PreEnqueue", in->name);
        return fail(st, in->name, c);
    }
    return KS_SUCCESS;
}

int ks_fw_less(ks_framework_t *fw, const ks_queued_pod_t *a,
               const ks_queued_pod_t *b)
{
    ks_plugin_inst_t *in = fw->points[KS_EP_QUEUE_SORT][0].inst;
    ks_board_slot_t *slot = ks_call_enter_if(in->record_hot, in->call_id,
                                             KS_EP_QUEUE_SORT,
                                             in->deadline_ms, NULL, NULL,
                                             NULL);
    int r = in->d->less(in->self, a, b);
    ks_call_leave(slot);
    return r;
}

void ks_prefilter_result_free(struct ks_prefilter_result *r)
{
    free(r->names);
    r->names = NULL;
    r->n = r->cap = 0;
}

/* Intersect acc with one plugin's result; -1 (acc unchanged) when out of
 * memory. */
static int prefilter_merge(struct ks_prefilter_result *acc,
                           const struct ks_prefilter_result *r)
{
    uint32_t i, j, k = 0;
    if (r->all)
        return 0;
    if (acc->all) {
        if (acc->cap < r->n) {
            const char **names = ks_fw_grow(acc->names, &acc->cap, r->n,
                                            sizeof *names, r->n);
            if (names == NULL)
                return -1;
            acc->names = names;
        }
        acc->all = 0;
        acc->n = 0;
        for (i = 0; i < r->n; i++) {
            for (j = 0; j < acc->n; j++)
                if (acc->names[j] == r->names[i])
                    break;
            if (j == acc->n)
                acc->names[acc->n++] = r->names[i];
        }
        return 0;
    }
    for (i = 0; i < acc->n; i++) {
        for (j = 0; j < r->n; j++)
            if (r->names[j] == acc->names[i])
                break;
        if (j < r->n)
            acc->names[k++] = acc->names[i];
    }
    acc->n = k;
    return 0;
}

ks_code_t ks_fw_run_pre_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                               const ks_pod_t *pod,
                               struct ks_prefilter_result *res,
                               ks_status_t *st)
{
    size_t i;
    struct ks_prefilter_result one = {0};
    char with_nodes[512] = "";
    size_t off = 0, n_with = 0;
    uint64_t *skip = ks_cycle_state_skip_filter(cs);
    int on = timing_on(fw);

    /* A scheduling cycle begins: every thread's slot re-reads the pod
     * name at its next call (call_board.h). */
    ks_call_board_pod_changed();
    ks_status_reset(st);
    res->all = 1;
    res->n = 0;
    for (i = 0; i < fw->n_points[KS_EP_PRE_FILTER]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_PRE_FILTER][i].inst;
        ks_code_t c;
        size_t f;
        one.all = 1;
        one.n = 0;
        one.oom = 0;
        TIMED(on, fw, in, pod, KS_EP_PRE_FILTER, c,
              in->d->pre_filter(in->self, cs, pod, &one, st));
        if (one.oom) {
            /* The host could not record the plugin's node set. */
            ks_prefilter_result_free(&one);
            out_of_memory(st, in->name);
            return as_error(st, "PreFilter", in->name);
        }
        if (c == KS_SKIP) {
            /* Skip the plugin's Filter for this cycle. */
            for (f = 0; f < fw->n_points[KS_EP_FILTER]; f++)
                if (fw->points[KS_EP_FILTER][f].inst == in)
                    *skip |= 1ull << f;
            continue;
        }
        if (c != KS_SUCCESS) {
            ks_prefilter_result_free(&one);
            if (!valid_code((int)c))
                return invalid_code(st, "PreFilter", in->name, (int)c);
            if (is_unsched(c))
                return fail(st, in->name, c);
            return as_error(st, "PreFilter", in->name);
        }
        if (!one.all) {
            off += (size_t)snprintf(with_nodes + off,
                                    off < sizeof with_nodes
                                        ? sizeof with_nodes - off
                                        : 0,
                                    "%s%s", n_with ? " " : "", in->name);
            n_with++;
        }
        if (prefilter_merge(res, &one) != 0) {
            ks_prefilter_result_free(&one);
            return out_of_memory(st, in->name);
        }
        if (!res->all && res->n == 0) {
            ks_prefilter_result_free(&one);
            st->n_reasons = 0;
            if (n_with == 1)
                ks_status_add_reasonf(st, "node(s) didn't satisfy plugin %s",
                                      with_nodes);
            else
                ks_status_add_reasonf(
                    st, "node(s) didn't satisfy plugin(s) [%s] simultaneously",
                    with_nodes);
            return fail(st, in->name, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
        }
    }
    ks_prefilter_result_free(&one);
    return KS_SUCCESS;
}

/* A plugin's Filter: filter_with_state (since ABI 1.1) with the state the
 * plugin set at PreFilter, else filter. */
static ks_code_t call_filter(const ks_plugin_inst_t *in, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_node_info_t *ni,
                             ks_status_t *st)
{
    return ks_fw_call_filter(
        in, cs,
        in->d->filter_with_state
            ? ks_cycle_state_slot_get(cs, &in->handle, KS_STATE_FILTER)
            : NULL,
        pod, ni, st);
}

static int code_rank(ks_code_t c)
{
    switch (c) {
    case KS_ERROR: return 4;
    case KS_PENDING: return 3; /* neither is a preemption candidate */
    case KS_UNSCHEDULABLE_AND_UNRESOLVABLE: return 2;
    case KS_UNSCHEDULABLE: return 1;
    default: return 0;
    }
}

ks_code_t ks_fw_run_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const ks_node_info_t *ni,
                           int run_all, ks_status_t *st)
{
    return ks_fw_run_filter_from(fw, cs, pod, ni, run_all, 0, st);
}

ks_code_t ks_fw_run_filter_from(ks_framework_t *fw, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_node_info_t *ni,
                                int run_all, size_t first, ks_status_t *st)
{
    size_t i, n = fw->n_points[KS_EP_FILTER];
    const ks_point_entry_t *pl = fw->points[KS_EP_FILTER];
    uint64_t skip = *ks_cycle_state_skip_filter(cs);
    int on = timing_on(fw);
    ks_status_t one;

    ks_status_reset(st);
    for (i = first; i < n; i++) {
        ks_plugin_inst_t *in = pl[i].inst;
        ks_code_t c;
        if (skip & (1ull << i))
            continue;
        one.code = KS_SUCCESS;
        one.plugin = NULL;
        one.n_reasons = 0;
        TIMED_HOT(on, fw, in, pod, KS_EP_FILTER, c,
              call_filter(in, cs, pod, ni, &one));
        if (c == KS_SUCCESS)
            continue;
        if (!is_rejected(c)) {
            /* Filter plugins may only return Success, Unschedulable* or
             * Pending (a rejection since upstream 1.27). */
            st->n_reasons = 0;
            ks_status_merge_reasons(st, &one);
            if (!valid_code((int)c))
                return invalid_code(st, "Filter", in->name, (int)c);
            return filter_error(st, in->name);
        }
        if (code_rank(c) > code_rank(st->code))
            st->code = c;
        /* The node's plugin: the first rejector, or the one that returned
         * Pending (recorded in the pod's pending plugins). */
        if (st->plugin == NULL || (c == KS_PENDING && st->code == c))
            st->plugin = in->name;
        ks_status_merge_reasons(st, &one);
        if (!run_all)
            return st->code;
    }
    return st->code;
}

/* PreFilter's AddPod (add != 0) or RemovePod over every PreFilter plugin
 * that has it and was not skipped. */
static ks_code_t run_prefilter_ext(ks_framework_t *fw, ks_cycle_state_t *cs,
                                   const ks_pod_t *pod, const ks_pod_t *other,
                                   const ks_node_info_t *ni, int add,
                                   ks_status_t *st)
{
    size_t i;
    uint64_t skip = *ks_cycle_state_skip_filter(cs);
    int on = timing_on(fw);
    ks_status_reset(st);
    for (i = 0; i < fw->n_points[KS_EP_PRE_FILTER]; i++) {
        const ks_point_entry_t *e = &fw->points[KS_EP_PRE_FILTER][i];
        ks_plugin_inst_t *in = e->inst;
        ks_code_t c;
        if (add ? in->d->pre_filter_add_pod == NULL
                : in->d->pre_filter_remove_pod == NULL)
            continue;
        /* its Filter skipped (the plugin's PreFilter said Skip) */
        if (e->filter_at >= 0 && (skip & (1ull << e->filter_at)))
            continue;
        if (add) {
            TIMED_HOT(on, fw, in, pod, KS_FW_EP_PREFILTER_ADD_POD, c,
                  in->d->pre_filter_add_pod(in->self, cs, pod, other, ni,
                                            st));
        } else {
            TIMED_HOT(on, fw, in, pod, KS_FW_EP_PREFILTER_REMOVE_POD, c,
                  in->d->pre_filter_remove_pod(in->self, cs, pod, other, ni,
                                               st));
        }
        if (c != KS_SUCCESS)
            return as_error(st,
                            add ? "AddPod on PreFilter"
                                : "RemovePod on PreFilter",
                            in->name);
    }
    return KS_SUCCESS;
}

ks_code_t ks_fw_run_prefilter_add_pod(ks_framework_t *fw, ks_cycle_state_t *cs,
                                      const ks_pod_t *pod,
                                      const ks_pod_t *to_add,
                                      const ks_node_info_t *ni,
                                      ks_status_t *st)
{
    return run_prefilter_ext(fw, cs, pod, to_add, ni, 1, st);
}

ks_code_t ks_fw_run_prefilter_remove_pod(ks_framework_t *fw,
                                         ks_cycle_state_t *cs,
                                         const ks_pod_t *pod,
                                         const ks_pod_t *to_remove,
                                         const ks_node_info_t *ni,
                                         ks_status_t *st)
{
    return run_prefilter_ext(fw, cs, pod, to_remove, ni, 0, st);
}

/* Each thread's NodeInfo and cycle state for the nominated pods' pass:
 * refilled from the node's and the cycle's at each use, so a pass
 * allocates only what the plugins' state clones do. With pods nominated
 * to many nodes (preemption: a pod per node) a clone and a free of both
 * per node were a sixth of the cycle, and more with a second thread in
 * the process, where every allocation takes the allocator's lock. Freed
 * at thread exit; `busy` sends a nested pass (a plugin calling back into
 * the host from its Filter) to clones of its own. */
typedef struct nominated_scratch {
    ks_node_info_t *ni;
    ks_cycle_state_t *cs;
    int busy;
} nominated_scratch_t;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_ok;

static void scratch_destroy(void *p)
{
    nominated_scratch_t *sc = p;
    ks_node_info_free(sc->ni);
    ks_cycle_state_free(sc->cs);
    free(sc);
}

static void scratch_key_make(void)
{
    scratch_ok = pthread_key_create(&scratch_key, scratch_destroy) == 0;
}

/* This thread's scratch, made on first use; NULL when there is none. */
static nominated_scratch_t *scratch_mine(const ks_node_info_t *ni)
{
    nominated_scratch_t *t;
    (void)pthread_once(&scratch_once, scratch_key_make);
    if (!scratch_ok)
        return NULL;
    if ((t = pthread_getspecific(scratch_key)) != NULL)
        return t;
    if ((t = calloc(1, sizeof *t)) == NULL)
        return NULL;
    if ((t->ni = ks_node_info_clone(ni)) == NULL ||
        (t->cs = ks_cycle_state_new()) == NULL ||
        pthread_setspecific(scratch_key, t) != 0) {
        scratch_destroy(t);
        return NULL;
    }
    return t;
}

/* Copies of ni and cs for this thread's pass into *ni2 and *cs2: the
 * thread's scratch when it is free (*sc set, to give back with
 * scratch_put), else clones (*sc NULL). -1 on ENOMEM (nothing to give
 * back). */
static int scratch_get(const ks_node_info_t *ni, const ks_cycle_state_t *cs,
                       nominated_scratch_t **sc, ks_node_info_t **ni2,
                       ks_cycle_state_t **cs2)
{
    nominated_scratch_t *t = scratch_mine(ni);
    *sc = NULL;
    if (t != NULL && !t->busy && ks_node_info_refill(t->ni, ni) == 0 &&
        ks_cycle_state_refill(t->cs, cs) == 0) {
        t->busy = 1;
        *sc = t;
        *ni2 = t->ni;
        *cs2 = t->cs;
        return 0;
    }
    *ni2 = ks_node_info_clone(ni);
    *cs2 = ks_cycle_state_clone(cs);
    if (*ni2 == NULL || *cs2 == NULL) {
        ks_node_info_free(*ni2);
        ks_cycle_state_free(*cs2);
        return -1;
    }
    return 0;
}

/* Give back what scratch_get gave: the scratch's state data are released
 * at once (they may hold what a plugin wants freed soon). */
static void scratch_put(ks_node_info_t *ni2, ks_cycle_state_t *cs2,
                        nominated_scratch_t *sc)
{
    if (sc != NULL) {
        ks_cycle_state_clear(cs2);
        sc->busy = 0;
        return;
    }
    ks_node_info_free(ni2);
    ks_cycle_state_free(cs2);
}

/* The two Filter passes of RunFilterPluginsWithNominatedPods, given the
 * pods nominated to ni's node. */
static ks_code_t filter_nominated(ks_framework_t *fw, ks_cycle_state_t *cs,
                                  const ks_pod_t *pod,
                                  const ks_node_info_t *ni, int run_all,
                                  const ks_pod_t *const *nom, uint32_t n_nom,
                                  ks_status_t *st)
{
    uint32_t i;
    ks_node_info_t *ni2 = NULL;
    ks_cycle_state_t *cs2 = NULL;
    nominated_scratch_t *sc = NULL;
    ks_code_t c;

    for (i = 0; i < n_nom; i++) {
        if (nom[i]->priority < pod->priority || nom[i]->uid == pod->uid)
            continue;
        if (ni2 == NULL && scratch_get(ni, cs, &sc, &ni2, &cs2) != 0) {
            ks_status_reset(st);
            return out_of_memory(st, NULL);
        }
        ks_node_info_add_pod(ni2, nom[i]);
        if (ks_fw_run_prefilter_add_pod(fw, cs2, pod, nom[i], ni2, st) !=
            KS_SUCCESS) {
            scratch_put(ni2, cs2, sc);
            return st->code;
        }
    }
    if (ni2 == NULL) /* no pod to add: made with the first one */
        return ks_fw_run_filter(fw, cs, pod, ni, run_all, st);
    /* Pass 1: with the nominated pods of equal or higher priority. */
    c = ks_fw_run_filter(fw, cs2, pod, ni2, run_all, st);
    scratch_put(ni2, cs2, sc);
    if (c != KS_SUCCESS)
        return c;
    /* Pass 2: without them (they might not land after all). */
    return ks_fw_run_filter(fw, cs, pod, ni, run_all, st);
}

ks_code_t ks_fw_run_filter_with_nominated(ks_framework_t *fw,
                                          ks_cycle_state_t *cs,
                                          const ks_pod_t *pod,
                                          const ks_node_info_t *ni,
                                          int run_all, ks_status_t *st)
{
    const ks_fw_env_t *e = fw->env;
    const ks_pod_t *stack_nom[64], **nom = stack_nom;
    uint32_t n_nom = 0, cap = 64;
    ks_code_t c;

    /* Most cycles have no nominated pods anywhere: skip the lookup. */
    if (e && e->n_nominated == 0)
        return ks_fw_run_filter(fw, cs, pod, ni, run_all, st);
    if (e && e->ops && e->ops->nominated_pods && ni->node) {
        n_nom = e->ops->nominated_pods(fw->env, ni->node->name, nom, cap);
        if (n_nom > cap) {
            /* More than the stack array holds: every one counts. */
            cap = n_nom;
            if ((nom = malloc(cap * sizeof *nom)) == NULL) {
                ks_status_reset(st);
                return out_of_memory(st, NULL);
            }
            n_nom = e->ops->nominated_pods(fw->env, ni->node->name, nom, cap);
            if (n_nom > cap)
                n_nom = cap;
        }
    }
    c = filter_nominated(fw, cs, pod, ni, run_all, nom, n_nom, st);
    if (nom != stack_nom)
        free(nom);
    return c;
}

ks_code_t ks_fw_run_post_filter(ks_framework_t *fw, ks_cycle_state_t *cs,
                                const ks_pod_t *pod,
                                const struct ks_node_status_map *m,
                                const char **nominated, ks_status_t *st)
{
    size_t at = 0;
    ks_status_reset(st);
    return ks_fw_run_post_filter_at(fw, &at, cs, pod, m, nominated, st);
}

ks_code_t ks_fw_run_post_filter_at(ks_framework_t *fw, size_t *at,
                                   ks_cycle_state_t *cs, const ks_pod_t *pod,
                                   const struct ks_node_status_map *m,
                                   const char **nominated, ks_status_t *st)
{
    size_t i;
    ks_status_t one;
    int on = timing_on(fw);
    *nominated = NULL;
    for (i = *at; i < fw->n_points[KS_EP_POST_FILTER]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_POST_FILTER][i].inst;
        ks_code_t c;
        const char *nn = NULL;
        ks_status_reset(&one);
        TIMED(on, fw, in, pod, KS_EP_POST_FILTER, c,
              in->d->post_filter(in->self, cs, pod, m, &nn, &one));
        if (c == KS_SUCCESS) {
            *nominated = nn ? ks_intern_str(ks_intern_global(), nn) : NULL;
            ks_status_reset(st);
            return KS_SUCCESS;
        }
        if (c == KS_PENDING) {
            *at = i; /* asked the extenders: call this plugin again */
            return KS_PENDING;
        }
        if (!is_unsched(c)) {
            st->n_reasons = 0;
            ks_status_merge_reasons(st, &one);
            if (!valid_code((int)c))
                return invalid_code(st, "PostFilter", in->name, (int)c);
            return as_error(st, "PostFilter", in->name);
        }
        if (code_rank(c) > code_rank(st->code))
            st->code = c;
        st->plugin = in->name;
        ks_status_merge_reasons(st, &one);
    }
    if (st->code == KS_SUCCESS)
        st->code = KS_UNSCHEDULABLE;
    return st->code;
}

ks_code_t ks_fw_run_pre_score(ks_framework_t *fw, ks_cycle_state_t *cs,
                              const ks_pod_t *pod,
                              const ks_node_info_t *const *nodes, uint32_t n,
                              ks_status_t *st)
{
    size_t i;
    uint64_t *skip = ks_cycle_state_skip_score(cs);
    int on = timing_on(fw);
    ks_status_reset(st);
    for (i = 0; i < fw->n_points[KS_EP_PRE_SCORE]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_PRE_SCORE][i].inst;
        ks_code_t c;
        size_t s;
        TIMED(on, fw, in, pod, KS_EP_PRE_SCORE, c,
              in->d->pre_score(in->self, cs, pod, nodes, n, st));
        if (c == KS_SKIP && fw->env != NULL && fw->env->score_skipped)
            continue; /* scored anyway (framework.h score_skipped) */
        if (c == KS_SKIP) {
            for (s = 0; s < fw->n_points[KS_EP_SCORE]; s++)
                if (fw->points[KS_EP_SCORE][s].inst == in)
                    *skip |= 1ull << s;
            continue;
        }
        if (c != KS_SUCCESS) {
            if (!valid_code((int)c))
                return invalid_code(st, "PreScore", in->name, (int)c);
            return as_error(st, "PreScore", in->name);
        }
    }
    return KS_SUCCESS;
}

typedef struct score_job {
    ks_framework_t *fw;
    ks_cycle_state_t *cs;
    const ks_pod_t *pod;
    const ks_node_info_t *const *nodes;
    const uint32_t *pos; /* their snapshot positions, or NULL */
    uint32_t n;
    int64_t *scores;
    uint64_t skip;
    /* first failure */
    int failed;
    ks_status_t err;
    pthread_mutex_t mu;
} score_job_t;

/* Plugin `in`'s raw scores of nodes [b, e) into row[b..e), node by node.
 * KS_SUCCESS, or the failing node's code with its status in *st. */
static ks_code_t score_one_by_one(score_job_t *j, ks_plugin_inst_t *in,
                                  void *state, int on, uint32_t b, uint32_t e,
                                  int64_t *row, ks_status_t *st)
{
    uint32_t k;
    for (k = b; k < e; k++) {
        int64_t s = 0;
        ks_code_t c;
        st->n_reasons = 0;
        st->code = KS_SUCCESS;
        TIMED_HOT(on, j->fw, in, j->pod, KS_EP_SCORE, c,
                  ks_fw_call_score(in, j->cs, state, j->pod, j->nodes[k], &s,
                                   st));
        if (c != KS_SUCCESS)
            return c;
        row[k] = s;
    }
    return KS_SUCCESS;
}

/* score_nodes (plugin.h, since ABI 1.2) over [b, e) into row[b..e): 1 when
 * it scored them all, 0 when the node-by-node way must (no score_nodes,
 * bulk off, a timed cycle, or it did not return Success). Under
 * KS_BULK_VERIFY the node-by-node scores are computed too and every
 * difference counted and logged. */
static int score_in_bulk(score_job_t *j, ks_plugin_inst_t *in, void *state,
                         int on, uint32_t b, uint32_t e, int64_t *row)
{
    ks_fw_env_t *env = j->fw->env;
    ks_status_t scratch;
    ks_code_t c;
    uint32_t k;
    if (in->d->score_nodes == NULL || on || env == NULL ||
        env->bulk == KS_BULK_OFF)
        return 0;
    ks_fw_scratch_init(&scratch);
    ks_fw_bulk_ctx_enter(env, j->nodes + b, j->pos ? j->pos + b : NULL);
    TIMED_HOT(0, j->fw, in, j->pod, KS_EP_SCORE, c,
              in->d->score_nodes(in->self, j->cs, state, j->pod,
                                 j->nodes + b, e - b, row + b, &scratch));
    ks_fw_bulk_ctx_leave();
    if (c != KS_SUCCESS)
        return 0;
    if (env->bulk == KS_BULK_VERIFY) {
        for (k = b; k < e; k++) {
            int64_t one = 0;
            ks_status_t st;
            ks_status_reset(&st);
            c = ks_fw_call_score(in, j->cs, state, j->pod, j->nodes[k], &one,
                                 &st);
            if (ks_fw_bulk_verified(env, c != KS_SUCCESS || one != row[k])) {
                ks_log(KS_LOG_ERROR,
                       "bulk verify: pod %s/%s node %s: plugin %s scored "
                       "%lld in bulk, %lld (%s) node by node",
                       j->pod->ns, j->pod->name, j->nodes[k]->node->name,
                       in->name, (long long)row[k], (long long)one,
                       ks_code_name(c));
                row[k] = one;
            }
        }
    }
    return 1;
}

/* Nodes a chunk's Score plugins take in turn before the next nodes: a
 * block's NodeInfo and Node lines (about 8 each) stay in the first-level
 * data cache from one plugin to the next, where a whole chunk's (hundreds
 * of nodes) would be evicted before the next plugin read them again. */
#define SCORE_BLOCK 64

static void score_chunk(void *ud, uint32_t b, uint32_t e, unsigned worker)
{
    score_job_t *j = ud;
    size_t np = j->fw->n_points[KS_EP_SCORE], p;
    const ks_point_entry_t *pl = j->fw->points[KS_EP_SCORE];
    void *states[KS_FW_MAX_MASKED_PLUGINS]; /* np is at most that */
    ks_status_t st;
    uint32_t bb, be;
    int on = timing_on(j->fw);
    (void)worker;
    /* score_with_state (since ABI 1.1): the state the plugin set at
     * PreScore, looked up once for the whole chunk. */
    for (p = 0; p < np; p++)
        states[p] = !(j->skip & (1ull << p)) && pl[p].inst->d->score_with_state
                        ? ks_cycle_state_slot_get(j->cs, &pl[p].inst->handle,
                                                  KS_STATE_SCORE)
                        : NULL;
    /* The blocks from the last to the first: Filter (and PreScore) went
     * through the nodes first to last, so the last nodes are the ones
     * still in the second-level cache. Scores do not depend on the
     * order they are computed in. */
    for (be = e; be > b; be = bb) {
        bb = be - b > SCORE_BLOCK ? be - SCORE_BLOCK : b;
        for (p = 0; p < np; p++) {
            ks_plugin_inst_t *in = pl[p].inst;
            int64_t *row = j->scores + p * j->n;
            ks_code_t c;
            if (j->skip & (1ull << p))
                continue;
            if (score_in_bulk(j, in, states[p], on, bb, be, row))
                continue;
            c = score_one_by_one(j, in, states[p], on, bb, be, row, &st);
            if (c != KS_SUCCESS) {
                pthread_mutex_lock(&j->mu);
                if (!j->failed) {
                    j->failed = 1;
                    ks_status_reset(&j->err);
                    ks_status_merge_reasons(&j->err, &st);
                    if (!valid_code((int)c))
                        invalid_code(&j->err, "Score", in->name, (int)c);
                    else
                        score_error(&j->err, "running Score plugins",
                                    in->name);
                }
                pthread_mutex_unlock(&j->mu);
                return;
            }
        }
    }
}

static int row_out_of_range(const int64_t *row, uint32_t n)
{
    uint64_t bad = 0;
    uint32_t k;
    for (k = 0; k < n; k++)
        bad |= KS_SCORE_BAD(row[k]);
    return (int)(bad >> 63);
}

/* One Score plugin's row (normalized) into the totals in a single pass:
 * the range check, row[k] *= w and totals[k] += row[k] (totals[k] =
 * row[k] for the first row, so the totals need no zeroing). 1 when a
 * score was out of range: row is then as the plugin left it (totals are
 * not, and are not used). */
static int weigh_row_checked(int64_t *restrict row, int64_t *restrict totals,
                             uint32_t n, int64_t w, int first)
{
    uint64_t bad = 0;
    uint32_t k;
    if (w != 1) {
        /* checked before the row is weighed in place */
        if (row_out_of_range(row, n))
            return 1;
        if (first)
            for (k = 0; k < n; k++)
                totals[k] = row[k] *= w;
        else
            for (k = 0; k < n; k++)
                totals[k] += row[k] *= w;
        return 0;
    }
    /* unsigned sums: a row out of range cannot overflow into UB */
    if (first)
        for (k = 0; k < n; k++) {
            bad |= KS_SCORE_BAD(row[k]);
            totals[k] = row[k];
        }
    else
        for (k = 0; k < n; k++) {
            bad |= KS_SCORE_BAD(row[k]);
            totals[k] = (int64_t)((uint64_t)totals[k] + (uint64_t)row[k]);
        }
    return (int)(bad >> 63);
}

/* Rows of weight 1 that NormalizeScore does not touch, weighed together:
 * Score plugins p, then the next ones that are skipped or of the same
 * kind (no plugin runs between their weighings). Their rows r[0..g) (2
 * or 3) summed into the totals in one pass. 1 when a score was out of
 * range: nothing is kept (the totals are not used), and the rows are
 * weighed one by one from the first, which finds it. */
#define GROUP_MAX 3
static unsigned group_w1(const ks_framework_t *fw, const uint8_t *skipped,
                         size_t p, int64_t *scores, uint32_t n,
                         const int64_t **r, size_t *last)
{
    size_t np = fw->n_points[KS_EP_SCORE], q;
    unsigned g = 0;
    for (q = p; q < np && g < GROUP_MAX; q++) {
        const ks_point_entry_t *e = &fw->points[KS_EP_SCORE][q];
        if (skipped[q])
            continue;
        if (e->weight != 1 || e->inst->d->normalize_score)
            break;
        r[g++] = scores + q * n;
        *last = q;
    }
    return g;
}

static int weigh_group_w1(const int64_t *const *r, unsigned g,
                          int64_t *restrict totals, uint32_t n, int first)
{
    const int64_t *restrict a = r[0], *restrict b = r[1];
    const int64_t *restrict c = g > 2 ? r[2] : NULL;
    uint64_t bad = 0;
    uint32_t k;
    if (c != NULL)
        for (k = 0; k < n; k++) {
            uint64_t t = (first ? 0 : (uint64_t)totals[k]) + (uint64_t)a[k] +
                         (uint64_t)b[k] + (uint64_t)c[k];
            bad |= KS_SCORE_BAD(a[k]) | KS_SCORE_BAD(b[k]) | KS_SCORE_BAD(c[k]);
            totals[k] = (int64_t)t;
        }
    else
        for (k = 0; k < n; k++) {
            uint64_t t = (first ? 0 : (uint64_t)totals[k]) + (uint64_t)a[k] +
                         (uint64_t)b[k];
            bad |= KS_SCORE_BAD(a[k]) | KS_SCORE_BAD(b[k]);
            totals[k] = (int64_t)t;
        }
    return (int)(bad >> 63);
}

ks_code_t ks_fw_run_score(ks_framework_t *fw, ks_cycle_state_t *cs,
                          const ks_pod_t *pod,
                          const ks_node_info_t *const *nodes,
                          const uint32_t *pos,
                          const char *const *names, uint32_t n,
                          int64_t *scores, uint8_t *skipped, int64_t *totals,
                          ks_status_t *st)
{
    size_t np = fw->n_points[KS_EP_SCORE], p;
    uint32_t k;
    int on = timing_on(fw);
    score_job_t j;
    ks_node_score_t stack_ns[256];
    ks_node_score_t *ns = n <= 256 ? stack_ns : NULL;
    int named = 0, weighed = 0;

    ks_status_reset(st);
    /* Rows of plugins that run are written in full by score_chunk; rows of
     * skipped plugins are left as they are (skipped[] says which). The
     * first weighed row sets the totals (zeroed only when none is). */
    memset(&j, 0, sizeof j);
    j.fw = fw;
    j.cs = cs;
    j.pod = pod;
    j.nodes = nodes;
    j.pos = pos;
    j.n = n;
    j.scores = scores;
    j.skip = *ks_cycle_state_skip_score(cs);
    pthread_mutex_init(&j.mu, NULL);
    for (p = 0; p < np; p++)
        skipped[p] = (j.skip >> p) & 1;
    ks_pool_run_affine(fw->pool, n, n / (4 * ks_pool_size(fw->pool)) + 1,
                       score_chunk, &j);
    pthread_mutex_destroy(&j.mu);
    if (j.failed) {
        ks_status_reset(st);
        st->code = j.err.code;
        st->plugin = j.err.plugin;
        ks_status_merge_reasons(st, &j.err);
        return st->code;
    }
    if (ns == NULL && (ns = malloc(n * sizeof *ns)) == NULL)
        return out_of_memory(st, NULL);
    for (p = 0; p < np; p++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_SCORE][p].inst;
        int64_t *row = scores + p * n;
        int32_t w = fw->points[KS_EP_SCORE][p].weight;
        const int64_t *group[GROUP_MAX];
        size_t last = p;
        unsigned g;
        if (skipped[p])
            continue;
        if (w == 1 && !in->d->normalize_score &&
            (g = group_w1(fw, skipped, p, scores, n, group, &last)) >= 2 &&
            !weigh_group_w1(group, g, totals, n, !weighed)) {
            weighed = 1;
            p = last;
            continue;
        }
        if (in->d->normalize_score) {
            ks_code_t c;
            /* The names once per cycle: each is two dependent loads per
             * node, a cache miss apiece on large clusters. */
            if (named) {
                for (k = 0; k < n; k++)
                    ns[k].score = row[k];
            } else if (names != NULL) {
                for (k = 0; k < n; k++) {
                    ns[k].node_name = names[k];
                    ns[k].score = row[k];
                }
            } else {
                for (k = 0; k < n; k++) {
                    ns[k].node_name = nodes[k]->node->name;
                    ns[k].score = row[k];
                }
            }
            named = 1;
            TIMED(on, fw, in, pod, KS_FW_EP_NORMALIZE_SCORE, c,
                  in->d->normalize_score(in->self, cs, pod, ns, n, st));
            if (c != KS_SUCCESS) {
                if (ns != stack_ns)
                    free(ns);
                if (!valid_code((int)c))
                    return invalid_code(st, "NormalizeScore", in->name, (int)c);
                return score_error(st, "running Normalize on Score plugins",
                                   in->name);
            }
        }
        /* The range check as one flag over the row, in the weighing
         * pass; the node is looked for only when one was out of range. */
        if (in->d->normalize_score
                ? !ks_fw_weigh_normalized(ns, row, totals, n, w, !weighed)
                : !weigh_row_checked(row, totals, n, w, !weighed)) {
            weighed = 1;
            continue;
        }
        for (k = 0; row[k] >= KS_MIN_NODE_SCORE && row[k] <= KS_MAX_NODE_SCORE;
             k++)
            ; /* the first node out of range: there is one */
        if (ns != stack_ns)
            free(ns);
        st->n_reasons = 0;
        ks_status_add_reasonf(
            st,
            "applying score defaultWeights on Score plugins: plugin "
            "\"%s\" returns an invalid score %lld for node \"%s\", "
            "it should in the range of [%d, %d] after normalizing",
            in->name, (long long)row[k], nodes[k]->node->name,
            KS_MIN_NODE_SCORE, KS_MAX_NODE_SCORE);
        return fail(st, in->name, KS_ERROR);
    }
    if (ns != stack_ns)
        free(ns);
    if (!weighed)
        memset(totals, 0, n * sizeof *totals);
    return KS_SUCCESS;
}

ks_code_t ks_fw_run_reserve(ks_framework_t *fw, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const char *node,
                            ks_status_t *st)
{
    size_t i;
    int on = timing_on(fw);
    ks_status_reset(st);
    for (i = 0; i < fw->n_points[KS_EP_RESERVE]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_RESERVE][i].inst;
        ks_code_t c;
        TIMED(on, fw, in, pod, KS_EP_RESERVE, c,
              in->d->reserve(in->self, cs, pod, node, st));
        if (c != KS_SUCCESS) {
            if (!valid_code((int)c))
                return invalid_code(st, "Reserve", in->name, (int)c);
            return as_error(st, "Reserve", in->name);
        }
    }
    return KS_SUCCESS;
}

void ks_fw_run_unreserve(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node)
{
    size_t i = fw->n_points[KS_EP_RESERVE];
    int on = timing_on(fw);
    while (i-- > 0) {
        ks_plugin_inst_t *in = fw->points[KS_EP_RESERVE][i].inst;
        TIMED_VOID(on, fw, in, pod, KS_FW_EP_UNRESERVE,
                   in->d->unreserve(in->self, cs, pod, node));
    }
}

ks_code_t ks_fw_run_permit(ks_framework_t *fw, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const char *node,
                           uint64_t *timeout_ms, uint64_t *wait_plugins,
                           const char **timeout_plugin, ks_status_t *st)
{
    size_t i;
    int waiting = 0;
    int on = timing_on(fw);
    ks_status_reset(st);
    *timeout_ms = 0;
    *wait_plugins = 0;
    *timeout_plugin = NULL;
    for (i = 0; i < fw->n_points[KS_EP_PERMIT]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_PERMIT][i].inst;
        uint64_t t = 0;
        ks_code_t c;
        TIMED(on, fw, in, pod, KS_EP_PERMIT, c,
              in->d->permit(in->self, cs, pod, node, &t, st));
        if (c == KS_SUCCESS)
            continue;
        if (is_rejected(c))
            return fail(st, in->name, c);
        if (c == KS_WAIT) {
            if (t > PERMIT_MAX_TIMEOUT_MS)
                t = PERMIT_MAX_TIMEOUT_MS;
            if (!waiting || t < *timeout_ms) {
                *timeout_ms = t;
                *timeout_plugin = in->name;
            }
            waiting = 1;
            *wait_plugins |= 1ull << i;
            continue;
        }
        if (!valid_code((int)c))
            return invalid_code(st, "Permit", in->name, (int)c);
        return as_error(st, "Permit", in->name);
    }
    if (waiting) {
        st->n_reasons = 0;
        ks_status_add_reasonf(st,
                              "one or more plugins asked to wait and no "
                              "plugin rejected pod \"%s\"",
                              pod->name);
        st->code = KS_WAIT;
        return KS_WAIT;
    }
    return KS_SUCCESS;
}

ks_code_t ks_fw_run_pre_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const char *node,
                             size_t *at, ks_status_t *st)
{
    size_t i;
    int on = timing_on(fw);
    ks_status_reset(st);
    for (i = *at; i < fw->n_points[KS_EP_PRE_BIND]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_PRE_BIND][i].inst;
        ks_code_t c;
        TIMED(on, fw, in, pod, KS_EP_PRE_BIND, c,
              in->d->pre_bind(in->self, cs, pod, node, st));
        if (c == KS_PENDING) {
            st->n_reasons = 0;
            *at = i;
            return KS_PENDING;
        }
        if (c != KS_SUCCESS) {
            if (!valid_code((int)c))
                return invalid_code(st, "PreBind", in->name, (int)c);
            return as_error(st, "PreBind", in->name);
        }
    }
    *at = i;
    return KS_SUCCESS;
}

ks_code_t ks_fw_pre_bind_resumed(ks_framework_t *fw, size_t at, ks_code_t code,
                                 const char *reason, ks_status_t *st)
{
    const char *name = fw->points[KS_EP_PRE_BIND][at].inst->name;
    ks_status_reset(st);
    if (code == KS_SUCCESS)
        return KS_SUCCESS;
    if (!valid_code((int)code) || code == KS_PENDING)
        return invalid_code(st, "PreBind (resumed)", name, (int)code);
    if (reason && reason[0])
        ks_status_add_reason(st, reason);
    return as_error(st, "PreBind", name);
}

const void *ks_fw_pre_bind_inst(const ks_framework_t *fw, size_t at)
{
    return at < fw->n_points[KS_EP_PRE_BIND]
               ? (const void *)fw->points[KS_EP_PRE_BIND][at].inst
               : NULL;
}

ks_code_t ks_fw_run_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node,
                         ks_status_t *st)
{
    size_t i;
    int on = timing_on(fw);
    ks_status_reset(st);
    for (i = 0; i < fw->n_points[KS_EP_BIND]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_BIND][i].inst;
        ks_code_t c;
        TIMED(on, fw, in, pod, KS_EP_BIND, c,
              in->d->bind(in->self, cs, pod, node, st));
        if (c == KS_SKIP) {
            st->n_reasons = 0;
            continue;
        }
        if (c != KS_SUCCESS) {
            if (!valid_code((int)c))
                return invalid_code(st, "Bind", in->name, (int)c);
            return as_error(st, "Bind", in->name);
        }
        st->plugin = in->name;
        return KS_SUCCESS;
    }
    st->code = KS_SKIP;
    return KS_SKIP;
}

void ks_fw_run_post_bind(ks_framework_t *fw, ks_cycle_state_t *cs,
                         const ks_pod_t *pod, const char *node)
{
    size_t i;
    int on = timing_on(fw);
    for (i = 0; i < fw->n_points[KS_EP_POST_BIND]; i++) {
        ks_plugin_inst_t *in = fw->points[KS_EP_POST_BIND][i].inst;
        TIMED_VOID(on, fw, in, pod, KS_EP_POST_BIND,
                   in->d->post_bind(in->self, cs, pod, node));
    }
}

int ks_fw_event_matters(ks_framework_t *fw, const char *plugin,
                        ks_cluster_event_t ev)
{
    size_t i;
    for (i = 0; i < fw->n_insts; i++) {
        const ks_plugin_inst_t *in = fw->insts[i];
        uint32_t k;
        if (strcmp(in->name, plugin) != 0)
            continue;
        if (in->every_event)
            return 1;
        for (k = 0; k < in->n_events; k++)
            if (ks_cluster_event_covers(in->events[k], ev))
                return 1;
        return 0;
    }
    return 1;
}
