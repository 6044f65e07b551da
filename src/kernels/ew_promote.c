/* kernels/ew_promote.c — dtype rules of the elementwise functions.
 *
 * Promotion follows the array API table, extended like NumPy where the
 * standard leaves it open: bool with a number gives the number's dtype; a
 * signed with an unsigned integer gives the smallest signed integer holding
 * both (int64 with uint64: float64); an integer with a float gives the
 * smallest float holding the integer exactly and the float (int8 → float16,
 * int16 → float32, int32/int64 → float64), the same with complex.
 *
 * What each function accepts is the array API's category (numeric excludes
 * bool; logical functions take bool only; bitwise take bool and integers;
 * shifts integers), with two extensions taken from NumPy: floating-point
 * functions (sin, sqrt, atan2, ...) accept integers and compute in the float
 * dtype promotion with float16 gives (int8 → float16, int32 → float64), and
 * divide of integers gives float64. ceil/floor/trunc/round of an integer
 * keep its dtype and value (array API; NumPy 1.24 returns floats). real and
 * conj accept real numbers (array API 2024.12), imag only complex.
 */
#include <stdio.h>

#include "core/error.h"
#include "kernels/ew_internal.h"

static const char *const OP_NAMES[] = {
#define EW_NAME_(name, str) str,
    EW_UNARY_OPS(EW_NAME_) "",
    EW_BINARY_OPS(EW_NAME_) "",
#undef EW_NAME_
    "where", "astype",
};

int ew_op_from_name(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < EW_OP_COUNT_; i++)
        if (i != EW_UNARY_END_ && i != EW_BINARY_END_ && !strcmp(OP_NAMES[i], name)) return i;
    return -1;
}

const char *ew_op_name(ew_op op)
{
    if ((int)op < 0 || (int)op >= EW_OP_COUNT_ || op == EW_UNARY_END_ || op == EW_BINARY_END_) return "?";
    return OP_NAMES[op];
}

int ew_dtype_ok(zc_dtype t) { return t >= ZC_BOOL && t <= ZC_COMPLEX128; }

int ew_kind_of(zc_dtype t)
{
    switch (t) {
    case ZC_BOOL: return EK_BOOL;
    case ZC_INT8: return EK_I8;
    case ZC_INT16: return EK_I16;
    case ZC_INT32: return EK_I32;
    case ZC_INT64: return EK_I64;
    case ZC_UINT8: return EK_U8;
    case ZC_UINT16: return EK_U16;
    case ZC_UINT32: return EK_U32;
    case ZC_UINT64: return EK_U64;
    case ZC_FLOAT16: return EK_F32;
    case ZC_FLOAT32: return EK_F32;
    case ZC_FLOAT64: return EK_F64;
    case ZC_COMPLEX64: return EK_C64;
    case ZC_COMPLEX128: return EK_C128;
    default: return -1;
    }
}

size_t ew_kind_size(int kind)
{
    static const unsigned char SZ[EK_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16, 4};
    return kind >= 0 && kind < EK_COUNT ? SZ[kind] : 0;
}

size_t ew_dtype_size(zc_dtype t)
{
    return t == ZC_FLOAT16 ? 2 : ew_dtype_ok(t) ? ew_kind_size(ew_kind_of(t)) : 0;
}

/* ---- promotion ---- */

enum { CAT_BOOL, CAT_SINT, CAT_UINT, CAT_FLOAT, CAT_COMPLEX };

static int cat_of(zc_dtype t)
{
    if (t == ZC_BOOL) return CAT_BOOL;
    if (t >= ZC_INT8 && t <= ZC_INT64) return CAT_SINT;
    if (t >= ZC_UINT8 && t <= ZC_UINT64) return CAT_UINT;
    if (t >= ZC_FLOAT16 && t <= ZC_FLOAT64) return CAT_FLOAT;
    return CAT_COMPLEX;
}

/* log2 of the byte size of an integer dtype: 0..3 */
static int int_rank(zc_dtype t) { return cat_of(t) == CAT_SINT ? (int)(t - ZC_INT8) : (int)(t - ZC_UINT8); }

/* Smallest float that holds every value of integer/bool dtype t exactly (NumPy's rule). */
static zc_dtype float_for_int(zc_dtype t)
{
    if (t == ZC_BOOL) return ZC_FLOAT16;
    int r = int_rank(t);
    return r == 0 ? ZC_FLOAT16 : r == 1 ? ZC_FLOAT32 : ZC_FLOAT64;
}

