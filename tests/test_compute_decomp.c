/* tests/test_compute_decomp.c — QR (TSQR, recursion, short-fat), SVD,
 * randomized SVD, solve/cholesky/inv/lstsq/det/slogdet/eigh against LAPACK on
 * the whole matrix and against their defining identities (complex128 QR, SVD,
 * det, slogdet, cholesky too); bad input; memory projections vs
 * measured; plans sent to workers. NumPy comparisons live in tests/cli/linalg.sh. */
#include <complex.h>
#include <jansson.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "harness.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53 - 0.5;
}

static double *rand_matrix(int64_t m, int64_t n)
{
    double *a = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m * n; i++) a[i] = urand();
    return a;
}

static zc_array *mat(const double *a, int64_t m, int64_t n, int64_t c0, int64_t c1)
{
    int64_t shape[2] = {m, n}, chunks[2] = {c0, c1};
    zc_array *x = NULL;
    CHECK_OK(zc_asarray(a, ZC_FLOAT64, 2, shape, chunks, &x));
    return x;
}

/* values of a (float64) and its shape */
static double *get(zc_array *a, int64_t *r, int64_t *c)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS];
    zc_array_info(a, &nd, shape, NULL, NULL);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    if (r) *r = nd > 0 ? shape[0] : 1;
    if (c) *c = nd > 1 ? shape[1] : 1;
    double *v = calloc(n + 1, sizeof(double));
    zc_spec s = spec_mem(1024);
    CHECK_OK(zc_compute_buffer(&s, a, v, n * sizeof(double), NULL));
    return v;
}

static double max_abs(const double *a, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

/* max |A·B − C| for A m×k, B k×n (tb: B given transposed n×k) */
static double prod_err(const double *a, const double *b, int tb, const double *c, int64_t m, int64_t k, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double t = 0;
            for (int64_t l = 0; l < k; l++) t += a[i * k + l] * (tb ? b[j * k + l] : b[l * n + j]);
            e = fmax(e, fabs(t - (c ? c[i * n + j] : (i == j))));
        }
    return e;
}

/* max |QᵀQ − I| for Q m×k */
static double orth_err(const double *q, int64_t m, int64_t k)
{
    double e = 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            double t = 0;
            for (int64_t l = 0; l < m; l++) t += q[l * k + i] * q[l * k + j];
            e = fmax(e, fabs(t - (i == j)));
        }
    return e;
}

/* singular values by LAPACK on the whole matrix */
static double *ref_svals(const double *a, int64_t m, int64_t n)
{
    int64_t k = m < n ? m : n;
    double *c = malloc(sizeof(double) * (size_t)(m * n)), *s = malloc(sizeof(double) * (size_t)k);
    memcpy(c, a, sizeof(double) * (size_t)(m * n));
    double du[1], dv[1];
    CHECK(LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', (int)m, (int)n, c, (int)n, s, du, (int)m, dv, (int)n) == 0);
    free(c);
    return s;
}

static int count_ops(zc_array *a, const char *kind)
{
    zc_spec s = spec_mem(1024);
    char *json = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &a, NULL, &json));
    int n = 0;
    char needle[64];
    snprintf(needle, sizeof needle, "\"kind\": \"%s\"", kind);
    for (const char *p = json; p && (p = strstr(p, needle)); p++) n++;
    zc_free(json);
    return n;
}

static void check_qr(int64_t m, int64_t n, int64_t c0, int64_t c1)
{
    double *a = rand_matrix(m, n);
    zc_array *x = mat(a, m, n, c0, c1), *q = NULL, *r = NULL;
    CHECK_OK(zc_qr(x, &q, &r));
    int64_t qm, qk, rk, rn, k = m < n ? m : n;
    double *qv = get(q, &qm, &qk), *rv = get(r, &rk, &rn);
    CHECK(qm == m && qk == k && rk == k && rn == n);
    double e1 = prod_err(qv, rv, 0, a, m, k, n), e2 = orth_err(qv, m, k), low = 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < i && j < n; j++) low = fmax(low, fabs(rv[i * n + j]));
    if (e1 > 1e-10 || e2 > 1e-10 || low != 0)
        fprintf(stderr, "qr %lldx%lld chunks %lldx%lld: |QR-A| %.2e |QtQ-I| %.2e below diag %.2e\n", (long long)m,
                (long long)n, (long long)c0, (long long)c1, e1, e2, low);
    CHECK(e1 <= 1e-10);
    CHECK(e2 <= 1e-10);
    CHECK(low == 0);
    free(qv);
    free(rv);
    free(a);
    zc_array_release(x);
    zc_array_release(q);
    zc_array_release(r);
}

TEST(qr_tall_chunkings)
{
    check_qr(200, 7, 13, 7);
    check_qr(200, 7, 50, 3);   /* bands cut across column chunks */
    check_qr(101, 5, 3, 2);    /* row chunks shorter than n: bands of 6 rows */
    check_qr(64, 64, 64, 64);  /* square, one band */
    check_qr(64, 64, 16, 64);  /* square, bands of n rows */
    check_qr(95, 10, 30, 10);  /* a last band shorter than n */
    check_qr(1, 1, 1, 1);
}

TEST(qr_recursion)
{
    /* 100 bands of 40 rows: the stacked R (2000 x 20) is taller than a band (40 rows), so
     * it is factored by TSQR again, down to 40 rows: several levels */
    int64_t m = 4000, n = 20;
    double *a = rand_matrix(m, n);
    zc_array *x = mat(a, m, n, 40, 20), *q = NULL, *r = NULL;
    CHECK_OK(zc_qr(x, &q, &r));
    CHECK(count_ops(r, "tsqr_r") >= 5);
    CHECK(count_ops(q, "tsqr_q") >= 5);
    double *qv = get(q, NULL, NULL), *rv = get(r, NULL, NULL);
    CHECK(prod_err(qv, rv, 0, a, m, n, n) <= 1e-10);
    CHECK(orth_err(qv, m, n) <= 1e-10);
    /* R agrees with LAPACK's up to the signs of its rows */
    double *c = malloc(sizeof(double) * (size_t)(m * n)), tau[20];
    memcpy(c, a, sizeof(double) * (size_t)(m * n));
    CHECK(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)m, (int)n, c, (int)n, tau) == 0);
    double e = 0;
    for (int i = 0; i < n; i++) {
        double sg = (c[i * n + i] < 0) == (rv[i * n + i] < 0) ? 1 : -1;
        for (int j = i; j < n; j++) e = fmax(e, fabs(c[i * n + j] - sg * rv[i * n + j]));
    }
    CHECK(e <= 1e-10);
    free(c);
    free(qv);
    free(rv);
    free(a);
    zc_array_release(x);
    zc_array_release(q);
    zc_array_release(r);
}

TEST(qr_short_fat)
{
    check_qr(7, 200, 7, 30);
    check_qr(5, 9, 2, 4);
}

