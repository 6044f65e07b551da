/* tests/test_compute_linalg.c — matmul, tensordot, vecdot, outer against
 * naive loops: over chunkings (split and unsplit contracted dims), dtypes
 * (float, complex, wrapping integers, bool, float16), batch broadcasting, 1-D
 * operands; a product whose operands exceed allowed_mem computed within the
 * bound; plans through JSON workers; bad shapes; la_gemm_rows (kernels/lapack.h)
 * against a loop. */
#include <complex.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>

#include "harness.h"
#include "kernels/lapack.h"

static uint64_t rng = 88172645463325252ull;
static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

static size_t prod(int nd, const int64_t *s)
{
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)s[d];
    return n;
}

static size_t isz_of(zc_dtype t)
{
    size_t n = 0;
    zc_dtype_parse(zc_dtype_name(t), &t, &n);
    return n;
}

/* Random values of dtype: small integers (so int products stay exact in double
 * references except where wrapping is tested), floats in [-1, 1). */
static void *random_buf(zc_dtype t, size_t n)
{
    size_t isz = isz_of(t);
    unsigned char *b = malloc(n * isz + 16);
    for (size_t i = 0; i < n; i++) {
        double v = rnd() * 2 - 1;
        int64_t iv = (int64_t)floor(rnd() * 200) - 100;
        unsigned char *p = b + i * isz;
        switch (t) {
        case ZC_BOOL: p[0] = rnd() < 0.3; break;
        case ZC_INT8: { int8_t x = (int8_t)iv; memcpy(p, &x, 1); break; }
        case ZC_INT32: { int32_t x = (int32_t)(iv * 1000003); memcpy(p, &x, 4); break; }
        case ZC_INT64: { int64_t x = iv * 1000000007; memcpy(p, &x, 8); break; }
        case ZC_UINT16: { uint16_t x = (uint16_t)(iv * 977); memcpy(p, &x, 2); break; }
        case ZC_UINT8: { uint8_t x = (uint8_t)iv; memcpy(p, &x, 1); break; }
        case ZC_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
        case ZC_FLOAT64: memcpy(p, &v, 8); break;
        case ZC_COMPLEX64: { float x[2] = {(float)v, (float)(rnd() * 2 - 1)}; memcpy(p, x, 8); break; }
        case ZC_COMPLEX128: { double x[2] = {v, rnd() * 2 - 1}; memcpy(p, x, 16); break; }
        default: memset(p, 0, isz); break;
        }
    }
    return b;
}

/* Element i of a buffer as a complex double (integers through uint64 wrap, see ref). */
static double complex get(zc_dtype t, const void *b, size_t i)
{
    const unsigned char *p = (const unsigned char *)b + i * isz_of(t);
    switch (t) {
    case ZC_BOOL: return p[0];
    case ZC_INT8: { int8_t x; memcpy(&x, p, 1); return x; }
    case ZC_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
    case ZC_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case ZC_UINT16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case ZC_UINT8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case ZC_FLOAT32: { float x; memcpy(&x, p, 4); return x; }
    case ZC_FLOAT64: { double x; memcpy(&x, p, 8); return x; }
    case ZC_COMPLEX64: { float x[2]; memcpy(x, p, 8); return CMPLX(x[0], x[1]); }
    case ZC_COMPLEX128: { double x[2]; memcpy(x, p, 16); return CMPLX(x[0], x[1]); }
    default: return 0;
    }
}

static int64_t get_i(zc_dtype t, const void *b, size_t i)
{
    const unsigned char *p = (const unsigned char *)b + i * isz_of(t);
    switch (t) {
    case ZC_INT64: { int64_t x; memcpy(&x, p, 8); return x; }
    default: return (int64_t)creal(get(t, b, i));
    }
}

static bool is_int(zc_dtype t) { return t == ZC_INT8 || t == ZC_INT32 || t == ZC_INT64 || t == ZC_UINT16 || t == ZC_UINT8; }

/* Reference matmul (batch broadcast, ndim >= 2 both) in complex double, or exact
 * wrapping integers in uint64 (then narrowed by the caller's comparison). */
typedef struct {
    int nd;
    int64_t shape[8];
} shp;

