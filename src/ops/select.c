/* ops/select.c — selections whose size depends on the data: x[mask]
 * (zc_mask_select) and nonzero. Both are a COMPRESS node (plan/compress.c):
 * the rows of a vector-led array where a bool vector is true.
 *
 * Two passes, both bounded by the spec:
 *   1. count: the number of true values in each segment of the mask (a TOTALS
 *      node, one per segment of the rows' chunk), computed now into a small
 *      buffer of nseg int64s and kept in the node as prefix sums;
 *   2. place: the node's region function, at compute time, reads only the
 *      segments holding the rows a task writes.
 * So the result has an exact shape and a regular chunk grid when it is made,
 * and everything built on it plans as on any other array. A mask over several
 * leading dims is flattened with them (C order, as NumPy's x[mask]). */
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/array.h"
#include "plan/manip.h"
#include "select.h"

#define COUNT_FANIN 64 /* segments per block of the counts */

/* Pass 1: the prefix sums of the true values in each segment of `seg` rows of
 * bool vector m (nseg + 1 of them, *prefix allocated). */
static int count_pass(const zc_spec *spec, zc_array *m, int64_t seg, int64_t nseg, int64_t **prefix)
{
    int64_t *pre = zc__calloc((size_t)nseg + 1, sizeof *pre);
    if (!pre) return ZC_ENOMEM;
    int rc = 0;
    if (m->shape[0] > 0) {
        zc_array *t;
        int64_t shape = nseg, chunks = nseg < COUNT_FANIN ? nseg : COUNT_FANIN;
        rc = node_new(NODE_TOTALS, 1, &shape, &chunks, ZC_INT64, 1, &m, &t);
        if (rc == 0) {
            t->p.scan.axis = 0;
            t->p.scan.op = SCAN_SUM;
            t->p.scan.seg = seg;
            rc = zc_compute_buffer(spec, t, pre + 1, (size_t)nseg * sizeof *pre, NULL);
            zc_array_release(t);
        }
    }
    for (int64_t s = 1; rc == 0 && s <= nseg; s++) pre[s] += pre[s - 1];
    if (rc < 0) zc__free(pre);
    else *prefix = pre;
    return rc;
}

int select_compress(const zc_spec *spec, zc_array *m1, int n, zc_array *const *xs, zc_array **outs)
{
    /* segments: the first array's row chunks (each chunk decoded once per pass),
     * cut in k equal parts only when a part of the arrays and of the mask would
     * take more than an eighth of the bound (a task holds one of each beside its
     * reads and output, which the planner projects at some 5 times the part) */
    int64_t len = m1->shape[0], c = xs[0]->chunks[0] > 0 ? xs[0]->chunks[0] : 1, row = 0;
    for (int i = 0; i < n; i++) {
        int64_t r = (int64_t)xs[i]->itemsize;
        for (int d = 1; d < xs[i]->ndim; d++)
            if (ck_mul_i64(r, xs[i]->chunks[d], &r)) r = INT64_MAX - 1;
        if (r > row) row = r;
    }
    row++; /* the mask's byte */
    int64_t most = (int64_t)(spec->allowed_mem / 8) / row, k = most > 0 ? ck_ceildiv(c, most) : c;
    int64_t seg = ck_ceildiv(c, k), nseg = len ? ck_ceildiv(len, seg) : 1, *prefix;
    ZC_TRY(count_pass(spec, m1, seg, nseg, &prefix));
    int rc = 0, made = 0;
    for (; rc == 0 && made < n; made++) {
        zc_array *x1 = xs[made];
        int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS], *own = zc__malloc_array((size_t)nseg + 1, sizeof *own);
        if (!own) {
            rc = ZC_ENOMEM;
            break;
        }
        memcpy(own, prefix, sizeof *own * (size_t)(nseg + 1));
        for (int d = 0; d < x1->ndim; d++) {
            shape[d] = d ? x1->shape[d] : prefix[nseg];
            chunks[d] = d ? x1->chunks[d] : seg;
        }
        zc_array *in[2] = {x1, m1};
        if ((rc = node_new(NODE_COMPRESS, x1->ndim, shape, chunks, x1->dtype, 2, in, &outs[made])) < 0) {
            zc__free(own);
            break;
        }
        outs[made]->itemsize = x1->itemsize;
        outs[made]->p.compress.seg = seg;
        outs[made]->p.compress.nseg = nseg;
        outs[made]->p.compress.prefix = own;
    }
    zc__free(prefix);
    if (rc < 0)
        while (made > 0) zc_array_release(outs[--made]);
    return rc;
}

