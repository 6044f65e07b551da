/* kernels/fft.h — FFTW3 underneath the FFT node (plan/fft.c).
 *
 * Batched 1-D transforms of `howmany` lines: contiguous lines (distance = line
 * length) from one aligned buffer to another (fftk_plan), or lines of any
 * strides read where they are and written where they go (fftk_plan_strided:
 * the FFT node reading its source in place and writing its output block).
 * Plans are made once per geometry and kept for the process's life: FFTW's
 * planner is not thread-safe, so planning holds a mutex; execution uses the
 * new-array execute functions (thread-safe) on arrays aligned like the
 * planning ones (FFTK_ALIGN bytes for fftk_plan; for strided plans the
 * alignment FFTW sees, fftw_alignment_of, is part of the plan's key).
 * Planning uses FFTW_ESTIMATE, which neither reads nor writes the arrays. */
#ifndef ZC_KERNELS_FFT_H
#define ZC_KERNELS_FFT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FFTK_C2C_FWD,  /* complex n → complex n, exp(-2πi jk/n) */
    FFTK_C2C_BWD,  /* complex n → complex n, exp(+2πi jk/n), unnormalized */
    FFTK_R2C,      /* real n → complex n/2+1 (forward) */
    FFTK_C2R,      /* complex n/2+1 → real n (backward, unnormalized) */
    FFTK_NONE      /* no transform (a twiddle-only node) */
} fftk_kind;

#define FFTK_ALIGN 64

/* Elements (real or complex) of one input / output line of a transform of length n. */
int64_t fftk_in_len(fftk_kind k, int64_t n);
int64_t fftk_out_len(fftk_kind k, int64_t n);

/* The plan (opaque) for `howmany` lines; created on first use. in/out: aligned
 * scratch of the batch's sizes that MEASURE may overwrite (call before filling). */
int fftk_plan(fftk_kind k, int single, int64_t n, int howmany, void *in, void *out, void **plan);
/* The plan for `howmany` lines of a transform of length n read at in and
 * written at out: line j's element t at in[j·idist + t·istride] and out[j·odist
 * + t·ostride], in elements of each side's type (complex, or real for the real
 * side of r2c/c2r). Planned on in and out themselves (not touched) and cached
 * per geometry and per fftw_alignment_of(in), (out): it may be executed
 * (fftk_execute) on any arrays with those alignments. preserve: c2r must leave
 * its input as it is (FFTW_PRESERVE_INPUT; c2c and r2c always do). The arrays
 * must not overlap. */
int fftk_plan_strided(fftk_kind k, int single, int64_t n, int64_t howmany, int64_t istride, int64_t idist,
                      int64_t ostride, int64_t odist, int preserve, const void *in, void *out, void **plan);
/* Run a plan on new aligned buffers of the planned sizes (in is preserved only for c2c/r2c). */
void fftk_execute(fftk_kind k, int single, void *plan, void *in, void *out);

/* The alignment FFTW sees in p (fftw_alignment_of, or fftwf_ for single): a
 * strided plan runs on arrays whose alignments equal its planning arrays'. */
int fftk_alignment(const void *p, int single);
/* True when p has the alignment of the planning buffers (may be passed to fftk_execute). */
int fftk_aligned(const void *p);

/* Aligned scratch from zc__malloc (free with fftk_free). */
void *fftk_alloc(size_t bytes);
void fftk_free(void *p);

/* Plans made so far (for tests: plans are reused across tasks). */
int fftk_plan_count(void);

/* Test hooks. The FFT node runs FFTW straight from its input to its output when
 * it can, and reads its input where it is when it can (plan/fft.c, on by
 * default; off: it copies the input region and gathers lines into a work
 * buffer). fftk_direct_count: batches run straight into the output since the
 * process started (in_place: only those that read their input where it was). */
void fftk_set_direct(int on);
int fftk_direct_enabled(void);
void fftk_count_direct(int64_t batches, int in_place);
int64_t fftk_direct_count(int in_place);

#endif
