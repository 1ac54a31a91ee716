/*
 * Writing ksched's views of objects back as Kubernetes JSON (jansson):
 * the pieces the embedded API's answers and the extender wire format
 * (extender/v1) both render the same way.
 *
 * Each returns a new reference, or NULL when out of memory (jansson's
 * setters then drop the NULL value, as the callers expect).
 * Threads: any (no shared state).
 */
#ifndef KS_CLUSTER_OBJECTS_JSON_OUT_H
#define KS_CLUSTER_OBJECTS_JSON_OUT_H

#include <jansson.h>
#include <stdint.h>

#include "ksched/types.h"

/* A map of string to string (labels, annotations, node selectors). */
json_t *ks_json_labels(ks_labels_t l);
/* A cpu quantity from millicores: "2" for whole cores, else "1500m". */
json_t *ks_json_cpu(int64_t milli);
/* An integer quantity as Kubernetes writes it: "268435456". */
json_t *ks_json_int_quantity(int64_t v);
/* Taint effects' names: ks_taint_effect_name in ksched/helpers.h. */
/* spec.taints: [{key, value (when not empty), effect}, ...]. */
json_t *ks_json_taints(const ks_taint_t *t, uint32_t n);

#endif
