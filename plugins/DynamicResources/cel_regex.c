/* An RE2-subset regular expression engine for CEL's matches(): literals,
 * `.`, classes (ranges, negation, \d \w \s and their negations, POSIX
 * [:name:]), groups (capturing, (?:...), (?P<name>...)), alternation,
 * greedy and lazy * + ? {n} {n,} {n,m} (m <= 1000), anchors ^ $ \A \z,
 * \b \B and the flags i (ASCII case folding), m, s and U. Matching runs the
 * compiled program as a Pike VM over code points: linear in the text, no
 * backtracking. Backreferences, lookaround, \p classes and \Q..\E are
 * refused with RE2's wording. */
#include "cel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INST 20000

enum { I_CHAR, I_ANY, I_CLASS, I_SPLIT, I_JMP, I_MATCH, I_ASSERT };
enum { A_BOL, A_EOL, A_BOT, A_EOT, A_WORDB, A_NWORDB };

typedef struct range { uint32_t lo, hi; } range_t;

typedef struct inst {
    int op;
    uint32_t c;             /* I_CHAR; I_ASSERT kind */
    int fold;               /* I_CHAR, I_CLASS: ASCII case-insensitive */
    int nl;                 /* I_ANY: matches \n too */
    const range_t *ranges; int nranges; int neg; /* I_CLASS */
    int x, y;               /* I_SPLIT (x preferred), I_JMP */
} inst_t;

struct ks_cel_regex {
    inst_t *prog;
    int n;
};

/* ---- syntax tree ---- */
enum { R_EMPTY, R_CHAR, R_ANY, R_CLASS, R_CAT, R_ALT, R_REP, R_ASSERT };
typedef struct rnode {
    int kind;
    uint32_t c;
    int fold, nl;
    const range_t *ranges; int nranges, neg;
    struct rnode *a, *b;
    int min, max; /* R_REP; max -1: unbounded */
    int greedy;
} rnode_t;

typedef struct rparser {
    const char *p, *end;
    ks_cel_arena_t *arena;
    char *err; size_t errlen;
    int failed;
    int fi, fm, fs, fU; /* flags */
    int depth;
} rparser_t;

static rnode_t *rfail(rparser_t *rp, const char *fmt, const char *arg, int len)
{
    if (!rp->failed && rp->err && rp->errlen)
        snprintf(rp->err, rp->errlen, fmt, len, arg);
    rp->failed = 1;
    return NULL;
}

static rnode_t *rnew(rparser_t *rp, int kind)
{
    rnode_t *n = ks_cel_arena_alloc(rp->arena, sizeof *n);
    if (!n)
        return rfail(rp, "out of memory%.*s", "", 0);
    n->kind = kind;
    return n;
}

/* decodes one UTF-8 code point; invalid bytes map to U+FFFD */
static uint32_t utf8_next(const char **pp, const char *end)
{
    const unsigned char *p = (const unsigned char *)*pp;
    uint32_t c = *p;
    int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (const char *)p + n > end) {
        *pp += 1;
        return 0xFFFD;
    }
    if (n == 1) {
        *pp += 1;
        return c;
    }
    c &= 0x3F >> (n - 1);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *pp += 1;
            return 0xFFFD;
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *pp += n;
    return c;
}

static const range_t r_digit[] = { { '0', '9' } };
static const range_t r_word[] = { { '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' } };
static const range_t r_space[] = { { '\t', '\n' }, { '\f', '\r' }, { ' ', ' ' } };
static const range_t r_alpha[] = { { 'A', 'Z' }, { 'a', 'z' } };
static const range_t r_alnum[] = { { '0', '9' }, { 'A', 'Z' }, { 'a', 'z' } };
static const range_t r_lower[] = { { 'a', 'z' } };
static const range_t r_upper[] = { { 'A', 'Z' } };
static const range_t r_xdigit[] = { { '0', '9' }, { 'A', 'F' }, { 'a', 'f' } };
static const range_t r_punct[] = { { '!', '/' }, { ':', '@' }, { '[', '`' }, { '{', '~' } };
static const range_t r_pspace[] = { { '\t', '\r' }, { ' ', ' ' } };
static const range_t r_blank[] = { { '\t', '\t' }, { ' ', ' ' } };
static const range_t r_cntrl[] = { { 0, 0x1F }, { 0x7F, 0x7F } };
static const range_t r_print[] = { { ' ', '~' } };
static const range_t r_graph[] = { { '!', '~' } };
static const range_t r_ascii[] = { { 0, 0x7F } };

