/* plan/reduce.c — the REDUCE kind (see reduce.h): a round's blocks, their
 * memory, saving and checking a round. */
#include "plan/reduce.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/kind.h"

bool reduce_range(const zc_array *a, int64_t b, int64_t *lo, int64_t *hi, size_t *nacc)
{
    const zc_array *in = a->inputs[0];
    const typeof(a->p.reduce) *r = &a->p.reduce;
    int64_t oc[ZC_MAX_DIMS], gc[ZC_MAX_DIMS] = {0};
    node_block_coords(a, b, oc);
    for (int j = 0; j < a->ndim; j++) gc[r->out_dim[j]] = oc[j];
    bool empty = false;
    *nacc = 1;
    for (int d = 0; d < in->ndim; d++) {
        int64_t nb = ck_ceildiv(in->shape[d], in->chunks[d]);
        if ((r->axes >> d) & 1) {
            lo[d] = gc[d] * r->split[d];
            hi[d] = lo[d] + r->split[d] < nb ? lo[d] + r->split[d] : nb;
        } else {
            lo[d] = gc[d];
            hi[d] = gc[d] + 1;
            int64_t s = gc[d] * in->chunks[d], e = s + in->chunks[d];
            *nacc *= (size_t)((e < in->shape[d] ? e : in->shape[d]) - s);
        }
        empty |= hi[d] <= lo[d];
    }
    return !empty;
}

void reduce_input_block(const zc_array *in, const int64_t *ic, zc_range *sel, int64_t *cnt, int64_t *base)
{
    node_block_region(in, ic, sel);
    for (int d = 0; d < in->ndim; d++) {
        cnt[d] = sel[d].stop - sel[d].start;
        base[d] = sel[d].start;
    }
}

bool reduce_next_block(int nd, const int64_t *lo, const int64_t *hi, int64_t *ic)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++ic[d] < hi[d]) return true;
        ic[d] = lo[d];
    }
    return false;
}

static const char *reduce_name(const zc_array *a) { return red_op_name(a->p.reduce.op); }

static const char *reduce_note(const zc_array *a)
{
    int f = a->p.reduce.flags;
    return f & ROUND_FIRST ? (f & ROUND_LAST ? "" : " (round 1)") : (f & ROUND_LAST ? " (last round)" : " (round)");
}

/* One task: accumulate (or merge) the group of input blocks of output block b. */
static int reduce_block(zc_array *a, int64_t b, void *out)
{
    zc_array *in = a->inputs[0];
    const typeof(a->p.reduce) *r = &a->p.reduce;
    int nd = in->ndim;
    size_t nacc;
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    bool empty = !reduce_range(a, b, lo, hi, &nacc);
    memcpy(ic, lo, (size_t)nd * sizeof *ic);
    size_t asz = red_acc_size(r->op, r->in_dtype);
    unsigned char *acc = (r->flags & ROUND_LAST) ? zc__malloc_array(nacc ? nacc : 1, asz) : out;
    if (!acc) return ZC_ENOMEM;
    red_init(r->op, r->in_dtype, acc, nacc);
    int rc = 0;
    while (!empty) {
        zc_range sel[ZC_MAX_DIMS];
        int64_t cnt[ZC_MAX_DIMS], base[ZC_MAX_DIMS];
        reduce_input_block(in, ic, sel, cnt, base);
        size_t nbytes = node_region_bytes(in, sel);
        void *blk = zc__malloc(nbytes ? nbytes : 1);
        if (!blk) { rc = ZC_ENOMEM; break; }
        rc = node_region(in, sel, blk);
        if (rc == 0) {
            if (r->flags & ROUND_FIRST)
                red_accum(r->op, r->in_dtype, acc, nd, cnt, r->axes, blk, base, in->shape);
            else
                red_merge(r->op, r->in_dtype, acc, blk, nacc);
        }
        zc__free(blk);
        if (rc < 0 || !reduce_next_block(nd, lo, hi, ic)) break;
    }
    if (rc == 0 && (r->flags & ROUND_LAST)) red_finalize(r->op, r->in_dtype, acc, nacc, out, r->ddof);
    if (acc != out) zc__free(acc);
    return rc;
}

/* A task: accumulators (apart from the output block only in the last round,
 * finalized from them) and one input block at a time with its projection. */
static size_t reduce_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    (void)sel;
    const zc_array *in = a->inputs[0];
    size_t nacc = 1;
    for (int d = 0; d < in->ndim; d++)
        if (!((a->p.reduce.axes >> d) & 1)) nacc *= (size_t)in->chunks[d];
    size_t acc = a->p.reduce.flags & ROUND_LAST ? nacc * red_acc_size(a->p.reduce.op, a->p.reduce.in_dtype) : 0;
    int64_t ic[ZC_MAX_DIMS] = {0};
    zc_range isel[ZC_MAX_DIMS];
    node_block_region(in, ic, isel);
    return acc + node_chunk_bytes(in) + proj(in, isel);
}

