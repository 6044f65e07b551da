/* plan/array.c — lazy array nodes: lifetime, block geometry, and computing
 * any region of a node's values through its kind (see array.h, kind.h). */
#include "plan/array.h"

#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/kind.h"
#include "zarr/read.h"

int node_new(node_kind kind, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, int ninputs,
             zc_array *const *inputs, zc_array **out)
{
    if (ndim < 0 || ndim > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "arrays have 0..%d dimensions (got %d)", ZC_MAX_DIMS, ndim);
    /* ZC_RAW (accumulator records), ZC_BYTES and ZC_UNICODE (copied, never
     * computed on: the kernels refuse them): the caller sets itemsize */
    size_t isz = 1;
    bool sized = dtype == ZC_RAW || dtype == ZC_BYTES || dtype == ZC_UNICODE;
    if (!sized && zc_dtype_parse(zc_dtype_name(dtype), &dtype, &isz) < 0)
        return zc__err(ZC_EUNSUPPORTED, "dtype %s is not supported in computations", zc_dtype_name(dtype));
    int64_t elems = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return zc__err(ZC_EINVAL, "dimension %d has negative size %lld", d, (long long)shape[d]);
        if (ck_mul_i64(elems, shape[d], &elems)) return zc__err(ZC_EOVERFLOW, "array size overflows");
    }
    zc_array *a = zc__calloc(1, sizeof *a);
    if (!a) return ZC_ENOMEM;
    atomic_init(&a->refs, 1);
    a->kind = kind;
    a->stage = -1;
    a->ndim = ndim;
    a->dtype = dtype;
    a->itemsize = isz;
    for (int d = 0; d < ndim; d++) {
        a->shape[d] = shape[d];
        a->chunks[d] = chunks && chunks[d] > 0 ? chunks[d] : (shape[d] > 0 ? shape[d] : 1);
        if (a->chunks[d] > shape[d] && shape[d] > 0) a->chunks[d] = shape[d];
    }
    if (!chunks) node_auto_chunks(ndim, shape, isz, (size_t)16 << 20, a->chunks);
    a->ninputs = ninputs;
    for (int i = 0; i < ninputs; i++) {
        a->inputs[i] = inputs[i];
        zc_array_retain(inputs[i]);
    }
    *out = a;
    return 0;
}

int node_clone(zc_array *a, zc_array *const *inputs, zc_array **out)
{
    zc_array *c = zc__malloc(sizeof *c);
    if (!c) return ZC_ENOMEM;
    memcpy(c, a, sizeof *c);
    atomic_init(&c->refs, 1);
    c->origin = a->origin ? a->origin : a;
    zc_array_retain(c->origin);
    for (int i = 0; i < a->ninputs; i++) {
        c->inputs[i] = inputs[i];
        zc_array_retain(inputs[i]);
    }
    if (kind_of(a)->clone) kind_of(a)->clone(c);
    c->mat = NULL;
    c->stage = -1;
    c->write_copies = 0;
    c->write_kept = false;
    c->write_in_block = false;
    c->stored_plain = false;
    c->cache = NULL;
    *out = c;
    return 0;
}

void zc_array_retain(zc_array *a)
{
    if (a) atomic_fetch_add(&a->refs, 1);
}

void zc_array_release(zc_array *a)
{
    while (a && atomic_fetch_sub(&a->refs, 1) == 1) {
        /* free iteratively along the first input to keep deep chains off the stack */
        zc_array *next = a->ninputs ? a->inputs[0] : NULL;
        for (int i = 1; i < a->ninputs; i++) zc_array_release(a->inputs[i]);
        if (kind_of(a)->release) kind_of(a)->release(a); /* with an origin: only per-plan state */
        if (a->origin) zc_array_release(a->origin);
        zc__free(a);
        a = next;
    }
}

int zc_array_info(const zc_array *a, int *ndim, int64_t *shape, int64_t *chunks, zc_dtype *dtype)
{
    if (!a) return zc__err(ZC_EINVAL, "zc_array_info: NULL array");
    if (ndim) *ndim = a->ndim;
    for (int d = 0; d < a->ndim; d++) {
        if (shape) shape[d] = a->shape[d];
        if (chunks) chunks[d] = a->chunks[d];
    }
    if (dtype) *dtype = a->dtype;
    return 0;
}

void node_auto_chunks(int ndim, const int64_t *shape, size_t itemsize, size_t target, int64_t *chunks)
{
    /* keep trailing dims whole while they fit, then cut the next one */
    size_t bytes = itemsize;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = shape[d] > 0 ? shape[d] : 1;
        if (bytes * (size_t)n <= target) {
            chunks[d] = n;
            bytes *= (size_t)n;
        } else {
            int64_t c = (int64_t)(target / bytes);
            chunks[d] = c < 1 ? 1 : c;
            bytes *= (size_t)chunks[d];
            for (int e = d - 1; e >= 0; e--) chunks[e] = 1;
            return;
        }
    }
}

int64_t node_nblocks(const zc_array *a)
{
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++) n *= ck_ceildiv(a->shape[d], a->chunks[d]);
    return n;
}

void node_block_coords(const zc_array *a, int64_t b, int64_t *c)
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t g = ck_ceildiv(a->shape[d], a->chunks[d]);
        c[d] = g ? b % g : 0;
        b = g ? b / g : 0;
    }
}

void node_block_region(const zc_array *a, const int64_t *c, zc_range *sel)
{
    for (int d = 0; d < a->ndim; d++) {
        int64_t s = c[d] * a->chunks[d], e = s + a->chunks[d];
        sel[d] = (zc_range){s, e < a->shape[d] ? e : a->shape[d], 1};
    }
}

size_t node_region_bytes(const zc_array *a, const zc_range *sel)
{
    size_t n = a->itemsize;
    for (int d = 0; d < a->ndim; d++) {
        int64_t c = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        n *= (size_t)c;
    }
    return n;
}

size_t node_chunk_bytes(const zc_array *a)
{
    size_t n = a->itemsize;
    for (int d = 0; d < a->ndim; d++) n *= (size_t)a->chunks[d];
    return n;
}

void node_leaf_sel(const zc_array *root, const zc_array *l, const zc_range *sel, zc_range *lsel, int64_t *lstride)
{
    int off = root->ndim - l->ndim;
    int64_t s = 1;
    for (int j = l->ndim - 1; j >= 0; j--) {
        int d = j + off;
        bool bcast = l->shape[j] == 1 && root->shape[d] != 1;
        lsel[j] = bcast ? (zc_range){0, 1, 1} : sel[d];
        if (!lstride) continue;
        lstride[d] = bcast ? 0 : s;
        s *= bcast ? 1 : range_count(&sel[d]);
    }
    for (int d = 0; lstride && d < off; d++) lstride[d] = 0;
}

int node_compute_region(zc_array *a, const zc_range *sel, void *out)
{
    const node_kind_def *k = kind_of(a);
    if (k->region) return k->region(a, sel, out);
    return zc__err(ZC_EINTERNAL, "the values of a %s node were asked for before its stage computed them", k->name(a));
}
int node_region(zc_array *a, const zc_range *sel, void *out)
{
    if (a->mat) return zarr_read_flags(a->mat, sel, out, node_region_bytes(a, sel), ZARR_READ_DROP);
    return node_compute_region(a, sel, out);
}