#define RS(a) a, (int)(sizeof a / sizeof a[0])

/* A class being built: up to a fixed number of ranges. */
typedef struct cls { range_t r[256]; int n; } cls_t;

static int cls_add(rparser_t *rp, cls_t *c, uint32_t lo, uint32_t hi)
{
    if (c->n >= 256) {
        rfail(rp, "character class too large%.*s", "", 0);
        return -1;
    }
    c->r[c->n].lo = lo;
    c->r[c->n].hi = hi;
    c->n++;
    return 0;
}

static int cls_add_set(rparser_t *rp, cls_t *c, const range_t *r, int n, int neg)
{
    if (!neg) {
        for (int i = 0; i < n; i++)
            if (cls_add(rp, c, r[i].lo, r[i].hi) < 0)
                return -1;
        return 0;
    }
    uint32_t next = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].lo > next && cls_add(rp, c, next, r[i].lo - 1) < 0)
            return -1;
        next = r[i].hi + 1;
    }
    return cls_add(rp, c, next, 0x10FFFF);
}

/* Parses an escape after a backslash; set and nset for class escapes, else cp.
 * 1: a class, 0: a code point, 2: an assertion (*cp its kind), -1: error. */
static int parse_escape(rparser_t *rp, uint32_t *cp, const range_t **set, int *nset, int *neg, int in_class)
{
    if (rp->p >= rp->end) {
        rfail(rp, "trailing backslash at end of expression%.*s", "", 0);
        return -1;
    }
    const char *at = rp->p - 1;
    char c = *rp->p++;
    *neg = 0;
    switch (c) {
    case 'd': case 'D': *set = r_digit; *nset = 1; *neg = c == 'D'; return 1;
    case 'w': case 'W': *set = r_word; *nset = 4; *neg = c == 'W'; return 1;
    case 's': case 'S': *set = r_space; *nset = 3; *neg = c == 'S'; return 1;
    case 'n': *cp = '\n'; return 0;
    case 't': *cp = '\t'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    case 'a': *cp = 7; return 0;
    case 'x': {
        uint32_t v = 0;
        int digits = 0;
        if (rp->p < rp->end && *rp->p == '{') {
            rp->p++;
            while (rp->p < rp->end && *rp->p != '}') {
                char h = *rp->p++;
                int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
                if (d < 0 || ++digits > 8)
                    goto bad;
                v = v * 16 + (uint32_t)d;
            }
            if (rp->p >= rp->end || digits == 0)
                goto bad;
            rp->p++;
        } else {
            for (int i = 0; i < 2; i++) {
                if (rp->p >= rp->end)
                    goto bad;
                char h = *rp->p++;
                int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
                if (d < 0)
                    goto bad;
                v = v * 16 + (uint32_t)d;
            }
        }
        if (v > 0x10FFFF)
            goto bad;
        *cp = v;
        return 0;
    }
    case 'A': case 'z': case 'b': case 'B':
        if (in_class)
            goto bad;
        *cp = c == 'A' ? A_BOT : c == 'z' ? A_EOT : c == 'b' ? A_WORDB : A_NWORDB;
        return 2;
    case 'p': case 'P':
        rfail(rp, "unsupported Unicode class in ksched's regular expressions: `%.*s`", at, 2);
        return -1;
    case 'Q':
        rfail(rp, "unsupported \\Q...\\E quoting in ksched's regular expressions%.*s", "", 0);
        return -1;
    default:
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (unsigned char)c >= 0x80)
            goto bad;
        *cp = (unsigned char)c; /* escaped punctuation */
        return 0;
    }
bad:
    rfail(rp, "invalid escape sequence: `%.*s`", at, (int)(rp->p - at));
    return -1;
}

