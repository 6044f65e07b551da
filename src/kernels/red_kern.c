/* kernels/red_kern.c — inner loops of the reductions, stamped per dtype by macros.
 *
 * Rows (acc[j] op= x[j]) are written as plain independent-element loops so the
 * compiler vectorizes them; runs use NumPy's pairwise summation (8 accumulators over
 * blocks of up to 128 elements, halves above) for float sums, so a contiguous sum
 * matches NumPy's to rounding. Integer sums and products wrap (computed in uint64,
 * which gives the same bits as int64 arithmetic modulo 2^64, like NumPy). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE_SIZE__)
#pragma GCC optimize("O3") /* these loops are the hot path: vectorize them at any build level */
#endif

#include <math.h>
#include <stdbool.h>

#include "kernels/red_internal.h"

/* ---- conversions ---- */

#define CV_ID(v) (v)
#define CV_B(v) ((v) != 0)
#define CV_H(v) red_h2f(v)

/* Pairwise sum of GET(i) for i < n, in type A. GET may use x, s, m0, m1. */
#define RED_PAIRWISE(name, T, A, GET)                                                                   \
    static A name(const T *x, int64_t n, int64_t s, double m0, double m1)                             \
    {                                                                                                  \
        (void)m0;                                                                                      \
        (void)m1;                                                                                      \
        if (n < 8) {                                                                                   \
            A r = 0;                                                                                   \
            for (int64_t i = 0; i < n; i++) r += GET(i);                                               \
            return r;                                                                                  \
        }                                                                                              \
        if (n <= 128) {                                                                                \
            A r0 = GET(0), r1 = GET(1), r2 = GET(2), r3 = GET(3), r4 = GET(4), r5 = GET(5), r6 = GET(6), \
              r7 = GET(7);                                                                             \
            int64_t i;                                                                                 \
            for (i = 8; i < n - n % 8; i += 8) {                                                       \
                r0 += GET(i + 0);                                                                      \
                r1 += GET(i + 1);                                                                      \
                r2 += GET(i + 2);                                                                      \
                r3 += GET(i + 3);                                                                      \
                r4 += GET(i + 4);                                                                      \
                r5 += GET(i + 5);                                                                      \
                r6 += GET(i + 6);                                                                      \
                r7 += GET(i + 7);                                                                      \
            }                                                                                          \
            A res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));                                 \
            for (; i < n; i++) res += GET(i);                                                          \
            return res;                                                                                \
        }                                                                                              \
        int64_t n2 = n / 2;                                                                            \
        n2 -= n2 % 8;                                                                                  \
        return name(x, n2, s, m0, m1) + name(x + n2 * s, n - n2, s, m0, m1);                           \
    }

/* pairwise sums in the accumulator type of sum (strided, for complex parts) */
#define GET_F(i) ((float)x[(i) * s])
#define GET_H(i) red_h2f(x[(i) * s])
#define GET_D(i) ((double)x[(i) * s])
RED_PAIRWISE(pw_f32, float, float, GET_F)
RED_PAIRWISE(pw_f16, uint16_t, float, GET_H)
RED_PAIRWISE(pw_f64, double, double, GET_D)

/* ---- sum ---- */

#define SUM_INT(sfx, T, CV)                                                                            \
    static void sum_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                \
    {                                                                                                  \
        uint64_t *restrict a = acc;                                                                    \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < n; j++) a[j] += (uint64_t)CV(x[j]);                                    \
    }                                                                                                  \
    static void sum_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                \
    {                                                                                                  \
        const T *restrict x = xv;                                                                      \
        uint64_t r = 0;                                                                                \
        for (int64_t j = 0; j < n; j++) r += (uint64_t)CV(x[j]);                                       \
        *(uint64_t *)acc += r;                                                                         \
    }
SUM_INT(b, uint8_t, CV_B)
SUM_INT(i8, int8_t, CV_ID)
SUM_INT(i16, int16_t, CV_ID)
SUM_INT(i32, int32_t, CV_ID)
SUM_INT(i64, int64_t, CV_ID)
SUM_INT(u8, uint8_t, CV_ID)
SUM_INT(u16, uint16_t, CV_ID)
SUM_INT(u32, uint32_t, CV_ID)
SUM_INT(u64, uint64_t, CV_ID)

