/*
 * String interning: one copy of every distinct string, so that equal strings
 * have equal addresses (the guarantee ksched/types.h gives plugins).
 *
 * Strings interned with ks_intern_str/strn live until the table is freed
 * (they are pinned); counted ones (ks_intern_ref) live while referenced. ks_intern_str() is
 * thread-safe (internally locked); lookups of an already interned string are
 * lock-free-fast in the common case but correctness never depends on it.
 */
#ifndef KS_BASE_INTERN_H
#define KS_BASE_INTERN_H

#include <stddef.h>

typedef struct ks_intern ks_intern_t;

ks_intern_t *ks_intern_new(void);
void ks_intern_free(ks_intern_t *t);
/* Intern `s` (NUL-terminated). Never returns NULL except on ENOMEM. */
const char *ks_intern_str(ks_intern_t *t, const char *s);
/* Intern the first `n` bytes of `s`. */
const char *ks_intern_strn(ks_intern_t *t, const char *s, size_t n);
/* Counted interning, for strings that live only as long as one cluster
 * object (a pod's uid, name and annotations): ks_intern_ref returns the
 * same pointer ks_intern_str would and counts the reference; each
 * ks_intern_unref gives one back, and the string is freed with the last
 * one (unless someone pinned it with ks_intern_str/strn, which makes it
 * permanent). Thread-safe. NULL on ENOMEM. */
const char *ks_intern_ref(ks_intern_t *t, const char *s, size_t n);
void ks_intern_unref(ks_intern_t *t, const char *s);
/* The interned copy of `s` if there is one, without creating or pinning
 * it (for lookups by content); NULL otherwise. */
const char *ks_intern_lookup(ks_intern_t *t, const char *s);
/* Distinct strings held, and the bytes of the counted ones (tests,
 * metrics). */
size_t ks_intern_count(ks_intern_t *t);
size_t ks_intern_counted_bytes(ks_intern_t *t);
/* The interned "" (also what ks_intern_str(t, "") returns). */
const char *ks_intern_empty(ks_intern_t *t);
/* The process-wide table used by the host (created on first use). */
ks_intern_t *ks_intern_global(void);

#endif
