/*
 * Hot reload: SIGHUP, POST /-/reload, and file watches on the plugin
 * directories and the configuration file (debounced by 300 ms) build a new
 * generation and swap it in between scheduling cycles.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "console.h"
#include "faults.h"
#include "server.h"
#include "shadow/shadow.h"

#define DEBOUNCE_MS 300

/* Pods no profile wanted may have one now. */
static void adopt_others(ks_server_t *srv)
{
    size_t i;
    for (i = 0; i < srv->pods.cap; i++) {
        ks_pod_entry_t *e = srv->pods.slots[i].val;
        if (srv->pods.slots[i].key == NULL || e->state != KS_POD_OTHER)
            continue;
        if (ks_scheduler_add_pod(srv->sched, e->other) == 0) {
            e->other = NULL; /* the scheduler owns it now */
            e->state = KS_POD_PENDING;
        }
    }
}

int ks_server_reload(ks_server_t *srv, const char *trigger, uint64_t *gen_id,
                     ks_error_t *err)
{
    ks_generation_t *g = NULL, *old = ks_scheduler_generation(srv->sched);
    uint64_t old_id = old->id;
    uv_timeval64_t tv;
    int rc;

    /* What a faulty version this reload brings in rolls back to (even one
     * that crashes while the generation is built). */
    ks_faults_note_swap(old);
    rc = ks_generation_build(&srv->gen_opts, &g, err);
    snprintf(srv->last_trigger, sizeof srv->last_trigger, "%s", trigger);
    srv->last_time = uv_gettimeofday(&tv) == 0
                         ? (double)tv.tv_sec + (double)tv.tv_usec * 1e-6
                         : 0;
    free(srv->last_error);
    srv->last_error = NULL;
    if (rc != 0) {
        srv->last_ok = 0;
        srv->last_error = strdup(err && err->msg[0] ? err->msg
                                                    : ks_strerror(rc));
        ks_metric_add(srv->m_reloads, 1, "failure");
        ks_console_note_reload(srv, 0, 0, old_id, trigger, srv->last_error,
                               srv->last_time);
        fprintf(stderr,
                "ksched serve: reload (%s) failed; generation %llu keeps "
                "running:\n%s\n",
                trigger, (unsigned long long)old_id,
                srv->last_error ? srv->last_error : "");
        return rc ? rc : KS_EINVAL;
    }
    /* We are on the loop thread between cycles: in-flight pods keep the
     * generation they started with; queued pods stay queued. */
    ks_scheduler_set_generation(srv->sched, g);
    if (srv->shadow) /* a new comparison period */
        ks_shadow_set_generation(srv->shadow, g);
    srv->last_ok = 1;
    srv->last_generation = g->id;
    ks_metric_add(srv->m_reloads, 1, "success");
    ks_server_record_generation(srv, trigger);
    ks_console_note_reload(srv, 1, g->id, old_id, trigger, NULL,
                           srv->last_time);
    adopt_others(srv);
    /* New plugin code may judge held pods differently: give every
     * unschedulable (and gated) pod another try, as upstream does after a
     * wildcard event. */
    {
        ks_cluster_event_t all = {KS_RES_ALL, KS_ACT_ALL};
        ks_scheduler_on_event(srv->sched, all);
    }
    fprintf(stderr, "ksched serve: reload (%s): generation %llu replaces %llu\n",
            trigger, (unsigned long long)g->id, (unsigned long long)old_id);
    if (gen_id)
        *gen_id = g->id;
    return 0;
}

static void reload_now(ks_server_t *srv, const char *trigger)
{
    ks_error_t err = {0};
    if (srv->draining)
        return;
    ks_server_reload(srv, trigger, NULL, &err);
}

static void on_debounce(uv_timer_t *t)
{
    ks_server_t *srv = t->data;
    char what[sizeof srv->debounce_what];
    srv->debounce_armed = 0;
    snprintf(what, sizeof what, "%s", srv->debounce_what);
    reload_now(srv, what);
}

void ks_server_on_sighup(ks_server_t *srv)
{
    reload_now(srv, "SIGHUP");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events,
                        int status)
{
    ks_server_t *srv = h->data;
    size_t idx = (size_t)(h - srv->fs_events);
    char path[1024];
    size_t plen = sizeof path;
    (void)events;
    if (status < 0) {
        ks_log(KS_LOGL_WARN, "file watch: %s", uv_strerror(status));
        return;
    }
    if (srv->draining || idx >= srv->n_fs)
        return;
    if (filename != NULL) {
        if (srv->fs_names[idx] ? strcmp(filename, srv->fs_names[idx]) != 0
                               : !ends_with(filename, ".so"))
            return;
    }
    if (uv_fs_event_getpath(h, path, &plen) != 0)
        snprintf(path, sizeof path, "?");
    snprintf(srv->debounce_what, sizeof srv->debounce_what,
             "file change: %.900s/%.250s", path,
             filename ? filename : "");
    /* Debounce: a copy or an editor's save makes several events. */
    uv_timer_start(&srv->debounce, on_debounce, DEBOUNCE_MS, 0);
    srv->debounce_armed = 1;
}

static int watch(ks_server_t *srv, const char *dir, const char *only)
{
    uv_fs_event_t *h = &srv->fs_events[srv->n_fs];
    int rc;
    srv->fs_names[srv->n_fs] = only ? strdup(only) : NULL;
    if (only && srv->fs_names[srv->n_fs] == NULL)
        return UV_ENOMEM;
    uv_fs_event_init(srv->loop, h);
    h->data = srv;
    rc = uv_fs_event_start(h, on_fs_event, dir, 0);
    srv->n_fs++; /* closed later either way */
    if (rc != 0)
        ks_log(KS_LOGL_WARN,
               "cannot watch %s for changes (%s); reload with SIGHUP or "
               "POST /-/reload",
               dir, uv_strerror(rc));
    return 0;
}

int ks_server_reload_start(ks_server_t *srv, ks_error_t *err)
{
    const ks_generation_opts_t *o = &srv->gen_opts;
    size_t n = o->n_plugin_dirs + (o->config_path ? 1 : 0), i;
    uv_timer_init(srv->loop, &srv->debounce);
    srv->debounce.data = srv;
    srv->fs_events = calloc(n ? n : 1, sizeof *srv->fs_events);
    srv->fs_names = calloc(n ? n : 1, sizeof *srv->fs_names);
    srv->handles_inited |= 1;
    if (srv->fs_events == NULL || srv->fs_names == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < o->n_plugin_dirs; i++)
        if (watch(srv, o->plugin_dirs[i], NULL) != 0)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (o->config_path) {
        /* Watch the directory: editors replace the file on save. */
        char dir[4096];
        const char *slash = strrchr(o->config_path, '/');
        const char *base = slash ? slash + 1 : o->config_path;
        if (slash == NULL)
            snprintf(dir, sizeof dir, ".");
        else if (slash == o->config_path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s",
                     (int)(slash - o->config_path), o->config_path);
        if (watch(srv, dir, base) != 0)
            return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    return 0;
}

void ks_server_reload_close(ks_server_t *srv)
{
    size_t i;
    if (!(srv->handles_inited & 1))
        return;
    srv->handles_inited &= ~1;
    uv_close((uv_handle_t *)&srv->debounce, NULL);
    for (i = 0; i < srv->n_fs; i++)
        uv_close((uv_handle_t *)&srv->fs_events[i], NULL);
}
