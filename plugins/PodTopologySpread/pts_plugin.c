/*
 * PodTopologySpread: the descriptor, instance lifetime, arguments and
 * EnqueueExtensions (upstream v1.24.1 podtopologyspread/plugin.go and the
 * PodTopologySpreadArgs validation).
 *
 * Args (PodTopologySpreadArgs):
 *   defaultingType: System (default) | List
 *   defaultConstraints: a list of {maxSkew, topologyKey, whenUnsatisfiable,
 *     minDomains, nodeAffinityPolicy, nodeTaintsPolicy}; no labelSelector
 *     (it is deduced per pod). Only allowed with defaultingType List.
 * System defaulting means: hostname maxSkew 3 and zone maxSkew 5, both
 * ScheduleAnyway.
 */
#include "pts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const pts_arg_keys[] = {"defaultConstraints",
                                           "defaultingType", NULL};
static const char *const pts_constraint_keys[] = {
    "maxSkew",           "topologyKey",        "whenUnsatisfiable",
    "labelSelector",     "minDomains",         "nodeAffinityPolicy",
    "nodeTaintsPolicy",  NULL};

/* The label-name rules of metav1validation.ValidateLabelName: an optional
 * DNS-subdomain prefix and "/", then a name of at most 63 characters of
 * [A-Za-z0-9-_.] starting and ending alphanumeric. */
static int pts_valid_name_part(const char *s, size_t n, size_t max)
{
    size_t i;
    if (n == 0 || n > max)
        return 0;
    if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' &&
            s[i] != '.')
            return 0;
    return 1;
}

static int pts_valid_prefix(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || n > 253)
        return 0;
    if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!(islower(ch) || isdigit(ch) || ch == '-' || ch == '.'))
            return 0;
    }
    return 1;
}

static int pts_valid_label_name(const char *key)
{
    const char *slash = strchr(key, '/');
    if (slash == NULL)
        return pts_valid_name_part(key, strlen(key), 63);
    if (strchr(slash + 1, '/') != NULL)
        return 0;
    return pts_valid_prefix(key, (size_t)(slash - key)) &&
           pts_valid_name_part(slash + 1, strlen(slash + 1), 63);
}

static int pts_scalar(const ks_args_t *a, const char *path, char *err,
                      size_t errlen)
{
    if (a->kind == KS_ARGS_SCALAR && a->scalar != NULL)
        return 0;
    snprintf(err, errlen, "line %u, column %u: %s must be a string", a->line,
             a->column, path);
    return -1;
}

static int pts_parse_policy(const ks_args_t *a, const char *path,
                            ks_inclusion_policy_t *out, char *err,
                            size_t errlen)
{
    if (a == NULL)
        return 0;
    if (pts_scalar(a, path, err, errlen) != 0)
        return -1;
    if (strcmp(a->scalar, "Honor") == 0)
        *out = KS_POLICY_HONOR;
    else if (strcmp(a->scalar, "Ignore") == 0)
        *out = KS_POLICY_IGNORE;
    else {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Unsupported value: \"%s\": "
                 "supported values: \"Honor\", \"Ignore\"",
                 a->line, a->column, path, a->scalar);
        return -1;
    }
    return 0;
}

