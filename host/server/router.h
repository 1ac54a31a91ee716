/*
 * Request routing: path patterns with "{}" segments, allowed methods per
 * route, 404 for unknown paths and 405 (with an Allow header) for a known
 * path with another method. Pure functions except ks_server_handle (in
 * server.h), which dispatches to the handlers. Loop thread only.
 */
#ifndef KS_SERVER_ROUTER_H
#define KS_SERVER_ROUTER_H

#include <stddef.h>

#define KS_ROUTE_MAX_CAPS 2
#define KS_ROUTE_CAP_MAX 256

/* Does `path` match `pattern` ("/api/v1/nodes/{}")? Each "{}" matches one
 * non-empty segment, copied into caps[i] (at most KS_ROUTE_CAP_MAX - 1
 * bytes, else no match). A trailing slash on the path is ignored.
 * Returns the number of captures, or -1 when it does not match. */
int ks_route_match(const char *pattern, const char *path,
                   char caps[][KS_ROUTE_CAP_MAX], size_t n_caps);

/* Is `method` one of the space-separated `methods`? */
int ks_route_method_allowed(const char *methods, const char *method);

#endif
