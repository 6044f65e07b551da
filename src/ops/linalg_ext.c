/* ops/linalg_ext.c — the rest of the array API's linalg extension, composed
 * of the library's other operations (so each is planned under the bound as
 * they are): diagonal (a take of the flattened matrices), trace, vector_norm
 * and matrix_norm (reductions of |x|), cross (three products of components),
 * matrix_power (by squaring), and, from the SVD of each matrix, matrix_rank
 * and pinv. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/held.h"

static int ew1(held *t, const char *fn, zc_array *a, zc_array **out)
{
    zc_array *r = NULL;
    int rc = zc_elementwise(fn, 1, &a, &r);
    return held_take(t, rc, &r, out);
}

static int ew2(held *t, const char *fn, zc_array *a, zc_array *b, zc_array **out)
{
    zc_array *args[2] = {a, b}, *r = NULL;
    int rc = zc_elementwise(fn, 2, args, &r);
    return held_take(t, rc, &r, out);
}

/* fn(a, v) for a weak scalar v */
static int ew_num(held *t, const char *fn, zc_array *a, double v, zc_array **out)
{
    zc_array *s = NULL;
    ZC_TRY(held_take(t, zc_scalar(v, 0, &s), &s, &s));
    return ew2(t, fn, a, s, out);
}

static int reduce(held *t, const char *fn, zc_array *a, const int *axes, int naxes, int keepdims, zc_array **out)
{
    zc_array *r = NULL;
    int rc = zc_reduce(fn, a, axes, naxes, keepdims, 0, &r);
    return held_take(t, rc, &r, out);
}

static bool is_float(zc_dtype d)
{
    return d == ZC_FLOAT16 || d == ZC_FLOAT32 || d == ZC_FLOAT64 || d == ZC_COMPLEX64 || d == ZC_COMPLEX128;
}

/* |x| in a real floating dtype (integers and bools as float64) */
static int magnitude(held *t, zc_array *x, zc_array **out)
{
    if (!is_float(x->dtype)) {
        zc_array *f = NULL;
        ZC_TRY(held_take(t, zc_astype(x, ZC_FLOAT64, &f), &f, &x));
    }
    return ew1(t, "abs", x, out);
}

static int matrices(const char *fn, const zc_array *x)
{
    if (!x) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (x->ndim < 2) return zc__err(ZC_EINVAL, "%s: needs a matrix or a stack of matrices, got a %d-D array", fn, x->ndim);
    return 0;
}

int zc_diagonal(zc_array *x, int64_t offset, zc_array **out)
{
    zc__err_clear();
    ZC_TRY(matrices("diagonal", x));
    if (!out) return zc__err(ZC_EINVAL, "diagonal: NULL output");
    int nd = x->ndim;
    int64_t m = x->shape[nd - 2], n = x->shape[nd - 1], shape[ZC_MAX_DIMS];
    int64_t i0 = offset < 0 ? -offset : 0, i1 = m < n - offset ? m : n - offset, k = i1 > i0 ? i1 - i0 : 0;
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)(nd - 2));
    shape[nd - 2] = m * n;
    int64_t *idx = zc__malloc_array((size_t)(k ? k : 1), sizeof(int64_t));
    if (!idx) return ZC_ENOMEM;
    for (int64_t j = 0; j < k; j++) idx[j] = (i0 + j) * n + i0 + j + offset;
    held t = {.n = 0};
    zc_array *flat = NULL, *d = NULL;
    int rc = held_take(&t, zc_reshape(x, nd - 1, shape, &flat), &flat, &flat);
    if (rc == 0) rc = held_take(&t, zc_take(flat, idx, k, nd - 2, &d), &d, &d);
    if (rc == 0) held_give(d, out);
    zc__free(idx);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "diagonal") : 0;
}

int zc_trace(zc_array *x, int64_t offset, zc_array **out)
{
    zc__err_clear();
    if (!out) return zc__err(ZC_EINVAL, "trace: NULL output");
    zc_array *d = NULL;
    ZC_TRY(zc_diagonal(x, offset, &d));
    int ax = d->ndim - 1, rc = zc_reduce("sum", d, &ax, 1, 0, 0, out);
    zc_array_release(d);
    return rc;
}

