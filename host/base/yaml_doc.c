/* Documents from events, with alias limits; see yaml_doc.h. */
#include "base/yaml_doc.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_yaml_bframe {
    int id;        /* the open container */
    int is_map;
    int key;       /* pending mapping key id, 0 when none */
    size_t sum;    /* expanded size of the children so far */
    size_t anchor; /* index + 1 of the anchor naming this node, or 0 */
};

struct ks_yaml_banchor {
    char *name;
    int id;
    int open;    /* the node is not complete yet */
    size_t size; /* expanded size, once complete */
};

struct ks_yaml_balias {
    size_t expanded; /* the budget's expanded count after this alias */
    yaml_mark_t mark;
    size_t anchor; /* index in anchors */
};

/* --- problems --------------------------------------------------------------- */

static void set_problem(ks_yaml_problem_t *p, ks_yaml_problem_kind_t kind,
                        int code, yaml_mark_t mark, const char *anchor,
                        const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void set_problem(ks_yaml_problem_t *p, ks_yaml_problem_kind_t kind,
                        int code, yaml_mark_t mark, const char *anchor,
                        const char *fmt, ...)
{
    va_list ap;
    p->kind = kind;
    p->code = code;
    if (mark.line == KS_YAML_NO_MARK) {
        p->line = p->column = 0;
    } else {
        p->line = (uint32_t)mark.line + 1;
        p->column = (uint32_t)mark.column + 1;
    }
    snprintf(p->anchor, sizeof p->anchor, "%s", anchor ? anchor : "");
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
}

static const yaml_mark_t no_mark = {0, KS_YAML_NO_MARK, 0};

static int nomem(ks_yaml_problem_t *p)
{
    set_problem(p, KS_YAML_P_NOMEM, KS_ENOMEM, no_mark, NULL,
                "out of memory reading YAML");
    return -1;
}

int ks_yaml_problem_error(ks_error_t *err, const char *file,
                          const char *prefix, const ks_yaml_problem_t *p)
{
    if (prefix == NULL)
        prefix = "";
    if (p->line == 0)
        return ks_error_set(err, p->code, "%s: %s%s", file, prefix, p->msg);
    return ks_error_set(err, p->code, "%s:%u:%u: %s%s", file,
                        (unsigned)p->line, (unsigned)p->column, prefix,
                        p->msg);
}

/* 1-based line and column of byte `off` of text (columns count
 * characters, as libyaml's marks do). */
static yaml_mark_t mark_of_offset(const char *text, size_t len, size_t off)
{
    yaml_mark_t m = {off, 0, 0};
    size_t i;
    for (i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            m.line++;
            m.column = 0;
        } else if (((unsigned char)text[i] & 0xc0) != 0x80) {
            m.column++;
        }
    }
    return m;
}

void ks_yaml_parser_problem(const yaml_parser_t *parser, const char *text,
                            size_t len, ks_yaml_problem_t *p)
{
    const char *what = parser->problem ? parser->problem : "syntax error";
    if (parser->error == YAML_MEMORY_ERROR) {
        nomem(p);
        return;
    }
    if (parser->error == YAML_READER_ERROR) {
        if (text != NULL)
            set_problem(p, KS_YAML_P_SYNTAX, KS_EPARSE,
                        mark_of_offset(text, len, parser->problem_offset),
                        NULL, "%s", what);
        else
            set_problem(p, KS_YAML_P_SYNTAX, KS_EPARSE, no_mark, NULL,
                        "%s (at byte %zu)", what, parser->problem_offset);
        return;
    }
    if (parser->context != NULL)
        set_problem(p, KS_YAML_P_SYNTAX, KS_EPARSE, parser->problem_mark, NULL,
                    "%s (%s at line %zu, column %zu)", what, parser->context,
                    parser->context_mark.line + 1,
                    parser->context_mark.column + 1);
    else
        set_problem(p, KS_YAML_P_SYNTAX, KS_EPARSE, parser->problem_mark, NULL,
                    "%s", what);
}