static rnode_t *parse_class(rparser_t *rp)
{
    const char *start = rp->p - 1;
    cls_t *c = ks_cel_arena_alloc(rp->arena, sizeof *c);
    if (!c)
        return rfail(rp, "out of memory%.*s", "", 0);
    int neg = 0, first = 1;
    if (rp->p < rp->end && *rp->p == '^') {
        neg = 1;
        rp->p++;
    }
    for (;;) {
        if (rp->p >= rp->end)
            return rfail(rp, "missing closing ]: `%.*s`", start, (int)(rp->end - start));
        if (*rp->p == ']' && !first) {
            rp->p++;
            break;
        }
        first = 0;
        if (rp->p + 1 < rp->end && rp->p[0] == '[' && rp->p[1] == ':') {
            static const struct { const char *n; const range_t *r; int k; } posix[] = {
                { "alnum", RS(r_alnum) }, { "alpha", RS(r_alpha) }, { "digit", RS(r_digit) },
                { "lower", RS(r_lower) }, { "upper", RS(r_upper) }, { "space", RS(r_pspace) },
                { "xdigit", RS(r_xdigit) }, { "word", RS(r_word) }, { "punct", RS(r_punct) },
                { "blank", RS(r_blank) }, { "cntrl", RS(r_cntrl) }, { "print", RS(r_print) },
                { "graph", RS(r_graph) }, { "ascii", RS(r_ascii) },
            };
            const char *q = rp->p + 2;
            int pneg = 0;
            if (q < rp->end && *q == '^') {
                pneg = 1;
                q++;
            }
            const char *e = q;
            while (e + 1 < rp->end && !(e[0] == ':' && e[1] == ']'))
                e++;
            if (e + 1 >= rp->end)
                return rfail(rp, "missing closing ]: `%.*s`", start, (int)(rp->end - start));
            size_t k;
            for (k = 0; k < sizeof posix / sizeof posix[0]; k++)
                if (strlen(posix[k].n) == (size_t)(e - q) && !memcmp(posix[k].n, q, (size_t)(e - q)))
                    break;
            if (k == sizeof posix / sizeof posix[0])
                return rfail(rp, "invalid character class range: `%.*s`", rp->p, (int)(e + 2 - rp->p));
            if (cls_add_set(rp, c, posix[k].r, posix[k].k, pneg) < 0)
                return NULL;
            rp->p = e + 2;
            continue;
        }
        uint32_t lo;
        const char *at = rp->p;
        if (*rp->p == '\\') {
            rp->p++;
            const range_t *set;
            int nset, sneg;
            int r = parse_escape(rp, &lo, &set, &nset, &sneg, 1);
            if (r < 0)
                return NULL;
            if (r == 1) {
                if (cls_add_set(rp, c, set, nset, sneg) < 0)
                    return NULL;
                continue;
            }
        } else {
            lo = utf8_next(&rp->p, rp->end);
        }
        uint32_t hi = lo;
        if (rp->p + 1 < rp->end && rp->p[0] == '-' && rp->p[1] != ']') {
            rp->p++;
            if (*rp->p == '\\') {
                rp->p++;
                const range_t *set;
                int nset, sneg;
                int r = parse_escape(rp, &hi, &set, &nset, &sneg, 1);
                if (r < 0)
                    return NULL;
                if (r == 1)
                    return rfail(rp, "invalid character class range: `%.*s`", at, (int)(rp->p - at));
            } else {
                hi = utf8_next(&rp->p, rp->end);
            }
            if (hi < lo)
                return rfail(rp, "invalid character class range: `%.*s`", at, (int)(rp->p - at));
        }
        if (cls_add(rp, c, lo, hi) < 0)
            return NULL;
    }
    if (rp->fi)
        for (int i = 0; i < c->n; i++)
            if (c->r[i].hi >= 0x80 && !(c->r[i].lo == 0 && c->r[i].hi == 0x10FFFF))
                return rfail(rp, "case-insensitive matching of non-ASCII characters is not "
                             "supported by ksched: `%.*s`", start, (int)(rp->p - start));
    rnode_t *n = rnew(rp, R_CLASS);
    if (!n)
        return NULL;
    n->ranges = c->r;
    n->nranges = c->n;
    n->neg = neg;
    n->fold = rp->fi;
    return n;
}

static rnode_t *parse_alt(rparser_t *rp);

