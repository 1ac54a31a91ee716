/*
 * Cluster mode's informers for the resources plugins declare (SDK ABI
 * 1.3, cluster/object_store.h): one informer per store registered when the
 * set is made, listing and watching /api/VERSION/RESOURCE for the core
 * group and /apis/GROUP/VERSION/RESOURCE otherwise (every namespace), and
 * keeping the store equal to what it sees: an upsert replaces the object
 * (a copy without metadata.managedFields), a delete removes it, a re-list
 * converges (informer.h).
 *
 * A list answered 404 means the server does not serve the resource (a
 * CustomResourceDefinition that is not installed, a misspelt group): the
 * informer keeps retrying with its backoff (the CRD may be installed
 * later), the store stays not synced, the source is not ready and
 * ks_store_informers_describe says why; the first 404 is logged as an
 * error naming the resource and the plugin-facing fix.
 *
 * A store registered after the set started (a reload loaded a plugin that
 * declares a new resource) gets its informer within a second (a timer
 * looks for new stores); until it has listed, that plugin sees an empty
 * store (its objects' add events then queue the pods it rejected), and
 * readiness, already reached, does not go back.
 *
 * Threads: loop thread only. Ownership: the set references the client
 * (which must outlive it); the stores are process-wide and outlive it.
 * Closing stops every informer at once and frees the set once its timer
 * is closed (the loop must run).
 */
#ifndef KS_KUBE_STORE_INFORMERS_H
#define KS_KUBE_STORE_INFORMERS_H

#include <stddef.h>

#include <uv.h>

#include "base/error.h"
#include "kube/client.h"
#include "ksched/plugin.h"

typedef struct ks_store_informers ks_store_informers_t;

/* Called on the loop thread: synced() once every store listed once (at
 * once from start when there is no store); changed() after each change a
 * store took once its informer synced (for cluster events): old is NULL
 * for an add, new NULL for a delete; both valid during the call (old is
 * freed after it). Either may be NULL. */
typedef struct ks_store_informers_handler {
    void (*synced)(void *ud);
    void (*changed)(void *ud, const ks_object_t *old, const ks_object_t *n);
    void *ud;
} ks_store_informers_handler_t;

/* One informer per store registered now; NULL with err set on failure. */
ks_store_informers_t *ks_store_informers_new(
    uv_loop_t *loop, ks_kube_client_t *client,
    const ks_store_informers_handler_t *h, ks_error_t *err);
int ks_store_informers_start(ks_store_informers_t *si, ks_error_t *err);
/* 1 when every store listed once (also when there are none). */
int ks_store_informers_synced(const ks_store_informers_t *si);
size_t ks_store_informers_count(const ks_store_informers_t *si);
/* Append "persistentvolumes (why), ..." for the stores not synced yet to
 * buf at offset *off (nothing when all are); *off advances. */
void ks_store_informers_describe(const ks_store_informers_t *si, char *buf,
                                 size_t len, size_t *off);
void ks_store_informers_close(ks_store_informers_t *si);

#endif /* KS_KUBE_STORE_INFORMERS_H */
