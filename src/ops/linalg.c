/* ops/linalg.c — the array API's linear algebra: matmul, tensordot, vecdot,
 * outer (matrix_transpose is a view, in ops/manipulation.c).
 *
 * matmul records one MATMUL node (plan/matmul.h) over its operands converted to
 * the result dtype (float16 is computed in float32), with NumPy's rules: a 1-D
 * first operand is a row (1, K), a 1-D second one a column (K, 1), and those
 * dims are dropped from the result; the leading (batch) dims broadcast. When
 * the output has fewer blocks than the machine has threads, the contracted
 * dimension is split into groups computed as separate partial products and
 * summed by the tree reduction (as Cubed does), so the work still spreads.
 * tensordot is a matmul of permuted, reshaped operands; vecdot and outer are
 * elementwise expressions (with a sum for vecdot), which fuse. */
#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/pool.h"
#include "kernels/lapack.h"
#include "kernels/matmul.h"
#include "plan/matmul.h"

#define OUT_CHUNK_TARGET ((size_t)16 << 20) /* an output block may grow to this (or the operands' chunk) */
#define STEP_TARGET ((size_t)8 << 20)       /* bytes of one operand step (or the operands' chunk) */
#define STEP_CHUNKS 16                      /* and at most this many chunks of x1 along K */

static void shape_str(const zc_array *x, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < x->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%lld%s", (long long)x->shape[d],
                              x->ndim == 1 ? "," : d + 1 < x->ndim ? ", " : "");
    if (k < n) snprintf(buf + k, n - k, ")");
}

/* x converted to dtype (a new reference either way). */
static int as_dtype(zc_array *x, zc_dtype dt, zc_array **out)
{
    if (x->dtype == dt) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    return zc_astype(x, dt, out);
}

/* Replace *x by f(*x) (dropping the old reference); on failure *x is released and NULL. */
static int replace(zc_array **x, int rc, zc_array *const *next)
{
    zc_array_release(*x);
    *x = rc < 0 ? NULL : *next; /* read after the call that set it */
    return rc;
}

