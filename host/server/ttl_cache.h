/*
 * A small cache of answers that expire: string keys, byte-string values,
 * each with its own expiry time, at most `max_entries` entries (when full,
 * expired entries go first, then the one that expires soonest). Used for
 * the delegated authentication and authorization answers (delegate.h), as
 * upstream caches TokenReview and SubjectAccessReview results.
 *
 * Times are milliseconds of any monotonic clock the caller chooses; the
 * cache never reads a clock itself.
 *
 * Ownership: keys and values are copied in; a value returned by
 * ks_ttl_cache_get stays valid until the next put or the free. Threads:
 * one at a time.
 */
#ifndef KS_SERVER_TTL_CACHE_H
#define KS_SERVER_TTL_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_ttl_cache ks_ttl_cache_t;

/* NULL on ENOMEM. max_entries 0 means 1. */
ks_ttl_cache_t *ks_ttl_cache_new(size_t max_entries);
void ks_ttl_cache_free(ks_ttl_cache_t *c);

/* The value stored under `key` that has not expired at `now_ms` (its
 * expiry is later than now), with its length in *len; NULL otherwise (an
 * expired entry is dropped then). */
const void *ks_ttl_cache_get(ks_ttl_cache_t *c, const char *key,
                             int64_t now_ms, size_t *len);
/* Store (or replace) `key` until `expires_ms`. 0, or -1 on ENOMEM (the
 * key is then absent: a cache may always forget). */
int ks_ttl_cache_put(ks_ttl_cache_t *c, const char *key, const void *val,
                     size_t len, int64_t expires_ms, int64_t now_ms);
/* Entries held (expired ones not yet dropped included). */
size_t ks_ttl_cache_count(const ks_ttl_cache_t *c);

#endif
