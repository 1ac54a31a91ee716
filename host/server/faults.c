/* Faults and probation in the worker: see faults.h. */
#include "faults.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_copy.h"
#include "base/log.h"
#include "framework/call_board.h"

#define TICK_MS 250

static struct {
    uv_timer_t timer;
    int started;
    ks_server_t *srv;
    ks_faults_opts_t o;
    uint64_t gen_id;     /* the generation on probation */
    double since;        /* when it began to schedule */
    uint64_t attempts0;  /* scheduling attempts then */
    int good;            /* gen_id passed */
    ks_metric_t *m_faults;
} P;

/* Copy `from` to `to` (created 0600, replaced atomically). */
static int copy_file(const char *from, const char *to)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    unlink(tmp); /* one left by a worker that died copying */
    if (ks_file_copy(from, tmp, 0600) != 0)
        return -1;
    if (rename(tmp, to) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Keep plugin `lp` of generation `gen` as a file in the keep directory
 * (once per version) and describe it in `rec`. -1 (logged) when it cannot
 * be copied. */
static int keep_plugin(const ks_call_board_t *b, const ks_loaded_plugin_t *lp,
                       uint64_t gen, const char *as, ks_board_good_t *rec)
{
    memset(rec, 0, sizeof *rec);
    snprintf(rec->name, sizeof rec->name, "%s", lp->desc.name);
    snprintf(rec->version, sizeof rec->version, "%s",
             lp->desc.version ? lp->desc.version : "");
    snprintf(rec->path, sizeof rec->path, "%s/%s-%016llx.so", b->keep_dir,
             lp->desc.name, (unsigned long long)lp->hash);
    rec->hash = lp->hash;
    rec->generation = gen;
    if (access(rec->path, F_OK) != 0 &&
        copy_file(lp->copy_path, rec->path) != 0) {
        ks_log(KS_LOGL_WARN, "cannot keep %s as %s: %s", lp->path, as,
               strerror(errno));
        return -1;
    }
    return 0;
}

/* Keep every plugin file of generation g as a good version. */
static void keep_generation(const ks_generation_t *g)
{
    ks_call_board_t *b = ks_call_board();
    size_t i;
    if (b->keep_dir[0] == '\0')
        return;
    for (i = 0; i < g->reg->n; i++) {
        const ks_loaded_plugin_t *lp = g->reg->plugins[i];
        ks_board_good_t good;
        const ks_board_good_t *have;
        if (lp->hash == 0)
            continue;
        have = ks_call_board_good(b, lp->desc.name);
        if (have && have->hash == lp->hash)
            continue; /* already the newest good version */
        if (keep_plugin(b, lp, g->id, "a known-good version", &good) == 0)
            ks_call_board_good_add(b, &good);
    }
    ks_log(KS_LOGL_INFO, "generation %llu passed its probation; its plugin "
                         "versions are kept for rollback",
           (unsigned long long)g->id);
}

void ks_faults_note_swap(const ks_generation_t *serving)
{
    ks_call_board_t *b = ks_call_board();
    size_t i;
    if (b->keep_dir[0] == '\0' || serving == NULL)
        return;
    for (i = 0; i < serving->reg->n; i++) {
        const ks_loaded_plugin_t *lp = serving->reg->plugins[i];
        const ks_board_good_t *have;
        ks_board_good_t rec;
        if (lp->hash == 0)
            continue;
        have = ks_call_board_swapped(b, lp->desc.name);
        if (have && have->hash == lp->hash)
            continue; /* recorded at an earlier reload */
        if (keep_plugin(b, lp, serving->id, "the version to roll back to",
                        &rec) == 0)
            ks_call_board_swapped_add(b, &rec);
    }
}

static void on_tick(uv_timer_t *t)
{
    ks_server_t *srv = t->data;
    ks_generation_t *g = ks_scheduler_generation(srv->sched);
    ks_sched_stats_t st = ks_scheduler_stats(srv->sched);
    ks_call_board_t *b = ks_call_board();

    atomic_store_explicit(&b->generation, g->id, memory_order_relaxed);
    atomic_store_explicit(&b->cycles, st.attempts, memory_order_relaxed);
    if (g->id != P.gen_id) {
        P.gen_id = g->id;
        P.since = ks_server_now();
        P.attempts0 = st.attempts;
        P.good = 0;
    }
    if (P.good)
        return;
    if (ks_server_now() - P.since >= P.o.probation_s ||
        st.attempts - P.attempts0 >= P.o.probation_cycles) {
        P.good = 1;
        keep_generation(g);
    }
}

int ks_faults_start(ks_server_t *srv, const ks_faults_opts_t *o)
{
    static const char *const labels[] = {"plugin", "version", "kind", NULL};
    const ks_call_board_t *b = ks_call_board();
    uint32_t n = atomic_load(&b->n_faults), i;

    P.srv = srv;
    P.o = *o;
    if (P.o.probation_s <= 0)
        P.o.probation_s = 60;
    if (P.o.probation_cycles == 0)
        P.o.probation_cycles = 1000;
    P.m_faults = ks_metrics_add(
        srv->metrics, KS_METRIC_COUNTER, "ksched_plugin_faults_total",
        "Plugin faults the supervisor recorded since it started, by plugin, "
        "version and kind (signal or deadline); each one replaced the "
        "worker and quarantined that version.",
        labels, NULL, 0);
    if (P.m_faults == NULL)
        return -1;
    for (i = n > KS_BOARD_FAULTS ? n - KS_BOARD_FAULTS : 0; i < n; i++) {
        const ks_board_fault_t *f = &b->faults[i % KS_BOARD_FAULTS];
        ks_metric_add(P.m_faults, 1, f->plugin.name,
                      f->plugin.version[0] ? f->plugin.version : "",
                      f->kind == KS_FAULT_DEADLINE ? "deadline" : "signal");
    }
    if (uv_timer_init(srv->loop, &P.timer) != 0)
        return -1;
    P.timer.data = srv;
    P.started = 1;
    uv_timer_start(&P.timer, on_tick, 0, TICK_MS);
    uv_unref((uv_handle_t *)&P.timer);
    return 0;
}

void ks_faults_stop(void)
{
    if (P.started && !uv_is_closing((uv_handle_t *)&P.timer)) {
        uv_timer_stop(&P.timer);
        uv_close((uv_handle_t *)&P.timer, NULL);
    }
    P.started = 0;
}

int ks_faults_generation_good(void) { return P.good; }

json_t *ks_faults_json(void)
{
    const ks_call_board_t *b = ks_call_board();
    json_t *faults = json_array(), *good = json_array();
    json_t *swapped = json_array();
    uint32_t n = atomic_load(&b->n_faults), i;
    for (i = n > KS_BOARD_FAULTS ? n - KS_BOARD_FAULTS : 0; faults && i < n;
         i++) {
        const ks_board_fault_t *f = &b->faults[i % KS_BOARD_FAULTS];
        char line[1200];
        const char *sig = f->kind == KS_FAULT_SIGNAL
                              ? sigabbrev_np(f->signo)
                              : NULL;
        char signame[32] = "";
        if (sig)
            snprintf(signame, sizeof signame, "SIG%s", sig);
        ks_board_fault_describe(f, line, sizeof line);
        json_array_append_new(
            faults,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:f, "
                      "s:s}",
                      "plugin", f->plugin.name, "version", f->plugin.version,
                      "file", f->plugin.file, "kind",
                      f->kind == KS_FAULT_DEADLINE ? "deadline" : "signal",
                      "signal", signame, "extensionPoint",
                      ks_call_point_name(f->point), "pod", f->pod,
                      "deadlineMs", (int)f->deadline_ms, "generation",
                      (json_int_t)f->plugin.generation, "time", f->unix_time,
                      "message", line));
    }
    n = atomic_load(&b->n_good);
    for (i = n > KS_BOARD_GOOD ? n - KS_BOARD_GOOD : 0; good && i < n; i++) {
        const ks_board_good_t *g = &b->good[i % KS_BOARD_GOOD];
        json_array_append_new(
            good, json_pack("{s:s, s:s, s:s, s:I, s:b}", "name", g->name,
                            "version", g->version, "path", g->path,
                            "generation", (json_int_t)g->generation,
                            "quarantined",
                            ks_call_board_quarantined(b, g->name, g->hash) !=
                                NULL));
    }
    n = atomic_load(&b->n_swapped);
    for (i = n > KS_BOARD_SWAPPED ? n - KS_BOARD_SWAPPED : 0; swapped && i < n;
         i++) {
        const ks_board_good_t *g = &b->swapped[i % KS_BOARD_SWAPPED];
        json_array_append_new(
            swapped,
            json_pack("{s:s, s:s, s:s, s:I, s:b}", "name", g->name, "version",
                      g->version, "path", g->path, "generation",
                      (json_int_t)g->generation, "quarantined",
                      ks_call_board_quarantined(b, g->name, g->hash) !=
                          NULL));
    }
    return json_pack("{s:b, s:I, s:o, s:o, s:o, s:b}", "supervised",
                     ks_call_board_shared(), "workerStarts",
                     (json_int_t)atomic_load(&b->worker_starts), "faults",
                     faults ? faults : json_array(), "knownGood",
                     good ? good : json_array(), "swappedOut",
                     swapped ? swapped : json_array(),
                     "generationPassedProbation", P.good);
}
