/* kernels/lapack.c — dense float64 (and, except for lstsq and the randomized SVD's
 * products, complex128) kernels over LAPACKE/OpenBLAS (see lapack.h).
 *
 * A row-major m×n buffer read as column-major is the n×m transpose. Where that
 * is what LAPACK wants, no copy is transposed: the SVD factors Aᵀ (its U is our
 * Vᵀ and its Vᵀ our U, in place), inv inverts Aᵀ (inv(Aᵀ) = inv(A)ᵀ, which read
 * back row-major is inv(A)), solve factors Aᵀ and solves with trans = 'T', and
 * Cholesky factors the upper triangle of Aᵀ (A's lower). QR transposes into a
 * column-major copy: QR on a tall column-major matrix was measured 1.8x faster
 * than dgelqf on the untransposed buffer, transposition included. */
#include "kernels/lapack.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/cmplx.h"

/* One OpenBLAS thread: the tasks are the threads. OpenBLAS (pthreads build)
 * starts its server threads when it is loaded, and an idle one spins on
 * sched_yield for its timeout (2^28 cycles, ~0.1 s) before it sleeps: CPU
 * taken from the tasks while the first stage runs (8% of a randomized SVD's
 * samples on 2 cores). With one thread they have nothing to do, so they are
 * stopped (blas_thread_shutdown_, the hook OpenBLAS runs before a fork; a
 * later multithreaded call starts them again). Weak: other BLAS lack it. */
extern int blas_thread_shutdown_(void) __attribute__((weak));
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void set_threads(void)
{
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
}
void la_init(void) { pthread_once(&once, set_threads); }

/* An m×n matrix whose dims and element count fit LAPACK's 32-bit ints (the
 * dims are checked before their product is formed). */
static int fits(int64_t m, int64_t n)
{
    if (m < 0 || n < 0 || m > INT_MAX || n > INT_MAX || m * n > INT_MAX)
        return zc__err(ZC_EOVERFLOW, "a %lld x %lld matrix exceeds LAPACK's 32-bit sizes", (long long)m, (long long)n);
    return 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static double *dalloc(int64_t n) { return zc__malloc_array((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* doubles per element: 2 for complex128 (cx), stored as (re, im) pairs */
static int64_t el(bool cx) { return cx ? 2 : 1; }
#define Z(p) ((lapack_complex_double *)(p))

static int lapack_status(lapack_int info, const char *what)
{
    if (info == 0) return 0;
    return zc__err(ZC_EINTERNAL, "%s: LAPACK returned %d", what, (int)info);
}

/* row-major a (m×n) into column-major c (ld m) */
static void to_cm(bool cx, int64_t m, int64_t n, const double *a, double *c)
{
    if (cx) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) memcpy(c + 2 * (j * m + i), a + 2 * (i * n + j), 2 * sizeof(double));
        return;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) c[j * m + i] = a[i * n + j];
}

/* workspace sizes in elements (LAPACK's queries) */
static int64_t q_geqrf(bool cx, int64_t m, int64_t n)
{
    double w[2] = {0, 0}, d[2] = {0, 0};
    lapack_int lm = (lapack_int)max64(m, 1);
    if (cx) LAPACKE_zgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, Z(d), lm, Z(d), Z(w), -1);
    else LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, d, lm, d, w, -1);
    return (int64_t)w[0] + 1;
}

static int64_t q_orgqr(bool cx, int64_t m, int64_t k)
{
    double q[2] = {0, 0}, d[2] = {0, 0};
    lapack_int lm = (lapack_int)max64(m, 1);
    if (cx) LAPACKE_zungqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)k, (lapack_int)k, Z(d), lm, Z(d), Z(q), -1);
    else LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)k, (lapack_int)k, d, lm, d, q, -1);
    return (int64_t)q[0] + 1;
}

/* Factor a column-major copy of a: returns cm (m×n) and tau (k) in one block
 * (offsets in doubles: elements of 2 doubles when cx). */