static rnode_t *parse_atom(rparser_t *rp)
{
    char c = *rp->p;
    const char *at = rp->p;
    rnode_t *n;
    switch (c) {
    case '(': {
        rp->p++;
        int sfi = rp->fi, sfm = rp->fm, sfs = rp->fs, sfU = rp->fU;
        if (rp->p < rp->end && *rp->p == '?') {
            rp->p++;
            if (rp->p < rp->end && (*rp->p == '=' || *rp->p == '!' || *rp->p == '<' || *rp->p == '>')) {
                if (*rp->p == '<' && rp->p + 1 < rp->end && rp->p[1] != '=' && rp->p[1] != '!')
                    goto named;
                return rfail(rp, "invalid or unsupported Perl syntax: `%.*s`", at, (int)(rp->p + 1 - at));
            }
            if (rp->p < rp->end && *rp->p == 'P') {
                rp->p++;
                if (rp->p >= rp->end || *rp->p != '<')
                    return rfail(rp, "invalid named capture: `%.*s`", at, (int)(rp->p - at));
            named:
                while (rp->p < rp->end && *rp->p != '>')
                    rp->p++;
                if (rp->p >= rp->end)
                    return rfail(rp, "invalid named capture: `%.*s`", at, (int)(rp->p - at));
                rp->p++;
            } else {
                /* flags: (?flags) or (?flags:re) */
                int neg = 0, any = 0;
                for (;;) {
                    if (rp->p >= rp->end)
                        return rfail(rp, "missing closing ): `%.*s`", at, (int)(rp->end - at));
                    char f = *rp->p++;
                    if (f == '-' && !neg) { neg = 1; continue; }
                    if (f == 'i') { rp->fi = !neg; any = 1; continue; }
                    if (f == 'm') { rp->fm = !neg; any = 1; continue; }
                    if (f == 's') { rp->fs = !neg; any = 1; continue; }
                    if (f == 'U') { rp->fU = !neg; any = 1; continue; }
                    if ((f == ')' || f == ':') && (any || f == ':') && !(neg && rp->p[-2] == '-')) {
                        if (f == ')') {
                            /* the flags hold to the end of the enclosing group */
                            n = rnew(rp, R_EMPTY);
                            return n;
                        }
                        break;
                    }
                    return rfail(rp, "invalid or unsupported Perl syntax: `%.*s`", at, (int)(rp->p - at));
                }
            }
        }
        n = parse_alt(rp);
        if (!n)
            return NULL;
        if (rp->p >= rp->end || *rp->p != ')')
            return rfail(rp, "missing closing ): `%.*s`", at, (int)(rp->end - at));
        rp->p++;
        rp->fi = sfi; rp->fm = sfm; rp->fs = sfs; rp->fU = sfU;
        return n;
    }
    case '[':
        rp->p++;
        return parse_class(rp);
    case '.':
        rp->p++;
        n = rnew(rp, R_ANY);
        if (n)
            n->nl = rp->fs;
        return n;
    case '^': case '$':
        rp->p++;
        n = rnew(rp, R_ASSERT);
        if (n)
            n->c = c == '^' ? (rp->fm ? A_BOL : A_BOT) : (rp->fm ? A_EOL : A_EOT);
        return n;
    case '\\': {
        rp->p++;
        uint32_t cp;
        const range_t *set;
        int nset, neg;
        int r = parse_escape(rp, &cp, &set, &nset, &neg, 0);
        if (r < 0)
            return NULL;
        if (r == 2) {
            n = rnew(rp, R_ASSERT);
            if (n)
                n->c = cp;
            return n;
        }
        if (r == 1) {
            n = rnew(rp, R_CLASS);
            if (n) {
                n->ranges = set;
                n->nranges = nset;
                n->neg = neg;
                n->fold = rp->fi; /* (?i)\w also takes the Kelvin sign and long s */
            }
            return n;
        }
        if (rp->fi && cp >= 0x80)
            return rfail(rp, "case-insensitive matching of non-ASCII characters is not "
                         "supported by ksched: `%.*s`", at, (int)(rp->p - at));
        n = rnew(rp, R_CHAR);
        if (n) {
            n->c = cp;
            n->fold = rp->fi;
        }
        return n;
    }
    case '*': case '+': case '?':
        return rfail(rp, "missing argument to repetition operator: `%.*s`", at, 1);
    default: {
        uint32_t cp = utf8_next(&rp->p, rp->end);
        if (rp->fi && cp >= 0x80)
            return rfail(rp, "case-insensitive matching of non-ASCII characters is not "
                         "supported by ksched: `%.*s`", at, (int)(rp->p - at));
        n = rnew(rp, R_CHAR);
        if (n) {
            n->c = cp;
            n->fold = rp->fi;
        }
        return n;
    }
    }
}

