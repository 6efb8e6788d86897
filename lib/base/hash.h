/* hash.h: FNV-1a, the one non-cryptographic hash of the hash tables (caches, path and render
 * indexes). Not for anything an attacker must not steer: use crypto.h for that. */
#ifndef PURSER_HASH_H
#define PURSER_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit FNV-1a hash of n bytes at s (which may hold NULs). */
static inline uint64_t hash_fnv1a(const void *s, size_t n)
{
    const unsigned char *p = s;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

#endif