static int reduce_to_json(const zc_array *a, json_t *o)
{
    int64_t od[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) od[d] = a->p.reduce.out_dim[d];
    json_object_set_new(o, "op", json_integer(a->p.reduce.op));
    json_object_set_new(o, "in_dtype", json_string(zc_dtype_name(a->p.reduce.in_dtype)));
    json_object_set_new(o, "axes", json_integer((json_int_t)a->p.reduce.axes));
    json_object_set_new(o, "flags", json_integer(a->p.reduce.flags));
    json_object_set_new(o, "split", kind_int_array(a->p.reduce.split, a->inputs[0]->ndim));
    json_object_set_new(o, "ddof", json_real(a->p.reduce.ddof));
    json_object_set_new(o, "out_dim", kind_int_array(od, a->ndim));
    return 0;
}

/* A round has the shape, dtype and dimensions ops/reduce.c gives it. */
static int check_round(zc_array *a, int i)
{
    const zc_array *in = a->inputs[0];
    int nd = in->ndim, flags = a->p.reduce.flags;
    red_op op = a->p.reduce.op;
    uint64_t axes = a->p.reduce.axes;
    zc_dtype rd;
    if ((int)op < 0 || op >= RED_END_ || flags < 1 || flags > 3 || (nd < 64 && (axes >> nd)) || !isfinite(a->p.reduce.ddof) ||
        red_result_dtype(op, a->p.reduce.in_dtype, &rd) < 0)
        return zc__err(ZC_EFORMAT, "plan: node %d: bad reduction parameters", i);
    if ((flags & ROUND_FIRST) ? in->dtype != a->p.reduce.in_dtype
                              : in->kind != NODE_REDUCE || in->dtype != ZC_RAW || in->p.reduce.op != op ||
                                    in->p.reduce.in_dtype != a->p.reduce.in_dtype || in->p.reduce.axes != axes)
        return zc__err(ZC_EFORMAT, "plan: node %d: reduction round does not follow its input", i);
    int64_t shape[ZC_MAX_DIMS];
    bool last = true;
    for (int d = 0; d < nd; d++) {
        int64_t sp = a->p.reduce.split[d];
        shape[d] = in->shape[d];
        if (!((axes >> d) & 1)) {
            if (sp != 1) return zc__err(ZC_EFORMAT, "plan: node %d: split %lld on a kept dimension", i, (long long)sp);
            continue;
        }
        int64_t nb = in->chunks[d] > 0 ? ck_ceildiv(in->shape[d], in->chunks[d]) : 0;
        if (nb < 1) nb = 1;
        if (sp < 1) return zc__err(ZC_EFORMAT, "plan: node %d: split %lld", i, (long long)sp);
        shape[d] = ck_ceildiv(nb, sp);
        if (shape[d] > 1) last = false;
    }
    if (last != ((flags & ROUND_LAST) != 0))
        return zc__err(ZC_EFORMAT, "plan: node %d: reduction round flags %d disagree with its shape", i, flags);
    bool drop = last && a->ndim != nd;
    int ond = 0;
    for (int d = 0; d < nd; d++) {
        if (drop && ((axes >> d) & 1)) continue;
        if (ond >= a->ndim || a->p.reduce.out_dim[ond] != d || a->shape[ond] != shape[d] ||
            (!((axes >> d) & 1) && a->chunks[ond] != in->chunks[d]))
            return zc__err(ZC_EFORMAT, "plan: node %d: reduction output dimension %d disagrees with its input", i, ond);
        ond++;
    }
    if (ond != a->ndim) return zc__err(ZC_EFORMAT, "plan: node %d: reduction has %d dimensions, expected %d", i, a->ndim, ond);
    if (last ? a->dtype != rd : a->dtype != ZC_RAW || a->itemsize != red_acc_size(op, a->p.reduce.in_dtype))
        return zc__err(ZC_EFORMAT, "plan: node %d: reduction dtype %s disagrees with its operation", i, zc_dtype_name(a->dtype));
    return 0;
}

static int reduce_from_json(const json_t *o, zc_array *a, int i)
{
    int64_t v[ZC_MAX_DIMS];
    json_int_t op = json_integer_value(json_object_get(o, "op")), fl = json_integer_value(json_object_get(o, "flags"));
    a->p.reduce.op = op < 0 || op >= RED_END_ ? RED_END_ : (red_op)op;
    a->p.reduce.in_dtype = kind_dtype_of(json_object_get(o, "in_dtype"));
    a->p.reduce.axes = (uint64_t)json_integer_value(json_object_get(o, "axes"));
    a->p.reduce.flags = fl < 0 || fl > 3 ? 0 : (int)fl;
    a->p.reduce.ddof = json_number_value(json_object_get(o, "ddof"));
    ZC_TRY(kind_get_ints(o, "split", a->p.reduce.split, a->inputs[0]->ndim, i));
    ZC_TRY(kind_get_ints(o, "out_dim", v, a->ndim, i));
    for (int d = 0; d < a->ndim; d++) a->p.reduce.out_dim[d] = v[d] < 0 || v[d] >= ZC_MAX_DIMS ? -1 : (int)v[d];
    return check_round(a, i);
}

const node_kind_def kind_reduce = {
    .json = "reduce", .flags = KIND_STORED | KIND_STAGE_ONLY, .min_inputs = 1, .max_inputs = 1,
    .name = reduce_name, .stage_note = reduce_note, .block = reduce_block, .proj = reduce_proj,
    .to_json = reduce_to_json, .from_json = reduce_from_json,
};