static int parse_int(rparser_t *rp, int *out)
{
    int v = 0, any = 0;
    while (rp->p < rp->end && *rp->p >= '0' && *rp->p <= '9') {
        if (v < 100000)
            v = v * 10 + (*rp->p - '0');
        rp->p++;
        any = 1;
    }
    *out = v;
    return any;
}

static rnode_t *parse_repeat(rparser_t *rp)
{
    rnode_t *n = parse_atom(rp);
    int repeated = 0;
    while (n && rp->p < rp->end) {
        const char *at = rp->p;
        int min, max;
        char c = *rp->p;
        if (c == '*') { min = 0; max = -1; rp->p++; }
        else if (c == '+') { min = 1; max = -1; rp->p++; }
        else if (c == '?') { min = 0; max = 1; rp->p++; }
        else if (c == '{') {
            const char *save = rp->p;
            rp->p++;
            if (!parse_int(rp, &min)) {
                rp->p = save; /* a literal '{' */
                break;
            }
            max = min;
            if (rp->p < rp->end && *rp->p == ',') {
                rp->p++;
                if (!parse_int(rp, &max))
                    max = -1;
            }
            if (rp->p >= rp->end || *rp->p != '}') {
                rp->p = save;
                break;
            }
            rp->p++;
            if (min > 1000 || max > 1000 || (max >= 0 && max < min))
                return rfail(rp, "invalid repeat count: `%.*s`", at, (int)(rp->p - at));
        } else {
            break;
        }
        if (repeated)
            return rfail(rp, "bad repetition operator: `%.*s`", at - 1, (int)(rp->p - at + 1));
        int greedy = !rp->fU;
        if (rp->p < rp->end && *rp->p == '?') {
            rp->p++;
            greedy = !greedy;
        }
        if (n->kind == R_EMPTY || n->kind == R_ASSERT) {
            /* RE2 accepts repeating an empty-width item; it matches empty */
        }
        rnode_t *r = rnew(rp, R_REP);
        if (!r)
            return NULL;
        r->a = n;
        r->min = min;
        r->max = max;
        r->greedy = greedy;
        n = r;
        repeated = 1;
    }
    return n;
}

static rnode_t *parse_concat(rparser_t *rp)
{
    rnode_t *n = rnew(rp, R_EMPTY);
    while (n && rp->p < rp->end && *rp->p != '|' && *rp->p != ')') {
        rnode_t *x = parse_repeat(rp);
        if (!x)
            return NULL;
        rnode_t *c = rnew(rp, R_CAT);
        if (!c)
            return NULL;
        c->a = n;
        c->b = x;
        n = c;
    }
    return n;
}

static rnode_t *parse_alt(rparser_t *rp)
{
    if (++rp->depth > 500)
        return rfail(rp, "expression nests too deeply%.*s", "", 0);
    rnode_t *n = parse_concat(rp);
    while (n && rp->p < rp->end && *rp->p == '|') {
        rp->p++;
        rnode_t *b = parse_concat(rp);
        if (!b)
            return NULL;
        rnode_t *x = rnew(rp, R_ALT);
        if (!x)
            return NULL;
        x->a = n;
        x->b = b;
        n = x;
    }
    rp->depth--;
    return n;
}

/* ---- code generation ---- */
typedef struct gen {
    inst_t *prog;
    int n, cap;
    int failed;
} gen_t;

static int emit(gen_t *g, int op)
{
    if (g->n >= g->cap) {
        g->failed = 1;
        return 0;
    }
    memset(&g->prog[g->n], 0, sizeof g->prog[0]);
    g->prog[g->n].op = op;
    return g->n++;
}