/* --- the builder ---------------------------------------------------------------- */

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t expansion_limit(size_t nodes)
{
    size_t by_factor = nodes > SIZE_MAX / KS_YAML_EXPAND_FACTOR
                           ? SIZE_MAX
                           : nodes * KS_YAML_EXPAND_FACTOR;
    return by_factor > KS_YAML_MIN_EXPANDED ? by_factor : KS_YAML_MIN_EXPANDED;
}

void ks_yaml_builder_init(ks_yaml_builder_t *b, ks_yaml_budget_t *budget)
{
    memset(b, 0, sizeof *b);
    b->budget = budget ? budget : &b->own;
}

void ks_yaml_builder_reset(ks_yaml_builder_t *b)
{
    size_t i;
    if (b->active)
        yaml_document_delete(&b->doc);
    for (i = 0; i < b->n_anchors; i++)
        free(b->anchors[i].name);
    ks_strmap_clear(&b->anchor_ix);
    b->n_anchors = 0;
    b->n_aliases = 0;
    b->active = 0;
    b->root = 0;
    b->depth = 0;
}

void ks_yaml_builder_destroy(ks_yaml_builder_t *b)
{
    ks_yaml_builder_reset(b);
    ks_strmap_destroy(&b->anchor_ix);
    free(b->stack);
    free(b->anchors);
    free(b->aliases);
    b->stack = NULL;
    b->anchors = NULL;
    b->aliases = NULL;
    b->cap = b->cap_anchors = b->cap_aliases = 0;
}

int ks_yaml_builder_start(ks_yaml_builder_t *b, const yaml_event_t *ev,
                          ks_yaml_problem_t *p)
{
    ks_yaml_builder_reset(b);
    if (b->budget == &b->own)
        memset(&b->own, 0, sizeof b->own);
    if (!yaml_document_initialize(&b->doc, NULL, NULL, NULL, 1, 1))
        return nomem(p);
    if (ev != NULL) {
        b->doc.start_mark = ev->start_mark;
        b->doc.end_mark = ev->end_mark;
    }
    b->active = 1;
    return 0;
}

yaml_document_t *ks_yaml_builder_doc(ks_yaml_builder_t *b)
{
    return b->active ? &b->doc : NULL;
}

yaml_node_t *ks_yaml_builder_root(ks_yaml_builder_t *b)
{
    return b->active && b->root ? yaml_document_get_node(&b->doc, b->root)
                                : NULL;
}

size_t ks_yaml_builder_depth(const ks_yaml_builder_t *b)
{
    return b->depth;
}

yaml_node_t *ks_yaml_builder_pending_key(ks_yaml_builder_t *b)
{
    const ks_yaml_bframe_t *f;
    if (b->depth == 0)
        return NULL;
    f = &b->stack[b->depth - 1];
    if (!f->is_map || f->key == 0)
        return NULL;
    return yaml_document_get_node(&b->doc, f->key);
}

/* Check the expansion limit once the root is complete. */
static int check_expansion(ks_yaml_builder_t *b, ks_yaml_problem_t *p)
{
    ks_yaml_budget_t *bu = b->budget;
    size_t limit = expansion_limit(bu->nodes), i;
    if (bu->expanded <= limit)
        return 0;
    /* Name the first alias of this document past the limit. */
    for (i = 0; i < b->n_aliases; i++) {
        const ks_yaml_balias_t *a = &b->aliases[i];
        if (a->expanded > limit) {
            const char *name = b->anchors[a->anchor].name;
            set_problem(p, KS_YAML_P_LIMIT, KS_EPARSE, a->mark, name,
                        "alias *%s: expanding the aliases would give more "
                        "than %zu nodes (the limit is max(%d, %d x the %zu "
                        "nodes written)); refusing a possible alias bomb",
                        name, limit, KS_YAML_MIN_EXPANDED,
                        KS_YAML_EXPAND_FACTOR, bu->nodes);
            return -1;
        }
    }
    set_problem(p, KS_YAML_P_LIMIT, KS_EPARSE,
                yaml_document_get_node(&b->doc, b->root)->start_mark, NULL,
                "expanding the aliases would give more than %zu nodes (the "
                "limit is max(%d, %d x the %zu nodes written)); refusing a "
                "possible alias bomb",
                limit, KS_YAML_MIN_EXPANDED, KS_YAML_EXPAND_FACTOR, bu->nodes);
    return -1;
}

