/* What the console costs a scheduling attempt: the time of one
 * ks_attempts_record (the hook at the end of every cycle, with the
 * extension point notes before it), over many pods so that the table's
 * slots are reused as in a long run. Prints ns per attempt.
 *
 * usage: console-cost [PODS [ATTEMPTS]]   (defaults 10000, 2000000) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"
#include "server/attempts.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long pods = argc > 1 ? atol(argv[1]) : 10000;
    long n = argc > 2 ? atol(argv[2]) : 2000000, i;
    ks_attempts_t *a = ks_attempts_new();
    char (*keys)[48] = calloc((size_t)pods, sizeof *keys);
    double t0, t;
    if (a == NULL || keys == NULL || pods <= 0)
        return 1;
    for (i = 0; i < pods; i++)
        snprintf(keys[i], sizeof keys[i], "default/pod-%ld", i);
    t0 = now();
    for (i = 0; i < n; i++) {
        ks_attempts_note_ep(a, KS_EP_PRE_FILTER, 1e-6);
        ks_attempts_note_ep(a, KS_EP_FILTER, 1e-5);
        ks_attempts_note_ep(a, KS_EP_PRE_SCORE, 1e-6);
        ks_attempts_note_ep(a, KS_EP_SCORE, 1e-5);
        ks_attempts_record(a, keys[i % pods], 1.0, 2e-5,
                           KS_ATTEMPT_SELECTED, 1, NULL, NULL, NULL, 5000,
                           5000, i % 7 ? NULL
                                       : "0/5000 nodes are available: "
                                         "5000 Insufficient cpu.");
    }
    t = now() - t0;
    printf("%ld attempts over %ld pods: %.0f ns per attempt (table %zu "
           "bytes)\n",
           n, pods, t / (double)n * 1e9,
           sizeof(ks_attempts_t) +
               (size_t)KS_ATTEMPTS_PODS * sizeof(ks_attempt_pod_t));
    free(keys);
    ks_attempts_free(a);
    return 0;
}
