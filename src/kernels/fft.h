/* kernels/fft.h — FFTW3 underneath the FFT node (plan/fft.c).
 *
 * Batched 1-D transforms of `howmany` contiguous lines (distance = line length)
 * from one aligned buffer to another. Plans are made once per (kind, precision,
 * n, howmany) and kept for the process's life: FFTW's planner is not
 * thread-safe, so planning holds a mutex; execution uses the new-array execute
 * functions (thread-safe) on buffers aligned like the planning ones
 * (FFTK_ALIGN bytes). Planning uses FFTW_ESTIMATE (see fft.c). */
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
/* Run a plan on new aligned buffers of the planned sizes (in is preserved only for c2c/r2c). */
void fftk_execute(fftk_kind k, int single, void *plan, void *in, void *out);

/* True when p has the alignment of the planning buffers (may be passed to fftk_execute). */
int fftk_aligned(const void *p);

/* Aligned scratch from zc__malloc (free with fftk_free). */
void *fftk_alloc(size_t bytes);
void fftk_free(void *p);

/* Plans made so far (for tests: plans are reused across tasks). */
int fftk_plan_count(void);

#endif
