/*
 * ksched plugin SDK — header-only helpers over the views in types.h, and the
 * messages kube-scheduler prints (the host uses the same ones).
 *
 * All functions allocate nothing and are thread-safe; all are pure except
 * ks_fit_error_write, which sorts the array it is given.
 *
 * Label and selector lookups compare strings by content (since ABI 1.1), so
 * a key or value the plugin wrote itself ("app", a string from its args)
 * works as well as one from a view. Each has a ..._interned variant, the
 * fast path, that compares by address only: use it only when every string
 * involved comes from a view or from ks_host_api_t.intern (types.h,
 * "Interning"); with any other string it silently matches nothing. (In the
 * 1.0 headers ks_labels_get, ks_requirement_matches*, ks_selector_matches,
 * ks_labels_subset and ks_node_selector*_matches compared by address; a
 * plugin built against them keeps its own compiled copies.)
 */
#ifndef KSCHED_HELPERS_H
#define KSCHED_HELPERS_H

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Equal strings? By address first, then by content. */
static inline int ks_str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && a[0] == b[0] &&
                      strcmp(a, b) == 0);
}

/* The value of label `key` in `ls`, or NULL; keys compared by content. */
static inline const char *ks_labels_get(const ks_labels_t *ls, const char *key)
{
    uint32_t i;
    for (i = 0; i < ls->n; i++)
        if (ks_str_eq(ls->items[i].key, key))
            return ls->items[i].value;
    return NULL;
}

/* The same as ks_labels_get (its name before ABI 1.1 made content the
 * default). */
static inline const char *ks_labels_get_str(const ks_labels_t *ls,
                                            const char *key)
{
    return ks_labels_get(ls, key);
}

/* (since ABI 1.1) The value of label `key` compared by address: `key` must
 * be interned (see the top of this file), else the answer is NULL. */
static inline const char *ks_labels_get_interned(const ks_labels_t *ls,
                                                 const char *key)
{
    uint32_t i;
    for (i = 0; i < ls->n; i++)
        if (ls->items[i].key == key)
            return ls->items[i].value;
    return NULL;
}

/* Parse a whole decimal int64; 0 on success. */
static inline int ks_parse_int64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* Requirement match with the string equality `by_address` selects. */
static inline int ks_requirement_matches_value_(const ks_requirement_t *r,
                                                const char *value,
                                                int by_address)
{
    uint32_t i;
    int64_t lhs, rhs;
    switch (r->op) {
    case KS_OP_IN:
    case KS_OP_NOT_IN:
        if (value == NULL)
            return r->op == KS_OP_NOT_IN;
        for (i = 0; i < r->n_values; i++)
            if (by_address ? r->values[i] == value
                           : ks_str_eq(r->values[i], value))
                return r->op == KS_OP_IN;
        return r->op == KS_OP_NOT_IN;
    case KS_OP_EXISTS:
        return value != NULL;
    case KS_OP_DOES_NOT_EXIST:
        return value == NULL;
    case KS_OP_GT:
    case KS_OP_LT:
        if (value == NULL || r->n_values != 1)
            return 0;
        if (ks_parse_int64(value, &lhs) != 0 ||
            ks_parse_int64(r->values[0], &rhs) != 0)
            return 0;
        return r->op == KS_OP_GT ? lhs > rhs : lhs < rhs;
    }
    return 0;
}

/* Does `value` (may be NULL: label absent) satisfy requirement `r`?
 * Upstream labels.Requirement.Matches; values compared by content. */
static inline int ks_requirement_matches_value(const ks_requirement_t *r,
                                               const char *value)
{
    return ks_requirement_matches_value_(r, value, 0);
}

/* (since ABI 1.1) The same, values compared by address (all interned). */
static inline int
ks_requirement_matches_value_interned(const ks_requirement_t *r,
                                      const char *value)
{
    return ks_requirement_matches_value_(r, value, 1);
}

/* Does label set `ls` satisfy requirement `r`? By content. */
static inline int ks_requirement_matches(const ks_requirement_t *r,
                                         const ks_labels_t *ls)
{
    return ks_requirement_matches_value(r, ks_labels_get(ls, r->key));
}

/* (since ABI 1.1) The same by address (r's strings interned). */
static inline int ks_requirement_matches_interned(const ks_requirement_t *r,
                                                  const ks_labels_t *ls)
{
    return ks_requirement_matches_value_interned(
        r, ks_labels_get_interned(ls, r->key));
}

