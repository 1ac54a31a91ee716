/*
 * Growing an array without losing it: the framework's one way to make room
 * in a growing array (the out-of-memory policy is in scheduler_impl.h).
 * Header-only; the caller owns the array, so any thread that owns it.
 */
#ifndef KS_FW_GROW_H
#define KS_FW_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Room for `need` elements of `size` bytes in block `a`, whose capacity is
 * *cap: `a` itself when it has room; else a larger block (the capacity
 * doubled, from `first` when it was 0, until it holds `need`) and *cap
 * updated. NULL when out of memory, with `a` and *cap untouched and still
 * the caller's. `need` and `first` are at least 1. */
static inline void *ks_fw_grow(void *a, size_t *cap, size_t need, size_t size,
                               size_t first)
{
    size_t c = *cap ? *cap : first;
    void *p;
    if (need <= *cap)
        return a;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / size || (p = realloc(a, c * size)) == NULL)
        return NULL;
    *cap = c;
    return p;
}

#endif
