/* zarr/part.c — reading a box of one chunk by its blocks, for chunks stored
 * in blocks that can be fetched apart (codec_blocks: blosc1).
 *
 * A single-pass rechunk from a remote store (exec/run.c copy_region; locally
 * the usual mapped read is faster) fetches from each source chunk only the
 * part its block needs: e.g. 100 of 987 rows of each of the 10 time
 * steps of a (10, 1, 987, 1920) chunk, ten runs of 1.5 MB spread over 151 MB.
 * One read of that box through zc_zarr_read would decode the chunk from its
 * first selected byte to its last (nearly all of it); here the box's runs mark
 * the blocks they lie in, only those blocks' stored bytes are fetched
 * (adjacent ones in one range) into a buffer kept at their offsets, and only
 * they are decoded, into a decoded chunk's buffer kept between calls (its pages
 * are touched once per task, not once per read).
 *
 * Layout (codec_chain_blocks): a header, then the stored start of each block,
 * then the blocks in order. A block's bytes end where the next one starts (the
 * last ends at cbytes). The header copied into the buffer is made to declare
 * the end of the last fetched byte (codec_chain_blocks_limit), so the decoder
 * never reads past what was fetched. Chunks this reader does not handle
 * (unordered starts, tiny blocks, more stored bytes than its buffer) return 1:
 * the caller reads them the usual way, which also reports their errors. */
#include "zarr/part.h"

#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/copy.h"
#include "zarr/zarr.h"

#define PREFIX ((size_t)4096)            /* first fetch: header and (usually) block starts */
#define MIN_BLOCK ((size_t)16 << 10)     /* smaller blocks: read the usual way */
#define GAP ((size_t)64 << 10)           /* fetch the stored bytes between two needed blocks this close */
#define KEY_LEN 1024

static size_t cbuf_capacity(size_t chunk) { return chunk + chunk / 16 + ((size_t)1 << 20); }

size_t zarr_part_mem(size_t chunk_nbytes)
{
    size_t c = chunk_nbytes, r;
    if (c > SIZE_MAX / 4) return SIZE_MAX;
    r = c + cbuf_capacity(c) + c / MIN_BLOCK + 1 + 2 * PREFIX;
    return r;
}

void zarr_part_free(zarr_part *p)
{
    if (!p) return;
    zc__free(p->scratch);
    zc__free(p->cbuf);
    zc__free(p->need);
    memset(p, 0, sizeof *p);
}

static int fetch(zc_zarr *a, const char *key, store_req *q, size_t n)
{
    int rc = store_get_many(a->st, q, n);
    if (rc < 0) return zc__err_wrap(rc, "array '%s': reading chunk '%s'", a->path, key);
    for (size_t k = 0; k < n; k++) {
        if (q[k].status == ZC_ENOENT || q[k].status == ZC_ERANGE || (q[k].status == 0 && q[k].size != q[k].length))
            return zc__err(ZC_ECORRUPT, "array '%s': chunk '%s' ended or vanished while being read", a->path, key);
        if (q[k].status < 0) return zc__err_wrap(q[k].status, "array '%s': reading chunk '%s'", a->path, key);
        atomic_fetch_add(&a->bytes_read, (int64_t)q[k].size);
    }
    return 0;
}

/* The next run [*j, *j1] of needed blocks at or after *j; false when none is left. */
static bool next_run(const unsigned char *need, size_t nblocks, size_t *j, size_t *j1)
{
    while (*j < nblocks && !need[*j]) (*j)++;
    if (*j >= nblocks) return false;
    for (*j1 = *j; *j1 + 1 < nblocks && need[*j1 + 1];) (*j1)++;
    return true;
}

