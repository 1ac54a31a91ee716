/* The API server as source of cluster state: the informers and what each
 * change does to the cache and the queue (the writes: source_writer.c). */
#include "source_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/hash.h"
#include "base/intern.h"
#include "base/log.h"
#include "cluster/objects_json.h"
#include "framework/cluster_event.h"

static const struct {
    const char *resource, *path, *field_selector, *kind;
} inf_defs[INF_COUNT] = {
    {"nodes", "/api/v1/nodes", NULL, "Node"},
    {"namespaces", "/api/v1/namespaces", NULL, "Namespace"},
    {"services", "/api/v1/services", NULL, "Service"},
    {"replicationcontrollers", "/api/v1/replicationcontrollers", NULL,
     "ReplicationController"},
    {"replicasets", "/apis/apps/v1/replicasets", NULL, "ReplicaSet"},
    {"statefulsets", "/apis/apps/v1/statefulsets", NULL, "StatefulSet"},
    /* Terminal pods hold no resources: upstream's scheduler informer
     * leaves them out the same way. */
    {"pods", "/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed",
     "Pod"},
};

static ks_intern_t *IN(void)
{
    return ks_intern_global();
}

/* --- hashing the fields that matter ---------------------------------------- */

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    return (h ^ ks_hash_bytes(p, n)) * 0x100000001b3ULL;
}

/* A hash of `j`, skipping at the top level "status" (but its startTime)
 * and, in metadata, the fields that change on every write. */
static uint64_t hash_json(const json_t *j, int depth, int in_metadata)
{
    uint64_t h = 0xcbf29ce484222325ULL + (uint64_t)json_typeof(j);
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v) {
            if (depth == 0 && strcmp(k, "status") == 0) {
                const char *st = json_string_value(json_object_get(v, "startTime"));
                if (st)
                    h = mix(h, st, strlen(st));
                continue;
            }
            if (in_metadata &&
                (strcmp(k, "resourceVersion") == 0 ||
                 strcmp(k, "managedFields") == 0 ||
                 strcmp(k, "generation") == 0))
                continue;
            h = mix(h, k, strlen(k));
            h ^= hash_json(v, depth + 1,
                           depth == 0 && strcmp(k, "metadata") == 0);
            h *= 0x9e3779b97f4a7c15ULL;
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *v;
        json_array_foreach((json_t *)j, i, v) {
            h ^= hash_json(v, depth + 1, 0) + i;
            h *= 0x9e3779b97f4a7c15ULL;
        }
        break;
    }
    case JSON_STRING:
        h = mix(h, json_string_value(j), json_string_length(j));
        break;
    case JSON_INTEGER: {
        json_int_t v = json_integer_value(j);
        h = mix(h, &v, sizeof v);
        break;
    }
    case JSON_REAL: {
        double v = json_real_value(j);
        h = mix(h, &v, sizeof v);
        break;
    }
    default:
        break;
    }
    return h;
}

static const char *md_str(const json_t *obj, const char *field)
{
    return json_string_value(
        json_object_get(json_object_get(obj, "metadata"), field));
}

static void what_of(const char *kind, const json_t *obj, char *buf,
                    size_t len)
{
    const char *ns = md_str(obj, "namespace"), *name = md_str(obj, "name");
    snprintf(buf, len, "%s %s%s%s from the API server", kind,
             ns ? ns : "", ns ? "/" : "", name ? name : "?");
}

/* --- pods ------------------------------------------------------------------------ */

static void ent_free(pod_ent_t *e)
{
    if (e == NULL)
        return;
    if (e->held)
        ks_pod_free(e->held);
    free(e->cond_message);
    free(e->ns);
    free(e->name);
    free(e);
}

static void emit(ks_kube_source_t *src, uint32_t res, uint32_t act)
{
    ks_cluster_event_t ev = {res, act};
    if (src->synced)
        ks_scheduler_on_event(src->sched, ev);
}

