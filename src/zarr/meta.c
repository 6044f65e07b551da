/* zarr/meta.c — checks and helpers shared by the v2 and v3 metadata code. */
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/zarr.h"

int zarr_parse_dims(const json_t *v, const char *key, int *ndim, int64_t *out)
{
    if (!json_is_array(v)) return zc__err(ZC_EFORMAT, "'%s' must be an array of integers", key);
    size_t n = json_array_size(v);
    if (n > ZC_MAX_DIMS)
        return zc__err(ZC_EUNSUPPORTED, "'%s' has %zu dimensions (at most %d)", key, n, ZC_MAX_DIMS);
    if (*ndim >= 0 && (size_t)*ndim != n)
        return zc__err(ZC_EFORMAT, "'%s' has %zu dimensions, the shape has %d", key, n, *ndim);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e)) return zc__err(ZC_EFORMAT, "'%s'[%zu] is not an integer", key, i);
        out[i] = json_integer_value(e);
    }
    *ndim = (int)n;
    return 0;
}

int zarr_meta_validate(const zarr_meta *m)
{
    int64_t elems = 1, celems = 1;
    for (int d = 0; d < m->ndim; d++) {
        if (m->shape[d] < 0) return zc__err(ZC_EFORMAT, "'shape'[%d] is negative (%lld)", d, (long long)m->shape[d]);
        if (m->chunks[d] <= 0)
            return zc__err(ZC_EFORMAT, "chunk shape [%d] must be positive (%lld)", d, (long long)m->chunks[d]);
        if (ck_mul_i64(elems, m->shape[d], &elems))
            return zc__err(ZC_EOVERFLOW, "array shape overflows 64 bits at dimension %d", d);
        if (ck_mul_i64(celems, m->chunks[d], &celems))
            return zc__err(ZC_EOVERFLOW, "chunk shape overflows 64 bits at dimension %d", d);
        if (m->sharded) {
            if (m->inner[d] <= 0 || m->chunks[d] % m->inner[d])
                return zc__err(ZC_EFORMAT, "inner chunk shape [%d]=%lld does not divide the shard shape %lld", d,
                               (long long)m->inner[d], (long long)m->chunks[d]);
        }
    }
    int64_t bytes;
    if (ck_mul_i64(elems, (int64_t)m->dtype.size, &bytes))
        return zc__err(ZC_EOVERFLOW, "array size in bytes overflows 64 bits");
    if (ck_mul_i64(celems, (int64_t)m->dtype.size, &bytes) || (uint64_t)bytes > (uint64_t)SIZE_MAX / 4)
        return zc__err(ZC_EOVERFLOW, "chunk of %lld elements is too large", (long long)celems);
    return 0;
}

void zarr_meta_free(zarr_meta *m)
{
    zc__free(m->fill);
    json_decref(m->codecs);
    json_decref(m->attributes);
    json_decref(m->dimension_names);
    json_decref(m->inner_codecs);
    json_decref(m->index_codecs);
    memset(m, 0, sizeof *m);
}
