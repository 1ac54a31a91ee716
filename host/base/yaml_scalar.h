/*
 * The one rule per scalar type for every YAML reader in the host: the
 * typed field reader (yaml_read.h: kubeconfig, conformance scenarios), the
 * cluster-object reader (cluster/objects_yaml.h: manifests, and API JSON
 * through the same tree) and the configuration reader (config/). They
 * differ in how they report (the first two stop at the first problem, the
 * configuration collects them) but not in what a scalar is:
 *
 *   string   a scalar of the YAML 1.2 core schema's string type; a plain
 *            scalar that reads as a boolean or a number is refused with the
 *            advice to quote it (apimachinery's YAML-to-JSON conversion
 *            makes it a JSON boolean or number, which a Go string field
 *            refuses too); a NUL character is refused;
 *   integer  a plain core-schema integer within int64; a quoted one is a
 *            string, and the message says to remove the quotes;
 *   boolean  true/True/TRUE, false/False/FALSE; yes/no/on/off are strings
 *            in YAML 1.2, and the message says so.
 *
 * Mapping keys are not values: sigs.k8s.io/yaml turns any scalar key into
 * its text, so readers take a key's text as it is.
 *
 * Each function returns KS_YS_OK with the value, KS_YS_UNSET for an absent
 * or null node (the caller keeps its default), or KS_YS_WRONG with msg
 * filled ("expected a string, found an integer (\"5\"); quote it: \"5\"")
 * for the caller to prefix with the position and field. Any thread; they
 * read the node only.
 */
#ifndef KS_BASE_YAML_SCALAR_H
#define KS_BASE_YAML_SCALAR_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

enum { KS_YS_OK = 0, KS_YS_UNSET = 1, KS_YS_WRONG = -1 };

/* *out (with *len) points into the node's text. */
int ks_yaml_want_str(const yaml_node_t *n, const char **out, size_t *len,
                     char *msg, size_t msglen);
int ks_yaml_want_int64(const yaml_node_t *n, int64_t *out, char *msg,
                       size_t msglen);
int ks_yaml_want_bool(const yaml_node_t *n, int *out, char *msg,
                      size_t msglen);

#endif
