/* The CEL checker: gives every node a static type as cel-go's checker
 * would for the DRA environment (`device` with driver, attributes as
 * map(string, map(string, dyn)), capacity as map(string, map(string,
 * Quantity)), allowMultipleAllocations), resolves functions against the
 * overload table, enforces homogeneous list and map literals, and compiles
 * literal regular expressions. Anything outside the subset is refused with
 * a message naming it. */
#include "cel_internal.h"

#include <stdio.h>
#include <string.h>

const ks_cel_type_t ks_cel_t_dyn = { KT_DYN, NULL, NULL },
    ks_cel_t_null = { KT_NULL, NULL, NULL }, ks_cel_t_bool = { KT_BOOL, NULL, NULL },
    ks_cel_t_int = { KT_INT, NULL, NULL }, ks_cel_t_uint = { KT_UINT, NULL, NULL },
    ks_cel_t_double = { KT_DOUBLE, NULL, NULL }, ks_cel_t_string = { KT_STRING, NULL, NULL },
    ks_cel_t_bytes = { KT_BYTES, NULL, NULL }, ks_cel_t_quantity = { KT_QUANTITY, NULL, NULL },
    ks_cel_t_semver = { KT_SEMVER, NULL, NULL }, ks_cel_t_device = { KT_DEVICE, NULL, NULL },
    ks_cel_t_list_dyn = { KT_LIST, NULL, &ks_cel_t_dyn },
    ks_cel_t_map_dyn = { KT_MAP, &ks_cel_t_dyn, &ks_cel_t_dyn };

/* The element type of an empty list or map literal: a free type parameter
 * that cel-go binds to whatever it meets, so it never breaks the
 * homogeneous literal rule. */
static const ks_cel_type_t t_free = { KT_DYN, NULL, NULL };

/* An attribute's value: upstream declares it `any`, which the checker
 * treats like dyn (named apart in messages). */
static const ks_cel_type_t t_any = { KT_DYN, NULL, NULL };
static const ks_cel_type_t t_attr_inner = { KT_MAP, &ks_cel_t_string, &t_any };
static const ks_cel_type_t t_attrs = { KT_MAP, &ks_cel_t_string, &t_attr_inner };
static const ks_cel_type_t t_cap_inner = { KT_MAP, &ks_cel_t_string, &ks_cel_t_quantity };
static const ks_cel_type_t t_caps = { KT_MAP, &ks_cel_t_string, &t_cap_inner };

