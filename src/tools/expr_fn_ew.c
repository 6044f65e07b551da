/* tools/expr_fn_ew.c — handlers of elementwise functions (numbers folded,
 * expr_fold.c), where, clip, reductions, astype and rechunk. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

int ex_call_ew(ex_ctx *e, const char *api, int nargs, const ex_value *args, int col, ex_value *out)
{
    zc_array *a[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < nargs && rc == 0; i++) rc = ex_as_array(e, &args[i], api, &a[i]);
    zc_array *r = NULL;
    if (rc == 0) {
        int zrc = zc_elementwise(api, nargs, a, &r);
        if (zrc < 0) rc = ex_fail_zc(e, zrc, col, api);
    }
    for (int i = 0; i < nargs; i++) zc_array_release(a[i]);
    if (rc < 0) return -1;
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = r;
    out->col = col;
    return 0;
}

int ex_fn_unary(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (args[0].kind != V_ARRAY && args[0].kind != V_NUM)
        return ex_fail(args[0].col, "%s(): expected an array or a number, got %s", f->name, ex_kind_name(&args[0]));
    if (args[0].kind == V_NUM) {
        int r = ex_fold_function(f->api, 1, args, call->col, out);
        if (r) return r < 0 ? -1 : 0;
    }
    return ex_call_ew(e, f->api, 1, args, call->col, out);
}

int ex_fn_binary(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    for (int i = 0; i < 2; i++)
        if (args[i].kind != V_ARRAY && args[i].kind != V_NUM)
            return ex_fail(args[i].col, "%s(): expected an array or a number, got %s", f->name, ex_kind_name(&args[i]));
    if (args[0].kind == V_NUM && args[1].kind == V_NUM) {
        int r = ex_fold_function(f->api, 2, args, call->col, out);
        if (r) return r < 0 ? -1 : 0;
    }
    return ex_call_ew(e, f->api, 2, args, call->col, out);
}

int ex_fn_where(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    for (int i = 0; i < 3; i++)
        if (args[i].kind != V_ARRAY && args[i].kind != V_NUM)
            return ex_fail(args[i].col, "where(): expected an array or a number, got %s", ex_kind_name(&args[i]));
    if (args[0].kind == V_NUM && args[1].kind == V_NUM && args[2].kind == V_NUM) {
        *out = ex_num_f(&args[0]) != 0 ? args[1] : args[2];
        out->col = call->col;
        return 0;
    }
    return ex_call_ew(e, "where", 3, args, call->col, out);
}

/* clip(x, min, max) = minimum(maximum(x, min), max), either bound None */
int ex_fn_clip(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    ex_value cur;
    if (args[0].kind != V_ARRAY && args[0].kind != V_NUM)
        return ex_fail(args[0].col, "clip(): x must be an array or a number, got %s", ex_kind_name(&args[0]));
    cur = args[0];
    if (cur.kind == V_ARRAY) zc_array_retain(cur.arr);
    for (int k = 1; k <= 2; k++) {
        if (args[k].kind == V_NONE) continue;
        if (args[k].kind != V_NUM && args[k].kind != V_ARRAY) {
            ex_value_clear(&cur);
            return ex_fail(args[k].col, "clip(): bounds must be arrays, numbers or None, got %s", ex_kind_name(&args[k]));
        }
        ex_value pair[2] = {cur, args[k]}, next;
        int rc = -1, folded = 0;
        if (cur.kind == V_NUM && args[k].kind == V_NUM)
            folded = ex_fold_function(k == 1 ? "maximum" : "minimum", 2, pair, call->col, &next);
        if (folded) rc = folded < 0 ? -1 : 0;
        else rc = ex_call_ew(e, k == 1 ? "maximum" : "minimum", 2, pair, call->col, &next);
        ex_value_clear(&cur);
        if (rc < 0) return -1;
        cur = next;
    }
    *out = cur;
    return 0;
}