static void check_svd(int64_t m, int64_t n, int64_t c0, int64_t c1)
{
    double *a = rand_matrix(m, n);
    zc_array *x = mat(a, m, n, c0, c1), *u = NULL, *s = NULL, *vt = NULL, *sv = NULL;
    CHECK_OK(zc_svd(x, &u, &s, &vt));
    CHECK_OK(zc_svdvals(x, &sv));
    int64_t k = m < n ? m : n, um, uk, vk, vn;
    double *uv = get(u, &um, &uk), *svv = get(s, NULL, NULL), *vv = get(vt, &vk, &vn), *s2 = get(sv, NULL, NULL);
    CHECK(um == m && uk == k && vk == k && vn == n);
    double *ref = ref_svals(a, m, n), e = 0, e2 = 0;
    for (int64_t i = 0; i < k; i++) {
        e = fmax(e, fabs(svv[i] - ref[i]) / ref[0]);
        e2 = fmax(e2, fabs(s2[i] - ref[i]) / ref[0]);
    }
    CHECK(e <= 1e-10);
    CHECK(e2 <= 1e-10);
    /* U·diag(s)·Vt = A */
    double *us = malloc(sizeof(double) * (size_t)(m * k));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) us[i * k + j] = uv[i * k + j] * svv[j];
    double er = prod_err(us, vv, 0, a, m, k, n);
    if (er > 1e-10 || e > 1e-10) fprintf(stderr, "svd %lldx%lld: |s-ref| %.2e |USV-A| %.2e\n", (long long)m, (long long)n, e, er);
    CHECK(er <= 1e-10);
    CHECK(orth_err(uv, m, k) <= 1e-10);
    /* rows of Vt orthonormal */
    CHECK(prod_err(vv, vv, 1, NULL, k, n, k) <= 1e-10);
    free(us);
    free(uv);
    free(svv);
    free(vv);
    free(s2);
    free(ref);
    free(a);
    zc_array_release(x);
    zc_array_release(u);
    zc_array_release(s);
    zc_array_release(vt);
    zc_array_release(sv);
}

TEST(svd_tall_short_fat)
{
    check_svd(300, 12, 25, 12);
    check_svd(300, 12, 7, 5);
    check_svd(2000, 10, 20, 10); /* recursion */
    check_svd(12, 300, 12, 25);  /* by transposition */
    check_svd(40, 40, 10, 40);
}

/* A = U0 diag(sigma) V0ᵀ with sigma_i = 0.7^i */
static double *known_spectrum(int64_t m, int64_t n, double *sigma)
{
    int64_t k = m < n ? m : n;
    double *u0 = rand_matrix(m, k), *v0 = rand_matrix(n, k), tau[512];
    CHECK(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)m, (int)k, u0, (int)k, tau) == 0);
    CHECK(LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (int)m, (int)k, (int)k, u0, (int)k, tau) == 0);
    CHECK(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)n, (int)k, v0, (int)k, tau) == 0);
    CHECK(LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (int)n, (int)k, (int)k, v0, (int)k, tau) == 0);
    double *a = calloc((size_t)(m * n), sizeof(double));
    for (int64_t i = 0; i < k; i++) sigma[i] = pow(0.7, (double)i);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double t = 0;
            for (int64_t l = 0; l < k; l++) t += u0[i * k + l] * sigma[l] * v0[j * k + l];
            a[i * n + j] = t;
        }
    free(u0);
    free(v0);
    return a;
}

static void rsvd_case(int64_t m, int64_t n, int64_t c0, int64_t c1, int power)
{
    int64_t k = 10;
    double sigma[512];
    double *a = known_spectrum(m, n, sigma);
    zc_array *x = mat(a, m, n, c0, c1), *u = NULL, *s = NULL, *vt = NULL;
    CHECK_OK(zc_svd_compressed(x, k, 10, power, 42, &u, &s, &vt));
    int64_t um, uk, vk, vn;
    double *uv = get(u, &um, &uk), *sv = get(s, NULL, NULL), *vv = get(vt, &vk, &vn);
    CHECK(um == m && uk == k && vk == k && vn == n);
    CHECK(orth_err(uv, m, k) <= 1e-10);
    CHECK(prod_err(vv, vv, 1, NULL, k, n, k) <= 1e-10);
    /* passes over A: Aᵀ(A·X) fused in one pass when A's chunks hold whole rows */
    int fused = c1 == n && power > 0;
    CHECK(count_ops(s, "ata_x") == (fused ? power : 0));
    CHECK(count_ops(s, "matmul_t") == (fused ? 1 : power + 1));
    CHECK(count_ops(s, "matmul_small") == (fused ? 1 : power + 1));
    /* Z = Aᵀ(A·X) and Bᵀ (n × l in one block when A's chunks hold whole rows) are factored by one
     * QR / SVD task each: Y's orthonormalization is the only TSQR */
    if (fused) {
        /* (the TSQR levels of an m × 20 Y with A's row chunks, from the R of such a matrix) */
        double *yv = rand_matrix(m, 20);
        zc_array *y = mat(yv, m, 20, c0, 20), *yr = NULL;
        CHECK_OK(zc_qr(y, NULL, &yr));
        CHECK(count_ops(s, "tsqr_r") == count_ops(yr, "tsqr_r"));
        CHECK(count_ops(s, "qr_q") == power + 1);
        zc_array_release(yr);
        zc_array_release(y);
        free(yv);
    }
    /* ‖A − U S Vt‖₂ within a small factor of sigma_{k+1} */
    double *res = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double t = 0;
            for (int64_t l = 0; l < k; l++) t += uv[i * k + l] * sv[l] * vv[l * n + j];
            res[i * n + j] = a[i * n + j] - t;
        }
    double *rs = ref_svals(res, m, n);
    if (rs[0] > 3 * sigma[k]) fprintf(stderr, "rsvd %lldx%lld q=%d: |A-USV|_2 %.3e sigma_k+1 %.3e\n", (long long)m, (long long)n, power, rs[0], sigma[k]);
    CHECK(rs[0] <= 3 * sigma[k]);
    for (int64_t i = 0; i < k; i++) CHECK(fabs(sv[i] - sigma[i]) <= (power ? 1e-3 : 0.1) * sigma[i] + 2 * sigma[k]);
    /* the same seed gives identical results */
    zc_array *s2 = NULL;
    CHECK_OK(zc_svd_compressed(x, k, 10, power, 42, NULL, &s2, NULL));
    double *sv2 = get(s2, NULL, NULL);
    CHECK(memcmp(sv, sv2, sizeof(double) * (size_t)k) == 0);
    free(sv2);
    zc_array_release(s2);
    free(rs);
    free(res);
    free(uv);
    free(sv);
    free(vv);
    free(a);
    zc_array_release(x);
    zc_array_release(u);
    zc_array_release(s);
    zc_array_release(vt);
}

TEST(svd_compressed_known_spectrum)
{
    rsvd_case(300, 200, 64, 50, 0);
    rsvd_case(300, 200, 64, 50, 2);  /* column chunks: 2q + 2 passes */
    rsvd_case(300, 200, 64, 200, 2); /* whole rows: q + 2 passes */
    rsvd_case(300, 200, 64, 200, 0);
    rsvd_case(150, 260, 40, 100, 1); /* wider than tall */
}

