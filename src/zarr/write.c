/* zarr/write.c — writing a hyperslab.
 *
 * One pool task per touched chunk (or per touched shard). A chunk the
 * selection covers whole (up to the array's edge) starts from the fill value
 * (its padding past the edge; a chunk inside the array is overwritten whole);
 * one covered in part is read and decoded first (read-modify-write). A covered
 * chunk laid out in the caller's buffer as it is in the chunk is encoded from
 * there, and an uncompressed one stored from there, without a copy. A chunk
 * that ends up all fill value is erased unless write_empty_chunks is set.
 * A shard is rebuilt whole: touched inner chunks are re-encoded, the others'
 * bytes are carried over, and the new object replaces the old one atomically.
 *
 * Two writers touching the same chunk at once must be serialized by the caller. */
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/copy.h"
#include "zarr/select.h"
#include "zarr/shard.h"
#include "zarr/shard_cache.h"

#define KEY_LEN 1024

typedef struct {
    zc_zarr *a;
    zarr_sel s;
    const unsigned char *src;
    unsigned char **scratch;   /* per slot: one decoded unit */
    /* sharded: touched shards */
    int64_t *sids[ZC_MAX_DIMS];
    int64_t nsids[ZC_MAX_DIMS];
    int64_t ratio[ZC_MAX_DIMS];
} write_ctx;

/* Find the span covering unit `c` in dimension d, or -1. */
static int64_t span_of(const zarr_sel *s, int d, int64_t c)
{
    int64_t lo = 0, hi = s->nspans[d];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->spans[d][mid].chunk < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->nspans[d] && s->spans[d][lo].chunk == c ? lo : -1;
}

/* Geometry of unit j; *covers: the selection covers every valid element of the unit. */
static void geometry(const write_ctx *w, const int64_t *j, int64_t *coord, int64_t *src_off, int64_t *chunk_off,
                     int64_t *cstride, int64_t *count, bool *covers)
{
    const zarr_sel *s = &w->s;
    const zc_zarr *a = w->a;
    *src_off = *chunk_off = 0;
    *covers = true;
    for (int d = 0; d < s->ndim; d++) {
        const zarr_span *sp = &s->spans[d][j[d]];
        coord[d] = sp->chunk;
        *src_off += sp->out_off * s->ostride[d];
        *chunk_off += sp->in_start * s->cstride[d];
        cstride[d] = sp->count > 1 ? s->cstride[d] * s->step[d] : 0; /* a huge step selects one element */
        count[d] = sp->count;
        int64_t valid = a->m.shape[d] - sp->chunk * a->rchunk[d];
        if (valid > a->rchunk[d]) valid = a->rchunk[d];
        if (sp->in_start != 0 || s->step[d] != 1 || sp->count != valid) *covers = false;
    }
}

/* Build the decoded unit in buf: fill or existing bytes, then the caller's data. */
static int merge_unit(write_ctx *w, const int64_t *j, unsigned char *buf, const void *old, size_t old_size,
                      const char *what)
{
    zc_zarr *a = w->a;
    int64_t coord[ZC_MAX_DIMS], src_off, chunk_off, cstride[ZC_MAX_DIMS], count[ZC_MAX_DIMS];
    bool covers;
    geometry(w, j, coord, &src_off, &chunk_off, cstride, count, &covers);
    bool full = covers; /* every element of the unit written: nothing to fill (an edge unit has padding) */
    for (int d = 0; d < w->s.ndim && full; d++) full = count[d] == a->rchunk[d];
    if (full) {
        /* the copy below writes every byte of buf */
    } else if (covers || !old) {
        zarr_fill(a, buf, a->rchunk_nbytes / a->m.dtype.size);
    } else {
        int rc = codec_chain_decode(a->chain, old, old_size, buf, a->rchunk_nbytes);
        if (rc < 0) return zc__err_wrap(rc, "array '%s': %s (existing data)", a->path, what);
    }
    zarr_copy_nd(buf + chunk_off, cstride, w->src + src_off, w->s.ostride, count, w->s.ndim, a->m.dtype.size);
    return 0;
}

/* The caller's data for a chunk it covers whole (no edge padding) is the chunk
 * itself when their layouts agree: encode it from there, with no copy. */
static bool in_place(const write_ctx *w, const int64_t *count, bool covers)
{
    if (!covers) return false;
    for (int d = 0; d < w->s.ndim; d++) {
        if (count[d] != w->a->rchunk[d]) return false;
        if (count[d] > 1 && w->s.cstride[d] != w->s.ostride[d]) return false;
    }
    return true;
}

static unsigned char *slot_buf(write_ctx *w, int slot)
{
    if (!w->scratch[slot]) w->scratch[slot] = zc__malloc(w->a->rchunk_nbytes);
    return w->scratch[slot];
}

