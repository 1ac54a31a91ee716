/* ksched plugins: what the plugin path holds. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "framework/registry.h"

static const char usage[] =
    "Usage: ksched plugins [--plugin-dir DIR]... [--no-default-plugin-path]\n"
    "\n"
    "List every plugin found in the plugin search path: name, version, the\n"
    "extension points it implements and the file it came from. Every .so\n"
    "that is not a valid plugin is reported with the reason. The search\n"
    "path comes first, each directory with where it came from: --plugin-dir,\n"
    "KSCHED_PLUGIN_PATH, build tree (a ksched run from its build folder\n"
    "also searches the plugins built with it) or installed.\n"
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
        KS_CLI_OPT_PLUGIN_PATH,
        KS_CLI_OPT_HELP};
    ks_cli_opts_t o;
    ks_registry_t *reg;
    ks_error_t err = {0};
    size_t i, d;
    int c, rc;

    ks_cli_opts_init(&o, "plugins", usage);
    while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1)
        if ((rc = ks_cli_common_opt(&o, c, argv)) != KS_CLI_CONTINUE)
            return rc;
    if ((rc = ks_cli_no_operands(&o, argc, argv)) != KS_CLI_CONTINUE)
        return rc;
    if (ks_registry_load(o.plugin_dirs, o.n_plugin_dirs, o.no_default_path,
                         &reg, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return KS_EXIT_INVALID;
    }
    printf("search path:%s\n", reg->n_dirs ? "" : " (empty)");
    for (d = 0; d < reg->n_dirs; d++)
        printf("  %s: %s\n", ks_plugin_dir_origin_name(reg->dir_origins[d]),
               reg->dirs[d]);
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
