/*
 * libFuzzer target: the scheduler configuration reader
 * (ks_config_load_string: KubeSchedulerConfiguration v1 / v1beta3,
 * profiles, pluginConfig args, extenders). Any input must load or fail
 * with a message. Built with -Dfuzz=true (tests/fuzz/meson.build).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    ks_config_t *cfg = NULL;
    ks_error_t err = {0};
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (ks_config_load_string("fuzz.yaml", text, size, &cfg, &err) != 0) {
        if (err.msg[0] == '\0' || cfg != NULL)
            abort(); /* a failure says why and returns nothing */
    }
    ks_config_free(cfg);
    free(text);
    return 0;
}
