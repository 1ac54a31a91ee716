/*
 * ksched plugin SDK — header-only helpers over the views in types.h.
 *
 * All functions are pure, allocate nothing and are thread-safe. They rely on
 * the interning guarantee of types.h: strings from views compare by address.
 */
#ifndef KSCHED_HELPERS_H
#define KSCHED_HELPERS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The value of label `key` (interned) in `ls`, or NULL. */
static inline const char *ks_labels_get(const ks_labels_t *ls, const char *key)
{
    uint32_t i;
    for (i = 0; i < ls->n; i++)
        if (ls->items[i].key == key)
            return ls->items[i].value;
    return NULL;
}

/* The value of label `key` compared by content (for keys not interned). */
static inline const char *ks_labels_get_str(const ks_labels_t *ls,
                                            const char *key)
{
    uint32_t i;
    for (i = 0; i < ls->n; i++)
        if (strcmp(ls->items[i].key, key) == 0)
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

/* Does `value` (may be NULL: label absent) satisfy requirement `r`?
 * Upstream labels.Requirement.Matches. */
static inline int ks_requirement_matches_value(const ks_requirement_t *r,
                                               const char *value)
{
    uint32_t i;
    int64_t lhs, rhs;
    switch (r->op) {
    case KS_OP_IN:
        if (value == NULL)
            return 0;
        for (i = 0; i < r->n_values; i++)
            if (r->values[i] == value)
                return 1;
        return 0;
    case KS_OP_NOT_IN:
        if (value == NULL)
            return 1;
        for (i = 0; i < r->n_values; i++)
            if (r->values[i] == value)
                return 0;
        return 1;
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

/* Does label set `ls` satisfy requirement `r`? */
static inline int ks_requirement_matches(const ks_requirement_t *r,
                                         const ks_labels_t *ls)
{
    return ks_requirement_matches_value(r, ks_labels_get(ls, r->key));
}

/* Label selector match: NULL selects nothing, an empty one everything. */
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

/* Does every key=value of `want` appear in `ls` (a nodeSelector)? */
static inline int ks_labels_subset(const ks_labels_t *want,
                                   const ks_labels_t *ls)
{
    uint32_t i;
    for (i = 0; i < want->n; i++)
        if (ks_labels_get(ls, want->items[i].key) != want->items[i].value)
            return 0;
    return 1;
}

/* One NodeSelectorTerm against a node. A term with no expressions and no
 * fields matches nothing (upstream nodeaffinity semantics). */
static inline int ks_node_selector_term_matches(const ks_node_selector_term_t *t,
                                                const ks_node_t *node)
{
    uint32_t i;
    if (t->n_match_expressions == 0 && t->n_match_fields == 0)
        return 0;
    for (i = 0; i < t->n_match_expressions; i++)
        if (!ks_requirement_matches(&t->match_expressions[i], &node->labels))
            return 0;
    for (i = 0; i < t->n_match_fields; i++) {
        const ks_requirement_t *r = &t->match_fields[i];
        if (strcmp(r->key, "metadata.name") != 0)
            return 0;
        if (!ks_requirement_matches_value(r, node->name))
            return 0;
    }
    return 1;
}

/* A NodeSelector (terms ORed). */
static inline int ks_node_selector_matches(const ks_node_selector_t *s,
                                           const ks_node_t *node)
{
    uint32_t i;
    for (i = 0; i < s->n_terms; i++)
        if (ks_node_selector_term_matches(&s->terms[i], node))
            return 1;
    return 0;
}

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

#ifdef __cplusplus
}
#endif

#endif /* KSCHED_HELPERS_H */
