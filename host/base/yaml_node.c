/* Node typing and accessors; see yaml_node.h. */
#include "base/yaml_node.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- typing ----------------------------------------------------------------- */

static int in_list(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int all_of(const char *s, const char *set)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (strchr(set, *s) == NULL)
            return 0;
    return 1;
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL",
                                          NULL};
static const char *const true_words[] = {"true", "True", "TRUE", NULL};
static const char *const false_words[] = {"false", "False", "FALSE", NULL};

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static int is_int_text(const char *s)
{
    if (s[0] == '0' && s[1] == 'o')
        return all_of(s + 2, "01234567");
    if (s[0] == '0' && s[1] == 'x')
        return all_of(s + 2, "0123456789abcdefABCDEF");
    if (*s == '-' || *s == '+')
        s++;
    return all_of(s, "0123456789");
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?\.inf, \.nan */
static int is_float_text(const char *s)
{
    static const char *const special[] = {
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
        "-.INF", ".nan", ".NaN", ".NAN", NULL};
    int digits = 0;
    if (in_list(s, special))
        return 1;
    if (*s == '-' || *s == '+')
        s++;
    while (is_digit(*s))
        s++, digits++;
    if (*s == '.') {
        s++;
        while (is_digit(*s))
            s++, digits++;
    }
    if (digits == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!is_digit(*s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    return *s == '\0';
}

int ks_yaml_is_quoted(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE &&
           n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
           n->data.scalar.style != YAML_ANY_SCALAR_STYLE;
}

static int null_tagged(const yaml_node_t *n)
{
    return n->tag != NULL && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0;
}

ks_yaml_type_t ks_yaml_type(const yaml_node_t *n)
{
    const char *s;
    if (n == NULL)
        return KS_YAML_ABSENT;
    switch (n->type) {
    case YAML_MAPPING_NODE: return KS_YAML_MAP;
    case YAML_SEQUENCE_NODE: return KS_YAML_SEQ;
    case YAML_SCALAR_NODE: break;
    default: return KS_YAML_ABSENT;
    }
    if (null_tagged(n))
        return KS_YAML_NULL;
    if (ks_yaml_is_quoted(n))
        return KS_YAML_STR;
    s = (const char *)n->data.scalar.value;
    if (strlen(s) != n->data.scalar.length)
        return KS_YAML_STR; /* an embedded NUL */
    if (in_list(s, null_words))
        return KS_YAML_NULL;
    if (in_list(s, true_words) || in_list(s, false_words))
        return KS_YAML_BOOL;
    if (is_int_text(s))
        return KS_YAML_INT;
    if (is_float_text(s))
        return KS_YAML_FLOAT;
    return KS_YAML_STR;
}

const char *ks_yaml_type_name(ks_yaml_type_t t)
{
    switch (t) {
    case KS_YAML_NULL: return "null";
    case KS_YAML_BOOL: return "a boolean";
    case KS_YAML_INT: return "an integer";
    case KS_YAML_FLOAT: return "a number";
    case KS_YAML_STR: return "a string";
    case KS_YAML_SEQ: return "a sequence";
    case KS_YAML_MAP: return "a mapping";
    default: return "nothing";
    }
}

const char *ks_yaml_describe(const yaml_node_t *n, char *buf, size_t len)
{
    ks_yaml_type_t t = ks_yaml_type(n);
    const char *what = ks_yaml_type_name(t), *s;
    if (t == KS_YAML_ABSENT || t == KS_YAML_NULL || t == KS_YAML_SEQ ||
        t == KS_YAML_MAP || len == 0)
        return what;
    s = ks_yaml_text(n);
    if (strlen(s) > 40)
        snprintf(buf, len, "%s (\"%.37s...\")", what, s);
    else
        snprintf(buf, len, "%s (\"%s\")", what, s);
    return buf;
}

int ks_yaml_is_null(const yaml_node_t *n)
{
    return n == NULL ||
           (n->type == YAML_SCALAR_NODE && ks_yaml_type(n) == KS_YAML_NULL);
}

int ks_yaml_is_map(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_MAPPING_NODE;
}

int ks_yaml_is_seq(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SEQUENCE_NODE;
}

int ks_yaml_is_scalar(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE;
}

/* --- scalar values ---------------------------------------------------------- */

const char *ks_yaml_text(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)n->data.scalar.value;
}

size_t ks_yaml_text_len(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return 0;
    return n->data.scalar.length;
}

int ks_yaml_bool(const yaml_node_t *n, int *out)
{
    const char *s;
    if (ks_yaml_type(n) != KS_YAML_BOOL)
        return -1;
    s = ks_yaml_text(n);
    *out = in_list(s, true_words);
    return 0;
}

int ks_yaml_int64(const yaml_node_t *n, int64_t *out)
{
    const char *s;
    char *end;
    int base = 10, neg = 0;
    unsigned long long u;
    if (ks_yaml_type(n) != KS_YAML_INT)
        return -1;
    s = ks_yaml_text(n);
    if (s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
        base = s[1] == 'o' ? 8 : 16;
        s += 2;
    } else if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    errno = 0;
    u = strtoull(s, &end, base);
    if (*end != '\0')
        return -1;
    if (errno == ERANGE || u > (neg ? (unsigned long long)INT64_MAX + 1
                                    : (unsigned long long)INT64_MAX))
        return -2;
    if (neg)
        *out = u == (unsigned long long)INT64_MAX + 1 ? INT64_MIN
                                                       : -(int64_t)u;
    else
        *out = (int64_t)u;
    return 0;
}

int ks_yaml_double(const yaml_node_t *n, double *out)
{
    const char *s;
    int64_t i;
    switch (ks_yaml_type(n)) {
    case KS_YAML_INT:
        if (ks_yaml_int64(n, &i) == 0) {
            *out = (double)i;
            return 0;
        }
        break; /* out of int64 range: read as a float */
    case KS_YAML_FLOAT: break;
    default: return -1;
    }
    s = ks_yaml_text(n);
    if (s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
        *out = (double)strtoull(s + 2, NULL, s[1] == 'o' ? 8 : 16);
        return 0;
    }
    if (strstr(s, ".nan") || strstr(s, ".NaN") || strstr(s, ".NAN")) {
        *out = NAN;
        return 0;
    }
    if (strstr(s, ".inf") || strstr(s, ".Inf") || strstr(s, ".INF")) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    *out = strtod(s, NULL);
    return 0;
}

int ks_yaml_is_yaml11_bool(const yaml_node_t *n)
{
    static const char *const words[] = {
        "y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",  "No",
        "NO", "on", "On",  "ON",  "off", "Off", "OFF", NULL};
    return n != NULL && n->type == YAML_SCALAR_NODE && !ks_yaml_is_quoted(n) &&
           !null_tagged(n) && in_list(ks_yaml_text(n), words);
}

const char *ks_yaml_bool_hint(const yaml_node_t *n)
{
    return ks_yaml_is_yaml11_bool(n)
               ? "; ksched reads YAML 1.2, where yes/no/on/off are strings: "
                 "write true or false"
               : "";
}

/* --- navigation ---------------------------------------------------------------- */

yaml_node_t *ks_yaml_node(yaml_document_t *doc, int id)
{
    return yaml_document_get_node(doc, id);
}

size_t ks_yaml_seq_len(const yaml_node_t *n)
{
    if (!ks_yaml_is_seq(n))
        return 0;
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *ks_yaml_seq_at(yaml_document_t *doc, const yaml_node_t *seq,
                            size_t i)
{
    if (i >= ks_yaml_seq_len(seq))
        return NULL;
    return yaml_document_get_node(doc, seq->data.sequence.items.start[i]);
}

size_t ks_yaml_map_len(const yaml_node_t *n)
{
    if (!ks_yaml_is_map(n))
        return 0;
    return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

yaml_node_t *ks_yaml_map_key(yaml_document_t *doc, const yaml_node_t *map,
                             size_t i)
{
    if (i >= ks_yaml_map_len(map))
        return NULL;
    return yaml_document_get_node(doc, map->data.mapping.pairs.start[i].key);
}

yaml_node_t *ks_yaml_map_value(yaml_document_t *doc, const yaml_node_t *map,
                               size_t i)
{
    if (i >= ks_yaml_map_len(map))
        return NULL;
    return yaml_document_get_node(doc,
                                  map->data.mapping.pairs.start[i].value);
}

yaml_node_t *ks_yaml_get(yaml_document_t *doc, const yaml_node_t *map,
                         const char *key)
{
    yaml_node_pair_t *p;
    yaml_node_t *found = NULL;
    if (!ks_yaml_is_map(map))
        return NULL;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = ks_yaml_text(yaml_document_get_node(doc, p->key));
        if (k != NULL && strcmp(k, key) == 0)
            found = yaml_document_get_node(doc, p->value);
    }
    return found;
}

/* --- positions ------------------------------------------------------------------ */

uint32_t ks_yaml_line(const yaml_node_t *n)
{
    if (n == NULL || n->start_mark.line == KS_YAML_NO_MARK)
        return 0;
    return (uint32_t)n->start_mark.line + 1;
}

uint32_t ks_yaml_column(const yaml_node_t *n)
{
    if (n == NULL || n->start_mark.line == KS_YAML_NO_MARK)
        return 0;
    return (uint32_t)n->start_mark.column + 1;
}

const char *ks_yaml_where_mark(char *buf, size_t len, const char *file,
                               yaml_mark_t mark)
{
    if (mark.line == KS_YAML_NO_MARK)
        snprintf(buf, len, "%s", file);
    else
        snprintf(buf, len, "%s:%zu:%zu", file, mark.line + 1,
                 mark.column + 1);
    return buf;
}

const char *ks_yaml_where(char *buf, size_t len, const char *file,
                          const yaml_node_t *n)
{
    if (n == NULL) {
        snprintf(buf, len, "%s", file);
        return buf;
    }
    return ks_yaml_where_mark(buf, len, file, n->start_mark);
}