static zc_dtype complex_for_float(zc_dtype f) { return f == ZC_FLOAT64 ? ZC_COMPLEX128 : ZC_COMPLEX64; }
static zc_dtype float_of_complex(zc_dtype c) { return c == ZC_COMPLEX128 ? ZC_FLOAT64 : ZC_FLOAT32; }

static zc_dtype promote_(zc_dtype a, zc_dtype b)
{
    int ca = cat_of(a), cb = cat_of(b);
    if (a == b) return a;
    if (ca > cb || (ca == cb && a > b)) { zc_dtype t = a; a = b; b = t; int c = ca; ca = cb; cb = c; }
    /* now ca <= cb */
    if (ca == CAT_BOOL) return b;
    if (ca == cb) return b; /* same category: the larger (enum order is by size) */
    if (ca == CAT_SINT && cb == CAT_UINT) {
        int rs = int_rank(a), ru = int_rank(b);
        if (ru < rs) return a;
        if (ru == 3) return ZC_FLOAT64;
        return (zc_dtype)(ZC_INT8 + ru + 1);
    }
    if (cb == CAT_FLOAT) { /* integer with float */
        zc_dtype f = float_for_int(a);
        return f > b ? f : b;
    }
    /* cb == complex */
    zc_dtype f = ca == CAT_FLOAT ? a : float_for_int(a);
    zc_dtype c = complex_for_float(f);
    return c > b ? c : b;
}

int ew_promote(zc_dtype a, zc_dtype b, zc_dtype *out)
{
    if (!ew_dtype_ok(a) || !ew_dtype_ok(b))
        return zc__err(ZC_EINVAL, "cannot promote %s and %s: elementwise functions take bool, integer, float and "
                       "complex dtypes", zc_dtype_name(a), zc_dtype_name(b));
    *out = promote_(a, b);
    return 0;
}

/* ---- what each function accepts ---- */

enum {
    A_BOOL = 1,     /* bool */
    A_INT = 2,      /* signed and unsigned integers, computed as they are */
    A_FLOAT = 4,    /* real floats */
    A_COMPLEX = 8,  /* complex */
    A_INT2F = 16,   /* integers computed in float_for_int (NumPy) */
    A_INT2F64 = 32, /* integers computed in float64 (divide) */
    R_SAME = 0, R_BOOL = 1, R_REAL = 2
};

typedef struct {
    unsigned char accept; /* A_* */
    unsigned char result; /* R_* */
} op_rule;

#define NUM (A_INT | A_FLOAT | A_COMPLEX)
#define FLT (A_INT2F | A_FLOAT | A_COMPLEX)
#define RFLT (A_INT2F | A_FLOAT)

static op_rule rule_of(int op)
{
    switch (op) {
    case EW_ABS: return (op_rule){NUM, R_REAL};
    case EW_ACOS: case EW_ACOSH: case EW_ASIN: case EW_ASINH: case EW_ATAN: case EW_ATANH:
    case EW_COS: case EW_COSH: case EW_EXP: case EW_EXPM1: case EW_LOG: case EW_LOG1P: case EW_LOG2:
    case EW_LOG10: case EW_SIN: case EW_SINH: case EW_SQRT: case EW_TAN: case EW_TANH:
        return (op_rule){FLT, R_SAME};
    case EW_BITWISE_INVERT: return (op_rule){A_BOOL | A_INT, R_SAME};
    case EW_CEIL: case EW_FLOOR: case EW_TRUNC: return (op_rule){A_INT | A_FLOAT, R_SAME};
    case EW_ROUND: case EW_CONJ: case EW_NEGATIVE: case EW_POSITIVE: case EW_SQUARE: case EW_SIGN:
        return (op_rule){NUM, R_SAME};
    case EW_REAL: return (op_rule){NUM, R_REAL};
    case EW_IMAG: return (op_rule){A_COMPLEX, R_REAL};
    case EW_ISFINITE: case EW_ISINF: case EW_ISNAN: return (op_rule){NUM, R_BOOL};
    case EW_LOGICAL_NOT: return (op_rule){A_BOOL, R_SAME};
    case EW_SIGNBIT: return (op_rule){RFLT, R_BOOL};
    case EW_RECIPROCAL: return (op_rule){A_FLOAT | A_COMPLEX, R_SAME};
    case EW_ADD: case EW_SUBTRACT: case EW_MULTIPLY: case EW_POW: return (op_rule){NUM, R_SAME};
    case EW_DIVIDE: return (op_rule){A_INT2F64 | A_FLOAT | A_COMPLEX, R_SAME};
    case EW_ATAN2: case EW_COPYSIGN: case EW_HYPOT: case EW_LOGADDEXP: case EW_NEXTAFTER:
        return (op_rule){RFLT, R_SAME};
    case EW_BITWISE_AND: case EW_BITWISE_OR: case EW_BITWISE_XOR: return (op_rule){A_BOOL | A_INT, R_SAME};
    case EW_BITWISE_LEFT_SHIFT: case EW_BITWISE_RIGHT_SHIFT: return (op_rule){A_INT, R_SAME};
    case EW_EQUAL: case EW_NOT_EQUAL: return (op_rule){A_BOOL | NUM, R_BOOL};
    case EW_GREATER: case EW_GREATER_EQUAL: case EW_LESS: case EW_LESS_EQUAL:
        return (op_rule){A_INT | A_FLOAT, R_BOOL};
    case EW_FLOOR_DIVIDE: case EW_REMAINDER: case EW_MAXIMUM: case EW_MINIMUM:
        return (op_rule){A_INT | A_FLOAT, R_SAME};
    case EW_LOGICAL_AND: case EW_LOGICAL_OR: case EW_LOGICAL_XOR: return (op_rule){A_BOOL, R_SAME};
    default: return (op_rule){0, R_SAME};
    }
}

