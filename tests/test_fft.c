/* tests/test_fft.c — the fft extension against a direct DFT in long double:
 * every transform, norm, length (prime, power of two, mixed radix, cut and
 * padded), axis and chunking; in-core (FFTW per block) and four-step (forced by
 * a small bound or a cap on the lines of a task, with recursion), float32 and float64; round trips,
 * frequencies and shifts, plan reuse, saved plans, the memory contract and bad
 * arguments. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <complex.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kernels/fft.h"
#include "plan/array.h"

typedef int (*fft1_fn)(zc_array *, int64_t, int, const char *, zc_array **);
enum { K_FFT, K_IFFT, K_RFFT, K_IRFFT, K_HFFT, K_IHFFT };
static const fft1_fn FNS[] = {zc_fft_fft, zc_fft_ifft, zc_fft_rfft, zc_fft_irfft, zc_fft_hfft, zc_fft_ihfft};
static const char *const KNAMES[] = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"};

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53 * 2 - 1;
}

static zc_spec spec_default(void)
{
    zc_spec s = ZC_SPEC_INIT;
    s.nthreads = 2;
    return s;
}

/* Lines of at most `cap` points in one task, in every FFT of the graph under a
 * (the four-step and its recursion at sizes where a bound cannot force it:
 * a task's fixed bookkeeping alone is larger than those lines); 0: the bound's. */
static void cap_lines(zc_array *a, int64_t cap)
{
    if (a->kind == NODE_FFT && a->p.fft.expand) a->p.fft.line_cap = cap;
    for (int i = 0; i < a->ninputs; i++) cap_lines(a->inputs[i], cap);
}

static int64_t check_cap; /* check_one's cap_lines */

/* The direct DFT of one line: out_k = scale · Σ_j in_j exp(sign·2πi·jk/n), j < n (zero-padded). */
static void dft(const long double complex *in, int64_t m, int64_t n, int sign, int64_t nout, long double complex *out)
{
    for (int64_t k = 0; k < nout; k++) {
        long double complex s = 0;
        for (int64_t j = 0; j < n && j < m; j++) {
            int64_t r = (j * k) % n;
            long double t = sign * 2.0L * M_PI * (long double)r / (long double)n;
            s += in[j] * (cosl(t) + I * sinl(t));
        }
        out[k] = s;
    }
}

static double scale_of(const char *norm, int64_t n, int inverse)
{
    if (!norm || !strcmp(norm, "backward")) return inverse ? 1.0 / (double)n : 1;
    if (!strcmp(norm, "ortho")) return 1 / sqrt((double)n);
    return inverse ? 1 : 1.0 / (double)n;
}

/* Expected result of transform kind along axis of a (d0, d1, d2) complex array
 * (real kinds read the real part). Returns the output length along the axis. */
static int64_t reference(int kind, const double complex *x, const int64_t *shape, int axis, int64_t n,
                         const char *norm, double complex *y)
{
    int64_t m = shape[axis];
    bool c2r = kind == K_IRFFT || kind == K_HFFT;
    if (n < 0) n = c2r ? 2 * (m - 1) : m;
    int64_t nout = kind == K_RFFT || kind == K_IHFFT ? n / 2 + 1 : n;
    int64_t os[3] = {shape[0], shape[1], shape[2]};
    os[axis] = nout;
    long double complex *line = malloc(sizeof *line * (size_t)(n + m + 2)), *res = malloc(sizeof *res * (size_t)(n + 2));
    int inverse = kind == K_IFFT || kind == K_IRFFT || kind == K_IHFFT;
    double sc = scale_of(norm, n, inverse);
    int64_t st[3] = {shape[1] * shape[2], shape[2], 1}, ost[3] = {os[1] * os[2], os[2], 1};
    int64_t cnt = shape[0] * shape[1] * shape[2] / (m ? m : 1);
    for (int64_t L = 0; L < cnt; L++) {
        /* line L: the other two coordinates */
        int64_t c[3] = {0, 0, 0}, rem = L;
        for (int d = 2; d >= 0; d--) {
            if (d == axis) continue;
            c[d] = rem % shape[d];
            rem /= shape[d];
        }
        int64_t base = c[0] * st[0] + c[1] * st[1] + c[2] * st[2], obase = c[0] * ost[0] + c[1] * ost[1] + c[2] * ost[2];
        for (int64_t j = 0; j < m; j++) {
            double complex v = x[base + j * st[axis]];
            if (kind == K_RFFT || kind == K_IHFFT) v = creal(v);
            line[j] = v;
        }
        if (c2r) {
            /* Hermitian spectrum of length n from the first n/2+1 values (hfft: conjugated) */
            int64_t h = n / 2 + 1;
            long double complex *full = malloc(sizeof *full * (size_t)n);
            for (int64_t k = 0; k < n; k++) {
                long double complex v;
                if (k < h) v = k < m ? line[k] : 0;
                else v = n - k < m ? conjl(line[n - k]) : 0;
                full[k] = kind == K_HFFT ? conjl(v) : v;
            }
            dft(full, n, n, +1, n, res);
            for (int64_t k = 0; k < n; k++) y[obase + k * ost[axis]] = (double)creall(res[k]) * sc;
            free(full);
            continue;
        }
        int sign = kind == K_FFT || kind == K_RFFT ? -1 : +1;
        dft(line, m, n, sign, nout, res);
        for (int64_t k = 0; k < nout; k++) {
            long double complex v = res[k] * sc; /* ihfft = conj(rfft) = the +i transform */
            y[obase + k * ost[axis]] = (double complex)v;
        }
    }
    free(line);
    free(res);
    return nout;
}

/* Max |a - b| / max |b| over n values (complex or real). */
static double rel_err(const double complex *ref, const void *got, size_t n, zc_dtype dt)
{
    double num = 0, den = 1e-300;
    for (size_t i = 0; i < n; i++) {
        double complex g;
        switch (dt) {
        case ZC_COMPLEX128: g = ((const double complex *)got)[i]; break;
        case ZC_COMPLEX64: g = ((const float complex *)got)[i]; break;
        case ZC_FLOAT64: g = ((const double *)got)[i]; break;
        default: g = ((const float *)got)[i]; break;
        }
        if (cabs(g - ref[i]) > num) num = cabs(g - ref[i]);
        if (cabs(ref[i]) > den) den = cabs(ref[i]);
    }
    return num / den;
}

/* Random input of shape (3-D, some dims 1) as dtype, and its complex values. */
static zc_array *make_input(const int64_t *shape, const int64_t *chunks, zc_dtype dt, double complex *vals)
{
    size_t n = (size_t)(shape[0] * shape[1] * shape[2]);
    size_t isz = dt == ZC_COMPLEX128 ? 16 : dt == ZC_COMPLEX64 || dt == ZC_FLOAT64 || dt == ZC_INT64 ? 8 : 4;
    unsigned char *buf = malloc(n * isz);
    for (size_t i = 0; i < n; i++) {
        double re = urand(), im = urand();
        if (dt == ZC_INT32 || dt == ZC_INT64) re = floor(re * 100), im = 0;
        switch (dt) {
        case ZC_COMPLEX128: { double complex v = re + I * im; memcpy(buf + i * 16, &v, 16); vals[i] = v; break; }
        case ZC_COMPLEX64: { float complex v = (float)re + I * (float)im; memcpy(buf + i * 8, &v, 8); vals[i] = v; break; }
        case ZC_FLOAT64: memcpy(buf + i * 8, &re, 8); vals[i] = re; break;
        case ZC_FLOAT32: { float f = (float)re; memcpy(buf + i * 4, &f, 4); vals[i] = f; break; }
        case ZC_INT32: { int32_t v = (int32_t)re; memcpy(buf + i * 4, &v, 4); vals[i] = v; break; }
        default: { int64_t v = (int64_t)re; memcpy(buf + i * 8, &v, 8); vals[i] = (double)v; break; }
        }
    }
    zc_array *a = NULL;
    CHECK_OK(zc_asarray(buf, dt, 3, shape, chunks, &a));
    free(buf);
    return a;
}

static size_t dtype_size(zc_dtype t)
{
    return t == ZC_COMPLEX128 ? 16 : t == ZC_COMPLEX64 || t == ZC_FLOAT64 ? 8 : 4;
}

