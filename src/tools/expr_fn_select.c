/* tools/expr_fn_select.c — sizes that depend on the data: x[mask], an integer
 * array (or a [list]) as an index along one dim, nonzero, and isin. The first
 * three are counted or read when the expression is evaluated, under the bound
 * ex_set_spec gave (zcube eval's --allowed-mem); without one they are refused. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

static const zc_spec *count_spec;

void ex_set_spec(const zc_spec *spec) { count_spec = spec; }

int ex_need_count_spec(int col, const char *what)
{
    if (count_spec) return 0;
    return ex_fail(col, "%s: its size depends on the data and is counted first, which needs the memory bound of a "
                        "computation (zcube eval sets it)", what);
}

int ex_check_held(int col, const char *what, int64_t n)
{
    if (ex_need_count_spec(col, what) < 0) return -1;
    if (n < 0 || (uint64_t)n > count_spec->allowed_mem / 8 / sizeof(int64_t))
        return ex_fail(col, "%s of %lld integers: more than an eighth of --allowed-mem", what, (long long)n);
    return 0;
}

/* The integers of index array v (1-D or 0-d, any integer dtype), computed now
 * under count_spec; *idx malloc'd. */
static int index_values(ex_ctx *e, const ex_value *v, const char *what, int64_t **idx, int64_t *n, int *ndim)
{
    int64_t shape[ZC_MAX_DIMS];
    zc_dtype dt;
    if (ex_array_info(e, v, ndim, shape, NULL, &dt) < 0) return -1;
    if (*ndim > 1) return ex_fail(v->col, "%s must have 1 dimension (it has %d)", what, *ndim);
    if (dt < ZC_INT8 || dt > ZC_UINT64)
        return ex_fail(v->col, "%s must be integer, not %s", what, zc_dtype_name(dt));
    *n = *ndim ? shape[0] : 1;
    if (ex_check_held(v->col, what, *n) < 0) return -1;
    zc_array *i64;
    int rc = zc_astype(v->arr, ZC_INT64, &i64);
    if (rc < 0) return ex_fail_zc(e, rc, v->col, NULL);
    *idx = malloc(sizeof **idx * (size_t)(*n ? *n : 1));
    rc = *idx ? zc_compute_buffer(count_spec, i64, *idx, sizeof **idx * (size_t)*n, NULL) : ZC_ENOMEM;
    zc_array_release(i64);
    if (rc < 0) {
        free(*idx);
        return ex_fail_zc(e, rc, v->col, what);
    }
    return 0;
}

int ex_int_values(ex_ctx *e, const ex_value *v, const char *what, int64_t **vals, int64_t *n, int *ndim)
{
    if (v->kind == V_ARRAY) return index_values(e, v, what, vals, n, ndim);
    *n = v->kind == V_TUPLE ? v->n : 1;
    *ndim = v->kind == V_TUPLE;
    if (!(*vals = malloc(sizeof **vals * (size_t)(*n ? *n : 1)))) return cli_seterr("out of memory");
    for (int64_t k = 0; k < *n; k++)
        if (ex_as_int(v->kind == V_TUPLE ? &v->items[k] : v, what, &(*vals)[k]) < 0) {
            free(*vals);
            return -1;
        }
    return 0;
}

