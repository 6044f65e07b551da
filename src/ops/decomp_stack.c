/* ops/decomp_stack.c — decompositions of stacks of matrices (..., M, N), as the
 * array API has them: one decomposition per matrix, its results stacked along
 * the stack's leading dims (decomp_stack; decomp_solve_stack for two
 * operands whose stacks broadcast); and the complete forms
 * (zc_qr_complete, zc_svd_full) built on the reduced ones. */
#include <stdbool.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/decomp_stack.h"

/* Each matrix adds its decomposition's nodes to the plan: a stack this long is
 * a loop the caller should write over its own arrays. */
#define STACK_MAX 65536

int decomp_stack(const char *fn, zc_array *a, int nout, zc_array **const *outs, decomp_one_fn one, void *ctx)
{
    int nb = a->ndim - 2;
    int64_t count = 1, batch[ZC_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        batch[d] = a->shape[d];
        if (batch[d] && count > STACK_MAX / batch[d])
            return zc__err(ZC_EUNSUPPORTED, "%s: a stack of more than %d matrices: loop over parts of it", fn,
                           STACK_MAX);
        count *= batch[d];
    }
    zc_array **parts = zc__calloc((size_t)(count ? count : 1) * (size_t)nout, sizeof *parts);
    if (!parts) return ZC_ENOMEM;
    zc_array *probe = NULL, *r[DECOMP_MAXOUT];
    int rc = 0;
    if (count == 0) /* the results' shapes, from a matrix of the stack's shape (never computed) */
        rc = zc_full(2, a->shape + nb, NULL, a->dtype, 0, &probe);
    for (int64_t i = 0; rc == 0 && i < (count ? count : 1); i++) {
        zc_index ix[ZC_MAX_DIMS];
        for (int64_t d = nb - 1, rest = i; d >= 0; d--) { /* row-major: the last batch dim fastest */
            ix[d] = (zc_index){.kind = ZC_IDX_INT, .index = count ? rest % batch[d] : 0};
            rest = count ? rest / batch[d] : 0;
        }
        zc_array *m = probe;
        if (!probe && (rc = zc_getitem(a, ix, nb, &m)) < 0) break;
        zc_array **want[DECOMP_MAXOUT];
        for (int o = 0; o < nout; o++) {
            r[o] = NULL;
            want[o] = outs[o] || count == 0 ? &r[o] : NULL;
        }
        rc = one(m, want, ctx);
        if (!probe) zc_array_release(m);
        for (int o = 0; o < nout; o++) parts[(size_t)o * (size_t)(count ? count : 1) + (size_t)i] = r[o];
    }
    for (int o = 0; rc == 0 && o < nout; o++) {
        if (!outs[o]) continue;
        zc_array **p = parts + (size_t)o * (size_t)(count ? count : 1), *st = NULL;
        int64_t shape[ZC_MAX_DIMS];
        for (int d = 0; d < nb; d++) shape[d] = batch[d];
        for (int d = 0; d < p[0]->ndim; d++) shape[nb + d] = p[0]->shape[d];
        if (count == 0) {
            rc = zc_full(nb + p[0]->ndim, shape, NULL, p[0]->dtype, 0, outs[o]);
            continue;
        }
        rc = zc_stack((int)count, p, 0, &st);
        if (rc == 0) rc = zc_reshape(st, nb + p[0]->ndim, shape, outs[o]);
        zc_array_release(st);
    }
    for (size_t k = 0; k < (size_t)(count ? count : 1) * (size_t)nout; k++) zc_array_release(parts[k]);
    zc__free(parts);
    zc_array_release(probe);
    if (rc < 0)
        for (int o = 0; o < nout; o++)
            if (outs[o] && *outs[o]) zc_array_release(*outs[o]), *outs[o] = NULL;
    return rc;
}

/* ---- solve: two stacks broadcast ---- */

