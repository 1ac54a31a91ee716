/*
 * Byte flags read as bits. The bulk Filter's pass[] bytes (0 or 1,
 * framework.h ks_fw_run_filter_bulk) as a bit mask, for loops over the
 * passed or the rejected nodes of a run with one count-trailing-zeros a
 * node instead of a test of every byte; and a Filter job's feasible_flag
 * bytes (0 to 3, schedule_pod.c) counted by value, eight at a time. Any
 * thread; no state.
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

/* The bytes of m (each 0 or 1) added up: the sum gathered into the top
 * byte by one multiplication (it is at most 8, so no byte carries). A
 * popcount is a library call where the build does not assume the CPU
 * has the instruction. */
static inline uint32_t ks_bytes_sum01(uint64_t m)
{
    return (uint32_t)((m * UINT64_C(0x0101010101010101)) >> 56);
}

/* The n bytes of f counted by their low two bits: c[v] bytes of value v
 * (0 to 3). Bit 0 and bit 1 of each byte of a word are moved to bit 0
 * and each value's bytes added up at once. */
static inline void ks_flags_count(const uint8_t *f, uint32_t n, uint32_t c[4])
{
    const uint64_t b0 = UINT64_C(0x0101010101010101);
    uint32_t i = 0;
    c[0] = c[1] = c[2] = c[3] = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w, l, h;
        memcpy(&w, f + i, 8);
        l = w & b0;
        h = (w >> 1) & b0;
        c[0] += ks_bytes_sum01(~(l | h) & b0);
        c[1] += ks_bytes_sum01(l & ~h);
        c[2] += ks_bytes_sum01(h & ~l);
        c[3] += ks_bytes_sum01(l & h);
    }
    for (; i < n; i++)
        c[f[i] & 3]++;
}

#endif
