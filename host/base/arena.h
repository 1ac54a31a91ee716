/*
 * Private: a bump allocator for objects whose memory is released at once:
 * one cluster object (a pod, a node...), or one scheduler configuration.
 *
 * The arena header lives inside its first chunk, so creating one is a
 * single malloc. Allocations are zero-filled and aligned for any type.
 * Not thread-safe: one arena is filled by one thread.
 */
#ifndef KS_BASE_ARENA_H
#define KS_BASE_ARENA_H

#include <stddef.h>

typedef struct ks_arena ks_arena_t;

/* `first` is the expected total size (a hint); NULL on ENOMEM. */
ks_arena_t *ks_arena_new(size_t first);
/* Zero-filled block of n bytes; NULL on ENOMEM. n == 0 gives a valid
 * unique pointer. */
void *ks_arena_alloc(ks_arena_t *a, size_t n);
/* Copies of `s` / of `len` bytes of `s` plus a NUL; NULL on ENOMEM. */
char *ks_arena_strdup(ks_arena_t *a, const char *s);
char *ks_arena_strndup(ks_arena_t *a, const char *s, size_t len);
/* Bytes handed out so far (a size hint for the next arena). */
size_t ks_arena_used(const ks_arena_t *a);
/* Non-zero once an allocation has failed (a request too large for size_t
 * arithmetic counts as one): lets a builder check once at the end. */
int ks_arena_failed(const ks_arena_t *a);
void ks_arena_free(ks_arena_t *a);

#endif
