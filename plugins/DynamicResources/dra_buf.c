/* A growable text buffer for JSON bodies and messages. A failed
 * allocation sets `oom` and leaves the text as it was. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra.h"

static int reserve(dra_buf_t *b, size_t more)
{
    size_t nc;
    char *ns;
    if (b->oom)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    nc = b->cap ? b->cap : 256;
    while (nc < b->len + more + 1)
        nc *= 2;
    if ((ns = realloc(b->s, nc)) == NULL) {
        b->oom = 1;
        return -1;
    }
    b->s = ns;
    b->cap = nc;
    return 0;
}

void dra_buf_put(dra_buf_t *b, const char *s)
{
    size_t n = strlen(s);
    if (reserve(b, n) != 0)
        return;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

void dra_buf_printf(dra_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void dra_buf_json(dra_buf_t *b, const char *s)
{
    char esc[8];
    dra_buf_put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            esc[2] = '\0';
            dra_buf_put(b, esc);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            dra_buf_put(b, esc);
        } else {
            esc[0] = (char)c;
            esc[1] = '\0';
            dra_buf_put(b, esc);
        }
    }
    dra_buf_put(b, "\"");
}

void dra_buf_free(dra_buf_t *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}