static int factor(bool cx, int64_t m, int64_t n, const double *a, int64_t extra, double **blk, double **tau,
                  double **work, int64_t *lwork)
{
    ZC_TRY(fits(m, n));
    int64_t k = min64(m, n), e = el(cx);
    *lwork = max64(q_geqrf(cx, m, n), extra);
    *blk = dalloc(e * (m * n + k + *lwork));
    if (!*blk) return ZC_ENOMEM;
    *tau = *blk + e * m * n;
    *work = *tau + e * k;
    to_cm(cx, m, n, a, *blk);
    if (m && n) {
        lapack_int info =
            cx ? LAPACKE_zgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, Z(*blk), (lapack_int)m, Z(*tau),
                                     Z(*work), (lapack_int)*lwork)
               : LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, *blk, (lapack_int)m, *tau,
                                     *work, (lapack_int)*lwork);
        if (info) {
            zc__free(*blk);
            return lapack_status(info, cx ? "QR (zgeqrf)" : "QR (dgeqrf)");
        }
    }
    return 0;
}

static void extract_r(bool cx, int64_t m, int64_t n, const double *cm, double *r)
{
    int64_t k = min64(m, n), e = el(cx);
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < e; c++) r[e * (i * n + j) + c] = j >= i ? cm[e * (j * m + i) + c] : 0.0;
}

/* Bands of TSQR: dgeqrt (recursive dgeqrt3 over panels of QRT_NB columns, level 3)
 * and dgemqrt. For n below LAPACK's crossover (128) dgeqrf/dormqr run unblocked
 * (level 2: 50 passes over a 100000 x 50 band): measured 2.6x slower for the
 * factorization and 7x for applying Q. */
#define QRT_NB 64

static int64_t qrt_nb(int64_t m, int64_t n) { return min64(QRT_NB, min64(m, n)) > 0 ? min64(QRT_NB, min64(m, n)) : 1; }

/* Factor a column-major copy of a with dgeqrt (zgeqrt): cm (m×n), t (nb×k), work (nb·max(n, w)). */
static int factor_t(bool cx, int64_t m, int64_t n, int64_t w, const double *a, double **blk, double **t,
                    double **work)
{
    ZC_TRY(fits(m, n));
    int64_t k = min64(m, n), nb = qrt_nb(m, n), e = el(cx);
    *blk = dalloc(e * (m * n + nb * k + nb * (n > w ? n : w)));
    if (!*blk) return ZC_ENOMEM;
    *t = *blk + e * m * n;
    *work = *t + e * nb * k;
    to_cm(cx, m, n, a, *blk);
    if (m && n) {
        lapack_int info =
            cx ? LAPACKE_zgeqrt_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)nb, Z(*blk),
                                     (lapack_int)m, Z(*t), (lapack_int)nb, Z(*work))
               : LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)nb, *blk,
                                     (lapack_int)m, *t, (lapack_int)nb, *work);
        if (info) {
            zc__free(*blk);
            return lapack_status(info, cx ? "QR (zgeqrt)" : "QR (dgeqrt)");
        }
    }
    return 0;
}

size_t la_qr_r_bytes(bool cx, int64_t m, int64_t n)
{
    int64_t nb = qrt_nb(m, n);
    return (size_t)(el(cx) * (m * n + nb * min64(m, n) + nb * n) + 1) * sizeof(double);
}

int la_qr_r(bool cx, int64_t m, int64_t n, const double *a, double *r)
{
    la_init();
    double *blk, *t, *work;
    ZC_TRY(factor_t(cx, m, n, 0, a, &blk, &t, &work));
    extract_r(cx, m, n, blk, r);
    zc__free(blk);
    return 0;
}

size_t la_qr_apply_bytes(bool cx, int64_t m, int64_t n, int64_t w)
{
    int64_t k = min64(m, n), nb = qrt_nb(m, n);
    return (size_t)(el(cx) * (m * n + nb * k + nb * (n > w ? n : w) + m * w) + 1) * sizeof(double);
}

int la_qr_apply(bool cx, int64_t m, int64_t n, const double *a, const double *c, int64_t w, double *out)
{
    la_init();
    ZC_TRY(fits(m, w));
    int64_t k = min64(m, n), nb = qrt_nb(m, n), e = el(cx);
    double *cc = dalloc(e * m * w);
    if (!cc) return ZC_ENOMEM;
    double *blk, *t, *work;
    int rc = factor_t(cx, m, n, w, a, &blk, &t, &work);
    if (rc < 0) {
        zc__free(cc);
        return rc;
    }
    for (int64_t j = 0; j < w; j++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < e; p++) cc[e * (j * m + i) + p] = i < k ? c[e * (i * w + j) + p] : 0.0;
    if (m && w && k) {
        lapack_int info =
            cx ? LAPACKE_zgemqrt_work(LAPACK_COL_MAJOR, 'L', 'N', (lapack_int)m, (lapack_int)w, (lapack_int)k,
                                      (lapack_int)nb, Z(blk), (lapack_int)m, Z(t), (lapack_int)nb, Z(cc),
                                      (lapack_int)m, Z(work))
               : LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', 'N', (lapack_int)m, (lapack_int)w, (lapack_int)k,
                                      (lapack_int)nb, blk, (lapack_int)m, t, (lapack_int)nb, cc, (lapack_int)m, work);
        rc = lapack_status(info, cx ? "applying Q (zgemqrt)" : "applying Q (dgemqrt)");
    }
    if (rc == 0)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < w; j++)
                for (int64_t p = 0; p < e; p++) out[e * (i * w + j) + p] = cc[e * (j * m + i) + p];
    zc__free(blk);
    zc__free(cc);
    return rc;
}

