/* Fault-isolation options: see cli_faults.h. */
#include "cli_faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/go_duration.h"
#include "framework/quarantine.h"

void ks_cli_faults_init(ks_cli_faults_t *f)
{
    memset(f, 0, sizeof *f);
    f->default_ms = 1000;
}

static int parse_ms(const char *s, uint32_t *ms)
{
    int64_t v;
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return 0;
    }
    if (ks_go_duration_parse(s, &v) != 0 || v < 0 || v > 86400000)
        return -1;
    *ms = (uint32_t)v;
    return 0;
}

int ks_cli_faults_opt(ks_cli_faults_t *f, const char *cmd, int c,
                      const char *arg)
{
    switch (c) {
    case 1201: {
        const char *eq = strchr(arg, '=');
        uint32_t ms;
        if (parse_ms(eq ? eq + 1 : arg, &ms) != 0 || (eq && eq == arg))
            return ks_cli_usage_error(cmd, "--plugin-deadline takes "
                                           "[PLUGIN=]DURATION such as 1s, "
                                           "250ms or Slow=2s (0 turns it "
                                           "off), got '%s'",
                                      arg);
        if (eq == NULL) {
            f->default_ms = ms;
        } else {
            if (f->n == sizeof f->ms / sizeof f->ms[0])
                return ks_cli_usage_error(cmd, "--plugin-deadline: at most "
                                               "64 plugins");
            if ((size_t)(eq - arg) >= sizeof f->name_buf[0])
                return ks_cli_usage_error(cmd, "--plugin-deadline: plugin "
                                               "name too long in '%s'",
                                          arg);
            memcpy(f->name_buf[f->n], arg, (size_t)(eq - arg));
            f->name_buf[f->n][eq - arg] = '\0';
            f->names[f->n] = f->name_buf[f->n];
            f->ms[f->n++] = ms;
        }
        return KS_CLI_CONTINUE;
    }
    case 1202:
        if (strcmp(arg, "rollback") == 0)
            f->quarantine_disable = 0;
        else if (strcmp(arg, "disable") == 0)
            f->quarantine_disable = 1;
        else
            return ks_cli_usage_error(cmd, "--quarantine takes rollback or "
                                           "disable, got '%s'",
                                      arg);
        return KS_CLI_CONTINUE;
    case 1203: {
        int64_t v;
        if (ks_go_duration_parse(arg, &v) != 0 || v <= 0)
            return ks_cli_usage_error(cmd, "--probation takes a positive "
                                           "duration such as 60s, got '%s'",
                                      arg);
        f->probation_s = (double)v / 1000.0;
        return KS_CLI_CONTINUE;
    }
    case 1204: {
        char *end;
        unsigned long long v = strtoull(arg, &end, 10);
        if (*end || end == arg || v == 0 || arg[0] == '-')
            return ks_cli_usage_error(cmd, "--probation-cycles takes a "
                                           "positive integer, got '%s'",
                                      arg);
        f->probation_cycles = v;
        return KS_CLI_CONTINUE;
    }
    case 1205:
        f->no_supervise = 1;
        return KS_CLI_CONTINUE;
    default:
        return ks_cli_usage_error(cmd, "unknown option");
    }
}

int ks_cli_faults_apply(const ks_cli_faults_t *f, const char *cmd)
{
    ks_quarantine_set_policy(f->quarantine_disable ? KS_QUARANTINE_DISABLE
                                                   : KS_QUARANTINE_ROLLBACK);
    if (ks_deadlines_set(f->default_ms, 0, f->names, f->ms, f->n) != 0) {
        fprintf(stderr, "ksched %s: out of memory\n", cmd);
        return KS_EXIT_INVALID;
    }
    return KS_CLI_CONTINUE;
}
