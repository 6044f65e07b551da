/* ops/fft.c — the array API `fft` extension (include/zcube.h, section "FFT").
 *
 * Every transform is a chain of 1-D transforms along one axis. A function
 * records what is asked: one FFT node per axis (a request, plan/fft.h) over
 * its input converted to the transform's dtype, with an output chunk grid
 * fixed from the input's chunks alone (out_chunks), so that what is built on
 * top keeps one grid under any bound. The algorithm is chosen at plan time,
 * for the plan's bound, by fft_expand (the kind's expansion calls it):
 *
 * Along an axis whose line fits in a task (FFT_LINE_FACTOR × line bytes within
 * the task budget), the input is rechunked so the axis is whole and the node
 * runs FFTW on every block. Along a longer axis of length N = N1·N2 the
 * four-step (Bailey) algorithm is written in the engine's own operations:
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
 * part). The request node then becomes the result: the in-core node itself,
 * or a view (a reshape to the same shape) of the four-step's result with the
 * request's chunks, or a copy of the in-core result into them when the
 * request's chunks cut the axis (a line longer than the input's chunk). */
#include <math.h>
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
/* The output's chunks hold the axis whole when a line is at most the input's
 * chunk bytes or this (a line any workable bound transforms in one task). */
#define FFT_WHOLE_MIN ((size_t)16 << 10)

/* What the algorithm is built for: the task budget of the plan, and a cap on
 * the points of a line in one task (0: none). */
typedef struct {
    size_t budget;
    int64_t cap;
} fft_fit;

