/* ops/isin.c — isin(x, test_elements): any(x[..., None] == flat(test), axis=-1).
 * Built from elementwise `equal` and an `any` reduction, so the planner bounds
 * it like any reduction: a task compares one block of x with one block of the
 * test elements. Work is x.size * test.size comparisons (a sort-based isin for
 * large test sets is left to sorting, issue 18). */
#include "core/error.h"
#include "plan/array.h"

int zc_isin(zc_array *x, zc_array *test_elements, int invert, zc_array **out)
{
    zc__err_clear();
    if (!x || !test_elements || !out) return zc__err(ZC_EINVAL, "zc_isin: NULL argument");
    int64_t n = 1;
    for (int d = 0; d < test_elements->ndim; d++) n *= test_elements->shape[d];
    zc_array *t = NULL, *xe = NULL, *eq = NULL, *any = NULL;
    int axis = x->ndim, rc = zc_reshape(test_elements, 1, &n, &t);
    if (rc == 0) rc = zc_expand_dims(x, axis, &xe);
    if (rc == 0) rc = zc_elementwise("equal", 2, (zc_array *[]){xe, t}, &eq);
    if (rc == 0) rc = zc_reduce("any", eq, &axis, 1, 0, 0, invert ? &any : out);
    if (rc == 0 && invert) rc = zc_elementwise("logical_not", 1, &any, out);
    zc_array_release(t);
    zc_array_release(xe);
    zc_array_release(eq);
    zc_array_release(any);
    return rc;
}
