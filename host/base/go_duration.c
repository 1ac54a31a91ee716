/* Go duration strings (time.ParseDuration) into milliseconds. */
#include "base/go_duration.h"

#include <string.h>

int ks_go_duration_parse(const char *s, int64_t *ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3},
                 {"\xce\xbcs", 1e-3}, {"ms", 1}, {"s", 1e3},
                 {"m", 6e4}, {"h", 3.6e6}};
    double total = 0;
    int neg = 0;
    if (s == NULL || *s == '\0')
        return -1;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return 0;
    }
    if (*s == '\0')
        return -1;
    while (*s) {
        double v = 0, scale = 1;
        int digits = 0;
        size_t i, best = 0, best_len = 0;
        while (*s >= '0' && *s <= '9') {
            v = v * 10 + (*s++ - '0');
            digits++;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                scale /= 10;
                v += (*s++ - '0') * scale;
                digits++;
            }
        }
        if (digits == 0)
            return -1;
        for (i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen(units[i].unit);
            if (strncmp(s, units[i].unit, n) == 0 && n > best_len) {
                best = i;
                best_len = n;
            }
        }
        if (best_len == 0)
            return -1; /* a number without a unit */
        total += v * units[best].ms;
        s += best_len;
        if (total > 9.2e15)
            return -1;
    }
    *ms = (int64_t)(neg ? -total : total);
    return 0;
}
