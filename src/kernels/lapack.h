/* kernels/lapack.h — dense float64 kernels over LAPACKE and OpenBLAS for the
 * linear algebra nodes (plan/decomp.c).
 *
 * Every matrix in and out is row-major (C order), as the engine's regions are.
 * The kernels taking `cx` also work on complex128 when it is set (Cholesky of a
 * Hermitian matrix, svd giving Vᴴ): every buffer then holds (re, im) pairs of
 * doubles (the *_bytes likewise), except the SVD's s, slogdet's log|det| and
 * eigh's eigenvalues, real either way.
 * The kernels copy what LAPACK needs into column-major workspaces allocated
 * with zc__malloc (so a task's measured memory includes them); the *_bytes
 * functions give that workspace for the projections, from LAPACK's own
 * workspace queries. OpenBLAS runs on one thread: tasks already run on the
 * engine's pool. Sizes must fit LAPACK's 32-bit integers (checked: ZC_EOVERFLOW).
 * Errors: ZC_EINVAL for a singular matrix or one not positive definite,
 * ZC_EINTERNAL for an unexpected LAPACK status, ZC_ENOMEM. */
#ifndef ZC_KERNELS_LAPACK_H
#define ZC_KERNELS_LAPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One OpenBLAS thread (called by every kernel; cheap after the first time). */
void la_init(void);

/* R (k×n, k = min(m,n), zeros below the diagonal) of the Householder QR of a (m×n). */
int la_qr_r(bool cx, int64_t m, int64_t n, const double *a, double *r);
size_t la_qr_r_bytes(bool cx, int64_t m, int64_t n);
/* out (m×w) = Q·[c; 0], Q (m×k) the Householder Q of a (m×n, the same factorization
 * la_qr_r computes), c k×w. */
int la_qr_apply(bool cx, int64_t m, int64_t n, const double *a, const double *c, int64_t w, double *out);
size_t la_qr_apply_bytes(bool cx, int64_t m, int64_t n, int64_t w);
/* Reduced QR: q (m×k) and/or r (k×n); either may be NULL. */
int la_qr(bool cx, int64_t m, int64_t n, const double *a, double *q, double *r);
size_t la_qr_bytes(bool cx, int64_t m, int64_t n);
/* Thin SVD (divide and conquer): u (m×k), s (k), vt (k×n; Vᴴ when complex); u
 * and vt may be NULL (values only, then both must be). */
int la_svd(bool cx, int64_t m, int64_t n, const double *a, double *u, double *s, double *vt);
size_t la_svd_bytes(bool cx, int64_t m, int64_t n, int vectors);
/* a (n×n) x = b (n×nrhs). */
int la_solve(bool cx, int64_t n, int64_t nrhs, const double *a, const double *b, double *x);
size_t la_solve_bytes(bool cx, int64_t n, int64_t nrhs);
/* Lower Cholesky factor of a (n×n; only its lower triangle is read), zeros above. */
int la_cholesky(bool cx, int64_t n, const double *a, double *l);
size_t la_cholesky_bytes(int64_t n);
int la_inv(bool cx, int64_t n, const double *a, double *x);
size_t la_inv_bytes(bool cx, int64_t n);
/* sign (-1, 0, 1; complex: det/|det| or 0), log|det| (-inf when singular) and
 * det of a (n×n) from its LU factorization (NaN log|det| and det for a matrix
 * with NaNs); any output may be NULL. A singular matrix is no error. */
int la_det(bool cx, int64_t n, const double *a, double *sign, double *logabs, double *det);
size_t la_det_bytes(bool cx, int64_t n);
/* Eigenvalues w (n, ascending, real) and eigenvectors v (n×n, columns; may be
 * NULL) of the symmetric (Hermitian when cx) a (n×n; only its lower triangle is
 * read). */
int la_eigh(bool cx, int64_t n, const double *a, double *w, double *v);
size_t la_eigh_bytes(bool cx, int64_t n, int vectors);
/* Least squares (SVD based, rcond = eps·max(m,n) like NumPy): x (n×nrhs),
 * res (nrhs) = squared 2-norms of the columns of b − a·x, rank, s (min(m,n));
 * any output may be NULL. */
int la_lstsq(int64_t m, int64_t n, int64_t nrhs, const double *a, const double *b, double *x, double *res,
             int64_t *rank, double *s);
size_t la_lstsq_bytes(int64_t m, int64_t n, int64_t nrhs);
/* c (m×n) += a (m×k) · b (k×n); ta: a is given transposed (k×m; conjugated too when cx). */
void la_gemm_acc(bool cx, int ta, int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c);
/* c (m×n) += a (m×k) · b (k×n) for a tall a read once (a pass over a matrix) and a
 * narrow b: an AVX-512 kernel when la_gemm_rows_fast(n) (the CPU has AVX-512F,
 * n ≤ 24, environment ZC_NO_AVX512 unset), else la_gemm_acc. */
void la_gemm_rows(int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c);
bool la_gemm_rows_fast(int64_t n);

#endif
