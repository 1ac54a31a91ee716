/*
 * The host API table handed to every plugin's create: thin calls into the
 * framework env (snapshot, cache, the scheduler's ops) of the plugin's
 * handle. Calls that cannot report a failure degrade to a safe answer
 * (no node, 0); a PreFilter node set that cannot grow makes PreFilter an
 * Error. Threads: as the SDK documents per call; the calls it documents
 * "loop thread only" are refused inside Filter/Score jobs (thread_rules.h:
 * an abort in debug and sanitizer builds, the error value plugin.h names
 * otherwise).
 */
#include "framework.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intern.h"
#include "plugin_async.h"
#include "cluster/object_store.h"
#include "cluster/object_view.h"
#include "cycle_state.h"
#include "base/log.h"
#include "base/mono_clock.h"
#include "grow.h"
#include "thread_rules.h"

#define H(h) ((struct ks_handle *)(h))
#define ENV(h) (H(h)->fw->env)

/* The first statement of a loop-thread-only call: inside a parallel job it
 * aborts or returns `refusal` (empty for void calls). */
#define LOOP_ONLY(name, refusal)                                               \
    do {                                                                       \
        static ks_thread_rule_t rule_ = KS_THREAD_RULE(name);                  \
        if (!ks_thread_rule_ok(&rule_))                                        \
            return refusal;                                                    \
    } while (0)

_Static_assert(KS_LOGL_ERROR == (int)KS_LOG_ERROR &&
                   KS_LOGL_WARN == (int)KS_LOG_WARN &&
                   KS_LOGL_INFO == (int)KS_LOG_INFO &&
                   KS_LOGL_DEBUG == (int)KS_LOG_DEBUG,
               "host log levels are the SDK's");

static void api_log(ks_handle_t *h, ks_log_level_t level, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ks_log((int)level, "plugin %s: %s", H(h)->inst->name, buf);
}

static const char *api_intern(ks_handle_t *h, const char *s)
{
    (void)h;
    return ks_intern_str(ks_intern_global(), s ? s : "");
}

/* Out of memory, the result is marked and PreFilter turns it into an
 * Error status (the plugin has no way to hear of it). */
static void api_prefilter_add(ks_prefilter_result_t *r, const char *name)
{
    const char *in = ks_intern_str(ks_intern_global(), name);
    const char **names;
    uint32_t i;
    r->all = 0;
    if (in == NULL) {
        r->oom = 1;
        return;
    }
    for (i = 0; i < r->n; i++)
        if (r->names[i] == in)
            return;
    names = ks_fw_grow(r->names, &r->cap, (size_t)r->n + 1, sizeof *names, 8);
    if (names == NULL) {
        r->oom = 1;
        return;
    }
    r->names = names;
    r->names[r->n++] = in;
}

static void api_prefilter_none(ks_prefilter_result_t *r)
{
    r->all = 0;
    r->n = 0;
}

static uint32_t api_num_nodes(ks_handle_t *h)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot ? ks_snapshot_num_nodes(e->snapshot) : 0;
}

static const ks_node_info_t *api_node_at(ks_handle_t *h, uint32_t i)
{
    ks_fw_env_t *e = ENV(h);
    if (e == NULL || e->snapshot == NULL ||
        i >= ks_snapshot_num_nodes(e->snapshot))
        return NULL;
    return ks_snapshot_node_at(e->snapshot, i);
}

static const ks_node_info_t *api_get(ks_handle_t *h, const char *name)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot ? ks_snapshot_get(e->snapshot, name) : NULL;
}

static uint32_t api_image_num_nodes(ks_handle_t *h, const char *image)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot ? ks_snapshot_image_num_nodes(e->snapshot, image)
                            : 0;
}

static ks_labels_t api_namespace_labels(ks_handle_t *h, const char *ns)
{
    ks_fw_env_t *e = ENV(h);
    ks_labels_t none = {NULL, 0};
    return e && e->cache ? ks_cache_namespace_labels(e->cache, ns) : none;
}

static uint32_t api_owner_selectors(ks_handle_t *h, const ks_pod_t *pod,
                                    const ks_label_selector_t **out,
                                    uint32_t cap)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->cache ? ks_cache_owner_selectors(e->cache, pod, out, cap)
                         : 0;
}

