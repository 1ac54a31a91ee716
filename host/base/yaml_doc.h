/*
 * Private: building libyaml documents from a parser's events, with the
 * limits every reader of the host needs against hostile input.
 *
 * Anchors and aliases. libyaml's document keeps one node per anchor and
 * lets every alias refer to it, so the tree is small; a reader that walks
 * it, though, visits an aliased subtree once per alias, and nested aliases
 * multiply ("billion laughs": a few KiB can stand for billions of nodes).
 * The builder therefore counts, while it builds:
 *   - alias references: at most KS_YAML_MAX_ALIASES;
 *   - the expanded size: the number of nodes the document would have if
 *     every alias were replaced by a copy of its anchor's subtree; at most
 *     max(KS_YAML_MIN_EXPANDED, KS_YAML_EXPAND_FACTOR x the nodes actually
 *     written), checked when a document's root is complete, before anyone
 *     reads it;
 *   - an alias inside the node its anchor names (a cycle) is refused.
 * A budget (ks_yaml_budget_t) can be shared by the documents of one stream,
 * so that many small documents cannot add up to a bomb either. Anchors are
 * found through a hash map (libyaml's own loader searches a list).
 *
 * Not thread-safe: one builder per thread.
 */
#ifndef KS_BASE_YAML_DOC_H
#define KS_BASE_YAML_DOC_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/error.h"
#include "base/strmap.h"
#include "base/yaml_node.h"

#define KS_YAML_MAX_ALIASES 10000
#define KS_YAML_MIN_EXPANDED 1000000
#define KS_YAML_EXPAND_FACTOR 10

/* --- problems ---------------------------------------------------------------- */

typedef enum ks_yaml_problem_kind {
    KS_YAML_P_NONE = 0,
    KS_YAML_P_NOMEM,     /* out of memory */
    KS_YAML_P_IO,        /* ks_yaml_load_file: cannot open or read */
    KS_YAML_P_SYNTAX,    /* libyaml refused the text */
    KS_YAML_P_UNDEFINED, /* an alias to an anchor not (yet) defined */
    KS_YAML_P_RECURSIVE, /* an alias inside the node its anchor names */
    KS_YAML_P_LIMIT,     /* too many aliases, or too large once expanded */
    KS_YAML_P_EMPTY,     /* ks_yaml_load_*: the stream holds no document */
    KS_YAML_P_EXTRA      /* ks_yaml_load_*: a second document */
} ks_yaml_problem_kind_t;

typedef struct ks_yaml_problem {
    ks_yaml_problem_kind_t kind;
    int code;              /* KS_EPARSE, KS_EIO or KS_ENOMEM */
    uint32_t line, column; /* 1-based; 0 when there is no position */
    char anchor[128];      /* the alias's anchor (UNDEFINED, RECURSIVE,
                            * LIMIT), possibly truncated; "" otherwise */
    char msg[512];         /* what is wrong, without file or position; for
                            * SYNTAX libyaml's words: "did not find expected
                            * key (while parsing a block mapping at line 2,
                            * column 1)" */
} ks_yaml_problem_t;

/* Fill err with "FILE:LINE:COL: PREFIXmsg" ("FILE: PREFIXmsg" without a
 * position); prefix may be NULL. Returns p->code. */
int ks_yaml_problem_error(ks_error_t *err, const char *file,
                          const char *prefix, const ks_yaml_problem_t *p);

/* The problem of a failed yaml_parser_parse(). `text` (may be NULL) is the
 * input when it is in memory: then reader errors (bad UTF-8) get a line and
 * column too. */
void ks_yaml_parser_problem(const yaml_parser_t *parser, const char *text,
                            size_t len, ks_yaml_problem_t *p);

/* --- the builder --------------------------------------------------------------- */

typedef struct ks_yaml_budget {
    size_t nodes;    /* nodes written */
    size_t aliases;  /* alias references */
    size_t expanded; /* nodes once aliases are expanded (saturates) */
} ks_yaml_budget_t;

