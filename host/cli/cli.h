/*
 * The ksched subcommands. Each takes (argc, argv) with argv[0] the
 * subcommand's name and returns the process exit code:
 *   0  success
 *   1  invalid input (config, plugins, cluster file) — the problems are
 *      printed on stderr
 *   2  usage error (unknown option, missing argument)
 *   3  `schedule` only: the run completed but some pods could not be placed
 *   4  `serve --leader-elect` only: the leader lost its Lease
 * Main thread only (getopt's state is global).
 */
#ifndef KS_CLI_H
#define KS_CLI_H

#define KS_EXIT_OK 0
#define KS_EXIT_INVALID 1
#define KS_EXIT_USAGE 2
#define KS_EXIT_UNPLACED 3
#define KS_EXIT_LOST_LEASE 4

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

/* Shared option state for --plugin-dir (repeatable) and
 * --no-default-plugin-path. */
typedef struct ks_cli_plugin_opts {
    const char *dirs[32];
    unsigned n_dirs;
    int no_default_path;
} ks_cli_plugin_opts_t;

/* Add a --plugin-dir; returns -1 (and prints) when there are too many. */
int ks_cli_add_plugin_dir(ks_cli_plugin_opts_t *o, const char *dir);
/* The options every subcommand shares, for the `default:` branch of its
 * getopt loop: -p/--plugin-dir, --no-default-plugin-path, -h/--help, and
 * an unknown option. Sets *done (and returns the exit code) when the
 * command must stop: after --help, or on a usage error. */
int ks_cli_common_opt(const char *cmd, int c, const char *usage, char **argv,
                      ks_cli_plugin_opts_t *po, int *done);
/* Parse `arg` as an integer in [lo, hi] for option `opt` of `cmd`. 0 on
 * success; otherwise prints the usage error and returns KS_EXIT_USAGE. */
int ks_cli_parse_int(const char *cmd, const char *opt, const char *arg,
                     long lo, long hi, int *out);
/* Print "ksched <cmd>: <msg>\nTry 'ksched <cmd> --help'." and return 2. */
int ks_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
