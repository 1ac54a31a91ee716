/*
 * Host logging to stderr: "ksched: LEVEL: message". The threshold is set
 * once at start-up (ks_log_set_level); ks_log is thread-safe (one write(2)
 * per line).
 */
#ifndef KS_LOG_H
#define KS_LOG_H

void ks_log_set_level(int level); /* KS_LOG_ERROR .. KS_LOG_DEBUG */
int ks_log_level(void);
void ks_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
