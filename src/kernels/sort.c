/* kernels/sort.c — sort keys and a stable radix sort (see sort.h). */
#include "kernels/sort.h"

#include <string.h>

#include "core/dtype.h"

#define DIGIT_BITS 11
#define DIGITS 6 /* 6 x 11 >= 64 */
#define BUCKETS (1u << DIGIT_BITS)

bool sort_dtype_ok(zc_dtype t) { return t >= ZC_BOOL && t <= ZC_FLOAT64; }

static uint64_t float_key(double d)
{
    if (d != d) return UINT64_MAX; /* NaN: last */
    if (d == 0) d = 0;             /* -0 == +0 */
    uint64_t u;
    memcpy(&u, &d, 8);
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

uint64_t sort_key(zc_dtype t, bool descending, const void *v)
{
    uint64_t k = 0;
    switch (t) {
    case ZC_BOOL: case ZC_UINT8: k = *(const uint8_t *)v; break;
    case ZC_UINT16: { uint16_t x; memcpy(&x, v, 2); k = x; break; }
    case ZC_UINT32: { uint32_t x; memcpy(&x, v, 4); k = x; break; }
    case ZC_UINT64: memcpy(&k, v, 8); break;
    case ZC_INT8: k = (uint64_t)(int64_t)*(const int8_t *)v ^ (UINT64_C(1) << 63); break;
    case ZC_INT16: { int16_t x; memcpy(&x, v, 2); k = (uint64_t)(int64_t)x ^ (UINT64_C(1) << 63); break; }
    case ZC_INT32: { int32_t x; memcpy(&x, v, 4); k = (uint64_t)(int64_t)x ^ (UINT64_C(1) << 63); break; }
    case ZC_INT64: { int64_t x; memcpy(&x, v, 8); k = (uint64_t)x ^ (UINT64_C(1) << 63); break; }
    case ZC_FLOAT16: { uint16_t h; memcpy(&h, v, 2); k = float_key(dtype_half_to_float(h)); break; }
    case ZC_FLOAT32: { float f; memcpy(&f, v, 4); k = float_key(f); break; }
    case ZC_FLOAT64: { double f; memcpy(&f, v, 8); k = float_key(f); break; }
    default: break;
    }
    if (!descending) return k;
    /* descending: the order reversed, NaNs (the only key UINT64_MAX of a float) still last */
    bool fl = t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64;
    return fl && k == UINT64_MAX ? k : ~k; /* a number's key is never 0 */
}

void sort_keys(zc_dtype t, bool descending, const unsigned char *src, ptrdiff_t stride, size_t n, sort_pair *p,
               uint64_t val0)
{
    if (t == ZC_FLOAT64 && !descending) { /* the common case, without the switch */
        for (size_t i = 0; i < n; i++) {
            double d;
            memcpy(&d, src + (ptrdiff_t)i * stride, 8);
            p[i].key = float_key(d);
            p[i].val = val0 + i;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        p[i].key = sort_key(t, descending, src + (ptrdiff_t)i * stride);
        p[i].val = val0 + i;
    }
}

sort_pair *sort_radix(sort_pair *p, sort_pair *tmp, size_t n)
{
    static const int shift[DIGITS] = {0, 11, 22, 33, 44, 55};
    uint32_t count[DIGITS][BUCKETS];
    if (n > UINT32_MAX) return NULL;
    if (n < 2) return p;
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = p[i].key;
        for (int d = 0; d < DIGITS; d++) count[d][(k >> shift[d]) & (BUCKETS - 1)]++;
    }
    sort_pair *src = p, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        uint32_t *c = count[d];
        if (c[(src[0].key >> shift[d]) & (BUCKETS - 1)] == n) continue; /* one digit value: nothing moves */
        uint32_t sum = 0;
        for (unsigned b = 0; b < BUCKETS; b++) {
            uint32_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = src[i].key;
            dst[c[(k >> shift[d]) & (BUCKETS - 1)]++] = src[i];
        }
        sort_pair *t = src;
        src = dst;
        dst = t;
    }
    return src;
}