size_t la_qr_bytes(bool cx, int64_t m, int64_t n)
{
    int64_t k = min64(m, n);
    return (size_t)(el(cx) * (m * n + k + max64(q_geqrf(cx, m, n), q_orgqr(cx, m, k))) + 1) * sizeof(double);
}

int la_qr(bool cx, int64_t m, int64_t n, const double *a, double *q, double *r)
{
    la_init();
    int64_t k = min64(m, n), e = el(cx);
    double *blk, *tau, *work;
    int64_t lwork;
    ZC_TRY(factor(cx, m, n, a, q_orgqr(cx, m, k), &blk, &tau, &work, &lwork));
    if (r) extract_r(cx, m, n, blk, r);
    int rc = 0;
    if (q && m && k) {
        lapack_int info =
            cx ? LAPACKE_zungqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)k, (lapack_int)k, Z(blk),
                                     (lapack_int)m, Z(tau), Z(work), (lapack_int)lwork)
               : LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)k, (lapack_int)k, blk,
                                     (lapack_int)m, tau, work, (lapack_int)lwork);
        if ((rc = lapack_status(info, cx ? "forming Q (zungqr)" : "forming Q (dorgqr)")) == 0)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < k; j++)
                    for (int64_t p = 0; p < e; p++) q[e * (i * k + j) + p] = blk[e * (j * m + i) + p];
    }
    zc__free(blk);
    return rc;
}

/* ---- SVD: dgesdd (zgesdd) on the transpose (see the top) ---- */

/* complex: Aᵀ = U'·S·V'ᴴ gives A = conj(V')·S·U'ᵀ, so the same buffers hold our
 * U (V'ᴴ read row-major is conj(V')) and our Vᴴ (U' read row-major is U'ᵀ) */

static int64_t q_gesdd(bool cx, int64_t m, int64_t n, int vectors)
{
    int64_t k = min64(m, n);
    double w[2] = {0, 0}, d[2] = {0, 0};
    lapack_int iw = 0, ln = (lapack_int)max64(n, 1), lk = (lapack_int)max64(k, 1);
    char job = vectors ? 'S' : 'N';
    if (cx)
        LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, job, (lapack_int)n, (lapack_int)m, Z(d), ln, d, Z(d), ln, Z(d), lk, Z(w),
                            -1, d, &iw);
    else
        LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, (lapack_int)n, (lapack_int)m, d, ln, d, d, ln, d, lk, w, -1, &iw);
    return (int64_t)w[0] + 1;
}

/* zgesdd's real workspace (doubles) */
static int64_t rwork_gesdd(bool cx, int64_t m, int64_t n, int vectors)
{
    int64_t k = min64(m, n), mx = max64(m, n);
    if (!cx) return 0;
    return vectors ? k * max64(5 * k + 7, 2 * mx + 2 * k + 1) + 1 : 7 * k + 1;
}

size_t la_svd_bytes(bool cx, int64_t m, int64_t n, int vectors)
{
    int64_t k = min64(m, n);
    return (size_t)(el(cx) * (m * n + q_gesdd(cx, m, n, vectors)) + rwork_gesdd(cx, m, n, vectors) + 1) *
               sizeof(double) +
           (size_t)(8 * k + 1) * sizeof(lapack_int);
}

