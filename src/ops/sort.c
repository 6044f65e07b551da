/* ops/sort.c — sort and argsort along an axis (the node: plan/sort.h; the
 * planner decides between whole lines and an external sort). */
#include "core/error.h"
#include "kernels/sort.h"
#include "plan/array.h"
#include "plan/sort.h"

#define SORT_MIN_CHUNK 4096 /* elements along the axis per chunk of the result, at least */

static int build(const char *fn, zc_array *x, int axis, int descending, int indices, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (!sort_dtype_ok(x->dtype))
        return zc__err(ZC_EINVAL, "%s: %s arrays cannot be sorted (bool, integer and real float dtypes)", fn,
                       zc_dtype_name(x->dtype));
    if (x->ndim < 1) return zc__err(ZC_EINVAL, "%s: a 0-d array has no axis to sort along", fn);
    int ax = axis < 0 ? axis + x->ndim : axis;
    if (ax < 0 || ax >= x->ndim)
        return zc__err(ZC_EINVAL, "%s: axis %d is out of range for an array of %d dimension%s", fn, axis, x->ndim,
                       x->ndim == 1 ? "" : "s");
    if (descending != 0 && descending != 1) return zc__err(ZC_EINVAL, "%s: descending must be 0 or 1", fn);
    int64_t chunks[ZC_MAX_DIMS], n = x->shape[ax];
    for (int d = 0; d < x->ndim; d++) chunks[d] = x->chunks[d];
    int64_t least = n < SORT_MIN_CHUNK ? n : SORT_MIN_CHUNK;
    if (chunks[ax] < least) chunks[ax] = least;
    ZC_TRY(node_new(NODE_SORT, x->ndim, x->shape, chunks, indices ? ZC_INT64 : x->dtype, 1, &x, out));
    zc_array *a = *out;
    a->p.sort.axis = ax;
    a->p.sort.step = SORT_WHOLE;
    a->p.sort.descending = descending;
    a->p.sort.indices = indices;
    a->p.sort.vdtype = x->dtype;
    return 0;
}

int zc_sort(zc_array *x, int axis, int descending, zc_array **out)
{
    return build("sort", x, axis, descending, 0, out);
}

int zc_argsort(zc_array *x, int axis, int descending, zc_array **out)
{
    return build("argsort", x, axis, descending, 1, out);
}
