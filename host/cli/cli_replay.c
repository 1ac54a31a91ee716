/* ksched schedule --replay: compare the snapshot's bindings with where
 * the profile would put each pod (cli_replay.h). */
#include "cli_replay.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "shadow/explain.h"
#include "shadow/tally.h"

typedef struct report {
    const ks_cli_replay_opts_t *o;
    ks_shadow_tally_t tally;
    ks_shadow_decision_t *diff; /* every decision but "same", in order */
    size_t n_diff, cap_diff;
    int oom;
} report_t;

static void on_decision(void *ud, const ks_cycle_result_t *r,
                        ks_shadow_decision_t *d)
{
    report_t *rep = ud;
    if (ks_shadow_tally_add(&rep->tally, d) != 0)
        rep->oom = 1;
    if (rep->o->explain_name && strcmp(r->pod->ns, rep->o->explain_ns) == 0 &&
        strcmp(r->pod->name, rep->o->explain_name) == 0) {
        ks_buf_t b = {0};
        ks_buf_printf(&b, "explain %s/%s (replay, profile \"%s\", really on "
                          "%s)\n",
                      r->pod->ns, r->pod->name, r->fw->profile_name,
                      d->real_node);
        ks_explain_nodes(&b, r);
        /* before the report, as schedule --explain prints during the run */
        if (b.data && !b.oom)
            fputs(b.data, stdout);
        ks_buf_free(&b);
    }
    if (d->result == KS_SHADOW_SAME)
        return;
    if (rep->n_diff == rep->cap_diff) {
        size_t cap = rep->cap_diff ? rep->cap_diff * 2 : 16;
        ks_shadow_decision_t *nd = realloc(rep->diff, cap * sizeof *nd);
        if (nd == NULL) {
            rep->oom = 1;
            return;
        }
        rep->diff = nd;
        rep->cap_diff = cap;
    }
    rep->diff[rep->n_diff++] = *d; /* keep its strings */
    memset(d, 0, sizeof *d);
}


/* Print s with every line indented by `indent` spaces. */
static void indented(const char *s, int indent)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        printf("%*s%.*s\n", indent, "", (int)n, s);
        s += n + (nl != NULL);
    }
}

static void print_table(const report_t *rep)
{
    const ks_shadow_tally_t *t = &rep->tally;
    size_t i;
    int k;
    uint64_t total = 0;
    if (rep->n_diff)
        printf("%-40s %-16s %-16s %-13s %s\n", "POD", "REAL", "KSCHED",
               "RESULT", "REASON");
    for (i = 0; i < rep->n_diff; i++) {
        const ks_shadow_decision_t *d = &rep->diff[i];
        char name[512];
        unsigned j;
        snprintf(name, sizeof name, "%s/%s", d->ns, d->name);
        printf("%-40s %-16s %-16s %-13s %s", name,
               d->real_node[0] ? d->real_node : "<none>",
               d->ksched_node[0] ? d->ksched_node : "<none>",
               ks_shadow_result_name(d->result), d->reason);
        for (j = 0; j < d->n_deciding; j++) {
            if (d->result == KS_SHADOW_DIFFERENT && d->real_feasible)
                printf("%s%s +%lld", j ? ", " : " (", d->deciding[j],
                       (long long)d->deciding_gap[j]);
            else
                printf("%s%s", j ? ", " : " (", d->deciding[j]);
        }
        printf("%s\n", d->n_deciding ? ")" : "");
        indented(d->explain_real, 2);
        if (strcmp(d->real_node, d->ksched_node) != 0)
            indented(d->explain_ksched, 2);
        if (d->ksched_node[0] == '\0' && d->message[0])
            printf("    %s\n", d->message);
    }
    if (rep->n_diff)
        printf("\n");
    for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
        total += t->results[k];
    printf("%llu replayed:", (unsigned long long)total);
    for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
        printf("%s %llu %s", k ? "," : "", (unsigned long long)t->results[k],
               ks_shadow_result_name((ks_shadow_result_t)k));
    if (rep->o->n_others)
        printf("; %zu left to other schedulers", rep->o->n_others);
    if (rep->o->n_pending)
        printf("; %zu pending, not replayed", rep->o->n_pending);
    printf("\n");
    if (t->n_plugins) {
        printf("made the difference:");
        for (i = 0; i < t->n_plugins; i++)
            printf("%s %s %llu", i ? "," : "", t->plugins[i].plugin,
                   (unsigned long long)t->plugins[i].count);
        printf("\n");
    }
}