int la_svd(bool cx, int64_t m, int64_t n, const double *a, double *u, double *s, double *vt)
{
    la_init();
    ZC_TRY(fits(m, n));
    int64_t k = min64(m, n), e = el(cx);
    if (!k) return 0;
    int vectors = u && vt;
    int64_t lwork = q_gesdd(cx, m, n, vectors), lrw = rwork_gesdd(cx, m, n, vectors);
    double *copy = dalloc(e * (m * n + lwork) + lrw);
    lapack_int *iwork = zc__malloc_array((size_t)(8 * k + 1), sizeof(lapack_int));
    int rc = 0;
    if (!copy || !iwork) rc = ZC_ENOMEM;
    if (rc == 0) {
        double d[2] = {0, 0}, *work = copy + e * m * n;
        memcpy(copy, a, (size_t)(e * m * n) * sizeof(double));
        /* Aᵀ (n×m col-major) = U'·S·V'ᵀ: our U (m×k row-major) is V'ᵀ (k×m col-major, ld k),
         * our Vᵀ (k×n row-major) is U' (n×k col-major, ld n) */
        char job = vectors ? 'S' : 'N';
        lapack_int ln = (lapack_int)n, lk = (lapack_int)k, info =
            cx ? LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, job, ln, (lapack_int)m, Z(copy), ln, s, Z(vectors ? vt : d), ln,
                                     Z(vectors ? u : d), lk, Z(work), (lapack_int)lwork, work + e * lwork, iwork)
               : LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, ln, (lapack_int)m, copy, ln, s, vectors ? vt : d, ln,
                                     vectors ? u : d, lk, work, (lapack_int)lwork, iwork);
        if (info > 0) rc = zc__err(ZC_EINTERNAL, "SVD (%s) did not converge (%d)", cx ? "zgesdd" : "dgesdd", (int)info);
        else rc = lapack_status(info, cx ? "SVD (zgesdd)" : "SVD (dgesdd)");
    }
    zc__free(copy);
    zc__free(iwork);
    return rc;
}

/* ---- solve, cholesky, inv ---- */

size_t la_solve_bytes(bool cx, int64_t n, int64_t nrhs)
{
    return (size_t)(el(cx) * (n * n + n * nrhs) + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(lapack_int);
}

int la_solve(bool cx, int64_t n, int64_t nrhs, const double *a, const double *b, double *x)
{
    la_init();
    ZC_TRY(fits(n, n));
    ZC_TRY(fits(n, nrhs));
    int64_t e = el(cx);
    double *cm = dalloc(e * (n * n + n * nrhs));
    lapack_int *ipiv = zc__malloc_array((size_t)n + 1, sizeof(lapack_int));
    int rc = 0;
    if (!cm || !ipiv) rc = ZC_ENOMEM;
    if (rc == 0 && n) {
        double *bc = cm + e * n * n;
        lapack_int ln = (lapack_int)n, lr = (lapack_int)nrhs;
        memcpy(cm, a, (size_t)(e * n * n) * sizeof(double)); /* Aᵀ column-major: solved transposed ('T', not 'C') */
        to_cm(cx, n, nrhs, b, bc);
        lapack_int info = cx ? LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, ln, ln, Z(cm), ln, ipiv)
                             : LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, ln, ln, cm, ln, ipiv);
        if (info > 0) rc = zc__err(ZC_EINVAL, "solve: the matrix is singular (pivot %d is zero)", (int)info);
        else rc = lapack_status(info, cx ? "solve (zgetrf)" : "solve (dgetrf)");
        if (rc == 0 && nrhs) {
            info = cx ? LAPACKE_zgetrs_work(LAPACK_COL_MAJOR, 'T', ln, lr, Z(cm), ln, ipiv, Z(bc), ln)
                      : LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', ln, lr, cm, ln, ipiv, bc, ln);
            rc = lapack_status(info, cx ? "solve (zgetrs)" : "solve (dgetrs)");
        }
        if (rc == 0)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < nrhs; j++)
                    for (int64_t p = 0; p < e; p++) x[e * (i * nrhs + j) + p] = bc[e * (j * n + i) + p];
    }
    zc__free(cm);
    zc__free(ipiv);
    return rc;
}

size_t la_cholesky_bytes(int64_t n) { (void)n; return 0; }

