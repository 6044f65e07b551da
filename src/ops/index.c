/* ops/index.c — basic indexing (slices with any step, integers, new axes,
 * ellipsis) and rechunking. A slice is a view: its tasks read only the input
 * region they need (a negative step reads it ascending and reverses it). */
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "plan/array.h"

int zc_getitem(zc_array *a, const zc_index *idx, int nidx, zc_array **out)
{
    zc__err_clear();
    if (!a || !out || (nidx && !idx)) return zc__err(ZC_EINVAL, "zc_getitem: NULL argument");
    int consumed = 0, ellipsis = -1;
    for (int i = 0; i < nidx; i++) {
        if (idx[i].kind == ZC_IDX_ELLIPSIS) {
            if (ellipsis >= 0) return zc__err(ZC_EINVAL, "an index can only have a single ellipsis ('...')");
            ellipsis = i;
        } else if (idx[i].kind != ZC_IDX_NEWAXIS) {
            consumed++;
        }
    }
    if (consumed > a->ndim)
        return zc__err(ZC_EINVAL, "too many indices: %d for an array of %d dimensions", consumed, a->ndim);
    int in_dim[ZC_MAX_DIMS];
    int64_t start[ZC_MAX_DIMS], step[ZC_MAX_DIMS], shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS], fixed[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) fixed[d] = -1;
    int nd = 0, k = 0; /* k: next input dim */
    for (int i = 0; i <= nidx; i++) {
        if (i == nidx || i == ellipsis) { /* the ellipsis, or the implicit trailing one, takes the dims not indexed */
            int take = i == nidx ? a->ndim - k : a->ndim - consumed;
            for (int t = 0; t < take; t++, k++) {
                if (nd == ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "too many dimensions");
                in_dim[nd] = k;
                start[nd] = 0;
                step[nd] = 1;
                shape[nd] = a->shape[k];
                chunks[nd++] = a->chunks[k];
            }
            if (i == nidx) break;
            continue;
        }
        const zc_index *x = &idx[i];
        if (x->kind == ZC_IDX_NEWAXIS) {
            if (nd == ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "too many dimensions");
            in_dim[nd] = -1;
            start[nd] = 0;
            step[nd] = 1;
            shape[nd] = 1;
            chunks[nd++] = 1;
            continue;
        }
        int64_t n = a->shape[k];
        if (x->kind == ZC_IDX_INT) {
            int64_t v = x->index < 0 ? x->index + n : x->index;
            if (v < 0 || v >= n)
                return zc__err(ZC_ERANGE, "index %lld is out of bounds for dimension %d of size %lld",
                               (long long)x->index, k, (long long)n);
            fixed[k++] = v;
            continue;
        }
        int64_t st = x->step ? x->step : 1, s0, cnt;
        if (st < -INT64_MAX) st = -INT64_MAX; /* -st must exist; any step below -n takes one element */
        if (st > 0) { /* Python's slice.indices: bounds clipped to [0, n] */
            int64_t s1 = x->has_stop ? x->stop : n;
            s0 = x->has_start ? x->start : 0;
            if (s0 < 0) s0 += n;
            if (s1 < 0) s1 += n;
            s0 = s0 < 0 ? 0 : s0 > n ? n : s0;
            s1 = s1 < 0 ? 0 : s1 > n ? n : s1;
            cnt = s1 > s0 ? (s1 - s0 - 1) / st + 1 : 0;
        } else { /* a negative step: bounds clipped to [-1, n - 1], start defaults to the last */
            int64_t s1 = x->has_stop ? x->stop : -1;
            s0 = x->has_start ? x->start : n - 1;
            if (x->has_start && s0 < 0) s0 += n;
            if (x->has_stop && s1 < 0) s1 += n;
            s0 = s0 < -1 ? -1 : s0 > n - 1 ? n - 1 : s0;
            s1 = s1 < -1 ? -1 : s1 > n - 1 ? n - 1 : s1;
            cnt = s0 > s1 ? (s0 - s1 - 1) / -st + 1 : 0;
        }
        if (cnt == 0) s0 = 0;
        if (nd == ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "too many dimensions");
        in_dim[nd] = k;
        start[nd] = s0;
        step[nd] = st;
        shape[nd] = cnt;
        int64_t c = a->chunks[k] / (st < 0 ? -st : st);
        chunks[nd++] = c < 1 ? 1 : c;
        k++;
    }
    ZC_TRY(node_new(NODE_SLICE, nd, shape, chunks, a->dtype, 1, &a, out));
    zc_array *r = *out;
    r->itemsize = a->itemsize;
    memcpy(r->p.slice.in_dim, in_dim, sizeof(int) * (size_t)nd);
    memcpy(r->p.slice.start, start, sizeof(int64_t) * (size_t)nd);
    memcpy(r->p.slice.step, step, sizeof(int64_t) * (size_t)nd);
    memcpy(r->p.slice.fixed, fixed, sizeof(int64_t) * (size_t)a->ndim);
    return 0;
}

int zc_rechunk(zc_array *a, const int64_t *chunks, zc_array **out)
{
    zc__err_clear();
    if (!a || !out || (a->ndim && !chunks)) return zc__err(ZC_EINVAL, "zc_rechunk: NULL argument");
    return node_rechunk(a, chunks, out);
}
