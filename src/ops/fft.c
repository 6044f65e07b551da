/* ops/fft.c — the array API `fft` extension (include/zcube.h, section "FFT").
 *
 * Every transform is a chain of 1-D transforms along one axis. Along an axis
 * whose line fits in a task (FFT_LINE_FACTOR × line bytes within the memory
 * figure of zc_fft_set_memory), the input is rechunked so the axis is whole and
 * an FFT node (plan/fft.h) runs FFTW on every block. Along a longer axis of
 * length N = N1·N2 the four-step (Bailey) algorithm is written in the engine's
 * own operations:
 *
 *   reshape the axis to (N1, N2)                  n = N2·n1 + n2
 *   FFTs of length N1 along n1, times the twiddle exp(∓2πi·k1·n2/N)
 *                                                 (fused into the same node)
 *   FFTs of length N2 along n2                    → C[k1, k2] = X[k1 + N1·k2]
 *   rechunk so k1 is whole (the transpose), permute (k2, k1), reshape to N
 *
 * each FFT of length N1 or N2 being again in-core or four-step (recursion). The
 * rechunks in between are the engine's (multistage when needed), so every task
 * stays within the bound for any length. A length that cannot be split (a prime
 * too long for one task) goes through Bluestein's algorithm: a convolution of
 * length 2^p >= 2N-1 by three four-step transforms. Real transforms too long for a task go
 * through the complex one (rfft: keep the first N/2+1 outputs; irfft: rebuild
 * the Hermitian spectrum with slices, flip, conj and concat, then take the real
 * part).
 *
 * The algorithm and block sizes are chosen when the function is called (plans
 * are lazy; allowed_mem is only known at compute time), from the process-wide
 * figure set by zc_fft_set_memory (default: ZC_SPEC_INIT's). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "kernels/fft.h"
#include "plan/array.h"
#include "plan/plan.h"

/* A line of the transform's output may use 1/FFT_LINE_FACTOR of the task budget
 * (the stage holds output, input, the rechunked read and the write copies, and a
 * fused consumer may add as much again). */
#define FFT_LINE_FACTOR 12
#define FFT_BLOCK_MAX ((size_t)30 << 20)

static _Atomic size_t fft_budget = ((size_t)2 << 30) - ((size_t)64 << 20);

int zc_fft_set_memory(const zc_spec *spec)
{
    zc__err_clear();
    zc_spec sp;
    if (!spec) return zc__err(ZC_EINVAL, "zc_fft_set_memory: NULL spec");
    ZC_TRY(plan_spec(spec, &sp));
    if (sp.allowed_mem <= sp.reserved_mem)
        return zc__err(ZC_EINVAL, "zc_fft_set_memory: reserved_mem >= allowed_mem");
    atomic_store(&fft_budget, sp.allowed_mem - sp.reserved_mem);
    return 0;
}

size_t zc_fft_line_limit(zc_dtype dtype)
{
    size_t isz = dtype == ZC_COMPLEX64 || dtype == ZC_FLOAT32 ? 8 : 16;
    return atomic_load(&fft_budget) / FFT_LINE_FACTOR / isz;
}

static size_t block_target(void)
{
    size_t t = atomic_load(&fft_budget) / FFT_LINE_FACTOR;
    return t < FFT_BLOCK_MAX ? t : FFT_BLOCK_MAX;
}

/* ------------------------------------------------------------ helpers */

static zc_dtype complex_of(zc_dtype t)
{
    return t == ZC_FLOAT32 || t == ZC_COMPLEX64 || t == ZC_FLOAT16 ? ZC_COMPLEX64 : ZC_COMPLEX128;
}
static zc_dtype real_of(zc_dtype t) { return complex_of(t) == ZC_COMPLEX64 ? ZC_FLOAT32 : ZC_FLOAT64; }

static int norm_scale(const char *fn, const char *norm, int64_t n, bool inverse, double *scale)
{
    if (!norm || !strcmp(norm, "backward")) *scale = inverse ? 1.0 / (double)n : 1.0;
    else if (!strcmp(norm, "ortho")) *scale = 1.0 / sqrt((double)n);
    else if (!strcmp(norm, "forward")) *scale = inverse ? 1.0 : 1.0 / (double)n;
    else return zc__err(ZC_EINVAL, "%s: norm must be \"backward\", \"ortho\" or \"forward\" (got \"%s\")", fn, norm);
    return 0;
}