TEST(svd_compressed_chunk_independent)
{
    /* Ω does not depend on the chunks: other chunks give the same values up to rounding */
    double sigma[512];
    double *a = known_spectrum(200, 120, sigma);
    zc_array *x1 = mat(a, 200, 120, 50, 120), *x2 = mat(a, 200, 120, 33, 17), *s1 = NULL, *s2 = NULL;
    CHECK_OK(zc_svd_compressed(x1, 5, 5, 1, 7, NULL, &s1, NULL));
    CHECK_OK(zc_svd_compressed(x2, 5, 5, 1, 7, NULL, &s2, NULL));
    double *v1 = get(s1, NULL, NULL), *v2 = get(s2, NULL, NULL);
    for (int i = 0; i < 5; i++) CHECK(fabs(v1[i] - v2[i]) <= 1e-12);
    free(v1);
    free(v2);
    free(a);
    zc_array_release(x1);
    zc_array_release(x2);
    zc_array_release(s1);
    zc_array_release(s2);
}

TEST(solve_inv_cholesky_lstsq)
{
    int64_t n = 30;
    double *a = rand_matrix(n, n), *b = rand_matrix(n, 3), *spd = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++) a[i * n + i] += 4; /* well conditioned */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double t = 0;
            for (int64_t l = 0; l < n; l++) t += a[i * n + l] * a[j * n + l];
            spd[i * n + j] = t;
        }
    zc_array *x = mat(a, n, n, 7, 9), *y = mat(b, n, 3, 4, 3), *p = mat(spd, n, n, 30, 30), *sol = NULL, *inv = NULL,
             *l = NULL;
    CHECK_OK(zc_solve(x, y, &sol));
    CHECK_OK(zc_inv(x, &inv));
    CHECK_OK(zc_cholesky(p, &l));
    double *sv = get(sol, NULL, NULL), *iv = get(inv, NULL, NULL), *lv = get(l, NULL, NULL);
    CHECK(prod_err(a, sv, 0, b, n, n, 3) <= 1e-10);
    CHECK(prod_err(a, iv, 0, NULL, n, n, n) <= 1e-10);
    CHECK(prod_err(lv, lv, 1, spd, n, n, n) <= 1e-10 * max_abs(spd, n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) CHECK(lv[i * n + j] == 0);
    /* 1-D right-hand side */
    int64_t s1[1] = {n};
    zc_array *b1 = NULL, *x1 = NULL;
    CHECK_OK(zc_asarray(b, ZC_FLOAT64, 1, s1, NULL, &b1));
    CHECK_OK(zc_solve(x, b1, &x1));
    int nd;
    zc_array_info(x1, &nd, NULL, NULL, NULL);
    CHECK(nd == 1);
    double *x1v = get(x1, NULL, NULL), e = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = 0;
        for (int64_t j = 0; j < n; j++) t += a[i * n + j] * x1v[j];
        e = fmax(e, fabs(t - b[i]));
    }
    CHECK(e <= 1e-10);
    /* lstsq, overdetermined full rank: the normal equations hold, residuals = |b - a x|^2, rank n */
    int64_t m = 50, k = 6;
    double *am = rand_matrix(m, k), *bm = rand_matrix(m, 2);
    zc_array *A = mat(am, m, k, 16, 6), *B = mat(bm, m, 2, 50, 2), *lx = NULL, *lr = NULL, *lk = NULL, *ls = NULL;
    CHECK_OK(zc_lstsq(A, B, &lx, &lr, &lk, &ls));
    double *lxv = get(lx, NULL, NULL), *lrv = get(lr, NULL, NULL), *lsv = get(ls, NULL, NULL);
    int64_t rank = -1;
    zc_spec sp = spec_mem(64);
    CHECK_OK(zc_compute_buffer(&sp, lk, &rank, sizeof rank, NULL));
    CHECK(rank == k);
    double *ref = ref_svals(am, m, k);
    for (int64_t i = 0; i < k; i++) CHECK(fabs(lsv[i] - ref[i]) <= 1e-12 * ref[0]);
    for (int c = 0; c < 2; c++) {
        double r2 = 0, g[6] = {0};
        for (int64_t i = 0; i < m; i++) {
            double t = bm[i * 2 + c];
            for (int64_t j = 0; j < k; j++) t -= am[i * k + j] * lxv[j * 2 + c];
            r2 += t * t;
            for (int64_t j = 0; j < k; j++) g[j] += am[i * k + j] * t; /* Aᵀ r = 0 */
        }
        CHECK(fabs(r2 - lrv[c]) <= 1e-12 * r2);
        CHECK(max_abs(g, k) <= 1e-12);
    }
    free(ref);
    free(lxv);
    free(lrv);
    free(lsv);
    free(am);
    free(bm);
    zc_array_release(A);
    zc_array_release(B);
    zc_array_release(lx);
    zc_array_release(lr);
    zc_array_release(lk);
    zc_array_release(ls);
    free(x1v);
    zc_array_release(b1);
    zc_array_release(x1);
    free(sv);
    free(iv);
    free(lv);
    free(a);
    free(b);
    free(spd);
    zc_array_release(x);
    zc_array_release(y);
    zc_array_release(p);
    zc_array_release(sol);
    zc_array_release(inv);
    zc_array_release(l);
}

/* one float64 value of a 0-d array */
static double scalar(zc_array *a)
{
    double v = 0;
    zc_spec sp = spec_mem(64);
    CHECK_OK(zc_compute_buffer(&sp, a, &v, sizeof v, NULL));
    return v;
}

