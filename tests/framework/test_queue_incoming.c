/* The queue's report of pods entering its queues (upstream's
 * queue_incoming_pods_total labels), and the mark on pods flushed from the
 * pool by the unschedulable timeout. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "framework/queue.h"

typedef struct seen {
    char lines[32][64];
    int n;
} seen_t;

static void incoming(void *ud, const char *queue, const char *event)
{
    seen_t *s = ud;
    ck_assert_int_lt(s->n, 32);
    snprintf(s->lines[s->n++], sizeof s->lines[0], "%s %s", queue,
             event ? event : "(event)");
}

static int less_fifo(void *ud, const ks_queued_pod_t *a,
                     const ks_queued_pod_t *b)
{
    (void)ud;
    (void)a;
    (void)b;
    return 0; /* ties: first come first */
}

static int move_all(void *ud, const ks_qpod_t *qp)
{
    (void)ud;
    (void)qp;
    return KS_QMOVE_NOW;
}

static ks_pod_t *new_pod(const char *uid)
{
    ks_pod_t *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    p->uid = ks_intern_str(ks_intern_global(), uid);
    return p;
}

static void drop(ks_queue_t *q, ks_qpod_t *qp)
{
    free(ks_queue_remove(q, qp));
}

START_TEST(reports_each_entry)
{
    /* Backoff 1 s (initial) up to 10 s. */
    ks_queue_t *q = ks_queue_new(less_fifo, NULL, 1000, 10000);
    seen_t s = {0};
    ks_qpod_t *a, *b, *g;
    ck_assert_ptr_nonnull(q);
    ks_queue_set_incoming(q, incoming, &s);
    a = ks_queue_add(q, new_pod("a"), 0, 0);
    b = ks_queue_add(q, new_pod("b"), 0, 0);
    g = ks_queue_add(q, new_pod("g"), 0, 1);
    ck_assert_str_eq(s.lines[0], "active PodAdd");
    ck_assert_str_eq(s.lines[1], "active PodAdd");
    ck_assert_str_eq(s.lines[2], "unschedulable PodAdd"); /* gated */
    /* a fails: to the pool; b fails with an error: to backoff. */
    ck_assert_ptr_eq(ks_queue_pop(q, 0, 1), a);
    ks_queue_requeue_failed(q, a, 0, 0);
    ck_assert_ptr_eq(ks_queue_pop(q, 0, 2), b);
    ks_queue_requeue_failed(q, b, 0, 1);
    ck_assert_str_eq(s.lines[3], "unschedulable ScheduleAttemptFailure");
    ck_assert_str_eq(s.lines[4], "backoff ScheduleAttemptFailure");
    ck_assert_int_eq(a->flushed, 0);
    /* At 2 s: b's backoff is over; a has been in the pool for 2 s, past
     * a 1.5 s timeout (its backoff is over too: to activeQ). */
    ks_queue_flush(q, 2000, 1500);
    ck_assert_int_eq(s.n, 7);
    ck_assert_str_eq(s.lines[5], "active BackoffComplete");
    ck_assert_str_eq(s.lines[6], "active UnschedulableTimeout");
    ck_assert_int_eq(a->flushed, 1);
    ck_assert_int_eq(b->flushed, 0);
    /* a fails again (to the pool); a cluster event moves it: no label
     * from the queue, the caller knows the event. */
    ck_assert_ptr_nonnull(ks_queue_pop(q, 2000, 3));
    ck_assert_ptr_nonnull(ks_queue_pop(q, 2000, 4));
    ks_queue_requeue_failed(q, a, 2000, 0);
    ks_queue_move_on_event(q, 2000, move_all, NULL);
    ck_assert_str_eq(s.lines[7], "unschedulable ScheduleAttemptFailure");
    ck_assert_str_eq(s.lines[8], "active (event)");
    /* The gated pod passes PreEnqueue after an update. */
    ks_queue_activate(q, g, 2000);
    ck_assert_str_eq(s.lines[9], "active UnscheduledPodUpdate");
    ck_assert_int_eq(s.n, 10);
    /* Without a callback nothing is reported. */
    ks_queue_set_incoming(q, NULL, NULL);
    drop(q, a);
    ks_queue_add(q, new_pod("c"), 3000, 0);
    ck_assert_int_eq(s.n, 10);
    drop(q, b);
    drop(q, g);
    drop(q, ks_queue_get(q, ks_intern_str(ks_intern_global(), "c")));
    ks_queue_free(q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue-incoming");
    TCase *t = tcase_create("incoming");
    SRunner *sr;
    int failed;
    tcase_add_test(t, reports_each_entry);
    suite_add_tcase(s, t);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