/* A node the map has no status for (an extender dropped it from its
 * answer without a reason, PreFilter's node names left it out, or it is
 * not in the snapshot) reads as m->absent: UnschedulableAndUnresolvable,
 * upstream v1.36's absentNodesStatus, so preemption does not try it. */
static ks_code_t api_node_status_code(const ks_node_status_map_t *m,
                                      const char *node_name)
{
    uint32_t i;
    if (m == NULL || m->snap == NULL || node_name == NULL)
        return KS_SUCCESS;
    i = ks_snapshot_index(m->snap, node_name);
    return i < m->n && m->set[i] ? m->st[i].code : m->absent;
}

static int api_cs_write(ks_cycle_state_t *cs, const char *key, void *data,
                        ks_state_clone_fn clone_fn, ks_state_free_fn free_fn)
{
    LOOP_ONLY("cycle_state_write", -1);
    return ks_cycle_state_write(cs, key, data, clone_fn, free_fn);
}

static void api_cs_delete(ks_cycle_state_t *cs, const char *key)
{
    LOOP_ONLY("cycle_state_delete", );
    ks_cycle_state_delete(cs, key);
}

static ks_waiting_pod_t *api_wp_get(ks_handle_t *h, const char *uid)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("waiting_pod_get", NULL);
    if (e == NULL || e->ops == NULL || e->ops->waiting_pod_get == NULL)
        return NULL;
    return e->ops->waiting_pod_get(e, uid);
}

/* The waiting-pod calls need the env, which the waiting pod knows; the ops
 * table is process-wide, reached through the first env that registered. */
static const ks_fw_ops_t *g_ops;

static const ks_pod_t *api_wp_pod(ks_waiting_pod_t *wp)
{
    LOOP_ONLY("waiting_pod_pod", NULL);
    return g_ops && wp ? g_ops->waiting_pod_pod(wp) : NULL;
}

/* The name-based calls act only for a Permit plugin of the waiting pod's
 * profile: a misspelt or borrowed name is refused with a log line. */
static int wp_name_ok(ks_waiting_pod_t *wp, const char *plugin,
                      const char *call)
{
    const ks_pod_t *pod;
    if (g_ops->waiting_pod_permit_has == NULL ||
        g_ops->waiting_pod_permit_has(wp, plugin))
        return 1;
    pod = g_ops->waiting_pod_pod(wp);
    ks_log(KS_LOGL_WARN,
           "%s(\"%s\") for pod %s/%s refused: no Permit plugin of the "
           "pod's profile has that name (%s_as acts as the calling plugin)",
           call, plugin ? plugin : "(null)", pod ? pod->ns : "",
           pod ? pod->name : "", call);
    return 0;
}

/* A name the waiting pod keeps (as its rejecting plugin): interned, so it
 * outlives the caller's buffer and the plugin's file. */
static const char *wp_keep_name(const char *plugin)
{
    const char *in = ks_intern_str(ks_intern_global(), plugin);
    return in ? in : "out of memory";
}

static void api_wp_allow(ks_waiting_pod_t *wp, const char *plugin)
{
    LOOP_ONLY("waiting_pod_allow", );
    if (g_ops && wp && wp_name_ok(wp, plugin, "waiting_pod_allow"))
        g_ops->waiting_pod_allow(wp, plugin);
}

static void api_wp_reject(ks_waiting_pod_t *wp, const char *plugin,
                          const char *msg)
{
    LOOP_ONLY("waiting_pod_reject", );
    if (g_ops && wp && wp_name_ok(wp, plugin, "waiting_pod_reject"))
        g_ops->waiting_pod_reject(wp, wp_keep_name(plugin), msg);
}

static void api_wp_allow_as(ks_handle_t *h, ks_waiting_pod_t *wp)
{
    LOOP_ONLY("waiting_pod_allow_as", );
    if (g_ops && wp && h)
        g_ops->waiting_pod_allow(wp, H(h)->inst->name);
}

static void api_wp_reject_as(ks_handle_t *h, ks_waiting_pod_t *wp,
                             const char *msg)
{
    LOOP_ONLY("waiting_pod_reject_as", );
    if (g_ops && wp && h)
        g_ops->waiting_pod_reject(wp, wp_keep_name(H(h)->inst->name), msg);
}

