/*
 * Fault-isolation options shared by `serve` and `schedule`: per-plugin
 * call deadlines, the quarantine policy and, for serve, supervision.
 *
 *   --plugin-deadline [NAME=]DURATION  (repeatable) a call deadline for
 *        plugin NAME, or without NAME for every plugin not shipped with
 *        ksched (default 1s; 0 turns deadlines off). ksched's own plugins
 *        have none unless named.
 *   --quarantine rollback|disable   what a restarted worker does with a
 *        faulty plugin version it cannot roll back (serve)
 *   --probation DURATION, --probation-cycles N   when a generation's
 *        plugin versions become known-good (serve; 60s, 1000)
 *   --no-supervise   run serve in one process (no supervisor)
 * Main thread only.
 */
#ifndef KS_CLI_FAULTS_H
#define KS_CLI_FAULTS_H

#include <stdint.h>

#include "cli.h"

typedef struct ks_cli_faults {
    int no_supervise;
    int quarantine_disable;
    double probation_s;
    uint64_t probation_cycles;
    uint32_t default_ms; /* out-of-tree plugins */
    const char *names[64]; /* point into name_buf */
    char name_buf[64][64];
    uint32_t ms[64];
    unsigned n;
} ks_cli_faults_t;

/* Option codes 1201..1205. `schedule` takes --plugin-deadline only
 * (KS_CLI_FAULT_OPT_DEADLINE); `serve` takes them all. */
#define KS_CLI_FAULT_OPT_DEADLINE                                             \
    {"plugin-deadline", required_argument, NULL, 1201}
#define KS_CLI_FAULT_OPTS                                                     \
    KS_CLI_FAULT_OPT_DEADLINE,                                                \
    {"quarantine", required_argument, NULL, 1202},                            \
    {"probation", required_argument, NULL, 1203},                             \
    {"probation-cycles", required_argument, NULL, 1204},                      \
    {"no-supervise", no_argument, NULL, 1205}
/* The --help lines of the options, for the commands' usage texts. */
#define KS_CLI_FAULT_HELP_DEADLINE                                            \
    "      --plugin-deadline [NAME=]D\n"                                      \
    "                           a call deadline for plugin NAME, or without\n" \
    "                           NAME for every plugin not shipped with\n"      \
    "                           ksched (default 1s; 0: none); repeatable\n"
#define KS_CLI_FAULT_HELP_SERVE                                               \
    KS_CLI_FAULT_HELP_DEADLINE                                                \
    "      --quarantine rollback|disable\n"                                   \
    "                           a crashed or overrun plugin version that has\n"\
    "                           no earlier good version: refuse to start\n"   \
    "                           (rollback, the default) or leave it out\n"    \
    "      --probation D        a generation's plugins become known-good\n"   \
    "                           after D (default 60s) ...\n"                  \
    "      --probation-cycles N ... or N scheduling cycles (default 1000)\n" \
    "      --no-supervise       one process: no supervisor, no restarts\n"
#define KS_CLI_FAULT_OPT_FIRST 1201
#define KS_CLI_FAULT_OPT_LAST 1205

void ks_cli_faults_init(ks_cli_faults_t *f);
/* One option (c in FIRST..LAST). KS_CLI_CONTINUE, or 2 (printed). */
int ks_cli_faults_opt(ks_cli_faults_t *f, const char *cmd, int c,
                      const char *arg);
/* Apply the deadlines and the policy (before any generation is built).
 * KS_CLI_CONTINUE, or 1 out of memory (printed). */
int ks_cli_faults_apply(const ks_cli_faults_t *f, const char *cmd);

#endif
