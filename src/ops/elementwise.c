/* ops/elementwise.c — elementwise functions: broadcasting, type promotion, and
 * one EW node per call (chains are fused into one program at compute time). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "plan/array.h"

static void shape_str(const zc_array *a, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < a->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%lld%s", (long long)a->shape[d], d + 1 < a->ndim ? ", " : "");
    if (k < n) snprintf(buf + k, n - k, ")");
}

/* Broadcast shape and chunks of the arguments (chunks from the largest argument). */
static int broadcast(const char *name, int nargs, zc_array *const *args, int *ndim, int64_t *shape, int64_t *chunks)
{
    int nd = 0;
    for (int i = 0; i < nargs; i++)
        if (args[i]->ndim > nd) nd = args[i]->ndim;
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
        chunks[d] = 1;
    }
    size_t best = 0;
    for (int i = 0; i < nargs; i++) {
        const zc_array *a = args[i];
        int off = nd - a->ndim;
        for (int j = 0; j < a->ndim; j++) {
            int64_t s = a->shape[j];
            if (s == shape[j + off] || s == 1) continue;
            if (shape[j + off] != 1) {
                char x[256], y[256];
                shape_str(args[0], x, sizeof x);
                shape_str(a, y, sizeof y);
                return zc__err(ZC_EINVAL, "%s: shapes %s and %s do not broadcast (dimension %d: %lld vs %lld)", name, x,
                               y, j + off, (long long)shape[j + off], (long long)s);
            }
            shape[j + off] = s;
        }
    }
    for (int i = 0; i < nargs; i++) {
        const zc_array *a = args[i];
        size_t bytes = a->itemsize;
        for (int d = 0; d < a->ndim; d++) bytes *= (size_t)a->shape[d];
        if (a->kind == NODE_SCALAR || bytes < best) continue;
        best = bytes;
        int off = nd - a->ndim;
        for (int j = 0; j < a->ndim; j++)
            if (a->shape[j] == shape[j + off]) chunks[j + off] = a->chunks[j];
    }
    *ndim = nd;
    return 0;
}

/* The result dtype, by compiling the one operation on its argument dtypes. */
static int result_dtype(int op, int nargs, zc_array *const *args, zc_dtype astype, zc_dtype *out)
{
    ew_program *p;
    ZC_TRY(ew_program_create(&p));
    int r[3], reg = -1, rc = 0;
    for (int i = 0; i < nargs && rc >= 0; i++) {
        const zc_array *a = args[i];
        if (a->kind == NODE_SCALAR)
            r[i] = a->p.scalar.is_int ? ew_const_i64(p, (int64_t)a->p.scalar.value) : ew_const_f64(p, a->p.scalar.value);
        else
            r[i] = ew_input(p, i, a->dtype);
        if (r[i] < 0) rc = r[i];
    }
    if (rc >= 0) {
        if (op < 0) rc = ew_astype(p, r[0], astype, &reg);
        else if (nargs == 3) rc = ew_where(p, r[0], r[1], r[2], &reg);
        else if (nargs == 1) rc = ew_unary(p, (ew_op)op, r[0], &reg);
        else rc = ew_binary(p, (ew_op)op, r[0], r[1], &reg);
    }
    if (rc >= 0) *out = ew_reg_dtype(p, reg);
    ew_program_free(p);
    return rc < 0 ? rc : 0;
}

static int make_ew(const char *name, int op, int nargs, zc_array *const *args, zc_dtype astype, zc_array **out)
{
    int nd = 0;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt;
    ZC_TRY(broadcast(name, nargs, args, &nd, shape, chunks));
    ZC_TRY(result_dtype(op, nargs, args, astype, &dt));
    ZC_TRY(node_new(NODE_EW, nd, shape, chunks, dt, nargs, args, out));
    (*out)->p.ew.op = op;
    return 0;
}

int zc_elementwise(const char *name, int nargs, zc_array *const *args, zc_array **out)
{
    zc__err_clear();
    if (!name || !args || !out) return zc__err(ZC_EINVAL, "zc_elementwise: NULL argument");
    for (int i = 0; i < nargs; i++)
        if (!args[i]) return zc__err(ZC_EINVAL, "%s: argument %d is NULL", name, i + 1);
    if (!strcmp(name, "where")) {
        if (nargs != 3) return zc__err(ZC_EINVAL, "where takes 3 arguments (got %d)", nargs);
        return make_ew(name, EW_UNARY_END_ /* marker: where */, 3, args, ZC_DTYPE_INVALID, out);
    }
    int op = ew_op_from_name(name);
    if (op < 0) return zc__err(ZC_EINVAL, "unknown elementwise function '%s'", name);
    int want = op < EW_UNARY_END_ ? 1 : 2;
    if (nargs != want) return zc__err(ZC_EINVAL, "%s takes %d argument%s (got %d)", name, want, want > 1 ? "s" : "", nargs);
    return make_ew(name, op, nargs, args, ZC_DTYPE_INVALID, out);
}

int zc_astype(zc_array *a, zc_dtype dtype, zc_array **out)
{
    zc__err_clear();
    if (!a || !out) return zc__err(ZC_EINVAL, "zc_astype: NULL argument");
    return make_ew("astype", -1, 1, &a, dtype, out);
}