int la_cholesky(bool cx, int64_t n, const double *a, double *l)
{
    la_init();
    ZC_TRY(fits(n, n));
    if (!n) return 0;
    /* l (row-major) = a; read column-major it is Aᵀ, whose upper triangle is A's lower:
     * dpotrf('U') gives U = Lᵀ there, which read row-major is L. Complex: Aᵀ = Uᴴ·U
     * gives A = Uᵀ·(Uᵀ)ᴴ, so L = Uᵀ again */
    int64_t e = el(cx);
    memcpy(l, a, (size_t)(e * n * n) * sizeof(double));
    lapack_int ln = (lapack_int)n, info = cx ? LAPACKE_zpotrf_work(LAPACK_COL_MAJOR, 'U', ln, Z(l), ln)
                                             : LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', ln, l, ln);
    if (info > 0)
        return zc__err(ZC_EINVAL, "cholesky: the matrix is not positive definite (leading minor %d)", (int)info);
    ZC_TRY(lapack_status(info, cx ? "cholesky (zpotrf)" : "cholesky (dpotrf)"));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++)
            for (int64_t p = 0; p < e; p++) l[e * (i * n + j) + p] = 0.0;
    return 0;
}

/* workspace of ?getri, in elements */
static int64_t q_getri(bool cx, int64_t n)
{
    double w[2] = {0, 0}, d[2] = {0, 0};
    lapack_int p = 0, ln = (lapack_int)n, lda = (lapack_int)max64(n, 1);
    if (cx) LAPACKE_zgetri_work(LAPACK_COL_MAJOR, ln, Z(d), lda, &p, Z(w), -1);
    else LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ln, d, lda, &p, w, -1);
    return (int64_t)w[0] + 1;
}

size_t la_inv_bytes(bool cx, int64_t n)
{
    return (size_t)(el(cx) * (q_getri(cx, n) + 1)) * sizeof(double) + (size_t)(n + 1) * sizeof(lapack_int);
}

int la_inv(bool cx, int64_t n, const double *a, double *x)
{
    la_init();
    ZC_TRY(fits(n, n));
    if (!n) return 0;
    int64_t lwork = q_getri(cx, n), e = el(cx);
    double *work = dalloc(e * lwork);
    lapack_int *ipiv = zc__malloc_array((size_t)n + 1, sizeof(lapack_int)), ln = (lapack_int)n;
    int rc = 0;
    if (!work || !ipiv) rc = ZC_ENOMEM;
    if (rc == 0) {
        /* Aᵀ column-major; inv(Aᵀ) = inv(A)ᵀ read row-major is inv(A) (complex too: no conjugate) */
        memcpy(x, a, (size_t)(e * n * n) * sizeof(double));
        lapack_int info = cx ? LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, ln, ln, Z(x), ln, ipiv)
                             : LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, ln, ln, x, ln, ipiv);
        if (info > 0) rc = zc__err(ZC_EINVAL, "inv: the matrix is singular (pivot %d is zero)", (int)info);
        else rc = lapack_status(info, cx ? "inv (zgetrf)" : "inv (dgetrf)");
        if (rc == 0) {
            info = cx ? LAPACKE_zgetri_work(LAPACK_COL_MAJOR, ln, Z(x), ln, ipiv, Z(work), (lapack_int)lwork)
                      : LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ln, x, ln, ipiv, work, (lapack_int)lwork);
            rc = lapack_status(info, cx ? "inv (zgetri)" : "inv (dgetri)");
        }
    }
    zc__free(work);
    zc__free(ipiv);
    return rc;
}

/* ---- determinant and symmetric eigendecomposition ---- */

size_t la_det_bytes(bool cx, int64_t n)
{
    return (size_t)(el(cx) * n * n + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(lapack_int);
}

int la_det(bool cx, int64_t n, const double *a, double *sign, double *logabs, double *det)
{
    la_init();
    ZC_TRY(fits(n, n));
    int64_t e = el(cx);
    /* sign and det as complex (re, im); a real one has im 0 */
    double complex sg = 1, d = 1;
    double la = 0;
    double *lu = dalloc(e * n * n);
    lapack_int *ipiv = zc__malloc_array((size_t)n + 1, sizeof(lapack_int));
    int rc = lu && ipiv ? 0 : ZC_ENOMEM;
    if (rc == 0 && n) {
        /* det(Aᵀ) = det(A): the row-major buffer read column-major is factored as is */
        memcpy(lu, a, (size_t)(e * n * n) * sizeof(double));
        lapack_int ln = (lapack_int)n,
                   info = cx ? LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, ln, ln, Z(lu), ln, ipiv)
                             : LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, ln, ln, lu, ln, ipiv);
        if (info < 0) rc = lapack_status(info, cx ? "det (zgetrf)" : "det (dgetrf)");
        /* info > 0: a zero pivot, U is still complete: the determinant is 0 */
        bool zero = false, nan = false;
        for (int64_t i = 0; rc == 0 && i < n; i++) {
            const double *p = lu + e * (i * n + i);
            double complex u = cx ? CMPLX(p[0], p[1]) : p[0];
            double au = cabs(u);
            if (ipiv[i] != i + 1) sg = -sg, d = -d;
            if (au > 0 && !isnan(au)) sg *= u / au;
            zero |= au == 0;
            nan |= isnan(au);
            la += log(au);
            d *= u;
        }
        if (nan) la = NAN, d = CMPLX(NAN, cx ? NAN : 0); /* the sign keeps what the finite pivots say, as NumPy's */
        else if (zero) sg = 0, la = -INFINITY, d = 0;
    }
    if (rc == 0) {
        double complex out[2] = {sg, d};
        double *dst[2] = {sign, det};
        for (int k = 0; k < 2; k++)
            if (dst[k]) {
                dst[k][0] = creal(out[k]);
                if (cx) dst[k][1] = cimag(out[k]);
            }
        if (logabs) *logabs = la;
    }
    zc__free(lu);
    zc__free(ipiv);
    return rc;
}

