/* ops/cumulative.c — cumulative_sum and cumulative_prod along an axis.
 *
 * Two passes with bounded memory whatever the length of the axis:
 *   T = TOTALS(x): the sum/product of each block of x along the axis
 *       (materialized; a task reads up to SCAN_FANIN blocks, one at a time);
 *   C = exclusive scan of T (C[b] = op of blocks 0..b-1), built the same way
 *       recursively (T has SCAN_FANIN times fewer entries along the axis);
 *   out = SCAN(x, C): each block scans its own values from its carry C[b].
 * Integers accumulate in 64-bit wrapping arithmetic, so results are exact and
 * the same for any chunking; floats in float64 (complex128). */
#include "core/error.h"
#include "plan/array.h"
#include "plan/manip.h"

#define SCAN_FANIN 64 /* blocks of the input per TOTALS block along the axis */

static bool numeric(zc_dtype t) { return t >= ZC_BOOL && t <= ZC_COMPLEX128; }
static bool is_complex(zc_dtype t) { return t == ZC_COMPLEX64 || t == ZC_COMPLEX128; }

static int build_scan(zc_array *x, int ax, scan_op op, int initial, zc_dtype rd, zc_array **out)
{
    int nd = x->ndim;
    int64_t n = x->shape[ax], seg = x->chunks[ax] > 0 ? x->chunks[ax] : 1, nseg = n / seg + (n % seg != 0);
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_array *carry = NULL;
    if (nseg > 1) {
        zc_dtype ad = manip_scan_acc_dtype(rd);
        for (int d = 0; d < nd; d++) {
            shape[d] = d == ax ? nseg : x->shape[d];
            chunks[d] = d == ax ? (nseg < SCAN_FANIN ? nseg : SCAN_FANIN) : x->chunks[d];
        }
        zc_array *t;
        ZC_TRY(node_new(NODE_TOTALS, nd, shape, chunks, ad, 1, &x, &t));
        t->p.scan.axis = ax;
        t->p.scan.op = op;
        t->p.scan.initial = 0;
        t->p.scan.seg = seg;
        int rc = build_scan(t, ax, op, 1, ad, &carry);
        zc_array_release(t);
        if (rc < 0) return rc;
    }
    for (int d = 0; d < nd; d++) {
        shape[d] = x->shape[d] + (d == ax ? initial : 0);
        chunks[d] = x->chunks[d];
    }
    zc_array *in[2] = {x, carry};
    int rc = node_new(NODE_SCAN, nd, shape, chunks, rd, carry ? 2 : 1, in, out);
    zc_array_release(carry);
    if (rc < 0) return rc;
    (*out)->p.scan.axis = ax;
    (*out)->p.scan.op = op;
    (*out)->p.scan.initial = initial;
    (*out)->p.scan.seg = seg;
    return 0;
}

static int cumulative(const char *fn, scan_op op, zc_array *x, int axis, zc_dtype dtype, int include_initial,
                      zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (!numeric(x->dtype))
        return zc__err(ZC_EINVAL, "%s: %s arrays cannot be accumulated", fn, zc_dtype_name(x->dtype));
    zc_dtype rd = dtype;
    if (rd == ZC_DTYPE_INVALID) {
        if (x->dtype == ZC_BOOL || (x->dtype >= ZC_INT8 && x->dtype <= ZC_INT64)) rd = ZC_INT64;
        else if (x->dtype >= ZC_UINT8 && x->dtype <= ZC_UINT64) rd = ZC_UINT64;
        else rd = x->dtype;
    } else if (!numeric(rd) || rd == ZC_BOOL) {
        return zc__err(ZC_EINVAL, "%s: dtype %s is not supported (integer, float or complex)", fn, zc_dtype_name(rd));
    } else if (is_complex(x->dtype) && !is_complex(rd)) {
        return zc__err(ZC_EINVAL, "%s: cannot accumulate %s values as %s", fn, zc_dtype_name(x->dtype),
                       zc_dtype_name(rd));
    }
    if (include_initial != 0 && include_initial != 1)
        return zc__err(ZC_EINVAL, "%s: include_initial must be 0 or 1 (got %d)", fn, include_initial);
    zc_array *src = x;
    int ax = axis;
    if (axis == ZC_AXIS_NONE) {
        if (x->ndim > 1)
            return zc__err(ZC_EINVAL, "%s: an axis is required for arrays of %d dimensions", fn, x->ndim);
        int64_t m1 = -1;
        ZC_TRY(zc_reshape(x, 1, &m1, &src));
        ax = 0;
    } else {
        int a = axis < 0 ? axis + x->ndim : axis;
        if (a < 0 || a >= x->ndim)
            return zc__err(ZC_EINVAL, "%s: axis %d is out of range for an array of %d dimension%s", fn, axis, x->ndim,
                           x->ndim == 1 ? "" : "s");
        ax = a;
        zc_array_retain(src);
    }
    int rc = build_scan(src, ax, op, include_initial, rd, out);
    zc_array_release(src);
    return rc;
}

int zc_cumulative_sum(zc_array *x, int axis, zc_dtype dtype, int include_initial, zc_array **out)
{
    return cumulative("cumulative_sum", SCAN_SUM, x, axis, dtype, include_initial, out);
}

int zc_cumulative_prod(zc_array *x, int axis, zc_dtype dtype, int include_initial, zc_array **out)
{
    return cumulative("cumulative_prod", SCAN_PROD, x, axis, dtype, include_initial, out);
}
