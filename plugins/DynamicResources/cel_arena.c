/* Arena allocation for the CEL subset: a program's tree and an
 * evaluation's temporary values are freed all at once. */
#include "cel_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_cel_arena_block {
    ks_cel_arena_block_t *next;
    size_t used, cap;
    max_align_t data[];
};

#define BLOCK_DEFAULT 8192

void *ks_cel_arena_alloc(ks_cel_arena_t *a, size_t n)
{
    size_t al = sizeof(max_align_t);
    n = (n + al - 1) / al * al;
    if (n == 0)
        n = al;
    ks_cel_arena_block_t *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_DEFAULT ? n : BLOCK_DEFAULT;
        b = malloc(sizeof(*b) + cap);
        if (!b) {
            a->failed = 1;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *ks_cel_arena_strndup(ks_cel_arena_t *a, const char *s, size_t n)
{
    char *p = ks_cel_arena_alloc(a, n + 1);
    if (p && n)
        memcpy(p, s, n);
    return p;
}

void ks_cel_arena_free(ks_cel_arena_t *a)
{
    ks_cel_arena_block_t *b = a->head;
    while (b) {
        ks_cel_arena_block_t *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

void ks_cel_errf(char *err, size_t errlen, int col, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    int k = col > 0 ? snprintf(err, errlen, "column %d: ", col) : 0;
    if (k < 0 || (size_t)k >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
}
