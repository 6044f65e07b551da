/* plan/decomp.h — the NODE_DECOMP kind: one node kind for the dense linear
 * algebra operations (ops/decomp.c builds them, kernels/lapack.c computes), its
 * `op` saying which. Values are float64 (the ops convert float32 inputs
 * first), except the rank of lstsq (int64); QR, SVD, the determinant, Cholesky,
 * inv, solve and eigh (decomp_complex_ok) also take complex128 inputs (complex64
 * converted), their results complex128 but for the singular values, log|det| and
 * the eigenvalues (decomp_dtype). Every decomp node is materialized
 * (plan.c): a task computes one whole block, never part of one.
 *
 *   TSQR_R   inputs A (m×n, m ≥ n), `band` rows per task: block i is the R factor
 *            (k_i×n, k_i = min(rows of band i, n)) of the QR of A's row band i;
 *            shape (Σ k_i, n), chunks (n, n) — only the last band may be short
 *   TSQR_Q   inputs A, Q2 (Σ k_i × n, the Q of TSQR_R's stack), optionally W (n×w):
 *            block i (rows of band i) = Q_i · Q2[rows of R_i] (· W), Q_i from the
 *            same Householder QR of band i as TSQR_R (recomputed: a second read of
 *            A instead of writing and reading the m×n factor Q_i)
 *   PROD     X (m×k) · W (k×w), W small: block = rows of X (`band`) × all of w;
 *            a task walks X's column chunks, one X piece and one W piece at a time
 *   ATB      partial products Xᵀ·Y of X (m×p) and Y (m×q): shape (G, p, q), chunks
 *            (1, pc, qc); block (g, ·, ·) sums the bands g·group .. (g+1)·group − 1
 *            of `band` rows; the ops sum over axis 0 with a reduction
 *   ATAX     partial products Aᵀ·(A·X) of A (m×n) and X (n×l, small): shape (G, n, l),
 *            one chunk per group; a task pulls X once, then per band of `band` rows
 *            (whole rows) T = A_b·X and adds A_bᵀ·T: A·X and Aᵀ·(A·X) in one pass
 *   REQ_R    request (as zc_qr, zc_svd... make it): R (n×n) of the TSQR of
 *            input A, `group` saying what of Q a REQ_Q will ask (0 none, 1 Q,
 *            2 Q·W); bound-free: its expansion (p.decomp.expand, ops/decomp.c)
 *            chooses the bands for the plan's bound and makes it the QR_R of
 *            the last stacked R, keeping the banded A and the Q of the stacked R
 *            factors (fact_a, fact_qs) for the REQ_Q that shares it
 *   REQ_Q    request: Q (· W) of the TSQR of A; inputs A, its REQ_R, optionally W;
 *            chunks (rows, w) fixed from A's chunks; expanded after its REQ_R
 *            into a TSQR_Q of those bands (copied to its chunks when they differ)
 *   QR_Q, QR_R, SVD_U, SVD_S, SVD_VT, SOLVE, CHOLESKY, INV, LSTSQ_*, DET,
 *   SLOGDET_SIGN, SLOGDET_LOG (0-d), EIGH_W (n), EIGH_V (n×n): one block
 *            computed from whole inputs that fit in one task (LAPACK) */
#ifndef ZC_PLAN_DECOMP_H
#define ZC_PLAN_DECOMP_H

#include "plan/array.h"

typedef enum {
    LA_TSQR_R, LA_TSQR_Q, LA_PROD, LA_ATB, LA_QR_Q, LA_QR_R, LA_SVD_U, LA_SVD_S, LA_SVD_VT, LA_SOLVE, LA_CHOLESKY,
    LA_INV, LA_LSTSQ_X, LA_LSTSQ_RES, LA_LSTSQ_RANK, LA_LSTSQ_S, LA_ATAX, LA_DET, LA_SLOGDET_SIGN, LA_SLOGDET_LOG,
    LA_EIGH_W, LA_EIGH_V, LA_REQ_R, LA_REQ_Q, LA_NOPS
} la_op;

/* Whether op also computes on complex128 (every input complex128). */
bool decomp_complex_ok(la_op op);
/* The dtype of op's result for inputs of dtype `in` (float64 or complex128). */
zc_dtype decomp_dtype(la_op op, zc_dtype in);

/* A new decomp node (inputs retained). */
int decomp_node(la_op op, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, int ninputs,
                zc_array *const *inputs, int64_t band, int64_t group, zc_array **out);

/* At expansion: whether every decomp node of the graph between roots and the
 * nodes already in the plan (stage >= 0, or `stop`) fits a task budget of
 * `limit` bytes as task_proj projects it, those nodes counted as materialized. */
bool decomp_fits(zc_array *const *roots, int nroots, const zc_array *stop, size_t limit,
                 size_t (*task_proj)(const zc_array *a, const int64_t *block));

#endif