static int norm_axis(const char *fn, const zc_array *x, int axis, int *out)
{
    if (x->ndim == 0) return zc__err(ZC_EINVAL, "%s: a 0-d array has no axis to transform", fn);
    int a = axis < 0 ? axis + x->ndim : axis;
    if (a < 0 || a >= x->ndim)
        return zc__err(ZC_EINVAL, "%s: axis %d is out of range for an array of %d dimension%s", fn, axis, x->ndim,
                       x->ndim == 1 ? "" : "s");
    *out = a;
    return 0;
}

static int astype_to(zc_array *x, zc_dtype t, zc_array **out)
{
    if (x->dtype == t) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    return zc_astype(x, t, out);
}

/* Chunks for an array whose `axis` must be whole: other dims trailing-first
 * within `target` bytes, `line` bytes per line (at least one line). */
static void line_chunks(const zc_array *x, int axis, size_t line, size_t target, int64_t *chunks)
{
    int64_t shape[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) shape[d] = d == axis ? 1 : x->shape[d];
    if (line < 1) line = 1;
    node_auto_chunks(x->ndim, shape, line, target > line ? target : line, chunks);
    chunks[axis] = x->shape[axis] > 0 ? x->shape[axis] : 1;
}

/* Chunks for an array whose chunks hold `axis` whole: x's chunks, the
 * outermost other dims divided into equal pieces until a block of lines of
 * `line` bytes fits `target` (at least one line per block). */
static void split_chunks(const zc_array *x, int axis, size_t line, size_t target, int64_t *chunks)
{
    size_t lines = 1;
    for (int d = 0; d < x->ndim; d++) {
        chunks[d] = x->chunks[d];
        if (d != axis) lines *= (size_t)chunks[d];
    }
    if (line < 1) line = 1;
    size_t fit = target / line > 0 ? target / line : 1; /* lines per block */
    for (int d = 0; d < x->ndim && lines > fit; d++) {
        if (d == axis || chunks[d] <= 1) continue;
        size_t rest = lines / (size_t)chunks[d];         /* lines per step of d */
        size_t keep = fit / rest > 0 ? fit / rest : 1;   /* steps of d that fit */
        if (keep >= (size_t)chunks[d]) break;
        int64_t pieces = (chunks[d] + (int64_t)keep - 1) / (int64_t)keep;
        chunks[d] = (chunks[d] + pieces - 1) / pieces;   /* equal pieces of the input chunk */
        lines = rest * (size_t)chunks[d];
    }
}

/* Slice [0, n) along axis, or pad with zeros to n. */
static int fit_length(zc_array *x, int axis, int64_t n, zc_array **out)
{
    int64_t m = x->shape[axis];
    if (m == n) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    if (m > n) {
        zc_index idx[ZC_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) idx[d] = (zc_index){.kind = ZC_IDX_SLICE, .step = 1};
        idx[axis].stop = n;
        idx[axis].has_stop = 1;
        return zc_getitem(x, idx, x->ndim, out);
    }
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = x->shape[d];
        chunks[d] = x->chunks[d];
    }
    shape[axis] = n - m;
    if (chunks[axis] > shape[axis]) chunks[axis] = shape[axis];
    zc_array *z, *parts[2];
    ZC_TRY(zc_full(x->ndim, shape, chunks, x->dtype, 0, &z));
    parts[0] = x;
    parts[1] = z;
    int rc = zc_concat(2, parts, axis, out);
    zc_array_release(z);
    return rc;
}

/* ------------------------------------------------------------ FFT nodes */

typedef struct {
    fftk_kind kind;
    int64_t n;
    double scale;
    int conj_in, conj_out;
    int tw_dim, tw_sign;
    int64_t tw_n;
} fft_params;

