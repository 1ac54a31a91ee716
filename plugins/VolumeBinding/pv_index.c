/*
 * The PV index: Filter's candidates for FindMatchingVolume without walking
 * every PV for every node.
 *
 * Built from one walk of the PV store (its positions are the walk's order,
 * the order the full walk sees, so ties are broken the same way), rebuilt
 * when the store's version changes. It lists each PV's position under
 *
 *   'h' class + hostname  for a PV whose required node affinity is exactly
 *                         one term with one `kubernetes.io/hostname In
 *                         [values]` expression (and no matchFields): once
 *                         per value;
 *   'o' class             for every other PV of the class (any other node
 *                         affinity shape, or none): they may match any
 *                         node;
 *   'c' claimRef name     for a PV whose stored claimRef is present (a PV
 *                         pre-bound to the claim is chosen whatever its
 *                         node affinity, or decides "none");
 *   'n' PV name           every PV (the assume cache names PVs).
 *
 * A PV of the claim's class that is listed under neither the node's
 * hostname nor 'o' has a node affinity that fails on the node, so the full
 * walk can only take it as pre-bound: the 'c' list and the assume cache's
 * claimRefs cover those. The candidates, in store order, therefore give
 * the full walk's answer.
 *
 * It keeps the PVs' views: the SDK says objects are immutable and only an
 * update or delete replaces or frees one, and either changes the store's
 * version, so a view read at the version the index was built from is
 * the stored object as long as that version holds.
 *
 * Threads: Filter workers acquire it for reading; the first one to see a
 * new store version rebuilds it under the write lock (stores do not change
 * while Filter runs).
 */
#include <stdlib.h>
#include <string.h>

#include "vb.h"

typedef struct slot {
    char *key; /* NULL: empty */
    size_t klen;
    uint64_t hash;
    uint32_t *pos; /* ascending */
    uint32_t n, cap;
} slot_t;

struct vb_pv_index {
    pthread_rwlock_t lock;
    int built;
    uint64_t version; /* the store version it was built from */
    slot_t *slots;
    uint32_t n_slots, used; /* n_slots a power of two */
    const ks_object_t **objs; /* the PV by position */
    uint32_t n_pvs, cap_pvs;
};

vb_pv_index_t *vb_pv_index_new(void)
{
    vb_pv_index_t *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    if (pthread_rwlock_init(&x->lock, NULL) != 0) {
        free(x);
        return NULL;
    }
    return x;
}

static void clear(vb_pv_index_t *x)
{
    uint32_t i;
    for (i = 0; i < x->n_slots; i++) {
        free(x->slots[i].key);
        free(x->slots[i].pos);
    }
    free(x->slots);
    x->slots = NULL;
    x->n_slots = x->used = 0;
    free(x->objs);
    x->objs = NULL;
    x->n_pvs = x->cap_pvs = 0;
    x->built = 0;
}

void vb_pv_index_free(vb_pv_index_t *x)
{
    if (x == NULL)
        return;
    clear(x);
    pthread_rwlock_destroy(&x->lock);
    free(x);
}

/* --- keys -------------------------------------------------------------------- */

/* kind, a, and when b is set a NUL and b: into buf (len bytes), or a new
 * allocation when it does not fit (*heap set; the caller frees it). */
typedef struct key {
    char *p;
    size_t len;
    char *heap;
} ix_key_t;

static int key_make(ix_key_t *k, char *buf, size_t cap, char kind,
                    const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    size_t len = 1 + la + (b ? 1 + lb : 0);
    k->heap = NULL;
    k->p = buf;
    if (len > cap) {
        k->heap = malloc(len);
        if (k->heap == NULL)
            return -1;
        k->p = k->heap;
    }
    k->p[0] = kind;
    memcpy(k->p + 1, a, la);
    if (b) {
        k->p[1 + la] = '\0';
        memcpy(k->p + 2 + la, b, lb);
    }
    k->len = len;
    return 0;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static const slot_t *lookup(const vb_pv_index_t *x, const ix_key_t *k)
{
    uint64_t h;
    uint32_t i, mask;
    if (x->n_slots == 0)
        return NULL;
    h = hash_bytes(k->p, k->len);
    mask = x->n_slots - 1;
    for (i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        const slot_t *s = &x->slots[i];
        if (s->key == NULL)
            return NULL;
        if (s->hash == h && s->klen == k->len &&
            memcmp(s->key, k->p, k->len) == 0)
            return s;
    }
}

static int grow(vb_pv_index_t *x)
{
    uint32_t n = x->n_slots ? x->n_slots * 2 : 64, i, mask = n - 1;
    slot_t *ns = calloc(n, sizeof *ns);
    if (ns == NULL)
        return -1;
    for (i = 0; i < x->n_slots; i++) {
        slot_t *s = &x->slots[i];
        uint32_t j;
        if (s->key == NULL)
            continue;
        for (j = (uint32_t)s->hash & mask; ns[j].key; j = (j + 1) & mask)
            ;
        ns[j] = *s;
    }
    free(x->slots);
    x->slots = ns;
    x->n_slots = n;
    return 0;
}

/* List position `pos` under the key (positions come in ascending order;
 * a repeat of the last one is dropped). */
static int add(vb_pv_index_t *x, char kind, const char *a, const char *b,
               uint32_t pos)
{
    char buf[256];
    ix_key_t k;
    uint64_t h;
    uint32_t i, mask;
    slot_t *s;
    int rc = -1;
    if (key_make(&k, buf, sizeof buf, kind, a, b) != 0)
        return -1;
    if ((x->used + 1) * 4 > x->n_slots * 3 && grow(x) != 0)
        goto out;
    h = hash_bytes(k.p, k.len);
    mask = x->n_slots - 1;
    for (i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        s = &x->slots[i];
        if (s->key == NULL) {
            s->key = malloc(k.len);
            if (s->key == NULL)
                goto out;
            memcpy(s->key, k.p, k.len);
            s->klen = k.len;
            s->hash = h;
            x->used++;
            break;
        }
        if (s->hash == h && s->klen == k.len &&
            memcmp(s->key, k.p, k.len) == 0)
            break;
    }
    if (s->n > 0 && s->pos[s->n - 1] == pos) {
        rc = 0;
        goto out;
    }
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 2;
        uint32_t *np = realloc(s->pos, nc * sizeof *np);
        if (np == NULL)
            goto out;
        s->pos = np;
        s->cap = nc;
    }
    s->pos[s->n++] = pos;
    rc = 0;
out:
    free(k.heap);
    return rc;
}

