/* What the subcommands share: the common options and usage errors. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/batch.h"
#include "framework/generation.h"

void ks_cli_opts_init(ks_cli_opts_t *o, const char *cmd, const char *usage)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->usage = usage;
    optind = 1;
    opterr = 0;
}

static int add_plugin_dir(ks_cli_opts_t *o, const char *dir)
{
    size_t max = sizeof o->plugin_dirs / sizeof o->plugin_dirs[0];
    if (o->n_plugin_dirs >= max) {
        fprintf(stderr, "ksched: too many --plugin-dir options (at most %zu)\n",
                max);
        return -1;
    }
    o->plugin_dirs[o->n_plugin_dirs++] = dir;
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

int ks_cli_parse_mode(const char *cmd, const char *opt, const char *arg,
                      int *out)
{
    int v = ks_batching_parse(arg); /* --bulk takes the same words */
    if (v < 0)
        return ks_cli_usage_error(cmd, "%s must be on, off or verify, got "
                                       "'%s'",
                                  opt, arg);
    *out = v;
    return 0;
}

int ks_cli_common_opt(ks_cli_opts_t *o, int c, char **argv)
{
    switch (c) {
    case 'c':
        o->config = optarg;
        return KS_CLI_CONTINUE;
    case 'p':
        return add_plugin_dir(o, optarg) == 0 ? KS_CLI_CONTINUE
                                              : KS_EXIT_USAGE;
    case 'N':
        o->no_default_path = 1;
        return KS_CLI_CONTINUE;
    case 'j':
        return ks_cli_parse_int(o->cmd, "--parallelism", optarg, 1, 1024,
                                &o->parallelism) == 0
                   ? KS_CLI_CONTINUE
                   : KS_EXIT_USAGE;
    case 'v':
        o->verbose++;
        return KS_CLI_CONTINUE;
    case 'h':
        fputs(o->usage, stdout);
        return KS_EXIT_OK;
    default:
        return ks_cli_usage_error(o->cmd, "unknown or incomplete option '%s'",
                                  argv[optind - 1]);
    }
}

int ks_cli_no_operands(const ks_cli_opts_t *o, int argc, char **argv)
{
    if (optind < argc)
        return ks_cli_usage_error(o->cmd, "unexpected argument '%s'",
                                  argv[optind]);
    return KS_CLI_CONTINUE;
}

void ks_cli_generation_opts(const ks_cli_opts_t *o, ks_generation_opts_t *go)
{
    memset(go, 0, sizeof *go);
    go->config_path = o->config;
    go->plugin_dirs = o->plugin_dirs;
    go->n_plugin_dirs = o->n_plugin_dirs;
    go->no_default_path = o->no_default_path;
    go->parallelism = o->parallelism;
}

void ks_cli_print_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch == '\n')
            printf("\\n");
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}
