/*
 * A growable byte buffer for building responses and metrics text.
 *
 * A zeroed ks_buf_t is an empty buffer. The data is always NUL-terminated
 * once anything was appended. On ENOMEM the buffer is marked failed
 * (`oom` set) and further appends do nothing, so callers check once at
 * the end. Ownership: the buffer owns `data`; ks_buf_free() releases it,
 * ks_buf_steal() hands it to the caller. Not thread-safe.
 */
#ifndef KS_BASE_BUF_H
#define KS_BASE_BUF_H

#include <stddef.h>

typedef struct ks_buf {
    char *data;
    size_t len, cap;
    int oom;
} ks_buf_t;

void ks_buf_append(ks_buf_t *b, const char *s, size_t n);
void ks_buf_puts(ks_buf_t *b, const char *s);
void ks_buf_printf(ks_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Drop the contents, keep the allocation. */
void ks_buf_reset(ks_buf_t *b);
void ks_buf_free(ks_buf_t *b);
/* The data (malloc'd, NUL-terminated; never NULL unless oom) and its
 * length; the buffer is left empty. */
char *ks_buf_steal(ks_buf_t *b, size_t *len);

#endif
