/* ops/take_along.c — take_along_axis(x, indices, axis): the TAKE_ALONG node
 * (plan/take_along.c) over x and the indices broadcast to the result's shape
 * (except along the axis, where x keeps its length and the result has the
 * indices'). */
#include "core/error.h"
#include "plan/array.h"

int zc_take_along_axis(zc_array *x, zc_array *indices, int axis, zc_array **out)
{
    zc__err_clear();
    if (!x || !indices || !out) return zc__err(ZC_EINVAL, "take_along_axis: NULL argument");
    if (indices->dtype < ZC_INT8 || indices->dtype > ZC_UINT64)
        return zc__err(ZC_EINVAL, "take_along_axis: indices must have an integer dtype, not %s",
                       zc_dtype_name(indices->dtype));
    if (x->ndim < 1 || indices->ndim != x->ndim)
        return zc__err(ZC_EINVAL, "take_along_axis: x (%d dimensions) and indices (%d) must have the same number "
                       "of dimensions, at least 1", x->ndim, indices->ndim);
    int nd = x->ndim, ax = axis < 0 ? axis + nd : axis;
    if (ax < 0 || ax >= nd)
        return zc__err(ZC_EINVAL, "take_along_axis: axis %d is out of range for %d dimensions", axis, nd);
    int64_t shape[ZC_MAX_DIMS], xshape[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int64_t a = x->shape[d], b = indices->shape[d];
        if (d != ax && a != b && a != 1 && b != 1)
            return zc__err(ZC_EINVAL, "take_along_axis: dimension %d of x (%lld) and of indices (%lld) do not "
                           "broadcast", d, (long long)a, (long long)b);
        shape[d] = d == ax ? b : a == 1 ? b : a;
        xshape[d] = d == ax ? a : shape[d];
    }
    zc_array *xb = NULL, *i64 = NULL, *ib = NULL;
    int rc = zc_broadcast_to(x, nd, xshape, &xb);
    if (rc == 0) rc = zc_astype(indices, ZC_INT64, &i64);
    if (rc == 0) rc = zc_broadcast_to(i64, nd, shape, &ib);
    if (rc == 0) {
        zc_array *in[2] = {xb, ib};
        rc = node_new(NODE_TAKE_ALONG, nd, shape, ib->chunks, x->dtype, 2, in, out);
        if (rc == 0) {
            (*out)->itemsize = x->itemsize;
            (*out)->p.take_along.axis = ax;
        }
    }
    zc_array_release(xb);
    zc_array_release(i64);
    zc_array_release(ib);
    return rc < 0 ? zc__err_wrap(rc, "take_along_axis") : 0;
}