/* The MATMUL node over A (..., M, K) and B (..., K, N) of dtype cd (shapes checked). */
static int matmul_node(zc_array *A, zc_array *B, zc_dtype cd, zc_array **out)
{
    la_init(); /* now, while the plan is built: OpenBLAS's idle threads stopped before any task runs */
    int nba = A->ndim - 2, nbb = B->ndim - 2, nb = nba > nbb ? nba : nbb, nd = nb + 2;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    size_t isz = A->itemsize;
    for (int d = 0; d < nb; d++) {
        int ja = d - (nb - nba), jb = d - (nb - nbb);
        int64_t sa = ja >= 0 ? A->shape[ja] : 1, sb = jb >= 0 ? B->shape[jb] : 1;
        shape[d] = sa == 1 ? sb : sa;
        chunks[d] = ja >= 0 && sa == shape[d] ? A->chunks[ja] : jb >= 0 && sb == shape[d] ? B->chunks[jb] : 1;
    }
    shape[nb] = A->shape[nba];
    shape[nb + 1] = B->shape[nbb + 1];
    chunks[nb] = A->chunks[nba];
    chunks[nb + 1] = B->chunks[nbb + 1];
    int64_t K = A->shape[nba + 1];
    /* output blocks up to max(target, operand chunk) bytes: halve rows or cols */
    size_t cap = OUT_CHUNK_TARGET, ca = node_chunk_bytes(A), cb = node_chunk_bytes(B);
    if (ca > cap) cap = ca;
    if (cb > cap) cap = cb;
    for (;;) {
        size_t bytes = isz;
        for (int d = 0; d < nd; d++) bytes *= (size_t)(chunks[d] > 0 ? chunks[d] : 1);
        if (bytes <= cap) break;
        int d = chunks[nb] >= chunks[nb + 1] ? nb : nb + 1;
        if (chunks[d] <= 1) d = d == nb ? nb + 1 : nb;
        if (chunks[d] <= 1) break;
        chunks[d] = (chunks[d] + 1) / 2;
    }
    /* contracted step: a multiple of A's chunk along K (of both operands' if cheap) */
    size_t apk = isz * (size_t)chunks[nb], bpk = isz * (size_t)chunks[nb + 1];
    for (int d = 0; d < nb; d++) {
        int ja = d - (nb - nba), jb = d - (nb - nbb);
        if (ja >= 0 && !(A->shape[ja] == 1 && shape[d] != 1)) apk *= (size_t)chunks[d];
        if (jb >= 0 && !(B->shape[jb] == 1 && shape[d] != 1)) bpk *= (size_t)chunks[d];
    }
    size_t budget = STEP_TARGET;
    if (ca > budget) budget = ca;
    if (cb > budget) budget = cb;
    size_t per = apk > bpk ? apk : bpk;
    int64_t kmax = per ? (int64_t)(budget / per) : K, base = A->chunks[nba + 1], cbk = B->chunks[nbb];
    if (kmax < 1) kmax = 1;
    if (base < 1) base = 1;
    if (cbk >= 1 && base / ck_gcd(base, cbk) <= kmax / cbk) base = base / ck_gcd(base, cbk) * cbk; /* lcm fits */
    int64_t kstep = base <= kmax ? kmax / base * base : (base <= 4 * kmax ? base : kmax);
    if (kstep > STEP_CHUNKS * base) kstep = STEP_CHUNKS * base; /* bounded reads per step */
    if (kstep > K) kstep = K > 0 ? K : 1;
    /* few output blocks and several steps: split K into groups */
    int64_t ob = 1, ks = K > 0 ? ck_ceildiv(K, kstep) : 0, G = 1, kgroup = K;
    for (int d = 0; d < nd; d++) ob *= shape[d] > 0 ? ck_ceildiv(shape[d], chunks[d]) : 0;
    int64_t want = 2 * (int64_t)pool_ncpu();
    if (ob > 0 && ks > 1 && ob < want) {
        G = ck_ceildiv(want, ob);
        if (G > ks) G = ks;
        kgroup = ck_ceildiv(ks, G) * kstep;
        G = ck_ceildiv(K, kgroup);
    }
    zc_array *in[2] = {A, B};
    if (G > 1) {
        if (nd + 1 > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "matmul: more than %d dimensions", ZC_MAX_DIMS);
        memmove(shape + 1, shape, sizeof *shape * (size_t)nd);
        memmove(chunks + 1, chunks, sizeof *chunks * (size_t)nd);
        shape[0] = G;
        chunks[0] = 1;
        nd++;
    }
    ZC_TRY(node_new(NODE_MATMUL, nd, shape, chunks, cd, 2, in, out));
    (*out)->p.matmul.kstep = kstep;
    (*out)->p.matmul.kstep0 = kstep;
    (*out)->p.matmul.kgroup = kgroup;
    (*out)->p.matmul.split = G > 1;
    if (G == 1) return 0;
    /* sum the partial products */
    int axis = 0;
    zc_array *m = *out;
    int rc = zc_reduce(cd == ZC_BOOL ? "any" : "sum", m, &axis, 1, 0, 0, out);
    zc_array_release(m);
    if (rc < 0) return rc;
    if ((*out)->dtype != cd) {
        zc_array *s = *out;
        rc = zc_astype(s, cd, out);
        zc_array_release(s);
    }
    return rc;
}

int zc_matmul(zc_array *x1, zc_array *x2, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out) return zc__err(ZC_EINVAL, "matmul: NULL argument");
    char s1[512], s2[512];
    shape_str(x1, s1, sizeof s1);
    shape_str(x2, s2, sizeof s2);
    if (x1->ndim == 0 || x2->ndim == 0)
        return zc__err(ZC_EINVAL, "matmul: operands must have at least one dimension (shapes %s and %s)", s1, s2);
    zc_dtype dts[2] = {x1->dtype, x2->dtype}, rt, cd;
    ZC_TRY(zc_result_type(2, dts, &rt));
    cd = rt == ZC_FLOAT16 ? ZC_FLOAT32 : rt;
    if (!kern_matmul_supported(cd)) return zc__err(ZC_EINVAL, "matmul: dtype %s is not numeric", zc_dtype_name(rt));
    int64_t k1 = x1->shape[x1->ndim - 1], k2 = x2->shape[x2->ndim == 1 ? 0 : x2->ndim - 2];
    if (k1 != k2)
        return zc__err(ZC_EINVAL, "matmul: shapes %s and %s do not align: %lld (last dim of x1) != %lld (%s dim of x2)", s1,
                       s2, (long long)k1, (long long)k2, x2->ndim == 1 ? "only" : "second-to-last");
    int nba = x1->ndim > 2 ? x1->ndim - 2 : 0, nbb = x2->ndim > 2 ? x2->ndim - 2 : 0, nb = nba > nbb ? nba : nbb;
    for (int d = 0; d < nb; d++) {
        int ja = d - (nb - nba), jb = d - (nb - nbb);
        int64_t sa = ja >= 0 ? x1->shape[ja] : 1, sb = jb >= 0 ? x2->shape[jb] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return zc__err(ZC_EINVAL, "matmul: batch dimensions of %s and %s do not broadcast (%lld vs %lld)", s1, s2,
                           (long long)sa, (long long)sb);
    }
    if (nb + 3 > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "matmul: more than %d dimensions", ZC_MAX_DIMS - 1);
    zc_array *A = NULL, *B = NULL, *r = NULL;
    int rc = as_dtype(x1, cd, &A);
    if (rc == 0) rc = as_dtype(x2, cd, &B);
    if (rc == 0 && x1->ndim == 1) rc = replace(&A, zc_expand_dims(A, 0, &r), &r);
    if (rc == 0 && x2->ndim == 1) rc = replace(&B, zc_expand_dims(B, 1, &r), &r);
    if (rc == 0) rc = matmul_node(A, B, cd, &r);
    zc_array_release(A);
    zc_array_release(B);
    if (rc < 0) return rc;
    zc_array *t;
    if (rc == 0 && cd != rt) rc = replace(&r, zc_astype(r, rt, &t), &t);
    int drop[2], ndrop = 0;
    if (x1->ndim == 1) drop[ndrop++] = -2;
    if (x2->ndim == 1) drop[ndrop++] = -1;
    if (rc == 0 && ndrop) rc = replace(&r, zc_squeeze(r, drop, ndrop, &t), &t);
    if (rc < 0) return rc;
    *out = r;
    return 0;
}

