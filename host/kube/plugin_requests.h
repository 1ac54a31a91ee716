/*
 * Plugins' requests to the API server (SDK ABI 1.4 api_request in cluster
 * mode): sent through the scheduler's own client, so they carry its
 * credentials and share its clientConnection qps/burst and its metrics.
 *
 * Threads: loop thread only. Ownership: a handle is this file's until its
 * `done` has run or it is aborted.
 */
#ifndef KS_KUBE_PLUGIN_REQUESTS_H
#define KS_KUBE_PLUGIN_REQUESTS_H

#include <stddef.h>

#include "ksched/plugin.h"
#include "kube/client.h"

/* Start `req` on client `c`. done(ud, r) runs once: with the API server's
 * answer, or with status 0 and a reason when there is none (transport,
 * credentials, the client closing). NULL with a message in err when it
 * cannot start (no callback then). */
void *ks_kube_plugin_request(ks_kube_client_t *c, const ks_api_request_t *req,
                             ks_api_done_fn done, void *ud, char *err,
                             size_t errlen);
/* `done` will not run. */
void ks_kube_plugin_request_abort(void *handle);

#endif
