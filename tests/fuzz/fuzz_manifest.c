/*
 * libFuzzer target: the cluster manifest reader (ks_manifest_load_string:
 * YAML documents, `kind: List`, every object kind ksched reads). Any input
 * must load or fail with a message; memory errors and leaks are the
 * sanitizers' to report. Built with -Dfuzz=true (tests/fuzz/meson.build).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "cluster/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    ks_manifest_t m;
    ks_error_t err = {0};
    if (text == NULL)
        return 0;
    memset(&m, 0, sizeof m); /* the reader appends */
    memcpy(text, data, size);
    text[size] = '\0';
    if (ks_manifest_load_string(&m, "fuzz.yaml", text, size,
                                ks_intern_global(), NULL, &err) != 0 &&
        err.msg[0] == '\0')
        abort(); /* a failure must say why */
    ks_manifest_free(&m);
    free(text);
    return 0;
}
