/* core/hash.h — 64-bit hashing: counter-based random numbers (the loader's
 * keyed shuffles, plan/array.c's random arrays) and checksums of byte strings
 * (saved plans). Not cryptographic: a checksum catches corruption and edits
 * made without recomputing it, not a forger. */
#ifndef ZC_CORE_HASH_H
#define ZC_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Hash of several words: mix64 chained. */
static inline uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}

/* Hash of n bytes (little-endian 8-byte words chained through mix64, the
 * length folded in): the same value on every machine. */
static inline uint64_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *b = data;
    uint64_t h = mix64(seed ^ (uint64_t)n), w = 0;
    size_t i = 0;
    for (; i < n; i++) {
        w |= (uint64_t)b[i] << (8 * (i & 7));
        if ((i & 7) == 7) {
            h = mix64(h ^ w);
            w = 0;
        }
    }
    return (i & 7) ? mix64(h ^ w) : h;
}

#endif
