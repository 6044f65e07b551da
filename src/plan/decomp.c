/* plan/decomp.c — blocks of NODE_DECOMP nodes, their memory projections and
 * JSON (see decomp.h). A task pulls the input regions it needs through
 * node_region (so any input chunking works: regions are cut from whatever
 * chunks the inputs have) and hands them to kernels/lapack.c. */
#include "plan/decomp.h"

#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "kernels/lapack.h"
#include "plan/kind.h"

static const char *const NAMES[LA_NOPS] = {
    "tsqr_r", "tsqr_q", "matmul_small", "matmul_t", "qr_q", "qr_r", "svd_u", "svd_s", "svd_vt", "solve", "cholesky",
    "inv", "lstsq_x", "lstsq_residuals", "lstsq_rank", "lstsq_s", "ata_x", "det", "slogdet_sign", "slogdet_log",
    "eigh_w", "eigh_v", "tsqr_request_r", "tsqr_request_q"};

static bool is_request(const zc_array *a) { return a->p.decomp.op == LA_REQ_R || a->p.decomp.op == LA_REQ_Q; }

bool decomp_complex_ok(la_op op)
{
    switch (op) {
    case LA_TSQR_R: case LA_TSQR_Q: case LA_QR_Q: case LA_QR_R: case LA_SVD_U: case LA_SVD_S: case LA_SVD_VT:
    case LA_DET: case LA_SLOGDET_SIGN: case LA_SLOGDET_LOG: case LA_CHOLESKY: case LA_REQ_R: case LA_REQ_Q:
    case LA_INV: case LA_SOLVE: case LA_EIGH_W: case LA_EIGH_V:
        return true;
    default: return false;
    }
}

zc_dtype decomp_dtype(la_op op, zc_dtype in)
{
    if (op == LA_LSTSQ_RANK) return ZC_INT64;
    if (op == LA_SVD_S || op == LA_SLOGDET_LOG || op == LA_EIGH_W) return ZC_FLOAT64;
    return in;
}

int decomp_node(la_op op, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, int ninputs,
                zc_array *const *inputs, int64_t band, int64_t group, zc_array **out)
{
    la_init(); /* now, while the plan is built: OpenBLAS's idle threads stopped before any task runs */
    ZC_TRY(node_new(NODE_DECOMP, ndim, shape, chunks, dtype, ninputs, inputs, out));
    (*out)->p.decomp.op = (int)op;
    (*out)->p.decomp.band = band;
    (*out)->p.decomp.group = group;
    return 0;
}

static const char *decomp_name(const zc_array *a)
{
    return a->p.decomp.op >= 0 && a->p.decomp.op < LA_NOPS ? NAMES[a->p.decomp.op] : "linalg?";
}

#define ATAX_SUB 64 /* rows of A multiplied twice while in cache (at most) */
#define SMALL_MNK 1000000 /* OpenBLAS (0.3.21, SkylakeX) multiplies m·n·k up to this without packing */

/* Rows per sub-band for products of a band (rows × k) with a k × w matrix: small
 * enough that OpenBLAS's small-matrix kernels take them (no packing of A: 1.8-2x
 * faster for k = 1000, w = 20, 2,000-row sub-bands of 80 MB measured single
 * threaded), at most ATAX_SUB, at least 8. */
