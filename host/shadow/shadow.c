/* Shadow mode: another scheduler's bindings against ksched's decisions
 * (shadow.h). */
#include "shadow.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "base/intern.h"
#include "base/log.h"
#include "compare.h"
#include "framework/scheduler.h"

/* Score-gap histogram bounds (totals are sums of weighted 0-100 scores). */
static const int64_t gap_bounds[] = {0, 1, 2, 5, 10, 20, 50, 100, 200, 500};
#define N_BOUNDS (sizeof gap_bounds / sizeof gap_bounds[0])

/* One comparison period: a generation and a profile. */
typedef struct period {
    uint64_t generation;
    char *profile;
    uint64_t results[KS_SHADOW_N_RESULTS];
    uint64_t gap_buckets[N_BOUNDS]; /* cumulative at render */
    uint64_t gap_count;
    int64_t gap_sum;
} period_t;

/* A difference kept for /debug/shadow. */
typedef struct kept {
    ks_shadow_decision_t d;
    uint64_t generation;
    double unix_time;
} kept_t;

struct ks_shadow {
    ks_shadow_names_t names;
    const char *profile_interned[16];
    ks_cache_t *cache;
    ks_scheduler_t *s;
    uint64_t generation;
    period_t *periods;
    size_t n_periods;
    kept_t kept[KS_SHADOW_KEEP];
    size_t n_kept, kept_head;
};

void ks_shadow_names_free(ks_shadow_names_t *n)
{
    size_t i;
    for (i = 0; i < n->n; i++) {
        free(n->name[i]);
        free(n->profile[i]);
    }
    memset(n, 0, sizeof *n);
}

int ks_shadow_names_parse(const char *arg, ks_shadow_names_t *out,
                          ks_error_t *err)
{
    const char *p = arg;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t nl = eq ? (size_t)(eq - p) : len;
        if (nl == 0 || (eq && eq + 1 == p + len))
            return ks_error_set(err, KS_EINVAL,
                                "'%.*s' is not NAME or NAME=PROFILE",
                                (int)len, p);
        if (out->n == 16)
            return ks_error_set(err, KS_EINVAL,
                                "at most 16 scheduler names");
        out->name[out->n] = strndup(p, nl);
        out->profile[out->n] =
            eq ? strndup(eq + 1, (size_t)(p + len - eq - 1)) : strdup("");
        if (out->name[out->n] == NULL || out->profile[out->n] == NULL) {
            free(out->name[out->n]);
            free(out->profile[out->n]);
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        }
        out->n++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (out->n == 0)
        return ks_error_set(err, KS_EINVAL,
                            "at least one scheduler name is needed");
    return 0;
}

static const char *profile_of(const ks_shadow_names_t *n, size_t i)
{
    return n->profile[i][0] ? n->profile[i] : n->name[i];
}

