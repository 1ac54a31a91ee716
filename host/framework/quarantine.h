/*
 * Quarantine of plugin versions that crashed or overran a deadline, and
 * the per-plugin call deadlines.
 *
 * A plugin version is its name and the content hash of its .so. The fault
 * list and the known-good versions live on the call board (call_board.h),
 * where the supervisor of `ksched serve` keeps them across workers. When a
 * generation is built, every .so about to be loaded is vetted:
 *  - not quarantined: loaded as found;
 *  - quarantined, and a version to roll back to was kept: that version
 *    is loaded instead (the automatic rollback). The version that was
 *    serving when a reload brought the faulty one in comes first, whatever
 *    its probation, unless it faulted too; else the newest version that
 *    passed its probation (ks_call_board_rollback);
 *  - quarantined, no good version, policy KS_QUARANTINE_DISABLE: the file
 *    is skipped and the plugin is removed from every profile;
 *  - otherwise the build fails with a message naming the fault and the fix.
 *
 * Threads: the loop thread (generation builds) only.
 */
#ifndef KS_QUARANTINE_H
#define KS_QUARANTINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "config/config.h"

typedef enum ks_quarantine_policy {
    KS_QUARANTINE_ROLLBACK = 0, /* default: roll back, else refuse */
    KS_QUARANTINE_DISABLE       /* roll back, else run without the plugin */
} ks_quarantine_policy_t;

void ks_quarantine_set_policy(ks_quarantine_policy_t p);

/* Start vetting for one generation build (forgets the last skipped set). */
void ks_quarantine_begin(void);

/* Vet `path` before it is loaded. 0: load *load_path (path itself or a
 * kept copy, valid until the next call), with *hash its content hash;
 * 1: skip the file (its plugin is to be removed from the profiles); -1:
 * refused, a message appended to err. */
int ks_quarantine_vet(const char *path, const char **load_path,
                      uint64_t *hash, ks_error_t *err);

/* Remove every plugin skipped since ks_quarantine_begin() from every
 * profile of cfg (names stay in the configuration's arena). 0. */
int ks_quarantine_apply(ks_config_t *cfg);

/* Deadlines: `default_ms` for plugins that are not ksched's own (0: none),
 * `in_tree_ms` for ksched's own (0: none), and per-plugin values that win
 * over both. The arrays are copied. 0, or -1 out of memory. */
int ks_deadlines_set(uint32_t default_ms, uint32_t in_tree_ms,
                     const char *const *names, const uint32_t *ms, size_t n);
uint32_t ks_deadline_for(const char *name, int in_tree);
/* Is `name` one of ksched's own (in-tree) plugins? */
int ks_plugin_in_tree(const char *name);

#endif
