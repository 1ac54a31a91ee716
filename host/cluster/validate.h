/*
 * Kubernetes' rules for object names, namespaces and labels, as upstream's
 * k8s.io/apimachinery/pkg/util/validation and the API server's object
 * validation apply them, with upstream's messages:
 *
 * - DNS-1123 subdomain (pod and node names): at most 253 characters of
 *   [a-z0-9-.], starting and ending with [a-z0-9], no empty dot-separated
 *   part;
 * - DNS-1123 label (namespaces): at most 63 characters of [a-z0-9-],
 *   starting and ending with [a-z0-9];
 * - qualified name (label keys): an optional DNS-1123 subdomain prefix and
 *   '/', then a name part of at most 63 characters matching
 *   ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9];
 * - label value: empty, or at most 63 characters matching the name part's
 *   pattern.
 *
 * The checks take the bytes as given (a name with a byte outside ASCII is
 * invalid). Each returns 0 when the value is valid, else -1 with `msg`
 * (of `msg_len` bytes, may be NULL) holding upstream's explanation of the
 * rule broken ("a lowercase RFC 1123 subdomain must consist of ...",
 * "must be no more than 253 characters"; several joined by "; "), without
 * the field or the value.
 *
 * ks_validate_field_labels checks a whole label set and formats the first
 * failure as the API server's field error:
 *   FIELD: Invalid value: "VALUE": MESSAGE
 * (FIELD is, for example, "metadata.labels"). Pure functions,
 * thread-safe.
 */
#ifndef KS_CLUSTER_VALIDATE_H
#define KS_CLUSTER_VALIDATE_H

#include <stddef.h>

#include "ksched/types.h"

#define KS_DNS1123_LABEL_MAX 63
#define KS_DNS1123_SUBDOMAIN_MAX 253
#define KS_QUALIFIED_NAME_MAX 63
#define KS_LABEL_VALUE_MAX 63

int ks_validate_dns1123_subdomain(const char *s, char *msg, size_t msg_len);
int ks_validate_dns1123_label(const char *s, char *msg, size_t msg_len);
int ks_validate_qualified_name(const char *s, char *msg, size_t msg_len);
int ks_validate_label_value(const char *s, char *msg, size_t msg_len);

/* `s` in double quotes as Go's %q writes it for messages: '"' and '\\'
 * escaped, control characters as \n, \t or \xNN; other bytes as they
 * are. Truncated (ending in "...") to fit `out`; returns `out`. */
char *ks_validate_quote(const char *s, char *out, size_t out_len);

/* Every key a qualified name, every value a label value. 0, or -1 with
 * `out` holding FIELD: Invalid value: "KEY or VALUE": MESSAGE. */
int ks_validate_field_labels(const ks_labels_t *labels, const char *field,
                             char *out, size_t out_len);

#endif