/* workspaces of dsyevd / zheevd: work (elements), rwork (doubles, complex only), iwork */
static int64_t q_syevd(bool cx, int64_t n, int vectors, int64_t *lrwork, int64_t *liwork)
{
    double w[2] = {0, 0}, d[2] = {0, 0}, rw = 0;
    lapack_int iw = 0, ln = (lapack_int)n, lda = (lapack_int)max64(n, 1);
    char job = vectors ? 'V' : 'N';
    if (cx) LAPACKE_zheevd_work(LAPACK_COL_MAJOR, job, 'U', ln, Z(d), lda, d, Z(w), -1, &rw, -1, &iw, -1);
    else LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, job, 'U', ln, d, lda, d, w, -1, &iw, -1);
    *lrwork = cx ? (int64_t)rw + 1 : 0;
    *liwork = (int64_t)iw + 1;
    return (int64_t)w[0] + 1;
}

size_t la_eigh_bytes(bool cx, int64_t n, int vectors)
{
    int64_t lr, li, lw = q_syevd(cx, n, vectors, &lr, &li);
    return (size_t)(el(cx) * (n * n + lw) + n + lr + 1) * sizeof(double) + (size_t)li * sizeof(lapack_int);
}

int la_eigh(bool cx, int64_t n, const double *a, double *w, double *v)
{
    la_init();
    ZC_TRY(fits(n, n));
    if (!n) return 0;
    int64_t e = el(cx), lrwork, liwork, lwork = q_syevd(cx, n, v != NULL, &lrwork, &liwork);
    double *c = dalloc(e * n * n), *ev = dalloc(n), *work = dalloc(e * lwork), *rwork = dalloc(lrwork);
    lapack_int *iwork = zc__malloc_array((size_t)liwork, sizeof(lapack_int)), ln = (lapack_int)n;
    int rc = c && ev && work && rwork && iwork ? 0 : ZC_ENOMEM;
    if (rc == 0) {
        /* Aᵀ column-major: its upper triangle ('U') is A's lower, the one NumPy's eigh
         * reads. For a Hermitian A that matrix is conj(A): the same eigenvalues, the
         * conjugate eigenvectors (conjugated back below). */
        memcpy(c, a, (size_t)(e * n * n) * sizeof(double));
        char job = v ? 'V' : 'N';
        lapack_int info = cx ? LAPACKE_zheevd_work(LAPACK_COL_MAJOR, job, 'U', ln, Z(c), ln, ev, Z(work),
                                                   (lapack_int)lwork, rwork, (lapack_int)lrwork, iwork, (lapack_int)liwork)
                             : LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, job, 'U', ln, c, ln, ev, work, (lapack_int)lwork,
                                                   iwork, (lapack_int)liwork);
        if (info > 0) rc = zc__err(ZC_EINVAL, "eigh: the eigenvalues did not converge (%d)", (int)info);
        else rc = lapack_status(info, cx ? "eigh (zheevd)" : "eigh (dsyevd)");
    }
    if (rc == 0 && w) memcpy(w, ev, (size_t)n * sizeof(double));
    if (rc == 0 && v) /* eigenvectors are c's columns (column-major): v[i][j] = c[j * n + i] */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                v[e * (i * n + j)] = c[e * (j * n + i)];
                if (cx) v[e * (i * n + j) + 1] = -c[e * (j * n + i) + 1];
            }
    zc__free(c);
    zc__free(ev);
    zc__free(work);
    zc__free(rwork);
    zc__free(iwork);
    return rc;
}

