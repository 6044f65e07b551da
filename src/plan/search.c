/* plan/search.c — the SEARCH node (searchsorted; ops/sort.c builds it).
 *
 * Inputs: x1 (1-D, sorted as kernels/sort.h orders values: NaNs last), x2
 * (the values looked up, any shape, x1's dtype) and F = x1[::step], x1's
 * first value of every block of `step` elements, materialized (a small
 * array). A region of the result (int64, x2's shape) reads its values of x2
 * and the whole of F: the fences before a value give the block of x1 it falls
 * in; the region's values are grouped by block, and each block of x1 that any
 * of them needs is read once and binary-searched. So a task holds F, one
 * block of x1 and its own values, whatever the length of x1. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/sort.h"
#include "plan/kind.h"

/* Elements of keys[0..n) before key k: < k (left), <= k (right). */
static int64_t before(const uint64_t *keys, int64_t n, uint64_t k, bool right)
{
    int64_t l = 0, h = n;
    while (l < h) {
        int64_t m = l + (h - l) / 2;
        if (keys[m] < k || (right && keys[m] == k)) l = m + 1;
        else h = m;
    }
    return l;
}

static int search_region(zc_array *a, const zc_range *sel, void *vout)
{
    zc_array *x1 = a->inputs[0], *x2 = a->inputs[1], *f = a->inputs[2];
    int64_t K = 1, n = x1->shape[0], nf = f->shape[0], step = a->p.search.step, *out = vout;
    for (int d = 0; d < a->ndim; d++) K *= range_count(&sel[d]);
    if (K == 0) return 0;
    bool right = a->p.search.right;
    zc_dtype t = x1->dtype;
    size_t vsz = x1->itemsize;
    zc_range fsel = {0, nf, 1};
    unsigned char *v = zc__malloc((size_t)K * vsz), *fv = zc__malloc((size_t)nf * vsz + 1);
    unsigned char *cv = zc__malloc((size_t)step * vsz);
    uint64_t *fk = zc__malloc(sizeof(uint64_t) * (size_t)nf + 1), *ck = zc__malloc(sizeof(uint64_t) * (size_t)step);
    sort_pair *p = zc__malloc(2 * sizeof(sort_pair) * (size_t)K);
    int rc = !v || !fv || !cv || !fk || !ck || !p ? ZC_ENOMEM : 0;
    if (rc == 0 && (rc = node_region(x2, sel, v)) == 0 && (rc = node_region(f, &fsel, fv)) == 0) {
        for (int64_t j = 0; j < nf; j++) fk[j] = sort_key(t, false, fv + (size_t)j * vsz);
        /* per value: the block of x1 to search (the last whose fence is before it), or none */
        for (int64_t i = 0; i < K; i++) {
            uint64_t k = sort_key(t, false, v + (size_t)i * vsz);
            int64_t j = before(fk, nf, k, right);
            p[i] = (sort_pair){(uint64_t)j, (uint64_t)i}; /* j = 0: before every element */
            out[i] = 0;
        }
        sort_pair *s = sort_radix(p, p + K, (size_t)K);
        int64_t have = -1, len = 0;
        for (int64_t q = 0; s && q < K && rc == 0; q++) {
            int64_t j = (int64_t)s[q].key, i = (int64_t)s[q].val;
            if (j == 0) continue;
            int64_t c = j - 1;
            if (c != have) {
                int64_t e = (c + 1) * step < n ? (c + 1) * step : n;
                zc_range r = {c * step, e, 1};
                len = e - c * step;
                if ((rc = node_region(x1, &r, cv)) < 0) break;
                for (int64_t m = 0; m < len; m++) ck[m] = sort_key(t, false, cv + (size_t)m * vsz);
                have = c;
            }
            out[i] = c * step + before(ck, len, sort_key(t, false, v + (size_t)i * vsz), right);
        }
        if (!s) rc = zc__err(ZC_EUNSUPPORTED, "searchsorted: more than 2^32 values in one block");
    }
    zc__free(v);
    zc__free(fv);
    zc__free(cv);
    zc__free(fk);
    zc__free(ck);
    zc__free(p);
    return rc;
}

static size_t search_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x1 = a->inputs[0], *x2 = a->inputs[1], *f = a->inputs[2];
    int64_t K = 1, nf = f->shape[0], step = a->p.search.step;
    for (int d = 0; d < a->ndim; d++) K *= range_count(&sel[d]);
    zc_range fsel = {0, nf, 1}, csel = {0, step < x1->shape[0] ? step : x1->shape[0], 1};
    size_t vsz = x1->itemsize, r2 = proj(x2, sel), rf = proj(f, &fsel), r1 = proj(x1, &csel);
    size_t reads = r2 > rf ? r2 : rf;
    if (r1 > reads) reads = r1;
    return (size_t)K * (vsz + 2 * sizeof(sort_pair)) + (size_t)nf * (vsz + 8) + 2 + (size_t)step * (vsz + 8) + reads;
}

static const char *search_name(const zc_array *a)
{
    (void)a;
    return "searchsorted";
}

static int search_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "searchsorted", json_pack("{s:b, s:I}", "right", a->p.search.right, "step",
                                                     (json_int_t)a->p.search.step));
    return 0;
}

static int search_from_json(const json_t *o, zc_array *a, int i)
{
    int right = 0;
    json_int_t step = 0;
    if (json_unpack(json_object_get(o, "searchsorted"), "{s:b, s:I}", "right", &right, "step", &step) < 0)
        return zc__err(ZC_EFORMAT, "plan: node %d: searchsorted: missing or malformed parameters", i);
    const zc_array *x1 = a->inputs[0], *x2 = a->inputs[1], *f = a->inputs[2];
    bool ok = a->ninputs == 3 && x1->ndim == 1 && f->ndim == 1 && step >= 1 && x1->dtype == x2->dtype &&
              f->dtype == x1->dtype && sort_dtype_ok(x1->dtype) && a->dtype == ZC_INT64 && a->ndim == x2->ndim &&
              f->shape[0] == (x1->shape[0] + step - 1) / step;
    for (int d = 0; ok && d < a->ndim; d++) ok = a->shape[d] == x2->shape[d];
    if (!ok) return zc__err(ZC_EFORMAT, "plan: node %d: searchsorted: parameters or inputs do not fit", i);
    a->p.search.right = right;
    a->p.search.step = step;
    return 0;
}

const node_kind_def kind_search = {
    .json = "searchsorted", .flags = KIND_FUSED, .min_inputs = 3, .max_inputs = 3,
    .name = search_name, .region = search_region, .proj = search_proj, .to_json = search_to_json,
    .from_json = search_from_json,
};