TEST(det_slogdet_eigh)
{
    /* det of a triangular matrix is its diagonal's product; a row swap negates it */
    int64_t n = 7;
    double *t = rand_matrix(n, n), prod = 1;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = i + 1; j < n; j++) t[i * n + j] = 0;
        t[i * n + i] = (i % 3 == 1 ? -1.5 : 2.0) + 0.1 * (double)i;
        prod *= t[i * n + i];
    }
    zc_array *x = mat(t, n, n, 3, 4), *d = NULL, *sg = NULL, *ld = NULL;
    CHECK_OK(zc_det(x, &d));
    CHECK_OK(zc_slogdet(x, &sg, &ld));
    CHECK(fabs(scalar(d) - prod) <= 1e-12 * fabs(prod));
    CHECK(scalar(sg) == (prod < 0 ? -1 : 1));
    CHECK(fabs(scalar(ld) - log(fabs(prod))) <= 1e-12);
    zc_array_release(x), zc_array_release(d), zc_array_release(sg), zc_array_release(ld);
    for (int64_t j = 0; j < n; j++) { /* swap rows 0 and 5 */
        double v = t[j];
        t[j] = t[5 * n + j], t[5 * n + j] = v;
    }
    x = mat(t, n, n, 7, 7);
    CHECK_OK(zc_det(x, &d));
    CHECK(fabs(scalar(d) + prod) <= 1e-12 * fabs(prod));
    zc_array_release(x), zc_array_release(d);
    /* singular: 0 and (0, -inf), no error; only the sign asked for */
    double sing[4] = {1, 2, 2, 4};
    x = mat(sing, 2, 2, 1, 2);
    CHECK_OK(zc_det(x, &d));
    CHECK_OK(zc_slogdet(x, &sg, NULL));
    CHECK_OK(zc_slogdet(x, NULL, &ld));
    CHECK(scalar(d) == 0 && scalar(sg) == 0 && isinf(scalar(ld)) && scalar(ld) < 0);
    zc_array_release(x), zc_array_release(d), zc_array_release(sg), zc_array_release(ld);
    /* eigh of a symmetric matrix whose upper triangle is garbage (only the lower is read):
     * ascending w, A v = v diag(w), VᵀV = I; eigvals alone agree */
    double *a = rand_matrix(n, n), *full = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) full[i * n + j] = full[j * n + i] = a[i * n + j];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 1e3;
    zc_array *w = NULL, *v = NULL, *w2 = NULL;
    x = mat(a, n, n, 2, 5);
    CHECK_OK(zc_eigh(x, &w, &v));
    CHECK_OK(zc_eigh(x, &w2, NULL));
    double *wv = get(w, NULL, NULL), *vv = get(v, NULL, NULL), *w2v = get(w2, NULL, NULL), e = 0;
    for (int64_t i = 0; i < n; i++) {
        CHECK(i == 0 || wv[i] >= wv[i - 1]);
        CHECK(fabs(wv[i] - w2v[i]) <= 1e-12);
        for (int64_t k = 0; k < n; k++) { /* (A v)[i][k] - v[i][k] w[k] */
            double s = 0;
            for (int64_t l = 0; l < n; l++) s += full[i * n + l] * vv[l * n + k];
            e = fmax(e, fabs(s - vv[i * n + k] * wv[k]));
        }
    }
    CHECK(e <= 1e-12 * n);
    CHECK(orth_err(vv, n, n) <= 1e-12 * n);
    /* on a stored matrix, the nodes go through a saved plan (their layout checked
     * when read back), run operation by operation as `zcube worker` does */
    char dir[] = "/tmp/zc_eigh_XXXXXX", plan[300], cmd[400], out[300], work[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(work, sizeof work, "%s/work", dir); /* a saved plan's work dir is the caller's to remove */
    zc_store *os = NULL;
    CHECK_OK(zc_store_open(out, ZC_STORE_CREATE, &os));
    zc_target ta = {os, "a", NULL, 0};
    zc_spec sp = spec_mem(64);
    CHECK_OK(zc_compute(&sp, 1, &x, &ta, NULL));
    zc_array *xs = NULL, *ws = NULL, *vs = NULL;
    CHECK_OK(zc_from_zarr(os, "a", &xs));
    CHECK_OK(zc_eigh(xs, &ws, &vs));
    zc_array *outs[2] = {ws, vs};
    zc_target tg[2] = {{os, "w", NULL, 0}, {os, "v", NULL, 0}};
    sp.work_dir = work;
    CHECK_OK(zc_plan_save(&sp, 2, outs, tg, plan));
    json_error_t je;
    json_t *doc = json_load_file(plan, 0, &je);
    int nst = (int)json_array_size(json_object_get(doc, "stages"));
    json_decref(doc);
    for (int op = 0; op < nst; op++) CHECK_OK(zc_plan_run(plan, op, 0, -1, 1));
    zc_array *wz = NULL;
    CHECK_OK(zc_from_zarr(os, "w", &wz));
    double *wzv = get(wz, NULL, NULL);
    CHECK(memcmp(wzv, wv, sizeof(double) * (size_t)n) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    /* not square, not float */
    zc_array *rect = mat(a, 1, n, 1, n), *o = NULL;
    CHECK_ERR(zc_det(rect, &o), ZC_EINVAL, "square");
    CHECK_ERR(zc_eigh(rect, &o, NULL), ZC_EINVAL, "square");
    CHECK_ERR(zc_slogdet(x, NULL, NULL), ZC_EINVAL, "no output");
    free(wzv), free(wv), free(vv), free(w2v), free(a), free(full), free(t);
    zc_array_release(wz), zc_array_release(rect), zc_array_release(x);
    zc_array_release(w), zc_array_release(v), zc_array_release(w2);
    zc_array_release(xs), zc_array_release(ws), zc_array_release(vs);
    zc_store_close(os);
}

TEST(float32_input)
{
    int64_t m = 60, n = 4;
    float f[240];
    double d[240];
    for (int i = 0; i < 240; i++) d[i] = f[i] = (float)urand();
    int64_t shape[2] = {m, n}, chunks[2] = {16, 4};
    zc_array *x = NULL, *s = NULL;
    CHECK_OK(zc_asarray(f, ZC_FLOAT32, 2, shape, chunks, &x));
    CHECK_OK(zc_svdvals(x, &s));
    zc_dtype dt;
    zc_array_info(s, NULL, NULL, NULL, &dt);
    CHECK(dt == ZC_FLOAT64);
    double *sv = get(s, NULL, NULL), *ref = ref_svals(d, m, n);
    for (int i = 0; i < n; i++) CHECK(fabs(sv[i] - ref[i]) <= 1e-10 * ref[0]);
    free(sv);
    free(ref);
    zc_array_release(x);
    zc_array_release(s);
}

TEST(bad_input)
{
    double a[16] = {1, 2, 3, 4, 2, 4, 6, 8, 0, 0, 1, 0, 5, 1, 2, 3}; /* rows 0 and 1 dependent: singular */
    zc_array *x = mat(a, 4, 4, 4, 4), *o = NULL, *o2 = NULL;
    int64_t s1[1] = {16}, s3[3] = {2, 2, 4};
    zc_array *v = NULL, *t3 = NULL, *iv = NULL;
    CHECK_OK(zc_asarray(a, ZC_FLOAT64, 1, s1, NULL, &v));
    CHECK_OK(zc_asarray(a, ZC_FLOAT64, 3, s3, NULL, &t3));
    int32_t ints[4] = {1, 2, 3, 4};
    int64_t s2[2] = {2, 2};
    CHECK_OK(zc_asarray(ints, ZC_INT32, 2, s2, NULL, &iv));
    CHECK_ERR(zc_qr(v, &o, &o2), ZC_EINVAL, "2-D");
    /* a stack (2, 2, 4) is two 2×4 matrices: their singular values (2, 2); each
     * must still be square where square is needed; the randomized SVD takes one matrix */
    int nd3;
    int64_t sh3[ZC_MAX_DIMS];
    CHECK_OK(zc_svdvals(t3, &o));
    CHECK_OK(zc_array_info(o, &nd3, sh3, NULL, NULL));
    CHECK(nd3 == 2 && sh3[0] == 2 && sh3[1] == 2);
    zc_array_release(o);
    o = NULL;
    CHECK_ERR(zc_inv(t3, &o), ZC_EINVAL, "square");
    CHECK_ERR(zc_svd_compressed(t3, 1, 1, 0, 1, NULL, &o, NULL), ZC_EINVAL, "2-D");
    CHECK_ERR(zc_svdvals(iv, &o), ZC_EINVAL, "int32");
    CHECK_ERR(zc_qr(NULL, &o, NULL), ZC_EINVAL, NULL);
    CHECK_ERR(zc_qr(x, NULL, NULL), ZC_EINVAL, "no output");
    CHECK_ERR(zc_svd_compressed(x, 0, 2, 0, 1, NULL, &o, NULL), ZC_EINVAL, "k = 0");
    CHECK_ERR(zc_svd_compressed(x, 5, 2, 0, 1, NULL, &o, NULL), ZC_EINVAL, "k = 5");
    CHECK_ERR(zc_svd_compressed(x, 2, -1, 0, 1, NULL, &o, NULL), ZC_EINVAL, "oversamples");
    zc_array *rect = mat(a, 2, 8, 2, 8);
    CHECK_ERR(zc_inv(rect, &o), ZC_EINVAL, "square");
    CHECK_ERR(zc_cholesky(rect, &o), ZC_EINVAL, "square");
    CHECK_ERR(zc_solve(x, rect, &o), ZC_EINVAL, "rows");
    CHECK_ERR(zc_lstsq(x, rect, &o, NULL, NULL, NULL), ZC_EINVAL, "rows");
    /* singular / not positive definite: errors from the computation, naming the function */
    zc_spec sp = spec_mem(64);
    double out[16];
    CHECK_OK(zc_inv(x, &o));
    CHECK_ERR(zc_compute_buffer(&sp, o, out, sizeof out, NULL), ZC_EINVAL, "singular");
    zc_array_release(o);
    CHECK_OK(zc_solve(x, x, &o));
    CHECK_ERR(zc_compute_buffer(&sp, o, out, sizeof out, NULL), ZC_EINVAL, "singular");
    zc_array_release(o);
    CHECK_OK(zc_cholesky(x, &o));
    CHECK_ERR(zc_compute_buffer(&sp, o, out, sizeof out, NULL), ZC_EINVAL, "positive definite");
    zc_array_release(o);
    zc_array_release(v);
    zc_array_release(t3);
    zc_array_release(iv);
    zc_array_release(rect);
    zc_array_release(x);
}

TEST(memory_bound)
{
    /* a 1000 x 1000 inverse needs the whole matrix in one task: refused under 8 MB,
     * naming the operation and both figures */
    int64_t shape[2] = {1000, 1000}, chunks[2] = {100, 100};
    zc_array *x = NULL, *o = NULL;
    CHECK_OK(zc_random_uniform(1, 2, shape, chunks, ZC_FLOAT64, 0, 1, &x));
    CHECK_OK(zc_inv(x, &o));
    zc_spec sp = spec_mem(8);
    char *json = NULL;
    CHECK_ERR(zc_plan_json(&sp, 1, &o, NULL, &json), ZC_EMEMBOUND, "inv");
    CHECK(strstr(zc_errmsg(), "MB allowed") != NULL);
    zc_array_release(o);
    /* TSQR of a tall matrix fits where the matrix does not: measured <= projected */
    int64_t ts[2] = {20000, 16}, tc[2] = {1000, 16};
    zc_array *t = NULL, *q = NULL, *r = NULL;
    CHECK_OK(zc_random_normal(3, 2, ts, tc, ZC_FLOAT64, 0, 1, &t));
    CHECK_OK(zc_qr(t, &q, &r));
    zc_spec s2 = spec_mem(4);
    zc_report *rep = NULL;
    double *buf = malloc(sizeof(double) * 16 * 16);
    CHECK_OK(zc_compute_buffer(&s2, r, buf, sizeof(double) * 256, &rep));
    json_t *doc = report_checked(rep);
    CHECK(json_array_size(json_object_get(doc, "operations")) >= 2);
    json_decref(doc);
    free(buf);
    zc_array_release(t);
    zc_array_release(q);
    zc_array_release(r);
    zc_array_release(x);
}

/* The SVD path (TSQR, LAPACK and OpenBLAS in the tasks): svdvals of a
 * 400,000 x 32 float64 matrix (102 MB, bands of 12.8 MB) under 2 threads x
 * 96 MB: per stage, the peak RSS grows by no more than the counted memory plus
 * the uncounted reserve (OpenBLAS's buffers among it), stays within 2 x 96 MB
 * + the reserve, and grows by more than that reserve (check_rss_matters), so
 * the agreement can fail. The singular values are checked against
 * sum s^2 = sum a^2. */
TEST(rss_agrees_with_counted_memory_svd)
{
    int64_t shape[2] = {400000, 32}, chunks[2] = {50000, 32};
    zc_array *a, *s, *s2, *ss, *a2, *as;
    CHECK_OK(zc_random_normal(8, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_svdvals(a, &s));
    CHECK_OK(zc_elementwise("multiply", 2, (zc_array *[]){s, s}, &s2));
    CHECK_OK(zc_reduce("sum", s2, NULL, 0, 0, 0, &ss));
    CHECK_OK(zc_elementwise("multiply", 2, (zc_array *[]){a, a}, &a2));
    CHECK_OK(zc_reduce("sum", a2, NULL, 0, 0, 0, &as));
    zc_spec sp = spec_mem(96);
    sp.nthreads = 2;
    double got = 0, want = 0;
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&sp, ss, &got, sizeof got, &rep));
    json_t *doc = report_checked(rep);
    check_rss_matters(doc, "svdvals");
    json_decref(doc);
    CHECK_OK(zc_compute_buffer(&sp, as, &want, sizeof want, NULL));
    CHECK(fabs(got / want - 1) < 1e-9);
    zc_array_release(a); zc_array_release(s); zc_array_release(s2); zc_array_release(ss); zc_array_release(a2);
    zc_array_release(as);
}

