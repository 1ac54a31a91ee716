/*
 * Statuses (status.h): each reason's text is copied into the status that
 * holds it. A status never holds NULL: a NULL reason is stored as "".
 */
#include "status.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "ksched/helpers.h"

static const char reason_oom[] = "out of memory";

void ks_status_reset(ks_status_t *st)
{
    st->code = KS_SUCCESS;
    st->plugin = NULL;
    st->n_reasons = 0;
}

/* Bytes of text in use. */
static size_t text_used(const ks_status_t *st)
{
    return st->n_reasons ? st->end[st->n_reasons - 1] : 0;
}

int ks_status_equal(const ks_status_t *a, const ks_status_t *b)
{
    size_t n;
    if (a->code != b->code || a->plugin != b->plugin ||
        a->n_reasons != b->n_reasons)
        return 0;
    n = text_used(a);
    return n == text_used(b) &&
           memcmp(a->end, b->end, a->n_reasons * sizeof a->end[0]) == 0 &&
           memcmp(a->text, b->text, n) == 0;
}

/* Append `len` bytes of `r` as the next reason, cut (at a UTF-8 character
 * boundary) to the room left; nothing when no room is left. */
static void append(ks_status_t *st, const char *r, size_t len)
{
    size_t at = text_used(st), room;
    if (st->n_reasons >= KS_STATUS_MAX_REASONS || at >= KS_STATUS_TEXT_MAX)
        return;
    room = KS_STATUS_TEXT_MAX - at - 1;
    if (len > room) {
        len = room;
        while (len > 0 && ((unsigned char)r[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(st->text + at, r, len);
    st->text[at + len] = '\0';
    st->end[st->n_reasons++] = (uint16_t)(at + len + 1);
}

void ks_status_add_reason(ks_status_t *st, const char *reason)
{
    if (reason == NULL)
        reason = "";
    append(st, reason, strlen(reason));
}

void ks_status_add_reasonf(ks_status_t *st, const char *fmt, ...)
{
    char buf[KS_STATUS_REASON_MAX];
    va_list ap;
    int n;
    if (st->n_reasons >= KS_STATUS_MAX_REASONS)
        return; /* full (or a bulk call's scratch): nothing to format */
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
    ks_status_add_reason(st, buf);
}

/* The reasons as an array of pointers into the status. */
static void reason_ptrs(const ks_status_t *st,
                        const char *out[KS_STATUS_MAX_REASONS])
{
    unsigned i;
    for (i = 0; i < st->n_reasons; i++)
        out[i] = ks_status_reason(st, i);
}

const char *ks_status_message(const ks_status_t *st, char *buf, size_t len)
{
    const char *r[KS_STATUS_MAX_REASONS];
    reason_ptrs(st, r);
    ks_strs_join(buf, len, r, st->n_reasons);
    return buf;
}

const char *ks_status_message_joined(const ks_status_t *st)
{
    const char *r[KS_STATUS_MAX_REASONS];
    size_t len;
    char *buf;
    const char *in;
    if (st == NULL || st->n_reasons == 0)
        return "";
    reason_ptrs(st, r);
    len = ks_strs_join(NULL, 0, r, st->n_reasons) + 1;
    if ((buf = malloc(len)) == NULL)
        return reason_oom;
    ks_strs_join(buf, len, r, st->n_reasons);
    in = ks_intern_str(ks_intern_global(), buf);
    free(buf);
    return in ? in : reason_oom;
}

const char *ks_code_name(ks_code_t c)
{
    switch (c) {
    case KS_SUCCESS: return "Success";
    case KS_ERROR: return "Error";
    case KS_UNSCHEDULABLE: return "Unschedulable";
    case KS_UNSCHEDULABLE_AND_UNRESOLVABLE: return "UnschedulableAndUnresolvable";
    case KS_WAIT: return "Wait";
    case KS_SKIP: return "Skip";
    case KS_PENDING: return "Pending";
    }
    return "Unknown";
}

void ks_status_merge_reasons(ks_status_t *dst, const ks_status_t *src)
{
    unsigned i;
    for (i = 0; i < src->n_reasons && dst->n_reasons < KS_STATUS_MAX_REASONS;
         i++) {
        const char *r = ks_status_reason(src, i);
        size_t len = src->end[i] - (size_t)(i ? src->end[i - 1] : 0) - 1;
        append(dst, r, len);
    }
}
