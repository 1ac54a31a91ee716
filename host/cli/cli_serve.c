/* ksched serve: options, listening, and the loop. */
#include "cli.h"
#include "cli_faults.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/go_duration.h"
#include "base/log.h"
#include "framework/batch.h"
#include "framework/call_board.h"
#include "server/faults.h"
#include "server/journal.h"
#include "server/secure.h"
#include "server/server.h"
#include "shadow/shadow.h"
#include "supervisor/supervisor.h"
#include "server/signals.h"

static const char usage[] =
    "Usage: ksched serve [--config FILE] [--plugin-dir DIR]...\n"
    "                    [--kubeconfig FILE [--context NAME] | --embedded]\n"
    "                    [--listen ADDR:PORT | --socket PATH] [options]\n"
    "\n"
    "Run the scheduler as a long-lived process. In cluster mode it schedules\n"
    "the pods of a Kubernetes cluster through its API server; in the\n"
    "embedded mode it serves a small Kubernetes-shaped HTTP API of its own\n"
    "(create nodes and pods, watch the bindings). Both serve metrics and\n"
    "health, and replace plugins or the configuration while pods keep\n"
    "flowing.\n"
    "\n"
    "Which mode: --kubeconfig FILE (or clientConnection.kubeconfig in the\n"
    "configuration, or --context alone, which reads $KUBECONFIG or\n"
    "~/.kube/config) is cluster mode; without them, inside a pod (the\n"
    "KUBERNETES_SERVICE_HOST/_PORT variables and a service-account token\n"
    "in /var/run/secrets/kubernetes.io/serviceaccount, or in\n"
    "$KSCHED_SERVICE_ACCOUNT_DIR)\n"
    "it is cluster mode with that service account; otherwise, or with\n"
    "--embedded, the embedded API.\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE        KubeSchedulerConfiguration (default: built-in)\n"
    "      --kubeconfig FILE    cluster mode: the API server and credentials\n"
    "      --context NAME       the kubeconfig context (default: current)\n"
    "      --embedded           the embedded API even inside a pod\n"
    "      --shadow NAME[=PROFILE][,...]   see Shadow mode below\n"
    "      --leader-elect       cluster mode: schedule only while holding a\n"
    "                           coordination.k8s.io Lease (replicas stand by)\n"
    "      --leader-elect-lease-duration D  (default 15s)\n"
    "      --leader-elect-renew-deadline D  (default 10s)\n"
    "      --leader-elect-retry-period D    (default 2s)\n"
    "      --leader-elect-resource-name NAME       (default ksched)\n"
    "      --leader-elect-resource-namespace NS    (default kube-system)\n"
    "      --leader-elect-identity ID  (default HOSTNAME_RANDOM)\n"
    "  -p, --plugin-dir DIR     search DIR for plugin .so files; repeatable;\n"
    "                           watched for changes\n"
    "      --no-default-plugin-path\n"
    "                           search only the --plugin-dir directories\n"
    "  -l, --listen ADDR:PORT   TCP address (default 127.0.0.1:10259; port 0\n"
    "                           picks a free port; IPv6 as [::1]:PORT)\n"
    "      --allow-remote       allow a non-loopback --listen (needs one of:)\n"
    "      --token-file FILE    bearer tokens (a line each, or token,user,uid\n"
    "                           rows) needed but for /healthz /readyz /livez\n"
    "      --tls-cert-file PEM --tls-private-key-file PEM   serve HTTPS\n"
    "      --socket PATH        listen on a Unix socket (mode 0600) instead\n"
    "      --drain-timeout SECONDS\n"
    "                           on SIGTERM/SIGINT, how long pods waiting at\n"
    "                           Permit may take to finish (default 10)\n"
    "  -j, --parallelism N      worker threads for Filter/Score\n"

    "HTTP limits (README, Limits): --max-connections N (1024),\n"
    "  --health-connections N (32), --request-header-timeout S (10),\n"
    "  --request-body-timeout S (60), --idle-timeout S (60),\n"
    "  --max-unread-output B (1 MiB), --watch-buffer B (4 MiB),\n"
    "  --max-request-body B (1 MiB)\n"
    "  -v, --verbose            log more (repeat for debug)\n"
    "  -h, --help               show this help\n"
    "\n"
    "The address actually listened on is printed on stderr. A reload (SIGHUP,\n"
    "POST /-/reload, or a changed .so in a plugin directory or a changed\n"
    "config file, after 300 ms of quiet) builds a new generation of every\n"
    "plugin; if anything fails the running generation stays.\n"
    "\n"
    "Endpoints: /api/v1/nodes[/NAME], /api/v1/namespaces/NS/pods[/NAME],\n"
    "/api/v1/pods, /api/v1/bindings?watch=true, /healthz, /readyz,\n"
    "/metrics, /debug/plugins, POST /-/reload. In cluster mode the\n"
    "/api/v1 endpoints are read-only views and /readyz answers 503 until\n"
    "every informer has synced.\n"
    "\n"
    "Exit status: 0 after a SIGTERM/SIGINT drain, 1 invalid configuration,\n"
    "plugins, address or credentials, 2 usage, 4 the leader lost its lease\n"
    "(it stops at once, as kube-scheduler does), 130/143 a second\n"
    "SIGINT/SIGTERM while stopping (even with the loop blocked).\n";

