#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>


static int g_level = KS_LOGL_WARN;

void ks_log_set_level(int level)
{
    g_level = level;
}

int ks_log_level(void)
{
    return g_level;
}

void ks_log(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    char buf[4096];
    int n;
    va_list ap;
    if (level > g_level)
        return;
    n = snprintf(buf, sizeof buf, "ksched: %s: ",
                 names[level < 0 ? 0 : level > 3 ? 3 : level]);
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf - 1)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (write(STDERR_FILENO, buf, (size_t)n) < 0)
        return;
}
