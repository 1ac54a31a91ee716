/*
 * Kubernetes resource quantities ("100m", "1.5", "2Gi", "1e3", "512Mi").
 *
 * Parsing follows k8s.io/apimachinery resource.Quantity: decimal SI suffixes
 * (n u m "" k M G T P E), binary suffixes (Ki Mi Gi Ti Pi Ei), decimal
 * exponents (e/E), optional sign. Values are rounded up to the requested
 * scale as upstream's Value() / MilliValue() do (ceiling).
 * Pure functions; thread-safe.
 */
#ifndef KS_QUANTITY_H
#define KS_QUANTITY_H

#include <stdint.h>
#include <stddef.h>

/* Parse `s`; store Value() (milli == 0) or MilliValue() (milli != 0) in *out.
 * Returns 0, or -1 with a reason in err ("invalid quantity \"x\": ..."). */
int ks_quantity_parse(const char *s, int milli, int64_t *out, char *err,
                      size_t errlen);

#endif