static int write_chunk(void *vctx, size_t t, int slot)
{
    write_ctx *w = vctx;
    zc_zarr *a = w->a;
    int64_t j[ZC_MAX_DIMS], coord[ZC_MAX_DIMS], so, co, cs[ZC_MAX_DIMS], cnt[ZC_MAX_DIMS];
    char key[KEY_LEN];
    bool covers;
    zarr_sel_unravel(&w->s, t, j);
    geometry(w, j, coord, &so, &co, cs, cnt, &covers);
    ZC_TRY(zarr_chunk_key(a, coord, key, sizeof key));
    const unsigned char *data = in_place(w, cnt, covers) ? w->src + so : NULL;
    if (!data) {
        unsigned char *buf = slot_buf(w, slot);
        if (!buf) return ZC_ENOMEM;
        void *old = NULL;
        size_t old_size = 0;
        if (!covers) {
            int rc = store_get(a->st, key, &old, &old_size);
            if (rc < 0 && rc != ZC_ENOENT) return zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, key);
        }
        char what[KEY_LEN + 16];
        snprintf(what, sizeof what, "chunk '%s'", key);
        int rc = merge_unit(w, j, buf, old, old_size, what);
        zc__free(old);
        ZC_TRY(rc);
        data = buf;
    }
    if (!a->write_empty_chunks && zarr_is_fill(a, data, a->rchunk_nbytes)) return store_erase(a->st, key);
    int rc;
    if (codec_chain_is_identity(a->chain)) {
        rc = store_put(a->st, key, data, a->rchunk_nbytes); /* stored bytes are the decoded bytes */
    } else {
        zc_buf enc = {0};
        rc = codec_chain_encode(a->chain, data, a->rchunk_nbytes, &enc);
        if (rc == 0) rc = store_put(a->st, key, enc.data, enc.size);
        buf_free(&enc);
    }
    if (rc < 0) return zc__err_wrap(rc, "array '%s': writing chunk '%s'", a->path, key);
    return 0;
}

/* ---- sharded ---- */

static int write_shard(void *vctx, size_t t, int slot)
{
    write_ctx *w = vctx;
    zc_zarr *a = w->a;
    const zarr_sel *s = &w->s;
    int nd = s->ndim;
    int64_t sc[ZC_MAX_DIMS];
    size_t rem = t;
    for (int d = nd - 1; d >= 0; d--) {
        sc[d] = w->sids[d][rem % (size_t)w->nsids[d]];
        rem /= (size_t)w->nsids[d];
    }
    char key[KEY_LEN];
    ZC_TRY(zarr_chunk_key(a, sc, key, sizeof key));
    size_t nin = (size_t)a->inner_per_shard;
    uint64_t *old_index = zc__malloc_array(nin, 16), *index = zc__malloc_array(nin, 16);
    unsigned char *buf = slot_buf(w, slot);
    void *old = NULL;
    size_t old_size = 0;
    zc_buf body = {0}, enc = {0};
    int rc = 0;
    if (!old_index || !index || !buf) {
        rc = ZC_ENOMEM;
        goto out;
    }
    rc = store_get(a->st, key, &old, &old_size);
    if (rc == ZC_ENOENT) {
        rc = 0;
    } else if (rc < 0) {
        zc__err_wrap(rc, "array '%s': shard '%s'", a->path, key);
        goto out;
    } else {
        if (old_size < a->index_nbytes) {
            rc = zc__err(ZC_ECORRUPT, "array '%s': shard '%s' is shorter (%zu bytes) than its index", a->path, key,
                         old_size);
            goto out;
        }
        const unsigned char *ip = (const unsigned char *)old + (a->m.index_at_end ? old_size - a->index_nbytes : 0);
        if ((rc = zarr_shard_index_decode(a, ip, a->index_nbytes, old_index)) < 0) {
            zc__err_wrap(rc, "array '%s': index of shard '%s'", a->path, key);
            goto out;
        }
        if ((rc = shard_index_check(a, old_index, old_size, key)) < 0) goto out;
    }
    if (!old) memset(old_index, 0xff, nin * 16);
    size_t base = a->m.index_at_end ? 0 : a->index_nbytes;
    bool any = false;
    for (size_t i = 0; i < nin; i++) {
        /* inner chunk coordinates in the array's inner grid */
        int64_t c[ZC_MAX_DIMS], j[ZC_MAX_DIMS];
        size_t r = i;
        bool touched = true, inside = true;
        for (int d = nd - 1; d >= 0; d--) {
            c[d] = sc[d] * w->ratio[d] + (int64_t)(r % (size_t)w->ratio[d]);
            r /= (size_t)w->ratio[d];
            if (c[d] >= a->rgrid[d]) inside = false;
        }
        for (int d = 0; d < nd && inside && touched; d++)
            if ((j[d] = span_of(s, d, c[d])) < 0) touched = false;
        uint64_t off = old_index[2 * i], len = old_index[2 * i + 1];
        bool had = old && !(off == UINT64_MAX && len == UINT64_MAX);
        if (!inside || !touched) {
            if (had) {
                index[2 * i] = base + body.size;
                index[2 * i + 1] = len;
                if ((rc = buf_append(&body, (unsigned char *)old + off, len)) < 0) goto out;
                any = true;
            } else {
                index[2 * i] = index[2 * i + 1] = UINT64_MAX;
            }
            continue;
        }
        char what[KEY_LEN + 64];
        snprintf(what, sizeof what, "shard '%s' inner chunk %zu", key, i);
        if ((rc = merge_unit(w, j, buf, had ? (unsigned char *)old + off : NULL, had ? len : 0, what)) < 0) goto out;
        if (!a->write_empty_chunks && zarr_is_fill(a, buf, a->rchunk_nbytes)) {
            index[2 * i] = index[2 * i + 1] = UINT64_MAX;
            continue;
        }
        size_t before = body.size;
        if ((rc = codec_chain_encode(a->chain, buf, a->rchunk_nbytes, &enc)) < 0) goto out;
        rc = buf_append(&body, enc.data, enc.size);
        buf_free(&enc);
        if (rc < 0) goto out;
        index[2 * i] = base + before;
        index[2 * i + 1] = body.size - before;
        any = true;
    }
    shard_cache_drop(a->index_cache, zarr_grid_id(a, sc));
    if (!any) {
        rc = store_erase(a->st, key);
        goto out;
    }
    zc_buf idx = {0};
    if ((rc = zarr_shard_index_encode(a, index, &idx)) < 0) goto out;
    if (idx.size != a->index_nbytes) {
        buf_free(&idx);
        rc = zc__err(ZC_EINTERNAL, "shard index encoded to %zu bytes, expected %zu", idx.size, a->index_nbytes);
        goto out;
    }
    zc_buf obj = {0};
    if (a->m.index_at_end) {
        rc = buf_append(&body, idx.data, idx.size);
        buf_free(&idx);
        if (rc == 0) rc = store_put(a->st, key, body.data, body.size);
    } else {
        rc = buf_append(&obj, idx.data, idx.size);
        buf_free(&idx);
        if (rc == 0) rc = buf_append(&obj, body.data, body.size);
        if (rc == 0) rc = store_put(a->st, key, obj.data, obj.size);
        buf_free(&obj);
    }
    if (rc < 0) zc__err_wrap(rc, "array '%s': writing shard '%s'", a->path, key);
out:
    zc__free(old);
    zc__free(old_index);
    zc__free(index);
    buf_free(&body);
    buf_free(&enc);
    return rc;
}