/* floats; complex rows are float rows of twice the length */
#define SUM_FLT(sfx, T, A, CV, PW, W)                                                                  \
    static void sum_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                \
    {                                                                                                  \
        A *restrict a = acc;                                                                           \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < (W) * n; j++) a[j] += CV(x[j]);                                        \
    }                                                                                                  \
    static void sum_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                \
    {                                                                                                  \
        A *a = acc;                                                                                    \
        const T *x = xv;                                                                               \
        for (int w = 0; w < (W); w++) a[w] += PW(x + w, n, (W), 0, 0);                                 \
    }
SUM_FLT(f16, uint16_t, float, CV_H, pw_f16, 1)
SUM_FLT(f32, float, float, CV_ID, pw_f32, 1)
SUM_FLT(f64, double, double, CV_ID, pw_f64, 1)
SUM_FLT(c64, float, float, CV_ID, pw_f32, 2)
SUM_FLT(c128, double, double, CV_ID, pw_f64, 2)

/* ---- prod ---- */

#define PROD_REAL(sfx, T, A, CV)                                                                       \
    static void prod_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        A *restrict a = acc;                                                                           \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < n; j++) a[j] *= (A)CV(x[j]);                                           \
    }                                                                                                  \
    static void prod_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        const T *restrict x = xv;                                                                      \
        A r = *(A *)acc;                                                                               \
        for (int64_t j = 0; j < n; j++) r *= (A)CV(x[j]);                                              \
        *(A *)acc = r;                                                                                 \
    }
PROD_REAL(b, uint8_t, uint64_t, CV_B)
PROD_REAL(i8, int8_t, uint64_t, CV_ID)
PROD_REAL(i16, int16_t, uint64_t, CV_ID)
PROD_REAL(i32, int32_t, uint64_t, CV_ID)
PROD_REAL(i64, int64_t, uint64_t, CV_ID)
PROD_REAL(u8, uint8_t, uint64_t, CV_ID)
PROD_REAL(u16, uint16_t, uint64_t, CV_ID)
PROD_REAL(u32, uint32_t, uint64_t, CV_ID)
PROD_REAL(u64, uint64_t, uint64_t, CV_ID)
PROD_REAL(f16, uint16_t, float, CV_H)
PROD_REAL(f32, float, float, CV_ID)
PROD_REAL(f64, double, double, CV_ID)

/* complex: (a + bi)(c + di) = (ac - bd) + (ad + bc)i, as NumPy computes it */
#define PROD_CPLX(sfx, T)                                                                              \
    static void prod_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        T *restrict a = acc;                                                                           \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                              \
            T ar = a[2 * j], ai = a[2 * j + 1], xr = x[2 * j], xi = x[2 * j + 1];                      \
            a[2 * j] = ar * xr - ai * xi;                                                              \
            a[2 * j + 1] = ar * xi + ai * xr;                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void prod_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        prod_row_##sfx##_1(acc, xv, n);                                                                \
    }
#define PROD_CPLX_RUN1(sfx, T)                                                                         \
    static void prod_row_##sfx##_1(void *acc, const void *xv, int64_t n)                               \
    {                                                                                                  \
        T *a = acc;                                                                                    \
        const T *x = xv;                                                                               \
        T ar = a[0], ai = a[1];                                                                        \
        for (int64_t j = 0; j < n; j++) {                                                              \
            T xr = x[2 * j], xi = x[2 * j + 1], t = ar * xr - ai * xi;                                 \
            ai = ar * xi + ai * xr;                                                                    \
            ar = t;                                                                                    \
        }                                                                                              \
        a[0] = ar;                                                                                     \
        a[1] = ai;                                                                                     \
    }
PROD_CPLX_RUN1(c64, float)
PROD_CPLX_RUN1(c128, double)
PROD_CPLX(c64, float)
PROD_CPLX(c128, double)

/* ---- min / max (NaN wins, like NumPy) ---- */

#define LT(a, b) ((a) < (b))
#define GT(a, b) ((a) > (b))
#define MINMAX_INT(name, sfx, T, A, CV, CMP)                                                           \
    static void name##_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        A *restrict a = acc;                                                                           \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                              \
            A v = (A)CV(x[j]);                                                                         \
            a[j] = CMP(v, a[j]) ? v : a[j];                                                            \
        }                                                                                              \
    }                                                                                                  \
    static void name##_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        const T *restrict x = xv;                                                                      \
        A r = *(A *)acc;                                                                               \
        for (int64_t j = 0; j < n; j++) {                                                              \
            A v = (A)CV(x[j]);                                                                         \
            r = CMP(v, r) ? v : r;                                                                     \
        }                                                                                              \
        *(A *)acc = r;                                                                                 \
    }
