/* ops/unique.c — the array API's unique_all, unique_counts, unique_inverse and
 * unique_values (zc_unique), built from sorting and one selection, so each
 * step is planned under the memory bound whatever the length:
 *
 *   f = x flattened (N elements), s = sort(f)          (plan/sort.c)
 *   d[i] = i == 0 or s[i] != s[i - 1]                 (differs from the one before:
 *                                                      every NaN is distinct, -0 == +0)
 *   values  = s[d]                                     (one COMPRESS count pass of d,
 *   indices = argsort(f)[d]                             shared by the three selections:
 *   starts  = arange(N)[d]                              ops/select.h)
 *   counts  = diff(starts, append=N)
 *   inverse = sort(argsort(f) * N + cumsum(d) - 1) % N, in x's shape
 *
 * indices are first occurrences because the sort is stable. The inverse is a
 * scatter, inverse[p[i]] = g[i] with p = argsort(f) and g = cumsum(d) - 1 (the
 * group of sorted element i), made by sorting the pairs (p[i], g[i]) packed in
 * one int64 key p·N + g: p is a permutation, so element j of the sorted keys
 * is j·N + g of the element that came from j (hence N·N < 2^63).
 *
 * The count pass computes s (a sort of N elements); the arrays made here sort
 * again when computed (nothing is kept between the two computations).
 *
 * Complex x: the sort keys are 64-bit, so p is NumPy's complex order made of
 * three stable argsorts, least significant first (a radix sort by parts):
 * by the imaginary part, then the real part, then the NaN class (0 both
 * parts numbers, 1 R + NaN j, 2 NaN + R j, 3 both NaN); s = f[p] by
 * take_along_axis. Three argsorts and five gathers instead of one sort; a
 * gather by a permutation reads every chunk of its source for each of its
 * blocks, so this costs (N / chunk)² chunk reads: bounded in memory, slow for
 * complex arrays of many chunks. */
#include "core/error.h"
#include "kernels/sort.h"
#include "plan/array.h"
#include "select.h"

#define INVERSE_MAX_N 3037000499LL /* N·N < 2^63 */

/* d: true where sorted s (N elements) differs from the element before, and at 0. */
static int differs(zc_array *s, zc_array *pos, zc_array **d)
{
    int64_t one = 1;
    zc_array *prev = NULL, *ne = NULL, *first = NULL;
    int rc = zc_roll(s, &one, 1, NULL, 0, &prev);
    if (rc == 0) rc = zc_elementwise("not_equal", 2, (zc_array *[]){s, prev}, &ne);
    if (rc == 0) rc = select_int_op("equal", pos, 0, &first);
    if (rc == 0) rc = zc_elementwise("logical_or", 2, (zc_array *[]){ne, first}, d);
    zc_array_release(prev);
    zc_array_release(ne);
    zc_array_release(first);
    return rc;
}

/* 1 where x is NaN, else 0 (int8) */
static int nan_flag(zc_array *x, zc_array **out)
{
    zc_array *b = NULL;
    int rc = zc_elementwise("isnan", 1, &x, &b);
    if (rc == 0) rc = zc_astype(b, ZC_INT8, out);
    zc_array_release(b);
    return rc;
}

/* p = the stable order of complex f by NaN class, real part, imaginary part
 * (NumPy's complex order); s = f[p]. */
static int complex_order(zc_array *f, zc_array **p, zc_array **s)
{
    zc_array *re = NULL, *im = NULL, *nr = NULL, *ni = NULL, *nr2 = NULL, *cls = NULL, *p1 = NULL, *k2 = NULL;
    zc_array *o2 = NULL, *p2 = NULL, *k3 = NULL, *o3 = NULL;
    int rc = zc_elementwise("real", 1, &f, &re);
    if (rc == 0) rc = zc_elementwise("imag", 1, &f, &im);
    if (rc == 0) rc = zc_argsort(im, 0, 0, &p1);
    if (rc == 0) rc = zc_take_along_axis(re, p1, 0, &k2);
    if (rc == 0) rc = zc_argsort(k2, 0, 0, &o2);
    if (rc == 0) rc = zc_take_along_axis(p1, o2, 0, &p2);
    if (rc == 0) rc = nan_flag(re, &nr);
    if (rc == 0) rc = nan_flag(im, &ni);
    if (rc == 0) rc = select_int_op("multiply", nr, 2, &nr2);
    if (rc == 0) rc = zc_elementwise("add", 2, (zc_array *[]){nr2, ni}, &cls);
    if (rc == 0) rc = zc_take_along_axis(cls, p2, 0, &k3);
    if (rc == 0) rc = zc_argsort(k3, 0, 0, &o3);
    if (rc == 0) rc = zc_take_along_axis(p2, o3, 0, p);
    if (rc == 0) rc = zc_take_along_axis(f, *p, 0, s);
    zc_array *tmp[] = {re, im, nr, ni, nr2, cls, p1, k2, o2, p2, k3, o3};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) zc_array_release(tmp[i]);
    return rc;
}

