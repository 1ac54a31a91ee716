/*
 * Deterministic mutation fuzzing of the two YAML readers users feed
 * directly: cluster manifests (ks_manifest_load_string) and scheduler
 * configurations (ks_config_load_string). Every seed file given on the
 * command line is mutated many times (byte flips, deletions, duplicated
 * spans, inserted YAML punctuation, truncation); each result must either
 * load, or fail with a non-zero code and a non-empty message that names the
 * input. Run under AddressSanitizer (tests/run-all.sh does), this also
 * catches memory errors on malformed input.
 *
 * Usage: fuzz_parsers ITERATIONS SEED_FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "cluster/objects.h"
#include "config/config.h"

static uint64_t rng = 0x243f6a8885a308d3ull; /* fixed: runs are repeatable */

static uint32_t next(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

/* One mutation of src into a new buffer. */
static char *mutate(const char *src, size_t len, size_t *out_len)
{
    static const char punct[] = ":-[]{}'\"#&*!|>%@`,?\t\n ";
    size_t cap = len * 2 + 64, n = len, i, a, b;
    char *m = malloc(cap);
    unsigned k, rounds = 1 + next(4);
    memcpy(m, src, len);
    for (k = 0; k < rounds && n > 0; k++) {
        switch (next(6)) {
        case 0: /* flip a byte */
            m[next((uint32_t)n)] ^= (char)(1u << next(8));
            break;
        case 1: /* delete a span */
            a = next((uint32_t)n);
            b = a + next(16) + 1;
            if (b > n)
                b = n;
            memmove(m + a, m + b, n - b);
            n -= b - a;
            break;
        case 2: /* duplicate a span */
            a = next((uint32_t)n);
            b = next(64) + 1;
            if (a + b > n)
                b = n - a;
            if (n + b < cap) {
                memmove(m + a + b, m + a, n - a);
                n += b;
            }
            break;
        case 3: /* insert YAML punctuation */
            if (n + 1 < cap) {
                a = next((uint32_t)n);
                memmove(m + a + 1, m + a, n - a);
                m[a] = punct[next(sizeof punct - 1)];
                n++;
            }
            break;
        case 4: /* truncate */
            n = next((uint32_t)n) + 1;
            break;
        default: /* replace a digit or letter run's character */
            i = next((uint32_t)n);
            m[i] = (char)("0123456789aZ-."[next(14)]);
            break;
        }
    }
    *out_len = n;
    return m;
}

int main(int argc, char **argv)
{
    long iters;
    int f, failures = 0;
    unsigned long loaded = 0, refused = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: %s ITERATIONS SEED_FILE...\n", argv[0]);
        return 2;
    }
    iters = strtol(argv[1], NULL, 10);
    for (f = 2; f < argc; f++) {
        size_t len;
        char *seed = slurp(argv[f], &len);
        long it;
        if (seed == NULL) {
            fprintf(stderr, "FAIL: cannot read seed %s\n", argv[f]);
            return 1;
        }
        for (it = 0; it < iters; it++) {
            size_t mlen;
            char *m = mutate(seed, len, &mlen);
            ks_manifest_t man;
            ks_config_t *cfg = NULL;
            ks_error_t e1 = {0}, e2 = {0};
            int rc;
            memset(&man, 0, sizeof man);
            rc = ks_manifest_load_string(&man, "fuzz.yaml", m, mlen,
                                         ks_intern_global(), NULL, &e1);
            if (rc != 0 && (e1.code == 0 || e1.msg[0] == '\0' ||
                            strstr(e1.msg, "fuzz.yaml") == NULL)) {
                fprintf(stderr, "FAIL: manifest error without a message "
                                "naming the input (seed %s, iteration %ld): "
                                "code %d msg \"%s\"\n",
                        argv[f], it, e1.code, e1.msg);
                failures++;
            }
            rc == 0 ? loaded++ : refused++;
            ks_manifest_free(&man);
            rc = ks_config_load_string("fuzz.yaml", m, mlen, &cfg, &e2);
            if (rc != 0 && (e2.code == 0 || e2.msg[0] == '\0' ||
                            strstr(e2.msg, "fuzz.yaml") == NULL)) {
                fprintf(stderr, "FAIL: config error without a message "
                                "naming the input (seed %s, iteration %ld): "
                                "code %d msg \"%s\"\n",
                        argv[f], it, e2.code, e2.msg);
                failures++;
            }
            if (rc == 0 && cfg == NULL) {
                fprintf(stderr, "FAIL: config loaded but NULL\n");
                failures++;
            }
            rc == 0 ? loaded++ : refused++;
            ks_config_free(cfg);
            free(m);
            if (failures > 10)
                break;
        }
        free(seed);
    }
    printf("%lu inputs loaded, %lu refused with a message, %d failures\n",
           loaded, refused, failures);
    return failures ? 1 : 0;
}
