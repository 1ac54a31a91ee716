/* A libyaml node as compact JSON; see yaml_json.h. */
#include "base/yaml_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/yaml_node.h"

static void put_string(ks_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;
    ks_buf_append(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[7];
        size_t el = 2;
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        ks_buf_append(b, s + run, i - run);
        run = i + 1;
        esc[0] = '\\';
        switch (ch) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[ch >> 4];
            esc[5] = hex[ch & 15];
            el = 6;
        }
        ks_buf_append(b, esc, el);
    }
    ks_buf_append(b, s + run, n - run);
    ks_buf_append(b, "\"", 1);
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? */
static int is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static void put_number(ks_buf_t *b, const yaml_node_t *n)
{
    const char *t = ks_yaml_text(n);
    double d;
    if (is_json_number(t)) {
        ks_buf_puts(b, t);
        return;
    }
    if (ks_yaml_double(n, &d) != 0 || !isfinite(d)) {
        ks_buf_puts(b, "null");
        return;
    }
    ks_buf_printf(b, "%.17g", d);
}

static int put(yaml_document_t *doc, const yaml_node_t *n, ks_buf_t *b,
               int depth, int max_depth, size_t max_len)
{
    size_t i, len;
    int64_t v;
    int bv, rc;
    if (b->oom)
        return -2;
    if (depth > max_depth || b->len > max_len)
        return -1;
    switch (ks_yaml_type(n)) {
    case KS_YAML_ABSENT:
    case KS_YAML_NULL:
        ks_buf_puts(b, "null");
        break;
    case KS_YAML_BOOL:
        ks_yaml_bool(n, &bv);
        ks_buf_puts(b, bv ? "true" : "false");
        break;
    case KS_YAML_INT:
        if (ks_yaml_int64(n, &v) == 0)
            ks_buf_printf(b, "%" PRId64, v);
        else
            put_number(b, n); /* beyond int64: a JSON number all the same */
        break;
    case KS_YAML_FLOAT:
        put_number(b, n);
        break;
    case KS_YAML_STR:
        put_string(b, ks_yaml_text(n), ks_yaml_text_len(n));
        break;
    case KS_YAML_SEQ:
        len = ks_yaml_seq_len(n);
        ks_buf_append(b, "[", 1);
        for (i = 0; i < len; i++) {
            if (i)
                ks_buf_append(b, ",", 1);
            rc = put(doc, ks_yaml_seq_at(doc, n, i), b, depth + 1, max_depth,
                     max_len);
            if (rc != 0)
                return rc;
        }
        ks_buf_append(b, "]", 1);
        break;
    case KS_YAML_MAP: {
        int first = 1;
        len = ks_yaml_map_len(n);
        ks_buf_append(b, "{", 1);
        for (i = 0; i < len; i++) {
            const yaml_node_t *k = ks_yaml_map_key(doc, n, i);
            if (!ks_yaml_is_scalar(k))
                continue;
            if (!first)
                ks_buf_append(b, ",", 1);
            first = 0;
            put_string(b, ks_yaml_text(k), ks_yaml_text_len(k));
            ks_buf_append(b, ":", 1);
            rc = put(doc, ks_yaml_map_value(doc, n, i), b, depth + 1,
                     max_depth, max_len);
            if (rc != 0)
                return rc;
        }
        ks_buf_append(b, "}", 1);
        break;
    }
    }
    if (b->oom)
        return -2;
    return b->len > max_len ? -1 : 0;
}

int ks_yaml_to_json(yaml_document_t *doc, const yaml_node_t *n, ks_buf_t *b,
                    int max_depth, size_t max_len)
{
    return put(doc, n, b, 0, max_depth, max_len);
}
