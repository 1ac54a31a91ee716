/* Chunked bump allocator; see arena.h. */
#include "base/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN (alignof(max_align_t))
#define ARENA_MIN_CHUNK 512

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used;
    alignas(max_align_t) unsigned char data[];
} arena_chunk_t;

struct ks_arena {
    arena_chunk_t *head; /* chunk being filled; the first chunk is last */
    size_t total;        /* bytes handed out */
};

static size_t round_up(size_t n)
{
    return (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
}

static arena_chunk_t *chunk_new(size_t size)
{
    arena_chunk_t *c = malloc(sizeof(*c) + size);
    if (c == NULL)
        return NULL;
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

ks_arena_t *ks_arena_new(size_t first)
{
    size_t hdr = round_up(sizeof(ks_arena_t));
    size_t size = round_up(first < ARENA_MIN_CHUNK ? ARENA_MIN_CHUNK : first);
    arena_chunk_t *c = chunk_new(hdr + size);
    ks_arena_t *a;
    if (c == NULL)
        return NULL;
    a = (ks_arena_t *)(void *)c->data;
    c->used = hdr;
    a->head = c;
    a->total = 0;
    return a;
}

void *ks_arena_alloc(ks_arena_t *a, size_t n)
{
    arena_chunk_t *c = a->head;
    void *p;
    n = round_up(n ? n : 1);
    if (c->size - c->used < n) {
        /* grow geometrically: the next chunk is as big as all before it */
        size_t size = a->total > ARENA_MIN_CHUNK ? round_up(a->total)
                                                 : ARENA_MIN_CHUNK;
        if (size < n)
            size = n;
        c = chunk_new(size);
        if (c == NULL)
            return NULL;
        c->next = a->head;
        a->head = c;
    }
    p = c->data + c->used;
    c->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

size_t ks_arena_used(const ks_arena_t *a)
{
    return a->total;
}

void ks_arena_free(ks_arena_t *a)
{
    arena_chunk_t *c, *next;
    if (a == NULL)
        return;
    /* the arena itself lives in the last chunk of the list */
    for (c = a->head; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
}
