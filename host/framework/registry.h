/*
 * The plugin registry: every plugin found in the plugin search path, by name.
 *
 * The search path is, in order: each --plugin-dir given, each directory of
 * KSCHED_PLUGIN_PATH (colon-separated), then the installed plugin directory.
 * Each directory is searched recursively for files ending in ".so". When the
 * same plugin name appears in two files, the first directory wins only if
 * the two files are in different search-path entries (an override);
 * two files with the same name inside one entry are an error naming both.
 * Any file that fails to load is an error (all are reported).
 *
 * Ownership: the registry holds one reference on every loaded plugin.
 * Thread-safety: build and free on one thread; lookups from any thread.
 */
#ifndef KS_REGISTRY_H
#define KS_REGISTRY_H

#include <stddef.h>

#include "base/error.h"
#include "plugin_loader.h"

typedef struct ks_registry {
    ks_loaded_plugin_t **plugins; /* sorted by name */
    size_t n;
    char **dirs; /* the search path used */
    size_t n_dirs;
} ks_registry_t;

/* Build from explicit dirs (may be 0) plus KSCHED_PLUGIN_PATH and the
 * installed directory (unless `no_default_path`). On failure *out is NULL
 * and err lists every problem. */
int ks_registry_load(const char *const *dirs, size_t n_dirs,
                     int no_default_path, ks_registry_t **out, ks_error_t *err);
void ks_registry_free(ks_registry_t *r);
ks_loaded_plugin_t *ks_registry_get(const ks_registry_t *r, const char *name);

/* The installed plugin directory compiled into the host. */
const char *ks_registry_default_dir(void);

#endif
