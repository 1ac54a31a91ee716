/*
 * ks_status: the status object behind the SDK's opaque ks_status_t.
 *
 * A status is a code, the name of the plugin that produced it, and up to
 * KS_STATUS_MAX_REASONS reasons stored inline (no allocation). Statuses are
 * plain values owned by whoever declared them; reset before reuse.
 * Thread-safety: one thread per status.
 */
#ifndef KS_STATUS_H
#define KS_STATUS_H

#include <stddef.h>

#include "ksched/plugin.h"

#define KS_STATUS_MAX_REASONS 8
#define KS_STATUS_REASON_MAX 1024

/* Reasons are interned (ks_intern_global), so a status is small, copies are
 * cheap and equal reasons compare by address. */
struct ks_status {
    ks_code_t code;
    const char *plugin; /* failed plugin (its descriptor's name), or NULL */
    unsigned n_reasons;
    const char *reasons[KS_STATUS_MAX_REASONS];
};

void ks_status_reset(ks_status_t *st);
void ks_status_add_reason(ks_status_t *st, const char *reason);
void ks_status_add_reasonf(ks_status_t *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Reasons joined with ", " into buf; returns buf. */
const char *ks_status_message(const ks_status_t *st, char *buf, size_t len);
/* Every reason joined with ", " (upstream Status.Message()), interned:
 * valid as long as the process; "" when none, "out of memory" when the
 * text cannot be made. Any thread. */
const char *ks_status_message_joined(const ks_status_t *st);
/* "Success", "Error", "Unschedulable", ... */
const char *ks_code_name(ks_code_t c);
/* Append src's reasons to dst (dst keeps its code). */
void ks_status_merge_reasons(ks_status_t *dst, const ks_status_t *src);

#endif