/* ---- least squares ---- */

static void q_gelsd(int64_t m, int64_t n, int64_t nrhs, int64_t *lwork, int64_t *liwork)
{
    double w = 0, d = 0;
    lapack_int iw = 0, rank = 0;
    int64_t ldb = max64(max64(m, n), 1);
    LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)nrhs, &d, (lapack_int)max64(m, 1),
                        &d, (lapack_int)ldb, &d, -1.0, &rank, &w, -1, &iw);
    *lwork = (int64_t)w + 1;
    *liwork = (int64_t)iw + 1;
}

size_t la_lstsq_bytes(int64_t m, int64_t n, int64_t nrhs)
{
    int64_t lw, liw, ldb = max64(m, n);
    q_gelsd(m, n, nrhs, &lw, &liw);
    return (size_t)(m * n + ldb * nrhs + min64(m, n) + lw + m * nrhs + n * nrhs + 1) * sizeof(double) +
           (size_t)liw * sizeof(lapack_int);
}

int la_lstsq(int64_t m, int64_t n, int64_t nrhs, const double *a, const double *b, double *x, double *res,
             int64_t *rank, double *s)
{
    la_init();
    int64_t ldb = max64(max64(m, n), 1), k = min64(m, n);
    ZC_TRY(fits(m, n));
    ZC_TRY(fits(ldb, nrhs));
    int64_t lw, liw;
    q_gelsd(m, n, nrhs, &lw, &liw);
    double *blk = dalloc(m * n + ldb * nrhs + k + lw + m * nrhs + n * nrhs);
    lapack_int *iwork = zc__malloc_array((size_t)liw, sizeof(lapack_int));
    int rc = 0;
    if (!blk || !iwork) rc = ZC_ENOMEM;
    if (rc == 0) {
        double *ac = blk, *bc = ac + m * n, *sv = bc + ldb * nrhs, *work = sv + k, *r = work + lw, *xt = r + m * nrhs;
        to_cm(false, m, n, a, ac);
        memset(bc, 0, (size_t)(ldb * nrhs) * sizeof(double));
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nrhs; j++) bc[j * ldb + i] = b[i * nrhs + j];
        lapack_int rk = 0;
        if (m && n && nrhs) {
            lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)nrhs, ac,
                                                  (lapack_int)m, bc, (lapack_int)ldb, sv, DBL_EPSILON * (double)max64(m, n),
                                                  &rk, work, (lapack_int)lw, iwork);
            if (info > 0) rc = zc__err(ZC_EINTERNAL, "lstsq: SVD (dgelsd) did not converge (%d)", (int)info);
            else rc = lapack_status(info, "lstsq (dgelsd)");
        } else if (m && n) {
            rc = la_svd(false, m, n, a, NULL, sv, NULL); /* no right-hand side: the values still */
            for (int64_t i = 0; i < k; i++) rk += sv[i] > DBL_EPSILON * (double)max64(m, n) * sv[0];
        } else {
            for (int64_t i = 0; i < ldb * nrhs; i++) bc[i] = 0;
        }
        if (rc == 0) {
            if (x)
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < nrhs; j++) x[i * nrhs + j] = bc[j * ldb + i];
            if (s) memcpy(s, sv, (size_t)k * sizeof(double));
            if (rank) *rank = rk;
            if (res) {
                /* r = b − a·x with x from bc */
                for (int64_t i = 0; i < m * nrhs; i++) r[i] = b[i];
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < nrhs; j++) xt[i * nrhs + j] = bc[j * ldb + i];
                if (m && n && nrhs)
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)nrhs, (int)n, -1.0, a, (int)n, xt,
                                (int)nrhs, 1.0, r, (int)nrhs);
                for (int64_t j = 0; j < nrhs; j++) {
                    double t = 0;
                    for (int64_t i = 0; i < m; i++) t += r[i * nrhs + j] * r[i * nrhs + j];
                    res[j] = t;
                }
            }
        }
    }
    zc__free(blk);
    zc__free(iwork);
    return rc;
}

void la_gemm_acc(bool cx, int ta, int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c)
{
    la_init();
    if (!m || !n || !k) return;
    if (cx) {
        static const double one[2] = {1, 0};
        cblas_zgemm(CblasRowMajor, ta ? CblasConjTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, one, a,
                    (int)(ta ? m : k), b, (int)n, one, c, (int)n);
        return;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a,
                (int)(ta ? m : k), b, (int)n, 1.0, c, (int)n);
}

