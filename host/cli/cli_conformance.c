/* ksched conformance: scenario runner front end. */
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conformance/compare.h"
#include "conformance/expected.h"
#include "conformance/runner.h"
#include "conformance/scenario.h"
#include "framework/batch.h"

static const char usage[] =
    "Usage: ksched conformance [options] DIR_OR_FILE...\n"
    "\n"
    "Run conformance scenarios and compare each scheduling decision with\n"
    "kube-scheduler's, recorded in NAME.expected.yaml beside NAME.yaml.\n"
    "Every *.yaml in a DIR that is not *.expected.yaml is a scenario (in name\n"
    "order). Each pod is scheduled with every node evaluated, every Filter\n"
    "plugin run on every node and ties broken by the smallest node name.\n"
    "\n"
    "Options:\n"
    "  -p, --plugin-dir DIR     search DIR (recursively) for plugins; repeatable\n"
    "      --no-default-plugin-path\n"
    "                           search only the --plugin-dir directories\n"
    "  -f, --filter SUBSTR      run only scenarios whose file name contains\n"
    "                           SUBSTR\n"
    "      --batching MODE      on (default: one scheduler kept while pods\n"
    "                           are simply bound, so identical pods reuse\n"
    "                           results), off (a scheduler per pod), or\n"
    "                           verify (as on, but every result batching\n"
    "                           would reuse is compared with a fresh one;\n"
    "                           a difference is logged and fails the run)\n"
    "      --bulk MODE          bulk Filter and Score: on (default), off\n"
    "                           (node by node), or verify (every bulk\n"
    "                           result compared with the node-by-node one;\n"
    "                           a difference is logged and fails the run)\n"
    "  -v, --verbose            also print what ksched decided, in the\n"
    "                           expected-file format\n"
    "  -h, --help               show this help\n"
    "\n"
    "Output: \"PASS name\" or \"FAIL name\" followed by one line per mismatch\n"
    "(pod, field, expected and got), then \"N passed, N failed\".\n"
    "Exit status: 0 all passed, 1 some failed (or no scenario found), 2 usage.\n";

typedef struct conf_opts {
    ks_cli_opts_t cli; /* the plugin path; -v: print what ksched decided */
    const char *filter;
    int batching; /* KS_BATCHING_* */
    unsigned long long reused, mismatches;
    int bulk; /* KS_BULK_* */
    unsigned long long bulk_compared, bulk_mismatches;
} conf_opts_t;

typedef struct tally {
    size_t passed, failed;
} tally_t;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_scenario_name(const char *name)
{
    return name[0] != '.' && ends_with(name, ".yaml") &&
           !ends_with(name, ".expected.yaml");
}

/* Print each line of msg indented. */
static void put_indented(const char *msg, const char *indent)
{
    const char *p = msg;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        printf("%s%.*s\n", indent, (int)n, p);
        p += n;
        if (*p == '\n')
            p++;
    }
}