/* An event with its objects, for the QueueingHints (old_obj NULL for an
 * add, new_obj NULL for a delete; both alive during the call). */
static void emit_objs(ks_kube_source_t *src, uint32_t res, uint32_t act,
                      const void *old_obj, const void *new_obj)
{
    ks_cluster_event_t ev = {res, act};
    if (src->synced)
        ks_scheduler_on_cluster_event(src->sched, ev, old_obj, new_obj);
}

/* An assigned pod the cache now has: AssignedPodAdd with it. */
static void emit_assigned_add(ks_kube_source_t *src, const char *uid)
{
    emit_objs(src, KS_RES_POD, KS_ACT_ADD, NULL,
              ks_cache_get_pod(src->cache, uid));
}

static int serves(ks_kube_source_t *src, const ks_pod_t *pod)
{
    if (src->shadow_bound) /* shadow mode: ksched schedules nothing */
        return 0;
    return ks_generation_profile(ks_scheduler_generation(src->sched),
                                 pod->scheduler_name) != NULL;
}

/* An assigned pod into the cache (replacing what the cache had). */
static void cache_put_assigned(ks_kube_source_t *src, ks_pod_t *pod)
{
    ks_error_t err = {0};
    if (ks_cache_get_pod(src->cache, pod->uid) != NULL &&
        !ks_cache_is_assumed(src->cache, pod->uid))
        ks_cache_remove_pod(src->cache, pod->uid, NULL);
    if (ks_cache_add_pod(src->cache, pod, &err) != 0) {
        ks_log(KS_LOGL_WARN, "pod %s/%s: %s", pod->ns, pod->name, err.msg);
        ks_pod_free(pod);
    }
}

/* Hand an unassigned pod of ours to the scheduler (or hold it until every
 * informer synced). Takes `pod`. */
static void queue_pending(ks_kube_source_t *src, pod_ent_t *e, ks_pod_t *pod)
{
    if (!src->synced || src->inactive) {
        if (e->held)
            ks_pod_free(e->held);
        e->held = pod;
        return;
    }
    if (ks_scheduler_add_pod(src->sched, pod) != 0) {
        /* No profile (any more): left to another scheduler. */
        e->state = KS_POD_OTHER;
        ks_pod_free(pod);
    }
}

/* The watch shows a pod of ours bound while its binding is still being
 * answered (the assumed pod stays until then): what pod_upsert's KS_POD_PENDING
 * case does with it, without decoding the whole pod only to free it.
 * 0 when the object is not that (not bound, or fields not as the API
 * server writes them): the caller decodes it. */
static int confirm_bound(ks_kube_source_t *src, pod_ent_t *e,
                         const json_t *obj, uint64_t h)
{
    const json_t *node =
        json_object_get(json_object_get(obj, "spec"), "nodeName");
    const json_t *status = json_object_get(obj, "status");
    const json_t *nom = json_object_get(status, "nominatedNodeName");
    const char *nominated;
    if (!json_is_string(node) || json_string_length(node) == 0 ||
        (status != NULL && !json_is_object(status)) ||
        (nom != NULL && !json_is_string(nom)))
        return 0;
    nominated = nom ? ks_intern_str(IN(), json_string_value(nom))
                    : ks_intern_empty(IN());
    if (nominated == NULL)
        return 0;
    e->hash = h;
    e->nominated = nominated;
    e->state = KS_POD_BOUND;
    src->stats.pods_assigned++;
    if (e->held) {
        ks_pod_free(e->held);
        e->held = NULL;
    }
    return 1;
}

/* The pod's PodScheduled condition is False with reason Unschedulable
 * (its scheduler found no node). */
static int unschedulable(const json_t *obj)
{
    const json_t *conds =
        json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    for (i = 0; json_is_array(conds) && i < json_array_size(conds); i++) {
        const json_t *c = json_array_get(conds, i);
        const char *t = json_string_value(json_object_get(c, "type")),
                   *st = json_string_value(json_object_get(c, "status")),
                   *r = json_string_value(json_object_get(c, "reason"));
        if (t && st && r && strcmp(t, "PodScheduled") == 0 &&
            strcmp(st, "False") == 0 && strcmp(r, "Unschedulable") == 0)
            return 1;
    }
    return 0;
}

