#include "cycle_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 64

typedef struct entry {
    const char *key_ptr; /* the caller's pointer: a fast first check */
    char key[KEY_MAX];
    void *data;
    ks_state_clone_fn clone_fn;
    ks_state_free_fn free_fn;
} entry_t;

struct ks_cycle_state {
    entry_t *items;
    unsigned n, cap;
    uint64_t skip_filter; /* bit i: Filter plugin i skipped by PreFilter */
    uint64_t skip_score;  /* bit i: Score plugin i skipped by PreScore */
};

uint64_t *ks_cycle_state_skip_filter(ks_cycle_state_t *cs)
{
    return &cs->skip_filter;
}

uint64_t *ks_cycle_state_skip_score(ks_cycle_state_t *cs)
{
    return &cs->skip_score;
}

ks_cycle_state_t *ks_cycle_state_new(void)
{
    return calloc(1, sizeof(ks_cycle_state_t));
}

static void entry_release(entry_t *e)
{
    if (e->free_fn && e->data)
        e->free_fn(e->data);
    e->data = NULL;
}

void ks_cycle_state_clear(ks_cycle_state_t *cs)
{
    unsigned i;
    for (i = 0; i < cs->n; i++)
        entry_release(&cs->items[i]);
    cs->n = 0;
    cs->skip_filter = cs->skip_score = 0;
}

void ks_cycle_state_free(ks_cycle_state_t *cs)
{
    if (cs == NULL)
        return;
    ks_cycle_state_clear(cs);
    free(cs->items);
    free(cs);
}

static entry_t *find(const ks_cycle_state_t *cs, const char *key)
{
    unsigned i;
    /* Plugins pass the same static key string on every call, so pointer
     * equality finds the entry without comparing text in the hot path. */
    for (i = 0; i < cs->n; i++)
        if (cs->items[i].key_ptr == key)
            return &cs->items[i];
    for (i = 0; i < cs->n; i++)
        if (strncmp(cs->items[i].key, key, KEY_MAX) == 0)
            return &cs->items[i];
    return NULL;
}

int ks_cycle_state_write(ks_cycle_state_t *cs, const char *key, void *data,
                         ks_state_clone_fn clone_fn, ks_state_free_fn free_fn)
{
    entry_t *e = NULL;
    unsigned i;
    /* Writes match by text; an entry that shares the key's address under
     * another text loses its fast-path pointer. */
    for (i = 0; i < cs->n; i++) {
        if (strncmp(cs->items[i].key, key, KEY_MAX) == 0)
            e = &cs->items[i];
        else if (cs->items[i].key_ptr == key)
            cs->items[i].key_ptr = NULL;
    }
    if (e == NULL) {
        if (cs->n == cs->cap) {
            unsigned cap = cs->cap ? cs->cap * 2 : 8;
            entry_t *items = realloc(cs->items, cap * sizeof *items);
            if (items == NULL)
                return -1;
            cs->items = items;
            cs->cap = cap;
        }
        e = &cs->items[cs->n++];
        memset(e, 0, sizeof *e);
        strncpy(e->key, key, KEY_MAX - 1);
    } else if (e->data != data) {
        entry_release(e);
    }
    e->key_ptr = key;
    e->data = data;
    e->clone_fn = clone_fn;
    e->free_fn = free_fn;
    return 0;
}

void *ks_cycle_state_read(const ks_cycle_state_t *cs, const char *key)
{
    const entry_t *e = find(cs, key);
    return e ? e->data : NULL;
}

void ks_cycle_state_delete(ks_cycle_state_t *cs, const char *key)
{
    entry_t *e = find(cs, key);
    if (e == NULL)
        return;
    entry_release(e);
    *e = cs->items[--cs->n];
}

ks_cycle_state_t *ks_cycle_state_clone(const ks_cycle_state_t *cs)
{
    ks_cycle_state_t *c = ks_cycle_state_new();
    unsigned i;
    if (c == NULL)
        return NULL;
    c->skip_filter = cs->skip_filter;
    c->skip_score = cs->skip_score;
    for (i = 0; i < cs->n; i++) {
        const entry_t *e = &cs->items[i];
        void *d = e->clone_fn ? e->clone_fn(e->data) : e->data;
        if (ks_cycle_state_write(c, e->key, d, e->clone_fn,
                                 e->clone_fn ? e->free_fn : NULL) != 0) {
            if (e->clone_fn && e->free_fn)
                e->free_fn(d);
            ks_cycle_state_free(c);
            return NULL;
        }
        c->items[c->n - 1].key_ptr = e->key_ptr; /* compared, never read */
    }
    return c;
}
