/* zarr/read.c — reading a hyperslab.
 *
 * The touched read units (chunks, or inner chunks of shards) are cut into
 * groups; a pool task takes one group, fetches all its objects or byte ranges
 * with one batched store get, and decodes each and copies it into place as
 * it arrives (store_get_many_each: on HTTP/S3 the rest of the batch keeps
 * coming meanwhile, so connections do not idle while a group decodes; the
 * group's buffers are the same, so is its memory). So one thread's IO
 * overlaps another's decoding, and a store sees many requests at once. A
 * unit that the selection covers whole, and that is contiguous in the
 * caller's buffer, decodes straight into it. On HTTP/S3 a unit whose bytes
 * fail their checksum (crc32c, zstd's, gzip's) is read once more after the
 * batch before that is an error: a body damaged in transit is not data.
 *
 * Sharded arrays first fetch and decode the index of every touched shard (one
 * batched get, ranges at the start or end of each shard object).
 *
 * Where the store maps objects (files: store_map), chunk files of unsharded,
 * compressed arrays are not read: they are mapped (the store keeps recent
 * mappings) and units decode straight from the page cache, with no request and
 * no copy (the page-cache copy was ~12% of a whole lz4 read's CPU); the next
 * unit's first bytes are prefetched while one decodes. A plain read drops the
 * pages of its mappings once their group is decoded (see read.h: RSS); with
 * ZARR_READ_MAP (the loader's random windows) they stay, and shards too are
 * mapped once and kept with their cached index, used in place by every later
 * read. Other stores, and files the store declines to map, are read as above.
 *
 * Reads much bigger than the cache (stream_dst) write the caller's buffer
 * with non-temporal stores where they copy or unshuffle rows into it.
 *
 * Chunks stored in blocks (codec_blocks) that do not land contiguously in the
 * caller's buffer are offered to the codec's scatter hook, which decodes them
 * block by block into a block-sized piece of scratch and puts only the selected
 * items in place (codec_chain_scatter; blosc takes lz4+shuffle chunks): no
 * pass over the whole decoded chunk, no strided copy after it (for whole
 * reads of (16, 256, 256) float32 chunks that copy out of a 4 MiB scratch was
 * 30% of the CPU). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/copy.h"
#include "zarr/read.h"
#include "zarr/select.h"
#include "zarr/shard.h"

#define GROUP_MAX 256 /* units of an HTTP/S3 group (its state is sized for it) */
#define LOCAL_GROUP_MAX 64
#define GROUP_BYTES ((size_t)12 << 20)
/* HTTP/S3: more requests in flight per group (each a round trip); with small
 * units (a shard's inner chunks of 256 KiB) it takes GROUP_MAX units to fill:
 * 64 of them made a 16 MiB group, one coalesced GET, so two threads had two
 * transfers in flight (a whole sharded read 1.44-1.51 s against 1.0 s with
 * 256 units, through 20 ms of latency) */
#define REMOTE_GROUP_BYTES ((size_t)64 << 20)
#define MAX_RANGES 8 /* byte ranges per uncompressed unit */
#define TWO_STEP_MIN ((size_t)256 << 10) /* chunks in blocks this big: read a part's blocks only */
#define PREFIX ((size_t)4096)            /* first read of such a part: header + block starts */
#define KEY_LEN 1024
#define MAP_MIN ((size_t)256 << 10) /* plain reads map chunk files of at least this decoded size */
#define STREAM_MIN ((size_t)16 << 20) /* reads at least this big may write dst with non-temporal stores */
#define STEP ((size_t)128 << 10) /* step-wise units: rows put in place after each step (zstd: a block, <= 128 KiB) */
/* Stored bytes no encoding of a unit of n decoded bytes reaches (incompressible
 * data grows by a small fraction plus headers in every codec): a chunk object
 * larger than this is refused before it is read (a stored-size bomb). */
#define STORED_MAX(n) ((uint64_t)(n) * 2 + ((uint64_t)1 << 20))
#define PREFETCH ((size_t)2048) /* bytes of the next mapped unit to prefetch (0.5 and 0 KiB: 8% more CPU) */

typedef struct {
    zc_zarr *a;
    zarr_sel s;
    unsigned char *dst;
    size_t group;           /* units per task */
    unsigned char **scratch; /* per slot, within a group: one decoded unit */
    unsigned char **arena;   /* per slot, within a group: its stored bytes (chunks: their likely size) */
    size_t *arena_cap;
    shard_set shards;       /* sharded arrays: indexes of touched shards */
    bool identity;          /* stored bytes are the decoded bytes (bytes codec only) */
    bool blocks;            /* stored chunks are in blocks fetched apart (codec_chain_has_blocks) */
    bool scatter;           /* try codec_chain_scatter for units not direct */
    bool map_chunks;        /* unsharded, not identity: map chunk files (store_map) where the store can */
    bool drop_maps;         /* ZARR_READ_DROP: drop the pages of every mapping once decoded */
    bool drop_whole;        /* plain reads: drop those of chunks read whole, keep those read in part */
    bool steps;             /* units decode step-wise (codec_chain_has_steps: zstd): parts a step at a time, rows put in place as they come */
    bool stream;            /* dst is much bigger than the cache: scatter with non-temporal stores */
} read_ctx;

/* Whether a read of `need` bytes should write its destination around the
 * cache: when it is larger than a quarter of the last-level cache (at least
 * STREAM_MIN), the lines written first are gone by the end anyway, and
 * non-temporal stores save reading every destination line before writing it
 * (whole reads of 1 GiB lz4 chunks: 20% less CPU). */
static _Atomic size_t stream_min_set; /* zarr_read_set_stream_min */

void zarr_read_set_stream_min(size_t n) { atomic_store(&stream_min_set, n); }

static bool stream_dst(size_t need)
{
    size_t set = atomic_load_explicit(&stream_min_set, memory_order_relaxed);
    if (set) return need >= set;
    if (need < STREAM_MIN) return false;
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    size_t lim = l3 > 0 ? (size_t)l3 / 4 : STREAM_MIN * 2;
    return need >= (lim > STREAM_MIN ? lim : STREAM_MIN);
}

/* memcpy of run bytes (64 or more) with non-temporal stores where dst is
 * 16-byte aligned; the caller ends with _mm_sfence. */
static void copy_run_stream(unsigned char *o, const unsigned char *p, size_t run)
{
#if defined(__SSE2__)
    size_t head = (16 - ((uintptr_t)o & 15)) & 15, i = head;
    if (head > run) head = i = run;
    memcpy(o, p, head);
    for (; i + 64 <= run; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(p + i + 48));
        _mm_stream_si128((__m128i *)(o + i), a);
        _mm_stream_si128((__m128i *)(o + i + 16), b);
        _mm_stream_si128((__m128i *)(o + i + 32), c);
        _mm_stream_si128((__m128i *)(o + i + 48), e);
    }
    memcpy(o + i, p + i, run - i);
#else
    memcpy(o, p, run);
#endif
}

/* zarr_copy_nd for a destination written around the cache (read_ctx.stream):
 * runs contiguous on both sides, 256 bytes or more, go with non-temporal
 * stores (16-byte aligned in dst; the few bytes before and after with
 * memcpy). false when the geometry is not of that kind (nothing copied). */