const ks_cel_overload_t ks_cel_overloads[] = {
    { FN_ADD, "_+_", 0, "ii", 'i' }, { FN_ADD, "_+_", 0, "uu", 'u' },
    { FN_ADD, "_+_", 0, "dd", 'd' }, { FN_ADD, "_+_", 0, "ss", 's' },
    { FN_ADD, "_+_", 0, "bb", 'b' }, { FN_ADD, "_+_", 0, "ll", 'l' },
    { FN_SUB, "_-_", 0, "ii", 'i' }, { FN_SUB, "_-_", 0, "uu", 'u' },
    { FN_SUB, "_-_", 0, "dd", 'd' },
    { FN_MUL, "_*_", 0, "ii", 'i' }, { FN_MUL, "_*_", 0, "uu", 'u' },
    { FN_MUL, "_*_", 0, "dd", 'd' },
    { FN_DIV, "_/_", 0, "ii", 'i' }, { FN_DIV, "_/_", 0, "uu", 'u' },
    { FN_DIV, "_/_", 0, "dd", 'd' },
    { FN_MOD, "_%_", 0, "ii", 'i' }, { FN_MOD, "_%_", 0, "uu", 'u' },
    { FN_NEG, "-_", 0, "i", 'i' }, { FN_NEG, "-_", 0, "d", 'd' },
    { FN_NOT, "!_", 0, "B", 'B' },
#define ORDER(F, N) \
    { F, N, 0, "ii", 'B' }, { F, N, 0, "uu", 'B' }, { F, N, 0, "dd", 'B' }, \
    { F, N, 0, "iu", 'B' }, { F, N, 0, "id", 'B' }, { F, N, 0, "ui", 'B' }, \
    { F, N, 0, "ud", 'B' }, { F, N, 0, "di", 'B' }, { F, N, 0, "du", 'B' }, \
    { F, N, 0, "ss", 'B' }, { F, N, 0, "bb", 'B' }, { F, N, 0, "BB", 'B' }
    ORDER(FN_LT, "_<_"), ORDER(FN_LE, "_<=_"), ORDER(FN_GT, "_>_"), ORDER(FN_GE, "_>=_"),
#undef ORDER
    { FN_SIZE, "size", 0, "s", 'i' }, { FN_SIZE, "size", 0, "b", 'i' },
    { FN_SIZE, "size", 0, "l", 'i' }, { FN_SIZE, "size", 0, "m", 'i' },
    { FN_SIZE, "size", 1, "s", 'i' }, { FN_SIZE, "size", 1, "b", 'i' },
    { FN_SIZE, "size", 1, "l", 'i' }, { FN_SIZE, "size", 1, "m", 'i' },
    { FN_STARTS_WITH, "startsWith", 1, "ss", 'B' },
    { FN_ENDS_WITH, "endsWith", 1, "ss", 'B' },
    { FN_CONTAINS, "contains", 1, "ss", 'B' },
    { FN_MATCHES, "matches", 1, "ss", 'B' }, { FN_MATCHES, "matches", 0, "ss", 'B' },
    { FN_LOWER_ASCII, "lowerAscii", 1, "s", 's' },
    { FN_UPPER_ASCII, "upperAscii", 1, "s", 's' },
    { FN_INT, "int", 0, "i", 'i' }, { FN_INT, "int", 0, "u", 'i' },
    { FN_INT, "int", 0, "d", 'i' }, { FN_INT, "int", 0, "s", 'i' },
    { FN_UINT, "uint", 0, "i", 'u' }, { FN_UINT, "uint", 0, "u", 'u' },
    { FN_UINT, "uint", 0, "d", 'u' }, { FN_UINT, "uint", 0, "s", 'u' },
    { FN_DOUBLE, "double", 0, "i", 'd' }, { FN_DOUBLE, "double", 0, "u", 'd' },
    { FN_DOUBLE, "double", 0, "d", 'd' }, { FN_DOUBLE, "double", 0, "s", 'd' },
    { FN_STRING, "string", 0, "i", 's' }, { FN_STRING, "string", 0, "u", 's' },
    { FN_STRING, "string", 0, "s", 's' }, { FN_STRING, "string", 0, "B", 's' },
    { FN_STRING, "string", 0, "b", 's' }, { FN_STRING, "string", 0, "d", 's' },
    { FN_BOOL, "bool", 0, "B", 'B' }, { FN_BOOL, "bool", 0, "s", 'B' },
    { FN_DYN, "dyn", 0, "*", '*' },
    { FN_QUANTITY, "quantity", 0, "s", 'q' },
    { FN_IS_QUANTITY, "isQuantity", 0, "s", 'B' },
    { FN_SEMVER, "semver", 0, "s", 'v' }, { FN_SEMVER, "semver", 0, "sB", 'v' },
    { FN_IS_SEMVER, "isSemver", 0, "s", 'B' }, { FN_IS_SEMVER, "isSemver", 0, "sB", 'B' },
    { FN_COMPARE_TO, "compareTo", 1, "qq", 'i' }, { FN_COMPARE_TO, "compareTo", 1, "vv", 'i' },
    { FN_IS_GREATER_THAN, "isGreaterThan", 1, "qq", 'B' },
    { FN_IS_GREATER_THAN, "isGreaterThan", 1, "vv", 'B' },
    { FN_IS_LESS_THAN, "isLessThan", 1, "qq", 'B' },
    { FN_IS_LESS_THAN, "isLessThan", 1, "vv", 'B' },
    { FN_SIGN, "sign", 1, "q", 'i' },
    { FN_IS_INTEGER, "isInteger", 1, "q", 'B' },
    { FN_AS_INTEGER, "asInteger", 1, "q", 'i' },
    { FN_AS_APPROXIMATE_FLOAT, "asApproximateFloat", 1, "q", 'd' },
    { FN_Q_ADD, "add", 1, "qq", 'q' }, { FN_Q_ADD, "add", 1, "qi", 'q' },
    { FN_Q_SUB, "sub", 1, "qq", 'q' }, { FN_Q_SUB, "sub", 1, "qi", 'q' },
    { FN_MAJOR, "major", 1, "v", 'i' }, { FN_MINOR, "minor", 1, "v", 'i' },
    { FN_PATCH, "patch", 1, "v", 'i' },
    { FN_NONE, NULL, 0, NULL, 0 },
};

