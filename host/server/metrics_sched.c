/* kube-scheduler's scheduler_* series fed from scheduler hooks and
 * recomputed at scrape time. */
#include "metrics_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/queue.h"

/* Queues a pod can enter, in the order of held[] below. */
static const char *const queues[] = {"active", "backoff", "unschedulable"};
#define N_QUEUES 3

struct ks_sched_metrics {
    ks_metric_t *algorithm, *victims, *sli, *sli_v124, *attempts;
    ks_metric_t *incoming, *incoming_entities, *queued_entities;
    ks_metric_t *inflight_events, *goroutines, *goroutines_v124;
    ks_metric_t *cache_size, *cache_size_v124, *unsched_pods, *after_flush;
    /* moves by a cluster event not yet labelled, per queue */
    unsigned long held[N_QUEUES];
    unsigned victims_seen; /* since the last PostFilter ended */
};

ks_sched_metrics_t *ks_sched_metrics_new(ks_metrics_t *r)
{
    static const char *const l_attempts[] = {"attempts", NULL};
    static const char *const l_queue_event[] = {"queue", "event", NULL};
    static const char *const l_queue_event_type[] = {"queue", "event",
                                                     "type", NULL};
    static const char *const l_queue_type[] = {"queue", "type", NULL};
    static const char *const l_event[] = {"event", NULL};
    static const char *const l_operation[] = {"operation", NULL};
    static const char *const l_work[] = {"work", NULL};
    static const char *const l_type[] = {"type", NULL};
    static const char *const l_plugin_profile[] = {"plugin", "profile",
                                                   NULL};
    double b_alg[15], b_victims[7], b_sli[20], b_attempts[5];
    ks_sched_metrics_t *sm = calloc(1, sizeof *sm);
    if (sm == NULL)
        return NULL;
    ks_metrics_exponential_buckets(0.001, 2, 15, b_alg);
    ks_metrics_exponential_buckets(1, 2, 7, b_victims);
    ks_metrics_exponential_buckets(0.01, 2, 20, b_sli);
    ks_metrics_exponential_buckets(1, 2, 5, b_attempts);
    sm->algorithm = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "scheduler_scheduling_algorithm_duration_seconds",
        "Scheduling algorithm latency in seconds: from taking the pod off "
        "the queue to the selected node (PreFilter, Filter, Score).",
        NULL, b_alg, 15);
    sm->victims = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "scheduler_preemption_victims",
        "Number of selected preemption victims for preemption initiated by "
        "a single pod.",
        NULL, b_victims, 7);
    sm->sli = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_sli_duration_seconds",
        "E2e latency for a pod being scheduled, from its first scheduling "
        "attempt to its binding, which may involve several attempts (by "
        "their number).",
        l_attempts, b_sli, 20);
    sm->sli_v124 = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_duration_seconds",
        "(Deprecated: kube-scheduler v1.24's name of "
        "scheduler_pod_scheduling_sli_duration_seconds; the same values.) "
        "E2e latency for a pod being scheduled which may include multiple "
        "scheduling attempts.",
        l_attempts, b_sli, 20);
    sm->attempts = ks_metrics_add(
        r, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_attempts",
        "Number of attempts to successfully schedule a pod.", NULL,
        b_attempts, 5);
    sm->incoming = ks_metrics_add(
        r, KS_METRIC_COUNTER, "scheduler_queue_incoming_pods_total",
        "Number of pods added to scheduling queues by event and queue type.",
        l_queue_event, NULL, 0);
    sm->incoming_entities = ks_metrics_add(
        r, KS_METRIC_COUNTER, "scheduler_queue_incoming_entities_total",
        "Number of scheduling entities added to scheduling queues by event, "
        "queue type, and entity type (always 'pod': ksched has no pod "
        "groups).",
        l_queue_event_type, NULL, 0);
    sm->queued_entities = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_queued_entities",
        "Number of queued scheduling entities by queue type and entity type "
        "(always 'pod': ksched has no pod groups).",
        l_queue_type, NULL, 0);
    sm->inflight_events = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_inflight_events",
        "Number of events currently tracked in the scheduling queue: "
        "PodPopped, the pods taken off the queue whose attempt has not "
        "ended (ksched records no other events per in-flight pod).",
        l_event, NULL, 0);
    sm->goroutines = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_goroutines",
        "Work in flight by operation (kube-scheduler: running goroutines): "
        "binding is the pods waiting at Permit or being bound.",
        l_operation, NULL, 0);
    sm->goroutines_v124 = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_scheduler_goroutines",
        "(Deprecated: kube-scheduler v1.24's name of scheduler_goroutines, "
        "label work.) Number of running goroutines split by the work they "
        "do such as binding.",
        l_work, NULL, 0);
    sm->cache_size = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_cache_size",
        "Number of nodes, pods, and assumed (bound) pods in the scheduler "
        "cache.",
        l_type, NULL, 0);
    sm->cache_size_v124 = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_scheduler_cache_size",
        "(Deprecated: kube-scheduler v1.24's name of scheduler_cache_size.) "
        "Number of nodes, pods, and assumed (bound) pods in the scheduler "
        "cache.",
        l_type, NULL, 0);
    sm->unsched_pods = ks_metrics_add(
        r, KS_METRIC_GAUGE, "scheduler_unschedulable_pods",
        "The number of unschedulable pods broken down by plugin name. A pod "
        "counts for every plugin that caused it to not schedule, so this "
        "metric has meaning only when broken down by plugin.",
        l_plugin_profile, NULL, 0);
    sm->after_flush = ks_metrics_add(
        r, KS_METRIC_COUNTER, "scheduler_pod_scheduled_after_flush_total",
        "Number of pods that were successfully scheduled after being "
        "flushed from the unschedulable pool due to timeout (5 minutes).",
        NULL, NULL, 0);
    if (sm->after_flush)
        ks_metric_add(sm->after_flush, 0);
    if (!sm->after_flush || !sm->algorithm || !sm->victims || !sm->sli || !sm->sli_v124 ||
        !sm->attempts || !sm->incoming || !sm->incoming_entities ||
        !sm->queued_entities || !sm->inflight_events || !sm->goroutines ||
        !sm->goroutines_v124 || !sm->cache_size || !sm->cache_size_v124 ||
        !sm->unsched_pods) {
        free(sm);
        return NULL;
    }
    return sm;
}

