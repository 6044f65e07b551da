/* zarr/copy.c — strided N-d copies between a chunk and a caller's buffer.
 *
 * Strides are in bytes and may be any positive value (selection steps fold
 * into them). Dimensions that are contiguous on both sides are merged first,
 * so the innermost loop is one memcpy wherever the layout allows. */
#include <stdbool.h>
#include <string.h>

#include "zarr/copy.h"

static void copy_inner(unsigned char *d, int64_t ds, const unsigned char *s, int64_t ss, int64_t n, size_t isz)
{
    if (ds == (int64_t)isz && ss == (int64_t)isz) {
        memcpy(d, s, (size_t)n * isz);
        return;
    }
    switch (isz) {
    case 1: for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, isz); break;
    }
}

void zarr_copy_nd(void *dst, const int64_t *dstride, const void *src, const int64_t *sstride,
                  const int64_t *count, int ndim, size_t isz)
{
    int64_t ds[ZC_MAX_DIMS], ss[ZC_MAX_DIMS], n[ZC_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < ndim; d++) {
        if (count[d] == 0) return;
        if (count[d] == 1) continue; /* contributes nothing to the loop */
        ds[k] = dstride[d];
        ss[k] = sstride[d];
        n[k] = count[d];
        k++;
    }
    /* merge dims: (outer, inner) merge if outer stride == inner stride × inner count on both sides */
    int m = 0;
    for (int d = 0; d < k; d++) {
        if (m > 0 && ds[m - 1] == ds[d] * n[d] && ss[m - 1] == ss[d] * n[d]) {
            n[m - 1] *= n[d];
            ds[m - 1] = ds[d];
            ss[m - 1] = ss[d];
        } else {
            ds[m] = ds[d];
            ss[m] = ss[d];
            n[m] = n[d];
            m++;
        }
    }
    unsigned char *dp = dst;
    const unsigned char *sp = src;
    if (m == 0) {
        memcpy(dp, sp, isz);
        return;
    }
    int64_t idx[ZC_MAX_DIMS] = {0};
    int last = m - 1;
    /* Contiguous runs in the innermost dim under a second dim: copy the second dim
     * here, with fixed-size copies for short runs (a small chunk's rows landing in
     * a window are often 16 or 32 bytes; a memcpy call each costs more than the copy). */
    bool rows = m >= 2 && ds[last] == (int64_t)isz && ss[last] == (int64_t)isz;
    size_t run = (size_t)n[last] * isz;
    int outer = rows ? last - 1 : last;
    for (;;) {
        if (rows) {
            int64_t reps = n[outer], dso = ds[outer], sso = ss[outer];
            unsigned char *d = dp;
            const unsigned char *q = sp;
            switch (run) {
            case 8: for (int64_t i = 0; i < reps; i++, d += dso, q += sso) memcpy(d, q, 8); break;
            case 16: for (int64_t i = 0; i < reps; i++, d += dso, q += sso) memcpy(d, q, 16); break;
            case 32: for (int64_t i = 0; i < reps; i++, d += dso, q += sso) memcpy(d, q, 32); break;
            case 64: for (int64_t i = 0; i < reps; i++, d += dso, q += sso) memcpy(d, q, 64); break;
            default: for (int64_t i = 0; i < reps; i++, d += dso, q += sso) memcpy(d, q, run); break;
            }
        } else {
            copy_inner(dp, ds[last], sp, ss[last], n[last], isz);
        }
        int d = outer - 1;
        while (d >= 0) {
            idx[d]++;
            dp += ds[d];
            sp += ss[d];
            if (idx[d] < n[d]) break;
            dp -= ds[d] * n[d];
            sp -= ss[d] * n[d];
            idx[d] = 0;
            d--;
        }
        if (d < 0) return;
    }
}

void zarr_fill_nd(void *dst, const int64_t *dstride, const int64_t *count, int ndim, const void *elem, size_t isz)
{
    int64_t zero[ZC_MAX_DIMS] = {0};
    /* a source whose strides are all zero repeats one element */
    zarr_copy_nd(dst, dstride, elem, zero, count, ndim, isz);
}