/* Label selector match: NULL selects nothing, an empty one everything.
 * By content. */
static inline int ks_selector_matches(const ks_label_selector_t *sel,
                                      const ks_labels_t *ls)
{
    uint32_t i;
    if (sel == NULL)
        return 0;
    for (i = 0; i < sel->n; i++)
        if (!ks_requirement_matches(&sel->reqs[i], ls))
            return 0;
    return 1;
}

/* (since ABI 1.1) The same by address (sel's strings interned). */
static inline int ks_selector_matches_interned(const ks_label_selector_t *sel,
                                               const ks_labels_t *ls)
{
    uint32_t i;
    if (sel == NULL)
        return 0;
    for (i = 0; i < sel->n; i++)
        if (!ks_requirement_matches_interned(&sel->reqs[i], ls))
            return 0;
    return 1;
}

/* Does every key=value of `want` appear in `ls` (a nodeSelector)? By
 * content. */
static inline int ks_labels_subset(const ks_labels_t *want,
                                   const ks_labels_t *ls)
{
    uint32_t i;
    for (i = 0; i < want->n; i++) {
        const char *v = ks_labels_get(ls, want->items[i].key);
        if (v == NULL || !ks_str_eq(v, want->items[i].value))
            return 0;
    }
    return 1;
}

/* (since ABI 1.1) The same by address (want's strings interned). */
static inline int ks_labels_subset_interned(const ks_labels_t *want,
                                            const ks_labels_t *ls)
{
    uint32_t i;
    for (i = 0; i < want->n; i++)
        if (ks_labels_get_interned(ls, want->items[i].key) !=
            want->items[i].value)
            return 0;
    return 1;
}

/* (since ABI 1.1) Do `a` and `b` hold the same key=value pairs, in any
 * order? By address (both label sets from views; keys unique in each). */
static inline int ks_labels_equal_interned(const ks_labels_t *a,
                                           const ks_labels_t *b)
{
    return a->n == b->n && ks_labels_subset_interned(a, b);
}

/* NodeSelectorTerm match with the equality `by_address` selects. */
static inline int ks_node_selector_term_matches_(const ks_node_selector_term_t *t,
                                                 const ks_node_t *node,
                                                 int by_address)
{
    uint32_t i;
    if (t->n_match_expressions == 0 && t->n_match_fields == 0)
        return 0;
    for (i = 0; i < t->n_match_expressions; i++)
        if (!(by_address ? ks_requirement_matches_interned(
                               &t->match_expressions[i], &node->labels)
                         : ks_requirement_matches(&t->match_expressions[i],
                                                  &node->labels)))
            return 0;
    for (i = 0; i < t->n_match_fields; i++) {
        const ks_requirement_t *r = &t->match_fields[i];
        if (strcmp(r->key, "metadata.name") != 0)
            return 0;
        if (!ks_requirement_matches_value_(r, node->name, by_address))
            return 0;
    }
    return 1;
}

/* One NodeSelectorTerm against a node. A term with no expressions and no
 * fields matches nothing (upstream nodeaffinity semantics). By content. */
static inline int ks_node_selector_term_matches(const ks_node_selector_term_t *t,
                                                const ks_node_t *node)
{
    return ks_node_selector_term_matches_(t, node, 0);
}

/* (since ABI 1.1) The same by address (t's strings interned). */
static inline int
ks_node_selector_term_matches_interned(const ks_node_selector_term_t *t,
                                       const ks_node_t *node)
{
    return ks_node_selector_term_matches_(t, node, 1);
}

/* A NodeSelector (terms ORed). By content. */
static inline int ks_node_selector_matches(const ks_node_selector_t *s,
                                           const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < s->n_terms; i++)
        if (ks_node_selector_term_matches(&s->terms[i], node))
            return 1;
    return 0;
}

/* (since ABI 1.1) The same by address (s's strings interned). */
static inline int ks_node_selector_matches_interned(const ks_node_selector_t *s,
                                                    const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < s->n_terms; i++)
        if (ks_node_selector_term_matches_interned(&s->terms[i], node))
            return 1;
    return 0;
}

