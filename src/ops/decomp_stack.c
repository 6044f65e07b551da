/* ops/decomp_stack.c — decompositions of stacks of matrices (..., M, N), as the
 * array API has them: one decomposition per matrix (per system for solve,
 * whose two stacks broadcast), its results stacked along the stack's leading
 * dims (decomp_stack); and the complete forms (zc_qr_complete, zc_svd_full)
 * built on the reduced ones. */
#include "core/alloc.h"
#include "core/error.h"
#include "ops/decomp_stack.h"

/* Each matrix adds its decomposition's nodes to the plan: a stack this long is
 * a loop the caller should write over its own arrays. */
#define STACK_MAX 65536

int decomp_stack(const char *fn, int nin, zc_array *const *in, const int *core, int nout, zc_array **const *outs,
                 decomp_one_fn one, void *ctx)
{
    /* the stack's dims: every operand's leading dims, broadcast (right-aligned) */
    int lead[DECOMP_MAXIN], nb = 0;
    for (int k = 0; k < nin; k++) {
        if ((lead[k] = in[k]->ndim - core[k]) < 0)
            return zc__err(ZC_EINVAL, "%s: operand %d has %d dimensions, fewer than its %d", fn, k, in[k]->ndim,
                           core[k]);
        if (lead[k] > nb) nb = lead[k];
    }
    int64_t batch[ZC_MAX_DIMS], count = 1;
    for (int d = 0; d < nb; d++) {
        batch[d] = 1;
        for (int k = 0; k < nin; k++) {
            int dk = d - (nb - lead[k]);
            int64_t s = dk >= 0 ? in[k]->shape[dk] : 1;
            if (s != batch[d] && s != 1 && batch[d] != 1)
                return zc__err(ZC_EINVAL, "%s: the stacks of the operands do not broadcast in dimension %d (%lld and "
                               "%lld)", fn, d, (long long)batch[d], (long long)s);
            if (s != 1) batch[d] = s;
        }
        if (batch[d] && count > STACK_MAX / batch[d])
            return zc__err(ZC_EUNSUPPORTED, "%s: a stack of more than %d matrices: loop over parts of it", fn,
                           STACK_MAX);
        count *= batch[d];
    }
    /* an empty stack: one() of operands of the core shapes (never computed) gives the results' shapes and dtypes */
    int64_t nmat = count ? count : 1;
    zc_array *probe[DECOMP_MAXIN] = {NULL}, **parts = zc__calloc((size_t)(nmat * nout), sizeof *parts);
    int rc = parts ? 0 : ZC_ENOMEM;
    for (int k = 0; rc == 0 && count == 0 && k < nin; k++)
        rc = zc_full(core[k], in[k]->shape + lead[k], NULL, in[k]->dtype, 0, &probe[k]);
    for (int64_t i = 0; rc == 0 && i < nmat; i++) {
        zc_array *m[DECOMP_MAXIN] = {NULL};
        for (int k = 0; rc == 0 && k < nin; k++) { /* slice i of operand k: a dim of 1 broadcasts (index 0) */
            if (!count) {
                zc_array_retain(m[k] = probe[k]);
                continue;
            }
            zc_index ix[ZC_MAX_DIMS];
            int64_t rest = i;
            for (int d = nb - 1; d >= 0; rest /= batch[d], d--) { /* row-major: the last dim fastest */
                int dk = d - (nb - lead[k]);
                if (dk >= 0)
                    ix[dk] = (zc_index){.kind = ZC_IDX_INT, .index = in[k]->shape[dk] == 1 ? 0 : rest % batch[d]};
            }
            rc = zc_getitem(in[k], ix, lead[k], &m[k]);
        }
        zc_array *r[DECOMP_MAXOUT] = {NULL}, **want[DECOMP_MAXOUT];
        for (int o = 0; o < nout; o++) want[o] = outs[o] || !count ? &r[o] : NULL;
        if (rc == 0) rc = one(m, want, ctx);
        for (int k = 0; k < nin; k++) zc_array_release(m[k]);
        for (int o = 0; o < nout; o++) parts[o * nmat + i] = r[o];
    }
    for (int o = 0; rc == 0 && o < nout; o++) {
        if (!outs[o]) continue;
        zc_array **p = parts + o * nmat, *st = NULL;
        int64_t shape[ZC_MAX_DIMS];
        for (int d = 0; d < nb; d++) shape[d] = batch[d];
        for (int d = 0; d < p[0]->ndim; d++) shape[nb + d] = p[0]->shape[d];
        if (!count) {
            rc = zc_full(nb + p[0]->ndim, shape, NULL, p[0]->dtype, 0, outs[o]);
            continue;
        }
        rc = zc_stack((int)count, p, 0, &st);
        if (rc == 0) rc = zc_reshape(st, nb + p[0]->ndim, shape, outs[o]);
        zc_array_release(st);
    }
    for (int64_t k = 0; parts && k < nmat * nout; k++) zc_array_release(parts[k]);
    zc__free(parts);
    for (int k = 0; k < nin; k++) zc_array_release(probe[k]);
    if (rc < 0)
        for (int o = 0; o < nout; o++)
            if (outs[o] && *outs[o]) zc_array_release(*outs[o]), *outs[o] = NULL;
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
static int qr_complete_one(zc_array *const *in, zc_array **const *o, void *ctx)
{
    (void)ctx;
    zc_array *a = in[0];
    int64_t m = a->shape[0], n = a->shape[1];
    if (m <= n) return zc_qr(a, o[0], o[1]);
    zc_array *eye = NULL, *ai = NULL, *rr = NULL;
    int rc = zc_eye(m, m, 0, float_dtype(a), NULL, &eye);
    zc_array *parts[2] = {a, eye};
    if (rc == 0) rc = zc_concat(2, parts, 1, &ai);
    if (rc == 0) rc = zc_qr(ai, o[0], o[1] ? &rr : NULL);
    if (rc == 0 && o[1]) {
        zc_index ix[2] = {{.kind = ZC_IDX_SLICE, .step = 1},
                          {.kind = ZC_IDX_SLICE, .stop = n, .has_stop = 1, .step = 1}};
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
    if (a->ndim > 2) return decomp_stack("qr", 1, &a, (int[]){2}, 2, outs, qr_complete_one, NULL);
    return qr_complete_one(&a, outs, NULL);
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
    int rc = qr_complete_one(&u, (zc_array **const[]){&q, NULL}, NULL);
    zc_index ix[2] = {{.kind = ZC_IDX_SLICE, .step = 1}, {.kind = ZC_IDX_SLICE, .start = k, .has_start = 1, .step = 1}};
    if (rc == 0) rc = zc_getitem(q, ix, 2, &rest);
    zc_array *parts[2] = {u, rest};
    if (rc == 0) rc = zc_concat(2, parts, 1, out);
    zc_array_release(q);
    zc_array_release(rest);
    return rc;
}

static int svd_full_one(zc_array *const *in, zc_array **const *o, void *ctx)
{
    (void)ctx;
    zc_array *a = in[0], *u = NULL, *vt = NULL, *v = NULL, *vc = NULL;
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
    if (a->ndim < 2)
        return zc__err(ZC_EINVAL, "svd: needs a matrix or a stack of matrices, got %d dimensions", a->ndim);
    zc_array **const outs[3] = {u, s, vt};
    if (a->ndim > 2) return decomp_stack("svd", 1, &a, (int[]){2}, 3, outs, svd_full_one, NULL);
    return svd_full_one(&a, outs, NULL);
}
