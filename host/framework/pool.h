/*
 * A fixed pool of worker threads running parallel-for loops (upstream's
 * parallelize.Until). The calling thread takes part in the work, so a pool of
 * N runs N-1 extra threads.
 *
 * ks_pool_run() splits [0, n) into chunks and calls fn(ud, begin, end, worker)
 * for each, returning when every chunk is done. `worker` is in [0, N) and
 * lets callers keep per-worker scratch space. One ks_pool_run at a time per
 * pool (loop thread only).
 */
#ifndef KS_POOL_H
#define KS_POOL_H

#include <stdint.h>

typedef struct ks_pool ks_pool_t;
typedef void (*ks_pool_fn)(void *ud, uint32_t begin, uint32_t end,
                           unsigned worker);

ks_pool_t *ks_pool_new(int threads);
void ks_pool_free(ks_pool_t *p);
unsigned ks_pool_size(const ks_pool_t *p);
/* p may be NULL: runs inline. */
void ks_pool_run(ks_pool_t *p, uint32_t n, uint32_t chunk, ks_pool_fn fn,
                 void *ud);

#endif
