/*
 * Fixture "SwapScore": one source, three builds, for the hot-swap test.
 *   -DVERSION=1  scores node "n1" 100 and every other node 0
 *   -DVERSION=2  scores node "n2" 100 and every other node 0
 *   -DVERSION=3  a broken build: create() fails with a message
 * Enabled with a large weight, it decides where every pod goes, so the
 * node a pod lands on tells which version scheduled it.
 */
#include <stdio.h>
#include <string.h>

#include <ksched/plugin.h>

#ifndef VERSION
#error "build with -DVERSION=1, 2 or 3"
#endif

#define SWAP_STR2(x) #x
#define SWAP_STR(x) SWAP_STR2(x)

static int swap_create(const ks_host_api_t *api, ks_handle_t *h,
                       const ks_args_t *args, void **self, char *err,
                       size_t errlen)
{
    (void)api;
    (void)h;
    (void)args;
#if VERSION == 3
    (void)self;
    snprintf(err, errlen, "SwapScore %s is broken on purpose: it refuses "
                          "to start",
             SWAP_STR(VERSION) ".0.0");
    return -1;
#else
    (void)err;
    (void)errlen;
    *self = NULL;
    return 0;
#endif
}

static ks_code_t swap_score(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const ks_node_info_t *ni,
                            int64_t *score, ks_status_t *st)
{
    const char *favourite = VERSION == 1 ? "n1" : "n2";
    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    *score = strcmp(ni->node->name, favourite) == 0 ? 100 : 0;
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("SwapScore", SWAP_STR(VERSION) ".0.0", .create = swap_create,
                 .score = swap_score);
