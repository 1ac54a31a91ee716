/* ksched plugins: what the plugin path holds. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "framework/registry.h"

static const char usage[] =
    "Usage: ksched plugins [--plugin-dir DIR]... [--no-default-plugin-path]\n"
    "\n"
    "List every plugin found in the plugin search path: name, version, the\n"
    "extension points it implements and the file it came from. Every .so\n"
    "that is not a valid plugin is reported with the reason.\n"
    "\n"
    "Options:\n"
    "  -p, --plugin-dir DIR     search DIR (recursively); repeatable\n"
    "      --no-default-plugin-path\n"
    "                           search only the --plugin-dir directories\n"
    "  -h, --help               show this help\n"
    "\n"
    "Exit status: 0 all files loaded, 1 some file is not a valid plugin,\n"
    "2 usage.\n";

int ks_cli_plugins(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plugin-dir", required_argument, NULL, 'p'},
        {"no-default-plugin-path", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    ks_cli_plugin_opts_t po = {{0}, 0, 0};
    ks_registry_t *reg;
    ks_error_t err = {0};
    size_t i, d;
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
        switch (c) {
        default: {
            int done = 0;
            int rc = ks_cli_common_opt("plugins", c, usage, argv, &po, &done);
            if (done)
                return rc;
            break;
        }
        }
    }
    if (optind < argc)
        return ks_cli_usage_error("plugins", "unexpected argument '%s'",
                                  argv[optind]);
    if (ks_registry_load(po.dirs, po.n_dirs, po.no_default_path, &reg, &err) !=
        0) {
        fprintf(stderr, "%s\n", err.msg);
        return KS_EXIT_INVALID;
    }
    printf("search path:");
    for (d = 0; d < reg->n_dirs; d++)
        printf(" %s", reg->dirs[d]);
    printf("\n");
    for (i = 0; i < reg->n; i++) {
        const ks_loaded_plugin_t *p = reg->plugins[i];
        int ep, first = 1;
        printf("%-34s %-12s ", p->desc.name, p->desc.version);
        for (ep = 0; ep < KS_EP_MULTI_POINT; ep++)
            if (ks_plugin_implements(&p->desc, (ks_ext_point_t)ep)) {
                printf("%s%s", first ? "" : ",",
                       ks_ext_point_name((ks_ext_point_t)ep));
                first = 0;
            }
        printf("  %s\n", p->path);
    }
    if (reg->n == 0)
        printf("(no plugins found)\n");
    ks_registry_free(reg);
    return KS_EXIT_OK;
}
