/*
 * Where a pod stands for the scheduler that watches it: one set of states
 * for every place that tracks pods beside the queue and the cache (the
 * embedded API server's pod table, the cluster source's informer view).
 */
#ifndef KS_CLUSTER_POD_STATE_H
#define KS_CLUSTER_POD_STATE_H

enum ks_pod_state {
    KS_POD_PENDING = 0, /* ours, unbound: queued, in a cycle, at Permit or
                           binding */
    KS_POD_BOUND,       /* bound to a node (by us or anyone else, or
                           created with spec.nodeName) */
    KS_POD_OTHER        /* unbound, and no profile schedules it */
};

#endif