#define MINMAX_FLT(name, sfx, T, A, CV, CMP)                                                           \
    static void name##_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        A *restrict a = acc;                                                                           \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                              \
            A v = (A)CV(x[j]);                                                                         \
            a[j] = (CMP(v, a[j]) || v != v) ? v : a[j];                                                \
        }                                                                                              \
    }                                                                                                  \
    /* 8 independent lanes (vectorizes); a lane that meets a NaN keeps it */                          \
    static void name##_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        const T *restrict x = xv;                                                                      \
        A r = *(A *)acc, l[8];                                                                         \
        for (int k = 0; k < 8; k++) l[k] = r;                                                          \
        int64_t j = 0;                                                                                 \
        for (; j + 8 <= n; j += 8)                                                                     \
            for (int k = 0; k < 8; k++) {                                                              \
                A v = (A)CV(x[j + k]);                                                                 \
                l[k] = (CMP(v, l[k]) || v != v) ? v : l[k];                                            \
            }                                                                                          \
        for (; j < n; j++) {                                                                           \
            A v = (A)CV(x[j]);                                                                         \
            l[0] = (CMP(v, l[0]) || v != v) ? v : l[0];                                                \
        }                                                                                              \
        for (int k = 0; k < 8; k++) r = (CMP(l[k], r) || l[k] != l[k]) && r == r ? l[k] : r;          \
        *(A *)acc = r;                                                                                 \
    }

#define MINMAX_ALL(name, CMP)                                                                          \
    MINMAX_INT(name, b, uint8_t, uint8_t, CV_B, CMP)                                                   \
    MINMAX_INT(name, i8, int8_t, int8_t, CV_ID, CMP)                                                   \
    MINMAX_INT(name, i16, int16_t, int16_t, CV_ID, CMP)                                                \
    MINMAX_INT(name, i32, int32_t, int32_t, CV_ID, CMP)                                                \
    MINMAX_INT(name, i64, int64_t, int64_t, CV_ID, CMP)                                                \
    MINMAX_INT(name, u8, uint8_t, uint8_t, CV_ID, CMP)                                                 \
    MINMAX_INT(name, u16, uint16_t, uint16_t, CV_ID, CMP)                                              \
    MINMAX_INT(name, u32, uint32_t, uint32_t, CV_ID, CMP)                                              \
    MINMAX_INT(name, u64, uint64_t, uint64_t, CV_ID, CMP)                                              \
    MINMAX_FLT(name, f16, uint16_t, float, CV_H, CMP)                                                  \
    MINMAX_FLT(name, f32, float, float, CV_ID, CMP)                                                     \
    MINMAX_FLT(name, f64, double, double, CV_ID, CMP)
MINMAX_ALL(min, LT)
MINMAX_ALL(max, GT)

/* ---- argmin / argmax: first occurrence; NaN is the extreme, the first NaN wins ---- */

/* Does value v at index i replace (cur, ci)? Floats: */
#define ARG_BETTER_F(CMP, v, i, cur, ci)                                                               \
    ((v) != (v) ? ((cur) == (cur) || (i) < (ci))                                                       \
                : ((cur) == (cur) && (CMP(v, cur) || ((v) == (cur) && (i) < (ci)))))
#define ARG_BETTER_I(CMP, v, i, cur, ci) (CMP(v, cur) || ((v) == (cur) && (i) < (ci)))

