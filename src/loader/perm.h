/* loader/perm.h — keyed permutations and counter-based random numbers.
 *
 * perm_index(p, j) maps [0, n) onto itself one to one, in an order fixed by the
 * key: a 4-round Feistel network over the smallest even-bit domain 4^h ≥ n,
 * with cycle walking (apply again until the value falls below n; the expected
 * number of rounds is below 4). Nothing is stored per element, so an epoch over
 * 10^12 windows costs the same as over 10. */
#ifndef ZC_LOADER_PERM_H
#define ZC_LOADER_PERM_H

#include <stdint.h>

typedef struct {
    uint64_t n;       /* domain size */
    int half;         /* bits per Feistel half */
    uint64_t key[4];  /* round keys */
} perm;

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

void perm_init(perm *p, uint64_t n, uint64_t seed, uint64_t epoch);
uint64_t perm_index(const perm *p, uint64_t j);

#endif