static int plan_shards(write_ctx *w, size_t *n)
{
    const zarr_sel *s = &w->s;
    *n = 1;
    for (int d = 0; d < s->ndim; d++) {
        w->ratio[d] = w->a->m.chunks[d] / w->a->m.inner[d];
        w->sids[d] = zc__malloc_array((size_t)s->nspans[d], sizeof(int64_t));
        if (!w->sids[d]) return ZC_ENOMEM;
        int64_t k = 0;
        for (int64_t i = 0; i < s->nspans[d]; i++) {
            int64_t id = s->spans[d][i].chunk / w->ratio[d];
            if (k == 0 || w->sids[d][k - 1] != id) w->sids[d][k++] = id;
        }
        w->nsids[d] = k;
        if (ck_mul_sz(*n, (size_t)k, n)) return zc__err(ZC_EOVERFLOW, "number of shards overflows");
    }
    return 0;
}

int zc_zarr_write(zc_zarr *a, const zc_range *sel, const void *src, size_t src_size)
{
    zc__err_clear();
    if (!a || (!src && src_size)) return zc__err(ZC_EINVAL, "zc_zarr_write: NULL argument");
    if (a->st->flags & ZC_STORE_READONLY) return zc__err(ZC_EINVAL, "array '%s': the store is read-only", a->path);
    write_ctx w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.src = src;
    int rc = zarr_sel_plan(a, sel, &w.s);
    if (rc < 0) return zc__err_wrap(rc, "array '%s'", a->path);
    size_t need;
    if (ck_mul_sz(w.s.nelems, a->m.dtype.size, &need)) {
        rc = zc__err(ZC_EOVERFLOW, "selection size overflows");
        goto out;
    }
    if (src_size < need) {
        rc = zc__err(ZC_EINVAL, "array '%s': buffer of %zu bytes is too small for the selection (%zu bytes)", a->path,
                     src_size, need);
        goto out;
    }
    if (w.s.nchunks == 0) goto out;
    pool *p = zarr_pool(a);
    int nslots = pool_width(p, a->nthreads);
    if (!(w.scratch = zc__calloc((size_t)nslots, sizeof(unsigned char *)))) {
        rc = ZC_ENOMEM;
        goto out;
    }
    if (a->m.sharded) {
        size_t nshards;
        if ((rc = plan_shards(&w, &nshards)) < 0) goto out;
        rc = pool_for(p, nshards, a->nthreads, write_shard, &w);
    } else {
        rc = pool_for(p, w.s.nchunks, a->nthreads, write_chunk, &w);
    }
    for (int i = 0; i < nslots; i++) zc__free(w.scratch[i]);
out:
    zc__free(w.scratch);
    for (int d = 0; d < ZC_MAX_DIMS; d++) zc__free(w.sids[d]);
    zarr_sel_free(&w.s);
    return rc;
}