int zc_tensordot(zc_array *x1, zc_array *x2, int naxes, const int *axes1, const int *axes2, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out || (axes1 && !axes2) || (!axes1 && axes2)) return zc__err(ZC_EINVAL, "tensordot: NULL argument");
    char s1[512], s2[512];
    shape_str(x1, s1, sizeof s1);
    shape_str(x2, s2, sizeof s2);
    if (naxes < 0 || naxes > x1->ndim || naxes > x2->ndim)
        return zc__err(ZC_EINVAL, "tensordot: %d contracted axes for shapes %s and %s", naxes, s1, s2);
    int a1[ZC_MAX_DIMS], a2[ZC_MAX_DIMS];
    uint64_t seen1 = 0, seen2 = 0;
    for (int i = 0; i < naxes; i++) {
        int u = axes1 ? axes1[i] : x1->ndim - naxes + i, v = axes2 ? axes2[i] : i;
        int nu = u < 0 ? u + x1->ndim : u, nv = v < 0 ? v + x2->ndim : v;
        if (nu < 0 || nu >= x1->ndim || nv < 0 || nv >= x2->ndim)
            return zc__err(ZC_EINVAL, "tensordot: axis pair (%d, %d) is out of range for shapes %s and %s", u, v, s1, s2);
        if (((seen1 >> nu) & 1) || ((seen2 >> nv) & 1))
            return zc__err(ZC_EINVAL, "tensordot: axis pair (%d, %d) repeats an axis", u, v);
        if (x1->shape[nu] != x2->shape[nv])
            return zc__err(ZC_EINVAL, "tensordot: shapes %s and %s differ along contracted axes %d and %d (%lld vs %lld)",
                           s1, s2, u, v, (long long)x1->shape[nu], (long long)x2->shape[nv]);
        seen1 |= 1ull << nu;
        seen2 |= 1ull << nv;
        a1[i] = nu;
        a2[i] = nv;
    }
    /* x1 -> (free1..., contracted...) -> (M, K); x2 -> (contracted..., free2...) -> (K, N) */
    int p1[ZC_MAX_DIMS], p2[ZC_MAX_DIMS], n1 = 0, n2 = naxes, nd = 0;
    int64_t M = 1, N = 1, K = 1, oshape[ZC_MAX_DIMS];
    for (int d = 0; d < x1->ndim; d++)
        if (!((seen1 >> d) & 1)) {
            p1[n1++] = d;
            M *= x1->shape[d];
            oshape[nd++] = x1->shape[d];
        }
    for (int i = 0; i < naxes; i++) {
        p1[n1 + i] = a1[i];
        p2[i] = a2[i];
        K *= x1->shape[a1[i]];
    }
    for (int d = 0; d < x2->ndim; d++)
        if (!((seen2 >> d) & 1)) {
            if (nd == ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "tensordot: result has more than %d dimensions", ZC_MAX_DIMS);
            p2[n2++] = d;
            N *= x2->shape[d];
            oshape[nd++] = x2->shape[d];
        }
    zc_array *A = NULL, *B = NULL, *t = NULL;
    zc_array_retain(x1);
    zc_array_retain(x2);
    A = x1;
    B = x2;
    int rc = replace(&A, zc_permute_dims(A, p1, x1->ndim, &t), &t);
    if (rc == 0) rc = replace(&B, zc_permute_dims(B, p2, x2->ndim, &t), &t);
    int64_t s2d[2] = {M, K};
    if (rc == 0) rc = replace(&A, zc_reshape(A, 2, s2d, &t), &t);
    s2d[0] = K;
    s2d[1] = N;
    if (rc == 0) rc = replace(&B, zc_reshape(B, 2, s2d, &t), &t);
    zc_array *r = NULL;
    if (rc == 0) rc = zc_matmul(A, B, &r);
    zc_array_release(A);
    zc_array_release(B);
    if (rc == 0) rc = replace(&r, zc_reshape(r, nd, oshape, &t), &t);
    if (rc < 0) return rc;
    *out = r;
    return 0;
}

