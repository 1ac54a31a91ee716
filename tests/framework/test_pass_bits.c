/*
 * framework/pass_bits.h: ks_pass_mask, ks_pass_all and ks_flags_count
 * against byte-by-byte loops, on every length up to 64 (the mask) or 300
 * (the counts, at every offset of a word) and on random bytes.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "framework/pass_bits.h"
#include "fw_testlib.h"

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

START_TEST(test_pass_mask_matches_bytes)
{
    uint8_t pass[64];
    uint32_t n, r, round;
    for (round = 0; round < 40; round++)
        for (n = 0; n <= 64; n++) {
            uint64_t want = 0, got;
            for (r = 0; r < 64; r++)
                pass[r] = (uint8_t)(next_rand() & 1);
            for (r = 0; r < n; r++)
                if (pass[r])
                    want |= UINT64_C(1) << r;
            got = ks_pass_mask(pass, n);
            ck_assert_msg(got == want,
                          "n %u: mask %016llx, bytes say %016llx", n,
                          (unsigned long long)got, (unsigned long long)want);
            ck_assert_uint_eq(ks_pass_all(n) & want, want);
            ck_assert_uint_eq(__builtin_popcountll(ks_pass_all(n)), n);
        }
}
END_TEST

START_TEST(test_flags_count_matches_bytes)
{
    uint8_t f[320];
    uint32_t off, n, i, v, round;
    for (round = 0; round < 4; round++)
        for (off = 0; off < 8; off++)
            for (n = 0; n <= 300; n++) {
                uint32_t want[4] = {0, 0, 0, 0}, got[4];
                for (i = 0; i < sizeof f; i++)
                    /* mostly one value, as a Filter's flags are */
                    f[i] = (uint8_t)(next_rand() % 8 < 5 ? round % 4
                                                        : next_rand() % 4);
                for (i = 0; i < n; i++)
                    want[f[off + i]]++;
                ks_flags_count(f + off, n, got);
                for (v = 0; v < 4; v++)
                    ck_assert_msg(got[v] == want[v],
                                  "offset %u, %u bytes: %u of value %u, "
                                  "bytes say %u",
                                  off, n, got[v], v, want[v]);
            }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass-bits");
    TCase *tc = tcase_create("pass-bits");
    tcase_add_test(tc, test_pass_mask_matches_bytes);
    tcase_add_test(tc, test_flags_count_matches_bytes);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
