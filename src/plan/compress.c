/* plan/compress.c — the COMPRESS kind (ops/select.c builds it): the rows of x
 * (input 0, shape (N, ...)) where a bool vector (input 1, shape (N,)) is
 * true, in order. x[mask] and nonzero are built on it.
 *
 * Its length is data-dependent. It is fixed when the node is built, by pass 1
 * (ops/select.c): the number of true values in each segment of `seg` rows,
 * computed under the memory bound as a small intermediate, kept here as their
 * prefix sums (owned, like take's list, and saved in plans):
 *
 *   rows of x     | seg 0        | seg 1        | seg 2   |
 *   mask          | 0 1 1 0 0 1  | 0 0 0 0 0 0  | 1 0 1   |
 *   prefix        0              3              3         5
 *   output rows   | 0 1 2        |              | 3 4     |
 *
 * Pass 2 (this file) is the region function: output rows [r0, r1) lie in the
 * segments s with prefix[s] <= r1 - 1 and prefix[s + 1] > r0 (a binary
 * search); for each, it reads the segment's mask, then the rows of x from the
 * first to the last it needs, and copies the selected ones. Segments without a
 * selected row in the region are not read. */
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/kind.h"

/* Bytes of one output row of region sel (its dims after the first). */
static size_t row_bytes(const zc_array *a, const zc_range *sel)
{
    size_t b = a->itemsize;
    for (int d = 1; d < a->ndim; d++) b *= (size_t)range_count(&sel[d]);
    return b;
}

/* The last segment s with prefix[s] <= r (prefix is non-decreasing, prefix[0] = 0). */
static int64_t segment_of(const int64_t *prefix, int64_t nseg, int64_t r)
{
    int64_t lo = 0, hi = nseg - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (prefix[mid] <= r) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static int compress_region(zc_array *a, const zc_range *sel, void *out)
{
    zc_array *x = a->inputs[0], *m = a->inputs[1];
    const typeof(a->p.compress) *c = &a->p.compress;
    int64_t n0 = range_count(&sel[0]), r0 = sel[0].start, step = sel[0].step;
    size_t row = row_bytes(a, sel);
    if (n0 == 0 || row == 0) return 0;
    if (!c->prefix) return zc__err(ZC_EUNSUPPORTED, "the size of a boolean selection is not known yet (its count pass did not run)");
    int64_t rl = r0 + (n0 - 1) * step; /* last output row of the region */
    bool *mb = zc__malloc((size_t)c->seg);
    unsigned char *xb = zc__malloc_array((size_t)c->seg, row);
    int rc = mb && xb ? 0 : ZC_ENOMEM;
    zc_range xs[ZC_MAX_DIMS];
    for (int d = 1; d < a->ndim; d++) xs[d] = sel[d];
    for (int64_t s = segment_of(c->prefix, c->nseg, r0); rc == 0 && s < c->nseg && c->prefix[s] <= rl; s++) {
        /* the first and last output rows of the region that segment s holds */
        int64_t lo = c->prefix[s] > r0 ? c->prefix[s] : r0, hi = c->prefix[s + 1] - 1 < rl ? c->prefix[s + 1] - 1 : rl;
        lo = r0 + ck_ceildiv(lo - r0, step) * step;
        if (lo > hi) continue;
        int64_t b0 = s * c->seg, b1 = b0 + c->seg < m->shape[0] ? b0 + c->seg : m->shape[0];
        if ((rc = node_region(m, &(zc_range){b0, b1, 1}, mb)) < 0) break;
        int64_t rank = c->prefix[s], plo = -1, phi = -1;
        for (int64_t p = 0; p < b1 - b0 && phi < 0; p++) {
            if (!mb[p]) continue;
            if (rank == lo) plo = p;
            if (rank == hi) phi = p;
            rank++;
        }
        if (plo < 0 || phi < 0) {
            rc = zc__err(ZC_ECORRUPT, "a boolean mask changed between its count and its selection (rows %lld..%lld)",
                         (long long)b0, (long long)b1);
            break;
        }
        xs[0] = (zc_range){b0 + plo, b0 + phi + 1, 1};
        if ((rc = node_region(x, xs, xb)) < 0) break;
        rank = lo;
        for (int64_t p = plo; p <= phi; p++) {
            if (!mb[p]) continue;
            if ((rank - r0) % step == 0)
                memcpy((unsigned char *)out + (size_t)((rank - r0) / step) * row, xb + (size_t)(p - plo) * row, row);
            rank++;
        }
    }
    zc__free(mb);
    zc__free(xb);
    return rc;
}

static size_t compress_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x = a->inputs[0], *m = a->inputs[1];
    int64_t seg = a->p.compress.seg;
    if (range_count(&sel[0]) == 0) return 0;
    zc_range xs[ZC_MAX_DIMS];
    xs[0] = (zc_range){0, seg < x->shape[0] ? seg : x->shape[0], 1};
    for (int d = 1; d < a->ndim; d++) xs[d] = sel[d];
    size_t mb = (size_t)seg, xb = (size_t)seg * row_bytes(a, sel);
    size_t pm = proj(m, &(zc_range){0, seg < m->shape[0] ? seg : m->shape[0], 1}), px = proj(x, xs);
    return mb + xb + (pm > px ? pm : px); /* the mask's and x's reads are not at once */
}

