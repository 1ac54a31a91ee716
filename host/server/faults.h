/*
 * The worker's side of fault isolation (supervisor/supervisor.h): what
 * `ksched serve` shows of the call board, and the probation that makes a
 * generation's plugin versions "known good".
 *
 * Probation: once the generation that schedules now has run for
 * `probation_s` seconds or `probation_cycles` scheduling cycles without
 * the worker dying, each of its plugin files is copied into the
 * supervisor's keep directory and recorded on the board as a good version:
 * what a later fault of a newer version rolls back to. When a reload
 * begins, the versions serving then are kept the same way whatever their
 * probation (ks_faults_note_swap): a faulty version that reload brings in
 * rolls back to them first. Without a supervisor (no keep directory)
 * nothing is copied.
 *
 * Threads: the loop thread.
 */
#ifndef KS_SERVER_FAULTS_H
#define KS_SERVER_FAULTS_H

#include <jansson.h>
#include <stdint.h>

#include "server.h"

typedef struct ks_faults_opts {
    double probation_s;        /* 0: 60 */
    uint64_t probation_cycles; /* 0: 1000 */
} ks_faults_opts_t;

/* Start the probation timer and publish the faults so far as the metric
 * ksched_plugin_faults_total{plugin,version,kind}. 0, or -1 out of
 * memory. */
int ks_faults_start(ks_server_t *srv, const ks_faults_opts_t *o);
/* Stop the timer (the loop then closes it). */
void ks_faults_stop(void);

/* The board's faults, known-good versions and worker starts as JSON (a
 * new reference), for /debug/plugins. */
json_t *ks_faults_json(void);

/* A reload is about to build a new generation: record the plugin versions
 * of `serving` (the generation scheduling now) as what a faulty version
 * that reload brings in rolls back to, whatever their probation (each
 * version kept as a file once, call_board.h: ks_call_board_rollback).
 * Without a supervisor, nothing. */
void ks_faults_note_swap(const ks_generation_t *serving);

/* Has the current generation passed its probation? */
int ks_faults_generation_good(void);

#endif