static const char supported_functions[] =
    "size, startsWith, endsWith, contains, matches, lowerAscii, upperAscii, "
    "int, uint, double, string, bool, dyn, quantity, isQuantity, semver, isSemver, "
    "compareTo, isGreaterThan, isLessThan, sign, isInteger, asInteger, "
    "asApproximateFloat, add, sub, major, minor, patch, has";

char ks_cel_kind_letter(ks_cel_kind_t k)
{
    switch (k) {
    case KT_INT: return 'i';
    case KT_UINT: return 'u';
    case KT_DOUBLE: return 'd';
    case KT_STRING: return 's';
    case KT_BYTES: return 'b';
    case KT_BOOL: return 'B';
    case KT_LIST: return 'l';
    case KT_MAP: return 'm';
    case KT_QUANTITY: return 'q';
    case KT_SEMVER: return 'v';
    case KT_NULL: return 'n';
    case KT_DEVICE: return 'D';
    default: return '*';
    }
}

void ks_cel_type_name(const ks_cel_type_t *t, char *buf, size_t n)
{
    char a[128], b[128];
    switch (t->kind) {
    case KT_DYN: snprintf(buf, n, "%s", t == &t_any ? "any" : "dyn"); break;
    case KT_NULL: snprintf(buf, n, "null_type"); break;
    case KT_BOOL: snprintf(buf, n, "bool"); break;
    case KT_INT: snprintf(buf, n, "int"); break;
    case KT_UINT: snprintf(buf, n, "uint"); break;
    case KT_DOUBLE: snprintf(buf, n, "double"); break;
    case KT_STRING: snprintf(buf, n, "string"); break;
    case KT_BYTES: snprintf(buf, n, "bytes"); break;
    case KT_QUANTITY: snprintf(buf, n, "kubernetes.Quantity"); break;
    case KT_SEMVER: snprintf(buf, n, "kubernetes.Semver"); break;
    case KT_DEVICE: snprintf(buf, n, "kubernetes.DRADevice"); break;
    case KT_LIST:
        ks_cel_type_name(t->v, a, sizeof a);
        /* a name longer than buf is cut (the return value looked at:
         * that is what GCC asks to be sure it is meant) */
        if (snprintf(buf, n, "list(%s)", a) < 0 && n > 0)
            buf[0] = '\0';
        break;
    case KT_MAP:
        ks_cel_type_name(t->k, a, sizeof a);
        ks_cel_type_name(t->v, b, sizeof b);
        if (snprintf(buf, n, "map(%s, %s)", a, b) < 0 && n > 0)
            buf[0] = '\0';
        break;
    default: snprintf(buf, n, "*error*"); break;
    }
}

/* cel.bind variables in scope, innermost first */
typedef struct scope {
    const ks_cel_node_t *bind; /* ND_BIND or ND_COMPREHENSION */
    const ks_cel_type_t *type;
    const struct scope *outer;
} scope_t;

typedef struct checker {
    ks_cel_arena_t *a;
    char *err; size_t errlen;
    const scope_t *scope;
    int depth;
} checker_t;

/* cel-go's parser refuses deeper trees; the limit also bounds the
 * checker's and the evaluator's recursion (a chain like 1 + 1 + ... is a
 * left-deep tree the parser builds without recursing). */
#define MAX_TREE_DEPTH 250

/* The refusal functions stay out of line: their buffers must not grow the
 * frames of the recursive checker (250 deep, also under AddressSanitizer). */
__attribute__((noinline))
static int refuse(checker_t *c, int col, const char *fmt, const char *x, const char *y)
{
    char msg[4096];
    snprintf(msg, sizeof msg, fmt, x, y);
    ks_cel_errf(c->err, c->errlen, col, "%s", msg);
    return -1;
}

