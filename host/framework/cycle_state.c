/*
 * The per-cycle state store (cycle_state.h): a small array of entries with
 * an index by key address, and the plugins' private slots. Keys are
 * compared by their whole text and have no length limit: a key shorter
 * than KEY_INLINE bytes is kept in its entry, a longer one in a malloc'd
 * copy. The address index only finds the candidate entry faster.
 * Out of memory: write returns -1 and clone returns NULL, the state
 * unchanged (a plugin's clone_fn returning NULL is
 * stored as is: the SDK does not say it means failure). Threads: see
 * cycle_state.h.
 */
#include "cycle_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define KEY_INLINE 64 /* keys of up to 63 bytes live in the entry */

typedef struct entry {
    const char *key_ptr; /* the caller's pointer: a fast first check */
    char *long_key;      /* malloc'd copy of a longer key, else NULL */
    char key[KEY_INLINE]; /* the key, when it fits */
    void *data;
    ks_state_clone_fn clone_fn;
    ks_state_free_fn free_fn;
} entry_t;

#define SLOTS 64 /* power of two, > the entries a cycle has */

/* One plugin's private state (plugin.h plugin_state_set): per owner (the
 * plugin's handle), KS_CS_N_SLOTS slots. */
typedef struct pslot {
    void *data;
    ks_state_clone_fn clone_fn;
    ks_state_free_fn free_fn;
} pslot_t;

typedef struct powner {
    const void *owner;
    pslot_t slot[KS_CS_N_SLOTS];
} powner_t;

struct ks_cycle_state {
    entry_t *items;
    unsigned n;
    size_t cap;
    /* Open-addressing index from key address to entry index + 1 (0: empty),
     * so that a read is a hash and one compare. */
    uint8_t slot[SLOTS];
    uint64_t skip_filter; /* bit i: Filter plugin i skipped by PreFilter */
    uint64_t skip_score;  /* bit i: Score plugin i skipped by PreScore */
    powner_t *owners;     /* the plugins with private state */
    unsigned n_owners;
    size_t cap_owners;
};

uint64_t *ks_cycle_state_skip_filter(ks_cycle_state_t *cs)
{
    return &cs->skip_filter;
}

uint64_t *ks_cycle_state_skip_score(ks_cycle_state_t *cs)
{
    return &cs->skip_score;
}

unsigned ks_cycle_state_count(const ks_cycle_state_t *cs)
{
    return cs->n;
}

ks_cycle_state_t *ks_cycle_state_new(void)
{
    return calloc(1, sizeof(ks_cycle_state_t));
}

static const char *entry_key(const entry_t *e)
{
    return e->long_key ? e->long_key : e->key;
}

static void entry_release(entry_t *e)
{
    if (e->free_fn && e->data)
        e->free_fn(e->data);
    e->data = NULL;
}

/* The entry goes away: its data and its key. */
static void entry_drop(entry_t *e)
{
    entry_release(e);
    free(e->long_key);
    e->long_key = NULL;
}

static void pslot_release(pslot_t *p)
{
    if (p->free_fn && p->data)
        p->free_fn(p->data);
    p->data = NULL;
    p->free_fn = NULL;
    p->clone_fn = NULL;
}

void ks_cycle_state_clear(ks_cycle_state_t *cs)
{
    unsigned i, k;
    for (i = 0; i < cs->n; i++)
        entry_drop(&cs->items[i]);
    /* The owners' records go with n_owners (owner_get clears a record it
     * hands out again): only the data needs its free fn. */
    for (i = 0; i < cs->n_owners; i++)
        for (k = 0; k < KS_CS_N_SLOTS; k++) {
            const pslot_t *p = &cs->owners[i].slot[k];
            if (p->free_fn && p->data)
                p->free_fn(p->data);
        }
    cs->n_owners = 0;
    cs->n = 0;
    cs->skip_filter = cs->skip_score = 0;
    memset(cs->slot, 0, sizeof cs->slot);
}

void ks_cycle_state_free(ks_cycle_state_t *cs)
{
    if (cs == NULL)
        return;
    ks_cycle_state_clear(cs);
    free(cs->items);
    free(cs->owners);
    free(cs);
}

