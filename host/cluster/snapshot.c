/*
 * Snapshots (upstream internal/cache Snapshot + UpdateSnapshot). A snapshot
 * keeps its own copy of every real node's NodeInfo (pod arrays are arrays of
 * pointers into the cache's pods, so a copy is cheap), in node-name order.
 * An update walks the cache's recency list only down to the first NodeInfo
 * not newer than the snapshot, so its cost follows what changed.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

#include <stdatomic.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef struct snap_entry {
    ks_ni_t ni; /* first; not indexed */
    const char *name;
    uint32_t index; /* position in `order`, kept by rebuild_order */
    int dead;
    struct snap_entry *next_free; /* on the snapshot's free list */
} snap_entry_t;

/* Entries are carved from blocks, many to an allocation: the first update
 * of a 130,000-node cluster made as many callocs, and touching their
 * fresh memory a 4 KB page at a time (a page fault every five entries)
 * was two thirds of that update's time; a large block can take huge pages
 * (block_alloc). A dropped entry's arrays are freed and the entry itself
 * goes on a free list for the next node added; the blocks go with the
 * snapshot. */
typedef struct snap_block {
    struct snap_block *next;
    uint32_t n, used;
    size_t mapped; /* bytes mapped (block_alloc's large way), or 0 */
    snap_entry_t e[];
} snap_block_t;

#define SNAP_BLOCK_MIN 64u
#define SNAP_BLOCK_MAX 65536u
#define SNAP_BLOCK_MAP_MIN ((size_t)4 << 20) /* bytes: mapped from here */

struct ks_snapshot {
    ks_strmap_t by_name; /* name -> snap_entry_t* */
    snap_entry_t **order; /* by name */
    uint32_t n_order, cap_order;
    uint64_t generation; /* the newest cache generation seen */
    uint64_t changes;    /* NodeInfos refreshed or dropped, ever */
    ks_strmap_t images;  /* image name -> (uintptr_t) number of nodes */
    uint64_t images_gen;
    int have_images;
    /* NodeInfo pointers for plugins: every node, and those with pods that
     * have (anti-)affinity / required anti-affinity (upstream's
     * HavePodsWithAffinityList...). Rebuilt only when they change. */
    const ks_node_info_t **all, **aff, **anti;
    const char **names; /* every node's name, in the order of `all` */
    uint32_t n_aff, n_anti, cap_lists;
    /* the figures of `all` by position (cols_set), its arrays in one
     * block of cap_lists entries each; iota: 0, 1, ... */
    ks_node_columns_t cols;
    void *cols_block;
    uint32_t *iota;
    /* ks_snapshot_changed_since: the version (a stamp unique across every
     * snapshot of the process, so an aggregate kept by a plugin that
     * meets another snapshot walks it whole), the one before the last
     * change, and the positions that change refreshed in place (chg_all:
     * it added or dropped nodes, or the list could not be kept) */
    uint64_t version, prev_version;
    uint32_t *chg, n_chg, cap_chg;
    int chg_all;
    /* The positions refreshed in place by every update since log_floor
     * (a version), in order; marks[k]: the version an update ended at and
     * the log's length then. An update that added or dropped nodes
     * restarts the log; a full log keeps its newer half. So an aggregate
     * last used many cycles ago (one of PodTopologySpread's per-selector
     * aggregates, pods of many ReplicaSets interleaved) refreshes only
     * what changed since, not every node. */
    uint32_t *log, n_log, cap_log;
    struct snap_mark {
        uint64_t version;
        uint32_t end;
    } *marks;
    uint32_t n_marks, cap_marks;
    uint64_t log_floor;
    snap_block_t *blocks;       /* newest first; entries from its tail */
    snap_entry_t *free_entries; /* dropped entries, their arrays freed */
};

#define SNAP_LOG_MAX 65536u /* positions, and marks, kept at most */


/* The version stamps of every snapshot (ks_snapshot_changed_since). */
static atomic_uint_fast64_t version_clock;