/* Tolerations and taints come only from views: compared by address. */
/* Upstream v1.Toleration.ToleratesTaint. */
static inline int ks_toleration_tolerates(const ks_toleration_t *tol,
                                          const ks_taint_t *taint)
{
    if (tol->effect != KS_EFFECT_ALL && tol->effect != taint->effect)
        return 0;
    if (tol->key[0] != '\0' && tol->key != taint->key)
        return 0;
    if (tol->op == KS_TOLERATION_EXISTS)
        return 1;
    return tol->value == taint->value;
}

static inline int ks_tolerations_tolerate(const ks_toleration_t *tols,
                                          uint32_t n, const ks_taint_t *taint)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (ks_toleration_tolerates(&tols[i], taint))
            return 1;
    return 0;
}

/* (since ABI 1.1) The same tolerations in the same order (key, operator,
 * value and effect)? */
static inline int ks_pod_tolerations_equal(const ks_pod_t *a,
                                           const ks_pod_t *b)
{
    uint32_t i;
    if (a->n_tolerations != b->n_tolerations)
        return 0;
    for (i = 0; i < a->n_tolerations; i++) {
        const ks_toleration_t *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->key != y->key || x->op != y->op || x->value != y->value ||
            x->effect != y->effect)
            return 0;
    }
    return 1;
}

