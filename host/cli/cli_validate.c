/* ksched validate: what runs where, or every reason it cannot. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "framework/generation.h"
#include "framework/plugin_loader.h"

static const char usage[] =
    "Usage: ksched validate [--config FILE] [--plugin-dir DIR]...\n"
    "\n"
    "Read a KubeSchedulerConfiguration, merge it with the default plugins,\n"
    "load every plugin it needs and check each profile as the scheduler\n"
    "would (extension points implemented, QueueSort and Bind counts, score\n"
    "weights, plugin args). Prints, per profile and extension point, the\n"
    "plugins that run there, in order, with Score weights.\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE        the configuration (default: the built-in\n"
    "                           default profile)\n"
    "  -p, --plugin-dir DIR     search DIR (recursively) for plugin .so files;\n"
    "                           repeatable, searched before KSCHED_PLUGIN_PATH\n"
    "                           and the installed plugin directory\n"
    "      --no-default-plugin-path\n"
    "                           search only the --plugin-dir directories\n"
    "  -h, --help               show this help\n"
    "\n"
    "Exit status: 0 valid, 1 invalid (every problem is printed), 2 usage.\n";

static void print_profile(const ks_framework_t *fw, int32_t global_pct)
{
    int ep;
    int32_t pct = fw->percentage_of_nodes_to_score >= 0
                      ? fw->percentage_of_nodes_to_score
                      : global_pct;
    printf("profile \"%s\"\n", fw->profile_name);
    if (pct > 0)
        printf("  percentageOfNodesToScore: %d\n", pct);
    else
        printf("  percentageOfNodesToScore: adaptive\n");
    for (ep = 0; ep < KS_EP_MULTI_POINT; ep++) {
        size_t i;
        printf("  %-11s", ks_ext_point_name((ks_ext_point_t)ep));
        if (fw->n_points[ep] == 0)
            printf(" -");
        for (i = 0; i < fw->n_points[ep]; i++) {
            const ks_point_entry_t *e = &fw->points[ep][i];
            printf("%s %s", i ? "," : "", e->inst->name);
            if (ep == KS_EP_SCORE)
                printf(" (weight %d)", e->weight);
        }
        printf("\n");
    }
}

/* The scheduler extenders, in the order they are asked. */
static void print_extenders(const ks_config_t *cfg)
{
    size_t i, j;
    for (i = 0; i < cfg->n_extenders; i++) {
        const ks_extender_config_t *e = &cfg->extenders[i];
        printf("extender %s\n", e->url_prefix);
        printf("  verbs      filter=%s prioritize=%s bind=%s preempt=%s\n",
               e->filter_verb ? e->filter_verb : "-",
               e->prioritize_verb ? e->prioritize_verb : "-",
               e->bind_verb ? e->bind_verb : "-",
               e->preempt_verb ? e->preempt_verb : "-");
        printf("  weight %lld, httpTimeout %lldms, nodeCacheCapable %s, "
               "ignorable %s, https %s%s\n",
               (long long)e->weight, (long long)e->http_timeout_ms,
               e->node_cache_capable ? "true" : "false",
               e->ignorable ? "true" : "false",
               e->enable_https ? "true" : "false",
               e->tls_config && e->tls_config->insecure ? " (insecure)" : "");
        printf("  managedResources");
        if (e->n_managed_resources == 0)
            printf(" - (interested in every pod)");
        for (j = 0; j < e->n_managed_resources; j++)
            printf("%s %s%s", j ? "," : "", e->managed_resources[j].name,
                   e->managed_resources[j].ignored_by_scheduler
                       ? " (ignoredByScheduler)"
                       : "");
        printf("\n");
    }
}

int ks_cli_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        KS_CLI_OPT_CONFIG,
        KS_CLI_OPT_PLUGIN_PATH,
        KS_CLI_OPT_HELP};
    ks_cli_opts_t o;
    ks_generation_opts_t go;
    ks_generation_t *gen;
    ks_error_t err = {0};
    const char *config;
    size_t i;
    int c, rc;

    ks_cli_opts_init(&o, "validate", usage);
    while ((c = getopt_long(argc, argv, "+c:p:h", opts, NULL)) != -1)
        if ((rc = ks_cli_common_opt(&o, c, argv)) != KS_CLI_CONTINUE)
            return rc;
    if ((rc = ks_cli_no_operands(&o, argc, argv)) != KS_CLI_CONTINUE)
        return rc;
    config = o.config;
    ks_cli_generation_opts(&o, &go);
    go.parallelism = 1;
    if (ks_generation_build(&go, &gen, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        fprintf(stderr, "ksched validate: %s is not valid\n",
                config ? config : "the default configuration");
        return KS_EXIT_INVALID;
    }
    printf("configuration %s is valid: %zu profile(s)\n",
           config ? config : "<default>", gen->n_fws);
    for (i = 0; i < gen->n_fws; i++)
        print_profile(gen->fws[i], gen->cfg->percentage_of_nodes_to_score);
    print_extenders(gen->cfg);
    ks_generation_unref(gen);
    return KS_EXIT_OK;
}