void ks_sched_metrics_free(ks_sched_metrics_t *sm)
{
    free(sm);
}

static void count_in(ks_sched_metrics_t *sm, const char *queue,
                     const char *event, double n)
{
    ks_metric_add(sm->incoming, n, queue, event);
    ks_metric_add(sm->incoming_entities, n, queue, event, "pod");
}

void ks_sched_metrics_incoming(ks_sched_metrics_t *sm, const char *queue,
                               const char *event)
{
    size_t i;
    if (event != NULL) {
        count_in(sm, queue, event, 1);
        return;
    }
    for (i = 0; i < N_QUEUES; i++)
        if (strcmp(queue, queues[i]) == 0)
            sm->held[i]++;
}

void ks_sched_metrics_event_done(ks_sched_metrics_t *sm, const char *event)
{
    size_t i;
    for (i = 0; i < N_QUEUES; i++)
        if (sm->held[i]) {
            count_in(sm, queues[i], event, (double)sm->held[i]);
            sm->held[i] = 0;
        }
}

void ks_sched_metrics_algorithm(ks_sched_metrics_t *sm, double seconds)
{
    ks_metric_observe(sm->algorithm, seconds);
}

void ks_sched_metrics_scheduled(ks_sched_metrics_t *sm, uint32_t attempts,
                                double seconds, int flushed)
{
    char a[16];
    snprintf(a, sizeof a, "%u", attempts);
    if (seconds < 0)
        seconds = 0;
    ks_metric_observe(sm->sli, seconds, a);
    ks_metric_observe(sm->sli_v124, seconds, a);
    ks_metric_observe(sm->attempts, (double)attempts);
    if (flushed)
        ks_metric_add(sm->after_flush, 1);
}

void ks_sched_metrics_victim(ks_sched_metrics_t *sm)
{
    sm->victims_seen++;
}

void ks_sched_metrics_postfilter_done(ks_sched_metrics_t *sm)
{
    if (sm->victims_seen)
        ks_metric_observe(sm->victims, (double)sm->victims_seen);
    sm->victims_seen = 0;
}

static void count_assumed(ks_pod_t *pod, int assumed, void *ud)
{
    (void)pod;
    if (assumed)
        (*(size_t *)ud)++;
}

static void count_plugin(void *ud, const char *plugin, const char *profile)
{
    ks_metric_add(ud, 1, plugin, profile);
}

void ks_sched_metrics_refresh(ks_sched_metrics_t *sm, ks_scheduler_t *sched,
                              const ks_cache_t *cache)
{
    static const int where[N_QUEUES] = {KS_Q_ACTIVE, KS_Q_BACKOFF,
                                        KS_Q_UNSCHED};
    size_t assumed = 0, i;
    double binding = (double)ks_scheduler_pending(sched, -1);
    double nodes = (double)ks_cache_num_nodes(cache);
    double pods = (double)ks_cache_num_pods(cache);
    for (i = 0; i < N_QUEUES; i++)
        ks_metric_set(sm->queued_entities,
                      (double)ks_scheduler_pending(sched, where[i]),
                      queues[i], "pod");
    ks_metric_set(sm->inflight_events,
                  (double)ks_scheduler_pending(sched, KS_Q_INFLIGHT),
                  "PodPopped");
    ks_metric_set(sm->goroutines, binding, "binding");
    ks_metric_set(sm->goroutines_v124, binding, "binding");
    ks_cache_foreach_pod(cache, count_assumed, &assumed);
    ks_metric_set(sm->cache_size, (double)assumed, "assumed_pods");
    ks_metric_set(sm->cache_size, nodes, "nodes");
    ks_metric_set(sm->cache_size, pods, "pods");
    ks_metric_set(sm->cache_size_v124, (double)assumed, "assumed_pods");
    ks_metric_set(sm->cache_size_v124, nodes, "nodes");
    ks_metric_set(sm->cache_size_v124, pods, "pods");
    ks_metric_clear(sm->unsched_pods);
    ks_scheduler_foreach_unsched_plugin(sched, count_plugin,
                                        sm->unsched_pods);
}
