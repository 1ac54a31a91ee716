/*
 * String interning: an open-addressing hash set of string pointers. Pinned
 * strings' bytes live in chunked arenas owned by the table and stay until
 * ks_intern_free(); counted strings are malloc'd one by one and freed with
 * their last reference (a counted string that gets pinned stays). One
 * mutex guards the whole table; strings never move.
 */
#include "base/intern.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

#define KS_INTERN_CHUNK (64 * 1024)

typedef struct intern_chunk {
    struct intern_chunk *next;
    size_t size, used;
    char data[];
} intern_chunk_t;

#define PINNED UINT32_MAX

typedef struct intern_slot {
    const char *s; /* NULL: empty slot */
    uint32_t len;
    uint32_t hash; /* low 32 bits of the full hash */
    uint32_t refs; /* PINNED, or the counted references */
    uint32_t owned; /* s was malloc'd (a counted string) */
} intern_slot_t;

struct ks_intern {
    pthread_mutex_t lock;
    intern_slot_t *slots;
    size_t cap;   /* power of two */
    size_t count;
    size_t counted_bytes;
    intern_chunk_t *chunks; /* head: the chunk being filled */
    const char *empty;
};

static char *intern_store(ks_intern_t *t, const char *s, size_t n)
{
    intern_chunk_t *c = t->chunks;
    char *p;
    if (c == NULL || c->size - c->used < n + 1) {
        size_t size = KS_INTERN_CHUNK;
        if (n + 1 > size / 4)
            size = n + 1; /* a big string gets a chunk of its own */
        c = malloc(sizeof(*c) + size);
        if (c == NULL)
            return NULL;
        c->size = size;
        c->used = 0;
        if (size == n + 1 && t->chunks != NULL) {
            /* keep filling the current chunk: link the big one behind it */
            c->next = t->chunks->next;
            t->chunks->next = c;
        } else {
            c->next = t->chunks;
            t->chunks = c;
        }
    }
    p = c->data + c->used;
    memcpy(p, s, n);
    p[n] = '\0';
    c->used += n + 1;
    return p;
}