#define ARG_K(name, sfx, T, F, CV, CMP, BETTER)                                                        \
    static void name##_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        red_arg *restrict a = acc;                                                                     \
        const T *restrict x = xv;                                                                      \
        int64_t gi = aux->gidx;                                                                        \
        for (int64_t j = 0; j < n; j++) {                                                              \
            __typeof__(a[j].v.F) v = CV(x[j]);                                                         \
            if (BETTER(CMP, v, gi, a[j].v.F, a[j].idx)) {                                              \
                a[j].v.F = v;                                                                          \
                a[j].idx = gi;                                                                         \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void name##_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)             \
    {                                                                                                  \
        red_arg *a = acc;                                                                              \
        const T *restrict x = xv;                                                                      \
        __typeof__(a->v.F) cur = a->v.F;                                                               \
        int64_t ci = a->idx, gi = aux->gidx, gs = aux->gstride;                                        \
        for (int64_t j = 0; j < n; j++, gi += gs) {                                                    \
            __typeof__(a->v.F) v = CV(x[j]);                                                           \
            if (BETTER(CMP, v, gi, cur, ci)) {                                                         \
                cur = v;                                                                               \
                ci = gi;                                                                               \
            }                                                                                          \
        }                                                                                              \
        a->v.F = cur;                                                                                  \
        a->idx = ci;                                                                                   \
    }
#define ARG_ALL(name, CMP)                                                                             \
    ARG_K(name, b, uint8_t, i, CV_B, CMP, ARG_BETTER_I)                                                \
    ARG_K(name, i8, int8_t, i, CV_ID, CMP, ARG_BETTER_I)                                               \
    ARG_K(name, i16, int16_t, i, CV_ID, CMP, ARG_BETTER_I)                                             \
    ARG_K(name, i32, int32_t, i, CV_ID, CMP, ARG_BETTER_I)                                             \
    ARG_K(name, i64, int64_t, i, CV_ID, CMP, ARG_BETTER_I)                                             \
    ARG_K(name, u8, uint8_t, u, CV_ID, CMP, ARG_BETTER_I)                                              \
    ARG_K(name, u16, uint16_t, u, CV_ID, CMP, ARG_BETTER_I)                                            \
    ARG_K(name, u32, uint32_t, u, CV_ID, CMP, ARG_BETTER_I)                                            \
    ARG_K(name, u64, uint64_t, u, CV_ID, CMP, ARG_BETTER_I)                                            \
    ARG_K(name, f16, uint16_t, d, CV_H, CMP, ARG_BETTER_F)                                             \
    ARG_K(name, f32, float, d, CV_ID, CMP, ARG_BETTER_F)                                               \
    ARG_K(name, f64, double, d, CV_ID, CMP, ARG_BETTER_F)
ARG_ALL(argmin, LT)
ARG_ALL(argmax, GT)

/* ---- count of nonzero (any, all via flip, count_nonzero) ---- */

#define NZ_INT(v) ((v) != 0)
#define NZ_H(v) (((v) & 0x7fff) != 0)
#define NZ_K(sfx, T, W, NZ)                                                                            \
    static void nz_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                 \
    {                                                                                                  \
        int64_t *restrict a = acc;                                                                     \
        const T *restrict x = xv;                                                                      \
        int64_t f = aux->flip;                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                              \
            bool nz = NZ(x[(W) * j]);                                                                  \
            if ((W) == 2) nz = nz || NZ(x[(W) * j + (W) - 1]);                                         \
            a[j] += (int64_t)nz ^ f;                                                                   \
        }                                                                                              \
    }                                                                                                  \
    static void nz_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)                 \
    {                                                                                                  \
        const T *restrict x = xv;                                                                      \
        int64_t c = 0;                                                                                 \
        for (int64_t j = 0; j < n; j++) {                                                              \
            bool nz = NZ(x[(W) * j]);                                                                  \
            if ((W) == 2) nz = nz || NZ(x[(W) * j + (W) - 1]);                                         \
            c += nz;                                                                                   \
        }                                                                                              \
        *(int64_t *)acc += aux->flip ? n - c : c;                                                      \
    }
NZ_K(b, uint8_t, 1, NZ_INT)
NZ_K(i8, int8_t, 1, NZ_INT)
NZ_K(i16, int16_t, 1, NZ_INT)
NZ_K(i32, int32_t, 1, NZ_INT)
NZ_K(i64, int64_t, 1, NZ_INT)
NZ_K(u8, uint8_t, 1, NZ_INT)
NZ_K(u16, uint16_t, 1, NZ_INT)
NZ_K(u32, uint32_t, 1, NZ_INT)
NZ_K(u64, uint64_t, 1, NZ_INT)
NZ_K(f16, uint16_t, 1, NZ_H)
NZ_K(f32, float, 1, NZ_INT)
NZ_K(f64, double, 1, NZ_INT)
NZ_K(c64, float, 2, NZ_INT)
NZ_K(c128, double, 2, NZ_INT)

/* ---- double sums (mean; var pass 1) and squared deviations (var pass 2) ---- */

#define GET_DB(i) ((double)(x[(i) * s] != 0))
#define GET_DH(i) ((double)red_h2f(x[(i) * s]))
#define SQ(v) ((v) * (v))
#define GET_SQ(i) SQ(GET_D(i) - m0)
#define GET_SQB(i) SQ(GET_DB(i) - m0)
#define GET_SQH(i) SQ(GET_DH(i) - m0)
#define GET_SQC(i) (SQ((double)x[(i) * s] - m0) + SQ((double)x[(i) * s + 1] - m1)) /* s = 2: pairs */

