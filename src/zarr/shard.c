/* zarr/shard.c — reading shard indexes (layout in shard.h). */
#include "zarr/shard.h"

#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "store/store.h"
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
    store_req *reqs;      /* one per cache miss: the index bytes (a view into the mapping, or read) */
    size_t *which;        /* miss m is touched shard which[m] */
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
    (void)slot;
    load_ctx *l = vctx;
    shard_set *ss = l->ss;
    zc_zarr *a = l->a;
    store_req *q = &l->reqs[m];
    size_t t = l->which[m];
    shard_ref *r = ss->refs[t];
    if (q->status == ZC_ENOENT) {
        r->present = false;
        shard_cache_insert(a->index_cache, l->ids[t], r);
        return 0;
    }
    if (q->status == ZC_ERANGE || (q->status == 0 && q->size != a->index_nbytes))
        return zc__err(ZC_ECORRUPT, "array '%s': shard '%s' is too short for its index (%zu bytes)", a->path,
                       q->key, a->index_nbytes);
    if (q->status < 0) return zc__err_wrap(q->status, "array '%s': reading index of shard '%s'", a->path, q->key);
    atomic_fetch_add(&a->bytes_read, (int64_t)q->size);
    /* room for the index only now that the shard holds one: a missing shard of
     * a huge grid costs its header, not inner_per_shard x 16 bytes */
    shard_ref *nr = shard_ref_new((size_t)a->inner_per_shard * 2);
    if (!nr) return ZC_ENOMEM;
    nr->map = r->map;
    nr->mm = r->mm;
    r->mm.handle = NULL; /* the mapping moves to nr */
    shard_ref_release(r);
    ss->refs[t] = r = nr;
    int rc = zarr_shard_index_decode(a, q->data, q->size, r->index);
    if (rc == ZC_ECHECKSUM && a->st->io_depth) { /* HTTP/S3: damaged in transit? read once more */
        store_req w = {.key = q->key, .offset = q->offset, .length = q->length, .from_end = q->from_end};
        if (store_get_many(a->st, &w, 1) == 0 && w.status == 0 && w.size == q->size)
            rc = zarr_shard_index_decode(a, w.data, w.size, r->index);
        if (rc == ZC_ECHECKSUM) zc__err_wrap(rc, "read twice, and twice the checksum did not match");
        zc__free(w.data);
    }
    if (rc < 0) return zc__err_wrap(rc, "array '%s': index of shard '%s'", a->path, q->key);
    ZC_TRY(shard_index_check(a, r->index, q->total, q->key));
    r->present = true;
    r->size = q->total;
    shard_cache_insert(a->index_cache, l->ids[t], r);
    return 0;
}

int shard_set_load(shard_set *ss, zc_zarr *a, const zarr_sel *s, pool *p, int width, bool map)
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
    size_t nmiss = 0, nread = 0;
    ss->refs = zc__calloc(n, sizeof(shard_ref *));
    l.ids = zc__malloc_array(n, sizeof(uint64_t));
    ss->keys = zc__malloc_array(n, KEY_LEN);
    store_req *rd = NULL; /* the misses read through the store */
    int rc = 0;
    if (!ss->refs || !l.ids || !ss->keys) {
        rc = ZC_ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < n; t++) {
        int64_t c[ZC_MAX_DIMS];
        shard_coord(ss, t, c);
        l.ids[t] = zarr_grid_id(a, c);
        if ((rc = zarr_chunk_key(a, c, ss->keys[t], KEY_LEN)) < 0) goto out;
        if ((ss->refs[t] = shard_cache_acquire(a->index_cache, l.ids[t]))) {
            /* A mapped shard must still have the mapped size and not have
             * lost pages to a file cut short in place (they read as zeros:
             * store_map_check). Replaced, resized or cut: drop it and map
             * the file there now. */
            uint64_t now;
            shard_ref *r = ss->refs[t];
            if (!r->map || (store_size(a->st, ss->keys[t], &now) == 0 && now == r->size && !store_map_check(&r->mm)))
                continue;
            shard_cache_drop(a->index_cache, l.ids[t]);
            shard_ref_release(r);
            ss->refs[t] = NULL;
        }
        if (!l.reqs) { /* first miss: room for all */
            l.reqs = zc__calloc(n, sizeof(store_req));
            l.which = zc__malloc_array(n, sizeof(size_t));
            rd = zc__calloc(n, sizeof(store_req));
            if (!l.reqs || !l.which || !rd) {
                rc = ZC_ENOMEM;
                goto out;
            }
        }
        if (!(ss->refs[t] = shard_ref_new(0))) { /* the index words come with the index (decode_one) */
            rc = ZC_ENOMEM;
            goto out;
        }
        store_req *q = &l.reqs[nmiss];
        *q = (store_req){.key = ss->keys[t], .offset = 0, .length = a->index_nbytes, .from_end = a->m.index_at_end};
        l.which[nmiss++] = t;
        /* Map the shard if the store can: its inner chunks are then read in
         * place (no read call, no copy), and its index comes from the same
         * file as its chunks. Else (or if it is too short) read the index. */
        shard_ref *r = ss->refs[t];
        uint64_t size, start, len;
        if (map && store_map(a->st, q->key, &r->mm) == 0) {
            r->map = r->mm.addr;
            r->size = size = r->mm.size;
            if (store_resolve_range(q, size, &start, &len) == 0) {
                q->data = (unsigned char *)r->map + start;
                q->size = (size_t)len;
                q->total = size;
                q->status = 0;
                continue;
            }
        }
        rd[nread++] = *q;
    }
    atomic_fetch_add(&a->index_hits, (int64_t)(n - nmiss));
    atomic_fetch_add(&a->index_misses, (int64_t)nmiss);
    if (nmiss == 0) goto out;
    if (nread && (rc = store_get_many(a->st, rd, nread)) < 0) goto out;
    for (size_t m = 0, k = 0; m < nmiss && k < nread; m++) /* in miss order: the read ones back in place */
        if (l.reqs[m].key == rd[k].key) l.reqs[m] = rd[k++];
    rc = pool_for(p, nmiss, width, decode_one, &l);
out:
    if (rd)
        for (size_t k = 0; k < nread; k++) zc__free(rd[k].data);
    zc__free(rd);
    zc__free(l.reqs);
    zc__free(l.which);
    zc__free(l.ids);
    return rc;
}

int shard_set_locate(const shard_set *ss, const zc_zarr *a, const int64_t *coord, const char **key, uint64_t *off,
                     uint64_t *len, const unsigned char **map)
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
    const shard_ref *r = ss->refs[t];
    if (map) *map = NULL;
    if (!r->present) return 0;
    const uint64_t *e = r->index + (size_t)inner * 2;
    if (e[0] == UINT64_MAX && e[1] == UINT64_MAX) return 0;
    *off = e[0];
    *len = e[1];
    if (map) *map = r->map;
    (void)a;
    return 0;
}

int shard_set_check(const shard_set *ss)
{
    int rc = 0;
    if (ss->refs)
        for (size_t t = 0; t < ss->nshards; t++)
            if (ss->refs[t] && store_map_check(&ss->refs[t]->mm) < 0) rc = ZC_EIO;
    return rc;
}

void shard_set_free(shard_set *ss)
{
    for (int d = 0; d < ZC_MAX_DIMS; d++) zc__free(ss->ids[d]);
    if (ss->refs)
        for (size_t t = 0; t < ss->nshards; t++) shard_ref_release(ss->refs[t]);
    zc__free(ss->refs);
    zc__free(ss->keys);
    memset(ss, 0, sizeof *ss);
}