static void ref_matmul(zc_dtype t, const void *a, shp sa, const void *b, shp sb, double complex *out, uint64_t *iout,
                       shp *so)
{
    int nba = sa.nd - 2, nbb = sb.nd - 2, nb = nba > nbb ? nba : nbb;
    int64_t M = sa.shape[nba], K = sa.shape[nba + 1], N = sb.shape[nbb + 1];
    so->nd = nb + 2;
    for (int d = 0; d < nb; d++) {
        int ja = d - (nb - nba), jb = d - (nb - nbb);
        int64_t x = ja >= 0 ? sa.shape[ja] : 1, y = jb >= 0 ? sb.shape[jb] : 1;
        so->shape[d] = x == 1 ? y : x;
    }
    so->shape[nb] = M;
    so->shape[nb + 1] = N;
    size_t nbat = prod(nb, so->shape);
    for (size_t m = 0; m < nbat; m++) {
        int64_t idx[8], r = (int64_t)m;
        for (int d = nb - 1; d >= 0; d--) {
            idx[d] = r % so->shape[d];
            r /= so->shape[d];
        }
        size_t ao = 0, bo = 0;
        for (int j = 0; j < nba; j++) ao = ao * (size_t)sa.shape[j] + (size_t)(sa.shape[j] == 1 ? 0 : idx[j + nb - nba]);
        for (int j = 0; j < nbb; j++) bo = bo * (size_t)sb.shape[j] + (size_t)(sb.shape[j] == 1 ? 0 : idx[j + nb - nbb]);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double complex s = 0;
                uint64_t si = 0;
                for (int64_t k = 0; k < K; k++) {
                    size_t ia = ao * (size_t)(M * K) + (size_t)(i * K + k), ib = bo * (size_t)(K * N) + (size_t)(k * N + j);
                    if (t == ZC_BOOL) si |= get_i(t, a, ia) && get_i(t, b, ib);
                    else if (is_int(t)) si += (uint64_t)get_i(t, a, ia) * (uint64_t)get_i(t, b, ib);
                    else s += get(t, a, ia) * get(t, b, ib);
                }
                size_t o = m * (size_t)(M * N) + (size_t)(i * N + j);
                out[o] = s;
                iout[o] = si;
            }
    }
}

/* Compare a computed buffer of dtype t against the reference. */
static int compare(zc_dtype t, const void *got, const double complex *want, const uint64_t *iwant, size_t n, int64_t K)
{
    int bad = 0;
    double tol = (t == ZC_FLOAT32 || t == ZC_COMPLEX64) ? 2e-5 : 1e-12;
    for (size_t i = 0; i < n; i++) {
        if (t == ZC_BOOL || is_int(t)) {
            uint64_t w = iwant[i], g = (uint64_t)get_i(t, got, i);
            size_t bits = 8 * isz_of(t);
            if (t == ZC_BOOL) w = w != 0;
            if (bits < 64) {
                uint64_t mask = (1ull << bits) - 1;
                w &= mask;
                g &= mask;
            }
            if (w != g) bad++;
        } else if (cabs(get(t, got, i) - want[i]) > tol * (double)(K + 1)) {
            bad++;
        }
    }
    return bad;
}

static zc_array *from(const void *buf, zc_dtype t, shp s, const int64_t *chunks)
{
    zc_array *a = NULL;
    CHECK_OK(zc_asarray(buf, t, s.nd, s.shape, chunks, &a));
    return a;
}

static void *compute(zc_array *a, size_t *n, zc_dtype *dt)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS];
    CHECK_OK(zc_array_info(a, &nd, shape, NULL, dt));
    *n = prod(nd, shape);
    size_t bytes = *n * isz_of(*dt);
    void *v = malloc(bytes + 16);
    zc_spec s = spec_mem(256);
    CHECK_OK(zc_compute_buffer(&s, a, v, bytes, NULL));
    return v;
}

/* matmul of random operands with the given shapes and chunks, against the reference. */
static void check_matmul(zc_dtype t, shp sa, const int64_t *ca, shp sb, const int64_t *cb)
{
    void *a = random_buf(t, prod(sa.nd, sa.shape)), *b = random_buf(t, prod(sb.nd, sb.shape));
    zc_array *x = from(a, t, sa, ca), *y = from(b, t, sb, cb), *m = NULL;
    CHECK_OK(zc_matmul(x, y, &m));
    if (m) {
        size_t n;
        zc_dtype dt;
        void *got = compute(m, &n, &dt);
        shp so;
        size_t cap = 1 << 20;
        double complex *want = malloc(cap * sizeof *want);
        uint64_t *iwant = malloc(cap * sizeof *iwant);
        ref_matmul(t, a, sa, b, sb, want, iwant, &so);
        CHECK(dt == t);
        CHECK(n == prod(so.nd, so.shape));
        int bad = compare(t, got, want, iwant, n, sa.shape[sa.nd - 1]);
        if (bad) fprintf(stderr, "matmul %s: %d of %zu wrong\n", zc_dtype_name(t), bad, n);
        CHECK(bad == 0);
        free(got);
        free(want);
        free(iwant);
    }
    zc_array_release(x);
    zc_array_release(y);
    zc_array_release(m);
    free(a);
    free(b);
}

TEST(matmul_float64_over_chunkings)
{
    shp sa = {2, {37, 53}}, sb = {2, {53, 29}};
    const int64_t cs[][4] = {{37, 53, 53, 29}, {8, 5, 5, 7}, {10, 53, 53, 4}, {37, 4, 3, 29}, {1, 1, 1, 1}, {16, 7, 11, 9}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) check_matmul(ZC_FLOAT64, sa, cs[i], sb, cs[i] + 2);
    /* one output block, many contracted blocks: the contracted dim is split into groups */
    shp la = {2, {6, 900}}, lb = {2, {900, 5}};
    int64_t c1[2] = {6, 10}, c2[2] = {10, 5};
    check_matmul(ZC_FLOAT64, la, c1, lb, c2);
    /* the split shows in the plan as a partial-product stage and a sum */
    void *a = random_buf(ZC_FLOAT64, 6 * 900), *b = random_buf(ZC_FLOAT64, 900 * 5);
    zc_array *x = from(a, ZC_FLOAT64, la, c1), *y = from(b, ZC_FLOAT64, lb, c2), *m;
    CHECK_OK(zc_matmul(x, y, &m));
    zc_spec s = spec_mem(64);
    char *json = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &m, NULL, &json));
    CHECK(json && strstr(json, "\"matmul\"") && strstr(json, "\"sum\""));
    if (json) printf("%s\n", json);
    zc_free(json);
    zc_array_release(x); zc_array_release(y); zc_array_release(m);
    free(a); free(b);
}

