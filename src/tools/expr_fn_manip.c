/* tools/expr_fn_manip.c — handlers of the manipulation and cumulative
 * functions (zcube.h section 9): reshape, permute_dims, concat, flip, roll,
 * take, diff, tril, cumulative_sum, ... */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

int ex_fn_reshape(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t shape[ZC_MAX_DIMS];
    if (ex_as_int_list(&args[1], "shape", ZC_MAX_DIMS, &n, shape) < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_reshape(args[0].arr, n, shape, &a), &a, out);
}

int ex_fn_permute(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (ex_as_axes(&args[1], "axes", &n, axes) < 0) return -1;
    int ndim;
    if (ex_array_info(e, &args[0], &ndim, NULL, NULL, NULL) < 0) return -1;
    if (n < 0) { /* transpose(x): reverse the axes */
        if (!strcmp(f->api, "permute_dims")) return ex_fail(args[1].col, "permute_dims(): axes must be given");
        n = ndim;
        for (int d = 0; d < ndim; d++) axes[d] = ndim - 1 - d;
    }
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_permute_dims(args[0].arr, axes, n, &a), &a, out);
}

int ex_fn_moveaxis(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int ns = 0, nd = 0, src[ZC_MAX_DIMS], dst[ZC_MAX_DIMS];
    if (ex_as_axes(&args[1], "source", &ns, src) < 0 || ex_as_axes(&args[2], "destination", &nd, dst) < 0) return -1;
    if (ns < 0 || nd < 0 || ns != nd)
        return ex_fail(args[2].col, "moveaxis(): source and destination must have the same number of axes");
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_moveaxis(args[0].arr, src, dst, ns, &a), &a, out);
}

int ex_fn_matrix_transpose(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_matrix_transpose(args[0].arr, &a), &a, out);
}

int ex_fn_expand_dims(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 1, axes[ZC_MAX_DIMS] = {0}; /* an axis or a tuple of axes (array API 2025.12) */
    if (args[1].kind != V_NONE && ex_as_axes(&args[1], "axis", &n, axes) < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_expand_dims_axes(args[0].arr, axes, n, &a), &a, out);
}

int ex_fn_squeeze(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (ex_as_axes(&args[1], "axis", &n, axes) < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_squeeze(args[0].arr, axes, n < 0 ? 0 : n, &a), &a, out);
}

int ex_fn_broadcast_to(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t shape[ZC_MAX_DIMS];
    if (ex_as_shape(&args[1], "shape", &n, shape) < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_broadcast_to(args[0].arr, n, shape, &a), &a, out);
}

int ex_fn_join(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    zc_array *arr[256];
    int n = 0, axis = 0, stack = !strcmp(f->api, "stack");
    if (args[1].kind != V_NONE || stack) {
        if (args[1].kind != V_NONE && ex_as_axis(&args[1], "axis", 0, &axis) < 0) return -1;
    }
    if (!stack && args[1].kind == V_NONE && call) {
        /* concat(arrays) is axis 0; concat(arrays, axis=None) flattens */
        for (int k = 0; k < call->nkw; k++)
            if (!strcmp(call->kwnames[k], "axis") && call->kwvalues[k]->kind == EX_NONE) axis = ZC_AXIS_NONE;
        if (call->nitems > 1 && call->items[1]->kind == EX_NONE) axis = ZC_AXIS_NONE;
    }
    if (ex_as_arrays(e, f, &args[0], arr, 256, &n) < 0) return -1;
    zc_array *a = NULL;
    int rc = stack ? zc_stack(n, arr, axis, &a) : zc_concat(n, arr, axis, &a);
    for (int k = 0; k < n; k++) zc_array_release(arr[k]);
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_flip(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (ex_as_axes(&args[1], "axis", &n, axes) < 0) return -1;
    if (n == 0) { /* flip(x, axis=()) changes nothing */
        zc_array_retain(args[0].arr);
        return ex_set_array(out, args[0].arr);
    }
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_flip(args[0].arr, axes, n < 0 ? 0 : n, &a), &a, out);
}

int ex_fn_roll(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int ns = 0, na = 0, axes[ZC_MAX_DIMS];
    int64_t shifts[ZC_MAX_DIMS];
    if (ex_as_int_list(&args[1], "shift", ZC_MAX_DIMS, &ns, shifts) < 0 || ex_as_axes(&args[2], "axis", &na, axes) < 0)
        return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_roll(args[0].arr, shifts, ns, axes, na < 0 ? 0 : na, &a), &a, out);
}

/* repeat(x, repeats, axis=None): one count, or one per element along axis (a
 * list, or an integer array computed now): then a take of each index as often
 * as its count, the indices held in the plan as take holds them. */