static unsigned slot_of(const char *key)
{
    uintptr_t x = (uintptr_t)key;
    return (unsigned)((x >> 3) ^ (x >> 9)) & (SLOTS - 1);
}

/* Rebuild the address index after entries moved or changed address. */
static void reindex(ks_cycle_state_t *cs)
{
    unsigned i;
    memset(cs->slot, 0, sizeof cs->slot);
    for (i = 0; i < cs->n && i < SLOTS - 1; i++) {
        unsigned h;
        if (cs->items[i].key_ptr == NULL)
            continue;
        for (h = slot_of(cs->items[i].key_ptr); cs->slot[h];
             h = (h + 1) & (SLOTS - 1))
            ;
        cs->slot[h] = (uint8_t)(i + 1);
    }
}

static entry_t *find(const ks_cycle_state_t *cs, const char *key)
{
    unsigned i, h;
    /* Plugins pass the same static key string on every call, so the key's
     * address finds the candidate entry at once; its text must still be
     * the key's (a reused buffer may hold another key now). */
    for (h = slot_of(key); cs->slot[h]; h = (h + 1) & (SLOTS - 1)) {
        entry_t *e = &cs->items[cs->slot[h] - 1];
        if (e->key_ptr == key) {
            if (strcmp(entry_key(e), key) == 0)
                return e;
            break;
        }
    }
    for (i = 0; i < cs->n; i++)
        if (strcmp(entry_key(&cs->items[i]), key) == 0)
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
        if (strcmp(entry_key(&cs->items[i]), key) == 0)
            e = &cs->items[i];
        else if (cs->items[i].key_ptr == key)
            cs->items[i].key_ptr = NULL;
    }
    if (e == NULL) {
        size_t len = strlen(key);
        char *long_key = NULL;
        entry_t *items =
            ks_fw_grow(cs->items, &cs->cap, cs->n + 1, sizeof *items, 8);
        if (items == NULL)
            return -1;
        cs->items = items;
        if (len >= KEY_INLINE && (long_key = strdup(key)) == NULL)
            return -1;
        e = &cs->items[cs->n++];
        memset(e, 0, sizeof *e);
        if (long_key)
            e->long_key = long_key;
        else
            memcpy(e->key, key, len + 1);
    } else if (e->data != data) {
        entry_release(e);
    }
    e->key_ptr = key;
    e->data = data;
    e->clone_fn = clone_fn;
    e->free_fn = free_fn;
    reindex(cs);
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
    entry_drop(e);
    *e = cs->items[--cs->n];
    reindex(cs);
}

static powner_t *owner_find(const ks_cycle_state_t *cs, const void *owner)
{
    unsigned i;
    for (i = 0; i < cs->n_owners; i++)
        if (cs->owners[i].owner == owner)
            return &cs->owners[i];
    return NULL;
}

/* The owner's record, added when absent; NULL when out of memory. */
static powner_t *owner_get(ks_cycle_state_t *cs, const void *owner)
{
    powner_t *o = owner_find(cs, owner), *owners;
    if (o != NULL)
        return o;
    owners = ks_fw_grow(cs->owners, &cs->cap_owners, (size_t)cs->n_owners + 1,
                        sizeof *owners, 8);
    if (owners == NULL)
        return NULL;
    cs->owners = owners;
    o = &cs->owners[cs->n_owners++];
    memset(o, 0, sizeof *o);
    o->owner = owner;
    return o;
}

unsigned ks_cycle_state_slot_count(const ks_cycle_state_t *cs)
{
    unsigned i, k, n = 0;
    for (i = 0; i < cs->n_owners; i++)
        for (k = 0; k < KS_CS_N_SLOTS; k++)
            n += cs->owners[i].slot[k].data != NULL;
    return n;
}

int ks_cycle_state_slot_set(ks_cycle_state_t *cs, const void *owner,
                            unsigned slot, void *data,
                            ks_state_clone_fn clone_fn,
                            ks_state_free_fn free_fn)
{
    powner_t *o;
    pslot_t *p;
    if (slot >= KS_CS_N_SLOTS || (o = owner_get(cs, owner)) == NULL)
        return -1;
    p = &o->slot[slot];
    if (p->data != data)
        pslot_release(p);
    p->data = data;
    p->clone_fn = clone_fn;
    p->free_fn = free_fn;
    return 0;
}