static bool copy_nd_stream(unsigned char *dst, const int64_t *dstride, const unsigned char *src,
                           const int64_t *sstride, const int64_t *count, int ndim, size_t isz)
{
#if defined(__SSE2__)
    int64_t ds[ZC_MAX_DIMS], ss[ZC_MAX_DIMS], n[ZC_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < ndim; d++) {
        if (count[d] == 0) return true;
        if (count[d] == 1) continue;
        if (m > 0 && ds[m - 1] == dstride[d] * count[d] && ss[m - 1] == sstride[d] * count[d]) {
            n[m - 1] *= count[d];
            ds[m - 1] = dstride[d];
            ss[m - 1] = sstride[d];
            continue;
        }
        ds[m] = dstride[d];
        ss[m] = sstride[d];
        n[m++] = count[d];
    }
    if (m == 0 || ds[m - 1] != (int64_t)isz || ss[m - 1] != (int64_t)isz) return false;
    size_t run = (size_t)n[m - 1] * isz;
    if (run < 256) return false;
    int64_t k[ZC_MAX_DIMS] = {0}, doff = 0, soff = 0;
    for (;;) {
        copy_run_stream(dst + doff, src + soff, run);
        int d = m - 2;
        for (; d >= 0; d--) {
            doff += ds[d];
            soff += ss[d];
            if (++k[d] < n[d]) break;
            doff -= n[d] * ds[d];
            soff -= n[d] * ss[d];
            k[d] = 0;
        }
        if (d < 0) break;
    }
    _mm_sfence();
    return true;
#else
    (void)dst, (void)dstride, (void)src, (void)sstride, (void)count, (void)ndim, (void)isz;
    return false;
#endif
}

/* The selected rows of a unit (innermost dim contiguous on both sides), put
 * in place as its decoded bytes arrive (codec_chain_decode_steps): a row is
 * copied once the bytes decoded so far hold it, so it is read back from the
 * cache, not from memory. */
typedef struct {
    unsigned char *dst;      /* the unit's first selected element in dst */
    const unsigned char *src; /* the decoded unit */
    int m;                   /* walked dims (merged where contiguous), the last one the rows */
    int64_t n[ZC_MAX_DIMS], ds[ZC_MAX_DIMS], ss[ZC_MAX_DIMS], k[ZC_MAX_DIMS];
    int64_t doff, soff;      /* the next row: in dst, and in the decoded unit (from its start) */
    size_t run;              /* bytes per row */
    bool end, stream;
} row_walk;

static bool row_walk_init(row_walk *w, unsigned char *dst, const int64_t *dstride, const unsigned char *src,
                          int64_t src_off, const int64_t *sstride, const int64_t *count, int ndim, size_t isz,
                          bool stream)
{
    memset(w, 0, sizeof *w);
    int m = 0;
    for (int d = 0; d < ndim; d++) {
        if (count[d] == 0) return false;
        if (count[d] == 1) continue;
        if (m > 0 && w->ds[m - 1] == dstride[d] * count[d] && w->ss[m - 1] == sstride[d] * count[d]) {
            w->n[m - 1] *= count[d];
            w->ds[m - 1] = dstride[d];
            w->ss[m - 1] = sstride[d];
            continue;
        }
        w->ds[m] = dstride[d];
        w->ss[m] = sstride[d];
        w->n[m++] = count[d];
    }
    if (m == 0) { /* one element */
        w->n[0] = 1;
        w->ds[0] = w->ss[0] = (int64_t)isz;
        m = 1;
    }
    if (w->ds[m - 1] != (int64_t)isz || w->ss[m - 1] != (int64_t)isz) return false;
    w->m = m;
    w->run = (size_t)w->n[m - 1] * isz;
    w->dst = dst;
    w->src = src;
    w->soff = src_off;
    w->stream = stream;
    return true;
}

static void rows_step(void *vw, size_t done)
{
    row_walk *w = vw;
    while (!w->end && (size_t)w->soff + w->run <= done) {
        if (w->stream && w->run >= 64) copy_run_stream(w->dst + w->doff, w->src + w->soff, w->run);
        else memcpy(w->dst + w->doff, w->src + w->soff, w->run);
        int d = w->m - 2;
        for (; d >= 0; d--) {
            w->doff += w->ds[d];
            w->soff += w->ss[d];
            if (++w->k[d] < w->n[d]) break;
            w->doff -= w->n[d] * w->ds[d];
            w->soff -= w->n[d] * w->ss[d];
            w->k[d] = 0;
        }
        if (d < 0) w->end = true;
    }
}

/* Byte offset in dst and the copy geometry of touched unit t. */
static void unit_geometry(const read_ctx *r, const int64_t *j, int64_t *coord, int64_t *dst_off,
                          int64_t *src_off, int64_t *sstride, int64_t *count, bool *whole)
{
    const zarr_sel *s = &r->s;
    *dst_off = 0;
    *src_off = 0;
    *whole = true;
    for (int d = 0; d < s->ndim; d++) {
        const zarr_span *sp = &s->spans[d][j[d]];
        coord[d] = sp->chunk;
        *dst_off += sp->out_off * s->ostride[d];
        *src_off += sp->in_start * s->cstride[d];
        sstride[d] = sp->count > 1 ? s->cstride[d] * s->step[d] : 0; /* a huge step selects one element */
        count[d] = sp->count;
        if (sp->in_start != 0 || sp->count != r->a->rchunk[d] || s->step[d] != 1) *whole = false;
    }
}

/* A whole unit lands contiguously in dst iff, scanning from the last dim, the
 * unit spans the full output extent until one dim, and is 1 before it. */
static bool contiguous_in_dst(const zarr_sel *s, const int64_t *count)
{
    int d = s->ndim - 1;
    while (d >= 0 && count[d] == s->count[d]) d--;
    for (int k = d - 1; k >= 0; k--)
        if (count[k] != 1) return false;
    return true;
}

/* Bytes [lo, hi) of the decoded unit that hold its selected elements. */
static void sel_extent(const zarr_sel *s, int64_t src_off, const int64_t *sstride, const int64_t *count, size_t isz,
                       size_t *lo, size_t *hi)
{
    int64_t last = src_off;
    for (int d = 0; d < s->ndim; d++) last += (count[d] - 1) * sstride[d];
    *lo = (size_t)src_off;
    *hi = (size_t)last + isz;
}

/* The slabs of the outermost selected dimension of a unit: how many, their
 * distance and the bytes each spans. */
static void slabs(const zarr_sel *s, const int64_t *sstride, const int64_t *count, size_t isz, int64_t *n,
                  int64_t *step, size_t *ext)
{
    int d0 = 0;
    while (d0 < s->ndim - 1 && count[d0] == 1) d0++;
    *n = s->ndim ? count[d0] : 1;
    *step = s->ndim ? sstride[d0] : 0;
    *ext = isz;
    for (int d = d0 + 1; d < s->ndim; d++) *ext += (size_t)((count[d] - 1) * sstride[d]);
}

