/* tools/expr_value.c — the evaluator's values: clearing, naming them in
 * messages, making numbers, errors at a column, and converting values into
 * the library's arguments (arrays, integers, dtypes, shapes, chunks, axes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

void ex_value_clear(ex_value *v)
{
    if (v->kind == V_ARRAY) zc_array_release(v->arr);
    if (v->kind == V_TUPLE || v->kind == V_SLICE) {
        for (int k = 0; k < v->n; k++) ex_value_clear(&v->items[k]);
        free(v->items);
    }
    memset(v, 0, sizeof *v);
}

const char *ex_kind_name(const ex_value *v)
{
    switch (v->kind) {
    case V_NONE: return "None";
    case V_NUM: return v->is_bool ? "a bool" : v->is_int ? "an integer" : "a float";
    case V_STR: return "a string";
    case V_ARRAY: return "an array";
    case V_DTYPE: return "a dtype";
    case V_TUPLE: return "a tuple";
    case V_ELLIPSIS: return "...";
    case V_SLICE: return "a slice";
    }
    return "?";
}

double ex_num_f(const ex_value *v) { return v->is_int ? (double)v->i : v->f; }

void ex_set_int(ex_value *v, int64_t i, int col)
{
    memset(v, 0, sizeof *v);
    v->kind = V_NUM;
    v->is_int = 1;
    v->i = i;
    v->col = col;
}

void ex_set_bool(ex_value *v, int b, int col)
{
    ex_set_int(v, b != 0, col);
    v->is_bool = 1;
}

void ex_set_float(ex_value *v, double f, int col)
{
    memset(v, 0, sizeof *v);
    v->kind = V_NUM;
    v->f = f;
    v->col = col;
}

/* A failed library call: its message, at the column of the expression. */
int ex_fail_zc(ex_ctx *e, int rc, int col, const char *what)
{
    e->status = rc;
    const char *m = zc_errmsg();
    if (!*m) m = zc_strerror(rc);
    if (what && !strstr(m, what)) return ex_fail(col, "%s: %s", what, m);
    return ex_fail(col, "%s", m);
}

int ex_set_array(ex_value *out, zc_array *a)
{
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = a;
    return 0;
}

int ex_set_tuple(ex_value *out, zc_array *const *r, int64_t n, int col)
{
    memset(out, 0, sizeof *out);
    out->kind = V_TUPLE;
    out->items = calloc((size_t)(n ? n : 1), sizeof(ex_value));
    if (!out->items) {
        for (int64_t k = 0; k < n; k++) zc_array_release(r[k]);
        out->kind = V_NONE;
        return ex_fail(col, "out of memory");
    }
    out->n = (int)n;
    for (int64_t k = 0; k < n; k++) {
        out->items[k].kind = V_ARRAY;
        out->items[k].arr = r[k];
        out->items[k].col = col;
    }
    return 0;
}

/* A value as an array: arrays as they are, numbers as weak scalars. The
 * caller owns *arr (one reference). */
int ex_as_array(ex_ctx *e, const ex_value *v, const char *what, zc_array **arr)
{
    if (v->kind == V_ARRAY) {
        zc_array_retain(v->arr);
        *arr = v->arr;
        return 0;
    }
    if (v->kind == V_NUM) {
        int rc = zc_scalar(ex_num_f(v), v->is_int, arr);
        if (rc < 0) return ex_fail_zc(e, rc, v->col, what);
        return 0;
    }
    return ex_fail(v->col, "%s: expected an array or a number, got %s", what, ex_kind_name(v));
}

int ex_as_int(const ex_value *v, const char *what, int64_t *out)
{
    if (v->kind == V_NUM && v->is_int) {
        *out = v->i;
        return 0;
    }
    if (v->kind == V_NUM && !v->is_int && v->f == floor(v->f) && fabs(v->f) < 9e15)
        return ex_fail(v->col, "%s must be an integer, got the float %g (write %lld)", what, v->f, (long long)v->f);
    return ex_fail(v->col, "%s must be an integer, got %s", what, ex_kind_name(v));
}

