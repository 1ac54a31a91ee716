/*
 * `ksched schedule --replay`'s report (cli_schedule.c loads the snapshot
 * and hands the bound pods to a shadow/replay.h replay): replays every
 * pod, prints the summary and the differences in the chosen format, and
 * with --explain NS/POD that pod's whole evaluation. Private to host/cli.
 * Main thread.
 */
#ifndef KS_CLI_REPLAY_H
#define KS_CLI_REPLAY_H

#include <stddef.h>

#include "shadow/replay.h"

typedef struct ks_cli_replay_opts {
    const char *output;                   /* table, yaml or json */
    const char *explain_ns, *explain_name; /* NULL: no --explain */
    size_t n_others;  /* bound pods no profile schedules (not replayed) */
    size_t n_pending; /* pending pods in the snapshot (not replayed) */
} ks_cli_replay_opts_t;

/* Run the replay and print. KS_EXIT_OK when every pod lands on the same
 * node or a tied one, KS_EXIT_UNPLACED (3) when any would go elsewhere
 * (compare.h's ks_shadow_result_differs), KS_EXIT_INVALID on an error
 * (printed). */
int ks_cli_replay_report(ks_replay_t *rp, const ks_cli_replay_opts_t *o);

#endif