/* Status of the byte ranges of an uncompressed unit: a chunk of another size
 * (or a range past its end) is corrupt. */
static int check_ranges(const read_ctx *r, const store_req *q, size_t nq)
{
    const zc_zarr *a = r->a;
    for (size_t k = 0; k < nq; k++) {
        if (!a->m.sharded && (q[k].status == ZC_ERANGE || (q[k].status == 0 && q[k].total &&
                                                          q[k].total != a->rchunk_nbytes)))
            return zc__err(ZC_ECORRUPT, "array '%s': chunk '%s' has %llu bytes, expected %zu (uncompressed)",
                           a->path, q[k].key, (unsigned long long)q[k].total, a->rchunk_nbytes);
        if (q[k].status == ZC_ERANGE)
            return zc__err(ZC_ECORRUPT, "array '%s': shard '%s' ends before the inner chunk its index places at "
                           "byte offset %llu (%llu bytes)", a->path, q[k].key, (unsigned long long)q[k].offset,
                           (unsigned long long)q[k].length);
        if (q[k].status == ZC_ENOENT && k > 0)
            return zc__err(ZC_ECORRUPT, "array '%s': chunk '%s' vanished while being read", a->path, q[k].key);
        if (q[k].status < 0) return zc__err_wrap(q[k].status, "array '%s': reading '%s'", a->path, q[k].key);
        if (q[k].size != q[k].length)
            return zc__err(ZC_ECORRUPT, "array '%s': '%s' gave %zu bytes at offset %llu, expected %llu", a->path,
                           q[k].key, q[k].size, (unsigned long long)q[k].offset, (unsigned long long)q[k].length);
    }
    return 0;
}

/* Bytes [lo, hi) of a chunk in blocks whose first bytes (header and block starts)
 * are in q: fetch only the stored bytes of the blocks that hold them, placed
 * at their offsets in a buffer of the chunk's stored size (the rest of it is
 * never read), and decode those blocks into scratch. A block's stored bytes
 * end where the next block (in stored order) starts. Whenever that does not
 * work out (table longer than the prefix, every block needed, a buffer the
 * block decoder declines), the whole object is fetched and decoded as usual,
 * so errors are reported as for a whole chunk. */
static int read_blocks(const read_ctx *r, const store_req *q, uint64_t whole_len, size_t lo, size_t hi,
                       unsigned char *scratch)
{
    zc_zarr *a = r->a;
    const unsigned char *p = q->data;
    size_t n = q->status == 0 ? q->size : 0, dlo, dhi = 0;
    unsigned char *buf = NULL;
    int rc = 0;
    store_req seg = {.key = q->key};
    codec_blocks h;
    if (codec_chain_blocks(a->chain, p, n, &h) && h.known && h.split) {
        size_t nbytes = h.nbytes, bs = h.blocksize, cbytes = h.cbytes;
        size_t nblocks = h.nblocks, table = h.table;
        size_t j0 = bs ? lo / bs : 0, j1 = bs ? (hi - 1) / bs : 0;
        bool sized = whole_len == STORE_TO_END ? (q->total == 0 || q->total == cbytes) : whole_len == cbytes;
        if (nbytes == a->rchunk_nbytes && bs && table <= n && sized && !(j0 == 0 && j1 + 1 == nblocks) &&
            cbytes <= a->rchunk_nbytes * 2 + (1u << 20)) {
            size_t s0 = cbytes, s1 = table;
            for (size_t j = j0; j <= j1; j++) {
                size_t at = codec_chain_block_start(a->chain, p, j), end = cbytes;
                for (size_t k = 0; k < nblocks; k++) {
                    size_t b = codec_chain_block_start(a->chain, p, k);
                    if (b > at && b < end) end = b;
                }
                if (at < s0) s0 = at;
                if (end > s1) s1 = end;
            }
            /* buf holds bytes [0, s1) of the chunk, its header saying so: the
             * decoder then cannot read past what was fetched (corrupt lengths
             * of a block's streams would otherwise read unfetched bytes) */
            if (s0 >= table && s0 < s1 && s1 <= cbytes && (buf = zc__malloc(s1))) {
                memcpy(buf, p, table);
                codec_chain_blocks_limit(a->chain, buf, s1);
                seg.offset = q->offset + s0;
                seg.length = s1 - s0;
                seg.buf = buf + s0;
                seg.buf_cap = s1 - s0;
                if ((rc = store_get_many(a->st, &seg, 1)) < 0) goto out;
                if (seg.status == 0 && seg.size == s1 - s0) {
                    rc = codec_chain_decode_blocks(a->chain, buf, s1, scratch, a->rchunk_nbytes, lo, hi, &dlo, &dhi);
                    if (rc < 0) dhi = 0; /* decoded whole below, with the whole chunk's message */
                    rc = 0;
                    if (dhi) {
                        atomic_fetch_add(&a->chunks_read, 1);
                        atomic_fetch_add(&a->bytes_read, (int64_t)(q->size + seg.size));
                    }
                }
            }
        }
    }
    if (!dhi) { /* the whole object */
        store_req w = {.key = q->key, .offset = q->offset, .length = whole_len};
        if ((rc = store_get_many(a->st, &w, 1)) < 0) goto out;
        if (w.status == ZC_ENOENT || w.status == ZC_ERANGE)
            rc = zc__err(ZC_ECORRUPT, "array '%s': '%s' ended or vanished while being read", a->path, q->key);
        else if (w.status < 0)
            rc = zc__err_wrap(w.status, "array '%s': reading '%s'", a->path, q->key);
        else {
            atomic_fetch_add(&a->chunks_read, 1);
            atomic_fetch_add(&a->bytes_read, (int64_t)w.size);
            rc = codec_chain_decode_range(a->chain, w.data, w.size, scratch, a->rchunk_nbytes, lo, hi, &dlo, &dhi);
            if (rc < 0) zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, q->key);
        }
        zc__free(w.data);
    }
out:
    zc__free(buf);
    return rc;
}

/* The units of one group (read_group): their requests and geometry, in arrays
 * of the group's size (group_layout: one allocation). */
typedef struct {
    read_ctx *r;
    int slot;
    size_t n;                                   /* units */
    store_req *reqs;                            /* n * MAX_RANGES */
    uint16_t *unit_of;                          /* the unit of each request */
    size_t *left;                               /* its requests not complete yet */
    bool *late;                                 /* read again after the batch: a whole object larger than its
                                                 * buffer, or (HTTP/S3) bytes failing their checksum */
    char (*keys)[KEY_LEN];
    bool *skip;                                 /* no request: empty inner chunk or absent shard */
    size_t *lo, *hi;                            /* bytes of the decoded unit the selection needs */
    int64_t (*coords)[ZC_MAX_DIMS];
    size_t *reqi, *nranges;                     /* a unit's requests: reqi[i] .. + nranges[i] */
    bool *two;                                  /* request reqi[i] is the prefix of a chunk in blocks */
    uint64_t *whole_len;                        /* sharded: the inner chunk's length */
    const unsigned char **mdata;                /* sharded, shard mapped: the inner chunk in place, no request */
    const char **mkey;
    uint64_t *moff;
    store_map_t *mm;                            /* unsharded, chunk file mapped */
    int64_t *udst, *usrc;                       /* unit geometry (unit_geometry), for the second pass */
    int64_t (*ucount)[ZC_MAX_DIMS], (*ustride)[ZC_MAX_DIMS];
    bool *uwhole;
    int rc;                                     /* the first failure while decoding, and its message */
    char msg[ZC_ERRMSG_MAX];
} group;