/* --help's last part. */
static const char usage_shadow[] =
    "\n"
    "Shadow mode (README, Shadow mode and replay):\n"
    "      --shadow NAME[=PROFILE][,...]\n"
    "                           cluster mode, read-only: for each pod the\n"
    "                           scheduler NAME binds, where the profile NAME\n"
    "                           (or PROFILE) would have put it, compared\n"
    "                           (/metrics ksched_shadow_*, GET /debug/shadow,\n"
    "                           a log line per difference at -v); schedules\n"
    "                           nothing and writes nothing (no Lease either)\n";

/* The rest of --help (one literal may hold at most 4,095 bytes). */
static const char usage_faults[] =
    "\n"
    "Fault isolation (README, Fault isolation): serve runs as a supervisor\n"
    "and a worker; a plugin that crashes or overruns its deadline is\n"
    "quarantined, the worker replaced, a bad hot swap rolled back.\n"
    "      --plugin-deadline [PLUGIN=]DURATION\n"
    "                           per-call deadline (1s for plugins not shipped\n"
    "                           with ksched; none for ksched's own; 0: none)\n"
    "      --quarantine rollback|disable\n"
    "                           disable: run without a faulty plugin that has\n"
    "                           no earlier good version (default: refuse)\n"
    "      --probation DURATION, --probation-cycles N\n"
    "                           when a generation's plugins count as good\n"
    "                           (60s or 1000 cycles)\n"
    "      --no-supervise       one process, no supervisor\n"
    "      --state-file FILE    keep the embedded API's objects in FILE across\n"
    "                           restarts of serve (a worker's survive its\n"
    "                           crash anyway)\n"
    "\n"
    "Delegated authentication (README, Deploying it):\n"
    "      --authentication-kubeconfig FILE, --authorization-kubeconfig FILE\n"
    "                           ask that API server (TokenReview,\n"
    "                           SubjectAccessReview), over HTTPS (self-signed\n"
    "                           without --tls-cert-file); --allow-remote in\n"
    "                           cluster mode without --token-file does so\n"
    "                           with the cluster's own connection\n"
    "\n"
    "Opportunistic batching (README, Performance):\n"
    "      --batching MODE      on (default), off, or verify (reuse nothing;\n"
    "                           compare what batching would reuse with a\n"
    "                           fresh evaluation, log each difference with\n"
    "                           its pod and node; ksched_batch_mismatches_total\n"
    "                           counts them)\n"
    "      --bulk MODE          bulk Filter and Score (plugins' filter_nodes,\n"
    "                           score_nodes): on (default), off (node by\n"
    "                           node), or verify (compare every bulk result\n"
    "                           with the node-by-node one and log each\n"
    "                           difference with its pod, node and plugin)\n";

/* Parse "HOST:PORT", "[V6]:PORT" or "localhost:PORT". */
static int parse_listen(const char *arg, struct sockaddr_storage *ss,
                        int *loopback)
{
    char host[256];
    const char *colon;
    char *end;
    long port;
    size_t hl;
    memset(ss, 0, sizeof *ss);
    if (arg[0] == '[') {
        const char *rb = strchr(arg, ']');
        if (rb == NULL || rb[1] != ':')
            return -1;
        hl = (size_t)(rb - arg - 1);
        if (hl >= sizeof host)
            return -1;
        memcpy(host, arg + 1, hl);
        host[hl] = '\0';
        colon = rb + 1;
    } else {
        colon = strrchr(arg, ':');
        if (colon == NULL)
            return -1;
        hl = (size_t)(colon - arg);
        if (hl >= sizeof host)
            return -1;
        memcpy(host, arg, hl);
        host[hl] = '\0';
    }
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end || port < 0 || port > 65535)
        return -1;
    if (strcmp(host, "localhost") == 0 || host[0] == '\0')
        snprintf(host, sizeof host, "127.0.0.1");
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss) == 0) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        *loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)ss) == 0) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0,
                                                   0, 0, 0, 0, 0xff, 0xff};
        *loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
                    (memcmp(a->sin6_addr.s6_addr, v4mapped, 12) == 0 &&
                     a->sin6_addr.s6_addr[12] == 127);
        return 0;
    }
    return -1;
}

