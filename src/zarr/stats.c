/* zarr/stats.c — how much of an array is stored (for `zcube info`).
 *
 * Two ways to count, by what costs less: a grid of up to PROBE_MAX chunks is
 * probed key by key (store_size on each, in parallel); a bigger grid (up to
 * 2^63 chunks of 1 element are valid metadata) is counted by listing what is
 * stored under the array's folder, so the time follows the stored objects,
 * not the grid, and memory stays constant however many keys the listing
 * holds (the listing is streamed to a callback). A listed key counts when
 * it parses as a chunk key of this array inside the grid (its key, made
 * again from the parsed indices, is the same string). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "zarr/zarr.h"

#define PROBE_MAX ((int64_t)1 << 20)

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

typedef struct {
    zc_zarr *a;
    int64_t stored, bytes;
} list_ctx;

/* Count `key` if it is a chunk key of the array inside its grid. */
static int count_key(const char *key, void *vctx)
{
    list_ctx *c = vctx;
    zc_zarr *a = c->a;
    int64_t idx[ZC_MAX_DIMS];
    int n = 0;
    const char *p = key + (a->path[0] ? strlen(a->path) + 1 : 0);
    while (*p && n <= a->m.ndim) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        char *end;
        long long v = strtoll(p, &end, 10);
        if (n < a->m.ndim) idx[n] = v;
        n++;
        p = end;
    }
    if (n != a->m.ndim) return 0;
    for (int d = 0; d < n; d++)
        if (idx[d] < 0 || idx[d] >= a->grid[d]) return 0;
    char want[1024];
    uint64_t size;
    if (zarr_chunk_key(a, idx, want, sizeof want) < 0 || strcmp(want, key)) return 0;
    int rc = store_size(a->st, key, &size);
    if (rc == ZC_ENOENT) return 0; /* removed since listed */
    ZC_TRY(rc);
    c->stored++;
    c->bytes += (int64_t)size;
    return 0;
}

/* chunks x elements x itemsize, INT64_MAX if that overflows (huge grids of padded chunks) */
static int64_t decoded_bytes(int64_t chunks, int64_t elems, size_t itemsize)
{
    int64_t r;
    if (ck_mul_i64(chunks, elems, &r) || ck_mul_i64(r, (int64_t)itemsize, &r)) return INT64_MAX;
    return r;
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
    if (total > PROBE_MAX) {
        list_ctx l = {a, 0, 0};
        char prefix[1100];
        snprintf(prefix, sizeof prefix, "%s%s", a->path, a->path[0] ? "/" : "");
        ZC_TRY(store_list_prefix(a->st, prefix, count_key, &l));
        st->chunks_total = total;
        st->chunks_stored = l.stored;
        st->bytes_stored = l.bytes;
        st->bytes_decoded = decoded_bytes(total, elems, a->m.dtype.size);
        return 0;
    }
    stats_ctx c = {.a = a, .total = (size_t)total};
    atomic_init(&c.stored, 0);
    atomic_init(&c.bytes, 0);
    c.per = 256;
    ZC_TRY(pool_for(zarr_pool(a), (c.total + c.per - 1) / c.per, a->nthreads, stat_group, &c));
    st->chunks_total = total;
    st->chunks_stored = atomic_load(&c.stored);
    st->bytes_stored = atomic_load(&c.bytes);
    st->bytes_decoded = decoded_bytes(total, elems, a->m.dtype.size);
    return 0;
}