/* --- building ------------------------------------------------------------------ */

#define TERMS "spec.nodeAffinity.required.nodeSelectorTerms"
#define EXPR TERMS "[0].matchExpressions[0]"

/* The number of hostname values when the PV's node affinity is exactly
 * one `kubernetes.io/hostname In [...]` requirement, else 0. */
static uint32_t hostname_values(const vb_t *v, const ks_object_t *pv)
{
    uint32_t n = 0;
    if (!vb_has(v, pv, "spec.nodeAffinity") ||
        !vb_has(v, pv, "spec.nodeAffinity.required"))
        return 0;
    if (v->api->object_len(pv, TERMS, &n) != KS_FIELD_OK || n != 1)
        return 0;
    if (v->api->object_len(pv, TERMS "[0].matchExpressions", &n) !=
            KS_FIELD_OK ||
        n != 1)
        return 0;
    n = 0;
    (void)v->api->object_len(pv, TERMS "[0].matchFields", &n);
    if (n != 0)
        return 0;
    if (strcmp(vb_str(v, pv, EXPR ".key"), LABEL_HOSTNAME) != 0 ||
        strcmp(vb_str(v, pv, EXPR ".operator"), "In") != 0)
        return 0;
    n = 0;
    if (v->api->object_len(pv, EXPR ".values", &n) != KS_FIELD_OK)
        return 0;
    return n;
}

typedef struct build_ud {
    const vb_t *v;
    vb_pv_index_t *x;
    int failed;
} build_ud_t;

static int build_fn(const ks_object_t *pv, void *ud)
{
    build_ud_t *b = ud;
    const vb_t *v = b->v;
    vb_pv_index_t *x = b->x;
    const char *name = v->api->object_name(pv);
    const char *cls = vb_volume_class(v, pv);
    uint32_t pos = x->n_pvs, n, i;
    if (pos > VB_CAND_POS)
        goto fail; /* positions need the flag bits free */
    if (x->n_pvs == x->cap_pvs) {
        uint32_t nc = x->cap_pvs ? x->cap_pvs * 2 : 64;
        const ks_object_t **no = realloc(x->objs, nc * sizeof *no);
        if (no == NULL)
            goto fail;
        x->objs = no;
        x->cap_pvs = nc;
    }
    x->objs[pos] = pv;
    x->n_pvs++;
    if (add(x, 'n', name, NULL, pos) != 0)
        goto fail;
    if (vb_has(v, pv, "spec.claimRef") &&
        add(x, 'c', vb_str(v, pv, "spec.claimRef.name"), NULL, pos) != 0)
        goto fail;
    n = hostname_values(v, pv);
    if (n == 0)
        return add(x, 'o', cls, NULL, pos) != 0 ? (b->failed = 1) : 0;
    for (i = 0; i < n; i++) {
        char p[sizeof EXPR ".values[4294967295]"];
        vb_pathf(p, sizeof p, EXPR ".values[%u]", i);
        if (add(x, 'h', cls, vb_str(v, pv, p), pos) != 0)
            goto fail;
    }
    return 0;
fail:
    b->failed = 1;
    return 1;
}

static int build(vb_pv_index_t *x, const vb_t *v)
{
    build_ud_t b = {v, x, 0};
    clear(x);
    (void)v->api->object_list(v->pvs, NULL, NULL, build_fn, &b);
    if (b.failed) {
        clear(x);
        return -1;
    }
    x->built = 1;
    return 0;
}