static const char *compress_name(const zc_array *a)
{
    (void)a;
    return "mask_select";
}

static void compress_release(zc_array *a)
{
    if (a->origin) return; /* the origin's */
    zc__free(a->p.compress.prefix);
    a->p.compress.prefix = NULL;
}

static int compress_to_json(const zc_array *a, json_t *o)
{
    if (!a->p.compress.prefix)
        return zc__err(ZC_EUNSUPPORTED, "a boolean selection whose size is not known yet cannot be saved in a plan");
    json_object_set_new(o, "seg", json_integer(a->p.compress.seg));
    json_t *p = json_array();
    for (int64_t s = 0; s <= a->p.compress.nseg; s++) json_array_append_new(p, json_integer(a->p.compress.prefix[s]));
    json_object_set_new(o, "prefix", p);
    return 0;
}

#define BAD(what) zc__err(ZC_EFORMAT, "plan: node %d (compress): bad %s", i, what)

static int compress_from_json(const json_t *o, zc_array *a, int i)
{
    const zc_array *x = a->inputs[0], *m = a->inputs[1];
    if (x->dtype != a->dtype || x->itemsize != a->itemsize || x->ndim != a->ndim || a->ndim < 1) return BAD("input (not like the output)");
    if (m->dtype != ZC_BOOL || m->ndim != 1 || m->shape[0] != x->shape[0]) return BAD("mask (not a bool vector as long as the input)");
    for (int d = 1; d < a->ndim; d++)
        if (x->shape[d] != a->shape[d]) return BAD("shape (after the first dimension)");
    const json_t *seg = json_object_get(o, "seg"), *p = json_object_get(o, "prefix");
    if (!json_is_integer(seg) || json_integer_value(seg) < 1) return BAD("seg");
    int64_t sg = json_integer_value(seg), nseg = ck_ceildiv(x->shape[0], sg);
    if (nseg < 1) nseg = 1;
    if (!json_is_array(p) || (int64_t)json_array_size(p) != nseg + 1) return BAD("prefix (length)");
    int64_t *pre = zc__malloc_array((size_t)nseg + 1, sizeof *pre);
    if (!pre) return ZC_ENOMEM;
    a->p.compress.prefix = pre; /* freed with the node */
    a->p.compress.seg = sg;
    a->p.compress.nseg = nseg;
    for (int64_t s = 0; s <= nseg; s++) {
        const json_t *e = json_array_get(p, (size_t)s);
        int64_t rows = s ? (s * sg < x->shape[0] ? sg : x->shape[0] - (s - 1) * sg) : 0;
        if (!json_is_integer(e) || (pre[s] = json_integer_value(e)) < (s ? pre[s - 1] : 0) ||
            (s && pre[s] - pre[s - 1] > rows) || (!s && pre[s] != 0))
            return BAD("prefix (not counts of each segment)");
    }
    if (pre[nseg] != a->shape[0]) return BAD("prefix (its total is not the length)");
    return 0;
}

const node_kind_def kind_compress = {
    .json = "compress", .flags = KIND_FUSED, .min_inputs = 2, .max_inputs = 2,
    .name = compress_name, .region = compress_region, .proj = compress_proj, .to_json = compress_to_json,
    .from_json = compress_from_json, .release = compress_release,
};