/* refuse() with up to three type names: fmt takes one %s, the names
 * joined by ", " (t2 and t3 may be NULL). */
__attribute__((noinline))
static int refuse_types(checker_t *c, int col, const char *fmt, const ks_cel_type_t *t1,
                        const ks_cel_type_t *t2, const ks_cel_type_t *t3)
{
    char a[256], b[256], d[256], all[800];
    ks_cel_type_name(t1, a, sizeof a);
    b[0] = d[0] = 0;
    if (t2)
        ks_cel_type_name(t2, b, sizeof b);
    if (t3)
        ks_cel_type_name(t3, d, sizeof d);
    snprintf(all, sizeof all, "%s%s%s%s%s", a, t2 ? ", " : "", b, t3 ? ", " : "", d);
    return refuse(c, col, fmt, all, "");
}

static int is_dyn(const ks_cel_type_t *t) { return t->kind == KT_DYN; }

/* The common type of a and b (dyn absorbs), NULL when they cannot unify. */
static const ks_cel_type_t *unify(checker_t *c, const ks_cel_type_t *a, const ks_cel_type_t *b)
{
    if (is_dyn(a))
        return b;
    if (is_dyn(b))
        return a;
    if (a->kind != b->kind)
        return NULL;
    if (a->kind == KT_LIST || a->kind == KT_MAP) {
        const ks_cel_type_t *k = NULL, *v = unify(c, a->v, b->v);
        if (!v)
            return NULL;
        if (a->kind == KT_MAP && !(k = unify(c, a->k, b->k)))
            return NULL;
        if (k == a->k && v == a->v)
            return a;
        ks_cel_type_t *t = ks_cel_arena_alloc(c->a, sizeof *t);
        if (!t)
            return &ks_cel_t_dyn;
        t->kind = a->kind;
        t->k = k;
        t->v = v;
        return t;
    }
    return a;
}

/* Whether two static types are exactly the same (the homogeneous literal
 * rule compares types without dyn absorbing). */
static int same_type(const ks_cel_type_t *a, const ks_cel_type_t *b)
{
    if (a == &t_free || b == &t_free)
        return 1;
    if (a->kind != b->kind)
        return 0;
    if (a->kind == KT_LIST)
        return same_type(a->v, b->v);
    if (a->kind == KT_MAP)
        return same_type(a->k, b->k) && same_type(a->v, b->v);
    return 1;
}

static const ks_cel_type_t *type_of_letter(char l)
{
    switch (l) {
    case 'i': return &ks_cel_t_int;
    case 'u': return &ks_cel_t_uint;
    case 'd': return &ks_cel_t_double;
    case 's': return &ks_cel_t_string;
    case 'b': return &ks_cel_t_bytes;
    case 'B': return &ks_cel_t_bool;
    case 'q': return &ks_cel_t_quantity;
    case 'v': return &ks_cel_t_semver;
    case 'l': return &ks_cel_t_list_dyn;
    case 'm': return &ks_cel_t_map_dyn;
    default: return &ks_cel_t_dyn;
    }
}

static int check_node(checker_t *c, ks_cel_node_t *n);
static void arg_types(ks_cel_node_t *n, char *buf, size_t len);

__attribute__((noinline))
static int refuse_value(checker_t *c, int col, const ks_cel_value_t *v)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%.*s", (int)v->u.s.n, v->u.s.p);
    return refuse(c, col, "%s%s", msg, "");
}

/* Compiles matches()' literal pattern into the program. */
__attribute__((noinline))
static int compile_literal_regex(checker_t *c, ks_cel_node_t *n, const ks_cel_node_t *pat)
{
    char rerr[256];
    n->re = ks_cel_regex_compile(c->a, pat->cval.u.s.p, pat->cval.u.s.n, rerr, sizeof rerr);
    if (!n->re)
        return refuse(c, pat->col, "invalid matches argument: %s%s", rerr, "");
    return 0;
}

__attribute__((noinline))
static int refuse_mismatch(checker_t *c, int col, const ks_cel_type_t *want, const ks_cel_type_t *got)
{
    char a[256], b[256];
    ks_cel_type_name(want, a, sizeof a);
    ks_cel_type_name(got, b, sizeof b);
    return refuse(c, col, "expected type '%s' but found '%s'", a, b);
}