TEST(worker_plan)
{
    /* a TSQR plan saved as JSON and run operation by operation, as `zcube worker` does */
    char dir[] = "/tmp/zc_decomp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char src[300], out[300], work[300], plan[300];
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    int64_t m = 3000, n = 8;
    double *a = rand_matrix(m, n);
    zc_store *ss = NULL, *os = NULL;
    CHECK_OK(zc_store_open(src, ZC_STORE_CREATE, &ss));
    CHECK_OK(zc_store_open(out, ZC_STORE_CREATE, &os));
    zc_array *x = mat(a, m, n, 20, 8), *q = NULL, *r = NULL;
    zc_target t0 = {ss, "a", NULL, 0};
    zc_spec sp = spec_mem(64);
    CHECK_OK(zc_compute(&sp, 1, &x, &t0, NULL));
    zc_array *xs = NULL;
    CHECK_OK(zc_from_zarr(ss, "a", &xs));
    CHECK_OK(zc_qr(xs, &q, &r));
    zc_array *outs[2] = {q, r};
    zc_target tg[2] = {{os, "q", NULL, 0}, {os, "r", NULL, 0}};
    sp.work_dir = work;
    CHECK_OK(zc_plan_save(&sp, 2, outs, tg, plan));
    json_error_t je;
    json_t *doc = json_load_file(plan, 0, &je);
    int nst = (int)json_array_size(json_object_get(doc, "stages"));
    json_decref(doc);
    CHECK(nst >= 4);
    for (int op = 0; op < nst; op++) CHECK_OK(zc_plan_run(plan, op, 0, -1, 1));
    /* a plan naming an unknown linear algebra operation, or a TSQR node without bands, is refused */
    char bad[320], cmd0[1200];
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    snprintf(cmd0, sizeof cmd0, "sed 's/\"tsqr_q\"/\"tsqr_x\"/' %s > %s", plan, bad);
    CHECK(system(cmd0) == 0);
    CHECK_ERR(zc_plan_run(bad, 0, 0, -1, 1), ZC_EFORMAT, "checksum");
    CHECK(plan_resign(bad) == 0);
    CHECK_ERR(zc_plan_run(bad, 0, 0, -1, 1), ZC_EFORMAT, "tsqr_x");
    snprintf(cmd0, sizeof cmd0, "sed 's/\"band\": [0-9]*/\"band\": 0/' %s > %s", plan, bad);
    CHECK(system(cmd0) == 0);
    CHECK(plan_resign(bad) == 0);
    CHECK_ERR(zc_plan_run(bad, 0, 0, -1, 1), ZC_EFORMAT, "band 0");
    /* a TSQR request (bands not yet chosen) is never saved: one forged in is refused */
    snprintf(cmd0, sizeof cmd0, "sed 's/\"tsqr_q\"/\"tsqr_request_q\"/' %s > %s", plan, bad);
    CHECK(system(cmd0) == 0);
    CHECK(plan_resign(bad) == 0);
    CHECK_ERR(zc_plan_run(bad, 0, 0, -1, 1), ZC_EFORMAT, "request");
    zc_array *qz = NULL, *rz = NULL;
    CHECK_OK(zc_from_zarr(os, "q", &qz));
    CHECK_OK(zc_from_zarr(os, "r", &rz));
    double *qv = get(qz, NULL, NULL), *rv = get(rz, NULL, NULL);
    CHECK(prod_err(qv, rv, 0, a, m, n, n) <= 1e-10);
    CHECK(orth_err(qv, m, n) <= 1e-10);
    free(qv);
    free(rv);
    free(a);
    zc_array_release(qz);
    zc_array_release(rz);
    zc_array_release(x);
    zc_array_release(xs);
    zc_array_release(q);
    zc_array_release(r);
    zc_store_close(ss);
    zc_store_close(os);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(allocation_failures)
{
    /* every allocation of building and computing a QR, an SVD and a least squares fails in
     * turn: an error comes back or the result is right (lstsq(x, x) is the identity); no
     * crash, no leak under ASan */
    int64_t m = 60, n = 4;
    double *a = rand_matrix(m, n), out[240];
    zc_spec sp = spec_mem(64);
    sp.nthreads = 1;
    int ok = 0;
    long k = 1;
    for (; k < 3000 && !ok; k++) {
        zc_array *x = NULL, *q = NULL, *r = NULL, *s = NULL, *sol = NULL;
        zc_test_fail_alloc(k, 0);
        int rc = 0;
        int64_t shape[2] = {m, n}, chunks[2] = {16, n};
        if (rc == 0) rc = zc_asarray(a, ZC_FLOAT64, 2, shape, chunks, &x);
        if (rc == 0) rc = zc_qr(x, &q, &r);
        if (rc == 0) rc = zc_svdvals(x, &s);
        if (rc == 0) rc = zc_lstsq(x, x, &sol, NULL, NULL, NULL);
        if (rc == 0) rc = zc_compute_buffer(&sp, q, out, sizeof(double) * (size_t)(m * n), NULL);
        if (rc == 0) rc = zc_compute_buffer(&sp, s, out, sizeof(double) * (size_t)n, NULL);
        if (rc == 0) rc = zc_compute_buffer(&sp, sol, out, sizeof(double) * (size_t)(n * n), NULL);
        int failed = zc_test_fail_alloc(0, 0);
        if (rc == 0 && failed == 0) ok = 1;
        if (rc == 0) /* some failures are absorbed (a cache not filled): then the result is right */
            for (int64_t i = 0; i < n * n; i++) CHECK(fabs(out[i] - (i % (n + 1) == 0)) < 1e-12);
        zc_array_release(x);
        zc_array_release(q);
        zc_array_release(r);
        zc_array_release(s);
        zc_array_release(sol);
    }
    CHECK(ok);
    CHECK(k > 50); /* that many allocations failed one after another before a clean run */
    free(a);
}

TEST(tsqr_rechunks_huge_bands)
{
    /* one 72 MB chunk: bands of it would exceed 64 MiB, so TSQR rechunks A to bands of
     * whole rows first (a rechunk stage in the plan) and still gives LAPACK's values */
    int64_t m = 3000000, n = 3, shape[2] = {m, n};
    zc_array *x = NULL, *s = NULL;
    CHECK_OK(zc_random_normal(5, 2, shape, shape, ZC_FLOAT64, 0, 1, &x));
    CHECK_OK(zc_svdvals(x, &s));
    CHECK(count_ops(s, "rechunk") == 1);
    /* reference: square roots of the eigenvalues of the 3 x 3 Gram matrix (well conditioned
     * here). Not LAPACK's dgesdd on the whole matrix: OpenBLAS 0.3.21's Prescott kernels
     * (its fallback on CPUs it does not recognize) give singular values off by 1e-4 for
     * this 3,000,000 x 3 matrix (numpy.linalg.svd too; right with OPENBLAS_CORETYPE=SkylakeX) */
    double *a = get(x, NULL, NULL), *sv = get(s, NULL, NULL), g[9] = {0}, w[3];
    for (int64_t r = 0; r < m; r++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) g[i * n + j] += a[r * n + i] * a[r * n + j];
    CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (int)n, g, (int)n, w) == 0);
    for (int i = 0; i < n; i++) CHECK(fabs(sv[i] - sqrt(w[n - 1 - i])) <= 1e-10 * sv[0]);
    free(a);
    free(sv);
    zc_array_release(x);
    zc_array_release(s);
}