/* ord = p over axes of |x|, |x| given (a real floating array) */
static int p_norm(held *t, zc_array *ax_abs, const int *axes, int naxes, int keepdims, double ord, zc_array **out)
{
    zc_array *a = ax_abs, *r = NULL;
    if (isinf(ord)) return reduce(t, ord > 0 ? "max" : "min", a, axes, naxes, keepdims, out);
    if (ord == 0) { /* the number of non-zero elements, as a float */
        zc_array *nz, *f;
        ZC_TRY(ew_num(t, "not_equal", a, 0, &nz));
        ZC_TRY(held_take(t, zc_astype(nz, a->dtype, &f), &f, &f));
        return reduce(t, "sum", f, axes, naxes, keepdims, out);
    }
    if (ord == 1) return reduce(t, "sum", a, axes, naxes, keepdims, out);
    if (ord == 2) {
        ZC_TRY(ew2(t, "multiply", a, a, &a));
        ZC_TRY(reduce(t, "sum", a, axes, naxes, keepdims, &r));
        return ew1(t, "sqrt", r, out);
    }
    ZC_TRY(ew_num(t, "pow", a, ord, &a));
    ZC_TRY(reduce(t, "sum", a, axes, naxes, keepdims, &r));
    return ew_num(t, "pow", r, 1.0 / ord, out);
}

int zc_vector_norm(zc_array *x, const int *axes, int naxes, int keepdims, double ord, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "vector_norm: NULL argument");
    if (isnan(ord)) return zc__err(ZC_EINVAL, "vector_norm: ord is NaN");
    held t = {.n = 0};
    zc_array *a = NULL, *r = NULL;
    int rc = magnitude(&t, x, &a);
    if (rc == 0) rc = p_norm(&t, a, axes, naxes, keepdims, ord, &r);
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "vector_norm") : 0;
}

/* The singular values of x's matrices (..., k) (the SVD-based norms, rank, pinv). */
static int svals(held *t, zc_array *x, zc_array **s)
{
    zc_array *r = NULL;
    return held_take(t, zc_svdvals(x, &r), &r, s);
}

int zc_matrix_norm(zc_array *x, const char *ord, int keepdims, zc_array **out)
{
    zc__err_clear();
    ZC_TRY(matrices("matrix_norm", x));
    if (!out || !ord) return zc__err(ZC_EINVAL, "matrix_norm: NULL argument");
    int nd = x->ndim, last2[2] = {nd - 2, nd - 1};
    held t = {.n = 0};
    zc_array *a = NULL, *r = NULL, *s = NULL;
    int rc = 0;
    if (!strcmp(ord, "fro")) {
        rc = magnitude(&t, x, &a);
        if (rc == 0) rc = p_norm(&t, a, last2, 2, keepdims, 2, &r);
    } else if (!strcmp(ord, "1") || !strcmp(ord, "-1") || !strcmp(ord, "inf") || !strcmp(ord, "-inf")) {
        /* the largest (smallest) column sum (1) or row sum (inf) of |x| */
        bool cols = ord[strlen(ord) - 1] == '1', neg = ord[0] == '-';
        int ax = cols ? nd - 2 : nd - 1;
        rc = magnitude(&t, x, &a);
        if (rc == 0) rc = reduce(&t, "sum", a, &ax, 1, 1, &a);
        if (rc == 0) rc = reduce(&t, neg ? "min" : "max", a, last2, 2, keepdims, &r);
    } else if (!strcmp(ord, "nuc") || !strcmp(ord, "2") || !strcmp(ord, "-2")) {
        rc = svals(&t, x, &s);
        int axk = nd - 2; /* s: (..., k) */
        const char *fn = !strcmp(ord, "nuc") ? "sum" : !strcmp(ord, "2") ? "max" : "min";
        if (rc == 0) rc = reduce(&t, fn, s, &axk, 1, 0, &r);
        /* the singular values are float64: the result in x's precision */
        if (rc == 0 && (x->dtype == ZC_FLOAT32 || x->dtype == ZC_COMPLEX64))
            rc = held_take(&t, zc_astype(r, ZC_FLOAT32, &r), &r, &r);
        if (rc == 0 && keepdims) { /* the batch dims, then 1, 1 */
            int64_t shape[ZC_MAX_DIMS];
            for (int d = 0; d < nd - 2; d++) shape[d] = x->shape[d];
            shape[nd - 2] = shape[nd - 1] = 1;
            zc_array *k = NULL;
            rc = held_take(&t, zc_reshape(r, nd, shape, &k), &k, &r);
        }
    } else
        rc = zc__err(ZC_EINVAL, "matrix_norm: ord '%s' is none of fro, nuc, 1, -1, 2, -2, inf, -inf", ord);
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "matrix_norm") : 0;
}