static uint32_t api_wp_pending(ks_waiting_pod_t *wp, const char **out,
                               uint32_t cap)
{
    LOOP_ONLY("waiting_pod_pending_plugins", 0);
    if (g_ops == NULL || wp == NULL ||
        g_ops->waiting_pod_pending_plugins == NULL)
        return 0;
    return g_ops->waiting_pod_pending_plugins(wp, out, cap);
}

static void api_wp_iterate(ks_handle_t *h, ks_waiting_pod_fn fn, void *ud)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("waiting_pods_iterate", );
    if (e && e->ops && e->ops->waiting_pods_iterate)
        e->ops->waiting_pods_iterate(e, fn, ud);
}

static int api_bind(ks_handle_t *h, const ks_pod_t *pod, const char *node)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("bind", -1);
    if (e == NULL || e->ops == NULL || e->ops->bind == NULL)
        return -1;
    return e->ops->bind(e, pod, node);
}

static int api_delete_pod(ks_handle_t *h, const ks_pod_t *pod)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("delete_pod", -1);
    if (e == NULL || e->ops == NULL || e->ops->delete_pod == NULL)
        return -1;
    return e->ops->delete_pod(e, pod);
}

static int api_set_nominated(ks_handle_t *h, const ks_pod_t *pod,
                             const char *node)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("set_nominated_node", -1);
    if (e == NULL || e->ops == NULL || e->ops->set_nominated_node == NULL)
        return -1;
    return e->ops->set_nominated_node(e, pod, node);
}

static void api_event(ks_handle_t *h, const ks_pod_t *pod, const char *type,
                      const char *reason, const char *message)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("event", );
    if (e && e->ops && e->ops->event)
        e->ops->event(e, pod, type, reason, message);
}

static ks_node_info_t *api_ni_clone(ks_handle_t *h, const ks_node_info_t *ni)
{
    (void)h;
    LOOP_ONLY("nodeinfo_clone", NULL);
    return ks_node_info_clone(ni);
}

static void api_ni_free(ks_handle_t *h, ks_node_info_t *ni)
{
    (void)h;
    LOOP_ONLY("nodeinfo_free", );
    ks_node_info_free(ni);
}

static void api_ni_add(ks_handle_t *h, ks_node_info_t *ni, const ks_pod_t *p)
{
    (void)h;
    LOOP_ONLY("nodeinfo_add_pod", );
    ks_node_info_add_pod(ni, p);
}

static void api_ni_remove(ks_handle_t *h, ks_node_info_t *ni,
                          const ks_pod_t *p)
{
    (void)h;
    LOOP_ONLY("nodeinfo_remove_pod", );
    ks_node_info_remove_pod(ni, p);
}

static ks_cycle_state_t *api_cs_clone(ks_handle_t *h,
                                      const ks_cycle_state_t *cs)
{
    (void)h;
    LOOP_ONLY("cycle_state_clone", NULL);
    return ks_cycle_state_clone(cs);
}

static void api_cs_free(ks_handle_t *h, ks_cycle_state_t *cs)
{
    (void)h;
    LOOP_ONLY("cycle_state_free", );
    ks_cycle_state_free(cs);
}

/* A refused run_* call: an Error whose reason names the rule. */
static ks_code_t refused_run(const char *name, ks_status_t *st)
{
    if (st != NULL) {
        ks_status_reset(st);
        st->code = KS_ERROR;
        ks_status_add_reasonf(st, KS_THREAD_RULE_MSG_FMT, name);
    }
    return KS_ERROR;
}

static ks_code_t api_run_filters(ks_handle_t *h, ks_cycle_state_t *cs,
                                 const ks_pod_t *pod, const ks_node_info_t *ni,
                                 ks_status_t *st)
{
    LOOP_ONLY("run_filters", refused_run("run_filters", st));
    return ks_fw_run_filter_with_nominated(H(h)->fw, cs, pod, ni, 1, st);
}

static ks_code_t api_run_add(ks_handle_t *h, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_pod_t *to_add,
                             const ks_node_info_t *ni, ks_status_t *st)
{
    LOOP_ONLY("run_prefilter_add_pod",
              refused_run("run_prefilter_add_pod", st));
    return ks_fw_run_prefilter_add_pod(H(h)->fw, cs, pod, to_add, ni, st);
}

