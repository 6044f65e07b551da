/* plan/take_along.c — the TAKE_ALONG node: take_along_axis (ops/take_along.c
 * builds it). out[o, k, i] = x[o, idx[o, k, i], i] along `axis`, with
 * input 0 x (the output's shape except along the axis, where it has n
 * elements) and input 1 idx (int64, the output's shape; negative indices
 * count from the end).
 *
 * A region of the result reads its indices, groups them by the chunk of x
 * along the axis they point into (a radix sort of (chunk, position) pairs),
 * and reads, for each chunk any of them needs, the region's lines of that
 * chunk of x once. So a task holds its indices, their pairs and one block of
 * x (the region's other dims × one chunk along the axis), whatever n is; what
 * it reads is every chunk its indices point into (all of a line's, for a
 * permutation such as argsort's). */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/sort.h"
#include "plan/kind.h"

/* Elements before (O) and after (I) the axis in region sel, and along it (K). */
static void dims_of(const zc_array *a, const zc_range *sel, int64_t *O, int64_t *K, int64_t *I)
{
    int ax = a->p.take_along.axis;
    *O = *I = 1;
    *K = range_count(&sel[ax]);
    for (int d = 0; d < a->ndim; d++) {
        if (d < ax) *O *= range_count(&sel[d]);
        if (d > ax) *I *= range_count(&sel[d]);
    }
}

static int64_t chunk_of(const zc_array *x, int ax) { return x->chunks[ax] > 0 ? x->chunks[ax] : 1; }

static int along_region(zc_array *a, const zc_range *sel, void *vout)
{
    zc_array *x = a->inputs[0], *ix = a->inputs[1];
    int ax = a->p.take_along.axis;
    int64_t n = x->shape[ax], C = chunk_of(x, ax), O, K, I;
    dims_of(a, sel, &O, &K, &I);
    int64_t total = O * K * I;
    if (total == 0) return 0;
    size_t isz = a->itemsize;
    unsigned char *out = vout;
    int64_t *idx = zc__malloc_array((size_t)total, sizeof *idx);
    sort_pair *p = zc__malloc_array(2 * (size_t)total, sizeof *p);
    unsigned char *xb = zc__malloc_array((size_t)(O * I * (C < n ? C : n)) + 1, isz);
    int rc = idx && p && xb ? node_region(ix, sel, idx) : ZC_ENOMEM;
    for (int64_t e = 0; rc == 0 && e < total; e++) {
        int64_t v = idx[e] < 0 ? idx[e] + n : idx[e];
        if (v < 0 || v >= n)
            rc = zc__err(ZC_EINVAL, "take_along_axis: index %lld is out of bounds for axis %d of size %lld",
                         (long long)idx[e], ax, (long long)n);
        idx[e] = v;
        p[e] = (sort_pair){(uint64_t)(v / C), (uint64_t)e};
    }
    sort_pair *s = rc == 0 ? sort_radix(p, p + total, (size_t)total) : p;
    if (rc == 0 && !s) rc = zc__err(ZC_EUNSUPPORTED, "take_along_axis: more than 2^32 indices in one task");
    zc_range xs[ZC_MAX_DIMS];
    memcpy(xs, sel, sizeof(zc_range) * (size_t)a->ndim);
    int64_t have = -1, len = 0;
    for (int64_t q = 0; rc == 0 && q < total; q++) {
        int64_t c = (int64_t)s[q].key, e = (int64_t)s[q].val;
        if (c != have) {
            int64_t end = (c + 1) * C < n ? (c + 1) * C : n;
            xs[ax] = (zc_range){c * C, end, 1};
            len = end - c * C;
            if ((rc = node_region(x, xs, xb)) < 0) break;
            have = c;
        }
        int64_t o = e / (K * I), i = e % I;
        memcpy(out + (size_t)e * isz, xb + (size_t)((o * len + idx[e] - c * C) * I + i) * isz, isz);
    }
    zc__free(idx);
    zc__free(p);
    zc__free(xb);
    return rc;
}

static size_t along_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x = a->inputs[0], *ix = a->inputs[1];
    int ax = a->p.take_along.axis;
    int64_t n = x->shape[ax], C = chunk_of(x, ax), O, K, I;
    dims_of(a, sel, &O, &K, &I);
    int64_t total = O * K * I, L = C < n ? C : n;
    zc_range xs[ZC_MAX_DIMS];
    memcpy(xs, sel, sizeof(zc_range) * (size_t)a->ndim);
    xs[ax] = (zc_range){0, L, 1};
    size_t ri = proj(ix, sel), rx = proj(x, xs);
    return (size_t)total * (sizeof(int64_t) + 2 * sizeof(sort_pair)) + (size_t)(O * I * L + 1) * a->itemsize +
           (ri > rx ? ri : rx);
}

static const char *along_name(const zc_array *a)
{
    (void)a;
    return "take_along_axis";
}

static int along_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "axis", json_integer(a->p.take_along.axis));
    return 0;
}

static int along_from_json(const json_t *o, zc_array *a, int i)
{
    const zc_array *x = a->inputs[0], *ix = a->inputs[1];
    const json_t *ax = json_object_get(o, "axis");
    bool ok = json_is_integer(ax) && json_integer_value(ax) >= 0 && json_integer_value(ax) < a->ndim &&
              x->ndim == a->ndim && ix->ndim == a->ndim && ix->dtype == ZC_INT64 && x->dtype == a->dtype &&
              x->itemsize == a->itemsize;
    for (int d = 0; ok && d < a->ndim; d++)
        ok = ix->shape[d] == a->shape[d] && (d == json_integer_value(ax) || x->shape[d] == a->shape[d]);
    if (!ok) return zc__err(ZC_EFORMAT, "plan: node %d: take_along_axis: parameters or inputs do not fit", i);
    a->p.take_along.axis = (int)json_integer_value(ax);
    return 0;
}

const node_kind_def kind_take_along = {
    .json = "take_along_axis", .flags = KIND_FUSED, .min_inputs = 2, .max_inputs = 2,
    .name = along_name, .region = along_region, .proj = along_proj, .to_json = along_to_json,
    .from_json = along_from_json,
};