static void version_bump(ks_snapshot_t *s)
{
    s->prev_version = s->version;
    s->version = atomic_fetch_add(&version_clock, 1) + 1;
}

/* Position i's columns from its NodeInfo. */
static void cols_set(ks_snapshot_t *s, uint32_t i, const ks_node_info_t *ni)
{
    ks_node_columns_t *c = &s->cols;
    const ks_node_t *node = ni->node;
    static const ks_resources_t none;
    const ks_resources_t *al = node ? &node->allocatable : &none;
    uint8_t f = 0;
    if (node == NULL)
        f = KS_COL_NO_NODE;
    else {
        if (node->unschedulable)
            f |= KS_COL_UNSCHEDULABLE;
        if (node->n_taints > 0)
            f |= KS_COL_TAINTED;
    }
    /* the block is the snapshot's own: the columns are const for
     * plugins only */
    ((uint8_t *)c->flags)[i] = f;
    ((uint32_t *)c->n_pods)[i] = ni->n_pods;
    ((int64_t *)c->alloc_milli_cpu)[i] = al->milli_cpu;
    ((int64_t *)c->alloc_memory)[i] = al->memory;
    ((int64_t *)c->alloc_ephemeral)[i] = al->ephemeral_storage;
    ((int64_t *)c->alloc_pods)[i] = al->allowed_pods;
    ((int64_t *)c->req_milli_cpu)[i] = ni->requested.milli_cpu;
    ((int64_t *)c->req_memory)[i] = ni->requested.memory;
    ((int64_t *)c->req_ephemeral)[i] = ni->requested.ephemeral_storage;
    ((int64_t *)c->nz_milli_cpu)[i] = ni->non_zero_requested.milli_cpu;
    ((int64_t *)c->nz_memory)[i] = ni->non_zero_requested.memory;
}

/* Room for cap entries in every column (their old contents are not kept:
 * rebuild_lists fills them). 0, or -1 on ENOMEM (the old block kept). */
static int cols_alloc(ks_snapshot_t *s, uint32_t cap)
{
    enum { N64 = 9 };
    size_t c8 = (size_t)cap * sizeof(int64_t);
    size_t c4 = ((size_t)cap * sizeof(uint32_t) + 7) & ~(size_t)7;
    char *b = malloc(N64 * c8 + 2 * c4 + cap);
    ks_node_columns_t *c = &s->cols;
    if (b == NULL)
        return -1;
    free(s->cols_block);
    s->cols_block = b;
    c->alloc_milli_cpu = (const int64_t *)(void *)b;
    c->alloc_memory = c->alloc_milli_cpu + cap;
    c->alloc_ephemeral = c->alloc_memory + cap;
    c->alloc_pods = c->alloc_ephemeral + cap;
    c->req_milli_cpu = c->alloc_pods + cap;
    c->req_memory = c->req_milli_cpu + cap;
    c->req_ephemeral = c->req_memory + cap;
    c->nz_milli_cpu = c->req_ephemeral + cap;
    c->nz_memory = c->nz_milli_cpu + cap;
    b += N64 * c8;
    c->n_pods = (const uint32_t *)(void *)b;
    s->iota = (uint32_t *)(void *)(b + c4);
    c->flags = (const uint8_t *)(b + 2 * c4);
    return 0;
}