static void gen(gen_t *g, const rnode_t *n)
{
    if (g->failed)
        return;
    int i, j;
    switch (n->kind) {
    case R_EMPTY:
        return;
    case R_CHAR:
        i = emit(g, I_CHAR);
        g->prog[i].c = n->c;
        g->prog[i].fold = n->fold;
        return;
    case R_ANY:
        i = emit(g, I_ANY);
        g->prog[i].nl = n->nl;
        return;
    case R_CLASS:
        i = emit(g, I_CLASS);
        g->prog[i].ranges = n->ranges;
        g->prog[i].nranges = n->nranges;
        g->prog[i].neg = n->neg;
        g->prog[i].fold = n->fold;
        return;
    case R_ASSERT:
        i = emit(g, I_ASSERT);
        g->prog[i].c = n->c;
        return;
    case R_CAT:
        gen(g, n->a);
        gen(g, n->b);
        return;
    case R_ALT:
        i = emit(g, I_SPLIT);
        g->prog[i].x = g->n;
        gen(g, n->a);
        j = emit(g, I_JMP);
        g->prog[i].y = g->n;
        gen(g, n->b);
        g->prog[j].x = g->n;
        return;
    case R_REP: {
        for (int k = 0; k < n->min; k++)
            gen(g, n->a);
        if (n->max < 0) {
            /* L: split body, out; body; jmp L */
            i = emit(g, I_SPLIT);
            int body = g->n;
            gen(g, n->a);
            j = emit(g, I_JMP);
            g->prog[j].x = i;
            g->prog[i].x = n->greedy ? body : g->n;
            g->prog[i].y = n->greedy ? g->n : body;
            return;
        }
        int splits[1001], ns = 0;
        for (int k = n->min; k < n->max; k++) {
            splits[ns++] = emit(g, I_SPLIT);
            g->prog[splits[ns - 1]].x = g->n;
            gen(g, n->a);
            if (g->failed)
                return;
        }
        for (int k = 0; k < ns; k++) {
            inst_t *s = &g->prog[splits[k]];
            int body = s->x;
            s->x = n->greedy ? body : g->n;
            s->y = n->greedy ? g->n : body;
        }
        return;
    }
    }
}

/* The number of instructions n compiles to, at most MAX_INST + 1. */
static long prog_size(const rnode_t *n)
{
    long a, b;
    switch (n->kind) {
    case R_EMPTY: return 0;
    case R_CAT: case R_ALT:
        a = prog_size(n->a);
        b = prog_size(n->b);
        a = a + b + (n->kind == R_ALT ? 2 : 0);
        return a > MAX_INST ? MAX_INST + 1 : a;
    case R_REP:
        a = prog_size(n->a);
        a = n->min * a + (n->max < 0 ? a + 2 : (long)(n->max - n->min) * (a + 1));
        return a > MAX_INST ? MAX_INST + 1 : a;
    default: return 1;
    }
}

