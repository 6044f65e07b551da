/* plan/fft.h — the FFT node kind (ops/fft.c builds it; its row of the kind
 * table, plan/kind.h, is in plan/fft.c).
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
 * precision (ops/fft.c converts first).
 *
 * A transform as the fft functions make it is a request (p.fft.expand set):
 * an FFT node of the whole transform (its region is still the one-task
 * transform, so it can be evaluated as it is) with an output chunk grid fixed
 * from its input's chunks, never from the bound. At plan time the kind's
 * expansion hands it to that builder (ops/fft.c), which, for the plan's bound,
 * makes it a node of one task per block of lines (the input rechunked to
 * them), or the output of the four-step or Bluestein algorithm re-gridded to
 * the request's chunks. */
#ifndef ZC_PLAN_FFT_H
#define ZC_PLAN_FFT_H

#include "plan/array.h"

#endif
