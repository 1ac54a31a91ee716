/* The arena that owns every allocation reachable from a ks_config_t. */
#include "config_internal.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#define KS_CFG_BLOCK_MIN 4096

struct ks_cfg_arena_block {
    ks_cfg_arena_block_t *next;
    size_t used, cap; /* bytes of data[] */
    max_align_t data[];
};

ks_cfg_arena_t *ks_cfg_arena_new(void)
{
    return calloc(1, sizeof(ks_cfg_arena_t));
}

void ks_cfg_arena_free(ks_cfg_arena_t *a)
{
    ks_cfg_arena_block_t *b, *next;
    if (a == NULL)
        return;
    for (b = a->head; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

void *ks_cfg_arena_alloc(ks_cfg_arena_t *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    ks_cfg_arena_block_t *b = a->head;
    size_t need = (size + align - 1) / align * align;
    unsigned char *p;

    if (need == 0)
        need = align;
    if (need < size) { /* overflow */
        a->failed = 1;
        return NULL;
    }
    if (b == NULL || b->cap - b->used < need) {
        size_t cap = need > KS_CFG_BLOCK_MIN ? need : KS_CFG_BLOCK_MIN;
        b = malloc(sizeof *b + cap);
        if (b == NULL) {
            a->failed = 1;
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        /* A big block goes behind the current one so that the current
         * block's free space stays usable. */
        if (a->head != NULL && need > KS_CFG_BLOCK_MIN) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    p = (unsigned char *)b->data + b->used;
    b->used += need;
    memset(p, 0, size);
    return p;
}

char *ks_cfg_arena_strndup(ks_cfg_arena_t *a, const char *s, size_t len)
{
    char *d = ks_cfg_arena_alloc(a, len + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *ks_cfg_arena_strdup(ks_cfg_arena_t *a, const char *s)
{
    return ks_cfg_arena_strndup(a, s, strlen(s));
}
