#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buf_grow(ks_buf_t *b, size_t need)
{
    size_t cap;
    char *d;
    if (b->oom)
        return -1;
    if (b->len + need + 1 <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + need + 1)
        cap *= 2;
    d = realloc(b->data, cap);
    if (d == NULL) {
        b->oom = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void ks_buf_append(ks_buf_t *b, const char *s, size_t n)
{
    if (buf_grow(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ks_buf_puts(ks_buf_t *b, const char *s)
{
    ks_buf_append(b, s, strlen(s));
}

void ks_buf_printf(ks_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        ks_buf_append(b, small, (size_t)n);
        return;
    }
    if (buf_grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ks_buf_reset(ks_buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void ks_buf_free(ks_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *ks_buf_steal(ks_buf_t *b, size_t *len)
{
    char *d;
    if (b->oom) {
        ks_buf_free(b);
        return NULL;
    }
    if (b->data == NULL)
        ks_buf_append(b, "", 0);
    d = b->data;
    if (len)
        *len = b->len;
    memset(b, 0, sizeof *b);
    return d;
}
