/* ksched schedule: schedule every pending pod of a cluster file. */
#include "cli.h"
#include "cli_faults.h"
#include "cli_replay.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cache.h"
#include "base/intern.h"
#include "cluster/objects.h"
#include "framework/batch.h"
#include "framework/call_board.h"
#include "cluster/object_store.h"
#include "framework/generation.h"
#include "base/log.h"
#include "base/buf.h"
#include "framework/scheduler.h"
#include "framework/status.h"
#include "shadow/explain.h"
#include "shadow/replay.h"

static const char usage[] =
    "Usage: ksched schedule --cluster FILE... [--config FILE] [options]\n"
    "\n"
    "Read nodes and pods from Kubernetes manifests (multi-document YAML or\n"
    "a `kind: List`, as `kubectl get nodes,pods -A -o yaml` prints), schedule\n"
    "every pending pod whose schedulerName matches a profile, and print the\n"
    "bindings and, for each pod that could not be placed, why.\n"
    "\n"
    "The run ends when nothing left can change: no pod is active, backing\n"
    "off, or waiting at Permit. Time is simulated: backoffs and Permit\n"
    "timeouts elapse at once when nothing else can run.\n"
    "\n"
    "Options:\n"
    "  -f, --cluster FILE       a manifest file; repeatable\n"
    "  -c, --config FILE        KubeSchedulerConfiguration (default: built-in)\n"
    "  -p, --plugin-dir DIR     search DIR for plugin .so files; repeatable\n"
    "      --no-default-plugin-path\n"
    "                           search only the --plugin-dir directories\n"
    "  -o, --output FORMAT      table (default), yaml or json\n"
    "  -e, --explain NS/POD     for this pod, print every node's filter\n"
    "                           verdict and every plugin's weighted score\n"
    "                           (its cycles evaluate every node; other\n"
    "                           pods are scheduled as without --explain)\n"
    "      --replay             instead of scheduling the pending pods, take\n"
    "                           each bound pod out in creation order, decide\n"
    "                           where the profile would put it with every\n"
    "                           other pod where it is, and compare (same,\n"
    "                           tied, different, unschedulable, error); print\n"
    "                           the summary and the differences with both\n"
    "                           nodes' verdicts and scores as --explain does\n"
    "      --replay-as NAME=PROFILE[,...]\n"
    "                           --replay, the pods of scheduler NAME with the\n"
    "                           profile PROFILE (default: the profile named\n"
    "                           as the pod's schedulerName)\n"
    "      --deterministic      break score ties by the smallest node name\n"
    "                           (default: at random, as kube-scheduler),\n"
    "                           and keep the nodes one Filter thread finds\n"
    "      --run-all-filters    run every Filter plugin on every node instead\n"
    "                           of stopping at the first failure\n"
    "  -j, --parallelism N      worker threads for Filter/Score (default:\n"
    "                           the config's parallelism)\n"
    "      --batching MODE      opportunistic batching: on (default), off,\n"
    "                           or verify (reuse nothing, compare every\n"
    "                           result batching would reuse with a fresh\n"
    "                           one, log each difference; exit 8 if any)\n"
    "      --bulk MODE          bulk Filter and Score (plugins' filter_nodes,\n"
    "                           score_nodes): on (default), off (node by\n"
    "                           node), or verify (compare every bulk result\n"
    "                           with the node-by-node one, log each\n"
    "                           difference; exit 8 if any)\n"
    KS_CLI_FAULT_HELP_DEADLINE
    "  -v, --verbose            log more (repeat for debug)\n"
    "  -h, --help               show this help\n"
    "\n"
    "A plugin that crashes (a signal or abort() in one of its calls) or\n"
    "overruns its deadline ends the run with one line on stderr naming the\n"
    "plugin, its version and file, the signal or deadline, the extension\n"
    "point and the pod it was scheduling.\n"
    "\n"
    "Exit status: 0 every pending pod was placed, 3 some could not be\n"
    "placed (--replay: some pod would go to another node or none), 1\n"
    "invalid input, 2 usage, 5 a plugin crashed, 6 a plugin\n"
    "overran its deadline, 8 --batching verify or --bulk verify found a\n"
    "difference (batched against unbatched, bulk against node by node).\n";