/* A child of expanded size `size` was added to the open container (or the
 * root is complete when none is open). */
static int child_done(ks_yaml_builder_t *b, int id, size_t size,
                      ks_yaml_problem_t *p)
{
    ks_yaml_bframe_t *f;
    if (b->depth == 0) {
        b->root = id;
        return check_expansion(b, p);
    }
    f = &b->stack[b->depth - 1];
    f->sum = sat_add(f->sum, size);
    return 0;
}

/* Hang node `id` under the open container. */
static int attach(ks_yaml_builder_t *b, int id, ks_yaml_problem_t *p)
{
    ks_yaml_bframe_t *f;
    if (b->depth == 0)
        return 0;
    f = &b->stack[b->depth - 1];
    if (!f->is_map) {
        if (!yaml_document_append_sequence_item(&b->doc, f->id, id))
            return nomem(p);
        return 0;
    }
    if (f->key == 0) {
        f->key = id;
        return 0;
    }
    if (!yaml_document_append_mapping_pair(&b->doc, f->id, f->key, id))
        return nomem(p);
    f->key = 0;
    return 0;
}

/* Record anchor `name` for node `id`; returns its index + 1, 0 for no
 * anchor, or -1 with p filled. */
static long add_anchor(ks_yaml_builder_t *b, const yaml_char_t *name, int id,
                       int open, ks_yaml_problem_t *p)
{
    ks_yaml_banchor_t *a;
    if (name == NULL)
        return 0;
    if (b->n_anchors == b->cap_anchors) {
        size_t ncap = b->cap_anchors ? b->cap_anchors * 2 : 8;
        ks_yaml_banchor_t *na = realloc(b->anchors, ncap * sizeof *na);
        if (na == NULL)
            return nomem(p);
        b->anchors = na;
        b->cap_anchors = ncap;
    }
    a = &b->anchors[b->n_anchors];
    if ((a->name = strdup((const char *)name)) == NULL)
        return nomem(p);
    a->id = id;
    a->open = open;
    a->size = 1;
    b->n_anchors++;
    /* A later anchor of the same name replaces the earlier one. */
    if (ks_strmap_put(&b->anchor_ix, a->name,
                      (void *)(uintptr_t)b->n_anchors) != 0)
        return nomem(p);
    return (long)b->n_anchors;
}

static int count_node(ks_yaml_builder_t *b)
{
    b->budget->nodes = sat_add(b->budget->nodes, 1);
    b->budget->expanded = sat_add(b->budget->expanded, 1);
    return 0;
}

static int feed_scalar(ks_yaml_builder_t *b, const yaml_event_t *ev,
                       ks_yaml_problem_t *p)
{
    const yaml_char_t *tag = ev->data.scalar.tag;
    yaml_scalar_style_t style = ev->data.scalar.style;
    yaml_node_t *n;
    int id;
    /* An explicit !!str or the non-specific ! makes a plain scalar a
     * string: record it as quoted (see yaml_node.h). */
    if (tag != NULL && (strcmp((const char *)tag, "!") == 0 ||
                        strcmp((const char *)tag, YAML_STR_TAG) == 0)) {
        if (style == YAML_PLAIN_SCALAR_STYLE || style == YAML_ANY_SCALAR_STYLE)
            style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
        if (tag[1] == '\0')
            tag = NULL;
    }
    if (ev->data.scalar.length > (size_t)INT_MAX)
        return nomem(p);
    id = yaml_document_add_scalar(&b->doc, (yaml_char_t *)tag,
                                  ev->data.scalar.value,
                                  (int)ev->data.scalar.length, style);
    if (id == 0)
        return nomem(p);
    n = yaml_document_get_node(&b->doc, id);
    n->start_mark = ev->start_mark;
    n->end_mark = ev->end_mark;
    count_node(b);
    if (add_anchor(b, ev->data.scalar.anchor, id, 0, p) < 0 ||
        attach(b, id, p) != 0)
        return -1;
    return child_done(b, id, 1, p);
}