static int intern_grow(ks_intern_t *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 1024, i;
    intern_slot_t *ns = calloc(ncap, sizeof(*ns));
    if (ns == NULL)
        return -1;
    for (i = 0; i < t->cap; i++) {
        const intern_slot_t *o = &t->slots[i];
        size_t j;
        if (o->s == NULL)
            continue;
        j = o->hash & (ncap - 1);
        while (ns[j].s != NULL)
            j = (j + 1) & (ncap - 1);
        ns[j] = *o;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

/* The slot holding `s` (n bytes) or the empty slot where it would go.
 * Caller holds the lock; cap > 0. */
static size_t intern_find(const ks_intern_t *t, const char *s, size_t n,
                          uint32_t h)
{
    size_t j = h & (t->cap - 1);
    while (t->slots[j].s != NULL) {
        const intern_slot_t *e = &t->slots[j];
        if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0)
            return j;
        j = (j + 1) & (t->cap - 1);
    }
    return j;
}

/* Caller holds the lock. counted: take a reference; else pin. */
static const char *intern_locked(ks_intern_t *t, const char *s, size_t n,
                                 int counted)
{
    uint32_t h;
    size_t j;
    char *p;
    if (n > UINT32_MAX)
        return NULL;
    if ((t->count + 1) * 10 > t->cap * 7 && intern_grow(t) != 0)
        return NULL;
    h = (uint32_t)ks_hash_bytes(s, n);
    j = intern_find(t, s, n, h);
    if (t->slots[j].s != NULL) {
        intern_slot_t *e = &t->slots[j];
        if (!counted)
            e->refs = PINNED;
        else if (e->refs != PINNED && e->refs < PINNED - 1)
            e->refs++;
        else if (e->refs != PINNED)
            e->refs = PINNED; /* too many references: keep it for good */
        return e->s;
    }
    if (counted) {
        p = malloc(n + 1);
        if (p == NULL)
            return NULL;
        memcpy(p, s, n);
        p[n] = '\0';
        t->counted_bytes += n + 1;
    } else if ((p = intern_store(t, s, n)) == NULL) {
        return NULL;
    }
    t->slots[j].s = p;
    t->slots[j].len = (uint32_t)n;
    t->slots[j].hash = h;
    t->slots[j].refs = counted ? 1 : PINNED;
    t->slots[j].owned = (uint32_t)counted;
    t->count++;
    return p;
}

/* Remove slot j, shifting later entries of its probe run back. */
static void intern_delete_slot(ks_intern_t *t, size_t j)
{
    size_t mask = t->cap - 1, k = (j + 1) & mask;
    t->slots[j].s = NULL;
    while (t->slots[k].s != NULL) {
        size_t home = t->slots[k].hash & mask;
        /* Move k back to j unless its home lies in (j, k]. */
        if ((j <= k) ? (home <= j || home > k) : (home <= j && home > k)) {
            t->slots[j] = t->slots[k];
            t->slots[k].s = NULL;
            j = k;
        }
        k = (k + 1) & mask;
    }
    t->count--;
}

ks_intern_t *ks_intern_new(void)
{
    ks_intern_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    t->empty = intern_locked(t, "", 0, 0);
    if (t->empty == NULL) {
        ks_intern_free(t);
        return NULL;
    }
    return t;
}

void ks_intern_free(ks_intern_t *t)
{
    intern_chunk_t *c, *next;
    if (t == NULL)
        return;
    for (c = t->chunks; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].s != NULL && t->slots[i].owned)
            free((char *)t->slots[i].s);
    free(t->slots);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

const char *ks_intern_strn(ks_intern_t *t, const char *s, size_t n)
{
    const char *r;
    if (n == 0)
        return t->empty;
    pthread_mutex_lock(&t->lock);
    r = intern_locked(t, s, n, 0);
    pthread_mutex_unlock(&t->lock);
    return r;
}

const char *ks_intern_ref(ks_intern_t *t, const char *s, size_t n)
{
    const char *r;
    if (n == 0)
        return t->empty;
    pthread_mutex_lock(&t->lock);
    r = intern_locked(t, s, n, 1);
    pthread_mutex_unlock(&t->lock);
    return r;
}

void ks_intern_unref(ks_intern_t *t, const char *s)
{
    size_t n, j;
    if (s == NULL || s == t->empty || s[0] == '\0')
        return;
    n = strlen(s);
    pthread_mutex_lock(&t->lock);
    j = intern_find(t, s, n, (uint32_t)ks_hash_bytes(s, n));
    if (t->slots[j].s == s && t->slots[j].refs != PINNED &&
        --t->slots[j].refs == 0) {
        t->counted_bytes -= n + 1;
        intern_delete_slot(t, j);
        free((char *)s);
    }
    pthread_mutex_unlock(&t->lock);
}

const char *ks_intern_lookup(ks_intern_t *t, const char *s)
{
    size_t n = strlen(s), j;
    const char *r = NULL;
    if (n == 0)
        return t->empty;
    pthread_mutex_lock(&t->lock);
    j = intern_find(t, s, n, (uint32_t)ks_hash_bytes(s, n));
    r = t->slots[j].s;
    pthread_mutex_unlock(&t->lock);
    return r;
}

size_t ks_intern_count(ks_intern_t *t)
{
    size_t n;
    pthread_mutex_lock(&t->lock);
    n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

size_t ks_intern_counted_bytes(ks_intern_t *t)
{
    size_t n;
    pthread_mutex_lock(&t->lock);
    n = t->counted_bytes;
    pthread_mutex_unlock(&t->lock);
    return n;
}

const char *ks_intern_str(ks_intern_t *t, const char *s)
{
    return ks_intern_strn(t, s, strlen(s));
}

const char *ks_intern_empty(ks_intern_t *t)
{
    return t->empty;
}

static ks_intern_t *g_intern;
static pthread_once_t g_intern_once = PTHREAD_ONCE_INIT;

static void intern_global_init(void)
{
    g_intern = ks_intern_new();
}

ks_intern_t *ks_intern_global(void)
{
    pthread_once(&g_intern_once, intern_global_init);
    return g_intern;
}
