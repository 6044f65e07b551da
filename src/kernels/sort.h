/* kernels/sort.h — the per-block pieces of sorting (plan/sort.c uses them).
 *
 * Values are sorted through 64-bit keys whose unsigned order is the wanted
 * order of the values: ascending or descending by value, NaNs last either way
 * (as NumPy's np.sort puts them; the array API leaves NaNs' place to the
 * implementation), -0 equal to +0. Ties keep the order of their positions:
 * pairs (key, position) sorted by a stable LSD radix sort on the key. */
#ifndef ZC_KERNELS_SORT_H
#define ZC_KERNELS_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

typedef struct {
    uint64_t key; /* sort_key of the value */
    uint64_t val; /* the caller's payload (a position): ties keep its order */
} sort_pair;

/* Whether values of dtype t can be sorted (bool, integers, real floats). */
bool sort_dtype_ok(zc_dtype t);
/* The key of one value of dtype t at v. */
uint64_t sort_key(zc_dtype t, bool descending, const void *v);
/* Keys of n values of dtype t, `stride` bytes apart from src, into p[i].key,
 * with p[i].val = val0 + i. */
void sort_keys(zc_dtype t, bool descending, const unsigned char *src, ptrdiff_t stride, size_t n, sort_pair *p,
               uint64_t val0);
/* Stable sort of p[0..n) by key (tmp: room for n more pairs); returns p or tmp,
 * whichever holds the result; NULL when n > UINT32_MAX (counts are 32-bit). */
sort_pair *sort_radix(sort_pair *p, sort_pair *tmp, size_t n);

#endif
