/*
 * Byte flags read as bits. The bulk Filter's pass[] bytes (0 or 1,
 * framework.h ks_fw_run_filter_bulk) as a bit mask, for loops over the
 * passed or the rejected nodes of a run with one count-trailing-zeros a
 * node instead of a test of every byte. Any thread; no state.
 */
#ifndef KS_PASS_BITS_H
#define KS_PASS_BITS_H

#include <stdint.h>
#include <string.h>

/* Bit r set when pass[r] is 1, for r < n (<= 64): pass[] holds 0 or 1,
 * with room for whole words of 8 (KS_FW_BULK_MAX). */
static inline uint64_t ks_pass_mask(const uint8_t *pass, uint32_t n)
{
    uint64_t m = 0, x;
    uint32_t w;
    for (w = 0; w < n; w += 8) {
        memcpy(&x, pass + w, 8);
        /* the low bit of each byte, gathered into the top byte */
        m |= (((x & UINT64_C(0x0101010101010101)) *
               UINT64_C(0x0102040810204080)) >> 56) << w;
    }
    return n >= 64 ? m : m & ((UINT64_C(1) << n) - 1);
}

/* The bits of positions [0, n), n <= 64. */
static inline uint64_t ks_pass_all(uint32_t n)
{
    return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

#endif