static ks_code_t api_run_remove(ks_handle_t *h, ks_cycle_state_t *cs,
                                const ks_pod_t *pod, const ks_pod_t *to_remove,
                                const ks_node_info_t *ni, ks_status_t *st)
{
    LOOP_ONLY("run_prefilter_remove_pod",
              refused_run("run_prefilter_remove_pod", st));
    return ks_fw_run_prefilter_remove_pod(H(h)->fw, cs, pod, to_remove, ni,
                                          st);
}

static ks_status_t *api_status_new(ks_handle_t *h)
{
    ks_status_t *st = calloc(1, sizeof *st);
    (void)h;
    return st;
}

static void api_status_free(ks_status_t *st)
{
    free(st);
}

static const char *api_status_message(const ks_status_t *st)
{
    return ks_status_message_joined(st);
}

static uint32_t api_nominated_pods(ks_handle_t *h, const char *node,
                                   const ks_pod_t **out, uint32_t cap)
{
    ks_fw_env_t *e = ENV(h);
    const char *in;
    LOOP_ONLY("nominated_pods", 0);
    if (e == NULL || e->ops == NULL || e->ops->nominated_pods == NULL)
        return 0;
    in = ks_intern_str(ks_intern_global(), node ? node : "");
    return in ? e->ops->nominated_pods(e, in, out, cap) : 0;
}

static int64_t api_now_ms(ks_handle_t *h)
{
    ks_fw_env_t *e = ENV(h);
    if (e && e->now_ms)
        return e->now_ms(e);
    return ks_mono_ms();
}

/* Score and Filter run on several threads at once: there each thread
 * draws from its own generator, never from the env's (loop-thread) one. */
static _Thread_local uint64_t worker_rng;

static uint32_t api_rand_below(ks_handle_t *h, uint32_t n)
{
    ks_fw_env_t *e = ENV(h);
    if (n == 0 || e == NULL || e->deterministic)
        return 0;
    if (ks_pool_in_job()) {
        if (worker_rng == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            worker_rng = (uint64_t)(uintptr_t)&worker_rng ^
                         ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec;
        }
        return (uint32_t)(ks_rand_next(&worker_rng) >> 32) % n;
    }
    return (uint32_t)(ks_fw_env_rand(e) >> 32) % n;
}

static uint32_t api_reason_count(const ks_status_t *st)
{
    return st ? st->n_reasons : 0;
}

static const char *api_reason_at(const ks_status_t *st, uint32_t i)
{
    return st && i < st->n_reasons ? ks_status_reason(st, i) : NULL;
}

static const ks_node_info_t *const *no_nodes(uint32_t *n)
{
    *n = 0;
    return NULL;
}

static const ks_node_info_t *const *api_nodes(ks_handle_t *h, uint32_t *n)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot ? ks_snapshot_nodes(e->snapshot, n) : no_nodes(n);
}

static uint64_t api_snapshot_changes(ks_handle_t *h, uint64_t since,
                                     const uint32_t **idx, uint32_t *n)
{
    ks_fw_env_t *e = ENV(h);
    *idx = NULL;
    *n = 0;
    LOOP_ONLY("snapshot_changes", 0);
    if (e == NULL || e->snapshot == NULL)
        return 0;
    return ks_snapshot_changed_since(e->snapshot, since, idx, n);
}

static const ks_node_info_t *const *api_nodes_aff(ks_handle_t *h, uint32_t *n)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot ? ks_snapshot_nodes_with_affinity(e->snapshot, n)
                            : no_nodes(n);
}

static const ks_node_info_t *const *api_nodes_anti(ks_handle_t *h,
                                                   uint32_t *n)
{
    ks_fw_env_t *e = ENV(h);
    return e && e->snapshot
               ? ks_snapshot_nodes_with_required_anti_affinity(e->snapshot, n)
               : no_nodes(n);
}

static ks_code_t api_ext_preempt(ks_handle_t *h, const ks_pod_t *pod,
                                 const ks_preempt_candidate_t *cands,
                                 uint32_t n, ks_status_t *st)
{
    ks_fw_env_t *e = ENV(h);
    LOOP_ONLY("extenders_preempt", refused_run("extenders_preempt", st));
    if (e == NULL || e->ops == NULL || e->ops->extenders_preempt == NULL)
        return KS_SKIP;
    return e->ops->extenders_preempt(e, pod, cands, n, st);
}

