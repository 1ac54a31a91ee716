/*
 * The ksched subcommands. Each takes (argc, argv) with argv[0] the
 * subcommand's name and returns the process exit code:
 *   0  success
 *   1  invalid input (config, plugins, cluster file) — the problems are
 *      printed on stderr
 *   2  usage error (unknown option, missing argument)
 *   3  `schedule` only: the run completed but some pods could not be placed
 *   4  `serve --leader-elect` only: the leader lost its Lease
 *   5  `schedule` only: a plugin crashed (a signal or abort() inside a
 *      plugin call); one line on stderr names the plugin, its version and
 *      file, the signal, the extension point and the pod
 *   6  `schedule` only: a plugin call overran its deadline
 *      (--plugin-deadline); one line on stderr names the plugin, its
 *      version and file, the deadline, the extension point and the pod
 *   (`serve` never exits 5 or 6: its supervisor replaces the worker.)
 *   7  `serve`'s worker only: a plugin version is quarantined and has no
 *      earlier good version to roll back to; its supervisor retries with
 *      backoff (and answers 503 with the reason meanwhile)
 * Main thread only (getopt's state is global).
 */
#ifndef KS_CLI_H
#define KS_CLI_H

#include <getopt.h>

#define KS_EXIT_OK 0
#define KS_EXIT_INVALID 1
#define KS_EXIT_USAGE 2
#define KS_EXIT_UNPLACED 3
#define KS_EXIT_LOST_LEASE 4
#define KS_EXIT_PLUGIN_CRASH 5
#define KS_EXIT_PLUGIN_DEADLINE 6
#define KS_EXIT_QUARANTINED 7
#define KS_EXIT_BATCH_MISMATCH 8 /* schedule --batching verify */

int ks_cli_validate(int argc, char **argv);
int ks_cli_plugins(int argc, char **argv);
int ks_cli_schedule(int argc, char **argv);
/* A long-running scheduler (server/server.h) with a Kubernetes-shaped HTTP
 * API, or scheduling a real cluster's pods; metrics and hot reload. 0
 * after a clean SIGTERM/SIGINT drain. */
int ks_cli_serve(int argc, char **argv);
/* Run conformance scenarios (conformance/) and compare every decision
 * with the expected file beside each; prints "PASS name" / "FAIL name"
 * (one line per mismatch) and "N passed, N failed". 1 when any fails or
 * none was found. */
int ks_cli_conformance(int argc, char **argv);

/* The options several subcommands share, parsed by ks_cli_common_opt.
 * A command's getopt_long table lists the shared options it takes with
 * the KS_CLI_OPT_* entries below (so that their codes are the ones
 * ks_cli_common_opt handles), then its own, then KS_CLI_OPT_HELP. The
 * meaning of -v is the command's (schedule and serve log more,
 * conformance prints what it got). */
typedef struct ks_cli_opts {
    const char *cmd;             /* "schedule": names the command in messages */
    const char *usage;           /* printed by --help */
    const char *plugin_dirs[32]; /* -p/--plugin-dir, in the order given */
    unsigned n_plugin_dirs;
    int no_default_path;         /* --no-default-plugin-path */
    const char *config;          /* -c/--config; NULL: the built-in default */
    int parallelism;             /* -j/--parallelism; 0: the config's */
    int verbose;                 /* -v/--verbose, counted */
} ks_cli_opts_t;

#define KS_CLI_OPT_CONFIG {"config", required_argument, NULL, 'c'}
#define KS_CLI_OPT_PLUGIN_PATH                                                \
    {"plugin-dir", required_argument, NULL, 'p'},                             \
    {"no-default-plugin-path", no_argument, NULL, 'N'}
#define KS_CLI_OPT_PARALLELISM {"parallelism", required_argument, NULL, 'j'}
#define KS_CLI_OPT_VERBOSE {"verbose", no_argument, NULL, 'v'}
#define KS_CLI_OPT_HELP {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}

/* ks_cli_common_opt's answer when parsing goes on. */
#define KS_CLI_CONTINUE (-1)

/* Clear *o and reset getopt (optind 1, no getopt messages) before a
 * command's getopt_long loop. */
void ks_cli_opts_init(ks_cli_opts_t *o, const char *cmd, const char *usage);
/* For the `default:` branch of a command's getopt loop: the shared
 * options (-c, -p, --no-default-plugin-path, -j, -v, -h) and an unknown
 * or incomplete option. Returns KS_CLI_CONTINUE, or the exit code the
 * command returns at once: 0 after --help, 2 on a usage error (printed). */
int ks_cli_common_opt(ks_cli_opts_t *o, int c, char **argv);
/* After the loop of a command that takes no operands: KS_CLI_CONTINUE,
 * or 2 (printed) naming the first operand. */
int ks_cli_no_operands(const ks_cli_opts_t *o, int argc, char **argv);
/* Fill *go (cleared first) with what the shared options say: the
 * configuration, the plugin path and the parallelism. */
struct ks_generation_opts;
void ks_cli_generation_opts(const ks_cli_opts_t *o,
                            struct ks_generation_opts *go);
/* Parse `arg` as an integer in [lo, hi] for option `opt` of `cmd`. 0 on
 * success; otherwise prints the usage error and returns KS_EXIT_USAGE. */
int ks_cli_parse_int(const char *cmd, const char *opt, const char *arg,
                     long lo, long hi, int *out);
/* Parse `arg` of --batching or --bulk (`opt`): on, off or verify, into
 * *out (KS_BATCHING_* / KS_BULK_*, the same values). 0 on success;
 * otherwise prints the usage error and returns KS_EXIT_USAGE. */
int ks_cli_parse_mode(const char *cmd, const char *opt, const char *arg,
                      int *out);
/* `s` as a JSON string (quoted, with escapes) on stdout: the -o json and
 * -o yaml writers' (a JSON string is valid YAML). */
void ks_cli_print_json_str(const char *s);

/* Print "ksched <cmd>: <msg>\nTry 'ksched <cmd> --help'." and return 2. */
int ks_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