static int rebuild_lists(ks_snapshot_t *s)
{
    uint32_t i;
    if (s->n_order > s->cap_lists || s->all == NULL) {
        uint32_t cap = s->n_order + s->n_order / 4 + 16;
        const ks_node_info_t **a = realloc(s->all, cap * sizeof(*a));
        const ks_node_info_t **b, **c;
        if (a == NULL)
            return -1;
        s->all = a;
        b = realloc(s->aff, cap * sizeof(*b));
        if (b == NULL)
            return -1;
        s->aff = b;
        const char **d;
        c = realloc(s->anti, cap * sizeof(*c));
        if (c == NULL)
            return -1;
        s->anti = c;
        d = realloc(s->names, cap * sizeof(*d));
        if (d == NULL)
            return -1;
        s->names = d;
        if (cols_alloc(s, cap) != 0)
            return -1;
        for (i = 0; i < cap; i++)
            s->iota[i] = i;
        s->cap_lists = cap;
    }
    s->cols.n = s->n_order;
    s->n_aff = s->n_anti = 0;
    for (i = 0; i < s->n_order; i++) {
        const ks_node_info_t *ni = &s->order[i]->ni.pub;
        s->all[i] = ni;
        s->names[i] = ni->node ? ni->node->name : s->order[i]->name;
        cols_set(s, i, ni);
        if (ni->n_pods_with_affinity > 0)
            s->aff[s->n_aff++] = ni;
        if (ni->n_pods_with_required_anti_affinity > 0)
            s->anti[s->n_anti++] = ni;
    }
    return 0;
}

/* Put e's NodeInfo into, or take it out of, a list kept in snapshot order
 * (aff or anti, n entries, room for every node), as `member` says: a
 * binary search by position and a move of the tail. */
static void list_set(const ks_node_info_t **list, uint32_t *n,
                     const snap_entry_t *e, int member)
{
    uint32_t lo = 0, hi = *n;
    int present;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        /* a list entry is the NodeInfo first in its snap_entry_t */
        if (((const snap_entry_t *)(const void *)list[mid])->index < e->index)
            lo = mid + 1;
        else
            hi = mid;
    }
    present = lo < *n && list[lo] == &e->ni.pub;
    if (member && !present) {
        memmove(list + lo + 1, list + lo, (*n - lo) * sizeof *list);
        list[lo] = &e->ni.pub;
        (*n)++;
    } else if (!member && present) {
        memmove(list + lo, list + lo + 1, (*n - lo - 1) * sizeof *list);
        (*n)--;
    }
}

/* Room for one more entry in a growable array of n entries (the update's
 * added and flipped entries). 0, or -1 on ENOMEM (nothing changed). */
static int entries_room(snap_entry_t ***arr, uint32_t n, uint32_t *cap)
{
    if (n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 16;
        snap_entry_t **na = realloc(*arr, ncap * sizeof *na);
        if (na == NULL)
            return -1;
        *arr = na;
        *cap = ncap;
    }
    return 0;
}

/* The node lists after an update: rebuilt whole when `full` (nodes came or
 * went, or the flips are unknown), else only the n flipped entries moved.
 * 0, or -1 on ENOMEM. */
static int update_lists(ks_snapshot_t *s, snap_entry_t *const *flip,
                        uint32_t n, int full)
{
    uint32_t i;
    if (full)
        return rebuild_lists(s);
    for (i = 0; i < n; i++) {
        list_set(s->aff, &s->n_aff, flip[i],
                 flip[i]->ni.pub.n_pods_with_affinity > 0);
        list_set(s->anti, &s->n_anti, flip[i],
                 flip[i]->ni.pub.n_pods_with_required_anti_affinity > 0);
    }
    return 0;
}

const ks_node_info_t *const *ks_snapshot_nodes(const ks_snapshot_t *s,
                                               uint32_t *n)
{
    *n = s->all ? s->n_order : 0;
    return s->all;
}

const char *const *ks_snapshot_node_names(const ks_snapshot_t *s)
{
    return s->all ? s->names : NULL;
}

const ks_node_columns_t *ks_snapshot_columns(const ks_snapshot_t *s)
{
    return s->all ? &s->cols : NULL;
}

const uint32_t *ks_snapshot_positions(const ks_snapshot_t *s)
{
    return s->all ? s->iota : NULL;
}

const ks_node_info_t *const *ks_snapshot_nodes_with_affinity(
    const ks_snapshot_t *s, uint32_t *n)
{
    *n = s->aff ? s->n_aff : 0;
    return s->aff;
}

const ks_node_info_t *const *ks_snapshot_nodes_with_required_anti_affinity(
    const ks_snapshot_t *s, uint32_t *n)
{
    *n = s->anti ? s->n_anti : 0;
    return s->anti;
}