/* U, S, Vᵀ of svd_compressed on a stored source, computed with spec s into a memory store
 * (values in uv/sv/vv); the report's source_cache hits and misses. */
static void rsvd_stored(zc_array *xs, const zc_spec *s, int64_t m, int64_t n, double **uv, double **sv, double **vv,
                        int64_t *hits, int64_t *misses)
{
    static int counter;
    char url[64];
    snprintf(url, sizeof url, "memory://decomp-cache-%d-%d", (int)getpid(), counter++);
    zc_store *os = NULL;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &os));
    zc_array *r[3] = {NULL, NULL, NULL};
    CHECK_OK(zc_svd_compressed(xs, 5, 5, 2, 3, &r[0], &r[1], &r[2]));
    zc_target t[3] = {{os, "u", NULL, 0}, {os, "s", NULL, 0}, {os, "vt", NULL, 0}};
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(s, 3, r, t, &rep));
    json_t *doc = report_checked(rep), *sc = json_object_get(doc, "source_cache");
    *hits = json_integer_value(json_object_get(sc, "hits"));
    *misses = json_integer_value(json_object_get(sc, "misses"));
    json_decref(doc);
    const char *names[3] = {"u", "s", "vt"};
    double **outs[3] = {uv, sv, vv};
    for (int k = 0; k < 3; k++) {
        zc_array *z = NULL;
        CHECK_OK(zc_from_zarr(os, names[k], &z));
        *outs[k] = get(z, NULL, NULL);
        zc_array_release(z);
        zc_array_release(r[k]);
    }
    zc_store_close(os);
    (void)m, (void)n;
}

