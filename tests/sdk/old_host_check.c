/*
 * The SDK's version promise, seen from an older host: this program is
 * built against the frozen 1.0 headers (abi_1_0/) and applies the 1.0
 * host's descriptor checks (magic, major, minor not newer than its own,
 * at least the 1.0 size) to plugins built against the current headers. A
 * plugin that declares KS_PLUGIN_MIN_ABI_MINOR 0 must pass them; one built
 * with the default (the headers' minor) must be refused, as a 1.0 host
 * refuses it. The 1.0 members it then reads (name, filter) must be the
 * plugin's.
 *
 * usage: old_host_check ACCEPTED.so REFUSED.so
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <ksched/plugin.h>

#if KS_ABI_MINOR != 0
#error "old_host_check.c must be built against the frozen 1.0 headers"
#endif

/* The 1.0 host's rule: 0 when it would load the descriptor. */
static int old_host_accepts(const char *path, const char **name,
                            int *has_filter)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const ks_plugin_t *d;
    if (h == NULL) {
        fprintf(stderr, "%s: %s\n", path, dlerror());
        return -1;
    }
    d = dlsym(h, KS_PLUGIN_SYMBOL);
    if (d == NULL || d->magic != KS_PLUGIN_MAGIC ||
        d->abi_major != KS_ABI_MAJOR || d->abi_minor > KS_ABI_MINOR ||
        d->size < KS_PLUGIN_V1_SIZE) {
        if (d != NULL)
            printf("%s: refused (ABI %u.%u, %u bytes)\n", path, d->abi_major,
                   d->abi_minor, d->size);
        return 1; /* left loaded: the process ends soon */
    }
    *name = d->name;
    *has_filter = d->filter != NULL;
    printf("%s: accepted (ABI %u.%u, %u bytes, plugin %s)\n", path,
           d->abi_major, d->abi_minor, d->size, d->name);
    return 0;
}

int main(int argc, char **argv)
{
    const char *name = NULL;
    int has_filter = 0, ok = 1;
    if (argc != 3) {
        fprintf(stderr, "usage: old_host_check ACCEPTED.so REFUSED.so\n");
        return 2;
    }
    if (old_host_accepts(argv[1], &name, &has_filter) != 0 || !has_filter ||
        name == NULL || strcmp(name, "AbiProbe18Min0") != 0) {
        printf("FAIL: a plugin declaring KS_PLUGIN_MIN_ABI_MINOR 0 must load "
               "on a 1.0 host with its 1.0 members\n");
        ok = 0;
    }
    if (old_host_accepts(argv[2], &name, &has_filter) != 1) {
        printf("FAIL: a plugin built with the default minimum must be "
               "refused by a 1.0 host\n");
        ok = 0;
    }
    return ok ? 0 : 1;
}