/* The bytes of g's arrays for n units, pointed into base unless it is NULL. */
static size_t group_layout(group *g, unsigned char *base, size_t n)
{
    size_t off = 0;
#define CARVE(field, count)                                                                    \
    do {                                                                                       \
        if (base) g->field = (void *)(base + off);                                             \
        off += (sizeof *g->field * (count) + 15) & ~(size_t)15;                                \
    } while (0)
    CARVE(reqs, n * MAX_RANGES);
    CARVE(unit_of, n * MAX_RANGES);
    CARVE(left, n);
    CARVE(late, n);
    CARVE(keys, n);
    CARVE(skip, n);
    CARVE(lo, n);
    CARVE(hi, n);
    CARVE(coords, n);
    CARVE(reqi, n);
    CARVE(nranges, n);
    CARVE(two, n);
    CARVE(whole_len, n);
    CARVE(mdata, n);
    CARVE(mkey, n);
    CARVE(moff, n);
    CARVE(mm, n);
    CARVE(udst, n);
    CARVE(usrc, n);
    CARVE(ucount, n);
    CARVE(ustride, n);
    CARVE(uwhole, n);
#undef CARVE
    return off;
}

/* Decode unit i of group g into place (its request, if any, is complete). */
static int decode_unit(group *g, size_t i)
{
    read_ctx *r = g->r;
    zc_zarr *a = r->a;
    const zarr_sel *s = &r->s;
    size_t n = g->n;
    int slot = g->slot, rc = 0;
    bool *skip = g->skip, *two = g->two, *uwhole = g->uwhole;
    size_t *lo = g->lo, *hi = g->hi, *reqi = g->reqi, *nranges = g->nranges;
    uint64_t *whole_len = g->whole_len, *moff = g->moff;
    const unsigned char **mdata = g->mdata;
    const char **mkey = g->mkey;
    int64_t *udst = g->udst, *usrc = g->usrc;
    int64_t(*ucount)[ZC_MAX_DIMS] = g->ucount, (*ustride)[ZC_MAX_DIMS] = g->ustride;
    store_req *reqs = g->reqs;
    /* the geometry the first pass computed */
    int64_t dst_off = udst[i], src_off = usrc[i], *sstride = ustride[i], *count = ucount[i];
    bool whole = uwhole[i];
    if (i + 1 < n && mdata[i + 1]) { /* mapped: the next unit's first bytes on their way while this one decodes */
        size_t ahead = whole_len[i + 1] < PREFETCH ? (size_t)whole_len[i + 1] : PREFETCH;
        for (size_t b = 0; b < ahead; b += 64) __builtin_prefetch(mdata[i + 1] + b);
    }
    store_req *q = skip[i] ? NULL : &reqs[reqi[i]], mq;
    if (mdata[i]) {
        mq = (store_req){.key = mkey[i], .offset = moff[i], .length = whole_len[i], .data = (void *)mdata[i],
                         .size = (size_t)whole_len[i]};
        q = &mq;
    }
    if (!q || q->status == ZC_ENOENT) {
        /* missing: fill value */
        zarr_fill_nd(r->dst + dst_off, s->ostride, count, s->ndim, a->m.fill, a->m.dtype.size);
        return 0;
    }
    bool direct = whole && contiguous_in_dst(s, count);
    if (r->identity && mdata[i]) { /* a mapped chunk file (plain reads): the selection straight from it */
        if (whole_len[i] != a->rchunk_nbytes) {
            rc = zc__err(ZC_ECORRUPT, "array '%s': chunk '%s' has %llu bytes, expected %zu (uncompressed)",
                         a->path, q->key, (unsigned long long)whole_len[i], a->rchunk_nbytes);
            return rc;
        }
        atomic_fetch_add(&a->chunks_read, 1);
        atomic_fetch_add(&a->bytes_read, (int64_t)(hi[i] - lo[i]));
        if (!(r->stream && copy_nd_stream(r->dst + dst_off, s->ostride, mdata[i] + src_off, sstride, count,
                                          s->ndim, a->m.dtype.size)))
            zarr_copy_nd(r->dst + dst_off, s->ostride, mdata[i] + src_off, sstride, count, s->ndim,
                         a->m.dtype.size);
        return 0;
    }
    if (r->identity) {
        if ((rc = check_ranges(r, q, nranges[i])) < 0) return rc;
        atomic_fetch_add(&a->chunks_read, 1);
        for (size_t k = 0; k < nranges[i]; k++) {
            atomic_fetch_add(&a->bytes_read, (int64_t)q[k].size);
            if (direct) continue;
            int64_t cnt[ZC_MAX_DIMS], d0 = 0;
            memcpy(cnt, count, sizeof(int64_t) * (size_t)s->ndim);
            if (nranges[i] > 1) {
                while (cnt[d0] == 1) d0++;
                cnt[d0] = 1;
            }
            int64_t off = src_off - (int64_t)lo[i]; /* range k starts at slab k's first byte */
            zarr_copy_nd(r->dst + dst_off + (nranges[i] > 1 ? (int64_t)k * s->ostride[d0] : 0), s->ostride,
                         (unsigned char *)q[k].data + off, sstride, cnt, s->ndim, a->m.dtype.size);
        }
        return 0;
    }
    if (!mdata[i] && two[i] && (q->status == 0 || q->status == ZC_ERANGE)) {
        if (!r->scratch[slot] && !(r->scratch[slot] = zc__malloc(a->rchunk_nbytes))) {
            rc = ZC_ENOMEM;
            return rc;
        }
        rc = read_blocks(r, q, whole_len[i], lo[i], hi[i], r->scratch[slot]);
        if (rc < 0) return rc;
        zarr_copy_nd(r->dst + dst_off, s->ostride, r->scratch[slot] + src_off, sstride, count, s->ndim,
                     a->m.dtype.size);
        return 0;
    }
    if (q->status == ZC_ERANGE) { /* only byte ranges of shards are requested */
        rc = zc__err(ZC_ECORRUPT, "array '%s': shard '%s' ends before the inner chunk its index places at "
                     "byte offset %llu (%llu bytes)", a->path, q->key, (unsigned long long)q->offset,
                     (unsigned long long)q->length);
        return rc;
    }
    if (q->status < 0) {
        rc = zc__err_wrap(q->status, "array '%s': reading '%s'", a->path, q->key);
        return rc;
    }
    atomic_fetch_add(&a->chunks_read, 1);
    atomic_fetch_add(&a->bytes_read, (int64_t)q->size);
    if (!direct && r->scatter) {
        /* lz4+shuffle chunk: each block lz4 into scratch, unshuffle only
         * the selected items, straight into their places */
        if (!r->scratch[slot] && !(r->scratch[slot] = zc__malloc(a->rchunk_nbytes))) {
            rc = ZC_ENOMEM;
            return rc;
        }
        codec_scatter sc = {a->m.dtype.size, r->scratch[slot], r->dst + dst_off, s->ostride, sstride, count, s->ndim,
                            src_off, r->stream};
        if (codec_chain_scatter(a->chain, q->data, q->size, &sc, 0, SIZE_MAX)) return 0;
    }
    if (!whole && r->steps) {
        /* a part of a unit decoded step-wise (zstd): a step at a time into scratch, each row
         * put in place while in cache, stopping at the part's last byte.
         * Whole units decode in one call (ZSTD_decompressContinue copies
         * more than the one-shot decoder: 9% more instructions, more CPU
         * than the copy from cache saves) */
        if (!r->scratch[slot] && !(r->scratch[slot] = zc__malloc(a->rchunk_nbytes))) {
            rc = ZC_ENOMEM;
            return rc;
        }
        row_walk w;
        if (row_walk_init(&w, r->dst + dst_off, s->ostride, r->scratch[slot], src_off, sstride, count, s->ndim,
                          a->m.dtype.size, r->stream)) {
            size_t got;
            rc = codec_chain_decode_steps(a->chain, q->data, q->size, r->scratch[slot], a->rchunk_nbytes, hi[i],
                                          STEP, rows_step, &w, &got);
#if defined(__SSE2__)
            if (r->stream) _mm_sfence();
#endif
            if (rc == 0 && !w.end) /* cannot be: the frames ended before hi */
                rc = zc__err(ZC_ECORRUPT, "data decodes to %zu bytes, expected %zu", got, a->rchunk_nbytes);
            if (rc < 0) {
                if (a->m.sharded)
                    zc__err_wrap(rc, "array '%s': shard '%s', inner chunk at byte offset %llu (%zu bytes)",
                                 a->path, q->key, (unsigned long long)q->offset, q->size);
                else
                    zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, q->key);
                return rc;
            }
            return 0;
        }
    }
    unsigned char *target;
    if (direct) {
        target = r->dst + dst_off;
    } else {
        if (!r->scratch[slot] && !(r->scratch[slot] = zc__malloc(a->rchunk_nbytes))) {
            rc = ZC_ENOMEM;
            return rc;
        }
        target = r->scratch[slot];
    }
    /* A part of a unit: only the bytes it spans (blosc: the blocks holding
     * them). Whole units decode in one call: decoding them piece by piece
     * (blosc_getitem per block, then copying each piece while in cache)
     * measured 10% more CPU, as getitem copies every block once more. */
    size_t dlo, dhi;
    if (whole) rc = codec_chain_decode(a->chain, q->data, q->size, target, a->rchunk_nbytes);
    else rc = codec_chain_decode_range(a->chain, q->data, q->size, target, a->rchunk_nbytes, lo[i], hi[i], &dlo,
                                       &dhi);
    if (rc < 0) {
        if (a->m.sharded)
            zc__err_wrap(rc, "array '%s': shard '%s', inner chunk at byte offset %llu (%zu bytes)", a->path,
                         q->key, (unsigned long long)q->offset, q->size);
        else
            zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, q->key);
        return rc;
    }
    if (!direct && !(r->stream && copy_nd_stream(r->dst + dst_off, s->ostride, target + src_off, sstride, count,
                                                 s->ndim, a->m.dtype.size)))
        zarr_copy_nd(r->dst + dst_off, s->ostride, target + src_off, sstride, count, s->ndim, a->m.dtype.size);
    return 0;
}

