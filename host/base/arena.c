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
    int failed;          /* an allocation failed */
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
    size_t size;
    arena_chunk_t *c;
    ks_arena_t *a;
    if (first > SIZE_MAX / 4) /* only a hint: no overflow below */
        first = ARENA_MIN_CHUNK;
    size = round_up(first < ARENA_MIN_CHUNK ? ARENA_MIN_CHUNK : first);
    c = chunk_new(hdr + size);
    if (c == NULL)
        return NULL;
    a = (ks_arena_t *)(void *)c->data;
    c->used = hdr;
    a->head = c;
    a->total = 0;
    a->failed = 0;
    return a;
}

void *ks_arena_alloc(ks_arena_t *a, size_t n)
{
    arena_chunk_t *c = a->head;
    void *p;
    if (n > SIZE_MAX / 2) { /* round_up and chunk sizes would overflow */
        a->failed = 1;
        return NULL;
    }
    n = round_up(n ? n : 1);
    if (c->size - c->used < n) {
        /* grow geometrically: the next chunk is as big as all before it */
        size_t size = a->total > ARENA_MIN_CHUNK ? round_up(a->total)
                                                 : ARENA_MIN_CHUNK;
        if (size < n)
            size = n;
        c = chunk_new(size);
        if (c == NULL) {
            a->failed = 1;
            return NULL;
        }
        c->next = a->head;
        a->head = c;
    }
    p = c->data + c->used;
    c->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

char *ks_arena_strndup(ks_arena_t *a, const char *s, size_t len)
{
    char *d;
    if (len == SIZE_MAX) {
        a->failed = 1;
        return NULL;
    }
    if ((d = ks_arena_alloc(a, len + 1)) == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *ks_arena_strdup(ks_arena_t *a, const char *s)
{
    return ks_arena_strndup(a, s, strlen(s));
}

size_t ks_arena_used(const ks_arena_t *a)
{
    return a->total;
}

int ks_arena_failed(const ks_arena_t *a)
{
    return a->failed;
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