static void run_one(conf_opts_t *o, const char *path, tally_t *t)
{
    ks_scenario_t *sc = NULL;
    ks_conf_results_t expected = {0}, got = {0};
    ks_conf_run_opts_t ro;
    ks_error_t err = {0};
    char *exp_path = ks_scenario_expected_path(path);
    char *base = ks_scenario_base_name(path);
    size_t n_mismatch;
    int rc;

    if (exp_path == NULL || base == NULL) {
        printf("FAIL %s\n  error: out of memory\n", path);
        t->failed++;
        goto out;
    }
    if (o->filter && strstr(base, o->filter) == NULL)
        goto out;
    if ((rc = ks_scenario_load(path, &sc, &err)) != 0 ||
        (rc = ks_expected_load(exp_path, &expected, &err)) != 0) {
        printf("FAIL %s\n", sc ? sc->name : base);
        put_indented(err.msg, "  error: ");
        t->failed++;
        goto out;
    }
    memset(&ro, 0, sizeof ro);
    ro.plugin_dirs = o->cli.plugin_dirs;
    ro.n_plugin_dirs = o->cli.n_plugin_dirs;
    ro.no_default_path = o->cli.no_default_path;
    ro.batching = o->batching;
    ro.batch_reused = &o->reused;
    ro.batch_mismatches = &o->mismatches;
    ro.bulk = o->bulk;
    ro.bulk_compared = &o->bulk_compared;
    ro.bulk_mismatches = &o->bulk_mismatches;
    if ((rc = ks_conformance_run(sc, &ro, &got, &err)) != 0) {
        printf("FAIL %s\n", sc->name);
        put_indented(err.msg, "  error: ");
        t->failed++;
        goto out;
    }
    n_mismatch = ks_conf_compare(&expected, &got, NULL);
    printf("%s %s\n", n_mismatch ? "FAIL" : "PASS", sc->name);
    if (n_mismatch)
        ks_conf_compare(&expected, &got, stdout);
    if (o->cli.verbose) {
        printf("  got:\n");
        ks_conf_results_write(stdout, &got, "    ");
    }
    if (n_mismatch)
        t->failed++;
    else
        t->passed++;
out:
    fflush(stdout);
    ks_conf_results_free(&expected);
    ks_conf_results_free(&got);
    ks_scenario_free(sc);
    free(exp_path);
    free(base);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(conf_opts_t *o, const char *dir, tally_t *t)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (!is_scenario_name(de->d_name))
            continue;
        if (n == cap) {
            char **nn;
            cap = cap ? cap * 2 : 32;
            if ((nn = realloc(names, cap * sizeof *names)) == NULL)
                break;
            names = nn;
        }
        if ((names[n] = strdup(de->d_name)) != NULL)
            n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    for (i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (path != NULL) {
            snprintf(path, len, "%s%s%s", dir,
                     ends_with(dir, "/") ? "" : "/", names[i]);
            run_one(o, path, t);
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return 0;
}

int ks_cli_conformance(int argc, char **argv)
{
    static const struct option opts[] = {
        KS_CLI_OPT_PLUGIN_PATH,
        {"filter", required_argument, NULL, 'f'},
        {"batching", required_argument, NULL, 1401},
        {"bulk", required_argument, NULL, 1402},
        KS_CLI_OPT_VERBOSE,
        KS_CLI_OPT_HELP};
    conf_opts_t o;
    tally_t t = {0, 0};
    struct stat sb;
    unsigned i;
    int c, rc;

    o.filter = NULL;
    o.batching = KS_BATCHING_ON;
    o.reused = o.mismatches = 0;
    o.bulk = KS_BULK_ON;
    o.bulk_compared = o.bulk_mismatches = 0;
    ks_cli_opts_init(&o.cli, "conformance", usage);
    while ((c = getopt_long(argc, argv, "p:f:vh", opts, NULL)) != -1) {
        if (c == 'f')
            o.filter = optarg;
        else if (c == 1401) {
            if (ks_cli_parse_mode("conformance", "--batching", optarg,
                                  &o.batching) != 0)
                return KS_EXIT_USAGE;
        }
        else if (c == 1402) {
            if (ks_cli_parse_mode("conformance", "--bulk", optarg, &o.bulk) !=
                0)
                return KS_EXIT_USAGE;
        }
        else if ((rc = ks_cli_common_opt(&o.cli, c, argv)) != KS_CLI_CONTINUE)
            return rc;
    }
    if (optind >= argc)
        return ks_cli_usage_error("conformance",
                                  "give at least one scenario directory or "
                                  "file");
    for (i = 0; i < o.cli.n_plugin_dirs; i++)
        if (stat(o.cli.plugin_dirs[i], &sb) != 0 || !S_ISDIR(sb.st_mode))
            return ks_cli_usage_error("conformance",
                                      "--plugin-dir '%s' is not a directory",
                                      o.cli.plugin_dirs[i]);
    for (c = optind; c < argc; c++)
        if (stat(argv[c], &sb) != 0)
            return ks_cli_usage_error("conformance",
                                      "'%s' does not exist", argv[c]);
        else if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))
            return ks_cli_usage_error("conformance",
                                      "'%s' is neither a directory nor a file",
                                      argv[c]);
    for (c = optind; c < argc; c++) {
        if (stat(argv[c], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            if (run_dir(&o, argv[c], &t) != 0) {
                printf("FAIL %s\n  error: cannot read the directory\n",
                       argv[c]);
                t.failed++;
            }
        } else {
            run_one(&o, argv[c], &t);
        }
    }
    printf("%zu passed, %zu failed\n", t.passed, t.failed);
    if (o.batching == KS_BATCHING_VERIFY) {
        printf("batching verify: %llu node results compared, %llu "
               "differences\n",
               o.reused, o.mismatches);
        if (o.mismatches)
            return KS_EXIT_INVALID;
    }
    if (o.bulk == KS_BULK_VERIFY) {
        printf("bulk verify: %llu node results compared, %llu differences\n",
               o.bulk_compared, o.bulk_mismatches);
        if (o.bulk_mismatches)
            return KS_EXIT_INVALID;
    }
    if (t.passed + t.failed == 0) {
        fprintf(stderr, "ksched conformance: no scenario found%s%s%s\n",
                o.filter ? " matching '" : "", o.filter ? o.filter : "",
                o.filter ? "'" : "");
        return KS_EXIT_INVALID;
    }
    return t.failed ? KS_EXIT_INVALID : KS_EXIT_OK;
}
