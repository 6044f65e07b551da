/* plan/slice.c — the SLICE kind (ops/index.c builds it): basic indexing, per
 * output dim an input dim with start and step, or a new axis; input dims
 * indexed by an integer are dropped (`fixed`). A region pulls the input region
 * it maps to; a negative step reads it ascending and reverses the output in
 * place (no flip is materialized, no extra memory). */
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "plan/kind.h"

/* The input region that output region sel of slice a reads (ascending steps);
 * bit d of *flipped: output dim d is that region reversed (a negative step). */
static void input_sel(const zc_array *a, const zc_range *sel, zc_range *isel, uint64_t *flipped)
{
    const zc_array *in = a->inputs[0];
    *flipped = 0;
    for (int i = 0; i < in->ndim; i++)
        if (a->p.slice.fixed[i] >= 0) isel[i] = (zc_range){a->p.slice.fixed[i], a->p.slice.fixed[i] + 1, 1};
    for (int d = 0; d < a->ndim; d++) {
        int i = a->p.slice.in_dim[d];
        if (i < 0) continue;
        int64_t cnt = range_count(&sel[d]);
        int64_t start = cnt ? a->p.slice.start[d] + sel[d].start * a->p.slice.step[d] : 0;
        /* one element or none: any step reads the same, and x[::2**63-1]'s would overflow below */
        int64_t step = cnt > 1 ? a->p.slice.step[d] * sel[d].step : 1;
        if (step > 0) {
            isel[i] = (zc_range){start, start + (cnt ? (cnt - 1) * step + 1 : 0), step};
        } else { /* read ascending from the last element, reversed in place after */
            isel[i] = (zc_range){start + (cnt - 1) * step, start + 1, -step};
            *flipped |= UINT64_C(1) << d;
        }
    }
}

/* Reverse a C-order region of counts cnt in place along the dims in mask. */
static void reverse_dims(unsigned char *p, int ndim, const int64_t *cnt, size_t isz, uint64_t mask)
{
    for (int d = 0; d < ndim; d++) {
        if (!(mask >> d & 1)) continue;
        int64_t outer = 1;
        size_t inner = isz;
        for (int e = 0; e < d; e++) outer *= cnt[e];
        for (int e = d + 1; e < ndim; e++) inner *= (size_t)cnt[e];
        size_t row = inner * (size_t)cnt[d];
        unsigned char tmp[256];
        for (int64_t o = 0; o < outer; o++) {
            unsigned char *r = p + (size_t)o * row;
            for (int64_t j = 0, k = cnt[d] - 1; j < k; j++, k--)
                for (size_t off = 0; off < inner; off += sizeof tmp) {
                    size_t n = inner - off < sizeof tmp ? inner - off : sizeof tmp;
                    memcpy(tmp, r + (size_t)j * inner + off, n);
                    memcpy(r + (size_t)j * inner + off, r + (size_t)k * inner + off, n);
                    memcpy(r + (size_t)k * inner + off, tmp, n);
                }
        }
    }
}

static const char *slice_name(const zc_array *a) { (void)a; return "getitem"; }

static int slice_region(zc_array *a, const zc_range *sel, void *out)
{
    zc_range isel[ZC_MAX_DIMS];
    uint64_t flipped;
    input_sel(a, sel, isel, &flipped);
    ZC_TRY(node_region(a->inputs[0], isel, out));
    if (flipped) {
        int64_t cnt[ZC_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) cnt[d] = range_count(&sel[d]);
        reverse_dims(out, a->ndim, cnt, a->itemsize, flipped);
    }
    return 0;
}

static size_t slice_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    zc_range isel[ZC_MAX_DIMS];
    uint64_t flipped;
    input_sel(a, sel, isel, &flipped); /* a flip is done in place in the output */
    return proj(a->inputs[0], isel);
}

static int slice_to_json(const zc_array *a, json_t *o)
{
    kind_view_to_json(o, a->p.slice.in_dim, a->p.slice.start, a->p.slice.step, a->p.slice.fixed, a->ndim,
                      a->inputs[0]->ndim);
    return 0;
}

/* The parameters, and every element the slice reads lies inside its input. */
static int slice_from_json(const json_t *o, zc_array *a, int i)
{
    const zc_array *in = a->inputs[0];
    int64_t v[ZC_MAX_DIMS];
    ZC_TRY(kind_get_ints(o, "in_dim", v, a->ndim, i));
    ZC_TRY(kind_get_ints(o, "start", a->p.slice.start, a->ndim, i));
    ZC_TRY(kind_get_ints(o, "step", a->p.slice.step, a->ndim, i));
    ZC_TRY(kind_get_ints(o, "fixed", a->p.slice.fixed, in->ndim, i));
    for (int d = 0; d < a->ndim; d++) a->p.slice.in_dim[d] = v[d] < -1 || v[d] >= ZC_MAX_DIMS ? -2 : (int)v[d];
    bool used[ZC_MAX_DIMS] = {0};
    for (int d = 0; d < a->ndim; d++) {
        int k = a->p.slice.in_dim[d];
        if (k == -1) {
            if (a->shape[d] != 1) return zc__err(ZC_EFORMAT, "plan: node %d: new axis %d has size %lld", i, d, (long long)a->shape[d]);
            continue;
        }
        if (k < 0 || k >= in->ndim || used[k])
            return zc__err(ZC_EFORMAT, "plan: node %d: slice dimension %d maps to input dimension %d", i, d, k);
        used[k] = true;
        int64_t st = a->p.slice.start[d], step = a->p.slice.step[d], last;
        if (a->shape[d] == 0) continue;
        if (step == 0 || st < 0 || st >= in->shape[k] || ck_mul_i64(a->shape[d] - 1, step, &last) ||
            ck_add_i64(st, last, &last) || last < 0 || last >= in->shape[k])
            return zc__err(ZC_EFORMAT, "plan: node %d: slice dimension %d (start %lld, step %lld, size %lld) is outside input dimension %d of size %lld",
                           i, d, (long long)st, (long long)step, (long long)a->shape[d], k, (long long)in->shape[k]);
    }
    for (int k = 0; k < in->ndim; k++) {
        int64_t f = a->p.slice.fixed[k];
        if (used[k] ? f != -1 : (f < 0 || f >= in->shape[k]))
            return zc__err(ZC_EFORMAT, "plan: node %d: fixed index %lld for input dimension %d of size %lld", i, (long long)f, k, (long long)in->shape[k]);
    }
    return 0;
}

const node_kind_def kind_slice = {
    .json = "slice", .flags = KIND_FUSED | KIND_PROJ_EXACT, .min_inputs = 1, .max_inputs = 1,
    .name = slice_name, .region = slice_region, .proj = slice_proj, .to_json = slice_to_json,
    .from_json = slice_from_json,
};