/* x with its first k dims merged into one of n elements (x itself, retained, when k == 1). */
static int merge_leading(zc_array *x, int k, int64_t n, zc_array **out)
{
    if (k == 1) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    int64_t shape[ZC_MAX_DIMS];
    shape[0] = n;
    for (int d = k; d < x->ndim; d++) shape[d - k + 1] = x->shape[d];
    return zc_reshape(x, x->ndim - k + 1, shape, out);
}

int zc_mask_select(const zc_spec *spec, zc_array *x, zc_array *mask, zc_array **out)
{
    zc__err_clear();
    if (!spec || !x || !mask || !out) return zc__err(ZC_EINVAL, "zc_mask_select: NULL argument");
    if (mask->dtype != ZC_BOOL)
        return zc__err(ZC_EINVAL, "a boolean index must have dtype bool, not %s", zc_dtype_name(mask->dtype));
    if (mask->ndim < 1 || mask->ndim > x->ndim)
        return zc__err(ZC_EINVAL, "a boolean index of %d dimensions for an array of %d (it must have 1 to %d)",
                       mask->ndim, x->ndim, x->ndim);
    int64_t n = 1;
    for (int d = 0; d < mask->ndim; d++) {
        if (mask->shape[d] != x->shape[d])
            return zc__err(ZC_EINVAL, "boolean index dimension %d has size %lld, the array's has %lld", d,
                           (long long)mask->shape[d], (long long)x->shape[d]);
        n *= mask->shape[d];
    }
    zc_array *x1 = NULL, *m1 = NULL;
    int rc = merge_leading(x, mask->ndim, n, &x1);
    if (rc == 0) rc = merge_leading(mask, mask->ndim, n, &m1);
    if (rc == 0) rc = select_compress(spec, m1, 1, &x1, out);
    zc_array_release(x1);
    zc_array_release(m1);
    return rc;
}

int select_int_op(const char *fn, zc_array *a, int64_t v, zc_array **out)
{
    zc_array *s;
    ZC_TRY(zc_scalar((double)v, 1, &s));
    zc_array *args[2] = {a, s};
    int rc = zc_elementwise(fn, 2, args, out);
    zc_array_release(s);
    return rc;
}

int zc_nonzero(const zc_spec *spec, zc_array *x, zc_array **outs)
{
    zc__err_clear();
    if (!spec || !x || !outs) return zc__err(ZC_EINVAL, "zc_nonzero: NULL argument");
    if (x->ndim == 0) return zc__err(ZC_EINVAL, "nonzero of a 0-d array (the array API asks for at least 1 dimension)");
    int nd = x->ndim;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= x->shape[d];
    zc_array *mask = NULL, *m1 = NULL, *pos = NULL, *flat = NULL;
    int rc = 0;
    if (x->dtype == ZC_BOOL) {
        zc_array_retain(x);
        mask = x;
    } else {
        rc = select_int_op("not_equal", x, 0, &mask);
    }
    if (rc == 0) rc = merge_leading(mask, nd, n, &m1);
    /* the flat positions, chunked as the mask's rows */
    if (rc == 0) rc = zc_arange(0, (double)n, 1, ZC_INT64, m1->chunks[0], &pos);
    if (rc == 0) rc = select_compress(spec, m1, 1, &pos, &flat);
    /* unravelled: index along d = (flat // stride_d) % shape_d */
    int made = 0;
    for (int d = 0; rc == 0 && d < nd; d++) {
        int64_t stride = 1;
        for (int e = d + 1; e < nd; e++) stride *= x->shape[e] ? x->shape[e] : 1;
        zc_array *q = flat, *r = NULL;
        zc_array_retain(q);
        if (stride > 1) {
            rc = select_int_op("floor_divide", q, stride, &r);
            zc_array_release(q);
            q = r;
        }
        if (rc == 0 && d > 0) {
            rc = select_int_op("remainder", q, x->shape[d] ? x->shape[d] : 1, &r);
            zc_array_release(q);
            q = r;
        }
        if (rc == 0) outs[made++] = q;
    }
    if (rc < 0)
        while (made) zc_array_release(outs[--made]);
    zc_array_release(mask);
    zc_array_release(m1);
    zc_array_release(pos);
    zc_array_release(flat);
    return rc;
}