static int pts_parse_constraint(pts_plugin_t *pl, const ks_args_t *a,
                                uint32_t idx, pts_default_t *d, char *err,
                                size_t errlen)
{
    const ks_args_t *v;
    char path[96];
    int64_t n;
    uint32_t i;

    if (a->kind != KS_ARGS_MAP) {
        snprintf(err, errlen,
                 "line %u, column %u: defaultConstraints[%u] must be a mapping",
                 a->line, a->column, idx);
        return -1;
    }
    if (ks_args_check_keys(a, pts_constraint_keys, err, errlen) != 0)
        return -1;

    snprintf(path, sizeof path, "defaultConstraints[%u].maxSkew", idx);
    v = ks_args_get(a, "maxSkew");
    n = 0;
    if (v != NULL && ks_args_int64(v, path, &n, err, errlen) != 0)
        return -1;
    if (n <= 0 || n > INT32_MAX) {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Invalid value: %lld: not in valid "
                 "range (0, inf)",
                 v ? v->line : a->line, v ? v->column : a->column, path,
                 (long long)n);
        return -1;
    }
    d->max_skew = (int32_t)n;

    snprintf(path, sizeof path, "defaultConstraints[%u].topologyKey", idx);
    v = ks_args_get(a, "topologyKey");
    if (v != NULL && pts_scalar(v, path, err, errlen) != 0)
        return -1;
    if (v == NULL || v->scalar[0] == '\0') {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Required value: can not be empty",
                 v ? v->line : a->line, v ? v->column : a->column, path);
        return -1;
    }
    if (!pts_valid_label_name(v->scalar)) {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Invalid value: \"%s\": not a valid "
                 "label name (optional DNS prefix and '/', then at most 63 "
                 "characters of [A-Za-z0-9-_.], starting and ending "
                 "alphanumeric)",
                 v->line, v->column, path, v->scalar);
        return -1;
    }
    d->topology_key = pl->api->intern(pl->h, v->scalar);

    snprintf(path, sizeof path, "defaultConstraints[%u].whenUnsatisfiable",
             idx);
    v = ks_args_get(a, "whenUnsatisfiable");
    if (v != NULL && pts_scalar(v, path, err, errlen) != 0)
        return -1;
    if (v != NULL && strcmp(v->scalar, "DoNotSchedule") == 0)
        d->action = KS_DO_NOT_SCHEDULE;
    else if (v != NULL && strcmp(v->scalar, "ScheduleAnyway") == 0)
        d->action = KS_SCHEDULE_ANYWAY;
    else {
        snprintf(err, errlen,
                 "line %u, column %u: %s: Unsupported value: \"%s\": "
                 "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                 v ? v->line : a->line, v ? v->column : a->column, path,
                 v ? v->scalar : "");
        return -1;
    }

    v = ks_args_get(a, "labelSelector");
    if (v != NULL) {
        snprintf(err, errlen,
                 "line %u, column %u: defaultConstraints[%u].labelSelector: "
                 "Forbidden: constraint must not define a selector, as they "
                 "deduced for each pod",
                 v->line, v->column, idx);
        return -1;
    }

    snprintf(path, sizeof path, "defaultConstraints[%u].minDomains", idx);
    v = ks_args_get(a, "minDomains");
    if (v != NULL) {
        if (ks_args_int64(v, path, &n, err, errlen) != 0)
            return -1;
        if (n <= 0 || n > INT32_MAX) {
            snprintf(err, errlen,
                     "line %u, column %u: %s: Invalid value: %lld: must be "
                     "greater than 0",
                     v->line, v->column, path, (long long)n);
            return -1;
        }
        if (d->action != KS_DO_NOT_SCHEDULE) {
            snprintf(err, errlen,
                     "line %u, column %u: %s: Invalid value: %lld: can only "
                     "be used when whenUnsatisfiable is DoNotSchedule",
                     v->line, v->column, path, (long long)n);
            return -1;
        }
        d->min_domains = (int32_t)n;
    }

    snprintf(path, sizeof path, "defaultConstraints[%u].nodeAffinityPolicy",
             idx);
    if (pts_parse_policy(ks_args_get(a, "nodeAffinityPolicy"), path,
                         &d->affinity_policy, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "defaultConstraints[%u].nodeTaintsPolicy", idx);
    if (pts_parse_policy(ks_args_get(a, "nodeTaintsPolicy"), path,
                         &d->taints_policy, err, errlen) != 0)
        return -1;

    /* upstream validateConstraintNotRepeat */
    for (i = 0; i < idx; i++)
        if (pl->defaults[i].topology_key == d->topology_key &&
            pl->defaults[i].action == d->action) {
            snprintf(err, errlen,
                     "line %u, column %u: defaultConstraints[%u]: Duplicate "
                     "value: {\"%s\", \"%s\"}",
                     a->line, a->column, idx, d->topology_key,
                     d->action == KS_DO_NOT_SCHEDULE ? "DoNotSchedule"
                                                     : "ScheduleAnyway");
            return -1;
        }
    return 0;
}