/* In-core: rechunk x (the right dtype already) so the axis is whole, then one FFT node. */
static int fft_node(zc_array *x, int axis, const fft_params *fp, zc_array **out)
{
    zc_dtype od = fp->kind == FFTK_C2R ? real_of(x->dtype) : complex_of(x->dtype);
    size_t osz = od == ZC_COMPLEX64 ? 8 : od == ZC_COMPLEX128 ? 16 : od == ZC_FLOAT32 ? 4 : 8;
    int64_t chunks[ZC_MAX_DIMS], shape[ZC_MAX_DIMS];
    /* a line's bytes: the larger of its input and its output */
    int64_t olen = fp->kind == FFTK_NONE ? x->shape[axis] : fftk_out_len(fp->kind, fp->n);
    size_t lin = x->itemsize * (size_t)(x->shape[axis] > 0 ? x->shape[axis] : 1), lout = osz * (size_t)olen;
    size_t line = lin > lout ? lin : lout;
    bool whole = x->chunks[axis] == x->shape[axis];
    if (whole)
        split_chunks(x, axis, line, block_target(), chunks);
    else
        line_chunks(x, axis, line, block_target(), chunks);
    /* An input that holds the axis whole in its chunks is read as it is: each
     * FFT block is a piece of one input chunk (a stored chunk is decoded once
     * per piece, partially when its codec allows), which costs less than a
     * rechunk stage's decode, encode, write and read back. */
    zc_array *r;
    if (whole) {
        zc_array_retain(x);
        r = x;
    } else {
        ZC_TRY(zc_rechunk(x, chunks, &r));
    }
    for (int d = 0; d < x->ndim; d++) shape[d] = x->shape[d];
    shape[axis] = fp->kind == FFTK_NONE ? x->shape[axis] : fftk_out_len(fp->kind, fp->n);
    chunks[axis] = shape[axis] > 0 ? shape[axis] : 1;
    int rc = node_new(NODE_FFT, x->ndim, shape, chunks, od, 1, &r, out);
    zc_array_release(r);
    if (rc < 0) return rc;
    zc_array *a = *out;
    a->p.fft.axis = axis;
    a->p.fft.kind = (int)fp->kind;
    a->p.fft.n = fp->n;
    a->p.fft.scale = fp->scale;
    a->p.fft.conj_in = fp->conj_in;
    a->p.fft.conj_out = fp->conj_out;
    a->p.fft.tw_dim = fp->tw_dim;
    a->p.fft.tw_sign = fp->tw_sign;
    a->p.fft.tw_n = fp->tw_n;
    return 0;
}

/* Twiddle (and scale) on its own, after a four-step sub-transform. */
static int twiddle_node(zc_array *x, int axis, int tw_dim, int64_t tw_n, int sign, double scale, int conj,
                        zc_array **out)
{
    int rc = node_new(NODE_FFT, x->ndim, x->shape, x->chunks, x->dtype, 1, &x, out);
    if (rc < 0) return rc;
    zc_array *a = *out;
    a->p.fft.axis = axis;
    a->p.fft.kind = FFTK_NONE;
    a->p.fft.n = x->shape[axis];
    a->p.fft.scale = scale;
    a->p.fft.conj_out = conj;
    a->p.fft.tw_dim = tw_dim;
    a->p.fft.tw_n = tw_n;
    a->p.fft.tw_sign = sign;
    return 0;
}

static bool fits(int64_t n, zc_dtype t) { return n > 0 && (size_t)n <= zc_fft_line_limit(t) && n <= INT32_MAX; }

#define FFT_MAX_LEN ((int64_t)1 << 40) /* longest transform (points) */

/* The divisor of n nearest below sqrt(n) (1 for primes). */
static int64_t split_of(int64_t n)
{
    int64_t best = 1;
    for (int64_t f = 2; f <= n / f; f++)
        if (n % f == 0) best = f;
    return best;
}

static int c2c_axis(zc_array *x, int axis, int inverse, double scale, int conj_out, int tw_dim, int64_t tw_n,
                    int tw_sign, zc_array **out);

static int getitem_axis(zc_array *x, int axis, int64_t start, int64_t stop, zc_array **out)
{
    zc_index idx[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) idx[d] = (zc_index){.kind = ZC_IDX_SLICE, .step = 1};
    idx[axis] = (zc_index){.kind = ZC_IDX_SLICE, .start = start, .stop = stop, .step = 1, .has_start = 1, .has_stop = 1};
    return zc_getitem(x, idx, x->ndim, out);
}