typedef struct ks_yaml_bframe ks_yaml_bframe_t;
typedef struct ks_yaml_banchor ks_yaml_banchor_t;
typedef struct ks_yaml_balias ks_yaml_balias_t;

/* Fields are private; the struct is public so that it can live on the
 * stack. */
typedef struct ks_yaml_builder {
    yaml_document_t doc;
    int active;  /* doc is initialised */
    int root;    /* id of the completed root node, 0 while building */
    ks_yaml_bframe_t *stack;
    size_t depth, cap;
    ks_yaml_banchor_t *anchors;
    size_t n_anchors, cap_anchors;
    ks_strmap_t anchor_ix; /* name -> index + 1 in anchors */
    ks_yaml_balias_t *aliases; /* this document's alias references */
    size_t n_aliases, cap_aliases;
    ks_yaml_budget_t own;    /* used when no budget is shared */
    ks_yaml_budget_t *budget;
} ks_yaml_builder_t;

/* A builder with no document. `budget` (may be NULL: the builder's own,
 * reset by each ks_yaml_builder_start) is updated by every document built;
 * it must outlive the builder. */
void ks_yaml_builder_init(ks_yaml_builder_t *b, ks_yaml_budget_t *budget);
/* Drop the document (if any) and its anchors. */
void ks_yaml_builder_reset(ks_yaml_builder_t *b);
void ks_yaml_builder_destroy(ks_yaml_builder_t *b);
/* Begin a new, empty document (the previous one is dropped). `ev` is the
 * DOCUMENT-START event or NULL; it gives the document's start mark. Returns
 * 0, or -1 with p filled. */
int ks_yaml_builder_start(ks_yaml_builder_t *b, const yaml_event_t *ev,
                          ks_yaml_problem_t *p);
/* Add one node event (SCALAR, ALIAS, SEQUENCE-/MAPPING-START/-END; others
 * are ignored) to the document. When the event completes the root node,
 * the expansion limit is checked. Returns 0, or -1 with p filled (the
 * document is then unusable: reset or start again). */
int ks_yaml_builder_feed(ks_yaml_builder_t *b, const yaml_event_t *ev,
                         ks_yaml_problem_t *p);
/* Add an empty block sequence at `mark` where the next node goes (for a
 * reader that takes a subtree out of the document and reads it alone). */
int ks_yaml_builder_add_empty_seq(ks_yaml_builder_t *b, yaml_mark_t mark,
                                  ks_yaml_problem_t *p);
/* The document; valid between start and reset. */
yaml_document_t *ks_yaml_builder_doc(ks_yaml_builder_t *b);
/* The completed root, or NULL while the root is still open (or empty). */
yaml_node_t *ks_yaml_builder_root(ks_yaml_builder_t *b);
/* Number of open sequences and mappings. */
size_t ks_yaml_builder_depth(const ks_yaml_builder_t *b);
/* The key of the innermost open mapping when the next node will be its
 * value, else NULL. */
yaml_node_t *ks_yaml_builder_pending_key(ks_yaml_builder_t *b);

/* --- loading one document ----------------------------------------------------- */

/* Load the single document of a YAML text into *doc (delete it with
 * yaml_document_delete). Fails (-1, p filled, *doc not to be deleted) on a
 * syntax error, a limit, an empty stream (KS_YAML_P_EMPTY; comments only
 * count as empty) or a second document (KS_YAML_P_EXTRA, at its start). */
int ks_yaml_load_string(const char *text, size_t len, yaml_document_t *doc,
                        ks_yaml_problem_t *p);
/* The same for a file (read whole first); KS_YAML_P_IO with msg "cannot
 * open: No such file or directory" and no position when it cannot be read. */
int ks_yaml_load_file(const char *path, yaml_document_t *doc,
                      ks_yaml_problem_t *p);

#endif /* KS_BASE_YAML_DOC_H */