/* (since ABI 1.1) The same taints in the same order (key, value, effect)? */
static inline int ks_node_taints_equal(const ks_node_t *a, const ks_node_t *b)
{
    uint32_t i;
    if (a->n_taints != b->n_taints)
        return 0;
    for (i = 0; i < a->n_taints; i++)
        if (a->taints[i].key != b->taints[i].key ||
            a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return 0;
    return 1;
}

static inline const char *ks_taint_effect_name(ks_taint_effect_t e)
{
    switch (e) {
    case KS_EFFECT_NO_SCHEDULE: return "NoSchedule";
    case KS_EFFECT_PREFER_NO_SCHEDULE: return "PreferNoSchedule";
    case KS_EFFECT_NO_EXECUTE: return "NoExecute";
    case KS_EFFECT_ALL: return "";
    }
    return "";
}

/* --- scores -------------------------------------------------------------- */

/* n / d, C's integer division, for the quotients a score's scaling
 * makes (at most 128). When 0 <= n <= 128 * d and 0 < d < 2^46 it is one
 * double division, which is exact there: n is below 2^53, so exact in a
 * double; the quotient's rounding error is at most half a unit in the
 * last place below 128 (2^-47), less than the distance from a quotient
 * that is not a whole number to the next one (at least 1/d > 2^-46), so
 * truncating gives the integer quotient. A 64-bit integer division is
 * many micro-operations and tens of cycles; a double one is a few. Any
 * other input, and every input where doubles are evaluated in a wider
 * format (x87: a double rounding would void the argument), takes the
 * integer way. d must not be 0. */
static inline int64_t ks_div_score(int64_t n, int64_t d)
{
#if FLT_EVAL_METHOD == 0
    if (n >= 0 && d > 0 && d < (INT64_C(1) << 46) && n <= 128 * d)
        return (int64_t)((double)n / (double)d);
#endif
    return n / d;
}

/* Upstream helper.DefaultNormalizeScore: scale scores so the highest
 * becomes `max` (integer division); with `reverse`, subtract from `max`.
 * When every score is 0 they stay 0, or all become `max` with reverse. */
static inline void ks_default_normalize_score(int64_t max, int reverse,
                                              ks_node_score_t *scores,
                                              uint32_t n)
{
    int64_t highest = 0;
    uint32_t i;
    for (i = 0; i < n; i++)
        if (scores[i].score > highest)
            highest = scores[i].score;
    if (highest == 0) {
        if (reverse)
            for (i = 0; i < n; i++)
                scores[i].score = max;
        return;
    }
    for (i = 0; i < n; i++) {
        int64_t s = ks_div_score(max * scores[i].score, highest);
        scores[i].score = reverse ? max - s : s;
    }
}

/* --- args ---------------------------------------------------------------- */

/* The value of map key `key` in `a`, or NULL (also when `a` is not a map). */
static inline const ks_args_t *ks_args_get(const ks_args_t *a, const char *key)
{
    uint32_t i;
    if (a == NULL || a->kind != KS_ARGS_MAP)
        return NULL;
    for (i = 0; i < a->n; i++)
        if (strcmp(a->keys[i], key) == 0)
            return a->children[i];
    return NULL;
}

/* Check that every key of map `a` is in the NULL-terminated list `allowed`.
 * On failure write "line L, column C: unknown field "k" (valid: a, b)" to err
 * and return -1. */
static inline int ks_args_check_keys(const ks_args_t *a,
                                     const char *const *allowed, char *err,
                                     size_t errlen)
{
    uint32_t i;
    size_t j, off;
    if (a == NULL)
        return 0;
    if (a->kind != KS_ARGS_MAP) {
        if (errlen)
            snprintf(err, errlen, "line %u, column %u: args must be a mapping",
                     a->line, a->column);
        return -1;
    }
    for (i = 0; i < a->n; i++) {
        int ok = 0;
        for (j = 0; allowed[j] != NULL; j++)
            if (strcmp(allowed[j], a->keys[i]) == 0)
                ok = 1;
        if (ok)
            continue;
        if (errlen == 0)
            return -1;
        off = (size_t)snprintf(err, errlen,
                               "line %u, column %u: unknown field \"%s\" (valid:",
                               a->children[i]->line, a->children[i]->column,
                               a->keys[i]);
        for (j = 0; allowed[j] != NULL && off < errlen; j++)
            off += (size_t)snprintf(err + off, errlen - off, "%s %s",
                                    j ? "," : "", allowed[j]);
        if (off < errlen)
            snprintf(err + off, errlen - off, ")");
        return -1;
    }
    return 0;
}

/* Read an integer scalar; 0 on success, -1 with a message otherwise. */
static inline int ks_args_int64(const ks_args_t *a, const char *what,
                                int64_t *out, char *err, size_t errlen)
{
    if (a == NULL || a->kind != KS_ARGS_SCALAR ||
        ks_parse_int64(a->scalar, out) != 0) {
        if (errlen)
            snprintf(err, errlen, "line %u, column %u: %s must be an integer",
                     a ? a->line : 0, a ? a->column : 0, what);
        return -1;
    }
    return 0;
}

/* --- messages as kube-scheduler prints them -------------------------------- */

/* One entry of a FitError: a reason and how many nodes gave it. */
typedef struct ks_reason_count {
    const char *reason;
    uint32_t count;
} ks_reason_count_t;

/* qsort order of FitError entries: "COUNT REASON" compared as strings, as
 * upstream sorts them (so "10 x" comes before "2 y"), without building the
 * strings. */
static inline int ks_reason_count_cmp(const void *a, const void *b)
{
    const ks_reason_count_t *x = (const ks_reason_count_t *)a;
    const ks_reason_count_t *y = (const ks_reason_count_t *)b;
    char px[16], py[16];
    int lx = snprintf(px, sizeof px, "%u ", (unsigned)x->count);
    int ly = snprintf(py, sizeof py, "%u ", (unsigned)y->count);
    size_t i;
    for (i = 0;; i++) {
        unsigned char cx = (unsigned char)(i < (size_t)lx
                                               ? px[i]
                                               : x->reason[i - (size_t)lx]);
        unsigned char cy = (unsigned char)(i < (size_t)ly
                                               ? py[i]
                                               : y->reason[i - (size_t)ly]);
        if (cx != cy)
            return cx < cy ? -1 : 1;
        if (cx == '\0')
            return 0;
    }
}

/* Append `str` at buf[off] as snprintf would (bounded, terminated when
 * there is room); returns off + strlen(str). */
static inline size_t ks_msg_append(char *buf, size_t len, size_t off,
                                   const char *str)
{
    size_t n = strlen(str);
    if (off < len) {
        size_t k = n < len - off - 1 ? n : len - off - 1;
        memcpy(buf + off, str, k);
        buf[off + k] = '\0';
    }
    return off + n;
}

/* (since ABI 1.1) The `n` strings of `v` joined with ", " (upstream
 * Status.Message()), written at buf as snprintf would (bounded, terminated
 * when len > 0; buf may be NULL when len is 0); returns the length of the
 * whole joined string, so a caller can size a buffer with a first call. */
static inline size_t ks_strs_join(char *buf, size_t len,
                                  const char *const *v, uint32_t n)
{
    size_t off = 0;
    uint32_t i;
    if (len > 0)
        buf[0] = '\0';
    for (i = 0; i < n; i++) {
        if (i > 0)
            off = ks_msg_append(buf, len, off, ", ");
        off = ks_msg_append(buf, len, off, v[i]);
    }
    return off;
}

/* Upstream FitError.Error() (v1.24): "0/N nodes are available: C1 R1,
 * C2 R2." with the entries h[0..n) (distinct reasons) sorted by
 * ks_reason_count_cmp, then " POST" when post_msg is not empty. Sorts h.
 * Writes as snprintf does: at most len bytes, always terminated when
 * len > 0; returns the length of the whole message. */
static inline size_t ks_fit_error_write(char *buf, size_t len,
                                        uint32_t n_nodes,
                                        ks_reason_count_t *h, uint32_t n,
                                        const char *post_msg)
{
    char num[32];
    size_t off;
    uint32_t i;
    if (n > 1)
        qsort(h, n, sizeof *h, ks_reason_count_cmp);
    snprintf(num, sizeof num, "0/%u", (unsigned)n_nodes);
    off = ks_msg_append(buf, len, 0, num);
    off = ks_msg_append(buf, len, off, " nodes are available:");
    for (i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%s %u ", i ? "," : "",
                 (unsigned)h[i].count);
        off = ks_msg_append(buf, len, off, num);
        off = ks_msg_append(buf, len, off, h[i].reason);
    }
    off = ks_msg_append(buf, len, off, n ? "." : " .");
    if (post_msg != NULL && post_msg[0] != '\0') {
        off = ks_msg_append(buf, len, off, " ");
        off = ks_msg_append(buf, len, off, post_msg);
    }
    return off;
}

