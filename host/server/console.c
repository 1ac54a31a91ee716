/* The console's state, its observer hooks and the /ui assets
 * (console.h). */
#include "console.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "base/intern.h"
#include "framework/framework.h"
#include "framework/queue.h"
#include "server.h"

ks_console_t *ks_console_new(void)
{
    ks_console_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if ((c->attempts = ks_attempts_new()) == NULL) {
        free(c);
        return NULL;
    }
    c->explain_tokens = KS_EXPLAIN_BURST;
    return c;
}

void ks_console_free(ks_console_t *c)
{
    if (c == NULL)
        return;
    ks_attempts_free(c->attempts);
    for (size_t i = 0; i < KS_CONSOLE_RELOADS; i++) {
        free(c->reloads[i].trigger);
        free(c->reloads[i].error);
    }
    if (c->snap)
        ks_snapshot_free(c->snap);
    free(c);
}

/* The counters the scheduler keeps, read once a second. */
static void rates_read(void *ud, ks_rate_sample_t *s)
{
    ks_server_t *srv = ud;
    ks_sched_stats_t st = ks_scheduler_stats(srv->sched);
    s->attempts = st.attempts;
    s->scheduled = st.scheduled;
    s->bound = st.bound;
    s->unschedulable = st.unschedulable;
    s->errors = st.errors;
    s->active = (uint32_t)ks_scheduler_pending(srv->sched, KS_Q_ACTIVE);
    s->backoff = (uint32_t)ks_scheduler_pending(srv->sched, KS_Q_BACKOFF);
    s->unsched = (uint32_t)ks_scheduler_pending(srv->sched, KS_Q_UNSCHED);
    s->inflight = (uint32_t)ks_scheduler_pending(srv->sched, -1);
}

int ks_console_start(ks_server_t *srv)
{
    if (srv->console == NULL)
        return 0;
    return ks_rates_start(&srv->console->rates, srv->loop,
                          srv->console->attempts, rates_read, srv);
}

void ks_console_stop(ks_server_t *srv)
{
    if (srv->console)
        ks_rates_close(&srv->console->rates);
}

/* --- observer hooks ------------------------------------------------------- */

void ks_console_on_ep(ks_server_t *srv, int ep, double seconds)
{
    if (srv->console)
        ks_attempts_note_ep(srv->console->attempts, ep, seconds);
}

static double unix_now(void)
{
    uv_timeval64_t tv;
    return uv_gettimeofday(&tv) == 0
               ? (double)tv.tv_sec + (double)tv.tv_usec * 1e-6
               : 0;
}

/* The chosen node's scores: the second largest total (the best of the
 * others: equal to the chosen one's on a tie) from one pass over the
 * totals, and the chosen node's column (it has the best total; among
 * equal ones it is found by its name). */
static void keep_scores(ks_attempt_t *t, const ks_cycle_result_t *r)
{
    uint32_t k, at = UINT32_MAX, n = r->n_feasible;
    int64_t best = INT64_MIN, second = INT64_MIN;
    size_t p, np;
    for (k = 0; k < n; k++) {
        int64_t v = r->totals[k];
        if (v > best) {
            second = best;
            best = v;
        } else if (v > second) {
            second = v;
        }
    }
    for (k = 0; k < n && at == UINT32_MAX; k++)
        if (r->totals[k] == best &&
            (r->feasible[k]->node->name == r->selected ||
             strcmp(r->feasible[k]->node->name, r->selected) == 0))
            at = k;
    if (at == UINT32_MAX)
        return;
    t->has_scores = 1;
    t->total = r->totals[at];
    t->has_runner_up = n > 1;
    t->runner_up = second;
    np = r->fw->n_points[KS_EP_SCORE];
    for (p = 0; p < np && p < KS_ATTEMPT_SCORES; p++) {
        if (!r->scored || (r->score_skipped && r->score_skipped[p])) {
            t->scores[p] = INT32_MIN;
            continue;
        }
        int64_t v = ks_cycle_result_score(r, p, at);
        t->scores[p] = v > INT32_MAX ? INT32_MAX : v < -INT32_MAX ? -INT32_MAX
                                                                   : (int32_t)v;
    }
    t->n_scores = (uint8_t)p;
}