/* Run the loop until every handle is closed, then close it. */
static void loop_finish(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    if (uv_loop_close(loop) != 0)
        ks_log(KS_LOGL_WARN, "event loop closed with handles still open");
}

/* --- options ------------------------------------------------------------- */

/* The HTTP server's limits, one row each: the flag, its range, and where
 * the value goes (scale: the flag's unit in the field's: seconds to ms).
 * watch_buffer is the server's own (srv->watch_buffer_limit). */
typedef struct serve_limit {
    const char *flag;
    long long min, max;
    size_t offset; /* in ks_http_limits_t; SIZE_MAX: the watch buffer */
    int is_ms;     /* an unsigned millisecond field set from seconds */
} serve_limit_t;

#define LIM_SIZE(field) offsetof(ks_http_limits_t, field), 0
#define LIM_MS(field) offsetof(ks_http_limits_t, field), 1
static const serve_limit_t serve_limits[] = {
    {"--max-connections", 1, 1000000, LIM_SIZE(max_conns)},
    {"--health-connections", 1, 10000, LIM_SIZE(reserved_conns)},
    {"--request-header-timeout", 1, 86400, LIM_MS(header_timeout_ms)},
    {"--request-body-timeout", 1, 86400, LIM_MS(body_timeout_ms)},
    {"--idle-timeout", 1, 86400, LIM_MS(idle_timeout_ms)},
    {"--max-unread-output", 4096, 1LL << 34, LIM_SIZE(max_output)},
    {"--watch-buffer", 4096, 1LL << 34, SIZE_MAX, 0},
    {"--max-request-body", 1024, 1LL << 32, LIM_SIZE(body_limit)},
};
#define N_LIMITS (sizeof serve_limits / sizeof serve_limits[0])
#define OPT_LIMIT 1101 /* OPT_LIMIT + row */

/* What the command line says (set by serve_parse, checked by
 * serve_check). Strings point into argv. */
typedef struct serve_opts {
    ks_cli_opts_t o;
    ks_cli_faults_t fo;
    const char *listen_arg, *socket_path, *kubeconfig, *context;
    const char *token_file, *tls_cert, *tls_key, *authn_kc, *authz_kc;
    const char *state_file;
    int allow_remote, embedded, batching, bulk;
    long long lim[N_LIMITS]; /* 0: the server's default */
    double drain;
    ks_server_cluster_t cl; /* leader election: flags; the rest later */
    ks_shadow_names_t shadow; /* --shadow (n 0: not given) */
    struct sockaddr_storage ss; /* the parsed --listen */
} serve_opts_t;

/* The usage error of a bad duration flag. */
static int bad_duration(const char *flag, const char *arg)
{
    return ks_cli_usage_error("serve", "%s takes a positive duration such "
                                       "as 15s or 1m30s, got '%s'",
                              flag, arg);
}

