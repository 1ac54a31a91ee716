/*
 * The plugin registry: every plugin found in the plugin search path, by name.
 *
 * The search path is, in order: each --plugin-dir given, each directory of
 * KSCHED_PLUGIN_PATH (colon-separated), the build tree's plugins when the
 * running executable is the ksched of the build tree this host was built
 * in (never once installed or copied elsewhere), then the installed plugin
 * directory.
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

/* Where a search-path entry came from. */
typedef enum ks_plugin_dir_origin {
    KS_DIR_ARG,       /* a --plugin-dir (the dirs given to ks_registry_load) */
    KS_DIR_ENV,       /* KSCHED_PLUGIN_PATH */
    KS_DIR_BUILD,     /* the build tree's plugins folder */
    KS_DIR_INSTALLED, /* the installed plugin directory */
} ks_plugin_dir_origin_t;

typedef struct ks_registry {
    ks_loaded_plugin_t **plugins; /* sorted by name */
    size_t n;
    char **dirs; /* the search path used */
    ks_plugin_dir_origin_t *dir_origins; /* where each of dirs came from */
    size_t n_dirs;
} ks_registry_t;

/* Build from explicit dirs (may be 0) plus KSCHED_PLUGIN_PATH, the build
 * tree's plugins and the installed directory (unless `no_default_path`).
 * On failure *out is NULL and err lists every problem. */
int ks_registry_load(const char *const *dirs, size_t n_dirs,
                     int no_default_path, ks_registry_t **out, ks_error_t *err);
void ks_registry_free(ks_registry_t *r);
ks_loaded_plugin_t *ks_registry_get(const ks_registry_t *r, const char *name);

/* The installed plugin directory compiled into the host. */
const char *ks_registry_default_dir(void);
/* The build tree's plugins folder when the running executable sits in the
 * folder the build put ksched in (it was run from the build tree, not
 * installed or copied); NULL otherwise, and always for other programs
 * linking the host (tests, benchmarks). */
const char *ks_registry_build_dir(void);
/* "--plugin-dir", "KSCHED_PLUGIN_PATH", "build tree" or "installed". */
const char *ks_plugin_dir_origin_name(ks_plugin_dir_origin_t o);

#endif
