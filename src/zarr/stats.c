/* zarr/stats.c — how much of an array is stored (for `zcube info`). */
#include <stdatomic.h>
#include <string.h>

#include "core/error.h"
#include "zarr/zarr.h"

typedef struct {
    zc_zarr *a;
    size_t per;           /* grid positions per task */
    size_t total;
    atomic_llong stored, bytes;
} stats_ctx;

static int stat_group(void *vctx, size_t g, int slot)
{
    stats_ctx *c = vctx;
    size_t t0 = g * c->per, t1 = t0 + c->per < c->total ? t0 + c->per : c->total;
    for (size_t t = t0; t < t1; t++) {
        int64_t idx[ZC_MAX_DIMS];
        size_t r = t;
        for (int d = c->a->m.ndim - 1; d >= 0; d--) {
            idx[d] = (int64_t)(r % (size_t)c->a->grid[d]);
            r /= (size_t)c->a->grid[d];
        }
        char key[1024];
        uint64_t size;
        ZC_TRY(zarr_chunk_key(c->a, idx, key, sizeof key));
        int rc = store_size(c->a->st, key, &size);
        if (rc == ZC_ENOENT) continue;
        ZC_TRY(rc);
        atomic_fetch_add(&c->stored, 1);
        atomic_fetch_add(&c->bytes, (long long)size);
    }
    return 0;
}

int zc_zarr_stats(zc_zarr *a, zc_zarr_stats_t *st)
{
    zc__err_clear();
    if (!a || !st) return zc__err(ZC_EINVAL, "zc_zarr_stats: NULL argument");
    memset(st, 0, sizeof *st);
    int64_t total = 1, elems = 1;
    for (int d = 0; d < a->m.ndim; d++) {
        if (__builtin_mul_overflow(total, a->grid[d], &total)) return zc__err(ZC_EOVERFLOW, "chunk count overflows");
        elems *= a->m.chunks[d];
    }
    stats_ctx c = {.a = a, .total = (size_t)total};
    atomic_init(&c.stored, 0);
    atomic_init(&c.bytes, 0);
    c.per = 256;
    ZC_TRY(pool_for(zarr_pool(a), (c.total + c.per - 1) / c.per, a->nthreads, stat_group, &c));
    st->chunks_total = total;
    st->chunks_stored = atomic_load(&c.stored);
    st->bytes_stored = atomic_load(&c.bytes);
    st->bytes_decoded = total * elems * (int64_t)a->m.dtype.size;
    return 0;
}
