/* kernels/elementwise.h — fused elementwise expressions, evaluated in runs.
 *
 * An expression over several input arrays (after fusion: the whole chain of
 * elementwise operations between two materialized arrays) is compiled into a
 * small register program. ew_eval runs the program over a run of n elements
 * (one row of a block, cut into cache-sized tiles inside), reading each input
 * with its own element stride (0 for an input broadcast along the run), so no
 * temporary array is ever made per operation.
 *
 * Values live in tiles of their dtype's own C type (float16 as float, bool as
 * 0/1 bytes); every instruction computes in its dtype and then narrows to it
 * (ints wrap to their width, float32 rounds; float16 results are rounded to
 * half after each instruction), so results equal NumPy's op by op: int8 +
 * int8 wraps at 8 bits, float32 ops round to float32 after each step.
 * Instructions whose operands are all constants are folded when added.
 *
 * Semantics (details and NumPy differences in ew_promote.c, ew_kernels.c):
 * - dtypes accepted per function: the array API's categories (numeric
 *   excludes bool; logical_* take bool only; bitwise_* bool and integers;
 *   shifts integers; ordering comparisons, floor_divide, remainder, maximum,
 *   minimum, ceil/floor/trunc no complex; imag complex only; real and conj
 *   any numeric), plus NumPy's: floating-point functions accept integers and
 *   compute in the float NumPy picks (int8 → float16, int32 → float64), and
 *   divide of integers gives float64. Others fail with ZC_EINVAL naming the
 *   function and dtypes.
 * - integer division or remainder by zero gives 0; shifts by a count outside
 *   [0, bits) give 0 (-1 for right shifts of negatives); negative integer
 *   powers give 1/x**-y truncated (NumPy raises); float → integer casts
 *   truncate and saturate, NaN → 0 (NumPy: platform dependent).
 * - ceil/floor/trunc/round of integers keep the dtype (array API); sign of
 *   complex is x/|x| (array API 2023.12, NumPy 2).
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
 * the other operand's dtype in ew_binary/ew_where (array API scalar rules):
 * bool takes any dtype; int takes integer, float and complex dtypes, and must
 * fit an integer dtype (int8 array + 1000 is ZC_EINVAL: NumPy 1.24 would widen
 * to int16, NumPy 2 raises); a float scalar takes float and complex dtypes;
 * where the array API is silent, NumPy's result: int with a bool array →
 * int64, float with a bool or integer array → float64 (NumPy 1.24 and 2
 * agree), complex with float16/float32 → complex64, else complex128. Weak with
 * weak stays weak (folded in int64/float64/complex128). */
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
/* Result dtype of promoting two dtypes (array API table, extended like NumPy
 * where it is silent: int64 with uint64 → float64, int8 with float16 →
 * float16, int32 with float32 → float64, bool with x → x); ZC_EINVAL if one
 * is not a bool/integer/float/complex dtype. The function's own dtype rules
 * apply on top (less → bool, divide of ints → float64). */
int ew_promote(zc_dtype a, zc_dtype b, zc_dtype *out);

/* Choose the output and schedule the program (may be called again). ZC_EINVAL
 * if the output needs more than 1024 values or 256 live at once. */
int ew_set_output(ew_program *p, int reg);
zc_dtype ew_output_dtype(const ew_program *p);
int ew_ninputs(const ew_program *p);

/* Evaluate over n elements: input k at in[k] with element stride stride[k]
 * (0 = broadcast, negative allowed), output contiguous at out (output dtype).
 * Inputs are naturally aligned for their dtype; inputs the output does not
 * depend on are not read (may be NULL); out must not overlap an input. Does
 * nothing before ew_set_output. Thread-safe on a const program; uses ~80 KiB
 * of stack per call (tiles of <= 1024 elements). */
void ew_eval(const ew_program *p, size_t n, const void *const *in, const int64_t *stride, void *out);

/* Serialize / parse the program (for plans written to JSON): the list of build
 * calls, replayed through the same checks when parsed (format in ew_json.c).
 * Parsing fails with ZC_EFORMAT on malformed JSON, ZC_EINVAL on an unknown
 * function or a call the builder refuses. */
int ew_program_to_json(const ew_program *p, char **json);   /* free with zc_free */
int ew_program_from_json(const char *json, ew_program **out);

#endif
