/*
 * Events written to the API server as events.k8s.io/v1, the way
 * kube-scheduler's event recorder writes them: reportingController is the
 * profile's schedulerName, reportingInstance "<controller>-<hostname>",
 * regarding the pod (and related the preemptor, for Preempted).
 *
 * Repeats are aggregated as client-go's events broadcaster does: an event
 * with the same regarding object, action, reason, type and controller as
 * one written less than 6 minutes ago is not written again; its series
 * count and lastObservedTime are PATCHed at most every 30 seconds instead,
 * so a pod that fails a thousand times costs a few writes, not a thousand.
 *
 * Failures to write an event are logged at debug level and dropped (events
 * are best effort, as upstream). What bounds the writes waiting for a slow
 * API server: at most KS_EVENTS_MAX_QUEUED event writes are queued or
 * running at once; a new event past that is dropped and counted (client-go's
 * broadcaster drops past 1,000 queued events too), and a series update
 * waits for the next flush.
 *
 * Threads: loop thread only. The recorder references the client, which
 * must outlive it.
 */
#ifndef KS_KUBE_EVENTS_H
#define KS_KUBE_EVENTS_H

#include <stdint.h>

#include <uv.h>

#include "base/error.h"
#include "kube/client.h"

typedef struct ks_event_recorder ks_event_recorder_t;

typedef struct ks_event_ref {
    const char *ns, *name, *uid; /* a Pod */
} ks_event_ref_t;

ks_event_recorder_t *ks_event_recorder_new(uv_loop_t *loop,
                                           ks_kube_client_t *client,
                                           const char *hostname,
                                           ks_error_t *err);
void ks_event_recorder_close(ks_event_recorder_t *r);

/* Record an event. controller: the profile's schedulerName. type "Normal"
 * or "Warning"; action "Binding", "Scheduling", "Preempting"; related may
 * be NULL. Strings are copied. */
void ks_event_record(ks_event_recorder_t *r, const char *controller,
                     const ks_event_ref_t *regarding,
                     const ks_event_ref_t *related, const char *type,
                     const char *reason, const char *action,
                     const char *note);

/* Event writes queued or running at most (upstream's maxQueuedEvents). */
#define KS_EVENTS_MAX_QUEUED 1000

typedef struct ks_event_stats {
    uint64_t created;    /* events POSTed */
    uint64_t aggregated; /* repeats folded into a series */
    uint64_t patched;    /* series PATCHes sent */
    uint64_t failed;     /* writes that failed */
    uint64_t dropped;    /* new events dropped: KS_EVENTS_MAX_QUEUED waited */
    uint64_t queued;     /* writes queued or running now */
} ks_event_stats_t;
ks_event_stats_t ks_event_recorder_stats(const ks_event_recorder_t *r);

/* "2026-11-23T10:00:00.123456Z" for a Unix time in microseconds. */
void ks_micro_time_format(int64_t unix_us, char *buf, size_t len);

#endif
