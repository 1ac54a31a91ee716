/*
 * The scheduling queue (queue.h). Records are found by uid in a hash of
 * interned addresses; activeQ and the backoff queue are binary heaps, the
 * unschedulable pool a list.
 *
 * Out of memory: only ks_queue_new and ks_queue_add allocate. Adding a pod
 * reserves room for every record in both heaps, so moving pods between
 * activeQ, backoff and the pool (pop, requeue, flush, events) never
 * allocates and cannot fail half-way. Loop thread only.
 */
#include "queue.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/objects.h"
#include "grow.h"

#define NBUCKETS 65536

typedef struct heap {
    ks_qpod_t **a;
    size_t n, cap;
    int (*less)(const ks_queue_t *q, const ks_qpod_t *x, const ks_qpod_t *y);
} heap_t;

struct ks_queue {
    heap_t active, backoff;
    ks_queue_less_fn less;
    void *ud;
    int64_t initial_ms, max_ms;
    ks_qpod_t **buckets;
    size_t n_total, n_unsched, n_inflight;
    uint64_t move_cycle;
    int moved_once;
    ks_qpod_t *unsched_head;
    uint64_t next_seq;
    ks_queue_incoming_fn incoming; /* metrics; may be NULL */
    void *incoming_ud;
};

void ks_queue_set_incoming(ks_queue_t *q, ks_queue_incoming_fn fn, void *ud)
{
    q->incoming = fn;
    q->incoming_ud = ud;
}

/* Report a pod entering `where` (a KS_Q_*; the pool: "unschedulable"). */
static void note_in(const ks_queue_t *q, int where, const char *event)
{
    if (q->incoming == NULL)
        return;
    q->incoming(q->incoming_ud,
                where == KS_Q_ACTIVE    ? "active"
                : where == KS_Q_BACKOFF ? "backoff"
                                        : "unschedulable",
                event);
}

static void pool_insert(ks_queue_t *q, ks_qpod_t *qp)
{
    qp->where = KS_Q_UNSCHED;
    qp->uprev = NULL;
    qp->unext = q->unsched_head;
    if (q->unsched_head)
        q->unsched_head->uprev = qp;
    q->unsched_head = qp;
    q->n_unsched++;
}

static void pool_unlink(ks_queue_t *q, ks_qpod_t *qp)
{
    if (qp->uprev)
        qp->uprev->unext = qp->unext;
    else
        q->unsched_head = qp->unext;
    if (qp->unext)
        qp->unext->uprev = qp->uprev;
    qp->uprev = qp->unext = NULL;
    q->n_unsched--;
}

static size_t hash_str(const char *s)
{
    /* Interned: the address identifies the string. */
    uintptr_t x = (uintptr_t)s;
    x ^= x >> 17;
    x *= 0xed5ad4bbu;
    x ^= x >> 11;
    return (size_t)(x % NBUCKETS);
}

static int active_less(const ks_queue_t *q, const ks_qpod_t *x,
                       const ks_qpod_t *y)
{
    if (q->less(q->ud, &x->q, &y->q))
        return 1;
    if (q->less(q->ud, &y->q, &x->q))
        return 0;
    return x->seq < y->seq; /* equal for QueueSort: first come first */
}

static int backoff_less(const ks_queue_t *q, const ks_qpod_t *x,
                        const ks_qpod_t *y)
{
    (void)q;
    return x->backoff_expiry_ms < y->backoff_expiry_ms;
}

static void heap_swap(heap_t *h, size_t i, size_t j)
{
    ks_qpod_t *t = h->a[i];
    h->a[i] = h->a[j];
    h->a[j] = t;
    h->a[i]->heap_idx = i;
    h->a[j]->heap_idx = j;
}

static void heap_up(const ks_queue_t *q, heap_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!h->less(q, h->a[i], h->a[p]))
            break;
        heap_swap(h, i, p);
        i = p;
    }
}

static void heap_down(const ks_queue_t *q, heap_t *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->less(q, h->a[l], h->a[m]))
            m = l;
        if (r < h->n && h->less(q, h->a[r], h->a[m]))
            m = r;
        if (m == i)
            break;
        heap_swap(h, i, m);
        i = m;
    }
}

/* Room for n records; 0, or -1 with the heap as it was. */
static int heap_reserve(heap_t *h, size_t n)
{
    ks_qpod_t **a = ks_fw_grow(h->a, &h->cap, n, sizeof *a, 64);
    if (a == NULL)
        return -1;
    h->a = a;
    return 0;
}

/* Room was reserved when the record was added (ks_queue_add). */
static void heap_push(const ks_queue_t *q, heap_t *h, ks_qpod_t *x)
{
    assert(h->n < h->cap);
    h->a[h->n] = x;
    x->heap_idx = h->n;
    h->n++;
    heap_up(q, h, h->n - 1);
}