static int pts_parse_args(pts_plugin_t *pl, const ks_args_t *args, char *err,
                          size_t errlen)
{
    const ks_args_t *type = ks_args_get(args, "defaultingType");
    const ks_args_t *list = ks_args_get(args, "defaultConstraints");
    uint32_t i;

    if (ks_args_check_keys(args, pts_arg_keys, err, errlen) != 0)
        return -1;
    pl->system_defaulted = 1;
    if (type != NULL) {
        if (pts_scalar(type, "defaultingType", err, errlen) != 0)
            return -1;
        if (strcmp(type->scalar, "List") == 0)
            pl->system_defaulted = 0;
        else if (strcmp(type->scalar, "System") != 0) {
            snprintf(err, errlen,
                     "line %u, column %u: defaultingType: Unsupported value: "
                     "\"%s\": supported values: \"System\", \"List\"",
                     type->line, type->column, type->scalar);
            return -1;
        }
    }
    if (list == NULL || (list->kind == KS_ARGS_SCALAR &&
                         (list->scalar == NULL || list->scalar[0] == '\0' ||
                          strcmp(list->scalar, "null") == 0)))
        return 0;
    if (list->kind != KS_ARGS_SEQ) {
        snprintf(err, errlen,
                 "line %u, column %u: defaultConstraints must be a list",
                 list->line, list->column);
        return -1;
    }
    if (list->n == 0)
        return 0;
    if (pl->system_defaulted) {
        snprintf(err, errlen,
                 "line %u, column %u: defaultingType: Invalid value: "
                 "\"System\": when .defaultConstraints are not empty",
                 type ? type->line : list->line,
                 type ? type->column : list->column);
        return -1;
    }
    pl->defaults = calloc(list->n, sizeof *pl->defaults);
    if (pl->defaults == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (i = 0; i < list->n; i++) {
        if (pts_parse_constraint(pl, list->children[i], i, &pl->defaults[i],
                                 err, errlen) != 0)
            return -1;
        pl->n_defaults = i + 1;
    }
    return 0;
}

static int pts_set_system_defaults(pts_plugin_t *pl)
{
    pl->defaults = calloc(2, sizeof *pl->defaults);
    if (pl->defaults == NULL)
        return -1;
    pl->defaults[0].max_skew = 3;
    pl->defaults[0].topology_key = pl->hostname_key;
    pl->defaults[0].action = KS_SCHEDULE_ANYWAY;
    pl->defaults[1].max_skew = 5;
    pl->defaults[1].topology_key = pl->api->intern(pl->h, PTS_LABEL_ZONE);
    pl->defaults[1].action = KS_SCHEDULE_ANYWAY;
    pl->n_defaults = 2;
    return 0;
}

static void pts_destroy(void *self)
{
    pts_plugin_t *pl = self;
    if (pl == NULL)
        return;
    pts_aggs_free(&pl->aggs);
    free(pl->defaults);
    free(pl);
}

static int pts_create(const ks_host_api_t *api, ks_handle_t *h,
                      const ks_args_t *args, void **self, char *err,
                      size_t errlen)
{
    pts_plugin_t *pl = calloc(1, sizeof *pl);
    if (pl == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pl->api = api;
    pl->h = h;
    pl->hostname_key = api->intern(h, PTS_LABEL_HOSTNAME);
    pl->empty = api->intern(h, "");
    if (pts_parse_args(pl, args, err, errlen) != 0) {
        pts_destroy(pl);
        return -1;
    }
    if (pl->system_defaulted && pts_set_system_defaults(pl) != 0) {
        snprintf(err, errlen, "out of memory");
        pts_destroy(pl);
        return -1;
    }
    *self = pl;
    return 0;
}

static uint32_t pts_events_to_register(void *self, ks_cluster_event_t *out,
                                       uint32_t cap)
{
    static const ks_cluster_event_t events[] = {
        /* pods added, deleted or relabelled change the domain counts */
        {KS_RES_POD, KS_ACT_ALL},
        /* nodes added, deleted or relabelled change the domains */
        {KS_RES_NODE,
         KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL},
    };
    uint32_t n = (uint32_t)(sizeof events / sizeof events[0]);
    (void)self;
    return ks_events_copy(out, cap, events, n);
}

/* --- QueueingHints (upstream v1.36) ------------------------------------- */

/* upstream involvedInTopologySpreading: the pod itself, or an assigned pod
 * of its namespace. */
static int pts_involved(const ks_pod_t *other, const ks_pod_t *pod)
{
    return other->uid == pod->uid ||
           (other->node_name[0] != '\0' && other->ns == pod->ns);
}

/* Does any constraint's selector select `labels`? */
static int pts_any_selects(const pts_constraints_t *c, const ks_labels_t *ls)
{
    uint32_t i;
    for (i = 0; i < c->n; i++)
        if (ks_selector_matches_interned(c->items[i].selector, ls))
            return 1;
    return 0;
}

/* Schedulable after an assigned pod was added, updated or deleted
 * (upstream isSchedulableAfterPodChange), over the pod's DoNotSchedule
 * constraints (its own, or the defaults with its owners' selector). Out of
 * memory reads as upstream's error: Queue. */
static ks_queueing_hint_t pts_after_pod_change(void *self, const ks_pod_t *pod,
                                               const void *old_obj,
                                               const void *new_obj)
{
    const pts_plugin_t *pl = self;
    const ks_pod_t *old = old_obj, *mod = new_obj;
    pts_constraints_t c;
    ks_queueing_hint_t h = KS_QUEUE_SKIP;
    uint32_t i;
    if ((mod != NULL && !pts_involved(mod, pod)) ||
        (old != NULL && !pts_involved(old, pod)))
        return KS_QUEUE_SKIP;
    if (old == NULL && mod == NULL)
        return KS_QUEUE;
    if (pts_constraints_build(pl, pod, KS_DO_NOT_SCHEDULE, &c) != 0)
        return KS_QUEUE;
    if (old != NULL && mod != NULL) {
        if (mod->uid == pod->uid && !ks_pod_tolerations_equal(old, mod)) {
            for (i = 0; i < c.n; i++)
                if (c.items[i].taints_policy == KS_POLICY_HONOR)
                    h = KS_QUEUE;
        }
        if (h == KS_QUEUE_SKIP &&
            !ks_labels_equal_interned(&old->labels, &mod->labels))
            for (i = 0; i < c.n; i++)
                if (ks_selector_matches_interned(c.items[i].selector, &old->labels) !=
                    ks_selector_matches_interned(c.items[i].selector, &mod->labels))
                    h = KS_QUEUE;
    } else {
        h = pts_any_selects(&c, mod ? &mod->labels : &old->labels)
                ? KS_QUEUE
                : KS_QUEUE_SKIP;
    }
    pts_constraints_free(&c);
    return h;
}

/* After a node was added, updated (labels or taints) or deleted (upstream
 * isSchedulableAfterNodeChange): a node "matches" when it has every
 * constraint's topology key. Queue when an added or deleted node matches,
 * when an update changes whether it matches, or, for a node that matches,
 * changes a topology key's value or its taints. */
static ks_queueing_hint_t pts_after_node_change(void *self, const ks_pod_t *pod,
                                                const void *old_obj,
                                                const void *new_obj)
{
    const pts_plugin_t *pl = self;
    const ks_node_t *old = old_obj, *mod = new_obj;
    pts_constraints_t c;
    int old_m = 0, mod_m = 0;
    ks_queueing_hint_t h = KS_QUEUE_SKIP;
    uint32_t i;
    if (old == NULL && mod == NULL)
        return KS_QUEUE;
    if (pts_constraints_build(pl, pod, KS_DO_NOT_SCHEDULE, &c) != 0)
        return KS_QUEUE;
    if (old != NULL)
        old_m = pts_node_has_all_keys(old, &c);
    if (mod != NULL)
        mod_m = pts_node_has_all_keys(mod, &c);
    if (old != NULL && mod != NULL) {
        if (old_m != mod_m) {
            h = KS_QUEUE;
        } else if (mod_m) {
            if (!ks_node_taints_equal(old, mod))
                h = KS_QUEUE;
            for (i = 0; i < c.n; i++) {
                const char *k = c.items[i].topology_key;
                const char *a = ks_labels_get_interned(&old->labels, k);
                const char *b = ks_labels_get_interned(&mod->labels, k);
                if (a != b && (a == NULL || b == NULL || strcmp(a, b) != 0))
                    h = KS_QUEUE;
            }
        }
    } else {
        h = (mod != NULL ? mod_m : old_m) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    pts_constraints_free(&c);
    return h;
}

static uint32_t pts_events_v2(void *self, ks_cluster_event_hint_t *out,
                              uint32_t cap)
{
    const ks_cluster_event_hint_t ev[] = {
        {{KS_RES_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL |
                          KS_ACT_UPDATE_POD_TOLERATION | KS_ACT_DELETE},
         pts_after_pod_change},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL |
                           KS_ACT_UPDATE_NODE_TAINT},
         pts_after_node_change},
    };
    (void)self;
    return ks_event_hints_copy(out, cap, ev, 2);
}

/* Opportunistic batching: spreading is not local to a pod and a node (a
 * binding anywhere in a domain moves every node's skew), so a pod that
 * any constraint applies to, its own or the defaults with the selectors
 * of its owners, cannot be signed (upstream's SignPod refuses every pod
 * when defaults are configured; ksched asks whether they apply to this
 * pod). A pod no constraint applies to meets a plugin that does nothing
 * for it: nothing to put. */
static ks_code_t pts_sign(void *self, const ks_pod_t *pod, ks_signer_t *sg)
{
    const pts_plugin_t *pl = self;
    pts_constraints_t c;
    int a;
    (void)sg;
    if (pod->n_spread_constraints > 0)
        return KS_UNSCHEDULABLE;
    for (a = 0; a < 2; a++) {
        uint32_t n;
        memset(&c, 0, sizeof c);
        if (pts_constraints_build(pl, pod,
                                  a ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE,
                                  &c) != 0)
            return KS_UNSCHEDULABLE;
        n = c.n;
        pts_constraints_free(&c);
        if (n > 0)
            return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

KS_PLUGIN_DEFINE(PTS_NAME, PTS_VERSION,
                 .create = pts_create,
                 .destroy = pts_destroy,
                 .pre_filter = pts_pre_filter,
                 .pre_filter_add_pod = pts_pre_filter_add_pod,
                 .pre_filter_remove_pod = pts_pre_filter_remove_pod,
                 .filter = pts_filter,
                 .filter_with_state = pts_filter_with_state,
                 .filter_nodes = pts_filter_nodes,
                 .pre_score = pts_pre_score,
                 .score = pts_score,
                 .score_with_state = pts_score_with_state,
                 .score_nodes = pts_score_nodes,
                 .normalize_score = pts_normalize_score,
                 .events_to_register = pts_events_to_register,
                 .events_to_register_v2 = pts_events_v2,
                 .sign = pts_sign);
