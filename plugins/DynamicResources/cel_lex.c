/* The CEL lexer: identifiers, numbers, the four quoting styles of strings
 * (with raw and bytes prefixes and every escape CEL defines), operators and
 * `//` comments. */
#include "cel_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int col_of(const ks_cel_lexer_t *lx, const char *p)
{
    return (int)(p - lx->src) + 1;
}

static ks_cel_token_t tok_error(ks_cel_lexer_t *lx, const char *at, const char *msg)
{
    ks_cel_token_t t = { .kind = TK_ERROR, .col = col_of(lx, at), .start = at };
    ks_cel_errf(lx->err, lx->errlen, t.col, "%s", msg);
    return t;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends code point cp as UTF-8; 0, or -1 when it is not a scalar value. */
static int put_utf8(char *out, size_t *n, uint32_t cp)
{
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xC0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xE0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*n)++] = (char)(0xF0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
    return 0;
}

static ks_cel_token_t lex_string(ks_cel_lexer_t *lx, const char *start, int raw, int bytes)
{
    const char *p = lx->p;
    char q = *p;
    int triple = p[1] == q && p[2] == q;
    p += triple ? 3 : 1;
    size_t cap = strlen(p) + 1;
    char *out = ks_cel_arena_alloc(lx->arena, cap);
    size_t n = 0;
    if (!out)
        return tok_error(lx, start, "out of memory");
    for (;;) {
        if (!*p)
            return tok_error(lx, start, "unterminated string literal");
        if (triple ? (p[0] == q && p[1] == q && p[2] == q) : *p == q) {
            p += triple ? 3 : 1;
            break;
        }
        if (!triple && (*p == '\n' || *p == '\r'))
            return tok_error(lx, start, "newline in a single-quoted string literal");
        if (*p != '\\' || raw) {
            out[n++] = *p++;
            continue;
        }
        const char *esc = p;
        p++;
        uint32_t cp;
        int is_byte = 0;
        switch (*p) {
        case 'a': cp = 7; p++; break;
        case 'b': cp = 8; p++; break;
        case 'f': cp = 12; p++; break;
        case 'n': cp = 10; p++; break;
        case 'r': cp = 13; p++; break;
        case 't': cp = 9; p++; break;
        case 'v': cp = 11; p++; break;
        case '\\': case '\'': case '"': case '`': case '?':
            cp = (unsigned char)*p++;
            break;
        case 'x': case 'X': case 'u': case 'U': {
            int digits = (*p == 'x' || *p == 'X') ? 2 : *p == 'u' ? 4 : 8;
            is_byte = digits == 2;
            p++;
            cp = 0;
            for (int i = 0; i < digits; i++) {
                int h = hexval((unsigned char)p[i]);
                if (h < 0)
                    return tok_error(lx, esc, "invalid escape sequence in string literal");
                cp = cp * 16 + (uint32_t)h;
            }
            p += digits;
            if (!is_byte && bytes)
                return tok_error(lx, esc, "\\u and \\U escapes are not allowed in bytes literals");
            break;
        }
        case '0': case '1': case '2': case '3': {
            cp = 0;
            for (int i = 0; i < 3; i++) {
                if (p[i] < '0' || p[i] > '7')
                    return tok_error(lx, esc, "invalid octal escape in string literal");
                cp = cp * 8 + (uint32_t)(p[i] - '0');
            }
            p += 3;
            is_byte = 1;
            break;
        }
        default:
            return tok_error(lx, esc, "invalid escape sequence in string literal");
        }
        if (bytes && is_byte) {
            out[n++] = (char)cp;
        } else if (put_utf8(out, &n, cp) < 0) {
            return tok_error(lx, esc, "invalid code point in string literal");
        }
    }
    lx->p = p;
    ks_cel_token_t t = { .kind = bytes ? TK_BYTES : TK_STRING, .col = col_of(lx, start),
                         .start = start, .len = (size_t)(p - start),
                         .str = out, .slen = n };
    return t;
}

