/* ops/ew_numbers.c — the elementwise functions as a list (names and arities,
 * for front ends that bind names: the CLI's expression language), and the
 * same functions applied to Python numbers, folded by the kernels that
 * compute arrays (a one-element program of weak constants), so a front end
 * never carries math of its own. */
#include <string.h>

#include "core/error.h"
#include "kernels/elementwise.h"

#define N_UNARY ((int)EW_UNARY_END_)
#define N_BINARY ((int)EW_BINARY_END_ - (int)EW_UNARY_END_ - 1)

int zc_elementwise_info(int i, const char **name, int *nargs)
{
    if (i < 0 || i > N_UNARY + N_BINARY) return ZC_ERANGE;
    const char *n = i == N_UNARY + N_BINARY ? "where" : ew_op_name((ew_op)(i < N_UNARY ? i : i + 1));
    int k = i < N_UNARY ? 1 : i < N_UNARY + N_BINARY ? 2 : 3;
    if (name) *name = n;
    if (nargs) *nargs = k;
    return 0;
}

static int number_const(ew_program *p, const zc_number *x, int k, const char *fname)
{
    switch (x->dtype) {
    case ZC_BOOL: return ew_const_bool(p, x->i != 0);
    case ZC_INT64: return ew_const_i64(p, x->i);
    case ZC_FLOAT64: return ew_const_f64(p, x->f);
    default:
        return zc__err(ZC_EINVAL, "%s: argument %d is a %s, not a Python number (bool, int64 or float64)", fname,
                       k + 1, zc_dtype_name(x->dtype));
    }
}

/* Evaluate the folded program (no inputs) into *out. */
static int read_number(ew_program *p, int reg, const char *fname, zc_number *out)
{
    ZC_TRY(ew_set_output(p, reg));
    zc_dtype t = ew_output_dtype(p);
    union {
        unsigned char b;
        int64_t i;
        double f;
    } v = {0};
    switch (t) {
    case ZC_BOOL:
    case ZC_INT64:
    case ZC_FLOAT64: break;
    default:
        return zc__err(ZC_EUNSUPPORTED, "%s: the result is %s, not a Python bool, int or float", fname,
                       zc_dtype_name(t));
    }
    ew_eval(p, 1, NULL, NULL, &v);
    memset(out, 0, sizeof *out);
    out->dtype = t;
    if (t == ZC_BOOL) out->i = v.b != 0;
    else if (t == ZC_INT64) out->i = v.i;
    else out->f = v.f;
    return 0;
}

int zc_elementwise_number(const char *name, int nargs, const zc_number *args, zc_number *out)
{
    zc__err_clear();
    if (!name || !args || !out) return zc__err(ZC_EINVAL, "zc_elementwise_number: NULL argument");
    int op = strcmp(name, "where") ? ew_op_from_name(name) : EW_BINARY_END_;
    if (op < 0) return zc__err(ZC_EINVAL, "unknown elementwise function '%s'", name);
    int want = op < EW_UNARY_END_ ? 1 : op < EW_BINARY_END_ ? 2 : 3;
    if (nargs != want)
        return zc__err(ZC_EINVAL, "%s takes %d argument%s (got %d)", name, want, want > 1 ? "s" : "", nargs);
    ew_program *p;
    ZC_TRY(ew_program_create(&p));
    int r[3], reg = -1, rc = 0;
    for (int k = 0; k < nargs && rc >= 0; k++) rc = r[k] = number_const(p, &args[k], k, name);
    if (rc >= 0) {
        if (nargs == 3) rc = ew_where(p, r[0], r[1], r[2], &reg);
        else if (nargs == 1) rc = ew_unary(p, (ew_op)op, r[0], &reg);
        else rc = ew_binary(p, (ew_op)op, r[0], r[1], &reg);
    }
    if (rc >= 0) rc = read_number(p, reg, name, out);
    ew_program_free(p);
    return rc < 0 ? rc : 0;
}
