/*
 * A set of unique volume names, each with its CSI driver (upstream's
 * map[volumeUniqueName]driverName): strings in one growing buffer,
 * items in insertion order, an open-addressing index over them.
 */
#include "nvl.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a over a NUL-terminated string. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/* Room for `n` more bytes in the buffer; 0, or -1 when out of memory. */
static int buf_reserve(nvl_set_t *s, size_t n)
{
    size_t nc;
    char *nb;
    if (s->len + n <= s->cap)
        return 0;
    nc = s->cap ? s->cap * 2 : 256;
    while (nc < s->len + n)
        nc *= 2;
    nb = realloc(s->buf, nc);
    if (nb == NULL)
        return -1;
    s->buf = nb;
    s->cap = nc;
    return 0;
}

/* Append a + b + c and a NUL (b and c may be ""); the text's offset, or
 * (size_t)-1 when out of memory. */
static size_t buf_add(nvl_set_t *s, const char *a, const char *b,
                      const char *c)
{
    size_t al = strlen(a), bl = strlen(b), cl = strlen(c), off = s->len;
    if (buf_reserve(s, al + bl + cl + 1) != 0)
        return (size_t)-1;
    memcpy(s->buf + off, a, al);
    memcpy(s->buf + off + al, b, bl);
    memcpy(s->buf + off + al + bl, c, cl);
    s->buf[off + al + bl + cl] = '\0';
    s->len += al + bl + cl + 1;
    return off;
}

/* The slot of `name` (hash h): its item index + 1, or 0 with *slot the
 * free slot where it would go. */
static uint32_t find(const nvl_set_t *s, const char *name, uint64_t h,
                     uint32_t *slot)
{
    uint32_t mask = s->n_slots - 1, i = (uint32_t)h & mask;
    for (;;) {
        uint32_t v = s->slots[i];
        if (v == 0) {
            *slot = i;
            return 0;
        }
        if (s->items[v - 1].hash == h &&
            strcmp(s->buf + s->items[v - 1].name, name) == 0) {
            *slot = i;
            return v;
        }
        i = (i + 1) & mask;
    }
}

/* Keep the index at most half full. */
static int rehash(nvl_set_t *s)
{
    uint32_t ns = s->n_slots ? s->n_slots * 2 : 16, i;
    uint32_t *slots;
    if (s->n_slots && (s->n + 1) * 2 <= s->n_slots)
        return 0;
    slots = calloc(ns, sizeof *slots);
    if (slots == NULL)
        return -1;
    free(s->slots);
    s->slots = slots;
    s->n_slots = ns;
    for (i = 0; i < s->n; i++) {
        uint32_t j = (uint32_t)s->items[i].hash & (ns - 1);
        while (slots[j] != 0)
            j = (j + 1) & (ns - 1);
        slots[j] = i + 1;
    }
    return 0;
}

int nvl_set_put(nvl_set_t *s, const char *driver, const char *handle)
{
    size_t name, drv;
    uint32_t slot, v;
    uint64_t h;
    if (rehash(s) != 0)
        return -1;
    name = buf_add(s, driver, "/", handle);
    if (name == (size_t)-1)
        return -1;
    h = hash_str(s->buf + name);
    v = find(s, s->buf + name, h, &slot);
    if (v != 0)
        s->len = name; /* known: drop the copy of the name */
    drv = buf_add(s, driver, "", "");
    if (drv == (size_t)-1)
        return -1;
    if (v != 0) {
        s->items[v - 1].driver = drv; /* a Go map assignment */
        return (int)(v - 1);
    }
    if (s->n == s->cap_items) {
        uint32_t nc = s->cap_items ? s->cap_items * 2 : 16;
        nvl_set_item_t *ni = realloc(s->items, nc * sizeof *ni);
        if (ni == NULL)
            return -1;
        s->items = ni;
        s->cap_items = nc;
    }
    s->items[s->n].name = name;
    s->items[s->n].driver = drv;
    s->items[s->n].hash = h;
    s->slots[slot] = ++s->n;
    return (int)(s->n - 1);
}

int nvl_set_has(const nvl_set_t *s, const char *name)
{
    uint32_t slot;
    if (s->n == 0)
        return 0;
    return find(s, name, hash_str(name), &slot) != 0;
}

void nvl_set_free(nvl_set_t *s)
{
    free(s->buf);
    free(s->items);
    free(s->slots);
    memset(s, 0, sizeof *s);
}