/* store_get_many_each's callback: request k is complete; decode its unit
 * once all of the unit's requests are. */
static void unit_arrived(store_req *reqs, size_t k, void *ctx)
{
    group *g = ctx;
    size_t i = g->unit_of[k];
    if (--g->left[i] || g->rc < 0) return;
    const store_req *q = &reqs[g->reqi[i]];
    if (q->status == ZC_EINVAL && q->length == STORE_TO_END && q->buf) {
        g->late[i] = true;
        return;
    }
    int rc = decode_unit(g, i);
    if (rc == ZC_ECHECKSUM && g->r->a->st->io_depth && g->nranges[i] == 1) { /* bits flipped on the way? */
        g->late[i] = true;
        return;
    }
    if (rc < 0) {
        g->rc = rc;
        snprintf(g->msg, sizeof g->msg, "%s", zc_errmsg());
    }
}

/* Group g (r, slot, n set; arrays laid out) of units t0 .. t0 + n. */
static int read_group_in(group *g, size_t t0)
{
    read_ctx *r = g->r;
    zc_zarr *a = r->a;
    const zarr_sel *s = &r->s;
    size_t n = g->n;
    int slot = g->slot;
    g->rc = 0;
    store_req *reqs = g->reqs;
    char(*keys)[KEY_LEN] = g->keys;
    bool *skip = g->skip, *two = g->two, *uwhole = g->uwhole;
    size_t *lo = g->lo, *hi = g->hi, *reqi = g->reqi, *nranges = g->nranges;
    int64_t(*coords)[ZC_MAX_DIMS] = g->coords, (*ucount)[ZC_MAX_DIMS] = g->ucount, (*ustride)[ZC_MAX_DIMS] = g->ustride;
    uint64_t *whole_len = g->whole_len, *moff = g->moff;
    const unsigned char **mdata = g->mdata;
    const char **mkey = g->mkey;
    store_map_t *mm = g->mm;
    int64_t *udst = g->udst, *usrc = g->usrc;
    int rc = 0;
    size_t nreq = 0, arena_need = 0, guess = a->rchunk_nbytes + a->rchunk_nbytes / 16 + 4096;
    memset(g->two, 0, n * sizeof *g->two);
    for (size_t i = 0; i < n; i++) mm[i].handle = NULL;
    for (size_t i = 0; i < n; i++) {
        int64_t j[ZC_MAX_DIMS], coord[ZC_MAX_DIMS], dst_off, src_off, sstride[ZC_MAX_DIMS], count[ZC_MAX_DIMS];
        bool whole;
        zarr_sel_unravel(s, t0 + i, j);
        unit_geometry(r, j, coord, &dst_off, &src_off, sstride, count, &whole);
        for (int d = 0; d < s->ndim; d++) {
            coords[i][d] = coord[d];
            ucount[i][d] = count[d];
            ustride[i][d] = sstride[d];
        }
        udst[i] = dst_off;
        usrc[i] = src_off;
        uwhole[i] = whole;
        sel_extent(s, src_off, sstride, count, a->m.dtype.size, &lo[i], &hi[i]);
        bool direct = whole && contiguous_in_dst(s, count);
        skip[i] = false;
        mdata[i] = NULL;
        uint64_t base = 0;
        const char *key;
        if (a->m.sharded) {
            uint64_t off, len;
            const unsigned char *map = NULL;
            if ((rc = shard_set_locate(&r->shards, a, coords[i], &key, &off, &len, r->identity ? NULL : &map)) < 0)
                goto out;
            if (off == UINT64_MAX) {
                skip[i] = true;
                continue;
            }
            if (len > STORED_MAX(a->rchunk_nbytes) || (r->identity && len != a->rchunk_nbytes)) {
                rc = zc__err(ZC_ECORRUPT, "array '%s': shard '%s' index gives an inner chunk of %llu bytes "
                             "(decoded it is %zu)", a->path, key, (unsigned long long)len, a->rchunk_nbytes);
                goto out;
            }
            if (map) { /* inside the mapping: shard_index_check held it to the mapped size */
                mdata[i] = map + off;
                reqi[i] = 0;
                mkey[i] = key;
                moff[i] = off;
                whole_len[i] = len;
                continue;
            }
            reqs[nreq] = (store_req){.key = key, .offset = off, .length = len};
            base = off;
            whole_len[i] = len;
        } else {
            if ((rc = zarr_chunk_key(a, coords[i], keys[i], KEY_LEN)) < 0) goto out;
            key = keys[i];
            if (r->map_chunks && !(r->identity && (direct || (!whole && r->drop_maps)))) {
                /* the chunk file mapped: decoded in place, no request, no copy
                 * (uncompressed: a whole chunk copied from the page cache into
                 * place, once: none/whole 0.20 -> 0.12 s; one contiguous in
                 * dst is read straight into it, parts as byte ranges) */
                int mr = store_map(a->st, key, &mm[i]);
                if (mr == 0) {
                    mdata[i] = mm[i].addr;
                    reqi[i] = 0;
                    mkey[i] = key;
                    moff[i] = 0;
                    whole_len[i] = mm[i].size;
                    continue;
                }
                if (mr == ZC_ENOENT) { /* missing: fill value */
                    skip[i] = true;
                    continue;
                }
            }
            reqs[nreq] = (store_req){.key = key, .length = STORE_TO_END};
            whole_len[i] = STORE_TO_END;
        }
        if (r->identity) {
            /* stored = decoded bytes: read only what the selection needs, a whole
             * contiguous unit straight into dst */
            if (direct) {
                reqs[nreq].offset = base;
                reqs[nreq].length = a->rchunk_nbytes;
                reqs[nreq].buf = r->dst + dst_off;
                reqs[nreq].buf_cap = a->rchunk_nbytes;
            } else {
                int64_t nslab, step;
                size_t ext;
                slabs(s, sstride, count, a->m.dtype.size, &nslab, &step, &ext);
                if (nslab > 1 && nslab <= MAX_RANGES && (size_t)step >= 2 * ext) {
                    /* far apart: one range per slab (the store reads adjacent ones at once) */
                    for (int64_t k = 0; k < nslab; k++) {
                        reqs[nreq + (size_t)k] = reqs[nreq];
                        reqs[nreq + (size_t)k].offset = base + lo[i] + (uint64_t)(k * step);
                        reqs[nreq + (size_t)k].length = ext;
                    }
                    arena_need += (size_t)nslab * ext;
                    reqi[i] = nreq;
                    nranges[i] = (size_t)nslab;
                    nreq += (size_t)nslab;
                    continue;
                }
                reqs[nreq].offset = base + lo[i];
                reqs[nreq].length = hi[i] - lo[i];
                arena_need += hi[i] - lo[i];
            }
        } else if (r->blocks && !whole && hi[i] - lo[i] <= a->rchunk_nbytes / 2 && !a->st->io_depth) {
            /* a small part of a big chunk in blocks: its header and block starts
             * first (read_blocks fetches the blocks it needs); not on HTTP/S3,
             * where the second round trip costs more than the bytes saved */
            uint64_t len = reqs[nreq].length;
            reqs[nreq].length = len != STORE_TO_END && len < PREFIX ? len : PREFIX;
            arena_need += (size_t)reqs[nreq].length;
            two[i] = true;
        } else if (a->m.sharded) {
            arena_need += (size_t)reqs[nreq].length;
        } else {
            arena_need += guess; /* stored size unknown: room for the usual case */
        }
        nranges[i] = 1;
        reqi[i] = nreq++;
    }
    if (arena_need) { /* one reused buffer for the group, no allocation per chunk */
        if (arena_need > r->arena_cap[slot]) {
            /* HTTP/S3 slots keep their arena for the next group: an eighth more
             * than asked (untouched pages cost nothing), so a group a few KiB
             * bigger stored reuses it instead of faulting in 50 MiB of fresh
             * pages (3 of a slot's 8 groups of a sharded read did) */
            size_t cap = a->st->io_depth ? ck_sat_add(arena_need, arena_need / 8) : arena_need;
            zc__free(r->arena[slot]);
            r->arena_cap[slot] = 0;
            if (!(r->arena[slot] = zc__malloc(cap))) {
                rc = ZC_ENOMEM;
                goto out;
            }
            r->arena_cap[slot] = cap;
        }
        size_t off = 0;
        for (size_t k = 0; k < nreq; k++) {
            if (reqs[k].buf) continue;
            size_t len = reqs[k].length == STORE_TO_END ? guess : (size_t)reqs[k].length;
            reqs[k].buf = r->arena[slot] + off;
            reqs[k].buf_cap = len;
            off += len;
        }
    }
    /* units without a request first (fill value, mapped), then each unit
     * the moment its bytes are in (on HTTP/S3 while the others arrive) */
    for (size_t i = 0; i < n; i++) {
        g->left[i] = 0;
        g->late[i] = false;
        if (skip[i] || mdata[i]) {
            if ((rc = decode_unit(g, i)) < 0) goto out;
            continue;
        }
        g->left[i] = nranges[i];
        for (size_t k = 0; k < nranges[i]; k++) g->unit_of[reqi[i] + k] = (uint16_t)i;
        /* one encoded request, decoded by unit_arrived before it returns: the
         * store may lend its own buffer (HTTP/S3: no copy into the arena) */
        reqs[reqi[i]].lend = nranges[i] == 1 && !r->identity && !two[i];
    }
    if (nreq && (rc = store_get_many_each(a->st, reqs, nreq, unit_arrived, g)) < 0) goto out;
    if (g->rc < 0) {
        zc__err_set_text(g->msg);
        rc = g->rc;
        goto out;
    }
    for (size_t i = 0; i < n; i++) { /* read again, into their own buffer */
        if (!g->late[i]) continue;
        store_req *q = &reqs[reqi[i]];
        bool mismatch = q->status == 0; /* not a whole object larger than guessed: a checksum mismatch */
        if (q->total > STORED_MAX(a->rchunk_nbytes)) { /* no codec makes that much of a chunk */
            rc = zc__err(ZC_ECORRUPT, "array '%s': chunk '%s' is %llu bytes stored, more than any encoding of "
                         "its %zu bytes makes (not read)", a->path, q->key, (unsigned long long)q->total,
                         a->rchunk_nbytes);
            goto out;
        }
        if (q->data != q->buf) zc__free(q->data);
        q->data = q->buf = NULL;
        q->buf_cap = 0;
        if ((rc = store_get_many(a->st, q, 1)) < 0 || (rc = decode_unit(g, i)) < 0) {
            if (mismatch && rc == ZC_ECHECKSUM) zc__err_wrap(rc, "read twice, and twice the checksum did not match");
            goto out;
        }
    }
out:
    for (size_t i = 0; i < nreq; i++)
        if (reqs[i].data != reqs[i].buf) zc__free(reqs[i].data);
    for (size_t i = 0; i < n; i++) {
        if (store_map_check(&mm[i]) < 0) rc = zc__err_wrap(ZC_EIO, "array '%s'", a->path); /* the cause of any error */
        if (mm[i].handle && (r->drop_maps || (r->drop_whole && uwhole[i]))) store_map_drop(&mm[i]);
        store_unmap(a->st, &mm[i]);
    }
    /* freed by the thread that allocated them: its allocation cache hands the
     * same pages to its next group (freed by the caller after pool_for, the
     * workers took fresh pages, a fault per 4 KiB, on every call). HTTP/S3
     * groups are bigger than that cache keeps (64 MiB): the slot keeps its
     * buffers for its next group instead, until the read ends (fresh pages
     * for every group were a fifth of a whole read's CPU) */
    if (a->st->io_depth) return rc;
    zc__free(r->scratch[slot]);
    r->scratch[slot] = NULL;
    zc__free(r->arena[slot]);
    r->arena[slot] = NULL;
    r->arena_cap[slot] = 0;
    return rc;
}
/* A group's arrays are allocated for its units (a few KiB each: GROUP_MAX
 * of them would be too much for the stack of a caller's thread). */