static ks_code_t api_ext_preempt_result(ks_handle_t *h, const ks_pod_t *pod,
                                        const ks_preempt_candidate_t **out,
                                        uint32_t *n, ks_status_t *st)
{
    ks_fw_env_t *e = ENV(h);
    *out = NULL;
    *n = 0;
    LOOP_ONLY("extenders_preempt_result",
              refused_run("extenders_preempt_result", st));
    if (e == NULL || e->ops == NULL ||
        e->ops->extenders_preempt_result == NULL)
        return KS_SKIP;
    return e->ops->extenders_preempt_result(e, pod, out, n, st);
}

static int api_plugin_state_set(ks_handle_t *h, ks_cycle_state_t *cs,
                                ks_state_slot_t slot, void *data,
                                ks_state_clone_fn clone_fn,
                                ks_state_free_fn free_fn)
{
    LOOP_ONLY("plugin_state_set", -1);
    if (h == NULL || cs == NULL)
        return -1;
    return ks_cycle_state_slot_set(cs, h, (unsigned)slot, data, clone_fn,
                                   free_fn);
}

static void *api_plugin_state_get(ks_handle_t *h, const ks_cycle_state_t *cs,
                                  ks_state_slot_t slot)
{
    if (h == NULL || cs == NULL)
        return NULL;
    return ks_cycle_state_slot_get(cs, h, (unsigned)slot);
}

/* --- cluster objects (ABI 1.3; cluster/object_store.h) --------------------- */

/* The store of a resource the plugin declared; NULL otherwise (a plugin
 * reads only what it declared, so the host knows what to keep). */
static const ks_store_t *api_store_get(ks_handle_t *h, const char *group,
                                       const char *version,
                                       const char *resource)
{
    const ks_plugin_t *d;
    uint32_t i;
    if (h == NULL || H(h)->inst == NULL || version == NULL ||
        resource == NULL)
        return NULL;
    if (group == NULL)
        group = "";
    d = H(h)->inst->d;
    if (d == NULL || !KS_PLUGIN_HAS(d, resources))
        return NULL;
    for (i = 0; i < d->n_resources; i++) {
        const ks_resource_ref_t *r = &d->resources[i];
        if (strcmp(r->group, group) == 0 &&
            strcmp(r->version, version) == 0 &&
            strcmp(r->resource, resource) == 0)
            return ks_store_find(group, version, resource);
    }
    return NULL;
}

static uint64_t api_store_version(const ks_store_t *s)
{
    return ks_store_version(s);
}

static uint32_t api_store_count(const ks_store_t *s)
{
    return ks_store_count(s);
}

static const ks_object_t *api_object_get(const ks_store_t *s, const char *ns,
                                         const char *name)
{
    return ks_store_get(s, ns, name);
}

static uint32_t api_object_list(const ks_store_t *s, const char *ns,
                                const ks_label_selector_t *sel,
                                ks_object_fn fn, void *ud)
{
    return ks_store_list(s, ns, sel, fn, ud);
}

static const char *api_object_name(const ks_object_t *o)
{
    return o ? o->name : "";
}

static const char *api_object_namespace(const ks_object_t *o)
{
    return o ? o->ns : "";
}

static const char *api_object_uid(const ks_object_t *o)
{
    return o ? o->uid : "";
}

static ks_labels_t api_object_labels(const ks_object_t *o)
{
    ks_labels_t none = {NULL, 0};
    return o ? o->labels : none;
}

static ks_field_rc_t api_object_string(const ks_object_t *o, const char *path,
                                       const char **out)
{
    return ks_field_string(o ? o->tree : NULL, path, out);
}

static ks_field_rc_t api_object_int(const ks_object_t *o, const char *path,
                                    int64_t *out)
{
    return ks_field_int(o ? o->tree : NULL, path, out);
}

static ks_field_rc_t api_object_bool(const ks_object_t *o, const char *path,
                                     int *out)
{
    return ks_field_bool(o ? o->tree : NULL, path, out);
}

static ks_field_rc_t api_object_len(const ks_object_t *o, const char *path,
                                    uint32_t *out)
{
    return ks_field_len(o ? o->tree : NULL, path, out);
}

