/*
 * The threading rules' enforcement (thread_rules.h). The build mode comes
 * from the compiler's own flags, which meson sets from the build type and
 * b_sanitize: no optimisation (buildtype=debug) or a sanitizer
 * (-fsanitize=address/thread, as gcc and clang announce them) selects
 * abort mode, anything else refuse mode.
 */
#include "thread_rules.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/log.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KS_SANITIZED 1
#endif

#if !defined(__OPTIMIZE__) || defined(KS_SANITIZED)
#define KS_BUILD_MODE KS_THREAD_RULES_ABORT
#else
#define KS_BUILD_MODE KS_THREAD_RULES_REFUSE
#endif

static atomic_int g_mode = KS_BUILD_MODE;

ks_thread_rules_mode_t ks_thread_rules_build_mode(void)
{
    return KS_BUILD_MODE;
}

ks_thread_rules_mode_t ks_thread_rules_mode(void)
{
    return (ks_thread_rules_mode_t)atomic_load_explicit(&g_mode,
                                                        memory_order_relaxed);
}

void ks_thread_rules_set_mode(ks_thread_rules_mode_t mode)
{
    atomic_store(&g_mode, (int)mode);
}

/* Log the 1st refusal of a function, then the 1,000th, 10,000th, ... */
static int worth_a_line(unsigned long n)
{
    if (n == 1)
        return 1;
    if (n < 1000)
        return 0;
    while (n % 10 == 0)
        n /= 10;
    return n == 1;
}

int ks_thread_rule_broken(ks_thread_rule_t *r)
{
    unsigned long n;
    if (ks_thread_rules_mode() == KS_THREAD_RULES_ABORT) {
        static atomic_int aborting;
        char buf[512];
        int len;
        /* One line and one abort: workers that break the rule at the same
         * time wait for the first one's abort to end the process. */
        if (atomic_exchange(&aborting, 1))
            for (;;)
                pause();
        len = snprintf(buf, sizeof buf,
                           "ksched: fatal: " KS_THREAD_RULE_MSG_FMT "\n",
                           r->fn);
        if (len > (int)sizeof buf - 1)
            len = (int)sizeof buf - 1;
        if (len > 0 && write(STDERR_FILENO, buf, (size_t)len) < 0)
            len = 0; /* nothing more can be done about it: abort anyway */
        abort();
    }
    n = atomic_fetch_add(&r->refused, 1) + 1;
    if (worth_a_line(n)) {
        if (n == 1)
            ks_log(KS_LOGL_ERROR, KS_THREAD_RULE_MSG_FMT "; refused", r->fn);
        else
            ks_log(KS_LOGL_ERROR,
                   KS_THREAD_RULE_MSG_FMT "; refused (%lu calls so far)",
                   r->fn, n);
    }
    return 0;
}
