#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cluster/intern.h"

void ks_status_reset(ks_status_t *st)
{
    st->code = KS_SUCCESS;
    st->plugin = NULL;
    st->n_reasons = 0;
}

void ks_status_add_reason(ks_status_t *st, const char *reason)
{
    if (st->n_reasons >= KS_STATUS_MAX_REASONS)
        return;
    st->reasons[st->n_reasons++] =
        ks_intern_str(ks_intern_global(), reason ? reason : "");
}

void ks_status_add_reasonf(ks_status_t *st, const char *fmt, ...)
{
    char buf[KS_STATUS_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ks_status_add_reason(st, buf);
}

const char *ks_status_message(const ks_status_t *st, char *buf, size_t len)
{
    size_t off = 0;
    unsigned i;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (i = 0; i < st->n_reasons && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                st->reasons[i]);
    return buf;
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
