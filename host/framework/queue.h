/*
 * The scheduling queue (upstream PriorityQueue): activeQ ordered by the
 * QueueSort plugin, a backoff queue ordered by backoff expiry, and the
 * unschedulable pool. Pods held by a PreEnqueue plugin wait in the pool
 * marked `gated` until an update lets them in.
 *
 * Backoff: initial * 2^(attempts-1), capped at max. Pods in the pool for
 * longer than ks_queue_flush()'s max_unsched_ms (5 minutes in the
 * scheduler) are flushed back. A cluster
 * event moves the pool's pods whose failing plugins registered for it and
 * whose QueueingHints say Queue (sched_queue_ops.c decides).
 *
 * The queue owns the ks_qpod_t records; a popped record is "in flight" and
 * still owned by the queue until ks_queue_requeue_failed() puts it back or
 * ks_queue_remove() takes it out. Loop thread only.
 */
#ifndef KS_QUEUE_H
#define KS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "ksched/plugin.h"

enum ks_qwhere {
    KS_Q_NONE = 0,
    KS_Q_ACTIVE,
    KS_Q_BACKOFF,
    KS_Q_UNSCHED,
    KS_Q_INFLIGHT
};

#define KS_QPOD_MAX_PLUGINS 8

typedef struct ks_qpod {
    ks_queued_pod_t q; /* first: handed to QueueSort's less() */
    ks_pod_t *pod;     /* owned while not assumed */
    int where;
    size_t heap_idx;
    int64_t backoff_expiry_ms;
    int64_t unsched_since_ms;
    int gated;
    int assumed; /* the pod belongs to the cache (assumed/binding) */
    int deleted; /* deleted during its cycle: dropped, never bound */
    uint64_t cycle; /* scheduling cycle of the last attempt */
    uint64_t seq;   /* arrival order: ties in QueueSort keep it */
    const char *plugins[KS_QPOD_MAX_PLUGINS]; /* rejecting plugins */
    unsigned n_plugins;
    /* Bit i: plugins[i] returned Pending (upstream PendingPlugins), not
     * Unschedulable (UnschedulablePlugins). */
    uint32_t pending_mask;
    char *last_message; /* last failure, malloc'd */
    /* Moved out of the pool by the unschedulable timeout at least once
     * (upstream's WasFlushedFromUnschedulable; metrics). */
    int flushed;
    struct ks_qpod *hnext; /* uid hash chain */
    struct ks_qpod *uprev, *unext; /* unschedulable pool list */
} ks_qpod_t;

typedef int (*ks_queue_less_fn)(void *ud, const ks_queued_pod_t *a,
                                const ks_queued_pod_t *b);

typedef struct ks_queue ks_queue_t;

/* Metrics (upstream's queue_incoming_pods_total): called for every pod that
 * enters a queue, with the queue ("active", "backoff", "unschedulable": the
 * pool, gated pods included) and the reason as upstream labels it: PodAdd,
 * ScheduleAttemptFailure, BackoffComplete, UnschedulableTimeout,
 * UnscheduledPodUpdate (ungated), or NULL for a move by a cluster event
 * (ks_queue_move_on_event: the caller knows the event's label). */
typedef void (*ks_queue_incoming_fn)(void *ud, const char *queue,
                                     const char *event);

ks_queue_t *ks_queue_new(ks_queue_less_fn less, void *ud,
                         int64_t initial_backoff_ms, int64_t max_backoff_ms);
/* Frees every record and the pods they own. */
void ks_queue_free(ks_queue_t *q);
void ks_queue_set_less(ks_queue_t *q, ks_queue_less_fn less, void *ud);
/* Report pods entering queues to fn (NULL: stop). */
void ks_queue_set_incoming(ks_queue_t *q, ks_queue_incoming_fn fn, void *ud);

/* Add a new pending pod (takes ownership). gated: PreEnqueue refused it.
 * Returns the record, or NULL when out of memory (the pod stays the
 * caller's, the queue unchanged). */
ks_qpod_t *ks_queue_add(ks_queue_t *q, ks_pod_t *pod, int64_t now, int gated);
ks_qpod_t *ks_queue_get(ks_queue_t *q, const char *uid);
/* Pop the head of activeQ (NULL when empty); the record is in flight. */
ks_qpod_t *ks_queue_pop(ks_queue_t *q, int64_t now, uint64_t cycle);
/* After a failed attempt: to backoff when a move request happened since the
 * attempt started (or `to_backoff`), else to the unschedulable pool. */
void ks_queue_requeue_failed(ks_queue_t *q, ks_qpod_t *qp, int64_t now,
                             int to_backoff);
/* Remove a record; the caller takes the pod (the record is freed). */
ks_pod_t *ks_queue_remove(ks_queue_t *q, ks_qpod_t *qp);
/* Move backoff pods whose backoff expired to activeQ; flush pool pods older
 * than max_unsched_ms. Returns how many moved. */
size_t ks_queue_flush(ks_queue_t *q, int64_t now, int64_t max_unsched_ms);
/* How a cluster event moves a pool pod (upstream queueingStrategy). */
enum ks_qmove {
    KS_QMOVE_SKIP = 0,          /* stays in the pool */
    KS_QMOVE_AFTER_BACKOFF = 1, /* backoff while still backing off, else
                                 * activeQ */
    KS_QMOVE_NOW = 2            /* activeQ at once (a Pending plugin's
                                 * Queue) */
};
/* A cluster event: move pool pods as `matters` says (a ks_qmove). Gated
 * pods never move here. `matters` may not change the queue. */
size_t ks_queue_move_on_event(ks_queue_t *q, int64_t now,
                              int (*matters)(void *ud, const ks_qpod_t *qp),
                              void *ud);
/* Record that a move request happened at `cycle`. */
void ks_queue_note_move(ks_queue_t *q, uint64_t cycle);
/* Ungate: the pod passed PreEnqueue now. */
void ks_queue_activate(ks_queue_t *q, ks_qpod_t *qp, int64_t now);

size_t ks_queue_len(const ks_queue_t *q, int where);
/* Earliest backoff expiry, or -1 when the backoff queue is empty. */
int64_t ks_queue_next_backoff(const ks_queue_t *q);
/* Visit every record (any state). */
void ks_queue_foreach(ks_queue_t *q, void (*fn)(void *ud, ks_qpod_t *qp),
                      void *ud);
/* Visit the records in the unschedulable pool (gated ones included); fn
 * may move the visited record. */
void ks_queue_foreach_unsched(ks_queue_t *q,
                              void (*fn)(void *ud, ks_qpod_t *qp), void *ud);
/* The backoff duration for `attempts`. */
int64_t ks_queue_backoff_ms(const ks_queue_t *q, uint32_t attempts);

#endif
