/*
 * kube-scheduler's scheduler_* series that the server's observer hooks
 * do not feed one to one: the pod scheduling SLI and attempts, the
 * scheduling algorithm's duration, preemption victims, queue incoming
 * pods, queued entities, in-flight events, the cache's size, work in
 * flight by operation ("goroutines"), unschedulable pods by plugin and
 * pods scheduled after the unschedulable timeout flushed them,
 * with upstream v1.36's names, types, labels and buckets, and the v1.24
 * names v1.36 renamed (scheduler_scheduler_cache_size,
 * scheduler_scheduler_goroutines{work}, scheduler_pod_scheduling_
 * duration_seconds) kept beside them.
 *
 * The families live in the server's registry (ks_metrics_t), registered
 * by ks_sched_metrics_new in the order given there. Gauges are computed at
 * scrape time by ks_sched_metrics_refresh. Ownership: the registry owns
 * the families, this object only its own state. Loop thread only.
 */
#ifndef KS_SERVER_METRICS_SCHED_H
#define KS_SERVER_METRICS_SCHED_H

#include <stdint.h>

#include "cluster/cache.h"
#include "framework/scheduler.h"
#include "metrics.h"

typedef struct ks_sched_metrics ks_sched_metrics_t;

/* Register the families in r. NULL on ENOMEM (families registered so
 * far stay in r and are freed with it). */
ks_sched_metrics_t *ks_sched_metrics_new(ks_metrics_t *r);
void ks_sched_metrics_free(ks_sched_metrics_t *sm);

/* A pod entered `queue` because of `event` (the observer's
 * queue_incoming). event NULL: a move by a cluster event, counted when
 * ks_sched_metrics_event_done names the event. */
void ks_sched_metrics_incoming(ks_sched_metrics_t *sm, const char *queue,
                               const char *event);
/* A cluster event was handled; moves reported meanwhile get its label. */
void ks_sched_metrics_event_done(ks_sched_metrics_t *sm, const char *event);
/* A scheduling cycle found a node after `seconds` (upstream's
 * SchedulingAlgorithmLatency). */
void ks_sched_metrics_algorithm(ks_sched_metrics_t *sm, double seconds);
/* A pod was bound after `attempts` attempts, `seconds` after its first
 * attempt started (upstream's pod_scheduling_sli_duration_seconds);
 * flushed: the unschedulable timeout had flushed it from the pool
 * (pod_scheduled_after_flush_total). */
void ks_sched_metrics_scheduled(ks_sched_metrics_t *sm, uint32_t attempts,
                                double seconds, int flushed);
/* A preemption victim was deleted; a PostFilter run that ends after one
 * or more records their number (upstream's preemption_victims). */
void ks_sched_metrics_victim(ks_sched_metrics_t *sm);
void ks_sched_metrics_postfilter_done(ks_sched_metrics_t *sm);
/* Recompute the gauges from the scheduler and the cache. */
void ks_sched_metrics_refresh(ks_sched_metrics_t *sm, ks_scheduler_t *sched,
                              const ks_cache_t *cache);

#endif