/* The summary line of --batching verify or --bulk verify on stderr;
 * non-zero when a difference was found. */
static int verify_report(const char *what, uint64_t compared,
                         uint64_t differences)
{
    fprintf(stderr,
            "ksched schedule: %s verify: %llu node results compared, %llu "
            "differences\n",
            what, (unsigned long long)compared,
            (unsigned long long)differences);
    return differences > 0;
}

typedef struct binding {
    const ks_pod_t *pod;
    const char *node;
} binding_t;

/* A plugin's API request, recorded instead of sent (SDK ABI 1.4
 * KS_API_RECORD). Strings malloc'd. */
typedef struct recorded {
    char *plugin, *method, *path, *content_type, *body;
} recorded_t;

typedef struct run {
    binding_t *b;
    size_t n_b, cap_b;
    recorded_t *req;
    size_t n_req, cap_req;
    const char *explain_ns, *explain_name;
    uint32_t explain_attempt;
} run_t;

static void on_bound(void *ud, const ks_pod_t *pod, const char *node)
{
    run_t *r = ud;
    if (r->n_b == r->cap_b) {
        r->cap_b = r->cap_b ? r->cap_b * 2 : 64;
        r->b = realloc(r->b, r->cap_b * sizeof *r->b);
    }
    r->b[r->n_b].pod = pod;
    r->b[r->n_b].node = node;
    r->n_b++;
}

static void explain(run_t *run, const ks_cycle_result_t *r)
{
    ks_buf_t b = {0};
    run->explain_attempt++;
    ks_buf_printf(&b, "explain %s/%s (attempt %u, profile \"%s\")\n",
                  r->pod->ns, r->pod->name, run->explain_attempt,
                  r->fw->profile_name);
    ks_explain_nodes(&b, r); /* shadow/explain.h: shared with --replay */
    if (b.oom)
        fprintf(stderr, "ksched schedule: out of memory explaining %s/%s\n",
                r->pod->ns, r->pod->name);
    else if (b.data)
        fputs(b.data, stdout);
    ks_buf_free(&b);
}

static void on_cycle(void *ud, const ks_cycle_result_t *r)
{
    run_t *run = ud;
    if (run->explain_name && strcmp(r->pod->name, run->explain_name) == 0 &&
        strcmp(r->pod->ns, run->explain_ns) == 0)
        explain(run, r);
}

static int record_request(void *ud, const char *plugin,
                          const ks_api_request_t *req)
{
    run_t *run = ud;
    recorded_t *r;
    if (run->n_req == run->cap_req) {
        size_t cap = run->cap_req ? run->cap_req * 2 : 8;
        recorded_t *na = realloc(run->req, cap * sizeof *na);
        if (na == NULL)
            return -1;
        run->req = na;
        run->cap_req = cap;
    }
    r = &run->req[run->n_req];
    r->plugin = strdup(plugin);
    r->method = strdup(req->method);
    r->path = strdup(req->path);
    r->content_type = strdup(req->content_type ? req->content_type
                                               : "application/json");
    r->body = req->body ? strdup(req->body) : NULL;
    if (!r->plugin || !r->method || !r->path || !r->content_type ||
        (req->body && !r->body)) {
        free(r->plugin);
        free(r->method);
        free(r->path);
        free(r->content_type);
        free(r->body);
        return -1;
    }
    run->n_req++;
    return 0;
}