const vb_pv_index_t *vb_pv_index_acquire(const vb_t *v)
{
    vb_pv_index_t *x = v->pv_index;
    uint64_t ver;
    if (x == NULL || !KS_API_HAS(v->api, store_version))
        return NULL;
    ver = v->api->store_version(v->pvs);
    pthread_rwlock_rdlock(&x->lock);
    if (x->built && x->version == ver)
        return x;
    pthread_rwlock_unlock(&x->lock);
    pthread_rwlock_wrlock(&x->lock);
    if (!x->built || x->version != ver) {
        if (build(x, v) == 0)
            x->version = ver;
    }
    pthread_rwlock_unlock(&x->lock);
    pthread_rwlock_rdlock(&x->lock);
    if (x->built && x->version == ver)
        return x;
    pthread_rwlock_unlock(&x->lock);
    return NULL;
}

void vb_pv_index_release(const vb_pv_index_t *x)
{
    if (x != NULL)
        pthread_rwlock_unlock(&((vb_pv_index_t *)x)->lock);
}

/* --- candidates ----------------------------------------------------------------- */

static const slot_t *find(const vb_pv_index_t *x, char kind, const char *a,
                          const char *b)
{
    char buf[256];
    ix_key_t k;
    const slot_t *s;
    if (key_make(&k, buf, sizeof buf, kind, a, b) != 0)
        return NULL;
    s = lookup(x, &k);
    free(k.heap);
    return s;
}

static int cmp_pos(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a & VB_CAND_POS,
             y = *(const uint32_t *)b & VB_CAND_POS;
    return (x > y) - (x < y);
}

static int push(vb_pv_cands_t *c, uint32_t pos)
{
    if (c->n == c->cap) {
        uint32_t nc = c->cap * 2;
        uint32_t *np;
        if (c->pos == c->inline_pos) {
            np = malloc(nc * sizeof *np);
            if (np != NULL)
                memcpy(np, c->pos, c->n * sizeof *np);
        } else {
            np = realloc(c->pos, nc * sizeof *np);
        }
        if (np == NULL)
            return -1;
        c->pos = np;
        c->cap = nc;
    }
    c->pos[c->n++] = pos;
    return 0;
}

static int push_slot(vb_pv_cands_t *c, const slot_t *s, uint32_t flags)
{
    uint32_t i;
    for (i = 0; s != NULL && i < s->n; i++)
        if (push(c, s->pos[i] | flags) != 0)
            return -1;
    return 0;
}

void vb_pv_cands_init(vb_pv_cands_t *c)
{
    c->pos = c->inline_pos;
    c->n = 0;
    c->cap = sizeof c->inline_pos / sizeof c->inline_pos[0];
}

void vb_pv_cands_free(vb_pv_cands_t *c)
{
    if (c->pos != c->inline_pos)
        free(c->pos);
    vb_pv_cands_init(c);
}

int vb_pv_index_candidates(const vb_pv_index_t *x, const char *cls,
                           const char *host, const char *claim_name,
                           vb_pv_cands_t *c)
{
    uint32_t i, w;
    const slot_t *s;
    if ((s = find(x, 'o', cls, NULL)) != NULL) {
        if (push_slot(c, s, VB_CAND_CLASS) != 0)
            return -1;
    }
    if (host != NULL && (s = find(x, 'h', cls, host)) != NULL) {
        /* one hostname In requirement that holds the node's hostname:
         * it matches the node */
        if (push_slot(c, s, VB_CAND_CLASS | VB_CAND_AFFINITY) != 0)
            return -1;
    }
    if ((s = find(x, 'c', claim_name, NULL)) != NULL) {
        if (push_slot(c, s, 0) != 0)
            return -1;
    }
    if (c->n > 1) {
        /* store order, each once (a PV may be listed under the hostname
         * and its claimRef, or was pushed by vb_pv_index_add_name) */
        if (c->n > 16) {
            qsort(c->pos, c->n, sizeof *c->pos, cmp_pos);
        } else {
            for (i = 1; i < c->n; i++) {
                uint32_t p = c->pos[i], j = i;
                for (; j > 0 && (c->pos[j - 1] & VB_CAND_POS) >
                                    (p & VB_CAND_POS);
                     j--)
                    c->pos[j] = c->pos[j - 1];
                c->pos[j] = p;
            }
        }
        /* a repeat keeps what any of its lists knew */
        for (i = w = 0; i < c->n; i++) {
            if (w > 0 && ((c->pos[w - 1] ^ c->pos[i]) & VB_CAND_POS) == 0)
                c->pos[w - 1] |= c->pos[i];
            else
                c->pos[w++] = c->pos[i];
        }
        c->n = w;
    }
    return 0;
}

int vb_pv_index_add_name(const vb_pv_index_t *x, const char *pv_name,
                         vb_pv_cands_t *c)
{
    const slot_t *s = find(x, 'n', pv_name, NULL);
    return push_slot(c, s, 0);
}

const ks_object_t *vb_pv_index_object(const vb_pv_index_t *x, uint32_t cand)
{
    uint32_t pos = cand & VB_CAND_POS;
    return pos < x->n_pvs ? x->objs[pos] : NULL;
}
