/* Deterministic mutation fuzzing of the CEL subset, run as an ordinary
 * test: seed selector expressions are mutated (bytes flipped, inserted,
 * deleted, spliced with tokens) and random byte strings are added; every
 * input must compile or be refused with a message, and every compiled
 * program must evaluate to true, false or an error with a message (under
 * ASan/UBSan this also checks memory safety on malformed input).
 *   cel_robust [ITERATIONS] [SEED] */
#include "cel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const seeds[] = {
    "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model.startsWith(\"A100\")",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
    "device.attributes[\"gpu.example.com\"].version.isLessThan(semver(\"1.2.3\"))",
    "'abc'.matches('^(a|b)+[[:alpha:]]{2,3}$') || 'x'.matches('(?i)X*?\\\\d+\\\\b')",
    "[1, 2, 3][0] == 1 && {'a': [true]}['a'][0] && 2u * 3u == 6u && 1.5 < 2",
    "true ? -9223372036854775808 / -1 == 1 : size(device.attributes) > 0",
    "r'x' + '\\u00e9\\x41\\101' in {'a': 1} || b'\\xff' == b''",
    "has(device.attributes.x.y) || !(1 in [1]) || quantity('1.5e3m').add(2).isInteger()",
    "device.attributes['gpu.example.com'].cores * 2 > 100 && device.allowMultipleAllocations",
    "int('12') + uint(3) == 15 || string(1.5) == '1.5' || dyn(1) == 1.0",
    "[1, 2, 3].all(x, x > 0) && {'a': 1}.exists(k, k == 'a') && [1].map(x, x > 0, x * 2) == [2]",
    "cel.bind(g, device.attributes['gpu.example.com'], g.exists(id, id.startsWith('m')) && [[1]].all(l, l.exists_one(x, x == 1)))",
};
static const char *const tokens[] = {
    "(", ")", "[", "]", "{", "}", ".", ",", ":", "?", "&&", "||", "!", "-", "+", "*", "/",
    "%", "==", "!=", "<", "<=", ">", ">=", " in ", "'", "\"", "'''", "r'", "b'", "\\",
    "1", "1u", "1.0", "9223372036854775808", "0x", "1e", "null", "true", "device",
    ".size()", ".matches('", "quantity('", "semver('", "has(", "[0]", "{", "(?", "\\d",
    ".all(x, ", ".exists(", ".map(x, x, ", ".filter(", "x", "cel.bind(",
    "{1000}", "*", "+?", "|", "^", "$", "\xc3\xa9", "\xff", "\n",
};

static uint64_t state;
static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static const ks_cel_attr_t attrs[] = {
    { "gpu.example.com", "model", KS_CEL_ATTR_STRING, 0, 0, "A100" },
    { "gpu.example.com", "cores", KS_CEL_ATTR_INT, 108, 0, NULL },
    { "gpu.example.com", "mig", KS_CEL_ATTR_BOOL, 0, 1, NULL },
    { "gpu.example.com", "version", KS_CEL_ATTR_VERSION, 0, 0, "1.2.3-rc.1" },
    { "gpu.example.com", "bad", KS_CEL_ATTR_VERSION, 0, 0, "1.2" },
};
static const ks_cel_capacity_t caps[] = {
    { "gpu.example.com", "memory", "80Gi" },
    { "gpu.example.com", "odd", "1.5.5" },
};
static const ks_cel_device_t dev = { "gpu.example.com", attrs, 5, caps, 2, 1 };

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 20000;
    state = argc > 2 ? strtoull(argv[2], NULL, 10) : 88172645463325252ull;
    if (!state)
        state = 1;
    char buf[2048], err[512];
    long compiled = 0, refused = 0, evals[3] = { 0, 0, 0 };
    for (long it = 0; it < iterations; it++) {
        size_t n;
        if (next() % 10 == 0) {
            n = next() % 64;
            for (size_t i = 0; i < n; i++)
                buf[i] = (char)(next() % 255 + 1);
        } else {
            const char *s = seeds[next() % (sizeof seeds / sizeof seeds[0])];
            n = strlen(s);
            memcpy(buf, s, n);
            int edits = 1 + (int)(next() % 4);
            for (int e = 0; e < edits; e++) {
                size_t at = n ? next() % (n + 1) : 0;
                switch (next() % 4) {
                case 0: /* flip */
                    if (at < n)
                        buf[at] = (char)(next() % 255 + 1);
                    break;
                case 1: /* delete a run */
                    if (at < n) {
                        size_t k = 1 + next() % 8;
                        if (at + k > n)
                            k = n - at;
                        memmove(buf + at, buf + at + k, n - at - k);
                        n -= k;
                    }
                    break;
                default: { /* insert a token */
                    const char *t = tokens[next() % (sizeof tokens / sizeof tokens[0])];
                    size_t k = strlen(t);
                    if (n + k < sizeof buf - 1) {
                        memmove(buf + at + k, buf + at, n - at);
                        memcpy(buf + at, t, k);
                        n += k;
                    }
                    break;
                }
                }
            }
        }
        buf[n] = 0;
        err[0] = 0;
        ks_cel_program_t *p = ks_cel_compile(buf, err, sizeof err);
        if (!p) {
            refused++;
            if (!err[0]) {
                printf("refused without a message: %s\n", buf);
                return 1;
            }
            continue;
        }
        compiled++;
        for (int lim = 0; lim < 2; lim++) {
            err[0] = 0;
            ks_cel_result_t r = ks_cel_eval(p, &dev, lim ? 15 : 0, err, sizeof err);
            if (r == KS_CEL_ERROR && !err[0]) {
                printf("runtime error without a message: %s\n", buf);
                return 1;
            }
            evals[r + 1]++;
        }
        ks_cel_free(p);
    }
    printf("%ld inputs: %ld refused, %ld compiled (evaluations: %ld true, %ld false, %ld errors)\n",
           iterations, refused, compiled, evals[2], evals[1], evals[0]);
    return 0;
}
