/*
 * The labelSelector query parameter of a list (apimachinery's selector
 * syntax): requirements separated by commas, each `key`, `!key`,
 * `key=value`, `key==value`, `key!=value`, `key in (v1,v2)` or
 * `key notin (v1,v2)`, turned into a ks_label_selector_t (matched by
 * content: ks_selector_matches). Query values are URL-decoded first
 * (`%XX`, `+` as a space).
 *
 * Pure functions; a parsed query owns its strings until freed.
 */
#ifndef KS_SERVER_LABEL_QUERY_H
#define KS_SERVER_LABEL_QUERY_H

#include <stddef.h>

#include "ksched/types.h"

typedef struct ks_label_query {
    ks_label_selector_t sel; /* reqs point into the arrays below */
    ks_requirement_t *reqs;
    const char **values;
    char *buf;
} ks_label_query_t;

/* The URL-decoded value of `key` in a query string ("a=1&b=2"), malloc'd;
 * NULL when absent (or out of memory). */
char *ks_query_value(const char *query, const char *key);

/* Parse a selector (decoded). 0, or -1 with a message in err (q is then
 * empty). An empty selector selects everything. */
int ks_label_query_parse(const char *text, ks_label_query_t *q, char *err,
                         size_t errlen);
void ks_label_query_free(ks_label_query_t *q);

#endif
