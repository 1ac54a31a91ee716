/* ksched serve: options, listening, and the loop. */
#include "cli.h"
#include "cli_faults.h"

#include <arpa/inet.h>
#include <signal.h>
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

int ks_cli_serve(int argc, char **argv)
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
        {"leader-elect-lease-duration", required_argument, NULL, 1001},
        {"leader-elect-renew-deadline", required_argument, NULL, 1002},
        {"leader-elect-retry-period", required_argument, NULL, 1003},
        {"leader-elect-resource-name", required_argument, NULL, 1004},
        {"leader-elect-resource-namespace", required_argument, NULL, 1005},
        {"leader-elect-identity", required_argument, NULL, 1006},
        {"max-connections", required_argument, NULL, 1101},
        {"health-connections", required_argument, NULL, 1102},
        {"request-header-timeout", required_argument, NULL, 1103},
        {"request-body-timeout", required_argument, NULL, 1104},
        {"idle-timeout", required_argument, NULL, 1105},
        {"max-unread-output", required_argument, NULL, 1106},
        {"watch-buffer", required_argument, NULL, 1107},
        {"max-request-body", required_argument, NULL, 1108},
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
    /* The HTTP server's limits (0: its default; see http.h). */
    long long lim[8] = {0};
    ks_cli_opts_t o;
    const char *listen_arg = NULL, *socket_path = NULL;
    const char *kubeconfig = NULL, *context = NULL;
    const char *token_file = NULL, *tls_cert = NULL, *tls_key = NULL;
    const char *authn_kc = NULL, *authz_kc = NULL;
    ks_auth_t *auth = NULL;
    ks_tls_ctx_t *tls = NULL;
    int allow_remote = 0, c, rc, loopback = 1;
    int embedded = 0, batching = KS_BATCHING_ON, bulk = KS_BULK_ON;
    ks_kube_conn_t *kconn = NULL;
    ks_server_cluster_t cl;
    const char *dur_flag = NULL, *dur_arg = NULL;
    double drain = 10;
    struct sockaddr_storage ss;
    ks_generation_opts_t go;
    ks_generation_t *gen = NULL;
    ks_error_t err = {0};
    ks_server_t *srv;
    uv_loop_t loop;
    char bound[128] = "";
    ks_cli_faults_t fo;
    char journal[600], leader_id[256];
    static char help[sizeof usage + sizeof usage_faults];
    const char *state_file = NULL;

    /* Unset (0 / NULL) until a flag says; the configuration's
     * leaderElection fills the rest. */
    memset(&cl, 0, sizeof cl);
    snprintf(help, sizeof help, "%s%s", usage, usage_faults);
    ks_cli_opts_init(&o, "serve", help);
    ks_cli_faults_init(&fo);
    while ((c = getopt_long(argc, argv, "+c:p:l:j:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'l': listen_arg = optarg; break;
        case 'R': allow_remote = 1; break;
        case 'S': socket_path = optarg; break;
        case 'T': {
            char *end;
            drain = strtod(optarg, &end);
            if (*end || end == optarg || !(drain >= 0) || drain > 86400)
                return ks_cli_usage_error("serve", "--drain-timeout takes "
                                                   "seconds in 0..86400, got "
                                                   "'%s'",
                                          optarg);
            break;
        }
        case 'K': kubeconfig = optarg; break;
        case 'X': context = optarg; break;
        case 'E': embedded = 1; break;
        case 'L': cl.leader_elect = 1; break;
        case 1101: case 1102: case 1103: case 1104:
        case 1105: case 1106: case 1107: case 1108: {
            static const struct {
                const char *flag;
                long long min, max;
            } L[8] = {{"--max-connections", 1, 1000000},
                      {"--health-connections", 1, 10000},
                      {"--request-header-timeout", 1, 86400},
                      {"--request-body-timeout", 1, 86400},
                      {"--idle-timeout", 1, 86400},
                      {"--max-unread-output", 4096, 1LL << 34},
                      {"--watch-buffer", 4096, 1LL << 34},
                      {"--max-request-body", 1024, 1LL << 32}};
            int k = c - 1101;
            char *end;
            long long v = strtoll(optarg, &end, 10);
            if (*end || end == optarg || v < L[k].min || v > L[k].max)
                return ks_cli_usage_error("serve", "%s takes an integer in "
                                                   "%lld..%lld, got '%s'",
                                          L[k].flag, L[k].min, L[k].max,
                                          optarg);
            lim[k] = v;
            break;
        }
        case 1001:
        case 1002:
        case 1003: {
            int64_t *dst = c == 1001   ? &cl.le.lease_duration_ms
                           : c == 1002 ? &cl.le.renew_deadline_ms
                                       : &cl.le.retry_period_ms;
            if (ks_go_duration_parse(optarg, dst) != 0 || *dst <= 0) {
                dur_flag = c == 1001   ? "--leader-elect-lease-duration"
                           : c == 1002 ? "--leader-elect-renew-deadline"
                                       : "--leader-elect-retry-period";
                dur_arg = optarg;
            }
            break;
        }
        case 1201: case 1202: case 1203: case 1204: case 1205:
            if ((rc = ks_cli_faults_opt(&fo, "serve", c, optarg)) !=
                KS_CLI_CONTINUE)
                return rc;
            break;
        case 1301: token_file = optarg; break;
        case 1302: tls_cert = optarg; break;
        case 1303: tls_key = optarg; break;
        case 1304: authn_kc = optarg; break;
        case 1305: authz_kc = optarg; break;
        case 1206: state_file = optarg; break;
        case 1401:
            if (ks_cli_parse_mode("serve", "--batching", optarg, &batching) !=
                0)
                return KS_EXIT_USAGE;
            break;
        case 1402:
            if (ks_cli_parse_mode("serve", "--bulk", optarg, &bulk) != 0)
                return KS_EXIT_USAGE;
            break;
        case 1004: cl.le.lease_name = optarg; break;
        case 1005: cl.le.lease_namespace = optarg; break;
        case 1006: cl.le.identity = optarg; break;
        default:
            if ((rc = ks_cli_common_opt(&o, c, argv)) != KS_CLI_CONTINUE)
                return rc;
            break;
        }
    }
    if ((rc = ks_cli_no_operands(&o, argc, argv)) != KS_CLI_CONTINUE)
        return rc;
    if (dur_flag)
        return ks_cli_usage_error("serve", "%s takes a positive duration such "
                                           "as 15s or 1m30s, got '%s'",
                                  dur_flag, dur_arg);
    if (cl.leader_elect && embedded)
        return ks_cli_usage_error("serve", "--leader-elect needs cluster "
                                           "mode, not --embedded");
    if (embedded && (kubeconfig || context))
        return ks_cli_usage_error("serve", "--embedded excludes --kubeconfig "
                                           "and --context");
    if ((tls_cert == NULL) != (tls_key == NULL))
        return ks_cli_usage_error("serve", "--tls-cert-file and "
                                           "--tls-private-key-file go "
                                           "together");
    if (tls_cert && socket_path)
        return ks_cli_usage_error("serve", "TLS is for --listen, not for "
                                           "--socket (a 0600 Unix socket)");
    /* Cluster mode (--kubeconfig, --context, in a pod) delegates it. */
    if (allow_remote && token_file == NULL && tls_cert == NULL &&
        authn_kc == NULL && authz_kc == NULL &&
        (embedded || (kubeconfig == NULL && context == NULL &&
                      getenv("KUBERNETES_SERVICE_HOST") == NULL)))
        return ks_cli_usage_error("serve", "--allow-remote needs "
                                           "authentication: --token-file "
                                           "FILE, or --tls-cert-file and "
                                           "--tls-private-key-file, or "
                                           "both, or delegated to an API "
                                           "server (cluster mode, or "
                                           "--authentication-kubeconfig)");
    if (listen_arg && socket_path)
        return ks_cli_usage_error("serve", "--listen and --socket exclude "
                                           "each other");
    if (socket_path == NULL) {
        if (listen_arg == NULL)
            listen_arg = "127.0.0.1:10259";
        if (parse_listen(listen_arg, &ss, &loopback) != 0)
            return ks_cli_usage_error("serve", "--listen takes HOST:PORT or "
                                               "[IPV6]:PORT, got '%s'",
                                      listen_arg);
        if (!loopback && !allow_remote)
            return ks_cli_usage_error("serve", "--listen %s is not a loopback "
                                               "address: add --allow-remote "
                                               "(with --token-file and/or "
                                               "TLS) to listen there",
                                      listen_arg);
    }
    ks_log_set_level(KS_LOGL_WARN + o.verbose);
    if ((rc = ks_cli_faults_apply(&fo, "serve")) != KS_CLI_CONTINUE)
        return rc;
    if (!fo.no_supervise) {
        /* From here on this is the worker (supervisor/supervisor.h). */
        char smsg[600];
        ks_supervisor_opts_t so = {0};
        /* Delegated authentication may serve HTTPS (secure.h): no
         * plain-HTTP stand-in then either. */
        so.stand_in_addr = socket_path || tls_cert || authn_kc || authz_kc ||
                                   (allow_remote && !token_file && !embedded)
                               ? NULL
                               : (const struct sockaddr *)&ss;
        if (ks_supervisor_run(&so, smsg, sizeof smsg) != 0) {
            fprintf(stderr, "ksched serve: %s (or pass --no-supervise)\n",
                    smsg);
            return KS_EXIT_INVALID;
        }
        /* A replacement worker listens where the first one did: `ss` as
         * parsed above, at the port the first one picked when the flag
         * said 0. */
        if (socket_path == NULL)
            ks_supervisor_worker_address(&ss);
        snprintf(leader_id, sizeof leader_id, "%s",
                 ks_call_board()->leader_identity);
        if (cl.le.identity == NULL && leader_id[0])
            cl.le.identity = leader_id;
    }
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

    /* Credentials before the plugins: a bad file fails fast. */
    if (token_file && (auth = ks_auth_load(token_file, &err)) == NULL) {
        fprintf(stderr, "ksched serve: %s\n", err.msg);
        return KS_EXIT_INVALID;
    }
    if (tls_cert &&
        (tls = ks_tls_ctx_new(tls_cert, tls_key, &err)) == NULL) {
        fprintf(stderr, "ksched serve: %s\n", err.msg);
        ks_auth_free(auth);
        return KS_EXIT_INVALID;
    }

    ks_cli_generation_opts(&o, &go);
    if (ks_generation_build(&go, &gen, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        ks_auth_free(auth);
        ks_tls_ctx_free(tls);
        /* The supervisor retries this one (the file may be replaced). */
        return err.code == KS_EQUARANTINED ? KS_EXIT_QUARANTINED
                                           : KS_EXIT_INVALID;
    }
    if (!embedded && kubeconfig == NULL)
        kubeconfig = gen->cfg->client_connection.kubeconfig;
    {
        /* Flags override the configuration's leaderElection. */
        const ks_leader_election_t *le = &gen->cfg->leader_election;
        ks_error_t e = {0};
        if (!cl.leader_elect && !embedded)
            cl.leader_elect = le->leader_elect;
        if (cl.le.lease_duration_ms == 0)
            cl.le.lease_duration_ms = le->lease_duration_ms;
        if (cl.le.renew_deadline_ms == 0)
            cl.le.renew_deadline_ms = le->renew_deadline_ms;
        if (cl.le.retry_period_ms == 0)
            cl.le.retry_period_ms = le->retry_period_ms;
        if (cl.le.lease_name == NULL)
            cl.le.lease_name = le->resource_name;
        if (cl.le.lease_namespace == NULL)
            cl.le.lease_namespace = le->resource_namespace;
        if (cl.leader_elect && ks_leader_opts_check(&cl.le, &e) != 0) {
            ks_generation_unref(gen);
            ks_auth_free(auth);
            ks_tls_ctx_free(tls);
            return ks_cli_usage_error("serve", "%s", e.msg);
        }
    }
    if (!embedded && (kubeconfig || context)) {
        if (ks_kubeconfig_load(kubeconfig, context, &kconn, &err) != 0) {
            fprintf(stderr, "ksched serve: %s\n", err.msg);
            ks_generation_unref(gen);
            ks_auth_free(auth);
            ks_tls_ctx_free(tls);
            return KS_EXIT_INVALID;
        }
    } else if (!embedded) {
        /* KSCHED_SERVICE_ACCOUNT_DIR: where the service account's files
         * are, when not in the standard place (tests, sidecars). */
        rc = ks_kubeconfig_in_cluster(getenv("KSCHED_SERVICE_ACCOUNT_DIR"),
                                          &kconn, &err);
        if (rc != 0 && rc != KS_ENOTFOUND) {
            fprintf(stderr, "ksched serve: in-cluster configuration: %s (or "
                            "pass --kubeconfig FILE, or --embedded)\n",
                    err.msg);
            ks_generation_unref(gen);
            ks_auth_free(auth);
            ks_tls_ctx_free(tls);
            return KS_EXIT_INVALID;
        }
        err.code = 0;
        err.msg[0] = '\0';
    }
    srv = calloc(1, sizeof *srv);
    if (srv == NULL || uv_loop_init(&loop) != 0) {
        fprintf(stderr, "ksched serve: out of memory\n");
        free(srv);
        ks_generation_unref(gen);
        ks_auth_free(auth);
        ks_tls_ctx_free(tls);
        ks_kube_conn_free(kconn);
        return KS_EXIT_INVALID;
    }
    if (cl.leader_elect && kconn == NULL) {
        fprintf(stderr, "ksched serve: --leader-elect needs cluster mode: "
                        "pass --kubeconfig FILE (or run inside a pod)\n");
        free(srv);
        uv_loop_close(&loop);
        ks_generation_unref(gen);
        ks_auth_free(auth);
        ks_tls_ctx_free(tls);
        return KS_EXIT_USAGE;
    }
    cl.conn = kconn;
    rc = ks_server_init(srv, &loop, &go, gen, kconn ? &cl : NULL, &err);
    /* The server owns them from here on (ks_server_free). */
    srv->auth = auth;
    srv->tls = tls;
    auth = NULL;
    tls = NULL;
    if (rc != 0)
        goto fail;
    {
        /* Delegated authentication and the self-signed certificate. */
        ks_server_secure_opts_t sec = {authn_kc, authz_kc, allow_remote,
                                       socket_path ? NULL : listen_arg};
        if (ks_server_secure(srv, &sec, &err) != 0)
            goto fail;
    }
    ks_scheduler_set_batching(srv->sched, batching);
    ks_scheduler_set_bulk(srv->sched, bulk);
    if (srv->tls)
        ks_http_server_set_tls(srv->http, srv->tls);
    /* The embedded API's objects outlive a worker (the supervisor's
     * directory) or the process (--state-file): journal.h. */
    journal[0] = '\0';
    if (kconn == NULL && state_file)
        snprintf(journal, sizeof journal, "%s", state_file);
    else if (kconn == NULL && ks_call_board()->keep_dir[0])
        snprintf(journal, sizeof journal, "%s/embedded.journal",
                 ks_call_board()->keep_dir);
    if (journal[0] && ks_journal_open(srv, journal, &err) != 0)
        goto fail;
    {
        /* Before listening: listening checks the open-file limit against
         * the connection slots. */
        ks_http_limits_t hl;
        ks_http_server_get_limits(srv->http, &hl);
        if (lim[0]) hl.max_conns = (size_t)lim[0];
        if (lim[1]) hl.reserved_conns = (size_t)lim[1];
        if (lim[2]) hl.header_timeout_ms = (unsigned)(lim[2] * 1000);
        if (lim[3]) hl.body_timeout_ms = (unsigned)(lim[3] * 1000);
        if (lim[4]) hl.idle_timeout_ms = (unsigned)(lim[4] * 1000);
        if (lim[5]) hl.max_output = (size_t)lim[5];
        if (lim[7]) hl.body_limit = (size_t)lim[7];
        ks_http_server_set_limits(srv->http, &hl);
        srv->watch_buffer_limit = (size_t)lim[6];
    }
    srv->drain_timeout_s = drain;
    if (socket_path) {
        if (ks_http_listen_unix(srv->http, socket_path, &err) != 0)
            goto fail;
        snprintf(bound, sizeof bound, "unix:%s", socket_path);
    } else {
        char addr[100] = "";
        if (ks_http_listen_tcp(srv->http, (const struct sockaddr *)&ss, addr,
                               sizeof addr, &err) != 0) {
            char msg[sizeof err.msg];
            snprintf(msg, sizeof msg, "%s", err.msg);
            ks_error_set(&err, KS_EIO, "%s: %s", listen_arg, msg);
            goto fail;
        }
        snprintf(bound, sizeof bound, "%s://%s", srv->tls ? "https" : "http",
                 addr);
    }
    if (ks_server_start(srv, &err) != 0)
        goto fail;
    snprintf(srv->listen_addr, sizeof srv->listen_addr, "%s", bound);
    {
        ks_faults_opts_t fopts = {fo.probation_s, fo.probation_cycles};
        ks_call_board_t *board = ks_call_board();
        if (ks_faults_start(srv, &fopts) != 0) {
            ks_error_set(&err, KS_ENOMEM, "out of memory");
            goto fail;
        }
        ks_supervisor_worker_listening(ks_http_tcp_port(srv->http));
        atomic_store(&board->ready, 1);
    }
    fprintf(stderr, "ksched serve: listening on %s (generation %llu, %zu "
                    "plugins)\n",
            bound,
            (unsigned long long)ks_scheduler_generation(srv->sched)->id,
            ks_scheduler_generation(srv->sched)->reg->n);
    if (srv->kconn) {
        char d[1500];
        fprintf(stderr, "ksched serve: cluster mode: %s\n",
                ks_kube_conn_describe(srv->kconn, d, sizeof d));
    }
    if (srv->leader && ks_call_board_shared())
        snprintf(ks_call_board()->leader_identity,
                 sizeof ks_call_board()->leader_identity, "%s",
                 ks_leader_identity(srv->leader));
    if (srv->leader)
        fprintf(stderr, "ksched serve: leader election: lease %s/%s as %s; "
                        "standing by until it is ours\n",
                cl.le.lease_namespace, cl.le.lease_name,
                ks_leader_identity(srv->leader));
    uv_run(&loop, UV_RUN_DEFAULT);
    loop_finish(&loop);
    {
        int lost = srv->lost_lease;
        ks_server_free(srv);
        free(srv);
        return lost ? KS_EXIT_LOST_LEASE : KS_EXIT_OK;
    }

fail:
    fprintf(stderr, "ksched serve: %s\n", err.msg);
    ks_server_stop(srv);
    loop_finish(&loop);
    ks_server_free(srv);
    free(srv);
    return KS_EXIT_INVALID;
}
