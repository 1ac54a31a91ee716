/* The CEL parser: a recursive descent over CEL's grammar (conditional,
 * `||`, `&&`, relations, additive, multiplicative, unary, member, primary)
 * into a tree in the program's arena. Macros other than has() and message
 * construction are refused here, naming them. */
#include "cel_internal.h"

#include <string.h>

#define MAX_DEPTH 200

typedef struct parser {
    ks_cel_lexer_t lx;
    ks_cel_token_t tok;   /* current token */
    ks_cel_arena_t *a;
    char *err; size_t errlen;
    int failed;
    int depth;
} parser_t;

static void next(parser_t *ps)
{
    if (ps->failed)
        return;
    ps->tok = ks_cel_lex_next(&ps->lx);
    if (ps->tok.kind == TK_ERROR)
        ps->failed = 1;
}

static ks_cel_node_t *fail(parser_t *ps, int col, const char *msg)
{
    if (!ps->failed)
        ks_cel_errf(ps->err, ps->errlen, col, "%s", msg);
    ps->failed = 1;
    return NULL;
}

static ks_cel_node_t *fail_tok(parser_t *ps, const char *what)
{
    if (ps->failed)
        return NULL;
    if (ps->tok.kind == TK_EOF)
        ks_cel_errf(ps->err, ps->errlen, ps->tok.col, "syntax error: unexpected end of input, expecting %s", what);
    else
        ks_cel_errf(ps->err, ps->errlen, ps->tok.col, "syntax error: unexpected '%.*s', expecting %s",
                    (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.start, what);
    ps->failed = 1;
    return NULL;
}

static ks_cel_node_t *node(parser_t *ps, ks_cel_node_kind_t k, int col)
{
    ks_cel_node_t *n = ks_cel_arena_alloc(ps->a, sizeof *n);
    if (!n)
        return fail(ps, col, "out of memory");
    n->kind = k;
    n->col = col;
    return n;
}

static ks_cel_node_t *call(parser_t *ps, ks_cel_fn_t fn, const char *name, int col,
                           ks_cel_node_t *a0, ks_cel_node_t *a1)
{
    if (!a0 || (a1 == NULL && fn != FN_NEG && fn != FN_NOT))
        return NULL;
    ks_cel_node_t *n = node(ps, ND_CALL, col);
    if (!n)
        return NULL;
    n->fn = fn;
    n->name = name;
    n->nargs = a1 ? 2 : 1;
    n->args = ks_cel_arena_alloc(ps->a, 2 * sizeof *n->args);
    if (!n->args)
        return fail(ps, col, "out of memory");
    n->args[0] = a0;
    n->args[1] = a1;
    return n;
}

static ks_cel_node_t *expr(parser_t *ps);

/* Parses `expr {, expr} [,] CLOSE` (or `k: v` pairs when is_map). */
static int expr_list(parser_t *ps, ks_cel_tok_kind_t close, int is_map, int allow_trailing,
                     ks_cel_node_t ***out, size_t *nout)
{
    size_t cap = 4, n = 0;
    ks_cel_node_t **v = ks_cel_arena_alloc(ps->a, cap * sizeof *v);
    if (!v) {
        fail(ps, ps->tok.col, "out of memory");
        return -1;
    }
    while (ps->tok.kind != close) {
        for (int part = 0; part < (is_map ? 2 : 1); part++) {
            ks_cel_node_t *e = expr(ps);
            if (!e)
                return -1;
            if (n == cap) {
                ks_cel_node_t **nv = ks_cel_arena_alloc(ps->a, 2 * cap * sizeof *nv);
                if (!nv) {
                    fail(ps, ps->tok.col, "out of memory");
                    return -1;
                }
                memcpy(nv, v, cap * sizeof *v);
                v = nv;
                cap *= 2;
            }
            v[n++] = e;
            if (is_map && part == 0) {
                if (ps->tok.kind != TK_COLON) {
                    fail_tok(ps, "':'");
                    return -1;
                }
                next(ps);
            }
        }
        if (ps->tok.kind == TK_COMMA) {
            next(ps);
            if (ps->tok.kind == close && !allow_trailing) {
                fail_tok(ps, "an expression");
                return -1;
            }
            continue;
        }
        if (ps->tok.kind != close) {
            fail_tok(ps, close == TK_RPAREN ? "',' or ')'" : close == TK_RBRACKET ? "',' or ']'" : "',' or '}'");
            return -1;
        }
    }
    if (ps->failed)
        return -1;
    next(ps);
    *out = v;
    *nout = n;
    return 0;
}

static const char *const unsupported_macros[] = {
    "transformList", "transformMap", "transformMapEntry", NULL
};

static const struct { const char *name; ks_cel_macro_t m; size_t min, max; } macros[] = {
    { "all", MC_ALL, 2, 2 }, { "exists", MC_EXISTS, 2, 2 },
    { "exists_one", MC_EXISTS_ONE, 2, 2 }, { "map", MC_MAP, 2, 3 },
    { "filter", MC_FILTER, 2, 2 },
};

static ks_cel_node_t *finish_call(parser_t *ps, ks_cel_node_t *target, const char *name, int col)
{
    for (size_t i = 0; unsupported_macros[i]; i++)
        if (!strcmp(name, unsupported_macros[i])) {
            ks_cel_errf(ps->err, ps->errlen, col,
                        "unsupported function '%s' (two-variable comprehensions are not supported; "
                        "ksched has all, exists, exists_one, map and filter)", name);
            ps->failed = 1;
            return NULL;
        }
    if (!strcmp(name, "existsOne")) {
        ks_cel_errf(ps->err, ps->errlen, col, "unsupported function 'existsOne' (ksched has exists_one)");
        ps->failed = 1;
        return NULL;
    }
    ks_cel_node_t *n = node(ps, ND_CALL, col);
    if (!n)
        return NULL;
    n->name = name;
    n->target = target;
    next(ps); /* '(' */
    if (expr_list(ps, TK_RPAREN, 0, 0, &n->args, &n->nargs) < 0)
        return NULL;
    /* the comprehension macros: range.all(x, predicate) and friends */
    for (size_t i = 0; target && i < sizeof macros / sizeof macros[0]; i++) {
        if (strcmp(name, macros[i].name))
            continue;
        if (n->nargs == 3 && macros[i].max == 2) {
            ks_cel_errf(ps->err, ps->errlen, col,
                        "unsupported macro '%s' with two variables (two-variable comprehensions "
                        "are not supported)", name);
            ps->failed = 1;
            return NULL;
        }
        if (n->nargs < macros[i].min || n->nargs > macros[i].max)
            break; /* not the macro: an ordinary (unknown) function */
        if (n->args[0]->kind != ND_IDENT) {
            ks_cel_errf(ps->err, ps->errlen, n->args[0]->col, "argument must be a simple name");
            ps->failed = 1;
            return NULL;
        }
        n->kind = ND_COMPREHENSION;
        n->macro = macros[i].m;
        n->name = n->args[0]->name;
        n->args++;
        n->nargs--;
        return n;
    }
    /* cel.bind(var, init, expr): a local variable (cel-go's Bindings) */
    if (target && target->kind == ND_IDENT && !strcmp(target->name, "cel") && !strcmp(name, "bind")) {
        if (n->nargs != 3) {
            ks_cel_errf(ps->err, ps->errlen, col, "cel.bind() takes a variable, its value and an expression");
            ps->failed = 1;
            return NULL;
        }
        if (n->args[0]->kind != ND_IDENT) {
            ks_cel_errf(ps->err, ps->errlen, n->args[0]->col,
                        "cel.bind() variable names must be simple identifiers");
            ps->failed = 1;
            return NULL;
        }
        n->kind = ND_BIND;
        n->name = n->args[0]->name;
        n->target = NULL;
        n->args[0] = n->args[1];
        n->args[1] = n->args[2];
        n->nargs = 2;
        return n;
    }
    if (!target && !strcmp(name, "has")) {
        if (n->nargs != 1 || n->args[0]->kind != ND_SELECT) {
            ks_cel_errf(ps->err, ps->errlen, col, "invalid argument to has() macro");
            ps->failed = 1;
            return NULL;
        }
        n->kind = ND_HAS;
        n->target = n->args[0];
    }
    return n;
}

static ks_cel_node_t *primary(parser_t *ps)
{
    ks_cel_token_t t = ps->tok;
    ks_cel_node_t *n;
    switch (t.kind) {
    case TK_INT:
        if (t.u > (uint64_t)INT64_MAX)
            return fail(ps, t.col, "int literal out of range");
        n = node(ps, ND_CONST, t.col);
        if (n) { n->cval.kind = KV_INT; n->cval.u.i = (int64_t)t.u; }
        next(ps);
        return n;
    case TK_UINT:
        n = node(ps, ND_CONST, t.col);
        if (n) { n->cval.kind = KV_UINT; n->cval.u.u = t.u; }
        next(ps);
        return n;
    case TK_DOUBLE:
        n = node(ps, ND_CONST, t.col);
        if (n) { n->cval.kind = KV_DOUBLE; n->cval.u.d = t.d; }
        next(ps);
        return n;
    case TK_STRING: case TK_BYTES:
        n = node(ps, ND_CONST, t.col);
        if (n) {
            n->cval.kind = t.kind == TK_STRING ? KV_STRING : KV_BYTES;
            n->cval.u.s.p = t.str;
            n->cval.u.s.n = t.slen;
        }
        next(ps);
        return n;
    case TK_TRUE: case TK_FALSE:
        n = node(ps, ND_CONST, t.col);
        if (n) { n->cval.kind = KV_BOOL; n->cval.u.b = t.kind == TK_TRUE; }
        next(ps);
        return n;
    case TK_NULL:
        n = node(ps, ND_CONST, t.col);
        if (n) n->cval.kind = KV_NULL;
        next(ps);
        return n;
    case TK_LPAREN:
        next(ps);
        n = expr(ps);
        if (!n)
            return NULL;
        if (ps->tok.kind != TK_RPAREN)
            return fail_tok(ps, "')'");
        next(ps);
        return n;
    case TK_LBRACKET:
        n = node(ps, ND_LIST, t.col);
        if (!n)
            return NULL;
        next(ps);
        if (expr_list(ps, TK_RBRACKET, 0, 1, &n->args, &n->nargs) < 0)
            return NULL;
        return n;
    case TK_LBRACE:
        n = node(ps, ND_MAP, t.col);
        if (!n)
            return NULL;
        next(ps);
        if (expr_list(ps, TK_RBRACE, 1, 1, &n->args, &n->nargs) < 0)
            return NULL;
        return n;
    case TK_DOT:
    case TK_IDENT: {
        int col = t.col;
        if (t.kind == TK_DOT) {
            next(ps);
            if (ps->tok.kind != TK_IDENT)
                return fail_tok(ps, "an identifier");
            t = ps->tok;
        }
        next(ps);
        if (ps->tok.kind == TK_LPAREN)
            return finish_call(ps, NULL, t.str, col);
        if (ps->tok.kind == TK_LBRACE)
            return fail(ps, col, "message construction is not supported");
        n = node(ps, ND_IDENT, col);
        if (n)
            n->name = t.str;
        return n;
    }
    default:
        return fail_tok(ps, "an expression");
    }
}

static ks_cel_node_t *member(parser_t *ps)
{
    ks_cel_node_t *n = primary(ps);
    while (n && !ps->failed) {
        if (ps->tok.kind == TK_DOT) {
            int col = ps->tok.col;
            next(ps);
            if (ps->tok.kind != TK_IDENT)
                return fail_tok(ps, "a field or method name");
            const char *name = ps->tok.str;
            int ncol = ps->tok.col;
            next(ps);
            if (ps->tok.kind == TK_LPAREN) {
                n = finish_call(ps, n, name, ncol);
            } else {
                ks_cel_node_t *s = node(ps, ND_SELECT, col);
                if (!s)
                    return NULL;
                s->target = n;
                s->name = name;
                n = s;
            }
        } else if (ps->tok.kind == TK_LBRACKET) {
            int col = ps->tok.col;
            next(ps);
            ks_cel_node_t *idx = expr(ps);
            if (!idx)
                return NULL;
            if (ps->tok.kind != TK_RBRACKET)
                return fail_tok(ps, "']'");
            next(ps);
            ks_cel_node_t *s = node(ps, ND_INDEX, col);
            if (!s)
                return NULL;
            s->target = n;
            s->args = ks_cel_arena_alloc(ps->a, sizeof *s->args);
            if (!s->args)
                return fail(ps, col, "out of memory");
            s->args[0] = idx;
            s->nargs = 1;
            n = s;
        } else {
            break;
        }
    }
    return ps->failed ? NULL : n;
}

static ks_cel_node_t *unary(parser_t *ps)
{
    if (++ps->depth > MAX_DEPTH)
        return fail(ps, ps->tok.col, "expression nested too deeply");
    ks_cel_node_t *n;
    int col = ps->tok.col;
    if (ps->tok.kind == TK_NOT) {
        next(ps);
        n = call(ps, FN_NOT, "!_", col, unary(ps), NULL);
    } else if (ps->tok.kind == TK_MINUS) {
        next(ps);
        /* a negative int literal is one constant (so that INT64_MIN is valid) */
        if (ps->tok.kind == TK_INT) {
            ks_cel_lexer_t save = ps->lx;
            ks_cel_token_t t = ps->tok;
            next(ps);
            int member_follows = ps->tok.kind == TK_DOT || ps->tok.kind == TK_LBRACKET;
            if (!member_follows && !ps->failed) {
                n = node(ps, ND_CONST, col);
                if (n) {
                    n->cval.kind = KV_INT;
                    n->cval.u.i = t.u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t.u;
                }
                ps->depth--;
                return n;
            }
            ps->failed = 0;
            ps->lx = save;
            ps->tok = t;
        }
        n = call(ps, FN_NEG, "-_", col, unary(ps), NULL);
    } else {
        n = member(ps);
    }
    ps->depth--;
    return ps->failed ? NULL : n;
}

static ks_cel_node_t *multiplication(parser_t *ps)
{
    ks_cel_node_t *n = unary(ps);
    while (n && (ps->tok.kind == TK_STAR || ps->tok.kind == TK_SLASH || ps->tok.kind == TK_PERCENT)) {
        ks_cel_tok_kind_t k = ps->tok.kind;
        int col = ps->tok.col;
        next(ps);
        n = call(ps, k == TK_STAR ? FN_MUL : k == TK_SLASH ? FN_DIV : FN_MOD,
                 k == TK_STAR ? "_*_" : k == TK_SLASH ? "_/_" : "_%_", col, n, unary(ps));
    }
    return ps->failed ? NULL : n;
}

static ks_cel_node_t *addition(parser_t *ps)
{
    ks_cel_node_t *n = multiplication(ps);
    while (n && (ps->tok.kind == TK_PLUS || ps->tok.kind == TK_MINUS)) {
        ks_cel_tok_kind_t k = ps->tok.kind;
        int col = ps->tok.col;
        next(ps);
        n = call(ps, k == TK_PLUS ? FN_ADD : FN_SUB, k == TK_PLUS ? "_+_" : "_-_", col, n,
                 multiplication(ps));
    }
    return ps->failed ? NULL : n;
}

static ks_cel_node_t *relation(parser_t *ps)
{
    ks_cel_node_t *n = addition(ps);
    for (;;) {
        if (!n)
            return NULL;
        ks_cel_fn_t fn;
        const char *name;
        switch (ps->tok.kind) {
        case TK_EQ: fn = FN_EQ; name = "_==_"; break;
        case TK_NE: fn = FN_NE; name = "_!=_"; break;
        case TK_LT: fn = FN_LT; name = "_<_"; break;
        case TK_LE: fn = FN_LE; name = "_<=_"; break;
        case TK_GT: fn = FN_GT; name = "_>_"; break;
        case TK_GE: fn = FN_GE; name = "_>=_"; break;
        case TK_IN: fn = FN_IN; name = "@in"; break;
        default: return n;
        }
        int col = ps->tok.col;
        next(ps);
        n = call(ps, fn, name, col, n, addition(ps));
        if (ps->failed)
            return NULL;
    }
}

/* Builds a balanced tree over terms[lo, hi) (cel-go balances && and ||
 * chains too, so long chains do not make deep trees). */
static ks_cel_node_t *balance(parser_t *ps, ks_cel_node_kind_t k, ks_cel_node_t **terms,
                              const int *cols, size_t lo, size_t hi)
{
    if (hi - lo == 1)
        return terms[lo];
    size_t mid = lo + (hi - lo) / 2;
    ks_cel_node_t *l = balance(ps, k, terms, cols, lo, mid);
    ks_cel_node_t *r = balance(ps, k, terms, cols, mid, hi);
    if (!l || !r)
        return NULL;
    ks_cel_node_t *x = node(ps, k, cols[mid]);
    if (!x)
        return NULL;
    x->args = ks_cel_arena_alloc(ps->a, 2 * sizeof *x->args);
    if (!x->args)
        return fail(ps, cols[mid], "out of memory");
    x->args[0] = l;
    x->args[1] = r;
    x->nargs = 2;
    return x;
}

static ks_cel_node_t *logical(parser_t *ps, int is_or)
{
    ks_cel_node_t *n = is_or ? logical(ps, 0) : relation(ps);
    if (!n || ps->tok.kind != (is_or ? TK_OR : TK_AND))
        return ps->failed ? NULL : n;
    size_t cap = 8, count = 0;
    ks_cel_node_t **terms = ks_cel_arena_alloc(ps->a, cap * sizeof *terms);
    int *cols = ks_cel_arena_alloc(ps->a, cap * sizeof *cols);
    if (!terms || !cols)
        return fail(ps, ps->tok.col, "out of memory");
    terms[count] = n;
    cols[count++] = 0;
    while (ps->tok.kind == (is_or ? TK_OR : TK_AND)) {
        int col = ps->tok.col;
        next(ps);
        ks_cel_node_t *r = is_or ? logical(ps, 0) : relation(ps);
        if (!r)
            return NULL;
        if (count == cap) {
            ks_cel_node_t **nt = ks_cel_arena_alloc(ps->a, 2 * cap * sizeof *nt);
            int *nc = ks_cel_arena_alloc(ps->a, 2 * cap * sizeof *nc);
            if (!nt || !nc)
                return fail(ps, col, "out of memory");
            memcpy(nt, terms, cap * sizeof *nt);
            memcpy(nc, cols, cap * sizeof *nc);
            terms = nt;
            cols = nc;
            cap *= 2;
        }
        terms[count] = r;
        cols[count++] = col; /* the operator before this term */
    }
    if (ps->failed)
        return NULL;
    return balance(ps, is_or ? ND_OR : ND_AND, terms, cols, 0, count);
}

static ks_cel_node_t *expr(parser_t *ps)
{
    if (++ps->depth > MAX_DEPTH)
        return fail(ps, ps->tok.col, "expression nested too deeply");
    ks_cel_node_t *c = logical(ps, 1);
    if (c && ps->tok.kind == TK_QUESTION) {
        int col = ps->tok.col;
        next(ps);
        ks_cel_node_t *a = logical(ps, 1);
        if (!a) {
            ps->depth--;
            return NULL;
        }
        if (ps->tok.kind != TK_COLON) {
            ps->depth--;
            return fail_tok(ps, "':'");
        }
        next(ps);
        ks_cel_node_t *b = expr(ps);
        if (!b) {
            ps->depth--;
            return NULL;
        }
        ks_cel_node_t *x = node(ps, ND_COND, col);
        if (x) {
            x->args = ks_cel_arena_alloc(ps->a, 3 * sizeof *x->args);
            if (!x->args)
                x = fail(ps, col, "out of memory");
            else {
                x->args[0] = c; x->args[1] = a; x->args[2] = b;
                x->nargs = 3;
            }
        }
        c = x;
    }
    ps->depth--;
    return ps->failed ? NULL : c;
}

ks_cel_node_t *ks_cel_parse(const char *src, ks_cel_arena_t *a, char *err, size_t errlen)
{
    parser_t ps = { .a = a, .err = err, .errlen = errlen };
    ps.lx.src = ps.lx.p = src;
    ps.lx.arena = a;
    ps.lx.err = err;
    ps.lx.errlen = errlen;
    next(&ps);
    if (ps.failed)
        return NULL;
    ks_cel_node_t *n = expr(&ps);
    if (n && ps.tok.kind != TK_EOF)
        return fail_tok(&ps, "an operator or end of input");
    return ps.failed ? NULL : n;
}