int zc_cross(zc_array *x1, zc_array *x2, int axis, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out) return zc__err(ZC_EINVAL, "cross: NULL argument");
    int nd = x1->ndim > x2->ndim ? x1->ndim : x2->ndim;
    int64_t shape[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int d1 = d - (nd - x1->ndim), d2 = d - (nd - x2->ndim);
        int64_t s1 = d1 >= 0 ? x1->shape[d1] : 1, s2 = d2 >= 0 ? x2->shape[d2] : 1;
        if (s1 != s2 && s1 != 1 && s2 != 1)
            return zc__err(ZC_EINVAL, "cross: the shapes do not broadcast (dimension %d: %lld and %lld)", d,
                           (long long)s1, (long long)s2);
        shape[d] = s1 == 1 ? s2 : s1;
    }
    if (axis >= 0 || axis < -nd || axis < -x1->ndim || axis < -x2->ndim || x1->shape[x1->ndim + axis] != 3 ||
        x2->shape[x2->ndim + axis] != 3)
        return zc__err(ZC_EINVAL, "cross: axis %d must be negative and of size 3 in both arrays", axis);
    int ax = nd + axis;
    held t = {.n = 0};
    zc_array *a = NULL, *b = NULL, *ca[3], *cb[3], *parts[3], *r = NULL;
    int rc = held_take(&t, zc_broadcast_to(x1, nd, shape, &a), &a, &a);
    if (rc == 0) rc = held_take(&t, zc_broadcast_to(x2, nd, shape, &b), &b, &b);
    for (int64_t j = 0; j < 3 && rc == 0; j++) {
        rc = held_take(&t, zc_take(a, &j, 1, ax, &ca[j]), &ca[j], &ca[j]);
        if (rc == 0) rc = held_take(&t, zc_take(b, &j, 1, ax, &cb[j]), &cb[j], &cb[j]);
    }
    /* component i = a[i+1]·b[i+2] − a[i+2]·b[i+1] */
    for (int i = 0; i < 3 && rc == 0; i++) {
        zc_array *p, *q;
        int j = (i + 1) % 3, k = (i + 2) % 3;
        rc = ew2(&t, "multiply", ca[j], cb[k], &p);
        if (rc == 0) rc = ew2(&t, "multiply", ca[k], cb[j], &q);
        if (rc == 0) rc = ew2(&t, "subtract", p, q, &parts[i]);
    }
    if (rc == 0) rc = held_take(&t, zc_concat(3, parts, ax, &r), &r, &r);
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "cross") : 0;
}

int zc_matrix_power(zc_array *x, int64_t n, zc_array **out)
{
    zc__err_clear();
    ZC_TRY(matrices("matrix_power", x));
    if (!out) return zc__err(ZC_EINVAL, "matrix_power: NULL output");
    int nd = x->ndim;
    int64_t m = x->shape[nd - 1];
    if (x->shape[nd - 2] != m)
        return zc__err(ZC_EINVAL, "matrix_power: needs square matrices, got %lld x %lld", (long long)x->shape[nd - 2],
                       (long long)m);
    held t = {.n = 0};
    zc_array *r = NULL, *sq = x, *e = NULL;
    int rc = 0;
    if (n == 0) {
        rc = held_take(&t, zc_eye(m, m, 0, x->dtype, NULL, &e), &e, &e);
        if (rc == 0) rc = held_take(&t, zc_broadcast_to(e, nd, x->shape, &r), &r, &r);
    } else {
        if (n < 0) {
            zc_array *inv = NULL;
            rc = held_take(&t, zc_inv(x, &inv), &inv, &sq);
            if (n == INT64_MIN) rc = zc__err(ZC_EINVAL, "matrix_power: n = %lld is out of range", (long long)n);
            n = rc == 0 ? -n : 0;
        }
        /* by squaring: sq = x^(2^k), multiplied into r for each bit of n */
        while (rc == 0 && n) {
            if (n & 1) rc = r ? held_take(&t, zc_matmul(r, sq, &e), &e, &r) : (r = sq, 0);
            n >>= 1;
            if (rc == 0 && n) rc = held_take(&t, zc_matmul(sq, sq, &e), &e, &sq);
        }
    }
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "matrix_power") : 0;
}

/* the cutoff rtol · max(s) for the singular values s (..., k) of x's m×n
 * matrices, (..., 1) (rtol < 0: max(m, n) · eps of x's precision) */