void ks_console_on_cycle(ks_server_t *srv, const ks_cycle_result_t *r,
                         uint64_t gen, const char *profile)
{
    char key[600];
    int n, result;
    ks_attempt_t *t;
    if (srv->console == NULL)
        return;
    n = snprintf(key, sizeof key, "%s/%s", r->pod->ns, r->pod->name);
    if (n < 0 || (size_t)n >= sizeof key)
        return;
    result = r->selected ? KS_ATTEMPT_SELECTED
             : r->error  ? KS_ATTEMPT_ERROR
                         : KS_ATTEMPT_UNSCHEDULABLE;
    t = ks_attempts_record(
        srv->console->attempts, key, unix_now(), r->seconds, result, gen,
        r->selected,
        r->nominated ? ks_intern_str(ks_intern_global(), r->nominated) : NULL,
        profile, r->n_nodes, r->n_feasible, r->message);
    if (t && r->selected && r->totals && r->feasible && r->n_feasible > 0 &&
        (r->n_feasible <= KS_CONSOLE_SCORE_ALWAYS ||
         (srv->console->last_look > 0 &&
          ks_server_now() - srv->console->last_look <
              KS_CONSOLE_LOOK_SECONDS)))
        keep_scores(t, r);
}

void ks_console_looked(ks_server_t *srv)
{
    if (srv->console)
        srv->console->last_look = ks_server_now();
}

void ks_console_on_bound(ks_server_t *srv, const char *key, const char *node,
                         double seconds)
{
    ks_attempt_t *t;
    (void)node;
    if (srv->console == NULL)
        return;
    t = ks_attempts_last(srv->console->attempts, key);
    if (t && t->result == KS_ATTEMPT_SELECTED) {
        t->result = KS_ATTEMPT_BOUND;
        t->bind_seconds = (float)seconds;
    }
}

void ks_console_on_bind_failed(ks_server_t *srv, const char *key,
                               const char *message, double seconds)
{
    ks_attempt_t *t;
    if (srv->console == NULL)
        return;
    t = ks_attempts_last(srv->console->attempts, key);
    if (t && t->result == KS_ATTEMPT_SELECTED) {
        t->result = KS_ATTEMPT_BIND_FAILED;
        t->bind_seconds = (float)seconds;
        snprintf(t->message, sizeof t->message, "%s", message ? message : "");
    }
}

json_t *ks_console_json_str(const char *s)
{
    json_t *j;
    char *buf;
    size_t n;
    if (s == NULL)
        return json_null();
    if ((j = json_string(s)) != NULL)
        return j;
    n = strlen(s) * 4 + 1;
    if ((buf = malloc(n)) == NULL)
        return NULL;
    ks_api_utf8_escape(s, buf, n);
    j = json_string(buf);
    free(buf);
    return j;
}

/* --- /ui ------------------------------------------------------------------- */

int ks_console_is_asset_path(const char *path)
{
    size_t i;
    if (strcmp(path, "/ui") == 0 || strcmp(path, "/ui/") == 0)
        return 1;
    if (strncmp(path, "/ui/", 4) != 0)
        return 0;
    /* exactly one of the embedded files: nothing else is let through
     * without a token */
    for (i = 0; i < ks_ui_n_assets; i++)
        if (strcmp(path + 4, ks_ui_assets[i].name) == 0)
            return 1;
    return 0;
}

void ks_api_ui(ks_server_t *srv, ks_http_conn_t *c,
               const ks_http_request_t *req)
{
    const char *name = req->path + 3;
    char hdr[256];
    size_t i;
    ks_console_looked(srv);
    if (*name == '/')
        name++;
    if (*name == '\0')
        name = "index.html";
    for (i = 0; i < ks_ui_n_assets; i++) {
        const ks_ui_asset_t *a = &ks_ui_assets[i];
        if (strcmp(a->name, name) != 0)
            continue;
        /* The page names the other assets with ?v=<hash>: those may be
         * kept; the page itself is asked again each time. */
        snprintf(hdr, sizeof hdr,
                 "ETag: %s\r\nCache-Control: %s\r\n"
                 "X-Content-Type-Options: nosniff\r\n",
                 a->etag,
                 strcmp(a->name, "index.html") == 0
                     ? "no-cache"
                     : "public, max-age=31536000, immutable");
        ks_http_respond(c, 200, a->content_type, hdr, (const char *)a->data,
                        a->len);
        return;
    }
    ks_api_status(c, 404, "NotFound", NULL, NULL,
                  "the console has no file %s", req->path);
}