static int feed_alias(ks_yaml_builder_t *b, const yaml_event_t *ev,
                      ks_yaml_problem_t *p)
{
    const char *name = (const char *)ev->data.alias.anchor;
    ks_yaml_budget_t *bu = b->budget;
    uintptr_t ix = (uintptr_t)ks_strmap_get(&b->anchor_ix, name);
    ks_yaml_banchor_t *a;
    ks_yaml_balias_t *r;

    bu->aliases = sat_add(bu->aliases, 1);
    if (bu->aliases > KS_YAML_MAX_ALIASES) {
        set_problem(p, KS_YAML_P_LIMIT, KS_EPARSE, ev->start_mark, name,
                    "alias *%s: more than %d alias references; refusing a "
                    "possible alias bomb",
                    name, KS_YAML_MAX_ALIASES);
        return -1;
    }
    if (ix == 0) {
        set_problem(p, KS_YAML_P_UNDEFINED, KS_EPARSE, ev->start_mark, name,
                    "alias *%s refers to an undefined anchor", name);
        return -1;
    }
    a = &b->anchors[ix - 1];
    if (a->open) {
        set_problem(p, KS_YAML_P_RECURSIVE, KS_EPARSE, ev->start_mark, name,
                    "alias *%s is inside the node its anchor names (a "
                    "recursive structure)",
                    name);
        return -1;
    }
    bu->expanded = sat_add(bu->expanded, a->size);
    if (b->n_aliases == b->cap_aliases) {
        size_t ncap = b->cap_aliases ? b->cap_aliases * 2 : 16;
        ks_yaml_balias_t *na = realloc(b->aliases, ncap * sizeof *na);
        if (na == NULL)
            return nomem(p);
        b->aliases = na;
        b->cap_aliases = ncap;
    }
    r = &b->aliases[b->n_aliases++];
    r->expanded = bu->expanded;
    r->mark = ev->start_mark;
    r->anchor = ix - 1;
    if (attach(b, a->id, p) != 0)
        return -1;
    return child_done(b, a->id, a->size, p);
}

static int feed_open(ks_yaml_builder_t *b, const yaml_event_t *ev,
                     ks_yaml_problem_t *p)
{
    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    const yaml_char_t *tag = is_map ? ev->data.mapping_start.tag
                                    : ev->data.sequence_start.tag;
    const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor
                                       : ev->data.sequence_start.anchor;
    ks_yaml_bframe_t *f;
    long ax;
    int id;
    if (tag != NULL && strcmp((const char *)tag, "!") == 0)
        tag = NULL;
    id = is_map ? yaml_document_add_mapping(&b->doc, (yaml_char_t *)tag,
                                            ev->data.mapping_start.style)
                : yaml_document_add_sequence(&b->doc, (yaml_char_t *)tag,
                                             ev->data.sequence_start.style);
    if (id == 0)
        return nomem(p);
    yaml_document_get_node(&b->doc, id)->start_mark = ev->start_mark;
    count_node(b);
    if ((ax = add_anchor(b, anchor, id, 1, p)) < 0 || attach(b, id, p) != 0)
        return -1;
    if (b->depth == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 16;
        ks_yaml_bframe_t *ns = realloc(b->stack, ncap * sizeof *ns);
        if (ns == NULL)
            return nomem(p);
        b->stack = ns;
        b->cap = ncap;
    }
    f = &b->stack[b->depth++];
    f->id = id;
    f->is_map = is_map;
    f->key = 0;
    f->sum = 0;
    f->anchor = (size_t)ax;
    b->root = 0;
    return 0;
}

static int feed_close(ks_yaml_builder_t *b, const yaml_event_t *ev,
                      ks_yaml_problem_t *p)
{
    ks_yaml_bframe_t f;
    size_t size;
    if (b->depth == 0)
        return 0;
    f = b->stack[--b->depth];
    size = sat_add(f.sum, 1);
    yaml_document_get_node(&b->doc, f.id)->end_mark = ev->end_mark;
    if (f.anchor != 0) {
        b->anchors[f.anchor - 1].open = 0;
        b->anchors[f.anchor - 1].size = size;
    }
    return child_done(b, f.id, size, p);
}