/* One option of serve's own: KS_CLI_CONTINUE, or the exit code. */
static int serve_opt(serve_opts_t *so, int c, char **argv)
{
    static const char *const le_flags[] = {"--leader-elect-lease-duration",
                                           "--leader-elect-renew-deadline",
                                           "--leader-elect-retry-period"};
    int rc;
    if (c >= OPT_LIMIT && c < OPT_LIMIT + (int)N_LIMITS) {
        const serve_limit_t *l = &serve_limits[c - OPT_LIMIT];
        char *end;
        long long v = strtoll(optarg, &end, 10);
        if (*end || end == optarg || v < l->min || v > l->max)
            return ks_cli_usage_error("serve", "%s takes an integer in "
                                               "%lld..%lld, got '%s'",
                                      l->flag, l->min, l->max, optarg);
        so->lim[c - OPT_LIMIT] = v;
        return KS_CLI_CONTINUE;
    }
    switch (c) {
    case 'l': so->listen_arg = optarg; break;
    case 'R': so->allow_remote = 1; break;
    case 'S': so->socket_path = optarg; break;
    case 'T': {
        char *end;
        so->drain = strtod(optarg, &end);
        if (*end || end == optarg || !(so->drain >= 0) || so->drain > 86400)
            return ks_cli_usage_error("serve", "--drain-timeout takes "
                                               "seconds in 0..86400, got "
                                               "'%s'",
                                      optarg);
        break;
    }
    case 'K': so->kubeconfig = optarg; break;
    case 'X': so->context = optarg; break;
    case 'E': so->embedded = 1; break;
    case 'L': so->cl.leader_elect = 1; break;
    case 1001:
    case 1002:
    case 1003: {
        int64_t *dst = c == 1001   ? &so->cl.le.lease_duration_ms
                       : c == 1002 ? &so->cl.le.renew_deadline_ms
                                   : &so->cl.le.retry_period_ms;
        if (ks_go_duration_parse(optarg, dst) != 0 || *dst <= 0)
            return bad_duration(le_flags[c - 1001], optarg);
        break;
    }
    case 1004: so->cl.le.lease_name = optarg; break;
    case 1005: so->cl.le.lease_namespace = optarg; break;
    case 1006: so->cl.le.identity = optarg; break;
    case 1201: case 1202: case 1203: case 1204: case 1205:
        return ks_cli_faults_opt(&so->fo, "serve", c, optarg);
    case 1206: so->state_file = optarg; break;
    case 1301: so->token_file = optarg; break;
    case 1302: so->tls_cert = optarg; break;
    case 1303: so->tls_key = optarg; break;
    case 1304: so->authn_kc = optarg; break;
    case 1305: so->authz_kc = optarg; break;
    case 1501: {
        ks_error_t e = {0};
        if (ks_shadow_names_parse(optarg, &so->shadow, &e) != 0)
            return ks_cli_usage_error("serve", "--shadow: %s", e.msg);
        so->cl.shadow = &so->shadow;
        break;
    }
    case 1401:
        if (ks_cli_parse_mode("serve", "--batching", optarg, &so->batching))
            return KS_EXIT_USAGE;
        break;
    case 1402:
        if (ks_cli_parse_mode("serve", "--bulk", optarg, &so->bulk))
            return KS_EXIT_USAGE;
        break;
    default:
        if ((rc = ks_cli_common_opt(&so->o, c, argv)) != KS_CLI_CONTINUE)
            return rc;
        break;
    }
    return KS_CLI_CONTINUE;
}

/* Parse the command line into so: KS_CLI_CONTINUE, or the exit code. */
static int serve_parse(int argc, char **argv, serve_opts_t *so)
{
    static const struct option opts[] = {
        KS_CLI_OPT_CONFIG,
        KS_CLI_OPT_PLUGIN_PATH,
        {"listen", required_argument, NULL, 'l'},
        {"allow-remote", no_argument, NULL, 'R'},
        {"socket", required_argument, NULL, 'S'},
        {"drain-timeout", required_argument, NULL, 'T'},
        KS_CLI_OPT_PARALLELISM,
        KS_CLI_OPT_VERBOSE,
        {"kubeconfig", required_argument, NULL, 'K'},
        {"context", required_argument, NULL, 'X'},
        {"embedded", no_argument, NULL, 'E'},
        {"leader-elect", no_argument, NULL, 'L'},
        {"shadow", required_argument, NULL, 1501},
        {"leader-elect-lease-duration", required_argument, NULL, 1001},
        {"leader-elect-renew-deadline", required_argument, NULL, 1002},
        {"leader-elect-retry-period", required_argument, NULL, 1003},
        {"leader-elect-resource-name", required_argument, NULL, 1004},
        {"leader-elect-resource-namespace", required_argument, NULL, 1005},
        {"leader-elect-identity", required_argument, NULL, 1006},
        {"max-connections", required_argument, NULL, OPT_LIMIT + 0},
        {"health-connections", required_argument, NULL, OPT_LIMIT + 1},
        {"request-header-timeout", required_argument, NULL, OPT_LIMIT + 2},
        {"request-body-timeout", required_argument, NULL, OPT_LIMIT + 3},
        {"idle-timeout", required_argument, NULL, OPT_LIMIT + 4},
        {"max-unread-output", required_argument, NULL, OPT_LIMIT + 5},
        {"watch-buffer", required_argument, NULL, OPT_LIMIT + 6},
        {"max-request-body", required_argument, NULL, OPT_LIMIT + 7},
        KS_CLI_FAULT_OPTS,
        {"state-file", required_argument, NULL, 1206},
        {"batching", required_argument, NULL, 1401},
        {"bulk", required_argument, NULL, 1402},
        {"token-file", required_argument, NULL, 1301},
        {"tls-cert-file", required_argument, NULL, 1302},
        {"tls-private-key-file", required_argument, NULL, 1303},
        {"authentication-kubeconfig", required_argument, NULL, 1304},
        {"authorization-kubeconfig", required_argument, NULL, 1305},
        KS_CLI_OPT_HELP};
    static char help[sizeof usage + sizeof usage_faults +
                     sizeof usage_shadow];
    int c, rc;
    memset(so, 0, sizeof *so);
    so->batching = KS_BATCHING_ON;
    so->bulk = KS_BULK_ON;
    so->drain = 10;
    snprintf(help, sizeof help, "%s%s%s", usage, usage_faults,
             usage_shadow);
    ks_cli_opts_init(&so->o, "serve", help);
    ks_cli_faults_init(&so->fo);
    while ((c = getopt_long(argc, argv, "+c:p:l:j:vh", opts, NULL)) != -1)
        if ((rc = serve_opt(so, c, argv)) != KS_CLI_CONTINUE)
            return rc;
    return ks_cli_no_operands(&so->o, argc, argv);
}

