/*
 * An informer: one resource of the API server kept current by list and
 * watch, as client-go's reflector does.
 *
 *  - List: paginated (`limit`, `continue`), a consistent read; then watch
 *    from the list's resourceVersion with `allowWatchBookmarks=true`, and
 *    after every event or bookmark from the last resourceVersion seen, so
 *    no event between list and watch (or between two watches) is lost.
 *  - A watch that ends (the server's timeout) is reopened at once; one that
 *    fails (connection refused, reset, a 5xx) is reopened after a capped
 *    exponential backoff with jitter (0.8 s doubling to 30 s, reset after a
 *    healthy watch); a "410 Gone" (resourceVersion too old, as after an
 *    etcd compaction) re-lists. A re-list reports every object as an
 *    upsert and every object that vanished meanwhile as a delete, so the
 *    consumer's state converges without ever replaying a binding.
 *
 * The store keeps, per object, its key ("ns/name") and uid only; the
 * consumer keeps whatever it decoded. Callbacks get the object as a
 * borrowed jansson tree valid during the call.
 *
 * Threads: loop thread only. Ownership: the informer references the client
 * (which must outlive it).
 */
#ifndef KS_KUBE_INFORMER_H
#define KS_KUBE_INFORMER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "base/error.h"
#include "kube/client.h"

typedef struct ks_informer ks_informer_t;

typedef struct ks_informer_handler {
    /* An object was added or changed (or seen again by a re-list). */
    void (*upsert)(void *ud, json_t *obj);
    /* An object was deleted: its last state (from the watch), or, when a
     * re-list found it gone, {"metadata":{"namespace","name","uid"}}. */
    void (*remove)(void *ud, json_t *obj);
    /* The first list is complete (once). */
    void (*synced)(void *ud);
    /* A list or watch failed; the informer retries by itself. `status` is
     * the HTTP status (0: no answer). For logs, metrics and readiness. */
    void (*failed)(void *ud, long status, const char *message);
    void *ud;
} ks_informer_handler_t;

typedef struct ks_informer_opts {
    const char *resource;       /* "pods": for messages and metrics */
    const char *path;           /* "/api/v1/pods" */
    const char *field_selector; /* NULL: none */
    uint32_t page_size;         /* list `limit` (0: 500) */
} ks_informer_opts_t;

ks_informer_t *ks_informer_new(uv_loop_t *loop, ks_kube_client_t *client,
                               const ks_informer_opts_t *o,
                               const ks_informer_handler_t *h,
                               ks_error_t *err);
/* List, then watch. 0 or a KS_E* code. */
int ks_informer_start(ks_informer_t *inf, ks_error_t *err);
/* Stop calls and timers and free the informer once its timer is closed. */
void ks_informer_close(ks_informer_t *inf);
int ks_informer_synced(const ks_informer_t *inf);
/* Objects in the store. */
size_t ks_informer_count(const ks_informer_t *inf);
const char *ks_informer_resource(const ks_informer_t *inf);
/* The resourceVersion the next watch starts from ("" before the list). */
const char *ks_informer_resource_version(const ks_informer_t *inf);

/* Counters for metrics and tests. */
typedef struct ks_informer_stats {
    uint64_t lists;    /* complete lists (first and re-lists) */
    uint64_t watches;  /* watches opened */
    uint64_t events;   /* ADDED/MODIFIED/DELETED events applied */
    uint64_t gone;     /* 410 Gone answers (re-lists) */
    uint64_t failures; /* failed lists or watches */
} ks_informer_stats_t;
ks_informer_stats_t ks_informer_stats(const ks_informer_t *inf);

#endif