#define SUMD_K(sfx, T, W, DV, GETD, GETSQ)                                                             \
    RED_PAIRWISE(pwd_##sfx, T, double, GETD)                                                           \
    RED_PAIRWISE(pwsq_##sfx, T, double, GETSQ)                                                         \
    static void sumd_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        double *restrict a = acc;                                                                      \
        const T *restrict x = xv;                                                                      \
        for (int64_t j = 0; j < (W) * n; j++) a[j] += DV(x[j]);                                        \
    }                                                                                                  \
    static void sumd_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)               \
    {                                                                                                  \
        double *a = acc;                                                                               \
        const T *x = xv;                                                                               \
        for (int w = 0; w < (W); w++) a[w] += pwd_##sfx(x + w, n, (W), 0, 0);                          \
    }                                                                                                  \
    static void sqdev_row_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)              \
    {                                                                                                  \
        double *restrict a = acc;                                                                      \
        const T *restrict x = xv;                                                                      \
        const double *restrict m = aux->mean;                                                          \
        for (int64_t j = 0; j < n; j++) {                                                              \
            double d0 = DV(x[(W) * j]) - m[(W) * j];                                                   \
            double e = d0 * d0;                                                                        \
            if ((W) == 2) {                                                                            \
                double d1 = DV(x[(W) * j + (W) - 1]) - m[(W) * j + (W) - 1];                           \
                e += d1 * d1;                                                                          \
            }                                                                                          \
            a[j] += e;                                                                                 \
        }                                                                                              \
    }                                                                                                  \
    static void sqdev_run_##sfx(void *acc, const void *xv, int64_t n, const red_aux *aux)              \
    {                                                                                                  \
        *(double *)acc += pwsq_##sfx(xv, n, (W), aux->mean[0], (W) == 2 ? aux->mean[1] : 0.0);            \
    }
#define DV_B(v) ((double)((v) != 0))
#define DV_D(v) ((double)(v))
#define DV_H(v) ((double)red_h2f(v))
SUMD_K(b, uint8_t, 1, DV_B, GET_DB, GET_SQB)
SUMD_K(i8, int8_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(i16, int16_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(i32, int32_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(i64, int64_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(u8, uint8_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(u16, uint16_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(u32, uint32_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(u64, uint64_t, 1, DV_D, GET_D, GET_SQ)
SUMD_K(f16, uint16_t, 1, DV_H, GET_DH, GET_SQH)
SUMD_K(f32, float, 1, DV_D, GET_D, GET_SQ)
SUMD_K(f64, double, 1, DV_D, GET_D, GET_SQ)
SUMD_K(c64, float, 2, DV_D, GET_D, GET_SQC)
SUMD_K(c128, double, 2, DV_D, GET_D, GET_SQC)

/* ---- tables ---- */

#define K(pre, sfx) {pre##_row_##sfx, pre##_run_##sfx}
#define K_REAL(pre) K(pre, b), K(pre, i8), K(pre, i16), K(pre, i32), K(pre, i64), K(pre, u8), K(pre, u16), \
                    K(pre, u32), K(pre, u64), K(pre, f16), K(pre, f32), K(pre, f64)
#define K_ALL(pre) K_REAL(pre), K(pre, c64), K(pre, c128)

const red_kern red_k_sum[RT_COUNT_] = {K_ALL(sum)};
const red_kern red_k_prod[RT_COUNT_] = {K_ALL(prod)};
const red_kern red_k_min[RT_COUNT_] = {K_REAL(min), {0, 0}, {0, 0}};
const red_kern red_k_max[RT_COUNT_] = {K_REAL(max), {0, 0}, {0, 0}};
const red_kern red_k_argmin[RT_COUNT_] = {K_REAL(argmin), {0, 0}, {0, 0}};
const red_kern red_k_argmax[RT_COUNT_] = {K_REAL(argmax), {0, 0}, {0, 0}};
const red_kern red_k_nz[RT_COUNT_] = {K_ALL(nz)};
const red_kern red_k_sumd[RT_COUNT_] = {K_ALL(sumd)};
const red_kern red_k_sqdev[RT_COUNT_] = {K_ALL(sqdev)};
