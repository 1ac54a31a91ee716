#include "json_go.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "strmap.h"

#define GJ_MAX_DEPTH 10000 /* encoding/json's maxNestingDepth */

struct ks_gj_doc {
    ks_arena_t *arena;
    ks_gj_value_t *root;
};

/* --- parsing -------------------------------------------------------------- */

typedef struct gj_parser {
    const unsigned char *p, *end;
    ks_arena_t *arena;
    /* children of the open arrays and objects, innermost last */
    ks_gj_value_t **stack;
    const char **kstack;
    size_t *klstack;
    size_t n_stack, cap_stack;
    char *msg;
    size_t msg_len;
    int failed;
} gj_parser_t;

/* Go's quoteChar: how a byte is shown in a syntax error. */
static void quote_char(unsigned char c, char *out, size_t len)
{
    if (c == '\'')
        snprintf(out, len, "'\\''");
    else if (c == '"')
        snprintf(out, len, "'\"'");
    else if (c == '\\')
        snprintf(out, len, "'\\\\'");
    else if (c == '\n')
        snprintf(out, len, "'\\n'");
    else if (c == '\r')
        snprintf(out, len, "'\\r'");
    else if (c == '\t')
        snprintf(out, len, "'\\t'");
    else if (c == '\a')
        snprintf(out, len, "'\\a'");
    else if (c == '\b')
        snprintf(out, len, "'\\b'");
    else if (c == '\f')
        snprintf(out, len, "'\\f'");
    else if (c == '\v')
        snprintf(out, len, "'\\v'");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(out, len, "'%c'", c);
    else if (c < 0x80)
        snprintf(out, len, "'\\x%02x'", c);
    else if (c <= 0xa0 || c == 0xad)
        snprintf(out, len, "'\\u%04x'", c);
    else /* the byte as the Latin-1 rune, in UTF-8 */
        snprintf(out, len, "'%c%c'", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
}

static void *fail(gj_parser_t *ps, const char *context)
{
    char q[16];
    if (ps->failed)
        return NULL;
    ps->failed = 1;
    if (ps->p >= ps->end) {
        snprintf(ps->msg, ps->msg_len, "unexpected EOF");
        return NULL;
    }
    quote_char(*ps->p, q, sizeof q);
    snprintf(ps->msg, ps->msg_len, "invalid character %s %s", q, context);
    return NULL;
}

static void *oom(gj_parser_t *ps)
{
    if (!ps->failed)
        snprintf(ps->msg, ps->msg_len, "out of memory");
    ps->failed = 1;
    return NULL;
}

static void skip_ws(gj_parser_t *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                               *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static ks_gj_value_t *new_value(gj_parser_t *ps, ks_gj_type_t t)
{
    ks_gj_value_t *v = ks_arena_alloc(ps->arena, sizeof *v);
    if (v == NULL)
        return oom(ps);
    v->type = t;
    return v;
}

static int push(gj_parser_t *ps, ks_gj_value_t *v, const char *key,
                size_t key_len)
{
    if (ps->n_stack == ps->cap_stack) {
        size_t cap = ps->cap_stack ? ps->cap_stack * 2 : 64;
        ks_gj_value_t **s = realloc(ps->stack, cap * sizeof *s);
        const char **k;
        size_t *kl;
        if (s == NULL)
            return -1;
        ps->stack = s;
        k = realloc(ps->kstack, cap * sizeof *k);
        if (k == NULL)
            return -1;
        ps->kstack = k;
        kl = realloc(ps->klstack, cap * sizeof *kl);
        if (kl == NULL)
            return -1;
        ps->klstack = kl;
        ps->cap_stack = cap;
    }
    ps->stack[ps->n_stack] = v;
    ps->kstack[ps->n_stack] = key;
    ps->klstack[ps->n_stack++] = key_len;
    return 0;
}

/* Moves the children pushed since `base` into v. */
static int close_children(gj_parser_t *ps, ks_gj_value_t *v, size_t base,
                          int with_keys)
{
    size_t n = ps->n_stack - base;
    v->n = n;
    v->items = ks_arena_alloc(ps->arena, (n ? n : 1) * sizeof *v->items);
    if (v->items == NULL)
        return -1;
    if (n > 0) /* the stack may be NULL: memcpy(x, NULL, 0) is UB */
        memcpy(v->items, ps->stack + base, n * sizeof *v->items);
    if (with_keys) {
        v->keys = ks_arena_alloc(ps->arena, (n ? n : 1) * sizeof *v->keys);
        v->key_lens =
            ks_arena_alloc(ps->arena, (n ? n : 1) * sizeof *v->key_lens);
        if (v->keys == NULL || v->key_lens == NULL)
            return -1;
        if (n > 0) {
            memcpy(v->keys, ps->kstack + base, n * sizeof *v->keys);
            memcpy(v->key_lens, ps->klstack + base, n * sizeof *v->key_lens);
        }
    }
    ps->n_stack = base;
    return 0;
}

static size_t put_utf8(char *o, uint32_t r)
{
    if (r < 0x80) {
        o[0] = (char)r;
        return 1;
    }
    if (r < 0x800) {
        o[0] = (char)(0xc0 | (r >> 6));
        o[1] = (char)(0x80 | (r & 0x3f));
        return 2;
    }
    if (r < 0x10000) {
        o[0] = (char)(0xe0 | (r >> 12));
        o[1] = (char)(0x80 | ((r >> 6) & 0x3f));
        o[2] = (char)(0x80 | (r & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (r >> 18));
    o[1] = (char)(0x80 | ((r >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((r >> 6) & 0x3f));
    o[3] = (char)(0x80 | (r & 0x3f));
    return 4;
}

/* Length of a valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    uint32_t r;
    size_t l, i;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        l = 2, r = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        l = 3, r = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        l = 4, r = s[0] & 0x07;
    else
        return 0;
    if (n < l)
        return 0;
    for (i = 1; i < l; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        r = (r << 6) | (s[i] & 0x3f);
    }
    if ((l == 3 && (r < 0x800 || (r >= 0xd800 && r <= 0xdfff))) ||
        (l == 4 && (r < 0x10000 || r > 0x10ffff)))
        return 0;
    return l;
}

static int hex4(const unsigned char *p, uint32_t *out)
{
    uint32_t r = 0;
    int i;
    for (i = 0; i < 4; i++) {
        unsigned c = p[i];
        r <<= 4;
        if (c >= '0' && c <= '9')
            r |= c - '0';
        else if (c >= 'a' && c <= 'f')
            r |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            r |= c - 'A' + 10;
        else
            return i;
    }
    *out = r;
    return 4;
}

/* A string at ps->p (on its opening quote): its decoded text in the
 * arena. */
static char *parse_string(gj_parser_t *ps, size_t *out_len)
{
    const unsigned char *s = ++ps->p, *q;
    char *out, *o;
    /* First pass: validate and find the end; the decoded text is never
     * longer than 3 bytes per source byte (U+FFFD for one bad byte). */
    for (q = s;; q++) {
        if (q >= ps->end) {
            ps->p = q;
            return fail(ps, "");
        }
        if (*q == '"')
            break;
        if (*q < 0x20) {
            ps->p = q;
            return fail(ps, "in string literal");
        }
        if (*q == '\\') {
            q++;
            if (q >= ps->end) {
                ps->p = q;
                return fail(ps, "");
            }
            if (*q == 'u') {
                uint32_t r;
                int k;
                if (ps->end - q < 5) {
                    ps->p = ps->end;
                    return fail(ps, "");
                }
                k = hex4(q + 1, &r);
                if (k < 4) {
                    ps->p = q + 1 + k;
                    return fail(ps, "in \\u hexadecimal character escape");
                }
                q += 4;
            } else if (!strchr("\"\\/bfnrt", *q) || *q == 0) {
                ps->p = q;
                return fail(ps, "in string escape code");
            }
        }
    }
    out = o = ks_arena_alloc(ps->arena, (size_t)(q - s) * 3 + 1);
    if (out == NULL)
        return oom(ps);
    while (s < q) {
        if (*s == '\\') {
            uint32_t r, r2;
            s++;
            switch (*s) {
            case 'b': *o++ = '\b'; s++; continue;
            case 'f': *o++ = '\f'; s++; continue;
            case 'n': *o++ = '\n'; s++; continue;
            case 'r': *o++ = '\r'; s++; continue;
            case 't': *o++ = '\t'; s++; continue;
            case 'u': break;
            default: *o++ = (char)*s++; continue;
            }
            hex4(s + 1, &r);
            s += 5;
            if (r >= 0xd800 && r < 0xdc00 && q - s >= 6 && s[0] == '\\' &&
                s[1] == 'u' && hex4(s + 2, &r2) == 4 && r2 >= 0xdc00 &&
                r2 < 0xe000) {
                r = 0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00);
                s += 6;
            } else if (r >= 0xd800 && r < 0xe000) {
                r = 0xfffd; /* a lone surrogate */
            }
            o += put_utf8(o, r);
        } else {
            size_t l = utf8_valid(s, (size_t)(q - s));
            if (l == 0) {
                o += put_utf8(o, 0xfffd);
                s++;
            } else {
                memcpy(o, s, l);
                o += l;
                s += l;
            }
        }
    }
    *o = '\0';
    *out_len = (size_t)(o - out);
    ps->p = q + 1;
    return out;
}

static int is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

static ks_gj_value_t *parse_number(gj_parser_t *ps)
{
    const unsigned char *s = ps->p;
    ks_gj_value_t *v;
    if (*ps->p == '-')
        ps->p++;
    if (!is_digit(ps->p, ps->end))
        return fail(ps, "in numeric literal");
    if (*ps->p == '0')
        ps->p++;
    else
        while (is_digit(ps->p, ps->end))
            ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!is_digit(ps->p, ps->end))
            return fail(ps, "after decimal point in numeric literal");
        while (is_digit(ps->p, ps->end))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!is_digit(ps->p, ps->end))
            return fail(ps, "in exponent of numeric literal");
        while (is_digit(ps->p, ps->end))
            ps->p++;
    }
    v = new_value(ps, KS_GJ_NUMBER);
    if (v == NULL)
        return NULL;
    v->len = (size_t)(ps->p - s);
    v->text = ks_arena_strndup(ps->arena, (const char *)s, v->len);
    return v->text ? v : oom(ps);
}

static ks_gj_value_t *parse_literal(gj_parser_t *ps, const char *word,
                                    ks_gj_type_t t, int b)
{
    size_t i;
    ks_gj_value_t *v;
    for (i = 0; word[i]; i++, ps->p++)
        if (ps->p >= ps->end || *ps->p != (unsigned char)word[i]) {
            char ctx[64], q[16];
            quote_char((unsigned char)word[i], q, sizeof q);
            snprintf(ctx, sizeof ctx, "in literal %s (expecting %s)", word,
                     q);
            return fail(ps, ctx);
        }
    v = new_value(ps, t);
    if (v)
        v->boolean = b;
    return v;
}

static ks_gj_value_t *parse_value(gj_parser_t *ps, int depth);

static ks_gj_value_t *parse_array(gj_parser_t *ps, int depth)
{
    ks_gj_value_t *v = new_value(ps, KS_GJ_ARRAY), *item;
    size_t base = ps->n_stack;
    if (v == NULL)
        return NULL;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return close_children(ps, v, base, 0) == 0 ? v : oom(ps);
    }
    for (;;) {
        item = parse_value(ps, depth + 1);
        if (item == NULL)
            return NULL;
        if (push(ps, item, NULL, 0) != 0)
            return oom(ps);
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            return close_children(ps, v, base, 0) == 0 ? v : oom(ps);
        }
        return fail(ps, "after array element");
    }
}

