/* A subset of CEL (the Common Expression Language) for Dynamic Resource
 * Allocation device selectors, as kube-scheduler evaluates them.
 *
 * Supported: literals (int, uint `1u`, double, strings with escapes, raw
 * strings, bytes, bool, null, lists, maps), `device.driver`,
 * `device.attributes[DOMAIN][ID]` and `device.attributes[DOMAIN].ID`,
 * `device.capacity[DOMAIN][ID]`, `device.allowMultipleAllocations`,
 * comparisons, arithmetic, `&&`, `||`, `!`, `?:`, `in`, `has()`, `size()`,
 * conversions, the string functions, `matches` (an RE2 subset),
 * `quantity()` and `semver()` with their methods, `cel.bind()` and the
 * macros all, exists, exists_one, map and filter. Anything else is refused
 * by ks_cel_compile with a message naming it, never evaluated as false.
 *
 * Errors follow CEL: `&&` and `||` absorb an error when the other side
 * decides the result (in either order), `?:` evaluates only the taken
 * branch, a missing key is "no such key: K", an operator applied to values
 * of the wrong dynamic type is "no such overload", integer overflow and
 * division by zero are errors. */
#ifndef KS_CEL_H
#define KS_CEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A device as CEL sees it: `device.driver`, `device.attributes[DOMAIN][ID]`
 * (also `device.attributes[DOMAIN].ID`), `device.capacity[DOMAIN][ID]`,
 * `device.allowMultipleAllocations` (bool). The caller resolves each
 * attribute's domain (a name without "domain/" belongs to the driver).
 * Every pointer is borrowed by ks_cel_eval for the duration of the call. */
typedef enum { KS_CEL_ATTR_INT, KS_CEL_ATTR_BOOL, KS_CEL_ATTR_STRING,
               KS_CEL_ATTR_VERSION } ks_cel_attr_type_t;
typedef struct ks_cel_attr {
    const char *domain, *id;
    ks_cel_attr_type_t type;
    int64_t i; int b; const char *s; /* s: string or semver text */
} ks_cel_attr_t;
typedef struct ks_cel_capacity {
    const char *domain, *id;
    const char *value; /* a resource.Quantity as text: "80Gi", "1500m" */
} ks_cel_capacity_t;
typedef struct ks_cel_device {
    const char *driver;
    const ks_cel_attr_t *attrs; size_t n_attrs;
    const ks_cel_capacity_t *caps; size_t n_caps;
    int allow_multiple_allocations;
} ks_cel_device_t;

typedef struct ks_cel_program ks_cel_program_t;

/* Parses and type-checks one selector expression (a DeviceClass's or a
 * request's `cel.expression`) once. NULL on failure with err filled with
 * one line naming the column and the reason, e.g.
 * "column 12: unsupported function 'indexOf' (ksched supports: ...)"
 * or upstream-like "undeclared reference to 'foo'"; anything outside the
 * supported subset is refused here, never evaluated as false. The result
 * type must be bool ("must evaluate to bool"). Thread-safe; the program is
 * immutable and may be evaluated from several threads at once.
 * The caller owns the result and frees it with ks_cel_free (NULL is fine);
 * expr is copied, err (errlen bytes, may be NULL/0) is always terminated. */
ks_cel_program_t *ks_cel_compile(const char *expr, char *err, size_t errlen);
void ks_cel_free(ks_cel_program_t *p);

typedef enum { KS_CEL_FALSE = 0, KS_CEL_TRUE = 1, KS_CEL_ERROR = -1 } ks_cel_result_t;
/* Evaluates p for dev. KS_CEL_ERROR with err filled (e.g. "no such key:
 * model", "actual cost limit exceeded") on a runtime error; cost_limit is
 * upstream's per-expression runtime cost budget (0: upstream's default for
 * DRA selectors, 1,000,000). Reentrant: no global state. */
ks_cel_result_t ks_cel_eval(const ks_cel_program_t *p, const ks_cel_device_t *dev,
                            uint64_t cost_limit, char *err, size_t errlen);

/* Upstream's runtime cost limit for one DRA selector expression
 * (resourceapi.CELSelectorExpressionMaxCost). */
#define KS_CEL_DEFAULT_COST_LIMIT 1000000u

#ifdef __cplusplus
}
#endif

#endif