/* One transform vs the reference; returns the relative error (or 1 on failure). */
static double check_one(int kind, zc_dtype dt, const int64_t *shape, const int64_t *chunks, int axis, int64_t n,
                        const char *norm)
{
    size_t total = (size_t)(shape[0] * shape[1] * shape[2]);
    double complex *x = malloc(sizeof *x * total);
    zc_array *a = make_input(shape, chunks, dt, x), *f = NULL;
    if (!a) return 1;
    int rc = FNS[kind](a, n, axis - 3, norm, &f); /* negative axis on purpose */
    if (rc == 0) cap_lines(f, check_cap);
    double err = 1;
    if (rc != 0) {
        fprintf(stderr, "%s failed: %s\n", KNAMES[kind], zc_errmsg());
    } else {
        int64_t os[ZC_MAX_DIMS];
        zc_dtype odt;
        int nd;
        CHECK_OK(zc_array_info(f, &nd, os, NULL, &odt));
        size_t on = (size_t)(os[0] * os[1] * os[2]);
        double complex *ref = malloc(sizeof *ref * (on + 1));
        int64_t nout = reference(kind, x, shape, axis, n, norm, ref);
        CHECK(nout == os[axis]);
        void *got = malloc(on * dtype_size(odt) + 1);
        zc_spec s = spec_default();
        if (check_cap > 0) { /* the four-step indeed: more than a rechunk and one transform */
            char *json = NULL;
            int ops = 0;
            CHECK_OK(zc_plan_json(&s, 1, &f, NULL, &json));
            for (char *q = json; q && (q = strstr(q, "\"op\":")); q++) ops++;
            CHECK(ops >= 3);
            zc_free(json);
        }
        CHECK_OK(zc_compute_buffer(&s, f, got, on * dtype_size(odt), NULL));
        err = rel_err(ref, got, on, odt);
        free(ref);
        free(got);
    }
    zc_array_release(f);
    zc_array_release(a);
    free(x);
    return err;
}

static const int64_t LENGTHS[] = {1, 2, 7, 13, 16, 64, 12, 30, 60, 97, 100, 128};

TEST(fft_all_kinds_match_direct_dft_float64)
{
    const char *norms[] = {NULL, "backward", "ortho", "forward"};
    int cases = 0, bad = 0;
    for (int t = 0; t < 60; t++) {
        int kind = t % 6, axis = (int)((urand() + 1) * 1.5) % 3;
        int64_t shape[3] = {3, 4, 5}, chunks[3];
        shape[axis] = LENGTHS[(t * 7 + 3) % 12];
        if (kind == K_IRFFT || kind == K_HFFT) shape[axis] = shape[axis] / 2 + 2;
        for (int d = 0; d < 3; d++) chunks[d] = 1 + (int64_t)((urand() + 1) / 2 * (double)shape[d]) % shape[d];
        int64_t n = t % 3 == 0 ? -1 : t % 3 == 1 ? LENGTHS[t % 12] + 1 : LENGTHS[(t + 5) % 12];
        if (n == 1 && (kind == K_IRFFT || kind == K_HFFT)) n = 2;
        zc_dtype dt = kind == K_RFFT || kind == K_IHFFT ? (t % 4 == 0 ? ZC_INT32 : ZC_FLOAT64) : ZC_COMPLEX128;
        double e = check_one(kind, dt, shape, chunks, axis, n, norms[t % 4]);
        cases++;
        if (e > 1e-12) {
            bad++;
            fprintf(stderr, "%s shape (%lld,%lld,%lld) axis %d n %lld norm %s: rel err %g\n", KNAMES[kind],
                    (long long)shape[0], (long long)shape[1], (long long)shape[2], axis, (long long)n,
                    norms[t % 4] ? norms[t % 4] : "NULL", e);
        }
    }
    /* several batches of lines per task, padded: c2r overwrites its input, the padding must be restored */
    for (int kind = 0; kind < 6; kind++) {
        double e = check_one(kind, kind == K_RFFT || kind == K_IHFFT ? ZC_FLOAT64 : ZC_COMPLEX128,
                             (int64_t[]){2, 1500, 5}, (int64_t[]){2, 1500, 5}, 1 + (kind & 1), 64 + kind, "ortho");
        cases++;
        if (e > 1e-12) {
            bad++;
            fprintf(stderr, "%s over several batches: rel err %g\n", KNAMES[kind], e);
        }
    }
    printf("%d cases, %d over 1e-12\n", cases, bad);
    CHECK(bad == 0);
}

TEST(fft_all_kinds_match_direct_dft_float32)
{
    int bad = 0;
    for (int t = 0; t < 24; t++) {
        int kind = t % 6, axis = t % 3;
        int64_t shape[3] = {2, 3, 4}, chunks[3] = {1, 2, 3};
        shape[axis] = LENGTHS[(t * 5 + 1) % 12] + 1;
        zc_dtype dt = kind == K_RFFT || kind == K_IHFFT ? ZC_FLOAT32 : ZC_COMPLEX64;
        double e = check_one(kind, dt, shape, chunks, axis, -1, t % 2 ? "ortho" : NULL);
        if (e > 1e-5) {
            bad++;
            fprintf(stderr, "float32 %s axis %d len %lld: rel err %g\n", KNAMES[kind], axis, (long long)shape[axis], e);
        }
    }
    CHECK(bad == 0);
    /* dtypes of results */
    int64_t sh[1] = {8};
    zc_array *a, *f;
    zc_dtype dt;
    CHECK_OK(zc_full(1, sh, NULL, ZC_FLOAT32, 1, &a));
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &f));
    CHECK_OK(zc_array_info(f, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_COMPLEX64);
    zc_array_release(f);
    CHECK_OK(zc_fft_irfft(a, -1, 0, NULL, &f));
    CHECK_OK(zc_array_info(f, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_FLOAT32);
    zc_array_release(f);
    zc_array_release(a);
    CHECK_OK(zc_full(1, sh, NULL, ZC_INT16, 1, &a));
    CHECK_OK(zc_fft_rfft(a, -1, 0, NULL, &f));
    CHECK_OK(zc_array_info(f, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_COMPLEX128);
    zc_array_release(f);
    zc_array_release(a);
}

TEST(four_step_matches_direct_dft)
{
    /* a line budget of 64 complex128 elements: 4096 = 64 × 64 (one level), 1536 = 32 × 48 */
    check_cap = 64;
    const struct { int kind; int64_t len, n; int axis; const char *norm; } cases[] = {
        {K_FFT, 4096, -1, 2, NULL},     {K_IFFT, 1536, -1, 1, "ortho"}, {K_FFT, 1000, 1536, 2, "forward"},
        {K_RFFT, 1536, -1, 2, NULL},    {K_IRFFT, 769, -1, 2, "ortho"}, {K_HFFT, 300, 1024, 1, NULL},
        {K_IHFFT, 4096, -1, 2, NULL},   {K_FFT, 2 * 3 * 5 * 7 * 11, -1, 0, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t shape[3] = {1, 1, 1}, chunks[3] = {1, 1, 100};
        shape[cases[c].axis] = cases[c].len;
        if (cases[c].axis != 2) shape[2] = 3;
        chunks[cases[c].axis] = 100;
        zc_dtype dt = cases[c].kind == K_RFFT || cases[c].kind == K_IHFFT ? ZC_FLOAT64 : ZC_COMPLEX128;
        double e = check_one(cases[c].kind, dt, shape, chunks, cases[c].axis, cases[c].n, cases[c].norm);
        printf("four-step %s len %lld: rel err %g\n", KNAMES[cases[c].kind], (long long)cases[c].len, e);
        CHECK(e < 1e-12);
    }
    check_cap = 0;
}

TEST(four_step_recurses_and_bluestein_for_primes)
{
    /* line budget 16: 4096 = 64 × 64 and each 64 = 8 × 8 again */
    check_cap = 16;
    double e = 0;
    int64_t shape[3] = {1, 1, 4096}, chunks[3] = {1, 1, 256};
    e = check_one(K_FFT, ZC_COMPLEX128, shape, chunks, 2, -1, NULL);
    printf("recursive four-step: rel err %g\n", e);
    CHECK(e < 1e-12);
    /* the plan has twiddle-only nodes and no FFT line longer than 16 */
    zc_array *a, *f;
    CHECK_OK(zc_full(1, (int64_t[]){4096}, NULL, ZC_COMPLEX128, 1, &a));
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &f));
    cap_lines(f, 16);
    zc_spec s = spec_default();
    char *json = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &f, NULL, &json));
    CHECK(json && strstr(json, "twiddle"));
    zc_free(json);
    zc_array_release(f);
    /* a prime too long for a task goes through Bluestein (a convolution of length
     * 8192 by three four-step transforms); 4100 = 100 × 41 has a prime factor over 16 */
    int64_t ps[3] = {1, 2, 4099}, pc[3] = {1, 1, 1000};
    e = check_one(K_FFT, ZC_COMPLEX128, ps, pc, 2, -1, "ortho");
    printf("Bluestein 4099: rel err %g\n", e);
    CHECK(e < 1e-12);
    e = check_one(K_IFFT, ZC_COMPLEX128, ps, pc, 2, 4100, NULL);
    printf("four-step 4100 = 100 x 41 with Bluestein for 41: rel err %g\n", e);
    CHECK(e < 1e-12);
    e = check_one(K_IHFFT, ZC_FLOAT64, (int64_t[]){1, 1, 1031}, pc, 2, -1, "forward");
    printf("ihfft through Bluestein 1031: rel err %g\n", e);
    CHECK(e < 1e-12);
    zc_array *p;
    CHECK_OK(zc_full(1, (int64_t[]){4099}, NULL, ZC_COMPLEX128, 1, &p));
    CHECK_OK(zc_fft_fft(p, -1, 0, NULL, &f));
    zc_array_release(f);
    zc_array_release(p);
    zc_array_release(a);
    check_cap = 0;
}

