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

#include "core/hash.h" /* mix64, hash4 */

typedef struct {
    uint64_t n;       /* domain size */
    int half;         /* bits per Feistel half */
    uint64_t key[4];  /* round keys */
} perm;

void perm_init(perm *p, uint64_t n, uint64_t seed, uint64_t epoch);
uint64_t perm_index(const perm *p, uint64_t j);

#endif
