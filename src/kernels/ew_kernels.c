/* kernels/ew_kernels.c — arithmetic, comparison, bitwise, cast and where kernels.
 *
 * One function per (operation, tile kind), stamped from macros. Loops run in
 * blocks of 16 so that GCC vectorizes them even at -O2 (its "very cheap" cost
 * model only vectorizes loops whose trip count is a known multiple of the
 * vector width); restrict tells it the destination never overlaps an operand.
 *
 * Integers wrap: arithmetic is done in an unsigned type at least as wide as
 * int (no signed overflow, no promotion of uint16 to int), then converted
 * back (GCC defines that conversion as modulo 2^N). Division and remainder by
 * zero give 0, INT_MIN / -1 gives INT_MIN, like NumPy. Shifts by a count
 * outside [0, bits) give 0 (or -1 for right shifts of negative numbers), like
 * NumPy. Negative integer powers give 1 / x**-y truncated (0 unless x is ±1);
 * NumPy raises there. Casts from float to integer truncate toward zero and
 * saturate out-of-range values to the integer's min/max, NaN → 0 (NumPy's
 * result there is platform dependent).
 *
 * Floating-point results follow NumPy's loops: floor_divide and remainder
 * use npy_divmod's formula (floor_divide with the array API 2024.12's special
 * cases: ±inf // finite is ±inf, a finite x // an infinity of the other sign
 * -0, where NumPy gives NaN and -1), maximum/minimum propagate NaN and return the
 * second operand when the two compare equal, complex multiply is the textbook
 * formula and complex divide Smith's method with NumPy's zero divisor rule.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* vectorize at -O2 too (its cost model skips loops of unknown trip count) */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/ew_internal.h"

typedef float complex ew_c64;
typedef double complex ew_c128;
typedef struct {
    uint64_t lo, hi;
} ew_b16; /* 16 opaque bytes (where on complex128) */

#define EW_LOOP(body)                                                                              \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++) { body; }                                                   \
    } while (0)

/* On x86-64 the common kernels (_V: arithmetic, comparisons, where, sqrt on
 * real numbers) are built twice, for AVX2 and for the baseline, and the
 * loader picks one for the CPU (GCC function multiversioning); the others
 * (casts, complex, branchy integer division) are built once. */
/* (not under ThreadSanitizer: the loader runs the resolvers before its runtime
 * is up, and GCC instruments them) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__) && !defined(__SANITIZE_THREAD__)
#define EW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define EW_CLONES
#endif

#define KSIG_PLAIN(name)                                                                           \
    static void name(size_t n, void *restrict dv, const void *restrict av, const void *restrict bv, \
                     const void *restrict cv, unsigned sc)
#define KSIG(name) EW_CLONES KSIG_PLAIN(name)

#define DEF_UN_(SIG, name, TA, TR, EXPR)                                                           \
    SIG(name)                                                                                      \
    {                                                                                              \
        TR *restrict d = dv;                                                                       \
        const TA *restrict pa = av;                                                                \
        (void)bv; (void)cv; (void)sc;                                                              \
        EW_LOOP(const TA x = pa[i]; d[i] = (EXPR));                                                \
    }
#define DEF_UN(name, TA, TR, EXPR) DEF_UN_(KSIG_PLAIN, name, TA, TR, EXPR)
#define DEF_UN_V(name, TA, TR, EXPR) DEF_UN_(KSIG, name, TA, TR, EXPR)

#define DEF_BIN_(SIG, name, TA, TR, EXPR)                                                          \
    SIG(name)                                                                                      \
    {                                                                                              \
        TR *restrict d = dv;                                                                       \
        const TA *restrict pa = av;                                                                \
        const TA *restrict pb = bv;                                                                \
        (void)cv;                                                                                  \
        switch (sc & 3u) {                                                                         \
        case 0: EW_LOOP(const TA x = pa[i]; const TA y = pb[i]; d[i] = (EXPR)); break;            \
        case EW_SA: { const TA x = pa[0]; EW_LOOP(const TA y = pb[i]; d[i] = (EXPR)); } break;     \
        case EW_SB: { const TA y = pb[0]; EW_LOOP(const TA x = pa[i]; d[i] = (EXPR)); } break;     \
        default: { const TA x = pa[0], y = pb[0]; d[0] = (EXPR); } break;                          \
        }                                                                                          \
    }

#define DEF_BIN(name, TA, TR, EXPR) DEF_BIN_(KSIG_PLAIN, name, TA, TR, EXPR)
#define DEF_BIN_V(name, TA, TR, EXPR) DEF_BIN_(KSIG, name, TA, TR, EXPR)

/* ------------------------------------------------------------------ integers */