static int read_group(void *vctx, size_t gi, int slot)
{
    read_ctx *r = vctx;
    size_t t0 = gi * r->group, n = r->s.nchunks - t0 < r->group ? r->s.nchunks - t0 : r->group;
    group g = {.r = r, .slot = slot, .n = n};
    unsigned char *mem = zc__malloc(group_layout(&g, NULL, n));
    if (!mem) return ZC_ENOMEM;
    group_layout(&g, mem, n);
    int rc = read_group_in(&g, t0);
    zc__free(mem);
    return rc;
}

static int width(const zc_zarr *a) { return a->nthreads; }

/* Small reads of mapped chunks in blocks: a task per needed block,
 * not per chunk, so that the threads share the blocks of a read touching one
 * or two chunks (1,000 random (4, 128, 128) crops of (16, 256, 256) float32
 * chunks: a fifth touch one chunk and ran on one thread, and the blocks of a
 * chunk need very different work); small blocks go several to a task (256
 * KiB or more). The caller maps the chunks; a task decodes its blocks'
 * selected items straight into place
 * (codec_chain_scatter of some blocks). Units the codec would not take
 * (short runs, a chunk that cannot be mapped or whose header does not add up,
 * one decoding straight into dst) are tasks of their own, read as usual
 * (read_group); so is, afterwards, any unit a block task declined (which
 * reports errors). */