TEST(matmul_dtypes)
{
    shp sa = {2, {19, 23}}, sb = {2, {23, 17}};
    int64_t ca[2] = {5, 4}, cb[2] = {6, 8};
    const zc_dtype ts[] = {ZC_FLOAT32, ZC_COMPLEX64, ZC_COMPLEX128, ZC_INT8, ZC_INT32, ZC_INT64, ZC_UINT16, ZC_UINT8, ZC_BOOL};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) check_matmul(ts[i], sa, ca, sb, cb);
    /* integers wrap (int8: 100*100*23 overflows) the same way whatever the chunks */
    shp la = {2, {3, 400}}, lb = {2, {400, 2}};
    int64_t c1[2] = {3, 7}, c2[2] = {7, 2}, c3[2] = {9, 2}; /* c2: split into partial products; c3: not */
    check_matmul(ZC_INT8, la, c1, lb, c2);
    check_matmul(ZC_INT64, la, c1, lb, c2);
    check_matmul(ZC_BOOL, la, c1, lb, c2);
    check_matmul(ZC_UINT8, la, c1, lb, c2);
    check_matmul(ZC_COMPLEX64, la, c1, lb, c2);
    check_matmul(ZC_INT8, la, c1, lb, c3);
    check_matmul(ZC_BOOL, la, c1, lb, c3);
}

TEST(matmul_mixed_and_float16)
{
    /* int32 @ float32 promotes like NumPy (float64); float16 is computed in float32 */
    int64_t sh[2] = {4, 3}, sh2[2] = {3, 2};
    int32_t ai[12];
    float bf[6];
    for (int i = 0; i < 12; i++) ai[i] = i - 5;
    for (int i = 0; i < 6; i++) bf[i] = 0.5f * (float)i - 1;
    zc_array *x, *y, *m;
    CHECK_OK(zc_asarray(ai, ZC_INT32, 2, sh, NULL, &x));
    CHECK_OK(zc_asarray(bf, ZC_FLOAT32, 2, sh2, NULL, &y));
    CHECK_OK(zc_matmul(x, y, &m));
    zc_dtype dt, want_dt, dts[2] = {ZC_INT32, ZC_FLOAT32};
    CHECK_OK(zc_result_type(2, dts, &want_dt));
    size_t n;
    double *got = compute(m, &n, &dt);
    CHECK(dt == want_dt && n == 8);
    CHECK(want_dt == ZC_FLOAT64); /* else the value checks below would not run */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += ai[i * 3 + k] * (double)bf[k * 2 + j];
            CHECK(dt != ZC_FLOAT64 || fabs(got[i * 2 + j] - s) < 1e-12);
        }
    free(got);
    zc_array_release(m);
    zc_array *h, *h2;
    CHECK_OK(zc_astype(y, ZC_FLOAT16, &h));
    CHECK_OK(zc_astype(x, ZC_FLOAT16, &h2));
    CHECK_OK(zc_matmul(h2, h, &m));
    zc_array *f;
    CHECK_OK(zc_astype(m, ZC_FLOAT64, &f));
    got = compute(f, &n, &dt);
    CHECK(n == 8);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += ai[i * 3 + k] * (double)bf[k * 2 + j];
            CHECK(fabs(got[i * 2 + j] - s) < 1e-2);
        }
    CHECK_OK(zc_array_info(m, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_FLOAT16);
    free(got);
    zc_array_release(f); zc_array_release(m); zc_array_release(h); zc_array_release(h2);
    zc_array_release(x); zc_array_release(y);
}

TEST(matmul_batch_broadcasting)
{
    shp sa = {4, {2, 1, 7, 6}}, sb = {3, {3, 6, 5}};
    int64_t ca[4] = {1, 1, 3, 4}, cb[3] = {2, 5, 2};
    check_matmul(ZC_FLOAT64, sa, ca, sb, cb);
    check_matmul(ZC_INT32, sa, ca, sb, cb);
    shp s2 = {3, {4, 5, 3}}, s3 = {2, {3, 2}};
    int64_t c2[3] = {3, 2, 3}, c3[2] = {1, 2};
    check_matmul(ZC_COMPLEX128, s2, c2, s3, c3);
    check_matmul(ZC_FLOAT64, s3, c3, (shp){3, {4, 2, 3}}, c2);
}