ks_snapshot_t *ks_snapshot_new(void)
{
    ks_snapshot_t *s = calloc(1, sizeof(ks_snapshot_t));
    if (s != NULL) {
        version_bump(s); /* a stamp of its own from the start */
        s->chg_all = 1;
    }
    return s;
}

/* A zeroed block of n entries. A large one (a first update of thousands
 * of nodes: 760 bytes an entry) is mapped with transparent huge pages
 * where the system offers them on request: on a virtual machine a page
 * fault costs microseconds, and 4 KB pages meant one fault for every five
 * entries. */
static snap_block_t *block_alloc(uint32_t n)
{
    size_t size = sizeof(snap_block_t) + (size_t)n * sizeof(snap_entry_t);
    snap_block_t *b;
#if defined(MADV_HUGEPAGE)
    if (size >= SNAP_BLOCK_MAP_MIN) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            (void)madvise(p, size, MADV_HUGEPAGE); /* advice only */
            b = p; /* zero, as every fresh anonymous mapping */
            b->mapped = size;
            b->n = n;
            return b;
        }
    }
#endif
    b = calloc(1, size);
    if (b != NULL)
        b->n = n;
    return b;
}

static void block_free(snap_block_t *b)
{
#if defined(MADV_HUGEPAGE)
    if (b->mapped > 0) {
        munmap(b, b->mapped);
        return;
    }
#endif
    free(b);
}

/* A zeroed entry: a dropped one, or the next of the newest block, or the
 * first of a new block sized for `want` more (clamped). NULL on ENOMEM. */
static snap_entry_t *entry_new(ks_snapshot_t *s, size_t want)
{
    snap_entry_t *e = s->free_entries;
    snap_block_t *b = s->blocks;
    if (e != NULL) {
        s->free_entries = e->next_free;
        memset(e, 0, sizeof *e);
        return e;
    }
    if (b == NULL || b->used == b->n) {
        uint32_t n = want < SNAP_BLOCK_MIN   ? SNAP_BLOCK_MIN
                     : want > SNAP_BLOCK_MAX ? SNAP_BLOCK_MAX
                                             : (uint32_t)want;
        if ((b = block_alloc(n)) == NULL)
            return NULL;
        b->next = s->blocks;
        s->blocks = b;
    }
    return &b->e[b->used++]; /* zero from calloc */
}

static void entry_free(ks_snapshot_t *s, snap_entry_t *e)
{
    ks_ni_destroy(&e->ni);
    e->next_free = s->free_entries;
    s->free_entries = e;
}

void ks_snapshot_free(ks_snapshot_t *s)
{
    uint32_t i;
    if (s == NULL)
        return;
    for (i = 0; i < s->n_order; i++)
        ks_ni_destroy(&s->order[i]->ni);
    while (s->blocks != NULL) {
        snap_block_t *b = s->blocks;
        s->blocks = b->next;
        block_free(b);
    }
    free(s->order);
    free(s->chg);
    free(s->log);
    free(s->marks);
    free(s->names);
    free(s->cols_block);
    free(s->all);
    free(s->aff);
    free(s->anti);
    ks_strmap_destroy(&s->by_name);
    ks_strmap_destroy(&s->images);
    free(s);
}

static int cmp_entry(const void *a, const void *b)
{
    const snap_entry_t *x = *(const snap_entry_t *const *)a;
    const snap_entry_t *y = *(const snap_entry_t *const *)b;
    return strcmp(x->name, y->name);
}

static void renumber(ks_snapshot_t *s)
{
    uint32_t i;
    for (i = 0; i < s->n_order; i++) {
        s->order[i]->index = i;
        s->order[i]->ni.pub.snapshot_pos = i + 1;
    }
}