#define SPLIT_UNITS 16 /* units at most */
#define SPLIT_TASKS 256
#define SPLIT_BYTES ((size_t)256 << 10) /* decoded bytes of blocks a task takes at least */
#define SPLIT_WHOLE UINT32_MAX /* task: the unit read as usual */

typedef struct {
    read_ctx *r;
    store_map_t mm[SPLIT_UNITS];
    int64_t dst_off[SPLIT_UNITS], src_off[SPLIT_UNITS];
    int64_t sstride[SPLIT_UNITS][ZC_MAX_DIMS], count[SPLIT_UNITS][ZC_MAX_DIMS];
    uint16_t tunit[SPLIT_TASKS];
    uint32_t tblock[SPLIT_TASKS];  /* the task's first block */
    size_t jlast[SPLIT_UNITS], per[SPLIT_UNITS]; /* the unit's last needed block, blocks per task */
    size_t bsize[SPLIT_UNITS];                   /* its block size: a task's scratch (one block at a time) */
    bool whole[SPLIT_UNITS];
    atomic_bool declined[SPLIT_UNITS];
    uint16_t redo[SPLIT_UNITS];
} split_ctx;

static int split_task(void *vctx, size_t t, int slot)
{
    split_ctx *c = vctx;
    read_ctx *r = c->r;
    const zc_zarr *a = r->a;
    size_t u = c->tunit[t], j = c->tblock[t];
    if (j == SPLIT_WHOLE) return read_group(r, u, slot); /* r->group is 1 */
    /* allocated and freed by this thread: its allocation cache hands the same
     * pages to its next task */
    unsigned char *tmp = zc__malloc(c->bsize[u]);
    if (!tmp) return ZC_ENOMEM;
    codec_scatter sc = {a->m.dtype.size, tmp,         r->dst + c->dst_off[u], r->s.ostride, c->sstride[u],
                        c->count[u],     r->s.ndim,   c->src_off[u],          r->stream};
    if (!codec_chain_scatter(a->chain, c->mm[u].addr, c->mm[u].size, &sc, j,
                             j + c->per[u] - 1 < c->jlast[u] ? j + c->per[u] - 1 : c->jlast[u]))
        atomic_store(&c->declined[u], true);
    zc__free(tmp);
    return 0;
}

static int redo_task(void *vctx, size_t t, int slot)
{
    split_ctx *c = vctx;
    return read_group(c->r, c->redo[t], slot);
}

/* Whether codec_chain_scatter may take a unit's selection: its contiguous
 * runs (merged over trailing dims the selection spans whole) are 16 items or
 * more. */
static bool runs_long(const read_ctx *r, const int64_t *count)
{
    const zarr_sel *s = &r->s;
    int d = s->ndim - 1;
    if (s->step[d] != 1) return false;
    int64_t run = count[d];
    while (d > 0 && count[d] == r->a->rchunk[d] && s->step[d - 1] == 1) run *= count[--d];
    return run >= 16;
}

static int read_split(read_ctx *r, pool *p)
{
    zc_zarr *a = r->a;
    const zarr_sel *s = &r->s;
    size_t n = s->nchunks, ntask = 0, nredo = 0;
    split_ctx *c = zc__malloc(sizeof *c);
    if (!c) return ZC_ENOMEM;
    c->r = r;
    r->group = 1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        c->mm[i].handle = NULL;
        atomic_init(&c->declined[i], false);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t j[ZC_MAX_DIMS], coord[ZC_MAX_DIMS];
        bool whole;
        char key[KEY_LEN];
        zarr_sel_unravel(s, i, j);
        unit_geometry(r, j, coord, &c->dst_off[i], &c->src_off[i], c->sstride[i], c->count[i], &whole);
        c->whole[i] = whole;
        size_t lo, hi, nb = 0, j0 = 0, per = 1;
        codec_blocks h;
        if (!(whole && contiguous_in_dst(s, c->count[i])) && runs_long(r, c->count[i])) {
            if ((rc = zarr_chunk_key(a, coord, key, KEY_LEN)) < 0) goto out;
            int mr = store_map(a->st, key, &c->mm[i]);
            if (mr == ZC_ENOENT) { /* missing: fill value */
                zarr_fill_nd(r->dst + c->dst_off[i], s->ostride, c->count[i], s->ndim, a->m.fill, a->m.dtype.size);
                continue;
            }
            sel_extent(s, c->src_off[i], c->sstride[i], c->count[i], a->m.dtype.size, &lo, &hi);
            if (mr == 0 && codec_chain_blocks(a->chain, c->mm[i].addr, c->mm[i].size, &h) && h.nbytes == a->rchunk_nbytes &&
                h.blocksize && h.cbytes == c->mm[i].size && hi <= h.nbytes) {
                /* tasks of SPLIT_BYTES of blocks or more: each walks all the unit's rows */
                j0 = lo / h.blocksize;
                per = SPLIT_BYTES / h.blocksize < 1 ? 1 : SPLIT_BYTES / h.blocksize;
                c->jlast[i] = (hi - 1) / h.blocksize;
                c->per[i] = per;
                c->bsize[i] = h.blocksize;
                nb = (c->jlast[i] - j0) / per + 1; /* tasks */
            }
        }
        if (!nb || ntask + nb + (n - i) > SPLIT_TASKS) { /* read as usual */
            store_unmap(a->st, &c->mm[i]);
            c->tunit[ntask] = (uint16_t)i;
            c->tblock[ntask++] = SPLIT_WHOLE;
            continue;
        }
        for (size_t k = 0; k < nb; k++) {
            c->tunit[ntask] = (uint16_t)i;
            c->tblock[ntask++] = (uint32_t)(j0 + k * per);
        }
    }
    if ((rc = pool_for(p, ntask, width(a), split_task, c)) < 0) goto out;
    for (size_t i = 0; i < n; i++) {
        if (atomic_load(&c->declined[i])) c->redo[nredo++] = (uint16_t)i;
        else if (c->mm[i].handle) {
            atomic_fetch_add(&a->chunks_read, 1);
            atomic_fetch_add(&a->bytes_read, (int64_t)c->mm[i].size);
        }
    }
    if (nredo) rc = pool_for(p, nredo, width(a), redo_task, c);