int ex_as_number(const ex_value *v, const char *what, double *out)
{
    if (v->kind != V_NUM) return ex_fail(v->col, "%s must be a number, got %s", what, ex_kind_name(v));
    *out = ex_num_f(v);
    return 0;
}

int ex_as_bool(const ex_value *v, const char *what, int *out)
{
    if (v->kind != V_NUM || !v->is_int) return ex_fail(v->col, "%s must be True or False, got %s", what, ex_kind_name(v));
    *out = v->i != 0;
    return 0;
}

int ex_as_dtype(const ex_value *v, const char *what, zc_dtype *out)
{
    if (v->kind == V_DTYPE) {
        *out = v->dtype;
        return 0;
    }
    if (v->kind == V_STR) {
        size_t itemsize;
        if (zc_dtype_parse(v->s, out, &itemsize) < 0 || *out == ZC_BYTES || *out == ZC_UNICODE || *out == ZC_RAW)
            return ex_fail(v->col, "%s: unknown data type '%s' (use bool, int8..int64, uint8..uint64, float16, "
                        "float32, float64, complex64, complex128)", what, v->s);
        return 0;
    }
    return ex_fail(v->col, "%s must be a data type such as float32 or \"int16\", got %s", what, ex_kind_name(v));
}

/* A shape: an integer or a tuple of integers >= 0. */
int ex_as_shape(const ex_value *v, const char *what, int *ndim, int64_t *shape)
{
    if (v->kind == V_NUM) {
        if (ex_as_int(v, what, &shape[0]) < 0) return -1;
        if (shape[0] < 0) return ex_fail(v->col, "%s: negative dimension %lld", what, (long long)shape[0]);
        *ndim = 1;
        return 0;
    }
    if (v->kind != V_TUPLE) return ex_fail(v->col, "%s must be an integer or a tuple of integers, got %s", what, ex_kind_name(v));
    if (v->n > ZC_MAX_DIMS) return ex_fail(v->col, "%s: more than %d dimensions", what, ZC_MAX_DIMS);
    for (int d = 0; d < v->n; d++) {
        if (ex_as_int(&v->items[d], what, &shape[d]) < 0) return -1;
        if (shape[d] < 0) return ex_fail(v->items[d].col, "%s: negative dimension %lld", what, (long long)shape[d]);
    }
    *ndim = v->n;
    return 0;
}

/* Chunks for an array of `shape`: None (NULL: automatic), an integer for every
 * dimension, or a tuple with one entry per dimension; -1 or None = the whole
 * dimension. Returns 1 when chunks were given, 0 for automatic, -1 on error. */
int ex_as_chunks(const ex_value *v, int ndim, const int64_t *shape, int64_t *chunks)
{
    if (v->kind == V_NONE) return 0;
    if (v->kind == V_NUM) {
        int64_t c;
        if (ex_as_int(v, "chunks", &c) < 0) return -1;
        if (c == 0 || c < -1) return ex_fail(v->col, "chunks must be positive (or -1 for a whole dimension), got %lld",
                                          (long long)c);
        for (int d = 0; d < ndim; d++) chunks[d] = c == -1 || c > shape[d] ? (shape[d] > 0 ? shape[d] : 1) : c;
        return 1;
    }
    if (v->kind != V_TUPLE) return ex_fail(v->col, "chunks must be an integer or a tuple, got %s", ex_kind_name(v));
    if (v->n != ndim)
        return ex_fail(v->col, "chunks has %d entr%s but the array has %d dimension%s", v->n, v->n == 1 ? "y" : "ies",
                    ndim, ndim == 1 ? "" : "s");
    for (int d = 0; d < ndim; d++) {
        const ex_value *c = &v->items[d];
        int64_t x = -1;
        if (c->kind != V_NONE && ex_as_int(c, "chunks", &x) < 0) return -1;
        if (x == 0 || x < -1)
            return ex_fail(c->col, "chunks must be positive (or -1 for a whole dimension), got %lld", (long long)x);
        chunks[d] = x == -1 || x > shape[d] ? (shape[d] > 0 ? shape[d] : 1) : x;
    }
    return 1;
}