TEST(round_trips)
{
    int64_t shape[3] = {6, 35, 8}, chunks[3] = {4, 10, 3};
    double complex *x = malloc(sizeof *x * 6 * 35 * 8);
    for (int pass = 0; pass < 2; pass++) {
        zc_array *a = make_input(shape, chunks, ZC_COMPLEX128, x), *f, *b, *r, *ir, *h, *ih;
        CHECK_OK(zc_fft_fft(a, -1, 1, "ortho", &f));
        CHECK_OK(zc_fft_ifft(f, -1, 1, "ortho", &b));
        cap_lines(b, 8 * pass); /* pass 1: four-step along 35 = 5 × 7 */
        double complex *got = malloc(sizeof *got * 6 * 35 * 8);
        zc_spec s = spec_default();
        CHECK_OK(zc_compute_buffer(&s, b, got, sizeof *got * 6 * 35 * 8, NULL));
        CHECK(rel_err(x, got, 6 * 35 * 8, ZC_COMPLEX128) < 1e-13);
        /* irfft(rfft(re)) with odd n, and ihfft(hfft) */
        zc_array *re;
        CHECK_OK(zc_elementwise("real", 1, &a, &re));
        CHECK_OK(zc_fft_rfft(re, -1, 1, NULL, &r));
        CHECK_OK(zc_fft_irfft(r, 35, 1, NULL, &ir));
        cap_lines(ir, 8 * pass);
        double *gr = malloc(sizeof *gr * 6 * 35 * 8);
        double complex *xr = malloc(sizeof *xr * 6 * 35 * 8);
        for (int i = 0; i < 6 * 35 * 8; i++) xr[i] = creal(x[i]);
        CHECK_OK(zc_compute_buffer(&s, ir, gr, sizeof *gr * 6 * 35 * 8, NULL));
        CHECK(rel_err(xr, gr, 6 * 35 * 8, ZC_FLOAT64) < 1e-13);
        CHECK_OK(zc_fft_ihfft(re, -1, 1, NULL, &ih));
        CHECK_OK(zc_fft_hfft(ih, 35, 1, NULL, &h));
        cap_lines(h, 8 * pass);
        CHECK_OK(zc_compute_buffer(&s, h, gr, sizeof *gr * 6 * 35 * 8, NULL));
        CHECK(rel_err(xr, gr, 6 * 35 * 8, ZC_FLOAT64) < 1e-13);
        free(gr); free(xr); free(got);
        zc_array_release(re); zc_array_release(r); zc_array_release(ir); zc_array_release(h); zc_array_release(ih);
        zc_array_release(f); zc_array_release(b); zc_array_release(a);
    }
    free(x);
}

TEST(fftn_rfftn_irfftn)
{
    int64_t shape[3] = {4, 6, 10}, chunks[3] = {2, 6, 3};
    size_t n = 4 * 6 * 10;
    double complex *x = malloc(sizeof *x * n), *ref = malloc(sizeof *ref * n * 2), *tmp = malloc(sizeof *tmp * n * 2);
    zc_array *a = make_input(shape, chunks, ZC_COMPLEX128, x), *f, *b;
    /* fftn over axes (0, 2) = fft along 0 then along 2 */
    CHECK_OK(zc_fft_fftn(a, NULL, 0, (int[]){0, -1}, 2, NULL, &f));
    reference(K_FFT, x, shape, 0, -1, NULL, tmp);
    reference(K_FFT, tmp, shape, 2, -1, NULL, ref);
    double complex *got = malloc(sizeof *got * n * 2);
    zc_spec s = spec_default();
    CHECK_OK(zc_compute_buffer(&s, f, got, sizeof *got * n, NULL));
    CHECK(rel_err(ref, got, n, ZC_COMPLEX128) < 1e-12);
    CHECK_OK(zc_fft_ifftn(f, NULL, 0, (int[]){0, 2}, 2, NULL, &b));
    CHECK_OK(zc_compute_buffer(&s, b, got, sizeof *got * n, NULL));
    CHECK(rel_err(x, got, n, ZC_COMPLEX128) < 1e-13);
    zc_array_release(f);
    zc_array_release(b);
    /* rfftn over all axes of the real part, s = (4, 6, 8): then irfftn back with s */
    zc_array *re, *rf, *irf;
    CHECK_OK(zc_elementwise("real", 1, &a, &re));
    CHECK_OK(zc_fft_rfftn(re, (int64_t[]){4, 6, 10}, 3, NULL, 0, "ortho", &rf));
    int64_t rs[ZC_MAX_DIMS];
    CHECK_OK(zc_array_info(rf, NULL, rs, NULL, NULL));
    CHECK(rs[0] == 4 && rs[1] == 6 && rs[2] == 6);
    CHECK_OK(zc_fft_irfftn(rf, (int64_t[]){4, 6, 10}, 3, NULL, 0, "ortho", &irf));
    double *gr = malloc(sizeof *gr * n);
    double complex *xr = malloc(sizeof *xr * n);
    for (size_t i = 0; i < n; i++) xr[i] = creal(x[i]);
    CHECK_OK(zc_compute_buffer(&s, irf, gr, sizeof *gr * n, NULL));
    CHECK(rel_err(xr, gr, n, ZC_FLOAT64) < 1e-13);
    /* rfftn values: rfft along the last axis, fft along the others */
    int64_t s2[3] = {4, 6, 6};
    reference(K_RFFT, x, shape, 2, -1, "ortho", ref);
    reference(K_FFT, ref, s2, 0, -1, "ortho", tmp);
    reference(K_FFT, tmp, s2, 1, -1, "ortho", ref);
    CHECK_OK(zc_compute_buffer(&s, rf, got, sizeof *got * 4 * 6 * 6, NULL));
    CHECK(rel_err(ref, got, 4 * 6 * 6, ZC_COMPLEX128) < 1e-12);
    free(gr); free(xr); free(got); free(x); free(ref); free(tmp);
    zc_array_release(re); zc_array_release(rf); zc_array_release(irf); zc_array_release(a);
}

TEST(fftfreq_rfftfreq_shift)
{
    zc_array *f, *r, *sh, *ish;
    zc_spec s = spec_default();
    for (int64_t n = 1; n <= 9; n++) {
        CHECK_OK(zc_fft_fftfreq(n, 0.5, ZC_DTYPE_INVALID, &f));
        CHECK_OK(zc_fft_rfftfreq(n, 0.5, ZC_DTYPE_INVALID, &r));
        CHECK_OK(zc_fft_fftshift(f, NULL, 0, &sh));
        CHECK_OK(zc_fft_ifftshift(sh, NULL, 0, &ish));
        double v[16], w[16], u[16], z[16];
        CHECK_OK(zc_compute_buffer(&s, f, v, sizeof(double) * (size_t)n, NULL));
        CHECK_OK(zc_compute_buffer(&s, r, w, sizeof(double) * (size_t)(n / 2 + 1), NULL));
        CHECK_OK(zc_compute_buffer(&s, sh, u, sizeof(double) * (size_t)n, NULL));
        CHECK_OK(zc_compute_buffer(&s, ish, z, sizeof(double) * (size_t)n, NULL));
        double val = 1.0 / ((double)n * 0.5);
        for (int64_t i = 0; i < n; i++) {
            int64_t k = i < (n + 1) / 2 ? i : i - n;
            CHECK(v[i] == (double)k * val);
            CHECK(z[i] == v[i]);
            /* shifted: ascending from -(n/2) */
            CHECK(u[i] == (double)(i - n / 2) * val);
        }
        for (int64_t i = 0; i <= n / 2; i++) CHECK(w[i] == (double)i * val);
        zc_array_release(f); zc_array_release(r); zc_array_release(sh); zc_array_release(ish);
    }
    /* fftshift along one axis of a 2-D array */
    int64_t shape[2] = {3, 4};
    zc_array *a, *b;
    CHECK_OK(zc_arange(0, 12, 1, ZC_FLOAT64, 0, &a));
    CHECK_OK(zc_reshape(a, 2, shape, &b));
    CHECK_OK(zc_fft_fftshift(b, (int[]){-1}, 1, &sh));
    double v[12];
    CHECK_OK(zc_compute_buffer(&s, sh, v, sizeof v, NULL));
    CHECK(v[0] == 2 && v[1] == 3 && v[2] == 0 && v[3] == 1 && v[4] == 6);
    zc_array_release(sh); zc_array_release(b); zc_array_release(a);
    CHECK_ERR(zc_fft_fftfreq(0, 1, ZC_DTYPE_INVALID, &f), ZC_EINVAL, "n must be >= 1");
    CHECK_ERR(zc_fft_fftfreq(4, 0, ZC_DTYPE_INVALID, &f), ZC_EINVAL, "d must be");
    CHECK_ERR(zc_fft_rfftfreq(4, 1, ZC_INT32, &f), ZC_EINVAL, "dtype");
}

