/* Objects back to Kubernetes JSON: see objects_json_out.h. */
#include "objects_json_out.h"

#include <stdio.h>

#include "ksched/helpers.h"

json_t *ks_json_labels(ks_labels_t l)
{
    json_t *o = json_object();
    uint32_t i;
    for (i = 0; o && i < l.n; i++)
        json_object_set_new(o, l.items[i].key, json_string(l.items[i].value));
    return o;
}

json_t *ks_json_cpu(int64_t milli)
{
    char b[32];
    if (milli % 1000 == 0)
        snprintf(b, sizeof b, "%lld", (long long)(milli / 1000));
    else
        snprintf(b, sizeof b, "%lldm", (long long)milli);
    return json_string(b);
}

json_t *ks_json_int_quantity(int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    return json_string(b);
}

json_t *ks_json_taints(const ks_taint_t *t, uint32_t n)
{
    json_t *ts = json_array();
    uint32_t i;
    for (i = 0; ts && i < n; i++) {
        json_t *one = json_pack("{s:s, s:s}", "key", t[i].key, "effect",
                                ks_taint_effect_name(t[i].effect));
        if (one && t[i].value && t[i].value[0])
            json_object_set_new(one, "value", json_string(t[i].value));
        json_array_append_new(ts, one);
    }
    return ts;
}