int ex_fn_repeat(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int axis;
    if (ex_as_axis(&args[2], "axis", 1, &axis) < 0) return -1;
    int64_t *r = NULL, nr = 0;
    int rnd;
    if (ex_int_values(e, &args[1], "repeat(): repeats", &r, &nr, &rnd) < 0) return -1;
    zc_array *a = NULL, *x = args[0].arr;
    int rc;
    if (rnd == 0 || nr == 1) {
        rc = zc_repeat(x, r[0], axis, &a);
        free(r);
        return ex_lib_result(e, f, call, rc, &a, out);
    }
    int ndim;
    int64_t shape[ZC_MAX_DIMS], len = 1, total = 0;
    zc_array_info(x, &ndim, shape, NULL, NULL);
    zc_array *flat = NULL;
    if (axis == ZC_AXIS_NONE) { /* the flattened x */
        for (int d = 0; d < ndim; d++) len *= shape[d];
        rc = zc_reshape(x, 1, &len, &flat);
        if (rc < 0) {
            free(r);
            return ex_lib_result(e, f, call, rc, &a, out);
        }
        x = flat;
        axis = 0;
    } else {
        int ax = axis < 0 ? axis + ndim : axis;
        if (ax < 0 || ax >= ndim) {
            free(r);
            return ex_fail(args[2].col, "repeat(): axis %d is out of range for %d dimensions", axis, ndim);
        }
        len = shape[ax];
    }
    rc = 0;
    if (nr != len)
        rc = ex_fail(args[1].col, "repeat(): %lld repeat counts for an axis of length %lld", (long long)nr,
                     (long long)len);
    for (int64_t k = 0; rc == 0 && k < nr; k++) {
        if (r[k] < 0) rc = ex_fail(args[1].col, "repeat(): repeat counts must not be negative (count %lld is %lld)",
                                   (long long)k, (long long)r[k]);
        else if (r[k] > INT64_MAX / 16 - total) /* checked before adding: the sum itself must not overflow */
            rc = ex_fail(args[1].col, "repeat(): the repeat counts add up to too many elements");
        else
            total += r[k];
    }
    if (rc == 0) rc = ex_check_held(args[1].col, "repeat(): the indices of per-element repeats", total);
    int64_t *idx = rc == 0 ? malloc(sizeof *idx * (size_t)(total ? total : 1)) : NULL;
    if (rc == 0 && !idx) rc = cli_seterr("out of memory");
    if (rc == 0) {
        for (int64_t k = 0, j = 0; k < nr; k++)
            for (int64_t c = 0; c < r[k]; c++) idx[j++] = k;
        rc = ex_lib_result(e, f, call, zc_take(x, idx, total, axis, &a), &a, out);
    }
    free(idx);
    free(r);
    zc_array_release(flat);
    return rc;
}

int ex_fn_tile(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t reps[ZC_MAX_DIMS];
    if (ex_as_int_list(&args[1], "reps", ZC_MAX_DIMS, &n, reps) < 0) return -1;
    zc_array *a = NULL;
    return ex_lib_result(e, f, call, zc_tile(args[0].arr, reps, n, &a), &a, out);
}

/* take(x, indices, axis=None): a list written in the expression or an integer
 * array computed now; a single integer drops the axis, as NumPy does. */
