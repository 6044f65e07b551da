/* zarr/shard.c — reading shard indexes (layout in shard.h). */
#include "zarr/shard.h"

#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/shard_cache.h"

#define KEY_LEN 1024

int zarr_shard_index_decode(const zc_zarr *a, const void *src, size_t n, uint64_t *index)
{
    return codec_chain_decode(a->index_chain, src, n, index, (size_t)a->inner_per_shard * 16);
}

int zarr_shard_index_encode(const zc_zarr *a, const uint64_t *index, zc_buf *out)
{
    return codec_chain_encode(a->index_chain, index, (size_t)a->inner_per_shard * 16, out);
}

int shard_index_check(const zc_zarr *a, const uint64_t *index, uint64_t size, const char *key)
{
    for (int64_t i = 0; i < a->inner_per_shard; i++) {
        uint64_t off = index[2 * i], len = index[2 * i + 1];
        if (off == UINT64_MAX && len == UINT64_MAX) continue;
        if (off > size || len > size - off)
            return zc__err(ZC_ECORRUPT,
                           "array '%s': shard '%s': index entry %lld points outside the shard "
                           "(offset %llu + %llu bytes > %llu)",
                           a->path, key, (long long)i, (unsigned long long)off, (unsigned long long)len,
                           (unsigned long long)size);
    }
    return 0;
}

static int64_t find(const int64_t *ids, int64_t n, int64_t v)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

typedef struct {
    shard_set *ss;
    zc_zarr *a;
    store_req *reqs;      /* one per cache miss */
    size_t *which;        /* reqs[m] is touched shard which[m] */
    uint64_t *ids;        /* grid number of touched shard t */
} load_ctx;

static void shard_coord(const shard_set *ss, size_t t, int64_t *c)
{
    for (int d = ss->ndim - 1; d >= 0; d--) {
        c[d] = ss->ids[d][t % (size_t)ss->nids[d]];
        t /= (size_t)ss->nids[d];
    }
}

static int decode_one(void *vctx, size_t m, int slot)
{
    load_ctx *l = vctx;
    shard_set *ss = l->ss;
    zc_zarr *a = l->a;
    store_req *q = &l->reqs[m];
    size_t t = l->which[m];
    uint64_t *idx = ss->index + t * (size_t)a->inner_per_shard * 2;
    if (q->status == ZC_ENOENT) {
        ss->present[t] = false;
        shard_cache_put(a->index_cache, l->ids[t], NULL, false, 0);
        return 0;
    }
    if (q->status == ZC_ERANGE || (q->status == 0 && q->size != a->index_nbytes))
        return zc__err(ZC_ECORRUPT, "array '%s': shard '%s' is too short for its index (%zu bytes)", a->path,
                       q->key, a->index_nbytes);
    if (q->status < 0) return zc__err_wrap(q->status, "array '%s': reading index of shard '%s'", a->path, q->key);
    atomic_fetch_add(&a->bytes_read, (int64_t)q->size);
    int rc = zarr_shard_index_decode(a, q->data, q->size, idx);
    if (rc < 0) return zc__err_wrap(rc, "array '%s': index of shard '%s'", a->path, q->key);
    ZC_TRY(shard_index_check(a, idx, q->total, q->key));
    ss->present[t] = true;
    shard_cache_put(a->index_cache, l->ids[t], idx, true, q->total);
    return 0;
}

int shard_set_load(shard_set *ss, zc_zarr *a, const zarr_sel *s, pool *p, int width)
{
    memset(ss, 0, sizeof *ss);
    ss->ndim = s->ndim;
    size_t n = 1;
    for (int d = 0; d < s->ndim; d++) {
        ss->ratio[d] = a->m.chunks[d] / a->m.inner[d];
        ss->ids[d] = zc__malloc_array((size_t)s->nspans[d], sizeof(int64_t));
        if (!ss->ids[d]) return ZC_ENOMEM;
        int64_t k = 0;
        for (int64_t i = 0; i < s->nspans[d]; i++) {
            int64_t id = s->spans[d][i].chunk / ss->ratio[d];
            if (k == 0 || ss->ids[d][k - 1] != id) ss->ids[d][k++] = id;
        }
        ss->nids[d] = k;
        if (ck_mul_sz(n, (size_t)k, &n)) return zc__err(ZC_EOVERFLOW, "number of shards overflows");
    }
    ss->nshards = n;
    load_ctx l = {ss, a, NULL, NULL, NULL};
    size_t per = (size_t)a->inner_per_shard * 2, nmiss = 0;
    ss->index = zc__malloc_array(n, per * sizeof(uint64_t));
    ss->present = zc__calloc(n, sizeof(bool));
    l.ids = zc__malloc_array(n, sizeof(uint64_t));
    ss->keys = zc__malloc_array(n, KEY_LEN);
    int rc = 0;
    if (!ss->index || !ss->present || !l.ids || !ss->keys) {
        rc = ZC_ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < n; t++) {
        int64_t c[ZC_MAX_DIMS];
        uint64_t size;
        shard_coord(ss, t, c);
        l.ids[t] = zarr_grid_id(a, c);
        if ((rc = zarr_chunk_key(a, c, ss->keys[t], KEY_LEN)) < 0) goto out;
        if (shard_cache_get(a->index_cache, l.ids[t], ss->index + t * per, &ss->present[t], &size)) continue;
        if (!l.reqs) { /* first miss: room for all */
            l.reqs = zc__calloc(n, sizeof(store_req));
            l.which = zc__malloc_array(n, sizeof(size_t));
            if (!l.reqs || !l.which) {
                rc = ZC_ENOMEM;
                goto out;
            }
        }
        l.reqs[nmiss] = (store_req){.key = ss->keys[t], .offset = 0, .length = a->index_nbytes,
                                    .from_end = a->m.index_at_end};
        l.which[nmiss++] = t;
    }
    atomic_fetch_add(&a->index_hits, (int64_t)(n - nmiss));
    atomic_fetch_add(&a->index_misses, (int64_t)nmiss);
    if (nmiss == 0) goto out;
    if ((rc = store_get_many(a->st, l.reqs, nmiss)) < 0) goto out;
    rc = pool_for(p, nmiss, width, decode_one, &l);
out:
    if (l.reqs)
        for (size_t m = 0; m < nmiss; m++) zc__free(l.reqs[m].data);
    zc__free(l.reqs);
    zc__free(l.which);
    zc__free(l.ids);
    return rc;
}

int shard_set_locate(const shard_set *ss, const zc_zarr *a, const int64_t *coord, const char **key, uint64_t *off,
                     uint64_t *len)
{
    size_t t = 0;
    int64_t inner = 0;
    for (int d = 0; d < ss->ndim; d++) {
        int64_t sc = coord[d] / ss->ratio[d];
        t = t * (size_t)ss->nids[d] + (size_t)find(ss->ids[d], ss->nids[d], sc);
        inner = inner * ss->ratio[d] + coord[d] % ss->ratio[d];
    }
    *off = UINT64_MAX;
    *len = 0;
    *key = ss->keys[t];
    if (!ss->present[t]) return 0;
    const uint64_t *e = ss->index + (t * (size_t)a->inner_per_shard + (size_t)inner) * 2;
    if (e[0] == UINT64_MAX && e[1] == UINT64_MAX) return 0;
    *off = e[0];
    *len = e[1];
    return 0;
}

void shard_set_free(shard_set *ss)
{
    for (int d = 0; d < ZC_MAX_DIMS; d++) zc__free(ss->ids[d]);
    zc__free(ss->index);
    zc__free(ss->present);
    zc__free(ss->keys);
    memset(ss, 0, sizeof *ss);
}