/*
 * Bluestein's algorithm for a prime length N too long for a task: with the chirp
 * c_m = exp(∓πi·m²/N), X_k = c_k · Σ_n (x_n c_n)·conj(c_{k-n}), a circular
 * convolution of length M = 2^p >= 2N-1 done with three transforms of length M
 * (four-step themselves): X = c · ifft(fft(pad(x·c)) · fft(b))[:N], where b holds
 * conj(c_m) at m and M-m. Every step is an engine node: memory bounded.
 */
static int bluestein(zc_array *x, int axis, int inverse, double scale, int conj_out, zc_array **out)
{
    int64_t N = x->shape[axis], M = 1;
    while (M < 2 * N - 1) M *= 2;
    int sign = inverse ? 1 : -1, nd = x->ndim;
    zc_array *a = NULL, *ap = NULL, *fa = NULL, *one = NULL, *c = NULL, *tail = NULL, *ft = NULL, *z = NULL,
             *b = NULL, *fb = NULL, *pr = NULL, *cv = NULL, *r = NULL;
    int64_t sh[ZC_MAX_DIMS], ch[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        sh[d] = d == axis ? N : 1;
        ch[d] = d == axis ? (int64_t)(block_target() / x->itemsize) : 1; /* blocks within the task budget */
        if (ch[d] < 1) ch[d] = 1;
    }
    int rc;
    /* a = x·c zero-padded to M, and its transform */
    if ((rc = twiddle_node(x, axis, axis, 2 * N, sign, 1.0, 0, &a)) < 0) goto out;
    if ((rc = fit_length(a, axis, M, &ap)) < 0) goto out;
    if ((rc = c2c_axis(ap, axis, 0, 1.0, 0, -1, 0, 0, &fa)) < 0) goto out;
    /* b = [conj(c_0..c_{N-1}), 0 ..., conj(c_{N-1}..c_1)] (size 1 off the axis), and its transform */
    if ((rc = zc_full(nd, sh, ch, x->dtype, 1, &one)) < 0) goto out;
    if ((rc = twiddle_node(one, axis, axis, 2 * N, -sign, 1.0, 0, &c)) < 0) goto out;
    if ((rc = getitem_axis(c, axis, 1, N, &tail)) < 0 || (rc = zc_flip(tail, &axis, 1, &ft)) < 0) goto out;
    sh[axis] = M - 2 * N + 1;
    if ((rc = zc_full(nd, sh, ch, x->dtype, 0, &z)) < 0) goto out;
    zc_array *parts[3] = {c, z, ft};
    if ((rc = zc_concat(3, parts, axis, &b)) < 0) goto out;
    if ((rc = c2c_axis(b, axis, 0, 1.0, 0, -1, 0, 0, &fb)) < 0) goto out;
    /* the convolution, its first N values, times the chirp (conj_out: conjugated first) */
    zc_array *ab[2] = {fa, fb};
    if ((rc = zc_elementwise("multiply", 2, ab, &pr)) < 0) goto out;
    if ((rc = c2c_axis(pr, axis, 1, 1.0 / (double)M, 0, -1, 0, 0, &cv)) < 0) goto out;
    if ((rc = getitem_axis(cv, axis, 0, N, &r)) < 0) goto out;
    rc = twiddle_node(r, axis, axis, 2 * N, conj_out ? -sign : sign, scale, conj_out, out);
out:
    zc_array_release(a); zc_array_release(ap); zc_array_release(fa); zc_array_release(one);
    zc_array_release(c); zc_array_release(tail); zc_array_release(ft); zc_array_release(z);
    zc_array_release(b); zc_array_release(fb); zc_array_release(pr); zc_array_release(cv);
    zc_array_release(r);
    return rc;
}