static int64_t sub_rows(int64_t k, int64_t w)
{
    int64_t kw = k * w > 0 ? k * w : 1, s = SMALL_MNK / kw;
    return s > ATAX_SUB ? ATAX_SUB : s < 8 ? 8 : s;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Pull rows [r0, r1) × cols [c0, c1) of a 2-D input (float64) into a new buffer. */
static int pull(zc_array *in, int64_t r0, int64_t r1, int64_t c0, int64_t c1, double **buf)
{
    zc_range sel[2] = {{r0, r1, 1}, {c0, c1, 1}};
    size_t n = (size_t)((r1 - r0) * (c1 - c0));
    *buf = zc__malloc_array(n ? n : 1, in->itemsize);
    if (!*buf) return ZC_ENOMEM;
    int rc = node_region(in, sel, *buf);
    if (rc < 0) {
        zc__free(*buf);
        *buf = NULL;
    }
    return rc;
}

/* As pull, for values only read: a source chunk kept decoded for the
 * computation (zc_array.cache) is used in place (*own = NULL), else a new
 * buffer (*own = *buf, to free). */
static int pull_ro(zc_array *in, int64_t r0, int64_t r1, int64_t c0, int64_t c1, const double **buf, double **own)
{
    zc_range sel[2] = {{r0, r1, 1}, {c0, c1, 1}};
    const void *v;
    *own = NULL;
    if (in->kind == NODE_ZARR && node_cache_view(in, sel, &v)) {
        *buf = v;
        return 0;
    }
    ZC_TRY(pull(in, r0, r1, c0, c1, own));
    *buf = *own;
    return 0;
}

/* Any input (1-D or 2-D) whole. */
static int pull_all(zc_array *in, double **buf)
{
    zc_range sel[2];
    size_t n = 1;
    for (int d = 0; d < in->ndim; d++) {
        sel[d] = (zc_range){0, in->shape[d], 1};
        n *= (size_t)in->shape[d];
    }
    *buf = zc__malloc_array(n ? n : 1, in->itemsize);
    if (!*buf) return ZC_ENOMEM;
    int rc = node_region(in, sel, *buf);
    if (rc < 0) {
        zc__free(*buf);
        *buf = NULL;
    }
    return rc;
}

static int64_t cols_of(const zc_array *x) { return x->ndim == 2 ? x->shape[1] : 1; }

/* complex128 values (QR, SVD, det: the kernels' cx) */
static bool cx_of(const zc_array *x) { return x->dtype == ZC_COMPLEX128; }

static int tsqr_r_block(zc_array *a, int64_t b, double *out)
{
    zc_array *A = a->inputs[0];
    int64_t rb = a->p.decomp.band, n = A->shape[1], r0 = b * rb, r1 = min64(A->shape[0], r0 + rb);
    double *band;
    ZC_TRY(pull(A, r0, r1, 0, n, &band));
    int rc = la_qr_r(cx_of(A), r1 - r0, n, band, out);
    zc__free(band);
    return rc;
}

static int tsqr_q_block(zc_array *a, int64_t b, double *out)
{
    zc_array *A = a->inputs[0], *Q2 = a->inputs[1], *W = a->ninputs > 2 ? a->inputs[2] : NULL;
    int64_t rb = a->p.decomp.band, n = A->shape[1], r0 = b * rb, r1 = min64(A->shape[0], r0 + rb);
    int64_t k = min64(r1 - r0, n), w = a->shape[1];
    bool cx = cx_of(A);
    double *band = NULL, *c = NULL, *wm = NULL, *cw = NULL;
    int rc = pull(Q2, b * n, b * n + k, 0, n, &c);
    if (rc == 0 && W) {
        rc = pull_all(W, &wm);
        if (rc == 0 && !(cw = zc__calloc((size_t)(k * w > 0 ? k * w : 1), A->itemsize))) rc = ZC_ENOMEM;
        if (rc == 0) la_gemm_acc(cx, 0, k, w, n, c, wm, cw);
        zc__free(wm);
    }
    if (rc == 0) rc = pull(A, r0, r1, 0, n, &band);
    if (rc == 0) rc = la_qr_apply(cx, r1 - r0, n, band, W ? cw : c, w, out);
    zc__free(band);
    zc__free(c);
    zc__free(cw);
    return rc;
}

static int prod_block(zc_array *a, const zc_range *sel, double *out)
{
    zc_array *X = a->inputs[0], *W = a->inputs[1];
    int64_t r0 = sel[0].start, r1 = sel[0].stop, k = X->shape[1], w = a->shape[1], cc = X->chunks[1];
    memset(out, 0, (size_t)((r1 - r0) * w) * sizeof(double));
    for (int64_t c0 = 0; c0 < k; c0 += cc) {
        int64_t c1 = min64(k, c0 + cc);
        const double *xp;
        double *xo, *wp;
        ZC_TRY(pull_ro(X, r0, r1, c0, c1, &xp, &xo));
        int rc = pull(W, c0, c1, 0, w, &wp);
        if (rc == 0) {
            if (la_gemm_rows_fast(w)) /* the band streamed once (kernels/lapack.c) */
                la_gemm_rows(r1 - r0, w, c1 - c0, xp, wp, out);
            else /* by sub-bands of rows (see sub_rows) */
                for (int64_t s0 = 0, sub = sub_rows(c1 - c0, w); s0 < r1 - r0; s0 += sub)
                    la_gemm_acc(false, 0, min64(sub, r1 - r0 - s0), w, c1 - c0, xp + s0 * (c1 - c0), wp, out + s0 * w);
            zc__free(wp);
        }
        zc__free(xo);
        if (rc < 0) return rc;
    }
    return 0;
}

static int atb_block(zc_array *a, const zc_range *sel, double *out)
{
    zc_array *X = a->inputs[0], *Y = a->inputs[1];
    int64_t band = a->p.decomp.band, g = sel[0].start, m = X->shape[0];
    int64_t p0 = sel[1].start, p1 = sel[1].stop, q0 = sel[2].start, q1 = sel[2].stop;
    memset(out, 0, (size_t)((p1 - p0) * (q1 - q0)) * sizeof(double));
    int64_t first = g * a->p.decomp.group * band, last = min64(m, (g + 1) * a->p.decomp.group * band);
    for (int64_t r0 = first; r0 < last; r0 += band) {
        int64_t r1 = min64(last, r0 + band);
        const double *xp, *yp;
        double *xo, *yo;
        ZC_TRY(pull_ro(X, r0, r1, p0, p1, &xp, &xo));
        int rc = pull_ro(Y, r0, r1, q0, q1, &yp, &yo);
        if (rc == 0) {
            /* by sub-bands of rows (see sub_rows), each adding its Xᵀ·Y */
            for (int64_t s0 = 0, sub = sub_rows(p1 - p0, q1 - q0); s0 < r1 - r0; s0 += sub)
                la_gemm_acc(false, 1, p1 - p0, q1 - q0, min64(sub, r1 - r0 - s0), xp + s0 * (p1 - p0),
                            yp + s0 * (q1 - q0), out);
            zc__free(yo);
        }
        zc__free(xo);
        if (rc < 0) return rc;
    }
    return 0;
}

static int atax_block(zc_array *a, const zc_range *sel, double *out)
{
    zc_array *A = a->inputs[0], *X = a->inputs[1];
    int64_t band = a->p.decomp.band, g = sel[0].start, m = A->shape[0], n = A->shape[1], l = X->shape[1];
    memset(out, 0, (size_t)(n * l) * sizeof(double));
    int64_t first = g * a->p.decomp.group * band, last = min64(m, (g + 1) * a->p.decomp.group * band);
    double *x, *t = zc__malloc_array((size_t)(ATAX_SUB * l + 1), sizeof(double));
    if (!t) return ZC_ENOMEM;
    int rc = pull_all(X, &x);
    for (int64_t r0 = first; r0 < last && rc == 0; r0 += band) {
        int64_t r1 = min64(last, r0 + band);
        const double *ab;
        double *ao;
        if ((rc = pull_ro(A, r0, r1, 0, n, &ab, &ao)) < 0) break;
        /* sub-bands of at most ATAX_SUB rows: A_s·X then A_sᵀ·T while A_s is in cache (2x
         * faster than two products over the band, each packing all of it) */
        for (int64_t s0 = 0, sub = sub_rows(n, l); s0 < r1 - r0; s0 += sub) {
            int64_t h = min64(sub, r1 - r0 - s0);
            memset(t, 0, (size_t)(h * l) * sizeof(double));
            la_gemm_rows(h, l, n, ab + s0 * n, x, t); /* A_s streamed in: see la_gemm_rows */
            la_gemm_acc(false, 1, n, l, h, ab + s0 * n, t, out);
        }
        zc__free(ao);
    }
    zc__free(x);
    zc__free(t);
    return rc;
}

static int small_block(zc_array *a, void *out)
{
    la_op op = (la_op)a->p.decomp.op;
    zc_array *A = a->inputs[0];
    int64_t m = A->shape[0], n = A->ndim == 2 ? A->shape[1] : 1, k = min64(m, n);
    bool cx = cx_of(A);
    double *x = NULL, *y = NULL, *t1 = NULL, *t2 = NULL;
    ZC_TRY(pull_all(A, &x));
    int rc = 0;
    if (a->ninputs > 1) rc = pull_all(a->inputs[1], &y);
    int64_t r = a->ninputs > 1 ? cols_of(a->inputs[1]) : 0;
    if (rc < 0) goto out;
    switch (op) {
    case LA_QR_Q: rc = la_qr(cx, m, n, x, out, NULL); break;
    case LA_QR_R: rc = la_qr(cx, m, n, x, NULL, out); break;
    case LA_SVD_S: rc = la_svd(cx, m, n, x, NULL, out, NULL); break;
    case LA_SVD_U: case LA_SVD_VT:
        t1 = zc__malloc_array((size_t)(k + 1), sizeof(double));
        t2 = zc__malloc_array((size_t)((op == LA_SVD_U ? k * n : m * k) + 1), A->itemsize);
        if (!t1 || !t2) { rc = ZC_ENOMEM; break; }
        rc = op == LA_SVD_U ? la_svd(cx, m, n, x, out, t1, t2) : la_svd(cx, m, n, x, t2, t1, out);
        break;
    case LA_SOLVE: rc = la_solve(cx, m, r, x, y, out); break;
    case LA_CHOLESKY: rc = la_cholesky(cx, m, x, out); break;
    case LA_INV: rc = la_inv(cx, m, x, out); break;
    case LA_DET: rc = la_det(cx, m, x, NULL, NULL, out); break;
    case LA_SLOGDET_SIGN: rc = la_det(cx, m, x, out, NULL, NULL); break;
    case LA_SLOGDET_LOG: rc = la_det(cx, m, x, NULL, out, NULL); break;
    case LA_EIGH_W: rc = la_eigh(cx, m, x, out, NULL); break;
    case LA_EIGH_V:
        if (!(t1 = zc__malloc_array((size_t)(m + 1), sizeof(double)))) { rc = ZC_ENOMEM; break; }
        rc = la_eigh(cx, m, x, t1, out);
        break;
    case LA_LSTSQ_X: rc = la_lstsq(m, n, r, x, y, out, NULL, NULL, NULL); break;
    case LA_LSTSQ_RES: rc = la_lstsq(m, n, r, x, y, NULL, out, NULL, NULL); break;
    case LA_LSTSQ_RANK: rc = la_lstsq(m, n, r, x, y, NULL, NULL, out, NULL); break;
    case LA_LSTSQ_S: rc = la_lstsq(m, n, r, x, y, NULL, NULL, NULL, out); break;
    default: rc = zc__err(ZC_EINTERNAL, "linalg: unknown operation %d", (int)op);
    }
out:
    zc__free(x);
    zc__free(y);
    zc__free(t1);
    zc__free(t2);
    return rc;
}

static int decomp_region(zc_array *a, const zc_range *sel, void *out)
{
    /* a task computes whole blocks only (decomp nodes are always materialized) */
    for (int d = 0; d < a->ndim; d++) {
        int64_t e = sel[d].start + a->chunks[d];
        if (sel[d].step != 1 || sel[d].start % a->chunks[d] || sel[d].stop != (e < a->shape[d] ? e : a->shape[d]))
            return zc__err(ZC_EINTERNAL, "%s: a region that is not one block was asked for", decomp_name(a));
    }
    for (int i = 0; i < a->ninputs; i++)
        if (a->inputs[i]->dtype != ZC_FLOAT64 && !(cx_of(a->inputs[i]) && decomp_complex_ok(a->p.decomp.op)))
            return zc__err(ZC_EINTERNAL, "%s: input %d is %s, not float64", decomp_name(a), i,
                           zc_dtype_name(a->inputs[i]->dtype));
    if (is_request(a)) return zc__err(ZC_EINTERNAL, "plan: a TSQR request not expanded to its bands");
    switch ((la_op)a->p.decomp.op) {
    case LA_TSQR_R: return tsqr_r_block(a, sel[0].start / a->chunks[0], out);
    case LA_TSQR_Q: return tsqr_q_block(a, sel[0].start / a->chunks[0], out);
    case LA_PROD: return prod_block(a, sel, out);
    case LA_ATB: return atb_block(a, sel, out);
    case LA_ATAX: return atax_block(a, sel, out);
    default: return small_block(a, out);
    }
}

/* ---- projections ---- */

static size_t region2(const zc_array *in, int64_t r0, int64_t r1, int64_t c0, int64_t c1, node_proj_fn proj)
{
    zc_range sel[2] = {{r0, r1, 1}, {c0, c1, 1}};
    return (size_t)((r1 - r0) * (c1 - c0)) * in->itemsize + proj(in, sel);
}

static size_t whole(const zc_array *in, node_proj_fn proj)
{
    zc_range sel[2];
    size_t n = in->itemsize;
    for (int d = 0; d < in->ndim; d++) {
        sel[d] = (zc_range){0, in->shape[d], 1};
        n *= (size_t)in->shape[d];
    }
    return n + proj(in, sel);
}

static size_t decomp_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    la_op op = (la_op)a->p.decomp.op;
    const zc_array *A = a->inputs[0];
    int64_t m = A->shape[0], n = A->ndim == 2 ? A->shape[1] : 1, k = min64(m, n);
    bool cx = cx_of(A);
    switch (op) {
    case LA_TSQR_R: {
        int64_t rows = min64(a->p.decomp.band, m);
        return region2(A, 0, rows, 0, n, proj) + la_qr_r_bytes(cx, rows, n);
    }
    case LA_TSQR_Q: {
        int64_t rows = min64(a->p.decomp.band, m), kk = min64(rows, n), w = a->shape[1];
        size_t t = region2(a->inputs[1], 0, kk, 0, n, proj);
        if (a->ninputs > 2) t += whole(a->inputs[2], proj) + (size_t)(kk * w) * A->itemsize;
        /* the W product is freed before the band is pulled, but c and cw stay */
        return t + region2(A, 0, rows, 0, n, proj) + la_qr_apply_bytes(cx, rows, n, w);
    }
    case LA_PROD: {
        int64_t cc = min64(A->chunks[1], n);
        return region2(A, sel[0].start, sel[0].stop, 0, cc, proj) + region2(a->inputs[1], 0, cc, 0, a->shape[1], proj);
    }
    case LA_ATB: {
        int64_t band = min64(a->p.decomp.band, m);
        return region2(A, 0, band, sel[1].start, sel[1].stop, proj) +
               region2(a->inputs[1], 0, band, sel[2].start, sel[2].stop, proj);
    }
    case LA_ATAX: {
        int64_t band = min64(a->p.decomp.band, m), l = a->inputs[1]->shape[1];
        return region2(A, 0, band, 0, n, proj) + whole(a->inputs[1], proj) + (size_t)(ATAX_SUB * l + 1) * sizeof(double);
    }
    case LA_REQ_R: case LA_REQ_Q: return 0; /* expanded before any projection */
    default: break;
    }
    size_t t = whole(A, proj) + (a->ninputs > 1 ? whole(a->inputs[1], proj) : 0);
    int64_t r = a->ninputs > 1 ? cols_of(a->inputs[1]) : 0;
    switch (op) {
    case LA_QR_Q: case LA_QR_R: return t + la_qr_bytes(cx, m, n);
    case LA_SVD_S: return t + la_svd_bytes(cx, m, n, 0);
    case LA_SVD_U: case LA_SVD_VT:
        return t + la_svd_bytes(cx, m, n, 1) + (size_t)(k + 2) * sizeof(double) + (size_t)(k * (m > n ? m : n)) * A->itemsize;
    case LA_SOLVE: return t + la_solve_bytes(cx, m, r);
    case LA_CHOLESKY: return t + la_cholesky_bytes(m);
    case LA_INV: return t + la_inv_bytes(cx, m);
    case LA_DET: case LA_SLOGDET_SIGN: case LA_SLOGDET_LOG: return t + la_det_bytes(cx, m);
    case LA_EIGH_W: return t + la_eigh_bytes(cx, m, 0);
    case LA_EIGH_V: return t + la_eigh_bytes(cx, m, 1) + (size_t)(m + 1) * sizeof(double);
    default: return t + la_lstsq_bytes(m, n, r);
    }
}