static ks_gj_value_t *parse_object(gj_parser_t *ps, int depth)
{
    ks_gj_value_t *v = new_value(ps, KS_GJ_OBJECT), *item;
    size_t base = ps->n_stack;
    if (v == NULL)
        return NULL;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return close_children(ps, v, base, 1) == 0 ? v : oom(ps);
    }
    for (;;) {
        const char *key;
        size_t key_len = 0;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            return fail(ps, "looking for beginning of object key string");
        key = parse_string(ps, &key_len);
        if (key == NULL)
            return NULL;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return fail(ps, "after object key");
        ps->p++;
        item = parse_value(ps, depth + 1);
        if (item == NULL)
            return NULL;
        if (push(ps, item, key, key_len) != 0)
            return oom(ps);
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            return close_children(ps, v, base, 1) == 0 ? v : oom(ps);
        }
        return fail(ps, "after object key:value pair");
    }
}

static ks_gj_value_t *parse_value(gj_parser_t *ps, int depth)
{
    ks_gj_value_t *v;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "");
    if (depth > GJ_MAX_DEPTH) {
        ps->failed = 1;
        snprintf(ps->msg, ps->msg_len, "exceeded max depth");
        return NULL;
    }
    switch (*ps->p) {
    case '{':
        return parse_object(ps, depth);
    case '[':
        return parse_array(ps, depth);
    case '"':
        v = new_value(ps, KS_GJ_STRING);
        if (v == NULL)
            return NULL;
        v->text = parse_string(ps, &v->len);
        return v->text ? v : NULL;
    case 't':
        return parse_literal(ps, "true", KS_GJ_BOOL, 1);
    case 'f':
        return parse_literal(ps, "false", KS_GJ_BOOL, 0);
    case 'n':
        return parse_literal(ps, "null", KS_GJ_NULL, 0);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps);
        return fail(ps, "looking for beginning of value");
    }
}

