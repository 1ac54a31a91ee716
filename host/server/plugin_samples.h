/*
 * Per-plugin execution times, collected from any thread and merged into a
 * histogram family labelled {plugin, extension_point, status}
 * (scheduler_plugin_execution_duration_seconds).
 *
 * In a sampled scheduling cycle every Filter and Score call on every node
 * is timed, from the loop thread and the worker threads at once, while the
 * metrics registry is a loop-thread structure. So samples go first into
 * shards: each thread is given one shard on its first sample (threads beyond
 * the shard count share, which costs only contention), and a shard keeps a
 * small hash table of bucket counts per label tuple behind its own mutex.
 * ks_plugin_samples_flush moves every shard's counts into the registry;
 * call it before the family is read (the /metrics scrape).
 *
 * Ownership: the collector is the caller's; it refers to the histogram
 * family, which must outlive it.
 */
#ifndef KS_SERVER_PLUGIN_SAMPLES_H
#define KS_SERVER_PLUGIN_SAMPLES_H

#include "metrics.h"

typedef struct ks_plugin_samples ks_plugin_samples_t;

/* A collector feeding `hist` (a histogram with three labels: plugin,
 * extension point, status). NULL on ENOMEM. Loop thread. */
ks_plugin_samples_t *ks_plugin_samples_new(ks_metric_t *hist);
/* Frees the collector and samples not flushed yet. Loop thread, with no
 * record call running. */
void ks_plugin_samples_free(ks_plugin_samples_t *ps);

/* One observation. plugin is copied; ext_point and status must be static
 * strings (they are compared by address). Any thread, concurrently. A
 * sample is dropped only when memory runs out. */
void ks_plugin_samples_record(ks_plugin_samples_t *ps, const char *plugin,
                              const char *ext_point, const char *status,
                              double seconds);

/* Merge every shard's counts into the histogram and empty the shards.
 * Loop thread (the registry's thread); record calls may run meanwhile. */
void ks_plugin_samples_flush(ks_plugin_samples_t *ps);

#endif