/* sfx, T, UT (unsigned arithmetic type), signed?, bits */
#define EW_INTS(X)                                                                                 \
    X(i8, int8_t, uint32_t, 1, 8) X(i16, int16_t, uint32_t, 1, 16) X(i32, int32_t, uint32_t, 1, 32) \
    X(i64, int64_t, uint64_t, 1, 64) X(u8, uint8_t, uint32_t, 0, 8) X(u16, uint16_t, uint32_t, 0, 16) \
    X(u32, uint32_t, uint32_t, 0, 32) X(u64, uint64_t, uint64_t, 0, 64)

/* x < 0 for a signed T, without -Wtype-limits warnings when T is unsigned (SG 0) */
static inline int is_neg64(int64_t v) { return v < 0; }
#define ISNEG(SG, x) ((SG) && is_neg64((int64_t)(x)))

#define INT_HELPERS(s, T, UT, SG, BITS)                                                            \
    static inline T fdiv_##s(T x, T y)                                                             \
    {                                                                                              \
        if (y == 0) return 0;                                                                      \
        if (SG && y == (T)-1) return (T)(0 - (UT)x);                                               \
        T q = (T)(x / y);                                                                          \
        if (SG && x % y != 0 && (ISNEG(SG, x) != ISNEG(SG, y))) q = (T)(q - 1);                              \
        return q;                                                                                  \
    }                                                                                              \
    static inline T rem_##s(T x, T y)                                                              \
    {                                                                                              \
        if (y == 0 || (SG && y == (T)-1)) return 0;                                                \
        T r = (T)(x % y);                                                                          \
        if (SG && r != 0 && (ISNEG(SG, r) != ISNEG(SG, y))) r = (T)(r + y);                                  \
        return r;                                                                                  \
    }                                                                                              \
    static inline T pow_##s(T x, T y)                                                              \
    {                                                                                              \
        if (ISNEG(SG, y)) return x == 1 ? 1 : x == (T)-1 ? (T)((y & 1) ? -1 : 1) : 0;               \
        UT r = 1, b = (UT)x;                                                                       \
        uint64_t e = (uint64_t)y;                                                                  \
        while (e) {                                                                                \
            if (e & 1) r *= b;                                                                     \
            b *= b;                                                                                \
            e >>= 1;                                                                               \
        }                                                                                          \
        return (T)r;                                                                               \
    }                                                                                              \
    static inline T shl_##s(T x, T y)                                                              \
    {                                                                                              \
        return (uint64_t)y < BITS ? (T)((UT)x << y) : 0;                                           \
    }                                                                                              \
    static inline T shr_##s(T x, T y)                                                              \
    {                                                                                              \
        if ((uint64_t)y < BITS) return (T)(x >> y);                                                \
        return (T)(ISNEG(SG, x) ? -1 : 0);                                                        \
    }

EW_INTS(INT_HELPERS)

