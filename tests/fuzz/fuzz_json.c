/*
 * libFuzzer target: the API's JSON decoding (cluster/objects_json.h), as
 * `ksched serve`'s POST handlers and the cluster informers use it: the
 * depth pre-check (ks_api_json_depth), jansson's parse, then the body read
 * as a Pod, a Node, a Namespace and a Service. Any input must decode or
 * fail with a message. Built with -Dfuzz=true (tests/fuzz/meson.build).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/intern.h"
#include "cluster/objects_json.h"
#include "server/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const ks_error_t *err)
{
    if (rc != 0 && err->msg[0] == '\0')
        abort(); /* a failure must say why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ks_intern_t *in = ks_intern_global();
    json_error_t jerr;
    json_t *doc;
    ks_pod_t *pod = NULL;
    ks_node_t *node = NULL;
    ks_namespace_t *ns = NULL;
    ks_service_t *svc = NULL;
    ks_error_t err = {0};
    if (ks_api_json_depth((const char *)data, size, NULL) >
        KS_JSON_MAX_DEPTH)
        return 0; /* refused before parsing, as the API does */
    doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL)
        return 0;
    check(ks_pod_from_json("fuzz pod", doc, in, &pod, &err), &err);
    ks_pod_free(pod);
    err.msg[0] = '\0';
    check(ks_node_from_json("fuzz node", doc, in, &node, &err), &err);
    ks_node_free(node);
    err.msg[0] = '\0';
    check(ks_namespace_from_json("fuzz namespace", doc, in, &ns, &err), &err);
    ks_namespace_free(ns);
    err.msg[0] = '\0';
    check(ks_selector_owner_from_json("Service", "fuzz service", doc, in,
                                      &svc, &err),
          &err);
    ks_service_free(svc);
    json_decref(doc);
    return 0;
}
