#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Codes are part of messages and logs: appending keeps every value. */
_Static_assert(KS_EINVAL == -999 && KS_ETIMEDOUT == -970,
               "KS_ERRNO_MAP: append new codes at the end");

const char *ks_err_name(int code)
{
    switch (code) {
    case KS_OK: return "KS_OK";
#define KS_ERR_CASE(name, msg) case KS_##name: return "KS_" #name;
    KS_ERRNO_MAP(KS_ERR_CASE)
#undef KS_ERR_CASE
    }
    return "KS_EUNKNOWN";
}

const char *ks_strerror(int code)
{
    switch (code) {
    case KS_OK: return "success";
#define KS_ERR_CASE(name, msg) case KS_##name: return msg;
    KS_ERRNO_MAP(KS_ERR_CASE)
#undef KS_ERR_CASE
    }
    return "unknown error";
}

int ks_error_set(ks_error_t *e, int code, const char *fmt, ...)
{
    va_list ap;
    if (e == NULL)
        return code;
    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int ks_error_append(ks_error_t *e, int code, const char *fmt, ...)
{
    va_list ap;
    size_t off;
    if (e == NULL)
        return code;
    if (e->code == 0) {
        e->code = code;
        e->msg[0] = '\0';
    }
    off = strlen(e->msg);
    if (off > 0 && off + 1 < sizeof e->msg)
        e->msg[off++] = '\n', e->msg[off] = '\0';
    if (off < sizeof e->msg) {
        va_start(ap, fmt);
        vsnprintf(e->msg + off, sizeof e->msg - off, fmt, ap);
        va_end(ap);
    }
    return e->code;
}