__attribute__((noinline))
static int refuse_overload(checker_t *c, ks_cel_node_t *n)
{
    char types[512];
    arg_types(n, types, sizeof types);
    return refuse(c, n->col, "found no matching overload for '%s' applied to '(%s)'", n->name, types);
}

static void arg_types(ks_cel_node_t *n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n->nargs + (n->target ? 1 : 0) && k + 2 < len; i++) {
        const ks_cel_node_t *a = n->target ? (i == 0 ? n->target : n->args[i - 1]) : n->args[i];
        char t[160];
        ks_cel_type_name(a->type, t, sizeof t);
        int w = snprintf(buf + k, len - k, "%s%s", i ? ", " : "", t);
        if (w < 0)
            break;
        k += (size_t)w;
        if (k >= len)
            k = len - 1;
    }
}

static int check_call(checker_t *c, ks_cel_node_t *n)
{
    if (n->target && check_node(c, n->target) < 0)
        return -1;
    for (size_t i = 0; i < n->nargs; i++)
        if (check_node(c, n->args[i]) < 0)
            return -1;
    int member = n->target != NULL;
    size_t argc = n->nargs + (member ? 1 : 0);
    const ks_cel_node_t *argv[3];
    if (argc > 3)
        argc = 4; /* nothing takes more than three */
    for (size_t i = 0; i < argc && i < 3; i++)
        argv[i] = member ? (i == 0 ? n->target : n->args[i - 1]) : n->args[i];

    /* == and != take any two types that unify; `in` an element and a list or map */
    if (n->fn == FN_EQ || n->fn == FN_NE) {
        if (!unify(c, argv[0]->type, argv[1]->type))
            goto no_overload;
        n->type = &ks_cel_t_bool;
        return 0;
    }
    if (n->fn == FN_IN) {
        const ks_cel_type_t *e = argv[0]->type, *coll = argv[1]->type;
        if (argv[1]->kind == ND_CONST && argv[1]->cval.kind == KV_LIST) {
            int scalars = 1;
            for (size_t i = 0; i < argv[1]->cval.u.l.n; i++) {
                ks_cel_vkind_t k = argv[1]->cval.u.l.items[i].kind;
                scalars &= k == KV_NULL || k == KV_BOOL || k == KV_INT || k == KV_UINT ||
                           k == KV_DOUBLE || k == KV_STRING || k == KV_BYTES;
            }
            n->set_membership = scalars;
        }
        if (coll->kind == KT_LIST) {
            if (!unify(c, e, coll->v))
                goto no_overload;
        } else if (coll->kind == KT_MAP) {
            if (!unify(c, e, coll->k))
                goto no_overload;
        } else if (!is_dyn(coll)) {
            goto no_overload;
        }
        n->type = &ks_cel_t_bool;
        return 0;
    }

    int named = 0, matched = 0;
    char result = 0;
    for (const ks_cel_overload_t *o = ks_cel_overloads; o->name; o++) {
        if (strcmp(o->name, n->name))
            continue;
        named = 1;
        if (o->member != member || strlen(o->params) != argc)
            continue;
        int ok = 1;
        for (size_t i = 0; i < argc && ok; i++) {
            char want = o->params[i], have = ks_cel_kind_letter(argv[i]->type->kind);
            ok = want == '*' || have == '*' || want == have;
        }
        if (!ok)
            continue;
        if (!matched) {
            n->fn = o->fn;
            result = o->result;
        } else if (result != o->result) {
            result = '*';
        }
        matched++;
        /* a free type parameter binds to the first overload that fits */
        int has_free = 0;
        for (size_t i = 0; i < argc; i++)
            has_free |= argv[i]->type == &t_free;
        if (has_free)
            break;
    }
    if (!named)
        return refuse(c, n->col, "unsupported function '%s' (ksched supports: %s)",
                      n->name, supported_functions);
    if (!matched)
        goto no_overload;
    n->type = type_of_letter(result);
    for (int i = 0; ks_cel_overloads[i].name; i++)
        if (ks_cel_overloads[i].fn == n->fn) {
            n->ov_first = i;
            break;
        }
    /* quantity('...') and semver('...') of a literal are parsed once; a
     * literal that does not parse stays an error at evaluation, as upstream */
    if ((n->fn == FN_QUANTITY || n->fn == FN_SEMVER) && !member) {
        int all_const = 1;
        for (size_t i = 0; i < argc; i++)
            all_const &= argv[i]->kind == ND_CONST;
        if (all_const) {
            ks_cel_value_t v = ks_cel_fold(n, c->a);
            if (v.kind != KV_ERROR) {
                n->cval = v;
                n->folded = 1;
            }
        }
    }
    /* conversions of a constant are computed once (cel-go refuses the
     * program when that fails) */
    if ((n->fn == FN_INT || n->fn == FN_UINT || n->fn == FN_DOUBLE || n->fn == FN_STRING ||
         n->fn == FN_BOOL || n->fn == FN_DYN) && argc == 1 && !member && argv[0]->kind == ND_CONST) {
        ks_cel_value_t v = ks_cel_fold(n, c->a);
        if (v.kind == KV_ERROR)
            return refuse_value(c, n->col, &v);
        n->kind = ND_CONST;
        n->cval = v;
        return 0;
    }
    if (n->fn == FN_ADD && result == 'l') {
        const ks_cel_type_t *a = argv[0]->type, *b = argv[1]->type;
        if (a->kind == KT_LIST && b->kind == KT_LIST) {
            n->type = unify(c, a, b);
            if (!n->type)
                goto no_overload;
        } else {
            n->type = a->kind == KT_LIST ? a : b->kind == KT_LIST ? b : &ks_cel_t_list_dyn;
        }
    }
    if (n->fn == FN_MATCHES) {
        const ks_cel_node_t *pat = argv[1];
        if (pat->kind == ND_CONST && pat->cval.kind == KV_STRING && compile_literal_regex(c, n, pat) < 0)
            return -1;
    }
    return 0;

no_overload:
    return refuse_overload(c, n);
}

