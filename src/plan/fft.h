/* plan/fft.h — the FFT node kind (ops/fft.c builds it).
 *
 *   FFT  1-D transforms along one axis (p.fft.axis) whose input holds the
 *        whole axis in every block: each output region pulls its input region
 *        with the axis whole (the first min(input length, transform input
 *        length) elements; the rest is zero padding), transforms its lines in
 *        cache-sized batches with FFTW (kernels/fft.h) and keeps the requested
 *        part of the axis. After the transform every element may be conjugated,
 *        scaled and multiplied by a four-step twiddle factor
 *        exp(tw_sign·2πi·(k·j mod tw_n)/tw_n), k = index along the axis, j =
 *        index along tw_dim. Kind FFTK_NONE applies only the twiddle (and scale,
 *        conjugating its input first when conj_out is set); there tw_dim may be
 *        the axis itself: j = k, the chirp exp(tw_sign·2πi·k²/tw_n) of Bluestein.
 *
 * Input dtype: complex for c2c/c2r/none, real float for r2c, of the output's
 * precision (ops/fft.c converts first). */
#ifndef ZC_PLAN_FFT_H
#define ZC_PLAN_FFT_H

#include <jansson.h>

#include "plan/array.h"

/* Compute a region of an FFT node (out: C order). */
int fftn_region(zc_array *a, const zc_range *sel, void *out);
/* Bytes a task allocates for it (not counting out); `proj` projects the input. */
typedef size_t (*fftn_proj_fn)(const zc_array *a, const zc_range *sel);
size_t fftn_proj(const zc_array *a, const zc_range *sel, fftn_proj_fn proj);
/* "fft", "ifft", "rfft", "irfft", "twiddle". */
const char *fftn_name(const zc_array *a);
/* Parameters into/out of a plan node object (from_json validates them). */
int fftn_to_json(const zc_array *a, json_t *o);
int fftn_from_json(const json_t *o, zc_array *a);

#endif
