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

/* x1 sorted through `sorter` (NULL: x1 itself). argsort(x1) of this x1 is
 * sort(x1), without the gather; any other permutation is x1[sorter], a lazy
 * take_along_axis (each task reads the chunks of x1 its indices point into). */
static int sorted_values(zc_array *x1, zc_array *sorter, zc_array **out)
{
    if (!sorter) {
        zc_array_retain(x1);
        *out = x1;
        return 0;
    }
    if (sorter->kind == NODE_SORT && sorter->p.sort.indices && !sorter->p.sort.descending &&
        sorter->inputs[0] == x1 && sorter->p.sort.step == SORT_WHOLE)
        return zc_sort(x1, 0, 0, out);
    if (sorter->ndim != 1 || sorter->shape[0] != x1->shape[0])
        return zc__err(ZC_EINVAL, "searchsorted: sorter must be 1-D with x1's length %lld (it has %d dimensions, "
                       "length %lld)", (long long)x1->shape[0], sorter->ndim,
                       (long long)(sorter->ndim ? sorter->shape[0] : 1));
    int rc = zc_take_along_axis(x1, sorter, 0, out);
    return rc < 0 ? zc__err_wrap(rc, "searchsorted: sorter") : 0;
}

int zc_searchsorted(zc_array *x1, zc_array *x2, int right, zc_array *sorter, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out) return zc__err(ZC_EINVAL, "searchsorted: NULL argument");
    if (x1->ndim != 1) return zc__err(ZC_EINVAL, "searchsorted: x1 must be 1-D (it has %d dimensions)", x1->ndim);
    if (right != 0 && right != 1) return zc__err(ZC_EINVAL, "searchsorted: side must be left (0) or right (1)");
    if (!sort_dtype_ok(x1->dtype) || !sort_dtype_ok(x2->dtype))
        return zc__err(ZC_EINVAL, "searchsorted: %s and %s values cannot be searched (bool, integer and real float)",
                       zc_dtype_name(x1->dtype), zc_dtype_name(x2->dtype));
    zc_array *s = NULL, *a = NULL, *b = NULL, *fs = NULL, *f = NULL;
    int rc = sorted_values(x1, sorter, &s);
    /* values of two dtypes are compared as float64 */
    zc_dtype t = x1->dtype == x2->dtype ? x1->dtype : ZC_FLOAT64;
    if (rc == 0) rc = zc_astype(s, t, &a);
    if (rc == 0) rc = zc_astype(x2, t, &b);
    int64_t step = x1->chunks[0] > 0 ? x1->chunks[0] : 1, nf = (x1->shape[0] + step - 1) / step;
    zc_index fi = {ZC_IDX_SLICE, 0, 0, step, 0, 0, 0};
    if (rc == 0) rc = zc_getitem(a, &fi, 1, &fs);
    int64_t whole = nf > 0 ? nf : 1;
    if (rc == 0) rc = zc_rechunk(fs, &whole, &f); /* the fences: materialized, read whole by every task */
    if (rc == 0) {
        zc_array *in[3] = {a, b, f};
        rc = node_new(NODE_SEARCH, b->ndim, b->shape, b->chunks, ZC_INT64, 3, in, out);
        if (rc == 0) {
            (*out)->p.search.right = right;
            (*out)->p.search.step = step;
        }
    }
    zc_array_release(s);
    zc_array_release(a);
    zc_array_release(b);
    zc_array_release(fs);
    zc_array_release(f);
    return rc;
}
