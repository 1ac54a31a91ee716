/*
 * Private: the string hash shared by the intern table and the string maps.
 * Pure; thread-safe.
 */
#ifndef KS_BASE_HASH_H
#define KS_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 64-bit FNV-1a over `n` bytes, finished with a multiply-xorshift mix so
 * that the low bits (used for table indexing) are well distributed. */
static inline uint64_t ks_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

static inline uint64_t ks_hash_str(const char *s)
{
    return ks_hash_bytes(s, strlen(s));
}

#endif