/* ---- JSON ---- */

static int decomp_to_json(const zc_array *a, json_t *o)
{
    if (is_request(a)) return zc__err(ZC_EINTERNAL, "plan: a TSQR request not expanded to its bands");
    json_object_set_new(o, "op", json_string(decomp_name(a)));
    json_object_set_new(o, "band", json_integer(a->p.decomp.band));
    json_object_set_new(o, "group", json_integer(a->p.decomp.group));
    return 0;
}

static bool dims_are(const zc_array *a, int nd, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t d[3] = {d0, d1, d2};
    if (a->ndim != nd) return false;
    for (int i = 0; i < nd; i++)
        if (a->shape[i] != d[i]) return false;
    return true;
}

/* A node read from a plan has the inputs, shape and chunks ops/decomp.c gives
 * its operation (the blocks functions above index with them unchecked). */
static bool layout_ok(const zc_array *a)
{
    la_op op = (la_op)a->p.decomp.op;
    int nin = a->ninputs;
    zc_dtype t = a->inputs[0]->dtype;
    if ((t != ZC_FLOAT64 && !(t == ZC_COMPLEX128 && decomp_complex_ok(op))) || a->dtype != decomp_dtype(op, t))
        return false;
    for (int i = 0; i < nin; i++) {
        const zc_array *x = a->inputs[i];
        if (x->dtype != t || x->ndim < 1 || x->ndim > 2) return false;
        for (int d = 0; d < x->ndim; d++)
            if (x->shape[d] < 1) return false;
    }
    const zc_array *A = a->inputs[0], *B = nin > 1 ? a->inputs[1] : NULL;
    if (A->ndim != 2 && op != LA_PROD) return false;
    int64_t m = A->shape[0], n = A->ndim == 2 ? A->shape[1] : 1, k = min64(m, n), band = a->p.decomp.band;
    switch (op) {
    case LA_TSQR_R: case LA_TSQR_Q: {
        int64_t nb = ck_ceildiv(m, band), ns;
        if (ck_mul_i64(nb - 1, n, &ns) || ck_add_i64(ns, min64(m - (nb - 1) * band, n), &ns)) return false;
        if (op == LA_TSQR_R) return nin == 1 && dims_are(a, 2, ns, n, 0) && a->chunks[0] == n && a->chunks[1] == n;
        int64_t w = nin == 3 ? a->inputs[2]->shape[a->inputs[2]->ndim - 1] : n;
        return (nin == 2 || (nin == 3 && dims_are(a->inputs[2], 2, n, w, 0))) && dims_are(B, 2, ns, n, 0) &&
               dims_are(a, 2, m, w, 0) && a->chunks[0] == band && a->chunks[1] == w;
    }
    case LA_PROD:
        return nin == 2 && A->ndim == 2 && B->ndim == 2 && B->shape[0] == n && dims_are(a, 2, m, B->shape[1], 0) &&
               a->chunks[1] == a->shape[1];
    case LA_ATB: case LA_ATAX: {
        int64_t g = ck_ceildiv(ck_ceildiv(m, band), a->p.decomp.group);
        if (nin != 2 || B->ndim != 2 || a->chunks[0] != 1) return false;
        if (op == LA_ATB) return B->shape[0] == m && dims_are(a, 3, g, n, B->shape[1]);
        return B->shape[0] == n && dims_are(a, 3, g, n, B->shape[1]) && a->chunks[1] == n && a->chunks[2] == B->shape[1];
    }
    default: break;
    }
    /* computed whole in one task */
    for (int d = 0; d < a->ndim; d++)
        if (a->chunks[d] != (a->shape[d] > 0 ? a->shape[d] : 1)) return false;
    int64_t r = B ? (B->ndim == 2 ? B->shape[1] : 1) : 0;
    bool bcols = B && B->shape[0] == m;
    switch (op) {
    case LA_QR_Q: case LA_SVD_U: return nin == 1 && dims_are(a, 2, m, k, 0);
    case LA_QR_R: case LA_SVD_VT: return nin == 1 && dims_are(a, 2, k, n, 0);
    case LA_SVD_S: return nin == 1 && dims_are(a, 1, k, 0, 0);
    case LA_CHOLESKY: case LA_INV: case LA_EIGH_V: return nin == 1 && m == n && dims_are(a, 2, m, m, 0);
    case LA_DET: case LA_SLOGDET_SIGN: case LA_SLOGDET_LOG: return nin == 1 && m == n && a->ndim == 0;
    case LA_EIGH_W: return nin == 1 && m == n && dims_are(a, 1, m, 0, 0);
    case LA_SOLVE: return nin == 2 && m == n && bcols && dims_are(a, B->ndim, m, r, 0);
    case LA_LSTSQ_X: return nin == 2 && bcols && dims_are(a, B->ndim, n, r, 0);
    case LA_LSTSQ_RES: return nin == 2 && bcols && dims_are(a, 1, r, 0, 0);
    case LA_LSTSQ_RANK: return nin == 2 && bcols && a->ndim == 0;
    case LA_LSTSQ_S: return nin == 2 && bcols && dims_are(a, 1, k, 0, 0);
    default: return false;
    }
}