static ks_field_type_t api_object_type(const ks_object_t *o, const char *path)
{
    return ks_field_type(o ? o->tree : NULL, path);
}

static ks_field_rc_t api_object_map_iterate(const ks_object_t *o,
                                            const char *path,
                                            ks_field_kv_fn fn, void *ud)
{
    if (fn == NULL)
        return KS_FIELD_MISSING;
    return ks_field_map_iterate(o ? o->tree : NULL, path, fn, ud);
}

/* --- the cluster's API, timers, PreBind's wait (ABI 1.4; plugin_async.h) */

static const char *inst_name(ks_handle_t *h)
{
    return H(h)->inst && H(h)->inst->name ? H(h)->inst->name : "?";
}

static ks_api_mode_t api_api_mode(ks_handle_t *h)
{
    LOOP_ONLY("api_mode", KS_API_NONE);
    return h ? ks_fw_api_mode(ENV(h)) : KS_API_NONE;
}

static int api_api_request(ks_handle_t *h, const ks_api_request_t *req,
                           ks_api_done_fn done, void *ud,
                           ks_api_call_t **call)
{
    LOOP_ONLY("api_request", -1);
    if (h == NULL)
        return -1;
    return ks_fw_api_request(ENV(h), H(h)->inst, inst_name(h), req, done, ud,
                             call);
}

static void api_api_cancel(ks_handle_t *h, ks_api_call_t *call)
{
    LOOP_ONLY("api_cancel", );
    (void)h;
    ks_fw_api_cancel(call);
}

static ks_timer_t *api_timer_start(ks_handle_t *h, uint64_t ms,
                                   ks_timer_fn fn, void *ud)
{
    LOOP_ONLY("timer_start", NULL);
    return h ? ks_fw_timer_start(ENV(h), H(h)->inst, ms, fn, ud) : NULL;
}

static void api_timer_stop(ks_handle_t *h, ks_timer_t *t)
{
    LOOP_ONLY("timer_stop", );
    (void)h;
    ks_fw_timer_stop(t);
}

static int api_pre_bind_resume(ks_handle_t *h, const char *pod_uid,
                               ks_code_t code, const char *reason)
{
    ks_fw_env_t *e;
    LOOP_ONLY("pre_bind_resume", -1);
    if (h == NULL || (e = ENV(h)) == NULL || e->ops == NULL ||
        e->ops->pre_bind_resume == NULL)
        return -1;
    return e->ops->pre_bind_resume(e, H(h)->inst, pod_uid, code, reason);
}

/* The columns for the bulk call running on this thread (framework.h
 * ks_fw_bulk_ctx), when `nodes` is its array. */
static const ks_node_columns_t *api_bulk_columns(
    ks_handle_t *h, const ks_node_info_t *const *nodes, const uint32_t **pos)
{
    (void)h;
    if (ks_fw_bulk_ctx.cols == NULL || nodes != ks_fw_bulk_ctx.nodes) {
        *pos = NULL;
        return NULL;
    }
    *pos = ks_fw_bulk_ctx.pos;
    return ks_fw_bulk_ctx.cols;
}

/* upstream's Parallelizer().Until on the profile's pool; one call inside
 * a job (a Filter's, a Score's, another parallelize's fn), as the worker
 * running it, or without a pool. The pool times the call site (fn) as it
 * does the host's own. */
static void api_parallelize(ks_handle_t *h, uint32_t n, uint32_t chunk,
                            void (*fn)(void *ud, uint32_t begin,
                                       uint32_t end, unsigned worker),
                            void *ud)
{
    ks_pool_t *pool = h != NULL && H(h)->fw != NULL ? H(h)->fw->pool : NULL;
    if (fn == NULL || n == 0)
        return;
    if (ks_pool_in_job()) {
        /* inside a chunk already: the range here, as this worker */
        fn(ud, 0, n, ks_pool_worker_id);
        return;
    }
    if (chunk == 0) {
        /* upstream's chunkSizeFor: the square root of n, at most
         * n / workers + 1 (work that sits in a few nodes, the pods of a
         * small cluster in a big one, still spreads) */
        uint32_t r = n / ks_pool_size(pool) + 1;
        chunk = 1;
        while ((chunk + 1) * (chunk + 1) <= n)
            chunk++;
        if (chunk > r)
            chunk = r;
    }
    ks_pool_run(pool, n, chunk, fn, ud);
}