static void recorded_free(run_t *run)
{
    size_t i;
    for (i = 0; i < run->n_req; i++) {
        free(run->req[i].plugin);
        free(run->req[i].method);
        free(run->req[i].path);
        free(run->req[i].content_type);
        free(run->req[i].body);
    }
    free(run->req);
}

typedef struct pending {
    const ks_pod_t *pod;
    char *message;
    int gated;
} pending_t;

typedef struct pend_list {
    pending_t *a;
    size_t n, cap;
} pend_list_t;

static void collect_pending(void *ud, const ks_pod_t *pod, const char *msg,
                            int gated)
{
    pend_list_t *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = realloc(l->a, l->cap * sizeof *l->a);
    }
    l->a[l->n].pod = pod;
    l->a[l->n].message = strdup(msg);
    l->a[l->n].gated = gated;
    l->n++;
}

static int cmp_pending(const void *a, const void *b)
{
    const pending_t *x = a, *y = b;
    int c = strcmp(x->pod->ns, y->pod->ns);
    return c ? c : strcmp(x->pod->name, y->pod->name);
}


static void print_result(const char *output, const run_t *run,
                         const pend_list_t *pend, ks_pod_t *const *others,
                         size_t n_others)
{
    size_t i;
    if (strcmp(output, "table") == 0) {
        printf("%-40s %s\n", "POD", "NODE");
        for (i = 0; i < run->n_b; i++) {
            char name[512];
            snprintf(name, sizeof name, "%s/%s", run->b[i].pod->ns,
                     run->b[i].pod->name);
            printf("%-40s %s\n", name, run->b[i].node);
        }
        for (i = 0; i < pend->n; i++) {
            char name[512];
            snprintf(name, sizeof name, "%s/%s", pend->a[i].pod->ns,
                     pend->a[i].pod->name);
            printf("%-40s <none>  %s%s\n", name,
                   pend->a[i].gated ? "gated: " : "", pend->a[i].message);
        }
        printf("\n%zu bound, %zu could not be placed", run->n_b, pend->n);
        if (n_others)
            printf(", %zu left to other schedulers", n_others);
        if (run->n_req)
            printf(", %zu API request%s recorded (see -o yaml)", run->n_req,
                   run->n_req == 1 ? "" : "s");
        printf("\n");
        return;
    }
    if (strcmp(output, "yaml") == 0) {
        printf("bindings:%s\n", run->n_b ? "" : " []");
        for (i = 0; i < run->n_b; i++)
            printf("- pod: %s/%s\n  node: %s\n", run->b[i].pod->ns,
                   run->b[i].pod->name, run->b[i].node);
        printf("unschedulable:%s\n", pend->n ? "" : " []");
        for (i = 0; i < pend->n; i++) {
            printf("- pod: %s/%s\n  gated: %s\n  message: ",
                   pend->a[i].pod->ns, pend->a[i].pod->name,
                   pend->a[i].gated ? "true" : "false");
            ks_cli_print_json_str(pend->a[i].message); /* a JSON string is valid YAML */
            printf("\n");
        }
        printf("otherSchedulers:%s\n", n_others ? "" : " []");
        for (i = 0; i < n_others; i++)
            printf("- pod: %s/%s\n  schedulerName: %s\n", others[i]->ns,
                   others[i]->name, others[i]->scheduler_name);
        printf("requests:%s\n", run->n_req ? "" : " []");
        for (i = 0; i < run->n_req; i++) {
            const recorded_t *r = &run->req[i];
            printf("- plugin: %s\n  method: %s\n  path: ", r->plugin,
                   r->method);
            ks_cli_print_json_str(r->path);
            printf("\n  contentType: ");
            ks_cli_print_json_str(r->content_type);
            printf("\n  body: ");
            ks_cli_print_json_str(r->body ? r->body : "");
            printf("\n");
        }
        return;
    }
    printf("{\"bindings\": [");
    for (i = 0; i < run->n_b; i++) {
        printf("%s{\"namespace\": ", i ? ", " : "");
        ks_cli_print_json_str(run->b[i].pod->ns);
        printf(", \"name\": ");
        ks_cli_print_json_str(run->b[i].pod->name);
        printf(", \"node\": ");
        ks_cli_print_json_str(run->b[i].node);
        printf("}");
    }
    printf("], \"unschedulable\": [");
    for (i = 0; i < pend->n; i++) {
        printf("%s{\"namespace\": ", i ? ", " : "");
        ks_cli_print_json_str(pend->a[i].pod->ns);
        printf(", \"name\": ");
        ks_cli_print_json_str(pend->a[i].pod->name);
        printf(", \"gated\": %s, \"message\": ",
               pend->a[i].gated ? "true" : "false");
        ks_cli_print_json_str(pend->a[i].message);
        printf("}");
    }
    printf("], \"otherSchedulers\": [");
    for (i = 0; i < n_others; i++) {
        printf("%s{\"namespace\": ", i ? ", " : "");
        ks_cli_print_json_str(others[i]->ns);
        printf(", \"name\": ");
        ks_cli_print_json_str(others[i]->name);
        printf("}");
    }
    printf("], \"requests\": [");
    for (i = 0; i < run->n_req; i++) {
        const recorded_t *r = &run->req[i];
        printf("%s{\"plugin\": ", i ? ", " : "");
        ks_cli_print_json_str(r->plugin);
        printf(", \"method\": ");
        ks_cli_print_json_str(r->method);
        printf(", \"path\": ");
        ks_cli_print_json_str(r->path);
        printf(", \"contentType\": ");
        ks_cli_print_json_str(r->content_type);
        printf(", \"body\": ");
        ks_cli_print_json_str(r->body ? r->body : "");
        printf("}");
    }
    printf("]}\n");
}