int ks_shadow_new(const ks_shadow_names_t *names, ks_generation_t *gen,
                  ks_cache_t *cache, ks_shadow_t **out, ks_error_t *err)
{
    ks_shadow_t *sh;
    ks_sched_opts_t so;
    size_t i;
    *out = NULL;
    for (i = 0; i < names->n; i++)
        if (ks_generation_profile(gen, profile_of(names, i)) == NULL)
            return ks_error_set(err, KS_EINVAL,
                                "--shadow %s: the configuration has no "
                                "profile \"%s\"",
                                names->name[i], profile_of(names, i));
    if ((sh = calloc(1, sizeof *sh)) == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < names->n; i++) {
        sh->names.name[i] = strdup(names->name[i]);
        sh->names.profile[i] = strdup(names->profile[i]);
        sh->names.n++;
        sh->profile_interned[i] =
            ks_intern_str(ks_intern_global(), profile_of(names, i));
        if (!sh->names.name[i] || !sh->names.profile[i] ||
            !sh->profile_interned[i]) {
            ks_shadow_free(sh);
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        }
    }
    /* Ties at random, as upstream; no writer: plugins' API requests are
     * refused; no PostFilter: nothing nominated or preempted. */
    memset(&so, 0, sizeof so);
    so.no_post_filter = 1;
    so.borrows_generation = 1; /* serve's scheduler keeps its plugins */
    sh->cache = cache;
    sh->generation = gen->id;
    if ((sh->s = ks_scheduler_new(gen, cache, &so)) == NULL) {
        ks_shadow_free(sh);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    *out = sh;
    return 0;
}

void ks_shadow_free(ks_shadow_t *sh)
{
    size_t i;
    if (sh == NULL)
        return;
    ks_scheduler_free(sh->s);
    ks_shadow_names_free(&sh->names);
    for (i = 0; i < sh->n_periods; i++)
        free(sh->periods[i].profile);
    free(sh->periods);
    for (i = 0; i < KS_SHADOW_KEEP; i++)
        ks_shadow_decision_free(&sh->kept[i].d);
    free(sh);
}

void ks_shadow_set_generation(ks_shadow_t *sh, ks_generation_t *gen)
{
    ks_scheduler_set_generation(sh->s, ks_generation_ref(gen));
    sh->generation = gen->id;
}

int ks_shadow_watches(const ks_shadow_t *sh, const char *scheduler_name)
{
    size_t i;
    for (i = 0; i < sh->names.n; i++)
        if (strcmp(sh->names.name[i], scheduler_name) == 0)
            return 1;
    return 0;
}

static period_t *period_get(ks_shadow_t *sh, const char *profile)
{
    period_t *np;
    size_t i;
    for (i = 0; i < sh->n_periods; i++)
        if (sh->periods[i].generation == sh->generation &&
            strcmp(sh->periods[i].profile, profile) == 0)
            return &sh->periods[i];
    np = realloc(sh->periods, (sh->n_periods + 1) * sizeof *np);
    if (np == NULL)
        return NULL;
    sh->periods = np;
    np = &sh->periods[sh->n_periods];
    memset(np, 0, sizeof *np);
    np->generation = sh->generation;
    if ((np->profile = strdup(profile)) == NULL)
        return NULL;
    sh->n_periods++;
    return np;
}

static void log_difference(const ks_shadow_decision_t *d)
{
    char plugins[512] = "";
    size_t off = 0;
    unsigned k;
    for (k = 0; k < d->n_deciding && off < sizeof plugins; k++)
        off += (size_t)snprintf(plugins + off, sizeof plugins - off, "%s%s",
                                k ? ", " : " (", d->deciding[k]);
    if (d->n_deciding && off < sizeof plugins - 1)
        strcat(plugins, ")");
    ks_log(KS_LOGL_INFO,
           "shadow: pod %s/%s, profile %s: %s: real node %s, ksched %s: "
           "%s%s",
           d->ns, d->name, d->profile, ks_shadow_result_name(d->result),
           d->real_node[0] ? d->real_node : "<none>",
           d->ksched_node[0] ? d->ksched_node : "<none>", d->reason,
           plugins);
}

/* Count d in its period, and keep it when it is not `same`. Takes d's
 * strings when kept. */
static void record(ks_shadow_t *sh, ks_shadow_decision_t *d)
{
    period_t *p = period_get(sh, d->profile);
    uv_timeval64_t tv;
    kept_t *k;
    size_t b;
    if (p != NULL) {
        p->results[d->result]++;
        if (d->has_scores && d->real_feasible) {
            for (b = 0; b < N_BOUNDS; b++)
                if (d->gap <= gap_bounds[b]) {
                    p->gap_buckets[b]++;
                    break;
                }
            p->gap_count++;
            p->gap_sum += d->gap;
        }
    }
    if (d->result == KS_SHADOW_SAME)
        return;
    log_difference(d);
    if (sh->n_kept == KS_SHADOW_KEEP) {
        k = &sh->kept[sh->kept_head];
        sh->kept_head = (sh->kept_head + 1) % KS_SHADOW_KEEP;
        ks_shadow_decision_free(&k->d);
    } else {
        k = &sh->kept[(sh->kept_head + sh->n_kept) % KS_SHADOW_KEEP];
        sh->n_kept++;
    }
    k->d = *d;
    memset(d, 0, sizeof *d);
    k->generation = sh->generation;
    k->unix_time = uv_gettimeofday(&tv) == 0
                       ? (double)tv.tv_sec + (double)tv.tv_usec * 1e-6
                       : 0;
}

typedef struct observe_ctx {
    ks_shadow_t *sh;
    const char *real_node;
    int rc;
} observe_ctx_t;

static void on_try(void *ud, const ks_cycle_result_t *r)
{
    observe_ctx_t *c = ud;
    ks_shadow_decision_t d;
    if (ks_shadow_compare(r, c->real_node, &d) != 0) {
        c->rc = KS_ENOMEM;
        return;
    }
    record(c->sh, &d);
    ks_shadow_decision_free(&d);
    c->rc = 1;
}

int ks_shadow_observe(ks_shadow_t *sh, ks_pod_t *pod)
{
    const char *node = pod->node_name, *sched = pod->scheduler_name;
    observe_ctx_t c = {sh, node, 0};
    ks_error_t err;
    size_t i;
    for (i = 0; i < sh->names.n; i++)
        if (strcmp(sh->names.name[i], sched) == 0)
            break;
    if (i == sh->names.n)
        return 0;
    if (ks_generation_profile(ks_scheduler_generation(sh->s),
                              sh->profile_interned[i]) == NULL) {
        ks_shadow_decision_t d;
        memset(&d, 0, sizeof d);
        d.result = KS_SHADOW_ERROR;
        d.ns = strdup(pod->ns);
        d.name = strdup(pod->name);
        d.profile = strdup(sh->profile_interned[i]);
        d.real_node = strdup(node);
        d.ksched_node = strdup("");
        d.reason = strdup("the generation has no such profile");
        d.message = strdup("");
        d.explain_real = strdup("");
        d.explain_ksched = strdup("");
        if (d.ns && d.name && d.profile && d.real_node && d.ksched_node &&
            d.reason && d.message && d.explain_real && d.explain_ksched)
            record(sh, &d);
        ks_shadow_decision_free(&d);
        return 1;
    }
    /* As the real scheduler saw it: not yet placed; with our profile. */
    pod->node_name = ks_intern_empty(ks_intern_global());
    pod->scheduler_name = sh->profile_interned[i];
    ks_error_init(&err);
    ks_scheduler_set_full_eval(sh->s, pod->ns, pod->name);
    if (ks_scheduler_try(sh->s, pod, on_try, &c, &err) != 0) {
        ks_log(KS_LOGL_WARN, "shadow: pod %s/%s: %s", pod->ns, pod->name,
               err.msg);
        c.rc = err.code ? err.code : KS_ENOMEM;
    }
    ks_scheduler_set_full_eval(sh->s, NULL, NULL);
    pod->node_name = node;
    pod->scheduler_name = sched;
    return c.rc;
}

void ks_shadow_metrics(const ks_shadow_t *sh, ks_buf_t *out)
{
    size_t i, b;
    int k;
    ks_buf_puts(out,
                "# HELP ksched_shadow_decisions_total Shadow mode: another "
                "scheduler's bindings compared with ksched's decision, by "
                "profile, result (same, tied, different, unschedulable, "
                "placed, error) and generation.\n"
                "# TYPE ksched_shadow_decisions_total counter\n");
    for (i = 0; i < sh->n_periods; i++)
        for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
            ks_buf_printf(out,
                          "ksched_shadow_decisions_total{profile=\"%s\","
                          "result=\"%s\",generation=\"%llu\"} %llu\n",
                          sh->periods[i].profile,
                          ks_shadow_result_name((ks_shadow_result_t)k),
                          (unsigned long long)sh->periods[i].generation,
                          (unsigned long long)sh->periods[i].results[k]);
    ks_buf_puts(out,
                "# HELP ksched_shadow_score_gap Shadow mode: ksched's best "
                "total score minus its total for the node the other "
                "scheduler chose (when that node passes ksched's filters), "
                "by profile and generation.\n"
                "# TYPE ksched_shadow_score_gap histogram\n");
    for (i = 0; i < sh->n_periods; i++) {
        const period_t *p = &sh->periods[i];
        uint64_t cum = 0;
        for (b = 0; b < N_BOUNDS; b++) {
            cum += p->gap_buckets[b];
            ks_buf_printf(out,
                          "ksched_shadow_score_gap_bucket{profile=\"%s\","
                          "generation=\"%llu\",le=\"%lld\"} %llu\n",
                          p->profile, (unsigned long long)p->generation,
                          (long long)gap_bounds[b], (unsigned long long)cum);
        }
        ks_buf_printf(out,
                      "ksched_shadow_score_gap_bucket{profile=\"%s\","
                      "generation=\"%llu\",le=\"+Inf\"} %llu\n"
                      "ksched_shadow_score_gap_sum{profile=\"%s\","
                      "generation=\"%llu\"} %lld\n"
                      "ksched_shadow_score_gap_count{profile=\"%s\","
                      "generation=\"%llu\"} %llu\n",
                      p->profile, (unsigned long long)p->generation,
                      (unsigned long long)p->gap_count, p->profile,
                      (unsigned long long)p->generation,
                      (long long)p->gap_sum, p->profile,
                      (unsigned long long)p->generation,
                      (unsigned long long)p->gap_count);
    }
}

static json_t *decision_json(const kept_t *k)
{
    const ks_shadow_decision_t *d = &k->d;
    json_t *o = json_object(), *dec = json_array();
    unsigned j;
    if (o == NULL || dec == NULL) {
        json_decref(o);
        json_decref(dec);
        return NULL;
    }
    for (j = 0; j < d->n_deciding; j++)
        json_array_append_new(
            dec, json_pack("{s:s,s:I}", "plugin", d->deciding[j], "gap",
                           (json_int_t)d->deciding_gap[j]));
    json_object_set_new(o, "generation", json_integer((json_int_t)k->generation));
    json_object_set_new(o, "time", json_real(k->unix_time));
    json_object_set_new(o, "namespace", json_string(d->ns));
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "profile", json_string(d->profile));
    json_object_set_new(o, "result",
                        json_string(ks_shadow_result_name(d->result)));
    json_object_set_new(o, "realNode", json_string(d->real_node));
    json_object_set_new(o, "kschedNode", json_string(d->ksched_node));
    json_object_set_new(o, "reason", json_string(d->reason));
    if (d->has_scores) {
        json_object_set_new(o, "kschedScore", json_integer(d->best));
        if (d->real_feasible) {
            json_object_set_new(o, "realScore", json_integer(d->real_total));
            json_object_set_new(o, "scoreGap", json_integer(d->gap));
        }
    }
    json_object_set_new(o, "decidedBy", dec);
    json_object_set_new(o, "message", json_string(d->message));
    json_object_set_new(o, "explainReal", json_string(d->explain_real));
    json_object_set_new(o, "explainKsched", json_string(d->explain_ksched));
    return o;
}