#define INT_KERNELS(s, T, UT, SG, BITS)                                                            \
    DEF_BIN_V(add_##s, T, T, (T)((UT)x + (UT)y))                                                     \
    DEF_BIN_V(sub_##s, T, T, (T)((UT)x - (UT)y))                                                     \
    DEF_BIN_V(mul_##s, T, T, (T)((UT)x * (UT)y))                                                     \
    DEF_BIN(fdiv_k_##s, T, T, fdiv_##s(x, y))                                                      \
    DEF_BIN(rem_k_##s, T, T, rem_##s(x, y))                                                        \
    DEF_BIN(pow_k_##s, T, T, pow_##s(x, y))                                                        \
    DEF_BIN_V(and_##s, T, T, (T)(x & y))                                                             \
    DEF_BIN_V(or_##s, T, T, (T)(x | y))                                                              \
    DEF_BIN_V(xor_##s, T, T, (T)(x ^ y))                                                             \
    DEF_BIN(shl_k_##s, T, T, shl_##s(x, y))                                                        \
    DEF_BIN(shr_k_##s, T, T, shr_##s(x, y))                                                        \
    DEF_BIN_V(eq_##s, T, uint8_t, x == y)                                                            \
    DEF_BIN_V(ne_##s, T, uint8_t, x != y)                                                            \
    DEF_BIN_V(gt_##s, T, uint8_t, x > y)                                                             \
    DEF_BIN_V(ge_##s, T, uint8_t, x >= y)                                                            \
    DEF_BIN_V(lt_##s, T, uint8_t, x < y)                                                             \
    DEF_BIN_V(le_##s, T, uint8_t, x <= y)                                                            \
    DEF_BIN_V(max_##s, T, T, x > y ? x : y)                                                          \
    DEF_BIN_V(min_##s, T, T, x < y ? x : y)                                                          \
    DEF_UN_V(abs_##s, T, T, ISNEG(SG, x) ? (T)(0 - (UT)x) : x)                                      \
    DEF_UN_V(inv_##s, T, T, (T)~x)                                                                   \
    DEF_UN_V(neg_##s, T, T, (T)(0 - (UT)x))                                                          \
    DEF_UN(sign_##s, T, T, (T)((x > 0) - ISNEG(SG, x)))                                           \
    DEF_UN_V(sq_##s, T, T, (T)((UT)x * (UT)x))                                                       \
    DEF_UN(true_##s, T, uint8_t, ((void)x, 1))                                                     \
    DEF_UN(false_##s, T, uint8_t, ((void)x, 0))

EW_INTS(INT_KERNELS)

/* lower-case aliases so INT_CASE can paste the suffix */
enum { EK_i8 = EK_I8, EK_i16 = EK_I16, EK_i32 = EK_I32, EK_i64 = EK_I64,
       EK_u8 = EK_U8, EK_u16 = EK_U16, EK_u32 = EK_U32, EK_u64 = EK_U64 };

#define INT_CASE(s, T, UT, SG, BITS)                                                               \
    case EK_##s: switch (op) {                                                                     \
        case EW_ADD: return add_##s;                                                               \
        case EW_SUBTRACT: return sub_##s;                                                          \
        case EW_MULTIPLY: return mul_##s;                                                          \
        case EW_FLOOR_DIVIDE: return fdiv_k_##s;                                                   \
        case EW_REMAINDER: return rem_k_##s;                                                       \
        case EW_POW: return pow_k_##s;                                                             \
        case EW_BITWISE_AND: return and_##s;                                                       \
        case EW_BITWISE_OR: return or_##s;                                                         \
        case EW_BITWISE_XOR: return xor_##s;                                                       \
        case EW_BITWISE_LEFT_SHIFT: return shl_k_##s;                                              \
        case EW_BITWISE_RIGHT_SHIFT: return shr_k_##s;                                             \
        case EW_EQUAL: return eq_##s;                                                              \
        case EW_NOT_EQUAL: return ne_##s;                                                          \
        case EW_GREATER: return gt_##s;                                                            \
        case EW_GREATER_EQUAL: return ge_##s;                                                      \
        case EW_LESS: return lt_##s;                                                               \
        case EW_LESS_EQUAL: return le_##s;                                                         \
        case EW_MAXIMUM: return max_##s;                                                           \
        case EW_MINIMUM: return min_##s;                                                           \
        case EW_ABS: return abs_##s;                                                               \
        case EW_BITWISE_INVERT: return inv_##s;                                                    \
        case EW_NEGATIVE: return neg_##s;                                                          \
        case EW_SIGN: return sign_##s;                                                             \
        case EW_SQUARE: return sq_##s;                                                             \
        case EW_ISFINITE: return true_##s;                                                         \
        case EW_ISINF: case EW_ISNAN: return false_##s;                                            \
        default: return NULL;                                                                      \
        }

/* ------------------------------------------------------------------ bool */

DEF_BIN_V(and_b, uint8_t, uint8_t, (uint8_t)(x & y))
DEF_BIN_V(or_b, uint8_t, uint8_t, (uint8_t)(x | y))
DEF_BIN(xor_b, uint8_t, uint8_t, (uint8_t)(x ^ y))
DEF_BIN(eq_b, uint8_t, uint8_t, x == y)
DEF_BIN(ne_b, uint8_t, uint8_t, x != y)
DEF_UN(not_b, uint8_t, uint8_t, (uint8_t)(x ^ 1u))

/* ------------------------------------------------------------------ real floats */

/* NumPy's npy_divmod: floor division and Python-style remainder. */
#define FLOAT_HELPERS(s, T, F)                                                                     \
    static inline T divmod_##s(T a, T b, T *modulus)                                               \
    {                                                                                              \
        T mod = fmod##F(a, b);                                                                     \
        if (!b) {                                                                                  \
            *modulus = mod;                                                                        \
            return a / b;                                                                          \
        }                                                                                          \
        T div = (a - mod) / b;                                                                     \
        if (mod) {                                                                                 \
            if (isless(b, (T)0) != isless(mod, (T)0)) {                                            \
                mod += b;                                                                          \
                div -= (T)1;                                                                       \
            }                                                                                      \
        } else {                                                                                   \
            mod = copysign##F((T)0, b);                                                            \
        }                                                                                          \
        T floordiv;                                                                                \
        if (div) {                                                                                 \
            floordiv = floor##F(div);                                                              \
            if (isgreater(div - floordiv, (T)0.5)) floordiv += (T)1;                               \
        } else {                                                                                   \
            floordiv = copysign##F((T)0, a / b);                                                   \
        }                                                                                          \
        *modulus = mod;                                                                            \
        return floordiv;                                                                           \
    }                                                                                              \
    static inline T fdiv_##s(T a, T b)                                                             \
    {                                                                                              \
        T mod;                                                                                     \
        if (!b) return a / b;                                                                      \
        /* the array API 2024.12's special cases, where NumPy's divmod gives NaN or -1 */          \
        if (isinf(a) && isfinite(b)) return signbit(a) == signbit(b) ? (T)INFINITY : (T)-INFINITY; \
        if (isfinite(a) && isinf(b) && a != 0 && (a > 0) != (b > 0)) return (T)-0.0;              \
        return divmod_##s(a, b, &mod);                                                             \
    }                                                                                              \
    static inline T rem_##s(T a, T b)                                                              \
    {                                                                                              \
        T mod;                                                                                     \
        if (!b) return fmod##F(a, b);                                                              \
        divmod_##s(a, b, &mod);                                                                    \
        return mod;                                                                                \
    }                                                                                              \
    static inline T sign_##s(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x; }

FLOAT_HELPERS(f32, float, f)
FLOAT_HELPERS(f64, double, )

#define FLOAT_KERNELS(s, T, F)                                                                     \
    DEF_BIN_V(add_##s, T, T, x + y)                                                                  \
    DEF_BIN_V(sub_##s, T, T, x - y)                                                                  \
    DEF_BIN_V(mul_##s, T, T, x * y)                                                                  \
    DEF_BIN_V(div_##s, T, T, x / y)                                                                  \
    DEF_BIN(fdiv_k_##s, T, T, fdiv_##s(x, y))                                                      \
    DEF_BIN(rem_k_##s, T, T, rem_##s(x, y))                                                        \
    DEF_BIN_V(copysign_##s, T, T, copysign##F(x, y))                                                 \
    DEF_BIN_V(eq_##s, T, uint8_t, x == y)                                                            \
    DEF_BIN_V(ne_##s, T, uint8_t, x != y)                                                            \
    DEF_BIN_V(gt_##s, T, uint8_t, x > y)                                                             \
    DEF_BIN_V(ge_##s, T, uint8_t, x >= y)                                                            \
    DEF_BIN_V(lt_##s, T, uint8_t, x < y)                                                             \
    DEF_BIN_V(le_##s, T, uint8_t, x <= y)                                                            \
    DEF_BIN_V(max_##s, T, T, (x > y || x != x) ? x : y)                                              \
    DEF_BIN_V(min_##s, T, T, (x < y || x != x) ? x : y)                                              \
    DEF_UN_V(abs_##s, T, T, fabs##F(x))                                                              \
    DEF_UN_V(neg_##s, T, T, -x)                                                                      \
    DEF_UN(sign_k_##s, T, T, sign_##s(x))                                                          \
    DEF_UN_V(sq_##s, T, T, x * x)                                                                    \
    DEF_UN_V(recip_##s, T, T, (T)1 / x)                                                              \
    DEF_UN(ceil_##s, T, T, ceil##F(x))                                                             \
    DEF_UN(floor_##s, T, T, floor##F(x))                                                           \
    DEF_UN(trunc_##s, T, T, trunc##F(x))                                                           \
    DEF_UN(rint_##s, T, T, rint##F(x))                                                             \
    DEF_UN(isfinite_##s, T, uint8_t, isfinite(x) != 0)                                             \
    DEF_UN(isinf_##s, T, uint8_t, isinf(x) != 0)                                                   \
    DEF_UN(isnan_##s, T, uint8_t, x != x)                                                          \
    DEF_UN(signbit_##s, T, uint8_t, signbit(x) != 0)

FLOAT_KERNELS(f32, float, f)
FLOAT_KERNELS(f64, double, )

EW_CLONES KSIG_PLAIN(sqrt_f32)
{
    float *restrict d = dv;
    const float *restrict pa = av;
    (void)bv; (void)cv; (void)sc;
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, _mm_sqrt_ps(_mm_loadu_ps(pa + i)));
#endif
    for (; i < n; i++) d[i] = sqrtf(pa[i]);
}

EW_CLONES KSIG_PLAIN(sqrt_f64)
{
    double *restrict d = dv;
    const double *restrict pa = av;
    (void)bv; (void)cv; (void)sc;
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(d + i, _mm_sqrt_pd(_mm_loadu_pd(pa + i)));
#endif
    for (; i < n; i++) d[i] = sqrt(pa[i]);
}

#define FLOAT_CASE(s)                                                                              \
    switch (op) {                                                                                  \
    case EW_ADD: return add_##s;                                                                   \
    case EW_SUBTRACT: return sub_##s;                                                              \
    case EW_MULTIPLY: return mul_##s;                                                              \
    case EW_DIVIDE: return div_##s;                                                                \
    case EW_FLOOR_DIVIDE: return fdiv_k_##s;                                                       \
    case EW_REMAINDER: return rem_k_##s;                                                           \
    case EW_COPYSIGN: return copysign_##s;                                                         \
    case EW_EQUAL: return eq_##s;                                                                  \
    case EW_NOT_EQUAL: return ne_##s;                                                              \
    case EW_GREATER: return gt_##s;                                                                \
    case EW_GREATER_EQUAL: return ge_##s;                                                          \
    case EW_LESS: return lt_##s;                                                                   \
    case EW_LESS_EQUAL: return le_##s;                                                             \
    case EW_MAXIMUM: return max_##s;                                                               \
    case EW_MINIMUM: return min_##s;                                                               \
    case EW_ABS: return abs_##s;                                                                   \
    case EW_NEGATIVE: return neg_##s;                                                              \
    case EW_SIGN: return sign_k_##s;                                                               \
    case EW_SQUARE: return sq_##s;                                                                 \
    case EW_SQRT: return sqrt_##s;                                                                 \
    case EW_RECIPROCAL: return recip_##s;                                                          \
    case EW_CEIL: return ceil_##s;                                                                 \
    case EW_FLOOR: return floor_##s;                                                               \
    case EW_TRUNC: return trunc_##s;                                                               \
    case EW_ROUND: return rint_##s;                                                                \
    case EW_ISFINITE: return isfinite_##s;                                                         \
    case EW_ISINF: return isinf_##s;                                                               \
    case EW_ISNAN: return isnan_##s;                                                               \
    case EW_SIGNBIT: return signbit_##s;                                                           \
    default: return NULL;                                                                          \
    }

/* ------------------------------------------------------------------ complex */

#define CPLX_HELPERS(s, CT, T, F, MK)                                                              \
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
    static inline CT crecip_##s(CT a)                                                              \
    {                                                                                              \
        T ar = creal##F(a), ai = cimag##F(a);                                                      \
        if (fabs##F(ai) <= fabs##F(ar)) {                                                          \
            T r = ai / ar, dd = ar + ai * r;                                                       \
            return MK((T)1 / dd, -r / dd);                                                         \
        }                                                                                          \
        T r = ar / ai, dd = ar * r + ai;                                                           \
        return MK(r / dd, (T)-1 / dd);                                                             \
    }                                                                                              \
    /* array API 2023.12 (NumPy 2): x / |x|; 0 for 0; NaN for NaN; unit along an infinity */      \
    static inline CT csign_##s(CT a)                                                               \
    {                                                                                              \
        T ar = creal##F(a), ai = cimag##F(a), m = hypot##F(ar, ai);                                \
        if (m == 0) return MK(0, 0);                                                               \
        if (m != m) return MK(NAN, NAN);                                                           \
        if (isinf(m)) {                                                                            \
            if (isinf(ar)) {                                                                       \
                if (isinf(ai)) return MK(NAN, NAN);                                                \
                return MK(ar > 0 ? 1 : -1, 0);                                                     \
            }                                                                                      \
            return MK(0, ai > 0 ? 1 : -1);                                                         \
        }                                                                                          \
        return MK(ar / m, ai / m);                                                                 \
    }

CPLX_HELPERS(c64, ew_c64, float, f, CMPLXF)
CPLX_HELPERS(c128, ew_c128, double, , CMPLX)

#define CPLX_KERNELS(s, CT, T, F, MK)                                                              \
    DEF_BIN(add_##s, CT, CT, MK(creal##F(x) + creal##F(y), cimag##F(x) + cimag##F(y)))             \
    DEF_BIN(sub_##s, CT, CT, MK(creal##F(x) - creal##F(y), cimag##F(x) - cimag##F(y)))             \
    DEF_BIN(mul_##s, CT, CT, cmul_##s(x, y))                                                       \
    DEF_BIN(div_##s, CT, CT, cdiv_##s(x, y))                                                       \
    DEF_BIN(eq_##s, CT, uint8_t, creal##F(x) == creal##F(y) && cimag##F(x) == cimag##F(y))         \
    DEF_BIN(ne_##s, CT, uint8_t, creal##F(x) != creal##F(y) || cimag##F(x) != cimag##F(y))         \
    DEF_UN(abs_##s, CT, T, hypot##F(creal##F(x), cimag##F(x)))                                     \
    DEF_UN(real_##s, CT, T, creal##F(x))                                                           \
    DEF_UN(imag_##s, CT, T, cimag##F(x))                                                           \
    DEF_UN(conj_##s, CT, CT, MK(creal##F(x), -cimag##F(x)))                                        \
    DEF_UN(neg_##s, CT, CT, MK(-creal##F(x), -cimag##F(x)))                                        \
    DEF_UN(sq_##s, CT, CT, cmul_##s(x, x))                                                         \
    DEF_UN(recip_##s, CT, CT, crecip_##s(x))                                                       \
    DEF_UN(sign_k_##s, CT, CT, csign_##s(x))                                                       \
    DEF_UN(rint_##s, CT, CT, MK(rint##F(creal##F(x)), rint##F(cimag##F(x))))                       \
    DEF_UN(isfinite_##s, CT, uint8_t, isfinite(creal##F(x)) && isfinite(cimag##F(x)))              \
    DEF_UN(isinf_##s, CT, uint8_t, isinf(creal##F(x)) || isinf(cimag##F(x)))                       \
    DEF_UN(isnan_##s, CT, uint8_t, isnan(creal##F(x)) || isnan(cimag##F(x)))

CPLX_KERNELS(c64, ew_c64, float, f, CMPLXF)
CPLX_KERNELS(c128, ew_c128, double, , CMPLX)

#define CPLX_CASE(s)                                                                               \
    switch (op) {                                                                                  \
    case EW_ADD: return add_##s;                                                                   \
    case EW_SUBTRACT: return sub_##s;                                                              \
    case EW_MULTIPLY: return mul_##s;                                                              \
    case EW_DIVIDE: return div_##s;                                                                \
    case EW_EQUAL: return eq_##s;                                                                  \
    case EW_NOT_EQUAL: return ne_##s;                                                              \
    case EW_ABS: return abs_##s;                                                                   \
    case EW_REAL: return real_##s;                                                                 \
    case EW_IMAG: return imag_##s;                                                                 \
    case EW_CONJ: return conj_##s;                                                                 \
    case EW_NEGATIVE: return neg_##s;                                                              \
    case EW_SQUARE: return sq_##s;                                                                 \
    case EW_RECIPROCAL: return recip_##s;                                                          \
    case EW_SIGN: return sign_k_##s;                                                               \
    case EW_ROUND: return rint_##s;                                                                \
    case EW_ISFINITE: return isfinite_##s;                                                         \
    case EW_ISINF: return isinf_##s;                                                               \
    case EW_ISNAN: return isnan_##s;                                                               \
    default: return NULL;                                                                          \
    }

ew_kern ew_kernel_basic(int op, int kind)
{
    switch (kind) {
    case EK_BOOL:
        switch (op) {
        case EW_BITWISE_AND: case EW_LOGICAL_AND: return and_b;
        case EW_BITWISE_OR: case EW_LOGICAL_OR: return or_b;
        case EW_BITWISE_XOR: case EW_LOGICAL_XOR: return xor_b;
        case EW_EQUAL: return eq_b;
        case EW_NOT_EQUAL: return ne_b;
        case EW_BITWISE_INVERT: case EW_LOGICAL_NOT: return not_b;
        default: return NULL;
        }
    EW_INTS(INT_CASE)
    case EK_F32: FLOAT_CASE(f32)
    case EK_F64: FLOAT_CASE(f64)
    case EK_C64: CPLX_CASE(c64)
    case EK_C128: CPLX_CASE(c128)
    default: return NULL;
    }
}

/* ------------------------------------------------------------------ half rounding */

void ew_narrow_half(size_t n, float *x)
{
    for (size_t i = 0; i < n; i++) x[i] = ew_h2f(ew_f2h(x[i]));
}

/* ------------------------------------------------------------------ casts */

/* Every source is first widened exactly (signed and bool to int64, unsigned
 * to uint64, floats to double, complex to double complex), then converted. */
#define SAT(s, T, MIN, MAX)                                                                        \
    static inline T sat_##s(double x)                                                              \
    {                                                                                              \
        return x != x ? 0 : x >= (double)(MAX) ? (MAX) : x <= (double)(MIN) ? (MIN) : (T)x;        \
    }
SAT(i8, int8_t, INT8_MIN, INT8_MAX)
SAT(i16, int16_t, INT16_MIN, INT16_MAX)
SAT(i32, int32_t, INT32_MIN, INT32_MAX)
SAT(i64, int64_t, INT64_MIN, INT64_MAX)
SAT(u8, uint8_t, 0, UINT8_MAX)
SAT(u16, uint16_t, 0, UINT16_MAX)
SAT(u32, uint32_t, 0, UINT32_MAX)
SAT(u64, uint64_t, 0, UINT64_MAX)

/* Destinations: conversion from each widened class S (int64), U (uint64), F (double), C (double complex). */
#define CV_INT(s, T)                                                                               \
    static inline T cv_##s##_S(int64_t x) { return (T)x; }                                         \
    static inline T cv_##s##_U(uint64_t x) { return (T)x; }                                        \
    static inline T cv_##s##_F(double x) { return sat_##s(x); }                                    \
    static inline T cv_##s##_C(ew_c128 x) { return sat_##s(creal(x)); }
CV_INT(i8, int8_t)
CV_INT(i16, int16_t)
CV_INT(i32, int32_t)
CV_INT(i64, int64_t)
CV_INT(u8, uint8_t)
CV_INT(u16, uint16_t)
CV_INT(u32, uint32_t)
CV_INT(u64, uint64_t)
static inline uint8_t cv_b_S(int64_t x) { return x != 0; }
static inline uint8_t cv_b_U(uint64_t x) { return x != 0; }
static inline uint8_t cv_b_F(double x) { return x != 0; }
static inline uint8_t cv_b_C(ew_c128 x) { return creal(x) != 0 || cimag(x) != 0; }
static inline float cv_f32_S(int64_t x) { return (float)x; }
static inline float cv_f32_U(uint64_t x) { return (float)x; }
static inline float cv_f32_F(double x) { return (float)x; }
static inline float cv_f32_C(ew_c128 x) { return (float)creal(x); }
static inline double cv_f64_S(int64_t x) { return (double)x; }
static inline double cv_f64_U(uint64_t x) { return (double)x; }
static inline double cv_f64_F(double x) { return x; }
static inline double cv_f64_C(ew_c128 x) { return creal(x); }
static inline ew_c64 cv_c64_S(int64_t x) { return CMPLXF((float)x, 0.0f); }
static inline ew_c64 cv_c64_U(uint64_t x) { return CMPLXF((float)x, 0.0f); }
static inline ew_c64 cv_c64_F(double x) { return CMPLXF((float)x, 0.0f); }
static inline ew_c64 cv_c64_C(ew_c128 x) { return CMPLXF((float)creal(x), (float)cimag(x)); }
static inline ew_c128 cv_c128_S(int64_t x) { return CMPLX((double)x, 0.0); }
static inline ew_c128 cv_c128_U(uint64_t x) { return CMPLX((double)x, 0.0); }
static inline ew_c128 cv_c128_F(double x) { return CMPLX(x, 0.0); }
static inline ew_c128 cv_c128_C(ew_c128 x) { return x; }
/* float16 (kept as float): integers below 2^24 are exact in float, larger ones overflow half anyway */
static inline float cv_h_S(int64_t x) { return ew_h2f(ew_f2h((float)x)); }
static inline float cv_h_U(uint64_t x) { return ew_h2f(ew_f2h((float)x)); }
static inline float cv_h_F(double x) { return ew_h2f(ew_d2h(x)); }
static inline float cv_h_C(ew_c128 x) { return ew_h2f(ew_d2h(creal(x))); }

/* sources: sfx, type, widened type, class */
#define EW_SRCS(X, D, DT)                                                                          \
    X(b, uint8_t, int64_t, S, D, DT) X(i8, int8_t, int64_t, S, D, DT)                              \
    X(i16, int16_t, int64_t, S, D, DT) X(i32, int32_t, int64_t, S, D, DT)                          \
    X(i64, int64_t, int64_t, S, D, DT) X(u8, uint8_t, uint64_t, U, D, DT)                          \
    X(u16, uint16_t, uint64_t, U, D, DT) X(u32, uint32_t, uint64_t, U, D, DT)                      \
    X(u64, uint64_t, uint64_t, U, D, DT) X(f32, float, double, F, D, DT)                           \
    X(f64, double, double, F, D, DT) X(c64, ew_c64, ew_c128, C, D, DT)                             \
    X(c128, ew_c128, ew_c128, C, D, DT)

#define DEF_CAST(s, ST, WT, CL, D, DT) DEF_UN_(KSIG_PLAIN, cast_##s##_##D, ST, DT, cv_##D##_##CL((WT)x))
#define DEF_CASTS(D, DT) EW_SRCS(DEF_CAST, D, DT)
DEF_CASTS(b, uint8_t)
DEF_CASTS(i8, int8_t)
DEF_CASTS(i16, int16_t)
DEF_CASTS(i32, int32_t)
DEF_CASTS(i64, int64_t)
DEF_CASTS(u8, uint8_t)
DEF_CASTS(u16, uint16_t)
DEF_CASTS(u32, uint32_t)
DEF_CASTS(u64, uint64_t)
DEF_CASTS(f32, float)
DEF_CASTS(f64, double)
DEF_CASTS(c64, ew_c64)
DEF_CASTS(c128, ew_c128)
DEF_CASTS(h, float)

#define CAST_ROW(D)                                                                                \
    {cast_b_##D, cast_i8_##D, cast_i16_##D, cast_i32_##D, cast_i64_##D, cast_u8_##D, cast_u16_##D, \
     cast_u32_##D, cast_u64_##D, cast_f32_##D, cast_f64_##D, cast_c64_##D, cast_c128_##D}

/* CASTS[to][from] */
static const ew_kern CASTS[EK_COUNT][EK_COUNT - 1] = {
    CAST_ROW(b), CAST_ROW(i8), CAST_ROW(i16), CAST_ROW(i32), CAST_ROW(i64), CAST_ROW(u8), CAST_ROW(u16),
    CAST_ROW(u32), CAST_ROW(u64), CAST_ROW(f32), CAST_ROW(f64), CAST_ROW(c64), CAST_ROW(c128), CAST_ROW(h),
};

ew_kern ew_kernel_cast(int from_kind, int to_kind)
{
    if (from_kind < 0 || from_kind >= EK_H || to_kind < 0 || to_kind >= EK_COUNT) return NULL;
    return CASTS[to_kind][from_kind];
}

/* ------------------------------------------------------------------ where */

/* c (0 or 1) ? x : y without a branch, so the loop vectorizes */
#define SEL(T, c, x, y) ((T)((y) ^ (((x) ^ (y)) & (T)(0 - (T)(c)))))

#define DEF_WHERE(name, T)                                                                         \
    KSIG(name)                                                                                     \
    {                                                                                              \
        T *restrict d = dv;                                                                        \
        const uint8_t *restrict pc = av;                                                           \
        const T *restrict px = bv;                                                                 \
        const T *restrict py = cv;                                                                 \
        if (sc & EW_SA) { /* one condition for all: a copy or a fill */                            \
            const T *restrict src = pc[0] ? px : py;                                               \
            if (sc & (pc[0] ? EW_SB : EW_SC)) {                                                    \
                const T v = src[0];                                                                \
                EW_LOOP(d[i] = v);                                                                 \
            } else {                                                                               \
                EW_LOOP(d[i] = src[i]);                                                            \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        switch (sc & (EW_SB | EW_SC)) {                                                            \
        case 0: EW_LOOP(d[i] = SEL(T, pc[i], px[i], py[i])); break;                                \
        case EW_SB: { const T x = px[0]; EW_LOOP(d[i] = SEL(T, pc[i], x, py[i])); } break;         \
        case EW_SC: { const T y = py[0]; EW_LOOP(d[i] = SEL(T, pc[i], px[i], y)); } break;         \
        default: { const T x = px[0], y = py[0]; EW_LOOP(d[i] = SEL(T, pc[i], x, y)); } break;     \
        }                                                                                          \
    }

DEF_WHERE(where_1, uint8_t)
DEF_WHERE(where_2, uint16_t)
DEF_WHERE(where_4, uint32_t)
DEF_WHERE(where_8, uint64_t)
KSIG_PLAIN(where_16)
{
    ew_b16 *restrict d = dv;
    const uint8_t *restrict pc = av;
    const ew_b16 *restrict px = bv;
    const ew_b16 *restrict py = cv;
    const size_t ic = (sc & EW_SA) ? 0 : 1, ix = (sc & EW_SB) ? 0 : 1, iy = (sc & EW_SC) ? 0 : 1;
    for (size_t i = 0; i < n; i++) d[i] = pc[i * ic] ? px[i * ix] : py[i * iy];
}

ew_kern ew_kernel_where(size_t elem_size)
{
    switch (elem_size) {
    case 1: return where_1;
    case 2: return where_2;
    case 4: return where_4;
    case 8: return where_8;
    case 16: return where_16;
    default: return NULL;
    }
}
