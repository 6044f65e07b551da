/* ops/reduce.c — reductions as rounds of a tree.
 *
 * Round 1 reads up to `split` input blocks along the reduced axes per task and
 * accumulates them, one block at a time, into one accumulator block; so a task
 * holds one input block and one accumulator block whatever the split, and the
 * split only bounds the number of input blocks per task (the fusion limit),
 * and is lowered so that round 1 has a task per core when it can.
 * Later rounds merge accumulator blocks the same way; the last one finalizes
 * (and drops the reduced axes unless keepdims). Accumulator arrays have the
 * raw dtype r<8*acc_size> and chunks of 1 along the reduced axes. */
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/pool.h"
#include "plan/array.h"

#define REDUCE_SPLIT_BLOCKS 64 /* input blocks per task, over all reduced axes */

static int make_round(zc_array *in, red_op op, zc_dtype in_dtype, uint64_t axes, int flags, int keepdims,
                      double ddof, zc_array **out)
{
    int nd = in->ndim, nred = 0;
    for (int d = 0; d < nd; d++) /* axes with one block need no split */
        nred += ((axes >> d) & 1) && ck_ceildiv(in->shape[d], in->chunks[d]) > 1;
    /* spread the split over the reduced axes: about SPLIT^(1/nred) each */
    int64_t per = REDUCE_SPLIT_BLOCKS;
    if (nred > 1) {
        per = 1;
        while (1) {
            int64_t p = 1;
            for (int k = 0; k < nred; k++) p *= per + 1;
            if (p > REDUCE_SPLIT_BLOCKS) break;
            per++;
        }
    }
    /* Round 1 is where the data is read: give it at least one task per core when
     * the output has fewer blocks than cores (a mean over time of one field is
     * one output block), by splitting the single reduced axis further. The
     * round's shape below follows from the split, whatever it is. */
    if ((flags & ROUND_FIRST) && nred == 1) {
        int64_t outer = 1, nb = 1;
        for (int d = 0; d < nd; d++) {
            int64_t g = ck_ceildiv(in->shape[d], in->chunks[d]);
            if (!((axes >> d) & 1)) outer *= g > 0 ? g : 1;
            else if (g > 1) nb = g;
        }
        int64_t cores = pool_ncpu();
        if (outer < cores) {
            int64_t want = ck_ceildiv(cores, outer);
            if (want > nb) want = nb;
            int64_t p = ck_ceildiv(nb, want);
            if (p < per) per = p;
        }
    }
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS], split[ZC_MAX_DIMS];
    bool last = true;
    for (int d = 0; d < nd; d++) {
        split[d] = 1;
        shape[d] = in->shape[d];
        chunks[d] = in->chunks[d];
        if (!((axes >> d) & 1)) continue;
        int64_t nb = ck_ceildiv(in->shape[d], in->chunks[d]);
        if (nb < 1) nb = 1;
        split[d] = nb > 1 ? per : 1;
        shape[d] = ck_ceildiv(nb, per);
        chunks[d] = 1;
        if (shape[d] > 1) last = false;
    }
    if (last) flags |= ROUND_LAST;
    zc_dtype dt = ZC_RAW;
    if (flags & ROUND_LAST) ZC_TRY(red_result_dtype(op, in_dtype, &dt));
    int ond = nd, out_dim[ZC_MAX_DIMS];
    int64_t oshape[ZC_MAX_DIMS], ochunks[ZC_MAX_DIMS];
    if ((flags & ROUND_LAST) && !keepdims) {
        ond = 0;
        for (int d = 0; d < nd; d++) {
            if ((axes >> d) & 1) continue;
            out_dim[ond] = d;
            oshape[ond] = shape[d];
            ochunks[ond++] = chunks[d];
        }
    } else {
        for (int d = 0; d < nd; d++) {
            out_dim[d] = d;
            oshape[d] = shape[d];
            ochunks[d] = chunks[d];
        }
    }
    ZC_TRY(node_new(NODE_REDUCE, ond, oshape, ochunks, dt, 1, &in, out));
    zc_array *r = *out;
    if (dt == ZC_RAW) r->itemsize = red_acc_size(op, in_dtype);
    r->p.reduce.op = op;
    r->p.reduce.in_dtype = in_dtype;
    r->p.reduce.axes = axes;
    r->p.reduce.flags = flags;
    r->p.reduce.ddof = ddof;
    for (int d = 0; d < nd; d++) r->p.reduce.split[d] = split[d];
    for (int d = 0; d < ond; d++) r->p.reduce.out_dim[d] = out_dim[d];
    return 0;
}

int zc_reduce(const char *name, zc_array *a, const int *axes, int naxes, int keepdims, double ddof, zc_array **out)
{
    zc__err_clear();
    if (!name || !a || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "zc_reduce: NULL argument");
    int op = red_op_from_name(name);
    if (op < 0) return zc__err(ZC_EINVAL, "unknown reduction '%s'", name);
    uint64_t mask = 0;
    if (naxes == 0) {
        for (int d = 0; d < a->ndim; d++) mask |= 1ull << d;
    }
    for (int i = 0; i < naxes; i++) {
        int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
        if (ax < 0 || ax >= a->ndim)
            return zc__err(ZC_EINVAL, "%s: axis %d is out of range for %d dimensions", name, axes[i], a->ndim);
        if ((mask >> ax) & 1) return zc__err(ZC_EINVAL, "%s: axis %d is repeated", name, axes[i]);
        mask |= 1ull << ax;
    }
    if ((op == RED_ARGMIN || op == RED_ARGMAX) && naxes > 1)
        return zc__err(ZC_EINVAL, "%s takes one axis or none", name);
    zc_dtype rd;
    ZC_TRY(red_result_dtype((red_op)op, a->dtype, &rd));
    zc_array *cur = a;
    zc_array_retain(cur);
    int flags = ROUND_FIRST;
    for (;;) {
        zc_array *next;
        int rc = make_round(cur, (red_op)op, a->dtype, mask, flags, keepdims, ddof, &next);
        zc_array_release(cur);
        if (rc < 0) return rc;
        if (next->p.reduce.flags & ROUND_LAST) {
            *out = next;
            return 0;
        }
        cur = next;
        flags = 0;
    }
}
