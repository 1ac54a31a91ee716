/*
 * The scheduler's timing hooks for metrics: each extension point run
 * (upstream framework_extension_point_duration_seconds), the 10% of
 * cycles whose plugin calls are timed (plugin_execution_duration_seconds),
 * and how long a pod waited at Permit (permit_wait_duration_seconds).
 * Nothing here runs unless the observer asks for it.
 *
 * Threads: the loop thread, except env_plugin_duration, which the runtime
 * calls from the Filter and Score workers too (the observer's callback is
 * thread-safe by contract). Allocates nothing.
 */
#include "scheduler_impl.h"

#define PLUGIN_SAMPLE_PERCENT 10 /* upstream pluginMetricsSamplePercent */

void ks_sched_ep_done(const ks_scheduler_t *s, const ks_framework_t *fw,
                      ks_ext_point_t ep, ks_code_t code, double t0)
{
    if (s->opts.obs.ep_duration && t0 > 0)
        s->opts.obs.ep_duration(s->opts.obs.ud, fw, (int)ep, code,
                                ks_fw_mono_seconds() - t0);
}

/* Per-plugin times go to the observer; the env calls this from any thread. */
static void env_plugin_duration(ks_fw_env_t *e, const char *plugin, int ep,
                                ks_code_t code, double seconds)
{
    const ks_scheduler_t *s = e->ud;
    s->opts.obs.plugin_duration(s->opts.obs.ud, plugin, ep, code, seconds);
}

void ks_sched_timing_init(ks_scheduler_t *s)
{
    if (s->opts.obs.plugin_duration)
        s->env.plugin_duration = env_plugin_duration;
}

/* One cycle in PLUGIN_SAMPLE_PERCENT of 100 times its plugins, drawn from
 * the env's random numbers; every cycle with sample_all_plugins. */
void ks_sched_sample_cycle(ks_scheduler_t *s)
{
    if (s->env.plugin_duration == NULL || s->opts.sample_all_plugins) {
        s->env.sample_plugins = s->env.plugin_duration != NULL;
        return;
    }
    s->env.sample_plugins =
        (uint32_t)(ks_fw_env_rand(&s->env) >> 32) % 100 <
        PLUGIN_SAMPLE_PERCENT;
}

void ks_sched_report_permit_wait(const ks_scheduler_t *s,
                                 const ks_waiting_pod_t *wp)
{
    if (wp->wait_t0 > 0 && s->opts.obs.permit_wait)
        s->opts.obs.permit_wait(s->opts.obs.ud, wp->qp->pod,
                                wp->state == WP_ALLOWED,
                                ks_fw_mono_seconds() - wp->wait_t0);
}
