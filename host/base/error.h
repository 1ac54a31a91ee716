/*
 * Error codes and the error record every host function fills.
 *
 * Functions that can fail return 0 on success or a negative KS_E* code and,
 * when given a non-NULL ks_error_t, fill it with a message a caller can print
 * as is ("FILE:LINE:COL: message"). ks_error_t is a plain value: no
 * allocation, no cleanup. Thread-safe: yes (no shared state).
 */
#ifndef KS_BASE_ERROR_H
#define KS_BASE_ERROR_H

#include <stddef.h>

#define KS_ERRNO_MAP(X)                                                        \
    X(EINVAL, "invalid argument")                                              \
    X(ENOMEM, "out of memory")                                                 \
    X(EIO, "input/output error")                                               \
    X(EPARSE, "malformed input")                                               \
    X(ESCHEMA, "schema error")                                                 \
    X(ENOTPLUGIN, "not a ksched plugin")                                       \
    X(EABIMAJOR, "plugin ABI major version differs")                          \
    X(EABIMINOR, "plugin ABI minor version newer than the host")              \
    X(ESHORT, "plugin descriptor too small")                                   \
    X(ENONAME, "plugin has no name")                                           \
    X(EDUPNAME, "duplicate plugin name")                                       \
    X(ENOTFOUND, "not found")                                                  \
    X(EMISSINGFN, "plugin does not implement an enabled extension point")     \
    X(EDUPPOINT, "plugin enabled twice at one extension point")               \
    X(EQUEUESORT, "profile needs exactly one QueueSort plugin")               \
    X(ENOBIND, "profile has no Bind plugin")                                   \
    X(EDUPCONFIG, "repeated pluginConfig")                                     \
    X(EWEIGHT, "invalid score weight")                                         \
    X(ECREATE, "plugin create failed")                                         \
    X(EUNAVAILABLE, "plugin not available in ksched")                          \
    X(EDLOPEN, "cannot load shared object")                                    \
    X(EEXIST, "already exists")                                                \
    X(EPLUGIN, "plugin returned an error")                                     \
    X(EHTTP, "HTTP request failed")                                            \
    X(ETLS, "TLS verification failed")                                         \
    X(EAUTH, "authentication failed")                                          \
    X(EFORBIDDEN, "forbidden")                                                 \
    X(ECONFLICT, "conflict")                                                   \
    X(EGONE, "resource version too old")                                       \
    X(ETIMEDOUT, "timed out")                                                  \
    X(EQUARANTINED, "plugin version quarantined")

/* The codes: KS_OK, then KS_EINVAL = -999, KS_ENOMEM = -998, ... in the
 * map's order (append new codes at the end: the values are stable). Functions
 * return them as int. */
typedef enum ks_errno {
    KS_OK = 0,
#define KS_ERR_ENUM(name, msg) KS_##name,
    KS_ERR_FIRST_ = -1000,
    KS_ERRNO_MAP(KS_ERR_ENUM)
#undef KS_ERR_ENUM
    KS_ERR_LAST_
} ks_errno_t;

#define KS_ERROR_MSG_MAX 8192

typedef struct ks_error {
    int code;
    char msg[KS_ERROR_MSG_MAX];
} ks_error_t;

/* Make `e` empty (code 0, message "") without clearing the whole message
 * buffer: `ks_error_t e = {0}` writes 8 KiB, too much for a path that runs
 * every scheduling cycle and rarely fails. */
static inline void ks_error_init(ks_error_t *e)
{
    e->code = 0;
    e->msg[0] = '\0';
}

/* "KS_EINVAL" etc. Never NULL. */
const char *ks_err_name(int code);
/* Human text for a code. Never NULL. */
const char *ks_strerror(int code);

/* Fill `e` (may be NULL) with code and a printf-style message; returns code.
 * When `e` already holds a message it is replaced. */
int ks_error_set(ks_error_t *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append "\n" + message to `e` without changing its code (for lists of
 * problems). Sets the code if `e` had none. Returns e->code. */
int ks_error_append(ks_error_t *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* KS_BASE_ERROR_H */
