/* kernels/elementwise.h — fused elementwise expressions, evaluated in runs.
 *
 * An expression over several input arrays (after fusion: the whole chain of
 * elementwise operations between two materialized arrays) is compiled into a
 * small register program. ew_eval runs the program over a run of n elements
 * (one row of a block, cut into cache-sized tiles inside), reading each input
 * with its own element stride (0 for an input broadcast along the run), so no
 * temporary array is ever made per operation.
 *
 * Values live in registers of one of five tile types; every instruction
 * computes in the tile type of its result dtype and then narrows to that dtype
 * (ints wrap to their width, float32/float16 round), so results equal NumPy's
 * for the declared dtypes: int8 + int8 wraps at 8 bits, float32 ops round to
 * float32 after each step.
 *
 *   ew_program *p; ew_program_create(&p);
 *   int x = ew_input(p, 0, ZC_FLOAT32);           // register of input 0
 *   int two = ew_const_f64(p, 2.0);                // a Python-float scalar
 *   int y;  ew_binary(p, EW_POW, x, two, &y);      // dtype float32 by promotion
 *   ew_set_output(p, y);
 *   ew_eval(p, n, inputs, strides, out);           // out is float32[n]
 */
#ifndef ZC_KERNELS_ELEMENTWISE_H
#define ZC_KERNELS_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

/* The array API's elementwise functions (2023.12), plus where and astype. */
#define EW_UNARY_OPS(X)                                                                          \
    X(ABS, "abs") X(ACOS, "acos") X(ACOSH, "acosh") X(ASIN, "asin") X(ASINH, "asinh")            \
    X(ATAN, "atan") X(ATANH, "atanh") X(BITWISE_INVERT, "bitwise_invert") X(CEIL, "ceil")        \
    X(CONJ, "conj") X(COS, "cos") X(COSH, "cosh") X(EXP, "exp") X(EXPM1, "expm1")                \
    X(FLOOR, "floor") X(IMAG, "imag") X(ISFINITE, "isfinite") X(ISINF, "isinf")                  \
    X(ISNAN, "isnan") X(LOG, "log") X(LOG1P, "log1p") X(LOG2, "log2") X(LOG10, "log10")          \
    X(LOGICAL_NOT, "logical_not") X(NEGATIVE, "negative") X(POSITIVE, "positive")                \
    X(REAL, "real") X(ROUND, "round") X(SIGN, "sign") X(SIGNBIT, "signbit") X(SIN, "sin")        \
    X(SINH, "sinh") X(SQUARE, "square") X(SQRT, "sqrt") X(TAN, "tan") X(TANH, "tanh")            \
    X(TRUNC, "trunc") X(RECIPROCAL, "reciprocal")

#define EW_BINARY_OPS(X)                                                                         \
    X(ADD, "add") X(ATAN2, "atan2") X(BITWISE_AND, "bitwise_and")                                \
    X(BITWISE_LEFT_SHIFT, "bitwise_left_shift") X(BITWISE_OR, "bitwise_or")                      \
    X(BITWISE_RIGHT_SHIFT, "bitwise_right_shift") X(BITWISE_XOR, "bitwise_xor")                  \
    X(COPYSIGN, "copysign") X(DIVIDE, "divide") X(EQUAL, "equal") X(FLOOR_DIVIDE, "floor_divide") \
    X(GREATER, "greater") X(GREATER_EQUAL, "greater_equal") X(HYPOT, "hypot") X(LESS, "less")    \
    X(LESS_EQUAL, "less_equal") X(LOGADDEXP, "logaddexp") X(LOGICAL_AND, "logical_and")          \
    X(LOGICAL_OR, "logical_or") X(LOGICAL_XOR, "logical_xor") X(MAXIMUM, "maximum")              \
    X(MINIMUM, "minimum") X(MULTIPLY, "multiply") X(NEXTAFTER, "nextafter")                      \
    X(NOT_EQUAL, "not_equal") X(POW, "pow") X(REMAINDER, "remainder") X(SUBTRACT, "subtract")

typedef enum {
#define EW_ENUM_(name, str) EW_##name,
    EW_UNARY_OPS(EW_ENUM_) EW_UNARY_END_,
    EW_BINARY_OPS(EW_ENUM_) EW_BINARY_END_,
#undef EW_ENUM_
} ew_op;

typedef struct ew_program ew_program;

#define EW_MAX_INPUTS 64 /* input indices are 0 .. EW_MAX_INPUTS-1 */

int ew_program_create(ew_program **out);
void ew_program_free(ew_program *p);
/* Register holding input `k` (its dtype as stored in the input buffer). */
int ew_input(ew_program *p, int k, zc_dtype dtype);
/* Scalar constants. A Python-int/float/bool/complex scalar is "weak": it takes
 * the other operand's dtype in ew_binary (array API scalar rules); an error
 * (ZC_EINVAL) if it does not fit that dtype's kind (e.g. float scalar with int array). */
int ew_const_i64(ew_program *p, int64_t v);
int ew_const_f64(ew_program *p, double v);
int ew_const_bool(ew_program *p, int v);
int ew_const_c128(ew_program *p, double re, double im);
/* A typed constant (not weak). */
int ew_const_typed(ew_program *p, zc_dtype dtype, const void *value);
/* Add an instruction; *reg receives the result register. Fails with ZC_EINVAL
 * naming the function and dtypes when the function does not accept them
 * (e.g. bitwise_and on float32) — the array API's rules. */
int ew_unary(ew_program *p, ew_op op, int a, int *reg);
int ew_binary(ew_program *p, ew_op op, int a, int b, int *reg);
/* where(cond, a, b) with promotion of a and b; clip(x, lo, hi) = minimum(maximum(x, lo), hi). */
int ew_where(ew_program *p, int cond, int a, int b, int *reg);
int ew_astype(ew_program *p, int a, zc_dtype dtype, int *reg);
/* dtype of a register (after promotion); weak scalars report their default dtype. */
zc_dtype ew_reg_dtype(const ew_program *p, int reg);
/* Name → op ("add" → EW_ADD); -1 if unknown. Unary ops < EW_UNARY_END_. */
int ew_op_from_name(const char *name);
const char *ew_op_name(ew_op op);
/* Result dtype of a binary op on two dtypes (array API promotion table; mixed
 * signed/unsigned 64-bit → float64 like NumPy); ZC_EINVAL if not promotable. */
int ew_promote(zc_dtype a, zc_dtype b, zc_dtype *out);

int ew_set_output(ew_program *p, int reg);
zc_dtype ew_output_dtype(const ew_program *p);
int ew_ninputs(const ew_program *p);

/* Evaluate over n elements: input k at in[k] with element stride stride[k]
 * (0 = broadcast), output contiguous at out (output dtype). Thread-safe on a
 * const program; uses a small stack scratch per call (tiles of <= 1024 elements). */
void ew_eval(const ew_program *p, size_t n, const void *const *in, const int64_t *stride, void *out);

/* Serialize / parse the program (for plans written to JSON): a compact text form. */
int ew_program_to_json(const ew_program *p, char **json);   /* free with zc_free */
int ew_program_from_json(const char *json, ew_program **out);

#endif
