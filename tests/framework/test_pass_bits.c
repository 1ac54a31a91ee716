/*
 * framework/pass_bits.h: ks_pass_mask and ks_pass_all against
 * byte-by-byte loops, on every length up to 64 and on random bytes.
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

int main(void)
{
    Suite *s = suite_create("pass-bits");
    TCase *tc = tcase_create("pass-bits");
    tcase_add_test(tc, test_pass_mask_matches_bytes);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