static const char *accept_text(unsigned a)
{
    if (a == A_BOOL) return "a bool dtype";
    if (a == (A_BOOL | A_INT)) return "a bool or integer dtype";
    if (a == A_INT) return "an integer dtype";
    if (a == A_COMPLEX) return "a complex dtype";
    if (a == (A_INT | A_FLOAT)) return "a real integer or float dtype";
    if (a == (A_FLOAT | A_COMPLEX)) return "a float or complex dtype";
    if (a == RFLT) return "a real integer or float dtype";
    if (a & A_BOOL) return "a bool or numeric dtype";
    return "a numeric (integer, float or complex) dtype, not bool";
}

int ew_op_signature(int op, zc_dtype t, const char *what, zc_dtype *compute, zc_dtype *result)
{
    op_rule r = rule_of(op);
    int c = cat_of(t);
    zc_dtype ct = 0;
    if (!ew_dtype_ok(t)) {
        r.accept = 0;
    } else if (c == CAT_BOOL) {
        if (r.accept & A_BOOL) ct = t;
    } else if (c == CAT_SINT || c == CAT_UINT) {
        if (r.accept & A_INT) ct = t;
        else if (r.accept & A_INT2F) ct = float_for_int(t);
        else if (r.accept & A_INT2F64) ct = ZC_FLOAT64;
    } else if (c == CAT_FLOAT) {
        if (r.accept & A_FLOAT) ct = t;
    } else if (r.accept & A_COMPLEX) {
        ct = t;
    }
    if (!ct) {
        if (!r.accept)
            return zc__err(ZC_EINVAL, "%s: not an elementwise function of %s", ew_op_name((ew_op)op), what);
        return zc__err(ZC_EINVAL, "%s: unsupported dtype%s %s (needs %s)", ew_op_name((ew_op)op),
                       strchr(what, ',') ? "s" : "", what, accept_text(r.accept));
    }
    *compute = ct;
    if (r.result == R_BOOL) *result = ZC_BOOL;
    else if (r.result == R_REAL && cat_of(ct) == CAT_COMPLEX) *result = float_of_complex(ct);
    else *result = ct;
    return 0;
}

int ew_binary_signature(int op, zc_dtype a, zc_dtype b, const char *what, zc_dtype *compute, zc_dtype *result)
{
    zc_dtype pt;
    ZC_TRY(ew_promote(a, b, &pt));
    ZC_TRY(ew_op_signature(op, pt, what, compute, result));
    /* NumPy picks the first float loop both integers cast to safely, so
     * atan2(int8, uint8) computes in float16, not in float_for_int(int16) */
    op_rule r = rule_of(op);
    int cp = cat_of(pt);
    if ((r.accept & A_INT2F) && (cp == CAT_SINT || cp == CAT_UINT)) {
        zc_dtype f = promote_(float_for_int(a), float_for_int(b));
        *compute = f;
        if (r.result != R_BOOL) *result = f;
    }
    return 0;
}