/* The inverse: sort(p·N + cumsum(d) - 1) % N, reshaped to x's shape. */
static int inverse_of(zc_array *x, zc_array *p, zc_array *d, int64_t n, zc_array **out)
{
    zc_array *g = NULL, *g1 = NULL, *pn = NULL, *key = NULL, *sk = NULL, *flat = NULL;
    int rc = zc_cumulative_sum(d, 0, ZC_INT64, 0, &g);
    if (rc == 0) rc = select_int_op("subtract", g, 1, &g1);
    if (rc == 0) rc = select_int_op("multiply", p, n, &pn);
    if (rc == 0) rc = zc_elementwise("add", 2, (zc_array *[]){pn, g1}, &key);
    if (rc == 0) rc = zc_sort(key, 0, 0, &sk);
    if (rc == 0) rc = select_int_op("remainder", sk, n > 0 ? n : 1, &flat);
    if (rc == 0) rc = zc_reshape(flat, x->ndim, x->shape, out);
    zc_array_release(g);
    zc_array_release(g1);
    zc_array_release(pn);
    zc_array_release(key);
    zc_array_release(sk);
    zc_array_release(flat);
    return rc;
}

int zc_unique(const zc_spec *spec, zc_array *x, zc_array **values, zc_array **indices, zc_array **inverse,
              zc_array **counts)
{
    zc__err_clear();
    if (!spec || !x) return zc__err(ZC_EINVAL, "unique: NULL argument");
    bool cplx = x->dtype == ZC_COMPLEX64 || x->dtype == ZC_COMPLEX128;
    if (!sort_dtype_ok(x->dtype) && !cplx)
        return zc__err(ZC_EINVAL, "unique: %s arrays are not supported (bool, integer, real and complex float dtypes)",
                       zc_dtype_name(x->dtype));
    int64_t n = 1;
    for (int d = 0; d < x->ndim; d++) n *= x->shape[d];
    if (inverse && n > INVERSE_MAX_N)
        return zc__err(ZC_EUNSUPPORTED, "unique: inverse indices of more than %lld elements (%lld) are not supported",
                       (long long)INVERSE_MAX_N, (long long)n);
    zc_array *f = NULL, *s = NULL, *p = NULL, *pos = NULL, *d = NULL, *end = NULL;
    zc_array *xs[3], *sel[3] = {NULL, NULL, NULL}, *inv = NULL, *cnt = NULL;
    int rc = zc_reshape(x, 1, &n, &f), nsel = 0, iv = 0, ip = 0, is = 0;
    if (rc == 0 && cplx) rc = complex_order(f, &p, &s);
    if (rc == 0 && !cplx) rc = zc_sort(f, 0, 0, &s);
    if (rc == 0 && !cplx && (indices || inverse)) rc = zc_argsort(f, 0, 0, &p);
    if (rc == 0) rc = zc_arange(0, (double)n, 1, ZC_INT64, s->chunks[0], &pos);
    if (rc == 0) rc = differs(s, pos, &d);
    if (rc == 0) {
        if (values) xs[iv = nsel++] = s;
        if (indices) xs[ip = nsel++] = p;
        if (counts) xs[is = nsel++] = pos;
        if (nsel) rc = select_compress(spec, d, nsel, xs, sel);
    }
    if (rc == 0 && counts) rc = zc_scalar((double)n, 1, &end);
    if (rc == 0 && counts) rc = zc_diff(sel[is], 0, 1, NULL, end, &cnt);
    if (rc == 0 && inverse) rc = inverse_of(x, p, d, n, &inv);
    if (rc == 0) { /* hand the results over */
        zc_array **dst[4] = {values, indices, counts, inverse}, **src[4] = {&sel[iv], &sel[ip], &cnt, &inv};
        for (int k = 0; k < 4; k++)
            if (dst[k]) {
                *dst[k] = *src[k];
                *src[k] = NULL;
            }
    }
    for (int k = 0; k < 3; k++) zc_array_release(sel[k]);
    zc_array_release(f);
    zc_array_release(s);
    zc_array_release(p);
    zc_array_release(pos);
    zc_array_release(d);
    zc_array_release(end);
    zc_array_release(inv);
    zc_array_release(cnt);
    return rc < 0 ? zc__err_wrap(rc, "unique") : 0;
}
