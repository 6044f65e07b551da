/* plan/source.c — the kinds whose values come from outside the graph:
 *
 *   ZARR     a stored array (read through the executor's kept chunks when it set
 *            a->cache, else straight from the store, RSS bounded)
 *   BUFFER   a copy of a caller's buffer (cannot be saved in a plan)
 *   CREATE   values from the element index: full, arange, linspace, eye, random
 *   SCALAR   a 0-d "weak" scalar (Python number semantics in promotion) */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/hash.h"
#include "plan/kind.h"
#include "zarr/copy.h"
#include "zarr/read.h"
#include "zarr/zarr.h"

/* ---- ZARR ---- */

int node_from_zarr(zc_store *st, const char *path, zc_array **out)
{
    zc_zarr *z;
    ZC_TRY(zc_zarr_open(st, path ? path : "", &z));
    /* the read unit (inner chunk when sharded) is the natural block */
    int rc = node_new(NODE_ZARR, z->m.ndim, z->m.shape, z->rchunk, z->m.dtype.type, 0, NULL, out);
    if (rc < 0) {
        zc_zarr_close(z);
        return rc;
    }
    (*out)->itemsize = z->m.dtype.size; /* bytes and unicode: their length */
    (*out)->p.zarr.store = st;
    (*out)->p.zarr.z = z;
    (*out)->p.zarr.path = zc__strdup(z->path);
    if (!(*out)->p.zarr.path) {
        zc_array_release(*out);
        *out = NULL;
        return ZC_ENOMEM;
    }
    return 0;
}

static const char *zarr_name(const zc_array *a) { (void)a; return "zarr"; }

static int zarr_region(zc_array *a, const zc_range *sel, void *out)
{
    if (a->cache) return a->cache->read(a->cache, a, sel, out); /* kept decoded for this computation */
    return zarr_read_flags(a->p.zarr.z, sel, out, node_region_bytes(a, sel), ZARR_READ_DROP); /* RSS bounded */
}

static size_t zarr_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    (void)proj;
    return node_proj_read(a, a->p.zarr.z->rchunk, sel);
}

static int zarr_to_json(const zc_array *a, json_t *o)
{
    char url[4096];
    ZC_TRY(kind_store_url(a->p.zarr.store, url, sizeof url));
    json_object_set_new(o, "store", json_string(url));
    json_object_set_new(o, "path", json_string(a->p.zarr.path));
    return 0;
}

static int zarr_load(const json_t *o, int i, zc_store **st, zc_array **out)
{
    const char *path = json_string_value(json_object_get(o, "path"));
    if (!path) return zc__err(ZC_EFORMAT, "plan: node %d: a stored array without a path", i);
    ZC_TRY(zc_store_open(json_string_value(json_object_get(o, "store")), ZC_STORE_READONLY, st));
    return node_from_zarr(*st, path, out);
}

static void zarr_release(zc_array *a)
{
    if (a->origin) return; /* the origin's */
    zc_zarr_close(a->p.zarr.z);
    zc__free(a->p.zarr.path);
}

const node_kind_def kind_zarr = {
    .json = "zarr", .flags = KIND_SOURCE | KIND_NO_STAGE, .min_inputs = 0, .max_inputs = 0,
    .name = zarr_name, .region = zarr_region, .proj = zarr_proj, .to_json = zarr_to_json, .load = zarr_load,
    .release = zarr_release,
};

/* ---- BUFFER ---- */

static const char *buffer_name(const zc_array *a) { (void)a; return "asarray"; }

static int buffer_region(zc_array *a, const zc_range *sel, void *out)
{
    int64_t cnt[ZC_MAX_DIMS], sstride[ZC_MAX_DIMS], dstride[ZC_MAX_DIMS];
    int64_t st = (int64_t)a->itemsize, dt = (int64_t)a->itemsize, off = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
        cnt[d] = range_count(&sel[d]);
        sstride[d] = cnt[d] > 1 ? st * sel[d].step : 0; /* a single element's step may be huge */
        off += sel[d].start * st;
        dstride[d] = dt;
        st *= a->shape[d];
        dt *= cnt[d];
    }
    zarr_copy_nd(out, dstride, (const unsigned char *)a->p.buffer.data + off, sstride, cnt, a->ndim, a->itemsize);
    return 0;
}

/* values made in place: nothing beyond the output */
static size_t in_place_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    (void)a, (void)sel, (void)proj;
    return 0;
}

static int buffer_to_json(const zc_array *a, json_t *o)
{
    (void)a, (void)o;
    return zc__err(ZC_EUNSUPPORTED, "arrays made from caller buffers (zc_asarray) cannot be sent to workers");
}

static void buffer_release(zc_array *a)
{
    if (!a->origin) zc__free(a->p.buffer.data);
}

const node_kind_def kind_buffer = {
    .json = "buffer", .flags = KIND_SOURCE | KIND_IN_MEMORY, .min_inputs = 0, .max_inputs = 0,
    .name = buffer_name, .region = buffer_region, .proj = in_place_proj, .to_json = buffer_to_json,
    .release = buffer_release,
};

/* ---- CREATE and SCALAR: values from numbers ---- */

/* numbers become integers as NumPy's astype does, without undefined behaviour (fuzzing
 * found `(-9223372036854775807 - 0) // -1`, 2^63 as a double, cast to int64) */
