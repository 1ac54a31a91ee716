/* Replay of a snapshot's bound pods (replay.h). */
#include "replay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"

/* A pod to replay. Strings are the pod's interned ones; profile is the
 * interned name of the profile to replay it with. */
typedef struct replay_pod {
    const char *uid, *ns, *name, *node, *profile;
    int64_t created;
} replay_pod_t;

struct ks_replay {
    ks_scheduler_t *s;
    ks_cache_t *cache;
    ks_generation_t *gen;
    replay_pod_t *pods;
    size_t n, cap;
    /* ks_replay_map: scheduler name -> interned profile name */
    const char *map_name[16], *map_profile[16];
    size_t n_map;
};

typedef struct try_ctx {
    const char *node;
    ks_replay_fn fn;
    void *ud;
    int oom;
} try_ctx_t;

ks_replay_t *ks_replay_new(ks_generation_t *gen, ks_cache_t *cache,
                           const ks_sched_opts_t *opts)
{
    ks_replay_t *rp = calloc(1, sizeof *rp);
    ks_sched_opts_t so = *opts;
    if (rp == NULL)
        return NULL;
    so.percentage_override = 100;
    so.score_single_node = 1;
    so.full_eval_ns = so.full_eval_name = NULL;
    so.no_post_filter = 1;
    memset(&so.writer, 0, sizeof so.writer);
    so.obs.cycle = NULL;
    so.obs.bound = NULL;
    if ((rp->s = ks_scheduler_new(gen, cache, &so)) == NULL) {
        free(rp);
        return NULL;
    }
    rp->cache = cache;
    rp->gen = gen;
    return rp;
}

void ks_replay_free(ks_replay_t *rp)
{
    if (rp == NULL)
        return;
    ks_scheduler_free(rp->s);
    free(rp->pods);
    free(rp);
}

int ks_replay_map(ks_replay_t *rp, const ks_shadow_names_t *names,
                  ks_error_t *err)
{
    ks_intern_t *in = ks_intern_global();
    size_t i;
    for (i = 0; i < names->n && rp->n_map < 16; i++) {
        const char *prof =
            names->profile[i][0] ? names->profile[i] : names->name[i];
        if (ks_generation_profile(rp->gen, prof) == NULL)
            return ks_error_set(err, KS_EINVAL,
                                "--replay-as %s: the configuration has no "
                                "profile \"%s\"",
                                names->name[i], prof);
        rp->map_name[rp->n_map] = ks_intern_str(in, names->name[i]);
        rp->map_profile[rp->n_map] = ks_intern_str(in, prof);
        if (!rp->map_name[rp->n_map] || !rp->map_profile[rp->n_map])
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        rp->n_map++;
    }
    return 0;
}

/* The profile a pod is replayed with (interned), or NULL: none. */
static const char *profile_for(const ks_replay_t *rp, const ks_pod_t *pod)
{
    size_t i;
    for (i = 0; i < rp->n_map; i++)
        if (strcmp(rp->map_name[i], pod->scheduler_name) == 0)
            return rp->map_profile[i];
    return ks_generation_profile(rp->gen, pod->scheduler_name)
               ? pod->scheduler_name
               : NULL;
}

size_t ks_replay_count(const ks_replay_t *rp)
{
    return rp->n;
}

int ks_replay_add_pod(ks_replay_t *rp, ks_pod_t *pod, ks_error_t *err)
{
    replay_pod_t *p;
    const char *profile;
    int rc;
    if (pod->node_name[0] == '\0') {
        rc = ks_error_set(err, KS_EINVAL, "pod %s/%s is not bound", pod->ns,
                          pod->name);
        ks_pod_free(pod);
        return rc;
    }
    if ((profile = profile_for(rp, pod)) == NULL) {
        if ((rc = ks_cache_add_pod(rp->cache, pod, err)) != 0)
            ks_pod_free(pod);
        return rc ? rc : 1;
    }
    if (rp->n == rp->cap) {
        size_t cap = rp->cap ? rp->cap * 2 : 64;
        replay_pod_t *np = realloc(rp->pods, cap * sizeof *np);
        if (np == NULL) {
            ks_pod_free(pod);
            return ks_error_set(err, KS_ENOMEM, "out of memory");
        }
        rp->pods = np;
        rp->cap = cap;
    }
    p = &rp->pods[rp->n];
    p->uid = pod->uid;
    p->ns = pod->ns;
    p->name = pod->name;
    p->node = pod->node_name;
    p->profile = profile;
    p->created = pod->creation_unix_ms;
    /* Assumed, so that ks_cache_forget_pod hands it back to replay. */
    if ((rc = ks_cache_assume_pod(rp->cache, pod, pod->node_name, err)) != 0) {
        ks_pod_free(pod);
        return rc;
    }
    rp->n++;
    return 0;
}

static int by_creation(const void *a, const void *b)
{
    const replay_pod_t *x = a, *y = b;
    int c;
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static void on_try(void *ud, const ks_cycle_result_t *r)
{
    try_ctx_t *t = ud;
    ks_shadow_decision_t d;
    if (ks_shadow_compare(r, t->node, &d) != 0) {
        t->oom = 1;
        return;
    }
    t->fn(t->ud, r, &d);
    ks_shadow_decision_free(&d);
}

int ks_replay_run(ks_replay_t *rp, ks_replay_fn fn, void *ud,
                  ks_error_t *err)
{
    size_t i;
    if (rp->n > 1)
        qsort(rp->pods, rp->n, sizeof *rp->pods, by_creation);
    for (i = 0; i < rp->n; i++) {
        const replay_pod_t *p = &rp->pods[i];
        try_ctx_t t = {p->node, fn, ud, 0};
        ks_pod_t *pod = ks_cache_forget_pod(rp->cache, p->uid);
        const char *sched;
        int rc;
        if (pod == NULL)
            continue;
        /* every node evaluated and scored, the real one included; the
         * profile chosen for its scheduler */
        sched = pod->scheduler_name;
        pod->scheduler_name = p->profile;
        ks_scheduler_set_full_eval(rp->s, pod->ns, pod->name);
        rc = ks_scheduler_try(rp->s, pod, on_try, &t, err);
        ks_scheduler_set_full_eval(rp->s, NULL, NULL);
        pod->scheduler_name = sched;
        /* back where it really is, for the next pods */
        if (ks_cache_assume_pod(rp->cache, pod, p->node, NULL) != 0) {
            ks_pod_free(pod);
            if (rc == 0)
                rc = ks_error_set(err, KS_ENOMEM, "out of memory");
        }
        if (rc == 0 && t.oom)
            rc = ks_error_set(err, KS_ENOMEM,
                              "out of memory comparing %s/%s", p->ns,
                              p->name);
        if (rc != 0)
            return rc;
    }
    return 0;
}