TEST(bad_arguments)
{
    zc_array *a, *i, *c, *f = NULL;
    CHECK_OK(zc_full(2, (int64_t[]){4, 6}, NULL, ZC_FLOAT64, 1, &a));
    CHECK_OK(zc_full(2, (int64_t[]){4, 6}, NULL, ZC_INT32, 1, &i));
    CHECK_OK(zc_full(2, (int64_t[]){4, 6}, NULL, ZC_COMPLEX128, 1, &c));
    CHECK_ERR(zc_fft_fft(a, -1, 2, NULL, &f), ZC_EINVAL, "axis 2 is out of range");
    CHECK_ERR(zc_fft_fft(a, -1, -3, NULL, &f), ZC_EINVAL, "axis -3 is out of range");
    CHECK_ERR(zc_fft_fft(a, 0, 0, NULL, &f), ZC_EINVAL, "invalid number of data points (0)");
    CHECK_ERR(zc_fft_rfft(a, -5, 0, NULL, &f), ZC_EINVAL, "n must be >= 1");
    CHECK_ERR(zc_fft_fft(a, -1, 0, "sideways", &f), ZC_EINVAL, "norm must be");
    CHECK_ERR(zc_fft_irfft(i, -1, 0, NULL, &f), ZC_EINVAL, "floating-point or complex");
    CHECK_ERR(zc_fft_hfft(i, -1, 0, NULL, &f), ZC_EINVAL, "floating-point or complex");
    CHECK_ERR(zc_fft_rfft(c, -1, 0, NULL, &f), ZC_EINVAL, "needs a real array");
    CHECK_ERR(zc_fft_ihfft(c, -1, 0, NULL, &f), ZC_EINVAL, "needs a real array");
    CHECK_ERR(zc_fft_fftn(a, (int64_t[]){4, 6}, 2, (int[]){0}, 1, NULL, &f), ZC_EINVAL, "must match");
    CHECK_ERR(zc_fft_fftn(a, NULL, 0, (int[]){1, -1}, 2, NULL, &f), ZC_EINVAL, "repeated");
    CHECK_ERR(zc_fft_fftn(a, NULL, 0, (int[]){0, 5}, 2, NULL, &f), ZC_EINVAL, "out of range");
    CHECK_ERR(zc_fft_fftshift(a, (int[]){3}, 1, &f), ZC_EINVAL, "out of range");
    CHECK_ERR(zc_fft_fft(NULL, -1, 0, NULL, &f), ZC_EINVAL, "NULL");
    zc_array *z;
    CHECK_OK(zc_full(0, NULL, NULL, ZC_FLOAT64, 1, &z));
    CHECK_ERR(zc_fft_fft(z, -1, 0, NULL, &f), ZC_EINVAL, "0-d");
    /* irfft of an irfft-able input of length 1 with the default n = 0 */
    zc_array *one;
    CHECK_OK(zc_full(1, (int64_t[]){1}, NULL, ZC_COMPLEX128, 1, &one));
    CHECK_ERR(zc_fft_irfft(one, -1, 0, NULL, &f), ZC_EINVAL, "invalid number of data points (0)");
    CHECK(f == NULL);
    zc_array_release(one); zc_array_release(z);
    zc_array_release(a); zc_array_release(i); zc_array_release(c);
}

