/* ks_resources_t helpers (fixed arrays, no allocation); see objects.h. */
#include <stdint.h>
#include <string.h>

#include "objects.h"

static int same_name(const char *a, const char *b)
{
    return a == b || strcmp(a, b) == 0;
}

static int scalar_index(const ks_resources_t *r, const char *name)
{
    uint32_t i;
    for (i = 0; i < r->n_scalar; i++)
        if (same_name(r->scalar[i].name, name))
            return (int)i;
    return -1;
}

/* Sums saturate at the int64 range instead of overflowing (quantities are
 * parsed up to 2^63-1; adding two such requests must not wrap). */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_neg(int64_t v)
{
    return v == INT64_MIN ? INT64_MAX : -v;
}

int64_t ks_int64_sat_add(int64_t a, int64_t b)
{
    return sat_add(a, b);
}

static void scalar_add(ks_resources_t *r, const char *name, int64_t v)
{
    int i = scalar_index(r, name);
    if (i >= 0) {
        r->scalar[i].value = sat_add(r->scalar[i].value, v);
    } else if (r->n_scalar < KS_MAX_SCALAR_RESOURCES) {
        r->scalar[r->n_scalar].name = name;
        r->scalar[r->n_scalar].value = v;
        r->n_scalar++;
    }
}

void ks_resources_add(ks_resources_t *dst, const ks_resources_t *src)
{
    uint32_t i;
    dst->milli_cpu = sat_add(dst->milli_cpu, src->milli_cpu);
    dst->memory = sat_add(dst->memory, src->memory);
    dst->ephemeral_storage =
        sat_add(dst->ephemeral_storage, src->ephemeral_storage);
    dst->allowed_pods = sat_add(dst->allowed_pods, src->allowed_pods);
    for (i = 0; i < src->n_scalar; i++)
        scalar_add(dst, src->scalar[i].name, src->scalar[i].value);
}

void ks_resources_sub(ks_resources_t *dst, const ks_resources_t *src)
{
    uint32_t i;
    dst->milli_cpu = sat_add(dst->milli_cpu, sat_neg(src->milli_cpu));
    dst->memory = sat_add(dst->memory, sat_neg(src->memory));
    dst->ephemeral_storage =
        sat_add(dst->ephemeral_storage, sat_neg(src->ephemeral_storage));
    dst->allowed_pods = sat_add(dst->allowed_pods, sat_neg(src->allowed_pods));
    for (i = 0; i < src->n_scalar; i++)
        scalar_add(dst, src->scalar[i].name, sat_neg(src->scalar[i].value));
}

int64_t ks_resources_scalar(const ks_resources_t *r, const char *name)
{
    int i = scalar_index(r, name);
    return i >= 0 ? r->scalar[i].value : 0;
}

int ks_resources_set_scalar(ks_resources_t *r, const char *name, int64_t v)
{
    int i = scalar_index(r, name);
    if (i >= 0) {
        r->scalar[i].value = v;
        return 0;
    }
    if (r->n_scalar >= KS_MAX_SCALAR_RESOURCES)
        return -1;
    r->scalar[r->n_scalar].name = name;
    r->scalar[r->n_scalar].value = v;
    r->n_scalar++;
    return 0;
}

void ks_resources_set_max(ks_resources_t *dst, const ks_resources_t *src)
{
    uint32_t i;
    if (src->milli_cpu > dst->milli_cpu)
        dst->milli_cpu = src->milli_cpu;
    if (src->memory > dst->memory)
        dst->memory = src->memory;
    if (src->ephemeral_storage > dst->ephemeral_storage)
        dst->ephemeral_storage = src->ephemeral_storage;
    for (i = 0; i < src->n_scalar; i++) {
        int j = scalar_index(dst, src->scalar[i].name);
        if (j < 0)
            ks_resources_set_scalar(dst, src->scalar[i].name,
                                    src->scalar[i].value);
        else if (src->scalar[i].value > dst->scalar[j].value)
            dst->scalar[j].value = src->scalar[i].value;
    }
}