static void store_double(zc_dtype t, double v, unsigned char *p)
{
    switch (t) {
    case ZC_BOOL: p[0] = v != 0; break;
    case ZC_INT8: { int8_t x = (int8_t)dtype_f2i(v); memcpy(p, &x, 1); break; }
    case ZC_INT16: { int16_t x = (int16_t)dtype_f2i(v); memcpy(p, &x, 2); break; }
    case ZC_INT32: { int32_t x = (int32_t)dtype_f2i(v); memcpy(p, &x, 4); break; }
    case ZC_INT64: { int64_t x = dtype_f2i(v); memcpy(p, &x, 8); break; }
    case ZC_UINT8: { uint8_t x = (uint8_t)dtype_f2u(v < 0 ? 0 : v); memcpy(p, &x, 1); break; }
    case ZC_UINT16: { uint16_t x = (uint16_t)dtype_f2u(v < 0 ? 0 : v); memcpy(p, &x, 2); break; }
    case ZC_UINT32: { uint32_t x = (uint32_t)dtype_f2u(v < 0 ? 0 : v); memcpy(p, &x, 4); break; }
    case ZC_UINT64: { uint64_t x = dtype_f2u(v < 0 ? 0 : v); memcpy(p, &x, 8); break; }
    case ZC_FLOAT16: { uint16_t h = dtype_float_to_half((float)v); memcpy(p, &h, 2); break; }
    case ZC_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case ZC_FLOAT64: memcpy(p, &v, 8); break;
    case ZC_COMPLEX64: { float f[2] = {(float)v, 0}; memcpy(p, f, 8); break; }
    case ZC_COMPLEX128: { double f[2] = {v, 0}; memcpy(p, f, 16); break; }
    default: break;
    }
}

static double unit_uniform(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

static const char *create_name(const zc_array *a) { (void)a; return "create"; }

static int create_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    int64_t cnt[ZC_MAX_DIMS], idx[ZC_MAX_DIMS] = {0};
    size_t n = 1;
    for (int d = 0; d < a->ndim; d++) {
        cnt[d] = range_count(&sel[d]);
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

static int create_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "what", json_integer(a->p.create.what));
    json_object_set_new(o, "a", json_real(a->p.create.a));
    json_object_set_new(o, "b", json_real(a->p.create.b));
    json_object_set_new(o, "c", json_real(a->p.create.c));
    json_object_set_new(o, "k", json_integer(a->p.create.k));
    json_object_set_new(o, "seed", json_integer((json_int_t)a->p.create.seed));
    return 0;
}

static int create_from_json(const json_t *o, zc_array *a, int i)
{
    a->p.create.what = (create_kind)json_integer_value(json_object_get(o, "what"));
    a->p.create.a = json_number_value(json_object_get(o, "a"));
    a->p.create.b = json_number_value(json_object_get(o, "b"));
    a->p.create.c = json_number_value(json_object_get(o, "c"));
    a->p.create.k = json_integer_value(json_object_get(o, "k"));
    a->p.create.seed = (uint64_t)json_integer_value(json_object_get(o, "seed"));
    if ((int)a->p.create.what < CREATE_FULL || a->p.create.what > CREATE_NORMAL)
        return zc__err(ZC_EFORMAT, "plan: node %d: unknown creation kind %d", i, (int)a->p.create.what);
    return 0;
}

const node_kind_def kind_create = {
    .json = "create", .flags = KIND_SOURCE, .min_inputs = 0, .max_inputs = 0,
    .name = create_name, .region = create_region, .proj = in_place_proj, .to_json = create_to_json,
    .from_json = create_from_json,
};

static const char *scalar_name(const zc_array *a) { (void)a; return "scalar"; }

static int scalar_region(zc_array *a, const zc_range *sel, void *out)
{
    (void)sel;
    store_double(a->dtype, a->p.scalar.value, out);
    return 0;
}

static int scalar_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "value", json_real(a->p.scalar.value));
    json_object_set_new(o, "is_int", json_boolean(a->p.scalar.is_int));
    return 0;
}

/* An integer scalar is kept as a double holding a whole int64 (2^63 standing
 * for INT64_MAX, the double nearest to it). */
static bool int64_valued(double v) { return v >= -0x1p63 && v <= 0x1p63 && v == trunc(v); }

int64_t node_scalar_int(const zc_array *a)
{
    return a->p.scalar.value >= 0x1p63 ? INT64_MAX : (int64_t)a->p.scalar.value;
}

int node_scalar(double value, bool is_int, zc_array **out)
{
    if (is_int && !int64_valued(value))
        return zc__err(ZC_EINVAL, "an integer scalar of %g: not a whole number in int64's range", value);
    ZC_TRY(node_new(NODE_SCALAR, 0, NULL, NULL, is_int ? ZC_INT64 : ZC_FLOAT64, 0, NULL, out));
    (*out)->p.scalar.value = value;
    (*out)->p.scalar.is_int = is_int;
    return 0;
}

static int scalar_from_json(const json_t *o, zc_array *a, int i)
{
    if (a->ndim != 0) return zc__err(ZC_EFORMAT, "plan: node %d: a scalar has %d dimensions", i, a->ndim);
    a->p.scalar.value = json_number_value(json_object_get(o, "value"));
    a->p.scalar.is_int = json_is_true(json_object_get(o, "is_int"));
    /* as node_scalar makes them: int64 holding a whole number, or float64 */
    if (a->dtype != (a->p.scalar.is_int ? ZC_INT64 : ZC_FLOAT64) || (a->p.scalar.is_int && !int64_valued(a->p.scalar.value)))
        return zc__err(ZC_EFORMAT, "plan: node %d: a scalar of %g (%s, dtype %s) is not what scalars are made as",
                       i, a->p.scalar.value, a->p.scalar.is_int ? "integer" : "float", zc_dtype_name(a->dtype));
    return 0;
}

const node_kind_def kind_scalar = {
    .json = "scalar", .flags = KIND_SOURCE | KIND_NO_STAGE, .min_inputs = 0, .max_inputs = 0,
    .name = scalar_name, .region = scalar_region, .proj = in_place_proj, .to_json = scalar_to_json,
    .from_json = scalar_from_json,
};