int ex_fn_take(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int axis;
    if (ex_as_axis(&args[2], "axis", 1, &axis) < 0) return -1;
    int64_t *idx, n;
    int ind;
    if (ex_int_values(e, &args[1], "take(): indices", &idx, &n, &ind) < 0) return -1;
    zc_array *a = NULL, *r = NULL;
    int rc = zc_take(args[0].arr, idx, n, axis, &a);
    free(idx);
    if (rc == 0 && ind == 0) { /* a scalar index drops the axis, as NumPy does */
        int ndim, ax = axis == ZC_AXIS_NONE ? 0 : axis;
        zc_array_info(a, &ndim, NULL, NULL, NULL);
        if (ax < 0) ax += ndim;
        rc = zc_squeeze(a, &ax, 1, &r);
        zc_array_release(a);
        a = r;
    }
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_diff(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int64_t n = 1;
    int axis = -1;
    if (args[1].kind != V_NONE && ex_as_int(&args[1], "n", &n) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ex_fail(args[1].col, "diff(): n must be >= 0, got %lld", (long long)n);
    if (args[2].kind != V_NONE && ex_as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
    zc_array *pa[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (args[3 + k].kind != V_NONE && ex_as_array(e, &args[3 + k], k ? "append" : "prepend", &pa[k]) < 0) {
            zc_array_release(pa[0]);
            return -1;
        }
    zc_array *a = NULL;
    int rc = zc_diff(args[0].arr, axis, (int)n, pa[0], pa[1], &a);
    zc_array_release(pa[0]);
    zc_array_release(pa[1]);
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_tri(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int64_t k = 0;
    if (args[1].kind != V_NONE && ex_as_int(&args[1], "k", &k) < 0) return -1;
    zc_array *a = NULL;
    int rc = !strcmp(f->api, "tril") ? zc_tril(args[0].arr, k, &a) : zc_triu(args[0].arr, k, &a);
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_cumulative(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int axis, initial = 0;
    zc_dtype dt = ZC_DTYPE_INVALID;
    if (ex_as_axis(&args[1], "axis", 1, &axis) < 0) return -1;
    if (args[2].kind != V_NONE && ex_as_dtype(&args[2], "dtype", &dt) < 0) return -1;
    if (args[3].kind != V_NONE && ex_as_bool(&args[3], "include_initial", &initial) < 0) return -1;
    zc_array *x = args[0].arr, *flat = NULL;
    int ndim;
    if (ex_array_info(e, &args[0], &ndim, NULL, NULL, NULL) < 0) return -1;
    if (axis == ZC_AXIS_NONE && ndim > 1 && (!strcmp(f->name, "cumsum") || !strcmp(f->name, "cumprod"))) {
        int64_t m1 = -1; /* NumPy's cumsum(x) runs over the flattened array */
        int rc = zc_reshape(x, 1, &m1, &flat);
        if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
        x = flat;
    }
    zc_array *a = NULL;
    int rc = !strcmp(f->api, "cumulative_sum") ? zc_cumulative_sum(x, axis, dt, initial, &a)
                                               : zc_cumulative_prod(x, axis, dt, initial, &a);
    zc_array_release(flat);
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_unstack(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int axis = 0, ndim;
    int64_t shape[ZC_MAX_DIMS];
    if ((args[1].kind != V_NONE && ex_as_axis(&args[1], "axis", 0, &axis) < 0) ||
        ex_array_info(e, &args[0], &ndim, shape, NULL, NULL) < 0)
        return -1;
    int64_t n = axis >= -ndim && axis < ndim ? shape[axis < 0 ? axis + ndim : axis] : 0;
    if (n > 4096) return ex_fail(call->col, "unstack(): %lld arrays (at most 4096)", (long long)n);
    zc_array **r = malloc(sizeof *r * (size_t)(n ? n : 1));
    if (!r) return ex_fail(call->col, "out of memory");
    int rc = zc_unstack(args[0].arr, axis, r);
    if (rc < 0) {
        free(r);
        return ex_fail_zc(e, rc, call->col, f->name);
    }
    rc = ex_set_tuple(out, r, n, call->col);
    free(r);
    return rc;
}

/* broadcast_arrays(*arrays), meshgrid(*arrays, indexing='xy'): several arrays in, as many out. */
int ex_fn_several(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int mesh = !strcmp(f->api, "meshgrid"), most = mesh ? 7 : 8, n = 0, ij = 0;
    zc_array *in[8], *r[8];
    while (n < most && args[n].kind != V_NONE) n++;
    for (int k = n; k < most; k++)
        if (args[k].kind != V_NONE) return ex_fail(args[k].col, "%s(): arrays must be given in order", f->name);
    if (mesh && args[7].kind != V_NONE) {
        if (args[7].kind != V_STR || (strcmp(args[7].s, "xy") && strcmp(args[7].s, "ij")))
            return ex_fail(args[7].col, "meshgrid(): indexing must be 'xy' or 'ij'");
        ij = !strcmp(args[7].s, "ij");
    }
    for (int k = 0; k < n; k++)
        if (ex_need_array(f, &args[k], "each argument") < 0) return -1;
    for (int k = 0; k < n; k++) in[k] = args[k].arr;
    int rc = mesh ? zc_meshgrid(n, in, ij, r) : zc_broadcast_arrays(n, in, r);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    return ex_set_tuple(out, r, n, call->col);
}

int ex_fn_broadcast_shapes(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    (void)e;
    int n = 0, nds[8], nd;
    int64_t shp[8][ZC_MAX_DIMS], res[ZC_MAX_DIMS];
    const int64_t *ptr[8];
    while (n < 8 && args[n].kind != V_NONE) {
        if (ex_as_int_list(&args[n], "a shape", ZC_MAX_DIMS, &nds[n], shp[n]) < 0) return -1;
        ptr[n] = shp[n];
        n++;
    }
    if (zc_broadcast_shapes(n, nds, ptr, &nd, res) < 0) return ex_fail(call->col, "%s(): %s", f->name, zc_errmsg());
    memset(out, 0, sizeof *out);
    out->kind = V_TUPLE;
    out->col = call->col;
    out->items = calloc((size_t)(nd ? nd : 1), sizeof(ex_value));
    if (!out->items) {
        out->kind = V_NONE;
        return ex_fail(call->col, "out of memory");
    }
    out->n = nd;
    for (int d = 0; d < nd; d++) ex_set_int(&out->items[d], res[d], call->col);
    return 0;
}