/* Four-step complex transform of the whole axis (length N = x->shape[axis]). */
static int four_step(zc_array *x, int axis, int inverse, double scale, int conj_out, zc_array **out)
{
    int64_t N = x->shape[axis], N1 = split_of(N), N2 = N / N1;
    if (N1 == 1) return bluestein(x, axis, inverse, scale, conj_out, out);
    if (x->ndim + 1 > ZC_MAX_DIMS)
        return zc__err(ZC_EUNSUPPORTED, "fft: the four-step algorithm needs one more dimension than the %d allowed",
                       ZC_MAX_DIMS);
    int nd = x->ndim + 1, sign = inverse ? 1 : -1;
    int64_t sh[ZC_MAX_DIMS];
    for (int d = 0, e = 0; d < x->ndim; d++) {
        if (d == axis) {
            sh[e++] = N1;
            sh[e++] = N2;
        } else {
            sh[e++] = x->shape[d];
        }
    }
    zc_array *r = NULL, *f1 = NULL, *f2 = NULL, *t = NULL, *p = NULL;
    int rc;
    /* n = N2·n1 + n2: FFT over n1 (length N1) with the twiddle, then over n2 */
    if ((rc = zc_reshape(x, nd, sh, &r)) < 0) goto out;
    if ((rc = c2c_axis(r, axis, inverse, 1.0, 0, axis + 1, N, sign, &f1)) < 0) goto out;
    if ((rc = c2c_axis(f1, axis + 1, inverse, scale, conj_out, -1, 0, 0, &f2)) < 0) goto out;
    /* f2[k1, k2] = X[k1 + N1·k2]: rechunk with k1 whole, then view as (k2, k1) and flatten */
    int64_t ch[ZC_MAX_DIMS];
    line_chunks(f2, axis, f2->itemsize * (size_t)f2->shape[axis], block_target(), ch);
    if ((rc = zc_rechunk(f2, ch, &t)) < 0) goto out;
    int perm[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) perm[d] = d;
    perm[axis] = axis + 1;
    perm[axis + 1] = axis;
    if ((rc = zc_permute_dims(t, perm, nd, &p)) < 0) goto out;
    rc = zc_reshape(p, x->ndim, x->shape, out);
out:
    zc_array_release(r);
    zc_array_release(f1);
    zc_array_release(f2);
    zc_array_release(t);
    zc_array_release(p);
    return rc;
}

/* Complex transform of length x->shape[axis] (x complex), then conj/scale/twiddle. */
static int c2c_axis(zc_array *x, int axis, int inverse, double scale, int conj_out, int tw_dim, int64_t tw_n,
                    int tw_sign, zc_array **out)
{
    int64_t n = x->shape[axis];
    if (fits(n, x->dtype) || n <= 1) {
        fft_params fp = {inverse ? FFTK_C2C_BWD : FFTK_C2C_FWD, n > 0 ? n : 1, scale, 0, conj_out, tw_dim, tw_sign, tw_n};
        return fft_node(x, axis, &fp, out);
    }
    if (tw_dim < 0) return four_step(x, axis, inverse, scale, conj_out, out);
    zc_array *y;
    ZC_TRY(four_step(x, axis, inverse, scale, conj_out, &y));
    int rc = twiddle_node(y, axis, tw_dim, tw_n, tw_sign, 1.0, 0, out);
    zc_array_release(y);
    return rc;
}

/* ------------------------------------------------------------ one axis, any kind */

typedef enum { T_FFT, T_IFFT, T_RFFT, T_IRFFT, T_HFFT, T_IHFFT } transform;
static const char *const T_NAMES[] = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"};

static int check_input(transform t, const zc_array *x)
{
    const char *fn = T_NAMES[t];
    zc_dtype d = x->dtype;
    bool num = d == ZC_BOOL || dtype_is_integer(d) || dtype_is_float(d) || dtype_is_complex(d);
    if (!num) return zc__err(ZC_EINVAL, "%s: needs a numeric array (got %s)", fn, zc_dtype_name(d));
    if ((t == T_RFFT || t == T_IHFFT) && dtype_is_complex(d))
        return zc__err(ZC_EINVAL, "%s: needs a real array (got %s); use fft for complex input", fn, zc_dtype_name(d));
    if ((t == T_IRFFT || t == T_HFFT) && !dtype_is_float(d) && !dtype_is_complex(d))
        return zc__err(ZC_EINVAL, "%s: needs a floating-point or complex array (got %s)", fn, zc_dtype_name(d));
    return 0;
}