TEST(plans_are_reused_across_tasks)
{
    int64_t shape[2] = {64, 48}, chunks[2] = {4, 48};
    zc_array *a, *f;
    CHECK_OK(zc_random_uniform(3, 2, shape, chunks, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_fft_rfft(a, 40, 1, NULL, &f));
    zc_spec s = spec_default();
    static double complex out[64 * 21];
    CHECK_OK(zc_compute_buffer(&s, f, out, sizeof out, NULL));
    int plans = fftk_plan_count();
    CHECK(plans >= 1);
    /* 16 tasks ran; a second computation of the same shapes plans nothing new */
    CHECK_OK(zc_compute_buffer(&s, f, out, sizeof out, NULL));
    CHECK(fftk_plan_count() == plans);
    zc_array_release(f);
    zc_array_release(a);
}

TEST(saved_plan_with_fft_runs_in_workers)
{
    char dir[] = "/tmp/zc_fftw_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_array *a, *f, *g;
    CHECK_OK(zc_random_normal(5, 2, (int64_t[]){3, 1024}, (int64_t[]){3, 100}, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_fft_rfft(a, -1, 1, "ortho", &f));
    CHECK_OK(zc_fft_irfft(f, 1024, 1, "ortho", &g));
    cap_lines(g, 16); /* four-step: twiddles and transposes in the plan */
    zc_spec spec = ZC_SPEC_INIT;
    char work[600], plan[600];
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    spec.work_dir = work;
    zc_target t = {st, "g", NULL, 3};
    CHECK_OK(zc_plan_save(&spec, 1, &g, &t, plan));
    char *json = NULL;
    CHECK_OK(zc_plan_json(&spec, 1, &g, NULL, &json));
    int nops = 0;
    for (char *p = json; p && (p = strstr(p, "\"op\":")); p++) nops++;
    zc_free(json);
    for (int op = 0; op < nops; op++) CHECK_OK(zc_plan_run(plan, op, 0, -1, 1));
    /* a plan whose FFT node does not fit its dtypes (c2c made r2c) is refused before any work */
    FILE *fp = fopen(plan, "rb");
    static char text[1 << 20];
    size_t len = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
    if (fp) fclose(fp);
    text[len] = 0;
    char *k = strstr(text, "\"kind\": 0");
    CHECK(k != NULL);
    if (k) {
        k[8] = '2';
        char bad[700];
        snprintf(bad, sizeof bad, "%s/bad.json", dir);
        fp = fopen(bad, "wb");
        CHECK(fp && fwrite(text, 1, len, fp) == len);
        if (fp) fclose(fp);
        CHECK(plan_resign(bad) == 0);
        CHECK_ERR(zc_plan_run(bad, 0, 0, -1, 1), ZC_EFORMAT, "fft node");
        k[8] = '0';
    }
    /* a twiddle whose sign is not +-1 (fuzzing.md #14: it computed other twiddles, silently) */
    char *tw = strstr(text, "\"tw_sign\": -1");
    if (!tw) tw = strstr(text, "\"tw_sign\": 1");
    CHECK(tw != NULL);
    if (tw) {
        char *v = strchr(tw, ':') + 2; /* "-1" -> " 5", "1" -> "5": the same length */
        if (v[0] == '-') *v++ = ' ';
        *v = '5';
        char bad[700];
        snprintf(bad, sizeof bad, "%s/bad-sign.json", dir);
        fp = fopen(bad, "wb");
        CHECK(fp && fwrite(text, 1, len, fp) == len);
        if (fp) fclose(fp);
        CHECK(plan_resign(bad) == 0); /* the checksum made again: the node's check is what refuses it */
        int rc = 0;
        for (int op = 0; op < nops && rc == 0; op++) rc = zc_plan_run(bad, op, 0, -1, 1);
        if (rc != ZC_EFORMAT || !strstr(zc_errmsg(), "fft node")) fprintf(stderr, "tw_sign 5: %s\n", zc_errmsg());
        CHECK(rc == ZC_EFORMAT && strstr(zc_errmsg(), "fft node"));
    }
    static double want[3 * 1024], got[3 * 1024];
    zc_spec s = spec_default();
    CHECK_OK(zc_compute_buffer(&s, a, want, sizeof want, NULL));
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "g", &z));
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof got));
    double e = 0;
    for (int i = 0; i < 3 * 1024; i++) e = fmax(e, fabs(got[i] - want[i]));
    printf("worker round trip max err %g over %d operations\n", e, nops);
    CHECK(e < 1e-12);
    zc_zarr_close(z);
    zc_store_close(st);
    zc_array_release(a); zc_array_release(f); zc_array_release(g);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(memory_contract_axis_16x_longer_than_a_task)
{
    /* allowed_mem 48 MB: a task transforms lines of at most ~190K complex128;
     * the axis is 2^22 = 4.2M (22× longer), 64 MB of complex input */
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = (size_t)48 << 20;
    s.reserved_mem = (size_t)6 << 20;
    s.nthreads = 2;
    int64_t n = (int64_t)1 << 22;
    zc_array *a, *f, *b, *d, *m;
    CHECK_OK(zc_random_uniform(9, 1, &n, (int64_t[]){1 << 18}, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &f));
    CHECK_OK(zc_fft_ifft(f, -1, 0, NULL, &b));
    /* max |ifft(fft(a)) - a| */
    zc_array *args[2] = {b, a};
    CHECK_OK(zc_elementwise("subtract", 2, args, &d));
    zc_array *ad;
    CHECK_OK(zc_elementwise("abs", 1, &d, &ad));
    CHECK_OK(zc_reduce("max", ad, NULL, 0, 0, 0, &m));
    char dir[] = "/tmp/zc_fftmem_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char work[600];
    snprintf(work, sizeof work, "%s/work", dir);
    s.work_dir = work;
    double err = 1;
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, m, &err, sizeof err, &rep));
    printf("round trip of a 2^22 axis under 48 MB: max err %g\n", err);
    CHECK(err < 1e-12);
    /* every task within its projection; peak RSS per stage within 2 x 48 MB + the reserve */
    json_decref(report_checked(rep));
    zc_array_release(a); zc_array_release(f); zc_array_release(b); zc_array_release(d); zc_array_release(ad);
    zc_array_release(m);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* The FFT path: sum(|fft(x, axis=1)|) over 128 MB of float64, lines of 8192
 * transformed in tasks of 2 threads under 128 MB each: per stage, the peak
 * RSS grows by no more than the counted memory plus the uncounted reserve
 * (FFTW's plans among it), within 2 x 128 MB + the reserve, and by more than
 * that reserve (check_rss_matters), so the agreement can fail. Parseval:
 * sum |X_k|^2 = n sum |x|^2 checks the values. */
TEST(rss_agrees_with_counted_memory_fft)
{
    zc_spec s = spec_default();
    s.allowed_mem = (size_t)128 << 20;
    s.reserved_mem = (size_t)8 << 20;
    s.nthreads = 2;
    int64_t shape[2] = {2048, 8192}, chunks[2] = {256, 8192};
    zc_array *x, *f, *a, *a2, *sum, *x2, *xs;
    CHECK_OK(zc_random_uniform(5, 2, shape, chunks, ZC_FLOAT64, -1, 1, &x));
    CHECK_OK(zc_fft_fft(x, -1, 1, NULL, &f));
    CHECK_OK(zc_elementwise("abs", 1, &f, &a));
    CHECK_OK(zc_elementwise("square", 1, &a, &a2));
    CHECK_OK(zc_reduce("sum", a2, NULL, 0, 0, 0, &sum));
    CHECK_OK(zc_elementwise("multiply", 2, (zc_array *[]){x, x}, &x2));
    CHECK_OK(zc_reduce("sum", x2, NULL, 0, 0, 0, &xs));
    double got = 0, want = 0;
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, sum, &got, sizeof got, &rep));
    json_t *doc = report_checked(rep);
    check_rss_matters(doc, "sum(|fft(x)|^2)");
    json_decref(doc);
    CHECK_OK(zc_compute_buffer(&s, xs, &want, sizeof want, NULL));
    CHECK(fabs(got / (8192.0 * want) - 1) < 1e-9);
    zc_array_release(x); zc_array_release(f); zc_array_release(a); zc_array_release(a2); zc_array_release(sum);
    zc_array_release(x2); zc_array_release(xs);
}

TEST(input_with_the_axis_whole_is_read_without_a_rechunk)
{
    /* one 1 MiB chunk holding axis 1 whole: blocks of lines of the input's
     * chunk, read as they are, no rechunk stage; a chunk of 64 MiB (128 MiB as
     * complex128) is read by equal pieces of at most 30 MiB */
    int64_t shape[2] = {128, 512}, chunks[2] = {128, 512}, small[2] = {16, 100};
    zc_array *a, *a2, *f, *f2, *big, *g;
    CHECK_OK(zc_random_uniform(5, 2, shape, chunks, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_random_uniform(5, 2, shape, small, ZC_FLOAT64, -1, 1, &a2)); /* same values */
    static double complex want[128 * 512], got[128 * 512];
    zc_spec s = spec_default();
    CHECK_OK(zc_fft_fft(a2, -1, 1, NULL, &f2));
    CHECK_OK(zc_compute_buffer(&s, f2, want, sizeof want, NULL));
    CHECK_OK(zc_fft_fft(a, -1, 1, NULL, &f));
    char *json = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &f, NULL, &json));
    CHECK(json && !strstr(json, "\"rechunk\""));
    zc_free(json);
    CHECK_OK(zc_compute_buffer(&s, f, got, sizeof got, NULL));
    CHECK(rel_err(want, got, 128 * 512, ZC_COMPLEX128) < 1e-13);
    int64_t bs[2] = {4096, 2048};
    CHECK_OK(zc_random_uniform(5, 2, bs, bs, ZC_FLOAT64, -1, 1, &big));
    CHECK_OK(zc_fft_fft(big, -1, 1, NULL, &g));
    int nd;
    int64_t gs[2], gc[2];
    CHECK_OK(zc_array_info(g, &nd, gs, gc, NULL));
    CHECK(gc[0] < 4096 && gc[0] * 2048 * 16 <= (30 << 20) && gc[1] == 2048); /* pieces of the chunk */
    CHECK_OK(zc_plan_json(&s, 1, &g, NULL, &json));
    CHECK(json && !strstr(json, "\"rechunk\""));
    zc_free(json);
    zc_array_release(g);
    zc_array_release(big);
    zc_array_release(f);
    zc_array_release(f2);
    zc_array_release(a);
    zc_array_release(a2);
}

/* ---- the direct path: FFTW from the input where it is into the output block */

/* Region sel of node f computed on its own (node_compute_region), with the direct path on or off. */
static void *region_of(zc_array *f, const zc_range *sel, int direct)
{
    size_t bytes = node_region_bytes(f, sel);
    void *buf = malloc(bytes + 1);
    fftk_set_direct(direct);
    CHECK_OK(node_compute_region(f, sel, buf));
    fftk_set_direct(1);
    return buf;
}

/* The reference values (ref: whole output of shape os, C order) at region sel, as complex. */
static double region_err(const double complex *ref, const int64_t *os, const zc_range *sel, const void *got, zc_dtype dt)
{
    int64_t c[3];
    for (int d = 0; d < 3; d++) c[d] = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
    size_t n = (size_t)(c[0] * c[1] * c[2]), k = 0;
    double complex *want = malloc(sizeof *want * (n + 1));
    for (int64_t i = 0; i < c[0]; i++)
        for (int64_t j = 0; j < c[1]; j++)
            for (int64_t l = 0; l < c[2]; l++) {
                int64_t g0 = sel[0].start + i * sel[0].step, g1 = sel[1].start + j * sel[1].step,
                        g2 = sel[2].start + l * sel[2].step;
                want[k++] = ref[(g0 * os[1] + g1) * os[2] + g2];
            }
    double e = rel_err(want, got, n, dt);
    free(want);
    return e;
}

