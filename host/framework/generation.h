/*
 * A framework generation: the loaded config, the plugin registry and one
 * framework per profile, built together and swapped together.
 *
 * ks_generation_build() does everything that can fail (read the config,
 * load every .so from a private copy, validate every profile, call every
 * create); on any failure nothing is returned and err lists every problem.
 * A generation is reference counted: the scheduler holds one reference on
 * the current generation, and each scheduling cycle, waiting pod and binding
 * cycle holds one on the generation it started with. The last unref frees
 * the frameworks (plugin destroy) and unloads the plugins.
 * Loop thread only.
 */
#ifndef KS_GENERATION_H
#define KS_GENERATION_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "base/error.h"
#include "framework.h"
#include "registry.h"

typedef struct ks_generation {
    int refs;
    uint64_t id;
    ks_config_t *cfg;
    ks_registry_t *reg;
    ks_framework_t **fws; /* one per profile, in config order */
    size_t n_fws;
} ks_generation_t;

typedef struct ks_generation_opts {
    const char *config_path; /* NULL: the built-in default configuration */
    const char *const *plugin_dirs;
    size_t n_plugin_dirs;
    int no_default_path;     /* do not add KSCHED_PLUGIN_PATH / installed dir */
    int parallelism;         /* > 0 overrides the config's */
    ks_config_t *config;     /* already loaded config (ownership taken);
                                config_path is then used for messages only */
} ks_generation_opts_t;

int ks_generation_build(const ks_generation_opts_t *o, ks_generation_t **out,
                        ks_error_t *err);
ks_generation_t *ks_generation_ref(ks_generation_t *g);
void ks_generation_unref(ks_generation_t *g);
/* The framework for a scheduler name, or NULL. */
ks_framework_t *ks_generation_profile(const ks_generation_t *g,
                                      const char *scheduler_name);

#endif
