/* /debug/plugins' additions for the console (console.h): profiles and
 * their extension points, and the reloads with what each changed. Built
 * when /debug/plugins is asked, from what the server already keeps. */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/call_board.h"
#include "framework/framework.h"
#include "framework/generation.h"
#include "server.h"

void ks_console_plugin_hash(uint64_t hash, const char *copy_path,
                            char out[17])
{
    if (hash == 0 && copy_path)
        hash = ks_file_hash(copy_path);
    snprintf(out, 17, "%016llx", (unsigned long long)hash);
}

json_t *ks_console_profiles_json(const ks_generation_t *g)
{
    json_t *profiles = json_array();
    size_t f, ep, k;
    for (f = 0; profiles && f < g->n_fws; f++) {
        const ks_framework_t *fw = g->fws[f];
        json_t *points = json_object(), *deadlines = json_object();
        for (ep = 0; points && ep < KS_EP_MULTI_POINT; ep++) {
            json_t *list;
            if (fw->n_points[ep] == 0)
                continue;
            list = json_array();
            for (k = 0; list && k < fw->n_points[ep]; k++) {
                const ks_point_entry_t *e = &fw->points[ep][k];
                json_array_append_new(
                    list, ep == KS_EP_SCORE
                              ? json_pack("{s:s, s:i}", "name",
                                          e->inst->name, "weight",
                                          (int)e->weight)
                              : json_pack("{s:s}", "name", e->inst->name));
            }
            json_object_set_new(points,
                                ks_ext_point_name((ks_ext_point_t)ep), list);
        }
        for (k = 0; deadlines && k < fw->n_insts; k++)
            json_object_set_new(deadlines, fw->insts[k]->name,
                                json_integer(fw->insts[k]->deadline_ms));
        json_array_append_new(
            profiles, json_pack("{s:s, s:o, s:o}", "name", fw->profile_name,
                                "extensionPoints", points, "deadlineMs",
                                deadlines));
    }
    return profiles;
}

void ks_console_note_reload(ks_server_t *srv, int ok, uint64_t gen,
                            uint64_t previous, const char *trigger,
                            const char *error, double unix_time)
{
    ks_console_t *con = srv->console;
    ks_reload_note_t *n;
    char *t, *e = NULL;
    if (con == NULL)
        return;
    t = strdup(trigger ? trigger : "");
    if (!ok)
        e = strdup(error ? error : "");
    if (t == NULL || (!ok && e == NULL)) {
        free(t);
        free(e);
        return;
    }
    if (con->n_reloads == KS_CONSOLE_RELOADS) {
        n = &con->reloads[con->reloads_head];
        free(n->trigger);
        free(n->error);
        con->reloads_head = (con->reloads_head + 1) % KS_CONSOLE_RELOADS;
        con->n_reloads--;
    }
    n = &con->reloads[(con->reloads_head + con->n_reloads) %
                      KS_CONSOLE_RELOADS];
    con->n_reloads++;
    n->time = unix_time;
    n->ok = ok;
    n->generation = gen;
    n->previous = previous;
    n->trigger = t;
    n->error = e;
}

static const ks_gen_record_t *record_of(const ks_server_t *srv, uint64_t id)
{
    size_t i;
    for (i = 0; i < srv->n_history; i++) {
        const ks_gen_record_t *r =
            &srv->history[(srv->history_head + i) % KS_GEN_HISTORY];
        if (r->id == id)
            return r;
    }
    return NULL;
}

static const ks_gen_plugin_t *plugin_in(const ks_gen_record_t *r,
                                        const char *name)
{
    size_t i;
    for (i = 0; i < r->n_plugins; i++)
        if (strcmp(r->plugins[i].name, name) == 0)
            return &r->plugins[i];
    return NULL;
}

/* What changed from generation `a` to `b`: one entry per plugin added,
 * removed, or with another version or content. */
static json_t *changes_json(const ks_gen_record_t *a, const ks_gen_record_t *b)
{
    json_t *ch = json_array();
    size_t i;
    char ha[17], hb[17];
    for (i = 0; ch && i < b->n_plugins; i++) {
        const ks_gen_plugin_t *p = &b->plugins[i];
        const ks_gen_plugin_t *o = plugin_in(a, p->name);
        ks_console_plugin_hash(p->hash, NULL, hb);
        if (o == NULL) {
            json_array_append_new(
                ch, json_pack("{s:s, s:s, s:s, s:s}", "plugin", p->name,
                              "change", "added", "version", p->version,
                              "hash", hb));
        } else if (strcmp(o->version, p->version) != 0 ||
                   o->hash != p->hash || strcmp(o->file, p->file) != 0) {
            ks_console_plugin_hash(o->hash, NULL, ha);
            json_array_append_new(
                ch, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "plugin",
                              p->name, "change", "replaced", "fromVersion",
                              o->version, "toVersion", p->version,
                              "fromHash", ha, "toHash", hb, "file",
                              p->file));
        }
    }
    for (i = 0; ch && i < a->n_plugins; i++)
        if (plugin_in(b, a->plugins[i].name) == NULL)
            json_array_append_new(
                ch, json_pack("{s:s, s:s, s:s}", "plugin",
                              a->plugins[i].name, "change", "removed",
                              "version", a->plugins[i].version));
    return ch;
}

json_t *ks_console_reloads_json(ks_server_t *srv)
{
    json_t *a = json_array();
    ks_console_t *con = srv->console;
    size_t i;
    for (i = 0; a && con && i < con->n_reloads; i++) {
        const ks_reload_note_t *n =
            &con->reloads[(con->reloads_head + i) % KS_CONSOLE_RELOADS];
        json_t *o = json_pack("{s:f, s:o, s:s, s:I}", "time", n->time,
                              "trigger", ks_console_json_str(n->trigger),
                              "result",
                              n->ok ? "success" : "failure", "previous",
                              (json_int_t)n->previous);
        if (o == NULL)
            continue;
        if (n->ok) {
            const ks_gen_record_t *ra = record_of(srv, n->previous);
            const ks_gen_record_t *rb = record_of(srv, n->generation);
            json_object_set_new(o, "generation",
                                json_integer((json_int_t)n->generation));
            if (ra && rb)
                json_object_set_new(o, "changes", changes_json(ra, rb));
        } else {
            json_object_set_new(o, "error", ks_console_json_str(n->error));
        }
        json_array_append_new(a, o);
    }
    return a;
}