TEST(direct_path_matches_the_batched_path_and_the_dft)
{
    /* every kind, complex128/complex64 (float64/float32), norms, axes, cut and
     * padded n, odd lengths (complex64 lines at alternating FFTW alignments),
     * whole blocks, regions with steps and offsets off the axis (odd strides in
     * the source buffer) and with a single element at a huge step; several
     * batches with a partial last one; 128-point strided lines (direct) and
     * longer ones (gathered from the buffer) */
    const char *norms[] = {NULL, "ortho", "forward"};
    static const int64_t shapes[][3] = {{5, 7, 13}, {4, 6, 16}, {3, 9, 11}, {6, 5, 8}, {2, 3, 30}, {7, 4, 12}};
    struct cfg { int kind; zc_dtype dt; int64_t shape[3]; int axis; int64_t n; const char *norm; } cfgs[80];
    int nc = 0;
    for (int t = 0; t < 72; t++) {
        struct cfg *c = &cfgs[nc++];
        c->kind = t % 6;
        bool real_in = c->kind == K_RFFT || c->kind == K_IHFFT;
        c->dt = (t / 6) % 2 ? (real_in ? ZC_FLOAT32 : ZC_COMPLEX64) : (real_in ? ZC_FLOAT64 : ZC_COMPLEX128);
        memcpy(c->shape, shapes[t % 6], sizeof c->shape);
        c->axis = (t / 2) % 3;
        int64_t m = c->shape[c->axis];
        bool c2r = c->kind == K_IRFFT || c->kind == K_HFFT;
        c->n = t % 4 == 3 ? (c2r ? m + 1 : m + 3) : t % 4 == 2 ? (c2r ? 2 * m - 4 : m - 2) : -1; /* padded, cut */
        c->norm = norms[t % 3];
    }
    cfgs[nc++] = (struct cfg){K_FFT, ZC_COMPLEX128, {40, 70, 64}, 2, -1, "ortho"};  /* 11 batches of 256 lines */
    cfgs[nc++] = (struct cfg){K_IFFT, ZC_COMPLEX128, {128, 3, 50}, 0, -1, NULL};    /* strided 128-point lines */
    cfgs[nc++] = (struct cfg){K_RFFT, ZC_FLOAT32, {200, 2, 9}, 0, -1, "forward"};   /* strided, 800 bytes */
    cfgs[nc++] = (struct cfg){K_FFT, ZC_COMPLEX128, {3, 200, 5}, 1, -1, NULL};      /* 3200-byte strided: gathered */
    cfgs[nc++] = (struct cfg){K_IRFFT, ZC_COMPLEX64, {9, 33, 10}, 1, -1, "ortho"};  /* strided c2r */
    int bad = 0;
    int64_t direct_runs = 0;
    for (int i = 0; i < nc; i++) {
        const struct cfg *c = &cfgs[i];
        size_t total = (size_t)(c->shape[0] * c->shape[1] * c->shape[2]);
        double complex *x = malloc(sizeof *x * total);
        zc_array *a = make_input(c->shape, c->shape, c->dt, x), *f = NULL;
        CHECK_OK(FNS[c->kind](a, c->n, c->axis, c->norm, &f));
        if (!f) {
            free(x);
            zc_array_release(a);
            continue;
        }
        CHECK(f->kind == NODE_FFT && f->inputs[0] == a); /* the buffer is the FFT's input itself */
        int64_t os[3];
        zc_dtype odt;
        CHECK_OK(zc_array_info(f, NULL, os, NULL, &odt));
        double complex *ref = malloc(sizeof *ref * (size_t)(os[0] * os[1] * os[2] + 1));
        reference(c->kind, x, c->shape, c->axis, c->n, c->norm, ref);
        double tol = odt == ZC_COMPLEX64 || odt == ZC_FLOAT32 ? 2e-5 : 1e-12;
        for (int v = 0; v < 3; v++) {
            zc_range sel[3];
            for (int d = 0; d < 3; d++) {
                sel[d] = (zc_range){0, os[d], 1};
                if (v == 1 && d != c->axis && os[d] > 2) sel[d] = (zc_range){1, os[d], 1 + (i + d) % 3};
                /* one element with a huge step (as a slice's x[1::2**62] asks) */
                if (v == 2 && d != c->axis && d != (c->axis + 1) % 3 && os[d] > 1) sel[d] = (zc_range){1, 2, INT64_MAX / 2};
            }
            int64_t before = fftk_direct_count(0);
            void *on = region_of(f, sel, 1);
            int64_t used = fftk_direct_count(0) - before;
            direct_runs += used > 0;
            void *off = region_of(f, sel, 0);
            CHECK(fftk_direct_count(0) == before + used); /* off: never direct */
            double e_on = region_err(ref, os, sel, on, odt), e_off = region_err(ref, os, sel, off, odt);
            if (e_on > tol || e_off > tol) {
                bad++;
                fprintf(stderr, "%s %s (%lld,%lld,%lld) axis %d n %lld %s region %d: direct %g (%lld batches), batched %g\n",
                        KNAMES[c->kind], zc_dtype_name(c->dt), (long long)c->shape[0], (long long)c->shape[1],
                        (long long)c->shape[2], c->axis, (long long)c->n, c->norm ? c->norm : "NULL", v, e_on,
                        (long long)used, e_off);
            }
            free(on);
            free(off);
        }
        free(ref);
        free(x);
        zc_array_release(f);
        zc_array_release(a);
    }
    printf("%d configurations x 3 regions, %lld regions through the direct path, %d bad\n", nc, (long long)direct_runs, bad);
    CHECK(bad == 0);
    CHECK(direct_runs >= nc); /* about half of the configurations pad or conjugate their input (not direct) */
    /* the pinned cases: complex64 along the last axis and 128-point strided lines go direct */
    for (int k = 0; k < 2; k++) {
        int64_t sh[3] = {k ? 128 : 3, 5, k ? 6 : 13};
        double complex *x = malloc(sizeof *x * (size_t)(sh[0] * sh[1] * sh[2]));
        zc_array *a = make_input(sh, sh, k ? ZC_COMPLEX128 : ZC_COMPLEX64, x), *f = NULL;
        CHECK_OK(zc_fft_fft(a, -1, k ? 0 : 2, NULL, &f));
        zc_range sel[3] = {{0, sh[0], 1}, {0, sh[1], 1}, {0, sh[2], 1}};
        int64_t before = fftk_direct_count(1);
        free(region_of(f, sel, 1));
        CHECK(fftk_direct_count(1) > before); /* from the buffer itself */
        zc_array_release(f);
        zc_array_release(a);
        free(x);
    }
}

TEST(direct_c2r_leaves_the_source_buffer_intact)
{
    /* irfft reads the caller's buffer in place: FFTW's c2r (which overwrites its
     * input unless told not to) must leave it as it is */
    const int64_t lens[] = {9, 301, 513, 1000};
    for (int k = 0; k < 4; k++) {
        int64_t sh[3] = {3, 4, lens[k]}, n = 2 * (lens[k] - 1);
        size_t total = (size_t)(12 * lens[k]);
        double complex *x = malloc(sizeof *x * total), *back = malloc(sizeof *back * total);
        zc_array *a = make_input(sh, sh, ZC_COMPLEX128, x), *f = NULL;
        CHECK_OK(zc_fft_irfft(a, -1, 2, "ortho", &f));
        zc_range sel[3] = {{0, 3, 1}, {0, 4, 1}, {0, n, 1}};
        int64_t before = fftk_direct_count(1);
        double *r1 = region_of(f, sel, 1), *r2 = region_of(f, sel, 1);
        CHECK(fftk_direct_count(1) > before);
        CHECK(memcmp(r1, r2, sizeof(double) * 12 * (size_t)n) == 0);
        zc_spec s = spec_default();
        CHECK_OK(zc_compute_buffer(&s, a, back, sizeof *back * total, NULL));
        CHECK(memcmp(back, x, sizeof *back * total) == 0);
        free(r1);
        free(r2);
        free(x);
        free(back);
        zc_array_release(f);
        zc_array_release(a);
    }
}