/* The flags that exclude or need each other, and --listen parsed into
 * so->ss: KS_CLI_CONTINUE, or the exit code. */
static int serve_check(serve_opts_t *so)
{
    int loopback = 1;
    if (so->shadow.n && (so->embedded || so->cl.leader_elect))
        return ks_cli_usage_error("serve", "--shadow needs cluster mode and "
                                           "writes nothing: not with %s",
                                  so->embedded ? "--embedded"
                                               : "--leader-elect");
    if (so->cl.leader_elect && so->embedded)
        return ks_cli_usage_error("serve", "--leader-elect needs cluster "
                                           "mode, not --embedded");
    if (so->embedded && (so->kubeconfig || so->context))
        return ks_cli_usage_error("serve", "--embedded excludes --kubeconfig "
                                           "and --context");
    if ((so->tls_cert == NULL) != (so->tls_key == NULL))
        return ks_cli_usage_error("serve", "--tls-cert-file and "
                                           "--tls-private-key-file go "
                                           "together");
    if (so->tls_cert && so->socket_path)
        return ks_cli_usage_error("serve", "TLS is for --listen, not for "
                                           "--socket (a 0600 Unix socket)");
    /* Cluster mode (--kubeconfig, --context, in a pod) delegates it. */
    if (so->allow_remote && so->token_file == NULL && so->tls_cert == NULL &&
        so->authn_kc == NULL && so->authz_kc == NULL &&
        (so->embedded ||
         (so->kubeconfig == NULL && so->context == NULL &&
          getenv("KUBERNETES_SERVICE_HOST") == NULL)))
        return ks_cli_usage_error("serve", "--allow-remote needs "
                                           "authentication: --token-file "
                                           "FILE, or --tls-cert-file and "
                                           "--tls-private-key-file, or "
                                           "both, or delegated to an API "
                                           "server (cluster mode, or "
                                           "--authentication-kubeconfig)");
    if (so->listen_arg && so->socket_path)
        return ks_cli_usage_error("serve", "--listen and --socket exclude "
                                           "each other");
    if (so->socket_path != NULL)
        return KS_CLI_CONTINUE;
    if (so->listen_arg == NULL)
        so->listen_arg = "127.0.0.1:10259";
    if (parse_listen(so->listen_arg, &so->ss, &loopback) != 0)
        return ks_cli_usage_error("serve", "--listen takes HOST:PORT or "
                                           "[IPV6]:PORT, got '%s'",
                                  so->listen_arg);
    if (!loopback && !so->allow_remote)
        return ks_cli_usage_error("serve", "--listen %s is not a loopback "
                                           "address: add --allow-remote "
                                           "(with --token-file and/or "
                                           "TLS) to listen there",
                                  so->listen_arg);
    return KS_CLI_CONTINUE;
}

/* --- the worker ---------------------------------------------------------- */

/* Hand over to the supervisor (supervisor/supervisor.h); this process is
 * a worker when it returns KS_CLI_CONTINUE. leader_id: the storage for an
 * identity the first worker chose. */
static int serve_supervise(serve_opts_t *so, char *leader_id, size_t len)
{
    char smsg[600];
    ks_supervisor_opts_t sup = {0};
    if (so->fo.no_supervise)
        return KS_CLI_CONTINUE;
    /* Delegated authentication may serve HTTPS (secure.h): no plain-HTTP
     * stand-in then either. */
    sup.stand_in_addr =
        so->socket_path || so->tls_cert || so->authn_kc || so->authz_kc ||
                (so->allow_remote && !so->token_file && !so->embedded)
            ? NULL
            : (const struct sockaddr *)&so->ss;
    if (ks_supervisor_run(&sup, smsg, sizeof smsg) != 0) {
        fprintf(stderr, "ksched serve: %s (or pass --no-supervise)\n", smsg);
        return KS_EXIT_INVALID;
    }
    /* A replacement worker listens where the first one did: so->ss as
     * parsed, at the port the first one picked when the flag said 0. */
    if (so->socket_path == NULL)
        ks_supervisor_worker_address(&so->ss);
    snprintf(leader_id, len, "%s", ks_call_board()->leader_identity);
    if (so->cl.le.identity == NULL && leader_id[0])
        so->cl.le.identity = leader_id;
    return KS_CLI_CONTINUE;
}