out:
    for (size_t i = 0; i < n; i++) {
        if (store_map_check(&c->mm[i]) < 0) rc = zc__err_wrap(ZC_EIO, "array '%s'", a->path); /* the cause of any error */
        if (c->mm[i].handle && (r->drop_maps || (r->drop_whole && c->whole[i]))) store_map_drop(&c->mm[i]);
        store_unmap(a->st, &c->mm[i]);
    }
    zc__free(c);
    return rc;
}

int zc_zarr_read(zc_zarr *a, const zc_range *sel, void *dst, size_t dst_size)
{
    return zarr_read_flags(a, sel, dst, dst_size, 0);
}

int zarr_read_flags(zc_zarr *a, const zc_range *sel, void *dst, size_t dst_size, unsigned flags)
{
    zc__err_clear();
    if (!a || (!dst && dst_size)) return zc__err(ZC_EINVAL, "zc_zarr_read: NULL argument");
    read_ctx r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.dst = dst;
    r.identity = codec_chain_is_identity(a->chain);
    r.blocks = codec_chain_has_blocks(a->chain) && a->rchunk_nbytes >= TWO_STEP_MIN;
    r.scatter = codec_chain_has_blocks(a->chain) && a->m.dtype.size > 1;
    r.steps = !r.identity && codec_chain_has_steps(a->chain);
    /* plain reads map only big chunks: for small ones a mapping, its page
     * faults and dropping its pages cost more than a batched read */
    r.map_chunks = !a->m.sharded && !a->st->io_depth && (r.identity ? !(flags & ZARR_READ_MAP) && a->rchunk_nbytes >= MAP_MIN
                                                : (flags & ZARR_READ_MAP) || a->rchunk_nbytes >= MAP_MIN);
    r.drop_maps = r.map_chunks && (flags & ZARR_READ_DROP);
    r.drop_whole = r.map_chunks && !(flags & ZARR_READ_MAP);
    int rc = zarr_sel_plan(a, sel, &r.s);
    if (rc < 0) return zc__err_wrap(rc, "array '%s'", a->path);
    size_t need;
    if (ck_mul_sz(r.s.nelems, a->m.dtype.size, &need)) {
        zarr_sel_free(&r.s);
        return zc__err(ZC_EOVERFLOW, "selection size overflows");
    }
    if (dst_size < need) {
        zarr_sel_free(&r.s);
        return zc__err(ZC_EINVAL, "array '%s': buffer of %zu bytes is too small for the selection (%zu bytes)",
                       a->path, dst_size, need);
    }
    r.stream = stream_dst(need);
    if (r.s.nchunks == 0) {
        zarr_sel_free(&r.s);
        return 0;
    }
    pool *p = zarr_pool(a);
    int nslots = pool_width(p, width(a));
    if (a->m.sharded && (rc = shard_set_load(&r.shards, a, &r.s, p, width(a), (flags & ZARR_READ_MAP) && !r.identity)) < 0) goto out;
    r.scratch = zc__calloc((size_t)nslots, sizeof(unsigned char *));
    r.arena = zc__calloc((size_t)nslots, sizeof(unsigned char *));
    r.arena_cap = zc__calloc((size_t)nslots, sizeof(size_t));
    if (!r.scratch || !r.arena || !r.arena_cap) {
        rc = ZC_ENOMEM;
        goto out;
    }
    /* groups: enough of them to keep every thread busy, each at most
     * LOCAL_GROUP_MAX units (HTTP/S3: GROUP_MAX) and GROUP_BYTES of decoded data (the fetched objects of a group are
     * in memory at once: small groups reuse the same cached blocks, big ones
     * take fresh pages from the kernel, a page fault per 4 KiB) */
    size_t per = r.s.nchunks / ((size_t)nslots * 4), by_bytes = GROUP_BYTES / (a->rchunk_nbytes ? a->rchunk_nbytes : 1);
    size_t most = LOCAL_GROUP_MAX;
    if (a->st->io_depth) { /* remote: fewer, bigger groups, so that many requests are in flight */
        per = r.s.nchunks / (size_t)nslots;
        by_bytes = REMOTE_GROUP_BYTES / (a->rchunk_nbytes ? a->rchunk_nbytes : 1);
        most = GROUP_MAX;
        /* a small read is one batch on the caller's thread: its requests are in
         * flight together anyway, and a second group would wait for a pool
         * thread that other readers' network waits may hold (16 threads each
         * reading crops of 2-8 inner chunks: 46 ms a crop, two round trips) */
        if (r.s.nchunks <= by_bytes / 4) per = r.s.nchunks;
    }
    if (per > by_bytes) per = by_bytes;
    r.group = per < 1 ? 1 : per > most ? most : per;
    if (r.scatter && r.map_chunks && !a->m.sharded && nslots > 1 && r.s.nchunks <= SPLIT_UNITS) {
        rc = read_split(&r, p);
        goto out;
    }
    size_t ngroups = (r.s.nchunks + r.group - 1) / r.group;
    rc = pool_for(p, ngroups, width(a), read_group, &r);
out:
    for (int i = 0; i < nslots; i++) {
        if (r.scratch) zc__free(r.scratch[i]);
        if (r.arena) zc__free(r.arena[i]);
    }
    zc__free(r.scratch);
    zc__free(r.arena);
    zc__free(r.arena_cap);
    if (shard_set_check(&r.shards) < 0) rc = zc__err_wrap(ZC_EIO, "array '%s'", a->path);
    shard_set_free(&r.shards);
    zarr_sel_free(&r.s);
    return rc;
}