static void heap_remove(const ks_queue_t *q, heap_t *h, size_t i)
{
    h->n--;
    if (i != h->n) {
        h->a[i] = h->a[h->n];
        h->a[i]->heap_idx = i;
        heap_down(q, h, i);
        heap_up(q, h, i);
    }
}

ks_queue_t *ks_queue_new(ks_queue_less_fn less, void *ud,
                         int64_t initial_backoff_ms, int64_t max_backoff_ms)
{
    ks_queue_t *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->buckets = calloc(NBUCKETS, sizeof *q->buckets);
    if (q->buckets == NULL) {
        free(q);
        return NULL;
    }
    q->active.less = active_less;
    q->backoff.less = backoff_less;
    q->less = less;
    q->ud = ud;
    q->initial_ms = initial_backoff_ms;
    q->max_ms = max_backoff_ms;
    return q;
}

void ks_queue_set_less(ks_queue_t *q, ks_queue_less_fn less, void *ud)
{
    size_t i;
    q->less = less;
    q->ud = ud;
    /* Re-heapify under the new order. */
    for (i = q->active.n / 2 + 1; i-- > 0;)
        heap_down(q, &q->active, i);
}

static void unlink_hash(ks_queue_t *q, ks_qpod_t *qp)
{
    ks_qpod_t **pp = &q->buckets[hash_str(qp->pod->uid)];
    while (*pp && *pp != qp)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = qp->hnext;
}

static void detach(ks_queue_t *q, ks_qpod_t *qp)
{
    switch (qp->where) {
    case KS_Q_ACTIVE: heap_remove(q, &q->active, qp->heap_idx); break;
    case KS_Q_BACKOFF: heap_remove(q, &q->backoff, qp->heap_idx); break;
    case KS_Q_UNSCHED: pool_unlink(q, qp); break;
    case KS_Q_INFLIGHT: q->n_inflight--; break;
    default: break;
    }
    qp->where = KS_Q_NONE;
}

void ks_queue_free(ks_queue_t *q)
{
    size_t i;
    if (q == NULL)
        return;
    for (i = 0; i < NBUCKETS; i++) {
        ks_qpod_t *qp = q->buckets[i];
        while (qp) {
            ks_qpod_t *next = qp->hnext;
            if (qp->pod && !qp->assumed)
                ks_pod_free(qp->pod);
            free(qp->last_message);
            free(qp);
            qp = next;
        }
    }
    free(q->buckets);
    free(q->active.a);
    free(q->backoff.a);
    free(q);
}

ks_qpod_t *ks_queue_get(ks_queue_t *q, const char *uid)
{
    ks_qpod_t *qp = q->buckets[hash_str(uid)];
    while (qp && qp->pod->uid != uid)
        qp = qp->hnext;
    return qp;
}

static void to_active(ks_queue_t *q, ks_qpod_t *qp)
{
    qp->where = KS_Q_ACTIVE;
    heap_push(q, &q->active, qp);
}

ks_qpod_t *ks_queue_add(ks_queue_t *q, ks_pod_t *pod, int64_t now, int gated)
{
    ks_qpod_t *qp;
    size_t b;
    /* Either heap may come to hold every record. */
    if (heap_reserve(&q->active, q->n_total + 1) != 0 ||
        heap_reserve(&q->backoff, q->n_total + 1) != 0)
        return NULL;
    if ((qp = calloc(1, sizeof *qp)) == NULL)
        return NULL;
    qp->pod = pod;
    qp->q.pod = pod;
    qp->q.timestamp_ms = now;
    qp->seq = ++q->next_seq;
    b = hash_str(pod->uid);
    qp->hnext = q->buckets[b];
    q->buckets[b] = qp;
    q->n_total++;
    if (gated) {
        qp->gated = 1;
        qp->unsched_since_ms = now;
        pool_insert(q, qp);
    } else {
        to_active(q, qp);
    }
    note_in(q, qp->where, "PodAdd");
    return qp;
}

ks_qpod_t *ks_queue_pop(ks_queue_t *q, int64_t now, uint64_t cycle)
{
    ks_qpod_t *qp;
    if (q->active.n == 0)
        return NULL;
    qp = q->active.a[0];
    heap_remove(q, &q->active, 0);
    qp->where = KS_Q_INFLIGHT;
    q->n_inflight++;
    qp->q.attempts++;
    if (qp->q.initial_attempt_ms == 0)
        qp->q.initial_attempt_ms = now;
    qp->cycle = cycle;
    return qp;
}

int64_t ks_queue_backoff_ms(const ks_queue_t *q, uint32_t attempts)
{
    int64_t d = q->initial_ms;
    uint32_t i;
    for (i = 1; i < attempts; i++) {
        d *= 2;
        if (d > q->max_ms)
            return q->max_ms;
    }
    return d > q->max_ms ? q->max_ms : d;
}

