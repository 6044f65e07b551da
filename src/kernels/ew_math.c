/* kernels/ew_math.c — transcendental kernels, real and complex.
 *
 * Real functions call libm in the dtype's precision (sinf for float32 and
 * float16, sin for float64), as NumPy's scalar loops do. Complex functions
 * call the C library's complex functions (NumPy uses the same ones on glibc),
 * except where NumPy has its own formula, copied here so results agree:
 * expm1, log1p, log2, log10 and pow (small integer exponents by repeated
 * multiplication, 0**z rules). logaddexp is NumPy's npy_logaddexp.
 */
#include <math.h>

#include "kernels/ew_internal.h"

typedef float complex ew_c64;
typedef double complex ew_c128;

#define KSIG(name)                                                                                 \
    static void name(size_t n, void *restrict dv, const void *restrict av, const void *restrict bv, \
                     const void *restrict cv, unsigned sc)

#define DEF_UN(name, TA, TR, EXPR)                                                                 \
    KSIG(name)                                                                                     \
    {                                                                                              \
        TR *restrict d = dv;                                                                       \
        const TA *restrict pa = av;                                                                \
        (void)bv; (void)cv; (void)sc;                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            const TA x = pa[i];                                                                    \
            d[i] = (EXPR);                                                                         \
        }                                                                                          \
    }

#define DEF_BIN(name, TA, TR, EXPR)                                                                \
    KSIG(name)                                                                                     \
    {                                                                                              \
        TR *restrict d = dv;                                                                       \
        const TA *restrict pa = av;                                                                \
        const TA *restrict pb = bv;                                                                \
        const size_t ia = (sc & EW_SA) ? 0 : 1, ib = (sc & EW_SB) ? 0 : 1;                         \
        (void)cv;                                                                                  \
        for (size_t i = 0; i < n; i++) {                                                           \
            const TA x = pa[i * ia], y = pb[i * ib];                                               \
            d[i] = (EXPR);                                                                         \
        }                                                                                          \
    }

/* ------------------------------------------------------------------ real */

#define NPY_LOGE2 0.693147180559945309417232121458176568
#define NPY_LOG2E 1.442695040888963407359924681001892137
#define NPY_LOG10E 0.434294481903251827651128918916605082

static inline float logaddexp_f32(float x, float y)
{
    if (x == y) return x + (float)NPY_LOGE2; /* infinities of the same sign */
    float tmp = x - y;
    if (tmp > 0) return x + log1pf(expf(-tmp));
    if (tmp <= 0) return y + log1pf(expf(tmp));
    return tmp; /* NaN */
}

static inline double logaddexp_f64(double x, double y)
{
    if (x == y) return x + NPY_LOGE2;
    double tmp = x - y;
    if (tmp > 0) return x + log1p(exp(-tmp));
    if (tmp <= 0) return y + log1p(exp(tmp));
    return tmp;
}

