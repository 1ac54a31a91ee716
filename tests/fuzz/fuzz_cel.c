/*
 * libFuzzer target: the CEL subset of DynamicResources (cel.h). Any input
 * must compile or be refused with a message; a compiled program must
 * evaluate to true, false or an error with a message, for a device with
 * attributes of every type and a capacity, under a small cost limit too.
 * Built with -Dfuzz=true (tests/fuzz/meson.build).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ks_cel_attr_t attrs[] = {
    { "gpu.example.com", "model", KS_CEL_ATTR_STRING, 0, 0, "A100" },
    { "gpu.example.com", "cores", KS_CEL_ATTR_INT, 108, 0, NULL },
    { "gpu.example.com", "mig", KS_CEL_ATTR_BOOL, 0, 1, NULL },
    { "gpu.example.com", "version", KS_CEL_ATTR_VERSION, 0, 0, "1.2.3-rc.1" },
    { "gpu.example.com", "bad", KS_CEL_ATTR_VERSION, 0, 0, "1.2" },
};
static const ks_cel_capacity_t caps[] = {
    { "gpu.example.com", "memory", "80Gi" },
    { "gpu.example.com", "odd", "1.5.5" },
};
static const ks_cel_device_t dev = { "gpu.example.com", attrs, 5, caps, 2, 1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *expr = malloc(size + 1);
    char err[512];
    if (expr == NULL)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0'; /* an embedded NUL ends the expression early */
    err[0] = '\0';
    ks_cel_program_t *p = ks_cel_compile(expr, err, sizeof err);
    if (p == NULL) {
        if (err[0] == '\0')
            abort(); /* a refusal must say why */
    } else {
        for (int i = 0; i < 2; i++) {
            err[0] = '\0';
            ks_cel_result_t r = ks_cel_eval(p, &dev, i ? 20 : 0, err, sizeof err);
            if (r == KS_CEL_ERROR && err[0] == '\0')
                abort();
            if (r != KS_CEL_ERROR && r != KS_CEL_TRUE && r != KS_CEL_FALSE)
                abort();
        }
        ks_cel_free(p);
    }
    free(expr);
    return 0;
}
