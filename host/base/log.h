/*
 * Host logging to stderr: "ksched: LEVEL: message". The threshold is set
 * once at start-up (ks_log_set_level); ks_log is thread-safe (one write(2)
 * per line).
 */
#ifndef KS_BASE_LOG_H
#define KS_BASE_LOG_H

/* The levels have the values of the SDK's KS_LOG_* (ksched/plugin.h), so a
 * plugin's level passes through unchanged; host_api.c checks that. */
enum ks_host_log_level {
    KS_LOGL_ERROR = 0,
    KS_LOGL_WARN,
    KS_LOGL_INFO,
    KS_LOGL_DEBUG
};

void ks_log_set_level(int level); /* KS_LOGL_ERROR .. KS_LOGL_DEBUG */
int ks_log_level(void);
void ks_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