static int decomp_from_json(const json_t *o, zc_array *a, int node)
{
    (void)node; /* its messages name the kind */
    const char *name = json_string_value(json_object_get(o, "op"));
    int op = -1;
    for (int i = 0; name && i < LA_NOPS; i++)
        if (!strcmp(name, NAMES[i])) op = i;
    if (op < 0) return zc__err(ZC_EFORMAT, "plan: unknown linear algebra operation '%s'", name ? name : "(none)");
    if (op == LA_REQ_R || op == LA_REQ_Q)
        return zc__err(ZC_EFORMAT, "plan: %s node: a request is fitted to its bands before a plan is saved", name);
    a->p.decomp.op = op;
    a->p.decomp.band = json_integer_value(json_object_get(o, "band"));
    a->p.decomp.group = json_integer_value(json_object_get(o, "group"));
    if ((op == LA_TSQR_R || op == LA_TSQR_Q || op == LA_ATB || op == LA_ATAX) && a->p.decomp.band < 1)
        return zc__err(ZC_EFORMAT, "plan: %s node with band %lld", name, (long long)a->p.decomp.band);
    if ((op == LA_ATB || op == LA_ATAX) && a->p.decomp.group < 1)
        return zc__err(ZC_EFORMAT, "plan: %s node with group %lld", name, (long long)a->p.decomp.group);
    if (!layout_ok(a))
        return zc__err(ZC_EFORMAT, "plan: %s node's shape, chunks, dtype or inputs disagree with what it computes", name);
    return 0;
}