TEST(matmul_one_dimensional)
{
    double a[6] = {1, 2, 3, 4, 5, 6}, b[12];
    for (int i = 0; i < 12; i++) b[i] = i * 0.5 - 2;
    zc_array *v, *w, *M, *B3, *r;
    int64_t s1 = 6, s2[2] = {6, 2}, s3[3] = {1, 6, 2}, c1 = 4, c2[2] = {4, 1};
    CHECK_OK(zc_asarray(a, ZC_FLOAT64, 1, &s1, &c1, &v));
    CHECK_OK(zc_asarray(a, ZC_FLOAT64, 1, &s1, NULL, &w));
    CHECK_OK(zc_asarray(b, ZC_FLOAT64, 2, s2, c2, &M));
    CHECK_OK(zc_asarray(b, ZC_FLOAT64, 3, s3, NULL, &B3));
    int nd;
    int64_t shape[4];
    size_t n;
    zc_dtype dt;
    /* (6,) @ (6,) -> () */
    CHECK_OK(zc_matmul(v, w, &r));
    CHECK_OK(zc_array_info(r, &nd, NULL, NULL, NULL));
    CHECK(nd == 0);
    double *g = compute(r, &n, &dt);
    CHECK(n == 1 && g[0] == 91);
    free(g);
    zc_array_release(r);
    /* (6,) @ (6, 2) -> (2,) */
    CHECK_OK(zc_matmul(v, M, &r));
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 1 && shape[0] == 2);
    g = compute(r, &n, &dt);
    for (int j = 0; j < 2; j++) {
        double s = 0;
        for (int k = 0; k < 6; k++) s += a[k] * b[k * 2 + j];
        CHECK(fabs(g[j] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* (6, 2)^T @ (6,) -> (2,) */
    zc_array *Mt;
    CHECK_OK(zc_matrix_transpose(M, &Mt));
    CHECK_OK(zc_matmul(Mt, v, &r));
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 1 && shape[0] == 2);
    g = compute(r, &n, &dt);
    for (int j = 0; j < 2; j++) {
        double s = 0;
        for (int k = 0; k < 6; k++) s += a[k] * b[k * 2 + j];
        CHECK(fabs(g[j] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* (6,) @ (1, 6, 2) -> (1, 2) */
    CHECK_OK(zc_matmul(v, B3, &r));
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 2 && shape[0] == 1 && shape[1] == 2);
    g = compute(r, &n, &dt);
    CHECK(n == 2);
    for (int j = 0; j < 2 && j < (int)n; j++) {
        double s = 0;
        for (int k = 0; k < 6; k++) s += a[k] * b[k * 2 + j];
        CHECK(fabs(g[j] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    zc_array_release(Mt); zc_array_release(v); zc_array_release(w); zc_array_release(M); zc_array_release(B3);
}

TEST(matmul_chunk_independent)
{
    /* the same data under different chunkings: equal to rounding (floats), exactly (ints) */
    int64_t sa[2] = {40, 300}, sb[2] = {300, 30};
    zc_array *x, *y, *m;
    const int64_t cs[][4] = {{40, 300, 300, 30}, {7, 11, 13, 4}, {40, 3, 300, 30}};
    double *first = NULL;
    for (size_t c = 0; c < 3; c++) {
        CHECK_OK(zc_random_uniform(5, 2, sa, cs[c], ZC_FLOAT64, -1, 1, &x));
        CHECK_OK(zc_random_normal(6, 2, sb, cs[c] + 2, ZC_FLOAT64, 0, 1, &y));
        CHECK_OK(zc_matmul(x, y, &m));
        size_t n;
        zc_dtype dt;
        double *g = compute(m, &n, &dt);
        if (!first) first = g;
        else {
            double worst = 0;
            for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(g[i] - first[i]));
            CHECK(worst < 1e-11);
            free(g);
        }
        zc_array_release(x); zc_array_release(y); zc_array_release(m);
    }
    free(first);
}

TEST(tensordot_axes)
{
    shp sa = {3, {4, 5, 6}}, sb = {3, {5, 6, 3}};
    int64_t ca[3] = {3, 2, 4}, cb[3] = {5, 5, 2};
    double *a = random_buf(ZC_FLOAT64, 120), *b = random_buf(ZC_FLOAT64, 90);
    zc_array *x = from(a, ZC_FLOAT64, sa, ca), *y = from(b, ZC_FLOAT64, sb, cb), *r;
    int nd;
    int64_t shape[8];
    size_t n;
    zc_dtype dt;
    /* axes=2: (4,5,6) . (5,6,3) -> (4, 3) */
    CHECK_OK(zc_tensordot(x, y, 2, NULL, NULL, &r));
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 2 && shape[0] == 4 && shape[1] == 3);
    double *g = compute(r, &n, &dt);
    for (int i = 0; i < 4; i++)
        for (int l = 0; l < 3; l++) {
            double s = 0;
            for (int j = 0; j < 5; j++)
                for (int k = 0; k < 6; k++) s += a[i * 30 + j * 6 + k] * b[j * 18 + k * 3 + l];
            CHECK(fabs(g[i * 3 + l] - s) < 1e-12);
        }
    free(g);
    zc_array_release(r);
    /* pairs ([1, 2], [0, 1]) is the same; ([2, 1], [1, 0]) too */
    int p1[2] = {2, 1}, p2[2] = {1, 0};
    CHECK_OK(zc_tensordot(x, y, 2, p1, p2, &r));
    g = compute(r, &n, &dt);
    CHECK(n == 12);
    for (int i = 0; i < 4; i++) {
        double s = 0;
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 6; k++) s += a[i * 30 + j * 6 + k] * b[j * 18 + k * 3 + 0];
        CHECK(fabs(g[i * 3] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* one pair: axis 0 of x (4) with... axis 2 of y has size 3: refused */
    int q1 = 0, q2 = 2;
    CHECK_ERR(zc_tensordot(x, y, 1, &q1, &q2, &r), ZC_EINVAL, "tensordot: shapes (4, 5, 6) and (5, 6, 3) differ");
    q1 = 1;
    q2 = 0;
    CHECK_OK(zc_tensordot(x, y, 1, &q1, &q2, &r)); /* (4, 6, 6, 3) */
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 4 && shape[0] == 4 && shape[1] == 6 && shape[2] == 6 && shape[3] == 3);
    g = compute(r, &n, &dt);
    {
        int i = 3, k = 5, k2 = 4, l = 2;
        double s = 0;
        for (int j = 0; j < 5; j++) s += a[i * 30 + j * 6 + k] * b[j * 18 + k2 * 3 + l];
        CHECK(fabs(g[((i * 6 + k) * 6 + k2) * 3 + l] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* axes=0: outer product (4,5,6,5,6,3) */
    CHECK_OK(zc_tensordot(x, y, 0, NULL, NULL, &r));
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 6 && shape[0] == 4 && shape[1] == 5 && shape[2] == 6 && shape[3] == 5 && shape[4] == 6 &&
          shape[5] == 3);
    g = compute(r, &n, &dt);
    CHECK(n == 120 * 90);
    int outer_bad = 0;
    for (size_t i = 0; i < 120 && n == 120 * 90; i++)
        for (size_t j = 0; j < 90; j++) outer_bad += fabs(g[i * 90 + j] - a[i] * b[j]) >= 1e-12;
    CHECK(outer_bad == 0);
    free(g);
    zc_array_release(r);
    CHECK_ERR(zc_tensordot(x, y, 4, NULL, NULL, &r), ZC_EINVAL, "contracted axes");
    CHECK_ERR(zc_tensordot(x, y, 1, NULL, NULL, &r), ZC_EINVAL, "differ");
    q1 = 7;
    CHECK_ERR(zc_tensordot(x, y, 1, &q1, &q2, &r), ZC_EINVAL, "out of range");
    zc_array_release(x); zc_array_release(y);
    free(a); free(b);
}

TEST(vecdot_conjugates_and_broadcasts)
{
    shp sa = {2, {4, 5}}, sb = {1, {5}};
    double complex *a = random_buf(ZC_COMPLEX128, 20), *b = random_buf(ZC_COMPLEX128, 5);
    int64_t ca[2] = {3, 2};
    zc_array *x = from(a, ZC_COMPLEX128, sa, ca), *y = from(b, ZC_COMPLEX128, sb, NULL), *r;
    CHECK_OK(zc_vecdot(x, y, -1, &r));
    size_t n;
    zc_dtype dt;
    double complex *g = compute(r, &n, &dt);
    CHECK(n == 4 && dt == ZC_COMPLEX128);
    for (int i = 0; i < 4; i++) {
        double complex s = 0;
        for (int k = 0; k < 5; k++) s += conj(a[i * 5 + k]) * b[k];
        CHECK(cabs(g[i] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* axis 0 of (4, 5) with (4, 1): sizes along the axis agree, others broadcast */
    int64_t s41[2] = {4, 1};
    zc_array *z;
    CHECK_OK(zc_asarray(b, ZC_COMPLEX128, 2, s41, NULL, &z));
    CHECK_OK(zc_vecdot(x, z, 0, &r));
    g = compute(r, &n, &dt);
    CHECK(n == 5);
    for (int j = 0; j < 5; j++) {
        double complex s = 0;
        for (int i = 0; i < 4; i++) s += conj(a[i * 5 + j]) * b[i];
        CHECK(cabs(g[j] - s) < 1e-12);
    }
    free(g);
    zc_array_release(r);
    /* integers keep their dtype (wrapping), not sum's int64 */
    int8_t ia[4] = {100, 100, 3, -4}, ib[4] = {100, 2, 5, 6};
    int64_t s4 = 4;
    zc_array *xi, *yi;
    CHECK_OK(zc_asarray(ia, ZC_INT8, 1, &s4, NULL, &xi));
    CHECK_OK(zc_asarray(ib, ZC_INT8, 1, &s4, NULL, &yi));
    CHECK_OK(zc_vecdot(xi, yi, -1, &r));
    int8_t *gi = compute(r, &n, &dt);
    CHECK(dt == ZC_INT8 && n == 1 && gi[0] == (int8_t)(uint8_t)(10000 + 200 + 15 - 24));
    free(gi);
    zc_array_release(r);
    CHECK_ERR(zc_vecdot(x, z, -1, &r), ZC_EINVAL, "vecdot: shapes (4, 5) and (4, 1) differ along axis -1");
    CHECK_ERR(zc_vecdot(x, y, 1 - 3, &r), ZC_EINVAL, "out of range");
    CHECK_ERR(zc_vecdot(x, y, 2, &r), ZC_EINVAL, "out of range");
    zc_array_release(xi); zc_array_release(yi); zc_array_release(z);
    zc_array_release(x); zc_array_release(y);
    free(a); free(b);
}

TEST(outer_product)
{
    int32_t a[3] = {1, -2, 3}, b[4] = {5, 6, 7, 8};
    int64_t s3 = 3, s22[2] = {2, 2};
    zc_array *x, *y, *r;
    CHECK_OK(zc_asarray(a, ZC_INT32, 1, &s3, NULL, &x));
    CHECK_OK(zc_asarray(b, ZC_INT32, 2, s22, NULL, &y)); /* flattened, as NumPy does */
    CHECK_OK(zc_outer(x, y, &r));
    int nd;
    int64_t shape[4];
    CHECK_OK(zc_array_info(r, &nd, shape, NULL, NULL));
    CHECK(nd == 2 && shape[0] == 3 && shape[1] == 4);
    size_t n;
    zc_dtype dt;
    int32_t *g = compute(r, &n, &dt);
    CHECK(dt == ZC_INT32);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) CHECK(g[i * 4 + j] == a[i] * b[j]);
    free(g);
    zc_array_release(r); zc_array_release(x); zc_array_release(y);
}

TEST(matmul_bad_shapes)
{
    int64_t s23[2] = {2, 3}, s45[2] = {4, 5}, s3[1] = {3}, b1[3] = {2, 3, 4}, b2[3] = {3, 4, 5};
    zc_array *x, *y, *v, *bx, *by, *sc, *str, *r = NULL;
    CHECK_OK(zc_full(2, s23, NULL, ZC_FLOAT64, 1, &x));
    CHECK_OK(zc_full(2, s45, NULL, ZC_FLOAT64, 1, &y));
    CHECK_OK(zc_full(1, s3, NULL, ZC_FLOAT64, 1, &v));
    CHECK_OK(zc_full(3, b1, NULL, ZC_FLOAT64, 1, &bx));
    CHECK_OK(zc_full(3, b2, NULL, ZC_FLOAT64, 1, &by));
    CHECK_OK(zc_scalar(2, 0, &sc));
    CHECK_ERR(zc_matmul(x, y, &r), ZC_EINVAL, "matmul: shapes (2, 3) and (4, 5) do not align: 3 (last dim of x1) != 4");
    CHECK_ERR(zc_matmul(v, y, &r), ZC_EINVAL, "shapes (3,) and (4, 5) do not align");
    CHECK_ERR(zc_matmul(bx, by, &r), ZC_EINVAL, "matmul: batch dimensions of (2, 3, 4) and (3, 4, 5) do not broadcast");
    CHECK_ERR(zc_matmul(sc, x, &r), ZC_EINVAL, "at least one dimension");
    CHECK_ERR(zc_matmul(NULL, x, &r), ZC_EINVAL, "NULL");
    CHECK_ERR(zc_outer(NULL, x, &r), ZC_EINVAL, "NULL");
    char s[8] = "abcdef";
    int64_t one = 1;
    if (zc_asarray(s, ZC_BYTES, 1, &one, NULL, &str) == 0) {
        CHECK(zc_matmul(str, str, &r) < 0);
        zc_array_release(str);
    }
    CHECK(r == NULL);
    zc_array_release(x); zc_array_release(y); zc_array_release(v); zc_array_release(bx); zc_array_release(by);
    zc_array_release(sc);
}

TEST(matmul_operands_larger_than_allowed_mem)
{
    /* two 3000x3000 float64 operands (72 MB each) and their product under allowed_mem = 40 MB */
    int64_t shape[2] = {3000, 3000}, chunks[2] = {500, 500};
    zc_array *a, *b, *m;
    CHECK_OK(zc_random_uniform(21, 2, shape, chunks, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_random_uniform(22, 2, shape, chunks, ZC_FLOAT64, -1, 1, &b));
    /* on disk, so that the process holds only what tasks hold */
    char dir[] = "/tmp/zc_linalg_big_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    /* the operands stored first, so the product reads them back chunk by chunk */
    zc_spec s = spec_mem(40);
    s.nthreads = 2;
    zc_target ta[2] = {{st, "a", "none", 3}, {st, "b", "none", 3}};
    zc_array *ab[2] = {a, b};
    CHECK_OK(zc_compute(&s, 2, ab, ta, NULL));
    zc_array *sa, *sb;
    CHECK_OK(zc_from_zarr(st, "a", &sa));
    CHECK_OK(zc_from_zarr(st, "b", &sb));
    CHECK_OK(zc_matmul(sa, sb, &m));
    zc_target t = {st, "c", "none", 3};
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&s, 1, &m, &t, &rep));
    json_t *doc = report_checked(rep), *op; /* peak RSS within 2 x 40 MB + the reserve, with 144 MB of operands */
    size_t i;
    int matmuls = 0;
    json_array_foreach(json_object_get(doc, "operations"), i, op) {
        CHECK(json_integer_value(json_object_get(op, "projected_mem")) <= (json_int_t)(s.allowed_mem - s.reserved_mem));
        matmuls += !strcmp(json_string_value(json_object_get(op, "kind")) ? json_string_value(json_object_get(op, "kind")) : "", "matmul");
    }
    json_int_t peak = json_integer_value(json_object_get(doc, "peak_task_mem"));
    CHECK(peak > 0 && peak <= (json_int_t)s.allowed_mem);
    json_decref(doc);
    /* rows 0..3 and 2996..2999 against a direct product of the stored operands */
    zc_zarr *za, *zb, *zc;
    CHECK_OK(zc_zarr_open(st, "a", &za));
    CHECK_OK(zc_zarr_open(st, "b", &zb));
    CHECK_OK(zc_zarr_open(st, "c", &zc));
    double *B = malloc(sizeof(double) * 3000 * 3000), rowa[3000], rowc[3000];
    CHECK_OK(zc_zarr_read(zb, NULL, B, sizeof(double) * 3000 * 3000));
    const int rows[4] = {0, 3, 2996, 2999};
    for (int q = 0; q < 4; q++) {
        zc_range sel[2] = {{rows[q], rows[q] + 1, 1}, {0, 3000, 1}};
        CHECK_OK(zc_zarr_read(za, sel, rowa, sizeof rowa));
        CHECK_OK(zc_zarr_read(zc, sel, rowc, sizeof rowc));
        double worst = 0;
        for (int j = 0; j < 3000; j++) {
            double acc = 0;
            for (int k = 0; k < 3000; k++) acc += rowa[k] * B[(size_t)k * 3000 + (size_t)j];
            worst = fmax(worst, fabs(acc - rowc[j]));
        }
        CHECK(worst < 1e-9);
    }
    free(B);
    zc_zarr_close(za); zc_zarr_close(zb); zc_zarr_close(zc);
    (void)matmuls;
    zc_store_close(st);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    zc_array_release(m); zc_array_release(sa); zc_array_release(sb); zc_array_release(a); zc_array_release(b);
}

TEST(matmul_refused_when_a_step_does_not_fit)
{
    int64_t shape[2] = {4000, 4000}, chunks[2] = {2000, 2000};
    zc_array *a, *m;
    CHECK_OK(zc_random_uniform(1, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_matmul(a, a, &m));
    zc_spec s = spec_mem(64);
    zc_store *st;
    CHECK_OK(zc_store_open("memory://linalg-refuse", 0, &st));
    zc_target t = {st, "c", NULL, 3};
    CHECK_ERR(zc_compute(&s, 1, &m, &t, NULL), ZC_EMEMBOUND, "matmul");
    zc_store_close(st);
    zc_array_release(m); zc_array_release(a);
}

TEST(matmul_plan_runs_from_json)
{
    char dir[] = "/tmp/zc_linalg_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    int64_t sa[3] = {2, 30, 200}, ca[3] = {1, 7, 9}, sb[2] = {200, 11}, cb[2] = {13, 5};
    zc_array *x, *y, *m, *m2;
    CHECK_OK(zc_random_uniform(7, 3, sa, ca, ZC_FLOAT64, -1, 1, &x));
    CHECK_OK(zc_random_uniform(8, 2, sb, cb, ZC_FLOAT64, -1, 1, &y));
    CHECK_OK(zc_matmul(x, y, &m));
    /* and one with few output blocks (split contracted dim) */
    int64_t s1 = 200;
    zc_array *v;
    CHECK_OK(zc_random_uniform(9, 1, &s1, (int64_t[]){10}, ZC_FLOAT64, -1, 1, &v));
    CHECK_OK(zc_matmul(v, y, &m2));
    zc_array *outs[2] = {m, m2};
    size_t n, n2;
    zc_dtype dt;
    double *want = compute(m, &n, &dt), *want2 = compute(m2, &n2, &dt);
    zc_spec spec = spec_mem(64);
    char work[600], plan[600];
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    spec.work_dir = work;
    zc_target tg[2] = {{st, "out", "none", 3}, {st, "out2", "none", 3}};
    CHECK_OK(zc_plan_save(&spec, 2, outs, tg, plan));
    char *json;
    CHECK_OK(zc_plan_json(&spec, 2, outs, NULL, &json));
    int nops = 0;
    for (char *q = json; (q = strstr(q, "\"op\":")); q++) nops++;
    zc_free(json);
    for (int op = 0; op < nops; op++) {
        CHECK_OK(zc_plan_run(plan, op, 0, 1, 1));
        CHECK_OK(zc_plan_run(plan, op, 1, -1, 2));
    }
    /* a malformed matmul node is refused, not followed */
    {
        FILE *fp = fopen(plan, "r");
        static char text[1 << 20];
        size_t len = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
        text[len] = 0;
        if (fp) fclose(fp);
        char *k = strstr(text, "\"kstep\": ");
        CHECK(k != NULL);
        if (k) {
            char bad[1 << 20];
            snprintf(bad, sizeof bad, "%.*s-%s", (int)(k - text + 9), text, k + 9);
            char badplan[700];
            snprintf(badplan, sizeof badplan, "%s/bad.json", dir);
            fp = fopen(badplan, "w");
            if (fp) {
                fputs(bad, fp);
                fclose(fp);
            }
            CHECK(plan_resign(badplan) == 0);
            CHECK_ERR(zc_plan_run(badplan, 0, 0, -1, 1), ZC_EFORMAT, "matmul node is malformed");
            /* a step far beyond K (would overflow k0 + kstep) */
            snprintf(bad, sizeof bad, "%.*s4000000000000000%s", (int)(k - text + 9), text, k + 9);
            fp = fopen(badplan, "w");
            if (fp) {
                fputs(bad, fp);
                fclose(fp);
            }
            CHECK(plan_resign(badplan) == 0);
            CHECK_ERR(zc_plan_run(badplan, 0, 0, -1, 1), ZC_EFORMAT, "matmul node is malformed");
        }
    }
    zc_zarr *z;
    double *got = malloc(sizeof(double) * n);
    CHECK_OK(zc_zarr_open(st, "out", &z));
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof(double) * n));
    CHECK(!memcmp(got, want, sizeof(double) * n));
    zc_zarr_close(z);
    CHECK_OK(zc_zarr_open(st, "out2", &z));
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof(double) * n2));
    CHECK(!memcmp(got, want2, sizeof(double) * n2));
    zc_zarr_close(z);
    free(got); free(want); free(want2);
    zc_array_release(m); zc_array_release(m2); zc_array_release(v); zc_array_release(x); zc_array_release(y);
    zc_store_close(st);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

static long long matmul_projection(zc_array *m, size_t mb)
{
    zc_spec s = spec_mem(mb);
    char *json = NULL;
    long long proj = -1;
    if (zc_plan_json(&s, 1, &m, NULL, &json) == 0 && json) {
        const char *p = strstr(json, "\"kind\": \"matmul\"");
        const char *q = p ? strstr(p, "\"projected_mem\":") : NULL;
        if (q) proj = atoll(q + 16);
    }
    zc_free(json);
    return proj;
}

TEST(matmul_step_fitted_per_plan)
{
    /* the contracted step shrinks to fit a small bound, and a later plan with a larger
     * bound starts again from the step chosen when the product was made */
    int64_t sa[2] = {300, 4000}, ca[2] = {300, 100}, sb[2] = {4000, 50}, cb[2] = {100, 50};
    zc_array *x, *y, *m;
    CHECK_OK(zc_random_uniform(1, 2, sa, ca, ZC_FLOAT64, -1, 1, &x));
    CHECK_OK(zc_random_uniform(2, 2, sb, cb, ZC_FLOAT64, -1, 1, &y));
    CHECK_OK(zc_matmul(x, y, &m));
    long long big = matmul_projection(m, 256), small = matmul_projection(m, 3), again = matmul_projection(m, 256);
    CHECK(big > 0 && small > 0 && small < big && small <= 2 << 20 && again == big);
    /* the same values under both (to rounding) */
    size_t n;
    zc_dtype dt;
    double *v1 = compute(m, &n, &dt);
    zc_spec s = spec_mem(3);
    double *v2 = malloc(n * sizeof *v2);
    CHECK_OK(zc_compute_buffer(&s, m, v2, n * sizeof *v2, NULL));
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(v1[i] - v2[i]));
    CHECK(worst < 1e-11);
    free(v1); free(v2);
    /* an output block over the bound is refused, and the step is left as it was */
    CHECK(matmul_projection(m, 1) == -1);
    CHECK(matmul_projection(m, 256) == big);
    zc_array_release(m); zc_array_release(x); zc_array_release(y);
}

/* la_gemm_rows (c += a·b, a streamed: the AVX-512 kernel of the randomized SVD's
 * passes where the CPU has it) against a plain loop: row counts around its
 * 8-row blocks, widths around its 8-lane vectors up to 24 and past them (the
 * BLAS fallback), accumulating into c; the kernel is in use on a CPU with
 * AVX-512F for 1..24 columns. */
TEST(gemm_rows_kernel)
{
    static const int64_t ms[] = {1, 7, 8, 9, 17, 50}, ns[] = {1, 3, 8, 9, 16, 20, 24, 25, 40}, ks[] = {1, 5, 1000};
    uint64_t st = 12345;
    for (size_t im = 0; im < sizeof ms / sizeof *ms; im++)
        for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
            for (size_t ik = 0; ik < sizeof ks / sizeof *ks; ik++) {
                int64_t m = ms[im], n = ns[in], k = ks[ik];
                double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * n));
                double *c = malloc(sizeof(double) * (size_t)(m * n)), *r = malloc(sizeof(double) * (size_t)(m * n));
                for (int64_t i = 0; i < m * k; i++) a[i] = (double)((st = st * 6364136223846793005u + 1) >> 11) * 0x1p-53 - 0.5;
                for (int64_t i = 0; i < k * n; i++) b[i] = (double)((st = st * 6364136223846793005u + 1) >> 11) * 0x1p-53 - 0.5;
                for (int64_t i = 0; i < m * n; i++) c[i] = r[i] = (double)(i % 7) - 3;
                double scale = 0;
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        double t = 0, ab = 0;
                        for (int64_t p = 0; p < k; p++) t += a[i * k + p] * b[p * n + j], ab += fabs(a[i * k + p] * b[p * n + j]);
                        r[i * n + j] += t;
                        scale = fmax(scale, ab + 3);
                    }
                la_gemm_rows(m, n, k, a, b, c);
                double err = 0;
                for (int64_t i = 0; i < m * n; i++) err = fmax(err, fabs(c[i] - r[i]));
                if (err > 1e-14 * scale) fprintf(stderr, "gemm_rows %lld x %lld x %lld: error %.3e\n", (long long)m, (long long)n, (long long)k, err);
                CHECK(err <= 1e-14 * scale);
                free(a), free(b), free(c), free(r);
            }
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && !getenv("ZC_NO_AVX512")) CHECK(la_gemm_rows_fast(20) && la_gemm_rows_fast(24));
#endif
    CHECK(!la_gemm_rows_fast(25) && !la_gemm_rows_fast(0));
}
