/* ops/multi.c — the array API functions that take or give several arrays:
 * broadcast_shapes, broadcast_arrays, meshgrid, unstack. Each result is a view
 * (broadcast_to, expand_dims, getitem): nothing is copied until computed. */
#include <stdio.h>

#include "core/error.h"
#include "plan/array.h"

int zc_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes, int *ndim, int64_t *shape)
{
    zc__err_clear();
    if (n < 0 || (n && (!ndims || !shapes)) || !ndim || !shape) return zc__err(ZC_EINVAL, "broadcast_shapes: NULL argument");
    int nd = 0;
    for (int i = 0; i < n; i++) {
        if (ndims[i] < 0 || ndims[i] > ZC_MAX_DIMS || (ndims[i] && !shapes[i]))
            return zc__err(ZC_EINVAL, "broadcast_shapes: shape %d has %d dimensions", i, ndims[i]);
        if (ndims[i] > nd) nd = ndims[i];
    }
    for (int d = 0; d < nd; d++) shape[d] = 1;
    for (int i = 0; i < n; i++) {
        int off = nd - ndims[i];
        for (int j = 0; j < ndims[i]; j++) {
            int64_t s = shapes[i][j], *t = &shape[j + off];
            if (s < 0) return zc__err(ZC_EINVAL, "broadcast_shapes: shape %d has a negative size (%lld)", i, (long long)s);
            if (s == *t || s == 1) continue;
            if (*t != 1)
                return zc__err(ZC_EINVAL, "broadcast_shapes: shape %d does not broadcast with the ones before it "
                                          "(dimension %d of the result: %lld vs %lld)", i, j + off, (long long)*t, (long long)s);
            *t = s;
        }
    }
    *ndim = nd;
    return 0;
}

int zc_broadcast_arrays(int n, zc_array *const *arrays, zc_array **outs)
{
    zc__err_clear();
    if (n < 0 || (n && (!arrays || !outs))) return zc__err(ZC_EINVAL, "broadcast_arrays: NULL argument");
    int nds[64], nd;
    const int64_t *shapes[64];
    int64_t shape[ZC_MAX_DIMS];
    if (n > 64) return zc__err(ZC_EINVAL, "broadcast_arrays: %d arrays (at most 64)", n);
    for (int i = 0; i < n; i++) {
        if (!arrays[i]) return zc__err(ZC_EINVAL, "broadcast_arrays: array %d is NULL", i);
        nds[i] = arrays[i]->ndim;
        shapes[i] = arrays[i]->shape;
    }
    ZC_TRY(zc_broadcast_shapes(n, nds, shapes, &nd, shape));
    for (int i = 0; i < n; i++) {
        int rc = zc_broadcast_to(arrays[i], nd, shape, &outs[i]);
        if (rc < 0) {
            while (i) zc_array_release(outs[--i]);
            return rc;
        }
    }
    return 0;
}

int zc_meshgrid(int n, zc_array *const *arrays, int ij, zc_array **outs)
{
    zc__err_clear();
    if (n < 0 || (n && (!arrays || !outs))) return zc__err(ZC_EINVAL, "meshgrid: NULL argument");
    if (n > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "meshgrid: %d arrays (at most %d)", n, ZC_MAX_DIMS);
    int64_t shape[ZC_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        if (!arrays[i]) return zc__err(ZC_EINVAL, "meshgrid: array %d is NULL", i);
        if (arrays[i]->ndim != 1)
            return zc__err(ZC_EINVAL, "meshgrid: array %d has %d dimensions; every array must have 1", i, arrays[i]->ndim);
    }
    /* output dim of array i: i, but "xy" (Cartesian) swaps the first two */
    int pos[ZC_MAX_DIMS];
    for (int i = 0; i < n; i++) pos[i] = !ij && n >= 2 && i < 2 ? 1 - i : i;
    for (int i = 0; i < n; i++) shape[pos[i]] = arrays[i]->shape[0];
    int rc = 0, made = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int axes[ZC_MAX_DIMS], na = 0;
        for (int d = 0; d < n; d++)
            if (d != pos[i]) axes[na++] = d;
        zc_array *e;
        if ((rc = zc_expand_dims_axes(arrays[i], axes, na, &e)) == 0) {
            rc = zc_broadcast_to(e, n, shape, &outs[i]);
            zc_array_release(e);
            made += rc == 0;
        }
    }
    if (rc < 0)
        while (made) zc_array_release(outs[--made]);
    return rc;
}

int zc_unstack(zc_array *x, int axis, zc_array **outs)
{
    zc__err_clear();
    if (!x || !outs) return zc__err(ZC_EINVAL, "unstack: NULL argument");
    int a = axis < 0 ? axis + x->ndim : axis;
    if (axis == ZC_AXIS_NONE || a < 0 || a >= x->ndim)
        return zc__err(ZC_EINVAL, "unstack: axis %d is out of range for an array of %d dimensions", axis, x->ndim);
    zc_index idx[ZC_MAX_DIMS] = {{0}};
    for (int d = 0; d < a; d++) idx[d] = (zc_index){.kind = ZC_IDX_SLICE, .step = 1};
    idx[a].kind = ZC_IDX_INT;
    for (int64_t k = 0; k < x->shape[a]; k++) {
        idx[a].index = k;
        int rc = zc_getitem(x, idx, a + 1, &outs[k]);
        if (rc < 0) {
            while (k) zc_array_release(outs[--k]);
            return rc;
        }
    }
    return 0;
}