TEST(svd_compressed_source_cache)
{
    /* A read by every pass is decoded once with cache_mem (whole-row chunks: used in
     * place; column chunks: copied); U, S, Vᵀ bit-identical to the run without */
    int64_t m = 300, n = 120, chunkings[2][2] = {{64, 120}, {64, 50}};
    double sigma[512];
    double *a = known_spectrum(m, n, sigma);
    for (int c = 0; c < 2; c++) {
        zc_store *ss = NULL;
        char url[64];
        snprintf(url, sizeof url, "memory://decomp-cache-src-%d-%d", (int)getpid(), c);
        CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &ss));
        zc_array *x = mat(a, m, n, chunkings[c][0], chunkings[c][1]), *xs = NULL;
        zc_target t0 = {ss, "a", NULL, 0};
        zc_spec sp = spec_mem(64);
        CHECK_OK(zc_compute(&sp, 1, &x, &t0, NULL));
        CHECK_OK(zc_from_zarr(ss, "a", &xs));
        double *u0, *s0, *v0, *u1, *s1, *v1;
        int64_t h0, m0, h1, m1, nchunks = ((m + 63) / 64) * ((n + chunkings[c][1] - 1) / chunkings[c][1]);
        sp.nthreads = 1;
        rsvd_stored(xs, &sp, m, n, &u0, &s0, &v0, &h0, &m0);
        CHECK(h0 == 0 && m0 == 0);
        sp.cache_mem = (size_t)16 << 20;
        rsvd_stored(xs, &sp, m, n, &u1, &s1, &v1, &h1, &m1);
        CHECK(m1 == nchunks);
        CHECK(h1 >= 3 * nchunks); /* q + 2 = 4 passes (whole rows) or more: 3 of them from memory */
        CHECK(memcmp(u0, u1, sizeof(double) * (size_t)(m * 5)) == 0);
        CHECK(memcmp(s0, s1, sizeof(double) * 5) == 0);
        CHECK(memcmp(v0, v1, sizeof(double) * (size_t)(5 * n)) == 0);
        for (int i = 0; i < 5; i++) CHECK(fabs(s1[i] - sigma[i]) <= 1e-6);
        free(u0), free(s0), free(v0), free(u1), free(s1), free(v1);
        zc_array_release(x);
        zc_array_release(xs);
        zc_store_close(ss);
    }
    free(a);
}

/* tasks of the first tsqr_r stage of a's plan under `mb` MB (0: refused) */
static int64_t tsqr_tasks(zc_array *a, size_t mb, char **json)
{
    zc_spec s = spec_mem(mb);
    *json = NULL;
    if (zc_plan_json(&s, 1, &a, NULL, json) < 0) return 0;
    const char *p = strstr(*json, "\"kind\": \"tsqr_r\"");
    const char *t = p ? strstr(p, "\"tasks\": ") : NULL;
    return t ? atoll(t + 9) : -1;
}

TEST(tsqr_bands_fitted_to_bound)
{
    /* One 64 MB chunk (a caller's buffer). The planner fits TSQR's bands to the
     * bound: one band of the whole chunk under 1 GB, narrower bands (read from
     * the buffer as it is) under 24 MB, where a band of the chunk would not
     * fit (this plan was refused when the bands were fixed). The two
     * plans differ and both give R (up to the signs of its rows; measured <=
     * projected) */
    int64_t m = 400000, n = 20;
    double *a = rand_matrix(m, n);
    zc_array *x = mat(a, m, n, m, n), *r = NULL;
    CHECK_OK(zc_qr(x, NULL, &r));
    char *big = NULL, *small = NULL;
    int64_t tb = tsqr_tasks(r, 1024, &big), ts = tsqr_tasks(r, 24, &small);
    CHECK(tb == 1);
    CHECK(ts > 1);
    CHECK(big && small && strcmp(big, small) != 0);
    zc_free(big);
    zc_free(small);
    double rv[2][400];
    size_t mbs[2] = {1024, 24};
    for (int i = 0; i < 2; i++) {
        zc_spec s = spec_mem(mbs[i]);
        zc_report *rep = NULL;
        CHECK_OK(zc_compute_buffer(&s, r, rv[i], sizeof rv[i], &rep));
        json_decref(report_checked(rep));
    }
    double e = 0;
    for (int i = 0; i < n; i++) {
        double sg = (rv[0][i * n + i] < 0) == (rv[1][i * n + i] < 0) ? 1 : -1;
        for (int j = 0; j < n; j++) e = fmax(e, fabs(rv[0][i * n + j] - sg * rv[1][i * n + j]));
    }
    CHECK(e <= 1e-9 * fabs(rv[0][0]));
    /* Q's chunks do not depend on the bound (its bands are copied to them) */
    zc_array *q = NULL;
    CHECK_OK(zc_qr(x, &q, NULL));
    int64_t qs[2], qc[2];
    int qnd;
    CHECK_OK(zc_array_info(q, &qnd, qs, qc, NULL));
    CHECK(qc[0] == m && qc[1] == n);
    zc_array_release(q);
    zc_array_release(r);
    zc_array_release(x);
    free(a);
}

/* ---- complex128 (QR, SVD, det, slogdet, cholesky) ---- */

typedef double complex zcx;

static zcx *crand_matrix(int64_t m, int64_t n)
{
    zcx *a = malloc(sizeof(zcx) * (size_t)(m * n));
    for (int64_t i = 0; i < m * n; i++) a[i] = urand() + I * urand();
    return a;
}

static zcx *cget(zc_array *a, int64_t n)
{
    zc_spec s = spec_mem(256);
    zcx *v = malloc(sizeof(zcx) * (size_t)(n > 0 ? n : 1));
    CHECK_OK(zc_compute_buffer(&s, a, v, sizeof(zcx) * (size_t)n, NULL));
    return v;
}

/* max |X·Y − C| for X m×k, Y k×n (Y's rows scaled by d when d is given) */
static double cprod_err(const zcx *x, const zcx *y, const double *d, const zcx *c, int64_t m, int64_t k, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            zcx t = 0;
            for (int64_t l = 0; l < k; l++) t += x[i * k + l] * (d ? d[l] : 1) * y[l * n + j];
            e = fmax(e, cabs(t - c[i * n + j]));
        }
    return e;
}

/* max |Qᴴ·Q − I| of q m×k (columns), or of q's rows when rows */
static double corth_err(const zcx *q, int64_t m, int64_t k, bool rows)
{
    double e = 0;
    int64_t nv = rows ? m : k, len = rows ? k : m;
    for (int64_t i = 0; i < nv; i++)
        for (int64_t j = 0; j < nv; j++) {
            zcx t = 0;
            for (int64_t l = 0; l < len; l++)
                t += rows ? conj(q[i * k + l]) * q[j * k + l] : conj(q[l * k + i]) * q[l * k + j];
            e = fmax(e, cabs(t - (i == j)));
        }
    return e;
}