void ks_shadow_debug_json(const ks_shadow_t *sh, ks_buf_t *out)
{
    json_t *root = json_object(), *names = json_array(),
           *periods = json_array(), *diffs = json_array();
    size_t i;
    char *text;
    int k;
    if (!root || !names || !periods || !diffs)
        goto oom;
    for (i = 0; i < sh->names.n; i++)
        json_array_append_new(names,
                              json_pack("{s:s,s:s}", "schedulerName",
                                        sh->names.name[i], "profile",
                                        profile_of(&sh->names, i)));
    for (i = 0; i < sh->n_periods; i++) {
        const period_t *p = &sh->periods[i];
        json_t *po = json_object(), *counts = json_object();
        if (po == NULL || counts == NULL) {
            json_decref(po);
            json_decref(counts);
            goto oom;
        }
        for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
            json_object_set_new(counts,
                                ks_shadow_result_name((ks_shadow_result_t)k),
                                json_integer((json_int_t)p->results[k]));
        json_object_set_new(po, "generation",
                            json_integer((json_int_t)p->generation));
        json_object_set_new(po, "profile", json_string(p->profile));
        json_object_set_new(po, "decisions", counts);
        json_array_append_new(periods, po);
    }
    for (i = 0; i < sh->n_kept; i++) {
        json_t *o = decision_json(
            &sh->kept[(sh->kept_head + i) % KS_SHADOW_KEEP]);
        if (o == NULL)
            goto oom;
        json_array_append_new(diffs, o);
    }
    json_object_set_new(root, "generation",
                        json_integer((json_int_t)sh->generation));
    json_object_set_new(root, "names", names);
    json_object_set_new(root, "periods", periods);
    json_object_set_new(root, "differences", diffs);
    names = periods = diffs = NULL;
    if ((text = json_dumps(root, JSON_INDENT(2))) == NULL)
        goto oom;
    ks_buf_puts(out, text);
    ks_buf_puts(out, "\n");
    free(text);
    json_decref(root);
    return;
oom:
    json_decref(root);
    json_decref(names);
    json_decref(periods);
    json_decref(diffs);
    out->oom = 1;
}
