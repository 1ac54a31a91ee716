/* Evaluates CEL selector expressions for the differential test, reading
 * line commands on stdin (tab-separated, one device at a time):
 *   R                         reset the device
 *   D <driver>                device.driver
 *   A <domain> <id> <i|b|s|v> <value>   an attribute (int, bool, string, version)
 *   C <domain> <id> <quantity>          a capacity
 *   M <0|1>                   device.allowMultipleAllocations
 *   L <limit>                 the cost limit for the next evaluations (0: default)
 *   E <expression>            prints "true", "false", "error: ..." or
 *                             "compile-error: ..." on one line
 *   B <n> <expression>        compiles once, evaluates n times and prints
 *                             the result and the mean time of one evaluation */
#include "cel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXN 64

static char *field(char **p)
{
    char *s = *p;
    if (!s)
        return "";
    char *t = strchr(s, '\t');
    if (t) {
        *t = 0;
        *p = t + 1;
    } else {
        *p = NULL;
    }
    return s;
}

int main(void)
{
    static char line[1 << 16];
    ks_cel_attr_t attrs[MAXN];
    ks_cel_capacity_t caps[MAXN];
    char *owned[4 * MAXN + 8];
    size_t nowned = 0;
    ks_cel_device_t dev = { .driver = "", .attrs = attrs, .caps = caps };
    uint64_t limit = 0;
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = 0;
        if (!n)
            continue;
        char *rest = n > 2 ? line + 2 : NULL;
        switch (line[0]) {
        case 'R':
            for (size_t i = 0; i < nowned; i++)
                free(owned[i]);
            nowned = 0;
            dev.n_attrs = dev.n_caps = 0;
            dev.driver = "";
            dev.allow_multiple_allocations = 0;
            break;
        case 'D':
            if (nowned < sizeof owned / sizeof owned[0])
                dev.driver = owned[nowned++] = strdup(rest ? rest : "");
            break;
        case 'A': case 'C': {
            char *f[4];
            for (int i = 0; i < 4; i++) {
                f[i] = strdup(field(&rest));
                if (nowned < sizeof owned / sizeof owned[0])
                    owned[nowned++] = f[i];
            }
            if (line[0] == 'A' && dev.n_attrs < MAXN) {
                ks_cel_attr_t *a = &attrs[dev.n_attrs++];
                memset(a, 0, sizeof *a);
                a->domain = f[0];
                a->id = f[1];
                a->type = f[2][0] == 'i' ? KS_CEL_ATTR_INT : f[2][0] == 'b' ? KS_CEL_ATTR_BOOL
                          : f[2][0] == 'v' ? KS_CEL_ATTR_VERSION : KS_CEL_ATTR_STRING;
                a->i = strtoll(f[3], NULL, 10);
                a->b = !strcmp(f[3], "true");
                a->s = f[3];
            } else if (line[0] == 'C' && dev.n_caps < MAXN) {
                ks_cel_capacity_t *c = &caps[dev.n_caps++];
                c->domain = f[0];
                c->id = f[1];
                c->value = f[2];
            }
            break;
        }
        case 'M':
            dev.allow_multiple_allocations = rest && rest[0] == '1';
            break;
        case 'L':
            limit = rest ? strtoull(rest, NULL, 10) : 0;
            break;
        case 'E': {
            char err[1024];
            ks_cel_program_t *p = ks_cel_compile(rest ? rest : "", err, sizeof err);
            if (!p) {
                printf("compile-error: %s\n", err);
            } else {
                ks_cel_result_t r = ks_cel_eval(p, &dev, limit, err, sizeof err);
                if (r == KS_CEL_ERROR)
                    printf("error: %s\n", err);
                else
                    printf("%s\n", r == KS_CEL_TRUE ? "true" : "false");
                ks_cel_free(p);
            }
            fflush(stdout);
            break;
        }
        case 'B': {
            char err[1024], *end;
            long n = strtol(rest ? rest : "", &end, 10);
            ks_cel_program_t *p = ks_cel_compile(*end ? end + 1 : "", err, sizeof err);
            if (!p || n <= 0) {
                printf("compile-error: %s\n", p ? "no count" : err);
                ks_cel_free(p);
                break;
            }
            struct timespec t0, t1;
            ks_cel_result_t r = KS_CEL_ERROR;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (long i = 0; i < n; i++)
                r = ks_cel_eval(p, &dev, limit, err, sizeof err);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
            printf("%s, %.0f ns per evaluation (%ld evaluations)\n",
                   r == KS_CEL_TRUE ? "true" : r == KS_CEL_FALSE ? "false" : "error", ns, n);
            ks_cel_free(p);
            fflush(stdout);
            break;
        }
        default:
            fprintf(stderr, "unknown command '%c'\n", line[0]);
            return 2;
        }
    }
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    return 0;
}
