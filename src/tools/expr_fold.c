/* tools/expr_fold.c — Python numbers. Operators on two numbers follow
 * Python's arithmetic (integers are exact: a result outside 64 bits is an
 * error; division by zero is an error; // and % floor), so `axis=-1` or
 * `2**10` stay numbers. Elementwise functions of numbers give numbers too (so
 * `sqrt(2) * u` keeps u's dtype, as in NumPy): those that are Python's
 * operators by another name (add, pow, negative, ...) fold as the operator;
 * the others are computed by the library's kernels (zc_elementwise_number),
 * so no math is repeated here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

static int int_result(ex_value *out, int col, int overflow, int64_t r)
{
    if (overflow) return ex_fail(col, "integer result out of the 64-bit range");
    ex_set_int(out, r, col);
    return 0;
}

/* Python's float floor division and modulo (Objects/floatobject.c, float_divmod). */
static void py_float_divmod(double a, double b, double *div, double *mod)
{
    double m = fmod(a, b);
    double d = (a - m) / b;
    if (m != 0) {
        if ((b < 0) != (m < 0)) {
            m += b;
            d -= 1.0;
        }
    } else {
        m = copysign(0.0, b);
    }
    double fd;
    if (d != 0) {
        fd = floor(d);
        if (d - fd > 0.5) fd += 1.0;
    } else {
        fd = copysign(0.0, a / b);
    }
    *div = fd;
    *mod = m;
}