/* A duration as Go's time.Duration.String prints it, at millisecond
 * resolution: "0s", "50ms", "1.5s", "15m0s", "1h0m0s". */
static inline void ks_go_duration(uint64_t ms, char *buf, size_t len)
{
    uint64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60,
             frac = ms % 1000;
    char fs[8] = "";
    if (ms == 0) {
        snprintf(buf, len, "0s");
        return;
    }
    if (ms < 1000) {
        snprintf(buf, len, "%llums", (unsigned long long)ms);
        return;
    }
    if (frac) {
        snprintf(fs, sizeof fs, ".%03llu", (unsigned long long)frac);
        while (fs[strlen(fs) - 1] == '0')
            fs[strlen(fs) - 1] = '\0';
    }
    if (h)
        snprintf(buf, len, "%lluh%llum%llu%ss", (unsigned long long)h,
                 (unsigned long long)m, (unsigned long long)sec, fs);
    else if (m)
        snprintf(buf, len, "%llum%llu%ss", (unsigned long long)m,
                 (unsigned long long)sec, fs);
    else
        snprintf(buf, len, "%llu%ss", (unsigned long long)sec, fs);
}

/* --- shared by several plugins -------------------------------------------- */

/* (since ABI 1.1) A QueueingHint for an update of the pending pod itself
 * (registered for a KS_RES_POD update action): Queue when the updated pod
 * is `pod`, else QueueSkip. Upstream's hints for the pod's own scheduling
 * gates going away and for its tolerations changing are this. */
static inline ks_queueing_hint_t ks_hint_own_pod_update(void *self,
                                                        const ks_pod_t *pod,
                                                        const void *old_obj,
                                                        const void *new_obj)
{
    const ks_pod_t *n = (const ks_pod_t *)new_obj;
    (void)self;
    (void)old_obj;
    return n != NULL && n->uid == pod->uid ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* (since ABI 1.1) An events_to_register answer from a table: the first `cap` of the `n`
 * events of `ev` copied to `out`; returns n. */
static inline uint32_t ks_events_copy(ks_cluster_event_t *out, uint32_t cap,
                                      const ks_cluster_event_t *ev,
                                      uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n && i < cap; i++)
        out[i] = ev[i];
    return n;
}

/* (since ABI 1.1) The same for events_to_register_v2 (events with their
 * QueueingHints). */
static inline uint32_t ks_event_hints_copy(ks_cluster_event_hint_t *out,
                                           uint32_t cap,
                                           const ks_cluster_event_hint_t *ev,
                                           uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n && i < cap; i++)
        out[i] = ev[i];
    return n;
}