/* Drop dead entries and merge the sorted `added` into the order. */
static int rebuild_order(ks_snapshot_t *s, snap_entry_t **added,
                         uint32_t n_added, int have_dead)
{
    uint32_t i, j, k, live = 0;
    snap_entry_t **merged;
    uint32_t total;
    if (have_dead) {
        for (i = 0; i < s->n_order; i++) {
            if (s->order[i]->dead)
                entry_free(s, s->order[i]);
            else
                s->order[live++] = s->order[i];
        }
        s->n_order = live;
        renumber(s);
    }
    if (n_added == 0)
        return 0;
    qsort(added, n_added, sizeof(*added), cmp_entry);
    total = s->n_order + n_added;
    merged = malloc((size_t)total * sizeof(*merged));
    if (merged == NULL)
        return -1;
    for (i = j = k = 0; i < s->n_order || j < n_added;) {
        if (j == n_added ||
            (i < s->n_order && strcmp(s->order[i]->name, added[j]->name) < 0))
            merged[k++] = s->order[i++];
        else
            merged[k++] = added[j++];
    }
    free(s->order);
    s->order = merged;
    s->n_order = total;
    s->cap_order = total;
    renumber(s);
    return 0;
}

static int copy_images(ks_cache_t *c, ks_snapshot_t *s)
{
    size_t i;
    if (s->have_images && s->images_gen == c->images_gen)
        return 0;
    ks_strmap_clear(&s->images);
    if (ks_strmap_reserve(&s->images, c->images.count) != 0)
        return -1;
    for (i = 0; i < c->images.cap; i++)
        if (c->images.slots[i].key != NULL &&
            ks_strmap_put(&s->images, c->images.slots[i].key,
                          c->images.slots[i].val) != 0)
            return -1;
    s->images_gen = c->images_gen;
    s->have_images = 1;
    return 0;
}

/* Keep the newer half of a full log (the older marks and positions go,
 * log_floor becomes the last version dropped). */
static void log_trim(ks_snapshot_t *s)
{
    uint32_t k = 0, cut, i;
    while (k < s->n_marks &&
           (s->marks[k].end <= s->n_log / 2 || k < s->n_marks / 2))
        k++;
    if (k == 0)
        k = 1;
    if (k >= s->n_marks) {
        s->n_log = s->n_marks = 0;
        s->log_floor = s->version;
        return;
    }
    cut = s->marks[k - 1].end;
    s->log_floor = s->marks[k - 1].version;
    memmove(s->log, s->log + cut, (s->n_log - cut) * sizeof *s->log);
    s->n_log -= cut;
    memmove(s->marks, s->marks + k, (s->n_marks - k) * sizeof *s->marks);
    s->n_marks -= k;
    for (i = 0; i < s->n_marks; i++)
        s->marks[i].end -= cut;
}

/* The update that just bumped the version: its positions into the log,
 * or a fresh log when it added or dropped nodes (or memory ran out). */
static void log_update(ks_snapshot_t *s)
{
    if (s->chg_all)
        goto restart;
    if (s->n_log + s->n_chg > SNAP_LOG_MAX || s->n_marks + 1 > SNAP_LOG_MAX)
        log_trim(s);
    if (s->n_log + s->n_chg > SNAP_LOG_MAX)
        goto restart;
    if (s->n_log + s->n_chg > s->cap_log) {
        uint32_t cap = s->cap_log ? s->cap_log : 256;
        uint32_t *p;
        while (cap < s->n_log + s->n_chg)
            cap *= 2;
        if ((p = realloc(s->log, cap * sizeof *p)) == NULL)
            goto restart;
        s->log = p;
        s->cap_log = cap;
    }
    if (s->n_marks == s->cap_marks) {
        uint32_t cap = s->cap_marks ? s->cap_marks * 2 : 64;
        struct snap_mark *p = realloc(s->marks, cap * sizeof *p);
        if (p == NULL)
            goto restart;
        s->marks = p;
        s->cap_marks = cap;
    }
    if (s->n_chg > 0)
        memcpy(s->log + s->n_log, s->chg, s->n_chg * sizeof *s->log);
    s->n_log += s->n_chg;
    s->marks[s->n_marks].version = s->version;
    s->marks[s->n_marks++].end = s->n_log;
    return;
restart:
    s->n_log = s->n_marks = 0;
    s->log_floor = s->version;
}