TEST(direct_from_a_cached_source_chunk)
{
    /* a stored source read by two stages (its sum and its rfft) is kept decoded
     * (cache_mem): the rfft's blocks, one chunk each, read the cached chunk in place */
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://fft-direct-cache", ZC_STORE_CREATE, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 3;
    int64_t sh[3] = {1, 40, 64};
    for (int d = 0; d < 3; d++) o.shape[d] = sh[d];
    o.chunks[0] = 1, o.chunks[1] = 10, o.chunks[2] = 64;
    o.dtype = ZC_FLOAT64;
    o.codec = "zstd:1";
    zc_zarr *z = NULL;
    CHECK_OK(zc_zarr_create(st, "x", &o, &z));
    double v[40 * 64];
    double complex xc[40 * 64], ref[40 * 33];
    for (int i = 0; i < 40 * 64; i++) xc[i] = v[i] = urand();
    zc_range all[3] = {{0, 1, 1}, {0, 40, 1}, {0, 64, 1}};
    CHECK_OK(zc_zarr_write(z, all, v, sizeof v));
    zc_zarr_close(z);
    reference(K_RFFT, xc, sh, 2, -1, "ortho", ref);
    zc_array *x = NULL, *f = NULL, *m = NULL;
    CHECK_OK(zc_from_zarr(st, "x", &x));
    CHECK_OK(zc_fft_rfft(x, -1, 2, "ortho", &f));
    CHECK_OK(zc_reduce("sum", x, NULL, 0, 0, 0, &m));
    for (int pass = 0; pass < 2; pass++) {
        zc_spec s = ZC_SPEC_INIT;
        s.nthreads = 1;
        s.cache_mem = pass ? (size_t)16 << 20 : 0;
        zc_array *outs[2] = {f, m};
        zc_target t[2] = {{st, pass ? "f1" : "f0", "none", 3}, {st, pass ? "m1" : "m0", "none", 3}};
        int64_t before = fftk_direct_count(0), before_in_place = fftk_direct_count(1);
        zc_report *rep = NULL;
        CHECK_OK(zc_compute(&s, 2, outs, t, &rep));
        char *json = NULL;
        CHECK_OK(zc_report_json(rep, &json));
        const char *h = json ? strstr(json, "\"hits\":") : NULL;
        CHECK(pass == 0 || (h && atoll(h + 7) >= 4)); /* the rfft's 4 blocks read the cached chunks */
        zc_free(json);
        zc_report_free(rep);
        CHECK(fftk_direct_count(0) >= before + 4);
        /* with the cache, from the cached chunks in place; without, from a copy */
        CHECK(pass ? fftk_direct_count(1) >= before_in_place + 4 : fftk_direct_count(1) == before_in_place);
        static double complex got[40 * 33];
        CHECK_OK(zc_zarr_open(st, t[0].path, &z));
        CHECK_OK(zc_zarr_read(z, NULL, got, sizeof got));
        zc_zarr_close(z);
        double e = rel_err(ref, got, 40 * 33, ZC_COMPLEX128);
        printf("rfft of a stored source, cache_mem %zu: rel err %g\n", s.cache_mem, e);
        CHECK(e < 1e-12);
    }
    zc_array_release(x);
    zc_array_release(f);
    zc_array_release(m);
    zc_store_close(st);
}

/* Operation names of the plan of f, comma-separated, into buf. */
static int plan_names(const zc_spec *s, zc_array *f, char *buf, size_t cap)
{
    char *json = NULL;
    int rc = zc_plan_json(s, 1, &f, NULL, &json);
    buf[0] = 0;
    if (rc < 0) return rc;
    int n = 0;
    for (const char *p = json; (p = strstr(p, "\"name\": \"")); n++) {
        p += 9;
        size_t len = strcspn(p, "\"");
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%.*s", n ? "," : "", (int)len, p);
    }
    zc_free(json);
    return n;
}

TEST(fft_reads_through_the_last_copy_of_a_multistage_rechunk)
{
    /* time-chunked stored input, rfft along time under a small bound: the
     * rechunk takes two copies; the FFT reads its lines through the second (not
     * written), and gives what it gives from a source with the axis whole */
    int64_t shape[3] = {200, 36, 72}, src[3] = {2, 36, 72}, whole[3] = {200, 4, 72};
    zc_array *u, *w, *s, *f, *g;
    CHECK_OK(zc_random_uniform(3, 3, shape, src, ZC_FLOAT64, -1, 1, &u));
    CHECK_OK(zc_random_uniform(3, 3, shape, whole, ZC_FLOAT64, -1, 1, &w)); /* same values */
    zc_store *st;
    CHECK_OK(zc_store_open("memory://fft-fused-rechunk", ZC_STORE_CREATE, &st));
    zc_target t = {st, "src", "lz4", 2};
    zc_spec sp = spec_default();
    CHECK_OK(zc_compute(&sp, 1, &u, &t, NULL));
    CHECK_OK(zc_from_zarr(st, "src", &s));
    static double complex want[101 * 36 * 72], got[101 * 36 * 72];
    CHECK_OK(zc_fft_rfft(w, -1, 0, NULL, &g));
    CHECK_OK(zc_compute_buffer(&sp, g, want, sizeof want, NULL));
    /* 4 MiB: two operations; 850 KiB: the FFT reading through the copy would
     * need more per task than the 0.76 MB allowed (1,000 KiB still reads
     * through; 700 KiB takes three copies), so the copy is written (three) */
    const size_t mems[2] = {(size_t)4 << 20, (size_t)850 << 10};
    const int ops[2] = {2, 3};
    for (int k = 0; k < 2; k++) {
        char names[512];
        sp.allowed_mem = mems[k];
        sp.reserved_mem = mems[k] / 8;
        CHECK_OK(zc_fft_rfft(s, -1, 0, NULL, &f));
        int nops = plan_names(&sp, f, names, sizeof names);
        if (nops != ops[k]) fprintf(stderr, "under %zu bytes: %s\n", mems[k], names);
        CHECK(nops == ops[k]);
        CHECK(strcmp(names, k == 0 ? "op0 rechunk,op1 rfft" : "op0 rechunk,op1 rechunk,op2 rfft") == 0);
        zc_report *rep = NULL;
        memset(got, 0, sizeof got);
        CHECK_OK(zc_compute_buffer(&sp, f, got, sizeof got, &rep));
        double e = 0;
        for (size_t i = 0; i < 101 * 36 * 72; i++) e = fmax(e, cabs(got[i] - want[i]));
        CHECK(e < 1e-12);
        json_t *rep_j = report_checked(rep);
        CHECK(json_array_size(json_object_get(rep_j, "operations")) == (size_t)ops[k]);
        json_decref(rep_j);
        zc_array_release(f);
    }
    zc_array_release(g);
    zc_array_release(s);
    zc_array_release(w);
    zc_array_release(u);
    zc_store_close(st);
}

static int files_seen;
static int count_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    if (flag == FTW_F && strcmp(path + ftw->base, "zarr.json") != 0) files_seen++;
    return 0;
}

typedef struct {
    const char *op0;
    int64_t fft_op;
    int at_half, at_end; /* op0's chunk files when half / all the FFT's tasks were done (-1: not seen) */
} consume_probe;

static int consume_seen(const zc_progress *pr, void *ctx)
{
    consume_probe *e = ctx;
    if (pr->op != e->fft_op || (pr->done != pr->total / 2 && pr->done != pr->total)) return 0;
    files_seen = 0;
    nftw(e->op0, count_file, 8, FTW_PHYS);
    *(pr->done == pr->total ? &e->at_end : &e->at_half) = files_seen;
    return 0;
}