ks_gj_doc_t *ks_gj_parse(const char *buf, size_t len, char *msg,
                         size_t msg_len)
{
    gj_parser_t ps;
    ks_gj_doc_t *doc;
    ks_arena_t *a;
    memset(&ps, 0, sizeof ps);
    ps.p = (const unsigned char *)buf;
    ps.end = ps.p + len;
    ps.msg = msg;
    ps.msg_len = msg_len;
    skip_ws(&ps);
    if (ps.p == ps.end) {
        snprintf(msg, msg_len, "EOF"); /* io.EOF from an empty body */
        return NULL;
    }
    a = ks_arena_new(len * 2 + 256);
    if (a == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    ps.arena = a;
    doc = ks_arena_alloc(a, sizeof *doc);
    if (doc == NULL) {
        oom(&ps);
    } else {
        doc->arena = a;
        doc->root = parse_value(&ps, 1);
    }
    free(ps.stack);
    free(ps.kstack);
    free(ps.klstack);
    if (doc == NULL || doc->root == NULL) {
        ks_arena_free(a);
        return NULL;
    }
    return doc;
}

const ks_gj_value_t *ks_gj_root(const ks_gj_doc_t *doc)
{
    return doc ? doc->root : NULL;
}

void ks_gj_free(ks_gj_doc_t *doc)
{
    if (doc)
        ks_arena_free(doc->arena);
}

/* --- reading as Go's decoder does ------------------------------------------ */

/* Go's foldName for one rune at s: the smallest rune of its fold orbit,
 * which for a name made of ASCII is all that matters: ASCII letters to
 * upper case, KELVIN SIGN (E2 84 AA) to 'K', LONG S (C5 BF) to 'S'.
 * Other bytes stand for themselves (and cannot match an ASCII name).
 * Returns the folded byte, advancing *s past the rune. */
static int fold_at(const unsigned char **s, const unsigned char *end)
{
    const unsigned char *p = *s;
    if (*p < 0x80) {
        *s = p + 1;
        return (*p >= 'a' && *p <= 'z') ? *p - 'a' + 'A' : *p;
    }
    if (end - p >= 3 && p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa) {
        *s = p + 3;
        return 'K';
    }
    if (end - p >= 2 && p[0] == 0xc5 && p[1] == 0xbf) {
        *s = p + 2;
        return 'S';
    }
    *s = p + 1;
    return 0x100 + *p; /* never equal to an ASCII byte */
}

int ks_gj_key_fills(const char *key, size_t key_len, const char *field)
{
    const unsigned char *k = (const unsigned char *)key, *end = k + key_len;
    const unsigned char *f = (const unsigned char *)field;
    size_t flen = strlen(field);
    if (key_len == flen && memcmp(key, field, flen) == 0)
        return 1;
    while (k < end && *f) {
        const unsigned char *fp = f;
        if (fold_at(&k, end) != fold_at(&fp, fp + 1))
            return 0;
        f = fp;
    }
    return k == end && *f == '\0';
}

const ks_gj_value_t *ks_gj_field_next(const ks_gj_value_t *obj,
                                      const char *field, size_t *at)
{
    if (obj == NULL || obj->type != KS_GJ_OBJECT)
        return NULL;
    for (; *at < obj->n; (*at)++)
        if (ks_gj_key_fills(obj->keys[*at], obj->key_lens[*at], field))
            return obj->items[(*at)++];
    return NULL;
}

typedef struct gj_entry {
    const char *key;
    const ks_gj_value_t *v;
} gj_entry_t;

int ks_gj_map_each(const ks_gj_value_t *obj, const char *field,
                   int (*fn)(void *ud, const char *key,
                             const ks_gj_value_t *v),
                   void *ud, const ks_gj_value_t **bad)
{
    size_t i, j, start = 0, total = 0, n = 0;
    ks_strmap_t seen = {0};
    gj_entry_t *e;
    int found = 0, rc = 0;
    if (obj == NULL || obj->type != KS_GJ_OBJECT)
        return 1;
    /* The map Go ends with starts after the last null; every object from
     * there on adds or replaces entries. */
    for (i = 0; i < obj->n; i++) {
        const ks_gj_value_t *v = obj->items[i];
        if (!ks_gj_key_fills(obj->keys[i], obj->key_lens[i], field))
            continue;
        if (v->type == KS_GJ_NULL) {
            found = 0;
            start = i + 1;
            total = 0;
        } else if (v->type == KS_GJ_OBJECT) {
            found = 1;
            total += v->n;
        } else {
            if (bad)
                *bad = v;
            return -1;
        }
    }
    if (!found)
        return 1;
    e = malloc((total ? total : 1) * sizeof *e);
    if (e == NULL || ks_strmap_reserve(&seen, total) != 0) {
        free(e);
        return -1;
    }
    /* Each entry once, at its first place, with its last value. */
    for (i = start; i < obj->n; i++) {
        const ks_gj_value_t *m = obj->items[i];
        if (m->type != KS_GJ_OBJECT ||
            !ks_gj_key_fills(obj->keys[i], obj->key_lens[i], field))
            continue;
        for (j = 0; j < m->n; j++) {
            gj_entry_t *old = ks_strmap_get(&seen, m->keys[j]);
            if (old != NULL) {
                old->v = m->items[j];
                continue;
            }
            e[n].key = m->keys[j];
            e[n].v = m->items[j];
            if (ks_strmap_put(&seen, m->keys[j], &e[n]) != 0) {
                rc = -1;
                goto out;
            }
            n++;
        }
    }
    for (i = 0; i < n && rc == 0; i++)
        rc = fn(ud, e[i].key, e[i].v);
out:
    ks_strmap_destroy(&seen);
    free(e);
    return rc;
}

/* Go's name of a JSON value's kind in an UnmarshalTypeError: "string",
 * "number" (with the literal for numbers into integers: "number 1.5"),
 * "bool", "array", "object". buf holds the text. */
static const char *gj_kind(const ks_gj_value_t *v, int for_int, char *buf,
                           size_t len)
{
    switch (v->type) {
    case KS_GJ_STRING:
        return "string";
    case KS_GJ_NUMBER:
        if (for_int) {
            snprintf(buf, len, "number %s", v->text);
            return buf;
        }
        return "number";
    case KS_GJ_BOOL:
        return "bool";
    case KS_GJ_ARRAY:
        return "array";
    case KS_GJ_OBJECT:
        return "object";
    default:
        return "null";
    }
}

int ks_gj_int64(const ks_gj_value_t *v, int64_t *out)
{
    char *end;
    long long x;
    if (v == NULL || v->type != KS_GJ_NUMBER ||
        strpbrk(v->text, ".eE") != NULL)
        return -1;
    errno = 0;
    x = strtoll(v->text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = (int64_t)x;
    return 0;
}

int ks_gj_type_error(char *msg, size_t msg_len, const ks_gj_value_t *v,
                     int for_int, const char *strct, const char *field,
                     const char *type)
{
    char kb[96];
    const char *kind = gj_kind(v, for_int, kb, sizeof kb);
    if (strct)
        snprintf(msg, msg_len, "json: cannot unmarshal %s into Go struct "
                               "field %s.%s of type %s",
                 kind, strct, field, type);
    else
        snprintf(msg, msg_len, "json: cannot unmarshal %s into Go value of "
                               "type %s",
                 kind, type);
    return -1;
}