ks_cel_regex_t *ks_cel_regex_compile(ks_cel_arena_t *a, const char *pat, size_t n,
                                     char *err, size_t errlen)
{
    rparser_t rp = { .p = pat, .end = pat + n, .arena = a, .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = 0;
    rnode_t *root = parse_alt(&rp);
    if (root && rp.p < rp.end) /* a ')' without '(' */
        root = rfail(&rp, "unexpected ): `%.*s`", pat, (int)n);
    if (!root)
        return NULL;
    long size = prog_size(root) + 1;
    if (size > MAX_INST) {
        rfail(&rp, "expression too large%.*s", "", 0);
        return NULL;
    }
    gen_t g = { .prog = ks_cel_arena_alloc(a, (size_t)size * sizeof(inst_t)), .cap = (int)size };
    if (!g.prog) {
        rfail(&rp, "out of memory%.*s", "", 0);
        return NULL;
    }
    gen(&g, root);
    emit(&g, I_MATCH);
    if (g.failed) {
        rfail(&rp, "expression too large%.*s", "", 0);
        return NULL;
    }
    ks_cel_regex_t *re = ks_cel_arena_alloc(a, sizeof *re);
    if (!re)
        return NULL;
    re->prog = g.prog;
    re->n = g.n;
    return re;
}

/* ---- matching: a Pike VM without captures ---- */
typedef struct tlist { int *pc; int n; } tlist_t;

static int is_word(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Simple case folding restricted to what ASCII letters fold with: the
 * Kelvin sign folds with k and the long s with s, as in RE2 and Go. */
static uint32_t fold(uint32_t c)
{
    if (c == 0x212A)
        return 'k';
    if (c == 0x17F)
        return 's';
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

typedef struct ctx { uint32_t prev, cur; int at_start, at_end; } ctx_t;

static int assert_ok(uint32_t kind, const ctx_t *x)
{
    switch (kind) {
    case A_BOT: return x->at_start;
    case A_EOT: return x->at_end;
    case A_BOL: return x->at_start || x->prev == '\n';
    case A_EOL: return x->at_end || x->cur == '\n';
    case A_WORDB: case A_NWORDB: {
        int b = (!x->at_start && is_word(x->prev)) != (!x->at_end && is_word(x->cur));
        return kind == A_WORDB ? b : !b;
    }
    }
    return 0;
}

static void addthread(const ks_cel_regex_t *re, tlist_t *l, int *mark, int gen_id, int pc,
                      const ctx_t *x, int *stack)
{
    int sp = 0;
    stack[sp++] = pc;
    while (sp) {
        pc = stack[--sp];
        if (mark[pc] == gen_id)
            continue;
        mark[pc] = gen_id;
        const inst_t *in = &re->prog[pc];
        switch (in->op) {
        case I_JMP:
            stack[sp++] = in->x;
            break;
        case I_SPLIT:
            stack[sp++] = in->y;
            stack[sp++] = in->x;
            break;
        case I_ASSERT:
            if (assert_ok(in->c, x))
                stack[sp++] = pc + 1;
            break;
        default:
            l->pc[l->n++] = pc;
            break;
        }
    }
}

static int step_ok(const inst_t *in, uint32_t c)
{
    switch (in->op) {
    case I_CHAR:
        return in->fold ? fold(in->c) == fold(c) : in->c == c;
    case I_ANY:
        return in->nl || c != '\n';
    case I_CLASS: {
        int hit = 0;
        for (int k = 0; k < in->nranges && !hit; k++) {
            hit = c >= in->ranges[k].lo && c <= in->ranges[k].hi;
            if (!hit && in->fold && (c < 128 || c == 0x212A || c == 0x17F)) {
                uint32_t l = fold(c), u = (l >= 'a' && l <= 'z') ? l - 32 : l;
                hit = (l >= in->ranges[k].lo && l <= in->ranges[k].hi) ||
                      (u >= in->ranges[k].lo && u <= in->ranges[k].hi);
                if (!hit && (l == 'k' || l == 's')) {
                    uint32_t sp = l == 'k' ? 0x212A : 0x17F;
                    hit = sp >= in->ranges[k].lo && sp <= in->ranges[k].hi;
                }
            }
        }
        return hit != in->neg;
    }
    }
    return 0;
}

int ks_cel_regex_search(const ks_cel_regex_t *re, const char *s, size_t n)
{
    size_t m = (size_t)re->n;
    /* one allocation: two lists, marks and a stack (each pc at most once) */
    int *mem = calloc(5 * m + 4, sizeof *mem);
    if (!mem)
        return 0;
    tlist_t cl = { mem, 0 }, nl = { mem + m, 0 };
    int *mark = mem + 2 * m, *stack = mem + 3 * m;
    for (size_t i = 0; i < m; i++)
        mark[i] = -1;
    const char *p = s, *end = s + n;
    ctx_t x = { 0, 0, 1, n == 0 };
    const char *q = p;
    x.cur = p < end ? utf8_next(&q, end) : 0;
    int gen_id = 0, matched = 0;
    addthread(re, &cl, mark, gen_id, 0, &x, stack);
    for (;;) {
        for (int t = 0; t < cl.n; t++)
            if (re->prog[cl.pc[t]].op == I_MATCH) {
                matched = 1;
                break;
            }
        if (matched || p >= end)
            break;
        uint32_t c = x.cur;
        p = q;
        ctx_t nx = { c, 0, 0, p >= end };
        q = p;
        nx.cur = p < end ? utf8_next(&q, end) : 0;
        gen_id++;
        nl.n = 0;
        for (int t = 0; t < cl.n; t++) {
            const inst_t *in = &re->prog[cl.pc[t]];
            if (step_ok(in, c))
                addthread(re, &nl, mark, gen_id, cl.pc[t] + 1, &nx, stack);
        }
        /* unanchored: a new attempt starts at every position */
        addthread(re, &nl, mark, gen_id, 0, &nx, stack);
        tlist_t tmp = cl;
        cl = nl;
        nl = tmp;
        x = nx;
    }
    free(mem);
    return matched;
}
