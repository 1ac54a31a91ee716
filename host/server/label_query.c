/* labelSelector query parameters (label_query.h). */
#include "label_query.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *ks_query_value(const char *query, const char *key)
{
    size_t kl = strlen(key);
    const char *q = query;
    while (q && *q) {
        const char *e = strchr(q, '&');
        size_t l = e ? (size_t)(e - q) : strlen(q);
        if (l >= kl && strncmp(q, key, kl) == 0 && (l == kl || q[kl] == '=')) {
            const char *v = l == kl ? q + l : q + kl + 1;
            size_t vl = l == kl ? 0 : l - kl - 1, i, o = 0;
            char *out = malloc(vl + 1);
            if (out == NULL)
                return NULL;
            for (i = 0; i < vl; i++) {
                int h, lo;
                if (v[i] == '+') {
                    out[o++] = ' ';
                } else if (v[i] == '%' && i + 2 < vl &&
                           (h = hexval((unsigned char)v[i + 1])) >= 0 &&
                           (lo = hexval((unsigned char)v[i + 2])) >= 0) {
                    out[o++] = (char)(h * 16 + lo);
                    i += 2;
                } else {
                    out[o++] = v[i];
                }
            }
            out[o] = '\0';
            return out;
        }
        q = e ? e + 1 : NULL;
    }
    return NULL;
}

static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* A key or value: no spaces, parentheses, commas or operators. */
static int word_ok(const char *w, int key)
{
    if (key && *w == '\0')
        return 0;
    for (; *w; w++)
        if (isspace((unsigned char)*w) || strchr("(),=!", *w))
            return 0;
    return 1;
}

void ks_label_query_free(ks_label_query_t *q)
{
    free(q->reqs);
    free(q->values);
    free(q->buf);
    memset(q, 0, sizeof *q);
}

/* Parse one requirement (in place) into r, its values appended at
 * *vals. */
static int parse_req(char *s, ks_requirement_t *r, const char **vals,
                     char *err, size_t errlen)
{
    char *p, *set = NULL, *key;
    s = trim(s);
    memset(r, 0, sizeof *r);
    r->values = vals;
    if (*s == '!') {
        key = trim(s + 1);
        r->op = KS_OP_DOES_NOT_EXIST;
    } else if ((p = strstr(s, "!=")) != NULL) {
        *p = '\0';
        key = trim(s);
        r->op = KS_OP_NOT_IN;
        vals[r->n_values++] = trim(p + 2);
    } else if ((p = strchr(s, '=')) != NULL) {
        *p = '\0';
        key = trim(s);
        r->op = KS_OP_IN;
        vals[r->n_values++] = trim(p[1] == '=' ? p + 2 : p + 1);
    } else if ((p = strchr(s, '(')) != NULL) {
        char *sp = p;
        set = p + 1;
        *p = '\0';
        while (sp > s && isspace((unsigned char)sp[-1]))
            sp--;
        /* "key in" or "key notin" before the parenthesis */
        *sp = '\0';
        if ((p = strrchr(s, ' ')) == NULL)
            goto bad;
        *p++ = '\0';
        if (strcmp(p, "in") == 0)
            r->op = KS_OP_IN;
        else if (strcmp(p, "notin") == 0)
            r->op = KS_OP_NOT_IN;
        else
            goto bad;
        key = trim(s);
        p = strchr(set, ')');
        if (p == NULL || *trim(p + 1) != '\0')
            goto bad;
        *p = '\0';
        for (p = set;;) {
            char *c = strchr(p, ',');
            if (c)
                *c = '\0';
            vals[r->n_values] = trim(p);
            if (!word_ok(vals[r->n_values], 0))
                goto bad;
            r->n_values++;
            if (c == NULL)
                break;
            p = c + 1;
        }
    } else {
        key = s;
        r->op = KS_OP_EXISTS;
    }
    if (!word_ok(key, 1))
        goto bad;
    if (set == NULL && r->n_values && !word_ok(vals[0], 0))
        goto bad;
    r->key = key;
    return 0;
bad:
    snprintf(err, errlen, "unable to parse requirement: \"%s\"", s);
    return -1;
}

int ks_label_query_parse(const char *text, ks_label_query_t *q, char *err,
                         size_t errlen)
{
    size_t n = 1, i, depth = 0, nv = 0;
    char *p, *start;
    memset(q, 0, sizeof *q);
    for (p = (char *)text; *p; p++)
        n += *p == ',';
    q->buf = strdup(text);
    q->reqs = calloc(n, sizeof *q->reqs);
    q->values = calloc(n + 1, sizeof *q->values);
    if (q->buf == NULL || q->reqs == NULL || q->values == NULL) {
        ks_label_query_free(q);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (*trim(q->buf) == '\0') {
        q->sel.reqs = q->reqs;
        return 0; /* everything */
    }
    /* split at commas outside parentheses */
    for (p = start = q->buf, i = 0;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth)
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            int end = *p == '\0';
            *p = '\0';
            if (parse_req(start, &q->reqs[i], q->values + nv, err, errlen) !=
                0) {
                ks_label_query_free(q);
                return -1;
            }
            nv += q->reqs[i].n_values;
            i++;
            if (end)
                break;
            start = p + 1;
        }
    }
    q->sel.reqs = q->reqs;
    q->sel.n = (uint32_t)i;
    return 0;
}
