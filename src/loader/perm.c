/* loader/perm.c — Feistel permutation with cycle walking (see perm.h). */
#include "loader/perm.h"

void perm_init(perm *p, uint64_t n, uint64_t seed, uint64_t epoch)
{
    p->n = n;
    int bits = 2;
    while (bits < 64 && (1ull << bits) < n) bits++;
    p->half = (bits + 1) / 2;
    for (int r = 0; r < 4; r++) p->key[r] = hash4(seed, epoch, (uint64_t)r, 0x7065726d /* "perm" */);
}

uint64_t perm_index(const perm *p, uint64_t j)
{
    const uint64_t mask = (1ull << p->half) - 1;
    uint64_t x = j;
    do {
        uint64_t l = x >> p->half, r = x & mask;
        for (int k = 0; k < 4; k++) {
            uint64_t t = l ^ (mix64(r ^ p->key[k]) & mask);
            l = r;
            r = t;
        }
        x = (l << p->half) | r;
    } while (x >= p->n);
    return x;
}
