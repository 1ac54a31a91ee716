/* ksched: a scheduling-framework host with plugins as shared objects. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksched/plugin.h"
#include "version.h"

#ifndef KS_VERSION
#define KS_VERSION "0.1.0"
#endif

static const char usage[] =
    "Usage: ksched COMMAND [OPTIONS]\n"
    "\n"
    "A Kubernetes scheduling-framework host: every plugin is a shared object\n"
    "loaded at run time, configured with KubeSchedulerConfiguration files.\n"
    "\n"
    "Commands:\n"
    "  validate      check a configuration and list what runs where\n"
    "  plugins       list the plugins found in the plugin path\n"
    "  schedule      schedule the pending pods of a cluster snapshot\n"
    "  serve         run the scheduler with an HTTP API and hot reload\n"
    "  conformance   compare decisions with kube-scheduler's on scenarios\n"
    "  version       print the version and plugin ABI\n"
    "\n"
    "Run 'ksched COMMAND --help' for a command's options.\n"
    "Environment: KSCHED_PLUGIN_PATH (colon-separated plugin directories).\n";

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (cmd == NULL) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("ksched %s commit %s (plugin ABI %d.%d)\n", KS_VERSION,
               KS_COMMIT, KS_ABI_MAJOR, KS_ABI_MINOR);
        return 0;
    }
    if (strcmp(cmd, "validate") == 0)
        return ks_cli_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "plugins") == 0)
        return ks_cli_plugins(argc - 1, argv + 1);
    if (strcmp(cmd, "schedule") == 0)
        return ks_cli_schedule(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0)
        return ks_cli_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "conformance") == 0)
        return ks_cli_conformance(argc - 1, argv + 1);
    fprintf(stderr, "ksched: unknown command '%s'\nRun 'ksched --help'.\n",
            cmd);
    return 2;
}