static void to_backoff(ks_queue_t *q, ks_qpod_t *qp, int64_t now)
{
    (void)now;
    qp->backoff_expiry_ms =
        qp->q.timestamp_ms + ks_queue_backoff_ms(q, qp->q.attempts);
    qp->where = KS_Q_BACKOFF;
    heap_push(q, &q->backoff, qp);
}

void ks_queue_requeue_failed(ks_queue_t *q, ks_qpod_t *qp, int64_t now,
                             int backoff)
{
    detach(q, qp);
    qp->q.timestamp_ms = now;
    if (backoff || (q->moved_once && q->move_cycle >= qp->cycle)) {
        to_backoff(q, qp, now);
    } else {
        qp->unsched_since_ms = now;
        pool_insert(q, qp);
    }
    note_in(q, qp->where, "ScheduleAttemptFailure");
}

ks_pod_t *ks_queue_remove(ks_queue_t *q, ks_qpod_t *qp)
{
    ks_pod_t *pod = qp->pod;
    detach(q, qp);
    unlink_hash(q, qp);
    q->n_total--;
    free(qp->last_message);
    free(qp);
    return pod;
}

/* Move a pool pod: to backoff while still backing off, else to active. */
static void move_out(ks_queue_t *q, ks_qpod_t *qp, int64_t now,
                     const char *event)
{
    detach(q, qp);
    if (qp->q.timestamp_ms + ks_queue_backoff_ms(q, qp->q.attempts) > now)
        to_backoff(q, qp, now);
    else
        to_active(q, qp);
    note_in(q, qp->where, event);
}

size_t ks_queue_flush(ks_queue_t *q, int64_t now, int64_t max_unsched_ms)
{
    size_t moved = 0;
    ks_qpod_t *qp, *next;
    while (q->backoff.n > 0 && q->backoff.a[0]->backoff_expiry_ms <= now) {
        qp = q->backoff.a[0];
        heap_remove(q, &q->backoff, 0);
        to_active(q, qp);
        note_in(q, KS_Q_ACTIVE, "BackoffComplete");
        moved++;
    }
    /* In pool order; a moved record leaves the list, `next` stays in it. */
    for (qp = q->unsched_head; qp; qp = next) {
        next = qp->unext;
        if (!qp->gated && now - qp->unsched_since_ms >= max_unsched_ms) {
            qp->flushed = 1;
            move_out(q, qp, now, "UnschedulableTimeout");
            moved++;
        }
    }
    return moved;
}

size_t ks_queue_move_on_event(ks_queue_t *q, int64_t now,
                              int (*matters)(void *ud, const ks_qpod_t *qp),
                              void *ud)
{
    size_t moved = 0;
    ks_qpod_t *qp, *next;
    for (qp = q->unsched_head; qp; qp = next) {
        next = qp->unext;
        int how;
        if (qp->gated || (how = matters(ud, qp)) == KS_QMOVE_SKIP)
            continue;
        if (how == KS_QMOVE_NOW) {
            detach(q, qp);
            to_active(q, qp);
            note_in(q, KS_Q_ACTIVE, NULL);
        } else {
            move_out(q, qp, now, NULL);
        }
        moved++;
    }
    return moved;
}

void ks_queue_note_move(ks_queue_t *q, uint64_t cycle)
{
    q->move_cycle = cycle;
    q->moved_once = 1;
}

void ks_queue_activate(ks_queue_t *q, ks_qpod_t *qp, int64_t now)
{
    (void)now;
    if (!qp->gated)
        return;
    detach(q, qp);
    qp->gated = 0;
    to_active(q, qp);
    note_in(q, KS_Q_ACTIVE, "UnscheduledPodUpdate");
}

size_t ks_queue_len(const ks_queue_t *q, int where)
{
    switch (where) {
    case KS_Q_ACTIVE: return q->active.n;
    case KS_Q_BACKOFF: return q->backoff.n;
    case KS_Q_UNSCHED: return q->n_unsched;
    case KS_Q_INFLIGHT: return q->n_inflight;
    default: return q->n_total;
    }
}

int64_t ks_queue_next_backoff(const ks_queue_t *q)
{
    return q->backoff.n ? q->backoff.a[0]->backoff_expiry_ms : -1;
}

void ks_queue_foreach(ks_queue_t *q, void (*fn)(void *ud, ks_qpod_t *qp),
                      void *ud)
{
    size_t i;
    for (i = 0; i < NBUCKETS; i++) {
        ks_qpod_t *qp = q->buckets[i], *next;
        for (; qp; qp = next) {
            next = qp->hnext;
            fn(ud, qp);
        }
    }
}

void ks_queue_foreach_unsched(ks_queue_t *q,
                              void (*fn)(void *ud, ks_qpod_t *qp), void *ud)
{
    ks_qpod_t *qp, *next;
    for (qp = q->unsched_head; qp; qp = next) {
        next = qp->unext;
        fn(ud, qp);
    }
}