/* ---- c += a·b for a tall streamed a and a narrow b (la_gemm_rows) ----
 *
 * OpenBLAS's small-matrix kernels multiply a sub-band of a (50 × 1000) by a
 * 1000 × 20 b at ~54 GFLOP/s in cache but ~36 GFLOP/s when a streams from
 * memory (a pass of a randomized SVD over an 800 MB matrix). This kernel keeps
 * 8 rows × 24 columns of c in registers (24 zmm accumulators), reads b's row j
 * once per 8 rows of a and each element of a once: 1.26-1.35x faster over a
 * streamed a, the same in cache (measured single threaded, 100,000 × 1,000 ·
 * 1,000 × 20). Each c element is one dot product summed in order of k, as
 * accurate as BLAS's. x86-64 with AVX-512F only (checked at run time);
 * elsewhere, or for b wider than 24 columns, la_gemm_acc. */
#define ROWS_W 24 /* columns of c in registers */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(ZC_NO_AVX512)
#include <immintrin.h>
#define ROWS_KERNEL 1
#ifdef __clang__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 8")
#endif

#define ROWS_BODY(R)                                                                                              \
    {                                                                                                             \
        __m512d acc[R][3];                                                                                        \
        UNROLL for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_pd(); \
        for (int64_t j = 0; j < k; j++) {                                                                         \
            const double *bj = b + j * n;                                                                         \
            __m512d x0 = _mm512_maskz_loadu_pd(m0, bj), x1 = _mm512_maskz_loadu_pd(m1, bj + 8);                   \
            __m512d x2 = _mm512_maskz_loadu_pd(m2, bj + 16);                                                      \
            UNROLL for (int r = 0; r < R; r++) {                                                 \
                __m512d v = _mm512_set1_pd(ai[r * k + j]);                                                        \
                acc[r][0] = _mm512_fmadd_pd(v, x0, acc[r][0]);                                                    \
                acc[r][1] = _mm512_fmadd_pd(v, x1, acc[r][1]);                                                    \
                acc[r][2] = _mm512_fmadd_pd(v, x2, acc[r][2]);                                                    \
            }                                                                                                     \
        }                                                                                                         \
        UNROLL for (int r = 0; r < R; r++) {                                                     \
            double *cr = ci + r * n;                                                                              \
            _mm512_mask_storeu_pd(cr, m0, _mm512_add_pd(_mm512_maskz_loadu_pd(m0, cr), acc[r][0]));              \
            _mm512_mask_storeu_pd(cr + 8, m1, _mm512_add_pd(_mm512_maskz_loadu_pd(m1, cr + 8), acc[r][1]));      \
            _mm512_mask_storeu_pd(cr + 16, m2, _mm512_add_pd(_mm512_maskz_loadu_pd(m2, cr + 16), acc[r][2]));    \
        }                                                                                                         \
    }

static __mmask8 lanes(int64_t w) { return w >= 8 ? 0xff : w <= 0 ? 0 : (__mmask8)((1u << w) - 1); }

__attribute__((target("avx512f,fma"))) static void rows_avx512(int64_t m, int64_t n, int64_t k, const double *a,
                                                                const double *b, double *c)
{
    __mmask8 m0 = lanes(n), m1 = lanes(n - 8), m2 = lanes(n - 16);
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
        const double *ai = a + i * k;
        double *ci = c + i * n;
        ROWS_BODY(8)
    }
    for (; i < m; i++) {
        const double *ai = a + i * k;
        double *ci = c + i * n;
        ROWS_BODY(1)
    }
}

static int has_avx512;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static void cpu_check(void)
{
    __builtin_cpu_init();
    has_avx512 = __builtin_cpu_supports("avx512f") && !getenv("ZC_NO_AVX512");
}
#endif

bool la_gemm_rows_fast(int64_t n)
{
#ifdef ROWS_KERNEL
    pthread_once(&cpu_once, cpu_check);
    return has_avx512 && n >= 1 && n <= ROWS_W;
#else
    (void)n;
    return false;
#endif
}

void la_gemm_rows(int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c)
{
    if (!m || !n || !k) return;
#ifdef ROWS_KERNEL
    if (la_gemm_rows_fast(n)) {
        rows_avx512(m, n, k, a, b, c);
        return;
    }
#endif
    la_gemm_acc(false, 0, m, n, k, a, b, c);
}