int decomp_solve_stack(zc_array *a, zc_array *b, zc_array **x)
{
    if (a->ndim < 2) return zc__err(ZC_EINVAL, "solve: a must be a matrix or a stack of matrices, not %d-D", a->ndim);
    int bcore = b->ndim == 1 ? 1 : 2, na = a->ndim - 2, nbb = b->ndim - bcore, nb = na > nbb ? na : nbb;
    int64_t batch[ZC_MAX_DIMS], count = 1;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - na), db = d - (nb - nbb);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return zc__err(ZC_EINVAL, "solve: the stacks of a (%lld) and b (%lld) do not broadcast in dimension %d",
                           (long long)sa, (long long)sb, d);
        batch[d] = sa == 1 ? sb : sa;
        if (batch[d] && count > STACK_MAX / batch[d])
            return zc__err(ZC_EUNSUPPORTED, "solve: a stack of more than %d systems: loop over parts of it", STACK_MAX);
        count *= batch[d];
    }
    int64_t shape[ZC_MAX_DIMS];
    for (int d = 0; d < nb; d++) shape[d] = batch[d];
    for (int d = 0; d < bcore; d++) shape[nb + d] = b->shape[b->ndim - bcore + d];
    if (count == 0) {
        bool cx = a->dtype == ZC_COMPLEX64 || a->dtype == ZC_COMPLEX128 || b->dtype == ZC_COMPLEX64 ||
                  b->dtype == ZC_COMPLEX128;
        return zc_full(nb + bcore, shape, NULL, cx ? ZC_COMPLEX128 : ZC_FLOAT64, 0, x);
    }
    zc_array **parts = zc__calloc((size_t)count, sizeof *parts), *st = NULL;
    if (!parts) return ZC_ENOMEM;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < count; i++) {
        zc_index ia[ZC_MAX_DIMS], ib[ZC_MAX_DIMS];
        for (int64_t d = nb - 1, rest = i; d >= 0; d--) { /* a dim of 1 broadcasts: index 0 */
            int64_t v = rest % batch[d];
            rest /= batch[d];
            int da = (int)d - (nb - na), db = (int)d - (nb - nbb);
            if (da >= 0) ia[da] = (zc_index){.kind = ZC_IDX_INT, .index = a->shape[da] == 1 ? 0 : v};
            if (db >= 0) ib[db] = (zc_index){.kind = ZC_IDX_INT, .index = b->shape[db] == 1 ? 0 : v};
        }
        zc_array *am = NULL, *bm = NULL;
        rc = zc_getitem(a, ia, na, &am);
        if (rc == 0) rc = zc_getitem(b, ib, nbb, &bm);
        if (rc == 0) rc = zc_solve(am, bm, &parts[i]);
        zc_array_release(am);
        zc_array_release(bm);
    }
    if (rc == 0) rc = zc_stack((int)count, parts, 0, &st);
    if (rc == 0) rc = zc_reshape(st, nb + bcore, shape, x);
    zc_array_release(st);
    for (int64_t i = 0; i < count; i++) zc_array_release(parts[i]);
    zc__free(parts);
    return rc;
}

/* ---- complete forms ---- */

/* a's dtype when it is a float or complex one, else float64 (the dtype of the identity appended). */
static zc_dtype float_dtype(const zc_array *a)
{
    return a->dtype == ZC_FLOAT32 || a->dtype == ZC_FLOAT64 || a->dtype == ZC_COMPLEX64 || a->dtype == ZC_COMPLEX128
               ? a->dtype
               : ZC_FLOAT64;
}

/* q (m×m) and r (m×n) of one matrix: for m > n, the QR of [A | I] (m × (n+m)),
 * whose first n columns of Q span A's and whose R's first n columns are A's R. */
