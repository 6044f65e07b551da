/* ops/creation.c — arrays from storage, from buffers, and from formulas. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/array.h"
#include "zarr/zarr.h"

int zc_from_zarr(zc_store *st, const char *path, zc_array **out)
{
    zc__err_clear();
    if (!st || !out) return zc__err(ZC_EINVAL, "zc_from_zarr: NULL argument");
    return node_from_zarr(st, path, out);
}

int zc_asarray(const void *data, zc_dtype dtype, int ndim, const int64_t *shape, const int64_t *chunks,
               zc_array **out)
{
    zc__err_clear();
    if (!out || (!data && ndim)) return zc__err(ZC_EINVAL, "zc_asarray: NULL argument");
    int64_t ch[ZC_MAX_DIMS];
    for (int d = 0; d < ndim && d < ZC_MAX_DIMS; d++) ch[d] = chunks ? chunks[d] : shape[d];
    ZC_TRY(node_new(NODE_BUFFER, ndim, shape, ch, dtype, 0, NULL, out));
    size_t n = (*out)->itemsize;
    for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
    if (!((*out)->p.buffer.data = zc__malloc(n ? n : 1))) {
        zc_array_release(*out);
        *out = NULL;
        return ZC_ENOMEM;
    }
    if (n) memcpy((*out)->p.buffer.data, data, n);
    return 0;
}

static int create(create_kind what, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype,
                  double a, double b, double c, int64_t k, uint64_t seed, zc_array **out)
{
    zc__err_clear();
    if (!out || (!shape && ndim)) return zc__err(ZC_EINVAL, "creation: NULL argument");
    ZC_TRY(node_new(NODE_CREATE, ndim, shape, chunks, dtype, 0, NULL, out));
    (*out)->p.create.what = what;
    (*out)->p.create.a = a;
    (*out)->p.create.b = b;
    (*out)->p.create.c = c;
    (*out)->p.create.k = k;
    (*out)->p.create.seed = seed;
    return 0;
}

int zc_full(int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, double value, zc_array **out)
{
    return create(CREATE_FULL, ndim, shape, chunks, dtype, value, 0, 0, 0, 0, out);
}

int zc_arange(double start, double stop, double step, zc_dtype dtype, int64_t chunk, zc_array **out)
{
    if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
        return zc__err(ZC_EINVAL, "arange: step must be non-zero and bounds finite");
    double n = ceil((stop - start) / step);
    if (n < 0) n = 0;
    if (n > 9e18) return zc__err(ZC_EOVERFLOW, "arange: too many elements");
    int64_t shape = (int64_t)n, ch = chunk > 0 ? chunk : 0;
    return create(CREATE_ARANGE, 1, &shape, ch ? &ch : NULL, dtype, start, stop, step, 0, 0, out);
}

int zc_linspace(double start, double stop, int64_t num, int endpoint, zc_dtype dtype, int64_t chunk, zc_array **out)
{
    if (num < 0) return zc__err(ZC_EINVAL, "linspace: num must be >= 0");
    /* value i = start + (end - start) * i / (num - 1); without the endpoint, end is one step short of stop */
    double end = endpoint || num < 2 ? stop : start + (stop - start) * (double)(num - 1) / (double)num;
    int64_t ch = chunk;
    return create(CREATE_LINSPACE, 1, &num, ch > 0 ? &ch : NULL, dtype, start, end, 0, num, 0, out);
}

int zc_eye(int64_t n, int64_t m, int64_t k, zc_dtype dtype, const int64_t *chunks, zc_array **out)
{
    int64_t shape[2] = {n, m > 0 ? m : n};
    return create(CREATE_EYE, 2, shape, chunks, dtype, 0, 0, (double)k, 0, 0, out);
}

int zc_random_uniform(uint64_t seed, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype,
                      double low, double high, zc_array **out)
{
    if (!(dtype == ZC_FLOAT32 || dtype == ZC_FLOAT64 || dtype == ZC_FLOAT16))
        return zc__err(ZC_EINVAL, "uniform: dtype must be a float (got %s)", zc_dtype_name(dtype));
    return create(CREATE_UNIFORM, ndim, shape, chunks, dtype, low, high, 0, 0, seed, out);
}

int zc_random_normal(uint64_t seed, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype,
                     double mean, double stddev, zc_array **out)
{
    if (!(dtype == ZC_FLOAT32 || dtype == ZC_FLOAT64 || dtype == ZC_FLOAT16))
        return zc__err(ZC_EINVAL, "normal: dtype must be a float (got %s)", zc_dtype_name(dtype));
    return create(CREATE_NORMAL, ndim, shape, chunks, dtype, mean, stddev, 0, 0, seed, out);
}

int zc_scalar(double value, int is_integer, zc_array **out)
{
    zc__err_clear();
    if (!out) return zc__err(ZC_EINVAL, "zc_scalar: NULL argument");
    return node_scalar(value, is_integer != 0, out);
}
