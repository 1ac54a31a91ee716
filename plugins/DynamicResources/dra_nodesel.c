/* v1.NodeSelector matching (component-helpers' nodeaffinity): terms
 * ORed, requirements ANDed; matchFields knows metadata.name only. */
#include <stdlib.h>
#include <string.h>

#include <ksched/helpers.h>

#include "dra.h"

static int req_matches(const dra_nsreq_t *r, const char *node_name,
                       const ks_labels_t *labels)
{
    const char *v = NULL;
    uint32_t i;
    int64_t a, b;
    if (r->field) {
        if (strcmp(r->key, "metadata.name") != 0)
            return 0;
        v = node_name;
    } else if (labels != NULL) {
        v = ks_labels_get(labels, r->key);
    }
    switch (r->op) {
    case DRA_OP_IN:
    case DRA_OP_NOT_IN:
        for (i = 0; v != NULL && i < r->n_values; i++)
            if (strcmp(r->values[i], v) == 0)
                return r->op == DRA_OP_IN;
        return r->op == DRA_OP_NOT_IN;
    case DRA_OP_EXISTS:
        return v != NULL;
    case DRA_OP_DOES_NOT_EXIST:
        return v == NULL;
    case DRA_OP_GT:
    case DRA_OP_LT:
        if (v == NULL || r->n_values != 1 || ks_parse_int64(v, &a) != 0 ||
            ks_parse_int64(r->values[0], &b) != 0)
            return 0;
        return r->op == DRA_OP_GT ? a > b : a < b;
    }
    return 0;
}

int dra_nodesel_matches(const dra_nodesel_t *s, const char *node_name,
                        const struct ks_labels *labels)
{
    uint32_t t, i;
    for (t = 0; t < s->n_terms; t++) {
        const dra_nsterm_t *term = &s->terms[t];
        int ok = term->n_reqs > 0; /* an empty term matches nothing */
        for (i = 0; i < term->n_reqs && ok; i++)
            ok = req_matches(&term->reqs[i], node_name, labels);
        if (ok)
            return 1;
    }
    return 0;
}

void dra_nodesel_free(dra_nodesel_t *s)
{
    uint32_t t, i, k;
    for (t = 0; t < s->n_terms; t++) {
        for (i = 0; i < s->terms[t].n_reqs; i++) {
            dra_nsreq_t *r = &s->terms[t].reqs[i];
            free(r->key);
            for (k = 0; k < r->n_values; k++)
                free(r->values[k]);
            free(r->values);
        }
        free(s->terms[t].reqs);
    }
    free(s->terms);
    s->terms = NULL;
    s->n_terms = 0;
}
