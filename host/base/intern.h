/*
 * String interning: one copy of every distinct string, so that equal strings
 * have equal addresses (the guarantee ksched/types.h gives plugins).
 *
 * Interned strings live until the table is freed. ks_intern_str() is
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
/* The interned "" (also what ks_intern_str(t, "") returns). */
const char *ks_intern_empty(ks_intern_t *t);
/* The process-wide table used by the host (created on first use). */
ks_intern_t *ks_intern_global(void);

#endif