/* (since ABI 1.1) Store `s`, malloc'd plain data (freed with free, no
 * clone function), in the plugin's own state slot `slot` of `cs` through
 * api->plugin_state_set. KS_SUCCESS, or, when it was not stored, KS_ERROR
 * with `s` freed and "cannot write cycle state" in `st`. Loop thread
 * (PreFilter, PreScore). */
static inline ks_code_t ks_plugin_state_put(const ks_host_api_t *api,
                                            ks_handle_t *h,
                                            ks_cycle_state_t *cs,
                                            ks_state_slot_t slot, void *s,
                                            ks_status_t *st)
{
    if (api->plugin_state_set(h, cs, slot, s, NULL, free) != 0) {
        free(s);
        api->status_reason(st, "cannot write cycle state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* (since ABI 1.1) Opportunistic batching's resources signature (upstream's
 * resources signer): the requests, with and without the non-zero defaults,
 * and the overhead. */
static inline void ks_sign_pod_resources(ks_signer_t *sg, const ks_pod_t *pod)
{
    ks_sign_resources(sg, &pod->requests);
    ks_sign_resources(sg, &pod->overhead);
    ks_sign_i64(sg, pod->non_zero_milli_cpu);
    ks_sign_i64(sg, pod->non_zero_memory);
}

/* (since ABI 1.4) The pod's inline in-tree volume sources, parallel to
 * pod->volumes (see ks_volume_inline_t), or NULL when it has none -- or
 * when the host is older than ABI 1.4, whose ks_pod_t ends before
 * volume_inline: a plugin that may run there (KS_PLUGIN_MIN_ABI_MINOR
 * below 4) reads the field through this. `api` is the table handed to
 * create. */
static inline const ks_volume_inline_t *
ks_pod_volume_inline(const ks_host_api_t *api, const ks_pod_t *pod)
{
    return api->abi_minor >= 4 ? pod->volume_inline : NULL;
}

/* A pod's spec.resourceClaims (ABI 1.5), or NULL with *n = 0 on an older
 * host, whose pods end before the field: a plugin that may run there
 * (KS_PLUGIN_MIN_ABI_MINOR below 5) reads the field through this. `api`
 * is the table handed to create. */
static inline const ks_pod_claim_t *
ks_pod_resource_claims(const ks_host_api_t *api, const ks_pod_t *pod,
                       uint32_t *n)
{
    if (api->abi_minor < 5) {
        *n = 0;
        return NULL;
    }
    *n = pod->n_resource_claims;
    return pod->resource_claims;
}

/* Inside filter_nodes or score_nodes: the snapshot's columns and the
 * positions of nodes[0..n) (host API bulk_columns, since ABI 1.7), or
 * NULL with *pos NULL on an older host or when the host has none for
 * this call: read the NodeInfos then. `nodes` is the array the host
 * passed; `api` and `h` those handed to create. */
static inline const ks_node_columns_t *
ks_bulk_columns(const ks_host_api_t *api, ks_handle_t *h,
                const ks_node_info_t *const *nodes, const uint32_t **pos)
{
    if (!KS_API_HAS(api, bulk_columns)) {
        *pos = NULL;
        return NULL;
    }
    return api->bulk_columns(h, nodes, pos);
}

/* Opportunistic batching's volumes signer (upstream's): the pod's
 * namespace (claims are looked up there) and each volume's source, claim
 * and, on a host with ABI 1.4, its inline in-tree disk (kind, read-only,
 * id, disk URI, RBD pool and monitors). For the volume plugins' `sign`. */
static inline void ks_sign_volumes(const ks_host_api_t *api, ks_signer_t *sg,
                                   const ks_pod_t *pod)
{
    const ks_volume_inline_t *inl = ks_pod_volume_inline(api, pod);
    uint32_t i, j;
    ks_sign_ptr(sg, pod->ns);
    ks_sign_i64(sg, pod->n_volumes);
    for (i = 0; i < pod->n_volumes; i++) {
        ks_sign_i64(sg, pod->volumes[i].source);
        ks_sign_ptr(sg, pod->volumes[i].claim_name);
        if (inl == NULL) {
            ks_sign_i64(sg, KS_INLINE_NONE);
            continue;
        }
        ks_sign_i64(sg, inl[i].kind);
        ks_sign_i64(sg, inl[i].read_only);
        ks_sign_ptr(sg, inl[i].id);
        ks_sign_ptr(sg, inl[i].disk_uri);
        ks_sign_ptr(sg, inl[i].pool);
        ks_sign_i64(sg, inl[i].n_monitors);
        for (j = 0; j < inl[i].n_monitors; j++)
            ks_sign_ptr(sg, inl[i].monitors[j]);
    }
}

/* (since ABI 1.2) A filter_nodes verdict from a per-node Filter's code: 1
 * passed, 0 rejected, 2 anything else (the host asks the node's own
 * Filter at once). */
static inline uint8_t ks_bulk_verdict(ks_code_t c)
{
    if (c == KS_SUCCESS)
        return 1;
    return c == KS_UNSCHEDULABLE || c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE ||
                   c == KS_PENDING
               ? 0
               : 2;
}

/*
 * (since ABI 1.2) Define NAME, a filter_nodes, from ONE, the plugin's
 * filter_with_state-shaped per-node function (best `static inline`, so the
 * compiler folds it into the loop), run on the nodes whose pass[i] is
 * still 1: pass[i] becomes ks_bulk_verdict of what ONE returns (0 for a
 * rejection, 2 for an Error), its reasons going to the host's scratch
 * status.
 *
 *     static inline ks_code_t my_filter_one(void *self, ks_cycle_state_t *cs,
 *         void *state, const ks_pod_t *pod, const ks_node_info_t *ni,
 *         ks_status_t *st) { ... }
 *     KS_FILTER_NODES_FROM(my_filter_nodes, my_filter_one)
 *     KS_PLUGIN_DEFINE(..., .filter_with_state = my_filter_one,
 *                      .filter_nodes = my_filter_nodes);
 */
#define KS_FILTER_NODES_FROM(NAME, ONE)                                       \
    KS_BULK_FILTER_LOOP_(NAME, ONE(self, cs, state, pod, nodes[i_], scratch))

/* (since ABI 1.2) The same for score_nodes from a score_with_state-shaped
 * ONE: stops at the first node ONE does not score and returns its code
 * (the host then scores node by node to report it). */
#define KS_SCORE_NODES_FROM(NAME, ONE)                                        \
    KS_BULK_SCORE_LOOP_(NAME,                                                  \
                        ONE(self, cs, state, pod, nodes[i_], &scores[i_],      \
                            scratch))

/* (since ABI 1.2) The same two from ABI 1.0-shaped functions (a `filter`
 * or `score` without the state argument). */
#define KS_FILTER_NODES_FROM_FILTER(NAME, ONE)                                \
    KS_BULK_FILTER_LOOP_(NAME, ONE(self, cs, pod, nodes[i_], scratch))
#define KS_SCORE_NODES_FROM_SCORE(NAME, ONE)                                  \
    KS_BULK_SCORE_LOOP_(NAME, ONE(self, cs, pod, nodes[i_], &scores[i_],       \
                                  scratch))

/* The loops behind the four above; CALL is the per-node call for node
 * nodes[i_]. */
#define KS_BULK_FILTER_LOOP_(NAME, CALL)                                      \
    static ks_code_t NAME(void *self, ks_cycle_state_t *cs, void *state,       \
                          const ks_pod_t *pod,                                 \
                          const ks_node_info_t *const *nodes, uint32_t n,      \
                          uint8_t *pass, ks_status_t *scratch)                 \
    {                                                                          \
        uint32_t i_;                                                           \
        (void)state;                                                           \
        for (i_ = 0; i_ < n; i_++)                                             \
            if (pass[i_])                                                      \
                pass[i_] = ks_bulk_verdict(CALL);                              \
        return KS_SUCCESS;                                                     \
    }
#define KS_BULK_SCORE_LOOP_(NAME, CALL)                                       \
    static ks_code_t NAME(void *self, ks_cycle_state_t *cs, void *state,       \
                          const ks_pod_t *pod,                                 \
                          const ks_node_info_t *const *nodes, uint32_t n,      \
                          int64_t *scores, ks_status_t *scratch)               \
    {                                                                          \
        uint32_t i_;                                                           \
        (void)state;                                                           \
        for (i_ = 0; i_ < n; i_++) {                                           \
            ks_code_t c_ = CALL;                                               \
            if (c_ != KS_SUCCESS)                                              \
                return c_;                                                     \
        }                                                                      \
        return KS_SUCCESS;                                                     \
    }

#ifdef __cplusplus
}
#endif

#endif /* KSCHED_HELPERS_H */
