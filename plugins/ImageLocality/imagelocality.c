/*
 * ImageLocality (PreScore, Score), as upstream v1.24.1: favours nodes that
 * already hold the pod's container images. For each container whose image
 * (":latest" added when untagged) is on the node, add
 * size * (nodes holding the image / all nodes); clamp the sum to
 * [23 MiB, 1000 MiB * containers] and scale it linearly to 0..100.
 * Init containers do not count.
 */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>
#include <ksched/plugin.h>

#define PRESCORE_KEY "PreScoreImageLocality"
#define MB (1024ll * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

typedef struct image_locality {
    const ks_host_api_t *api;
    ks_handle_t *h;
} image_locality_t;

typedef struct image_want {
    const char *name;   /* normalised, interned */
    uint32_t num_nodes; /* nodes holding it */
} image_want_t;

/* Per pod: one entry per container. Immutable once written. */
typedef struct image_prescore {
    uint32_t total_nodes;
    uint32_t n;
    image_want_t images[]; /* n entries */
} image_prescore_t;

static int image_locality_create(const ks_host_api_t *api, ks_handle_t *h,
                                 const ks_args_t *args, void **self, char *err,
                                 size_t errlen)
{
    static const char *const keys[] = {NULL};
    image_locality_t *il;
    if (ks_args_check_keys(args, keys, err, errlen) != 0)
        return -1;
    il = calloc(1, sizeof *il);
    if (il == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    il->api = api;
    il->h = h;
    *self = il;
    return 0;
}

static void image_locality_destroy(void *self)
{
    free(self);
}

/* Upstream normalizedImageName: append ":latest" when the last ':' does not
 * come after the last '/'. Writes to buf (NUL-terminated, truncated to
 * len) and returns it, or returns `name` itself when nothing is added. */
static const char *normalized_image(const char *name, char *buf, size_t len)
{
    const char *colon = strrchr(name, ':');
    const char *slash = strrchr(name, '/');
    if (colon != NULL && (slash == NULL || colon > slash))
        return name;
    snprintf(buf, len, "%s:latest", name);
    return buf;
}

static ks_code_t image_locality_pre_score(void *self, ks_cycle_state_t *cs,
                                          const ks_pod_t *pod,
                                          const ks_node_info_t *const *nodes,
                                          uint32_t n, ks_status_t *st)
{
    image_locality_t *il = self;
    image_prescore_t *s;
    uint32_t i;
    (void)nodes;
    (void)n;
    s = malloc(sizeof *s + pod->n_containers * sizeof s->images[0]);
    if (s == NULL) {
        il->api->status_reason(st, "out of memory");
        return KS_ERROR;
    }
    s->total_nodes = il->api->snapshot_num_nodes(il->h);
    s->n = pod->n_containers;
    for (i = 0; i < pod->n_containers; i++) {
        char buf[1024];
        const char *img = normalized_image(pod->containers[i].image, buf,
                                           sizeof buf);
        s->images[i].name = il->api->intern(il->h, img);
        s->images[i].num_nodes = il->api->image_num_nodes(il->h, img);
    }
    /* Score gets it as its state (no cycle-state lookup per node). */
    return ks_plugin_state_put(il->api, il->h, cs, KS_STATE_SCORE, s, st);
}

/* Size of image `name` on the node, or -1 when absent. `interned` says the
 * name came from the intern table (address comparison suffices). */
static int64_t node_image_size(const ks_node_t *node, const char *name,
                               int interned)
{
    uint32_t i;
    for (i = 0; i < node->n_images; i++)
        if (node->images[i].name == name ||
            (!interned && strcmp(node->images[i].name, name) == 0))
            return node->images[i].size_bytes;
    return -1;
}

static int64_t scaled_image_score(int64_t size, uint32_t num_nodes,
                                  uint32_t total_nodes)
{
    double spread = (double)num_nodes / (double)total_nodes;
    return (int64_t)((double)size * spread);
}

static int64_t calculate_priority(int64_t sum, uint32_t n_containers)
{
    int64_t max_threshold = MAX_CONTAINER_THRESHOLD * (int64_t)n_containers;
    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max_threshold)
        sum = max_threshold;
    return KS_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) /
           (max_threshold - MIN_THRESHOLD);
}