static int is_ident_start(int c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int is_digit(int c) { return c >= '0' && c <= '9'; }

static ks_cel_token_t lex_number(ks_cel_lexer_t *lx)
{
    const char *s = lx->p, *p = s;
    ks_cel_token_t t = { .col = col_of(lx, s), .start = s };
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        uint64_t v = 0;
        if (hexval((unsigned char)*p) < 0)
            return tok_error(lx, s, "invalid hex literal");
        while (hexval((unsigned char)*p) >= 0) {
            if (v > (UINT64_MAX >> 4))
                return tok_error(lx, s, "hex literal out of range");
            v = v * 16 + (uint64_t)hexval((unsigned char)*p++);
        }
        t.u = v;
        if (*p == 'u' || *p == 'U') {
            p++;
            t.kind = TK_UINT;
        } else {
            if (v > (uint64_t)INT64_MAX + 1)
                return tok_error(lx, s, "int literal out of range");
            t.kind = TK_INT;
        }
    } else {
        int is_double = 0;
        while (is_digit(*p))
            p++;
        if (*p == '.' && is_digit(p[1])) {
            is_double = 1;
            p++;
            while (is_digit(*p))
                p++;
        }
        if ((*p == 'e' || *p == 'E') &&
            (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
            is_double = 1;
            p += 2;
            while (is_digit(*p))
                p++;
        }
        if (is_double) {
            char buf[512];
            size_t n = (size_t)(p - s);
            if (n >= sizeof buf)
                return tok_error(lx, s, "double literal too long");
            memcpy(buf, s, n);
            buf[n] = 0;
            t.kind = TK_DOUBLE;
            t.d = strtod(buf, NULL);
            if (t.d == HUGE_VAL)
                return tok_error(lx, s, "invalid double literal");
        } else {
            uint64_t v = 0;
            for (const char *q = s; q < p; q++) {
                unsigned dgt = (unsigned)(*q - '0');
                if (v > (UINT64_MAX - dgt) / 10)
                    return tok_error(lx, s, "int literal out of range");
                v = v * 10 + dgt;
            }
            t.u = v;
            if (*p == 'u' || *p == 'U') {
                p++;
                t.kind = TK_UINT;
            } else {
                if (v > (uint64_t)INT64_MAX + 1)
                    return tok_error(lx, s, "int literal out of range");
                t.kind = TK_INT;
            }
        }
    }
    if (is_ident_start((unsigned char)*p) || is_digit(*p))
        return tok_error(lx, s, "invalid number literal");
    lx->p = p;
    t.len = (size_t)(p - s);
    return t;
}

ks_cel_token_t ks_cel_lex_next(ks_cel_lexer_t *lx)
{
    const char *p = lx->p;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f')
            p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        break;
    }
    lx->p = p;
    ks_cel_token_t t = { .col = col_of(lx, p), .start = p, .len = 1 };
    int c = (unsigned char)*p;
    if (!c) {
        t.kind = TK_EOF;
        t.len = 0;
        return t;
    }
    /* string prefixes: r, R, b, B, and the two-letter combinations */
    if (c == 'r' || c == 'R' || c == 'b' || c == 'B') {
        int raw = 0, bytes = 0;
        const char *q = p;
        for (int i = 0; i < 2 && (*q == 'r' || *q == 'R' || *q == 'b' || *q == 'B'); i++, q++) {
            if (*q == 'r' || *q == 'R') raw++; else bytes++;
        }
        if (raw <= 1 && bytes <= 1 && (*q == '"' || *q == '\'')) {
            lx->p = q;
            return lex_string(lx, p, raw, bytes);
        }
    }
    if (is_ident_start(c)) {
        const char *q = p;
        while (is_ident_start((unsigned char)*q) || is_digit(*q))
            q++;
        t.len = (size_t)(q - p);
        lx->p = q;
        t.kind = TK_IDENT;
        if (t.len == 4 && !memcmp(p, "true", 4)) t.kind = TK_TRUE;
        else if (t.len == 5 && !memcmp(p, "false", 5)) t.kind = TK_FALSE;
        else if (t.len == 4 && !memcmp(p, "null", 4)) t.kind = TK_NULL;
        else if (t.len == 2 && !memcmp(p, "in", 2)) t.kind = TK_IN;
        if (t.kind == TK_IDENT) {
            t.str = ks_cel_arena_strndup(lx->arena, p, t.len);
            t.slen = t.len;
            if (!t.str)
                return tok_error(lx, p, "out of memory");
        }
        return t;
    }
    if (is_digit(c) || (c == '.' && is_digit(p[1])))
        return lex_number(lx);
    if (c == '"' || c == '\'')
        return lex_string(lx, p, 0, 0);
    struct { const char *s; ks_cel_tok_kind_t k; } ops[] = {
        { "||", TK_OR }, { "&&", TK_AND }, { "==", TK_EQ }, { "!=", TK_NE },
        { "<=", TK_LE }, { ">=", TK_GE }, { "<", TK_LT }, { ">", TK_GT },
        { "!", TK_NOT }, { "(", TK_LPAREN }, { ")", TK_RPAREN },
        { "[", TK_LBRACKET }, { "]", TK_RBRACKET }, { "{", TK_LBRACE },
        { "}", TK_RBRACE }, { ".", TK_DOT }, { ",", TK_COMMA },
        { ":", TK_COLON }, { "?", TK_QUESTION }, { "+", TK_PLUS },
        { "-", TK_MINUS }, { "*", TK_STAR }, { "/", TK_SLASH }, { "%", TK_PERCENT },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i].s);
        if (!strncmp(p, ops[i].s, n)) {
            t.kind = ops[i].k;
            t.len = n;
            lx->p = p + n;
            return t;
        }
    }
    if (c == '=')
        return tok_error(lx, p, "'=' is not an operator (use '==')");
    if (c >= 0x80)
        return tok_error(lx, p, "unexpected non-ASCII character outside a string literal");
    return tok_error(lx, p, "unexpected character");
}
