/* /healthz, /readyz, /livez, /debug/plugins, /debug/shadow and POST
 * /-/reload. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "console.h"
#include "faults.h"
#include "framework/call_board.h"
#include "framework/plugin_loader.h"
#include "shadow/shadow.h"

void ks_api_debug_shadow(ks_server_t *srv, ks_http_conn_t *c,
                         const ks_http_request_t *req)
{
    ks_buf_t b = {0};
    (void)req;
    if (srv->shadow == NULL) {
        ks_api_status(c, 404, "NotFound", NULL, NULL,
                      "not in shadow mode (serve --kubeconfig ... --shadow "
                      "NAME)");
        return;
    }
    ks_shadow_debug_json(srv->shadow, &b);
    if (b.oom || b.data == NULL) {
        ks_buf_free(&b);
        ks_http_respond(c, 500, "text/plain", NULL, "out of memory\n", 14);
        return;
    }
    ks_http_respond(c, 200, "application/json", NULL, b.data, b.len);
    ks_buf_free(&b);
}

void ks_api_health(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req)
{
    if (strcmp(req->path, "/readyz") == 0 && srv->draining) {
        ks_http_respond(c, 503, "text/plain; charset=utf-8", NULL,
                        "shutting down\n", 14);
        return;
    }
    if (strcmp(req->path, "/readyz") == 0 && srv->ksrc &&
        !ks_kube_source_synced(srv->ksrc)) {
        char msg[2048];
        size_t n;
        ks_kube_source_describe(srv->ksrc, msg, sizeof msg - 1);
        n = strlen(msg);
        msg[n++] = '\n';
        ks_http_respond(c, 503, "text/plain; charset=utf-8", NULL, msg, n);
        return;
    }
    if (strcmp(req->path, "/readyz") == 0 && srv->leader) {
        /* Both are ready (a standby's informers are warm); say which. */
        const char *m = ks_leader_is_leader(srv->leader) ? "ok: leader\n"
                                                         : "ok: standby\n";
        ks_http_respond(c, 200, "text/plain; charset=utf-8", NULL, m,
                        strlen(m));
        return;
    }
    ks_http_respond(c, 200, "text/plain; charset=utf-8", NULL, "ok", 2);
}

static json_t *gen_record_json(const ks_gen_record_t *r, uint64_t current)
{
    json_t *ps = json_array();
    size_t i;
    for (i = 0; ps && i < r->n_plugins; i++) {
        const ks_gen_plugin_t *p = &r->plugins[i];
        /* The loader deletes a private copy when it unloads it, so a
         * copy that still exists is still mapped. */
        int loaded = access(p->copy_path, F_OK) == 0;
        json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:s, s:b}",
                                            "name", p->name, "version",
                                            p->version, "file", p->file,
                                            "copyPath", p->copy_path,
                                            "loaded", loaded));
    }
    return json_pack("{s:I, s:s, s:f, s:b, s:o}", "generation",
                     (json_int_t)r->id, "trigger", r->trigger, "time",
                     r->unix_time, "current", r->id == current, "plugins",
                     ps);
}

void ks_api_debug_plugins(ks_server_t *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req)
{
    ks_generation_t *g = ks_scheduler_generation(srv->sched);
    json_t *plugins = json_array(), *hist = json_array(), *last, *doc;
    size_t i;
    (void)req;
    for (i = 0; plugins && i < g->reg->n; i++) {
        const ks_loaded_plugin_t *lp = g->reg->plugins[i];
        char hash[17];
        const char *keep = ks_call_board()->keep_dir;
        /* A version loaded from the supervisor's keep directory is a
         * rollback (the file in the plugin folder is quarantined). */
        int rolled = keep[0] && strncmp(lp->path, keep, strlen(keep)) == 0;
        ks_console_plugin_hash(lp->hash, lp->copy_path, hash);
        json_array_append_new(
            plugins,
            json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:I, s:s, s:b, s:b}",
                      "name",
                      lp->desc.name, "version",
                      lp->desc.version ? lp->desc.version : "", "file",
                      lp->path, "copyPath", lp->copy_path, "generation",
                      (json_int_t)g->id, "refs",
                      __atomic_load_n(&lp->refs, __ATOMIC_RELAXED),
                      "loadSeq", (json_int_t)lp->load_seq, "hash", hash,
                      "quarantined",
                      lp->hash != 0 &&
                          ks_call_board_quarantined(ks_call_board(),
                                                    lp->desc.name,
                                                    lp->hash) != NULL,
                      "rolledBack", rolled));
    }
    for (i = 0; hist && i < srv->n_history; i++) {
        const ks_gen_record_t *r =
            &srv->history[(srv->history_head + i) % KS_GEN_HISTORY];
        json_array_append_new(hist, gen_record_json(r, g->id));
    }
    if (srv->last_ok < 0)
        last = json_pack("{s:s}", "result", "none");
    else if (srv->last_ok)
        last = json_pack("{s:s, s:I, s:s, s:f}", "result", "success",
                         "generation", (json_int_t)srv->last_generation,
                         "trigger", srv->last_trigger, "time",
                         srv->last_time);
    else
        last = json_pack("{s:s, s:s, s:s, s:f}", "result", "failure", "error",
                         srv->last_error ? srv->last_error : "", "trigger",
                         srv->last_trigger, "time", srv->last_time);
    doc = json_pack("{s:I, s:I, s:i, s:o, s:o, s:o, s:o}", "generation",
                    (json_int_t)g->id, "generationRefs", (json_int_t)g->refs,
                    "liveImages", ks_plugin_live_count(), "plugins", plugins,
                    "lastReload", last, "history", hist, "faults",
                    ks_faults_json());
    if (doc) {
        json_object_set_new(doc, "profiles", ks_console_profiles_json(g));
        json_object_set_new(doc, "reloads", ks_console_reloads_json(srv));
    }
    ks_api_json(c, 200, doc);
}

void ks_api_reload(ks_server_t *srv, ks_http_conn_t *c,
                   const ks_http_request_t *req)
{
    ks_error_t err = {0};
    uint64_t prev = ks_scheduler_generation(srv->sched)->id, id = 0;
    int rc;
    (void)req;
    if (srv->draining) {
        ks_api_status(c, 503, "ServiceUnavailable", NULL, NULL,
                      "the scheduler is shutting down");
        return;
    }
    rc = ks_server_reload(srv, "POST /-/reload", &id, &err);
    if (rc == 0) {
        ks_api_json(c, 200,
                    json_pack("{s:s, s:I, s:I}", "status", "Success",
                              "generation", (json_int_t)id, "previous",
                              (json_int_t)prev));
        return;
    }
    if (rc == KS_ENOMEM || rc == KS_EIO)
        ks_api_status(c, 500, "InternalError", NULL, NULL,
                      "reload failed; generation %llu keeps running: %s",
                      (unsigned long long)prev, err.msg);
    else
        ks_api_status(c, 422, "Invalid", NULL, NULL,
                      "reload failed; generation %llu keeps running: %s",
                      (unsigned long long)prev, err.msg);
}