int ex_fn_reduce(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    const char *api = f->api;
    if (args[0].kind != V_ARRAY)
        return ex_fail(args[0].col, "%s(): x must be an array, got %s", f->name, ex_kind_name(&args[0]));
    int ndim;
    zc_dtype dt;
    int64_t shape[ZC_MAX_DIMS];
    if (ex_array_info(e, &args[0], &ndim, shape, NULL, &dt) < 0) return -1;
    int is_arg = !strcmp(api, "argmin") || !strcmp(api, "argmax");
    int axes[ZC_MAX_DIMS], naxes = 0;
    const ex_value *ax = &args[1];
    if (ax->kind == V_NUM || ax->kind == V_TUPLE) {
        int cnt = ax->kind == V_TUPLE ? ax->n : 1;
        if (is_arg && ax->kind == V_TUPLE)
            return ex_fail(ax->col, "%s(): axis must be an integer or None, not a tuple", f->name);
        if (cnt > ZC_MAX_DIMS) return ex_fail(ax->col, "%s(): too many axes", f->name);
        for (int k = 0; k < cnt; k++) {
            const ex_value *v = ax->kind == V_TUPLE ? &ax->items[k] : ax;
            int64_t a;
            if (ex_as_int(v, "axis", &a) < 0) return -1;
            if (a < -ndim || a >= ndim)
                return ex_fail(v->col, "%s(): axis %lld is out of bounds for an array of %d dimension%s", f->name,
                            (long long)a, ndim, ndim == 1 ? "" : "s");
            if (a < 0) a += ndim;
            for (int j = 0; j < naxes; j++)
                if (axes[j] == a) return ex_fail(v->col, "%s(): axis %lld is repeated", f->name, (long long)a);
            axes[naxes++] = (int)a;
        }
        if (ax->kind == V_TUPLE && cnt == 0) {
            /* axis=() reduces nothing: NumPy returns the values themselves (as the result dtype) */
            return ex_fail(ax->col, "%s(): axis=() (reducing no axis) is not supported", f->name);
        }
    } else if (ax->kind != V_NONE) {
        return ex_fail(ax->col, "%s(): axis must be an integer, a tuple of integers or None, got %s", f->name,
                    ex_kind_name(ax));
    }
    int keepdims = 0;
    if (args[2].kind != V_NONE && ex_as_bool(&args[2], "keepdims", &keepdims) < 0) return -1;
    double ddof = 0;
    zc_array *x = args[0].arr;
    zc_array_retain(x);
    if (!strcmp(api, "var") || !strcmp(api, "std")) {
        if (args[3].kind != V_NONE && ex_as_number(&args[3], "correction", &ddof) < 0) {
            zc_array_release(x);
            return -1;
        }
    } else if (!strcmp(api, "sum") || !strcmp(api, "prod") || !strcmp(api, "mean")) {
        if (args[3].kind != V_NONE) { /* dtype=: reduce the values converted to it */
            zc_dtype want;
            if (ex_as_dtype(&args[3], "dtype", &want) < 0) {
                zc_array_release(x);
                return -1;
            }
            zc_array *c;
            int rc = zc_astype(x, want, &c);
            zc_array_release(x);
            if (rc < 0) return ex_fail_zc(e, rc, args[3].col, "astype");
            x = c;
        }
    }
    zc_array *r;
    int rc = zc_reduce(api, x, axes, naxes, keepdims, ddof, &r);
    zc_array_release(x);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, api);
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = r;
    return 0;
}

int ex_fn_astype(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    zc_dtype dt;
    if (ex_as_dtype(&args[1], "dtype", &dt) < 0) return -1;
    zc_array *x;
    if (ex_as_array(e, &args[0], "astype", &x) < 0) return -1;
    zc_array *a;
    int rc = zc_astype(x, dt, &a);
    zc_array_release(x);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, "astype");
    return ex_set_array(out, a);
}

int ex_fn_rechunk(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (args[0].kind != V_ARRAY)
        return ex_fail(args[0].col, "rechunk(): x must be an array, got %s", ex_kind_name(&args[0]));
    int ndim;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    if (ex_array_info(e, &args[0], &ndim, shape, NULL, NULL) < 0) return -1;
    int has = ex_as_chunks(&args[1], ndim, shape, chunks);
    if (has < 0) return -1;
    if (!has) return ex_fail(args[1].col, "rechunk(): chunks must be given");
    zc_array *a;
    int rc = zc_rechunk(args[0].arr, chunks, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, "rechunk");
    return ex_set_array(out, a);
}