static void notice(const char *msg)
{
    ks_log(KS_LOGL_WARN, "%s", msg); /* skipped objects: always shown */
}

/* What the command line says. Strings point into argv. */
typedef struct schedule_opts {
    ks_cli_opts_t o;
    ks_cli_faults_t fo;
    const char *clusters[64];
    unsigned n_clusters;
    const char *output, *explain_arg;
    char explain_ns[256];
    const char *explain_name;
    int deterministic, run_all, batching, bulk, replay;
    ks_shadow_names_t replay_as; /* --replay-as */
} schedule_opts_t;

/* Parse and check the command line: KS_CLI_CONTINUE, or the exit code. */
static int schedule_parse(int argc, char **argv, schedule_opts_t *so)
{
    static const struct option opts[] = {
        {"cluster", required_argument, NULL, 'f'},
        KS_CLI_OPT_CONFIG,
        KS_CLI_OPT_PLUGIN_PATH,
        {"output", required_argument, NULL, 'o'},
        {"explain", required_argument, NULL, 'e'},
        {"deterministic", no_argument, NULL, 'D'},
        {"run-all-filters", no_argument, NULL, 'A'},
        KS_CLI_OPT_PARALLELISM,
        KS_CLI_OPT_VERBOSE,
        KS_CLI_FAULT_OPT_DEADLINE,
        {"batching", required_argument, NULL, 1401},
        {"bulk", required_argument, NULL, 1402},
        {"replay", no_argument, NULL, 1403},
        {"replay-as", required_argument, NULL, 1404},
        KS_CLI_OPT_HELP};
    const char *slash;
    int c, rc;
    memset(so, 0, sizeof *so);
    so->output = "table";
    so->batching = KS_BATCHING_ON;
    so->bulk = KS_BULK_ON;
    ks_cli_opts_init(&so->o, "schedule", usage);
    ks_cli_faults_init(&so->fo);
    while ((c = getopt_long(argc, argv, "+f:c:p:o:e:j:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (so->n_clusters == 64)
                return ks_cli_usage_error("schedule", "too many --cluster "
                                                      "files (at most 64)");
            so->clusters[so->n_clusters++] = optarg;
            break;
        case 'o': so->output = optarg; break;
        case 'e': so->explain_arg = optarg; break;
        case 'D': so->deterministic = 1; break;
        case 'A': so->run_all = 1; break;
        case 1403: so->replay = 1; break;
        case 1404: {
            ks_error_t e = {0};
            so->replay = 1;
            if (ks_shadow_names_parse(optarg, &so->replay_as, &e) != 0) {
                ks_shadow_names_free(&so->replay_as);
                return ks_cli_usage_error("schedule", "--replay-as: %s",
                                          e.msg);
            }
            break;
        }
        case 1402:
            if (ks_cli_parse_mode("schedule", "--bulk", optarg, &so->bulk))
                return KS_EXIT_USAGE;
            break;
        case 1401:
            if (ks_cli_parse_mode("schedule", "--batching", optarg,
                                  &so->batching))
                return KS_EXIT_USAGE;
            break;
        case 1201: /* --plugin-deadline */
            if ((rc = ks_cli_faults_opt(&so->fo, "schedule", c, optarg)) !=
                KS_CLI_CONTINUE)
                return rc;
            break;
        default:
            if ((rc = ks_cli_common_opt(&so->o, c, argv)) != KS_CLI_CONTINUE)
                return rc;
            break;
        }
    }
    if ((rc = ks_cli_no_operands(&so->o, argc, argv)) != KS_CLI_CONTINUE)
        return rc;
    if (so->n_clusters == 0)
        return ks_cli_usage_error("schedule", "--cluster FILE is required");
    if (strcmp(so->output, "table") && strcmp(so->output, "yaml") &&
        strcmp(so->output, "json"))
        return ks_cli_usage_error("schedule", "--output must be table, yaml "
                                              "or json, got '%s'",
                                  so->output);
    if (so->explain_arg == NULL)
        return KS_CLI_CONTINUE;
    slash = strchr(so->explain_arg, '/');
    if (slash == NULL || slash == so->explain_arg || slash[1] == '\0' ||
        (size_t)(slash - so->explain_arg) >= sizeof so->explain_ns)
        return ks_cli_usage_error("schedule", "--explain takes "
                                              "NAMESPACE/POD, got '%s'",
                                  so->explain_arg);
    memcpy(so->explain_ns, so->explain_arg,
           (size_t)(slash - so->explain_arg));
    so->explain_ns[slash - so->explain_arg] = '\0';
    so->explain_name = slash + 1;
    return KS_CLI_CONTINUE;
}

/* Read the snapshot files into m and fill the cache with its nodes,
 * services, owners, namespaces and bound pods (taken out of m; through rp
 * when replaying, *n_others counting those no profile schedules). 0, or
 * -1 with the error printed. */
static int schedule_load(const schedule_opts_t *so, ks_manifest_t *m,
                         ks_cache_t *cache, ks_replay_t *rp,
                         size_t *n_others)
{
    int rc;
    ks_error_t err = {0};
    size_t i;
    /* Objects of the resources the loaded plugins declare (SDK ABI 1.3)
     * go to their stores instead of being skipped. */
    m->wants = ks_store_manifest_wants;
    m->take = ks_store_manifest_take;
    for (i = 0; i < so->n_clusters; i++)
        if (ks_manifest_load_file(m, so->clusters[i], ks_intern_global(),
                                  notice, &err) != 0)
            goto fail;
    for (i = 0; i < m->n_nodes; i++) {
        if (ks_cache_add_node(cache, m->nodes[i], &err) != 0)
            goto fail;
        m->nodes[i] = NULL;
    }
    for (i = 0; i < m->n_services; i++) {
        ks_cache_add_service(cache, m->services[i]);
        m->services[i] = NULL;
    }
    for (i = 0; i < m->n_namespaces; i++) {
        ks_cache_add_namespace(cache, m->namespaces[i]);
        m->namespaces[i] = NULL;
    }
    for (i = 0; i < m->n_pods; i++) {
        ks_pod_t *pod = m->pods[i];
        if (pod->node_name[0] == '\0')
            continue;
        m->pods[i] = NULL;
        if (rp == NULL) {
            if (ks_cache_add_pod(cache, pod, &err) != 0) {
                m->pods[i] = pod;
                goto fail;
            }
        } else if ((rc = ks_replay_add_pod(rp, pod, &err)) < 0) {
            goto fail; /* freed */
        } else if (rc == 1) {
            (*n_others)++;
        }
    }
    return 0;
fail:
    fprintf(stderr, "%s\n", err.msg);
    return -1;
}

/* Queue m's pending pods (taken out of m); a pod no profile schedules
 * goes to *others. 0, or -1 when out of memory. */
static int schedule_queue(ks_scheduler_t *s, ks_manifest_t *m,
                          ks_pod_t ***others, size_t *n_others)
{
    size_t i;
    for (i = 0; i < m->n_pods; i++) {
        ks_pod_t *pod = m->pods[i], **grown;
        int added;
        if (pod == NULL)
            continue;
        m->pods[i] = NULL;
        added = ks_scheduler_add_pod(s, pod);
        if (added == 0)
            continue;
        /* 1: no profile has its schedulerName; negative: not queued. */
        grown = added == 1
                    ? realloc(*others, (*n_others + 1) * sizeof **others)
                    : NULL;
        if (grown == NULL) {
            fprintf(stderr, "ksched schedule: out of memory\n");
            ks_pod_free(pod);
            return -1;
        }
        *others = grown;
        (*others)[(*n_others)++] = pod;
    }
    return 0;
}

/* The exit status of a finished run: unplaced pods, or a difference the
 * verify modes found. */
static int schedule_status(const schedule_opts_t *so, ks_scheduler_t *s,
                           size_t n_pending)
{
    ks_sched_stats_t st = ks_scheduler_stats(s);
    int rc = n_pending > 0 ? KS_EXIT_UNPLACED : KS_EXIT_OK;
    if (so->batching == KS_BATCHING_VERIFY &&
        verify_report("batching", st.batch_reused, st.batch_mismatches) != 0)
        rc = KS_EXIT_BATCH_MISMATCH;
    if (so->bulk == KS_BULK_VERIFY &&
        verify_report("bulk", st.bulk_compared, st.bulk_mismatches) != 0)
        rc = KS_EXIT_BATCH_MISMATCH;
    return rc;
}

/* --replay: load the snapshot into a replay and report. The exit code. */
static int schedule_replay(const schedule_opts_t *o, ks_manifest_t *m,
                           ks_cache_t *cache, ks_generation_t *gen,
                           const ks_sched_opts_t *so)
{
    ks_cli_replay_opts_t ro;
    ks_replay_t *rp = ks_replay_new(gen, cache, so);
    size_t i;
    int rc;
    ks_error_t err = {0};
    memset(&ro, 0, sizeof ro);
    if (rp == NULL) {
        fprintf(stderr, "ksched schedule: out of memory\n");
        return KS_EXIT_INVALID;
    }
    if (ks_replay_map(rp, &o->replay_as, &err) != 0) {
        fprintf(stderr, "ksched schedule: %s\n", err.msg);
        ks_replay_free(rp);
        return KS_EXIT_INVALID;
    }
    if (schedule_load(o, m, cache, rp, &ro.n_others) != 0) {
        ks_replay_free(rp);
        return KS_EXIT_INVALID;
    }
    for (i = 0; i < m->n_pods; i++)
        if (m->pods[i] != NULL)
            ro.n_pending++;
    ro.output = o->output;
    ro.explain_ns = o->explain_name ? o->explain_ns : NULL;
    ro.explain_name = o->explain_name;
    rc = ks_cli_replay_report(rp, &ro);
    ks_replay_free(rp);
    return rc;
}

int ks_cli_schedule(int argc, char **argv)
{
    schedule_opts_t o;
    ks_generation_opts_t go;
    ks_generation_t *gen = NULL;
    ks_error_t err = {0};
    ks_manifest_t m;
    ks_cache_t *cache = NULL;
    ks_scheduler_t *s = NULL;
    ks_sched_opts_t so;
    run_t run;
    pend_list_t pend = {0};
    ks_pod_t **others = NULL;
    size_t n_others = 0, i;
    int rc;

    if ((rc = schedule_parse(argc, argv, &o)) != KS_CLI_CONTINUE)
        return rc;
    memset(&run, 0, sizeof run);
    run.explain_ns = o.explain_name ? o.explain_ns : NULL;
    run.explain_name = o.explain_name;
    ks_log_set_level(KS_LOGL_WARN + o.o.verbose);
    if ((rc = ks_cli_faults_apply(&o.fo, "schedule")) != KS_CLI_CONTINUE)
        return rc;
    /* Before any plugin is loaded (create runs at the build): a crash in a
     * plugin call ends the run with exit 5 and a line naming the plugin;
     * a call past its deadline with exit 6 (framework/call_board.h). A
     * crash outside plugin code still dies from its signal. */
    if (ks_call_board_crash_handlers(KS_EXIT_PLUGIN_CRASH) != 0 ||
        ks_call_board_watchdog_start(20, KS_EXIT_PLUGIN_DEADLINE) != 0)
        fprintf(stderr, "ksched schedule: cannot watch plugin calls "
                        "(crashes and deadlines are not reported)\n");

    ks_cli_generation_opts(&o.o, &go);
    if (ks_generation_build(&go, &gen, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return KS_EXIT_INVALID;
    }
    rc = KS_EXIT_INVALID;
    memset(&m, 0, sizeof m);
    memset(&so, 0, sizeof so);
    so.deterministic = o.deterministic;
    so.run_all_filters = o.run_all;
    so.bulk = o.bulk;
    so.batching = o.batching;
    cache = ks_cache_new(ks_intern_global());
    if (cache == NULL)
        goto out;
    if (o.replay) {
        rc = schedule_replay(&o, &m, cache, gen, &so);
        goto out;
    }
    if (schedule_load(&o, &m, cache, NULL, NULL) != 0)
        goto out;
    so.full_eval_ns = run.explain_ns;
    so.full_eval_name = run.explain_name;
    so.obs.bound = on_bound;
    so.obs.cycle = on_cycle;
    so.obs.ud = &run;
    /* Plugins' API requests are recorded and printed, never sent. */
    so.writer.api_mode = KS_API_RECORD;
    so.writer.api_record = record_request;
    so.writer.ud = &run;
    if ((s = ks_scheduler_new(gen, cache, &so)) == NULL) {
        fprintf(stderr, "ksched schedule: out of memory\n");
        goto out;
    }
    if (schedule_queue(s, &m, &others, &n_others) != 0)
        goto out;
    ks_scheduler_run_batch(s);
    ks_scheduler_foreach_pending(s, collect_pending, &pend);
    if (pend.n)
        qsort(pend.a, pend.n, sizeof *pend.a, cmp_pending);
    print_result(o.output, &run, &pend, others, n_others);
    rc = schedule_status(&o, s, pend.n);
out:
    ks_scheduler_free(s);
    ks_cache_free(cache);
    ks_manifest_free(&m);
    for (i = 0; i < n_others; i++)
        ks_pod_free(others[i]);
    free(others);
    for (i = 0; i < pend.n; i++)
        free(pend.a[i].message);
    free(pend.a);
    free(run.b);
    recorded_free(&run);
    ks_shadow_names_free(&o.replay_as);
    ks_generation_unref(gen);
    return rc;
}