static int transform_axis(transform t, zc_array *x, int64_t n, int axis, const char *norm, zc_array **out)
{
    const char *fn = T_NAMES[t];
    int ax;
    ZC_TRY(check_input(t, x));
    ZC_TRY(norm_axis(fn, x, axis, &ax));
    int64_t m = x->shape[ax];
    bool c2r = t == T_IRFFT || t == T_HFFT;
    if (n == -1) n = c2r ? 2 * (m - 1) : m;
    if (n < 1)
        return zc__err(ZC_EINVAL, "%s: invalid number of data points (%lld) along axis %d: n must be >= 1", fn,
                       (long long)n, ax);
    /* a bound far above any array, so that factoring n (split_of) and Bluestein's 2n stay cheap and exact */
    if (n > FFT_MAX_LEN)
        return zc__err(ZC_EUNSUPPORTED, "%s: n = %lld points along axis %d: at most 2^40 are supported", fn,
                       (long long)n, ax);
    /* hfft = irfft(conj(x)) and ihfft = conj(rfft(x)), with the norm's direction swapped */
    bool inverse = t == T_IFFT || t == T_IRFFT || t == T_IHFFT;
    double scale = 1;
    ZC_TRY(norm_scale(fn, norm, n, inverse, &scale));
    zc_dtype ct = complex_of(x->dtype), rt = real_of(x->dtype);
    zc_array *xin = NULL, *y = NULL;
    int rc = 0;
    if (t == T_FFT || t == T_IFFT) {
        if ((rc = astype_to(x, ct, &xin)) < 0) return rc;
        if (fits(n, ct)) {
            fft_params fp = {t == T_IFFT ? FFTK_C2C_BWD : FFTK_C2C_FWD, n, scale, 0, 0, -1, 0, 0};
            rc = fft_node(xin, ax, &fp, out);
        } else if ((rc = fit_length(xin, ax, n, &y)) == 0) {
            rc = c2c_axis(y, ax, t == T_IFFT, scale, 0, -1, 0, 0, out);
        }
    } else if (t == T_RFFT || t == T_IHFFT) {
        if (fits(n, ct)) {
            if ((rc = astype_to(x, rt, &xin)) < 0) return rc;
            fft_params fp = {FFTK_R2C, n, scale, 0, t == T_IHFFT, -1, 0, 0};
            rc = fft_node(xin, ax, &fp, out);
        } else {
            /* the complex transform, first n/2+1 outputs (ihfft: conj of the forward one, scaled as inverse) */
            zc_array *z = NULL;
            if ((rc = astype_to(x, ct, &xin)) < 0) return rc;
            if ((rc = fit_length(xin, ax, n, &y)) == 0 && (rc = c2c_axis(y, ax, 0, scale, t == T_IHFFT, -1, 0, 0, &z)) == 0) {
                zc_index idx[ZC_MAX_DIMS];
                for (int d = 0; d < z->ndim; d++) idx[d] = (zc_index){.kind = ZC_IDX_SLICE, .step = 1};
                idx[ax].stop = n / 2 + 1;
                idx[ax].has_stop = 1;
                rc = zc_getitem(z, idx, z->ndim, out);
            }
            zc_array_release(z);
        }
    } else { /* irfft, hfft */
        if ((rc = astype_to(x, ct, &xin)) < 0) return rc;
        if (fits(n, ct)) {
            fft_params fp = {FFTK_C2R, n, scale, t == T_HFFT, 0, -1, 0, 0};
            rc = fft_node(xin, ax, &fp, out);
        } else {
            /* Hermitian spectrum of length n from the first h = n/2+1 values, then the complex inverse */
            int64_t h = n / 2 + 1;
            zc_array *xc = NULL, *hx = NULL, *tail = NULL, *ft = NULL, *ct2 = NULL, *full = NULL, *z = NULL;
            if (t == T_HFFT) rc = zc_elementwise("conj", 1, &xin, &xc);
            else {
                zc_array_retain(xin);
                xc = xin;
            }
            if (rc == 0) rc = fit_length(xc, ax, h, &hx);
            if (rc == 0 && n - h > 0) {
                zc_index idx[ZC_MAX_DIMS];
                for (int d = 0; d < hx->ndim; d++) idx[d] = (zc_index){.kind = ZC_IDX_SLICE, .step = 1};
                idx[ax] = (zc_index){.kind = ZC_IDX_SLICE, .start = 1, .stop = n - h + 1, .step = 1, .has_start = 1,
                                     .has_stop = 1};
                if ((rc = zc_getitem(hx, idx, hx->ndim, &tail)) == 0 && (rc = zc_flip(tail, &ax, 1, &ft)) == 0 &&
                    (rc = zc_elementwise("conj", 1, &ft, &ct2)) == 0) {
                    zc_array *parts[2] = {hx, ct2};
                    rc = zc_concat(2, parts, ax, &full);
                }
            } else if (rc == 0) {
                zc_array_retain(hx);
                full = hx;
            }
            if (rc == 0 && (rc = c2c_axis(full, ax, 1, scale, 0, -1, 0, 0, &z)) == 0)
                rc = zc_elementwise("real", 1, &z, out);
            zc_array_release(xc);
            zc_array_release(hx);
            zc_array_release(tail);
            zc_array_release(ft);
            zc_array_release(ct2);
            zc_array_release(full);
            zc_array_release(z);
        }
    }
    zc_array_release(xin);
    zc_array_release(y);
    return rc;
}