static int cutoff(held *t, const zc_array *x, zc_array *s, double rtol, zc_array **out)
{
    if (rtol < 0) {
        double eps = x->dtype == ZC_FLOAT32 || x->dtype == ZC_COMPLEX64 ? FLT_EPSILON : DBL_EPSILON;
        int64_t m = x->shape[x->ndim - 2], n = x->shape[x->ndim - 1];
        rtol = (double)(m > n ? m : n) * eps;
    }
    zc_array *mx;
    int ax = s->ndim - 1;
    ZC_TRY(reduce(t, "max", s, &ax, 1, 1, &mx));
    return ew_num(t, "multiply", mx, rtol, out);
}

int zc_matrix_rank(zc_array *x, double rtol, zc_array **out)
{
    zc__err_clear();
    ZC_TRY(matrices("matrix_rank", x));
    if (!out) return zc__err(ZC_EINVAL, "matrix_rank: NULL output");
    held t = {.n = 0};
    zc_array *s = NULL, *cut = NULL, *gt = NULL, *r = NULL;
    int ax = x->ndim - 2, rc = svals(&t, x, &s);
    if (rc == 0) rc = cutoff(&t, x, s, rtol, &cut);
    if (rc == 0) rc = ew2(&t, "greater", s, cut, &gt);
    if (rc == 0) rc = reduce(&t, "count_nonzero", gt, &ax, 1, 0, &r);
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "matrix_rank") : 0;
}

int zc_pinv(zc_array *x, double rtol, zc_array **out)
{
    zc__err_clear();
    ZC_TRY(matrices("pinv", x));
    if (!out) return zc__err(ZC_EINVAL, "pinv: NULL output");
    held t = {.n = 0};
    zc_array *u = NULL, *s = NULL, *vt = NULL, *cut = NULL, *gt = NULL, *one = NULL, *safe = NULL, *inv = NULL;
    zc_array *zero = NULL, *sinv = NULL, *v = NULL, *uh = NULL, *vs = NULL, *r = NULL;
    int rc = zc_svd(x, &u, &s, &vt);
    zc_array *f[3] = {u, s, vt};
    for (int i = 0; i < 3 && f[0]; i++) { /* each kept (or, with no room, released) */
        int rc2 = held_add(&t, 0, f[i]);
        if (rc == 0) rc = rc2;
    }
    /* 1/s where s > cutoff, else 0 (1/1 computed there, never 1/0) */
    if (rc == 0) rc = cutoff(&t, x, s, rtol, &cut);
    if (rc == 0) rc = ew2(&t, "greater", s, cut, &gt);
    if (rc == 0) rc = held_take(&t, zc_scalar(1, 0, &one), &one, &one);
    if (rc == 0) rc = held_take(&t, zc_scalar(0, 0, &zero), &zero, &zero);
    if (rc == 0) rc = held_take(&t, zc_elementwise("where", 3, (zc_array *[]){gt, s, one}, &safe), &safe, &safe);
    if (rc == 0) rc = ew2(&t, "divide", one, safe, &inv);
    if (rc == 0) rc = held_take(&t, zc_elementwise("where", 3, (zc_array *[]){gt, inv, zero}, &sinv), &sinv, &sinv);
    /* pinv = V · diag(sinv) · Uᴴ */
    if (rc == 0) rc = held_conj_t(&t, vt, &v);
    if (rc == 0) rc = held_conj_t(&t, u, &uh);
    if (rc == 0 && x->ndim > 2) { /* sinv (..., k) as (..., 1, k), to scale the columns of each V */
        int64_t shape[ZC_MAX_DIMS];
        for (int d = 0; d < sinv->ndim - 1; d++) shape[d] = sinv->shape[d];
        shape[sinv->ndim - 1] = 1;
        shape[sinv->ndim] = sinv->shape[sinv->ndim - 1];
        rc = held_take(&t, zc_reshape(sinv, sinv->ndim + 1, shape, &sinv), &sinv, &sinv);
    }
    if (rc == 0) rc = ew2(&t, "multiply", v, sinv, &vs);
    if (rc == 0) rc = held_take(&t, zc_matmul(vs, uh, &r), &r, &r);
    if (rc == 0 && r->dtype != x->dtype && (x->dtype == ZC_FLOAT32 || x->dtype == ZC_COMPLEX64))
        rc = held_take(&t, zc_astype(r, x->dtype, &r), &r, &r);
    if (rc == 0) held_give(r, out);
    held_drop(&t);
    return rc < 0 ? zc__err_wrap(rc, "pinv") : 0;
}