static ks_code_t image_locality_score_with_state(void *self,
                                                 ks_cycle_state_t *cs,
                                                 void *state,
                                                 const ks_pod_t *pod,
                                                 const ks_node_info_t *ni,
                                                 int64_t *score,
                                                 ks_status_t *st)
{
    image_locality_t *il = self;
    const image_prescore_t *s = state;
    int64_t sum = 0;
    uint32_t i, total;
    (void)cs;
    if (ni->node == NULL) {
        il->api->status_reason(st, "node not found");
        return KS_ERROR;
    }
    total = s ? s->total_nodes : il->api->snapshot_num_nodes(il->h);
    for (i = 0; i < pod->n_containers && total > 0; i++) {
        int64_t size;
        uint32_t num;
        if (s != NULL) {
            size = node_image_size(ni->node, s->images[i].name, 1);
            num = s->images[i].num_nodes;
        } else {
            /* Upstream v1.24 has no PreScore here: score without it too,
             * with no allocation. */
            char buf[1024];
            const char *img = normalized_image(pod->containers[i].image, buf,
                                               sizeof buf);
            size = node_image_size(ni->node, img, 0);
            num = size >= 0 ? il->api->image_num_nodes(il->h, img) : 0;
        }
        if (size >= 0)
            sum += scaled_image_score(size, num, total);
    }
    *score = calculate_priority(sum, pod->n_containers);
    return KS_SUCCESS;
}

/* Score for callers without the state slots (the SDK's 1.0 entry point):
 * the same, with the state looked up. */
static ks_code_t image_locality_score(void *self, ks_cycle_state_t *cs,
                                      const ks_pod_t *pod, const ks_node_info_t *ni,
                                      int64_t *score, ks_status_t *st)
{
    image_locality_t *il = self;
    return image_locality_score_with_state(
        self, cs, il->api->plugin_state_get(il->h, cs, KS_STATE_SCORE),
        pod, ni, score, st);
}

/* Opportunistic batching (upstream's image names signer): the image of
 * every container, in order. */
static ks_code_t il_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    uint32_t i;
    (void)self;
    ks_sign_i64(sg, pod->n_containers);
    for (i = 0; i < pod->n_containers; i++)
        ks_sign_ptr(sg, pod->containers[i].image);
    return KS_SUCCESS;
}

/* Bulk Filter and Score (since ABI 1.2): the per-node functions in a
 * loop the compiler can fold them into. */
KS_SCORE_NODES_FROM(image_locality_score_nodes_general,
                    image_locality_score_with_state)

/* When no node has any of the pod's images, every node scores 0 (the
 * minimum threshold): no per-node lookups then. */
static ks_code_t image_locality_score_nodes(void *self, ks_cycle_state_t *cs,
                                            void *state, const ks_pod_t *pod,
                                            const ks_node_info_t *const *nodes,
                                            uint32_t n, int64_t *scores,
                                            ks_status_t *scratch)
{
    const image_prescore_t *s = state;
    int64_t none;
    uint32_t i;
    if (s == NULL)
        return image_locality_score_nodes_general(self, cs, state, pod, nodes,
                                                  n, scores, scratch);
    for (i = 0; i < s->n; i++)
        if (s->images[i].num_nodes > 0)
            return image_locality_score_nodes_general(self, cs, state, pod,
                                                      nodes, n, scores,
                                                      scratch);
    none = calculate_priority(0, pod->n_containers);
    {
        /* the host's flags column (since ABI 1.7): no NodeInfo read */
        const image_locality_t *il = self;
        const uint32_t *pos;
        const ks_node_columns_t *col =
            ks_bulk_columns(il->api, il->h, nodes, &pos);
        uint8_t any = 0;
        if (col != NULL) {
            for (i = 0; i < n; i++) {
                any |= col->flags[pos[i]];
                scores[i] = none;
            }
            if (!(any & KS_COL_NO_NODE))
                return KS_SUCCESS;
        }
    }
#pragma GCC unroll 4
    for (i = 0; i < n; i++) {
        if (nodes[i]->node == NULL)
            return image_locality_score_with_state(self, cs, state, pod,
                                                   nodes[i], &scores[i],
                                                   scratch);
        scores[i] = none;
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE("ImageLocality", "1.24.1-ks1",
    .create = image_locality_create,
    .destroy = image_locality_destroy,
    .pre_score = image_locality_pre_score,
    .score = image_locality_score,
    .score_with_state = image_locality_score_with_state,
                 .sign = il_sign,
    .score_nodes = image_locality_score_nodes);