static unsigned api_parallelize_workers(ks_handle_t *h)
{
    return ks_pool_size(h != NULL && H(h)->fw != NULL ? H(h)->fw->pool
                                                      : NULL);
}

static const ks_host_api_t api = {
    .abi_major = KS_ABI_MAJOR,
    .abi_minor = KS_ABI_MINOR,
    .size = sizeof(ks_host_api_t),
    .status_reason = ks_status_add_reason,
    .status_reasonf = ks_status_add_reasonf,
    .log = api_log,
    .intern = api_intern,
    .cycle_state_write = api_cs_write,
    .cycle_state_read = ks_cycle_state_read,
    .cycle_state_delete = api_cs_delete,
    .prefilter_result_add_node = api_prefilter_add,
    .prefilter_result_set_none = api_prefilter_none,
    .snapshot_num_nodes = api_num_nodes,
    .snapshot_node_at = api_node_at,
    .snapshot_get = api_get,
    .image_num_nodes = api_image_num_nodes,
    .namespace_labels = api_namespace_labels,
    .owner_selectors = api_owner_selectors,
    .node_status_code = api_node_status_code,
    .waiting_pod_get = api_wp_get,
    .waiting_pod_pod = api_wp_pod,
    .waiting_pod_allow = api_wp_allow,
    .waiting_pod_reject = api_wp_reject,
    .waiting_pods_iterate = api_wp_iterate,
    .bind = api_bind,
    .delete_pod = api_delete_pod,
    .set_nominated_node = api_set_nominated,
    .event = api_event,
    .nodeinfo_clone = api_ni_clone,
    .nodeinfo_free = api_ni_free,
    .nodeinfo_add_pod = api_ni_add,
    .nodeinfo_remove_pod = api_ni_remove,
    .cycle_state_clone = api_cs_clone,
    .cycle_state_free = api_cs_free,
    .run_filters = api_run_filters,
    .run_prefilter_add_pod = api_run_add,
    .run_prefilter_remove_pod = api_run_remove,
    .status_new = api_status_new,
    .status_free = api_status_free,
    .status_message = api_status_message,
    .nominated_pods = api_nominated_pods,
    .now_ms = api_now_ms,
    .rand_below = api_rand_below,
    .status_reason_count = api_reason_count,
    .status_reason_at = api_reason_at,
    .snapshot_nodes = api_nodes,
    .snapshot_nodes_with_affinity = api_nodes_aff,
    .snapshot_nodes_with_required_anti_affinity = api_nodes_anti,
    .extenders_preempt = api_ext_preempt,
    .extenders_preempt_result = api_ext_preempt_result,
    .waiting_pod_allow_as = api_wp_allow_as,
    .waiting_pod_reject_as = api_wp_reject_as,
    .plugin_state_set = api_plugin_state_set,
    .plugin_state_get = api_plugin_state_get,
    .waiting_pod_pending_plugins = api_wp_pending,
    .snapshot_changes = api_snapshot_changes,
    .store_get = api_store_get,
    .store_count = api_store_count,
    .object_get = api_object_get,
    .object_list = api_object_list,
    .object_name = api_object_name,
    .object_namespace = api_object_namespace,
    .object_uid = api_object_uid,
    .object_labels = api_object_labels,
    .object_string = api_object_string,
    .object_int = api_object_int,
    .object_bool = api_object_bool,
    .object_len = api_object_len,
    .object_type = api_object_type,
    .object_map_iterate = api_object_map_iterate,
    .api_mode = api_api_mode,
    .api_request = api_api_request,
    .api_cancel = api_api_cancel,
    .timer_start = api_timer_start,
    .timer_stop = api_timer_stop,
    .pre_bind_resume = api_pre_bind_resume,
    .store_version = api_store_version,
    .bulk_columns = api_bulk_columns,
    .parallelize = api_parallelize,
    .parallelize_workers = api_parallelize_workers,
};

const ks_host_api_t *ks_host_api(void)
{
    return &api;
}

void ks_host_api_set_ops(const ks_fw_ops_t *ops)
{
    g_ops = ops;
}