#define ONE_AXIS(name, t)                                                                              \
    int zc_fft_##name(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out)             \
    {                                                                                                  \
        zc__err_clear();                                                                               \
        if (!x || !out) return zc__err(ZC_EINVAL, #name ": NULL argument");                           \
        return transform_axis(t, x, n, axis, norm, out);                                               \
    }
ONE_AXIS(fft, T_FFT)
ONE_AXIS(ifft, T_IFFT)
ONE_AXIS(rfft, T_RFFT)
ONE_AXIS(irfft, T_IRFFT)
ONE_AXIS(hfft, T_HFFT)
ONE_AXIS(ihfft, T_IHFFT)

/* ------------------------------------------------------------ n dimensions */

static int transform_n(transform t1, transform tl, const char *fn, zc_array *x, const int64_t *s, int ns,
                       const int *axes, int naxes, const char *norm, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (ns > 0 && !s) || (naxes > 0 && !axes)) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (x->ndim == 0) return zc__err(ZC_EINVAL, "%s: a 0-d array has no axes to transform", fn);
    int ax[ZC_MAX_DIMS], na;
    if (naxes > 0) {
        if (naxes > x->ndim) return zc__err(ZC_EINVAL, "%s: %d axes for an array of %d dimensions", fn, naxes, x->ndim);
        if (ns > 0 && ns != naxes)
            return zc__err(ZC_EINVAL, "%s: s has %d entries but axes has %d (they must match)", fn, ns, naxes);
        na = naxes;
        for (int i = 0; i < na; i++) {
            ZC_TRY(norm_axis(fn, x, axes[i], &ax[i]));
            for (int j = 0; j < i; j++)
                if (ax[j] == ax[i]) return zc__err(ZC_EINVAL, "%s: axis %d is repeated in axes", fn, ax[i]);
        }
    } else {
        na = ns > 0 ? ns : x->ndim;
        if (na > x->ndim) return zc__err(ZC_EINVAL, "%s: s has %d entries for an array of %d dimensions", fn, ns, x->ndim);
        for (int i = 0; i < na; i++) ax[i] = x->ndim - na + i;
    }
    if (ns < 0 || naxes < 0) return zc__err(ZC_EINVAL, "%s: negative count of s or axes", fn);
    zc_array *cur = x;
    zc_array_retain(cur);
    int rc = 0;
    /* rfftn: rfft on the last axis first; irfftn: the others first, irfft on the last */
    bool last_first = t1 != tl && tl == T_RFFT;
    for (int k = 0; k < na && rc == 0; k++) {
        int i = last_first ? (k == 0 ? na - 1 : k - 1) : k;
        transform t = i == na - 1 ? tl : t1;
        zc_array *next;
        rc = transform_axis(t, cur, ns > 0 ? s[i] : -1, ax[i], norm, &next);
        if (rc == 0) {
            zc_array_release(cur);
            cur = next;
        }
    }
    if (rc < 0) {
        zc_array_release(cur);
        return zc__err_wrap(rc, "%s", fn);
    }
    *out = cur;
    return 0;
}

