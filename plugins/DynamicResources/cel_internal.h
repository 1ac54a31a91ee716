/* Private to the CEL subset: tokens, the syntax tree, static types, runtime
 * values, and the quantity, semver and regex functions. Nothing here is
 * thread-unsafe: every function works on memory its caller passes. */
#ifndef KS_CEL_INTERNAL_H
#define KS_CEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cel.h"

/* ---- arena: every allocation of one program or one evaluation ---- */
typedef struct ks_cel_arena_block ks_cel_arena_block_t;
typedef struct ks_cel_arena {
    ks_cel_arena_block_t *head;
    int failed; /* an allocation failed */
} ks_cel_arena_t;
/* Zeroed memory owned by the arena; NULL (and a->failed) when out of memory. */
void *ks_cel_arena_alloc(ks_cel_arena_t *a, size_t n);
char *ks_cel_arena_strndup(ks_cel_arena_t *a, const char *s, size_t n);
void ks_cel_arena_free(ks_cel_arena_t *a);

/* ---- lexer ---- */
typedef enum {
    TK_EOF, TK_ERROR, TK_IDENT, TK_INT, TK_UINT, TK_DOUBLE, TK_STRING,
    TK_BYTES, TK_TRUE, TK_FALSE, TK_NULL,
    TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
    TK_DOT, TK_COMMA, TK_COLON, TK_QUESTION,
    TK_OR, TK_AND, TK_NOT, TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_IN,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT
} ks_cel_tok_kind_t;

typedef struct ks_cel_token {
    ks_cel_tok_kind_t kind;
    int col;              /* 1-based column of the first byte */
    const char *start;    /* into the source */
    size_t len;
    uint64_t u;           /* TK_INT (magnitude, may be 2^63), TK_UINT */
    double d;             /* TK_DOUBLE */
    char *str; size_t slen; /* TK_STRING, TK_BYTES (arena); TK_IDENT copy */
} ks_cel_token_t;

typedef struct ks_cel_lexer {
    const char *src, *p;
    ks_cel_arena_t *arena;
    char *err; size_t errlen; /* first error, "column N: ..." */
} ks_cel_lexer_t;
/* Reads the next token; TK_ERROR with lx->err filled on a lexical error. */
ks_cel_token_t ks_cel_lex_next(ks_cel_lexer_t *lx);

/* ---- static types ---- */
typedef enum {
    KT_DYN, KT_NULL, KT_BOOL, KT_INT, KT_UINT, KT_DOUBLE, KT_STRING,
    KT_BYTES, KT_LIST, KT_MAP, KT_QUANTITY, KT_SEMVER, KT_DEVICE, KT_ERROR
} ks_cel_kind_t;
typedef struct ks_cel_type {
    ks_cel_kind_t kind;
    const struct ks_cel_type *k, *v; /* map key/value, list element (v) */
} ks_cel_type_t;
/* Writes a CEL-style type name ("list(int)", "map(string, dyn)"). */
void ks_cel_type_name(const ks_cel_type_t *t, char *buf, size_t n);

/* ---- regex (an RE2 subset, matched without backtracking) ---- */
typedef struct ks_cel_regex ks_cel_regex_t;
/* Compiles pattern (n bytes) into the arena; NULL with err filled
 * ("missing closing )", "unsupported ... ") when it is invalid or outside
 * the subset. */
ks_cel_regex_t *ks_cel_regex_compile(ks_cel_arena_t *a, const char *pat, size_t n,
                                     char *err, size_t errlen);
/* 1 when re matches somewhere in s (n bytes, UTF-8), 0 otherwise. */
int ks_cel_regex_search(const ks_cel_regex_t *re, const char *s, size_t n);