static int check_node_in(checker_t *c, ks_cel_node_t *n);

static int check_node(checker_t *c, ks_cel_node_t *n)
{
    if (c->depth >= MAX_TREE_DEPTH)
        return refuse(c, n->col, "expression nested too deeply (max recursion depth %s)%s", "250", "");
    c->depth++;
    int rc = check_node_in(c, n);
    c->depth--;
    return rc;
}

/* range.all(x, p), exists, exists_one, filter (p a bool), map(x, f) and
 * map(x, p, f): x ranges over a list's elements or a map's keys. */
static int check_comprehension(checker_t *c, ks_cel_node_t *n)
{
    if (check_node(c, n->target) < 0)
        return -1;
    const ks_cel_type_t *r = n->target->type, *elem;
    if (r->kind == KT_LIST)
        elem = r->v;
    else if (r->kind == KT_MAP)
        elem = r->k;
    else if (is_dyn(r))
        elem = &ks_cel_t_dyn;
    else
        return refuse_types(c, n->target->col, "expression of type '%s' cannot be range of a "
                            "comprehension (must be list, map, or dynamic)%s", r, NULL, NULL);
    scope_t s = { n, elem, c->scope };
    c->scope = &s;
    int rc = 0;
    for (size_t i = 0; i < n->nargs && rc == 0; i++)
        rc = check_node(c, n->args[i]);
    c->scope = s.outer;
    if (rc < 0)
        return -1;
    /* the predicate (every argument but map's transform) must be a bool */
    size_t preds = n->macro == MC_MAP ? n->nargs - 1 : n->nargs;
    for (size_t i = 0; i < preds; i++) {
        const ks_cel_type_t *t = n->args[i]->type;
        if (!is_dyn(t) && t->kind != KT_BOOL)
            return refuse_types(c, n->args[i]->col, "a comprehension's condition must be a bool, "
                                "not %s%s", t, NULL, NULL);
    }
    if (n->macro == MC_MAP || n->macro == MC_FILTER) {
        ks_cel_type_t *t = ks_cel_arena_alloc(c->a, sizeof *t);
        if (!t)
            return refuse(c, n->col, "out of memory%s%s", "", "");
        t->kind = KT_LIST;
        t->v = n->macro == MC_FILTER ? elem : n->args[n->nargs - 1]->type;
        n->type = t;
    } else {
        n->type = &ks_cel_t_bool;
    }
    return 0;
}