int ex_array_index(ex_ctx *e, zc_array *x, zc_index *idx, int nidx, int adv, const ex_value *v, zc_array **out,
                   int *mask)
{
    int ndim = 1, xnd, consumed = 0, after = 0, ell = 0;
    zc_dtype dt = ZC_INT64;
    if (zc_array_info(x, &xnd, NULL, NULL, NULL) < 0) return ex_fail_zc(e, ZC_EINVAL, v->col, NULL);
    if (v->kind == V_ARRAY && ex_array_info(e, v, &ndim, NULL, NULL, &dt) < 0) return -1;
    if (dt == ZC_BOOL) {
        if (nidx != 1) return ex_fail(v->col, "a boolean array index must be the only index");
        if (ex_need_count_spec(v->col, "x[mask]") < 0) return -1;
        int rc = zc_mask_select(count_spec, x, v->arr, out);
        if (rc < 0) return ex_fail_zc(e, rc, v->col, NULL);
        *mask = 1;
        return 0;
    }
    int64_t *vals = NULL, n = 0;
    if (ex_int_values(e, v, v->kind == V_TUPLE ? "an index in a list" : "an array index", &vals, &n, &ndim) < 0)
        return -1;
    if (ndim == 0) { /* a 0-d integer array is an integer */
        idx[adv] = (zc_index){.kind = ZC_IDX_INT, .index = vals[0]};
        free(vals);
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    for (int k = 0; k < nidx; k++) {
        if (idx[k].kind == ZC_IDX_ELLIPSIS) ell = k < adv;
        else if (idx[k].kind != ZC_IDX_NEWAXIS) consumed += k < adv, after += k >= adv;
    }
    int axis = ell ? xnd - after : consumed; /* the input dim the entry indexes */
    if (axis >= xnd) {
        free(vals);
        return ex_fail(v->col, "too many indices for an array of %d dimensions", xnd);
    }
    int rc = zc_take(x, vals, n, axis, out);
    free(vals);
    return rc < 0 ? ex_fail_zc(e, rc, v->col, NULL) : 0;
}

int ex_int_arrays_index(ex_ctx *e, zc_array *x, const ex_value *items, int nitems, zc_array **out)
{
    int xnd;
    int64_t shape[ZC_MAX_DIMS];
    if (zc_array_info(x, &xnd, shape, NULL, NULL) < 0) return ex_fail_zc(e, ZC_EINVAL, items[0].col, NULL);
    if (nitems > xnd) return ex_fail(items[0].col, "too many indices for an array of %d dimensions", xnd);
    int64_t *vals[ZC_MAX_DIMS] = {NULL}, len[ZC_MAX_DIMS], n = 1, lead = 1;
    int rc = 0;
    for (int k = 0; k < nitems && rc == 0; k++) {
        const ex_value *v = &items[k];
        int nd;
        if (v->kind != V_ARRAY && v->kind != V_TUPLE && !(v->kind == V_NUM && v->is_int && !v->is_bool)) {
            rc = ex_fail(v->col, "several array indices combine with integers only, not with %s", ex_kind_name(v));
            break;
        }
        if ((rc = ex_int_values(e, v, "an array index", &vals[k], &len[k], &nd)) < 0) break;
        if (len[k] != 1 && n != 1 && len[k] != n)
            rc = ex_fail(v->col, "array indices of lengths %lld and %lld do not broadcast", (long long)n,
                         (long long)len[k]);
        else if (len[k] != 1)
            n = len[k];
        for (int64_t j = 0; rc == 0 && j < len[k]; j++) {
            int64_t i = vals[k][j];
            if (i < -shape[k] || i >= shape[k])
                rc = ex_fail(v->col, "index %lld is out of bounds for dimension %d of size %lld", (long long)i, k,
                             (long long)shape[k]);
            else if (i < 0)
                vals[k][j] = i + shape[k];
        }
        lead *= shape[k];
    }
    int64_t *flat = rc == 0 ? malloc(sizeof *flat * (size_t)(n ? n : 1)) : NULL;
    if (rc == 0 && !flat) rc = cli_seterr("out of memory");
    for (int64_t j = 0; rc == 0 && j < n; j++) { /* row-major position over the indexed dims */
        int64_t p = 0;
        for (int k = 0; k < nitems; k++) p = p * shape[k] + vals[k][len[k] == 1 ? 0 : j];
        flat[j] = p;
    }
    zc_array *y = NULL;
    int64_t yshape[ZC_MAX_DIMS];
    yshape[0] = lead;
    for (int d = nitems; d < xnd; d++) yshape[1 + d - nitems] = shape[d];
    if (rc == 0) { /* the library's failures, named at the subscript */
        int zrc = zc_reshape(x, 1 + xnd - nitems, yshape, &y);
        if (zrc == 0) zrc = zc_take(y, flat, n, 0, out);
        if (zrc < 0) rc = ex_fail_zc(e, zrc, items[0].col, NULL);
    }
    zc_array_release(y);
    free(flat);
    for (int k = 0; k < nitems; k++) free(vals[k]);
    return rc < 0 ? -1 : 0;
}

int ex_fn_nonzero(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0 || ex_need_count_spec(call->col, "nonzero()") < 0) return -1;
    int ndim;
    zc_array *r[ZC_MAX_DIMS];
    if (ex_array_info(e, &args[0], &ndim, NULL, NULL, NULL) < 0) return -1;
    int rc = zc_nonzero(count_spec, args[0].arr, r);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    return ex_set_tuple(out, r, ndim, call->col);
}

int ex_fn_isin(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int invert = 0;
    zc_array *x = NULL, *t = NULL, *a = NULL;
    if (args[2].kind != V_NONE && ex_as_bool(&args[2], "invert", &invert) < 0) return -1;
    if (ex_as_array(e, &args[0], "isin(): x1", &x) < 0) return -1;
    if (ex_as_array(e, &args[1], "isin(): x2", &t) < 0) {
        zc_array_release(x);
        return -1;
    }
    int rc = zc_isin(x, t, invert, &a);
    zc_array_release(x);
    zc_array_release(t);
    return ex_lib_result(e, f, call, rc, &a, out);
}

/* unique_all(x) -> (values, indices, inverse_indices, counts); unique_counts(x)
 * -> (values, counts); unique_inverse(x) -> (values, inverse_indices);
 * unique_values(x) -> values. Counted now, like x[mask]. */
int ex_fn_unique(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0 || ex_need_count_spec(call->col, f->name) < 0) return -1;
    zc_array *r[4] = {NULL, NULL, NULL, NULL};
    const char *which = f->api; /* the results, in order: v(alues) i(ndices) n (inverse) c(ounts) */
    zc_array **want[4];
    for (int k = 0; k < 4; k++) want[k] = strchr(which, "vinc"[k]) ? &r[k] : NULL;
    int rc = zc_unique(count_spec, args[0].arr, want[0], want[1], want[2], want[3]);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    int n = 0;
    for (int k = 0; k < 4; k++)
        if (r[k]) r[n++] = r[k];
    if (n == 1) return ex_set_array(out, r[0]);
    return ex_set_tuple(out, r, n, call->col);
}