/* An integer or a tuple of integers (n of them, at most max); negatives allowed. */
int ex_as_int_list(const ex_value *v, const char *what, int max, int *n, int64_t *out)
{
    if (v->kind == V_NUM) {
        *n = 1;
        return ex_as_int(v, what, &out[0]);
    }
    if (v->kind != V_TUPLE) return ex_fail(v->col, "%s must be an integer or a tuple of integers, got %s", what, ex_kind_name(v));
    if (v->n > max) return ex_fail(v->col, "%s: more than %d entries", what, max);
    for (int k = 0; k < v->n; k++)
        if (ex_as_int(&v->items[k], what, &out[k]) < 0) return -1;
    *n = v->n;
    return 0;
}

/* Axes: None (*n = -1), an integer or a tuple of integers. */
int ex_as_axes(const ex_value *v, const char *what, int *n, int *axes)
{
    if (v->kind == V_NONE) {
        *n = -1;
        return 0;
    }
    int64_t a[ZC_MAX_DIMS];
    if (ex_as_int_list(v, what, ZC_MAX_DIMS, n, a) < 0) return -1;
    for (int k = 0; k < *n; k++) {
        if (a[k] < INT32_MIN + 1 || a[k] > INT32_MAX)
            return ex_fail(v->kind == V_TUPLE ? v->items[k].col : v->col, "%s: axis %lld is out of range", what, (long long)a[k]);
        axes[k] = (int)a[k];
    }
    return 0;
}

/* One axis, or None as ZC_AXIS_NONE when none_ok. */
int ex_as_axis(const ex_value *v, const char *what, int none_ok, int *axis)
{
    if (v->kind == V_NONE && none_ok) {
        *axis = ZC_AXIS_NONE;
        return 0;
    }
    int64_t a = 0;
    if (ex_as_int(v, what, &a) < 0) return -1;
    if (a < INT32_MIN + 1 || a > INT32_MAX) return ex_fail(v->col, "%s: axis %lld is out of range", what, (long long)a);
    *axis = (int)a;
    return 0;
}

/* A tuple or list of arrays (numbers become 0-d weak scalars); *n arrays retained into arr. */
int ex_as_arrays(ex_ctx *e, const ex_fdef *f, const ex_value *v, zc_array **arr, int max, int *n)
{
    if (v->kind != V_TUPLE || v->n == 0)
        return ex_fail(v->col, "%s(): arrays must be a non-empty tuple or list of arrays, got %s", f->name, ex_kind_name(v));
    if (v->n > max) return ex_fail(v->col, "%s(): more than %d arrays", f->name, max);
    for (int k = 0; k < v->n; k++) {
        if (v->items[k].kind != V_ARRAY) {
            for (int j = 0; j < k; j++) zc_array_release(arr[j]);
            return ex_fail(v->items[k].col, "%s(): expected arrays, got %s", f->name, ex_kind_name(&v->items[k]));
        }
        arr[k] = v->items[k].arr;
        zc_array_retain(arr[k]);
    }
    *n = v->n;
    return 0;
}

int ex_need_array(const ex_fdef *f, const ex_value *v, const char *param)
{
    if (v->kind == V_ARRAY) return 0;
    return ex_fail(v->col, "%s(): %s must be an array, got %s", f->name, param, ex_kind_name(v));
}

int ex_array_info(ex_ctx *e, const ex_value *v, int *ndim, int64_t *shape, int64_t *chunks, zc_dtype *dtype)
{
    int rc = zc_array_info(v->arr, ndim, shape, chunks, dtype);
    if (rc < 0) return ex_fail_zc(e, rc, v->col, NULL);
    return 0;
}

/* Finish a handler: the library's result or its error at the call. */
int ex_lib_result(ex_ctx *e, const ex_fdef *f, const ex_node *call, int rc, zc_array *const *a, ex_value *out)
{
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    return ex_set_array(out, *a); /* read after the call that set it (argument order is unspecified) */
}

/* Default dtype of a fill value: bool, int64 or float64, like Python scalars. */
zc_dtype ex_default_dtype(const ex_value *v)
{
    if (v->kind == V_NUM && v->is_bool) return ZC_BOOL;
    if (v->kind == V_NUM && v->is_int) return ZC_INT64;
    return ZC_FLOAT64;
}