int ks_cache_update_snapshot(ks_cache_t *c, ks_snapshot_t *s, ks_error_t *err)
{
    snap_entry_t **added = NULL;
    /* entries refreshed in place that joined or left the aff or anti
     * list: moved in those lists alone when no node came or went */
    snap_entry_t **flip = NULL;
    uint32_t n_added = 0, cap_added = 0, n_flip = 0, cap_flip = 0, i;
    int have_dead = 0, lists_dirty = s->all == NULL;
    ks_cache_node_t *cn;
    uint64_t newest = s->generation;
    uint32_t n_chg = 0;
    int chg_all = 0;
    uint64_t changes_before = s->changes;

    /* room for every node at once when more than a small block's worth
     * are new (a map that failed to grow here still grows, or fails, one
     * put at a time below) */
    if (c->n_real_nodes > s->by_name.count + SNAP_BLOCK_MIN)
        (void)ks_strmap_reserve(&s->by_name, c->n_real_nodes);
    for (cn = c->head; cn != NULL; cn = cn->next) {
        snap_entry_t *e;
        if (cn->ni.pub.generation <= s->generation)
            break;
        if (cn->ni.pub.generation > newest)
            newest = cn->ni.pub.generation;
        s->changes++;
        if (cn->node == NULL)
            continue; /* placeholders are not in snapshots */
        e = ks_strmap_get(&s->by_name, cn->name);
        if (e == NULL) {
            if (entries_room(&added, n_added, &cap_added) != 0 ||
                (e = entry_new(s, c->n_real_nodes > s->by_name.count
                                      ? c->n_real_nodes - s->by_name.count
                                      : 1)) == NULL)
                goto nomem;
            ks_ni_init(&e->ni, 0);
            e->name = cn->name;
            if (ks_strmap_put(&s->by_name, e->name, e) != 0) {
                entry_free(s, e);
                goto nomem;
            }
            added[n_added++] = e;
        }
        else if (!chg_all) {
            /* refreshed in place: its position, for ks_snapshot_changed_since */
            if (n_chg == s->cap_chg) {
                uint32_t ncap = s->cap_chg ? s->cap_chg * 2 : 64;
                uint32_t *nc = realloc(s->chg, ncap * sizeof *nc);
                if (nc == NULL) {
                    chg_all = 1;
                } else {
                    s->chg = nc;
                    s->cap_chg = ncap;
                }
            }
            if (!chg_all)
                s->chg[n_chg++] = e->index;
        }
        {
            int had_aff = e->ni.pub.n_pods_with_affinity > 0;
            int had_anti = e->ni.pub.n_pods_with_required_anti_affinity > 0;
            if (ks_ni_copy(&e->ni, &cn->ni.pub) != 0)
                goto nomem;
            e->ni.pub.snapshot_pos = e->index + 1; /* renumbered when new */
            /* an entry in place: its columns now (a new entry has none
             * yet; the lists, columns included, are rebuilt then) */
            if (s->all != NULL && e->index < s->n_order &&
                s->order[e->index] == e)
                cols_set(s, e->index, &e->ni.pub);
            if ((had_aff != (e->ni.pub.n_pods_with_affinity > 0) ||
                 had_anti !=
                     (e->ni.pub.n_pods_with_required_anti_affinity > 0)) &&
                !lists_dirty) {
                if (entries_room(&flip, n_flip, &cap_flip) != 0)
                    lists_dirty = 1; /* rebuilt whole instead */
                else
                    flip[n_flip++] = e;
            }
        }
    }

    /* Entries of nodes that left the cache (or became placeholders). */
    if (s->by_name.count > c->n_real_nodes) {
        for (i = 0; i < s->n_order; i++) {
            snap_entry_t *e = s->order[i];
            ks_cache_node_t *live = ks_strmap_get(&c->nodes, e->name);
            if (live == NULL || live->node == NULL) {
                e->dead = 1;
                have_dead = 1;
                ks_strmap_del(&s->by_name, e->name);
            }
        }
    }
    if (s->changes != changes_before || n_added > 0 || have_dead) {
        version_bump(s);
        s->chg_all = chg_all || n_added > 0 || have_dead;
        s->n_chg = s->chg_all ? 0 : n_chg;
        log_update(s);
    }
    if (rebuild_order(s, added, n_added, have_dead) != 0)
        goto nomem;
    free(added);
    s->changes += (uint64_t)have_dead;
    if (update_lists(s, flip, n_flip,
                     lists_dirty || n_added > 0 || have_dead) != 0) {
        free(flip);
        free(s->all);
        s->all = NULL; /* rebuilt on the next update */
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    free(flip);
    if (copy_images(c, s) != 0) {
        s->have_images = 0;
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    s->generation = newest;
    ks_cache_bury(c);
    return 0;
nomem:
    /* Keep the snapshot consistent: entries already created stay, the
     * generation is not advanced, so the next update retries everything;
     * what changed is unknown (ks_snapshot_changed_since says walk it all). */
    version_bump(s);
    s->chg_all = 1;
    s->n_chg = 0;
    log_update(s);
    if (n_added > 0 && rebuild_order(s, added, n_added, have_dead) != 0) {
        for (i = 0; i < n_added; i++) {
            ks_strmap_del(&s->by_name, added[i]->name);
            entry_free(s, added[i]);
        }
    }
    free(added);
    free(flip);
    if (n_flip > 0 || lists_dirty) {
        /* entries refreshed so far may have joined or left the aff and
         * anti lists: those are rebuilt whole on the next update */
        free(s->all);
        s->all = NULL;
    }
    return ks_error_set(err, KS_ENOMEM, "out of memory");
}

uint64_t ks_snapshot_changes(const ks_snapshot_t *s)
{
    return s->changes;
}

uint64_t ks_snapshot_changed_since(const ks_snapshot_t *s, uint64_t since,
                             const uint32_t **idx, uint32_t *n)
{
    static const uint32_t none[1] = {0};
    *n = 0;
    *idx = NULL;
    if (since == s->version) {
        *idx = none;
    } else if (since == s->prev_version && !s->chg_all) {
        *idx = s->n_chg ? s->chg : none;
        *n = s->n_chg;
    } else if (since != 0 && s->log_floor != 0 && since >= s->log_floor) {
        /* an older version the log still covers */
        uint32_t lo = 0, hi = s->n_marks, start;
        if (since == s->log_floor) {
            start = 0;
        } else {
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->marks[mid].version < since)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == s->n_marks || s->marks[lo].version != since)
                return s->version; /* not a version of this snapshot */
            start = s->marks[lo].end;
        }
        *idx = s->n_log > start ? s->log + start : none;
        *n = s->n_log - start;
    }
    return s->version;
}

uint32_t ks_snapshot_num_nodes(const ks_snapshot_t *s)
{
    return s->n_order;
}

const ks_node_info_t *ks_snapshot_node_at(const ks_snapshot_t *s, uint32_t i)
{
    return i < s->n_order ? &s->order[i]->ni.pub : NULL;
}

const ks_node_info_t *ks_snapshot_get(const ks_snapshot_t *s, const char *name)
{
    snap_entry_t *e = ks_strmap_get(&s->by_name, name);
    return e ? &e->ni.pub : NULL;
}

uint32_t ks_snapshot_index(const ks_snapshot_t *s, const char *name)
{
    snap_entry_t *e = ks_strmap_get(&s->by_name, name);
    return e ? e->index : UINT32_MAX;
}

uint32_t ks_snapshot_image_num_nodes(const ks_snapshot_t *s, const char *image)
{
    return (uint32_t)(uintptr_t)ks_strmap_get(&s->images, image);
}