int ex_fold_operator(ex_op op, const ex_value *a, const ex_value *b, int col, ex_value *out)
{
    int both_int = a->is_int && b->is_int;
    double x = ex_num_f(a), y = ex_num_f(b);
    int64_t r;
    switch (op) {
    case EX_OP_ADD:
        if (both_int) {
            int ovf = __builtin_add_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        ex_set_float(out, x + y, col);
        return 0;
    case EX_OP_SUB:
        if (both_int) {
            int ovf = __builtin_sub_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        ex_set_float(out, x - y, col);
        return 0;
    case EX_OP_MUL:
        if (both_int) {
            int ovf = __builtin_mul_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        ex_set_float(out, x * y, col);
        return 0;
    case EX_OP_DIV:
        if (y == 0) return ex_fail(col, "division by zero");
        ex_set_float(out, x / y, col);
        return 0;
    case EX_OP_FLOORDIV:
    case EX_OP_MOD:
        if (y == 0) return ex_fail(col, "%s by zero", op == EX_OP_MOD ? "modulo" : "division");
        if (both_int) {
            if (a->i == INT64_MIN && b->i == -1) {
                if (op == EX_OP_MOD) return int_result(out, col, 0, 0);
                return int_result(out, col, 1, 0);
            }
            int64_t q = a->i / b->i, m = a->i % b->i;
            if (m != 0 && ((m < 0) != (b->i < 0))) {
                q -= 1;
                m += b->i;
            }
            return int_result(out, col, 0, op == EX_OP_MOD ? m : q);
        } else {
            double d, m;
            py_float_divmod(x, y, &d, &m);
            ex_set_float(out, op == EX_OP_MOD ? m : d, col);
            return 0;
        }
    case EX_OP_POW:
        if (both_int && b->i >= 0) {
            int64_t base = a->i, acc = 1;
            uint64_t k = (uint64_t)b->i;
            int ovf = 0;
            if (base == 0) {
                acc = k == 0 ? 1 : 0;
            } else if (base == 1) {
                acc = 1;
            } else if (base == -1) {
                acc = (k & 1) ? -1 : 1;
            } else {
                /* |base| >= 2: once base*base overflows with bits of k left, so does the result */
                while (k && !ovf) {
                    if (k & 1) ovf = __builtin_mul_overflow(acc, base, &acc);
                    k >>= 1;
                    if (k && !ovf) ovf = __builtin_mul_overflow(base, base, &base);
                }
            }
            return int_result(out, col, ovf, acc);
        }
        if (x == 0 && y < 0) return ex_fail(col, "0 cannot be raised to a negative power");
        if (x < 0 && y != floor(y)) return ex_fail(col, "a negative number raised to a fractional power is complex");
        ex_set_float(out, pow(x, y), col);
        return 0;
    case EX_OP_LSHIFT:
    case EX_OP_RSHIFT:
    case EX_OP_BITAND:
    case EX_OP_BITXOR:
    case EX_OP_BITOR:
        if (!both_int) return ex_fail(col, "operator '%s' needs integers, not floats", ex_op_text(op));
        if (op == EX_OP_LSHIFT || op == EX_OP_RSHIFT) {
            if (b->i < 0) return ex_fail(col, "negative shift count");
            if (op == EX_OP_RSHIFT) return int_result(out, col, 0, b->i >= 63 ? (a->i < 0 ? -1 : 0) : a->i >> b->i);
            if (a->i == 0) return int_result(out, col, 0, 0);
            if (b->i >= 63) return int_result(out, col, 1, 0);
            int64_t s = (int64_t)((uint64_t)a->i << b->i);
            return int_result(out, col, (s >> b->i) != a->i, s);
        }
        r = op == EX_OP_BITAND ? (a->i & b->i) : op == EX_OP_BITXOR ? (a->i ^ b->i) : (a->i | b->i);
        if (a->is_bool && b->is_bool) ex_set_bool(out, (int)r, col);
        else ex_set_int(out, r, col);
        return 0;
    case EX_OP_LT: ex_set_bool(out, both_int ? a->i < b->i : x < y, col); return 0;
    case EX_OP_LE: ex_set_bool(out, both_int ? a->i <= b->i : x <= y, col); return 0;
    case EX_OP_GT: ex_set_bool(out, both_int ? a->i > b->i : x > y, col); return 0;
    case EX_OP_GE: ex_set_bool(out, both_int ? a->i >= b->i : x >= y, col); return 0;
    case EX_OP_EQ: ex_set_bool(out, both_int ? a->i == b->i : x == y, col); return 0;
    case EX_OP_NE: ex_set_bool(out, both_int ? a->i != b->i : x != y, col); return 0;
    case EX_OP_AND: *out = (a->is_int ? a->i : x) ? *b : *a; out->col = col; return 0;
    case EX_OP_OR: *out = (a->is_int ? a->i : x) ? *a : *b; out->col = col; return 0;
    default: return ex_fail(col, "operator '%s' does not apply to numbers", ex_op_text(op));
    }
}

int ex_fold_unary_operator(ex_op op, const ex_value *a, int col, ex_value *out)
{
    switch (op) {
    case EX_OP_NEG:
        if (a->is_int) return int_result(out, col, a->i == INT64_MIN, -a->i);
        ex_set_float(out, -a->f, col);
        return 0;
    case EX_OP_POS:
        *out = *a;
        out->is_bool = 0;
        out->col = col;
        return 0;
    case EX_OP_INVERT:
        if (!a->is_int) return ex_fail(col, "operator '~' needs an integer, not a float");
        return int_result(out, col, 0, ~a->i);
    case EX_OP_NOT:
        ex_set_bool(out, a->is_int ? a->i == 0 : a->f == 0, col);
        return 0;
    default: return ex_fail(col, "operator '%s' does not apply to numbers", ex_op_text(op));
    }
}

/* Functions that are Python's operators by another name: Python's arithmetic
 * (an integer result outside 64 bits is an error, as for the operator). */
static const struct {
    const char *name;
    ex_op op;
} OPERATORS[] = {
    {"negative", EX_OP_NEG},       {"positive", EX_OP_POS},           {"add", EX_OP_ADD},
    {"subtract", EX_OP_SUB},       {"multiply", EX_OP_MUL},           {"divide", EX_OP_DIV},
    {"floor_divide", EX_OP_FLOORDIV}, {"remainder", EX_OP_MOD},       {"pow", EX_OP_POW},
    {"bitwise_and", EX_OP_BITAND}, {"bitwise_or", EX_OP_BITOR},       {"bitwise_xor", EX_OP_BITXOR},
    {"bitwise_left_shift", EX_OP_LSHIFT}, {"bitwise_right_shift", EX_OP_RSHIFT},
    {"equal", EX_OP_EQ},           {"not_equal", EX_OP_NE},           {"less", EX_OP_LT},
    {"less_equal", EX_OP_LE},      {"greater", EX_OP_GT},             {"greater_equal", EX_OP_GE},
};

int ex_fold_function(const char *api, int nargs, const ex_value *args, int col, ex_value *out)
{
    for (size_t k = 0; k < sizeof OPERATORS / sizeof OPERATORS[0]; k++)
        if (!strcmp(api, OPERATORS[k].name)) {
            int rc = nargs == 1 ? ex_fold_unary_operator(OPERATORS[k].op, &args[0], col, out)
                                : ex_fold_operator(OPERATORS[k].op, &args[0], &args[1], col, out);
            return rc < 0 ? -1 : 1;
        }
    /* the same for the functions that are products and quotients of the number */
    if (!strcmp(api, "square")) return ex_fold_operator(EX_OP_MUL, &args[0], &args[0], col, out) < 0 ? -1 : 1;
    if (!strcmp(api, "reciprocal")) {
        ex_value one;
        ex_set_int(&one, 1, col);
        return ex_fold_operator(EX_OP_DIV, &one, &args[0], col, out) < 0 ? -1 : 1;
    }
    if (!strcmp(api, "abs") && args[0].is_int && args[0].i < 0)
        return ex_fold_unary_operator(EX_OP_NEG, &args[0], col, out) < 0 ? -1 : 1;
    /* real, imag and conj of a number stay 0-d arrays (as NumPy's) */
    if (!strcmp(api, "real") || !strcmp(api, "imag") || !strcmp(api, "conj")) return 0;
    /* logical functions take the numbers' truth values, as Python's `not` does */
    int truth = !strncmp(api, "logical_", 8);
    zc_number x[2] = {{0}}, r;
    for (int k = 0; k < nargs && k < 2; k++) {
        x[k].dtype = args[k].is_bool || truth ? ZC_BOOL : args[k].is_int ? ZC_INT64 : ZC_FLOAT64;
        x[k].i = truth ? ex_num_f(&args[k]) != 0 : args[k].i;
        x[k].f = args[k].f;
    }
    if (zc_elementwise_number(api, nargs, x, &r) < 0) {
        /* a Python bool is an int where the function takes no bools (sqrt(True) is 1.0) */
        int had_bool = 0;
        for (int k = 0; k < nargs && k < 2 && !truth; k++)
            if (x[k].dtype == ZC_BOOL) x[k].dtype = ZC_INT64, had_bool = 1;
        if (!had_bool || zc_elementwise_number(api, nargs, x, &r) < 0) return ex_fail(col, "%s", zc_errmsg());
    }
    if (r.dtype == ZC_BOOL) ex_set_bool(out, (int)r.i, col);
    else if (r.dtype == ZC_INT64) ex_set_int(out, r.i, col);
    else ex_set_float(out, r.f, col);
    return 1;
}