/* What the worker holds before the server owns it, released once by
 * serve_release whatever step failed. */
typedef struct serve_res {
    ks_auth_t *auth;
    ks_tls_ctx_t *tls;
    ks_generation_t *gen;
    ks_kube_conn_t *kconn;
    ks_generation_opts_t go;
} serve_res_t;

static void serve_release(serve_res_t *r)
{
    ks_auth_free(r->auth);
    ks_tls_ctx_free(r->tls);
    if (r->gen)
        ks_generation_unref(r->gen);
    ks_kube_conn_free(r->kconn);
    memset(r, 0, sizeof *r);
}

/* The configuration's leaderElection under the flags'; KS_CLI_CONTINUE or
 * the exit code. */
static int serve_leader_opts(serve_opts_t *so, const ks_config_t *cfg)
{
    const ks_leader_election_t *le = &cfg->leader_election;
    ks_error_t e = {0};
    /* --shadow writes nothing, a Lease neither */
    if (!so->cl.leader_elect && !so->embedded && so->shadow.n == 0)
        so->cl.leader_elect = le->leader_elect;
    if (so->cl.le.lease_duration_ms == 0)
        so->cl.le.lease_duration_ms = le->lease_duration_ms;
    if (so->cl.le.renew_deadline_ms == 0)
        so->cl.le.renew_deadline_ms = le->renew_deadline_ms;
    if (so->cl.le.retry_period_ms == 0)
        so->cl.le.retry_period_ms = le->retry_period_ms;
    if (so->cl.le.lease_name == NULL)
        so->cl.le.lease_name = le->resource_name;
    if (so->cl.le.lease_namespace == NULL)
        so->cl.le.lease_namespace = le->resource_namespace;
    if (so->cl.leader_elect && ks_leader_opts_check(&so->cl.le, &e) != 0)
        return ks_cli_usage_error("serve", "%s", e.msg);
    return KS_CLI_CONTINUE;
}

/* Credentials, plugins, configuration and the cluster connection, in the
 * order that fails fastest: KS_CLI_CONTINUE with r filled, or the exit
 * code (the caller releases r). */