/* ---- quantity: a Kubernetes resource.Quantity, exact ---- */
#define KS_CEL_QLIMBS 12
typedef struct ks_cel_quantity {
    int neg;                        /* sign of a non-zero value */
    uint32_t mag[KS_CEL_QLIMBS];    /* |value| in units of 10^-9, little endian */
} ks_cel_quantity_t;
/* Parses s like resource.ParseQuantity (rounding below 1n away from zero);
 * 0, or -1 with err filled. */
int ks_cel_quantity_parse(const char *s, size_t n, ks_cel_quantity_t *q,
                          char *err, size_t errlen);
int ks_cel_quantity_cmp(const ks_cel_quantity_t *a, const ks_cel_quantity_t *b);
int ks_cel_quantity_sign(const ks_cel_quantity_t *q);
/* 0 and *out when q is an integer within int64, else -1. */
int ks_cel_quantity_to_int(const ks_cel_quantity_t *q, int64_t *out);
void ks_cel_quantity_from_int(int64_t v, ks_cel_quantity_t *q);
/* r = a + b (sub: a - b); -1 on overflow of the fixed width. */
int ks_cel_quantity_add(const ks_cel_quantity_t *a, const ks_cel_quantity_t *b,
                        int sub, ks_cel_quantity_t *r);
double ks_cel_quantity_to_double(const ks_cel_quantity_t *q);

/* ---- semver (blang/semver rules: MAJOR.MINOR.PATCH[-pre][+build]) ---- */
typedef struct ks_cel_semver {
    uint64_t major, minor, patch;
    const char *pre; size_t pre_len; /* into an arena or the device */
} ks_cel_semver_t;
/* Parses s (n bytes); normalize: upstream's semver(s, true) leniency.
 * 0, or -1 with err filled. v->pre points into s. */
int ks_cel_semver_parse(const char *s, size_t n, int normalize, ks_cel_arena_t *a,
                        ks_cel_semver_t *v, char *err, size_t errlen);
int ks_cel_semver_cmp(const ks_cel_semver_t *a, const ks_cel_semver_t *b);

/* ---- syntax tree ---- */
typedef enum {
    ND_CONST, ND_IDENT, ND_SELECT, ND_INDEX, ND_CALL, ND_LIST, ND_MAP,
    ND_AND, ND_OR, ND_COND, ND_HAS,
    ND_BIND, /* cel.bind(name, args[0], args[1]) */
    ND_COMPREHENSION /* target.macro(name, args...): all, exists, exists_one, map, filter */
} ks_cel_node_kind_t;

typedef enum { MC_ALL, MC_EXISTS, MC_EXISTS_ONE, MC_MAP, MC_FILTER } ks_cel_macro_t;

typedef enum {
    FN_NONE,
    /* operators */
    FN_EQ, FN_NE, FN_LT, FN_LE, FN_GT, FN_GE, FN_IN,
    FN_ADD, FN_SUB, FN_MUL, FN_DIV, FN_MOD, FN_NEG, FN_NOT,
    /* global and member functions */
    FN_SIZE, FN_STARTS_WITH, FN_ENDS_WITH, FN_CONTAINS, FN_MATCHES,
    FN_LOWER_ASCII, FN_UPPER_ASCII,
    FN_INT, FN_UINT, FN_DOUBLE, FN_STRING, FN_BOOL, FN_DYN,
    FN_QUANTITY, FN_IS_QUANTITY, FN_SEMVER, FN_IS_SEMVER,
    FN_COMPARE_TO, FN_IS_GREATER_THAN, FN_IS_LESS_THAN,
    FN_SIGN, FN_IS_INTEGER, FN_AS_INTEGER, FN_AS_APPROXIMATE_FLOAT,
    FN_Q_ADD, FN_Q_SUB, FN_MAJOR, FN_MINOR, FN_PATCH
} ks_cel_fn_t;

typedef struct ks_cel_value ks_cel_value_t;
typedef struct ks_cel_node ks_cel_node_t;

