/*
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it (kube-scheduler's --leader-elect).
 *
 * Every retry period a candidate reads the Lease. It takes it when nobody
 * holds it, or when the holder's record has not changed for a whole lease
 * duration as measured on this candidate's own clock (clocks of different
 * machines are never compared); it writes with the resourceVersion it read,
 * so of two candidates only one wins. The leader renews every retry period
 * and counts as leader only while its last successful renewal is younger
 * than the renew deadline: ks_leader_is_leader() turns false at that
 * moment even if no timer has fired yet (a process paused with SIGSTOP and
 * resumed sees it before it can write anything), and `stopped` is called.
 * ks_leader_release() gives the Lease up (holder "", duration 1 s) so that
 * a standby takes over at its next retry instead of after a lease
 * duration.
 *
 * Threads: loop thread only. The elector references the client, which
 * must outlive it.
 */
#ifndef KS_KUBE_LEADER_H
#define KS_KUBE_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/error.h"
#include "kube/client.h"

typedef struct ks_leader ks_leader_t;

typedef struct ks_leader_opts {
    const char *lease_namespace; /* resourceNamespace (kube-system) */
    const char *lease_name;      /* resourceName */
    const char *identity;        /* holderIdentity; NULL: generated */
    int64_t lease_duration_ms;   /* 15 s */
    int64_t renew_deadline_ms;   /* 10 s */
    int64_t retry_period_ms;     /* 2 s */
    void (*started)(void *ud);   /* this candidate became leader */
    void (*stopped)(void *ud);   /* it was leader and is no more */
    /* Optional: another identity now holds the lease (for logs). */
    void (*new_leader)(void *ud, const char *identity);
    void *ud;
} ks_leader_opts_t;

/* Check the durations as upstream's validation does: all positive,
 * lease_duration > renew_deadline > retry_period * 1.2 (client-go's
 * jitter factor). 0 or KS_EINVAL with a message naming the field. */
int ks_leader_opts_check(const ks_leader_opts_t *o, ks_error_t *err);

ks_leader_t *ks_leader_new(uv_loop_t *loop, ks_kube_client_t *client,
                           const ks_leader_opts_t *o, ks_error_t *err);
void ks_leader_start(ks_leader_t *l);
/* Leader now: holds the lease and renewed it less than renew_deadline
 * ago. Calls `stopped` (once) when that turned false. */
int ks_leader_is_leader(ks_leader_t *l);
/* Give the lease up if held; `done` runs when the write is answered (or
 * at once when there is nothing to release). After this the elector does
 * not try to acquire again. */
void ks_leader_release(ks_leader_t *l, void (*done)(void *ud), void *ud);
/* Stop timers and calls, free once the timer is closed. */
void ks_leader_close(ks_leader_t *l);
const char *ks_leader_identity(const ks_leader_t *l);
/* The holder last seen ("" when none or not read yet). */
const char *ks_leader_holder(const ks_leader_t *l);

/* "HOSTNAME_" plus 16 random hex digits. */
void ks_leader_default_identity(char *buf, size_t len);

#endif
