/* kernels/red_internal.h — what reduce.c (dispatch, layout, records) shares with
 * red_kern.c (the per-dtype inner loops).
 *
 * red_accum turns a block into "rows" and "runs": after merging adjacent axes, the
 * innermost axis is either kept (a row: acc[j] op= x[j], contiguous in both, the
 * vectorizable case, e.g. reducing the leading axis) or reduced (a run: x[0..n)
 * folded into one accumulator, pairwise for sums, e.g. reducing the last or all
 * axes). A kernel is the pair of loops for one op family and one input dtype. */
#ifndef ZC_KERNELS_RED_INTERNAL_H
#define ZC_KERNELS_RED_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "kernels/reduce.h"

/* Input types in kernel-table order. */
enum {
    RT_B, RT_I8, RT_I16, RT_I32, RT_I64, RT_U8, RT_U16, RT_U32, RT_U64,
    RT_F16, RT_F32, RT_F64, RT_C64, RT_C128, RT_COUNT_
};

/* Accumulator records (fixed layout: stored raw in intermediate arrays). */
typedef struct { int64_t n; double s; } red_mean_r;            /* count, sum */
typedef struct { int64_t n; double s[2]; } red_mean_c;         /* count, complex sum */
typedef struct { int64_t n; double mean, m2; } red_var_r;      /* Chan et al.: count, mean, sum of squared deviations */
typedef struct { int64_t n; double mean[2]; double m2; } red_var_c; /* m2 = sum |x - mean|^2 */
typedef struct {
    union { double d; int64_t i; uint64_t u; } v; /* floats: d; bool and signed: i; unsigned: u */
    int64_t idx;                                  /* global index; INT64_MAX while empty */
} red_arg;

/* Per-call extras of a kernel. */
typedef struct {
    int64_t gidx;       /* arg: global index of the row / of the run's first element */
    int64_t gstride;    /* arg: global index step along a run */
    const double *mean; /* sqdev: per-element mean (row: one per element, complex pairs; run: one) */
    int flip;           /* count: 0 counts nonzero, 1 counts zeros */
} red_aux;

typedef void (*red_fn)(void *acc, const void *x, int64_t n, const red_aux *aux);
typedef struct {
    red_fn row; /* acc[j] op= x[j] for j < n */
    red_fn run; /* acc[0] op= x[0] op ... op x[n-1] */
} red_kern;

/* Tables indexed by RT_*; entries for unsupported dtypes are NULL. Accumulators:
 *   sum/prod: uint64 for bool/ints (wrapping), float for f16/f32, double for f64,
 *             float[2]/double[2] for complex;
 *   min/max:  uint8 for bool, the input type for ints, float for f16, else the type;
 *   arg:      red_arg;  nz: int64;
 *   sumd:     double sums (complex: pairs) into a caller's buffer (mean, var pass 1);
 *   sqdev:    double sums of |x - mean|^2 (var pass 2). */
extern const red_kern red_k_sum[RT_COUNT_], red_k_prod[RT_COUNT_], red_k_min[RT_COUNT_], red_k_max[RT_COUNT_],
    red_k_argmin[RT_COUNT_], red_k_argmax[RT_COUNT_], red_k_nz[RT_COUNT_], red_k_sumd[RT_COUNT_],
    red_k_sqdev[RT_COUNT_];

/* IEEE half to float, branch-light (normal, subnormal, inf, NaN). */
static inline float red_h2f(uint16_t h)
{
    uint32_t em = (uint32_t)(h & 0x7fff), bits = em << 13;
    float f;
    memcpy(&f, &bits, 4);
    f *= 0x1p112f; /* rebias the exponent: 2^(127-15); subnormals come out right too */
    if (em >= 0x7c00) {
        bits |= 0x7f800000u;
        memcpy(&f, &bits, 4);
    }
    return (h & 0x8000) ? -f : f;
}

#endif