int ks_yaml_builder_feed(ks_yaml_builder_t *b, const yaml_event_t *ev,
                         ks_yaml_problem_t *p)
{
    if (!b->active)
        return 0;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return feed_scalar(b, ev, p);
    case YAML_ALIAS_EVENT: return feed_alias(b, ev, p);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return feed_open(b, ev, p);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return feed_close(b, ev, p);
    default: return 0;
    }
}

int ks_yaml_builder_add_empty_seq(ks_yaml_builder_t *b, yaml_mark_t mark,
                                  ks_yaml_problem_t *p)
{
    yaml_node_t *n;
    int id = yaml_document_add_sequence(&b->doc, NULL,
                                        YAML_BLOCK_SEQUENCE_STYLE);
    if (id == 0)
        return nomem(p);
    n = yaml_document_get_node(&b->doc, id);
    n->start_mark = mark;
    n->end_mark = mark;
    count_node(b);
    if (attach(b, id, p) != 0)
        return -1;
    return child_done(b, id, 1, p);
}

/* --- loading one document ----------------------------------------------------- */

static int load_parser(yaml_parser_t *parser, const char *text, size_t len,
                       yaml_document_t *doc, ks_yaml_problem_t *p)
{
    ks_yaml_builder_t b;
    yaml_mark_t second = no_mark; /* where a second document starts */
    int have = 0, rc = -1; /* have: 1 in the first document, 2 after it */
    ks_yaml_builder_init(&b, NULL);
    for (;;) {
        yaml_event_t ev;
        int stop = 0;
        if (!yaml_parser_parse(parser, &ev)) {
            ks_yaml_parser_problem(parser, text, len, p);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            stop = 1;
            if (have == 0) {
                set_problem(p, KS_YAML_P_EMPTY, KS_EPARSE, ev.start_mark, NULL,
                            "the stream holds no YAML document");
                break;
            }
            *doc = b.doc;
            b.active = 0; /* the caller owns it now */
            rc = 0;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (have == 0) {
                if (ks_yaml_builder_start(&b, &ev, p) != 0)
                    stop = 1;
                have = 1;
            } else {
                have = 2;
                second = ev.start_mark;
            }
            break;
        case YAML_DOCUMENT_END_EVENT:
            if (have == 1)
                b.doc.end_mark = ev.end_mark;
            break;
        case YAML_STREAM_START_EVENT:
            break;
        default:
            if (have == 2) { /* a node in a second document */
                set_problem(p, KS_YAML_P_EXTRA, KS_EPARSE, second, NULL,
                            "a second YAML document");
                stop = 1;
            } else if (ks_yaml_builder_feed(&b, &ev, p) != 0) {
                stop = 1;
            }
            break;
        }
        yaml_event_delete(&ev);
        if (stop)
            break;
    }
    ks_yaml_builder_destroy(&b);
    return rc;
}

int ks_yaml_load_string(const char *text, size_t len, yaml_document_t *doc,
                        ks_yaml_problem_t *p)
{
    yaml_parser_t parser;
    int rc;
    memset(doc, 0, sizeof *doc);
    if (!yaml_parser_initialize(&parser))
        return nomem(p);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    rc = load_parser(&parser, text, len, doc, p);
    yaml_parser_delete(&parser);
    if (rc != 0)
        memset(doc, 0, sizeof *doc);
    return rc;
}

int ks_yaml_load_file(const char *path, yaml_document_t *doc,
                      ks_yaml_problem_t *p)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc;

    memset(doc, 0, sizeof *doc);
    if (f == NULL) {
        set_problem(p, KS_YAML_P_IO, KS_EIO, no_mark, NULL, "cannot open: %s",
                    strerror(errno));
        return -1;
    }
    for (;;) {
        size_t got;
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *grown = ncap > cap ? realloc(text, ncap) : NULL;
            if (grown == NULL) {
                free(text);
                fclose(f);
                return nomem(p);
            }
            text = grown;
            cap = ncap;
        }
        got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        set_problem(p, KS_YAML_P_IO, KS_EIO, no_mark, NULL, "cannot read: %s",
                    strerror(errno));
        free(text);
        fclose(f);
        return -1;
    }
    fclose(f);
    rc = ks_yaml_load_string(text, len, doc, p);
    free(text);
    return rc;
}
