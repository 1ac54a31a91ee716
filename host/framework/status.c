/*
 * Statuses (status.h): reasons are interned through a small per-thread
 * cache. A reason that cannot be interned (out of memory) is stored as the
 * static text "out of memory", so a status never holds NULL.
 */
#include "status.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "ksched/helpers.h"

void ks_status_reset(ks_status_t *st)
{
    st->code = KS_SUCCESS;
    st->plugin = NULL;
    st->n_reasons = 0;
}

/* Plugins mostly pass the same literal for a reason ("Insufficient cpu")
 * on thousands of nodes: a small per-thread cache from the caller's pointer
 * to the interned copy spares the intern table's lock. The text is compared
 * on a hit, so a reused buffer with new contents is interned afresh. */
#define REASON_CACHE 16

static _Thread_local struct {
    const char *from;
    const char *interned;
} reason_cache[REASON_CACHE];

static const char reason_oom[] = "out of memory";

static const char *intern_reason(const char *r)
{
    unsigned h = (unsigned)(((uintptr_t)r >> 3) ^ ((uintptr_t)r >> 11)) %
                 REASON_CACHE;
    const char *in;
    if (reason_cache[h].from == r && strcmp(reason_cache[h].interned, r) == 0)
        return reason_cache[h].interned;
    if ((in = ks_intern_str(ks_intern_global(), r)) == NULL)
        return reason_oom; /* not cached: the next call tries again */
    reason_cache[h].from = r;
    reason_cache[h].interned = in;
    return in;
}

void ks_status_add_reason(ks_status_t *st, const char *reason)
{
    if (st->n_reasons >= KS_STATUS_MAX_REASONS)
        return;
    st->reasons[st->n_reasons++] = intern_reason(reason ? reason : "");
}

void ks_status_add_reasonf(ks_status_t *st, const char *fmt, ...)
{
    char buf[KS_STATUS_REASON_MAX];
    va_list ap;
    if (st->n_reasons >= KS_STATUS_MAX_REASONS)
        return; /* full (or a bulk call's scratch): nothing to format */
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ks_status_add_reason(st, buf);
}

const char *ks_status_message(const ks_status_t *st, char *buf, size_t len)
{
    ks_strs_join(buf, len, st->reasons, st->n_reasons);
    return buf;
}

const char *ks_status_message_joined(const ks_status_t *st)
{
    size_t len;
    char *buf;
    const char *in;
    if (st == NULL || st->n_reasons == 0)
        return "";
    if (st->n_reasons == 1)
        return st->reasons[0];
    len = ks_strs_join(NULL, 0, st->reasons, st->n_reasons) + 1;
    if ((buf = malloc(len)) == NULL)
        return reason_oom;
    ks_strs_join(buf, len, st->reasons, st->n_reasons);
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
         i++)
        dst->reasons[dst->n_reasons++] = src->reasons[i];
}
