/*
 * Plugins' API requests in the embedded `serve` (SDK ABI 1.4
 * api_request): the writer's api_mode is KS_API_CLUSTER, and the embedded
 * API itself is the cluster: each request is answered in-process, on the
 * loop's next turn (a zero timer, so never inside api_request nor inside
 * the plugin callback that made it, and never while Filter or Score run),
 * as an HTTP client of the embedded API would be answered: the same
 * status codes and bodies (api_objects.h), applied to the stores,
 * journaled and made cluster events likewise. A path with a query has it
 * split off. Requests for pods, bindings, nodes, or resources no loaded
 * plugin declares are answered 404 with a v1.Status body.
 *
 * Threads: the loop thread. Ownership: a request is this file's until its
 * `done` has run or it is aborted (its timer is closed then).
 */
#ifndef KS_SERVER_LOCAL_REQUESTS_H
#define KS_SERVER_LOCAL_REQUESTS_H

#include "framework/scheduler.h"

struct ks_server;

/* Set w's api_mode, api_send, api_abort and ud (= srv) for the embedded
 * API; the writer's other members are left alone. */
void ks_local_requests_writer(struct ks_server *srv, ks_sched_writer_t *w);

#endif