int zc_fft_fftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm, zc_array **out)
{
    return transform_n(T_FFT, T_FFT, "fftn", x, s, ns, axes, naxes, norm, out);
}
int zc_fft_ifftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm, zc_array **out)
{
    return transform_n(T_IFFT, T_IFFT, "ifftn", x, s, ns, axes, naxes, norm, out);
}
int zc_fft_rfftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm, zc_array **out)
{
    return transform_n(T_FFT, T_RFFT, "rfftn", x, s, ns, axes, naxes, norm, out);
}
int zc_fft_irfftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm, zc_array **out)
{
    return transform_n(T_IFFT, T_IRFFT, "irfftn", x, s, ns, axes, naxes, norm, out);
}

/* ------------------------------------------------------------ frequencies and shifts */

static int freq(const char *fn, int64_t n, double d, zc_dtype dtype, bool half, zc_array **out)
{
    zc__err_clear();
    if (!out) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (n < 1) return zc__err(ZC_EINVAL, "%s: n must be >= 1 (got %lld)", fn, (long long)n);
    if (!(d != 0) || !isfinite(d)) return zc__err(ZC_EINVAL, "%s: d must be finite and non-zero (got %g)", fn, d);
    if (dtype == ZC_DTYPE_INVALID) dtype = ZC_FLOAT64;
    if (dtype != ZC_FLOAT32 && dtype != ZC_FLOAT64)
        return zc__err(ZC_EINVAL, "%s: dtype must be float32 or float64 (got %s)", fn, zc_dtype_name(dtype));
    /* NumPy: integer indices times 1/(n·d), in float64 */
    zc_array *idx = NULL, *r = NULL, *v = NULL, *m = NULL;
    int rc;
    int64_t shift = n / 2;
    if (half) rc = zc_arange(0, (double)(n / 2 + 1), 1, ZC_FLOAT64, 0, &idx);
    else if ((rc = zc_arange((double)-shift, (double)(n - shift), 1, ZC_FLOAT64, 0, &r)) == 0) {
        int zero = 0;
        int64_t sh = -shift;
        rc = zc_roll(r, &sh, 1, &zero, 1, &idx);
    }
    if (rc == 0) rc = zc_scalar(1.0 / ((double)n * d), 0, &v);
    zc_array *args[2] = {idx, v};
    if (rc == 0) rc = zc_elementwise("multiply", 2, args, &m);
    if (rc == 0) rc = astype_to(m, dtype, out);
    zc_array_release(idx);
    zc_array_release(r);
    zc_array_release(v);
    zc_array_release(m);
    return rc;
}

int zc_fft_fftfreq(int64_t n, double d, zc_dtype dtype, zc_array **out) { return freq("fftfreq", n, d, dtype, false, out); }
int zc_fft_rfftfreq(int64_t n, double d, zc_dtype dtype, zc_array **out) { return freq("rfftfreq", n, d, dtype, true, out); }

static int shift(const char *fn, zc_array *x, const int *axes, int naxes, bool inverse, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes > 0 && !axes)) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (naxes < 0) return zc__err(ZC_EINVAL, "%s: negative number of axes", fn);
    int ax[ZC_MAX_DIMS], na = naxes > 0 ? naxes : x->ndim;
    int64_t sh[ZC_MAX_DIMS];
    if (na > x->ndim) return zc__err(ZC_EINVAL, "%s: %d axes for an array of %d dimensions", fn, na, x->ndim);
    if (na == 0) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    for (int i = 0; i < na; i++) {
        if (naxes > 0) ZC_TRY(norm_axis(fn, x, axes[i], &ax[i]));
        else ax[i] = i;
        int64_t n = x->shape[ax[i]];
        sh[i] = inverse ? -(n / 2) : n / 2;
    }
    return zc_roll(x, sh, na, ax, na, out);
}

int zc_fft_fftshift(zc_array *x, const int *axes, int naxes, zc_array **out) { return shift("fftshift", x, axes, naxes, false, out); }
int zc_fft_ifftshift(zc_array *x, const int *axes, int naxes, zc_array **out) { return shift("ifftshift", x, axes, naxes, true, out); }