int zarr_part_read(zc_zarr *a, const int64_t *coord, const int64_t *lo, const int64_t *cnt, void *dst,
                   const int64_t *dstride, zarr_part *p)
{
    int nd = a->m.ndim;
    size_t isz = a->m.dtype.size, C = a->rchunk_nbytes;
    if (a->m.sharded || !codec_chain_has_blocks(a->chain) || C == 0) return 1;
    for (int d = 0; d < nd; d++)
        if (lo[d] < 0 || cnt[d] < 0 || cnt[d] > a->rchunk[d] - lo[d] || coord[d] < 0 || coord[d] >= a->rgrid[d])
            return zc__err(ZC_EINVAL, "array '%s': box [%lld, +%lld) of chunk %lld is outside it along dim %d", a->path,
                           (long long)lo[d], (long long)cnt[d], (long long)coord[d], d);
    for (int d = 0; d < nd; d++)
        if (cnt[d] == 0) return 0;
    char key[KEY_LEN];
    ZC_TRY(zarr_chunk_key(a, coord, key, sizeof key));
    if (!p->scratch && !(p->scratch = zc__malloc(C))) return ZC_ENOMEM;
    if (!p->cbuf) {
        p->cbuf_cap = cbuf_capacity(C);
        if (!(p->cbuf = zc__malloc(p->cbuf_cap))) return ZC_ENOMEM;
    }
    unsigned char *cb = p->cbuf;
    int64_t cs[ZC_MAX_DIMS], s = (int64_t)isz, off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        cs[d] = s;
        off += lo[d] * s;
        s *= a->rchunk[d];
    }

    /* header and block starts */
    store_req q = {.key = key, .offset = 0, .length = PREFIX, .buf = cb, .buf_cap = PREFIX};
    int rc = store_get_many(a->st, &q, 1);
    if (rc < 0) return zc__err_wrap(rc, "array '%s': reading chunk '%s'", a->path, key);
    if (q.status == ZC_ENOENT) { /* never written: the fill value */
        zarr_fill_nd(dst, dstride, cnt, nd, a->m.fill, isz);
        return 0;
    }
    if (q.status != 0) return 1; /* shorter than the prefix (a small stored chunk), or an error: usual way */
    codec_blocks h;
    if (!codec_chain_blocks(a->chain, cb, q.size, &h)) return 1;
    size_t nbytes = h.nbytes, bs = h.blocksize, cbytes = h.cbytes;
    if (!h.known || nbytes != C || cbytes < CODEC_BLOCKS_HEAD || cbytes > p->cbuf_cap || bs < MIN_BLOCK)
        return 1;
    atomic_fetch_add(&a->chunks_read, 1);
    atomic_fetch_add(&a->bytes_read, (int64_t)q.size);

    /* the runs of the box: dims after q whole, one run per index of the dims before it */
    int qd = -1;
    for (int d = nd - 1; d >= 0 && qd < 0; d--)
        if (lo[d] != 0 || cnt[d] != a->rchunk[d]) qd = d;
    size_t nblocks = h.nblocks, table = h.table;
    bool whole = qd < 0 || nblocks == 1 || !h.split;
    if (!whole && table > cbytes)
        return zc__err(ZC_ECORRUPT, "array '%s': chunk '%s': its header declares %zu blocks, more than its %zu bytes "
                       "hold", a->path, key, nblocks, cbytes);
    if (!whole) {
        if (nblocks > p->need_cap) {
            zc__free(p->need);
            p->need_cap = 0;
            if (!(p->need = zc__malloc(nblocks))) return ZC_ENOMEM;
            p->need_cap = nblocks;
        }
        unsigned char *need = p->need;
        memset(need, 0, nblocks);
        int64_t idx[ZC_MAX_DIMS] = {0}, runlen = cnt[qd] * cs[qd];
        size_t marked = 0;
        for (;;) {
            int64_t st = off;
            for (int d = 0; d < qd; d++) st += idx[d] * cs[d];
            for (size_t j = (size_t)st / bs; j <= (size_t)(st + runlen - 1) / bs; j++) {
                marked += !need[j];
                need[j] = 1;
            }
            int d = qd - 1;
            for (; d >= 0; d--) {
                if (++idx[d] < cnt[d]) break;
                idx[d] = 0;
            }
            if (d < 0) break;
        }
        whole = marked == nblocks;
        if (!whole) {
            if (table > PREFIX) { /* the rest of the block starts */
                store_req t = {.key = key, .offset = PREFIX, .length = table - PREFIX, .buf = cb + PREFIX,
                               .buf_cap = table - PREFIX};
                ZC_TRY(fetch(a, key, &t, 1));
            }
            /* stored ranges of the needed blocks, in order (a start out of order: usual way) */
            size_t prev = table;
            for (size_t j = 0; j < nblocks; j++) {
                size_t at = codec_chain_block_start(a->chain, cb, j);
                if (at < prev || at >= cbytes || (j > 0 && at == prev)) return 1;
                prev = at;
            }
            store_req reqs[64];
            size_t nq = 0, s1 = table;
            for (size_t j = 0, j1 = 0; next_run(need, nblocks, &j, &j1); j = j1 + 1) {
                size_t b0 = codec_chain_block_start(a->chain, cb, j), b1 = j1 + 1 < nblocks ? codec_chain_block_start(a->chain, cb, j1 + 1) : cbytes;
                if (nq && b0 - (size_t)(reqs[nq - 1].offset + reqs[nq - 1].length) <= GAP) {
                    reqs[nq - 1].length = b1 - reqs[nq - 1].offset; /* with the gap */
                    reqs[nq - 1].buf_cap = (size_t)reqs[nq - 1].length;
                } else {
                    if (nq == 64) { /* fetch what is gathered, go on */
                        ZC_TRY(fetch(a, key, reqs, nq));
                        nq = 0;
                    }
                    reqs[nq++] = (store_req){.key = key, .offset = b0, .length = b1 - b0, .buf = cb + b0,
                                             .buf_cap = b1 - b0};
                }
                if (b1 > s1) s1 = b1;
            }
            ZC_TRY(fetch(a, key, reqs, nq));
            /* the decoder may read only [0, s1) */
            codec_chain_blocks_limit(a->chain, cb, s1);
            for (size_t j = 0, j1 = 0; next_run(need, nblocks, &j, &j1); j = j1 + 1) {
                size_t dlo, dhi, hi = (j1 + 1) * bs < nbytes ? (j1 + 1) * bs : nbytes;
                rc = codec_chain_decode_blocks(a->chain, cb, s1, p->scratch, C, j * bs, hi, &dlo, &dhi);
                if (rc < 0) return zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, key);
                if (!dhi) return 1;
            }
        }
    }
    if (whole) {
        if (cbytes > PREFIX) {
            store_req w = {.key = key, .offset = PREFIX, .length = cbytes - PREFIX, .buf = cb + PREFIX,
                           .buf_cap = cbytes - PREFIX};
            ZC_TRY(fetch(a, key, &w, 1));
        } else if (q.size < cbytes) {
            return 1;
        }
        rc = codec_chain_decode(a->chain, cb, cbytes, p->scratch, C);
        if (rc < 0) return zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, key);
    }
    zarr_copy_nd(dst, dstride, p->scratch + off, cs, cnt, nd, isz);
    return 0;
}