static void print_yaml(const report_t *rep)
{
    const ks_shadow_tally_t *t = &rep->tally;
    size_t i;
    int k;
    printf("summary:\n");
    for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
        printf("  %s: %llu\n", ks_shadow_result_name((ks_shadow_result_t)k),
               (unsigned long long)t->results[k]);
    printf("  otherSchedulers: %zu\n  pending: %zu\n", rep->o->n_others,
           rep->o->n_pending);
    printf("decidingPlugins:%s\n", t->n_plugins ? "" : " []");
    for (i = 0; i < t->n_plugins; i++)
        printf("- plugin: %s\n  count: %llu\n", t->plugins[i].plugin,
               (unsigned long long)t->plugins[i].count);
    printf("differences:%s\n", rep->n_diff ? "" : " []");
    for (i = 0; i < rep->n_diff; i++) {
        const ks_shadow_decision_t *d = &rep->diff[i];
        unsigned j;
        printf("- pod: %s/%s\n  profile: %s\n  result: %s\n  realNode: ",
               d->ns, d->name, d->profile, ks_shadow_result_name(d->result));
        ks_cli_print_json_str(d->real_node); /* a JSON string is valid YAML */
        printf("\n  kschedNode: ");
        ks_cli_print_json_str(d->ksched_node);
        printf("\n  reason: ");
        ks_cli_print_json_str(d->reason);
        printf("\n");
        if (d->has_scores) {
            printf("  kschedScore: %lld\n", (long long)d->best);
            if (d->real_feasible)
                printf("  realScore: %lld\n  scoreGap: %lld\n",
                       (long long)d->real_total, (long long)d->gap);
        }
        printf("  decidedBy:%s\n", d->n_deciding ? "" : " []");
        for (j = 0; j < d->n_deciding; j++)
            printf("  - plugin: %s\n    gap: %lld\n", d->deciding[j],
                   (long long)d->deciding_gap[j]);
        printf("  message: ");
        ks_cli_print_json_str(d->message);
        printf("\n  explainReal: ");
        ks_cli_print_json_str(d->explain_real);
        printf("\n  explainKsched: ");
        ks_cli_print_json_str(d->explain_ksched);
        printf("\n");
    }
}

static void print_json(const report_t *rep)
{
    const ks_shadow_tally_t *t = &rep->tally;
    size_t i;
    int k;
    printf("{\"summary\": {");
    for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
        printf("\"%s\": %llu, ", ks_shadow_result_name((ks_shadow_result_t)k),
               (unsigned long long)t->results[k]);
    printf("\"otherSchedulers\": %zu, \"pending\": %zu}, "
           "\"decidingPlugins\": [",
           rep->o->n_others, rep->o->n_pending);
    for (i = 0; i < t->n_plugins; i++) {
        printf("%s{\"plugin\": ", i ? ", " : "");
        ks_cli_print_json_str(t->plugins[i].plugin);
        printf(", \"count\": %llu}", (unsigned long long)t->plugins[i].count);
    }
    printf("], \"differences\": [");
    for (i = 0; i < rep->n_diff; i++) {
        const ks_shadow_decision_t *d = &rep->diff[i];
        unsigned j;
        printf("%s{\"namespace\": ", i ? ", " : "");
        ks_cli_print_json_str(d->ns);
        printf(", \"name\": ");
        ks_cli_print_json_str(d->name);
        printf(", \"profile\": ");
        ks_cli_print_json_str(d->profile);
        printf(", \"result\": \"%s\", \"realNode\": ",
               ks_shadow_result_name(d->result));
        ks_cli_print_json_str(d->real_node);
        printf(", \"kschedNode\": ");
        ks_cli_print_json_str(d->ksched_node);
        printf(", \"reason\": ");
        ks_cli_print_json_str(d->reason);
        if (d->has_scores) {
            printf(", \"kschedScore\": %lld", (long long)d->best);
            if (d->real_feasible)
                printf(", \"realScore\": %lld, \"scoreGap\": %lld",
                       (long long)d->real_total, (long long)d->gap);
        }
        printf(", \"decidedBy\": [");
        for (j = 0; j < d->n_deciding; j++) {
            printf("%s{\"plugin\": ", j ? ", " : "");
            ks_cli_print_json_str(d->deciding[j]);
            printf(", \"gap\": %lld}", (long long)d->deciding_gap[j]);
        }
        printf("], \"message\": ");
        ks_cli_print_json_str(d->message);
        printf(", \"explainReal\": ");
        ks_cli_print_json_str(d->explain_real);
        printf(", \"explainKsched\": ");
        ks_cli_print_json_str(d->explain_ksched);
        printf("}");
    }
    printf("]}\n");
}

int ks_cli_replay_report(ks_replay_t *rp, const ks_cli_replay_opts_t *o)
{
    report_t rep;
    ks_error_t err = {0};
    size_t i;
    int rc = KS_EXIT_OK, k;
    memset(&rep, 0, sizeof rep);
    rep.o = o;
    if (ks_replay_run(rp, on_decision, &rep, &err) != 0) {
        fprintf(stderr, "ksched schedule: %s\n", err.msg);
        rc = KS_EXIT_INVALID;
        goto out;
    }
    if (rep.oom) {
        fprintf(stderr, "ksched schedule: out of memory\n");
        rc = KS_EXIT_INVALID;
        goto out;
    }
    ks_shadow_tally_sort(&rep.tally);
    if (strcmp(o->output, "yaml") == 0)
        print_yaml(&rep);
    else if (strcmp(o->output, "json") == 0)
        print_json(&rep);
    else
        print_table(&rep);
    for (k = 0; k < KS_SHADOW_N_RESULTS; k++)
        if (ks_shadow_result_differs((ks_shadow_result_t)k) &&
            rep.tally.results[k] > 0)
            rc = KS_EXIT_UNPLACED;
out:
    for (i = 0; i < rep.n_diff; i++)
        ks_shadow_decision_free(&rep.diff[i]);
    free(rep.diff);
    ks_shadow_tally_free(&rep.tally);
    return rc;
}