static int serve_prepare(serve_opts_t *so, serve_res_t *r)
{
    ks_error_t err = {0};
    const char *kubeconfig = so->kubeconfig;
    int rc;
    if (so->token_file &&
        (r->auth = ks_auth_load(so->token_file, &err)) == NULL)
        goto invalid;
    if (so->tls_cert &&
        (r->tls = ks_tls_ctx_new(so->tls_cert, so->tls_key, &err)) == NULL)
        goto invalid;
    ks_cli_generation_opts(&so->o, &r->go);
    if (ks_generation_build(&r->go, &r->gen, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        /* The supervisor retries this one (the file may be replaced). */
        return err.code == KS_EQUARANTINED ? KS_EXIT_QUARANTINED
                                           : KS_EXIT_INVALID;
    }
    if (!so->embedded && kubeconfig == NULL)
        kubeconfig = r->gen->cfg->client_connection.kubeconfig;
    if ((rc = serve_leader_opts(so, r->gen->cfg)) != KS_CLI_CONTINUE)
        return rc;
    if (!so->embedded && (kubeconfig || so->context)) {
        if (ks_kubeconfig_load(kubeconfig, so->context, &r->kconn, &err))
            goto invalid;
    } else if (!so->embedded) {
        /* KSCHED_SERVICE_ACCOUNT_DIR: where the service account's files
         * are, when not in the standard place (tests, sidecars). */
        rc = ks_kubeconfig_in_cluster(getenv("KSCHED_SERVICE_ACCOUNT_DIR"),
                                      &r->kconn, &err);
        if (rc != 0 && rc != KS_ENOTFOUND) {
            fprintf(stderr, "ksched serve: in-cluster configuration: %s (or "
                            "pass --kubeconfig FILE, or --embedded)\n",
                    err.msg);
            return KS_EXIT_INVALID;
        }
    }
    if (so->shadow.n && r->kconn == NULL) {
        fprintf(stderr, "ksched serve: --shadow needs cluster mode: pass "
                        "--kubeconfig FILE (or run inside a pod)\n");
        return KS_EXIT_USAGE;
    }
    if (so->cl.leader_elect && r->kconn == NULL) {
        fprintf(stderr, "ksched serve: --leader-elect needs cluster mode: "
                        "pass --kubeconfig FILE (or run inside a pod)\n");
        return KS_EXIT_USAGE;
    }
    return KS_CLI_CONTINUE;
invalid:
    fprintf(stderr, "ksched serve: %s\n", err.msg);
    return KS_EXIT_INVALID;
}

/* The HTTP limits the flags set, over the server's defaults. */
static void serve_apply_limits(const serve_opts_t *so, ks_server_t *srv)
{
    ks_http_limits_t hl;
    size_t k;
    ks_http_server_get_limits(srv->http, &hl);
    for (k = 0; k < N_LIMITS; k++) {
        const serve_limit_t *l = &serve_limits[k];
        char *field = (char *)&hl + l->offset;
        if (so->lim[k] == 0)
            continue;
        if (l->offset == SIZE_MAX)
            srv->watch_buffer_limit = (size_t)so->lim[k];
        else if (l->is_ms)
            *(unsigned *)(void *)field = (unsigned)(so->lim[k] * 1000);
        else
            *(size_t *)(void *)field = (size_t)so->lim[k];
    }
    ks_http_server_set_limits(srv->http, &hl);
}

/* Listen where so says; `bound` gets what a client connects to. */
static int serve_listen(const serve_opts_t *so, ks_server_t *srv, char *bound,
                        size_t len, ks_error_t *err)
{
    char addr[100] = "";
    if (so->socket_path) {
        if (ks_http_listen_unix(srv->http, so->socket_path, err) != 0)
            return -1;
        snprintf(bound, len, "unix:%s", so->socket_path);
        return 0;
    }
    if (ks_http_listen_tcp(srv->http, (const struct sockaddr *)&so->ss, addr,
                           sizeof addr, err) != 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        ks_error_set(err, KS_EIO, "%s: %s", so->listen_arg, msg);
        return -1;
    }
    snprintf(bound, len, "%s://%s", srv->tls ? "https" : "http", addr);
    return 0;
}

/* The server from the prepared parts (it owns them from here on), up to
 * listening and ready: 0, or -1 with err. */
static int serve_start(serve_opts_t *so, serve_res_t *r, ks_server_t *srv,
                       uv_loop_t *loop, char *bound, size_t len,
                       ks_error_t *err)
{
    char journal[600] = "";
    ks_faults_opts_t fopts = {so->fo.probation_s, so->fo.probation_cycles};
    ks_server_secure_opts_t sec = {so->authn_kc, so->authz_kc,
                                   so->allow_remote,
                                   so->socket_path ? NULL : so->listen_arg};
    int rc;
    so->cl.conn = r->kconn;
    rc = ks_server_init(srv, loop, &r->go, r->gen, r->kconn ? &so->cl : NULL,
                        err);
    /* The server owns them from here on (ks_server_free). */
    srv->auth = r->auth;
    srv->tls = r->tls;
    memset(r, 0, sizeof *r);
    if (rc != 0)
        return -1;
    /* Delegated authentication and the self-signed certificate. */
    if (ks_server_secure(srv, &sec, err) != 0)
        return -1;
    ks_scheduler_set_batching(srv->sched, so->batching);
    ks_scheduler_set_bulk(srv->sched, so->bulk);
    if (srv->tls)
        ks_http_server_set_tls(srv->http, srv->tls);
    /* The embedded API's objects outlive a worker (the supervisor's
     * directory) or the process (--state-file): journal.h. */
    if (srv->kconn == NULL && so->state_file)
        snprintf(journal, sizeof journal, "%s", so->state_file);
    else if (srv->kconn == NULL && ks_call_board()->keep_dir[0])
        snprintf(journal, sizeof journal, "%s/embedded.journal",
                 ks_call_board()->keep_dir);
    if (journal[0] && ks_journal_open(srv, journal, err) != 0)
        return -1;
    /* Before listening: listening checks the open-file limit against the
     * connection slots. */
    serve_apply_limits(so, srv);
    srv->drain_timeout_s = so->drain;
    if (serve_listen(so, srv, bound, len, err) != 0 ||
        ks_server_start(srv, err) != 0)
        return -1;
    snprintf(srv->listen_addr, sizeof srv->listen_addr, "%s", bound);
    if (ks_faults_start(srv, &fopts) != 0) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return -1;
    }
    ks_supervisor_worker_listening(ks_http_tcp_port(srv->http));
    atomic_store(&ks_call_board()->ready, 1);
    return 0;
}

