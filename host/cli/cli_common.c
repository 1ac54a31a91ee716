#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int ks_cli_add_plugin_dir(ks_cli_plugin_opts_t *o, const char *dir)
{
    if (o->n_dirs >= sizeof o->dirs / sizeof o->dirs[0]) {
        fprintf(stderr, "ksched: too many --plugin-dir options (at most %zu)\n",
                sizeof o->dirs / sizeof o->dirs[0]);
        return -1;
    }
    o->dirs[o->n_dirs++] = dir;
    return 0;
}

int ks_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ksched %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ksched %s --help'.\n", cmd);
    return KS_EXIT_USAGE;
}

int ks_cli_parse_int(const char *cmd, const char *opt, const char *arg,
                     long lo, long hi, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg == '\0' || *end || v < lo || v > hi)
        return ks_cli_usage_error(cmd, "%s must be an integer in %ld..%ld, "
                                       "got '%s'",
                                  opt, lo, hi, arg);
    *out = (int)v;
    return 0;
}

int ks_cli_common_opt(const char *cmd, int c, const char *usage, char **argv,
                      ks_cli_plugin_opts_t *po, int *done)
{
    *done = 0;
    switch (c) {
    case 'p':
        if (ks_cli_add_plugin_dir(po, optarg) != 0) {
            *done = 1;
            return KS_EXIT_USAGE;
        }
        return KS_EXIT_OK;
    case 'N':
        po->no_default_path = 1;
        return KS_EXIT_OK;
    case 'h':
        fputs(usage, stdout);
        *done = 1;
        return KS_EXIT_OK;
    default:
        *done = 1;
        return ks_cli_usage_error(cmd, "unknown or incomplete option '%s'",
                                  argv[optind - 1]);
    }
}