static int check_node_in(checker_t *c, ks_cel_node_t *n)
{
    switch (n->kind) {
    case ND_CONST:
        switch (n->cval.kind) {
        case KV_NULL: n->type = &ks_cel_t_null; break;
        case KV_BOOL: n->type = &ks_cel_t_bool; break;
        case KV_INT: n->type = &ks_cel_t_int; break;
        case KV_UINT: n->type = &ks_cel_t_uint; break;
        case KV_DOUBLE: n->type = &ks_cel_t_double; break;
        case KV_STRING: n->type = &ks_cel_t_string; break;
        case KV_BYTES: n->type = &ks_cel_t_bytes; break;
        default: n->type = &ks_cel_t_dyn; break;
        }
        return 0;
    case ND_IDENT:
        for (const scope_t *s = c->scope; s; s = s->outer)
            if (!strcmp(s->bind->name, n->name)) {
                n->bind = s->bind;
                n->type = s->type;
                return 0;
            }
        if (strcmp(n->name, "device"))
            return refuse(c, n->col, "undeclared reference to '%s'%s", n->name, "");
        n->type = &ks_cel_t_device;
        return 0;
    case ND_SELECT:
    case ND_HAS: {
        ks_cel_node_t *sel = n->kind == ND_HAS ? n->target : n;
        if (n->kind == ND_HAS && check_node(c, sel) < 0)
            return -1;
        if (n->kind == ND_SELECT && check_node(c, sel->target) < 0)
            return -1;
        if (n->kind == ND_HAS) {
            n->type = &ks_cel_t_bool;
            return 0;
        }
        const ks_cel_type_t *t = sel->target->type;
        if (t->kind == KT_DEVICE) {
            if (!strcmp(n->name, "driver"))
                n->type = &ks_cel_t_string;
            else if (!strcmp(n->name, "attributes"))
                n->type = &t_attrs;
            else if (!strcmp(n->name, "capacity"))
                n->type = &t_caps;
            else if (!strcmp(n->name, "allowMultipleAllocations"))
                n->type = &ks_cel_t_bool;
            else
                return refuse(c, n->col, "undefined field '%s'%s", n->name, "");
            return 0;
        }
        if (t->kind == KT_MAP) {
            if (!is_dyn(t->k) && t->k->kind != KT_STRING)
                goto no_select;
            n->type = t->v;
            return 0;
        }
        if (is_dyn(t)) {
            n->type = &ks_cel_t_dyn;
            return 0;
        }
    no_select:
        return refuse_types(c, n->col, "type '%s' does not support field selection%s", t, NULL, NULL);
    }
    case ND_INDEX: {
        if (check_node(c, n->target) < 0 || check_node(c, n->args[0]) < 0)
            return -1;
        const ks_cel_type_t *t = n->target->type, *k = n->args[0]->type;
        if (t->kind == KT_LIST) {
            if (!is_dyn(k) && k->kind != KT_INT)
                goto bad_index;
            n->type = t->v;
        } else if (t->kind == KT_MAP) {
            if (!unify(c, t->k, k))
                goto bad_index;
            n->type = t->v;
        } else if (is_dyn(t)) {
            n->type = &ks_cel_t_dyn;
        } else {
            goto bad_index;
        }
        return 0;
    bad_index:
        return refuse_types(c, n->col, "found no matching overload for '_[_]' applied to '(%s)'%s", t, k, NULL);
    }
    case ND_CALL:
        return check_call(c, n);
    case ND_BIND: {
        if (check_node(c, n->args[0]) < 0)
            return -1;
        scope_t s = { n, n->args[0]->type, c->scope };
        c->scope = &s;
        int rc = check_node(c, n->args[1]);
        c->scope = s.outer;
        if (rc < 0)
            return -1;
        n->type = n->args[1]->type;
        return 0;
    }
    case ND_COMPREHENSION:
        return check_comprehension(c, n);
    case ND_LIST:
    case ND_MAP: {
        const ks_cel_type_t *kt = NULL, *vt = NULL;
        int is_map = n->kind == ND_MAP;
        for (size_t i = 0; i < n->nargs; i++) {
            if (check_node(c, n->args[i]) < 0)
                return -1;
            const ks_cel_type_t *t = n->args[i]->type, **slot = (is_map && i % 2 == 0) ? &kt : &vt;
            if (is_map && i % 2 == 0 && !is_dyn(t) && t->kind != KT_STRING && t->kind != KT_INT &&
                t->kind != KT_UINT && t->kind != KT_BOOL) {
                return refuse_types(c, n->args[i]->col, "unsupported map key type '%s'%s", t, NULL, NULL);
            }
            if (!*slot) {
                *slot = t;
            } else if (!same_type(*slot, t)) {
                return refuse_mismatch(c, n->args[i]->col, *slot, t);
            }
        }
        ks_cel_type_t *t = ks_cel_arena_alloc(c->a, sizeof *t);
        if (!t)
            return refuse(c, n->col, "out of memory%s%s", "", "");
        t->kind = is_map ? KT_MAP : KT_LIST;
        t->k = is_map ? (kt ? kt : &t_free) : NULL;
        t->v = vt ? vt : &t_free;
        n->type = t;
        /* a literal of constants is built once, as cel-go's planner does
         * (it then costs nothing at evaluation) */
        int all_const = 1;
        for (size_t i = 0; i < n->nargs; i++)
            all_const &= n->args[i]->kind == ND_CONST;
        if (all_const) {
            n->cval = ks_cel_fold(n, c->a);
            n->kind = ND_CONST;
        }
        return 0;
    }
    case ND_AND:
    case ND_OR:
        for (int i = 0; i < 2; i++) {
            if (check_node(c, n->args[i]) < 0)
                return -1;
            const ks_cel_type_t *t = n->args[i]->type;
            if (!is_dyn(t) && t->kind != KT_BOOL) {
                return refuse_types(c, n->col, n->kind == ND_AND
                                    ? "found no matching overload for '_&&_' applied to '(%s)'%s"
                                    : "found no matching overload for '_||_' applied to '(%s)'%s",
                                    n->args[0]->type,
                                    n->args[1]->type ? n->args[1]->type : &ks_cel_t_dyn, NULL);
            }
        }
        n->type = &ks_cel_t_bool;
        return 0;
    case ND_COND: {
        for (int i = 0; i < 3; i++)
            if (check_node(c, n->args[i]) < 0)
                return -1;
        const ks_cel_type_t *t = n->args[0]->type;
        const ks_cel_type_t *r = unify(c, n->args[1]->type, n->args[2]->type);
        if ((!is_dyn(t) && t->kind != KT_BOOL) || !r) {
            return refuse_types(c, n->col, "found no matching overload for '_?_:_' applied to '(%s)'%s",
                                t, n->args[1]->type, n->args[2]->type);
        }
        /* one branch dyn: cel-go's result is the other branch's type only
         * when both are the same; keep dyn then */
        if (n->args[1]->type == &t_free || n->args[2]->type == &t_free)
            n->type = n->args[1]->type == &t_free ? n->args[2]->type : n->args[1]->type;
        else if (n->args[1]->type == &t_any || n->args[2]->type == &t_any)
            n->type = &t_any;
        else
            n->type = (is_dyn(n->args[1]->type) || is_dyn(n->args[2]->type)) ? &ks_cel_t_dyn : r;
        return 0;
    }
    }
    return refuse(c, n->col, "internal error: unknown node%s%s", "", "");
}

int ks_cel_check(ks_cel_node_t *root, ks_cel_arena_t *a, char *err, size_t errlen)
{
    checker_t c = { .a = a, .err = err, .errlen = errlen };
    if (check_node(&c, root) < 0)
        return -1;
    if (root->type->kind != KT_BOOL && root->type->kind != KT_DYN) {
        char tn[256];
        ks_cel_type_name(root->type, tn, sizeof tn);
        ks_cel_errf(err, errlen, 0, "must evaluate to bool or the unknown type, not %s", tn);
        return -1;
    }
    return 0;
}