/* ---- requests ---- */

static int decomp_expand(zc_array *a, size_t limit, size_t (*task_proj)(const zc_array *a, const int64_t *block))
{
    return a->p.decomp.expand ? a->p.decomp.expand(a, limit, task_proj) : 0;
}

static void decomp_clone(zc_array *c)
{
    c->p.decomp.fact_a = c->p.decomp.fact_qs = NULL;
}

static void decomp_release(zc_array *a)
{
    zc_array_release(a->p.decomp.fact_a);
    zc_array_release(a->p.decomp.fact_qs);
}

/* The nodes under a that are not yet in the plan, marked as materialized
 * (stage 0) into l; false when l is full. */
#define FITS_MAX 256
typedef struct {
    zc_array *v[FITS_MAX];
    int n;
} fits_list;

static bool mark_new(fits_list *l, zc_array *a, const zc_array *stop)
{
    if (a == stop || a->stage >= 0) return true;
    if (l->n == FITS_MAX) return false;
    a->stage = 0;
    l->v[l->n++] = a;
    for (int i = 0; i < a->ninputs; i++)
        if (!mark_new(l, a->inputs[i], stop)) return false;
    return true;
}

bool decomp_fits(zc_array *const *roots, int nroots, const zc_array *stop, size_t limit,
                 size_t (*task_proj)(const zc_array *a, const int64_t *block))
{
    fits_list l = {.n = 0};
    bool ok = true;
    for (int i = 0; i < nroots && ok; i++) ok = !roots[i] || mark_new(&l, roots[i], stop);
    for (int i = 0; i < l.n && ok; i++)
        if (l.v[i]->kind == NODE_DECOMP) ok = task_proj(l.v[i], NULL) <= limit;
    for (int i = 0; i < l.n; i++) l.v[i]->stage = -1;
    return ok;
}

const node_kind_def kind_decomp = {
    .json = "decomp", .flags = KIND_STORED | KIND_BLAS, .min_inputs = 1, .max_inputs = NODE_MAX_INPUTS,
    .name = decomp_name, .region = decomp_region, .proj = decomp_proj, .to_json = decomp_to_json,
    .from_json = decomp_from_json, .clone = decomp_clone, .release = decomp_release, .expand = decomp_expand,
};