/* Elementwise product (logical and for bool) of two arrays; x1 conjugated if asked. */
static int product(zc_array *x1, zc_array *x2, int conj, zc_array **out)
{
    zc_dtype dts[2] = {x1->dtype, x2->dtype}, rt;
    ZC_TRY(zc_result_type(2, dts, &rt));
    if (!kern_matmul_supported(rt) && rt != ZC_FLOAT16)
        return zc__err(ZC_EINVAL, "dtype %s is not numeric", zc_dtype_name(rt));
    zc_array *c = x1;
    zc_array_retain(c);
    int rc = 0;
    zc_array *t;
    if (conj && (x1->dtype == ZC_COMPLEX64 || x1->dtype == ZC_COMPLEX128))
        rc = replace(&c, zc_elementwise("conj", 1, &c, &t), &t);
    if (rc < 0) return rc;
    zc_array *args[2] = {c, x2};
    rc = zc_elementwise(rt == ZC_BOOL ? "logical_and" : "multiply", 2, args, out);
    zc_array_release(c);
    return rc;
}

int zc_vecdot(zc_array *x1, zc_array *x2, int axis, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out) return zc__err(ZC_EINVAL, "vecdot: NULL argument");
    char s1[512], s2[512];
    shape_str(x1, s1, sizeof s1);
    shape_str(x2, s2, sizeof s2);
    int nd = x1->ndim > x2->ndim ? x1->ndim : x2->ndim;
    int neg = axis < 0 ? axis : axis - nd; /* counted from the end of the broadcast shape */
    if (axis == ZC_AXIS_NONE || neg < -nd || neg >= 0 || -neg > x1->ndim || -neg > x2->ndim)
        return zc__err(ZC_EINVAL, "vecdot: axis %d is out of range for shapes %s and %s", axis, s1, s2);
    if (x1->shape[x1->ndim + neg] != x2->shape[x2->ndim + neg])
        return zc__err(ZC_EINVAL, "vecdot: shapes %s and %s differ along axis %d (%lld vs %lld)", s1, s2, axis,
                       (long long)x1->shape[x1->ndim + neg], (long long)x2->shape[x2->ndim + neg]);
    zc_dtype dts[2] = {x1->dtype, x2->dtype}, rt;
    ZC_TRY(zc_result_type(2, dts, &rt));
    zc_array *p, *t;
    int rc = product(x1, x2, 1, &p);
    if (rc < 0) return zc__err_wrap(rc, "vecdot of %s and %s", s1, s2);
    int ax = nd + neg;
    rc = replace(&p, zc_reduce(rt == ZC_BOOL ? "any" : "sum", p, &ax, 1, 0, 0, &t), &t);
    if (rc == 0 && p->dtype != rt) rc = replace(&p, zc_astype(p, rt, &t), &t);
    if (rc < 0) return rc;
    *out = p;
    return 0;
}

int zc_outer(zc_array *x1, zc_array *x2, zc_array **out)
{
    zc__err_clear();
    if (!x1 || !x2 || !out) return zc__err(ZC_EINVAL, "outer: NULL argument");
    zc_array *a = x1, *b = x2, *t;
    zc_array_retain(a);
    zc_array_retain(b);
    int64_t flat = -1;
    int rc = 0;
    if (a->ndim != 1) rc = replace(&a, zc_reshape(a, 1, &flat, &t), &t);
    if (rc == 0 && b->ndim != 1) rc = replace(&b, zc_reshape(b, 1, &flat, &t), &t);
    if (rc == 0) rc = replace(&a, zc_expand_dims(a, 1, &t), &t);
    if (rc == 0) rc = replace(&b, zc_expand_dims(b, 0, &t), &t);
    if (rc == 0) rc = product(a, b, 0, out);
    zc_array_release(a);
    zc_array_release(b);
    return rc < 0 ? zc__err_wrap(rc, "outer") : 0;
}