static int qr_complete_one(zc_array *a, zc_array **const *o, void *ctx)
{
    (void)ctx;
    int64_t m = a->shape[0], n = a->shape[1];
    if (m <= n) return zc_qr(a, o[0], o[1]);
    zc_array *eye = NULL, *ai = NULL, *rr = NULL;
    int rc = zc_eye(m, m, 0, float_dtype(a), NULL, &eye);
    zc_array *parts[2] = {a, eye};
    if (rc == 0) rc = zc_concat(2, parts, 1, &ai);
    if (rc == 0) rc = zc_qr(ai, o[0], o[1] ? &rr : NULL);
    if (rc == 0 && o[1]) {
        zc_index ix[2] = {{.kind = ZC_IDX_SLICE, .step = 1}, {.kind = ZC_IDX_SLICE, .stop = n, .has_stop = 1, .step = 1}};
        rc = zc_getitem(rr, ix, 2, o[1]);
    }
    zc_array_release(eye);
    zc_array_release(ai);
    zc_array_release(rr);
    return rc;
}

int zc_qr_complete(zc_array *a, zc_array **q, zc_array **r)
{
    zc__err_clear();
    if (!a || (!q && !r)) return zc__err(ZC_EINVAL, "zc_qr_complete: NULL argument or no output asked for");
    if (a->ndim < 2) return zc__err(ZC_EINVAL, "qr: needs a matrix or a stack of matrices, got %d dimensions", a->ndim);
    zc_array **const outs[2] = {q, r};
    if (a->ndim > 2) return decomp_stack("qr", a, 2, outs, qr_complete_one, NULL);
    return qr_complete_one(a, outs, NULL);
}

/* u (m×k, orthonormal columns, k < m) completed to m×m: u, then the last m-k
 * columns of the complete Q of u (orthogonal to u's columns). */
static int complete_cols(zc_array *u, zc_array **out)
{
    int64_t m = u->shape[0], k = u->shape[1];
    if (k == m) {
        zc_array_retain(u);
        *out = u;
        return 0;
    }
    zc_array *q = NULL, *rest = NULL;
    int rc = qr_complete_one(u, (zc_array **const[]){&q, NULL}, NULL);
    zc_index ix[2] = {{.kind = ZC_IDX_SLICE, .step = 1}, {.kind = ZC_IDX_SLICE, .start = k, .has_start = 1, .step = 1}};
    if (rc == 0) rc = zc_getitem(q, ix, 2, &rest);
    zc_array *parts[2] = {u, rest};
    if (rc == 0) rc = zc_concat(2, parts, 1, out);
    zc_array_release(q);
    zc_array_release(rest);
    return rc;
}

static int svd_full_one(zc_array *a, zc_array **const *o, void *ctx)
{
    (void)ctx;
    zc_array *u = NULL, *vt = NULL, *v = NULL, *vc = NULL;
    int rc = zc_svd(a, o[0] ? &u : NULL, o[1], o[2] ? &vt : NULL);
    if (rc == 0 && o[0]) rc = complete_cols(u, o[0]);
    /* Vᴴ completed by rows: the conjugate transpose of V completed by columns */
    if (rc == 0 && o[2] && (rc = zc_matrix_transpose(vt, &v)) == 0 && (rc = complete_cols(v, &vc)) == 0)
        rc = zc_matrix_transpose(vc, o[2]);
    zc_array_release(u);
    zc_array_release(vt);
    zc_array_release(v);
    zc_array_release(vc);
    if (rc < 0)
        for (int i = 0; i < 3; i++)
            if (o[i] && *o[i]) zc_array_release(*o[i]), *o[i] = NULL;
    return rc;
}

int zc_svd_full(zc_array *a, zc_array **u, zc_array **s, zc_array **vt)
{
    zc__err_clear();
    if (!a || (!u && !s && !vt)) return zc__err(ZC_EINVAL, "zc_svd_full: NULL argument or no output asked for");
    if (a->ndim < 2) return zc__err(ZC_EINVAL, "svd: needs a matrix or a stack of matrices, got %d dimensions", a->ndim);
    zc_array **const outs[3] = {u, s, vt};
    if (a->ndim > 2) return decomp_stack("svd", a, 3, outs, svd_full_one, NULL);
    return svd_full_one(a, outs, NULL);
}