typedef enum {
    KV_NULL, KV_BOOL, KV_INT, KV_UINT, KV_DOUBLE, KV_STRING, KV_BYTES,
    KV_LIST, KV_MAP, KV_QUANTITY, KV_SEMVER, KV_DEVICE,
    KV_ATTRS, KV_ATTR_DOMAIN, KV_CAPS, KV_CAP_DOMAIN, /* views of the device */
    KV_ERROR
} ks_cel_vkind_t;

struct ks_cel_value {
    ks_cel_vkind_t kind;
    union {
        int b;
        int64_t i;
        uint64_t u;
        double d;
        struct { const char *p; size_t n; } s;   /* string, bytes, error, domain */
        struct { ks_cel_value_t *items; size_t n; } l; /* list; map: 2n keys/values */
        const ks_cel_quantity_t *q;
        const ks_cel_semver_t *sv;
    } u;
};

struct ks_cel_node {
    ks_cel_node_kind_t kind;
    int col;
    ks_cel_fn_t fn;             /* ND_CALL */
    const char *name;           /* ND_IDENT, ND_SELECT field, ND_CALL function */
    ks_cel_node_t *target;      /* ND_SELECT, ND_INDEX, member ND_CALL, ND_HAS */
    ks_cel_node_t **args; size_t nargs; /* ND_CALL, ND_LIST, ND_MAP (k,v,k,v) */
    ks_cel_value_t cval;        /* ND_CONST; also a folded literal regex arg */
    const ks_cel_regex_t *re;   /* FN_MATCHES with a literal pattern */
    const ks_cel_type_t *type;  /* set by the checker */
    const ks_cel_node_t *bind;  /* ND_IDENT naming a cel.bind or iteration
                                   variable: the ND_BIND/ND_COMPREHENSION */
    int set_membership;         /* FN_IN on a constant list of scalars */
    int ov_first;               /* ND_CALL: index of fn's first overload */
    ks_cel_macro_t macro;       /* ND_COMPREHENSION */
    int folded;                 /* ND_CALL whose value (cval) was computed
                                   at compile time; it still costs as a call */
};

/* Parses src into a tree in the arena; NULL with err filled. */
ks_cel_node_t *ks_cel_parse(const char *src, ks_cel_arena_t *a, char *err, size_t errlen);
/* Evaluates a subtree without variables once, at compile time, into a's
 * memory (cel-go's planner does the same for constant list and map
 * literals and conversions of constants). */
ks_cel_value_t ks_cel_fold(const ks_cel_node_t *n, ks_cel_arena_t *a);

/* Types the tree, resolves functions and refuses what the subset lacks;
 * 0, or -1 with err filled. */
int ks_cel_check(ks_cel_node_t *root, ks_cel_arena_t *a, char *err, size_t errlen);

extern const ks_cel_type_t ks_cel_t_dyn, ks_cel_t_null, ks_cel_t_bool,
    ks_cel_t_int, ks_cel_t_uint, ks_cel_t_double, ks_cel_t_string,
    ks_cel_t_bytes, ks_cel_t_quantity, ks_cel_t_semver, ks_cel_t_device,
    ks_cel_t_list_dyn, ks_cel_t_map_dyn;

/* One overload of a function or operator: kinds as letters (i int, u uint,
 * d double, s string, b bytes, B bool, l list, m map, q quantity, v semver,
 * * anything), the receiver first for member functions. The checker picks
 * the candidates by static type, the evaluator by the values' kinds. */
typedef struct ks_cel_overload {
    ks_cel_fn_t fn;
    const char *name;
    int member;
    const char *params;
    char result;
} ks_cel_overload_t;
extern const ks_cel_overload_t ks_cel_overloads[]; /* one fn's overloads are adjacent */
/* The letter of a static type (KT_DYN: '*') and of a runtime value. */
char ks_cel_kind_letter(ks_cel_kind_t k);
char ks_cel_value_letter(const ks_cel_value_t *v);

/* Writes "column N: " + message into err. */
void ks_cel_errf(char *err, size_t errlen, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
