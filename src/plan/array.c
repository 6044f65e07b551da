/* plan/array.c — lazy array nodes: lifetime, block geometry, and computing
 * any region of a node's values (see array.h). */
#include "plan/array.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/hash.h"
#include "plan/matmul.h"
#include "plan/decomp.h"
#include "plan/fft.h"
#include "plan/manip.h"
#include "zarr/copy.h"
#include "zarr/read.h"

int node_new(node_kind kind, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, int ninputs,
             zc_array *const *inputs, zc_array **out)
{
    if (ndim < 0 || ndim > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "arrays have 0..%d dimensions (got %d)", ZC_MAX_DIMS, ndim);
    size_t isz = 1; /* ZC_RAW (accumulator records): the caller sets itemsize */
    if (dtype != ZC_RAW && zc_dtype_parse(zc_dtype_name(dtype), &dtype, &isz) < 0)
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
    if (a->kind == NODE_EW) {
        c->p.ew.prog = NULL;
        c->p.ew.leaves = NULL;
        c->p.ew.nleaves = 0;
    }
    c->mat = NULL;
    c->stage = -1;
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
        if (a->kind == NODE_EW) node_unfuse_ew(a);
        if (a->origin) zc_array_release(a->origin); /* its data are the origin's */
        else {
            if (a->kind == NODE_ZARR) {
                zc_zarr_close(a->p.zarr.z);
                zc__free(a->p.zarr.path);
            }
            if (a->kind == NODE_BUFFER) zc__free(a->p.buffer.data);
            if (manip_kind(a->kind)) manip_free(a);
        }
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

/* ---- value conversion for generated arrays ---- */

static void store_double(zc_dtype t, double v, unsigned char *p)
{
    switch (t) {
    case ZC_BOOL: p[0] = v != 0; break;
    case ZC_INT8: { int8_t x = (int8_t)(int64_t)v; memcpy(p, &x, 1); break; }
    case ZC_INT16: { int16_t x = (int16_t)(int64_t)v; memcpy(p, &x, 2); break; }
    case ZC_INT32: { int32_t x = (int32_t)(int64_t)v; memcpy(p, &x, 4); break; }
    case ZC_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case ZC_UINT8: { uint8_t x = (uint8_t)(uint64_t)(v < 0 ? 0 : v); memcpy(p, &x, 1); break; }
    case ZC_UINT16: { uint16_t x = (uint16_t)(uint64_t)(v < 0 ? 0 : v); memcpy(p, &x, 2); break; }
    case ZC_UINT32: { uint32_t x = (uint32_t)(uint64_t)(v < 0 ? 0 : v); memcpy(p, &x, 4); break; }
    case ZC_UINT64: { uint64_t x = (uint64_t)(v < 0 ? 0 : v); memcpy(p, &x, 8); break; }
    case ZC_FLOAT16: { uint16_t h = dtype_float_to_half((float)v); memcpy(p, &h, 2); break; }
    case ZC_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case ZC_FLOAT64: memcpy(p, &v, 8); break;
    case ZC_COMPLEX64: { float f[2] = {(float)v, 0}; memcpy(p, f, 8); break; }
    case ZC_COMPLEX128: { double f[2] = {v, 0}; memcpy(p, f, 16); break; }
    default: break;
    }
}

static double unit_uniform(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

static int create_region(const zc_array *a, const zc_range *sel, unsigned char *out)
{
    int64_t cnt[ZC_MAX_DIMS], idx[ZC_MAX_DIMS] = {0};
    size_t n = 1;
    for (int d = 0; d < a->ndim; d++) {
        cnt[d] = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        n *= (size_t)cnt[d];
    }
    const typeof(a->p.create) *c = &a->p.create;
    if (c->what == CREATE_FULL) {
        unsigned char one[16];
        store_double(a->dtype, c->a, one);
        for (size_t i = 0; i < n; i++) memcpy(out + i * a->itemsize, one, a->itemsize);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t g[ZC_MAX_DIMS];
        uint64_t lin = 0;
        for (int d = 0; d < a->ndim; d++) {
            g[d] = sel[d].start + idx[d] * sel[d].step;
            lin = lin * (uint64_t)a->shape[d] + (uint64_t)g[d];
        }
        double v = 0;
        switch (c->what) {
        case CREATE_ARANGE: v = c->a + (double)g[0] * c->c; break;
        case CREATE_LINSPACE: v = c->k > 1 ? c->a + (c->b - c->a) * (double)g[0] / (double)(c->k - 1) : c->a; break;
        case CREATE_EYE: v = g[1] - g[0] == (int64_t)c->c; break;
        case CREATE_UNIFORM: v = c->a + (c->b - c->a) * unit_uniform(hash4(c->seed, lin, 0x756e69, 0)); break;
        case CREATE_NORMAL: {
            double u1 = ((double)(hash4(c->seed, lin, 0x6e6f72, 1) >> 11) + 1.0) * 0x1.0p-53;
            double u2 = unit_uniform(hash4(c->seed, lin, 0x6e6f72, 2));
            v = c->a + c->b * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
            break;
        }
        default: break;
        }
        store_double(a->dtype, v, out + i * a->itemsize);
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
    return 0;
}

static int buffer_region(const zc_array *a, const zc_range *sel, unsigned char *out)
{
    int64_t cnt[ZC_MAX_DIMS], sstride[ZC_MAX_DIMS], dstride[ZC_MAX_DIMS];
    int64_t st = (int64_t)a->itemsize, dt = (int64_t)a->itemsize, off = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
        cnt[d] = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        sstride[d] = cnt[d] > 1 ? st * sel[d].step : 0; /* a single element's step may be huge */
        off += sel[d].start * st;
        dstride[d] = dt;
        st *= a->shape[d];
        dt *= cnt[d];
    }
    zarr_copy_nd(out, dstride, (const unsigned char *)a->p.buffer.data + off, sstride, cnt, a->ndim, a->itemsize);
    return 0;
}

static int slice_region(zc_array *a, const zc_range *sel, void *out)
{
    zc_array *in = a->inputs[0];
    zc_range isel[ZC_MAX_DIMS];
    for (int i = 0; i < in->ndim; i++)
        if (a->p.slice.fixed[i] >= 0) isel[i] = (zc_range){a->p.slice.fixed[i], a->p.slice.fixed[i] + 1, 1};
    for (int d = 0; d < a->ndim; d++) {
        int i = a->p.slice.in_dim[d];
        if (i < 0) continue;
        int64_t cnt = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        int64_t start = a->p.slice.start[d] + sel[d].start * a->p.slice.step[d];
        /* one element or none: any step reads the same, and x[::2**63-1]'s would overflow below */
        int64_t step = cnt > 1 ? a->p.slice.step[d] * sel[d].step : 1;
        isel[i] = (zc_range){start, cnt ? start + (cnt - 1) * step + 1 : start, step};
    }
    return node_region(in, isel, out);
}

/* ---- fused elementwise ---- */

static pthread_mutex_t fuse_lock = PTHREAD_MUTEX_INITIALIZER;

static int leaf_index(zc_array *a, zc_array *leaf)
{
    for (int i = 0; i < a->p.ew.nleaves; i++)
        if (a->p.ew.leaves[i] == leaf) return i;
    if (a->p.ew.nleaves == 64) return zc__err(ZC_EUNSUPPORTED, "a fused expression has more than 64 inputs");
    zc_array **l = zc__realloc(a->p.ew.leaves, sizeof *l * (size_t)(a->p.ew.nleaves + 1));
    if (!l) return ZC_ENOMEM;
    a->p.ew.leaves = l;
    l[a->p.ew.nleaves] = leaf;
    return a->p.ew.nleaves++;
}

/* Compile node n (inside root's subtree) into root's program; *reg = its register. */
static int compile(zc_array *root, zc_array *n, int *reg)
{
    ew_program *p = root->p.ew.prog;
    if (n->kind == NODE_SCALAR) {
        *reg = n->p.scalar.is_int ? ew_const_i64(p, (int64_t)n->p.scalar.value) : ew_const_f64(p, n->p.scalar.value);
        return *reg < 0 ? *reg : 0;
    }
    if (n->kind != NODE_EW || (n != root && n->mat)) {
        int k = leaf_index(root, n);
        if (k < 0) return k;
        *reg = ew_input(p, k, n->dtype);
        return *reg < 0 ? *reg : 0;
    }
    int r[NODE_MAX_INPUTS];
    for (int i = 0; i < n->ninputs; i++) ZC_TRY(compile(root, n->inputs[i], &r[i]));
    if (n->p.ew.op < 0) return ew_astype(p, r[0], n->dtype, reg);
    if (n->ninputs == 3) return ew_where(p, r[0], r[1], r[2], reg);
    if (n->ninputs == 1) return ew_unary(p, (ew_op)n->p.ew.op, r[0], reg);
    return ew_binary(p, (ew_op)n->p.ew.op, r[0], r[1], reg);
}

int node_fuse_ew(zc_array *a)
{
    pthread_mutex_lock(&fuse_lock);
    int rc = 0;
    if (!a->p.ew.prog) {
        int reg;
        if ((rc = ew_program_create(&a->p.ew.prog)) == 0 && (rc = compile(a, a, &reg)) == 0)
            rc = ew_set_output(a->p.ew.prog, reg);
        if (rc < 0) {
            ew_program_free(a->p.ew.prog);
            a->p.ew.prog = NULL;
            zc__free(a->p.ew.leaves);
            a->p.ew.leaves = NULL;
            a->p.ew.nleaves = 0;
        }
    }
    pthread_mutex_unlock(&fuse_lock);
    return rc;
}

void node_unfuse_ew(zc_array *a)
{
    ew_program_free(a->p.ew.prog);
    a->p.ew.prog = NULL;
    zc__free(a->p.ew.leaves);
    a->p.ew.leaves = NULL;
    a->p.ew.nleaves = 0;
}

static int ew_region(zc_array *a, const zc_range *sel, unsigned char *out)
{
    ZC_TRY(node_fuse_ew(a));
    int nl = a->p.ew.nleaves, nd = a->ndim;
    void *buf[64] = {0};
    int64_t lstride[64][ZC_MAX_DIMS]; /* element strides of each leaf buffer per output dim */
    int64_t cnt[ZC_MAX_DIMS];
    size_t rows = 1;
    for (int d = 0; d < nd; d++) {
        cnt[d] = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        if (d < nd - 1) rows *= (size_t)cnt[d];
    }
    int rc = 0;
    for (int k = 0; k < nl; k++) {
        zc_array *l = a->p.ew.leaves[k];
        zc_range lsel[ZC_MAX_DIMS];
        int off = nd - l->ndim;
        int64_t s = 1;
        for (int j = l->ndim - 1; j >= 0; j--) {
            int d = j + off;
            bool bcast = l->shape[j] == 1 && a->shape[d] != 1;
            lsel[j] = bcast ? (zc_range){0, 1, 1} : sel[d];
            lstride[k][d] = bcast ? 0 : s;
            s *= bcast ? 1 : cnt[d];
        }
        for (int d = 0; d < off; d++) lstride[k][d] = 0;
        size_t nb = node_region_bytes(l, lsel);
        if (!(buf[k] = zc__malloc(nb ? nb : 1))) {
            rc = ZC_ENOMEM;
            goto out;
        }
        if ((rc = node_region(l, lsel, buf[k])) < 0) goto out;
    }
    if (nd == 0) {
        int64_t zero[64] = {0};
        ew_eval(a->p.ew.prog, 1, (const void *const *)buf, zero, out);
        goto out;
    }
    int64_t last = cnt[nd - 1], idx[ZC_MAX_DIMS] = {0};
    const void *ptr[64];
    int64_t st[64];
    for (int k = 0; k < nl; k++) st[k] = lstride[k][nd - 1];
    for (size_t r = 0; r < rows && last > 0; r++) {
        for (int k = 0; k < nl; k++) {
            int64_t e = 0;
            for (int d = 0; d < nd - 1; d++) e += idx[d] * lstride[k][d];
            ptr[k] = (const unsigned char *)buf[k] + e * (int64_t)a->p.ew.leaves[k]->itemsize;
        }
        ew_eval(a->p.ew.prog, (size_t)last, ptr, st, out + r * (size_t)last * a->itemsize);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
out:
    for (int k = 0; k < nl; k++) zc__free(buf[k]);
    return rc;
}

int node_compute_region(zc_array *a, const zc_range *sel, void *out)
{
    switch (a->kind) {
    case NODE_ZARR:
        if (a->cache) return a->cache->read(a->cache, a, sel, out); /* kept decoded for this computation */
        return zarr_read_flags(a->p.zarr.z, sel, out, node_region_bytes(a, sel), ZARR_READ_DROP); /* RSS bounded */
    case NODE_BUFFER: return buffer_region(a, sel, out);
    case NODE_CREATE: return create_region(a, sel, out);
    case NODE_SCALAR:
        store_double(a->dtype, a->p.scalar.value, out);
        return 0;
    case NODE_EW: return ew_region(a, sel, out);
    case NODE_SLICE: return slice_region(a, sel, out);
    case NODE_RECHUNK: return node_region(a->inputs[0], sel, out);
    case NODE_REDUCE: break;
    case NODE_RESHAPE: case NODE_VIEW: case NODE_CONCAT: case NODE_GATHER: case NODE_TOTALS:
    case NODE_SCAN: return manip_region(a, sel, out);
    case NODE_MATMUL: return matmul_region(a, sel, out);
    case NODE_DECOMP: return decomp_region(a, sel, out);
    case NODE_FFT: return fftn_region(a, sel, out);
    }
    return zc__err(ZC_EINTERNAL, "a reduction's values were asked for before it was computed");
}

int node_region(zc_array *a, const zc_range *sel, void *out)
{
    if (a->mat) return zarr_read_flags(a->mat, sel, out, node_region_bytes(a, sel), ZARR_READ_DROP);
    return node_compute_region(a, sel, out);
}
