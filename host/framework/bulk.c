/*
 * Bulk Filter (framework.h ks_fw_run_filter_bulk): the Filter plugins of a
 * cycle run plugin by plugin over a run of nodes, each plugin called once
 * per run through its filter_nodes (plugin.h, since ABI 1.2) or, without
 * one, node by node, and only on the nodes every earlier plugin passed. A
 * node that fails is reported back with pass 0, and the caller runs the
 * ordinary node-by-node Filter on it for its status, so rejections keep
 * their exact codes, reasons and plugin, with or without run_all.
 *
 * The in-tree plugins and the host both gain: one indirect call and one
 * state lookup per plugin per run instead of per node, and each plugin's
 * loop stays on its own fields of a few NodeInfos that are still in cache.
 * Threads: worker threads, several at once for different runs.
 */
#include "framework.h"

#include <string.h>

#include <ksched/helpers.h>

#include "batch.h"
#include "cycle_state.h"
#include "run_call.h"
#include "status.h"

_Static_assert((int)KS_BULK_ON == (int)KS_BATCHING_ON &&
                   (int)KS_BULK_OFF == (int)KS_BATCHING_OFF &&
                   (int)KS_BULK_VERIFY == (int)KS_BATCHING_VERIFY,
               "--bulk and --batching take the same words");

int ks_bulk_parse(const char *s)
{
    return ks_batching_parse(s);
}

int ks_fw_filter_bulk_ok(const ks_framework_t *fw)
{
    const ks_fw_env_t *e = fw->env;
    return e != NULL && e->bulk != KS_BULK_OFF && !timing_on(fw) &&
           e->n_nominated == 0;
}

int ks_fw_bulk_verified(ks_fw_env_t *env, int differs)
{
    __atomic_add_fetch(&env->bulk_compared, 1, __ATOMIC_RELAXED);
    if (differs)
        __atomic_add_fetch(&env->bulk_mismatches, 1, __ATOMIC_RELAXED);
    return differs;
}

void ks_fw_run_filter_bulk(ks_framework_t *fw, ks_cycle_state_t *cs,
                           const ks_pod_t *pod,
                           const ks_node_info_t *const *nodes, uint32_t n,
                           uint8_t *pass, uint8_t *rejector)
{
    size_t i, np = fw->n_points[KS_EP_FILTER];
    const ks_point_entry_t *pl = fw->points[KS_EP_FILTER];
    /* the plugins PreFilter did not skip, in order, by their bits */
    uint64_t todo = (np >= 64 ? ~0ull : (1ull << np) - 1) &
                    ~*ks_cycle_state_skip_filter(cs);
    ks_status_t scratch;
    uint32_t k;

    memset(pass, 1, n);
    for (; todo != 0; todo &= todo - 1) {
        ks_plugin_inst_t *in;
        void *state;
        ks_code_t c;
        i = (size_t)__builtin_ctzll(todo);
        in = pl[i].inst;
        state = in->d->filter_with_state
                    ? ks_cycle_state_slot_get(cs, &in->handle,
                                              KS_STATE_FILTER)
                    : NULL;
        ks_fw_scratch_init(&scratch);
        if (in->d->filter_nodes != NULL) {
            uint8_t before[KS_FW_BULK_MAX];
            memcpy(before, pass, n);
            /* Each plugin skips the nodes an earlier one rejected
             * (plugin.h). */
            TIMED_HOT(0, fw, in, pod, KS_EP_FILTER, c,
                      in->d->filter_nodes(in->self, cs, state, pod, nodes, n,
                                          pass, &scratch));
            if (c != KS_SUCCESS) {
                /* the node-by-node Filter decides, from this plugin on */
                for (k = 0; k < n; k++)
                    if (before[k]) {
                        pass[k] = 0;
                        rejector[k] = (uint8_t)(i | KS_FW_BULK_UNSURE);
                    }
                return;
            }
            if (memcmp(before, pass, n) == 0)
                continue; /* it rejected none: the common case */
            /* A plugin can only reject: a node it set back to passing
             * keeps what it had; 2 (or any other value) asks for the
             * node-by-node Filter. */
            for (k = 0; k < n; k++) {
                if (!before[k]) {
                    pass[k] = 0;
                    continue;
                }
                if (pass[k] == 1)
                    continue;
                rejector[k] = (uint8_t)(pass[k] == 0 ? i
                                                     : i | KS_FW_BULK_UNSURE);
                pass[k] = 0;
            }
            continue;
        }
        for (k = 0; k < n; k++) {
            if (!pass[k])
                continue;
            ks_fw_scratch_init(&scratch);
            TIMED_HOT(0, fw, in, pod, KS_EP_FILTER, c,
                      ks_fw_call_filter(in, cs, state, pod, nodes[k],
                                        &scratch));
            if (c != KS_SUCCESS) {
                /* a rejection, or (2) anything else: asked again at once */
                pass[k] = 0;
                rejector[k] = (uint8_t)(ks_bulk_verdict(c) == 0
                                            ? i
                                            : i | KS_FW_BULK_UNSURE);
            }
        }
    }
}
