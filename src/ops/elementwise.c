/* ops/elementwise.c — elementwise functions: argument checks, then one EW node
 * per call (plan/elementwise.c: broadcasting, type promotion; chains are fused
 * into one program at compute time). */
#include <string.h>

#include "core/error.h"
#include "plan/elementwise.h"

int zc_elementwise(const char *name, int nargs, zc_array *const *args, zc_array **out)
{
    zc__err_clear();
    if (!name || !args || !out) return zc__err(ZC_EINVAL, "zc_elementwise: NULL argument");
    for (int i = 0; i < nargs; i++)
        if (!args[i]) return zc__err(ZC_EINVAL, "%s: argument %d is NULL", name, i + 1);
    if (!strcmp(name, "where")) {
        if (nargs != 3) return zc__err(ZC_EINVAL, "where takes 3 arguments (got %d)", nargs);
        return ew_node_make(name, EW_UNARY_END_ /* marker: where */, 3, args, ZC_DTYPE_INVALID, out);
    }
    int op = ew_op_from_name(name);
    if (op < 0) return zc__err(ZC_EINVAL, "unknown elementwise function '%s'", name);
    int want = op < EW_UNARY_END_ ? 1 : 2;
    if (nargs != want) return zc__err(ZC_EINVAL, "%s takes %d argument%s (got %d)", name, want, want > 1 ? "s" : "", nargs);
    return ew_node_make(name, op, nargs, args, ZC_DTYPE_INVALID, out);
}

int zc_astype(zc_array *a, zc_dtype dtype, zc_array **out)
{
    zc__err_clear();
    if (!a || !out) return zc__err(ZC_EINVAL, "zc_astype: NULL argument");
    return ew_node_make("astype", -1, 1, &a, dtype, out);
}
