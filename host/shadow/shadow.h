/*
 * Shadow mode (`ksched serve --kubeconfig ... --shadow NAME[=PROFILE],...`):
 * ksched watches the pods another scheduler places (their schedulerName
 * is one of the NAMEs) and, when the watch shows one bound, decides where
 * its own profile (PROFILE, or the profile named NAME) would have put it
 * on the cluster as it is then (every other pod where it is, this one not
 * yet placed), and compares (compare.h). It writes nothing: the
 * decisions never enter the cache (only the real bindings do, through the
 * cluster source), no pod is queued, nothing is bound or patched.
 *
 * The comparisons run on a scheduler of the shadow's own, on the server's
 * cache and generation, with ks_scheduler_try: every node evaluated and
 * scored, no PostFilter, plugins' API requests refused; scheduler
 * extenders are asked synchronously (the loop waits for their answers,
 * as ks_scheduler_try does on a scheduler of its own). A hot swap
 * (ks_shadow_set_generation) starts a new comparison period: the counts
 * and the score-gap histogram are kept per generation and profile.
 *
 * Output: Prometheus text (ksched_shadow_decisions_total{profile,result,
 * generation}, ksched_shadow_score_gap{profile,generation}: ksched's best
 * total minus its total for the real node, when the real node passes the
 * filters), /debug/shadow's JSON (the counts and the last differences with
 * both nodes' verdicts and scores as --explain prints them), and one log
 * line per difference at INFO (-v).
 *
 * Threads: loop thread only. Ownership: the shadow holds a reference on
 * its generation; the cache is the caller's and must outlive it.
 */
#ifndef KS_SHADOW_SHADOW_H
#define KS_SHADOW_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "cluster/cache.h"
#include "framework/generation.h"

typedef struct ks_shadow ks_shadow_t;

/* The differences /debug/shadow keeps (the last ones). */
#define KS_SHADOW_KEEP 100

/* The scheduler names to shadow and the profile for each. */
typedef struct ks_shadow_names {
    char *name[16], *profile[16]; /* malloc'd; profile "" = name */
    size_t n;
} ks_shadow_names_t;
/* Parse --shadow's argument, "NAME[=PROFILE][,NAME[=PROFILE]...]" (at
 * most 16), adding to *out (zeroed at first). 0, or KS_EINVAL / KS_ENOMEM
 * with err naming the bad entry (the caller names the option). */
int ks_shadow_names_parse(const char *arg, ks_shadow_names_t *out,
                          ks_error_t *err);
void ks_shadow_names_free(ks_shadow_names_t *n);

/* A shadow comparing the names' pods with gen's profiles on cache (the
 * names are copied). KS_EINVAL with err when a profile is not in gen;
 * KS_ENOMEM. */
int ks_shadow_new(const ks_shadow_names_t *names, ks_generation_t *gen,
                  ks_cache_t *cache, ks_shadow_t **out, ks_error_t *err);
void ks_shadow_free(ks_shadow_t *sh);

/* A hot swap: compare with gen from now on (a new period). A profile
 * missing from gen makes its pods' comparisons count as `error`. */
void ks_shadow_set_generation(ks_shadow_t *sh, ks_generation_t *gen);

/* Whether pods of this schedulerName are shadowed. */
int ks_shadow_watches(const ks_shadow_t *sh, const char *scheduler_name);

/* The watch shows what its scheduler decided for `pod` (seen unassigned
 * before): bound to pod->node_name (called before the cache takes it),
 * or unschedulable (node_name ""). Compares and records. pod's node_name
 * and scheduler_name are changed during the call and restored. 1 when
 * compared, 0 when not a shadowed pod, KS_ENOMEM. */
int ks_shadow_observe(ks_shadow_t *sh, ks_pod_t *pod);

/* Append the metrics (Prometheus text) to out. */
void ks_shadow_metrics(const ks_shadow_t *sh, ks_buf_t *out);
/* /debug/shadow: {"generation": G, "names": [...], "periods": [...],
 * "differences": [...]} (the last KS_SHADOW_KEEP, newest last). */
void ks_shadow_debug_json(const ks_shadow_t *sh, ks_buf_t *out);

#endif
