/* The process collector: process_* series from /proc/self. */
#include "process_metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ksched/plugin.h"
#include "metrics.h"

#ifndef KS_VERSION
#define KS_VERSION "unknown"
#endif

static void family(ks_buf_t *b, const char *name, const char *type,
                   const char *help, int have, double v)
{
    char num[64];
    ks_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    if (!have)
        return;
    ks_metrics_format_double(num, sizeof num, v);
    ks_buf_printf(b, "%s %s\n", name, num);
}

/* /proc/self/stat after the command's closing parenthesis: field 3 on. */
typedef struct proc_stat {
    unsigned long long utime, stime, starttime, vsize;
    long long rss;
} proc_stat_t;

static int read_stat(proc_stat_t *st)
{
    char buf[1024], *p;
    size_t n;
    int field;
    FILE *f = fopen("/proc/self/stat", "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL)
        return -1;
    p++;
    memset(st, 0, sizeof *st);
    /* Fields are numbered from 1 (pid); p is before field 3 (state). */
    for (field = 3; field <= 24 && *p; field++) {
        char *end;
        unsigned long long v;
        while (*p == ' ')
            p++;
        if (field == 3) { /* state: one character */
            p++;
            continue;
        }
        v = strtoull(p, &end, 10);
        if (end == p && *p != '-')
            return -1;
        if (*p == '-')
            v = (unsigned long long)strtoll(p, &end, 10);
        p = end;
        switch (field) {
        case 14: st->utime = v; break;
        case 15: st->stime = v; break;
        case 22: st->starttime = v; break;
        case 23: st->vsize = v; break;
        case 24: st->rss = (long long)v; break;
        default: break;
        }
    }
    return field > 24 ? 0 : -1;
}

/* The boot time (Unix seconds) from /proc/stat's btime line. */
static int read_btime(double *out)
{
    char line[256];
    int ok = -1;
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "btime ", 6) == 0) {
            *out = strtod(line + 6, NULL);
            ok = 0;
            break;
        }
    fclose(f);
    return ok;
}

/* Bytes received and sent over every interface of the process's network
 * namespace (/proc/self/net/dev, summed as client_golang does). */
static int read_net_dev(double *rx, double *tx)
{
    char line[512];
    int n = 0;
    FILE *f = fopen("/proc/self/net/dev", "r");
    if (f == NULL)
        return -1;
    *rx = *tx = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v[9];
        char *p = strchr(line, ':');
        if (p == NULL) /* the two header lines */
            continue;
        if (sscanf(p + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                   &v[8]) != 9)
            continue;
        *rx += (double)v[0];
        *tx += (double)v[8];
        n++;
    }
    fclose(f);
    return n > 0 ? 0 : -1;
}

static int count_fds(double *out)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long n = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    /* The directory's own descriptor, open while it is read, counts too,
     * as in client_golang's collector. */
    *out = (double)n;
    return 0;
}

static double rlim_value(rlim_t v)
{
    /* RLIM_INFINITY as Go's uint64 max read as a float64. */
    return v == RLIM_INFINITY ? 18446744073709551615.0 : (double)v;
}

int ks_process_metrics_render(ks_buf_t *b)
{
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    proc_stat_t st;
    struct rlimit rl_fd, rl_as;
    double fds = 0, btime = 0, rx = 0, tx = 0;
    int have_net = read_net_dev(&rx, &tx) == 0;
    int have_stat = read_stat(&st) == 0 && tck > 0 && page > 0;
    int have_fds = count_fds(&fds) == 0;
    int have_btime = have_stat && read_btime(&btime) == 0;
    int have_rl_fd = getrlimit(RLIMIT_NOFILE, &rl_fd) == 0;
    int have_rl_as = getrlimit(RLIMIT_AS, &rl_as) == 0;
    family(b, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.", have_stat,
           have_stat ? (double)(st.utime + st.stime) / (double)tck : 0);
    family(b, "process_max_fds", "gauge",
           "Maximum number of open file descriptors.", have_rl_fd,
           have_rl_fd ? rlim_value(rl_fd.rlim_cur) : 0);
    family(b, "process_network_receive_bytes_total", "counter",
           "Number of bytes received by the process over the network.",
           have_net, rx);
    family(b, "process_network_transmit_bytes_total", "counter",
           "Number of bytes sent by the process over the network.",
           have_net, tx);
    family(b, "process_open_fds", "gauge",
           "Number of open file descriptors.", have_fds, fds);
    family(b, "process_resident_memory_bytes", "gauge",
           "Resident memory size in bytes.", have_stat,
           have_stat ? (double)st.rss * (double)page : 0);
    family(b, "process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.",
           have_btime,
           have_btime ? btime + (double)st.starttime / (double)tck : 0);
    family(b, "process_virtual_memory_bytes", "gauge",
           "Virtual memory size in bytes.", have_stat,
           have_stat ? (double)st.vsize : 0);
    family(b, "process_virtual_memory_max_bytes", "gauge",
           "Maximum amount of virtual memory available in bytes.",
           have_rl_as, have_rl_as ? rlim_value(rl_as.rlim_cur) : 0);
    ks_buf_printf(b,
                  "# HELP ksched_build_info The ksched version and the "
                  "plugin ABI it loads (major.minor); always 1.\n"
                  "# TYPE ksched_build_info gauge\n"
                  "ksched_build_info{version=\"%s\",abi=\"%d.%d\"} 1\n",
                  KS_VERSION, KS_ABI_MAJOR, KS_ABI_MINOR);
    return b->oom ? -1 : 0;
}