static void check_complex_qr_svd(int64_t m, int64_t n, int64_t c0, int64_t c1)
{
    zcx *a = crand_matrix(m, n);
    int64_t shape[2] = {m, n}, chunks[2] = {c0, c1}, k = m < n ? m : n;
    zc_array *x = NULL, *q = NULL, *r = NULL, *u = NULL, *s = NULL, *vt = NULL, *sv = NULL;
    CHECK_OK(zc_asarray(a, ZC_COMPLEX128, 2, shape, chunks, &x));
    CHECK_OK(zc_qr(x, &q, &r));
    CHECK_OK(zc_svd(x, &u, &s, &vt));
    CHECK_OK(zc_svdvals(x, &sv));
    int nd;
    zc_dtype dt;
    CHECK_OK(zc_array_info(s, &nd, NULL, NULL, &dt));
    CHECK(dt == ZC_FLOAT64);
    zcx *qv = cget(q, m * k), *rv = cget(r, k * n), *uv = cget(u, m * k), *vv = cget(vt, k * n);
    double *sval = get(s, NULL, NULL), *svv = get(sv, NULL, NULL), low = 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < i && j < n; j++) low = fmax(low, cabs(rv[i * n + j]));
    double e[6] = {cprod_err(qv, rv, NULL, a, m, k, n), corth_err(qv, m, k, false), low,
                   cprod_err(uv, vv, sval, a, m, k, n), corth_err(uv, m, k, false), corth_err(vv, k, n, true)};
    /* the singular values against LAPACK's zgesdd on the whole matrix */
    zcx *c = malloc(sizeof(zcx) * (size_t)(m * n));
    memcpy(c, a, sizeof(zcx) * (size_t)(m * n));
    double *ref = malloc(sizeof(double) * (size_t)k), es = 0;
    CHECK(LAPACKE_zgesdd(LAPACK_ROW_MAJOR, 'N', (int)m, (int)n, c, (int)n, ref, NULL, 1, NULL, (int)n) == 0);
    for (int64_t i = 0; i < k; i++) es = fmax(es, fmax(fabs(sval[i] - ref[i]), fabs(svv[i] - ref[i])));
    if (e[0] > 1e-10 || e[1] > 1e-10 || e[2] != 0 || e[3] > 1e-10 || e[4] > 1e-10 || e[5] > 1e-10 || es > 1e-10)
        fprintf(stderr, "complex %lldx%lld chunks %lldx%lld: QR %.1e QhQ %.1e low %.1e USV %.1e UhU %.1e VVh %.1e s %.1e\n",
                (long long)m, (long long)n, (long long)c0, (long long)c1, e[0], e[1], e[2], e[3], e[4], e[5], es);
    for (int i = 0; i < 6; i++) CHECK(i == 2 ? e[i] == 0 : e[i] <= 1e-10);
    CHECK(es <= 1e-10);
    free(a), free(c), free(ref), free(qv), free(rv), free(uv), free(vv), free(sval), free(svv);
    zc_array *rel[] = {x, q, r, u, s, vt, sv};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) zc_array_release(rel[i]);
}

TEST(complex_qr_svd)
{
    check_complex_qr_svd(300, 7, 13, 7);  /* TSQR over 24 bands, recursion of the stacked R */
    check_complex_qr_svd(4000, 20, 40, 20); /* several recursion levels */
    check_complex_qr_svd(200, 7, 50, 3);  /* bands cut across column chunks */
    check_complex_qr_svd(40, 40, 7, 7);   /* square */
    check_complex_qr_svd(5, 12, 2, 5);    /* short-fat: Q of the first columns, R = triu(Qᴴ·A); svd of Aᴴ */
    /* complex64 is computed as complex128 */
    float fa[8] = {1, 2, 3, 4, 5, 6, 7, 9};
    int64_t s2[2] = {2, 2};
    zc_array *x = NULL, *r = NULL;
    CHECK_OK(zc_asarray(fa, ZC_COMPLEX64, 2, s2, NULL, &x));
    CHECK_OK(zc_qr(x, NULL, &r));
    zc_dtype dt;
    int nd;
    CHECK_OK(zc_array_info(r, &nd, NULL, NULL, &dt));
    CHECK(dt == ZC_COMPLEX128);
    zc_array_release(x);
    zc_array_release(r);
}

TEST(complex_det_slogdet_cholesky_inv_solve_eigh)
{
    int64_t n = 6, shape[2] = {n, n};
    zcx *a = crand_matrix(n, n), *h = malloc(sizeof(zcx) * (size_t)(n * n));
    /* h = A·Aᴴ + n·I: Hermitian positive definite */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            zcx t = i == j ? n : 0;
            for (int64_t l = 0; l < n; l++) t += a[i * n + l] * conj(a[j * n + l]);
            h[i * n + j] = t;
        }
    zc_array *x = NULL, *xh = NULL, *d = NULL, *sg = NULL, *la = NULL, *l = NULL;
    CHECK_OK(zc_asarray(a, ZC_COMPLEX128, 2, shape, (int64_t[]){4, 4}, &x));
    CHECK_OK(zc_asarray(h, ZC_COMPLEX128, 2, shape, (int64_t[]){4, 4}, &xh));
    CHECK_OK(zc_det(x, &d));
    CHECK_OK(zc_slogdet(x, &sg, &la));
    CHECK_OK(zc_cholesky(xh, &l));
    /* reference: the product of LAPACK's LU pivots, sign flipped per row swap */
    zcx *lu = malloc(sizeof(zcx) * (size_t)(n * n)), ref = 1;
    memcpy(lu, a, sizeof(zcx) * (size_t)(n * n));
    lapack_int ipiv[6];
    CHECK(LAPACKE_zgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, lu, (int)n, ipiv) == 0);
    for (int i = 0; i < n; i++) ref *= (ipiv[i] != i + 1 ? -1 : 1) * lu[i * n + i];
    zcx *dv = cget(d, 1), *sv = cget(sg, 1);
    double *lvp = get(la, NULL, NULL), lv = *lvp;
    free(lvp);
    CHECK(cabs(*dv - ref) <= 1e-12 * cabs(ref));
    CHECK(cabs(*sv - ref / cabs(ref)) <= 1e-12);
    CHECK(fabs(lv - log(cabs(ref))) <= 1e-12);
    /* L lower triangular, L·Lᴴ = h */
    zcx *lv2 = cget(l, n * n), *lh = malloc(sizeof(zcx) * (size_t)(n * n));
    double up = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            lh[i * n + j] = conj(lv2[j * n + i]);
            if (j > i) up = fmax(up, cabs(lv2[i * n + j]));
        }
    CHECK(up == 0);
    CHECK(cprod_err(lv2, lh, NULL, h, n, n, n) <= 1e-10);
    /* inv (zgetri): A·inv(A) = I; solve (zgetrs) of A X = h; eigh (zheevd) of h: h·V = V·diag(w) */
    zc_array *xi = NULL, *xs = NULL, *w = NULL, *v = NULL, *o = NULL;
    CHECK_OK(zc_inv(x, &xi));
    CHECK_OK(zc_solve(x, xh, &xs));
    CHECK_OK(zc_eigh(xh, &w, &v));
    zcx *iv = cget(xi, n * n), *sol = cget(xs, n * n), *vv = cget(v, n * n), *eye = calloc((size_t)(n * n), sizeof(zcx));
    double *wv = get(w, NULL, NULL);
    for (int64_t i = 0; i < n; i++) eye[i * n + i] = 1;
    CHECK(cprod_err(a, iv, NULL, eye, n, n, n) <= 1e-10);
    CHECK(cprod_err(a, sol, NULL, h, n, n, n) <= 1e-10);
    double ew = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) { /* (h·V)[i][j] = V[i][j]·w[j] */
            zcx t = 0;
            for (int64_t q = 0; q < n; q++) t += h[i * n + q] * vv[q * n + j];
            ew = fmax(ew, cabs(t - vv[i * n + j] * wv[j]));
        }
    CHECK(ew <= 1e-10 * n * n);
    for (int64_t j = 1; j < n; j++) CHECK(wv[j - 1] <= wv[j]); /* ascending */
    /* the randomized SVD stays real */
    CHECK_ERR(zc_svd_compressed(x, 2, 1, 0, 1, NULL, &o, NULL), ZC_EINVAL, "float32 or float64");
    free(a), free(h), free(lu), free(dv), free(sv), free(lv2), free(lh), free(iv), free(sol), free(vv), free(eye), free(wv);
    zc_array *rel[] = {x, xh, d, sg, la, l, xi, xs, w, v};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) zc_array_release(rel[i]);
}