void *ks_cycle_state_slot_get(const ks_cycle_state_t *cs, const void *owner,
                              unsigned slot)
{
    const powner_t *o;
    if (slot >= KS_CS_N_SLOTS || (o = owner_find(cs, owner)) == NULL)
        return NULL;
    return o->slot[slot].data;
}

/* Copy the plugins' slots of cs into c (empty): one array of owners in
 * cs's order, no lookups (cs holds each owner once). -1 when out of memory
 * or a clone_fn returned NULL for data that was not (c then holds what was
 * copied so far, freed by the caller). */
static int clone_slots(ks_cycle_state_t *c, const ks_cycle_state_t *cs)
{
    unsigned i, k;
    powner_t *owners;
    if (cs->n_owners == 0)
        return 0;
    owners = ks_fw_grow(c->owners, &c->cap_owners, cs->n_owners, sizeof *owners,
                        8);
    if (owners == NULL)
        return -1;
    c->owners = owners;
    for (i = 0; i < cs->n_owners; i++) {
        const powner_t *from = &cs->owners[i];
        powner_t *to = &c->owners[c->n_owners++];
        memset(to, 0, sizeof *to);
        to->owner = from->owner;
        for (k = 0; k < KS_CS_N_SLOTS; k++) {
            const pslot_t *p = &from->slot[k];
            if (p->data == NULL)
                continue;
            to->slot[k].data = p->clone_fn ? p->clone_fn(p->data) : p->data;
            if (p->clone_fn && to->slot[k].data == NULL)
                return -1;
            to->slot[k].clone_fn = p->clone_fn;
            to->slot[k].free_fn = p->clone_fn ? p->free_fn : NULL;
        }
    }
    return 0;
}

/* Copy the entries of cs into c (empty), in order, each under its own key
 * text and fast-path address: cs's keys are distinct, so no write() (a
 * search and a reindex per entry) is needed. -1 when out of memory (c
 * holds the entries copied so far, freed by the caller). */
static int clone_entries(ks_cycle_state_t *c, const ks_cycle_state_t *cs)
{
    unsigned i;
    entry_t *items;
    if (cs->n == 0)
        return 0;
    items = ks_fw_grow(c->items, &c->cap, cs->n, sizeof *items, 8);
    if (items == NULL)
        return -1;
    c->items = items;
    for (i = 0; i < cs->n; i++) {
        const entry_t *e = &cs->items[i];
        entry_t *to = &c->items[c->n];
        void *d;
        memset(to, 0, sizeof *to);
        if (e->long_key != NULL &&
            (to->long_key = strdup(e->long_key)) == NULL)
            return -1;
        if (e->long_key == NULL)
            memcpy(to->key, e->key, strlen(e->key) + 1);
        d = e->clone_fn ? e->clone_fn(e->data) : e->data;
        to->key_ptr = e->key_ptr; /* compared, never read */
        to->data = d;
        to->clone_fn = e->clone_fn;
        to->free_fn = e->clone_fn ? e->free_fn : NULL;
        c->n++;
    }
    return 0;
}

int ks_cycle_state_refill(ks_cycle_state_t *c, const ks_cycle_state_t *cs)
{
    ks_cycle_state_clear(c);
    if (clone_slots(c, cs) != 0 || clone_entries(c, cs) != 0) {
        ks_cycle_state_clear(c);
        return -1;
    }
    c->skip_filter = cs->skip_filter;
    c->skip_score = cs->skip_score;
    reindex(c);
    return 0;
}

ks_cycle_state_t *ks_cycle_state_clone(const ks_cycle_state_t *cs)
{
    ks_cycle_state_t *c = ks_cycle_state_new();
    if (c != NULL && ks_cycle_state_refill(c, cs) != 0) {
        ks_cycle_state_free(c);
        return NULL;
    }
    return c;
}