/* Shadow mode: another scheduler found no node for a pod; compared once
 * (the first time the condition is seen). */
static void shadow_unschedulable(ks_kube_source_t *src, pod_ent_t *e,
                                 json_t *obj)
{
    ks_error_t err = {0};
    ks_pod_t *pod;
    char what[700];
    what_of("pod", obj, what, sizeof what);
    e->shadow_unsched = 1;
    if (ks_pod_from_json(what, obj, IN(), &pod, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    if (pod->node_name[0] == '\0')
        src->shadow_bound(src->shadow_ud, pod);
    ks_pod_free(pod);
}

static void pod_upsert(ks_kube_source_t *src, json_t *obj)
{
    const char *uid = md_str(obj, "uid");
    pod_ent_t *e;
    ks_pod_t *pod;
    ks_error_t err = {0};
    char what[700];
    uint64_t h;
    int assigned, is_new = 0;

    if (uid == NULL || uid[0] == '\0')
        return;
    h = hash_json(obj, 0, 0);
    e = ks_kube_source_ent(src, uid);
    if (src->shadow_bound && e != NULL && e->state == KS_POD_OTHER &&
        !e->shadow_unsched && unschedulable(obj))
        shadow_unschedulable(src, e, obj);
    if (e != NULL && e->hash == h)
        return; /* only the status or the resourceVersion moved */
    if (e != NULL && e->state == KS_POD_PENDING &&
        ks_cache_is_assumed(src->cache, uid) && confirm_bound(src, e, obj, h))
        return;
    what_of("pod", obj, what, sizeof what);
    if (ks_pod_from_json(what, obj, IN(), &pod, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    if (e == NULL) {
        size_t ul = strlen(uid) + 1;
        if ((e = calloc(1, sizeof *e + ul)) == NULL) {
            ks_pod_free(pod);
            return;
        }
        memcpy(e->uid, uid, ul);
        e->ns = strdup(pod->ns);
        e->name = strdup(pod->name);
        if (e->ns == NULL || e->name == NULL ||
            ks_strmap_put(&src->pods, e->uid, e) != 0) {
            ent_free(e);
            ks_pod_free(pod);
            return;
        }
        e->state = -1;
        is_new = 1;
    }
    e->hash = h;
    e->nominated = pod->nominated_node_name;
    assigned = pod->node_name[0] != '\0';

    if (is_new) {
        if (assigned) {
            e->state = KS_POD_BOUND;
            src->stats.pods_assigned++;
            cache_put_assigned(src, pod);
            emit_assigned_add(src, uid);
        } else if (serves(src, pod)) {
            e->state = KS_POD_PENDING;
            src->stats.pods_pending++;
            queue_pending(src, e, pod);
        } else {
            e->state = KS_POD_OTHER;
            ks_pod_free(pod);
        }
        return;
    }

    switch (e->state) {
    case KS_POD_PENDING:
        if (assigned) {
            /* Bound: by us (confirming the assumed pod) or by someone
             * else while it waited here. */
            e->state = KS_POD_BOUND;
            src->stats.pods_assigned++;
            if (e->held) {
                ks_pod_free(e->held);
                e->held = NULL;
            }
            if (ks_cache_is_assumed(src->cache, uid)) {
                /* Our binding is still being answered: the assumed pod
                 * stays until it is; it is the same pod. */
                ks_pod_free(pod);
                return;
            }
            if (ks_cache_get_pod(src->cache, uid) == NULL)
                ks_scheduler_remove_pod(src->sched, uid);
            cache_put_assigned(src, pod);
            emit_assigned_add(src, uid);
            return;
        }
        if (e->held) {
            ks_pod_free(e->held);
            e->held = pod;
            return;
        }
        if (ks_cache_is_assumed(src->cache, uid)) {
            ks_pod_free(pod); /* upstream skips updates of assumed pods */
            return;
        }
        /* Changed while queued: the new version replaces the old one. */
        ks_scheduler_remove_pod(src->sched, uid);
        queue_pending(src, e, pod);
        emit(src, KS_RES_POD, KS_ACT_UPDATE);
        return;
    case KS_POD_BOUND:
        if (!assigned || ks_cache_is_assumed(src->cache, uid)) {
            ks_pod_free(pod);
            return;
        }
        /* The hints read the old pod, so before the cache replaces it. */
        {
            const ks_pod_t *old = ks_cache_get_pod(src->cache, uid);
            if (old != NULL)
                emit_objs(src, KS_RES_POD,
                          ks_cluster_event_pod_update(old, pod), old, pod);
            else
                emit(src, KS_RES_POD, KS_ACT_UPDATE);
        }
        cache_put_assigned(src, pod);
        return;
    default: /* KS_POD_OTHER */
        if (assigned) {
            /* shadow mode: compare before the cache takes it */
            if (src->shadow_bound)
                src->shadow_bound(src->shadow_ud, pod);
            e->state = KS_POD_BOUND;
            src->stats.pods_assigned++;
            cache_put_assigned(src, pod);
            emit_assigned_add(src, uid);
            return;
        }
        ks_pod_free(pod);
        return;
    }
}

static void pod_remove(ks_kube_source_t *src, json_t *obj)
{
    const char *uid = md_str(obj, "uid");
    pod_ent_t *e;
    if (uid == NULL || (e = ks_kube_source_ent(src, uid)) == NULL)
        return;
    ks_strmap_del(&src->pods, e->uid);
    switch (e->state) {
    case KS_POD_PENDING:
        if (e->held == NULL &&
            ks_scheduler_remove_pod(src->sched, e->uid) != 0 &&
            ks_cache_remove_pod(src->cache, e->uid, NULL) == 0)
            emit(src, KS_RES_POD, KS_ACT_DELETE);
        break;
    case KS_POD_BOUND:
        /* A preemption victim may have left the cache already; its
         * deletion in the cluster is still the event that lets the
         * preemptor (and others) try again (without the pod: unasked). The
         * hints read the pod, so before it leaves the cache. */
        emit_objs(src, KS_RES_POD, KS_ACT_DELETE,
                  ks_cache_get_pod(src->cache, e->uid), NULL);
        if (ks_scheduler_remove_pod(src->sched, e->uid) != 0)
            ks_cache_remove_pod(src->cache, e->uid, NULL);
        break;
    default:
        break;
    }
    ent_free(e);
}

/* --- nodes --------------------------------------------------------------------- */

static void node_upsert(ks_kube_source_t *src, json_t *obj)
{
    ks_node_t *node;
    ks_error_t err = {0};
    const ks_node_info_t *ni;
    char what[700];
    uint32_t act;
    what_of("node", obj, what, sizeof what);
    if (ks_node_from_json(what, obj, IN(), &node, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    ni = ks_cache_node_info(src->cache, node->name);
    if (ni == NULL || ni->node == NULL) {
        if (ks_cache_add_node(src->cache, node, &err) != 0) {
            ks_log(KS_LOGL_WARN, "%s", err.msg);
            ks_node_free(node);
            return;
        }
        ni = ks_cache_node_info(src->cache, node->name);
        emit_objs(src, KS_RES_NODE, KS_ACT_ADD, NULL, ni ? ni->node : NULL);
        return;
    }
    act = ks_cluster_event_node_update(ni->node, node);
    if (act == 0) {
        /* A heartbeat or a field ksched does not read: the cache keeps its
         * node, with the object as it is now for the extenders. */
        if (ks_node_raw_differs(ni->node, node))
            ks_node_raw_move(ni->node, node);
        ks_node_free(node);
        return;
    }
    /* The hints read the old node, so before the cache replaces it. */
    emit_objs(src, KS_RES_NODE, act, ni->node, node);
    if (ks_cache_update_node(src->cache, node, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        ks_node_free(node);
    }
}

static void node_remove(ks_kube_source_t *src, json_t *obj)
{
    const char *name = md_str(obj, "name");
    const ks_node_info_t *ni =
        name ? ks_cache_node_info(src->cache, name) : NULL;
    if (ni == NULL || ni->node == NULL)
        return;
    emit_objs(src, KS_RES_NODE, KS_ACT_DELETE, ni->node, NULL);
    ks_cache_remove_node(src->cache, name, NULL);
}

/* --- namespaces and selector owners ------------------------------------------------ */

static void ns_upsert(ks_kube_source_t *src, json_t *obj)
{
    ks_namespace_t *ns;
    ks_error_t err = {0};
    char what[700];
    what_of("namespace", obj, what, sizeof what);
    if (ks_namespace_from_json(what, obj, IN(), &ns, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    if (ks_cache_add_namespace(src->cache, ns) != 0) {
        ks_namespace_free(ns);
        return;
    }
    emit(src, KS_RES_NAMESPACE, KS_ACT_ADD | KS_ACT_UPDATE);
}

static void ns_remove(ks_kube_source_t *src, json_t *obj)
{
    const char *name = md_str(obj, "name");
    if (name && ks_cache_remove_namespace(src->cache, name) == 0)
        emit(src, KS_RES_NAMESPACE, KS_ACT_DELETE);
}

static void owner_upsert(ks_kube_source_t *src, int which, json_t *obj)
{
    ks_service_t *svc;
    ks_error_t err = {0};
    char what[700];
    what_of(inf_defs[which].kind, obj, what, sizeof what);
    if (ks_selector_owner_from_json(inf_defs[which].kind, what, obj, IN(),
                                    &svc, &err) != 0) {
        ks_log(KS_LOGL_WARN, "%s", err.msg);
        return;
    }
    if (ks_cache_add_service(src->cache, svc) != 0) {
        ks_service_free(svc);
        return;
    }
    if (which == INF_SERVICES)
        emit(src, KS_RES_SERVICE, KS_ACT_ADD | KS_ACT_UPDATE);
}

static void owner_remove(ks_kube_source_t *src, int which, json_t *obj)
{
    const char *ns = md_str(obj, "namespace"), *name = md_str(obj, "name");
    char key[600];
    if (ns == NULL || name == NULL)
        return;
    if (which == INF_SERVICES)
        snprintf(key, sizeof key, "%s", name);
    else
        snprintf(key, sizeof key, "%s/%s", inf_defs[which].kind, name);
    if (ks_cache_remove_service(src->cache, ns, key) == 0 &&
        which == INF_SERVICES)
        emit(src, KS_RES_SERVICE, KS_ACT_DELETE);
}

/* --- informer plumbing ---------------------------------------------------------------- */

static void h_upsert(void *ud, json_t *obj)
{
    inf_slot_t *sl = ud;
    switch (sl->which) {
    case INF_NODES: node_upsert(sl->src, obj); break;
    case INF_NAMESPACES: ns_upsert(sl->src, obj); break;
    case INF_PODS: pod_upsert(sl->src, obj); break;
    default: owner_upsert(sl->src, sl->which, obj); break;
    }
}

static void h_remove(void *ud, json_t *obj)
{
    inf_slot_t *sl = ud;
    switch (sl->which) {
    case INF_NODES: node_remove(sl->src, obj); break;
    case INF_NAMESPACES: ns_remove(sl->src, obj); break;
    case INF_PODS: pod_remove(sl->src, obj); break;
    default: owner_remove(sl->src, sl->which, obj); break;
    }
}

/* Hand the held pods to the scheduler (synced and active). */
static size_t release_held(ks_kube_source_t *src)
{
    size_t i, n = 0;
    for (i = 0; i < src->pods.cap; i++) {
        pod_ent_t *e = src->pods.slots[i].val;
        ks_pod_t *pod;
        if (src->pods.slots[i].key == NULL || e->held == NULL)
            continue;
        pod = e->held;
        e->held = NULL;
        queue_pending(src, e, pod);
        n++;
    }
    ks_scheduler_kick(src->sched);
    return n;
}

/* Every informer listed once. */
static void all_synced(ks_kube_source_t *src)
{
    size_t n = 0;
    src->synced = 1;
    if (!src->inactive)
        n = release_held(src);
    ks_log(KS_LOGL_INFO, "informers synced: %zu nodes, %zu pods in the "
                         "cache, %zu pods to schedule%s",
           ks_cache_num_nodes(src->cache), ks_cache_num_pods(src->cache), n,
           src->inactive ? " once this replica leads" : "");
}

void ks_kube_source_set_active(ks_kube_source_t *src, int active)
{
    int was = !src->inactive;
    src->inactive = !active;
    if (active && !was && src->synced && src->sched)
        release_held(src);
}

static int never_write(void *ud)
{
    (void)ud;
    return 0;
}

void ks_kube_source_set_shadow(ks_kube_source_t *src,
                               int (*decided)(void *ud, ks_pod_t *pod),
                               void *ud)
{
    src->shadow_bound = decided;
    src->shadow_ud = ud;
    src->may_write = never_write;
    src->may_write_ud = NULL;
}

void ks_kube_source_set_write_gate(ks_kube_source_t *src,
                                   int (*fn)(void *ud), void *ud)
{
    src->may_write = fn;
    src->may_write_ud = ud;
}

/* Every built-in informer and every declared resource's listed once. */
static void maybe_all_synced(ks_kube_source_t *src)
{
    int i;
    if (src->synced)
        return;
    for (i = 0; i < INF_COUNT; i++)
        if (!ks_informer_synced(src->infs[i].inf))
            return;
    if (!ks_store_informers_synced(src->stores))
        return;
    all_synced(src);
}

static void h_synced(void *ud)
{
    inf_slot_t *sl = ud;
    sl->last_error[0] = '\0';
    maybe_all_synced(sl->src);
}

static void stores_synced(void *ud)
{
    maybe_all_synced(ud);
}

/* A declared resource's object changed (SDK ABI 1.3): a KS_RES_OBJECT
 * event with the objects, for the plugins' QueueingHints. */
static void stores_changed(void *ud, const ks_object_t *old,
                           const ks_object_t *n)
{
    ks_cluster_event_t ev = ks_cluster_event_object(old, n);
    emit_objs(ud, ev.resource, ev.action, old, n);
}

static void h_failed(void *ud, long status, const char *message)
{
    inf_slot_t *sl = ud;
    sl->last_status = status;
    snprintf(sl->last_error, sizeof sl->last_error, "%s", message);
}

ks_kube_source_t *ks_kube_source_new(uv_loop_t *loop,
                                     const ks_kube_source_opts_t *o,
                                     ks_error_t *err)
{
    ks_kube_source_t *src = calloc(1, sizeof *src);
    int i;
    if (src == NULL) {
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    src->loop = loop;
    src->client = o->client;
    src->event_client = o->event_client ? o->event_client : o->client;
    src->cache = o->cache;
    src->events = ks_event_recorder_new(loop, src->event_client,
                                        o->hostname ? o->hostname : "ksched",
                                        err);
    if (src->events == NULL)
        goto fail;
    for (i = 0; i < INF_COUNT; i++) {
        ks_informer_opts_t io;
        ks_informer_handler_t h;
        inf_slot_t *sl = &src->infs[i];
        memset(&io, 0, sizeof io);
        io.resource = inf_defs[i].resource;
        io.path = inf_defs[i].path;
        io.field_selector = inf_defs[i].field_selector;
        memset(&h, 0, sizeof h);
        h.upsert = h_upsert;
        h.remove = h_remove;
        h.synced = h_synced;
        h.failed = h_failed;
        h.ud = sl;
        sl->src = src;
        sl->which = i;
        sl->inf = ks_informer_new(loop, src->client, &io, &h, err);
        if (sl->inf == NULL)
            goto fail;
    }
    {
        ks_store_informers_handler_t sh = {stores_synced, stores_changed,
                                           src};
        src->stores = ks_store_informers_new(loop, src->client, &sh, err);
        if (src->stores == NULL)
            goto fail;
    }
    return src;
fail:
    ks_kube_source_close(src);
    return NULL;
}

int ks_kube_source_start(ks_kube_source_t *src, ks_scheduler_t *sched,
                         ks_error_t *err)
{
    int i;
    src->sched = sched;
    for (i = 0; i < INF_COUNT; i++)
        if (ks_informer_start(src->infs[i].inf, err) != 0)
            return err ? err->code : KS_EIO;
    if (src->stores != NULL &&
        ks_store_informers_start(src->stores, err) != 0)
        return err ? err->code : KS_EIO;
    return 0;
}

void ks_kube_source_close(ks_kube_source_t *src)
{
    size_t i;
    if (src == NULL)
        return;
    for (i = 0; i < INF_COUNT; i++)
        ks_informer_close(src->infs[i].inf);
    ks_store_informers_close(src->stores);
    ks_kube_client_cancel_owner(src->client, src);
    ks_event_recorder_close(src->events);
    for (i = 0; i < src->pods.cap; i++)
        if (src->pods.slots[i].key)
            ent_free(src->pods.slots[i].val);
    ks_strmap_destroy(&src->pods);
    free(src);
}

int ks_kube_source_synced(const ks_kube_source_t *src)
{
    return src->synced;
}

void ks_kube_source_describe(const ks_kube_source_t *src, char *buf,
                             size_t len)
{
    size_t off = 0;
    int i, first = 1;
    buf[0] = '\0';
    for (i = 0; i < INF_COUNT && off < len; i++) {
        const inf_slot_t *sl = &src->infs[i];
        if (ks_informer_synced(sl->inf))
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s%s",
                                first ? "informers not synced: " : ", ",
                                inf_defs[i].resource,
                                sl->last_error[0] ? " (" : "",
                                sl->last_error, sl->last_error[0] ? ")" : "");
        first = 0;
    }
    if (off < len)
        ks_store_informers_describe(src->stores, buf, len, &off);
}

/* The informer series: name, type, help, and the value of informer i. */
static uint64_t m_synced(const ks_informer_t *inf)
{
    return (uint64_t)ks_informer_synced(inf);
}
static uint64_t m_objects(const ks_informer_t *inf)
{
    return ks_informer_count(inf);
}
static uint64_t m_lists(const ks_informer_t *inf)
{
    return ks_informer_stats(inf).lists;
}
static uint64_t m_watches(const ks_informer_t *inf)
{
    return ks_informer_stats(inf).watches;
}
static uint64_t m_failures(const ks_informer_t *inf)
{
    return ks_informer_stats(inf).failures;
}
static uint64_t m_gone(const ks_informer_t *inf)
{
    return ks_informer_stats(inf).gone;
}

static const struct informer_series {
    const char *name, *type, *help;
    uint64_t (*value)(const ks_informer_t *inf);
} informer_series[] = {
    {"ksched_informer_synced", "gauge",
     "Whether the informer has completed its first list (1) or not (0).",
     m_synced},
    {"ksched_informer_objects", "gauge", "Objects in the informer's store.",
     m_objects},
    {"ksched_informer_lists_total", "counter",
     "Complete lists (first lists and re-lists).", m_lists},
    {"ksched_informer_watches_total", "counter", "Watches opened.",
     m_watches},
    {"ksched_informer_failures_total", "counter",
     "Failed lists or watches (retried with backoff).", m_failures},
    {"ksched_informer_gone_total", "counter",
     "Watches or lists answered 410 Gone (resourceVersion too old): "
     "re-lists.",
     m_gone},
};

void ks_kube_source_metrics(const ks_kube_source_t *src, ks_buf_t *out)
{
    static const char *wk[] = {"bind", "status", "delete", "event"};
    ks_event_stats_t es = ks_event_recorder_stats(src->events);
    size_t k;
    int i;
    for (k = 0; k < sizeof informer_series / sizeof informer_series[0]; k++) {
        const struct informer_series *m = &informer_series[k];
        ks_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
                      m->name, m->type);
        for (i = 0; i < INF_COUNT; i++)
            ks_buf_printf(out, "%s{resource=\"%s\"} %" PRIu64 "\n", m->name,
                          inf_defs[i].resource,
                          m->value(src->infs[i].inf));
    }
    ks_buf_puts(out, "# HELP ksched_cluster_writes_total Writes to the API "
                     "server by kind and result.\n"
                     "# TYPE ksched_cluster_writes_total counter\n");
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"bind\",result="
                       "\"success\"} %" PRIu64 "\n",
                  src->stats.bindings);
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"bind\",result="
                       "\"failure\"} %" PRIu64 "\n",
                  src->stats.binding_failures + src->write_fail[W_BIND]);
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"status\",result="
                       "\"success\"} %" PRIu64 "\n",
                  src->stats.status_patches);
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"delete\",result="
                       "\"success\"} %" PRIu64 "\n",
                  src->stats.deletes);
    for (i = W_STATUS; i <= W_DELETE; i++)
        ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"%s\",result="
                           "\"failure\"} %" PRIu64 "\n",
                      wk[i], src->write_fail[i]);
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"event\",result="
                       "\"success\"} %" PRIu64 "\n",
                  es.created + es.patched);
    ks_buf_printf(out, "ksched_cluster_writes_total{kind=\"event\",result="
                       "\"failure\"} %" PRIu64 "\n",
                  es.failed);
    ks_buf_puts(out, "# HELP ksched_cluster_requests_in_flight Requests to "
                     "the API server queued or running, watches included, "
                     "by client (writes: bindings, status patches, "
                     "deletions and the informers; events).\n"
                     "# TYPE ksched_cluster_requests_in_flight gauge\n");
    ks_buf_printf(out, "ksched_cluster_requests_in_flight{client=\"writes\"} "
                       "%zu\n", ks_kube_client_in_flight(src->client));
    if (src->event_client != src->client)
        ks_buf_printf(out, "ksched_cluster_requests_in_flight{client="
                           "\"events\"} %zu\n",
                      ks_kube_client_in_flight(src->event_client));
    ks_buf_puts(out, "# HELP ksched_cluster_requests_in_flight_max The most "
                     "requests in flight at once since the start, by "
                     "client.\n"
                     "# TYPE ksched_cluster_requests_in_flight_max gauge\n");
    ks_buf_printf(out, "ksched_cluster_requests_in_flight_max{client="
                       "\"writes\"} %zu\n",
                  ks_kube_client_in_flight_max(src->client));
    if (src->event_client != src->client)
        ks_buf_printf(out, "ksched_cluster_requests_in_flight_max{client="
                           "\"events\"} %zu\n",
                      ks_kube_client_in_flight_max(src->event_client));
    ks_buf_printf(out, "# HELP ksched_events_aggregated_total Repeated "
                       "events folded into a series.\n"
                       "# TYPE ksched_events_aggregated_total counter\n"
                       "ksched_events_aggregated_total %" PRIu64 "\n",
                  es.aggregated);
    ks_buf_printf(out, "# HELP ksched_events_dropped_total New events "
                       "dropped because 1000 event writes already waited "
                       "for the API server.\n"
                       "# TYPE ksched_events_dropped_total counter\n"
                       "ksched_events_dropped_total %" PRIu64 "\n",
                  es.dropped);
}

ks_kube_source_stats_t ks_kube_source_stats(const ks_kube_source_t *src)
{
    return src->stats;
}
