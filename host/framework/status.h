/*
 * ks_status: the status object behind the SDK's opaque ks_status_t.
 *
 * A status is a code, the name of the plugin that produced it, and up to
 * KS_STATUS_MAX_REASONS reasons whose text the status holds inline, in
 * KS_STATUS_TEXT_MAX bytes (no allocation): the reasons are owned by the
 * status and live exactly as long as it does, so a plugin whose reasons
 * name pods or groups costs no memory once its statuses are gone.
 * Statuses are plain values owned by whoever declared them: copying one
 * (assignment, or ks_status_copy for only the bytes in use) copies its
 * reasons; nothing to free. Reset before reuse; setting n_reasons to 0
 * clears the reasons too.
 * Thread-safety: one thread per status.
 */
#ifndef KS_STATUS_H
#define KS_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ksched/plugin.h"

#define KS_STATUS_MAX_REASONS 8
/* A formatted reason is cut to KS_STATUS_REASON_MAX - 1 bytes. */
#define KS_STATUS_REASON_MAX 1024
/* Room for every reason of a status with its terminating NUL: a reason
 * that does not fit whole is cut to what is left, and once nothing is
 * left further reasons are dropped, as reasons beyond
 * KS_STATUS_MAX_REASONS are. */
#define KS_STATUS_TEXT_MAX 1024

/* The header first (32 bytes), then the text: a status with short reasons
 * is one or two cache lines however large its buffer. */
struct ks_status {
    ks_code_t code;
    unsigned n_reasons;
    const char *plugin; /* failed plugin (its descriptor's name), or NULL */
    /* reason i is text + (i ? end[i - 1] : 0), NUL-terminated; end[i] is
     * the offset after its NUL */
    uint16_t end[KS_STATUS_MAX_REASONS];
    char text[KS_STATUS_TEXT_MAX];
};

/* The i-th reason (i < st->n_reasons): valid while the status is, until
 * it is reset, cleared or its reasons are added to. */
static inline const char *ks_status_reason(const ks_status_t *st, unsigned i)
{
    return st->text + (i ? st->end[i - 1] : 0);
}

/* Copy src to dst (only the reason bytes in use); dst != src. Inline:
 * the Filter phase copies a rejected node's status once or twice. */
static inline void ks_status_copy(ks_status_t *dst, const ks_status_t *src)
{
    size_t used = src->n_reasons ? src->end[src->n_reasons - 1] : 0;
    memcpy(dst, src, offsetof(ks_status_t, text) + used);
}
/* Same code, plugin and reasons (by text). */
int ks_status_equal(const ks_status_t *a, const ks_status_t *b);
void ks_status_reset(ks_status_t *st);
void ks_status_add_reason(ks_status_t *st, const char *reason);
void ks_status_add_reasonf(ks_status_t *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Reasons joined with ", " into buf; returns buf. */
const char *ks_status_message(const ks_status_t *st, char *buf, size_t len);
/* Every reason joined with ", " (upstream Status.Message()), interned:
 * valid as long as the process; "" when none, "out of memory" when the
 * text cannot be made. Any thread. Only for the SDK's status_message,
 * whose text plugins may keep after the status (ABI 1.0): the host itself
 * joins into a buffer (ks_status_message). */
const char *ks_status_message_joined(const ks_status_t *st);
/* "Success", "Error", "Unschedulable", ... */
const char *ks_code_name(ks_code_t c);
/* Append src's reasons to dst (dst keeps its code); dst != src. */
void ks_status_merge_reasons(ks_status_t *dst, const ks_status_t *src);

#endif