#define REAL_KERNELS(s, T, F)                                                                      \
    DEF_UN(acos_##s, T, T, acos##F(x))                                                             \
    DEF_UN(acosh_##s, T, T, acosh##F(x))                                                           \
    DEF_UN(asin_##s, T, T, asin##F(x))                                                             \
    DEF_UN(asinh_##s, T, T, asinh##F(x))                                                           \
    DEF_UN(atan_##s, T, T, atan##F(x))                                                             \
    DEF_UN(atanh_##s, T, T, atanh##F(x))                                                           \
    DEF_UN(cos_##s, T, T, cos##F(x))                                                               \
    DEF_UN(cosh_##s, T, T, cosh##F(x))                                                             \
    DEF_UN(exp_##s, T, T, exp##F(x))                                                               \
    DEF_UN(expm1_##s, T, T, expm1##F(x))                                                           \
    DEF_UN(log_##s, T, T, log##F(x))                                                               \
    DEF_UN(log1p_##s, T, T, log1p##F(x))                                                           \
    DEF_UN(log2_##s, T, T, log2##F(x))                                                             \
    DEF_UN(log10_##s, T, T, log10##F(x))                                                           \
    DEF_UN(sin_##s, T, T, sin##F(x))                                                               \
    DEF_UN(sinh_##s, T, T, sinh##F(x))                                                             \
    DEF_UN(tan_##s, T, T, tan##F(x))                                                               \
    DEF_UN(tanh_##s, T, T, tanh##F(x))                                                             \
    DEF_BIN(atan2_##s, T, T, atan2##F(x, y))                                                       \
    DEF_BIN(hypot_##s, T, T, hypot##F(x, y))                                                       \
    DEF_BIN(nextafter_##s, T, T, nextafter##F(x, y))                                               \
    DEF_BIN(logaddexp_k_##s, T, T, logaddexp_##s(x, y))                                            \
    DEF_BIN(pow_##s, T, T, pow##F(x, y))

REAL_KERNELS(f32, float, f)
REAL_KERNELS(f64, double, )

/* NumPy's npy_half_nextafter, on halves kept as floats. */
static inline float nextafter_half(float xf, float yf)
{
    uint16_t x = ew_f2h(xf), y = ew_f2h(yf), r;
    if (xf != xf || yf != yf) return NAN;
    if (xf == yf) r = x;
    else if ((x & 0x7fffu) == 0) r = (uint16_t)((y & 0x8000u) + 1);
    else if (!(x & 0x8000u)) r = (int16_t)x > (int16_t)y ? (uint16_t)(x - 1) : (uint16_t)(x + 1);
    else if (!(y & 0x8000u) || (x & 0x7fffu) > (y & 0x7fffu)) r = (uint16_t)(x - 1);
    else r = (uint16_t)(x + 1);
    return ew_h2f(r);
}
DEF_BIN(nextafter_h, float, float, nextafter_half(x, y))
/* NumPy's half loops (no SIMD): the first operand wins ties, so maximum(0, -0) is 0 */
DEF_BIN(maximum_h, float, float, (x >= y || x != x) ? x : y)
DEF_BIN(minimum_h, float, float, (x <= y || x != x) ? x : y)

ew_kern ew_kernel_half(int op)
{
    switch (op) {
    case EW_NEXTAFTER: return nextafter_h;
    case EW_MAXIMUM: return maximum_h;
    case EW_MINIMUM: return minimum_h;
    default: return NULL;
    }
}

/* ------------------------------------------------------------------ complex */

#define CPLX_MATH(s, CT, T, F, MK, LN2E, LN10E)                                                    \
    static inline CT cmul_##s(CT a, CT b)                                                          \
    {                                                                                              \
        T ar = creal##F(a), ai = cimag##F(a), br = creal##F(b), bi = cimag##F(b);                  \
        return MK(ar * br - ai * bi, ar * bi + ai * br);                                           \
    }                                                                                              \
    static inline CT cdiv_##s(CT a, CT b)                                                          \
    {                                                                                              \
        T ar = creal##F(a), ai = cimag##F(a), br = creal##F(b), bi = cimag##F(b);                  \
        T abs_br = fabs##F(br), abs_bi = fabs##F(bi);                                              \
        if (abs_br >= abs_bi) {                                                                    \
            if (abs_br == 0 && abs_bi == 0) return MK(ar / abs_br, ai / abs_bi);                   \
            T rat = bi / br, scl = (T)1 / (br + bi * rat);                                         \
            return MK((ar + ai * rat) * scl, (ai - ar * rat) * scl);                               \
        }                                                                                          \
        T rat = br / bi, scl = (T)1 / (bi + br * rat);                                             \
        return MK((ar * rat + ai) * scl, (ai * rat - ar) * scl);                                   \
    }                                                                                              \
    /* C99 Annex G's special values, as the array API lists them for expm1: */                   \
    /* a zero imaginary part is kept (+0 for a zero real part), and an infinite */                 \
    /* real part with an infinite or NaN imaginary one gives -1 + 0j or inf + NaN j */              \
    static inline CT cexpm1_##s(CT x)                                                              \
    {                                                                                              \
        T xr = creal##F(x), xi = cimag##F(x);                                                      \
        if (xi == 0) return MK(xr == 0 ? 0 : expm1##F(xr), xi);                                    \
        if (isinf(xr) && !isfinite(xi)) return xr < 0 ? MK(-1, 0) : MK(xr, NAN);                  \
        T a = sin##F(xi / 2);                                                                      \
        return MK(expm1##F(xr) * cos##F(xi) - 2 * a * a, exp##F(xr) * sin##F(xi));                 \
    }                                                                                              \
    static inline CT clog1p_##s(CT x)                                                              \
    {                                                                                              \
        T xr = creal##F(x), xi = cimag##F(x), l = hypot##F(xr + 1, xi);                            \
        return MK(log##F(l), atan2##F(xi, xr + 1));                                                \
    }                                                                                              \
    static inline CT clog2_##s(CT x)                                                               \
    {                                                                                              \
        CT r = clog##F(x);                                                                         \
        return MK(creal##F(r) * (T)LN2E, cimag##F(r) * (T)LN2E);                                   \
    }                                                                                              \
    static inline CT clog10_##s(CT x)                                                              \
    {                                                                                              \
        CT r = clog##F(x);                                                                         \
        return MK(creal##F(r) * (T)LN10E, cimag##F(r) * (T)LN10E);                                 \
    }                                                                                              \
    /* glibc gives tanh(+-inf + iy) an imaginary zero signed as sin(2y); the array API    */     \
    /* standard signs it as y (1 + 0j for y > 0), as NumPy does                           */     \
    static inline CT ctanh_##s(CT x)                                                               \
    {                                                                                              \
        T xr = creal##F(x), xi = cimag##F(x);                                                      \
        if (isinf(xr) && isfinite(xi)) return MK(copysign##F(1, xr), copysign##F(0, xi));          \
        return ctanh##F(x);                                                                        \
    }                                                                                              \
    /* NumPy's nc_pow */                                                                           \
    static inline CT cpow_##s(CT a, CT b)                                                          \
    {                                                                                              \
        T ar = creal##F(a), ai = cimag##F(a), br = creal##F(b), bi = cimag##F(b);                  \
        if (br == 0 && bi == 0) return MK(1, 0);                                                   \
        if (ar == 0 && ai == 0) {                                                                  \
            if (br > 0 && bi == 0) return MK(0, 0);                                                \
            return MK(NAN, NAN);                                                                   \
        }                                                                                          \
        if (bi == 0 && br > -100 && br < 100 && br == (T)(int)br) {                                \
            int k = (int)br;                                                                       \
            if (k == 1) return a;                                                                  \
            if (k == 2) return cmul_##s(a, a);                                                     \
            if (k == 3) return cmul_##s(cmul_##s(a, a), a);                                        \
            unsigned m = (unsigned)(k < 0 ? -k : k), mask = 1;                                     \
            CT aa = MK(1, 0), p = a;                                                               \
            for (;;) {                                                                             \
                if (m & mask) aa = cmul_##s(aa, p);                                                \
                mask <<= 1;                                                                        \
                if (m < mask) break;                                                               \
                p = cmul_##s(p, p);                                                                \
            }                                                                                      \
            if (br < 0) aa = cdiv_##s(MK(1, 0), aa);                                               \
            return aa;                                                                             \
        }                                                                                          \
        return cpow##F(a, b);                                                                      \
    }                                                                                              \
    DEF_UN(acos_##s, CT, CT, cacos##F(x))                                                          \
    DEF_UN(acosh_##s, CT, CT, cacosh##F(x))                                                        \
    DEF_UN(asin_##s, CT, CT, casin##F(x))                                                          \
    DEF_UN(asinh_##s, CT, CT, casinh##F(x))                                                        \
    DEF_UN(atan_##s, CT, CT, catan##F(x))                                                          \
    DEF_UN(atanh_##s, CT, CT, catanh##F(x))                                                        \
    DEF_UN(cos_##s, CT, CT, ccos##F(x))                                                            \
    DEF_UN(cosh_##s, CT, CT, ccosh##F(x))                                                          \
    DEF_UN(exp_##s, CT, CT, cexp##F(x))                                                            \
    DEF_UN(expm1_##s, CT, CT, cexpm1_##s(x))                                                       \
    DEF_UN(log_##s, CT, CT, clog##F(x))                                                            \
    DEF_UN(log1p_##s, CT, CT, clog1p_##s(x))                                                       \
    DEF_UN(log2_##s, CT, CT, clog2_##s(x))                                                         \
    DEF_UN(log10_##s, CT, CT, clog10_##s(x))                                                       \
    DEF_UN(sin_##s, CT, CT, csin##F(x))                                                            \
    DEF_UN(sinh_##s, CT, CT, csinh##F(x))                                                          \
    DEF_UN(sqrt_##s, CT, CT, csqrt##F(x))                                                          \
    DEF_UN(tan_##s, CT, CT, ctan##F(x))                                                            \
    DEF_UN(tanh_##s, CT, CT, ctanh_##s(x))                                                          \
    DEF_BIN(pow_##s, CT, CT, cpow_##s(x, y))

CPLX_MATH(c64, ew_c64, float, f, CMPLXF, NPY_LOG2E, NPY_LOG10E)
CPLX_MATH(c128, ew_c128, double, , CMPLX, NPY_LOG2E, NPY_LOG10E)

#define MATH_COMMON(s)                                                                             \
    case EW_ACOS: return acos_##s;                                                                 \
    case EW_ACOSH: return acosh_##s;                                                               \
    case EW_ASIN: return asin_##s;                                                                 \
    case EW_ASINH: return asinh_##s;                                                               \
    case EW_ATAN: return atan_##s;                                                                 \
    case EW_ATANH: return atanh_##s;                                                               \
    case EW_COS: return cos_##s;                                                                   \
    case EW_COSH: return cosh_##s;                                                                 \
    case EW_EXP: return exp_##s;                                                                   \
    case EW_EXPM1: return expm1_##s;                                                               \
    case EW_LOG: return log_##s;                                                                   \
    case EW_LOG1P: return log1p_##s;                                                               \
    case EW_LOG2: return log2_##s;                                                                 \
    case EW_LOG10: return log10_##s;                                                               \
    case EW_SIN: return sin_##s;                                                                   \
    case EW_SINH: return sinh_##s;                                                                 \
    case EW_TAN: return tan_##s;                                                                   \
    case EW_TANH: return tanh_##s;                                                                 \
    case EW_POW: return pow_##s;

ew_kern ew_kernel_math(int op, int kind)
{
    switch (kind) {
    case EK_F32:
        switch (op) {
        MATH_COMMON(f32)
        case EW_ATAN2: return atan2_f32;
        case EW_HYPOT: return hypot_f32;
        case EW_NEXTAFTER: return nextafter_f32;
        case EW_LOGADDEXP: return logaddexp_k_f32;
        default: return NULL;
        }
    case EK_F64:
        switch (op) {
        MATH_COMMON(f64)
        case EW_ATAN2: return atan2_f64;
        case EW_HYPOT: return hypot_f64;
        case EW_NEXTAFTER: return nextafter_f64;
        case EW_LOGADDEXP: return logaddexp_k_f64;
        default: return NULL;
        }
    case EK_C64:
        switch (op) {
        MATH_COMMON(c64)
        case EW_SQRT: return sqrt_c64;
        default: return NULL;
        }
    case EK_C128:
        switch (op) {
        MATH_COMMON(c128)
        case EW_SQRT: return sqrt_c128;
        default: return NULL;
        }
    default: return NULL;
    }
}