TEST(fft_erases_the_intermediate_it_reads_as_it_goes)
{
    /* rfft along time of a time-chunked source: op0 rechunks into the work
     * directory, op1 (the FFT) is its only reader and erases each of its
     * chunks once the tasks that read it are done; with resume it keeps them */
    char dir[] = "/tmp/zc_fft_eat_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    int64_t shape[3] = {200, 36, 72}, src[3] = {2, 36, 72}, whole[3] = {200, 4, 72};
    zc_array *u, *w, *x, *f, *g;
    CHECK_OK(zc_random_uniform(5, 3, shape, src, ZC_FLOAT64, -1, 1, &u));
    CHECK_OK(zc_random_uniform(5, 3, shape, whole, ZC_FLOAT64, -1, 1, &w)); /* same values */
    zc_target t = {st, "src", "lz4", 2};
    zc_spec sp = spec_default();
    CHECK_OK(zc_compute(&sp, 1, &u, &t, NULL));
    CHECK_OK(zc_from_zarr(st, "src", &x));
    static double complex want[101 * 36 * 72], got[101 * 36 * 72];
    CHECK_OK(zc_fft_rfft(w, -1, 0, NULL, &g));
    CHECK_OK(zc_compute_buffer(&sp, g, want, sizeof want, NULL));
    char work[600], op0[700];
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(op0, sizeof op0, "%s/op0", work);
    sp.allowed_mem = (size_t)2 << 20;
    sp.reserved_mem = 1; /* none (0 is automatic) */
    sp.cache_mem = 0;
    sp.work_dir = work;
    CHECK_OK(zc_fft_rfft(x, -1, 0, NULL, &f));
    char names[512];
    CHECK(plan_names(&sp, f, names, sizeof names) == 2);
    CHECK(strcmp(names, "op0 rechunk,op1 rfft") == 0);
    for (int resume = 0; resume < 2; resume++) {
        consume_probe e = {op0, 1, -1, -1};
        sp.progress = consume_seen;
        sp.progress_ctx = &e;
        sp.resume = resume;
        zc_target out = {st, resume ? "f1" : "f0", "none", 3};
        CHECK_OK(zc_compute(&sp, 1, &f, &out, NULL));
        printf("rfft, resume %d: op0 chunk files at half the FFT %d, at its end %d\n", resume, e.at_half, e.at_end);
        CHECK(e.at_half > 0);
        CHECK(resume ? e.at_end == e.at_half : e.at_end == 0 && e.at_half < 36 * 100);
        zc_zarr *z;
        CHECK_OK(zc_zarr_open(st, out.path, &z));
        memset(got, 0, sizeof got);
        CHECK_OK(zc_zarr_read(z, NULL, got, sizeof got));
        zc_zarr_close(z);
        double e2 = 0;
        for (size_t i = 0; i < 101 * 36 * 72; i++) e2 = fmax(e2, cabs(got[i] - want[i]));
        CHECK(e2 < 1e-12);
    }
    zc_array_release(f);
    zc_array_release(g);
    zc_array_release(x);
    zc_array_release(w);
    zc_array_release(u);
    zc_store_close(st);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* While the last operation runs: which intermediates (WORK/opN) are stored
 * with a compressor. */
typedef struct {
    const char *work;
    int last, nops, checked;
    bool found[32], lz4[32]; /* op k's metadata was read; it names lz4 */
} codec_probe;

static int codecs_seen(const zc_progress *pr, void *ctx)
{
    codec_probe *c = ctx;
    if (pr->op != c->last || c->checked) return 0;
    c->checked = 1;
    for (int k = 0; k < c->nops && k < 32; k++) {
        char path[700], buf[4096] = "";
        snprintf(path, sizeof path, "%s/op%d/zarr.json", c->work, k);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
        c->found[k] = n > 0;
        c->lz4[k] = strstr(buf, "lz4") != NULL;
    }
    return 0;
}

TEST(fft_intermediates_and_their_copies_are_stored_uncompressed)
{
    /* a four-step FFT of 2^18 complex128 under 4 MiB: its transforms' outputs
     * (spectra: LZ4 finds nothing to compress) and every rechunked copy of
     * them are stored without a codec; the reshape of the input is not an FFT's */
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = (size_t)4 << 20;
    s.reserved_mem = (size_t)1 << 19;
    s.nthreads = 2;
    int64_t n = (int64_t)1 << 18;
    zc_array *a, *f;
    CHECK_OK(zc_random_uniform(3, 1, &n, (int64_t[]){1 << 15}, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &f));
    char *pj = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &f, NULL, &pj));
    json_t *plan = json_loads(pj, 0, NULL), *ops = json_object_get(plan, "operations");
    zc_free(pj);
    int nops = (int)json_array_size(ops);
    CHECK(nops > 3 && nops <= 32);
    /* per op: whether it is an FFT or a copy of one (through rechunks) */
    bool spectral[32] = {false};
    int copies = 0;
    for (int k = 0; k < nops && k < 32; k++) {
        json_t *o = json_array_get(ops, (size_t)k), *in = json_object_get(o, "inputs");
        const char *kind = json_string_value(json_object_get(o, "kind"));
        int src = json_array_size(in) == 1 ? (int)json_integer_value(json_array_get(in, 0)) : -1;
        spectral[k] = !strcmp(kind, "fft") || (!strcmp(kind, "rechunk") && src >= 0 && src < k && spectral[src]);
        copies += spectral[k] && strcmp(kind, "fft") != 0;
    }
    CHECK(copies >= 2);
    char dir[] = "/tmp/zc_fft_codec_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char work[600];
    snprintf(work, sizeof work, "%s/work", dir);
    s.work_dir = work;
    s.resume = 1; /* intermediates kept until the end */
    codec_probe c = {work, nops - 1, nops, 0, {false}, {false}};
    s.progress = codecs_seen;
    s.progress_ctx = &c;
    static double complex got[1 << 18], want[1 << 18];
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, f, got, sizeof got, &rep));
    json_decref(report_checked(rep));
    CHECK(c.checked);
    int plain = 0, packed = 0;
    for (int k = 0; k < nops - 1; k++) {
        json_t *o = json_array_get(ops, (size_t)k);
        printf("op%d %s: %s\n", k, json_string_value(json_object_get(o, "kind")),
               !c.found[k] ? "no metadata" : c.lz4[k] ? "lz4" : "no codec");
        CHECK(c.found[k]); /* every intermediate is still there (resume keeps them) */
        if (spectral[k]) CHECK(!c.lz4[k]);
        plain += spectral[k] && c.found[k] && !c.lz4[k];
        packed += !spectral[k] && c.lz4[k];
    }
    CHECK(plain >= 3 && packed >= 1); /* what was looked at was there */
    /* the values: against the in-core transform */
    zc_spec sc = ZC_SPEC_INIT;
    sc.allowed_mem = (size_t)256 << 20;
    zc_array *g;
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &g));
    CHECK_OK(zc_compute_buffer(&sc, g, want, sizeof want, NULL));
    double e = 0;
    for (size_t i = 0; i < (size_t)n; i++) e = fmax(e, cabs(got[i] - want[i]));
    CHECK(e < 1e-9);
    json_decref(plan);
    zc_array_release(g);
    zc_array_release(f);
    zc_array_release(a);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Ops of a plan, and how many of them are FFTs. */
static int plan_ops(const zc_spec *s, zc_array *f, int *ffts)
{
    char *json = NULL;
    CHECK_OK(zc_plan_json(s, 1, &f, NULL, &json));
    int n = 0;
    *ffts = 0;
    for (char *q = json; q && (q = strstr(q, "\"op\":")); q++) n++;
    for (char *q = json; q && (q = strstr(q, "\"kind\": \"fft\"")); q++) ++*ffts;
    zc_free(json);
    return n;
}

TEST(one_graph_planned_under_two_bounds)
{
    /* fft of 2^16 complex128 (a 1 MiB line, chunks of 4096): the graph fixes
     * the output's chunks; under 2 GiB the plan transforms whole lines in one
     * task (and copies them into those chunks), under 2 MiB it is the
     * four-step (256 x 256). Same values; planning one graph under one bound,
     * running it, then under the other and the first again changes nothing. */
    int64_t n = 1 << 16, chunk = 4096;
    zc_array *a, *f;
    CHECK_OK(zc_random_uniform(11, 1, &n, &chunk, ZC_FLOAT64, -1, 1, &a));
    CHECK_OK(zc_fft_fft(a, -1, 0, NULL, &f));
    int64_t fc;
    CHECK_OK(zc_array_info(f, NULL, NULL, &fc, NULL));
    CHECK(fc == 4096);
    zc_spec big = spec_default(), small = spec_default();
    small.allowed_mem = (size_t)2 << 20;
    small.reserved_mem = (size_t)256 << 10;
    int fb, fs, ob = plan_ops(&big, f, &fb), os = plan_ops(&small, f, &fs);
    printf("2 GiB: %d operations (%d FFT), 2 MiB: %d operations (%d FFT)\n", ob, fb, os, fs);
    CHECK(fb == 1 && fs >= 2 && ob != os);
    double complex *r[3];
    for (int k = 0; k < 3; k++) {
        r[k] = malloc(sizeof(double complex) * (size_t)n);
        zc_report *rep = NULL;
        CHECK_OK(zc_compute_buffer(k == 1 ? &small : &big, f, r[k], sizeof(double complex) * (size_t)n, &rep));
        json_decref(report_checked(rep)); /* measured within projected, every stage */
    }
    double *x = malloc(sizeof(double) * (size_t)n);
    CHECK_OK(zc_compute_buffer(&big, a, x, sizeof(double) * (size_t)n, NULL));
    /* the direct DFT at 64 frequencies */
    double num = 0, den = 0, diff = 0;
    for (int64_t k = 0; k < n; k += n / 64 + 7) {
        long double complex s = 0;
        for (int64_t j = 0; j < n; j++) {
            long double t = -2.0L * M_PI * (long double)((j * k) % n) / (long double)n;
            s += x[j] * (cosl(t) + I * sinl(t));
        }
        for (int m = 0; m < 2; m++) num = fmax(num, cabs(r[m][k] - (double complex)s));
        den = fmax(den, cabs((double complex)s));
    }
    for (int64_t i = 0; i < n; i++) diff = fmax(diff, fmax(cabs(r[0][i] - r[1][i]), cabs(r[0][i] - r[2][i])));
    printf("two bounds: rel err vs the direct DFT %g, max difference %g\n", num / den, diff);
    CHECK(num / den < 1e-12 && diff < 1e-10 * den);
    for (int k = 0; k < 3; k++) free(r[k]);
    free(x);
    zc_array_release(f);
    zc_array_release(a);
}
