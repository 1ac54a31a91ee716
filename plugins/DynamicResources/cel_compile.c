/* Placeholder: refuses every expression until the CEL subset lands. */
#include "cel.h"

#include <stdio.h>

ks_cel_program_t *ks_cel_compile(const char *expr, char *err, size_t errlen)
{
    (void)expr;
    if (err && errlen)
        snprintf(err, errlen, "CEL selectors are not supported yet");
    return NULL;
}

void ks_cel_free(ks_cel_program_t *p)
{
    (void)p;
}

ks_cel_result_t ks_cel_eval(const ks_cel_program_t *p, const ks_cel_device_t *dev,
                            uint64_t cost_limit, char *err, size_t errlen)
{
    (void)p; (void)dev; (void)cost_limit;
    if (err && errlen)
        snprintf(err, errlen, "CEL selectors are not supported yet");
    return KS_CEL_ERROR;
}