static size_t block_target(const fft_fit *f)
{
    size_t t = f->budget / FFT_LINE_FACTOR;
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

static zc_dtype out_dtype(const zc_array *x, const fft_params *fp)
{
    return fp->kind == FFTK_C2R ? real_of(x->dtype) : complex_of(x->dtype);
}

/* Output length along the axis, and a line's bytes: the larger of its input and its output. */
static int64_t out_len(const zc_array *x, int axis, const fft_params *fp, size_t *line)
{
    zc_dtype od = out_dtype(x, fp);
    size_t osz = od == ZC_COMPLEX64 ? 8 : od == ZC_COMPLEX128 ? 16 : od == ZC_FLOAT32 ? 4 : 8;
    int64_t olen = fp->kind == FFTK_NONE ? x->shape[axis] : fftk_out_len(fp->kind, fp->n);
    size_t lin = x->itemsize * (size_t)(x->shape[axis] > 0 ? x->shape[axis] : 1), lout = osz * (size_t)olen;
    *line = lin > lout ? lin : lout;
    return olen;
}

/* A new FFT node over x (the right dtype already) with the given chunks. */
static int new_fft(zc_array *x, int axis, const fft_params *fp, const int64_t *chunks, zc_array **out)
{
    int64_t shape[ZC_MAX_DIMS], ch[ZC_MAX_DIMS];
    size_t line;
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = x->shape[d];
        ch[d] = chunks[d];
    }
    shape[axis] = out_len(x, axis, fp, &line);
    ch[axis] = shape[axis] > 0 ? shape[axis] : 1;
    ZC_TRY(node_new(NODE_FFT, x->ndim, shape, ch, out_dtype(x, fp), 1, &x, out));
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

/* x's chunks with the axis whole, or, when they do not hold it, `chunks`
 * with the axis whole: what a node of blocks `chunks` reads. An input that
 * holds the axis whole in its chunks is read as it is: each FFT block is a
 * piece of one input chunk (a stored chunk is decoded once per piece,
 * partially when its codec allows), which costs less than a rechunk stage's
 * decode, encode, write and read back. */
static int lines_input(zc_array *x, int axis, const int64_t *chunks, zc_array **out)
{
    if (x->chunks[axis] == x->shape[axis]) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    int64_t ch[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) ch[d] = chunks[d];
    ch[axis] = x->shape[axis] > 0 ? x->shape[axis] : 1;
    return zc_rechunk(x, ch, out);
}

/* In-core: x (the right dtype already) rechunked so the axis is whole, then one FFT node. */
static int fft_node(zc_array *x, int axis, const fft_params *fp, const fft_fit *f, zc_array **out)
{
    int64_t chunks[ZC_MAX_DIMS];
    size_t line;
    out_len(x, axis, fp, &line);
    if (x->chunks[axis] == x->shape[axis])
        split_chunks(x, axis, line, block_target(f), chunks);
    else
        line_chunks(x, axis, line, block_target(f), chunks);
    zc_array *r;
    ZC_TRY(lines_input(x, axis, chunks, &r));
    int rc = new_fft(r, axis, fp, chunks, out);
    zc_array_release(r);
    return rc;
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

static bool fits(int64_t n, zc_dtype t, const fft_fit *f)
{
    size_t isz = t == ZC_COMPLEX64 || t == ZC_FLOAT32 ? 8 : 16;
    return n > 0 && (size_t)n <= f->budget / FFT_LINE_FACTOR / isz && n <= INT32_MAX && (f->cap <= 0 || n <= f->cap);
}

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
                    int tw_sign, const fft_fit *f, const int64_t *want, zc_array **out);

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
static int bluestein(zc_array *x, int axis, int inverse, double scale, int conj_out, const fft_fit *f, zc_array **out)
{
    int64_t N = x->shape[axis], M = 1;
    while (M < 2 * N - 1) M *= 2;
    int sign = inverse ? 1 : -1, nd = x->ndim;
    zc_array *a = NULL, *ap = NULL, *fa = NULL, *one = NULL, *c = NULL, *tail = NULL, *ft = NULL, *z = NULL,
             *b = NULL, *fb = NULL, *pr = NULL, *cv = NULL, *r = NULL;
    int64_t sh[ZC_MAX_DIMS], ch[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        sh[d] = d == axis ? N : 1;
        ch[d] = d == axis ? (int64_t)(block_target(f) / x->itemsize) : 1; /* blocks within the task budget */
        if (ch[d] < 1) ch[d] = 1;
    }
    int rc;
    /* a = x·c zero-padded to M, and its transform */
    if ((rc = twiddle_node(x, axis, axis, 2 * N, sign, 1.0, 0, &a)) < 0) goto out;
    if ((rc = fit_length(a, axis, M, &ap)) < 0) goto out;
    if ((rc = c2c_axis(ap, axis, 0, 1.0, 0, -1, 0, 0, f, NULL, &fa)) < 0) goto out;
    /* b = [conj(c_0..c_{N-1}), 0 ..., conj(c_{N-1}..c_1)] (size 1 off the axis), and its transform */
    if ((rc = zc_full(nd, sh, ch, x->dtype, 1, &one)) < 0) goto out;
    if ((rc = twiddle_node(one, axis, axis, 2 * N, -sign, 1.0, 0, &c)) < 0) goto out;
    if ((rc = getitem_axis(c, axis, 1, N, &tail)) < 0 || (rc = zc_flip(tail, &axis, 1, &ft)) < 0) goto out;
    sh[axis] = M - 2 * N + 1;
    if ((rc = zc_full(nd, sh, ch, x->dtype, 0, &z)) < 0) goto out;
    zc_array *parts[3] = {c, z, ft};
    if ((rc = zc_concat(3, parts, axis, &b)) < 0) goto out;
    if ((rc = c2c_axis(b, axis, 0, 1.0, 0, -1, 0, 0, f, NULL, &fb)) < 0) goto out;
    /* the convolution, its first N values, times the chirp (conj_out: conjugated first) */
    zc_array *ab[2] = {fa, fb};
    if ((rc = zc_elementwise("multiply", 2, ab, &pr)) < 0) goto out;
    if ((rc = c2c_axis(pr, axis, 1, 1.0 / (double)M, 0, -1, 0, 0, f, NULL, &cv)) < 0) goto out;
    if ((rc = getitem_axis(cv, axis, 0, N, &r)) < 0) goto out;
    rc = twiddle_node(r, axis, axis, 2 * N, conj_out ? -sign : sign, scale, conj_out, out);
out:
    zc_array_release(a); zc_array_release(ap); zc_array_release(fa); zc_array_release(one);
    zc_array_release(c); zc_array_release(tail); zc_array_release(ft); zc_array_release(z);
    zc_array_release(b); zc_array_release(fb); zc_array_release(pr); zc_array_release(cv);
    zc_array_release(r);
    return rc;
}

/* Cut the blocks of a new node (its only reference is the caller's) to about
 * `target` bytes, along its outermost dims first: the reshape into (N1, N2)
 * takes its blocks from the input's chunks, which may be far bigger than what
 * a task of the plan's bound can hold beside its reads and writes. */
static void shrink_blocks(zc_array *a, size_t target)
{
    for (int d = 0; d < a->ndim && node_chunk_bytes(a) > target; d++) {
        size_t rest = node_chunk_bytes(a) / (size_t)a->chunks[d]; /* bytes of one step along d */
        int64_t c = (int64_t)(target / (rest ? rest : 1));
        a->chunks[d] = c < 1 ? 1 : c < a->chunks[d] ? c : a->chunks[d];
    }
}

/* Four-step complex transform of the whole axis (length N = x->shape[axis]).
 * want (or NULL): chunks the result is read by; when their blocks along the
 * axis are whole rows of N1, the transpose writes blocks of exactly those. */
static int four_step(zc_array *x, int axis, int inverse, double scale, int conj_out, const fft_fit *f,
                     const int64_t *want, zc_array **out)
{
    int64_t N = x->shape[axis], N1 = split_of(N), N2 = N / N1;
    if (N1 == 1) return bluestein(x, axis, inverse, scale, conj_out, f, out);
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
    shrink_blocks(r, block_target(f));
    if ((rc = c2c_axis(r, axis, inverse, 1.0, 0, axis + 1, N, sign, f, NULL, &f1)) < 0) goto out;
    if ((rc = c2c_axis(f1, axis + 1, inverse, scale, conj_out, -1, 0, 0, f, NULL, &f2)) < 0) goto out;
    /* f2[k1, k2] = X[k1 + N1·k2]: rechunk with k1 whole, then view as (k2, k1) and flatten */
    int64_t ch[ZC_MAX_DIMS];
    if (want && want[axis] % N1 == 0) {
        for (int d = 0, e = 0; d < x->ndim; d++) {
            if (d == axis) {
                ch[e++] = N1;
                ch[e++] = want[axis] / N1;
            } else {
                ch[e++] = want[d];
            }
        }
    } else {
        line_chunks(f2, axis, f2->itemsize * (size_t)f2->shape[axis], block_target(f), ch);
    }
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
                    int tw_sign, const fft_fit *f, const int64_t *want, zc_array **out)
{
    int64_t n = x->shape[axis];
    if (fits(n, x->dtype, f) || n <= 1) {
        fft_params fp = {inverse ? FFTK_C2C_BWD : FFTK_C2C_FWD, n > 0 ? n : 1, scale, 0, conj_out, tw_dim, tw_sign, tw_n};
        return fft_node(x, axis, &fp, f, out);
    }
    if (tw_dim < 0) return four_step(x, axis, inverse, scale, conj_out, f, want, out);
    zc_array *y;
    ZC_TRY(four_step(x, axis, inverse, scale, conj_out, f, NULL, &y));
    int rc = twiddle_node(y, axis, tw_dim, tw_n, tw_sign, 1.0, 0, out);
    zc_array_release(y);
    return rc;
}

/* ------------------------------------------------------------ a transform too long for a task */

/* The transform of request a (over x, of parameters fp) by the four-step
 * algorithm (Bluestein for primes); real ones through the complex one. want:
 * the chunks the result is read by. */
static int long_transform(zc_array *x, int ax, const fft_params *fp, const fft_fit *f, const int64_t *want,
                          zc_array **out)
{
    int64_t n = fp->n;
    zc_dtype ct = complex_of(x->dtype);
    zc_array *xin = NULL, *y = NULL, *z = NULL;
    int rc = 0;
    if (fp->kind == FFTK_C2C_FWD || fp->kind == FFTK_C2C_BWD) {
        if ((rc = fit_length(x, ax, n, &y)) == 0)
            rc = c2c_axis(y, ax, fp->kind == FFTK_C2C_BWD, fp->scale, 0, -1, 0, 0, f, want, out);
    } else if (fp->kind == FFTK_R2C) {
        /* the complex transform, first n/2+1 outputs (ihfft: conj of the forward one, scaled as inverse) */
        if ((rc = astype_to(x, ct, &xin)) == 0 && (rc = fit_length(xin, ax, n, &y)) == 0 &&
            (rc = c2c_axis(y, ax, 0, fp->scale, fp->conj_out, -1, 0, 0, f, NULL, &z)) == 0)
            rc = getitem_axis(z, ax, 0, n / 2 + 1, out);
    } else { /* c2r (conj_in: hfft) */
        /* Hermitian spectrum of length n from the first h = n/2+1 values, then the complex inverse */
        int64_t h = n / 2 + 1;
        zc_array *xc = NULL, *hx = NULL, *tail = NULL, *ft = NULL, *ct2 = NULL, *full = NULL;
        if (fp->conj_in) rc = zc_elementwise("conj", 1, &x, &xc);
        else {
            zc_array_retain(x);
            xc = x;
        }
        if (rc == 0) rc = fit_length(xc, ax, h, &hx);
        if (rc == 0 && n - h > 0) {
            if ((rc = getitem_axis(hx, ax, 1, n - h + 1, &tail)) == 0 && (rc = zc_flip(tail, &ax, 1, &ft)) == 0 &&
                (rc = zc_elementwise("conj", 1, &ft, &ct2)) == 0) {
                zc_array *parts[2] = {hx, ct2};
                rc = zc_concat(2, parts, ax, &full);
            }
        } else if (rc == 0) {
            zc_array_retain(hx);
            full = hx;
        }
        if (rc == 0 && (rc = c2c_axis(full, ax, 1, fp->scale, 0, -1, 0, 0, f, NULL, &z)) == 0)
            rc = zc_elementwise("real", 1, &z, out);
        zc_array_release(xc);
        zc_array_release(hx);
        zc_array_release(tail);
        zc_array_release(ft);
        zc_array_release(ct2);
        zc_array_release(full);
    }
    zc_array_release(xin);
    zc_array_release(y);
    zc_array_release(z);
    return rc;
}

/* ------------------------------------------------------------ the request and its expansion */

/* The request's chunks, from its input's alone (never from a bound): a line
 * no longer than the input's chunk (or FFT_WHOLE_MIN) is whole, in blocks of
 * lines of about the input's chunk bytes (at most FFT_BLOCK_MAX; pieces of
 * the input's chunks when those hold the axis whole); a longer one is cut
 * like the input, about as many bytes per block, in whole rows of the
 * four-step's N1 when a block holds one. */
static void out_chunks(const zc_array *x, int axis, const fft_params *fp, int64_t *chunks)
{
    size_t line, cin = node_chunk_bytes(x);
    int64_t olen = out_len(x, axis, fp, &line);
    if (line <= (cin > FFT_WHOLE_MIN ? cin : FFT_WHOLE_MIN)) {
        size_t target = cin < FFT_BLOCK_MAX ? cin : FFT_BLOCK_MAX;
        if (x->chunks[axis] == x->shape[axis])
            split_chunks(x, axis, line, target, chunks);
        else
            line_chunks(x, axis, line, target, chunks);
        chunks[axis] = olen > 0 ? olen : 1;
        return;
    }
    zc_dtype od = out_dtype(x, fp);
    size_t osz = od == ZC_COMPLEX64 ? 8 : od == ZC_COMPLEX128 ? 16 : od == ZC_FLOAT32 ? 4 : 8;
    for (int d = 0; d < x->ndim; d++) chunks[d] = x->chunks[d];
    int64_t e = (int64_t)((size_t)x->chunks[axis] * x->itemsize / osz), n1 = split_of(olen);
    if (n1 > 1 && e >= n1) e = e / n1 * n1;
    chunks[axis] = e < 1 ? 1 : e > olen ? olen : e;
}

/* Plan time (the FFT kind's expansion): request a becomes its algorithm for a
 * task budget of `limit` bytes, keeping its shape, dtype and chunks. */
static int fft_expand(zc_array *a, size_t limit)
{
    zc_array *x = a->inputs[0], *y = NULL;
    int ax = a->p.fft.axis;
    fft_fit f = {limit, a->p.fft.line_cap};
    fft_params fp = {(fftk_kind)a->p.fft.kind, a->p.fft.n, a->p.fft.scale, a->p.fft.conj_in, a->p.fft.conj_out, -1,
                     0, 0};
    bool in_core = fits(fp.n, complex_of(x->dtype), &f);
    int rc;
    if (in_core && a->chunks[ax] == a->shape[ax]) {
        /* one task per block of lines: a itself, reading x with the axis whole */
        if ((rc = lines_input(x, ax, a->chunks, &y)) < 0) return rc;
        a->p.fft.expand = NULL;
    } else {
        /* in core, then copied into a's blocks (they cut the axis); or four-step, viewed in a's blocks */
        rc = in_core ? fft_node(x, ax, &fp, &f, &y) : long_transform(x, ax, &fp, &f, a->chunks, &y);
        if (rc < 0) return rc;
        memset(&a->p, 0, sizeof a->p); /* a rechunk or a reshape has no parameters */
        a->kind = in_core ? NODE_RECHUNK : NODE_RESHAPE;
    }
    a->inputs[0] = y; /* takes the reference */
    zc_array_release(x);
    return 0;
}

/* Request node of a transform along axis of x (the right dtype already). */
static int request(zc_array *x, int axis, const fft_params *fp, zc_array **out)
{
    int64_t chunks[ZC_MAX_DIMS];
    out_chunks(x, axis, fp, chunks);
    ZC_TRY(new_fft(x, axis, fp, chunks, out));
    (*out)->chunks[axis] = chunks[axis];
    (*out)->p.fft.expand = fft_expand;
    return 0;
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
    fft_params fp = {FFTK_C2C_FWD, n, 1, 0, 0, -1, 0, 0};
    ZC_TRY(norm_scale(fn, norm, n, inverse, &fp.scale));
    zc_dtype in = complex_of(x->dtype);
    if (t == T_IFFT) fp.kind = FFTK_C2C_BWD;
    if (t == T_RFFT || t == T_IHFFT) {
        fp.kind = FFTK_R2C;
        fp.conj_out = t == T_IHFFT;
        in = real_of(x->dtype);
    }
    if (c2r) {
        fp.kind = FFTK_C2R;
        fp.conj_in = t == T_HFFT;
    }
    zc_array *xin;
    ZC_TRY(astype_to(x, in, &xin));
    int rc = request(xin, ax, &fp, out);
    zc_array_release(xin);
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