/* What a started server says on stderr, and the identity a replacement
 * keeps. */
static void serve_announce(const serve_opts_t *so, ks_server_t *srv,
                           const char *bound)
{
    fprintf(stderr, "ksched serve: listening on %s (generation %llu, %zu "
                    "plugins)\n",
            bound,
            (unsigned long long)ks_scheduler_generation(srv->sched)->id,
            ks_scheduler_generation(srv->sched)->reg->n);
    /* The web console (server/console.h), on TCP addresses. */
    if (strncmp(bound, "http", 4) == 0)
        fprintf(stderr, "ksched serve: console at %s/ui%s\n", bound,
                srv->auth ? " (it asks for a token of --token-file)" : "");
    if (srv->kconn) {
        char d[1500];
        fprintf(stderr, "ksched serve: cluster mode: %s\n",
                ks_kube_conn_describe(srv->kconn, d, sizeof d));
    }
    if (srv->leader && ks_call_board_shared())
        snprintf(ks_call_board()->leader_identity,
                 sizeof ks_call_board()->leader_identity, "%s",
                 ks_leader_identity(srv->leader));
    if (so->shadow.n) {
        size_t i;
        fprintf(stderr, "ksched serve: shadow mode, read-only: comparing");
        for (i = 0; i < so->shadow.n; i++)
            fprintf(stderr, "%s %s with profile %s", i ? "," : "",
                    so->shadow.name[i],
                    so->shadow.profile[i][0] ? so->shadow.profile[i]
                                             : so->shadow.name[i]);
        fprintf(stderr, "\n");
    }
    if (srv->leader)
        fprintf(stderr, "ksched serve: leader election: lease %s/%s as %s; "
                        "standing by until it is ours\n",
                so->cl.le.lease_namespace, so->cl.le.lease_name,
                ks_leader_identity(srv->leader));
}

static int serve_cmd(int argc, char **argv, serve_opts_t *so)
{
    serve_res_t res;
    ks_error_t err = {0};
    ks_server_t *srv;
    uv_loop_t loop;
    char bound[128] = "", leader_id[256] = "";
    int rc;

    if ((rc = serve_parse(argc, argv, so)) != KS_CLI_CONTINUE ||
        (rc = serve_check(so)) != KS_CLI_CONTINUE)
        return rc;
    ks_log_set_level(KS_LOGL_WARN + so->o.verbose);
    if ((rc = ks_cli_faults_apply(&so->fo, "serve")) != KS_CLI_CONTINUE ||
        (rc = serve_supervise(so, leader_id, sizeof leader_id)) !=
            KS_CLI_CONTINUE)
        return rc;
    /* A crash inside a plugin call names the plugin (call_board.h). */
    ks_call_board_crash_handlers(0);
    signal(SIGPIPE, SIG_IGN);
    /* Before any thread starts (plugins' worker pool, libuv's): the
     * signals then reach only the signal thread, which acts on them even
     * when the loop is blocked. */
    if (ks_signals_block("ksched serve", &err) != 0) {
        fprintf(stderr, "ksched serve: %s\n", err.msg);
        return KS_EXIT_INVALID;
    }
    memset(&res, 0, sizeof res);
    if ((rc = serve_prepare(so, &res)) != KS_CLI_CONTINUE) {
        serve_release(&res);
        return rc;
    }
    srv = calloc(1, sizeof *srv);
    if (srv == NULL || uv_loop_init(&loop) != 0) {
        fprintf(stderr, "ksched serve: out of memory\n");
        free(srv);
        serve_release(&res);
        return KS_EXIT_INVALID;
    }
    if (serve_start(so, &res, srv, &loop, bound, sizeof bound, &err) != 0) {
        fprintf(stderr, "ksched serve: %s\n", err.msg);
        serve_release(&res); /* what the server did not take */
        ks_server_stop(srv);
        loop_finish(&loop);
        ks_server_free(srv);
        free(srv);
        return KS_EXIT_INVALID;
    }
    serve_announce(so, srv, bound);
    uv_run(&loop, UV_RUN_DEFAULT);
    loop_finish(&loop);
    rc = srv->lost_lease ? KS_EXIT_LOST_LEASE : KS_EXIT_OK;
    ks_server_free(srv);
    free(srv);
    return rc;
}

int ks_cli_serve(int argc, char **argv)
{
    serve_opts_t so;
    int rc;
    memset(&so, 0, sizeof so);
    rc = serve_cmd(argc, argv, &so);
    ks_shadow_names_free(&so.shadow); /* parsed strings, whatever the path */
    return rc;
}
